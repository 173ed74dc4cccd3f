//! Régin's filter for all-different (J.-C. Régin, "A filtering algorithm for constraints of
//! difference in CSPs", AAAI 1994): generalised arc consistency of "every cell takes a
//! different piece", through a maximum matching and the strongly connected components of its
//! residual graph.
//!
//! The variables are the cells, the values the pieces, an edge (cell, piece) a piece the cell
//! may still take (in some rotation). A value of a variable has a support in the all-different
//! exactly when some matching that covers every variable uses its edge (Berge: when the edge
//! is in the one maximum matching found, or on an even alternating cycle, or on an even
//! alternating path from a free value). With the matching's edges oriented variable → value and
//! the others value → variable, an edge off the matching is kept when its value is reachable
//! from a free value or its two ends share a strongly connected component (Tarjan 1972); every
//! other edge is removed. One call costs a matching (augmenting paths from the previous
//! matching, Kuhn's method) and one pass of Tarjan's algorithm: O(E √V) at worst for the first,
//! O(V + E) for the second.
//!
//! The value-removal all-different that [`super::Network`] applies (a placed piece leaves every
//! other domain) is the weakest form of the same constraint; this filter also sees Hall sets,
//! k cells that can only take the same k pieces. The brute-force oracle in the tests checks
//! every edge against "some covering matching uses it".

/// The all-different on pieces a search keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum AllDiff {
    /// A placed piece leaves every other domain (value removal).
    #[default]
    Values,
    /// Régin's filter after each propagation: generalised arc consistency on the pieces,
    /// Hall sets included, to a fixed point with the arc consistency.
    Regin,
}

/// The filter's scratch, made once and reused across calls (no allocation after the first
/// call of a size).
#[derive(Clone, Debug, Default)]
pub struct AllDifferent {
    /// The value matched to each variable (`NONE`: free).
    var_to: Vec<u32>,
    /// The variable matched to each value (`NONE`: free).
    val_to: Vec<u32>,
    seen: Vec<u32>,
    stamp: u32,
    stack: Vec<(u32, u32)>,
    // Tarjan's state over the vars (0..n) and values (n..n + m).
    index: Vec<u32>,
    low: Vec<u32>,
    comp: Vec<u32>,
    on_stack: Vec<bool>,
    scc_stack: Vec<u32>,
    call: Vec<(u32, u32)>,
    reach: Vec<bool>,
    queue: Vec<u32>,
    // The variables that hold each value: `hold[hold_off[v]..hold_off[v + 1]]`.
    hold_off: Vec<u32>,
    hold: Vec<u32>,
}

const NONE: u32 = u32::MAX;

/// What one call of [`AllDifferent::filter`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilterStats {
    /// Augmenting-path searches run to repair the matching.
    pub augmentations: u64,
    /// Edges looked at (matching and components).
    pub edges: u64,
}

impl AllDifferent {
    /// A filter with no scratch yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Filters `domains` (each variable's values, all below `values`) to generalised arc
    /// consistency: removes from each list every value no covering matching gives it. Returns
    /// false, leaving the domains as they were, when no matching covers every variable (the
    /// constraint cannot hold).
    pub fn filter(&mut self, domains: &mut [Vec<u32>], values: usize, stats: &mut FilterStats) -> bool {
        let n = domains.len();
        if n > values {
            return false;
        }
        self.var_to.resize(n, NONE);
        self.val_to.resize(values, NONE);
        // Keep the old matching where it still holds.
        for x in 0..n {
            let v = self.var_to[x];
            if v != NONE && (v as usize >= values || !domains[x].contains(&v) || self.val_to[v as usize] != x as u32) {
                self.var_to[x] = NONE;
            }
        }
        for v in 0..values {
            let x = self.val_to[v];
            if x != NONE && (x as usize >= n || self.var_to[x as usize] != v as u32) {
                self.val_to[v] = NONE;
            }
        }
        for x in 0..n {
            if self.var_to[x] == NONE && !self.augment(x, domains, stats) {
                return false;
            }
        }
        // Values reachable from a free value (value → variable off the matching, variable →
        // its matched value).
        let total = n + values;
        self.reach.clear();
        self.reach.resize(total, false);
        // Value → variables: the variables whose domains hold it (a reverse index).
        self.hold_off.clear();
        self.hold_off.resize(values + 1, 0);
        for d in domains.iter() {
            for &v in d {
                self.hold_off[v as usize + 1] += 1;
            }
        }
        for v in 0..values {
            self.hold_off[v + 1] += self.hold_off[v];
        }
        self.hold.clear();
        self.hold.resize(self.hold_off[values] as usize, 0);
        self.queue.clear();
        self.queue.extend_from_slice(&self.hold_off[..values]);
        for (x, d) in domains.iter().enumerate() {
            for &v in d {
                let at = &mut self.queue[v as usize];
                self.hold[*at as usize] = x as u32;
                *at += 1;
            }
        }
        self.queue.clear();
        for v in 0..values {
            if self.val_to[v] == NONE {
                self.reach[n + v] = true;
                self.queue.push((n + v) as u32);
            }
        }
        while let Some(u) = self.queue.pop() {
            let u = u as usize;
            if u < n {
                let v = self.var_to[u] as usize;
                if !self.reach[n + v] {
                    self.reach[n + v] = true;
                    self.queue.push((n + v) as u32);
                }
            } else {
                let (a, b) = (self.hold_off[u - n] as usize, self.hold_off[u - n + 1] as usize);
                for k in a..b {
                    let x = self.hold[k];
                    stats.edges += 1;
                    if self.var_to[x as usize] != (u - n) as u32 && !self.reach[x as usize] {
                        self.reach[x as usize] = true;
                        self.queue.push(x);
                    }
                }
            }
        }
        self.components(n, values, stats);
        for (x, d) in domains.iter_mut().enumerate() {
            let mine = self.var_to[x];
            let (reach, comp) = (&self.reach, &self.comp);
            d.retain(|&v| v == mine || reach[n + v as usize] || comp[x] == comp[n + v as usize]);
        }
        true
    }

