//! `concur bench`: CPU vs GPU throughput of every kernel and of whole iterations, on the
//! same work (same generated puzzle, same batch, same random states).
//!
//! Units: trial-iterations per second (one kernel applied to one trial counts one), and GB/s
//! of per-trial state traffic (the bytes each kernel must read and write per trial; the
//! shared tables, which stay in cache, are not counted). On a software Vulkan driver these
//! numbers only show that the harness works; speed claims need a real GPU.
//!
//! Every measurement runs once to warm up, then as many repetitions as fit its time budget.

use super::{BackendChoice, EngineError, GpuError, select};
use crate::assign::{Assigner, Precision, Real};
use crate::dc::{self, DcConfig, DivideScratch, Layout, project};
use crate::f1::map::{self, MapConfig};
use crate::f1::project::F1;
use crate::limits::{LimitError, MemoryBudget, human};
use crate::puzzle::Puzzle;
use crate::puzzle::generate::{GenerateOptions, generate};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub sizes: Vec<(usize, usize)>,
    pub batches: Vec<usize>,
    /// "f1", "dc" or both.
    pub formulations: Vec<String>,
    pub cpu: bool,
    pub gpu: bool,
    /// Time budget of one measurement.
    pub budget: Duration,
    /// Skip a (size, batch) whose batch state would exceed this many bytes.
    pub max_bytes: u64,
    pub seed: u64,
    pub adapter: Option<String>,
    /// At most this many trials per device chunk in the F2 GPU rows (None: as many as the
    /// binding limits allow). Smaller chunks keep each chunk's trial-minor arrays small.
    pub dc_chunk_trials: Option<usize>,
}

/// One measured line.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BenchRow {
    pub formulation: &'static str,
    pub size: String,
    pub batch: usize,
    pub kernel: &'static str,
    pub backend: &'static str,
    pub reps: usize,
    pub seconds: f64,
    pub trial_iters_per_s: f64,
    pub gb_per_s: f64,
    pub bytes_per_trial: u64,
    /// The F2 GPU rows' trials per device chunk, when capped (`--dc-chunk-trials`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_trials: Option<usize>,
    /// The `assign` rows: the class size n of the problems solved (one per trial).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class_n: Option<usize>,
    /// The F1 GPU `iteration` and `setup` rows: where the assignments ran (`cpu`, `gpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assign: Option<&'static str>,
    /// The F1 CPU `iteration` and `assign` rows run with f32 reduced costs: `f32`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reduced_costs: Option<&'static str>,
    /// `device-loop`: a kernel's device time inside whole iterations of the F1 device loop,
    /// from timestamp queries around its passes (`span`: the whole iterations, first pass's
    /// start to last pass's end; `gaps`: the span less the passes, the barriers between them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<&'static str>,
    /// The `device-loop` rows: device nanoseconds per trial-iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_ns: Option<f64>,
    /// Why a row could not be measured (e.g. an adapter without timestamp queries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Measures `f` (one repetition per call) within `budget`: warm-up, then repetitions.
fn measure(budget: Duration, mut f: impl FnMut() -> Result<(), EngineError>) -> Result<(usize, f64), EngineError> {
    f()?;
    let start = Instant::now();
    let mut reps = 0;
    while reps == 0 || start.elapsed() < budget {
        f()?;
        reps += 1;
    }
    Ok((reps, start.elapsed().as_secs_f64() / reps as f64))
}

#[allow(clippy::too_many_arguments, reason = "one row's fields")]
fn row(
    formulation: &'static str,
    p: &Puzzle,
    batch: usize,
    kernel: &'static str,
    backend: &'static str,
    (reps, secs): (usize, f64),
    bytes: u64,
    iters_per_rep: usize,
) -> BenchRow {
    let work = (batch * iters_per_rep) as f64;
    BenchRow {
        formulation,
        size: format!("{}x{}", p.width(), p.height()),
        batch,
        kernel,
        backend,
        reps,
        seconds: secs,
        trial_iters_per_s: work / secs,
        gb_per_s: work * bytes as f64 / secs / 1e9,
        bytes_per_trial: bytes,
        chunk_trials: None,
        class_n: None,
        assign: None,
        reduced_costs: None,
        profile: None,
        device_ns: None,
        note: None,
    }
}

/// Copies per submission when measuring the device's copy bandwidth.
#[cfg(feature = "gpu")]
const COPIES: usize = 8;

/// Repetitions and seconds per repetition.
type Measured = (usize, f64);

/// Iterations of the short and the long whole run ([`whole_iterations`]).
const SHORT: usize = 16;
const LONG: usize = 48;

/// Whole iterations as the solver runs them (status read back every iteration, boards when
/// they improve, rounds), without the fixed cost of a run (building the batch, the starts,
/// pipelines): runs of [`SHORT`] and [`LONG`] iterations are timed, and the difference is
/// the cost of `LONG - SHORT` iterations. Returns the per-iteration measurement and the fixed
/// cost of one run (both as (reps, seconds)). When noise makes the difference vanish, the
/// long run's mean per iteration (fixed cost included, so an overestimate) stands in.
fn whole_iterations(
    budget: Duration,
    mut run: impl FnMut(usize) -> Result<(), EngineError>,
) -> Result<(Measured, Measured), EngineError> {
    let (short_reps, short) = measure(budget, || run(SHORT))?;
    let (long_reps, long) = measure(budget, || run(LONG))?;
    let per_iter = (long - short) / (LONG - SHORT) as f64;
    let per_iter = if per_iter > 0.0 { per_iter } else { long / LONG as f64 };
    let fixed = (short - SHORT as f64 * per_iter).max(0.0);
    Ok(((long_reps, per_iter), (short_reps, fixed)))
}

/// The iteration and setup rows of [`whole_iterations`]: trial-iterations/s of the steady
/// state, and trials set up per second (no state traffic counted; no row when noise hides
/// the fixed cost).
fn iteration_rows(
    formulation: &'static str,
    p: &Puzzle,
    batch: usize,
    backend: &'static str,
    (iter, fixed): (Measured, Measured),
    bytes: u64,
) -> Vec<BenchRow> {
    let mut rows = vec![row(formulation, p, batch, "iteration", backend, iter, bytes, 1)];
    if fixed.1 > 0.0 {
        rows.push(row(formulation, p, batch, "setup", backend, fixed, 0, 1));
    }
    rows
}

