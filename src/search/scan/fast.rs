//! The first-solution walker specialised for speed: the same walk as
//! [`Walker::walk`](super::walk::Walker::walk) with [`Leaf::First`](super::walk::Leaf::First)
//! from the root, node for node (the tests in this file and in `solve.rs` compare both on many
//! seeds, puzzles, restarts and trees), with its state laid out for the hot loop. What the
//! profile of the table walker showed (set 1 8x8, sampled with `perf`): most of the time in
//! the candidate loop, on loads of its 12-byte entries and of the budget and look-ahead
//! tables behind them, on bounds checks and on the used-piece branch, which fails more than
//! half the time and unpredictably (2.5 candidates are tested per placement: 1.44 fail on the
//! piece, 0.07 on a join budget, fewer than 0.001 on the look-ahead). So:
//!
//! - the used-piece bitset is a `[u64; WORDS]` held in registers, the number of words a
//!   compile-time constant (1 up to 64 cells, 4 up to 256);
//! - each (cell, left, up) list is a contiguous run of 4-byte entries (piece, right and down
//!   colours, and the two joins it opens as dense budget indices), with 16-bit list offsets
//!   per cell: on set 1 8x8 the tables the walk reads take about 48 KB instead of about
//!   112 KB (the first-level data cache here holds 48 KB);
//! - when a cell opens, the pieces of its whole list are tested at once without branches,
//!   giving a bit mask of the entries whose piece is free; that set depends only on the
//!   placements before the cell, so it holds until the walk backtracks past the cell, and the
//!   entries are then taken in order by their lowest set bit;
//! - the lists are short (2.4 entries on average on set 1's 8x8 inner cells, at most 6), and
//!   a loop over a list's own length ends on a branch that mispredicts about once a list:
//!   a list of up to 4 or up to 8 entries is tested as a fixed block of that many (what
//!   follows the list, or padding after the last one, read and masked off);
//! - the join budgets and the look-ahead, which rarely fail, are tested (with a branch) only
//!   when an entry comes up; testing them then, in the same order, is the same walk;
//! - the per-depth state (the list's first entry, the mask of entries left, the packed entry
//!   placed), the per-cell constants (first entry, list row, look-ahead masks) and the colour
//!   each placement shows downwards live in arrays of a fixed [`CELLS`] entries indexed
//!   modulo that size, so the hot loop has no bounds checks on them.
//!
//! The last two steps (2026-12-06, set 1 8x8 seed 11, 2e7 nodes under cachegrind's branch
//! simulation): 229 instructions and 2.8 mispredicted branches a node before, 169 and 1.05
//! after, of which 0.87 is the test whether the list has a free entry left, the search's own
//! choice between going deeper and backtracking. No per-width or per-cell code is generated
//! or monomorphised: what a cell's kind decides (its list, its joins' budgets, whether it has
//! a cell below) is one 12-byte read of its [`Cell`] and one predictable branch, about 5 % of
//! the instructions a node (ARCHITECTURE.md, "The scan's walker").

//! It needs at most 256 cells and 32 colours, lists of at most 64 entries, and at most 63
//! join budgets (kinds and colours) that occur; [`FastWalker::fits`] says so, and otherwise
//! the search uses the table walker.

use super::tables::Tables;
use super::walk::FirstWalk;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The dense budget index of a join that has no budget (a rim side or budgets off): its
/// budget is unlimited.
const SPARE: usize = 63;
/// Nodes between two checks of the stop flag and the node limit (as the table walker).
const CHECK_EVERY: u64 = 1 << 16;
/// Entries of padding after the last list, so that a fixed block of up to this many entries
/// can be read from the start of any list ([`FastWalker::free`]).
const PAD: usize = 8;
/// Most cells of a board the fast walker walks: its per-cell and per-depth arrays have this
/// fixed size and are indexed modulo it, so that the walk's indexing needs no bounds checks.
const CELLS: usize = 256;
/// [`Cell::below`] of a cell in the bottom row: no look-ahead.
const NO_BELOW: u32 = u32::MAX;

