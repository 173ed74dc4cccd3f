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
//! solution with [`verify::check`]. At the end of each round of [`ROUND`] iterations it
//! reads the concur values once for the assignment readout (the best permutation board, as
//! the CPU backend does) and fingerprints the state for exact limit cycles.
//!
//! Plain layout only (cell, piece and join constraints); the hybrid layout's assignment
//! constraint and the every-iteration assignment readout run on the CPU backend.

use super::chunks::{self, Span};
use super::context::{GpuContext, dispatch, grid, groups_grid};
use super::f1::HashParams;
use super::{DC_WGSL, HASH_WGSL, LAYOUT_WGSL};
use crate::assign::Assigner;
use crate::backend::{EngineError, GpuError, Unsupported};
use crate::batch::Trial;
use crate::batch::{Completion, MapKind, MapResult, Mechanism, Progress, ROUND, Rounds};
use crate::dc::layout::{dc_sizes, dc_tables};
use crate::dc::{DcConfig, DivideScratch, Layout, Readout, Weights, project};
use crate::limits::memory::{ALLOC, Shape, TRIAL_BOOKKEEPING, WORD};
use crate::limits::{Estimate, GpuEstimate};
use crate::puzzle::{Board, Puzzle};
use crate::search::backtrack::Backtracker;
use crate::verify;
use rand::RngExt;
use rayon::prelude::*;
use std::sync::Arc;

/// The readout keeps per-piece counts in workgroup memory: boards up to this many cells.
pub const MAX_CELLS: usize = 1024;
/// Adaptive weights never fall below this (as on the CPU).
const MIN_WEIGHT: f32 = 1e-3;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    trials: u32,
    vars: u32,
    slots: u32,
    cons: u32,
    choices: u32,
    cells: u32,
    colors: u32,
    first_join: u32,
    dm: u32,
    adaptive: u32,
    pad0: u32,
    pad1: u32,
    beta: f32,
    inv: f32,
    gamma: f32,
    min_weight: f32,
}

/// What the GPU backend cannot do for divide and concur (these run on the CPU backend).
pub fn supports(cfg: &DcConfig) -> Result<(), Unsupported> {
    if cfg.keep_going {
        return Err(Unsupported::gpu("--keep-going (rate mode) for dc runs on the cpu backend"));
    }
    if cfg.keep_fixed_points {
        return Err(Unsupported::gpu("--dump-state (certificates) runs on the cpu backend"));
    }
    if cfg.layout.is_hybrid() {
        return Err(Unsupported::gpu(
            "the hybrid layout (the assignment constraint, dc's default) runs on the cpu backend; --layout plain runs on the gpu",
        ));
    }
    if cfg.propagate.is_some() {
        return Err(Unsupported::gpu("--propagate (arc consistency folded in) runs on the cpu backend"));
    }
    if cfg.readout == Readout::Assignment {
        return Err(Unsupported::gpu("--readout assignment runs on the cpu backend"));
    }
    Ok(())
}

/// One kernel of the family, for tests and benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Concur,
    Divide,
    Adapt,
    Readout,
}

struct Pipelines {
    concur: wgpu::ComputePipeline,
    divide: wgpu::ComputePipeline,
    adapt: wgpu::ComputePipeline,
    argmax: wgpu::ComputePipeline,
    readout: wgpu::ComputePipeline,
    hash: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    gather: wgpu::ComputePipeline,
}

/// Parameters of `shaders/layout.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct LayoutParams {
    trials: u32,
    per: u32,
    first: u32,
    count: u32,
}

/// Words the scatter staging buffer holds: uploads go through it a block of trials at a time.
const SCATTER_WORDS: usize = 1 << 22;

struct Chunk {
    first: usize,
    trials: usize,
    /// The state on the device and its uniforms.
    s: ChunkState,
    st_status: wgpu::Buffer,
    st_board: wgpu::Buffer,
    st_sums: wgpu::Buffer,
    bg_main: wgpu::BindGroup,
    bg_concur: wgpu::BindGroup,
    bg_adapt: wgpu::BindGroup,
    bg_argmax: wgpu::BindGroup,
    bg_readout: wgpu::BindGroup,
    bg_hash: wgpu::BindGroup,
    bg_hash_lambda: wgpu::BindGroup,
}

impl Pipelines {
    fn new(ctx: &GpuContext) -> Self {
        let module = ctx.module("dc", DC_WGSL);
        let hash = ctx.module("hash", HASH_WGSL);
        let layout_module = ctx.module("layout", LAYOUT_WGSL);
        Pipelines {
            concur: ctx.pipeline(&module, "concur"),
            divide: ctx.pipeline(&module, "divide"),
            adapt: ctx.pipeline(&module, "adapt"),
            argmax: ctx.pipeline(&module, "argmax"),
            readout: ctx.pipeline(&module, "readout"),
            hash: ctx.pipeline(&hash, "fingerprint"),
            scatter: ctx.pipeline(&layout_module, "scatter"),
            gather: ctx.pipeline(&layout_module, "gather"),
        }
    }
}

