//! The depth-first walk over the tables, and Knuth's estimate of its tree.

use super::tables::{Entry, Tables};
use crate::cancel::Deadline;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The state of one depth-first walk: the placements of cells `0..pos` and the used pieces.
pub(super) struct Walker<'t> {
    t: &'t Tables,
    used: Vec<u64>,
    /// Next entry to try at each cell, and the end of its list.
    next: Vec<u32>,
    end: Vec<u32>,
    /// Entry placed at each cell.
    pub(super) at: Vec<u32>,
    pub(super) nodes: u64,
    /// Most cells placed at once.
    pub(super) deepest: usize,
    /// The entries of the first placement that reached `deepest` (copied when it grows: at
    /// most once per cell over the walker's life).
    pub(super) deepest_at: Vec<u32>,
    /// Joins of each kind and colour not opened yet.
    budget: Vec<i32>,
    /// Colours facing each cell from the left (`0..n`) and from above (`n..2n`), as the
    /// placements so far show them ([`Walker::open`]).
    shown: Vec<u8>,
    /// The walker's own copy of the table entries, in the order [`Walker::walk`] tries them
    /// (the tables' order unless [`Walker::shuffle`] changed it within each list).
    pub(super) entries: Vec<Entry>,
    /// [`Walker::walk`] stops (unfinished) once `nodes` reaches this.
    pub(super) limit: u64,
    /// Where the next stop and limit check happens (at most [`CHECK_EVERY`] nodes ahead).
    check_at: u64,
    /// Set by a [`Leaf::First`] walk that ended on a full board (left in `at`).
    pub(super) found: bool,
    /// Published node count (for progress), written at every check.
    pub(super) live: Option<&'t AtomicU64>,
    /// `reach[c]`: the colours the cell under `c` may show to its right, given the placements
    /// so far ([`Walker::reach_mask`]); written when `c` is placed.
    reach: Vec<u64>,
}

/// What the first-solution search needs of a walker: the table walker ([`Walker`]) and the
/// fast one ([`FastWalker`](super::fast::FastWalker)) walk the same trees node for node.
pub(super) trait FirstWalk<'t> {
    fn nodes(&self) -> u64;
    fn set_live(&mut self, live: &'t AtomicU64);
    /// [`FirstWalk::walk_first`] stops (unfinished) once the node count reaches this.
    fn set_limit(&mut self, limit: u64);
    /// Walks the tables `t` from now on (of a puzzle with as many cells and colours), in
    /// their own entry order.
    fn retarget(&mut self, t: &'t Tables);
    /// Shuffles the entries within each (cell, left, up) list: a new value order.
    fn shuffle(&mut self, rng: &mut Xoshiro256PlusPlus);
    /// A walk from the root to the first full board, the node limit or a stop; false when
    /// stopped or limited before the walk finished.
    fn walk_first(&mut self, stop: &AtomicBool) -> bool;
    /// Most cells placed at once.
    fn deepest(&self) -> usize;
    /// The entries of the first placement that reached [`FirstWalk::deepest`].
    fn deepest_at(&self) -> &[u32];
    /// The entry placed at each cell (a full board when [`FirstWalk::found`]).
    fn at(&self) -> &[u32];
    fn found(&self) -> bool;
    /// The candidate index (in its cell's candidate list) of entry `e`.
    fn cand(&self, e: u32) -> u32;
}

impl<'t> FirstWalk<'t> for Walker<'t> {
    fn nodes(&self) -> u64 {
        self.nodes
    }
    fn set_live(&mut self, live: &'t AtomicU64) {
        self.live = Some(live);
    }
    fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }
    fn retarget(&mut self, t: &'t Tables) {
        Walker::retarget(self, t);
    }
    fn shuffle(&mut self, rng: &mut Xoshiro256PlusPlus) {
        Walker::shuffle(self, rng);
    }
    fn walk_first(&mut self, stop: &AtomicBool) -> bool {
        self.load(&[]);
        self.walk(0, Leaf::First, stop)
    }
    // The walker accessors repeat the fast walker's on purpose (the same trait; this walker is
    // its oracle).
    fn deepest(&self) -> usize {
        self.deepest
    }
    fn deepest_at(&self) -> &[u32] {
        &self.deepest_at
    }
    fn at(&self) -> &[u32] {
        &self.at
    }
    fn found(&self) -> bool {
        self.found
    }
    fn cand(&self, e: u32) -> u32 {
        self.entries[e as usize].cand
    }
}

