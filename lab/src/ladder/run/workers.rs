//! Running a ladder: one job through [`concur::solve::solve`] into its record, the request of
//! `concur ladder` checked into a [`Ladder`], and [`run`], the workers that take the planned
//! runs in order, append each finished record and honour the stopping rules and a deadline.
//!
//! A stop request (a signal) loses no work: each run in flight is written as a part, marked
//! `interrupted` with the reason, and `--resume` continues it as its next part under the same
//! key, with what is left of its budget ([`Continuation`]).

use super::config::{Config, MethodSpec, Spent, Tally, parse_config};
use super::on_file::{OnFile, Parts};
use super::plan::{Instance, Job, Part, Shard, load_instances, plan};
use super::provenance::Machine;
use super::records::{FoundAt, Record, read_folder, read_records, results_path, tally};
use super::shard_file::ShardFile;
use concur::cancel::Cancel;
use concur::error::{Error, Result};
use concur::verify;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Runs one job (single-threaded) through [`concur::solve::solve`] on the CPU backend and
/// returns its record. Every claimed solution has passed the exact verifier. A method with
/// `backend = "gpu"` runs on the GPU backend (an error without a usable adapter, or for a
/// spec the GPU backend refuses); its `trials` (default 1) make the batch. `cancel` ends the
/// run early, as at its time limit; the record then says so (`interrupted`, with the token's
/// reason, and `part` 1).
pub fn run_job(inst: &Instance, spec: &MethodSpec, run: u64, base_seed: u64, cancel: &Cancel) -> Result<Record> {
    run_part(inst, spec, run, base_seed, None, cancel, None, None).map(|(r, _)| r)
}

/// Where a map's batch saved at a stop waits for its run's next part: `out/state/`, one JSON
/// file per (run key, part that saved it).
pub fn state_path(out: &Path, key: &(String, String, u64), part: u32) -> PathBuf {
    let h = concur::hash::Fnv1a::new().bytes(key.0.as_bytes()).word(0).bytes(key.1.as_bytes()).word(key.2).finish();
    out.join("state").join(format!("{h:016x}-run{}-part{part}.json", key.2))
}