    /// An augmenting path from the free variable `x` (depth first, iterative), flipping the
    /// matching along it when found.
    fn augment(&mut self, x: usize, domains: &[Vec<u32>], stats: &mut FilterStats) -> bool {
        stats.augmentations += 1;
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
        self.seen.resize(domains.len(), 0);
        self.stack.clear();
        self.stack.push((x as u32, 0));
        self.seen[x] = self.stamp;
        while let Some(&mut (y, ref mut i)) = self.stack.last_mut() {
            let d = &domains[y as usize];
            if (*i as usize) == d.len() {
                self.stack.pop();
                continue;
            }
            let v = d[*i as usize];
            *i += 1;
            stats.edges += 1;
            let owner = self.val_to[v as usize];
            if owner == NONE {
                // Flip the path: each variable on the stack takes the value it went through.
                let mut v = v;
                while let Some((y, _)) = self.stack.pop() {
                    let old = self.var_to[y as usize];
                    self.var_to[y as usize] = v;
                    self.val_to[v as usize] = y;
                    v = old;
                }
                return true;
            }
            if self.seen[owner as usize] != self.stamp {
                self.seen[owner as usize] = self.stamp;
                self.stack.push((owner, 0));
            }
        }
        false
    }

    /// Tarjan's strongly connected components of the residual graph: variable → its matched
    /// value, value → the variables that hold it off the matching. `comp` numbers them.
    fn components(&mut self, n: usize, values: usize, stats: &mut FilterStats) {
        let total = n + values;
        self.index.clear();
        self.index.resize(total, NONE);
        self.low.clear();
        self.low.resize(total, 0);
        self.comp.clear();
        self.comp.resize(total, NONE);
        self.on_stack.clear();
        self.on_stack.resize(total, false);
        self.scc_stack.clear();
        let mut next = 0u32;
        let mut comps = 0u32;
        for root in 0..total {
            if self.index[root] != NONE {
                continue;
            }
            self.call.clear();
            self.call.push((root as u32, 0));
            self.index[root] = next;
            self.low[root] = next;
            next += 1;
            self.scc_stack.push(root as u32);
            self.on_stack[root] = true;
            while let Some(&(u, i)) = self.call.last() {
                let u = u as usize;
                // The next successor at position i or after (a value's holders, its own variable
                // skipped).
                let (w, step) = match self.nth_succ(u, i as usize, n) {
                    Some(p) => p,
                    None => {
                        self.call.pop();
                        if let Some(&(parent, _)) = self.call.last() {
                            let p = parent as usize;
                            self.low[p] = self.low[p].min(self.low[u]);
                        }
                        if self.low[u] == self.index[u] {
                            loop {
                                let w = self.scc_stack.pop().expect("u is on the stack") as usize;
                                self.on_stack[w] = false;
                                self.comp[w] = comps;
                                if w == u {
                                    break;
                                }
                            }
                            comps += 1;
                        }
                        continue;
                    }
                };
                stats.edges += 1;
                if let Some(top) = self.call.last_mut() {
                    top.1 = (step + 1) as u32;
                }
                if self.index[w] == NONE {
                    self.index[w] = next;
                    self.low[w] = next;
                    next += 1;
                    self.scc_stack.push(w as u32);
                    self.on_stack[w] = true;
                    self.call.push((w as u32, 0));
                } else if self.on_stack[w] {
                    self.low[u] = self.low[u].min(self.index[w]);
                }
            }
        }
    }