/// The layout's tables on the device, in the order [`ChunkSpec`] binds them by index.
fn tables(ctx: &GpuContext, layout: &Layout) -> Vec<wgpu::Buffer> {
    let joins: Vec<u32> = layout.joins().iter().flatten().copied().collect();
    vec![
        ctx.storage("slot_var", layout.slot_var()),
        ctx.storage("var_off", layout.var_off()),
        ctx.storage("var_slot", layout.var_slot()),
        ctx.storage("var_con", layout.var_con()),
        ctx.storage("con_off", layout.con_off()),
        ctx.storage("choice_off", layout.choice_off()),
        ctx.storage("cell_off", layout.cell_off()),
        ctx.storage("cand_piece", layout.cand_piece()),
        ctx.storage("cand_colors", layout.cand_colors()),
        ctx.storage("side_grp", layout.side_grp()),
        ctx.storage("side_sorted", layout.side_sorted()),
        ctx.storage("joins", &joins),
    ]
}

impl Params {
    /// The parameters of a chunk, but for its trial count (0 here).
    fn new(layout: &Layout, cfg: &DcConfig) -> Self {
        Params {
            trials: 0,
            vars: layout.vars() as u32,
            slots: layout.slots() as u32,
            cons: layout.constraints() as u32,
            choices: layout.choices() as u32,
            cells: layout.cells() as u32,
            colors: layout.colors() as u32,
            first_join: layout.first_join() as u32,
            dm: (cfg.kind == MapKind::Dm) as u32,
            adaptive: (cfg.weights == Weights::Adaptive) as u32,
            pad0: 0,
            pad1: 0,
            beta: cfg.beta,
            inv: 1.0 / cfg.beta,
            gamma: cfg.gamma,
            min_weight: MIN_WEIGHT,
        }
    }
}

/// What every chunk of one batch is built from ([`DcGpu::with_chunk_trials`]).
struct ChunkSpec<'s> {
    ctx: &'s GpuContext,
    pipes: &'s Pipelines,
    tables: &'s [wgpu::Buffer],
    /// The chunks' parameters, but for their trial count.
    base: Params,
}

/// The state of one chunk on the device, trial-minor (see [`Chunk`]), and its uniforms.
struct ChunkState {
    p: wgpu::Buffer,
    p_hash: wgpu::Buffer,
    p_hash_l: wgpu::Buffer,
    x: wgpu::Buffer,
    chosen: wgpu::Buffer,
    lambda: wgpu::Buffer,
    m: wgpu::Buffer,
    ca: wgpu::Buffer,
    err: wgpu::Buffer,
    board: wgpu::Buffer,
    status: wgpu::Buffer,
    live: wgpu::Buffer,
    sums: wgpu::Buffer,
    cell_best: wgpu::Buffer,
}