fn random(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..len).map(|_| rng.random::<f32>()).collect()
}

/// The device's own copy bandwidth, the yardstick for the kernels' GB/s, two ways: `copy`,
/// a compute kernel copying one word per thread (memory as the kernels see it), and
/// `copy-transfer`, the API's buffer-to-buffer copy (on some drivers a transfer engine,
/// far below what the kernels reach: an H200 through Vulkan gave 832 GB/s). Several copies
/// per submission, so that the submission and the wait (about 0.6 ms on an H200 through
/// Vulkan, as long as one 256 MiB copy) do not count as copy time.
#[cfg(feature = "gpu")]
fn copy_rows(ctx: &super::gpu::GpuContext, budget: Duration) -> Result<Vec<BenchRow>, EngineError> {
    use super::gpu::LAYOUT_WGSL;
    use super::gpu::context::{dispatch, grid};
    // Within one binding, so that the kernel copies the same bytes as the transfer.
    let bytes = (256u64 << 20).min(ctx.max_buffer.min(ctx.max_binding) / 4 * 4);
    let (a, b) = (ctx.zeroed("copy a", bytes), ctx.zeroed("copy b", bytes));
    let module = ctx.module("layout", LAYOUT_WGSL);
    let pipe = ctx.pipeline(&module, "copy");
    let params = ctx.uniform("copy params", &[0u32, 0, 0, (bytes / 4) as u32]);
    let binds =
        [ctx.bind(&pipe, &[(0, &params), (1, &a), (2, &b)]), ctx.bind(&pipe, &[(0, &params), (1, &b), (2, &a)])];
    let mut rows = Vec::new();
    for (kernel, shader) in [("copy", true), ("copy-transfer", false)] {
        let m = measure(budget, || {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            for i in 0..COPIES {
                if shader {
                    dispatch(&mut enc, &pipe, &binds[i % 2], grid(bytes / 4));
                } else {
                    let (from, to) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
                    enc.copy_buffer_to_buffer(from, 0, to, 0, bytes);
                }
            }
            ctx.queue.submit([enc.finish()]);
            Ok(ctx.wait()?)
        })?;
        let m = (m.0, m.1 / COPIES as f64);
        rows.push(BenchRow {
            formulation: "-",
            size: "-".into(),
            batch: 1,
            kernel,
            backend: "gpu",
            reps: m.0,
            seconds: m.1,
            trial_iters_per_s: 1.0 / m.1,
            gb_per_s: 2.0 * bytes as f64 / m.1 / 1e9,
            bytes_per_trial: 2 * bytes,
            ..Default::default()
        });
    }
    Ok(rows)
}

/// What a plain `concur bench` measures: sizes, batches and backends chosen from the adapter
/// found, so that it ends within about a minute on any machine. The full sweep is
/// [`Plan::full`] (`--full`), and explicit lists override either.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub sizes: Vec<(usize, usize)>,
    pub batches: Vec<usize>,
    pub cpu: bool,
    pub gpu: bool,
    /// Why these, for the user.
    pub why: String,
}

impl Plan {
    /// The default for a machine with (`hardware_gpu`) or without a hardware adapter. Without
    /// one the GPU rows are left out: a software adapter's figures only show that the
    /// harness works, and it is slower than the CPU rows it would be compared with.
    pub fn default_for(hardware_gpu: bool) -> Plan {
        if hardware_gpu {
            Plan {
                sizes: vec![(8, 8), (16, 16)],
                batches: vec![4096],
                cpu: true,
                gpu: true,
                why: "a hardware GPU: 8x8 and 16x16 at 4,096 trials on the CPU and the GPU".into(),
            }
        } else {
            Plan {
                sizes: vec![(5, 5), (8, 8)],
                batches: vec![1, 64],
                cpu: true,
                gpu: false,
                why: "no hardware GPU: the CPU rows at 5x5 and 8x8 with 1 and 64 trials (--backends cpu,gpu adds a software adapter's rows)".into(),
            }
        }
    }

    /// Every size and batch of the GPU study (minutes to tens of minutes).
    pub fn full() -> Plan {
        Plan {
            sizes: vec![(5, 5), (8, 8), (16, 16)],
            batches: vec![1, 16, 256, 1024, 4096, 16384],
            cpu: true,
            gpu: true,
            why: "the full sweep".into(),
        }
    }
}

