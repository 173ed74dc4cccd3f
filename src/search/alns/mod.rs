//! Adaptive large-neighbourhood search (ALNS): the destroy-and-repair control.
//!
//! Large-neighbourhood search is Paul Shaw's (CP 1998): rip out a region of a full board and
//! rebuild it with something smarter than a single-piece move. The adaptive version is Ropke &
//! Pisinger's (Transportation Science 2006): a portfolio of destroy operators drawn by a roulette
//! wheel whose weights follow recent success. One iteration:
//!
//! 1. **Destroy.** Draw an operator with probability `w_o / Σ w`; lift the `k` cells it selects
//!    (`k` uniform in `destroy_min..=destroy_max`). The operators ([`Destroy`]): random cells;
//!    cells on mismatched joins; the most-conflicted cells; the worst band of rows or columns;
//!    a connected component of the mismatch graph, optionally with a one-cell halo; rectangles;
//!    arcs of the board's concentric rings; and scattered (pairwise non-adjacent) cells.
//! 2. **Repair.** When the holes are pairwise non-adjacent, each hole's value for a piece depends
//!    only on its fixed neighbours, so the optimal refill is an assignment problem: value =
//!    max over rim-fitting rotations of the seams matched, one [`Assigner`] per piece class
//!    (Schaus & Deville's Eternity II neighbourhood, 2008). Otherwise a greedy
//!    most-constrained-first refill: the empty cell with the most placed neighbours first, every
//!    lifted piece of its class in every rim-fitting rotation, the placement matching the most
//!    seams, ties at random.
//! 3. **Accept.** Simulated annealing (Kirkpatrick, Gelatt & Vecchi 1983): keep the board if the
//!    score change `Δ >= 0`, else with probability `exp(Δ / T)`; `T` cools geometrically and is
//!    reheated after a stall. A rejected board is restored from the snapshot of the holes.
//! 4. **Adapt.** `w_o ← λ w_o + (1 - λ) ψ` with tiered rewards ψ: new global best > improvement >
//!    accepted (sideways or downhill, and actually changed) > rejected or unchanged.
//!
//! The board keeps an incremental **mismatch map**: per-cell mismatch counts (bucketed, so the
//! most conflicted cells are found in O(k)), the set of mismatched joins, and per-row and
//! per-column totals, all maintained by every lift and place in O(1). Destroy is O(k) (bands and
//! rings scan one line), repair O(k · |C|), evaluation O(k). All scratch lives in one struct
//! created per run: the iteration loop does not allocate.
//!
//! Files: this one (the parameters, the run and its loop, the search's scratch), `state.rs`
//! (the board and its mismatch map), `destroy.rs` (the operators), `repair.rs` (the exact and
//! the greedy refill).

mod destroy;
mod repair;
mod state;

use super::hill::{Frame, LocalResult};
use crate::assign::Assigner;
use crate::puzzle::{Placement, Puzzle};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use state::State;
use std::time::{Duration, Instant};

/// The position of the largest value seen, ties broken uniformly at random (reservoir
/// sampling: the i-th tie replaces the choice with probability 1/i).
#[derive(Clone, Copy)]
struct ArgMax {
    value: u32,
    at: usize,
    ties: u32,
}

impl ArgMax {
    fn new() -> Self {
        ArgMax { value: 0, at: 0, ties: 0 }
    }

    /// Offers `value` at `at`; the first offer always wins.
    #[inline]
    fn offer(&mut self, value: u32, at: usize, rng: &mut Xoshiro256PlusPlus) {
        if self.ties == 0 || value > self.value {
            *self = ArgMax { value, at, ties: 1 };
        } else if value == self.value {
            self.ties += 1;
            if rng.random_range(0..self.ties) == 0 {
                self.at = at;
            }
        }
    }
}

/// Destroy operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Destroy {
    /// k random cells (the baseline).
    Random,
    /// Endpoints of randomly chosen mismatched joins, grown locally to k cells.
    Mismatch,
    /// The k cells with the most mismatched joins (ties at random).
    Conflicted,
    /// The band of rows or columns with the most mismatches (a window of the worst line when a
    /// line is longer than k).
    Band,
    /// A connected component of the mismatch graph, up to k cells.
    Component,
    /// A component of up to k/2 cells plus its one-cell halo, up to k cells.
    ComponentHalo,
    /// A rectangle of about k cells around a conflicted cell.
    Rectangle,
    /// An arc of up to k cells of the concentric ring (frame) through a conflicted cell.
    Ring,
    /// Up to k pairwise non-adjacent cells of one checkerboard colour, conflicted cells first:
    /// always refilled exactly by the assignment repair.
    Scattered,
}

