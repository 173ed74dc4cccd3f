//! Running a ladder: one job through [`crate::solve::solve`] into its record, the request of
//! `concur ladder` checked into a [`Ladder`], and [`run`], the workers that take the planned
//! runs in order, append each finished record and honour the stopping rules and a deadline.

use super::records::runs_on_file;
use super::{
    Config, Instance, Job, MethodSpec, Part, Record, Shard, Tally, load_instances, parse_config, plan, read_folder,
    read_records, results_path, tally,
};
use crate::cancel::Cancel;
use crate::verify;
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Runs one job (single-threaded) through [`crate::solve::solve`] on the CPU backend and
/// returns its record. Every claimed solution has passed the exact verifier.
pub fn run_job(inst: &Instance, spec: &MethodSpec, run: u64, base_seed: u64, cancel: &Cancel) -> Result<Record> {
    run_job_on(inst, spec, run, base_seed, None, cancel)
}

/// [`run_job`], with the machine a CPU run records as its `device` (a GPU run records its
/// adapter). A method with `backend = "gpu"` runs on the GPU backend (an error without a
/// usable adapter, or for a spec the GPU backend refuses); its `trials` (default 1) make
/// the batch. `cancel` ends the run early, as at its time limit.
pub fn run_job_on(
    inst: &Instance,
    spec: &MethodSpec,
    run: u64,
    base_seed: u64,
    machine: Option<&str>,
    cancel: &Cancel,
) -> Result<Record> {
    let p = &inst.puzzle;
    let seed = crate::rng::trial_seed(base_seed, run);
    let mut one = spec.spec.clone();
    one.seed = seed;
    if crate::solve::run_key_methods("threads").is_some_and(|m| m.contains(&one.name())) {
        one.threads = Some(1);
    }
    if one.is_map() && !spec.given.contains_key("trials") {
        one.trials = 1;
    }
    let fail = |e: &dyn std::fmt::Display| Error::Run { instance: inst.name.clone(), reason: e.to_string() };
    let selected = crate::solve::pick_backend(&one).map_err(|e| fail(&e))?;
    let backend = selected.backend;
    let device = if backend.is_gpu() { Some(backend.name()) } else { machine.map(String::from) };
    let s = crate::solve::solve(p, &one, backend.as_ref(), cancel, &mut |_| {}).map_err(|e| fail(&e))?;
    // The best score, recomputed from the board by the exact verifier.
    let best = s.report.board.as_ref().map_or(0, |b| verify::check(p, b).score);
    Ok(Record {
        instance: inst.name.clone(),
        width: p.width(),
        height: p.height(),
        colors: p.num_colors() - 1,
        method: one.name().name().to_string(),
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
        distinct_solutions: s.distinct_solutions,
        trials: (one.is_map() && one.trials > 1).then_some(one.trials as u64),
        device,
    })
}

/// What `concur ladder` was asked for, as given on the command line; [`Request::check`]
/// turns it into a [`Ladder`] ready to run.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "application", derive(clap::Args))]
pub struct Request {
    /// The ladder's config (TOML or JSON, detected from the content).
    pub config: PathBuf,
    /// The folder its results go to: one JSON line per finished run.
    #[cfg_attr(feature = "application", arg(long))]
    pub out: PathBuf,
    /// Run only shard K of N (1-based): disjoint shares whose union is the whole ladder.
    #[cfg_attr(feature = "application", arg(long))]
    pub shard: Option<Shard>,
    /// Skip runs already on file in DIR (the unsharded results or any shard's).
    #[cfg_attr(feature = "application", arg(long))]
    pub resume: bool,
    /// Run only the instances of at most this many cells (a part of the ladder).
    #[cfg_attr(feature = "application", arg(long))]
    pub max_cells: Option<usize>,
    /// Run only the methods of these labels, comma-separated (a part of the ladder).
    #[cfg_attr(feature = "application", arg(long, value_delimiter = ','))]
    pub methods: Vec<String>,
    /// Run only the first N runs of each method and instance (a shallow pass; a later
    /// --resume deepens it).
    #[cfg_attr(feature = "application", arg(long))]
    pub runs: Option<u64>,
    /// Folder that relative instance paths start from (default: $CONCUR_PUZZLES or
    /// ../shared/puzzles).
    #[cfg_attr(feature = "application", arg(long))]
    pub puzzles: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[cfg_attr(feature = "application", arg(long))]
    pub threads: Option<usize>,
    /// Start no run after SECS seconds from now, and cut each run's time limit to end by
    /// then (the run records the limit it ran under), so a stop at a known time loses
    /// nothing.
    #[cfg_attr(feature = "application", arg(long, value_name = "SECS"))]
    pub deadline: Option<f64>,
}

