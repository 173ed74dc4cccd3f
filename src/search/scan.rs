//! Exact solution counting by a row-scan tree search with lookup tables: the counting engine
//! for boards whose complete tree is far beyond what maintained arc consistency can walk.
//!
//! Cells are filled in row-major order. When cell `c` is reached, the colours its left and
//! upper neighbours show towards it are known, so its possible placements are exactly the
//! candidates of `c` (ARCHITECTURE.md §2, hints included) with that left and that upper colour:
//! one precomputed list per (cell, left, up). A node costs a table read and a used-piece bit
//! test; there is no propagation, so the tree is close to the plain scan tree, which arc
//! consistency shrinks only about tenfold on Brendan Owen's set 1 while costing a hundred
//! times more per node (BENCHMARKS.md).
//!
//! Two cheap, sound checks trim the tree: join budgets ([`join_budgets`]: the pieces fix how
//! many joins of each kind and colour a solution has, and the walk never opens more), and a
//! one-cell look-ahead (the cell under a placement must keep an unused piece that shows the
//! right colour upwards).
//!
//! Two things make the count cheaper without changing it:
//! - symmetry: on a square board without hints, every solution turned by a quarter turn is
//!   again a solution, and the four turns put four different corner pieces in the top-left
//!   corner. So it is enough to enumerate the solutions with one chosen corner piece there;
//!   each is verified together with its three turned copies, which are counted too;
//! - parallelism: the tree is cut at a fixed depth into independent subtrees (tasks), which
//!   the worker threads take in order. With a journal ([`count_journaled`],
//!   [`crate::search::journal`]) every finished subtree is recorded as it ends, so a long
//!   count can stop and resume, and can be split across machines.
//!
//! Every solution passes the exact board check before it is counted.

use crate::puzzle::{Board, Placement, Puzzle};
use crate::search::backtrack::{Ending, rotate_board};
use crate::verify;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One placement in a table: piece, the colours it shows right and down, and its index in
/// the cell's candidate list.
#[derive(Clone, Copy, Debug)]
struct Entry {
    piece: u16,
    right: u8,
    down: u8,
    cand: u32,
    /// The joins this placement opens (towards the right and downwards), as indices into
    /// the join budgets; the spare last budget (never exhausted) for a rim side or when
    /// budgets are off, so that the walk needs no branch for those.
    opens: [u16; 2],
}

/// The spare budget's value: more joins than any board has.
const UNLIMITED: i32 = i32::MAX / 4;

/// The lookup tables of one puzzle.
#[derive(Clone)]
struct Tables {
    width: usize,
    cells: usize,
    colors: usize,
    /// `offsets[(c * K + left) * K + up]..offsets[.. + 1]` indexes `entries`.
    offsets: Vec<u32>,
    entries: Vec<Entry>,
    /// Words of a piece bitset.
    words: usize,
    /// `below[(c * K + k) * words..]`: the pieces with a candidate at the cell under `c`
    /// that shows colour `k` upwards (empty rows for the bottom row).
    below: Vec<u64>,
    /// Join budgets ([`join_budgets`], empty when not used), then one spare, [`UNLIMITED`].
    budget: Vec<i32>,
    /// Check the row under each placement as a chain ([`Walker::reach_mask`]).
    reach: bool,
}

/// How many joins of each kind and colour every solution has, indexed `kind * K + colour`
/// with kind 0 = between two frame cells, 1 = frame to inner, 2 = between two inner cells.
/// Empty for boards narrower than 3 (where the kinds below do not hold).
///
/// On a board at least 3 x 3, pieces go to cells of their own class, and in any solution:
/// - each edge piece's side opposite its grey side faces an inner cell, and every
///   frame-to-inner join has exactly one such side: J1(k) = E(k), the number of edge pieces
///   whose inward side has colour k;
/// - inner pieces' sides of colour k are those E(k) joins plus two per inner join:
///   J2(k) = (I(k) - E(k)) / 2;
/// - the other non-grey sides of frame pieces pair up across frame joins: J0(k) = L(k) / 2.
///
/// So the number of joins of each kind and colour is fixed by the pieces alone. A search
/// that opens more joins of some kind and colour than that has no completion: the count
/// check in [`Walker::walk`]. (Colour-count parity alone is implied by matched joins and
/// prunes nothing; these per-kind budgets are what bites.) Odd or negative totals mean no
/// solution; flooring keeps every check sound.
fn join_budgets(puzzle: &Puzzle) -> Vec<i32> {
    let (w, h, k) = (puzzle.width(), puzzle.height(), puzzle.num_colors());
    if w < 3 || h < 3 {
        return Vec::new();
    }
    let (mut inner, mut inward, mut lateral) = (vec![0i32; k], vec![0i32; k], vec![0i32; k]);
    for p in puzzle.pieces() {
        let grey: Vec<usize> = (0..4).filter(|&s| p[s] == 0).collect();
        match grey.len() {
            0 => (0..4).for_each(|s| inner[p[s] as usize] += 1),
            1 => {
                let g = grey[0];
                inward[p[(g + 2) % 4] as usize] += 1;
                lateral[p[(g + 1) % 4] as usize] += 1;
                lateral[p[(g + 3) % 4] as usize] += 1;
            }
            _ => (0..4).filter(|&s| p[s] != 0).for_each(|s| lateral[p[s] as usize] += 1),
        }
    }
    let mut b = vec![0i32; 3 * k];
    for c in 1..k {
        b[c] = lateral[c].div_euclid(2);
        b[k + c] = inward[c];
        b[2 * k + c] = (inner[c] - inward[c]).div_euclid(2);
    }
    b
}

