//! The row kernels of the solver: minima, second minima and first positions of reduced
//! costs, and the shortest-path relaxation, written as independent lanes over fixed-size
//! chunks so that LLVM vectorises them. All are `#[inline(always)]`: they compile into the
//! solve that calls them.

use super::Real;

/// The smallest `d[j]`, and the smallest `d[j] + fm[j]` (over the unassigned columns).
#[inline(always)]
pub(super) fn min_and_min_free<R: Real>(d: &[R], fm: &[R]) -> (R, R) {
    let fm = &fm[..d.len()];
    let mut a = [R::INF; LANES];
    let mut b = [R::INF; LANES];
    let dc = d.chunks_exact(LANES);
    let fc = fm.chunks_exact(LANES);
    let (dr, fr) = (dc.remainder(), fc.remainder());
    for (d8, f8) in dc.zip(fc) {
        for k in 0..LANES {
            a[k] = fmin(a[k], d8[k]);
            b[k] = fmin(b[k], d8[k] + f8[k]);
        }
    }
    let mut m = a.iter().fold(R::INF, |x, &y| fmin(x, y));
    let mut mf = b.iter().fold(R::INF, |x, &y| fmin(x, y));
    for (&dj, &fj) in dr.iter().zip(fr) {
        m = fmin(m, dj);
        mf = fmin(mf, dj + fj);
    }
    (m, mf)
}

/// The first `j` with `d[j] == target` (`target` must occur).
#[inline(always)]
pub(super) fn find_at<R: Real>(d: &[R], target: R) -> usize {
    d.iter().position(|&dj| dj == target).unwrap_or(0)
}

/// The first unassigned `j` with `d[j] == target` (one must exist).
#[inline(always)]
pub(super) fn find_free_at<R: Real>(d: &[R], fm: &[R], target: R) -> usize {
    d.iter().zip(fm).position(|(&dj, &fj)| dj + fj == target).unwrap_or(0)
}

/// Relaxes every unscanned column through row `i`: `d[j] = min(d[j], c[i][j] - v[j] - h)`,
/// with `pred[j] = i` where it drops. Branch-free.
#[inline(always)]
pub(super) fn relax<R: Real>(row: &[f32], v: &[R], mask: &[R], h: R, i: u32, d: &mut [R], pred: &mut [u32]) {
    let n = d.len();
    let (row, v, mask, pred) = (&row[..n], &v[..n], &mask[..n], &mut pred[..n]);
    for j in 0..n {
        let cred = R::cost(row[j]) - v[j] - h + mask[j];
        let lt = cred < d[j];
        d[j] = if lt { cred } else { d[j] };
        pred[j] = if lt { i } else { pred[j] };
    }
}

// ---------------------------------------------------------------------------
// Row kernels. They work on `h_j = R::cost(row[j]) - v[j]` and are written as
// independent lanes over fixed-size chunks so that LLVM vectorises them
// (the scalar argmin loop is ~3x slower). Every kernel computes `h_j` with
// the same expression, so values are bitwise reproducible across kernels and
// `find_reduced` can locate a minimum by exact comparison.

pub(super) const LANES: usize = 8;

/// The lanes of the kernels that carry a column with each minimum: four, so that a lane
/// array of `f64` fills one AVX2 register.
pub(super) const FLANES: usize = 4;

#[inline(always)]
pub(super) fn fmin<R: Real>(a: R, b: R) -> R {
    if b < a { b } else { a }
}

#[inline(always)]
pub(super) fn fmax<R: Real>(a: R, b: R) -> R {
    if b > a { b } else { a }
}

/// `min_j R::cost(row[j]) - v[j]` (`+inf` for an empty or all-forbidden row).
#[inline(always)]
pub(super) fn min_reduced<R: Real>(row: &[f32], v: &[R]) -> R {
    let v = &v[..row.len()];
    let mut acc = [R::INF; LANES];
    let rc = row.chunks_exact(LANES);
    let vc = v.chunks_exact(LANES);
    let (rr, vr) = (rc.remainder(), vc.remainder());
    for (r8, v8) in rc.zip(vc) {
        for k in 0..LANES {
            acc[k] = fmin(acc[k], R::cost(r8[k]) - v8[k]);
        }
    }
    let mut m = acc.iter().fold(R::INF, |a, &b| fmin(a, b));
    for (&r, &vj) in rr.iter().zip(vr) {
        m = fmin(m, R::cost(r) - vj);
    }
    m
}

/// Whether a row holds a NaN or `+inf` weight (branch-free so that it
/// vectorises; run on a row just before it is scanned, while it is hot).
#[inline(always)]
pub(super) fn row_invalid(row: &[f32]) -> bool {
    let mut bad = 0u32;
    for &x in row {
        bad |= (x.is_nan() | (x == f32::INFINITY)) as u32;
    }
    bad != 0
}

/// The two smallest values (as a multiset) of `R::cost(row[j]) - v[j]`.
#[inline(always)]
pub(super) fn top2_reduced<R: Real>(row: &[f32], v: &[R]) -> (R, R) {
    let v = &v[..row.len()];
    let mut m1 = [R::INF; LANES];
    let mut m2 = [R::INF; LANES];
    let rc = row.chunks_exact(LANES);
    let vc = v.chunks_exact(LANES);
    let (rr, vr) = (rc.remainder(), vc.remainder());
    for (r8, v8) in rc.zip(vc) {
        for k in 0..LANES {
            let h = R::cost(r8[k]) - v8[k];
            let lt = h < m1[k];
            let hi = if lt { m1[k] } else { h };
            m1[k] = if lt { h } else { m1[k] };
            m2[k] = fmin(m2[k], hi);
        }
    }
    let (mut a, mut b) = reduce_top2(&mut m1, &mut m2);
    for (&r, &vj) in rr.iter().zip(vr) {
        let h = R::cost(r) - vj;
        b = fmin(b, fmax(a, h));
        a = fmin(a, h);
    }
    (a, b)
}

