//! Checks before the work (ARCHITECTURE.md §8): outputs that cannot be written, batches that do
//! not fit the memory and thread counts past the cores are refused or capped before any solving
//! or counting, in one line; and a board that cannot be written after the work is printed
//! instead of lost.
use crate::common::{Tmpfs, assert_refused, concur_env, generated, scratch};
use concur::puzzle::format;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn concur(args: &[&str]) -> std::process::Output {
    concur_env(args, &[])
}

/// A generated puzzle written to `dir`.
fn puzzle_file(dir: &Path, w: usize, h: usize, seed: u64) -> PathBuf {
    let path = dir.join(format!("p{w}x{h}-{seed}.txt"));
    std::fs::write(&path, format::write_puzzle(&generated(w, h, seed).0)).unwrap();
    path
}

/// Whether `--backend gpu` would run here (a build with the feature and an adapter).
fn have_gpu() -> bool {
    concur::backend::select(concur::backend::BackendChoice::Gpu, None).is_ok()
}

/// `concur solve p.txt --trials 10000000 --max-iters 1` asked for 32 GB and died with
/// "memory allocation failed" and exit 134; 100,000,000 trials asked for 320 GB. Now the
/// estimate is checked first, on both backends, under a memory cap that makes the test the
/// same on every machine.
#[test]
fn ten_million_trials_are_refused_before_allocating() {
    let dir = scratch("trials");
    let p = puzzle_file(&dir, 5, 5, 1);
    let mut backends = vec!["cpu"];
    if have_gpu() {
        backends.push("gpu");
    }
    for backend in backends {
        for (method, trials) in [("rrr", "10000000"), ("rrr", "100000000"), ("dm", "10000000"), ("dc", "10000000")] {
            let mut args = vec!["solve", s(&p), "--method", method, "--trials", trials, "--max-iters", "1"];
            args.extend(["--backend", backend]);
            if method == "dc" && backend == "gpu" {
                args.extend(["--layout", "plain"]);
            }
            let start = Instant::now();
            let out = concur_env(&args, &[("CONCUR_MAX_MEMORY", "4G")]);
            let what = format!("{method} {trials} on {backend}");
            assert_refused(&out, "trials fit", &what);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(&format!("{trials} trials of {method}")) && err.contains("GiB"), "{what}: {err}");
            assert!(out.stdout.is_empty(), "{what}: no run, no output");
            assert!(start.elapsed() < Duration::from_secs(20), "{what}: the refusal took {:?}", start.elapsed());
        }
    }
    // The most trials it says fit do run, and one more is refused (the cap is the budget).
    let cap = [("CONCUR_MAX_MEMORY", "48M")];
    let base = ["solve", s(&p), "--method", "rrr", "--max-iters", "1", "--backend", "cpu", "--threads", "1"];
    let out = concur_env(&[&base[..], &["--trials", "100000000"]].concat(), &cap);
    let err = String::from_utf8_lossy(&out.stderr);
    let fit: u64 = err.split("at most ").nth(1).and_then(|t| t.split(' ').next()).unwrap().parse().unwrap();
    assert!(fit > 100, "{err}");
    let out = concur_env(&[&base[..], &["--trials", &fit.to_string()]].concat(), &cap);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{fit} trials: {}", String::from_utf8_lossy(&out.stderr));
    let out = concur_env(&[&base[..], &["--trials", &(fit + 1).to_string()]].concat(), &cap);
    assert_refused(&out, "trials fit", "one trial more than fits");
    // A cap that is not a size is refused, not ignored.
    let out = concur_env(&[&base[..], &["--trials", "1"]].concat(), &[("CONCUR_MAX_MEMORY", "lots")]);
    assert_refused(&out, "CONCUR_MAX_MEMORY", "a bad cap");
}

