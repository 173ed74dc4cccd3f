//! The board of an ALNS run: a possibly partial board with its score and mismatch map
//! (per-cell mismatch counts bucketed by count, the mismatched joins, per-row and per-column
//! totals), all kept by every lift and place in O(1).

use super::super::hill::{Frame, NONE};
use crate::puzzle::{Piece, Placement};
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;

/// A set of small integers with O(1) insert, remove, membership and random access.
#[derive(Clone, Debug)]
pub(crate) struct IndexSet {
    items: Vec<u32>,
    pos: Vec<u32>,
}

impl IndexSet {
    fn new(universe: usize) -> Self {
        IndexSet { items: Vec::with_capacity(universe), pos: vec![NONE; universe] }
    }
    #[inline]
    fn insert(&mut self, x: u32) {
        if self.pos[x as usize] == NONE {
            self.pos[x as usize] = self.items.len() as u32;
            self.items.push(x);
        }
    }
    #[inline]
    fn remove(&mut self, x: u32) {
        let p = self.pos[x as usize];
        if p != NONE {
            let last = self.items.pop().unwrap_or(x);
            if last != x {
                self.items[p as usize] = last;
                self.pos[last as usize] = p;
            }
            self.pos[x as usize] = NONE;
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }
    #[inline]
    pub fn items(&self) -> &[u32] {
        &self.items
    }
    /// One step of a partial Fisher-Yates shuffle: moves a random item of `i..` to `i`, returns it.
    #[inline]
    pub(super) fn shuffle_step(&mut self, i: usize, rng: &mut Xoshiro256PlusPlus) -> u32 {
        let j = rng.random_range(i..self.items.len());
        self.items.swap(i, j);
        self.pos[self.items[i] as usize] = i as u32;
        self.pos[self.items[j] as usize] = j as u32;
        self.items[i]
    }
    fn clear(&mut self) {
        for &x in &self.items {
            self.pos[x as usize] = NONE;
        }
        self.items.clear();
    }
}

/// A possibly partial board with its score and mismatch map, all maintained incrementally.
/// A join counts (matched or mismatched) only when both of its cells are filled.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub cells: Vec<Placement>,
    pub col: Vec<Piece>,
    pub filled: Vec<bool>,
    /// Matched joins between filled cells.
    pub score: usize,
    /// Mismatched joins per cell.
    pub bad: Vec<u8>,
    /// Mismatched joins, by id: `2c` for the right join of cell c, `2c + 1` for its down join.
    pub bad_joins: IndexSet,
    /// `by_bad[b - 1]`: the cells with exactly b mismatched joins.
    pub by_bad: [IndexSet; 4],
    /// Sum of `bad` per row and per column.
    pub row_bad: Vec<u32>,
    pub col_bad: Vec<u32>,
}

#[inline]
fn join_id(c: usize, s: usize, d: usize) -> u32 {
    match s {
        1 => 2 * c as u32,
        2 => 2 * c as u32 + 1,
        3 => 2 * d as u32,
        _ => 2 * d as u32 + 1,
    }
}

impl State {
    pub(super) fn new(f: &Frame) -> Self {
        let n = f.cells();
        State {
            cells: vec![Placement::default(); n],
            col: vec![[0; 4]; n],
            filled: vec![false; n],
            score: 0,
            bad: vec![0; n],
            bad_joins: IndexSet::new(2 * n),
            by_bad: [IndexSet::new(n), IndexSet::new(n), IndexSet::new(n), IndexSet::new(n)],
            row_bad: vec![0; f.height],
            col_bad: vec![0; f.width],
        }
    }

    /// Empties every cell.
    pub(super) fn clear(&mut self) {
        self.filled.iter_mut().for_each(|x| *x = false);
        self.bad.iter_mut().for_each(|x| *x = 0);
        self.bad_joins.clear();
        self.by_bad.iter_mut().for_each(IndexSet::clear);
        self.row_bad.iter_mut().for_each(|x| *x = 0);
        self.col_bad.iter_mut().for_each(|x| *x = 0);
        self.score = 0;
    }

    #[inline]
    fn set_bad(&mut self, w: usize, c: usize, b: u8) {
        let old = self.bad[c];
        if old > 0 {
            self.by_bad[old as usize - 1].remove(c as u32);
        }
        if b > 0 {
            self.by_bad[b as usize - 1].insert(c as u32);
        }
        self.bad[c] = b;
        self.row_bad[c / w] = self.row_bad[c / w] + u32::from(b) - u32::from(old);
        self.col_bad[c % w] = self.col_bad[c % w] + u32::from(b) - u32::from(old);
    }

