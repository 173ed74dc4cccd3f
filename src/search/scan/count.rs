//! Counting every solution: the choice of tree, its cut into subtrees, the worker threads,
//! and the journal of finished subtrees (resume).

use super::tables::{Tables, symmetry_piece, symmetry_piece_ok};
use super::walk::{Leaf, Walker, estimate_tree};
use crate::cancel::{Cancel, Deadline};
use crate::puzzle::rotate_board;
use crate::puzzle::{Board, Placement, Puzzle};
use crate::verify;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Which search `concur count` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum CountEngine {
    /// The arc-consistent backtracker (`--ac`, `--order` apply).
    Ac,
    /// Row-scan lookup tables, turn symmetry and all cores ([`count`]).
    Scan,
}

/// Outcome of [`count`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScanCount {
    /// Solutions (every one verified exactly), turned copies included.
    pub solutions: u64,
    /// Solutions up to turning the whole board (square boards without hints).
    pub up_to_rotation: Option<u64>,
    /// True when the whole tree was walked (the counts are exact).
    pub complete: bool,
    /// Pieces placed (tree nodes below the root).
    pub nodes: u64,
    /// Most cells placed at once.
    pub best_depth: usize,
    /// Independent subtrees the tree was cut into, and how many were finished.
    pub tasks: u64,
    /// Of them, the finished ones (all of them when `complete`).
    pub tasks_done: u64,
    /// Of `tasks_done`, those taken from a journal rather than walked in this run (their
    /// nodes are in `nodes`, their time is not in `wall_s`).
    pub tasks_resumed: u64,
    /// Of `nodes`, those of the subtrees taken from a journal.
    pub nodes_resumed: u64,
    /// Depth of the cut.
    pub split_depth: usize,
    /// True when only one corner piece was tried in the top-left corner (turn symmetry).
    pub symmetry: bool,
    /// The corner piece fixed in the top-left corner (0-based), if any.
    pub corner_piece: Option<u16>,
    /// True when the scan ran along columns (a row scan of the mirrored puzzle).
    pub column_scan: bool,
    /// Knuth's estimate of the nodes of the tree that was walked (when it was chosen among
    /// several by estimate).
    pub estimated_nodes: Option<f64>,
    /// Worker threads.
    pub threads: usize,
    /// Seconds this run took, wall clock (not the resumed subtrees' time).
    pub wall_s: f64,
}

impl ScanCount {
    /// The one line `concur count --engine scan` prints: the solutions (up to turning the
    /// board, and marked a lower bound when the count stopped early), the nodes (those taken
    /// from a journal too), and what this run walked and how fast.
    pub fn summary(&self) -> String {
        let rot = self.up_to_rotation.map_or(String::new(), |r| format!(" ({r} up to rotation)"));
        let exact = if self.complete {
            String::new()
        } else {
            format!(" (stopped early after {} of {} subtrees: a lower bound)", self.tasks_done, self.tasks)
        };
        let resumed = if self.tasks_resumed > 0 {
            format!(" ({} nodes in {} subtrees from the journal)", self.nodes_resumed, self.tasks_resumed)
        } else {
            String::new()
        };
        let walked = self.nodes - self.nodes_resumed;
        format!(
            "{} solutions{rot}{exact}; {} nodes{resumed}; this run walked {walked} nodes in {:.3} s ({:.0} nodes/s, {} threads)",
            self.solutions,
            self.nodes,
            self.wall_s,
            walked as f64 / self.wall_s.max(1e-9),
            self.threads
        )
    }

    /// What `concur count --engine scan --json` prints: the keys of the arc-consistent
    /// count's JSON, plus this engine's own (`engine`, and `restarts` and `revisions`, 0).
    pub fn json(&self, interrupted: bool) -> serde_json::Value {
        let mut v = serde_json::to_value(self).expect("plain data");
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("engine".into(), "scan".into());
            m.insert("interrupted".into(), interrupted.into());
            m.insert("restarts".into(), 0.into());
            m.insert("revisions".into(), 0.into());
        }
        v
    }
}

