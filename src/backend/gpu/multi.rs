//! One F1 batch on every GPU of a machine (`--adapter all`): the trials split into one
//! contiguous share per device, each share its own device loop on its own host thread, and
//! one result for the whole batch ([`MapResult::join`]) with the rate of each device.
//!
//! A share runs trials `first..first + n` of the run's seeded stream (`MapConfig::first_trial`),
//! so a trial starts, restarts and moves as it would in one batch on one device: the same
//! seeds give the same solved trials whatever the split (`tests/gpu.rs` checks it with two
//! devices opened on one adapter). A run that stops at the first solution stops every share
//! at its next round once one share has solved.

use super::GpuContext;
use super::f1::{F1Gpu, supports_on};
use crate::backend::EngineError;
use crate::batch::MapRun;
use crate::batch::{MapResult, Progress};
use crate::f1::map::MapConfig;
use crate::puzzle::Puzzle;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The shares of `trials` trials over `devices` devices: (first trial, trials), as even as
/// possible, the first ones one larger; a device gets no share when there are fewer trials.
pub fn shares(trials: usize, devices: usize) -> Vec<(usize, usize)> {
    let devices = devices.clamp(1, trials.max(1));
    let (base, extra) = (trials / devices, trials % devices);
    let mut first = 0;
    (0..devices)
        .map(|d| {
            let n = base + usize::from(d < extra);
            let s = (first, n);
            first += n;
            s
        })
        .collect()
}

/// What a share's thread reports as it goes, for the progress of the whole batch.
#[derive(Default)]
struct Heard {
    iterations: AtomicU64,
    trial_iterations: AtomicU64,
    best_score: AtomicUsize,
    solved_trials: AtomicUsize,
    solutions: AtomicUsize,
}

/// Runs an F1 batch split over `ctxs` (one share each); every reported solution has passed
/// the exact check on the host. `progress` hears the whole batch about every 200 ms.
pub fn solve_f1(
    ctxs: &[Arc<GpuContext>],
    puzzle: &Puzzle,
    cfg: &MapConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<MapResult, EngineError> {
    supports_on(cfg, ctxs.len())?;
    let split = shares(cfg.run.trials.max(1), ctxs.len());
    let stop = Arc::new(AtomicBool::new(false));
    let heard: Vec<Heard> = split.iter().map(|_| Heard::default()).collect();
    let start = Instant::now();
    let results: Vec<Result<MapResult, EngineError>> = std::thread::scope(|sc| {
        let handles: Vec<_> = split
            .iter()
            .zip(ctxs)
            .zip(&heard)
            .map(|((&(first, n), ctx), h)| {
                let stop = stop.clone();
                let c = MapConfig {
                    first_trial: cfg.first_trial + first,
                    run: MapRun { trials: n, ..cfg.run.clone() },
                    ..cfg.clone()
                };
                sc.spawn(move || {
                    let run = F1Gpu::new(ctx.clone(), puzzle, c).and_then(|mut g| {
                        g.share_stop(stop.clone());
                        g.run(&mut |p: &Progress| {
                            h.iterations.store(p.iterations, Ordering::Relaxed);
                            h.trial_iterations.store(p.trial_iterations, Ordering::Relaxed);
                            h.best_score.store(p.best_score, Ordering::Relaxed);
                            h.solved_trials.store(p.solved_trials, Ordering::Relaxed);
                            h.solutions.store(p.solutions, Ordering::Relaxed);
                        })
                    });
                    if run.is_err() {
                        // A share that fails stops the others: the batch reports the error.
                        stop.store(true, Ordering::Relaxed);
                    }
                    run
                })
            })
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(200));
            progress(&Progress {
                iterations: heard.iter().map(|h| h.iterations.load(Ordering::Relaxed)).max().unwrap_or(0),
                trial_iterations: heard.iter().map(|h| h.trial_iterations.load(Ordering::Relaxed)).sum(),
                best_score: heard.iter().map(|h| h.best_score.load(Ordering::Relaxed)).max().unwrap_or(0),
                solved_trials: heard.iter().map(|h| h.solved_trials.load(Ordering::Relaxed)).sum(),
                elapsed_s: start.elapsed().as_secs_f64(),
                solutions: heard.iter().map(|h| h.solutions.load(Ordering::Relaxed)).sum(),
            });
        }
        handles.into_iter().map(|h| h.join().expect("a share's thread")).collect()
    });
    let mut parts = Vec::with_capacity(split.len());
    for (r, ctx) in results.into_iter().zip(ctxs) {
        parts.push((ctx.adapter.to_string(), r?));
    }
    Ok(MapResult::join(parts).expect("at least one share"))
}

#[cfg(test)]
mod tests {
    use super::shares;

    #[test]
    fn shares_cover_the_batch_once_as_evenly_as_possible() {
        assert_eq!(shares(10, 3), vec![(0, 4), (4, 3), (7, 3)]);
        assert_eq!(shares(8, 2), vec![(0, 4), (4, 4)]);
        assert_eq!(shares(2, 8), vec![(0, 1), (1, 1)]);
        assert_eq!(shares(5, 1), vec![(0, 5)]);
        for (t, d) in [(1, 1), (7, 4), (4096, 8), (65_536, 3)] {
            let s = shares(t, d);
            assert_eq!(s.iter().map(|x| x.1).sum::<usize>(), t);
            assert!(s.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
            let (lo, hi) = (s.iter().map(|x| x.1).min().unwrap(), s.iter().map(|x| x.1).max().unwrap());
            assert!(hi - lo <= 1);
        }
    }
}
