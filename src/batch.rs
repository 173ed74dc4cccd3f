//! The batch core every map driver shares, on both backends and in both formulations (F1's
//! driver in `f1::map`, F2's in `dc`, and their GPU drivers in `backend::gpu`): one trial's
//! bookkeeping with its cycle detector (`Trial`), the round loop's stop rules and progress
//! (`Rounds`, [`Progress`]), the completion trigger ([`Completion`]), the outcome
//! ([`MapResult`], built by `result` from the trials and their best boards), and the
//! bookkeeping of rate mode (below).
//!
//! A batch keeps its float state flat and trial-major in the driver; only this small
//! per-trial record is shared, with `E` the driver's own per-trial state (assignment solvers,
//! a kept fixed point, pruned variables).
//!
//! **Cycle detection** (ARCHITECTURE.md §8): every [`ROUND`] iterations a driver takes a
//! fingerprint of the trial's state and hands it to `Trial::in_cycle`, which compares it
//! with the trial's last [`CYCLE_MEMORY`]; a repeat is an exact limit cycle and the trial
//! restarts. The CPU drivers fingerprint with the one hash of the crate, word-wise FNV-1a
//! over the float bits ([`fingerprint`], [`crate::hash`]). The GPU drivers compute their
//! fingerprints on the device with an order-independent sum of mixed words
//! (`shaders/hash.wgsl`), since the state never comes up; the values differ from the CPU's,
//! the rule that uses them is this one.
//!
//! **Rate mode** (`keep_going`, `concur solve --keep-going`): a solution does not stop the
//! batch. The round loop of a driver, in rate mode or not, is
//!
//! ```text
//! let mut rounds = Rounds::new(cfg.keep_going, cfg.on_solution.clone(), &cfg.cancel);
//! loop {
//!     /* run one round of every active trial; a trial that solves sets solved_at
//!        (Trial::solve) and its best board holds the solution */
//!     for t in rounds.harvest(puzzle, &mut trials, |t| board_of(t)) {
//!         /* give trial t a fresh point drawn from trials[t].rng, as at its start */
//!     }
//!     if rounds.after_round(&trials, !cfg.all_trials, cfg.max_iters, cfg.time_limit, &mut progress) {
//!         break;
//!     }
//! }
//! rounds.finish(puzzle, &trials, &best, place)                     // the MapResult, with its rate
//! ```
//!
//! `Rounds::harvest` is the hook (it does nothing outside rate mode): on the host, between
//! rounds, in trial order, it checks each solved trial's board with [`verify::check`],
//! records it ([`Found`]: trial, the iterations of its segment, its class up to turning the
//! board, its viewer link), hands it to the [`SolutionSink`], and `Trial::resume`s the
//! trial (a new segment from its current iteration); the driver then redraws the state of
//! every trial it returns from the trial's own stream. The record is therefore the same on
//! any number of threads, and the same seed gives the same solutions under an iteration
//! budget. `Rounds::finish` puts them in [`MapResult::rate`]. The CPU drivers (`f1::map`,
//! `dc`) do this, and so does F1's device loop on the GPU backend
//! (`backend::gpu::f1::device_loop`), with its trial records on the host: after a block's
//! per-trial words come up, the solved trials' boards come up with them (as for a
//! stop-at-first run), `harvest` runs, and each trial it returns gets a fresh start uploaded
//! (the same draws as the CPU's `randomize`, from `trials[t].rng`), a new segment in its
//! device record, and is marked live again. The GPU's other loops (`--assign cpu`,
//! `--complete`, divide and concur) and a batch split over several devices do not run rate
//! mode; the capability table (`backend::capability`) refuses it there.
//!
//! **Snapshots** (`MapRun::save_at_stop`; the CPU drivers): a run stopped by its token can be
//! saved and continued exactly, as if it had never stopped. The drivers stop such a run only
//! between rounds: a trial not yet begun in the round when the token is tripped still runs it
//! (a time limit still cuts the round as before), so that every trial stands at the end of the
//! same round, where the uninterrupted run harvests and checks its stop rules. The snapshot
//! then holds what determines the rest of the run: the shared part (`SavedBatch`: each trial's
//! record `Trial::record`, to the state of its random stream, the best boards, rate mode's
//! solution count and classes, and what it was taken of, `SnapshotIdentity`) and the driver's
//! float state and solvers. A run restored from it (`Rounds::resume`) goes on with the next
//! round; its own counters (`MapResult::trial_iterations`, `MapResult::work`, rate mode's
//! solutions and distinct classes, progress) count its part alone, while each trial's
//! summary and a solution's index, class and `batch_trial_iterations` count from the first
//! part's start. The parts' counters add up to the uninterrupted run's.

use crate::cancel::Cancel;
use crate::puzzle::{Board, Placement, Puzzle};
use crate::rng::trial_seed;
use crate::search::backtrack::{BacktrackConfig, Backtracker, mismatch_region};
use crate::verify::{self, Consistency, Network};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Exact limit cycles: a trial whose state fingerprint repeats one of its last this many
/// (taken every round) restarts.
pub const CYCLE_MEMORY: usize = 16;

/// The CPU drivers' fingerprint of a float state (word-wise FNV-1a over the bits), chained
/// from `h` ([`crate::hash::OFFSET`] to start) so that several arrays make one fingerprint.
#[inline]
pub fn fingerprint(x: &[f32], h: u64) -> u64 {
    crate::hash::Fnv1a(h).f32s(x).finish()
}

/// The bookkeeping of one trial of a batch (not its float state); `E` is the driver's own
/// per-trial state.
#[derive(Clone, Debug)]
pub(crate) struct Trial<E> {
    pub iterations: u64,
    pub best_score: usize,
    /// Iteration at which the trial solved, and how.
    pub solved_at: Option<u64>,
    pub solved_by: Option<Mechanism>,
    /// Restarts after exact limit cycles (and non-finite states).
    pub restarts: u64,
    /// Arc-consistent completion (with `--complete`): the iteration of the last best-score
    /// improvement, the searches run and their nodes.
    pub trig: CompletionTrigger,
    hashes: [u64; CYCLE_MEMORY],
    hash_pos: usize,
    /// The trial's random stream (`rng::trial_seed`): starts, restarts, kicks.
    pub rng: Xoshiro256PlusPlus,
    /// Whether the assignments may warm-start from the previous duals.
    pub warm: bool,
    /// Best score and its iteration since the last (re)start, for stall restarts.
    start_best: usize,
    start_improved_at: u64,
    pub stall_restarts: u64,
    /// Rate mode (`Rounds::keep_going`): the iteration at which the trial's current
    /// segment began (0, or where it resumed after its last solution), and the verified
    /// solutions it has found.
    pub segment_start: u64,
    pub solutions: u64,
    pub extra: E,
}

