//! The hill-climber: the simplest local-search control.
//!
//! It works on full boards: every cell holds a piece of its own class (corner, edge, inner) in a
//! rotation whose grey sides face the rim, so the only thing that can be wrong is an interior
//! join. A run starts from a random such board (pieces shuffled within each class, each turned
//! to fit its rim) and repeatedly proposes one of three moves:
//!
//! - **rotate**: turn one inner piece in place;
//! - **swap**: exchange two pieces of the same class, each re-oriented to its new cell's rim
//!   (inner pieces keep their rotation);
//! - **swap-rotate**: the same exchange, with the inner pieces taking random rotations.
//!
//! A move is kept when it does not lower the score (matched interior joins): plain first-improvement
//! hill climbing that also walks plateaus, the classic "sideways moves" local search of Selman,
//! Levesque & Mitchell (GSAT, 1992). The score change is computed from the joins of the touched
//! cells only, so a move costs O(1). After `plateau` consecutive moves without a strict
//! improvement the climber restarts from a fresh random board (random-restart hill climbing).
//!
//! ARCHITECTURE.md §7 records why this control exists: a hill-climber once beat the difference map on
//! the map's own benchmark. This module also holds the pieces shared with [`super::alns`]: the
//! static `Frame` of a puzzle (classes, rim rotations, neighbours) and [`LocalResult`].

use crate::cancel::Cancel;
use crate::puzzle::{Board, Class, Piece, Placement, Puzzle, cell_class, piece_class, rotated};
use crate::verify;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::{Duration, Instant};

/// Marker for "no neighbour" in [`Frame::nb`].
pub(crate) const NONE: u32 = u32::MAX;

/// Static tables of one puzzle for local search, built once per run.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    pub width: usize,
    pub height: usize,
    /// The four rotations of every piece: `rot[p][r]` is piece `p` turned clockwise `r` times.
    pub rot: Vec<[Piece; 4]>,
    /// Neighbour of each cell per side, [`NONE`] on the rim.
    pub nb: Vec<[u32; 4]>,
    /// Class index (corner 0, edge 1, inner 2) of each cell.
    pub cell_class: Vec<u8>,
    /// Class index of each piece.
    pub piece_class: Vec<u8>,
    /// Grey-side mask of each piece (bit `s` set when stored side `s` is grey).
    piece_mask: Vec<u8>,
    /// Rim mask of each cell (bit `s` set when side `s` faces the rim).
    cell_mask: Vec<u8>,
    /// `fit[piece_mask][cell_mask]`: the smallest rotation that puts the grey sides on the rim.
    fit: [[u8; 16]; 16],
    /// Cells not fixed by a hint, per class.
    pub free_cells: [Vec<u32>; 3],
    /// Pieces not fixed by a hint, per class.
    pub free_pieces: [Vec<u16>; 3],
    /// Hinted cells (never moved).
    pub fixed: Vec<bool>,
    /// The hint placements, by cell.
    pub hint_at: Vec<Option<Placement>>,
    pub max_score: usize,
}

pub(crate) fn class_index(c: Class) -> u8 {
    match c {
        Class::Corner => 0,
        Class::Edge => 1,
        Class::Inner => 2,
    }
}

/// Rotates a 4-bit side mask clockwise by `r` quarter turns (bit `s` moves to bit `s + r`).
fn rotl4(m: u8, r: u8) -> u8 {
    let r = r % 4;
    ((m << r) | (m >> ((4 - r) % 4))) & 0xF
}

