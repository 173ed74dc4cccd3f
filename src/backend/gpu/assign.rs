//! The batched exact assignment on the device (`shaders/assign.wgsl`): Bertsekas's auction
//! with epsilon scaling on quantised weights, one workgroup per (trial, class) problem.
//!
//! Exactness. Each problem's finite weights are mapped to integers `q` in `[0, qmax]`
//! ([`qmax`]); the auction runs on the benefits `q (n + 1)` down to epsilon 1, which makes the
//! assignment it returns optimal for `q` (epsilon below one unit of `q` over `n`). Rounding
//! moves each weight by at most half a quantum `(hi - lo) / qmax`, so the float weight of
//! that assignment is within `n` quanta of the float optimum ([`quantum`]). The host
//! Jonker-Volgenant solver ([`crate::assign::Assigner`]) stays the reference; the tests
//! compare the two on the same `q` exactly.
//!
//! Prices stay per problem between calls, shifted so the smallest is 0, for the warm start.
//! A problem the kernel cannot finish (status [`Status`] other than `Solved`) is for the host.
//!
//! In the F1 device loop (`AssignBatch::encode_bounded`) a solve is a fixed number of
//! dispatches followed by `settle`, which marks the trials with a problem left unsolved; the
//! loop restarts those trials alone, with no host solve.
//!
//! Warm start: the prices of a solved problem are in units of its quantum; the next solve
//! rescales them to its own quantum before bidding (the scale is kept in the state's fourth
//! word), so that a change in the weights' range does not start a price war.

use super::GpuContext;
use super::context::groups_grid;
use super::pick::Pick;
use super::timing::Passes;
use crate::backend::GpuError;
use std::sync::Arc;

/// The WGSL source.
pub(crate) const ASSIGN_WGSL: &str = include_str!("../../../shaders/assign.wgsl");

/// Largest problem the kernel takes (rows in workgroup memory).
pub const MAX_N: usize = 512;

/// Benefits `q (n + 1)` stay below 2^24, far from the prices' cap (2^30).
pub fn qmax(n: usize) -> u32 {
    (((1u64 << 24) - 1) / (n as u64 + 1)) as u32
}

/// The size of one quantum of a problem whose finite weights span `[lo, hi]`.
pub fn quantum(lo: f32, hi: f32, n: usize) -> f64 {
    if hi > lo { (hi as f64 - lo as f64) / qmax(n) as f64 } else { 0.0 }
}

/// The outcome of one problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Solved: an assignment optimal for the quantised weights (within `n` quanta of the float
    /// optimum).
    Solved,
    /// A row has no allowed entry.
    Infeasible,
    /// A NaN or +inf weight.
    BadWeight,
    /// The price or round bound was reached: solve it on the host.
    Unfinished,
    /// Larger than [`MAX_N`].
    TooLarge,
}

impl Status {
    pub(crate) fn from_code(c: u32) -> Status {
        match c {
            0 => Status::Solved,
            1 => Status::Infeasible,
            2 => Status::BadWeight,
            4 => Status::TooLarge,
            _ => Status::Unfinished,
        }
    }
}

/// The batch of problems, the first words of every device assignment's parameters (`Params`
/// in `shaders/assign.wgsl`, `jv.wgsl` and `jv_sg.wgsl`): trials, classes per trial, weight
/// and row words per trial, and the kernel's flags.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Problems {
    pub(super) trials: u32,
    pub(super) classes: u32,
    pub(super) wtot: u32,
    pub(super) rtot: u32,
    pub(super) flags: u32,
}