impl<E> Trial<E> {
    /// Trial `t` of a run seeded with `seed` (the same stream on every backend).
    pub fn new(seed: u64, t: usize, extra: E) -> Self {
        Trial {
            iterations: 0,
            best_score: 0,
            solved_at: None,
            solved_by: None,
            restarts: 0,
            trig: CompletionTrigger::default(),
            hashes: [0; CYCLE_MEMORY],
            hash_pos: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(trial_seed(seed, t as u64)),
            warm: false,
            start_best: 0,
            start_improved_at: 0,
            stall_restarts: 0,
            segment_start: 0,
            solutions: 0,
            extra,
        }
    }

    /// The stall rule of `MapConfig::restart_stall`, applied after each scored iteration:
    /// true when the trial has gone `l` iterations without beating its best score since its
    /// last (re)start. The caller then restarts it; its stall memory and cycle memory start
    /// over and the restart is counted.
    pub fn stalled(&mut self, score: usize, l: u64) -> bool {
        if score > self.start_best {
            (self.start_best, self.start_improved_at) = (score, self.iterations);
            return false;
        }
        if self.iterations - self.start_improved_at < l {
            return false;
        }
        (self.start_best, self.start_improved_at) = (0, self.iterations);
        self.hashes = [0; CYCLE_MEMORY];
        self.stall_restarts += 1;
        true
    }

    /// Marks the trial solved at its current iteration by `how`.
    pub fn solve(&mut self, how: Mechanism) {
        self.solved_at = Some(self.iterations);
        self.solved_by = Some(how);
    }

    /// Runs the completion trigger after an iteration (see [`CompletionTrigger::due`]);
    /// a completed board lands in `best` (through `id`, placement to candidate id) and the
    /// trial is solved by `map+ac`.
    #[allow(clippy::too_many_arguments, reason = "one trial's iteration outcome")]
    pub fn complete(
        &mut self,
        comp: &Completion,
        bt: &mut Backtracker<'_>,
        puzzle: &Puzzle,
        improved: bool,
        score: usize,
        best: &mut [u32],
        place: impl Fn(&[u32]) -> Vec<Placement>,
        id: impl Fn(usize, Placement) -> Option<u32>,
    ) {
        if !self.trig.due(comp, puzzle, improved, score, self.iterations) {
            return;
        }
        if let Some(sol) = self.trig.search(comp, bt, puzzle, place(best)) {
            for (c, pl) in sol.cells.iter().enumerate() {
                best[c] = id(c, *pl).expect("the backtracker places candidates");
            }
            self.best_score = puzzle.max_score();
            self.solve(Mechanism::MapAc);
        }
    }

    /// Whether the trial still iterates: not solved, budget left.
    pub fn is_active(&self, max_iters: u64) -> bool {
        self.solved_at.is_none() && self.iterations < max_iters
    }

    /// Records the round's fingerprint; true when it repeats (the trial is in a cycle and
    /// must restart; its memory is cleared).
    pub fn in_cycle(&mut self, h: u64) -> bool {
        if self.hashes.contains(&h) {
            self.hashes = [0; CYCLE_MEMORY];
            return true;
        }
        self.hashes[self.hash_pos] = h;
        self.hash_pos = (self.hash_pos + 1) % CYCLE_MEMORY;
        false
    }

    /// Rate mode: after its solution was recorded, the trial starts a new segment at its
    /// current iteration, as a fresh trial would (no solution, no best score, no stall, cycle
    /// or completion memory, cold assignments). Its counters (iterations, restarts, ...) go
    /// on. The driver then draws its fresh point from the trial's own stream ([`Self::rng`]).
    pub fn resume(&mut self) {
        self.solved_at = None;
        self.solved_by = None;
        self.best_score = 0;
        self.hashes = [0; CYCLE_MEMORY];
        self.hash_pos = 0;
        self.warm = false;
        self.start_best = 0;
        self.start_improved_at = self.iterations;
        self.trig.improved_at = self.iterations;
        self.segment_start = self.iterations;
        self.solutions += 1;
    }

    /// Forgets the fingerprints seen (a driver that restarts a trial for another reason).
    pub fn forget_cycles(&mut self) {
        self.hashes = [0; CYCLE_MEMORY];
    }

    /// What a run's result reports of the trial.
    pub fn summary(&self) -> TrialSummary {
        TrialSummary {
            iterations: self.iterations,
            best_score: self.best_score,
            solved_at: self.solved_at,
            solved_by: self.solved_by,
            restarts: self.restarts,
            completions: self.trig.runs,
            completion_nodes: self.trig.nodes,
            stall_restarts: self.stall_restarts,
            solutions: self.solutions,
        }
    }

    /// The trial's bookkeeping as a snapshot saves it: everything but the driver's own state.
    pub fn record(&self) -> TrialRecord {
        TrialRecord {
            iterations: self.iterations,
            best_score: self.best_score,
            solved_at: self.solved_at,
            solved_by: self.solved_by,
            restarts: self.restarts,
            trig: self.trig,
            hashes: self.hashes,
            hash_pos: self.hash_pos,
            rng: self.rng.clone(),
            warm: self.warm,
            start_best: self.start_best,
            start_improved_at: self.start_improved_at,
            stall_restarts: self.stall_restarts,
            segment_start: self.segment_start,
            solutions: self.solutions,
        }
    }

    /// The trial a record saved ([`Trial::record`]), with the driver's state `extra`: the same
    /// trial, to the bit of its random stream. Refused when the record is not one a run of a
    /// puzzle with `max_score` joins could leave (an iteration counted before the trial's
    /// start, a cycle memory index out of range, a score above the maximum), so that nothing
    /// read from outside can make the run panic.
    pub fn from_record(r: &TrialRecord, max_score: usize, extra: E) -> Result<Self, SnapshotError> {
        let it = r.iterations;
        let ordered = r.start_improved_at <= it
            && r.trig.improved_at <= it
            && r.segment_start <= it
            && r.solved_at.is_none_or(|s| r.segment_start <= s && s <= it);
        if !ordered || r.hash_pos >= CYCLE_MEMORY || r.best_score > max_score || r.start_best > max_score {
            return Err(SnapshotError::Damaged(format!("a trial record that no run leaves ({it} iterations)")));
        }
        Ok(Trial {
            iterations: it,
            best_score: r.best_score,
            solved_at: r.solved_at,
            solved_by: r.solved_by,
            restarts: r.restarts,
            trig: r.trig,
            hashes: r.hashes,
            hash_pos: r.hash_pos,
            rng: r.rng.clone(),
            warm: r.warm,
            start_best: r.start_best,
            start_improved_at: r.start_improved_at,
            stall_restarts: r.stall_restarts,
            segment_start: r.segment_start,
            solutions: r.solutions,
            extra,
        })
    }
}

/// The outcome of a batch, the same for every driver: `best` holds each trial's best board
/// (candidate or variable ids, trial-major), `place` turns one into placements. The first
/// solution is [`Rounds::first_solution`]'s, the best board [`Rounds::best_trial`]'s.
pub(crate) fn result<E>(
    puzzle: &Puzzle,
    trials: &[Trial<E>],
    best: &[u32],
    place: impl Fn(&[u32]) -> Vec<Placement>,
    wall_s: f64,
) -> MapResult {
    let n = puzzle.cells();
    let board_of =
        |t: usize| Board { width: puzzle.width(), height: puzzle.height(), cells: place(&best[t * n..(t + 1) * n]) };
    let solution = Rounds::first_solution(trials).map(|(t, it)| (t, it, board_of(t)));
    let best_t = Rounds::best_trial(trials);
    MapResult {
        best: board_of(best_t),
        best_score: trials[best_t].best_score,
        max_score: puzzle.max_score(),
        solution,
        trial_iterations: trials.iter().map(|t| t.iterations).sum(),
        wall_s,
        trials: trials.iter().map(Trial::summary).collect(),
        devices: Vec::new(),
        rate: None,
        resumed: None,
    }
}

