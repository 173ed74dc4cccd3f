//! The two projections of divide and concur, as plain-slice CPU code (the reference for any
//! other backend).
//!
//! - **Divide** projects each constraint's replica onto that constraint's set, independently:
//!   - cell and piece constraints: the nearest one-hot vector, at the argmax;
//!   - join `(c, c')`: the nearest pair `(e_i, e_j)` with `i` in `D(c)`, `j` in `D(c')`
//!     showing equal colours on the facing sides and naming different pieces, i.e. the
//!     compatible pair maximising `u[i] + w[j]`, found per colour from the best entry of
//!     each side among the candidates showing that colour (the best entry of a different
//!     piece covers the case where both bests name the same piece), in
//!     `O(|D(c)| + |D(c')| + K)`, using the per-side colour groups of [`Layout::side_groups`];
//!   - assignment (hybrid layout): the nearest permutation board, a max-weight assignment
//!     per border class ([`Layout::assign`]).
//!
//!   Each output is one-hot per constraint, so the result is stored sparsely as the chosen
//!   slots of each constraint ([`Layout::choice_range`]); [`expand`] writes it out densely.
//! - **Concur** replaces every replica of a variable by the (weighted) mean of all of them;
//!   [`concur`] returns the mean per variable, [`spread`] writes it back to every slot.

use super::layout::{AssignScratch, Constraint, Layout, argmax, argmax_reference, max_lanes};
use crate::assign::{AssignError, Assigner};
use crate::puzzle::opposite;

/// The first largest entry of a non-empty colour group (`idx`: indices into `z`, ascending):
/// the same entry as [`best_in_reference`] for every input (a NaN first entry wins, later
/// NaNs never do), in one pass without data-dependent branches. Four lanes each keep their
/// first largest entry by `v > b` (a `maxss` and a `cmov`); a group whose length is not a
/// multiple of four ends with one overlapping chunk of its last four entries (an entry seen
/// twice cannot change a lane's first largest entry, and every lane's positions still
/// increase). The lanes merge by value and, on ties, by the smaller index, which is the
/// earlier entry. Lanes start at -inf with no entry, so if every entry is -inf or NaN the
/// first one is the answer, as in the reference. (The reference's compare-and-swap
/// mispredicts about `ln n` times per group, and a second scan for the first entry equal to
/// the max mispredicts at its exit.) Groups shorter than eight take the reference loop: at 5x5,
/// where most are, the lanes and their merge cost more than the branches they remove.
#[inline(always)]
fn best_in(z: &[f32], idx: &[u32]) -> (f32, u32) {
    const L: usize = 4;
    const NONE: u32 = u32::MAX;
    let n = idx.len();
    if n < 2 * L {
        return best_in_reference(z, idx);
    }
    let i0 = idx[0];
    let v0 = z[i0 as usize];
    if v0.is_nan() {
        return (v0, i0);
    }
    let (mut b, mut at) = ([f32::NEG_INFINITY; L], [NONE; L]);
    let mut lanes = |ch: &[u32]| {
        for l in 0..L {
            let v = z[ch[l] as usize];
            let t = v > b[l];
            b[l] = if t { v } else { b[l] };
            at[l] = if t { ch[l] } else { at[l] };
        }
    };
    for ch in idx.chunks_exact(L) {
        lanes(ch);
    }
    if !n.is_multiple_of(L) {
        lanes(&idx[n - L..]);
    }
    let (mut bv, mut bi) = (b[0], at[0]);
    for l in 1..L {
        // `|` and `&`, not `||` and `&&`: selects, not branches.
        let t = (b[l] > bv) | ((b[l] == bv) & (at[l] < bi));
        bv = if t { b[l] } else { bv };
        bi = if t { at[l] } else { bi };
    }
    let bi = if bi == NONE { i0 } else { bi };
    (z[bi as usize], bi)
}

