//! The options of divide and concur (`--method dc`): what a user sets, with the defaults in
//! one place ([`DcOptions::default`]), and the batch configuration they make
//! ([`DcOptions::config`]).

use super::{DcConfig, DcLayout, Readout, Weights};
use crate::batch::{MapKind, MapOptions, MapRun};
use crate::error::SpecError;
use serde::{Deserialize, Serialize};

/// The options of divide and concur: the map's own ([`MapOptions`], flattened: the same
/// keys) and the formulation's. `Default` is where their defaults live.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DcOptions {
    /// The options every map has, under the same keys.
    #[serde(flatten)]
    pub map: MapOptions,
    /// The map between concur and divide.
    pub dc_map: MapKind,
    /// The constraint weights in the concur mean: `uniform`, or Elser's `adaptive` weights.
    pub weights: Weights,
    /// The step of the adaptive weights (with `--weights adaptive`).
    pub gamma: f32,
    /// The constraints: `hybrid` (the best measured): one global assignment constraint and
    /// the joins; `plain`: a constraint per cell, per piece and per join (the layout the GPU
    /// backend runs).
    pub layout: DcLayout,
    /// An alias of `layout = "hybrid"` (`false`: `"plain"`), kept for older scripts and
    /// ladders; [`DcOptions::normalised`] folds it into `layout`.
    pub hybrid: Option<bool>,
    /// How the board is read out of the concur values: the per-cell `argmax` (the
    /// assignment readout on the last iteration of each round), or the max-weight
    /// `assignment` every iteration.
    pub readout: Readout,
    /// Fold arc consistency in (the certain weight of the three-weight algorithm): once per
    /// round the candidates ruled out given the cells whose concur value reaches TAU, in
    /// (0, 1], are held at 0.
    pub propagate: Option<f32>,
}

impl Default for DcOptions {
    fn default() -> Self {
        DcOptions {
            map: MapOptions::default(),
            dc_map: MapKind::Rrr,
            weights: Weights::Uniform,
            gamma: 0.1,
            layout: DcLayout::Hybrid,
            hybrid: None,
            readout: Readout::Argmax,
            propagate: None,
        }
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

    fn idle(&self) -> Vec<(&'static str, String)> {
        let mut idle = self.map.idle();
        if self.weights != Weights::Adaptive {
            idle.push(("gamma", "without --weights adaptive".into()));
        }
        idle
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
            trials: run.trials,
            max_iters: run.max_iters,
            time_limit: run.time_limit,
            seed: run.seed,
            weights: self.weights,
            gamma: self.gamma,
            layout: self.layout(),
            readout: self.readout,
            stop_at_first: !m.all_trials,
            cycle_restart: !m.no_cycle_restart,
            complete: m.completion(),
            keep_fixed_points: false,
            propagate: self.propagate,
            keep_going: m.keep_going,
            on_solution: run.on_solution,
            cancel: run.cancel,
            save_at_stop: run.save_at_stop,
            resume: None,
        }
    }
}
