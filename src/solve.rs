//! The one way a method runs (ARCHITECTURE.md §5): a [`SolveSpec`] is the method with its
//! options ([`Method`], one typed options value per method) and the run's own options
//! (trials, threads, seed, limits, backend, outputs); [`solve`] checks it, runs it on a
//! [`Backend`] until it ends, its time limit passes or its [`Cancel`] token is tripped, and
//! returns its [`SolveReport`] with the facts a ladder records.
//!
//! The command line and a ladder entry build the same spec from the same keys
//! ([`SolveSpec::from_given`]): an option the method does not have or would not use is
//! refused there with one line that names it.
//!
//! The maps (rrr, dm, dc) run on the backend; the tree searches and the local searches run on
//! the CPU (they have no batch to spread). Every claimed solution has passed the exact board
//! check ([`verify::check`]) before [`solve`] returns it.

use crate::backend::{self, Backend, BackendChoice, Batch, Certify, EngineError, MapJob, MapSnapshot};
use crate::batch::{
    Found, MapResult, MapRun, Mechanism, Progress, SnapshotError, SolutionAt, SolutionSink, TrialSummary,
};
use crate::cancel::Cancel;
use crate::certify::Certificate;
use crate::dc::DcConfig;
use crate::error::SpecError;
use crate::f1::map::{self, MapConfig};
use crate::limits::{self, LimitError, MemoryBudget, OutputFile};
use crate::method::{MAP_NAMES, Method, MethodName};
use crate::options::{Row, Table};
use crate::puzzle::Puzzle;
use crate::report::SolveReport;
use crate::search::alns::{self, AlnsConfig, AlnsOptions};
use crate::search::backtrack::{self, BacktrackConfig};
use crate::search::beam::{self, BeamConfig};
use crate::search::hill::{self, HillConfig, HillOptions};
use crate::search::scan::{self, ScanProgress, ScanSolveConfig};
use crate::verify;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

crate::options::one_value!(BackendChoice);

crate::options::options_table! {
    /// The run's own options, beside the method's ([`SolveSpec::run`]): the seed, the
    /// budgets, the threads, the batch, where a map runs, and rate mode's solutions file.
    pub struct RunOptions {
        /// The seed of every random choice of the run.
        [Common]
        pub seed: u64 = 0,
        /// Wall-clock limit in seconds.
        [Common, value_name = "SECS"]
        pub time_limit: Option<f64> = None,
        /// Iterations per trial (maps; 100,000 without a time limit), moves (hill; 1e8) or
        /// iterations (alns; 1e7); no cap under a time limit.
        [Common, methods = ["rrr", "dm", "dc", "hill", "alns"]]
        pub max_iters: Option<u64> = None,
        /// Node limit of a tree search (none by default).
        [Common, methods = ["backtrack", "scan"]]
        pub max_nodes: Option<u64> = None,
        /// Worker threads (default: every core); the beam runs a pipeline on each.
        [Common, methods = ["rrr", "dm", "dc", "scan", "beam"]]
        pub threads: Option<usize> = None,
        /// Independent trials of the map, run as one batch.
        [Common, methods = MAP_NAMES]
        pub trials: usize = MapRun::default().trials,
        /// Where the map runs: auto takes a hardware GPU when there is one and falls back to the
        /// CPU, saying which on stderr; gpu fails without a usable adapter.
        [Gpu, methods = MAP_NAMES]
        pub backend: BackendChoice = BackendChoice::Auto,
        /// The GPU adapter: the first whose name contains this (case-insensitive); `all`: every
        /// hardware adapter, a batch's trials split over them.
        [Gpu, methods = MAP_NAMES]
        pub adapter: Option<String> = None,
        /// With --keep-going: append every solution to this file as one JSON line when it is
        /// found (flushed, so a killed run keeps every solution found).
        [Output, value_name = "FILE", methods = MAP_NAMES]
        pub solutions: Option<PathBuf> = None,
    }
    idle(o) {
        adapter if o.backend == BackendChoice::Cpu => "with --backend cpu";
    }
}

/// A run: the method with its options, and the run's own options. [`SolveSpec::default`]
/// is `concur solve PUZZLE` with no flags (RRR at its measured defaults); set the fields that
/// differ with `..SolveSpec::default()`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SolveSpec {
    /// The method and its options.
    #[serde(flatten)]
    pub method: Method,
    /// The run's own options (seed, trials, threads, limits, backend, solutions file).
    #[serde(flatten)]
    pub run: RunOptions,
    /// Which trials get a fixed-point certificate (the command line's `--dump-state`).
    #[serde(skip)]
    pub certify: Certify,
    /// Rate mode: hear every solution as it is found (beside `solutions`).
    #[serde(skip)]
    pub on_solution: Option<SolutionSink>,
    /// Continue this snapshot (a map's batch saved where a stop request cut the same run
    /// short: [`Solved::snapshot`]) instead of starting afresh: the run goes on exactly as
    /// the uninterrupted run would have, and its [`Solved`] counts what it does after the
    /// restore. Its time limit is `time_limit` (the caller passes what is left); `max_iters`
    /// is each trial's budget from the run's start. A snapshot of another puzzle, method,
    /// batch, seed or option is refused ([`SolveError::Snapshot`]). CPU backend only. Not a
    /// user's option (no key, not serialised).
    #[serde(skip)]
    pub resume: Option<MapSnapshot>,
    /// Ask a map for a snapshot when `cancel` stops it ([`Solved::snapshot`]): the CPU
    /// backend then lets the token stop the batch only between rounds (every trial finishes
    /// the round it is in, at most [`crate::batch::ROUND`] iterations). Not a user's option.
    #[serde(skip)]
    pub save_at_stop: bool,
}

