//! Counting with the backtracker: every solution of a complete search (`concur count --engine
//! ac`), with the distinct ones up to turning the board, and Knuth's estimate of the tree's
//! size from random probes.

use super::{BacktrackConfig, BacktrackStats, Backtracker, CellOrder, Ending, Next, Rungs, TreeEstimate};
use crate::meter::Watch;
use crate::puzzle::{Puzzle, rotate_board};
use crate::verify::{AllDiff, Consistency};
use std::time::Duration;

/// Solution counts of a complete search.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Count {
    /// Solutions found (every one verified exactly); also in `stats`, where JSON shows it.
    #[serde(skip)]
    pub solutions: u64,
    /// Distinct solutions up to turning the whole board, on square boards without hints
    /// (where every turned solution is again a solution).
    pub up_to_rotation: Option<u64>,
    /// True when the search finished (the count is exact), false when a limit stopped it.
    pub complete: bool,
    /// The search's work counters.
    #[serde(flatten)]
    pub stats: BacktrackStats,
}

impl Count {
    /// The one line `concur count` prints: the solutions (up to turning the board where that
    /// applies, marked a lower bound when a limit stopped the search), the nodes and the rate.
    pub fn summary(&self) -> String {
        let rot = self.up_to_rotation.map_or(String::new(), |r| format!(" ({r} up to rotation)"));
        let exact = if self.complete { "" } else { " (stopped early: a lower bound)" };
        format!(
            "{} solutions{rot}{exact}; {} nodes in {:.3} s ({:.0} nodes/s)",
            self.solutions,
            self.stats.nodes,
            self.stats.wall_s,
            self.stats.nodes_per_s()
        )
    }

    /// What `concur count --json` prints: the fields, and whether a stop request ended the
    /// search (`interrupted`).
    pub fn json(&self, interrupted: bool) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("plain data");
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("interrupted".into(), interrupted.into());
        }
        v
    }
}

/// Counts solutions by complete search (no restarts), stopping after `limit` solutions.
///
/// `watch` carries the count's token (it ends the count as the time limit does, with the
/// solutions found so far) and its meter (nodes and solutions while it runs).
pub fn count(
    puzzle: &Puzzle,
    consistency: Consistency,
    order: CellOrder,
    limit: Option<u64>,
    time_limit: Option<Duration>,
    watch: &Watch,
) -> Count {
    count_with(puzzle, consistency, AllDiff::Values, Rungs::default(), order, limit, time_limit, watch)
}

/// [`count`] with the all-different on pieces `alldiff` kept beside the propagation, and
/// with the `rungs` above arc consistency (singleton arc consistency and partial path
/// consistency at the root, the block filter at every node); each needs forward checking,
/// AC-3 or AC-2001 (with AC-4 none is kept).
#[allow(clippy::too_many_arguments)]
pub fn count_with(
    puzzle: &Puzzle,
    consistency: Consistency,
    alldiff: AllDiff,
    rungs: Rungs,
    order: CellOrder,
    limit: Option<u64>,
    time_limit: Option<Duration>,
    watch: &Watch,
) -> Count {
    let cfg = BacktrackConfig {
        consistency,
        alldiff,
        sac: rungs.sac,
        pc: rungs.pc,
        blocks: rungs.blocks,
        order,
        restarts: false,
        randomize: false,
        time_limit,
        cancel: watch.cancel.clone(),
        meter: watch.meter.clone(),
        ..Default::default()
    };
    let symmetric = puzzle.width() == puzzle.height() && puzzle.hints().is_empty();
    let mut classes = std::collections::HashSet::new();
    let mut bt = Backtracker::new(puzzle, cfg);
    let mut n = 0u64;
    let (ending, stats) = bt.run(|b| {
        n += 1;
        if symmetric {
            let mut best = b.cells.clone();
            let mut r = b.clone();
            for _ in 0..3 {
                r = rotate_board(&r);
                if r.cells < best {
                    best = r.cells.clone();
                }
            }
            classes.insert(best);
        }
        if limit.is_some_and(|l| n >= l) { Next::Stop } else { Next::Continue }
    });
    Count {
        solutions: stats.solutions,
        up_to_rotation: symmetric.then_some(classes.len() as u64),
        complete: ending == Ending::Exhausted,
        stats,
    }
}

/// Estimates the complete counting tree of `count` with the same settings from `probes`
/// random probes (see [`Backtracker::estimate`]); `watch`'s token ends it with the probes
/// made so far, and its meter shows the probes made.
pub fn estimate(
    puzzle: &Puzzle,
    consistency: Consistency,
    order: CellOrder,
    probes: u64,
    seed: u64,
    watch: &Watch,
) -> TreeEstimate {
    let cfg = BacktrackConfig {
        consistency,
        order,
        restarts: false,
        randomize: false,
        seed,
        cancel: watch.cancel.clone(),
        meter: watch.meter.clone(),
        ..Default::default()
    };
    Backtracker::new(puzzle, cfg).estimate(probes)
}
