//! Cancellation: a token the caller passes into a run and may trip from any thread.
//!
//! Every long loop of the library (the maps' rounds on both backends, the backtracker, the
//! scan engine, hill and ALNS, the counts, the ladder and the benchmark) polls its run's
//! [`Cancel`] where it already polls its time limit, and ends as it would at that limit: the
//! best board found so far is returned, and any solution has passed the exact check. A token
//! is one relaxed atomic load to poll, so polling it costs nothing measurable.
//!
//! A token belongs to the runs it was given to, not to the process: two solves in one
//! program with two tokens are cancelled apart, and a token that was never tripped leaves its
//! run alone. The command-line binary makes one token per process and trips it on Ctrl-C or
//! SIGTERM.
//!
//! ```
//! use concur::cancel::Cancel;
//! let token = Cancel::new();
//! let for_the_run = token.clone(); // give this one to the run
//! assert!(!for_the_run.is_cancelled());
//! token.cancel(); // from another thread, a signal handler, a user interface...
//! assert!(for_the_run.is_cancelled());
//! assert!(!Cancel::new().is_cancelled(), "a new token is a run of its own");
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// A request to stop, shared by every clone of one token. [`Cancel::default`] is a fresh
/// token that nothing else holds.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<Token>);

/// The shared state of a token: the flag every loop polls, and why it was first tripped.
#[derive(Debug, Default)]
struct Token {
    stop: AtomicBool,
    why: OnceLock<String>,
}

impl Cancel {
    /// A fresh token, not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every run holding a clone of this token to stop at its next check.
    pub fn cancel(&self) {
        self.0.stop.store(true, Ordering::Relaxed);
    }

    /// [`Cancel::cancel`], saying why (a signal's name, `SIGTERM`; a caller's own reason).
    /// The first reason given stands; a later one is dropped.
    pub fn cancel_because(&self, why: &str) {
        let _ = self.0.why.set(why.to_string());
        self.cancel();
    }

    /// Whether a stop was requested.
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.0.stop.load(Ordering::Relaxed)
    }

    /// Why the token was tripped: the first reason given to [`Cancel::cancel_because`],
    /// `"cancelled"` when it was tripped without one, None while it is not tripped.
    pub fn reason(&self) -> Option<&str> {
        self.is_cancelled().then(|| self.0.why.get().map_or("cancelled", String::as_str))
    }
}

impl PartialEq for Cancel {
    /// Two tokens are equal when they are clones of one another (a configuration compared
    /// with itself stays equal).
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// When a run ends: its deadline, if it has one, or its token, whichever comes first.
#[derive(Clone, Debug, Default)]
pub struct Deadline {
    /// The instant the run must end by (None: no time limit).
    pub at: Option<std::time::Instant>,
    /// The run's token.
    pub cancel: Cancel,
}

impl Deadline {
    /// A run that started now with `time_limit` (None: no deadline) and `cancel`.
    pub fn after(time_limit: Option<std::time::Duration>, cancel: &Cancel) -> Self {
        Deadline { at: time_limit.map(|t| std::time::Instant::now() + t), cancel: cancel.clone() }
    }

    /// Whether the deadline has passed or the run was cancelled.
    pub fn passed(&self) -> bool {
        self.cancel.is_cancelled() || self.at.is_some_and(|d| std::time::Instant::now() >= d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_keeps_its_first_reason() {
        let t = Cancel::new();
        assert_eq!(t.reason(), None);
        let c = t.clone();
        c.cancel_because("SIGTERM");
        t.cancel_because("SIGINT");
        assert_eq!(t.reason(), Some("SIGTERM"));
        let plain = Cancel::new();
        plain.cancel();
        assert_eq!(plain.reason(), Some("cancelled"));
    }
}
