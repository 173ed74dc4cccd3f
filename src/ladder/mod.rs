//! The benchmark ladder: many independent runs of several methods over many instances,
//! one JSON line per finished run, sharded deterministically and resumable.
//!
//! A config (TOML or JSON, detected from the content) names instances (files or globs,
//! relative to the puzzle folder, or generator specs), methods with parameters, runs per
//! (instance, method) and budgets. Runs are enumerated in a fixed order; shard `K/N` takes
//! every run whose index is `K - 1` modulo `N`, so N machines (Slurm array jobs, Kubernetes
//! indexed jobs) write disjoint files whose union is the unsharded run. Every finished run is
//! appended and flushed as one line, so an interrupted ladder loses nothing it finished, and
//! `--resume` skips every run already on file.

pub mod devices;
pub mod fit;
pub mod hardness;
pub mod report;
pub mod stats;
pub mod svg;

use crate::backend::BackendChoice;
use crate::puzzle::generate::{GenerateOptions, generate};
use crate::puzzle::{Puzzle, format};
use crate::solve::SolveSpec;
use crate::verify;
use crate::{Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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
    pub instances: Vec<InstanceSpec>,
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
    #[serde(default)]
    pub target_solutions: Option<u64>,
    #[serde(default)]
    pub cap_core_hours: Option<f64>,
    /// A cap on the work spent, in the method's work unit (a budget that does not depend on
    /// how busy the machine is).
    #[serde(default)]
    pub cap_work: Option<f64>,
}

impl Stop {
    fn applies(&self, label: &str, cells: usize) -> bool {
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
    fn group(&self, label: &str, instance: &str, cells: usize) -> Group {
        let scope = if self.per_instance { Scope::Instance(instance.to_string()) } else { Scope::Cells(cells) };
        (label.to_string(), scope)
    }
}

/// What a stopping rule counts over: every instance of a size, or one instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Cells(usize),
    Instance(String),
}

/// A method label and the scope its runs are counted over.
pub type Group = (String, Scope);

/// What a group of runs has spent and found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    /// Verified solutions ([`Record::solution_count`]).
    pub solutions: u64,
    /// Wall seconds of one-core runs, in hours.
    pub core_hours: f64,
    /// Work in the method's unit.
    pub work: f64,
}

/// What each group has spent, both per (method label, board cells) and per (method label,
/// instance).
pub type Tally = std::collections::HashMap<Group, Spent>;

/// Adds records to a tally.
pub fn tally(records: &[Record], into: &mut Tally) {
    for r in records {
        for scope in [Scope::Cells(r.width * r.height), Scope::Instance(r.instance.clone())] {
            let e = into.entry((r.label.clone(), scope)).or_default();
            e.solutions += r.solution_count();
            e.core_hours += r.wall_s / 3600.0;
            e.work += r.work as f64;
        }
    }
}

/// The records of every `*.jsonl` in a folder (none when it does not exist).
pub fn read_folder(dir: &Path) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(out) };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        out.extend(read_records(&f)?);
    }
    Ok(out)
}

