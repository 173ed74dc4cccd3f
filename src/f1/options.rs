//! The options of F1's maps (`--method rrr` and `dm`): what a user sets, with the defaults
//! in one place ([`F1Options::default`]), and the batch configuration they make
//! ([`F1Options::config`]).

use super::map::{AdaptiveWeights, AssignOn, DEFAULT_JOIN_WEIGHTS, DEFAULT_RESTART_STALL, MapConfig};
use super::project::EdgeProjection;
use crate::assign::Precision;
use crate::batch::{MapKind, MapOptions, MapRun};
use crate::error::SpecError;
use serde::{Deserialize, Serialize};

/// RRR's and the difference map's metric between the constraint classes: the weights of the
/// side slots of frame-frame, frame-inner and inner-inner joins (`--join-weights FF,FI,II`;
/// in a ladder, `join_weights = [FF, FI, II]`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JoinWeights(pub [f32; 3]);

impl JoinWeights {
    /// Three positive finite numbers.
    pub fn check(&self) -> Result<(), SpecError> {
        if self.0.iter().all(|w| w.is_finite() && *w > 0.0) {
            Ok(())
        } else {
            Err(SpecError::range("join_weights", "three positive finite numbers", self))
        }
    }

    /// The weights the batch uses: `None` (the uniform path, which skips the weighing) when
    /// the three are equal, since a metric scaled as a whole picks the same boards.
    pub fn metric(self) -> Option<[f32; 3]> {
        let w = self.0;
        (!(w[0] == w[1] && w[1] == w[2])).then_some(w)
    }
}

impl std::fmt::Display for JoinWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [a, b, c] = self.0;
        write!(f, "{a},{b},{c}")
    }
}

impl std::str::FromStr for JoinWeights {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let v: Vec<f32> = s
            .split(',')
            .map(|t| t.trim().parse::<f32>().map_err(|e| format!("`{t}`: {e}")))
            .collect::<Result<_, _>>()?;
        let [a, b, c] = v[..] else {
            return Err(format!("three weights are needed (frame-frame, frame-inner, inner-inner), got {}", v.len()));
        };
        let w = JoinWeights([a, b, c]);
        w.check().map_err(|e| e.to_string())?;
        Ok(w)
    }
}

/// The options of F1 (`--method rrr`, `dm`): the map's own ([`MapOptions`], flattened: the
/// same keys) and F1's. `Default` is where their defaults live.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct F1Options {
    /// The options every map has, under the same keys.
    #[serde(flatten)]
    pub map: MapOptions,
    /// The edge projection of the map: the average per join (P_E), or one colour per join
    /// (P_E1).
    pub edge: EdgeProjection,
    /// Restart a trial after this many iterations without a new best score since its last
    /// (re)start; 0 never restarts. It rescues the trials the weighted metric traps, at no
    /// measured cost (BENCHMARKS.md).
    pub restart_stall: u64,
    /// A stall restart perturbs x by S * (u - 1/2) per coordinate instead of drawing a
    /// fresh random point.
    pub kick: Option<f32>,
    /// The metric between the constraint classes: the weights of the sides of frame-frame,
    /// frame-inner and inner-inner joins (P_P picks the nearest board in that metric); 1,1,1 is
    /// the uniform metric. The default, 1,1,4, is the best measured.
    pub join_weights: JoinWeights,
    /// An adaptive metric on top of the join weights: each join's weight grows by RATE times
    /// its class weight in every iteration that leaves it unmatched, decays back by the
    /// fraction DECAY, and stays below MAX times its class weight.
    pub adapt: Option<AdaptiveWeights>,
    /// Solve every assignment cold instead of warm-starting from the previous duals.
    pub cold_assign: bool,
    /// Where the assignments are solved: `auto` (the backend's fastest measured placement),
    /// `cpu` (the host's exact JV; the weights read back every iteration on the GPU backend),
    /// `gpu-jv` (alias `gpu`), `gpu-jv-sg`, `gpu-jv-sg-staged` or `gpu-auction` (the device
    /// kernels: in the device loop, blocks of K iterations with no host wait; the auction
    /// under `--complete` from the host, an iteration at a time). The JSON's `assign` says
    /// which ran.
    pub assign: AssignOn,
    /// rrr in the GPU's device loop: one fused pass per trial (update, score, track, edges,
    /// weights; the trial's state in workgroup memory) instead of five dispatches, where the
    /// state fits; the same iterates bit for bit.
    pub fused_passes: bool,
    /// The precision of the host assignments' potentials and reduced costs: f64 (the
    /// reference) or f32 (twice the lanes per vector; optimal up to f32 rounding, so near-ties
    /// may break differently).
    pub reduced_costs: Precision,
}

impl Default for F1Options {
    fn default() -> Self {
        F1Options {
            map: MapOptions::default(),
            edge: EdgeProjection::Average,
            restart_stall: DEFAULT_RESTART_STALL,
            kick: None,
            join_weights: JoinWeights(DEFAULT_JOIN_WEIGHTS),
            adapt: None,
            cold_assign: false,
            assign: AssignOn::Auto,
            fused_passes: false,
            reduced_costs: Precision::F64,
        }
    }
}

impl crate::options::Options for F1Options {
    fn check(&self) -> Result<(), SpecError> {
        self.map.check()?;
        self.join_weights.check()?;
        if let Some(a) = &self.adapt {
            a.check().map_err(|reason| SpecError::Value { key: "adapt".into(), reason })?;
        }
        if let Some(k) = self.kick
            && !(k.is_finite() && k > 0.0)
        {
            return Err(SpecError::range("kick", "a positive number", k));
        }
        if self.reduced_costs != Precision::F64 && self.assign.on_device() {
            return Err(SpecError::conflict(
                "reduced_costs",
                "sets the host's assignments; the device kernels work in f32 anyway",
            ));
        }
        Ok(())
    }

    fn idle(&self) -> Vec<(&'static str, String)> {
        let mut idle = self.map.idle();
        if self.restart_stall == 0 {
            idle.push(("kick", "with --restart-stall 0 (a kick is what a stall restart does)".into()));
        }
        if !(self.assign == AssignOn::Auto || self.assign.on_device()) {
            idle.push(("fused_passes", "without the device loop (--assign auto or gpu-*)".into()));
        }
        idle
    }
}

impl F1Options {
    /// The batch configuration of the map `kind` with these options, run as `run` says.
    pub fn config(&self, kind: MapKind, run: MapRun) -> MapConfig {
        let m = &self.map;
        MapConfig {
            kind,
            beta: m.beta,
            trials: run.trials,
            max_iters: run.max_iters,
            time_limit: run.time_limit,
            seed: run.seed,
            edge: self.edge,
            cycle_restart: !m.no_cycle_restart,
            stop_at_first: !m.all_trials,
            warm_start: !self.cold_assign,
            complete: m.completion(),
            keep_fixed_points: false,
            assign: self.assign,
            reduced_costs: self.reduced_costs,
            fused_passes: self.fused_passes,
            first_trial: 0,
            restart_stall: (self.restart_stall > 0).then_some(self.restart_stall),
            kick: self.kick,
            join_weights: self.join_weights.metric(),
            adapt: self.adapt,
            keep_going: m.keep_going,
            on_solution: run.on_solution,
            cancel: run.cancel,
            save_at_stop: run.save_at_stop,
            resume: None,
        }
    }
}
