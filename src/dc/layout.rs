//! The replica layout of divide and concur (ARCHITECTURE.md §4, F2): which replica slots exist, which
//! constraint owns each, and which variable each one copies.
//!
//! - **Variables** `0..V` are the candidates of `Puzzle::candidates()`, in its global order:
//!   cell `c` owns the contiguous range `cell_off[c]..cell_off[c + 1]`.
//! - **Constraints** `0..C` each own a contiguous range of replica **slots**
//!   `con_off[k]..con_off[k + 1]` (this is what "divide" walks). In order:
//!   - plain layout: one [`Constraint::Cell`] per cell (slots = its candidates, so the slot of
//!     variable `j` is `j` itself), then one [`Constraint::Piece`] per piece (slots = every
//!     (cell, rotation) candidate of the piece, by cell);
//!   - hybrid layout: one [`Constraint::Assignment`] whose slots are all `V` variables in
//!     order (again slot `j` copies variable `j`);
//!   - then one [`Constraint::Join`] per interior join `(c, c')`, `c'` right of or below `c`:
//!     the candidates of `c`, then those of `c'`.
//! - `slot_var[s]` is the variable slot `s` copies; the CSR `var_off`/`var_slot`/`var_con`
//!   lists, for each variable, its slots and their constraints (this is what "concur" walks).
//! - A divide projection is one-hot per constraint, so it is stored sparsely: constraint `k`
//!   chooses `choice_off[k + 1] - choice_off[k]` slots (1 for a cell or piece, 2 for a join,
//!   one per cell for the assignment), kept as absolute slot ids in a per-trial `chosen` array.
//!
//! Every table is a flat `u32` array built once per puzzle and shared by all trials; only the
//! slot values (`trials * S` floats) and the chosen slots are per trial. The same arrays can be
//! uploaded unchanged to a GPU.

use crate::assign::{AssignError, Assigner};
use crate::limits::memory::{ALLOC, Shape, WORD};
use crate::puzzle::{Class, DOWN, Placement, Puzzle, RIGHT, cell_class, opposite, piece_class};

/// Index of the first largest entry (the one-hot projection); `None` for an empty slice.
///
/// The same index as [`argmax_reference`] for every input, NaNs included (a NaN first entry
/// wins, later NaNs never do), but in two branch-free passes that the compiler vectorises
/// for baseline x86-64: the running compare-and-swap of the reference mispredicts about
/// `ln n` times per call on the map's noisy values, which made it one of the largest costs
/// of a divide-and-concur iteration. Pass 1 takes the largest non-NaN value in [`LANES`]
/// independent lanes (a max is exact, so the lane order cannot change it); pass 2 returns
/// the first entry equal to it (`==` does not tell -0 from +0, and neither does the
/// reference's `>`, so ties resolve the same way).
#[inline]
pub fn argmax(z: &[f32]) -> Option<usize> {
    let first = *z.first()?;
    if first.is_nan() {
        return Some(0);
    }
    let mx = max_lanes(z);
    // Found unless every entry is NaN or -inf; then the first (non-NaN) entry is the answer.
    Some(first_equal(z, mx).unwrap_or(0))
}

/// Lanes of the vectorised max: two SSE registers, or one AVX one.
pub const LANES: usize = 8;

