//! The options of divide and concur (`--method dc`): what a user sets, with the defaults in
//! one place ([`DcOptions::default`]), and the batch configuration they make
//! ([`DcOptions::config`]).

use super::layout::DcLayout;
use super::map::{DcConfig, Readout, Weights};
use crate::batch::{MapKind, MapOptions, MapRun};
use crate::error::SpecError;

crate::options::one_value!(MapKind, Weights, DcLayout, Readout);

crate::options::options_table! {
    /// The options of divide and concur (`--method dc`): every map's ([`MapOptions`],
    /// flattened: the same keys) and the formulation's.
    pub struct DcOptions {
        flatten pub map: MapOptions,
        /// The map between concur and divide.
        [DivideAndConcur]
        pub dc_map: MapKind = MapKind::Rrr,
        /// The constraint weights in the concur mean: uniform, or Elser's adaptive weights.
        [DivideAndConcur]
        pub weights: Weights = Weights::Uniform,
        /// The step of the adaptive weights.
        [DivideAndConcur]
        pub gamma: f32 = 0.1,
        /// The constraints: hybrid (one global assignment constraint and the joins, the best
        /// measured) or plain (a constraint per cell, per piece and per join; the GPU's layout).
        [DivideAndConcur]
        pub layout: DcLayout = DcLayout::Hybrid,
        /// An alias of --layout hybrid, kept for older scripts and ladders (`hybrid = false` in
        /// a ladder means `layout = "plain"`).
        [DivideAndConcur, arg = |a: clap::Arg| a.conflicts_with("layout").num_args(0).default_missing_value("true")]
        pub hybrid: Option<bool> = None,
        /// How the board is read out of the concur values: the per-cell argmax (the assignment
        /// readout on the last iteration of each round), or the max-weight assignment every
        /// iteration.
        [DivideAndConcur]
        pub readout: Readout = Readout::Argmax,
        /// Fold arc consistency in (the certain weight of the three-weight algorithm): once per
        /// round the candidates ruled out given the cells whose concur value reaches TAU, in
        /// (0, 1], are held at 0.
        [DivideAndConcur, value_name = "TAU"]
        pub propagate: Option<f32> = None,
    }
    idle(o) {
        gamma if o.weights != Weights::Adaptive => "without --weights adaptive";
    }
}

impl crate::options::Options for DcOptions {
    fn check(&self) -> Result<(), SpecError> {
        self.map.check()?;
        if let Some(t) = self.propagate.filter(|t| !(*t > 0.0 && *t <= 1.0)) {
            return Err(SpecError::range("propagate", "in (0, 1]", t));
        }
        if !(self.gamma.is_finite() && self.gamma > 0.0) {
            return Err(SpecError::range("gamma", "a positive number", self.gamma));
        }
        if self.hybrid.is_some() && self.layout != DcLayout::default() {
            return Err(SpecError::conflict("hybrid", "is an alias of --layout hybrid; give one of the two"));
        }
        Ok(())
    }
}

impl DcOptions {
    /// The layout asked for: the `hybrid` alias when given, else `layout`.
    pub fn layout(&self) -> DcLayout {
        self.hybrid.map_or(self.layout, DcLayout::from_hybrid)
    }

    /// The same options with the `hybrid` alias folded into `layout`.
    pub fn normalised(mut self) -> Self {
        self.layout = self.layout();
        self.hybrid = None;
        self
    }

    /// The batch configuration with these options, run as `run` says.
    pub fn config(&self, run: MapRun) -> DcConfig {
        let m = &self.map;
        DcConfig {
            kind: self.dc_map,
            beta: m.beta,
            weights: self.weights,
            gamma: self.gamma,
            layout: self.layout(),
            readout: self.readout,
            all_trials: m.all_trials,
            no_cycle_restart: m.no_cycle_restart,
            complete: m.completion(),
            keep_fixed_points: false,
            propagate: self.propagate,
            keep_going: m.keep_going,
            resume: None,
            run,
        }
    }
}