impl Problems {
    pub(super) fn new(trials: usize, classes: usize, wtot: usize, rtot: usize, flags: u32) -> Self {
        Problems { trials: trials as u32, classes: classes as u32, wtot: wtot as u32, rtot: rtot as u32, flags }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    problems: Problems,
    max_rounds: u32,
    cells: u32,
    pad1: u32,
    k_lo: u32,
    k_n: u32,
    pad2: u32,
    pad3: u32,
}

/// The layout of the uniforms above (`tests/shaders.rs`).
pub(crate) fn uniform_layouts() -> Vec<super::UniformLayout> {
    vec![uniform_layout!(
        "assign.wgsl",
        "P",
        Params,
        [
            problems.trials,
            problems.classes,
            problems.wtot,
            problems.rtot,
            problems.flags,
            max_rounds,
            cells,
            pad1,
            k_lo,
            k_n,
            pad2,
            pad3
        ]
    )]
}

/// What [`AssignGpu::solve`] read back, trial-major as the weights.
#[derive(Clone, Debug)]
pub struct Solved {
    /// Column of each row: trial `t`, class `k` at `t * rtot + roff[k]`.
    pub rows: Vec<u32>,
    /// The final prices (the next call's warm start), same layout.
    pub prices: Vec<i32>,
    /// Per (trial, class).
    pub status: Vec<Status>,
    /// The quantised weights (-1 for a forbidden entry), the weights' layout, when asked for.
    pub q: Option<Vec<i32>>,
    /// Bidding rounds each problem took, per (trial, class).
    pub rounds: Vec<u32>,
}

/// A problem still running (state word 2).
const RUNNING: u32 = 255;
/// Dispatches recorded per submission between two looks at the problems' state.
const DISPATCHES_PER_SUBMIT: usize = 8;
/// Past this many dispatches the problems still running are left to the host (Unfinished).
const MAX_DISPATCHES: usize = 1 << 14;

/// Bidding rounds per problem in one dispatch: about 2n + 16 loop steps a round, kept under
/// 50,000 steps a dispatch (software drivers such as lavapipe cut loops off past 65,535).
pub(crate) fn rounds_per_dispatch(n: usize) -> u32 {
    (50_000 / (2 * n as u32 + 16)).max(1)
}

/// Writes `trials` trials of `wtot` assignment weights into `buf` (either device kernel's
/// weights), refusing another shape.
pub(crate) fn write_weights(
    ctx: &GpuContext,
    buf: &wgpu::Buffer,
    w: &[f32],
    trials: usize,
    wtot: usize,
) -> Result<(), GpuError> {
    if w.len() != wtot * trials {
        return Err(GpuError::Misuse(format!("assignment weights: {} entries for {trials} trials of {wtot}", w.len())));
    }
    ctx.queue.write_buffer(buf, 0, bytemuck::cast_slice(w));
    Ok(())
}

/// The auction's workgroup sizes: a class of n rows takes the first at or above n.
const SIZES: [u32; 4] = [32, 64, 128, 256];

/// The workgroup size of the auction for a class of `n` rows.
pub(crate) fn workgroup_for(n: usize) -> u32 {
    SIZES.into_iter().find(|&w| w as usize >= n).unwrap_or(256)
}

/// The auction's source for a workgroup of `wg` threads (the file's own is 256): its rows per
/// thread, which size function-scope arrays, written in. The workgroup size itself is the
/// pipeline-overridable constant of [`auction_constants`].
pub fn auction_source(wg: u32) -> String {
    format!("const PER: u32 = {}u;\n{ASSIGN_WGSL}", 512 / wg)
}

/// The auction's pipeline-overridable constants for a workgroup of `wg` threads.
pub fn auction_constants(wg: u32) -> [(&'static str, f64); 1] {
    [("WG", f64::from(wg))]
}

/// The auction pipelines (one per workgroup size) and the `settle` pass.
pub struct AssignGpu {
    ctx: Arc<GpuContext>,
    /// (workgroup size, `auction` built for it).
    pipes: Vec<(u32, wgpu::ComputePipeline)>,
    settle: wgpu::ComputePipeline,
}

/// The auction of one class: its pipeline (sized to the class) and bind groups.
struct ClassPass {
    pipe: wgpu::ComputePipeline,
    bg_cold: wgpu::BindGroup,
    bg_warm: wgpu::BindGroup,
    bg_more: wgpu::BindGroup,
}

/// The device buffers of one batch of problems of fixed shapes, built once and reused: the
/// weights, answers, prices (the warm start, kept on the device) and state stay there.
pub struct AssignBatch {
    ctx: Arc<GpuContext>,
    /// One auction pass per class, each with its own workgroup size.
    passes: Vec<ClassPass>,
    settle: wgpu::ComputePipeline,
    /// The parameters of every dispatch after a solve's first (and of `settle`).
    more: wgpu::Buffer,
    sizes: Vec<usize>,
    trials: usize,
    wtot: usize,
    rtot: usize,
    want_q: bool,
    weights: wgpu::Buffer,
    rows: wgpu::Buffer,
    prices: wgpu::Buffer,
    state: wgpu::Buffer,
    q: wgpu::Buffer,
    st_state: wgpu::Buffer,
    /// Whether the prices on the device come from a finished solve (or were written).
    has_prices: std::cell::Cell<bool>,
    /// The state words as read back (scratch of [`AssignBatch::run`]).
    state_host: std::cell::RefCell<Vec<u8>>,
}

/// The status word (the third of four) of each problem in read-back state bytes.
fn status_words(state: &[u8]) -> impl Iterator<Item = u32> + '_ {
    state.chunks_exact(16).map(|s| u32::from_le_bytes([s[8], s[9], s[10], s[11]]))
}

impl AssignGpu {
    /// The auction's pipelines on `ctx`, one per workgroup size.
    pub fn new(ctx: Arc<GpuContext>) -> Self {
        // `settle` from the source at the file's own workgroup size (256).
        let module = ctx.module("assign", &auction_source(256));
        let settle = ctx.pipeline(&module, "settle");
        let pipes = SIZES
            .into_iter()
            .map(|wg| {
                let module = ctx.module("assign (sized)", &auction_source(wg));
                (wg, ctx.pipeline_with(&module, "auction", &auction_constants(wg)))
            })
            .collect();
        AssignGpu { ctx, pipes, settle }
    }

