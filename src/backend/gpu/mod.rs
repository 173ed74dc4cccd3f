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

/// Fills an insertion point of a WGSL source: the line that holds `point` becomes `text`.
///
/// A kernel's sizes are pipeline-overridable constants where WGSL allows them
/// ([`GpuContext::pipeline_with`]); the host still writes text where it does not: a constant
/// that sizes a function-scope array (which must be a const-expression), or code that only a
/// device with some feature validates (subgroup operations). Each such file declares its
/// insertion points in a comment paragraph at its top, beginning `// Insertion points`; each
/// point must appear on exactly one line below that paragraph.
pub(crate) fn fill(src: &str, point: &str, text: &str) -> String {
    fill_lines(src, point, point, text)
}

/// [`fill`] for a region: the lines from the one that holds `begin` to the one that holds
/// `end` become `text`.
pub(crate) fn fill_lines(src: &str, begin: &str, end: &str, text: &str) -> String {
    let body = insertion_body(src);
    let line_of = |point: &str| {
        assert!(src[..body].contains(point), "insertion point {point} is not declared at the top of the file");
        let at: Vec<usize> = src[body..].match_indices(point).map(|(i, _)| body + i).collect();
        assert!(at.len() == 1, "insertion point {point}: {} lines hold it below the declaration", at.len());
        let start = src[..at[0]].rfind('\n').map_or(0, |i| i + 1);
        let stop = src[at[0]..].find('\n').map_or(src.len(), |i| at[0] + i);
        (start, stop)
    };
    let ((start, _), (_, stop)) = (line_of(begin), line_of(end));
    format!("{}{text}{}", &src[..start], &src[stop..])
}

/// Where the body of a WGSL source begins: after its comment paragraph that declares the
/// insertion points (up to the first line that is only `//` or is not a comment).
fn insertion_body(src: &str) -> usize {
    let mut at = 0;
    let mut declaring = false;
    for line in src.split_inclusive('\n') {
        let l = line.trim_end();
        if l.starts_with("// Insertion points") {
            declaring = true;
        } else if declaring && (l == "//" || !l.starts_with("//")) {
            return at;
        }
        at += line.len();
    }
    assert!(!declaring, "an insertion-point declaration runs to the end of the file");
    0
}

/// The insertion points the host fills, per shader file (for `tests/shaders.rs`, which checks
/// that each file declares exactly these at its top and holds each once below).
#[doc(hidden)]
pub fn insertion_points() -> Vec<(&'static str, &'static [&'static str])> {
    vec![("jv.wgsl", &jv::JV_POINTS), ("jv_sg.wgsl", &jv::JV_SG_POINTS), ("assign.wgsl", &assign::POINTS)]
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
