//! Exact solution counting by a row-scan tree search with lookup tables: the counting engine
//! for boards whose complete tree is far beyond what maintained arc consistency can walk.
//!
//! Cells are filled in row-major order. When cell `c` is reached, the colours its left and
//! upper neighbours show towards it are known, so its possible placements are exactly the
//! candidates of `c` (ARCHITECTURE.md §2, hints included) with that left and that upper colour:
//! one precomputed list per (cell, left, up). A node costs a table read and a used-piece bit
//! test; there is no propagation, so the tree is close to the plain scan tree, which arc
//! consistency shrinks only about tenfold on Brendan Owen's set 1 while costing a hundred
//! times more per node (BENCHMARKS.md).
//!
//! Two cheap, sound checks trim the tree: join budgets (`tables::join_budgets`: the pieces fix how
//! many joins of each kind and colour a solution has, and the walk never opens more), and a
//! one-cell look-ahead (the cell under a placement must keep an unused piece that shows the
//! right colour upwards).
//!
//! Two things make the count cheaper without changing it:
//! - symmetry: on a square board without hints, every solution turned by a quarter turn is
//!   again a solution, and the four turns put four different corner pieces in the top-left
//!   corner. So it is enough to enumerate the solutions with one chosen corner piece there;
//!   each is verified together with its three turned copies, which are counted too;
//! - parallelism: the tree is cut at a fixed depth into independent subtrees (tasks), which
//!   the worker threads take in order. With a journal ([`count_journaled`],
//!   [`crate::search::journal`]) every finished subtree is recorded as it ends, so a long
//!   count can stop and resume, and can be split across machines.
//!
//! Every solution passes the exact board check before it is counted.
//!
//! Files: `tables.rs` (the lookup tables, join budgets, the corner piece of turn symmetry),
//! `walk.rs` (the depth-first walk and Knuth's estimate), `fast.rs` (the first-solution
//! walker specialised for speed, the same walk node for node, with `walk.rs`'s as its
//! oracle), `breaks.rs` (the break-budget walk, `--breaks`: the Blackwood-style control),
//! `count.rs` ([`count`], [`count_journaled`] and the journal types) and `solve.rs`
//! ([`solve`]: orientations, tree choice, restarts, the walker).

mod breaks;
mod count;
mod fast;
mod solve;
mod tables;
mod walk;

pub use count::{
    CountEngine, Journal, NoJournal, ScanCount, ScanError, ScanOptions, ScanPlan, TaskDone, count, count_journaled,
};
pub use solve::{
    Orientation, ScanProgress, ScanSolve, ScanSolveConfig, ScanSolveOptions, ScanTree, ScanWalker, TreeChoice,
};

/// Searches for one solution: with `cfg.breaks`, the break-budget walk (`breaks.rs`);
/// else the exact row scan, randomised, restarted and parallel (`solve.rs`: its doc says how).
pub fn solve(
    puzzle: &crate::puzzle::Puzzle,
    cfg: &ScanSolveConfig,
    progress: &(dyn Fn(&ScanProgress) + Sync),
) -> ScanSolve {
    if cfg.breaks.is_empty() { solve::solve(puzzle, cfg, progress) } else { breaks::solve(puzzle, cfg, progress) }
}
