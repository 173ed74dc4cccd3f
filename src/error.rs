//! Library error type. Everything a caller cannot anticipate: bad input files, impossible
//! parameters. The binary maps every one of these to exit code 2.
//!
//! Each kind of failure is its own variant with fields, so that a caller (a binding that
//! raises one exception class per kind, a program that retries what it can) tells them apart
//! without reading the text; the text ([`std::fmt::Display`]) is the one line the binary
//! prints after `concur: error: `.

use std::path::PathBuf;

/// Errors from reading, validating or generating puzzles, solutions, certificates, ladder
/// configs and results.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A text file that does not follow its format, at a known line.
    #[error("line {line}: {msg}")]
    Parse {
        /// The line the reader stopped at, 1-based.
        line: usize,
        /// What was wrong with it.
        msg: String,
    },
    /// Input that is not what the reader was asked for: empty, binary or not UTF-8, or the
    /// other kind of file (a solution given where a puzzle is wanted, or the reverse).
    #[error("{reason}")]
    Format {
        /// What the input is instead.
        reason: String,
    },
    /// A well-formed puzzle that is inconsistent: its size out of range, the wrong number
    /// of pieces, colours out of range, pieces that fit no cell or no border, bad hints.
    #[error("{reason}")]
    Puzzle {
        /// Which rule the puzzle breaks.
        reason: String,
    },
    /// A solution or board that does not fit its puzzle: the wrong number of placements, a
    /// viewer link of another board or with edges no unused piece shows, a board that does
    /// not use every piece once where the format needs it to.
    #[error("{reason}")]
    Solution {
        /// Which rule the solution breaks.
        reason: String,
    },
    /// A fixed-point certificate that cannot be checked against its puzzle: another format
    /// or board, values of the wrong size or not finite, a board entry out of range.
    #[error("{reason}")]
    Certificate {
        /// What is wrong with the certificate.
        reason: String,
    },
    /// Generator options that cannot make a puzzle: a board size out of range, or colour
    /// counts of zero or past the colours a piece can show.
    #[error("{reason}")]
    Generate {
        /// The board width asked for.
        width: usize,
        /// The board height asked for.
        height: usize,
        /// Which option is out of range.
        reason: String,
    },
    /// Generator options that are in range but that no draw satisfied: every draw of
    /// `attempts` had a duplicate or a rotationally symmetric piece (too few colours).
    #[error(
        "no {width}x{height} board with {frame_colors} frame and {inner_colors} inner colours free of duplicate and symmetric pieces after {attempts} draws; use more colours"
    )]
    Unsatisfiable {
        /// The board width asked for.
        width: usize,
        /// The board height asked for.
        height: usize,
        /// Colours of the joins along the rim (grey not counted).
        frame_colors: usize,
        /// Colours of the inner joins.
        inner_colors: usize,
        /// Draws made before giving up.
        attempts: usize,
    },
    /// A ladder config that does not parse or check (a method entry, a budget, a stop, the
    /// instances it names), or a request that does not fit its config (a method label it
    /// does not have).
    #[error("{reason}")]
    Config {
        /// What the config gets wrong, naming the entry.
        reason: String,
    },
    /// A file or folder that cannot be read, written, created or opened.
    #[error("cannot {action} {}: {reason}", path.display())]
    Io {
        /// What was being done: `read`, `write`, `create`, `open`, `repair`, `append to`.
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The operating system's reason, and what the failure leaves behind where that
        /// matters.
        reason: String,
    },
    /// An input path that does not exist.
    #[error("{} does not exist", path.display())]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// A ladder instance file that is not a puzzle.
    #[error("{}: {error}", path.display())]
    Instance {
        /// The instance's file.
        path: PathBuf,
        /// Why it could not be read as a puzzle (a [`Error::Parse`], [`Error::Format`] or
        /// [`Error::Puzzle`]).
        error: Box<Error>,
    },
    /// A ladder run that could not be made: its backend could not be had, or the run
    /// refused to start.
    #[error("{instance}: {reason}")]
    Run {
        /// The instance's name, as its records give it.
        instance: String,
        /// Why the run failed.
        reason: String,
    },
    /// A line of a ladder results file (JSON lines) that is not a record.
    #[error("line {line}: {}: bad result line: {reason}", path.display())]
    Record {
        /// The results file.
        path: PathBuf,
        /// The line, 1-based.
        line: usize,
        /// What the JSON reader found wrong with it.
        reason: String,
    },
    /// Results that cannot be used as asked: none at all, the same run on file twice with
    /// different outcomes, or a results file that already holds runs when a ladder would
    /// start afresh.
    #[error("{reason}")]
    Results {
        /// What is wrong with them.
        reason: String,
    },
    /// An optional input of the report's hardness section (`hardness-inputs/`) that cannot
    /// be used.
    #[error("{reason}")]
    Hardness {
        /// The input file.
        path: String,
        /// The whole reason, naming the file (and the line, where it is one line).
        reason: String,
    },
}

impl Error {
    pub(crate) fn parse(line: usize, msg: impl Into<String>) -> Self {
        Error::Parse { line, msg: msg.into() }
    }
    pub(crate) fn format(reason: impl Into<String>) -> Self {
        Error::Format { reason: reason.into() }
    }
    pub(crate) fn puzzle(reason: impl Into<String>) -> Self {
        Error::Puzzle { reason: reason.into() }
    }
    pub(crate) fn solution(reason: impl Into<String>) -> Self {
        Error::Solution { reason: reason.into() }
    }
    pub(crate) fn certificate(reason: impl Into<String>) -> Self {
        Error::Certificate { reason: reason.into() }
    }
    /// A ladder config or request that cannot run ([`Error::Config`]).
    pub fn config(reason: impl Into<String>) -> Self {
        Error::Config { reason: reason.into() }
    }
    /// Results on file that cannot be read back ([`Error::Results`]).
    pub fn results(reason: impl Into<String>) -> Self {
        Error::Results { reason: reason.into() }
    }
    /// A file that could not be read or written ([`Error::Io`]).
    pub fn io(action: &'static str, path: impl Into<PathBuf>, reason: impl std::fmt::Display) -> Self {
        Error::Io { action, path: path.into(), reason: reason.to_string() }
    }
}

/// The library's result type: [`Error`] unless a function says otherwise.
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
    Unknown {
        /// The option as given (a ladder key: `join_weights`).
        key: String,
    },
    /// The option belongs to other methods.
    #[error("{} is an option of --method {}, not of {method}", flag(key), methods.join(", "))]
    NotForMethod {
        /// The option as given.
        key: String,
        /// The method of the run.
        method: &'static str,
        /// The methods that have the option.
        methods: Vec<&'static str>,
    },
    /// The option would have no effect: the run does not use it given its other options.
    #[error("{} has no effect {because}", flag(key))]
    NoEffect {
        /// The option as given.
        key: String,
        /// Why, completing "has no effect ..." (`without --keep-going`).
        because: String,
    },
    /// A value outside the option's range.
    #[error("{} must be {want}, got {value}", flag(key))]
    Range {
        /// The option as given.
        key: String,
        /// The range, completing "must be ..." (`in (0, 2]`).
        want: &'static str,
        /// The value given, as text.
        value: String,
    },
    /// A value that does not read as the option's type.
    #[error("{}: {reason}", flag(key))]
    Value {
        /// The option as given.
        key: String,
        /// Why the value does not read (the parser's words).
        reason: String,
    },
    /// Two options that cannot hold together.
    #[error("{} {why}", flag(key))]
    Conflict {
        /// The option as given.
        key: String,
        /// What it conflicts with, completing the flag's sentence.
        why: String,
    },
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
