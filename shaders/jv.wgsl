// Built by src/backend/gpu/jv.rs (`source`) by concatenation: this file, then the variant
// that holds the entry point `jv` and its `reduce_min`: jv_workgroup.wgsl (a tree in workgroup
// memory) or, on a device with subgroup operations (the only one that validates it),
// jv_subgroup.wgsl (subgroup minima).
//
// Batched exact maximum-weight perfect assignment by shortest augmenting paths (Jonker and
// Volgenant 1987, the dense Dijkstra form), one 64-thread workgroup per (trial, class)
// problem, the columns spread over the threads.
//
// Problem k of trial t is the n x n row-major block of w at t * wtot + woff (row = cell,
// column = piece; -inf forbids an entry). It is solved as the min-cost problem with cost
// c = -w, in f32 with no quantisation: column duals v, and for each assigned row the
// invariant that its column minimises c[i][j] - v[j] (dual feasibility).
//
// Warm start (P.flags bit 1, and the trial's `cold` word 0): the duals and the assignment of
// the last solve stay in storage (`v_io`, `rows_out`). A row keeps its column if that column
// still minimises c[i][j] - v[j] for the new weights (previous columns are distinct, so kept
// rows never collide); every other row is free. Cold start: v[j] = min_i c[i][j], every row
// free. Then each free row in turn grows a shortest-path tree over reduced costs until it
// reaches an unassigned column (the first column at the minimum, an unassigned one first, as
// the host solver picks), the scanned columns' duals are updated and the path is flipped.
// The result is exactly optimal for the f32 weights up to float rounding of the duals.
// The answer goes into F1's `sel` through the shared `pick` pass (`shaders/pick.wgsl`).
//
// One step of the search is a min-reduction over the columns: with subgroup operations where
// the adapter has them (the `SUBGROUPS` variant of this file, see `src/backend/gpu/jv.rs`),
// workgroup memory otherwise.
//
// state[problem] = (augmentations, scan steps, status, 0); status 0 solved, 1 infeasible
// (no perfect matching on the allowed entries), 2 NaN or +inf weight, 4 n above MAXN.
// A problem that is not solved sets its trial's `fail` word (the F1 loop restarts the trial).
//
// CPU reference: the Jonker-Volgenant solver in src/assign.rs (tests compare the two).

struct Params {
    trials: u32,
    classes: u32,
    wtot: u32,
    rtot: u32,
    // bit 1: warm start allowed (per trial unless its `cold` word is set).
    flags: u32,
    pad0: u32,
    cells: u32,
    pad1: u32,
}

const NONE: u32 = 0xffffffffu;
const WG: u32 = 64u;
const MAXN: u32 = 256u;
const INF: f32 = 3.4028235e38;

@group(0) @binding(0) var<uniform> P: Params;
// Per class: n, offset of its block in a trial's weights, offset of its rows in a trial's
// outputs, and 1 when the subgroup kernel (`jv_sg.wgsl`) solves the class instead.
@group(0) @binding(1) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
// The row's column (the answer, and the next warm start).
@group(0) @binding(3) var<storage, read_write> rows_out: array<u32>;
// The column duals (the next warm start).
@group(0) @binding(4) var<storage, read_write> v_io: array<f32>;
@group(0) @binding(6) var<storage, read_write> state: array<vec4<u32>>;
// Per trial: 1 = solve cold this time.
@group(0) @binding(7) var<storage, read> cold: array<u32>;
// Per trial: set to 1 when one of its problems is not solved.
@group(0) @binding(10) var<storage, read_write> fail: array<u32>;

var<workgroup> v: array<f32, MAXN>;
var<workgroup> d: array<f32, MAXN>;
var<workgroup> pred: array<u32, MAXN>;
var<workgroup> x: array<u32, MAXN>;
var<workgroup> y: array<u32, MAXN>;
var<workgroup> scanned: array<u32, MAXN>;
var<workgroup> red_v: array<f32, WG>;
var<workgroup> red_k: array<u32, WG>;
var<workgroup> flag: atomic<u32>;
var<workgroup> ctl: u32;
var<workgroup> ctl_min: f32;
var<workgroup> ctl_col: u32;

fn finite(a: f32) -> bool {
    return a > -INF && a < INF;
}

// The cost of entry (i, j): -w, +inf where forbidden.
fn cost(base: u32, n: u32, i: u32, j: u32) -> f32 {
    let a = w[base + i * n + j];
    return select(INF, -a, finite(a));
}

// (a, ka) before (b, kb): smaller value, then smaller key.
fn before(a: f32, ka: u32, b: f32, kb: u32) -> bool {
    return a < b || (a == b && ka < kb);
}