/// Writes a saved batch whole or not at all (a temporary file synced, then renamed).
fn save_state(path: &Path, snapshot: &concur::backend::MapSnapshot) -> std::io::Result<()> {
    use std::io::Write;
    let text = snapshot.to_json().map_err(std::io::Error::other)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// How a run cut short goes on: its next part's number and what its parts on file spent.
#[derive(Clone, Debug, PartialEq)]
pub struct Continuation {
    /// The part to run (2, 3, ...).
    pub part: u32,
    /// What the parts on file spent.
    pub spent: Parts,
}

impl Continuation {
    /// The seed of a fresh part: the run's own seed for part 1, else one derived from
    /// (seed, run, part), so that no part repeats another's draws.
    pub fn seed(run_seed: u64, part: u32) -> u64 {
        if part <= 1 { run_seed } else { concur::rng::trial_seed(run_seed, u64::from(part)) }
    }

    /// The spec of the part: `one`'s budget less what the parts on file spent (seconds
    /// under a time limit; iterations per trial of a map, nodes of a tree search, moves or
    /// iterations of a local search, where capped), and its seed. None when nothing is
    /// left of the budget.
    pub fn budget(&self, one: &mut concur::solve::SolveSpec) -> Option<()> {
        let spent = &self.spent;
        if let Some(t) = one.run.time_limit {
            let left = t - spent.wall_s;
            if left < 0.5 {
                return None;
            }
            one.run.time_limit = Some(left);
        }
        if one.is_map() {
            let iters = one.map_iters();
            if iters != u64::MAX {
                let per_trial = spent.work / one.run.trials.max(1) as u64;
                one.run.max_iters = Some(iters.checked_sub(per_trial).filter(|&n| n > 0)?);
            }
        } else if let Some(cap) = one.run.max_iters {
            one.run.max_iters = Some(cap.checked_sub(spent.work).filter(|&n| n > 0)?);
        }
        if let Some(cap) = one.run.max_nodes {
            one.run.max_nodes = Some(cap.checked_sub(spent.work).filter(|&n| n > 0)?);
        }
        one.run.seed = Self::seed(one.run.seed, self.part);
        Some(())
    }
}

/// One part of a run: the whole run (`cont` None), or its continuation (an error when nothing
/// is left of its budget), with the CPU seconds of the thread that ran it. A CPU run records
/// `machine` as its `device` (a GPU run records its adapter). With `out`, a map on
/// the CPU saves its batch there when a stop cuts it short ([`state_path`]), and a
/// continuation restores the batch its previous part saved (else it starts fresh).
#[allow(clippy::too_many_arguments, reason = "one part's facts")]
fn run_part(
    inst: &Instance,
    spec: &MethodSpec,
    run: u64,
    base_seed: u64,
    machine: Option<&str>,
    cancel: &Cancel,
    cont: Option<&Continuation>,
    out: Option<&Path>,
) -> Result<(Record, Option<f64>)> {
    let p = &inst.puzzle;
    let seed = concur::rng::trial_seed(base_seed, run);
    let mut one = spec.spec.clone();
    one.run.seed = seed;
    if concur::solve::run_key_methods("threads").is_some_and(|m| m.contains(&one.name())) {
        one.run.threads = Some(1);
    }
    if one.is_map() && !spec.given.contains_key("trials") {
        one.run.trials = 1;
    }
    let fail = |e: &dyn std::fmt::Display| Error::Run { instance: inst.name.clone(), reason: e.to_string() };
    let key = (inst.name.clone(), spec.label(), run);
    let selected = concur::solve::pick_backend(&one).map_err(|e| fail(&e))?;
    let backend = selected.backend;
    // A map on the CPU saves its batch at a stop, and its next part goes on from it.
    let saves = one.is_map() && !backend.is_gpu() && out.is_some();
    one.save_at_stop = saves;
    let restored = match (cont, out) {
        (Some(c), Some(out)) if saves => std::fs::read_to_string(state_path(out, &key, c.part - 1))
            .ok()
            .and_then(|t| concur::backend::MapSnapshot::from_json(&t).ok()),
        _ => None,
    };
    let continued = match (cont, &restored) {
        (None, _) => None,
        (Some(c), Some(s)) => {
            // The same run, from where it stopped: its seed and per-trial budget stand, only
            // the seconds left change.
            if let Some(t) = one.run.time_limit {
                one.run.time_limit = Some((t - c.spent.wall_s).max(0.5));
            }
            one.resume = Some(s.clone());
            Some("restored")
        }
        (Some(c), None) => {
            if c.budget(&mut one).is_none() {
                return Err(fail(&"nothing is left of the run's budget"));
            }
            Some("fresh")
        }
    };
    let device = if backend.is_gpu() { Some(backend.name()) } else { machine.map(String::from) };
    let s = concur::solve::solve(p, &one, backend.as_ref(), cancel, &mut |_| {}).map_err(|e| fail(&e))?;
    let cpu_s = s.cpu_s;
    if let (Some(snapshot), Some(out)) = (&s.snapshot, out) {
        // Saved before the part's line is written: a part on file whose state is missing (a
        // failed write) is continued fresh, which the statistics allow (docs/scaling.md).
        let part = cont.map_or(1, |c| c.part);
        let _ = save_state(&state_path(out, &key, part), snapshot);
    }
    // The best score, recomputed from the board by the exact verifier.
    let best = s.report.board.as_ref().map_or(0, |b| verify::check(p, b).score);
    // A stop request cut the run short unless it had ended by itself: a run that stops at its
    // first solution and found it is whole.
    let rate_mode = s.solutions.is_some();
    let interrupted =
        (s.cancelled && (rate_mode || !s.report.solved)).then(|| cancel.reason().unwrap_or("cancelled").to_string());
    let part = match cont {
        Some(c) => Some(c.part),
        None => interrupted.is_some().then_some(1),
    };
    Ok(Record {
        instance: inst.name.clone(),
        width: p.width(),
        height: p.height(),
        colors: p.num_colors() - 1,
        method: one.name(),
        label: spec.label(),
        params: spec.params(),
        run,
        seed: one.run.seed,
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
        distinct_solutions: s.distinct_solutions,
        trials: (one.is_map() && one.run.trials > 1).then_some(one.run.trials as u64),
        device,
        part,
        interrupted,
        continued: continued.map(String::from),
        found: s
            .found
            .iter()
            .flatten()
            .map(|f| FoundAt { trial: f.trial as u64, at: f.trial_iteration, length: f.segment_iterations })
            .collect(),
        provenance: None,
    })
    .map(|r| (r, cpu_s))
}

/// What `concur ladder` was asked for, as given on the command line; [`Request::check`]
/// turns it into a [`Ladder`] ready to run.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct Request {
    /// The ladder's config (TOML or JSON, detected from the content).
    pub config: PathBuf,
    /// The folder its results go to: one JSON line per finished run.
    #[cfg_attr(feature = "clap", arg(long))]
    pub out: PathBuf,
    /// Run only shard K of N (1-based): disjoint shares whose union is the whole ladder.
    #[cfg_attr(feature = "clap", arg(long))]
    pub shard: Option<Shard>,
    /// Skip runs already on file in DIR (the unsharded results or any shard's).
    #[cfg_attr(feature = "clap", arg(long))]
    pub resume: bool,
    /// Run only the instances of at most this many cells (a part of the ladder).
    #[cfg_attr(feature = "clap", arg(long))]
    pub max_cells: Option<usize>,
    /// Run only the methods of these labels, comma-separated (a part of the ladder).
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub methods: Vec<String>,
    /// Run only the first N runs of each method and instance (a shallow pass; a later
    /// --resume deepens it).
    #[cfg_attr(feature = "clap", arg(long))]
    pub runs: Option<u64>,
    /// Folder that relative instance paths start from (default: $CONCUR_PUZZLES or
    /// ../shared/puzzles).
    #[cfg_attr(feature = "clap", arg(long))]
    pub puzzles: Option<PathBuf>,
    /// Worker threads (default: every core this process may use: the scheduler's
    /// SLURM_CPUS_PER_TASK where set, else the affinity mask and cgroup quota).
    #[cfg_attr(feature = "clap", arg(long))]
    pub threads: Option<usize>,
    /// When another process holds this shard's results file, wait up to SECS seconds for it
    /// to let go (a replacement pod starting while the old one stops) instead of exiting 2.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SECS"))]
    pub wait_lock: Option<f64>,
    /// Under Slurm, when a signal stops the ladder with runs left, requeue this job
    /// (`scontrol requeue $SLURM_JOB_ID`) after writing, so that it comes back and resumes
    /// without anyone's help. Needs the job's `--requeue`.
    #[cfg_attr(feature = "clap", arg(long))]
    pub requeue: bool,
    /// Start no run after SECS seconds from now, and cut each run's time limit to end by
    /// then (the run records the limit it ran under), so a stop at a known time loses
    /// nothing.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SECS"))]
    pub deadline: Option<f64>,
}

