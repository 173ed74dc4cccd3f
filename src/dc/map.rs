//! F2's batch driver on the CPU (the module `dc` says what the map is): [`DcConfig`], the
//! batch [`DcMap`] with its trial-major state and its workers, the iteration's passes, the
//! readout, snapshots ([`DcSnapshot`]), [`solve`] and [`estimate`].

use super::layout::{DcLayout, Layout, dc_sizes, dc_tables};
use super::project::{self, DivideScratch, divide_one};
use super::prune;
use crate::assign::{AssignError, Assigner, WarmState};
use crate::batch::MapRun;
use crate::batch::{
    self, BatchError, Between, Completion, Floats, MapKind, MapResult, Mechanism, Progress, ROUND, SavedBatch,
    SnapshotError, SnapshotIdentity, Span, Trial, TrialSummary, chunk_size, completer, identity_option,
};
use crate::cancel::{Cancel, Deadline};
use crate::hash::OFFSET;
use crate::limits::Estimate;
use crate::limits::memory::{ALLOC, Shape, TRIAL_BOOKKEEPING, WORD, slack, workers};
use crate::puzzle::{Board, Puzzle};
use crate::search::backtrack::Backtracker;
use crate::verify;
use crate::verify::Network;
use rand::RngExt;
use rayon::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// How the constraints are weighted in the concur mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Weights {
    /// Every replica counts the same.
    #[default]
    Uniform,
    /// Elser's adaptive constraint weights: `w += gamma (err / mean_err - w)`.
    Adaptive,
}

/// How the concur point is turned into a board every iteration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Readout {
    /// Per-cell argmax, scored only when it uses every piece once; the assignment readout
    /// runs only on the last iteration of each round (every 64 iterations), to track the best
    /// board.
    #[default]
    Argmax,
    /// Every iteration: the per-cell argmax when it is a permutation, else the max-weight
    /// assignment of pieces to cells over the concur values (always a permutation).
    Assignment,
}

/// Parameters of a divide-and-concur run.
#[derive(Clone, Debug)]
pub struct DcConfig {
    /// RRR or the general-beta difference map (`a` = concur, `b` = divide).
    pub kind: MapKind,
    /// The map's step.
    pub beta: f32,
    /// How the batch runs: its trials, their iteration budget, the time limit, the seed,
    /// where rate mode's solutions go, the token, and whether a stop saves the batch.
    pub run: MapRun,
    /// The constraint weights in the concur mean: uniform, or Elser's adaptive weights.
    pub weights: Weights,
    /// Step of the adaptive weight update (ignored with uniform weights).
    pub gamma: f32,
    /// The constraints: a cell, piece and join constraint each ([`DcLayout::Plain`], the
    /// default here and the GPU's), or one global assignment constraint and the joins
    /// ([`DcLayout::Hybrid`], the command line's default).
    pub layout: DcLayout,
    /// How the board is read out of the concur values.
    pub readout: Readout,
    /// Run every trial to its budget (`--all-trials`) instead of stopping the whole batch at
    /// the first verified solution.
    pub all_trials: bool,
    /// Do not restart trials caught in an exact limit cycle (`--no-cycle-restart`).
    pub no_cycle_restart: bool,
    /// Arc-consistent completion of near-fixed points (None: the map alone), as for F1.
    pub complete: Option<Completion>,
    /// Keep the slot values (and weights) at which each trial solved, for certificates.
    pub keep_fixed_points: bool,
    /// Propagation folded in ([`prune`]): once per round, the candidates that arc
    /// consistency rules out given the cells whose concur value reaches this threshold are
    /// held at 0 with certain weight. None: the plain map.
    pub propagate: Option<f32>,
    /// Rate mode, as for F1 (its `MapConfig::keep_going`): every solution is
    /// verified and recorded, and its trial starts again from a fresh point of its stream.
    pub keep_going: bool,
    /// Continue the run saved in this snapshot instead of starting afresh, as for F1:
    /// [`DcMap::new`] starts afresh all the same, [`DcMap::restore`] continues it (the CPU
    /// backend and [`solve`] do). The CPU backend only.
    pub resume: Option<Arc<DcSnapshot>>,
}

/// Bytes of replica state per trial: the `S` slot values (f32). The per-trial chosen slots
/// (one `u32` per cell and piece constraint, two per join) and the adaptive weights (one
/// `f32` per constraint) come on top; both are small next to `S`.
pub fn replica_bytes(puzzle: &Puzzle, layout: DcLayout) -> usize {
    Layout::new(puzzle, layout).slots() * std::mem::size_of::<f32>()
}

/// Adaptive weights never fall below this, so no variable's weights can all vanish.
const MIN_WEIGHT: f32 = 1e-3;

/// One F2 trial: the shared bookkeeping ([`Trial`]) and this driver's own state.
type DcTrial = Trial<DcState>;

/// The per-trial solver state of F2 (not the flat float state).
#[derive(Clone, Debug)]
struct DcState {
    /// The slot values, weights and pruned variables whose concur point gave the solution
    /// (with `keep_fixed_points`).
    fixed: Option<FixedPoint>,
    /// Variables the concur projection holds at 0 this round (with `propagate`).
    pruned: Vec<u32>,
    /// Solvers of the assignment constraint (hybrid) and of the assignment readout.
    asg_con: Vec<Assigner>,
    asg_read: Vec<Assigner>,
}

/// The state a solving trial's certificate is made from.
#[derive(Clone, Debug)]
struct FixedPoint {
    x: Vec<f32>,
    lambda: Vec<f32>,
    pruned: Vec<u32>,
}

/// Scratch of one worker, allocated once per run.
struct Worker<'p> {
    /// Arc-consistent completion, when enabled.
    completer: Option<Backtracker<'p>>,
    /// Per-round pruning (with `propagate`).
    pruner: Option<prune::Pruner>,
    /// The slot values and weights before the current step (with `keep_fixed_points`).
    prev_x: Vec<f32>,
    prev_l: Vec<f32>,
    /// Per variable: sum of weighted replicas, sum of weights, weight of chosen slots.
    acc: Vec<f32>,
    den: Vec<f32>,
    cnt: Vec<f32>,
    /// The concur point that is read out (RRR: `P_a(2 P_b x - x)`; DM: `P_a(f_b(y))`).
    m: Vec<f32>,
    /// DM: `P_a(y)`.
    ca: Vec<f32>,
    /// DM: `f_a(y)` on one constraint, and the chosen slots of `P_b(f_a(y))` there.
    buf: Vec<f32>,
    tmp: Vec<u32>,
    /// Per-constraint error (adaptive weights).
    err: Vec<f32>,
    div: DivideScratch,
    board: Vec<u32>,
    seen: Vec<bool>,
    /// `acc`, `den` and `cnt` hold the concur sums of the current trial's state (uniform
    /// weights: the update pass accumulates them for the next iteration).
    fresh: bool,
}

impl<'p> Worker<'p> {
    fn new(layout: &Layout, completer: Option<Backtracker<'p>>, pruner: Option<prune::Pruner>) -> Self {
        let v = layout.vars();
        Worker {
            completer,
            pruner,
            prev_x: Vec::new(),
            prev_l: Vec::new(),
            acc: vec![0.0; v],
            den: vec![0.0; v],
            cnt: vec![0.0; v],
            m: vec![0.0; v],
            ca: vec![0.0; v],
            buf: vec![0.0; layout.max_constraint_len()],
            tmp: vec![0; layout.max_choices()],
            err: vec![0.0; layout.constraints()],
            div: DivideScratch::new(layout),
            board: vec![0; layout.cells()],
            seen: vec![false; layout.cells()],
            fresh: false,
        }
    }
}

