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
        assert!(
            r.local.solved,
            "seed {seed}: best {}/{} after {} iterations",
            r.local.best_score, r.local.max_score, r.iterations
        );
    }
}

#[test]
fn both_solve_brendan_5x5_from_8_seeds() {
    let Some(dir) = puzzles("both_solve_brendan_5x5_from_8_seeds") else { return };
    let p = brendan(&dir, 1, 5, 5);
    for seed in 100..108 {
        let r = hill_run(&p, seed, None, Some(Duration::from_secs(10)));
        check_claim(&p, &r, "hill");
        assert!(r.solved, "hill seed {seed}: best {}/{} after {} moves", r.best_score, r.max_score, r.moves);
        let r = alns_run(&p, seed, None, Some(Duration::from_secs(10)));
        check_claim(&p, &r.local, "alns");
        assert!(r.local.solved, "alns seed {seed}: best {}/{}", r.local.best_score, r.local.max_score);
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
    let a = alns::alns(
        &p,
        &AlnsConfig {
            seed: 1,
            time_limit: Some(Duration::from_millis(200)),
            max_iterations: None,
            ..Default::default()
        },
    );
    assert!(a.local.wall_s < 2.0);
    check_claim(&p, &a.local, "alns");
    let j = serde_json::to_value(&a).unwrap();
    assert!(j.get("board").is_none() && j.get("cells").is_none());
    for key in [
        "best_score",
        "max_score",
        "solved",
        "moves",
        "restarts",
        "wall_s",
        "iterations",
        "iterations_per_s",
        "operators",
    ] {
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
/// `cargo test --release --test main local::measure -- --ignored --nocapture --test-threads 1`
#[test]
#[ignore = "measurement harness, run by hand (the command above)"]
fn measure() {
    let Some(dir) = puzzles("measure") else { return };
    let part = std::env::var("LOCAL_MEASURE").unwrap_or_default();
    let seeds: u64 = std::env::var("LOCAL_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(16);
    let budget = Duration::from_secs(std::env::var("LOCAL_BUDGET_S").ok().and_then(|s| s.parse().ok()).unwrap_or(10));
    if part.is_empty() || part == "speed" {
        // Throughput over consecutive seeds until 3 s have run (small boards solve early).
        for (w, h) in [(5, 5), (8, 8)] {
            let p = brendan(&dir, 1, w, h);
            let (mut moves, mut wall, mut solved, mut seed) = (0u64, 0f64, 0, 0);
            while wall < 3.0 {
                let t = Some(Duration::from_secs_f64(3.0 - wall));
                let r =
                    hill::hill_climb(&p, &HillConfig { seed, max_moves: None, time_limit: t, ..Default::default() });
                (moves, wall, solved, seed) =
                    (moves + r.moves, wall + r.wall_s, solved + usize::from(r.solved), seed + 1);
            }
            eprintln!(
                "speed hill {w}x{h}: {:.2e} moves/s ({moves} moves in {wall:.1} s, {seed} runs, {solved} solved)",
                moves as f64 / wall
            );
            let (mut its, mut placed, mut wall, mut solved, mut seed) = (0u64, 0u64, 0f64, 0, 0);
            while wall < 3.0 {
                let t = Some(Duration::from_secs_f64(3.0 - wall));
                let a = alns::alns(&p, &AlnsConfig { seed, max_iterations: None, time_limit: t, ..Default::default() });
                (its, placed, wall) = (its + a.iterations, placed + a.local.moves, wall + a.local.wall_s);
                (solved, seed) = (solved + usize::from(a.local.solved), seed + 1);
            }
            eprintln!(
                "speed alns {w}x{h}: {:.2e} iterations/s, {:.2e} placements/s \
                 ({its} iterations in {wall:.1} s, {seed} runs, {solved} solved)",
                its as f64 / wall,
                placed as f64 / wall
            );
        }
    }
    if part.is_empty() || part == "success" {
        for (w, h) in [(4, 4), (5, 5)] {
            let p = brendan(&dir, 1, w, h);
            let (mut hm, mut am, mut hs, mut as_) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for seed in 0..seeds {
                let r = hill::hill_climb(
                    &p,
                    &HillConfig { seed, max_moves: None, time_limit: Some(budget), ..Default::default() },
                );
                check_claim(&p, &r, "hill");
                if r.solved {
                    hm.push(r.moves);
                    hs.push((r.wall_s * 1e6) as u64);
                }
                let a = alns::alns(
                    &p,
                    &AlnsConfig { seed, max_iterations: None, time_limit: Some(budget), ..Default::default() },
                );
                check_claim(&p, &a.local, "alns");
                if a.local.solved {
                    am.push(a.iterations);
                    as_.push((a.local.wall_s * 1e6) as u64);
                }
            }
            eprintln!(
                "success {w}x{h} hill: {}/{seeds} within {budget:?}, median {:?} moves, median {:?} µs",
                hm.len(),
                median(&mut hm),
                median(&mut hs)
            );
            eprintln!(
                "success {w}x{h} alns: {}/{seeds} within {budget:?}, median {:?} iterations, median {:?} µs",
                am.len(),
                median(&mut am),
                median(&mut as_)
            );
        }
    }
    if part.is_empty() || part == "best" {
        let runs: u64 = std::env::var("LOCAL_BEST_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
        for (w, h) in [(6, 6), (7, 7)] {
            let p = brendan(&dir, 1, w, h);
            for seed in 0..runs {
                let r = hill::hill_climb(
                    &p,
                    &HillConfig { seed, max_moves: None, time_limit: Some(budget), ..Default::default() },
                );
                check_claim(&p, &r, "hill");
                eprintln!(
                    "best {w}x{h} hill seed {seed}: {}/{} in {:.2} s ({} moves, {} restarts)",
                    r.best_score, r.max_score, r.wall_s, r.moves, r.restarts
                );
                let a = alns::alns(
                    &p,
                    &AlnsConfig { seed, max_iterations: None, time_limit: Some(budget), ..Default::default() },
                );
                check_claim(&p, &a.local, "alns");
                let ops: Vec<String> = a.operators.iter().map(|o| format!("{}={:.2}", o.name, o.weight)).collect();
                eprintln!(
                    "best {w}x{h} alns seed {seed}: {}/{} in {:.2} s ({} iterations, {} restarts, {} reheats) weights {}",
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
    if part == "e2" {
        // Not part of the default run: the 16 x 16 eternity2.dev puzzle v00, one seed each.
        let path = dir.join("eternity2_dev_cc0/e2-16x16-v00.json");
        let p = concur::puzzle::format::read_puzzle(&std::fs::read(&path).unwrap()).unwrap();
        let r = hill::hill_climb(
            &p,
            &HillConfig { seed: 1, max_moves: None, time_limit: Some(budget), ..Default::default() },
        );
        check_claim(&p, &r, "hill");
        eprintln!(
            "e2 16x16 hill: {}/{} in {:.1} s ({:.2e} moves/s)",
            r.best_score, r.max_score, r.wall_s, r.moves_per_s
        );
        let a = alns::alns(
            &p,
            &AlnsConfig { seed: 1, max_iterations: None, time_limit: Some(budget), ..Default::default() },
        );
        check_claim(&p, &a.local, "alns");
        eprintln!(
            "e2 16x16 alns: {}/{} in {:.1} s ({:.2e} iterations/s, {} restarts)",
            a.local.best_score, a.local.max_score, a.local.wall_s, a.iterations_per_s, a.local.restarts
        );
    }
}
