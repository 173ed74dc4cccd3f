//! The break-budget scan (`--method scan --breaks D1,D2,...`): the Blackwood-style control.
//!
//! The record engines of Eternity II do not ask for a perfect board. Joshua Blackwood's
//! backtracker (the engine of the 470-of-480 board; its schedule and its "break indexes" are
//! decoded on eternity2.dev's lab page of his solver) walks a row scan that may leave a join
//! mismatched (a break) once the scan is deep enough: break `k` unlocks at the `k`-th depth of
//! the list (Blackwood's 16x16 list is 201, 206, 211, 216, 221, 225, 229, 233, 237, 239), and
//! the budget is cumulative, so a break unlocked at 201 may be spent there or at any later
//! depth. Louis Verhaard's engine, the 467 board, scheduled its "slips" the same way.
//!
//! This walk is that mechanism on concur's row scan, in its plainest form: row-major from the
//! top-left cell, frame-legal candidates (the rim and the hints, [`crate::puzzle::Candidates`]),
//! each piece once (the piece-level all-different a permutation is), and no arc consistency,
//! which a break makes unsound (it would prune boards a permitted mismatch makes legal).
//! At a cell the candidates that match the left and the upper joins come first, then, if the
//! budget has a break left at this depth, those that match one of the two; a placement carries
//! at most one break, so no two breaks share a join. A join into a hinted cell is judged when
//! its other cell is placed. Blackwood's colour quotas and his border-late order are not built:
//! this is the break budget alone, measured as a control.
//!
//! Each thread restarts on a Luby schedule (`restart_base` placements a unit) with every
//! candidate list in a fresh random order, and keeps its deepest partial board (fewest breaks
//! among the deepest). A full board is scored as it stands (matched joins = the puzzle's joins
//! less its breaks) and the walk goes on for one with fewer breaks; one with none is a
//! solution, which passes the exact check and stops every thread. Otherwise the run's board is
//! the deepest partial board, completed greedily by ALNS's repair.

use super::solve::{ScanProgress, ScanSolve, ScanSolveConfig};
use crate::cancel::Deadline;
use crate::meter::with_thread_cpu;
use crate::puzzle::{Board, DOWN, LEFT, Placement, Puzzle, RIGHT, UP};
use crate::search::backtrack::{Ending, luby};
use crate::verify;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A candidate placement with the colours it shows.
#[derive(Clone, Copy, Debug, Default)]
struct Cand {
    piece: u16,
    rot: u8,
    up: u8,
    right: u8,
    down: u8,
    left: u8,
}

/// The candidate lists of every cell, three ways: by (left, up) colour, by left colour and by
/// up colour. Each is one flat array with offsets, its entries copies of the candidates.
#[derive(Clone)]
struct Lists {
    colours: usize,
    exact_off: Vec<u32>,
    exact: Vec<Cand>,
    left_off: Vec<u32>,
    left: Vec<Cand>,
    up_off: Vec<u32>,
    up: Vec<Cand>,
    /// The colour a hinted right (down) neighbour shows towards the cell, else 255.
    need_right: Vec<u8>,
    need_down: Vec<u8>,
    /// A hinted cell's own left and up colours (its only candidate's list key), else None.
    hint_lu: Vec<Option<(u8, u8)>>,
}

/// Groups `items` by `key` (below `keys`) into a flat array and its `keys + 1` offsets.
fn group(items: impl Iterator<Item = (usize, Cand)> + Clone, keys: usize) -> (Vec<u32>, Vec<Cand>) {
    let mut off = vec![0u32; keys + 1];
    for (k, _) in items.clone() {
        off[k + 1] += 1;
    }
    for k in 0..keys {
        off[k + 1] += off[k];
    }
    let mut at: Vec<u32> = off[..keys].to_vec();
    let mut flat = vec![Cand::default(); off[keys] as usize];
    for (k, c) in items {
        flat[at[k] as usize] = c;
        at[k] += 1;
    }
    (off, flat)
}