/// Which iterated map, in either formulation: RRR or the general-beta difference map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "application", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum MapKind {
    /// RRR (reflect-reflect-relax): `x += beta (P_A(2 P_B x - x) - P_B x)`.
    Rrr,
    /// The difference map with general `beta` (Elser's, with `gamma_a = -1/beta` and `gamma_b =
    /// 1/beta`).
    Dm,
}

/// Errors of a map's batch run by its driver alone (`f1::map::solve`).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// No board fits the puzzle's rim, or an assignment failed.
    #[error(transparent)]
    Assign(#[from] crate::assign::AssignError),
    /// The snapshot to continue from does not fit the batch, or is damaged.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The batch claimed a board the exact verifier rejects (an internal error, never a
    /// result).
    #[error("the map claimed a solution the exact verifier rejects: {}", .problems.join("; "))]
    InvalidClaim {
        /// What the verifier found wrong with the board.
        problems: Vec<String>,
    },
}

crate::options::options_table! {
    /// The options every map has (rrr, dm, dc), flattened into each formulation's options
    /// (`f1::F1Options`, `dc::DcOptions`): the step, the trials' stop rules, rate mode and the
    /// arc-consistent completion.
    pub struct MapOptions {
        /// The map's step size (the best measured for rrr, dm and dc on Brendan Owen's set 1:
        /// BENCHMARKS.md, the beta sweep).
        [Map]
        pub beta: f32 = 0.7,
        /// Do not restart trials caught in exact limit cycles.
        [Map]
        pub no_cycle_restart: bool = false,
        /// Run every trial to its budget instead of stopping at the first solution (success
        /// rates and iteration quartiles).
        [Map]
        pub all_trials: bool = false,
        /// Rate mode: a solution does not end the run. Each solved trial's board is verified
        /// and recorded, and the trial goes on from a fresh point of its seeded stream, until
        /// --time-limit or every trial's --max-iters; the run reports its trial-iterations,
        /// every solution, and how many are distinct up to turning the board.
        [Map]
        pub keep_going: bool = false,
        /// Arc-consistent completion: when a trial's best board has at most K mismatched joins
        /// (or stalls), free those cells plus a halo and search them with the backtracker.
        [Map, value_name = "K"]
        pub complete: Option<usize> = None,
        /// The halo's radius around the mismatched cells of --complete.
        [Map]
        pub complete_radius: usize = Completion::DEFAULT.radius,
        /// Node limit of one completion search.
        [Map]
        pub complete_nodes: u64 = Completion::DEFAULT.max_nodes,
        /// Iterations without improvement after which a trial's best board is completed.
        [Map]
        pub complete_stall: u64 = Completion::DEFAULT.stall,
    }
    idle(o) {
        complete_radius if o.complete.is_none() => "without --complete";
        complete_nodes if o.complete.is_none() => "without --complete";
        complete_stall if o.complete.is_none() => "without --complete";
        all_trials if o.keep_going => "with --keep-going (rate mode runs every trial to its budget)";
    }
}

impl MapOptions {
    /// The completion of a map run (None: the map alone).
    pub fn completion(&self) -> Option<Completion> {
        self.complete.map(|k| Completion {
            k,
            stall: self.complete_stall,
            radius: self.complete_radius,
            max_nodes: self.complete_nodes,
        })
    }

    /// Refuses a step outside (0, 2].
    pub fn check(&self) -> Result<(), crate::error::SpecError> {
        if !(self.beta > 0.0 && self.beta <= 2.0) {
            return Err(crate::error::SpecError::range("beta", "in (0, 2]", self.beta));
        }
        Ok(())
    }
}

/// How a batch of either formulation runs, beside its options: the trials, their budget, the
/// seed, and where it reports and stops. Its `Default` is where the run's defaults live (8
/// trials of 100,000 iterations).
#[derive(Clone, Debug)]
pub struct MapRun {
    /// Independent trials, run as one batch.
    pub trials: usize,
    /// Iterations per trial.
    pub max_iters: u64,
    /// Wall-clock limit of the whole batch (None: the iteration budget alone).
    pub time_limit: Option<Duration>,
    /// The run's seed; trial `t` draws from its own stream ([`crate::rng::trial_seed`]).
    pub seed: u64,
    /// Rate mode: where each verified solution goes as it is found.
    pub on_solution: Option<SolutionSink>,
    /// Ends the run at its next round when tripped.
    pub cancel: Cancel,
    /// Save the batch when `cancel` stops it, so that it can be continued exactly (the CPU
    /// drivers: every trial then finishes the round it is in before the run stops, and the
    /// driver keeps a snapshot: the module's **Snapshots**). The GPU drivers ignore it.
    pub save_at_stop: bool,
}

impl Default for MapRun {
    fn default() -> Self {
        MapRun {
            trials: 8,
            max_iters: 100_000,
            time_limit: None,
            seed: 0,
            on_solution: None,
            cancel: Cancel::new(),
            save_at_stop: false,
        }
    }
}

/// When and how to hand a near-solution to the arc-consistent backtracker.
#[derive(Clone, Debug)]
pub struct Completion {
    /// Try when a trial's new best board has at most this many mismatched joins.
    pub k: usize,
    /// Also try when a trial's best score has not improved for this many iterations.
    pub stall: u64,
    /// Halo around the mismatched cells that is freed too (Chebyshev radius).
    pub radius: usize,
    /// Node limit of one completion search.
    pub max_nodes: u64,
}

/// The completion trigger of one trial: when its best board is near a solution (at most `k`
/// mismatched joins, on an improvement) or its best score has stalled, the mismatched cells
/// and a halo are freed and searched by the arc-consistent backtracker. Shared by both
/// formulations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct CompletionTrigger {
    /// Iteration of the last best-score improvement (or of the last stall-triggered try).
    pub improved_at: u64,
    /// Completion searches run, and their nodes in all.
    pub runs: u64,
    pub nodes: u64,
}

impl CompletionTrigger {
    /// Called once per iteration after scoring: whether a completion search is due now (the
    /// trial's new best is within `comp.k` joins of a solution, or its best has stalled for
    /// `comp.stall` iterations; a stall-triggered try restarts the stall count).
    pub fn due(&mut self, comp: &Completion, puzzle: &Puzzle, improved: bool, score: usize, iterations: u64) -> bool {
        if improved {
            self.improved_at = iterations;
        }
        let near = improved && puzzle.max_score() - score <= comp.k;
        let stalled = iterations - self.improved_at >= comp.stall;
        if stalled {
            self.improved_at = iterations;
        }
        near || stalled
    }

