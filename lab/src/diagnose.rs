//! Instruments for the question "why does the map stall": distances from a board to the
//! nearest known solution, and an RRR trial that can be watched step by step.
//!
//! Nothing here is on the engine's path. [`Tracer`] re-runs one RRR trial of
//! [`concur::f1::map::F1Map`] through the public projections of [`F1`], step for step and bit for
//! bit (a test checks that against the batch driver), and reports per iteration what the
//! batch driver keeps to itself: the board chosen by `P_P`, its score, and the gap
//! `|P_P(2 P_E x - x) - P_E x|` (the step is `beta` times that vector).
//!
//! Distances between two boards `a` and `b` of one puzzle (see [`distance`]):
//! - `cells`: cells whose placement (piece or rotation) differs;
//! - `moves`: the fewest operations that turn `a` into `b` when one operation either
//!   exchanges the pieces of two cells (each placed in any rotation) or turns one piece in
//!   place. With `m` cells holding another piece than in `b`, `k` cycles of the permutation
//!   that sends each of those cells to the cell where `b` holds its piece, and `r` cells with
//!   the right piece in the wrong rotation, that is `m - k + r` (a cycle of length `L` needs
//!   `L - 1` exchanges; a turned piece needs one turn).

use concur::assign::AssignError;
use concur::batch::{self, MapKind, ROUND, Trial};
use concur::f1::map::MapConfig;
use concur::f1::project::{Assigners, F1, PieceScratch};
use concur::puzzle::{Board, Placement, Puzzle};
use concur::verify;
use rand::RngExt;

/// Placement code `piece * 4 + rot`.
fn code(pl: Placement) -> u16 {
    pl.piece * 4 + pl.rot as u16
}

/// The distance of two boards (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Distance {
    /// Cells whose placement (piece or rotation) differs.
    pub cells: usize,
    /// The fewest exchanges and turns that make one board the other.
    pub moves: usize,
}

/// The board turned clockwise by `k` quarter turns (a square board for odd `k`).
pub fn turned(board: &Board, k: u8) -> Board {
    let mut b = board.clone();
    for _ in 0..k % 4 {
        let (w, h) = (b.width, b.height);
        let mut cells = vec![Placement::default(); w * h];
        // Turning clockwise: (row r, col c) of a w x h board goes to (row c, col h-1-r) of
        // the h x w board, and every piece turns once.
        for r in 0..h {
            for c in 0..w {
                let pl = b.cells[r * w + c];
                cells[c * h + (h - 1 - r)] = Placement { piece: pl.piece, rot: (pl.rot + 1) % 4 };
            }
        }
        b = Board { width: h, height: w, cells };
    }
    b
}

/// Distance between two placement-code boards; `where_b[piece]` is the cell of `piece` in
/// `b`; `seen` is scratch of the board's length.
fn distance_codes(a: &[u16], b: &[u16], where_b: &[u8], seen: &mut [bool]) -> Distance {
    let (mut cells, mut m, mut rot_only, mut cycles) = (0, 0, 0, 0);
    seen.iter_mut().for_each(|s| *s = false);
    for c in 0..a.len() {
        if a[c] == b[c] {
            continue;
        }
        cells += 1;
        if a[c] / 4 == b[c] / 4 {
            rot_only += 1;
            continue;
        }
        m += 1;
        if !seen[c] {
            cycles += 1;
            let mut d = c;
            while !seen[d] {
                seen[d] = true;
                d = where_b[(a[d] / 4) as usize] as usize;
            }
        }
    }
    Distance { cells, moves: m - cycles + rot_only }
}

/// The distance between two boards of one puzzle.
pub fn distance(a: &Board, b: &Board) -> Distance {
    let ac: Vec<u16> = a.cells.iter().map(|&p| code(p)).collect();
    let bc: Vec<u16> = b.cells.iter().map(|&p| code(p)).collect();
    let mut where_b = vec![0u8; bc.len()];
    for (c, &v) in bc.iter().enumerate() {
        where_b[(v / 4) as usize] = c as u8;
    }
    distance_codes(&ac, &bc, &where_b, &mut vec![false; ac.len()])
}