/// One step of [`Config::budgets`].
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub max_cells: usize,
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
            m.spec.time_limit = Some(b.time_limit);
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
    Path { path: String },
    /// A generated puzzle.
    Generate { generate: GenSpec },
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GenSpec {
    pub width: usize,
    pub height: usize,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub frame_colors: Option<usize>,
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
/// `concur solve` ([`SolveSpec`], with the same names and defaults), less the ones the ladder
/// sets itself (the seed, one thread, one trial).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "serde_json::Map<String, serde_json::Value>", into = "serde_json::Map<String, serde_json::Value>")]
pub struct MethodSpec {
    /// A name for tables and plots (default: the method name).
    pub label: Option<String>,
    /// Run this method only on instances of at most this many cells (the sizes it can solve).
    pub max_cells: Option<usize>,
    /// The run.
    pub spec: SolveSpec,
    /// Where a map runs (`backend = "gpu"`, optionally `adapter = "..."`): the CPU (one
    /// thread, the default) or the GPU, whose run's cost is its wall seconds on that device.
    pub backend: BackendChoice,
    pub adapter: Option<String>,
    /// The parameters as the config gave them (a record's `params`).
    pub given: serde_json::Map<String, serde_json::Value>,
}

/// Keys of a method entry that the ladder sets itself. (`trials` may be given: a map's
/// batch, for device runs and rate mode; without it a run has one trial.)
const LADDER_OWNS: &[&str] = &["seed", "threads", "all_trials"];

impl TryFrom<serde_json::Map<String, serde_json::Value>> for MethodSpec {
    type Error = String;
    fn try_from(mut given: serde_json::Map<String, serde_json::Value>) -> std::result::Result<Self, String> {
        if !given.contains_key("method") {
            return Err("a method entry needs `method`".into());
        }
        let label = match given.get("label") {
            None => None,
            Some(serde_json::Value::String(l)) => Some(l.clone()),
            Some(v) => return Err(format!("label must be a string, got {v}")),
        };
        let max_cells = match given.remove("max_cells") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| format!("max_cells must be a whole number, got {v}"))? as usize),
        };
        let backend = match given.get("backend") {
            None => BackendChoice::Cpu,
            Some(serde_json::Value::String(b)) if b == "cpu" => BackendChoice::Cpu,
            Some(serde_json::Value::String(b)) if b == "gpu" => BackendChoice::Gpu,
            Some(v) => return Err(format!("backend must be \"cpu\" or \"gpu\", got {v}")),
        };
        let adapter = match given.get("adapter") {
            None => None,
            Some(serde_json::Value::String(a)) => Some(a.clone()),
            Some(v) => return Err(format!("adapter must be a string, got {v}")),
        };
        let known = serde_json::to_value(SolveSpec::default()).map_err(|e| e.to_string())?;
        let mut params = given.clone();
        params.remove("label");
        params.remove("backend");
        params.remove("adapter");
        for k in params.keys() {
            if LADDER_OWNS.contains(&k.as_str()) {
                return Err(format!("`{k}` is set by the ladder for every run, not by a method"));
            }
            if !known.as_object().is_some_and(|o| o.contains_key(k)) {
                return Err(format!("unknown method parameter `{k}`"));
            }
        }
        let spec: SolveSpec = serde_json::from_value(serde_json::Value::Object(params)).map_err(|e| e.to_string())?;
        let label_text = label.clone().unwrap_or_else(|| spec.method.name().to_string());
        spec.check().map_err(|e| format!("method {label_text:?}: {e}"))?;
        if backend == BackendChoice::Gpu && !spec.is_map() {
            return Err(format!("method {label_text:?}: backend = \"gpu\" runs the maps (rrr, dm, dc) only"));
        }
        if spec.f1.assign.on_device() && backend != BackendChoice::Gpu {
            return Err(format!("method {label_text:?}: assign = {:?} needs backend = \"gpu\"", spec.f1.assign));
        }
        Ok(MethodSpec { label, max_cells, spec, backend, adapter, given })
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
    pub fn label(&self) -> String {
        self.label.clone().unwrap_or_else(|| method_name(self.spec.method))
    }

    /// The parameters of one run: as given, with the time limit it runs under.
    fn params(&self) -> serde_json::Value {
        let mut o = self.given.clone();
        if let Some(t) = self.spec.time_limit {
            o.insert("time_limit".into(), t.into());
        }
        serde_json::Value::Object(o)
    }
}

pub fn method_name(m: crate::report::Method) -> String {
    m.name().to_string()
}

/// One finished run: one JSON line.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Record {
    pub instance: String,
    pub width: usize,
    pub height: usize,
    /// Colours, grey excluded.
    pub colors: usize,
    pub method: String,
    pub label: String,
    pub params: serde_json::Value,
    pub run: u64,
    pub seed: u64,
    pub backend: String,
    pub solved: bool,
    /// `map`, `map+ac`, or the method name for the controls; null when unsolved.
    pub mechanism: Option<String>,
    /// Iterations (maps), nodes (backtrack), moves or iterations (local search).
    pub work: u64,
    pub work_unit: String,
    pub wall_s: f64,
    pub best_score: usize,
    pub max_score: usize,
    pub version: String,
    /// `(seconds, best score)` at the start and at each new best score (the maps and the
    /// local searches; empty for the tree searches): the score reached against time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<(f64, usize)>,
    /// Rate mode (`keep_going`): the verified solutions of the run, and how many are
    /// distinct up to turning the board; absent for a run that stops at its first (then
    /// `solved` counts 0 or 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solutions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct_solutions: Option<u64>,
    /// The map's trials in the batch, when more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<u64>,
    /// The machine whose wall seconds the run spent: the GPU adapter of a device run, the
    /// config's `machine` for a CPU run; absent in older records (then "cpu").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
}