    /// Frees the mismatched cells of the trial's best board (`best`, its placements) and a
    /// halo, and searches them; a completed solution passes the exact check before it is
    /// returned.
    pub fn search(
        &mut self,
        comp: &Completion,
        bt: &mut Backtracker<'_>,
        puzzle: &Puzzle,
        best: Vec<Placement>,
    ) -> Option<Board> {
        let board = Board { width: puzzle.width(), height: puzzle.height(), cells: best };
        let free = mismatch_region(puzzle, &board, comp.radius);
        self.runs += 1;
        let done = bt.complete(&board, &free);
        self.nodes += bt.last_nodes();
        done.filter(|b| verify::check(puzzle, b).valid)
    }
}

/// The backtracker a worker uses for completions (AC-4, no restarts, node limit).
pub(crate) fn completer<'p>(puzzle: &'p Puzzle, network: &Arc<Network>, c: &Completion) -> Backtracker<'p> {
    let bcfg = BacktrackConfig {
        consistency: Consistency::Ac4,
        restarts: false,
        randomize: false,
        max_nodes: Some(c.max_nodes),
        ..Default::default()
    };
    Backtracker::with_network(puzzle, network.clone(), bcfg)
}

impl Completion {
    /// The defaults of `--complete`'s companions (and of K, 4, for the callers that complete
    /// without one given).
    pub const DEFAULT: Completion = Completion { k: 4, stall: 5_000, radius: 1, max_nodes: 20_000 };
}

impl Default for Completion {
    fn default() -> Self {
        Completion::DEFAULT
    }
}

/// Which mechanism found a solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Mechanism {
    /// An exact fixed point of the map.
    #[serde(rename = "map")]
    Map,
    /// The map's near-fixed point, completed by arc-consistent search.
    #[serde(rename = "map+ac")]
    MapAc,
    /// A complete search whose value order came from the map's weights (the map-guided
    /// search, `src/guided.rs`).
    #[serde(rename = "map-guided")]
    MapGuided,
}

impl Mechanism {
    /// The name results and `--json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Map => "map",
            Mechanism::MapAc => "map+ac",
            Mechanism::MapGuided => "map-guided",
        }
    }
}

/// Iterations between cycle checks and progress reports.
pub const ROUND: u64 = 64;

/// Where one call of a trial's round runs to: the round's last iteration (`end`), where the
/// end-of-round rules apply (the cycle check; F2's assignment readout and pruning), and the
/// iteration the call stops at (`pause`, at most `end`). A driver's `run` always runs whole
/// rounds ([`Span::round`]); its stepper (`F1Map::step`, `DcMap::step`) may stop inside one
/// and go on later ([`Span::until`]), so that stepping gives `run`'s iterates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub end: u64,
    pub pause: u64,
}

impl Span {
    /// The whole round from iteration `it`: [`ROUND`] iterations, fewer at `max_iters`.
    pub(crate) fn round(it: u64, max_iters: u64) -> Span {
        let end = it + ROUND.min(max_iters - it);
        Span { end, pause: end }
    }

    /// The round that holds iteration `it + 1`, stopped at `target`. A run that stops at no
    /// solution runs its rounds from iteration 0 (a trial that solves stops for good), so its
    /// rounds end at the multiples of [`ROUND`] and at `max_iters`: these are those rounds.
    pub(crate) fn until(it: u64, max_iters: u64, target: u64) -> Span {
        let end = ((it / ROUND + 1) * ROUND).min(max_iters);
        Span { end, pause: target.min(end) }
    }

    /// Whether a call from iteration `it` goes on inside a round an earlier call began.
    pub(crate) fn inside(it: u64) -> bool {
        !it.is_multiple_of(ROUND)
    }
}

/// Trials per parallel chunk: a few chunks per thread, so trials that stop early do not
/// leave a core idle.
pub(crate) fn chunk_size(trials: usize) -> usize {
    trials.div_ceil(rayon::current_num_threads().max(1) * 4).max(1)
}

/// The round bookkeeping every batch driver shares: progress, stop rules, the outcome, and in
/// rate mode the solutions found (`Rounds::keep_going`).
pub(crate) struct Rounds {
    start: Instant,
    keep: Option<KeepGoing>,
    cancel: Cancel,
    /// A continued run: what its trials had done before the restore.
    resumed: Option<Resumed>,
}

impl Rounds {
    /// A stop-at-first (or all-trials) batch: `Rounds::harvest` is never called. It ends
    /// early when `cancel` is tripped.
    pub(crate) fn start(cancel: &Cancel) -> Self {
        Rounds { start: Instant::now(), keep: None, cancel: cancel.clone(), resumed: None }
    }

    /// A batch in rate mode (`keep_going`): every solution is verified, recorded (and handed
    /// to `sink` at once), and its trial goes on from a fresh point of its own stream, until
    /// the time limit or every trial's iteration budget. The driver calls
    /// `Rounds::harvest` after every round and `Rounds::finish` at the end.
    pub(crate) fn keep_going(sink: Option<SolutionSink>, cancel: &Cancel) -> Self {
        let keep = Some(KeepGoing { sink, ..KeepGoing::default() });
        Rounds { start: Instant::now(), keep, cancel: cancel.clone(), resumed: None }
    }

    /// `Rounds::keep_going` when `keep_going`, else [`Rounds::start`].
    pub(crate) fn new(keep_going: bool, sink: Option<SolutionSink>, cancel: &Cancel) -> Self {
        if keep_going { Self::keep_going(sink, cancel) } else { Self::start(cancel) }
    }

    /// Continues the bookkeeping of an earlier part of the run (restored from a snapshot):
    /// its counters leave out `resumed`, and in rate mode the solutions go on being numbered
    /// and classed after `rate`'s (the solutions and classes found before the restore).
    pub(crate) fn resume(&mut self, resumed: Resumed, rate: Option<&RateSaved>) {
        self.resumed = Some(resumed);
        if let (Some(keep), Some(rate)) = (self.keep.as_mut(), rate) {
            keep.found_before = rate.found;
            keep.classes = rate.classes.iter().enumerate().map(|(c, key)| (key.clone(), c)).collect();
            keep.classes_before = keep.classes.len();
        }
    }

    /// Rate mode: the bookkeeping a snapshot saves (the solutions counted and the classes
    /// found so far, over every part of the run); None outside rate mode.
    pub(crate) fn rate_saved(&self) -> Option<RateSaved> {
        let keep = self.keep.as_ref()?;
        let mut classes: Vec<(&Vec<u16>, usize)> = keep.classes.iter().map(|(k, &c)| (k, c)).collect();
        classes.sort_unstable_by_key(|&(_, c)| c);
        Some(RateSaved {
            found: keep.found_before + keep.found.len(),
            classes: classes.into_iter().map(|(k, _)| k.clone()).collect(),
        })
    }

