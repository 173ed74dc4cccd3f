//! One trial's record in a batch (`Trial`): its counters, stall rule, completion trigger and
//! cycle detector ([`fingerprint`], [`CYCLE_MEMORY`]).

use super::completion::*;
use super::error::*;
use super::summary::*;
use crate::puzzle::{Placement, Puzzle};
use crate::rng::trial_seed;
use crate::search::backtrack::Backtracker;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

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
/// per-trial state. Public for the lab's instruments (`concur-lab`'s `diagnose`), which
/// replay one trial step by step; the engine's drivers own theirs.
#[derive(Clone, Debug)]
pub struct Trial<E> {
    /// Iterations run.
    pub iterations: u64,
    /// The best board score seen.
    pub best_score: usize,
    /// Iteration at which the trial solved, and how.
    pub solved_at: Option<u64>,
    /// See `solved_at`.
    pub solved_by: Option<Mechanism>,
    /// Restarts after exact limit cycles (and non-finite states).
    pub restarts: u64,
    /// Arc-consistent completion (with `--complete`): the iteration of the last best-score
    /// improvement, the searches run and their nodes.
    pub(crate) trig: CompletionTrigger,
    pub(super) hashes: [u64; CYCLE_MEMORY],
    pub(super) hash_pos: usize,
    /// The trial's random stream (`rng::trial_seed`): starts, restarts, kicks.
    pub rng: Xoshiro256PlusPlus,
    /// Whether the assignments may warm-start from the previous duals.
    pub warm: bool,
    /// Best score and its iteration since the last (re)start, for stall restarts.
    pub(super) start_best: usize,
    pub(super) start_improved_at: u64,
    /// Restarts after a stall (no improvement within the stall limit).
    pub stall_restarts: u64,
    /// Rate mode (`Rounds::keep_going`): the iteration at which the trial's current
    /// segment began (0, or where it resumed after its last solution), and the verified
    /// solutions it has found.
    pub segment_start: u64,
    /// See `segment_start`.
    pub solutions: u64,
    /// The driver's own per-trial state.
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

    /// Runs the completion trigger after an iteration (see `CompletionTrigger::due`);
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

/// One trial's bookkeeping as a snapshot saves it ([`Trial::record`]): every field of the
/// batch core's per-trial record, its random stream included, but not the driver's own
/// state.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TrialRecord {
    pub(super) iterations: u64,
    pub(super) best_score: usize,
    pub(super) solved_at: Option<u64>,
    pub(super) solved_by: Option<Mechanism>,
    pub(super) restarts: u64,
    pub(super) trig: CompletionTrigger,
    pub(super) hashes: [u64; CYCLE_MEMORY],
    pub(super) hash_pos: usize,
    pub(super) rng: Xoshiro256PlusPlus,
    pub(super) warm: bool,
    pub(super) start_best: usize,
    pub(super) start_improved_at: u64,
    pub(super) stall_restarts: u64,
    pub(super) segment_start: u64,
    pub(super) solutions: u64,
}
