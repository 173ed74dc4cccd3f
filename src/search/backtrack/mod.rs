//! The arc-consistent backtracker: the control that keeps the maps honest.
//!
//! Depth-first search over cells. At each node it picks the unplaced cell with the smallest
//! domain, tries its candidates in a random order, and maintains the chosen consistency
//! (forward checking, AC-3, AC-2001 or AC-4, with Régin's all-different filter or the 2x2
//! blocks beside it where asked) after every placement. Randomised runs restart on a
//! Luby schedule (Luby, Sinclair & Zuckerman 1993) scaled by `restart_base` nodes; with
//! restarts off the search is complete and can enumerate solutions.

mod count;
pub use count::{Count, count, count_with, estimate};

use crate::cancel::Cancel;
use crate::meter::Meter;
use crate::puzzle::{Board, Placement, Puzzle};
use crate::verify::alldiff::PieceFilter;
use crate::verify::block::BlockFilter;
use crate::verify::{self, AllDiff, Consistency, Network, Propagator, SupportCounts};
use rand::SeedableRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Search parameters.
#[derive(Clone, Debug)]
pub struct BacktrackConfig {
    /// The propagation after each placement.
    pub consistency: Consistency,
    /// Seed of the random value order (with `randomize`) and of the tree estimate's probes.
    pub seed: u64,
    /// Wall-clock limit of the search.
    pub time_limit: Option<Duration>,
    /// Placements the search may try.
    pub max_nodes: Option<u64>,
    /// Restart on a Luby schedule (incomplete, but robust to heavy tails).
    pub restarts: bool,
    /// Nodes per Luby unit.
    pub restart_base: u64,
    /// Try candidates in random order (else in candidate-list order).
    pub randomize: bool,
    /// Which open cell to branch on.
    pub order: CellOrder,
    /// Ends the search at its next check when tripped, as at the time limit.
    pub cancel: Cancel,
    /// Where the search shows its nodes and solutions while it runs (for progress).
    pub meter: Option<Meter>,
    /// The all-different on pieces it keeps (Régin's filter, or value removal).
    pub alldiff: AllDiff,
    /// Make the root singleton arc consistent before the search ([`verify::sac`]; not with
    /// AC-4, whose counts it would not update).
    pub sac: bool,
    /// Make the root partially path consistent before the search ([`verify::pc`]; not with
    /// AC-4), after SAC when both are asked.
    pub pc: bool,
    /// Keep every 2x2 block consistent on colours after each propagation
    /// ([`verify::block`]: the maintained form of the partial path consistency; not with
    /// AC-4).
    pub blocks: bool,
    /// How AC-3 and forward checking revise a domain (a lab switch: the rotation-table
    /// measurement; every way keeps the same candidates).
    pub revise: verify::Revise,
}

crate::options::one_value!(Consistency, CellOrder, AllDiff);

crate::options::options_table! {
    /// The options of the arc-consistent backtracker (`--method backtrack`).
    pub struct BacktrackOptions {
        /// The backtracker's propagation after each placement: forward checking, AC-3, AC-2001
        /// or AC-4.
        [TreeSearch]
        pub ac: Consistency = Consistency::Ac3,
        /// The backtracker's cell ordering: which open cell to branch on.
        [TreeSearch]
        pub order: CellOrder = CellOrder::MrvDegree,
        /// Nodes per Luby restart unit.
        [TreeSearch]
        pub restart_base: u64 = 256,
        /// No Luby restarts (a complete search).
        [TreeSearch]
        pub no_restarts: bool = false,
        /// The backtracker's all-different on pieces: values (a placed piece leaves every
        /// other domain) or regin (Régin's matching filter after each propagation:
        /// generalised arc consistency, Hall sets included).
        [TreeSearch]
        pub alldiff: AllDiff = AllDiff::Values,
        /// The backtracker's root made singleton arc consistent before the search (not with
        /// --ac ac4).
        [TreeSearch]
        pub sac: bool = false,
        /// The backtracker's root made partially path consistent (the grid's triangles) before
        /// the search, after --sac when both are given (not with --ac ac4).
        [TreeSearch]
        pub pc: bool = false,
        /// The backtracker keeps every 2x2 block consistent on colours after each propagation:
        /// the maintained form of the partial path consistency (not with --ac ac4).
        [TreeSearch]
        pub blocks: bool = false,
    }
    idle(o) {
        restart_base if o.no_restarts => "with --no-restarts";
    }
}

