//! The wgpu backend: WGSL kernels for both formulations, state resident on the device.
//!
//! - [`f1`]: the edge projection, the assignment weights, the embed-and-update and the exact
//!   mismatch count run on the device; the three assignments run where [`crate::f1::AssignOn`]
//!   says: on the host (`cpu`: rayon over trials between two dispatches, weights come up,
//!   chosen entries go down) or on the device too ([`jv`], [`assign`]), K iterations a submission.
//! - [`dc`]: concur, the fused update-and-divide of every constraint, the weight update
//!   and the argmax readout with its exact violation count all run on the device; per
//!   iteration only per-trial status (violations) is read back, and a board only when its
//!   trial improves.
//!
//! Every solution is read back and passes [`crate::verify::check`] before it is reported.

pub mod assign;
pub(crate) mod chunks;
pub mod context;
pub mod dc;
pub mod f1;
pub mod jv;
pub mod multi;
pub mod pace;
pub mod pick;
pub mod timing;

pub use context::{AdapterSummary, GpuContext, adapters};

use super::capability::{self, Feature, Place};
use super::{Backend, Batch, Certify, EngineError, GpuError, Listener, MapJob};
use crate::f1::map::MapConfig;
use crate::limits::Estimate;
use crate::puzzle::Puzzle;
use std::sync::Arc;

/// The WGSL sources, one file per kernel family.
pub const F1_WGSL: &str = include_str!("../../../shaders/f1.wgsl");
/// The fused pass of F1's device loop, appended to [`F1_WGSL`] when it runs.
pub const F1_STEP_WGSL: &str = include_str!("../../../shaders/f1_step.wgsl");
pub const DC_WGSL: &str = include_str!("../../../shaders/dc.wgsl");
pub const HASH_WGSL: &str = include_str!("../../../shaders/hash.wgsl");
pub const LAYOUT_WGSL: &str = include_str!("../../../shaders/layout.wgsl");

/// The GPU backend on one device, or on several (`--adapter all`: F1 batches split over
/// them, [`multi`]; divide and concur on the first).
pub struct GpuBackend {
    ctx: Arc<GpuContext>,
    /// Every device of the backend, `ctx` first.
    all: Vec<Arc<GpuContext>>,
}

impl GpuBackend {
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        GpuBackend { all: vec![ctx.clone()], ctx }
    }
    /// A backend on every device in `ctxs` (at least one).
    pub fn on_all(ctxs: Vec<Arc<GpuContext>>) -> Result<Self, GpuError> {
        let ctx = ctxs.first().cloned().ok_or_else(|| GpuError::NoAdapter("no device to run on".into()))?;
        Ok(GpuBackend { ctx, all: ctxs })
    }
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }
    /// Every device of the backend.
    pub fn devices(&self) -> &[Arc<GpuContext>] {
        &self.all
    }
}

impl Backend for GpuBackend {
    fn name(&self) -> String {
        if self.all.len() == 1 {
            return format!("gpu: {}", self.ctx.adapter);
        }
        let names: Vec<String> = self.all.iter().map(|c| c.adapter.to_string()).collect();
        format!("gpu: {} devices: {}", self.all.len(), names.join("; "))
    }
    fn place(&self) -> Place {
        Place::Gpu
    }
    fn adapters(&self) -> usize {
        self.all.len()
    }
    fn unified_memory(&self) -> bool {
        matches!(self.ctx.adapter.device_type.as_str(), "Cpu" | "IntegratedGpu")
    }
    /// The host's share of the device estimate (`f1::estimate`, with `--assign auto`
    /// resolved), and the device buffers too where the device's memory is the host's.
    fn estimate(&self, puzzle: &Puzzle, job: MapJob<'_>, _threads: usize) -> Estimate {
        let device = match job {
            MapJob::F1(cfg) => f1::estimate(puzzle, &MapConfig { assign: self.f1_assign(cfg), ..cfg.clone() }),
            MapJob::Dc(cfg) => dc::estimate(puzzle, cfg),
        };
        device.in_host_memory(self.unified_memory())
    }
    fn memory_place(&self) -> &'static str {
        " on the GPU backend"
    }
    fn solve(&self, puzzle: &Puzzle, job: MapJob, certify: Certify, progress: Listener) -> Result<Batch, EngineError> {
        if certify != Certify::None {
            capability::check(Place::Gpu, &[Feature::Certificates])?;
        }
        self.supports(job)?;
        let result = match job {
            MapJob::F1(cfg) if self.all.len() > 1 => multi::solve_f1(&self.all, puzzle, cfg, progress)?,
            MapJob::F1(cfg) => f1::solve(&self.ctx, puzzle, cfg, progress)?,
            MapJob::Dc(cfg) => dc::solve(&self.ctx, puzzle, cfg, progress)?,
        };
        Ok(Batch::of(result))
    }
}
