// The fused pass of F1's device loop (RRR, `--fused-passes`): one 256-thread workgroup per
// trial runs, in order, what `update`, `score`, `track`, `edges` and `weights` of
// `shaders/f1.wgsl` do one dispatch each, with the trial's state x, its edge projection pe and
// its board held in workgroup memory between the phases, so that the weights' gathers (four
// sides of every candidate, from both x and pe) read workgroup memory, not storage. The
// arithmetic is the same expression for expression as the separate kernels', so the two give
// the same iterates bit for bit (tests/gpu.rs). The host appends this file to `f1.wgsl` and
// sets XS (at least dim) and CS (at least cells), pipeline-overridable constants, when it
// builds the pipeline; it runs it only where 2 * XS + CS words fit the device's workgroup
// memory (an 8x8 of 12 colours takes 24.6 KB).
//
// A submission of K iterations is: edges and weights of the current states (once, so that the
// states the host rewrote between submissions are seen), then K times: the assignment, `step`.

override XS: u32 = 4096u;
override CS: u32 = 256u;

var<workgroup> xs: array<f32, XS>;
var<workgroup> ps: array<f32, XS>;
var<workgroup> bs: array<u32, CS>;
var<workgroup> nviol: atomic<u32>;
var<workgroup> moving: u32;

@compute @workgroup_size(256)
fn step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = wid.x + wid.y * nwg.x;
    if (t >= P.trials) {
        return;
    }
    let base = t * P.dim;
    if (lid == 0u) {
        moving = live[t];
        atomicStore(&nviol, 0u);
    }
    let live_t = workgroupUniformLoad(&moving) != 0u;
    // update: x += beta (embed(board) - pe) for a live trial, the board through sel.
    for (var e = lid; e < P.dim; e += WG) {
        let i = base + e;
        var v = x[i];
        let slot = e / P.colors;
        let c = slot / 4u;
        if (live_t) {
            let k = e - slot * P.colors;
            let s = slot - 4u * c;
            let j = chosen(t, c);
            if (e == c * 4u * P.colors) {
                board[t * P.cells + c] = j;
            }
            v = x[i] - P.beta * pe[i];
            if (shows(j, s, k)) {
                v += P.beta;
            }
            x[i] = v;
        }
        xs[e] = v;
    }
    storageBarrier();
    workgroupBarrier();
    for (var c = lid; c < P.cells; c += WG) {
        bs[c] = board[t * P.cells + c];
    }
    workgroupBarrier();
    // score: mismatched joins of the board.
    for (var n = lid; n < P.joins; n += WG) {
        let c = jtab[3u * n];
        let d = jtab[3u * n + 1u];
        let s = jtab[3u * n + 2u];
        let kc = cand_idx[4u * bs[c] + s] % P.colors;
        let kd = cand_idx[4u * bs[d] + ((s + 2u) % 4u)] % P.colors;
        if (kc != kd) {
            atomicAdd(&nviol, 1u);
        }
    }
    workgroupBarrier();
    // track (one thread): the trial's counters, best board and freezes.
    if (lid == 0u) {
        atomicStore(&viol[t], atomicLoad(&nviol));
        track_trial(t);
    }
    // edges: pe = P_E(x) (or P_E1), from workgroup memory.
    for (var e = lid; e < P.dim; e += WG) {
        let slot = e / P.colors;
        let k = e - slot * P.colors;
        let q = partner[slot];
        var v = 0.0;
        if (q == NONE) {
            v = select(0.0, 1.0, k == 0u);
        } else if (P.one_color == 0u) {
            v = 0.5 * (xs[e] + xs[q * P.colors + k]);
        } else {
            let a = slot * P.colors;
            let b = q * P.colors;
            let lo = min(a, b);
            let hi = max(a, b);
            var best = 0u;
            var best_v = neg_inf();
            for (var cc = 0u; cc < P.colors; cc++) {
                let w = xs[lo + cc] + xs[hi + cc];
                if (w > best_v) {
                    best_v = w;
                    best = cc;
                }
            }
            v = select(0.0, 1.0, k == best);
        }
        ps[e] = v;
        pe[base + e] = v;
    }
    workgroupBarrier();
    // weights of the reflection a pe + b x, and their argmax candidates.
    for (var e = lid; e < P.wtot; e += WG) {
        var best = neg_inf();
        var at = NONE;
        for (var n = pc_off[e]; n < pc_off[e + 1u]; n++) {
            let j = pc_cand[n];
            var v = 0.0;
            for (var s = 0u; s < 4u; s++) {
                let off = cand_idx[4u * j + s];
                let z = P.a * ps[off] + P.b * xs[off];
                if (P.weighted != 0u) {
                    v += slotw[off / P.colors] * z;
                } else {
                    v += z;
                }
            }
            if (at == NONE || v > best) {
                best = v;
                at = j;
            }
        }
        wout[t * P.wtot + e] = best;
        bestc[t * P.wtot + e] = at;
    }
}