impl Frame {
    pub fn new(puzzle: &Puzzle) -> Self {
        let (w, h, n) = (puzzle.width(), puzzle.height(), puzzle.cells());
        let rot: Vec<[Piece; 4]> = puzzle.pieces().iter().map(|&p| [0, 1, 2, 3].map(|r| rotated(p, r))).collect();
        let nb: Vec<[u32; 4]> =
            (0..n).map(|c| [0, 1, 2, 3].map(|s| puzzle.neighbour(c, s).map_or(NONE, |d| d as u32))).collect();
        let cell_cls: Vec<u8> = (0..n).map(|c| class_index(cell_class(w, h, c))).collect();
        // Puzzle::new has checked that every piece has a class.
        let piece_cls: Vec<u8> = puzzle.pieces().iter().map(|&p| piece_class(p).map_or(2, class_index)).collect();
        let piece_mask: Vec<u8> =
            puzzle.pieces().iter().map(|p| (0..4).filter(|&s| p[s] == 0).fold(0, |m, s| m | 1 << s)).collect();
        let cell_mask: Vec<u8> =
            nb.iter().map(|a| (0..4).filter(|&s| a[s] == NONE).fold(0, |m, s| m | 1 << s)).collect();
        let mut fit = [[0u8; 16]; 16];
        for (pm, row) in fit.iter_mut().enumerate() {
            for (cm, f) in row.iter_mut().enumerate() {
                *f = (0..4u8).find(|&r| rotl4(pm as u8, r) == cm as u8).unwrap_or(0);
            }
        }
        let mut fixed = vec![false; n];
        let mut hint_at = vec![None; n];
        let mut hinted_piece = vec![false; n];
        for hnt in puzzle.hints() {
            fixed[hnt.cell] = true;
            hinted_piece[hnt.piece] = true;
            hint_at[hnt.cell] = Some(Placement { piece: hnt.piece as u16, rot: hnt.rot });
        }
        let mut free_cells: [Vec<u32>; 3] = Default::default();
        for c in (0..n).filter(|&c| !fixed[c]) {
            free_cells[cell_cls[c] as usize].push(c as u32);
        }
        let mut free_pieces: [Vec<u16>; 3] = Default::default();
        for p in (0..n).filter(|&p| !hinted_piece[p]) {
            free_pieces[piece_cls[p] as usize].push(p as u16);
        }
        Frame {
            width: w,
            height: h,
            rot,
            nb,
            cell_class: cell_cls,
            piece_class: piece_cls,
            piece_mask,
            cell_mask,
            fit,
            free_cells,
            free_pieces,
            fixed,
            hint_at,
            max_score: puzzle.max_score(),
        }
    }

    pub fn cells(&self) -> usize {
        self.nb.len()
    }

    /// The rotation that puts the grey sides of `piece` on the rim of `cell` (any rotation
    /// fits an inner cell; this returns 0 there).
    #[inline]
    pub fn rim_rot(&self, piece: u16, cell: usize) -> u8 {
        self.fit[self.piece_mask[piece as usize] as usize][self.cell_mask[cell] as usize]
    }

    /// Colours shown by a placement.
    #[inline]
    pub fn colors(&self, pl: Placement) -> Piece {
        self.rot[pl.piece as usize][pl.rot as usize]
    }

    /// Fills `cells` with a random full board: hints in place, the free pieces of each class
    /// shuffled over the free cells of that class, corner and edge pieces turned to fit the rim,
    /// inner pieces in a random rotation. `pool` is scratch.
    pub fn random_board(&self, rng: &mut Xoshiro256PlusPlus, cells: &mut [Placement], pool: &mut Vec<u16>) {
        for (c, h) in self.hint_at.iter().enumerate() {
            if let Some(pl) = h {
                cells[c] = *pl;
            }
        }
        for k in 0..3 {
            pool.clear();
            pool.extend_from_slice(&self.free_pieces[k]);
            pool.shuffle(rng);
            for (&c, &p) in self.free_cells[k].iter().zip(pool.iter()) {
                let c = c as usize;
                let rot = if k == 2 { rng.random_range(0..4u8) } else { self.rim_rot(p, c) };
                cells[c] = Placement { piece: p, rot };
            }
        }
    }

    /// Matched joins of cell `c` in the picture `col`, skipping the join to `skip`.
    #[inline]
    pub fn matched_around(&self, col: &[Piece], c: usize, skip: u32) -> i32 {
        let mut m = 0;
        let here = col[c];
        for (s, &d) in self.nb[c].iter().enumerate() {
            if d != NONE && d != skip {
                m += i32::from(here[s] == col[d as usize][(s + 2) % 4]);
            }
        }
        m
    }