impl ChunkSpec<'_> {
    /// The chunk of trials `first..first + tc`: its buffers and bind groups.
    fn chunk(&self, first: usize, tc: usize) -> Chunk {
        let (ctx, pipes) = (self.ctx, self.pipes);
        let t4 = 4 * tc as u64;
        let st = self.state(tc);
        let (bg_main, bg_concur) = self.divide_concur_binds(&st);
        Chunk {
            first,
            trials: tc,
            st_status: ctx.staging("st_status", 2 * t4),
            st_board: ctx.staging("st_board", t4 * self.base.cells as u64),
            st_sums: ctx.staging("st_sums", 2 * t4),
            bg_main,
            bg_concur,
            bg_adapt: ctx.bind(&pipes.adapt, &[(0, &st.p), (3, &st.lambda), (6, &st.err), (9, &st.live)]),
            bg_argmax: ctx.bind(&pipes.argmax, &[(0, &st.p), (4, &st.m), (16, &self.tables[6]), (22, &st.cell_best)]),
            bg_readout: self.readout_bind(&st),
            bg_hash: ctx.bind(&pipes.hash, &[(0, &st.p_hash), (1, &st.x), (2, &st.sums)]),
            bg_hash_lambda: ctx.bind(&pipes.hash, &[(0, &st.p_hash_l), (1, &st.lambda), (2, &st.sums)]),
            s: st,
        }
    }

    fn state(&self, tc: usize) -> ChunkState {
        let (ctx, b) = (self.ctx, &self.base);
        let (s, v, c, nc, n) = (b.slots as u64, b.vars as u64, b.cons as u64, b.choices as u64, b.cells as u64);
        let (dm, adaptive) = (b.dm == 1, b.adaptive == 1);
        let t4 = 4 * tc as u64;
        ChunkState {
            p: ctx.uniform("dc params", &Params { trials: tc as u32, ..*b }),
            // The state is trial-minor on the device (shaders/dc.wgsl).
            p_hash: ctx.uniform("p_hash", &HashParams { trials: tc as u32, len: b.slots, pad0: 1, pad1: 0 }),
            p_hash_l: ctx.uniform("p_hash_l", &HashParams { trials: tc as u32, len: b.cons, pad0: 1, pad1: 0 }),
            x: ctx.zeroed("x", t4 * s),
            chosen: ctx.zeroed("chosen", t4 * nc),
            lambda: ctx.storage("lambda", &vec![1.0f32; tc * c as usize]),
            m: ctx.zeroed("m", t4 * v),
            ca: ctx.zeroed("ca", if dm { t4 * v } else { 4 }),
            err: ctx.zeroed("err", if adaptive { t4 * c } else { 4 }),
            board: ctx.zeroed("board", t4 * n),
            status: ctx.zeroed("status", 2 * t4),
            live: ctx.storage("live", &vec![1u32; tc]),
            sums: ctx.zeroed("sums", 2 * t4),
            cell_best: ctx.zeroed("cell_best", t4 * n),
        }
    }

    /// The divide pass (the update fused with the next divide) and the concur pass.
    fn divide_concur_binds(&self, st: &ChunkState) -> (wgpu::BindGroup, wgpu::BindGroup) {
        let (ctx, pipes) = (self.ctx, self.pipes);
        let tb = |i: usize| &self.tables[i];
        let main = ctx.bind(
            &pipes.divide,
            &[
                (0, &st.p),
                (1, &st.x),
                (2, &st.chosen),
                (4, &st.m),
                (5, &st.ca),
                (6, &st.err),
                (9, &st.live),
                (10, tb(0)),
                (14, tb(4)),
                (15, tb(5)),
                (16, tb(6)),
                (17, tb(7)),
                (19, tb(9)),
                (20, tb(10)),
                (21, tb(11)),
            ],
        );
        let concur = ctx.bind(
            &pipes.concur,
            &[
                (0, &st.p),
                (1, &st.x),
                (2, &st.chosen),
                (3, &st.lambda),
                (4, &st.m),
                (5, &st.ca),
                (11, tb(1)),
                (12, tb(2)),
                (13, tb(3)),
                (15, tb(5)),
            ],
        );
        (main, concur)
    }

    fn readout_bind(&self, st: &ChunkState) -> wgpu::BindGroup {
        let tb = |i: usize| &self.tables[i];
        self.ctx.bind(
            &self.pipes.readout,
            &[(0, &st.p), (7, &st.board), (8, &st.status), (17, tb(7)), (18, tb(8)), (21, tb(11)), (22, &st.cell_best)],
        )
    }
}

/// The memory a batch of `cfg` takes on the GPU backend (its
/// [`crate::backend::Backend::estimate`]; ARCHITECTURE.md §8; the plain layout): the
/// whole iteration on the device (`tables`, `ChunkSpec::chunk`, the upload scratch), the
/// bookkeeping, boards and the round's concur values for the assignment readout on the host,
/// and the staging buffers the host reads through. Upper bounds from the puzzle's shape; a new
/// buffer adds its bytes here, and `tests/gpu.rs` fails when the device part no longer bounds
/// [`DcGpu::device_bytes`].
pub fn estimate(puzzle: &Puzzle, cfg: &DcConfig) -> GpuEstimate {
    let s = Shape::of(puzzle);
    let d = dc_sizes(&s, crate::dc::DcLayout::Plain);
    let dm = u64::from(cfg.kind == MapKind::Dm);
    let adaptive = u64::from(cfg.weights == crate::dc::Weights::Adaptive);
    let n = s.cells;
    // The starts are built a block of 256 trials at a time.
    let block = 256 * WORD * (d.slots + d.choices);
    let host = Estimate {
        fixed: dc_tables(&s, &d) + block + 8 * 8 * s.weight_len() + 64 * ALLOC,
        per_trial: TRIAL_BOOKKEEPING
            + s.assigners()
            + 2 * WORD * n                              // best boards, boards read back
            + 4 * WORD                                  // statuses, live flags
            + WORD * d.vars                             // the round's concur values
            + WORD * n + 3 * ALLOC                      // an assignment readout
            + 2 * WORD * d.constraints                  // the weights' first upload
            + 8                                         // fingerprint
            + std::mem::size_of::<crate::batch::TrialSummary>() as u64,
    };
    let device = Estimate {
        // Tables: per slot its variable, the variables' slots and constraints; offsets of
        // constraints, choices and cells; candidates' pieces and colours; colour groups; joins.
        fixed: WORD * (3 * d.slots + 8 * d.vars + 2 * d.constraints + 2 * s.cells + 3 * s.joins)
            + 2 * WORD * s.cells * 4 * (s.colors + 1)
            + 16 * WORD * 64,
        per_trial: WORD * (d.slots + d.choices + d.constraints) // x, chosen slots, weights
            + (1 + dm) * WORD * d.vars                          // concur points
            + adaptive * WORD * d.constraints                   // errors
            + 2 * WORD * n                                      // boards, per-cell argmax
            + 5 * WORD                                          // status, live, fingerprint
            + WORD * d.vars.max(d.slots), // the scatter of an upload, the gather of a read-back
    };
    let staging = Estimate { fixed: 0, per_trial: WORD * n + 4 * WORD + WORD * d.vars.max(d.slots) };
    GpuEstimate { host, device, staging }
}

