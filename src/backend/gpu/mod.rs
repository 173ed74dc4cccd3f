//! The wgpu backend: WGSL kernels for both formulations, state resident on the device.
//!
//! - [`f1`]: the edge projection, the assignment weights, the embed-and-update and the exact
//!   mismatch count run on the device; the three assignments run where [`crate::f1::AssignOn`]
//!   says: on the host (`cpu`: rayon over trials between two dispatches, weights come up,
//!   chosen entries go down) or on the device too ([`jv`], [`assign`]), blocks of K iterations in paced pieces
//!   (`pace`).
//! - [`dc`]: concur, the fused update-and-divide of every constraint, the weight update
//!   and the argmax readout with its exact violation count all run on the device; per
//!   iteration only per-trial status (violations) is read back, and a board only when its
//!   trial improves.
//!
//! Every solution is read back and passes [`crate::verify::check`] before it is reported.

/// The [`UniformLayout`] of a `#[repr(C)]` host struct bound as `$binding` in `$shader`, its
/// fields listed in order (a nested struct's as `outer.inner`).
macro_rules! uniform_layout {
    ($shader:expr, $binding:expr, $ty:ty, [$($field:ident $(. $sub:ident)*),* $(,)?]) => {
        $crate::backend::gpu::UniformLayout {
            shader: $shader,
            binding: $binding,
            host: stringify!($ty),
            size: std::mem::size_of::<$ty>(),
            fields: vec![$({
                let zero = <$ty as bytemuck::Zeroable>::zeroed();
                (
                    concat!(stringify!($field) $(, ".", stringify!($sub))*),
                    std::mem::offset_of!($ty, $field $(. $sub)*),
                    std::mem::size_of_val(&zero.$field $(. $sub)*),
                )
            }),*],
        }
    };
}

pub mod assign;
pub(crate) mod chunks;
pub mod context;
pub mod dc;
pub mod f1;
pub mod jv;
pub(crate) mod multi;
pub(crate) mod pace;
pub(crate) mod pick;
pub mod timing;

pub use context::{AdapterSummary, GpuContext, adapters};

use super::capability::{self, Feature, Place};
use super::{Backend, Batch, Certify, EngineError, GpuError, Listener, MapJob};
use crate::f1::map::MapConfig;
use crate::limits::Estimate;
use crate::puzzle::Puzzle;
use std::sync::Arc;

/// The WGSL sources, one file per kernel family.
pub(crate) const F1_WGSL: &str = include_str!("../../../shaders/f1.wgsl");
/// The fused pass of F1's device loop, appended to [`F1_WGSL`] when it runs.
pub(crate) const F1_STEP_WGSL: &str = include_str!("../../../shaders/f1_step.wgsl");
pub(crate) const DC_WGSL: &str = include_str!("../../../shaders/dc.wgsl");
pub(crate) const HASH_WGSL: &str = include_str!("../../../shaders/hash.wgsl");
// A test hook: tests/gpu.rs runs the layout kernels alone.
#[doc(hidden)]
pub const LAYOUT_WGSL: &str = include_str!("../../../shaders/layout.wgsl");

/// The shader files that are parts of a source the host assembles by concatenation (none of
/// them validates alone), with the sources they make, for `tests/shaders.rs`: each source
/// as (what it is, the WGSL, whether it needs subgroup operations). The workgroup size and
/// the staged block's sizes are pipeline-overridable constants, set when the pipeline is
/// made.
#[doc(hidden)]
pub fn assembled_sources() -> (Vec<&'static str>, Vec<(String, String, bool)>) {
    let parts = vec![
        "jv.wgsl",
        "jv_workgroup.wgsl",
        "jv_subgroup.wgsl",
        "jv_sg.wgsl",
        "jv_sg_direct.wgsl",
        "jv_sg_staged.wgsl",
        "assign.wgsl",
    ];
    let mut sources = vec![
        ("jv (workgroup)".to_string(), jv::source(false), false),
        ("jv (subgroups)".to_string(), jv::source(true), true),
    ];
    for lanes in [4, 8, 16, 32, 64, 128] {
        sources.push((format!("jv_sg ({lanes} lanes)"), jv::sg_source(lanes), true));
        sources.push((format!("jv_sg staged ({lanes} lanes)"), jv::sg_source_staged(lanes, true), true));
    }
    for wg in [32, 64, 128, 256] {
        sources.push((format!("assign ({wg})"), assign::auction_source(wg), false));
    }
    (parts, sources)
}

/// A uniform struct the host uploads, for `tests/shaders.rs`, which checks it against naga's
/// reflection of the shader: the shader file and the name of the uniform variable it binds
/// the struct to, the host struct's name and size, and its fields in order as (name, offset,
/// size), a nested struct's fields in its place.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct UniformLayout {
    pub shader: &'static str,
    pub binding: &'static str,
    pub host: &'static str,
    pub size: usize,
    pub fields: Vec<(&'static str, usize, usize)>,
}

/// Every uniform struct the GPU drivers upload ([`UniformLayout`]).
#[doc(hidden)]
pub fn uniform_layouts() -> Vec<UniformLayout> {
    [
        f1::uniform_layouts(),
        dc::uniform_layouts(),
        jv::uniform_layouts(),
        assign::uniform_layouts(),
        pick::uniform_layouts(),
    ]
    .concat()
}

/// The GPU backend on one device, or on several (`--adapter all`: F1 batches split over
/// them, `multi`; divide and concur on the first).
pub struct GpuBackend {
    ctx: Arc<GpuContext>,
    /// Every device of the backend, `ctx` first.
    all: Vec<Arc<GpuContext>>,
}

impl GpuBackend {
    /// The backend on one device.
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        GpuBackend { all: vec![ctx.clone()], ctx }
    }
    /// A backend on every device in `ctxs` (at least one).
    pub fn on_all(ctxs: Vec<Arc<GpuContext>>) -> Result<Self, GpuError> {
        let ctx = ctxs.first().cloned().ok_or_else(|| GpuError::NoAdapter("no device to run on".into()))?;
        Ok(GpuBackend { ctx, all: ctxs })
    }
    /// The backend's first device (its only one unless it spans several).
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
