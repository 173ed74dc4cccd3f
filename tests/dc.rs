//! Divide and concur (F2) on Brendan Owen's set 1 and generated boards, plus the measurement
//! harnesses behind the numbers in the issue note (ignored; run by hand, see each one).
use crate::common::{brendan, generated, puzzles};
use concur::batch::MapRun;
use concur::batch::{MapKind, MapResult};
use concur::dc::{self, DcConfig, DcLayout, Readout, Weights};
use concur::puzzle::Puzzle;
use concur::verify;

/// Every claimed solution, the first and each trial's best at a full score, verifies.
fn check_claims(p: &Puzzle, r: &MapResult) {
    if let Some((_, _, board)) = &r.solution {
        let v = verify::check(p, board);
        assert!(v.valid, "claimed solution rejected: {:?}", v.problems);
    }
    if r.best_score == r.max_score {
        assert!(verify::check(p, &r.best).valid);
    }
}

/// The best variant measured on set 1 5x5 and 6x4: RRR at beta 0.7, uniform weights, the
/// hybrid layout (one assignment constraint plus the joins), argmax readout.
fn best_variant() -> DcConfig {
    DcConfig {
        kind: MapKind::Rrr,
        beta: 0.7,
        weights: Weights::Uniform,
        layout: DcLayout::Hybrid,
        readout: Readout::Argmax,
        ..crate::common::dc_plain()
    }
}

#[test]
fn dc_solves_90_percent_of_32_trials_on_set_1_4x4() {
    let Some(dir) = puzzles("dc_solves_90_percent_of_32_trials_on_set_1_4x4") else { return };
    let p = brendan(&dir, 1, 4, 4);
    let cfg = DcConfig {
        all_trials: true,
        run: MapRun { trials: 32, max_iters: 5_000, seed: 11, ..Default::default() },
        ..best_variant()
    };
    let r = dc::solve(&p, cfg, |_| {}).unwrap();
    check_claims(&p, &r);
    let mut its: Vec<u64> = r.trials.iter().filter_map(|t| t.solved_at).collect();
    its.sort();
    eprintln!("dc set 1 4x4: {}/32 solved, median {:?} iterations", its.len(), its.get(its.len() / 2));
    assert!(its.len() >= 29, "only {}/32 trials solved within 5,000 iterations", its.len());
}

#[test]
fn hybrid_and_adaptive_variants_solve_a_generated_4x4() {
    let (p, _) = generated(4, 4, 21);
    for (weights, hybrid) in [(Weights::Adaptive, false), (Weights::Uniform, true), (Weights::Adaptive, true)] {
        for kind in [MapKind::Rrr, MapKind::Dm] {
            let cfg = DcConfig {
                kind,
                weights,
                layout: DcLayout::from_hybrid(hybrid),
                beta: 0.5,
                run: MapRun { trials: 8, max_iters: 5_000, seed: 4, ..Default::default() },
                ..crate::common::dc_plain()
            };
            let r = dc::solve(&p, cfg, |_| {}).unwrap();
            check_claims(&p, &r);
            assert!(r.solution.is_some(), "{kind:?} {weights:?} hybrid {hybrid} did not solve");
        }
    }
}

#[test]
fn argmax_readout_solves_and_the_best_board_is_a_permutation() {
    let (p, _) = generated(4, 3, 5);
    let cfg = DcConfig {
        readout: Readout::Argmax,
        all_trials: true,
        run: MapRun { trials: 4, max_iters: 5_000, seed: 2, ..Default::default() },
        ..best_variant()
    };
    let r = dc::solve(&p, cfg, |_| {}).unwrap();
    check_claims(&p, &r);
    assert!(r.solution.is_some());
    // The best board is always a real board (every piece once), whatever its score.
    let mut pieces: Vec<u16> = r.best.cells.iter().map(|pl| pl.piece).collect();
    pieces.sort();
    assert!(pieces.iter().enumerate().all(|(i, &q)| i == q as usize));
    assert_eq!(p.score(&r.best), r.best_score);
}

