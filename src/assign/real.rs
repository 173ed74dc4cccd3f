//! The precision of the solver's potentials and reduced costs: the [`Real`] trait over `f64`
//! and `f32`, and the [`Precision`] a map's host assignments run in.

use super::{AssignError, Assigner, run_dispatch, run_dispatch_f32};

/// The precision of a solver's potentials, distances and reduced costs: `f64` (the default,
/// and the reference) or `f32` (twice the lanes per vector). Weights are `f32` either way, and
/// totals are summed in `f64`. Every kernel computes a reduced cost `cost(w) - v` with the same
/// expression, so minima found in one pass are found again by exact comparison in another, in
/// either precision. With `f32` the potentials round at 2^-24 of their size: the assignment is
/// optimal up to that rounding, and near-ties may break differently from the `f64` solver's.
pub trait Real:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::AddAssign
    + std::ops::SubAssign
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
    + sealed::Sealed
{
    /// `+inf`: a forbidden pair's cost, and a masked column.
    const INF: Self;
    /// `0`.
    const ZERO: Self;
    /// Min-cost view of a weight: `-w` (forbidden `-inf` becomes `+inf`).
    fn cost(w: f32) -> Self;
    /// A small integer (a row index), held exactly.
    fn from_index(i: usize) -> Self;
    /// The integer [`Real::from_index`] stored.
    fn to_index(self) -> usize;
    /// Widening, for certificates and tests.
    fn to_f64(self) -> f64;
    /// Narrowing back ([`Real::to_f64`] then this is the identity): a saved solver's
    /// potentials ([`WarmState`](super::WarmState)).
    fn from_f64(v: f64) -> Self;
    /// Runs a solve compiled for the machine's instruction sets.
    #[doc(hidden)]
    fn dispatch(a: &mut Assigner<Self>, w: &[f32], warm: bool) -> Result<f32, AssignError>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

impl Real for f64 {
    const INF: Self = f64::INFINITY;
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn cost(w: f32) -> Self {
        -(w as f64)
    }
    #[inline(always)]
    fn from_index(i: usize) -> Self {
        i as f64
    }
    #[inline(always)]
    fn to_index(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn dispatch(a: &mut Assigner<Self>, w: &[f32], warm: bool) -> Result<f32, AssignError> {
        run_dispatch(a, w, warm)
    }
}

impl Real for f32 {
    const INF: Self = f32::INFINITY;
    const ZERO: Self = 0.0;
    #[inline(always)]
    fn cost(w: f32) -> Self {
        -w
    }
    #[inline(always)]
    fn from_index(i: usize) -> Self {
        i as f32
    }
    #[inline(always)]
    fn to_index(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn dispatch(a: &mut Assigner<Self>, w: &[f32], warm: bool) -> Result<f32, AssignError> {
        run_dispatch_f32(a, w, warm)
    }
}

/// The precision a map's host assignments run in (`--reduced-costs`): the solver's
/// potentials, distances and reduced costs in `f64` (the reference) or `f32` (see [`Real`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `f64` throughout: the reference.
    #[default]
    F64,
    /// `f32` potentials, distances and reduced costs: twice the lanes per vector.
    F32,
}
