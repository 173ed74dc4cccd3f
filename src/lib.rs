//! concur: Elser's iterated maps (difference map / RRR, divide and concur) for edge-matching
//! puzzles of the Eternity II family, with exact verification and search controls.
//!
//! This crate is the engine: the puzzle, verification, propagation, the searches, the maps,
//! the backends, assignment and `solve`. The lab (`concur-lab`: the ladder, its statistics,
//! `bench`, `diagnose`) and the command line (`concur-cli`, the `concur` binary) are crates
//! built on it; see `ARCHITECTURE.md` at the repository root for the maths and conventions.
//! Its features: `gpu` (on by default), the wgpu backend; `clap`, the flags' parsers for a
//! command line. A crate that embeds the engine compiles no command-line or lab crate.
//!
//! # A run
//!
//! A run is one typed value, a [`SolveSpec`]: the [`Method`] with its options (each method's
//! options type holds its defaults) and the run's own options. [`solve::solve`] runs it on a
//! backend until it ends, its time limit passes, or the caller trips its [`Cancel`] token,
//! and every solution it reports has passed the exact board check:
//!
//! ```
//! use concur::backend::CpuBackend;
//! use concur::f1::F1Options;
//! use concur::puzzle::generate::{GenerateOptions, generate};
//! use concur::{Cancel, Method, RunOptions, SolveSpec};
//!
//! // Brendan Owen's colour counts for the size; the same seed gives the same puzzle.
//! let opts = GenerateOptions { width: 4, height: 4, frame_colors: None, inner_colors: None, seed: 7 };
//! let (puzzle, _planted) = generate(&opts)?;
//!
//! // RRR with a smaller step than its default, one thread, everything else at its default.
//! let mut rrr = F1Options::default();
//! rrr.map.beta = 0.5;
//! let run = RunOptions { seed: 7, threads: Some(1), ..RunOptions::default() };
//! let spec = SolveSpec { method: Method::Rrr(rrr), run, ..SolveSpec::default() };
//!
//! // The token is the caller's: another thread may trip it to end the run early.
//! let cancel = Cancel::new();
//! let solved = concur::solve::solve(&puzzle, &spec, &CpuBackend, &cancel, &mut |_event| {})?;
//! assert!(solved.report.solved, "a 4x4 takes the map well under a second");
//!
//! // `solve` has checked its claim already; the verifier says so again from the board alone.
//! let board = solved.report.board.as_ref().expect("a solved report carries its board");
//! let verdict = concur::verify::check(&puzzle, board);
//! assert!(verdict.valid && verdict.score == puzzle.max_score());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Rate mode through a callback
//!
//! With `keep_going`, a solution does not end the run: each is verified, handed to the
//! caller's sink as it is found, and its trial goes on from a fresh point. Here the sink
//! counts them and trips the token after the fifth, which ends the run at its next round:
//!
//! ```
//! use concur::backend::CpuBackend;
//! use concur::batch::{Found, SolutionSink};
//! use concur::puzzle::generate::{GenerateOptions, generate};
//! use concur::{Cancel, MethodName, RunOptions, SolveSpec};
//! use std::sync::{Arc, Mutex};
//!
//! let opts = GenerateOptions { width: 4, height: 4, frame_colors: None, inner_colors: None, seed: 5 };
//! let (puzzle, _) = generate(&opts)?;
//! let cancel = Cancel::new();
//! let heard = Arc::new(Mutex::new(Vec::<Found>::new()));
//! let sink = {
//!     let (heard, cancel) = (heard.clone(), cancel.clone());
//!     SolutionSink::new(move |found: &Found| {
//!         let mut h = heard.lock().expect("not poisoned");
//!         h.push(found.clone());
//!         if h.len() >= 5 {
//!             cancel.cancel();
//!         }
//!         Ok(())
//!     })
//! };
//! let mut method = MethodName::Rrr.with_defaults();
//! if let concur::Method::Rrr(o) = &mut method {
//!     o.map.keep_going = true;
//! }
//! let run = RunOptions { seed: 1, threads: Some(1), ..RunOptions::default() };
//! let spec = SolveSpec { method, run, on_solution: Some(sink), ..SolveSpec::default() };
//! let solved = concur::solve::solve(&puzzle, &spec, &CpuBackend, &cancel, &mut |_| {})?;
//! let found = heard.lock().expect("not poisoned");
//! assert!(found.len() >= 5 && solved.cancelled);
//! assert_eq!(solved.solutions, Some(found.len() as u64));
//! for f in found.iter() {
//!     assert!(concur::verify::check(&puzzle, &f.board).valid);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod assign;
pub mod backend;
pub mod batch;
pub mod cancel;
pub mod certify;
pub mod dc;
pub mod error;
pub mod f1;
pub mod guided;
pub mod hash;
pub mod limits;
pub mod meter;
pub mod method;
pub mod options;
pub mod puzzle;
pub mod report;
pub mod rng;
pub mod search;
pub mod solve;
pub mod verify;

pub use cancel::Cancel;
pub use error::{Error, Result, SpecError};
pub use method::{Method, MethodName};
pub use solve::{RunOptions, SolveError, SolveSpec, Solved};
