//! The batch's state as the host sees it: trial-major reads and writes of the trial-minor
//! device buffers, through the scatter and gather kernels of `shaders/layout.wgsl`, and the
//! per-trial buffers that stay trial-major (live flags, boards, statuses).

use super::buffers::{Chunk, LayoutParams, SCATTER_WORDS};
use super::{DcGpu, DcState};
use crate::backend::GpuError;
use crate::backend::gpu::chunks;
use crate::backend::gpu::context::{dispatch, grid};
use crate::batch::MapKind;
use crate::dc::Weights;

impl DcGpu<'_> {
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
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn write_state(&self, first: usize, x: &[f32], chosen: &[u32], lambda: &[f32]) {
        let l = &self.layout;
        self.write_minor(first, x, l.slots(), |c| &c.s.x);
        self.write_minor(first, chosen, l.choices(), |c| &c.s.chosen);
        self.write_minor(first, lambda, l.constraints(), |c| &c.s.lambda);
    }
    /// Writes the concur point (for testing the divide kernel on its own); `ca` (`P_a(y)`) is
    /// kept by the difference map only.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn write_concur(&self, m: &[f32], ca: Option<&[f32]>) {
        let v = self.layout.vars();
        self.write_minor(0, m, v, |c| &c.s.m);
        if let (Some(ca), MapKind::Dm) = (ca, self.cfg.kind) {
            self.write_minor(0, ca, v, |c| &c.s.ca);
        }
    }
    /// Writes the per-constraint errors (for testing the adapt kernel on its own).
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn write_errors(&self, err: &[f32]) {
        self.write_minor(0, err, self.layout.constraints(), |c| &c.s.err);
    }
    pub(super) fn write_live(&self, live: &[u32]) {
        // Per-trial buffers that stay trial-major (live flags, boards, statuses).
        chunks::write_per_trial(&self.ctx, &self.chunks, 0, live, 1, |c| &c.s.live);
    }

    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_state(&self) -> Result<DcState, GpuError> {
        let l = &self.layout;
        Ok((
            self.read_minor(l.slots(), |c| &c.s.x)?,
            self.read_minor(l.choices(), |c| &c.s.chosen)?,
            self.read_minor(l.constraints(), |c| &c.s.lambda)?,
        ))
    }
    /// The concur point `m` and (difference map) `P_a(y)`.
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_concur(&self) -> Result<(Vec<f32>, Option<Vec<f32>>), GpuError> {
        let v = self.layout.vars();
        let ca = if self.cfg.kind == MapKind::Dm { Some(self.read_minor(v, |c| &c.s.ca)?) } else { None };
        Ok((self.read_minor(v, |c| &c.s.m)?, ca))
    }
    /// Per-constraint errors of the last divide (adaptive weights only).
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_errors(&self) -> Result<Vec<f32>, GpuError> {
        if self.cfg.weights != Weights::Adaptive {
            return Err(GpuError::Misuse("errors are kept with adaptive weights only".into()));
        }
        self.read_minor(self.layout.constraints(), |c| &c.s.err)
    }
    /// Readout boards and per-trial (mismatched joins, extra piece uses).
    // A test hook: tests/gpu.rs checks the kernels on the device against the CPU projections.
    #[doc(hidden)]
    pub fn read_readout(&self) -> Result<(Vec<u32>, Vec<u32>), GpuError> {
        let (ctx, chunks) = (&self.ctx, &self.chunks);
        Ok((
            chunks::read_per_trial(ctx, chunks, self.layout.cells(), |c| &c.s.board)?,
            chunks::read_per_trial(ctx, chunks, 2, |c| &c.s.status)?,
        ))
    }
}
