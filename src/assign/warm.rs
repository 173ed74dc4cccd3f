//! A solver's state between solves ([`WarmState`]), saved with a map's snapshot so that a
//! continued run warm-starts as the uninterrupted run would.

use super::{AssignStats, Assigner, Real};

/// The state an [`Assigner`] carries from one solve to the next, saved with a map's snapshot
/// so that a continued run warm-starts as the uninterrupted run would: the column potentials
/// `v` (as the bits of their `f64` values, exact for either precision), the assignment `x`
/// (row to column) and its inverse `y`, whether they describe a completed solve (a warm
/// start is then possible), the last total (`f64` bits; NaN after a failed solve) and the
/// counts. Everything else in a solver is scratch, written by each solve before it is read.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WarmState {
    /// The problem's size.
    pub n: usize,
    /// Column potentials, as `f64::to_bits`.
    pub v: Vec<u64>,
    /// Row to column ([`UNASSIGNED`](super::UNASSIGNED) where none).
    pub x: Vec<u32>,
    /// Column to row ([`UNASSIGNED`](super::UNASSIGNED) where none).
    pub y: Vec<u32>,
    /// Whether `v`, `x` and `y` are a completed solve's (a warm start reads them).
    pub has_duals: bool,
    /// The last solve's total, as `f64::to_bits`.
    pub total: u64,
    /// What the solver did so far.
    pub stats: AssignStats,
}

/// The warm starts of several solvers ([`Assigner::warm_state`] of each), in order.
pub fn warm_states<R: Real>(solvers: &[Assigner<R>]) -> Vec<WarmState> {
    solvers.iter().map(Assigner::warm_state).collect()
}

/// Puts each of `solvers` in its saved state ([`warm_states`] of solvers of the same sizes
/// and precision), all or none: refused, with every solver unchanged, when any does not fit.
pub fn set_warm_states<R: Real>(solvers: &mut [Assigner<R>], states: &[WarmState]) -> Result<(), String> {
    if solvers.len() != states.len() {
        return Err(format!("{} assignment solvers saved for {}", states.len(), solvers.len()));
    }
    let mut fresh = solvers.to_vec();
    for (a, s) in fresh.iter_mut().zip(states) {
        a.set_warm_state(s)?;
    }
    solvers.clone_from_slice(&fresh);
    Ok(())
}