impl Record {
    /// Verified solutions in the run: `solutions` in rate mode, else 1 when solved.
    pub fn solution_count(&self) -> u64 {
        self.solutions.unwrap_or(u64::from(self.solved))
    }

    /// Whether the run's wall seconds are a GPU device's (else one CPU core's).
    pub fn on_device(&self) -> bool {
        self.backend.starts_with("gpu")
    }

    /// The machine its cost was spent on: `device`, else the backend's kind.
    pub fn machine(&self) -> String {
        self.device.clone().unwrap_or_else(|| self.backend.clone())
    }

    /// The identity of a run, for resuming and for checking shards.
    pub fn key(&self) -> (String, String, u64) {
        (self.instance.clone(), self.label.clone(), self.run)
    }

    /// The records of each (method label, cells, width): a cell of the report's tables.
    pub fn by_method_and_size(records: &[Record]) -> std::collections::BTreeMap<(String, usize, usize), Vec<&Record>> {
        let mut groups: std::collections::BTreeMap<(String, usize, usize), Vec<&Record>> =
            std::collections::BTreeMap::new();
        for r in records {
            groups.entry((r.label.clone(), r.width * r.height, r.width)).or_default().push(r);
        }
        groups
    }
}

/// Records grouped by (method label, cells, width).
pub type BySize<'r> = std::collections::BTreeMap<(String, usize, usize), Vec<&'r Record>>;

/// The line that tells a finished run: instance, label, run, whether solved, its work and
/// its seconds.
impl std::fmt::Display for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} run {}: {} {} {} in {:.2} s",
            self.instance,
            self.label,
            self.run,
            if self.solved { "solved" } else { "unsolved" },
            self.work,
            self.work_unit,
            self.wall_s
        )
    }
}

/// A shard `K/N` (1-based K).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: u64,
    pub n: u64,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (k, n) = s.split_once('/').ok_or_else(|| format!("expected K/N, got {s:?}"))?;
        let k: u64 = k.trim().parse().map_err(|_| format!("bad shard index in {s:?}"))?;
        let n: u64 = n.trim().parse().map_err(|_| format!("bad shard count in {s:?}"))?;
        if n == 0 || k == 0 || k > n {
            return Err(format!("shard {s:?}: need 1 <= K <= N"));
        }
        Ok(Shard { k, n })
    }
}

/// The most runs per instance and method a config may ask for.
pub const MAX_RUNS: u64 = 1_000_000;