impl crate::options::Options for BacktrackOptions {
    fn check(&self) -> Result<(), crate::error::SpecError> {
        if self.alldiff == AllDiff::Regin && self.ac == Consistency::Ac4 {
            let why = "is not kept with --ac ac4 yet (its support counts do not follow the filter's removals): use fc, ac3 or ac2001";
            return Err(crate::error::SpecError::conflict("alldiff", why));
        }
        for (key, on) in [("sac", self.sac), ("pc", self.pc), ("blocks", self.blocks)] {
            if on && self.ac == Consistency::Ac4 {
                let why = "is not kept with --ac ac4 (its support counts are built from the full domains): use fc, ac3 or ac2001";
                return Err(crate::error::SpecError::conflict(key, why));
            }
        }
        crate::search::check_restarts(self.restart_base)
    }
}

impl BacktrackOptions {
    /// The search's configuration with these options: seed, limits and token as given,
    /// candidates in random order.
    pub fn config(
        &self,
        seed: u64,
        time_limit: Option<Duration>,
        max_nodes: Option<u64>,
        cancel: Cancel,
    ) -> BacktrackConfig {
        BacktrackConfig {
            consistency: self.ac,
            seed,
            time_limit,
            max_nodes,
            restarts: !self.no_restarts,
            restart_base: self.restart_base,
            randomize: true,
            order: self.order,
            cancel,
            meter: None,
            alldiff: self.alldiff,
            sac: self.sac,
            pc: self.pc,
            blocks: self.blocks,
            revise: verify::Revise::Masks,
        }
    }
}

/// Which open cell to branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
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
    /// Smallest domain divided by the conflict weight of the joins to open neighbours
    /// (dom/wdeg, Boussemart, Hemery, Lecoutre & Sais 2004); weights learn across restarts.
    /// With engines that keep no weights every join weighs 1.
    DomWdeg,
}

impl Default for BacktrackConfig {
    /// [`BacktrackOptions::default`] (where the defaults live), seed 0, no limits.
    fn default() -> Self {
        BacktrackOptions::default().config(0, None, None, Cancel::new())
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
    /// Luby restarts after the first descent.
    pub restarts: u64,
    /// Largest number of cells placed at once.
    pub best_depth: usize,
    /// Solutions found (each verified exactly).
    pub solutions: u64,
    /// Propagation work: arc revisions (forward checking, AC-3, AC-2001) or support-count removals
    /// (AC-4); a counter for comparing the engines. With `--blocks`, plus the blocks revised.
    pub revisions: u64,
    /// Support checks of the revisions: words of a neighbour's domain tested against a
    /// colour's supports (forward checking, AC-3, AC-2001; 0 for AC-4, which keeps counts and
    /// checks nothing after it built them). With `--blocks`, plus the candidates the block
    /// filter tested.
    pub checks: u64,
    /// Candidates removed by propagation (revisions, or AC-4's counts, and the block filter's),
    /// placements' own removals not counted.
    pub removals: u64,
    /// Seconds the search took, wall clock.
    pub wall_s: f64,
    /// Seconds of its first start, part of `wall_s`: the full domains, the root's
    /// propagation and the root passes (`--sac`, `--pc`), before the first placement (the
    /// preprocessing; the rest of `wall_s` is the search).
    pub root_s: f64,
}

impl BacktrackStats {
    /// Placements tried per second (0 before any time has passed).
    pub fn nodes_per_s(&self) -> f64 {
        if self.wall_s > 0.0 { self.nodes as f64 / self.wall_s } else { 0.0 }
    }
}

/// A random-probe estimate of the size of a complete search tree ([`Backtracker::estimate`]).
#[derive(Clone, Debug, serde::Serialize)]
pub struct TreeEstimate {
    /// Random probes made.
    pub probes: u64,
    /// Estimated placements tried by the complete search.
    pub nodes: f64,
    /// Standard error of `nodes` (from the spread of the probes; heavy tails make it optimistic).
    pub nodes_stderr: f64,
    /// Estimated solutions.
    pub solutions: f64,
    /// Seconds the estimate took, wall clock.
    pub wall_s: f64,
}

impl TreeEstimate {
    /// The one line `concur count --estimate` prints.
    pub fn summary(&self) -> String {
        format!(
            "estimated tree: {:.3e} nodes (+- {:.1e}), {:.3e} solutions, from {} probes in {:.3} s",
            self.nodes, self.nodes_stderr, self.solutions, self.probes, self.wall_s
        )
    }
}

/// What the visitor tells the search after a solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Go on searching for more solutions.
    Continue,
    /// End the search (its ending is [`Ending::Stopped`]).
    Stop,
}

