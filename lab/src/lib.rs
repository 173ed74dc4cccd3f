//! The lab of concur, built on the engine (the `concur` crate): what measures it rather than
//! what solves.
//!
//! - [`ladder`]: the benchmark ladder (many independent runs of several methods over many
//!   instances, one JSON line a finished run, sharded and resumable) and its report (the
//!   statistics, the fits, the figures).
//! - [`bench`](mod@bench): CPU against GPU throughput of every kernel and of whole iterations.
//! - [`diagnose`]: instruments for why a map stalls (distances to the nearest solution, a
//!   trial watched step by step).
//!
//! The engine never imports the lab; a crate that embeds the engine compiles none of it.
#![warn(missing_docs)]

pub mod bench;
pub mod diagnose;
pub mod ladder;