/// Slot values, chosen slots and constraint weights of every trial, trial-major.
pub type DcState = (Vec<f32>, Vec<u32>, Vec<f32>);

impl Span for Chunk {
    fn first(&self) -> usize {
        self.first
    }
    fn trials(&self) -> usize {
        self.trials
    }
}

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
    pub fn new(ctx: Arc<GpuContext>, puzzle: &'a Puzzle, cfg: DcConfig) -> Result<Self, EngineError> {
        Self::with_chunk_trials(ctx, puzzle, cfg, usize::MAX)
    }

    /// Like [`DcGpu::new`] with at most `chunk` trials per chunk.
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
        let trials = cfg.trials.max(1);
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

    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn chunk_sizes(&self) -> Vec<usize> {
        self.chunks.iter().map(|c| c.trials).collect()
    }

    /// Writes per-trial data, trial-major in `data` (`per` words per trial, trials
    /// `first..`), into a trial-minor device buffer: through the scatter kernel, a block of
    /// trials at a time.
    fn write_minor<T: bytemuck::Pod>(
        &self,
        first: usize,
        data: &[T],
        per: usize,
        buf: impl Fn(&Chunk) -> &wgpu::Buffer,
    ) {
        if per == 0 || data.is_empty() {
            return;
        }
        let count = data.len() / per;
        let block = (SCATTER_WORDS / per).max(1);
        for ch in &self.chunks {
            let (lo, hi) = (first.max(ch.first), (first + count).min(ch.first + ch.trials));
            let mut t0 = lo;
            while t0 < hi {
                let t1 = (t0 + block).min(hi);
                let words = &data[(t0 - first) * per..(t1 - first) * per];
                self.ctx.queue.write_buffer(&self.scratch, 0, bytemuck::cast_slice(words));
                let params = LayoutParams {
                    trials: ch.trials as u32,
                    per: per as u32,
                    first: (t0 - ch.first) as u32,
                    count: (t1 - t0) as u32,
                };
                let pb = self.ctx.uniform("scatter params", &params);
                let bg = self.ctx.bind(&self.pipes.scatter, &[(0, &pb), (1, &self.scratch), (2, buf(ch))]);
                let mut enc = self.ctx.device.create_command_encoder(&Default::default());
                dispatch(&mut enc, &self.pipes.scatter, &bg, grid(((t1 - t0) * per) as u64));
                self.ctx.queue.submit([enc.finish()]);
                t0 = t1;
            }
        }
    }

    /// Reads a trial-minor device buffer back in trial-major order (`per` words per trial):
    /// the gather kernel writes each chunk trial-major into a temporary buffer.
    fn read_minor<T: bytemuck::Pod + Default>(
        &self,
        per: usize,
        buf: impl Fn(&Chunk) -> &wgpu::Buffer,
    ) -> Result<Vec<T>, GpuError> {
        let mut out = vec![T::default(); self.trials * per];
        for ch in &self.chunks {
            let bytes = (4 * ch.trials * per) as u64;
            let tmp = self.ctx.zeroed("gather", bytes);
            let st = self.ctx.staging("gather read", bytes);
            let params = LayoutParams { trials: ch.trials as u32, per: per as u32, first: 0, count: ch.trials as u32 };
            let pb = self.ctx.uniform("gather params", &params);
            let bg = self.ctx.bind(&self.pipes.gather, &[(0, &pb), (1, buf(ch)), (2, &tmp)]);
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            dispatch(&mut enc, &self.pipes.gather, &bg, grid((ch.trials * per) as u64));
            enc.copy_buffer_to_buffer(&tmp, 0, &st, 0, bytes);
            self.ctx.queue.submit([enc.finish()]);
            let dst = &mut out[ch.first * per..(ch.first + ch.trials) * per];
            self.ctx.read_back(&mut [(&st, bytemuck::cast_slice_mut(dst))])?;
        }
        Ok(out)
    }

    /// Writes slot values, chosen slots and weights of trials `first..`.
    pub fn write_state(&self, first: usize, x: &[f32], chosen: &[u32], lambda: &[f32]) {
        let l = &self.layout;
        self.write_minor(first, x, l.slots(), |c| &c.s.x);
        self.write_minor(first, chosen, l.choices(), |c| &c.s.chosen);
        self.write_minor(first, lambda, l.constraints(), |c| &c.s.lambda);
    }
    /// Writes the concur point (for testing the divide kernel on its own); `ca` (`P_a(y)`) is
    /// kept by the difference map only.
    pub fn write_concur(&self, m: &[f32], ca: Option<&[f32]>) {
        let v = self.layout.vars();
        self.write_minor(0, m, v, |c| &c.s.m);
        if let (Some(ca), MapKind::Dm) = (ca, self.cfg.kind) {
            self.write_minor(0, ca, v, |c| &c.s.ca);
        }
    }
    /// Writes the per-constraint errors (for testing the adapt kernel on its own).
    pub fn write_errors(&self, err: &[f32]) {
        self.write_minor(0, err, self.layout.constraints(), |c| &c.s.err);
    }
    fn write_live(&self, live: &[u32]) {
        // Per-trial buffers that stay trial-major (live flags, boards, statuses).
        chunks::write_per_trial(&self.ctx, &self.chunks, 0, live, 1, |c| &c.s.live);
    }

    pub fn read_state(&self) -> Result<DcState, GpuError> {
        let l = &self.layout;
        Ok((
            self.read_minor(l.slots(), |c| &c.s.x)?,
            self.read_minor(l.choices(), |c| &c.s.chosen)?,
            self.read_minor(l.constraints(), |c| &c.s.lambda)?,
        ))
    }
    /// The concur point `m` and (difference map) `P_a(y)`.
    pub fn read_concur(&self) -> Result<(Vec<f32>, Option<Vec<f32>>), GpuError> {
        let v = self.layout.vars();
        let ca = if self.cfg.kind == MapKind::Dm { Some(self.read_minor(v, |c| &c.s.ca)?) } else { None };
        Ok((self.read_minor(v, |c| &c.s.m)?, ca))
    }
    /// Per-constraint errors of the last divide (adaptive weights only).
    pub fn read_errors(&self) -> Result<Vec<f32>, GpuError> {
        if self.cfg.weights != Weights::Adaptive {
            return Err(GpuError::Misuse("errors are kept with adaptive weights only".into()));
        }
        self.read_minor(self.layout.constraints(), |c| &c.s.err)
    }
    /// Readout boards and per-trial (mismatched joins, extra piece uses).
    pub fn read_readout(&self) -> Result<(Vec<u32>, Vec<u32>), GpuError> {
        let (ctx, chunks) = (&self.ctx, &self.chunks);
        Ok((
            chunks::read_per_trial(ctx, chunks, self.layout.cells(), |c| &c.s.board)?,
            chunks::read_per_trial(ctx, chunks, 2, |c| &c.s.status)?,
        ))
    }

    fn encode(&self, enc: &mut wgpu::CommandEncoder, ch: &Chunk, k: Kernel) {
        let tc = ch.trials as u64;
        let l = &self.layout;
        match k {
            Kernel::Concur => dispatch(enc, &self.pipes.concur, &ch.bg_concur, grid(tc * l.vars() as u64)),
            Kernel::Divide => dispatch(enc, &self.pipes.divide, &ch.bg_main, grid(tc * l.constraints() as u64)),
            Kernel::Adapt => dispatch(enc, &self.pipes.adapt, &ch.bg_adapt, grid(tc)),
            Kernel::Readout => {
                dispatch(enc, &self.pipes.argmax, &ch.bg_argmax, grid(tc * l.cells() as u64));
                dispatch(enc, &self.pipes.readout, &ch.bg_readout, groups_grid(tc));
            }
        }
    }

    /// Runs one kernel over the whole batch `reps` times and waits.
    pub fn run_kernel(&self, k: Kernel, reps: usize) -> Result<(), GpuError> {
        if k == Kernel::Adapt && self.cfg.weights != Weights::Adaptive {
            return Err(GpuError::Misuse("the adapt kernel belongs to adaptive weights".into()));
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for _ in 0..reps {
            for ch in &self.chunks {
                self.encode(&mut enc, ch, k);
            }
        }
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.wait()
    }

    /// Runs `reps` whole iterations (concur, divide, adapt, readout) and waits.
    pub fn run_iterations(&self, reps: usize) -> Result<(), GpuError> {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for _ in 0..reps {
            for ch in &self.chunks {
                self.encode_iteration(&mut enc, ch);
            }
        }
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.wait()
    }

    /// Bytes of per-trial state one kernel moves (tables, shared by all trials, excluded).
    pub fn kernel_bytes(&self, k: Kernel) -> u64 {
        let l = &self.layout;
        let (s, v, c, nc, n) =
            (l.slots() as u64, l.vars() as u64, l.constraints() as u64, l.choices() as u64, l.cells() as u64);
        let dm = self.cfg.kind == MapKind::Dm;
        let adaptive = self.cfg.weights == Weights::Adaptive;
        match k {
            // x read per slot, chosen checked per slot, lambda per slot, m (and ca) written.
            Kernel::Concur => 4 * (s + nc + if adaptive { s } else { 0 } + v * if dm { 2 } else { 1 }),
            // x read and written, m gathered per slot (twice with ca), chosen read and written.
            Kernel::Divide => 4 * (2 * s + s * if dm { 2 } else { 1 } + 2 * nc + if adaptive { c } else { 0 }),
            Kernel::Adapt => 4 * (3 * c),
            // m read once, the per-cell argmax written and read, the board written.
            Kernel::Readout => 4 * (v + 3 * n + 2),
        }
    }

    fn encode_iteration(&self, enc: &mut wgpu::CommandEncoder, ch: &Chunk) {
        self.encode(enc, ch, Kernel::Concur);
        self.encode(enc, ch, Kernel::Divide);
        if self.cfg.weights == Weights::Adaptive {
            self.encode(enc, ch, Kernel::Adapt);
        }
        self.encode(enc, ch, Kernel::Readout);
    }

    fn fingerprints(&self) -> Result<Vec<u64>, GpuError> {
        let l = &self.layout;
        let adaptive = self.cfg.weights == Weights::Adaptive;
        chunks::fingerprints(
            &self.ctx,
            &self.chunks,
            |c| (&c.s.sums, &c.st_sums),
            |enc, ch| {
                dispatch(enc, &self.pipes.hash, &ch.bg_hash, grid((ch.trials * l.slots()) as u64));
                if adaptive {
                    dispatch(enc, &self.pipes.hash, &ch.bg_hash_lambda, grid((ch.trials * l.constraints()) as u64));
                }
            },
        )
    }

    /// Copies the boards of `which` trials up (one copy per trial into the staging buffer).
    fn read_boards(&self, which: &[usize], out: &mut [u32]) -> Result<(), GpuError> {
        let n = self.layout.cells();
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for &t in which {
            let ch = self.chunk_of(t);
            let off = (4 * (t - ch.first) * n) as u64;
            enc.copy_buffer_to_buffer(&ch.s.board, off, &ch.st_board, off, 4 * n as u64);
        }
        self.ctx.queue.submit([enc.finish()]);
        for ch in &self.chunks {
            if !which.iter().any(|&t| t >= ch.first && t < ch.first + ch.trials) {
                continue;
            }
            let dst = &mut out[ch.first * n..(ch.first + ch.trials) * n];
            self.ctx.read_back(&mut [(&ch.st_board, bytemuck::cast_slice_mut(dst))])?;
        }
        Ok(())
    }

    fn chunk_of(&self, t: usize) -> &Chunk {
        let i = self.chunks.partition_point(|c| c.first + c.trials <= t);
        &self.chunks[i]
    }

    /// A fresh start for a trial: random slot values, unit weights, `P_b(x)` (on the CPU).
    fn start(
        &self,
        tr: &mut DcTrial,
        x: &mut [f32],
        chosen: &mut [u32],
        div: &mut DivideScratch,
    ) -> Result<(), EngineError> {
        x.iter_mut().for_each(|v| *v = tr.rng.random::<f32>());
        project::divide(&self.layout, x, chosen, div, &mut [], false)?;
        Ok(())
    }

    /// Runs the batch (same stop rules and result as [`crate::dc::DcMap::run`]).
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) -> Result<MapResult, EngineError> {
        let rounds = Rounds::start();
        let cfg = self.cfg.clone();
        let l = &self.layout;
        let mut trials: Vec<DcTrial> = (0..self.trials)
            .map(|t| Trial::new(cfg.seed, t, DcExtra { asg_read: l.assigners(), permutation: false }))
            .collect();
        let mut best = vec![0u32; self.trials * l.cells()];
        self.start_all(&mut trials, &mut best)?;
        let mut completion = chunks::completion_search(self.puzzle, cfg.complete.as_ref());
        let mut h = DcLoop::new(l, self.trials);
        loop {
            for _ in 0..ROUND {
                if self.iteration(&mut trials, &mut best, &mut h, &mut completion)? {
                    break;
                }
            }
            self.assignment_readout(&mut trials, &mut best)?;
            if cfg.cycle_restart {
                self.cycle_restarts(&mut trials, &mut h)?;
            }
            if rounds.after_round(&trials, cfg.stop_at_first, cfg.max_iters, cfg.time_limit, &mut &mut *progress) {
                break;
            }
        }
        Ok(chunks::result(self.puzzle, &trials, &best, |b| l.placements(b), rounds.elapsed_s()))
    }

    /// The starts of every trial, on all cores, a block of trials at a time (host memory
    /// stays bounded), with the assignment readout of each start as its first best board.
    fn start_all(&self, trials: &mut [DcTrial], best: &mut [u32]) -> Result<(), EngineError> {
        let l = &self.layout;
        let (t_all, s, nc, n, v) = (self.trials, l.slots(), l.choices(), l.cells(), l.vars());
        const BLOCK: usize = 256;
        let mut xs = vec![0.0f32; BLOCK.min(t_all) * s];
        let mut chs = vec![0u32; BLOCK.min(t_all) * nc];
        for b0 in (0..t_all).step_by(BLOCK) {
            let b1 = (b0 + BLOCK).min(t_all);
            trials[b0..b1]
                .par_iter_mut()
                .zip(xs.par_chunks_mut(s))
                .zip(chs.par_chunks_mut(nc))
                .zip(best[b0 * n..b1 * n].par_chunks_mut(n))
                .try_for_each_init(
                    || (DivideScratch::new(l), l.assign_scratch()),
                    |(div, scratch), (((tr, x), ch), b)| -> Result<(), EngineError> {
                        self.start(tr, x, ch, div)?;
                        // The first best board: the assignment readout of the start.
                        l.assign(&x[..v], scratch, &mut tr.extra.asg_read, false, b)?;
                        tr.best_score = l.score(b);
                        Ok(())
                    },
                )?;
            let k = b1 - b0;
            // The weights start at 1 on the device.
            self.write_state(b0, &xs[..k * s], &chs[..k * nc], &[]);
        }
        Ok(())
    }

    /// One iteration of every live trial: one submission, the per-trial status read back,
    /// the boards of the trials that improved (rescored and checked), the completion search.
    /// True when the round ends early: no trial is live, or one solved and the run stops at
    /// the first.
    fn iteration(
        &self,
        trials: &mut [DcTrial],
        best: &mut [u32],
        h: &mut DcLoop,
        completion: &mut Option<Backtracker<'_>>,
    ) -> Result<bool, EngineError> {
        let cfg = &self.cfg;
        for (a, tr) in h.live.iter_mut().zip(trials.iter()) {
            *a = tr.is_active(cfg.max_iters) as u32;
        }
        if h.live.iter().all(|&a| a == 0) {
            return Ok(true);
        }
        if h.live != h.live_sent {
            self.write_live(&h.live);
            h.live_sent.clone_from(&h.live);
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for c in &self.chunks {
            self.encode_iteration(&mut enc, c);
            enc.copy_buffer_to_buffer(&c.s.status, 0, &c.st_status, 0, 8 * c.trials as u64);
        }
        self.ctx.queue.submit([enc.finish()]);
        for c in &self.chunks {
            let r = 2 * c.first..2 * (c.first + c.trials);
            self.ctx.read_back(&mut [(&c.st_status, bytemuck::cast_slice_mut(&mut h.status[r]))])?;
        }
        self.take_status(trials, h);
        if !h.want.is_empty() {
            self.take_boards(trials, best, h)?;
        }
        if let (Some(comp), Some(bt)) = (&cfg.complete, completion.as_mut()) {
            self.complete(trials, best, h, comp, bt);
        }
        Ok(cfg.stop_at_first && trials.iter().any(|t| t.solved_at.is_some()))
    }

    /// Counts the iteration of each live trial and notes in `want` those whose readout is a
    /// permutation that improves on their best (their boards come up).
    fn take_status(&self, trials: &mut [DcTrial], h: &mut DcLoop) {
        let max_score = self.puzzle.max_score();
        h.want.clear();
        for (t, tr) in trials.iter_mut().enumerate() {
            if h.live[t] == 0 {
                continue;
            }
            tr.iterations += 1;
            tr.warm = true;
            let (bad, extra) = (h.status[2 * t] as usize, h.status[2 * t + 1]);
            tr.extra.permutation = extra == 0;
            if extra == 0 && max_score - bad.min(max_score) > tr.best_score {
                h.want.push(t);
            }
        }
    }

    /// Reads the boards of the trials in `want`, rescores each exactly against the device's
    /// count, keeps it as the trial's best and solves the trial when it passes the exact check.
    fn take_boards(&self, trials: &mut [DcTrial], best: &mut [u32], h: &mut DcLoop) -> Result<(), EngineError> {
        let (n, max_score, l) = (self.layout.cells(), self.puzzle.max_score(), &self.layout);
        self.read_boards(&h.want, &mut h.boards)?;
        for &t in &h.want {
            let board = &h.boards[t * n..(t + 1) * n];
            let score = l.score(board);
            if score + h.status[2 * t] as usize != max_score {
                return Err(GpuError::Device(format!(
                    "the device counted {} mismatched joins on trial {t}, the CPU {}",
                    h.status[2 * t],
                    max_score - score
                ))
                .into());
            }
            let tr = &mut trials[t];
            tr.best_score = score;
            best[t * n..(t + 1) * n].copy_from_slice(board);
            if score == max_score && self.is_solution(board) {
                tr.solve(Mechanism::Map);
            }
        }
        Ok(())
    }

    /// The completion search of every live unsolved trial, from its best board.
    fn complete(
        &self,
        trials: &mut [DcTrial],
        best: &mut [u32],
        h: &DcLoop,
        comp: &Completion,
        bt: &mut Backtracker<'_>,
    ) {
        let (n, l) = (self.layout.cells(), &self.layout);
        for (t, tr) in trials.iter_mut().enumerate() {
            if h.live[t] == 1 && tr.solved_at.is_none() {
                let improved = h.want.binary_search(&t).is_ok();
                let (place, id) = (|b: &[u32]| l.placements(b), |c, pl| l.variable_of(c, pl));
                let score = tr.best_score;
                tr.complete(comp, bt, self.puzzle, improved, score, &mut best[t * n..(t + 1) * n], place, id);
            }
        }
    }

    /// The assignment readout of the round's last concur point, for trials whose argmax
    /// board was not a permutation (as the CPU backend does).
    fn assignment_readout(&self, trials: &mut [DcTrial], best: &mut [u32]) -> Result<(), EngineError> {
        let (l, max_iters, max_score) = (&self.layout, self.cfg.max_iters, self.puzzle.max_score());
        let (n, v) = (l.cells(), l.vars());
        let need: Vec<usize> =
            (0..self.trials).filter(|&t| trials[t].is_active(max_iters) && !trials[t].extra.permutation).collect();
        if need.is_empty() {
            return Ok(());
        }
        let (m, _) = self.read_concur()?;
        let read: Vec<(usize, usize, Vec<u32>)> = trials
            .par_iter_mut()
            .enumerate()
            .filter(|(t, _)| need.binary_search(t).is_ok())
            .map_init(
                || (l.assign_scratch(), vec![0u32; n]),
                |(scr, b), (t, tr)| {
                    let ok = l.assign(&m[t * v..(t + 1) * v], scr, &mut tr.extra.asg_read, tr.warm, b).is_ok();
                    let score = if ok { l.score(b) } else { 0 };
                    (t, score, b.clone())
                },
            )
            .collect();
        for (t, score, b) in read {
            if score > trials[t].best_score {
                trials[t].best_score = score;
                best[t * n..(t + 1) * n].copy_from_slice(&b);
                if score == max_score && self.is_solution(&b) {
                    trials[t].solve(Mechanism::Map);
                }
            }
        }
        Ok(())
    }

    /// At the end of a round: restarts the active trials whose state's fingerprint came
    /// round again (exact limit cycles), weights back at 1.
    fn cycle_restarts(&self, trials: &mut [DcTrial], h: &mut DcLoop) -> Result<(), EngineError> {
        let hashes = self.fingerprints()?;
        for (t, tr) in trials.iter_mut().enumerate() {
            if !tr.is_active(self.cfg.max_iters) || !tr.iterations.is_multiple_of(ROUND) {
                continue;
            }
            if tr.in_cycle(hashes[t]) {
                tr.restarts += 1;
                tr.warm = false;
                self.start(tr, &mut h.x, &mut h.ch, &mut h.div)?;
                self.write_state(t, &h.x, &h.ch, &h.ones);
            }
        }
        Ok(())
    }

    fn is_solution(&self, board: &[u32]) -> bool {
        let b =
            Board { width: self.puzzle.width(), height: self.puzzle.height(), cells: self.layout.placements(board) };
        verify::check(self.puzzle, &b).valid
    }
}