/// What `concur bench` was asked for, as given on the command line: the lists left out
/// (`None`) come from the [`Plan`].
#[derive(Clone, Debug, clap::Args)]
pub struct BenchRequest {
    /// Board sizes, comma separated (default: from the plan).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Option<Vec<String>>,
    /// Batch sizes (trials), comma separated (default: from the plan).
    #[arg(long, value_delimiter = ',')]
    pub batches: Option<Vec<usize>>,
    /// Formulations: f1 (RRR in edge-colour space), dc (divide and concur); `scan` adds the
    /// row scan's rows (placements per second on one core at 7x7, 8x8 and 16x16, in the
    /// rate column), e.g. `--formulations f1,dc,scan` for both in one table.
    #[arg(long, value_delimiter = ',', default_value = "f1,dc")]
    pub formulations: Vec<String>,
    /// Which backends to measure: cpu, gpu or both (default: from the plan).
    #[arg(long, value_delimiter = ',')]
    pub backends: Option<Vec<BackendChoice>>,
    /// The full sweep: 5x5, 8x8 and 16x16 at 1 to 16,384 trials on the CPU and the GPU
    /// (tens of minutes); explicit lists still override it.
    #[arg(long)]
    pub full: bool,
    /// Time budget per measurement, seconds.
    #[arg(long, default_value_t = 0.5)]
    pub budget: f64,
    /// Skip a size and batch whose state exceeds this many GiB.
    #[arg(long, default_value_t = 8.0)]
    pub max_gib: f64,
    /// Cap the trials per device chunk of the F2 GPU rows (default: as many as fit).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub dc_chunk_trials: Option<u64>,
    #[arg(long)]
    pub adapter: Option<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// A bench request that cannot run; each names its flag.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("--sizes: size {0:?} is not WxH")]
    NotWxH(String),
    #[error("--sizes: {0}")]
    SizeNumber(std::num::ParseIntError),
    #[error("--sizes: {w}x{h} is out of range: each side must be 2..={}", crate::puzzle::MAX_SIDE)]
    SizeRange { w: usize, h: usize },
    #[error("--batches: a batch must be at least 1 trial")]
    EmptyBatch,
    #[error("--formulations: unknown formulation {0:?} (f1, dc, scan)")]
    Formulation(String),
    #[error("--budget must be a positive number of seconds")]
    ZeroBudget,
    #[error("--max-gib must be a positive number, got {0}")]
    MaxGib(f64),
    /// The GPU asked for cannot be used.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// A budget past the bounded time limits, or a memory cap that cannot be read.
    #[error(transparent)]
    Limit(#[from] LimitError),
}

/// One `WxH`.
fn parse_size(s: &str) -> Result<(usize, usize), BenchError> {
    let (w, h) = s.split_once('x').ok_or_else(|| BenchError::NotWxH(s.to_string()))?;
    let number = |t: &str| t.trim().parse().map_err(BenchError::SizeNumber);
    Ok((number(w)?, number(h)?))
}

impl BenchOptions {
    /// The options of a `concur bench` request, checked before any step: the plan (the full
    /// sweep, or the default for the adapter found, probed only when a GPU may be measured),
    /// the explicit lists over it, the sizes, batches and formulations in range, a GPU asked
    /// for usable, the budget and `max_gib` positive. A state that would not fit the memory
    /// here is skipped as one over `max_gib` is. Also returns the lines to tell the user as
    /// the work starts (on stderr): a memory cap, the plan's reason when no list was given,
    /// and the steps and their least time.
    pub fn from_request(r: BenchRequest) -> Result<(BenchOptions, Vec<String>), BenchError> {
        let plan = if r.full {
            Plan::full()
        } else if r.backends.as_ref().is_some_and(|b| !b.contains(&BackendChoice::Gpu)) {
            // No GPU asked for: don't probe one.
            Plan::default_for(false)
        } else {
            Plan::default_for(select(BackendChoice::Auto, r.adapter.as_deref()).is_ok_and(|s| s.backend.is_gpu()))
        };
        let explicit = r.sizes.is_some() || r.batches.is_some() || r.backends.is_some();
        let backends = r.backends.unwrap_or_else(|| {
            [(plan.cpu, BackendChoice::Cpu), (plan.gpu, BackendChoice::Gpu)]
                .into_iter()
                .filter_map(|(on, b)| on.then_some(b))
                .collect()
        });
        let sizes = match r.sizes {
            Some(s) => s.iter().map(|s| parse_size(s)).collect::<Result<Vec<_>, _>>()?,
            None => plan.sizes.clone(),
        };
        let batches = r.batches.unwrap_or_else(|| plan.batches.clone());
        let side = 2..=crate::puzzle::MAX_SIDE;
        if let Some(&(w, h)) = sizes.iter().find(|(w, h)| !side.contains(w) || !side.contains(h)) {
            return Err(BenchError::SizeRange { w, h });
        }
        if batches.contains(&0) {
            return Err(BenchError::EmptyBatch);
        }
        if let Some(f) = r.formulations.iter().find(|f| !matches!(f.as_str(), "f1" | "dc" | "scan")) {
            return Err(BenchError::Formulation(f.clone()));
        }
        if backends.contains(&BackendChoice::Gpu) {
            select(BackendChoice::Gpu, r.adapter.as_deref())?;
        }
        let budget = crate::limits::seconds("--budget", r.budget)?;
        if budget.is_zero() {
            return Err(BenchError::ZeroBudget);
        }
        if !(r.max_gib > 0.0 && r.max_gib.is_finite()) {
            return Err(BenchError::MaxGib(r.max_gib));
        }
        let mut max_bytes = (r.max_gib * (1u64 << 30) as f64) as u64;
        let mut notes = Vec::new();
        if let Some(have) = MemoryBudget::here()?.bytes.filter(|&have| have < max_bytes) {
            notes.push(format!("concur bench: skipping states over the {} of memory available", human(have)));
            max_bytes = have;
        }
        let opts = BenchOptions {
            sizes,
            batches,
            formulations: r.formulations,
            cpu: backends.contains(&BackendChoice::Cpu),
            gpu: backends.contains(&BackendChoice::Gpu),
            budget,
            max_bytes,
            seed: r.seed,
            adapter: r.adapter,
            dc_chunk_trials: r.dc_chunk_trials.map(|c| c as usize),
        };
        if !explicit {
            notes.push(format!("concur bench: {}", plan.why));
        }
        notes.push(format!("concur bench: {} steps, at least {:.0} s", steps(&opts).len(), estimated_seconds(&opts)));
        Ok((opts, notes))
    }
}

impl BenchRow {
    /// The header of the text table whose lines are the rows' [`Display`](std::fmt::Display).
    pub fn table_header() -> String {
        format!(
            "{:<4} {:>6} {:>6} {:<10} {:<4} {:>14} {:>9} {:>12}",
            "form", "size", "batch", "kernel", "on", "trial-it/s", "GB/s", "s/rep"
        )
    }