#[test]
fn hinted_cells_are_respected() {
    let (p, sol) = generated(5, 4, 8);
    // Pin two planted placements as hints: their cells get one candidate each.
    let hints: Vec<concur::puzzle::Hint> = [0usize, 7]
        .iter()
        .map(|&c| concur::puzzle::Hint { cell: c, piece: sol.cells[c].piece as usize, rot: sol.cells[c].rot })
        .collect();
    let p = Puzzle::new(p.width(), p.height(), p.pieces().to_vec(), hints).unwrap();
    for hybrid in [false, true] {
        let layout = dc::Layout::new(&p, DcLayout::from_hybrid(hybrid));
        assert_eq!((layout.cell_vars(0).len(), layout.cell_vars(7).len()), (1, 1));
        let cfg = DcConfig {
            layout: DcLayout::from_hybrid(hybrid),
            run: MapRun { trials: 8, max_iters: 20_000, seed: 5, ..Default::default() },
            ..best_variant()
        };
        let r = dc::solve(&p, cfg, |_| {}).unwrap();
        check_claims(&p, &r);
        let (_, _, board) = r.solution.expect("a hinted 5x4 solves");
        assert_eq!(board.cells[0], sol.cells[0]);
        assert_eq!(board.cells[7], sol.cells[7]);
    }
}

#[test]
fn replica_bytes_count_the_slots() {
    let (p, _) = generated(5, 5, 1);
    let (plain, hybrid) = (dc::replica_bytes(&p, DcLayout::Plain), dc::replica_bytes(&p, DcLayout::Hybrid));
    assert_eq!(plain, dc::Layout::new(&p, DcLayout::Plain).slots() * 4);
    assert!(hybrid < plain);
}

// ---------------------------------------------------------------------------------------
// Measurement harnesses (ignored). One thread, as the numbers are per core:
//   CARGO_TARGET_DIR=... cargo test --release --test main dc_measure -- --ignored --nocapture
// Variables: DC_SIZES="5x5,6x4", DC_KINDS="rrr,dm", DC_BETAS="0.5,0.7", DC_WEIGHTS="uniform,adaptive",
// DC_HYBRID="0,1", DC_READOUT="assignment", DC_TRIALS=64, DC_ITERS=20000, DC_GAMMA=0.1, DC_SEED=1.
// ---------------------------------------------------------------------------------------

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn env_num<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn size(s: &str) -> (usize, usize) {
    let (w, h) = s.split_once('x').expect("WxH");
    (w.parse().unwrap(), h.parse().unwrap())
}

fn one_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(f)
}