/// The nearest known solutions to a board: both distances are minimised over the set apart
/// (the nearest solution by `moves` need not be the nearest by `cells`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Nearest {
    /// The least `cells` distance to any solution of the set.
    pub cells: usize,
    /// Index of a solution at the least `cells`.
    pub by_cells: usize,
    /// The least `moves` distance to any solution of the set.
    pub moves: usize,
    /// Index of a solution at the least `moves`.
    pub by_moves: usize,
}

/// A set of verified solutions of one puzzle, flat, for nearest-solution look-ups.
pub struct SolutionSet {
    n: usize,
    codes: Vec<u16>,
    where_: Vec<u8>,
}

impl SolutionSet {
    /// Builds the set from solutions, adding their turned copies (all four turns on square
    /// boards, the half turn otherwise); every board is checked exactly and repeats count
    /// once. Boards that fail the check are an error.
    pub fn new(puzzle: &Puzzle, boards: &[Board]) -> Result<Self, String> {
        let n = puzzle.cells();
        if n > 256 {
            return Err("solution sets hold boards of at most 256 cells".into());
        }
        let turns: &[u8] = if puzzle.width() == puzzle.height() { &[0, 1, 2, 3] } else { &[0, 2] };
        let mut all: Vec<Vec<u16>> = Vec::new();
        for b in boards {
            if !verify::check(puzzle, b).valid {
                return Err("a recorded board is not a solution of this puzzle".into());
            }
            for &k in turns {
                let t = turned(b, k);
                if verify::check(puzzle, &t).valid {
                    all.push(t.cells.iter().map(|&p| code(p)).collect());
                }
            }
        }
        all.sort_unstable();
        all.dedup();
        let mut where_ = vec![0u8; all.len() * n];
        for (i, s) in all.iter().enumerate() {
            for (c, &v) in s.iter().enumerate() {
                where_[i * n + (v / 4) as usize] = c as u8;
            }
        }
        Ok(SolutionSet { n, codes: all.concat(), where_ })
    }

    /// Solutions in the set, turned copies included.
    pub fn len(&self) -> usize {
        self.codes.len() / self.n.max(1)
    }

    /// Whether the set holds no solution.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// Solution `i` as placements.
    pub fn board(&self, i: usize) -> Vec<Placement> {
        self.codes[i * self.n..(i + 1) * self.n]
            .iter()
            .map(|&v| Placement { piece: v / 4, rot: (v % 4) as u8 })
            .collect()
    }

    /// The nearest solutions to `board` (None for an empty set).
    pub fn nearest(&self, board: &[Placement]) -> Option<Nearest> {
        if self.is_empty() {
            return None;
        }
        let a: Vec<u16> = board.iter().map(|&p| code(p)).collect();
        let n = self.n;
        let cells: Vec<usize> =
            self.codes.chunks(n).map(|s| s.iter().zip(&a).filter(|(x, y)| x != y).count()).collect();
        let (by_cells, &least) = cells.iter().enumerate().min_by_key(|&(i, &d)| (d, i)).expect("not empty");
        // moves >= cells / 2 (one exchange fixes at most two cells), so only solutions with
        // cells <= 2 * (best moves so far) can improve on it.
        let mut seen = vec![false; n];
        let sol = |i: usize| &self.codes[i * n..(i + 1) * n];
        let wh = |i: usize| &self.where_[i * n..(i + 1) * n];
        let mut best = (distance_codes(&a, sol(by_cells), wh(by_cells), &mut seen).moves, by_cells);
        for (i, &d) in cells.iter().enumerate() {
            if d <= 2 * best.0 && i != by_cells {
                let mv = distance_codes(&a, sol(i), wh(i), &mut seen).moves;
                if mv < best.0 {
                    best = (mv, i);
                }
            }
        }
        Some(Nearest { cells: least, by_cells, moves: best.0, by_moves: best.1 })
    }
}