/// The methods that use the run's option `key` (None: not a run option), from its row.
pub fn run_key_methods(key: &str) -> Option<Vec<MethodName>> {
    let row = RunOptions::rows().into_iter().find(|r| r.key == key)?;
    Some(match row.methods {
        None => MethodName::ALL.to_vec(),
        Some(names) => MethodName::ALL.into_iter().filter(|m| names.contains(&m.name())).collect(),
    })
}

/// One option a method takes, with its default: its row and the default's JSON value (an
/// `f32` default in its shortest form, 0.7 rather than 0.699999988).
#[derive(Clone, Debug)]
pub struct OptionDefault {
    /// The option as its table declares it.
    pub row: Row,
    /// Its default.
    pub default: Value,
}

/// Every option `name` takes, the run's first and then its own, each with its default: what
/// Python's keyword arguments and their defaults are read from.
pub fn options_of(name: MethodName) -> Vec<OptionDefault> {
    let run = serde_json::to_value(RunOptions::default()).unwrap_or_default();
    let own = serde_json::to_value(name.with_defaults()).unwrap_or_default();
    let mut out = Vec::new();
    for row in RunOptions::rows() {
        if run_key_methods(row.key).is_some_and(|m| m.contains(&name)) {
            out.push(OptionDefault { row, default: shortest(run.get(row.key).cloned().unwrap_or_default()) });
        }
    }
    for row in name.rows() {
        out.push(OptionDefault { row, default: shortest(own.get(row.key).cloned().unwrap_or_default()) });
    }
    out
}

/// A value with every number that is an `f32` written in the `f32`'s shortest form.
fn shortest(v: Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            let short = (f as f32).to_string().parse::<f64>().ok().filter(|_| f64::from(f as f32) == f);
            short.and_then(serde_json::Number::from_f64).map_or(Value::Number(n), Value::Number)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(shortest).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, shortest(v))).collect()),
        v => v,
    }
}