/// The reference twin of [`best_in`]: one running compare-and-swap.
#[inline]
fn best_in_reference(z: &[f32], idx: &[u32]) -> (f32, u32) {
    let mut at = idx[0];
    let mut best = z[at as usize];
    for &i in &idx[1..] {
        let v = z[i as usize];
        if v > best {
            best = v;
            at = i;
        }
    }
    (best, at)
}

/// The first largest entry of a colour group whose piece is not `exclude`, if any.
fn best_other_piece(z: &[f32], pieces: &[u32], idx: &[u32], exclude: u32) -> Option<(f32, u32)> {
    let mut out: Option<(f32, u32)> = None;
    for &i in idx {
        let v = z[i as usize];
        if pieces[i as usize] != exclude && out.is_none_or(|(b, _)| v > b) {
            out = Some((v, i));
        }
    }
    out
}

/// The join projection: the pair `(i, j)` (indices into `u` and `w`) maximising
/// `u[i] + w[j]` over pairs that show the same colour on the facing sides and name different
/// pieces. `groups_*` (`K + 1` offsets into `sorted_*`) list each side's candidates by the
/// colour they show on the facing side ([`Layout::side_groups`]); `pieces_*` are the
/// candidates' pieces. Per colour, the best entry of each side and the best of a different
/// piece settle it: if both bests name the same piece, one side takes its runner-up. Cost
/// `O(|u| + |w| + K)` (the runner-up scan runs only on such a clash). If no compatible pair
/// exists at all (only on a puzzle with no solution) it falls back to the argmax of each
/// side; `None` when a side is empty.
#[allow(clippy::too_many_arguments, reason = "the two sides of a join, each with its tables")]
pub fn project_join(
    u: &[f32],
    w: &[f32],
    pieces_u: &[u32],
    pieces_w: &[u32],
    groups_u: &[u32],
    groups_w: &[u32],
    sorted_u: &[u32],
    sorted_w: &[u32],
) -> Option<(usize, usize)> {
    join_with::<true>(best_in, argmax, u, w, pieces_u, pieces_w, groups_u, groups_w, sorted_u, sorted_w)
}

// Repeated on purpose: the reference twin takes the same arguments as its fast path, so that
// the tests call the two alike.
/// The reference twin of [`project_join`] (the per-group best and the fallback argmax by a
/// running compare-and-swap): the same pair for every input.
#[allow(clippy::too_many_arguments, reason = "the two sides of a join, each with its tables")]
pub fn project_join_reference(
    u: &[f32],
    w: &[f32],
    pieces_u: &[u32],
    pieces_w: &[u32],
    groups_u: &[u32],
    groups_w: &[u32],
    sorted_u: &[u32],
    sorted_w: &[u32],
) -> Option<(usize, usize)> {
    join_with::<false>(
        best_in_reference,
        argmax_reference,
        u,
        w,
        pieces_u,
        pieces_w,
        groups_u,
        groups_w,
        sorted_u,
        sorted_w,
    )
}