    /// Full recount of the matched joins of a picture.
    pub fn score_of(&self, col: &[Piece]) -> usize {
        let mut score = 0;
        for c in 0..self.cells() {
            for s in [1, 2] {
                let d = self.nb[c][s];
                if d != NONE {
                    score += usize::from(col[c][s] == col[d as usize][(s + 2) % 4]);
                }
            }
        }
        score
    }

    #[cfg(test)]
    pub fn board(&self, cells: &[Placement]) -> Board {
        Board { width: self.width, height: self.height, cells: cells.to_vec() }
    }
}

/// What a local search reports. Serialises without the board.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LocalResult {
    /// The best board seen (a solution when `solved`).
    #[serde(skip)]
    pub board: Board,
    /// Matched interior joins of `board`.
    pub best_score: usize,
    /// `J = 2WH - W - H`.
    pub max_score: usize,
    /// `board` matches every join and passed [`verify::check`].
    pub solved: bool,
    /// Moves proposed (hill-climber), or pieces placed by repairs (ALNS).
    pub moves: u64,
    /// `moves` per second.
    pub moves_per_s: f64,
    /// Fresh random boards started after the first.
    pub restarts: u64,
    /// Seconds the search took, wall clock.
    pub wall_s: f64,
    /// `(seconds, score)` at the start and at each new best score: the score reached against
    /// time.
    #[serde(skip)]
    pub trace: Vec<(f64, usize)>,
    /// The seed it ran with.
    pub seed: u64,
}

impl LocalResult {
    pub(crate) fn finish(
        puzzle: &Puzzle,
        best: &[Placement],
        best_score: usize,
        moves: u64,
        restarts: u64,
        seed: u64,
        start: Instant,
    ) -> Self {
        let board = Board { width: puzzle.width(), height: puzzle.height(), cells: best.to_vec() };
        let max_score = puzzle.max_score();
        // Never trust the search: a solution is reported only after the exact check.
        let solved = best_score == max_score && verify::check(puzzle, &board).valid;
        debug_assert!(best_score < max_score || solved, "local search claimed an invalid solution");
        let wall_s = start.elapsed().as_secs_f64();
        LocalResult {
            board,
            best_score,
            max_score,
            solved,
            moves,
            moves_per_s: if wall_s > 0.0 { moves as f64 / wall_s } else { 0.0 },
            restarts,
            wall_s,
            seed,
            trace: Vec::new(),
        }
    }
}

/// Hill-climber parameters.
#[derive(Clone, Debug)]
pub struct HillConfig {
    /// The climb's seed.
    pub seed: u64,
    /// Stop after this many proposed moves.
    pub max_moves: Option<u64>,
    /// Wall-clock limit of the climb.
    pub time_limit: Option<Duration>,
    /// Restart from a fresh random board after this many consecutive moves without a strict
    /// improvement (0: never restart).
    pub plateau: u64,
    /// Relative frequencies of the rotate, swap and swap-rotate moves (moves that the board
    /// cannot make, e.g. rotations without inner cells, are skipped).
    pub move_weights: [u32; 3],
    /// Ends the climb at its next check when tripped, as at the time limit.
    pub cancel: Cancel,
}

impl Default for HillConfig {
    /// [`HillOptions::default`] (where the defaults live), seed 0, the default cap of moves.
    fn default() -> Self {
        HillOptions::default().config(0, Some(HillOptions::MAX_MOVES), None, Cancel::new())
    }
}

crate::options::options_table! {
    /// The options of the hill-climber (`--method hill`).
    pub struct HillOptions {
        /// Hill-climber: restart after this many moves without improvement (0: never).
        [LocalSearch]
        pub plateau: u64 = 5_000,
    }
}

impl crate::options::Options for HillOptions {}

impl HillOptions {
    /// The cap on moves of a run without a time limit (`--max-iters` sets another).
    pub const MAX_MOVES: u64 = 100_000_000;

