//! The round loop every driver runs: [`ROUND`], the trials' spans and chunks, the stop rules,
//! progress and rate mode's hook (`Rounds`), and [`Progress`].

use super::rate::*;
use super::result::*;
use super::snapshot::*;
use super::summary::*;
use super::trial::*;
use crate::cancel::Cancel;
use crate::puzzle::{Board, Placement, Puzzle};
use std::time::{Duration, Instant};

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
    pub(super) start: Instant,
    pub(super) keep: Option<KeepGoing>,
    pub(super) cancel: Cancel,
    /// A continued run: what its trials had done before the restore.
    pub(super) resumed: Option<Resumed>,
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
