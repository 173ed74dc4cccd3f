//! The beam itself: `width` partial boards grown one cell a step along a plan (`order::Plan`).
//!
//! Every survivor of a step is expanded at the step's cell. Its candidates are every unused
//! piece of the cell's class in a rotation that fits the rim (frame-legal; mismatched joins are
//! allowed, so a beam never dead-ends), and a candidate's gain is the joins it matches with the
//! cell's filled neighbours. A survivor keeps its `children` best candidates (ties at random);
//! all children of the step are pooled, bucketed by score (matched joins so far), and the
//! `width` best survive, those tied at the cut drawn at random (selection sampling, Knuth's
//! Algorithm S). A hinted cell takes its hint. After the last cell every survivor is a full
//! board, and the best is rebuilt from the parents each step records.
//!
//! Candidates come from tables of (piece, side) by colour: a cell's candidates of gain 1 or
//! more are those that show a read colour on its side, so a survivor looks at about
//! `4 · pieces / colours` entries a read side instead of every piece. Only when none of those is
//! free does it fall back to every free piece of the class (gain 0).
//!
//! A state is its open joins' colours (the plan's slots), its used pieces (a bit set) and its
//! score; the history is a parent and a placement per survivor and step. All of it is flat and
//! made once per beam: the steps do not allocate. The memory it takes is `bytes`.

use super::order::Plan;
use crate::cancel::Cancel;
use crate::puzzle::{Class, Piece, Placement, Puzzle, cell_class, piece_class, rotated};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::Instant;

/// The class's index (corner 0, edge 1, inner 2), as the local searches number them.
fn class_index(c: Class) -> usize {
    usize::from(crate::search::hill::class_index(c))
}

/// The candidate tables of one puzzle.
pub(crate) struct Tables {
    /// `turned[4p + r]`: piece `p` turned `r` quarter turns.
    turned: Vec<Piece>,
    /// `grey[4p + r]`: the sides of `turned[4p + r]` that are grey, as a mask.
    grey: Vec<u8>,
    /// `by_colour[class][colour]`: (piece, stored side) for every side showing the colour.
    by_colour: [Vec<Vec<(u16, u8)>>; 3],
    /// The pieces of each class that no hint fixes.
    of_class: [Vec<u16>; 3],
    /// Each cell's rim sides, as a mask.
    rim: Vec<u8>,
    /// Each cell's class.
    class: Vec<u8>,
    /// The hint at each cell.
    hint: Vec<Option<Placement>>,
    /// The pieces hints fix.
    hinted: Vec<u16>,
    max_score: usize,
}

impl Tables {
    pub fn new(puzzle: &Puzzle) -> Tables {
        let (w, h, n) = (puzzle.width(), puzzle.height(), puzzle.cells());
        let mut turned = Vec::with_capacity(4 * n);
        let mut grey = Vec::with_capacity(4 * n);
        for &p in puzzle.pieces() {
            for r in 0..4 {
                let q = rotated(p, r);
                turned.push(q);
                grey.push((0..4).filter(|&s| q[s] == 0).fold(0u8, |m, s| m | 1 << s));
            }
        }
        let mut hint = vec![None; n];
        let mut is_hinted = vec![false; n];
        let mut hinted = Vec::new();
        for hn in puzzle.hints() {
            hint[hn.cell] = Some(Placement { piece: hn.piece as u16, rot: hn.rot });
            is_hinted[hn.piece] = true;
            hinted.push(hn.piece as u16);
        }
        let colours = puzzle.num_colors().max(1);
        let mut by_colour: [Vec<Vec<(u16, u8)>>; 3] = std::array::from_fn(|_| vec![Vec::new(); colours]);
        let mut of_class: [Vec<u16>; 3] = Default::default();
        for (i, &p) in puzzle.pieces().iter().enumerate() {
            if is_hinted[i] {
                continue;
            }
            let k = piece_class(p).map_or(2, class_index);
            of_class[k].push(i as u16);
            for (j, &col) in p.iter().enumerate() {
                if col != 0 {
                    by_colour[k][col as usize].push((i as u16, j as u8));
                }
            }
        }
        let rim = (0..n).map(|c| (0..4).filter(|&s| puzzle.neighbour(c, s).is_none()).fold(0u8, |m, s| m | 1 << s));
        Tables {
            turned,
            grey,
            by_colour,
            of_class,
            rim: rim.collect(),
            class: (0..n).map(|c| class_index(cell_class(w, h, c)) as u8).collect(),
            hint,
            hinted,
            max_score: puzzle.max_score(),
        }
    }
}

