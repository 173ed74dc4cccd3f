//! `concur bench`: CPU vs GPU throughput of every kernel and of whole iterations, on the
//! same work (same generated puzzle, same batch, same random states).
//!
//! Units: trial-iterations per second (one kernel applied to one trial counts one), and GB/s
//! of per-trial state traffic (the bytes each kernel must read and write per trial; the
//! shared tables, which stay in cache, are not counted). On a software Vulkan driver these
//! numbers only show that the harness works; speed claims need a real GPU.
//!
//! Every measurement runs once to warm up, then as many repetitions as fit its time budget.

mod cpu;
#[cfg(feature = "gpu")]
mod gpu;
mod plan;

pub use cpu::{SCAN_SIZES, scan_rows};
pub use plan::{BenchError, BenchRequest, Plan, estimated_seconds, steps};

use concur::backend::{EngineError, GpuError};
use concur::dc::Layout;
use concur::f1::project::F1;
use concur::puzzle::Puzzle;
use concur::puzzle::generate::{GenerateOptions, generate};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::time::{Duration, Instant};

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Board sizes `(width, height)`, each a generated puzzle.
    pub sizes: Vec<(usize, usize)>,
    /// Batch sizes in trials.
    pub batches: Vec<usize>,
    /// "f1", "dc" or both.
    pub formulations: Vec<String>,
    /// Measure the CPU rows.
    pub cpu: bool,
    /// Measure the GPU rows.
    pub gpu: bool,
    /// Time budget of one measurement.
    pub budget: Duration,
    /// Skip a (size, batch) whose batch state would exceed this many bytes.
    pub max_bytes: u64,
    /// Seed of the generated puzzles and the starting points.
    pub seed: u64,
    /// The GPU adapter: the first whose name contains this text, ignoring case (None:
    /// wgpu's high-performance choice).
    pub adapter: Option<String>,
    /// At most this many trials per device chunk in the F2 GPU rows (None: as many as the
    /// binding limits allow). Smaller chunks keep each chunk's trial-minor arrays small.
    pub dc_chunk_trials: Option<usize>,
    /// Ends the bench with the rows measured so far when tripped.
    pub cancel: concur::cancel::Cancel,
}

/// One measured line.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct BenchRow {
    /// `f1`, `dc` or `scan`.
    pub formulation: &'static str,
    /// The board, `WxH`.
    pub size: String,
    /// Trials of the batch.
    pub batch: usize,
    /// What was measured: a kernel, a whole `iteration`, an `assign` class, `nodes`, ...
    pub kernel: &'static str,
    /// `cpu` or `gpu`.
    pub backend: &'static str,
    /// Repetitions timed (after one warm-up).
    pub reps: usize,
    /// Seconds per repetition.
    pub seconds: f64,
    /// Trial-iterations per second (the scan row: nodes per second).
    pub trial_iters_per_s: f64,
    /// State traffic in GB (1e9 bytes) per second: `bytes_per_trial` over each trial's time.
    pub gb_per_s: f64,
    /// Bytes of state one repetition reads and writes per trial (tables, which stay in cache, not
    /// counted).
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
    /// The F1 CPU `weights` and `iteration` rows: trials advanced together, their piece
    /// weights in vector lanes (`MapConfig::trial_lanes`; 1: one trial at a time, the
    /// reference path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trial_lanes: Option<usize>,
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
        trial_lanes: None,
        profile: None,
        device_ns: None,
        note: None,
    }
}

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

impl BenchRow {
    /// The header of the text table whose lines are the rows' [`Display`](std::fmt::Display).
    pub fn table_header() -> String {
        format!(
            "{:<4} {:>6} {:>6} {:<10} {:<4} {:>14} {:>9} {:>12}",
            "form", "size", "batch", "kernel", "on", "trial-it/s", "GB/s", "s/rep"
        )
    }

    /// The kernel column: the kernel, its class size or where its assignments ran, its
    /// reduced costs, its trial lanes (`/l4`), and `loop:` before a kernel timed inside the
    /// device loop.
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
        if let Some(l) = self.trial_lanes {
            kernel.push_str(&format!("/l{l}"));
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
    let ctx = if opts.gpu { Some(concur::backend::gpu::GpuContext::open(opts.adapter.as_deref())?) } else { None };
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
        record(gpu::copy_rows(ctx, opts.budget)?, &mut rows, false);
    }
    for &(w, h) in &opts.sizes {
        let (p, _) =
            generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed: opts.seed })
                .map_err(|e| GpuError::Misuse(format!("cannot generate {w}x{h}: {e}")))?;
        for &batch in &opts.batches {
            for form in &opts.formulations {
                // A stop request ends the bench with the rows measured so far.
                if opts.cancel.is_cancelled() {
                    return Ok(rows);
                }
                // The formulation's tables, built once for both backends' rows.
                let built = match form.as_str() {
                    "f1" => Formulation::F1(F1::new(&p)?),
                    "dc" => Formulation::Dc(Layout::new(&p, concur::dc::DcLayout::Plain)),
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
                        Formulation::F1(f1) => cpu::f1_cpu(&p, f1, batch, opts)?,
                        Formulation::Dc(l) => cpu::dc_cpu(&p, l, batch, opts)?,
                    };
                    record(measured, &mut rows, true);
                }
                #[cfg(feature = "gpu")]
                if let Some(ctx) = &ctx {
                    let measured = match &built {
                        Formulation::F1(_) => gpu::f1_gpu(ctx, &p, batch, opts)?,
                        Formulation::Dc(_) => gpu::dc_gpu(ctx, &p, batch, opts)?,
                    };
                    record(measured, &mut rows, true);
                }
            }
        }
    }
    if opts.cpu && opts.formulations.iter().any(|f| f == "scan") && !opts.cancel.is_cancelled() {
        record(scan_rows(opts.budget, opts.seed, &opts.cancel), &mut rows, false);
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
