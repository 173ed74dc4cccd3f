//! RRR on Brendan Owen's set 1: the success rates the design calls for.
use crate::common::{brendan, generated, puzzles};
use concur::map::{self, MapConfig, MapKind};
use concur::verify;

fn success_rate(p: &concur::puzzle::Puzzle, kind: MapKind, seed: u64) -> (usize, Vec<u64>) {
    let cfg = MapConfig { kind, trials: 32, max_iters: 20_000, seed, stop_at_first: false, ..Default::default() };
    let r = map::solve(p, cfg, |_| {}).unwrap();
    let its: Vec<u64> = r.trials.iter().filter_map(|t| t.solved_at).collect();
    (its.len(), its)
}

#[test]
fn rrr_solves_90_percent_of_32_trials_on_set_1_small_boards() {
    let Some(dir) = puzzles("rrr_solves_90_percent_of_32_trials") else { return };
    for (w, h) in [(4, 4), (5, 5), (6, 4)] {
        let p = brendan(&dir, 1, w, h);
        let (solved, mut its) = success_rate(&p, MapKind::Rrr, 11);
        its.sort();
        eprintln!("rrr set 1 {w}x{h}: {solved}/32 solved, median {:?} iterations", its.get(its.len() / 2));
        assert!(solved >= 29, "{w}x{h}: only {solved}/32 trials solved within 20,000 iterations");
    }
}

#[test]
fn rrr_and_dm_solve_generated_5x5_and_every_claim_verifies() {
    let (p, _) = generated(5, 5, 21);
    for kind in [MapKind::Rrr, MapKind::Dm] {
        let cfg = MapConfig { kind, trials: 8, max_iters: 20_000, seed: 4, ..Default::default() };
        let r = map::solve(&p, cfg, |_| {}).unwrap();
        let (_, _, board) = r.solution.unwrap_or_else(|| panic!("{kind:?} did not solve"));
        assert!(verify::check(&p, &board).valid);
    }
}
