//! The F1 stepper on the device: the batch of [`F1Gpu`] advanced a few iterations at a time,
//! as the CPU driver's [`crate::f1::map::F1Map::step`] advances its own, every state staying
//! on the device between steps.
//!
//! It runs the device loop ([`F1Gpu::run_device`]'s blocks, the same loop body
//! `F1Gpu::take_words`): the assignments on the device, the per-trial words read once a block,
//! frozen trials restarted from their own random streams, every board the device stops as
//! solved checked exactly. A step pauses every trial at its target iteration through the
//! loop's budget (the `max_iters` word of `Track`, rewritten per step): the device freezes a
//! trial there as at the end of a run, and the next step lets it go on, its assignments warm,
//! so that stepping gives the run's iterates. Trials that stand at different iterations (a
//! cancelled step) are paused at their own targets in turn, the lowest first.

use super::buffers::{RING_WORDS, ST_CYCLE, ST_FAIL, ST_LIVE, ST_STALL, TS, TrackParams};
use super::device_loop::{DeviceTrials, Piece};
use super::{F1Gpu, K_ITERS};
use crate::backend::capability::{self, Feature, Place};
use crate::backend::gpu::context::GpuContext;
use crate::backend::gpu::pace::Pace;
use crate::backend::{EngineError, GpuError, MapJob, Unsupported};
use crate::batch::{Rounds, TrialSummary};
use crate::cancel::Cancel;
use crate::f1::map::MapConfig;
use crate::f1::project::F1;
use crate::puzzle::{Board, Puzzle};
use std::collections::VecDeque;
use std::sync::Arc;

/// A batch of F1 trials on the device, advanced by [`F1GpuStepper::step`]: the device twin of
/// the CPU driver's stepper (`F1Map::new`, `step`, `states`, `set_state`, `trial_summaries`,
/// `best_board`). The same seed gives the same starting iterates as the CPU driver, and the
/// same per-iteration rules (stall and cycle restarts from the trial's own stream, a solved
/// trial stands still after its board passed [`crate::verify::check`]); the iterates agree
/// with the CPU's within f32 rounding (`tests/gpu.rs`).
pub struct F1GpuStepper<'a> {
    g: F1Gpu<'a>,
    /// The trials' records and the loop's scratch.
    d: DeviceTrials,
    /// Per trial, whether it moves on the device (else it is paused, solved or frozen with a
    /// new state waiting for the next step).
    live: Vec<bool>,
    /// Per trial, whether its next assignments start cold when it is let go on (a restart
    /// at the end of a step, a state written while it was paused).
    cold: Vec<bool>,
    /// Per trial, the iteration the current step takes it to.
    target: Vec<u64>,
    /// The loop's `handled` words before the last read was taken (which freezes it handled).
    handled: Vec<u32>,
    pace: Pace,
    flight: VecDeque<Piece>,
    /// Blocks submitted so far (the index of the next).
    blocks: usize,
    /// The budget the device's `Track` holds now.
    limit_sent: u64,
}

impl<'a> F1GpuStepper<'a> {
    /// The batch of `cfg.trials` trials (at least one) on `ctx`, each at the random start the
    /// CPU driver gives it (`Trial::new(cfg.seed, t, ..)`, then `randomize`). `cfg.assign`
    /// `auto` resolves as on the GPU backend. Refused with the reason ([`Unsupported`]):
    /// what the GPU backend does not run (the capability table), and what runs only in its
    /// per-iteration loop (`--assign cpu`, `--complete`, `--reduced-costs f32`) or is no
    /// stepping (rate mode). As the CPU stepper, it has no clock and no stop rule: the time
    /// limit and `all_trials` of `cfg` are not used.
    pub fn new(ctx: Arc<GpuContext>, puzzle: &'a Puzzle, mut cfg: MapConfig) -> Result<Self, EngineError> {
        cfg.assign = capability::resolve_assign(cfg.assign, Place::Gpu, &cfg);
        supports(&cfg)?;
        cfg.run.time_limit = None;
        let g = F1Gpu::new(ctx, puzzle, cfg)?;
        let d = g.device_trials();
        let t_all = g.trials;
        Ok(F1GpuStepper {
            d,
            live: vec![true; t_all],
            cold: vec![false; t_all],
            target: vec![0; t_all],
            handled: vec![u32::MAX; t_all],
            pace: Pace::new(K_ITERS, None),
            flight: VecDeque::with_capacity(3),
            blocks: 0,
            limit_sent: g.cfg.run.max_iters,
            g,
        })
    }

