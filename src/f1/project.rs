//! The projections, as plain-slice CPU code: the reference every other backend is checked
//! against (ARCHITECTURE.md §4).
//!
//! F1 state `x[c][s][k]`, flat at `(c * 4 + s) * K + k`: for each side of each cell a vector
//! over the K colours (grey included).
//! - [`F1::project_edges`], P_E: the two sides of every interior join become their average;
//!   rim sides become `e_0`.
//! - [`F1::project_edges_one_color`], P_E1: both sides of a join become the one-hot of the
//!   argmax of their sum (non-convex variant); rim sides `e_0`.
//! - [`F1::project_pieces`], P_P: `W[c][p] = max over allowed r of sum_s x[c][s][colour(p,r,s)]`,
//!   then a maximum-weight assignment of pieces to cells, then embed the board. Corner, edge
//!   and inner cells never share pieces, so this is three independent assignments.

mod lanes;

pub use lanes::{LANES, LaneSideTable, LaneVec};

use crate::assign::{AssignError, Assigner, Precision, Real, WarmState};
use crate::puzzle::{Class, DOWN, Placement, Puzzle, RIGHT, cell_class, opposite, piece_class};

/// Which edge projection the map uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum EdgeProjection {
    /// P_E: average the two sides of each join (convex).
    #[default]
    Average,
    /// P_E1: one colour per join, the argmax of the two sides' sum (non-convex).
    OneColor,
}

/// One class of cells (corner, edge or inner) with its pieces: an independent assignment.
#[derive(Clone, Debug)]
struct ClassTable {
    /// Cells of the class: row `i` of the assignment is cell `cells[i]`.
    cells: Vec<u32>,
    /// The weights' tables, by group: a group is the candidates of one (cell, piece) pair,
    /// its rotations, padded to `rots` entries so that the inner loop has a fixed length.
    groups: Groups,
}

/// The candidates of a class grouped by (cell, piece), for [`F1::piece_weights_into`].
///
/// Row `i`'s groups are `row_off[i]..row_off[i + 1]`; group `g` is column `col[g]` and its
/// candidates are `first[g]..first[g] + len[g]`. A row is *whole* when each of its groups
/// holds every distinct rotation of its piece (an inner cell without a hint): then the group
/// is stored as the piece's four colours and all four rotations are summed (a symmetric
/// piece repeats a picture, which cannot change a maximum). Otherwise each group is stored as
/// its candidates' rotated colours, the last repeated up to `rots`. A row's colour quadruples
/// start at `quad_off[i]`.
#[derive(Clone, Debug, Default)]
struct Groups {
    rots: usize,
    row_off: Vec<u32>,
    row_whole: Vec<bool>,
    quad_off: Vec<u32>,
    quads: Vec<[u8; 4]>,
    col: Vec<u16>,
    first: Vec<u32>,
    len: Vec<u8>,
    /// Per entry `i * n + col` of the class block: its group, or `u32::MAX` (no candidate).
    of_entry: Vec<u32>,
}

/// A cell of a class: the class, the cell's row `i` in it, the cell, the class's size `n` and
/// where its block starts in the flat weight array.
#[derive(Clone, Copy, Debug)]
struct ClassCell {
    class: usize,
    i: usize,
    cell: usize,
    n: usize,
    off: usize,
}

/// Static F1 tables for one puzzle, shared by every trial.
#[derive(Clone, Debug)]
pub struct F1 {
    cells: usize,
    colors: usize,
    /// Interior joins as pairs of side slots `(c * 4 + s, m * 4 + opposite(s))`.
    joins: Vec<(u32, u32)>,
    /// Rim side slots `c * 4 + s`.
    rim: Vec<u32>,
    classes: Vec<ClassTable>,
    /// Candidates of cell `c`: `cand_off[c]..cand_off[c + 1]` of the arrays below.
    cand_off: Vec<u32>,
    /// Assignment column of the candidate: its piece's index within the class.
    cand_col: Vec<u16>,
    /// Offsets into x of the four colours the candidate shows, `(c * 4 + s) * K + colour`.
    cand_idx: Vec<[u32; 4]>,
    cand_colors: Vec<[u8; 4]>,
    cand_place: Vec<Placement>,
}

/// A weighted metric between the constraint classes (Elser's weighted projections): each
/// side slot `c * 4 + s` of a join between two frame cells weighs `w[0]`, of a join between a
/// frame and an inner cell `w[1]`, of a join between two inner cells `w[2]`; rim slots weigh 1.
///
/// In F1 such a metric changes only P_P. Both sides of a join weigh the same, so P_E (the
/// average of the two, rim slots fixed to grey) is its own weighted twin. P_P minimises
/// `sum_slot d_slot |r_slot - e_slot|^2`, and every board is one-hot on every slot, so it
/// picks the board that maximises `sum_slot d_slot r_slot . e_slot`: the unweighted
/// assignment on `D r` ([`F1::weigh_slots`]). Rim slots add the same to every candidate of
/// their cell (all show grey there), so their weight cannot matter.
pub fn join_slot_weights(puzzle: &Puzzle, w: [f32; 3]) -> Vec<f32> {
    let (wd, ht) = (puzzle.width(), puzzle.height());
    let inner = |c: usize| usize::from(cell_class(wd, ht, c) == Class::Inner);
    (0..puzzle.cells() * 4)
        .map(|slot| {
            let (c, s) = (slot / 4, slot % 4);
            match puzzle.neighbour(c, s) {
                Some(m) => w[inner(c) + inner(m)],
                None => 1.0,
            }
        })
        .collect()
}

/// Per-worker scratch for [`F1::project_pieces`]: the flat weights and their argmax
/// candidates (layout: [`F1::weight_len`]).
#[derive(Clone, Debug)]
pub struct PieceScratch {
    weights: Vec<f32>,
    best: Vec<u32>,
    sides: SideTable,
}

/// The flat F1 tables of the GPU kernels, shared by every trial.
#[derive(Clone, Debug)]
pub struct F1Tables {
    /// Per side slot `c * 4 + s`: the facing side slot, or `u32::MAX` on the rim.
    pub partner: Vec<u32>,
    /// Per flat weight entry: its candidates are `pc_cand[pc_off[e]..pc_off[e + 1]]`.
    pub pc_off: Vec<u32>,
    /// The candidates of every flat weight entry, back to back (see `pc_off`).
    pub pc_cand: Vec<u32>,
    /// Per candidate, the four offsets into x of the colours it shows.
    pub cand_idx: Vec<u32>,
    /// Interior joins as (cell, facing cell, side of the first cell), flat.
    pub joins: Vec<u32>,
}

/// Per-trial assignment state: one warm-startable solver per class, in one precision.
#[derive(Clone, Debug)]
pub struct Assigners(Solvers);

#[derive(Clone, Debug)]
enum Solvers {
    F64(Vec<Assigner>),
    F32(Vec<Assigner<f32>>),
}

impl Assigners {
    /// Per class (corner, edge, inner: the non-empty ones), its size and what its solver did.
    pub fn stats(&self) -> Vec<(usize, crate::assign::AssignStats)> {
        match &self.0 {
            Solvers::F64(v) => v.iter().map(|a| (a.n(), *a.stats())).collect(),
            Solvers::F32(v) => v.iter().map(|a| (a.n(), *a.stats())).collect(),
        }
    }

    /// The precision of the solvers' reduced costs.
    pub fn precision(&self) -> Precision {
        match &self.0 {
            Solvers::F64(_) => Precision::F64,
            Solvers::F32(_) => Precision::F32,
        }
    }