/// `concur solve p.txt --method scan --threads 100000 --time-limit 1` panicked while spawning
/// threads ("failed to set up alternative stack") and exited 134. Thread counts past the cores
/// are now capped, with a note, for solve and count, and refused for a ladder, whose runs are
/// timed one per core.
#[test]
fn a_hundred_thousand_threads_are_capped_at_the_cores_or_refused() {
    let dir = scratch("threads");
    let p = puzzle_file(&dir, 5, 5, 2);
    let cores = concur::limits::cores();
    let note = format!("--threads 100000 is more than the {cores} cores here; using {cores}");
    let runs: Vec<Vec<&str>> = vec![
        vec!["solve", s(&p), "--method", "scan", "--threads", "100000", "--time-limit", "1", "--json"],
        vec!["solve", s(&p), "--method", "rrr", "--threads", "100000", "--backend", "cpu", "--json"],
        vec!["count", s(&p), "--engine", "scan", "--threads", "100000", "--json"],
    ];
    for args in runs {
        let out = concur(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.contains(&note) && !err.contains("panicked"), "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if v.get("threads").is_some() {
            assert_eq!(v["threads"], cores, "{args:?}: {v}");
        }
    }
    let cfg = dir.join("ladder.toml");
    std::fs::write(
        &cfg,
        "runs = 2\n[[instances]]\ngenerate = { width = 3, height = 3, seed = 1 }\n[[methods]]\nmethod = \"scan\"\n",
    )
    .unwrap();
    // A ladder times every run on a core of its own: more workers than cores are refused.
    let out = concur(&["ladder", s(&cfg), "--out", s(&dir.join("ladder")), "--threads", "100000"]);
    assert_refused(&out, "a ladder times each run on a core of its own", "ladder");
    let cores = cores.to_string();
    let out = concur(&["ladder", s(&cfg), "--out", s(&dir.join("ladder")), "--threads", &cores]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Every command with an output, aimed at `bad` (a file path) or `bad_dir` (a folder path).
fn runs_with_outputs<'a>(p: &'a str, sol: &'a str, cfg: &'a str, results: &'a str) -> Vec<(Vec<&'a str>, bool)> {
    // (arguments up to the output flag, whether the output is a folder)
    vec![
        (vec!["solve", p, "--method", "rrr", "--backend", "cpu", "--time-limit", "30", "--json", "-o"], false),
        (vec!["solve", p, "--method", "rrr", "--backend", "cpu", "--time-limit", "30", "--json", "--dump-state"], true),
        (vec!["count", p, "--engine", "scan", "--json", "--journal"], false),
        (vec!["ladder", cfg, "--out"], true),
        (vec!["report", results, "-o"], true),
        (vec!["render", p, sol, "-o"], false),
        (vec!["generate", "--width", "4", "--height", "4", "--seed", "1", "-o"], false),
        (vec!["generate", "--width", "4", "--height", "4", "--seed", "1", "--unique", "-o"], false),
    ]
}

/// Inputs for [`runs_with_outputs`]: a puzzle no method solves within seconds (a 10x10), a
/// solution to render, a ladder config, a folder of results.
fn output_inputs(dir: &Path) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let p = puzzle_file(dir, 10, 10, 5);
    let (q, b) = generated(10, 10, 5);
    assert_eq!(format::write_puzzle(&q), std::fs::read_to_string(&p).unwrap());
    let sol = dir.join("sol.txt");
    std::fs::write(&sol, format::write_solution(&b).unwrap()).unwrap();
    let cfg = dir.join("ladder.toml");
    std::fs::write(
        &cfg,
        format!("runs = 2\n[[instances]]\npath = {:?}\n[[methods]]\nmethod = \"hill\"\ntime_limit = 30\n", s(&p)),
    )
    .unwrap();
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let line = serde_json::json!({
        "instance": "a.txt", "width": 4, "height": 4, "colors": 5, "method": "rrr", "label": "rrr",
        "params": {}, "run": 0, "seed": 0, "backend": "cpu", "solved": true, "mechanism": "map", "work": 10,
        "work_unit": "iterations", "wall_s": 1.0, "best_score": 24, "max_score": 24, "version": "0"
    });
    std::fs::write(results.join("results.jsonl"), format!("{line}\n")).unwrap();
    (p, sol, cfg, results)
}