    /// Whether a batch that [`Rounds::after_round`] has just stopped stopped because its token
    /// was tripped, and for nothing else: no trial solved a stop-at-first batch, some trial
    /// has budget left and the time limit has not passed. Such a run can be continued from a
    /// snapshot of its state.
    pub(crate) fn stopped_by_token<E>(
        &self,
        trials: &[Trial<E>],
        stop_at_first: bool,
        max_iters: u64,
        time_limit: Option<Duration>,
    ) -> bool {
        let solved = self.keep.is_none() && stop_at_first && trials.iter().any(|t| t.solved_at.is_some());
        let budget_done = trials.iter().all(|t| t.solved_at.is_some() || t.iterations >= max_iters);
        let timed_out = time_limit.is_some_and(|t| self.start.elapsed() >= t);
        self.cancel.is_cancelled() && !solved && !budget_done && !timed_out
    }

    /// Whether the run was asked to stop or has passed `time_limit` (from the batch's start).
    pub(crate) fn out_of_time(&self, time_limit: Option<Duration>) -> bool {
        time_limit.is_some_and(|t| self.start.elapsed() >= t) || self.cancel.is_cancelled()
    }

    pub(crate) fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// **The rate-mode hook** every driver calls after each round (before
    /// [`Rounds::after_round`]), on the host, with the round's trials: each trial that solved
    /// in the round (`solved_at` set, in trial order, so the record does not depend on the
    /// threads) has its board (`board_of(t)`, the trial's best board: its solution) checked
    /// by the exact verifier, recorded with its trial and the iterations of its segment, and
    /// handed to the sink; the trial is then `Trial::resume`d. Returns the trials resumed:
    /// the driver must give each a fresh point drawn from its own `rng` (as at its start)
    /// before the next round. A claim the verifier rejects is not recorded (it is counted in
    /// [`RateRun::rejected`]) and its trial resumes alike. Does nothing outside rate mode.
    pub(crate) fn harvest<E>(
        &mut self,
        puzzle: &Puzzle,
        trials: &mut [Trial<E>],
        board_of: impl Fn(usize) -> Board,
    ) -> Vec<usize> {
        let wall_s = self.elapsed_s();
        let Some(keep) = self.keep.as_mut() else { return Vec::new() };
        let total: u64 = trials.iter().map(|t| t.iterations).sum();
        let mut resumed = Vec::new();
        for (t, tr) in trials.iter_mut().enumerate() {
            let Some(at) = tr.solved_at else { continue };
            keep.record(
                puzzle,
                t,
                at - tr.segment_start,
                at,
                tr.solved_by.unwrap_or(Mechanism::Map),
                wall_s,
                total,
                board_of(t),
            );
            tr.resume();
            resumed.push(t);
        }
        resumed
    }

    /// Reports progress after a round; returns true when the batch should stop. In rate mode
    /// a solution does not stop it (`stop_at_first` is ignored).
    pub(crate) fn after_round<E>(
        &self,
        trials: &[Trial<E>],
        stop_at_first: bool,
        max_iters: u64,
        time_limit: Option<Duration>,
        progress: &mut impl FnMut(&Progress),
    ) -> bool {
        let solved = trials.iter().filter(|t| t.solved_at.is_some()).count();
        let earlier = self.resumed.map_or(0, |r| r.trial_iterations);
        progress(&Progress {
            iterations: trials.iter().map(|t| t.iterations).max().unwrap_or(0),
            trial_iterations: trials.iter().map(|t| t.iterations).sum::<u64>().saturating_sub(earlier),
            best_score: trials.iter().map(|t| t.best_score).max().unwrap_or(0),
            solved_trials: solved,
            elapsed_s: self.elapsed_s(),
            solutions: self.keep.as_ref().map_or(0, |k| k.found.len()),
        });
        let stop_at_first = stop_at_first && self.keep.is_none();
        let budget_done = trials.iter().all(|t| t.solved_at.is_some() || t.iterations >= max_iters);
        let timed_out = self.out_of_time(time_limit);
        (stop_at_first && solved > 0) || budget_done || timed_out
    }

    /// The outcome (`result`); in rate mode with [`MapResult::rate`], the first solution
    /// found as [`MapResult::solution`] and as the best board.
    pub(crate) fn finish<E>(
        self,
        puzzle: &Puzzle,
        trials: &[Trial<E>],
        best: &[u32],
        place: impl Fn(&[u32]) -> Vec<Placement>,
    ) -> MapResult {
        let wall_s = self.elapsed_s();
        let mut r = result(puzzle, trials, best, place, wall_s);
        if let Some(e) = self.resumed {
            r.trial_iterations = r.trial_iterations.saturating_sub(e.trial_iterations);
            r.resumed = Some(e);
        }
        let Some(keep) = self.keep else { return r };
        if let Some(f) = keep.found.first() {
            r.solution = Some((f.trial, f.trial_iteration, f.board.clone()));
            (r.best, r.best_score) = (f.board.clone(), puzzle.max_score());
        }
        r.rate = Some(RateRun {
            distinct: keep.classes.len() - keep.classes_before,
            solutions: keep.found,
            rejected: keep.rejected,
            sink_error: keep.sink_error,
        });
        r
    }

    /// The first solution: fewest iterations, then lowest trial, so it does not depend on
    /// the threads. Returns (trial, iterations).
    pub(crate) fn first_solution<E>(trials: &[Trial<E>]) -> Option<(usize, u64)> {
        trials.iter().enumerate().filter_map(|(t, tr)| tr.solved_at.map(|it| (it, t))).min().map(|(it, t)| (t, it))
    }

    /// The trial with the best score (on ties, one that has iterated, whose best board is a
    /// board: a trial stopped before its first iteration has none; then the lowest index).
    pub(crate) fn best_trial<E>(trials: &[Trial<E>]) -> usize {
        (0..trials.len())
            .max_by_key(|&t| (trials[t].best_score, trials[t].iterations > 0, std::cmp::Reverse(t)))
            .unwrap_or(0)
    }
}

/// Where a rate-mode batch hands each verified solution as it is found (for example, to
/// append it as a JSON line and flush, so that a killed run keeps every solution). It runs on
/// the driver's thread, between rounds; an error it returns is kept ([`RateRun::sink_error`])
/// and the run goes on.
#[derive(Clone)]
pub struct SolutionSink(Arc<Mutex<SinkFn>>);

type SinkFn = dyn FnMut(&Found) -> Result<(), String> + Send;

impl SolutionSink {
    /// A sink that calls `f` with each solution; an error `f` returns is kept, and the run goes on.
    pub fn new(f: impl FnMut(&Found) -> Result<(), String> + Send + 'static) -> Self {
        SolutionSink(Arc::new(Mutex::new(f)))
    }

    pub(crate) fn call(&self, found: &Found) -> Result<(), String> {
        let mut f = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(found)
    }
}

impl PartialEq for SolutionSink {
    /// Two sinks are equal when they are clones of one another.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for SolutionSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SolutionSink")
    }
}