/// What every trial of a batch shares.
struct Ctx<'a> {
    puzzle: &'a Puzzle,
    layout: &'a Layout,
    cfg: &'a DcConfig,
    max_score: usize,
    /// Run the reference kernels (see [`DcMap::with_reference_kernels`]).
    reference: bool,
}

impl<'a> Ctx<'a> {
    fn new(puzzle: &'a Puzzle, layout: &'a Layout, cfg: &'a DcConfig, reference: bool) -> Self {
        Ctx { puzzle, layout, cfg, max_score: puzzle.max_score(), reference }
    }
}

/// A batch in the middle of [`DcMap::run`], with the run's workers and its trials per chunk.
struct Running<'m, 'a> {
    map: &'m mut DcMap<'a>,
    workers: Vec<Worker<'a>>,
    per: usize,
}

impl batch::HostBatch for Running<'_, '_> {
    type Extra = DcState;

    fn trials(&self) -> &[DcTrial] {
        &self.map.trials
    }

    fn round(&mut self, until: &Deadline, cut: &AtomicBool) {
        let (map, per) = (&mut *self.map, self.per);
        let layout = &map.layout;
        let (s, nc, nk, n) = (layout.slots(), layout.choices(), layout.constraints(), layout.cells());
        let ctx = Ctx::new(map.puzzle, layout, &map.cfg, map.reference);
        map.x
            .par_chunks_mut(per * s)
            .zip(map.chosen.par_chunks_mut(per * nc))
            .zip(map.lambda.par_chunks_mut(per * nk))
            .zip(map.trials.par_chunks_mut(per))
            .zip(map.best_boards.par_chunks_mut(per * n))
            .zip(self.workers.par_iter_mut())
            .for_each(|(((((xs, chs), lams), trs), bests), wk)| {
                for ((((x, ch), lam), tr), best) in
                    xs.chunks_mut(s).zip(chs.chunks_mut(nc)).zip(lams.chunks_mut(nk)).zip(trs).zip(bests.chunks_mut(n))
                {
                    if until.passed() {
                        cut.store(true, Ordering::Relaxed);
                        break;
                    }
                    run_trial_round(&ctx, x, ch, lam, tr, best, wk, None);
                }
            });
    }

    fn harvest(&mut self, rounds: &mut batch::Rounds) {
        let map = &mut *self.map;
        let (puzzle, layout) = (map.puzzle, &map.layout);
        let (s, nc, nk) = (layout.slots(), layout.choices(), layout.constraints());
        let best = &map.best_boards;
        let board_of = |t| batch::best_board(puzzle, best, t, |b| layout.placements(b));
        for t in rounds.harvest(puzzle, &mut map.trials, board_of) {
            let tr = &mut map.trials[t];
            let (x, ch, lam) = (
                &mut map.x[t * s..(t + 1) * s],
                &mut map.chosen[t * nc..(t + 1) * nc],
                &mut map.lambda[t * nk..(t + 1) * nk],
            );
            if start_trial(layout, x, ch, lam, tr, &mut self.workers[0], map.reference).is_err() {
                tr.iterations = map.cfg.run.max_iters;
            }
        }
    }
    type Snapshot = DcSnapshot;

    fn between(&mut self) -> &mut Between<DcSnapshot> {
        &mut self.map.between
    }

    fn snapshot(&self) -> DcSnapshot {
        self.map.snapshot()
    }

    fn finish(&self, rounds: batch::Rounds) -> MapResult {
        // F2 has no stall restart: every trial's `stall_restarts` stays 0.
        let layout = &self.map.layout;
        rounds.finish(self.map.puzzle, &self.map.trials, &self.map.best_boards, |b| layout.placements(b))
    }
}

/// The divide-and-concur engine for one puzzle: tables plus the batch.
pub struct DcMap<'a> {
    puzzle: &'a Puzzle,
    layout: Layout,
    cfg: DcConfig,
    /// Slot values, trial-major (`trials * S`).
    x: Vec<f32>,
    /// Chosen slots of `P_b(x)`, trial-major (`trials * choices`).
    chosen: Vec<u32>,
    /// Constraint weights, trial-major (`trials * C`); all 1 with uniform weights.
    lambda: Vec<f32>,
    trials: Vec<DcTrial>,
    /// Best board per trial (one variable per cell), trial-major.
    best_boards: Vec<u32>,
    /// Run the reference kernels instead of the fast ones.
    reference: bool,
    /// The stepper's workers ([`DcMap::step`]), one per trial, made at its first step: a
    /// round it stops inside goes on with the same worker's sums.
    steppers: Vec<Worker<'a>>,
    /// What it keeps between runs: rate mode's bookkeeping, a restored part, a stopped run's
    /// snapshot.
    between: Between<DcSnapshot>,
}

impl<'a> DcMap<'a> {
    /// Builds the tables and the random starts. Fails when no board fits the rim at all.
    pub fn new(puzzle: &'a Puzzle, cfg: DcConfig) -> Result<Self, AssignError> {
        let layout = Layout::new(puzzle, cfg.layout);
        layout.check_feasible()?;
        let trials = cfg.run.trials.max(1);
        let (s, nc, nk, n) = (layout.slots(), layout.choices(), layout.constraints(), layout.cells());
        let mut map = DcMap {
            puzzle,
            x: vec![0.0; trials * s],
            chosen: vec![0; trials * nc],
            lambda: vec![1.0; trials * nk],
            trials: (0..trials)
                .map(|t| {
                    let st = DcState {
                        fixed: None,
                        pruned: Vec::new(),
                        asg_con: layout.assigners(),
                        asg_read: layout.assigners(),
                    };
                    Trial::new(cfg.run.seed, t, st)
                })
                .collect(),
            best_boards: vec![0; trials * n],
            layout,
            cfg,
            reference: false,
            steppers: Vec::new(),
            between: Between::default(),
        };
        let mut wk = Worker::new(&map.layout, None, None);
        let layout = &map.layout;
        for ((((x, ch), lam), tr), best) in map
            .x
            .chunks_mut(s)
            .zip(map.chosen.chunks_mut(nc))
            .zip(map.lambda.chunks_mut(nk))
            .zip(&mut map.trials)
            .zip(map.best_boards.chunks_mut(n))
        {
            start_trial(layout, x, ch, lam, tr, &mut wk, false)?;
            // The first best board: the assignment readout of the start (x[..V] holds the
            // cell or assignment replicas, indexed by variable).
            layout.assign(&x[..layout.vars()], &mut wk.div.assign, &mut tr.extra.asg_read, false, best)?;
            tr.best_score = layout.score(best);
        }
        Ok(map)
    }

    /// Runs the iterations with the reference kernels (the slot-at-a-time update and
    /// [`project::divide_one_reference`]) instead of the fast ones; the iterates are the
    /// same bit for bit, only slower. For tests and benchmarks of the fast kernels.
    pub fn with_reference_kernels(mut self) -> Result<Self, AssignError> {
        self.reference = true;
        // The starts' divide again, by the reference (the same slots; a cold assignment
        // leaves its solver as it found it).
        let (layout, (s, nc)) = (&self.layout, (self.layout.slots(), self.layout.choices()));
        let mut div = DivideScratch::new(layout);
        for ((x, ch), tr) in self.x.chunks(s).zip(self.chosen.chunks_mut(nc)).zip(&mut self.trials) {
            project::divide_reference(layout, x, ch, &mut div, &mut tr.extra.asg_con, false)?;
        }
        Ok(self)
    }

