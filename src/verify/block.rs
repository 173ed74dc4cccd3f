//! Block consistency on colours (`--blocks`): the maintained form of the partial path
//! consistency ([`super::pc`]), cheap enough to keep after every placement.
//!
//! A 2x2 block of cells (top-left, top-right, bottom-right, bottom-left) is a cycle of four
//! joins. Each cell's domain restricts the pair of colours on its two joins in the block; a
//! candidate survives only when the other three cells' domains can colour the block's other
//! joins around it: going round the cycle, the pair it shows is in the composition of the
//! other three cells' colour relations. This is generalised arc consistency on the block's
//! four joins with the pieces' distinctness relaxed (sound: a candidate it removes has no
//! completion of the block, so none of the board), the domain-level projection of the
//! 2x2-block partial path consistency: where [`super::pc`] keeps relations between cells and
//! costs cells x candidates² bits, this keeps only the domains, like arc consistency, and a
//! block costs the candidates of its four cells plus eight compositions of colour relations
//! (colours² bits each). Debruyne & Bessière (1997, "Some practicable filtering techniques
//! for the constraint satisfaction problem", IJCAI) name this family: domain filtering
//! consistencies between arc and path consistency, kept during search because they remove
//! values only and need no relation state to undo.
//!
//! [`BlockFilter::run`] revises blocks from a worklist to a fixed point of its own (the search
//! then propagates arc consistency and calls it again until neither removes). Between calls
//! it keeps the domains of its last fixed point: a block whose four cells still hold them is
//! consistent and is skipped, so a node revises only the blocks around what changed since
//! (after a backtrack, what differs from the deeper node's domains). The slow twin in the
//! tests enumerates every colouring of each block.

use super::Network;
use crate::puzzle::{DOWN, LEFT, RIGHT, UP};

/// What block passes did (work counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BlockStats {
    /// Blocks revised.
    pub blocks: u64,
    /// Candidates tested against a composed relation.
    pub tests: u64,
    /// Candidates removed.
    pub removed: u64,
}

/// The block filter's relations and scratch (flat, reused from call to call).
pub struct BlockFilter {
    colors: usize,
    /// Words of a row of a colour relation.
    cw: usize,
    /// The four colour relations of a block, then two compositions: each `colors` rows of `cw`
    /// words.
    rel: Vec<u64>,
    /// The top-left cells of the blocks, and each cell's blocks (indices into `blocks`).
    blocks: Vec<u32>,
    of_cell: Vec<Vec<u32>>,
    /// The worklist of blocks to revise.
    queue: Vec<u32>,
    queued: Vec<bool>,
    /// The domains at the end of the last call that reached its fixed point (`seen_valid`): a
    /// block whose four cells still hold these domains is consistent and is not revised.
    seen: Vec<u64>,
    seen_valid: bool,
    /// Its work so far.
    pub stats: BlockStats,
}

/// A block's cells in cycle order, and each cell's two joins in that order: the side into the
/// previous cell of the cycle, then the side into the next.
const CYCLE: [(usize, usize); 4] = [(DOWN, RIGHT), (LEFT, DOWN), (UP, LEFT), (RIGHT, UP)];

impl BlockFilter {
    /// The filter for `net`'s board (no blocks on a board one cell wide or high).
    pub fn new(net: &Network) -> Self {
        let (w, n) = (net.width(), net.cells());
        let h = n / w;
        let colors = net.colors();
        let cw = colors.div_ceil(64);
        let blocks: Vec<u32> = (0..n).filter(|&c| c % w + 1 < w && c / w + 1 < h).map(|c| c as u32).collect();
        let mut of_cell = vec![Vec::new(); n];
        for (b, &tl) in blocks.iter().enumerate() {
            for c in Self::cells(net, tl as usize) {
                of_cell[c].push(b as u32);
            }
        }
        BlockFilter {
            colors,
            cw,
            rel: vec![0; 6 * colors * cw],
            queued: vec![false; blocks.len()],
            queue: Vec::with_capacity(blocks.len()),
            blocks,
            of_cell,
            seen: vec![0; net.total_words()],
            seen_valid: false,
            stats: BlockStats::default(),
        }
    }

    fn enqueue_blocks_of(&mut self, c: usize) {
        for &b in &self.of_cell[c] {
            if !self.queued[b as usize] {
                self.queued[b as usize] = true;
                self.queue.push(b);
            }
        }
    }

    /// The cells of the block whose top-left is `tl`, in cycle order.
    fn cells(net: &Network, tl: usize) -> [usize; 4] {
        let w = net.width();
        [tl, tl + 1, tl + w + 1, tl + w]
    }