/// Settings of [`count`].
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Wall-clock limit of the count (a journal keeps every subtree finished by then).
    pub time_limit: Option<Duration>,
    /// Stop after at least this many solutions.
    pub limit: Option<u64>,
    /// Worker threads (0: rayon's default, i.e. every core).
    pub threads: usize,
    /// Break the turn symmetry (square boards without hints); on by default in the CLI.
    pub symmetry: bool,
    /// Random probes per candidate tree when choosing the corner piece and scan direction.
    pub probes: u64,
    /// Cut the tree into at least this many subtrees (0: 256 per thread). Fixed, it makes
    /// the cut the same on any machine, so that one count can be split across machines and
    /// runs ([`count_journaled`]).
    pub min_tasks: usize,
    /// Walk the subtrees from the last to the first (the order of the cut otherwise).
    pub reverse: bool,
    /// The row-chain cut of the solver ([`ScanSolveConfig::row_chain`](super::ScanSolveConfig::row_chain)); off by default, so
    /// that the count's tree and its journals' cuts stay as they were.
    pub row_chain: bool,
    /// Ends the count at its next check when tripped, as at the time limit (a journal keeps
    /// every finished subtree).
    pub cancel: Cancel,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            time_limit: None,
            limit: None,
            threads: 0,
            symmetry: true,
            probes: 2_000,
            min_tasks: 0,
            reverse: false,
            row_chain: false,
            cancel: Cancel::new(),
        }
    }
}

/// The shape of one count: the tree that is walked (corner piece, scan direction) and its
/// cut into subtrees. A journal starts with it, so that a resumed count walks the same
/// subtrees and can skip the finished ones.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScanPlan {
    /// The corner piece fixed in the top-left cell (0-based), with turn symmetry.
    pub corner_piece: Option<u16>,
    /// Whether the scan runs along columns (a row scan of the mirrored puzzle).
    pub column_scan: bool,
    /// The fewest subtrees the cut was asked for ([`ScanOptions::min_tasks`], resolved).
    pub min_tasks: usize,
    /// The depth of the cut, in cells: each subtree is a prefix of this many placements.
    pub split_depth: usize,
    /// Subtrees of the cut.
    pub tasks: u64,
    /// FNV-1a of the puzzle (size, pieces, hints) and of every subtree's prefix.
    pub fingerprint: u64,
}

impl std::fmt::Display for ScanPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let corner = self.corner_piece.map_or("no corner piece fixed".into(), |p| format!("corner piece {}", p + 1));
        let dir = if self.column_scan { "columns" } else { "rows" };
        write!(
            f,
            "{corner}, scan along {dir}, {} subtrees cut at depth {} (--tasks {}), fingerprint {:016x}",
            self.tasks, self.split_depth, self.min_tasks, self.fingerprint
        )
    }
}

/// One finished subtree: its index in the plan's cut, what it held, and its solutions (as
/// found, before turning; `[piece, rotation]` per cell, 0-based pieces).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaskDone {
    /// The subtree's index in the plan's cut.
    pub task: u64,
    /// Solutions counted (turned copies included, as in [`ScanCount::solutions`]).
    pub solutions: u64,
    /// Pieces placed in walking it.
    pub nodes: u64,
    /// Its solutions as found (not turned): `[piece, rotation]` per cell of the puzzle, row-major
    /// from the top-left.
    pub boards: Vec<Vec<[u16; 2]>>,
}

/// Where a journaled count reports: the plan once, before the walk; every finished subtree
/// (from the worker threads); and progress about once a second.
pub trait Journal: Sync {
    /// The count's plan, once, before the walk (when resuming, after it was checked against the
    /// journal's).
    fn plan(&self, _plan: &ScanPlan) {}
    /// A finished subtree, from the worker thread that walked it.
    fn task(&self, _done: &TaskDone) {}
    /// Progress about once a second: subtrees finished of all, nodes and solutions so far.
    fn progress(&self, _tasks_done: u64, _tasks: u64, _nodes: u64, _solutions: u64) {}
    /// True once the journal can record nothing more (a write failed): the count stops as at
    /// its time limit, since what it walked next could not be kept.
    fn failed(&self) -> bool {
        false
    }
}

