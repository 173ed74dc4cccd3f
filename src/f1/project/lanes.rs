//! P_P's weights for [`LANES`] trials at once: the trials' states side by side in vector
//! lanes (trial-minor), so that one pass over the puzzle's groups serves them all
//! (ARCHITECTURE.md §4, "F1 across trials").
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
type V = f32x4;

/// Scratch of [`F1::piece_weights_lanes`]: per colour (at most 256) and side, a vector of
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
    /// [`F1::piece_weights_into`] of [`LANES`] trials at once: `z` holds the lanes' states
    /// back to back ([`F1::dim`] floats each) and `w` receives their weights back to back
    /// ([`F1::weight_len`] each), each lane's bit for bit what the one-trial pass gives on its
    /// state. Every lane is computed; a caller with fewer trials leaves stale states in the
    /// others and ignores their weights.
    pub fn piece_weights_lanes(&self, z: &[f32], w: &mut [f32], sides: &mut LaneSideTable) {
        let (k, dim, wl) = (self.colors, self.dim(), self.weight_len());
        assert!(z.len() >= LANES * dim && w.len() >= LANES * wl, "a state and a weight block per lane");
        let y = &mut sides.0;
        let mut off = 0;
        for table in &self.classes {
            let n = table.cells.len();
            let g = &table.groups;
            for (i, &c) in table.cells.iter().enumerate() {
                let c = c as usize;
                for l in 0..LANES {
                    let xc = &z[l * dim + c * 4 * k..l * dim + (c + 1) * 4 * k];
                    for (s, side) in xc.chunks_exact(k).enumerate() {
                        for (q, &v) in y.iter_mut().zip(side) {
                            q[s].as_mut_array()[l] = v;
                        }
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