    /// The replica layout the batch runs.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The slot values of trial `t`.
    pub fn state(&self, t: usize) -> &[f32] {
        let s = self.layout.slots();
        &self.x[t * s..(t + 1) * s]
    }

    /// Runs the batch until a verified solution (without `all_trials`), every trial's
    /// iteration budget, or the time limit; `progress` is called after every round.
    ///
    /// After [`DcMap::restore`] the run continues the saved one, and with `save_at_stop` a
    /// tripped token stops it between rounds and keeps a snapshot, as F1's `F1Map::run`
    /// does.
    pub fn run(&mut self, progress: impl FnMut(&Progress)) -> MapResult {
        let rules = batch::StopRules::new(&self.cfg.run, self.cfg.keep_going, self.cfg.all_trials);
        let per = chunk_size(self.trials.len());
        let workers = self.workers(self.trials.len().div_ceil(per));
        batch::run(&mut Running { map: self, workers, per }, &rules, progress)
    }

    /// `n` workers' scratch, with the completer and the pruner when the run has them.
    fn workers(&self, n: usize) -> Vec<Worker<'a>> {
        let needs_network = self.cfg.complete.is_some() || self.cfg.propagate.is_some();
        let network = needs_network.then(|| Arc::new(Network::new(self.puzzle)));
        let (puzzle, layout, cfg) = (self.puzzle, &self.layout, &self.cfg);
        (0..n)
            .map(|_| {
                let bt = cfg.complete.as_ref().zip(network.as_ref()).map(|(c, net)| completer(puzzle, net, c));
                let pr = cfg.propagate.and(network.clone()).map(prune::Pruner::new);
                Worker::new(layout, bt, pr)
            })
            .collect()
    }

    /// **The stepper**: advances every trial by `k` iterations (fewer at `max_iters`) as
    /// [`DcMap::run`] runs them: the same iteration, readouts, pruning and restarts, the rounds
    /// cut where `run` cuts them (`batch::Span::until`), each trial on a worker of its own so that
    /// a round stopped inside goes on as it would have. Stepping a batch `n` iterations, in
    /// steps of any sizes, leaves the state a run of `n` iterations per trial leaves (with
    /// `all_trials`), bit for bit, so the states and their certificates
    /// ([`crate::certify::make_dc`]) are the command line's for the same seed. No stop rule
    /// of the batch applies: a trial that solves stands still (as in `run`), the others go
    /// on. `cancel` ends the step at the next round of each trial (the trials may then stand
    /// at different iterations); returns false when it did. Its workers, one per trial, come
    /// on top of what [`estimate`] counts (it sizes `run`, a few workers per thread).
    pub fn step(&mut self, k: u64, cancel: &Cancel) -> bool {
        let trials = self.trials.len();
        if self.steppers.len() != trials {
            self.steppers = self.workers(trials);
        }
        let layout = &self.layout;
        let (s, nc, nk, n) = (layout.slots(), layout.choices(), layout.constraints(), layout.cells());
        let ctx = Ctx::new(self.puzzle, layout, &self.cfg, self.reference);
        let max_iters = self.cfg.run.max_iters;
        self.x
            .par_chunks_mut(s)
            .zip(self.chosen.par_chunks_mut(nc))
            .zip(self.lambda.par_chunks_mut(nk))
            .zip(self.trials.par_iter_mut())
            .zip(self.best_boards.par_chunks_mut(n))
            .zip(self.steppers.par_iter_mut())
            .for_each(|(((((x, ch), lam), tr), best), wk)| {
                let target = tr.iterations.saturating_add(k);
                while tr.is_active(max_iters) && tr.iterations < target && !cancel.is_cancelled() {
                    run_trial_round(&ctx, x, ch, lam, tr, best, wk, Some(target));
                }
            });
        !cancel.is_cancelled()
    }

    /// Every trial's slot values, trial-major (`trials * slots` floats).
    pub fn states(&self) -> &[f32] {
        &self.x
    }

    /// The constraint weights of trial `t` (all 1 with uniform weights).
    pub fn weights(&self, t: usize) -> &[f32] {
        let k = self.layout.constraints();
        &self.lambda[t * k..(t + 1) * k]
    }

    /// Puts trial `t` at the slot values `x` (`slots` floats), as a restart would: `P_b(x)`
    /// projected afresh with cold assignments, the cycle memory cleared; its weights,
    /// counters and best board stay. Panics when `x` is not `slots` long.
    pub fn set_state(&mut self, t: usize, x: &[f32]) -> Result<(), AssignError> {
        let (layout, s, nc) = (&self.layout, self.layout.slots(), self.layout.choices());
        self.x[t * s..(t + 1) * s].copy_from_slice(x);
        let tr = &mut self.trials[t];
        tr.warm = false;
        tr.forget_cycles();
        if let Some(wk) = self.steppers.get_mut(t) {
            wk.fresh = false;
        }
        let divide = if self.reference { project::divide_reference } else { project::divide };
        let mut div = DivideScratch::new(layout);
        divide(
            layout,
            &self.x[t * s..(t + 1) * s],
            &mut self.chosen[t * nc..(t + 1) * nc],
            &mut div,
            &mut tr.extra.asg_con,
            false,
        )
    }

    /// What each trial has done so far, as a run's result reports it.
    pub fn trial_summaries(&self) -> Vec<TrialSummary> {
        self.trials.iter().map(Trial::summary).collect()
    }

    /// The slot values, constraint weights and pruned variables to certify for trial `t`:
    /// those whose concur point gave its solution when the map solved it (with
    /// `keep_fixed_points`), else its current state.
    pub fn certified_state(&self, t: usize) -> (&[f32], &[f32], &[u32]) {
        let tr = &self.trials[t];
        match &tr.extra.fixed {
            Some(f) => (&f.x, &f.lambda, &f.pruned),
            None => {
                let k = self.layout.constraints();
                (self.state(t), &self.lambda[t * k..(t + 1) * k], &tr.extra.pruned)
            }
        }
    }

    /// The batch's configuration.
    pub fn config(&self) -> &DcConfig {
        &self.cfg
    }

    /// Raises (or lowers) every trial's iteration budget, so that an instrumented run can
    /// call [`DcMap::run`] a round at a time; the trials go on from where they stopped.
    pub fn set_max_iters(&mut self, max_iters: u64) {
        self.cfg.run.max_iters = max_iters;
    }

    /// The variables trial `t` holds at 0 in its concur projection this round (`propagate`).
    pub fn pruned(&self, t: usize) -> &[u32] {
        &self.trials[t].extra.pruned
    }

    /// The iterations trial `t` has run and whether it has solved.
    pub fn trial_status(&self, t: usize) -> (u64, bool) {
        (self.trials[t].iterations, self.trials[t].solved_at.is_some())
    }

    /// The best board of trial `t` (its solution, when it solved).
    pub fn best_board(&self, t: usize) -> Board {
        batch::best_board(self.puzzle, &self.best_boards, t, |b| self.layout.placements(b))
    }
}

/// The saved state of a divide-and-concur batch ([`DcMap::snapshot`]), as
/// `f1::map::F1Snapshot` is F1's: what it was taken of ([`DcSnapshot::identity`]), each
/// trial's record, the best boards and rate mode's bookkeeping, and the driver's state: the
/// slot values, the chosen slots of `P_b`, the constraint weights, the pruned variables, the
/// warm starts of the assignment constraint's and the readout's solvers, and with
/// `keep_fixed_points` the solving states. Not saved: the tables, the workers' scratch and
/// concur sums (gathered afresh at every round's start), the sink, the token and the clock.
/// A batch restored from it goes on exactly as the saved one would have from a round's end
/// (where [`DcMap::run`] stops); from inside a round (a [`DcMap::step`] that stopped there)
/// the restored batch gathers its concur sums afresh, which may round differently.
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DcSnapshot {
    batch: SavedBatch,
    x: Floats,
    chosen: Vec<u32>,
    lambda: Floats,
    pruned: Vec<Vec<u32>>,
    asg_con: Vec<Vec<WarmState>>,
    asg_read: Vec<Vec<WarmState>>,
    fixed: Vec<Option<SavedFixedPoint>>,
}