/// Reads a config, TOML or JSON by content.
pub fn parse_config(text: &str) -> Result<Config> {
    let cfg: Config = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| Error::invalid(format!("bad ladder JSON: {e}")))?
    } else {
        toml::from_str(text)
            .map_err(|e| Error::invalid(format!("bad ladder TOML: {}", e.to_string().replace('\n', " "))))?
    };
    if cfg.instances.is_empty() || cfg.methods.is_empty() || cfg.runs == 0 {
        return Err(Error::invalid("a ladder needs at least one instance, one method and one run"));
    }
    let seconds = |t: f64| t > 0.0 && t <= crate::limits::MAX_SECONDS;
    if cfg.budgets.iter().any(|b| !seconds(b.time_limit)) {
        return Err(Error::invalid("every budget needs a positive time_limit of at most 1e9 seconds"));
    }
    if let Some(m) = cfg.methods.iter().find(|m| m.spec.time_limit.is_some_and(|t| !seconds(t))) {
        return Err(Error::invalid(format!(
            "method {:?}: time_limit must be a positive number of seconds, at most 1e9",
            m.label()
        )));
    }
    if cfg.stops.iter().any(|s| {
        let bad_cap = |c: Option<f64>| c.is_some_and(|c| !(c.is_finite() && c > 0.0));
        s.target_solutions == Some(0) || bad_cap(s.cap_core_hours) || bad_cap(s.cap_work)
    }) {
        return Err(Error::invalid(
            "a stop needs target_solutions >= 1 and a positive, finite cap_core_hours and cap_work",
        ));
    }
    if cfg.budgets.iter().any(|b| b.runs == Some(0)) {
        return Err(Error::invalid("a budget's runs must be at least 1"));
    }
    // Every run is planned before the first starts: bound them, and their numbers.
    let most = cfg.budgets.iter().filter_map(|b| b.runs).chain([cfg.runs]).max().unwrap_or(cfg.runs);
    if most > MAX_RUNS {
        return Err(Error::invalid(format!("{most} runs per instance and method; at most {MAX_RUNS}")));
    }
    if cfg.first_run.checked_add(most).is_none() {
        return Err(Error::invalid(format!("first_run {} leaves no room for {most} runs", cfg.first_run)));
    }
    let mut labels = HashSet::new();
    for m in &cfg.methods {
        if !labels.insert(m.label()) {
            return Err(Error::invalid(format!(
                "two methods share the label {:?}; give them distinct labels",
                m.label()
            )));
        }
    }
    for s in &cfg.stops {
        if let Some(bad) = s.methods.iter().find(|m| !labels.contains(*m)) {
            return Err(Error::invalid(format!("a stop names {bad:?}, which no method is labelled")));
        }
    }
    Ok(cfg)
}

/// An instance ready to run.
pub struct Instance {
    pub name: String,
    pub puzzle: Puzzle,
}

/// Expands the instance specs (globs sorted, so the order is stable).
pub fn load_instances(cfg: &Config, puzzle_dir: &Path) -> Result<Vec<Instance>> {
    let root = cfg.root.clone().unwrap_or_else(|| puzzle_dir.to_path_buf());
    let mut out = Vec::new();
    for spec in &cfg.instances {
        match spec {
            InstanceSpec::Path { path } => {
                let full = if Path::new(path).is_absolute() { PathBuf::from(path) } else { root.join(path) };
                let pattern = full.to_string_lossy().to_string();
                let mut paths: Vec<PathBuf> = glob::glob(&pattern)
                    .map_err(|e| Error::invalid(format!("bad glob {pattern:?}: {e}")))?
                    .filter_map(|p| p.ok())
                    .collect();
                paths.sort();
                if paths.is_empty() {
                    return Err(Error::invalid(format!("no instance matches {pattern:?}")));
                }
                for p in paths {
                    let bytes =
                        std::fs::read(&p).map_err(|e| Error::invalid(format!("cannot read {}: {e}", p.display())))?;
                    let puzzle =
                        format::read_puzzle(&bytes).map_err(|e| Error::invalid(format!("{}: {e}", p.display())))?;
                    let name = p.strip_prefix(&root).unwrap_or(&p).to_string_lossy().to_string();
                    out.push(Instance { name, puzzle });
                }
            }
            InstanceSpec::Generate { generate: g } => {
                let opts = GenerateOptions {
                    width: g.width,
                    height: g.height,
                    frame_colors: g.frame_colors,
                    inner_colors: g.inner_colors,
                    seed: g.seed,
                };
                let (puzzle, _) = generate(&opts)?;
                out.push(Instance { name: g.name(), puzzle });
            }
        }
    }
    Ok(out)
}

/// One planned run.
#[derive(Clone, Debug)]
pub struct Job {
    pub instance: usize,
    pub method: usize,
    pub run: u64,
}

/// Every run of the ladder in its fixed order (instances of `cells[i]` cells), then the
/// shard's share. A method with `max_cells` skips the larger instances; a budget with `runs`
/// sets the runs of its sizes.
pub fn plan(cfg: &Config, cells: &[usize], shard: Option<Shard>) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (i, &c) in cells.iter().enumerate() {
        for (m, spec) in cfg.methods.iter().enumerate() {
            if spec.max_cells.is_some_and(|mc| c > mc) {
                continue;
            }
            for run in cfg.first_run..cfg.first_run + cfg.runs_for(c) {
                jobs.push(Job { instance: i, method: m, run });
            }
        }
    }
    match shard {
        None => jobs,
        Some(s) => jobs.into_iter().enumerate().filter(|(i, _)| *i as u64 % s.n == s.k - 1).map(|(_, j)| j).collect(),
    }
}