/// What the walk keeps of a depth: the packed entry placed (so that a backtrack reads it
/// without going through the entry's index), the first entry of the cell's list, and the
/// admissible entries of the list not tried yet (bit `j`: entry `base + j`).
#[derive(Clone, Copy, Default)]
struct Frame {
    rest: u64,
    base: u32,
    x: u32,
}

/// What the walk reads of a cell when it opens or tests an entry there.
#[derive(Clone, Copy, Default)]
struct Cell {
    /// Its first entry, and the row of its list offsets in `starts` (`c * (K * K + 1)`).
    first: u32,
    row: u32,
    /// Where its look-ahead masks start in `below` ([`NO_BELOW`] in the bottom row).
    below: u32,
}

/// The fast first-solution walker over one puzzle's tables; `WORDS` words of piece bits.
pub(super) struct FastWalker<'t, const WORDS: usize> {
    t: &'t Tables,
    /// The entries in the walk's order, 4 bytes each: piece, right colour, down colour.
    hot: Vec<u32>,
    /// The candidate index of each entry (in its cell's list), in the same order.
    cand: Vec<u16>,
    /// Look-ahead masks, `WORDS` words each: `below[(c * K + k) * WORDS..]` the pieces with a
    /// candidate at the cell under `c` showing colour `k` upwards.
    below: Vec<u64>,
    /// The lists of cell `c` as 16-bit offsets from `first[c]`, its first entry:
    /// `starts[c * (K * K + 1) + left * K + up]..[.. + 1]` (one more row per cell ends its
    /// last list), a third of the tables' 32-bit offsets (so that the walk's tables stay in
    /// the first-level cache).
    starts: Vec<u16>,
    cells: Box<[Cell; CELLS]>,
    /// Initial budget of each dense index (the spare last, unlimited).
    budget0: [i32; SPARE + 1],
    budget: [i32; SPARE + 1],
    /// Per depth: the walk's state ([`Frame`]), and the entry placed.
    frames: Box<[Frame; CELLS]>,
    at: Box<[u32; CELLS]>,
    /// `down[c + width]`: the colour the placement at `c` shows downwards (zeros for the row
    /// above the board), so cell `c` reads its up colour at `down[c]`.
    down: Box<[u8; 2 * CELLS]>,
    nodes: u64,
    deepest: usize,
    deepest_at: Vec<u32>,
    limit: u64,
    found: bool,
    live: Option<&'t AtomicU64>,
    /// Scratch of [`FirstWalk::shuffle`].
    perm: Vec<u32>,
    tmp: Vec<(u32, u16)>,
}

/// For each budget index of `t` that some entry opens (with a finite budget), its dense
/// index, and the initial budget of each dense index; None when more than 63.
fn dense_budgets(t: &Tables) -> Option<(Vec<usize>, [i32; SPARE + 1])> {
    let spare = t.budget.len() - 1;
    let mut map = vec![SPARE; t.budget.len()];
    let mut init = [0i32; SPARE + 1];
    init[SPARE] = i32::MAX / 4;
    let mut used = 0;
    for e in &t.entries {
        for &i in &e.opens {
            let i = i as usize;
            if i != spare && map[i] == SPARE {
                if used == SPARE {
                    return None;
                }
                map[i] = used;
                init[used] = t.budget[i];
                used += 1;
            }
        }
    }
    Some((map, init))
}

impl<'t, const WORDS: usize> FastWalker<'t, WORDS> {
    /// True when the fast walker can walk `t` with `WORDS` words.
    pub(super) fn fits(t: &Tables) -> bool {
        t.cells.div_ceil(64) == WORDS
            && !t.reach
            && t.cells <= CELLS
            && t.colors() <= 32
            && t.offsets.windows(2).all(|w| w[1] - w[0] <= 64)
            && (0..t.cells).all(|c| {
                let kk = t.colors() * t.colors();
                t.offsets[(c + 1) * kk] - t.offsets[c * kk] <= u32::from(u16::MAX)
            })
            && dense_budgets(t).is_some()
    }

