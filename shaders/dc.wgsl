// Divide-and-concur kernels (ARCHITECTURE.md section 4, F2), plain layout: one constraint per
// cell, one per piece, one per interior join, each on its own replica slots.
//
// CPU reference: src/dc/project.rs (divide, concur) and src/dc/mod.rs (step, readout).
//
// State is trial-minor: with T = P.trials, slot s of trial t is x[s * T + t], and likewise
// chosen[i * T + t] (the chosen slots of P_b(x), one per cell or piece constraint, two per
// join), lambda[k * T + t] and err[k * T + t] (constraint weights, all 1 with uniform
// weights, and errors), m[v * T + t] and ca[v * T + t] (the concur point and P_a(y)). The
// per-item kernels run one thread per (item, trial) with the trial fastest, so the lanes of
// a warp are consecutive trials at the same slot and every load is coalesced. The host
// keeps trial-major order and converts with shaders/layout.wgsl. Boards and statuses stay
// trial-major (board[t * cells + c], status[2 t], status[2 t + 1]).
//
// Entry points:
//   concur   one thread per (variable, trial): the weighted means of the replicas of
//            2 P_b x - x (RRR) or of f_b(y) and of y (difference map)
//   divide   one thread per (constraint, trial): x += beta (m - P_b) on the constraint's
//            slots and, in the same pass, P_b of the new x: argmax for a cell or piece;
//            for a join the slots go colour group by colour group, each keeping its best
//            entry and its best of another piece, which is all the best compatible pair
//            needs; so each slot is read and written once. The difference map first runs
//            the same pass read only on f_a(y). With adaptive weights also the error
//   adapt    one thread per trial: Elser's adaptive weight update from the errors
//   argmax   one thread per (cell, trial): the cell's first largest variable of m
//   readout  one workgroup per trial: the argmax board, trial-major, and its exact
//            violation count (mismatched joins, pieces used more than once), a reduction

struct Params {
    trials: u32,
    vars: u32,
    slots: u32,
    cons: u32,
    choices: u32,
    cells: u32,
    colors: u32,
    first_join: u32,
    dm: u32,
    adaptive: u32,
    pad0: u32,
    pad1: u32,
    beta: f32,
    inv: f32,
    gamma: f32,
    min_weight: f32,
}

const MAX_CELLS: u32 = 1024u;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> chosen: array<u32>;
@group(0) @binding(3) var<storage, read_write> lambda: array<f32>;
@group(0) @binding(4) var<storage, read_write> m: array<f32>;
@group(0) @binding(5) var<storage, read_write> ca: array<f32>;
@group(0) @binding(6) var<storage, read_write> err: array<f32>;
@group(0) @binding(7) var<storage, read_write> board: array<u32>;
@group(0) @binding(8) var<storage, read_write> status: array<u32>;
@group(0) @binding(9) var<storage, read> live: array<u32>;
// Tables (src/dc/layout.rs): slot -> variable; variable -> its slots and their constraints;
// constraint -> slot range and choice range.
@group(0) @binding(10) var<storage, read> slot_var: array<u32>;
@group(0) @binding(11) var<storage, read> var_off: array<u32>;
@group(0) @binding(12) var<storage, read> var_slot: array<u32>;
@group(0) @binding(13) var<storage, read> var_con: array<u32>;
@group(0) @binding(14) var<storage, read> con_off: array<u32>;
@group(0) @binding(15) var<storage, read> choice_off: array<u32>;
// Candidates: cell c owns variables cell_off[c] .. cell_off[c + 1]; their pieces; their
// colours packed one byte per side; per cell side the colour groups (K + 1 offsets into
// side_sorted, local candidate indices); joins as (cell, facing cell, side).
@group(0) @binding(16) var<storage, read> cell_off: array<u32>;
@group(0) @binding(17) var<storage, read> cand_piece: array<u32>;
@group(0) @binding(18) var<storage, read> cand_colors: array<u32>;
@group(0) @binding(19) var<storage, read> side_grp: array<u32>;
@group(0) @binding(20) var<storage, read> side_sorted: array<u32>;
@group(0) @binding(21) var<storage, read> joins: array<u32>;
// Per (cell, trial), trial-minor: the cell's argmax variable of m (the readout's first pass).
@group(0) @binding(22) var<storage, read_write> cell_best: array<u32>;

