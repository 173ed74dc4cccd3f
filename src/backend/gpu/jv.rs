//! The batched exact assignment on the device by shortest augmenting paths (after Jonker and
//! Volgenant 1987), in f32 with no quantisation, warm-started from the duals and the
//! assignment of the last solve, which stay on the device. Two kernels, selectable side by
//! side ([`JvKind`]):
//! - the workgroup kernel (`shaders/jv.wgsl`, `--assign gpu-jv`): one 64-thread workgroup per
//!   (trial, class) problem, the columns spread over the threads, three workgroup barriers a
//!   scan step; every class up to [`MAX_N`];
//! - the subgroup kernel (`shaders/jv_sg.wgsl`, `--assign gpu-jv-sg`): one subgroup per
//!   problem and several problems per workgroup, the columns in registers, the minima by
//!   subgroup operations and no barrier at all, for classes up to [`SG_MAX_N`]; a batch's
//!   larger classes (the 196 inner cells of a 16x16 board) go to the workgroup kernel in a
//!   second dispatch. It also writes F1's `sel` itself (the pick pass fused in) and skips the
//!   trials the F1 device loop froze.
//!
//! Both follow the same order and tie-breaking, so they give the same rows and duals bit for
//! bit (`tests/gpu_assign.rs` checks that, and both against the host JV). Without subgroup
//! operations on the device (or with `CONCUR_NO_SUBGROUPS=1`), asking for the subgroup kernel
//! gives the workgroup kernel, which passes the same tests.
//!
//! Unlike the auction ([`super::assign`]) one dispatch always finishes every problem: the
//! work is bounded (at most n augmentations of at most n scan steps each), so the F1 loop can
//! record it K times in one submission without looking at the problems in between. A
//! problem that is not solved (a row or column with no allowed entry, a NaN or +inf weight,
//! n above [`MAX_N`]) sets its trial's `fail` word; the F1 loop restarts that trial alone.
//!
//! The workgroup kernel's min-reduction of each scan step uses subgroup operations when the
//! device was opened with wgpu's SUBGROUP feature ([`GpuContext::subgroups`]), workgroup
//! memory otherwise; the two give the same answer (the order does not matter for a minimum).

use super::GpuContext;
use super::assign::{Problems, Status};
use super::context::groups_grid;
use super::pick::Pick;
use super::timing::Passes;
use crate::backend::GpuError;
use std::sync::Arc;

/// The WGSL source of the workgroup kernel (workgroup-memory reductions).
pub(crate) const JV_WGSL: &str = include_str!("../../../shaders/jv.wgsl");
/// The WGSL source of the subgroup kernel (its register slots set by [`sg_source`]).
pub(crate) const JV_SG_WGSL: &str = include_str!("../../../shaders/jv_sg.wgsl");
/// The workgroup variant of the kernel's entry point and `reduce_min`.
const JV_WORKGROUP_WGSL: &str = include_str!("../../../shaders/jv_workgroup.wgsl");
/// The subgroup variant of the kernel's entry point and `reduce_min`.
const JV_SUBGROUP_WGSL: &str = include_str!("../../../shaders/jv_subgroup.wgsl");
/// The subgroup kernel's `stage_block` without staging.
const JV_SG_DIRECT_WGSL: &str = include_str!("../../../shaders/jv_sg_direct.wgsl");
/// The subgroup kernel's `stage_block` of the staged variant.
const JV_SG_STAGED_WGSL: &str = include_str!("../../../shaders/jv_sg_staged.wgsl");

/// Largest problem the workgroup kernel takes (its rows and columns sit in workgroup memory).
/// Every class of a 16x16 board (196 inner cells) fits.
pub const MAX_N: usize = 256;
/// Largest problem the subgroup kernel takes (its columns sit in registers).
pub const SG_MAX_N: usize = 64;
/// Threads per workgroup of the subgroup kernel (the shader says the same).
const SG_WORKGROUP: u32 = 128;

/// Which device JV kernel a batch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JvKind {
    /// One 64-thread workgroup per problem (`shaders/jv.wgsl`).
    Workgroup,
    /// One subgroup per problem for the classes up to [`SG_MAX_N`] (`shaders/jv_sg.wgsl`),
    /// the workgroup kernel for the larger ones.
    Subgroup,
    /// The subgroup kernel with each problem's cost block staged once in workgroup memory,
    /// where the batch's largest small class fits it (as many problems per workgroup as fit,
    /// at most the unstaged count); the unstaged kernel elsewhere.
    SubgroupStaged,
}