impl Destroy {
    /// Every operator, the default portfolio.
    pub const ALL: [Destroy; 9] = [
        Destroy::Random,
        Destroy::Mismatch,
        Destroy::Conflicted,
        Destroy::Band,
        Destroy::Component,
        Destroy::ComponentHalo,
        Destroy::Rectangle,
        Destroy::Ring,
        Destroy::Scattered,
    ];

    /// The operator's name, as `--operators` and the report spell it.
    pub fn name(self) -> &'static str {
        match self {
            Destroy::Random => "random",
            Destroy::Mismatch => "mismatch",
            Destroy::Conflicted => "conflicted",
            Destroy::Band => "band",
            Destroy::Component => "component",
            Destroy::ComponentHalo => "component-halo",
            Destroy::Rectangle => "rectangle",
            Destroy::Ring => "ring",
            Destroy::Scattered => "scattered",
        }
    }
}

/// How the first board (and every restart) is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Init {
    /// Pieces shuffled within their class, turned to fit the rim.
    Random,
    /// The greedy repair run on the empty board.
    Greedy,
}

/// ALNS parameters.
#[derive(Clone, Debug)]
pub struct AlnsConfig {
    /// The search's seed.
    pub seed: u64,
    /// Stop after this many destroy-and-repair iterations.
    pub max_iterations: Option<u64>,
    /// Wall-clock limit of the search.
    pub time_limit: Option<Duration>,
    /// Smallest number of cells destroyed per iteration.
    pub destroy_min: usize,
    /// Largest number of cells destroyed per iteration; 0 picks `clamp(cells / 3, 4, 48)`.
    pub destroy_max: usize,
    /// The operator portfolio; empty means [`Destroy::ALL`].
    pub operators: Vec<Destroy>,
    /// Refill pairwise non-adjacent holes with the exact assignment (else always greedy).
    pub exact_repair: bool,
    /// How the first board (and every restart) is built.
    pub init: Init,
    /// Initial (and reheat) temperature of the acceptance rule.
    pub temperature: f64,
    /// Geometric cooling factor per iteration.
    pub cooling: f64,
    /// Temperature floor.
    pub min_temperature: f64,
    /// Reheat to `temperature` after this many iterations without a new best of the current
    /// run (0: never).
    pub reheat_after: u64,
    /// Reaction factor λ of the weight update `w ← λ w + (1 - λ) ψ`.
    pub reaction: f64,
    /// Rewards ψ for: new global best, improvement, accepted change, rejected or unchanged.
    pub rewards: [f64; 4],
    /// Weight floor, so no operator starves.
    pub min_weight: f64,
    /// Start a fresh board after this many iterations without a new best of the current run
    /// (0: never).
    pub restart_after: u64,
    /// Ends the search at its next check when tripped, as at the time limit.
    pub cancel: crate::cancel::Cancel,
    /// Start from this full board (by cell) instead of building one; a restart then goes back
    /// to the best board so far. The caller has checked it ([`check_start`]).
    pub start: Option<Vec<Placement>>,
}

crate::options::one_value!(Destroy);

crate::options::options_table! {
    /// The options of adaptive large-neighbourhood search (`--method alns`): what a user sets.
    /// The engine's other settings (cooling, rewards, reaction) are [`AlnsConfig`]'s.
    pub struct AlnsOptions {
        /// ALNS: the fewest cells one destroy removes.
        [LocalSearch]
        pub destroy_min: usize = 4,
        /// ALNS: the most cells one destroy removes (default: a third of the board, 4..=48).
        [LocalSearch]
        pub destroy_max: Option<usize> = None,
        /// ALNS: the destroy operators to use, comma separated (default: all).
        [LocalSearch]
        pub operators: Vec<Destroy> = Vec::new(),
        /// ALNS: no exact (assignment) refill of non-adjacent holes.
        [LocalSearch]
        pub no_exact_repair: bool = false,
        /// ALNS: restart from a new board after this many iterations without a new best (0:
        /// never).
        [LocalSearch]
        pub restart_after: u64 = 2_000,
        /// ALNS: the starting temperature of the annealing acceptance.
        [LocalSearch]
        pub temperature: f64 = 1.5,
        /// ALNS: polish this board instead of building one: a viewer link (e2.bucas.name or
        /// eternity2.dev), or a file holding one or a board in Brendan Owen's solution format
        /// (`solve -o`). A link with empty cells (a partial board) is completed greedily
        /// first, the rule the scan and the backtracker use for their best boards; with
        /// `--max-iters 0` that completion is all the run does.
        [LocalSearch, value_name = "BOARD"]
        pub start: Option<String> = None,
    }
}

