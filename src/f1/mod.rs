//! F1: the iterated maps in edge-colour space (ARCHITECTURE.md §4, F1), as [`crate::dc`] is
//! F2: the projections and the batch driver that iterates them, side by side.
//!
//! - [`project`]: the projections as plain-slice CPU code (P_E, P_E1, P_P, the weighted
//!   metric) and their fused fast passes, each tested against its reference; the GPU's F1
//!   kernels are checked against them.
//! - [`map`]: the CPU batch driver [`map::F1Map`] (RRR and the difference map), its
//!   [`map::MapConfig`] and defaults; the trial bookkeeping, stop rules and result it shares
//!   with every other driver are in [`crate::batch`].
//! - [`options`]: what a user sets for rrr and dm ([`F1Options`]), with the defaults.

pub mod map;
pub mod options;
pub mod project;

pub use map::{AdaptiveWeights, AssignOn};
pub use options::{F1Options, JoinWeights};
