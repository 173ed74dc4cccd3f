//! The first-solution search: the candidate trees (orientations, corner pieces), Knuth's
//! estimate of each, and randomised restarted walks on several threads.

use super::fast::FastWalker;
use super::tables::{Tables, symmetry_piece, symmetry_piece_ok};
use super::walk::{FirstWalk, Walker, estimate_tree};
use crate::cancel::{Cancel, Deadline};
use crate::meter::with_thread_cpu;
use crate::puzzle::{Board, Placement, Puzzle};
use crate::search::backtrack::Ending;
use crate::verify;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One of the eight ways to lay a puzzle's board over the row scan: reflect it in the main
/// diagonal (a column scan; the pieces are reflected with it, so solutions correspond one to
/// one) or not, then turn it clockwise by `turns` quarter turns. The scan then starts in the
/// corresponding corner of the original board and runs along its rows or its columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Orientation {
    /// Reflect the board in its main diagonal first (a column scan).
    pub mirror: bool,
    /// Then turn it clockwise by this many quarter turns, 0..=3.
    pub turns: u8,
}

impl Orientation {
    /// Every orientation, the identity first.
    pub fn all() -> impl Iterator<Item = Orientation> {
        [false, true].into_iter().flat_map(|mirror| (0..4).map(move |turns| Orientation { mirror, turns }))
    }

    /// Where cell `cell` and rotation `rot` of a `w` x `h` board go: (cell, rotation) in the
    /// oriented board.
    fn place(self, w: usize, h: usize, cell: usize, rot: u8) -> (usize, u8) {
        let (mut w, mut h, mut r, mut c, mut rot) = (w, h, cell / w, cell % w, rot % 4);
        if self.mirror {
            (r, c) = (c, r);
            (w, h) = (h, w);
            rot = (4 - rot) % 4;
        }
        for _ in 0..self.turns {
            (r, c) = (c, h - 1 - r);
            (w, h) = (h, w);
            rot = (rot + 1) % 4;
        }
        (r * w + c, rot)
    }

    /// The rotation in the original board of a placement turned `rot` in the oriented one.
    fn unrot(self, rot: u8) -> u8 {
        let r = (rot + 4 - self.turns % 4) % 4;
        if self.mirror { (4 - r) % 4 } else { r }
    }

    /// The puzzle as this orientation lays it out (hints carried along).
    pub fn puzzle(self, puzzle: &Puzzle) -> Puzzle {
        if self == (Orientation { mirror: false, turns: 0 }) {
            return puzzle.clone();
        }
        let (w, h) = (puzzle.width(), puzzle.height());
        let pieces = if self.mirror {
            puzzle.pieces().iter().map(|&[u, r, d, l]| [l, d, r, u]).collect()
        } else {
            puzzle.pieces().to_vec()
        };
        let hints = puzzle
            .hints()
            .iter()
            .map(|hint| {
                let (cell, rot) = self.place(w, h, hint.cell, hint.rot);
                crate::puzzle::Hint { cell, piece: hint.piece, rot }
            })
            .collect();
        let (ow, oh) = if self.mirror ^ (self.turns % 2 == 1) { (h, w) } else { (w, h) };
        Puzzle::new(ow, oh, pieces, hints).expect("an oriented valid puzzle is valid")
    }

    /// A board of the oriented puzzle as a board of the original `w` x `h` one.
    pub fn unorient(self, b: &Board, w: usize, h: usize) -> Board {
        let cells = (0..w * h)
            .map(|c| {
                let (oc, _) = self.place(w, h, c, 0);
                let pl = b.cells[oc];
                Placement { piece: pl.piece, rot: self.unrot(pl.rot) }
            })
            .collect();
        Board { width: w, height: h, cells }
    }
}

/// How `solve` picks the tree of each restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum TreeChoice {
    /// The smallest tree by Knuth's estimate, for every restart.
    #[default]
    Estimate,
    /// A tree drawn at random for each restart.
    Random,
}

/// Which walker [`super::solve`] runs. Both walk the same trees node for node (same seeds, same
/// node counts and boards); the table walker is the plain one, kept as the oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ScanWalker {
    /// The walker specialised for speed where it applies (no row-chain cut, at most 256
    /// cells, the join budgets in 64 bits); else the table walker.
    #[default]
    Fast,
    /// The table walker.
    Table,
}