/// How a beam runs.
#[derive(Clone, Debug)]
pub(crate) struct BeamRun<'a> {
    /// Survivors kept at each step.
    pub width: usize,
    /// Children a survivor may leave (its best candidates).
    pub children: usize,
    /// The seed of its tie-breaks.
    pub seed: u64,
    /// Stop when this instant passes (the best survivor is then returned as a partial board).
    pub deadline: Option<Instant>,
    /// Stop at the next step when tripped.
    pub cancel: &'a Cancel,
}

/// What a beam built.
#[derive(Clone, Debug)]
pub(crate) struct Built {
    /// The best survivor's placements by cell (None: a cell it did not reach).
    pub cells: Vec<Option<Placement>>,
    /// Its matched joins.
    pub score: usize,
    /// Whether it reached the last cell (false: the clock or a stop cut it short).
    pub complete: bool,
    /// Survivors expanded, summed over the steps.
    pub nodes: u64,
}

/// A beam: the plan, the tables, and the state it grows, sized for a width.
pub(crate) struct Beam<'p> {
    plan: &'p Plan,
    t: &'p Tables,
    words: usize,
    width: usize,
    // The survivors of this step and the next: slots, used pieces, scores.
    slots: [Vec<u8>; 2],
    used: [Vec<u64>; 2],
    score: [Vec<u32>; 2],
    // The pooled children of a step: score, parent, placement (piece << 2 | turn).
    pool_score: Vec<u32>,
    pool_parent: Vec<u32>,
    pool_pl: Vec<u32>,
    // Per step: each survivor's parent and placement.
    hist_parent: Vec<u32>,
    hist_pl: Vec<u32>,
    survivors: Vec<u32>,
    histogram: Vec<u32>,
    best: Vec<(u32, u32, u32)>,
}

/// Bytes a beam of `width` takes on a puzzle of `cells` cells with `slots` slots, `children`
/// a survivor: its two generations, its pool and its history.
pub(crate) fn bytes(cells: usize, slots: usize, width: usize, children: usize) -> u64 {
    let words = cells.div_ceil(64) as u64;
    let (w, n) = (width as u64, cells as u64);
    let generation = w.saturating_mul(slots as u64 + 8 * words + 4);
    let pool = w.saturating_mul(children as u64).saturating_mul(12);
    let history = w.saturating_mul(n).saturating_mul(8);
    generation.saturating_mul(2).saturating_add(pool).saturating_add(history)
}

impl<'p> Beam<'p> {
    /// A beam of `width` survivors, `children` a survivor, over `plan`.
    pub fn new(plan: &'p Plan, t: &'p Tables, width: usize, children: usize) -> Self {
        let n = plan.steps.len();
        let words = n.div_ceil(64);
        let width = width.max(1);
        let pool = width * children.max(1);
        Beam {
            plan,
            t,
            words,
            width,
            slots: [vec![0; width * plan.slots], vec![0; width * plan.slots]],
            used: [vec![0; width * words], vec![0; width * words]],
            score: [vec![0; width], vec![0; width]],
            pool_score: Vec::with_capacity(pool),
            pool_parent: Vec::with_capacity(pool),
            pool_pl: Vec::with_capacity(pool),
            hist_parent: vec![0; n * width],
            hist_pl: vec![0; n * width],
            survivors: vec![0; n],
            histogram: vec![0; t.max_score + 2],
            best: Vec::with_capacity(children.max(1)),
        }
    }