impl crate::options::Options for AlnsOptions {
    fn check(&self) -> Result<(), crate::error::SpecError> {
        use crate::error::SpecError;
        if self.destroy_min == 0 {
            return Err(SpecError::range("destroy_min", "at least 1", 0));
        }
        if let Some(m) = self.destroy_max.filter(|&m| m < self.destroy_min) {
            return Err(SpecError::range("destroy_max", "at least --destroy-min", m));
        }
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(SpecError::range("temperature", "a positive number", self.temperature));
        }
        Ok(())
    }
}

impl AlnsOptions {
    /// The cap on iterations of a run without a time limit (`--max-iters` sets another).
    pub const MAX_ITERATIONS: u64 = 10_000_000;

    /// The board `start` names, read and checked against `puzzle` ([`check_start`]); None
    /// without one. A link is read as it is; anything else is a file's path.
    pub fn start_board(&self, puzzle: &Puzzle) -> Result<Option<Vec<Placement>>, crate::error::SpecError> {
        let Some(given) = &self.start else { return Ok(None) };
        let bad = |reason: String| crate::error::SpecError::Value { key: "start".into(), reason };
        let trimmed = given.trim();
        let text = if trimmed.starts_with("http") || trimmed.starts_with('#') {
            trimmed.to_string()
        } else {
            let bytes = std::fs::read(trimmed).map_err(|e| bad(format!("cannot read {trimmed}: {e}")))?;
            crate::puzzle::format::text_of(&bytes).map_err(|e| bad(format!("{trimmed}: {e}")))?.to_string()
        };
        let board = if crate::puzzle::format::detect(&text).is_ok_and(|k| k == crate::puzzle::format::Kind::ViewerLink)
        {
            let cells = crate::puzzle::format::parse_partial_viewer_link(text.trim(), puzzle)
                .map_err(|e| bad(e.to_string()))?;
            if cells.iter().all(Option::is_some) {
                crate::puzzle::Board {
                    width: puzzle.width(),
                    height: puzzle.height(),
                    cells: cells.into_iter().flatten().collect(),
                }
            } else {
                complete_greedily(puzzle, &cells, 0)
            }
        } else {
            crate::puzzle::format::parse_solution(&text, puzzle).map_err(|e| bad(e.to_string()))?
        };
        check_start(puzzle, &board).map_err(|why| bad(format!("the board cannot start a polish: {why}")))?;
        Ok(Some(board.cells))
    }

    /// The search's configuration with these options: seed, cap of iterations, time limit
    /// and token as given.
    pub fn config(
        &self,
        seed: u64,
        max_iterations: Option<u64>,
        time_limit: Option<Duration>,
        cancel: crate::cancel::Cancel,
    ) -> AlnsConfig {
        AlnsConfig {
            seed,
            max_iterations,
            time_limit,
            destroy_min: self.destroy_min,
            destroy_max: self.destroy_max.unwrap_or(0),
            operators: self.operators.clone(),
            exact_repair: !self.no_exact_repair,
            init: Init::Greedy,
            temperature: self.temperature,
            cooling: 0.999,
            min_temperature: 0.05,
            reheat_after: 500,
            reaction: 0.95,
            rewards: [10.0, 4.0, 1.0, 0.0],
            min_weight: 0.05,
            restart_after: self.restart_after,
            cancel,
            start: None,
        }
    }
}

impl Default for AlnsConfig {
    /// [`AlnsOptions::default`] (where the options' defaults live, [`AlnsOptions::config`]
    /// holding the engine's), seed 0, the default cap of iterations.
    fn default() -> Self {
        AlnsOptions::default().config(0, Some(AlnsOptions::MAX_ITERATIONS), None, crate::cancel::Cancel::new())
    }
}