    /// The climber's configuration with these options: seed, cap of moves, time limit and
    /// token as given.
    pub fn config(
        &self,
        seed: u64,
        max_moves: Option<u64>,
        time_limit: Option<Duration>,
        cancel: Cancel,
    ) -> HillConfig {
        HillConfig { seed, max_moves, time_limit, plateau: self.plateau, move_weights: [1, 1, 1], cancel }
    }
}

/// One proposed move, with what is needed to undo it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    /// Cell, old rotation.
    Rotate { c: u32, old: u8 },
    /// Cells and their old placements.
    Swap { a: u32, b: u32, old_a: Placement, old_b: Placement },
}

/// The climber's state: a full board, its colour picture and its score.
pub(crate) struct Climber {
    pub frame: Frame,
    pub cells: Vec<Placement>,
    pub col: Vec<Piece>,
    pub score: usize,
    pub rng: Xoshiro256PlusPlus,
    pool: Vec<u16>,
    /// Cumulative move weights over the available kinds.
    cum: [u32; 3],
    /// Free cells of classes with at least two free cells (swap candidates).
    swappable: Vec<u32>,
}

impl Climber {
    pub fn new(puzzle: &Puzzle, seed: u64, weights: [u32; 3]) -> Self {
        let frame = Frame::new(puzzle);
        let n = frame.cells();
        let swappable: Vec<u32> =
            frame.free_cells.iter().filter(|v| v.len() >= 2).flat_map(|v| v.iter().copied()).collect();
        let avail = [!frame.free_cells[2].is_empty(), !swappable.is_empty(), frame.free_cells[2].len() >= 2];
        let mut cum = [0u32; 3];
        let mut acc = 0u32;
        for k in 0..3 {
            if avail[k] {
                acc = acc.saturating_add(weights[k]);
            }
            cum[k] = acc;
        }
        let mut cl = Climber {
            frame,
            cells: vec![Placement::default(); n],
            col: vec![[0; 4]; n],
            score: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            pool: Vec::with_capacity(n),
            cum,
            swappable,
        };
        cl.randomize();
        cl
    }

    /// A fresh random full board.
    pub fn randomize(&mut self) {
        self.frame.random_board(&mut self.rng, &mut self.cells, &mut self.pool);
        for c in 0..self.cells.len() {
            self.col[c] = self.frame.colors(self.cells[c]);
        }
        self.score = self.frame.score_of(&self.col);
    }

    /// True when some move exists.
    pub fn can_move(&self) -> bool {
        self.cum[2] > 0
    }

    #[inline]
    fn set(&mut self, c: usize, pl: Placement) {
        self.cells[c] = pl;
        self.col[c] = self.frame.colors(pl);
    }

    /// Proposes and applies a random move; returns it and the score change.
    /// Requires [`Climber::can_move`].
    pub fn step(&mut self) -> (Move, i32) {
        let x = self.rng.random_range(0..self.cum[2]);
        let kind = self.cum.iter().position(|&t| x < t).unwrap_or(1);
        match kind {
            0 => {
                let inner = &self.frame.free_cells[2];
                let c = inner[self.rng.random_range(0..inner.len())] as usize;
                let old = self.cells[c].rot;
                let before = self.frame.matched_around(&self.col, c, NONE);
                let rot = (old + self.rng.random_range(1..4u8)) % 4;
                self.set(c, Placement { piece: self.cells[c].piece, rot });
                let after = self.frame.matched_around(&self.col, c, NONE);
                self.score = (self.score as i32 + after - before) as usize;
                (Move::Rotate { c: c as u32, old }, after - before)
            }
            _ => {
                let (a, b) = if kind == 2 {
                    let inner = &self.frame.free_cells[2];
                    let i = self.rng.random_range(0..inner.len());
                    let j = (i + self.rng.random_range(1..inner.len())) % inner.len();
                    (inner[i] as usize, inner[j] as usize)
                } else {
                    let a = self.swappable[self.rng.random_range(0..self.swappable.len())] as usize;
                    let class = &self.frame.free_cells[self.frame.cell_class[a] as usize];
                    let b = loop {
                        let b = class[self.rng.random_range(0..class.len())] as usize;
                        if b != a {
                            break b;
                        }
                    };
                    (a, b)
                };
                let (old_a, old_b) = (self.cells[a], self.cells[b]);
                let before =
                    self.frame.matched_around(&self.col, a, NONE) + self.frame.matched_around(&self.col, b, a as u32);
                let (rot_a, rot_b) = if self.frame.cell_class[a] != 2 {
                    (self.frame.rim_rot(old_b.piece, a), self.frame.rim_rot(old_a.piece, b))
                } else if kind == 2 {
                    (self.rng.random_range(0..4u8), self.rng.random_range(0..4u8))
                } else {
                    (old_b.rot, old_a.rot)
                };
                self.set(a, Placement { piece: old_b.piece, rot: rot_a });
                self.set(b, Placement { piece: old_a.piece, rot: rot_b });
                let after =
                    self.frame.matched_around(&self.col, a, NONE) + self.frame.matched_around(&self.col, b, a as u32);
                self.score = (self.score as i32 + after - before) as usize;
                (Move::Swap { a: a as u32, b: b as u32, old_a, old_b }, after - before)
            }
        }
    }