    /// Runs the beam to the last cell, or to its deadline or stop. (Inlined into its one
    /// caller, the pipeline, as it was before the crate split moved the codegen units' lines:
    /// 2.8 % more instructions out of line.)
    #[inline]
    pub fn run(&mut self, run: &BeamRun<'_>) -> Built {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(run.seed);
        let (ns, nw) = (self.plan.slots, self.words);
        let children = run.children.max(1);
        let width = run.width.clamp(1, self.width);
        // The root: no cell filled, the hinted pieces spent.
        self.slots[0][..ns].fill(0);
        self.used[0][..nw].fill(0);
        for &p in &self.t.hinted {
            self.used[0][p as usize / 64] |= 1 << (p % 64);
        }
        self.score[0][0] = 0;
        let mut alive = 1usize;
        let mut nodes = 0u64;
        let mut done = 0usize;
        for (step_i, step) in self.plan.steps.iter().enumerate() {
            if run.cancel.is_cancelled() || run.deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let cell = step.cell as usize;
            self.pool_score.clear();
            self.pool_parent.clear();
            self.pool_pl.clear();
            let (k, rim) = (self.t.class[cell] as usize, self.t.rim[cell]);
            for i in 0..alive {
                let slots = &self.slots[0][i * ns..(i + 1) * ns];
                let used = &self.used[0][i * nw..(i + 1) * nw];
                let base = self.score[0][i];
                nodes += 1;
                if let Some(pl) = self.t.hint[cell] {
                    let q = self.t.turned[4 * pl.piece as usize + pl.rot as usize];
                    let gain = step.reads.iter().filter(|&&(s, slot)| q[s as usize] == slots[slot as usize]).count();
                    self.pool_score.push(base + gain as u32);
                    self.pool_parent.push(i as u32);
                    self.pool_pl.push(u32::from(pl.piece) << 2 | u32::from(pl.rot));
                    continue;
                }
                self.best.clear();
                let is_used = |p: u16| used[p as usize / 64] >> (p % 64) & 1 == 1;
                let offer = |best: &mut Vec<(u32, u32, u32)>, gain: u32, pl: u32, rng: &mut Xoshiro256PlusPlus| {
                    // Keep the `children` best by (gain, random key).
                    let key = rng.random::<u32>();
                    if best.len() == children {
                        let (g, kk, _) = best[children - 1];
                        if (gain, key) <= (g, kk) {
                            return;
                        }
                        best.pop();
                    }
                    let at = best.partition_point(|&(g, kk, _)| (g, kk) > (gain, key));
                    best.insert(at, (gain, key, pl));
                };
                for (ri, &(s, slot)) in step.reads.iter().enumerate() {
                    let colour = slots[slot as usize];
                    let Some(list) = self.t.by_colour[k].get(colour as usize) else { continue };
                    for &(p, j) in list {
                        if is_used(p) {
                            continue;
                        }
                        let r = (s + 4 - j) % 4;
                        let at = 4 * p as usize + r as usize;
                        if self.t.grey[at] != rim {
                            continue;
                        }
                        let q = self.t.turned[at];
                        // Counted under the first read side it matches.
                        if step.reads[..ri].iter().any(|&(s2, sl2)| q[s2 as usize] == slots[sl2 as usize]) {
                            continue;
                        }
                        let gain =
                            step.reads.iter().filter(|&&(s2, sl2)| q[s2 as usize] == slots[sl2 as usize]).count();
                        offer(&mut self.best, gain as u32, u32::from(p) << 2 | u32::from(r), &mut rng);
                    }
                }
                if self.best.is_empty() {
                    // Nothing matches: every free piece of the class, in each turn that fits.
                    for &p in &self.t.of_class[k] {
                        if is_used(p) {
                            continue;
                        }
                        for r in 0..4u32 {
                            if self.t.grey[4 * p as usize + r as usize] == rim {
                                offer(&mut self.best, 0, u32::from(p) << 2 | r, &mut rng);
                            }
                        }
                    }
                }
                for &(gain, _, pl) in &self.best {
                    self.pool_score.push(base + gain);
                    self.pool_parent.push(i as u32);
                    self.pool_pl.push(pl);
                }
            }
            // Select: every child above the cut score, and a random share of those at it.
            let m = self.pool_score.len();
            let keep = m.min(width);
            self.histogram.fill(0);
            for &s in &self.pool_score {
                self.histogram[s as usize] += 1;
            }
            let mut above = 0usize;
            let mut cut = self.histogram.len() - 1;
            while above + (self.histogram[cut] as usize) < keep {
                above += self.histogram[cut] as usize;
                cut -= 1;
            }
            let (mut need, mut ties) = (keep - above, self.histogram[cut] as usize);
            let mut next = 0usize;
            let row = step_i * self.width;
            for c in 0..m {
                let s = self.pool_score[c] as usize;
                let take = if s > cut {
                    true
                } else if s == cut && need > 0 {
                    let pick = rng.random_range(0..ties) < need;
                    ties -= 1;
                    need -= usize::from(pick);
                    pick
                } else {
                    if s == cut {
                        ties -= 1;
                    }
                    false
                };
                if !take {
                    continue;
                }
                let parent = self.pool_parent[c] as usize;
                let pl = self.pool_pl[c];
                let (lo, hi) = self.slots.split_at_mut(1);
                hi[0][next * ns..(next + 1) * ns].copy_from_slice(&lo[0][parent * ns..(parent + 1) * ns]);
                let (lo, hi) = self.used.split_at_mut(1);
                hi[0][next * nw..(next + 1) * nw].copy_from_slice(&lo[0][parent * nw..(parent + 1) * nw]);
                let p = (pl >> 2) as usize;
                self.used[1][next * nw + p / 64] |= 1 << (p % 64);
                let q = self.t.turned[4 * p + (pl & 3) as usize];
                for &(sd, slot) in &step.writes {
                    self.slots[1][next * ns + slot as usize] = q[sd as usize];
                }
                self.score[1][next] = s as u32;
                self.hist_parent[row + next] = parent as u32;
                self.hist_pl[row + next] = pl;
                next += 1;
            }
            debug_assert_eq!(next, keep);
            self.slots.swap(0, 1);
            self.used.swap(0, 1);
            self.score.swap(0, 1);
            self.survivors[step_i] = next as u32;
            alive = next;
            done = step_i + 1;
        }
        // The best survivor of the last step reached (the first of the highest score).
        let n = self.plan.steps.len();
        let mut cells = vec![None; n];
        let (mut at, mut score) = (0usize, 0u32);
        for i in 0..alive {
            if self.score[0][i] > score {
                (at, score) = (i, self.score[0][i]);
            }
        }
        for t in (0..done).rev() {
            let pl = self.hist_pl[t * self.width + at];
            cells[self.plan.steps[t].cell as usize] = Some(Placement { piece: (pl >> 2) as u16, rot: (pl & 3) as u8 });
            at = self.hist_parent[t * self.width + at] as usize;
        }
        Built { cells, score: score as usize, complete: done == n, nodes }
    }
}