/// Domain storage and propagation of a search: domain copies per depth for FC, AC-3 and
/// AC-2001; trailed support counts for AC-4.
enum Engine {
    Copy {
        doms: Vec<u64>,
        level: usize,
        prop: Propagator,
        marks: Vec<usize>,
        pieces: Option<Box<Pieces>>,
        blocks: Option<Box<Blocks>>,
        /// With root passes: the root's domains once made (None inside: inconsistent), which
        /// every restart starts from instead of making them again.
        root: Option<Option<Vec<u64>>>,
    },
    Counts(SupportCounts),
}

/// Régin's filter and its scratch, for a search that keeps it.
struct Pieces {
    filter: PieceFilter,
    changed: Vec<u32>,
}

impl Pieces {
    /// Régin's filter on `d`, to a fixed point with the arc consistency `kind` (forward
    /// checking: one pass of the filter). False on a wipe-out.
    fn run(&mut self, net: &Network, d: &mut [u64], prop: &mut Propagator, kind: Consistency) -> bool {
        loop {
            self.changed.clear();
            if !self.filter.run(net, d, &mut self.changed) {
                return false;
            }
            if self.changed.is_empty() || kind == Consistency::Fc {
                return true;
            }
            if !prop.propagate_all(net, d, kind) {
                return false;
            }
        }
    }
}

/// The block filter and its scratch, for a search that keeps it.
struct Blocks {
    filter: BlockFilter,
    changed: Vec<u32>,
}

/// The filters kept beside arc consistency (Régin's, the blocks'), to a common fixed point
/// with the arc consistency `kind` (forward checking: one pass of each). False on a wipe-out.
fn filter(
    net: &Network,
    d: &mut [u64],
    prop: &mut Propagator,
    kind: Consistency,
    pieces: &mut Option<Box<Pieces>>,
    blocks: &mut Option<Box<Blocks>>,
) -> bool {
    loop {
        if !pieces.as_mut().is_none_or(|p| p.run(net, d, prop, kind)) {
            return false;
        }
        let Some(b) = blocks else { return true };
        b.changed.clear();
        if !b.filter.run(net, d, &mut b.changed) {
            return false;
        }
        if b.changed.is_empty() || kind == Consistency::Fc {
            return true;
        }
        if !prop.propagate_all(net, d, kind) {
            return false;
        }
    }
}

