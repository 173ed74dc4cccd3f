//! The backtracker on Brendan Owen's set 1 and the Eternity II clue puzzles.
use crate::common::{brendan, generated, puzzles};
use concur::meter::Watch;
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
            let backtrack::BacktrackSolve { board: sol, ending, stats, .. } = backtrack::solve(&p, cfg);
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
            let backtrack::BacktrackSolve { board: sol, ending, .. } = backtrack::solve(&p, cfg);
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
    let backtrack::BacktrackSolve { ending, stats, .. } = backtrack::solve(&p, cfg);
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
            let c = count(&p, consistency, CellOrder::MrvDegree, None, None, &Watch::default());
            assert!(c.complete);
            assert_eq!(c.solutions, want, "{w}x{h} seed {seed} {consistency:?}");
        }
    }
}

#[test]
fn brendan_set_1_6x6_has_65_solutions_up_to_rotation() {
    let Some(dir) = puzzles("brendan_set_1_6x6_has_65_solutions") else { return };
    let p = brendan(&dir, 1, 6, 6);
    let c = concur::search::backtrack::count(
        &p,
        Consistency::Ac4,
        concur::search::backtrack::CellOrder::Scan,
        None,
        None,
        &Watch::default(),
    );
    assert!(c.complete);
    assert_eq!((c.solutions, c.up_to_rotation), (260, Some(65)));
}

#[test]
fn generate_unique_gives_a_puzzle_with_one_solution() {
    use concur::puzzle::generate::GenerateOptions;
    use concur::search::backtrack::{CellOrder, count};
    use concur::search::unique::generate_unique;
    let opts = GenerateOptions { width: 5, height: 5, frame_colors: None, inner_colors: None, seed: 1 };
    let u = generate_unique(&opts, 50, 2_000_000, &Watch::default()).unwrap().expect("a unique 5x5 within 50 draws");
    let c = count(&u.puzzle, Consistency::Ac3, CellOrder::Mrv, None, None, &Watch::default());
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
            let want = count(&p, Consistency::Ac4, CellOrder::MrvDegree, None, limit, &Watch::default());
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

/// Keeps a journaled count's plan and finished subtrees in memory.
#[derive(Default)]
struct Kept {
    plan: std::sync::Mutex<Option<concur::search::scan::ScanPlan>>,
    done: std::sync::Mutex<Vec<concur::search::scan::TaskDone>>,
}

impl concur::search::scan::Journal for Kept {
    fn plan(&self, plan: &concur::search::scan::ScanPlan) {
        *self.plan.lock().unwrap() = Some(plan.clone());
    }
    fn task(&self, done: &concur::search::scan::TaskDone) {
        self.done.lock().unwrap().push(done.clone());
    }
}

#[test]
fn scan_counts_split_across_runs_and_resumed_from_journals_equal_one_whole_count() {
    use concur::puzzle::generate::{GenerateOptions, generate};
    use concur::search::scan::{ScanOptions, count, count_journaled};
    let mut checked = 0;
    for (w, h, f, inner, seed) in [(5, 5, 3, 3, 20), (5, 5, 3, 3, 21), (5, 4, 2, 3, 10), (6, 4, 3, 3, 30)] {
        let Ok((p, _)) =
            generate(&GenerateOptions { width: w, height: h, frame_colors: Some(f), inner_colors: Some(inner), seed })
        else {
            continue;
        };
        for symmetry in [true, false] {
            let base = ScanOptions { symmetry, threads: 2, probes: 100, min_tasks: 40, ..Default::default() };
            let whole = count(&p, &base);
            assert!(whole.complete);
            if whole.solutions < 3 {
                continue;
            }
            checked += 1;
            // Two partial runs from both ends, stopped by a solution limit, then a resume.
            let kept = Kept::default();
            let fwd = count_journaled(&p, &ScanOptions { limit: Some(1), ..base.clone() }, None, &kept).unwrap();
            let plan = kept.plan.lock().unwrap().clone().expect("the plan is reported first");
            let back = Kept::default();
            let prior = kept.done.lock().unwrap().clone();
            let rev = ScanOptions { limit: Some(1), reverse: true, ..base.clone() };
            count_journaled(&p, &rev, Some((&plan, &prior)), &back).unwrap();
            let mut all = prior.clone();
            all.extend(back.done.lock().unwrap().iter().cloned());
            // Recorded twice counts once.
            all.extend(prior.iter().cloned());
            let fin = Kept::default();
            let resumed = count_journaled(&p, &base, Some((&plan, &all)), &fin).unwrap();
            let tag = format!("{w}x{h} seed {seed} symmetry {symmetry}");
            assert!(resumed.complete, "{tag}");
            assert_eq!((resumed.solutions, resumed.up_to_rotation), (whole.solutions, whole.up_to_rotation), "{tag}");
            assert_eq!(resumed.nodes, whole.nodes, "{tag}");
            assert_eq!(resumed.tasks, whole.tasks, "{tag}");
            assert!(resumed.tasks_resumed > 0 && resumed.tasks_resumed < resumed.tasks, "{tag}: {resumed:?} {fwd:?}");
            // Together the three runs record every subtree.
            let mut seen: Vec<u64> = all.iter().chain(fin.done.lock().unwrap().iter()).map(|d| d.task).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len() as u64, whole.tasks, "{tag}");
            // A journal's boards are checked again: a tampered board or count is refused.
            if let Some(i) = all.iter().position(|d| !d.boards.is_empty()) {
                let mut bad = all.clone();
                let b = &mut bad[i].boards[0];
                let last = b.len() - 1;
                b.swap(0, last);
                let err = count_journaled(&p, &base, Some((&plan, &bad)), &Kept::default());
                assert!(err.is_err(), "{tag}: a swapped board was taken");
                let mut bad = all.clone();
                bad[i].solutions += 1;
                assert!(count_journaled(&p, &base, Some((&plan, &bad)), &Kept::default()).is_err(), "{tag}");
            }
            // A plan of another puzzle is refused.
            let (other, _) = generated(5, 5, 99);
            assert!(count_journaled(&other, &base, Some((&plan, &all)), &Kept::default()).is_err(), "{tag}");
            // So is a plan edited to scan the other way (without turn symmetry there is no
            // mirrored puzzle to scan columns of).
            let flipped = concur::search::scan::ScanPlan { column_scan: !plan.column_scan, ..plan.clone() };
            assert!(count_journaled(&p, &base, Some((&flipped, &all)), &Kept::default()).is_err(), "{tag}");
        }
    }
    assert!(checked >= 4, "only {checked} puzzles had enough solutions");
}