#[cfg(test)]
mod tests {
    use super::super::order::BeamOrder;
    use super::*;
    use crate::puzzle::Board;
    use crate::puzzle::generate::puzzle;

    fn build(p: &Puzzle, order: BeamOrder, width: usize, children: usize, seed: u64) -> Built {
        let plan = Plan::new(p, &order.cells(p.width(), p.height(), 2));
        let t = Tables::new(p);
        let cancel = Cancel::new();
        Beam::new(&plan, &t, width, children).run(&BeamRun { width, children, seed, deadline: None, cancel: &cancel })
    }

    /// A full board of distinct pieces, each in a frame-legal turn, scored as the verifier
    /// scores it.
    #[test]
    fn every_board_is_a_frame_legal_permutation_scored_right() {
        for (w, h, seed) in [(3, 3, 0), (4, 4, 1), (5, 7, 2), (8, 8, 3), (2, 2, 4), (16, 16, 5)] {
            let p = puzzle(w, h, seed);
            for order in [BeamOrder::RowMajor, BeamOrder::Comb, BeamOrder::Spiral] {
                for (width, children) in [(1, 1), (8, 2), (64, 3)] {
                    let b = build(&p, order, width, children, seed);
                    assert!(b.complete);
                    let board = Board { width: w, height: h, cells: b.cells.iter().map(|c| c.unwrap()).collect() };
                    let mut seen = vec![false; p.cells()];
                    for (c, pl) in board.cells.iter().enumerate() {
                        assert!(!std::mem::replace(&mut seen[pl.piece as usize], true), "piece twice");
                        let q = rotated(p.pieces()[pl.piece as usize], pl.rot);
                        assert!(crate::puzzle::fits_rim(w, h, c, q), "{order:?}: cell {c} off the rim");
                    }
                    assert_eq!(p.score(&board), b.score, "{order:?} {w}x{h} width {width}");
                }
            }
        }
    }

