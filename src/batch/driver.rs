//! The CPU drivers' run (`f1::map`, `dc::map`): the loop of rounds both formulations share,
//! with the stop rules, rate mode's hook, the stop that a snapshot continues and what a
//! driver keeps between runs ([`Between`]). A driver says how its batch runs a round,
//! restarts a harvested trial, saves itself and reads its result ([`HostBatch`]); [`run`]
//! does the rest.

use super::options::MapRun;
use super::result::MapResult;
use super::rounds::{Progress, Rounds};
use super::snapshot::{RateSaved, Resumed, SavedBatch};
use super::trial::Trial;
use crate::cancel::{Cancel, Deadline};
use crate::puzzle::{Board, Placement, Puzzle};
use std::sync::atomic::{AtomicBool, Ordering};

/// A formulation's batch as [`drive`] runs it on the host.
pub(crate) trait HostBatch {
    /// The driver's own per-trial state.
    type Extra;

    /// The trials' records.
    fn trials(&self) -> &[Trial<Self::Extra>];

    /// Runs one round of every active trial, in parallel. Once `until` has passed, a trial
    /// not yet begun in the round skips it and `cut` is set, so that a large batch stops
    /// within one trial's round.
    fn round(&mut self, until: &Deadline, cut: &AtomicBool);

    /// Rate mode, after every round: hands the round's solved trials to
    /// `Rounds::harvest` and gives each trial it returns a fresh start from its own stream.
    fn harvest(&mut self, rounds: &mut Rounds);

    /// The driver's snapshot type.
    type Snapshot;

    /// What the driver keeps between its runs.
    fn between(&mut self) -> &mut Between<Self::Snapshot>;

    /// The batch's state now (after the run's last round, with its rate-mode bookkeeping).
    fn snapshot(&self) -> Self::Snapshot;

    /// The run's outcome (`Rounds::finish` over the trials and their best boards).
    fn finish(&self, rounds: Rounds) -> MapResult;
}

/// What a CPU driver keeps from one run to the next.
pub(crate) struct Between<S> {
    /// Rate mode's bookkeeping over the run so far: the last run's, or a restored snapshot's.
    pub rate: Option<RateSaved>,
    /// Set by a restore, taken by the next run: what the trials had done before, which that
    /// run's counters leave out.
    pub resumed: Option<Resumed>,
    /// The last run's snapshot, when its token stopped it with `save_at_stop`.
    pub stopped: Option<S>,
}

impl<S> Default for Between<S> {
    fn default() -> Self {
        Between { rate: None, resumed: None, stopped: None }
    }
}

impl<S> Between<S> {
    /// After a restore from `saved`: the next run continues it.
    pub(crate) fn restored(&mut self, saved: &SavedBatch) {
        *self = Between { rate: saved.rate.clone(), resumed: Some(saved.resumed()), stopped: None };
    }
}

/// **A CPU driver's run**: [`drive`] over `batch`, continuing the part a restore left; then
/// rate mode's bookkeeping is kept, the snapshot taken when the token stopped the run (with
/// `save_at_stop`, and for no other reason), and the outcome read.
pub(crate) fn run<B: HostBatch>(batch: &mut B, rules: &StopRules, progress: impl FnMut(&Progress)) -> MapResult {
    let between = batch.between();
    between.stopped = None;
    let (resumed, rate) = (between.resumed.take(), between.rate.take());
    let (rounds, stopped) = drive(batch, rules, resumed.map(|r| (r, rate.as_ref())), progress);
    batch.between().rate = rounds.rate_saved();
    if stopped {
        let snapshot = batch.snapshot();
        batch.between().stopped = Some(snapshot);
    }
    batch.finish(rounds)
}

/// The stop rules of a run: how it runs, whether it is in rate mode, and whether it runs every
/// trial to its budget.
pub(crate) struct StopRules {
    pub run: MapRun,
    pub keep_going: bool,
    pub all_trials: bool,
}

impl StopRules {
    pub(crate) fn new(run: &MapRun, keep_going: bool, all_trials: bool) -> Self {
        StopRules { run: run.clone(), keep_going, all_trials }
    }
}

/// Runs `batch` round after round until `rules` end it, continuing an earlier part
/// (`resumed`, with rate mode's bookkeeping `rate`) when there is one. Returns the rounds'
/// bookkeeping, for `Rounds::finish`, and whether the run's token stopped it and nothing
/// else did, between rounds, where a snapshot continues it exactly (with `save_at_stop`).
///
/// Past the time limit, or when cancelled, the trials not yet begun in a round skip it. A run
/// that saves at a stop lets its token stop it only between rounds: every trial then stands
/// at the same round's end, the uninterrupted run's state there.
pub(crate) fn drive<B: HostBatch>(
    batch: &mut B,
    rules: &StopRules,
    resumed: Option<(Resumed, Option<&RateSaved>)>,
    mut progress: impl FnMut(&Progress),
) -> (Rounds, bool) {
    let run = &rules.run;
    let mut rounds = Rounds::new(rules.keep_going, run.on_solution.clone(), &run.cancel);
    if let Some((resumed, rate)) = resumed {
        rounds.resume(resumed, rate);
    }
    let never = Cancel::new();
    let until = Deadline::after(run.time_limit, if run.save_at_stop { &never } else { &run.cancel });
    let cut = AtomicBool::new(false);
    let stop_at_first = !rules.all_trials;
    loop {
        batch.round(&until, &cut);
        if rules.keep_going {
            batch.harvest(&mut rounds);
        }
        if rounds.after_round(batch.trials(), stop_at_first, run.max_iters, run.time_limit, &mut progress) {
            break;
        }
    }
    let stopped = run.save_at_stop
        && !cut.load(Ordering::Relaxed)
        && rounds.stopped_by_token(batch.trials(), stop_at_first, run.max_iters, run.time_limit);
    (rounds, stopped)
}

/// Trial `t`'s best board, from the batch's best boards (`cells` variables a trial,
/// trial-major) read as placements by `place`.
pub(crate) fn best_board(puzzle: &Puzzle, best: &[u32], t: usize, place: impl Fn(&[u32]) -> Vec<Placement>) -> Board {
    let cells = puzzle.cells();
    Board { width: puzzle.width(), height: puzzle.height(), cells: place(&best[t * cells..(t + 1) * cells]) }
}