/// One destroy operator at the end of a run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OperatorStats {
    /// The operator's name ([`Destroy::name`]).
    pub name: &'static str,
    /// Its adaptive weight at the end of the run (its chance of being picked is in proportion).
    pub weight: f64,
    /// Iterations it was picked for.
    pub uses: u64,
    /// Iterations that raised the global best.
    pub new_best: u64,
    /// Iterations that raised the score.
    pub improved: u64,
    /// Iterations kept (including improvements).
    pub accepted: u64,
}

/// What an ALNS run reports: the [`LocalResult`] fields (`moves` counts pieces placed by
/// repairs) plus the iteration count, reheats and the operator portfolio.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AlnsResult {
    /// The local search's result (`moves` are pieces placed by repairs).
    #[serde(flatten)]
    pub local: LocalResult,
    /// Destroy-and-repair iterations.
    pub iterations: u64,
    /// Iterations per second.
    pub iterations_per_s: f64,
    /// Times the temperature was raised back after a run without a new best.
    pub reheats: u64,
    /// Iterations whose holes were refilled by the exact assignment.
    pub exact_repairs: u64,
    /// Each operator's final weight and counts, in the portfolio's order.
    pub operators: Vec<OperatorStats>,
}

/// One ALNS run: the board, the operator portfolio and all scratch.
pub(crate) struct Search {
    pub f: Frame,
    pub st: State,
    pub rng: Xoshiro256PlusPlus,
    /// Current holes, their old placements, and a membership mark.
    pub holes: Vec<u32>,
    saved: Vec<Placement>,
    in_hole: Vec<bool>,
    /// Repair scratch: open holes, the lifted pieces and which are used.
    open: Vec<u32>,
    pool: Vec<u16>,
    used: Vec<bool>,
    /// Assignment repair scratch: holes and pieces of one class, values, best rotations.
    cls_holes: Vec<u32>,
    cls_pieces: Vec<u16>,
    values: Vec<f32>,
    best_rot: Vec<u8>,
    /// `assigners[m]` solves m x m refills.
    assigners: Vec<Assigner>,
    /// Persistent permutations of the free cells, all and per checkerboard colour.
    perm_all: Vec<u32>,
    perm_par: [Vec<u32>; 2],
    /// Concentric frames, each in walking order, and (frame, index) of every cell.
    rings: Vec<Vec<u32>>,
    ring_of: Vec<(u32, u32)>,
    pub moves: u64,
    pub exact_repairs: u64,
}

impl Search {
    pub fn new(puzzle: &Puzzle, seed: u64, k_max: usize) -> Self {
        let f = Frame::new(puzzle);
        let n = f.cells();
        let (w, h) = (f.width, f.height);
        let perm_all: Vec<u32> = (0..n as u32).filter(|&c| !f.fixed[c as usize]).collect();
        let parity = |c: u32| (c as usize / w + c as usize % w) % 2;
        let perm_par = [0, 1].map(|p| perm_all.iter().copied().filter(|&c| parity(c) == p).collect::<Vec<u32>>());
        let mut rings = Vec::new();
        let mut ring_of = vec![(0, 0); n];
        for d in 0..w.min(h).div_ceil(2) {
            let (top, bottom, left, right) = (d, h - 1 - d, d, w - 1 - d);
            let mut ring = Vec::new();
            ring.extend((left..=right).map(|x| top * w + x));
            ring.extend((top + 1..=bottom).map(|y| y * w + right));
            if bottom > top {
                ring.extend((left..right).rev().map(|x| bottom * w + x));
            }
            if right > left {
                ring.extend((top + 1..bottom).rev().map(|y| y * w + left));
            }
            for (i, &c) in ring.iter().enumerate() {
                ring_of[c] = (rings.len() as u32, i as u32);
            }
            rings.push(ring.into_iter().map(|c| c as u32).collect());
        }
        let k_cap = k_max.min(n);
        Search {
            st: State::new(&f),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            holes: Vec::with_capacity(n),
            saved: Vec::with_capacity(n),
            in_hole: vec![false; n],
            open: Vec::with_capacity(n),
            pool: Vec::with_capacity(n),
            used: Vec::with_capacity(n),
            cls_holes: Vec::with_capacity(n),
            cls_pieces: Vec::with_capacity(n),
            values: Vec::with_capacity(k_cap * k_cap),
            best_rot: Vec::with_capacity(k_cap * k_cap),
            assigners: (0..=k_cap).map(Assigner::new).collect(),
            perm_all,
            perm_par,
            rings,
            ring_of,
            moves: 0,
            exact_repairs: 0,
            f,
        }
    }