impl Lists {
    fn new(puzzle: &Puzzle) -> Self {
        let n = puzzle.cells();
        let colours = puzzle.num_colors().max(1);
        let cands = puzzle.candidates();
        let all = (0..n).flat_map(|c| {
            cands.of(c).iter().map(move |&pl| {
                let q = crate::puzzle::rotated(puzzle.pieces()[pl.piece as usize], pl.rot);
                (c, Cand { piece: pl.piece, rot: pl.rot, up: q[UP], right: q[RIGHT], down: q[DOWN], left: q[LEFT] })
            })
        });
        let k = colours;
        let (exact_off, exact) =
            group(all.clone().map(|(c, x)| ((c * k + x.left as usize) * k + x.up as usize, x)), n * k * k);
        let (left_off, left) = group(all.clone().map(|(c, x)| (c * k + x.left as usize, x)), n * k);
        let (up_off, up) = group(all.map(|(c, x)| (c * k + x.up as usize, x)), n * k);
        let mut need_right = vec![255u8; n];
        let mut need_down = vec![255u8; n];
        let mut hint_lu = vec![None; n];
        for h in puzzle.hints() {
            let pl = Placement { piece: h.piece as u16, rot: h.rot };
            hint_lu[h.cell] = Some((puzzle.color(pl, LEFT), puzzle.color(pl, UP)));
            if let Some(l) = puzzle.neighbour(h.cell, LEFT) {
                need_right[l] = puzzle.color(pl, LEFT);
            }
            if let Some(u) = puzzle.neighbour(h.cell, UP) {
                need_down[u] = puzzle.color(pl, UP);
            }
        }
        Lists { colours, exact_off, exact, left_off, left, up_off, up, need_right, need_down, hint_lu }
    }

    /// Every list in a fresh random order.
    fn shuffle(&mut self, rng: &mut Xoshiro256PlusPlus) {
        fn each(off: &[u32], flat: &mut [Cand], rng: &mut Xoshiro256PlusPlus) {
            for w in off.windows(2) {
                let s = &mut flat[w[0] as usize..w[1] as usize];
                for i in (1..s.len()).rev() {
                    s.swap(i, rng.random_range(0..=i));
                }
            }
        }
        each(&self.exact_off, &mut self.exact, rng);
        each(&self.left_off, &mut self.left, rng);
        each(&self.up_off, &mut self.up, rng);
    }
}

/// Where a cell's walk stands: which list (0 exact, 1 left matches, 2 up matches, 3 done), the
/// next entry, and the placement made with its breaks.
#[derive(Clone, Copy, Default)]
struct Frame {
    phase: u8,
    pos: u32,
    placed: Option<(Cand, u8)>,
}

/// What the threads share.
struct Shared<'a> {
    puzzle: &'a Puzzle,
    cfg: &'a ScanSolveConfig,
    /// Breaks allowed at each depth (how many unlock depths are at most it).
    allowed: Vec<u8>,
    lists: Lists,
    stop: AtomicBool,
    /// A walk ended with its whole tree walked: no solution (every exact board is in it).
    exhausted: AtomicBool,
    live: Vec<AtomicU64>,
    restarts: AtomicU64,
    deepest: AtomicUsize,
    /// The best partial board of any thread: (depth, breaks, its placements in scan order).
    best: Mutex<(usize, usize, Vec<Placement>)>,
    winner: Mutex<Option<(Board, usize, u64)>>,
    done: AtomicUsize,
    per_thread: u64,
}

/// The break-budget walk of one thread: its lists (shuffled at each restart) and its board.
struct Walk<'s> {
    s: &'s Shared<'s>,
    thread: usize,
    lists: Lists,
    frames: Vec<Frame>,
    used: Vec<bool>,
    right: Vec<u8>,
    down: Vec<u8>,
    depth: usize,
    breaks: usize,
    nodes: u64,
    /// This thread's best (depth, breaks) and its placements.
    best: (usize, usize, Vec<Placement>),
}

/// How one restart's walk ended.
enum Stop {
    /// A full board without a break.
    Solved,
    /// Every branch walked.
    Exhausted,
    /// Its node share, the run's limit, or a stop.
    Limit,
}

