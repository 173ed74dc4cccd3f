//! The one way a method runs (ARCHITECTURE.md §5): a [`SolveSpec`] says which method and with
//! which options, [`solve`] runs it on a [`Backend`] and returns its [`SolveReport`] with the
//! facts a ladder records. The command line (`concur solve`) flattens the spec's option groups
//! into its flags, and a ladder's `[[methods]]` entries deserialise into the same spec, so a
//! method's defaults live here and nowhere else: [`SolveSpec::default`] is the command line's
//! defaults, read from the same attributes that define the flags.
//!
//! The maps (rrr, dm, dc) run on the backend; the tree searches and the local searches run on
//! the CPU (they have no batch to spread). Every claimed solution has passed the exact board
//! check ([`verify::check`]) before [`solve`] returns it.

use crate::assign::Precision;
use crate::backend::{self, Backend, BackendChoice, Batch, Certify, EngineError, MapJob, Unsupported};
use crate::batch::{Completion, MapKind, MapResult, Mechanism, Progress, SolutionSink};
use crate::certify::Certificate;
use crate::dc::{self, DcConfig, Readout, Weights};
use crate::f1::map::{self, AdaptiveWeights, AssignOn, MapConfig};
use crate::f1::project::EdgeProjection;
use crate::limits::{self, LimitError, MemoryBudget};
use crate::puzzle::Puzzle;
use crate::report::{Method, SolveReport};
use crate::search::alns::{self, AlnsConfig, Destroy};
use crate::search::backtrack::{self, BacktrackConfig, CellOrder};
use crate::search::hill::{self, HillConfig};
use crate::search::scan::{self, ScanProgress, ScanSolveConfig, ScanWalker, TreeChoice};
use crate::verify::{self, Consistency};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// RRR's and the difference map's metric between the constraint classes: the weights of the
/// side slots of frame-frame, frame-inner and inner-inner joins (`--join-weights FF,FI,II`;
/// in a ladder, `join_weights = [FF, FI, II]`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JoinWeights(pub [f32; 3]);

impl JoinWeights {
    /// Three positive finite numbers.
    pub fn check(&self) -> Result<(), String> {
        if self.0.iter().all(|w| w.is_finite() && *w > 0.0) {
            Ok(())
        } else {
            Err("the join weights must be positive and finite".into())
        }
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
        w.check()?;
        Ok(w)
    }
}

/// Options of every map (rrr, dm, dc).
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct MapOptions {
    /// Independent trials of the map, run as one batch.
    #[arg(long, default_value_t = 8)]
    pub trials: usize,
    /// Step size of the map (default 0.7, the best measured for rrr, dm and dc).
    #[arg(long)]
    pub beta: Option<f32>,
    /// Do not restart trials caught in exact limit cycles.
    #[arg(long)]
    pub no_cycle_restart: bool,
    /// Run every trial to its budget instead of stopping at the first solution (for success
    /// rates and iteration quartiles).
    #[arg(long)]
    pub all_trials: bool,
    /// Rate mode (rrr, dm, dc; cpu backend): a solution does not end the run. Each solved
    /// trial's board is verified and recorded, and the trial goes on from a fresh point of
    /// its seeded stream, until --time-limit or every trial's --max-iters. The run reports
    /// the trial-iterations, every solution (its trial and the iterations of its segment),
    /// how many are distinct up to turning the board, and each board as a viewer link.
    #[arg(long)]
    pub keep_going: bool,
}

