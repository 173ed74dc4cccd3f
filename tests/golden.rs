//! Golden runs: the same command line and seed must give the same run, field for field and
//! board for board, before and after a change that means to keep behaviour (a refactor, a
//! faster kernel with the same arithmetic). Each case runs the binary with a fixed seed and a
//! work budget (never a clock), drops the timing fields (`wall_s`, `*_s`, `*_per_s`) and
//! the adapter's name, and compares the JSON and the board written with `-o` against
//! `tests/golden/runs.json`. `CONCUR_BLESS=1 cargo test --release golden` rewrites the file
//! (only for a change that means to change behaviour; say why in the commit).
//!
//! The GPU cases run on the software adapter that CI uses (Mesa's llvmpipe), where the
//! device arithmetic is reproducible; on a hardware GPU they are skipped (rounding may
//! differ), and without any adapter they print SKIPPED unless `REQUIRE_GPU=1`.
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// (name, puzzle of set 1, arguments after the puzzle, needs the GPU).
const CASES: &[(&str, &str, &str, bool)] = &[
    ("rrr-5x5", "05x05", "--method rrr --trials 4 --max-iters 5000 --seed 3", false),
    ("rrr-6x6-all-trials", "06x06", "--method rrr --trials 3 --max-iters 3000 --seed 1 --all-trials", false),
    (
        "rrr-uniform-stall-5x5",
        "05x05",
        "--method rrr --trials 4 --max-iters 5000 --seed 5 --join-weights 1,1,1 --restart-stall 300",
        false,
    ),
    (
        "rrr-kick-6x6",
        "06x06",
        "--method rrr --trials 2 --max-iters 3000 --seed 2 --restart-stall 500 --kick 0.5",
        false,
    ),
    ("rrr-complete-6x6", "06x06", "--method rrr --trials 2 --max-iters 3000 --seed 4 --complete 4", false),
    ("rrr-adapt-5x5", "05x05", "--method rrr --trials 4 --max-iters 5000 --seed 3 --adapt 0.1,0.01,8", false),
    ("dm-5x5", "05x05", "--method dm --trials 4 --max-iters 5000 --seed 3", false),
    ("dc-hybrid-5x5", "05x05", "--method dc --trials 4 --max-iters 3000 --seed 3", false),
    ("dc-plain-5x5", "05x05", "--method dc --layout plain --trials 4 --max-iters 3000 --seed 3", false),
    ("backtrack-6x6", "06x06", "--method backtrack --seed 3", false),
    ("backtrack-ac4-6x6", "06x06", "--method backtrack --ac ac4 --seed 3", false),
    ("scan-6x6", "06x06", "--method scan --seed 3", false),
    ("hill-5x5", "05x05", "--method hill --seed 3 --max-iters 200000", false),
    ("alns-5x5", "05x05", "--method alns --seed 3 --max-iters 3000", false),
    ("gpu-rrr-5x5", "05x05", "--method rrr --trials 8 --max-iters 2000 --seed 3 --backend gpu --assign cpu", true),
    // The GPU backend's default placement, the device JV loop (`--assign auto`).
    ("gpu-rrr-device-5x5", "05x05", "--method rrr --trials 8 --max-iters 2000 --seed 3 --backend gpu", true),
    ("gpu-dc-plain-4x4", "04x04", "--method dc --layout plain --trials 8 --max-iters 400 --seed 3 --backend gpu", true),
];

fn golden_path() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("tests/golden/runs.json")
}

/// The JSON of a run without its timings and with the backend reduced to its kind.
fn canonical(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| !(k == "wall_s" || k.ends_with("_s") || k.ends_with("_per_s")))
                .map(|(k, v)| {
                    if k == "backend" {
                        let kind = v.as_str().unwrap_or("").split(':').next().unwrap_or("").to_string();
                        (k, Value::String(kind))
                    } else {
                        (k, canonical(v))
                    }
                })
                .collect::<Map<_, _>>(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(canonical).collect()),
        v => v,
    }
}

/// Runs one case: its canonical JSON and the board text it wrote.
fn run_case(puzzles: &Path, size: &str, args: &str, out: &Path) -> Value {
    let puzzle = puzzles.join(format!("brendan_owen/pieces_set_1/pieces_{size}.txt"));
    let board = out.with_extension("sol");
    let _ = std::fs::remove_file(&board);
    let o = Command::new(crate::common::concur_bin())
        .arg("solve")
        .arg(&puzzle)
        .args(args.split_whitespace())
        .args(["--threads", "1", "--json", "-o"])
        .arg(&board)
        .env("NODEVICE_SELECT", "1")
        .output()
        .expect("run concur");
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1)), "{args}: exit {code:?}: {}", String::from_utf8_lossy(&o.stderr));
    let json: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args}: bad JSON ({e})"));
    let text = std::fs::read_to_string(&board).unwrap_or_default();
    serde_json::json!({ "args": args, "exit": code, "json": canonical(json), "board": text })
}

/// The adapter a GPU case would run on, if any (its name), or why there is none.
#[cfg(feature = "gpu")]
fn adapter() -> Result<String, String> {
    concur::backend::gpu::GpuContext::shared().map(|c| c.adapter.name.clone()).map_err(|e| e.to_string())
}

#[cfg(not(feature = "gpu"))]
fn adapter() -> Result<String, String> {
    Err("built without the gpu feature".into())
}

#[test]
fn golden_runs_are_unchanged() {
    let Some(dir) = crate::common::puzzles("golden_runs_are_unchanged") else { return };
    let bless = std::env::var("CONCUR_BLESS").as_deref() == Ok("1");
    let stored: Map<String, Value> = if bless {
        Map::new()
    } else {
        let text = std::fs::read_to_string(golden_path()).expect("tests/golden/runs.json (bless with CONCUR_BLESS=1)");
        serde_json::from_str(&text).expect("golden JSON")
    };
    let gpu = adapter();
    let tmp = std::env::temp_dir().join(format!("concur-golden-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut got = Map::new();
    let mut failures = Vec::new();
    for &(name, size, args, needs_gpu) in CASES {
        if needs_gpu {
            match &gpu {
                Err(e) => {
                    // The CPU-only build has no GPU path to require.
                    assert!(
                        !cfg!(feature = "gpu") || std::env::var("REQUIRE_GPU").as_deref() != Ok("1"),
                        "{name}: REQUIRE_GPU=1 but {e}"
                    );
                    eprintln!("SKIPPED golden {name}: {e}");
                    continue;
                }
                Ok(a) if !a.contains("llvmpipe") => {
                    eprintln!("SKIPPED golden {name}: a hardware adapter ({a}) may round otherwise");
                    continue;
                }
                Ok(_) => {}
            }
        }
        let run = run_case(&dir, size, args, &tmp.join(name));
        if !bless {
            match stored.get(name) {
                None => failures.push(format!("{name}: no golden run on file")),
                Some(want) if *want != run => {
                    failures.push(format!("{name}:\n  want {want}\n  got  {run}"));
                }
                Some(_) => {}
            }
        }
        got.insert(name.to_string(), run);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    if bless {
        // Keep the GPU cases on file when this machine could not run them.
        let mut all: Map<String, Value> =
            std::fs::read_to_string(golden_path()).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        all.extend(got);
        std::fs::write(golden_path(), serde_json::to_string_pretty(&Value::Object(all)).unwrap() + "\n").unwrap();
        eprintln!("blessed {}", golden_path().display());
        return;
    }
    assert!(failures.is_empty(), "golden runs changed:\n{}", failures.join("\n"));
}
