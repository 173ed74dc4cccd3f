//! Waiting for the library's work with the GIL released, answering Ctrl-C: the one way every
//! long call of the package runs.

use crate::errors::{Kind, error};
use concur::Cancel;
use pyo3::prelude::*;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// How often the waiting thread looks for a signal.
pub const POLL: Duration = Duration::from_millis(100);

/// Runs `work` on a worker thread while this thread, with the GIL released, looks for signals
/// every 100 ms. A signal whose handler raises (Ctrl-C: `KeyboardInterrupt`) trips `cancel`,
/// which the library answers within about a second; the work's end is awaited and the
/// signal's exception raised. A panic in the work is a `ConcurError`.
pub fn blocking<T: Send>(py: Python<'_>, cancel: &Cancel, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    let (out, signal) = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel::<()>();
            let handle = s.spawn(move || {
                let out = work();
                drop(tx);
                out
            });
            let mut signal = None;
            while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(POLL) {
                if signal.is_none()
                    && let Err(e) = Python::attach(|py| py.check_signals())
                {
                    signal = Some(e);
                    cancel.cancel();
                }
            }
            (handle.join(), signal)
        })
    });
    if let Some(e) = signal {
        return Err(e);
    }
    out.map_err(|p| error(Kind::Concur, format!("internal error: {}", panic_text(p.as_ref()))))
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default()
}