/// A kept solving state ([`FixedPoint`]) in a snapshot.
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct SavedFixedPoint {
    x: Floats,
    lambda: Floats,
    pruned: Vec<u32>,
}

batch::saved_batch_api!(DcSnapshot);

impl<'a> DcMap<'a> {
    /// What a snapshot of this batch is taken of (see [`SnapshotIdentity`]).
    fn identity(&self) -> SnapshotIdentity {
        let c = &self.cfg;
        let options = vec![
            identity_option("dc_map", c.kind),
            identity_option("beta", c.beta),
            identity_option("weights", c.weights),
            identity_option("gamma", c.gamma),
            identity_option("layout", c.layout),
            identity_option("readout", c.readout),
            identity_option("stop_at_first", !c.all_trials),
            identity_option("cycle_restart", !c.no_cycle_restart),
            identity_option("complete", &c.complete),
            identity_option("propagate", c.propagate),
            identity_option("keep_going", c.keep_going),
        ];
        SnapshotIdentity::new("dc", self.puzzle, self.trials.len(), self.layout.slots(), c.run.seed, options)
    }

    /// The batch's state now, as [`DcSnapshot`] saves it, with rate mode's bookkeeping of the
    /// last run (or of the snapshot restored).
    pub fn snapshot(&self) -> DcSnapshot {
        let fixed = |f: &FixedPoint| SavedFixedPoint {
            x: Floats(f.x.clone()),
            lambda: Floats(f.lambda.clone()),
            pruned: f.pruned.clone(),
        };
        DcSnapshot {
            batch: SavedBatch::save(self.identity(), &self.trials, &self.best_boards, self.between.rate.clone()),
            x: Floats(self.x.clone()),
            chosen: self.chosen.clone(),
            lambda: Floats(self.lambda.clone()),
            pruned: self.trials.iter().map(|t| t.extra.pruned.clone()).collect(),
            asg_con: self.trials.iter().map(|t| crate::assign::warm_states(&t.extra.asg_con)).collect(),
            asg_read: self.trials.iter().map(|t| crate::assign::warm_states(&t.extra.asg_read)).collect(),
            fixed: self.trials.iter().map(|t| t.extra.fixed.as_ref().map(fixed)).collect(),
        }
    }

    /// The snapshot the last [`DcMap::run`] kept when its token stopped it (with
    /// `save_at_stop`, and for no other reason); None otherwise. Taken once.
    pub fn take_snapshot(&mut self) -> Option<DcSnapshot> {
        self.between.stopped.take()
    }

    /// Puts the batch in the state `s` saved, so that it goes on as the saved batch would
    /// have; the next [`DcMap::run`] continues the saved run. Refused, with the batch
    /// unchanged, when `s` was taken of another puzzle, batch, seed or trajectory-shaping
    /// option, is of another format version, or is damaged (as F1's `F1Map::restore`).
    pub fn restore(&mut self, s: &DcSnapshot) -> Result<(), SnapshotError> {
        let layout = &self.layout;
        let trials = self.trials.len();
        let (sl, nc, nk, n, nv) =
            (layout.slots(), layout.choices(), layout.constraints(), layout.cells(), layout.vars());
        s.batch.check(&self.identity(), n)?;
        let damaged = |what: &str| Err(SnapshotError::Damaged(what.to_string()));
        if s.x.0.len() != trials * sl || s.chosen.len() != trials * nc || s.lambda.0.len() != trials * nk {
            return damaged("its slot values, chosen slots or weights are not the batch's size");
        }
        let per_trial = [s.pruned.len(), s.asg_con.len(), s.asg_read.len(), s.fixed.len()];
        if per_trial.iter().any(|&l| l != trials) {
            return damaged("its pruned variables, solvers or kept states are not one per trial");
        }
        let chosen_fit = s.chosen.chunks(nc.max(1)).all(|ch| {
            (0..nk).all(|k| {
                let slots = layout.con_range(k);
                ch[layout.choice_range(k)].iter().all(|&q| slots.contains(&(q as usize)))
            })
        });
        let vars_fit = |p: &[u32]| p.iter().all(|&v| (v as usize) < nv);
        let fixed_fit =
            s.fixed.iter().flatten().all(|f| f.x.0.len() == sl && f.lambda.0.len() == nk && vars_fit(&f.pruned));
        if !chosen_fit || !s.pruned.iter().all(|p| vars_fit(p)) || !fixed_fit {
            return damaged("a chosen slot, a pruned variable or a kept state is out of range");
        }
        if !s.batch.best_boards.iter().enumerate().all(|(i, &j)| layout.cell_vars(i % n).contains(&(j as usize))) {
            return damaged("a best board places a piece its cell cannot hold");
        }
        let mut states = Vec::with_capacity(trials);
        for t in 0..trials {
            let (mut asg_con, mut asg_read) = (layout.assigners(), layout.assigners());
            crate::assign::set_warm_states(&mut asg_con, &s.asg_con[t]).map_err(SnapshotError::Damaged)?;
            crate::assign::set_warm_states(&mut asg_read, &s.asg_read[t]).map_err(SnapshotError::Damaged)?;
            let fixed = s.fixed[t].as_ref().map(|f| FixedPoint {
                x: f.x.0.clone(),
                lambda: f.lambda.0.clone(),
                pruned: f.pruned.clone(),
            });
            states.push(Some(DcState { fixed, pruned: s.pruned[t].clone(), asg_con, asg_read }));
        }
        let restored = s.batch.trials(self.puzzle.max_score(), |t| states[t].take().expect("one state per trial"))?;
        self.x.copy_from_slice(&s.x.0);
        self.chosen.copy_from_slice(&s.chosen);
        self.lambda.copy_from_slice(&s.lambda.0);
        self.best_boards.copy_from_slice(&s.batch.best_boards);
        self.trials = restored;
        // The stepper's concur sums were the old state's: gathered afresh at the next step.
        self.steppers.clear();
        self.between.restored(&s.batch);
        Ok(())
    }
}

/// A fresh random start: uniform slot values in [0, 1), unit weights, and `P_b(x)`.
fn start_trial(
    layout: &Layout,
    x: &mut [f32],
    chosen: &mut [u32],
    lambda: &mut [f32],
    tr: &mut DcTrial,
    wk: &mut Worker,
    reference: bool,
) -> Result<(), AssignError> {
    x.iter_mut().for_each(|v| *v = tr.rng.random::<f32>());
    lambda.iter_mut().for_each(|l| *l = 1.0);
    tr.warm = false;
    tr.forget_cycles();
    tr.extra.pruned.clear();
    wk.fresh = false;
    let divide = if reference { project::divide_reference } else { project::divide };
    divide(layout, x, chosen, &mut wk.div, &mut tr.extra.asg_con, false)
}

/// Restarts a trial (limit cycle or non-finite state); the restart itself cannot fail on a
/// feasible layout, and if it somehow does the trial is given up.
fn restart(ctx: &Ctx, x: &mut [f32], chosen: &mut [u32], lambda: &mut [f32], tr: &mut DcTrial, wk: &mut Worker) {
    tr.restarts += 1;
    if start_trial(ctx.layout, x, chosen, lambda, tr, wk, ctx.reference).is_err() {
        tr.iterations = ctx.cfg.run.max_iters;
    }
}