/// Options of F1, the map in edge-colour space (rrr, dm).
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct F1Options {
    /// Edge projection of the map.
    #[arg(long, value_enum, default_value_t = EdgeProjection::Average)]
    pub edge: EdgeProjection,
    /// rrr, dm: restart a trial after this many iterations without a new best score since its
    /// last (re)start; default 100000 (it rescues the trials the weighted metric traps, at no
    /// measured cost, BENCHMARKS.md); 0 never restarts.
    #[arg(long, value_name = "L")]
    pub restart_stall: Option<u64>,
    /// rrr, dm: a stall restart perturbs x by S * (u - 1/2) per coordinate instead of drawing
    /// a fresh random point (cpu backend).
    #[arg(long, value_name = "S")]
    pub kick: Option<f32>,
    /// rrr, dm: a weighted metric between the constraint classes: the weights of the sides
    /// of frame-frame, frame-inner and inner-inner joins (P_P picks the nearest board in that
    /// metric). Default 1,1,4, the best measured; 1,1,1 is the uniform metric.
    #[arg(long, value_name = "FF,FI,II")]
    pub join_weights: Option<JoinWeights>,
    /// rrr, dm: an adaptive metric on top of the join weights: each join's weight grows by
    /// RATE times its class weight in every iteration that leaves it unmatched, decays back by
    /// the fraction DECAY, and stays below MAX times its class weight (cpu backend).
    #[arg(long, value_name = "RATE,DECAY,MAX")]
    pub adapt: Option<AdaptiveWeights>,
    /// Solve every assignment cold instead of warm-starting from the previous duals.
    #[arg(long)]
    pub cold_assign: bool,
    /// Where the GPU backend solves rrr's and dm's assignments: auto (the default: gpu-jv on
    /// the GPU backend, the fastest measured, and cpu where the run needs the host every
    /// iteration, --complete or --reduced-costs f32), cpu (the host's exact JV, the weights
    /// read back every iteration; the reference), gpu-jv (alias gpu: the device's exact
    /// shortest augmenting paths, a workgroup per problem), gpu-jv-sg (the same, a subgroup
    /// per problem), gpu-jv-sg-staged (with each problem's costs staged in workgroup memory)
    /// or gpu-auction (the device auction, exact for the weights quantised to
    /// within n quanta). The device kernels run K iterations per submission with no host
    /// wait; only per-trial status and solved boards come back. The JSON's `assign` says which
    /// ran.
    #[arg(long, value_enum, default_value_t = AssignOn::Auto)]
    pub assign: AssignOn,
    /// rrr on the GPU's device loop: one fused pass per trial (update, score, track, edges,
    /// weights; the trial's state in workgroup memory) instead of five dispatches, where the
    /// state fits (8x8 and 10x10 boards on a 48 KB device); the same iterates bit for bit.
    #[arg(long)]
    pub fused_passes: bool,
    /// rrr, dm: the precision of the host assignments' potentials and reduced costs: f64 (the
    /// reference) or f32 (twice the lanes per vector; optimal up to f32 rounding, so near-ties
    /// may break differently and the iterates part from f64's).
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub reduced_costs: Precision,
}

pub use crate::dc::DcLayout;

/// Options of divide and concur.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct DcOptions {
    /// Divide and concur: the map between concur and divide.
    #[arg(long, value_enum, default_value_t = MapKind::Rrr)]
    pub dc_map: MapKind,
    /// Divide and concur: constraint weights in the concur mean.
    #[arg(long, value_enum, default_value_t = Weights::Uniform)]
    pub weights: Weights,
    /// Divide and concur: step of the adaptive weights.
    #[arg(long, default_value_t = 0.1)]
    pub gamma: f32,
    /// Divide and concur: the constraints. `hybrid` (the default, the best measured): one
    /// global assignment constraint and the joins; `plain`: a constraint per cell, per piece
    /// and per join (the layout the GPU backend runs).
    #[arg(long, value_enum, default_value_t = DcLayout::Hybrid)]
    pub layout: DcLayout,
    /// Divide and concur: an alias of `--layout hybrid`, kept for older scripts and ladders
    /// (where `hybrid = false` means `layout = "plain"`).
    #[arg(long, conflicts_with = "layout", num_args = 0, default_missing_value = "true")]
    pub hybrid: Option<bool>,
    /// Divide and concur: how the board is read out of the concur values.
    #[arg(long, value_enum, default_value_t = Readout::Argmax)]
    pub readout: Readout,
    /// Divide and concur: fold arc consistency in (the certain weight of the three-weight
    /// algorithm): once per round the candidates ruled out given the cells whose concur value
    /// reaches TAU, in (0, 1], are held at 0 (cpu backend).
    #[arg(long, value_name = "TAU")]
    pub propagate: Option<f32>,
}

impl DcOptions {
    /// The layout asked for: the `hybrid` alias when given, else `layout`.
    pub fn layout(&self) -> DcLayout {
        self.hybrid.map_or(self.layout, DcLayout::from_hybrid)
    }
}

/// Arc-consistent completion of the maps' near-fixed points.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct CompleteOptions {
    /// Arc-consistent completion: when a trial's best board has at most K mismatched joins
    /// (or stalls), free those cells plus a halo and search them with the backtracker.
    #[arg(long, value_name = "K")]
    pub complete: Option<usize>,
    /// Halo radius around mismatched cells for --complete.
    #[arg(long, default_value_t = 1)]
    pub complete_radius: usize,
    /// Node limit of one completion search.
    #[arg(long, default_value_t = 20_000)]
    pub complete_nodes: u64,
    /// Iterations without improvement after which a trial's best board is completed.
    #[arg(long, default_value_t = 5_000)]
    pub complete_stall: u64,
}

impl CompleteOptions {
    /// The completion of a map run (None: the map alone).
    pub fn completion(&self) -> Option<Completion> {
        self.complete.map(|k| Completion {
            k,
            stall: self.complete_stall,
            radius: self.complete_radius,
            max_nodes: self.complete_nodes,
        })
    }
}