    /// The kernel column: the kernel, its class size or where its assignments ran, its
    /// reduced costs, and `loop:` before a kernel timed inside the device loop.
    fn kernel_column(&self) -> String {
        let mut kernel = match (self.class_n, self.assign) {
            (Some(n), Some(a)) => format!("{}/n{n}/{a}", self.kernel),
            (Some(n), None) => format!("{}/n{n}", self.kernel),
            (None, Some(a)) => format!("{}/a-{a}", self.kernel),
            _ => self.kernel.to_string(),
        };
        if let Some(rc) = self.reduced_costs {
            kernel.push_str(&format!("-{rc}"));
        }
        if self.profile.is_some() {
            kernel = format!("loop:{kernel}");
        }
        kernel
    }
}

/// One line of the text table under [`BenchRow::table_header`].
impl std::fmt::Display for BenchRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:<4} {:>6} {:>6} {:<10} {:<4} {:>14.4e} {:>9.3} {:>12.4e}",
            self.formulation,
            self.size,
            self.batch,
            self.kernel_column(),
            self.backend,
            self.trial_iters_per_s,
            self.gb_per_s,
            self.seconds
        )?;
        if let Some(ns) = self.device_ns {
            write!(f, "  {ns:.1} device ns/trial-it")?;
        }
        if let Some(note) = &self.note {
            write!(f, "  ({note})")?;
        }
        Ok(())
    }
}

/// Timed measurements per (size, batch, formulation, backend), each one warm-up plus at least
/// a budget: the kernel rows and the two runs of [`whole_iterations`].
fn measurements(form: &str, gpu: bool) -> usize {
    match (form, gpu) {
        // The kernel rows, the two whole runs, and one assign row per class (three).
        ("f1", false) => 8,
        ("f1", true) => 11,
        ("dc", false) => 5,
        _ => 6,
    }
}

/// The steps [`run`] will take: (size, batch, formulation, backend is GPU), skipping those
/// over `max_bytes`, in order.
pub fn steps(opts: &BenchOptions) -> Vec<((usize, usize), usize, String, bool)> {
    let mut out = Vec::new();
    for &(w, h) in &opts.sizes {
        for &batch in &opts.batches {
            for form in &opts.formulations {
                let Some(bytes) = state_bytes(form, w, h) else {
                    continue;
                };
                if bytes * batch as u64 > opts.max_bytes {
                    continue;
                }
                for gpu in [false, true] {
                    if (gpu && opts.gpu) || (!gpu && opts.cpu) {
                        out.push(((w, h), batch, form.clone(), gpu));
                    }
                }
            }
        }
    }
    out
}

/// Batch state bytes per trial of a formulation at a size (None: cannot generate the size
/// or unknown formulation; [`run`] reports those).
fn state_bytes(form: &str, w: usize, h: usize) -> Option<u64> {
    let (p, _) =
        generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed: 1 }).ok()?;
    match form {
        "f1" => F1::new(&p).ok().map(|f1| (3 * f1.dim() + 2 * f1.weight_len()) as u64 * 4),
        "dc" => {
            let l = Layout::new(&p, crate::dc::DcLayout::Plain);
            Some((2 * l.slots() + 2 * l.vars()) as u64 * 4)
        }
        _ => None,
    }
}

/// A lower bound on the wall time of [`run`]: every measurement's warm-up is at least as long
/// as one repetition and its repetitions fill the budget, so about twice the budget each.
pub fn estimated_seconds(opts: &BenchOptions) -> f64 {
    let mut n: usize = steps(opts).iter().map(|(_, _, form, gpu)| measurements(form, *gpu)).sum();
    if opts.cpu && opts.formulations.iter().any(|f| f == "scan") {
        n += SCAN_SIZES.len();
    }
    n as f64 * opts.budget.as_secs_f64() * 1.2
}

/// Runs the benchmark; `each` sees every row as it is measured (for progress output).
pub fn run(opts: &BenchOptions, each: impl FnMut(&BenchRow)) -> Result<Vec<BenchRow>, EngineError> {
    run_with_steps(opts, each, |_, _| {})
}

/// [`run`], also telling `step(done, total)` after each step of [`steps`].
pub fn run_with_steps(
    opts: &BenchOptions,
    mut each: impl FnMut(&BenchRow),
    mut step: impl FnMut(usize, usize),
) -> Result<Vec<BenchRow>, EngineError> {
    let total = steps(opts).len();
    let mut done = 0;
    #[cfg(feature = "gpu")]
    let ctx = if opts.gpu { Some(super::gpu::GpuContext::open(opts.adapter.as_deref())?) } else { None };
    #[cfg(not(feature = "gpu"))]
    if opts.gpu {
        return Err(GpuError::NotBuilt.into());
    }
    let mut rows = Vec::new();
    // Every measured row goes to `each` and into `rows`; a step of [`steps`] also ticks `step`.
    let mut record = |measured: Vec<BenchRow>, rows: &mut Vec<BenchRow>, is_step: bool| {
        for r in measured {
            each(&r);
            rows.push(r);
        }
        if is_step {
            done += 1;
            step(done, total);
        }
    };
    #[cfg(feature = "gpu")]
    if let Some(ctx) = &ctx {
        record(copy_rows(ctx, opts.budget)?, &mut rows, false);
    }
    for &(w, h) in &opts.sizes {
        let (p, _) =
            generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed: opts.seed })
                .map_err(|e| GpuError::Misuse(format!("cannot generate {w}x{h}: {e}")))?;
        for &batch in &opts.batches {
            for form in &opts.formulations {
                // A stop request ends the bench with the rows measured so far.
                if crate::interrupt::requested() {
                    return Ok(rows);
                }
                // The formulation's tables, built once for both backends' rows.
                let built = match form.as_str() {
                    "f1" => Formulation::F1(F1::new(&p)?),
                    "dc" => Formulation::Dc(Layout::new(&p, crate::dc::DcLayout::Plain)),
                    // Measured once, after the sizes ([`scan_rows`]).
                    "scan" => continue,
                    other => {
                        return Err(GpuError::Misuse(format!("unknown formulation {other:?} (f1, dc, scan)")).into());
                    }
                };
                if built.state_words() as u64 * 4 * batch as u64 > opts.max_bytes {
                    continue;
                }
                if opts.cpu {
                    let measured = match &built {
                        Formulation::F1(f1) => f1_cpu(&p, f1, batch, opts)?,
                        Formulation::Dc(l) => dc_cpu(&p, l, batch, opts)?,
                    };
                    record(measured, &mut rows, true);
                }
                #[cfg(feature = "gpu")]
                if let Some(ctx) = &ctx {
                    let measured = match &built {
                        Formulation::F1(_) => f1_gpu(ctx, &p, batch, opts)?,
                        Formulation::Dc(_) => dc_gpu(ctx, &p, batch, opts)?,
                    };
                    record(measured, &mut rows, true);
                }
            }
        }
    }
    if opts.cpu && opts.formulations.iter().any(|f| f == "scan") && !crate::interrupt::requested() {
        record(scan_rows(opts.budget, opts.seed), &mut rows, false);
    }
    Ok(rows)
}