    pub(super) fn new(t: &'t Tables) -> Self {
        let n = t.cells;
        let mut wk = FastWalker {
            t,
            hot: Vec::new(),
            cand: Vec::new(),
            below: Vec::new(),
            starts: Vec::new(),
            cells: Box::new([Cell::default(); CELLS]),
            budget0: [0; SPARE + 1],
            budget: [0; SPARE + 1],
            frames: Box::new([Frame::default(); CELLS]),
            at: Box::new([0; CELLS]),
            down: Box::new([0; 2 * CELLS]),
            nodes: 0,
            deepest: 0,
            deepest_at: Vec::with_capacity(n),
            limit: u64::MAX,
            found: false,
            live: None,
            perm: Vec::new(),
            tmp: Vec::new(),
        };
        wk.build(t);
        wk
    }

    /// The lists of `t` in the tables' own order.
    fn build(&mut self, t: &'t Tables) {
        debug_assert!(Self::fits(t));
        self.t = t;
        let (n, k) = (t.cells, t.colors());
        let (map, init) = dense_budgets(t).expect("fits");
        self.budget0 = init;
        self.hot.clear();
        self.hot.extend(t.entries.iter().map(|e| {
            let (ja, jb) = (map[e.opens[0] as usize] as u32, map[e.opens[1] as usize] as u32);
            u32::from(e.piece) | u32::from(e.right) << 8 | u32::from(e.down) << 13 | ja << 18 | jb << 24
        }));
        self.hot.resize(t.entries.len() + PAD, 0);
        self.cand.clear();
        self.cand.extend(t.entries.iter().map(|e| e.cand as u16));
        // The width may differ from the last tables' (another orientation of the board).
        self.down.fill(0);
        let kk = k * k;
        for c in 0..n {
            let below = if c + t.width < n { (c * k * WORDS) as u32 } else { NO_BELOW };
            self.cells[c] = Cell { first: t.offsets[c * kk], row: (c * (kk + 1)) as u32, below };
        }
        self.starts.clear();
        for c in 0..n {
            let f = t.offsets[c * kk];
            self.starts.extend((0..=kk).map(|j| (t.offsets[c * kk + j] - f) as u16));
        }
        self.below.clear();
        self.below.resize(n * k * WORDS, 0);
        for c in 0..n {
            for col in 0..k {
                let m = t.below_mask(c, col as u8);
                self.below[(c * k + col) * WORDS..(c * k + col + 1) * WORDS].copy_from_slice(m);
            }
        }
    }

    /// The piece bit (word and bit), colours right and down, and the two joins (dense
    /// budget indices) of packed entry `x`.
    #[inline(always)]
    fn unpack(x: u32) -> (usize, u64, usize, usize, usize, usize) {
        let p = (x & 0xff) as usize;
        let w = if WORDS == 1 { 0 } else { p >> 6 };
        (
            w,
            1u64 << (p & 63),
            (x >> 8 & 31) as usize,
            (x >> 13 & 31) as usize,
            (x >> 18 & 63) as usize,
            (x >> 24 & 63) as usize,
        )
    }

