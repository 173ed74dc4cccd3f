//! The destroy operators of ALNS ([`Destroy`]): each selects up to `k` free cells to lift
//! into the search's holes, distinct and marked, in O(k) (bands and rings scan one line).

use super::super::hill::NONE;
use super::{ArgMax, Destroy, Search};
use rand::RngExt;

impl Search {
    #[inline]
    fn add(&mut self, c: usize, k: usize) {
        if self.holes.len() < k && !self.f.fixed[c] && !self.in_hole[c] {
            self.in_hole[c] = true;
            self.holes.push(c as u32);
        }
    }

    /// A random endpoint of a random mismatched join, if any.
    fn conflicted_cell(&mut self) -> Option<usize> {
        let n = self.st.bad_joins.len();
        (n > 0).then(|| {
            let j = self.st.bad_joins.items()[self.rng.random_range(0..n)] as usize;
            let (c, s) = (j / 2, if j.is_multiple_of(2) { 1 } else { 2 });
            if self.rng.random_bool(0.5) { c } else { self.f.nb[c][s] as usize }
        })
    }

    fn random_cells(&mut self, k: usize) {
        let len = self.perm_all.len();
        let mut i = 0;
        while self.holes.len() < k && i < len {
            let j = self.rng.random_range(i..len);
            self.perm_all.swap(i, j);
            self.add(self.perm_all[i] as usize, k);
            i += 1;
        }
    }

    /// Grows the holes to k cells through random free neighbours of holes.
    fn pad(&mut self, k: usize) {
        if self.holes.is_empty() {
            self.random_cells(1.min(k));
        }
        let mut tries = 16 * k;
        while self.holes.len() < k && tries > 0 {
            tries -= 1;
            let h = self.holes[self.rng.random_range(0..self.holes.len())] as usize;
            let d = self.f.nb[h][self.rng.random_range(0..4)];
            if d != NONE {
                self.add(d as usize, k);
            }
        }
    }

    /// Selects the cells to lift into `holes` (distinct, free, marked in `in_hole`).
    pub fn destroy(&mut self, op: Destroy, k: usize) {
        let (w, h) = (self.f.width, self.f.height);
        let k = k.clamp(1, w * h);
        let nbad = self.st.bad_joins.len();
        match op {
            _ if nbad == 0 && !matches!(op, Destroy::Random | Destroy::Scattered) => self.random_cells(k),
            Destroy::Random => self.random_cells(k),
            Destroy::Mismatch => self.destroy_mismatch(k),
            Destroy::Conflicted => self.destroy_conflicted(k),
            Destroy::Band => self.destroy_band(k),
            Destroy::Component | Destroy::ComponentHalo => self.destroy_component(op, k),
            Destroy::Rectangle => self.destroy_rectangle(k),
            Destroy::Ring => self.destroy_ring(k),
            Destroy::Scattered => self.destroy_scattered(k),
        }
        if self.holes.is_empty() {
            // Only when every candidate cell was fixed by a hint; one cell is always independent.
            self.random_cells(if op == Destroy::Scattered { 1 } else { k.max(1) });
        }
    }

    /// The cells on both sides of mismatched joins, in random order.
    fn destroy_mismatch(&mut self, k: usize) {
        let nbad = self.st.bad_joins.len();
        let mut i = 0;
        while self.holes.len() < k && i < nbad {
            let j = self.st.bad_joins.shuffle_step(i, &mut self.rng) as usize;
            let (c, s) = (j / 2, if j.is_multiple_of(2) { 1 } else { 2 });
            self.add(c, k);
            self.add(self.f.nb[c][s] as usize, k);
            i += 1;
        }
        self.pad(k);
    }

    /// The cells with the most mismatched sides first (4, then 3, ...).
    fn destroy_conflicted(&mut self, k: usize) {
        for b in (0..4).rev() {
            let mut i = 0;
            while self.holes.len() < k && i < self.st.by_bad[b].len() {
                let c = self.st.by_bad[b].shuffle_step(i, &mut self.rng) as usize;
                self.add(c, k);
                i += 1;
            }
        }
        self.pad(k);
    }

    /// Whole rows or columns (the band of most mismatches), or a stretch of the worst line.
    fn destroy_band(&mut self, k: usize) {
        let (w, h) = (self.f.width, self.f.height);
        let rows = w == h && self.rng.random_bool(0.5) || w != h && self.rng.random_ratio(w as u32, (w + h) as u32);
        // A "line" is a row (length w, h of them) or a column (length h, w of them).
        let (len, count) = if rows { (w, h) } else { (h, w) };
        let cell = |line: usize, i: usize| if rows { line * w + i } else { i * w + line };
        let sums = if rows { &self.st.row_bad } else { &self.st.col_bad };
        if len <= k {
            let t = (k / len).clamp(1, count);
            let mut best = ArgMax::new();
            let mut sum: u32 = sums[..t].iter().sum();
            for start in 0..=count - t {
                if start > 0 {
                    sum = sum + sums[start + t - 1] - sums[start - 1];
                }
                best.offer(sum, start, &mut self.rng);
            }
            for line in best.at..best.at + t {
                for i in 0..len {
                    self.add(cell(line, i), usize::MAX);
                }
            }
        } else {
            let mut best_line = ArgMax::new();
            for (l, &s) in sums.iter().enumerate() {
                best_line.offer(s, l, &mut self.rng);
            }
            let line = best_line.at;
            let bad = &self.st.bad;
            let mut best = ArgMax::new();
            let mut sum: u32 = (0..k).map(|i| u32::from(bad[cell(line, i)])).sum();
            for start in 0..=len - k {
                if start > 0 {
                    sum = sum + u32::from(bad[cell(line, start + k - 1)]) - u32::from(bad[cell(line, start - 1)]);
                }
                best.offer(sum, start, &mut self.rng);
            }
            for i in best.at..best.at + k {
                self.add(cell(line, i), k);
            }
        }
    }