impl Engine {
    /// Full domains plus root propagation; false when the puzzle is already inconsistent.
    fn reset(&mut self, net: &Network, kind: Consistency, root: Rungs) -> bool {
        let full = net.full_domains();
        match self {
            Engine::Copy { doms, level, prop, pieces, blocks, root: made, .. } => {
                *level = 0;
                prop.reset();
                if let Some(made) = made {
                    // The root passes are deterministic: a restart starts from their domains.
                    return match made {
                        Some(r) => {
                            doms[..r.len()].copy_from_slice(r);
                            true
                        }
                        None => false,
                    };
                }
                doms[..full.len()].copy_from_slice(&full);
                let d = &mut doms[..full.len()];
                let ok = prop.propagate_all(net, d, kind)
                    && (!root.sac || verify::sac::sac(net, d, &mut verify::sac::SacStats::default()))
                    && (!root.pc
                        || (verify::pc::pc(net, d, &mut verify::pc::PcStats::default())
                            && prop.propagate_all(net, d, kind)))
                    && filter(net, d, prop, kind, pieces, blocks);
                if root.sac || root.pc {
                    *made = Some(ok.then(|| d.to_vec()));
                }
                ok
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
            Engine::Copy { doms, level, prop, marks, .. } => {
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
            Engine::Copy { doms, level, prop, pieces, blocks, .. } => {
                let w = net.total_words();
                let d = &mut doms[*level * w..(*level + 1) * w];
                prop.assign(net, d, c, j, kind) && filter(net, d, prop, kind, pieces, blocks)
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

    #[inline]
    fn weight(&self, c: usize, s: usize) -> u64 {
        match self {
            Engine::Copy { .. } => 1,
            Engine::Counts(sc) => sc.weight(c, s) as u64,
        }
    }

    /// (revisions, support checks, removals) so far.
    fn work(&self) -> (u64, u64, u64) {
        match self {
            Engine::Copy { prop, blocks, .. } => {
                let b = blocks.as_ref().map(|b| b.filter.stats).unwrap_or_default();
                (prop.revisions + b.blocks, prop.checks + b.tests, prop.removals + b.removed)
            }
            Engine::Counts(sc) => (sc.removals, 0, sc.removals),
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
    net: Arc<Network>,
    /// Cells fixed before the search starts (completion of a partial board).
    fixed: Vec<(usize, Placement)>,
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
    /// Value order by score ([`Backtracker::set_value_scores`]): per cell, from `score_off[c]`,
    /// one score per candidate of `puzzle.candidates().of(c)`; higher is tried first.
    scores: Vec<f32>,
    score_off: Vec<usize>,
    use_scores: bool,
    /// With [`Backtracker::keep_deepest`]: the candidate of each cell on the deepest partial
    /// board of the run (`u32::MAX` where it was open), copied when the depth record rises.
    deepest: Option<Vec<u32>>,
}

/// The rungs above arc consistency a search keeps: the preprocessing passes at the root and
/// the maintained block filter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rungs {
    /// Singleton arc consistency at the root ([`verify::sac`]).
    pub sac: bool,
    /// Partial path consistency on the triangulated grid at the root ([`verify::pc`]).
    pub pc: bool,
    /// Block consistency on colours after every propagation ([`verify::block`]).
    pub blocks: bool,
}

impl BacktrackConfig {
    /// Its rungs above arc consistency.
    pub fn rungs(&self) -> Rungs {
        Rungs { sac: self.sac, pc: self.pc, blocks: self.blocks }
    }
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
    /// A search of `puzzle` with its own constraint network.
    pub fn new(puzzle: &'a Puzzle, cfg: BacktrackConfig) -> Self {
        Self::with_network(puzzle, Arc::new(Network::new(puzzle)), cfg)
    }

    /// A search over a network built once and shared (e.g. by the workers of a batch).
    pub fn with_network(puzzle: &'a Puzzle, net: Arc<Network>, cfg: BacktrackConfig) -> Self {
        let n = puzzle.cells();
        let words = net.total_words();
        Backtracker {
            puzzle,
            engine: match cfg.consistency {
                Consistency::Ac4 => Engine::Counts(SupportCounts::new(&net, &net.full_domains())),
                _ => Engine::Copy {
                    doms: vec![0; words * (n + 1)],
                    level: 0,
                    prop: {
                        let mut prop = Propagator::new(&net);
                        prop.revise = cfg.revise;
                        prop
                    },
                    marks: vec![0; n + 1],
                    pieces: (cfg.alldiff == AllDiff::Regin)
                        .then(|| Box::new(Pieces { filter: PieceFilter::new(), changed: Vec::new() })),
                    blocks: cfg
                        .blocks
                        .then(|| Box::new(Blocks { filter: BlockFilter::new(&net), changed: Vec::new() })),
                    root: None,
                },
            },
            order: (0..=n).map(|c| Vec::with_capacity(net.candidates().len(c.min(n - 1)))).collect(),
            net,
            fixed: Vec::new(),
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            cfg,
            placed: vec![false; n],
            chosen: vec![0; n],
            stats: BacktrackStats::default(),
            start: Instant::now(),
            restart_at: u64::MAX,
            scores: Vec::new(),
            score_off: Vec::new(),
            use_scores: false,
            deepest: None,
        }
    }

    /// Keeps the deepest partial board of each run (a copy of the placed cells whenever the
    /// depth record rises: at most once a cell, since the record only grows), for
    /// [`Backtracker::deepest_board`].
    pub fn keep_deepest(&mut self) {
        self.deepest = Some(vec![u32::MAX; self.puzzle.cells()]);
    }

    /// The deepest partial board of the last run (with [`Backtracker::keep_deepest`]; `None`
    /// without it or before any placement), completed greedily by ALNS's repair
    /// ([`crate::search::alns::complete_greedily`]) into a full board whose score can be read:
    /// the same completion rule as the scan's.
    pub fn deepest_board(&self) -> Option<Board> {
        let kept = self.deepest.as_ref()?;
        if self.stats.best_depth == 0 {
            return None;
        }
        let cands = self.net.candidates();
        let cells: Vec<Option<Placement>> =
            (0..self.puzzle.cells()).map(|c| (kept[c] != u32::MAX).then(|| cands.of(c)[kept[c] as usize])).collect();
        Some(crate::search::alns::complete_greedily(self.puzzle, &cells, self.cfg.seed))
    }

    /// Orders each cell's candidates by `scores` (highest first; ties in the random or list
    /// order the configuration asks for), or by the configuration alone with `None`. `scores`
    /// is flat over the cells, one per candidate of `puzzle.candidates().of(c)` in that order
    /// (the candidate ids of F1's projections, `f1::project::F1`). This is how a map guides the search.
    ///
    /// Panics when `scores` does not hold one score per candidate: a caller's bug, not input
    /// (the guided search passes the candidate sums of the same puzzle).
    pub fn set_value_scores(&mut self, scores: Option<&[f32]>) {
        match scores {
            None => self.use_scores = false,
            Some(sc) => {
                if self.score_off.is_empty() {
                    let cands = self.net.candidates();
                    let mut off = 0;
                    self.score_off = (0..self.net.cells())
                        .map(|c| {
                            let o = off;
                            off += cands.len(c);
                            o
                        })
                        .collect();
                    self.score_off.push(off);
                }
                assert_eq!(sc.len(), *self.score_off.last().unwrap_or(&0), "one score per candidate");
                self.scores.clear();
                self.scores.extend_from_slice(sc);
                self.use_scores = true;
            }
        }
    }

    /// The constraint network the search propagates over.
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Runs the search, calling `visit` with every verified solution found.
    pub fn run(&mut self, mut visit: impl FnMut(&Board) -> Next) -> (Ending, BacktrackStats) {
        self.start = Instant::now();
        self.stats = BacktrackStats::default();
        if let Some(kept) = &mut self.deepest {
            kept.fill(u32::MAX);
        }
        let ending = loop {
            self.placed.iter_mut().for_each(|p| *p = false);
            self.restart_at = if self.cfg.restarts {
                self.stats.nodes + self.cfg.restart_base.max(1) * luby(self.stats.restarts + 1)
            } else {
                u64::MAX
            };
            let t0 = Instant::now();
            let ready = self.engine.reset(&self.net, self.cfg.consistency, self.cfg.rungs()) && self.apply_fixed();
            if self.stats.restarts == 0 {
                self.stats.root_s = t0.elapsed().as_secs_f64();
            }
            if !ready {
                break Ending::Exhausted;
            }
            match self.dfs(0, &mut visit) {
                Flow::Continue => break Ending::Exhausted,
                Flow::Stop(e) => break e,
                Flow::Restart => self.stats.restarts += 1,
            }
        };
        (self.stats.revisions, self.stats.checks, self.stats.removals) = self.engine.work();
        self.stats.wall_s = self.start.elapsed().as_secs_f64();
        (ending, self.stats.clone())
    }

    fn out_of_budget(&self) -> bool {
        if self.cfg.max_nodes.is_some_and(|m| self.stats.nodes >= m) {
            return true;
        }
        if !self.stats.nodes.is_multiple_of(1024) {
            return false;
        }
        if let Some(m) = &self.cfg.meter {
            m.show(self.stats.nodes, self.stats.solutions);
        }
        self.cfg.time_limit.is_some_and(|t| self.start.elapsed() >= t) || self.cfg.cancel.is_cancelled()
    }

    /// The open cell to branch on next (None when every cell is placed).
    fn pick(&self) -> Option<usize> {
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
                CellOrder::Scan => {
                    if sz <= 1 {
                        0
                    } else {
                        1 + c as u64
                    }
                }
                CellOrder::Mrv => sz,
                CellOrder::MrvDegree => (sz << 3) | (4 - self.placed_neighbours(c)),
                CellOrder::DomDeg => {
                    if sz <= 1 {
                        0
                    } else {
                        (sz << 8) / (1 + self.placed_neighbours(c))
                    }
                }
                CellOrder::DomWdeg => {
                    if sz <= 1 {
                        0
                    } else {
                        let wdeg: u64 = (0..4)
                            .filter_map(|s| {
                                self.net.neighbour(c, s).filter(|&m| !self.placed[m]).map(|_| self.engine.weight(c, s))
                            })
                            .sum();
                        (sz << 16) / wdeg.max(1)
                    }
                }
            };
            if best.is_none_or(|(b, _)| key < b) {
                best = Some((key, c));
                if sz <= 1 {
                    break;
                }
            }
        }
        best.map(|(_, c)| c)
    }

    fn dfs(&mut self, depth: usize, visit: &mut impl FnMut(&Board) -> Next) -> Flow {
        let Some(cell) = self.pick() else {
            return self.report(visit);
        };
        let mut order = std::mem::take(&mut self.order[depth]);
        order.clear();
        self.engine.members(&self.net, cell, &mut order);
        if self.cfg.randomize {
            order.shuffle(&mut self.rng);
        }
        if self.use_scores {
            let sc = &self.scores[self.score_off[cell]..self.score_off[cell + 1]];
            // Stable: equal scores keep the order above.
            order.sort_by(|&a, &b| sc[b as usize].total_cmp(&sc[a as usize]));
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
                if depth + 1 > self.stats.best_depth {
                    self.stats.best_depth = depth + 1;
                    if let Some(kept) = &mut self.deepest {
                        for (c, k) in kept.iter_mut().enumerate() {
                            *k = if self.placed[c] { self.chosen[c] } else { u32::MAX };
                        }
                    }
                }
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

    /// Knuth's (1975) random-probe estimate of the complete tree (no restarts): each probe
    /// walks one random root-to-leaf path, tries every child on the way, and weighs what it
    /// sees by the product of the branching factors above it. The mean over probes is an
    /// unbiased estimate of the nodes (placements tried) and of the solutions.
    pub fn estimate(&mut self, probes: u64) -> TreeEstimate {
        self.start = Instant::now();
        let (mut sum, mut sum2, mut sols) = (0f64, 0f64, 0f64);
        let mut order = Vec::new();
        let mut ok = Vec::new();
        let mut made = 0u64;
        for _ in 0..probes {
            // A stop request ends the estimate with the probes made so far.
            if self.cfg.cancel.is_cancelled() {
                break;
            }
            if let Some(m) = &self.cfg.meter {
                m.show(made, 0);
            }
            made += 1;
            self.placed.iter_mut().for_each(|p| *p = false);
            let mut nodes = 0f64;
            if self.engine.reset(&self.net, self.cfg.consistency, self.cfg.rungs()) && self.apply_fixed() {
                let mut weight = 1f64;
                while let Some(cell) = self.pick() {
                    order.clear();
                    self.engine.members(&self.net, cell, &mut order);
                    ok.clear();
                    for &j in &order {
                        let mark = self.engine.push();
                        if self.engine.assign(&self.net, cell, j as usize, self.cfg.consistency) {
                            ok.push(j);
                        }
                        self.engine.pop(&self.net, mark);
                    }
                    nodes += weight * order.len() as f64;
                    let Some(&j) = ok.choose(&mut self.rng) else { break };
                    weight *= ok.len() as f64;
                    self.engine.push();
                    let alive = self.engine.assign(&self.net, cell, j as usize, self.cfg.consistency);
                    debug_assert!(alive);
                    self.placed[cell] = true;
                    self.chosen[cell] = j;
                }
                if self.placed.iter().all(|&p| p) {
                    sols += weight;
                }
            }
            sum += nodes;
            sum2 += nodes * nodes;
        }
        let k = made.max(1) as f64;
        let mean = sum / k;
        let var = (sum2 / k - mean * mean).max(0.0);
        TreeEstimate {
            probes: made,
            nodes: mean,
            nodes_stderr: (var / k).sqrt(),
            solutions: sols / k,
            wall_s: self.start.elapsed().as_secs_f64(),
        }
    }

    /// Places the fixed cells (with propagation); false when they admit no completion.
    fn apply_fixed(&mut self) -> bool {
        for i in 0..self.fixed.len() {
            let (c, pl) = self.fixed[i];
            let Some(j) = self.net.candidates().of(c).iter().position(|q| *q == pl) else { return false };
            if self.engine.size(&self.net, c) == 0 || !self.engine.assign(&self.net, c, j, self.cfg.consistency) {
                return false;
            }
            self.placed[c] = true;
            self.chosen[c] = j as u32;
        }
        true
    }

    /// Searches for a completion of `board` that keeps every cell outside `free` as it is.
    /// Returns the first (verified) completion found within the configured limits.
    pub fn complete(&mut self, board: &Board, free: &[bool]) -> Option<Board> {
        self.fixed.clear();
        self.fixed.extend(board.cells.iter().enumerate().filter(|&(c, _)| !free[c]).map(|(c, pl)| (c, *pl)));
        let mut found = None;
        self.run(|b| {
            found = Some(b.clone());
            Next::Stop
        });
        self.fixed.clear();
        found
    }

    /// Nodes of the last run.
    pub fn last_nodes(&self) -> u64 {
        self.stats.nodes
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

/// What [`solve`] found.
#[derive(Clone, Debug)]
pub struct BacktrackSolve {
    /// The solution (verified exactly), if one was found.
    pub board: Option<Board>,
    /// Unsolved: the deepest partial board, completed greedily
    /// ([`Backtracker::deepest_board`]); `None` when solved or nothing was placed.
    pub best_board: Option<Board>,
    /// How the search ended.
    pub ending: Ending,
    /// Its work.
    pub stats: BacktrackStats,
}

/// Finds one solution (or none within the limits, and then the deepest partial board,
/// completed greedily).
pub fn solve(puzzle: &Puzzle, cfg: BacktrackConfig) -> BacktrackSolve {
    let mut bt = Backtracker::new(puzzle, cfg);
    bt.keep_deepest();
    let mut found = None;
    let (ending, stats) = bt.run(|b| {
        found = Some(b.clone());
        Next::Stop
    });
    let best_board = if found.is_none() { bt.deepest_board() } else { None };
    BacktrackSolve { board: found, best_board, ending, stats }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Watch;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use crate::puzzle::rotate_board;

    /// Unsolved within its nodes, the backtracker's best board is its deepest partial board
    /// completed greedily: a full board of the puzzle's pieces that keeps the hints and
    /// matches at least the joins between the cells of that partial board; solved, it has
    /// none.
    #[test]
    fn an_unsolved_search_gives_its_deepest_board_completed() {
        for (w, h, seed, consistency) in
            [(10, 10, 1, Consistency::Ac3), (12, 8, 2, Consistency::Fc), (11, 11, 3, Consistency::Ac2001)]
        {
            let (p, b) =
                generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                    .unwrap();
            let hints = [w + 1, 2 * w + 3]
                .iter()
                .map(|&c| crate::puzzle::Hint { cell: c, piece: b.cells[c].piece as usize, rot: b.cells[c].rot })
                .collect();
            let p = Puzzle::new(w, h, p.pieces().to_vec(), hints).unwrap();
            let cfg = BacktrackConfig { consistency, seed, max_nodes: Some(400), ..Default::default() };
            let mut bt = Backtracker::new(&p, cfg.clone());
            bt.keep_deepest();
            let (_, stats) = bt.run(|_| Next::Stop);
            let kept = bt.deepest.clone().unwrap();
            let open = kept.iter().filter(|&&k| k == u32::MAX).count();
            assert!(open > 0 && stats.best_depth > 0, "{w}x{h}: solved within 400 nodes; pick a harder case");
            let r = solve(&p, cfg);
            assert!(r.board.is_none());
            let best = r.best_board.expect("an unsolved search gives a best board");
            assert_eq!(bt.deepest_board().as_ref(), Some(&best), "{w}x{h}: not reproducible");
            crate::search::alns::assert_completed_board(&p, &best, &format!("{w}x{h}"));
            // The deepest partial board is on it, and its inner joins match.
            let cands = p.candidates();
            for (c, &k) in kept.iter().enumerate().filter(|&(_, &k)| k != u32::MAX) {
                assert_eq!(best.cells[c], cands.of(c)[k as usize], "{w}x{h}: cell {c} moved");
            }
            let joins = (0..p.cells())
                .flat_map(|c| [1, 2].map(|s| (c, p.neighbour(c, s))))
                .filter(|&(c, m)| m.is_some_and(|m| kept[c] != u32::MAX && kept[m] != u32::MAX))
                .count();
            assert!(p.score(&best) >= joins, "{w}x{h}: {} < {joins}", p.score(&best));
            assert!(!verify::check(&p, &best).valid);
        }
        let (p, _) =
            generate(&GenerateOptions { width: 4, height: 4, frame_colors: None, inner_colors: None, seed: 5 })
                .unwrap();
        let r = solve(&p, BacktrackConfig { seed: 1, ..Default::default() });
        assert!(r.board.is_some() && r.best_board.is_none());
    }

    #[test]
    fn whole_board_rotation_keeps_solutions_valid() {
        let (p, b) =
            generate(&GenerateOptions { width: 4, height: 4, frame_colors: None, inner_colors: None, seed: 8 })
                .unwrap();
        let mut r = b.clone();
        for _ in 0..4 {
            r = rotate_board(&r);
            assert!(verify::check(&p, &r).valid);
        }
        assert_eq!(r, b);
        let c = count(&p, Consistency::Ac4, CellOrder::MrvDegree, None, None, &Watch::default());
        assert!(c.complete);
        assert_eq!(c.solutions, 4 * c.up_to_rotation.unwrap());
    }

    #[test]
    fn luby_sequence() {
        let got: Vec<u64> = (1..=15).map(luby).collect();
        assert_eq!(got, [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]);
    }

    #[test]
    fn solves_generated_puzzles_with_every_consistency() {
        for seed in 0..4 {
            let (p, _) =
                generate(&GenerateOptions { width: 5, height: 5, frame_colors: None, inner_colors: None, seed })
                    .unwrap();
            for consistency in [Consistency::Fc, Consistency::Ac3, Consistency::Ac2001, Consistency::Ac4] {
                let cfg = BacktrackConfig { consistency, seed, ..Default::default() };
                let BacktrackSolve { board: sol, ending, stats, .. } = solve(&p, cfg);
                let sol = sol.unwrap_or_else(|| panic!("{consistency:?} seed {seed}: {ending:?} {stats:?}"));
                assert!(verify::check(&p, &sol).valid);
            }
        }
    }

    #[test]
    fn complete_search_counts_the_same_with_every_consistency() {
        let (p, _) =
            generate(&GenerateOptions { width: 4, height: 3, frame_colors: Some(2), inner_colors: Some(2), seed: 3 })
                .unwrap();
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

    /// Régin's filter on the pieces loses no solution, with each level it can join, and its
    /// tree is never larger than the same search's without it; a singleton-arc-consistent root
    /// loses none either.
    #[test]
    fn regin_s_filter_counts_the_same_solutions_on_a_tree_no_larger() {
        let (mut smaller, mut tried, mut blocks_smaller) = (0, 0, 0);
        for (w, h, seed) in [(4, 3, 3), (4, 4, 1), (5, 3, 2), (4, 4, 6)] {
            let opts = GenerateOptions { width: w, height: h, frame_colors: Some(2), inner_colors: Some(3), seed };
            let Ok((p, _)) = generate(&opts) else { continue };
            tried += 1;
            for consistency in [Consistency::Fc, Consistency::Ac3, Consistency::Ac2001] {
                let run_with = |alldiff, sac, pc, blocks| {
                    let cfg = BacktrackConfig {
                        consistency,
                        alldiff,
                        sac,
                        pc,
                        blocks,
                        restarts: false,
                        randomize: false,
                        order: CellOrder::Scan,
                        ..Default::default()
                    };
                    let (ending, stats) = Backtracker::new(&p, cfg).run(|_| Next::Continue);
                    assert_eq!(ending, Ending::Exhausted);
                    (stats.solutions, stats.nodes)
                };
                let run_pc = |alldiff, sac, pc| run_with(alldiff, sac, pc, false);
                let run = |alldiff, sac| run_pc(alldiff, sac, false);
                let (plain, regin) = (run(AllDiff::Values, false), run(AllDiff::Regin, false));
                assert_eq!(plain.0, regin.0, "{w}x{h} seed {seed} {consistency:?}: solutions");
                // A singleton-arc-consistent root, alone and with the filter: the same solutions.
                assert_eq!(run(AllDiff::Values, true).0, plain.0, "{w}x{h} seed {seed} {consistency:?}: SAC");
                assert_eq!(run(AllDiff::Regin, true).0, plain.0, "{w}x{h} seed {seed} {consistency:?}: SAC + Régin");
                // A path-consistent root: the same solutions on a tree no larger.
                let pc = run_pc(AllDiff::Values, false, true);
                assert_eq!(pc.0, plain.0, "{w}x{h} seed {seed} {consistency:?}: PC");
                assert!(pc.1 <= plain.1, "{w}x{h} seed {seed} {consistency:?}: PC {} nodes against {}", pc.1, plain.1);
                assert_eq!(run_pc(AllDiff::Regin, true, true).0, plain.0, "{w}x{h} seed {seed}: SAC + PC + Régin");
                // The maintained block filter, alone and with Régin's: the same solutions on a
                // tree no larger.
                let blocks = run_with(AllDiff::Values, false, false, true);
                assert_eq!(blocks.0, plain.0, "{w}x{h} seed {seed} {consistency:?}: blocks");
                assert!(blocks.1 <= plain.1, "{w}x{h} seed {seed} {consistency:?}: blocks {} > {}", blocks.1, plain.1);
                blocks_smaller += usize::from(blocks.1 < plain.1);
                assert_eq!(
                    run_with(AllDiff::Regin, false, false, true).0,
                    plain.0,
                    "{w}x{h} seed {seed}: blocks + Régin"
                );
                assert!(
                    regin.1 <= plain.1,
                    "{w}x{h} seed {seed} {consistency:?}: {} nodes against {}",
                    regin.1,
                    plain.1
                );
                smaller += usize::from(regin.1 < plain.1);
            }
        }
        assert!(tried >= 3, "only {tried} puzzles generated");
        assert!(smaller > 0, "the filter never pruned a node");
        assert!(blocks_smaller > 0, "the block filter never pruned a node");
    }

    /// With root passes and restarts, every restart starts from the root's domains made once,
    /// and the search still finds a verified solution.
    #[test]
    fn restarts_start_from_the_root_passes_domains() {
        for seed in 0..4 {
            let opts = GenerateOptions { width: 6, height: 6, frame_colors: None, inner_colors: None, seed };
            let (p, _) = generate(&opts).expect("a puzzle");
            for (sac, pc) in [(true, false), (false, true), (true, true)] {
                let o = BacktrackOptions { sac, pc, restart_base: 8, ..Default::default() };
                let BacktrackSolve { board, ending, stats, .. } = solve(&p, o.config(seed, None, None, Cancel::new()));
                let board = board.expect("a solution");
                assert!(crate::verify::check(&p, &board).valid);
                assert_eq!(ending, Ending::Stopped);
                assert!(stats.restarts > 0 || stats.nodes < 64, "seed {seed}: restarts ran");
            }
        }
    }
}
