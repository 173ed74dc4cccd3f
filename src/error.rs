//! Library error type. Everything a caller cannot anticipate: bad input files, impossible
//! parameters. The binary maps every one of these to exit code 2.

/// Errors from parsing, validating or generating puzzles and solutions.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A text file that does not follow its format; `line` is 1-based.
    #[error("line {line}: {msg}")]
    Parse { line: usize, msg: String },
    /// Well-formed input that describes an impossible or inconsistent puzzle or solution.
    #[error("{0}")]
    Invalid(String),
    /// Parameters that cannot be satisfied (e.g. too few colours to avoid duplicate pieces).
    #[error("{0}")]
    Unsatisfiable(String),
}

impl Error {
    pub(crate) fn parse(line: usize, msg: impl Into<String>) -> Self {
        Error::Parse { line, msg: msg.into() }
    }
    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The name a run's option has on the command line (`join_weights` is `--join-weights`); a
/// ladder's method entries use the key itself.
pub fn flag(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

/// A run that cannot be what it asks: an option the method does not have or would not use,
/// a value out of its range, options that contradict each other. Each names the option
/// (by its command-line flag), so that a caller can tell them apart and a user reads one
/// line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// No method has an option of this name.
    #[error("{} is not an option of any method", flag(key))]
    Unknown { key: String },
    /// The option belongs to other methods.
    #[error("{} is an option of --method {}, not of {method}", flag(key), methods.join(", "))]
    NotForMethod { key: String, method: &'static str, methods: Vec<&'static str> },
    /// The option would have no effect: the run does not use it given its other options.
    #[error("{} has no effect {because}", flag(key))]
    NoEffect { key: String, because: String },
    /// A value outside the option's range.
    #[error("{} must be {want}, got {value}", flag(key))]
    Range { key: String, want: &'static str, value: String },
    /// A value that does not read as the option's type.
    #[error("{}: {reason}", flag(key))]
    Value { key: String, reason: String },
    /// Two options that cannot hold together.
    #[error("{} {why}", flag(key))]
    Conflict { key: String, why: String },
    /// A run without a method.
    #[error("a run needs a method (`method`)")]
    NoMethod,
}

impl SpecError {
    /// The option the error is about (None for [`SpecError::NoMethod`]).
    pub fn key(&self) -> Option<&str> {
        match self {
            SpecError::Unknown { key }
            | SpecError::NotForMethod { key, .. }
            | SpecError::NoEffect { key, .. }
            | SpecError::Range { key, .. }
            | SpecError::Value { key, .. }
            | SpecError::Conflict { key, .. } => Some(key),
            SpecError::NoMethod => None,
        }
    }

    /// A value out of range.
    pub fn range(key: &str, want: &'static str, value: impl std::fmt::Display) -> Self {
        SpecError::Range { key: key.into(), want, value: value.to_string() }
    }

    /// An option without effect, `because` completing "has no effect ...".
    pub fn no_effect(key: &str, because: impl Into<String>) -> Self {
        SpecError::NoEffect { key: key.into(), because: because.into() }
    }

    /// Two options that contradict each other; `why` completes the flag's sentence.
    pub fn conflict(key: &str, why: impl Into<String>) -> Self {
        SpecError::Conflict { key: key.into(), why: why.into() }
    }
}