/// The two smallest values (as a multiset) of the lanes' pairs `(m1[k] <= m2[k])`, by a
/// tree reduction without branches: the two smallest of the union of the pairs
/// (a <= b) and (x <= y) are min(a, x) and min(b, y, max(a, x)). (A chain of
/// compare-and-branch pushes here cost more than the vector loop itself at n ~ 36.)
/// `L` is a power of two; the arrays are left as scratch.
#[inline(always)]
pub(super) fn reduce_top2<R: Real, const L: usize>(m1: &mut [R; L], m2: &mut [R; L]) -> (R, R) {
    let mut half = L;
    while half > 1 {
        half /= 2;
        for k in 0..half {
            let (x, y) = (m1[k + half], m2[k + half]);
            m2[k] = fmin(fmin(m2[k], y), fmax(m1[k], x));
            m1[k] = fmin(m1[k], x);
        }
    }
    (m1[0], m2[0])
}

/// First `j >= start` with `R::cost(row[j]) - v[j] == target`, else `row.len()`.
/// Tests a chunk at a time (vectorised) before locating the hit.
#[inline(always)]
pub(super) fn find_reduced<R: Real>(row: &[f32], v: &[R], start: usize, target: R) -> usize {
    let v = &v[..row.len()];
    let (r, vv) = (&row[start..], &v[start..]);
    let rc = r.chunks_exact(LANES);
    let vc = vv.chunks_exact(LANES);
    for (c, (r8, v8)) in rc.zip(vc).enumerate() {
        let mut hit = false;
        for k in 0..LANES {
            hit |= R::cost(r8[k]) - v8[k] == target;
        }
        if hit {
            for k in 0..LANES {
                if R::cost(r8[k]) - v8[k] == target {
                    return start + c * LANES + k;
                }
            }
        }
    }
    let tail = start + (r.len() / LANES) * LANES;
    (tail..row.len()).find(|&j| R::cost(row[j]) - v[j] == target).unwrap_or(row.len())
}

/// The two smallest values (as a multiset) of `R::cost(row[j]) - v[j]`, as
/// [`top2_reduced`] gives them, and the first `j` holding the smallest (as
/// [`find_reduced`] from 0 finds it; `0` when every value is `+inf`), in one pass.
#[inline(always)]
pub(super) fn top2_first_reduced<R: Real>(row: &[f32], v: &[R]) -> (R, R, usize) {
    let v = &v[..row.len()];
    let mut m1 = [R::INF; FLANES];
    let mut m2 = [R::INF; FLANES];
    // Each lane's first column at its minimum, and the lanes' columns in this chunk, held
    // as exact small numbers in `R` so that the blends vectorise with the values.
    let mut at = [R::ZERO; FLANES];
    let mut col: [R; FLANES] = std::array::from_fn(R::from_index);
    let step = R::from_index(FLANES);
    let rc = row.chunks_exact(FLANES);
    let vc = v.chunks_exact(FLANES);
    let (rr, vr) = (rc.remainder(), vc.remainder());
    for (rk, vk) in rc.zip(vc) {
        for k in 0..FLANES {
            let h = R::cost(rk[k]) - vk[k];
            let lt = h < m1[k];
            let hi = if lt { m1[k] } else { h };
            m1[k] = if lt { h } else { m1[k] };
            at[k] = if lt { col[k] } else { at[k] };
            m2[k] = fmin(m2[k], hi);
            col[k] += step;
        }
    }
    // The two values by `reduce_top2`. The first column at the minimum is the smallest
    // column of the lanes that hold it: a second fold, without branches.
    let a0 = m1.iter().fold(R::INF, |x, &y| fmin(x, y));
    let j0 = first_at(&m1, &at, a0);
    let (mut a, mut b) = reduce_top2(&mut m1, &mut m2);
    let mut j = if a < R::INF { j0 } else { 0 };
    let tail = row.len() - rr.len();
    for (t, (&r, &vj)) in rr.iter().zip(vr).enumerate() {
        let h = R::cost(r) - vj;
        b = fmin(b, fmax(a, h));
        if h < a {
            j = tail + t;
        }
        a = fmin(a, h);
    }
    (a, b, j)
}

/// The smallest column `at[k]` of the lanes whose value `m[k]` is `target`, without branches.
#[inline(always)]
pub(super) fn first_at<R: Real, const L: usize>(m: &[R; L], at: &[R; L], target: R) -> usize {
    let mut c = [R::INF; L];
    for k in 0..L {
        c[k] = if m[k] == target { at[k] } else { R::INF };
    }
    c.iter().fold(R::INF, |x, &y| fmin(x, y)).to_index()
}

/// Column minima of the cost matrix with (lowest) arg-row, as `f64` row
/// indices so that the update vectorises. Returns whether a NaN or `+inf`
/// weight was seen.
#[inline(always)]
pub(super) fn column_minima<R: Real>(n: usize, w: &[f32], colmin: &mut [R], argrow: &mut [R]) -> bool {
    let colmin = &mut colmin[..n];
    let argrow = &mut argrow[..n];
    colmin.fill(R::INF);
    argrow.fill(R::ZERO);
    let mut bad = false;
    for (i, row) in w.chunks_exact(n).enumerate() {
        let fi = R::from_index(i);
        bad |= row_invalid(row);
        for ((m, a), &wij) in colmin.iter_mut().zip(argrow.iter_mut()).zip(row) {
            let c = R::cost(wij);
            let lt = c < *m;
            *m = if lt { c } else { *m };
            *a = if lt { fi } else { *a };
        }
    }
    bad
}
