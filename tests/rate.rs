//! Rate mode (`--keep-going`): a map batch that records every verified solution and goes on.
//! The oracles: each trial's first solution is the one an all-trials run gives (until then the
//! trial's path is the same); every recorded board passes the exact verifier; the classes up
//! to turning agree with a pairwise comparison of the boards under every turn; the record is
//! the same on one thread and on two; each solution's JSON line is on file when it is found.
use crate::common::{concur_env, generated, scratch};
use concur::backend::{Backend, Batch, Certify, CpuBackend, EngineError, Listener, MapJob, Place};
use concur::batch::MapRun;
use concur::batch::{Found, MapResult, turn_class_key};
use concur::cancel::Cancel;
use concur::dc::{self, DcConfig, DcLayout};
use concur::f1::map::{self, MapConfig};
use concur::limits::Estimate;
use concur::puzzle::{Board, Puzzle, format};
use concur::solve::{self, SolveSpec};
use concur::verify;
use concur_lab::diagnose::turned;

fn f1_rate(kind: concur::batch::MapKind, seed: u64, iters: u64) -> MapConfig {
    MapConfig {
        kind,
        keep_going: true,
        run: MapRun { trials: 4, max_iters: iters, seed, ..Default::default() },
        ..Default::default()
    }
}

fn on_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(f)
}

/// What must agree between two runs of the same seed.
fn record(r: &MapResult) -> Vec<(usize, u64, u64, usize, Board)> {
    r.rate
        .as_ref()
        .unwrap()
        .solutions
        .iter()
        .map(|f| (f.trial, f.segment_iterations, f.trial_iteration, f.class, f.board.clone()))
        .collect()
}

/// Each solution verifies; per trial, its segments follow one another: a segment starts where
/// the trial's previous solution was, and they all lie within the trial's iterations.
fn check_solutions(p: &Puzzle, r: &MapResult, what: &str) {
    let rate = r.rate.as_ref().expect("a rate-mode result");
    assert!(!rate.solutions.is_empty(), "{what}: no solution");
    assert_eq!(rate.rejected, 0, "{what}");
    let mut last = vec![0u64; r.trials.len()];
    for (i, f) in rate.solutions.iter().enumerate() {
        assert_eq!(f.index, i);
        assert!(verify::check(p, &f.board).valid, "{what}: solution {i} does not verify");
        assert_eq!(f.trial_iteration - f.segment_iterations, last[f.trial], "{what}: solution {i}'s segment");
        assert!(f.segment_iterations >= 1);
        last[f.trial] = f.trial_iteration;
        let back = format::read_solution(f.board_text.as_bytes(), p).unwrap();
        assert_eq!(back, f.board, "{what}: the board text reads back");
        assert!(f.viewer_link.as_deref().is_some_and(|l| l.starts_with("https://")), "{what}");
    }
    for (t, tr) in r.trials.iter().enumerate() {
        assert!(last[t] <= tr.iterations, "{what}: trial {t}");
        let n = rate.solutions.iter().filter(|f| f.trial == t).count() as u64;
        assert_eq!(tr.solutions, n, "{what}: trial {t}'s count");
    }
    assert_eq!(r.trial_iterations, r.trials.iter().map(|t| t.iterations).sum::<u64>());
    let first = &rate.solutions[0];
    assert_eq!(r.solution.as_ref().map(|s| (s.0, s.1)), Some((first.trial, first.trial_iteration)));
}

/// The slow twin of the classes: two boards are of one class when one is a turn of the
/// other (every quarter turn on a square board, the half turn on another).
fn brute_classes(boards: &[Board]) -> (usize, Vec<usize>) {
    let turns: &[u8] = if boards[0].width == boards[0].height { &[0, 1, 2, 3] } else { &[0, 2] };
    let mut reps: Vec<&Board> = Vec::new();
    let mut class = Vec::new();
    for b in boards {
        let same = reps.iter().position(|r| turns.iter().any(|&k| turned(r, k) == *b));
        class.push(same.unwrap_or_else(|| {
            reps.push(b);
            reps.len() - 1
        }));
    }
    (reps.len(), class)
}

