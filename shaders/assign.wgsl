// Built by src/backend/gpu/assign.rs (`auction_source`) as a one-line prelude and this file:
// the prelude declares PER, the rows per thread (MAXN / WG), which sizes function-scope arrays
// and so must be a const-expression, not a pipeline-overridable constant.
//
// Batched exact maximum-weight perfect assignment: Bertsekas's auction (forward, Jacobi
// bidding) with epsilon scaling, one workgroup per (trial, class) problem. The workgroup is
// sized to the class: the host builds `auction` with WG = the next power of two at or above
// n, from 32 to 256 (WG is a pipeline-overridable constant, the workgroup size below; PER
// follows it), and dispatches each class apart (`k_lo`, `k_n`), so that a 4-row corner
// problem does not hold 256 threads.
//
// Problem k of trial t is the n x n row-major block of w at t * wtot + woff (row = cell,
// column = piece; -inf forbids an entry). Each problem's finite weights are quantised to
// integers q in [0, qmax] (q = round((w - lo) * qmax / (hi - lo)), lo and hi the problem's
// smallest and largest finite weight, qmax = (2^24 - 1) / (n + 1)) and the auction runs on the
// benefits q * (n + 1). With integer benefits scaled by n + 1, an assignment in
// epsilon-complementary slackness with epsilon = 1 is optimal for q (Bertsekas 1988): the
// answer is exact for the quantised weights, and within n quanta of the float optimum.
//
// One dispatch runs at most `rounds` bidding rounds per problem (the class table's fourth
// entry), and the problem's state (prices, owners, the row of each column's owner, epsilon)
// lives in storage between dispatches: the host dispatches again until no problem is running.
// Bounded dispatches keep each one short on any device (and inside software drivers' loop
// limits). Epsilon phases go from eps0 down to 1, dividing by 4. Prices are kept across
// solves for the warm start, shifted so the smallest is 0.
//
// state[problem] = (eps, rounds so far, status, free rows); status: 0 solved, 1 infeasible (a
// row with no allowed entry), 2 NaN or +inf weight, 3 price or round bound reached (the host
// solves it instead), 4 n above MAXN, 255 running.
//
// CPU reference: the Jonker-Volgenant solver in src/assign.rs on the same q (tests).

struct Params {
    trials: u32,
    classes: u32,
    wtot: u32,
    rtot: u32,
    // bit 0: write q to qout (first dispatch); bit 1: warm start from `price_io`; bit 2: this
    // is the first dispatch of a solve (initialise the state).
    flags: u32,
    max_rounds: u32,
    // Unused (the answer goes into F1's `sel` through `shaders/pick.wgsl`).
    cells: u32,
    pad1: u32,
    // `auction`: this dispatch's classes, k_lo .. k_lo + k_n (the problems of one workgroup
    // size).
    k_lo: u32,
    k_n: u32,
    pad2: u32,
    pad3: u32,
}

const NONE: u32 = 0xffffffffu;
// The workgroup size of `auction`.
override WG: u32 = 256u;
const MAXN: u32 = 512u;
// The workgroup size of `settle`, one thread per problem.
const SETTLE_WG: u32 = 256u;
const PRICE_CAP: i32 = 0x3fffffff;
const MINUS: i32 = -2147483647;
const RUNNING: u32 = 255u;

@group(0) @binding(0) var<uniform> P: Params;
// Per class: n, offset of its block in a trial's weights, offset of its rows in a trial's
// outputs, bidding rounds per dispatch.
@group(0) @binding(1) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
// The row's column (the answer) and, per column, its owner row.
@group(0) @binding(3) var<storage, read_write> rows_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> owner_io: array<u32>;
@group(0) @binding(5) var<storage, read_write> price_io: array<i32>;
@group(0) @binding(6) var<storage, read_write> state: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> qout: array<i32>;
// `settle`: per trial, set to 1 when one of its problems is not solved (the F1 device loop
// restarts that trial alone).
@group(0) @binding(10) var<storage, read_write> fail: array<u32>;

var<workgroup> price: array<i32, MAXN>;
var<workgroup> owner: array<u32, MAXN>;
var<workgroup> rowcol: array<u32, MAXN>;
var<workgroup> colbid: array<atomic<i32>, MAXN>;
var<workgroup> colwin: array<atomic<u32>, MAXN>;
var<workgroup> red_lo: array<f32, WG>;
var<workgroup> red_hi: array<f32, WG>;
var<workgroup> nfree: atomic<u32>;
var<workgroup> flag: atomic<u32>;
var<workgroup> pmin: atomic<i32>;
var<workgroup> go: u32;