/// A journal that keeps nothing.
pub struct NoJournal;
impl Journal for NoJournal {}

/// A count that cannot resume from the journal it was given, or whose journal cannot be
/// read or written.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The journal's plan is not the one this puzzle and these settings give.
    #[error("the journal is of another count: {reason}")]
    PlanMismatch {
        /// How the plans differ.
        reason: String,
    },
    /// A finished subtree on file whose record does not hold: its solutions and boards
    /// disagree, or a board fails the exact check.
    #[error("the journal's record is wrong: task {task} {reason}")]
    BadRecord {
        /// The subtree's number in the plan.
        task: u64,
        /// What is wrong with its record.
        reason: String,
    },
    /// The journal file cannot be read, parsed or written.
    #[error("journal {path}: {}{reason}", line.map_or(String::new(), |l| format!("line {l}: ")))]
    Journal {
        /// The journal file.
        path: String,
        /// The line at fault, 1-based, where it is one line.
        line: Option<usize>,
        /// What went wrong.
        reason: String,
    },
}

fn fnv(h: &mut u64, v: u64) {
    *h = crate::hash::Fnv1a(*h).bytes(&v.to_le_bytes()).finish();
}

fn fingerprint(puzzle: &Puzzle, tasks: &[Vec<u32>]) -> u64 {
    let mut h = crate::hash::OFFSET;
    fnv(&mut h, puzzle.width() as u64);
    fnv(&mut h, puzzle.height() as u64);
    for p in puzzle.pieces() {
        p.iter().for_each(|&c| fnv(&mut h, u64::from(c)));
    }
    for hint in puzzle.hints() {
        [hint.cell as u64, hint.piece as u64, u64::from(hint.rot)].into_iter().for_each(|v| fnv(&mut h, v));
    }
    for t in tasks {
        fnv(&mut h, t.len() as u64);
        t.iter().for_each(|&e| fnv(&mut h, u64::from(e)));
    }
    h
}

/// The puzzle reflected in its main diagonal (width and height swap): a row scan of the
/// mirror is a column scan of the original, and solutions correspond one to one
/// ([`unmirror`]). Hints are not carried (only used without hints).
fn mirrored(puzzle: &Puzzle) -> Puzzle {
    let pieces = puzzle.pieces().iter().map(|&[u, r, d, l]| [l, d, r, u]).collect();
    Puzzle::new(puzzle.height(), puzzle.width(), pieces, Vec::new()).expect("the mirror of a valid puzzle is valid")
}

/// A solution of [`mirrored`] as a board of the original puzzle: the cell at (row, col)
/// goes to (col, row), and the reflection turns each rotation the other way.
fn unmirror(b: &Board) -> Board {
    let (w, h) = (b.width, b.height);
    let mut cells = vec![Placement::default(); w * h];
    for row in 0..h {
        for col in 0..w {
            let pl = b.cells[row * w + col];
            cells[col * h + row] = Placement { piece: pl.piece, rot: (4 - pl.rot) % 4 };
        }
    }
    Board { width: h, height: w, cells }
}

/// Counts every solution of `puzzle` by a complete row-scan search (see the module notes).
///
/// With turn symmetry, any corner piece may be the one fixed in the top-left corner, and the
/// scan may run along rows or along columns (a row scan of the mirrored puzzle): each of
/// these gives the same count but a different tree. The smallest by Knuth's estimate
/// (`opts.probes` random probes each) is walked.
pub fn count(puzzle: &Puzzle, opts: &ScanOptions) -> ScanCount {
    count_journaled(puzzle, opts, None, &NoJournal).expect("no journal to disagree with")
}