impl Tables {
    /// Tables for `puzzle`; with `first_piece`, cell 0 keeps only that piece.
    fn new(puzzle: &Puzzle, first_piece: Option<u16>) -> Self {
        let cands = puzzle.candidates();
        let (n, k) = (puzzle.cells(), puzzle.num_colors());
        let (w, h) = (puzzle.width(), puzzle.height());
        let mut budget = join_budgets(puzzle);
        let spare = budget.len() as u16;
        // Kind of the join between cell c and its neighbour across side s.
        let join = |c: usize, s: usize, colour: u8| -> u16 {
            if budget.is_empty() {
                return spare;
            }
            match crate::puzzle::neighbour(w, h, c, s) {
                None => spare,
                Some(m) => {
                    let inner = |x| crate::puzzle::cell_class(w, h, x) == crate::puzzle::Class::Inner;
                    let kind = usize::from(inner(c)) + usize::from(inner(m));
                    (kind * k + colour as usize) as u16
                }
            }
        };
        let mut offsets = Vec::with_capacity(n * k * k + 1);
        let mut entries = Vec::new();
        offsets.push(0);
        for c in 0..n {
            for left in 0..k {
                for up in 0..k {
                    for (j, (pl, q)) in cands.of(c).iter().zip(cands.colors_of(c)).enumerate() {
                        if c == 0 && first_piece.is_some_and(|p| p != pl.piece) {
                            continue;
                        }
                        if q[crate::puzzle::LEFT] as usize == left && q[crate::puzzle::UP] as usize == up {
                            entries.push(Entry {
                                piece: pl.piece,
                                right: q[crate::puzzle::RIGHT],
                                down: q[crate::puzzle::DOWN],
                                cand: j as u32,
                                opens: [
                                    join(c, crate::puzzle::RIGHT, q[crate::puzzle::RIGHT]),
                                    join(c, crate::puzzle::DOWN, q[crate::puzzle::DOWN]),
                                ],
                            });
                        }
                    }
                    offsets.push(entries.len() as u32);
                }
            }
        }
        // `Walker::open` relies on the rim: a last-column placement shows grey to the right.
        debug_assert!(
            (0..n).filter(|c| c % w == w - 1).all(|c| cands.colors_of(c).iter().all(|q| q[crate::puzzle::RIGHT] == 0))
        );
        let words = n.div_ceil(64);
        let mut below = vec![0u64; n * k * words];
        for c in 0..n.saturating_sub(w) {
            for (pl, q) in cands.of(c + w).iter().zip(cands.colors_of(c + w)) {
                let i = (c * k + q[crate::puzzle::UP] as usize) * words + pl.piece as usize / 64;
                below[i] |= 1 << (pl.piece % 64);
            }
        }
        budget.push(UNLIMITED);
        Tables { width: w, cells: n, colors: k, offsets, entries, words, below, budget, reach: false }
    }

    /// True when some piece outside `used` (and other than `piece`) can go under cell `c`
    /// showing colour `k` upwards.
    #[inline]
    fn below_ok(&self, c: usize, k: u8, used: &[u64], piece: u16) -> bool {
        let base = (c * self.colors + k as usize) * self.words;
        let m = &self.below[base..base + self.words];
        m.iter().zip(used).enumerate().any(|(i, (&m, &u))| {
            let own = if i == piece as usize / 64 { 1u64 << (piece % 64) } else { 0 };
            m & !u & !own != 0
        })
    }