/// A ladder request that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// A deadline that is not a positive number of seconds (below 1e9).
    #[error("--deadline {0}: need a positive number of seconds")]
    Deadline(f64),
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
    Output(#[from] crate::limits::LimitError),
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
    /// Worker threads, within the cores (None: rayon's pool).
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
    pub fn run(
        &self,
        cancel: &Cancel,
        progress: impl Fn(&Record, Done) + Sync + Send,
    ) -> std::result::Result<Vec<Record>, RequestError> {
        let go = || {
            let at = Where { shard: self.shard, resume: self.resume, part: &self.part };
            run(&self.config, &self.puzzle_dir, &self.out, at, cancel, progress)
        };
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

/// Which runs of a ladder a call does: its shard, whether it resumes, and its part.
#[derive(Clone, Copy, Debug)]
pub struct Where<'a> {
    /// The shard of the runs, if any.
    pub shard: Option<Shard>,
    /// Go on from the runs on file (else a results file that holds runs is an error).
    pub resume: bool,
    /// The part of the shard's runs to do.
    pub part: &'a Part,
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

/// Runs a ladder into `out`. With `at.resume`, runs already on file in `out` (in the
/// unsharded results file or any shard's) are skipped, so a ladder begun whole can be
/// finished in shards and the other way round; without it an existing non-empty results file
/// is an error (nothing is overwritten). `at.part` leaves out the larger instances, the other
/// methods or the later runs (a part of the ladder; a later call without it runs the rest).
/// Runs start smallest board first (the plan's order within a board), so a part stopped early
/// has finished the small sizes. `progress` sees each finished record with how far the call
/// has come. Returns the records written by this call.
///
/// Once `cancel` is tripped no new run starts, and a run that it cut short is not written (a
/// solved one is): the file holds only whole runs of their full budget, and `resume` picks up
/// the rest.
pub fn run(
    cfg: &Config,
    puzzle_dir: &Path,
    out: &Path,
    at: Where<'_>,
    cancel: &Cancel,
    progress: impl Fn(&Record, Done) + Sync,
) -> Result<Vec<Record>> {
    let Where { shard, resume, part } = at;
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
    if !resume && !read_records(&path)?.is_empty() {
        return Err(Error::results(format!("{} already holds results; use --resume to continue it", path.display())));
    }
    let done = if resume { runs_on_file(out)? } else { HashSet::new() };
    // Drop a torn last line before appending.
    if let Ok(text) = std::fs::read_to_string(&path)
        && !text.is_empty()
        && !text.ends_with('\n')
    {
        let keep = text.rfind('\n').map_or(0, |i| i + 1);
        std::fs::write(&path, &text[..keep]).map_err(|e| Error::io("repair", &path, e))?;
    }
    let file =
        std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(|e| Error::io("open", &path, e))?;
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
    let started = std::time::Instant::now();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = jobs.len();
    let run_one = |j: &Job| -> Result<Option<Record>> {
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
        if let Some(d) = part.deadline {
            let left = d.saturating_duration_since(std::time::Instant::now()).as_secs_f64();
            let budget = spec.spec.time_limit.unwrap_or(f64::INFINITY);
            if left < MIN_DEADLINE_RUN_S.min(budget) {
                finished();
                return Ok(None);
            }
            if left < budget {
                spec.spec.time_limit = Some(left.floor());
            }
        }
        let rec = run_job_on(inst, &spec, j.run, cfg.seed, cfg.machine.as_deref(), cancel)?;
        // A run cut short by a stop request is not a sample of its budget: leave it out,
        // so that `--resume` runs it again. A run that solved before the stop stands.
        if cancel.is_cancelled() && !rec.solved {
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
                return Err(Error::io(
                    "append to",
                    &path,
                    format!("{e}; every run on file is whole: --resume goes on from it"),
                ));
            }
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
    let records = results.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(records.into_iter().collect::<Result<Vec<_>>>()?.into_iter().flatten().collect())
}