    /// Buffers for `trials` trials whose classes have the sizes `sizes` (each trial's weights
    /// are the classes' `n x n` row-major blocks in order). With `want_q` the first dispatch
    /// of each solve also writes the quantised weights.
    pub fn batch(&self, sizes: &[usize], trials: usize, want_q: bool) -> AssignBatch {
        self.batch_on(sizes, trials, want_q, None, 0)
    }

    /// [`AssignGpu::batch`] reading its weights from `weights` (a buffer the caller fills on
    /// the device, trials x the classes' blocks), for a caller with `cells` cells per trial
    /// that takes the answer through [`AssignBatch::select_into`].
    pub(crate) fn batch_on(
        &self,
        sizes: &[usize],
        trials: usize,
        want_q: bool,
        weights: Option<&wgpu::Buffer>,
        cells: usize,
    ) -> AssignBatch {
        let wtot: usize = sizes.iter().map(|n| n * n).sum();
        let rtot: usize = sizes.iter().sum();
        let mut table = Vec::with_capacity(4 * sizes.len());
        let (mut woff, mut roff) = (0usize, 0usize);
        for &n in sizes {
            table.extend_from_slice(&[n as u32, woff as u32, roff as u32, rounds_per_dispatch(n)]);
            woff += n * n;
            roff += n;
        }
        let ctx = &self.ctx;
        let problems = trials * sizes.len();
        let params = |flags: u32, k_lo: usize, k_n: usize| Params {
            problems: Problems::new(trials, sizes.len(), wtot, rtot, flags),
            // Far more rounds than any feasible problem here needs; a bound, not a budget.
            max_rounds: 1 << 22,
            cells: cells as u32,
            pad1: 0,
            k_lo: k_lo as u32,
            k_n: k_n as u32,
            pad2: 0,
            pad3: 0,
        };
        let q_flag = u32::from(want_q);
        let more = ctx.uniform("assign params", &params(0, 0, sizes.len()));
        let tb = ctx.storage("assign table", &table);
        let rt = 4 * (rtot * trials) as u64;
        let weights = match weights {
            Some(w) => w.clone(),
            None => ctx.zeroed("assign weights", 4 * (wtot * trials) as u64),
        };
        let rows = ctx.zeroed("assign rows", rt);
        let owners = ctx.zeroed("assign owners", rt);
        let prices = ctx.zeroed("assign prices", rt);
        let state = ctx.zeroed("assign state", 16 * problems as u64);
        let q = ctx.zeroed("assign q", if want_q { 4 * (wtot * trials) as u64 } else { 4 });
        let passes = sizes
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let wg = workgroup_for(n);
                let pipe = self.pipes.iter().find(|p| p.0 == wg).expect("a pipeline per size").1.clone();
                let bind = |flags: u32| {
                    let p = ctx.uniform("assign params", &params(flags, k, 1));
                    ctx.bind(
                        &pipe,
                        &[
                            (0, &p),
                            (1, &tb),
                            (2, &weights),
                            (3, &rows),
                            (4, &owners),
                            (5, &prices),
                            (6, &state),
                            (7, &q),
                        ],
                    )
                };
                ClassPass { bg_cold: bind(4 | q_flag), bg_warm: bind(4 | 2 | q_flag), bg_more: bind(0), pipe }
            })
            .collect();
        AssignBatch {
            settle: self.settle.clone(),
            more: more.clone(),
            passes,
            st_state: ctx.staging("st state", state.size()),
            ctx: ctx.clone(),
            sizes: sizes.to_vec(),
            trials,
            wtot,
            rtot,
            want_q,
            weights,
            rows,
            prices,
            state,
            q,
            has_prices: std::cell::Cell::new(false),
            state_host: std::cell::RefCell::new(vec![0u8; 16 * problems]),
        }
    }

    /// One solve from the host's weights (`trials` trials of `sizes`' blocks back to back),
    /// warm-started from `prices` (the `prices` of an earlier solve of the same shapes).
    pub fn solve(
        &self,
        sizes: &[usize],
        weights: &[f32],
        trials: usize,
        prices: Option<&[i32]>,
        want_q: bool,
    ) -> Result<Solved, GpuError> {
        let b = self.batch(sizes, trials, want_q);
        b.write_weights(weights)?;
        if let Some(p) = prices {
            b.write_prices(p)?;
        }
        b.run(prices.is_some())?;
        b.read()
    }
}