/// The tables of one measured formulation of [`run_with_steps`].
#[allow(clippy::large_enum_variant, reason = "one at a time, for one step")]
enum Formulation {
    F1(F1),
    Dc(Layout),
}

impl Formulation {
    /// Words of state per trial a step holds (x, and the weights or the replicas): the
    /// measure of `--max-gib`.
    fn state_words(&self) -> usize {
        match self {
            Formulation::F1(f1) => 3 * f1.dim() + 2 * f1.weight_len(),
            Formulation::Dc(l) => 2 * l.slots() + 2 * l.vars(),
        }
    }
}

/// Board sizes of the scan rows ([`scan_rows`]).
pub const SCAN_SIZES: [(usize, usize); 3] = [(7, 7), (8, 8), (16, 16)];

/// The scan rows (formulation `scan`, kernel `nodes`, backend `cpu`, batch 1): the row scan's
/// placements per second on one core (a node is one piece placed, as the other tree searches
/// count it), in the rate column, at each of [`SCAN_SIZES`], on generated puzzles, so that
/// the control's rate sits beside the map's in one table. Each row runs the first-solution
/// search ([`crate::search::scan::solve`], one thread, restarts on) for about `budget` of
/// search time: run after run (seeds `seed`, `seed + 1`, ...; a run that solves early ends
/// early), counting the search time only (the tables and the tree estimates apart). `reps`
/// is the runs, `seconds` the search seconds per run.
pub fn scan_rows(budget: Duration, seed: u64) -> Vec<BenchRow> {
    use crate::search::scan::{ScanSolveConfig, solve};
    let mut out = Vec::new();
    for (w, h) in SCAN_SIZES {
        let Ok((p, _)) =
            generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
        else {
            continue;
        };
        // Runs of a node count sized to fill what is left of the budget at the rate so far
        // (the first, of a million nodes, calibrates), so that the setup, which grows with
        // the board (tables, tree estimates), does not eat the search time.
        let (mut nodes, mut secs, mut runs, mut next) = (0u64, 0f64, 0usize, 1u64 << 20);
        let want = budget.as_secs_f64();
        while runs == 0 || (secs < want && !crate::interrupt::requested()) {
            let cfg = ScanSolveConfig {
                seed: seed + runs as u64,
                max_nodes: Some(next),
                time_limit: Some(budget * 4 + Duration::from_secs(10)),
                threads: 1,
                probes: 20,
                ..Default::default()
            };
            let r = solve(&p, &cfg, &|_| {});
            nodes += r.nodes;
            secs += (r.wall_s - r.setup_s).max(0.0);
            runs += 1;
            let rate = if secs > 0.0 { nodes as f64 / secs } else { 1e7 };
            next = (((want - secs) * rate) as u64).max(1 << 16);
        }
        out.push(BenchRow {
            formulation: "scan",
            size: format!("{w}x{h}"),
            batch: 1,
            kernel: "nodes",
            backend: "cpu",
            reps: runs,
            seconds: secs / runs as f64,
            trial_iters_per_s: if secs > 0.0 { nodes as f64 / secs } else { 0.0 },
            gb_per_s: 0.0,
            bytes_per_trial: 0,
            ..Default::default()
        });
    }
    out
}

/// A run of exactly `iters` iterations of every trial (no early stop, no restarts).
fn f1_run(batch: usize, iters: usize, seed: u64) -> MapConfig {
    MapConfig {
        trials: batch,
        max_iters: iters as u64,
        stop_at_first: false,
        cycle_restart: false,
        restart_stall: None,
        seed,
        ..Default::default()
    }
}

fn dc_run(batch: usize, iters: usize, seed: u64) -> DcConfig {
    DcConfig {
        trials: batch,
        max_iters: iters as u64,
        stop_at_first: false,
        cycle_restart: false,
        seed,
        ..Default::default()
    }
}

