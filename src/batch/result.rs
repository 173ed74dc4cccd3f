//! What a batch returns: [`MapResult`] (built by `result` from the trials and their best
//! boards), [`TrialSummary`], [`DeviceShare`], and the [`Mechanism`] that found a solution.

use super::rate::*;
use super::snapshot::*;
use super::summary::*;
use crate::puzzle::Board;

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
