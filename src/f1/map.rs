//! The iterated maps of F1 (ARCHITECTURE.md §4): RRR and the general-beta difference map, run as a
//! batch of independent trials with rayon.
//!
//! - RRR (Elser): `x' = x + beta (P_P(2 P_E x - x) - P_E x)`.
//! - Difference map (Elser, Rankenburg & Thibault 2007), with `a = P_P`, `b = P_E`:
//!   `y' = y + beta [P_a(f_b(y)) - P_b(f_a(y))]`, `f_i(y) = (1 + g_i) P_i(y) - g_i y`,
//!   `g_a = -1/beta`, `g_b = 1/beta`. At beta = 1 both are Douglas-Rachford.
//!
//! Every iteration the board chosen by `P_P` is a real permutation: it is scored exactly,
//! the best board is kept, and a trial stops when it matches every join (then the full
//! exact verifier confirms it). Exact limit cycles are detected by hashing `x` every 64
//! iterations against the last 16 hashes; a trial caught in one restarts from a fresh
//! random point (ARCHITECTURE.md §8). That rule, the per-trial record, the stop rules and
//! the result are the batch core's ([`crate::batch`]), shared with F2 and the GPU drivers.
//!
//! Batch state is flat and trial-major; scratch belongs to one worker and is reused, so the
//! iteration loop never allocates.

use crate::assign::{AssignError, Precision, WarmState};
use crate::batch::BatchError;
use crate::batch::{
    self, Between, Completion, Floats, MapKind, MapResult, MapRun, Mechanism, Progress, ROUND, SavedBatch,
    SnapshotError, SnapshotIdentity, Span, Trial, TrialSummary, chunk_size, completer, identity_option,
};
use crate::cancel::{Cancel, Deadline};
use crate::f1::project::{Assigners, EdgeProjection, F1, LANES, LaneSideTable, LaneVec, PieceScratch};
use crate::hash::OFFSET;
use crate::limits::Estimate;
use crate::limits::memory::{ALLOC, Shape, TRIAL_BOOKKEEPING, WORD, slack, workers};
use crate::puzzle::{Board, Puzzle};
use crate::search::backtrack::Backtracker;
use crate::verify::{self, Network};
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Parameters of a batched run.
#[derive(Clone, Debug)]
pub struct MapConfig {
    /// RRR or the general-beta difference map.
    pub kind: MapKind,
    /// The step size.
    pub beta: f32,
    /// How the batch runs: its trials, their iteration budget, the time limit, the seed,
    /// where rate mode's solutions go, the token, and whether a stop saves the batch.
    pub run: MapRun,
    /// The edge projection: P_E, or its one-colour relaxation P_E1.
    pub edge: EdgeProjection,
    /// Do not restart trials caught in an exact limit cycle (`--no-cycle-restart`).
    pub no_cycle_restart: bool,
    /// Run every trial to its budget (`--all-trials`) instead of stopping the whole batch at
    /// the first verified solution.
    pub all_trials: bool,
    /// Solve every assignment cold (`--cold-assign`) instead of warm-starting it from the
    /// trial's previous duals.
    pub cold_assign: bool,
    /// Arc-consistent completion of near-fixed points (None: the map alone).
    pub complete: Option<Completion>,
    /// Keep the iterate at which each trial solved (for certificates; one copy per step).
    pub keep_fixed_points: bool,
    /// CPU backend, RRR with the average edge projection: trials a worker advances in
    /// lock-step, their edge passes and piece weights computed together in vector lanes
    /// ([`F1::reflect_edges_lanes`], [`F1::piece_weights_minor`]), 1 to [`LANES`]. 1 runs one trial at a time, the
    /// reference path; every value gives the same iterates bit for bit. Default [`LANES`].
    pub trial_lanes: usize,
    /// Where the GPU backend solves the three class assignments (the CPU backend always
    /// solves them on the host).
    pub assign: AssignOn,
    /// The precision of the host assignments' reduced costs (`f64`, the reference, or `f32`).
    pub reduced_costs: Precision,
    /// GPU device loop, RRR: one fused pass per trial for update, score, track, edges and
    /// weights (`shaders/f1_step.wgsl`) where its state fits the device's workgroup memory;
    /// the same iterates as the separate passes. The CPU backend ignores it.
    pub fused_passes: bool,
    /// The batch's trials are trials `first_trial..first_trial + trials` of the run's seeded
    /// stream (a share of a batch split over several devices; 0 otherwise). GPU backend.
    pub first_trial: usize,
    /// Restart a trial after this many iterations without a new best score since its last
    /// (re)start (None: never). The restart draws a fresh random point, or kicks with `kick`.
    pub restart_stall: Option<u64>,
    /// With `restart_stall`: instead of a fresh point, add `kick * (u - 1/2)` to every
    /// coordinate of x, u uniform in [0, 1) (a perturbation of size about `kick / sqrt 12`
    /// per coordinate).
    pub kick: Option<f32>,
    /// A weighted metric between the constraint classes ([`crate::f1::project::join_slot_weights`]):
    /// the weights of the side slots of frame-frame, frame-inner and inner-inner joins. P_P
    /// then picks the board nearest in that metric; P_E is unchanged. None: the uniform
    /// metric. Default [`DEFAULT_JOIN_WEIGHTS`] (the best measured, BENCHMARKS.md).
    pub join_weights: Option<[f32; 3]>,
    /// An adaptive metric on top of the join weights: each join's weight grows while the
    /// board P_P picks leaves it unmatched and decays back to its class weight
    /// ([`AdaptiveWeights`]). None: the fixed metric. CPU backend only.
    pub adapt: Option<AdaptiveWeights>,
    /// Rate mode: a solution does not stop the batch; it is verified and recorded, and its
    /// trial goes on from a fresh point of its own seeded stream, until the time limit or
    /// every trial's `max_iters` (`batch::Rounds::keep_going`). The outcome's
    /// [`MapResult::rate`] lists every solution. `all_trials` is then moot.
    pub keep_going: bool,
    /// Continue the run saved in this snapshot (an earlier part of the same run, stopped by
    /// its token) instead of starting every trial afresh. [`F1Map::new`] starts afresh all
    /// the same; [`F1Map::restore`] continues it (the CPU backend and [`solve`] do). The CPU
    /// backend only (the capability table refuses it on the GPU).
    pub resume: Option<Arc<F1Snapshot>>,
}

impl MapConfig {
    /// The trials a chunk of a batch of `trials` advances in lock-step: `trial_lanes` within
    /// 1..=[`LANES`], no more than the batch's.
    fn lanes_for(&self, trials: usize) -> usize {
        self.trial_lanes.clamp(1, LANES).min(trials.max(1))
    }
}

/// Per-join weights that adapt to the joins that stay unmatched, after the adaptive
/// constraint weights of Gravel & Elser's divide and concur and the clause weighting of SAT
/// local search (Morris's breakout; Hutter, Tompkins & Hoos's scaling and probabilistic
/// smoothing): after every iteration, with `w0` the join's class weight
/// ([`MapConfig::join_weights`]),
///
/// `w <- min(w0 + (1 - decay) (w - w0) + rate w0 [join unmatched], max w0)`,
///
/// so a join unmatched a fraction `f` of the time settles near `w0 (1 + f rate / decay)`.
/// Both sides of a join weigh the same, so P_E is unchanged and P_P picks the board nearest in
/// the trial's current metric, as with the class weights.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdaptiveWeights {
    /// What an unmatched join's weight gains per iteration, as a fraction of its class weight.
    pub rate: f32,
    /// The fraction of its excess over the class weight that a join's weight loses per iteration.
    pub decay: f32,
    /// The cap on a join's weight, as a multiple of its class weight.
    pub max: f32,
}

impl std::str::FromStr for AdaptiveWeights {
    type Err = String;
    /// `RATE,DECAY,MAX`, e.g. `0.05,0.01,4`.
    fn from_str(s: &str) -> Result<Self, String> {
        let v: Vec<f32> = s
            .split(',')
            .map(|t| t.trim().parse::<f32>().map_err(|_| format!("{s:?}: expected RATE,DECAY,MAX")))
            .collect::<Result<_, _>>()?;
        let [rate, decay, max] = v[..] else { return Err(format!("{s:?}: expected RATE,DECAY,MAX")) };
        let a = AdaptiveWeights { rate, decay, max };
        a.check()?;
        Ok(a)
    }
}

impl AdaptiveWeights {
    /// Rate and max positive, decay in (0, 1], max at least 1, all finite.
    pub fn check(&self) -> Result<(), String> {
        let ok = self.rate.is_finite()
            && self.rate > 0.0
            && self.decay > 0.0
            && self.decay <= 1.0
            && self.max.is_finite()
            && self.max >= 1.0;
        if ok { Ok(()) } else { Err(format!("adaptive weights {self:?}: need rate > 0, 0 < decay <= 1, max >= 1")) }
    }
}

