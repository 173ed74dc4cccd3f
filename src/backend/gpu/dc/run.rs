//! The run of a batch ([`DcGpu::run`]): the starts on the host, one submission per
//! iteration with two words per trial read back, the boards of improved trials read and
//! rescored, the completion search, the assignment readout once per round, cycle restarts.

use super::DcGpu;
use super::buffers::Chunk;
use crate::assign::Assigner;
use crate::backend::gpu::chunks;
use crate::backend::{EngineError, GpuError};
use crate::batch::Trial;
use crate::batch::{Completion, MapResult, Mechanism, Progress, ROUND, Rounds};
use crate::dc::{DivideScratch, Layout, project};
use crate::puzzle::Board;
use crate::search::backtrack::Backtracker;
use crate::verify;
use rand::RngExt;
use rayon::prelude::*;

impl DcGpu<'_> {
    /// Copies the boards of `which` trials up (one copy per trial into the staging buffer).
    fn read_boards(&self, which: &[usize], out: &mut [u32]) -> Result<(), GpuError> {
        let n = self.layout.cells();
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for &t in which {
            let ch = self.chunk_of(t);
            let off = (4 * (t - ch.first) * n) as u64;
            enc.copy_buffer_to_buffer(&ch.s.board, off, &ch.st_board, off, 4 * n as u64);
        }
        self.ctx.queue.submit([enc.finish()]);
        for ch in &self.chunks {
            if !which.iter().any(|&t| t >= ch.first && t < ch.first + ch.trials) {
                continue;
            }
            let dst = &mut out[ch.first * n..(ch.first + ch.trials) * n];
            self.ctx.read_back(&mut [(&ch.st_board, bytemuck::cast_slice_mut(dst))])?;
        }
        Ok(())
    }

    fn chunk_of(&self, t: usize) -> &Chunk {
        let i = self.chunks.partition_point(|c| c.first + c.trials <= t);
        &self.chunks[i]
    }

    /// A fresh start for a trial: random slot values, unit weights, `P_b(x)` (on the CPU).
    fn start(
        &self,
        tr: &mut DcTrial,
        x: &mut [f32],
        chosen: &mut [u32],
        div: &mut DivideScratch,
    ) -> Result<(), EngineError> {
        x.iter_mut().for_each(|v| *v = tr.rng.random::<f32>());
        project::divide(&self.layout, x, chosen, div, &mut [], false)?;
        Ok(())
    }

    /// Runs the batch (same stop rules and result as [`crate::dc::DcMap::run`]).
    pub fn run(&mut self, progress: &mut dyn FnMut(&Progress)) -> Result<MapResult, EngineError> {
        let cfg = self.cfg.clone();
        let rounds = Rounds::start(&cfg.run.cancel);
        let l = &self.layout;
        let mut trials: Vec<DcTrial> = (0..self.trials)
            .map(|t| Trial::new(cfg.run.seed, t, DcExtra { asg_read: l.assigners(), permutation: false }))
            .collect();
        let mut best = vec![0u32; self.trials * l.cells()];
        self.start_all(&mut trials, &mut best)?;
        let mut completion = chunks::completion_search(self.puzzle, cfg.complete.as_ref());
        let mut h = DcLoop::new(l, self.trials);
        loop {
            for _ in 0..ROUND {
                // One round trip an iteration: the time and the token are checked before each.
                if rounds.out_of_time(cfg.run.time_limit)
                    || self.iteration(&mut trials, &mut best, &mut h, &mut completion)?
                {
                    break;
                }
            }
            self.assignment_readout(&mut trials, &mut best)?;
            if !cfg.no_cycle_restart {
                self.cycle_restarts(&mut trials, &mut h)?;
            }
            if rounds.after_round(&trials, !cfg.all_trials, cfg.run.max_iters, cfg.run.time_limit, &mut &mut *progress)
            {
                break;
            }
        }
        Ok(chunks::result(self.puzzle, &trials, &best, |b| l.placements(b), rounds.elapsed_s()))
    }

    /// The starts of every trial, on all cores, a block of trials at a time (host memory
    /// stays bounded), with the assignment readout of each start as its first best board.
    fn start_all(&self, trials: &mut [DcTrial], best: &mut [u32]) -> Result<(), EngineError> {
        let l = &self.layout;
        let (t_all, s, nc, n, v) = (self.trials, l.slots(), l.choices(), l.cells(), l.vars());
        const BLOCK: usize = 256;
        let mut xs = vec![0.0f32; BLOCK.min(t_all) * s];
        let mut chs = vec![0u32; BLOCK.min(t_all) * nc];
        for b0 in (0..t_all).step_by(BLOCK) {
            let b1 = (b0 + BLOCK).min(t_all);
            trials[b0..b1]
                .par_iter_mut()
                .zip(xs.par_chunks_mut(s))
                .zip(chs.par_chunks_mut(nc))
                .zip(best[b0 * n..b1 * n].par_chunks_mut(n))
                .try_for_each_init(
                    || (DivideScratch::new(l), l.assign_scratch()),
                    |(div, scratch), (((tr, x), ch), b)| -> Result<(), EngineError> {
                        self.start(tr, x, ch, div)?;
                        // The first best board: the assignment readout of the start.
                        l.assign(&x[..v], scratch, &mut tr.extra.asg_read, false, b)?;
                        tr.best_score = l.score(b);
                        Ok(())
                    },
                )?;
            let k = b1 - b0;
            // The weights start at 1 on the device.
            self.write_state(b0, &xs[..k * s], &chs[..k * nc], &[]);
        }
        Ok(())
    }

    /// One iteration of every live trial: one submission, the per-trial status read back,
    /// the boards of the trials that improved (rescored and checked), the completion search.
    /// True when the round ends early: no trial is live, or one solved and the run stops at
    /// the first.
    fn iteration(
        &self,
        trials: &mut [DcTrial],
        best: &mut [u32],
        h: &mut DcLoop,
        completion: &mut Option<Backtracker<'_>>,
    ) -> Result<bool, EngineError> {
        let cfg = &self.cfg;
        for (a, tr) in h.live.iter_mut().zip(trials.iter()) {
            *a = tr.is_active(cfg.run.max_iters) as u32;
        }
        if h.live.iter().all(|&a| a == 0) {
            return Ok(true);
        }
        if h.live != h.live_sent {
            self.write_live(&h.live);
            h.live_sent.clone_from(&h.live);
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        for c in &self.chunks {
            self.encode_iteration(&mut enc, c);
            enc.copy_buffer_to_buffer(&c.s.status, 0, &c.st_status, 0, 8 * c.trials as u64);
        }
        self.ctx.queue.submit([enc.finish()]);
        for c in &self.chunks {
            let r = 2 * c.first..2 * (c.first + c.trials);
            self.ctx.read_back(&mut [(&c.st_status, bytemuck::cast_slice_mut(&mut h.status[r]))])?;
        }
        self.take_status(trials, h);
        if !h.want.is_empty() {
            self.take_boards(trials, best, h)?;
        }
        if let (Some(comp), Some(bt)) = (&cfg.complete, completion.as_mut()) {
            self.complete(trials, best, h, comp, bt);
        }
        Ok(!cfg.all_trials && trials.iter().any(|t| t.solved_at.is_some()))
    }

    /// Counts the iteration of each live trial and notes in `want` those whose readout is a
    /// permutation that improves on their best (their boards come up).
    fn take_status(&self, trials: &mut [DcTrial], h: &mut DcLoop) {
        let max_score = self.puzzle.max_score();
        h.want.clear();
        for (t, tr) in trials.iter_mut().enumerate() {
            if h.live[t] == 0 {
                continue;
            }
            tr.iterations += 1;
            tr.warm = true;
            let (bad, extra) = (h.status[2 * t] as usize, h.status[2 * t + 1]);
            tr.extra.permutation = extra == 0;
            if extra == 0 && max_score - bad.min(max_score) > tr.best_score {
                h.want.push(t);
            }
        }
    }

    /// Reads the boards of the trials in `want`, rescores each exactly against the device's
    /// count, keeps it as the trial's best and solves the trial when it passes the exact check.
    fn take_boards(&self, trials: &mut [DcTrial], best: &mut [u32], h: &mut DcLoop) -> Result<(), EngineError> {
        let (n, max_score, l) = (self.layout.cells(), self.puzzle.max_score(), &self.layout);
        self.read_boards(&h.want, &mut h.boards)?;
        for &t in &h.want {
            let board = &h.boards[t * n..(t + 1) * n];
            let score = l.score(board);
            if score + h.status[2 * t] as usize != max_score {
                return Err(GpuError::Device(format!(
                    "the device counted {} mismatched joins on trial {t}, the CPU {}",
                    h.status[2 * t],
                    max_score - score
                ))
                .into());
            }
            let tr = &mut trials[t];
            tr.best_score = score;
            best[t * n..(t + 1) * n].copy_from_slice(board);
            if score == max_score && self.is_solution(board) {
                tr.solve(Mechanism::Map);
            }
        }
        Ok(())
    }

    /// The completion search of every live unsolved trial, from its best board.
    fn complete(
        &self,
        trials: &mut [DcTrial],
        best: &mut [u32],
        h: &DcLoop,
        comp: &Completion,
        bt: &mut Backtracker<'_>,
    ) {
        let (n, l) = (self.layout.cells(), &self.layout);
        for (t, tr) in trials.iter_mut().enumerate() {
            if h.live[t] == 1 && tr.solved_at.is_none() {
                let improved = h.want.binary_search(&t).is_ok();
                let (place, id) = (|b: &[u32]| l.placements(b), |c, pl| l.variable_of(c, pl));
                let score = tr.best_score;
                tr.complete(comp, bt, self.puzzle, improved, score, &mut best[t * n..(t + 1) * n], place, id);
            }
        }
    }

    /// The assignment readout of the round's last concur point, for trials whose argmax
    /// board was not a permutation (as the CPU backend does).
    fn assignment_readout(&self, trials: &mut [DcTrial], best: &mut [u32]) -> Result<(), EngineError> {
        let (l, max_iters, max_score) = (&self.layout, self.cfg.run.max_iters, self.puzzle.max_score());
        let (n, v) = (l.cells(), l.vars());
        let need: Vec<usize> =
            (0..self.trials).filter(|&t| trials[t].is_active(max_iters) && !trials[t].extra.permutation).collect();
        if need.is_empty() {
            return Ok(());
        }
        let (m, _) = self.read_concur()?;
        let read: Vec<(usize, usize, Vec<u32>)> = trials
            .par_iter_mut()
            .enumerate()
            .filter(|(t, _)| need.binary_search(t).is_ok())
            .map_init(
                || (l.assign_scratch(), vec![0u32; n]),
                |(scr, b), (t, tr)| {
                    let ok = l.assign(&m[t * v..(t + 1) * v], scr, &mut tr.extra.asg_read, tr.warm, b).is_ok();
                    let score = if ok { l.score(b) } else { 0 };
                    (t, score, b.clone())
                },
            )
            .collect();
        for (t, score, b) in read {
            if score > trials[t].best_score {
                trials[t].best_score = score;
                best[t * n..(t + 1) * n].copy_from_slice(&b);
                if score == max_score && self.is_solution(&b) {
                    trials[t].solve(Mechanism::Map);
                }
            }
        }
        Ok(())
    }

    /// At the end of a round: restarts the active trials whose state's fingerprint came
    /// round again (exact limit cycles), weights back at 1.
    fn cycle_restarts(&self, trials: &mut [DcTrial], h: &mut DcLoop) -> Result<(), EngineError> {
        let hashes = self.fingerprints()?;
        for (t, tr) in trials.iter_mut().enumerate() {
            if !tr.is_active(self.cfg.run.max_iters) || !tr.iterations.is_multiple_of(ROUND) {
                continue;
            }
            if tr.in_cycle(hashes[t]) {
                tr.restarts += 1;
                tr.warm = false;
                self.start(tr, &mut h.x, &mut h.ch, &mut h.div)?;
                self.write_state(t, &h.x, &h.ch, &h.ones);
            }
        }
        Ok(())
    }

    fn is_solution(&self, board: &[u32]) -> bool {
        let b =
            Board { width: self.puzzle.width(), height: self.puzzle.height(), cells: self.layout.placements(board) };
        verify::check(self.puzzle, &b).valid
    }
}

