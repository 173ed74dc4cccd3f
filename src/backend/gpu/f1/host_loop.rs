//! The per-iteration loop of F1 on the device (`--assign cpu`, and `--complete`): one host
//! round trip per iteration, the assignments on the host (rayon over trials) from the weights
//! read back, or the host-driven device auction.

use super::{F1Gpu, Kernel, randomize};
use crate::backend::gpu::chunks;
use crate::backend::gpu::context::{dispatch, grid};
use crate::backend::gpu::timing::Passes;
use crate::backend::{EngineError, GpuError};
use crate::batch::Trial;
use crate::batch::{MapKind, MapResult, Mechanism, Progress, ROUND, Rounds};
use crate::f1::project::Assigners;
use crate::puzzle::Board;
use crate::search::backtrack::Backtracker;
use crate::verify;
use rayon::prelude::*;

impl F1Gpu<'_> {
    /// The passes after the CPU assignment, up to the next weights, plus the copies of
    /// what the host reads (weights, boards, mismatch counts).
    fn encode_iteration(&self, p: &mut Passes, on_device: bool) {
        let dm = self.cfg.kind == MapKind::Dm;
        for ch in &self.chunks {
            let tc = ch.trials as u64;
            if let (true, Some(d)) = (on_device, &ch.dev) {
                d.main.encode_select(p);
                if let Some(pl) = &d.plain {
                    pl.encode_select(p);
                }
            }
            if dm {
                self.encode(p, ch, Kernel::Mix);
                p.dispatch("edges", &self.pipes.edges, &ch.bg_edges_tmp, grid(tc * self.dim as u64));
            }
            self.encode(p, ch, Kernel::Update);
            self.encode(p, ch, Kernel::Score);
            self.encode_weights(p, ch, ch.dev.is_none());
            p.enc.copy_buffer_to_buffer(&ch.s.viol, 0, &ch.st_viol, 0, 4 * tc);
            p.enc.copy_buffer_to_buffer(&ch.s.board, 0, &ch.st_board, 0, 4 * tc * self.puzzle.cells() as u64);
        }
    }

    /// Reads the staged weights (and with `status` the mismatch counts and boards) of every
    /// chunk into the host arrays.
    fn read_staged(
        &self,
        w: &mut [f32],
        w2: &mut [f32],
        status: Option<(&mut [u32], &mut [u32])>,
    ) -> Result<(), GpuError> {
        let (n, wt) = (self.puzzle.cells(), self.wtot);
        let dm = self.cfg.kind == MapKind::Dm;
        let with_status = status.is_some();
        let (mut viol, mut boards) = match status {
            Some((v, b)) => (Some(v), Some(b)),
            None => (None, None),
        };
        for ch in &self.chunks {
            let (lo, hi) = (ch.first, ch.first + ch.trials);
            let mut reads: Vec<(&wgpu::Buffer, &mut [u8])> = Vec::new();
            if !with_status || ch.dev.is_none() {
                reads.push((&ch.st_w, bytemuck::cast_slice_mut(&mut w[lo * wt..hi * wt])));
            }
            if dm && (!with_status || ch.dev.is_none()) {
                reads.push((&ch.st_w2, bytemuck::cast_slice_mut(&mut w2[lo * wt..hi * wt])));
            }
            if let (Some(v), Some(b)) = (viol.as_deref_mut(), boards.as_deref_mut()) {
                reads.push((&ch.st_viol, bytemuck::cast_slice_mut(&mut v[lo..hi])));
                reads.push((&ch.st_board, bytemuck::cast_slice_mut(&mut b[lo * n..hi * n])));
            }
            self.ctx.read_back(&mut reads)?;
        }
        Ok(())
    }

    /// Reads the staged mismatch counts of every chunk.
    fn read_violations_into(&self, viol: &mut [u32]) -> Result<(), GpuError> {
        for ch in &self.chunks {
            let (lo, hi) = (ch.first, ch.first + ch.trials);
            self.ctx.read_back(&mut [(&ch.st_viol, bytemuck::cast_slice_mut(&mut viol[lo..hi]))])?;
        }
        Ok(())
    }

    /// Reads the staged boards of the chunks holding a trial marked in `want`.
    fn read_boards_where(&self, want: &[bool], boards: &mut [u32]) -> Result<(), GpuError> {
        let n = self.puzzle.cells();
        for ch in &self.chunks {
            let (lo, hi) = (ch.first, ch.first + ch.trials);
            if want[lo..hi].iter().any(|&w| w) {
                self.ctx.read_back(&mut [(&ch.st_board, bytemuck::cast_slice_mut(&mut boards[lo * n..hi * n]))])?;
            }
        }
        Ok(())
    }

    /// Recomputes `pe` and the weights of the current state and reads the weights.
    fn refresh(&self, w: &mut [f32], w2: &mut [f32]) -> Result<(), GpuError> {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        let mut p = Passes::new(&mut enc);
        for ch in &self.chunks {
            self.encode_weights(&mut p, ch, true);
        }
        self.ctx.queue.submit([enc.finish()]);
        self.read_staged(w, w2, None)
    }

    /// Per-trial fingerprints of the state (for exact limit-cycle detection).
    fn fingerprints(&self) -> Result<Vec<u64>, GpuError> {
        chunks::fingerprints(
            &self.ctx,
            &self.chunks,
            |c| (&c.s.sums, &c.st_sums),
            |enc, ch| dispatch(enc, &self.pipes.hash, &ch.bg_hash, grid((ch.trials * self.dim) as u64)),
        )
    }

    /// The per-iteration loop: one host round trip per iteration.
    pub(super) fn run_host(&mut self, progress: &mut dyn FnMut(&Progress)) -> Result<MapResult, EngineError> {
        let cfg = self.cfg.clone();
        let rounds = Rounds::start(&cfg.run.cancel);
        let (mut trials, x0) = self.start_trials(|| self.f1.assigners_in(cfg.reduced_costs));
        let mut h = HostLoop::new(self, x0);
        self.refresh(&mut h.w, &mut h.w2)?;
        let mut completion = chunks::completion_search(self.puzzle, cfg.complete.as_ref());
        loop {
            for _ in 0..ROUND {
                // Every iteration is a host round trip: the time and the token are checked
                // before each, so a slow device stops within an iteration of them.
                if rounds.out_of_time(cfg.run.time_limit)
                    || self.host_iteration(&mut trials, &mut h, &mut completion)?
                {
                    break;
                }
            }
            if !cfg.no_cycle_restart {
                self.cycle_restarts(&mut trials, &mut h)?;
            }
            let done = rounds.after_round(
                &trials,
                !cfg.all_trials,
                cfg.run.max_iters,
                cfg.run.time_limit,
                &mut &mut *progress,
            );
            if self.stops(&trials, done) {
                break;
            }
        }
        let f1 = &self.f1;
        Ok(chunks::result(self.puzzle, &trials, &h.best, |b| f1.placements(b), rounds.elapsed_s()))
    }

    /// One iteration of the per-iteration loop: 1. the assignments, 2. the device passes
    /// (one submission), 3. the read-back, taken into the trials. True when the round ends
    /// early: no trial is active, or one solved and the run stops at the first.
    fn host_iteration(
        &self,
        trials: &mut [Trial<Assigners>],
        h: &mut HostLoop,
        completion: &mut Option<Backtracker<'_>>,
    ) -> Result<bool, EngineError> {
        let cfg = &self.cfg;
        // 1. The assignments: on the device (`--assign gpu`), or on the CPU from the
        // weights read back, also when the device left a problem unsolved.
        let on_device = self.device_assign(!cfg.cold_assign)?;
        if !on_device && !self.assign_on_host(trials, h)? {
            return Ok(false);
        }
        for (a, tr) in h.active.iter_mut().zip(trials.iter()) {
            *a = tr.is_active(cfg.run.max_iters) as u32;
        }
        if h.active.iter().all(|&a| a == 0) {
            return Ok(true);
        }
        // 2. The device passes, one submission; 3. read back.
        if h.active != h.active_sent {
            self.write_active(&h.active);
            h.active_sent.clone_from(&h.active);
        }
        if !on_device {
            self.write_sel(&h.sel, false);
            if cfg.kind == MapKind::Dm {
                self.write_sel(&h.sel2, true);
            }
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        self.encode_iteration(&mut Passes::new(&mut enc), on_device);
        self.ctx.queue.submit([enc.finish()]);
        self.read_iteration(trials, h, on_device)?;
        if self.take_iteration(trials, h, completion)? {
            // The weights read back were of the old states.
            self.refresh(&mut h.w, &mut h.w2)?;
        }
        Ok(!cfg.all_trials && trials.iter().any(|t| t.solved_at.is_some()))
    }

    /// The assignments on the CPU (rayon over trials) from the weights read back, into
    /// `sel` (and `sel2`). False when one failed: those trials restarted (non-finite
    /// weights cannot come from finite states; a defensive restart) and the iteration is
    /// to be tried again.
    fn assign_on_host(&self, trials: &mut [Trial<Assigners>], h: &mut HostLoop) -> Result<bool, GpuError> {
        if self.chunks.iter().any(|c| c.dev.is_some()) {
            self.refresh(&mut h.w, &mut h.w2)?;
        }
        let (n, wt, f1, cfg) = (self.puzzle.cells(), self.wtot, &self.f1, &self.cfg);
        let dm = cfg.kind == MapKind::Dm;
        let per = crate::batch::chunk_size(self.trials);
        let w2 = &h.w2;
        let failed: Vec<usize> = trials
            .par_chunks_mut(per)
            .zip(h.sel.par_chunks_mut(per * n))
            .zip(h.sel2.par_chunks_mut(per * n))
            .zip(h.w.par_chunks(per * wt))
            .enumerate()
            .flat_map_iter(|(ci, (((trs, sels), sels2), ws))| {
                let mut bad = Vec::new();
                let rows = trs.iter_mut().zip(sels.chunks_mut(n)).zip(sels2.chunks_mut(n)).zip(ws.chunks(wt));
                for (i, (((tr, s), s2), wv)) in rows.enumerate() {
                    if !tr.is_active(cfg.run.max_iters) {
                        continue;
                    }
                    let t = ci * per + i;
                    let ok = if dm {
                        // P_P(y) first, as on the CPU (its duals warm the second solve).
                        f1.assign_entries(&w2[t * wt..(t + 1) * wt], &mut tr.extra, s2, tr.warm)
                            .and_then(|()| f1.assign_entries(wv, &mut tr.extra, s, tr.warm))
                    } else {
                        f1.assign_entries(wv, &mut tr.extra, s, tr.warm)
                    };
                    if ok.is_err() {
                        bad.push(t);
                    }
                }
                bad
            })
            .collect();
        if failed.is_empty() {
            return Ok(true);
        }
        for &t in &failed {
            trials[t].iterations += 1;
            self.restart(t, &mut trials[t], &mut h.x0);
        }
        self.refresh(&mut h.w, &mut h.w2)?;
        Ok(false)
    }

    /// Reads the iteration back. With the device assignment only the mismatch counts come up
    /// every iteration, and the boards of a chunk only when one of its trials improves (each
    /// board that comes up is recounted exactly on the CPU); else every board comes up, with
    /// the weights of the next iteration.
    fn read_iteration(&self, trials: &[Trial<Assigners>], h: &mut HostLoop, on_device: bool) -> Result<(), GpuError> {
        if !on_device {
            self.read_staged(&mut h.w, &mut h.w2, Some((&mut h.viol, &mut h.boards)))?;
            h.fresh.iter_mut().for_each(|f| *f = true);
            return Ok(());
        }
        let max_score = self.puzzle.max_score();
        self.read_violations_into(&mut h.viol)?;
        for (t, tr) in trials.iter().enumerate() {
            h.fresh[t] = h.active[t] != 0
                && (tr.iterations == 0 || max_score - (h.viol[t] as usize).min(max_score) > tr.best_score);
        }
        self.read_boards_where(&h.fresh, &mut h.boards)
    }

    /// Takes the boards read back into the active trials: the exact recount against the
    /// device's, the best board, a solve (after the exact check), a stall restart or the
    /// completion search. True when a stall restart rewrote a state.
    fn take_iteration(
        &self,
        trials: &mut [Trial<Assigners>],
        h: &mut HostLoop,
        completion: &mut Option<Backtracker<'_>>,
    ) -> Result<bool, EngineError> {
        let (n, max_score, cfg, f1) = (self.puzzle.cells(), self.puzzle.max_score(), &self.cfg, &self.f1);
        let mut stall_restarted = false;
        for (t, tr) in trials.iter_mut().enumerate() {
            if h.active[t] == 0 {
                continue;
            }
            tr.iterations += 1;
            tr.warm = !cfg.cold_assign;
            let board = &h.boards[t * n..(t + 1) * n];
            let score = if h.fresh[t] { f1.score(board) } else { max_score - h.viol[t] as usize };
            if h.fresh[t] && score + h.viol[t] as usize != max_score {
                return Err(GpuError::Device(format!(
                    "the device counted {} mismatched joins on trial {t}, the CPU {}",
                    h.viol[t],
                    max_score - score
                ))
                .into());
            }
            let improved = score > tr.best_score || tr.iterations == 1;
            if improved {
                tr.best_score = score;
                h.best[t * n..(t + 1) * n].copy_from_slice(board);
            }
            if score == max_score {
                let b = Board { width: self.puzzle.width(), height: self.puzzle.height(), cells: f1.placements(board) };
                if verify::check(self.puzzle, &b).valid {
                    tr.solve(Mechanism::Map);
                }
            } else if cfg.restart_stall.is_some_and(|l| tr.stalled(score, l)) {
                randomize(&mut h.x0, &mut tr.rng);
                self.write_state(t, &h.x0);
                tr.warm = false;
                stall_restarted = true;
            } else if let (Some(comp), Some(bt)) = (&cfg.complete, completion.as_mut()) {
                let best = &mut h.best[t * n..(t + 1) * n];
                let (place, id) = (|b: &[u32]| f1.placements(b), |c, pl| f1.candidate_id(c, pl));
                tr.complete(comp, bt, self.puzzle, improved, score, best, place, id);
            }
        }
        Ok(stall_restarted)
    }

    /// At the end of a round: restarts the active trials whose state's fingerprint came
    /// round again (exact limit cycles).
    fn cycle_restarts(&self, trials: &mut [Trial<Assigners>], h: &mut HostLoop) -> Result<(), GpuError> {
        let hashes = self.fingerprints()?;
        let mut restarted = false;
        for (t, tr) in trials.iter_mut().enumerate() {
            if !tr.is_active(self.cfg.run.max_iters) || tr.iterations % ROUND != 0 {
                continue;
            }
            if tr.in_cycle(hashes[t]) {
                self.restart(t, tr, &mut h.x0);
                restarted = true;
            }
        }
        if restarted {
            self.refresh(&mut h.w, &mut h.w2)?;
        }
        Ok(())
    }

    /// Runs the device auction of every chunk (the difference map's `P_P(y)` first); false
    /// when there is none (`--assign cpu`) or a problem was left for the host.
    fn device_assign(&self, warm: bool) -> Result<bool, GpuError> {
        let mut all = !self.chunks.is_empty();
        for ch in &self.chunks {
            let Some(d) = &ch.dev else { return Ok(false) };
            if let Some(p) = &d.plain {
                all &= p.run(warm)?;
            }
            all &= d.main.run(warm)?;
        }
        Ok(all)
    }
}