    #[inline]
    fn range(&self, c: usize, left: u8, up: u8) -> (u32, u32) {
        let i = (c * self.colors + left as usize) * self.colors + up as usize;
        (self.offsets[i], self.offsets[i + 1])
    }
}

/// The state of one depth-first walk: the placements of cells `0..pos` and the used pieces.
struct Walker<'t> {
    t: &'t Tables,
    used: Vec<u64>,
    /// Next entry to try at each cell, and the end of its list.
    next: Vec<u32>,
    end: Vec<u32>,
    /// Entry placed at each cell.
    at: Vec<u32>,
    nodes: u64,
    /// Most cells placed at once.
    deepest: usize,
    /// Joins of each kind and colour not opened yet.
    budget: Vec<i32>,
    /// Colours facing each cell from the left (`0..n`) and from above (`n..2n`), as the
    /// placements so far show them ([`Walker::open`]).
    shown: Vec<u8>,
    /// The walker's own copy of the table entries, in the order [`Walker::walk`] tries them
    /// (the tables' order unless [`Walker::shuffle`] changed it within each list).
    entries: Vec<Entry>,
    /// [`Walker::walk`] stops (unfinished) once `nodes` reaches this.
    limit: u64,
    /// Where the next stop and limit check happens (at most [`CHECK_EVERY`] nodes ahead).
    check_at: u64,
    /// Set by a [`Leaf::First`] walk that ended on a full board (left in `at`).
    found: bool,
    /// Published node count (for progress), written at every check.
    live: Option<&'t AtomicU64>,
    /// `reach[c]`: the colours the cell under `c` may show to its right, given the placements
    /// so far ([`Walker::reach_mask`]); written when `c` is placed.
    reach: Vec<u64>,
}

/// Nodes between two checks of the stop flag and the node limit in [`Walker::walk`].
const CHECK_EVERY: u64 = 1 << 16;

