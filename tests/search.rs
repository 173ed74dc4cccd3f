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