/// One verified solution of a rate-mode batch, as it is recorded and appended.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Found {
    /// Its place in the order found (0, 1, ...): by round, then by trial, over the whole run
    /// (a continued run numbers on from the solutions found before its restore).
    pub index: usize,
    /// The trial that found it.
    pub trial: usize,
    /// The iterations of its segment: from the trial's start, or from where it resumed after
    /// its previous solution, to this one (the trial's run length to this solution).
    pub segment_iterations: u64,
    /// The trial's own iteration count at the solution.
    pub trial_iteration: u64,
    /// What found it: the map alone, or the completion of a near-solution.
    pub mechanism: Mechanism,
    /// Seconds since the batch started (a continued run: since its restore), at the end of
    /// the round that found it.
    pub wall_s: f64,
    /// The batch's trial-iterations at the end of that round, from the run's start (over
    /// every part of a continued run, as the uninterrupted run counts them).
    pub batch_trial_iterations: u64,
    /// Its class up to turning the board (0, 1, ... in the order the classes were first
    /// found, over the whole run): the whole board turned by quarter turns on a square board,
    /// by a half turn on another; `new_class` when it is the first of its class.
    pub class: usize,
    /// Whether it is the first solution of its class.
    pub new_class: bool,
    /// The board in Brendan Owen's solution format, and as a viewer link (when the puzzle's
    /// colours fit the viewer).
    pub board_text: String,
    /// The board as a viewer link, when the puzzle's colours fit the viewer.
    pub viewer_link: Option<String>,
    /// The board itself.
    #[serde(skip)]
    pub board: Board,
}

/// What a rate-mode batch found ([`MapResult::rate`]). A run continued from a snapshot
/// reports what it found after its restore, so that the parts of one run add up to it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RateRun {
    /// Every verified solution, in the order found.
    pub solutions: Vec<Found>,
    /// How many of them are distinct up to turning the board: the classes they were the first
    /// of (a continued run's solutions of a class found before its restore are not counted).
    pub distinct: usize,
    /// Claims the exact verifier rejected (none are expected; they are not solutions).
    pub rejected: u64,
    /// The first error of the solution sink, if it failed (the run went on).
    pub sink_error: Option<String>,
}

/// The bookkeeping of rate mode inside `Rounds`.
#[derive(Default)]
struct KeepGoing {
    /// The solutions found by this run (a continued run: since its restore).
    found: Vec<Found>,
    /// A continued run: the solutions found before its restore (the next one's index).
    found_before: usize,
    /// Canonical board (the least placement codes over its turns) to class, over the whole
    /// run (a continued run's include those found before its restore).
    classes: std::collections::HashMap<Vec<u16>, usize>,
    /// A continued run: the classes found before its restore.
    classes_before: usize,
    rejected: u64,
    sink: Option<SolutionSink>,
    sink_error: Option<String>,
}

impl KeepGoing {
    #[allow(clippy::too_many_arguments, reason = "one solution's facts")]
    fn record(
        &mut self,
        puzzle: &Puzzle,
        trial: usize,
        segment_iterations: u64,
        trial_iteration: u64,
        mechanism: Mechanism,
        wall_s: f64,
        batch_trial_iterations: u64,
        board: Board,
    ) {
        if !verify::check(puzzle, &board).valid {
            self.rejected += 1;
            return;
        }
        let key = turn_class_key(&board);
        let fresh = self.classes.len();
        let class = *self.classes.entry(key).or_insert(fresh);
        let found = Found {
            index: self.found_before + self.found.len(),
            trial,
            segment_iterations,
            trial_iteration,
            mechanism,
            wall_s,
            batch_trial_iterations,
            class,
            new_class: class == fresh,
            board_text: crate::puzzle::format::write_solution(&board).unwrap_or_default(),
            viewer_link: crate::puzzle::format::viewer_link(puzzle, &board),
            board,
        };
        if let Some(sink) = &self.sink
            && let Err(e) = sink.call(&found)
        {
            self.sink_error.get_or_insert(e);
        }
        self.found.push(found);
    }
}

/// The key of a board's class up to turning the whole board: the least sequence of
/// placement codes (`piece * 4 + rot`) over its quarter turns (square boards) or its half
/// turn (other boards). Two boards share a key exactly when one is a turn of the other.
pub fn turn_class_key(board: &Board) -> Vec<u16> {
    let code = |b: &Board| -> Vec<u16> { b.cells.iter().map(|p| p.piece * 4 + u16::from(p.rot)).collect() };
    let quarter = crate::search::backtrack::rotate_board(board);
    let half = crate::search::backtrack::rotate_board(&quarter);
    let mut keys = vec![code(board), code(&half)];
    if board.width == board.height {
        keys.push(code(&quarter));
        keys.push(code(&crate::search::backtrack::rotate_board(&half)));
    }
    keys.into_iter().min().expect("at least one turn")
}

/// A snapshot for progress displays.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// The most iterations any trial has run.
    pub iterations: u64,
    /// Iterations summed over the trials (a continued run: since its restore).
    pub trial_iterations: u64,
    /// The best score any trial has reached.
    pub best_score: usize,
    /// Trials that have solved.
    pub solved_trials: usize,
    /// Seconds since the batch started.
    pub elapsed_s: f64,
    /// Rate mode: verified solutions recorded so far (a continued run: since its restore).
    pub solutions: usize,
}

/// Outcome of a batched run.
#[derive(Clone, Debug)]
pub struct MapResult {
    /// The first verified solution: (trial, iterations, board).
    pub solution: Option<(usize, u64, Board)>,
    /// Best board over all trials and its score.
    pub best: Board,
    /// Matched interior joins of `best`.
    pub best_score: usize,
    /// The puzzle's interior joins, the score of a solution.
    pub max_score: usize,
    /// Iterations run, summed over trials: by this run alone (a continued run, [`Self::resumed`],
    /// counts from its restore).
    pub trial_iterations: u64,
    /// Seconds the batch took, wall clock (a continued run: since its restore).
    pub wall_s: f64,
    /// Each trial's counters, in trial order: the trial's whole history (a continued run's
    /// trials count from the first part's start, as the uninterrupted run's would).
    pub trials: Vec<TrialSummary>,
    /// A batch split over several devices (`--adapter all`): each one's share and rate, in
    /// trial order; empty for a batch on one device or the CPU.
    pub devices: Vec<DeviceShare>,
    /// Rate mode (`keep_going`): every solution found (a continued run: since its restore);
    /// None for a stop-at-first or all-trials batch.
    pub rate: Option<RateRun>,
    /// A run continued from a snapshot (`f1::map::F1Snapshot`, `dc::DcSnapshot`): what its
    /// trials had done before the restore, which this run's counters leave out. None for a
    /// run from fresh starts.
    pub resumed: Option<Resumed>,
}

/// One device's share of a batch split over several: its adapter, its trials (the batch's
/// `first..first + trials`), their iterations and its wall time.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DeviceShare {
    /// The device's adapter, as the backend names it.
    pub adapter: String,
    /// The share's first trial in the batch.
    pub first: usize,
    /// Trials of the share.
    pub trials: usize,
    /// Iterations the share ran, summed over its trials.
    pub trial_iterations: u64,
    /// Seconds the share took on its device.
    pub wall_s: f64,
    /// The share's rate: `trial_iterations / wall_s`.
    pub trial_iters_per_s: f64,
}

