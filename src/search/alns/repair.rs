//! The repair of ALNS: pairwise non-adjacent holes refilled exactly, one maximum-weight
//! assignment per piece class (Schaus & Deville 2008), any others greedily, the most
//! constrained open cell first.

use super::{ArgMax, Search};
use crate::puzzle::Placement;
use rand::RngExt;
use rand::seq::SliceRandom;

impl Search {
    /// Greedy most-constrained-first refill of `holes` from `pool`.
    pub(super) fn greedy_fill(&mut self) {
        self.open.clear();
        self.open.extend_from_slice(&self.holes);
        self.used.clear();
        self.used.resize(self.pool.len(), false);
        while !self.open.is_empty() {
            // The open cell with the most placed neighbours, ties at random.
            let mut most = ArgMax::new();
            for (i, &c) in self.open.iter().enumerate() {
                most.offer(self.st.filled_neighbours(&self.f, c as usize), i, &mut self.rng);
            }
            let c = self.open.swap_remove(most.at) as usize;
            let cls = self.f.cell_class[c];
            let mut best: Option<(u32, usize, u8)> = None;
            let mut ties = 0u32;
            for (j, &p) in self.pool.iter().enumerate() {
                if self.used[j] || self.f.piece_class[p as usize] != cls {
                    continue;
                }
                let (r0, r1) = if cls == 2 {
                    (0, 4)
                } else {
                    let r = self.f.rim_rot(p, c);
                    (r, r + 1)
                };
                for r in r0..r1 {
                    let v = self.st.seams(&self.f, c, self.f.rot[p as usize][r as usize]);
                    match best {
                        Some((bv, _, _)) if v < bv => {}
                        Some((bv, _, _)) if v == bv => {
                            ties += 1;
                            if self.rng.random_range(0..ties) == 0 {
                                best = Some((v, j, r));
                            }
                        }
                        _ => {
                            best = Some((v, j, r));
                            ties = 1;
                        }
                    }
                }
            }
            // Every class has as many lifted pieces as holes, so a piece is always found.
            let Some((_, j, r)) = best else { continue };
            self.used[j] = true;
            self.st.place(&self.f, c, Placement { piece: self.pool[j], rot: r });
            self.moves += 1;
        }
    }

    /// Best rotation of piece `p` at the hole `c` (all neighbours filled) and its seams; ties
    /// broken by the starting rotation `r0`.
    #[inline]
    fn best_rotation(&self, c: usize, p: u16, r0: u8) -> (u32, u8) {
        if self.f.cell_class[c] != 2 {
            let r = self.f.rim_rot(p, c);
            return (self.st.seams(&self.f, c, self.f.rot[p as usize][r as usize]), r);
        }
        let mut best = (0, r0);
        for t in 0..4 {
            let r = (r0 + t) % 4;
            let v = self.st.seams(&self.f, c, self.f.rot[p as usize][r as usize]);
            if t == 0 || v > best.0 {
                best = (v, r);
            }
        }
        best
    }

    /// Exact refill of pairwise non-adjacent holes: one maximum-weight assignment per class.
    /// Returns false (having placed nothing) when a class is larger than the prepared solvers.
    pub(super) fn assignment_fill(&mut self) -> bool {
        for cls in 0..3u8 {
            let m = self.holes.iter().filter(|&&c| self.f.cell_class[c as usize] == cls).count();
            if m >= self.assigners.len() {
                return false;
            }
        }
        for cls in 0..3u8 {
            self.cls_holes.clear();
            self.cls_holes.extend(self.holes.iter().copied().filter(|&c| self.f.cell_class[c as usize] == cls));
            self.cls_pieces.clear();
            self.cls_pieces.extend(self.pool.iter().copied().filter(|&p| self.f.piece_class[p as usize] == cls));
            let m = self.cls_holes.len();
            if m == 0 {
                continue;
            }
            // Random orders, so that optimal ties fall differently each time.
            self.cls_holes.shuffle(&mut self.rng);
            self.cls_pieces.shuffle(&mut self.rng);
            self.values.clear();
            self.best_rot.clear();
            for i in 0..m {
                let c = self.cls_holes[i] as usize;
                let r0 = self.rng.random_range(0..4u8);
                for j in 0..m {
                    let (v, r) = self.best_rotation(c, self.cls_pieces[j], r0);
                    self.values.push(v as f32);
                    self.best_rot.push(r);
                }
            }
            let ok = self.assigners[m].solve(&self.values[..m * m]).is_ok();
            for i in 0..m {
                // Every value is finite, so the solve cannot fail; fall back to the identity.
                let j = if ok { self.assigners[m].row_to_col()[i] as usize } else { i };
                let c = self.cls_holes[i] as usize;
                let pl = Placement { piece: self.cls_pieces[j], rot: self.best_rot[i * m + j] };
                self.st.place(&self.f, c, pl);
                self.moves += 1;
            }
        }
        true
    }

    /// Refills the lifted holes: exactly when they are independent (and `exact`), else greedily.
    pub(super) fn repair(&mut self, exact: bool) {
        if exact && self.holes.len() > 1 && self.holes_independent() && self.assignment_fill() {
            self.exact_repairs += 1;
        } else {
            self.greedy_fill();
        }
    }
}