/// Where the GPU backend's F1 assignments run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum AssignOn {
    /// The backend's fastest measured placement that the run can use
    /// (`backend::capability::resolve_assign`): the host JV on the CPU backend; on the GPU
    /// backend the device JV (`gpu-jv`), or the host JV where the run needs the host every
    /// iteration (`--complete`, `--reduced-costs f32`).
    #[default]
    Auto,
    /// The host's Jonker-Volgenant solver (rayon over trials); the weights come up every
    /// iteration. The reference.
    Cpu,
    /// The device's shortest-augmenting-path solver (Jonker-Volgenant, `shaders/jv.wgsl`),
    /// exact in f32, one 64-thread workgroup per (trial, class) problem. The F1 loop then runs
    /// blocks of K iterations with no host wait; only a few bytes per trial come up.
    /// `gpu` is accepted for it.
    #[cfg_attr(feature = "clap", value(name = "gpu-jv", alias = "gpu"))]
    #[serde(alias = "gpu")]
    GpuJv,
    /// The same solver with one subgroup per problem for the classes up to 64 cells
    /// (`shaders/jv_sg.wgsl`: columns in registers, no workgroup barrier), the workgroup
    /// kernel for larger ones; the same assignments bit for bit. Without subgroup operations
    /// on the device it runs the workgroup kernel.
    #[cfg_attr(feature = "clap", value(name = "gpu-jv-sg"))]
    GpuJvSg,
    /// `gpu-jv-sg` with each problem's cost block staged once in workgroup memory where it
    /// fits (fewer problems per workgroup at 8x8); the same assignments bit for bit.
    #[cfg_attr(feature = "clap", value(name = "gpu-jv-sg-staged"))]
    GpuJvSgStaged,
    /// The device auction (Bertsekas, `shaders/assign.wgsl`), exact for weights quantised to
    /// within n quanta, in the same device loop; a trial whose auction does not finish in a
    /// bounded number of rounds restarts alone.
    GpuAuction,
}

impl AssignOn {
    /// Whether the assignments run on the device (`auto` is resolved by the backend first).
    pub fn on_device(self) -> bool {
        matches!(self, AssignOn::GpuJv | AssignOn::GpuJvSg | AssignOn::GpuJvSgStaged | AssignOn::GpuAuction)
    }
}

/// The default metric of RRR and the difference map: the sides of joins between two inner
/// cells weigh 4, all others 1. Measured against the uniform metric (BENCHMARKS.md, "Lever:
/// a weighted metric"): iterations per solution fall 2.3x at 5x5, 4.2x at 6x6 and 10x at
/// 7x7 (set 1, beta 0.7), and 5-7x on two generated 7x7s.
pub const DEFAULT_JOIN_WEIGHTS: [f32; 3] = [1.0, 1.0, 4.0];

/// The default stall restart of RRR and the difference map: a trial that goes this many
/// iterations without beating its best score since its last (re)start starts over from a
/// fresh point. Under the weighted metric a few trials get trapped (at 6x6 about one in 20 to
/// 80); the others' run lengths are memoryless, so the restart costs them only the climb
/// back (measured within the noise at 6x6 and 7x7, BENCHMARKS.md).
pub const DEFAULT_RESTART_STALL: u64 = 100_000;

/// Scratch of one worker: projection buffers and assignment matrices.
struct Worker<'p> {
    /// The iterate before the current step (with `keep_fixed_points`).
    prev: Vec<f32>,
    /// Arc-consistent completion, when enabled.
    completer: Option<Backtracker<'p>>,
    pe: Vec<f32>,
    r: Vec<f32>,
    pp: Vec<f32>,
    pieces: PieceScratch,
    board: Vec<u32>,
    board2: Vec<u32>,
}

/// The scratch of one parallel chunk: a [`Worker`] per trial it advances in lock-step
/// ([`MapConfig::trial_lanes`]), the lanes' states and reflections, trial-minor
/// ([`F1::reflect_edges_lanes`]), and their weights, lane-major
/// ([`F1::piece_weights_minor`]); all empty with one lane.
struct Crew<'p> {
    lanes: Vec<Worker<'p>>,
    x: Vec<LaneVec>,
    r: Vec<LaneVec>,
    w: Vec<f32>,
    sides: LaneSideTable,
}

/// The F1 engine for one puzzle: tables plus the batch.
pub struct F1Map<'a> {
    puzzle: &'a Puzzle,
    f1: F1,
    cfg: MapConfig,
    x: Vec<f32>,
    status: Vec<F1Trial>,
    asg: Vec<Assigners>,
    /// Best board per trial (candidate ids), trial-major.
    best_boards: Vec<u32>,
    /// Per side slot, the class weight of the metric P_P works in
    /// (`MapConfig::join_weights`; all ones under `adapt` without them).
    base_w: Option<Vec<f32>>,
    /// Per trial and side slot, the adaptive weights (`MapConfig::adapt`), trial-major;
    /// one unused word per trial without them.
    adapt_w: Vec<f32>,
    /// The stepper's workers ([`F1Map::step`]), kept from one step to the next.
    steppers: Vec<Crew<'a>>,
    /// What it keeps between runs: rate mode's bookkeeping, a restored part, a stopped run's
    /// snapshot.
    between: Between<F1Snapshot>,
}

/// One F1 trial's bookkeeping; its own state is the iterate whose projections gave its
/// solution (with `keep_fixed_points`).
type F1Trial = Trial<Option<Vec<f32>>>;

impl<'a> F1Map<'a> {
    /// The batch of `cfg.trials` trials (at least one), each at a random start from its own stream;
    /// an error when no board fits the puzzle's rim.
    pub fn new(puzzle: &'a Puzzle, cfg: MapConfig) -> Result<Self, AssignError> {
        let f1 = F1::new(puzzle)?;
        let dim = f1.dim();
        let trials = cfg.run.trials.max(1);
        let mut map = F1Map {
            puzzle,
            x: vec![0.0; trials * dim],
            status: (0..trials).map(|t| Trial::new(cfg.run.seed, t, None)).collect(),
            asg: (0..trials).map(|_| f1.assigners_in(cfg.reduced_costs)).collect(),
            best_boards: vec![0; trials * puzzle.cells()],
            base_w: None,
            adapt_w: Vec::new(),
            steppers: Vec::new(),
            between: Between::default(),
            f1,
            cfg,
        };
        map.base_w = match (map.cfg.join_weights, map.cfg.adapt) {
            (Some(w), _) => Some(crate::f1::project::join_slot_weights(puzzle, w)),
            (None, Some(_)) => Some(crate::f1::project::join_slot_weights(puzzle, [1.0; 3])),
            (None, None) => None,
        };
        map.adapt_w = match (&map.base_w, map.cfg.adapt) {
            (Some(base), Some(_)) => base.repeat(trials),
            // One unused word per trial keeps the batch's chunks uniform.
            _ => vec![0.0; trials],
        };
        for (x, st) in map.x.chunks_mut(dim).zip(&mut map.status) {
            randomize(x, &mut st.rng);
        }
        Ok(map)
    }

    /// The projections the batch runs.
    pub fn f1(&self) -> &F1 {
        &self.f1
    }

    /// The iterate to certify for trial `t`: the one whose projections gave its solution
    /// when the map solved it (with `keep_fixed_points`), else its current state.
    pub fn certified_state(&self, t: usize) -> &[f32] {
        self.status[t].extra.as_deref().unwrap_or_else(|| self.state(t))
    }

    /// The batch's configuration.
    pub fn config(&self) -> &MapConfig {
        &self.cfg
    }

    /// The state of trial `t`.
    pub fn state(&self, t: usize) -> &[f32] {
        let dim = self.f1.dim();
        &self.x[t * dim..(t + 1) * dim]
    }

    /// Runs the batch until a verified solution (without `all_trials`), every trial's
    /// iteration budget, or the time limit; `progress` is called after every round.
    ///
    /// After [`F1Map::restore`], the run continues the saved one; its counters count what it
    /// does after the restore (`batch::MapResult::resumed`). With `save_at_stop`, a tripped
    /// token stops the run only between rounds, every trial having finished the round it was
    /// in, and the run keeps a snapshot of the batch there ([`F1Map::take_snapshot`]) unless
    /// it stopped for another reason too (a solution, its budget, its time limit).
    pub fn run(&mut self, progress: impl FnMut(&Progress)) -> MapResult {
        let rules = batch::StopRules::new(&self.cfg.run, self.cfg.keep_going, self.cfg.all_trials);
        let crews = self.crews(self.status.len().div_ceil(self.sizes().per));
        batch::run(&mut Running { map: self, crews }, &rules, progress)
    }

