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
//!    device disagrees; a board that matches every join passes [`crate::verify::check`] before the
//!    trial counts as solved.
//!
//! The difference map adds a second weight pass (of `x` itself, for `P_P(y)`) and the `mix`
//! kernel (`f_a(y)`) followed by a second `edges`. Batches larger than one storage binding
//! are split into chunks, each with its own buffers; all chunks go in one submission.
//! Trials start from the same seeded random points as on the CPU backend.

use super::chunks;
use super::context::{GpuContext, grid};
use super::timing::Passes;
use crate::backend::capability::{self, Place};
use crate::backend::{EngineError, GpuError, MapJob, Unsupported};
use crate::batch::Trial;
use crate::batch::{MapKind, MapResult, Progress};
use crate::f1::map::{MapConfig, randomize};
use crate::f1::project::{Assigners, F1};
use crate::puzzle::Puzzle;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

mod buffers;
mod device_loop;
mod host_loop;
mod stepper;

use buffers::{Chunk, ChunkSpec, DeviceKernel, Params, Pipelines, Tables, TrackParams, check_device_jv};
pub(crate) use buffers::{HashParams, uniform_layouts};
pub use buffers::{K_ITERS, estimate, step_constants, step_source};
pub use stepper::F1GpuStepper;

/// Whether the GPU backend runs an F1 batch of `cfg` on one device: what it needs against
/// the capability table ([`crate::backend::capability`]).
pub fn supports(cfg: &MapConfig) -> Result<(), Unsupported> {
    supports_on(cfg, 1)
}

/// [`supports`] for a batch split over `adapters` devices.
pub(crate) fn supports_on(cfg: &MapConfig, adapters: usize) -> Result<(), Unsupported> {
    let needs = capability::needs(MapJob::F1(cfg), capability::resolve_assign(cfg.assign, Place::Gpu, cfg), adapters);
    capability::check(Place::Gpu, &needs)
}

/// One kernel of the family, for tests and benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// A test and bench hook: one kernel alone (tests/gpu.rs, benches/projections.rs, concur bench).
#[doc(hidden)]
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
    /// The device loop's rules (`Track` in `shaders/f1.wgsl`), which the stepper rewrites
    /// to pause the trials at the end of a step.
    track: wgpu::Buffer,
    /// A stop shared by the shares of one batch on several devices ([`F1Gpu::share_stop`]).
    stop: Option<Arc<AtomicBool>>,
}

impl<'a> F1Gpu<'a> {
    /// Builds tables, pipelines and one chunk of buffers per binding-sized slice of the
    /// batch. The state is zero until [`F1Gpu::write_state`].
    pub fn new(ctx: Arc<GpuContext>, puzzle: &'a Puzzle, cfg: MapConfig) -> Result<Self, EngineError> {
        Self::with_chunk_trials(ctx, puzzle, cfg, usize::MAX)
    }

    /// Like [`F1Gpu::new`] with at most `chunk` trials per chunk (tests of the split).
    // A test hook: tests/gpu.rs checks the chunk split and the memory estimate through it.
    #[doc(hidden)]
    pub fn with_chunk_trials(
        ctx: Arc<GpuContext>,
        puzzle: &'a Puzzle,
        cfg: MapConfig,
        chunk: usize,
    ) -> Result<Self, EngineError> {
        let f1 = F1::new(puzzle)?;
        let trials = cfg.run.trials.max(1);
        let (n, dim, wtot) = (puzzle.cells(), f1.dim(), f1.weight_len());
        let tab = f1.gpu_tables();
        let joins = tab.joins.len() / 3;
        let per_trial = 4 * dim.max(wtot).max(n) as u64;
        let per_chunk = chunks::chunk_trials(&ctx, per_trial, trials, chunk)?;
        // A device that runs out of memory while the buffers are made says so as an error,
        // not through wgpu's uncaptured-error handler (which panics).
        let oom = ctx.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let pipes = Pipelines::new(&ctx, buffers::step_sizes(&ctx, &f1, &cfg));
        let tables = Tables::new(&ctx, &tab, puzzle, &cfg);
        check_device_jv(&f1, &cfg)?;
        let assign = DeviceKernel::new(&ctx, &f1, &cfg);
        let track = ctx.uniform("track", &TrackParams::new(puzzle, &cfg));
        let spec = ChunkSpec {
            ctx: &ctx,
            pipes: &pipes,
            tables: &tables,
            assign: assign.as_ref(),
            track_params: track.clone(),
            base: Params::new(&f1, &cfg, joins),
            dm: cfg.kind == MapKind::Dm,
        };
        let chunks = chunks::split(trials, per_chunk, |first, tc| spec.chunk(first, tc));
        chunks::out_of_memory(pollster::block_on(oom.pop()), trials)?;
        Ok(F1Gpu { ctx, puzzle, f1, cfg, pipes, chunks, trials, dim, wtot, joins, _tables: tables, track, stop: None })
    }