fn f1_cpu(p: &Puzzle, f1: &F1, batch: usize, o: &BenchOptions) -> Result<Vec<BenchRow>, EngineError> {
    let (d, wl, n) = (f1.dim(), f1.weight_len(), f1.cells());
    let x = random(batch * d, o.seed);
    let mut pe = vec![0.0f32; batch * d];
    let mut wts = vec![0.0f32; batch * wl];
    let mut best = vec![0u32; batch * wl];
    let mut out = Vec::new();
    let m = measure(o.budget, || {
        pe.par_chunks_mut(d).zip(x.par_chunks(d)).for_each(|(pe, x)| f1.project_edges(x, pe));
        Ok(())
    })?;
    out.push(row("f1", p, batch, "edges", "cpu", m, 4 * 2 * d as u64, 1));
    // The map's weights (F1::piece_weights_into: the reference's values, bit for bit, with the
    // argmax candidate left to the chosen entries); `best` is filled once, for the boards below.
    f1.piece_weights(&pe[..d], &mut wts[..wl], &mut best[..wl]);
    let m = measure(o.budget, || {
        wts.par_chunks_mut(wl).zip(pe.par_chunks(d)).for_each_init(
            crate::f1::project::SideTable::default,
            |t, (w, z)| {
                f1.piece_weights_into(z, w, t);
            },
        );
        Ok(())
    })?;
    out.push(row("f1", p, batch, "weights", "cpu", m, 4 * (2 * d + wl) as u64, 1));
    let boards: Vec<u32> = (0..batch * n).map(|i| best[(i / n) * wl]).collect();
    let m = measure(o.budget, || {
        let s: usize = boards.par_chunks(n).map(|b| f1.score(b)).sum();
        std::hint::black_box(s);
        Ok(())
    })?;
    out.push(row("f1", p, batch, "score", "cpu", m, 4 * (n + 1) as u64, 1));
    let m = whole_iterations(o.budget, |iters| {
        map::solve(p, f1_run(batch, iters, o.seed), |_| {})?;
        Ok(())
    })?;
    out.extend(iteration_rows("f1", p, batch, "cpu", m, 4 * (5 * d + 2 * wl + n) as u64));
    let m = whole_iterations(o.budget, |iters| {
        map::solve(p, MapConfig { reduced_costs: Precision::F32, ..f1_run(batch, iters, o.seed) }, |_| {})?;
        Ok(())
    })?;
    out.extend(f32_rows(iteration_rows("f1", p, batch, "cpu", m, 4 * (5 * d + 2 * wl + n) as u64)));
    let (a, b) = assign_weights(f1, batch, o.seed);
    for (k, &n) in f1.class_cells().iter().map(|c| c.len()).collect::<Vec<_>>().iter().enumerate() {
        let (ak, bk) = (class_block(f1, &a, batch, k), class_block(f1, &b, batch, k));
        let m = assign_warm::<f64>(o.budget, n, batch, &ak, &bk)?;
        let mut r = row("f1", p, batch, "assign", "cpu", m, 4 * (n * n) as u64, 1);
        r.class_n = Some(n);
        out.push(r);
        if n > crate::assign::ENUMERATE_MAX {
            let m = assign_warm::<f32>(o.budget, n, batch, &ak, &bk)?;
            out.extend(f32_rows(vec![row("f1", p, batch, "assign", "cpu", m, 4 * (n * n) as u64, 1)]));
            out.last_mut().expect("one row").class_n = Some(n);
        }
    }
    Ok(out)
}

/// Marks rows as run with f32 reduced costs.
fn f32_rows(mut rows: Vec<BenchRow>) -> Vec<BenchRow> {
    rows.iter_mut().for_each(|r| r.reduced_costs = Some("f32"));
    rows
}

/// Warm solves of one class's problems, one per trial, alternating between two weight sets
/// as the map runs them (the corner class by enumeration, the others warm).
fn assign_warm<R: Real>(
    budget: Duration,
    n: usize,
    batch: usize,
    ak: &[f32],
    bk: &[f32],
) -> Result<Measured, EngineError> {
    let mut solvers: Vec<Assigner<R>> = (0..batch).map(|_| Assigner::with_precision(n)).collect();
    solvers.par_iter_mut().zip(ak.par_chunks(n * n)).try_for_each(|(s, w)| s.solve(w).map(|_| ()))?;
    let mut flip = false;
    measure(budget, || {
        flip = !flip;
        let w = if flip { bk } else { ak };
        solvers.par_iter_mut().zip(w.par_chunks(n * n)).try_for_each(|(s, w)| {
            if n <= crate::assign::ENUMERATE_MAX { s.solve_enumerate(w) } else { s.solve_warm(w) }.map(|_| ())
        })?;
        Ok(())
    })
}

/// Two sets of assignment weights of a batch, as the map produces them: of random states and
/// of the same states moved a little (one step's change). The `assign` rows alternate
/// between them, warm-started, so that neither backend re-solves unchanged weights.
fn assign_weights(f1: &F1, batch: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (d, wl) = (f1.dim(), f1.weight_len());
    let x = random(batch * d, seed);
    let y: Vec<f32> = x.iter().zip(random(batch * d, seed ^ 1)).map(|(a, b)| a + 0.05 * (b - 0.5)).collect();
    let weights = |x: &[f32]| {
        let mut pe = vec![0.0f32; batch * d];
        let mut w = vec![0.0f32; batch * wl];
        let mut best = vec![0u32; batch * wl];
        pe.par_chunks_mut(d).zip(x.par_chunks(d)).for_each(|(pe, x)| f1.project_edges(x, pe));
        // RRR's weights are of the reflection 2 P_E(x) - x.
        let z: Vec<f32> = pe.iter().zip(x).map(|(p, x)| 2.0 * p - x).collect();
        w.par_chunks_mut(wl).zip(best.par_chunks_mut(wl)).zip(z.par_chunks(d)).for_each(|((w, b), z)| {
            f1.piece_weights(z, w, b);
        });
        w
    };
    (weights(&x), weights(&y))
}

/// Class `k`'s blocks of every trial, back to back.
fn class_block(f1: &F1, w: &[f32], batch: usize, k: usize) -> Vec<f32> {
    let (wl, off) = (f1.weight_len(), f1.weight_offsets()[k]);
    let n = f1.class_cells()[k].len();
    (0..batch).flat_map(|t| w[t * wl + off..t * wl + off + n * n].iter().copied()).collect()
}

fn dc_cpu(p: &Puzzle, l: &Layout, batch: usize, o: &BenchOptions) -> Result<Vec<BenchRow>, EngineError> {
    let (s, v, nc, n) = (l.slots(), l.vars(), l.choices(), l.cells());
    let x = random(batch * s, o.seed);
    let mut chosen = vec![0u32; batch * nc];
    let mut m_out = vec![0.0f32; batch * v];
    let mut out = Vec::new();
    let m = measure(o.budget, || {
        m_out.par_chunks_mut(v).zip(x.par_chunks(s)).for_each(|(m, x)| project::concur(l, x, None, m));
        Ok(())
    })?;
    out.push(row("dc", p, batch, "concur", "cpu", m, 4 * (s + nc + v) as u64, 1));
    let m = measure(o.budget, || {
        chosen.par_chunks_mut(nc).zip(x.par_chunks(s)).try_for_each_init(
            || DivideScratch::new(l),
            |div, (ch, x)| project::divide(l, x, ch, div, &mut [], false),
        )?;
        Ok(())
    })?;
    out.push(row("dc", p, batch, "divide", "cpu", m, 4 * (3 * s + 2 * nc) as u64, 1));
    let m = measure(o.budget, || {
        let t: usize = m_out
            .par_chunks(v)
            .map_init(
                || vec![0u32; n],
                |b, m| {
                    l.argmax_board(m, b);
                    l.score(b)
                },
            )
            .sum();
        std::hint::black_box(t);
        Ok(())
    })?;
    out.push(row("dc", p, batch, "readout", "cpu", m, 4 * (v + n + 2) as u64, 1));
    let m = whole_iterations(o.budget, |iters| {
        dc::solve(p, dc_run(batch, iters, o.seed), |_| {})?;
        Ok(())
    })?;
    out.extend(iteration_rows("dc", p, batch, "cpu", m, 4 * (6 * s + 4 * nc + 2 * v + n + 2) as u64));
    Ok(out)
}

