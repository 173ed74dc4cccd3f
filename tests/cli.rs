//! The command line: exit codes, one-line errors, generate/solve/verify round trips.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn concur(args: &[&str]) -> Output {
    Command::new(crate::common::concur_bin()).args(args).output().expect("run concur")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("concur-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn assert_bad_input(path: &Path, what: &str) {
    for args in [vec!["solve", s(path), "--method", "backtrack"], vec!["verify", s(path), s(path)]] {
        let out = concur(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {args:?} stderr {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{what}: want one line, got {err:?}");
        assert!(err.starts_with("concur: error:"), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
}

/// The beam and the polish refuse what cannot run before any work, in one line (exit 2): a
/// width of zero or past the memory, hints that conflict, a start board of another puzzle,
/// one with a piece twice, one off the rim.
#[test]
fn the_beam_and_its_polish_refuse_bad_input_before_the_work() {
    let (p5, p6, sol6) = (tmp("beam-p5.txt"), tmp("beam-p6.txt"), tmp("beam-sol6.txt"));
    assert!(concur(&["generate", "--width", "5", "--height", "5", "--seed", "2", "-o", s(&p5)]).status.success());
    assert!(concur(&["generate", "--width", "6", "--height", "6", "--seed", "2", "-o", s(&p6)]).status.success());
    // A board of the 6x6 (solved or not: on one core the default beam may miss by a join).
    let out = concur(&["solve", s(&p6), "--method", "beam", "--seed", "1", "-o", s(&sol6)]);
    assert!(matches!(out.status.code(), Some(0 | 1)) && sol6.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    let refused = |args: &[&str], needle: &str| {
        let t0 = std::time::Instant::now();
        let out = concur(args);
        crate::common::assert_refused(&out, needle, &format!("{args:?}"));
        assert!(t0.elapsed().as_secs_f64() < 10.0, "{args:?}: refused only after {:?}", t0.elapsed());
    };
    refused(&["solve", s(&p5), "--method", "beam", "--width", "0"], "--width");
    refused(&["solve", s(&p5), "--method", "beam", "--children", "0"], "--children");
    refused(&["solve", s(&p5), "--method", "beam", "--rounds", "0"], "--rounds");
    refused(&["solve", s(&p5), "--method", "scan", "--breaks", "3,25"], "--breaks");
    refused(&["solve", s(&p5), "--method", "scan", "--breaks", "3", "--probes", "5"], "--probes");
    refused(&["solve", s(&p5), "--method", "beam", "--polish", "1"], "--polish");
    refused(&["solve", s(&p5), "--method", "beam", "--fill-order", "row-major", "--teeth", "3"], "--teeth");
    refused(&["solve", s(&p5), "--method", "beam", "--width", "100000000000000", "--threads", "1"], "memory");
    // A board of another puzzle, as a file and as a link.
    refused(&["solve", s(&p5), "--method", "alns", "--start", s(&sol6)], "--start");
    let link = |edges: String| format!("https://e2.bucas.name/#puzzle=x&board_w=6&board_h=6&board_edges={edges}");
    let out = concur(&["verify", s(&p6), s(&sol6), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let good = v["viewer_link"].as_str().unwrap().to_string();
    refused(&["solve", s(&p5), "--method", "alns", "--start", &good], "--start");
    // verify and render take the link as it is.
    assert_eq!(concur(&["verify", s(&p6), &good]).status.code(), out.status.code());
    let svg = tmp("beam-board.svg");
    assert_eq!(concur(&["render", s(&p6), &good, "-o", s(&svg)]).status.code(), Some(0));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    // The same link with its first cell shown twice: a piece placed twice.
    let edges = good.split("board_edges=").nth(1).unwrap().split('&').next().unwrap().to_string();
    let twice = link(format!("{}{}", &edges[..4], &edges[..edges.len() - 4]));
    refused(&["solve", s(&p6), "--method", "alns", "--start", &twice], "--start");
    refused(&["solve", s(&p6), "--method", "alns", "--start", "/nonexistent/board.txt"], "--start");
    // Two corners swapped: every piece once, but grey sides off the rim.
    let mut cells: Vec<String> = (0..36).map(|c| edges[4 * c..4 * c + 4].to_string()).collect();
    cells.swap(0, 1);
    refused(&["solve", s(&p6), "--method", "alns", "--start", &link(cells.concat())], "--start");
    // The good board starts a polish, and the polish keeps its score or betters it.
    let out = concur(&["solve", s(&p6), "--method", "alns", "--start", &good, "--max-iters", "50", "--json"]);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j["best_score"].as_u64() >= v["score"].as_u64());
    // Hints that conflict: two for one cell.
    let hinted = tmp("beam-hints.json");
    std::fs::write(
        &hinted,
        br#"{"width":2,"height":2,"pieces":[[0,1,2,0],[0,0,3,1],[2,4,0,0],[3,0,0,4]],"hints":[{"pos":0,"piece":0,"rot":0},{"pos":0,"piece":1,"rot":1}]}"#,
    )
    .unwrap();
    refused(&["solve", s(&hinted), "--method", "beam"], "two hints");
}

/// Régin's filter, the SAC root, the path-consistent root and the block filter run with fc,
/// ac3 and ac2001: with ac4 each is refused in one line; with ac3 the count finds what the
/// plain count finds. The root's work table names every rung and refuses the count's flags.
#[test]
fn count_takes_regin_sac_pc_and_blocks_with_ac3_and_refuses_them_with_ac4() {
    let p = tmp("count-regin.txt");
    assert!(concur(&["generate", "--width", "4", "--height", "4", "--seed", "5", "-o", s(&p)]).status.success());
    for flags in [&["--alldiff", "regin"][..], &["--sac"][..], &["--pc"][..], &["--blocks"][..]] {
        let mut args = vec!["count", s(&p), "--ac", "ac4"];
        args.extend(flags);
        crate::common::assert_refused(&concur(&args), flags[0], &format!("{args:?}"));
    }
    let count = |flags: &[&str]| {
        let mut args = vec!["count", s(&p), "--ac", "ac3", "--json"];
        args.extend(flags);
        let out = concur(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["solutions"].clone()
    };
    let plain = count(&[]);
    assert_eq!(count(&["--alldiff", "regin"]), plain);
    assert_eq!(count(&["--sac", "--alldiff", "regin"]), plain);
    assert_eq!(count(&["--pc"]), plain);
    assert_eq!(count(&["--pc", "--sac", "--alldiff", "regin"]), plain);
    assert_eq!(count(&["--blocks"]), plain);
    assert_eq!(count(&["--blocks", "--pc", "--alldiff", "regin"]), plain);
    let out = concur(&["count", s(&p), "--root-work", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let levels: Vec<&str> = rows.iter().map(|r| r["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["ac1", "ac3", "ac2001", "ac4", "ac3+regin", "ac3+blocks", "sac", "pc"]);
    crate::common::assert_refused(&concur(&["count", s(&p), "--root-work", "--pc"]), "--pc", "root-work with --pc");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let good = "2 2\n0 1 2 0\n0 0 3 1\n2 4 0 0\n3 0 0 4\n";
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("wrong piece count", b"2 2\n0 1 2 0\n0 0 3 1\n2 4 0 0\n".to_vec()),
        ("too many pieces", format!("{good}1 2 3 4\n").into_bytes()),
        ("not a number", b"2 2\n0 1 2 0\n0 0 3 x1\n2 4 0 0\n3 0 0 4\n".to_vec()),
        ("colour out of range", b"2 2\n0 1 2 0\n0 0 3 1\n2 4 0 0\n3 0 0 400\n".to_vec()),
        ("negative colour", b"2 2\n0 1 2 0\n0 0 3 1\n2 4 0 0\n3 0 0 -4\n".to_vec()),
        ("empty file", Vec::new()),
        ("blank file", b"  \n\n".to_vec()),
        ("binary garbage", (0..=255u8).cycle().take(4096).collect()),
        ("invalid utf-8", vec![0xc3, 0x28, 0xa0, 0xa1, b'\n']),
        ("huge header", b"1000000000 1000000000\n0 0 1 1\n".to_vec()),
        ("header overflow", b"99999999999999999999999 2\n".to_vec()),
        ("no border arrangement", b"2 2\n1 1 2 1\n0 0 3 1\n2 4 0 0\n3 0 0 4\n".to_vec()),
        ("json hint out of range", br#"{"width":2,"height":2,"pieces":[[0,1,2,0],[0,0,3,1],[2,4,0,0],[3,0,0,4]],"hints":[{"pos":4,"piece":0,"rot":0}]}"#.to_vec()),
        ("json hint bad rotation", br#"{"width":2,"height":2,"pieces":[[0,1,2,0],[0,0,3,1],[2,4,0,0],[3,0,0,4]],"hints":[{"pos":0,"piece":0,"rot":7}]}"#.to_vec()),
        ("json truncated", br#"{"width":2,"height":2,"pieces":[[0,1"#.to_vec()),
        ("json colour above numColors", br#"{"width":2,"height":2,"numColors":3,"pieces":[[0,1,2,0],[0,0,3,1],[2,4,0,0],[3,0,0,4]]}"#.to_vec()),
        ("json huge size", br#"{"width":1000000000,"height":1000000000,"pieces":[]}"#.to_vec()),
    ];
    for (what, bytes) in cases {
        let path = tmp(&format!("bad-{}.txt", what.replace(' ', "-")));
        std::fs::write(&path, bytes).unwrap();
        assert_bad_input(&path, what);
    }
    let out = concur(&["solve", "/nonexistent/puzzle.txt"]);
    assert_eq!(out.status.code(), Some(2));
    let out = concur(&["solve", "--bogus-flag"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn generate_is_deterministic_and_its_solution_verifies() {
    let (a, b, sol) = (tmp("g-a.txt"), tmp("g-b.txt"), tmp("g-sol.txt"));
    for (out, solution) in [(&a, Some(&sol)), (&b, None)] {
        let mut args = vec!["generate", "--width", "6", "--height", "5", "--seed", "42", "-o", s(out)];
        if let Some(p) = solution {
            args.extend(["--solution", s(p)]);
        }
        assert!(concur(&args).status.success());
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let out = concur(&["verify", s(&a), s(&sol)]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().next(), Some("valid: score 49/49"));
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("viewer: https://e2.bucas.name/#")), "{text}");
    // A damaged solution: exit 1, and the score is still printed.
    let text = std::fs::read_to_string(&sol).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let (x, y, r): (u32, u32, u32) = {
        let t: Vec<u32> = lines[1].split_whitespace().map(|v| v.parse().unwrap()).collect();
        (t[0], t[1], t[2])
    };
    lines[1] = format!("{x} {y} {}", (r + 1) % 4);
    let bad = tmp("g-bad.txt");
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out = concur(&["verify", s(&a), s(&bad)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("invalid: score "));
    // Colour counts are honoured.
    let c = tmp("g-c.txt");
    assert!(
        concur(&[
            "generate",
            "--width",
            "4",
            "--height",
            "4",
            "--frame-colors",
            "2",
            "--inner-colors",
            "5",
            "--seed",
            "1",
            "-o",
            s(&c)
        ])
        .status
        .success()
    );
    let p = concur::puzzle::format::read_puzzle(&std::fs::read(&c).unwrap()).unwrap();
    assert_eq!(p.num_colors(), 8);
}

#[test]
fn solve_writes_a_solution_that_verify_accepts() {
    let (puz, sol) = (tmp("s-p.txt"), tmp("s-sol.txt"));
    assert!(concur(&["generate", "--width", "5", "--height", "5", "--seed", "7", "-o", s(&puz)]).status.success());
    for method in ["rrr", "dm", "dc", "backtrack", "hill", "alns", "beam"] {
        let _ = std::fs::remove_file(&sol);
        let out = concur(&["solve", s(&puz), "--method", method, "--seed", "3", "--json", "-o", s(&sol)]);
        assert_eq!(out.status.code(), Some(0), "{method}: {}", String::from_utf8_lossy(&out.stderr));
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["solved"], true);
        assert_eq!(j["method"], method);
        assert_eq!(j["best_score"], 40);
        assert_eq!(j["max_score"], 40);
        assert_eq!(concur(&["verify", s(&puz), s(&sol)]).status.code(), Some(0), "{method}");
    }
    // The map's JSON contract.
    let out = concur(&["solve", s(&puz), "--method", "rrr", "--trials", "3", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "solved",
        "trial",
        "iterations",
        "wall_s",
        "iters_per_s",
        "best_score",
        "max_score",
        "method",
        "beta",
        "trials",
    ] {
        assert!(j.get(key).is_some(), "missing {key} in {j}");
    }
    // Unsolved within the budget: exit 1, and the best board is still written.
    let out =
        concur(&["solve", s(&puz), "--method", "rrr", "--max-iters", "1", "--trials", "1", "-o", s(&sol), "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    if j["solved"] == false {
        assert_eq!(out.status.code(), Some(1));
        let v = concur(&["verify", s(&puz), s(&sol)]);
        assert_eq!(v.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&v.stdout).contains(&format!("score {}/40", j["best_score"])));
    }
}

/// Whether a GPU adapter exists (the shared device opens); prints SKIPPED otherwise, and
/// fails under `REQUIRE_GPU=1`.
#[cfg(feature = "gpu")]
fn have_gpu(test: &str) -> bool {
    crate::gpu::gpu(test).is_some()
}

#[cfg(feature = "gpu")]
#[test]
fn solve_on_the_gpu_backend_solves_a_generated_5x5() {
    if !have_gpu("solve_on_the_gpu_backend_solves_a_generated_5x5") {
        return;
    }
    let p = tmp("gpu5.txt");
    assert!(concur(&["generate", "--width", "5", "--height", "5", "--seed", "3", "-o", s(&p)]).status.success());
    for method in ["rrr", "dm", "dc"] {
        let mut args = vec!["solve", s(&p), "--method", method, "--backend", "gpu", "--trials", "8", "--json"];
        if method == "dc" {
            // dc's default layout (hybrid) runs on the CPU only.
            args.extend(["--layout", "plain"]);
        }
        let out = concur(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{method}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["solved"], true, "{method}");
        assert!(v["backend"].as_str().unwrap().starts_with("gpu"), "{method}: {v}");
        assert!(err.contains("adapter"), "the backend says which adapter it picked: {err}");
        if method != "dc" {
            // The GPU backend's default placement is the device JV, and the JSON says so.
            assert_eq!(v["assign"], "gpu-jv", "{method}: {v}");
        }
    }
    // Where the run needs the host every iteration, auto keeps the host's JV.
    let out = concur(&["solve", s(&p), "--method", "rrr", "--backend", "gpu", "--complete", "4", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["assign"], "cpu", "{v}");
    // The CPU backend reports the host's JV.
    let out = concur(&["solve", s(&p), "--method", "rrr", "--backend", "cpu", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["assign"], "cpu", "{v}");
}

#[cfg(feature = "gpu")]
#[test]
fn gpu_backend_errors_are_clear_and_exit_2() {
    let p = tmp("gpuerr.txt");
    assert!(concur(&["generate", "--width", "4", "--height", "4", "--seed", "3", "-o", s(&p)]).status.success());
    // No adapter of that name: one line, exit 2, never a panic.
    let out = concur(&["solve", s(&p), "--backend", "gpu", "--adapter", "no-such-adapter-xyz"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no-such-adapter-xyz") && !err.contains("panicked"), "{err}");
    // No GPU at all (no Vulkan or GL backend allowed).
    let out = Command::new(crate::common::concur_bin())
        .args(["solve", s(&p), "--backend", "gpu"])
        .env("WGPU_BACKEND", "noop")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no GPU adapter"), "{err}");
    // auto without an adapter falls back to the CPU and says so.
    let out = Command::new(crate::common::concur_bin())
        .args(["solve", s(&p), "--trials", "4", "--json"])
        .env("WGPU_BACKEND", "noop")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("backend auto: cpu"));
    // CPU-only options on the GPU backend: a clear refusal.
    if have_gpu("gpu_backend_errors_are_clear_and_exit_2") {
        let dir = tmp("gpucerts");
        let out = concur(&["solve", s(&p), "--backend", "gpu", "--dump-state", s(&dir)]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("cpu backend"));
        // dc's default layout is CPU-only; the refusal names the one the GPU runs.
        let out = concur(&["solve", s(&p), "--method", "dc", "--backend", "gpu"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--layout plain"));
    }
}

#[test]
fn bench_json_reports_every_kernel_on_the_cpu() {
    let out =
        concur(&["bench", "--sizes", "3x3", "--batches", "1,4", "--backends", "cpu", "--budget", "0.01", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    for (form, kernel) in [
        ("f1", "edges"),
        ("f1", "weights"),
        ("f1", "iteration"),
        ("f1", "assign"),
        ("dc", "concur"),
        ("dc", "divide"),
        ("dc", "iteration"),
    ] {
        for batch in [1, 4] {
            let r = rows
                .iter()
                .find(|r| r["formulation"] == form && r["kernel"] == kernel && r["batch"] == batch)
                .unwrap_or_else(|| panic!("no {form} {kernel} row at batch {batch}"));
            assert!(r["trial_iters_per_s"].as_f64().unwrap() > 0.0 && r["gb_per_s"].as_f64().unwrap() > 0.0);
        }
    }
    let out = concur(&["bench", "--sizes", "3by3", "--backends", "cpu"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn count_journals_resume_and_refuse_another_puzzle() {
    let (p, q, j) = (tmp("count-p.txt"), tmp("count-q.txt"), tmp("count.jsonl"));
    let _ = std::fs::remove_file(&j);
    for (file, seed) in [(&p, "5"), (&q, "6")] {
        let args = ["generate", "--width", "5", "--height", "5", "--seed", seed, "-o", s(file)];
        assert!(concur(&args).status.success());
    }
    let count = |extra: &[&str]| {
        let mut args = vec!["count", s(&p), "--engine", "scan", "--tasks", "50", "--json"];
        args.extend_from_slice(extra);
        let out = concur(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (plain, _) = count(&[]);
    let (first, _) = count(&["--journal", s(&j)]);
    assert_eq!(first["solutions"], plain["solutions"]);
    assert_eq!(first["tasks_resumed"], 0);
    let lines = std::fs::read_to_string(&j).unwrap().lines().count() as u64;
    assert_eq!(lines, 1 + first["tasks"].as_u64().unwrap(), "a plan line and one line per subtree");
    // Run again: everything comes from the journal, the counts are the same.
    let (again, err) = count(&["--journal", s(&j)]);
    assert!(err.contains("resuming"), "{err}");
    assert_eq!((&again["solutions"], &again["up_to_rotation"]), (&plain["solutions"], &plain["up_to_rotation"]));
    assert_eq!(again["tasks_resumed"], again["tasks"]);
    // The journal of one puzzle is refused for another, with exit 2 and one line.
    let out = concur(&["count", s(&q), "--engine", "scan", "--journal", s(&j)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another count") && err.trim_end().lines().count() == 1, "{err}");
}

/// Sends `signal` (e.g. "-INT") to a child process with the system's `kill`.
fn signal(child: &std::process::Child, signal: &str) {
    let ok = Command::new("kill").args([signal, &child.id().to_string()]).status().expect("run kill");
    assert!(ok.success(), "kill {signal} failed");
}

/// Waits for a child at most `secs` seconds; kills it and fails the test past that.
fn wait_at_most(mut child: std::process::Child, secs: f64) -> Output {
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed().as_secs_f64() > secs {
            // Where each of its threads stands, where a debugger can attach: the clue to a hang.
            let stacks = Command::new("timeout")
                .args(["60", "gdb", "-batch", "-p", &child.id().to_string(), "-ex", "thread apply all bt 30"])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
                .unwrap_or_else(|e| format!("(no stacks: {e})"));
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "still running after {secs} s; stderr {}\nits threads:\n{stacks}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(crate::common::concur_bin())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn concur")
}

/// A puzzle no method here solves within seconds: a generated 10x10.
fn hard_puzzle(name: &str) -> PathBuf {
    let p = tmp(name);
    let out = concur(&["generate", "--width", "10", "--height", "10", "--seed", "5", "-o", s(&p)]);
    assert!(out.status.success());
    p
}

#[test]
fn ctrl_c_stops_solve_cleanly_writes_the_best_board_and_exits_130() {
    let p = hard_puzzle("int-solve.txt");
    for method in ["rrr", "dc", "backtrack", "scan", "alns", "hill", "beam"] {
        let sol = tmp(&format!("int-solve-{method}.sol"));
        let _ = std::fs::remove_file(&sol);
        let mut args = vec!["solve", s(&p), "--method", method, "--backend", "cpu", "--threads", "1"];
        // Budgets far past the signal, in each method's own terms.
        match method {
            "rrr" | "dc" => args.extend(["--trials", "2", "--max-iters", "1000000000"]),
            "hill" | "alns" => args.extend(["--max-iters", "1000000000"]),
            // About a minute of beam at this size (its memory is touched as it goes).
            "beam" => args.extend(["--width", "2000000"]),
            _ => args.extend(["--max-nodes", "100000000000"]),
        }
        args.extend(["--json", "-o", s(&sol)]);
        let child = spawn(&args);
        std::thread::sleep(std::time::Duration::from_millis(700));
        signal(&child, "-INT");
        let out = wait_at_most(child, 20.0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{method}: stderr {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{method}: one JSON object on stdout ({e}): {:?}", out.stdout));
        assert_eq!(v["interrupted"], true, "{method}: {v}");
        assert_eq!(v["solved"], false, "{method}: {v}");
        if method != "backtrack" && method != "scan" {
            // Local search and the maps always hold a full board: it is written and its score
            // is the one reported.
            let ver = concur(&["verify", s(&p), s(&sol), "--json"]);
            let vv: serde_json::Value = serde_json::from_slice(&ver.stdout).unwrap();
            assert_eq!(vv["score"], v["best_score"], "{method}: written board vs report");
        }
    }
}

#[test]
fn a_second_signal_off_a_terminal_loses_nothing() {
    let p = hard_puzzle("int-twice.txt");
    // Two signals in a row, as a scheduler may send them (a step and its batch shell): off a
    // terminal the second is noted, and the run still ends with its report.
    for (first, second) in [("-INT", "-INT"), ("-TERM", "-USR1"), ("-USR2", "-TERM")] {
        let child = spawn(&["solve", s(&p), "--method", "rrr", "--backend", "cpu", "--threads", "1", "--json"]);
        std::thread::sleep(std::time::Duration::from_millis(500));
        signal(&child, first);
        signal(&child, second);
        let out = wait_at_most(child, 10.0);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{first} {second}: stderr {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the report as JSON");
        assert_eq!(v["interrupted"], true, "{v}");
    }
}

#[test]
fn sigterm_stops_a_scan_count_with_its_journal_whole() {
    let p = hard_puzzle("int-count.txt");
    let j = tmp("int-count.jsonl");
    let _ = std::fs::remove_file(&j);
    let child = spawn(&["count", s(&p), "--engine", "scan", "--threads", "1", "--journal", s(&j), "--json"]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    signal(&child, "-TERM");
    let out = wait_at_most(child, 20.0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "stderr {err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the partial count as JSON");
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["complete"], false);
    // Every journal line is whole JSON, and the journal resumes.
    let text = std::fs::read_to_string(&j).unwrap();
    assert!(text.ends_with('\n'), "torn journal");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("bad journal line {line:?}: {e}"));
    }
    let again =
        concur(&["count", s(&p), "--engine", "scan", "--threads", "1", "--journal", s(&j), "--time-limit", "0.2"]);
    assert_eq!(again.status.code(), Some(0), "resume: {}", String::from_utf8_lossy(&again.stderr));
}

#[test]
fn a_signal_stops_a_ladder_and_records_the_runs_cut_short_as_parts() {
    let p = hard_puzzle("int-ladder.txt");
    let cfg = tmp("int-ladder.toml");
    let out_dir = tmp("int-ladder-out");
    let _ = std::fs::remove_dir_all(&out_dir);
    std::fs::write(
        &cfg,
        format!(
            "runs = 4\nseed = 1\n[[instances]]\npath = {:?}\n[[methods]]\nmethod = \"hill\"\ntime_limit = 60\n",
            s(&p)
        ),
    )
    .unwrap();
    let child = spawn(&["ladder", s(&cfg), "--out", s(&out_dir), "--threads", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(800));
    signal(&child, "-USR1");
    let out = wait_at_most(child, 20.0);
    let err = String::from_utf8_lossy(&out.stderr);
    // Stopped with runs left: the resumable status.
    assert_eq!(out.status.code(), Some(75), "stderr {err}");
    let results = out_dir.join("results.jsonl");
    let text = std::fs::read_to_string(&results).unwrap_or_default();
    // The run in flight was written as its part 1, with the signal; none started after it.
    let recs: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(recs.len(), 1, "{text}");
    assert_eq!((recs[0]["part"].as_u64(), recs[0]["interrupted"].as_str()), (Some(1), Some("SIGUSR1")), "{text}");
    assert!(recs[0]["work"].as_u64().unwrap() > 0 && recs[0]["wall_s"].as_f64().unwrap() > 0.5, "{text}");
    // Resumed, the run goes on as its part 2 with what is left of its 60 s.
    let child = spawn(&["ladder", s(&cfg), "--out", s(&out_dir), "--threads", "1", "--resume", "--runs", "1"]);
    std::thread::sleep(std::time::Duration::from_millis(800));
    signal(&child, "-TERM");
    let out = wait_at_most(child, 20.0);
    assert_eq!(out.status.code(), Some(75), "stderr {}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&results).unwrap();
    let recs: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(recs.len(), 2, "{text}");
    assert_eq!((recs[1]["run"].as_u64(), recs[1]["part"].as_u64()), (Some(0), Some(2)), "{text}");
    assert_eq!(recs[1]["continued"], "fresh", "{text}");
    assert_ne!(recs[1]["seed"], recs[0]["seed"], "a fresh part draws anew");
}

#[test]
fn headless_adapter_probe_prints_no_error() {
    let p = tmp("headless.txt");
    assert!(concur(&["generate", "--width", "3", "--height", "3", "--seed", "1", "-o", s(&p)]).status.success());
    let out = Command::new(crate::common::concur_bin())
        .args(["solve", s(&p), "--json"])
        .env_remove("NODEVICE_SELECT")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("XDG_RUNTIME_DIR"), "probe noise: {err}");
    assert!(!err.to_lowercase().contains("error"), "probe noise: {err}");
    // The probe still sees an adapter where CI installs one.
    if cfg!(feature = "gpu") && std::env::var("REQUIRE_GPU").as_deref() == Ok("1") {
        assert!(err.contains("adapter"), "no adapter seen: {err}");
    }
}

#[test]
fn the_default_bench_is_short_and_follows_the_adapter() {
    use concur_lab::bench::{BenchOptions, Plan, estimated_seconds, steps};
    let opts = |plan: &Plan| BenchOptions {
        sizes: plan.sizes.clone(),
        batches: plan.batches.clone(),
        formulations: vec!["f1".into(), "dc".into()],
        cpu: plan.cpu,
        gpu: plan.gpu,
        budget: std::time::Duration::from_secs_f64(0.5),
        max_bytes: 8 << 30,
        seed: 1,
        adapter: None,
        dc_chunk_trials: None,
        cancel: concur::cancel::Cancel::new(),
    };
    for hardware in [false, true] {
        let plan = Plan::default_for(hardware);
        assert_eq!(plan.gpu, hardware, "GPU rows only with a hardware adapter");
        let secs = estimated_seconds(&opts(&plan));
        assert!(secs > 5.0 && secs <= 60.0, "default plan (hardware {hardware}): {secs} s");
    }
    let full = estimated_seconds(&opts(&Plan::full()));
    assert!(full > 120.0, "the full sweep is the long one: {full} s");
    // The plain command runs the plan this machine gets, and every step it announces.
    let hardware =
        concur::backend::select(concur::backend::BackendChoice::Auto, None).is_ok_and(|s| s.backend.is_gpu());
    let plan = Plan::default_for(hardware);
    let out = concur(&["bench", "--budget", "0.01", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&plan.why), "plan not announced: {err}");
    let want = steps(&opts(&plan)).len();
    assert!(err.contains(&format!("{want} steps")), "{err}");
    let rows: Vec<serde_json::Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let sizes: std::collections::BTreeSet<String> =
        rows.iter().map(|r| r["size"].as_str().unwrap().to_string()).filter(|s| s != "-").collect();
    let planned: std::collections::BTreeSet<String> = plan.sizes.iter().map(|(w, h)| format!("{w}x{h}")).collect();
    assert!(sizes.is_subset(&planned) && !sizes.is_empty(), "{sizes:?} vs {planned:?}");
    assert_eq!(rows.iter().any(|r| r["backend"] == "gpu"), hardware);
}

#[test]
fn a_bench_request_is_checked_before_any_step() {
    use concur::backend::BackendChoice;
    use concur_lab::bench::{BenchOptions, BenchRequest};
    let request = BenchRequest {
        sizes: Some(vec!["3x3".into(), "4x5".into()]),
        batches: Some(vec![1, 4]),
        formulations: vec!["f1".into()],
        backends: Some(vec![BackendChoice::Cpu]),
        full: false,
        budget: 0.01,
        max_gib: 8.0,
        dc_chunk_trials: None,
        adapter: None,
        seed: 1,
    };
    let refused = |r: BenchRequest| BenchOptions::from_request(r).map(|_| ()).unwrap_err().to_string();
    let sizes = |s: &str| BenchRequest { sizes: Some(vec![s.into()]), ..request.clone() };
    assert_eq!(refused(sizes("3by3")), "--sizes: size \"3by3\" is not WxH");
    assert_eq!(refused(sizes("3xa")), "--sizes: invalid digit found in string");
    assert_eq!(refused(sizes("1x3")), "--sizes: 1x3 is out of range: each side must be 2..=256");
    assert_eq!(
        refused(BenchRequest { batches: Some(vec![0]), ..request.clone() }),
        "--batches: a batch must be at least 1 trial"
    );
    assert_eq!(
        refused(BenchRequest { formulations: vec!["f3".into()], ..request.clone() }),
        "--formulations: unknown formulation \"f3\" (f1, dc, scan)"
    );
    assert_eq!(
        refused(BenchRequest { budget: 0.0, ..request.clone() }),
        "--budget must be a positive number of seconds"
    );
    assert_eq!(
        refused(BenchRequest { max_gib: -1.0, ..request.clone() }),
        "--max-gib must be a positive number, got -1"
    );
    // Explicit lists are taken as given; the last note announces the steps.
    let (opts, notes) = BenchOptions::from_request(request).unwrap();
    assert_eq!((opts.sizes, opts.batches, opts.cpu, opts.gpu), (vec![(3, 3), (4, 5)], vec![1, 4], true, false));
    assert!(notes.last().unwrap().starts_with("concur bench: 4 steps, at least "), "{notes:?}");
}

#[test]
fn report_json_carries_the_censored_statistics_and_bad_input_exits_2() {
    let dir = tmp("report-in");
    std::fs::create_dir_all(&dir).unwrap();
    // Two of four runs solved (at 1 s and 2 s), two censored at the 5 s budget.
    let lines: Vec<String> = [(true, 1.0, 10), (false, 5.0, 50), (true, 2.0, 20), (false, 5.0, 50)]
        .iter()
        .enumerate()
        .map(|(run, &(solved, wall_s, work))| {
            serde_json::json!({
                "instance": "a.txt", "width": 4, "height": 4, "colors": 5, "method": "rrr", "label": "rrr",
                "params": {"time_limit": 5.0}, "run": run, "seed": run, "backend": "cpu", "solved": solved,
                "mechanism": if solved { Some("map") } else { None }, "work": work, "work_unit": "iterations",
                "wall_s": wall_s, "best_score": 0, "max_score": 24, "version": "0"
            })
            .to_string()
        })
        .collect();
    std::fs::write(dir.join("results.jsonl"), lines.join("\n") + "\n").unwrap();
    let out_dir = tmp("report-out");
    let out = concur(&["report", s(&dir), "-o", s(&out_dir), "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &v["rows"][0];
    assert_eq!(row["solved"], 2);
    assert_eq!(row["solved_fraction"], 0.5);
    // KM: S = 3/4 after 1 s, 1/2 after 2 s; q3 is never reached: null.
    assert_eq!(row["seconds"]["quartiles"], serde_json::json!([1.0, 2.0, null]));
    assert_eq!(row["work"]["quartiles"], serde_json::json!([10.0, 20.0, null]));
    assert_eq!(row["time_limit_s"], 5.0);
    assert!(out_dir.join("rtd-4x4.svg").exists());
    // A missing input and a bad line: exit 2, one line, no panic.
    std::fs::write(dir.join("bad.jsonl"), "{\"not\": \"a record\"}\n").unwrap();
    for args in [vec!["report", "/nonexistent/results", "-o", s(&out_dir)], vec!["report", s(&dir), "-o", s(&out_dir)]]
    {
        let out = concur(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err:?}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn solve_scan_reports_json_writes_the_solution_and_exits_by_outcome() {
    let puzzle = tmp("scan-p.txt");
    let sol = tmp("scan-sol.txt");
    let out = concur(&["generate", "--width", "6", "--height", "5", "--seed", "3", "-o", s(&puzzle)]);
    assert_eq!(out.status.code(), Some(0));
    let out =
        concur(&["solve", s(&puzzle), "--method", "scan", "--threads", "2", "--seed", "1", "--json", "-o", s(&sol)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["method"], "scan");
    assert_eq!(v["solved"], true);
    for key in ["nodes", "nodes_per_s", "restarts", "best_depth", "threads"] {
        assert!(v[key].is_number(), "{key} missing: {v}");
    }
    assert_eq!(concur(&["verify", s(&puzzle), s(&sol)]).status.code(), Some(0));
    let out = concur(&["solve", s(&puzzle), "--method", "scan", "--max-nodes", "3", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let out = concur(&["solve", s(&puzzle), "--method", "scan", "--restart-base", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end().lines().count(), 1);
}

#[test]
fn a_time_limit_without_max_iters_lifts_the_iteration_cap() {
    // No board of this 2x2 matches everywhere (colours 4 and 5 occur once each), so the map
    // iterates until the clock stops it; without a time limit it stops at 100,000.
    let puz = tmp("tl-p.txt");
    std::fs::write(&puz, "2 2\n0 1 2 0\n0 0 3 1\n2 4 0 0\n3 0 0 5\n").unwrap();
    let p = puz.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["solve", p, "--method", "rrr", "--trials", "1", "--threads", "1", "--json"];
        args.extend_from_slice(extra);
        let out = concur(&args);
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["iterations"].as_u64().unwrap()
    };
    assert_eq!(run(&[]), 100_000);
    let timed = run(&["--time-limit", "1.5"]);
    assert!(timed > 100_000, "{timed} iterations in 1.5 s");
    assert_eq!(run(&["--time-limit", "1.5", "--max-iters", "5000"]), 5_000);
}

#[test]
fn stall_restarts_and_kicks_are_options_of_the_maps() {
    let puz = tmp("sr-p.txt");
    // Unsolvable (colours 4 and 5 occur once each): no new best after the first iterations.
    std::fs::write(&puz, "2 2\n0 1 2 0\n0 0 3 1\n2 4 0 0\n3 0 0 5\n").unwrap();
    let p = puz.to_str().unwrap();
    let base = ["solve", p, "--method", "rrr", "--trials", "2", "--threads", "1", "--max-iters", "5000", "--json"];
    for extra in [&["--restart-stall", "100"][..], &["--restart-stall", "100", "--kick", "0.5"][..]] {
        let out = concur(&[&base[..], extra].concat());
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["stall_restarts"].as_u64().unwrap() >= 2, "{v}");
    }
    // The default (100,000) does not fire within 5,000 iterations, and 0 turns them off.
    for extra in [&[][..], &["--restart-stall", "0"][..]] {
        let out = concur(&[&base[..], extra].concat());
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["stall_restarts"].as_u64(), Some(0), "{extra:?}");
    }
    let long = ["solve", p, "--method", "rrr", "--trials", "1", "--threads", "1", "--max-iters", "250000", "--json"];
    let v: serde_json::Value = serde_json::from_slice(&concur(&long).stdout).unwrap();
    assert!(v["stall_restarts"].as_u64().unwrap() >= 2, "the default fires on a stalled trial: {v}");
    let v: serde_json::Value =
        serde_json::from_slice(&concur(&[&long[..], &["--restart-stall", "0"][..]].concat()).stdout).unwrap();
    assert_eq!(v["stall_restarts"].as_u64(), Some(0));
    for bad in [
        &["solve", p, "--method", "dc", "--restart-stall", "10"][..],
        &["solve", p, "--method", "rrr", "--kick", "0.5", "--restart-stall", "0"][..],
        &["solve", p, "--method", "rrr", "--restart-stall", "10", "--kick=-1"][..],
    ] {
        let out = concur(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().filter(|l| l.contains("error")).count(), 1, "{bad:?}: {err}");
    }
}

#[test]
fn dc_defaults_to_the_hybrid_layout() {
    let puz = tmp("layout-p.txt");
    assert!(concur(&["generate", "--width", "4", "--height", "4", "--seed", "2", "-o", s(&puz)]).status.success());
    let p = s(&puz);
    let base = ["solve", p, "--method", "dc", "--trials", "2", "--max-iters", "2000", "--backend", "cpu", "--json"];
    for (extra, want) in [(&[][..], true), (&["--layout", "plain"][..], false), (&["--hybrid"][..], true)] {
        let out = concur(&[&base[..], extra].concat());
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["hybrid"], want, "{extra:?}: {v}");
    }
    let out = concur(&[&base[..], &["--hybrid", "--layout", "plain"][..]].concat());
    assert_eq!(out.status.code(), Some(2), "--hybrid and --layout plain contradict each other");
}

#[test]
fn propagate_is_a_dc_option_reported_in_the_json_and_certified() {
    let puz = tmp("prop-p.txt");
    let out = concur(&["generate", "--width", "4", "--height", "4", "--seed", "2", "-o", s(&puz)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let p = s(&puz);
    let dir = tmp("prop-certs");
    let args = [
        "solve",
        p,
        "--method",
        "dc",
        "--hybrid",
        "--propagate",
        "0.7",
        "--trials",
        "4",
        "--threads",
        "1",
        "--max-iters",
        "20000",
        "--seed",
        "1",
        "--backend",
        "cpu",
        "--json",
        "--dump-state",
        s(&dir),
    ];
    let out = concur(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["propagate"].as_f64(), Some(0.7), "{v}");
    let cert = std::fs::read_dir(&dir).unwrap().next().expect("a certificate").unwrap().path();
    let out = concur(&["verify", p, "--state", s(&cert)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for bad in [
        &["solve", p, "--method", "rrr", "--propagate", "0.5"][..],
        &["solve", p, "--method", "dc", "--propagate", "0"][..],
        &["solve", p, "--method", "dc", "--propagate", "1.5"][..],
        &["solve", p, "--method", "dc", "--propagate", "NaN"][..],
    ] {
        let out = concur(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--propagate"), "{bad:?}: {err}");
    }
}

#[test]
fn join_weights_are_a_map_option_reported_in_the_json() {
    let puz = tmp("jw-p.txt");
    let out = concur(&["generate", "--width", "4", "--height", "4", "--seed", "2", "-o", s(&puz)]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let p = s(&puz);
    let base = ["solve", p, "--method", "rrr", "--trials", "4", "--threads", "1", "--max-iters", "20000", "--json"];
    for kind in ["rrr", "dm"] {
        let mut args = base.to_vec();
        args[3] = kind;
        args.extend(["--join-weights", "1,0.5,2", "--seed", "3"]);
        let out = concur(&args);
        assert_eq!(out.status.code(), Some(0), "{kind}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["join_weights"], serde_json::json!([1.0, 0.5, 2.0]), "{v}");
    }
    // The default metric is reported, and 1,1,1 is the uniform one.
    for (extra, want) in [
        (&[][..], serde_json::json!([1.0, 1.0, 4.0])),
        (&["--join-weights", "2,2,2"][..], serde_json::json!([1.0, 1.0, 1.0])),
    ] {
        let out = concur(&[&base[..], extra].concat());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["join_weights"], want, "{extra:?}: {v}");
    }
    for bad in [
        &["solve", p, "--method", "dc", "--join-weights", "1,1,2"][..],
        &["solve", p, "--method", "rrr", "--join-weights", "1,2"][..],
        &["solve", p, "--method", "rrr", "--join-weights", "1,0,2"][..],
        &["solve", p, "--method", "rrr", "--join-weights", "1,x,2"][..],
        &["solve", p, "--method", "rrr", "--join-weights", "1,1,inf"][..],
    ] {
        let out = concur(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("weight"), "{bad:?}: {err}");
    }
}

#[test]
fn a_ladder_part_naming_no_method_exits_2() {
    let cfg = tmp("part-ladder.toml");
    std::fs::write(
        &cfg,
        "runs = 1\n[[instances]]\ngenerate = { width = 3, height = 3, seed = 1 }\n[[methods]]\nmethod = \"scan\"\n",
    )
    .unwrap();
    let out_dir = tmp("part-ladder-out");
    let out = concur(&["ladder", s(&cfg), "--out", s(&out_dir), "--methods", "scan,rrr"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("concur: error:") && err.contains("\"rrr\""), "{err}");
    let out = concur(&["ladder", s(&cfg), "--out", s(&out_dir), "--methods", "scan"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn every_method_honours_hints_and_every_board_links_to_the_viewer() {
    use concur::puzzle::{Hint, Puzzle, format};
    // A planted 6x6 with three hints from its solution (one corner, one edge, one inner).
    let (p, sol) = crate::common::generated(6, 6, 3);
    let hints: Vec<Hint> = [0usize, 3, 14]
        .iter()
        .map(|&c| Hint { cell: c, piece: sol.cells[c].piece as usize, rot: sol.cells[c].rot })
        .collect();
    let hinted = Puzzle::new(6, 6, p.pieces().to_vec(), hints.clone()).unwrap();
    let path = tmp("hinted.json");
    std::fs::write(&path, format::write_puzzle(&hinted)).unwrap();
    let runs: [&[&str]; 7] = [
        &["--method", "rrr", "--max-iters", "300"],
        &["--method", "dm", "--max-iters", "300"],
        &["--method", "dc", "--max-iters", "200"],
        &["--method", "backtrack", "--max-nodes", "2000"],
        &["--method", "scan", "--max-nodes", "2000"],
        &["--method", "hill", "--max-iters", "20000"],
        &["--method", "alns", "--max-iters", "200"],
    ];
    for extra in runs {
        let board = tmp(&format!("hinted-{}.sol", extra[1]));
        let _ = std::fs::remove_file(&board);
        let mut args =
            vec!["solve", s(&path), "--seed", "2", "--threads", "1", "--backend", "cpu", "--json", "-o", s(&board)];
        args.extend_from_slice(extra);
        let out = concur(&args);
        let code = out.status.code();
        assert!(matches!(code, Some(0 | 1)), "{extra:?}: exit {code:?}: {}", String::from_utf8_lossy(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if !board.exists() {
            // The tree searches write a board only when they complete one.
            assert!(matches!(extra[1], "backtrack" | "scan") && json["solved"] == false, "{extra:?}: no board");
            continue;
        }
        let b = format::read_solution(&std::fs::read(&board).unwrap(), &hinted).unwrap();
        for h in &hints {
            assert_eq!(
                (b.cells[h.cell].piece as usize, b.cells[h.cell].rot),
                (h.piece, h.rot),
                "{extra:?}: hint {h:?}"
            );
        }
        // The JSON's viewer link reads back to a board of the same score.
        let link = json["viewer_link"].as_str().unwrap_or_else(|| panic!("{extra:?}: no viewer_link in {json}"));
        let linked = format::read_solution(link.as_bytes(), &hinted).unwrap();
        assert_eq!(hinted.score(&linked), json["best_score"].as_u64().unwrap() as usize, "{extra:?}");
        // verify reads the link too, and prints it.
        let lf = tmp(&format!("hinted-{}.link", extra[1]));
        std::fs::write(&lf, link).unwrap();
        let v = concur(&["verify", s(&path), s(&lf)]);
        let text = String::from_utf8_lossy(&v.stdout);
        assert!(text.contains(&format!("score {}/{}", hinted.score(&linked), hinted.max_score())), "{text}");
        assert!(text.contains("viewer: https://e2.bucas.name/#"), "{text}");
    }
}

/// With `--json`, an error is one JSON object on stdout too (`error`, `exit`, and the option it
/// names), beside its one line on stderr; the exit code is unchanged. A subcommand without
/// `--json` prints nothing on stdout.
#[test]
fn errors_are_json_objects_with_json() {
    let p = tmp("json-errors.txt");
    std::fs::write(&p, "not a puzzle\n").unwrap();
    let good = tmp("json-errors-good.txt");
    assert!(concur(&["generate", "--width", "4", "--height", "4", "--seed", "1", "-o", s(&good)]).status.success());
    let cases: [(&[&str], Option<&str>); 6] = [
        (&["solve", s(&p), "--json"], None),
        (&["solve", s(&good), "--method", "rrr", "--layout", "plain", "--json"], Some("--layout")),
        (&["solve", s(&good), "--beta", "NaN", "--json"], Some("--beta")),
        (&["count", s(&good), "--engine", "ac", "--journal", "j.jsonl", "--json"], Some("--journal")),
        (&["verify", s(&good), s(&p), "--json"], None),
        (&["solve", s(&good), "--no-such-flag", "--json"], None),
    ];
    for (args, option) in cases {
        let out = concur(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: one JSON object on stdout ({e}): {:?}", out.stdout));
        assert_eq!(v["exit"], 2, "{args:?}: {v}");
        assert!(err.contains(v["error"].as_str().unwrap()), "{args:?}: {v} against {err}");
        if let Some(o) = option {
            assert_eq!(v["option"], o, "{args:?}: {v}");
        }
    }
    let out = concur(&["solve", s(&p)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no --json, no JSON: {:?}", out.stdout);
}

/// Whether process `pid` catches SIGINT yet (its handler registered: `SigCgt` in
/// `/proc/PID/status`), so that a signal sent now falls after the first statement of `main`.
#[cfg(target_os = "linux")]
fn catches_sigint(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
}

/// SIGINT at `n` random moments of a run's first second (from its handler's registration at
/// the first statement of `main`, which the test waits for), `threads` runs at a time: every
/// run ends with its report on stdout (exit 130, `"interrupted": true`), and its board file
/// where the report has a board. Returns how many were signalled before the run's first
/// iteration report (the early window), to show the sample reaches it.
#[cfg(target_os = "linux")]
fn sigint_storm(extra: &[&str], n: usize, tag: &str) {
    let p = tmp(&format!("storm-{tag}.txt"));
    assert!(concur(&["generate", "--width", "8", "--height", "8", "--seed", "3", "-o", s(&p)]).status.success());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let sol = tmp(&format!("storm-{tag}-{i}.sol"));
                    let _ = std::fs::remove_file(&sol);
                    let mut args = vec!["solve", s(&p), "--method", "rrr", "--trials", "8", "--time-limit", "100"];
                    args.extend(extra);
                    args.extend(["--json", "-o", s(&sol)]);
                    let child = spawn(&args);
                    let start = std::time::Instant::now();
                    while !catches_sigint(child.id()) && start.elapsed().as_secs_f64() < 5.0 {
                        std::thread::yield_now();
                    }
                    // A moment in the first second, spread evenly (a hash of the index).
                    let us = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44;
                    std::thread::sleep(std::time::Duration::from_micros(us % 1_000_000));
                    signal(&child, "-INT");
                    let out = wait_at_most(child, 60.0);
                    let fail = |why: String| failures.lock().unwrap().push(format!("run {i} ({us} us): {why}"));
                    let err = String::from_utf8_lossy(&out.stderr).to_string();
                    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&out.stdout) else {
                        fail(format!("no report: exit {:?}, stdout {:?}, stderr {err}", out.status.code(), out.stdout));
                        continue;
                    };
                    if out.status.code() != Some(130) || v["interrupted"] != true {
                        fail(format!("exit {:?}, {v}", out.status.code()));
                    }
                    if err.contains("panicked") || err.contains("malloc") || err.contains("double free") {
                        fail(format!("stderr {err}"));
                    }
                    // The board is written wherever the report has one.
                    if v.get("best_score").is_some_and(|b| b.as_u64() > Some(0)) && !sol.exists() {
                        fail(format!("a board in the report but none written: {v}"));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} of {n} runs lost their report:\n{}", failures.len(), failures.join("\n"));
}

#[cfg(target_os = "linux")]
#[test]
fn a_sigint_at_any_moment_of_the_first_second_leaves_the_report_on_the_cpu() {
    sigint_storm(&["--backend", "cpu"], crate::common::sample(200, 24), "cpu");
}

#[cfg(all(target_os = "linux", feature = "gpu"))]
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn a_sigint_at_any_moment_of_the_first_second_leaves_the_report_on_the_gpu() {
    if !have_gpu("a_sigint_at_any_moment_of_the_first_second_leaves_the_report_on_the_gpu") {
        return;
    }
    sigint_storm(&["--backend", "gpu"], crate::common::sample(100, 12), "gpu");
}

/// `concur --version` names the crate's version and the commit it was built from: the
/// clone's HEAD where the source is a git clone, else `unknown`.
#[test]
fn version_names_the_commit() {
    let out = concur(&["--version"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or("unknown".to_string(), |o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    assert_eq!(text, format!("concur {} (commit {head})", env!("CARGO_PKG_VERSION")));
}

/// The README's tour of the commands, line by line as written, in a fresh folder with the
/// example config beside it: every command exits 0 and writes its files there, and none
/// touches the repository. `bench` runs its default plan, which takes minutes on a software
/// adapter, so the whole tour is the full tier's (`CONCUR_TESTS=full`); the fast tier runs
/// every line but `bench`.
#[test]
fn the_readme_tour_runs_in_a_fresh_folder() {
    let Some(puzzles) = crate::common::puzzles("the_readme_tour_runs_in_a_fresh_folder") else { return };
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let tour = &readme[readme.find("## A tour of the commands").expect("the README has a tour")..];
    let block = &tour[tour.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    let dir = crate::common::scratch("readme-tour");
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    std::fs::copy(root.join("examples/ladder-small.toml"), dir.join("examples/ladder-small.toml")).unwrap();
    let mut ran = 0;
    for line in block.lines().filter(|l| l.starts_with("concur ")) {
        let command = line.split(" # ").next().unwrap().trim();
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        if args[0] == "bench" && !crate::common::full_tier() {
            continue;
        }
        let out = Command::new(crate::common::concur_bin())
            .args(&args)
            .current_dir(&dir)
            .env("CONCUR_PUZZLES", &puzzles)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`{command}` exited {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 10, "the tour's commands were not found: {ran}");
    for f in [
        "p.txt",
        "planted.txt",
        "sol.txt",
        "board.svg",
        "results/small/results.jsonl",
        "results/small/report/report.md",
    ] {
        assert!(dir.join(f).is_file(), "the tour wrote no {f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