/// The largest non-NaN entry of `z`, or -inf (lanes of `v > b ? v : b`, which is `maxps`).
#[inline]
pub(crate) fn max_lanes(z: &[f32]) -> f32 {
    let mut b = [f32::NEG_INFINITY; LANES];
    let chunks = z.chunks_exact(LANES);
    let tail = chunks.remainder();
    for ch in chunks {
        for l in 0..LANES {
            b[l] = if ch[l] > b[l] { ch[l] } else { b[l] };
        }
    }
    for (l, &v) in tail.iter().enumerate() {
        b[l] = if v > b[l] { v } else { b[l] };
    }
    b.iter().fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

/// Index of the first entry equal to `mx`, a chunk at a time (a vector compare per chunk,
/// the scalar scan only in the chunk that holds it).
#[inline]
fn first_equal(z: &[f32], mx: f32) -> Option<usize> {
    let chunks = z.chunks_exact(LANES);
    let done = z.len() - chunks.remainder().len();
    for (c, ch) in chunks.enumerate() {
        if ch.iter().fold(false, |a, &v| a | (v == mx)) {
            return ch.iter().position(|&v| v == mx).map(|i| c * LANES + i);
        }
    }
    z[done..].iter().position(|&v| v == mx).map(|i| done + i)
}

/// The reference twin of [`argmax`]: one running compare-and-swap (the first entry is
/// taken whatever it is, later ones only when strictly larger).
pub fn argmax_reference(z: &[f32]) -> Option<usize> {
    let (mut best, mut at) = (f32::NEG_INFINITY, None);
    for (i, &v) in z.iter().enumerate() {
        if v > best || at.is_none() {
            best = v;
            at = Some(i);
        }
    }
    at
}

/// What constraint `k` of a [`Layout`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Constraint {
    /// Cell `c` takes exactly one candidate.
    Cell(usize),
    /// Piece `p` is used exactly once, over all cells and rotations.
    Piece(usize),
    /// Hybrid layout: the whole board is a permutation of pieces (max-weight assignment).
    Assignment,
    /// Interior join `j` (an index into [`Layout::joins`]) is matched.
    Join(usize),
}

/// Cells and piece columns of one border class: an independent assignment problem.
#[derive(Clone, Debug)]
struct ClassTable {
    /// Row `i` of the assignment is cell `cells[i]`.
    cells: Vec<u32>,
}

/// The constraint layout of divide and concur (`--layout`): which constraints hold the
/// pieces to one cell each and each cell to one piece.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum DcLayout {
    /// A constraint per cell, per piece and per join (the layout the GPU backend runs).
    Plain,
    /// One global assignment constraint and the joins (the best measured, the command line's
    /// default).
    #[default]
    Hybrid,
}

impl DcLayout {
    /// Both layouts, plain first.
    pub const ALL: [DcLayout; 2] = [DcLayout::Plain, DcLayout::Hybrid];

    /// The layout of the older boolean switch (`hybrid = true` in ladders and certificates).
    pub fn from_hybrid(hybrid: bool) -> Self {
        if hybrid { DcLayout::Hybrid } else { DcLayout::Plain }
    }

    /// True for the hybrid layout (one assignment constraint instead of cells and pieces).
    pub fn is_hybrid(self) -> bool {
        self == DcLayout::Hybrid
    }
}