impl<'s> Walk<'s> {
    fn new(s: &'s Shared<'s>, thread: usize) -> Self {
        let n = s.puzzle.cells();
        Walk {
            s,
            thread,
            lists: s.lists.clone(),
            frames: vec![Frame::default(); n + 1],
            used: vec![false; s.puzzle.pieces().len()],
            right: vec![0; n],
            down: vec![0; n],
            depth: 0,
            breaks: 0,
            nodes: 0,
            best: (0, usize::MAX, Vec::with_capacity(n)),
        }
    }

    /// The next placement of the cell at `depth` (its own), with its breaks, or None.
    fn next(&mut self) -> Option<(Cand, u8)> {
        let (w, n) = (self.s.puzzle.width(), self.s.puzzle.cells());
        let c = self.depth;
        let k = self.lists.colours;
        // A hinted cell's joins were judged when its neighbours were placed: its list is its
        // own colours' (the hint alone), whatever its neighbours show.
        let hint = self.lists.hint_lu[c];
        let hinted = hint.is_some();
        let (l, u) = match hint {
            Some((l, u)) => (l as usize, u as usize),
            None => (
                if c.is_multiple_of(w) { 0 } else { self.right[c - 1] as usize },
                if c < w { 0 } else { self.down[c - w] as usize },
            ),
        };
        let spare = (self.s.allowed[c] as usize).saturating_sub(self.breaks);
        let (need_r, need_d) = (self.lists.need_right[c], self.lists.need_down[c]);
        debug_assert!(c < n);
        let f = &mut self.frames[c];
        loop {
            let (list, lo, hi) = match f.phase {
                0 => {
                    let key = (c * k + l) * k + u;
                    (&self.lists.exact, self.lists.exact_off[key], self.lists.exact_off[key + 1])
                }
                1 | 2 if spare == 0 || hinted => {
                    f.phase = 3;
                    continue;
                }
                1 => (&self.lists.left, self.lists.left_off[c * k + l], self.lists.left_off[c * k + l + 1]),
                2 => (&self.lists.up, self.lists.up_off[c * k + u], self.lists.up_off[c * k + u + 1]),
                _ => return None,
            };
            let mut i = lo + f.pos;
            while i < hi {
                let x = list[i as usize];
                i += 1;
                if self.used[x.piece as usize] {
                    continue;
                }
                let mut m = u8::from(x.left as usize != l) + u8::from(x.up as usize != u);
                if need_r != 255 && x.right != need_r {
                    m += 1;
                }
                if need_d != 255 && x.down != need_d {
                    m += 1;
                }
                if (f.phase == 1 && x.up as usize == u) || (f.phase == 2 && x.left as usize == l) {
                    continue; // an exact match, met in phase 0
                }
                if m > 1 || m as usize > spare {
                    continue;
                }
                f.pos = i - lo;
                return Some((x, m));
            }
            f.phase += 1;
            f.pos = 0;
        }
    }

    /// One restart's walk, until a solution, the end of its tree or `limit` nodes.
    fn walk(&mut self, limit: u64) -> Stop {
        let n = self.s.puzzle.cells();
        self.depth = 0;
        self.breaks = 0;
        self.frames[0] = Frame::default();
        self.used.iter_mut().for_each(|u| *u = false);
        loop {
            if self.depth == n {
                if self.breaks == 0 {
                    return Stop::Solved;
                }
                // A full board with breaks: kept if best, then the walk goes on.
                self.depth -= 1;
                continue;
            }
            let d = self.depth;
            if let Some((x, m)) = self.frames[d].placed.take() {
                self.used[x.piece as usize] = false;
                self.breaks -= m as usize;
            }
            match self.next() {
                Some((x, m)) => {
                    self.frames[d].placed = Some((x, m));
                    self.used[x.piece as usize] = true;
                    self.right[d] = x.right;
                    self.down[d] = x.down;
                    self.breaks += m as usize;
                    self.depth += 1;
                    self.frames[self.depth] = Frame { placed: None, ..Frame::default() };
                    self.nodes += 1;
                    if self.depth > self.best.0 || (self.depth == self.best.0 && self.breaks < self.best.1) {
                        self.best.0 = self.depth;
                        self.best.1 = self.breaks;
                        self.best.2.clear();
                        let placed = self.frames[..self.depth].iter().map(|f| f.placed.expect("placed").0);
                        self.best.2.extend(placed.map(|x| Placement { piece: x.piece, rot: x.rot }));
                    }
                    if self.nodes & 0x3fff == 0 {
                        self.s.live[self.thread].store(self.nodes, Ordering::Relaxed);
                        self.s.deepest.fetch_max(self.best.0, Ordering::Relaxed);
                        if self.s.stop.load(Ordering::Relaxed) {
                            return Stop::Limit;
                        }
                    }
                    if self.nodes >= limit {
                        return Stop::Limit;
                    }
                }
                None => {
                    if d == 0 {
                        return Stop::Exhausted;
                    }
                    self.depth -= 1;
                }
            }
        }
    }