/// A ladder request that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A deadline that is not a positive number of seconds (below 1e9).
    #[error("--deadline {0}: need a positive number of seconds")]
    Deadline(f64),
    /// A lock wait that is not a number of seconds from 0 to 1e9.
    #[error("--wait-lock {0}: need a number of seconds from 0 to 1e9")]
    WaitLock(f64),
    /// The config file cannot be read.
    #[error("cannot read {path}")]
    Read {
        /// The config file.
        path: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The config file is not UTF-8 text.
    #[error("{path}: not text")]
    NotText {
        /// The config file.
        path: String,
        /// Where the text breaks.
        #[source]
        source: std::str::Utf8Error,
    },
    /// A config that does not parse or check ([`parse_config`]).
    #[error("{path}")]
    Config {
        /// The config file.
        path: String,
        /// What [`parse_config`] refused ([`Error::Config`]).
        #[source]
        source: Error,
    },
    /// `--threads 0`.
    #[error("--threads must be at least 1")]
    NoThreads,
    /// Every run is timed on one core: more workers than cores would slow them all and skew
    /// the results, so a ladder refuses them rather than capping.
    #[error("--threads {threads} is more than the {cores} cores here; a ladder times each run on a core of its own")]
    Threads {
        /// The threads asked for.
        threads: usize,
        /// The cores here.
        cores: usize,
    },
    /// The results folder takes no files.
    #[error(transparent)]
    Output(#[from] concur::limits::LimitError),
    /// The worker pool could not be built.
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
    /// The config, parsed and checked.
    pub config: Config,
    /// The folder relative instance paths start from ([`puzzle_folder`]).
    pub puzzle_dir: PathBuf,
    /// The results folder, checked to take files.
    pub out: PathBuf,
    /// This call's shard of the runs, if any.
    pub shard: Option<Shard>,
    /// Go on from the runs on file instead of refusing a results file that holds some.
    pub resume: bool,
    /// The part of the runs this call does.
    pub part: Part,
    /// Worker threads, within the cores.
    pub threads: usize,
    /// What decided the worker threads: `--threads`, or [`concur::limits::cores_decided`]'s
    /// reading.
    pub threads_from: &'static str,
    /// How long to wait for another writer of the shard to let go (None: not at all).
    pub wait_lock: Option<std::time::Duration>,
    /// Requeue the scheduler's job after a stop with runs left (`--requeue`).
    pub requeue: bool,
}

impl Request {
    /// Checks the request before any run, in this order: the deadline a positive number of
    /// seconds, the config read and parsed, the part's method labels the config's, the
    /// threads at least one and within the cores, the results folder taking files.
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
        let labels: Vec<String> = config.methods.iter().map(MethodSpec::label).collect();
        if let Some(bad) = self.methods.iter().find(|m| !labels.contains(m)) {
            return Err(RequestError::Run(Error::config(format!(
                "no method is labelled {bad:?}; the labels are {}",
                labels.join(", ")
            ))));
        }
        let puzzle_dir = puzzle_folder(self.puzzles);
        let wait_lock = match self.wait_lock {
            None => None,
            Some(w) if w.is_finite() && (0.0..=1e9).contains(&w) => Some(std::time::Duration::from_secs_f64(w)),
            Some(w) => return Err(RequestError::WaitLock(w)),
        };
        if self.threads == Some(0) {
            return Err(RequestError::NoThreads);
        }
        let (cores, decided) = concur::limits::cores_decided();
        if let Some(threads) = self.threads.filter(|&t| t > cores) {
            return Err(RequestError::Threads { threads, cores });
        }
        let (threads, threads_from) = match self.threads {
            Some(t) => (t, "--threads"),
            None => (cores, decided),
        };
        concur::limits::output_dir(&self.out)?;
        let part = Part { max_cells: self.max_cells, methods: self.methods, runs: self.runs, deadline };
        Ok(Ladder {
            config,
            puzzle_dir,
            out: self.out,
            shard: self.shard,
            resume: self.resume,
            part,
            threads,
            threads_from,
            wait_lock,
            requeue: self.requeue,
        })
    }
}

