//! The backtracker on Brendan Owen's set 1 and the Eternity II clue puzzles.
use crate::common::{brendan, generated, puzzles};
use concur::puzzle::format;
use concur::search::backtrack::{self, BacktrackConfig, Backtracker, Ending, Next};
use concur::verify::{self, Consistency};

#[test]
fn backtracker_solves_brendan_set_1_up_to_6x6() {
    let Some(dir) = puzzles("backtracker_solves_brendan_set_1_up_to_6x6") else { return };
    for w in 3..=6 {
        for h in 3..=w {
            let p = brendan(&dir, 1, w, h);
            let cfg = BacktrackConfig { seed: 1, max_nodes: Some(20_000_000), ..Default::default() };
            let (sol, ending, stats) = backtrack::solve(&p, cfg);
            let sol = sol.unwrap_or_else(|| panic!("{w}x{h}: {ending:?} after {} nodes", stats.nodes));
            assert!(verify::check(&p, &sol).valid, "{w}x{h}");
        }
    }
}

#[test]
fn backtracker_solves_the_four_clue_puzzles() {
    let Some(dir) = puzzles("backtracker_solves_the_four_clue_puzzles") else { return };
    for i in 1..=4 {
        let path = dir.join(format!("eternity2_dev_cc0/e2-clue-clue{i}.json"));
        let p = format::read_puzzle(&std::fs::read(&path).unwrap()).unwrap();
        for consistency in [Consistency::Ac3, Consistency::Ac2001, Consistency::Ac4, Consistency::Fc] {
            let cfg = BacktrackConfig { consistency, seed: i, max_nodes: Some(10_000_000), ..Default::default() };
            let (sol, ending, _) = backtrack::solve(&p, cfg);
            let sol = sol.unwrap_or_else(|| panic!("clue {i} {consistency:?}: {ending:?}"));
            assert!(verify::check(&p, &sol).valid);
        }
    }
}

#[test]
fn complete_search_counts_agree_across_consistencies_and_find_the_planted_board() {
    for seed in 0..4 {
        let (p, planted) = generated(4, 4, seed);
        let mut counts = Vec::new();
        for consistency in [Consistency::Fc, Consistency::Ac3, Consistency::Ac2001, Consistency::Ac4] {
            let cfg = BacktrackConfig { consistency, restarts: false, seed, ..Default::default() };
            let mut bt = Backtracker::new(&p, cfg);
            let mut saw_planted = false;
            let (ending, stats) = bt.run(|b| {
                saw_planted |= *b == planted;
                Next::Continue
            });
            assert_eq!(ending, Ending::Exhausted);
            assert!(saw_planted, "seed {seed} {consistency:?}: planted board not enumerated");
            counts.push(stats.solutions);
        }
        assert!(counts.iter().all(|&c| c == counts[0]), "seed {seed}: {counts:?}");
    }
}

#[test]
fn node_limit_is_honoured() {
    let (p, _) = generated(8, 8, 1);
    let cfg = BacktrackConfig { max_nodes: Some(500), ..Default::default() };
    let (_, ending, stats) = backtrack::solve(&p, cfg);
    if ending == Ending::Limit {
        assert!(stats.nodes <= 500);
    }
}

/// Every board that respects the candidate lists, counted by brute force.
fn brute_force_count(p: &concur::puzzle::Puzzle) -> u64 {
    fn rec(
        p: &concur::puzzle::Puzzle,
        cands: &concur::puzzle::Candidates,
        c: usize,
        cells: &mut Vec<concur::puzzle::Placement>,
        used: &mut Vec<bool>,
    ) -> u64 {
        if c == p.cells() {
            let b = concur::puzzle::Board { width: p.width(), height: p.height(), cells: cells.clone() };
            return u64::from(p.score(&b) == p.max_score());
        }
        let mut n = 0;
        for pl in cands.of(c) {
            if !used[pl.piece as usize] {
                used[pl.piece as usize] = true;
                cells.push(*pl);
                n += rec(p, cands, c + 1, cells, used);
                cells.pop();
                used[pl.piece as usize] = false;
            }
        }
        n
    }
    let cands = p.candidates();
    rec(p, &cands, 0, &mut Vec::new(), &mut vec![false; p.cells()])
}

#[test]
fn counts_match_brute_force_on_small_generated_puzzles() {
    use concur::search::backtrack::{CellOrder, count};
    for (w, h, seed) in [(3, 3, 1), (3, 3, 2), (4, 3, 3), (4, 3, 4), (4, 3, 5)] {
        let (p, _) = generated(w, h, seed);
        let want = brute_force_count(&p);
        for consistency in [Consistency::Fc, Consistency::Ac3, Consistency::Ac2001, Consistency::Ac4] {
            let c = count(&p, consistency, CellOrder::MrvDegree, None, None);
            assert!(c.complete);
            assert_eq!(c.solutions, want, "{w}x{h} seed {seed} {consistency:?}");
        }
    }
}

