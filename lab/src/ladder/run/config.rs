//! A ladder's configuration: instances, methods, runs, budgets and stopping rules (with the
//! tally they count against), read from TOML or JSON and checked by [`parse_config`].

use concur::backend::BackendChoice;
use concur::error::{Error, Result};
use concur::solve::SolveSpec;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::PathBuf;

/// A ladder configuration.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Runs (independent seeds) per instance and method.
    #[serde(default = "one")]
    pub runs: u64,
    /// Base seed; run `r` uses a seed derived from `(seed, r)`.
    #[serde(default)]
    pub seed: u64,
    /// The index of the first run (default 0): a campaign that pools with an earlier ladder
    /// of the same seed numbers its runs past the ladder's, so that no run repeats another's
    /// seed and every run keeps a distinct key in a merged report.
    #[serde(default)]
    pub first_run: u64,
    /// Folder that relative instance paths and globs start from (default: the puzzle folder).
    #[serde(default)]
    pub root: Option<PathBuf>,
    /// The instances every method runs on, in order (each glob's files sorted).
    pub instances: Vec<InstanceSpec>,
    /// The methods, each with a distinct label.
    pub methods: Vec<MethodSpec>,
    /// Time limits that grow with the board: an instance of C cells runs under the first
    /// entry (in order) with `max_cells >= C`, which replaces every method's own
    /// `time_limit`; past the last entry, the methods' own limits hold.
    #[serde(default)]
    pub budgets: Vec<Budget>,
    /// Stopping rules for campaigns: a (method, size) group stops starting runs once it has
    /// enough solutions or has spent its cap (the first rule that matches it applies).
    #[serde(default)]
    pub stops: Vec<Stop>,
    /// Result folders of earlier ladders whose runs count towards the stopping rules (their
    /// `*.jsonl`, matched by method label and board cells), relative to the working directory.
    /// `concur report` pools them when given both folders.
    #[serde(default)]
    pub pool: Vec<PathBuf>,
    /// The machine the CPU runs run on (e.g. "2-core AMD EPYC development VM"), recorded in
    /// each CPU record's `device`, so that `concur report` keeps its rates apart from other
    /// machines'. A GPU run records its adapter instead.
    #[serde(default)]
    pub machine: Option<String>,
}

/// A stopping rule of [`Config::stops`]: the runs of a method on boards of some cell counts
/// stop once their solutions reach `target_solutions`, their core-hours (wall seconds of
/// one-core runs) reach `cap_core_hours`, or their work (in the method's own unit: a map's
/// trial-iterations, a search's nodes) reaches `cap_work`, counted over the results on file
/// and in [`Config::pool`]. By default a rule pools every instance of a size; with
/// `per_instance = true` each instance is a group of its own (a campaign over instances of
/// one size but of different hardness). Runs already started finish, so a cap may be passed
/// by up to one run per worker.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// Method labels it applies to (all when empty).
    #[serde(default)]
    pub methods: Vec<String>,
    /// Board sizes in cells it applies to (all when empty).
    #[serde(default)]
    pub cells: Vec<usize>,
    /// Count each instance apart instead of every instance of a size together.
    #[serde(default)]
    pub per_instance: bool,
    /// Stop once the group has this many verified solutions.
    #[serde(default)]
    pub target_solutions: Option<u64>,
    /// Stop once the group's one-core runs have taken this many hours.
    #[serde(default)]
    pub cap_core_hours: Option<f64>,
    /// A cap on the work spent, in the method's work unit (a budget that does not depend on
    /// how busy the machine is).
    #[serde(default)]
    pub cap_work: Option<f64>,
}

impl Stop {
    pub(super) fn applies(&self, label: &str, cells: usize) -> bool {
        (self.methods.is_empty() || self.methods.iter().any(|m| m == label))
            && (self.cells.is_empty() || self.cells.contains(&cells))
    }

    /// Whether a group that has spent `spent` is done.
    pub fn reached(&self, spent: Spent) -> bool {
        self.target_solutions.is_some_and(|t| spent.solutions >= t)
            || self.cap_core_hours.is_some_and(|c| spent.core_hours >= c)
            || self.cap_work.is_some_and(|c| spent.work >= c)
    }

    /// The group a run of `label` on `instance` (of `cells` cells) counts in under this rule.
    pub(super) fn group(&self, label: &str, instance: &str, cells: usize) -> Group {
        let scope = if self.per_instance { Scope::Instance(instance.to_string()) } else { Scope::Cells(cells) };
        (label.to_string(), scope)
    }
}

/// What a stopping rule counts over: every instance of a size, or one instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every instance of this many cells.
    Cells(usize),
    /// The instance of this name.
    Instance(String),
}

/// A method label and the scope its runs are counted over.
pub type Group = (String, Scope);

