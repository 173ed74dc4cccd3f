//! Puzzles with one solution (`concur generate --unique`): planted puzzles drawn until a
//! complete count by the backtracker proves the planted solution the only one up to turning
//! the board.

use super::backtrack::{BacktrackConfig, Backtracker, Ending, Next};
use crate::meter::Watch;
use crate::puzzle::generate::{GenerateOptions, generate};
use crate::puzzle::{Board, Puzzle};
use crate::verify::Consistency;

/// Outcome of [`generate_unique`].
#[derive(Clone, Debug)]
pub struct Unique {
    /// The puzzle drawn, with exactly one solution up to turning the board.
    pub puzzle: Puzzle,
    /// Its planted solution.
    pub solution: Board,
    /// Draws made (1 = the first was unique).
    pub attempts: u64,
}

/// Draws puzzles (seeds derived from `opts.seed` and the attempt) until one has exactly one
/// solution up to turning the whole board (square boards: four turned copies; otherwise two,
/// the half turn), proven by a complete count within `max_nodes` per draw. `None` if no draw
/// within `max_attempts` could be proven unique, or `watch`'s token ended the draws. Its
/// meter shows the draws made.
pub fn generate_unique(
    opts: &GenerateOptions,
    max_attempts: u64,
    max_nodes: u64,
    watch: &Watch,
) -> crate::error::Result<Option<Unique>> {
    for attempt in 0..max_attempts {
        // A stop request ends the draws (a count it cut short proves nothing).
        if watch.cancel.is_cancelled() {
            break;
        }
        if let Some(m) = &watch.meter {
            m.show(attempt, 0);
        }
        let o = GenerateOptions { seed: crate::rng::trial_seed(opts.seed, attempt), ..opts.clone() };
        let (puzzle, solution) = generate(&o)?;
        // Every whole-board turn that maps the board onto itself gives another solution.
        let turns = if puzzle.width() == puzzle.height() { 4 } else { 2 };
        let cfg = BacktrackConfig {
            consistency: Consistency::Ac4,
            restarts: false,
            randomize: false,
            max_nodes: Some(max_nodes),
            cancel: watch.cancel.clone(),
            ..Default::default()
        };
        let mut bt = Backtracker::new(&puzzle, cfg);
        let mut n = 0u64;
        let (ending, _) = bt.run(|_| {
            n += 1;
            if n > turns { Next::Stop } else { Next::Continue }
        });
        if ending == Ending::Exhausted && n == turns {
            return Ok(Some(Unique { puzzle, solution, attempts: attempt + 1 }));
        }
    }
    Ok(None)
}

/// Why [`generate_unique_checked`] drew nothing.
#[derive(Debug, thiserror::Error)]
pub enum UniqueError {
    /// Options the generator refuses.
    #[error(transparent)]
    Generate(#[from] crate::error::Error),
    /// The counting search's tables do not fit the memory here.
    #[error(transparent)]
    Memory(#[from] crate::limits::LimitError),
}

/// `concur generate --unique`: [`generate_unique`] after checking that the counting search's
/// tables fit the memory here (sized from a first draw: the draws of one size are alike).
pub fn generate_unique_checked(
    opts: &GenerateOptions,
    max_attempts: u64,
    max_nodes: u64,
    watch: &Watch,
) -> Result<Option<Unique>, UniqueError> {
    let (first, _) = generate(opts)?;
    let what = format!("generate --unique of a {}x{} board", opts.width, opts.height);
    crate::limits::MemoryBudget::here()?.check_tables(&what, crate::limits::tables(&first, true))?;
    Ok(generate_unique(opts, max_attempts, max_nodes, watch)?)
}
