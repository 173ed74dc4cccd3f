//! The kernels of one iteration as passes over every chunk (`concur`, `divide`, `adapt`,
//! `argmax` and `readout` of `shaders/dc.wgsl`), run alone for tests and benchmarks or
//! recorded as whole iterations, the bytes of state each moves, and the state's
//! fingerprints (`shaders/hash.wgsl`).

use super::buffers::Chunk;
use super::{DcGpu, Kernel};
use crate::backend::GpuError;
use crate::backend::gpu::chunks;
use crate::backend::gpu::context::{dispatch, grid, groups_grid};
use crate::batch::MapKind;
use crate::dc::Weights;

impl DcGpu<'_> {
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
    // A test and bench hook: kernels alone or whole iterations (tests/gpu.rs, benches/projections.rs, concur bench).
    #[doc(hidden)]
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
    // A test and bench hook: kernels alone or whole iterations (tests/gpu.rs, benches/projections.rs, concur bench).
    #[doc(hidden)]
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

    pub(super) fn encode_iteration(&self, enc: &mut wgpu::CommandEncoder, ch: &Chunk) {
        self.encode(enc, ch, Kernel::Concur);
        self.encode(enc, ch, Kernel::Divide);
        if self.cfg.weights == Weights::Adaptive {
            self.encode(enc, ch, Kernel::Adapt);
        }
        self.encode(enc, ch, Kernel::Readout);
    }

    pub(super) fn fingerprints(&self) -> Result<Vec<u64>, GpuError> {
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
}