/// A trial the [`Tracer`] cannot follow.
#[derive(Debug, thiserror::Error)]
pub enum TracerError {
    /// The configuration is of the difference map; the tracer steps RRR.
    #[error("the tracer steps RRR, not the difference map")]
    NotRrr,
    /// The configuration restarts stalled trials; the tracer follows the default trial loop,
    /// which has no stall restarts.
    #[error("the tracer follows the default trial loop: no stall restarts")]
    StallRestarts,
    /// The puzzle's assignments cannot be set up ([`F1::new`]).
    #[error(transparent)]
    Assign(#[from] AssignError),
}

/// What one step of a traced trial produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// Matched joins of the board chosen by `P_P` this step.
    pub score: usize,
    /// `|P_P(2 P_E x - x) - P_E x|`, Euclidean.
    pub gap: f32,
    /// The trial restarted from a fresh random point after this step (a cycle or a kick).
    pub restarted: bool,
}

/// One RRR trial of [`concur::f1::map::F1Map`] (cycle restarts included), stepped in the open.
/// `F1Map::new(puzzle, cfg)` trial `t` and `Tracer::new(puzzle, &cfg, t)` follow the same
/// trajectory bit for bit.
pub struct Tracer {
    f1: F1,
    beta: f32,
    edge: concur::f1::project::EdgeProjection,
    cold_assign: bool,
    no_cycle_restart: bool,
    x: Vec<f32>,
    asg: Assigners,
    pieces: PieceScratch,
    pe: Vec<f32>,
    r: Vec<f32>,
    board: Vec<u32>,
    /// The batch drivers' per-trial record: the trial's stream, counters and cycle memory.
    tr: Trial<()>,
    max_score: usize,
    /// Per side slot, the weight of the metric P_P works in (`MapConfig::join_weights`).
    slot_w: Option<Vec<f32>>,
}

/// FNV-1a of a board of candidate ids (for cycle detection in board space).
pub fn board_hash(board: &[u32]) -> u64 {
    concur::hash::Fnv1a::new().u32s(board).finish()
}

impl Tracer {
    /// Trial `t` of a batch run with `cfg`: RRR without stall restarts (anything else is a
    /// [`TracerError`]).
    pub fn new(puzzle: &Puzzle, cfg: &MapConfig, t: usize) -> Result<Self, TracerError> {
        if cfg.kind != MapKind::Rrr {
            return Err(TracerError::NotRrr);
        }
        if cfg.restart_stall.is_some() {
            return Err(TracerError::StallRestarts);
        }
        let f1 = F1::new(puzzle)?;
        let dim = f1.dim();
        let mut tr = Trial::new(cfg.run.seed, t, ());
        let mut x = vec![0.0; dim];
        x.iter_mut().for_each(|v| *v = tr.rng.random::<f32>());
        Ok(Tracer {
            asg: f1.assigners_in(cfg.reduced_costs),
            pieces: f1.piece_scratch(),
            pe: vec![0.0; dim],
            r: vec![0.0; dim],
            board: vec![0; puzzle.cells()],
            beta: cfg.beta,
            edge: cfg.edge,
            cold_assign: cfg.cold_assign,
            no_cycle_restart: cfg.no_cycle_restart,
            x,
            tr,
            max_score: puzzle.max_score(),
            slot_w: cfg.join_weights.map(|w| concur::f1::project::join_slot_weights(puzzle, w)),
            f1,
        })
    }

    /// The projections the trial runs.
    pub fn f1(&self) -> &F1 {
        &self.f1
    }
    /// The current iterate.
    pub fn x(&self) -> &[f32] {
        &self.x
    }
    /// `P_E` of the iterate before the last step.
    pub fn pe(&self) -> &[f32] {
        &self.pe
    }
    /// The board (candidate ids) chosen by `P_P` in the last step.
    pub fn board(&self) -> &[u32] {
        &self.board
    }
    /// Iterations stepped so far.
    pub fn iterations(&self) -> u64 {
        self.tr.iterations
    }
    /// Restarts after exact limit cycles so far.
    pub fn restarts(&self) -> u64 {
        self.tr.restarts
    }

    /// Restarts from a fresh random point drawn from the trial's stream.
    pub fn restart(&mut self) {
        self.x.iter_mut().for_each(|v| *v = self.tr.rng.random::<f32>());
        self.tr.warm = false;
        self.tr.restarts += 1;
        self.tr.forget_cycles();
    }