#[allow(clippy::too_many_arguments, reason = "the two sides of a join, each with its tables")]
#[inline(always)]
fn join_with<const PRUNE: bool>(
    best_in: impl Fn(&[f32], &[u32]) -> (f32, u32),
    argmax: impl Fn(&[f32]) -> Option<usize>,
    u: &[f32],
    w: &[f32],
    pieces_u: &[u32],
    pieces_w: &[u32],
    groups_u: &[u32],
    groups_w: &[u32],
    sorted_u: &[u32],
    sorted_w: &[u32],
) -> Option<(usize, usize)> {
    let mut best = f32::NEG_INFINITY;
    let mut pair: Option<(u32, u32)> = None;
    let consider = |best: &mut f32, pair: &mut Option<(u32, u32)>, v: f32, i: u32, j: u32| {
        if pair.is_none() || v > *best {
            *best = v;
            *pair = Some((i, j));
        }
    };
    // With PRUNE, a colour whose side-c best plus the largest value of side c' (`top_w`)
    // is below the best pair so far is skipped before its side-c' group is scanned: every
    // sum it could offer is at most that bound (rounding is monotonic; bu is the group's
    // largest non-NaN value unless it is NaN, and then the test is false), so `v > best`
    // would reject it. The pair found is the same (on the 8x8 runs of BENCHMARKS.md this
    // saved 7 % of the instructions of an iteration).
    let top_w = if PRUNE { max_lanes(w) } else { f32::INFINITY };
    for (gu, gw) in groups_u.windows(2).zip(groups_w.windows(2)) {
        if gu[0] == gu[1] || gw[0] == gw[1] {
            continue;
        }
        let (iu, iw) = (&sorted_u[gu[0] as usize..gu[1] as usize], &sorted_w[gw[0] as usize..gw[1] as usize]);
        let (bu, au) = best_in(u, iu);
        if PRUNE && pair.is_some() && bu + top_w < best {
            continue;
        }
        let (bw, aw) = best_in(w, iw);
        let piece = pieces_u[au as usize];
        if piece != pieces_w[aw as usize] {
            consider(&mut best, &mut pair, bu + bw, au, aw);
        } else {
            // Both bests name the same piece (rare): one side takes its best other piece.
            if let Some((v, j)) = best_other_piece(w, pieces_w, iw, piece) {
                consider(&mut best, &mut pair, bu + v, au, j);
            }
            if let Some((v, i)) = best_other_piece(u, pieces_u, iu, piece) {
                consider(&mut best, &mut pair, v + bw, i, aw);
            }
        }
    }
    match pair {
        Some((i, j)) => Some((i as usize, j as usize)),
        None => Some((argmax(u)?, argmax(w)?)),
    }
}

/// Per-worker scratch of the divide projections.
#[derive(Clone, Debug)]
pub struct DivideScratch {
    pub(crate) assign: AssignScratch,
    pub(crate) board: Vec<u32>,
}

impl DivideScratch {
    /// Scratch sized for `layout`.
    pub fn new(layout: &Layout) -> Self {
        DivideScratch { assign: layout.assign_scratch(), board: vec![0; layout.cells()] }
    }
}

/// Divide for one constraint: projects `z` (the constraint's slots, `layout.con_range(k)`)
/// and writes the chosen slots (absolute slot ids) into `out` (`layout.choice_range(k)`
/// long). `asg` (one solver per class) is used by the assignment constraint only.
pub fn divide_one(
    layout: &Layout,
    k: usize,
    z: &[f32],
    out: &mut [u32],
    scratch: &mut DivideScratch,
    asg: &mut [Assigner],
    warm: bool,
) -> Result<(), AssignError> {
    divide_one_with::<false>(layout, k, z, out, scratch, asg, warm)
}

/// The reference twin of [`divide_one`] (the argmax and join projections of
/// [`argmax_reference`] and [`project_join_reference`]): the same chosen slots for every
/// input.
pub fn divide_one_reference(
    layout: &Layout,
    k: usize,
    z: &[f32],
    out: &mut [u32],
    scratch: &mut DivideScratch,
    asg: &mut [Assigner],
    warm: bool,
) -> Result<(), AssignError> {
    divide_one_with::<true>(layout, k, z, out, scratch, asg, warm)
}