    /// Calls `f` for every group of a chunk's trials (up to [`MapConfig::trial_lanes`] of
    /// them, in order) with the chunk's scratch, the chunks in parallel; a chunk stops at the
    /// first call that returns false.
    fn for_each_group(
        &mut self,
        crews: &mut [Crew<'a>],
        f: impl Fn(&Ctx<'_>, &mut Group<'_>, &mut Crew<'a>) -> bool + Sync,
    ) {
        let Sizes { dim, cells, max_score, trials, per } = self.sizes();
        let base = self.base_w.as_deref();
        let ctx = Ctx { f1: &self.f1, puzzle: self.puzzle, cfg: &self.cfg, base, max_score };
        // Words per trial of the adaptive weights, and how many of them a trial uses.
        let aw_len = self.adapt_w.len() / trials;
        let aw_used = if self.cfg.adapt.is_some() && base.is_some() { aw_len } else { 0 };
        self.x
            .par_chunks_mut(per * dim)
            .zip(self.status.par_chunks_mut(per))
            .zip(self.asg.par_chunks_mut(per))
            .zip(self.best_boards.par_chunks_mut(per * cells))
            .zip(self.adapt_w.par_chunks_mut(per * aw_len))
            .zip(crews.par_iter_mut())
            .for_each(|(((((xs, sts), asgs), bests), aws), crew)| {
                let l = crew.lanes.len();
                for ((((x, st), asg), best), aw) in xs
                    .chunks_mut(l * dim)
                    .zip(sts.chunks_mut(l))
                    .zip(asgs.chunks_mut(l))
                    .zip(bests.chunks_mut(l * cells))
                    .zip(aws.chunks_mut(l * aw_len))
                {
                    let mut group = Group { x, st, asg, best, aw, dim, cells, aw_len, aw_used };
                    if !f(&ctx, &mut group, crew) {
                        break;
                    }
                }
            });
    }

    /// `n` chunks' scratch: allocated once per call of [`F1Map::run`], kept for
    /// [`F1Map::step`].
    fn crews(&self, n: usize) -> Vec<Crew<'a>> {
        let (dim, wl) = (self.f1.dim(), self.f1.weight_len());
        let lanes = self.lanes();
        let shared = if lanes > 1 { LANES } else { 0 };
        (0..n)
            .map(|_| Crew {
                lanes: self.workers(lanes),
                x: vec![LaneVec::ZERO; if lanes > 1 { dim } else { 0 }],
                r: vec![LaneVec::ZERO; if lanes > 1 { dim } else { 0 }],
                w: vec![0.0; shared * wl],
                sides: LaneSideTable::default(),
            })
            .collect()
    }

    /// Trials a chunk advances in lock-step: [`MapConfig::trial_lanes`] within 1..=[`LANES`],
    /// no more than the batch's.
    fn lanes(&self) -> usize {
        self.cfg.lanes_for(self.status.len())
    }

    /// `n` workers' scratch.
    fn workers(&self, n: usize) -> Vec<Worker<'a>> {
        let (dim, cells, puzzle) = (self.f1.dim(), self.puzzle.cells(), self.puzzle);
        let network = self.cfg.complete.as_ref().map(|_| Arc::new(Network::new(puzzle)));
        (0..n)
            .map(|_| Worker {
                pe: vec![0.0; dim],
                r: vec![0.0; dim],
                pp: vec![0.0; dim],
                pieces: self.f1.piece_scratch(),
                board: vec![0; cells],
                board2: vec![0; cells],
                prev: vec![0.0; if self.cfg.keep_fixed_points { dim } else { 0 }],
                completer: self
                    .cfg
                    .complete
                    .as_ref()
                    .map(|c| completer(puzzle, network.as_ref().expect("built when completion is on"), c)),
            })
            .collect()
    }

    /// **The stepper**: advances every trial by `k` iterations (fewer at `max_iters`) as
    /// [`F1Map::run`] runs them: the same iteration, the same stall, cycle and non-finite
    /// restarts from the trial's own stream, the rounds cut where `run` cuts them
    /// (`batch::Span::until`). Stepping a batch `n` iterations, in steps of any sizes, leaves the
    /// state a run of `n` iterations per trial leaves (with `all_trials`), bit for bit,
    /// so the states and their certificates ([`crate::certify::make`]) are the command line's
    /// for the same seed. No stop rule of the batch applies: a trial that solves stands still
    /// (as in `run`, after its solving iteration), the others go on. Progress, rate mode and
    /// the time limit are `run`'s only. `cancel` ends the step at the next round of each trial
    /// (the trials may then stand at different iterations); returns false when it did.
    pub fn step(&mut self, k: u64, cancel: &Cancel) -> bool {
        let Sizes { trials, per, .. } = self.sizes();
        let mut steppers = std::mem::take(&mut self.steppers);
        if steppers.len() != trials.div_ceil(per) || steppers.first().is_some_and(|c| c.lanes.len() != self.lanes()) {
            steppers = self.crews(trials.div_ceil(per));
        }
        let max_iters = self.cfg.run.max_iters;
        self.for_each_group(&mut steppers, |ctx, group, crew| {
            let targets: [u64; LANES] =
                std::array::from_fn(|l| group.st.get(l).map_or(0, |st| st.iterations.saturating_add(k)));
            let targets = &targets[..group.len()];
            let behind =
                |g: &Group<'_>| g.st.iter().zip(targets).any(|(st, &t)| st.is_active(max_iters) && st.iterations < t);
            while behind(group) && !cancel.is_cancelled() {
                run_group_round(ctx, group, crew, Some(targets));
            }
            true
        });
        self.steppers = steppers;
        !cancel.is_cancelled()
    }

    /// Every trial's state, trial-major (`trials * dim` floats, [`F1::dim`] each).
    pub fn states(&self) -> &[f32] {
        &self.x
    }

    /// Puts trial `t` at the state `x` (`dim` floats), as a restart would: its next
    /// assignments start cold and its cycle memory is cleared; its counters and best board
    /// stay. Panics when `x` is not `dim` long.
    pub fn set_state(&mut self, t: usize, x: &[f32]) {
        let dim = self.f1.dim();
        self.x[t * dim..(t + 1) * dim].copy_from_slice(x);
        self.status[t].warm = false;
        self.status[t].forget_cycles();
    }

    /// What each trial has done so far, as a run's result reports it.
    pub fn trial_summaries(&self) -> Vec<TrialSummary> {
        self.status.iter().map(Trial::summary).collect()
    }

    /// Per class (size, counts), what the host assignment solvers of all trials did so far
    /// (see [`crate::assign::AssignStats`]).
    pub fn assign_stats(&self) -> Vec<(usize, crate::assign::AssignStats)> {
        let mut out = self.f1.assigners().stats();
        for a in &self.asg {
            for (o, (_, s)) in out.iter_mut().zip(a.stats()) {
                o.1.add(&s);
            }
        }
        out
    }

    /// The batch's sizes, as `run` and `step` use them.
    fn sizes(&self) -> Sizes {
        let trials = self.status.len();
        Sizes {
            dim: self.f1.dim(),
            cells: self.puzzle.cells(),
            max_score: self.puzzle.max_score(),
            trials,
            // Whole groups of lanes per chunk.
            per: chunk_size(trials).next_multiple_of(self.lanes()),
        }
    }

    /// The best board of trial `t` (its solution, when it solved).
    pub fn best_board(&self, t: usize) -> Board {
        batch::best_board(self.puzzle, &self.best_boards, t, |b| self.f1.placements(b))
    }
}

/// An F1 batch in the middle of [`F1Map::run`], with the run's workers.
struct Running<'m, 'a> {
    map: &'m mut F1Map<'a>,
    crews: Vec<Crew<'a>>,
}

impl batch::HostBatch for Running<'_, '_> {
    type Extra = Option<Vec<f32>>;

    fn trials(&self) -> &[F1Trial] {
        &self.map.status
    }

    fn round(&mut self, until: &Deadline, cut: &AtomicBool) {
        self.map.for_each_group(&mut self.crews, |ctx, group, crew| {
            if until.passed() {
                cut.store(true, Ordering::Relaxed);
                return false;
            }
            run_group_round(ctx, group, crew, None);
            true
        });
    }

    fn harvest(&mut self, rounds: &mut batch::Rounds) {
        let map = &mut *self.map;
        let (puzzle, f1, dim) = (map.puzzle, &map.f1, map.f1.dim());
        let best = &map.best_boards;
        for t in rounds.harvest(puzzle, &mut map.status, |t| batch::best_board(puzzle, best, t, |b| f1.placements(b))) {
            randomize(&mut map.x[t * dim..(t + 1) * dim], &mut map.status[t].rng);
        }
    }
    type Snapshot = F1Snapshot;

    fn between(&mut self) -> &mut Between<F1Snapshot> {
        &mut self.map.between
    }

    fn snapshot(&self) -> F1Snapshot {
        self.map.snapshot()
    }

    fn finish(&self, rounds: batch::Rounds) -> MapResult {
        let f1 = &self.map.f1;
        rounds.finish(self.map.puzzle, &self.map.status, &self.map.best_boards, |b| f1.placements(b))
    }
}

/// What every trial of an F1 batch reads in a round: the projections, the puzzle, the config,
/// the class weights per slot, and the score of a solution.
struct Ctx<'c> {
    f1: &'c F1,
    puzzle: &'c Puzzle,
    cfg: &'c MapConfig,
    base: Option<&'c [f32]>,
    max_score: usize,
}

/// A batch's sizes: floats per trial, cells, the score of a solution, trials, and trials per
/// worker's chunk.
struct Sizes {
    dim: usize,
    cells: usize,
    max_score: usize,
    trials: usize,
    per: usize,
}

/// The saved state of an F1 batch ([`F1Map::snapshot`]): everything that determines the rest
/// of its run, so that a batch restored from it ([`F1Map::restore`]) goes on exactly as the
/// saved one would have, bit for bit, on any number of threads. It holds what it was taken of
/// (puzzle, method, trials, floats per trial, seed, the options that shape a trajectory:
/// [`F1Snapshot::identity`]), each trial's record (counters, best score, stall and cycle
/// memory, completion trigger, segment start, solutions, warm flag, its random stream), the
/// best boards, rate mode's solution count and classes, the iterates `x`, each trial's
/// assignment solvers as their next warm start reads them ([`WarmState`]), the adaptive
/// weights, and with `keep_fixed_points` the iterates that solved. Not saved: the tables (made
/// again from the puzzle), the workers' scratch (written before it is read, in every
/// iteration), the solution sink and the token (the continuing run's own), the clock.
///
/// It serialises with serde (floats as the hexadecimal text of their bits, so JSON keeps them
/// exactly); `backend::MapSnapshot` is the form a solve returns and continues.
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct F1Snapshot {
    batch: SavedBatch,
    x: Floats,
    assigners: Vec<Vec<WarmState>>,
    adapt_w: Floats,
    fixed: Vec<Option<Floats>>,
}

