//! concur: Elser's iterated maps (difference map / RRR, divide and concur) for edge-matching
//! puzzles of the Eternity II family, with exact verification and search controls.
//!
//! See `ARCHITECTURE.md` at the repository root for the maths and conventions; module
//! layout follows its §1.
pub mod assign;
pub mod backend;
pub mod batch;
pub mod certify;
pub mod dc;
pub mod diagnose;
pub mod error;
pub mod f1;
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