    /// Builds a fresh full board.
    pub fn init(&mut self, how: Init) {
        self.st.clear();
        for c in 0..self.f.cells() {
            if let Some(pl) = self.f.hint_at[c] {
                self.st.place(&self.f, c, pl);
            }
        }
        match how {
            Init::Random => {
                let mut cells = std::mem::take(&mut self.saved);
                cells.clear();
                cells.resize(self.f.cells(), Placement::default());
                self.f.random_board(&mut self.rng, &mut cells, &mut self.pool);
                for (c, &pl) in cells.iter().enumerate() {
                    if !self.f.fixed[c] {
                        self.st.place(&self.f, c, pl);
                    }
                }
                self.saved = cells;
            }
            Init::Greedy => {
                self.holes.clear();
                self.holes.extend_from_slice(&self.perm_all);
                self.pool.clear();
                for k in 0..3 {
                    self.pool.extend_from_slice(&self.f.free_pieces[k]);
                }
                self.greedy_fill();
                self.holes.clear();
            }
        }
    }

    /// Takes `board` (by cell) as the current board.
    pub fn start_from(&mut self, board: &[Placement]) {
        self.st.clear();
        for (c, &pl) in board.iter().enumerate() {
            self.st.place(&self.f, c, pl);
        }
    }

    /// Puts the saved placements back.
    fn restore(&mut self) {
        for &c in &self.holes {
            self.st.lift(&self.f, c as usize);
        }
        for (i, &c) in self.holes.iter().enumerate() {
            self.st.place(&self.f, c as usize, self.saved[i]);
        }
    }

    /// True when the refill put back exactly what was there.
    fn unchanged(&self) -> bool {
        self.holes.iter().zip(&self.saved).all(|(&c, &pl)| self.st.col[c as usize] == self.f.colors(pl))
    }

    fn clear_holes(&mut self) {
        for &c in &self.holes {
            self.in_hole[c as usize] = false;
        }
        self.holes.clear();
    }

    /// One destroy-and-repair step without acceptance (the caller decides): returns the score
    /// change. The holes and their saved placements stay until [`Search::clear_holes`].
    pub fn step(&mut self, op: Destroy, k: usize, exact: bool) -> i64 {
        let before = self.st.score as i64;
        self.destroy(op, k);
        self.lift_holes();
        self.repair(exact);
        self.st.score as i64 - before
    }
}

/// Completes a partial board with this module's greedy repair: the open cell with the most
/// filled neighbours first, then the free piece and rotation that match most of them, ties
/// at random from `seed`. The hints and the placements given stay where they are. The caller
/// gives placements of distinct pieces that fit their cells' rim (a tree search's partial
/// board does), so every class keeps as many free pieces as open cells, and the result is a
/// full board of the puzzle's pieces.
pub fn complete_greedily(puzzle: &Puzzle, partial: &[Option<Placement>], seed: u64) -> crate::puzzle::Board {
    let mut s = Search::new(puzzle, seed, 1);
    s.st.clear();
    let n = s.f.cells();
    let mut used = vec![false; puzzle.pieces().len()];
    for c in 0..n {
        if let Some(pl) = s.f.hint_at[c].or(partial.get(c).copied().flatten()) {
            s.st.place(&s.f, c, pl);
            used[pl.piece as usize] = true;
        }
    }
    s.holes.clear();
    s.holes.extend((0..n as u32).filter(|&c| !s.st.filled[c as usize]));
    s.pool.clear();
    s.pool.extend((0..puzzle.pieces().len() as u16).filter(|&p| !used[p as usize]));
    s.greedy_fill();
    crate::puzzle::Board { width: puzzle.width(), height: puzzle.height(), cells: s.st.cells.clone() }
}