    /// The entries of the list `hot[a..a + len]` at a cell whose pieces are unused, as a bit
    /// mask (bit `j`: entry `a + j`), tested all at once without branches. The piece test is the one that
    /// fails often (more than half of all tests) and unpredictably; the join budgets and the
    /// look-ahead, which rarely fail, are tested when an entry comes up ([`Self::fits_joins`]).
    /// Which entries pass depends only on the placements before the cell, so the mask holds
    /// until the walk backtracks past it, and testing the rest later, in the same order, gives
    /// the same walk as testing every entry in turn.
    #[inline(always)]
    fn free(hot: &[u32], a: usize, len: usize, used: &[u64; WORDS]) -> u64 {
        // Lists are short (2-3 entries on average, at most 6 on set 1's 8x8): a loop over the
        // list's own length ends on a branch that the length's variety makes unpredictable,
        // so short lists are tested as a fixed block of 4 or 8 entries (the entries after the
        // list, or the padding after the last list, tested and masked off).
        #[inline(always)]
        fn block<const B: usize, const WORDS: usize>(hot: &[u32], a: usize, used: &[u64; WORDS]) -> u64 {
            let h: &[u32; B] = hot[a..a + B].try_into().expect("padded");
            // The piece's bit read here rather than through `unpack`: a shared helper measured
            // 2 % more instructions a node under cachegrind (2026-12-06).
            let mut mask = 0u64;
            for (j, &x) in h.iter().enumerate() {
                let p = (x & 0xff) as usize;
                let w = if WORDS == 1 { 0 } else { p >> 6 };
                mask |= (!used[w] >> (p & 63) & 1) << j;
            }
            mask
        }
        if len <= 4 {
            block::<4, WORDS>(hot, a, used) & ((1 << len) - 1)
        } else if len <= PAD {
            block::<PAD, WORDS>(hot, a, used) & ((1 << len) - 1)
        } else {
            let mut mask = 0u64;
            for (j, &x) in hot[a..a + len].iter().enumerate() {
                let (w, pbit, ..) = Self::unpack(x);
                mask |= u64::from(used[w] & pbit == 0) << j;
            }
            mask
        }
    }

    /// The rest of the test of an entry whose piece is unused: its joins within their budgets
    /// (distinct joins need a budget each, one join opened twice needs two), and the cell
    /// below still fillable (`below`: where the cell's look-ahead masks start, [`NO_BELOW`]
    /// in the bottom row).
    #[inline(always)]
    fn fits_joins(x: u32, below: u32, masks: &[u64], used: &[u64; WORDS], budget: &[i32; SPARE + 1]) -> bool {
        let (w, pbit, _, d, ja, jb) = Self::unpack(x);
        if budget[ja] < 1 + i32::from(ja == jb) || budget[jb] < 1 {
            return false;
        }
        if below == NO_BELOW {
            return true;
        }
        let at = below as usize + d * WORDS;
        let m: &[u64; WORDS] = masks[at..at + WORDS].try_into().expect("WORDS words");
        let mut any = 0u64;
        for q in 0..WORDS {
            let own = if q == w { pbit } else { 0 };
            any |= m[q] & !used[q] & !own;
        }
        any != 0
    }

