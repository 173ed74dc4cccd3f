//! Where the batched maps run (ARCHITECTURE.md §5): the [`Backend`] trait with a CPU backend
//! (rayon over trials; the reference) and, with the `gpu` feature, a wgpu backend whose
//! WGSL kernels (`shaders/*.wgsl`) do the projections, with F1's three assignments on the host
//! or on the device as `--assign` says ([`crate::f1::AssignOn`]).
//!
//! Both backends take the same [`MapConfig`] / [`DcConfig`], draw every trial's start from
//! the same seeded stream, and return the same [`MapResult`] in a [`Batch`]; every solution
//! either reports has passed the exact board check on the CPU. [`crate::solve::solve`] is the
//! one caller that runs a method: it builds the configuration and picks the backend's entry.
//!
//! What each backend runs is one table, [`capability`]: what a batch needs of its backend
//! (read from its configuration) against what each backend offers. [`Backend::supports`] is
//! that comparison, one provided method; `--backend auto`'s fall-back to the CPU and
//! `--backend gpu`'s refusals are its answers, and the table of docs/gpu.md is written from it.

pub mod capability;
#[cfg(feature = "gpu")]
pub mod gpu;

pub use capability::{Feature, Place};

use crate::assign::AssignError;
use crate::batch::{BatchError, MapResult, Mechanism, Progress, SnapshotError, SnapshotIdentity, TrialSummary};
use crate::certify::{self, Certificate};
use crate::dc::{self, DcConfig};
use crate::f1::map::{self, MapConfig};
use crate::limits::Estimate;
use crate::puzzle::Puzzle;
use std::sync::Arc;

/// Which backend the user asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// A hardware GPU adapter when there is one, else the CPU.
    #[default]
    Auto,
    /// The CPU (rayon over trials): the reference.
    Cpu,
    /// A GPU adapter; an error without a usable one.
    Gpu,
}

/// Errors of the GPU backend.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    /// No adapter could be had; the text says why (wgpu's words).
    #[error("no GPU adapter found ({0})")]
    NoAdapter(String),
    /// No adapter's name contains the text `--adapter` gave.
    #[error("no GPU adapter name contains {want:?}; adapters seen: {}", if seen.is_empty() { "none".to_string() } else { seen.join(", ") })]
    NoMatchingAdapter {
        /// The text asked for (`--adapter`).
        want: String,
        /// The adapters found, by name.
        seen: Vec<String>,
    },
    /// The device failed: it could not be opened, lost, or a read-back failed (wgpu's words).
    #[error("GPU device error: {0}")]
    Device(String),
    /// A kernel or buffer asked for what its set-up does not hold (a caller's mistake).
    #[error("GPU backend misuse: {0}")]
    Misuse(String),
    /// A GPU run asked of a build without the `gpu` feature.
    #[error("this build has no GPU backend (built without the `gpu` feature)")]
    NotBuilt,
}

/// A configuration a backend does not run, and why (for example "--kick runs on the cpu
/// backend"). The same type for every backend: the caller decides whether to fall back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not supported by the {backend} backend: {why}")]
pub struct Unsupported {
    /// The backend that refuses (`cpu`, `gpu`).
    pub backend: &'static str,
    /// What it refuses, and where it runs instead: one line.
    pub why: String,
    /// The capability refused.
    pub feature: Feature,
}