#[inline(always)]
fn divide_one_with<const REFERENCE: bool>(
    layout: &Layout,
    k: usize,
    z: &[f32],
    out: &mut [u32],
    scratch: &mut DivideScratch,
    asg: &mut [Assigner],
    warm: bool,
) -> Result<(), AssignError> {
    let base = layout.con_range(k).start as u32;
    let argmax = if REFERENCE { argmax_reference } else { argmax };
    let project_join = if REFERENCE { project_join_reference } else { project_join };
    match layout.constraint(k) {
        Constraint::Cell(_) | Constraint::Piece(_) => {
            if let (Some(i), Some(o)) = (argmax(z), out.first_mut()) {
                *o = base + i as u32;
            }
        }
        Constraint::Join(jn) => {
            let [c, d, s] = layout.joins()[jn];
            let (rc, rd) = (layout.cell_vars(c as usize), layout.cell_vars(d as usize));
            let (u, w) = z.split_at(rc.len());
            let (s, pieces, sorted) = (s as usize, layout.cand_piece(), layout.side_sorted());
            let pair = project_join(
                u,
                w,
                &pieces[rc.clone()],
                &pieces[rd],
                layout.side_groups(c as usize, s),
                layout.side_groups(d as usize, opposite(s)),
                sorted,
                sorted,
            );
            if let (Some((i, j)), [o0, o1]) = (pair, out) {
                *o0 = base + i as u32;
                *o1 = base + (rc.len() + j) as u32;
            }
        }
        Constraint::Assignment => {
            // The slots are the variables in order, so z is indexed by variable.
            layout.assign(z, &mut scratch.assign, asg, warm, &mut scratch.board)?;
            for (o, &j) in out.iter_mut().zip(&scratch.board) {
                *o = base + j;
            }
        }
    }
    Ok(())
}

/// Divide for every constraint: `z` is one trial's slots, `chosen` its chosen-slot array.
pub fn divide(
    layout: &Layout,
    z: &[f32],
    chosen: &mut [u32],
    scratch: &mut DivideScratch,
    asg: &mut [Assigner],
    warm: bool,
) -> Result<(), AssignError> {
    for k in 0..layout.constraints() {
        divide_one(layout, k, &z[layout.con_range(k)], &mut chosen[layout.choice_range(k)], scratch, asg, warm)?;
    }
    Ok(())
}

/// The reference twin of [`divide`] (see [`divide_one_reference`]).
pub fn divide_reference(
    layout: &Layout,
    z: &[f32],
    chosen: &mut [u32],
    scratch: &mut DivideScratch,
    asg: &mut [Assigner],
    warm: bool,
) -> Result<(), AssignError> {
    for k in 0..layout.constraints() {
        let (z, out) = (&z[layout.con_range(k)], &mut chosen[layout.choice_range(k)]);
        divide_one_reference(layout, k, z, out, scratch, asg, warm)?;
    }
    Ok(())
}

/// Writes a sparse divide projection out densely: 1 at every chosen slot, 0 elsewhere.
pub fn expand(chosen: &[u32], out: &mut [f32]) {
    out.iter_mut().for_each(|v| *v = 0.0);
    for &s in chosen {
        out[s as usize] = 1.0;
    }
}

/// Concur: the weighted mean of each variable's replicas, `out[j] = sum_s lambda_k(s) z[s] /
/// sum_s lambda_k(s)` over the slots `s` of variable `j` (`lambda` per constraint; `None` for
/// uniform weights).
pub fn concur(layout: &Layout, z: &[f32], lambda: Option<&[f32]>, out: &mut [f32]) {
    let (vs, vc) = (layout.var_slot(), layout.var_con());
    for (j, o) in out.iter_mut().enumerate() {
        let r = layout.var_range(j);
        let (mut num, mut den) = (0.0f32, 0.0f32);
        for (&s, &k) in vs[r.clone()].iter().zip(&vc[r]) {
            let l = lambda.map_or(1.0, |l| l[k as usize]);
            num += l * z[s as usize];
            den += l;
        }
        *o = if den > 0.0 { num / den } else { 0.0 };
    }
}

