//! A map run (rrr, dm, dc) stopped by its token, saved and continued through the one entry point
//! (`solve::solve` with `SolveSpec::save_at_stop` and `SolveSpec::resume`): the parts find
//! the same solutions at the same iterations, end with the same trials and board, and their
//! counters add up to the run that never stopped. The oracle is that run, on the same seed.
use crate::common::generated;
use concur::backend::capability::{self, Place};
use concur::backend::{CpuBackend, MapJob, MapSnapshot};
use concur::batch::{SnapshotError, SolutionAt};
use concur::cancel::Cancel;
use concur::puzzle::Puzzle;
use concur::solve::{self, Event, SolveError, SolveSpec, Solved};
use serde_json::{Value, json};

fn spec(v: Value) -> SolveSpec {
    SolveSpec::from_given(v.as_object().unwrap()).unwrap()
}

fn run(p: &Puzzle, spec: &SolveSpec, cancel: &Cancel, mut heard: impl FnMut() + Send) -> Result<Solved, SolveError> {
    solve::solve(p, spec, &CpuBackend, cancel, &mut |e| {
        if let Event::Map(_) = e {
            heard();
        }
    })
}

/// The run in parts: a stop request after round `k` of a part for each `k` of `stops`, each
/// part's snapshot written as JSON and read back into the next part's spec.
fn in_parts(p: &Puzzle, whole: &SolveSpec, stops: &[usize]) -> Vec<Solved> {
    let (mut parts, mut resume) = (Vec::new(), None);
    for k in stops.iter().copied().map(Some).chain([None]) {
        let cancel = Cancel::new();
        let spec = SolveSpec { resume: resume.take(), save_at_stop: true, ..whole.clone() };
        let (token, mut rounds) = (cancel.clone(), 0);
        let solved = run(p, &spec, &cancel, move || {
            rounds += 1;
            if Some(rounds) == k {
                token.cancel();
            }
        })
        .unwrap();
        let snapshot = solved.snapshot.clone();
        assert!(snapshot.is_none() || (solved.cancelled && k.is_some()), "a snapshot without a stop");
        parts.push(solved);
        let Some(s) = snapshot else { return parts };
        let text = s.to_json().unwrap();
        let back = MapSnapshot::from_json(&text).unwrap();
        assert_eq!(back, s, "the snapshot reads back as written");
        resume = Some(back);
    }
    parts
}

/// Checks that `parts` add up to `whole`; returns how many parts the token cut.
fn same_run(parts: &[Solved], whole: &Solved, what: &str) -> usize {
    let last = parts.last().unwrap();
    assert_eq!(parts.iter().map(|s| s.work).sum::<u64>(), whole.work, "{what}: work");
    assert_eq!(last.trials, whole.trials, "{what}: the trials");
    let iters = |s: &Solved| serde_json::to_value(&s.report).unwrap()["trial_iterations"].as_u64().unwrap();
    assert_eq!(parts.iter().map(iters).sum::<u64>(), iters(whole), "{what}: the reports' trial-iterations");
    match &whole.found {
        Some(found) => {
            let all: Vec<SolutionAt> = parts.iter().flat_map(|s| s.found.clone().unwrap()).collect();
            assert_eq!(&all, found, "{what}: the solutions");
            assert!(!found.is_empty(), "{what}: nothing to compare");
            let sum = |f: fn(&Solved) -> Option<u64>| parts.iter().map(|s| f(s).unwrap()).sum::<u64>();
            assert_eq!(sum(|s| s.solutions), whole.solutions.unwrap(), "{what}");
            assert_eq!(sum(|s| s.distinct_solutions), whole.distinct_solutions.unwrap(), "{what}");
            // The boards too, in the report's list.
            let boards = |s: &Solved| s.report.solutions.iter().flatten().map(|f| f.board.clone()).collect::<Vec<_>>();
            assert_eq!(parts.iter().flat_map(boards).collect::<Vec<_>>(), boards(whole), "{what}: the boards");
        }
        None => {
            assert_eq!(last.report.best_score, whole.report.best_score, "{what}");
            assert_eq!(
                (last.report.solved, &last.report.board, &last.mechanism),
                (whole.report.solved, &whole.report.board, &whole.mechanism),
                "{what}: the outcome"
            );
        }
    }
    parts.iter().filter(|s| s.snapshot.is_some()).count()
}

#[test]
fn a_map_run_stopped_and_continued_through_solve_is_the_run_that_never_stopped() {
    let mut cut = 0;
    for method in ["rrr", "dm", "dc"] {
        for (w, h, seed, rate, iters) in [(4, 4, 1, true, 2_000), (5, 4, 2, true, 1_500), (6, 6, 3, false, 20_000)] {
            let (p, _) = generated(w, h, seed);
            let mut given = json!({"method": method, "seed": seed, "trials": 3, "max_iters": iters,
                "backend": "cpu", "threads": 2});
            if rate {
                given["keep_going"] = true.into();
            }
            let whole_spec = spec(given);
            let whole = run(&p, &whole_spec, &Cancel::new(), || {}).unwrap();
            assert!(whole.snapshot.is_none(), "a run that was not stopped keeps no snapshot");
            for stops in [&[2usize][..], &[1, 5, 3]] {
                let what = format!("{method} {w}x{h} seed {seed}, stops {stops:?}");
                cut += same_run(&in_parts(&p, &whole_spec, stops), &whole, &what);
            }
        }
    }
    assert!(cut >= 24, "only {cut} parts were cut");
}

