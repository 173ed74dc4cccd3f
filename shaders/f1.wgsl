// F1 kernels: the two-set map in edge-colour space (ARCHITECTURE.md section 4, F1).
//
// State of one trial: x[(c * 4 + s) * K + k], trial-major (trial t starts at t * dim).
// CPU reference: src/f1/project.rs (F1) and src/f1/map.rs (rrr_step, dm_step).
//
// Entry points, each one thread per item, 256 threads per workgroup, the linear index folded
// into two dimensions past 65,535 workgroups:
//   edges    P_E (average per join; rim sides e_0) or P_E1 (one-hot argmax per join) of src
//   weights  W[c][p] = max over the candidates (p, r) of cell c of sum_s z[c][s][colour],
//            z = a * pe + b * x (RRR: a = 2, b = -1, the reflection 2 P_E(x) - x), each side
//            times its slot's weight under a weighted metric, and the argmax candidate per
//            entry (kept on the device)
//   update   x += beta * (embed(board) - pe) for active trials; writes the board (candidate
//            per cell) picked through sel (the assignment, computed on the CPU) and bestc
//   mix      tmp = a * embed(board) + b * x (difference map: f_a(y))
//   score    per-trial count of mismatched joins of the board (reduction by atomics)
//   track    one thread per trial, after score (the device loop of `--assign gpu-jv` and
//            `gpu-auction`): the trial's iteration count, best score, iteration of that best
//            and best board; it stops the trial on the device at 0 mismatches or at the
//            iteration budget, and freezes it for the host at a stall, at a repeated state
//            fingerprint (every ROUND iterations) or when its assignment failed. A frozen
//            trial does not move until the host restarts it, so its iterates stay those of
//            the CPU driver (src/f1/map.rs, run_trial_round), only later in wall time.
//
// `shaders/f1_step.wgsl` (appended to this file at load time) fuses update, score, track,
// edges and weights into one pass, a workgroup per trial (RRR in the device loop).

struct Params {
    trials: u32,
    cells: u32,
    colors: u32,
    dim: u32,
    wtot: u32,
    joins: u32,
    one_color: u32,
    // 1 when the weights are taken in a weighted metric (slotw below), 0 for the uniform one.
    weighted: u32,
    a: f32,
    b: f32,
    beta: f32,
    pad1: f32,
}

const NONE: u32 = 0xffffffffu;
const WG: u32 = 256u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> pe: array<f32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;
@group(0) @binding(4) var<storage, read_write> wout: array<f32>;
@group(0) @binding(5) var<storage, read_write> bestc: array<u32>;
@group(0) @binding(6) var<storage, read> sel: array<u32>;
@group(0) @binding(7) var<storage, read_write> board: array<u32>;
@group(0) @binding(8) var<storage, read_write> viol: array<atomic<u32>>;
// Per side slot c * 4 + s: the facing side slot, or NONE on the rim.
@group(0) @binding(9) var<storage, read> partner: array<u32>;
// Weight entry e (row-major per class, classes one after another): its candidates are
// pc_cand[pc_off[e] .. pc_off[e + 1]], in the cell's candidate order.
@group(0) @binding(10) var<storage, read> pc_off: array<u32>;
@group(0) @binding(11) var<storage, read> pc_cand: array<u32>;
// Candidate j: the four offsets into a trial's x of the colours it shows, 4 * j + s.
@group(0) @binding(12) var<storage, read> cand_idx: array<u32>;
// Per side slot c * 4 + s: its weight in the metric P_P works in (MapConfig::join_weights;
// read only when P.weighted is 1).
@group(0) @binding(13) var<storage, read> slotw: array<f32>;
// Interior joins: 3 * i + (cell, facing cell, side of the first cell).
@group(0) @binding(14) var<storage, read> jtab: array<u32>;
@group(0) @binding(15) var<storage, read_write> live: array<u32>;
@group(0) @binding(16) var<storage, read_write> tmp: array<f32>;

fn linear(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WG;
}

fn neg_inf() -> f32 {
    return bitcast<f32>(0xff800000u);
}