/// One round (up to [`ROUND`] iterations) of one trial. `target`: None runs the whole round
/// ([`DcMap::run`]); the stepper stops at its target inside the round and goes on from there
/// later with the same worker, the trial's own ([`Span::until`]).
#[allow(clippy::too_many_arguments, reason = "one trial's slices, its worker and where it stops")]
fn run_trial_round(
    ctx: &Ctx,
    x: &mut [f32],
    chosen: &mut [u32],
    lambda: &mut [f32],
    tr: &mut DcTrial,
    best: &mut [u32],
    wk: &mut Worker,
    target: Option<u64>,
) {
    let cfg = ctx.cfg;
    if !tr.is_active(cfg.run.max_iters) {
        return;
    }
    let start = tr.iterations;
    let span = match target {
        None => Span::round(start, cfg.run.max_iters),
        Some(t) => Span::until(start, cfg.run.max_iters, t),
    };
    let steps = span.pause - start;
    // The worker's sums belong to the trial it ran last (the stepper's worker is the trial's
    // own, and inside a round they are still this trial's).
    if target.is_none() || !Span::inside(start) {
        wk.fresh = false;
    }
    for i in 0..steps {
        tr.iterations += 1;
        let last = start + i + 1 == span.end;
        let assign = cfg.readout == Readout::Assignment || last;
        let before = tr.best_score;
        if cfg.keep_fixed_points {
            wk.prev_x.clear();
            wk.prev_x.extend_from_slice(x);
            wk.prev_l.clear();
            wk.prev_l.extend_from_slice(lambda);
        }
        let ok = step(ctx, x, chosen, lambda, tr, wk).and_then(|()| readout(ctx, tr, best, wk, assign));
        match ok {
            Err(_) => restart(ctx, x, chosen, lambda, tr, wk),
            Ok(true) => {
                tr.solve(Mechanism::Map);
                if cfg.keep_fixed_points {
                    let (x, lambda, pruned) = (wk.prev_x.clone(), wk.prev_l.clone(), tr.extra.pruned.clone());
                    tr.extra.fixed = Some(FixedPoint { x, lambda, pruned });
                }
                return;
            }
            Ok(false) => {
                tr.warm = true;
                // The round's last concur point sets the next round's pruned candidates.
                if let (true, Some(tau), Some(pr)) = (last, cfg.propagate, wk.pruner.as_mut()) {
                    pr.prune(ctx.layout, &wk.m, tau, &mut tr.extra.pruned);
                }
                if let (Some(comp), Some(bt)) = (&cfg.complete, wk.completer.as_mut()) {
                    let (layout, improved, score) = (ctx.layout, tr.best_score > before, tr.best_score);
                    let id = |c, pl| layout.variable_of(c, pl);
                    tr.complete(comp, bt, ctx.puzzle, improved, score, best, |b| layout.placements(b), id);
                    if tr.solved_at.is_some() {
                        return;
                    }
                }
            }
        }
    }
    if span.pause == span.end && !cfg.no_cycle_restart && tr.iterations.is_multiple_of(ROUND) {
        let mut h = batch::fingerprint(x, OFFSET);
        if cfg.weights == Weights::Adaptive {
            h = batch::fingerprint(lambda, h);
        }
        if tr.in_cycle(h) {
            restart(ctx, x, chosen, lambda, tr, wk);
        }
    }
}

/// Concur gather: per variable, the weighted sum of its replicas (`acc`), the sum of their
/// weights (`den`) and the weight of its chosen slots in `P_b` (`cnt`).
fn gather(layout: &Layout, x: &[f32], chosen: &[u32], lambda: Option<&[f32]>, wk: &mut Worker) {
    let (vs, vc, sv) = (layout.var_slot(), layout.var_con(), layout.slot_var());
    let offs = layout.var_off().windows(2);
    match lambda {
        None => {
            for ((r, a), d) in offs.zip(&mut wk.acc).zip(&mut wk.den) {
                let r = r[0] as usize..r[1] as usize;
                *d = r.len() as f32;
                *a = vs[r].iter().map(|&s| x[s as usize]).sum();
            }
            wk.cnt.iter_mut().for_each(|c| *c = 0.0);
            for &s in chosen {
                wk.cnt[sv[s as usize] as usize] += 1.0;
            }
        }
        Some(l) => {
            for ((r, a), d) in offs.zip(&mut wk.acc).zip(&mut wk.den) {
                let r = r[0] as usize..r[1] as usize;
                let (mut num, mut den) = (0.0f32, 0.0f32);
                for (&s, &k) in vs[r.clone()].iter().zip(&vc[r]) {
                    let w = l[k as usize];
                    num += w * x[s as usize];
                    den += w;
                }
                *a = num;
                *d = den;
            }
            wk.cnt.iter_mut().for_each(|c| *c = 0.0);
            for (k, &w) in l.iter().enumerate() {
                for &s in &chosen[layout.choice_range(k)] {
                    wk.cnt[sv[s as usize] as usize] += w;
                }
            }
        }
    }
}

/// `x[s] += beta * m[slot_var[s]]` over one constraint's slots, then `x[chosen] -= beta`.
/// With `acc` (uniform weights) it also adds the new slot values into `acc`, the concur sums
/// of the next iteration, and returns 0; without it (adaptive weights) it returns the squared
/// distance between the constraint's divided replica (the chosen slots) and `m` there.
#[inline]
fn apply(
    x: &mut [f32],
    base: usize,
    vars: &[u32],
    m: &[f32],
    chosen: &[u32],
    beta: f32,
    acc: Option<&mut [f32]>,
) -> f32 {
    match acc {
        Some(acc) => {
            for (xv, &j) in x.iter_mut().zip(vars) {
                let j = j as usize;
                *xv += beta * m[j];
                acc[j] += *xv;
            }
            for &s in chosen {
                let s = s as usize - base;
                x[s] -= beta;
                acc[vars[s] as usize] -= beta;
            }
            0.0
        }
        None => {
            let mut e2 = 0.0f32;
            for (xv, &j) in x.iter_mut().zip(vars) {
                let mv = m[j as usize];
                *xv += beta * mv;
                e2 += mv * mv;
            }
            for &s in chosen {
                let s = s as usize - base;
                e2 += 1.0 - 2.0 * m[vars[s] as usize];
                x[s] -= beta;
            }
            e2
        }
    }
}

/// [`apply`] with `acc` (uniform weights), bit for bit, over the constraint's runs
/// ([`Layout::runs`]): each run is a contiguous slice of slots copying a contiguous slice of
/// variables, so `x += beta m` and `acc += x` stream three slices the compiler vectorises,
/// where [`apply`] gathers `m` and scatters `acc` through `slot_var` one slot at a time.
/// A variable has at most one slot per constraint, so the order in which a constraint's
/// slots are visited does not change any sum; the chosen slots are then fixed up in the same
/// order as in [`apply`] (`acc[j] = (acc[j] + x) - beta`, two roundings, as there).
#[inline]
fn apply_runs(layout: &Layout, k: usize, x: &mut [f32], m: &[f32], chosen: &[u32], beta: f32, acc: &mut [f32]) {
    let base = layout.con_range(k).start;
    for &[s, j, len] in layout.runs(k) {
        let (s, j, len) = (s as usize - base, j as usize, len as usize);
        let (xs, ms) = (&mut x[s..s + len], &m[j..j + len]);
        for ((xv, &mv), a) in xs.iter_mut().zip(ms).zip(&mut acc[j..j + len]) {
            *xv += beta * mv;
            *a += *xv;
        }
    }
    let vars = layout.slot_var();
    for &s in chosen {
        x[s as usize - base] -= beta;
        acc[vars[s as usize] as usize] -= beta;
    }
}