/// Errors of a solve: a spec that cannot run, a backend that fails, or a claim the exact
/// verifier rejects (an internal error).
#[derive(Debug, thiserror::Error)]
pub enum SolveError {
    /// An option out of range, unknown, without effect, or in conflict with another.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A check before the run refused it: memory, threads or time limit.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// The batch failed on its backend, or the backend does not run it.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The backend asked for could not be had.
    #[error(transparent)]
    Backend(#[from] backend::GpuError),
    /// No board fits the puzzle's rim, so no map can start.
    #[error("the puzzle has no board that fits its rim: {0}")]
    NoBoard(crate::assign::AssignError),
    /// The thread pool of `threads` could not start.
    #[error("cannot start {threads} threads: {reason}")]
    Threads {
        /// The threads asked for.
        threads: usize,
        /// Why the pool could not start.
        reason: String,
    },
    /// The named engine claimed a board the exact verifier rejects (a bug, never a result).
    #[error("internal error: the {0} claimed an invalid board")]
    InvalidClaim(&'static str),
    /// The snapshot to continue ([`SolveSpec::resume`]) is not of this run, or is damaged.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
}

impl SolveSpec {
    /// The method's name.
    pub fn name(&self) -> MethodName {
        self.method.name()
    }

    /// Whether the method is one of the maps (runs on a backend).
    pub fn is_map(&self) -> bool {
        self.method.is_map()
    }

    /// A spec from the options a user gave (`given`: the command line's flags that were given,
    /// or a ladder entry, keyed as the flags with `_` for `-`), with everything not given at
    /// its default. `method` names the method (rrr when absent). Refused, naming the key: an
    /// option no method has, one of another method, one the run would not use given the
    /// others, a value that does not read or is out of range.
    pub fn from_given(given: &Map<String, Value>) -> Result<SolveSpec, SpecError> {
        let name = match given.get("method") {
            None => MethodName::Rrr,
            Some(v) => serde_json::from_value::<MethodName>(v.clone())
                .map_err(|_| SpecError::Value { key: "method".into(), reason: format!("unknown method {v}") })?,
        };
        let mut options = given.clone();
        options.remove("method");
        let mut run = Map::new();
        for row in RunOptions::rows() {
            if let Some(v) = options.remove(row.key) {
                run.insert(row.key.to_string(), v);
            }
        }
        let method = Method::from_given(name, &options)?;
        // One key at a time first, so that a value that does not read names its key.
        for (key, value) in &run {
            let one: Map<String, Value> = [(key.clone(), value.clone())].into_iter().collect();
            serde_json::from_value::<RunOptions>(Value::Object(one))
                .map_err(|e| SpecError::Value { key: key.clone(), reason: e.to_string() })?;
        }
        let run_options: RunOptions = serde_json::from_value(Value::Object(run.clone())).map_err(|e| {
            SpecError::Value { key: run.keys().next().cloned().unwrap_or_default(), reason: e.to_string() }
        })?;
        let spec = SolveSpec { method, run: run_options, ..SolveSpec::default() };
        for key in run.keys() {
            spec.check_run_key(key)?;
        }
        if let Some((key, because)) = spec.run.idle().into_iter().find(|(k, _)| run.contains_key(*k)) {
            return Err(SpecError::no_effect(key, because));
        }
        spec.check()?;
        Ok(spec)
    }

    /// Refuses what cannot run before any work: the method's options
    /// ([`Method::check`]), a run option the method does not use set away from its default,
    /// values out of range, and outputs that contradict the run.
    pub fn check(&self) -> Result<(), SpecError> {
        self.method.check()?;
        let (mine, default) = (serde_json::to_value(&self.run), serde_json::to_value(RunOptions::default()));
        if let (Ok(mine), Ok(default)) = (mine, default) {
            for row in RunOptions::rows() {
                if mine.get(row.key) != default.get(row.key) {
                    self.check_run_key(row.key)?;
                }
            }
        }
        crate::options::check_idle(&self.run)?;
        if let Some(t) = self.run.time_limit
            && !(0.0..=limits::MAX_SECONDS).contains(&t)
        {
            return Err(SpecError::range("time_limit", "a number of seconds from 0 to 1e9", t));
        }
        if self.run.threads == Some(0) {
            return Err(SpecError::range("threads", "at least 1", 0));
        }
        if self.is_map() && self.run.trials == 0 {
            return Err(SpecError::range("trials", "at least 1", 0));
        }
        if let Some(a) = self.run.adapter.as_deref().filter(|a| a.trim().is_empty()) {
            return Err(SpecError::range("adapter", "a part of an adapter's name, or all", format!("{a:?}")));
        }
        let keep_going = self.method.keep_going();
        if self.run.solutions.is_some() && !keep_going {
            return Err(SpecError::no_effect("solutions", "without --keep-going (it records a rate-mode run)"));
        }
        if self.certify != Certify::None && !self.is_map() {
            let methods = MAP_NAMES.to_vec();
            return Err(SpecError::NotForMethod { key: "dump_state".into(), method: self.name().name(), methods });
        }
        if self.certify != Certify::None {
            let (key, why) = ("dump_state", "certifies");
            if keep_going {
                return Err(SpecError::conflict(
                    key,
                    format!("{why} stop-at-first runs; it does not apply to --keep-going"),
                ));
            }
            if let Some((_, o)) = self.method.f1() {
                if o.adapt.is_some() {
                    return Err(SpecError::conflict(
                        key,
                        format!("{why} a fixed metric; it does not record --adapt's weights"),
                    ));
                }
                if o.reduced_costs != crate::assign::Precision::F64 {
                    return Err(SpecError::conflict(
                        key,
                        format!("{why} in f64; it does not replay --reduced-costs f32"),
                    ));
                }
            }
        }
        // Last: it builds the batch's configuration, which the checks above make valid.
        self.check_placement()
    }

    /// Refuses the run option `key` where the method does not use it: a method that does not
    /// have it at all, or a value it would not honour (a search runs on the CPU and, but for
    /// the scan, on one thread: `--backend cpu` and `--threads 1` say what it does anyway and
    /// are taken; `--backend gpu` or `--threads 4` are refused).
    fn check_run_key(&self, key: &str) -> Result<(), SpecError> {
        let name = self.name();
        let uses = run_key_methods(key).unwrap_or_default();
        if uses.contains(&name) {
            return Ok(());
        }
        let as_it_runs = match key {
            "backend" => self.run.backend != BackendChoice::Gpu,
            "threads" => self.run.threads.is_none_or(|t| t == 1),
            _ => false,
        };
        if as_it_runs {
            return Ok(());
        }
        let methods = uses.iter().map(|m| m.name()).collect();
        Err(SpecError::NotForMethod { key: key.into(), method: name.name(), methods })
    }

    fn time_limit(&self) -> Option<Duration> {
        self.run.time_limit.map(Duration::from_secs_f64)
    }

    /// Iterations per trial of a map: as given, else [`map::default_iters`].
    pub fn map_iters(&self) -> u64 {
        self.run.max_iters.unwrap_or_else(|| map::default_iters(self.time_limit()))
    }

    /// A local search's cap on moves or iterations: as given, else none under a time limit
    /// (the clock bounds the run, as for the maps), else `cap`.
    fn local_cap(&self, cap: u64) -> Option<u64> {
        self.run.max_iters.or(if self.run.time_limit.is_some() { None } else { Some(cap) })
    }

    /// How a map's batch runs: trials, budget, seed, and `cancel`.
    fn map_run(&self, cancel: &Cancel) -> MapRun {
        MapRun {
            trials: self.run.trials,
            max_iters: self.map_iters(),
            time_limit: self.time_limit(),
            seed: self.run.seed,
            on_solution: self.on_solution.clone(),
            cancel: cancel.clone(),
            save_at_stop: self.save_at_stop,
        }
    }

    /// The F1 configuration of `rrr` or `dm` (None for the other methods).
    pub fn map_config(&self, cancel: &Cancel) -> Option<MapConfig> {
        let (kind, o) = self.method.f1()?;
        let mut cfg = o.config(kind, self.map_run(cancel));
        cfg.keep_fixed_points = self.certify != Certify::None;
        cfg.resume = match &self.resume {
            Some(MapSnapshot::F1(s)) => Some(s.clone()),
            _ => None,
        };
        Some(cfg)
    }

    /// The divide-and-concur configuration (None for the other methods).
    pub fn dc_config(&self, cancel: &Cancel) -> Option<DcConfig> {
        let Method::Dc(o) = &self.method else { return None };
        let mut cfg = o.config(self.map_run(cancel));
        cfg.keep_fixed_points = self.certify != Certify::None;
        cfg.resume = match &self.resume {
            Some(MapSnapshot::Dc(s)) => Some(s.clone()),
            _ => None,
        };
        Some(cfg)
    }

    fn backtrack_config(&self, cancel: &Cancel) -> Option<BacktrackConfig> {
        let Method::Backtrack(o) = &self.method else { return None };
        Some(o.config(self.run.seed, self.time_limit(), self.run.max_nodes, cancel.clone()))
    }

    fn scan_config(&self, cancel: &Cancel) -> Option<ScanSolveConfig> {
        let Method::Scan(o) = &self.method else { return None };
        // No count: every core.
        Some(o.config(
            self.run.seed,
            self.time_limit(),
            self.run.max_nodes,
            self.run.threads.unwrap_or(0),
            cancel.clone(),
        ))
    }

    fn hill_config(&self, cancel: &Cancel) -> Option<HillConfig> {
        let Method::Hill(o) = &self.method else { return None };
        Some(o.config(self.run.seed, self.local_cap(HillOptions::MAX_MOVES), self.time_limit(), cancel.clone()))
    }

    fn alns_config(&self, cancel: &Cancel) -> Option<AlnsConfig> {
        let Method::Alns(o) = &self.method else { return None };
        Some(o.config(self.run.seed, self.local_cap(AlnsOptions::MAX_ITERATIONS), self.time_limit(), cancel.clone()))
    }

    fn beam_config(&self, cancel: &Cancel) -> Option<BeamConfig> {
        let Method::Beam(o) = &self.method else { return None };
        let threads = self.run.threads.unwrap_or_else(limits::cores);
        Some(o.config(self.run.seed, self.time_limit(), threads, cancel.clone()))
    }

    /// The batch of a map, for `backend` (F1's `--assign auto` resolved there).
    fn with_job<T>(&self, backend: &dyn Backend, f: impl FnOnce(MapJob<'_>) -> T) -> Option<T> {
        let cancel = Cancel::new();
        if let Some(mut cfg) = self.map_config(&cancel) {
            cfg.assign = backend.f1_assign(&cfg);
            return Some(f(MapJob::F1(&cfg)));
        }
        self.dc_config(&cancel).map(|cfg| f(MapJob::Dc(&cfg)))
    }

    /// F1's assignments placed where no backend runs them with the rest of the run (an
    /// explicit `--assign`, `auto` aside) are refused with the spec, before any backend is
    /// picked: the capability table's line, from the backend the placement belongs to.
    fn check_placement(&self) -> Result<(), SpecError> {
        use crate::backend::capability::{self, Place};
        let Some(cfg) = self.map_config(&Cancel::new()) else { return Ok(()) };
        if cfg.assign == crate::f1::map::AssignOn::Auto {
            return Ok(());
        }
        let needs = capability::needs(backend::MapJob::F1(&cfg), cfg.assign, 1);
        let own = if cfg.assign.on_device() { Place::Gpu } else { Place::Cpu };
        match capability::check(own, &needs) {
            Err(e)
                if capability::check(Place::Cpu, &needs).is_err() && capability::check(Place::Gpu, &needs).is_err() =>
            {
                Err(SpecError::conflict(e.feature.key(), e.why))
            }
            _ => Ok(()),
        }
    }

    /// Whether `backend` runs this spec (always, for the searches that run on the CPU).
    pub fn supported_by(&self, backend: &dyn Backend) -> Result<(), backend::Unsupported> {
        self.with_job(backend, |job| backend.supports(job)).unwrap_or(Ok(()))
    }

    /// "rrr on a 5x5 board" and then `on` (where the batch runs): what a memory check names.
    fn what(&self, puzzle: &Puzzle, on: &str) -> String {
        format!("{} on a {}x{} board{on}", self.name(), puzzle.width(), puzzle.height())
    }

    /// Checks before the work, which [`solve`] runs itself: the spec, the backend fits it,
    /// the outputs it writes are writable, and the run fits the memory there is (the tables
    /// of every method, and a map's batch on `backend`).
    pub fn preflight(&self, puzzle: &Puzzle, backend: &dyn Backend) -> Result<(), SolveError> {
        self.check()?;
        self.supported_by(backend).map_err(EngineError::from)?;
        if let Some(path) = &self.run.solutions {
            OutputFile::check(path)?;
        }
        let budget = MemoryBudget::here()?;
        let complete = self.method.map_options().is_some_and(|m| m.complete.is_some());
        let propagate = matches!(&self.method, Method::Dc(o) if o.propagate.is_some());
        let network = self.name() == MethodName::Backtrack || complete || propagate;
        budget.check_tables(&self.what(puzzle, ""), limits::tables(puzzle, network))?;
        let threads = self.run.threads.unwrap_or_else(rayon::current_num_threads);
        if let Some(estimate) = self.with_job(backend, |job| backend.estimate(puzzle, job, threads)) {
            budget.check_trials(&self.what(puzzle, backend.memory_place()), &estimate, self.run.trials as u64)?;
        }
        if let Some(cfg) = self.beam_config(&Cancel::new()) {
            beam_max_width(puzzle, &cfg)?;
        }
        if let Method::Alns(o) = &self.method {
            o.start_board(puzzle)?;
        }
        if let Method::Scan(o) = &self.method
            && let Some(&d) = o.breaks.iter().find(|&&d| d >= puzzle.cells())
        {
            // A depth past the last cell would unlock nothing.
            return Err(SpecError::range("breaks", "depths below the board's cell count", d).into());
        }
        Ok(())
    }
}

/// A run made ready to start ([`prepare`]): the backend it runs on and the lines for the user.
pub struct Prepared {
    /// The backend picked ([`pick_backend`]).
    pub backend: Box<dyn Backend>,
    /// Lines for the user, in order: the threads capped at the cores, the backend `auto`
    /// picked. They wait until every check has passed, so that a refusal is one line.
    pub notes: Vec<String>,
}

/// What every caller does before a run, the command line and Python alike, in order: check
/// the spec, cap its threads at the cores (`threads_flag` names the option in the note:
/// `--threads`, or Python's `threads`), pick the backend ([`pick_backend`]) and run the
/// preflight on it ([`SolveSpec::preflight`]: memory, outputs, what the backend runs).
pub fn prepare(spec: &mut SolveSpec, puzzle: &Puzzle, threads_flag: &str) -> Result<Prepared, SolveError> {
    spec.check()?;
    let mut notes = Vec::new();
    if let Some(t) = spec.run.threads {
        let (t, note) = limits::cap_threads(threads_flag, t);
        spec.run.threads = Some(t);
        notes.extend(note);
    }
    let selected = pick_backend(spec)?;
    notes.extend(selected.note);
    spec.preflight(puzzle, selected.backend.as_ref())?;
    Ok(Prepared { backend: selected.backend, notes })
}

/// The backend a spec asks for (`backend`, `adapter`): `gpu` fails without a usable adapter
/// or when the spec is CPU-only; `auto` falls back to the CPU and says why in the note, and
/// never takes a software adapter unless one is named. The searches that run only on the CPU
/// get the CPU backend.
pub fn pick_backend(spec: &SolveSpec) -> Result<backend::Selected, SolveError> {
    let cpu = |note| backend::Selected { backend: Box::new(backend::CpuBackend), note };
    if !spec.is_map() || spec.run.backend == BackendChoice::Cpu {
        return Ok(cpu(None));
    }
    let sel = backend::select(spec.run.backend, spec.run.adapter.as_deref())?;
    match spec.supported_by(sel.backend.as_ref()) {
        Ok(()) => Ok(sel),
        Err(e) if spec.run.backend == BackendChoice::Gpu => Err(EngineError::from(e).into()),
        Err(e) => Ok(cpu(Some(format!("backend auto: cpu ({e})")))),
    }
}

/// What [`solve`] reports as it goes: a map's progress after each round, or a tree search's.
pub enum Event<'a> {
    /// A map's batch after a round.
    Map(&'a Progress),
    /// The row scan's counters, about once a second.
    Scan(&'a ScanProgress),
}

/// A finished solve: its report, and the facts a ladder records.
///
/// **A run in parts.** A map run that a stop request cut short can be saved
/// ([`SolveSpec::save_at_stop`], [`Solved::snapshot`]) and continued
/// ([`SolveSpec::resume`]); the continued part finds the same solutions at the same
/// iterations, and ends in the same state, as the run that never stopped. Each part's
/// `Solved` counts its own work: `work`, the report's trial-iterations and wall time, rate
/// mode's `solutions`, `distinct_solutions` (the classes first found in the part) and
/// `found`, and the trace, so that the parts' records add up to the whole run's. `trials`
/// and each solution's iteration counts are the trials' own, from the run's start.
#[derive(Debug)]
pub struct Solved {
    /// What `solve --json` prints.
    pub report: SolveReport,
    /// Work spent: to the solution when solved, else the whole budget (a map's iterations
    /// over its trials, a search's nodes, a local search's moves or iterations). A continued
    /// map run counts its own, from the restore ([`MapResult::work`]).
    pub work: u64,
    /// The unit of `work`: `iterations`, `nodes`, `moves`.
    pub work_unit: &'static str,
    /// Rate mode: the verified solutions of the run (None: a run that stops at its first).
    pub solutions: Option<u64>,
    /// Rate mode: how many of them are distinct up to turning the board.
    pub distinct_solutions: Option<u64>,
    /// What found the solution (`map`, `map+ac`, `scan`, ...); None when unsolved.
    pub mechanism: Option<String>,
    /// (seconds, new best score), for the maps and the local searches.
    pub trace: Vec<(f64, usize)>,
    /// The certificates [`SolveSpec::certify`] asked for.
    pub certificates: Vec<(usize, Certificate)>,
    /// A certificate that could not be made (the run stands; the caller says so).
    pub certificate_error: Option<String>,
    /// Whether `cancel` was tripped before the run ended (its result is what it had).
    pub cancelled: bool,
    /// A map's trials in trial order, each as its batch ended (its iterations, best score, the
    /// iteration it solved at, its restarts): a run's run-time distribution. Empty for the
    /// searches. A continued run's trials count from the first part's start.
    pub trials: Vec<TrialSummary>,
    /// CPU seconds of the run, user and system (Linux): the thread that ran it and the threads
    /// it started for itself (the scan's walk and watcher), when the run ran on one thread
    /// (`threads` 1, or a method without threads); None otherwise.
    pub cpu_s: Option<f64>,
    /// Rate mode: where each verified solution of this run was found, in the order found
    /// (its trial, the trial's iteration, its segment's iterations); None for a run that
    /// stops at its first.
    pub found: Option<Vec<SolutionAt>>,
    /// The map's batch saved where `cancel` stopped it, to continue exactly
    /// ([`SolveSpec::resume`]): set when the spec asked for it ([`SolveSpec::save_at_stop`]),
    /// the run ended because its token was tripped (not at a solution, its time limit or its
    /// iteration budget) and the backend saves (the CPU backend: rrr, dm and dc). None otherwise,
    /// and always for the GPU backend and the searches.
    pub snapshot: Option<MapSnapshot>,
}

/// Runs `spec` on `puzzle`: the maps on `backend`, the searches on the CPU, after the checks
/// of [`SolveSpec::preflight`]. It ends at its own end, at its time limit, or at the next
/// check after `cancel` is tripped, with what it had (every solution verified). `progress`
/// hears a map's rounds and a scan's reports. With `spec.run.threads`, the work runs on a pool of
/// that many threads.
pub fn solve(
    puzzle: &Puzzle,
    spec: &SolveSpec,
    backend: &dyn Backend,
    cancel: &Cancel,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<Solved, SolveError> {
    spec.preflight(puzzle, backend)?;
    // The work's own CPU time, on the thread that runs it.
    let timed = |progress: &mut (dyn FnMut(Event<'_>) + Send)| {
        let (r, own) = crate::meter::with_thread_cpu(|| run(&Job { puzzle, spec, backend, cancel }, progress));
        r.map(|mut s| {
            // The calling thread's share, plus what the threads the run started spent.
            s.cpu_s = own.map(|c| c + s.cpu_s.unwrap_or(0.0));
            s
        })
    };
    let mut solved = match spec.run.threads {
        Some(n) if spec.is_map() => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| SolveError::Threads { threads: n, reason: e.to_string() })?
            .install(|| timed(progress)),
        _ => timed(progress),
    }?;
    let one_thread =
        spec.run.threads == Some(1) || run_key_methods("threads").is_some_and(|m| !m.contains(&spec.name()));
    if !one_thread {
        solved.cpu_s = None;
    }
    solved.cancelled = cancel.is_cancelled();
    solved.report.printed.interrupted = solved.cancelled;
    Ok(solved)
}

/// One run of [`solve`]: the puzzle, the spec, the backend of the maps, the run's token.
struct Job<'j> {
    puzzle: &'j Puzzle,
    spec: &'j SolveSpec,
    backend: &'j dyn Backend,
    cancel: &'j Cancel,
}

fn run(job: &Job<'_>, progress: &mut (dyn FnMut(Event<'_>) + Send)) -> Result<Solved, SolveError> {
    let Job { puzzle, spec, cancel, .. } = *job;
    if spec.is_map() {
        return run_map(job, progress);
    }
    if let Some(s) = &spec.resume {
        let (saved, here) = (s.identity().method.clone(), spec.name().name().to_string());
        return Err(SnapshotError::Mismatch { what: "method".into(), saved, here }.into());
    }
    let solved = if let Some(cfg) = spec.backtrack_config(cancel) {
        let ac = cfg.consistency;
        let r = backtrack::solve(puzzle, cfg);
        let nodes = r.stats.nodes;
        let report = SolveReport::from_backtrack(puzzle, r, ac, spec.run.seed);
        Solved::of(report, nodes, "nodes", Vec::new())
    } else if let Some(cfg) = spec.scan_config(cancel) {
        let progress = std::sync::Mutex::new(progress);
        let r = scan::solve(puzzle, &cfg, &|p: &ScanProgress| {
            if let Ok(mut f) = progress.lock() {
                f(Event::Scan(p));
            }
        });
        Solved {
            cpu_s: r.threads_cpu_s,
            ..Solved::of(SolveReport::from_scan(puzzle, &r, &cfg), r.nodes, "nodes", Vec::new())
        }
    } else if let Some(cfg) = spec.hill_config(cancel) {
        let r = hill::hill_climb(puzzle, &cfg);
        Solved::of(SolveReport::from_hill(puzzle, &r), r.moves, "moves", r.trace.clone())
    } else if let Some(mut cfg) = spec.alns_config(cancel) {
        if let Method::Alns(o) = &spec.method {
            cfg.start = o.start_board(puzzle)?;
        }
        let r = alns::alns(puzzle, &cfg);
        Solved::of(SolveReport::from_alns(puzzle, &r), r.iterations, "iterations", r.local.trace.clone())
    } else if let Some(mut cfg) = spec.beam_config(cancel) {
        cfg.max_width = beam_max_width(puzzle, &cfg)?;
        let r = beam::beam(puzzle, &cfg);
        Solved::of(SolveReport::from_beam(puzzle, &r, cfg.options.fill_order), r.nodes, "nodes", r.trace.clone())
    } else {
        unreachable!("every method is a map or one of the searches")
    };
    Ok(solved)
}

/// The widest beam the memory allows for `cfg`'s threads, leaving a fifth of it free; a
/// given width wider than that is refused.
fn beam_max_width(puzzle: &Puzzle, cfg: &BeamConfig) -> Result<usize, LimitError> {
    let budget = MemoryBudget::here()?;
    let have = budget.limit();
    let o = &cfg.options;
    let fit = o.max_width(puzzle, have / 5 * 4, cfg.threads);
    match o.width {
        Some(width) if width > fit => Err(LimitError::Beam {
            width,
            threads: cfg.threads,
            need: o.bytes(puzzle, width).saturating_mul(cfg.threads as u64),
            have,
            fit,
            capped: budget.capped,
        }),
        _ => Ok(fit.max(1)),
    }
}

impl Solved {
    /// A search's result: the search itself is the mechanism of its solution.
    fn of(report: SolveReport, work: u64, unit: &'static str, trace: Vec<(f64, usize)>) -> Self {
        let mechanism = report.solved.then(|| report.method().name().to_string());
        Solved {
            report,
            work,
            work_unit: unit,
            solutions: None,
            distinct_solutions: None,
            mechanism,
            trace,
            certificates: Vec::new(),
            certificate_error: None,
            cancelled: false,
            trials: Vec::new(),
            cpu_s: None,
            found: None,
            snapshot: None,
        }
    }
}

/// A map on the backend: the batch, the exact check of its claim, the report.
fn run_map(job: &Job<'_>, progress: &mut (dyn FnMut(Event<'_>) + Send)) -> Result<Solved, SolveError> {
    let Job { puzzle, spec, backend, cancel } = *job;
    // New best scores, from the progress after each round.
    let mut trace: Vec<(f64, usize)> = Vec::new();
    let mut heard = |p: &Progress| {
        if trace.last().is_none_or(|&(_, s)| p.best_score > s) {
            trace.push((p.elapsed_s, p.best_score));
        }
        progress(Event::Map(p));
    };
    let no_board = |e: EngineError| match e {
        EngineError::Assign(a) => SolveError::NoBoard(a),
        e => SolveError::Engine(e),
    };
    if let Some(s) = &spec.resume {
        let here = spec.name().name();
        let fits = match s {
            MapSnapshot::F1(_) => spec.method.f1().is_some(),
            MapSnapshot::Dc(_) => matches!(spec.method, Method::Dc(_)),
        };
        if !fits {
            let what = "method".to_string();
            return Err(SnapshotError::Mismatch { what, saved: s.identity().method.clone(), here: here.into() }.into());
        }
    }
    let sink = rate_sink(puzzle, spec)?;
    let (batch, params) = if let Some(mut cfg) = spec.dc_config(cancel) {
        cfg.run.on_solution = sink;
        let batch = backend.solve(puzzle, MapJob::Dc(&cfg), spec.certify, &mut heard).map_err(no_board)?;
        (batch, SolveReport::dc_params(puzzle, &cfg))
    } else {
        let mut cfg = spec.map_config(cancel).expect("a map is F1 when it is not divide and concur");
        cfg.assign = backend.f1_assign(&cfg);
        cfg.run.on_solution = sink;
        let batch = backend.solve(puzzle, MapJob::F1(&cfg), spec.certify, &mut heard).map_err(no_board)?;
        let params = SolveReport::f1_params(&cfg, &batch.result);
        (batch, params)
    };
    check_claim(puzzle, &batch.result)?;
    let Batch { result, certificates, certificate_error, snapshot } = batch;
    let mut report = SolveReport::from_map(puzzle, spec.name(), &result, spec.run.seed, params, backend.label());
    if result.trials.iter().all(|t| t.iterations == 0) {
        // Stopped before any trial's first iteration: no board was chosen yet.
        report.board = None;
    }
    let work = result.work();
    let mechanism = result
        .solution
        .as_ref()
        .map(|(t, _, _)| result.trials[*t].solved_by.unwrap_or(Mechanism::Map).as_str().to_string());
    let solutions = result.rate.as_ref().map(|r| r.solutions.len() as u64);
    let distinct_solutions = result.rate.as_ref().map(|r| r.distinct as u64);
    let found = result.rate.as_ref().map(|r| r.solutions.iter().map(SolutionAt::from).collect());
    let trials = result.trials;
    Ok(Solved {
        report,
        work,
        work_unit: "iterations",
        solutions,
        distinct_solutions,
        mechanism,
        trace,
        certificates,
        certificate_error,
        cancelled: false,
        trials,
        cpu_s: None,
        found,
        snapshot,
    })
}