    #[test]
    fn the_same_seed_builds_the_same_board_and_width_helps() {
        let p = puzzle(8, 8, 7);
        let a = build(&p, BeamOrder::Comb, 256, 2, 3);
        let b = build(&p, BeamOrder::Comb, 256, 2, 3);
        assert_eq!(a.cells, b.cells);
        let narrow: usize = (0..4).map(|s| build(&p, BeamOrder::RowMajor, 1, 1, s).score).sum();
        let wide: usize = (0..4).map(|s| build(&p, BeamOrder::RowMajor, 512, 3, s).score).sum();
        assert!(wide > narrow, "width 512 scored {wide} over four seeds, width 1 {narrow}");
    }

    /// On boards small enough to enumerate, a beam as wide as the tree finds the best score.
    #[test]
    fn a_beam_as_wide_as_the_tree_finds_the_optimum() {
        for seed in 0..6 {
            let p = puzzle(3, 3, seed);
            let b = build(&p, BeamOrder::RowMajor, 1 << 16, 64, seed);
            assert_eq!(b.score, p.max_score(), "seed {seed}: the planted solution scores {}", p.max_score());
        }
    }

    #[test]
    fn hints_stay_where_they_are() {
        let (p, sol) = crate::puzzle::generate::generate(&crate::puzzle::generate::GenerateOptions {
            width: 6,
            height: 6,
            frame_colors: None,
            inner_colors: None,
            seed: 9,
        })
        .unwrap();
        let hints: Vec<crate::puzzle::Hint> = [0usize, 14, 21, 35]
            .iter()
            .map(|&c| crate::puzzle::Hint { cell: c, piece: sol.cells[c].piece as usize, rot: sol.cells[c].rot })
            .collect();
        let p = Puzzle::new(6, 6, p.pieces().to_vec(), hints.clone()).unwrap();
        for order in [BeamOrder::RowMajor, BeamOrder::Comb, BeamOrder::Spiral] {
            let b = build(&p, order, 32, 2, 1);
            for h in &hints {
                assert_eq!(b.cells[h.cell], Some(Placement { piece: h.piece as u16, rot: h.rot }));
            }
        }
    }

    #[test]
    fn a_deadline_in_the_past_returns_a_partial_board() {
        let p = puzzle(6, 6, 1);
        let plan = Plan::new(&p, &BeamOrder::RowMajor.cells(6, 6, 2));
        let t = Tables::new(&p);
        let cancel = Cancel::new();
        let run = BeamRun { width: 16, children: 2, seed: 0, deadline: Some(Instant::now()), cancel: &cancel };
        let b = Beam::new(&plan, &t, 16, 2).run(&run);
        assert!(!b.complete);
        assert!(b.cells.iter().all(Option::is_none));
        cancel.cancel();
        let run = BeamRun { deadline: None, ..run };
        assert!(!Beam::new(&plan, &t, 16, 2).run(&run).complete);
    }
}
