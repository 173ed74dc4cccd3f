//! The batch's errors: [`BatchError`] and [`SnapshotError`].

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

/// Why a snapshot cannot be continued: it was written by another version, it is of another
/// puzzle or configuration, it is damaged, or it does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// Another version of the snapshot format.
    #[error("the snapshot is of format version {found}; this build continues version {expected}")]
    Version {
        /// The version the snapshot says.
        found: u32,
        /// The version this build writes and reads ([`SNAPSHOT_VERSION`](super::SNAPSHOT_VERSION)).
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
