//! `concur solve`'s flags, grouped under headings, and the one way they become a run. The run
//! flags are not written here: they are the rows of the options tables (the run's own,
//! [`RunOptions`], and each method's: [`concur::options::Table`]), each declared once with its
//! key, type, default, doc and heading, and turned into clap arguments by [`RunFlags`]. The
//! flags given on the command line (clap's value source tells them from defaults; none of
//! them has a clap default) are read as the same keys a ladder entry has, by
//! [`SolveSpec::from_given`], so that a flag the method or the backend does not use is refused
//! with one line that names it. Each flag's help ends with its default and the methods that
//! use it, read from the library ([`annotate`], for the help only), so that neither is
//! written twice.

use clap::Args;
use clap::parser::ValueSource;
use concur::error::SpecError;
use concur::method::MethodName;
use concur::options::{Heading, Row, Table};
use concur::solve::{RunOptions, SolveSpec, run_key_methods};
use serde_json::{Map, Value};
use std::path::PathBuf;

/// The headings of `concur solve --help`, in order.
pub const HEADINGS: [&str; 7] = {
    let mut t = [""; 7];
    let mut i = 0;
    while i < 7 {
        t[i] = Heading::ALL[i].title();
        i += 1;
    }
    t
};

/// `concur solve`'s flags: the puzzle, the method, the run flags of the options tables
/// ([`RunFlags`]) and the outputs the binary writes.
#[derive(Args, Debug, Default)]
pub struct SolveArgs {
    /// The puzzle: Brendan Owen's text or the JSON of eternity2.dev (detected from the
    /// content).
    pub puzzle: PathBuf,

    /// The method.
    #[arg(long, value_enum, help_heading = "Common")]
    pub method: Option<MethodName>,

    /// The run's and the method's options, from the options tables.
    #[command(flatten)]
    pub options: RunFlags,

    /// Write a fixed-point certificate (x, both projections, gap, board) of the solving
    /// trial into this folder, as trial-T.json.
    #[arg(long, value_name = "DIR", help_heading = "Output")]
    pub dump_state: Option<PathBuf>,
    /// With --dump-state: a certificate for every trial, solved or not.
    #[arg(long, requires = "dump_state", help_heading = "Output")]
    pub dump_all: bool,
    /// Write the solution (Brendan Owen's format) here.
    #[arg(short = 'o', long = "output", help_heading = "Output")]
    pub output: Option<PathBuf>,
    /// Print one JSON object instead of the board and text statistics.
    #[arg(long, help_heading = "Output")]
    pub json: bool,
}

impl SolveArgs {
    /// The flags given on the command line, as the keys of a ladder entry (with `method`).
    pub fn given(&self) -> Result<Map<String, Value>, SpecError> {
        if let Some(e) = &self.options.bad {
            return Err(e.clone());
        }
        let mut given = self.options.given.clone();
        if let Some(m) = self.method {
            given.insert("method".into(), Value::String(m.name().into()));
        }
        Ok(given)
    }

    /// The run the flags ask for, checked as a ladder entry is ([`SolveSpec::from_given`]).
    pub fn spec(&self) -> Result<SolveSpec, SpecError> {
        SolveSpec::from_given(&self.given()?)
    }
}

/// The run flags of `concur solve`: one clap argument per row of the options tables (the
/// run's, then each method's, a key shared by two methods once), under its heading, its help
/// ending in its default and the methods that use it. What it holds after parsing is the
/// flags given on the command line as a ladder entry's keys.
#[derive(Clone, Debug, Default)]
pub struct RunFlags {
    /// The flags given, as keys and JSON values.
    pub given: Map<String, Value>,
    /// A value given that JSON cannot hold (NaN, an infinity), refused when the run is made.
    bad: Option<SpecError>,
}

/// Every run flag's row, each key once (the first table that declares it), in the help's
/// order: by heading, then as the tables list them (the run's first, then the methods').
pub fn flag_rows() -> Vec<Row> {
    let mut rows: Vec<Row> = RunOptions::rows();
    for m in MethodName::ALL {
        for r in m.rows() {
            if !rows.iter().any(|x| x.key == r.key) {
                rows.push(r);
            }
        }
    }
    rows.sort_by_key(|r| r.heading);
    rows
}

impl clap::FromArgMatches for RunFlags {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut flags = RunFlags::default();
        for row in flag_rows() {
            if !matches!(m.value_source(row.key), Some(ValueSource::CommandLine)) {
                continue;
            }
            let Some(v) = (row.read)(m, row.key) else { continue };
            // A given value serialises to null only when it is a number JSON cannot hold (NaN,
            // an infinity): refused, as a ladder entry cannot even say it.
            if has_null(&v) && flags.bad.is_none() {
                let raw = m.get_raw(row.key).and_then(|mut v| v.next()).map(|v| v.to_string_lossy().into_owned());
                flags.bad = Some(SpecError::range(row.key, "a finite number", raw.unwrap_or_default()));
            }
            flags.given.insert(row.key.to_string(), v);
        }
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = RunFlags::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for RunFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        flag_rows().into_iter().fold(cmd, |cmd, row| {
            let mut a = clap::Arg::new(row.key).long(row.flag()).help_heading(row.heading.title());
            a = a.value_name(row.value_name.map_or_else(|| row.key.to_uppercase(), str::to_string));
            cmd.arg((row.arg)(a).help(row.help()))
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        RunFlags::augment_args(cmd)
    }
}

/// Whether a value holds a null inside (a non-finite number in a list or an object).
fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(o) => o.values().any(has_null),
        _ => false,
    }
}

