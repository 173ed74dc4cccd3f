//! F2: divide and concur in candidate space (ARCHITECTURE.md §4, F2), after Gravel & Elser,
//! "Divide and concur: A general approach to constraint satisfaction", Phys. Rev. E 78,
//! 036706 (2008).
//!
//! The variables are the candidates `v[c][j]` of every cell. Each constraint (one per cell,
//! one per piece, one per interior join; or, with `hybrid`, one global assignment plus the
//! joins) holds its own replica of the variables it touches ([`Layout`]). Two projections
//! act on the replica vector ([`project`]):
//! - **divide** (`b`): every constraint's replica independently onto its own set (one-hot
//!   argmax; best compatible pair of a join; max-weight assignment);
//! - **concur** (`a`): every replica of a variable becomes their (weighted) mean.
//!
//! They drive one of two iterated maps, run as a batch of independent trials:
//! - RRR (Elser): `x' = x + beta (P_a(2 P_b x - x) - P_b x)`;
//! - the difference map (Elser, Rankenburg & Thibault 2007; Gravel & Elser eq. 3):
//!   `y' = y + beta [P_a(f_b(y)) - P_b(f_a(y))]`, `f_i(y) = (1 + g_i) P_i(y) - g_i y`,
//!   `g_a = -1/beta`, `g_b = 1/beta`. At beta = 1 both are Douglas-Rachford.
//!
//! With [`Weights::Adaptive`], each constraint `k` carries a weight `lambda_k` used in the
//! concur mean (so concur is the projection in the `lambda`-weighted metric), updated every
//! iteration by Elser's adaptive-weight rule `lambda_k += gamma (err_k / mean(err) - lambda_k)`
//! (floored at 1e-3), where `err_k` is the distance between the constraint's divided replica
//! and the concur value on its slots, divided by the square root of the number of slots the
//! constraint chooses (1 for a cell or piece, 2 for a join, one per cell for the assignment,
//! which would otherwise dwarf the joins): constraints that stay violated weigh more.
//!
//! **Readout.** The concur point (`P_a(2 P_b x - x)` for RRR, `P_a(f_b(y))` for the
//! difference map) is read out every iteration as a board: the per-cell argmax, scored when
//! it is a permutation of the pieces. When it is not, the max-weight assignment of pieces to
//! cells over the concur values (always a permutation) is read instead: every iteration with
//! [`Readout::Assignment`], only on the last iteration of each round with
//! [`Readout::Argmax`] (to track the best board). Both found their solutions at the same
//! iterations in our runs, and the argmax is cheaper. The board is scored exactly (matched
//! joins), the best board is kept, and a trial stops when a board matches every join and
//! passes [`crate::verify::check`]. Exact limit cycles are detected as in F1, by the batch core's
//! rule ([`crate::batch`]): the state is hashed every [`ROUND`](crate::batch::ROUND) iterations against the last
//! 16 hashes, and a trial caught in one restarts from a fresh random point.
//!
//! **Implementation.** Every divide output is one-hot per constraint, so `P_b` is kept
//! sparsely as the chosen slots of each constraint. An RRR iteration is then a concur gather
//! (`m = P_a(2 P_b x - x)` per variable, from the CSR table and a scatter of the chosen
//! slots) and one fused pass per constraint that applies `x += beta (m - P_b x)` to its slots
//! and immediately projects them again for the next iteration. With uniform weights that pass
//! also accumulates the next concur sums, so the gather runs only once per round. The
//! difference map does the same with one more divide per constraint (on `f_a(y)`, built in a
//! per-constraint buffer). The batch state is flat and trial-major (`trials * S` floats,
//! `trials * choices` chosen slots, `trials * C` weights); scratch belongs to one rayon
//! worker and is allocated once, so the iteration loop never allocates.

pub mod layout;
pub mod map;
pub mod options;
pub mod project;
pub mod prune;

pub use layout::{AssignScratch, Constraint, DcLayout, Layout};
pub use map::{DcConfig, DcMap, DcSnapshot, Readout, Weights, estimate, replica_bytes, solve};
pub use options::DcOptions;
pub use project::DivideScratch;