    /// The walk from the root, as [`Walker::walk`](super::walk::Walker::walk)`(0, Leaf::First)`.
    /// Its per-cell and per-depth arrays are indexed modulo [`CELLS`] (`pos < n <= CELLS`
    /// throughout), which leaves their indexing without bounds checks.
    fn run(&mut self, stop: &AtomicBool) -> bool {
        const M: usize = CELLS - 1;
        let n = self.t.cells;
        let k = self.t.colors();
        self.found = false;
        let mut check_at = self.limit.min(self.nodes.saturating_add(CHECK_EVERY));
        if self.nodes >= self.limit {
            return false;
        }
        let width = self.t.width;
        self.budget = self.budget0;
        let mut used = [0u64; WORDS];
        let starts: &[u16] = &self.starts;
        let cells: &[Cell; CELLS] = &self.cells;
        let hot: &[u32] = &self.hot;
        let below: &[u64] = &self.below;
        let (frames, at, down) = (&mut *self.frames, &mut *self.at, &mut *self.down);
        let budget = &mut self.budget;
        let mut nodes = self.nodes;
        let mut deepest = self.deepest;
        let mut pos = 0usize;
        // Cell 0 sees grey to the left and above.
        let (mut base, b) = (cells[0].first + u32::from(starts[0]), cells[0].first + u32::from(starts[1]));
        let mut mask = Self::free(hot, base as usize, (b - base) as usize, &used);
        let finished = loop {
            // The next entry of the list that passes the whole test.
            let mut pick = u32::MAX;
            let mut x = 0;
            let below_here = cells[pos & M].below;
            while mask != 0 {
                let e = base + mask.trailing_zeros();
                mask &= mask - 1;
                x = hot[e as usize];
                if Self::fits_joins(x, below_here, below, &used, budget) {
                    pick = e;
                    break;
                }
            }
            if pick != u32::MAX {
                nodes += 1;
                at[pos & M] = pick;
                if pos + 1 == n {
                    deepest = n;
                    self.found = true;
                    break true;
                }
                frames[pos & M] = Frame { rest: mask, base, x };
                let (w, pbit, r, d, ja, jb) = Self::unpack(x);
                used[w] ^= pbit;
                budget[ja] -= 1;
                budget[jb] -= 1;
                down[(pos + width) & (2 * CELLS - 1)] = d as u8;
                pos += 1;
                if pos > deepest {
                    deepest = pos;
                    self.deepest_at.clear();
                    self.deepest_at.extend_from_slice(&at[..pos]);
                }
                // The next cell's list: its left colour is `r`, its up colour `down[pos]`.
                let cell = cells[pos & M];
                let row = cell.row as usize + r * k + down[pos & M] as usize;
                let (a, b) = (cell.first + u32::from(starts[row]), cell.first + u32::from(starts[row + 1]));
                base = a;
                mask = Self::free(hot, a as usize, (b - a) as usize, &used);
                if nodes >= check_at {
                    if let Some(live) = self.live {
                        live.store(nodes, Ordering::Relaxed);
                    }
                    if stop.load(Ordering::Relaxed) || nodes >= self.limit {
                        break false;
                    }
                    check_at = self.limit.min(nodes + CHECK_EVERY);
                }
            } else {
                if pos == 0 {
                    break true;
                }
                pos -= 1;
                let f = frames[pos & M];
                let (w, pbit, _, _, ja, jb) = Self::unpack(f.x);
                used[w] ^= pbit;
                budget[ja] += 1;
                budget[jb] += 1;
                (base, mask) = (f.base, f.rest);
            }
        };
        self.nodes = nodes;
        self.deepest = deepest;
        finished
    }
}