#[test]
fn rate_mode_records_every_solution_verified_and_the_same_on_any_threads() {
    use concur::batch::MapKind;
    for (kind, w, h, seed) in [(MapKind::Rrr, 4, 4, 1), (MapKind::Dm, 4, 4, 2), (MapKind::Rrr, 5, 4, 3)] {
        let (p, _) = generated(w, h, seed);
        let cfg = f1_rate(kind, seed, 6_000);
        let what = format!("{kind:?} {w}x{h}");
        let one = on_threads(1, || map::solve(&p, cfg.clone(), |_| {}).unwrap());
        check_solutions(&p, &one, &what);
        let two = on_threads(2, || map::solve(&p, cfg.clone(), |_| {}).unwrap());
        assert_eq!(record(&one), record(&two), "{what}: the record depends on the threads");
        // Every trial ran its whole budget: a solution does not end the batch.
        assert!(one.trials.iter().all(|t| t.iterations == 6_000), "{what}");
        let rate = one.rate.as_ref().unwrap();
        assert!(rate.solutions.len() > one.trials.len(), "{what}: {} solutions only", rate.solutions.len());
        // The classes against the pairwise comparison.
        let boards: Vec<Board> = rate.solutions.iter().map(|f| f.board.clone()).collect();
        let (n, class) = brute_classes(&boards);
        assert_eq!(rate.distinct, n, "{what}");
        let fast: Vec<usize> = rate.solutions.iter().map(|f| f.class).collect();
        assert_eq!(fast, class, "{what}: the classes");
        let news: Vec<bool> = rate.solutions.iter().map(|f| f.new_class).collect();
        let want: Vec<bool> = class.iter().enumerate().map(|(i, c)| !class[..i].contains(c)).collect();
        assert_eq!(news, want, "{what}");
    }
}

#[test]
fn each_trials_first_solution_is_the_all_trials_runs() {
    for seed in 0..3 {
        let (p, _) = generated(5, 5, seed);
        let cfg = f1_rate(concur::batch::MapKind::Rrr, seed, 8_000);
        let rate = map::solve(&p, cfg.clone(), |_| {}).unwrap();
        let all = map::solve(&p, MapConfig { keep_going: false, all_trials: true, ..cfg }, |_| {}).unwrap();
        assert!(all.rate.is_none());
        let found = &rate.rate.as_ref().unwrap().solutions;
        for (t, tr) in all.trials.iter().enumerate() {
            let first = found.iter().find(|f| f.trial == t).map(|f| f.trial_iteration);
            assert_eq!(first, tr.solved_at, "seed {seed} trial {t}");
        }
    }
}

#[test]
fn divide_and_concur_runs_in_rate_mode_too() {
    let (p, _) = generated(4, 4, 3);
    let cfg = DcConfig {
        keep_going: true,
        layout: DcLayout::Hybrid,
        run: MapRun { trials: 4, max_iters: 3_000, seed: 3, ..Default::default() },
        ..crate::common::dc_plain()
    };
    let a = on_threads(1, || dc::solve(&p, cfg.clone(), |_| {}).unwrap());
    check_solutions(&p, &a, "dc");
    let b = on_threads(2, || dc::solve(&p, cfg.clone(), |_| {}).unwrap());
    assert_eq!(record(&a), record(&b));
    let all = dc::solve(&p, DcConfig { keep_going: false, all_trials: true, ..cfg }, |_| {}).unwrap();
    for (t, tr) in all.trials.iter().enumerate() {
        let first = a.rate.as_ref().unwrap().solutions.iter().find(|f| f.trial == t).map(|f| f.trial_iteration);
        assert_eq!(first, tr.solved_at, "dc trial {t}");
    }
}