    /// What each class's solver carries to its next solve (its warm start), in class order.
    pub fn warm_states(&self) -> Vec<WarmState> {
        match &self.0 {
            Solvers::F64(v) => crate::assign::warm_states(v),
            Solvers::F32(v) => crate::assign::warm_states(v),
        }
    }

    /// Puts every class's solver in its saved state ([`Assigners::warm_states`] of solvers of
    /// the same puzzle and precision); refused, with nothing changed, when they do not fit.
    pub fn set_warm_states(&mut self, states: &[WarmState]) -> Result<(), String> {
        match &mut self.0 {
            Solvers::F64(v) => crate::assign::set_warm_states(v, states),
            Solvers::F32(v) => crate::assign::set_warm_states(v, states),
        }
    }
}

impl F1 {
    /// Builds the tables. Fails when some class has no perfect assignment at all (no
    /// board fits the rim), which no iteration could repair.
    pub fn new(puzzle: &Puzzle) -> Result<Self, AssignError> {
        let (w, h, n, k) = (puzzle.width(), puzzle.height(), puzzle.cells(), puzzle.num_colors());
        let cands = puzzle.candidates();
        let mut joins = Vec::new();
        let mut rim = Vec::new();
        for c in 0..n {
            for s in 0..4 {
                match puzzle.neighbour(c, s) {
                    Some(m) if s == RIGHT || s == DOWN => {
                        joins.push(((c * 4 + s) as u32, (m * 4 + opposite(s)) as u32))
                    }
                    Some(_) => {}
                    None => rim.push((c * 4 + s) as u32),
                }
            }
        }
        let class_of = |cl: Class| match cl {
            Class::Corner => 0usize,
            Class::Edge => 1,
            Class::Inner => 2,
        };
        let mut classes = vec![ClassTable { cells: Vec::new(), groups: Groups::default() }; 3];
        let mut col_of_piece = vec![0u32; n];
        let mut piece_count = [0u32; 3];
        for (p, &q) in puzzle.pieces().iter().enumerate() {
            let cl = class_of(piece_class(q).expect("validated puzzle"));
            col_of_piece[p] = piece_count[cl];
            piece_count[cl] += 1;
        }
        for c in 0..n {
            classes[class_of(cell_class(w, h, c))].cells.push(c as u32);
        }
        let mut cand_off = vec![0u32];
        let (mut cand_col, mut cand_idx, mut cand_colors, mut cand_place) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for c in 0..n {
            for (pl, q) in cands.of(c).iter().zip(cands.colors_of(c)) {
                cand_col.push(col_of_piece[pl.piece as usize] as u16);
                cand_idx.push(core::array::from_fn(|s| ((c * 4 + s) * k + q[s] as usize) as u32));
                cand_colors.push(*q);
                cand_place.push(*pl);
            }
            cand_off.push(cand_col.len() as u32);
        }
        let mut classes: Vec<ClassTable> = classes.into_iter().filter(|t| !t.cells.is_empty()).collect();
        for t in &mut classes {
            t.groups = Groups::new(&t.cells, &cand_off, &cand_col, &cand_colors, &cand_place, puzzle.pieces());
        }
        let f1 = F1 { cells: n, colors: k, joins, rim, classes, cand_off, cand_col, cand_idx, cand_colors, cand_place };
        // Feasibility: a zero state must have a perfect assignment in every class.
        let zero = vec![0.0f32; f1.dim()];
        let mut scratch = f1.piece_scratch();
        let mut asg = f1.assigners();
        let mut board = vec![0u32; n];
        f1.decode_pieces(&zero, &mut scratch, &mut asg, &mut board, false)?;
        Ok(f1)
    }

    /// Floats per trial: cells x 4 sides x K colours.
    pub fn dim(&self) -> usize {
        self.cells * 4 * self.colors
    }
    /// Colours K, grey included.
    pub fn colors(&self) -> usize {
        self.colors
    }
    /// Cells of the board.
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Scratch for [`F1::project_pieces`], sized for this puzzle.
    pub fn piece_scratch(&self) -> PieceScratch {
        PieceScratch {
            weights: vec![0.0; self.weight_len()],
            best: vec![0; self.weight_len()],
            sides: SideTable::default(),
        }
    }

    /// One solver per class, in `f64` (the reference).
    pub fn assigners(&self) -> Assigners {
        self.assigners_in(Precision::F64)
    }

    /// One solver per class, with reduced costs in the given precision.
    pub fn assigners_in(&self, precision: Precision) -> Assigners {
        let sizes = self.classes.iter().map(|t| t.cells.len());
        Assigners(match precision {
            Precision::F64 => Solvers::F64(sizes.map(Assigner::new).collect()),
            Precision::F32 => Solvers::F32(sizes.map(Assigner::new_f32).collect()),
        })
    }

    /// P_E: average each interior join, rim sides to `e_0`.
    pub fn project_edges(&self, x: &[f32], out: &mut [f32]) {
        let k = self.colors;
        for &(a, b) in &self.joins {
            let (a, b) = (a as usize * k, b as usize * k);
            for i in 0..k {
                let m = 0.5 * (x[a + i] + x[b + i]);
                out[a + i] = m;
                out[b + i] = m;
            }
        }
        self.rim_to_grey(out);
    }

    /// P_E1: each join takes the one colour that maximises the sum of its two sides.
    pub fn project_edges_one_color(&self, x: &[f32], out: &mut [f32]) {
        let k = self.colors;
        for &(a, b) in &self.joins {
            let (a, b) = (a as usize * k, b as usize * k);
            let mut best = 0;
            let mut best_v = f32::NEG_INFINITY;
            for i in 0..k {
                let v = x[a + i] + x[b + i];
                if v > best_v {
                    best_v = v;
                    best = i;
                }
            }
            for i in 0..k {
                let v = if i == best { 1.0 } else { 0.0 };
                out[a + i] = v;
                out[b + i] = v;
            }
        }
        self.rim_to_grey(out);
    }

    /// `r = 2 P_E(x) - x` in one pass, bit for bit what [`F1::project_edges`] followed by
    /// `2 p - x` gives (the map's reflection, without the intermediate picture).
    pub fn reflect_edges(&self, x: &[f32], r: &mut [f32]) {
        self.reflect_into(x, r, |_| 1.0);
    }

    /// [`F1::reflect_edges`] followed by [`F1::weigh_slots`] with the slot weights `d`, in one
    /// pass and bit for bit the same (each value is formed, then multiplied by its slot's
    /// weight): the weighted metric's reflection, as P_P reads it.
    pub fn reflect_edges_weighted(&self, x: &[f32], r: &mut [f32], d: &[f32]) {
        self.reflect_into(x, r, |slot| d[slot]);
    }

    /// `r = (2 P_E(x) - x) * weight(slot)` per slot (a weight of 1.0 multiplies exactly).
    #[inline(always)]
    fn reflect_into(&self, x: &[f32], r: &mut [f32], weight: impl Fn(usize) -> f32) {
        let k = self.colors;
        for &(a, b) in &self.joins {
            let (wa, wb) = (weight(a as usize), weight(b as usize));
            // Whole K-slices (one bounds check each) so that the colour loop vectorises; the
            // facing slot always comes later (right or down neighbour).
            let (a, b) = (a as usize * k, b as usize * k);
            let (ra, rb) = r.split_at_mut(b);
            let (ra, rb) = (&mut ra[a..a + k], &mut rb[..k]);
            let (xa, xb) = (&x[a..a + k], &x[b..b + k]);
            for i in 0..k {
                let m = 0.5 * (xa[i] + xb[i]);
                ra[i] = (2.0 * m - xa[i]) * wa;
                rb[i] = (2.0 * m - xb[i]) * wb;
            }
        }
        for &s in &self.rim {
            let (o, ws) = (s as usize * k, weight(s as usize));
            // P_E is e_0 on the rim: 2 * 1 - x and 2 * 0 - x, the latter written as the
            // reference computes it (0 - x, which is +0 for x = +0, where -x would be -0).
            let (ro, xo) = (&mut r[o..o + k], &x[o..o + k]);
            for (ri, &xi) in ro.iter_mut().zip(xo) {
                *ri = (0.0 - xi) * ws;
            }
            ro[0] = (2.0 - xo[0]) * ws;
        }
    }