    /// One RRR step, as the batch driver takes it.
    pub fn step(&mut self) -> Step {
        let f1 = &self.f1;
        f1.project_edges_with(self.edge, &self.x, &mut self.pe);
        for ((r, &p), &xi) in self.r.iter_mut().zip(&self.pe).zip(self.x.iter()) {
            *r = 2.0 * p - xi;
        }
        if let Some(d) = &self.slot_w {
            f1.weigh_slots(d, &mut self.r);
        }
        let ok = f1.decode_pieces(&self.r, &mut self.pieces, &mut self.asg, &mut self.board, self.tr.warm);
        self.tr.iterations += 1;
        if ok.is_err() {
            // As the batch driver: restart, then the round's cycle check still runs.
            self.x.iter_mut().for_each(|v| *v = self.tr.rng.random::<f32>());
            self.tr.warm = false;
            self.tr.restarts += 1;
            self.cycle_check();
            return Step { score: 0, gap: f32::NAN, restarted: true };
        }
        // gap^2 = |e - pe|^2 with e the one-hot picture of the board: |pe|^2 - 2 <e, pe> + |e|^2.
        let mut on = 0.0f64;
        let mut ones = 0usize;
        for &j in &self.board {
            for &i in f1.candidate_slots(j) {
                on += self.pe[i as usize] as f64;
                ones += 1;
            }
        }
        let sq: f64 = self.pe.iter().map(|&v| (v as f64) * (v as f64)).sum();
        let gap = (sq - 2.0 * on + ones as f64).max(0.0).sqrt() as f32;
        for (xi, &p) in self.x.iter_mut().zip(&self.pe) {
            *xi -= self.beta * p;
        }
        for &j in &self.board {
            for &i in f1.candidate_slots(j) {
                self.x[i as usize] += self.beta;
            }
        }
        self.tr.warm = !self.cold_assign;
        let score = f1.score(&self.board);
        // The batch driver stops a solved trial before its round's cycle check.
        let restarted = score < self.max_score && self.cycle_check();
        Step { score, gap, restarted }
    }

    /// Replaces the iterate (the assignment duals are kept).
    pub fn set_x(&mut self, x: &[f32]) {
        self.x.copy_from_slice(x);
    }

    /// The batch driver's exact-cycle check, at the end of every round: true when it
    /// restarted the trial.
    fn cycle_check(&mut self) -> bool {
        if self.no_cycle_restart || !self.tr.iterations.is_multiple_of(ROUND) {
            return false;
        }
        let cycled = self.tr.in_cycle(batch::fingerprint(&self.x, concur::hash::OFFSET));
        if cycled {
            self.restart();
        }
        cycled
    }
}