/// [`count`], reporting to `journal` and skipping the subtrees `resume` records as finished.
///
/// With `resume`, the count walks the recorded plan's tree (its corner piece and direction,
/// not a fresh choice) cut at the recorded size, checks that the cut is the same (puzzle and
/// every subtree prefix, by fingerprint), adds the recorded subtrees' solutions and nodes,
/// and walks only the others. Counts split across runs or machines sum exactly this way,
/// since the subtrees partition the tree.
pub fn count_journaled(
    puzzle: &Puzzle,
    opts: &ScanOptions,
    resume: Option<(&ScanPlan, &[TaskDone])>,
    journal: &dyn Journal,
) -> Result<ScanCount, ScanError> {
    let start = Instant::now();
    let deadline = Deadline { at: opts.time_limit.map(|d| start + d), cancel: opts.cancel.clone() };
    let symmetric = if opts.symmetry { symmetry_piece(puzzle) } else { None };
    let mirror_puzzle = symmetric.map(|_| mirrored(puzzle));
    let tree = match resume {
        Some((plan, _)) => recorded_tree(puzzle, mirror_puzzle.as_ref(), symmetric, plan)?,
        None => chosen_tree(puzzle, mirror_puzzle.as_ref(), symmetric, opts.probes, &deadline),
    };
    let solving = if tree.mirror { mirror_puzzle.as_ref().expect("built with the symmetry") } else { puzzle };
    let mut t = Tables::new(solving, tree.first);
    t.reach = opts.row_chain;
    let threads = if opts.threads == 0 { rayon::current_num_threads() } else { opts.threads };
    let min_tasks = match (resume, opts.min_tasks) {
        (Some((plan, _)), _) => plan.min_tasks,
        (None, 0) => 256 * threads,
        (None, m) => m,
    };
    let cut = cut(&t, min_tasks);
    let plan = ScanPlan {
        corner_piece: tree.first,
        column_scan: tree.mirror,
        min_tasks,
        split_depth: cut.split,
        tasks: cut.tasks.len() as u64,
        fingerprint: fingerprint(puzzle, &cut.tasks),
    };
    if let Some((recorded, _)) = resume
        && *recorded != plan
    {
        return Err(ScanError::PlanMismatch {
            reason: format!("it records {recorded}; this puzzle and these settings give {plan}"),
        });
    }
    journal.plan(&plan);
    let square = puzzle.width() == puzzle.height() && puzzle.hints().is_empty();
    let tally = Tally::new(cut.top_nodes, cut.split);
    let counting = Counting { puzzle, solving, t: &t, tree, split: cut.split, square, opts, deadline, journal, tally };
    let mut skip = vec![false; cut.tasks.len()];
    let resumed = match resume {
        Some((_, prior)) => counting.resume(prior, &mut skip)?,
        None => Resumed::default(),
    };
    let tasks: Vec<(usize, Vec<u32>)> = cut.tasks.into_iter().enumerate().filter(|(i, _)| !skip[*i]).collect();
    let total_tasks = skip.len() as u64;
    counting.run(&tasks, threads, total_tasks);
    Ok(counting.report(total_tasks, resumed, threads, start))
}

/// The tree a count walks: the corner piece fixed in the top-left cell (with turn symmetry)
/// and the scan direction, with Knuth's estimate of its nodes when it was chosen by one.
struct Tree {
    first: Option<u16>,
    mirror: bool,
    estimated_nodes: Option<f64>,
}