/// What a divide-and-concur trial keeps besides the shared bookkeeping.
struct DcExtra {
    /// Solvers of the assignment readout.
    asg_read: Vec<Assigner>,
    /// Whether the last argmax readout was a permutation of the pieces.
    permutation: bool,
}

type DcTrial = Trial<DcExtra>;

/// The host arrays of [`DcGpu::run`], batch-wide, and the scratch of a restart.
struct DcLoop {
    /// Per trial: mismatched joins and pieces used more than once, as the device counted.
    status: Vec<u32>,
    /// Boards read back.
    boards: Vec<u32>,
    /// Which trials run, and what the device was last told.
    live: Vec<u32>,
    live_sent: Vec<u32>,
    /// The trials whose boards come up this iteration (ascending).
    want: Vec<usize>,
    /// A restart's state, chosen slots, unit weights and divide scratch.
    x: Vec<f32>,
    ch: Vec<u32>,
    ones: Vec<f32>,
    div: DivideScratch,
}

impl DcLoop {
    fn new(l: &Layout, t_all: usize) -> Self {
        DcLoop {
            status: vec![0u32; 2 * t_all],
            boards: vec![0u32; t_all * l.cells()],
            live: vec![1u32; t_all],
            live_sent: Vec::new(),
            want: Vec::new(),
            x: vec![0.0f32; l.slots()],
            ch: vec![0u32; l.choices()],
            ones: vec![1.0f32; l.constraints()],
            div: DivideScratch::new(l),
        }
    }
}