/// Where a rate-mode run's solutions go: the caller's sink ([`SolveSpec::on_solution`]) and
/// the file of `solutions`, each appended as one JSON line (the record of
/// [`crate::batch::Found`] with the run's method, seed and board size) and flushed.
fn rate_sink(puzzle: &Puzzle, spec: &SolveSpec) -> Result<Option<SolutionSink>, SolveError> {
    use std::io::Write;
    if !spec.method.keep_going() {
        return Ok(None);
    }
    let caller = spec.on_solution.clone();
    let Some(path) = &spec.run.solutions else { return Ok(caller) };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| LimitError::Unwritable { path: path.display().to_string(), reason: e.to_string() })?;
    let head = serde_json::json!({
        "method": spec.name().name(), "seed": spec.run.seed, "trials": spec.run.trials,
        "width": puzzle.width(), "height": puzzle.height(),
    });
    Ok(Some(SolutionSink::new(move |found: &Found| {
        if let Some(c) = &caller {
            c.call(found)?;
        }
        let mut line = head.clone();
        if let (Some(o), Ok(Value::Object(f))) = (line.as_object_mut(), serde_json::to_value(found)) {
            o.extend(f);
        }
        let text = line.to_string() + "\n";
        file.write_all(text.as_bytes()).and_then(|()| file.flush()).map_err(|e| e.to_string())
    })))
}