    fn board(&self) -> Board {
        let p = self.s.puzzle;
        let cells = self.frames[..p.cells()]
            .iter()
            .map(|f| f.placed.map(|(x, _)| Placement { piece: x.piece, rot: x.rot }).expect("a full board"))
            .collect();
        Board { width: p.width(), height: p.height(), cells }
    }
}

impl Shared<'_> {
    /// One thread: restarts until a solution, the tree walked, its node share or a stop.
    fn thread(&self, thread: usize) -> u64 {
        let mut w = Walk::new(self, thread);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(crate::rng::trial_seed(self.cfg.seed, thread as u64));
        let mut restart = 0u64;
        while !self.stop.load(Ordering::Relaxed) && w.nodes < self.per_thread {
            w.lists.shuffle(&mut rng);
            let run = if self.cfg.restarts {
                self.cfg.restart_base.max(1).saturating_mul(luby(restart + 1))
            } else {
                u64::MAX
            };
            let limit = w.nodes.saturating_add(run).min(self.per_thread);
            let stop = w.walk(limit);
            self.live[thread].store(w.nodes, Ordering::Relaxed);
            match stop {
                Stop::Solved => {
                    let board = w.board();
                    if verify::check(self.puzzle, &board).valid {
                        self.winner.lock().expect("no panics while held").get_or_insert((board, thread, restart));
                        self.stop.store(true, Ordering::Relaxed);
                    }
                    break;
                }
                Stop::Exhausted => {
                    self.exhausted.store(true, Ordering::Relaxed);
                    self.stop.store(true, Ordering::Relaxed);
                    break;
                }
                Stop::Limit => {}
            }
            if !self.cfg.restarts || self.stop.load(Ordering::Relaxed) || w.nodes >= self.per_thread {
                break;
            }
            restart += 1;
            self.restarts.fetch_add(1, Ordering::Relaxed);
        }
        self.deepest.fetch_max(w.best.0, Ordering::Relaxed);
        let mut best = self.best.lock().expect("no panics while held");
        if (w.best.0, std::cmp::Reverse(w.best.1)) > (best.0, std::cmp::Reverse(best.1)) {
            *best = std::mem::take(&mut w.best);
        }
        self.done.fetch_add(1, Ordering::Relaxed);
        w.nodes
    }
}