impl MapResult {
    /// The work of this run, as a ladder counts it: per trial the iteration it solved at, else
    /// the iterations it ran, summed; a continued run less what its trials had done before
    /// the restore, so that the parts of one run add up to the run.
    pub fn work(&self) -> u64 {
        let all: u64 = self.trials.iter().map(|t| t.solved_at.unwrap_or(t.iterations)).sum();
        all.saturating_sub(self.resumed.map_or(0, |r| r.work))
    }

    /// Joins the results of consecutive shares of one batch (share `i` ran the trials after
    /// those of shares `0..i`, each named by its adapter), as one run of the whole batch
    /// would report them: the first solution by fewest iterations then lowest trial, the best
    /// board of the best-scoring trial (lowest on ties), iterations summed, the longest wall
    /// time, and each share's rate.
    pub fn join(parts: Vec<(String, MapResult)>) -> Option<MapResult> {
        let mut devices = Vec::new();
        let mut trials = Vec::new();
        let mut solution: Option<(usize, u64, Board)> = None;
        let mut best: Option<(usize, Board)> = None;
        let (mut trial_iterations, mut wall_s, mut max_score) = (0, 0.0f64, 0);
        for (adapter, r) in parts {
            let first = trials.len();
            if let Some((t, it, b)) = r.solution
                && solution.as_ref().is_none_or(|s| (it, first + t) < (s.1, s.0))
            {
                solution = Some((first + t, it, b));
            }
            if best.as_ref().is_none_or(|b| r.best_score > b.0) {
                best = Some((r.best_score, r.best));
            }
            devices.push(DeviceShare {
                adapter,
                first,
                trials: r.trials.len(),
                trial_iterations: r.trial_iterations,
                wall_s: r.wall_s,
                trial_iters_per_s: if r.wall_s > 0.0 { r.trial_iterations as f64 / r.wall_s } else { 0.0 },
            });
            trial_iterations += r.trial_iterations;
            wall_s = wall_s.max(r.wall_s);
            max_score = r.max_score;
            trials.extend(r.trials);
        }
        let (best_score, best) = best?;
        Some(MapResult {
            solution,
            best,
            best_score,
            max_score,
            trial_iterations,
            wall_s,
            trials,
            devices,
            rate: None,
            resumed: None,
        })
    }
}

/// What a run reports of each trial.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TrialSummary {
    /// Iterations the trial ran.
    pub iterations: u64,
    /// The best score the trial reached.
    pub best_score: usize,
    /// Iteration at which the trial solved (an exact fixed point).
    pub solved_at: Option<u64>,
    /// Which mechanism solved the trial.
    pub solved_by: Option<Mechanism>,
    /// Restarts after exact limit cycles.
    pub restarts: u64,
    /// Arc-consistent completion searches tried, and their nodes in all.
    pub completions: u64,
    /// Nodes of those searches, in all.
    pub completion_nodes: u64,
    /// Restarts (or kicks) after `restart_stall` iterations without a new best.
    pub stall_restarts: u64,
    /// Rate mode: the verified solutions the trial found.
    #[serde(skip_serializing_if = "is_zero")]
    pub solutions: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Where one rate-mode solution was found: its trial, the trial's own iteration count at the
/// solution, and the iterations of its segment (from the trial's start, or from where it
/// resumed after its previous solution). The parts of a run stopped and continued list
/// together what the uninterrupted run lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SolutionAt {
    /// The trial that found it.
    pub trial: usize,
    /// The trial's iteration count at the solution (from the run's start).
    pub trial_iteration: u64,
    /// The trial's run length to this solution.
    pub segment_iterations: u64,
}

impl From<&Found> for SolutionAt {
    fn from(f: &Found) -> Self {
        SolutionAt { trial: f.trial, trial_iteration: f.trial_iteration, segment_iterations: f.segment_iterations }
    }
}

// ---------------------------------------------------------------------------------------------
// Snapshots: a batch saved where its token stopped it, and continued exactly.

/// The format version of map snapshots this build writes and continues.
pub const SNAPSHOT_VERSION: u32 = 1;

/// What a run continued from a snapshot had done before its restore, summed over its trials;
/// its own counters ([`MapResult::trial_iterations`], [`MapResult::work`], its rate-mode
/// solutions) leave this out, so that the parts of a run add up to the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resumed {
    /// Iterations the trials had run.
    pub trial_iterations: u64,
    /// Work as [`MapResult::work`] counts it (per trial: the iteration it solved at, else the
    /// iterations it ran).
    pub work: u64,
    /// Rate mode: the verified solutions found before the restore.
    pub solutions: usize,
}

/// Why a snapshot cannot be continued: it was written by another version, it is of another
/// puzzle or configuration, it is damaged, or it does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// Another version of the snapshot format.
    #[error("the snapshot is of format version {found}; this build continues version {expected}")]
    Version {
        /// The version the snapshot says.
        found: u32,
        /// The version this build writes and reads ([`SNAPSHOT_VERSION`]).
        expected: u32,
    },
    /// The snapshot was taken of another run: another puzzle, method, batch or option.
    #[error("the snapshot does not fit this run: its {what} is {saved}, this run's is {here}")]
    Mismatch {
        /// What differs (`puzzle`, `method`, `trials`, an option's key, ...).
        what: String,
        /// The snapshot's value.
        saved: String,
        /// This run's value.
        here: String,
    },
    /// The snapshot's contents are not those of any run (wrong lengths, values out of range).
    #[error("the snapshot is damaged: {0}")]
    Damaged(String),
    /// The snapshot's text does not read as a snapshot.
    #[error("the snapshot does not read: {0}")]
    Format(String),
}

/// What a snapshot was taken of, checked before a run continues from it: the format version,
/// the method, the puzzle (its [`Puzzle::fingerprint`] and size), the batch's trials and the
/// floats of state per trial, the seed, and the options that shape a trial's trajectory (as
/// `(key, value)` text, exact for floats). The iteration budget and the time limit are not
/// part of it: a trial's budget counts from the run's start in every part, and each part's
/// time limit is its own.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SnapshotIdentity {
    /// The snapshot format's version ([`SNAPSHOT_VERSION`] when this build wrote it).
    pub version: u32,
    /// The method: `rrr` or `dm` (F1), `dc` (F2).
    pub method: String,
    /// The puzzle's [`Puzzle::fingerprint`].
    pub puzzle: u64,
    /// The board's columns.
    pub width: usize,
    /// The board's rows.
    pub height: usize,
    /// The batch's trials.
    pub trials: usize,
    /// Floats of state per trial (F1: cells x 4 x colours; F2: replica slots).
    pub dim: usize,
    /// The run's seed.
    pub seed: u64,
    /// The options that shape the trajectory, as (key, value) text.
    pub options: Vec<(String, String)>,
}

impl SnapshotIdentity {
    /// The identity of a batch of `trials` trials of `dim` floats of `method` on `puzzle`.
    pub(crate) fn new(
        method: &str,
        puzzle: &Puzzle,
        trials: usize,
        dim: usize,
        seed: u64,
        options: Vec<(String, String)>,
    ) -> Self {
        SnapshotIdentity {
            version: SNAPSHOT_VERSION,
            method: method.to_string(),
            puzzle: puzzle.fingerprint(),
            width: puzzle.width(),
            height: puzzle.height(),
            trials,
            dim,
            seed,
            options,
        }
    }