    /// `x -= beta P_E(x)` in place, bit for bit the reference's `x - beta * p` with
    /// `p = P_E(x)` computed first (each join's mean is taken before either side moves).
    pub fn subtract_edges(&self, beta: f32, x: &mut [f32]) {
        let k = self.colors;
        for &(a, b) in &self.joins {
            let (a, b) = (a as usize * k, b as usize * k);
            let (xa, xb) = x.split_at_mut(b);
            let (xa, xb) = (&mut xa[a..a + k], &mut xb[..k]);
            for i in 0..k {
                let m = 0.5 * (xa[i] + xb[i]);
                xa[i] -= beta * m;
                xb[i] -= beta * m;
            }
        }
        for &s in &self.rim {
            // x - beta * 0 is x, bit for bit (also for -0): only the grey entry moves.
            x[s as usize * k] -= beta * 1.0;
        }
    }

    /// Multiplies every side slot's K-slice of `x` by its weight `d[slot]` (`d` from
    /// [`join_slot_weights`]): the state P_P reads under a weighted metric.
    pub fn weigh_slots(&self, d: &[f32], x: &mut [f32]) {
        let k = self.colors;
        debug_assert_eq!(d.len() * k, x.len());
        for (xs, &w) in x.chunks_exact_mut(k).zip(d) {
            xs.iter_mut().for_each(|v| *v *= w);
        }
    }

    /// `out = D x` in one pass: [`F1::weigh_slots`] of a copy of `x`, bit for bit.
    pub fn weigh_slots_into(&self, d: &[f32], x: &[f32], out: &mut [f32]) {
        let k = self.colors;
        debug_assert_eq!((d.len() * k, x.len()), (out.len(), out.len()));
        for ((os, xs), &w) in out.chunks_exact_mut(k).zip(x.chunks_exact(k)).zip(d) {
            os.iter_mut().zip(xs).for_each(|(o, &v)| *o = v * w);
        }
    }

    /// Applies the chosen edge projection.
    pub fn project_edges_with(&self, kind: EdgeProjection, x: &[f32], out: &mut [f32]) {
        match kind {
            EdgeProjection::Average => self.project_edges(x, out),
            EdgeProjection::OneColor => self.project_edges_one_color(x, out),
        }
    }

    fn rim_to_grey(&self, out: &mut [f32]) {
        let k = self.colors;
        for &r in &self.rim {
            let o = r as usize * k;
            out[o..o + k].iter_mut().for_each(|v| *v = 0.0);
            out[o] = 1.0;
        }
    }

    /// Entries of the flat weight array of one trial: `sum over classes of n_class^2`. Class
    /// `t` (corner, edge, inner, the non-empty ones in that order) is the row-major
    /// `n_t x n_t` block at [`F1::weight_offsets`]`[t]`: row `i` is the class's `i`-th cell,
    /// column `p` its `p`-th piece.
    pub fn weight_len(&self) -> usize {
        self.classes.iter().map(|t| t.cells.len() * t.cells.len()).sum()
    }

    /// Start of each class's block in the flat weight array, plus the total at the end.
    pub fn weight_offsets(&self) -> Vec<usize> {
        let mut off = vec![0];
        for t in &self.classes {
            off.push(off.last().copied().unwrap_or(0) + t.cells.len() * t.cells.len());
        }
        off
    }

    /// The cells of each class, in row order.
    pub fn class_cells(&self) -> Vec<Vec<u32>> {
        self.classes.iter().map(|t| t.cells.clone()).collect()
    }

    /// The weights of P_P: `w[e] = max over the candidates (piece, r) of the entry's cell
    /// of sum_s z[c][s][colour]` (-inf where the piece is no candidate), and in `best[e]`
    /// the first candidate reaching it. Flat layout: see [`F1::weight_len`].
    ///
    /// This is the plain reference; the map runs [`F1::piece_weights_into`], which gives the
    /// same weights bit for bit without the per-entry argmax.
    pub fn piece_weights(&self, z: &[f32], w: &mut [f32], best: &mut [u32]) {
        let k = self.colors;
        let mut off = 0;
        for table in &self.classes {
            let n = table.cells.len();
            let wts = &mut w[off..off + n * n];
            let bst = &mut best[off..off + n * n];
            wts.iter_mut().for_each(|v| *v = f32::NEG_INFINITY);
            for (i, &c) in table.cells.iter().enumerate() {
                let c = c as usize;
                let row = &mut wts[i * n..(i + 1) * n];
                let brow = &mut bst[i * n..(i + 1) * n];
                // The cell's 4K floats stay in L1; candidates are read as 4 colour bytes.
                let xc = &z[c * 4 * k..(c + 1) * 4 * k];
                let (up, rest) = xc.split_at(k);
                let (right, rest) = rest.split_at(k);
                let (down, left) = rest.split_at(k);
                let range = self.cand_off[c] as usize..self.cand_off[c + 1] as usize;
                for ((j, q), &col) in range.clone().zip(&self.cand_colors[range.clone()]).zip(&self.cand_col[range]) {
                    let v = up[q[0] as usize] + right[q[1] as usize] + down[q[2] as usize] + left[q[3] as usize];
                    let col = col as usize;
                    if v > row[col] {
                        row[col] = v;
                        brow[col] = j as u32;
                    }
                }
            }
            off += n * n;
        }
    }

    /// The weights of [`F1::piece_weights`], bit for bit, without `best`: per (cell, piece)
    /// group, the maximum over its rotations, written once.
    /// - The cell's `4 x K` floats are first transposed into `K` quadruples (one per colour,
    ///   its four sides), so that a piece costs four 16-byte loads indexed by its colour
    ///   bytes, with no bounds check (the table has 256 entries).
    /// - There is no data-dependent branch (the reference's `if v > row[col]` mispredicts
    ///   on every other candidate).
    /// - Each sum is formed as `((up + right) + down) + left`, as in the reference, so the
    ///   values are identical.
    ///
    /// The argmax candidate is found afterwards, for the chosen entries only
    /// ([`F1::entries_to_candidates`]).
    pub fn piece_weights_into(&self, z: &[f32], w: &mut [f32], sides: &mut SideTable) {
        let k = self.colors;
        let y = &mut sides.0;
        let mut off = 0;
        for table in &self.classes {
            let n = table.cells.len();
            let wts = &mut w[off..off + n * n];
            let g = &table.groups;
            for (i, &c) in table.cells.iter().enumerate() {
                let c = c as usize;
                let xc = &z[c * 4 * k..(c + 1) * 4 * k];
                let (up, rest) = xc.split_at(k);
                let (right, rest) = rest.split_at(k);
                let (down, left) = rest.split_at(k);
                for (q, (((&u, &r), &d), &l)) in y.iter_mut().zip(up.iter().zip(right).zip(down).zip(left)) {
                    *q = [u, r, d, l];
                }
                let row = &mut wts[i * n..(i + 1) * n];
                row.fill(f32::NEG_INFINITY);
                let groups = g.row_off[i] as usize..g.row_off[i + 1] as usize;
                let cols = &g.col[groups.clone()];
                let q0 = g.quad_off[i] as usize;
                if g.row_whole[i] {
                    whole_piece_maxima(y, &g.quads[q0..q0 + groups.len()], cols, row);
                } else {
                    let quads = &g.quads[q0..q0 + groups.len() * g.rots];
                    match g.rots {
                        1 => placement_maxima::<1>(y, quads, cols, row),
                        2 => placement_maxima::<2>(y, quads, cols, row),
                        _ => placement_maxima::<4>(y, quads, cols, row),
                    }
                }
            }
            off += n * n;
        }
    }