/// Settings of [`super::solve`].
#[derive(Clone, Debug)]
pub struct ScanSolveConfig {
    /// The search's seed: thread `t` draws from its own stream of `(seed, t)`.
    pub seed: u64,
    /// Wall-clock limit of the search, setup included.
    pub time_limit: Option<Duration>,
    /// Node limit of the whole search (split evenly across the threads).
    pub max_nodes: Option<u64>,
    /// Independent searches run at once (0: every core).
    pub threads: usize,
    /// Restart on a Luby schedule; without, each thread walks its tree to the end.
    pub restarts: bool,
    /// Nodes per Luby unit.
    pub restart_base: u64,
    /// How each restart picks its tree.
    pub choice: TreeChoice,
    /// Random probes of Knuth's estimator per candidate tree.
    pub probes: u64,
    /// Cut placements whose row below cannot be chained (`Walker::reach_mask`). Off by
    /// default: it shrinks the tree by about a third on small boards but makes a node about
    /// 2.5 times dearer (BENCHMARKS.md).
    pub row_chain: bool,
    /// Which walker walks the trees.
    pub walker: ScanWalker,
    /// The depths at which one more mismatched join is allowed (empty: the exact scan; else
    /// the break-budget walk, `breaks.rs`).
    pub breaks: Vec<usize>,
    /// Ends the search at its next check when tripped, as at the time limit.
    pub cancel: Cancel,
}

crate::options::one_value!(TreeChoice, ScanWalker);

crate::options::options_table! {
    /// The options of the row-scan search (`--method scan`).
    pub struct ScanSolveOptions {
        /// Nodes per Luby restart unit.
        [TreeSearch]
        pub restart_base: u64 = 1 << 20,
        /// No Luby restarts: each thread walks its tree to the end.
        [TreeSearch]
        pub no_restarts: bool = false,
        /// The scan's tree of each restart: the smallest by Knuth's estimate, or one at random.
        [TreeSearch]
        pub tree: TreeChoice = TreeChoice::Estimate,
        /// The scan's random probes of Knuth's estimator per candidate tree.
        [TreeSearch]
        pub probes: u64 = 1_000,
        /// The scan's row-chain cut (the row under each placement must chain); it shrinks the
        /// tree by about a third on small boards but makes a node about 2.5 times dearer
        /// (BENCHMARKS.md).
        [TreeSearch]
        pub row_chain: bool = false,
        /// The scan's walker: fast, or table (the plain walker, the oracle of the fast one;
        /// both walk the same trees node for node).
        [TreeSearch]
        pub scan_walker: ScanWalker = ScanWalker::Fast,
        /// The scan's break budget, Blackwood's "break indexes": the depths (0-based cells
        /// of the row scan) from which one more mismatched join is allowed, comma separated
        /// (default: none, the exact scan). Blackwood's 16x16 list is
        /// 201,206,211,216,221,225,229,233,237,239.
        [TreeSearch]
        pub breaks: Vec<usize> = Vec::new(),
    }
    idle(o) {
        restart_base if o.no_restarts => "with --no-restarts";
        tree if !o.breaks.is_empty() => "with --breaks (the break walk scans the puzzle's own rows)";
        probes if !o.breaks.is_empty() => "with --breaks (the break walk estimates no trees)";
        row_chain if !o.breaks.is_empty() => "with --breaks";
        scan_walker if !o.breaks.is_empty() => "with --breaks (it has a walker of its own)";
    }
}

impl crate::options::Options for ScanSolveOptions {
    fn check(&self) -> Result<(), crate::error::SpecError> {
        crate::search::check_restarts(self.restart_base)
    }
}

impl ScanSolveOptions {
    /// The search's configuration with these options: seed, limits, threads (0: every core)
    /// and token as given.
    pub fn config(
        &self,
        seed: u64,
        time_limit: Option<Duration>,
        max_nodes: Option<u64>,
        threads: usize,
        cancel: Cancel,
    ) -> ScanSolveConfig {
        ScanSolveConfig {
            seed,
            time_limit,
            max_nodes,
            threads,
            restarts: !self.no_restarts,
            restart_base: self.restart_base,
            choice: self.tree,
            probes: self.probes,
            row_chain: self.row_chain,
            walker: self.scan_walker,
            breaks: self.breaks.clone(),
            cancel,
        }
    }
}

impl Default for ScanSolveConfig {
    /// [`ScanSolveOptions::default`] (where the defaults live), seed 0, no limits, one
    /// thread.
    fn default() -> Self {
        ScanSolveOptions::default().config(0, None, None, 1, Cancel::new())
    }
}