// One problem, on the workgroup that the entry point `jv` (in the variant file) runs.
fn jv_problem(gid: vec3<u32>, ng: vec3<u32>, lid: u32) {
    let problem = gid.x + gid.y * ng.x;
    if problem >= P.trials * P.classes {
        return;
    }
    let t = problem / P.classes;
    let k = problem % P.classes;
    let cls = table[k];
    if cls.w != 0u {
        return;
    }
    let n = cls.x;
    let wbase = t * P.wtot + cls.y;
    let rbase = t * P.rtot + cls.z;
    if n > MAXN {
        if lid == 0u {
            state[problem] = vec4<u32>(0u, 0u, 4u, 0u);
            fail[t] = 1u;
        }
        return;
    }
    if lid == 0u {
        atomicStore(&flag, 0u);
    }
    workgroupBarrier();
    for (var e = lid; e < n * n; e += WG) {
        let a = w[wbase + e];
        if !finite(a) && !(a < 0.0) {
            atomicOr(&flag, 2u);
        }
    }
    let warm = (P.flags & 2u) != 0u && cold[t] == 0u;
    if warm {
        for (var j = lid; j < n; j += WG) {
            v[j] = v_io[rbase + j];
            y[j] = NONE;
            scanned[j] = 0u;
        }
        workgroupBarrier();
        for (var i = lid; i < n; i += WG) {
            var m = INF;
            for (var j = 0u; j < n; j++) {
                m = min(m, cost(wbase, n, i, j) - v[j]);
            }
            if m >= INF {
                atomicOr(&flag, 1u);
            }
            let p = rows_out[rbase + i];
            if p < n && cost(wbase, n, i, p) - v[p] <= m && m < INF {
                x[i] = p;
                y[p] = i;
            } else {
                x[i] = NONE;
            }
        }
    } else {
        for (var j = lid; j < n; j += WG) {
            var m = INF;
            for (var i = 0u; i < n; i++) {
                m = min(m, cost(wbase, n, i, j));
            }
            if m >= INF {
                atomicOr(&flag, 1u);
            }
            v[j] = m;
            x[j] = NONE;
            y[j] = NONE;
            scanned[j] = 0u;
        }
    }
    workgroupBarrier();
    if lid == 0u {
        ctl = atomicLoad(&flag);
    }
    var bad = workgroupUniformLoad(&ctl);
    var augmentations = 0u;
    var steps = 0u;
    for (var f = 0u; f < n && bad == 0u; f++) {
        if workgroupUniformLoad(&x[f]) != NONE {
            continue;
        }
        augmentations += 1u;
        for (var j = lid; j < n; j += WG) {
            d[j] = cost(wbase, n, f, j) - v[j];
            pred[j] = f;
            scanned[j] = 0u;
        }
        workgroupBarrier();
        var end = NONE;
        var dmin = 0.0;
        // At most n columns are scanned.
        for (var s = 0u; s <= n; s++) {
            steps += 1u;
            var bv = INF;
            var bk = NONE;
            for (var j = lid; j < n; j += WG) {
                if scanned[j] == 0u {
                    // Unassigned columns first among equal distances, then the lowest column.
                    let key = select(MAXN, 0u, y[j] == NONE) + j;
                    if before(d[j], key, bv, bk) {
                        bv = d[j];
                        bk = key;
                    }
                }
            }
            reduce_min(lid, bv, bk);
            let m = workgroupUniformLoad(&ctl_min);
            let key = workgroupUniformLoad(&ctl_col);
            if m >= INF || key == NONE {
                bad = 1u;
                break;
            }
            let j1 = key % MAXN;
            dmin = m;
            let i = workgroupUniformLoad(&y[j1]);
            if i == NONE {
                end = j1;
                break;
            }
            let h = cost(wbase, n, i, j1) - v[j1] - m;
            // Every thread reads j1's state before it changes.
            workgroupBarrier();
            if lid == 0u {
                scanned[j1] = 1u;
            }
            for (var j = lid; j < n; j += WG) {
                if j != j1 && scanned[j] == 0u {
                    let c = cost(wbase, n, i, j) - v[j] - h;
                    if c < d[j] {
                        d[j] = c;
                        pred[j] = i;
                    }
                }
            }
            workgroupBarrier();
        }
        if bad != 0u {
            break;
        }
        for (var j = lid; j < n; j += WG) {
            if scanned[j] != 0u {
                v[j] += d[j] - dmin;
            }
        }
        workgroupBarrier();
        if lid == 0u {
            var j = end;
            for (var s = 0u; s < n; s++) {
                let i = pred[j];
                y[j] = i;
                let prev = x[i];
                x[i] = j;
                if i == f {
                    break;
                }
                j = prev;
            }
        }
        workgroupBarrier();
    }
    if lid == 0u && bad != 0u && atomicLoad(&flag) == 0u {
        atomicOr(&flag, 1u);
    }
    workgroupBarrier();
    let f = atomicLoad(&flag);
    if f == 0u {
        for (var i = lid; i < n; i += WG) {
            rows_out[rbase + i] = x[i];
            v_io[rbase + i] = v[i];
        }
    } else {
        // A cold start next time: no answer to keep.
        for (var i = lid; i < n; i += WG) {
            rows_out[rbase + i] = NONE;
        }
    }
    if lid == 0u {
        var c = 0u;
        if (f & 2u) != 0u {
            c = 2u;
        } else if (f & 1u) != 0u {
            c = 1u;
        }
        state[problem] = vec4<u32>(augmentations, steps, c, 0u);
        if c != 0u {
            fail[t] = 1u;
        }
    }
}