/// Runs one job (single-threaded) through [`crate::solve::solve`] on the CPU backend and
/// returns its record. Every claimed solution has passed the exact verifier.
pub fn run_job(inst: &Instance, spec: &MethodSpec, run: u64, base_seed: u64) -> Result<Record> {
    run_job_on(inst, spec, run, base_seed, None)
}

/// [`run_job`], with the machine a CPU run records as its `device` (a GPU run records its
/// adapter). A method with `backend = "gpu"` runs on the GPU backend (an error without a
/// usable adapter, or for a spec the GPU backend refuses); its `trials` (default 1) make
/// the batch.
pub fn run_job_on(
    inst: &Instance,
    spec: &MethodSpec,
    run: u64,
    base_seed: u64,
    machine: Option<&str>,
) -> Result<Record> {
    let p = &inst.puzzle;
    let seed = crate::rng::trial_seed(base_seed, run);
    let mut one = spec.spec.clone();
    one.seed = seed;
    one.threads = Some(1);
    if !spec.given.contains_key("trials") {
        one.maps.trials = 1;
    }
    let fail = |e: &dyn std::fmt::Display| Error::invalid(format!("{}: {e}", inst.name));
    let selected = crate::solve::pick_backend(&one, spec.backend, spec.adapter.as_deref()).map_err(|e| fail(&e))?;
    let backend = selected.backend;
    let device = if backend.is_gpu() { Some(backend.name()) } else { machine.map(String::from) };
    let s = crate::solve::solve(p, &one, backend.as_ref(), &mut |_| {}).map_err(|e| fail(&e))?;
    let distinct = s.report.details.get("distinct_solutions").and_then(|v| v.as_u64());
    // The best score, recomputed from the board by the exact verifier.
    let best = s.report.board.as_ref().map_or(0, |b| verify::check(p, b).score);
    Ok(Record {
        instance: inst.name.clone(),
        width: p.width(),
        height: p.height(),
        colors: p.num_colors() - 1,
        method: method_name(spec.spec.method),
        label: spec.label(),
        params: spec.params(),
        run,
        seed,
        backend: backend.label(),
        solved: s.report.solved,
        mechanism: s.mechanism.filter(|_| s.report.solved),
        work: s.work,
        work_unit: s.work_unit.into(),
        wall_s: s.report.wall_s,
        best_score: best,
        max_score: p.max_score(),
        version: env!("CARGO_PKG_VERSION").into(),
        trace: s.trace,
        solutions: s.solutions,
        distinct_solutions: distinct,
        trials: (one.is_map() && one.maps.trials > 1).then_some(one.maps.trials as u64),
        device,
    })
}

/// Reads every record of a JSONL file; a torn last line (from a crash) is ignored.
pub fn read_records(path: &Path) -> Result<Vec<Record>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::invalid(format!("cannot read {}: {e}", path.display()))),
    };
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => return Err(Error::parse(i + 1, format!("{}: bad result line: {e}", path.display()))),
        }
    }
    Ok(out)
}

/// The results file of a shard.
pub fn results_path(out: &Path, shard: Option<Shard>) -> PathBuf {
    match shard {
        None => out.join("results.jsonl"),
        Some(s) => out.join(format!("results-{}-of-{}.jsonl", s.k, s.n)),
    }
}

/// Keys of every run on file in any `*.jsonl` of `out` (the unsharded file and every shard's).
fn runs_on_file(out: &Path) -> Result<HashSet<(String, String, u64)>> {
    let mut done = HashSet::new();
    let Ok(entries) = std::fs::read_dir(out) else { return Ok(done) };
    for e in entries.filter_map(|e| e.ok()) {
        let f = e.path();
        if f.extension().is_some_and(|x| x == "jsonl") {
            done.extend(read_records(&f)?.iter().map(Record::key));
        }
    }
    Ok(done)
}

