//! The first-solution search: the candidate trees (orientations, corner pieces), Knuth's
//! estimate of each, and randomised restarted walks on several threads.

use super::tables::{Tables, symmetry_piece, symmetry_piece_ok};
use super::walk::{Leaf, Walker, estimate_tree};
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
    pub mirror: bool,
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeChoice {
    /// The smallest tree by Knuth's estimate, for every restart.
    #[default]
    Estimate,
    /// A tree drawn at random for each restart.
    Random,
}

/// Settings of [`solve`].
#[derive(Clone, Debug)]
pub struct ScanSolveConfig {
    pub seed: u64,
    pub time_limit: Option<Duration>,
    /// Node limit of the whole search (split evenly across the threads).
    pub max_nodes: Option<u64>,
    /// Independent searches run at once (0: every core).
    pub threads: usize,
    /// Restart on a Luby schedule; without, each thread walks its tree to the end.
    pub restarts: bool,
    /// Nodes per Luby unit.
    pub restart_base: u64,
    pub choice: TreeChoice,
    /// Random probes of Knuth's estimator per candidate tree.
    pub probes: u64,
    /// Cut placements whose row below cannot be chained ([`Walker::reach_mask`]). Off by
    /// default: it shrinks the tree by about a third on small boards but makes a node about
    /// 2.5 times dearer (BENCHMARKS.md).
    pub row_chain: bool,
}

impl Default for ScanSolveConfig {
    fn default() -> Self {
        ScanSolveConfig {
            seed: 0,
            time_limit: None,
            max_nodes: None,
            threads: 1,
            restarts: true,
            restart_base: 1 << 20,
            choice: TreeChoice::Estimate,
            probes: 1_000,
            row_chain: false,
        }
    }
}

/// A tree the scan can walk: an orientation of the board and, with turn symmetry (square,
/// no hints), the corner piece fixed in the top-left cell.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct ScanTree {
    pub orientation: Orientation,
    /// 0-based.
    pub corner_piece: Option<u16>,
    /// Knuth's estimate of its nodes.
    pub estimated_nodes: f64,
}

/// Outcome of [`solve`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScanSolve {
    /// The first solution found; it passed the exact check.
    #[serde(skip)]
    pub board: Option<Board>,
    pub ending: Ending,
    /// Pieces placed, over every thread and restart.
    pub nodes: u64,
    /// Restarts begun after the first, over every thread.
    pub restarts: u64,
    /// Most cells placed at once.
    pub best_depth: usize,
    pub threads: usize,
    /// The candidate trees and their estimates.
    pub trees: Vec<ScanTree>,
    /// The tree every restart walks (`TreeChoice::Estimate`: the smallest by estimate).
    pub chosen_tree: Option<usize>,
    /// Which tree, thread and restart (0-based) found the solution.
    pub solved_tree: Option<usize>,
    pub solved_thread: Option<usize>,
    pub solved_restart: Option<u64>,
    /// Seconds spent on the estimates and tables before the search began (in `wall_s`).
    pub setup_s: f64,
    pub wall_s: f64,
}

impl ScanSolve {
    pub fn nodes_per_s(&self) -> f64 {
        let s = self.wall_s - self.setup_s;
        if s > 0.0 { self.nodes as f64 / s } else { 0.0 }
    }
}

