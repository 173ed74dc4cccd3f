//! The batched exact assignment on the device by shortest augmenting paths
//! (`shaders/jv.wgsl`, after Jonker and Volgenant 1987): one 64-thread workgroup per
//! (trial, class) problem, in f32 with no quantisation, warm-started from the duals and the
//! assignment of the last solve, which stay on the device.
//!
//! Unlike the auction ([`super::assign`]) one dispatch always finishes every problem: the
//! work is bounded (at most n augmentations of at most n scan steps each), so the F1 loop can
//! record it K times in one submission without looking at the problems in between. A
//! problem that is not solved (a row or column with no allowed entry, a NaN or +inf weight,
//! n above [`MAX_N`]) sets its trial's `fail` word; the F1 loop restarts that trial alone.
//!
//! The min-reduction of each scan step uses subgroup operations when the device was opened
//! with wgpu's SUBGROUP feature ([`GpuContext::subgroups`]), workgroup memory otherwise; the
//! two give the same answer (the reduction's order does not matter for a minimum).

use super::GpuContext;
use super::assign::Status;
use super::context::{dispatch, grid, groups_grid};
use crate::backend::GpuError;
use std::sync::Arc;

/// The WGSL source (workgroup-memory reductions).
pub const JV_WGSL: &str = include_str!("../../../shaders/jv.wgsl");

/// Largest problem the kernel takes (its rows and columns sit in workgroup memory). Every
/// class of a 16x16 board (196 inner cells) fits.
pub const MAX_N: usize = 256;

/// The subgroup form of `reduce_min`: a subgroup minimum, then one value per subgroup.
const SUBGROUP_REDUCE: &str = r#"var<private> sg_lane: u32;
var<private> sg_id: u32;
var<private> sg_count: u32;

// The workgroup's smallest (value, key) into ctl_min and ctl_col (read them with
// workgroupUniformLoad). Subgroup minima, then one entry per subgroup in workgroup memory.
fn reduce_min(lid: u32, val: f32, key: u32) {
    let bv = subgroupMin(val);
    let bk = subgroupMin(select(NONE, key, val == bv));
    if sg_lane == 0u {
        red_v[sg_id] = bv;
        red_k[sg_id] = bk;
    }
    workgroupBarrier();
    if lid == 0u {
        var mv = red_v[0];
        var mk = red_k[0];
        for (var s = 1u; s < sg_count; s++) {
            if before(red_v[s], red_k[s], mv, mk) {
                mv = red_v[s];
                mk = red_k[s];
            }
        }
        ctl_min = mv;
        ctl_col = mk;
    }
}"#;