/// The host arrays of the per-iteration loop ([`F1Gpu::run_host`]), batch-wide.
struct HostLoop {
    /// The weights read back (and of `x` itself for the difference map).
    w: Vec<f32>,
    w2: Vec<f32>,
    /// The assignments of the CPU, per cell the chosen entry.
    sel: Vec<u32>,
    sel2: Vec<u32>,
    /// Mismatch counts and boards read back, and the best board of each trial.
    viol: Vec<u32>,
    boards: Vec<u32>,
    best: Vec<u32>,
    /// Which trials run this iteration.
    active: Vec<u32>,
    /// Whether a trial's board of this iteration came up (see `F1Gpu::read_iteration`).
    fresh: Vec<bool>,
    /// What the device holds (all live at creation); rewritten only when a trial stops.
    active_sent: Vec<u32>,
    /// A state for restarts.
    x0: Vec<f32>,
}

impl HostLoop {
    fn new(g: &F1Gpu, x0: Vec<f32>) -> Self {
        let (t_all, n, wt) = (g.trials, g.puzzle.cells(), g.wtot);
        let dm = g.cfg.kind == MapKind::Dm;
        let active = vec![1u32; t_all];
        HostLoop {
            w: vec![0.0f32; t_all * wt],
            w2: vec![0.0f32; if dm { t_all * wt } else { 0 }],
            sel: vec![0u32; t_all * n],
            sel2: vec![0u32; t_all * n],
            viol: vec![0u32; t_all],
            boards: vec![0u32; t_all * n],
            best: vec![0u32; t_all * n],
            active_sent: active.clone(),
            active,
            fresh: vec![true; t_all],
            x0,
        }
    }
}