/// Never report a claim the exact verifier has not seen.
fn check_claim(puzzle: &Puzzle, result: &MapResult) -> Result<(), SolveError> {
    match &result.solution {
        Some((_, _, board)) if !verify::check(puzzle, board).valid => Err(SolveError::InvalidClaim("map")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::f1::JoinWeights;
    use serde_json::json;

    fn given(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn every_key_a_rule_names_is_an_option_and_every_method_a_row_names_is_a_method() {
        use crate::dc::DcOptions;
        use crate::f1::F1Options;
        use crate::search::scan::ScanSolveOptions;
        use crate::search::{alns::AlnsOptions, backtrack::BacktrackOptions, hill::HillOptions};
        /// What is wrong with a table: a rule's key that is no option, a row's method that is
        /// no method, a key declared twice.
        fn problems(what: &str, keys: &[&str], rule_keys: &[&str], methods: &[(&str, &[&str])]) -> Vec<String> {
            let mut out = Vec::new();
            for k in rule_keys {
                if !keys.contains(k) {
                    out.push(format!("{what}: the rule's key {k} is not an option"));
                }
            }
            for (key, ms) in methods {
                for m in *ms {
                    if m.parse::<MethodName>().is_err() {
                        out.push(format!("{what}.{key}: {m} is not a method"));
                    }
                }
            }
            let mut unique = keys.to_vec();
            unique.sort_unstable();
            unique.dedup();
            if unique.len() != keys.len() {
                out.push(format!("{what}: a key declared twice"));
            }
            out
        }
        fn check<T: Table>(what: &str) -> usize {
            let rows = T::rows();
            let keys: Vec<&str> = rows.iter().map(|r| r.key).collect();
            let methods: Vec<(&str, &[&str])> = rows.iter().map(|r| (r.key, r.methods.unwrap_or_default())).collect();
            let wrong = problems(what, &keys, &T::rule_keys(), &methods);
            assert!(wrong.is_empty(), "{}", wrong.join("\n"));
            rows.len()
        }
        let n = check::<RunOptions>("RunOptions")
            + check::<F1Options>("F1Options")
            + check::<DcOptions>("DcOptions")
            + check::<ScanSolveOptions>("ScanSolveOptions")
            + check::<BacktrackOptions>("BacktrackOptions")
            + check::<HillOptions>("HillOptions")
            + check::<AlnsOptions>("AlnsOptions");
        assert!(n > 50, "{n} rows");
        // The check can fail: each kind of fault, planted in a table's lists, is caught.
        let keys = ["beta", "kick", "beta"];
        let wrong = problems("planted", &keys, &["not_an_option"], &[("kick", &["rrr", "no-such-method"])]);
        assert_eq!(wrong.len(), 3, "{wrong:?}");
        assert!(F1Options::rule_keys().contains(&"kick") && RunOptions::rule_keys() == ["adapter"]);
    }

    #[test]
    fn defaults_are_the_options_and_a_bare_entry_reads_as_them() {
        let d = SolveSpec::default();
        assert_eq!(d.name(), MethodName::Rrr);
        assert_eq!(d.run.trials, MapConfig::default().run.trials);
        let from = SolveSpec::from_given(&given(json!({"method": "rrr"}))).unwrap();
        assert_eq!((from.method, from.run.trials, from.run.seed), (d.method.clone(), d.run.trials, d.run.seed));
        let c = d.map_config(&Cancel::new()).unwrap();
        let m = MapConfig::default();
        assert_eq!(
            (c.beta, c.run.trials, c.run.max_iters, c.restart_stall, c.join_weights),
            (m.beta, m.run.trials, m.run.max_iters, m.restart_stall, m.join_weights)
        );
    }

    #[test]
    fn run_options_a_method_does_not_use_are_refused() {
        let e = SolveSpec::from_given(&given(json!({"method": "scan", "trials": 4}))).unwrap_err();
        assert_eq!(e.to_string(), "--trials is an option of --method rrr, dm, dc, not of scan");
        let e = SolveSpec::from_given(&given(json!({"method": "rrr", "max_nodes": 10}))).unwrap_err();
        assert_eq!(e.key(), Some("max_nodes"));
        let e = SolveSpec::from_given(&given(json!({"method": "rrr", "adapter": ""}))).unwrap_err();
        assert_eq!(e.key(), Some("adapter"));
        let e = SolveSpec::from_given(&given(json!({"backend": "cpu", "adapter": "x"}))).unwrap_err();
        assert_eq!(e.key(), Some("adapter"));
        let e = SolveSpec::from_given(&given(json!({"solutions": "s.jsonl"}))).unwrap_err();
        assert_eq!(e.key(), Some("solutions"));
        // The same held for a spec built in code.
        let run = RunOptions { threads: Some(2), ..RunOptions::default() };
        let s = SolveSpec { method: MethodName::Backtrack.with_defaults(), run, ..Default::default() };
        assert!(s.check().is_err());
    }

    #[test]
    fn join_weights_read_both_ways() {
        assert_eq!("1,1,4".parse::<JoinWeights>(), Ok(JoinWeights([1.0, 1.0, 4.0])));
        assert!("1,1".parse::<JoinWeights>().is_err());
        assert!("1,0,4".parse::<JoinWeights>().is_err());
        let s = SolveSpec::from_given(&given(json!({"method": "rrr", "join_weights": [1, 2, 4]}))).unwrap();
        assert_eq!(s.method.f1().unwrap().1.join_weights, JoinWeights([1.0, 2.0, 4.0]));
        assert!(SolveSpec::from_given(&given(json!({"method": "rrr", "join_weights": [0, 2, 4]}))).is_err());
    }

    #[test]
    fn f32_reduced_costs_belong_to_the_maps_host_assignments() {
        let s = SolveSpec::from_given(&given(json!({"method": "rrr", "reduced_costs": "f32"}))).unwrap();
        assert_eq!(s.map_config(&Cancel::new()).unwrap().reduced_costs, crate::assign::Precision::F32);
        assert!(SolveSpec::from_given(&given(json!({"method": "alns", "reduced_costs": "f32"}))).is_err());
        let e = SolveSpec::from_given(&given(json!({"method": "dm", "reduced_costs": "f32", "assign": "gpu-jv"})));
        assert!(e.is_err());
    }
}