/// A part of a ladder: the runs a call does, out of its shard's share. A later call with a
/// wider part (or none) and `resume` runs the rest, so a ladder can be run cheap runs first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Part {
    /// Leave out the instances of more cells.
    pub max_cells: Option<usize>,
    /// Run only the methods of these labels (all when empty); a label that no method has is
    /// an error.
    pub methods: Vec<String>,
    /// Run only the first this many runs of each method and instance (a shallow pass that a
    /// later call deepens).
    pub runs: Option<u64>,
    /// Start no run after this instant, and cut each run's time limit to end by it (the run
    /// records the limit it ran under). A run whose remaining time would be under
    /// [`MIN_DEADLINE_RUN_S`] (or its whole budget, if shorter) does not start.
    pub deadline: Option<std::time::Instant>,
}

/// What `concur ladder` was asked for, as given on the command line; [`Request::check`]
/// turns it into a [`Ladder`] ready to run.
#[derive(Debug, Clone, Default, PartialEq, clap::Args)]
pub struct Request {
    pub config: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
    /// Run only shard K of N (1-based): disjoint shares whose union is the whole ladder.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Skip runs already on file in DIR (the unsharded results or any shard's).
    #[arg(long)]
    pub resume: bool,
    /// Run only the instances of at most this many cells (a part of the ladder).
    #[arg(long)]
    pub max_cells: Option<usize>,
    /// Run only the methods of these labels, comma-separated (a part of the ladder).
    #[arg(long, value_delimiter = ',')]
    pub methods: Vec<String>,
    /// Run only the first N runs of each method and instance (a shallow pass; a later
    /// --resume deepens it).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Folder that relative instance paths start from (default: $CONCUR_PUZZLES or
    /// ../shared/puzzles).
    #[arg(long)]
    pub puzzles: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Start no run after SECS seconds from now, and cut each run's time limit to end by
    /// then (the run records the limit it ran under), so a stop at a known time loses
    /// nothing.
    #[arg(long, value_name = "SECS")]
    pub deadline: Option<f64>,
}

