//! The arc-consistent completion of a near-solution ([`Completion`]): when to try, and the
//! backtracker that tries.

use crate::puzzle::mismatch_region;
use crate::puzzle::{Board, Placement, Puzzle};
use crate::search::backtrack::{BacktrackConfig, Backtracker};
use crate::verify::{self, Consistency, Network};
use std::sync::Arc;

/// When and how to hand a near-solution to the arc-consistent backtracker.
#[derive(Clone, Debug)]
pub struct Completion {
    /// Try when a trial's new best board has at most this many mismatched joins.
    pub k: usize,
    /// Also try when a trial's best score has not improved for this many iterations.
    pub stall: u64,
    /// Halo around the mismatched cells that is freed too (Chebyshev radius).
    pub radius: usize,
    /// Node limit of one completion search.
    pub max_nodes: u64,
}

/// The completion trigger of one trial: when its best board is near a solution (at most `k`
/// mismatched joins, on an improvement) or its best score has stalled, the mismatched cells
/// and a halo are freed and searched by the arc-consistent backtracker. Shared by both
/// formulations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct CompletionTrigger {
    /// Iteration of the last best-score improvement (or of the last stall-triggered try).
    pub improved_at: u64,
    /// Completion searches run, and their nodes in all.
    pub runs: u64,
    pub nodes: u64,
}

impl CompletionTrigger {
    /// Called once per iteration after scoring: whether a completion search is due now (the
    /// trial's new best is within `comp.k` joins of a solution, or its best has stalled for
    /// `comp.stall` iterations; a stall-triggered try restarts the stall count).
    pub fn due(&mut self, comp: &Completion, puzzle: &Puzzle, improved: bool, score: usize, iterations: u64) -> bool {
        if improved {
            self.improved_at = iterations;
        }
        let near = improved && puzzle.max_score() - score <= comp.k;
        let stalled = iterations - self.improved_at >= comp.stall;
        if stalled {
            self.improved_at = iterations;
        }
        near || stalled
    }

    /// Frees the mismatched cells of the trial's best board (`best`, its placements) and a
    /// halo, and searches them; a completed solution passes the exact check before it is
    /// returned.
    pub fn search(
        &mut self,
        comp: &Completion,
        bt: &mut Backtracker<'_>,
        puzzle: &Puzzle,
        best: Vec<Placement>,
    ) -> Option<Board> {
        let board = Board { width: puzzle.width(), height: puzzle.height(), cells: best };
        let free = mismatch_region(puzzle, &board, comp.radius);
        self.runs += 1;
        let done = bt.complete(&board, &free);
        self.nodes += bt.last_nodes();
        done.filter(|b| verify::check(puzzle, b).valid)
    }
}

/// The backtracker a worker uses for completions (AC-4, no restarts, node limit).
pub(crate) fn completer<'p>(puzzle: &'p Puzzle, network: &Arc<Network>, c: &Completion) -> Backtracker<'p> {
    let bcfg = BacktrackConfig {
        consistency: Consistency::Ac4,
        restarts: false,
        randomize: false,
        max_nodes: Some(c.max_nodes),
        ..Default::default()
    };
    Backtracker::with_network(puzzle, network.clone(), bcfg)
}

impl Completion {
    /// The defaults of `--complete`'s companions (and of K, 4, for the callers that complete
    /// without one given).
    pub const DEFAULT: Completion = Completion { k: 4, stall: 5_000, radius: 1, max_nodes: 20_000 };
}

impl Default for Completion {
    fn default() -> Self {
        Completion::DEFAULT
    }
}