    /// Advances every trial by `k` iterations (fewer at the budget `max_iters`); a solved
    /// trial stands still. False when `cancel` was tripped: the step then stopped within a
    /// piece of the device loop, and the trials may stand at different iterations (the next
    /// step takes each `k` further from where it stands), as the CPU driver's step.
    pub fn step(&mut self, k: u64, cancel: &Cancel) -> Result<bool, EngineError> {
        let max = self.g.cfg.run.max_iters;
        for (tg, tr) in self.target.iter_mut().zip(&self.d.trials) {
            *tg = tr.iterations.saturating_add(k).min(max);
        }
        let rounds = Rounds::start(cancel);
        self.pace.resume();
        // One pause per distinct target, the lowest first (one unless a step was cancelled).
        while let Some(limit) = self.next_limit() {
            if !self.advance(limit, &rounds)? {
                return Ok(false);
            }
        }
        Ok(!cancel.is_cancelled())
    }

    /// The lowest target of a trial still short of it.
    fn next_limit(&self) -> Option<u64> {
        let short =
            self.d.trials.iter().zip(&self.target).filter(|(tr, tg)| tr.solved_at.is_none() && tr.iterations < **tg);
        short.map(|(_, &tg)| tg).min()
    }

    /// Runs the device loop until every trial short of `limit` has reached it (or solved);
    /// false when the token stopped it.
    fn advance(&mut self, limit: u64, rounds: &Rounds) -> Result<bool, EngineError> {
        let g = &self.g;
        if limit != self.limit_sent {
            let mut track = TrackParams::new(g.puzzle, &g.cfg);
            track.max_iters = limit.min(u32::MAX as u64 - 1) as u32;
            g.ctx.queue.write_buffer(&g.track, 0, bytemuck::bytes_of(&track));
            self.limit_sent = limit;
        }
        for (t, tr) in self.d.trials.iter().enumerate() {
            if !self.live[t] && tr.solved_at.is_none() && tr.iterations < limit.min(self.target[t]) {
                g.resume_with(t, self.cold[t]);
                (self.live[t], self.cold[t]) = (true, false);
            }
        }
        loop {
            let trials = self.d.trials.iter().zip(&self.live);
            let need = trials
                .filter(|(tr, l)| **l && tr.solved_at.is_none())
                .map(|(tr, _)| limit.saturating_sub(tr.iterations))
                .max();
            let need = need.unwrap_or(0).min(K_ITERS as u64) as usize;
            if need == 0 {
                return Ok(true);
            }
            let block = self.blocks;
            self.blocks += 1;
            let slot = block % 2;
            let first = block == 0;
            let whole = g.submit_block(need, slot, first, block, &mut self.pace, &mut self.flight, rounds)?;
            if !whole {
                // Cut short: the words as the pieces sent left them.
                g.submit_iterations(0, Some(slot), false);
            }
            g.read_block(block, &mut self.d.words, &mut self.flight, &mut self.pace)?;
            self.flight.clear();
            self.handled.copy_from_slice(&self.d.handled);
            let before: u64 = self.d.trials.iter().map(|t| t.iterations).sum();
            g.take_words(&mut self.d, limit)?;
            // The words show the device as the last piece left it, every earlier resume
            // included; `take_status` has just restarted the trials frozen since, and let go
            // on those below `limit` (a restart at the pause stays frozen with its new state).
            for (t, tr) in self.d.trials.iter().enumerate() {
                let state = self.d.words[t * TS + 3];
                let restarted_now =
                    matches!(state, ST_STALL | ST_CYCLE | ST_FAIL) && self.d.handled[t] != self.handled[t];
                self.live[t] = state == ST_LIVE || (restarted_now && tr.iterations < limit);
                if restarted_now && tr.iterations >= limit {
                    self.cold[t] = true;
                }
            }
            // A whole block moves every trial let go on: a stepper that lost track of one
            // says so rather than waiting for it for ever.
            let after: u64 = self.d.trials.iter().map(|t| t.iterations).sum();
            if whole && after == before && self.handled == self.d.handled {
                return Err(GpuError::Device(format!(
                    "the device stepper sent {need} iterations to pause at {limit} and no trial moved"
                ))
                .into());
            }
            if !whole {
                return Ok(false);
            }
        }
    }

