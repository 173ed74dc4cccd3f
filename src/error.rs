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
