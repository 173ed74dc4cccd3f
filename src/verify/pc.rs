//! Partial path consistency on the grid (`count --pc`), the rung above singleton arc
//! consistency: pairs of candidates on two cells are removed when a third cell offers no
//! candidate that fits both.
//!
//! Full path consistency (Montanari 1974; Mackworth's PC-2, 1977) constrains every pair of
//! cells, and the all-different on pieces ties every pair, so on a board its relations would
//! number cells² and cost cells³ a sweep: out of reach past a few cells. The form here is
//! Bliek & Sam-Haroud's partial path consistency (PPC, AAAI 1999): path consistency on the
//! triangles of a triangulated constraint graph. The graph is the grid's joins plus the
//! diagonal from each 2x2 block's top-left cell to its bottom-right one; each block gives two
//! triangles (top-left, top-right, bottom-right) and (top-left, bottom-left, bottom-right).
//! A join's relation starts as the candidate pairs that match there on different pieces, a
//! diagonal's as the pairs on different pieces. A pair (x, z) survives when every triangle
//! (x, y, z) holds a candidate of y that forms an allowed pair with both; a candidate survives
//! when it has a partner in every relation of its cell. On the 2x2 block this is the
//! community's "partial path consistency": two diagonal cells keep a pair only when the block
//! can be completed around it.
//!
//! The algorithm is PC-2's worklist on the triangles: a relation that loses pairs queues
//! itself, and each queued relation revises the other two of each of its triangles
//! (`R(x, z) &= R(x, y) ∘ R(y, z)`, composed row by row over bitsets). Removing a candidate
//! clears its rows and columns and queues its relations. Each relation is kept in both
//! directions, rows of one cell's candidates over bitsets of the other's. It is a
//! preprocessing pass; its memory is a relation's bits per join and diagonal
//! ([`PathConsistency::bytes`]).
//!
//! The slow twin is in the tests: the same closure by sets and sweeps.

use super::Network;
use crate::puzzle::opposite;

/// What a path-consistency pass did (its work counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PcStats {
    /// Relations revised through a triangle (one `R(x, z) &= R(x, y) ∘ R(y, z)`).
    pub revisions: u64,
    /// Support checks: rows of `R(y, z)` ORed into a composition.
    pub checks: u64,
    /// Candidate pairs removed from the relations.
    pub pairs_removed: u64,
    /// Candidates removed from the domains.
    pub removed: u64,
}

/// The relations of the triangulated grid and their closure.
pub struct PathConsistency {
    /// The cells of each relation (a < b).
    pairs: Vec<(u32, u32)>,
    /// Per relation: where its rows from `a` (|cand a| rows of `wb` words) and from `b` start.
    off: Vec<(usize, usize)>,
    bits: Vec<u64>,
    /// Per cell: (other cell, relation, whether the cell is its `a`).
    adj: Vec<Vec<(u32, u32, bool)>>,
    /// Per relation: the third cell of each of its triangles.
    thirds: Vec<Vec<u32>>,
    /// Candidates of each cell, and words of a row over them.
    len: Vec<usize>,
    words: Vec<usize>,
}

impl PathConsistency {
    /// The relation pairs and triangles of `net`'s board.
    fn graph(net: &Network) -> (Vec<(u32, u32)>, Vec<[u32; 3]>) {
        let (w, n) = (net.width(), net.cells());
        let h = n / w;
        let mut pairs = Vec::new();
        let mut tris = Vec::new();
        for c in 0..n {
            let (r, col) = (c / w, c % w);
            if col + 1 < w {
                pairs.push((c as u32, c as u32 + 1));
            }
            if r + 1 < h {
                pairs.push((c as u32, (c + w) as u32));
            }
            if col + 1 < w && r + 1 < h {
                pairs.push((c as u32, (c + w + 1) as u32));
                let (a, b, cc, d) = (c as u32, c as u32 + 1, (c + w) as u32, (c + w + 1) as u32);
                tris.push([a, b, d]);
                tris.push([a, cc, d]);
            }
        }
        (pairs, tris)
    }

    /// Bytes the relations of `net`'s board take.
    pub fn bytes(net: &Network) -> u64 {
        let (pairs, _) = Self::graph(net);
        let cands = net.candidates();
        let words = |c: u32| cands.len(c as usize).div_ceil(64).max(1) as u64;
        pairs
            .iter()
            .map(|&(a, b)| 8 * (cands.len(a as usize) as u64 * words(b) + cands.len(b as usize) as u64 * words(a)))
            .sum()
    }

