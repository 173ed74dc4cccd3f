//! Map-guided search: one F1 trial (RRR in the uniform metric) whose iterate orders the
//! values of an arc-consistent backtracker, with the same search in a random order as its
//! control ([`GuidedConfig`]). It sits above both the searches and F1: it runs the F1
//! projections ([`crate::f1`]) and the backtracker ([`crate::search::backtrack`]); run by
//! `examples/guided.rs`, not by `solve`.

use crate::assign::AssignError;
use crate::batch::Mechanism;
use crate::f1::map::{MapConfig, add_board, randomize};
use crate::f1::project::F1;
use crate::puzzle::{Board, Puzzle};
use crate::rng::trial_seed;
use crate::search::backtrack::{BacktrackConfig, Backtracker, Next};
use crate::verify;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Map-guided search (issue "the map past 6x6", point 2): one RRR trial runs (in the uniform
/// metric, as it was measured), and every
/// `every` iterations an arc-consistent backtracker (no restarts inside, `nodes` nodes) tries
/// to complete the board from scratch, its values at each cell ordered by the weights P_P
/// sees in the latest iteration (the candidate sums of `2 P_E(x) - x`), best first. With
/// `use_map` false the same searches run with a random value order instead, so that the two
/// differ only in the order: the control for "does the map carry information a search can
/// use?". Solutions are counted by mechanism: `map` (the iteration itself matched every
/// join) or `map-guided` (the search found it).
#[derive(Clone, Debug)]
pub struct GuidedConfig {
    /// The RRR trial's step.
    pub beta: f32,
    /// Seed of the trial's start and of the control's random value order.
    pub seed: u64,
    /// Iterations between two searches.
    pub every: u64,
    /// Node limit of each search.
    pub nodes: u64,
    /// Order each search's values by the map's weights (false: at random, the control).
    pub use_map: bool,
    /// The searches' propagation after each placement.
    pub consistency: crate::verify::Consistency,
    /// Wall-clock limit of the run.
    pub time_limit: Option<std::time::Duration>,
    /// Iterations the trial may run.
    pub max_iters: u64,
    /// Ends the run at its next iteration when tripped, as at the time limit.
    pub cancel: crate::cancel::Cancel,
}

impl Default for GuidedConfig {
    fn default() -> Self {
        GuidedConfig {
            beta: MapConfig::default().beta,
            seed: 0,
            every: 100,
            nodes: 10_000,
            use_map: true,
            consistency: crate::verify::Consistency::Ac4,
            time_limit: None,
            max_iters: u64::MAX,
            cancel: crate::cancel::Cancel::new(),
        }
    }
}

/// What a [`guided`] run did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GuidedResult {
    /// Whether a verified solution was found.
    pub solved: bool,
    /// `map` or `map-guided`; none when the control's random-order search found it.
    pub mechanism: Option<Mechanism>,
    /// Whether a search (guided or not) found the solution.
    pub by_search: bool,
    /// Map iterations run.
    pub iterations: u64,
    /// Searches run.
    pub searches: u64,
    /// Nodes of those searches, in all.
    pub nodes: u64,
    /// Seconds the run took, wall clock.
    pub wall_s: f64,
    /// The solution, when solved.
    #[serde(skip)]
    pub solution: Option<Board>,
}