/// The kernel's source for a device with (`true`) or without subgroup operations.
pub fn source(subgroups: bool) -> String {
    if !subgroups {
        return JV_WGSL.to_string();
    }
    let start = JV_WGSL.find("// The workgroup's smallest").expect("reduce_min in jv.wgsl");
    let end = JV_WGSL.find("//END_REDUCE").expect("reduce_min's end in jv.wgsl");
    let mut s = String::with_capacity(JV_WGSL.len() + 1024);
    s.push_str(&JV_WGSL[..start]);
    s.push_str(SUBGROUP_REDUCE);
    s.push_str(&JV_WGSL[end + "//END_REDUCE".len()..]);
    s.replace(
        "/*SUBGROUP_ARGS*/",
        ", @builtin(subgroup_invocation_id) sgl: u32, @builtin(subgroup_id) sgi: u32, \
         @builtin(num_subgroups) sgn: u32",
    )
    .replace("//SUBGROUP_INIT", "sg_lane = sgl;\n    sg_id = sgi;\n    sg_count = sgn;")
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    trials: u32,
    classes: u32,
    wtot: u32,
    rtot: u32,
    flags: u32,
    pad0: u32,
    cells: u32,
    pad1: u32,
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

/// The JV pipelines.
pub struct JvGpu {
    ctx: Arc<GpuContext>,
    pipe: wgpu::ComputePipeline,
    pick: wgpu::ComputePipeline,
}

/// The device buffers of one batch of problems of fixed shapes, built once and reused.
pub struct JvBatch {
    ctx: Arc<GpuContext>,
    pipe: wgpu::ComputePipeline,
    pick: wgpu::ComputePipeline,
    params_warm: wgpu::Buffer,
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
}

impl JvGpu {
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        let module = ctx.module("jv", &source(ctx.subgroups));
        let pipe = ctx.pipeline(&module, "jv");
        let pick = ctx.pipeline(&module, "pick");
        JvGpu { ctx, pipe, pick }
    }

    /// Buffers for `trials` trials whose classes have the sizes `sizes` (each trial's
    /// weights are the classes' `n x n` row-major blocks in order), with their own weights,
    /// `cold` and `fail` words.
    pub fn batch(&self, sizes: &[usize], trials: usize) -> JvBatch {
        self.batch_on(sizes, trials, None, 0)
    }

    /// [`JvGpu::batch`] reading its weights, per-trial `cold` words and writing its `fail`
    /// words in the caller's buffers (the F1 loop's), for a caller with `cells` cells per
    /// trial that takes the answer through [`JvBatch::select_into`].
    pub fn batch_on(
        &self,
        sizes: &[usize],
        trials: usize,
        shared: Option<(&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer)>,
        cells: usize,
    ) -> JvBatch {
        let wtot: usize = sizes.iter().map(|n| n * n).sum();
        let rtot: usize = sizes.iter().sum();
        let mut table = Vec::with_capacity(4 * sizes.len());
        let (mut woff, mut roff) = (0usize, 0usize);
        for &n in sizes {
            table.extend_from_slice(&[n as u32, woff as u32, roff as u32, 0]);
            woff += n * n;
            roff += n;
        }
        let ctx = &self.ctx;
        let params = |flags: u32| Params {
            trials: trials as u32,
            classes: sizes.len() as u32,
            wtot: wtot as u32,
            rtot: rtot as u32,
            flags,
            pad0: 0,
            cells: cells as u32,
            pad1: 0,
        };
        let params_warm = ctx.uniform("jv params (warm)", &params(2));
        let params_cold = ctx.uniform("jv params (cold)", &params(0));
        let tb = ctx.storage("jv table", &table);
        let rt = 4 * (rtot * trials) as u64;
        let (weights, cold, fail) = match shared {
            Some((w, c, f)) => (w.clone(), c.clone(), f.clone()),
            None => (
                ctx.zeroed("jv weights", 4 * (wtot * trials) as u64),
                ctx.zeroed("jv cold", 4 * trials as u64),
                ctx.zeroed("jv fail", 4 * trials as u64),
            ),
        };
        // No answer yet: every row starts free.
        let rows = ctx.storage("jv rows", &vec![u32::MAX; rtot * trials]);
        let duals = ctx.zeroed("jv duals", rt);
        let state = ctx.zeroed("jv state", 16 * (trials * sizes.len()) as u64);
        let bind = |p: &wgpu::Buffer| {
            ctx.bind(
                &self.pipe,
                &[(0, p), (1, &tb), (2, &weights), (3, &rows), (4, &duals), (6, &state), (7, &cold), (10, &fail)],
            )
        };
        JvBatch {
            bg_warm: bind(&params_warm),
            bg_cold: bind(&params_cold),
            ctx: ctx.clone(),
            pipe: self.pipe.clone(),
            pick: self.pick.clone(),
            params_warm,
            sizes: sizes.to_vec(),
            trials,
            wtot,
            rtot,
            weights,
            rows,
            duals,
            state,
            cold,
            fail,
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

    pub fn write_weights(&self, w: &[f32]) -> Result<(), GpuError> {
        super::assign::write_weights(&self.ctx, &self.weights, w, self.trials, self.wtot)
    }

    /// Writes a warm start: the rows' columns and the column duals.
    pub fn write_warm(&self, rows: &[u32], duals: &[f32]) -> Result<(), GpuError> {
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
    /// is 0).
    pub fn encode(&self, enc: &mut wgpu::CommandEncoder, warm: bool) {
        let bg = if warm { &self.bg_warm } else { &self.bg_cold };
        dispatch(enc, &self.pipe, bg, groups_grid(self.problems() as u64));
    }

    /// Solves every problem on the device and waits.
    pub fn run(&self, warm: bool) -> Result<(), GpuError> {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        enc.clear_buffer(&self.fail, 0, None);
        self.encode(&mut enc, warm);
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.wait()
    }

    /// A bind group that writes the answer into `sel` (see `pick` in the shader), given per
    /// row of a trial's classes its cell and the offset of its row in the flat weights.
    pub fn select_into(&self, row_cell: &wgpu::Buffer, sel: &wgpu::Buffer) -> wgpu::BindGroup {
        self.ctx.bind(&self.pick, &[(0, &self.params_warm), (3, &self.rows), (8, row_cell), (9, sel)])
    }

    /// Records the `pick` pass of a bind group from [`JvBatch::select_into`].
    pub fn encode_select(&self, enc: &mut wgpu::CommandEncoder, bg: &wgpu::BindGroup) {
        dispatch(enc, &self.pick, bg, grid((self.trials * self.rtot) as u64));
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