/// A tree the scan can walk: an orientation of the board and, with turn symmetry (square,
/// no hints), the corner piece fixed in the top-left cell.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct ScanTree {
    /// How the board lies over the scan.
    pub orientation: Orientation,
    /// 0-based.
    pub corner_piece: Option<u16>,
    /// Knuth's estimate of its nodes.
    pub estimated_nodes: f64,
}

/// Outcome of [`super::solve`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScanSolve {
    /// The first solution found; it passed the exact check.
    #[serde(skip)]
    pub board: Option<Board>,
    /// Without a solution: the deepest partial board any walk reached (`best_depth` cells,
    /// in its tree's scan order), completed greedily by ALNS's repair
    /// ([`crate::search::alns::complete_greedily`]), so that a score can be read from it.
    #[serde(skip)]
    pub best_board: Option<Board>,
    /// How the search ended.
    pub ending: Ending,
    /// Pieces placed, over every thread and restart.
    pub nodes: u64,
    /// Restarts begun after the first, over every thread.
    pub restarts: u64,
    /// Most cells placed at once.
    pub best_depth: usize,
    /// With `--breaks`: the mismatched joins of the deepest partial board (of the fewest, among
    /// the deepest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_breaks: Option<usize>,
    /// Independent searches run at once.
    pub threads: usize,
    /// The candidate trees and their estimates.
    pub trees: Vec<ScanTree>,
    /// The tree every restart walks (`TreeChoice::Estimate`: the smallest by estimate).
    pub chosen_tree: Option<usize>,
    /// Which tree, thread and restart (0-based) found the solution.
    pub solved_tree: Option<usize>,
    /// The thread that found it.
    pub solved_thread: Option<usize>,
    /// That thread's restart that found it.
    pub solved_restart: Option<u64>,
    /// Seconds spent on the estimates and tables before the search began (in `wall_s`).
    pub setup_s: f64,
    /// Seconds the whole search took, wall clock, setup included.
    pub wall_s: f64,
    /// CPU seconds, user and system, of the threads the search started (its walks and its
    /// watcher), summed; the setup ran on the caller's thread and is not in it. None where
    /// the platform does not tell ([`crate::meter::thread_cpu_seconds`]).
    pub threads_cpu_s: Option<f64>,
}

impl ScanSolve {
    /// Pieces placed per second of search (the setup's seconds not counted; 0 without any).
    pub fn nodes_per_s(&self) -> f64 {
        let s = self.wall_s - self.setup_s;
        if s > 0.0 { self.nodes as f64 / s } else { 0.0 }
    }
}

/// Live counters of a running [`super::solve`], for progress displays.
#[derive(Debug, Default)]
pub struct ScanProgress {
    /// Pieces placed so far, over every thread.
    pub nodes: u64,
    /// Restarts begun after the first, over every thread.
    pub restarts: u64,
    /// Most cells placed at once so far.
    pub best_depth: usize,
    /// Seconds since the search started.
    pub elapsed_s: f64,
}