/// The break-budget scan of `puzzle` with `cfg.breaks` as the unlock depths; the outcome in
/// the scan's terms (no candidate trees: the walk is the puzzle's own row scan).
pub fn solve(puzzle: &Puzzle, cfg: &ScanSolveConfig, progress: &(dyn Fn(&ScanProgress) + Sync)) -> ScanSolve {
    let start = Instant::now();
    let until = Deadline { at: cfg.time_limit.map(|d| start + d), cancel: cfg.cancel.clone() };
    let n = puzzle.cells();
    let allowed = (0..n).map(|d| cfg.breaks.iter().filter(|&&b| b <= d).count().min(255) as u8).collect();
    let threads = if cfg.threads == 0 { rayon::current_num_threads() } else { cfg.threads }.max(1);
    let s = Shared {
        puzzle,
        cfg,
        allowed,
        lists: Lists::new(puzzle),
        stop: AtomicBool::new(false),
        exhausted: AtomicBool::new(false),
        live: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        restarts: AtomicU64::new(0),
        deepest: AtomicUsize::new(0),
        best: Mutex::new((0, usize::MAX, Vec::new())),
        winner: Mutex::new(None),
        done: AtomicUsize::new(0),
        per_thread: cfg.max_nodes.map_or(u64::MAX, |m| m.div_ceil(threads as u64)),
    };
    let setup_s = start.elapsed().as_secs_f64();
    let (nodes, cpu) = std::thread::scope(|sc| {
        let s = &s;
        let workers: Vec<_> = (0..threads).map(|t| sc.spawn(move || with_thread_cpu(|| s.thread(t)))).collect();
        let mut shown = Instant::now();
        while s.done.load(Ordering::Relaxed) < threads {
            if until.passed() {
                s.stop.store(true, Ordering::Relaxed);
            }
            if shown.elapsed() >= Duration::from_millis(500) {
                shown = Instant::now();
                progress(&ScanProgress {
                    nodes: s.live.iter().map(|l| l.load(Ordering::Relaxed)).sum(),
                    restarts: s.restarts.load(Ordering::Relaxed),
                    best_depth: s.deepest.load(Ordering::Relaxed),
                    elapsed_s: start.elapsed().as_secs_f64(),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut nodes = 0;
        let mut cpu = Some(0.0);
        for wk in workers {
            let (n, c) = wk.join().expect("a search thread panicked");
            nodes += n;
            cpu = cpu.zip(c).map(|(a, b)| a + b);
        }
        (nodes, cpu)
    });
    let winner = s.winner.into_inner().expect("no panics while held");
    let (depth, breaks, partial) = s.best.into_inner().expect("no panics while held");
    let ending = match &winner {
        Some(_) => Ending::Stopped,
        None if s.exhausted.load(Ordering::Relaxed) => Ending::Exhausted,
        None => Ending::Limit,
    };
    let best_board = winner.is_none().then(|| {
        let mut cells: Vec<Option<Placement>> = partial.iter().copied().map(Some).collect();
        cells.resize(n, None);
        crate::search::alns::complete_greedily(puzzle, &cells, cfg.seed)
    });
    let (board, solved_thread, solved_restart) = match winner {
        Some((b, t, r)) => (Some(b), Some(t), Some(r)),
        None => (None, None, None),
    };
    ScanSolve {
        board,
        best_board,
        ending,
        nodes,
        restarts: s.restarts.load(Ordering::Relaxed),
        best_depth: depth,
        best_breaks: Some(if breaks == usize::MAX { 0 } else { breaks }),
        threads,
        trees: Vec::new(),
        chosen_tree: None,
        solved_tree: None,
        solved_thread,
        solved_restart,
        setup_s,
        wall_s: start.elapsed().as_secs_f64(),
        threads_cpu_s: cpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::Cancel;
    use crate::puzzle::generate::puzzle;
    use crate::search::scan::ScanSolveOptions;

    /// The fewest breaks of a full board the walk may reach, by brute force: every
    /// frame-legal board, each cell in scan order carrying at most one mismatch on its left
    /// and upper joins, the running total within the budget at every depth; None if none.
    fn fewest_breaks(p: &Puzzle, unlock: &[usize]) -> Option<usize> {
        fn go(
            p: &Puzzle,
            unlock: &[usize],
            c: usize,
            used: &mut [bool],
            b: &mut Vec<Placement>,
            breaks: usize,
        ) -> Option<usize> {
            let (w, n) = (p.width(), p.cells());
            if c == n {
                return Some(breaks);
            }
            let allowed = unlock.iter().filter(|&&d| d <= c).count();
            let mut best = None;
            for &pl in p.candidates().of(c) {
                if used[pl.piece as usize] {
                    continue;
                }
                let mut m = 0;
                if !c.is_multiple_of(w) && p.color(b[c - 1], RIGHT) != p.color(pl, LEFT) {
                    m += 1;
                }
                if c >= w && p.color(b[c - w], DOWN) != p.color(pl, UP) {
                    m += 1;
                }
                if m > 1 || breaks + m > allowed {
                    continue;
                }
                used[pl.piece as usize] = true;
                b.push(pl);
                let r = go(p, unlock, c + 1, used, b, breaks + m);
                b.pop();
                used[pl.piece as usize] = false;
                best = match (best, r) {
                    (Some(x), Some(y)) => Some(std::cmp::min(x, y)),
                    (x, y) => x.or(y),
                };
            }
            best
        }
        go(p, unlock, 0, &mut vec![false; p.pieces().len()], &mut Vec::new(), 0)
    }

    /// A puzzle with one inner colour of one piece changed: most have no perfect board.
    fn spoiled(w: usize, h: usize, seed: u64) -> Puzzle {
        let p = puzzle(w, h, seed);
        let mut pieces = p.pieces().to_vec();
        let colours = p.num_colors() as u8;
        let i = pieces.iter().position(|q| q.iter().all(|&x| x != 0)).unwrap_or(0);
        let s = pieces[i].iter().position(|&x| x != 0).expect("a coloured side");
        pieces[i][s] = 1 + pieces[i][s] % (colours - 1).max(1);
        Puzzle::new(w, h, pieces, Vec::new()).unwrap_or(p)
    }

    fn walk(p: &Puzzle, unlock: &[usize], seed: u64, restarts: bool) -> ScanSolve {
        let o = ScanSolveOptions {
            breaks: unlock.to_vec(),
            no_restarts: !restarts,
            restart_base: 64,
            ..Default::default()
        };
        solve(p, &o.config(seed, None, (!restarts).then_some(u64::MAX).or(Some(200_000)), 1, Cancel::new()), &|_| {})
    }

    #[test]
    fn a_walk_to_the_end_finds_the_fewest_breaks_brute_force_finds() {
        let mut with_breaks = 0;
        for (w, h) in [(3, 3), (4, 3)] {
            for seed in 0..12 {
                let p = if seed % 3 == 0 { puzzle(w, h, seed) } else { spoiled(w, h, seed) };
                for unlock in [vec![0], vec![0, 0], vec![4, 6], vec![w * h - 1]] {
                    let want = fewest_breaks(&p, &unlock);
                    let r = walk(&p, &unlock, seed, false);
                    match want {
                        Some(0) => {
                            let b = r.board.as_ref().expect("a solution");
                            assert!(verify::check(&p, b).valid);
                            assert_eq!(r.best_breaks, Some(0));
                        }
                        Some(k) => {
                            with_breaks += 1;
                            assert!(r.board.is_none());
                            assert_eq!(
                                (r.best_depth, r.best_breaks),
                                (p.cells(), Some(k)),
                                "{w}x{h} seed {seed} {unlock:?}"
                            );
                            let b = r.best_board.as_ref().expect("the full board");
                            assert_eq!(p.score(b), p.max_score() - k);
                            assert_eq!(r.ending, Ending::Exhausted);
                        }
                        None => {
                            assert!(r.board.is_none());
                            assert!(r.best_depth < p.cells());
                            assert_eq!(r.ending, Ending::Exhausted);
                        }
                    }
                }
            }
        }
        assert!(with_breaks >= 10, "the spoiled puzzles need breaks: {with_breaks}");
    }

    #[test]
    fn restarted_walks_keep_the_hints_and_every_board_is_a_permutation() {
        use crate::puzzle::generate::{GenerateOptions, generate};
        for seed in 0..4 {
            let o = GenerateOptions { width: 6, height: 6, frame_colors: None, inner_colors: None, seed };
            let (p, solution) = generate(&o).expect("a puzzle");
            let hints = [8, 21, 27].map(|c| crate::puzzle::Hint {
                cell: c,
                piece: solution.cells[c].piece as usize,
                rot: solution.cells[c].rot,
            });
            let p = Puzzle::new(6, 6, p.pieces().to_vec(), hints.to_vec()).expect("hints of its solution");
            for unlock in [vec![], vec![10, 20], vec![0, 0, 0]] {
                let r = walk(&p, &unlock, seed, true);
                let board = r.board.clone().or(r.best_board.clone()).expect("a board");
                assert!(crate::search::alns::check_start(&p, &board).is_ok(), "a permutation with the hints");
                for h in &hints {
                    assert_eq!((board.cells[h.cell].piece as usize, board.cells[h.cell].rot), (h.piece, h.rot));
                }
                if let Some(b) = &r.board {
                    assert!(verify::check(&p, b).valid);
                }
            }
        }
    }
}
