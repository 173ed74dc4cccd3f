//! The device loop of F1 (`--assign gpu-jv`, `gpu-jv-sg`, `gpu-auction`): blocks of K whole
//! iterations, each sent in pieces sized to the device's pace ([`super::super::pace`]), the
//! assignment on the device, and only a few words per trial read back once a block while
//! the next block runs.

use super::buffers::{RING_WORDS, ST_CYCLE, ST_FAIL, ST_LIVE, ST_SOLVED, ST_STALL, TS};
use super::{F1Gpu, Kernel, randomize};
use crate::backend::gpu::context::grid;
use crate::backend::gpu::pace::Pace;
use crate::backend::gpu::timing::{Passes, Profile, Timings};
use crate::backend::{EngineError, GpuError};
use crate::batch::Trial;
use crate::batch::{MapKind, MapResult, Mechanism, Progress, Rounds};
use crate::puzzle::Board;
use crate::verify;
use std::collections::VecDeque;

impl F1Gpu<'_> {
    /// Records `k` whole iterations of every chunk (the weights of the current state, the
    /// device assignment, the update, the mismatch count and `track`), then, with `status`,
    /// the copy of the per-trial words into staging slot `status`, and submits. `first`: the
    /// run's first submission (its first assignment starts cold).
    pub(super) fn submit_iterations(&self, k: usize, status: Option<usize>, first: bool) -> wgpu::SubmissionIndex {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        self.encode_iterations(&mut Passes::new(&mut enc), k, first);
        if let Some(slot) = status {
            for ch in &self.chunks {
                enc.copy_buffer_to_buffer(&ch.tstat, 0, &ch.st_stat[slot], 0, (4 * TS * ch.trials) as u64);
            }
        }
        self.ctx.queue.submit([enc.finish()])
    }

    /// One block of `k` iterations (the loop's unit: the per-trial words are read once a
    /// block), submitted in pieces that `pace` sizes, with at most two pieces in flight; the
    /// last piece copies the words into staging slot `slot`. Before each piece the run's
    /// time and token are checked: false when they cut the block short (no words copied).
    /// On a fast device a block is one submission, as before pacing; on a slow one a stop is
    /// seen within a piece or two of [`crate::backend::gpu::pace::TARGET_S`].
    #[allow(clippy::too_many_arguments, reason = "the loop's state, threaded through")]
    pub(super) fn submit_block(
        &self,
        k: usize,
        slot: usize,
        first: bool,
        block: usize,
        pace: &mut Pace,
        flight: &mut VecDeque<Piece>,
        rounds: &Rounds,
    ) -> Result<bool, GpuError> {
        let (mut left, mut first) = (k, first);
        while left > 0 {
            if rounds.out_of_time(self.cfg.run.time_limit) {
                return Ok(false);
            }
            while flight.len() >= 2 {
                let oldest = flight.pop_front().expect("two pieces in flight");
                self.ctx.wait_for(oldest.index)?;
                pace.read(oldest.iterations);
            }
            let c = pace.next().min(left);
            let index = self.submit_iterations(c, (c == left).then_some(slot), first);
            flight.push_back(Piece { index, iterations: c, block });
            left -= c;
            first = false;
        }
        Ok(true)
    }

    /// Records `k` whole iterations of every chunk of the device loop: the weights of the
    /// current state, the device assignment into `sel`, the update, the mismatch count and
    /// `track`. `first`: the run's first submission (its first assignment starts cold).
    pub(super) fn encode_iterations(&self, p: &mut Passes, k: usize, first: bool) {
        let dm = self.cfg.kind == MapKind::Dm;
        for i in 0..k {
            let warm = !(self.cfg.cold_assign || first && i == 0);
            for ch in &self.chunks {
                let Some(d) = &ch.dev else { continue };
                let tc = ch.trials as u64;
                if let (Some(step), Some(bg)) = (&self.pipes.step, &ch.bg_step) {
                    // The fused pass leaves the next iteration's weights; the submission's
                    // first iteration computes them from the states as the host left them.
                    if i == 0 {
                        self.encode_weights(p, ch, false);
                    }
                    d.main.encode(p, warm);
                    p.dispatch("step", step, bg, super::super::context::groups_grid(tc));
                    continue;
                }
                self.encode_weights(p, ch, false);
                if let Some(pl) = &d.plain {
                    pl.encode(p, warm);
                }
                d.main.encode(p, warm);
                if dm {
                    self.encode(p, ch, Kernel::Mix);
                    p.dispatch("edges", &self.pipes.edges, &ch.bg_edges_tmp, grid(tc * self.dim as u64));
                }
                self.encode(p, ch, Kernel::Update);
                self.encode(p, ch, Kernel::Score);
                p.dispatch("track", &self.pipes.track, &ch.bg_track, grid(tc));
            }
        }
    }

    /// Device time per kernel inside `k` whole iterations of the device loop (a timestamp
    /// pair around every pass), after `warmup` untimed submissions of `k`, from the trials'
    /// seeded starting states. For benchmarks: the trials move as in [`F1Gpu::run_device`]
    /// but nobody restarts the frozen ones.
    pub fn profile_device(&self, k: usize, warmup: usize) -> Result<Timings, EngineError> {
        if !self.chunks.iter().all(|c| c.dev.is_some()) {
            return Err(
                GpuError::Misuse("the device loop runs with --assign gpu-jv, gpu-jv-sg or gpu-auction".into()).into()
            );
        }
        let _ = self.start_trials(|| ());
        for w in 0..warmup {
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            self.encode_iterations(&mut Passes::new(&mut enc), k, w == 0);
            self.ctx.queue.submit([enc.finish()]);
        }
        let mut prof = Profile::new(&self.ctx, 2048)?;
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        self.encode_iterations(&mut Passes::profiled(&mut enc, &mut prof), k, warmup == 0);
        prof.resolve(&mut enc);
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.wait()?;
        Ok(prof.read(&self.ctx)?)
    }

    /// The device loop: blocks of `k` iterations, no host wait inside. The host keeps one
    /// block in flight while it reads the per-trial words of the one before (a few
    /// bytes per trial), restarts the trials the device froze (stall, repeated fingerprint,
    /// failed assignment) from the same random streams as the CPU driver, and reads back and
    /// verifies exactly the best board of each trial that reached 0 mismatches. A frozen
    /// trial waits for the host without moving, so every trial's iterates, restarts and
    /// solve iteration are those of [`crate::f1::map::F1Map::run`] with the same seed (float
    /// rounding apart: see `tests/gpu.rs`); only trials still running when the run stops
    /// (first solution, time limit) may have gone up to `2 k` iterations further.
    ///
    /// A block goes to the device in pieces sized from the measured time per iteration
    /// (`Pace`, at most `k`), so that the run ends close to its time limit and answers a
    /// cancellation promptly on a slow device too; the words are read per block, so a run
    /// that no clock stops gives the same result whatever the pieces.
    pub fn run_device(&mut self, k: usize, progress: &mut dyn FnMut(&Progress)) -> Result<MapResult, EngineError> {
        let cfg = self.cfg.clone();
        let mut rounds = Rounds::new(cfg.keep_going, cfg.run.on_solution.clone(), &cfg.run.cancel);
        let mut pace = Pace::new(k, cfg.run.time_limit);
        let mut flight = VecDeque::with_capacity(3);
        let mut d = self.device_trials();
        let whole = self.submit_block(k, 0, true, 0, &mut pace, &mut flight, &rounds)?;
        let (mut submitted, mut read) = (usize::from(whole), 0usize);
        while read < submitted {
            // One block ahead, so that the device never waits for this read; none, or a block
            // cut short, once the run is out of time.
            if self.submit_block(k, submitted % 2, false, submitted, &mut pace, &mut flight, &rounds)? {
                submitted += 1;
            }
            self.read_block(read, &mut d.words, &mut flight, &mut pace)?;
            read += 1;
            self.take_words(&mut d, cfg.run.max_iters)?;
            if cfg.keep_going {
                self.harvest(&mut rounds, &mut d);
            }
            let done = rounds.after_round(
                &d.trials,
                !cfg.all_trials,
                cfg.run.max_iters,
                cfg.run.time_limit,
                &mut &mut *progress,
            );
            if self.stops(&d.trials, done) {
                break;
            }
        }
        let best = self.finish_device(&mut d.trials, &mut d.solved)?;
        if cfg.keep_going {
            self.harvest(&mut rounds, &mut d);
        }
        let f1 = &self.f1;
        Ok(rounds.finish(self.puzzle, &d.trials, &best, |b| f1.placements(b)))
    }

    /// Fresh trials of the device loop, their seeded starting states written to the device.
    pub(super) fn device_trials(&self) -> DeviceTrials {
        let t_all = self.trials;
        let (trials, x0) = self.start_trials(|| ());
        DeviceTrials {
            trials,
            x0,
            words: vec![0u32; t_all * TS],
            handled: vec![u32::MAX; t_all],
            pending: Vec::with_capacity(t_all),
            solved: vec![None; t_all],
        }
    }

    /// Reads the per-trial words that block `block` copied into its staging slot
    /// (`block % 2`), once every piece of it has completed, and times the pieces for `pace`.
    pub(super) fn read_block(
        &self,
        block: usize,
        words: &mut [u32],
        flight: &mut VecDeque<Piece>,
        pace: &mut Pace,
    ) -> Result<(), GpuError> {
        self.read_status(block % 2, words)?;
        // Every piece of the block just read has completed.
        let mut done_pieces = 0;
        while flight.front().is_some_and(|p| p.block == block) {
            done_pieces += flight.pop_front().map_or(0, |p| p.iterations);
        }
        if done_pieces > 0 {
            pace.read(done_pieces);
        }
        Ok(())
    }

    /// **The loop body** of the device loop, shared by the run ([`F1Gpu::run_device`]) and
    /// the stepper ([`super::F1GpuStepper`]): takes the words just read into every trial
    /// ([`F1Gpu::take_status`]: counters, restarts of frozen trials, resumed only below
    /// `limit` iterations), then reads back and checks exactly the boards of the trials the
    /// device stopped as solved ([`F1Gpu::verify_solved`]).
    pub(super) fn take_words(&self, d: &mut DeviceTrials, limit: u64) -> Result<(), GpuError> {
        let DeviceTrials { trials, x0, words, handled, pending, solved } = d;
        pending.clear();
        for (t, tr) in trials.iter_mut().enumerate() {
            let w = &words[t * TS..(t + 1) * TS];
            if let Some(at) = self.take_status(t, w, tr, &mut handled[t], x0, limit) {
                pending.push((t, at));
            }
        }
        self.verify_solved(pending, trials, solved)
    }

    /// Rate mode: records every trial solved since the last harvest ([`Rounds::harvest`]
    /// checks each board exactly once more) and restarts it on the device from a fresh point
    /// of its own stream, as a new segment (best score, stall and cycle memory cleared), as
    /// the CPU driver does.
    fn harvest(&self, rounds: &mut Rounds, d: &mut DeviceTrials) {
        let DeviceTrials { trials, x0, handled, solved, .. } = d;
        let resumed = rounds.harvest(self.puzzle, trials, |t| solved[t].clone().expect("a solved trial's board"));
        for t in resumed {
            solved[t] = None;
            let at = trials[t].iterations as u32;
            // The status words in flight still say solved at `at`: not taken again.
            handled[t] = at;
            randomize(x0, &mut trials[t].rng);
            self.write_state(t, x0);
            self.new_segment(t, at);
            self.resume(t);
        }
    }

    /// Clears trial `t`'s device record of its segment at iteration `at`: best score and its
    /// iteration, the stall counter, the fingerprint ring.
    fn new_segment(&self, t: usize, at: u32) {
        let (ch, i) = self.chunk_of(t);
        let q = &self.ctx.queue;
        q.write_buffer(&ch.tstat, 4 * (i * TS as u64 + 1), bytemuck::cast_slice(&[0u32, at]));
        q.write_buffer(&ch.tstat, 4 * (i * TS as u64 + 4), bytemuck::cast_slice(&[0u32, at]));
        q.write_buffer(&ch.ring, 4 * i * RING_WORDS as u64, bytemuck::cast_slice(&[0u32; RING_WORDS]));
    }

    /// Takes trial `t`'s per-trial words `w` of the device loop: its iterations and best
    /// score; a solve not taken yet, whose iteration it returns (the caller reads back and
    /// checks the boards of all of a read's solves at once, [`F1Gpu::verify_solved`]); or a
    /// freeze (stall, cycle, failed assignment) not handled yet (`handled`: the iteration of
    /// the last one), restarted from a fresh random state. A restarted trial goes on only
    /// below `limit` iterations (as the CPU driver's, whose restart at its last iteration
    /// ends its run); at `limit` it stays frozen with its new state.
    pub(super) fn take_status(
        &self,
        t: usize,
        w: &[u32],
        tr: &mut Trial<()>,
        handled: &mut u32,
        x0: &mut [f32],
        limit: u64,
    ) -> Option<u32> {
        tr.iterations = w[0] as u64;
        tr.best_score = w[1] as usize;
        match w[3] {
            ST_SOLVED if tr.solved_at.is_none() && *handled != w[0] => return Some(w[2]),
            ST_STALL | ST_CYCLE | ST_FAIL if *handled != w[0] => {
                *handled = w[0];
                if w[3] == ST_STALL {
                    tr.stall_restarts += 1;
                } else {
                    tr.restarts += 1;
                }
                randomize(x0, &mut tr.rng);
                self.write_state(t, x0);
                if tr.iterations < limit {
                    self.resume(t);
                }
            }
            _ => {}
        }
        None
    }

    /// The final words and best boards, after the submission still in flight; returns the
    /// best boards.
    pub(super) fn finish_device(
        &self,
        trials: &mut [Trial<()>],
        solved: &mut [Option<Board>],
    ) -> Result<Vec<u32>, GpuError> {
        let n = self.puzzle.cells();
        self.ctx.wait()?;
        let words: Vec<u32> = self.read_per_trial(TS, |c| &c.tstat)?;
        let best: Vec<u32> = self.read_per_trial(n, |c| &c.bestb)?;
        for (t, tr) in trials.iter_mut().enumerate() {
            let w = &words[t * TS..(t + 1) * TS];
            tr.iterations = w[0] as u64;
            tr.best_score = w[1] as usize;
            if w[3] == ST_SOLVED && tr.solved_at.is_none() {
                solved[t] = Some(self.check_solved(t, w[2], tr, &best[t * n..(t + 1) * n])?);
            }
        }
        debug_assert!(trials.iter().all(|t| t.best_score <= self.puzzle.max_score()));
        Ok(best)
    }

    /// Reads the per-trial words of staging slot `slot` of every chunk.
    pub(super) fn read_status(&self, slot: usize, words: &mut [u32]) -> Result<(), GpuError> {
        for ch in &self.chunks {
            let (lo, hi) = (ch.first * TS, (ch.first + ch.trials) * TS);
            self.ctx.read_back(&mut [(&ch.st_stat[slot], bytemuck::cast_slice_mut(&mut words[lo..hi]))])?;
        }
        Ok(())
    }

    /// Reads back, in one submission, the best board of every trial in `pending` (trial,
    /// iteration at which the device stopped it at 0 mismatches), recounts and checks each
    /// exactly; a trial is solved only then (its board kept in `solved`).
    pub(super) fn verify_solved(
        &self,
        pending: &[(usize, u32)],
        trials: &mut [Trial<()>],
        solved: &mut [Option<Board>],
    ) -> Result<(), GpuError> {
        if pending.is_empty() {
            return Ok(());
        }
        let n = self.puzzle.cells();
        let bytes = 4 * n as u64;
        let st = self.ctx.staging("solved boards", bytes * pending.len() as u64);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for (i, &(t, _)) in pending.iter().enumerate() {
            let (ch, at) = self.chunk_of(t);
            enc.copy_buffer_to_buffer(&ch.bestb, bytes * at, &st, bytes * i as u64, bytes);
        }
        self.ctx.queue.submit([enc.finish()]);
        let mut boards = vec![0u32; n * pending.len()];
        self.ctx.read_back(&mut [(&st, bytemuck::cast_slice_mut(&mut boards))])?;
        for (&(t, at), cells) in pending.iter().zip(boards.chunks(n)) {
            solved[t] = Some(self.check_solved(t, at, &mut trials[t], cells)?);
        }
        Ok(())
    }

    /// Trial `t`'s board `cells`, which the device stopped at 0 mismatches at iteration
    /// `at`, recounted and checked exactly; the trial is solved only then.
    fn check_solved(&self, t: usize, at: u32, tr: &mut Trial<()>, cells: &[u32]) -> Result<Board, GpuError> {
        let max_score = self.puzzle.max_score();
        let score = self.f1.score(cells);
        let b = Board { width: self.puzzle.width(), height: self.puzzle.height(), cells: self.f1.placements(cells) };
        if score != max_score || !verify::check(self.puzzle, &b).valid {
            return Err(GpuError::Device(format!(
                "the device stopped trial {t} as solved at iteration {at}, but its board scores {score} of {max_score} or fails the exact check"
            )));
        }
        tr.iterations = at as u64;
        tr.best_score = max_score;
        tr.solve(Mechanism::Map);
        Ok(b)
    }

    /// Lets a frozen trial go on (after the host wrote its new state): live, cold start.
    pub(super) fn resume(&self, t: usize) {
        self.resume_with(t, true);
    }

    /// Lets a frozen trial go on, its next assignments cold (`cold`) or warm from its duals
    /// (a trial the stepper paused at the end of a step).
    pub(super) fn resume_with(&self, t: usize, cold: bool) {
        let (ch, i) = self.chunk_of(t);
        let q = &self.ctx.queue;
        q.write_buffer(&ch.tstat, 4 * (i * TS as u64 + 3), bytemuck::bytes_of(&ST_LIVE));
        q.write_buffer(&ch.s.active, 4 * i, bytemuck::bytes_of(&1u32));
        q.write_buffer(&ch.cold, 4 * i, bytemuck::bytes_of(&u32::from(cold)));
    }

    /// The chunk that holds trial `t`, and `t`'s index in it.
    pub(super) fn chunk_of(&self, t: usize) -> (&super::Chunk, u64) {
        let ch = self.chunks.iter().find(|c| (c.first..c.first + c.trials).contains(&t)).expect("trial in a chunk");
        (ch, (t - ch.first) as u64)
    }
}

/// The host's side of the device loop, batch-wide: the trials' records and the loop's
/// scratch, kept from one read to the next (by a run, or by the stepper between steps).
pub(super) struct DeviceTrials {
    /// Each trial's record (counters, random stream), updated from the words of each read.
    pub(super) trials: Vec<Trial<()>>,
    /// A state for restarts.
    pub(super) x0: Vec<f32>,
    /// The per-trial words of the last read (`TS` a trial).
    pub(super) words: Vec<u32>,
    /// Per trial, the iteration of the last freeze handled (`u32::MAX`: none).
    pub(super) handled: Vec<u32>,
    /// The trials the device stopped as solved in the last read (trial, iteration).
    pending: Vec<(usize, u32)>,
    /// Per trial, its verified solution (in rate mode: since the last harvest).
    pub(super) solved: Vec<Option<Board>>,
}

/// A submission of the device loop in flight: its index, its iterations and its block.
pub(super) struct Piece {
    index: wgpu::SubmissionIndex,
    iterations: usize,
    block: usize,
}