/// What a group of runs has spent and found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    /// Verified solutions ([`Record::solution_count`](super::Record::solution_count)).
    pub solutions: u64,
    /// Wall seconds of one-core runs, in hours.
    pub core_hours: f64,
    /// Work in the method's unit.
    pub work: f64,
}

/// What each group has spent, both per (method label, board cells) and per (method label,
/// instance).
pub type Tally = std::collections::HashMap<Group, Spent>;

/// One step of [`Config::budgets`].
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// The largest board, in cells, the step applies to.
    pub max_cells: usize,
    /// Each run's time limit there, in seconds (in (0, 1e9]).
    pub time_limit: f64,
    /// Runs per instance and method at these sizes (default: [`Config::runs`]), for sizes
    /// where every run may take its whole budget.
    #[serde(default)]
    pub runs: Option<u64>,
}

impl Config {
    /// The method as it runs on a board of `cells` cells: with the budget's time limit.
    pub fn method_for(&self, m: &MethodSpec, cells: usize) -> MethodSpec {
        let mut m = m.clone();
        if let Some(b) = self.budgets.iter().find(|b| b.max_cells >= cells) {
            m.spec.run.time_limit = Some(b.time_limit);
        }
        m
    }

    /// Runs per instance and method on a board of `cells` cells: the budget's, else `runs`.
    pub fn runs_for(&self, cells: usize) -> u64 {
        self.budgets.iter().find(|b| b.max_cells >= cells).and_then(|b| b.runs).unwrap_or(self.runs)
    }
}

fn one() -> u64 {
    1
}

/// Where instances come from.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum InstanceSpec {
    /// A file or a glob pattern.
    Path {
        /// The file or pattern, relative to [`Config::root`] unless absolute.
        path: String,
    },
    /// A generated puzzle.
    Generate {
        /// What to generate.
        generate: GenSpec,
    },
}

/// A generated instance: a puzzle of Brendan Owen's kind with a planted solution
/// ([`concur::puzzle::generate::generate`]).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GenSpec {
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// The generator's seed (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Colours of the rim joins (default: Brendan Owen's count for the size).
    #[serde(default)]
    pub frame_colors: Option<usize>,
    /// Colours of the inner joins (default: Brendan Owen's count for the size).
    #[serde(default)]
    pub inner_colors: Option<usize>,
}

impl GenSpec {
    /// The instance's name in records: `generated:WxH:seedS`, then `:frameF` and `:innerI`
    /// for colour counts given (none given: Brendan Owen's, and the name of earlier ladders).
    pub fn name(&self) -> String {
        let mut name = format!("generated:{}x{}:seed{}", self.width, self.height, self.seed);
        if let Some(f) = self.frame_colors {
            name.push_str(&format!(":frame{f}"));
        }
        if let Some(i) = self.inner_colors {
            name.push_str(&format!(":inner{i}"));
        }
        name
    }
}

/// A method and its parameters; budgets bound every run. The parameters are those of
/// `concur solve` ([`SolveSpec`], with the same names and defaults, read by
/// [`SolveSpec::from_given`], so that an option the method does not have or would not use is
/// an error here as on the command line), less the ones the ladder sets itself (the seed, one
/// thread), and a map's batch is one trial unless `trials` is given.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>", into = "serde_json::Map<String, serde_json::Value>")]
pub struct MethodSpec {
    /// A name for tables and plots (default: the method name).
    pub label: Option<String>,
    /// Run this method only on instances of at most this many cells (the sizes it can solve).
    pub max_cells: Option<usize>,
    /// The run. Its `backend` is the CPU unless the entry says `backend = "gpu"` (optionally
    /// with `adapter = "..."`): a device run's cost is its wall seconds on that device.
    pub spec: SolveSpec,
    /// The parameters as the config gave them (a record's `params`).
    pub given: serde_json::Map<String, serde_json::Value>,
}

/// Keys of a method entry that the ladder sets itself.
const LADDER_OWNS: &[&str] = &["seed", "threads", "all_trials"];

impl TryFrom<serde_json::Map<String, serde_json::Value>> for MethodSpec {
    type Error = String;
    fn try_from(given: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        if !given.contains_key("method") {
            return Err("a method entry needs `method`".into());
        }
        let label = match given.get("label") {
            None => None,
            Some(serde_json::Value::String(l)) => Some(l.clone()),
            Some(v) => return Err(format!("label must be a string, got {v}")),
        };
        let mut params = given.clone();
        params.remove("label");
        let max_cells = match params.remove("max_cells") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| format!("max_cells must be a whole number, got {v}"))? as usize),
        };
        if let Some(k) = params.keys().find(|k| LADDER_OWNS.contains(&k.as_str())) {
            return Err(format!("`{k}` is set by the ladder for every run, not by a method"));
        }
        let label_text = label.clone().unwrap_or_else(|| params["method"].as_str().unwrap_or("?").to_string());
        let no_backend = !params.contains_key("backend");
        let mut spec = SolveSpec::from_given(&params).map_err(|e| format!("method {label_text:?}: {e}"))?;
        if no_backend && spec.is_map() {
            spec.run.backend = BackendChoice::Cpu;
        }
        if spec.run.backend == BackendChoice::Cpu {
            spec.supported_by(&concur::backend::CpuBackend).map_err(|e| format!("method {label_text:?}: {e}"))?;
        }
        Ok(MethodSpec { label, max_cells, spec, given: given.into_iter().filter(|(k, _)| k != "max_cells").collect() })
    }
}