    /// Whether a run of identity `here` can continue this snapshot; else the first thing that
    /// differs.
    pub fn check(&self, here: &SnapshotIdentity) -> Result<(), SnapshotError> {
        if self.version != SNAPSHOT_VERSION {
            return Err(SnapshotError::Version { found: self.version, expected: SNAPSHOT_VERSION });
        }
        let differ = |what: &str, saved: String, here: String| {
            Err(SnapshotError::Mismatch { what: what.to_string(), saved, here })
        };
        let board = |i: &SnapshotIdentity| format!("{}x{} puzzle {:016x}", i.width, i.height, i.puzzle);
        if self.method != here.method {
            return differ("method", self.method.clone(), here.method.clone());
        }
        if (self.puzzle, self.width, self.height) != (here.puzzle, here.width, here.height) {
            return differ("puzzle", board(self), board(here));
        }
        if self.trials != here.trials {
            return differ("trials", self.trials.to_string(), here.trials.to_string());
        }
        if self.dim != here.dim {
            return differ("state per trial", format!("{} floats", self.dim), format!("{} floats", here.dim));
        }
        if self.seed != here.seed {
            return differ("seed", self.seed.to_string(), here.seed.to_string());
        }
        for (key, value) in &here.options {
            let saved = self.options.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
            if saved.as_ref() != Some(value) {
                return differ(key, saved.unwrap_or_else(|| "not set".into()), value.clone());
            }
        }
        if let Some((key, value)) = self.options.iter().find(|(k, _)| !here.options.iter().any(|(h, _)| h == k)) {
            return differ(key, value.clone(), "not set".into());
        }
        Ok(())
    }
}

/// An option of [`SnapshotIdentity::options`]: its key and its value's `Debug` text (exact
/// for floats: the shortest text that reads back as the same value).
pub(crate) fn identity_option(key: &str, value: impl std::fmt::Debug) -> (String, String) {
    (key.to_string(), format!("{value:?}"))
}

/// One trial's bookkeeping as a snapshot saves it ([`Trial::record`]): every field of the
/// batch core's per-trial record, its random stream included, but not the driver's own
/// state.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct TrialRecord {
    iterations: u64,
    best_score: usize,
    solved_at: Option<u64>,
    solved_by: Option<Mechanism>,
    restarts: u64,
    trig: CompletionTrigger,
    hashes: [u64; CYCLE_MEMORY],
    hash_pos: usize,
    rng: Xoshiro256PlusPlus,
    warm: bool,
    start_best: usize,
    start_improved_at: u64,
    stall_restarts: u64,
    segment_start: u64,
    solutions: u64,
}

/// Rate mode's bookkeeping as a snapshot saves it: the solutions found so far (so that the
/// next one's index follows them) and the classes up to turning found so far, in class order
/// (so that distinct solutions are counted over the whole run).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct RateSaved {
    /// The verified solutions recorded so far, over every part of the run.
    pub found: usize,
    /// The key of each class ([`turn_class_key`]), in the order the classes were found.
    pub classes: Vec<Vec<u16>>,
}

/// The part of a map's snapshot every formulation shares: what it was taken of, each trial's
/// record, the best boards (candidate or variable ids, trial-major) and rate mode's
/// bookkeeping. The formulations' snapshots (`f1::map::F1Snapshot`, `dc::DcSnapshot`) add
/// their float state and solvers.
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SavedBatch {
    pub identity: SnapshotIdentity,
    pub trials: Vec<TrialRecord>,
    pub best_boards: Vec<u32>,
    pub rate: Option<RateSaved>,
}

impl SavedBatch {
    /// The batch's shared part: `trials` and their best boards `best`, rate mode's
    /// bookkeeping `rate` (None outside rate mode).
    pub fn save<E>(identity: SnapshotIdentity, trials: &[Trial<E>], best: &[u32], rate: Option<RateSaved>) -> Self {
        SavedBatch { identity, trials: trials.iter().map(Trial::record).collect(), best_boards: best.to_vec(), rate }
    }

    /// Checks the snapshot against the run that would continue it (`here`, its identity) and
    /// its own lengths (`cells` ids per best board).
    pub fn check(&self, here: &SnapshotIdentity, cells: usize) -> Result<(), SnapshotError> {
        self.identity.check(here)?;
        if self.trials.len() != here.trials || self.best_boards.len() != here.trials * cells {
            return Err(SnapshotError::Damaged(format!(
                "{} trial records and {} best-board entries for {} trials of {cells} cells",
                self.trials.len(),
                self.best_boards.len(),
                here.trials
            )));
        }
        Ok(())
    }

    /// The trials, each with its driver state from `extra(t)`.
    pub fn trials<E>(
        &self,
        max_score: usize,
        mut extra: impl FnMut(usize) -> E,
    ) -> Result<Vec<Trial<E>>, SnapshotError> {
        self.trials.iter().enumerate().map(|(t, r)| Trial::from_record(r, max_score, extra(t))).collect()
    }

    /// What the trials had done when the snapshot was taken.
    pub fn resumed(&self) -> Resumed {
        Resumed {
            trial_iterations: self.trials.iter().map(|r| r.iterations).sum(),
            work: self.trials.iter().map(|r| r.solved_at.unwrap_or(r.iterations)).sum(),
            solutions: self.rate.as_ref().map_or(0, |r| r.found),
        }
    }

    /// The iterations its trials had run, summed.
    pub fn trial_iterations(&self) -> u64 {
        self.trials.iter().map(|r| r.iterations).sum()
    }
}

/// Floats saved bit for bit: serialised as one string of eight hexadecimal digits per float
/// (its bits), so that a text format such as JSON keeps every value exactly, signs of zero and
/// NaNs included. Equality is equality of the bits.
#[derive(Clone, Debug, Default)]
pub(crate) struct Floats(pub Vec<f32>);

impl PartialEq for Floats {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl serde::Serialize for Floats {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(8 * self.0.len());
        for v in &self.0 {
            let b = v.to_bits();
            for k in (0..8).rev() {
                s.push(HEX[(b >> (4 * k)) as usize & 15] as char);
            }
        }
        ser.serialize_str(&s)
    }
}

impl<'de> serde::Deserialize<'de> for Floats {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let s = String::deserialize(de)?;
        if !s.len().is_multiple_of(8) {
            return Err(D::Error::custom(format!("{} hexadecimal digits are not whole floats", s.len())));
        }
        let digit = |c: u8| (c as char).to_digit(16).ok_or_else(|| D::Error::custom("a float that is not hexadecimal"));
        s.as_bytes()
            .chunks_exact(8)
            .map(|w| w.iter().try_fold(0u32, |b, &c| Ok(b << 4 | digit(c)?)).map(f32::from_bits))
            .collect::<Result<Vec<f32>, D::Error>>()
            .map(Floats)
    }
}
