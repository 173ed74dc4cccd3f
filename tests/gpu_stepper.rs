//! The F1 stepper on the device (`F1GpuStepper`) against the CPU driver's stepper
//! (`F1Map::step`) on the same seeds: the same starting iterates bit for bit; after each step
//! the same counters, best scores, restarts, solves and best boards exactly, and iterates
//! within f32 rounding (the device may fuse a multiply-add the host rounds twice; the
//! assignments, hence the boards, agree exactly on these short runs, as the device loop's do
//! in `tests/gpu.rs`). Stepping is the run: k then k is 2k bit for bit, and stepping to the
//! budget gives the device loop's run. Without an adapter these print SKIPPED and pass.
use crate::common::generated;
use crate::gpu::gpu;
use concur::backend::gpu::f1::{F1GpuStepper, K_ITERS};
use concur::batch::MapRun;
use concur::batch::{MapKind, TrialSummary};
use concur::f1::map::{AssignOn, F1Map, MapConfig};
use concur::puzzle::Puzzle;
use concur::{Cancel, backend::gpu::f1::F1Gpu};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Short runs on generated boards where the device loop keeps the CPU's trajectories, with
/// stall restarts that fire: (map, width, puzzle seed, stall limit).
fn cases() -> Vec<(MapKind, usize, u64, Option<u64>)> {
    vec![(MapKind::Rrr, 4, 31, Some(40)), (MapKind::Dm, 4, 22, Some(50)), (MapKind::Rrr, 5, 21, None)]
}

fn config(kind: MapKind, seed: u64, stall: Option<u64>, max_iters: u64) -> MapConfig {
    MapConfig {
        kind,
        all_trials: true,
        restart_stall: stall,
        run: MapRun { trials: 6, max_iters, seed, ..Default::default() },
        ..Default::default()
    }
}

fn key(s: &[TrialSummary]) -> Vec<(Option<u64>, u64, usize, u64, u64)> {
    s.iter().map(|t| (t.solved_at, t.iterations, t.best_score, t.restarts, t.stall_restarts)).collect()
}

/// The largest difference between two iterates, relative to 1 + the larger magnitude.
fn max_rel(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(&x, &y)| (x - y).abs() / (1.0 + x.abs().max(y.abs()))).fold(0.0, f32::max)
}

/// The device stepper and the CPU's agree: counters and boards exactly, iterates within `tol`.
fn agree(what: &str, g: &F1GpuStepper, c: &F1Map, p: &Puzzle, tol: f32) {
    assert_eq!(key(&g.trial_summaries()), key(&c.trial_summaries()), "{what}: counters");
    let boards = g.best_boards().unwrap();
    for (t, b) in boards.iter().enumerate() {
        assert_eq!(b, &c.best_board(t), "{what}: best board of trial {t}");
        if g.trial_summaries()[t].solved_at.is_some() {
            assert!(concur::verify::check(p, b).valid, "{what}: trial {t}'s solution");
        }
    }
    let d = max_rel(&g.read_state().unwrap(), c.states());
    assert!(d <= tol, "{what}: iterates differ by {d:e}");
}

#[test]
fn gpu_stepper_starts_from_the_cpu_steppers_iterates() {
    let Some(ctx) = gpu("gpu_stepper_starts_from_the_cpu_steppers_iterates") else { return };
    for (kind, w, seed, stall) in cases() {
        let (p, _) = generated(w, w, seed);
        let cfg = config(kind, seed, stall, 1000);
        let g = F1GpuStepper::new(ctx.clone(), &p, cfg.clone()).unwrap();
        let c = F1Map::new(&p, cfg).unwrap();
        assert_eq!(g.read_state().unwrap(), c.states(), "{kind:?} {w}x{w}: bit for bit");
        assert_eq!(key(&g.trial_summaries()), key(&c.trial_summaries()));
    }
}

#[test]
fn gpu_stepper_follows_the_cpu_stepper() {
    let Some(ctx) = gpu("gpu_stepper_follows_the_cpu_stepper") else { return };
    let cancel = Cancel::new();
    for (kind, w, seed, stall) in cases() {
        let (p, _) = generated(w, w, seed);
        // A budget that the steps reach inside a round, and steps that pause on and off
        // round boundaries (the cycle check) and past the budget.
        let cfg = config(kind, seed, stall, 250);
        let mut g = F1GpuStepper::new(ctx.clone(), &p, cfg.clone()).unwrap();
        let mut c = F1Map::new(&p, cfg).unwrap();
        let mut at = 0;
        for k in [1u64, 5, 58, 64, 100, 50] {
            assert!(g.step(k, &cancel).unwrap());
            assert!(c.step(k, &cancel));
            at += k;
            agree(&format!("{kind:?} {w}x{w} seed {seed} after {at}"), &g, &c, &p, 1e-4);
        }
        let s = g.trial_summaries();
        assert!(s.iter().all(|t| t.solved_at.is_some() || t.iterations == 250), "{kind:?}: the budget holds");
        if stall.is_some() {
            assert!(s.iter().any(|t| t.stall_restarts > 0), "{kind:?} {w}x{w}: a stall restart fired");
        }
    }
}

