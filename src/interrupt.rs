//! A process-wide request to stop: what Ctrl-C (SIGINT) or SIGTERM means to every engine.
//!
//! The binary installs the signal handler and calls [`request`]; every long loop of the
//! library (the map's rounds on both backends, the backtracker, the scan engine, hill and
//! ALNS) polls [`requested`] where it already polls its time limit, and ends as it would at
//! that limit: the best board found so far is returned, and any solution has passed the exact
//! check. The flag is one relaxed atomic load, so polling it costs nothing measurable.
//!
//! It is a process-wide flag on purpose: a signal is sent to the process, not to one run.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every running engine to stop at its next check (as at a time limit).
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Whether a stop was requested.
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