/// Nothing on stdout but, with `--json`, the error as one JSON object (`error`, `exit` 2).
fn only_the_error(out: &std::process::Output) -> bool {
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().is_empty()
        || (text.trim().lines().count() == 1
            && serde_json::from_str::<serde_json::Value>(text.trim())
                .is_ok_and(|v| v["error"].is_string() && v["exit"] == 2))
}

/// Runs every command of [`runs_with_outputs`] with its output at `target(is_folder)`: each
/// must be refused at once (exit 2, one line naming `needle`), before any work (no output, in
/// seconds, where the work would take 30 s).
fn assert_outputs_refused(dir: &Path, what: &str, needle: &str, target: impl Fn(bool) -> PathBuf) {
    let (p, sol, cfg, results) = output_inputs(dir);
    for (i, (mut args, folder)) in runs_with_outputs(s(&p), s(&sol), s(&cfg), s(&results)).into_iter().enumerate() {
        // A fresh name per command, unless the target is a path that exists on purpose.
        let t = target(folder);
        let t = if t.exists() { t } else { PathBuf::from(format!("{}-{i}", t.display())) };
        args.push(s(&t));
        let start = Instant::now();
        let out = concur(&args);
        let case = format!("{what}: {args:?}");
        assert_refused(&out, needle, &case);
        assert!(only_the_error(&out), "{case}: printed {}", String::from_utf8_lossy(&out.stdout));
        assert!(start.elapsed() < Duration::from_secs(10), "{case}: took {:?}", start.elapsed());
    }
}