/// Live counters of a running [`solve`], for progress displays.
#[derive(Debug, Default)]
pub struct ScanProgress {
    pub nodes: u64,
    pub restarts: u64,
    pub best_depth: usize,
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
    let (w, h) = (puzzle.width(), puzzle.height());
    let square = w == h && puzzle.hints().is_empty();
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
    let mut puzzles: Vec<Puzzle> = Vec::new();
    let mut tables: Vec<Tables> = Vec::new();
    let mut trees: Vec<ScanTree> = Vec::new();
    let deadline = cfg.time_limit.map(|d| start + d);
    for (i, &(o, p)) in candidates.iter().enumerate() {
        let pz = o.puzzle(puzzle);
        let mut t = Tables::new(&pz, p);
        t.reach = cfg.row_chain;
        let seed = crate::rng::trial_seed(cfg.seed, 1_000 + i as u64);
        let est = estimate_tree(&t, cfg.probes.max(1), seed, deadline);
        trees.push(ScanTree { orientation: o, corner_piece: p, estimated_nodes: est });
        puzzles.push(pz);
        tables.push(t);
    }
    let best = (0..trees.len())
        .min_by(|&a, &b| trees[a].estimated_nodes.total_cmp(&trees[b].estimated_nodes))
        .expect("at least one tree");
    let threads = if cfg.threads == 0 { rayon::current_num_threads() } else { cfg.threads }.max(1);
    let per_thread = cfg.max_nodes.map(|m| m.div_ceil(threads as u64));
    let setup_s = start.elapsed().as_secs_f64();
    let stop = AtomicBool::new(false);
    let exhausted = AtomicBool::new(false);
    let live: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let restarts_live = AtomicU64::new(0);
    let deepest = AtomicUsize::new(0);
    let winner: std::sync::Mutex<Option<(Board, usize, usize, u64)>> = std::sync::Mutex::new(None);
    let done_threads = AtomicUsize::new(0);
    let nodes_total = AtomicU64::new(0);
    std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut shown = Instant::now();
            while !stop.load(Ordering::Relaxed) && done_threads.load(Ordering::Relaxed) < threads {
                if deadline.is_some_and(|d| Instant::now() >= d) || crate::interrupt::requested() {
                    stop.store(true, Ordering::Relaxed);
                }
                if shown.elapsed() >= Duration::from_millis(500) {
                    shown = Instant::now();
                    progress(&ScanProgress {
                        nodes: live.iter().map(|l| l.load(Ordering::Relaxed)).sum(),
                        restarts: restarts_live.load(Ordering::Relaxed),
                        best_depth: deepest.load(Ordering::Relaxed),
                        elapsed_s: start.elapsed().as_secs_f64(),
                    });
                }
                std::thread::park_timeout(Duration::from_millis(20));
            }
        });
        let mut workers = Vec::with_capacity(threads);
        for (thread, live) in live.iter().enumerate() {
            let (tables, puzzles, stop, exhausted, winner) = (&tables, &puzzles, &stop, &exhausted, &winner);
            let (restarts_live, deepest, done_threads, nodes_total) =
                (&restarts_live, &deepest, &done_threads, &nodes_total);
            let trees = &trees;
            workers.push(s.spawn(move || {
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(crate::rng::trial_seed(cfg.seed, thread as u64));
                let mut current = best;
                let mut wk = Walker::new(&tables[current]);
                wk.live = Some(live);
                let budget = per_thread.unwrap_or(u64::MAX);
                let mut restart = 0u64;
                while !stop.load(Ordering::Relaxed) && wk.nodes < budget {
                    if cfg.choice == TreeChoice::Random && trees.len() > 1 {
                        let pick = rng.random_range(0..trees.len());
                        if pick != current {
                            current = pick;
                            wk.retarget(&tables[current]);
                        }
                    }
                    wk.shuffle(&mut rng);
                    wk.load(&[]);
                    let run = if cfg.restarts {
                        cfg.restart_base.max(1).saturating_mul(crate::search::backtrack::luby(restart + 1))
                    } else {
                        u64::MAX
                    };
                    wk.limit = wk.nodes.saturating_add(run).min(budget);
                    let finished = wk.walk(0, Leaf::First, stop);
                    deepest.fetch_max(wk.deepest, Ordering::Relaxed);
                    if wk.found {
                        let pz = &puzzles[current];
                        let cands = pz.candidates();
                        let cells = wk
                            .at
                            .iter()
                            .enumerate()
                            .map(|(c, &e)| cands.of(c)[wk.entries[e as usize].cand as usize])
                            .collect();
                        let oriented = Board { width: pz.width(), height: pz.height(), cells };
                        let board = trees[current].orientation.unorient(&oriented, w, h);
                        // Never trust the search: only a board that passes the exact check is kept.
                        if verify::check(puzzle, &board).valid {
                            let mut slot = winner.lock().expect("no panics while held");
                            if slot.is_none() {
                                *slot = Some((board, current, thread, restart));
                            }
                            stop.store(true, Ordering::Relaxed);
                        }
                        break;
                    }
                    if finished {
                        // The whole tree was walked: no solution.
                        exhausted.store(true, Ordering::Relaxed);
                        stop.store(true, Ordering::Relaxed);
                        break;
                    }
                    if !cfg.restarts {
                        break;
                    }
                    restart += 1;
                    // Count a restart only when one begins (not at the time or node limit).
                    if stop.load(Ordering::Relaxed) || wk.nodes >= budget {
                        break;
                    }
                    restarts_live.fetch_add(1, Ordering::Relaxed);
                }
                live.store(wk.nodes, Ordering::Relaxed);
                nodes_total.fetch_add(wk.nodes, Ordering::Relaxed);
                done_threads.fetch_add(1, Ordering::Relaxed);
            }));
        }
        for wk in workers {
            wk.join().expect("a search thread panicked");
        }
        stop.store(true, Ordering::Relaxed);
        watcher.thread().unpark();
    });
    let found = winner.into_inner().expect("no panics while held");
    let ending = if found.is_some() {
        Ending::Stopped
    } else if exhausted.load(Ordering::Relaxed) {
        Ending::Exhausted
    } else {
        Ending::Limit
    };
    let restarts = restarts_live.load(Ordering::Relaxed);
    let (board, solved_tree, solved_thread, solved_restart) = match found {
        Some((b, t, th, r)) => (Some(b), Some(t), Some(th), Some(r)),
        None => (None, None, None, None),
    };
    ScanSolve {
        board,
        ending,
        nodes: nodes_total.load(Ordering::Relaxed),
        restarts,
        best_depth: deepest.load(Ordering::Relaxed).min(puzzle.cells()),
        threads,
        chosen_tree: (cfg.choice == TreeChoice::Estimate).then_some(best),
        trees,
        solved_tree,
        solved_thread,
        solved_restart,
        setup_s,
        wall_s: start.elapsed().as_secs_f64(),
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
}