#[test]
fn a_count_journal_file_survives_a_cut_short_last_line() {
    use concur::search::journal::{JsonlJournal, read};
    use concur::search::scan::{ScanOptions, count, count_journaled};
    let dir = std::env::temp_dir().join(format!("concur-journal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("count.jsonl");
    let _ = std::fs::remove_file(&path);
    let (p, _) = generated(5, 5, 3);
    let opts = ScanOptions { threads: 2, probes: 100, min_tasks: 30, ..Default::default() };
    let whole = count(&p, &opts);
    let (j, rec) = JsonlJournal::open(&path).unwrap();
    assert!(rec.plan.is_none() && rec.done.is_empty());
    let first = count_journaled(&p, &opts, None, &j).unwrap();
    j.finish().unwrap();
    assert_eq!(first.solutions, whole.solutions);
    // Drop the second half of the lines and cut the last kept one short, as a stop
    // mid-write would.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let keep = lines.len() / 2;
    let mut cut = lines[..keep].join("\n");
    cut.push('\n');
    cut.push_str(&lines[keep][..lines[keep].len() / 2]);
    std::fs::write(&path, cut).unwrap();
    let (j, rec) = JsonlJournal::open(&path).unwrap();
    assert_eq!(rec.done.len(), keep - 1);
    let plan = rec.plan.clone().unwrap();
    let again = count_journaled(&p, &opts, Some((&plan, &rec.done)), &j).unwrap();
    j.finish().unwrap();
    assert_eq!((again.solutions, again.nodes, again.tasks_resumed), (whole.solutions, whole.nodes, keep as u64 - 1));
    // Every line is whole again, and the file now records every subtree.
    let rec = read(&path).unwrap();
    assert_eq!(rec.done.len() as u64, whole.tasks);
    // A line that is not JSON before the last one is an error, not silently skipped.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("{\"task\"", "{\"tusk\"", 1)).unwrap();
    assert!(read(&path).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The set 1 8x8 count of BENCHMARKS.md, read back from its committed journal: every
/// recorded board passes the exact check again (and with its turned copies counts four),
/// every subtree of the recorded plan is there, and the totals are the known 13 up to
/// turning, 52 in all. The walk itself took about 11 thread-hours; the read takes a second.
#[test]
fn brendan_set_1_8x8_journal_holds_the_13_known_solutions() {
    use concur::search::journal::read;
    use concur::search::scan::{NoJournal, ScanOptions, count_journaled};
    let Some(dir) = puzzles("brendan_set_1_8x8_journal_holds_the_13_known_solutions") else { return };
    let p = brendan(&dir, 1, 8, 8);
    let gz = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .join("benches/results/count/count-set1-8x8.jsonl.gz");
    let out = std::process::Command::new("gzip").arg("-dc").arg(&gz).output().expect("gzip runs");
    assert!(out.status.success(), "gzip -dc {}", gz.display());
    let path = std::env::temp_dir().join(format!("concur-count8-{}.jsonl", std::process::id()));
    std::fs::write(&path, &out.stdout).unwrap();
    let rec = read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let plan = rec.plan.expect("the journal starts with its plan");
    let opts = ScanOptions { symmetry: true, threads: 2, ..Default::default() };
    let c = count_journaled(&p, &opts, Some((&plan, &rec.done)), &NoJournal).unwrap();
    assert!(c.complete);
    assert_eq!(c.tasks_resumed, c.tasks);
    assert_eq!((c.solutions, c.up_to_rotation), (52, Some(13)));
}

fn scan_solve(p: &concur::puzzle::Puzzle, seed: u64, max_nodes: u64) -> concur::search::scan::ScanSolve {
    use concur::search::scan::{ScanSolveConfig, solve};
    let cfg =
        ScanSolveConfig { seed, max_nodes: Some(max_nodes), restart_base: 4096, probes: 200, ..Default::default() };
    solve(p, &cfg, &|_| {})
}

#[test]
fn scan_solver_solves_brendan_set_1_up_to_6x6_and_the_clue_puzzles() {
    let Some(dir) = puzzles("scan_solver_solves_brendan_set_1_up_to_6x6_and_the_clue_puzzles") else { return };
    let mut all: Vec<(String, concur::puzzle::Puzzle)> = Vec::new();
    for w in 3..=6 {
        for h in 3..=w {
            all.push((format!("set 1 {w}x{h}"), brendan(&dir, 1, w, h)));
        }
    }
    for i in 1..=4 {
        let path = dir.join(format!("eternity2_dev_cc0/e2-clue-clue{i}.json"));
        all.push((format!("clue {i}"), format::read_puzzle(&std::fs::read(&path).unwrap()).unwrap()));
    }
    for (name, p) in &all {
        for seed in 0..2 {
            let r = scan_solve(p, seed, 200_000_000);
            let b = r
                .board
                .as_ref()
                .unwrap_or_else(|| panic!("{name} seed {seed}: {:?} after {} nodes", r.ending, r.nodes));
            assert!(verify::check(p, b).valid, "{name} seed {seed}");
            assert_eq!(r.ending, Ending::Stopped);
            assert_eq!(r.best_depth, p.cells());
        }
    }
}

/// Every solution the randomised solver finds, over many seeds and both tree choices, is one
/// of the solutions a complete enumeration lists, and the seeds reach more than one of them.
#[test]
fn scan_solver_finds_only_enumerated_solutions_and_seeds_vary_them() {
    use concur::search::scan::{ScanSolveConfig, TreeChoice, solve};
    for (w, h, seed) in [(4, 4, 3), (5, 3, 1), (5, 4, 2)] {
        let (p, _) = generated(w, h, seed);
        let cfg = BacktrackConfig { restarts: false, randomize: false, ..Default::default() };
        let mut all = std::collections::HashSet::new();
        let (ending, _) = Backtracker::new(&p, cfg).run(|b| {
            all.insert(b.cells.clone());
            Next::Continue
        });
        assert_eq!(ending, Ending::Exhausted);
        let mut seen = std::collections::HashSet::new();
        for s in 0..40 {
            for choice in [TreeChoice::Estimate, TreeChoice::Random] {
                let cfg = ScanSolveConfig { seed: s, choice, restart_base: 64, probes: 50, ..Default::default() };
                let r = solve(&p, &cfg, &|_| {});
                let b = r.board.unwrap_or_else(|| panic!("{w}x{h}: {:?}", r.ending));
                assert!(all.contains(&b.cells), "{w}x{h} seed {s}: a board the enumeration does not hold");
                seen.insert(b.cells);
            }
        }
        if all.len() > 1 {
            assert!(seen.len() > 1, "{w}x{h}: 80 runs found one of {} solutions only", all.len());
        }
    }
}

#[test]
fn scan_solver_is_reproducible_per_seed_and_honours_node_limits() {
    let (p, _) = generated(7, 7, 1);
    let a = scan_solve(&p, 5, 300_000_000);
    let b = scan_solve(&p, 5, 300_000_000);
    assert!(a.board.is_some(), "{:?}", a.ending);
    assert_eq!((a.board, a.nodes, a.restarts), (b.board, b.nodes, b.restarts));
    let (p, _) = generated(8, 8, 1);
    for limit in [1, 1_000, 100_000] {
        let r = scan_solve(&p, 1, limit);
        assert_eq!(r.ending, Ending::Limit);
        assert!(r.board.is_none());
        assert!(r.nodes <= limit, "{} nodes past a limit of {limit}", r.nodes);
    }
}

#[test]
fn scan_solver_proves_an_unsolvable_puzzle_has_no_solution() {
    let (p, _) = generated(4, 4, 2);
    // One inner side recoloured: the joins no longer pair up.
    let mut pieces = p.pieces().to_vec();
    let inner = pieces.iter().position(|q| q.iter().all(|&c| c != 0)).unwrap();
    pieces[inner][0] = if pieces[inner][0] == 1 { 2 } else { 1 };
    let bad = concur::puzzle::Puzzle::new(4, 4, pieces, Vec::new()).unwrap();
    assert_eq!(scan_count(&bad, false, 1).solutions, 0);
    let r = scan_solve(&bad, 1, 1_000_000_000);
    assert_eq!(r.ending, Ending::Exhausted);
    assert!(r.board.is_none());
}

#[test]
fn scan_solver_keeps_hints_on_square_and_rectangular_boards() {
    use concur::puzzle::Hint;
    for (w, h, seed) in [(6, 6, 4), (7, 4, 5), (4, 7, 6)] {
        let (p, planted) = generated(w, h, seed);
        let n = w * h;
        let hints: Vec<Hint> = [1, n / 2 + 1, n - w - 2]
            .iter()
            .map(|&c| Hint { cell: c, piece: planted.cells[c].piece as usize, rot: planted.cells[c].rot })
            .collect();
        let hinted = concur::puzzle::Puzzle::new(w, h, p.pieces().to_vec(), hints.clone()).unwrap();
        for s in 0..3 {
            let r = scan_solve(&hinted, s, 500_000_000);
            let b = r.board.unwrap_or_else(|| panic!("{w}x{h} seed {s}: {:?}", r.ending));
            assert!(verify::check(&hinted, &b).valid);
            for hint in &hints {
                assert_eq!((b.cells[hint.cell].piece as usize, b.cells[hint.cell].rot), (hint.piece, hint.rot));
            }
        }
    }
}

/// Every method, run through `solve::solve` on one thread for a moment, reports the CPU time
/// its run spent, the threads it starts for itself included (the scan walks on a thread of
/// its own: before this was counted, its records said a few milliseconds for seconds of
/// search). The floor: no method does a unit of its work (a node, a move, an iteration) in
/// under a nanosecond. The ceiling: one walk and one watcher cannot spend more than twice the
/// time that passed.
#[test]
fn every_method_reports_the_cpu_time_of_its_run() {
    use concur::cancel::Cancel;
    use concur::method::MethodName;
    use concur::solve::{self, SolveSpec, run_key_methods};
    let (p, _) = generated(8, 8, 1);
    let threaded = run_key_methods("threads").unwrap();
    for m in MethodName::ALL {
        let mut given = serde_json::json!({ "method": m.name(), "time_limit": 0.5, "seed": 3 });
        if threaded.contains(&m) {
            given["threads"] = 1.into();
        }
        let spec = SolveSpec::from_given(given.as_object().unwrap()).unwrap();
        let s = solve::solve(&p, &spec, &concur::backend::CpuBackend, &Cancel::new(), &mut |_| {}).unwrap();
        if cfg!(not(target_os = "linux")) {
            continue;
        }
        let cpu = s.cpu_s.unwrap_or_else(|| panic!("{}: no CPU time", m.name()));
        let (floor, wall) = (s.work as f64 * 1e-9, s.report.wall_s);
        assert!(
            cpu >= floor && cpu <= 2.0 * wall + 0.05,
            "{}: {cpu} s of CPU for {} {} in {wall} s",
            m.name(),
            s.work,
            s.work_unit
        );
    }
}