    /// The first candidate of a class's entry (row `i`, column `col`) reaching its weight
    /// (the `best` of [`F1::piece_weights`]), from the same `z`.
    #[cfg(test)]
    fn entry_candidate(&self, z: &[f32], class: usize, i: usize, col: usize) -> u32 {
        self.entry_candidate_by(|e| z[e], class, i, col)
    }

    /// [`F1::entry_candidate`] of the state whose entry `e` is `z(e)`.
    #[inline(always)]
    fn entry_candidate_by(&self, z: impl Fn(usize) -> f32, class: usize, i: usize, col: usize) -> u32 {
        let table = &self.classes[class];
        let g = &table.groups;
        let gi = g.of_entry[i * table.cells.len() + col] as usize;
        let c = table.cells[i] as usize;
        let k = self.colors;
        let (up, right, down, left) = (c * 4 * k, (c * 4 + 1) * k, (c * 4 + 2) * k, (c * 4 + 3) * k);
        let first = g.first[gi] as usize;
        let mut best = first;
        let mut best_v = f32::NEG_INFINITY;
        for (j, q) in self.cand_colors[first..first + g.len[gi] as usize].iter().enumerate() {
            let v =
                z(up + q[0] as usize) + z(right + q[1] as usize) + z(down + q[2] as usize) + z(left + q[3] as usize);
            if v > best_v {
                best_v = v;
                best = first + j;
            }
        }
        best as u32
    }

    /// The assignment part of P_P: one max-weight assignment per class over flat weights
    /// (see [`F1::piece_weights`]). Writes, per cell, the chosen entry of the flat array into
    /// `entry`.
    pub fn assign_entries(
        &self,
        w: &[f32],
        asg: &mut Assigners,
        entry: &mut [u32],
        warm: bool,
    ) -> Result<(), AssignError> {
        match &mut asg.0 {
            Solvers::F64(v) => self.assign_classes(w, v, entry, warm),
            Solvers::F32(v) => self.assign_classes(w, v, entry, warm),
        }
    }

    fn assign_classes<R: Real>(
        &self,
        w: &[f32],
        solvers: &mut [Assigner<R>],
        entry: &mut [u32],
        warm: bool,
    ) -> Result<(), AssignError> {
        let mut off = 0;
        for (table, solver) in self.classes.iter().zip(solvers) {
            let n = table.cells.len();
            let wts = &w[off..off + n * n];
            if n <= crate::assign::ENUMERATE_MAX {
                solver.solve_enumerate(wts)?
            } else if warm {
                solver.solve_warm(wts)?
            } else {
                solver.solve(wts)?
            };
            for (i, &col) in solver.row_to_col().iter().enumerate() {
                entry[table.cells[i] as usize] = (off + i * n + col as usize) as u32;
            }
            off += n * n;
        }
        Ok(())
    }

    /// The board part of P_P: weights, then one assignment per class. Writes the chosen
    /// candidate (a global candidate id) of every cell into `board`.
    pub fn decode_pieces(
        &self,
        x: &[f32],
        scratch: &mut PieceScratch,
        asg: &mut Assigners,
        board: &mut [u32],
        warm: bool,
    ) -> Result<(), AssignError> {
        self.piece_weights_into(x, &mut scratch.weights, &mut scratch.sides);
        self.assign_entries(&scratch.weights, asg, board, warm)?;
        self.entries_to_candidates(x, board);
        Ok(())
    }

    /// Turns the flat weight entries [`F1::assign_entries`] wrote per cell into the
    /// candidates reaching them (the argmax rotation, first on ties).
    pub fn entries_to_candidates(&self, x: &[f32], board: &mut [u32]) {
        self.entries_to_candidates_by(|e| x[e], board);
    }

    /// [`F1::entries_to_candidates`] of the state whose entry `e` is `z(e)`.
    #[inline(always)]
    fn entries_to_candidates_by(&self, z: impl Fn(usize) -> f32 + Copy, board: &mut [u32]) {
        for cell in self.cells_by_class() {
            self.entry_to_candidate(z, cell, board);
        }
    }