fn neg_inf() -> f32 {
    return bitcast<f32>(0xff800000u);
}

// Whether slot s (of constraint k) is among k's chosen slots in trial t.
fn is_chosen(t: u32, k: u32, s: u32) -> bool {
    for (var i = choice_off[k]; i < choice_off[k + 1u]; i++) {
        if (chosen[i * P.trials + t] == s) {
            return true;
        }
    }
    return false;
}

@compute @workgroup_size(256)
fn concur(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= P.trials * P.vars) {
        return;
    }
    let v = i / P.trials;
    let t = i - v * P.trials;
    var acc = 0.0;
    var den = 0.0;
    var cnt = 0.0;
    for (var r = var_off[v]; r < var_off[v + 1u]; r++) {
        let s = var_slot[r];
        let k = var_con[r];
        // Uniform weights are all 1: no lambda traffic.
        var w = 1.0;
        if (P.adaptive == 1u) {
            w = lambda[k * P.trials + t];
        }
        acc += w * x[s * P.trials + t];
        den += w;
        if (is_chosen(t, k, s)) {
            cnt += w;
        }
    }
    if (P.dm == 0u) {
        m[i] = (2.0 * cnt - acc) / den;
    } else {
        m[i] = ((1.0 + P.inv) * cnt - P.inv * acc) / den;
        ca[i] = acc / den;
    }
}

// ---- divide: one thread per (constraint, trial) ----
//
// One pass over a constraint's slots serves both projections divide needs: UPDATE, the
// update x += beta (m - P_b) of each slot, stored, and P_b of the new values; FA, P_b of
// f_a(y), read only (the difference map's first projection); PLAIN reads x as it is.

const FA: u32 = 0u;
const UPDATE: u32 = 1u;
const PLAIN: u32 = 2u;

// The value divide projects: y itself, or f_a(y) = (1 - 1/beta) P_a(y) + y / beta.
fn val(t: u32, s: u32, fa: bool) -> f32 {
    let y = x[s * P.trials + t];
    if (fa) {
        return (1.0 - P.inv) * ca[slot_var[s] * P.trials + t] + P.inv * y;
    }
    return y;
}

// One slot of the update: x[s] += beta (m[var(s)] - P_b[s]), stored, and returned; the
// squared distance ||m - P_b||^2 accumulates in e2 (adaptive weights).
fn update(t: u32, s: u32, pick: vec2<u32>, e2: ptr<function, f32>) -> f32 {
    let mv = m[slot_var[s] * P.trials + t];
    var v = x[s * P.trials + t] + P.beta * mv;
    *e2 += mv * mv;
    if (s == pick.x || s == pick.y) {
        v -= P.beta;
        *e2 += 1.0 - 2.0 * mv;
    }
    x[s * P.trials + t] = v;
    return v;
}

// The value of slot s in a pass of the given mode.
fn visit(t: u32, s: u32, mode: u32, pick: vec2<u32>, e2: ptr<function, f32>) -> f32 {
    if (mode == UPDATE) {
        return update(t, s, pick, e2);
    }
    return val(t, s, mode == FA);
}

// Argmax over the slots lo..hi of the pass's values: the first largest, as the CPU scans.
fn argmax_pass(t: u32, lo: u32, hi: u32, mode: u32, pick: vec2<u32>, e2: ptr<function, f32>) -> u32 {
    var bv = neg_inf();
    var bi = lo;
    for (var s = lo; s < hi; s++) {
        let v = visit(t, s, mode, pick, e2);
        if (s == lo || v > bv) {
            bv = v;
            bi = s;
        }
    }
    return bi;
}

// The two best entries of a colour group (local indices side_sorted[g0..g1] of a side
// whose slots start at `base`): the first largest (v1, i1, of piece p1) and the first
// largest among entries of another piece than p1 (v2, i2; ok2 when one exists). The first
// largest entry avoiding any piece q is then the first when q != p1, else the second: what
// the CPU finds by scanning the group again (src/dc/project.rs best_other_piece).
struct Top2 {
    v1: f32,
    i1: u32,
    p1: u32,
    v2: f32,
    i2: u32,
    ok2: bool,
}