/// The workgroup kernel's source for a device with (`true`) or without subgroup operations:
/// `shaders/jv.wgsl` and the variant with the entry point and `reduce_min`
/// (`jv_subgroup.wgsl` or `jv_workgroup.wgsl`), concatenated.
pub fn source(subgroups: bool) -> String {
    let variant = if subgroups { JV_SUBGROUP_WGSL } else { JV_WORKGROUP_WGSL };
    format!("{JV_WGSL}\n{variant}")
}

/// The subgroup kernel's source for a device whose smallest subgroup has `min_lanes` lanes:
/// each lane keeps `SG_MAX_N / min_lanes` column slots in registers.
pub fn sg_source(min_lanes: u32) -> String {
    sg_source_staged(min_lanes, false)
}

/// [`sg_source`], with the staged variant's copy of each problem's cost block into workgroup
/// memory when `staged`; its sizes are the pipeline-overridable constants of
/// [`sg_constants`].
pub fn sg_source_staged(min_lanes: u32, staged: bool) -> String {
    let slots = (SG_MAX_N as u32).div_ceil(min_lanes.max(1)).clamp(1, 32);
    let stage = if staged { JV_SG_STAGED_WGSL } else { JV_SG_DIRECT_WGSL };
    format!("const MAXC: u32 = {slots}u;\n{JV_SG_WGSL}\n{stage}")
}

/// The subgroup kernel's pipeline-overridable constants: unstaged (`None`, the defaults), or
/// staged (`Some((sn, ppw))`): `ppw` slots of `sn x sn` floats in workgroup memory, one per
/// subgroup.
pub fn sg_constants(stage: Option<(usize, u32)>) -> Vec<(&'static str, f64)> {
    match stage {
        None => Vec::new(),
        Some((sn, ppw)) => vec![("STAGE", 1.0), ("SN", sn as f64), ("BLK", (sn * sn * ppw as usize) as f64)],
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    problems: Problems,
    /// The subgroup kernel's problems per workgroup (unused by the workgroup kernel).
    ppw: u32,
    cells: u32,
    /// The subgroup kernel's classes (unused by the workgroup kernel).
    nsg: u32,
}

/// The layout of the uniforms above, in both kernels (`tests/shaders.rs`).
pub(crate) fn uniform_layouts() -> Vec<super::UniformLayout> {
    ["jv.wgsl", "jv_sg.wgsl"]
        .map(|shader| {
            uniform_layout!(
                shader,
                "P",
                Params,
                [problems.trials, problems.classes, problems.wtot, problems.rtot, problems.flags, ppw, cells, nsg]
            )
        })
        .to_vec()
}

/// What [`JvBatch::read`] read back, trial-major as the weights.
#[derive(Clone, Debug)]
pub struct JvSolved {
    /// Column of each row: trial `t`, class `k` at `t * rtot + roff[k]`.
    pub rows: Vec<u32>,
    /// The column duals of the min-cost form (`c = -w`), the next warm start.
    pub duals: Vec<f32>,
    /// Per (trial, class).
    pub status: Vec<Status>,
    /// Shortest-path searches (augmentations) per (trial, class).
    pub augmentations: Vec<u32>,
    /// Per trial: whether one of its problems was not solved.
    pub failed: Vec<bool>,
}

/// The JV pipelines of one kind.
pub struct JvGpu {
    ctx: Arc<GpuContext>,
    pipe: wgpu::ComputePipeline,
    /// The subgroup kernel and its problems per workgroup.
    sg: Option<(wgpu::ComputePipeline, u32)>,
    /// Stage each batch's cost blocks in workgroup memory (a pipeline per batch).
    staged: bool,
}

/// The buffers a caller shares with a batch (the F1 loop's): the weights, the per-trial
/// `cold` and `fail` words, and where the answer goes: per row of a trial's classes its cell
/// and the offset of its row in the flat weights, and the per-cell chosen entries `sel`
/// (`cells` a trial).
pub(crate) struct JvShared<'a> {
    pub weights: &'a wgpu::Buffer,
    pub cold: &'a wgpu::Buffer,
    pub fail: &'a wgpu::Buffer,
    pub row_cell: &'a wgpu::Buffer,
    pub sel: &'a wgpu::Buffer,
    pub cells: usize,
}

