// Built by src/backend/gpu/jv.rs (`sg_source_staged`) by concatenation: a one-line prelude
// that declares MAXC (the column slots a lane keeps in registers, which size function-scope
// arrays and so must be a const-expression, not a pipeline-overridable constant), this file,
// and the variant of `stage_block`: jv_sg_direct.wgsl (nothing to stage) or jv_sg_staged.wgsl
// (the staged variant's copy of the cost block, whose subgroup barrier only a device with
// wgpu's SUBGROUP_BARRIER feature validates).
//
// Batched exact maximum-weight perfect assignment by shortest augmenting paths (Jonker and
// Volgenant 1987, the dense Dijkstra form), one SUBGROUP per (trial, class) problem and
// several problems per workgroup, for the small classes (n up to MAXN = 64).
//
// The same algorithm, order and tie-breaking as `shaders/jv.wgsl` (one 64-thread workgroup a
// problem), so the two give the same assignments and duals bit for bit; see that file for the
// warm start, the cold start and the status words. What changes is where the state lives:
// - column j sits on lane j % S, slot j / S (S the subgroup size): its dual v, distance d,
//   predecessor row and assigned row stay in registers (MAXC slots a lane, MAXC = 64 / the
//   adapter's smallest subgroup size; the host writes it below);
// - row i's column sits on lane i % S, slot i / S, also in registers;
// - a scan step is a lane-local minimum over the lane's slots, then two subgroup minima (the
//   distance, then the key among the lanes at that distance); a value another lane holds
//   comes by subgroupShuffle. There is no workgroup barrier anywhere, so each problem runs at
//   its own pace.
// The staged variant reads the problem's cost block from workgroup memory (see STAGE below).
// The answer is also written as F1's `sel` (the pick pass fused in) and the trial's `fail`
// word is set when a problem is not solved. A trial whose `cold` word is 2 (frozen or
// finished in the F1 device loop) is skipped: its rows, duals and `sel` stay as they were.
//
// Problems are laid out class-major: problem p of this kernel is trial p % trials of class
// sgk[p / trials] (the classes this kernel solves; the larger ones go to `jv.wgsl`).
// Workgroup g's subgroup s solves problem g * PPW + s (PPW = P.ppw, the workgroup size over
// the adapter's largest subgroup size); a subgroup past PPW idles.
//
// CPU reference: the Jonker-Volgenant solver in src/assign.rs; device twin: jv.wgsl (tests
// compare all three).

struct Params {
    trials: u32,
    classes: u32,
    wtot: u32,
    rtot: u32,
    // bit 1: warm start allowed (per trial unless its `cold` word is set).
    flags: u32,
    // Problems per workgroup.
    ppw: u32,
    // Cells per trial (the stride of `sel`).
    cells: u32,
    // Classes this kernel solves (the first `nsg` entries of `sgk`).
    nsg: u32,
}

const NONE: u32 = 0xffffffffu;
const MAXN: u32 = 64u;
// Keys: unassigned columns first among equal distances (as the host solver picks).
const KEYB: u32 = 256u;
const INF: f32 = 3.4028235e38;
// The staged variant (`--assign gpu-jv-sg-staged`): STAGE 1, and each subgroup copies its
// problem's cost block once into its slot of `blk` (SN x SN floats, SN the batch's largest
// class this kernel solves) and reads it there; the host sets these pipeline-overridable
// constants and sizes P.ppw so that the slots fit the device's workgroup memory. The copy,
// with the subgroup barrier that needs wgpu's SUBGROUP_BARRIER feature, goes in at the
// STAGE_COPY insertion point only in that variant.
override STAGE: u32 = 0u;
override SN: u32 = 1u;
override BLK: u32 = 1u;
var<workgroup> blk: array<f32, BLK>;
var<private> sbase: u32;

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read_write> rows_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> v_io: array<f32>;
@group(0) @binding(6) var<storage, read_write> state: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read> cold: array<u32>;
@group(0) @binding(8) var<storage, read> row_cell: array<vec2<u32>>;
@group(0) @binding(9) var<storage, read_write> sel: array<u32>;
@group(0) @binding(10) var<storage, read_write> fail: array<u32>;
@group(0) @binding(11) var<storage, read> sgk: array<u32>;