#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn gpu_stepper_k_then_k_is_2k_and_the_run() {
    let Some(ctx) = gpu("gpu_stepper_k_then_k_is_2k_and_the_run") else { return };
    let cancel = Cancel::new();
    for (kind, w, seed, stall) in cases() {
        let (p, _) = generated(w, w, seed);
        let cfg = config(kind, seed, stall, 300);
        let mut a = F1GpuStepper::new(ctx.clone(), &p, cfg.clone()).unwrap();
        let mut b = F1GpuStepper::new(ctx.clone(), &p, cfg.clone()).unwrap();
        for k in [37u64, 37, 100] {
            assert!(a.step(k, &cancel).unwrap());
        }
        assert!(b.step(74, &cancel).unwrap());
        assert!(b.step(100, &cancel).unwrap());
        let what = format!("{kind:?} {w}x{w}");
        assert_eq!(key(&a.trial_summaries()), key(&b.trial_summaries()), "{what}");
        assert_eq!(a.read_state().unwrap(), b.read_state().unwrap(), "{what}: bit for bit");
        assert_eq!(a.best_boards().unwrap(), b.best_boards().unwrap(), "{what}");
        // Stepping to the budget is the device loop's run.
        assert!(a.step(1000, &cancel).unwrap());
        let cfg_run = MapConfig { assign: AssignOn::GpuJv, ..cfg };
        let run = F1Gpu::new(ctx.clone(), &p, cfg_run).unwrap().run_device(K_ITERS, &mut |_| {}).unwrap();
        assert_eq!(key(&a.trial_summaries()), key(&run.trials), "{what}: the run");
    }
}

#[test]
fn gpu_stepper_set_state_then_step_is_the_cpus() {
    let Some(ctx) = gpu("gpu_stepper_set_state_then_step_is_the_cpus") else { return };
    let cancel = Cancel::new();
    for (kind, w, seed, stall) in cases() {
        let (p, _) = generated(w, w, seed);
        let cfg = config(kind, seed, stall, 400);
        let mut g = F1GpuStepper::new(ctx.clone(), &p, cfg.clone()).unwrap();
        let mut c = F1Map::new(&p, cfg).unwrap();
        let dim = c.f1().dim();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut x: Vec<f32> = (0..dim).map(|_| rng.random::<f32>()).collect();
        // Before any step, then in the middle of a round.
        g.write_state(2, &x).unwrap();
        c.set_state(2, &x);
        assert!(g.step(30, &cancel).unwrap());
        assert!(c.step(30, &cancel));
        x.iter_mut().for_each(|v| *v = rng.random::<f32>());
        g.write_state(4, &x).unwrap();
        c.set_state(4, &x);
        g.write_state(0, &x).unwrap();
        c.set_state(0, &x);
        assert!(g.step(70, &cancel).unwrap());
        assert!(c.step(70, &cancel));
        agree(&format!("{kind:?} {w}x{w} seed {seed}"), &g, &c, &p, 1e-4);
        assert!(g.write_state(0, &x[1..]).is_err(), "a state of the wrong length is refused");
    }
}

#[test]
fn gpu_stepper_stops_on_the_token_and_goes_on_from_where_each_trial_stands() {
    let Some(ctx) = gpu("gpu_stepper_stops_on_the_token_and_goes_on_from_where_each_trial_stands") else { return };
    let (p, _) = generated(5, 5, 21);
    let cfg = MapConfig { restart_stall: Some(20), ..config(MapKind::Rrr, 21, None, 1_000_000) };
    let mut g = F1GpuStepper::new(ctx.clone(), &p, cfg).unwrap();
    let tripped = Cancel::new();
    tripped.cancel();
    assert!(!g.step(500, &tripped).unwrap(), "a tripped token stops the step");
    // A token tripped while the step runs: the trials stop within a piece of the loop,
    // where each stands (stall restarts make them stand at different iterations).
    let cancel = Cancel::new();
    let stopper = {
        let c = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            c.cancel();
        })
    };
    assert!(!g.step(1_000_000, &cancel).unwrap());
    stopper.join().unwrap();
    let before: Vec<u64> = g.trial_summaries().iter().map(|t| t.iterations).collect();
    assert!(before.iter().all(|&b| b < 1_000_000), "{before:?}");
    assert!(g.step(37, &Cancel::new()).unwrap());
    for (t, (s, b)) in g.trial_summaries().iter().zip(before).enumerate() {
        assert!(s.solved_at.is_some() || s.iterations == b + 37, "trial {t}: {} after {b}", s.iterations);
    }
}

#[test]
fn gpu_stepper_refuses_what_it_does_not_run() {
    use concur::backend::capability::Feature;
    let Some(ctx) = gpu("gpu_stepper_refuses_what_it_does_not_run") else { return };
    let (p, _) = generated(4, 4, 31);
    let base = MapConfig { run: MapRun { trials: 2, ..Default::default() }, ..Default::default() };
    for (cfg, feature) in [
        (MapConfig { assign: AssignOn::Cpu, ..base.clone() }, Feature::HostAssign),
        (MapConfig { kick: Some(0.5), ..base.clone() }, Feature::Kick),
        (MapConfig { keep_going: true, ..base.clone() }, Feature::RateMode),
    ] {
        match F1GpuStepper::new(ctx.clone(), &p, cfg) {
            Err(concur::backend::EngineError::Unsupported(u)) => {
                assert_eq!(u.feature, feature, "{u}");
                eprintln!("{u}");
            }
            Err(e) => panic!("{feature:?}: {e}"),
            Ok(_) => panic!("{feature:?} was not refused"),
        }
    }
}