impl From<MethodSpec> for serde_json::Map<String, serde_json::Value> {
    fn from(m: MethodSpec) -> Self {
        let mut o = m.given;
        if let Some(c) = m.max_cells {
            o.insert("max_cells".into(), c.into());
        }
        o
    }
}

impl MethodSpec {
    /// The label in records, tables and plots: the one given, else the method's name.
    pub fn label(&self) -> String {
        self.label.clone().unwrap_or_else(|| self.spec.name().name().to_string())
    }

    /// The parameters of one run: as given, with the time limit it runs under.
    pub fn params(&self) -> serde_json::Value {
        let mut o = self.given.clone();
        if let Some(t) = self.spec.run.time_limit {
            o.insert("time_limit".into(), t.into());
        }
        serde_json::Value::Object(o)
    }
}

/// The most runs per instance and method a config may ask for.
pub const MAX_RUNS: u64 = 1_000_000;

/// Reads a config, TOML or JSON by content.
pub fn parse_config(text: &str) -> Result<Config> {
    // The method entries first, each alone: a refused entry is one line that names the entry
    // and the option (the parser's excerpt of the file would only repeat it).
    let raw: Option<serde_json::Value> =
        if text.trim_start().starts_with('{') { serde_json::from_str(text).ok() } else { toml::from_str(text).ok() };
    if let Some(methods) = raw.as_ref().and_then(|v| v.get("methods")).and_then(|m| m.as_array()) {
        for entry in methods {
            if let Some(o) = entry.as_object() {
                MethodSpec::try_from(o.clone()).map_err(Error::config)?;
            }
        }
    }
    let cfg: Config = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| Error::config(format!("bad ladder JSON: {e}")))?
    } else {
        toml::from_str(text)
            .map_err(|e| Error::config(format!("bad ladder TOML: {}", e.to_string().replace('\n', " "))))?
    };
    if cfg.instances.is_empty() || cfg.methods.is_empty() || cfg.runs == 0 {
        return Err(Error::config("a ladder needs at least one instance, one method and one run"));
    }
    let seconds = |t: f64| t > 0.0 && t <= concur::limits::MAX_SECONDS;
    if cfg.budgets.iter().any(|b| !seconds(b.time_limit)) {
        return Err(Error::config("every budget needs a positive time_limit of at most 1e9 seconds"));
    }
    if let Some(m) = cfg.methods.iter().find(|m| m.spec.run.time_limit.is_some_and(|t| !seconds(t))) {
        return Err(Error::config(format!(
            "method {:?}: time_limit must be a positive number of seconds, at most 1e9",
            m.label()
        )));
    }
    if cfg.stops.iter().any(|s| {
        let bad_cap = |c: Option<f64>| c.is_some_and(|c| !(c.is_finite() && c > 0.0));
        s.target_solutions == Some(0) || bad_cap(s.cap_core_hours) || bad_cap(s.cap_work)
    }) {
        return Err(Error::config(
            "a stop needs target_solutions >= 1 and a positive, finite cap_core_hours and cap_work",
        ));
    }
    if cfg.budgets.iter().any(|b| b.runs == Some(0)) {
        return Err(Error::config("a budget's runs must be at least 1"));
    }
    // Every run is planned before the first starts: bound them, and their numbers.
    let most = cfg.budgets.iter().filter_map(|b| b.runs).chain([cfg.runs]).max().unwrap_or(cfg.runs);
    if most > MAX_RUNS {
        return Err(Error::config(format!("{most} runs per instance and method; at most {MAX_RUNS}")));
    }
    if cfg.first_run.checked_add(most).is_none() {
        return Err(Error::config(format!("first_run {} leaves no room for {most} runs", cfg.first_run)));
    }
    let mut labels = HashSet::new();
    for m in &cfg.methods {
        if !labels.insert(m.label()) {
            return Err(Error::config(format!(
                "two methods share the label {:?}; give them distinct labels",
                m.label()
            )));
        }
    }
    for s in &cfg.stops {
        if let Some(bad) = s.methods.iter().find(|m| !labels.contains(*m)) {
            return Err(Error::config(format!("a stop names {bad:?}, which no method is labelled")));
        }
    }
    Ok(cfg)
}