    /// Every trial's iterate, trial-major (`trials * dim` floats, [`F1::dim`] each), read
    /// back from the device.
    pub fn read_state(&self) -> Result<Vec<f32>, GpuError> {
        self.g.read_state()
    }

    /// Puts trial `t` at the state `x` ([`F1::dim`] floats), as the CPU driver's `set_state`
    /// does: its next assignments start cold and its cycle memory is cleared; its counters
    /// and best board stay (a solved trial stays solved). An error when `x` is not `dim`
    /// long or `t` is past the trials.
    pub fn write_state(&mut self, t: usize, x: &[f32]) -> Result<(), GpuError> {
        let dim = self.g.dim;
        if x.len() != dim || t >= self.g.trials {
            return Err(GpuError::Misuse(format!(
                "a state of {} floats for trial {t}; the batch has {} trials of {dim}",
                x.len(),
                self.g.trials
            )));
        }
        self.g.write_state(t, x);
        let (ch, i) = self.g.chunk_of(t);
        let q = &self.g.ctx.queue;
        q.write_buffer(&ch.ring, 4 * i * RING_WORDS as u64, bytemuck::cast_slice(&[0u32; RING_WORDS]));
        if self.live[t] {
            q.write_buffer(&ch.cold, 4 * i, bytemuck::bytes_of(&1u32));
        } else {
            self.cold[t] = true;
        }
        Ok(())
    }

    /// What each trial has done so far, as a run's result reports it.
    pub fn trial_summaries(&self) -> Vec<TrialSummary> {
        self.d.trials.iter().map(|t| t.summary()).collect()
    }

    /// Every trial's best board so far (its solution once solved), read back from the device.
    pub fn best_boards(&self) -> Result<Vec<Board>, GpuError> {
        let n = self.g.puzzle.cells();
        let best: Vec<u32> = self.g.read_per_trial(n, |c| &c.bestb)?;
        let (w, h) = (self.g.puzzle.width(), self.g.puzzle.height());
        Ok(best.chunks(n).map(|b| Board { width: w, height: h, cells: self.g.f1.placements(b) }).collect())
    }

    /// Trial `t`'s best board so far (its solution once solved).
    pub fn best_board(&self, t: usize) -> Result<Board, GpuError> {
        if let Some(b) = self.d.solved.get(t).and_then(Option::clone) {
            return Ok(b);
        }
        let mut all = self.best_boards()?;
        if t >= all.len() {
            return Err(GpuError::Misuse(format!("trial {t} is past the {} trials", all.len())));
        }
        Ok(all.swap_remove(t))
    }

    /// The projections' tables the batch was built from.
    pub fn f1(&self) -> &F1 {
        self.g.f1()
    }

    /// The batch's configuration (`assign` resolved, no time limit).
    pub fn config(&self) -> &MapConfig {
        &self.g.cfg
    }

    /// Trials of the batch.
    pub fn trials(&self) -> usize {
        self.g.trials
    }
}

/// Whether the device stepper runs a batch of `cfg` (with `assign` resolved): what the GPU
/// backend runs ([`super::supports`]) and what the capability table's stepper column allows
/// (the device loop, on one device, without rate mode); the refusal says why in the
/// stepper's words.
pub(crate) fn supports(cfg: &MapConfig) -> Result<(), Unsupported> {
    super::supports(cfg)?;
    let needs = capability::needs(MapJob::F1(cfg), cfg.assign, 1);
    let Err(u) = capability::check(Place::GpuStepper, &needs) else { return Ok(()) };
    Err(match u.feature {
        Feature::RateMode => refusal(Feature::RateMode, "a stepper's solved trial stands still"),
        f => refusal(
            f,
            "the device stepper runs the device loop (--assign gpu-jv, gpu-jv-sg, gpu-jv-sg-staged or gpu-auction, without --complete); the cpu stepper runs it",
        ),
    })
}

fn refusal(f: Feature, why: &str) -> Unsupported {
    Unsupported { backend: Place::Gpu.name(), why: format!("{} does not step here: {why}", f.asked_by()), feature: f }
}