/// Adds the chosen slots of one constraint into the per-variable counts (uniform weights).
#[inline]
fn count_chosen(cnt: &mut [f32], slot_var: &[u32], chosen: &[u32]) {
    for &s in chosen {
        cnt[slot_var[s as usize] as usize] += 1.0;
    }
}

/// One map iteration: leaves the concur point to read out in `wk.m`, updates `x`, and leaves
/// `P_b` of the new `x` in `chosen`.
fn step(
    ctx: &Ctx,
    x: &mut [f32],
    chosen: &mut [u32],
    lambda: &mut [f32],
    tr: &mut DcTrial,
    wk: &mut Worker,
) -> Result<(), AssignError> {
    let (layout, cfg) = (ctx.layout, ctx.cfg);
    let adaptive = cfg.weights == Weights::Adaptive;
    let beta = cfg.beta;
    // With uniform weights the previous pass already summed the replicas (`wk.fresh`).
    if adaptive || !wk.fresh {
        gather(layout, x, chosen, adaptive.then_some(&*lambda), wk);
    }
    wk.fresh = false;
    let sv = layout.slot_var();
    let warm = tr.warm;
    let fuse = !adaptive;
    // The reference kernels (tests): the slot-at-a-time update and the reference divide.
    let reference = ctx.reference;
    let divide = if reference { project::divide_one_reference } else { divide_one };
    // Whether the concur point is finite, folded into the loop that computes it (`&`, not
    // an early-exit scan: the loop stays vectorised, and the scan cost as much as the
    // division).
    let mut finite = true;
    match cfg.kind {
        MapKind::Rrr => {
            // m = P_a(2 P_b x - x)
            for (((m, &a), &d), &c) in wk.m.iter_mut().zip(&wk.acc).zip(&wk.den).zip(&wk.cnt) {
                *m = (2.0 * c - a) / d;
                finite &= m.is_finite();
            }
            // Pruned candidates: the certain weight holds their concur value at 0.
            for &v in &tr.extra.pruned {
                wk.m[v as usize] = 0.0;
            }
            if fuse {
                wk.acc.iter_mut().chain(&mut wk.cnt).for_each(|v| *v = 0.0);
            }
            // x += beta (m - P_b x), then P_b of the new x, one constraint at a time.
            for k in 0..layout.constraints() {
                let (r, q) = (layout.con_range(k), layout.choice_range(k));
                if fuse && !reference {
                    apply_runs(layout, k, &mut x[r.clone()], &wk.m, &chosen[q.clone()], beta, &mut wk.acc);
                } else {
                    let acc = fuse.then_some(&mut wk.acc[..]);
                    let e2 = apply(&mut x[r.clone()], r.start, &sv[r.clone()], &wk.m, &chosen[q.clone()], beta, acc);
                    wk.err[k] = (e2.max(0.0) / q.len().max(1) as f32).sqrt();
                }
                divide(layout, k, &x[r], &mut chosen[q.clone()], &mut wk.div, &mut tr.extra.asg_con, warm)?;
                if fuse {
                    count_chosen(&mut wk.cnt, sv, &chosen[q]);
                }
            }
        }
        MapKind::Dm => {
            let inv = 1.0 / beta;
            // m = P_a(f_b(y)), f_b = (1 + 1/beta) P_b y - y / beta; ca = P_a(y).
            for ((((m, ca), &a), &d), &c) in wk.m.iter_mut().zip(&mut wk.ca).zip(&wk.acc).zip(&wk.den).zip(&wk.cnt) {
                *m = ((1.0 + inv) * c - inv * a) / d;
                *ca = a / d;
                finite &= m.is_finite();
            }
            for &v in &tr.extra.pruned {
                wk.m[v as usize] = 0.0;
                wk.ca[v as usize] = 0.0;
            }
            if fuse {
                wk.acc.iter_mut().chain(&mut wk.cnt).for_each(|v| *v = 0.0);
            }
            let a1 = 1.0 - inv;
            for k in 0..layout.constraints() {
                let (r, q) = (layout.con_range(k), layout.choice_range(k));
                // f_a(y) = (1 - 1/beta) P_a(y) + y / beta on this constraint, and its P_b.
                let buf = &mut wk.buf[..r.len()];
                for ((b, &y), &j) in buf.iter_mut().zip(&x[r.clone()]).zip(&sv[r.clone()]) {
                    *b = a1 * wk.ca[j as usize] + inv * y;
                }
                let tmp = &mut wk.tmp[..q.len()];
                divide(layout, k, buf, tmp, &mut wk.div, &mut tr.extra.asg_con, warm)?;
                // y += beta (P_a(f_b(y)) - P_b(f_a(y))), then P_b of the new y.
                if fuse && !reference {
                    apply_runs(layout, k, &mut x[r.clone()], &wk.m, tmp, beta, &mut wk.acc);
                } else {
                    let acc = fuse.then_some(&mut wk.acc[..]);
                    let e2 = apply(&mut x[r.clone()], r.start, &sv[r.clone()], &wk.m, tmp, beta, acc);
                    wk.err[k] = (e2.max(0.0) / q.len().max(1) as f32).sqrt();
                }
                divide(layout, k, &x[r], &mut chosen[q.clone()], &mut wk.div, &mut tr.extra.asg_con, warm)?;
                if fuse {
                    count_chosen(&mut wk.cnt, sv, &chosen[q]);
                }
            }
        }
    }
    wk.fresh = fuse;
    if adaptive {
        let mean = wk.err.iter().sum::<f32>() / wk.err.len().max(1) as f32;
        if mean > 0.0 && mean.is_finite() {
            let g = cfg.gamma;
            for (l, &e) in lambda.iter_mut().zip(&wk.err) {
                *l = (*l + g * (e / mean - *l)).max(MIN_WEIGHT);
            }
        }
    }
    if finite {
        Ok(())
    } else {
        // Only a degenerate beta gets here; the caller restarts the trial.
        Err(AssignError::InvalidWeight { row: 0, col: 0, value: f32::NAN })
    }
}

/// Reads the concur point in `wk.m` out as a board (the per-cell argmax; if that is not a
/// permutation, the assignment readout when `assign`, else nothing), scores it, keeps the
/// best, and returns whether it is a verified solution.
fn readout(ctx: &Ctx, tr: &mut DcTrial, best: &mut [u32], wk: &mut Worker, assign: bool) -> Result<bool, AssignError> {
    let layout = ctx.layout;
    layout.argmax_board(&wk.m, &mut wk.board);
    if !layout.is_permutation(&wk.board, &mut wk.seen) {
        if !assign {
            return Ok(false);
        }
        layout.assign(&wk.m, &mut wk.div.assign, &mut tr.extra.asg_read, tr.warm, &mut wk.board)?;
    }
    let score = layout.score(&wk.board);
    if score > tr.best_score {
        tr.best_score = score;
        best.copy_from_slice(&wk.board);
    }
    if score < ctx.max_score {
        return Ok(false);
    }
    let board = Board { width: layout.width(), height: layout.height(), cells: layout.placements(&wk.board) };
    Ok(verify::check(ctx.puzzle, &board).valid)
}