/// Options of the tree searches (backtrack, scan).
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct TreeOptions {
    /// Propagation of the backtracker.
    #[arg(long, value_enum, default_value_t = Consistency::Ac3)]
    pub ac: Consistency,
    /// Cell ordering of the backtracker.
    #[arg(long, value_enum, default_value_t = CellOrder::MrvDegree)]
    pub order: CellOrder,
    /// Nodes per Luby restart unit (default 256 for backtrack, 1,048,576 for scan).
    #[arg(long)]
    pub restart_base: Option<u64>,
    /// Disable Luby restarts (complete search).
    #[arg(long)]
    pub no_restarts: bool,
    /// Scan: the tree of each restart (the smallest by Knuth's estimate, or one at random).
    #[arg(long, value_enum, default_value_t = TreeChoice::Estimate)]
    pub tree: TreeChoice,
    /// Scan: random probes of Knuth's estimator per candidate tree.
    #[arg(long, default_value_t = 1_000)]
    pub probes: u64,
    /// Scan: with the row-chain cut (the row under each placement must chain; off by default).
    #[arg(long)]
    pub row_chain: bool,
    /// Scan: the walker (`fast`, or `table`: the plain walker, the oracle of the fast one; both
    /// walk the same trees node for node).
    #[arg(long, value_enum, default_value_t = ScanWalker::Fast)]
    pub scan_walker: ScanWalker,
}

/// Options of the local searches (hill, alns).
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct LocalOptions {
    /// Hill-climber: restart after this many moves without improvement (0: never).
    #[arg(long, default_value_t = 5_000)]
    pub plateau: u64,
    /// ALNS: fewest cells one destroy removes.
    #[arg(long)]
    pub destroy_min: Option<usize>,
    /// ALNS: most cells one destroy removes (default: a third of the board, 4..=48).
    #[arg(long)]
    pub destroy_max: Option<usize>,
    /// ALNS: destroy operators to use (default: all), comma separated.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub operators: Vec<Destroy>,
    /// ALNS: no exact (assignment) refill of non-adjacent holes.
    #[arg(long)]
    pub no_exact_repair: bool,
    /// ALNS: restart from a new board after this many iterations without a new best (0: never).
    #[arg(long)]
    pub restart_after: Option<u64>,
    /// ALNS: starting temperature of the annealing acceptance.
    #[arg(long)]
    pub temperature: Option<f64>,
}

/// A method and all its options: what `concur solve` and a ladder's `[[methods]]` entry say,
/// and what [`solve`] runs. [`SolveSpec::default`] is `concur solve` with no flags (RRR at its
/// measured defaults); set the fields that differ with `..SolveSpec::default()`.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct SolveSpec {
    #[arg(long, value_enum, default_value_t = Method::Rrr)]
    pub method: Method,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Wall-clock limit in seconds.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Iterations per trial (maps; default 100,000), moves (hill; default 1e8) or iterations
    /// (alns; default 1e7); no cap by default when --time-limit is given.
    #[arg(long)]
    pub max_iters: Option<u64>,
    /// Node limit of the backtracker.
    #[arg(long)]
    pub max_nodes: Option<u64>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    #[command(flatten)]
    #[serde(flatten)]
    pub maps: MapOptions,
    #[command(flatten)]
    #[serde(flatten)]
    pub f1: F1Options,
    #[command(flatten)]
    #[serde(flatten)]
    pub dc: DcOptions,
    #[command(flatten)]
    #[serde(flatten)]
    pub completion: CompleteOptions,
    #[command(flatten)]
    #[serde(flatten)]
    pub tree: TreeOptions,
    #[command(flatten)]
    #[serde(flatten)]
    pub local: LocalOptions,
    /// Which trials get a fixed-point certificate (the command line's `--dump-state`).
    #[arg(skip)]
    #[serde(skip)]
    pub certify: Certify,
    /// With --keep-going: append every solution to this file as one JSON line when it is
    /// found (flushed, so a killed run keeps every solution found).
    #[arg(long, value_name = "FILE", requires = "keep_going")]
    #[serde(skip)]
    pub solutions: Option<PathBuf>,
}

/// The command line with no flags: where [`SolveSpec::default`] reads the defaults.
#[derive(clap::Parser)]
struct Defaults {
    #[command(flatten)]
    spec: SolveSpec,
}

impl Default for SolveSpec {
    /// The command line's defaults (`concur solve PUZZLE` with no flags).
    fn default() -> Self {
        use clap::Parser;
        Defaults::try_parse_from(["concur"]).expect("every option of a solve has a default").spec
    }
}

macro_rules! group_default {
    ($($t:ty => $f:ident),*) => {$(
        impl Default for $t {
            fn default() -> Self {
                SolveSpec::default().$f
            }
        }
    )*};
}
group_default!(MapOptions => maps, F1Options => f1, DcOptions => dc, CompleteOptions => completion,
    TreeOptions => tree, LocalOptions => local);