    /// The relations of `d`'s candidates: a join's pairs match there on different pieces, a
    /// diagonal's are on different pieces.
    pub fn new(net: &Network, d: &[u64]) -> Self {
        let n = net.cells();
        let cands = net.candidates();
        let (pairs, tris) = Self::graph(net);
        let len: Vec<usize> = (0..n).map(|c| cands.len(c)).collect();
        let words: Vec<usize> = len.iter().map(|l| l.div_ceil(64).max(1)).collect();
        let mut off = Vec::with_capacity(pairs.len());
        let mut total = 0;
        for &(a, b) in &pairs {
            let (a, b) = (a as usize, b as usize);
            let fwd = total;
            total += len[a] * words[b];
            off.push((fwd, total));
            total += len[b] * words[a];
        }
        let mut adj = vec![Vec::new(); n];
        for (p, &(a, b)) in pairs.iter().enumerate() {
            adj[a as usize].push((b, p as u32, true));
            adj[b as usize].push((a, p as u32, false));
        }
        let find = |x: u32, y: u32| adj[x as usize].iter().find(|e| e.0 == y).map(|e| e.1).expect("a relation");
        let mut thirds = vec![Vec::new(); pairs.len()];
        for t in &tris {
            for (i, j, k) in [(0, 1, 2), (0, 2, 1), (1, 2, 0)] {
                thirds[find(t[i], t[j]) as usize].push(t[k]);
            }
        }
        let mut pc = PathConsistency { pairs, off, bits: vec![0; total], adj, thirds, len, words };
        for p in 0..pc.pairs.len() {
            let (a, b) = (pc.pairs[p].0 as usize, pc.pairs[p].1 as usize);
            let side = (0..4).find(|&s| net.neighbour(a, s) == Some(b));
            for i in 0..pc.len[a] {
                if !net.contains(d, a, i) {
                    continue;
                }
                let (pi, ci) = (cands.of(a)[i].piece, cands.colors_of(a)[i]);
                for j in 0..pc.len[b] {
                    if !net.contains(d, b, j) || cands.of(b)[j].piece == pi {
                        continue;
                    }
                    if let Some(s) = side
                        && ci[s] != cands.colors_of(b)[j][opposite(s)]
                    {
                        continue;
                    }
                    pc.set(p, true, i, j);
                    pc.set(p, false, j, i);
                }
            }
        }
        pc
    }

    #[inline]
    fn row_range(&self, p: usize, from_a: bool, i: usize) -> std::ops::Range<usize> {
        let (a, b) = (self.pairs[p].0 as usize, self.pairs[p].1 as usize);
        let (start, w) = if from_a { (self.off[p].0, self.words[b]) } else { (self.off[p].1, self.words[a]) };
        start + i * w..start + (i + 1) * w
    }

    fn set(&mut self, p: usize, from_a: bool, i: usize, j: usize) {
        let r = self.row_range(p, from_a, i);
        self.bits[r.start + j / 64] |= 1 << (j % 64);
    }

    /// Whether candidate `i` of `x` and `j` of `y` form an allowed pair (`x`, `y` a relation).
    pub fn allowed(&self, x: usize, i: usize, y: usize, j: usize) -> bool {
        let Some(&(_, p, fwd)) = self.adj[x].iter().find(|e| e.0 as usize == y) else { return true };
        let r = self.row_range(p as usize, fwd, i);
        self.bits[r.start + j / 64] >> (j % 64) & 1 == 1
    }

    /// The relations' cell pairs (a < b).
    pub fn pairs(&self) -> &[(u32, u32)] {
        &self.pairs
    }

    /// Clears candidate `i` of cell `x` from every relation of `x` (its rows and, in the other
    /// direction, its column), queueing the relations that lost pairs.
    fn drop_value(&mut self, x: usize, i: usize, queue: &mut Vec<u32>, queued: &mut [bool], stats: &mut PcStats) {
        for e in 0..self.adj[x].len() {
            let (_, p, fwd) = self.adj[x][e];
            let r = self.row_range(p as usize, fwd, i);
            let mut lost = 0u64;
            for k in r.clone() {
                let mut w = std::mem::take(&mut self.bits[k]);
                lost += w.count_ones() as u64;
                while w != 0 {
                    let j = (k - r.start) * 64 + w.trailing_zeros() as usize;
                    w &= w - 1;
                    let back = self.row_range(p as usize, !fwd, j);
                    self.bits[back.start + i / 64] &= !(1 << (i % 64));
                }
            }
            if lost > 0 {
                stats.pairs_removed += lost;
                if !std::mem::replace(&mut queued[p as usize], true) {
                    queue.push(p);
                }
            }
        }
    }