/// The F1 assignment placements the GPU rows compare: the host JV, then the device kernels,
/// each with the separate passes and with the fused one (`--fused-passes`).
#[cfg(feature = "gpu")]
const DEVICE_PLACEMENTS: [(crate::f1::map::AssignOn, bool, &str); 7] = {
    use crate::f1::map::AssignOn;
    [
        (AssignOn::Cpu, false, "cpu"),
        (AssignOn::GpuJv, false, "gpu-jv"),
        (AssignOn::GpuJv, true, "gpu-jv+fused"),
        (AssignOn::GpuJvSg, false, "gpu-jv-sg"),
        (AssignOn::GpuJvSg, true, "gpu-jv-sg+fused"),
        (AssignOn::GpuJvSgStaged, false, "gpu-jv-sg-staged"),
        (AssignOn::GpuAuction, false, "gpu-auction"),
    ]
};

/// A warm device solve measured on two weight sets already on the device, alternately copied
/// into the batch's weights `dst` before each `solve`.
#[cfg(feature = "gpu")]
fn alternating(
    ctx: &super::gpu::GpuContext,
    budget: Duration,
    sets: [&wgpu::Buffer; 2],
    dst: &wgpu::Buffer,
    solve: impl Fn() -> Result<(), EngineError>,
) -> Result<Measured, EngineError> {
    let mut flip = false;
    measure(budget, || {
        flip = !flip;
        let src = sets[usize::from(flip)];
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        ctx.queue.submit([enc.finish()]);
        solve()
    })
}

/// Whole iterations in one timestamp profile of the device loop.
#[cfg(feature = "gpu")]
const PROFILE_ITERS: usize = 8;

/// The `device-loop` rows of one placement: each kernel's device time per trial-iteration,
/// the span of the whole iterations and the gaps between passes; or one row saying why there
/// is no profile.
#[cfg(feature = "gpu")]
fn profile_rows(
    p: &Puzzle,
    batch: usize,
    assign: &'static str,
    prof: Result<super::gpu::timing::Timings, EngineError>,
) -> Vec<BenchRow> {
    let mk = |kernel: &'static str, ns: f64, note: Option<String>| {
        let per_iter_s = ns * 1e-9 / PROFILE_ITERS as f64;
        let mut r = row("f1", p, batch, kernel, "gpu", (1, per_iter_s), 0, 1);
        if ns <= 0.0 {
            r.trial_iters_per_s = 0.0;
        }
        r.assign = Some(assign);
        r.profile = Some("device-loop");
        r.device_ns = Some(ns / (PROFILE_ITERS * batch) as f64);
        r.note = note;
        r
    };
    match prof {
        Ok(t) => {
            let mut rows: Vec<BenchRow> = t.kernels.iter().map(|&(k, ns, _)| mk(k, ns, None)).collect();
            let untimed = (t.untimed > 0).then(|| format!("{} passes untimed (query capacity)", t.untimed));
            rows.push(mk("span", t.span_ns, untimed));
            rows.push(mk("gaps", (t.span_ns - t.busy_ns()).max(0.0), None));
            rows
        }
        Err(e) => vec![mk("span", 0.0, Some(format!("no device-loop profile: {e}")))],
    }
}