fn finite(v: f32) -> bool {
    // NaN fails both comparisons; infinities fail one.
    return v > -3.4e38 && v < 3.4e38;
}

@compute @workgroup_size(WG)
fn auction(@builtin(workgroup_id) gid: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let local = gid.x + gid.y * ng.x;
    // Uniform across the workgroup: every early return happens for all threads at once.
    if local >= P.trials * P.k_n {
        return;
    }
    let t = local / P.k_n;
    let k = P.k_lo + local % P.k_n;
    let problem = t * P.classes + k;
    let cls = table[k];
    let n = cls.x;
    let wbase = t * P.wtot + cls.y;
    let rbase = t * P.rtot + cls.z;
    let first = (P.flags & 4u) != 0u;
    var st = state[problem];
    if !first && st.z != RUNNING {
        return;
    }
    if n > MAXN {
        if lid == 0u {
            state[problem] = vec4<u32>(0u, 0u, 4u, 0u);
        }
        return;
    }
    let qmax = (16777215u / (n + 1u));
    if lid == 0u {
        atomicStore(&flag, 0u);
    }
    // The problem's finite range; NaN or +inf flags the problem.
    var lo = 3.4e38;
    var hi = -3.4e38;
    for (var e = lid; e < n * n; e += WG) {
        let v = w[wbase + e];
        if finite(v) {
            lo = min(lo, v);
            hi = max(hi, v);
        } else if !(v < 0.0) {
            atomicOr(&flag, 2u);
        }
    }
    red_lo[lid] = lo;
    red_hi[lid] = hi;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s /= 2u) {
        if lid < s {
            red_lo[lid] = min(red_lo[lid], red_lo[lid + s]);
            red_hi[lid] = max(red_hi[lid], red_hi[lid + s]);
        }
        workgroupBarrier();
    }
    lo = red_lo[0];
    hi = red_hi[0];
    let scale = select(0.0, f32(qmax) / (hi - lo), hi > lo);
    let unit = i32(n + 1u);
    // A row with a single allowed entry bids this much over its price.
    let big = (i32(qmax) + 1) * unit;
    let warm = (P.flags & 2u) != 0u;
    var eps: i32;
    var rounds: u32;
    if first {
        if (P.flags & 1u) != 0u {
            for (var e = lid; e < n * n; e += WG) {
                let v = w[wbase + e];
                qout[wbase + e] = select(-1, i32(round((v - lo) * scale)), finite(v));
            }
        }
        // The warm prices are in units of the last solve's quantum (kept in the state's
        // fourth word when it was solved): rescaled to this solve's, so that a change of the
        // weights' range does not start a price war.
        let old = bitcast<f32>(st.w);
        let ratio = select(1.0, scale / old, st.z == 0u && old > 0.0 && finite(old) && scale > 0.0);
        for (var j = lid; j < n; j += WG) {
            let p = clamp(round(f32(price_io[rbase + j]) * ratio), 0.0, f32(PRICE_CAP / 2));
            price[j] = select(0, i32(p), warm);
            owner[j] = NONE;
            rowcol[j] = NONE;
        }
        // Epsilon from about an eighth of the benefit range (cold) or a few quanta (warm).
        eps = select(max(1, big / 8), max(1, 4 * unit), warm);
        rounds = 0u;
    } else {
        for (var j = lid; j < n; j += WG) {
            price[j] = price_io[rbase + j];
            owner[j] = owner_io[rbase + j];
            rowcol[j] = rows_out[rbase + j];
        }
        eps = i32(st.x);
        rounds = st.y;
    }
    for (var j = lid; j < n; j += WG) {
        atomicStore(&colbid[j], MINUS);
        atomicStore(&colwin[j], NONE);
    }
    workgroupBarrier();
    var solved = false;
    for (var step = 0u; step < cls.w; step++) {
        // Bids: each free row offers for its best column the price that leaves it eps short
        // of indifferent between that column and its second best.
        var tgt: array<u32, PER>;
        var bid: array<i32, PER>;
        for (var r = 0u; r < PER; r++) {
            tgt[r] = NONE;
            let i = lid + r * WG;
            if i >= n || rowcol[i] != NONE {
                continue;
            }
            var v1 = MINUS;
            var v2 = MINUS;
            var j1 = NONE;
            for (var j = 0u; j < n; j++) {
                let v = w[wbase + i * n + j];
                if !finite(v) {
                    continue;
                }
                let val = i32(round((v - lo) * scale)) * unit - price[j];
                if val > v1 {
                    v2 = v1;
                    v1 = val;
                    j1 = j;
                } else if val > v2 {
                    v2 = val;
                }
            }
            if j1 == NONE {
                atomicOr(&flag, 1u);
                continue;
            }
            let inc = select(v1 - v2, big, v2 == MINUS);
            // Compared before adding, so that nothing overflows.
            if inc > PRICE_CAP - price[j1] - eps {
                atomicOr(&flag, 4u);
                continue;
            }
            tgt[r] = j1;
            bid[r] = price[j1] + inc + eps;
            atomicMax(&colbid[j1], bid[r]);
        }
        workgroupBarrier();
        // The highest bid wins; among equal bids the lowest row.
        for (var r = 0u; r < PER; r++) {
            if tgt[r] != NONE && bid[r] == atomicLoad(&colbid[tgt[r]]) {
                atomicMin(&colwin[tgt[r]], lid + r * WG);
            }
        }
        workgroupBarrier();
        for (var j = lid; j < n; j += WG) {
            let win = atomicLoad(&colwin[j]);
            if win != NONE {
                let old = owner[j];
                if old != NONE {
                    rowcol[old] = NONE;
                }
                owner[j] = win;
                rowcol[win] = j;
                price[j] = atomicLoad(&colbid[j]);
                atomicStore(&colbid[j], MINUS);
                atomicStore(&colwin[j], NONE);
            }
        }
        if lid == 0u {
            atomicStore(&nfree, 0u);
        }
        workgroupBarrier();
        for (var i = lid; i < n; i += WG) {
            if rowcol[i] == NONE {
                atomicAdd(&nfree, 1u);
            }
        }
        workgroupBarrier();
        rounds += 1u;
        // 0: stop (a flag, the round bound, or solved); 1: go on; 2: next phase.
        if lid == 0u {
            var g = 1u;
            if atomicLoad(&flag) != 0u || rounds >= P.max_rounds {
                g = 0u;
            } else if atomicLoad(&nfree) == 0u {
                g = select(0u, 2u, eps > 1);
            }
            go = g;
        }
        let g = workgroupUniformLoad(&go);
        if g == 0u {
            solved = eps == 1 && atomicLoad(&nfree) == 0u && atomicLoad(&flag) == 0u;
            break;
        }
        if g == 2u {
            // A new phase: every row free, prices kept.
            eps = max(1, eps / 4);
            for (var j = lid; j < n; j += WG) {
                owner[j] = NONE;
                rowcol[j] = NONE;
            }
            workgroupBarrier();
        }
    }
    workgroupBarrier();
    if lid == 0u {
        let f = atomicLoad(&flag);
        var c = RUNNING;
        if (f & 2u) != 0u {
            c = 2u;
        } else if (f & 1u) != 0u {
            c = 1u;
        } else if (f & 4u) != 0u || (rounds >= P.max_rounds && !solved) {
            c = 3u;
        } else if solved {
            c = 0u;
        }
        go = c;
    }
    let code = workgroupUniformLoad(&go);
    var shift = 0;
    if code == 0u {
        // Prices shifted so the smallest is 0 (a common shift keeps complementary slackness),
        // so that warm starts over many solves stay far from the cap.
        if lid == 0u {
            atomicStore(&pmin, 2147483647);
        }
        workgroupBarrier();
        var m = 2147483647;
        for (var j = lid; j < n; j += WG) {
            m = min(m, price[j]);
        }
        atomicMin(&pmin, m);
        workgroupBarrier();
        shift = atomicLoad(&pmin);
    }
    for (var i = lid; i < n; i += WG) {
        rows_out[rbase + i] = rowcol[i];
        owner_io[rbase + i] = owner[i];
        price_io[rbase + i] = price[i] - shift;
    }
    if lid == 0u {
        // Solved: the fourth word keeps the quantum's scale for the next warm start.
        let w4 = select(atomicLoad(&nfree), bitcast<u32>(scale), code == 0u);
        state[problem] = vec4<u32>(u32(eps), rounds, code, w4);
    }
}

// After a bounded number of auction dispatches: marks the trials with a problem not solved.
// One thread per (trial, class) problem.
@compute @workgroup_size(SETTLE_WG)
fn settle(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>) {
    let p = gid.x + gid.y * ng.x * SETTLE_WG;
    if p >= P.trials * P.classes {
        return;
    }
    if state[p].z != 0u {
        fail[p / P.classes] = 1u;
    }
}