/// Errors of a solve: a spec that cannot run, a backend that fails, or a claim the exact
/// verifier rejects (an internal error).
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    #[error("{0}")]
    Spec(String),
    #[error(transparent)]
    Limit(#[from] LimitError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Backend(#[from] backend::GpuError),
    #[error("the puzzle has no board that fits its rim: {0}")]
    NoBoard(crate::assign::AssignError),
    #[error("internal error: the {0} claimed an invalid board")]
    InvalidClaim(&'static str),
}

fn spec_err(msg: impl Into<String>) -> SolveError {
    SolveError::Spec(msg.into())
}

impl SolveSpec {
    /// Whether the method is one of the maps (runs on a backend).
    pub fn is_map(&self) -> bool {
        matches!(self.method, Method::Rrr | Method::Dm | Method::Dc)
    }

    fn is_f1(&self) -> bool {
        matches!(self.method, Method::Rrr | Method::Dm)
    }

    /// Refuses options that cannot hold or that belong to another method, before any work.
    pub fn check(&self) -> Result<(), SolveError> {
        if let Some(t) = self.time_limit {
            limits::seconds("--time-limit", t)?;
        }
        let f = &self.f1;
        let only_f1 = [
            (f.restart_stall.is_some() || f.kick.is_some(), "--restart-stall and --kick are options"),
            (f.join_weights.is_some(), "--join-weights is an option"),
            (f.adapt.is_some(), "--adapt is an option"),
            (f.reduced_costs != Precision::F64, "--reduced-costs is an option"),
        ];
        for (given, what) in only_f1 {
            if given && !self.is_f1() {
                return Err(spec_err(format!("{what} of --method rrr and dm")));
            }
        }
        if f.adapt.is_some() && self.certify != Certify::None {
            return Err(spec_err("--dump-state certifies a fixed metric; it does not record --adapt's weights"));
        }
        if f.reduced_costs != Precision::F64 && self.certify != Certify::None {
            return Err(spec_err("--dump-state certifies in f64; it does not replay --reduced-costs f32"));
        }
        if f.reduced_costs != Precision::F64 && f.assign.on_device() {
            return Err(spec_err("--reduced-costs sets the host's assignments; the device kernels work in f32 anyway"));
        }
        if let Some(a) = &f.adapt {
            a.check().map_err(SolveError::Spec)?;
        }
        if let Some(w) = &f.join_weights {
            w.check().map_err(SolveError::Spec)?;
        }
        if self.dc.propagate.is_some() && self.method != Method::Dc {
            return Err(spec_err("--propagate is an option of --method dc"));
        }
        if let Some(t) = self.dc.propagate.filter(|t| !(*t > 0.0 && *t <= 1.0)) {
            return Err(spec_err(format!("--propagate must be in (0, 1], got {t}")));
        }
        if f.kick.is_some() && f.restart_stall == Some(0) {
            return Err(spec_err("--kick is what a stall restart does; --restart-stall 0 turns them off"));
        }
        if f.kick.is_some_and(|k| !(k.is_finite() && k > 0.0)) {
            return Err(spec_err("--kick must be a positive number"));
        }
        if self.threads == Some(0) {
            return Err(spec_err("--threads must be at least 1"));
        }
        if self.is_map() {
            let beta = self.beta();
            if !(beta > 0.0 && beta <= 2.0) {
                return Err(spec_err(format!("--beta must be in (0, 2], got {beta}")));
            }
            if self.maps.trials == 0 {
                return Err(spec_err("--trials must be at least 1"));
            }
        }
        if self.maps.keep_going && !self.is_map() {
            return Err(spec_err("--keep-going is an option of the maps (--method rrr, dm and dc)"));
        }
        if self.maps.keep_going && self.certify != Certify::None {
            return Err(spec_err("--dump-state certifies stop-at-first runs; it does not apply to --keep-going"));
        }
        if self.solutions.is_some() && !self.maps.keep_going {
            return Err(spec_err("--solutions records the solutions of a --keep-going run"));
        }
        if self.method == Method::Scan && self.tree.restart_base == Some(0) {
            return Err(spec_err("--restart-base must be at least 1"));
        }
        Ok(())
    }

    fn time_limit(&self) -> Option<Duration> {
        self.time_limit.map(Duration::from_secs_f64)
    }

    fn beta(&self) -> f32 {
        let default = if self.method == Method::Dc { DcConfig::default().beta } else { MapConfig::default().beta };
        self.maps.beta.unwrap_or(default)
    }

    /// A local search's default cap on moves or iterations: none under a time limit (the
    /// clock bounds the run, as for the maps), else `cap`.
    fn uncapped_or(&self, cap: Option<u64>) -> Option<u64> {
        if self.time_limit.is_some() { None } else { cap }
    }

    /// Iterations per trial of a map: as given, else [`map::default_iters`].
    pub fn map_iters(&self) -> u64 {
        self.max_iters.unwrap_or_else(|| map::default_iters(self.time_limit()))
    }

    /// The F1 configuration of `rrr` or `dm`.
    pub fn map_config(&self) -> MapConfig {
        let f = &self.f1;
        MapConfig {
            kind: if self.method == Method::Dm { MapKind::Dm } else { MapKind::Rrr },
            beta: self.beta(),
            trials: self.maps.trials,
            max_iters: self.map_iters(),
            time_limit: self.time_limit(),
            seed: self.seed,
            edge: f.edge,
            cycle_restart: !self.maps.no_cycle_restart,
            stop_at_first: !self.maps.all_trials,
            warm_start: !f.cold_assign,
            complete: self.completion.completion(),
            keep_fixed_points: self.certify != Certify::None,
            assign: f.assign,
            reduced_costs: f.reduced_costs,
            fused_passes: f.fused_passes,
            first_trial: 0,
            restart_stall: match f.restart_stall {
                Some(0) => None,
                Some(l) => Some(l),
                None => MapConfig::default().restart_stall,
            },
            kick: f.kick,
            join_weights: map::join_weights_or_default(f.join_weights.map(|w| w.0)),
            adapt: f.adapt,
            keep_going: self.maps.keep_going,
            on_solution: None,
        }
    }

    /// The divide-and-concur configuration.
    pub fn dc_config(&self) -> DcConfig {
        let d = &self.dc;
        DcConfig {
            kind: d.dc_map,
            beta: self.beta(),
            trials: self.maps.trials,
            max_iters: self.map_iters(),
            time_limit: self.time_limit(),
            seed: self.seed,
            weights: d.weights,
            gamma: d.gamma,
            layout: d.layout(),
            readout: d.readout,
            stop_at_first: !self.maps.all_trials,
            cycle_restart: !self.maps.no_cycle_restart,
            complete: self.completion.completion(),
            keep_fixed_points: self.certify != Certify::None,
            propagate: d.propagate,
            keep_going: self.maps.keep_going,
            on_solution: None,
        }
    }

    fn backtrack_config(&self) -> BacktrackConfig {
        BacktrackConfig {
            consistency: self.tree.ac,
            seed: self.seed,
            time_limit: self.time_limit(),
            max_nodes: self.max_nodes,
            restarts: !self.tree.no_restarts,
            restart_base: self.tree.restart_base.unwrap_or(BacktrackConfig::default().restart_base),
            order: self.tree.order,
            ..Default::default()
        }
    }

    fn scan_config(&self) -> ScanSolveConfig {
        ScanSolveConfig {
            seed: self.seed,
            time_limit: self.time_limit(),
            max_nodes: self.max_nodes,
            // No count: every core.
            threads: self.threads.unwrap_or(0),
            restarts: !self.tree.no_restarts,
            restart_base: self.tree.restart_base.unwrap_or(ScanSolveConfig::default().restart_base),
            choice: self.tree.tree,
            probes: self.tree.probes,
            row_chain: self.tree.row_chain,
            walker: self.tree.scan_walker,
        }
    }

    fn hill_config(&self) -> HillConfig {
        HillConfig {
            seed: self.seed,
            max_moves: self.max_iters.or(self.uncapped_or(HillConfig::default().max_moves)),
            time_limit: self.time_limit(),
            plateau: self.local.plateau,
            ..Default::default()
        }
    }

    fn alns_config(&self) -> AlnsConfig {
        let d = AlnsConfig::default();
        let l = &self.local;
        AlnsConfig {
            seed: self.seed,
            max_iterations: self.max_iters.or(self.uncapped_or(d.max_iterations)),
            time_limit: self.time_limit(),
            destroy_min: l.destroy_min.unwrap_or(d.destroy_min),
            destroy_max: l.destroy_max.unwrap_or(d.destroy_max),
            operators: l.operators.clone(),
            exact_repair: !l.no_exact_repair,
            restart_after: l.restart_after.unwrap_or(d.restart_after),
            temperature: l.temperature.unwrap_or(d.temperature),
            ..d
        }
    }

    /// Whether `backend` runs this spec (always, for the searches that run on the CPU).
    pub fn supported_by(&self, backend: &dyn Backend) -> Result<(), Unsupported> {
        if self.is_map() && self.maps.keep_going {
            backend.supports_keep_going()?;
        }
        match self.method {
            Method::Rrr | Method::Dm => backend.supports(MapJob::F1(&self.map_config())),
            Method::Dc => backend.supports(MapJob::Dc(&self.dc_config())),
            _ => Ok(()),
        }
    }

    /// "rrr on a 5x5 board" and then `on` (where the batch runs): what a memory check names.
    fn what(&self, puzzle: &Puzzle, on: &str) -> String {
        format!("{} on a {}x{} board{on}", self.method.name(), puzzle.width(), puzzle.height())
    }

    /// Whether the spec's placement of the work fits `backend`.
    fn check_backend(&self, backend: &dyn Backend) -> Result<(), SolveError> {
        if self.is_map() && self.maps.keep_going {
            backend.supports_keep_going().map_err(EngineError::from)?;
        }
        if self.is_f1() && self.f1.assign.on_device() && !backend.assigns_on_device() {
            return Err(spec_err(
                "--assign gpu needs the GPU backend (--backend gpu), which is not running this solve",
            ));
        }
        Ok(())
    }

    /// Checks before the work: the backend fits the spec, and the run fits the memory there
    /// is (the tables of every method, and a map's batch on `backend`).
    pub fn preflight(&self, puzzle: &Puzzle, backend: &dyn Backend) -> Result<(), SolveError> {
        self.check_backend(backend)?;
        let budget = MemoryBudget::here()?;
        let network =
            self.method == Method::Backtrack || self.completion.complete.is_some() || self.dc.propagate.is_some();
        budget.check_tables(&self.what(puzzle, ""), limits::tables(puzzle, network))?;
        let threads = self.threads.unwrap_or_else(rayon::current_num_threads);
        let estimate = match self.method {
            Method::Rrr | Method::Dm => backend.estimate(puzzle, MapJob::F1(&self.map_config()), threads),
            Method::Dc => backend.estimate(puzzle, MapJob::Dc(&self.dc_config()), threads),
            _ => return Ok(()),
        };
        budget.check_trials(&self.what(puzzle, backend.memory_place()), &estimate, self.maps.trials as u64)?;
        Ok(())
    }
}

/// The backend a solve asked for (`--backend`, `--adapter`): `gpu` fails without a usable
/// adapter or when the spec is CPU-only; `auto` falls back to the CPU and says why in the
/// note. The searches that run only on the CPU get the CPU backend, whatever was asked.
pub fn pick_backend(
    spec: &SolveSpec,
    choice: BackendChoice,
    adapter: Option<&str>,
) -> Result<backend::Selected, SolveError> {
    let cpu = |note| backend::Selected { backend: Box::new(backend::CpuBackend), note };
    if !spec.is_map() || choice == BackendChoice::Cpu {
        return Ok(cpu(None));
    }
    let sel = backend::select(choice, adapter)?;
    match spec.supported_by(sel.backend.as_ref()) {
        Ok(()) => Ok(sel),
        Err(e) if choice == BackendChoice::Gpu => Err(EngineError::from(e).into()),
        Err(e) => Ok(cpu(Some(format!("backend auto: cpu ({e})")))),
    }
}

/// What [`solve`] reports as it goes: a map's progress after each round, or a tree search's.
pub enum Event<'a> {
    Map(&'a Progress),
    Scan(&'a ScanProgress),
}

/// A finished solve: its report, and the facts a ladder records.
#[derive(Debug)]
pub struct Solved {
    pub report: SolveReport,
    /// Work spent: to the solution when solved, else the whole budget (a map's iterations
    /// over its trials, a search's nodes, a local search's moves or iterations).
    pub work: u64,
    pub work_unit: &'static str,
    /// Rate mode: the verified solutions of the run (None: a run that stops at its first).
    pub solutions: Option<u64>,
    /// What found the solution (`map`, `map+ac`, `scan`, ...); None when unsolved.
    pub mechanism: Option<String>,
    /// (seconds, new best score), for the maps and the local searches.
    pub trace: Vec<(f64, usize)>,
    /// The certificates [`SolveSpec::certify`] asked for.
    pub certificates: Vec<(usize, Certificate)>,
    /// A certificate that could not be made (the run stands; the caller says so).
    pub certificate_error: Option<String>,
}

/// Runs `spec` on `puzzle`: the maps on `backend`, the searches on the CPU. `progress` hears
/// a map's rounds and a scan's reports. With `spec.threads`, the work runs on a pool of that
/// many threads.
pub fn solve(
    puzzle: &Puzzle,
    spec: &SolveSpec,
    backend: &dyn Backend,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<Solved, SolveError> {
    spec.check()?;
    spec.check_backend(backend)?;
    match spec.threads {
        Some(n) if spec.is_map() => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| spec_err(format!("cannot start {n} threads: {e}")))?
            .install(|| run(puzzle, spec, backend, progress)),
        _ => run(puzzle, spec, backend, progress),
    }
}

fn run(
    puzzle: &Puzzle,
    spec: &SolveSpec,
    backend: &dyn Backend,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<Solved, SolveError> {
    let seed = spec.seed;
    let solved = match spec.method {
        Method::Rrr | Method::Dm | Method::Dc => return run_map(puzzle, spec, backend, progress),
        Method::Backtrack => {
            let (board, ending, stats) = backtrack::solve(puzzle, spec.backtrack_config());
            let report = SolveReport::from_backtrack(puzzle, board, ending, &stats, spec.tree.ac, seed);
            Solved::of(report, stats.nodes, "nodes", Vec::new())
        }
        Method::Scan => {
            let cfg = spec.scan_config();
            let progress = std::sync::Mutex::new(progress);
            let r = scan::solve(puzzle, &cfg, &|p: &ScanProgress| {
                if let Ok(mut f) = progress.lock() {
                    f(Event::Scan(p));
                }
            });
            let report = SolveReport::from_scan(puzzle, &r, &cfg);
            Solved::of(report, r.nodes, "nodes", Vec::new())
        }
        Method::Hill => {
            let r = hill::hill_climb(puzzle, &spec.hill_config());
            let details = serde_json::to_value(&r).unwrap_or_default();
            let report = SolveReport::from_local(puzzle, Method::Hill, &r, details);
            Solved::of(report, r.moves, "moves", r.trace.clone())
        }
        Method::Alns => {
            let r = alns::alns(puzzle, &spec.alns_config());
            let details = serde_json::to_value(&r).unwrap_or_default();
            let report = SolveReport::from_local(puzzle, Method::Alns, &r.local, details);
            Solved::of(report, r.iterations, "iterations", r.local.trace.clone())
        }
    };
    Ok(solved)
}

impl Solved {
    /// A search's result: the search itself is the mechanism of its solution.
    fn of(report: SolveReport, work: u64, unit: &'static str, trace: Vec<(f64, usize)>) -> Self {
        let mechanism = report.solved.then(|| report.method.name().to_string());
        Solved {
            report,
            work,
            work_unit: unit,
            solutions: None,
            mechanism,
            trace,
            certificates: Vec::new(),
            certificate_error: None,
        }
    }
}

/// A map on the backend: the batch, the exact check of its claim, the report.
fn run_map(
    puzzle: &Puzzle,
    spec: &SolveSpec,
    backend: &dyn Backend,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<Solved, SolveError> {
    // New best scores, from the progress after each round.
    let mut trace: Vec<(f64, usize)> = Vec::new();
    let mut heard = |p: &Progress| {
        if trace.last().is_none_or(|&(_, s)| p.best_score > s) {
            trace.push((p.elapsed_s, p.best_score));
        }
        progress(Event::Map(p));
    };
    let no_board = |e: EngineError| match e {
        EngineError::Assign(a) => SolveError::NoBoard(a),
        e => SolveError::Engine(e),
    };
    let sink = match &spec.solutions {
        Some(path) if spec.maps.keep_going => Some(solution_sink(puzzle, spec, path)?),
        _ => None,
    };
    let (batch, report) = if spec.method == Method::Dc {
        let mut cfg = spec.dc_config();
        cfg.on_solution = sink;
        let batch = backend.solve(puzzle, MapJob::Dc(&cfg), spec.certify, &mut heard).map_err(no_board)?;
        check_claim(puzzle, &batch.result)?;
        let params = serde_json::json!({
            "beta": crate::report::short(cfg.beta), "trials": cfg.trials, "map": cfg.kind, "weights": cfg.weights,
            "hybrid": cfg.layout.is_hybrid(), "readout": cfg.readout, "replica_bytes": dc::replica_bytes(puzzle, cfg.layout),
            "propagate": cfg.propagate,
        });
        let report = SolveReport::from_map(puzzle, Method::Dc, &batch.result, spec.seed, params);
        (batch, report)
    } else {
        let mut cfg = spec.map_config();
        cfg.assign = backend.f1_assign(&cfg);
        cfg.on_solution = sink;
        let batch = backend.solve(puzzle, MapJob::F1(&cfg), spec.certify, &mut heard).map_err(no_board)?;
        check_claim(puzzle, &batch.result)?;
        let report = SolveReport::from_f1(puzzle, spec.method, &batch.result, &cfg);
        (batch, report)
    };
    let Batch { result, certificates, certificate_error } = batch;
    let mut report = report;
    report.details.insert("backend".into(), serde_json::Value::String(backend.label()));
    let work = result.trials.iter().map(|t| t.solved_at.unwrap_or(t.iterations)).sum();
    let mechanism = result
        .solution
        .as_ref()
        .map(|(t, _, _)| result.trials[*t].solved_by.unwrap_or(Mechanism::Map).as_str().to_string());
    let solutions = result.rate.as_ref().map(|r| r.solutions.len() as u64);
    Ok(Solved { report, work, work_unit: "iterations", solutions, mechanism, trace, certificates, certificate_error })
}

/// The sink of `--solutions`: each solution appended to `path` as one JSON line (the
/// record of [`crate::batch::Found`] with the run's method, seed and board size), flushed.
fn solution_sink(puzzle: &Puzzle, spec: &SolveSpec, path: &std::path::Path) -> Result<SolutionSink, SolveError> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| spec_err(format!("cannot open {} for the solutions: {e}", path.display())))?;
    let head = serde_json::json!({
        "method": spec.method.name(), "seed": spec.seed, "trials": spec.maps.trials,
        "width": puzzle.width(), "height": puzzle.height(),
    });
    Ok(SolutionSink::new(move |found| {
        let mut line = head.clone();
        if let (Some(o), Ok(serde_json::Value::Object(f))) = (line.as_object_mut(), serde_json::to_value(found)) {
            o.extend(f);
        }
        let text = line.to_string() + "\n";
        file.write_all(text.as_bytes()).and_then(|()| file.flush()).map_err(|e| e.to_string())
    }))
}

/// Never report a claim the exact verifier has not seen.
fn check_claim(puzzle: &Puzzle, result: &MapResult) -> Result<(), SolveError> {
    match &result.solution {
        Some((_, _, board)) if !verify::check(puzzle, board).valid => Err(SolveError::InvalidClaim("map")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_command_lines() {
        let d = SolveSpec::default();
        assert_eq!(d.method, Method::Rrr);
        assert_eq!(d.maps.trials, 8);
        assert_eq!(d.tree.ac, Consistency::Ac3);
        assert_eq!(d.local.plateau, HillConfig::default().plateau);
        assert_eq!(d.dc.layout(), DcLayout::Hybrid);
        assert!(d.completion.completion().is_none());
        // The option groups' defaults and a ladder entry with nothing but a method agree.
        let from_json: SolveSpec = serde_json::from_str(r#"{"method": "rrr"}"#).unwrap();
        assert_eq!(from_json, d);
        let c = d.map_config();
        let m = MapConfig::default();
        assert_eq!(
            (c.beta, c.trials, c.max_iters, c.restart_stall, c.join_weights),
            (m.beta, m.trials, m.max_iters, m.restart_stall, m.join_weights)
        );
        let completion = CompleteOptions { complete: Some(4), ..Default::default() }.completion().unwrap();
        let want = Completion::default();
        assert_eq!(
            (completion.k, completion.stall, completion.radius, completion.max_nodes),
            (want.k, want.stall, want.radius, want.max_nodes)
        );
    }

    #[test]
    fn join_weights_read_both_ways() {
        assert_eq!("1,1,4".parse::<JoinWeights>(), Ok(JoinWeights([1.0, 1.0, 4.0])));
        assert!("1,1".parse::<JoinWeights>().is_err());
        assert!("1,0,4".parse::<JoinWeights>().is_err());
        let s: SolveSpec = serde_json::from_str(r#"{"method": "rrr", "join_weights": [1, 2, 4]}"#).unwrap();
        assert_eq!(s.f1.join_weights, Some(JoinWeights([1.0, 2.0, 4.0])));
        let bad: SolveSpec = serde_json::from_str(r#"{"method": "rrr", "join_weights": [0, 2, 4]}"#).unwrap();
        assert!(bad.check().is_err());
    }

    #[test]
    fn options_of_another_method_are_refused() {
        let mut s = SolveSpec { method: Method::Dc, ..Default::default() };
        s.f1.join_weights = Some(JoinWeights([1.0, 1.0, 2.0]));
        assert!(s.check().is_err());
        let mut s = SolveSpec { method: Method::Rrr, ..Default::default() };
        s.dc.propagate = Some(0.5);
        assert!(s.check().is_err());
        let s = SolveSpec { method: Method::Rrr, threads: Some(0), ..Default::default() };
        assert!(s.check().is_err());
    }

    #[test]
    fn f32_reduced_costs_belong_to_the_maps_host_assignments() {
        let s: SolveSpec = serde_json::from_str(r#"{"method": "rrr", "reduced_costs": "f32"}"#).unwrap();
        assert_eq!(s.f1.reduced_costs, Precision::F32);
        assert!(s.check().is_ok());
        assert_eq!(s.map_config().reduced_costs, Precision::F32);
        let mut s = s;
        s.method = Method::Alns;
        assert!(s.check().is_err());
        let mut s = SolveSpec { method: Method::Dm, ..Default::default() };
        s.f1.reduced_costs = Precision::F32;
        s.f1.assign = AssignOn::GpuJv;
        assert!(s.check().is_err());
        assert_eq!(SolveSpec::default().f1.reduced_costs, Precision::F64);
    }
}
