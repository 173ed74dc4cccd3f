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

crate::options::one_value!(JoinWeights => "Sequence[float]", AdaptiveWeights => "dict[str, float]", EdgeProjection, AssignOn, Precision);

crate::options::options_table! {
    /// The options of F1 (`--method rrr`, `dm`): every map's ([`MapOptions`], flattened: the
    /// same keys) and F1's.
    pub struct F1Options {
        flatten pub map: MapOptions,
        /// F1's edge projection: the average per join (P_E), or one colour per join (P_E1).
        [Map]
        pub edge: EdgeProjection = EdgeProjection::Average,
        /// Restart a trial after this many iterations without a new best score since its last
        /// (re)start; 0 never restarts. It rescues the trials the weighted metric traps, at no
        /// measured cost (BENCHMARKS.md).
        [Map, value_name = "L"]
        pub restart_stall: u64 = DEFAULT_RESTART_STALL,
        /// A stall restart perturbs x by S * (u - 1/2) per coordinate instead of drawing a
        /// fresh random point.
        [Map, value_name = "S"]
        pub kick: Option<f32> = None,
        /// The metric between the constraint classes: the weights of the sides of frame-frame,
        /// frame-inner and inner-inner joins (1,1,1 is the uniform metric; P_P picks the
        /// nearest board in that metric).
        [Map, value_name = "FF,FI,II"]
        pub join_weights: JoinWeights = JoinWeights(DEFAULT_JOIN_WEIGHTS),
        /// An adaptive metric on top of the join weights: a join's weight grows by RATE times
        /// its class weight in every iteration that leaves it unmatched, decays back by the
        /// fraction DECAY, and stays below MAX times its class weight.
        [Map, value_name = "RATE,DECAY,MAX"]
        pub adapt: Option<AdaptiveWeights> = None,
        /// Solve every assignment cold instead of warm-starting from the previous duals.
        [Map]
        pub cold_assign: bool = false,
        /// The precision of the host assignments' potentials and reduced costs: f64 (the
        /// reference) or f32 (twice the lanes per vector; near-ties may break differently).
        [Map]
        pub reduced_costs: Precision = Precision::F64,
        /// Where rrr's and dm's assignments are solved: auto (the backend's fastest measured:
        /// gpu-jv on the GPU, the host's JV where the run needs the host every iteration), cpu
        /// (the host's exact JV; the reference), gpu-jv (alias gpu: the device's exact shortest
        /// augmenting paths, a workgroup per problem), gpu-jv-sg (a subgroup per problem),
        /// gpu-jv-sg-staged (each problem's costs in workgroup memory) or gpu-auction. The
        /// JSON's `assign` says which ran.
        [Gpu]
        pub assign: AssignOn = AssignOn::Auto,
        /// rrr in the device loop: one fused pass per trial instead of five dispatches, where
        /// the state fits; the same iterates bit for bit.
        [Gpu, methods = ["rrr"]]
        pub fused_passes: bool = false,
    }
    idle(o) {
        kick if o.restart_stall == 0 => "with --restart-stall 0 (a kick is what a stall restart does)";
        fused_passes if !(o.assign == AssignOn::Auto || o.assign.on_device()) => "without the device loop (--assign auto or gpu-*)";
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
        Ok(())
    }
}

impl Default for MapConfig {
    /// RRR with [`F1Options::default`] (the options' defaults live there) and
    /// [`MapRun::default`] (the run's).
    fn default() -> Self {
        F1Options::default().config(MapKind::Rrr, MapRun::default())
    }
}

impl F1Options {
    /// The batch configuration of the map `kind` with these options, run as `run` says.
    pub fn config(&self, kind: MapKind, run: MapRun) -> MapConfig {
        let m = &self.map;
        MapConfig {
            kind,
            beta: m.beta,
            edge: self.edge,
            no_cycle_restart: m.no_cycle_restart,
            all_trials: m.all_trials,
            cold_assign: self.cold_assign,
            complete: m.completion(),
            keep_fixed_points: false,
            trial_lanes: crate::f1::project::LANES,
            assign: self.assign,
            reduced_costs: self.reduced_costs,
            fused_passes: self.fused_passes,
            first_trial: 0,
            restart_stall: (self.restart_stall > 0).then_some(self.restart_stall),
            kick: self.kick,
            join_weights: self.join_weights.metric(),
            adapt: self.adapt,
            keep_going: m.keep_going,
            resume: None,
            run,
        }
    }
}