batch::saved_batch_api!(F1Snapshot);

impl<'a> F1Map<'a> {
    /// What a snapshot of this batch is taken of (see [`SnapshotIdentity`]).
    fn identity(&self) -> SnapshotIdentity {
        let c = &self.cfg;
        let method = match c.kind {
            MapKind::Rrr => "rrr",
            MapKind::Dm => "dm",
        };
        let options = vec![
            identity_option("beta", c.beta),
            identity_option("edge", c.edge),
            identity_option("cycle_restart", !c.no_cycle_restart),
            identity_option("stop_at_first", !c.all_trials),
            identity_option("warm_start", !c.cold_assign),
            identity_option("complete", &c.complete),
            identity_option("reduced_costs", c.reduced_costs),
            identity_option("restart_stall", c.restart_stall),
            identity_option("kick", c.kick),
            identity_option("join_weights", c.join_weights),
            identity_option("adapt", c.adapt),
            identity_option("keep_going", c.keep_going),
        ];
        SnapshotIdentity::new(method, self.puzzle, self.status.len(), self.f1.dim(), c.run.seed, options)
    }

    /// The batch's state now, as [`F1Snapshot`] saves it. Taken between runs or steps, it
    /// is the state the next [`F1Map::run`] or [`F1Map::step`] would go on from; with rate
    /// mode's bookkeeping of the last run (or of the snapshot restored).
    pub fn snapshot(&self) -> F1Snapshot {
        F1Snapshot {
            batch: SavedBatch::save(self.identity(), &self.status, &self.best_boards, self.between.rate.clone()),
            x: Floats(self.x.clone()),
            assigners: self.asg.iter().map(Assigners::warm_states).collect(),
            adapt_w: Floats(self.adapt_w.clone()),
            fixed: self.status.iter().map(|t| t.extra.clone().map(Floats)).collect(),
        }
    }

    /// The snapshot the last [`F1Map::run`] kept when its token stopped it (with
    /// `save_at_stop`, and for no other reason); None otherwise. Taken once.
    pub fn take_snapshot(&mut self) -> Option<F1Snapshot> {
        self.between.stopped.take()
    }

    /// Puts the batch in the state `s` saved, so that it goes on as the saved batch would
    /// have; the next [`F1Map::run`] continues the saved run (its counters count from here).
    /// Refused, with the batch unchanged, when `s` was taken of another puzzle, method,
    /// batch size, seed or trajectory-shaping option ([`SnapshotError::Mismatch`], naming
    /// the first difference), is of another format version, or is damaged.
    pub fn restore(&mut self, s: &F1Snapshot) -> Result<(), SnapshotError> {
        let (trials, dim, cells) = (self.status.len(), self.f1.dim(), self.puzzle.cells());
        s.batch.check(&self.identity(), cells)?;
        let damaged = |what: &str| Err(SnapshotError::Damaged(what.to_string()));
        if s.x.0.len() != trials * dim || s.adapt_w.0.len() != self.adapt_w.len() {
            return damaged("its iterates or adaptive weights are not the batch's size");
        }
        if s.assigners.len() != trials || s.fixed.len() != trials || s.fixed.iter().flatten().any(|f| f.0.len() != dim)
        {
            return damaged("its solvers or kept fixed points are not one per trial");
        }
        let f1 = &self.f1;
        if !s.batch.best_boards.iter().enumerate().all(|(i, &j)| f1.is_candidate_of(i % cells, j)) {
            return damaged("a best board places a piece its cell cannot hold");
        }
        let mut asg = self.asg.clone();
        for (a, saved) in asg.iter_mut().zip(&s.assigners) {
            a.set_warm_states(saved).map_err(SnapshotError::Damaged)?;
        }
        let status = s.batch.trials(self.puzzle.max_score(), |t| s.fixed[t].as_ref().map(|f| f.0.clone()))?;
        self.x.copy_from_slice(&s.x.0);
        self.adapt_w.copy_from_slice(&s.adapt_w.0);
        self.best_boards.copy_from_slice(&s.batch.best_boards);
        self.asg = asg;
        self.status = status;
        self.between.restored(&s.batch);
        Ok(())
    }
}

/// The boxed side table of every F1 worker (256 entries of four floats).
const SIDE_TABLE: u64 = 256 * 16;

/// The boxed side table of every chunk's lanes (256 entries of four sides of a lane vector).
const LANE_SIDE_TABLE: u64 = 256 * 4 * 4 * LANES as u64;

/// The memory a batch of `cfg` takes in [`F1Map`] with `threads` threads (the CPU backend's
/// `Backend::estimate`; ARCHITECTURE.md §8): the allocations of [`F1Map::new`], its
/// workers and the solving iterates, as upper bounds from the puzzle's shape. A new buffer of
/// the engine adds its bytes here; `limits::memory::tests` fails when this no longer bounds
/// what the engine takes.
pub fn estimate(puzzle: &Puzzle, cfg: &MapConfig, threads: usize) -> Estimate {
    let s = Shape::of(puzzle);
    let (dim, wlen, cells) = (s.dim(), s.weight_len(), s.cells);
    let keep = u64::from(cfg.keep_fixed_points);
    let per_trial = WORD * dim                                        // x
        + TRIAL_BOOKKEEPING
        + s.assigners()
        + WORD * cells                                                // best board
        + if cfg.adapt.is_some() { WORD * cells * 4 } else { WORD }  // adaptive weights
        + keep * (WORD * dim + ALLOC)                                 // the solving iterate
        + std::mem::size_of::<batch::TrialSummary>() as u64;
    // A snapshot saved at a stop or held to continue (`F1Snapshot`: a copy of the trial's
    // iterate, record, solvers, best board, weights and kept iterate), and the solvers'
    // copy a restore checks before it takes them.
    let saves = cfg.run.save_at_stop || cfg.resume.is_some();
    let snapshot = WORD * dim
        + TRIAL_BOOKKEEPING
        + 2 * s.assigners()
        + WORD * cells
        + if cfg.adapt.is_some() { WORD * cells * 4 } else { WORD }
        + keep * (WORD * dim + ALLOC);
    let per_trial = slack(per_trial + if saves { snapshot } else { 0 });
    let network = if cfg.complete.is_some() { s.network() } else { 0 };
    let worker = WORD * 3 * dim + 8 * wlen + SIDE_TABLE + 2 * WORD * cells + keep * WORD * dim + 16 * ALLOC + network;
    // A chunk's crew: a worker per lane, the lanes' states, reflections and weights, their
    // side table.
    let lanes = cfg.lanes_for(cfg.run.trials) as u64;
    let shared = if lanes > 1 { WORD * LANES as u64 * (2 * dim + wlen) } else { 0 };
    let crew = lanes * worker + shared + LANE_SIDE_TABLE + 4 * ALLOC;
    // Chunks hold whole groups of lanes: no more crews than groups.
    let crews = workers(cfg.run.trials.max(1).div_ceil(lanes as usize), threads);
    // The tables: per candidate its column, colour offsets, colours and placement, the weights'
    // group tables; per weight entry its group; the candidates they are built from.
    let tables = 48 * s.cands + WORD * wlen + 64 * cells + s.candidates() + 64 * ALLOC;
    // The feasibility check of `F1::new`: a zero state, weights and solvers.
    let setup = WORD * dim + 8 * wlen + s.assigners();
    Estimate { fixed: tables + setup + network + crews * crew, per_trial }
}

/// A fresh start: every coordinate uniform in [0, 1) (the same draws on every backend).
pub(crate) fn randomize(x: &mut [f32], rng: &mut Xoshiro256PlusPlus) {
    x.iter_mut().for_each(|v| *v = rng.random::<f32>());
}

/// Adds `size * (u - 1/2)`, u uniform in [0, 1), to every coordinate.
fn kick(x: &mut [f32], rng: &mut Xoshiro256PlusPlus, size: f32) {
    x.iter_mut().for_each(|v| *v += size * (rng.random::<f32>() - 0.5));
}

/// One trial's slices of the batch, borrowed apart.
struct TrialSlices<'t> {
    x: &'t mut [f32],
    st: &'t mut F1Trial,
    asg: &'t mut Assigners,
    best: &'t mut [u32],
    /// Its adaptive slot weights (empty without them).
    aw: &'t mut [f32],
}

/// A group of a chunk's consecutive trials, their slices side by side.
struct Group<'t> {
    x: &'t mut [f32],
    st: &'t mut [F1Trial],
    asg: &'t mut [Assigners],
    best: &'t mut [u32],
    aw: &'t mut [f32],
    dim: usize,
    cells: usize,
    aw_len: usize,
    aw_used: usize,
}