    /// Every cell of every class, in the flat weight array's order.
    fn cells_by_class(&self) -> impl Iterator<Item = ClassCell> + '_ {
        let mut off = 0;
        self.classes.iter().enumerate().flat_map(move |(class, table)| {
            let (n, first) = (table.cells.len(), off);
            off += n * n;
            table.cells.iter().enumerate().map(move |(i, &c)| ClassCell { class, i, cell: c as usize, n, off: first })
        })
    }

    /// Turns `board[cell]`, an entry of the flat weight array, into the candidate reaching it.
    #[inline(always)]
    fn entry_to_candidate(&self, z: impl Fn(usize) -> f32, at: ClassCell, board: &mut [u32]) {
        let e = board[at.cell] as usize - at.off;
        debug_assert_eq!(e / at.n, at.i);
        board[at.cell] = self.entry_candidate_by(z, at.class, at.i, e % at.n);
    }

    /// [`F1::decode_pieces`] on the reference weights ([`F1::piece_weights`]), cold, for
    /// tests: the board of candidate ids, in a vector of its own.
    pub fn decode_pieces_reference(&self, x: &[f32], asg: &mut Assigners) -> Result<Vec<u32>, AssignError> {
        let mut scratch = self.piece_scratch();
        let mut board = vec![0u32; self.cells];
        self.piece_weights(x, &mut scratch.weights, &mut scratch.best);
        self.assign_entries(&scratch.weights, asg, &mut board, false)?;
        for e in board.iter_mut() {
            *e = scratch.best[*e as usize];
        }
        Ok(board)
    }

    /// The flat tables the GPU kernels read (see shaders/f1.wgsl).
    pub fn gpu_tables(&self) -> F1Tables {
        let mut partner = vec![u32::MAX; self.cells * 4];
        for &(a, b) in &self.joins {
            partner[a as usize] = b;
            partner[b as usize] = a;
        }
        let mut pc_off = vec![0u32];
        let mut pc_cand = Vec::new();
        for table in &self.classes {
            let n = table.cells.len();
            for &c in &table.cells {
                let range = self.cand_off[c as usize]..self.cand_off[c as usize + 1];
                for col in 0..n {
                    pc_cand.extend(range.clone().filter(|&j| self.cand_col[j as usize] as usize == col));
                    pc_off.push(pc_cand.len() as u32);
                }
            }
        }
        let joins = self.joins.iter().flat_map(|&(a, b)| [a / 4, b / 4, a % 4]).collect();
        F1Tables { partner, pc_off, pc_cand, cand_idx: self.cand_idx.iter().flatten().copied().collect(), joins }
    }

    /// Embeds a board (candidate ids per cell) as its one-hot colour picture.
    pub fn embed(&self, board: &[u32], out: &mut [f32]) {
        out.iter_mut().for_each(|v| *v = 0.0);
        for &j in board {
            for &i in &self.cand_idx[j as usize] {
                out[i as usize] = 1.0;
            }
        }
    }

    /// P_P: nearest board picture (decode, then embed).
    pub fn project_pieces(
        &self,
        x: &[f32],
        out: &mut [f32],
        scratch: &mut PieceScratch,
        asg: &mut Assigners,
        board: &mut [u32],
        warm: bool,
    ) -> Result<(), AssignError> {
        self.decode_pieces(x, scratch, asg, board, warm)?;
        self.embed(board, out);
        Ok(())
    }

    /// The x offsets of the four colours candidate `j` shows (for sparse updates).
    #[inline]
    pub fn candidate_slots(&self, j: u32) -> &[u32; 4] {
        &self.cand_idx[j as usize]
    }

    /// One update of the adaptive join weights (the driver's `AdaptiveWeights`) after the
    /// board `board`: each interior join's two slots of `w` move to
    /// `min(w0 + (1 - decay) (w - w0) + rate w0 [unmatched], max w0)`, `w0` its slot of `base`.
    /// Rim slots are left as they are.
    pub fn adapt_join_weights(&self, board: &[u32], base: &[f32], w: &mut [f32], rate: f32, decay: f32, max: f32) {
        for &(a, b) in &self.joins {
            let (a, b) = (a as usize, b as usize);
            let unmatched =
                self.cand_colors[board[a / 4] as usize][a % 4] != self.cand_colors[board[b / 4] as usize][b % 4];
            let w0 = base[a];
            let bump = if unmatched { rate * w0 } else { 0.0 };
            let v = (w0 + (1.0 - decay) * (w[a] - w0) + bump).min(max * w0);
            w[a] = v;
            w[b] = v;
        }
    }

    /// Matched interior joins of a board given as candidate ids.
    pub fn score(&self, board: &[u32]) -> usize {
        self.joins
            .iter()
            .filter(|&&(a, b)| {
                let (a, b) = (a as usize, b as usize);
                self.cand_colors[board[a / 4] as usize][a % 4] == self.cand_colors[board[b / 4] as usize][b % 4]
            })
            .count()
    }

    /// Every candidate's sum `sum_s z[c][s][colour]` (the value P_P weighs it by), in
    /// candidate-id order: cell by cell, each cell's candidates as `Puzzle::candidates` lists
    /// them.
    pub fn candidate_sums(&self, z: &[f32], out: &mut [f32]) {
        let k = self.colors;
        for c in 0..self.cells {
            let xc = &z[c * 4 * k..(c + 1) * 4 * k];
            let (up, rest) = xc.split_at(k);
            let (right, rest) = rest.split_at(k);
            let (down, left) = rest.split_at(k);
            let r = self.cand_off[c] as usize..self.cand_off[c + 1] as usize;
            for (o, q) in out[r.clone()].iter_mut().zip(&self.cand_colors[r]) {
                *o = up[q[0] as usize] + right[q[1] as usize] + down[q[2] as usize] + left[q[3] as usize];
            }
        }
    }

    /// Candidates of all cells together (the length of [`F1::candidate_sums`]).
    pub fn candidates_total(&self) -> usize {
        self.cand_col.len()
    }

    /// The candidate id of placement `pl` at cell `c`, if it is a candidate there.
    pub fn candidate_id(&self, c: usize, pl: Placement) -> Option<u32> {
        (self.cand_off[c]..self.cand_off[c + 1]).find(|&j| self.cand_place[j as usize] == pl)
    }

    /// Whether `j` is a candidate id of cell `c` (a board read from outside is checked with
    /// it before any table is indexed by its ids).
    pub fn is_candidate_of(&self, c: usize, j: u32) -> bool {
        c < self.cells && (self.cand_off[c]..self.cand_off[c + 1]).contains(&j)
    }

    /// The placements of a board given as candidate ids.
    pub fn placements(&self, board: &[u32]) -> Vec<Placement> {
        board.iter().map(|&j| self.cand_place[j as usize]).collect()
    }
}

/// Per-worker scratch of [`F1::piece_weights_into`]: one cell's floats by colour, each
/// colour's four sides together (256 entries, so a colour byte indexes it unchecked).
#[derive(Clone, Debug)]
pub struct SideTable(Box<[[f32; 4]; 256]>);

impl Default for SideTable {
    fn default() -> Self {
        SideTable(Box::new([[0.0; 4]; 256]))
    }
}

/// Whole rows: per group, the largest of the four rotations of a piece with colours
/// `(a, b, c, d)` (up, right, down, left unturned). Turned `r` times, side `s` shows colour
/// `p[(s - r) mod 4]` (see [`crate::puzzle::rotated`]).
#[inline(always)]
fn whole_piece_maxima(y: &[[f32; 4]; 256], quads: &[[u8; 4]], cols: &[u16], row: &mut [f32]) {
    for (q, &col) in quads.iter().zip(cols) {
        let (a, b, c, d) = (y[q[0] as usize], y[q[1] as usize], y[q[2] as usize], y[q[3] as usize]);
        let r0 = a[0] + b[1] + c[2] + d[3];
        let r1 = d[0] + a[1] + b[2] + c[3];
        let r2 = c[0] + d[1] + a[2] + b[3];
        let r3 = b[0] + c[1] + d[2] + a[3];
        let m01 = if r1 > r0 { r1 } else { r0 };
        let m23 = if r3 > r2 { r3 } else { r2 };
        row[col as usize] = if m23 > m01 { m23 } else { m01 };
    }
}

/// Other rows: per group, the largest of its `R` candidates, given as rotated colours.
#[inline(always)]
fn placement_maxima<const R: usize>(y: &[[f32; 4]; 256], quads: &[[u8; 4]], cols: &[u16], row: &mut [f32]) {
    for (q, &col) in quads.chunks_exact(R).zip(cols) {
        let mut m = f32::NEG_INFINITY;
        for q in q {
            let v = y[q[0] as usize][0] + y[q[1] as usize][1] + y[q[2] as usize][2] + y[q[3] as usize][3];
            m = if v > m { v } else { m };
        }
        row[col as usize] = m;
    }
}