fn group_pass(t: u32, g0: u32, g1: u32, base: u32, cell: u32, mode: u32, pick: vec2<u32>,
              e2: ptr<function, f32>) -> Top2 {
    var b = Top2(neg_inf(), 0u, 0xffffffffu, neg_inf(), 0u, false);
    for (var g = g0; g < g1; g++) {
        let li = side_sorted[g];
        let q = cand_piece[cell_off[cell] + li];
        let v = visit(t, base + li, mode, pick, e2);
        if (g == g0 || v > b.v1) {
            if (g != g0 && q != b.p1) {
                b.v2 = b.v1;
                b.i2 = b.i1;
                b.ok2 = true;
            }
            b.v1 = v;
            b.i1 = li;
            b.p1 = q;
        } else if (q != b.p1 && (!b.ok2 || v > b.v2)) {
            b.v2 = v;
            b.i2 = li;
            b.ok2 = true;
        }
    }
    return b;
}

// The join projection (src/dc/project.rs project_join) in one pass, colour group by colour
// group (each candidate of either cell is in exactly one group of its side): per colour in
// increasing order, the best pair of candidates showing it on the facing sides and naming
// different pieces; the first pair with the largest sum wins. Returns the two chosen
// slots; with no compatible pair at all (a puzzle without solutions), each side's argmax.
fn join_pass(t: u32, k: u32, mode: u32, pick: vec2<u32>, e2: ptr<function, f32>) -> vec2<u32> {
    let jn = k - P.first_join;
    let c = joins[3u * jn];
    let d = joins[3u * jn + 1u];
    let s = joins[3u * jn + 2u];
    let base_u = con_off[k];
    let nu = cell_off[c + 1u] - cell_off[c];
    let base_w = base_u + nu;
    let k1 = P.colors + 1u;
    let gu = (c * 4u + s) * k1;
    let gw = (d * 4u + (s + 2u) % 4u) * k1;
    var bv = neg_inf();
    var bi = 0u;
    var bj = 0u;
    var have = false;
    for (var col = 0u; col < P.colors; col++) {
        let u0 = side_grp[gu + col];
        let u1 = side_grp[gu + col + 1u];
        let w0 = side_grp[gw + col];
        let w1 = side_grp[gw + col + 1u];
        let bu = group_pass(t, u0, u1, base_u, c, mode, pick, e2);
        let bw = group_pass(t, w0, w1, base_w, d, mode, pick, e2);
        if (u0 == u1 || w0 == w1) {
            continue;
        }
        if (bu.p1 != bw.p1) {
            let v = bu.v1 + bw.v1;
            if (!have || v > bv) {
                bv = v; bi = bu.i1; bj = bw.i1; have = true;
            }
        } else {
            // Both bests name the same piece (rare): one side takes its best other piece.
            if (bw.ok2) {
                let v = bu.v1 + bw.v2;
                if (!have || v > bv) {
                    bv = v; bi = bu.i1; bj = bw.i2; have = true;
                }
            }
            if (bu.ok2) {
                let v = bu.v2 + bw.v1;
                if (!have || v > bv) {
                    bv = v; bi = bu.i2; bj = bw.i1; have = true;
                }
            }
        }
    }
    if (have) {
        return vec2<u32>(base_u + bi, base_w + bj);
    }
    // Rescan the pass's values (when updating, the new x is stored: read it as it is).
    var again = mode;
    if (mode == UPDATE) {
        again = PLAIN;
    }
    var none = 0.0;
    return vec2<u32>(argmax_pass(t, base_u, base_w, again, pick, &none),
                     argmax_pass(t, base_w, con_off[k + 1u], again, pick, &none));
}

// P_b of constraint k over one pass: the chosen slot(s), the second 0xffffffff for a cell
// or piece constraint.
fn project_pass(t: u32, k: u32, mode: u32, pick: vec2<u32>, e2: ptr<function, f32>) -> vec2<u32> {
    if (k < P.first_join) {
        return vec2<u32>(argmax_pass(t, con_off[k], con_off[k + 1u], mode, pick, e2), 0xffffffffu);
    }
    return join_pass(t, k, mode, pick, e2);
}