    /// Bytes of the buffers this batch holds on the device (tables, per-chunk state and
    /// staging; without the device auction's of `--assign gpu`), to check
    /// [`estimate`] against.
    // A test hook: tests/gpu.rs checks the chunk split and the memory estimate through it.
    #[doc(hidden)]
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

    /// The projections' tables the batch was built from.
    pub fn f1(&self) -> &F1 {
        &self.f1
    }
    /// Trials of the batch.
    pub fn trials(&self) -> usize {
        self.trials
    }
    /// Shares a stop with the other shares of a batch split over several devices: a share
    /// whose trial solves a run that stops at the first solution raises it, and every share
    /// stops at its next round once it is raised.
    pub(crate) fn share_stop(&mut self, stop: Arc<AtomicBool>) {
        self.stop = Some(stop);
    }

    /// After a round: whether the run ends (`done`: this batch's own stop rules), raising or
    /// heeding the shared stop.
    fn stops<E>(&self, trials: &[Trial<E>], done: bool) -> bool {
        let Some(flag) = &self.stop else { return done };
        if !self.cfg.all_trials && trials.iter().any(|t| t.solved_at.is_some()) {
            flag.store(true, Ordering::Relaxed);
        }
        done || flag.load(Ordering::Relaxed)
    }

    /// Whether the device loop runs the fused pass (`--fused-passes` where it fits).
    pub fn fused(&self) -> bool {
        self.pipes.step.is_some()
    }

    /// Trials per chunk (the batch split that keeps every binding under the device limit).
    // A test hook: tests/gpu.rs checks the chunk split and the memory estimate through it.
    #[doc(hidden)]
    pub fn chunk_sizes(&self) -> Vec<usize> {
        self.chunks.iter().map(|c| c.trials).collect()
    }