/// Searches for one solution with the row-scan walk: randomised, restarted, parallel.
///
/// The candidate trees are the eight orientations of the board ([`Orientation`]); on a
/// square board without hints, turning is the same as choosing the corner piece in the
/// top-left cell, so they are instead the two scan directions times each corner piece there
/// (each holds one turn of every solution). Knuth's estimator (1975) sizes each; every
/// restart walks the smallest (`TreeChoice::Estimate`) or one drawn at random, with the
/// entries of every table list in a fresh random order. Restart `r` of a thread may place
/// `restart_base * luby(r)` pieces (Luby, Sinclair & Zuckerman 1993). Threads run
/// independent restarts from their own random streams, `(seed, thread)`; the first verified
/// solution stops them all. With one thread, a seed gives the same board and node count
/// every run.
///
/// A restart that walks its whole tree without a solution proves that there is none
/// (`Ending::Exhausted`).
pub fn solve(puzzle: &Puzzle, cfg: &ScanSolveConfig, progress: &(dyn Fn(&ScanProgress) + Sync)) -> ScanSolve {
    let start = Instant::now();
    let until = Deadline { at: cfg.time_limit.map(|d| start + d), cancel: cfg.cancel.clone() };
    let (puzzles, tables, trees) = size_trees(puzzle, cfg, candidate_trees(puzzle), &until);
    let best = (0..trees.len())
        .min_by(|&a, &b| trees[a].estimated_nodes.total_cmp(&trees[b].estimated_nodes))
        .expect("at least one tree");
    let threads = if cfg.threads == 0 { rayon::current_num_threads() } else { cfg.threads }.max(1);
    let search = Search {
        puzzle,
        cfg,
        puzzles,
        tables,
        trees,
        best,
        per_thread: cfg.max_nodes.map(|m| m.div_ceil(threads as u64)),
        stop: AtomicBool::new(false),
        exhausted: AtomicBool::new(false),
        live: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        restarts_live: AtomicU64::new(0),
        deepest: AtomicUsize::new(0),
        deepest_partial: std::sync::Mutex::new((0, 0, Vec::new())),
        winner: std::sync::Mutex::new(None),
        done_threads: AtomicUsize::new(0),
        nodes_total: AtomicU64::new(0),
    };
    let setup_s = start.elapsed().as_secs_f64();
    // Each thread the search starts counts its own CPU time; their sum is the search's.
    let threads_cpu_s = std::thread::scope(|s| {
        let search = &search;
        let until = &until;
        let watcher = s.spawn(move || with_thread_cpu(|| search.watch(start, until, progress)).1);
        let workers: Vec<_> =
            (0..threads).map(|thread| s.spawn(move || with_thread_cpu(|| search.thread(thread)).1)).collect();
        let mut cpu = Some(0.0);
        for wk in workers {
            cpu = cpu.zip(wk.join().expect("a search thread panicked")).map(|(a, b)| a + b);
        }
        search.stop.store(true, Ordering::Relaxed);
        watcher.thread().unpark();
        cpu.zip(watcher.join().expect("the watcher panicked")).map(|(a, b)| a + b)
    });
    search.report(setup_s, start, threads_cpu_s)
}

/// The candidate trees: on a square board without hints, both scan directions times each
/// corner piece in the top-left cell; else the eight orientations.
fn candidate_trees(puzzle: &Puzzle) -> Vec<(Orientation, Option<u16>)> {
    let square = puzzle.width() == puzzle.height() && puzzle.hints().is_empty();
    let mut candidates: Vec<(Orientation, Option<u16>)> = Vec::new();
    if square && symmetry_piece(puzzle).is_some() {
        for o in [Orientation { mirror: false, turns: 0 }, Orientation { mirror: true, turns: 0 }] {
            let pz = o.puzzle(puzzle);
            let corner: std::collections::BTreeSet<u16> = pz.candidates().of(0).iter().map(|pl| pl.piece).collect();
            candidates.extend(corner.into_iter().filter(|&p| symmetry_piece_ok(&pz, p)).map(|p| (o, Some(p))));
        }
    } else {
        candidates.extend(Orientation::all().map(|o| (o, None)));
    }
    candidates
}

/// The puzzle and tables of each candidate tree, and Knuth's estimate of its nodes.
fn size_trees(
    puzzle: &Puzzle,
    cfg: &ScanSolveConfig,
    candidates: Vec<(Orientation, Option<u16>)>,
    until: &Deadline,
) -> (Vec<Puzzle>, Vec<Tables>, Vec<ScanTree>) {
    let mut puzzles: Vec<Puzzle> = Vec::new();
    let mut tables: Vec<Tables> = Vec::new();
    let mut trees: Vec<ScanTree> = Vec::new();
    for (i, &(o, p)) in candidates.iter().enumerate() {
        let pz = o.puzzle(puzzle);
        let mut t = Tables::new(&pz, p);
        t.reach = cfg.row_chain;
        let seed = crate::rng::trial_seed(cfg.seed, 1_000 + i as u64);
        let est = estimate_tree(&t, cfg.probes.max(1), seed, until);
        trees.push(ScanTree { orientation: o, corner_piece: p, estimated_nodes: est });
        puzzles.push(pz);
        tables.push(t);
    }
    (puzzles, tables, trees)
}