    /// The first successor of `u` at position `i` or after, and its position.
    fn nth_succ(&self, u: usize, i: usize, n: usize) -> Option<(usize, usize)> {
        if u < n {
            let v = self.var_to[u];
            return (i == 0 && v != NONE).then_some((n + v as usize, 0));
        }
        let h = &self.hold[self.hold_off[u - n] as usize..self.hold_off[u - n + 1] as usize];
        let mine = self.val_to[u - n];
        (i..h.len()).find(|&j| h[j] != mine).map(|j| (h[j] as usize, j))
    }

    /// The matching of the last call: the value of each variable.
    pub fn matching(&self) -> &[u32] {
        &self.var_to
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// The size of a maximum matching, by trying every value for each variable in turn.
    fn max_matching(domains: &[Vec<u32>], used: &mut Vec<bool>, x: usize) -> usize {
        if x == domains.len() {
            return 0;
        }
        let mut best = max_matching(domains, used, x + 1);
        for &v in &domains[x] {
            if !used[v as usize] {
                used[v as usize] = true;
                best = best.max(1 + max_matching(domains, used, x + 1));
                used[v as usize] = false;
                if best == domains.len() - x {
                    break;
                }
            }
        }
        best
    }

    /// Whether some matching covering every variable gives `x` the value `v`.
    fn supported(domains: &[Vec<u32>], values: usize, x: usize, v: u32) -> bool {
        let mut forced = domains.to_vec();
        forced[x] = vec![v];
        max_matching(&forced, &mut vec![false; values], 0) == domains.len()
    }

    #[test]
    fn the_filter_keeps_exactly_the_supported_values() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut filter = AllDifferent::new();
        let (mut feasible, mut removed) = (0, 0);
        for case in 0..1500 {
            let n = rng.random_range(1..=7usize);
            let values = n + rng.random_range(0..=2usize);
            let density = rng.random_range(0.15..0.8);
            let domains: Vec<Vec<u32>> =
                (0..n).map(|_| (0..values as u32).filter(|_| rng.random_bool(density)).collect()).collect();
            let covering = max_matching(&domains, &mut vec![false; values], 0) == n;
            let mut got = domains.clone();
            let mut stats = FilterStats::default();
            // Every other case reuses the scratch (and the matching) of the case before.
            if case % 2 == 0 {
                filter = AllDifferent::new();
            }
            let ok = filter.filter(&mut got, values, &mut stats);
            assert_eq!(ok, covering, "case {case}: {domains:?}");
            if !ok {
                assert_eq!(got, domains, "a refused call leaves the domains");
                continue;
            }
            feasible += 1;
            for x in 0..n {
                let want: Vec<u32> =
                    domains[x].iter().copied().filter(|&v| supported(&domains, values, x, v)).collect();
                assert_eq!(got[x], want, "case {case}, variable {x}: {domains:?}");
                removed += domains[x].len() - want.len();
            }
            let m = filter.matching();
            let mut seen = vec![false; values];
            for x in 0..n {
                assert!(got[x].contains(&m[x]) && !std::mem::replace(&mut seen[m[x] as usize], true));
            }
        }
        assert!(feasible > 300 && removed > 300, "{feasible} feasible cases, {removed} values removed");
    }

    #[test]
    fn a_hall_set_is_seen() {
        // Cells 0 and 1 can only take pieces 0 and 1, so cell 2 cannot take either.
        let mut d = vec![vec![0, 1], vec![0, 1], vec![0, 1, 2]];
        assert!(AllDifferent::new().filter(&mut d, 3, &mut FilterStats::default()));
        assert_eq!(d[2], vec![2]);
        let mut d = vec![vec![0], vec![0], vec![1]];
        assert!(!AllDifferent::new().filter(&mut d, 2, &mut FilterStats::default()));
    }
}

/// Régin's filter applied to a [`super::Network`]'s domains: a cell's values are the pieces
/// among its candidates left, and every candidate whose piece the filter removes leaves the
/// cell's domain.
#[derive(Clone, Debug, Default)]
pub struct PieceFilter {
    filter: AllDifferent,
    pieces: Vec<Vec<u32>>,
    members: Vec<u32>,
    /// What the filter did, summed over the calls.
    pub stats: FilterStats,
    /// Candidates it removed, summed over the calls.
    pub removed: u64,
}

