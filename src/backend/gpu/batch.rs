//! What both GPU drivers share: per-trial bookkeeping, the batch split into chunks with
//! per-trial buffer I/O, the cycle check, and the final result.

use super::GpuContext;
use crate::backend::GpuError;
use crate::map::{Completion, CompletionTrigger, MapResult, Mechanism, Rounds, TrialSummary, TrialView, completer};
use crate::puzzle::{Board, Placement, Puzzle};
use crate::rng::trial_seed;
use crate::search::backtrack::Backtracker;
use crate::verify::Network;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// Exact limit cycles: a trial whose state fingerprint repeats one of its last this many
/// (taken every round) restarts.
const CYCLE_MEMORY: usize = 16;

/// Bookkeeping of one trial of a GPU batch; `E` is the driver's own per-trial state.
pub(crate) struct GpuTrial<E> {
    pub iterations: u64,
    pub best_score: usize,
    pub solved_at: Option<u64>,
    pub solved_by: Option<Mechanism>,
    pub restarts: u64,
    /// Arc-consistent completion (with `--complete`).
    pub trig: CompletionTrigger,
    hashes: [u64; CYCLE_MEMORY],
    hash_pos: usize,
    pub rng: Xoshiro256PlusPlus,
    /// Whether the CPU assignments may warm-start from the previous duals.
    pub warm: bool,
    /// Best score and its iteration since the last (re)start, for stall restarts.
    start_best: usize,
    start_improved_at: u64,
    pub stall_restarts: u64,
    pub extra: E,
}

impl<E> GpuTrial<E> {
    /// Trial `t` of a run seeded with `seed` (the same stream as on the CPU backend).
    pub fn new(seed: u64, t: usize, extra: E) -> Self {
        GpuTrial {
            iterations: 0,
            best_score: 0,
            solved_at: None,
            solved_by: None,
            restarts: 0,
            trig: CompletionTrigger::default(),
            hashes: [0; CYCLE_MEMORY],
            hash_pos: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(trial_seed(seed, t as u64)),
            warm: false,
            start_best: 0,
            start_improved_at: 0,
            stall_restarts: 0,
            extra,
        }
    }

    /// The stall rule of `MapConfig::restart_stall`, as the CPU driver applies it after each
    /// scored iteration: true when the trial has gone `l` iterations without beating its
    /// best score since its last (re)start. The caller then restarts it; its stall memory
    /// and cycle memory start over and the restart is counted.
    pub fn stalled(&mut self, score: usize, l: u64) -> bool {
        if score > self.start_best {
            (self.start_best, self.start_improved_at) = (score, self.iterations);
            return false;
        }
        if self.iterations - self.start_improved_at < l {
            return false;
        }
        (self.start_best, self.start_improved_at) = (0, self.iterations);
        self.hashes = [0; CYCLE_MEMORY];
        self.stall_restarts += 1;
        true
    }

    /// Marks the trial solved at its current iteration by `how`.
    pub fn solve(&mut self, how: Mechanism) {
        self.solved_at = Some(self.iterations);
        self.solved_by = Some(how);
    }

    /// Runs the completion trigger after an iteration (see [`CompletionTrigger::step`]);
    /// a completed board lands in `best` (through `id`, placement to candidate id) and the
    /// trial is solved by `map+ac`.
    #[allow(clippy::too_many_arguments, reason = "one trial's iteration outcome")]
    pub fn complete(
        &mut self,
        comp: &Completion,
        bt: &mut Backtracker<'_>,
        puzzle: &Puzzle,
        improved: bool,
        score: usize,
        best: &mut [u32],
        place: impl Fn(&[u32]) -> Vec<Placement>,
        id: impl Fn(usize, Placement) -> Option<u32>,
    ) {
        let it = self.iterations;
        if let Some(sol) = self.trig.step(comp, bt, puzzle, improved, score, it, || place(best)) {
            for (c, pl) in sol.cells.iter().enumerate() {
                best[c] = id(c, *pl).expect("the backtracker places candidates");
            }
            self.best_score = puzzle.max_score();
            self.solve(Mechanism::MapAc);
        }
    }

    pub fn is_active(&self, max_iters: u64) -> bool {
        self.solved_at.is_none() && self.iterations < max_iters
    }

    /// Records the round's fingerprint; true when it repeats (the trial is in a cycle and
    /// must restart; its memory is cleared).
    pub fn in_cycle(&mut self, h: u64) -> bool {
        if self.hashes.contains(&h) {
            self.hashes = [0; CYCLE_MEMORY];
            return true;
        }
        self.hashes[self.hash_pos] = h;
        self.hash_pos = (self.hash_pos + 1) % CYCLE_MEMORY;
        false
    }
}

impl<E> TrialView for GpuTrial<E> {
    fn iterations(&self) -> u64 {
        self.iterations
    }
    fn best_score(&self) -> usize {
        self.best_score
    }
    fn solved_at(&self) -> Option<u64> {
        self.solved_at
    }
}

/// The outcome of a GPU batch: `best` holds each trial's best board (candidate ids),
/// `place` turns one into placements.
pub(crate) fn result<E>(
    puzzle: &Puzzle,
    trials: &[GpuTrial<E>],
    best: &[u32],
    place: impl Fn(&[u32]) -> Vec<Placement>,
    wall_s: f64,
) -> MapResult {
    let n = puzzle.cells();
    let board_of =
        |t: usize| Board { width: puzzle.width(), height: puzzle.height(), cells: place(&best[t * n..(t + 1) * n]) };
    let solution = Rounds::first_solution(trials).map(|(t, it)| (t, it, board_of(t)));
    let best_t = Rounds::best_trial(trials);
    MapResult {
        best: board_of(best_t),
        best_score: trials[best_t].best_score,
        max_score: puzzle.max_score(),
        solution,
        trial_iterations: trials.iter().map(|t| t.iterations).sum(),
        wall_s,
        trials: trials
            .iter()
            .map(|t| TrialSummary {
                iterations: t.iterations,
                best_score: t.best_score,
                solved_at: t.solved_at,
                solved_by: t.solved_by,
                restarts: t.restarts,
                completions: t.trig.runs,
                completion_nodes: t.trig.nodes,
                stall_restarts: t.stall_restarts,
            })
            .collect(),
    }
}

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

/// Per-trial state fingerprints: `encode` records the hash dispatch(es) of a chunk into its
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