#[test]
fn a_snapshot_is_refused_by_another_run_and_on_the_gpu() {
    let (p, _) = generated(6, 6, 5);
    let base = json!({"method": "rrr", "seed": 1, "trials": 2, "max_iters": 5_000, "backend": "cpu",
        "all_trials": true});
    let cancel = Cancel::new();
    cancel.cancel();
    let save = SolveSpec { save_at_stop: true, ..spec(base.clone()) };
    let stopped = run(&p, &save, &cancel, || {}).unwrap();
    let snap = stopped.snapshot.expect("a run stopped by its token keeps a snapshot");
    assert_eq!(snap.trial_iterations(), 2 * 64, "the stop waits for the round's end");
    assert_eq!(stopped.work, 2 * 64);
    // The same run continues it.
    let ok = SolveSpec { resume: Some(snap.clone()), ..spec(base.clone()) };
    let rest = run(&p, &ok, &Cancel::new(), || {}).unwrap();
    let whole = run(&p, &spec(base.clone()), &Cancel::new(), || {}).unwrap();
    assert_eq!(rest.work + stopped.work, whole.work);
    assert_eq!(rest.trials, whole.trials);
    // Another puzzle, seed, batch, method or option is refused, naming what differs.
    let refused = |p: &Puzzle, v: Value| {
        let s = SolveSpec { resume: Some(snap.clone()), ..spec(v.clone()) };
        match run(p, &s, &Cancel::new(), || {}) {
            Err(SolveError::Engine(e)) => e.to_string(),
            Err(SolveError::Snapshot(e)) => e.to_string(),
            Err(e) => panic!("{v}: {e}"),
            Ok(_) => panic!("{v}: a snapshot of another run was continued"),
        }
    };
    let with = |key: &str, value: Value| {
        let mut v = base.clone();
        v[key] = value;
        v
    };
    let e = refused(&generated(6, 6, 6).0, base.clone());
    assert!(e.contains("its puzzle is 6x6 puzzle"), "{e}");
    assert!(refused(&p, with("seed", 2.into())).contains("its seed is 1, this run's is 2"));
    assert!(refused(&p, with("trials", 3.into())).contains("its trials is 2"));
    assert!(refused(&p, with("method", "dm".into())).contains("its method is rrr, this run's is dm"));
    let dc = json!({"method": "dc", "seed": 1, "trials": 2, "backend": "cpu"});
    assert!(refused(&p, dc).contains("its method is rrr, this run's is dc"));
    let scan = json!({"method": "scan", "seed": 1});
    assert!(refused(&p, scan).contains("its method is rrr, this run's is scan"));
    assert!(refused(&p, with("beta", 0.8.into())).contains("its beta is 0.7, this run's is 0.8"));
    let e = refused(&p, with("join_weights", json!([1, 1, 3])));
    assert!(e.contains("its join_weights is Some([1.0, 1.0, 4.0])"), "{e}");
    let rate =
        json!({"method": "rrr", "seed": 1, "trials": 2, "max_iters": 5_000, "backend": "cpu", "keep_going": true});
    let e = refused(&p, rate);
    assert!(e.starts_with("the snapshot does not fit this run: its"), "{e}");
    // A text that is not a snapshot, or of another version, does not read.
    let text = snap.to_json().unwrap();
    assert!(matches!(MapSnapshot::from_json("{}"), Err(SnapshotError::Format(_))));
    assert!(matches!(MapSnapshot::from_json(&text[..text.len() / 2]), Err(SnapshotError::Format(_))));
    let other = text.replacen("\"version\":1", "\"version\":7", 1);
    assert_eq!(MapSnapshot::from_json(&other), Err(SnapshotError::Version { found: 7, expected: 1 }));
    // The GPU backend does not continue one (the capability table's refusal).
    let mut cfg = ok.map_config(&Cancel::new()).unwrap();
    cfg.assign = concur::f1::AssignOn::GpuJv;
    let needs = capability::needs(MapJob::F1(&cfg), cfg.assign, 1);
    let e = capability::check(Place::Gpu, &needs).unwrap_err();
    assert!(e.why.contains("continuing a run from its snapshot"), "{e}");
    assert!(capability::check(Place::Cpu, &capability::needs(MapJob::F1(&cfg), concur::f1::AssignOn::Cpu, 1)).is_ok());
}

#[test]
fn only_a_stop_by_the_token_keeps_a_snapshot() {
    let (p, _) = generated(4, 4, 1);
    let base = json!({"method": "rrr", "seed": 1, "trials": 2, "max_iters": 300, "backend": "cpu"});
    let save = |v: Value| SolveSpec { save_at_stop: true, ..spec(v) };
    // A run that ends at its budget or its solution keeps none, nor one stopped without asking.
    let done = run(&p, &save(base.clone()), &Cancel::new(), || {}).unwrap();
    assert!(done.snapshot.is_none() && !done.cancelled);
    let cancel = Cancel::new();
    cancel.cancel();
    let unasked = run(&p, &spec(base.clone()), &cancel, || {}).unwrap();
    assert!(unasked.snapshot.is_none() && unasked.cancelled);
    // A run whose time limit has passed ended at its limit, token or not.
    let mut timed = base.clone();
    timed["time_limit"] = 0.0.into();
    timed.as_object_mut().unwrap().remove("max_iters");
    assert!(run(&p, &save(timed), &cancel, || {}).unwrap().snapshot.is_none());
    // The searches keep none.
    let scan = save(json!({"method": "scan", "seed": 1}));
    assert!(run(&p, &scan, &cancel, || {}).unwrap().snapshot.is_none());
}
