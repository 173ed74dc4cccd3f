//! The local-search controls (hill-climber, ALNS) on Brendan Owen's set 1 and generated puzzles,
//! plus an `#[ignore]`d measurement harness:
//! `CARGO_TARGET_DIR=... cargo test --release --test main local::measure -- --ignored --nocapture`
//! (`LOCAL_MEASURE=speed|success|best` runs one part only).
use crate::common::{brendan, generated, puzzles};
use concur::puzzle::Puzzle;
use concur::search::alns::{self, AlnsConfig, AlnsResult, Destroy};
use concur::search::hill::{self, HillConfig, LocalResult};
use concur::verify;
use std::time::Duration;

fn hill_run(p: &Puzzle, seed: u64, max_moves: Option<u64>, time: Option<Duration>) -> LocalResult {
    hill::hill_climb(p, &HillConfig { seed, max_moves, time_limit: time, ..Default::default() })
}

fn alns_run(p: &Puzzle, seed: u64, max_iterations: Option<u64>, time: Option<Duration>) -> AlnsResult {
    alns::alns(p, &AlnsConfig { seed, max_iterations, time_limit: time, ..Default::default() })
}

/// A reported solution must pass the exact check, and the reported score must be the board's.
fn check_claim(p: &Puzzle, r: &LocalResult, what: &str) {
    assert_eq!(r.best_score, p.score(&r.board), "{what}: reported score is not the board's");
    assert_eq!(r.solved, verify::check(p, &r.board).valid, "{what}: solved flag disagrees with the verifier");
    assert_eq!(r.solved, r.best_score == r.max_score, "{what}");
}

#[test]
fn hill_climber_solves_brendan_4x4_from_16_seeds() {
    let Some(dir) = puzzles("hill_climber_solves_brendan_4x4_from_16_seeds") else { return };
    let p = brendan(&dir, 1, 4, 4);
    for seed in 0..16 {
        let r = hill_run(&p, seed, Some(20_000_000), Some(Duration::from_secs(5)));
        check_claim(&p, &r, "hill");
        assert!(r.solved, "seed {seed}: best {}/{} after {} moves", r.best_score, r.max_score, r.moves);
    }
}

#[test]
fn alns_solves_brendan_4x4_from_16_seeds() {
    let Some(dir) = puzzles("alns_solves_brendan_4x4_from_16_seeds") else { return };
    let p = brendan(&dir, 1, 4, 4);
    for seed in 0..16 {
        let r = alns_run(&p, seed, Some(2_000_000), Some(Duration::from_secs(5)));
        check_claim(&p, &r.local, "alns");
        assert!(r.local.solved, "seed {seed}: best {}/{} after {} iterations", r.local.best_score, r.local.max_score, r.iterations);
    }
}

#[test]
fn both_solve_generated_4x4_and_5x4() {
    for (w, h, seed) in [(4, 4, 31), (5, 4, 32)] {
        let (p, _) = generated(w, h, seed);
        let r = hill_run(&p, seed, Some(20_000_000), Some(Duration::from_secs(5)));
        check_claim(&p, &r, "hill");
        assert!(r.solved, "hill {w}x{h}: {}/{}", r.best_score, r.max_score);
        let r = alns_run(&p, seed, Some(2_000_000), Some(Duration::from_secs(5)));
        check_claim(&p, &r.local, "alns");
        assert!(r.local.solved, "alns {w}x{h}: {}/{}", r.local.best_score, r.local.max_score);
    }
}

#[test]
fn clue_puzzle_hints_are_respected_and_claims_verify() {
    let Some(dir) = puzzles("clue_puzzle_hints_are_respected_and_claims_verify") else { return };
    let path = dir.join("eternity2_dev_cc0/e2-clue-clue1.json");
    let p = concur::puzzle::format::read_puzzle(&std::fs::read(&path).unwrap()).unwrap();
    let r = hill_run(&p, 3, Some(200_000), None);
    check_claim(&p, &r, "hill clue1");
    let a = alns_run(&p, 3, Some(2_000), None);
    check_claim(&p, &a.local, "alns clue1");
    for board in [&r.board, &a.local.board] {
        for h in p.hints() {
            assert_eq!((board.cells[h.cell].piece as usize, board.cells[h.cell].rot), (h.piece, h.rot));
        }
    }
}

