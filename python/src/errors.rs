//! The library's errors as Python exceptions. The classes are defined in Python
//! (`concur/_errors.py`), where each can have two bases (`InputError` is a `ValueError` too);
//! this module raises them.

use concur::backend::{EngineError, GpuError};
use concur::limits::LimitError;
use concur::{SolveError, SpecError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The exception classes of `concur._errors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `ConcurError`: the base, and what fits no other class (an internal error).
    Concur,
    /// `InputError`: a puzzle, solution or array that does not read or does not hold.
    Input,
    /// `SpecError`: an option that does not exist, does not apply or is out of range.
    Spec,
    /// `ResourceError`: memory, an output that cannot be written, threads.
    Resource,
    /// `DeviceError`: the GPU.
    Device,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Concur => "ConcurError",
            Kind::Input => "InputError",
            Kind::Spec => "SpecError",
            Kind::Resource => "ResourceError",
            Kind::Device => "DeviceError",
        }
    }

    fn class<'py>(self, py: Python<'py>) -> PyResult<&'py Bound<'py, PyType>> {
        static CLASSES: [PyOnceLock<Py<PyType>>; 5] =
            [PyOnceLock::new(), PyOnceLock::new(), PyOnceLock::new(), PyOnceLock::new(), PyOnceLock::new()];
        CLASSES[self as usize].import(py, "concur._errors", self.name())
    }
}

/// An exception of `kind` with `message`.
pub fn error(kind: Kind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| match kind.class(py) {
        Ok(class) => PyErr::from_type(class.clone(), message),
        // The package's own module is missing (the extension imported alone): still a ValueError.
        Err(_) => PyValueError::new_err(message),
    })
}

/// `SpecError` with the option it names as `key` (the command line's name with `_`), or None.
pub fn spec_error(message: impl Into<String>, key: Option<&str>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let made = Kind::Spec.class(py).and_then(|class| {
            let e = class.call1((message.clone(),))?;
            e.setattr("key", key)?;
            Ok(PyErr::from_value(e))
        });
        made.unwrap_or_else(|_| PyValueError::new_err(message))
    })
}

/// A bad run option.
pub fn spec(e: &SpecError) -> PyErr {
    spec_error(e.to_string(), e.key())
}

/// A puzzle, solution or record that does not read.
pub fn input(e: impl std::fmt::Display) -> PyErr {
    error(Kind::Input, e.to_string())
}

/// A check before the work: memory and outputs are resources, a setting out of range is an
/// option.
pub fn limit(e: &LimitError) -> PyErr {
    match e {
        LimitError::Setting(m) => spec_error(m.clone(), None),
        other => error(Kind::Resource, other.to_string()),
    }
}

/// A GPU that is missing or failed.
pub fn gpu(e: &GpuError) -> PyErr {
    error(Kind::Device, e.to_string())
}

/// A solve that failed, by what failed.
pub fn solve(e: &SolveError) -> PyErr {
    match e {
        SolveError::Spec(s) => spec(s),
        SolveError::Limit(l) => limit(l),
        SolveError::Backend(g) => gpu(g),
        SolveError::Engine(EngineError::Gpu(g)) => gpu(g),
        // What a backend does not run is an option that does not apply there.
        SolveError::Engine(EngineError::Unsupported(u)) => spec_error(u.to_string(), None),
        SolveError::Engine(EngineError::Assign(a)) => input(format!("the puzzle has no board that fits its rim: {a}")),
        SolveError::NoBoard(_) => input(e),
        // A snapshot to continue (not an option Python sets) that is not of this run.
        SolveError::Snapshot(_) => input(e),
        SolveError::Threads { .. } => error(Kind::Resource, e.to_string()),
        SolveError::Engine(EngineError::Batch(_)) | SolveError::InvalidClaim(_) => error(Kind::Concur, e.to_string()),
    }
}