    /// `R(x, z) &= R(x, y) ∘ R(y, z)` for the candidates of `x` in `d`; candidates of `x` or
    /// `z` left without a partner there leave `d` and are appended to `dead` as (cell,
    /// candidate). Returns whether `R(x, z)` changed.
    #[allow(clippy::too_many_arguments)]
    fn revise(
        &mut self,
        net: &Network,
        d: &mut [u64],
        (x, y, z): (usize, usize, usize),
        scratch: (&mut Vec<u64>, &mut Vec<u64>),
        dead: &mut Vec<(u32, u32)>,
        stats: &mut PcStats,
    ) -> bool {
        let edge = |s: &Self, u: usize, v: usize| *s.adj[u].iter().find(|e| e.0 as usize == v).expect("a relation");
        let (_, pxy, fxy) = edge(self, x, y);
        let (_, pyz, fyz) = edge(self, y, z);
        let (_, pxz, fxz) = edge(self, x, z);
        let (pxy, pyz, pxz) = (pxy as usize, pyz as usize, pxz as usize);
        stats.revisions += 1;
        let wz = self.words[z];
        let mut changed = false;
        // Candidates of z that lost a partner here, to check for an empty row after.
        let (scratch, hit) = scratch;
        hit.clear();
        hit.resize(wz, 0);
        for i in 0..self.len[x] {
            if !net.contains(d, x, i) {
                continue;
            }
            scratch.clear();
            scratch.resize(wz, 0);
            let rxy = self.row_range(pxy, fxy, i);
            for k in rxy.clone() {
                let mut w = self.bits[k];
                while w != 0 {
                    let j = (k - rxy.start) * 64 + w.trailing_zeros() as usize;
                    w &= w - 1;
                    stats.checks += 1;
                    let ryz = self.row_range(pyz, fyz, j);
                    for (s, &b) in scratch.iter_mut().zip(&self.bits[ryz]) {
                        *s |= b;
                    }
                }
            }
            let rxz = self.row_range(pxz, fxz, i);
            let mut empty = true;
            for (q, k) in rxz.clone().enumerate() {
                let keep = self.bits[k] & scratch[q];
                let mut gone = self.bits[k] & !keep;
                if gone != 0 {
                    changed = true;
                    stats.pairs_removed += gone.count_ones() as u64;
                    self.bits[k] = keep;
                    while gone != 0 {
                        let j = q * 64 + gone.trailing_zeros() as usize;
                        gone &= gone - 1;
                        hit[q] |= 1 << (j % 64);
                        let back = self.row_range(pxz, !fxz, j);
                        self.bits[back.start + i / 64] &= !(1 << (i % 64));
                    }
                }
                empty &= keep == 0;
            }
            if empty {
                d[net.words(x).start + i / 64] &= !(1 << (i % 64));
                stats.removed += 1;
                dead.push((x as u32, i as u32));
            }
        }
        for (q, &w) in hit.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let j = q * 64 + w.trailing_zeros() as usize;
                w &= w - 1;
                if net.contains(d, z, j) && self.bits[self.row_range(pxz, !fxz, j)].iter().all(|&b| b == 0) {
                    d[net.words(z).start + j / 64] &= !(1 << (j % 64));
                    stats.removed += 1;
                    dead.push((z as u32, j as u32));
                }
            }
        }
        changed
    }

    /// Closes the relations under the triangles' paths from every relation queued, removing
    /// from `d` every candidate left without a partner; false when a domain empties.
    pub fn close(&mut self, net: &Network, d: &mut [u64], stats: &mut PcStats) -> bool {
        let n = net.cells();
        let mut queued = vec![true; self.pairs.len()];
        let mut queue: Vec<u32> = (0..self.pairs.len() as u32).rev().collect();
        let (mut scratch, mut hit, mut dead) = (Vec::new(), Vec::new(), Vec::new());
        // Candidates with no partner in some relation from the start.
        for x in 0..n {
            for i in 0..self.len[x] {
                if net.contains(d, x, i)
                    && self.adj[x]
                        .iter()
                        .any(|&(_, p, f)| self.bits[self.row_range(p as usize, f, i)].iter().all(|&w| w == 0))
                {
                    d[net.words(x).start + i / 64] &= !(1 << (i % 64));
                    stats.removed += 1;
                    self.drop_value(x, i, &mut queue, &mut queued, stats);
                }
            }
            if net.size(d, x) == 0 {
                return false;
            }
        }
        while let Some(p) = queue.pop() {
            let p = p as usize;
            queued[p] = false;
            let (a, b) = (self.pairs[p].0 as usize, self.pairs[p].1 as usize);
            for t in 0..self.thirds[p].len() {
                let m = self.thirds[p][t] as usize;
                for (x, y) in [(a, b), (b, a)] {
                    dead.clear();
                    if self.revise(net, d, (x, y, m), (&mut scratch, &mut hit), &mut dead, stats) {
                        let (_, q, _) = *self.adj[x].iter().find(|e| e.0 as usize == m).expect("a relation");
                        if !std::mem::replace(&mut queued[q as usize], true) {
                            queue.push(q);
                        }
                    }
                    for k in 0..dead.len() {
                        let (c, i) = dead[k];
                        self.drop_value(c as usize, i as usize, &mut queue, &mut queued, stats);
                        if net.size(d, c as usize) == 0 {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }
}

/// Makes `d` partially path consistent on the triangulated grid (arc consistency on the
/// joins comes with it). Returns false when a domain empties (no solution).
pub fn pc(net: &Network, d: &mut [u64], stats: &mut PcStats) -> bool {
    PathConsistency::new(net, d).close(net, d, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use crate::puzzle::{Board, Placement, Puzzle};
    use std::collections::HashSet;

    /// Each cell's domain and each relation's pairs.
    type Closure = (Vec<HashSet<usize>>, Vec<HashSet<(usize, usize)>>);

    /// The slow twin: the same relations as sets of pairs, closed by sweeping every triangle
    /// in every direction, and every candidate without a partner in a relation removed, until
    /// a sweep changes nothing.
    fn closure_by_sets(net: &Network, p: &Puzzle) -> Closure {
        let cands = net.candidates();
        let (pairs, tris) = PathConsistency::graph(net);
        let n = net.cells();
        let mut dom: Vec<HashSet<usize>> = (0..n).map(|c| (0..cands.len(c)).collect()).collect();
        let compatible = |a: usize, i: usize, b: usize, j: usize| {
            if cands.of(a)[i].piece == cands.of(b)[j].piece {
                return false;
            }
            match (0..4).find(|&s| p.neighbour(a, s) == Some(b)) {
                Some(s) => cands.colors_of(a)[i][s] == cands.colors_of(b)[j][opposite(s)],
                None => true,
            }
        };
        let mut rel: Vec<HashSet<(usize, usize)>> = pairs
            .iter()
            .map(|&(a, b)| {
                let (a, b) = (a as usize, b as usize);
                let mut s = HashSet::new();
                for i in 0..cands.len(a) {
                    for j in 0..cands.len(b) {
                        if compatible(a, i, b, j) {
                            s.insert((i, j));
                        }
                    }
                }
                s
            })
            .collect();
        let idx = |x: usize, y: usize| {
            pairs.iter().position(|&(a, b)| (a as usize, b as usize) == (x.min(y), x.max(y))).expect("a relation")
        };
        let has = |rel: &Vec<HashSet<(usize, usize)>>, x: usize, i: usize, y: usize, j: usize| {
            let r = &rel[idx(x, y)];
            if x < y { r.contains(&(i, j)) } else { r.contains(&(j, i)) }
        };
        loop {
            let mut changed = false;
            for t in &tris {
                for (x, y, z) in [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)] {
                    let (x, y, z) = (t[x] as usize, t[y] as usize, t[z] as usize);
                    let gone: Vec<(usize, usize)> = rel[idx(x, z)]
                        .iter()
                        .map(|&(u, v)| if x < z { (u, v) } else { (v, u) })
                        .filter(|&(i, k)| !dom[y].iter().any(|&j| has(&rel, x, i, y, j) && has(&rel, y, j, z, k)))
                        .collect();
                    for (i, k) in gone {
                        rel[idx(x, z)].remove(&if x < z { (i, k) } else { (k, i) });
                        changed = true;
                    }
                }
            }
            for (r, &(a, b)) in pairs.iter().enumerate() {
                let (a, b) = (a as usize, b as usize);
                let lone_a: Vec<usize> =
                    dom[a].iter().copied().filter(|&i| !rel[r].iter().any(|&(u, _)| u == i)).collect();
                let lone_b: Vec<usize> =
                    dom[b].iter().copied().filter(|&j| !rel[r].iter().any(|&(_, v)| v == j)).collect();
                for i in lone_a {
                    dom[a].remove(&i);
                    changed = true;
                }
                for j in lone_b {
                    dom[b].remove(&j);
                    changed = true;
                }
            }
            for (r, &(a, b)) in pairs.iter().enumerate() {
                let (a, b) = (a as usize, b as usize);
                let before = rel[r].len();
                rel[r].retain(|&(i, j)| dom[a].contains(&i) && dom[b].contains(&j));
                changed |= rel[r].len() != before;
            }
            if !changed {
                return (dom, rel);
            }
        }
    }

    /// Every solution of `p` by brute force over the candidates.
    fn solutions(p: &Puzzle) -> Vec<Board> {
        fn go(p: &Puzzle, c: usize, used: &mut [bool], b: &mut Vec<Placement>, out: &mut Vec<Board>) {
            let w = p.width();
            if c == p.cells() {
                out.push(Board { width: w, height: p.height(), cells: b.clone() });
                return;
            }
            for &pl in p.candidates().of(c) {
                if used[pl.piece as usize]
                    || (!c.is_multiple_of(w)
                        && p.color(b[c - 1], crate::puzzle::RIGHT) != p.color(pl, crate::puzzle::LEFT))
                    || (c >= w && p.color(b[c - w], crate::puzzle::DOWN) != p.color(pl, crate::puzzle::UP))
                {
                    continue;
                }
                used[pl.piece as usize] = true;
                b.push(pl);
                go(p, c + 1, used, b, out);
                b.pop();
                used[pl.piece as usize] = false;
            }
        }
        let mut out = Vec::new();
        go(p, 0, &mut vec![false; p.pieces().len()], &mut Vec::new(), &mut out);
        out
    }

    /// The pass ends where the slow twin ends (the same domains, the same pairs), keeps every
    /// pair and candidate a solution uses, and removes more than arc consistency somewhere.
    #[test]
    fn the_closure_is_the_slow_twins_and_keeps_every_solution() {
        let (mut beyond_ac, mut tried, mut wiped) = (0, 0, 0);
        for (w, h, seed) in [(3, 3, 1), (4, 3, 2), (4, 4, 3), (4, 4, 4), (3, 4, 5), (4, 4, 6), (5, 3, 7), (4, 4, 8)] {
            let opts = GenerateOptions { width: w, height: h, frame_colors: Some(2), inner_colors: Some(3), seed };
            let Ok((p, _)) = generate(&opts) else { continue };
            tried += 1;
            let net = Network::new(&p);
            let cands = net.candidates();
            let mut d = net.full_domains();
            let mut stats = PcStats::default();
            let mut pc = PathConsistency::new(&net, &d);
            let ok = pc.close(&net, &mut d, &mut stats);
            let (dom, rel) = closure_by_sets(&net, &p);
            let sols = solutions(&p);
            if !ok {
                wiped += 1;
                assert!(dom.iter().any(|s| s.is_empty()), "{w}x{h} seed {seed}: a wipe-out the twin does not see");
                assert!(sols.is_empty());
                continue;
            }
            for c in 0..net.cells() {
                let mine: HashSet<usize> = (0..cands.len(c)).filter(|&j| net.contains(&d, c, j)).collect();
                assert_eq!(mine, dom[c], "{w}x{h} seed {seed}: cell {c}'s domain");
            }
            for (r, &(a, b)) in pc.pairs().iter().enumerate() {
                let (a, b) = (a as usize, b as usize);
                for i in 0..cands.len(a) {
                    for j in 0..cands.len(b) {
                        let mine = pc.allowed(a, i, b, j) && net.contains(&d, a, i) && net.contains(&d, b, j);
                        assert_eq!(mine, rel[r].contains(&(i, j)), "{w}x{h} seed {seed}: pair ({a} {i}, {b} {j})");
                        assert_eq!(pc.allowed(a, i, b, j), pc.allowed(b, j, a, i), "both directions agree");
                    }
                }
            }
            let index = |c: usize, pl: Placement| cands.of(c).iter().position(|&q| q == pl).expect("a candidate");
            for s in &sols {
                for &(a, b) in pc.pairs() {
                    let (a, b) = (a as usize, b as usize);
                    let (i, j) = (index(a, s.cells[a]), index(b, s.cells[b]));
                    assert!(net.contains(&d, a, i) && pc.allowed(a, i, b, j), "a solution's pair was removed");
                }
            }
            let mut ac = net.full_domains();
            let mut prop = super::super::Propagator::new(&net);
            prop.propagate_all(&net, &mut ac, super::super::Consistency::Ac3);
            let (sa, sp): (u32, u32) = (0..net.cells())
                .map(|c| (net.size(&ac, c), net.size(&d, c)))
                .fold((0, 0), |x, y| (x.0 + y.0, x.1 + y.1));
            assert!(sp <= sa, "at least as strong as arc consistency");
            beyond_ac += usize::from(sp < sa);
        }
        assert!(tried >= 6, "{tried} puzzles");
        assert!(beyond_ac + wiped >= 2, "path consistency removes more than arc consistency on some puzzles");
    }
}