#[cfg(feature = "gpu")]
fn f1_gpu(
    ctx: &std::sync::Arc<super::gpu::GpuContext>,
    p: &Puzzle,
    batch: usize,
    o: &BenchOptions,
) -> Result<Vec<BenchRow>, EngineError> {
    use super::gpu::f1::{F1Gpu, Kernel};
    let cfg = MapConfig { trials: batch, seed: o.seed, ..Default::default() };
    let g = F1Gpu::new(ctx.clone(), p, cfg.clone())?;
    g.write_state(0, &random(batch * g.f1().dim(), o.seed));
    let mut out = Vec::new();
    for (k, name) in
        [(Kernel::Edges, "edges"), (Kernel::Weights, "weights"), (Kernel::Update, "update"), (Kernel::Score, "score")]
    {
        let m = measure(o.budget, || Ok(g.run_kernel(k, 1)?))?;
        out.push(row("f1", p, batch, name, "gpu", m, g.kernel_bytes(k), 1));
    }
    // A whole iteration as the solver runs it: device passes, weights up, CPU assignment,
    // choices down.
    let bytes: u64 =
        [Kernel::Edges, Kernel::Weights, Kernel::Update, Kernel::Score].iter().map(|&k| g.kernel_bytes(k)).sum();
    // Every placement of the assignment: the host JV (one round trip per iteration) and the
    // two device kernels (the device loop, K iterations per submission).
    let unfused = |asked: bool, ran: bool| {
        (asked && !ran).then(|| "the fused pass does not fit this board here: the separate passes ran".to_string())
    };
    for (on, fused, name) in DEVICE_PLACEMENTS {
        let cfg = |iters| MapConfig { assign: on, fused_passes: fused, ..f1_run(batch, iters, o.seed) };
        let note = unfused(fused, super::gpu::f1::fuses(ctx, p, &cfg(1))?);
        let m = whole_iterations(o.budget, |iters| {
            F1Gpu::new(ctx.clone(), p, cfg(iters))?.run(&mut |_| {})?;
            Ok(())
        })?;
        for mut r in iteration_rows("f1", p, batch, "gpu", m, bytes) {
            r.assign = Some(name);
            r.note.clone_from(&note);
            out.push(r);
        }
    }
    // Inside the device loop: each kernel's device time, from timestamps around its passes.
    for &(on, fused, name) in &DEVICE_PLACEMENTS[1..] {
        let cfg = MapConfig { assign: on, fused_passes: fused, ..f1_run(batch, 1 << 30, o.seed) };
        let g = F1Gpu::new(ctx.clone(), p, cfg)?;
        let mut rows = profile_rows(p, batch, name, g.profile_device(PROFILE_ITERS, 2));
        if let Some(note) = unfused(fused, g.fused()) {
            rows.iter_mut().for_each(|r| r.note = Some(note.clone()));
        }
        out.extend(rows);
    }
    // The device assignment, one class at a time, alternating two weight sets already on the
    // device (a device copy into the batch's weights, then the warm solve).
    use super::gpu::assign::AssignGpu;
    let dev = AssignGpu::new(ctx.clone());
    let f1 = g.f1();
    let (a, b) = assign_weights(f1, batch, o.seed);
    for k in 0..f1.class_cells().len() {
        let n = f1.class_cells()[k].len();
        let (ak, bk) = (class_block(f1, &a, batch, k), class_block(f1, &b, batch, k));
        let asg = dev.batch(&[n], batch, false);
        let (da, db) = (ctx.storage("bench assign a", &ak), ctx.storage("bench assign b", &bk));
        asg.write_weights(&ak)?;
        asg.run(false)?;
        let m = alternating(ctx, o.budget, [&da, &db], asg.weights_buffer(), || Ok(asg.run(true).map(|_| ())?))?;
        let mut r = row("f1", p, batch, "assign", "gpu", m, 4 * (n * n) as u64, 1);
        r.class_n = Some(n);
        r.assign = Some("gpu-auction");
        out.push(r);
        // The device JVs (the workgroup and the subgroup kernel) on the same two weight sets,
        // warm.
        use super::gpu::jv::{JvGpu, JvKind};
        for (kind, name) in [
            (JvKind::Workgroup, "gpu-jv"),
            (JvKind::Subgroup, "gpu-jv-sg"),
            (JvKind::SubgroupStaged, "gpu-jv-sg-staged"),
        ] {
            let jv = JvGpu::of_kind(ctx.clone(), kind).batch(&[n], batch);
            jv.write_weights(&ak)?;
            jv.run(false)?;
            let m = alternating(ctx, o.budget, [&da, &db], jv.weights_buffer(), || Ok(jv.run(true)?))?;
            let mut r = row("f1", p, batch, "assign", "gpu", m, 4 * (n * n) as u64, 1);
            r.class_n = Some(n);
            r.assign = Some(name);
            if jv.kind() != kind {
                r.note = Some(format!("the {:?} kernel ran (no subgroups, or the blocks do not fit)", jv.kind()));
            }
            out.push(r);
        }
    }
    Ok(out)
}

#[cfg(feature = "gpu")]
fn dc_gpu(
    ctx: &std::sync::Arc<super::gpu::GpuContext>,
    p: &Puzzle,
    batch: usize,
    o: &BenchOptions,
) -> Result<Vec<BenchRow>, EngineError> {
    use super::gpu::dc::{DcGpu, Kernel};
    let cfg = DcConfig { trials: batch, seed: o.seed, ..Default::default() };
    let chunk = o.dc_chunk_trials.unwrap_or(usize::MAX);
    let g = DcGpu::with_chunk_trials(ctx.clone(), p, cfg.clone(), chunk)?;
    let l = g.layout();
    let x = random(batch * l.slots(), o.seed);
    let mut chosen = vec![0u32; batch * l.choices()];
    let mut div = DivideScratch::new(l);
    for (ch, xs) in chosen.chunks_mut(l.choices()).zip(x.chunks(l.slots())) {
        project::divide(l, xs, ch, &mut div, &mut [], false)?;
    }
    g.write_state(0, &x, &chosen, &vec![1.0; batch * l.constraints()]);
    let mut out = Vec::new();
    for (k, name) in [(Kernel::Concur, "concur"), (Kernel::Divide, "divide"), (Kernel::Readout, "readout")] {
        let m = measure(o.budget, || Ok(g.run_kernel(k, 1)?))?;
        out.push(row("dc", p, batch, name, "gpu", m, g.kernel_bytes(k), 1));
    }
    let bytes: u64 = [Kernel::Concur, Kernel::Divide, Kernel::Readout].iter().map(|&k| g.kernel_bytes(k)).sum();
    // The F2 step on the device alone (16 iterations per submission, no host round trip).
    let m = measure(o.budget, || Ok(g.run_iterations(16)?))?;
    out.push(row("dc", p, batch, "step", "gpu", m, bytes, 16));
    // A whole iteration as the solver runs it, with the per-trial status read back each time.
    let m = whole_iterations(o.budget, |iters| {
        DcGpu::with_chunk_trials(ctx.clone(), p, dc_run(batch, iters, o.seed), chunk)?.run(&mut |_| {})?;
        Ok(())
    })?;
    out.extend(iteration_rows("dc", p, batch, "gpu", m, bytes));
    for r in &mut out {
        r.chunk_trials = o.dc_chunk_trials;
    }
    Ok(out)
}

#[cfg(test)]
mod scan_row_tests {
    use super::*;

    /// One scan row per size, each with nodes searched in the budget and their rate.
    #[test]
    fn scan_rows_measure_nodes_per_second_at_each_size() {
        let rows = scan_rows(Duration::from_millis(100), 3);
        let sizes: Vec<&str> = rows.iter().map(|r| r.size.as_str()).collect();
        assert_eq!(sizes, ["7x7", "8x8", "16x16"]);
        for r in &rows {
            assert_eq!((r.formulation, r.kernel, r.backend, r.batch), ("scan", "nodes", "cpu", 1));
            assert!(r.reps >= 1 && r.seconds > 0.0 && r.trial_iters_per_s > 1e5, "{r:?}");
        }
    }
}