/// The tree a journal's plan records, if it fits this puzzle and symmetry setting
/// (`symmetric`: the corner piece turn symmetry would fix, `mirror_puzzle` built with it).
fn recorded_tree(
    puzzle: &Puzzle,
    mirror_puzzle: Option<&Puzzle>,
    symmetric: Option<u16>,
    plan: &ScanPlan,
) -> Result<Tree, ScanError> {
    // A column scan is a row scan of the mirror, which exists only with turn symmetry; a plan
    // that names one without it is of another count (or was edited).
    let Some(pz) = (if plan.column_scan { mirror_puzzle } else { Some(puzzle) }) else {
        return Err(ScanError::PlanMismatch {
            reason: "it scans columns, which only a count with turn symmetry does".into(),
        });
    };
    if plan.corner_piece.is_some() != symmetric.is_some()
        || plan.corner_piece.is_some_and(|p| usize::from(p) >= pz.pieces().len() || !symmetry_piece_ok(pz, p))
    {
        return Err(ScanError::PlanMismatch {
            reason: "its corner piece does not fit this puzzle and symmetry setting".into(),
        });
    }
    Ok(Tree { first: plan.corner_piece, mirror: plan.column_scan, estimated_nodes: None })
}

/// The smallest tree by Knuth's estimate (`probes` probes each) among every corner piece and
/// both scan directions, with turn symmetry; without, the plain row scan.
fn chosen_tree(
    puzzle: &Puzzle,
    mirror_puzzle: Option<&Puzzle>,
    symmetric: Option<u16>,
    probes: u64,
    deadline: &Deadline,
) -> Tree {
    let mut tree = Tree { first: symmetric, mirror: false, estimated_nodes: None };
    let (Some(_), Some(mp)) = (symmetric, mirror_puzzle) else {
        return tree;
    };
    let mut best: Option<(f64, bool, u16)> = None;
    for (m, pz) in [(false, puzzle), (true, mp)] {
        let corner: std::collections::BTreeSet<u16> = pz.candidates().of(0).iter().map(|pl| pl.piece).collect();
        for p in corner.into_iter().filter(|&p| symmetry_piece_ok(pz, p)) {
            let est = estimate_tree(&Tables::new(pz, Some(p)), probes, u64::from(p), deadline);
            if best.is_none_or(|(b, _, _)| est < b) {
                best = Some((est, m, p));
            }
        }
    }
    if let Some((est, m, p)) = best {
        tree = Tree { first: Some(p), mirror: m, estimated_nodes: Some(est) };
    }
    tree
}

/// The tree cut into independent subtrees: their prefixes, the depth of the cut and the
/// nodes walked above it.
struct Cut {
    tasks: Vec<Vec<u32>>,
    split: usize,
    top_nodes: u64,
}

/// Cuts the tree a row at a time until it has at least `min_tasks` subtrees (enough to keep
/// every thread busy) or the cut reaches the last cell.
fn cut(t: &Tables, min_tasks: usize) -> Cut {
    let never = AtomicBool::new(false);
    let mut cut = Cut { tasks: vec![Vec::new()], split: 0, top_nodes: 0 };
    while cut.split < t.cells && cut.tasks.len() < min_tasks {
        let d = (cut.split + t.width.max(1)).min(t.cells);
        let mut next = Vec::new();
        let mut wk = Walker::new(t);
        for pre in &cut.tasks {
            if wk.load(pre) {
                wk.walk(pre.len(), Leaf::Prefixes(d, &mut next), &never);
            }
        }
        cut.top_nodes += wk.nodes;
        cut.tasks = next;
        cut.split = d;
    }
    cut
}

/// What the worker threads of a count share: counters, the stop flag, and the solutions up
/// to turning (kept only without turn symmetry, on square boards).
struct Tally {
    stop: AtomicBool,
    found: AtomicU64,
    classes: AtomicU64,
    done: AtomicU64,
    nodes: AtomicU64,
    deepest: AtomicU64,
    canonical: std::sync::Mutex<std::collections::HashSet<Vec<Placement>>>,
}

impl Tally {
    fn new(top_nodes: u64, split: usize) -> Self {
        Tally {
            stop: AtomicBool::new(false),
            found: AtomicU64::new(0),
            classes: AtomicU64::new(0),
            done: AtomicU64::new(0),
            nodes: AtomicU64::new(top_nodes),
            deepest: AtomicU64::new(split as u64),
            canonical: std::sync::Mutex::new(std::collections::HashSet::new()),
        }
    }

