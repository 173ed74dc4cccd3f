// F1 kernels: the two-set map in edge-colour space (ARCHITECTURE.md section 4, F1).
//
// State of one trial: x[(c * 4 + s) * K + k], trial-major (trial t starts at t * dim).
// CPU reference: src/project.rs (F1) and src/map.rs (rrr_step, dm_step).
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
@group(0) @binding(15) var<storage, read> live: array<u32>;
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