/// Errors of a batched run on any backend.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// No board fits the puzzle's rim, or an assignment failed.
    #[error(transparent)]
    Assign(#[from] AssignError),
    /// The batch driver failed ([`crate::batch::BatchError`]).
    #[error(transparent)]
    Batch(#[from] crate::batch::BatchError),
    /// The GPU backend failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The backend does not run what the batch needs (the capability table's refusal).
    #[error(transparent)]
    Unsupported(#[from] Unsupported),
}

/// Which trials get a fixed-point certificate ([`crate::certify`]) after a batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Certify {
    /// No certificates.
    #[default]
    None,
    /// The solving trial.
    Solved,
    /// Every trial, solved or not.
    All,
}

/// What a backend's batch gives back: the run, and the certificates asked for.
#[derive(Debug)]
pub struct Batch {
    /// The run's outcome.
    pub result: MapResult,
    /// (trial, certificate), in trial order.
    pub certificates: Vec<(usize, Certificate)>,
    /// A certificate that could not be made; the run itself stands.
    pub certificate_error: Option<String>,
    /// The batch saved where its token stopped it, when its configuration asked for it
    /// (`save_at_stop`) and the backend saves (the CPU backend); None otherwise.
    pub snapshot: Option<MapSnapshot>,
}

impl Batch {
    /// A run without certificates.
    pub fn of(result: MapResult) -> Self {
        Batch { result, certificates: Vec::new(), certificate_error: None, snapshot: None }
    }
}

/// A map's batch saved where its token stopped it, in either formulation, to be continued
/// exactly by the same run (`SolveSpec::resume`; ARCHITECTURE.md §8): F1's
/// ([`map::F1Snapshot`]) or divide and concur's ([`dc::DcSnapshot`]). Cloning it is cheap
/// (the state is shared). It serialises with serde as `{"f1": ...}` or `{"dc": ...}`;
/// [`MapSnapshot::to_json`] and [`MapSnapshot::from_json`] write and read it as JSON,
/// checking the format version first.
#[derive(Clone, Debug, PartialEq)]
pub enum MapSnapshot {
    /// An F1 batch (RRR or the difference map).
    F1(Arc<map::F1Snapshot>),
    /// A divide-and-concur batch.
    Dc(Arc<dc::DcSnapshot>),
}

/// The serialised form of [`MapSnapshot`] (serde has no `Arc` without its `rc` feature).
#[derive(serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum SnapshotOut<'a> {
    F1(&'a map::F1Snapshot),
    Dc(&'a dc::DcSnapshot),
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum SnapshotIn {
    F1(map::F1Snapshot),
    Dc(dc::DcSnapshot),
}

impl serde::Serialize for MapSnapshot {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        match self {
            MapSnapshot::F1(s) => SnapshotOut::F1(s),
            MapSnapshot::Dc(s) => SnapshotOut::Dc(s),
        }
        .serialize(ser)
    }
}

impl<'de> serde::Deserialize<'de> for MapSnapshot {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        Ok(match SnapshotIn::deserialize(de)? {
            SnapshotIn::F1(s) => MapSnapshot::F1(Arc::new(s)),
            SnapshotIn::Dc(s) => MapSnapshot::Dc(Arc::new(s)),
        })
    }
}

impl MapSnapshot {
    /// What it was taken of (method, puzzle, trials, ...).
    pub fn identity(&self) -> &SnapshotIdentity {
        match self {
            MapSnapshot::F1(s) => s.identity(),
            MapSnapshot::Dc(s) => s.identity(),
        }
    }

    /// The iterations its trials had run when it was taken, summed (from the run's start).
    pub fn trial_iterations(&self) -> u64 {
        match self {
            MapSnapshot::F1(s) => s.trial_iterations(),
            MapSnapshot::Dc(s) => s.trial_iterations(),
        }
    }

    /// The snapshot as one line of JSON (floats as the hexadecimal text of their bits, so
    /// that they read back exactly).
    pub fn to_json(&self) -> Result<String, SnapshotError> {
        serde_json::to_string(self).map_err(|e| SnapshotError::Format(e.to_string()))
    }

    /// Reads a snapshot [`MapSnapshot::to_json`] wrote. Refused with
    /// [`SnapshotError::Version`] when it is of another format version, with
    /// [`SnapshotError::Format`] when it does not read as a snapshot.
    pub fn from_json(text: &str) -> Result<Self, SnapshotError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| SnapshotError::Format(e.to_string()))?;
        let version = value
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(|v| v.pointer("/batch/identity/version"))
            .and_then(serde_json::Value::as_u64);
        match version {
            Some(v) if v == u64::from(crate::batch::SNAPSHOT_VERSION) => {}
            Some(v) => {
                let found = u32::try_from(v).unwrap_or(u32::MAX);
                return Err(SnapshotError::Version { found, expected: crate::batch::SNAPSHOT_VERSION });
            }
            None => return Err(SnapshotError::Format("no snapshot format version in it".into())),
        }
        serde_json::from_value(value).map_err(|e| SnapshotError::Format(e.to_string()))
    }
}

