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
//! rounds, in trial order, it checks each solved trial's board with [`crate::verify::check`],
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

mod completion;
mod driver;
mod error;
mod options;
mod rate;
mod result;
mod rounds;
mod snapshot;
mod summary;
#[cfg(test)]
pub(crate) mod testing;
mod trial;

pub use completion::*;
pub(crate) use driver::*;
pub use error::*;
pub use options::*;
pub use rate::*;
pub use result::*;
pub use rounds::*;
pub use snapshot::*;
pub use summary::*;
pub use trial::*;