/// Empirical restart analysis of a sample of run lengths (Luby, Sinclair & Zuckerman 1993):
/// with a fixed cutoff `t`, the expected work to a solution is `E[min(T, t)] / P(T <= t)`.
/// `solved` holds the lengths of the runs that finished within `budget`; `unsolved` runs ran
/// the whole budget. Returns (cutoff, expected work) at each distinct solved length, so the
/// estimate is valid only for cutoffs up to the budget.
pub fn restart_curve(solved: &[u64], unsolved: usize) -> Vec<(u64, f64)> {
    let mut s = solved.to_vec();
    s.sort_unstable();
    let total = s.len() + unsolved;
    let mut out = Vec::new();
    let mut prefix = 0u64;
    for (i, &t) in s.iter().enumerate() {
        prefix += t;
        // Runs with T <= t: the first i + 1; every other run costs t.
        let work = prefix as f64 + (total - i - 1) as f64 * t as f64;
        out.push((t, work / (i + 1) as f64));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use concur::f1::map::F1Map;
    use concur::puzzle::generate::{GenerateOptions, generate};

    fn puzzle(w: usize, h: usize, seed: u64) -> (Puzzle, Board) {
        generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed }).unwrap()
    }

    #[test]
    fn distance_counts_cells_and_moves() {
        let (_, sol) = puzzle(4, 4, 3);
        assert_eq!(distance(&sol, &sol), Distance { cells: 0, moves: 0 });
        // A three-cycle of inner pieces plus one turned piece: 4 cells, 2 + 1 moves.
        let mut b = sol.clone();
        let (p5, p6, p9) = (b.cells[5], b.cells[6], b.cells[9]);
        b.cells[5] = p6;
        b.cells[6] = p9;
        b.cells[9] = p5;
        b.cells[10].rot = (b.cells[10].rot + 1) % 4;
        assert_eq!(distance(&b, &sol), Distance { cells: 4, moves: 3 });
        // An exchange of two pieces is one move.
        let mut c = sol.clone();
        c.cells.swap(1, 2);
        assert_eq!(distance(&c, &sol), Distance { cells: 2, moves: 1 });
    }

    #[test]
    fn turned_solutions_are_solutions_and_the_set_finds_them() {
        let (p, sol) = puzzle(4, 4, 1);
        let set = SolutionSet::new(&p, std::slice::from_ref(&sol)).unwrap();
        assert!(!set.is_empty());
        for k in 0..4 {
            let t = turned(&sol, k);
            if verify::check(&p, &t).valid {
                assert_eq!(set.nearest(&t.cells).unwrap().cells, 0);
            }
        }
        assert_eq!(turned(&sol, 4), sol);
        let (q, s2) = puzzle(5, 3, 2);
        assert!(verify::check(&q, &turned(&s2, 2)).valid);
        let mut b = sol.clone();
        b.cells.swap(5, 6);
        let near = set.nearest(&b.cells).unwrap();
        assert!(near.cells <= 2 && near.moves <= 1);
    }

    #[test]
    fn the_tracer_follows_the_batch_driver_bit_for_bit() {
        let (p, _) = puzzle(5, 5, 4);
        let cfg = MapConfig {
            all_trials: true,
            restart_stall: None,
            run: concur::batch::MapRun { trials: 3, max_iters: 700, seed: 9, ..Default::default() },
            ..Default::default()
        };
        let mut m = F1Map::new(&p, cfg.clone()).unwrap();
        let r = m.run(|_| {});
        for t in 0..3 {
            let mut tr = Tracer::new(&p, &cfg, t).unwrap();
            let mut solved = None;
            for _ in 0..cfg.run.max_iters {
                let s = tr.step();
                if s.score == p.max_score() {
                    solved = Some(tr.iterations());
                    break;
                }
            }
            assert_eq!(solved, r.trials[t].solved_at, "trial {t}");
            assert_eq!(tr.restarts(), r.trials[t].restarts, "trial {t}");
            assert_eq!(tr.x(), m.state(t), "trial {t}");
        }
    }

    #[test]
    fn the_gap_vanishes_at_a_fixed_point() {
        let (p, sol) = puzzle(4, 3, 2);
        let cfg = MapConfig {
            restart_stall: None,
            run: concur::batch::MapRun { trials: 1, ..Default::default() },
            ..Default::default()
        };
        let mut tr = Tracer::new(&p, &cfg, 0).unwrap();
        let ids: Vec<u32> = sol.cells.iter().enumerate().map(|(c, &pl)| tr.f1().candidate_id(c, pl).unwrap()).collect();
        let mut x = vec![0.0; tr.f1().dim()];
        tr.f1().embed(&ids, &mut x);
        tr.set_x(&x);
        let s = tr.step();
        assert_eq!(s.score, p.max_score());
        assert!(s.gap < 1e-5, "gap {}", s.gap);
        assert_eq!(tr.x(), &x[..]);
        // A random start is far from its projections.
        let mut fresh = Tracer::new(&p, &cfg, 0).unwrap();
        assert!(fresh.step().gap > 1.0);
    }

    #[test]
    fn restart_curve_of_a_constant_sample_is_the_constant() {
        let c = restart_curve(&[10, 10, 10], 0);
        assert_eq!(c.last().unwrap().1, 10.0);
        // Half the runs take 1, half never finish within 100: cutoff 1 costs 2 per success.
        let c = restart_curve(&[1, 1], 2);
        assert_eq!(c[1], (1, 2.0));
    }
}
