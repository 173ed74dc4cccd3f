//! The `pick` pass shared by the device assignments (`shaders/pick.wgsl`): a batch's answer
//! (the column of every row) written as F1's `sel`, the chosen entry of every cell in the
//! trial's flat weights.

use super::GpuContext;
use super::context::grid;
use super::timing::Passes;

/// The WGSL source.
pub const PICK_WGSL: &str = include_str!("../../../shaders/pick.wgsl");

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    trials: u32,
    rtot: u32,
    cells: u32,
    pad: u32,
}

/// The layout of the uniform above (`tests/shaders.rs`).
pub(crate) fn uniform_layouts() -> Vec<super::UniformLayout> {
    vec![uniform_layout!("pick.wgsl", "P", Params, [trials, rtot, cells, pad])]
}

/// The pick pass of one batch: its bind group and its size.
pub struct Pick {
    pipe: wgpu::ComputePipeline,
    bind: wgpu::BindGroup,
    threads: u64,
    _params: wgpu::Buffer,
}

impl Pick {
    /// Writes, for `trials` trials of `rtot` rows, `sel[t * cells + cell] = offset + column`
    /// from `rows` (trial-major columns) and `row_cell` (per row its cell and row offset).
    pub fn new(
        ctx: &GpuContext,
        trials: usize,
        rtot: usize,
        cells: usize,
        rows: &wgpu::Buffer,
        row_cell: &wgpu::Buffer,
        sel: &wgpu::Buffer,
    ) -> Self {
        // Built once per device, shared by every batch's pick pass.
        let pipe = ctx.pick.get_or_init(|| ctx.pipeline(&ctx.module("pick", PICK_WGSL), "pick")).clone();
        let params = ctx
            .uniform("pick params", &Params { trials: trials as u32, rtot: rtot as u32, cells: cells as u32, pad: 0 });
        let bind = ctx.bind(&pipe, &[(0, &params), (1, rows), (2, row_cell), (3, sel)]);
        Pick { pipe, bind, threads: (trials * rtot) as u64, _params: params }
    }

    /// Records the pass.
    pub fn encode(&self, p: &mut Passes) {
        p.dispatch("pick", &self.pipe, &self.bind, grid(self.threads));
    }
}
