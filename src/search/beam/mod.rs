//! The beam builder and its polish (`--method beam`): the constructive pipeline of the
//! partial-score engines.
//!
//! Beam search keeps the `width` best partial boards alive and grows each by one cell a step
//! (Lowerre's HARPY, 1976; Zhou & Hansen's beam-stack search, ICAPS 2005, for the family); on
//! Eternity II it is the from-scratch builder of the strongest published single-core engine
//! (eternity2.dev's producer), whose mechanism this module follows: a scan order, frame-legal
//! candidates with mismatches allowed, the matched joins so far as the score, a few best
//! children per survivor, and selection by score with ties drawn at random ([`build`]). The
//! scan orders and the plan of a state's slots are in [`order`].
//!
//! A run is the pipeline the ALNS seed describes: the beam builds a board, then ALNS
//! ([`crate::search::alns`]) polishes it for `polish` of the run's time, starting from that
//! board and going back to its best board at each restart. Under a time limit and without a
//! width, the width is calibrated: a beam of [`CALIBRATION_WIDTH`] is timed, and the widest beam
//! predicted to end within the beam's share of the budget (at most what memory allows) runs
//! next; the better of the two boards is kept. A beam the clock or a stop cuts short is
//! completed by ALNS's greedy repair. Each thread runs `rounds` pipelines one after another,
//! each with an equal share of the time left and its own seed (`seed + thread + round x
//! threads`), and the best board of them all is the run's: restarts, for budgets at which one
//! beam would outgrow the memory or stop gaining.
//!
//! With a given width the beam is the same for a seed; the polish under a time limit, and a
//! calibrated width, depend on the machine's speed (the report gives the width, so a run can
//! be repeated with `--width`).

pub mod build;
pub mod order;

pub use order::BeamOrder;

use super::alns::{self, AlnsOptions};
use crate::cancel::Cancel;
use crate::puzzle::{Board, Placement, Puzzle};
use crate::verify;
use build::{Beam, BeamRun, Tables};
use order::Plan;
use std::time::{Duration, Instant};

crate::options::one_value!(BeamOrder);

/// The width of the timed beam that calibrates the width under a time limit.
pub const CALIBRATION_WIDTH: usize = 256;

/// The width without a time limit, when none is given.
pub const DEFAULT_WIDTH: usize = 4_096;

/// The share of the predicted time a calibrated beam is given (the cost per survivor rises a
/// little with the width, as the states outgrow the caches).
const CALIBRATION_MARGIN: f64 = 0.8;

crate::options::options_table! {
    /// The options of the beam builder and its polish (`--method beam`).
    pub struct BeamOptions {
        /// Beam: partial boards kept at each cell (default: calibrated to the beam's share of
        /// the time limit, else 4,096).
        [LocalSearch]
        pub width: Option<usize> = None,
        /// Beam: the order the cells are filled in.
        [LocalSearch]
        pub fill_order: BeamOrder = BeamOrder::Comb,
        /// Beam: the comb's last rows, filled column by column.
        [LocalSearch]
        pub teeth: usize = 2,
        /// Beam: the most children a partial board leaves (its best candidates, ties at random).
        [LocalSearch]
        pub children: usize = 4,
        /// Beam: the share of the run ALNS spends polishing the beam's board (0: none).
        [LocalSearch]
        pub polish: f64 = 0.3,
        /// Beam: pipelines each thread runs one after another, each from a new seed and with
        /// an equal share of the time limit; the best board of them is kept.
        [LocalSearch]
        pub rounds: usize = 1,
    }
    idle(o) {
        teeth if o.fill_order != BeamOrder::Comb => "without --fill-order comb";
    }
}

impl crate::options::Options for BeamOptions {
    fn check(&self) -> Result<(), crate::error::SpecError> {
        use crate::error::SpecError;
        if self.width == Some(0) {
            return Err(SpecError::range("width", "at least 1", 0));
        }
        if !(1..=1024).contains(&self.children) {
            return Err(SpecError::range("children", "from 1 to 1024", self.children));
        }
        if self.rounds == 0 {
            return Err(SpecError::range("rounds", "at least 1", 0));
        }
        if self.teeth == 0 {
            return Err(SpecError::range("teeth", "at least 1", 0));
        }
        if !(self.polish.is_finite() && (0.0..1.0).contains(&self.polish)) {
            return Err(SpecError::range("polish", "a share from 0 up to (not including) 1", self.polish));
        }
        Ok(())
    }
}

impl BeamOptions {
    /// The pipeline's configuration with these options.
    pub fn config(&self, seed: u64, time_limit: Option<Duration>, threads: usize, cancel: Cancel) -> BeamConfig {
        BeamConfig { options: self.clone(), seed, time_limit, threads: threads.max(1), max_width: usize::MAX, cancel }
    }