/// The subgroup kernel's part of a batch.
struct SgPart {
    pipe: wgpu::ComputePipeline,
    bg_warm: wgpu::BindGroup,
    bg_cold: wgpu::BindGroup,
    groups: (u32, u32),
}

/// The device buffers of one batch of problems of fixed shapes, built once and reused.
pub struct JvBatch {
    ctx: Arc<GpuContext>,
    pipe: wgpu::ComputePipeline,
    sizes: Vec<usize>,
    trials: usize,
    wtot: usize,
    rtot: usize,
    weights: wgpu::Buffer,
    rows: wgpu::Buffer,
    duals: wgpu::Buffer,
    state: wgpu::Buffer,
    cold: wgpu::Buffer,
    fail: wgpu::Buffer,
    bg_warm: wgpu::BindGroup,
    bg_cold: wgpu::BindGroup,
    /// Whether the workgroup kernel has classes to solve (all of them without `sg`).
    wide: bool,
    sg: Option<SgPart>,
    /// The pick pass into the caller's `sel` after the workgroup kernel (the subgroup
    /// kernel writes its own rows; the pick pass writes them again, the same values).
    pick: Option<Pick>,
    /// Whether the subgroup kernel stages its cost blocks.
    staged: bool,
}

impl JvGpu {
    /// The workgroup kernel.
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        let module = ctx.module("jv", &source(ctx.subgroups));
        let pipe = ctx.pipeline(&module, "jv");
        JvGpu { ctx, pipe, sg: None, staged: false }
    }

    /// The kernel of `kind`: the subgroup kernel needs the device's subgroup operations, and
    /// falls back to the workgroup kernel without them ([`JvGpu::kind`] says which runs).
    pub fn of_kind(ctx: Arc<GpuContext>, kind: JvKind) -> Self {
        let mut g = JvGpu::new(ctx);
        if kind != JvKind::Workgroup && g.ctx.subgroups {
            // The staged kernel needs the subgroup barrier; without it, the unstaged one.
            let module = g.ctx.module("jv_sg", &sg_source(g.ctx.subgroup_min));
            let pipe = g.ctx.pipeline(&module, "jv_sg");
            let ppw = (SG_WORKGROUP / g.ctx.subgroup_max.clamp(1, SG_WORKGROUP)).max(1);
            g.sg = Some((pipe, ppw));
            g.staged = kind == JvKind::SubgroupStaged && g.ctx.subgroup_barrier;
        }
        g
    }

    /// The kernel that runs (a staged batch whose blocks do not fit runs unstaged; see
    /// [`JvBatch::kind`]).
    pub fn kind(&self) -> JvKind {
        match (&self.sg, self.staged) {
            (None, _) => JvKind::Workgroup,
            (Some(_), false) => JvKind::Subgroup,
            (Some(_), true) => JvKind::SubgroupStaged,
        }
    }

    /// Buffers for `trials` trials whose classes have the sizes `sizes` (each trial's
    /// weights are the classes' `n x n` row-major blocks in order), with their own weights,
    /// `cold` and `fail` words and answer buffer.
    pub fn batch(&self, sizes: &[usize], trials: usize) -> JvBatch {
        self.batch_on(sizes, trials, None)
    }

    /// [`JvGpu::batch`] reading its weights and per-trial `cold` words and writing its `fail`
    /// words and its answer in the caller's buffers (the F1 loop's).
    pub(crate) fn batch_on(&self, sizes: &[usize], trials: usize, shared: Option<JvShared>) -> JvBatch {
        let wtot: usize = sizes.iter().map(|n| n * n).sum();
        let rtot: usize = sizes.iter().sum();
        let small = |n: usize| self.sg.is_some() && n <= SG_MAX_N;
        let mut table = Vec::with_capacity(4 * sizes.len());
        let (mut woff, mut roff) = (0usize, 0usize);
        for &n in sizes {
            table.extend_from_slice(&[n as u32, woff as u32, roff as u32, small(n) as u32]);
            woff += n * n;
            roff += n;
        }
        let sgk: Vec<u32> = (0..sizes.len() as u32).filter(|&k| small(sizes[k as usize])).collect();
        let ctx = &self.ctx;
        let own;
        let sh = match shared {
            Some(s) => s,
            None => {
                // Row r of trial t answers into sel[t * rtot + r].
                let rc: Vec<[u32; 2]> = (0..rtot as u32).map(|r| [r, 0]).collect();
                own = (
                    ctx.zeroed("jv weights", 4 * (wtot * trials) as u64),
                    ctx.zeroed("jv cold", 4 * trials as u64),
                    ctx.zeroed("jv fail", 4 * trials as u64),
                    ctx.storage("jv row_cell", &rc),
                    ctx.zeroed("jv sel", 4 * (rtot * trials) as u64),
                );
                JvShared { weights: &own.0, cold: &own.1, fail: &own.2, row_cell: &own.3, sel: &own.4, cells: rtot }
            }
        };
        // The staged kernel: as many problems per workgroup as their blocks fit, at most the
        // unstaged count; none fit, the unstaged kernel.
        let sn = sgk.iter().map(|&k| sizes[k as usize]).max().unwrap_or(1);
        let staged = self.sg.as_ref().filter(|_| self.staged && !sgk.is_empty()).and_then(|(_, ppw)| {
            let fit = (ctx.workgroup_storage as usize / (4 * sn * sn)).min(*ppw as usize) as u32;
            (fit >= 1).then(|| {
                let module = ctx.module("jv_sg staged", &sg_source_staged(ctx.subgroup_min, true));
                (ctx.pipeline_with(&module, "jv_sg", &sg_constants(Some((sn, fit)))), fit)
            })
        });
        let sg_pipe = staged.clone().or_else(|| self.sg.clone());
        let ppw = sg_pipe.as_ref().map_or(1, |s| s.1);
        let params = |flags: u32| Params {
            problems: Problems::new(trials, sizes.len(), wtot, rtot, flags),
            ppw,
            cells: sh.cells as u32,
            nsg: sgk.len() as u32,
        };
        let params_warm = ctx.uniform("jv params (warm)", &params(2));
        let params_cold = ctx.uniform("jv params (cold)", &params(0));
        let tb = ctx.storage("jv table", &table);
        let sgb = ctx.storage("jv sg classes", &sgk);
        let rt = 4 * (rtot * trials) as u64;
        // No answer yet: every row starts free.
        let rows = ctx.storage("jv rows", &vec![u32::MAX; rtot * trials]);
        let duals = ctx.zeroed("jv duals", rt);
        let state = ctx.zeroed("jv state", 16 * (trials * sizes.len()) as u64);
        let bind = |pipe: &wgpu::ComputePipeline, p: &wgpu::Buffer, sg: bool| {
            let mut b: Vec<(u32, &wgpu::Buffer)> = vec![
                (0, p),
                (1, &tb),
                (2, sh.weights),
                (3, &rows),
                (4, &duals),
                (6, &state),
                (7, sh.cold),
                (10, sh.fail),
            ];
            if sg {
                b.extend([(8, sh.row_cell), (9, sh.sel), (11, &sgb)]);
            }
            ctx.bind(pipe, &b)
        };
        let sg = sg_pipe.as_ref().filter(|_| !sgk.is_empty()).map(|(pipe, ppw)| SgPart {
            bg_warm: bind(pipe, &params_warm, true),
            bg_cold: bind(pipe, &params_cold, true),
            groups: groups_grid(((trials * sgk.len()) as u64).div_ceil(*ppw as u64)),
            pipe: pipe.clone(),
        });
        let wide = sgk.len() < sizes.len();
        let pick = wide.then(|| Pick::new(ctx, trials, rtot, sh.cells, &rows, sh.row_cell, sh.sel));
        JvBatch {
            bg_warm: bind(&self.pipe, &params_warm, false),
            bg_cold: bind(&self.pipe, &params_cold, false),
            ctx: ctx.clone(),
            pipe: self.pipe.clone(),
            sizes: sizes.to_vec(),
            trials,
            wtot,
            rtot,
            weights: sh.weights.clone(),
            rows,
            duals,
            state,
            cold: sh.cold.clone(),
            fail: sh.fail.clone(),
            wide,
            sg,
            pick,
            staged: staged.is_some(),
        }
    }

    /// One solve from the host's weights (`trials` trials of `sizes`' blocks back to back),
    /// warm-started from `warm` (rows and duals of an earlier solve of the same shapes).
    pub fn solve(
        &self,
        sizes: &[usize],
        weights: &[f32],
        trials: usize,
        warm: Option<(&[u32], &[f32])>,
    ) -> Result<JvSolved, GpuError> {
        let b = self.batch(sizes, trials);
        b.write_weights(weights)?;
        if let Some((rows, duals)) = warm {
            b.write_warm(rows, duals)?;
        }
        b.run(warm.is_some())?;
        b.read()
    }
}