/// Writes per-variable values back to every slot: `out[s] = m[slot_var[s]]`.
pub fn spread(layout: &Layout, m: &[f32], out: &mut [f32]) {
    for (o, &j) in out.iter_mut().zip(layout.slot_var()) {
        *o = m[j as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dc::DcLayout;
    use crate::puzzle::Puzzle;
    use crate::puzzle::generate::puzzle;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random(n: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<f32> {
        (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
    }

    fn dist2(a: &[f32], b: &[f32]) -> f64 {
        a.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum()
    }

    /// Projects one constraint densely.
    fn project(l: &Layout, k: usize, z: &[f32], sc: &mut DivideScratch, asg: &mut [Assigner]) -> Vec<f32> {
        let mut ch = vec![0u32; l.choice_range(k).len()];
        divide_one(l, k, z, &mut ch, sc, asg, false).unwrap();
        let base = l.con_range(k).start;
        let mut out = vec![0.0; z.len()];
        for s in ch {
            out[s as usize - base] = 1.0;
        }
        out
    }

    /// Every point of constraint k's set, densely (small cases only).
    fn members(l: &Layout, k: usize, p: &Puzzle) -> Vec<Vec<f32>> {
        let len = l.con_range(k).len();
        let one = |i: usize| {
            let mut v = vec![0.0; len];
            v[i] = 1.0;
            v
        };
        match l.constraint(k) {
            Constraint::Cell(_) | Constraint::Piece(_) => (0..len).map(one).collect(),
            Constraint::Join(jn) => {
                let [c, d, s] = l.joins()[jn];
                let (rc, rd) = (l.cell_vars(c as usize), l.cell_vars(d as usize));
                let mut out = Vec::new();
                for i in rc.clone() {
                    for j in rd.clone() {
                        let ok = l.color(i, s as usize) == l.color(j, opposite(s as usize))
                            && l.cand_piece()[i] != l.cand_piece()[j];
                        if ok {
                            let mut v = one(i - rc.start);
                            v[rc.len() + j - rd.start] = 1.0;
                            out.push(v);
                        }
                    }
                }
                out
            }
            Constraint::Assignment => all_boards(l, p)
                .into_iter()
                .map(|b| {
                    let mut v = vec![0.0; len];
                    b.iter().for_each(|&j| v[j as usize] = 1.0);
                    v
                })
                .collect(),
        }
    }

    fn all_boards(l: &Layout, p: &Puzzle) -> Vec<Vec<u32>> {
        fn rec(l: &Layout, c: usize, cur: &mut Vec<u32>, used: &mut Vec<bool>, out: &mut Vec<Vec<u32>>) {
            if c == l.cells() {
                out.push(cur.clone());
                return;
            }
            for j in l.cell_vars(c) {
                let q = l.cand_piece()[j] as usize;
                if !used[q] {
                    used[q] = true;
                    cur[c] = j as u32;
                    rec(l, c + 1, cur, used, out);
                    used[q] = false;
                }
            }
        }
        let mut out = Vec::new();
        rec(l, 0, &mut vec![0; p.cells()], &mut vec![false; p.cells()], &mut out);
        out
    }

    #[test]
    fn each_divide_projection_is_idempotent_in_its_set_and_nearest() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for seed in 0..3 {
            let p = puzzle(3, 3, seed);
            for hybrid in [false, true] {
                let l = Layout::new(&p, DcLayout::from_hybrid(hybrid));
                let mut sc = DivideScratch::new(&l);
                let mut asg = l.assigners();
                for k in 0..l.constraints() {
                    let set = members(&l, k, &p);
                    assert!(!set.is_empty(), "constraint {k} has an empty set");
                    for _ in 0..4 {
                        let z = random(l.con_range(k).len(), &mut rng);
                        let y = project(&l, k, &z, &mut sc, &mut asg);
                        assert!(set.contains(&y), "{:?}: output not in the set", l.constraint(k));
                        assert_eq!(project(&l, k, &y, &mut sc, &mut asg), y, "{:?}: not idempotent", l.constraint(k));
                        let best = set.iter().map(|m| dist2(&z, m)).fold(f64::INFINITY, f64::min);
                        assert!(
                            (dist2(&z, &y) - best).abs() < 1e-4,
                            "{:?}: {} vs brute force {best}",
                            l.constraint(k),
                            dist2(&z, &y)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn join_projection_handles_a_shared_best_piece() {
        // Both sides' best is piece 7 (colour 1 facing); the runner-ups decide.
        let u = [0.9, 0.5, 0.1];
        let w = [0.8, 0.2, 0.7];
        let pu = [7, 3, 4];
        let pw = [7, 5, 6];
        // Colours 0..3: candidates 0 and 1 show colour 1, candidate 2 colour 2.
        let groups = [0, 0, 2, 3];
        let sorted = [0, 1, 2];
        // Colour 1: 0.9 + 0.2 (u best, w runner-up) vs 0.5 + 0.8; colour 2: 0.1 + 0.7.
        assert_eq!(project_join(&u, &w, &pu, &pw, &groups, &groups, &sorted, &sorted), Some((1, 0)));
        // Without the clash the bests pair up.
        assert_eq!(project_join(&u, &w, &pu, &[8, 5, 6], &groups, &groups, &sorted, &sorted), Some((0, 0)));
        // No compatible pair (disjoint colours): the per-side argmax.
        assert_eq!(project_join(&u, &w, &pu, &pw, &groups, &[0, 0, 0, 0], &sorted, &sorted), Some((0, 0)));
    }

    #[test]
    fn concur_is_the_per_variable_mean() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
        for hybrid in [false, true] {
            let p = puzzle(4, 4, 3);
            let l = Layout::new(&p, DcLayout::from_hybrid(hybrid));
            let z = random(l.slots(), &mut rng);
            let lambda: Vec<f32> = (0..l.constraints()).map(|_| rng.random_range(0.1f32..2.0)).collect();
            for weights in [None, Some(&lambda[..])] {
                let mut m = vec![0.0; l.vars()];
                concur(&l, &z, weights, &mut m);
                // Naive: walk the constraints and accumulate by slot_var.
                let (mut num, mut den) = (vec![0.0f64; l.vars()], vec![0.0f64; l.vars()]);
                for k in 0..l.constraints() {
                    let wk = weights.map_or(1.0, |w| w[k]) as f64;
                    for s in l.con_range(k) {
                        let j = l.slot_var()[s] as usize;
                        num[j] += wk * z[s] as f64;
                        den[j] += wk;
                    }
                }
                for j in 0..l.vars() {
                    assert!((m[j] as f64 - num[j] / den[j]).abs() < 1e-5);
                }
                // A projection: idempotent, and the consensus point is nearest (uniform).
                let mut spreaded = vec![0.0; l.slots()];
                spread(&l, &m, &mut spreaded);
                let mut m2 = vec![0.0; l.vars()];
                concur(&l, &spreaded, weights, &mut m2);
                assert!(m.iter().zip(&m2).all(|(a, b)| (a - b).abs() < 1e-5));
                if weights.is_none() {
                    let d = dist2(&z, &spreaded);
                    for _ in 0..20 {
                        let other: Vec<f32> = m.iter().map(|v| v + rng.random_range(-0.05f32..0.05)).collect();
                        let mut o = vec![0.0; l.slots()];
                        spread(&l, &other, &mut o);
                        assert!(dist2(&z, &o) >= d - 1e-6);
                    }
                }
            }
        }
    }

    #[test]
    fn a_planted_solution_is_fixed_by_divide_and_concur() {
        let (p, sol) =
            generate(&GenerateOptions { width: 4, height: 3, frame_colors: None, inner_colors: None, seed: 2 })
                .unwrap();
        for hybrid in [false, true] {
            let l = Layout::new(&p, DcLayout::from_hybrid(hybrid));
            let mut x = vec![0.0; l.vars()];
            for c in 0..p.cells() {
                let j = l.cell_vars(c).find(|&j| l.placement(j) == sol.cells[c]).unwrap();
                x[j] = 1.0;
            }
            let mut z = vec![0.0; l.slots()];
            spread(&l, &x, &mut z);
            let mut chosen = vec![0u32; l.choices()];
            divide(&l, &z, &mut chosen, &mut DivideScratch::new(&l), &mut l.assigners(), false).unwrap();
            let mut y = vec![0.0; l.slots()];
            expand(&chosen, &mut y);
            assert_eq!(y, z);
            let mut m = vec![0.0; l.vars()];
            concur(&l, &z, None, &mut m);
            assert_eq!(m, x);
        }
    }

    /// Values from a small set (ties between and within colour groups), now and then NaN or
    /// an infinity.
    fn tricky(rng: &mut Xoshiro256PlusPlus, odd: bool) -> f32 {
        match rng.random_range(0u32..40) {
            0 if odd => f32::NAN,
            1 if odd => f32::INFINITY,
            2 if odd => f32::NEG_INFINITY,
            3 => -0.0,
            4..20 => rng.random_range(0u8..5) as f32 * 0.25,
            _ => rng.random_range(-1.0f32..1.0),
        }
    }

    #[test]
    fn fast_divide_is_the_reference_divide() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut cases = 0;
        for (w, h, seed) in [(3, 3, 0), (4, 3, 1), (5, 5, 2), (7, 4, 3), (6, 6, 4), (8, 8, 5)] {
            let p = puzzle(w, h, seed);
            for hybrid in [false, true] {
                let l = Layout::new(&p, DcLayout::from_hybrid(hybrid));
                let (mut sc, mut asg) = (DivideScratch::new(&l), l.assigners());
                let (mut a, mut b) = (vec![0u32; l.choices()], vec![0u32; l.choices()]);
                for rep in 0..30 {
                    // NaNs only in the plain layout: the assignment rejects them either way.
                    let odd = !hybrid && rep % 3 == 0;
                    let z: Vec<f32> = (0..l.slots()).map(|_| tricky(&mut rng, odd)).collect();
                    let ra = divide(&l, &z, &mut a, &mut sc, &mut asg, false);
                    let rb = divide_reference(&l, &z, &mut b, &mut sc, &mut asg, false);
                    assert_eq!(ra.is_ok(), rb.is_ok());
                    assert_eq!(a, b, "{w}x{h} hybrid {hybrid} rep {rep}");
                    cases += 1;
                }
            }
        }
        assert_eq!(cases, 360);
    }

    #[test]
    fn fast_join_projection_is_the_reference_on_random_tables() {
        // Random sides with random colour groups and pieces (clashes included), and
        // unequal sides.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
        for _ in 0..3000 {
            let (nu, nw, k) = (rng.random_range(0usize..30), rng.random_range(0usize..30), rng.random_range(1usize..6));
            let side = |n: usize, rng: &mut Xoshiro256PlusPlus| {
                let col: Vec<usize> = (0..n).map(|_| rng.random_range(0..k)).collect();
                let mut groups = vec![0u32; k + 1];
                col.iter().for_each(|&c| groups[c + 1] += 1);
                (1..=k).for_each(|c| groups[c] += groups[c - 1]);
                let mut sorted = vec![0u32; n];
                let mut fill = groups.clone();
                for (i, &c) in col.iter().enumerate() {
                    sorted[fill[c] as usize] = i as u32;
                    fill[c] += 1;
                }
                let z: Vec<f32> = (0..n).map(|_| tricky(rng, true)).collect();
                let pieces: Vec<u32> = (0..n).map(|_| rng.random_range(0u32..4)).collect();
                (z, pieces, groups, sorted)
            };
            let (u, pu, gu, su) = side(nu, &mut rng);
            let (w, pw, gw, sw) = side(nw, &mut rng);
            assert_eq!(
                project_join(&u, &w, &pu, &pw, &gu, &gw, &su, &sw),
                project_join_reference(&u, &w, &pu, &pw, &gu, &gw, &su, &sw),
                "{u:?} {w:?} {pu:?} {pw:?} {gu:?} {gw:?}"
            );
        }
    }
}