    /// Revises blocks to a fixed point: first those with a cell whose domain differs from the
    /// last fixed point's (every block on the first call, or after a wipe-out), then, as
    /// cells shrink, their blocks again. False on a wipe-out. The cells whose domain shrank
    /// are appended to `changed`.
    pub fn run(&mut self, net: &Network, d: &mut [u64], changed: &mut Vec<u32>) -> bool {
        for c in 0..net.cells() {
            let r = net.words(c);
            if !self.seen_valid || d[r.clone()] != self.seen[r] {
                self.enqueue_blocks_of(c);
            }
        }
        self.seen_valid = false;
        while let Some(b) = self.queue.pop() {
            self.queued[b as usize] = false;
            let from = changed.len();
            if !self.revise(net, d, self.blocks[b as usize] as usize, changed) {
                for q in self.queue.drain(..) {
                    self.queued[q as usize] = false;
                }
                return false;
            }
            for i in from..changed.len() {
                self.enqueue_blocks_of(changed[i] as usize);
            }
        }
        self.seen.copy_from_slice(d);
        self.seen_valid = true;
        true
    }

    /// Revises one block: each cell keeps the candidates whose colour pair the other three
    /// close. False on a wipe-out.
    fn revise(&mut self, net: &Network, d: &mut [u64], tl: usize, changed: &mut Vec<u32>) -> bool {
        self.stats.blocks += 1;
        let (k, cw) = (self.colors, self.cw);
        let m = k * cw;
        let cells = Self::cells(net, tl);
        // rel[i]: cell i's relation from the colour on its join with cell i-1 to the colour on
        // its join with cell i+1.
        self.rel[..4 * m].fill(0);
        for (i, &c) in cells.iter().enumerate() {
            let (into_prev, into_next) = CYCLE[i];
            let cols = net.candidates().colors_of(c);
            let r = &mut self.rel[i * m..(i + 1) * m];
            for_members(&d[net.words(c)], |j| {
                let q = cols[j];
                let (a, b) = (q[into_prev] as usize, q[into_next] as usize);
                r[a * cw + b / 64] |= 1 << (b % 64);
            });
        }
        for (i, &c) in cells.iter().enumerate() {
            // The path round the other three: from cell i's next join to its previous join.
            let (n1, n2, n3) = ((i + 1) % 4, (i + 2) % 4, (i + 3) % 4);
            let (rel, scratch) = self.rel.split_at_mut(4 * m);
            let (first, second) = scratch.split_at_mut(m);
            compose(&rel[n1 * m..(n1 + 1) * m], &rel[n2 * m..(n2 + 1) * m], first, k, cw);
            compose(first, &rel[n3 * m..(n3 + 1) * m], second, k, cw);
            // Cell i shows (prev, next); it needs `prev` reachable from `next` round the path.
            let (into_prev, into_next) = CYCLE[i];
            let cols = net.candidates().colors_of(c);
            let words = net.words(c);
            let mut removed = 0;
            for (wi, word) in d[words.clone()].iter_mut().enumerate() {
                let mut bits = *word;
                while bits != 0 {
                    let j = wi * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    self.stats.tests += 1;
                    let q = cols[j];
                    let (a, b) = (q[into_prev] as usize, q[into_next] as usize);
                    if second[b * cw + a / 64] >> (a % 64) & 1 == 0 {
                        *word &= !(1 << (j % 64));
                        removed += 1;
                    }
                }
            }
            if removed > 0 {
                self.stats.removed += removed;
                changed.push(c as u32);
                if d[words].iter().all(|&w| w == 0) {
                    return false;
                }
                // Cell i's relation shrank: the later cells compose with the smaller one.
                let r = &mut self.rel[i * m..(i + 1) * m];
                r.fill(0);
                for_members(&d[net.words(c)], |j| {
                    let q = cols[j];
                    let (a, b) = (q[into_prev] as usize, q[into_next] as usize);
                    r[a * cw + b / 64] |= 1 << (b % 64);
                });
            }
        }
        true
    }
}

/// Calls `f` with each candidate index whose bit is set in `words`.
#[inline]
fn for_members(words: &[u64], mut f: impl FnMut(usize)) {
    for (i, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            f(i * 64 + w.trailing_zeros() as usize);
            w &= w - 1;
        }
    }
}

