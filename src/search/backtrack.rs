//! The arc-consistent backtracker: the control that keeps the maps honest.
//!
//! Depth-first search over cells. At each node it picks the unplaced cell with the smallest
//! domain, tries its candidates in a random order, and maintains the chosen consistency
//! (forward checking, AC-3 or AC-2001) after every placement. Randomised runs restart on a
//! Luby schedule (Luby, Sinclair & Zuckerman 1993) scaled by `restart_base` nodes; with
//! restarts off the search is complete and can enumerate solutions.

use crate::puzzle::{Board, Placement, Puzzle};
use crate::verify::{self, Consistency, Network, Propagator, SupportCounts};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::{Duration, Instant};

/// Search parameters.
#[derive(Clone, Debug)]
pub struct BacktrackConfig {
    pub consistency: Consistency,
    pub seed: u64,
    pub time_limit: Option<Duration>,
    pub max_nodes: Option<u64>,
    /// Restart on a Luby schedule (incomplete, but robust to heavy tails).
    pub restarts: bool,
    /// Nodes per Luby unit.
    pub restart_base: u64,
    /// Try candidates in random order (else in candidate-list order).
    pub randomize: bool,
    pub order: CellOrder,
}

/// Which open cell to branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CellOrder {
    /// Row-major scan (cells with one candidate left first).
    Scan,
    /// Smallest domain first.
    Mrv,
    /// Smallest domain, ties to the cell with most placed neighbours.
    MrvDegree,
    /// Smallest domain divided by (1 + placed neighbours).
    DomDeg,
}

impl Default for BacktrackConfig {
    fn default() -> Self {
        BacktrackConfig {
            consistency: Consistency::Ac3,
            seed: 0,
            time_limit: None,
            max_nodes: None,
            restarts: true,
            restart_base: 256,
            randomize: true,
            order: CellOrder::MrvDegree,
        }
    }
}

/// How a search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The visitor asked to stop (after a solution, when looking for the first one).
    Stopped,
    /// The whole tree was explored (complete searches only).
    Exhausted,
    /// A node or time limit was reached.
    Limit,
}

/// Work counters of a search.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BacktrackStats {
    /// Placements tried.
    pub nodes: u64,
    pub restarts: u64,
    /// Largest number of cells placed at once.
    pub best_depth: usize,
    pub solutions: u64,
    pub revisions: u64,
    pub wall_s: f64,
}

impl BacktrackStats {
    pub fn nodes_per_s(&self) -> f64 {
        if self.wall_s > 0.0 { self.nodes as f64 / self.wall_s } else { 0.0 }
    }
}

/// What the visitor tells the search after a solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    Continue,
    Stop,
}

/// Domain storage and propagation of a search: domain copies per depth for FC, AC-3 and
/// AC-2001; trailed support counts for AC-4.
enum Engine {
    Copy { doms: Vec<u64>, level: usize, prop: Propagator, marks: Vec<usize> },
    Counts(SupportCounts),
}

impl Engine {
    /// Full domains plus root propagation; false when the puzzle is already inconsistent.
    fn reset(&mut self, net: &Network, kind: Consistency) -> bool {
        let full = net.full_domains();
        match self {
            Engine::Copy { doms, level, prop, .. } => {
                *level = 0;
                doms[..full.len()].copy_from_slice(&full);
                prop.reset();
                prop.propagate_all(net, &mut doms[..full.len()], kind)
            }
            Engine::Counts(sc) => {
                sc.load(net, &full);
                sc.propagate_all(net)
            }
        }
    }

    #[inline]
    fn size(&self, net: &Network, c: usize) -> u32 {
        match self {
            Engine::Copy { doms, level, .. } => {
                let w = net.total_words();
                net.size(&doms[level * w..(level + 1) * w], c)
            }
            Engine::Counts(sc) => sc.size(c),
        }
    }

    fn members(&self, net: &Network, c: usize, out: &mut Vec<u32>) {
        match self {
            Engine::Copy { doms, level, .. } => {
                let w = net.total_words();
                net.members(&doms[level * w..(level + 1) * w], c, out)
            }
            Engine::Counts(sc) => net.members(sc.domains(), c, out),
        }
    }

    /// Saves the current state; returns the mark to [`Engine::pop`] back to.
    fn push(&mut self) -> usize {
        match self {
            Engine::Copy { doms, level, prop, marks } => {
                let w = doms.len() / marks.len();
                let (cur, next) = doms.split_at_mut((*level + 1) * w);
                next[..w].copy_from_slice(&cur[*level * w..]);
                marks[*level] = prop.mark();
                *level += 1;
                *level - 1
            }
            Engine::Counts(sc) => sc.mark(),
        }
    }