    /// The connected region of mismatched joins around a conflicted cell, with its halo for `ComponentHalo`.
    fn destroy_component(&mut self, op: Destroy, k: usize) {
        let cap = if op == Destroy::Component { k } else { k.div_ceil(2) };
        let seed = self.conflicted_cell().unwrap_or(0);
        self.add(seed, cap);
        let mut head = 0;
        while head < self.holes.len() && self.holes.len() < cap {
            let c = self.holes[head] as usize;
            head += 1;
            let s0 = self.rng.random_range(0..4);
            for t in 0..4 {
                let s = (s0 + t) % 4;
                if self.st.mismatched(&self.f, c, s) {
                    self.add(self.f.nb[c][s] as usize, cap);
                }
            }
        }
        if op == Destroy::ComponentHalo {
            let comp = self.holes.len();
            for i in 0..comp {
                let c = self.holes[i] as usize;
                for s in 0..4 {
                    let d = self.f.nb[c][s];
                    if d != NONE {
                        self.add(d as usize, k);
                    }
                }
            }
        }
    }

    /// A rectangle of about `k` cells around a conflicted cell.
    fn destroy_rectangle(&mut self, k: usize) {
        let (w, h) = (self.f.width, self.f.height);
        let lo = k.div_ceil(h).clamp(1, w);
        let rw = self.rng.random_range(lo..=k.min(w).max(lo));
        let rh = k.div_ceil(rw).clamp(1, h);
        let c = self.conflicted_cell().unwrap_or(0);
        let (cy, cx) = (c / w, c % w);
        let y0 = cy.saturating_sub(self.rng.random_range(0..rh)).min(h - rh);
        let x0 = cx.saturating_sub(self.rng.random_range(0..rw)).min(w - rw);
        for y in y0..y0 + rh {
            for x in x0..x0 + rw {
                self.add(y * w + x, usize::MAX);
            }
        }
    }

    /// A stretch of the ring (distance from the rim) of a conflicted cell.
    fn destroy_ring(&mut self, k: usize) {
        let c = self.conflicted_cell().unwrap_or(0);
        let (r, idx) = self.ring_of[c];
        let len = self.rings[r as usize].len();
        if len <= k {
            for i in 0..len {
                self.add(self.rings[r as usize][i] as usize, k);
            }
        } else {
            let start = (idx as usize + len - self.rng.random_range(0..k)) % len;
            for i in 0..k {
                self.add(self.rings[r as usize][(start + i) % len] as usize, k);
            }
        }
    }

    /// Cells of one chessboard colour (no two adjacent), mismatched ones first.
    fn destroy_scattered(&mut self, k: usize) {
        let w = self.f.width;
        let nbad = self.st.bad_joins.len();
        let p = match self.conflicted_cell() {
            Some(c) => (c / w + c % w) % 2,
            None => self.rng.random_range(0..2),
        };
        let mut i = 0;
        while self.holes.len() < k && i < nbad {
            let j = self.st.bad_joins.shuffle_step(i, &mut self.rng) as usize;
            let (a, s) = (j / 2, if j.is_multiple_of(2) { 1 } else { 2 });
            let b = self.f.nb[a][s] as usize;
            let pick = if (a / w + a % w) % 2 == p { a } else { b };
            self.add(pick, k);
            i += 1;
        }
        let len = self.perm_par[p].len();
        let mut i = 0;
        while self.holes.len() < k && i < len {
            let j = self.rng.random_range(i..len);
            self.perm_par[p].swap(i, j);
            self.add(self.perm_par[p][i] as usize, k);
            i += 1;
        }
    }

    /// Lifts the holes, saving their placements, and fills `pool` with the lifted pieces.
    pub(super) fn lift_holes(&mut self) {
        self.saved.clear();
        self.pool.clear();
        for &c in &self.holes {
            let pl = self.st.lift(&self.f, c as usize);
            self.saved.push(pl);
            self.pool.push(pl.piece);
        }
    }

    /// True when no two holes are adjacent.
    pub(super) fn holes_independent(&self) -> bool {
        self.holes.iter().all(|&c| self.f.nb[c as usize].iter().all(|&d| d == NONE || !self.in_hole[d as usize]))
    }
}