/// A ladder request that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("--deadline {0}: need a positive number of seconds")]
    Deadline(f64),
    #[error("cannot read {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not text")]
    NotText {
        path: String,
        #[source]
        source: std::str::Utf8Error,
    },
    /// A config that does not parse or check ([`parse_config`]).
    #[error("{path}")]
    Config {
        path: String,
        #[source]
        source: Error,
    },
    #[error("--threads must be at least 1")]
    NoThreads,
    /// Every run is timed on one core: more workers than cores would slow them all and skew
    /// the results, so a ladder refuses them rather than capping.
    #[error("--threads {threads} is more than the {cores} cores here; a ladder times each run on a core of its own")]
    Threads { threads: usize, cores: usize },
    /// The results folder takes no files.
    #[error(transparent)]
    Output(#[from] crate::limits::LimitError),
    #[error(transparent)]
    Pool(#[from] rayon::ThreadPoolBuildError),
    /// What [`run`] refused or could not write.
    #[error(transparent)]
    Run(#[from] Error),
}

/// The folder relative instance paths start from when none is given: `$CONCUR_PUZZLES`, else
/// `../shared/puzzles`.
pub fn puzzle_folder(given: Option<PathBuf>) -> PathBuf {
    given
        .or_else(|| std::env::var_os("CONCUR_PUZZLES").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("../shared/puzzles"))
}

/// A ladder call checked and ready: what [`run`] needs, and its threads.
#[derive(Debug, Clone)]
pub struct Ladder {
    pub config: Config,
    pub puzzle_dir: PathBuf,
    pub out: PathBuf,
    pub shard: Option<Shard>,
    pub resume: bool,
    pub part: Part,
    pub threads: Option<usize>,
}

impl Request {
    /// Checks the request before any run, in this order: the deadline a positive number of
    /// seconds, the config read and parsed, the threads at least one and within the cores,
    /// the results folder taking files.
    pub fn check(self) -> std::result::Result<Ladder, RequestError> {
        let deadline = match self.deadline {
            None => None,
            Some(d) if d.is_finite() && d > 0.0 && d < 1e9 => {
                Some(std::time::Instant::now() + std::time::Duration::from_secs_f64(d))
            }
            Some(d) => return Err(RequestError::Deadline(d)),
        };
        let path = self.config.display().to_string();
        let bytes = std::fs::read(&self.config).map_err(|source| RequestError::Read { path: path.clone(), source })?;
        let text =
            std::str::from_utf8(&bytes).map_err(|source| RequestError::NotText { path: path.clone(), source })?;
        let config = parse_config(text).map_err(|source| RequestError::Config { path, source })?;
        let puzzle_dir = puzzle_folder(self.puzzles);
        if self.threads == Some(0) {
            return Err(RequestError::NoThreads);
        }
        let cores = crate::limits::cores();
        if let Some(threads) = self.threads.filter(|&t| t > cores) {
            return Err(RequestError::Threads { threads, cores });
        }
        crate::limits::output_dir(&self.out)?;
        let part = Part { max_cells: self.max_cells, methods: self.methods, runs: self.runs, deadline };
        Ok(Ladder {
            config,
            puzzle_dir,
            out: self.out,
            shard: self.shard,
            resume: self.resume,
            part,
            threads: self.threads,
        })
    }
}

impl Ladder {
    /// [`run`] on `threads` worker threads (rayon's pool when none were asked for).
    pub fn run(&self, progress: impl Fn(&Record) + Sync + Send) -> std::result::Result<Vec<Record>, RequestError> {
        let go = || run(&self.config, &self.puzzle_dir, &self.out, self.shard, self.resume, &self.part, progress);
        Ok(match self.threads {
            None => go()?,
            Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n).build()?.install(go)?,
        })
    }

    /// The file this call's results go to ([`results_path`]).
    pub fn results_path(&self) -> PathBuf {
        results_path(&self.out, self.shard)
    }
}

/// The shortest run a deadline leaves room for, in seconds.
pub const MIN_DEADLINE_RUN_S: f64 = 60.0;

/// Runs a ladder into `out`. With `resume`, runs already on file in `out` (in the unsharded
/// results file or any shard's) are skipped, so a ladder begun whole can be finished in
/// shards and the other way round; without it an existing non-empty results file is an error
/// (nothing is overwritten). `part` leaves out the larger instances, the other methods or the
/// later runs (a part of the ladder; a later call without it runs the rest). Runs start
/// smallest board first (the plan's order within a board), so a part stopped early has finished
/// the small sizes. `progress` sees each finished record. Returns the records written by this
/// call.
///
/// After a stop request ([`crate::interrupt`]) no new run starts, and a run that the stop cut
/// short is not written (a solved one is): the file holds only whole runs of their full budget,
/// and `resume` picks up the rest.
pub fn run(
    cfg: &Config,
    puzzle_dir: &Path,
    out: &Path,
    shard: Option<Shard>,
    resume: bool,
    part: &Part,
    progress: impl Fn(&Record) + Sync,
) -> Result<Vec<Record>> {
    let labels: Vec<String> = cfg.methods.iter().map(MethodSpec::label).collect();
    if let Some(bad) = part.methods.iter().find(|m| !labels.contains(m)) {
        return Err(Error::invalid(format!("no method is labelled {bad:?}; the labels are {}", labels.join(", "))));
    }
    let instances = load_instances(cfg, puzzle_dir)?;
    std::fs::create_dir_all(out).map_err(|e| Error::invalid(format!("cannot create {}: {e}", out.display())))?;
    let path = results_path(out, shard);
    if !resume && !read_records(&path)?.is_empty() {
        return Err(Error::invalid(format!("{} already holds results; use --resume to continue it", path.display())));
    }
    let done = if resume { runs_on_file(out)? } else { HashSet::new() };
    // Drop a torn last line before appending.
    if let Ok(text) = std::fs::read_to_string(&path)
        && !text.is_empty()
        && !text.ends_with('\n')
    {
        let keep = text.rfind('\n').map_or(0, |i| i + 1);
        std::fs::write(&path, &text[..keep])
            .map_err(|e| Error::invalid(format!("cannot repair {}: {e}", path.display())))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::invalid(format!("cannot open {}: {e}", path.display())))?;
    let file = Mutex::new(file);
    // Set when a line could not be written: no run starts after it, and nothing more is
    // written, so the file keeps only whole lines and `--resume` goes on from it.
    let write_failed = std::sync::atomic::AtomicBool::new(false);
    let cells: Vec<usize> = instances.iter().map(|i| i.puzzle.cells()).collect();
    let mut jobs: Vec<Job> = plan(cfg, &cells, shard)
        .into_iter()
        .filter(|j| part.max_cells.is_none_or(|m| cells[j.instance] <= m))
        .filter(|j| part.methods.is_empty() || part.methods.contains(&labels[j.method]))
        .filter(|j| part.runs.is_none_or(|n| j.run < cfg.first_run + n))
        .filter(|j| !done.contains(&(instances[j.instance].name.clone(), labels[j.method].clone(), j.run)))
        .collect();
    // Smallest boards first; within a size, run by run, so that a stopping rule sees every
    // instance and method of the size advance together.
    jobs.sort_by_key(|j| (cells[j.instance], j.run, j.method, j.instance));
    let mut pooled = Tally::new();
    for dir in &cfg.pool {
        tally(&read_folder(dir)?, &mut pooled);
    }
    // Whether a group's stopping rule is reached, counting the pooled folders and every
    // result on file in `out` now (other shards' too).
    let stopped = |label: &str, instance: &str, c: usize| -> Result<bool> {
        let Some(rule) = cfg.stops.iter().find(|s| s.applies(label, c)) else { return Ok(false) };
        let mut t = pooled.clone();
        tally(&read_folder(out)?, &mut t);
        Ok(rule.reached(t.get(&rule.group(label, instance, c)).copied().unwrap_or_default()))
    };
    let run_one = |j: &Job| -> Result<Option<Record>> {
        if crate::interrupt::requested() || write_failed.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(None);
        }
        let inst = &instances[j.instance];
        let c = inst.puzzle.cells();
        if stopped(&labels[j.method], &inst.name, c)? {
            return Ok(None);
        }
        let mut spec = cfg.method_for(&cfg.methods[j.method], c);
        if let Some(d) = part.deadline {
            let left = d.saturating_duration_since(std::time::Instant::now()).as_secs_f64();
            let budget = spec.spec.time_limit.unwrap_or(f64::INFINITY);
            if left < MIN_DEADLINE_RUN_S.min(budget) {
                return Ok(None);
            }
            if left < budget {
                spec.spec.time_limit = Some(left.floor());
            }
        }
        let rec = run_job_on(inst, &spec, j.run, cfg.seed, cfg.machine.as_deref())?;
        // A run cut short by a stop request is not a sample of its budget: leave it out,
        // so that `--resume` runs it again. A run that solved before the stop stands.
        if crate::interrupt::requested() && !rec.solved {
            return Ok(None);
        }
        let line = serde_json::to_string(&rec).expect("plain record") + "\n";
        {
            let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
            if write_failed.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(None);
            }
            // One line, whole or not at all: a write that fails part-way (a full disk) is cut
            // back off the file.
            let before = f.metadata().map(|m| m.len());
            if let Err(e) = f.write_all(line.as_bytes()).and_then(|_| f.flush()) {
                if let Ok(len) = before {
                    let _ = f.set_len(len);
                }
                write_failed.store(true, std::sync::atomic::Ordering::Relaxed);
                return Err(Error::invalid(format!(
                    "cannot append to {}: {e}; every run on file is whole: --resume goes on from it",
                    path.display()
                )));
            }
        }
        progress(&rec);
        Ok(Some(rec))
    };
    // Workers take the jobs strictly in order (a shared cursor), so the order above holds
    // with any number of threads.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Mutex<Vec<Result<Option<Record>>>> = Mutex::new(Vec::new());
    let workers = rayon::current_num_threads().clamp(1, jobs.len().max(1));
    (0..workers).into_par_iter().for_each(|_| {
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(j) = jobs.get(i) else { break };
            let r = run_one(j);
            results.lock().unwrap_or_else(|e| e.into_inner()).push(r);
        }
    });
    let records = results.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(records.into_iter().collect::<Result<Vec<_>>>()?.into_iter().flatten().collect())
}
