//! Resource limits, checked before a run starts (ARCHITECTURE.md §8): the memory a batch of
//! map trials takes and the memory and cores this machine has ([`memory`]), whether an output
//! path can be written ([`outputs`]), and bounded time limits (here). The binary checks them
//! before any solving or counting, so a run that could not finish, or whose result would have
//! nowhere to go, is refused at once (exit 2, one line) instead of dying part-way or losing
//! what it found.

pub mod memory;
pub mod outputs;

pub use memory::{
    Estimate, GpuEstimate, MEMORY_VAR, MemoryBudget, cap_threads, cores, cores_decided, human, parse_size, tables,
};
pub use outputs::{OutputFile, output_dir};

/// The largest number of seconds a time limit may be: far past any run, and small enough
/// that adding it to the clock cannot overflow.
pub const MAX_SECONDS: f64 = 1e9;

/// Why a run cannot start.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    /// The batch does not fit the memory there is.
    #[error(
        "{trials} trials of {what} need about {} of memory, more than the {} available{}; {}",
        human(*need),
        human(*have),
        if *capped { format!(" (capped by {MEMORY_VAR})") } else { String::new() },
        if *fit == 0 { "not even one trial fits".to_string() } else { format!("at most {fit} trials fit") }
    )]
    Memory {
        /// What would run (a method and its backend, in words).
        what: String,
        /// Trials asked for.
        trials: u64,
        /// Bytes they need, estimated.
        need: u64,
        /// Bytes available ([`MemoryBudget`]).
        have: u64,
        /// Trials that would fit.
        fit: u64,
        /// Whether `have` is the `CONCUR_MAX_MEMORY` cap rather than the machine's memory.
        capped: bool,
    },
    /// The tables of a run do not fit, whatever the trials.
    #[error("{what} needs about {} of memory for its tables, more than the {} available{}", human(*need), human(*have), if *capped { format!(" (capped by {MEMORY_VAR})") } else { String::new() })]
    Tables {
        /// What would run, in words.
        what: String,
        /// Bytes the tables need, estimated.
        need: u64,
        /// Bytes available ([`MemoryBudget`]).
        have: u64,
        /// Whether `have` is the `CONCUR_MAX_MEMORY` cap rather than the machine's memory.
        capped: bool,
    },
    /// A beam whose width does not fit.
    #[error(
        "a beam of width {width} on {threads} thread(s) needs about {} of memory, more than the {} available{}; {}",
        human(*need),
        human(*have),
        if *capped { format!(" (capped by {MEMORY_VAR})") } else { String::new() },
        if *fit == 0 { "not even width 1 fits".to_string() } else { format!("at most width {fit} fits") }
    )]
    Beam {
        /// The width asked for.
        width: usize,
        /// The beams run at once (one a thread).
        threads: usize,
        /// Bytes they need, estimated.
        need: u64,
        /// Bytes available ([`MemoryBudget`]).
        have: u64,
        /// The widest beam that fits.
        fit: usize,
        /// Whether `have` is the `CONCUR_MAX_MEMORY` cap rather than the machine's memory.
        capped: bool,
    },
    /// An output that cannot be written.
    #[error("cannot write {path}: {reason}")]
    Unwritable {
        /// The output file or folder.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// A setting that cannot be read.
    #[error("{0}")]
    Setting(String),
}

/// A time limit in seconds: non-negative and at most [`MAX_SECONDS`] (`flag` names the option).
pub fn seconds(flag: &str, s: f64) -> Result<std::time::Duration, LimitError> {
    if !(0.0..=MAX_SECONDS).contains(&s) {
        return Err(LimitError::Setting(format!(
            "{flag} must be a number of seconds from 0 to {MAX_SECONDS:e}, got {s}"
        )));
    }
    Ok(std::time::Duration::from_secs_f64(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_are_bounded() {
        assert!(seconds("--time-limit", 0.0).is_ok());
        assert!(seconds("--time-limit", 1e9).is_ok());
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e300, 1e10] {
            assert!(seconds("--time-limit", bad).is_err(), "{bad}");
        }
    }
}