/// Runs a divide-and-concur batch. Every solution it reports has passed [`verify::check`].
/// With `cfg.resume`, the batch continues that snapshot ([`DcMap::restore`]).
pub fn solve(puzzle: &Puzzle, cfg: DcConfig, progress: impl FnMut(&Progress)) -> Result<MapResult, BatchError> {
    let resume = cfg.resume.clone();
    let mut map = DcMap::new(puzzle, cfg)?;
    if let Some(snapshot) = resume {
        map.restore(&snapshot)?;
    }
    Ok(map.run(progress))
}

/// The memory a batch of `cfg` takes in [`DcMap`] with `threads` threads (the CPU backend's
/// `Backend::estimate`; ARCHITECTURE.md §8): the layout's tables, the allocations of
/// [`DcMap::new`], its workers and the solving states, as upper bounds from the puzzle's
/// shape. A new buffer of the engine adds its bytes here; `limits::memory::tests` fails when
/// this no longer bounds what the engine takes.
pub fn estimate(puzzle: &Puzzle, cfg: &DcConfig, threads: usize) -> Estimate {
    let s = Shape::of(puzzle);
    let d = dc_sizes(&s, cfg.layout);
    let keep = u64::from(cfg.keep_fixed_points);
    let pruned = u64::from(cfg.propagate.is_some());
    let per_trial = WORD * (d.slots + d.choices + d.constraints)       // x, chosen slots, weights
        + TRIAL_BOOKKEEPING
        + 2 * s.assigners()                                           // the divide's and the readout's
        + WORD * s.cells                                              // best board
        + keep * (WORD * (d.slots + d.constraints + d.vars) + 3 * ALLOC)
        + pruned * (WORD * d.vars + ALLOC)
        + std::mem::size_of::<batch::TrialSummary>() as u64;
    // A snapshot saved at a stop or held to continue (`DcSnapshot`: a copy of the trial's
    // state above), and the solvers a restore builds before it takes them.
    let saves = cfg.run.save_at_stop || cfg.resume.is_some();
    let snapshot = WORD * (d.slots + d.choices + d.constraints)
        + TRIAL_BOOKKEEPING
        + 4 * s.assigners()
        + WORD * s.cells
        + keep * (WORD * (d.slots + d.constraints + d.vars) + 3 * ALLOC)
        + pruned * (WORD * d.vars + ALLOC);
    let per_trial = slack(per_trial + if saves { snapshot } else { 0 });
    let network = if cfg.complete.is_some() || cfg.propagate.is_some() { s.network() } else { 0 };
    // Concur sums and points per variable, a constraint's slots and choices, the per-constraint
    // errors, the assignment scratch, boards.
    let worker = WORD * (5 * d.vars + d.vars + s.cells + d.constraints)
        + 8 * s.weight_len()
        + 2 * WORD * s.cells
        + keep * WORD * (d.slots + d.constraints)
        + 24 * ALLOC
        + network;
    Estimate { fixed: dc_tables(&s, &d) + network + workers(cfg.run.trials, threads) * worker, per_trial }
}

#[cfg(test)]
mod tests {
    /// The options' defaults with the plain layout, run as `MapRun::default` says.
    fn plain() -> DcConfig {
        crate::dc::DcOptions { layout: DcLayout::Plain, ..Default::default() }.config(crate::batch::MapRun::default())
    }
    use super::*;
    use crate::puzzle::generate::puzzle;
    use crate::puzzle::generate::{GenerateOptions, generate};

    #[test]
    fn dm_at_beta_one_is_rrr_at_beta_one() {
        let p = puzzle(4, 4, 5);
        for weights in [Weights::Uniform, Weights::Adaptive] {
            let run = |kind| {
                let cfg = DcConfig {
                    kind,
                    beta: 1.0,
                    weights,
                    no_cycle_restart: true,
                    all_trials: true,
                    run: MapRun { trials: 2, max_iters: 40, ..Default::default() },
                    ..plain()
                };
                let mut m = DcMap::new(&p, cfg).unwrap();
                m.run(|_| {});
                m.x.clone()
            };
            let (a, b) = (run(MapKind::Rrr), run(MapKind::Dm));
            let diff = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            assert!(diff < 1e-3, "{weights:?}: max difference {diff}");
        }
    }

