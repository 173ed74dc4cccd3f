//! RRR's passes over [`LANES`] trials at once (the edge reflection, P_P's weights, the
//! candidates and the step's dense part): the trials' values side by side in vector lanes
//! (trial-minor), so that one pass over the puzzle's joins or groups serves them all
//! (ARCHITECTURE.md §4, "F1 across trials").
//!
//! The lock-step lays its trials' states out trial-minor for a round ([`F1::to_lanes`]: one
//! [`LaneVec`] per entry of the state, each block of four entries by four trials turned
//! around by a 4x4 transpose) and writes them back at its end. In that layout the edge
//! reflection ([`F1::reflect_edges_lanes`]) and the step's dense part
//! ([`F1::subtract_edges_lanes`]) are vector operations across the trials. Each lane forms
//! every value as the one-trial pass does, so the results are the one-trial ones, bit for
//! bit.
//!
//! [`F1::piece_weights_into`] reads, per (cell, piece) group, four colour quadruples of one
//! trial and sums them four ways: the tables it walks (groups, columns, colour bytes) are the
//! same for every trial of the puzzle. Here each cell's `4 x K` floats of all lanes are first
//! laid out as `y[colour][side][lane]`, so that a group costs the same sixteen loads as one
//! trial's, each now a vector of [`LANES`] trials, and its sums and maxima are vector
//! operations. Each lane forms every value as the one-trial pass does (the sums as
//! `((up + right) + down) + left`, the same comparisons), so the weights are those of
//! [`F1::piece_weights_into`] on that lane's state, bit for bit.

use super::F1;
use wide::f32x4;

/// Trials whose weights one pass computes: the width of an SSE vector of `f32`, the
/// instruction set every x86-64 processor has (and one NEON register).
pub const LANES: usize = 4;

/// One lane vector: a value of each of [`LANES`] trials.
pub type LaneVec = f32x4;
type V = LaneVec;

/// Scratch of [`F1::piece_weights_minor`]: per colour (at most 256) and side, a vector of
/// the lanes' values.
#[derive(Clone, Debug)]
pub struct LaneSideTable(Box<[[V; 4]; 256]>);

impl Default for LaneSideTable {
    fn default() -> Self {
        LaneSideTable(Box::new([[V::ZERO; 4]; 256]))
    }
}

/// `if b > a { b } else { a }` per lane: the one-trial pass's comparison. On x86-64 that is
/// what `maxps b, a` computes (`a < b ? b : a`, ties and NaN giving `a`); elsewhere it is
/// the comparison and a blend.
#[inline(always)]
fn max(a: V, b: V) -> V {
    #[cfg(target_arch = "x86_64")]
    {
        b.fast_max(a)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        b.simd_gt(a).blend(b, a)
    }
}

impl F1 {
    /// [`F1::piece_weights_into`] of [`LANES`] trials at once, their states held trial-minor
    /// (`z[e]` the lanes' values of entry `e`, [`F1::dim`] vectors, as [`F1::to_lanes`] and
    /// [`F1::reflect_edges_lanes`] write them); `w` receives their weights back to back
    /// ([`F1::weight_len`] each), each lane's bit for bit what the one-trial pass gives on its
    /// state. Every lane is computed; a caller with fewer trials ignores the others' weights.
    pub fn piece_weights_minor(&self, z: &[V], w: &mut [f32], sides: &mut LaneSideTable) {
        let (k, wl) = (self.colors, self.weight_len());
        assert!(z.len() >= self.dim(), "a vector per entry");
        assert!(w.len() >= LANES * wl, "a weight block per lane");
        let y = &mut sides.0;
        let mut off = 0;
        for table in &self.classes {
            let n = table.cells.len();
            let g = &table.groups;
            for (i, &c) in table.cells.iter().enumerate() {
                let c = c as usize;
                for (s, side) in z[c * 4 * k..(c + 1) * 4 * k].chunks_exact(k).enumerate() {
                    for (q, &v) in y.iter_mut().zip(side) {
                        q[s] = v;
                    }
                }
                let row = off + i * n;
                let mut lanes = w.chunks_exact_mut(wl);
                let mut rows: [&mut [f32]; LANES] =
                    core::array::from_fn(|_| &mut lanes.next().expect("LANES weight blocks")[row..row + n]);
                rows.iter_mut().for_each(|r| r.fill(f32::NEG_INFINITY));
                let groups = g.row_off[i] as usize..g.row_off[i + 1] as usize;
                let cols = &g.col[groups.clone()];
                let q0 = g.quad_off[i] as usize;
                if g.row_whole[i] {
                    whole_piece_maxima(y, &g.quads[q0..q0 + groups.len()], cols, &mut rows);
                } else {
                    let quads = &g.quads[q0..q0 + groups.len() * g.rots];
                    match g.rots {
                        1 => placement_maxima::<1>(y, quads, cols, &mut rows),
                        2 => placement_maxima::<2>(y, quads, cols, &mut rows),
                        _ => placement_maxima::<4>(y, quads, cols, &mut rows),
                    }
                }
            }
            off += n * n;
        }
    }