impl Group<'_> {
    fn len(&self) -> usize {
        self.st.len()
    }

    /// The slices of its `l`-th trial.
    fn trial(&mut self, l: usize) -> TrialSlices<'_> {
        let (d, c, a) = (self.dim, self.cells, self.aw_len);
        TrialSlices {
            x: &mut self.x[l * d..(l + 1) * d],
            st: &mut self.st[l],
            asg: &mut self.asg[l],
            best: &mut self.best[l * c..(l + 1) * c],
            aw: &mut self.aw[l * a..l * a + self.aw_used],
        }
    }
}

/// One round of every trial of a group, each as [`run_trial_round`] runs it: in lock-step
/// ([`lockstep_round`]) for RRR with the average edge projection, else one trial after the
/// other. `target`: per trial, where the stepper stops (a trial at or past it sits out).
fn run_group_round(ctx: &Ctx<'_>, g: &mut Group<'_>, crew: &mut Crew<'_>, target: Option<&[u64]>) {
    let cfg = ctx.cfg;
    if g.len() > 1 && cfg.kind == MapKind::Rrr && cfg.edge == EdgeProjection::Average {
        return lockstep_round(ctx, g, crew, target);
    }
    for l in 0..g.len() {
        run_trial_round(ctx, g.trial(l), &mut crew.lanes[l], target.map(|t| t[l]));
    }
}

/// One round (up to [`ROUND`] iterations) of one trial.
/// `target`: None runs the whole round ([`F1Map::run`]); the stepper stops at its target
/// inside the round and goes on from there later ([`Span::until`]).
fn run_trial_round(ctx: &Ctx<'_>, mut trial: TrialSlices<'_>, wk: &mut Worker<'_>, target: Option<u64>) {
    let Ctx { f1, cfg, base, .. } = *ctx;
    let Some(span) = trial_span(cfg, trial.st, target) else {
        return;
    };
    for _ in 0..span.pause - trial.st.iterations {
        if cfg.keep_fixed_points {
            wk.prev.copy_from_slice(trial.x);
        }
        let d = if trial.aw.is_empty() { base } else { Some(&*trial.aw) };
        let step = Step { f1, cfg, warm: trial.st.warm, slot_w: d };
        let ok = match cfg.kind {
            MapKind::Rrr => step.rrr(trial.x, trial.asg, wk),
            MapKind::Dm => step.dm(trial.x, trial.asg, wk),
        };
        match after_step(ctx, &mut trial, wk, ok) {
            Flow::Next => {}
            Flow::Reset(r) => r.apply(trial.x, &mut trial.st.rng),
            Flow::Stop => return,
        }
    }
    end_round(ctx, trial, span);
}

/// The round a trial runs now: None when it is done (solved, or at its budget) or, stepped,
/// at its target.
fn trial_span(cfg: &MapConfig, st: &F1Trial, target: Option<u64>) -> Option<Span> {
    let due = st.is_active(cfg.run.max_iters) && target.is_none_or(|t| st.iterations < t);
    due.then(|| match target {
        None => Span::round(st.iterations, cfg.run.max_iters),
        Some(t) => Span::until(st.iterations, cfg.run.max_iters, t),
    })
}

/// Whether a trial goes on with its round after an iteration.
#[derive(Clone, Copy, PartialEq)]
enum Flow {
    Next,
    /// It goes on from a new state: the caller applies the reset to its iterate.
    Reset(Reset),
    /// It solved: the round ends here, without the cycle check.
    Stop,
}

/// A new state for a trial, drawn from its own stream.
#[derive(Clone, Copy, PartialEq)]
enum Reset {
    /// A fresh random start ([`randomize`]).
    Randomize,
    /// A kick of this size ([`kick`]).
    Kick(f32),
}

impl Reset {
    fn apply(self, x: &mut [f32], rng: &mut Xoshiro256PlusPlus) {
        match self {
            Reset::Randomize => randomize(x, rng),
            Reset::Kick(size) => kick(x, rng, size),
        }
    }
}

/// A trial's bookkeeping after one iteration whose board is in `wk.board`: the count, a
/// defensive restart when the step failed, the score and best board, the adaptive weights,
/// a solution, a stall restart, completion. It leaves the iterate alone: a restart or kick
/// is returned ([`Flow::Reset`]) for the caller to apply, as the last use of the trial's
/// stream in the iteration.
fn after_step(ctx: &Ctx<'_>, trial: &mut TrialSlices<'_>, wk: &mut Worker<'_>, ok: Result<(), AssignError>) -> Flow {
    let Ctx { f1, puzzle, cfg, base, max_score } = *ctx;
    let TrialSlices { st, best, aw, .. } = trial;
    st.iterations += 1;
    if ok.is_err() {
        // Non-finite weights cannot come from finite states; restart defensively.
        st.warm = false;
        st.restarts += 1;
        return Flow::Reset(Reset::Randomize);
    }
    st.warm = !cfg.cold_assign;
    let score = f1.score(&wk.board);
    if let (Some(a), Some(b)) = (&cfg.adapt, base)
        && !aw.is_empty()
    {
        f1.adapt_join_weights(&wk.board, b, aw, a.rate, a.decay, a.max);
    }
    let improved = score > st.best_score || st.iterations == 1;
    if improved {
        st.best_score = score;
        st.trig.improved_at = st.iterations;
        best.copy_from_slice(&wk.board);
    }
    if score == max_score {
        st.solve(Mechanism::Map);
        if cfg.keep_fixed_points {
            st.extra = Some(wk.prev.clone());
        }
        return Flow::Stop;
    }
    if let Some(l) = cfg.restart_stall
        && st.stalled(score, l)
    {
        return match cfg.kick {
            Some(s) => Flow::Reset(Reset::Kick(s)),
            None => {
                st.warm = false;
                Flow::Reset(Reset::Randomize)
            }
        };
    }
    if let (Some(comp), Some(bt)) = (&cfg.complete, wk.completer.as_mut()) {
        let id = |c, pl| f1.candidate_id(c, pl);
        st.complete(comp, bt, puzzle, improved, score, best, |b| f1.placements(b), id);
        if st.solved_at.is_some() {
            return Flow::Stop;
        }
    }
    Flow::Next
}

/// The end of a trial's round that it did not leave by solving: at a multiple of [`ROUND`],
/// a trial caught in an exact limit cycle restarts.
fn end_round(ctx: &Ctx<'_>, trial: TrialSlices<'_>, span: Span) {
    let cfg = ctx.cfg;
    let TrialSlices { x, st, .. } = trial;
    let round_done = span.pause == span.end;
    if round_done
        && !cfg.no_cycle_restart
        && st.iterations.is_multiple_of(ROUND)
        && st.in_cycle(batch::fingerprint(x, OFFSET))
    {
        randomize(x, &mut st.rng);
        st.warm = false;
        st.restarts += 1;
    }
}

/// One round of a group's trials in lock-step (RRR, the average edge projection). The
/// group's states are laid out trial-minor for the round ([`F1::to_lanes`]), a vector of
/// the lanes per entry, and written back at its end. Each iteration reflects them in one
/// pass of vector lanes ([`F1::reflect_edges_lanes`]), computes their piece weights in
/// another ([`F1::piece_weights_minor`]), runs each trial's assignments in turn, takes their
/// candidates cell by cell for all of them, then steps the states of the trials still in
/// their round ([`F1::subtract_edges_lanes`] and each board) and does each one's
/// bookkeeping as [`run_trial_round`] does (a restart or kick goes through the trial's own
/// state). Each trial's iterates, counters and boards are those of [`run_trial_round`], bit
/// for bit: only the order of independent work changes (lanes of trials out of their round
/// are computed and left alone).
fn lockstep_round(ctx: &Ctx<'_>, g: &mut Group<'_>, crew: &mut Crew<'_>, target: Option<&[u64]>) {
    let Ctx { f1, cfg, base, .. } = *ctx;
    let (m, dim, wl) = (g.len(), f1.dim(), f1.weight_len());
    debug_assert!(m <= LANES && crew.r.len() == dim && crew.x.len() == dim);
    let mut spans: [Option<Span>; LANES] = [None; LANES];
    let mut left = [0u64; LANES];
    for l in 0..m {
        let st = &g.st[l];
        spans[l] = trial_span(cfg, st, target.map(|t| t[l]));
        left[l] = spans[l].map_or(0, |s| s.pause - st.iterations);
    }
    if left.iter().all(|&n| n == 0) {
        return;
    }
    // Lanes past the group's trials repeat its first.
    let lane = |l: usize| if l < m { l } else { 0 };
    f1.to_lanes(std::array::from_fn(|l| &g.x[lane(l) * dim..(lane(l) + 1) * dim]), &mut crew.x);
    let (aw_len, aw_used) = (g.aw_len, g.aw_used);
    while left.iter().any(|&n| n > 0) {
        if cfg.keep_fixed_points {
            for l in (0..m).filter(|&l| left[l] > 0) {
                f1.lane_state(&crew.x, l, &mut crew.lanes[l].prev);
            }
        }
        let ds = std::array::from_fn(|l| match aw_used {
            0 => base,
            _ => Some(&g.aw[lane(l) * aw_len..lane(l) * aw_len + aw_used]),
        });
        f1.reflect_edges_lanes(&crew.x, ds, &mut crew.r);
        f1.piece_weights_minor(&crew.r, &mut crew.w, &mut crew.sides);
        let mut done: [Option<Result<(), AssignError>>; LANES] = Default::default();
        for l in (0..m).filter(|&l| left[l] > 0) {
            let t = g.trial(l);
            let w = &crew.w[l * wl..(l + 1) * wl];
            done[l] = Some(f1.assign_entries(w, t.asg, &mut crew.lanes[l].board, t.st.warm));
        }
        let mut boards: [Option<&mut [u32]>; LANES] = Default::default();
        for ((b, wk), ok) in boards.iter_mut().zip(&mut crew.lanes).zip(&done) {
            *b = matches!(ok, Some(Ok(()))).then_some(&mut wk.board[..]);
        }
        f1.entries_to_candidates_lanes(&crew.r, &mut boards);
        // x += beta (P_P(r) - P_E(x)) for the trials whose assignments succeeded.
        f1.subtract_edges_lanes(cfg.beta, &mut crew.x, std::array::from_fn(|l| matches!(done[l], Some(Ok(())))));
        for (l, ok) in done.into_iter().enumerate() {
            let Some(ok) = ok else { continue };
            left[l] -= 1;
            let wk = &mut crew.lanes[l];
            if ok.is_ok() {
                add_board_lane(f1, cfg.beta, &mut crew.x, l, &wk.board);
            }
            let mut t = g.trial(l);
            match after_step(ctx, &mut t, wk, ok) {
                Flow::Next => {}
                Flow::Reset(r) => {
                    f1.lane_state(&crew.x, l, t.x);
                    r.apply(t.x, &mut t.st.rng);
                    f1.set_lane_state(&mut crew.x, l, t.x);
                }
                Flow::Stop => (left[l], spans[l]) = (0, None),
            }
        }
    }
    for l in 0..m {
        f1.lane_state(&crew.x, l, &mut g.x[l * dim..(l + 1) * dim]);
    }
    for (l, span) in spans.iter().enumerate().take(m) {
        if let Some(span) = *span {
            end_round(ctx, g.trial(l), span);
        }
    }
}