impl<'t, const WORDS: usize> FirstWalk<'t> for FastWalker<'t, WORDS> {
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
        self.build(t);
    }
    /// The table walker's shuffle, list by list: a slice shuffle draws from the stream by
    /// the slice's length only, so shuffling the positions `0..len` and applying that
    /// permutation to both arrays gives the same order from the same draws.
    fn shuffle(&mut self, rng: &mut Xoshiro256PlusPlus) {
        use rand::seq::SliceRandom;
        for w in self.t.offsets.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            if b - a > 1 {
                self.perm.clear();
                self.perm.extend(0..(b - a) as u32);
                self.perm.shuffle(rng);
                self.tmp.clear();
                self.tmp.extend(self.perm.iter().map(|&j| (self.hot[a + j as usize], self.cand[a + j as usize])));
                for (j, &(h, c)) in self.tmp.iter().enumerate() {
                    self.hot[a + j] = h;
                    self.cand[a + j] = c;
                }
            }
        }
    }
    fn walk_first(&mut self, stop: &AtomicBool) -> bool {
        self.run(stop)
    }
    // The walker accessors repeat the table walker's on purpose: the two walkers answer the
    // same trait, the table walker being this one's oracle.
    fn deepest(&self) -> usize {
        self.deepest
    }
    fn deepest_at(&self) -> &[u32] {
        &self.deepest_at
    }
    fn at(&self) -> &[u32] {
        &self.at[..self.t.cells]
    }
    fn found(&self) -> bool {
        self.found
    }
    fn cand(&self, e: u32) -> u32 {
        u32::from(self.cand[e as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use crate::search::scan::walk::Walker;
    use rand::SeedableRng;

    /// Both walkers, from the same shuffles, under the same node limits: the same node
    /// counts, endings, deepest prefixes and boards, restart after restart.
    /// After the second walk both switch to the tables `u` (another orientation: another
    /// width) and back after the fourth.
    fn same_walks(t: &Tables, u: &Tables, seed: u64, limits: &[u64]) {
        fn go<'t, W: FirstWalk<'t>>(
            mut wk: W,
            (t, u): (&'t Tables, &'t Tables),
            seed: u64,
            limits: &[u64],
            stop: &AtomicBool,
        ) -> Vec<String> {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut out = Vec::new();
            for (i, &l) in limits.iter().enumerate() {
                match i {
                    2 => wk.retarget(u),
                    4 => wk.retarget(t),
                    _ => {}
                }
                wk.shuffle(&mut rng);
                wk.set_limit(wk.nodes() + l);
                let fin = wk.walk_first(stop);
                let cands: Vec<u32> = wk.deepest_at().iter().map(|&e| wk.cand(e)).collect();
                let board: Vec<u32> =
                    if wk.found() { wk.at().iter().map(|&e| wk.cand(e)).collect() } else { Vec::new() };
                out.push(format!("{fin} {} {} {} {cands:?} {board:?}", wk.nodes(), wk.deepest(), wk.found()));
                if wk.found() || fin {
                    break;
                }
            }
            out
        }
        let stop = AtomicBool::new(false);
        let tu = (t, u);
        let old = go(Walker::new(t), tu, seed, limits, &stop);
        let new = match t.cells.div_ceil(64) {
            1 => go(FastWalker::<1>::new(t), tu, seed, limits, &stop),
            2 => go(FastWalker::<2>::new(t), tu, seed, limits, &stop),
            3 => go(FastWalker::<3>::new(t), tu, seed, limits, &stop),
            _ => go(FastWalker::<4>::new(t), tu, seed, limits, &stop),
        };
        assert_eq!(old, new, "seed {seed}");
        assert!(!old.is_empty());
    }

    #[test]
    fn the_fast_walker_walks_as_the_table_walker() {
        let limits = [1_000, 5_000, 20_000, 3_000, 50_000];
        // The list lengths walked, so that each of `free`'s three paths (a block of 4, a
        // block of 8, the list's own length) is seen to be compared.
        let mut lengths = [false; 3];
        for (w, h) in [(2, 2), (3, 3), (4, 3), (5, 5), (6, 6), (7, 4), (8, 8), (9, 8), (12, 11), (16, 16)] {
            for seed in 0..4 {
                let (p, _) =
                    generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
                        .unwrap();
                let q = crate::search::scan::Orientation { mirror: true, turns: 0 }.puzzle(&p);
                for first in [None, super::super::tables::symmetry_piece(&p)] {
                    let (t, u) = (Tables::new(&p, first), Tables::new(&q, None));
                    for w in t.offsets.windows(2) {
                        let len = (w[1] - w[0]) as usize;
                        lengths[usize::from(len > 4) + usize::from(len > PAD)] |= len > 0;
                    }
                    let fits =
                        [FastWalker::<1>::fits, FastWalker::<2>::fits, FastWalker::<3>::fits, FastWalker::<4>::fits];
                    assert!(fits.iter().any(|f| f(&t) && f(&u)), "{w}x{h}: the fast walker does not apply");
                    same_walks(&t, &u, seed * 7 + 1, &limits);
                }
            }
        }
        assert_eq!(lengths, [true; 3], "lists of up to 4, up to {PAD} and more entries");
    }
}