impl JvBatch {
    fn problems(&self) -> usize {
        self.trials * self.sizes.len()
    }

    /// Uploads the weights of every problem, trial-major, each class's `n x n` block in turn (a
    /// misuse error for any other length).
    pub fn write_weights(&self, w: &[f32]) -> Result<(), GpuError> {
        super::assign::write_weights(&self.ctx, &self.weights, w, self.trials, self.wtot)
    }

    /// Writes a warm start: the rows' columns and the column duals.
    pub(crate) fn write_warm(&self, rows: &[u32], duals: &[f32]) -> Result<(), GpuError> {
        if rows.len() != self.rtot * self.trials || duals.len() != rows.len() {
            return Err(GpuError::Misuse("assignment warm start of another shape".into()));
        }
        self.ctx.queue.write_buffer(&self.rows, 0, bytemuck::cast_slice(rows));
        self.ctx.queue.write_buffer(&self.duals, 0, bytemuck::cast_slice(duals));
        Ok(())
    }

    /// Writes the per-trial cold words (1: solve that trial cold, 2: skip it).
    pub fn write_cold(&self, cold: &[u32]) -> Result<(), GpuError> {
        if cold.len() != self.trials {
            return Err(GpuError::Misuse("cold words of another shape".into()));
        }
        self.ctx.queue.write_buffer(&self.cold, 0, bytemuck::cast_slice(cold));
        Ok(())
    }