    impl batch::testing::InParts for DcMap<'_> {
        type Snapshot = DcSnapshot;
        fn restore_from(&mut self, s: &DcSnapshot) {
            self.restore(s).unwrap();
        }
        fn run_with(&mut self, progress: &mut dyn FnMut(&Progress)) -> MapResult {
            self.run(progress)
        }
        fn take_snapshot_kept(&mut self) -> Option<DcSnapshot> {
            self.take_snapshot()
        }
        fn snapshot_now(&self) -> DcSnapshot {
            self.snapshot()
        }
    }

    #[test]
    fn a_run_stopped_and_continued_is_the_run_that_never_stopped() {
        let mut cuts = 0;
        let variants = [
            (MapKind::Rrr, true, Weights::Uniform, None, Readout::Argmax, "rate", 4, 1, 2_000),
            (MapKind::Dm, false, Weights::Adaptive, None, Readout::Assignment, "rate", 4, 2, 2_000),
            (MapKind::Rrr, false, Weights::Uniform, Some(0.5), Readout::Argmax, "first", 5, 3, 20_000),
            (MapKind::Dm, true, Weights::Adaptive, Some(0.7), Readout::Argmax, "all", 4, 4, 1_500),
        ];
        for (kind, hybrid, weights, propagate, readout, mode, w, seed, iters) in variants {
            let p = puzzle(w, w, seed);
            let all = mode == "all";
            let cfg = DcConfig {
                kind,
                layout: DcLayout::from_hybrid(hybrid),
                weights,
                propagate,
                readout,
                keep_going: mode == "rate",
                all_trials: mode != "first",
                complete: all.then(|| Completion { k: 2, stall: 200, ..Completion::default() }),
                keep_fixed_points: all,
                run: MapRun { trials: 3, max_iters: iters, seed, ..Default::default() },
                ..plain()
            };
            let what = format!("{kind:?} hybrid {hybrid} {weights:?} {mode}");
            for stops in [&[1usize][..], &[2, 5, 1]] {
                cuts += batch::testing::check_in_parts(&what, stops, mode == "rate", |cancel| {
                    let run = MapRun { save_at_stop: true, cancel: cancel.clone(), ..cfg.run.clone() };
                    DcMap::new(&p, DcConfig { run, ..cfg.clone() }).unwrap()
                });
            }
        }
        assert!(cuts >= 10, "only {cuts} stops cut a run short");
        // Another configuration, or a damaged snapshot, is refused with the batch unchanged.
        let p = puzzle(4, 4, 1);
        let cfg =
            DcConfig { all_trials: true, run: MapRun { trials: 2, max_iters: 100, ..Default::default() }, ..plain() };
        let mut m = DcMap::new(&p, cfg.clone()).unwrap();
        m.run(|_| {});
        let snap = m.snapshot();
        let mut other = DcMap::new(&p, DcConfig { layout: DcLayout::Hybrid, ..cfg.clone() }).unwrap();
        let before = other.snapshot();
        let e = other.restore(&snap).unwrap_err();
        assert!(
            matches!(&e, SnapshotError::Mismatch { what, .. } if what == "state per trial" || what == "layout"),
            "{e}"
        );
        assert!(other.snapshot() == before);
        let mut v = serde_json::to_value(&snap).unwrap();
        v["chosen"][0] = 1_000_000.into();
        let bad: DcSnapshot = serde_json::from_value(v).unwrap();
        let mut fresh = DcMap::new(&p, cfg).unwrap();
        assert!(matches!(fresh.restore(&bad), Err(SnapshotError::Damaged(_))));
    }

    #[test]
    fn a_planted_solution_is_a_fixed_point() {
        let (p, sol) =
            generate(&GenerateOptions { width: 4, height: 3, frame_colors: None, inner_colors: None, seed: 2 })
                .unwrap();
        for (kind, hybrid) in [(MapKind::Rrr, false), (MapKind::Dm, false), (MapKind::Rrr, true), (MapKind::Dm, true)] {
            let cfg = DcConfig {
                kind,
                layout: DcLayout::from_hybrid(hybrid),
                beta: 0.7,
                readout: Readout::Argmax,
                run: MapRun { trials: 1, max_iters: 3, ..Default::default() },
                ..plain()
            };
            let mut m = DcMap::new(&p, cfg).unwrap();
            let l = m.layout.clone();
            let mut v = vec![0.0; l.vars()];
            for c in 0..p.cells() {
                v[l.cell_vars(c).find(|&j| l.placement(j) == sol.cells[c]).unwrap()] = 1.0;
            }
            let mut x = vec![0.0; l.slots()];
            project::spread(&l, &v, &mut x);
            m.x.copy_from_slice(&x);
            project::divide(&l, &x, &mut m.chosen, &mut DivideScratch::new(&l), &mut l.assigners(), false).unwrap();
            let r = m.run(|_| {});
            assert_eq!(r.solution.map(|s| s.1), Some(1), "{kind:?} hybrid {hybrid}");
            assert_eq!(m.x, x, "{kind:?} hybrid {hybrid}: the fixed point moved");
        }
    }

    #[test]
    fn solves_generated_4x4_in_every_variant_and_is_reproducible() {
        let p = puzzle(4, 4, 1);
        for kind in [MapKind::Rrr, MapKind::Dm] {
            for weights in [Weights::Uniform, Weights::Adaptive] {
                for (hybrid, propagate) in [(false, None), (true, None), (false, Some(0.5)), (true, Some(0.7))] {
                    let cfg = DcConfig {
                        kind,
                        weights,
                        layout: DcLayout::from_hybrid(hybrid),
                        propagate,
                        beta: 0.7,
                        run: MapRun { trials: 4, max_iters: 5_000, seed: 3, ..Default::default() },
                        ..plain()
                    };
                    let r = solve(&p, cfg.clone(), |_| {}).unwrap();
                    let (t, it, board) = r.solution.clone().unwrap_or_else(|| {
                        panic!("{kind:?} {weights:?} hybrid {hybrid} propagate {propagate:?}: unsolved")
                    });
                    assert!(verify::check(&p, &board).valid);
                    let again = solve(&p, cfg, |_| {}).unwrap();
                    assert_eq!(again.solution.map(|s| (s.0, s.1)), Some((t, it)));
                }
            }
        }
    }

    /// Everything a run leaves behind, bit for bit: the slot values, chosen slots, weights,
    /// best boards and each trial's counters.
    type Fingerprint = (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>, Vec<(u64, usize, Option<u64>, u64)>);

    fn fingerprint(m: &DcMap) -> Fingerprint {
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        (
            bits(&m.x),
            m.chosen.clone(),
            bits(&m.lambda),
            m.best_boards.clone(),
            m.trials.iter().map(|t| (t.iterations, t.best_score, t.solved_at, t.restarts)).collect(),
        )
    }

    /// Propagation: the fast kernels give the reference iterates with pruning on too, the
    /// pruning does happen, and a threshold no cell reaches prunes only what arc consistency
    /// removes from the empty board (by the AC-1 oracle); where that is nothing, the iterates
    /// are the plain map's bit for bit.
    #[test]
    fn propagation_keeps_the_reference_iterates_and_an_unreachable_threshold_changes_nothing() {
        let (mut pruned_somewhere, mut identical) = (false, 0);
        for (w, h, seed) in [(4, 4, 2), (5, 5, 5), (6, 4, 6), (4, 3, 1)] {
            let p = puzzle(w, h, seed);
            for kind in [MapKind::Rrr, MapKind::Dm] {
                for hybrid in [false, true] {
                    let base = DcConfig {
                        kind,
                        layout: DcLayout::from_hybrid(hybrid),
                        all_trials: true,
                        run: MapRun { trials: 3, max_iters: 640, seed: seed * 7 + 1, ..Default::default() },
                        ..plain()
                    };
                    let what = format!("{w}x{h} {kind:?} hybrid {hybrid}");
                    let cfg = DcConfig { propagate: Some(0.5), ..base.clone() };
                    let mut fast = DcMap::new(&p, cfg.clone()).unwrap();
                    let mut slow = DcMap::new(&p, cfg).unwrap().with_reference_kernels().unwrap();
                    fast.run(|_| {});
                    slow.run(|_| {});
                    assert!(fingerprint(&fast) == fingerprint(&slow), "{what}: the iterates differ");
                    pruned_somewhere |= fast.trials.iter().any(|t| !t.extra.pruned.is_empty());

                    let mut plain = DcMap::new(&p, base.clone()).unwrap();
                    let never = DcConfig { propagate: Some(f32::INFINITY), ..base };
                    let mut idle = DcMap::new(&p, never).unwrap();
                    plain.run(|_| {});
                    idle.run(|_| {});
                    let zeros = vec![0.0; idle.layout.vars()];
                    let empty_board = prune::prune_reference(&idle.layout, &Network::new(&p), &zeros, f32::INFINITY);
                    assert!(idle.trials.iter().all(|t| t.extra.pruned == empty_board), "{what}");
                    if empty_board.is_empty() {
                        assert!(fingerprint(&plain) == fingerprint(&idle), "{what}: an unreachable threshold moved");
                        identical += 1;
                    }
                }
            }
        }
        assert!(pruned_somewhere, "no run pruned anything: the test does not exercise the pruning");
        assert!(identical > 0, "no instance compared the unreachable threshold with the plain map");
    }

    #[test]
    fn fast_kernels_give_the_reference_iterates_bit_for_bit() {
        // Square and rectangular boards, every map, weighting and layout, both readouts,
        // a beta that restarts on non-finite states, and seeds enough to solve some.
        let mut runs = 0;
        for (w, h, seed) in [(3, 3, 1), (4, 4, 2), (5, 3, 3), (3, 6, 4), (5, 5, 5), (6, 4, 6)] {
            let p = puzzle(w, h, seed);
            for kind in [MapKind::Rrr, MapKind::Dm] {
                for weights in [Weights::Uniform, Weights::Adaptive] {
                    for hybrid in [false, true] {
                        for (beta, readout) in
                            [(0.7, Readout::Argmax), (0.5, Readout::Assignment), (0.0, Readout::Argmax)]
                        {
                            let cfg = DcConfig {
                                kind,
                                weights,
                                layout: DcLayout::from_hybrid(hybrid),
                                beta,
                                readout,
                                all_trials: true,
                                run: MapRun { trials: 3, max_iters: 300, seed: seed * 31 + runs, ..Default::default() },
                                ..plain()
                            };
                            let mut fast = DcMap::new(&p, cfg.clone()).unwrap();
                            let mut slow = DcMap::new(&p, cfg).unwrap().with_reference_kernels().unwrap();
                            assert!(fingerprint(&fast) == fingerprint(&slow), "start");
                            let (a, b) = (fast.run(|_| {}), slow.run(|_| {}));
                            let what = format!("{w}x{h} {kind:?} {weights:?} hybrid {hybrid} beta {beta} {readout:?}");
                            assert!(fingerprint(&fast) == fingerprint(&slow), "{what}: the iterates differ");
                            assert_eq!(a.solution.map(|s| (s.0, s.1)), b.solution.map(|s| (s.0, s.1)), "{what}");
                            runs += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(runs, 144);
    }
}