    /// [`LANES`] trials' states, trial-major (`xs[l]` lane `l`'s), laid out trial-minor in
    /// `z`: a vector per entry ([`F1::dim`] of them), blocks of four entries by four lanes
    /// turned around at once (a 4x4 transpose).
    pub fn to_lanes(&self, xs: [&[f32]; LANES], z: &mut [V]) {
        let dim = self.dim();
        assert!(z.len() >= dim && xs.iter().all(|x| x.len() >= dim), "a state per lane and a vector per entry");
        // dim = cells * 4 * K: whole blocks of four entries.
        for (e, out) in (0..dim).step_by(4).zip(z.chunks_exact_mut(4)) {
            let block = core::array::from_fn(|l| V::new(xs[l][e..e + 4].try_into().expect("4 floats")));
            out.copy_from_slice(&V::transpose(block));
        }
    }

    /// Lane `lane` of a trial-minor state `z`, into `x` ([`F1::dim`] floats).
    pub fn lane_state(&self, z: &[V], lane: usize, x: &mut [f32]) {
        let flat: &[f32] = wide::bytemuck::cast_slice(&z[..self.dim()]);
        for (v, f) in x.iter_mut().zip(flat.chunks_exact(LANES)) {
            *v = f[lane];
        }
    }

    /// Sets lane `lane` of a trial-minor state `z` to `x` ([`F1::dim`] floats).
    pub fn set_lane_state(&self, z: &mut [V], lane: usize, x: &[f32]) {
        let flat: &mut [f32] = wide::bytemuck::cast_slice_mut(&mut z[..self.dim()]);
        for (&v, f) in x.iter().zip(flat.chunks_exact_mut(LANES)) {
            f[lane] = v;
        }
    }

    /// [`F1::reflect_edges_weighted`] (or [`F1::reflect_edges`] where a lane's weights are
    /// None) of [`LANES`] trials at once: `x` holds their states trial-minor (a vector per
    /// entry, [`F1::to_lanes`]) and `ds[l]` lane `l`'s slot weights; `r` receives the
    /// reflections, trial-minor too. Each lane's values are the one-trial pass's on its
    /// state, bit for bit: the same operations in the same order (a weight of 1.0 multiplies
    /// exactly).
    pub fn reflect_edges_lanes(&self, x: &[V], ds: [Option<&[f32]>; LANES], r: &mut [V]) {
        let (k, dim) = (self.colors, self.dim());
        assert!(r.len() >= dim && x.len() >= dim, "a vector per entry");
        let weight = |s: usize| V::new(core::array::from_fn(|l| ds[l].map_or(1.0, |d| d[s])));
        let (half, two) = (V::splat(0.5), V::splat(2.0));
        for &(a, b) in &self.joins {
            let (wa, wb) = (weight(a as usize), weight(b as usize));
            let (a, b) = (a as usize * k, b as usize * k);
            let (ra, rb) = r.split_at_mut(b);
            let (ra, rb) = (&mut ra[a..a + k], &mut rb[..k]);
            for (((ra, rb), &xa), &xb) in ra.iter_mut().zip(rb).zip(&x[a..a + k]).zip(&x[b..b + k]) {
                let m = half * (xa + xb);
                *ra = (two * m - xa) * wa;
                *rb = (two * m - xb) * wb;
            }
        }
        for &s in &self.rim {
            let (o, ws) = (s as usize * k, weight(s as usize));
            // As the one-trial pass: 2 - x for grey, 0 - x (not -x) for the others.
            for (r, &x) in r[o..o + k].iter_mut().zip(&x[o..o + k]) {
                *r = (V::ZERO - x) * ws;
            }
            r[o] = (two - x[o]) * ws;
        }
    }

