//! The buffers of F1 on the device: the kernels' uniforms, the tables every chunk shares,
//! one chunk's per-trial state and bind groups, and the device assignment over a chunk's
//! weights (the auction, the workgroup JV or the subgroup JV).

use super::super::assign::{AssignBatch, AssignGpu};
use super::super::chunks::Span;
use super::super::context::GpuContext;
use super::super::jv::{JvBatch, JvGpu, JvKind, JvShared};
use super::super::pick::Pick;
use super::super::timing::Passes;
use super::super::{F1_STEP_WGSL, F1_WGSL, HASH_WGSL};
use crate::backend::GpuError;
use crate::batch::{MapKind, TrialSummary};
use crate::f1::map::{AssignOn, MapConfig};
use crate::f1::project::{EdgeProjection, F1, F1Tables};
use crate::limits::memory::{ALLOC, Shape, TRIAL_BOOKKEEPING, WORD};
use crate::limits::{Estimate, GpuEstimate};
use crate::puzzle::Puzzle;
use std::sync::Arc;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Params {
    pub(super) trials: u32,
    pub(super) cells: u32,
    pub(super) colors: u32,
    pub(super) dim: u32,
    pub(super) wtot: u32,
    pub(super) joins: u32,
    pub(super) one_color: u32,
    /// 1: the weights are taken in the weighted metric of `slotw` (binding 13).
    pub(super) weighted: u32,
    pub(super) a: f32,
    pub(super) b: f32,
    pub(super) beta: f32,
    pub(super) pad1: f32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct HashParams {
    pub trials: u32,
    pub len: u32,
    pub pad0: u32,
    pub pad1: u32,
}

/// The layouts of the uniforms above (`tests/shaders.rs`).
pub(crate) fn uniform_layouts() -> Vec<super::super::UniformLayout> {
    vec![
        uniform_layout!(
            "f1.wgsl",
            "P",
            Params,
            [trials, cells, colors, dim, wtot, joins, one_color, weighted, a, b, beta, pad1]
        ),
        uniform_layout!("f1.wgsl", "TR", TrackParams, [max_score, max_iters, stall, cycle]),
        uniform_layout!("hash.wgsl", "P", HashParams, [trials, len, pad0, pad1]),
    ]
}

pub(super) struct Pipelines {
    /// The fused pass (`shaders/f1_step.wgsl`), when the run uses it.
    pub(super) step: Option<wgpu::ComputePipeline>,
    pub(super) edges: wgpu::ComputePipeline,
    pub(super) weights: wgpu::ComputePipeline,
    pub(super) update: wgpu::ComputePipeline,
    pub(super) mix: wgpu::ComputePipeline,
    pub(super) score: wgpu::ComputePipeline,
    pub(super) track: wgpu::ComputePipeline,
    pub(super) hash: wgpu::ComputePipeline,
}

/// The device loop's per-trial words (`track` in `shaders/f1.wgsl`): iterations, best score,
/// iteration of that best, state, best since the last (re)start and its iteration, 2 unused.
pub(super) const TS: usize = 8;
pub(super) const ST_LIVE: u32 = 0;
pub(super) const ST_SOLVED: u32 = 1;
pub(super) const ST_STALL: u32 = 3;
pub(super) const ST_CYCLE: u32 = 4;
pub(super) const ST_FAIL: u32 = 5;
/// Fingerprint ring per trial: 16 pairs and the next slot.
pub(super) const RING_WORDS: usize = 33;

/// Iterations recorded per submission of the device loop (a power of two, 16 to 64; the
/// environment's `CONCUR_GPU_K` overrides it for measurements).
pub const K_ITERS: usize = 32;

/// Auction dispatches per assignment in the device loop; a problem still running after them
/// restarts its trial.
pub(super) const AUCTION_DISPATCHES: usize = 8;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct TrackParams {
    pub(super) max_score: u32,
    pub(super) max_iters: u32,
    pub(super) stall: u32,
    pub(super) cycle: u32,
}

/// Tables shared by every chunk.
pub(super) struct Tables {
    pub(super) partner: wgpu::Buffer,
    pub(super) pc_off: wgpu::Buffer,
    pub(super) pc_cand: wgpu::Buffer,
    pub(super) cand_idx: wgpu::Buffer,
    pub(super) joins: wgpu::Buffer,
    /// Per side slot, the weight of the metric the weights kernel works in.
    pub(super) slotw: wgpu::Buffer,
}

/// One chunk of the batch with its device buffers and bind groups.
pub(super) struct Chunk {
    pub(super) first: usize,
    pub(super) trials: usize,
    /// The per-trial state on the device.
    pub(super) s: ChunkState,
    /// The device loop: per-trial words, best boards, assignment failures, cold words and
    /// fingerprint rings; the per-trial words' two staging buffers (double-buffered reads).
    pub(super) tstat: wgpu::Buffer,
    pub(super) bestb: wgpu::Buffer,
    pub(super) cold: wgpu::Buffer,
    pub(super) ring: wgpu::Buffer,
    pub(super) st_stat: [wgpu::Buffer; 2],
    pub(super) bg_track: wgpu::BindGroup,
    pub(super) st_w: wgpu::Buffer,
    pub(super) st_w2: wgpu::Buffer,
    pub(super) st_viol: wgpu::Buffer,
    pub(super) st_board: wgpu::Buffer,
    pub(super) st_sums: wgpu::Buffer,
    pub(super) bg_edges_x: wgpu::BindGroup,
    pub(super) bg_edges_tmp: wgpu::BindGroup,
    pub(super) bg_weights: wgpu::BindGroup,
    pub(super) bg_weights_plain: wgpu::BindGroup,
    pub(super) bg_update: wgpu::BindGroup,
    pub(super) bg_mix: wgpu::BindGroup,
    pub(super) bg_score: wgpu::BindGroup,
    pub(super) bg_hash: wgpu::BindGroup,
    /// The fused pass, when the run uses it.
    pub(super) bg_step: Option<wgpu::BindGroup>,
    /// With `--assign gpu-*`: the device assignment over `w` (and `w2`) into `sel` (and
    /// `sel2`).
    pub(super) dev: Option<DeviceAssign>,
}

/// The device assignment of one chunk: over `w` into `sel`, and for the difference map over
/// `w2` into `sel2` (its `P_P(y)`).
pub(super) struct DeviceAssign {
    pub(super) main: Solver,
    pub(super) plain: Option<Solver>,
}

/// Which device assignment kernel a batch runs (`--assign gpu-*`), built once per batch.
pub(super) enum DeviceAssigner {
    Auction(AssignGpu),
    /// The workgroup or the subgroup JV ([`JvGpu::kind`]).
    Jv(JvGpu),
}

/// One device assignment over a chunk's weights, its answer written into `sel`.
pub(super) enum Solver {
    /// The auction, its `settle` bind group and its pick pass.
    Auction(AssignBatch, wgpu::BindGroup, Pick),
    /// The JV (its answer goes into `sel` inside [`JvBatch::encode`]).
    Jv(JvBatch),
}

impl Solver {
    /// Records the pass that writes the answer into `sel` (after [`Solver::run`]).
    pub(super) fn encode_select(&self, p: &mut Passes) {
        match self {
            Solver::Auction(_, _, pick) => pick.encode(p),
            Solver::Jv(_) => {}
        }
    }
    /// One whole solve with no host look, its answer written into `sel`.
    pub(super) fn encode(&self, p: &mut Passes, warm: bool) {
        match self {
            Solver::Auction(a, settle, pick) => {
                a.encode_bounded(p, warm, AUCTION_DISPATCHES, settle);
                pick.encode(p);
            }
            Solver::Jv(j) => j.encode(p, warm),
        }
    }
    /// The host-driven auction of the per-iteration loop (`--complete`).
    pub(super) fn run(&self, warm: bool) -> Result<bool, GpuError> {
        match self {
            Solver::Auction(a, _, _) => a.run(warm),
            Solver::Jv(_) => Err(GpuError::Misuse("the device JV runs in the device loop only".into())),
        }
    }
}

impl Span for Chunk {
    fn first(&self) -> usize {
        self.first
    }
    fn trials(&self) -> usize {
        self.trials
    }
}

/// The fused pass's workgroup arrays (state words and cells) for `f1`, when the run asks for
/// it (`--fused-passes`), runs RRR in the device loop, and its state fits the device's
/// workgroup memory and storage-buffer bindings; None runs the separate passes.
pub(super) fn step_sizes(ctx: &GpuContext, f1: &F1, cfg: &MapConfig) -> Option<(usize, usize)> {
    let (xs, cs) = (f1.dim().next_multiple_of(64), f1.cells().next_multiple_of(64));
    let bytes = 4 * (2 * xs + cs + 2) as u64;
    (cfg.fused_passes
        && cfg.kind == MapKind::Rrr
        && cfg.assign.on_device()
        && ctx.storage_buffers >= 19
        && bytes <= ctx.workgroup_storage as u64)
        .then_some((xs, cs))
}

/// The source of `f1.wgsl` with the fused pass appended.
pub fn step_source() -> String {
    format!("{F1_WGSL}\n{F1_STEP_WGSL}")
}

/// The fused pass's pipeline-overridable constants: its workgroup arrays sized `xs` state
/// words and `cs` cells (the sizes `step_sizes` picks for a run).
pub fn step_constants(xs: usize, cs: usize) -> [(&'static str, f64); 2] {
    [("XS", xs as f64), ("CS", cs as f64)]
}

impl Pipelines {
    pub(super) fn new(ctx: &GpuContext, step: Option<(usize, usize)>) -> Self {
        let module = ctx.module("f1", F1_WGSL);
        let hash = ctx.module("hash", HASH_WGSL);
        let step = step
            .map(|(xs, cs)| ctx.pipeline_with(&ctx.module("f1 step", &step_source()), "step", &step_constants(xs, cs)));
        Pipelines {
            step,
            edges: ctx.pipeline(&module, "edges"),
            weights: ctx.pipeline(&module, "weights"),
            update: ctx.pipeline(&module, "update"),
            mix: ctx.pipeline(&module, "mix"),
            score: ctx.pipeline(&module, "score"),
            track: ctx.pipeline(&module, "track"),
            hash: ctx.pipeline(&hash, "fingerprint"),
        }
    }
}

impl Tables {
    pub(super) fn new(ctx: &GpuContext, tab: &F1Tables, puzzle: &Puzzle, cfg: &MapConfig) -> Self {
        Tables {
            partner: ctx.storage("partner", &tab.partner),
            pc_off: ctx.storage("pc_off", &tab.pc_off),
            pc_cand: ctx.storage("pc_cand", &tab.pc_cand),
            cand_idx: ctx.storage("cand_idx", &tab.cand_idx),
            joins: ctx.storage("joins", &tab.joins),
            // The slot weights of a weighted metric (one unread float for the uniform one).
            slotw: match cfg.join_weights {
                Some(jw) => ctx.storage("slotw", &crate::f1::project::join_slot_weights(puzzle, jw)),
                None => ctx.storage("slotw", &[1.0f32]),
            },
        }
    }
}

/// The memory a batch of `cfg` takes on the GPU backend (its
/// [`crate::backend::Backend::estimate`]; ARCHITECTURE.md §8), with `cfg.assign` resolved:
/// the state, projections, weights and boards on the device (`Tables::new`,
/// `ChunkSpec::chunk`); the weights, boards and solvers of every trial on the host (with
/// `--assign gpu`, the auction's rows, owners and prices on the device instead of reading
/// weights); the staging buffers the host reads through. Upper bounds from the puzzle's shape;
/// a new buffer adds its bytes here, and `tests/gpu.rs` fails when the device part no longer
/// bounds [`super::F1Gpu::device_bytes`].
pub fn estimate(puzzle: &Puzzle, cfg: &MapConfig) -> GpuEstimate {
    let s = Shape::of(puzzle);
    let (dim, wlen, n) = (s.dim(), s.weight_len(), s.cells);
    let dm = u64::from(cfg.kind == MapKind::Dm);
    let auction = u64::from(cfg.assign.on_device());
    let copies = 1 + dm;
    let host = Estimate {
        fixed: s.candidates() + 64 * s.cands + WORD * wlen * 3 + s.assigners() + 64 * ALLOC,
        per_trial: TRIAL_BOOKKEEPING
            + s.assigners()
            + copies * WORD * wlen                       // weights read back
            + 4 * WORD * n                              // chosen entries (two), boards, best boards
            + 4 * WORD                                  // mismatches, live flags, freshness
            + auction * copies * 48                     // the auction's per-problem status
            + std::mem::size_of::<TrialSummary>() as u64,
    };
    let device = Estimate {
        // Tables: partners, per-entry candidate lists, colour offsets, joins, slot weights.
        fixed: WORD * (4 * n + wlen + 1 + 5 * s.cands + 3 * s.joins + 4 * n) + 16 * WORD * 64,
        per_trial: (2 + dm) * WORD * dim                // x, P_E, the DM's second reflection
            + 2 * copies * WORD * wlen                  // weights and their argmax candidates
            + 3 * WORD * n                              // chosen entries (two) and the board
            + 4 * WORD                                  // mismatches, live flag, fingerprint
            + auction * copies * (3 * WORD * n + 48), // rows, owners, prices, status
    };
    let staging = Estimate { fixed: 0, per_trial: copies * WORD * wlen + WORD * n + 3 * WORD + auction * copies * 48 };
    GpuEstimate { host, device, staging }
}

impl Params {
    /// The main passes' parameters of a chunk, but for its trial count (0 here).
    pub(super) fn new(f1: &F1, cfg: &MapConfig, joins: usize) -> Self {
        let beta = cfg.beta;
        let inv = 1.0 / beta;
        // The reflection whose weights are scored: RRR 2 P_E(x) - x; DM f_b(y).
        let (a, b) = match cfg.kind {
            MapKind::Rrr => (2.0, -1.0),
            MapKind::Dm => (1.0 + inv, -inv),
        };
        Params {
            trials: 0,
            cells: f1.cells() as u32,
            colors: f1.colors() as u32,
            dim: f1.dim() as u32,
            wtot: f1.weight_len() as u32,
            joins: joins as u32,
            one_color: (cfg.edge == EdgeProjection::OneColor) as u32,
            weighted: u32::from(cfg.join_weights.is_some()),
            a,
            b,
            beta,
            pad1: 0.0,
        }
    }
}

impl TrackParams {
    pub(super) fn new(puzzle: &Puzzle, cfg: &MapConfig) -> Self {
        TrackParams {
            max_score: puzzle.max_score() as u32,
            max_iters: cfg.run.max_iters.min(u32::MAX as u64 - 1) as u32,
            stall: cfg.restart_stall.map_or(0, |l| l.clamp(1, u32::MAX as u64) as u32),
            cycle: u32::from(!cfg.no_cycle_restart),
        }
    }
}

/// The device JV takes classes of at most [`super::super::jv::MAX_N`] cells.
pub(super) fn check_device_jv(f1: &F1, cfg: &MapConfig) -> Result<(), GpuError> {
    if matches!(cfg.assign, AssignOn::GpuJv | AssignOn::GpuJvSg | AssignOn::GpuJvSgStaged)
        && let Some(n) = f1.class_cells().iter().map(|c| c.len()).find(|&n| n > super::super::jv::MAX_N)
    {
        return Err(GpuError::Misuse(format!(
            "the device JV takes classes of at most {} cells; this puzzle has one of {n} (use --assign gpu-auction or cpu)",
            super::super::jv::MAX_N
        )));
    }
    Ok(())
}

/// With `--assign gpu*`: the device assignment kernel (the auction or the JV), the class
/// sizes and, per row of a trial's classes, its cell and the offset of its row in the flat
/// weights.
pub(super) struct DeviceKernel {
    pub(super) kernel: DeviceAssigner,
    pub(super) sizes: Vec<usize>,
    pub(super) row_cell: wgpu::Buffer,
}

impl DeviceKernel {
    pub(super) fn new(ctx: &Arc<GpuContext>, f1: &F1, cfg: &MapConfig) -> Option<Self> {
        cfg.assign.on_device().then(|| {
            let classes = f1.class_cells();
            let offs = f1.weight_offsets();
            let sizes: Vec<usize> = classes.iter().map(|c| c.len()).collect();
            let rc: Vec<[u32; 2]> = classes
                .iter()
                .zip(&offs)
                .flat_map(|(cells, &off)| {
                    let n = cells.len();
                    cells.iter().enumerate().map(move |(i, &c)| [c, (off + i * n) as u32])
                })
                .collect();
            let kernel = match cfg.assign {
                AssignOn::GpuAuction => DeviceAssigner::Auction(AssignGpu::new(ctx.clone())),
                AssignOn::GpuJvSg => DeviceAssigner::Jv(JvGpu::of_kind(ctx.clone(), JvKind::Subgroup)),
                AssignOn::GpuJvSgStaged => DeviceAssigner::Jv(JvGpu::of_kind(ctx.clone(), JvKind::SubgroupStaged)),
                _ => DeviceAssigner::Jv(JvGpu::new(ctx.clone())),
            };
            DeviceKernel { kernel, sizes, row_cell: ctx.storage("row_cell", &rc) }
        })
    }
}

/// What every chunk of one batch is built from ([`F1Gpu::with_chunk_trials`]).
pub(super) struct ChunkSpec<'s> {
    pub(super) ctx: &'s GpuContext,
    pub(super) pipes: &'s Pipelines,
    pub(super) tables: &'s Tables,
    pub(super) assign: Option<&'s DeviceKernel>,
    pub(super) track_params: wgpu::Buffer,
    /// The chunks' parameters, but for their trial count.
    pub(super) base: Params,
    pub(super) dm: bool,
}

/// The uniforms of one chunk: the main passes, the plain weights (of `x` itself), the
/// difference map's mix, and the fingerprint.
pub(super) struct ChunkParams {
    pub(super) main: wgpu::Buffer,
    pub(super) plain: wgpu::Buffer,
    pub(super) mix: wgpu::Buffer,
    pub(super) hash: wgpu::Buffer,
}

// The field lists of these structs look alike on purpose: one `wgpu::Buffer` per binding of
// the shaders, named as the WGSL names it.
/// The per-trial state of one chunk on the device (see [`Chunk`]).
pub(super) struct ChunkState {
    pub(super) x: wgpu::Buffer,
    pub(super) pe: wgpu::Buffer,
    pub(super) tmp: wgpu::Buffer,
    pub(super) w: wgpu::Buffer,
    pub(super) w2: wgpu::Buffer,
    pub(super) bestc: wgpu::Buffer,
    pub(super) bestc2: wgpu::Buffer,
    pub(super) sel: wgpu::Buffer,
    pub(super) sel2: wgpu::Buffer,
    pub(super) board: wgpu::Buffer,
    pub(super) viol: wgpu::Buffer,
    pub(super) active: wgpu::Buffer,
    pub(super) sums: wgpu::Buffer,
}

/// The device loop's buffers of one chunk (one word each without the device loop).
pub(super) struct LoopState {
    pub(super) tstat: wgpu::Buffer,
    pub(super) bestb: wgpu::Buffer,
    pub(super) fail: wgpu::Buffer,
    pub(super) cold: wgpu::Buffer,
    pub(super) ring: wgpu::Buffer,
    pub(super) st_stat: [wgpu::Buffer; 2],
}

/// The bind groups of one chunk's passes.
pub(super) struct ChunkBinds {
    pub(super) edges_x: wgpu::BindGroup,
    pub(super) edges_tmp: wgpu::BindGroup,
    pub(super) weights: wgpu::BindGroup,
    pub(super) weights_plain: wgpu::BindGroup,
    pub(super) update: wgpu::BindGroup,
    pub(super) mix: wgpu::BindGroup,
    pub(super) score: wgpu::BindGroup,
    pub(super) hash: wgpu::BindGroup,
    pub(super) track: wgpu::BindGroup,
    pub(super) step: Option<wgpu::BindGroup>,
}

impl ChunkSpec<'_> {
    /// The chunk of trials `first..first + tc`: its buffers, bind groups and device
    /// assignment.
    pub(super) fn chunk(&self, first: usize, tc: usize) -> Chunk {
        let ctx = self.ctx;
        let (n, dm) = (self.base.cells as usize, self.dm);
        let ub = 4 * (tc * self.base.wtot as usize) as u64;
        let p = self.params(tc);
        let s = self.state(tc);
        let l = self.loop_state(tc);
        let bg = self.binds(&p, &s, &l);
        let dev = self.device_assign(tc, &s, &l);
        let LoopState { tstat, bestb, cold, ring, st_stat, .. } = l;
        Chunk {
            dev,
            first,
            trials: tc,
            st_w: ctx.staging("st_w", ub),
            st_w2: ctx.staging("st_w2", if dm { ub } else { 4 }),
            st_viol: ctx.staging("st_viol", 4 * tc as u64),
            st_board: ctx.staging("st_board", 4 * (tc * n) as u64),
            st_sums: ctx.staging("st_sums", 8 * tc as u64),
            tstat,
            bestb,
            cold,
            ring,
            st_stat,
            bg_track: bg.track,
            s,
            bg_edges_x: bg.edges_x,
            bg_edges_tmp: bg.edges_tmp,
            bg_weights: bg.weights,
            bg_weights_plain: bg.weights_plain,
            bg_update: bg.update,
            bg_mix: bg.mix,
            bg_score: bg.score,
            bg_hash: bg.hash,
            bg_step: bg.step,
        }
    }

    pub(super) fn params(&self, tc: usize) -> ChunkParams {
        let (ctx, inv) = (self.ctx, 1.0 / self.base.beta);
        let base = Params { trials: tc as u32, ..self.base };
        ChunkParams {
            main: ctx.uniform("p_main", &base),
            plain: ctx.uniform("p_plain", &Params { a: 0.0, b: 1.0, ..base }),
            mix: ctx.uniform("p_mix", &Params { a: 1.0 - inv, b: inv, ..base }),
            hash: ctx.uniform("p_hash", &HashParams { trials: tc as u32, len: base.dim, pad0: 0, pad1: 0 }),
        }
    }

    pub(super) fn state(&self, tc: usize) -> ChunkState {
        let (ctx, dm, n) = (self.ctx, self.dm, self.base.cells as usize);
        let (fb, ub) = (4 * (tc * self.base.dim as usize) as u64, 4 * (tc * self.base.wtot as usize) as u64);
        ChunkState {
            x: ctx.zeroed("x", fb),
            pe: ctx.zeroed("pe", fb),
            tmp: ctx.zeroed("tmp", if dm { fb } else { 4 }),
            w: ctx.zeroed("w", ub),
            w2: ctx.zeroed("w2", if dm { ub } else { 4 }),
            bestc: ctx.zeroed("bestc", ub),
            bestc2: ctx.zeroed("bestc2", if dm { ub } else { 4 }),
            sel: ctx.zeroed("sel", 4 * (tc * n) as u64),
            sel2: ctx.zeroed("sel2", 4 * (tc * n) as u64),
            board: ctx.zeroed("board", 4 * (tc * n) as u64),
            viol: ctx.zeroed("viol", 4 * tc as u64),
            active: ctx.storage("active", &vec![1u32; tc]),
            sums: ctx.zeroed("sums", 8 * tc as u64),
        }
    }

    pub(super) fn loop_state(&self, tc: usize) -> LoopState {
        let (ctx, n) = (self.ctx, self.base.cells as usize);
        let looped = self.assign.is_some();
        let per = |words: usize| if looped { 4 * (tc * words) as u64 } else { 4 };
        LoopState {
            tstat: ctx.zeroed("tstat", per(TS)),
            bestb: ctx.zeroed("bestb", per(n)),
            fail: ctx.zeroed("fail", per(1)),
            cold: ctx.storage("cold", &vec![1u32; if looped { tc } else { 1 }]),
            ring: ctx.zeroed("ring", per(RING_WORDS)),
            st_stat: [ctx.staging("st_stat0", per(TS)), ctx.staging("st_stat1", per(TS))],
        }
    }

    pub(super) fn binds(&self, p: &ChunkParams, s: &ChunkState, l: &LoopState) -> ChunkBinds {
        let (ctx, pipes, t, dm) = (self.ctx, self.pipes, self.tables, self.dm);
        ChunkBinds {
            edges_x: ctx.bind(&pipes.edges, &[(0, &p.main), (1, &s.x), (2, &s.pe), (9, &t.partner)]),
            edges_tmp: ctx.bind(&pipes.edges, &[(0, &p.main), (1, &s.tmp), (2, &s.pe), (9, &t.partner)]),
            weights: self.weights_bind(&p.main, s, &s.w, &s.bestc),
            weights_plain: self.weights_bind(
                &p.plain,
                s,
                if dm { &s.w2 } else { &s.w },
                if dm { &s.bestc2 } else { &s.bestc },
            ),
            update: self.update_bind(p, s),
            mix: self.mix_bind(p, s),
            score: ctx
                .bind(&pipes.score, &[(0, &p.main), (7, &s.board), (8, &s.viol), (12, &t.cand_idx), (14, &t.joins)]),
            hash: ctx.bind(&pipes.hash, &[(0, &p.hash), (1, &s.x), (2, &s.sums)]),
            track: self.track_bind(p, s, l),
            step: self.pipes.step.as_ref().map(|pipe| self.step_bind(pipe, p, s, l)),
        }
    }

    /// The fused pass reads and writes what its five passes do.
    pub(super) fn step_bind(
        &self,
        pipe: &wgpu::ComputePipeline,
        p: &ChunkParams,
        s: &ChunkState,
        l: &LoopState,
    ) -> wgpu::BindGroup {
        let t = self.tables;
        self.ctx.bind(
            pipe,
            &[
                (0, &p.main),
                (2, &s.pe),
                (3, &s.x),
                (4, &s.w),
                (5, &s.bestc),
                (6, &s.sel),
                (7, &s.board),
                (8, &s.viol),
                (9, &t.partner),
                (10, &t.pc_off),
                (11, &t.pc_cand),
                (12, &t.cand_idx),
                (13, &t.slotw),
                (14, &t.joins),
                (15, &s.active),
                (17, &l.tstat),
                (18, &l.bestb),
                (19, &l.fail),
                (20, &l.cold),
                (21, &l.ring),
                (22, &self.track_params),
            ],
        )
    }

    /// The weights pass with parameters `p` into weights `wb` and their best candidates `bb`.
    pub(super) fn weights_bind(
        &self,
        p: &wgpu::Buffer,
        s: &ChunkState,
        wb: &wgpu::Buffer,
        bb: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        let t = self.tables;
        self.ctx.bind(
            &self.pipes.weights,
            &[
                (0, p),
                (2, &s.pe),
                (3, &s.x),
                (4, wb),
                (5, bb),
                (10, &t.pc_off),
                (11, &t.pc_cand),
                (12, &t.cand_idx),
                (13, &t.slotw),
            ],
        )
    }

    pub(super) fn update_bind(&self, p: &ChunkParams, s: &ChunkState) -> wgpu::BindGroup {
        self.ctx.bind(
            &self.pipes.update,
            &[
                (0, &p.main),
                (2, &s.pe),
                (3, &s.x),
                (5, &s.bestc),
                (6, &s.sel),
                (7, &s.board),
                (12, &self.tables.cand_idx),
                (15, &s.active),
            ],
        )
    }

    pub(super) fn mix_bind(&self, p: &ChunkParams, s: &ChunkState) -> wgpu::BindGroup {
        let dm = self.dm;
        self.ctx.bind(
            &self.pipes.mix,
            &[
                (0, &p.mix),
                (3, &s.x),
                (5, if dm { &s.bestc2 } else { &s.bestc }),
                (6, &s.sel2),
                (12, &self.tables.cand_idx),
                (16, if dm { &s.tmp } else { &s.pe }),
            ],
        )
    }

    pub(super) fn track_bind(&self, p: &ChunkParams, s: &ChunkState, l: &LoopState) -> wgpu::BindGroup {
        self.ctx.bind(
            &self.pipes.track,
            &[
                (0, &p.main),
                (3, &s.x),
                (7, &s.board),
                (8, &s.viol),
                (15, &s.active),
                (17, &l.tstat),
                (18, &l.bestb),
                (19, &l.fail),
                (20, &l.cold),
                (21, &l.ring),
                (22, &self.track_params),
            ],
        )
    }

    /// With `--assign gpu*`: the assignment over `w` (and over `w2` for the difference map)
    /// and its `select` passes into `sel` (and `sel2`).
    pub(super) fn device_assign(&self, tc: usize, s: &ChunkState, l: &LoopState) -> Option<DeviceAssign> {
        let DeviceKernel { kernel, sizes, row_cell } = self.assign?;
        let n = self.base.cells as usize;
        let solver = |wb: &wgpu::Buffer, sel: &wgpu::Buffer| match kernel {
            DeviceAssigner::Auction(a) => {
                let b = a.batch_on(sizes, tc, false, Some(wb), n);
                let settle = b.settle_into(&l.fail);
                let pick = b.select_into(row_cell, sel, n);
                Solver::Auction(b, settle, pick)
            }
            DeviceAssigner::Jv(j) => {
                let shared = JvShared { weights: wb, cold: &l.cold, fail: &l.fail, row_cell, sel, cells: n };
                Solver::Jv(j.batch_on(sizes, tc, Some(shared)))
            }
        };
        let main = solver(&s.w, &s.sel);
        let plain = self.dm.then(|| solver(&s.w2, &s.sel2));
        Some(DeviceAssign { main, plain })
    }
}