#[test]
fn a_board_and_its_turns_share_a_class_and_rectangles_turn_by_halves() {
    for (w, h, seed) in [(4, 4, 1), (5, 5, 2), (6, 4, 3)] {
        let (p, sol) = generated(w, h, seed);
        let key = turn_class_key(&sol);
        let turns: &[u8] = if w == h { &[1, 2, 3] } else { &[2] };
        for &k in turns {
            let t = turned(&sol, k);
            assert!(verify::check(&p, &t).valid, "a turned solution solves");
            assert_eq!(turn_class_key(&t), key, "{w}x{h} turn {k}");
        }
        // A board that differs in one rotation is of another class.
        let mut other = sol.clone();
        other.cells[0].rot = (other.cells[0].rot + 1) % 4;
        assert_ne!(turn_class_key(&other), key);
    }
}

#[test]
fn the_sink_hears_every_solution_in_order_and_its_errors_do_not_stop_the_run() {
    let (p, _) = generated(4, 4, 5);
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Found>::new()));
    let h = heard.clone();
    let sink = concur::batch::SolutionSink::new(move |f: &Found| {
        h.lock().unwrap().push(f.clone());
        if f.index == 1 { Err("disk full".into()) } else { Ok(()) }
    });
    let mut cfg = f1_rate(concur::batch::MapKind::Rrr, 5, 4_000);
    cfg.run.on_solution = Some(sink);
    let r = map::solve(&p, cfg, |_| {}).unwrap();
    let rate = r.rate.unwrap();
    assert_eq!(*heard.lock().unwrap(), rate.solutions);
    assert!(rate.solutions.len() > 2);
    assert_eq!(rate.sink_error.as_deref(), Some("disk full"));
}

/// A backend that says it is a GPU and runs nothing: what the capability table refuses there
/// must be refused before any work.
struct FakeGpu;

impl Backend for FakeGpu {
    fn name(&self) -> String {
        "fake gpu".into()
    }
    fn place(&self) -> Place {
        Place::Gpu
    }
    fn estimate(&self, _: &Puzzle, _: MapJob<'_>, _: usize) -> Estimate {
        Estimate::default()
    }
    fn solve(&self, _: &Puzzle, _: MapJob<'_>, _: Certify, _: Listener) -> Result<Batch, EngineError> {
        panic!("a batch the GPU's column refuses must not be run")
    }
}

#[test]
fn a_gpu_backend_refuses_rate_mode_outside_its_device_loop_before_any_work() {
    let (p, _) = generated(4, 4, 1);
    for (method, extra) in [("rrr", ("assign", "cpu")), ("dm", ("assign", "cpu")), ("dc", ("layout", "plain"))] {
        let mut given = serde_json::json!({"method": method, "keep_going": true, "max_iters": 100});
        given[extra.0] = serde_json::Value::String(extra.1.into());
        let spec = SolveSpec::from_given(given.as_object().unwrap()).unwrap();
        let e = solve::solve(&p, &spec, &FakeGpu, &Cancel::new(), &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("--keep-going"), "{method}: {e}");
        assert!(spec.supported_by(&FakeGpu).is_err());
        assert!(spec.supported_by(&CpuBackend).is_ok());
    }
}