impl AssignBatch {
    fn problems(&self) -> usize {
        self.trials * self.sizes.len()
    }

    /// Uploads the weights of every problem, trial-major, each class's `n x n` block in turn (a
    /// misuse error for any other length).
    pub fn write_weights(&self, w: &[f32]) -> Result<(), GpuError> {
        write_weights(&self.ctx, &self.weights, w, self.trials, self.wtot)
    }

    /// The weights buffer (trials x the classes' blocks), for a caller that fills it on the
    /// device.
    pub fn weights_buffer(&self) -> &wgpu::Buffer {
        &self.weights
    }

    pub(crate) fn write_prices(&self, p: &[i32]) -> Result<(), GpuError> {
        if p.len() != self.rtot * self.trials {
            return Err(GpuError::Misuse("assignment prices of another shape".into()));
        }
        self.ctx.queue.write_buffer(&self.prices, 0, bytemuck::cast_slice(p));
        self.has_prices.set(true);
        Ok(())
    }

    /// Solves every problem on the device, warm from the prices already there when `warm`
    /// (those of the last solve, or written). Only the problems' state words come back, every
    /// few dispatches, to see whether any is still running. Returns whether every problem was
    /// solved (the others are for the host).
    pub fn run(&self, warm: bool) -> Result<bool, GpuError> {
        let ctx = &self.ctx;
        let mut state = self.state_host.borrow_mut();
        let mut dispatches = 0;
        let warm = warm && self.has_prices.get();
        loop {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            for _ in 0..DISPATCHES_PER_SUBMIT {
                self.encode_auction(&mut Passes::new(&mut enc), dispatches == 0, warm);
                dispatches += 1;
            }
            enc.copy_buffer_to_buffer(&self.state, 0, &self.st_state, 0, self.state.size());
            ctx.queue.submit([enc.finish()]);
            ctx.read_back(&mut [(&self.st_state, &mut state[..])])?;
            if status_words(&state).all(|s| s != RUNNING) || dispatches >= MAX_DISPATCHES {
                self.has_prices.set(true);
                return Ok(status_words(&state).all(|s| s == 0));
            }
        }
    }

    /// The pass that writes the answer into `sel` (per cell of each trial, the index of its
    /// chosen entry in the trial's flat weights, `cells` a trial), given per row of a trial's
    /// classes its cell and the offset of its row in the flat weights (`shaders/pick.wgsl`).
    pub(crate) fn select_into(&self, row_cell: &wgpu::Buffer, sel: &wgpu::Buffer, cells: usize) -> Pick {
        Pick::new(&self.ctx, self.trials, self.rtot, cells, &self.rows, row_cell, sel)
    }