/// Asserts that `best` is a completed board of `p`: each piece once, grey sides on the rim,
/// every hint where the puzzle puts it (the promise of [`complete_greedily`]).
#[cfg(test)]
pub(crate) fn assert_completed_board(p: &Puzzle, best: &crate::puzzle::Board, tag: &str) {
    let mut uses = vec![0; p.cells()];
    for (c, pl) in best.cells.iter().enumerate() {
        uses[pl.piece as usize] += 1;
        let q = crate::puzzle::rotated(p.pieces()[pl.piece as usize], pl.rot);
        for side in 0..4 {
            assert!(p.neighbour(c, side).is_some() || q[side] == 0, "{tag}: cell {c} off the rim");
        }
    }
    assert!(uses.iter().all(|&u| u == 1), "{tag}: not a permutation of the pieces");
    for hint in p.hints() {
        assert_eq!(best.cells[hint.cell], Placement { piece: hint.piece as u16, rot: hint.rot }, "{tag}: hint");
    }
}

/// Why `board` cannot start a local search on `puzzle`, if it cannot: it must be a board of
/// the puzzle's size that uses each piece once, holds every hint where the puzzle puts it, and
/// puts every piece in a cell of its class with its grey sides on the rim (ALNS moves pieces
/// within their class and keeps the rim grey).
pub fn check_start(puzzle: &Puzzle, board: &crate::puzzle::Board) -> Result<(), String> {
    let (w, h, n) = (puzzle.width(), puzzle.height(), puzzle.cells());
    if (board.width, board.height) != (w, h) || board.cells.len() != n {
        return Err(format!("it is a {}x{} board, the puzzle is {w}x{h}", board.width, board.height));
    }
    let mut seen = vec![false; n];
    for (c, pl) in board.cells.iter().enumerate() {
        let p = pl.piece as usize;
        if p >= n || std::mem::replace(&mut seen[p], true) {
            return Err(format!("piece {p} is placed twice or does not exist (cell {c})"));
        }
        if pl.rot > 3 {
            return Err(format!("cell {c} has rotation {}", pl.rot));
        }
        let q = crate::puzzle::rotated(puzzle.pieces()[p], pl.rot);
        if !crate::puzzle::fits_rim(w, h, c, q) {
            return Err(format!(
                "cell {c} (row {}, column {}) holds piece {p} with grey sides off the rim",
                c / w + 1,
                c % w + 1
            ));
        }
    }
    for hn in puzzle.hints() {
        let pl = board.cells[hn.cell];
        if (pl.piece as usize, pl.rot) != (hn.piece, hn.rot) {
            return Err(format!("cell {} does not hold its hint (piece {} turned {})", hn.cell, hn.piece, hn.rot));
        }
    }
    Ok(())
}