    /// Keeps the least of `board`'s turned copies, for the count up to turning.
    fn add_canonical(&self, board: Board) {
        let mut best = board.cells.clone();
        let mut r = board;
        for _ in 0..3 {
            r = rotate_board(&r);
            best = best.min(r.cells.clone());
        }
        self.canonical.lock().expect("no panics while held").insert(best);
    }
}

/// The subtrees taken from a journal and their nodes.
#[derive(Default)]
struct Resumed {
    tasks: u64,
    nodes: u64,
}

/// One count under way: the puzzle, the tables walked (of `solving`, the mirror with a
/// column scan), its settings and its tally.
struct Counting<'a> {
    puzzle: &'a Puzzle,
    solving: &'a Puzzle,
    t: &'a Tables,
    tree: Tree,
    /// Depth of the cut into subtrees.
    split: usize,
    square: bool,
    opts: &'a ScanOptions,
    deadline: Deadline,
    journal: &'a dyn Journal,
    tally: Tally,
}

impl Counting<'_> {
    /// Takes the journal's finished subtrees `prior` into the tally and marks them in `skip`
    /// (a subtree recorded twice counts once).
    fn resume(&self, prior: &[TaskDone], skip: &mut [bool]) -> Result<Resumed, ScanError> {
        let mut resumed = Resumed::default();
        let tally = &self.tally;
        for d in prior {
            let Some(seen) = skip.get_mut(d.task as usize) else {
                return Err(ScanError::PlanMismatch {
                    reason: format!("task {} is past the plan's {}", d.task, skip.len()),
                });
            };
            if std::mem::replace(seen, true) {
                continue;
            }
            self.check_record(d)?;
            resumed.tasks += 1;
            tally.done.fetch_add(1, Ordering::Relaxed);
            tally.found.fetch_add(d.solutions, Ordering::Relaxed);
            tally.nodes.fetch_add(d.nodes, Ordering::Relaxed);
            resumed.nodes += d.nodes;
            if self.tree.first.is_some() {
                tally.classes.fetch_add(d.boards.len() as u64, Ordering::Relaxed);
            }
        }
        Ok(resumed)
    }

    /// A journal is a file: its boards pass the exact check again before they count (and
    /// go into the count up to turning where it is kept).
    fn check_record(&self, d: &TaskDone) -> Result<(), ScanError> {
        let per_board = if self.tree.first.is_some() { 4 } else { 1 };
        if d.solutions != per_board * d.boards.len() as u64 {
            return Err(ScanError::BadRecord {
                task: d.task,
                reason: format!("records {} solutions and {} boards", d.solutions, d.boards.len()),
            });
        }
        let (width, height) = (self.puzzle.width(), self.puzzle.height());
        for b in &d.boards {
            let cells =
                b.iter().map(|&[piece, rot]| Placement { piece, rot: u8::try_from(rot).unwrap_or(u8::MAX) }).collect();
            let board = Board { width, height, cells };
            let v = verify::check(self.puzzle, &board);
            if !v.valid {
                return Err(ScanError::BadRecord {
                    task: d.task,
                    reason: format!("records a board that is not a solution: {}", v.problems.join("; ")),
                });
            }
            if self.tree.first.is_none() && self.square {
                self.tally.add_canonical(board);
            }
        }
        Ok(())
    }

    /// Walks the subtrees `tasks` on `threads` workers, with a watcher for the time limit,
    /// stop requests and progress.
    fn run(&self, tasks: &[(usize, Vec<u32>)], threads: usize, total_tasks: u64) {
        // Workers take the subtrees in order (or in reverse order) from one counter, so that a
        // run stopped early has finished a prefix of them, give or take those in flight: two
        // machines walking from both ends of one plan meet in the middle.
        let next = AtomicUsize::new(0);
        let stop = &self.tally.stop;
        std::thread::scope(|s| {
            let watcher = s.spawn(|| self.watch(total_tasks));
            let workers: Vec<_> = (0..threads.max(1)).map(|_| s.spawn(|| self.worker(tasks, &next))).collect();
            for w in workers {
                w.join().expect("a counting worker panicked");
            }
            stop.store(true, Ordering::Relaxed);
            watcher.thread().unpark();
        });
    }

    /// A worker thread: takes the next subtree from `next` and walks it, until none is left.
    fn worker(&self, tasks: &[(usize, Vec<u32>)], next: &AtomicUsize) {
        let mut wk = Walker::new(self.t);
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= tasks.len() {
                break;
            }
            self.work(&mut wk, &tasks[if self.opts.reverse { tasks.len() - 1 - i } else { i }]);
        }
    }

    /// The watcher thread: raises `stop` at the time limit, on a stop request or when the
    /// journal fails, and reports progress about once a second.
    fn watch(&self, total_tasks: u64) {
        let tally = &self.tally;
        let mut shown = Instant::now();
        while !tally.stop.load(Ordering::Relaxed) && tally.done.load(Ordering::Relaxed) < total_tasks {
            if self.out_of_time() {
                tally.stop.store(true, Ordering::Relaxed);
            }
            if shown.elapsed() >= Duration::from_secs(1) {
                shown = Instant::now();
                let (d, n, f) = (
                    tally.done.load(Ordering::Relaxed),
                    tally.nodes.load(Ordering::Relaxed),
                    tally.found.load(Ordering::Relaxed),
                );
                self.journal.progress(d, total_tasks, n, f);
            }
            std::thread::park_timeout(Duration::from_millis(50));
        }
    }

    /// Past the deadline, a stop was requested, or the journal can keep nothing more.
    fn out_of_time(&self) -> bool {
        self.deadline.passed() || self.journal.failed()
    }

    /// Walks one subtree (`index` in the plan's cut, prefix `pre`) and journals it when it
    /// finished.
    fn work(&self, wk: &mut Walker, (index, pre): &(usize, Vec<u32>)) {
        let tally = &self.tally;
        if tally.stop.load(Ordering::Relaxed) || self.out_of_time() {
            tally.stop.store(true, Ordering::Relaxed);
            return;
        }
        if !wk.load(pre) {
            tally.done.fetch_add(1, Ordering::Relaxed);
            self.journal.task(&TaskDone { task: *index as u64, solutions: 0, nodes: 0, boards: Vec::new() });
            return;
        }
        let before = wk.nodes;
        let mut task_solutions = 0u64;
        let mut boards = Vec::new();
        let mut on_solution = |at: &[u32]| task_solutions += self.solution(at, &mut boards);
        // Time checks happen inside the walk through `stop`, raised by the watcher.
        let finished = wk.walk(pre.len(), Leaf::Solutions(&mut on_solution), &tally.stop);
        tally.nodes.fetch_add(wk.nodes - before, Ordering::Relaxed);
        tally.deepest.fetch_max(wk.deepest as u64, Ordering::Relaxed);
        // A subtree cut short by a solution limit is not finished either: `walk` saw `stop`.
        if finished {
            tally.done.fetch_add(1, Ordering::Relaxed);
            let nodes = wk.nodes - before;
            self.journal.task(&TaskDone { task: *index as u64, solutions: task_solutions, nodes, boards });
        }
    }

    /// One full board of the walk (entries `at`): checked, kept in `boards`, counted (with
    /// its turned copies under turn symmetry); returns the solutions it counts for.
    fn solution(&self, at: &[u32], boards: &mut Vec<Vec<[u16; 2]>>) -> u64 {
        let (puzzle, tally) = (self.puzzle, &self.tally);
        let cands = self.solving.candidates();
        let cells =
            at.iter().enumerate().map(|(c, &e)| cands.of(c)[self.t.entries[e as usize].cand as usize]).collect();
        let board = Board { width: self.solving.width(), height: self.solving.height(), cells };
        let board = if self.tree.mirror { unmirror(&board) } else { board };
        // Never trust the search: every solution passes the exact check before it counts.
        let verdict = verify::check(puzzle, &board);
        assert!(verdict.valid, "scan counter produced an invalid board: {:?}", verdict.problems);
        boards.push(board.cells.iter().map(|pl| [pl.piece, u16::from(pl.rot)]).collect());
        let mut n = 1;
        if self.tree.first.is_some() {
            let mut r = board;
            for _ in 0..3 {
                r = rotate_board(&r);
                let v = verify::check(puzzle, &r);
                assert!(v.valid, "a turned solution is not valid: {:?}", v.problems);
            }
            n = 4;
            tally.classes.fetch_add(1, Ordering::Relaxed);
        } else if self.square {
            tally.add_canonical(board);
        }
        let total = tally.found.fetch_add(n, Ordering::Relaxed) + n;
        if self.opts.limit.is_some_and(|l| total >= l) {
            tally.stop.store(true, Ordering::Relaxed);
        }
        n
    }

    /// The outcome, once the workers have stopped.
    fn report(&self, total_tasks: u64, resumed: Resumed, threads: usize, start: Instant) -> ScanCount {
        let tally = &self.tally;
        let tasks_done = tally.done.load(Ordering::Relaxed);
        let up_to_rotation = if self.tree.first.is_some() {
            Some(tally.classes.load(Ordering::Relaxed))
        } else {
            self.square.then(|| tally.canonical.lock().expect("no panics while held").len() as u64)
        };
        ScanCount {
            solutions: tally.found.load(Ordering::Relaxed),
            up_to_rotation,
            complete: tasks_done == total_tasks,
            nodes: tally.nodes.load(Ordering::Relaxed),
            best_depth: (tally.deepest.load(Ordering::Relaxed) as usize).min(self.t.cells),
            tasks: total_tasks,
            tasks_done,
            tasks_resumed: resumed.tasks,
            nodes_resumed: resumed.nodes,
            split_depth: self.split,
            symmetry: self.tree.first.is_some(),
            corner_piece: self.tree.first,
            column_scan: self.tree.mirror,
            estimated_nodes: self.tree.estimated_nodes,
            threads,
            wall_s: start.elapsed().as_secs_f64(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};

    #[test]
    fn mirrored_solutions_map_back_to_solutions() {
        let (p, b) =
            generate(&GenerateOptions { width: 5, height: 3, frame_colors: None, inner_colors: None, seed: 4 })
                .unwrap();
        let m = mirrored(&p);
        // The planted board, mirrored by hand, solves the mirror; unmirror brings it back.
        let mut cells = vec![Placement::default(); 15];
        for row in 0..3 {
            for col in 0..5 {
                let pl = b.cells[row * 5 + col];
                cells[col * 3 + row] = Placement { piece: pl.piece, rot: (4 - pl.rot) % 4 };
            }
        }
        let mb = Board { width: 3, height: 5, cells };
        assert!(verify::check(&m, &mb).valid);
        assert_eq!(unmirror(&mb), b);
    }

    /// The row-chain cut is sound: counts with and without it agree (and it walks no more).
    #[test]
    fn the_row_chain_cut_keeps_every_solution() {
        for (w, h, seed) in [(4, 4, 1), (5, 4, 2), (5, 5, 3), (6, 5, 4), (6, 6, 5)] {
            let (p, _) =
                generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                    .unwrap();
            let base = ScanOptions { symmetry: false, threads: 1, ..Default::default() };
            let plain = count(&p, &base);
            let chained = count(&p, &ScanOptions { row_chain: true, ..base });
            assert!(plain.complete && chained.complete);
            assert_eq!(plain.solutions, chained.solutions, "{w}x{h} seed {seed}");
            assert!(chained.nodes <= plain.nodes, "{w}x{h}: {} > {}", chained.nodes, plain.nodes);
            eprintln!("{w}x{h}: {} solutions, {} nodes plain, {} chained", plain.solutions, plain.nodes, chained.nodes);
        }
    }
}