@compute @workgroup_size(256)
fn divide(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = gid.x + gid.y * nwg.x * 256u;
    if (g >= P.trials * P.cons) {
        return;
    }
    let k = g / P.trials;
    let t = g - k * P.trials;
    if (live[t] == 0u) {
        return;
    }
    let c0 = choice_off[k];
    let nch = choice_off[k + 1u] - c0;
    if (nch == 0u) {
        return;
    }
    // The slots P_b chose last time (this constraint's own, read before they change), or
    // with the difference map P_b(f_a(y)).
    var pick = vec2<u32>(chosen[c0 * P.trials + t], 0xffffffffu);
    if (nch > 1u) {
        pick.y = chosen[(c0 + 1u) * P.trials + t];
    }
    var e2 = 0.0;
    if (P.dm == 1u) {
        pick = project_pass(t, k, FA, pick, &e2);
    }
    // x += beta (m - P_b) on every slot and, in the same pass, P_b of the new x.
    let p = project_pass(t, k, UPDATE, pick, &e2);
    chosen[c0 * P.trials + t] = p.x;
    if (nch > 1u) {
        chosen[(c0 + 1u) * P.trials + t] = p.y;
    }
    if (P.adaptive == 1u) {
        err[k * P.trials + t] = sqrt(max(e2, 0.0) / f32(nch));
    }
}

// ---- adaptive weights: one thread per trial ----

@compute @workgroup_size(256)
fn adapt(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * 256u;
    if (t >= P.trials || live[t] == 0u) {
        return;
    }
    var sum = 0.0;
    for (var k = 0u; k < P.cons; k++) {
        sum += err[k * P.trials + t];
    }
    let mean = sum / f32(max(P.cons, 1u));
    // mean is finite and positive, else the weights stay (as on the CPU).
    if (!(mean > 0.0) || mean > 3.0e38) {
        return;
    }
    for (var k = 0u; k < P.cons; k++) {
        let i = k * P.trials + t;
        lambda[i] = max(lambda[i] + P.gamma * (err[i] / mean - lambda[i]), P.min_weight);
    }
}

// ---- readout: one thread per (cell, trial), then one workgroup per trial ----

// Per cell and trial, the first largest concur value among the cell's candidates.
@compute @workgroup_size(256)
fn argmax(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 256u;
    if (i >= P.trials * P.cells) {
        return;
    }
    let c = i / P.trials;
    let t = i - c * P.trials;
    var bv = neg_inf();
    var bj = cell_off[c];
    for (var j = cell_off[c]; j < cell_off[c + 1u]; j++) {
        let v = m[j * P.trials + t];
        if (j == cell_off[c] || v > bv) {
            bv = v;
            bj = j;
        }
    }
    cell_best[i] = bj;
}

const WG: u32 = 64u;

var<workgroup> uses: array<atomic<u32>, 1024>;
var<workgroup> bad_joins: atomic<u32>;
var<workgroup> extra: atomic<u32>;

@compute @workgroup_size(64)
fn readout(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let t = wid.x + wid.y * nwg.x;
    if (t >= P.trials) {
        return;
    }
    for (var p = lid; p < P.cells; p += WG) {
        atomicStore(&uses[p], 0u);
    }
    if (lid == 0u) {
        atomicStore(&bad_joins, 0u);
        atomicStore(&extra, 0u);
    }
    workgroupBarrier();
    // The board of `argmax`, trial-major, and the uses of each piece.
    for (var c = lid; c < P.cells; c += WG) {
        let bj = cell_best[c * P.trials + t];
        board[t * P.cells + c] = bj;
        atomicAdd(&uses[cand_piece[bj]], 1u);
    }
    storageBarrier();
    workgroupBarrier();
    let njoins = (arrayLength(&joins) / 3u);
    for (var n = lid; n < njoins; n += WG) {
        let c = joins[3u * n];
        let d = joins[3u * n + 1u];
        let s = joins[3u * n + 2u];
        let kc = (cand_colors[board[t * P.cells + c]] >> (8u * s)) & 0xffu;
        let kd = (cand_colors[board[t * P.cells + d]] >> (8u * ((s + 2u) % 4u))) & 0xffu;
        if (kc != kd) {
            atomicAdd(&bad_joins, 1u);
        }
    }
    for (var p = lid; p < P.cells; p += WG) {
        let u = atomicLoad(&uses[p]);
        if (u > 1u) {
            atomicAdd(&extra, u - 1u);
        }
    }
    workgroupBarrier();
    if (lid == 0u) {
        status[2u * t] = atomicLoad(&bad_joins);
        status[2u * t + 1u] = atomicLoad(&extra);
    }
}