impl Groups {
    fn new(
        cells: &[u32],
        cand_off: &[u32],
        cand_col: &[u16],
        cand_colors: &[[u8; 4]],
        cand_place: &[Placement],
        pieces: &[crate::puzzle::Piece],
    ) -> Self {
        let n = cells.len();
        // The groups of a cell, as candidate ranges: candidates come piece by piece,
        // rotations in order (Puzzle::candidates).
        let groups_of = |c: u32| {
            let r = cand_off[c as usize] as usize..cand_off[c as usize + 1] as usize;
            let mut out = Vec::new();
            let mut j = r.start;
            while j < r.end {
                let e = (j..r.end).find(|&e| cand_col[e] != cand_col[j]).unwrap_or(r.end);
                out.push(j..e);
                j = e;
            }
            out
        };
        let distinct_rotations = |p: crate::puzzle::Piece| {
            (0..4u8).filter(|&r| (0..r).all(|r0| crate::puzzle::rotated(p, r0) != crate::puzzle::rotated(p, r))).count()
        };
        let whole = |c: u32| {
            groups_of(c).iter().all(|g| {
                let piece = pieces[cand_place[g.start].piece as usize];
                g.len() == distinct_rotations(piece)
            })
        };
        // The padded length of the other rows' groups: 1, 2 or 4.
        let longest = cells.iter().filter(|&&c| !whole(c)).flat_map(|&c| groups_of(c)).map(|g| g.len()).max();
        let rots = match longest.unwrap_or(1) {
            0 | 1 => 1,
            2 => 2,
            _ => 4,
        };
        let mut g = Groups { rots, row_off: vec![0], of_entry: vec![u32::MAX; n * n], ..Default::default() };
        for (i, &c) in cells.iter().enumerate() {
            let is_whole = whole(c);
            g.row_whole.push(is_whole);
            g.quad_off.push(g.quads.len() as u32);
            for r in groups_of(c) {
                let col = cand_col[r.start];
                g.of_entry[i * n + col as usize] = g.col.len() as u32;
                g.col.push(col);
                g.first.push(r.start as u32);
                g.len.push(r.len() as u8);
                if is_whole {
                    g.quads.push(pieces[cand_place[r.start].piece as usize]);
                } else {
                    for t in 0..rots {
                        g.quads.push(cand_colors[r.start + t.min(r.len() - 1)]);
                    }
                }
            }
            g.row_off.push(g.col.len() as u32);
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::puzzle;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random_x(dim: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<f32> {
        (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect()
    }

    fn dist2(a: &[f32], b: &[f32]) -> f64 {
        a.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum()
    }

    #[test]
    fn edge_projection_is_idempotent_in_set_and_nearest() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for seed in 0..8 {
            let p = puzzle(3 + seed as usize % 3, 3, seed);
            let f1 = F1::new(&p).unwrap();
            let x = random_x(f1.dim(), &mut rng);
            let mut pe = vec![0.0; f1.dim()];
            let mut pe2 = vec![0.0; f1.dim()];
            f1.project_edges(&x, &mut pe);
            f1.project_edges(&pe, &mut pe2);
            assert_eq!(pe, pe2, "idempotent");
            let k = f1.colors();
            for &(a, b) in &f1.joins {
                assert_eq!(pe[a as usize * k..(a as usize + 1) * k], pe[b as usize * k..(b as usize + 1) * k]);
            }
            // Nearest: no random point of E is closer to x.
            let d = dist2(&x, &pe);
            for _ in 0..200 {
                let mut e = random_x(f1.dim(), &mut rng);
                for &(a, b) in &f1.joins {
                    let (a, b) = (a as usize * k, b as usize * k);
                    for i in 0..k {
                        e[b + i] = e[a + i];
                    }
                }
                f1.rim_to_grey(&mut e);
                assert!(dist2(&x, &e) >= d - 1e-9);
            }
        }
    }

    #[test]
    fn one_color_projection_matches_brute_force() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let p = puzzle(3, 3, 4);
        let f1 = F1::new(&p).unwrap();
        let k = f1.colors();
        for _ in 0..20 {
            let x = random_x(f1.dim(), &mut rng);
            let mut pe = vec![0.0; f1.dim()];
            f1.project_edges_one_color(&x, &mut pe);
            let mut again = vec![0.0; f1.dim()];
            f1.project_edges_one_color(&pe, &mut again);
            assert_eq!(pe, again, "idempotent");
            // Joins are independent: per join, the best colour by brute force.
            for &(a, b) in &f1.joins {
                let (a, b) = (a as usize * k, b as usize * k);
                let cost = |col: usize| -> f64 {
                    (0..k)
                        .map(|i| {
                            let t = if i == col { 1.0 } else { 0.0 };
                            ((x[a + i] - t) as f64).powi(2) + ((x[b + i] - t) as f64).powi(2)
                        })
                        .sum()
                };
                let best = (0..k).map(cost).fold(f64::INFINITY, f64::min);
                let got = (0..k).find(|&i| pe[a + i] == 1.0).unwrap();
                assert!((cost(got) - best).abs() < 1e-6);
            }
        }
    }

    /// All boards of a tiny puzzle that respect the candidate lists, as candidate ids.
    fn all_boards(f1: &F1) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        let mut cur = vec![0u32; f1.cells];
        let mut used = vec![false; f1.cells];
        fn rec(f1: &F1, c: usize, cur: &mut Vec<u32>, used: &mut Vec<bool>, out: &mut Vec<Vec<u32>>) {
            if c == f1.cells {
                out.push(cur.clone());
                return;
            }
            for j in f1.cand_off[c]..f1.cand_off[c + 1] {
                let p = f1.cand_place[j as usize].piece as usize;
                if !used[p] {
                    used[p] = true;
                    cur[c] = j;
                    rec(f1, c + 1, cur, used, out);
                    used[p] = false;
                }
            }
        }
        rec(f1, 0, &mut cur, &mut used, &mut out);
        out
    }

    /// The least `dist` from a point to the pictures of `boards`.
    fn nearest(f1: &F1, boards: &[Vec<u32>], dist: impl Fn(&[f32]) -> f64) -> f64 {
        let mut e = vec![0.0; f1.dim()];
        boards
            .iter()
            .map(|b| {
                f1.embed(b, &mut e);
                dist(&e)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// A generated 3x3 puzzle, its tables and every board of it (for brute force).
    fn tiny(seed: u64) -> (Puzzle, F1, Vec<Vec<u32>>) {
        let p = puzzle(3, 3, seed);
        let f1 = F1::new(&p).unwrap();
        let boards = all_boards(&f1);
        assert!(boards.len() >= 24);
        (p, f1, boards)
    }

    #[test]
    fn piece_projection_is_nearest_board_by_brute_force() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for seed in 0..3 {
            let (_, f1, boards) = tiny(seed);
            let (mut scratch, mut asg, mut board) = (f1.piece_scratch(), f1.assigners(), vec![0u32; f1.cells]);
            let mut y = vec![0.0; f1.dim()];
            for round in 0..10 {
                let x = random_x(f1.dim(), &mut rng);
                f1.project_pieces(&x, &mut y, &mut scratch, &mut asg, &mut board, round % 2 == 1).unwrap();
                let d = dist2(&x, &y);
                let best = nearest(&f1, &boards, |e| dist2(&x, e));
                assert!((d - best).abs() < 1e-4, "P_P distance {d} vs brute force {best}");
                // Idempotent and in the set: a board picture projects to itself.
                let mut y2 = vec![0.0; f1.dim()];
                let mut board2 = vec![0u32; f1.cells];
                f1.project_pieces(&y, &mut y2, &mut scratch, &mut asg, &mut board2, false).unwrap();
                assert_eq!(y, y2);
                assert_eq!(y.iter().filter(|&&v| v == 1.0).count(), 4 * f1.cells);
            }
        }
    }

    #[test]
    fn adaptive_weights_grow_on_unmatched_joins_decay_on_matched_and_stay_capped() {
        let p = puzzle(5, 5, 3);
        let f1 = F1::new(&p).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let x = random_x(f1.dim(), &mut rng);
        let (mut scratch, mut asg, mut board) = (f1.piece_scratch(), f1.assigners(), vec![0u32; f1.cells()]);
        f1.decode_pieces(&x, &mut scratch, &mut asg, &mut board, false).unwrap();
        let base = join_slot_weights(&p, [1.0, 1.0, 4.0]);
        let unmatched = |a: usize, b: usize| {
            f1.cand_colors[board[a / 4] as usize][a % 4] != f1.cand_colors[board[b / 4] as usize][b % 4]
        };
        let (rate, decay, max) = (0.5f32, 0.1f32, 2.0f32);
        let mut w = base.clone();
        // Three updates with the same board: an unmatched join gains rate w0 (1 + (1-decay) +
        // (1-decay)^2) over its class weight, capped at max w0; a matched one stays.
        for _ in 0..3 {
            f1.adapt_join_weights(&board, &base, &mut w, rate, decay, max);
        }
        let mut grew = 0;
        for &(a, b) in &f1.joins {
            let (a, b) = (a as usize, b as usize);
            let w0 = base[a];
            let want = if unmatched(a, b) { (w0 + rate * w0 * (1.0 + 0.9 + 0.81)).min(max * w0) } else { w0 };
            assert!((w[a] - want).abs() <= 1e-5 * want && w[a] == w[b], "join {a}-{b}: {} vs {want}", w[a]);
            grew += usize::from(unmatched(a, b));
        }
        assert!(grew > 0 && grew < f1.joins.len(), "a random board has matched and unmatched joins");
        for &s in &f1.rim {
            assert_eq!(w[s as usize], base[s as usize], "rim slots keep their weight");
        }
        // A matched join with excess weight decays by the fraction `decay`.
        let &(a, b) = f1.joins.iter().find(|&&(a, b)| !unmatched(a as usize, b as usize)).unwrap();
        let (a, b) = (a as usize, b as usize);
        w[a] = 1.5 * base[a];
        f1.adapt_join_weights(&board, &base, &mut w, rate, decay, max);
        assert!((w[a] - base[a] * (1.0 + 0.9 * 0.5)).abs() <= 1e-5 * w[a] && w[b] == w[a]);
    }

    #[test]
    fn join_slot_weights_follow_the_classes_of_both_cells() {
        let p = puzzle(5, 4, 1);
        let d = join_slot_weights(&p, [2.0, 3.0, 5.0]);
        let count = |w: f32| d.iter().filter(|&&x| x == w).count();
        // 5x4: 14 frame cells, 6 inner (3 x 2). Joins: frame-frame 14 (the frame's cycle),
        // frame-inner 10, inner-inner 7; two slots each; 18 rim slots.
        assert_eq!((count(2.0), count(3.0), count(5.0), count(1.0)), (28, 20, 14, 18));
    }

    #[test]
    fn weighted_piece_projection_is_the_nearest_board_in_the_weighted_metric() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        for seed in 0..3 {
            let (p, f1, boards) = tiny(seed);
            let k = f1.colors();
            let (mut scratch, mut asg, mut board) = (f1.piece_scratch(), f1.assigners(), vec![0u32; f1.cells]);
            let mut e = vec![0.0; f1.dim()];
            for round in 0..10 {
                let w = [rng.random_range(0.2f32..3.0), rng.random_range(0.2f32..3.0), 1.0];
                let d = join_slot_weights(&p, w);
                let wdist = |x: &[f32], y: &[f32]| -> f64 {
                    x.chunks(k).zip(y.chunks(k)).zip(&d).map(|((a, b), &ws)| ws as f64 * dist2(a, b)).sum()
                };
                let x = random_x(f1.dim(), &mut rng);
                let mut dx = x.clone();
                f1.weigh_slots(&d, &mut dx);
                f1.decode_pieces(&dx, &mut scratch, &mut asg, &mut board, round % 2 == 1).unwrap();
                f1.embed(&board, &mut e);
                let got = wdist(&x, &e);
                let best = nearest(&f1, &boards, |e| wdist(&x, e));
                assert!((got - best).abs() < 1e-4, "weights {w:?}: weighted P_P distance {got} vs brute force {best}");
            }
        }
    }

    /// A generated puzzle, optionally with its planted solution's first `hints` cells given
    /// as hints (clue puzzles).
    fn puzzle_with_hints(w: usize, h: usize, seed: u64, hints: usize) -> Puzzle {
        let (p, sol) =
            generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed }).unwrap();
        let mut seen = vec![false; w * h];
        let hs = (0..w * h)
            .map(|c| (c * 7 + seed as usize) % (w * h))
            .filter(|&c| !std::mem::replace(&mut seen[c], true))
            .take(hints)
            .map(|c| crate::puzzle::Hint { cell: c, piece: sol.cells[c].piece as usize, rot: sol.cells[c].rot })
            .collect();
        Puzzle::new(w, h, p.pieces().to_vec(), hs).unwrap()
    }