impl Ladder {
    /// [`run`] on its worker threads.
    pub fn run(
        &self,
        cancel: &Cancel,
        progress: impl Fn(&Record, Done) + Sync + Send,
    ) -> std::result::Result<Vec<Record>, RequestError> {
        let go = || {
            let at = Where { shard: self.shard, resume: self.resume, part: &self.part, wait_lock: self.wait_lock };
            run(&self.config, &self.puzzle_dir, &self.out, at, cancel, progress)
        };
        Ok(rayon::ThreadPoolBuilder::new().num_threads(self.threads).build()?.install(go)?)
    }

    /// Whether runs of this call are left to do: false once every planned run of its shard
    /// and part is on file whole, or its group's stopping rule is reached. A ladder stopped
    /// (by a signal or its deadline) with runs left is resumable.
    pub fn runs_left(&self) -> Result<bool> {
        let cfg = &self.config;
        let instances = load_instances(cfg, &self.puzzle_dir)?;
        let on_file = OnFile::read(&self.out)?;
        let pooled = pooled_tally(cfg)?;
        let labels: Vec<String> = cfg.methods.iter().map(MethodSpec::label).collect();
        Ok(planned(cfg, &instances, self.shard, &self.part, &on_file, true).iter().any(|(j, _)| {
            let inst = &instances[j.instance];
            !rule_reached(cfg, &pooled, on_file.tally(), &labels[j.method], &inst.name, inst.puzzle.cells())
        }))
    }

    /// The file this call's results go to ([`results_path`]).
    pub fn results_path(&self) -> PathBuf {
        results_path(&self.out, self.shard)
    }
}

/// The shortest run a deadline leaves room for, in seconds.
pub const MIN_DEADLINE_RUN_S: f64 = 60.0;

/// Which runs of a ladder a call does: its shard, whether it resumes, and its part.
#[derive(Clone, Copy, Debug)]
pub struct Where<'a> {
    /// The shard of the runs, if any.
    pub shard: Option<Shard>,
    /// Go on from the runs on file (else a results file that holds runs is an error).
    pub resume: bool,
    /// The part of the shard's runs to do.
    pub part: &'a Part,
    /// How long to wait for another writer of the shard's results file to let go (None:
    /// refuse at once).
    pub wait_lock: Option<std::time::Duration>,
}

/// How far a ladder call has come: jobs done (run, or skipped by a stopping rule) of its
/// planned total, and its seconds so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Done {
    /// Jobs done: run, or skipped by a stopping rule.
    pub done: usize,
    /// Jobs planned for this call.
    pub total: usize,
    /// Seconds since the call started.
    pub elapsed_s: f64,
}

