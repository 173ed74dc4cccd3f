//! What every map's snapshot shares (module `batch`'s **Snapshots**): the batch's records
//! (`SavedBatch`), its identity ([`SnapshotIdentity`]), [`Resumed`], `Floats` and errors.

use super::error::*;
use super::trial::*;
use crate::puzzle::Puzzle;

/// The format version of map snapshots this build writes and continues.
pub const SNAPSHOT_VERSION: u32 = 1;

/// What a run continued from a snapshot had done before its restore, summed over its trials;
/// its own counters ([`MapResult::trial_iterations`](super::MapResult::trial_iterations), [`MapResult::work`](super::MapResult::work), its rate-mode
/// solutions) leave this out, so that the parts of a run add up to the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resumed {
    /// Iterations the trials had run.
    pub trial_iterations: u64,
    /// Work as [`MapResult::work`](super::MapResult::work) counts it (per trial: the iteration it solved at, else the
    /// iterations it ran).
    pub work: u64,
    /// Rate mode: the verified solutions found before the restore.
    pub solutions: usize,
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

/// What every driver's snapshot type (a struct holding its `batch: SavedBatch`) answers of
/// itself: its identity, the iterations its trials had run, and a short `Debug` (where
/// `SnapshotIdentity` is in scope).
macro_rules! saved_batch_api {
    ($snapshot:ident) => {
        impl $snapshot {
            /// What it was taken of; a run continues it only when its own identity is the same.
            pub fn identity(&self) -> &SnapshotIdentity {
                &self.batch.identity
            }

            /// The iterations its trials had run, summed (from the run's start).
            pub fn trial_iterations(&self) -> u64 {
                self.batch.trial_iterations()
            }
        }

        impl std::fmt::Debug for $snapshot {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let id = self.identity();
                f.debug_struct(stringify!($snapshot))
                    .field("method", &id.method)
                    .field("board", &format_args!("{}x{}", id.width, id.height))
                    .field("trials", &id.trials)
                    .field("trial_iterations", &self.trial_iterations())
                    .finish_non_exhaustive()
            }
        }
    };
}
pub(crate) use saved_batch_api;