#[test]
fn brendan_set_1_6x6_has_65_solutions_up_to_rotation() {
    let Some(dir) = puzzles("brendan_set_1_6x6_has_65_solutions") else { return };
    let p = brendan(&dir, 1, 6, 6);
    let c =
        concur::search::backtrack::count(&p, Consistency::Ac4, concur::search::backtrack::CellOrder::Scan, None, None);
    assert!(c.complete);
    assert_eq!((c.solutions, c.up_to_rotation), (260, Some(65)));
}

#[test]
fn generate_unique_gives_a_puzzle_with_one_solution() {
    use concur::puzzle::generate::GenerateOptions;
    use concur::search::backtrack::{CellOrder, count, generate_unique};
    let opts = GenerateOptions { width: 5, height: 5, frame_colors: None, inner_colors: None, seed: 1 };
    let u = generate_unique(&opts, 50, 2_000_000).unwrap().expect("a unique 5x5 within 50 draws");
    let c = count(&u.puzzle, Consistency::Ac3, CellOrder::Mrv, None, None);
    assert!(c.complete);
    assert_eq!((c.solutions, c.up_to_rotation), (4, Some(1)));
    assert!(verify::check(&u.puzzle, &u.solution).valid);
}

fn scan_count(p: &concur::puzzle::Puzzle, symmetry: bool, threads: usize) -> concur::search::scan::ScanCount {
    use concur::search::scan::{ScanOptions, count};
    count(p, &ScanOptions { symmetry, threads, probes: 200, ..Default::default() })
}

#[test]
fn scan_counts_match_brute_force_on_small_generated_puzzles() {
    for (w, h, seed) in [(3, 3, 1), (3, 3, 2), (4, 3, 3), (4, 3, 4), (4, 3, 5), (3, 4, 6)] {
        let (p, _) = generated(w, h, seed);
        let want = brute_force_count(&p);
        for symmetry in [false, true] {
            for threads in [1, 2] {
                let c = scan_count(&p, symmetry, threads);
                assert!(c.complete);
                assert_eq!(c.solutions, want, "{w}x{h} seed {seed} symmetry {symmetry} threads {threads}");
            }
        }
    }
}

#[test]
fn scan_counts_match_the_arc_consistent_count() {
    use concur::puzzle::generate::{GenerateOptions, generate};
    use concur::search::backtrack::{CellOrder, count};
    // Few colours give many solutions (and many turned copies to check); the sizes cover
    // square and oblong boards, odd and even.
    let sizes = [(4, 4, 3, 2), (5, 4, 2, 3), (5, 5, 3, 3), (6, 4, 3, 3), (5, 5, 3, 4)];
    let mut compared = 0;
    for (i, &(w, h, f, inner)) in sizes.iter().enumerate() {
        for seed in 0..3 {
            let opts = GenerateOptions {
                width: w,
                height: h,
                frame_colors: Some(f),
                inner_colors: Some(inner),
                seed: seed + 10 * i as u64,
            };
            let Ok((p, planted)) = generate(&opts) else { continue };
            let limit = Some(std::time::Duration::from_secs(5));
            let want = count(&p, Consistency::Ac4, CellOrder::MrvDegree, None, limit);
            if !want.complete {
                continue;
            }
            compared += 1;
            assert!(want.solutions >= 1 && verify::check(&p, &planted).valid);
            for symmetry in [false, true] {
                let c = scan_count(&p, symmetry, 2);
                assert!(c.complete);
                let tag = format!("{w}x{h} f{f} i{inner} seed {seed} symmetry {symmetry}");
                assert_eq!(c.solutions, want.solutions, "{tag}");
                assert_eq!(c.up_to_rotation, want.up_to_rotation, "{tag}");
            }
        }
    }
    assert!(compared >= 8, "only {compared} puzzles were counted in time");
}

#[test]
fn scan_limit_and_time_limit_stop_early() {
    use concur::search::scan::{ScanOptions, count};
    let (p, _) = generated(8, 8, 1);
    let c = count(&p, &ScanOptions { time_limit: Some(std::time::Duration::from_millis(300)), ..Default::default() });
    assert!(c.complete || c.tasks_done < c.tasks);
    let (p, _) = generated(4, 3, 3);
    let all = count(&p, &ScanOptions::default());
    if all.solutions > 1 {
        let c = count(&p, &ScanOptions { limit: Some(1), threads: 1, ..Default::default() });
        assert!(c.solutions >= 1 && c.solutions <= all.solutions);
    }
}

#[test]
fn brendan_set_1_6x6_has_65_solutions_up_to_rotation_with_the_scan_counter() {
    let Some(dir) = puzzles("brendan_set_1_6x6_scan") else { return };
    let p = brendan(&dir, 1, 6, 6);
    for symmetry in [true, false] {
        let c = scan_count(&p, symmetry, 2);
        assert!(c.complete);
        assert_eq!((c.solutions, c.up_to_rotation), (260, Some(65)), "symmetry {symmetry}");
    }
}