/// Appends a compressed sparse row table over `keys` (each below `buckets`) to `off`:
/// `buckets + 1` offsets, `base` plus where each key's group starts in the table, then its
/// end. Calls `place(at, i)` for the `i`-th key, `at` its index in the table (the groups in
/// key order, each in the keys' order), for the caller to fill its arrays of items. A
/// counting sort: one pass counts the keys, one places them.
fn append_csr(
    off: &mut Vec<u32>,
    base: u32,
    buckets: usize,
    keys: impl Iterator<Item = usize> + Clone,
    mut place: impl FnMut(usize, usize),
) {
    let first = off.len();
    off.resize(first + buckets + 1, 0);
    let start = &mut off[first..];
    for k in keys.clone() {
        start[k + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    // Each key at its group's next free index: each group's offset moves to its end, which is
    // where the next group starts, so the offsets shift back by one afterwards.
    for (i, k) in keys.enumerate() {
        place(start[k] as usize, i);
        start[k] += 1;
    }
    start.copy_within(0..buckets, 1);
    start[0] = 0;
    start.iter_mut().for_each(|o| *o += base);
}

/// Static divide-and-concur tables for one puzzle (see the module docs).
#[derive(Clone, Debug)]
pub struct Layout {
    width: usize,
    height: usize,
    colors: usize,
    layout: DcLayout,
    cell_off: Vec<u32>,
    cand_piece: Vec<u32>,
    /// Rotated colours of each candidate, packed: side `s` in byte `s`.
    cand_colors: Vec<u32>,
    cand_place: Vec<Placement>,
    /// Assignment column of each candidate: its piece's index within its class.
    cand_col: Vec<u32>,
    classes: Vec<ClassTable>,
    /// Interior joins `[c, c', s]`: side `s` of `c` faces side `opposite(s)` of `c'`.
    joins: Vec<[u32; 3]>,
    /// The candidates of each cell grouped by the colour they show on each side: group `k`
    /// of side `s` of cell `c` is `side_sorted[side_grp[(c * 4 + s) * (K + 1) + k]..][..next]`
    /// (local candidate indices, ascending within a group; empty for rim sides).
    side_grp: Vec<u32>,
    side_sorted: Vec<u32>,
    con_off: Vec<u32>,
    choice_off: Vec<u32>,
    slot_var: Vec<u32>,
    var_off: Vec<u32>,
    var_slot: Vec<u32>,
    var_con: Vec<u32>,
    /// Each constraint's slots as maximal runs `[slot, var, len]`: slots `slot..slot + len`
    /// copy variables `var..var + len`; constraint `k`'s runs are
    /// `runs[run_off[k]..run_off[k + 1]]`. A cell, the assignment or one side of a join is a
    /// single run and a piece one run per cell (its rotations), so the update pass streams
    /// contiguous slices instead of gathering through `slot_var`.
    run_off: Vec<u32>,
    runs: Vec<[u32; 3]>,
    /// Number of cell, piece and assignment constraints (the joins follow them).
    cell_cons: usize,
    piece_cons: usize,
    assign_cons: usize,
    max_con_len: usize,
    max_choices: usize,
}

impl Layout {
    /// Builds the tables of the plain layout (cell and piece constraints) or of the hybrid
    /// one (one assignment constraint); the joins are the same in both.
    pub fn new(puzzle: &Puzzle, layout: DcLayout) -> Self {
        let (w, h, n) = (puzzle.width(), puzzle.height(), puzzle.cells());
        let cands = puzzle.candidates();
        let mut cell_off = Vec::with_capacity(n + 1);
        cell_off.push(0u32);
        let (mut cand_piece, mut cand_colors, mut cand_place) = (Vec::new(), Vec::new(), Vec::new());
        for c in 0..n {
            for (pl, q) in cands.of(c).iter().zip(cands.colors_of(c)) {
                cand_piece.push(pl.piece as u32);
                cand_colors.push(u32::from_le_bytes(*q));
                cand_place.push(*pl);
            }
            cell_off.push(cand_piece.len() as u32);
        }
        let v = cand_piece.len();

        // Border classes: which cells and which piece columns form each assignment.
        let class_index = |cl: Class| match cl {
            Class::Corner => 0usize,
            Class::Edge => 1,
            Class::Inner => 2,
        };
        let mut col_of_piece = vec![0u32; n];
        let mut count = [0u32; 3];
        for (p, &q) in puzzle.pieces().iter().enumerate() {
            // A validated puzzle has no classless piece; treat one as inner rather than panic.
            let cl = piece_class(q).map_or(2, class_index);
            col_of_piece[p] = count[cl];
            count[cl] += 1;
        }
        let mut classes = vec![ClassTable { cells: Vec::new() }; 3];
        for c in 0..n {
            classes[class_index(cell_class(w, h, c))].cells.push(c as u32);
        }
        let classes: Vec<ClassTable> = classes.into_iter().filter(|t| !t.cells.is_empty()).collect();
        let cand_col: Vec<u32> = cand_piece.iter().map(|&p| col_of_piece[p as usize]).collect();

        let mut joins = Vec::new();
        for c in 0..n {
            for s in [RIGHT, DOWN] {
                if let Some(d) = puzzle.neighbour(c, s) {
                    joins.push([c as u32, d as u32, s as u32]);
                }
            }
        }

        // Colour groups of every joined side: each cell's candidates by the colour they show
        // there (a rim side's groups are empty).
        let colors = puzzle.num_colors();
        let mut side_grp = Vec::with_capacity(n * 4 * (colors + 1));
        let mut side_sorted = Vec::new();
        for c in 0..n {
            let cell = &cand_colors[cell_off[c] as usize..cell_off[c + 1] as usize];
            for s in 0..4 {
                let joined = if puzzle.neighbour(c, s).is_some() { cell } else { &[] };
                let base = side_sorted.len();
                side_sorted.resize(base + joined.len(), 0);
                let shown = joined.iter().map(|&q| ((q >> (8 * s)) & 0xff) as usize);
                append_csr(&mut side_grp, base as u32, colors, shown, |at, i| side_sorted[base + at] = i as u32);
            }
        }

        let mut con_off = vec![0u32];
        let mut choice_off = vec![0u32];
        let mut slot_var: Vec<u32> = Vec::new();
        let mut push = |vars: &mut dyn Iterator<Item = u32>, choices: u32, slot_var: &mut Vec<u32>| {
            let before = slot_var.len();
            slot_var.extend(vars);
            let choices = if slot_var.len() == before { 0 } else { choices };
            con_off.push(slot_var.len() as u32);
            choice_off.push(choice_off.last().copied().unwrap_or(0) + choices);
        };
        let (cell_cons, piece_cons, assign_cons);
        if layout.is_hybrid() {
            push(&mut (0..v as u32), n as u32, &mut slot_var);
            (cell_cons, piece_cons, assign_cons) = (0, 0, 1);
        } else {
            for c in 0..n {
                push(&mut (cell_off[c]..cell_off[c + 1]), 1, &mut slot_var);
            }
            // Candidates of each piece, by cell then rotation.
            let (mut piece_off, mut by_piece) = (Vec::with_capacity(n + 1), vec![0u32; v]);
            let pieces = cand_piece.iter().map(|&p| p as usize);
            append_csr(&mut piece_off, 0, n, pieces, |at, j| by_piece[at] = j as u32);
            for p in 0..n {
                push(&mut by_piece[piece_off[p] as usize..piece_off[p + 1] as usize].iter().copied(), 1, &mut slot_var);
            }
            (cell_cons, piece_cons, assign_cons) = (n, n, 0);
        }
        for &[c, d, _] in &joins {
            let (c, d) = (c as usize, d as usize);
            let empty = cell_off[c] == cell_off[c + 1] || cell_off[d] == cell_off[d + 1];
            push(
                &mut (cell_off[c]..cell_off[c + 1]).chain(cell_off[d]..cell_off[d + 1]),
                if empty { 0 } else { 2 },
                &mut slot_var,
            );
        }
        let s_total = slot_var.len();

        // CSR variable -> slots (in slot order), with each slot's constraint: the slots come
        // in order, so the constraint whose range holds the slot only moves forward.
        let mut var_off = Vec::with_capacity(v + 1);
        let (mut var_slot, mut var_con) = (vec![0u32; s_total], vec![0u32; s_total]);
        let mut k = 0;
        append_csr(&mut var_off, 0, v, slot_var.iter().map(|&j| j as usize), |at, s| {
            while con_off[k + 1] as usize <= s {
                k += 1;
            }
            var_slot[at] = s as u32;
            var_con[at] = k as u32;
        });
        let (mut run_off, mut runs) = (vec![0u32], Vec::<[u32; 3]>::new());
        for k in 0..con_off.len() - 1 {
            for s in con_off[k]..con_off[k + 1] {
                let j = slot_var[s as usize];
                // The last run is this constraint's (not the previous one's).
                let open = runs.len() > run_off[k] as usize;
                match runs.last_mut() {
                    Some([s0, j0, len]) if open && *s0 + *len == s && *j0 + *len == j => *len += 1,
                    _ => runs.push([s, j, 1]),
                }
            }
            run_off.push(runs.len() as u32);
        }
        let max_con_len = con_off.windows(2).map(|r| (r[1] - r[0]) as usize).max().unwrap_or(0);
        let max_choices = choice_off.windows(2).map(|r| (r[1] - r[0]) as usize).max().unwrap_or(0);
        Layout {
            width: w,
            height: h,
            colors: puzzle.num_colors(),
            layout,
            cell_off,
            cand_piece,
            cand_colors,
            cand_place,
            cand_col,
            classes,
            joins,
            side_grp,
            side_sorted,
            con_off,
            choice_off,
            slot_var,
            var_off,
            var_slot,
            var_con,
            run_off,
            runs,
            cell_cons,
            piece_cons,
            assign_cons,
            max_con_len,
            max_choices,
        }
    }

    /// Which layout these tables are.
    pub fn layout(&self) -> DcLayout {
        self.layout
    }
    /// Cells of the board.
    pub fn cells(&self) -> usize {
        self.cell_off.len() - 1
    }
    /// Board width.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Board height.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Number of colours, grey included.
    pub fn colors(&self) -> usize {
        self.colors
    }
    /// Number of variables `V` (candidates).
    pub fn vars(&self) -> usize {
        self.cand_piece.len()
    }
    /// Number of replica slots `S`: the floats of one trial's state.
    pub fn slots(&self) -> usize {
        self.slot_var.len()
    }
    /// Number of constraints `C`.
    pub fn constraints(&self) -> usize {
        self.con_off.len() - 1
    }
    /// Length of the per-trial chosen-slot array (the sparse divide projection).
    pub fn choices(&self) -> usize {
        self.choice_off.last().copied().unwrap_or(0) as usize
    }
    /// The largest slot range of one constraint.
    pub fn max_constraint_len(&self) -> usize {
        self.max_con_len
    }
    /// The most slots one constraint chooses.
    pub fn max_choices(&self) -> usize {
        self.max_choices
    }

    /// What constraint `k` is.
    pub fn constraint(&self, k: usize) -> Constraint {
        if k < self.cell_cons {
            Constraint::Cell(k)
        } else if k < self.cell_cons + self.piece_cons {
            Constraint::Piece(k - self.cell_cons)
        } else if k < self.cell_cons + self.piece_cons + self.assign_cons {
            Constraint::Assignment
        } else {
            Constraint::Join(k - self.cell_cons - self.piece_cons - self.assign_cons)
        }
    }

    /// Index of the first join constraint.
    pub fn first_join(&self) -> usize {
        self.cell_cons + self.piece_cons + self.assign_cons
    }

    /// Variables of cell `c` (a range of candidate ids).
    #[inline]
    pub fn cell_vars(&self, c: usize) -> std::ops::Range<usize> {
        self.cell_off[c] as usize..self.cell_off[c + 1] as usize
    }
    /// Slots of constraint `k`.
    #[inline]
    pub fn con_range(&self, k: usize) -> std::ops::Range<usize> {
        self.con_off[k] as usize..self.con_off[k + 1] as usize
    }
    /// Positions of constraint `k`'s chosen slots in the chosen array.
    #[inline]
    pub fn choice_range(&self, k: usize) -> std::ops::Range<usize> {
        self.choice_off[k] as usize..self.choice_off[k + 1] as usize
    }
    /// Slots of variable `j` (positions in [`Layout::var_slot`] / [`Layout::var_con`]).
    #[inline]
    pub fn var_range(&self, j: usize) -> std::ops::Range<usize> {
        self.var_off[j] as usize..self.var_off[j + 1] as usize
    }

    /// `cell_off[c]..cell_off[c + 1]` are the variables of cell `c` (`cells + 1` entries).
    pub fn cell_off(&self) -> &[u32] {
        &self.cell_off
    }
    /// Piece of each variable.
    pub fn cand_piece(&self) -> &[u32] {
        &self.cand_piece
    }
    /// Rotated colours of each variable, packed: side `s` in byte `s`.
    pub fn cand_colors(&self) -> &[u32] {
        &self.cand_colors
    }
    /// The placement each variable stands for.
    pub fn placement(&self, j: usize) -> Placement {
        self.cand_place[j]
    }
    /// Interior joins `[c, c', s]`: side `s` of `c` faces side `opposite(s)` of `c'`.
    pub fn joins(&self) -> &[[u32; 3]] {
        &self.joins
    }
    /// Colour-group offsets into [`Layout::side_sorted`] of side `s` of cell `c`: `K + 1`
    /// entries (group `k` is `groups[k]..groups[k + 1]`).
    #[inline]
    pub fn side_groups(&self, c: usize, s: usize) -> &[u32] {
        let k1 = self.colors + 1;
        &self.side_grp[(c * 4 + s) * k1..(c * 4 + s + 1) * k1]
    }
    /// The colour-group offsets of every cell side, flat (`cells * 4 * (K + 1)`; see
    /// [`Layout::side_groups`]).
    pub fn side_grp(&self) -> &[u32] {
        &self.side_grp
    }
    /// Local candidate indices of every cell side, grouped by colour (see
    /// [`Layout::side_groups`]).
    pub fn side_sorted(&self) -> &[u32] {
        &self.side_sorted
    }
    /// Slot ranges of the constraints (`C + 1` entries).
    pub fn con_off(&self) -> &[u32] {
        &self.con_off
    }
    /// Ranges of the constraints in the chosen array (`C + 1` entries).
    pub fn choice_off(&self) -> &[u32] {
        &self.choice_off
    }
    /// Variable of each slot.
    pub fn slot_var(&self) -> &[u32] {
        &self.slot_var
    }
    /// CSR offsets variable -> slots (`V + 1` entries).
    pub fn var_off(&self) -> &[u32] {
        &self.var_off
    }
    /// CSR slot lists of the variables.
    pub fn var_slot(&self) -> &[u32] {
        &self.var_slot
    }
    /// Constraint `k`'s slots as runs `[slot, var, len]` of consecutive slots copying
    /// consecutive variables, in slot order.
    #[inline]
    pub fn runs(&self, k: usize) -> &[[u32; 3]] {
        &self.runs[self.run_off[k] as usize..self.run_off[k + 1] as usize]
    }
    /// Constraint of each entry of [`Layout::var_slot`].
    pub fn var_con(&self) -> &[u32] {
        &self.var_con
    }

    /// Colour that variable `j` shows on side `s`.
    #[inline]
    pub fn color(&self, j: usize, s: usize) -> u8 {
        (self.cand_colors[j] >> (8 * s)) as u8
    }

    /// Matched interior joins of a board given as one variable (candidate id) per cell.
    pub fn score(&self, board: &[u32]) -> usize {
        self.joins
            .iter()
            .filter(|&&[c, d, s]| {
                let s = s as usize;
                self.color(board[c as usize] as usize, s) == self.color(board[d as usize] as usize, opposite(s))
            })
            .count()
    }

    /// True when the board (one variable per cell) uses every piece exactly once. `seen` is
    /// scratch of `cells` flags.
    pub fn is_permutation(&self, board: &[u32], seen: &mut [bool]) -> bool {
        seen.iter_mut().for_each(|f| *f = false);
        board.iter().all(|&j| {
            let p = self.cand_piece[j as usize] as usize;
            !std::mem::replace(&mut seen[p], true)
        })
    }

    /// The placements of a board given as one variable per cell.
    pub fn placements(&self, board: &[u32]) -> Vec<Placement> {
        board.iter().map(|&j| self.cand_place[j as usize]).collect()
    }

    /// The variable of placement `pl` at cell `c`, if it is a candidate there.
    pub fn variable_of(&self, c: usize, pl: Placement) -> Option<u32> {
        self.cell_vars(c).find(|&j| self.cand_place[j] == pl).map(|j| j as u32)
    }

    /// Per-cell argmax readout: the first variable of largest value in each cell.
    pub fn argmax_board(&self, values: &[f32], board: &mut [u32]) {
        for (c, b) in board.iter_mut().enumerate() {
            let r = self.cell_vars(c);
            *b = (r.start + argmax(&values[r]).unwrap_or(0)) as u32;
        }
    }

    /// Scratch for [`Layout::assign`]: one weight and one argmax matrix per class.
    pub fn assign_scratch(&self) -> AssignScratch {
        AssignScratch {
            weights: self.classes.iter().map(|t| vec![0.0; t.cells.len() * t.cells.len()]).collect(),
            best: self.classes.iter().map(|t| vec![0; t.cells.len() * t.cells.len()]).collect(),
        }
    }

    /// One warm-startable solver per class.
    pub fn assigners(&self) -> Vec<Assigner> {
        self.classes.iter().map(|t| Assigner::new(t.cells.len())).collect()
    }

    /// Max-weight assignment of pieces to cells over `values` (indexed by variable): the
    /// weight of (cell, piece) is the largest value over the piece's rotations in that cell;
    /// one assignment per border class. Writes the chosen variable of every cell to `board`.
    /// This is the nearest permutation board to `values` (every board has the same norm).
    pub fn assign(
        &self,
        values: &[f32],
        scratch: &mut AssignScratch,
        asg: &mut [Assigner],
        warm: bool,
        board: &mut [u32],
    ) -> Result<(), AssignError> {
        for (t, table) in self.classes.iter().enumerate() {
            let n = table.cells.len();
            let wts = &mut scratch.weights[t];
            let best = &mut scratch.best[t];
            wts.iter_mut().for_each(|w| *w = f32::NEG_INFINITY);
            for (i, &c) in table.cells.iter().enumerate() {
                let row = &mut wts[i * n..(i + 1) * n];
                let brow = &mut best[i * n..(i + 1) * n];
                let r = self.cell_vars(c as usize);
                for ((j, &v), &col) in r.clone().zip(&values[r.clone()]).zip(&self.cand_col[r]) {
                    let col = col as usize;
                    if v > row[col] {
                        row[col] = v;
                        brow[col] = j as u32;
                    }
                }
            }
            let solver = &mut asg[t];
            if warm {
                solver.solve_warm(wts)?;
            } else {
                solver.solve(wts)?;
            }
            for (i, &col) in solver.row_to_col().iter().enumerate() {
                board[table.cells[i] as usize] = best[i * n + col as usize];
            }
        }
        Ok(())
    }

    /// Fails when some class has no perfect assignment at all (no board fits the rim).
    pub fn check_feasible(&self) -> Result<(), AssignError> {
        let zero = vec![0.0f32; self.vars()];
        let mut board = vec![0u32; self.cells()];
        self.assign(&zero, &mut self.assign_scratch(), &mut self.assigners(), false, &mut board)
    }
}

/// Per-worker scratch of [`Layout::assign`].
#[derive(Clone, Debug)]
pub struct AssignScratch {
    weights: Vec<Vec<f32>>,
    best: Vec<Vec<u32>>,
}

/// The replica layout's sizes ([`Layout`]), from the puzzle's shape alone: what the memory
/// estimates of both F2 engines count, beside the tables they describe.
pub(crate) struct DcSizes {
    pub(crate) vars: u64,
    pub(crate) slots: u64,
    pub(crate) choices: u64,
    pub(crate) constraints: u64,
}

/// The replica layout's sizes for `layout`, from the puzzle's shape alone.
pub(crate) fn dc_sizes(s: &Shape, layout: DcLayout) -> DcSizes {
    let v = s.cands;
    if layout.is_hybrid() {
        DcSizes { vars: v, slots: v + s.join_cands, choices: s.cells + 2 * s.joins, constraints: 1 + s.joins }
    } else {
        DcSizes {
            vars: v,
            slots: 2 * v + s.join_cands,
            choices: 2 * s.cells + 2 * s.joins,
            constraints: 2 * s.cells + s.joins,
        }
    }
}

/// The layout's tables (`dc::Layout::new`): per variable its piece, colours, placement,
/// column and slot range; per slot its variable, constraint and run; colour groups per side.
pub(crate) fn dc_tables(s: &Shape, d: &DcSizes) -> u64 {
    s.candidates()
        + 40 * d.vars
        + 24 * d.slots
        + 16 * d.constraints
        + WORD * s.cells * 4 * (s.colors + 1)
        + 16 * d.vars
        + 12 * s.joins
        + 64 * ALLOC
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::puzzle;

    #[test]
    fn the_shapes_sizes_are_the_layouts() {
        for (w, h) in [(2, 2), (2, 5), (3, 3), (5, 4), (6, 6)] {
            let p = puzzle(w, h, 1);
            let s = Shape::of(&p);
            for layout in DcLayout::ALL {
                let l = Layout::new(&p, layout);
                let d = dc_sizes(&s, layout);
                assert_eq!(d.vars, l.vars() as u64, "{w}x{h} {layout:?}");
                assert_eq!(d.slots, l.slots() as u64, "{w}x{h} {layout:?}");
                assert_eq!(d.choices, l.choices() as u64, "{w}x{h} {layout:?}");
                assert_eq!(d.constraints, l.constraints() as u64, "{w}x{h} {layout:?}");
                assert_eq!(d.slots * WORD, crate::dc::replica_bytes(&p, layout) as u64);
            }
        }
    }

    #[test]
    fn tables_are_consistent() {
        for layout in DcLayout::ALL {
            let hybrid = layout.is_hybrid();
            let p = puzzle(4, 3, 1);
            let l = Layout::new(&p, layout);
            let cands = p.candidates();
            assert_eq!(l.vars(), cands.total());
            // Every slot appears once in the CSR, with the right constraint.
            let mut seen = vec![0u32; l.slots()];
            for j in 0..l.vars() {
                for e in l.var_range(j) {
                    let s = l.var_slot()[e] as usize;
                    seen[s] += 1;
                    assert_eq!(l.slot_var()[s] as usize, j);
                    assert!(l.con_range(l.var_con()[e] as usize).contains(&s));
                }
            }
            assert!(seen.iter().all(|&n| n == 1));
            // Replica counts: 1 (or 2 in the plain layout) plus one per join of the cell.
            for c in 0..p.cells() {
                let joins = (0..4).filter(|&s| p.neighbour(c, s).is_some()).count();
                for j in l.cell_vars(c) {
                    assert_eq!(l.var_range(j).len(), joins + if hybrid { 1 } else { 2 });
                }
            }
            assert_eq!(l.constraints(), p.max_score() + if hybrid { 1 } else { 2 * p.cells() });
            assert_eq!(l.choices(), 2 * p.max_score() + if hybrid { p.cells() } else { 2 * p.cells() });
            for k in 0..l.constraints() {
                let want = match l.constraint(k) {
                    Constraint::Cell(_) | Constraint::Piece(_) => 1,
                    Constraint::Join(_) => 2,
                    Constraint::Assignment => p.cells(),
                };
                assert_eq!(l.choice_range(k).len(), want);
            }
            // The runs cover each constraint's slots in order, each copying consecutive
            // variables, and no variable twice in one constraint (what the fused update
            // relies on to keep every sum's order).
            for k in 0..l.constraints() {
                let mut next = l.con_range(k).start;
                let mut vars = std::collections::HashSet::new();
                for &[s0, j0, len] in l.runs(k) {
                    assert_eq!(s0 as usize, next);
                    for i in 0..len as usize {
                        assert_eq!(l.slot_var()[s0 as usize + i] as usize, j0 as usize + i);
                        assert!(vars.insert(j0 as usize + i), "variable twice in constraint {k}");
                    }
                    next += len as usize;
                }
                assert_eq!(next, l.con_range(k).end);
                // A join of horizontal neighbours is one run (their candidates are adjacent).
                let most = match l.constraint(k) {
                    Constraint::Cell(_) | Constraint::Assignment => 1,
                    Constraint::Join(_) => 2,
                    Constraint::Piece(_) => l.runs(k).len(),
                };
                assert!((1..=most).contains(&l.runs(k).len()));
            }
            // Slot j of the first constraint(s) copies variable j.
            assert!((0..l.vars()).all(|j| l.slot_var()[j] as usize == j));
            assert!(l.check_feasible().is_ok());
        }
    }

    /// Values drawn from a small set (many ties, both zeros) with NaNs and infinities.
    fn tricky() -> impl proptest::strategy::Strategy<Value = f32> {
        use proptest::prelude::*;
        prop_oneof![
            8 => (0u8..6).prop_map(|v| v as f32 * 0.25 - 0.5),
            1 => Just(-0.0f32),
            1 => Just(f32::NAN),
            1 => Just(f32::INFINITY),
            1 => Just(f32::NEG_INFINITY),
            4 => -1.0f32..1.0,
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        #[test]
        fn argmax_is_the_reference_argmax(z in proptest::collection::vec(tricky(), 0..70)) {
            proptest::prop_assert_eq!(argmax(&z), argmax_reference(&z));
        }
    }

    #[test]
    fn argmax_is_the_reference_on_edge_cases() {
        let (n, i) = (f32::NAN, f32::INFINITY);
        for z in [
            vec![],
            vec![n],
            vec![n, 1.0],
            vec![1.0, n, 2.0],
            vec![-i, -i],
            vec![-i, n, -i],
            vec![0.0, -0.0],
            vec![-0.0, 0.0],
            vec![-i; 17],
            (0..33).map(|k| (k % 5) as f32).collect(),
        ] {
            assert_eq!(argmax(&z), argmax_reference(&z), "{z:?}");
        }
    }

    #[test]
    fn argmax_board_matches_the_reference_per_cell() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(4);
        for (w, h) in [(3, 3), (5, 4), (8, 8)] {
            let l = Layout::new(&puzzle(w, h, 2), DcLayout::Plain);
            for _ in 0..20 {
                // Quantised values, so that cells have ties.
                let m: Vec<f32> = (0..l.vars()).map(|_| rng.random_range(0u8..8) as f32 / 8.0).collect();
                let mut b = vec![0; l.cells()];
                l.argmax_board(&m, &mut b);
                for c in 0..l.cells() {
                    let r = l.cell_vars(c);
                    assert_eq!(b[c] as usize, r.start + argmax_reference(&m[r]).unwrap());
                }
            }
        }
    }
}