/// One search under way: the trees, what its threads share, and the first verified
/// solution (board, tree, thread, restart).
struct Search<'a> {
    puzzle: &'a Puzzle,
    cfg: &'a ScanSolveConfig,
    puzzles: Vec<Puzzle>,
    tables: Vec<Tables>,
    trees: Vec<ScanTree>,
    /// The smallest tree by estimate.
    best: usize,
    /// Node limit of each thread.
    per_thread: Option<u64>,
    stop: AtomicBool,
    exhausted: AtomicBool,
    /// Nodes of each thread so far.
    live: Vec<AtomicU64>,
    restarts_live: AtomicU64,
    deepest: AtomicUsize,
    /// The deepest partial placement of any thread: (cells placed, tree, candidate index of
    /// each placed cell in that tree's candidate lists).
    deepest_partial: std::sync::Mutex<(usize, usize, Vec<u32>)>,
    winner: std::sync::Mutex<Option<(Board, usize, usize, u64)>>,
    done_threads: AtomicUsize,
    nodes_total: AtomicU64,
}

impl Search<'_> {
    /// The watcher thread: raises `stop` at the time limit or on a stop request, and reports
    /// progress twice a second.
    fn watch(&self, start: Instant, until: &Deadline, progress: &(dyn Fn(&ScanProgress) + Sync)) {
        let threads = self.live.len();
        let mut shown = Instant::now();
        while !self.stop.load(Ordering::Relaxed) && self.done_threads.load(Ordering::Relaxed) < threads {
            if until.passed() {
                self.stop.store(true, Ordering::Relaxed);
            }
            if shown.elapsed() >= Duration::from_millis(500) {
                shown = Instant::now();
                progress(&ScanProgress {
                    nodes: self.live.iter().map(|l| l.load(Ordering::Relaxed)).sum(),
                    restarts: self.restarts_live.load(Ordering::Relaxed),
                    best_depth: self.deepest.load(Ordering::Relaxed),
                    elapsed_s: start.elapsed().as_secs_f64(),
                });
            }
            std::thread::park_timeout(Duration::from_millis(20));
        }
    }

    /// Search thread `thread`: restarts from its own random stream, each a walk of the
    /// chosen (or a random) tree in a fresh value order, until a solution, the whole tree
    /// walked, a limit or a stop.
    fn thread(&self, thread: usize) {
        let t = &self.tables[self.best];
        let fits = |f: fn(&Tables) -> bool| self.cfg.walker == ScanWalker::Fast && self.tables.iter().all(f);
        if fits(FastWalker::<1>::fits) {
            self.thread_with(thread, FastWalker::<1>::new(t));
        } else if fits(FastWalker::<2>::fits) {
            self.thread_with(thread, FastWalker::<2>::new(t));
        } else if fits(FastWalker::<3>::fits) {
            self.thread_with(thread, FastWalker::<3>::new(t));
        } else if fits(FastWalker::<4>::fits) {
            self.thread_with(thread, FastWalker::<4>::new(t));
        } else {
            self.thread_with(thread, Walker::new(t));
        }
    }

    /// [`Search::thread`] with walker `wk` (of the smallest tree).
    fn thread_with<'s, W: FirstWalk<'s>>(&'s self, thread: usize, mut wk: W) {
        let (cfg, stop, live) = (self.cfg, &self.stop, &self.live[thread]);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(crate::rng::trial_seed(cfg.seed, thread as u64));
        let mut current = self.best;
        wk.set_live(live);
        let budget = self.per_thread.unwrap_or(u64::MAX);
        let mut restart = 0u64;
        // This thread's deepest partial placement (depth, tree, candidate indices).
        let mut mine = (0usize, 0usize, Vec::new());
        while !stop.load(Ordering::Relaxed) && wk.nodes() < budget {
            if cfg.choice == TreeChoice::Random && self.trees.len() > 1 {
                let pick = rng.random_range(0..self.trees.len());
                if pick != current {
                    current = pick;
                    wk.retarget(&self.tables[current]);
                }
            }
            wk.shuffle(&mut rng);
            let run = if cfg.restarts {
                cfg.restart_base.max(1).saturating_mul(crate::search::backtrack::luby(restart + 1))
            } else {
                u64::MAX
            };
            wk.set_limit(wk.nodes().saturating_add(run).min(budget));
            let finished = wk.walk_first(stop);
            self.deepest.fetch_max(wk.deepest(), Ordering::Relaxed);
            if wk.deepest() > mine.0 {
                // It grew in this walk, so `deepest_at` holds entries of this walk's tree.
                mine.0 = wk.deepest();
                mine.1 = current;
                mine.2.clear();
                mine.2.extend(wk.deepest_at().iter().map(|&e| wk.cand(e)));
            }
            if wk.found() {
                self.take_found(&wk, current, thread, restart);
                break;
            }
            if finished {
                // The whole tree was walked: no solution.
                self.exhausted.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
                break;
            }
            if !cfg.restarts {
                break;
            }
            restart += 1;
            // Count a restart only when one begins (not at the time or node limit).
            if stop.load(Ordering::Relaxed) || wk.nodes() >= budget {
                break;
            }
            self.restarts_live.fetch_add(1, Ordering::Relaxed);
        }
        {
            let mut best = self.deepest_partial.lock().expect("no panics while held");
            if mine.0 > best.0 {
                *best = mine;
            }
        }
        live.store(wk.nodes(), Ordering::Relaxed);
        self.nodes_total.fetch_add(wk.nodes(), Ordering::Relaxed);
        self.done_threads.fetch_add(1, Ordering::Relaxed);
    }

    /// The full board a walk of tree `current` ended on, as a board of the puzzle; kept as
    /// the winner (if first) when it passes the exact check, which stops every thread.
    fn take_found<'s>(&self, wk: &impl FirstWalk<'s>, current: usize, thread: usize, restart: u64) {
        let pz = &self.puzzles[current];
        let cands = pz.candidates();
        let cells = wk.at().iter().enumerate().map(|(c, &e)| cands.of(c)[wk.cand(e) as usize]).collect();
        let oriented = Board { width: pz.width(), height: pz.height(), cells };
        let board = self.trees[current].orientation.unorient(&oriented, self.puzzle.width(), self.puzzle.height());
        // Never trust the search: only a board that passes the exact check is kept.
        if verify::check(self.puzzle, &board).valid {
            let mut slot = self.winner.lock().expect("no panics while held");
            if slot.is_none() {
                *slot = Some((board, current, thread, restart));
            }
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// The outcome, once every thread has stopped.
    fn report(self, setup_s: f64, start: Instant, threads_cpu_s: Option<f64>) -> ScanSolve {
        let found = self.winner.into_inner().expect("no panics while held");
        let ending = if found.is_some() {
            Ending::Stopped
        } else if self.exhausted.load(Ordering::Relaxed) {
            Ending::Exhausted
        } else {
            Ending::Limit
        };
        let (board, solved_tree, solved_thread, solved_restart) = match found {
            Some((b, t, th, r)) => (Some(b), Some(t), Some(th), Some(r)),
            None => (None, None, None, None),
        };
        let partial = self.deepest_partial.into_inner().expect("no panics while held");
        let best_board = if board.is_none() && partial.0 > 0 {
            let (pz, orientation) = (&self.puzzles[partial.1], self.trees[partial.1].orientation);
            let cands = pz.candidates();
            let cells: Vec<Option<Placement>> =
                (0..pz.cells()).map(|c| partial.2.get(c).map(|&k| cands.of(c)[k as usize])).collect();
            let full = crate::search::alns::complete_greedily(pz, &cells, self.cfg.seed);
            Some(orientation.unorient(&full, self.puzzle.width(), self.puzzle.height()))
        } else {
            None
        };
        ScanSolve {
            board,
            best_board,
            ending,
            nodes: self.nodes_total.load(Ordering::Relaxed),
            restarts: self.restarts_live.load(Ordering::Relaxed),
            best_depth: self.deepest.load(Ordering::Relaxed).min(self.puzzle.cells()),
            best_breaks: None,
            threads: self.live.len(),
            chosen_tree: (self.cfg.choice == TreeChoice::Estimate).then_some(self.best),
            trees: self.trees,
            solved_tree,
            solved_thread,
            solved_restart,
            setup_s,
            wall_s: start.elapsed().as_secs_f64(),
            threads_cpu_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};

    /// Each orientation maps the planted solution (and hints taken from it) to a solution
    /// of the oriented puzzle, and `unorient` brings it back.
    #[test]
    fn orientations_carry_solutions_and_hints_both_ways() {
        for (w, h, seed) in [(5, 5, 1), (6, 4, 2), (3, 7, 3)] {
            let (p, b) =
                generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                    .unwrap();
            let hints = [0, w + 1, w * h - 1]
                .iter()
                .map(|&c| crate::puzzle::Hint { cell: c, piece: b.cells[c].piece as usize, rot: b.cells[c].rot })
                .collect();
            let p = Puzzle::new(w, h, p.pieces().to_vec(), hints).unwrap();
            let mut seen = std::collections::HashSet::new();
            for o in Orientation::all() {
                let op = o.puzzle(&p);
                let mut cells = vec![Placement::default(); w * h];
                for (c, pl) in b.cells.iter().enumerate() {
                    let (oc, rot) = o.place(w, h, c, pl.rot);
                    cells[oc] = Placement { piece: pl.piece, rot };
                }
                let ob = Board { width: op.width(), height: op.height(), cells };
                assert!(verify::check(&op, &ob).valid, "{w}x{h} {o:?}: {:?}", verify::check(&op, &ob).problems);
                assert_eq!(o.unorient(&ob, w, h), b, "{w}x{h} {o:?}");
                seen.insert(ob.cells);
            }
            assert_eq!(seen.len(), 8, "{w}x{h}: the orientations are not all different");
        }
    }

    /// The fast walker and the table walker (the oracle) give the same search: node counts,
    /// restarts, depths and boards (found or best), over many puzzles, seeds, restart bases,
    /// tree choices (a random tree per restart retargets the walker) and node limits.
    #[test]
    fn the_fast_walker_searches_as_the_table_walker() {
        let mut compared = 0;
        for (w, h) in [(3, 3), (4, 4), (5, 4), (5, 5), (6, 6), (7, 5), (7, 7), (8, 8), (10, 9)] {
            for seed in 0..3u64 {
                let (p, _) =
                    generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                        .unwrap();
                for (choice, base, limit) in [
                    (TreeChoice::Estimate, 256, 200_000),
                    (TreeChoice::Random, 1_000, 300_000),
                    (TreeChoice::Estimate, 1 << 20, 100_000),
                ] {
                    let cfg = ScanSolveConfig {
                        seed: seed * 31 + 5,
                        max_nodes: Some(limit),
                        restart_base: base,
                        choice,
                        probes: 20,
                        ..Default::default()
                    };
                    let run = |walker| {
                        let r = solve(&p, &ScanSolveConfig { walker, ..cfg.clone() }, &|_| {});
                        let boards = (r.board.map(|b| b.cells), r.best_board.map(|b| b.cells));
                        (r.nodes, r.restarts, r.best_depth, r.ending, r.solved_tree, r.solved_restart, boards)
                    };
                    let (fast, table) = (run(ScanWalker::Fast), run(ScanWalker::Table));
                    assert_eq!(fast, table, "{w}x{h} seed {seed} {choice:?} base {base}");
                    compared += usize::from(fast.0 > 0);
                }
            }
        }
        assert!(compared > 60);
    }

    /// Joins inside the first `d` cells of a row-major scan of a board `w` wide.
    fn prefix_joins(d: usize, w: usize) -> usize {
        let (rows, rem) = (d / w, d % w);
        rows * (w - 1) + rem.saturating_sub(1) + if rows >= 1 { (rows - 1) * w + rem } else { 0 }
    }

    /// Without a solution within its nodes, the scan's best board is its deepest partial
    /// board completed greedily: a full board of the puzzle's pieces, each once, that fits
    /// the rim and keeps the hints, with at least the joins of the deepest prefix matched.
    #[test]
    fn an_unsolved_scan_gives_its_deepest_board_completed() {
        for (w, h, seed, threads) in [(8, 8, 1, 1), (10, 6, 2, 2), (9, 9, 3, 1)] {
            let (p, b) =
                generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                    .unwrap();
            let hints = [w + 1, 2 * w + 3]
                .iter()
                .map(|&c| crate::puzzle::Hint { cell: c, piece: b.cells[c].piece as usize, rot: b.cells[c].rot })
                .collect();
            let p = Puzzle::new(w, h, p.pieces().to_vec(), hints).unwrap();
            let cfg = ScanSolveConfig { threads, max_nodes: Some(3_000), seed, ..Default::default() };
            let r = solve(&p, &cfg, &|_| {});
            assert!(r.board.is_none(), "{w}x{h}: solved within 3,000 nodes; pick a harder case");
            let best = r.best_board.expect("an unsolved scan gives a best board");
            crate::search::alns::assert_completed_board(&p, &best, &format!("{w}x{h}"));
            let floor = prefix_joins(r.best_depth, w).min(prefix_joins(r.best_depth, h));
            assert!(r.best_depth > 0 && p.score(&best) >= floor, "{w}x{h}: {} < {floor}", p.score(&best));
            assert!(!verify::check(&p, &best).valid);
        }
    }
}
