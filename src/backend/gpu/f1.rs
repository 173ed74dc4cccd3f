//! F1 (RRR and the difference map in edge-colour space) on the GPU: `shaders/f1.wgsl`.
//!
//! One iteration of RRR for a batch is one device round trip:
//! 1. CPU (rayon over trials): the three class assignments over the weights read back last
//!    time, giving per cell the chosen entry of the flat weight array; written down as `sel`.
//! 2. Device, one submission: `update` (`x += beta (embed(board) - pe)`, board picked from
//!    `sel` through the per-entry argmax candidates that never leave the device), `score`
//!    (mismatched joins per trial), then `edges` (`pe = P_E(x)`) and `weights` (of
//!    `2 pe - x`) for the next iteration.
//! 3. Read back: the weights, the boards (one `u32` per cell) and the per-trial mismatch
//!    counts. The CPU recounts every board's mismatches exactly and refuses to go on if the
//!    device disagrees; a board that matches every join passes [`verify::check`] before the
//!    trial counts as solved.
//!
//! The difference map adds a second weight pass (of `x` itself, for `P_P(y)`) and the `mix`
//! kernel (`f_a(y)`) followed by a second `edges`. Batches larger than one storage binding
//! are split into chunks, each with its own buffers; all chunks go in one submission.
//! Trials start from the same seeded random points as on the CPU backend.

use super::assign::{AssignBatch, AssignGpu};
use super::batch::{self, GpuTrial, Span};
use super::context::{GpuContext, dispatch, grid};
use super::jv::{JvBatch, JvGpu};
use super::{F1_WGSL, HASH_WGSL};
use crate::backend::{EngineError, GpuError, Unsupported};
use crate::batch::{MapKind, MapResult, Mechanism, Progress, ROUND, Rounds};
use crate::f1::map::{AssignOn, MapConfig};
use crate::f1::project::{Assigners, EdgeProjection, F1, F1Tables};
use crate::puzzle::{Board, Puzzle};
use crate::search::backtrack::Backtracker;
use crate::verify;
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use std::sync::Arc;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    trials: u32,
    cells: u32,
    colors: u32,
    dim: u32,
    wtot: u32,
    joins: u32,
    one_color: u32,
    /// 1: the weights are taken in the weighted metric of `slotw` (binding 13).
    weighted: u32,
    a: f32,
    b: f32,
    beta: f32,
    pad1: f32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct HashParams {
    pub trials: u32,
    pub len: u32,
    pub pad0: u32,
    pub pad1: u32,
}

/// What the GPU backend cannot do for F1 (yet): these run on the CPU backend.
pub fn supports(cfg: &MapConfig) -> Result<(), Unsupported> {
    if cfg.keep_fixed_points {
        return Err(Unsupported::gpu("--dump-state (certificates) runs on the cpu backend"));
    }
    if cfg.adapt.is_some() {
        return Err(Unsupported::gpu("--adapt (adaptive join weights) runs on the cpu backend"));
    }
    if cfg.complete.is_some() && cfg.assign == AssignOn::GpuJv {
        return Err(Unsupported::gpu(
            "--complete with the device JV runs with --assign cpu or gpu-auction (the completion search needs the host every iteration)",
        ));
    }
    if cfg.kick.is_some() {
        return Err(Unsupported::gpu("--kick (a stall restart that perturbs x) runs on the cpu backend"));
    }
    Ok(())
}

struct Pipelines {
    edges: wgpu::ComputePipeline,
    weights: wgpu::ComputePipeline,
    update: wgpu::ComputePipeline,
    mix: wgpu::ComputePipeline,
    score: wgpu::ComputePipeline,
    track: wgpu::ComputePipeline,
    hash: wgpu::ComputePipeline,
}

/// The device loop's per-trial words (`track` in `shaders/f1.wgsl`): iterations, best score,
/// iteration of that best, state, best since the last (re)start and its iteration, 2 unused.
const TS: usize = 8;
const ST_LIVE: u32 = 0;
const ST_SOLVED: u32 = 1;
const ST_STALL: u32 = 3;
const ST_CYCLE: u32 = 4;
const ST_FAIL: u32 = 5;
/// Fingerprint ring per trial: 16 pairs and the next slot.
const RING_WORDS: usize = 33;

/// Iterations recorded per submission of the device loop (a power of two, 16 to 64; the
/// environment's `CONCUR_GPU_K` overrides it for measurements).
pub const K_ITERS: usize = 32;

/// Auction dispatches per assignment in the device loop; a problem still running after them
/// restarts its trial.
const AUCTION_DISPATCHES: usize = 8;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct TrackParams {
    max_score: u32,
    max_iters: u32,
    stall: u32,
    cycle: u32,
}

/// Tables shared by every chunk.
struct Tables {
    partner: wgpu::Buffer,
    pc_off: wgpu::Buffer,
    pc_cand: wgpu::Buffer,
    cand_idx: wgpu::Buffer,
    joins: wgpu::Buffer,
    /// Per side slot, the weight of the metric the weights kernel works in.
    slotw: wgpu::Buffer,
}

/// One chunk of the batch with its device buffers and bind groups.
struct Chunk {
    first: usize,
    trials: usize,
    /// The per-trial state on the device.
    s: ChunkState,
    /// The device loop: per-trial words, best boards, assignment failures, cold words and
    /// fingerprint rings; the per-trial words' two staging buffers (double-buffered reads).
    tstat: wgpu::Buffer,
    bestb: wgpu::Buffer,
    cold: wgpu::Buffer,
    st_stat: [wgpu::Buffer; 2],
    bg_track: wgpu::BindGroup,
    st_w: wgpu::Buffer,
    st_w2: wgpu::Buffer,
    st_viol: wgpu::Buffer,
    st_board: wgpu::Buffer,
    st_sums: wgpu::Buffer,
    bg_edges_x: wgpu::BindGroup,
    bg_edges_tmp: wgpu::BindGroup,
    bg_weights: wgpu::BindGroup,
    bg_weights_plain: wgpu::BindGroup,
    bg_update: wgpu::BindGroup,
    bg_mix: wgpu::BindGroup,
    bg_score: wgpu::BindGroup,
    bg_hash: wgpu::BindGroup,
    /// With `--assign gpu`: the auction over `w` (and over `w2` for the difference map) and
    /// its `select` passes into `sel` (and `sel2`).
    dev: Option<DeviceAssign>,
}

/// The device assignment of one chunk.
struct DeviceAssign {
    main: Solver,
    plain: Option<Solver>,
    bg_sel: wgpu::BindGroup,
    bg_sel2: Option<wgpu::BindGroup>,
}