impl PieceFilter {
    /// A filter with no scratch yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Filters the domains `d` of `net` to generalised arc consistency on the all-different
    /// of pieces. Cells whose domain shrank are appended to `changed`. Returns false when no
    /// assignment of distinct pieces covers every cell (the domains are then left as they
    /// were) or a domain empties.
    pub fn run(&mut self, net: &super::Network, d: &mut [u64], changed: &mut Vec<u32>) -> bool {
        let n = net.cells();
        self.pieces.resize_with(n, Vec::new);
        for c in 0..n {
            self.members.clear();
            net.members(d, c, &mut self.members);
            let list = &mut self.pieces[c];
            list.clear();
            let cands = net.candidates().of(c);
            // Candidates are ordered by piece, so equal pieces are neighbours.
            for &j in &self.members {
                let p = u32::from(cands[j as usize].piece);
                if list.last() != Some(&p) {
                    list.push(p);
                }
            }
        }
        if !self.filter.filter(&mut self.pieces, n, &mut self.stats) {
            return false;
        }
        for c in 0..n {
            let cands = net.candidates().of(c);
            let keep = &self.pieces[c];
            let r = net.words(c);
            let mut shrank = false;
            for (i, w) in d[r].iter_mut().enumerate() {
                let mut bits = *w;
                while bits != 0 {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let p = u32::from(cands[i * 64 + b].piece);
                    if keep.binary_search(&p).is_err() {
                        *w &= !(1u64 << b);
                        shrank = true;
                        self.removed += 1;
                    }
                }
            }
            if shrank {
                changed.push(c as u32);
                if net.size(d, c) == 0 {
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod network_tests {
    use super::*;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use crate::puzzle::{Board, Placement};
    use crate::verify::{Consistency, Network, Propagator};

    /// Every solution of a 3x3 (all its frame-legal boards, checked exactly).
    fn solutions(p: &crate::puzzle::Puzzle) -> Vec<Board> {
        let cands = p.candidates();
        let mut out = Vec::new();
        let mut cells = vec![Placement::default(); 9];
        let mut used = [false; 9];
        fn walk(
            p: &crate::puzzle::Puzzle,
            cands: &crate::puzzle::Candidates,
            c: usize,
            cells: &mut Vec<Placement>,
            used: &mut [bool; 9],
            out: &mut Vec<Board>,
        ) {
            if c == 9 {
                let b = Board { width: 3, height: 3, cells: cells.clone() };
                if crate::verify::check(p, &b).valid {
                    out.push(b);
                }
                return;
            }
            for &pl in cands.of(c) {
                if !used[pl.piece as usize] {
                    used[pl.piece as usize] = true;
                    cells[c] = pl;
                    walk(p, cands, c + 1, cells, used, out);
                    used[pl.piece as usize] = false;
                }
            }
        }
        walk(p, &cands, 0, &mut cells, &mut used, &mut out);
        out
    }

    /// The filter never removes a candidate that some solution uses, alone or after arc
    /// consistency, from the root and after one placement.
    #[test]
    fn the_piece_filter_keeps_every_candidate_a_solution_uses() {
        let mut checked = 0;
        for seed in 0..40 {
            let opts = GenerateOptions { width: 3, height: 3, frame_colors: Some(2), inner_colors: Some(2), seed };
            let Ok((p, _)) = generate(&opts) else { continue };
            let sols = solutions(&p);
            let net = Network::new(&p);
            let cands = p.candidates();
            for fixed in [None, Some(0usize)] {
                let mut d = net.full_domains();
                let mut changed = Vec::new();
                if let Some(j) = fixed {
                    net.place(&mut d, 4, j.min(cands.len(4) - 1), &mut changed);
                }
                let placed = fixed.map(|j| cands.of(4)[j.min(cands.len(4) - 1)]);
                let alive: Vec<&Board> = sols.iter().filter(|b| placed.is_none_or(|pl| b.cells[4] == pl)).collect();
                for with_ac in [false, true] {
                    let mut dd = d.clone();
                    let mut prop = Propagator::new(&net);
                    let ok_ac = !with_ac || prop.propagate_all(&net, &mut dd, Consistency::Ac3);
                    let mut f = PieceFilter::new();
                    let ok = ok_ac && f.run(&net, &mut dd, &mut Vec::new());
                    if alive.is_empty() {
                        continue;
                    }
                    assert!(ok, "seed {seed}: refused though {} solutions remain", alive.len());
                    for b in &alive {
                        for c in 0..9 {
                            let j = cands.of(c).iter().position(|&pl| pl == b.cells[c]).unwrap();
                            assert!(net.contains(&dd, c, j), "seed {seed}: cell {c} lost a candidate a solution uses");
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 20, "only {checked} positions checked");
    }
}