/// Runs ALNS until it solves the puzzle or a limit is reached. With neither `max_iterations`
/// nor `time_limit` set it runs until solved.
pub fn alns(puzzle: &Puzzle, cfg: &AlnsConfig) -> AlnsResult {
    let start = Instant::now();
    let n = puzzle.cells();
    let k_max = if cfg.destroy_max == 0 { (n / 3).clamp(4, 48) } else { cfg.destroy_max }.min(n).max(1);
    let k_min = cfg.destroy_min.clamp(1, k_max);
    let ops: Vec<Destroy> = if cfg.operators.is_empty() { Destroy::ALL.to_vec() } else { cfg.operators.clone() };
    let mut stats: Vec<OperatorStats> = ops
        .iter()
        .map(|o| OperatorStats { name: o.name(), weight: 1.0, uses: 0, new_best: 0, improved: 0, accepted: 0 })
        .collect();

    let mut s = Search::new(puzzle, cfg.seed, k_max);
    match &cfg.start {
        Some(board) => s.start_from(board),
        None => s.init(cfg.init),
    }
    let max_score = s.f.max_score;
    let mut best = s.st.cells.clone();
    let mut best_score = s.st.score;
    let mut trace = vec![(start.elapsed().as_secs_f64(), best_score)];
    let mut run_best = s.st.score;
    let (mut iterations, mut restarts, mut reheats, mut stale) = (0u64, 0u64, 0u64, 0u64);
    let mut temp = cfg.temperature;
    let can_move = !s.perm_all.is_empty();

    while best_score < max_score && can_move {
        if cfg.max_iterations.is_some_and(|m| iterations >= m) {
            break;
        }
        if iterations % 16 == 0 && (cfg.time_limit.is_some_and(|t| start.elapsed() >= t) || cfg.cancel.is_cancelled()) {
            break;
        }
        iterations += 1;
        // Roulette wheel.
        let total: f64 = stats.iter().map(|o| o.weight).sum();
        let mut x = s.rng.random::<f64>() * total;
        let mut oi = stats.len() - 1;
        for (i, o) in stats.iter().enumerate() {
            if x < o.weight {
                oi = i;
                break;
            }
            x -= o.weight;
        }
        let k = s.rng.random_range(k_min..=k_max);
        let delta = s.step(ops[oi], k, cfg.exact_repair);
        let accept = delta >= 0 || (temp > 0.0 && s.rng.random::<f64>() < (delta as f64 / temp).exp());
        let tier = if !accept {
            s.restore();
            3
        } else if s.st.score > best_score {
            best_score = s.st.score;
            best.copy_from_slice(&s.st.cells);
            trace.push((start.elapsed().as_secs_f64(), best_score));
            0
        } else if delta > 0 {
            1
        } else if s.unchanged() {
            3
        } else {
            2
        };
        s.clear_holes();
        let o = &mut stats[oi];
        o.uses += 1;
        o.new_best += u64::from(tier == 0);
        o.improved += u64::from(delta > 0 && accept);
        o.accepted += u64::from(accept);
        o.weight = (cfg.reaction * o.weight + (1.0 - cfg.reaction) * cfg.rewards[tier]).max(cfg.min_weight);

        if s.st.score > run_best {
            run_best = s.st.score;
            stale = 0;
        } else {
            stale += 1;
        }
        temp = (temp * cfg.cooling).max(cfg.min_temperature);
        if cfg.reheat_after > 0 && stale > 0 && stale % cfg.reheat_after == 0 {
            temp = cfg.temperature;
            reheats += 1;
        }
        if cfg.restart_after > 0 && stale >= cfg.restart_after && best_score < max_score {
            match cfg.start {
                Some(_) => s.start_from(&best),
                None => s.init(cfg.init),
            }
            restarts += 1;
            run_best = s.st.score;
            stale = 0;
            temp = cfg.temperature;
            if s.st.score > best_score {
                best_score = s.st.score;
                best.copy_from_slice(&s.st.cells);
                trace.push((start.elapsed().as_secs_f64(), best_score));
            }
        }
    }
    let local =
        LocalResult { trace, ..LocalResult::finish(puzzle, &best, best_score, s.moves, restarts, cfg.seed, start) };
    AlnsResult {
        iterations,
        iterations_per_s: if local.wall_s > 0.0 { iterations as f64 / local.wall_s } else { 0.0 },
        reheats,
        exact_repairs: s.exact_repairs,
        operators: stats,
        local,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::puzzle;
    use crate::verify;

    #[test]
    fn mismatch_map_survives_random_lifts_and_places() {
        for (w, h, seed) in [(4, 4, 0), (6, 5, 1), (2, 3, 2), (9, 7, 3)] {
            let p = puzzle(w, h, seed);
            let mut s = Search::new(&p, seed, 8);
            s.init(Init::Random);
            s.st.check(&s.f);
            let n = p.cells();
            for i in 0..3_000 {
                let c = s.rng.random_range(0..n);
                if s.st.filled[c] {
                    s.st.lift(&s.f, c);
                } else {
                    // Any placement will do for the bookkeeping, even a piece used twice.
                    let pl = Placement { piece: s.rng.random_range(0..n as u16), rot: s.rng.random_range(0..4) };
                    s.st.place(&s.f, c, pl);
                }
                if i % 7 == 0 {
                    s.st.check(&s.f);
                }
            }
            s.st.check(&s.f);
        }
    }

    #[test]
    fn every_operator_keeps_the_board_whole_and_the_map_exact() {
        for (w, h, seed) in [(4, 4, 0), (7, 5, 1), (3, 8, 2), (2, 2, 3), (12, 12, 4)] {
            let p = puzzle(w, h, seed);
            let mut s = Search::new(&p, seed, 12);
            s.init(Init::Greedy);
            s.st.check(&s.f);
            for i in 0..600 {
                let op = Destroy::ALL[i % Destroy::ALL.len()];
                let k = s.rng.random_range(1..=12);
                let before = s.st.score;
                let delta = s.step(op, k, i % 2 == 0);
                assert!(!s.holes.is_empty(), "{op:?} selected nothing");
                let mut seen = vec![false; p.cells()];
                for &c in &s.holes {
                    assert!(!std::mem::replace(&mut seen[c as usize], true), "{op:?} repeated a cell");
                }
                if op == Destroy::Scattered {
                    assert!(s.holes_independent(), "scattered cells touch");
                }
                let board = s.f.board(&s.st.cells);
                assert_eq!(p.score(&board) as i64 - before as i64, delta, "{op:?}: delta vs recount");
                assert!(s.st.filled.iter().all(|&x| x));
                s.st.check(&s.f);
                if s.rng.random_bool(0.5) {
                    s.restore();
                    assert_eq!(s.st.score, before);
                    s.st.check(&s.f);
                }
                s.clear_holes();
                // Still a permutation with every rim grey.
                let board = s.f.board(&s.st.cells);
                let mut used = vec![false; p.cells()];
                for (c, pl) in board.cells.iter().enumerate() {
                    assert!(!std::mem::replace(&mut used[pl.piece as usize], true));
                    assert!(crate::puzzle::fits_rim(w, h, c, s.f.colors(*pl)));
                }
            }
        }
    }

    /// Best score over every way to put the lifted pieces back (all permutations within a
    /// class, all rim-fitting rotations): the oracle for the assignment refill.
    fn brute_refill(s: &mut Search, i: usize, used: &mut Vec<bool>, best: &mut usize) {
        if i == s.holes.len() {
            *best = (*best).max(s.st.score);
            return;
        }
        let c = s.holes[i] as usize;
        for j in 0..s.pool.len() {
            let p = s.pool[j];
            if used[j] || s.f.piece_class[p as usize] != s.f.cell_class[c] {
                continue;
            }
            used[j] = true;
            for r in 0..4 {
                let q = s.f.rot[p as usize][r as usize];
                if crate::puzzle::fits_rim(s.f.width, s.f.height, c, q) {
                    s.st.place(&s.f, c, Placement { piece: p, rot: r });
                    brute_refill(s, i + 1, used, best);
                    s.st.lift(&s.f, c);
                }
            }
            used[j] = false;
        }
    }

    #[test]
    fn assignment_refill_equals_brute_force() {
        let mut checked = 0;
        for seed in 0..60u64 {
            let (w, h) = [(4, 4), (5, 5), (6, 4), (3, 3)][seed as usize % 4];
            let p = puzzle(w, h, seed);
            let mut s = Search::new(&p, seed, 8);
            s.init(Init::Random);
            let k = 2 + seed as usize % 5;
            s.destroy(Destroy::Scattered, k);
            assert!(s.holes_independent());
            s.lift_holes();
            let base = s.st.score;
            let mut used = vec![false; s.pool.len()];
            let mut best = 0;
            brute_refill(&mut s, 0, &mut used, &mut best);
            assert_eq!(s.st.score, base);
            assert!(s.assignment_fill());
            assert_eq!(s.st.score, best, "seed {seed}: assignment refill is not optimal");
            s.st.check(&s.f);
            s.clear_holes();
            checked += 1;
        }
        assert_eq!(checked, 60);
    }

    #[test]
    fn solves_small_generated_puzzles_and_verifies() {
        for seed in 0..4 {
            let p = puzzle(5, 5, seed);
            let cfg = AlnsConfig { seed, max_iterations: Some(500_000), ..Default::default() };
            let r = alns(&p, &cfg);
            assert!(r.local.solved, "seed {seed}: {} of {}", r.local.best_score, r.local.max_score);
            assert!(verify::check(&p, &r.local.board).valid);
            assert_eq!(r.operators.len(), Destroy::ALL.len());
        }
    }

    #[test]
    fn limits_are_honoured_and_the_best_board_is_scored_right() {
        let p = puzzle(8, 8, 5);
        let cfg = AlnsConfig { max_iterations: Some(300), ..Default::default() };
        let r = alns(&p, &cfg);
        assert!(r.iterations <= 300);
        assert_eq!(r.local.best_score, p.score(&r.local.board));
        let r = alns(&puzzle(2, 2, 0), &AlnsConfig { max_iterations: Some(10_000), ..Default::default() });
        assert!(r.local.solved);
    }
}