#[test]
#[ignore = "measurement harness, run by hand"]
fn dc_measure() {
    let Some(dir) = puzzles("dc_measure") else { return };
    let trials: usize = env_num("DC_TRIALS", 64);
    let iters: u64 = env_num("DC_ITERS", 20_000);
    let gamma: f32 = env_num("DC_GAMMA", 0.1);
    let seed: u64 = env_num("DC_SEED", 1);
    println!(
        "size kind beta weights hybrid readout | solved/trials q1 median q3 (iterations to solution) | best-score median | restarts | trial it/s (1 thread)"
    );
    for sz in env_list("DC_SIZES", "5x5") {
        let (w, h) = size(&sz);
        let p = brendan(&dir, 1, w, h);
        for kind in env_list("DC_KINDS", "rrr") {
            let kind = if kind == "dm" { MapKind::Dm } else { MapKind::Rrr };
            for beta in env_list("DC_BETAS", "0.5") {
                let beta: f32 = beta.parse().unwrap();
                for weights in env_list("DC_WEIGHTS", "uniform") {
                    let weights = if weights == "adaptive" { Weights::Adaptive } else { Weights::Uniform };
                    for hybrid in env_list("DC_HYBRID", "0") {
                        let hybrid = hybrid == "1";
                        for readout in env_list("DC_READOUT", "argmax") {
                            let readout = if readout == "argmax" { Readout::Argmax } else { Readout::Assignment };
                            let cfg = DcConfig {
                                kind,
                                beta,
                                weights,
                                layout: DcLayout::from_hybrid(hybrid),
                                readout,
                                gamma,
                                all_trials: true,
                                run: MapRun { trials, max_iters: iters, seed, ..Default::default() },
                                ..crate::common::dc_plain()
                            };
                            let r = one_thread(|| dc::solve(&p, cfg, |_| {}).unwrap());
                            check_claims(&p, &r);
                            let mut its: Vec<u64> = r.trials.iter().filter_map(|t| t.solved_at).collect();
                            its.sort();
                            let q = |f: f64| -> String {
                                // Quartiles over all trials, unsolved counting as "> budget".
                                let i = ((trials as f64) * f).floor() as usize;
                                its.get(i).map_or(format!(">{iters}"), |v| v.to_string())
                            };
                            let mut bests: Vec<usize> = r.trials.iter().map(|t| t.best_score).collect();
                            bests.sort();
                            println!(
                                "{sz} {kind:?} {beta} {weights:?} {hybrid} {readout:?} | {}/{trials} {} {} {} | {}/{} | {} | {:.0}",
                                its.len(),
                                q(0.25),
                                q(0.5),
                                q(0.75),
                                bests[bests.len() / 2],
                                r.max_score,
                                r.trials.iter().map(|t| t.restarts).sum::<u64>(),
                                r.trial_iterations as f64 / r.wall_s
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Per-trial iterations per second and replica bytes (best of `DC_REPS` runs, as the machine
/// is shared; iterations per run: `DC_ITERS`, else 200 000 / cells^1.5 clamped to 100..5000):
///   DC_SIZES="5x5,8x8,16x16" cargo test --release --test main dc_speed -- --ignored --nocapture
#[test]
#[ignore = "measurement harness, run by hand"]
fn dc_speed() {
    let Some(dir) = puzzles("dc_speed") else { return };
    let reps: usize = env_num("DC_REPS", 3);
    println!(
        "size kind hybrid weights | V S replica-bytes/trial | iterations x reps | trial it/s (1 thread, best run)"
    );
    for sz in env_list("DC_SIZES", "5x5,8x8,16x16") {
        let (w, h) = size(&sz);
        let p = brendan(&dir, 1, w, h);
        let iters: u64 = env_num("DC_ITERS", (200_000.0 / ((w * h) as f64).powf(1.5)).clamp(100.0, 5_000.0) as u64);
        for hybrid in [false, true] {
            let layout = dc::Layout::new(&p, DcLayout::from_hybrid(hybrid));
            for kind in [MapKind::Rrr, MapKind::Dm] {
                for weights in [Weights::Uniform, Weights::Adaptive] {
                    // A trial that solves stops early: count the iterations actually run.
                    let cfg = DcConfig {
                        kind,
                        layout: DcLayout::from_hybrid(hybrid),
                        weights,
                        beta: 0.7,
                        run: MapRun { trials: 1, max_iters: iters, seed: 99, ..Default::default() },
                        ..crate::common::dc_plain()
                    };
                    let best = (0..reps)
                        .map(|_| {
                            let r = one_thread(|| dc::solve(&p, cfg.clone(), |_| {}).unwrap());
                            r.trial_iterations as f64 / r.wall_s
                        })
                        .fold(0.0, f64::max);
                    println!(
                        "{sz} {kind:?} {hybrid} {weights:?} | {} {} {} | {iters} x {reps} | {best:.0}",
                        layout.vars(),
                        layout.slots(),
                        dc::replica_bytes(&p, DcLayout::from_hybrid(hybrid)),
                    );
                }
            }
        }
    }
}

#[test]
fn dc_completion_turns_near_misses_into_verified_solutions() {
    use concur::batch::{Completion, Mechanism};
    let (p, _) = crate::common::generated(5, 5, 2);
    let base = DcConfig {
        all_trials: true,
        run: MapRun { trials: 16, max_iters: 150, seed: 0, ..Default::default() },
        ..crate::common::dc_plain()
    };
    let plain = concur::dc::solve(&p, base.clone(), |_| {}).unwrap();
    assert!(plain.trials.iter().all(|t| t.solved_by != Some(Mechanism::MapAc) && t.completions == 0));
    let cfg = DcConfig { complete: Some(Completion { k: 4, ..Default::default() }), ..base };
    let mut map = concur::dc::DcMap::new(&p, cfg).unwrap();
    let r = map.run(|_| {});
    let by_ac: Vec<usize> = (0..r.trials.len()).filter(|&t| r.trials[t].solved_by == Some(Mechanism::MapAc)).collect();
    assert!(!by_ac.is_empty(), "completion solved no trial: {:?}", r.trials);
    assert!(r.trials.iter().map(|t| t.completions).sum::<u64>() >= by_ac.len() as u64);
    for t in by_ac {
        assert!(concur::verify::check(&p, &map.best_board(t)).valid, "trial {t}");
    }
}

#[test]
fn dc_certificates_verify_and_tampering_is_caught() {
    use concur::certify;
    let (p, _) = crate::common::generated(5, 5, 31);
    for (kind, weights, hybrid, propagate) in [
        (MapKind::Rrr, Weights::Uniform, false, None),
        (MapKind::Dm, Weights::Uniform, false, None),
        (MapKind::Rrr, Weights::Adaptive, false, None),
        (MapKind::Rrr, Weights::Uniform, true, None),
        (MapKind::Rrr, Weights::Uniform, true, Some(0.5)),
        (MapKind::Dm, Weights::Uniform, false, Some(0.5)),
    ] {
        let cfg = DcConfig {
            kind,
            weights,
            layout: DcLayout::from_hybrid(hybrid),
            propagate,
            keep_fixed_points: true,
            run: MapRun { trials: 8, max_iters: 20_000, seed: 2, ..Default::default() },
            ..crate::common::dc_plain()
        };
        let mut m = concur::dc::DcMap::new(&p, cfg.clone()).unwrap();
        let r = m.run(|_| {});
        let (t, it, board) =
            r.solution.clone().unwrap_or_else(|| panic!("{kind:?} {weights:?} {hybrid} did not solve"));
        let (x, lambda, pruned) = m.certified_state(t);
        let state = certify::DcState { x, lambda: Some(lambda), pruned };
        let cert = certify::make_dc(&p, &cfg, t, it, r.trials[t].solved_by, state, None).unwrap();
        let cert: certify::Certificate = serde_json::from_str(&serde_json::to_string(&cert).unwrap()).unwrap();
        let rep = certify::check(&p, &cert).unwrap();
        assert!(rep.certifies(), "{kind:?} {weights:?} {hybrid}: {:?}", rep.reasons);
        assert!(rep.gap_matches_record && rep.board_matches_decoded);
        let cells: Vec<[u32; 2]> = board.cells.iter().map(|c| [c.piece as u32, c.rot as u32]).collect();
        assert_eq!(cert.board, cells, "the certificate's board is the reported solution");

        let mut swapped = cert.clone();
        swapped.board.swap(6, 18);
        let rep = certify::check(&p, &swapped).unwrap();
        assert!(!rep.certifies() && rep.reasons.iter().any(|r| r.contains("not the board decoded from x")));

        let mut perturbed = cert.clone();
        for (i, v) in perturbed.x.iter_mut().enumerate() {
            *v += ((i * 7919) % 13) as f32 - 6.0;
        }
        let rep = certify::check(&p, &perturbed).unwrap();
        assert!(!rep.certifies() && rep.reasons.iter().any(|r| r.contains("not a solution")), "{:?}", rep.reasons);

        let mut short = cert.clone();
        short.x.pop();
        assert!(certify::check(&p, &short).is_err(), "a truncated x is refused");

        // The pruned variables are part of the state: holding every candidate of the
        // solution at 0 breaks the certificate, and a variable past the layout is refused.
        let layout = concur::dc::Layout::new(&p, DcLayout::from_hybrid(hybrid));
        let mut held = cert.clone();
        let all: Vec<u32> = (0..p.cells()).map(|c| layout.variable_of(c, board.cells[c]).unwrap()).collect();
        held.dc.as_mut().unwrap().pruned = Some(all);
        let rep = certify::check(&p, &held).unwrap();
        assert!(!rep.certifies(), "{kind:?} {hybrid}: a certificate with its solution pruned still certifies");
        let mut past = cert.clone();
        past.dc.as_mut().unwrap().pruned = Some(vec![layout.vars() as u32]);
        assert!(certify::check(&p, &past).is_err());
    }
}