/// What a walk should do with each full (or prefix-length) assignment.
enum Leaf<'a> {
    /// Collect prefixes of this length as tasks.
    Prefixes(usize, &'a mut Vec<Vec<u32>>),
    /// Call back with full boards.
    Solutions(&'a mut dyn FnMut(&[u32])),
    /// Stop at the first full board, leaving it in `at` and raising `found`.
    First,
}

impl<'t> Walker<'t> {
    fn new(t: &'t Tables) -> Self {
        let n = t.cells;
        Walker {
            t,
            used: vec![0; n.div_ceil(64)],
            next: vec![0; n],
            end: vec![0; n],
            at: vec![0; n],
            nodes: 0,
            deepest: 0,
            budget: t.budget.clone(),
            shown: vec![0; 2 * n],
            entries: t.entries.clone(),
            limit: u64::MAX,
            check_at: 0,
            found: false,
            live: None,
            reach: vec![0; n],
        }
    }

    /// The row-chain cut: with `e` placed at `pos`, the cells under `pos`'s row so far need
    /// unused pieces whose up colours are the down colours shown, and whose left and right
    /// colours chain from the grey rim. `reach[pos - 1]` holds the colours the chain can
    /// show rightwards under `pos - 1` (grey at the row's start); this returns the colours it
    /// can show under `pos`: those of unused pieces (not `e`'s) at the cell under `pos` with
    /// `e`'s down colour upwards and a reachable colour to the left. Empty means the row
    /// below cannot be filled, so `e` is cut. Pieces count as free if unused now, so the
    /// check never cuts a solution (it ignores that two cells may want one piece).
    #[inline]
    fn reach_mask(&self, pos: usize, e: &Entry) -> u64 {
        let w = self.t.width;
        let mut left = if pos.is_multiple_of(w) { 1 } else { self.reach[pos - 1] };
        let mut out = 0u64;
        while left != 0 {
            let l = left.trailing_zeros() as u8;
            left &= left - 1;
            let (a, b) = self.t.range(pos + w, l, e.down);
            for x in &self.t.entries[a as usize..b as usize] {
                if x.piece != e.piece && self.used[x.piece as usize / 64] >> (x.piece % 64) & 1 == 0 {
                    out |= 1 << x.right;
                }
            }
        }
        out
    }

    /// Walks the tables `t` from now on (of a puzzle with as many cells and colours), in
    /// their own entry order; reuses the buffers.
    fn retarget(&mut self, t: &'t Tables) {
        debug_assert_eq!((t.cells, t.budget.len()), (self.t.cells, self.t.budget.len()));
        self.t = t;
        // The top row reads "grey above" from `shown`, which a walk of another width wrote.
        self.shown.fill(0);
        self.entries.clear();
        self.entries.extend_from_slice(&t.entries);
    }

    /// Shuffles the entries within each (cell, left, up) list: a new value order.
    fn shuffle(&mut self, rng: &mut Xoshiro256PlusPlus) {
        use rand::seq::SliceRandom;
        for w in self.t.offsets.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            if b - a > 1 {
                self.entries[a..b].shuffle(rng);
            }
        }
    }

    #[inline]
    fn open(&mut self, c: usize) {
        // The colours facing cell c: `shown[c]` is what cell c - 1 shows to its right (grey
        // at the start of a row, since every last-column placement shows grey to the right),
        // `shown[c + n]` what the cell above shows downwards (grey in the top row).
        let (left, up) = (self.shown[c], self.shown[c + self.t.cells]);
        let (a, b) = self.t.range(c, left, up);
        self.next[c] = a;
        self.end[c] = b;
    }

    /// Records the colours `e`, placed at `c`, shows to the cells after it.
    #[inline]
    fn show(&mut self, c: usize, e: &Entry) {
        let n = self.t.cells;
        if c + 1 < n {
            self.shown[c + 1] = e.right;
        }
        if c + self.t.width < n {
            self.shown[c + self.t.width + n] = e.down;
        }
    }

    /// Can `e` go at cell `pos` now: its piece is unused, the cell below can still be filled
    /// (some unused piece shows the right colour upwards there), and the joins it opens are
    /// within their budgets.
    #[inline]
    fn admissible(&self, pos: usize, e: &Entry) -> bool {
        if self.used[e.piece as usize / 64] >> (e.piece % 64) & 1 == 1 {
            return false;
        }
        let [a, b] = e.opens;
        if self.budget[a as usize] < 1 + i32::from(a == b) || self.budget[b as usize] < 1 {
            return false;
        }
        pos + self.t.width >= self.t.cells || self.t.below_ok(pos, e.down, &self.used, e.piece)
    }

    /// Places (`sign` -1) or removes (`sign` +1) the piece and the joins of `e`.
    #[inline]
    fn apply(&mut self, e: &Entry, sign: i32) {
        self.used[e.piece as usize / 64] ^= 1 << (e.piece % 64);
        for i in e.opens {
            self.budget[i as usize] += sign;
        }
    }

    /// Fixes the prefix `entries` (cells `0..entries.len()`); false if it is inconsistent.
    fn load(&mut self, prefix: &[u32]) -> bool {
        self.used.iter_mut().for_each(|w| *w = 0);
        self.budget.copy_from_slice(&self.t.budget);
        for (c, &e) in prefix.iter().enumerate() {
            self.open(c);
            if e < self.next[c] || e >= self.end[c] {
                return false;
            }
            let entry = self.t.entries[e as usize];
            if !self.admissible(c, &entry) {
                return false;
            }
            self.apply(&entry, -1);
            self.at[c] = e;
            self.show(c, &entry);
        }
        true
    }

    /// One random probe of Knuth's estimator from the root: the nodes of the tree, estimated
    /// from one random path as the sum over depths of the product of the branching factors.
    fn probe(&mut self, rng: &mut Xoshiro256PlusPlus) -> f64 {
        self.used.iter_mut().for_each(|w| *w = 0);
        self.budget.copy_from_slice(&self.t.budget);
        let (mut nodes, mut weight) = (0f64, 1f64);
        for c in 0..self.t.cells {
            self.open(c);
            let (a, b) = (self.next[c], self.end[c]);
            let free = |e: &Entry| self.admissible(c, e);
            let k = self.t.entries[a as usize..b as usize].iter().filter(|e| free(e)).count();
            if k == 0 {
                break;
            }
            weight *= k as f64;
            nodes += weight;
            let pick = rng.random_range(0..k);
            let (i, e) = (a..b)
                .map(|i| (i, self.t.entries[i as usize]))
                .filter(|(_, e)| free(e))
                .nth(pick)
                .expect("k free entries");
            self.at[c] = i;
            self.apply(&e, -1);
            self.show(c, &e);
        }
        nodes
    }

    /// Walks the subtree below the loaded prefix of length `start`. Returns false when
    /// `stop` was raised before the walk finished.
    fn walk(&mut self, start: usize, leaf: Leaf<'_>, stop: &AtomicBool) -> bool {
        // The entries leave `self` for the walk, so that the loop can read them while it
        // changes the rest of the state; they come back whatever the ending.
        let entries = std::mem::take(&mut self.entries);
        let finished = self.walk_with(&entries, start, leaf, stop);
        self.entries = entries;
        finished
    }

    fn walk_with(&mut self, entries: &[Entry], start: usize, mut leaf: Leaf<'_>, stop: &AtomicBool) -> bool {
        let n = self.t.cells;
        self.found = false;
        let depth = match &leaf {
            Leaf::Prefixes(d, _) => *d,
            Leaf::Solutions(_) | Leaf::First => n,
        };
        if start >= depth {
            match &mut leaf {
                Leaf::Prefixes(_, out) => out.push(self.at[..depth].to_vec()),
                Leaf::Solutions(f) => f(&self.at),
                Leaf::First => self.found = true,
            }
            return true;
        }
        self.check_at = self.limit.min(self.nodes.saturating_add(CHECK_EVERY));
        if self.nodes >= self.limit {
            return false;
        }
        let mut pos = start;
        self.open(pos);
        loop {
            let mut i = self.next[pos];
            let end = self.end[pos];
            let mut placed = false;
            while i < end {
                let e = entries[i as usize];
                i += 1;
                if self.admissible(pos, &e) {
                    if self.t.reach && pos + self.t.width < n {
                        let m = self.reach_mask(pos, &e);
                        if m == 0 {
                            continue;
                        }
                        self.reach[pos] = m;
                    }
                    placed = true;
                    break;
                }
            }
            self.next[pos] = i;
            if placed {
                let e = i - 1;
                self.at[pos] = e;
                self.nodes += 1;
                if pos + 1 == depth {
                    self.deepest = depth;
                    match &mut leaf {
                        Leaf::Prefixes(_, out) => out.push(self.at[..depth].to_vec()),
                        Leaf::Solutions(f) => f(&self.at),
                        Leaf::First => {
                            self.found = true;
                            return true;
                        }
                    }
                    continue;
                }
                let placed = entries[e as usize];
                self.apply(&placed, -1);
                self.show(pos, &placed);
                pos += 1;
                self.deepest = self.deepest.max(pos);
                self.open(pos);
                if self.nodes >= self.check_at {
                    if let Some(live) = self.live {
                        live.store(self.nodes, Ordering::Relaxed);
                    }
                    if stop.load(Ordering::Relaxed) || self.nodes >= self.limit {
                        return false;
                    }
                    self.check_at = self.limit.min(self.nodes + CHECK_EVERY);
                }
            } else {
                if pos == start {
                    return true;
                }
                pos -= 1;
                self.apply(&entries[self.at[pos] as usize], 1);
            }
        }
    }
}