    /// Places `pl` on the empty cell `c`.
    #[inline]
    pub fn place(&mut self, f: &Frame, c: usize, pl: Placement) {
        debug_assert!(!self.filled[c]);
        self.cells[c] = pl;
        self.col[c] = f.colors(pl);
        self.filled[c] = true;
        self.count_joins::<true>(f, c);
    }

    /// Empties the filled cell `c`; returns what it held.
    #[inline]
    pub fn lift(&mut self, f: &Frame, c: usize) -> Placement {
        debug_assert!(self.filled[c]);
        self.count_joins::<false>(f, c);
        self.filled[c] = false;
        self.cells[c]
    }

    /// Counts the joins of the filled cell `c` with its filled neighbours into the score and
    /// the bad-join tables: in when it was just placed (`PLACE`), out when it is being lifted.
    #[inline(always)]
    fn count_joins<const PLACE: bool>(&mut self, f: &Frame, c: usize) {
        for s in 0..4 {
            let d = f.nb[c][s];
            if d == NONE || !self.filled[d as usize] {
                continue;
            }
            let d = d as usize;
            if self.col[c][s] == self.col[d][(s + 2) % 4] {
                if PLACE { self.score += 1 } else { self.score -= 1 }
            } else if PLACE {
                self.bad_joins.insert(join_id(c, s, d));
                self.set_bad(f.width, c, self.bad[c] + 1);
                self.set_bad(f.width, d, self.bad[d] + 1);
            } else {
                self.bad_joins.remove(join_id(c, s, d));
                self.set_bad(f.width, c, self.bad[c] - 1);
                self.set_bad(f.width, d, self.bad[d] - 1);
            }
        }
    }

    /// Seams that `q` placed at `c` would match with the filled neighbours.
    #[inline]
    pub(super) fn seams(&self, f: &Frame, c: usize, q: Piece) -> u32 {
        let mut m = 0;
        for (s, (&d, &qs)) in f.nb[c].iter().zip(q.iter()).enumerate() {
            if d != NONE && self.filled[d as usize] {
                m += u32::from(qs == self.col[d as usize][(s + 2) % 4]);
            }
        }
        m
    }

    #[inline]
    pub(super) fn filled_neighbours(&self, f: &Frame, c: usize) -> u32 {
        f.nb[c].iter().filter(|&&d| d != NONE && self.filled[d as usize]).count() as u32
    }

    #[inline]
    pub(super) fn mismatched(&self, f: &Frame, c: usize, s: usize) -> bool {
        let d = f.nb[c][s];
        d != NONE && self.filled[d as usize] && self.col[c][s] != self.col[d as usize][(s + 2) % 4]
    }

    /// Recomputes everything from scratch and compares: the oracle for the incremental map.
    #[cfg(test)]
    pub fn check(&self, f: &Frame) {
        let n = f.cells();
        let (mut score, mut bad, mut joins) = (0, vec![0u8; n], Vec::new());
        for c in 0..n {
            for s in [1, 2] {
                let d = f.nb[c][s];
                if d == NONE || !self.filled[c] || !self.filled[d as usize] {
                    continue;
                }
                assert_eq!(self.col[c], f.colors(self.cells[c]));
                if self.col[c][s] == self.col[d as usize][(s + 2) % 4] {
                    score += 1;
                } else {
                    bad[c] += 1;
                    bad[d as usize] += 1;
                    joins.push(join_id(c, s, d as usize));
                }
            }
        }
        assert_eq!(self.score, score, "score");
        assert_eq!(self.bad, bad, "per-cell mismatch counts");
        let mut have = self.bad_joins.items.clone();
        have.sort_unstable();
        assert_eq!(have, joins, "mismatched joins");
        for (x, &p) in self.bad_joins.pos.iter().enumerate() {
            assert!(p == NONE || self.bad_joins.items[p as usize] == x as u32);
        }
        for b in 1..=4u8 {
            let mut have = self.by_bad[b as usize - 1].items.clone();
            have.sort_unstable();
            let want: Vec<u32> = (0..n as u32).filter(|&c| bad[c as usize] == b).collect();
            assert_eq!(have, want, "cells with {b} mismatches");
        }
        for r in 0..f.height {
            assert_eq!(self.row_bad[r], (0..f.width).map(|x| bad[r * f.width + x] as u32).sum::<u32>());
        }
        for x in 0..f.width {
            assert_eq!(self.col_bad[x], (0..f.height).map(|r| bad[r * f.width + x] as u32).sum::<u32>());
        }
    }
}
