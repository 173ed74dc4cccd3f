//! The options every map has ([`MapOptions`], one table) and how a batch runs ([`MapRun`]),
//! with the map between the two sets ([`MapKind`]) and the batch's errors ([`BatchError`]).

use super::completion::*;
use super::rate::*;
use crate::cancel::Cancel;
use std::time::Duration;

/// Which iterated map, in either formulation: RRR or the general-beta difference map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum MapKind {
    /// RRR (reflect-reflect-relax): `x += beta (P_A(2 P_B x - x) - P_B x)`.
    Rrr,
    /// The difference map with general `beta` (Elser's, with `gamma_a = -1/beta` and `gamma_b =
    /// 1/beta`).
    Dm,
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