    /// Bytes one beam of `width` takes on `puzzle`.
    pub fn bytes(&self, puzzle: &Puzzle, width: usize) -> u64 {
        let slots = Plan::new(puzzle, &self.steps(puzzle)).slots;
        build::bytes(puzzle.cells(), slots, width, self.children)
    }

    /// The cells in the order the beam fills them: the hinted cells first, so that every
    /// cell beside a hint is scored against it, then the others in the fill order.
    pub fn steps(&self, puzzle: &Puzzle) -> Vec<u32> {
        let mut hinted = vec![false; puzzle.cells()];
        let mut steps: Vec<u32> = puzzle.hints().iter().map(|h| h.cell as u32).collect();
        steps.sort_unstable();
        for &c in &steps {
            hinted[c as usize] = true;
        }
        let rest = self.fill_order.cells(puzzle.width(), puzzle.height(), self.teeth);
        steps.extend(rest.into_iter().filter(|&c| !hinted[c as usize]));
        steps
    }

    /// The widest beam of which `threads` fit in `bytes`.
    pub fn max_width(&self, puzzle: &Puzzle, bytes: u64, threads: usize) -> usize {
        let one = self.bytes(puzzle, 1).max(1);
        usize::try_from(bytes / threads.max(1) as u64 / one).unwrap_or(usize::MAX)
    }
}

/// How a pipeline runs.
#[derive(Clone, Debug)]
pub struct BeamConfig {
    /// The options.
    pub options: BeamOptions,
    /// The seed of the first thread's pipeline (the next thread's is one more).
    pub seed: u64,
    /// The wall-clock limit of the whole run, beam and polish.
    pub time_limit: Option<Duration>,
    /// Pipelines run at once, one a thread.
    pub threads: usize,
    /// The widest beam a calibration may pick (what memory allows).
    pub max_width: usize,
    /// Ends the run at its next check when tripped.
    pub cancel: Cancel,
}

/// What a run did: the best board of its pipelines, and the beam and the polish that made it.
#[derive(Clone, Debug)]
pub struct BeamResult {
    /// The best board.
    pub board: Board,
    /// Its matched joins.
    pub best_score: usize,
    /// The puzzle's joins.
    pub max_score: usize,
    /// The board matches every join and passed the exact check.
    pub solved: bool,
    /// The width of the winning pipeline's beam.
    pub width: usize,
    /// The score of its beam's board, before the polish.
    pub beam_score: usize,
    /// Seconds its beams took (the calibration's included).
    pub beam_s: f64,
    /// Whether its beam reached the last cell (false: completed greedily after a stop).
    pub complete: bool,
    /// Partial boards expanded, summed over every beam of every pipeline.
    pub nodes: u64,
    /// Its polish's destroy-and-repair iterations.
    pub polish_iterations: u64,
    /// Seconds its polish took.
    pub polish_s: f64,
    /// Pipelines run (`rounds` a thread).
    pub pipelines: usize,
    /// Seconds the run took, wall clock.
    pub wall_s: f64,
    /// (seconds, best score) of the winning pipeline.
    pub trace: Vec<(f64, usize)>,
    /// The run's seed.
    pub seed: u64,
}

/// One pipeline's result.
struct Pipeline {
    cells: Vec<Placement>,
    score: usize,
    width: usize,
    beam_score: usize,
    beam_s: f64,
    complete: bool,
    nodes: u64,
    polish_iterations: u64,
    polish_s: f64,
    trace: Vec<(f64, usize)>,
}