    fn assign(&mut self, net: &Network, c: usize, j: usize, kind: Consistency) -> bool {
        match self {
            Engine::Copy { doms, level, prop, .. } => {
                let w = net.total_words();
                prop.assign(net, &mut doms[*level * w..(*level + 1) * w], c, j, kind)
            }
            Engine::Counts(sc) => sc.assign(net, c, j),
        }
    }

    fn pop(&mut self, net: &Network, mark: usize) {
        match self {
            Engine::Copy { level, prop, marks, .. } => {
                *level = mark;
                prop.undo(marks[mark]);
            }
            Engine::Counts(sc) => sc.undo(net, mark),
        }
    }

    fn work(&self) -> u64 {
        match self {
            Engine::Copy { prop, .. } => prop.revisions,
            Engine::Counts(sc) => sc.removals,
        }
    }
}

enum Flow {
    Continue,
    Restart,
    Stop(Ending),
}

/// A reusable search over one puzzle.
pub struct Backtracker<'a> {
    puzzle: &'a Puzzle,
    net: Network,
    engine: Engine,
    cfg: BacktrackConfig,
    /// One candidate-order buffer per depth.
    order: Vec<Vec<u32>>,
    placed: Vec<bool>,
    chosen: Vec<u32>,
    rng: Xoshiro256PlusPlus,
    stats: BacktrackStats,
    start: Instant,
    restart_at: u64,
}

/// The Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, ... (1-based index).
pub fn luby(mut i: u64) -> u64 {
    loop {
        let mut k = 1;
        while (1u64 << k) - 1 < i {
            k += 1;
        }
        if (1u64 << k) - 1 == i {
            return 1 << (k - 1);
        }
        i -= (1 << (k - 1)) - 1;
    }
}

impl<'a> Backtracker<'a> {
    pub fn new(puzzle: &'a Puzzle, cfg: BacktrackConfig) -> Self {
        let net = Network::new(puzzle);
        let n = puzzle.cells();
        let words = net.total_words();
        Backtracker {
            puzzle,
            engine: match cfg.consistency {
                Consistency::Ac4 => Engine::Counts(SupportCounts::new(&net, &net.full_domains())),
                _ => Engine::Copy { doms: vec![0; words * (n + 1)], level: 0, prop: Propagator::new(&net), marks: vec![0; n + 1] },
            },
            order: (0..=n).map(|c| Vec::with_capacity(net.candidates().len(c.min(n - 1)))).collect(),
            net,
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            cfg,
            placed: vec![false; n],
            chosen: vec![0; n],
            stats: BacktrackStats::default(),
            start: Instant::now(),
            restart_at: u64::MAX,
        }
    }

    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Runs the search, calling `visit` with every verified solution found.
    pub fn run(&mut self, mut visit: impl FnMut(&Board) -> Next) -> (Ending, BacktrackStats) {
        self.start = Instant::now();
        self.stats = BacktrackStats::default();
        let ending = loop {
            self.placed.iter_mut().for_each(|p| *p = false);
            self.restart_at = if self.cfg.restarts {
                self.stats.nodes + self.cfg.restart_base.max(1) * luby(self.stats.restarts + 1)
            } else {
                u64::MAX
            };
            if !self.engine.reset(&self.net, self.cfg.consistency) {
                break Ending::Exhausted;
            }
            match self.dfs(0, &mut visit) {
                Flow::Continue => break Ending::Exhausted,
                Flow::Stop(e) => break e,
                Flow::Restart => self.stats.restarts += 1,
            }
        };
        self.stats.revisions = self.engine.work();
        self.stats.wall_s = self.start.elapsed().as_secs_f64();
        (ending, self.stats.clone())
    }

    fn out_of_budget(&self) -> bool {
        if self.cfg.max_nodes.is_some_and(|m| self.stats.nodes >= m) {
            return true;
        }
        self.stats.nodes % 1024 == 0 && self.cfg.time_limit.is_some_and(|t| self.start.elapsed() >= t)
    }