impl Done {
    /// The seconds left at the mean pace so far (None before the first job).
    pub fn eta_s(&self) -> Option<f64> {
        (self.done > 0).then(|| self.elapsed_s / self.done as f64 * (self.total - self.done) as f64)
    }
}

/// The jobs of a call in the order they run, each with its continuation when parts of it are
/// on file (with `resume`; a run done is left out).
fn planned(
    cfg: &Config,
    instances: &[Instance],
    shard: Option<Shard>,
    part: &Part,
    on_file: &OnFile,
    resume: bool,
) -> Vec<(Job, Option<Continuation>)> {
    let labels: Vec<String> = cfg.methods.iter().map(MethodSpec::label).collect();
    let cells: Vec<usize> = instances.iter().map(|i| i.puzzle.cells()).collect();
    let mut jobs: Vec<(Job, Option<Continuation>)> = plan(cfg, &cells, shard)
        .into_iter()
        .filter(|j| part.max_cells.is_none_or(|m| cells[j.instance] <= m))
        .filter(|j| part.methods.is_empty() || part.methods.contains(&labels[j.method]))
        .filter(|j| part.runs.is_none_or(|n| j.run < cfg.first_run + n))
        .filter_map(|j| {
            if !resume {
                return Some((j, None));
            }
            match on_file.parts(&(instances[j.instance].name.clone(), labels[j.method].clone(), j.run)) {
                None => Some((j, None)),
                Some(p) if p.done => None,
                Some(p) => Some((j, Some(Continuation { part: p.parts + 1, spent: p.clone() }))),
            }
        })
        .collect();
    // Smallest boards first; within a size, run by run, so that a stopping rule sees every
    // instance and method of the size advance together.
    jobs.sort_by_key(|(j, _)| (cells[j.instance], j.run, j.method, j.instance));
    jobs
}

/// The tally of the config's pooled folders.
fn pooled_tally(cfg: &Config) -> Result<Tally> {
    let mut pooled = Tally::new();
    for dir in &cfg.pool {
        tally(&read_folder(dir)?, &mut pooled);
    }
    Ok(pooled)
}

/// Whether the stopping rule of a run of `label` on `instance` (of `cells` cells) is reached,
/// counting the pooled folders and the records on file together (false without a rule).
fn rule_reached(cfg: &Config, pooled: &Tally, on_file: &Tally, label: &str, instance: &str, cells: usize) -> bool {
    let Some(rule) = cfg.stops.iter().find(|s| s.applies(label, cells)) else { return false };
    let group = rule.group(label, instance, cells);
    let (x, y) = (pooled.get(&group).copied().unwrap_or_default(), on_file.get(&group).copied().unwrap_or_default());
    rule.reached(Spent {
        solutions: x.solutions + y.solutions,
        core_hours: x.core_hours + y.core_hours,
        work: x.work + y.work,
    })
}

