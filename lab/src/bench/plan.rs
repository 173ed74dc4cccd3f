//! What `concur bench` measures: the plan for the machine (or the full sweep), the request
//! as given on the command line, its checks ([`BenchOptions::from_request`]), and the steps
//! a run will take with their least time.

use super::{BenchOptions, SCAN_SIZES};
use concur::backend::{BackendChoice, GpuError, select};
use concur::dc::Layout;
use concur::f1::project::F1;
use concur::limits::{LimitError, MemoryBudget, human};
use concur::puzzle::generate::{GenerateOptions, generate};

/// What a plain `concur bench` measures: sizes, batches and backends chosen from the adapter
/// found, so that it ends within about a minute on any machine. The full sweep is
/// [`Plan::full`] (`--full`), and explicit lists override either.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Board sizes `(width, height)`.
    pub sizes: Vec<(usize, usize)>,
    /// Batch sizes in trials.
    pub batches: Vec<usize>,
    /// Measure the CPU rows.
    pub cpu: bool,
    /// Measure the GPU rows.
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
#[derive(Clone, Debug)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct BenchRequest {
    /// Board sizes, comma separated (default: from the plan).
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub sizes: Option<Vec<String>>,
    /// Batch sizes (trials), comma separated (default: from the plan).
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub batches: Option<Vec<usize>>,
    /// Formulations: f1 (RRR in edge-colour space), dc (divide and concur); `scan` adds the
    /// row scan's rows (placements per second on one core at 7x7, 8x8 and 16x16, in the
    /// rate column), e.g. `--formulations f1,dc,scan` for both in one table.
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ',', default_value = "f1,dc"))]
    pub formulations: Vec<String>,
    /// Which backends to measure: cpu, gpu or both (default: from the plan).
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub backends: Option<Vec<BackendChoice>>,
    /// The full sweep: 5x5, 8x8 and 16x16 at 1 to 16,384 trials on the CPU and the GPU
    /// (tens of minutes); explicit lists still override it.
    #[cfg_attr(feature = "clap", arg(long))]
    pub full: bool,
    /// Time budget per measurement, seconds.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.5))]
    pub budget: f64,
    /// Skip a size and batch whose state exceeds this many GiB.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 8.0))]
    pub max_gib: f64,
    /// Cap the trials per device chunk of the F2 GPU rows (default: as many as fit).
    #[cfg_attr(feature = "clap", arg(long, value_parser = clap::value_parser!(u64).range(1..)))]
    pub dc_chunk_trials: Option<u64>,
    /// The GPU adapter: the first whose name contains this (case-insensitive).
    #[cfg_attr(feature = "clap", arg(long))]
    pub adapter: Option<String>,
    /// The seed of the generated puzzles and of the trials' starts.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    pub seed: u64,
}

/// A bench request that cannot run; each names its flag.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A size that is not of the form `WxH`.
    #[error("--sizes: size {0:?} is not WxH")]
    NotWxH(String),
    /// A size whose width or height is not a whole number.
    #[error("--sizes: {0}")]
    SizeNumber(std::num::ParseIntError),
    /// A size whose side is outside `2..=MAX_SIDE`.
    #[error("--sizes: {w}x{h} is out of range: each side must be 2..={}", concur::puzzle::MAX_SIDE)]
    SizeRange {
        /// The width given.
        w: usize,
        /// The height given.
        h: usize,
    },
    /// A batch of 0 trials.
    #[error("--batches: a batch must be at least 1 trial")]
    EmptyBatch,
    /// A formulation other than `f1`, `dc` or `scan`.
    #[error("--formulations: unknown formulation {0:?} (f1, dc, scan)")]
    Formulation(String),
    /// A budget of zero seconds.
    #[error("--budget must be a positive number of seconds")]
    ZeroBudget,
    /// A memory cap that is not a positive number of GiB.
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
        let side = 2..=concur::puzzle::MAX_SIDE;
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
        let budget = concur::limits::seconds("--budget", r.budget)?;
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
            cancel: concur::cancel::Cancel::new(),
        };
        if !explicit {
            notes.push(format!("concur bench: {}", plan.why));
        }
        notes.push(format!("concur bench: {} steps, at least {:.0} s", steps(&opts).len(), estimated_seconds(&opts)));
        Ok((opts, notes))
    }
}

/// Timed measurements per (size, batch, formulation, backend), each one warm-up plus at least
/// a budget: the kernel rows and the two runs of [`whole_iterations`](super::whole_iterations).
fn measurements(form: &str, gpu: bool) -> usize {
    match (form, gpu) {
        // The kernel rows, the two whole runs, and one assign row per class (three).
        ("f1", false) => 8,
        ("f1", true) => 11,
        ("dc", false) => 5,
        _ => 6,
    }
}

/// The steps [`run`](super::run) will take: (size, batch, formulation, backend is GPU), skipping those
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
/// or unknown formulation; [`run`](super::run) reports those).
fn state_bytes(form: &str, w: usize, h: usize) -> Option<u64> {
    let (p, _) =
        generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed: 1 }).ok()?;
    match form {
        "f1" => F1::new(&p).ok().map(|f1| (3 * f1.dim() + 2 * f1.weight_len()) as u64 * 4),
        "dc" => {
            let l = Layout::new(&p, concur::dc::DcLayout::Plain);
            Some((2 * l.slots() + 2 * l.vars()) as u64 * 4)
        }
        _ => None,
    }
}

/// A lower bound on the wall time of [`run`](super::run): every measurement's warm-up is at least as long
/// as one repetition and its repetitions fill the budget, so about twice the budget each.
pub fn estimated_seconds(opts: &BenchOptions) -> f64 {
    let mut n: usize = steps(opts).iter().map(|(_, _, form, gpu)| measurements(form, *gpu)).sum();
    if opts.cpu && opts.formulations.iter().any(|f| f == "scan") {
        n += SCAN_SIZES.len();
    }
    n as f64 * opts.budget.as_secs_f64() * 1.2
}