    /// Records one solve of every problem (warm where allowed and the trial's `cold` word
    /// is 0), the answer written into the caller's `sel` (see [`JvShared`]).
    pub(crate) fn encode(&self, p: &mut Passes, warm: bool) {
        if let Some(sg) = &self.sg {
            p.dispatch("jv-sg", &sg.pipe, if warm { &sg.bg_warm } else { &sg.bg_cold }, sg.groups);
        }
        if self.wide {
            let bg = if warm { &self.bg_warm } else { &self.bg_cold };
            p.dispatch("jv", &self.pipe, bg, groups_grid(self.problems() as u64));
        }
        if let Some(pick) = &self.pick {
            pick.encode(p);
        }
    }

    /// Solves every problem on the device and waits.
    pub fn run(&self, warm: bool) -> Result<(), GpuError> {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.clear_buffer(&self.fail, 0, None);
        self.encode(&mut Passes::new(&mut enc), warm);
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.wait()
    }

    /// The kernel that runs.
    pub fn kind(&self) -> JvKind {
        match (&self.sg, self.staged) {
            (None, _) => JvKind::Workgroup,
            (Some(_), false) => JvKind::Subgroup,
            (Some(_), true) => JvKind::SubgroupStaged,
        }
    }

    /// The weights buffer (trials x the classes' blocks).
    pub fn weights_buffer(&self) -> &wgpu::Buffer {
        &self.weights
    }

    /// Bytes of the buffers this batch owns on the device.
    pub fn device_bytes(&self) -> u64 {
        self.rows.size() + self.duals.size() + self.state.size()
    }

    /// Reads the answers, duals, states and per-trial failures.
    pub fn read(&self) -> Result<JvSolved, GpuError> {
        let ctx = &self.ctx;
        let bufs = [&self.rows, &self.duals, &self.state, &self.fail];
        let st: Vec<wgpu::Buffer> = bufs.iter().map(|b| ctx.staging("jv read", b.size())).collect();
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        for (from, to) in bufs.iter().zip(&st) {
            enc.copy_buffer_to_buffer(from, 0, to, 0, from.size());
        }
        ctx.queue.submit([enc.finish()]);
        let rt = 4 * self.rtot * self.trials;
        let (mut r, mut v) = (vec![0u8; rt], vec![0u8; rt]);
        let mut state = vec![0u8; 16 * self.problems()];
        let mut fail = vec![0u8; 4 * self.trials];
        ctx.read_back(&mut [(&st[0], &mut r), (&st[1], &mut v), (&st[2], &mut state), (&st[3], &mut fail)])?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&state);
        let fail: Vec<u32> = bytemuck::pod_collect_to_vec(&fail);
        Ok(JvSolved {
            rows: bytemuck::pod_collect_to_vec(&r),
            duals: bytemuck::pod_collect_to_vec(&v),
            status: words.chunks(4).map(|s| Status::from_code(s[2])).collect(),
            augmentations: words.chunks(4).map(|s| s[0]).collect(),
            failed: fail.iter().map(|&f| f != 0).collect(),
        })
    }
}