    /// A bind group for `settle` that marks in `fail` (one word per trial) the trials with a
    /// problem not solved.
    pub(crate) fn settle_into(&self, fail: &wgpu::Buffer) -> wgpu::BindGroup {
        self.ctx.bind(&self.settle, &[(0, &self.more), (6, &self.state), (10, fail)])
    }

    /// Records one whole solve with no host look: `dispatches` auction dispatches (the
    /// first warm from the prices on the device when `warm`), then `settle` into the bind
    /// group from [`AssignBatch::settle_into`].
    pub(crate) fn encode_bounded(&self, p: &mut Passes, warm: bool, dispatches: usize, settle: &wgpu::BindGroup) {
        for d in 0..dispatches.max(1) {
            self.encode_auction(p, d == 0, warm);
        }
        p.dispatch("settle", &self.settle, settle, super::context::grid(self.problems() as u64));
    }

    /// Records one auction dispatch of every class (each with its own workgroup size): the
    /// first of a solve (cold, or warm from the prices on the device) or a later one.
    fn encode_auction(&self, p: &mut Passes, first: bool, warm: bool) {
        let grid = groups_grid(self.trials as u64);
        for c in &self.passes {
            let bg = match (first, warm) {
                (true, true) => &c.bg_warm,
                (true, false) => &c.bg_cold,
                _ => &c.bg_more,
            };
            p.dispatch("auction", &c.pipe, bg, grid);
        }
    }

    /// Reads the answers, prices, states and (when asked for) the quantised weights.
    pub fn read(&self) -> Result<Solved, GpuError> {
        let ctx = &self.ctx;
        let st_rows = ctx.staging("st rows", self.rows.size());
        let st_pr = ctx.staging("st prices", self.prices.size());
        let st_q = ctx.staging("st q", self.q.size());
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        for (from, to) in
            [(&self.rows, &st_rows), (&self.prices, &st_pr), (&self.q, &st_q), (&self.state, &self.st_state)]
        {
            enc.copy_buffer_to_buffer(from, 0, to, 0, from.size());
        }
        ctx.queue.submit([enc.finish()]);
        let rt = 4 * self.rtot * self.trials;
        let (mut r, mut pp) = (vec![0u8; rt], vec![0u8; rt]);
        let mut q = vec![0u8; if self.want_q { 4 * self.wtot * self.trials } else { 0 }];
        let mut state = vec![0u8; 16 * self.problems()];
        ctx.read_back(&mut [(&st_rows, &mut r), (&st_pr, &mut pp), (&st_q, &mut q), (&self.st_state, &mut state)])?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&state);
        Ok(Solved {
            rows: bytemuck::pod_collect_to_vec(&r),
            prices: bytemuck::pod_collect_to_vec(&pp),
            status: words.chunks(4).map(|s| Status::from_code(s[2])).collect(),
            q: self.want_q.then(|| bytemuck::pod_collect_to_vec(&q)),
            rounds: words.chunks(4).map(|s| s[1]).collect(),
        })
    }
}

#[cfg(test)]
mod sizing_tests {
    use super::*;

    #[test]
    fn the_auction_workgroup_fits_the_class() {
        // Corners (4), the 7x7 and 8x8 edge and inner classes, 16x16's, and past the largest size.
        for (n, wg) in
            [(1, 32), (4, 32), (20, 32), (24, 32), (25, 32), (36, 64), (56, 64), (100, 128), (196, 256), (512, 256)]
        {
            assert_eq!(workgroup_for(n), wg, "n = {n}");
        }
        for wg in SIZES {
            let src = auction_source(wg);
            // The workgroup size is the constant WG, which PER follows; settle keeps its own
            // 256-thread workgroups.
            assert!(src.contains("@workgroup_size(WG)\nfn auction") && src.contains("const SETTLE_WG: u32 = 256u;"));
            assert!(src.contains(&format!("const PER: u32 = {}u;", 512 / wg)));
            assert_eq!(auction_constants(wg), [("WG", f64::from(wg))]);
        }
    }
}