/// Runs [`GuidedConfig`]'s protocol; every solution has passed the exact verifier.
pub fn guided(puzzle: &Puzzle, cfg: &GuidedConfig) -> Result<GuidedResult, AssignError> {
    let start = std::time::Instant::now();
    let f1 = F1::new(puzzle)?;
    let dim = f1.dim();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(trial_seed(cfg.seed, 0));
    let mut x = vec![0.0f32; dim];
    randomize(&mut x, &mut rng);
    let (mut r, mut board) = (vec![0.0f32; dim], vec![0u32; puzzle.cells()]);
    let mut scratch = f1.piece_scratch();
    let mut asg = f1.assigners();
    let mut sums = vec![0.0f32; f1.candidates_total()];
    let bcfg = BacktrackConfig {
        consistency: cfg.consistency,
        seed: trial_seed(cfg.seed, 1),
        restarts: false,
        randomize: true,
        max_nodes: Some(cfg.nodes),
        ..Default::default()
    };
    let mut bt = Backtracker::new(puzzle, bcfg);
    let max_score = puzzle.max_score();
    let mut out = GuidedResult {
        solved: false,
        mechanism: None,
        by_search: false,
        iterations: 0,
        searches: 0,
        nodes: 0,
        wall_s: 0.0,
        solution: None,
    };
    let mut warm = false;
    while out.iterations < cfg.max_iters {
        if cfg.time_limit.is_some_and(|t| start.elapsed() >= t) || cfg.cancel.is_cancelled() {
            break;
        }
        f1.reflect_edges(&x, &mut r);
        if f1.decode_pieces(&r, &mut scratch, &mut asg, &mut board, warm).is_err() {
            randomize(&mut x, &mut rng);
            warm = false;
            continue;
        }
        warm = true;
        f1.subtract_edges(cfg.beta, &mut x);
        add_board(&f1, cfg.beta, &mut x, &board);
        out.iterations += 1;
        if f1.score(&board) == max_score {
            let b = Board { width: puzzle.width(), height: puzzle.height(), cells: f1.placements(&board) };
            (out.solved, out.mechanism, out.solution) = (true, Some(Mechanism::Map), Some(b));
            break;
        }
        if out.iterations.is_multiple_of(cfg.every.max(1)) {
            if cfg.use_map {
                f1.candidate_sums(&r, &mut sums);
                bt.set_value_scores(Some(&sums));
            }
            let mut found = None;
            let (_, st) = bt.run(|b| {
                found = Some(b.clone());
                Next::Stop
            });
            out.searches += 1;
            out.nodes += st.nodes;
            if let Some(b) = found {
                // The control's search owes nothing to the map: no map mechanism.
                let by = if cfg.use_map { Some(Mechanism::MapGuided) } else { None };
                (out.solved, out.mechanism, out.by_search, out.solution) = (true, by, true, Some(b));
                break;
            }
        }
    }
    if let Some(b) = &out.solution {
        let v = verify::check(puzzle, b);
        assert!(v.valid, "guided search claimed a solution the exact verifier rejects: {:?}", v.problems);
    }
    out.wall_s = start.elapsed().as_secs_f64();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::puzzle;
    use crate::puzzle::generate::{GenerateOptions, generate};

    #[test]
    fn guided_search_solves_small_puzzles_counts_mechanisms_apart_and_is_reproducible() {
        for seed in 0..4 {
            let p = puzzle(5, 5, seed);
            for use_map in [true, false] {
                // A search every 5 iterations with few nodes: both mechanisms can occur.
                let cfg = GuidedConfig { seed, every: 5, nodes: 300, use_map, max_iters: 20_000, ..Default::default() };
                let a = guided(&p, &cfg).unwrap();
                assert!(a.solved, "5x5 seed {seed} use_map {use_map}: {a:?}");
                let b = a.solution.as_ref().unwrap();
                assert!(verify::check(&p, b).valid);
                match (a.mechanism, a.by_search) {
                    (Some(Mechanism::Map), false) => assert_eq!(p.score(b), p.max_score()),
                    (Some(Mechanism::MapGuided), true) => assert!(use_map && a.searches >= 1 && a.nodes >= 1),
                    (None, true) => assert!(!use_map && a.searches >= 1),
                    m => panic!("unexpected mechanism {m:?}"),
                }
                assert!(a.searches <= a.iterations / 5);
                let again = guided(&p, &cfg).unwrap();
                assert_eq!((again.iterations, again.nodes, again.mechanism), (a.iterations, a.nodes, a.mechanism));
            }
        }
    }

    #[test]
    fn value_scores_order_the_backtracker_best_first() {
        // With the planted solution's candidates scored highest everywhere, the first descent
        // places it with no backtracking: one node per cell.
        let (p, sol) =
            generate(&GenerateOptions { width: 5, height: 5, frame_colors: None, inner_colors: None, seed: 3 })
                .unwrap();
        let f1 = F1::new(&p).unwrap();
        let mut scores = vec![0.0f32; f1.candidates_total()];
        for (c, pl) in sol.cells.iter().enumerate() {
            scores[f1.candidate_id(c, *pl).unwrap() as usize] = 1.0;
        }
        let cfg = BacktrackConfig { restarts: false, seed: 1, ..Default::default() };
        let mut bt = Backtracker::new(&p, cfg);
        bt.set_value_scores(Some(&scores));
        let mut found = None;
        let (_, st) = bt.run(|b| {
            found = Some(b.clone());
            Next::Stop
        });
        assert_eq!(found.unwrap().cells, sol.cells);
        assert_eq!(st.nodes, p.cells() as u64);
    }
}
