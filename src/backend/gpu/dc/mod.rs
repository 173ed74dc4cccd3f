//! Divide and concur on the GPU: `shaders/dc.wgsl`.
//!
//! The whole iteration runs on the device: `concur` (one thread per variable and trial),
//! `divide` (one thread per constraint and trial: the update `x += beta (m - P_b x)` fused
//! with the next divide, as on the CPU), `adapt` (adaptive weights, one thread per trial) and
//! `argmax` and `readout` (the per-cell argmax board, one thread per cell and trial, then its
//! exact violation count, one workgroup per trial).
//! The state lives trial-minor on the device (slot `s` of trial `t` at `s * T + t`), so the
//! lanes of a warp are consecutive trials at the same slot and loads coalesce; the host API
//! stays trial-major and converts through the scatter and gather kernels of
//! `shaders/layout.wgsl`. Per iteration the host reads two `u32` per trial
//! (mismatched joins, pieces used more than once); it copies a board up only when its
//! trial improves or claims a solution, rescoring it exactly, and verifies every claimed
//! solution with [`crate::verify::check`]. At the end of each round of
//! [`crate::batch::ROUND`] iterations it reads the concur values once for the assignment
//! readout (the best permutation board, as the CPU backend does) and fingerprints the state
//! for exact limit cycles.
//!
//! Plain layout only (cell, piece and join constraints); the hybrid layout's assignment

mod buffers;
mod kernels;
mod run;
mod state;

pub use buffers::estimate;
pub(crate) use buffers::uniform_layouts;
use buffers::{Chunk, ChunkSpec, Params, Pipelines, SCATTER_WORDS, tables};

use super::GpuContext;
use super::chunks;
use crate::backend::{EngineError, GpuError, Unsupported};
use crate::batch::{MapResult, Progress};
use crate::dc::{DcConfig, Layout};
use crate::puzzle::Puzzle;
use std::sync::Arc;

/// The readout keeps per-piece counts in workgroup memory: boards up to this many cells.
pub const MAX_CELLS: usize = 1024;

/// Whether the GPU backend runs a divide-and-concur batch of `cfg`: what it needs against the
/// capability table ([`crate::backend::capability`]).
pub fn supports(cfg: &DcConfig) -> Result<(), Unsupported> {
    let needs = crate::backend::capability::needs(crate::backend::MapJob::Dc(cfg), crate::f1::map::AssignOn::Auto, 1);
    crate::backend::capability::check(crate::backend::Place::Gpu, &needs)
}

/// One kernel of the family, for tests and benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// A test and bench hook: one kernel alone (tests/gpu.rs, benches/projections.rs, concur bench).
#[doc(hidden)]
pub enum Kernel {
    Concur,
    Divide,
    Adapt,
    Readout,
}

/// Slot values, chosen slots and constraint weights of every trial, trial-major.
// A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
#[doc(hidden)]
pub type DcState = (Vec<f32>, Vec<u32>, Vec<f32>);

/// The divide-and-concur batch on the device.
pub struct DcGpu<'a> {
    ctx: Arc<GpuContext>,
    puzzle: &'a Puzzle,
    layout: Layout,
    cfg: DcConfig,
    pipes: Pipelines,
    chunks: Vec<Chunk>,
    trials: usize,
    /// Staging storage for uploads into the trial-minor state ([`DcGpu::write_minor`]).
    scratch: wgpu::Buffer,
    _tables: Vec<wgpu::Buffer>,
}

impl<'a> DcGpu<'a> {
    /// Builds tables, pipelines and the trial-minor state of the batch on `ctx` (plain layout); an
    /// error for what the GPU does not run or a board past [`MAX_CELLS`].
    pub fn new(ctx: Arc<GpuContext>, puzzle: &'a Puzzle, cfg: DcConfig) -> Result<Self, EngineError> {
        Self::with_chunk_trials(ctx, puzzle, cfg, usize::MAX)
    }

    /// Like [`DcGpu::new`] with at most `chunk` trials per chunk.
    // A test hook: tests/gpu.rs checks the chunk split and the memory estimate through it.
    #[doc(hidden)]
    pub fn with_chunk_trials(
        ctx: Arc<GpuContext>,
        puzzle: &'a Puzzle,
        cfg: DcConfig,
        chunk: usize,
    ) -> Result<Self, EngineError> {
        supports(&cfg)?;
        if puzzle.cells() > MAX_CELLS {
            return Err(
                GpuError::Misuse(format!("boards of more than {MAX_CELLS} cells ({} here)", puzzle.cells())).into()
            );
        }
        let layout = Layout::new(puzzle, crate::dc::DcLayout::Plain);
        layout.check_feasible()?;
        let trials = cfg.run.trials.max(1);
        let (s, v, c, nc) = (layout.slots(), layout.vars(), layout.constraints(), layout.choices());
        let per_trial = 4 * s.max(v).max(c).max(nc) as u64;
        let per_chunk = chunks::chunk_trials(&ctx, per_trial, trials, chunk)?;
        // A device that runs out of memory while the buffers are made says so as an error,
        // not through wgpu's uncaptured-error handler (which panics).
        let oom = ctx.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let pipes = Pipelines::new(&ctx);
        let tables = tables(&ctx, &layout);
        let spec = ChunkSpec { ctx: &ctx, pipes: &pipes, tables: &tables, base: Params::new(&layout, &cfg) };
        let chunks = chunks::split(trials, per_chunk, |first, tc| spec.chunk(first, tc));
        let scratch = ctx.zeroed("scatter", 4 * SCATTER_WORDS.min(trials * s.max(v).max(c).max(nc)) as u64);
        chunks::out_of_memory(pollster::block_on(oom.pop()), trials)?;
        Ok(DcGpu { ctx, puzzle, layout, cfg, pipes, chunks, trials, scratch, _tables: tables })
    }

    /// Bytes of the buffers this batch holds on the device (tables, per-chunk state, staging
    /// and the upload scratch), to check [`estimate`] against.
    // A test hook: tests/gpu.rs checks the chunk split and the memory estimate through it.
    #[doc(hidden)]
    pub fn device_bytes(&self) -> u64 {
        let chunks = self.chunks.iter().flat_map(|c| {
            [
                &c.s.x,
                &c.s.chosen,
                &c.s.lambda,
                &c.s.m,
                &c.s.ca,
                &c.s.err,
                &c.s.board,
                &c.s.status,
                &c.s.live,
                &c.s.sums,
                &c.st_status,
                &c.st_board,
                &c.st_sums,
                &c.s.cell_best,
            ]
        });
        self._tables.iter().chain([&self.scratch]).chain(chunks).map(|b| b.size()).sum()
    }

    /// The replica layout the batch runs (the plain one).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    /// Trials per chunk (the batch split that keeps every binding under the device limit).
    // A test hook: tests/gpu.rs checks the chunk split and the memory estimate through it.
    #[doc(hidden)]
    pub fn chunk_sizes(&self) -> Vec<usize> {
        self.chunks.iter().map(|c| c.trials).collect()
    }
}

/// Runs a divide-and-concur batch on the device; every reported solution has passed the
/// exact check.
pub fn solve(
    ctx: &Arc<GpuContext>,
    puzzle: &Puzzle,
    cfg: &DcConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<MapResult, EngineError> {
    let mut g = DcGpu::new(ctx.clone(), puzzle, cfg.clone())?;
    g.run(progress)
}