/// What a divide-and-concur trial keeps besides the shared bookkeeping.
struct DcExtra {
    /// Solvers of the assignment readout.
    asg_read: Vec<Assigner>,
    /// Whether the last argmax readout was a permutation of the pieces.
    permutation: bool,
}

type DcTrial = Trial<DcExtra>;

/// The host arrays of [`DcGpu::run`], batch-wide, and the scratch of a restart.
struct DcLoop {
    /// Per trial: mismatched joins and pieces used more than once, as the device counted.
    status: Vec<u32>,
    /// Boards read back.
    boards: Vec<u32>,
    /// Which trials run, and what the device was last told.
    live: Vec<u32>,
    live_sent: Vec<u32>,
    /// The trials whose boards come up this iteration (ascending).
    want: Vec<usize>,
    /// A restart's state, chosen slots, unit weights and divide scratch.
    x: Vec<f32>,
    ch: Vec<u32>,
    ones: Vec<f32>,
    div: DivideScratch,
}

impl DcLoop {
    fn new(l: &Layout, t_all: usize) -> Self {
        DcLoop {
            status: vec![0u32; 2 * t_all],
            boards: vec![0u32; t_all * l.cells()],
            live: vec![1u32; t_all],
            live_sent: Vec::new(),
            want: Vec::new(),
            x: vec![0.0f32; l.slots()],
            ch: vec![0u32; l.choices()],
            ones: vec![1.0f32; l.constraints()],
            div: DivideScratch::new(l),
        }
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
