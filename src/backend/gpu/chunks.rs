//! The chunks of a GPU batch, shared by both GPU drivers: the batch split into chunks of
//! binding-sized per-trial buffers, their per-trial I/O and the device fingerprints of the
//! cycle check. The per-trial bookkeeping and the result builder are the batch core's, the
//! same as the CPU drivers' ([`crate::batch`]: `Trial`, `result`).

use super::GpuContext;
use crate::backend::GpuError;
pub(crate) use crate::batch::result;
use crate::batch::{Completion, completer};
use crate::puzzle::Puzzle;
use crate::search::backtrack::Backtracker;
use crate::verify::Network;
use std::sync::Arc;

/// Trials per chunk: as many as keep every per-trial buffer (`per_trial` bytes for one
/// trial, the largest of them) within one storage binding and one buffer, at most `cap`.
pub(crate) fn chunk_trials(ctx: &GpuContext, per_trial: u64, trials: usize, cap: usize) -> Result<usize, GpuError> {
    let limit = ctx.max_binding.min(ctx.max_buffer);
    if per_trial > limit {
        return Err(GpuError::Misuse(format!(
            "one trial needs {per_trial} bytes in one binding; the adapter allows {limit}"
        )));
    }
    Ok(((limit / per_trial) as usize).min(cap).clamp(1, trials))
}

/// The batch's chunks, in order: `make(first, trials)` builds the chunk of trials
/// `first..first + trials`, at most `per_chunk` of them.
pub(crate) fn split<C>(trials: usize, per_chunk: usize, mut make: impl FnMut(usize, usize) -> C) -> Vec<C> {
    (0..trials).step_by(per_chunk.max(1)).map(|first| make(first, per_chunk.min(trials - first))).collect()
}

/// The error of the out-of-memory scope opened around a batch's buffers, as the batch's error
/// (not through wgpu's uncaptured-error handler, which panics).
pub(crate) fn out_of_memory(error: Option<wgpu::Error>, trials: usize) -> Result<(), GpuError> {
    match error {
        Some(e) => Err(GpuError::Device(format!("out of device memory for {trials} trials: {e}"))),
        None => Ok(()),
    }
}

/// The completion backtracker of a GPU run (one, on the host thread), when enabled.
pub(crate) fn completion_search<'p>(puzzle: &'p Puzzle, complete: Option<&Completion>) -> Option<Backtracker<'p>> {
    complete.map(|c| completer(puzzle, &Arc::new(Network::new(puzzle)), c))
}

/// A contiguous slice of the batch with buffers of its own.
pub(crate) trait Span {
    fn first(&self) -> usize;
    fn trials(&self) -> usize;
}

/// Writes `data` (`per` elements per trial, trials `first..`) into each chunk's buffer.
pub(crate) fn write_per_trial<C: Span, T: bytemuck::Pod>(
    ctx: &GpuContext,
    chunks: &[C],
    first: usize,
    data: &[T],
    per: usize,
    buf: impl Fn(&C) -> &wgpu::Buffer,
) {
    let count = data.len() / per.max(1);
    for ch in chunks {
        let lo = first.max(ch.first());
        let hi = (first + count).min(ch.first() + ch.trials());
        if lo < hi {
            let off = ((lo - ch.first()) * per * std::mem::size_of::<T>()) as u64;
            ctx.queue.write_buffer(buf(ch), off, bytemuck::cast_slice(&data[(lo - first) * per..(hi - first) * per]));
        }
    }
}

/// Reads a per-trial buffer of every chunk (`per` elements per trial) through a fresh
/// staging buffer (tests, benchmarks, once-per-round reads).
pub(crate) fn read_per_trial<C: Span, T: bytemuck::Pod + Default>(
    ctx: &GpuContext,
    chunks: &[C],
    per: usize,
    buf: impl Fn(&C) -> &wgpu::Buffer,
) -> Result<Vec<T>, GpuError> {
    let total = chunks.iter().map(|c| c.first() + c.trials()).max().unwrap_or(0);
    let mut out = vec![T::default(); total * per];
    for ch in chunks {
        let bytes = (ch.trials() * per * std::mem::size_of::<T>()) as u64;
        let st = ctx.staging("read", bytes);
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(buf(ch), 0, &st, 0, bytes);
        ctx.queue.submit([enc.finish()]);
        let dst = &mut out[ch.first() * per..(ch.first() + ch.trials()) * per];
        ctx.read_back(&mut [(&st, bytemuck::cast_slice_mut(dst))])?;
    }
    Ok(out)
}

/// Per-trial state fingerprints for [`Trial::in_cycle`], computed on the device
/// (`shaders/hash.wgsl`: an order-independent sum of mixed words, not the CPU drivers' FNV-1a,
/// since the state stays on the device): `encode` records the hash dispatch(es) of a chunk into its
/// cleared `sums` buffer, which is then read through `staging`.
pub(crate) fn fingerprints<C: Span>(
    ctx: &GpuContext,
    chunks: &[C],
    sums: impl Fn(&C) -> (&wgpu::Buffer, &wgpu::Buffer),
    encode: impl Fn(&mut wgpu::CommandEncoder, &C),
) -> Result<Vec<u64>, GpuError> {
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    for ch in chunks {
        let (s, st) = sums(ch);
        enc.clear_buffer(s, 0, None);
        encode(&mut enc, ch);
        enc.copy_buffer_to_buffer(s, 0, st, 0, 8 * ch.trials() as u64);
    }
    ctx.queue.submit([enc.finish()]);
    let total = chunks.iter().map(|c| c.first() + c.trials()).max().unwrap_or(0);
    let mut words = vec![0u32; 2 * total];
    for ch in chunks {
        let r = 2 * ch.first()..2 * (ch.first() + ch.trials());
        ctx.read_back(&mut [(sums(ch).1, bytemuck::cast_slice_mut(&mut words[r]))])?;
    }
    Ok(words.chunks(2).map(|p| (p[0] as u64) << 32 | p[1] as u64).collect())
}