    /// The fast weights equal the reference's bit for bit, and the candidates they decode to
    /// are the reference's argmax candidates, on random states with ties mixed in.
    fn fast_weights_match_reference(w: usize, h: usize, seed: u64, hints: usize) {
        let p = puzzle_with_hints(w, h, seed, hints);
        let f1 = F1::new(&p).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut scratch = f1.piece_scratch();
        let mut fast = vec![0.0f32; f1.weight_len()];
        for round in 0..4 {
            let mut x = random_x(f1.dim(), &mut rng);
            if round % 2 == 1 {
                // Coarse values make many rotations tie.
                x.iter_mut().for_each(|v| *v = (*v * 2.0).round() * 0.5);
            }
            f1.piece_weights(&x, &mut scratch.weights, &mut scratch.best);
            f1.piece_weights_into(&x, &mut fast, &mut scratch.sides);
            assert_eq!(
                scratch.weights.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                fast.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{w}x{h} seed {seed} hints {hints}"
            );
            // Every finite entry decodes to the reference's argmax.
            let offs = f1.weight_offsets();
            for (t, table) in f1.classes.iter().enumerate() {
                let n = table.cells.len();
                for i in 0..n {
                    for col in 0..n {
                        let e = offs[t] + i * n + col;
                        if fast[e] > f32::NEG_INFINITY {
                            assert_eq!(f1.entry_candidate(&x, t, i, col), scratch.best[e], "entry {e}");
                        }
                    }
                }
            }
            // And whole decodes agree.
            let (mut a1, mut a2) = (f1.assigners(), f1.assigners());
            let mut b1 = vec![0u32; f1.cells];
            f1.decode_pieces(&x, &mut scratch, &mut a1, &mut b1, false).unwrap();
            assert_eq!(b1, f1.decode_pieces_reference(&x, &mut a2).unwrap());
        }
    }