/// Which search `concur count` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
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
    pub threads: usize,
    pub wall_s: f64,
}

/// Settings of [`count`].
#[derive(Clone, Debug)]
pub struct ScanOptions {
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
    /// The row-chain cut of the solver ([`ScanSolveConfig::row_chain`]); off by default, so
    /// that the count's tree and its journals' cuts stay as they were.
    pub row_chain: bool,
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
        }
    }
}

/// The shape of one count: the tree that is walked (corner piece, scan direction) and its
/// cut into subtrees. A journal starts with it, so that a resumed count walks the same
/// subtrees and can skip the finished ones.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScanPlan {
    pub corner_piece: Option<u16>,
    pub column_scan: bool,
    pub min_tasks: usize,
    pub split_depth: usize,
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
    pub task: u64,
    /// Solutions counted (turned copies included, as in [`ScanCount::solutions`]).
    pub solutions: u64,
    pub nodes: u64,
    pub boards: Vec<Vec<[u16; 2]>>,
}

/// Where a journaled count reports: the plan once, before the walk; every finished subtree
/// (from the worker threads); and progress about once a second.
pub trait Journal: Sync {
    fn plan(&self, _plan: &ScanPlan) {}
    fn task(&self, _done: &TaskDone) {}
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

/// A count that cannot resume from the journal it was given.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("the journal is of another count: {0}")]
    PlanMismatch(String),
    #[error("the journal's record is wrong: {0}")]
    BadRecord(String),
    #[error("journal {path}: {reason}")]
    Journal { path: String, reason: String },
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

/// The corner piece to fix in the top-left cell, when turn symmetry applies: the board is
/// square, has no hints, and the piece can only go to corner cells.
fn symmetry_piece(puzzle: &Puzzle) -> Option<u16> {
    let (w, h) = (puzzle.width(), puzzle.height());
    if w != h || !puzzle.hints().is_empty() || w < 2 {
        return None;
    }
    let cands = puzzle.candidates();
    let p = cands.of(0).iter().map(|pl| pl.piece).min()?;
    symmetry_piece_ok(puzzle, p).then_some(p)
}

/// True when piece `p` can only go to the four corner cells of the (square) board.
fn symmetry_piece_ok(puzzle: &Puzzle, p: u16) -> bool {
    let (w, n) = (puzzle.width(), puzzle.cells());
    let cands = puzzle.candidates();
    let corners = [0, w - 1, n - w, n - 1];
    (0..n).all(|c| corners.contains(&c) || cands.of(c).iter().all(|pl| pl.piece != p))
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

/// Knuth's estimate of the tree of a scan over `t` from `probes` random probes. Past the
/// deadline or after a stop request it stops probing and estimates from the probes made (at
/// least one), so a large `probes` cannot outlast the run's time limit.
fn estimate_tree(t: &Tables, probes: u64, seed: u64, deadline: Option<Instant>) -> f64 {
    if probes == 0 {
        return 0.0;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut wk = Walker::new(t);
    let (mut sum, mut made) = (0.0, 0u64);
    while made < probes {
        if made > 0
            && made.is_multiple_of(64)
            && (deadline.is_some_and(|d| Instant::now() >= d) || crate::interrupt::requested())
        {
            break;
        }
        sum += wk.probe(&mut rng);
        made += 1;
    }
    sum / made as f64
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
    let deadline = opts.time_limit.map(|d| start + d);
    let mut first = if opts.symmetry { symmetry_piece(puzzle) } else { None };
    let mut mirror = false;
    let mut estimated_nodes = None;
    let mirror_puzzle = first.map(|_| mirrored(puzzle));
    if let Some((plan, _)) = resume {
        if plan.corner_piece.is_some() != first.is_some()
            || plan.corner_piece.is_some_and(|p| {
                let pz = if plan.column_scan { mirror_puzzle.as_ref().expect("with symmetry") } else { puzzle };
                usize::from(p) >= pz.pieces().len() || !symmetry_piece_ok(pz, p)
            })
        {
            return Err(ScanError::PlanMismatch(
                "its corner piece does not fit this puzzle and symmetry setting".into(),
            ));
        }
        first = plan.corner_piece;
        mirror = plan.column_scan;
    } else if let (Some(_), Some(mp)) = (first, &mirror_puzzle) {
        let mut best: Option<(f64, bool, u16)> = None;
        for (m, pz) in [(false, puzzle), (true, mp)] {
            let corner: std::collections::BTreeSet<u16> = pz.candidates().of(0).iter().map(|pl| pl.piece).collect();
            for p in corner {
                if symmetry_piece_ok(pz, p) {
                    let est = estimate_tree(&Tables::new(pz, Some(p)), opts.probes, u64::from(p), deadline);
                    if best.is_none_or(|(b, _, _)| est < b) {
                        best = Some((est, m, p));
                    }
                }
            }
        }
        if let Some((est, m, p)) = best {
            first = Some(p);
            mirror = m;
            estimated_nodes = Some(est);
        }
    }
    let solving = if mirror { mirror_puzzle.as_ref().expect("built with the symmetry") } else { puzzle };
    let mut t = Tables::new(solving, first);
    t.reach = opts.row_chain;
    let threads = if opts.threads == 0 { rayon::current_num_threads() } else { opts.threads };
    let min_tasks = match (resume, opts.min_tasks) {
        (Some((plan, _)), _) => plan.min_tasks,
        (None, 0) => 256 * threads,
        (None, m) => m,
    };
    let never = AtomicBool::new(false);
    // Cut the tree where it has enough subtrees to keep every thread busy.
    let mut tasks = vec![Vec::new()];
    let mut split = 0;
    let mut top_nodes = 0;
    while split < t.cells && tasks.len() < min_tasks {
        let d = (split + t.width.max(1)).min(t.cells);
        let mut next = Vec::new();
        let mut wk = Walker::new(&t);
        for pre in &tasks {
            if wk.load(pre) {
                wk.walk(pre.len(), Leaf::Prefixes(d, &mut next), &never);
            }
        }
        top_nodes += wk.nodes;
        tasks = next;
        split = d;
    }
    let plan = ScanPlan {
        corner_piece: first,
        column_scan: mirror,
        min_tasks,
        split_depth: split,
        tasks: tasks.len() as u64,
        fingerprint: fingerprint(puzzle, &tasks),
    };
    if let Some((recorded, _)) = resume
        && *recorded != plan
    {
        return Err(ScanError::PlanMismatch(format!(
            "it records {recorded}; this puzzle and these settings give {plan}"
        )));
    }
    journal.plan(&plan);
    let stop = AtomicBool::new(false);
    let found = AtomicU64::new(0);
    let classes = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let nodes = AtomicU64::new(top_nodes);
    let deepest = AtomicU64::new(split as u64);
    let square = puzzle.width() == puzzle.height() && puzzle.hints().is_empty();
    let canonical = std::sync::Mutex::new(std::collections::HashSet::new());
    // Turned copies of a solution, for the count up to turning without the symmetry.
    let add_canonical = |board: Board| {
        let mut best = board.cells.clone();
        let mut r = board;
        for _ in 0..3 {
            r = rotate_board(&r);
            best = best.min(r.cells.clone());
        }
        canonical.lock().expect("no panics while held").insert(best);
    };
    let mut skip = vec![false; tasks.len()];
    let mut resumed = 0u64;
    let mut nodes_resumed = 0u64;
    if let Some((_, prior)) = resume {
        for d in prior {
            let Some(seen) = skip.get_mut(d.task as usize) else {
                return Err(ScanError::PlanMismatch(format!("task {} is past the plan's {}", d.task, tasks.len())));
            };
            if std::mem::replace(seen, true) {
                continue;
            }
            // A journal is a file: its boards pass the exact check again before they count.
            let per_board = if first.is_some() { 4 } else { 1 };
            if d.solutions != per_board * d.boards.len() as u64 {
                return Err(ScanError::BadRecord(format!(
                    "task {} records {} solutions and {} boards",
                    d.task,
                    d.solutions,
                    d.boards.len()
                )));
            }
            for b in &d.boards {
                let cells = b
                    .iter()
                    .map(|&[piece, rot]| Placement { piece, rot: u8::try_from(rot).unwrap_or(u8::MAX) })
                    .collect();
                let board = Board { width: puzzle.width(), height: puzzle.height(), cells };
                let v = verify::check(puzzle, &board);
                if !v.valid {
                    return Err(ScanError::BadRecord(format!(
                        "task {} records a board that is not a solution: {}",
                        d.task,
                        v.problems.join("; ")
                    )));
                }
                if first.is_none() && square {
                    add_canonical(board);
                }
            }
            resumed += 1;
            done.fetch_add(1, Ordering::Relaxed);
            found.fetch_add(d.solutions, Ordering::Relaxed);
            nodes.fetch_add(d.nodes, Ordering::Relaxed);
            nodes_resumed += d.nodes;
            if first.is_some() {
                classes.fetch_add(d.boards.len() as u64, Ordering::Relaxed);
            }
        }
    }
    let tasks: Vec<(usize, Vec<u32>)> = tasks.into_iter().enumerate().filter(|(i, _)| !skip[*i]).collect();
    let total_tasks = skip.len() as u64;
    let work = |wk: &mut Walker, (index, pre): &(usize, Vec<u32>)| {
        if stop.load(Ordering::Relaxed)
            || deadline.is_some_and(|d| Instant::now() >= d)
            || crate::interrupt::requested()
            || journal.failed()
        {
            stop.store(true, Ordering::Relaxed);
            return;
        }
        if !wk.load(pre) {
            done.fetch_add(1, Ordering::Relaxed);
            journal.task(&TaskDone { task: *index as u64, solutions: 0, nodes: 0, boards: Vec::new() });
            return;
        }
        let before = wk.nodes;
        let mut task_solutions = 0u64;
        let mut boards = Vec::new();
        let mut on_solution = |at: &[u32]| {
            let cands = solving.candidates();
            let cells = at.iter().enumerate().map(|(c, &e)| cands.of(c)[t.entries[e as usize].cand as usize]).collect();
            let board = Board { width: solving.width(), height: solving.height(), cells };
            let board = if mirror { unmirror(&board) } else { board };
            // Never trust the search: every solution passes the exact check before it counts.
            let verdict = verify::check(puzzle, &board);
            assert!(verdict.valid, "scan counter produced an invalid board: {:?}", verdict.problems);
            boards.push(board.cells.iter().map(|pl| [pl.piece, u16::from(pl.rot)]).collect());
            let mut n = 1;
            if first.is_some() {
                let mut r = board;
                for _ in 0..3 {
                    r = rotate_board(&r);
                    let v = verify::check(puzzle, &r);
                    assert!(v.valid, "a turned solution is not valid: {:?}", v.problems);
                }
                n = 4;
                classes.fetch_add(1, Ordering::Relaxed);
            } else if square {
                add_canonical(board);
            }
            task_solutions += n;
            let total = found.fetch_add(n, Ordering::Relaxed) + n;
            if opts.limit.is_some_and(|l| total >= l) {
                stop.store(true, Ordering::Relaxed);
            }
        };
        // Time checks happen inside the walk through `stop`, raised by a watcher below.
        let finished = wk.walk(pre.len(), Leaf::Solutions(&mut on_solution), &stop);
        nodes.fetch_add(wk.nodes - before, Ordering::Relaxed);
        deepest.fetch_max(wk.deepest as u64, Ordering::Relaxed);
        // A subtree cut short by a solution limit is not finished either: `walk` saw `stop`.
        if finished {
            done.fetch_add(1, Ordering::Relaxed);
            let nodes = wk.nodes - before;
            journal.task(&TaskDone { task: *index as u64, solutions: task_solutions, nodes, boards });
        }
    };
    // Workers take the subtrees in order (or in reverse order) from one counter, so that a
    // run stopped early has finished a prefix of them, give or take those in flight: two
    // machines walking from both ends of one plan meet in the middle.
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let watcher = s.spawn(|| {
            let mut shown = Instant::now();
            while !stop.load(Ordering::Relaxed) && done.load(Ordering::Relaxed) < total_tasks {
                if deadline.is_some_and(|d| Instant::now() >= d) || crate::interrupt::requested() || journal.failed() {
                    stop.store(true, Ordering::Relaxed);
                }
                if shown.elapsed() >= Duration::from_secs(1) {
                    shown = Instant::now();
                    let (d, n, f) =
                        (done.load(Ordering::Relaxed), nodes.load(Ordering::Relaxed), found.load(Ordering::Relaxed));
                    journal.progress(d, total_tasks, n, f);
                }
                std::thread::park_timeout(Duration::from_millis(50));
            }
        });
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut wk = Walker::new(&t);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= tasks.len() {
                            break;
                        }
                        work(&mut wk, &tasks[if opts.reverse { tasks.len() - 1 - i } else { i }]);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().expect("a counting worker panicked");
        }
        stop.store(true, Ordering::Relaxed);
        watcher.thread().unpark();
    });
    let tasks_done = done.load(Ordering::Relaxed);
    let complete = tasks_done == total_tasks;
    let solutions = found.load(Ordering::Relaxed);
    let up_to_rotation = if first.is_some() {
        Some(classes.load(Ordering::Relaxed))
    } else {
        square.then(|| canonical.lock().expect("no panics while held").len() as u64)
    };
    Ok(ScanCount {
        solutions,
        up_to_rotation,
        complete,
        nodes: nodes.load(Ordering::Relaxed),
        best_depth: (deepest.load(Ordering::Relaxed) as usize).min(t.cells),
        tasks: total_tasks,
        tasks_done,
        tasks_resumed: resumed,
        nodes_resumed,
        split_depth: split,
        symmetry: first.is_some(),
        corner_piece: first,
        column_scan: mirror,
        estimated_nodes,
        threads,
        wall_s: start.elapsed().as_secs_f64(),
    })
}

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
    use crate::puzzle::{Class, cell_class, neighbour};

    /// The budgets are exactly the joins of each kind and colour of a solution, so the check
    /// can never cut a solution off.
    #[test]
    fn join_budgets_equal_the_joins_of_the_planted_solution() {
        for (w, h) in [(3, 3), (4, 3), (5, 5), (7, 4), (8, 8)] {
            for seed in 0..3 {
                let (p, b) =
                    generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                        .unwrap();
                let k = p.num_colors();
                let mut seen = vec![0i32; 3 * k];
                for c in 0..p.cells() {
                    for s in [crate::puzzle::RIGHT, crate::puzzle::DOWN] {
                        if let Some(m) = neighbour(w, h, c, s) {
                            let kind = usize::from(cell_class(w, h, c) == Class::Inner)
                                + usize::from(cell_class(w, h, m) == Class::Inner);
                            seen[kind * k + p.color(b.cells[c], s) as usize] += 1;
                        }
                    }
                }
                assert_eq!(join_budgets(&p), seen, "{w}x{h} seed {seed}");
            }
        }
    }

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

    #[test]
    fn probes_estimate_small_trees_closely() {
        let (p, _) =
            generate(&GenerateOptions { width: 5, height: 5, frame_colors: None, inner_colors: None, seed: 2 })
                .unwrap();
        let t = Tables::new(&p, None);
        let exact = count(&p, &ScanOptions { symmetry: false, threads: 1, ..Default::default() });
        assert!(exact.complete);
        let est = estimate_tree(&t, 20_000, 1, None);
        let ratio = est / exact.nodes as f64;
        assert!((0.8..1.25).contains(&ratio), "estimate {est} against {} nodes", exact.nodes);
    }

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