/// Runs the pipeline on every thread and returns the best board.
pub fn beam(puzzle: &Puzzle, cfg: &BeamConfig) -> BeamResult {
    let start = Instant::now();
    let o = &cfg.options;
    let plan = Plan::new(puzzle, &o.steps(puzzle));
    let tables = Tables::new(puzzle);
    let end = cfg.time_limit.map(|t| start + t);
    // A thread's rounds, one after another: each gets an equal share of the time left, and the
    // best of them (with the pipelines and the nodes of all) is the thread's.
    let one = |i: usize| {
        let (mut best, mut pipelines, mut nodes): (Option<Pipeline>, usize, u64) = (None, 0, 0);
        for r in 0..o.rounds {
            let now = Instant::now();
            if r > 0 && (cfg.cancel.is_cancelled() || end.is_some_and(|e| now >= e)) {
                break;
            }
            let limit = end.map(|e| e.saturating_duration_since(now).div_f64((o.rounds - r) as f64));
            let seed = cfg.seed.wrapping_add((i + r * cfg.threads) as u64);
            let mut p = pipeline(puzzle, cfg, &plan, &tables, seed, now, limit);
            let offset = now.duration_since(start).as_secs_f64();
            p.trace.iter_mut().for_each(|(t, _)| *t += offset);
            pipelines += 1;
            nodes += p.nodes;
            if best.as_ref().is_none_or(|b| p.score > b.score) {
                best = Some(p);
            }
        }
        let mut best = best.expect("one round at least");
        best.nodes = nodes;
        (best, pipelines)
    };
    let runs: Vec<(Pipeline, usize)> = if cfg.threads == 1 {
        vec![one(0)]
    } else {
        use rayon::prelude::*;
        match rayon::ThreadPoolBuilder::new().num_threads(cfg.threads).build() {
            Ok(pool) => pool.install(|| (0..cfg.threads).into_par_iter().map(one).collect()),
            Err(_) => (0..cfg.threads).map(one).collect(),
        }
    };
    let nodes = runs.iter().map(|r| r.0.nodes).sum();
    let pipelines = runs.iter().map(|r| r.1).sum();
    let best = runs.into_iter().map(|r| r.0).reduce(|a, b| if b.score > a.score { b } else { a });
    let best = best.expect("one pipeline at least");
    let board = Board { width: puzzle.width(), height: puzzle.height(), cells: best.cells };
    let max_score = puzzle.max_score();
    debug_assert_eq!(puzzle.score(&board), best.score);
    let solved = best.score == max_score && verify::check(puzzle, &board).valid;
    BeamResult {
        board,
        best_score: best.score,
        max_score,
        solved,
        width: best.width,
        beam_score: best.beam_score,
        beam_s: best.beam_s,
        complete: best.complete,
        nodes,
        polish_iterations: best.polish_iterations,
        polish_s: best.polish_s,
        pipelines,
        wall_s: start.elapsed().as_secs_f64(),
        trace: best.trace,
        seed: cfg.seed,
    }
}

