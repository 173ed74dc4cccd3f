//! Where the batched maps run (ARCHITECTURE.md §5): the [`Backend`] trait with a CPU backend
//! (rayon over trials; the reference) and, with the `gpu` feature, a wgpu backend whose
//! WGSL kernels (`shaders/*.wgsl`) do the projections while the F1 assignment stays on the
//! CPU.
//!
//! Both backends take the same [`MapConfig`] / [`DcConfig`], draw every trial's start from
//! the same seeded stream, and return the same [`MapResult`]; every solution either reports
//! has passed the exact board check on the CPU.

pub mod bench;
#[cfg(feature = "gpu")]
pub mod gpu;

use crate::assign::AssignError;
use crate::dc::{self, DcConfig};
use crate::map::{self, MapConfig, MapResult, Progress};
use crate::puzzle::Puzzle;

/// Which backend the user asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// A hardware GPU adapter when there is one, else the CPU.
    #[default]
    Auto,
    Cpu,
    Gpu,
}

/// Errors of the GPU backend.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    #[error("no GPU adapter found ({0})")]
    NoAdapter(String),
    #[error("no GPU adapter name contains {want:?}; adapters seen: {}", if seen.is_empty() { "none".to_string() } else { seen.join(", ") })]
    NoMatchingAdapter { want: String, seen: Vec<String> },
    #[error("GPU device error: {0}")]
    Device(String),
    #[error("not supported by the GPU backend: {0}")]
    Unsupported(String),
    #[error("this build has no GPU backend (built without the `gpu` feature)")]
    NotBuilt,
}

/// Errors of a batched run on any backend.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Assign(#[from] AssignError),
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// A place to run batches of map trials.
pub trait Backend: Send + Sync {
    /// What the user sees: "cpu (N threads)" or the adapter.
    fn name(&self) -> String;
    /// Whether this backend runs the F1 configuration (Err: why not).
    fn supports_f1(&self, cfg: &MapConfig) -> Result<(), GpuError>;
    /// Whether this backend runs the divide-and-concur configuration (Err: why not).
    fn supports_dc(&self, cfg: &DcConfig) -> Result<(), GpuError>;
    /// Whether the batch's buffers live in the host's memory (the CPU, a software or an
    /// integrated adapter), so that the memory check before a run counts them there.
    fn unified_memory(&self) -> bool {
        true
    }
    /// Runs an F1 batch (RRR or the difference map).
    fn solve_f1(
        &self,
        puzzle: &Puzzle,
        cfg: &MapConfig,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<MapResult, EngineError>;
    /// Runs a divide-and-concur batch.
    fn solve_dc(
        &self,
        puzzle: &Puzzle,
        cfg: &DcConfig,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<MapResult, EngineError>;
}

/// The CPU backend: rayon over trials, the reference implementation.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }
    fn supports_f1(&self, _: &MapConfig) -> Result<(), GpuError> {
        Ok(())
    }
    fn supports_dc(&self, _: &DcConfig) -> Result<(), GpuError> {
        Ok(())
    }
    fn solve_f1(
        &self,
        puzzle: &Puzzle,
        cfg: &MapConfig,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<MapResult, EngineError> {
        Ok(map::solve(puzzle, cfg.clone(), progress)?)
    }
    fn solve_dc(
        &self,
        puzzle: &Puzzle,
        cfg: &DcConfig,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<MapResult, EngineError> {
        Ok(dc::solve(puzzle, cfg.clone(), progress)?)
    }
}

/// The outcome of [`select`]: the backend, and a line for the user when the choice was not
/// literal (auto's pick, or why it fell back).
pub struct Selected {
    pub backend: Box<dyn Backend>,
    pub note: Option<String>,
    /// Whether the pick is the GPU backend.
    pub gpu: bool,
}

/// Resolves the user's choice. `gpu` without a usable adapter is an error; `auto` takes a
/// hardware adapter (not a software one such as lavapipe, which is slower than the CPU
/// backend) and falls back to the CPU otherwise, saying which. `adapter` restricts the GPU to
/// adapters whose name contains it (ignoring case).
pub fn select(choice: BackendChoice, adapter: Option<&str>) -> Result<Selected, GpuError> {
    match choice {
        BackendChoice::Cpu => Ok(Selected { backend: Box::new(CpuBackend), note: None, gpu: false }),
        #[cfg(feature = "gpu")]
        BackendChoice::Gpu => {
            let ctx = gpu::GpuContext::open(adapter)?;
            let note = format!("backend: gpu, adapter {}", ctx.adapter);
            Ok(Selected { backend: Box::new(gpu::GpuBackend::new(ctx)), note: Some(note), gpu: true })
        }
        #[cfg(feature = "gpu")]
        BackendChoice::Auto => match gpu::GpuContext::open(adapter) {
            Ok(ctx) if ctx.adapter.device_type != "Cpu" || adapter.is_some() => {
                let note = format!("backend auto: gpu, adapter {}", ctx.adapter);
                Ok(Selected { backend: Box::new(gpu::GpuBackend::new(ctx)), note: Some(note), gpu: true })
            }
            Ok(ctx) => Ok(Selected {
                backend: Box::new(CpuBackend),
                note: Some(format!(
                    "backend auto: cpu (the only adapter, {}, is a software one; --backend gpu forces it)",
                    ctx.adapter
                )),
                gpu: false,
            }),
            Err(e) => Ok(Selected {
                backend: Box::new(CpuBackend),
                note: Some(format!("backend auto: cpu ({e})")),
                gpu: false,
            }),
        },
        #[cfg(not(feature = "gpu"))]
        BackendChoice::Gpu => {
            let _ = adapter;
            Err(GpuError::NotBuilt)
        }
        #[cfg(not(feature = "gpu"))]
        BackendChoice::Auto => {
            let _ = adapter;
            Ok(Selected {
                backend: Box::new(CpuBackend),
                note: Some("backend auto: cpu (built without `gpu`)".into()),
                gpu: false,
            })
        }
    }
}
