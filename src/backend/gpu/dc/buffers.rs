//! The buffers of divide and concur on the device: the kernels' uniforms and pipelines, the
//! layout's tables every chunk shares, one chunk's trial-minor state and its bind groups;
//! [`estimate`], the memory of those buffers (ARCHITECTURE.md §8).

use super::super::chunks::Span;
use super::super::context::GpuContext;
use super::super::f1::HashParams;
use super::super::{DC_WGSL, HASH_WGSL, LAYOUT_WGSL};
use crate::batch::MapKind;
use crate::dc::layout::{dc_sizes, dc_tables};
use crate::dc::{DcConfig, Layout, Weights};
use crate::limits::memory::{ALLOC, Shape, TRIAL_BOOKKEEPING, WORD};
use crate::limits::{Estimate, GpuEstimate};
use crate::puzzle::Puzzle;

/// Adaptive weights never fall below this (as on the CPU).
const MIN_WEIGHT: f32 = 1e-3;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Params {
    pub(super) trials: u32,
    pub(super) vars: u32,
    pub(super) slots: u32,
    pub(super) cons: u32,
    pub(super) choices: u32,
    pub(super) cells: u32,
    pub(super) colors: u32,
    pub(super) first_join: u32,
    pub(super) dm: u32,
    pub(super) adaptive: u32,
    pub(super) pad0: u32,
    pub(super) pad1: u32,
    pub(super) beta: f32,
    pub(super) inv: f32,
    pub(super) gamma: f32,
    pub(super) min_weight: f32,
}

pub(super) struct Pipelines {
    pub(super) concur: wgpu::ComputePipeline,
    pub(super) divide: wgpu::ComputePipeline,
    pub(super) adapt: wgpu::ComputePipeline,
    pub(super) argmax: wgpu::ComputePipeline,
    pub(super) readout: wgpu::ComputePipeline,
    pub(super) hash: wgpu::ComputePipeline,
    pub(super) scatter: wgpu::ComputePipeline,
    pub(super) gather: wgpu::ComputePipeline,
}

/// Parameters of `shaders/layout.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct LayoutParams {
    pub(super) trials: u32,
    pub(super) per: u32,
    pub(super) first: u32,
    pub(super) count: u32,
}

/// The layouts of the uniforms above (`tests/shaders.rs`).
pub(crate) fn uniform_layouts() -> Vec<super::super::UniformLayout> {
    vec![
        uniform_layout!(
            "dc.wgsl",
            "P",
            Params,
            [
                trials, vars, slots, cons, choices, cells, colors, first_join, dm, adaptive, pad0, pad1, beta, inv,
                gamma, min_weight
            ]
        ),
        uniform_layout!("layout.wgsl", "P", LayoutParams, [trials, per, first, count]),
    ]
}

/// Words the scatter staging buffer holds: uploads go through it a block of trials at a time.
pub(super) const SCATTER_WORDS: usize = 1 << 22;

pub(super) struct Chunk {
    pub(super) first: usize,
    pub(super) trials: usize,
    /// The state on the device and its uniforms.
    pub(super) s: ChunkState,
    pub(super) st_status: wgpu::Buffer,
    pub(super) st_board: wgpu::Buffer,
    pub(super) st_sums: wgpu::Buffer,
    pub(super) bg_main: wgpu::BindGroup,
    pub(super) bg_concur: wgpu::BindGroup,
    pub(super) bg_adapt: wgpu::BindGroup,
    pub(super) bg_argmax: wgpu::BindGroup,
    pub(super) bg_readout: wgpu::BindGroup,
    pub(super) bg_hash: wgpu::BindGroup,
    pub(super) bg_hash_lambda: wgpu::BindGroup,
}

impl Pipelines {
    pub(super) fn new(ctx: &GpuContext) -> Self {
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
pub(super) fn tables(ctx: &GpuContext, layout: &Layout) -> Vec<wgpu::Buffer> {
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
    pub(super) fn new(layout: &Layout, cfg: &DcConfig) -> Self {
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

/// What every chunk of one batch is built from ([`DcGpu::with_chunk_trials`](super::DcGpu::with_chunk_trials)).
pub(super) struct ChunkSpec<'s> {
    pub(super) ctx: &'s GpuContext,
    pub(super) pipes: &'s Pipelines,
    pub(super) tables: &'s [wgpu::Buffer],
    /// The chunks' parameters, but for their trial count.
    pub(super) base: Params,
}

/// The state of one chunk on the device, trial-minor (see [`Chunk`]), and its uniforms.
pub(super) struct ChunkState {
    pub(super) p: wgpu::Buffer,
    pub(super) p_hash: wgpu::Buffer,
    pub(super) p_hash_l: wgpu::Buffer,
    pub(super) x: wgpu::Buffer,
    pub(super) chosen: wgpu::Buffer,
    pub(super) lambda: wgpu::Buffer,
    pub(super) m: wgpu::Buffer,
    pub(super) ca: wgpu::Buffer,
    pub(super) err: wgpu::Buffer,
    pub(super) board: wgpu::Buffer,
    pub(super) status: wgpu::Buffer,
    pub(super) live: wgpu::Buffer,
    pub(super) sums: wgpu::Buffer,
    pub(super) cell_best: wgpu::Buffer,
}

impl ChunkSpec<'_> {
    /// The chunk of trials `first..first + tc`: its buffers and bind groups.
    pub(super) fn chunk(&self, first: usize, tc: usize) -> Chunk {
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
/// [`DcGpu::device_bytes`](super::DcGpu::device_bytes).
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

impl Span for Chunk {
    fn first(&self) -> usize {
        self.first
    }
    fn trials(&self) -> usize {
        self.trials
    }
}