    /// [`F1::subtract_edges`] of the lanes of a trial-minor state `x` that `moving` names,
    /// the others left as they are: each moving lane bit for bit the one-trial pass.
    pub fn subtract_edges_lanes(&self, beta: f32, x: &mut [V], moving: [bool; LANES]) {
        let k = self.colors;
        let mask = V::new(moving.map(|m| if m { f32::from_bits(u32::MAX) } else { 0.0 }));
        let (beta, one) = (V::splat(beta), V::splat(1.0));
        let step = |old: V, new: V| mask.bitselect(new, old);
        for &(a, b) in &self.joins {
            let (a, b) = (a as usize * k, b as usize * k);
            let (xa, xb) = x.split_at_mut(b);
            for (xa, xb) in xa[a..a + k].iter_mut().zip(&mut xb[..k]) {
                let m = V::splat(0.5) * (*xa + *xb);
                *xa = step(*xa, *xa - beta * m);
                *xb = step(*xb, *xb - beta * m);
            }
        }
        for &s in &self.rim {
            let o = s as usize * k;
            x[o] = step(x[o], x[o] - beta * one);
        }
    }

    /// [`F1::entries_to_candidates`] of the lanes of a trial-minor state `z` (as
    /// [`F1::reflect_edges_lanes`] writes it) whose boards are given (None: a lane left
    /// alone), cell by cell for all of them: the same candidates, first on ties.
    pub fn entries_to_candidates_lanes(&self, z: &[V], boards: &mut [Option<&mut [u32]>; LANES]) {
        let flat: &[f32] = wide::bytemuck::cast_slice(z);
        for cell in self.cells_by_class() {
            for (l, b) in boards.iter_mut().enumerate() {
                if let Some(b) = b {
                    self.entry_to_candidate(|e| flat[e * LANES + l], cell, b);
                }
            }
        }
    }
}

/// Writes each lane's maximum into its row.
#[inline(always)]
fn store(rows: &mut [&mut [f32]; LANES], col: usize, m: V) {
    for (r, v) in rows.iter_mut().zip(m.to_array()) {
        r[col] = v;
    }
}

/// Whole rows, as the one-trial pass's `whole_piece_maxima`: per group the largest of the
/// four rotations of a piece with colours `(a, b, c, d)`, turned `r` times showing colour
/// `p[(s - r) mod 4]` on side `s`.
#[inline(always)]
fn whole_piece_maxima(y: &[[V; 4]; 256], quads: &[[u8; 4]], cols: &[u16], rows: &mut [&mut [f32]; LANES]) {
    for (q, &col) in quads.iter().zip(cols) {
        let (a, b, c, d) = (&y[q[0] as usize], &y[q[1] as usize], &y[q[2] as usize], &y[q[3] as usize]);
        let r0 = a[0] + b[1] + c[2] + d[3];
        let r1 = d[0] + a[1] + b[2] + c[3];
        let r2 = c[0] + d[1] + a[2] + b[3];
        let r3 = b[0] + c[1] + d[2] + a[3];
        store(rows, col as usize, max(max(r0, r1), max(r2, r3)));
    }
}

/// Other rows: per group, the largest of its `R` candidates, given as rotated colours.
#[inline(always)]
fn placement_maxima<const R: usize>(
    y: &[[V; 4]; 256],
    quads: &[[u8; 4]],
    cols: &[u16],
    rows: &mut [&mut [f32]; LANES],
) {
    for (q, &col) in quads.chunks_exact(R).zip(cols) {
        let mut m = V::splat(f32::NEG_INFINITY);
        for q in q {
            let v = y[q[0] as usize][0] + y[q[1] as usize][1] + y[q[2] as usize][2] + y[q[3] as usize][3];
            m = max(m, v);
        }
        store(rows, col as usize, m);
    }
}