/// The flags that are a run's keys (the method's options and the run's own), with the
/// methods that use each.
pub fn key_methods() -> Vec<(String, Vec<MethodName>)> {
    let mut keys: Vec<(String, Vec<MethodName>)> = Vec::new();
    for row in RunOptions::rows() {
        keys.push((row.key.to_string(), run_key_methods(row.key).unwrap_or_default()));
    }
    for m in MethodName::ALL {
        for k in m.keys() {
            match keys.iter_mut().find(|(key, _)| *key == k) {
                Some((_, ms)) => ms.push(m),
                None => keys.push((k, vec![m])),
            }
        }
    }
    keys
}

/// The defaults the help shows, serialised once: the run's options and each method's.
pub struct Defaults {
    run: Value,
    methods: Vec<(MethodName, Value)>,
}

impl Defaults {
    /// Every default, from the library's tables.
    pub fn new() -> Defaults {
        let methods =
            MethodName::ALL.iter().map(|&m| (m, serde_json::to_value(m.with_defaults()).unwrap_or_default())).collect();
        Defaults { run: serde_json::to_value(RunOptions::default()).unwrap_or_default(), methods }
    }

    /// The default of a run's key as the help shows it, read from the options of the methods
    /// that have it (each method's where they differ) or the run's: None where there is
    /// nothing to show.
    pub fn text(&self, key: &str, methods: &[MethodName]) -> Option<String> {
        let show = |value: Option<&Value>| match value? {
            Value::Null | Value::Bool(false) | Value::Object(_) => None,
            Value::Array(a) if a.is_empty() => None,
            Value::Array(a) => Some(a.iter().map(plain).collect::<Vec<_>>().join(",")),
            v => Some(plain(v)),
        };
        if run_key_methods(key).is_some() {
            return show(self.run.get(key));
        }
        let mut each: Vec<(MethodName, String)> = Vec::new();
        for (m, v) in self.methods.iter().filter(|(m, _)| methods.contains(m)) {
            if let Some(d) = show(v.get(key)) {
                each.push((*m, d));
            }
        }
        let first = each.first()?.1.clone();
        if each.iter().all(|(_, d)| *d == first) {
            return Some(first);
        }
        Some(each.iter().map(|(m, d)| format!("{d} ({m})")).collect::<Vec<_>>().join(", "))
    }
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults::new()
    }
}

/// A value as a user writes it: a string bare, an f32 option's number in its shortest form
/// (0.7, not 0.699999988).
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            if f64::from(f as f32) == f { format!("{}", f as f32) } else { format!("{f}") }
        }
        v => v.to_string(),
    }
}

/// `concur solve`'s command with each run flag's help ending in its default and the methods
/// that use it, from the library's tables. Built only to print the help ([`crate::command`]):
/// parsing uses the plain command, which costs a run nothing.
pub fn annotate(cmd: clap::Command) -> clap::Command {
    let (keys, defaults) = (key_methods(), Defaults::new());
    cmd.mut_args(|a| {
        let id = a.get_id().as_str().to_string();
        let Some((_, methods)) = keys.iter().find(|(k, _)| *k == id) else { return a };
        let base = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        let mut extra = Vec::new();
        if let Some(d) = defaults.text(&id, methods) {
            extra.push(format!("default: {d}"));
        }
        let names: Vec<&str> = methods.iter().map(|m| m.name()).collect();
        if names.len() < MethodName::ALL.len() {
            extra.push(format!("methods: {}", names.join(", ")));
        } else {
            extra.push("all methods".into());
        }
        a.help(format!("{base} [{}]", extra.join("; ")))
    })
}

/// `concur solve`'s run flags as a Markdown table under the help's headings: each flag, its
/// default and the methods that use it, as the help shows them (docs/cli.md holds a copy that
/// a test keeps current).
pub fn options_markdown() -> String {
    let (keys, defaults) = (key_methods(), Defaults::new());
    let mut out = String::from("| heading | flag | default | methods |\n|---|---|---|---|\n");
    for row in flag_rows() {
        let methods = keys.iter().find(|(k, _)| k == row.key).map(|(_, m)| m.clone()).unwrap_or_default();
        let default = defaults.text(row.key, &methods).unwrap_or_else(|| "-".into());
        let names: Vec<&str> = methods.iter().map(|m| m.name()).collect();
        let used_by = if names.len() == MethodName::ALL.len() { "all".to_string() } else { names.join(", ") };
        out.push_str(&format!("| {} | `--{}` | {default} | {used_by} |\n", row.heading.title(), row.flag()));
    }
    out
}
