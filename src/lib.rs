//! concur: Elser's iterated maps (difference map / RRR, divide and concur) for edge-matching
//! puzzles of the Eternity II family, with exact verification and search controls.
//!
//! See `ARCHITECTURE.md` at the repository root for the maths and conventions; module
//! layout follows its §1.
//!
//! # Example
//!
//! Generate a 4x4 puzzle with a planted solution, solve it with the map (RRR, the default
//! method of a [`solve::SolveSpec`]) on the CPU backend through [`solve::solve`], the one way a
//! method runs, and check the board with the exact verifier:
//!
//! ```
//! use concur::backend::CpuBackend;
//! use concur::puzzle::generate::{GenerateOptions, generate};
//! use concur::solve::{SolveSpec, solve};
//!
//! // Brendan Owen's colour counts for the size; the same seed gives the same puzzle.
//! let opts = GenerateOptions { width: 4, height: 4, frame_colors: None, inner_colors: None, seed: 7 };
//! let (puzzle, _planted) = generate(&opts)?;
//!
//! // Every option at its command-line default (`concur solve p.txt --seed 7 --threads 1`).
//! let spec = SolveSpec { seed: 7, threads: Some(1), ..SolveSpec::default() };
//! let solved = solve(&puzzle, &spec, &CpuBackend, &mut |_event| {})?;
//! assert!(solved.report.solved, "a 4x4 takes the map well under a second");
//!
//! // `solve` has checked its claim already; the verifier says so again from the board alone.
//! let board = solved.report.board.as_ref().expect("a solved report carries its board");
//! let verdict = concur::verify::check(&puzzle, board);
//! assert!(verdict.valid && verdict.score == puzzle.max_score());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
pub mod assign;
pub mod backend;
pub mod batch;
pub mod bench;
pub mod certify;
pub mod cli;
pub mod dc;
pub mod diagnose;
pub mod error;
pub mod f1;
pub mod guided;
pub mod hash;
pub mod interrupt;
pub mod ladder;
pub mod limits;
pub mod puzzle;
pub mod report;
pub mod rng;
pub mod search;
pub mod solve;
pub mod verify;

pub use error::{Error, Result};