/// A place to run batches of map trials.
pub trait Backend: Send + Sync {
    /// What the user sees: "cpu (N threads)" or the adapter.
    fn name(&self) -> String;
    /// Which column of the capability table ([`capability::TABLE`]) this backend is.
    fn place(&self) -> Place;
    /// Whether this is a GPU backend.
    fn is_gpu(&self) -> bool {
        self.place() == Place::Gpu
    }
    /// The devices a batch is split over (`--adapter all`); 1 otherwise.
    fn adapters(&self) -> usize {
        1
    }
    /// What a report's `backend` field says: "cpu", or "gpu: " and the adapter.
    fn label(&self) -> String {
        self.name()
    }
    /// Whether this backend runs the batch `job` (Err: why not, in one line): what the job
    /// needs ([`capability::needs`]) against what this backend offers
    /// ([`capability::check`]).
    fn supports(&self, job: MapJob<'_>) -> Result<(), Unsupported> {
        let assign = match job {
            MapJob::F1(cfg) => self.f1_assign(cfg),
            MapJob::Dc(_) => map::AssignOn::Auto,
        };
        capability::check(self.place(), &capability::needs(job, assign, self.adapters()))
    }
    /// Whether the batch's buffers live in the host's memory (the CPU, a software or an
    /// integrated adapter), so that the memory check before a run counts them there.
    fn unified_memory(&self) -> bool {
        true
    }
    /// Where this backend runs F1's assignments for `cfg` (`--assign auto` resolved; any
    /// other choice stands). The CPU backend always solves them on the host.
    fn f1_assign(&self, cfg: &MapConfig) -> map::AssignOn {
        let place = if self.is_gpu() { capability::Place::Gpu } else { capability::Place::Cpu };
        capability::resolve_assign(cfg.assign, place, cfg)
    }
    /// The memory the batch `job` takes on this backend with `threads` host threads, as the
    /// machine's memory counts it (ARCHITECTURE.md §8): the estimate of the engine that runs
    /// it, which sits beside that engine's allocations.
    fn estimate(&self, puzzle: &Puzzle, job: MapJob<'_>, threads: usize) -> Estimate;
    /// What a refused memory check adds after the board to say where the batch was to run:
    /// nothing for the CPU, " on the GPU backend".
    fn memory_place(&self) -> &'static str {
        ""
    }
    /// Runs the batch `job`, with the certificates asked for, telling `progress` as it goes.
    fn solve(
        &self,
        puzzle: &Puzzle,
        job: MapJob<'_>,
        certify: Certify,
        progress: Listener,
    ) -> Result<Batch, EngineError>;
}

/// What hears a batch's progress.
pub type Listener<'a> = &'a mut dyn FnMut(&Progress);

/// A batch of map trials for a backend: F1 (RRR or the difference map) or divide and concur,
/// each with its configuration.
#[derive(Clone, Copy, Debug)]
pub enum MapJob<'a> {
    /// F1: RRR or the difference map in edge-colour space.
    F1(&'a MapConfig),
    /// Divide and concur.
    Dc(&'a DcConfig),
}

/// The batch with the certificates `certify` asks for, made by `make(trial, its summary,
/// the iteration it solved at or ran to)` from the engine that ran it; the first failure
/// stops and is kept beside the run.
fn certificates(
    certify: Certify,
    result: MapResult,
    make: impl Fn(usize, &TrialSummary, u64) -> Result<Certificate, AssignError>,
) -> Batch {
    let trials: Vec<usize> = match certify {
        Certify::None => return Batch::of(result),
        Certify::Solved => result.solution.iter().map(|s| s.0).collect(),
        Certify::All => (0..result.trials.len()).collect(),
    };
    let mut certs = Vec::with_capacity(trials.len());
    let mut error = None;
    for t in trials {
        let tr = &result.trials[t];
        match make(t, tr, tr.solved_at.unwrap_or(tr.iterations)) {
            Ok(c) => certs.push((t, c)),
            Err(e) => {
                error = Some(format!("cannot certify trial {t}: {e}"));
                break;
            }
        }
    }
    Batch { result, certificates: certs, certificate_error: error, snapshot: None }
}

/// The CPU backend: rayon over trials, the reference implementation.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }
    fn place(&self) -> Place {
        Place::Cpu
    }
    fn label(&self) -> String {
        "cpu".into()
    }
    fn estimate(&self, puzzle: &Puzzle, job: MapJob<'_>, threads: usize) -> Estimate {
        match job {
            MapJob::F1(cfg) => map::estimate(puzzle, cfg, threads),
            MapJob::Dc(cfg) => dc::estimate(puzzle, cfg, threads),
        }
    }
    fn solve(&self, puzzle: &Puzzle, job: MapJob, certify: Certify, progress: Listener) -> Result<Batch, EngineError> {
        // Certificates need each trial's fixed point, which the engines then keep.
        let keep = certify != Certify::None;
        match job {
            MapJob::F1(cfg) => {
                let cfg = MapConfig { keep_fixed_points: cfg.keep_fixed_points || keep, ..cfg.clone() };
                let mut m = map::F1Map::new(puzzle, cfg.clone())?;
                if let Some(s) = &cfg.resume {
                    m.restore(s).map_err(BatchError::from)?;
                }
                let result = m.run(progress);
                let snapshot = m.take_snapshot().map(|s| MapSnapshot::F1(Arc::new(s)));
                let mut batch = certificates(certify, result, |t, tr, it| {
                    let completed = (tr.solved_by == Some(Mechanism::MapAc)).then(|| m.best_board(t));
                    let (kind, beta, edge, weights) = (cfg.kind, cfg.beta, cfg.edge, cfg.join_weights);
                    let x = m.certified_state(t);
                    certify::make(puzzle, kind, beta, edge, weights, t, it, tr.solved_by, x, completed.as_ref())
                });
                batch.snapshot = snapshot;
                Ok(batch)
            }
            MapJob::Dc(cfg) => {
                let cfg = DcConfig { keep_fixed_points: cfg.keep_fixed_points || keep, ..cfg.clone() };
                let mut m = dc::DcMap::new(puzzle, cfg.clone())?;
                if let Some(s) = &cfg.resume {
                    m.restore(s).map_err(BatchError::from)?;
                }
                let result = m.run(progress);
                let snapshot = m.take_snapshot().map(|s| MapSnapshot::Dc(Arc::new(s)));
                let mut batch = certificates(certify, result, |t, tr, it| {
                    let completed = (tr.solved_by == Some(Mechanism::MapAc)).then(|| m.best_board(t));
                    let (x, lambda, pruned) = m.certified_state(t);
                    let state = certify::DcState { x, lambda: Some(lambda), pruned };
                    certify::make_dc(puzzle, &cfg, t, it, tr.solved_by, state, completed.as_ref())
                });
                batch.snapshot = snapshot;
                Ok(batch)
            }
        }
    }
}