    /// [`LANES`] random states back to back; `coarse`: on a grid of halves (ties) with signed
    /// zeros among them.
    fn lane_states(dim: usize, rng: &mut Xoshiro256PlusPlus, coarse: bool) -> Vec<f32> {
        let mut z: Vec<f32> = (0..LANES).flat_map(|_| random_x(dim, rng)).collect();
        if coarse {
            z.iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v = if i % 7 == 0 { [0.0, -0.0][i % 2] } else { (*v * 2.0).round() * 0.5 });
        }
        z
    }

    /// The lanes' weights ([`F1::piece_weights_minor`]) are each lane's one-trial weights bit
    /// for bit, with the lanes' states all different, coarse (ties) or not, signed zeros
    /// among them.
    fn lane_weights_match_one_trial(w: usize, h: usize, seed: u64, hints: usize) {
        let p = puzzle_with_hints(w, h, seed, hints);
        let f1 = F1::new(&p).unwrap();
        let (dim, wl) = (f1.dim(), f1.weight_len());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x1a7e);
        let mut scratch = f1.piece_scratch();
        let mut lanes = LaneSideTable::default();
        let mut one = vec![0.0f32; wl];
        let mut w_lanes = vec![0.0f32; LANES * wl];
        for round in 0..3 {
            let z = lane_states(dim, &mut rng, round == 1);
            let mut zl = vec![LaneVec::ZERO; dim];
            f1.to_lanes(std::array::from_fn(|l| &z[l * dim..(l + 1) * dim]), &mut zl);
            f1.piece_weights_minor(&zl, &mut w_lanes, &mut lanes);
            for l in 0..LANES {
                f1.piece_weights_into(&z[l * dim..(l + 1) * dim], &mut one, &mut scratch.sides);
                assert_eq!(
                    bits(&w_lanes[l * wl..(l + 1) * wl]),
                    bits(&one),
                    "{w}x{h} seed {seed} hints {hints} lane {l}"
                );
            }
        }
    }

    /// The lanes' reflection ([`F1::reflect_edges_lanes`], trial-minor), the weights of it
    /// ([`F1::piece_weights_minor`]) and their candidates
    /// ([`F1::entries_to_candidates_lane`]) are each lane's one-trial ones bit for bit:
    /// lanes unweighted, with the class weights and with uneven slot weights side by side,
    /// on states all different, coarse (ties) or not, signed zeros among them.
    fn lane_reflections_match_one_trial(w: usize, h: usize, seed: u64, hints: usize) {
        let p = puzzle_with_hints(w, h, seed, hints);
        let f1 = F1::new(&p).unwrap();
        let (dim, wl) = (f1.dim(), f1.weight_len());
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x2e9f);
        let class_w = join_slot_weights(&p, [1.0, 2.5, 0.75]);
        let uneven: Vec<f32> = (0..p.cells() * 4).map(|_| rng.random_range(0.25f32..3.0)).collect();
        let mut scratch = f1.piece_scratch();
        let mut lanes = LaneSideTable::default();
        let (mut r_one, mut w_one) = (vec![0.0f32; dim], vec![0.0f32; wl]);
        let mut r = vec![LaneVec::ZERO; dim];
        let mut w_lanes = vec![0.0f32; LANES * wl];
        for round in 0..3 {
            let z = lane_states(dim, &mut rng, round == 1);
            let ds: [Option<&[f32]>; LANES] = match round {
                0 => [None, Some(&class_w), Some(&uneven), None],
                1 => [Some(&uneven), None, Some(&class_w), Some(&class_w)],
                _ => [None; LANES],
            };
            let xs = std::array::from_fn(|l| &z[l * dim..(l + 1) * dim]);
            let mut xl = vec![LaneVec::ZERO; dim];
            f1.to_lanes(xs, &mut xl);
            f1.reflect_edges_lanes(&xl, ds, &mut r);
            f1.piece_weights_minor(&r, &mut w_lanes, &mut lanes);
            let flat: &[f32] = wide::bytemuck::cast_slice(&r);
            for l in 0..LANES {
                let what = format!("{w}x{h} seed {seed} hints {hints} round {round} lane {l}");
                match ds[l] {
                    Some(d) => f1.reflect_edges_weighted(xs[l], &mut r_one, d),
                    None => f1.reflect_edges(xs[l], &mut r_one),
                }
                let lane: Vec<f32> = (0..dim).map(|e| flat[e * LANES + l]).collect();
                assert_eq!(bits(&lane), bits(&r_one), "reflection, {what}");
                f1.piece_weights_into(&r_one, &mut w_one, &mut scratch.sides);
                assert_eq!(bits(&w_lanes[l * wl..(l + 1) * wl]), bits(&w_one), "weights, {what}");
                let mut asg = f1.assigners();
                let mut entries = vec![0u32; f1.cells];
                f1.assign_entries(&w_one, &mut asg, &mut entries, false).unwrap();
                let mut one = entries.clone();
                f1.entries_to_candidates(&r_one, &mut one);
                // Lane l's candidates, with the lanes after it alongside (same entries).
                let mut lanes_b: Vec<Vec<u32>> = vec![entries; LANES];
                let mut boards: [Option<&mut [u32]>; LANES] = Default::default();
                for (k, (b, v)) in boards.iter_mut().zip(&mut lanes_b).enumerate() {
                    *b = (k >= l).then_some(&mut v[..]);
                }
                f1.entries_to_candidates_lanes(&r, &mut boards);
                assert_eq!(lanes_b[l], one, "candidates, {what}");
                // The state's lane, and the step of the lanes that move.
                let mut back = vec![0.0f32; dim];
                f1.lane_state(&xl, l, &mut back);
                assert_eq!(bits(&back), bits(xs[l]), "to_lanes and back, {what}");
            }
            let moving = [round != 1, true, false, round != 0];
            let mut stepped = xl.clone();
            f1.subtract_edges_lanes(0.7, &mut stepped, moving);
            for l in 0..LANES {
                let (mut one, mut lane) = (xs[l].to_vec(), vec![0.0f32; dim]);
                if moving[l] {
                    f1.subtract_edges(0.7, &mut one);
                }
                f1.lane_state(&stepped, l, &mut lane);
                assert_eq!(bits(&lane), bits(&one), "{w}x{h} seed {seed} round {round}: the step, lane {l}");
                f1.set_lane_state(&mut stepped, l, xs[(l + 1) % LANES]);
                f1.lane_state(&stepped, l, &mut lane);
                assert_eq!(bits(&lane), bits(xs[(l + 1) % LANES]), "set_lane_state");
            }
        }
    }

    #[test]
    fn fast_weights_match_the_reference_on_squares_rectangles_and_clues() {
        for (w, h) in [(2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (8, 8), (2, 5), (3, 7), (7, 4), (12, 6)] {
            for seed in 0..3 {
                fast_weights_match_reference(w, h, seed, 0);
                fast_weights_match_reference(w, h, seed, 1 + seed as usize * 2);
                lane_weights_match_one_trial(w, h, seed, 0);
                lane_weights_match_one_trial(w, h, seed, 1 + seed as usize * 2);
                lane_reflections_match_one_trial(w, h, seed, 0);
                lane_reflections_match_one_trial(w, h, seed, 1 + seed as usize * 2);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]
        #[test]
        fn fast_weights_match_the_reference_on_random_puzzles(
            w in 2usize..9, h in 2usize..9, seed in 0u64..10_000, hints in 0usize..4
        ) {
            fast_weights_match_reference(w, h, seed, hints);
            lane_weights_match_one_trial(w, h, seed, hints);
        }
    }

    #[test]
    fn fused_edge_passes_match_the_composed_reference_bit_for_bit() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        for (w, h, seed) in [(3, 3, 1), (5, 5, 2), (8, 8, 3), (7, 4, 4), (2, 6, 5)] {
            let f1 = F1::new(&puzzle(w, h, seed)).unwrap();
            for round in 0..5 {
                let mut x = random_x(f1.dim(), &mut rng);
                if round == 0 {
                    // Signed zeros and exact values.
                    x.iter_mut().enumerate().for_each(|(i, v)| *v = [0.0, -0.0, 1.0, -1.0][i % 4]);
                }
                let mut pe = vec![0.0; f1.dim()];
                f1.project_edges(&x, &mut pe);
                let reference: Vec<f32> = pe.iter().zip(&x).map(|(p, x)| 2.0 * p - x).collect();
                let mut r = vec![0.0; f1.dim()];
                f1.reflect_edges(&x, &mut r);
                assert_eq!(bits(&r), bits(&reference));
                let d = join_slot_weights(&puzzle(w, h, seed), [1.5, 0.75, 4.0]);
                let mut weighed = r.clone();
                f1.weigh_slots(&d, &mut weighed);
                let mut rw = vec![0.0; f1.dim()];
                f1.reflect_edges_weighted(&x, &mut rw, &d);
                assert_eq!(bits(&rw), bits(&weighed), "the fused weighted reflection");
                let mut into = vec![0.0; f1.dim()];
                f1.weigh_slots_into(&d, &r, &mut into);
                assert_eq!(bits(&into), bits(&weighed), "the weighed copy");
                let beta = 0.7f32;
                let stepped: Vec<f32> = x.iter().zip(&pe).map(|(x, p)| x - beta * p).collect();
                let mut y = x.clone();
                f1.subtract_edges(beta, &mut y);
                assert_eq!(bits(&y), bits(&stepped));
            }
        }
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }
}