    fn dfs(&mut self, depth: usize, visit: &mut impl FnMut(&Board) -> Next) -> Flow {
        let n = self.net.cells();
        // Minimum-remaining-values cell; ties (and near-ties, by the ordering) go to the cell
        // with the most placed neighbours.
        let mut best: Option<(u64, usize)> = None;
        for c in 0..n {
            if self.placed[c] {
                continue;
            }
            let sz = self.engine.size(&self.net, c) as u64;
            let key = match self.cfg.order {
                CellOrder::Scan => if sz <= 1 { 0 } else { 1 + c as u64 },
                CellOrder::Mrv => sz,
                CellOrder::MrvDegree => (sz << 3) | (4 - self.placed_neighbours(c)),
                CellOrder::DomDeg => if sz <= 1 { 0 } else { (sz << 8) / (1 + self.placed_neighbours(c)) },
            };
            if best.is_none_or(|(b, _)| key < b) {
                best = Some((key, c));
                if sz <= 1 {
                    break;
                }
            }
        }
        let Some((_, cell)) = best else {
            return self.report(visit);
        };
        let mut order = std::mem::take(&mut self.order[depth]);
        order.clear();
        self.engine.members(&self.net, cell, &mut order);
        if self.cfg.randomize {
            order.shuffle(&mut self.rng);
        }
        let mut flow = Flow::Continue;
        for &j in &order {
            if self.out_of_budget() {
                flow = Flow::Stop(Ending::Limit);
                break;
            }
            if self.stats.nodes >= self.restart_at {
                flow = Flow::Restart;
                break;
            }
            self.stats.nodes += 1;
            let mark = self.engine.push();
            let ok = self.engine.assign(&self.net, cell, j as usize, self.cfg.consistency);
            if ok {
                self.placed[cell] = true;
                self.chosen[cell] = j;
                self.stats.best_depth = self.stats.best_depth.max(depth + 1);
                let f = self.dfs(depth + 1, visit);
                self.placed[cell] = false;
                if !matches!(f, Flow::Continue) {
                    flow = f;
                    self.engine.pop(&self.net, mark);
                    break;
                }
            }
            self.engine.pop(&self.net, mark);
        }
        self.order[depth] = order;
        flow
    }

    fn placed_neighbours(&self, c: usize) -> u64 {
        (0..4).filter(|&s| self.net.neighbour(c, s).is_some_and(|m| self.placed[m])).count() as u64
    }

    fn report(&mut self, visit: &mut impl FnMut(&Board) -> Next) -> Flow {
        let cands = self.net.candidates();
        let cells: Vec<Placement> = (0..self.net.cells()).map(|c| cands.of(c)[self.chosen[c] as usize]).collect();
        let board = Board { width: self.puzzle.width(), height: self.puzzle.height(), cells };
        // Never trust the search: every solution passes the exact check before it is reported.
        let verdict = verify::check(self.puzzle, &board);
        assert!(verdict.valid, "backtracker produced an invalid board: {:?}", verdict.problems);
        self.stats.solutions += 1;
        match visit(&board) {
            Next::Continue => Flow::Continue,
            Next::Stop => Flow::Stop(Ending::Stopped),
        }
    }
}

/// Finds one solution (or none within the limits).
pub fn solve(puzzle: &Puzzle, cfg: BacktrackConfig) -> (Option<Board>, Ending, BacktrackStats) {
    let mut bt = Backtracker::new(puzzle, cfg);
    let mut found = None;
    let (ending, stats) = bt.run(|b| {
        found = Some(b.clone());
        Next::Stop
    });
    (found, ending, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{generate, GenerateOptions};

    #[test]
    fn luby_sequence() {
        let got: Vec<u64> = (1..=15).map(luby).collect();
        assert_eq!(got, [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]);
    }

    #[test]
    fn solves_generated_puzzles_with_every_consistency() {
        for seed in 0..4 {
            let (p, _) = generate(&GenerateOptions { width: 5, height: 5, frame_colors: None, inner_colors: None, seed }).unwrap();
            for consistency in [Consistency::Fc, Consistency::Ac3, Consistency::Ac2001, Consistency::Ac4] {
                let cfg = BacktrackConfig { consistency, seed, ..Default::default() };
                let (sol, ending, stats) = solve(&p, cfg);
                let sol = sol.unwrap_or_else(|| panic!("{consistency:?} seed {seed}: {ending:?} {stats:?}"));
                assert!(verify::check(&p, &sol).valid);
            }
        }
    }

    #[test]
    fn complete_search_counts_the_same_with_every_consistency() {
        let (p, _) = generate(&GenerateOptions { width: 4, height: 3, frame_colors: Some(2), inner_colors: Some(2), seed: 3 }).unwrap();
        let mut counts = Vec::new();
        for consistency in [Consistency::Fc, Consistency::Ac3, Consistency::Ac2001, Consistency::Ac4] {
            let cfg = BacktrackConfig { consistency, restarts: false, ..Default::default() };
            let mut bt = Backtracker::new(&p, cfg);
            let (ending, stats) = bt.run(|_| Next::Continue);
            assert_eq!(ending, Ending::Exhausted);
            counts.push(stats.solutions);
        }
        assert!(counts[0] >= 1);
        assert!(counts.iter().all(|&c| c == counts[0]), "{counts:?}");
    }
}
