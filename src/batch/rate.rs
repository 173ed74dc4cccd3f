//! Rate mode's bookkeeping: the [`SolutionSink`], each [`Found`] solution, [`RateRun`], the
//! classes up to turning the board ([`turn_class_key`]) and [`SolutionAt`].

use super::summary::*;
use crate::puzzle::{Board, Puzzle};
use crate::verify::{self};
use std::sync::{Arc, Mutex};

/// Where a rate-mode batch hands each verified solution as it is found (for example, to
/// append it as a JSON line and flush, so that a killed run keeps every solution). It runs on
/// the driver's thread, between rounds; an error it returns is kept ([`RateRun::sink_error`])
/// and the run goes on.
#[derive(Clone)]
pub struct SolutionSink(Arc<Mutex<SinkFn>>);

pub(super) type SinkFn = dyn FnMut(&Found) -> Result<(), String> + Send;

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

/// What a rate-mode batch found ([`MapResult::rate`](super::MapResult::rate)). A run continued from a snapshot
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
pub(super) struct KeepGoing {
    /// The solutions found by this run (a continued run: since its restore).
    pub(super) found: Vec<Found>,
    /// A continued run: the solutions found before its restore (the next one's index).
    pub(super) found_before: usize,
    /// Canonical board (the least placement codes over its turns) to class, over the whole
    /// run (a continued run's include those found before its restore).
    pub(super) classes: std::collections::HashMap<Vec<u16>, usize>,
    /// A continued run: the classes found before its restore.
    pub(super) classes_before: usize,
    pub(super) rejected: u64,
    pub(super) sink: Option<SolutionSink>,
    pub(super) sink_error: Option<String>,
}

impl KeepGoing {
    #[allow(clippy::too_many_arguments, reason = "one solution's facts")]
    pub(super) fn record(
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
    let quarter = crate::puzzle::rotate_board(board);
    let half = crate::puzzle::rotate_board(&quarter);
    let mut keys = vec![code(board), code(&half)];
    if board.width == board.height {
        keys.push(code(&quarter));
        keys.push(code(&crate::puzzle::rotate_board(&half)));
    }
    keys.into_iter().min().expect("at least one turn")
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