fn finite(a: f32) -> bool {
    return a > -INF && a < INF;
}

fn cost(base: u32, n: u32, i: u32, j: u32) -> f32 {
    var a: f32;
    if STAGE != 0u {
        a = blk[sbase + i * n + j];
    } else {
        a = w[base + i * n + j];
    }
    return select(INF, -a, finite(a));
}

fn before(a: f32, ka: u32, b: f32, kb: u32) -> bool {
    return a < b || (a == b && ka < kb);
}

@compute @workgroup_size(128)
fn jv_sg(@builtin(workgroup_id) gid: vec3<u32>, @builtin(num_workgroups) ng: vec3<u32>,
         @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_id) sgi: u32,
         @builtin(subgroup_size) S: u32) {
    if sgi >= P.ppw {
        return;
    }
    let p = (gid.x + gid.y * ng.x) * P.ppw + sgi;
    if p >= P.trials * P.nsg {
        return;
    }
    let t = p % P.trials;
    let k = sgk[p / P.trials];
    let problem = t * P.classes + k;
    if cold[t] == 2u {
        return;
    }
    let cls = table[k];
    let n = cls.x;
    let wbase = t * P.wtot + cls.y;
    let rbase = t * P.rtot + cls.z;
    if n > MAXN || n > MAXC * S {
        if lane == 0u {
            state[problem] = vec4<u32>(0u, 0u, 4u, 0u);
            fail[t] = 1u;
        }
        return;
    }
    // The staged variant copies the block into this subgroup's slot here.
    stage_block(sgi, lane, S, n, wbase);
    // A NaN or +inf weight.
    var badw = false;
    for (var e = lane; e < n * n; e += S) {
        let a = w[wbase + e];
        if !finite(a) && !(a < 0.0) {
            badw = true;
        }
    }
    let nan = subgroupAny(badw);
    var cv: array<f32, MAXC>;
    var cd: array<f32, MAXC>;
    var cp: array<u32, MAXC>;
    var cy: array<u32, MAXC>;
    var rx: array<u32, MAXC>;
    var infeasible = false;
    let warm = (P.flags & 2u) != 0u && cold[t] == 0u;
    if warm {
        for (var q = 0u; q < MAXC; q++) {
            let j = q * S + lane;
            cv[q] = 0.0;
            if j < n {
                cv[q] = v_io[rbase + j];
            }
            cy[q] = NONE;
            rx[q] = NONE;
        }
        for (var i = 0u; i < n; i++) {
            var m = INF;
            for (var q = 0u; q < MAXC; q++) {
                let j = q * S + lane;
                if j < n {
                    m = min(m, cost(wbase, n, i, j) - cv[q]);
                }
            }
            m = subgroupMin(m);
            if m >= INF {
                infeasible = true;
            }
            let pc = rows_out[rbase + i];
            // The dual of column pc, from its lane.
            var vl = 0.0;
            for (var q = 0u; q < MAXC; q++) {
                if pc < n && q == pc / S {
                    vl = cv[q];
                }
            }
            let vp = subgroupShuffle(vl, select(0u, pc % S, pc < n));
            let keep = pc < n && m < INF && cost(wbase, n, i, pc) - vp <= m;
            if keep && lane == pc % S {
                for (var q = 0u; q < MAXC; q++) {
                    if q == pc / S {
                        cy[q] = i;
                    }
                }
            }
            if keep && lane == i % S {
                for (var q = 0u; q < MAXC; q++) {
                    if q == i / S {
                        rx[q] = pc;
                    }
                }
            }
        }
    } else {
        for (var q = 0u; q < MAXC; q++) {
            let j = q * S + lane;
            cv[q] = 0.0;
            if j < n {
                var m = INF;
                for (var i = 0u; i < n; i++) {
                    m = min(m, cost(wbase, n, i, j));
                }
                if m >= INF {
                    infeasible = true;
                }
                cv[q] = m;
            }
            cy[q] = NONE;
            rx[q] = NONE;
        }
        infeasible = subgroupAny(infeasible);
    }
    var bad = nan || infeasible;
    var augmentations = 0u;
    var steps = 0u;
    for (var f = 0u; f < n && !bad; f++) {
        // Row f's column, from its lane.
        var xl = NONE;
        for (var q = 0u; q < MAXC; q++) {
            if q == f / S {
                xl = rx[q];
            }
        }
        if subgroupShuffle(xl, f % S) != NONE {
            continue;
        }
        augmentations += 1u;
        var scanned = 0u;
        for (var q = 0u; q < MAXC; q++) {
            let j = q * S + lane;
            cd[q] = INF;
            cp[q] = f;
            if j < n {
                cd[q] = cost(wbase, n, f, j) - cv[q];
            }
        }
        var end = NONE;
        var dmin = 0.0;
        for (var s = 0u; s <= n; s++) {
            steps += 1u;
            var bv = INF;
            var bk = NONE;
            for (var q = 0u; q < MAXC; q++) {
                let j = q * S + lane;
                if j < n && (scanned & (1u << q)) == 0u {
                    let key = select(KEYB, 0u, cy[q] == NONE) + j;
                    if before(cd[q], key, bv, bk) {
                        bv = cd[q];
                        bk = key;
                    }
                }
            }
            let m = subgroupMin(bv);
            let key = subgroupMin(select(NONE, bk, bv == m));
            if m >= INF || key == NONE {
                bad = true;
                break;
            }
            let j1 = key % KEYB;
            dmin = m;
            let q1 = j1 / S;
            let l1 = j1 % S;
            var yl = NONE;
            var vl = 0.0;
            for (var q = 0u; q < MAXC; q++) {
                if q == q1 {
                    yl = cy[q];
                    vl = cv[q];
                }
            }
            let i = subgroupShuffle(yl, l1);
            if i == NONE {
                end = j1;
                break;
            }
            let h = cost(wbase, n, i, j1) - subgroupShuffle(vl, l1) - m;
            if lane == l1 {
                scanned |= 1u << q1;
            }
            for (var q = 0u; q < MAXC; q++) {
                let j = q * S + lane;
                if j < n && (scanned & (1u << q)) == 0u {
                    let c = cost(wbase, n, i, j) - cv[q] - h;
                    if c < cd[q] {
                        cd[q] = c;
                        cp[q] = i;
                    }
                }
            }
        }
        if bad {
            break;
        }
        for (var q = 0u; q < MAXC; q++) {
            if (scanned & (1u << q)) != 0u {
                cv[q] += cd[q] - dmin;
            }
        }
        // Flip the path from the unassigned column back to row f.
        var j = end;
        for (var s = 0u; s < n; s++) {
            let qj = j / S;
            let lj = j % S;
            var pl = NONE;
            for (var q = 0u; q < MAXC; q++) {
                if q == qj {
                    pl = cp[q];
                }
            }
            let i = subgroupShuffle(pl, lj);
            if lane == lj {
                for (var q = 0u; q < MAXC; q++) {
                    if q == qj {
                        cy[q] = i;
                    }
                }
            }
            let qi = i / S;
            let li = i % S;
            var pr = NONE;
            for (var q = 0u; q < MAXC; q++) {
                if q == qi {
                    pr = rx[q];
                }
            }
            let prev = subgroupShuffle(pr, li);
            if lane == li {
                for (var q = 0u; q < MAXC; q++) {
                    if q == qi {
                        rx[q] = j;
                    }
                }
            }
            if i == f {
                break;
            }
            j = prev;
        }
    }
    for (var q = 0u; q < MAXC; q++) {
        let i = q * S + lane;
        if i < n {
            var r = rx[q];
            if bad {
                // A cold start next time: no answer to keep.
                r = NONE;
            } else {
                v_io[rbase + i] = cv[q];
            }
            rows_out[rbase + i] = r;
            let rc = row_cell[cls.z + i];
            sel[t * P.cells + rc.x] = rc.y + select(r, 0u, r == NONE);
        }
    }
    if lane == 0u {
        var c = 0u;
        if nan {
            c = 2u;
        } else if bad {
            c = 1u;
        }
        state[problem] = vec4<u32>(augmentations, steps, c, 0u);
        if c != 0u {
            fail[t] = 1u;
        }
    }
}