/// One pipeline from `start` within `limit`: the beam (calibrated or of the given width), then
/// the polish.
fn pipeline(
    puzzle: &Puzzle,
    cfg: &BeamConfig,
    plan: &Plan,
    tables: &Tables,
    seed: u64,
    start: Instant,
    limit: Option<Duration>,
) -> Pipeline {
    let o = &cfg.options;
    let end = limit.map(|t| start + t);
    let beam_end = limit.map(|t| start + t.mul_f64(1.0 - o.polish));
    let children = o.children;
    let run_beam = |width: usize| {
        let mut b = Beam::new(plan, tables, width, children);
        b.run(&BeamRun { width, children, seed, deadline: beam_end, cancel: &cfg.cancel })
    };
    // The beam's board, its width, and the boards expanded by every beam run to get it.
    let one = |w: usize| {
        let b = run_beam(w);
        let nodes = b.nodes;
        (b, w, nodes)
    };
    let (mut built, width, nodes) = match (o.width, beam_end) {
        (Some(w), _) => one(w),
        (None, None) => one(DEFAULT_WIDTH.min(cfg.max_width)),
        (None, Some(deadline)) => {
            let mut nodes = 0;
            // Time beams 16 times wider each until the widest that fits the time left is at
            // most 16 times the last one timed (the timing of a narrow beam is noisy); the
            // calibration then costs about a fifteenth of the beam. The best board is kept.
            let mut w = CALIBRATION_WIDTH.min(cfg.max_width).max(1);
            let mut best: Option<(build::Built, usize)> = None;
            loop {
                let t0 = Instant::now();
                let b = run_beam(w);
                let took = t0.elapsed().as_secs_f64().max(1e-6);
                let complete = b.complete;
                nodes += b.nodes;
                if best.as_ref().is_none_or(|(k, _)| complete && b.score > k.score) {
                    best = Some((b, w));
                }
                let left = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
                let fits = ((w as f64 * left / took * CALIBRATION_MARGIN) as usize).min(cfg.max_width);
                if !complete || fits <= w {
                    break;
                }
                w = if fits <= 16 * w { fits } else { 16 * w };
                if w == fits {
                    let b = run_beam(w);
                    nodes += b.nodes;
                    if b.complete && best.as_ref().is_none_or(|(k, _)| b.score >= k.score) {
                        best = Some((b, w));
                    }
                    break;
                }
            }
            let (b, w) = best.expect("one beam at least");
            (b, w, nodes)
        }
    };
    let complete = built.complete;
    let mut cells: Vec<Placement> = if complete {
        built.cells.iter().map(|c| c.expect("a complete beam fills every cell")).collect()
    } else {
        alns::complete_greedily(puzzle, &built.cells, seed).cells
    };
    let board = Board { width: puzzle.width(), height: puzzle.height(), cells };
    built.score = puzzle.score(&board);
    cells = board.cells;
    let beam_s = start.elapsed().as_secs_f64();
    let mut trace = vec![(beam_s, built.score)];
    let polish_for = match end {
        Some(e) => e.saturating_duration_since(Instant::now()),
        None => Duration::from_secs_f64(beam_s * o.polish / (1.0 - o.polish)),
    };
    let (mut score, mut polish_iterations, mut polish_s) = (built.score, 0, 0.0);
    if o.polish > 0.0 && !polish_for.is_zero() && !cfg.cancel.is_cancelled() && built.score < puzzle.max_score() {
        let mut a = AlnsOptions::default().config(seed, None, Some(polish_for), cfg.cancel.clone());
        a.start = Some(cells.clone());
        let r = alns::alns(puzzle, &a);
        polish_iterations = r.iterations;
        polish_s = r.local.wall_s;
        if r.local.best_score > score {
            score = r.local.best_score;
            cells = r.local.board.cells.clone();
        }
        trace.extend(r.local.trace.iter().skip(1).map(|&(t, s)| (beam_s + t, s)));
    }
    Pipeline {
        cells,
        score,
        width,
        beam_score: built.score,
        beam_s,
        complete,
        nodes,
        polish_iterations,
        polish_s,
        trace,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::puzzle;

    #[test]
    fn the_pipeline_returns_a_verified_board_and_the_polish_never_loses_joins() {
        for seed in 0..3 {
            let p = puzzle(8, 8, seed);
            let options = BeamOptions { width: Some(64), polish: 0.0, ..BeamOptions::default() };
            let bare = beam(&p, &options.config(seed, None, 1, Cancel::new()));
            assert_eq!(bare.best_score, bare.beam_score);
            assert_eq!(p.score(&bare.board), bare.best_score);
            let options = BeamOptions { width: Some(64), polish: 0.5, ..BeamOptions::default() };
            let polished = beam(&p, &options.config(seed, Some(Duration::from_millis(300)), 1, Cancel::new()));
            assert_eq!(polished.beam_score, bare.beam_score, "the same seed builds the same beam board");
            assert!(polished.best_score >= polished.beam_score);
            assert!(polished.polish_iterations > 0);
            assert_eq!(p.score(&polished.board), polished.best_score);
            assert!(alns::check_start(&p, &polished.board).is_ok());
        }
    }

    #[test]
    fn a_calibrated_beam_ends_within_its_time_and_threads_take_the_best() {
        let p = puzzle(10, 10, 4);
        let options = BeamOptions { polish: 0.0, ..BeamOptions::default() };
        let r = beam(&p, &options.config(1, Some(Duration::from_millis(400)), 2, Cancel::new()));
        assert!(r.wall_s < 1.5, "a 0.4 s run took {} s", r.wall_s);
        assert!(r.width >= CALIBRATION_WIDTH);
        assert_eq!(r.pipelines, 2);
        assert_eq!(p.score(&r.board), r.best_score);
    }

    #[test]
    fn rounds_keep_the_best_of_the_pipelines_their_seeds_would_build_alone() {
        for seed in 0..3 {
            let p = puzzle(7, 7, seed);
            let alone = |s: u64| {
                let o = BeamOptions { width: Some(8), polish: 0.0, ..BeamOptions::default() };
                beam(&p, &o.config(s, None, 1, Cancel::new()))
            };
            let o = BeamOptions { width: Some(8), polish: 0.0, rounds: 4, ..BeamOptions::default() };
            let r = beam(&p, &o.config(seed, None, 2, Cancel::new()));
            assert_eq!(r.pipelines, 8);
            let best = (0..8).map(|k| alone(seed + k)).max_by_key(|b| b.best_score).expect("eight");
            assert_eq!(r.best_score, best.best_score);
            assert_eq!(p.score(&r.board), r.best_score);
            let each: u64 = (0..8).map(|k| alone(seed + k).nodes).sum();
            assert_eq!(r.nodes, each, "the nodes of every round are counted");
        }
        let p = puzzle(8, 8, 1);
        let o = BeamOptions { polish: 0.5, rounds: 3, ..BeamOptions::default() };
        let r = beam(&p, &o.config(1, Some(Duration::from_millis(600)), 1, Cancel::new()));
        assert!(r.wall_s < 1.5, "a 0.6 s run took {} s", r.wall_s);
        assert_eq!(r.pipelines, 3);
    }

    #[test]
    fn a_stopped_run_still_returns_a_full_board() {
        let p = puzzle(9, 9, 2);
        let cancel = Cancel::new();
        cancel.cancel();
        let r = beam(&p, &BeamOptions::default().config(0, None, 1, cancel));
        assert!(!r.complete);
        assert!(alns::check_start(&p, &r.board).is_ok());
        assert_eq!(p.score(&r.board), r.best_score);
    }
}