    /// Writes the state of trials `first..first + x.len() / dim`.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn write_state(&self, first: usize, x: &[f32]) {
        self.write_per_trial(first, x, self.dim, |c| &c.s.x);
    }

    /// Writes per-cell chosen weight entries (`sel`, or `sel2` for the difference map's
    /// `P_P(y)`), trial-major.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn write_sel(&self, sel: &[u32], second: bool) {
        let n = self.puzzle.cells();
        self.write_per_trial(0, sel, n, |c| if second { &c.s.sel2 } else { &c.s.sel });
    }

    /// Writes boards (candidate per cell), trial-major, for [`Kernel::Score`].
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn write_boards(&self, boards: &[u32]) {
        self.write_per_trial(0, boards, self.puzzle.cells(), |c| &c.s.board);
    }

    /// Which trials the update kernel moves.
    pub(crate) fn write_active(&self, active: &[u32]) {
        self.write_per_trial(0, active, 1, |c| &c.s.active);
    }

    fn write_per_trial<T: bytemuck::Pod>(
        &self,
        first: usize,
        data: &[T],
        per: usize,
        buf: impl Fn(&Chunk) -> &wgpu::Buffer,
    ) {
        chunks::write_per_trial(&self.ctx, &self.chunks, first, data, per, buf);
    }

    fn read_per_trial<T: bytemuck::Pod + Default>(
        &self,
        per: usize,
        buf: impl Fn(&Chunk) -> &wgpu::Buffer,
    ) -> Result<Vec<T>, GpuError> {
        chunks::read_per_trial(&self.ctx, &self.chunks, per, buf)
    }

    fn need_dm(&self) -> Result<(), GpuError> {
        match self.cfg.kind {
            MapKind::Dm => Ok(()),
            MapKind::Rrr => Err(GpuError::Misuse("the mix kernel belongs to the difference map".into())),
        }
    }

    /// The state of every trial, trial-major.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_state(&self) -> Result<Vec<f32>, GpuError> {
        self.read_per_trial(self.dim, |c| &c.s.x)
    }
    /// The edge projection buffer (`pe`).
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_edges(&self) -> Result<Vec<f32>, GpuError> {
        self.read_per_trial(self.dim, |c| &c.s.pe)
    }
    /// The difference map's `f_a(y)` buffer.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_mix(&self) -> Result<Vec<f32>, GpuError> {
        self.need_dm()?;
        self.read_per_trial(self.dim, |c| &c.s.tmp)
    }
    /// The flat weights and their argmax candidates.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_weights(&self) -> Result<(Vec<f32>, Vec<u32>), GpuError> {
        Ok((self.read_per_trial(self.wtot, |c| &c.s.w)?, self.read_per_trial(self.wtot, |c| &c.s.bestc)?))
    }
    /// The difference map's weights of `y` itself (for `P_P(y)`) and their argmax.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_weights_plain(&self) -> Result<(Vec<f32>, Vec<u32>), GpuError> {
        self.need_dm()?;
        Ok((self.read_per_trial(self.wtot, |c| &c.s.w2)?, self.read_per_trial(self.wtot, |c| &c.s.bestc2)?))
    }
    /// The boards (candidate per cell).
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_boards(&self) -> Result<Vec<u32>, GpuError> {
        self.read_per_trial(self.puzzle.cells(), |c| &c.s.board)
    }
    /// The per-trial mismatch counts.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_violations(&self) -> Result<Vec<u32>, GpuError> {
        self.read_per_trial(1, |c| &c.s.viol)
    }

    fn encode(&self, p: &mut Passes, ch: &Chunk, k: Kernel) {
        let tc = ch.trials as u64;
        let pp = &self.pipes;
        match k {
            Kernel::Edges => p.dispatch("edges", &pp.edges, &ch.bg_edges_x, grid(tc * self.dim as u64)),
            Kernel::Weights => {
                p.dispatch("weights", &pp.weights, &ch.bg_weights, grid(tc * self.wtot as u64));
                if self.cfg.kind == MapKind::Dm {
                    p.dispatch("weights", &pp.weights, &ch.bg_weights_plain, grid(tc * self.wtot as u64));
                }
            }
            Kernel::Update => p.dispatch("update", &pp.update, &ch.bg_update, grid(tc * self.dim as u64)),
            Kernel::Mix => p.dispatch("mix", &pp.mix, &ch.bg_mix, grid(tc * self.dim as u64)),
            Kernel::Score => {
                p.enc.clear_buffer(&ch.s.viol, 0, None);
                p.dispatch("score", &pp.score, &ch.bg_score, grid(tc * self.joins as u64))
            }
        }
    }

    /// Runs one kernel over the whole batch `reps` times and waits for it.
    // A test and bench hook: one kernel alone (tests/gpu.rs, benches/projections.rs, concur bench).
    #[doc(hidden)]
    pub fn run_kernel(&self, k: Kernel, reps: usize) -> Result<(), GpuError> {
        if k == Kernel::Mix {
            self.need_dm()?;
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        let mut p = Passes::new(&mut enc);
        for _ in 0..reps {
            for ch in &self.chunks {
                self.encode(&mut p, ch, k);
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

    /// `pe` and the weights; with `up` also their copies for the host.
    fn encode_weights(&self, p: &mut Passes, ch: &Chunk, up: bool) {
        let tc = ch.trials as u64;
        self.encode(p, ch, Kernel::Edges);
        self.encode(p, ch, Kernel::Weights);
        if !up {
            return;
        }
        let ub = 4 * tc * self.wtot as u64;
        p.enc.copy_buffer_to_buffer(&ch.s.w, 0, &ch.st_w, 0, ub);
        if self.cfg.kind == MapKind::Dm {
            p.enc.copy_buffer_to_buffer(&ch.s.w2, 0, &ch.st_w2, 0, ub);
        }
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

    /// Fresh trials of the batch (with `extra` each), their random starting states written
    /// to the device; and the host's state buffer for later restarts.
    fn start_trials<E>(&self, extra: impl Fn() -> E) -> (Vec<Trial<E>>, Vec<f32>) {
        let first = self.cfg.first_trial;
        let mut trials: Vec<Trial<E>> =
            (0..self.trials).map(|t| Trial::new(self.cfg.run.seed, first + t, extra())).collect();
        let mut x0 = vec![0.0f32; self.dim];
        for (t, tr) in trials.iter_mut().enumerate() {
            randomize(&mut x0, &mut tr.rng);
            self.write_state(t, &x0);
        }
        (trials, x0)
    }

    fn restart(&self, t: usize, tr: &mut Trial<Assigners>, x0: &mut [f32]) {
        randomize(x0, &mut tr.rng);
        self.write_state(t, x0);
        tr.warm = false;
        tr.restarts += 1;
    }
}

/// Whether a batch of `cfg` on `ctx` would run the fused pass (`--fused-passes` where it
/// fits), without building the batch.
pub fn fuses(ctx: &GpuContext, puzzle: &Puzzle, cfg: &MapConfig) -> Result<bool, EngineError> {
    Ok(buffers::step_sizes(ctx, &F1::new(puzzle)?, cfg).is_some())
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