#[test]
fn limits_stop_runs_and_results_serialise_without_the_board() {
    let (p, _) = generated(10, 10, 5);
    let r = hill_run(&p, 1, Some(50_000), None);
    assert_eq!(r.moves, 50_000);
    check_claim(&p, &r, "hill");
    let a = alns::alns(&p, &AlnsConfig { seed: 1, time_limit: Some(Duration::from_millis(200)), max_iterations: None, ..Default::default() });
    assert!(a.local.wall_s < 2.0);
    check_claim(&p, &a.local, "alns");
    let j = serde_json::to_value(&a).unwrap();
    assert!(j.get("board").is_none() && j.get("cells").is_none());
    for key in ["best_score", "max_score", "solved", "moves", "restarts", "wall_s", "iterations", "iterations_per_s", "operators"] {
        assert!(j.get(key).is_some(), "missing {key} in {j}");
    }
    assert_eq!(j["operators"].as_array().unwrap().len(), Destroy::ALL.len());
    let j = serde_json::to_value(&r).unwrap();
    assert!(j.get("board").is_none() && j.get("moves_per_s").is_some());
}

fn median(v: &mut [u64]) -> Option<u64> {
    v.sort_unstable();
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// The figures of the local-search report. Release, one thread:
/// `CARGO_TARGET_DIR=/work/target-local cargo test --release --test main local::measure -- --ignored --nocapture --test-threads 1`
#[test]
#[ignore]
fn measure() {
    let Some(dir) = puzzles("measure") else { return };
    let part = std::env::var("LOCAL_MEASURE").unwrap_or_default();
    let seeds: u64 = std::env::var("LOCAL_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(16);
    let budget = Duration::from_secs(std::env::var("LOCAL_BUDGET_S").ok().and_then(|s| s.parse().ok()).unwrap_or(10));
    if part.is_empty() || part == "speed" {
        for (w, h) in [(5, 5), (8, 8)] {
            let p = brendan(&dir, 1, w, h);
            let t = Some(Duration::from_secs(3));
            let r = hill::hill_climb(&p, &HillConfig { seed: 1, max_moves: None, time_limit: t, ..Default::default() });
            eprintln!("speed hill {w}x{h}: {:.2e} moves/s ({} moves, {} restarts, best {}/{})", r.moves_per_s, r.moves, r.restarts, r.best_score, r.max_score);
            let a = alns::alns(&p, &AlnsConfig { seed: 1, max_iterations: None, time_limit: t, ..Default::default() });
            eprintln!(
                "speed alns {w}x{h}: {:.2e} iterations/s ({} iterations, {:.2e} placements/s, {} exact repairs, best {}/{})",
                a.iterations_per_s, a.iterations, a.local.moves_per_s, a.exact_repairs, a.local.best_score, a.local.max_score
            );
        }
    }
    if part.is_empty() || part == "success" {
        for (w, h) in [(4, 4), (5, 5)] {
            let p = brendan(&dir, 1, w, h);
            let (mut hm, mut am, mut hs, mut as_) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for seed in 0..seeds {
                let r = hill::hill_climb(&p, &HillConfig { seed, max_moves: None, time_limit: Some(budget), ..Default::default() });
                check_claim(&p, &r, "hill");
                if r.solved {
                    hm.push(r.moves);
                    hs.push((r.wall_s * 1e3) as u64);
                }
                let a = alns::alns(&p, &AlnsConfig { seed, max_iterations: None, time_limit: Some(budget), ..Default::default() });
                check_claim(&p, &a.local, "alns");
                if a.local.solved {
                    am.push(a.iterations);
                    as_.push((a.local.wall_s * 1e3) as u64);
                }
            }
            eprintln!(
                "success {w}x{h} hill: {}/{seeds} within {budget:?}, median {:?} moves, median {:?} ms",
                hm.len(),
                median(&mut hm),
                median(&mut hs)
            );
            eprintln!(
                "success {w}x{h} alns: {}/{seeds} within {budget:?}, median {:?} iterations, median {:?} ms",
                am.len(),
                median(&mut am),
                median(&mut as_)
            );
        }
    }
    if part.is_empty() || part == "best" {
        for (w, h) in [(6, 6), (7, 7)] {
            let p = brendan(&dir, 1, w, h);
            let r = hill::hill_climb(&p, &HillConfig { seed: 1, max_moves: None, time_limit: Some(budget), ..Default::default() });
            check_claim(&p, &r, "hill");
            eprintln!("best {w}x{h} hill: {}/{} in {:.1} s ({} moves, {} restarts)", r.best_score, r.max_score, r.wall_s, r.moves, r.restarts);
            let a = alns::alns(&p, &AlnsConfig { seed: 1, max_iterations: None, time_limit: Some(budget), ..Default::default() });
            check_claim(&p, &a.local, "alns");
            let ops: Vec<String> = a.operators.iter().map(|o| format!("{}={:.2}", o.name, o.weight)).collect();
            eprintln!(
                "best {w}x{h} alns: {}/{} in {:.1} s ({} iterations, {} restarts, {} reheats) weights {}",
                a.local.best_score,
                a.local.max_score,
                a.local.wall_s,
                a.iterations,
                a.local.restarts,
                a.reheats,
                ops.join(" ")
            );
        }
    }
}

#[test]
#[ignore]
fn tune_tmp() {
    let Some(dir) = puzzles("tune") else { return };
    let spec = std::env::var("TUNE").unwrap_or_default();
    let mut cfg = AlnsConfig { max_iterations: None, ..Default::default() };
    let mut hcfg = HillConfig { max_moves: None, ..Default::default() };
    let mut sizes = vec![(5usize, 5usize, 16u64, 5u64), (6, 6, 8, 5)];
    let mut method = "alns".to_string();
    for kv in spec.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap();
        match k {
            "t" => cfg.temperature = v.parse().unwrap(),
            "cool" => cfg.cooling = v.parse().unwrap(),
            "tmin" => cfg.min_temperature = v.parse().unwrap(),
            "reheat" => cfg.reheat_after = v.parse().unwrap(),
            "restart" => cfg.restart_after = v.parse().unwrap(),
            "kmax" => cfg.destroy_max = v.parse().unwrap(),
            "kmin" => cfg.destroy_min = v.parse().unwrap(),
            "lambda" => cfg.reaction = v.parse().unwrap(),
            "exact" => cfg.exact_repair = v == "1",
            "init" => cfg.init = if v == "random" { alns::Init::Random } else { alns::Init::Greedy },
            "ops" => cfg.operators = v.split('+').map(|o| <Destroy as clap::ValueEnum>::from_str(o, true).unwrap()).collect(),
            "plateau" => hcfg.plateau = v.parse().unwrap(),
            "method" => method = v.to_string(),
            "size" => {
                let p: Vec<u64> = v.split('x').map(|x| x.parse().unwrap()).collect();
                sizes = vec![(p[0] as usize, p[1] as usize, p[2], p[3])];
            }
            _ => panic!("{k}"),
        }
    }
    for (w, h, seeds, budget) in sizes {
        let p = brendan(&dir, 1, w, h);
        let (mut its, mut ms, mut bests) = (Vec::new(), Vec::new(), Vec::new());
        for seed in 0..seeds {
            let (solved, it, wall, best) = if method == "hill" {
                let r = hill::hill_climb(&p, &HillConfig { seed, time_limit: Some(Duration::from_secs(budget)), ..hcfg.clone() });
                (r.solved, r.moves, r.wall_s, r.best_score)
            } else {
                let r = alns::alns(&p, &AlnsConfig { seed, time_limit: Some(Duration::from_secs(budget)), ..cfg.clone() });
                (r.local.solved, r.iterations, r.local.wall_s, r.local.best_score)
            };
            bests.push(best as u64);
            if solved {
                its.push(it);
                ms.push((wall * 1e3) as u64);
            }
        }
        let nsol = its.len();
        eprintln!("TUNE {spec} {w}x{h}: {nsol}/{seeds} median it {:?} median ms {:?} (unsolved count as inf: {:?}) bests {:?}", median(&mut its), median(&mut ms.clone()),
            { let mut all = ms.clone(); all.resize(seeds as usize, u64::MAX); all.sort(); all[all.len()/2] }, bests);
    }
}
