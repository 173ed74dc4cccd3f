//! What a long run shows of itself while it runs: a [`Meter`] the run updates now and then
//! (every few thousand nodes, once per draw or probe) and another thread reads for a progress
//! display, and a [`Watch`], the pair of a run's cancellation token and its meter.
//!
//! A meter is two relaxed atomic stores per update, made where the run already checks its
//! limits, so it costs nothing measurable.

use crate::cancel::Cancel;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Two counters a run shows while it runs: its work so far (nodes, draws or probes, as the
/// run documents) and what it has found (solutions).
#[derive(Clone, Debug, Default)]
pub struct Meter(Arc<[AtomicU64; 2]>);

impl Meter {
    /// A meter at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the counters (called by the run).
    #[inline]
    pub fn show(&self, work: u64, found: u64) {
        self.0[0].store(work, Ordering::Relaxed);
        self.0[1].store(found, Ordering::Relaxed);
    }

    /// The counters as last shown: (work, found).
    pub fn read(&self) -> (u64, u64) {
        (self.0[0].load(Ordering::Relaxed), self.0[1].load(Ordering::Relaxed))
    }
}

/// A run's token and, optionally, its meter: what a caller hands to a long function that
/// takes no configuration of its own (the counts, the tree estimate, `generate --unique`).
#[derive(Clone, Debug, Default)]
pub struct Watch {
    /// The run's token.
    pub cancel: Cancel,
    /// Where the run shows its progress, if anywhere.
    pub meter: Option<Meter>,
}

impl Watch {
    /// A watch with `cancel` and no meter.
    pub fn cancel(cancel: &Cancel) -> Self {
        Watch { cancel: cancel.clone(), meter: None }
    }
}

/// Runs `f` on the calling thread and returns what it gave with the CPU seconds the thread
/// spent in it ([`thread_cpu_seconds`]; None where the platform does not tell): the share of
/// a run's CPU time that a thread it started for itself spent.
pub fn with_thread_cpu<T>(f: impl FnOnce() -> T) -> (T, Option<f64>) {
    let before = thread_cpu_seconds();
    let out = f();
    (out, before.zip(thread_cpu_seconds()).map(|(a, b)| b - a))
}

/// The calling thread's CPU seconds so far, user and system (Linux's `RUSAGE_THREAD`; None
/// elsewhere): a run's own CPU time, measured on the thread that ran it, whatever else the
/// process is doing.
pub fn thread_cpu_seconds() -> Option<f64> {
    #[cfg(target_os = "linux")]
    {
        let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: getrusage fills the struct it is given for a valid `who`; on failure the
        // zeroed value is not read.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, u.as_mut_ptr()) };
        // SAFETY: rc == 0: the call filled it (and it started zeroed, a valid rusage).
        let u = (rc == 0).then(|| unsafe { u.assume_init() })?;
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Some(s(u.ru_utime) + s(u.ru_stime))
    }
    #[cfg(not(target_os = "linux"))]
    None
}