/// `out = r ∘ s` over `k` colours: row `a` of `out` is the union of the rows `b` of `s` for
/// the colours `b` in row `a` of `r`.
fn compose(r: &[u64], s: &[u64], out: &mut [u64], k: usize, cw: usize) {
    out.fill(0);
    for a in 0..k {
        let row = &r[a * cw..(a + 1) * cw];
        for (wi, &word) in row.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = wi * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                for x in 0..cw {
                    out[a * cw + x] |= s[b * cw + x];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use rand::{RngExt, SeedableRng};

    /// The slow twin: a candidate of a block's cell survives a block when some candidate of
    /// each other cell in the current domains matches all four joins (pieces may repeat).
    fn extends(net: &Network, d: &[u64], cells: [usize; 4], i: usize, j: usize) -> bool {
        let members = |c: usize| {
            let mut out = Vec::new();
            net.members(d, c, &mut out);
            out
        };
        let cols = |c: usize, j: u32| net.candidates().colors_of(c)[j as usize];
        let [tl, tr, br, bl] = cells;
        let pick = |c: usize, cand: u32| if c == cells[i] { cand == j as u32 } else { true };
        for &a in &members(tl) {
            if !pick(tl, a) {
                continue;
            }
            for &b in &members(tr) {
                if !pick(tr, b) || cols(tl, a)[RIGHT] != cols(tr, b)[LEFT] {
                    continue;
                }
                for &c in &members(br) {
                    if !pick(br, c) || cols(tr, b)[DOWN] != cols(br, c)[UP] {
                        continue;
                    }
                    for &e in &members(bl) {
                        if pick(bl, e)
                            && cols(br, c)[LEFT] == cols(bl, e)[RIGHT]
                            && cols(bl, e)[UP] == cols(tl, a)[DOWN]
                        {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// The slow closure: sweeps every block and candidate by enumeration until nothing goes.
    fn slow_closure(net: &Network, d: &mut [u64]) -> bool {
        let w = net.width();
        let h = net.cells() / w;
        loop {
            let mut any = false;
            for tl in (0..net.cells()).filter(|&c| c % w + 1 < w && c / w + 1 < h) {
                let cells = [tl, tl + 1, tl + w + 1, tl + w];
                for i in 0..4 {
                    let mut m = Vec::new();
                    net.members(d, cells[i], &mut m);
                    for j in m {
                        if !extends(net, d, cells, i, j as usize) {
                            let at = net.words(cells[i]).start + j as usize / 64;
                            d[at] &= !(1 << (j % 64));
                            any = true;
                        }
                    }
                    if net.size(d, cells[i]) == 0 {
                        return false;
                    }
                }
            }
            if !any {
                return true;
            }
        }
    }

    /// On random domains of generated puzzles (3x3 to 5x4, few colours, so that blocks bite),
    /// the filter reaches the slow closure's fixed point exactly, and keeps every solution.
    #[test]
    fn the_filter_is_the_slow_closure_and_keeps_solutions() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let (mut removing, mut made) = (0, 0);
        for seed in 0..60u64 {
            let (w, h) = [(3, 3), (4, 3), (4, 4), (5, 4)][seed as usize % 4];
            let colors = Some(2 + seed as usize % 3);
            let opts = GenerateOptions { width: w, height: h, frame_colors: colors, inner_colors: colors, seed };
            let Ok((p, sol)) = generate(&opts) else { continue };
            made += 1;
            let net = Network::new(&p);
            let mut d = net.full_domains();
            // Drop a random third of the candidates, never the solution's.
            let cands = p.candidates();
            for c in 0..net.cells() {
                for (j, pl) in cands.of(c).iter().enumerate() {
                    if *pl != sol.cells[c] && rng.random_bool(0.33) {
                        d[net.words(c).start + j / 64] &= !(1 << (j % 64));
                    }
                }
            }
            let mut slow = d.clone();
            let slow_ok = slow_closure(&net, &mut slow);
            let mut fast = d.clone();
            let mut f = BlockFilter::new(&net);
            let fast_ok = f.run(&net, &mut fast, &mut Vec::new());
            assert_eq!(fast_ok, slow_ok, "seed {seed}");
            assert!(fast_ok, "seed {seed}: the solution's candidates were kept, so no wipe-out");
            assert_eq!(fast, slow, "seed {seed}: not the slow closure");
            for c in 0..net.cells() {
                let j = cands.of(c).iter().position(|pl| *pl == sol.cells[c]).unwrap();
                assert!(net.contains(&fast, c, j), "seed {seed}: the solution's candidate at {c} removed");
            }
            removing += usize::from(f.stats.removed > 0);
            // The same filter again, as a search calls it: on fewer candidates (a placement's
            // removals), then back on the first domains (a backtrack), each time the closure.
            let mut deeper = fast.clone();
            for c in 0..net.cells() {
                for (j, pl) in cands.of(c).iter().enumerate() {
                    if *pl != sol.cells[c] && rng.random_bool(0.2) {
                        deeper[net.words(c).start + j / 64] &= !(1 << (j % 64));
                    }
                }
            }
            for start in [deeper, d.clone()] {
                let mut slow = start.clone();
                assert!(slow_closure(&net, &mut slow));
                let mut again = start;
                assert!(f.run(&net, &mut again, &mut Vec::new()), "seed {seed}");
                assert_eq!(again, slow, "seed {seed}: the filter's next call is not the closure");
            }
        }
        assert!(made >= 40, "only {made} of 60 puzzles generated");
        assert!(removing >= 20, "only {removing} of {made} cases removed anything: the test does not bite");
    }
}
