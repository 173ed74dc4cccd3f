// Divide-and-concur kernels (DESIGN.md section 4, F2), plain layout: one constraint per
// cell, one per piece, one per interior join, each on its own replica slots.
//
// CPU reference: src/dc/project.rs (divide, concur) and src/dc/mod.rs (step, readout).
// Per trial t: slot values x[t * S + s], chosen slots of P_b(x) chosen[t * NC + i] (one per
// cell or piece constraint, two per join), constraint weights lambda[t * C + k] (all 1 with
// uniform weights), the concur point m[t * V + v].
//
// Entry points:
//   concur   one thread per (trial, variable): the weighted means of the replicas of
//            2 P_b x - x (RRR) or of f_b(y) and of y (difference map)
//   divide   one workgroup per (trial, constraint): x += beta (m - P_b) on the constraint's
//            slots (the difference map first divides f_a(y) there), then P_b of the new x:
//            argmax for a cell or piece, best compatible pair for a join; with adaptive
//            weights also the constraint's error
//   adapt    one workgroup per trial: Elser's adaptive weight update from the errors
//   readout  one workgroup per trial: per-cell argmax board of m and its exact violation
//            count (mismatched joins, pieces used more than once), a reduction

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

const WG: u32 = 64u;
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

fn neg_inf() -> f32 {
    return bitcast<f32>(0xff800000u);
}

