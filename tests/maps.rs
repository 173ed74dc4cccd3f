//! RRR on Brendan Owen's set 1: the success rates the design calls for.
use crate::common::{brendan, generated, puzzles};
use concur::batch::MapKind;
use concur::batch::MapRun;
use concur::f1::map::{self, MapConfig};
use concur::verify;

fn success_rate(p: &concur::puzzle::Puzzle, kind: MapKind, seed: u64) -> (usize, Vec<u64>) {
    let cfg = MapConfig {
        kind,
        all_trials: true,
        run: MapRun { trials: 32, max_iters: 20_000, seed, ..Default::default() },
        ..Default::default()
    };
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
        let cfg = MapConfig {
            kind,
            run: MapRun { trials: 8, max_iters: 20_000, seed: 4, ..Default::default() },
            ..Default::default()
        };
        let r = map::solve(&p, cfg, |_| {}).unwrap();
        let (_, _, board) = r.solution.unwrap_or_else(|| panic!("{kind:?} did not solve"));
        assert!(verify::check(&p, &board).valid);
    }
}

#[test]
fn certificates_of_solved_runs_verify_and_tampering_is_caught() {
    use concur::certify;
    use concur::f1::map::F1Map;
    for (kind, join_weights) in [
        (MapKind::Rrr, None),
        (MapKind::Dm, None),
        (MapKind::Rrr, Some([1.0, 1.0, 2.0])),
        (MapKind::Dm, Some([1.0, 0.5, 3.0])),
    ] {
        let (p, _) = generated(5, 5, 31);
        let cfg = MapConfig {
            kind,
            keep_fixed_points: true,
            join_weights,
            run: MapRun { trials: 4, max_iters: 20_000, seed: 2, ..Default::default() },
            ..Default::default()
        };
        let mut m = F1Map::new(&p, cfg.clone()).unwrap();
        let r = m.run(|_| {});
        let (t, it, board) = r.solution.clone().expect("solves");
        let x = m.certified_state(t);
        let cert =
            certify::make(&p, kind, cfg.beta, cfg.edge, join_weights, t, it, r.trials[t].solved_by, x, None).unwrap();
        // Round trip through JSON, then re-check from x alone.
        let cert: certify::Certificate = serde_json::from_str(&serde_json::to_string(&cert).unwrap()).unwrap();
        let rep = certify::check(&p, &cert).unwrap();
        assert!(rep.certifies(), "{kind:?}: {:?}", rep.reasons);
        assert!(rep.gap_matches_record && rep.board_matches_decoded);
        assert_eq!(rep.verdict.score, p.max_score());
        let cells: Vec<[u32; 2]> = board.cells.iter().map(|c| [c.piece as u32, c.rot as u32]).collect();
        assert_eq!(cert.board, cells);

        // A swapped board no longer matches x.
        let mut swapped = cert.clone();
        swapped.board.swap(6, 18);
        let rep = certify::check(&p, &swapped).unwrap();
        assert!(!rep.certifies());
        assert!(rep.reasons.iter().any(|r| r.contains("not the board decoded from x")), "{:?}", rep.reasons);

        // A perturbed x decodes to a different, invalid board.
        let mut perturbed = cert.clone();
        for (i, v) in perturbed.x.iter_mut().enumerate() {
            *v += ((i * 7919) % 13) as f32 - 6.0;
        }
        let rep = certify::check(&p, &perturbed).unwrap();
        assert!(!rep.certifies());
        assert!(!rep.fixed_point);
        assert!(rep.reasons.iter().any(|r| r.contains("not a solution")), "{:?}", rep.reasons);

        // The metric travels with the certificate, and nonsense weights are refused.
        assert_eq!(cert.join_weights, join_weights);
        let mut bad = cert.clone();
        bad.join_weights = Some([1.0, 0.0, 2.0]);
        assert!(certify::check(&p, &bad).is_err(), "zero weights are refused");

        // A certificate for another puzzle is refused outright.
        let (other, _) = generated(4, 4, 1);
        assert!(certify::check(&other, &cert).is_err());
    }
}

#[test]
fn completion_is_reported_as_map_plus_ac() {
    use concur::batch::{Completion, Mechanism};
    // A budget too small for the map alone, with generous completion: whatever solves must be
    // labelled by the mechanism that found it, and every claim verifies.
    let (p, _) = generated(6, 6, 3);
    let cfg = MapConfig {
        all_trials: true,
        complete: Some(Completion { k: 60, stall: 100, radius: 6, max_nodes: 1_000_000 }),
        run: MapRun { trials: 4, max_iters: 300, seed: 1, ..Default::default() },
        ..Default::default()
    };
    let r = map::solve(&p, cfg, |_| {}).unwrap();
    let by_ac = r.trials.iter().filter(|t| t.solved_by == Some(Mechanism::MapAc)).count();
    assert!(by_ac >= 1, "a radius covering the board must complete: {:?}", r.trials);
    for t in &r.trials {
        assert_eq!(t.solved_at.is_some(), t.solved_by.is_some());
    }
    let (_, _, b) = r.solution.unwrap();
    assert!(verify::check(&p, &b).valid);
}