/// `x += beta` on the entries of the board's candidates, in lane `lane` of a trial-minor
/// state: [`add_board`] of that lane, bit for bit.
fn add_board_lane(f1: &F1, beta: f32, x: &mut [LaneVec], lane: usize, board: &[u32]) {
    let flat: &mut [f32] = wide::bytemuck::cast_slice_mut(x);
    for &j in board {
        for &i in f1.candidate_slots(j) {
            flat[i as usize * LANES + lane] += beta;
        }
    }
}

/// What one iteration of a trial reads: the puzzle's F1, the config, whether the trial's
/// assignments may start warm, and the trial's slot weights (None: the class weights).
struct Step<'a> {
    f1: &'a F1,
    cfg: &'a MapConfig,
    warm: bool,
    slot_w: Option<&'a [f32]>,
}

impl Step<'_> {
    /// One RRR step; the board chosen by P_P is left in `wk.board`.
    fn rrr(&self, x: &mut [f32], asg: &mut Assigners, wk: &mut Worker) -> Result<(), AssignError> {
        let Step { f1, cfg, warm, slot_w } = *self;
        let beta = cfg.beta;
        if cfg.edge == EdgeProjection::Average {
            // The same arithmetic as below in two passes over x instead of four (the reflection
            // and the dense part of the step are fused with P_E; tested bit for bit).
            match slot_w {
                Some(d) => f1.reflect_edges_weighted(x, &mut wk.r, d),
                None => f1.reflect_edges(x, &mut wk.r),
            }
            f1.decode_pieces(&wk.r, &mut wk.pieces, asg, &mut wk.board, warm)?;
            f1.subtract_edges(beta, x);
            add_board(f1, beta, x, &wk.board);
            return Ok(());
        }
        f1.project_edges_with(cfg.edge, x, &mut wk.pe);
        for ((r, &p), &xi) in wk.r.iter_mut().zip(&wk.pe).zip(x.iter()) {
            *r = 2.0 * p - xi;
        }
        if let Some(d) = slot_w {
            f1.weigh_slots(d, &mut wk.r);
        }
        f1.decode_pieces(&wk.r, &mut wk.pieces, asg, &mut wk.board, warm)?;
        // x += beta (P_P(r) - P_E(x))
        step_towards_board(f1, beta, x, &wk.pe, &wk.board);
        Ok(())
    }
}

/// `x += beta (embed(board) - sub)`: the board's picture is one-hot, so subtract densely and
/// add sparsely.
fn step_towards_board(f1: &F1, beta: f32, x: &mut [f32], sub: &[f32], board: &[u32]) {
    for (xi, &p) in x.iter_mut().zip(sub) {
        *xi -= beta * p;
    }
    add_board(f1, beta, x, board);
}

/// `x += beta embed(board)`, sparsely.
pub(crate) fn add_board(f1: &F1, beta: f32, x: &mut [f32], board: &[u32]) {
    for &j in board {
        for &i in f1.candidate_slots(j) {
            x[i as usize] += beta;
        }
    }
}

impl Step<'_> {
    /// One general-beta difference-map step (two assignments); the board of `P_a(f_b(y))` is
    /// left in `wk.board`.
    fn dm(&self, x: &mut [f32], asg: &mut Assigners, wk: &mut Worker) -> Result<(), AssignError> {
        let Step { f1, cfg, warm, slot_w } = *self;
        let beta = cfg.beta;
        let inv = 1.0 / beta;
        // f_b(y) = (1 + 1/beta) P_E(y) - (1/beta) y
        f1.project_edges_with(cfg.edge, x, &mut wk.pe);
        for ((r, &p), &xi) in wk.r.iter_mut().zip(&wk.pe).zip(x.iter()) {
            *r = (1.0 + inv) * p - inv * xi;
        }
        // P_a(y) first (its board lands in board2), for f_a(y) = (1 - 1/beta) P_P(y) + (1/beta) y.
        // Under a weighted metric P_P reads D y (pe is free until P_b below).
        if let Some(d) = slot_w {
            f1.weigh_slots(d, &mut wk.r);
            f1.weigh_slots_into(d, x, &mut wk.pe);
            f1.project_pieces(&wk.pe, &mut wk.pp, &mut wk.pieces, asg, &mut wk.board2, warm)?;
        } else {
            f1.project_pieces(x, &mut wk.pp, &mut wk.pieces, asg, &mut wk.board2, warm)?;
        }
        for (q, &xi) in wk.pp.iter_mut().zip(x.iter()) {
            *q = (1.0 - inv) * *q + inv * xi;
        }
        // P_a(f_b(y)): the board that is scored. Then P_b(f_a(y)) into pe (r is no longer needed).
        f1.decode_pieces(&wk.r, &mut wk.pieces, asg, &mut wk.board, warm)?;
        f1.project_edges_with(cfg.edge, &wk.pp, &mut wk.pe);
        // y += beta (P_a(f_b(y)) - P_b(f_a(y)))
        step_towards_board(f1, beta, x, &wk.pe, &wk.board);
        Ok(())
    }
}

/// Iterations per trial when none are given: under a time limit, no cap (the clock ends the
/// run, and a trial's run length is memoryless, so ending it early gains nothing:
/// BENCHMARKS.md, "Why the map stalls"); otherwise 100,000.
pub fn default_iters(time_limit: Option<std::time::Duration>) -> u64 {
    if time_limit.is_some() { u64::MAX } else { MapRun::default().max_iters }
}