/// Nodes between two checks of the stop flag and the node limit in [`Walker::walk`].
const CHECK_EVERY: u64 = 1 << 16;

/// What a walk should do with each full (or prefix-length) assignment.
pub(super) enum Leaf<'a> {
    /// Collect prefixes of this length as tasks.
    Prefixes(usize, &'a mut Vec<Vec<u32>>),
    /// Call back with full boards.
    Solutions(&'a mut dyn FnMut(&[u32])),
    /// Stop at the first full board, leaving it in `at` and raising `found`.
    First,
}

impl<'t> Walker<'t> {
    pub(super) fn new(t: &'t Tables) -> Self {
        let n = t.cells;
        Walker {
            t,
            used: vec![0; n.div_ceil(64)],
            next: vec![0; n],
            end: vec![0; n],
            at: vec![0; n],
            nodes: 0,
            deepest: 0,
            deepest_at: Vec::with_capacity(n),
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
    pub(super) fn reach_mask(&self, pos: usize, e: &Entry) -> u64 {
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
    pub(super) fn retarget(&mut self, t: &'t Tables) {
        debug_assert_eq!((t.cells, t.budget.len()), (self.t.cells, self.t.budget.len()));
        self.t = t;
        // The top row reads "grey above" from `shown`, which a walk of another width wrote.
        self.shown.fill(0);
        self.entries.clear();
        self.entries.extend_from_slice(&t.entries);
    }

    /// Shuffles the entries within each (cell, left, up) list: a new value order.
    pub(super) fn shuffle(&mut self, rng: &mut Xoshiro256PlusPlus) {
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
    pub(super) fn load(&mut self, prefix: &[u32]) -> bool {
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
    pub(super) fn walk(&mut self, start: usize, leaf: Leaf<'_>, stop: &AtomicBool) -> bool {
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
                if pos > self.deepest {
                    self.deepest = pos;
                    self.deepest_at.clear();
                    self.deepest_at.extend_from_slice(&self.at[..pos]);
                }
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

/// Knuth's estimate of the tree of a scan over `t` from `probes` random probes. Past the
/// deadline or after a stop request it stops probing and estimates from the probes made (at
/// least one), so a large `probes` cannot outlast the run's time limit.
pub(super) fn estimate_tree(t: &Tables, probes: u64, seed: u64, until: &Deadline) -> f64 {
    if probes == 0 {
        return 0.0;
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut wk = Walker::new(t);
    let (mut sum, mut made) = (0.0, 0u64);
    while made < probes {
        if made > 0 && made.is_multiple_of(64) && until.passed() {
            break;
        }
        sum += wk.probe(&mut rng);
        made += 1;
    }
    sum / made as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use crate::search::scan::{ScanOptions, count};

    #[test]
    fn probes_estimate_small_trees_closely() {
        let (p, _) =
            generate(&GenerateOptions { width: 5, height: 5, frame_colors: None, inner_colors: None, seed: 2 })
                .unwrap();
        let t = Tables::new(&p, None);
        let exact = count(&p, &ScanOptions { symmetry: false, threads: 1, ..Default::default() });
        assert!(exact.complete);
        let est = estimate_tree(&t, 20_000, 1, &Deadline::default());
        let ratio = est / exact.nodes as f64;
        assert!((0.8..1.25).contains(&ratio), "estimate {est} against {} nodes", exact.nodes);
    }
}