@compute @workgroup_size(256)
fn edges(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear(gid, nwg);
    if (i >= P.trials * P.dim) {
        return;
    }
    let t = i / P.dim;
    let e = i - t * P.dim;
    let slot = e / P.colors;
    let k = e - slot * P.colors;
    let q = partner[slot];
    if (q == NONE) {
        pe[i] = select(0.0, 1.0, k == 0u);
        return;
    }
    let base = t * P.dim;
    if (P.one_color == 0u) {
        pe[i] = 0.5 * (src[i] + src[base + q * P.colors + k]);
        return;
    }
    // P_E1: the first colour with the largest sum of the two sides (as the CPU scans).
    let a = base + slot * P.colors;
    let b = base + q * P.colors;
    var best = 0u;
    var best_v = neg_inf();
    for (var c = 0u; c < P.colors; c++) {
        // Both sides of the join sum in the same order, so they pick the same colour.
        let lo = min(a, b);
        let hi = max(a, b);
        let v = src[lo + c] + src[hi + c];
        if (v > best_v) {
            best_v = v;
            best = c;
        }
    }
    pe[i] = select(0.0, 1.0, k == best);
}

@compute @workgroup_size(256)
fn weights(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear(gid, nwg);
    if (i >= P.trials * P.wtot) {
        return;
    }
    let t = i / P.wtot;
    let e = i - t * P.wtot;
    let base = t * P.dim;
    var best = neg_inf();
    var at = NONE;
    for (var n = pc_off[e]; n < pc_off[e + 1u]; n++) {
        let j = pc_cand[n];
        var v = 0.0;
        for (var s = 0u; s < 4u; s++) {
            let off = cand_idx[4u * j + s];
            let o = base + off;
            let z = P.a * pe[o] + P.b * x[o];
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
    wout[i] = best;
    bestc[i] = at;
}

// The candidate the assignment put on cell c of trial t.
fn chosen(t: u32, c: u32) -> u32 {
    return bestc[t * P.wtot + sel[t * P.cells + c]];
}

// 1 where the candidate j shows colour k on side s.
fn shows(j: u32, s: u32, k: u32) -> bool {
    return cand_idx[4u * j + s] % P.colors == k;
}

@compute @workgroup_size(256)
fn update(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear(gid, nwg);
    if (i >= P.trials * P.dim) {
        return;
    }
    let t = i / P.dim;
    if (live[t] == 0u) {
        return;
    }
    let e = i - t * P.dim;
    let slot = e / P.colors;
    let k = e - slot * P.colors;
    let c = slot / 4u;
    let s = slot - 4u * c;
    let j = chosen(t, c);
    if (e == c * 4u * P.colors) {
        board[t * P.cells + c] = j;
    }
    // The CPU subtracts beta * pe densely, then adds beta where the board shows its colour.
    var v = x[i] - P.beta * pe[i];
    if (shows(j, s, k)) {
        v += P.beta;
    }
    x[i] = v;
}

@compute @workgroup_size(256)
fn mix(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear(gid, nwg);
    if (i >= P.trials * P.dim) {
        return;
    }
    let t = i / P.dim;
    let e = i - t * P.dim;
    let slot = e / P.colors;
    let k = e - slot * P.colors;
    let c = slot / 4u;
    let j = chosen(t, c);
    let emb = select(0.0, 1.0, shows(j, slot - 4u * c, k));
    tmp[i] = P.a * emb + P.b * x[i];
}

@compute @workgroup_size(256)
fn score(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear(gid, nwg);
    if (i >= P.trials * P.joins) {
        return;
    }
    let t = i / P.joins;
    let n = i - t * P.joins;
    let c = jtab[3u * n];
    let d = jtab[3u * n + 1u];
    let s = jtab[3u * n + 2u];
    let jc = board[t * P.cells + c];
    let jd = board[t * P.cells + d];
    let kc = cand_idx[4u * jc + s] % P.colors;
    let kd = cand_idx[4u * jd + ((s + 2u) % 4u)] % P.colors;
    if (kc != kd) {
        atomicAdd(&viol[t], 1u);
    }
}

// The device loop's per-trial words (stride TS): iterations, best score, iteration of the
// best, state (below), best score since the last (re)start, iteration of that, unused x2.
const TS: u32 = 8u;
const ST_LIVE: u32 = 0u;
const ST_SOLVED: u32 = 1u;
const ST_DONE: u32 = 2u;
const ST_STALL: u32 = 3u;
const ST_CYCLE: u32 = 4u;
const ST_FAIL: u32 = 5u;
// Cold word: 0 warm start, 1 cold start, 2 skip (the trial is frozen or finished).
const SKIP: u32 = 2u;
// Fingerprints kept per trial (as CYCLE_MEMORY on the CPU) and iterations between two.
const RING: u32 = 16u;
const ROUND: u32 = 64u;

struct Track {
    max_score: u32,
    max_iters: u32,
    // 0: no stall restart.
    stall: u32,
    cycle: u32,
}

@group(0) @binding(17) var<storage, read_write> tstat: array<u32>;
@group(0) @binding(18) var<storage, read_write> bestb: array<u32>;
@group(0) @binding(19) var<storage, read_write> fail: array<u32>;
@group(0) @binding(20) var<storage, read_write> cold: array<u32>;
// Per trial: RING fingerprint pairs, then the next slot.
@group(0) @binding(21) var<storage, read_write> ring: array<u32>;
@group(0) @binding(22) var<uniform> TR: Track;

fn mix32(v: u32) -> u32 {
    var z = v;
    z = (z ^ (z >> 16u)) * 0x7feb352du;
    z = (z ^ (z >> 15u)) * 0x846ca68bu;
    return z ^ (z >> 16u);
}

fn freeze(t: u32, st: u32) {
    live[t] = 0u;
    cold[t] = SKIP;
    tstat[t * TS + 3u] = st;
}

@compute @workgroup_size(256)
fn track(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear(gid, nwg);
    if (t >= P.trials) {
        return;
    }
    track_trial(t);
}

// `track` for trial t (also called by the fused pass, `shaders/f1_step.wgsl`).
fn track_trial(t: u32) {
    if (live[t] == 0u) {
        return;
    }
    let b = t * TS;
    let it = tstat[b] + 1u;
    tstat[b] = it;
    if (fail[t] != 0u) {
        // No assignment this iteration: the host restarts the trial from a fresh point.
        fail[t] = 0u;
        freeze(t, ST_FAIL);
        return;
    }
    cold[t] = 0u;
    let score = TR.max_score - min(atomicLoad(&viol[t]), TR.max_score);
    if (score > tstat[b + 1u] || it == 1u) {
        tstat[b + 1u] = score;
        tstat[b + 2u] = it;
        for (var c = 0u; c < P.cells; c++) {
            bestb[t * P.cells + c] = board[t * P.cells + c];
        }
    }
    if (score == TR.max_score) {
        freeze(t, ST_SOLVED);
        return;
    }
    let rb = t * (2u * RING + 1u);
    if (TR.stall != 0u) {
        if (score > tstat[b + 4u]) {
            tstat[b + 4u] = score;
            tstat[b + 5u] = it;
        } else if (it - tstat[b + 5u] >= TR.stall) {
            tstat[b + 4u] = 0u;
            tstat[b + 5u] = it;
            for (var r = 0u; r < 2u * RING + 1u; r++) {
                ring[rb + r] = 0u;
            }
            freeze(t, ST_STALL);
            return;
        }
    }
    // The cycle check comes before the budget's stop, as on the CPU, where a round that
    // ends at the budget (or where a stepper pauses) still checks its fingerprint.
    if (TR.cycle != 0u && it % ROUND == 0u) {
        var h0 = 0u;
        var h1 = 0u;
        for (var e = 0u; e < P.dim; e++) {
            let v = bitcast<u32>(x[t * P.dim + e]);
            h0 += mix32(v ^ mix32(e));
            h1 += mix32(v + 0x9e3779b9u * (e + 1u));
        }
        var seen = false;
        for (var r = 0u; r < RING; r++) {
            if (ring[rb + 2u * r] == h0 && ring[rb + 2u * r + 1u] == h1) {
                seen = true;
            }
        }
        if (seen) {
            for (var r = 0u; r < 2u * RING + 1u; r++) {
                ring[rb + r] = 0u;
            }
            freeze(t, ST_CYCLE);
            return;
        }
        let pos = ring[rb + 2u * RING];
        ring[rb + 2u * pos] = h0;
        ring[rb + 2u * pos + 1u] = h1;
        ring[rb + 2u * RING] = (pos + 1u) % RING;
    }
    if (it >= TR.max_iters) {
        freeze(t, ST_DONE);
    }
}