#[test]
fn the_command_line_appends_a_line_per_solution_and_prints_them_all() {
    let dir = scratch("rate-cli");
    let (p, _) = generated(4, 4, 2);
    let puzzle = dir.join("p.txt");
    std::fs::write(&puzzle, format::write_puzzle(&p)).unwrap();
    let lines = dir.join("solutions.jsonl");
    let (pz, ln) = (puzzle.to_str().unwrap(), lines.to_str().unwrap());
    let args = ["solve", pz, "--backend", "cpu", "--trials", "3", "--max-iters", "3000", "--seed", "4", "--keep-going"];
    let mut json_args = args.to_vec();
    json_args.extend(["--solutions", ln, "--json"]);
    let out = concur_env(&json_args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = j["solutions"].as_u64().unwrap();
    assert!(n >= 3, "{j}");
    assert_eq!(j["trial_iterations"].as_u64(), Some(9_000));
    assert_eq!(j["solution_list"].as_array().unwrap().len() as u64, n);
    assert!(j["distinct_solutions"].as_u64().unwrap() >= 1);
    let text = std::fs::read_to_string(&lines).unwrap();
    assert_eq!(text.lines().count() as u64, n);
    for (i, l) in text.lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["index"].as_u64(), Some(i as u64));
        assert_eq!((v["method"].as_str(), v["seed"].as_u64(), v["width"].as_u64()), (Some("rrr"), Some(4), Some(4)));
        let b = format::read_solution(v["board_text"].as_str().unwrap().as_bytes(), &p).unwrap();
        assert!(verify::check(&p, &b).valid);
        assert_eq!(
            v,
            j["solution_list"][i]
                .as_object()
                .map(|o| {
                    let mut o = o.clone();
                    for (k, x) in [
                        ("method", "rrr".into()),
                        ("seed", 4.into()),
                        ("trials", 3.into()),
                        ("width", 4.into()),
                        ("height", 4.into()),
                    ] {
                        o.insert(k.into(), x);
                    }
                    serde_json::Value::Object(o)
                })
                .unwrap()
        );
    }
    // The same seed again: the same solutions (the file is appended to).
    let again = concur_env(&json_args, &[]);
    let k: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    let boards = |v: &serde_json::Value| -> Vec<String> {
        v["solution_list"].as_array().unwrap().iter().map(|s| s["board_text"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(boards(&j), boards(&k));
    assert_eq!(std::fs::read_to_string(&lines).unwrap().lines().count() as u64, 2 * n);
    // In text, one line per solution with its viewer link.
    let out = concur_env(&args, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().filter(|l| l.starts_with("solution ") && l.contains("viewer: https://")).count() as u64, n);
    // Refusals, before any work.
    let mut bad = args.to_vec();
    bad.retain(|a| *a != "--keep-going");
    bad.extend(["--solutions", ln]);
    assert_eq!(concur_env(&bad, &[]).status.code(), Some(2), "--solutions without --keep-going");
    let out = concur_env(&["solve", pz, "--method", "scan", "--keep-going"], &[]);
    crate::common::assert_refused(&out, "--keep-going", "the scan in rate mode");
    // The GPU backend runs rate mode in its device loop, not with the host's assignments.
    let out =
        concur_env(&["solve", pz, "--backend", "gpu", "--assign", "cpu", "--keep-going", "--max-iters", "10"], &[]);
    assert_eq!(out.status.code(), Some(2), "the GPU host loop in rate mode: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_killed_run_keeps_every_solution_it_found() {
    let Some(dir) = crate::common::puzzles("a_killed_run_keeps_every_solution_it_found") else { return };
    let puzzle = dir.join("brendan_owen/pieces_set_1/pieces_05x05.txt");
    let out = scratch("rate-kill");
    let lines = out.join("s.jsonl");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_concur"))
        .args(["solve", puzzle.to_str().unwrap(), "--backend", "cpu", "--trials", "2", "--threads", "1"])
        .args(["--keep-going", "--time-limit", "60", "--solutions", lines.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&lines).map_or(0, |t| t.lines().count()) < 5 {
        assert!(start.elapsed().as_secs() < 50, "no five solutions in 50 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let p = format::read_puzzle(&std::fs::read(&puzzle).unwrap()).unwrap();
    let text = std::fs::read_to_string(&lines).unwrap();
    assert!(text.ends_with('\n'), "a line cut in half");
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let b = format::read_solution(v["board_text"].as_str().unwrap().as_bytes(), &p).unwrap();
        assert!(verify::check(&p, &b).valid);
    }
}

/// Rate mode on the GPU's device loop (`--keep-going`, both device JV kernels) against the
/// CPU backend on the same seeds: the same solutions, trial for trial and segment for
/// segment, every board verified; and the runs the GPU still refuses say why.
#[cfg(feature = "gpu")]
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn the_gpu_device_loop_records_the_cpu_backends_solutions_in_rate_mode() {
    use concur::backend::gpu::GpuBackend;
    use concur::f1::map::AssignOn;
    let Some(ctx) = crate::gpu::gpu("the_gpu_device_loop_records_the_cpu_backends_solutions_in_rate_mode") else {
        return;
    };
    let gpu = GpuBackend::new(ctx.clone());
    let (p, _) = generated(4, 4, 3);
    // Short runs: over longer ones the device's f32 duals and the host's f64 ones can part on
    // a near-tie of two assignments, and that segment's path with them (tests/gpu.rs).
    let cfg = MapConfig { restart_stall: Some(200), ..f1_rate(concur::batch::MapKind::Rrr, 7, 300) };
    let cpu = CpuBackend.solve(
        &p,
        MapJob::F1(&MapConfig { assign: AssignOn::Cpu, ..cfg.clone() }),
        Certify::None,
        &mut |_| {},
    );
    let cpu = cpu.unwrap().result;
    check_solutions(&p, &cpu, "cpu");
    for assign in [AssignOn::GpuJv, AssignOn::GpuJvSg] {
        let what = format!("gpu {assign:?}");
        let g =
            gpu.solve(&p, MapJob::F1(&MapConfig { assign, ..cfg.clone() }), Certify::None, &mut |_| {}).unwrap().result;
        check_solutions(&p, &g, &what);
        // The order found (and so the class numbers) follows each backend's rounds (64
        // iterations on the CPU, one submission on the device); the solutions themselves
        // are the same.
        let sorted = |r: &MapResult| {
            let mut v: Vec<_> = record(r).into_iter().map(|(t, seg, it, _, b)| (t, it, seg, b.cells)).collect();
            v.sort_by_key(|x| (x.0, x.1));
            v
        };
        let (a, b) = (sorted(&g), sorted(&cpu));
        let brief = |v: &[(usize, u64, u64, Vec<concur::puzzle::Placement>)]| -> Vec<(usize, u64, u64)> {
            v.iter().map(|x| (x.0, x.1, x.2)).collect()
        };
        assert_eq!(brief(&a), brief(&b), "{what}: the CPU backend's solutions (trial, iteration, segment)");
        assert_eq!(a, b, "{what}: the CPU backend's solution boards");
        assert_eq!(g.rate.as_ref().unwrap().distinct, cpu.rate.as_ref().unwrap().distinct, "{what}");
        eprintln!("{what}: {} solutions, {} distinct", record(&g).len(), g.rate.as_ref().unwrap().distinct);
    }
    // Over a long run the two device kernels, which agree bit for bit, give the same record
    // in the same order.
    let long = MapConfig { assign: AssignOn::GpuJv, run: MapRun { max_iters: 3000, ..cfg.run.clone() }, ..cfg.clone() };
    let a = gpu.solve(&p, MapJob::F1(&long), Certify::None, &mut |_| {}).unwrap().result;
    let b = gpu.solve(&p, MapJob::F1(&MapConfig { assign: AssignOn::GpuJvSg, ..long }), Certify::None, &mut |_| {});
    let b = b.unwrap().result;
    check_solutions(&p, &a, "gpu-jv, long");
    assert_eq!(record(&a).len(), record(&b).len());
    let mut ra: Vec<_> = record(&a).into_iter().map(|x| (x.0, x.2, x.4.cells)).collect();
    let mut rb: Vec<_> = record(&b).into_iter().map(|x| (x.0, x.2, x.4.cells)).collect();
    ra.sort();
    rb.sort();
    assert_eq!(ra, rb, "gpu-jv and gpu-jv-sg in rate mode");
    // The host loop on the GPU does not run rate mode; it says so.
    let host = MapConfig { assign: AssignOn::Cpu, ..cfg.clone() };
    assert!(gpu.supports(MapJob::F1(&host)).unwrap_err().to_string().contains("--keep-going"));
}