/// The outcome of [`select`]: the backend, and a line for the user when the choice was not
/// literal (auto's pick, or why it fell back).
pub struct Selected {
    /// The backend to run on.
    pub backend: Box<dyn Backend>,
    /// A line for the user when the choice was not the literal one asked for.
    pub note: Option<String>,
}

/// Resolves the user's choice. `gpu` without a usable adapter is an error; `auto` takes a
/// hardware adapter (not a software one such as lavapipe, which is slower than the CPU
/// backend) and falls back to the CPU otherwise, saying which. `adapter` restricts the GPU to
/// adapters whose name contains it (ignoring case).
///
/// `--adapter all` (with `gpu` or `auto`) opens every hardware adapter
/// (`GpuContext::open_all`) and splits F1 batches over them.
pub fn select(choice: BackendChoice, adapter: Option<&str>) -> Result<Selected, GpuError> {
    #[cfg(feature = "gpu")]
    if choice != BackendChoice::Cpu && adapter.is_some_and(|a| a.eq_ignore_ascii_case("all")) {
        let ctxs = gpu::GpuContext::open_all()?;
        let names: Vec<String> = ctxs.iter().map(|c| c.adapter.to_string()).collect();
        let note = format!("backend: gpu on {} device(s): {}", ctxs.len(), names.join("; "));
        return Ok(Selected { backend: Box::new(gpu::GpuBackend::on_all(ctxs)?), note: Some(note) });
    }
    match choice {
        BackendChoice::Cpu => Ok(Selected { backend: Box::new(CpuBackend), note: None }),
        #[cfg(feature = "gpu")]
        BackendChoice::Gpu => {
            let ctx = gpu::GpuContext::open(adapter)?;
            let note = format!("backend: gpu, adapter {}", ctx.adapter);
            Ok(Selected { backend: Box::new(gpu::GpuBackend::new(ctx)), note: Some(note) })
        }
        #[cfg(feature = "gpu")]
        BackendChoice::Auto => match gpu::GpuContext::open(adapter) {
            Ok(ctx) if ctx.adapter.device_type != "Cpu" || adapter.is_some() => {
                let note = format!("backend auto: gpu, adapter {}", ctx.adapter);
                Ok(Selected { backend: Box::new(gpu::GpuBackend::new(ctx)), note: Some(note) })
            }
            Ok(ctx) => Ok(Selected {
                backend: Box::new(CpuBackend),
                note: Some(format!(
                    "backend auto: cpu (the only adapter, {}, is a software one; --backend gpu forces it)",
                    ctx.adapter
                )),
            }),
            Err(e) => Ok(Selected { backend: Box::new(CpuBackend), note: Some(format!("backend auto: cpu ({e})")) }),
        },
        #[cfg(not(feature = "gpu"))]
        BackendChoice::Gpu => {
            let _ = adapter;
            Err(GpuError::NotBuilt)
        }
        #[cfg(not(feature = "gpu"))]
        BackendChoice::Auto => {
            let _ = adapter;
            Ok(Selected { backend: Box::new(CpuBackend), note: Some("backend auto: cpu (built without `gpu`)".into()) })
        }
    }
}