/// Runs a ladder into `out`. With `at.resume`, runs already on file in `out` (in the
/// unsharded results file or any shard's) are skipped, so a ladder begun whole can be
/// finished in shards and the other way round; without it an existing non-empty results file
/// is an error (nothing is overwritten). `at.part` leaves out the larger instances, the other
/// methods or the later runs (a part of the ladder; a later call without it runs the rest).
/// Runs start smallest board first (the plan's order within a board), so a part stopped early
/// has finished the small sizes. `progress` sees each finished record with how far the call
/// has come. Returns the records written by this call.
///
/// The shard's results file is held by this call alone (an advisory lock, [`ShardFile`]); a
/// torn last line is cut off in place, and lines reach the disk within
/// [`SYNC_EVERY`](super::SYNC_EVERY). The records on file are read once, then followed as
/// other shards append ([`OnFile`]).
///
/// Once `cancel` is tripped no new run starts, and each run it cut short is written as a
/// part: its work, solutions and seconds so far, `interrupted` with the token's reason. With
/// `resume`, such a run goes on as its next part under the same key, with what is left of its
/// budget ([`Continuation`]), so no counted work is done twice.
pub fn run(
    cfg: &Config,
    puzzle_dir: &Path,
    out: &Path,
    at: Where<'_>,
    cancel: &Cancel,
    progress: impl Fn(&Record, Done) + Sync,
) -> Result<Vec<Record>> {
    let Where { shard, resume, part, wait_lock } = at;
    if let Some(s) = shard
        && !(1..=s.n).contains(&s.k)
    {
        return Err(Error::config(format!("shard {}/{}: need 1 <= K <= N", s.k, s.n)));
    }
    let labels: Vec<String> = cfg.methods.iter().map(MethodSpec::label).collect();
    if let Some(bad) = part.methods.iter().find(|m| !labels.contains(m)) {
        return Err(Error::config(format!("no method is labelled {bad:?}; the labels are {}", labels.join(", "))));
    }
    let instances = load_instances(cfg, puzzle_dir)?;
    std::fs::create_dir_all(out).map_err(|e| Error::io("create", out, e))?;
    let path = results_path(out, shard);
    // One writer per shard: the lock is taken before anything on file is read.
    let file = ShardFile::open(&path, wait_lock)?;
    if !resume && !read_records(&path)?.is_empty() {
        return Err(Error::results(format!("{} already holds results; use --resume to continue it", path.display())));
    }
    let file = Mutex::new(file);
    // Set when a line could not be written: no run starts after it, and nothing more is
    // written, so the file keeps only whole lines and `--resume` goes on from it.
    let write_failed = std::sync::atomic::AtomicBool::new(false);
    let on_file = OnFile::read(out)?;
    let jobs = planned(cfg, &instances, shard, part, &on_file, resume);
    let on_file = Mutex::new(on_file);
    let pooled = pooled_tally(cfg)?;
    // Whether a group's stopping rule is reached, counting the pooled folders and every
    // result on file in `out` now (other shards' too: what they appended since the last look).
    let stopped = |label: &str, instance: &str, c: usize| -> Result<bool> {
        if !cfg.stops.iter().any(|s| s.applies(label, c)) {
            return Ok(false);
        }
        let mut on = on_file.lock().unwrap_or_else(|e| e.into_inner());
        on.refresh()?;
        Ok(rule_reached(cfg, &pooled, on.tally(), label, instance, c))
    };
    let machine = Machine::here(rayon::current_num_threads());
    let started = std::time::Instant::now();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = jobs.len();
    let run_one = |(j, cont): &(Job, Option<Continuation>)| -> Result<Option<Record>> {
        if cancel.is_cancelled() || write_failed.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(None);
        }
        let finished = || Done {
            done: done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
            total,
            elapsed_s: started.elapsed().as_secs_f64(),
        };
        let inst = &instances[j.instance];
        let c = inst.puzzle.cells();
        if stopped(&labels[j.method], &inst.name, c)? {
            finished();
            return Ok(None);
        }
        let mut spec = cfg.method_for(&cfg.methods[j.method], c);
        if let Some(cont) = cont {
            // Nothing left of the budget (the stop came at its very end): the run is done.
            let mut probe = spec.spec.clone();
            if cont.budget(&mut probe).is_none() {
                finished();
                return Ok(None);
            }
        }
        if let Some(d) = part.deadline {
            let left = d.saturating_duration_since(std::time::Instant::now()).as_secs_f64();
            let budget = spec.spec.run.time_limit.unwrap_or(f64::INFINITY);
            if left < MIN_DEADLINE_RUN_S.min(budget) {
                finished();
                return Ok(None);
            }
            if left < budget {
                spec.spec.run.time_limit = Some(left.floor());
            }
        }
        let clock = machine.start();
        let (mut rec, cpu_s) =
            run_part(inst, &spec, j.run, cfg.seed, cfg.machine.as_deref(), cancel, cont.as_ref(), Some(out))?;
        rec.provenance = Some(clock.finish(cpu_s));
        // A part stopped before it did anything is not worth a line.
        if rec.interrupted.is_some() && rec.work == 0 && !rec.solved {
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
            if let Err(e) = f.append(&line) {
                write_failed.store(true, std::sync::atomic::Ordering::Relaxed);
                return Err(Error::io(
                    "append to",
                    &path,
                    format!("{e}; every run on file is whole: --resume goes on from it"),
                ));
            }
        }
        // The previous part's saved batch has served.
        if let Some(c) = cont {
            let _ = std::fs::remove_file(state_path(out, &rec.key(), c.part - 1));
        }
        progress(&rec, finished());
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
    let synced = file.into_inner().unwrap_or_else(|e| e.into_inner()).sync();
    let records = results.into_inner().unwrap_or_else(|e| e.into_inner());
    let records = records.into_iter().collect::<Result<Vec<_>>>()?.into_iter().flatten().collect();
    synced.map_err(|e| Error::io("sync", &path, e))?;
    Ok(records)
}