/// Runs a batch and checks the claimed solution with the exact verifier.
///
/// With `cfg.resume`, the batch continues that snapshot ([`F1Map::restore`]).
pub fn solve(puzzle: &Puzzle, cfg: MapConfig, progress: impl FnMut(&Progress)) -> Result<MapResult, BatchError> {
    let resume = cfg.resume.clone();
    let mut map = F1Map::new(puzzle, cfg)?;
    if let Some(snapshot) = resume {
        map.restore(&snapshot)?;
    }
    let result = map.run(progress);
    if let Some((_, _, board)) = &result.solution {
        let v = verify::check(puzzle, board);
        if !v.valid {
            return Err(BatchError::InvalidClaim { problems: v.problems });
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puzzle::generate::puzzle;
    use crate::puzzle::generate::{GenerateOptions, generate};
    use rand::SeedableRng;

    #[test]
    fn dm_at_beta_one_is_rrr_at_beta_one() {
        let p = puzzle(4, 4, 5);
        let run = |kind| {
            let cfg = MapConfig {
                kind,
                beta: 1.0,
                no_cycle_restart: true,
                all_trials: true,
                run: MapRun { trials: 2, max_iters: 50, ..Default::default() },
                ..Default::default()
            };
            let mut m = F1Map::new(&p, cfg).unwrap();
            m.run(|_| {});
            m.x.clone()
        };
        let (a, b) = (run(MapKind::Rrr), run(MapKind::Dm));
        let diff = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        assert!(diff < 1e-3, "max difference {diff}");
    }

    /// `cfg` solves `p`, the solution verifies, and a second run finds it again in the same
    /// trial at the same iteration.
    fn solves_verified_and_again(p: &Puzzle, cfg: MapConfig) {
        let r = solve(p, cfg.clone(), |_| {}).unwrap();
        let (t, it, board) = r.solution.clone().expect("4x4 solves");
        assert!(verify::check(p, &board).valid);
        let again = solve(p, cfg, |_| {}).unwrap();
        assert_eq!(again.solution.map(|s| (s.0, s.1)), Some((t, it)));
    }

    #[test]
    fn rrr_solves_small_generated_puzzles_and_is_reproducible() {
        for seed in 0..3 {
            let p = puzzle(4, 4, seed);
            let cfg = MapConfig {
                run: MapRun { trials: 4, max_iters: 20_000, seed, ..Default::default() },
                ..Default::default()
            };
            solves_verified_and_again(&p, cfg);
        }
    }

    /// The map with f32 reduced costs solves and verifies as the f64 map does, and
    /// reproducibly (its iterates part from f64's where a near-tie breaks the other way).
    #[test]
    fn f32_reduced_costs_solve_verified_and_reproducibly() {
        let mut parted = 0;
        for seed in 0..4 {
            let p = puzzle(5, 5, seed);
            let cfg = MapConfig {
                reduced_costs: Precision::F32,
                run: MapRun { trials: 4, max_iters: 50_000, seed, ..Default::default() },
                ..Default::default()
            };
            let r = solve(&p, cfg.clone(), |_| {}).unwrap();
            let (t, it, board) = r.solution.clone().expect("5x5 solves with f32 reduced costs");
            assert!(verify::check(&p, &board).valid);
            let again = solve(&p, cfg.clone(), |_| {}).unwrap();
            assert_eq!(again.solution.map(|s| (s.0, s.1)), Some((t, it)));
            let f64_run = solve(&p, MapConfig { reduced_costs: Precision::F64, ..cfg }, |_| {}).unwrap();
            parted += (f64_run.solution.map(|s| (s.0, s.1)) != Some((t, it))) as usize;
        }
        // Not asserted either way: how often the two precisions part on these runs.
        eprintln!("f32 and f64 runs parted on {parted} of 4 puzzles");
    }

    #[test]
    fn stall_restarts_fire_count_apart_and_are_reproducible() {
        let p = puzzle(6, 6, 1);
        for kick in [None, Some(0.5)] {
            let cfg = MapConfig {
                all_trials: true,
                restart_stall: Some(100),
                kick,
                run: MapRun { trials: 2, max_iters: 3_000, ..Default::default() },
                ..Default::default()
            };
            let a = solve(&p, cfg.clone(), |_| {}).unwrap();
            let b = solve(&p, cfg.clone(), |_| {}).unwrap();
            assert_eq!(a.trials, b.trials);
            for t in &a.trials {
                // A trial that did not solve early stalled at least once in 3,000 iterations.
                assert!(t.stall_restarts > 0 || t.solved_at.is_some_and(|i| i < 200), "{t:?}");
            }
            // Without the option, none fire and the trajectory is the plain one.
            let plain = solve(&p, MapConfig { restart_stall: None, kick: None, ..cfg }, |_| {}).unwrap();
            assert!(plain.trials.iter().all(|t| t.stall_restarts == 0));
        }
        let cfg = MapConfig {
            restart_stall: Some(500),
            run: MapRun { trials: 4, max_iters: 20_000, ..Default::default() },
            ..Default::default()
        };
        let q = puzzle(4, 4, 2);
        assert!(solve(&q, cfg, |_| {}).unwrap().solution.is_some(), "4x4 still solves with stall restarts");
    }

    /// A generated 5x5 and `kind` run on it: 2 trials of 400 iterations, every trial to its end.
    /// The lock-step lanes ([`MapConfig::trial_lanes`] 2 to 4) leave every trial where one
    /// trial at a time (1) leaves it, bit for bit: the whole batch's snapshot (iterates,
    /// records, random streams, warm solvers, weights, kept iterates), the summaries, the
    /// solution and rate mode's solutions. Batches of several sizes (groups cut short),
    /// stall restarts and kicks, adaptive weights, completion, solving trials, rate mode, the
    /// uniform and weighted metrics, f32 reduced costs, and the stepper in uneven steps.
    #[test]
    fn lanes_in_lock_step_are_one_trial_at_a_time_bit_for_bit() {
        let mut solved = 0;
        for (case, (w, h, seed)) in
            [(4, 4, 1), (5, 5, 2), (6, 6, 3), (5, 5, 4), (3, 6, 5), (6, 6, 6)].into_iter().enumerate()
        {
            let p = puzzle(w, h, seed);
            let extras = case % 2 == 1;
            for trials in [2, 3, 5, 8] {
                let cfg = MapConfig {
                    keep_going: case == 0,
                    all_trials: case != 2,
                    restart_stall: Some(150),
                    join_weights: (case != 4).then_some(DEFAULT_JOIN_WEIGHTS),
                    adapt: extras.then_some(AdaptiveWeights { rate: 0.1, decay: 0.02, max: 3.0 }),
                    kick: (case == 3).then_some(0.5),
                    complete: extras.then(|| Completion { k: 2, stall: 100, ..Completion::default() }),
                    keep_fixed_points: extras,
                    reduced_costs: if case == 5 { Precision::F32 } else { Precision::F64 },
                    run: MapRun { trials, max_iters: 700, seed, ..Default::default() },
                    ..Default::default()
                };
                let run = |lanes| {
                    let mut m = F1Map::new(&p, MapConfig { trial_lanes: lanes, ..cfg.clone() }).unwrap();
                    let r = m.run(|_| {});
                    let found = r
                        .rate
                        .as_ref()
                        .map(|k| k.solutions.iter().map(|f| (f.trial, f.trial_iteration)).collect::<Vec<_>>());
                    (m.snapshot(), r.trials, r.solution.map(|s| (s.0, s.1)), found)
                };
                let one = run(1);
                solved += one.1.iter().filter(|t| t.solved_at.is_some()).count();
                for lanes in [2, 3, 4] {
                    assert!(one == run(lanes), "{w}x{h} seed {seed}, {trials} trials, {lanes} lanes");
                }
                // The stepper, in uneven steps, lands where one trial at a time does.
                let step = |lanes| {
                    let mut m = F1Map::new(&p, MapConfig { trial_lanes: lanes, ..cfg.clone() }).unwrap();
                    for k in [1, 63, 2, 100, 200] {
                        m.step(k, &Cancel::default());
                    }
                    (m.snapshot(), m.trial_summaries())
                };
                assert!(step(1) == step(4), "the stepper, {w}x{h} seed {seed}, {trials} trials");
            }
        }
        assert!(solved > 0, "some trials solve inside their rounds");
    }

    fn two_trials_on_5x5(kind: MapKind) -> (Puzzle, MapConfig) {
        let run = MapRun { trials: 2, max_iters: 400, seed: 7, ..Default::default() };
        (puzzle(5, 5, 2), MapConfig { kind, all_trials: true, run, ..Default::default() })
    }

    #[test]
    fn join_weights_of_one_are_the_uniform_map_and_others_change_it() {
        for kind in [MapKind::Rrr, MapKind::Dm] {
            let (p, cfg) = two_trials_on_5x5(kind);
            let run = |join_weights| {
                let mut m = F1Map::new(&p, MapConfig { join_weights, ..cfg.clone() }).unwrap();
                let r = m.run(|_| {});
                (m.x.clone(), r.trials)
            };
            let plain = run(None);
            // The weighted path with unit weights multiplies by 1.0: the same iterates, bit for bit.
            let ones = run(Some([1.0, 1.0, 1.0]));
            assert!(plain.0.iter().zip(&ones.0).all(|(a, b)| a.to_bits() == b.to_bits()), "{kind:?}");
            assert_eq!(plain.1, ones.1);
            // Scaling every weight alike leaves each P_P board, so the iterates, unchanged.
            let twos = run(Some([2.0, 2.0, 2.0]));
            assert_eq!(plain.1, twos.1, "{kind:?}");
            let other = run(Some([1.0, 1.0, 3.0]));
            assert_ne!(plain.0, other.0, "{kind:?}: inner joins weighed 3 must move the iterates");
        }
        // And the weighted map still solves, every claimed board checked.
        for seed in 0..3 {
            let p = puzzle(4, 4, seed);
            let cfg = MapConfig {
                join_weights: Some([1.0, 0.5, 2.0]),
                run: MapRun { trials: 4, max_iters: 20_000, seed, ..Default::default() },
                ..Default::default()
            };
            let (_, _, board) = solve(&p, cfg, |_| {}).unwrap().solution.expect("4x4 solves");
            assert!(verify::check(&p, &board).valid);
        }
    }

    #[test]
    fn adaptive_weights_solve_reproducibly_move_the_iterates_and_stay_in_bounds() {
        let adapt = Some(AdaptiveWeights { rate: 0.1, decay: 0.02, max: 3.0 });
        for seed in 0..3 {
            let p = puzzle(4, 4, seed);
            let cfg = MapConfig {
                adapt,
                run: MapRun { trials: 4, max_iters: 20_000, seed, ..Default::default() },
                ..Default::default()
            };
            solves_verified_and_again(&p, cfg);
        }
        for kind in [MapKind::Rrr, MapKind::Dm] {
            let (p, cfg) = two_trials_on_5x5(kind);
            let mut fixed = F1Map::new(&p, cfg.clone()).unwrap();
            fixed.run(|_| {});
            let mut m = F1Map::new(&p, MapConfig { adapt, ..cfg }).unwrap();
            m.run(|_| {});
            assert_ne!(fixed.x, m.x, "{kind:?}: adaptive weights must move the iterates");
            let base = m.base_w.clone().unwrap();
            assert_eq!(m.adapt_w.len(), 2 * base.len());
            let mut above = 0;
            for w in m.adapt_w.chunks(base.len()) {
                for (&w, &w0) in w.iter().zip(&base) {
                    assert!(w >= w0 * (1.0 - 1e-6) && w <= 3.0 * w0 * (1.0 + 1e-6), "{w} vs class weight {w0}");
                    above += usize::from(w > w0 * 1.01);
                }
            }
            assert!(above > 0, "{kind:?}: no weight grew in 400 iterations");
        }
        // Bad parameters are refused when parsed.
        for bad in ["0,0.1,2", "0.1,0,2", "0.1,1.5,2", "0.1,0.1,0.5", "nan,0.1,2", "0.1,0.1", "a,b,c"] {
            assert!(bad.parse::<AdaptiveWeights>().is_err(), "{bad}");
        }
        assert_eq!("0.05,0.01,4".parse::<AdaptiveWeights>(), Ok(AdaptiveWeights { rate: 0.05, decay: 0.01, max: 4.0 }));
    }

    impl batch::testing::InParts for F1Map<'_> {
        type Snapshot = F1Snapshot;
        fn restore_from(&mut self, s: &F1Snapshot) {
            self.restore(s).unwrap();
        }
        fn run_with(&mut self, progress: &mut dyn FnMut(&Progress)) -> MapResult {
            self.run(progress)
        }
        fn take_snapshot_kept(&mut self) -> Option<F1Snapshot> {
            self.take_snapshot()
        }
        fn snapshot_now(&self) -> F1Snapshot {
            self.snapshot()
        }
    }

    #[test]
    fn a_run_stopped_and_continued_is_the_run_that_never_stopped() {
        let mut cuts = 0;
        for kind in [MapKind::Rrr, MapKind::Dm] {
            for (mode, w, h, seed, iters) in [
                ("rate", 4, 4, 1, 3_000),
                ("rate", 4, 4, 2, 2_000),
                ("first", 6, 6, 3, 30_000),
                ("all", 5, 5, 4, 3_000),
                ("extras", 5, 5, 5, 2_000),
            ] {
                let p = puzzle(w, h, seed);
                let extras = mode == "extras";
                let cfg = MapConfig {
                    kind,
                    keep_going: mode == "rate",
                    all_trials: mode != "first",
                    restart_stall: Some(700), // Adaptive weights, kicks, completions and the kept fixed points saved too.
                    adapt: extras.then_some(AdaptiveWeights { rate: 0.1, decay: 0.02, max: 3.0 }),
                    kick: extras.then_some(0.5),
                    complete: extras.then(|| Completion { k: 2, stall: 300, ..Completion::default() }),
                    keep_fixed_points: extras,
                    run: MapRun { trials: 3, max_iters: iters, seed, ..Default::default() },
                    ..Default::default()
                };
                let what = format!("{kind:?} {mode} seed {seed}");
                if extras {
                    let whole = F1Map::new(&p, cfg.clone()).unwrap().run(|_| {});
                    assert!(whole.trials.iter().any(|t| t.completions > 0 && t.stall_restarts > 0), "{what}");
                }
                for stops in [&[1usize][..], &[3, 1, 7], &[20, 20]] {
                    cuts += batch::testing::check_in_parts(&what, stops, mode == "rate", |cancel| {
                        let run = MapRun { save_at_stop: true, cancel: cancel.clone(), ..cfg.run.clone() };
                        F1Map::new(&p, MapConfig { run, ..cfg.clone() }).unwrap()
                    });
                }
            }
        }
        assert!(cuts >= 40, "only {cuts} stops cut a run short");
    }

    #[test]
    fn a_snapshot_refuses_another_puzzle_or_configuration_and_a_damaged_one() {
        let p = puzzle(4, 4, 1);
        let cfg = MapConfig {
            all_trials: true,
            run: MapRun { trials: 2, max_iters: 200, seed: 3, ..Default::default() },
            ..Default::default()
        };
        let mut m = F1Map::new(&p, cfg.clone()).unwrap();
        m.run(|_| {});
        let snap = m.snapshot();
        let refuse = |q: &Puzzle, c: MapConfig| {
            let mut other = F1Map::new(q, c).unwrap();
            let before = other.snapshot();
            let e = other.restore(&snap).unwrap_err();
            assert!(other.snapshot() == before, "a refused restore changed the batch");
            e
        };
        let what = |e: SnapshotError| match e {
            SnapshotError::Mismatch { what, .. } => what,
            e => panic!("{e}"),
        };
        assert_eq!(what(refuse(&puzzle(4, 4, 2), cfg.clone())), "puzzle");
        assert_eq!(what(refuse(&puzzle(5, 4, 1), cfg.clone())), "puzzle");
        assert_eq!(
            what(refuse(&p, MapConfig { run: MapRun { trials: 3, ..cfg.run.clone() }, ..cfg.clone() })),
            "trials"
        );
        assert_eq!(what(refuse(&p, MapConfig { kind: MapKind::Dm, ..cfg.clone() })), "method");
        assert_eq!(what(refuse(&p, MapConfig { run: MapRun { seed: 4, ..cfg.run.clone() }, ..cfg.clone() })), "seed");
        assert_eq!(what(refuse(&p, MapConfig { beta: 0.8, ..cfg.clone() })), "beta");
        assert_eq!(what(refuse(&p, MapConfig { keep_going: true, ..cfg.clone() })), "keep_going");
        let precision = MapConfig { reduced_costs: Precision::F32, ..cfg.clone() };
        assert_eq!(what(refuse(&p, precision)), "reduced_costs");
        let e = refuse(&puzzle(4, 4, 2), cfg.clone()).to_string();
        assert!(e.starts_with("the snapshot does not fit this run: its puzzle is 4x4 puzzle"), "{e}");
        // The budget and the time limit are each part's own.
        let mut more = F1Map::new(
            &p,
            MapConfig {
                run: MapRun { max_iters: 400, time_limit: Some(std::time::Duration::from_secs(9)), ..cfg.run.clone() },
                ..cfg.clone()
            },
        )
        .unwrap();
        more.restore(&snap).unwrap();
        // Damaged snapshots are refused, not a panic.
        let damage = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v = serde_json::to_value(&snap).unwrap();
            f(&mut v);
            let bad: F1Snapshot = serde_json::from_value(v).unwrap();
            let mut fresh = F1Map::new(&p, cfg.clone()).unwrap();
            let before = fresh.snapshot();
            let e = fresh.restore(&bad).unwrap_err();
            assert!(matches!(e, SnapshotError::Damaged(_) | SnapshotError::Version { .. }), "{e}");
            assert!(fresh.snapshot() == before);
        };
        damage(&|v| v["batch"]["trials"][0]["hash_pos"] = 16.into());
        damage(&|v| v["batch"]["trials"][1]["start_improved_at"] = 10_000.into());
        damage(&|v| v["batch"]["best_boards"][0] = 9_999.into());
        damage(&|v| v["batch"]["identity"]["version"] = 99.into());
        damage(&|v| v["x"] = "00000000".into());
        damage(&|v| v["assigners"][0][1]["x"][0] = 500.into());
        damage(&|v| v["assigners"][1][1]["y"][0] = v["assigners"][1][1]["y"][1].clone());
        damage(&|v| {
            v["batch"]["trials"].as_array_mut().unwrap().pop();
        });
        // Text that is not whole floats does not read.
        let mut v = serde_json::to_value(&snap).unwrap();
        v["x"] = "0000000g".into();
        assert!(serde_json::from_value::<F1Snapshot>(v).is_err());
    }

    #[test]
    fn a_kick_moves_every_coordinate_by_at_most_half_its_size() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut x = vec![1.0f32; 1000];
        kick(&mut x, &mut rng, 0.2);
        assert!(x.iter().all(|v| (v - 1.0).abs() <= 0.1 + 1e-6));
        assert!(x.iter().any(|v| (v - 1.0).abs() > 0.05));
    }

    #[test]
    fn a_fixed_point_stays_put() {
        // x = the picture of the planted solution is a fixed point of RRR.
        let (p, sol) =
            generate(&GenerateOptions { width: 4, height: 3, frame_colors: None, inner_colors: None, seed: 2 })
                .unwrap();
        let cfg = MapConfig { run: MapRun { trials: 1, max_iters: 1, ..Default::default() }, ..Default::default() };
        let mut m = F1Map::new(&p, cfg.clone()).unwrap();
        let f1 = m.f1.clone();
        let _ = &cfg;
        let cands = p.candidates();
        let ids: Vec<u32> = (0..p.cells())
            .map(|c| {
                let off: usize = (0..c).map(|d| cands.len(d)).sum();
                (off + cands.of(c).iter().position(|pl| *pl == sol.cells[c]).unwrap()) as u32
            })
            .collect();
        let mut x = vec![0.0; f1.dim()];
        f1.embed(&ids, &mut x);
        m.x.copy_from_slice(&x);
        let r = m.run(|_| {});
        assert_eq!(r.solution.map(|s| s.1), Some(1));
        assert_eq!(m.x, x);
    }
}