// Whether slot s (of constraint k) is among k's chosen slots in trial t.
fn is_chosen(t: u32, k: u32, s: u32) -> bool {
    for (var i = choice_off[k]; i < choice_off[k + 1u]; i++) {
        if (chosen[t * P.choices + i] == s) {
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
    let t = i / P.vars;
    let v = i - t * P.vars;
    var acc = 0.0;
    var den = 0.0;
    var cnt = 0.0;
    for (var r = var_off[v]; r < var_off[v + 1u]; r++) {
        let s = var_slot[r];
        let k = var_con[r];
        let w = lambda[t * P.cons + k];
        acc += w * x[t * P.slots + s];
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

// ---- divide: one workgroup per (trial, constraint) ----

var<workgroup> red_v: array<f32, 64>;
var<workgroup> red_i: array<u32, 64>;
var<workgroup> red_j: array<u32, 64>;
// Tie-break key of each entry: the slot (argmax) or 2 * colour + option (join).
var<workgroup> red_k: array<u32, 64>;
// The difference map's P_b(f_a(y)) on this constraint (at most two chosen slots).
var<workgroup> pick: array<u32, 2>;

// The value divide projects: y itself, or f_a(y) = (1 - 1/beta) P_a(y) + y / beta.
fn val(t: u32, s: u32, fa: bool) -> f32 {
    let y = x[t * P.slots + s];
    if (fa) {
        return (1.0 - P.inv) * ca[t * P.vars + slot_var[s]] + P.inv * y;
    }
    return y;
}

// Whether (v, key) beats the current entry (bv, bkey): larger value, or equal value and a
// smaller order key (the CPU scans in increasing order and keeps the first largest).
fn better(v: f32, key: u32, bv: f32, bkey: u32, have: bool) -> bool {
    return !have || v > bv || (v == bv && key < bkey);
}

// Reduces red_* over the workgroup; entry 0 then holds the winner. red_j == 0xffffffff
// marks an empty entry.
fn reduce(lid: u32) {
    for (var step = WG / 2u; step > 0u; step = step / 2u) {
        workgroupBarrier();
        if (lid < step) {
            let o = lid + step;
            let have = red_j[lid] != 0xffffffffu;
            let other = red_j[o] != 0xffffffffu;
            if (other && better(red_v[o], red_k[o], red_v[lid], red_k[lid], have)) {
                red_v[lid] = red_v[o];
                red_i[lid] = red_i[o];
                red_j[lid] = red_j[o];
                red_k[lid] = red_k[o];
            }
        }
    }
    workgroupBarrier();
}

// Argmax over the slots lo..hi (first largest): leaves the slot in red_i[0].
fn argmax_slots(t: u32, lo: u32, hi: u32, fa: bool, lid: u32) {
    var bv = neg_inf();
    var bi = 0u;
    var have = false;
    for (var s = lo + lid; s < hi; s += WG) {
        let v = val(t, s, fa);
        if (!have || v > bv) {
            bv = v;
            bi = s;
            have = true;
        }
    }
    red_v[lid] = bv;
    red_i[lid] = bi;
    red_j[lid] = select(0xffffffffu, 0u, have);
    red_k[lid] = bi;
    reduce(lid);
}

// Best entry of a colour group (local indices side_sorted[g0..g1] of a side whose slots
// start at `base`), skipping candidates of piece `skip` (0xffffffff: none).
struct Best {
    v: f32,
    i: u32,
    ok: bool,
}

fn best_group(t: u32, g0: u32, g1: u32, base: u32, cell: u32, skip: u32, fa: bool) -> Best {
    var b = Best(neg_inf(), 0u, false);
    for (var g = g0; g < g1; g++) {
        let li = side_sorted[g];
        if (cand_piece[cell_off[cell] + li] == skip) {
            continue;
        }
        let v = val(t, base + li, fa);
        if (!b.ok || v > b.v) {
            b = Best(v, li, true);
        }
    }
    return b;
}

// The join projection (src/dc/project.rs project_join): per colour (one thread each), the
// best pair of candidates showing it on the facing sides and naming different pieces; the
// first colour with the largest sum wins. Leaves the two chosen slots in red_i[0], red_j[0]
// (red_j[0] == 0xffffffff: no compatible pair at all).
fn divide_join(t: u32, k: u32, fa: bool, lid: u32) {
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
    var bkey = 0u;
    var have = false;
    for (var col = lid; col < P.colors; col += WG) {
        let u0 = side_grp[gu + col];
        let u1 = side_grp[gu + col + 1u];
        let w0 = side_grp[gw + col];
        let w1 = side_grp[gw + col + 1u];
        if (u0 == u1 || w0 == w1) {
            continue;
        }
        let bu = best_group(t, u0, u1, base_u, c, 0xffffffffu, fa);
        let bw = best_group(t, w0, w1, base_w, d, 0xffffffffu, fa);
        let piece = cand_piece[cell_off[c] + bu.i];
        // Candidates in colour order, as the CPU considers them: (value, u, w).
        if (piece != cand_piece[cell_off[d] + bw.i]) {
            let v = bu.v + bw.v;
            if (!have || v > bv) {
                bv = v; bi = bu.i; bj = bw.i; bkey = 2u * col; have = true;
            }
        } else {
            let ow = best_group(t, w0, w1, base_w, d, piece, fa);
            if (ow.ok) {
                let v = bu.v + ow.v;
                if (!have || v > bv) {
                    bv = v; bi = bu.i; bj = ow.i; bkey = 2u * col; have = true;
                }
            }
            let ou = best_group(t, u0, u1, base_u, c, piece, fa);
            if (ou.ok) {
                let v = ou.v + bw.v;
                if (!have || v > bv) {
                    bv = v; bi = ou.i; bj = bw.i; bkey = 2u * col + 1u; have = true;
                }
            }
        }
    }
    red_v[lid] = bv;
    red_i[lid] = base_u + bi;
    red_j[lid] = select(0xffffffffu, base_w + bj, have);
    red_k[lid] = bkey;
    reduce(lid);
}

// P_b of constraint k on the value `fa` selects; the chosen slots go to out0/out1.
fn divide_into(t: u32, k: u32, fa: bool, lid: u32) -> vec2<u32> {
    let lo = con_off[k];
    let hi = con_off[k + 1u];
    if (k < P.first_join) {
        argmax_slots(t, lo, hi, fa, lid);
        return vec2<u32>(red_i[0], 0xffffffffu);
    }
    divide_join(t, k, fa, lid);
    let pair_j = workgroupUniformLoad(&red_j[0]);
    if (pair_j != 0xffffffffu) {
        return vec2<u32>(red_i[0], pair_j);
    }
    // No compatible pair (a puzzle without solutions): each side's own argmax.
    let nu = cell_off[joins[3u * (k - P.first_join)] + 1u] - cell_off[joins[3u * (k - P.first_join)]];
    argmax_slots(t, lo, lo + nu, fa, lid);
    let a = red_i[0];
    workgroupBarrier();
    argmax_slots(t, lo + nu, hi, fa, lid);
    return vec2<u32>(a, red_i[0]);
}

fn is_picked(s: u32, n: u32) -> bool {
    return (n > 0u && pick[0] == s) || (n > 1u && pick[1] == s);
}

@compute @workgroup_size(64)
fn divide(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= P.trials * P.cons) {
        return;
    }
    let t = g / P.cons;
    let k = g - t * P.cons;
    if (live[t] == 0u) {
        return;
    }
    let lo = con_off[k];
    let hi = con_off[k + 1u];
    let nch = choice_off[k + 1u] - choice_off[k];
    if (nch == 0u) {
        return;
    }
    // The slots P_b chose last time (this constraint's own, read before they change).
    if (P.dm == 1u) {
        let p = divide_into(t, k, true, lid);
        if (lid == 0u) {
            pick[0] = p.x;
            pick[1] = p.y;
        }
    } else if (lid == 0u) {
        pick[0] = chosen[t * P.choices + choice_off[k]];
        pick[1] = select(0xffffffffu, chosen[t * P.choices + choice_off[k] + 1u], nch > 1u);
    }
    workgroupBarrier();
    // x += beta (m - P_b), in the CPU's order: + beta m, then - beta on the chosen slots;
    // the squared distance ||m - P_b||^2 on the way (adaptive weights).
    var e2 = 0.0;
    for (var s = lo + lid; s < hi; s += WG) {
        let mv = m[t * P.vars + slot_var[s]];
        var v = x[t * P.slots + s] + P.beta * mv;
        e2 += mv * mv;
        if (is_picked(s, nch)) {
            v -= P.beta;
            e2 += 1.0 - 2.0 * mv;
        }
        x[t * P.slots + s] = v;
    }
    storageBarrier();
    workgroupBarrier();
    if (P.adaptive == 1u) {
        red_v[lid] = e2;
        for (var step = WG / 2u; step > 0u; step = step / 2u) {
            workgroupBarrier();
            if (lid < step) {
                red_v[lid] += red_v[lid + step];
            }
        }
        workgroupBarrier();
        if (lid == 0u) {
            err[t * P.cons + k] = sqrt(max(red_v[0], 0.0) / f32(nch));
        }
        workgroupBarrier();
    }
    let p = divide_into(t, k, false, lid);
    if (lid == 0u) {
        chosen[t * P.choices + choice_off[k]] = p.x;
        if (nch > 1u) {
            chosen[t * P.choices + choice_off[k] + 1u] = p.y;
        }
    }
}

// ---- adaptive weights: one workgroup per trial ----

@compute @workgroup_size(64)
fn adapt(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    let t = wid.x + wid.y * nwg.x;
    if (t >= P.trials || live[t] == 0u) {
        return;
    }
    var sum = 0.0;
    for (var k = lid; k < P.cons; k += WG) {
        sum += err[t * P.cons + k];
    }
    red_v[lid] = sum;
    for (var step = WG / 2u; step > 0u; step = step / 2u) {
        workgroupBarrier();
        if (lid < step) {
            red_v[lid] += red_v[lid + step];
        }
    }
    workgroupBarrier();
    let mean = red_v[0] / f32(max(P.cons, 1u));
    // mean is finite and positive, else the weights stay (as on the CPU).
    if (!(mean > 0.0) || mean > 3.0e38) {
        return;
    }
    for (var k = lid; k < P.cons; k += WG) {
        let i = t * P.cons + k;
        lambda[i] = max(lambda[i] + P.gamma * (err[i] / mean - lambda[i]), P.min_weight);
    }
}

// ---- readout: one workgroup per trial ----

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
    // Per cell, the first largest concur value among its candidates.
    for (var c = lid; c < P.cells; c += WG) {
        var bv = neg_inf();
        var bj = cell_off[c];
        for (var j = cell_off[c]; j < cell_off[c + 1u]; j++) {
            let v = m[t * P.vars + j];
            if (j == cell_off[c] || v > bv) {
                bv = v;
                bj = j;
            }
        }
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