/// One device assignment kernel over a chunk's weights.
enum Solver {
    /// The auction and its `settle` bind group.
    Auction(AssignBatch, wgpu::BindGroup),
    Jv(JvBatch),
}

impl Solver {
    fn select_into(&self, rc: &wgpu::Buffer, sel: &wgpu::Buffer) -> wgpu::BindGroup {
        match self {
            Solver::Auction(a, _) => a.select_into(rc, sel),
            Solver::Jv(j) => j.select_into(rc, sel),
        }
    }
    fn encode_select(&self, enc: &mut wgpu::CommandEncoder, bg: &wgpu::BindGroup) {
        match self {
            Solver::Auction(a, _) => a.encode_select(enc, bg),
            Solver::Jv(j) => j.encode_select(enc, bg),
        }
    }
    /// One whole solve with no host look.
    fn encode(&self, enc: &mut wgpu::CommandEncoder, warm: bool) {
        match self {
            Solver::Auction(a, settle) => a.encode_bounded(enc, warm, AUCTION_DISPATCHES, settle),
            Solver::Jv(j) => j.encode(enc, warm),
        }
    }
    /// The host-driven auction of the per-iteration loop (`--complete`).
    fn run(&self, warm: bool) -> Result<bool, GpuError> {
        match self {
            Solver::Auction(a, _) => a.run(warm),
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

impl Pipelines {
    fn new(ctx: &GpuContext) -> Self {
        let module = ctx.module("f1", F1_WGSL);
        let hash = ctx.module("hash", HASH_WGSL);
        Pipelines {
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
    fn new(ctx: &GpuContext, tab: &F1Tables, puzzle: &Puzzle, cfg: &MapConfig) -> Self {
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

impl Params {
    /// The main passes' parameters of a chunk, but for its trial count (0 here).
    fn new(f1: &F1, cfg: &MapConfig, joins: usize) -> Self {
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
    fn new(puzzle: &Puzzle, cfg: &MapConfig) -> Self {
        TrackParams {
            max_score: puzzle.max_score() as u32,
            max_iters: cfg.max_iters.min(u32::MAX as u64 - 1) as u32,
            stall: cfg.restart_stall.map_or(0, |l| l.clamp(1, u32::MAX as u64) as u32),
            cycle: u32::from(cfg.cycle_restart),
        }
    }
}

/// The device JV takes classes of at most [`super::jv::MAX_N`] cells.
fn check_device_jv(f1: &F1, cfg: &MapConfig) -> Result<(), GpuError> {
    if cfg.assign == AssignOn::GpuJv
        && let Some(n) = f1.class_cells().iter().map(|c| c.len()).find(|&n| n > super::jv::MAX_N)
    {
        return Err(GpuError::Misuse(format!(
            "the device JV takes classes of at most {} cells; this puzzle has one of {n} (use --assign gpu-auction or cpu)",
            super::jv::MAX_N
        )));
    }
    Ok(())
}

/// With `--assign gpu*`: the device assignment kernel (the auction or the JV), the class
/// sizes and, per row of a trial's classes, its cell and the offset of its row in the flat
/// weights.
struct DeviceKernel {
    kernel: Result<AssignGpu, JvGpu>,
    sizes: Vec<usize>,
    row_cell: wgpu::Buffer,
}

impl DeviceKernel {
    fn new(ctx: &Arc<GpuContext>, f1: &F1, cfg: &MapConfig) -> Option<Self> {
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
                AssignOn::GpuAuction => Ok(AssignGpu::new(ctx.clone())),
                _ => Err(JvGpu::new(ctx.clone())),
            };
            DeviceKernel { kernel, sizes, row_cell: ctx.storage("row_cell", &rc) }
        })
    }
}

/// What every chunk of one batch is built from ([`F1Gpu::with_chunk_trials`]).
struct ChunkSpec<'s> {
    ctx: &'s GpuContext,
    pipes: &'s Pipelines,
    tables: &'s Tables,
    assign: Option<&'s DeviceKernel>,
    track_params: wgpu::Buffer,
    /// The chunks' parameters, but for their trial count.
    base: Params,
    dm: bool,
}

/// The uniforms of one chunk: the main passes, the plain weights (of `x` itself), the
/// difference map's mix, and the fingerprint.
struct ChunkParams {
    main: wgpu::Buffer,
    plain: wgpu::Buffer,
    mix: wgpu::Buffer,
    hash: wgpu::Buffer,
}

/// The per-trial state of one chunk on the device (see [`Chunk`]).
struct ChunkState {
    x: wgpu::Buffer,
    pe: wgpu::Buffer,
    tmp: wgpu::Buffer,
    w: wgpu::Buffer,
    w2: wgpu::Buffer,
    bestc: wgpu::Buffer,
    bestc2: wgpu::Buffer,
    sel: wgpu::Buffer,
    sel2: wgpu::Buffer,
    board: wgpu::Buffer,
    viol: wgpu::Buffer,
    active: wgpu::Buffer,
    sums: wgpu::Buffer,
}

/// The device loop's buffers of one chunk (one word each without the device loop).
struct LoopState {
    tstat: wgpu::Buffer,
    bestb: wgpu::Buffer,
    fail: wgpu::Buffer,
    cold: wgpu::Buffer,
    ring: wgpu::Buffer,
    st_stat: [wgpu::Buffer; 2],
}

/// The bind groups of one chunk's passes.
struct ChunkBinds {
    edges_x: wgpu::BindGroup,
    edges_tmp: wgpu::BindGroup,
    weights: wgpu::BindGroup,
    weights_plain: wgpu::BindGroup,
    update: wgpu::BindGroup,
    mix: wgpu::BindGroup,
    score: wgpu::BindGroup,
    hash: wgpu::BindGroup,
    track: wgpu::BindGroup,
}

impl ChunkSpec<'_> {
    /// The chunk of trials `first..first + tc`: its buffers, bind groups and device
    /// assignment.
    fn chunk(&self, first: usize, tc: usize) -> Chunk {
        let ctx = self.ctx;
        let (n, dm) = (self.base.cells as usize, self.dm);
        let ub = 4 * (tc * self.base.wtot as usize) as u64;
        let p = self.params(tc);
        let s = self.state(tc);
        let l = self.loop_state(tc);
        let bg = self.binds(&p, &s, &l);
        let dev = self.device_assign(tc, &s, &l);
        let LoopState { tstat, bestb, cold, st_stat, .. } = l;
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
        }
    }

    fn params(&self, tc: usize) -> ChunkParams {
        let (ctx, inv) = (self.ctx, 1.0 / self.base.beta);
        let base = Params { trials: tc as u32, ..self.base };
        ChunkParams {
            main: ctx.uniform("p_main", &base),
            plain: ctx.uniform("p_plain", &Params { a: 0.0, b: 1.0, ..base }),
            mix: ctx.uniform("p_mix", &Params { a: 1.0 - inv, b: inv, ..base }),
            hash: ctx.uniform("p_hash", &HashParams { trials: tc as u32, len: base.dim, pad0: 0, pad1: 0 }),
        }
    }

    fn state(&self, tc: usize) -> ChunkState {
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

    fn loop_state(&self, tc: usize) -> LoopState {
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

    fn binds(&self, p: &ChunkParams, s: &ChunkState, l: &LoopState) -> ChunkBinds {
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
        }
    }

    /// The weights pass with parameters `p` into weights `wb` and their best candidates `bb`.
    fn weights_bind(&self, p: &wgpu::Buffer, s: &ChunkState, wb: &wgpu::Buffer, bb: &wgpu::Buffer) -> wgpu::BindGroup {
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

    fn update_bind(&self, p: &ChunkParams, s: &ChunkState) -> wgpu::BindGroup {
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

    fn mix_bind(&self, p: &ChunkParams, s: &ChunkState) -> wgpu::BindGroup {
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

    fn track_bind(&self, p: &ChunkParams, s: &ChunkState, l: &LoopState) -> wgpu::BindGroup {
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
    fn device_assign(&self, tc: usize, s: &ChunkState, l: &LoopState) -> Option<DeviceAssign> {
        let DeviceKernel { kernel, sizes, row_cell } = self.assign?;
        let n = self.base.cells as usize;
        let solver = |wb: &wgpu::Buffer| match kernel {
            Ok(a) => {
                let b = a.batch_on(sizes, tc, false, Some(wb), n);
                let settle = b.settle_into(&l.fail);
                Solver::Auction(b, settle)
            }
            Err(j) => Solver::Jv(j.batch_on(sizes, tc, Some((wb, &l.cold, &l.fail)), n)),
        };
        let main = solver(&s.w);
        let plain = self.dm.then(|| solver(&s.w2));
        let bg_sel = main.select_into(row_cell, &s.sel);
        let bg_sel2 = plain.as_ref().map(|p| p.select_into(row_cell, &s.sel2));
        Some(DeviceAssign { main, plain, bg_sel, bg_sel2 })
    }
}

/// One kernel of the family, for tests and benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// `pe = P_E(x)` (or P_E1).
    Edges,
    /// The assignment weights of the map's reflection (RRR: of `2 pe - x`).
    Weights,
    /// `x += beta (embed(board) - pe)` with the board from `sel`.
    Update,
    /// `tmp = a embed(board) + b x` (difference map).
    Mix,
    /// Mismatched joins per trial of `board`.
    Score,
}

/// The F1 batch on the device.
pub struct F1Gpu<'a> {
    ctx: Arc<GpuContext>,
    puzzle: &'a Puzzle,
    f1: F1,
    cfg: MapConfig,
    pipes: Pipelines,
    chunks: Vec<Chunk>,
    trials: usize,
    dim: usize,
    wtot: usize,
    joins: usize,
    /// Keeps the table buffers alive as long as the bind groups that use them.
    _tables: Tables,
}

impl<'a> F1Gpu<'a> {
    /// Builds tables, pipelines and one chunk of buffers per binding-sized slice of the
    /// batch. The state is zero until [`F1Gpu::write_state`].
    pub fn new(ctx: Arc<GpuContext>, puzzle: &'a Puzzle, cfg: MapConfig) -> Result<Self, EngineError> {
        Self::with_chunk_trials(ctx, puzzle, cfg, usize::MAX)
    }

    /// Like [`F1Gpu::new`] with at most `chunk` trials per chunk (tests of the split).
    pub fn with_chunk_trials(
        ctx: Arc<GpuContext>,
        puzzle: &'a Puzzle,
        cfg: MapConfig,
        chunk: usize,
    ) -> Result<Self, EngineError> {
        let f1 = F1::new(puzzle)?;
        let trials = cfg.trials.max(1);
        let (n, dim, wtot) = (puzzle.cells(), f1.dim(), f1.weight_len());
        let tab = f1.gpu_tables();
        let joins = tab.joins.len() / 3;
        let per_trial = 4 * dim.max(wtot).max(n) as u64;
        let per_chunk = batch::chunk_trials(&ctx, per_trial, trials, chunk)?;
        // A device that runs out of memory while the buffers are made says so as an error,
        // not through wgpu's uncaptured-error handler (which panics).
        let oom = ctx.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let pipes = Pipelines::new(&ctx);
        let tables = Tables::new(&ctx, &tab, puzzle, &cfg);
        check_device_jv(&f1, &cfg)?;
        let assign = DeviceKernel::new(&ctx, &f1, &cfg);
        let spec = ChunkSpec {
            ctx: &ctx,
            pipes: &pipes,
            tables: &tables,
            assign: assign.as_ref(),
            track_params: ctx.uniform("track", &TrackParams::new(puzzle, &cfg)),
            base: Params::new(&f1, &cfg, joins),
            dm: cfg.kind == MapKind::Dm,
        };
        let mut chunks = Vec::new();
        let mut first = 0;
        while first < trials {
            let tc = per_chunk.min(trials - first);
            chunks.push(spec.chunk(first, tc));
            first += tc;
        }
        if let Some(e) = pollster::block_on(oom.pop()) {
            return Err(GpuError::Device(format!("out of device memory for {trials} trials: {e}")).into());
        }
        Ok(F1Gpu { ctx, puzzle, f1, cfg, pipes, chunks, trials, dim, wtot, joins, _tables: tables })
    }

    /// Bytes of the buffers this batch holds on the device (tables, per-chunk state and
    /// staging; without the device auction's of `--assign gpu`), to check
    /// [`crate::limits::f1_gpu`] against.
    pub fn device_bytes(&self) -> u64 {
        let t = &self._tables;
        let tables = [&t.partner, &t.pc_off, &t.pc_cand, &t.cand_idx, &t.joins, &t.slotw];
        let chunks = self.chunks.iter().flat_map(|c| {
            [
                &c.s.x,
                &c.s.pe,
                &c.s.tmp,
                &c.s.w,
                &c.s.w2,
                &c.s.bestc,
                &c.s.bestc2,
                &c.s.sel,
                &c.s.sel2,
                &c.s.board,
                &c.s.viol,
                &c.s.active,
                &c.s.sums,
                &c.st_w,
                &c.st_w2,
                &c.st_viol,
                &c.st_board,
                &c.st_sums,
            ]
        });
        tables.into_iter().chain(chunks).map(|b| b.size()).sum()
    }

    pub fn f1(&self) -> &F1 {
        &self.f1
    }
    pub fn trials(&self) -> usize {
        self.trials
    }
    /// Trials per chunk (the batch split that keeps every binding under the device limit).
    pub fn chunk_sizes(&self) -> Vec<usize> {
        self.chunks.iter().map(|c| c.trials).collect()
    }

    /// Writes the state of trials `first..first + x.len() / dim`.
    pub fn write_state(&self, first: usize, x: &[f32]) {
        self.write_per_trial(first, x, self.dim, |c| &c.s.x);
    }

    /// Writes per-cell chosen weight entries (`sel`, or `sel2` for the difference map's
    /// `P_P(y)`), trial-major.
    pub fn write_sel(&self, sel: &[u32], second: bool) {
        let n = self.puzzle.cells();
        self.write_per_trial(0, sel, n, |c| if second { &c.s.sel2 } else { &c.s.sel });
    }

    /// Writes boards (candidate per cell), trial-major, for [`Kernel::Score`].
    pub fn write_boards(&self, boards: &[u32]) {
        self.write_per_trial(0, boards, self.puzzle.cells(), |c| &c.s.board);
    }

    /// Which trials the update kernel moves.
    pub fn write_active(&self, active: &[u32]) {
        self.write_per_trial(0, active, 1, |c| &c.s.active);
    }

    fn write_per_trial<T: bytemuck::Pod>(
        &self,
        first: usize,
        data: &[T],
        per: usize,
        buf: impl Fn(&Chunk) -> &wgpu::Buffer,
    ) {
        batch::write_per_trial(&self.ctx, &self.chunks, first, data, per, buf);
    }

    fn read_per_trial<T: bytemuck::Pod + Default>(
        &self,
        per: usize,
        buf: impl Fn(&Chunk) -> &wgpu::Buffer,
    ) -> Result<Vec<T>, GpuError> {
        batch::read_per_trial(&self.ctx, &self.chunks, per, buf)
    }

    fn need_dm(&self) -> Result<(), GpuError> {
        match self.cfg.kind {
            MapKind::Dm => Ok(()),
            MapKind::Rrr => Err(GpuError::Misuse("the mix kernel belongs to the difference map".into())),
        }
    }

    /// The state of every trial, trial-major.
    pub fn read_state(&self) -> Result<Vec<f32>, GpuError> {
        self.read_per_trial(self.dim, |c| &c.s.x)
    }
    /// The edge projection buffer (`pe`).
    pub fn read_edges(&self) -> Result<Vec<f32>, GpuError> {
        self.read_per_trial(self.dim, |c| &c.s.pe)
    }
    /// The difference map's `f_a(y)` buffer.
    pub fn read_mix(&self) -> Result<Vec<f32>, GpuError> {
        self.need_dm()?;
        self.read_per_trial(self.dim, |c| &c.s.tmp)
    }
    /// The flat weights and their argmax candidates.
    pub fn read_weights(&self) -> Result<(Vec<f32>, Vec<u32>), GpuError> {
        Ok((self.read_per_trial(self.wtot, |c| &c.s.w)?, self.read_per_trial(self.wtot, |c| &c.s.bestc)?))
    }
    /// The difference map's weights of `y` itself (for `P_P(y)`) and their argmax.
    pub fn read_weights_plain(&self) -> Result<(Vec<f32>, Vec<u32>), GpuError> {
        self.need_dm()?;
        Ok((self.read_per_trial(self.wtot, |c| &c.s.w2)?, self.read_per_trial(self.wtot, |c| &c.s.bestc2)?))
    }
    /// The boards (candidate per cell).
    pub fn read_boards(&self) -> Result<Vec<u32>, GpuError> {
        self.read_per_trial(self.puzzle.cells(), |c| &c.s.board)
    }
    /// The per-trial mismatch counts.
    pub fn read_violations(&self) -> Result<Vec<u32>, GpuError> {
        self.read_per_trial(1, |c| &c.s.viol)
    }

    fn encode(&self, enc: &mut wgpu::CommandEncoder, ch: &Chunk, k: Kernel) {
        let tc = ch.trials as u64;
        match k {
            Kernel::Edges => dispatch(enc, &self.pipes.edges, &ch.bg_edges_x, grid(tc * self.dim as u64)),
            Kernel::Weights => {
                dispatch(enc, &self.pipes.weights, &ch.bg_weights, grid(tc * self.wtot as u64));
                if self.cfg.kind == MapKind::Dm {
                    dispatch(enc, &self.pipes.weights, &ch.bg_weights_plain, grid(tc * self.wtot as u64));
                }
            }
            Kernel::Update => dispatch(enc, &self.pipes.update, &ch.bg_update, grid(tc * self.dim as u64)),
            Kernel::Mix => dispatch(enc, &self.pipes.mix, &ch.bg_mix, grid(tc * self.dim as u64)),
            Kernel::Score => {
                enc.clear_buffer(&ch.s.viol, 0, None);
                dispatch(enc, &self.pipes.score, &ch.bg_score, grid(tc * self.joins as u64))
            }
        }
    }

    /// Runs one kernel over the whole batch `reps` times and waits for it.
    pub fn run_kernel(&self, k: Kernel, reps: usize) -> Result<(), GpuError> {
        if k == Kernel::Mix {
            self.need_dm()?;
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

    /// Bytes of state one kernel reads and writes per trial (the traffic the throughput
    /// figures are measured in; tables, which stay in cache, are not counted).
    pub fn kernel_bytes(&self, k: Kernel) -> u64 {
        let (d, w, n) = (self.dim as u64, self.wtot as u64, self.puzzle.cells() as u64);
        match k {
            Kernel::Edges => 4 * (2 * d),
            // pe and x at four colours per candidate are gathered from cache; count them once.
            Kernel::Weights => 4 * (2 * d + 2 * w),
            Kernel::Update => 4 * (3 * d + n),
            Kernel::Mix => 4 * (2 * d),
            Kernel::Score => 4 * (n + 1),
        }
    }

    /// The passes after the CPU assignment, up to the next weights, plus the copies of
    /// what the host reads (weights, boards, mismatch counts).
    fn encode_iteration(&self, enc: &mut wgpu::CommandEncoder, on_device: bool) {
        let dm = self.cfg.kind == MapKind::Dm;
        for ch in &self.chunks {
            let tc = ch.trials as u64;
            if let (true, Some(d)) = (on_device, &ch.dev) {
                d.main.encode_select(enc, &d.bg_sel);
                if let (Some(p), Some(bg)) = (&d.plain, &d.bg_sel2) {
                    p.encode_select(enc, bg);
                }
            }
            if dm {
                self.encode(enc, ch, Kernel::Mix);
                dispatch(enc, &self.pipes.edges, &ch.bg_edges_tmp, grid(tc * self.dim as u64));
            }
            self.encode(enc, ch, Kernel::Update);
            self.encode(enc, ch, Kernel::Score);
            self.encode_weights(enc, ch, ch.dev.is_none());
            enc.copy_buffer_to_buffer(&ch.s.viol, 0, &ch.st_viol, 0, 4 * tc);
            enc.copy_buffer_to_buffer(&ch.s.board, 0, &ch.st_board, 0, 4 * tc * self.puzzle.cells() as u64);
        }
    }

    /// `pe` and the weights; with `up` also their copies for the host.
    fn encode_weights(&self, enc: &mut wgpu::CommandEncoder, ch: &Chunk, up: bool) {
        let tc = ch.trials as u64;
        self.encode(enc, ch, Kernel::Edges);
        self.encode(enc, ch, Kernel::Weights);
        if !up {
            return;
        }
        let ub = 4 * tc * self.wtot as u64;
        enc.copy_buffer_to_buffer(&ch.s.w, 0, &ch.st_w, 0, ub);
        if self.cfg.kind == MapKind::Dm {
            enc.copy_buffer_to_buffer(&ch.s.w2, 0, &ch.st_w2, 0, ub);
        }
    }

    /// Reads the staged weights (and with `status` the mismatch counts and boards) of every
    /// chunk into the host arrays.
    fn read_staged(
        &self,
        w: &mut [f32],
        w2: &mut [f32],
        status: Option<(&mut [u32], &mut [u32])>,
    ) -> Result<(), GpuError> {
        let (n, wt) = (self.puzzle.cells(), self.wtot);
        let dm = self.cfg.kind == MapKind::Dm;
        let with_status = status.is_some();
        let (mut viol, mut boards) = match status {
            Some((v, b)) => (Some(v), Some(b)),
            None => (None, None),
        };
        for ch in &self.chunks {
            let (lo, hi) = (ch.first, ch.first + ch.trials);
            let mut reads: Vec<(&wgpu::Buffer, &mut [u8])> = Vec::new();
            if !with_status || ch.dev.is_none() {
                reads.push((&ch.st_w, bytemuck::cast_slice_mut(&mut w[lo * wt..hi * wt])));
            }
            if dm && (!with_status || ch.dev.is_none()) {
                reads.push((&ch.st_w2, bytemuck::cast_slice_mut(&mut w2[lo * wt..hi * wt])));
            }
            if let (Some(v), Some(b)) = (viol.as_deref_mut(), boards.as_deref_mut()) {
                reads.push((&ch.st_viol, bytemuck::cast_slice_mut(&mut v[lo..hi])));
                reads.push((&ch.st_board, bytemuck::cast_slice_mut(&mut b[lo * n..hi * n])));
            }
            self.ctx.read_back(&mut reads)?;
        }
        Ok(())
    }

    /// Reads the staged mismatch counts of every chunk.
    fn read_violations_into(&self, viol: &mut [u32]) -> Result<(), GpuError> {
        for ch in &self.chunks {
            let (lo, hi) = (ch.first, ch.first + ch.trials);
            self.ctx.read_back(&mut [(&ch.st_viol, bytemuck::cast_slice_mut(&mut viol[lo..hi]))])?;
        }
        Ok(())
    }

    /// Reads the staged boards of the chunks holding a trial marked in `want`.
    fn read_boards_where(&self, want: &[bool], boards: &mut [u32]) -> Result<(), GpuError> {
        let n = self.puzzle.cells();
        for ch in &self.chunks {
            let (lo, hi) = (ch.first, ch.first + ch.trials);
            if want[lo..hi].iter().any(|&w| w) {
                self.ctx.read_back(&mut [(&ch.st_board, bytemuck::cast_slice_mut(&mut boards[lo * n..hi * n]))])?;
            }
        }
        Ok(())
    }

    /// Recomputes `pe` and the weights of the current state and reads the weights.
    fn refresh(&self, w: &mut [f32], w2: &mut [f32]) -> Result<(), GpuError> {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for ch in &self.chunks {
            self.encode_weights(&mut enc, ch, true);
        }
        self.ctx.queue.submit([enc.finish()]);
        self.read_staged(w, w2, None)
    }

    /// Per-trial fingerprints of the state (for exact limit-cycle detection).
    fn fingerprints(&self) -> Result<Vec<u64>, GpuError> {
        batch::fingerprints(
            &self.ctx,
            &self.chunks,
            |c| (&c.s.sums, &c.st_sums),
            |enc, ch| dispatch(enc, &self.pipes.hash, &ch.bg_hash, grid((ch.trials * self.dim) as u64)),
        )
    }

    /// Runs the batch (same stop rules and result as [`crate::f1::map::F1Map::run`]): with the
    /// assignment on the device (and no completion search) in the device loop
    /// ([`F1Gpu::run_device`]), else one host round trip per iteration.
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) -> Result<MapResult, EngineError> {
        if self.cfg.assign.on_device() && self.cfg.complete.is_none() {
            let k = match std::env::var("CONCUR_GPU_K") {
                Ok(v) if !v.is_empty() => v
                    .parse::<usize>()
                    .ok()
                    .filter(|k| k.is_power_of_two() && (1..=256).contains(k))
                    .ok_or_else(|| GpuError::Misuse(format!("CONCUR_GPU_K={v}: want a power of two up to 256")))?,
                _ => K_ITERS,
            };
            return self.run_device(k, progress);
        }
        self.run_host(progress)
    }

    /// Records `k` whole iterations of every chunk (the weights of the current state, the
    /// device assignment, the update, the mismatch count and `track`), then the copy of the
    /// per-trial words into staging slot `slot`, and submits. `first`: the run's first
    /// submission (its first assignment starts cold).
    fn submit_iterations(&self, k: usize, slot: usize, first: bool) {
        let dm = self.cfg.kind == MapKind::Dm;
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for i in 0..k {
            let warm = self.cfg.warm_start && !(first && i == 0);
            for ch in &self.chunks {
                let Some(d) = &ch.dev else { continue };
                let tc = ch.trials as u64;
                self.encode_weights(&mut enc, ch, false);
                if let Some(p) = &d.plain {
                    p.encode(&mut enc, warm);
                }
                d.main.encode(&mut enc, warm);
                d.main.encode_select(&mut enc, &d.bg_sel);
                if let (Some(p), Some(bg)) = (&d.plain, &d.bg_sel2) {
                    p.encode_select(&mut enc, bg);
                }
                if dm {
                    self.encode(&mut enc, ch, Kernel::Mix);
                    dispatch(&mut enc, &self.pipes.edges, &ch.bg_edges_tmp, grid(tc * self.dim as u64));
                }
                self.encode(&mut enc, ch, Kernel::Update);
                self.encode(&mut enc, ch, Kernel::Score);
                dispatch(&mut enc, &self.pipes.track, &ch.bg_track, grid(tc));
            }
        }
        for ch in &self.chunks {
            enc.copy_buffer_to_buffer(&ch.tstat, 0, &ch.st_stat[slot], 0, (4 * TS * ch.trials) as u64);
        }
        self.ctx.queue.submit([enc.finish()]);
    }

    /// The device loop: `k` iterations per submission, no host wait inside. The host keeps
    /// one submission in flight while it reads the per-trial words of the one before (a few
    /// bytes per trial), restarts the trials the device froze (stall, repeated fingerprint,
    /// failed assignment) from the same random streams as the CPU driver, and reads back and
    /// verifies exactly the best board of each trial that reached 0 mismatches. A frozen
    /// trial waits for the host without moving, so every trial's iterates, restarts and
    /// solve iteration are those of [`crate::f1::map::F1Map::run`] with the same seed (float
    /// rounding apart: see `tests/gpu.rs`); only trials still running when the run stops
    /// (first solution, time limit) may have gone up to `2 k` iterations further.
    pub fn run_device(&mut self, k: usize, progress: &mut dyn FnMut(&Progress)) -> Result<MapResult, EngineError> {
        let rounds = Rounds::start();
        let cfg = self.cfg.clone();
        let (t_all, n) = (self.trials, self.puzzle.cells());
        let (mut trials, mut x0) = self.start_trials(|| ());
        let mut words = vec![0u32; t_all * TS];
        let mut handled = vec![u32::MAX; t_all];
        let mut board = vec![0u32; n];
        self.submit_iterations(k, 0, true);
        let (mut submitted, mut read) = (1usize, 0usize);
        loop {
            // One submission ahead, so that the device never waits for this read.
            self.submit_iterations(k, submitted % 2, false);
            submitted += 1;
            self.read_status(read % 2, &mut words)?;
            read += 1;
            for (t, tr) in trials.iter_mut().enumerate() {
                let w = &words[t * TS..(t + 1) * TS];
                self.take_status(t, w, tr, &mut handled[t], &mut x0, &mut board)?;
            }
            if rounds.after_round(&trials, cfg.stop_at_first, cfg.max_iters, cfg.time_limit, &mut &mut *progress) {
                break;
            }
        }
        let best = self.finish_device(&mut trials, &mut board)?;
        let f1 = &self.f1;
        Ok(batch::result(self.puzzle, &trials, &best, |b| f1.placements(b), rounds.elapsed_s()))
    }

    /// Fresh trials of the batch (with `extra` each), their random starting states written
    /// to the device; and the host's state buffer for later restarts.
    fn start_trials<E>(&self, extra: impl Fn() -> E) -> (Vec<GpuTrial<E>>, Vec<f32>) {
        let mut trials: Vec<GpuTrial<E>> = (0..self.trials).map(|t| GpuTrial::new(self.cfg.seed, t, extra())).collect();
        let mut x0 = vec![0.0f32; self.dim];
        for (t, tr) in trials.iter_mut().enumerate() {
            randomize(&mut x0, &mut tr.rng);
            self.write_state(t, &x0);
        }
        (trials, x0)
    }

    /// Takes trial `t`'s per-trial words `w` of the device loop: its iterations and best
    /// score; a solve (read back and checked); or a freeze (stall, cycle, failed assignment)
    /// not handled yet (`handled`: the iteration of the last one), restarted from a fresh
    /// random state.
    fn take_status(
        &self,
        t: usize,
        w: &[u32],
        tr: &mut GpuTrial<()>,
        handled: &mut u32,
        x0: &mut [f32],
        board: &mut [u32],
    ) -> Result<(), GpuError> {
        tr.iterations = w[0] as u64;
        tr.best_score = w[1] as usize;
        match w[3] {
            ST_SOLVED if tr.solved_at.is_none() => {
                self.verify_solved(t, w[2], tr, board)?;
            }
            ST_STALL | ST_CYCLE | ST_FAIL if *handled != w[0] => {
                *handled = w[0];
                if w[3] == ST_STALL {
                    tr.stall_restarts += 1;
                } else {
                    tr.restarts += 1;
                }
                randomize(x0, &mut tr.rng);
                self.write_state(t, x0);
                self.resume(t);
            }
            _ => {}
        }
        Ok(())
    }

    /// The final words and best boards, after the submission still in flight; returns the
    /// best boards.
    fn finish_device(&self, trials: &mut [GpuTrial<()>], board: &mut [u32]) -> Result<Vec<u32>, GpuError> {
        let n = self.puzzle.cells();
        self.ctx.wait()?;
        let words: Vec<u32> = self.read_per_trial(TS, |c| &c.tstat)?;
        let best: Vec<u32> = self.read_per_trial(n, |c| &c.bestb)?;
        for (t, tr) in trials.iter_mut().enumerate() {
            let w = &words[t * TS..(t + 1) * TS];
            tr.iterations = w[0] as u64;
            tr.best_score = w[1] as usize;
            if w[3] == ST_SOLVED && tr.solved_at.is_none() {
                self.verify_solved(t, w[2], tr, board)?;
            }
        }
        debug_assert!(trials.iter().all(|t| t.best_score <= self.puzzle.max_score()));
        Ok(best)
    }

    /// Reads the per-trial words of staging slot `slot` of every chunk.
    fn read_status(&self, slot: usize, words: &mut [u32]) -> Result<(), GpuError> {
        for ch in &self.chunks {
            let (lo, hi) = (ch.first * TS, (ch.first + ch.trials) * TS);
            self.ctx.read_back(&mut [(&ch.st_stat[slot], bytemuck::cast_slice_mut(&mut words[lo..hi]))])?;
        }
        Ok(())
    }

    /// Reads the best board of trial `t`, which the device stopped at 0 mismatches at
    /// iteration `at`, recounts it and checks it exactly; the trial is solved only then.
    fn verify_solved(&self, t: usize, at: u32, tr: &mut GpuTrial<()>, board: &mut [u32]) -> Result<(), GpuError> {
        let n = self.puzzle.cells();
        let ch = self.chunks.iter().find(|c| (c.first..c.first + c.trials).contains(&t)).expect("trial in a chunk");
        let st = self.ctx.staging("solved board", 4 * n as u64);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&ch.bestb, (4 * (t - ch.first) * n) as u64, &st, 0, 4 * n as u64);
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.read_back(&mut [(&st, bytemuck::cast_slice_mut(board))])?;
        let max_score = self.puzzle.max_score();
        let score = self.f1.score(board);
        let b = Board { width: self.puzzle.width(), height: self.puzzle.height(), cells: self.f1.placements(board) };
        if score != max_score || !verify::check(self.puzzle, &b).valid {
            return Err(GpuError::Device(format!(
                "the device stopped trial {t} as solved at iteration {at}, but its board scores {score} of {max_score} or fails the exact check"
            )));
        }
        tr.iterations = at as u64;
        tr.best_score = max_score;
        tr.solve(Mechanism::Map);
        Ok(())
    }

    /// Lets a frozen trial go on (after the host wrote its new state): live, cold start.
    fn resume(&self, t: usize) {
        let ch = self.chunks.iter().find(|c| (c.first..c.first + c.trials).contains(&t)).expect("trial in a chunk");
        let i = (t - ch.first) as u64;
        let q = &self.ctx.queue;
        q.write_buffer(&ch.tstat, 4 * (i * TS as u64 + 3), bytemuck::bytes_of(&ST_LIVE));
        q.write_buffer(&ch.s.active, 4 * i, bytemuck::bytes_of(&1u32));
        q.write_buffer(&ch.cold, 4 * i, bytemuck::bytes_of(&1u32));
    }

    /// The per-iteration loop: one host round trip per iteration.
    fn run_host(&mut self, progress: &mut dyn FnMut(&Progress)) -> Result<MapResult, EngineError> {
        let rounds = Rounds::start();
        let cfg = self.cfg.clone();
        let (mut trials, x0) = self.start_trials(|| self.f1.assigners_in(cfg.reduced_costs));
        let mut h = HostLoop::new(self, x0);
        self.refresh(&mut h.w, &mut h.w2)?;
        let mut completion = batch::completion_search(self.puzzle, cfg.complete.as_ref());
        loop {
            for _ in 0..ROUND {
                if self.host_iteration(&mut trials, &mut h, &mut completion)? {
                    break;
                }
            }
            if cfg.cycle_restart {
                self.cycle_restarts(&mut trials, &mut h)?;
            }
            if rounds.after_round(&trials, cfg.stop_at_first, cfg.max_iters, cfg.time_limit, &mut &mut *progress) {
                break;
            }
        }
        let f1 = &self.f1;
        Ok(batch::result(self.puzzle, &trials, &h.best, |b| f1.placements(b), rounds.elapsed_s()))
    }

    /// One iteration of the per-iteration loop: 1. the assignments, 2. the device passes
    /// (one submission), 3. the read-back, taken into the trials. True when the round ends
    /// early: no trial is active, or one solved and the run stops at the first.
    fn host_iteration(
        &self,
        trials: &mut [GpuTrial<Assigners>],
        h: &mut HostLoop,
        completion: &mut Option<Backtracker<'_>>,
    ) -> Result<bool, EngineError> {
        let cfg = &self.cfg;
        // 1. The assignments: on the device (`--assign gpu`), or on the CPU from the
        // weights read back, also when the device left a problem unsolved.
        let on_device = self.device_assign(cfg.warm_start)?;
        if !on_device && !self.assign_on_host(trials, h)? {
            return Ok(false);
        }
        for (a, tr) in h.active.iter_mut().zip(trials.iter()) {
            *a = tr.is_active(cfg.max_iters) as u32;
        }
        if h.active.iter().all(|&a| a == 0) {
            return Ok(true);
        }
        // 2. The device passes, one submission; 3. read back.
        if h.active != h.active_sent {
            self.write_active(&h.active);
            h.active_sent.clone_from(&h.active);
        }
        if !on_device {
            self.write_sel(&h.sel, false);
            if cfg.kind == MapKind::Dm {
                self.write_sel(&h.sel2, true);
            }
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        self.encode_iteration(&mut enc, on_device);
        self.ctx.queue.submit([enc.finish()]);
        self.read_iteration(trials, h, on_device)?;
        if self.take_iteration(trials, h, completion)? {
            // The weights read back were of the old states.
            self.refresh(&mut h.w, &mut h.w2)?;
        }
        Ok(cfg.stop_at_first && trials.iter().any(|t| t.solved_at.is_some()))
    }

    /// The assignments on the CPU (rayon over trials) from the weights read back, into
    /// `sel` (and `sel2`). False when one failed: those trials restarted (non-finite
    /// weights cannot come from finite states; a defensive restart) and the iteration is
    /// to be tried again.
    fn assign_on_host(&self, trials: &mut [GpuTrial<Assigners>], h: &mut HostLoop) -> Result<bool, GpuError> {
        if self.chunks.iter().any(|c| c.dev.is_some()) {
            self.refresh(&mut h.w, &mut h.w2)?;
        }
        let (n, wt, f1, cfg) = (self.puzzle.cells(), self.wtot, &self.f1, &self.cfg);
        let dm = cfg.kind == MapKind::Dm;
        let per = crate::batch::chunk_size(self.trials);
        let w2 = &h.w2;
        let failed: Vec<usize> = trials
            .par_chunks_mut(per)
            .zip(h.sel.par_chunks_mut(per * n))
            .zip(h.sel2.par_chunks_mut(per * n))
            .zip(h.w.par_chunks(per * wt))
            .enumerate()
            .flat_map_iter(|(ci, (((trs, sels), sels2), ws))| {
                let mut bad = Vec::new();
                let rows = trs.iter_mut().zip(sels.chunks_mut(n)).zip(sels2.chunks_mut(n)).zip(ws.chunks(wt));
                for (i, (((tr, s), s2), wv)) in rows.enumerate() {
                    if !tr.is_active(cfg.max_iters) {
                        continue;
                    }
                    let t = ci * per + i;
                    let ok = if dm {
                        // P_P(y) first, as on the CPU (its duals warm the second solve).
                        f1.assign_entries(&w2[t * wt..(t + 1) * wt], &mut tr.extra, s2, tr.warm)
                            .and_then(|()| f1.assign_entries(wv, &mut tr.extra, s, tr.warm))
                    } else {
                        f1.assign_entries(wv, &mut tr.extra, s, tr.warm)
                    };
                    if ok.is_err() {
                        bad.push(t);
                    }
                }
                bad
            })
            .collect();
        if failed.is_empty() {
            return Ok(true);
        }
        for &t in &failed {
            trials[t].iterations += 1;
            self.restart(t, &mut trials[t], &mut h.x0);
        }
        self.refresh(&mut h.w, &mut h.w2)?;
        Ok(false)
    }

    /// Reads the iteration back. With the device assignment only the mismatch counts come up
    /// every iteration, and the boards of a chunk only when one of its trials improves (each
    /// board that comes up is recounted exactly on the CPU); else every board comes up, with
    /// the weights of the next iteration.
    fn read_iteration(
        &self,
        trials: &[GpuTrial<Assigners>],
        h: &mut HostLoop,
        on_device: bool,
    ) -> Result<(), GpuError> {
        if !on_device {
            self.read_staged(&mut h.w, &mut h.w2, Some((&mut h.viol, &mut h.boards)))?;
            h.fresh.iter_mut().for_each(|f| *f = true);
            return Ok(());
        }
        let max_score = self.puzzle.max_score();
        self.read_violations_into(&mut h.viol)?;
        for (t, tr) in trials.iter().enumerate() {
            h.fresh[t] = h.active[t] != 0
                && (tr.iterations == 0 || max_score - (h.viol[t] as usize).min(max_score) > tr.best_score);
        }
        self.read_boards_where(&h.fresh, &mut h.boards)
    }

    /// Takes the boards read back into the active trials: the exact recount against the
    /// device's, the best board, a solve (after the exact check), a stall restart or the
    /// completion search. True when a stall restart rewrote a state.
    fn take_iteration(
        &self,
        trials: &mut [GpuTrial<Assigners>],
        h: &mut HostLoop,
        completion: &mut Option<Backtracker<'_>>,
    ) -> Result<bool, EngineError> {
        let (n, max_score, cfg, f1) = (self.puzzle.cells(), self.puzzle.max_score(), &self.cfg, &self.f1);
        let mut stall_restarted = false;
        for (t, tr) in trials.iter_mut().enumerate() {
            if h.active[t] == 0 {
                continue;
            }
            tr.iterations += 1;
            tr.warm = cfg.warm_start;
            let board = &h.boards[t * n..(t + 1) * n];
            let score = if h.fresh[t] { f1.score(board) } else { max_score - h.viol[t] as usize };
            if h.fresh[t] && score + h.viol[t] as usize != max_score {
                return Err(GpuError::Device(format!(
                    "the device counted {} mismatched joins on trial {t}, the CPU {}",
                    h.viol[t],
                    max_score - score
                ))
                .into());
            }
            let improved = score > tr.best_score || tr.iterations == 1;
            if improved {
                tr.best_score = score;
                h.best[t * n..(t + 1) * n].copy_from_slice(board);
            }
            if score == max_score {
                let b = Board { width: self.puzzle.width(), height: self.puzzle.height(), cells: f1.placements(board) };
                if verify::check(self.puzzle, &b).valid {
                    tr.solve(Mechanism::Map);
                }
            } else if cfg.restart_stall.is_some_and(|l| tr.stalled(score, l)) {
                randomize(&mut h.x0, &mut tr.rng);
                self.write_state(t, &h.x0);
                tr.warm = false;
                stall_restarted = true;
            } else if let (Some(comp), Some(bt)) = (&cfg.complete, completion.as_mut()) {
                let best = &mut h.best[t * n..(t + 1) * n];
                let (place, id) = (|b: &[u32]| f1.placements(b), |c, pl| f1.candidate_id(c, pl));
                tr.complete(comp, bt, self.puzzle, improved, score, best, place, id);
            }
        }
        Ok(stall_restarted)
    }

    /// At the end of a round: restarts the active trials whose state's fingerprint came
    /// round again (exact limit cycles).
    fn cycle_restarts(&self, trials: &mut [GpuTrial<Assigners>], h: &mut HostLoop) -> Result<(), GpuError> {
        let hashes = self.fingerprints()?;
        let mut restarted = false;
        for (t, tr) in trials.iter_mut().enumerate() {
            if !tr.is_active(self.cfg.max_iters) || tr.iterations % ROUND != 0 {
                continue;
            }
            if tr.in_cycle(hashes[t]) {
                self.restart(t, tr, &mut h.x0);
                restarted = true;
            }
        }
        if restarted {
            self.refresh(&mut h.w, &mut h.w2)?;
        }
        Ok(())
    }

    /// Runs the device auction of every chunk (the difference map's `P_P(y)` first); false
    /// when there is none (`--assign cpu`) or a problem was left for the host.
    fn device_assign(&self, warm: bool) -> Result<bool, GpuError> {
        let mut all = !self.chunks.is_empty();
        for ch in &self.chunks {
            let Some(d) = &ch.dev else { return Ok(false) };
            if let Some(p) = &d.plain {
                all &= p.run(warm)?;
            }
            all &= d.main.run(warm)?;
        }
        Ok(all)
    }

    fn restart(&self, t: usize, tr: &mut GpuTrial<Assigners>, x0: &mut [f32]) {
        randomize(x0, &mut tr.rng);
        self.write_state(t, x0);
        tr.warm = false;
        tr.restarts += 1;
    }
}

/// The host arrays of the per-iteration loop ([`F1Gpu::run_host`]), batch-wide.
struct HostLoop {
    /// The weights read back (and of `x` itself for the difference map).
    w: Vec<f32>,
    w2: Vec<f32>,
    /// The assignments of the CPU, per cell the chosen entry.
    sel: Vec<u32>,
    sel2: Vec<u32>,
    /// Mismatch counts and boards read back, and the best board of each trial.
    viol: Vec<u32>,
    boards: Vec<u32>,
    best: Vec<u32>,
    /// Which trials run this iteration.
    active: Vec<u32>,
    /// Whether a trial's board of this iteration came up (see `F1Gpu::read_iteration`).
    fresh: Vec<bool>,
    /// What the device holds (all live at creation); rewritten only when a trial stops.
    active_sent: Vec<u32>,
    /// A state for restarts.
    x0: Vec<f32>,
}

impl HostLoop {
    fn new(g: &F1Gpu, x0: Vec<f32>) -> Self {
        let (t_all, n, wt) = (g.trials, g.puzzle.cells(), g.wtot);
        let dm = g.cfg.kind == MapKind::Dm;
        let active = vec![1u32; t_all];
        HostLoop {
            w: vec![0.0f32; t_all * wt],
            w2: vec![0.0f32; if dm { t_all * wt } else { 0 }],
            sel: vec![0u32; t_all * n],
            sel2: vec![0u32; t_all * n],
            viol: vec![0u32; t_all],
            boards: vec![0u32; t_all * n],
            best: vec![0u32; t_all * n],
            active_sent: active.clone(),
            active,
            fresh: vec![true; t_all],
            x0,
        }
    }
}

fn randomize(x: &mut [f32], rng: &mut Xoshiro256PlusPlus) {
    x.iter_mut().for_each(|v| *v = rng.random::<f32>());
}

/// Runs an F1 batch on the device; every reported solution has passed the exact check.
pub fn solve(
    ctx: &Arc<GpuContext>,
    puzzle: &Puzzle,
    cfg: &MapConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<MapResult, EngineError> {
    supports(cfg)?;
    let mut g = F1Gpu::new(ctx.clone(), puzzle, cfg.clone())?;
    g.run(progress)
}