    /// Undoes a move made by [`Climber::step`] (`delta` is what it returned).
    pub fn undo(&mut self, m: Move, delta: i32) {
        match m {
            Move::Rotate { c, old } => {
                let c = c as usize;
                self.set(c, Placement { piece: self.cells[c].piece, rot: old });
            }
            Move::Swap { a, b, old_a, old_b } => {
                self.set(a as usize, old_a);
                self.set(b as usize, old_b);
            }
        }
        self.score = (self.score as i32 - delta) as usize;
    }
}

/// Runs the hill-climber until it solves the puzzle or a limit is reached. With neither
/// `max_moves` nor `time_limit` set it runs until solved.
pub fn hill_climb(puzzle: &Puzzle, cfg: &HillConfig) -> LocalResult {
    let start = Instant::now();
    let mut cl = Climber::new(puzzle, cfg.seed, cfg.move_weights);
    let mut best = cl.cells.clone();
    let mut best_score = cl.score;
    let mut trace = vec![(start.elapsed().as_secs_f64(), best_score)];
    let (mut moves, mut restarts, mut stale) = (0u64, 0u64, 0u64);
    let max_score = cl.frame.max_score;
    while best_score < max_score && cl.can_move() {
        if cfg.max_moves.is_some_and(|m| moves >= m) {
            break;
        }
        if moves % 4096 == 0 && (cfg.time_limit.is_some_and(|t| start.elapsed() >= t) || cfg.cancel.is_cancelled()) {
            break;
        }
        moves += 1;
        let (m, delta) = cl.step();
        if delta < 0 {
            cl.undo(m, delta);
            stale += 1;
        } else if delta > 0 {
            stale = 0;
            if cl.score > best_score {
                best_score = cl.score;
                best.copy_from_slice(&cl.cells);
                trace.push((start.elapsed().as_secs_f64(), best_score));
            }
        } else {
            stale += 1;
        }
        if cfg.plateau > 0 && stale >= cfg.plateau {
            cl.randomize();
            restarts += 1;
            stale = 0;
            if cl.score > best_score {
                best_score = cl.score;
                best.copy_from_slice(&cl.cells);
                trace.push((start.elapsed().as_secs_f64(), best_score));
            }
        }
    }
    LocalResult { trace, ..LocalResult::finish(puzzle, &best, best_score, moves, restarts, cfg.seed, start) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::Hint;
    use crate::puzzle::generate::puzzle;
    use crate::puzzle::generate::{GenerateOptions, generate};

    fn assert_consistent(p: &Puzzle, cl: &Climber) {
        let board = cl.frame.board(&cl.cells);
        assert_eq!(cl.score, p.score(&board), "incremental score drifted from the recount");
        for c in 0..cl.cells.len() {
            assert_eq!(cl.col[c], cl.frame.colors(cl.cells[c]));
            assert!(crate::puzzle::fits_rim(p.width(), p.height(), c, cl.col[c]), "cell {c} breaks the rim");
        }
        let mut used = vec![false; p.cells()];
        for pl in &cl.cells {
            assert!(!std::mem::replace(&mut used[pl.piece as usize], true), "piece used twice");
        }
    }

    #[test]
    fn rim_rotation_table_matches_fits_rim() {
        let p = puzzle(5, 4, 2);
        let f = Frame::new(&p);
        for c in 0..p.cells() {
            for (pi, &piece) in p.pieces().iter().enumerate() {
                if f.piece_class[pi] == f.cell_class[c] && f.cell_class[c] != 2 {
                    let r = f.rim_rot(pi as u16, c);
                    assert!(crate::puzzle::fits_rim(5, 4, c, rotated(piece, r)));
                }
            }
        }
    }

    #[test]
    fn incremental_delta_equals_full_recount() {
        for (w, h, seed) in [(4, 4, 0), (5, 3, 1), (7, 6, 2), (2, 2, 3), (2, 5, 4), (3, 3, 5)] {
            let p = puzzle(w, h, seed);
            let mut cl = Climber::new(&p, seed, [1, 1, 1]);
            assert_consistent(&p, &cl);
            if !cl.can_move() {
                continue;
            }
            for i in 0..5_000 {
                let before = p.score(&cl.frame.board(&cl.cells));
                let (m, delta) = cl.step();
                let after = p.score(&cl.frame.board(&cl.cells));
                assert_eq!(after as i32 - before as i32, delta, "{w}x{h} move {i}: {m:?}");
                if cl.rng.random_bool(0.5) {
                    cl.undo(m, delta);
                    assert_eq!(p.score(&cl.frame.board(&cl.cells)), before);
                }
                if i % 97 == 0 {
                    assert_consistent(&p, &cl);
                }
            }
            assert_consistent(&p, &cl);
        }
    }

    #[test]
    fn hints_stay_put() {
        let (p, sol) =
            generate(&GenerateOptions { width: 5, height: 5, frame_colors: None, inner_colors: None, seed: 7 })
                .unwrap();
        let hints: Vec<Hint> = [0usize, 6, 12]
            .iter()
            .map(|&c| Hint { cell: c, piece: sol.cells[c].piece as usize, rot: sol.cells[c].rot })
            .collect();
        let p = Puzzle::new(5, 5, p.pieces().to_vec(), hints.clone()).unwrap();
        let mut cl = Climber::new(&p, 1, [1, 1, 1]);
        for _ in 0..2_000 {
            let (m, d) = cl.step();
            if d < 0 {
                cl.undo(m, d);
            }
            for hnt in &hints {
                assert_eq!(cl.cells[hnt.cell], Placement { piece: hnt.piece as u16, rot: hnt.rot });
            }
        }
        assert_consistent(&p, &cl);
    }

    #[test]
    fn solves_small_generated_puzzles_and_verifies() {
        for seed in 0..4 {
            let p = puzzle(4, 4, seed);
            let cfg = HillConfig { seed, max_moves: Some(20_000_000), ..Default::default() };
            let r = hill_climb(&p, &cfg);
            assert!(r.solved, "seed {seed}: best {} of {}", r.best_score, r.max_score);
            assert!(verify::check(&p, &r.board).valid);
            assert_eq!(r.best_score, p.score(&r.board));
        }
    }

    #[test]
    fn limits_and_boards_without_moves() {
        let p = puzzle(6, 6, 3);
        let r = hill_climb(&p, &HillConfig { max_moves: Some(1_000), ..Default::default() });
        assert!(r.moves <= 1_000);
        assert_eq!(r.best_score, p.score(&r.board));
        // A 2x2 board has four corners and no inner cell: only swaps.
        let p = puzzle(2, 2, 1);
        let r = hill_climb(&p, &HillConfig { max_moves: Some(100_000), ..Default::default() });
        assert!(r.solved);
    }
}