/// `concur solve h07x07.txt --method scan -o /no/such/dir/x.sol --json` solved the puzzle, then
/// exited 2 with "cannot write", no JSON and the board nowhere. Every output is now checked
/// before the work: a missing folder, a path under a file, a folder where a file goes.
#[test]
fn an_unwritable_output_is_refused_before_the_work() {
    let dir = scratch("outputs");
    // The case as reported, on Brendan Owen's 7x7 when the sets are here.
    let h07 = crate::common::puzzles("an_unwritable_output_is_refused_before_the_work")
        .map(|d| d.join("brendan_owen/pieces_set_1/pieces_07x07.txt"))
        .unwrap_or_else(|| puzzle_file(&dir, 7, 7, 1));
    let out = concur(&["solve", s(&h07), "--method", "scan", "-o", "/no/such/dir/x.sol", "--json"]);
    assert_refused(&out, "cannot write /no/such/dir/x.sol", "the reported case");
    assert!(only_the_error(&out));
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    assert_outputs_refused(&dir, "missing folder", "cannot write", |folder| {
        if folder { file.join("sub") } else { dir.join("no/such/dir/out") }
    });
    assert_outputs_refused(&dir, "under a file", "cannot write", |_| file.join("out"));
    assert_outputs_refused(&dir, "a folder for a file", "cannot write", |folder| {
        if folder { file.clone() } else { dir.clone() }
    });
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

/// The same on a read-only and on a full file system (tmpfs mounts; skipped without root).
#[test]
fn a_read_only_or_full_target_is_refused_before_the_work() {
    let dir = scratch("outputs-fs");
    if let Some(ro) = Tmpfs::mount("read-only-target", "64k", true) {
        assert_outputs_refused(&dir, "read-only", "Read-only file system", |_| ro.dir.join("out"));
    }
    if let Some(full) = Tmpfs::mount("full-target", "64k", false) {
        full.fill();
        assert_outputs_refused(&dir, "full", "No space left", |_| full.dir.join("out"));
    }
}

/// Runs the binary under a file-size limit of `kib` KiB (`ulimit -f`, bash's units), which
/// makes any write past it fail as a full disk does.
fn concur_limited(kib: u32, args: &[&str]) -> std::process::Output {
    std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(crate::common::concur_bin())
        .args(args)
        .output()
        .expect("run bash")
}

/// A board that cannot be written after the work (here: past a file-size limit, which the
/// check's one-byte probe passes) is printed instead: in the JSON as "board", Brendan Owen's
/// text, which verifies; the file is left as it was; exit 2 with the reason in one line.
#[test]
fn a_board_that_cannot_be_written_is_printed_instead() {
    let dir = scratch("unwritten");
    let p = puzzle_file(&dir, 16, 16, 1);
    let puzzle = format::read_puzzle(&std::fs::read(&p).unwrap()).unwrap();
    let sol = dir.join("best.sol");
    std::fs::write(&sol, "old").unwrap();
    let args = ["solve", s(&p), "--method", "hill", "--time-limit", "0.3", "--json", "-o", s(&sol)];
    let out = concur_limited(1, &args);
    assert_refused(&out, "the board is printed instead", "JSON");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the JSON is still printed");
    assert!(v["output_error"].as_str().unwrap().contains("cannot write"), "{v}");
    let board = format::read_solution(v["board"].as_str().unwrap().as_bytes(), &puzzle).unwrap();
    assert_eq!(serde_json::json!(puzzle.score(&board)), v["best_score"], "the printed board is the best one");
    assert_eq!(std::fs::read_to_string(&sol).unwrap(), "old", "a failed write leaves the file as it was");
    // Without --json the board is printed in the same text after the summary.
    let out = concur_limited(1, &args[..args.len() - 3].iter().chain(&["-o", s(&sol)]).copied().collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    let owen = text.split("solution format (not written):\n").nth(1).expect("the board's text");
    assert!(format::read_solution(owen.as_bytes(), &puzzle).is_ok(), "{text}");
    // A certificate that cannot be written: the JSON is printed, the reason follows.
    let q = puzzle_file(&dir, 4, 4, 2);
    let certs = dir.join("certs");
    let out = concur_limited(1, &["solve", s(&q), "--backend", "cpu", "--json", "--dump-state", s(&certs)]);
    assert_refused(&out, "cannot write", "certificate");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the JSON is still printed");
    assert_eq!(v["solved"], true);
    assert!(v["output_error"].as_str().unwrap().contains("trial-"), "{v}");
}

/// Every method builds tables from the puzzle (candidates, and the arc-consistent network for
/// the backtracker and counts) before any trial: those too are checked first.
#[test]
fn tables_past_the_memory_are_refused_for_every_method() {
    let dir = scratch("tables");
    let p = puzzle_file(&dir, 16, 16, 1);
    let cap = [("CONCUR_MAX_MEMORY", "256k")];
    for method in ["rrr", "dm", "dc", "backtrack", "scan", "hill", "alns", "beam"] {
        let mut args = vec!["solve", s(&p), "--method", method, "--backend", "cpu"];
        if ["rrr", "dm", "dc"].contains(&method) {
            args.extend(["--trials", "1"]);
        }
        let out = concur_env(&args, &cap);
        assert_refused(&out, "of memory", method);
    }
    for engine in ["ac", "scan"] {
        let out = concur_env(&["count", s(&p), "--engine", engine], &cap);
        assert_refused(&out, "for its tables", engine);
    }
    let out = concur_env(&["count", s(&p), "--estimate", "10"], &cap);
    assert_refused(&out, "for its tables", "--estimate");
    let g = dir.join("u.txt");
    let out =
        concur_env(&["generate", "--width", "16", "--height", "16", "--seed", "1", "--unique", "-o", s(&g)], &cap);
    assert_refused(&out, "for its tables", "generate --unique");
    assert!(!g.exists(), "a refused run leaves no empty output behind");
}
