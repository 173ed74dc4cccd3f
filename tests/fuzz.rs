//! Fuzzed input: seeded mutations of every format the engine reads (puzzle texts, JSON
//! puzzles, solutions, certificates, ladder configs, count journals) go through the library's
//! parsers, which must answer with a value or an error and never panic. A sample then goes
//! through the command line, which must exit 2 with a one-line reason for what the parser
//! refuses.
use crate::common::generated;
use concur::certify::{self, Certificate};
use concur::puzzle::format;
use concur::search::journal;
use concur::search::scan::{self, NoJournal, ScanOptions};
use concur_lab::ladder;
use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Fragments that parsers trip over: signs, huge and odd numbers, JSON and TOML syntax.
const TOKENS: &[&str] = &[
    "-1",
    "0",
    "4294967296",
    "18446744073709551616",
    "1e999",
    "-0",
    "NaN",
    "null",
    "true",
    "\"\"",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "=",
    "\n",
    " ",
    "\t",
    "#",
    "\"",
    "[[",
    "]]",
    "999999999",
    "0x10",
    "\u{feff}",
    "\u{0}",
];

/// Applies one to four random edits: flip, delete, duplicate or move a range, insert a
/// token or a random byte, truncate.
fn mutate(base: &[u8], rng: &mut impl Rng) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        let n = v.len();
        let at = if n == 0 { 0 } else { rng.random_range(0..n) };
        match rng.random_range(0..7) {
            0 if n > 0 => v[at] ^= 1 << rng.random_range(0..8),
            1 if n > 0 => {
                let end = (at + rng.random_range(1..=16)).min(n);
                v.drain(at..end);
            }
            2 if n > 0 => {
                let end = (at + rng.random_range(1..=32)).min(n);
                let piece = v[at..end].to_vec();
                let to = rng.random_range(0..=v.len());
                v.splice(to..to, piece);
            }
            3 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                v.splice(at..at, t.iter().copied());
            }
            4 => v.insert(at, rng.random()),
            5 if n > 0 => v.truncate(at),
            _ if n > 1 => {
                // Replace a digit run with another number.
                if let Some(d) = (at..n).find(|&i| v[i].is_ascii_digit()) {
                    let end = (d..n).find(|&i| !v[i].is_ascii_digit()).unwrap_or(n);
                    let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                    v.splice(d..end, t.iter().copied());
                }
            }
            _ => {}
        }
    }
    v
}

/// Runs `f` on `cases` mutations of `base` (`f` says whether the parser accepted it); fails
/// on the first panic, with the input, and when the mutations were all accepted or all
/// refused (then they test little).
fn fuzz(what: &str, base: &[u8], cases: usize, seed: u64, mut f: impl FnMut(&[u8]) -> bool) -> usize {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut panics, mut accepted) = (Vec::new(), 0);
    for _ in 0..cases {
        let input = mutate(base, &mut rng);
        match catch_unwind(AssertUnwindSafe(|| f(&input))) {
            Ok(ok) => accepted += usize::from(ok),
            Err(_) => panics.push(String::from_utf8_lossy(&input).into_owned()),
        }
    }
    assert!(panics.is_empty(), "{what}: {} of {cases} inputs panicked; first: {:?}", panics.len(), panics[0]);
    assert!(accepted > 0 && accepted < cases, "{what}: {accepted} of {cases} accepted");
    eprintln!("{what}: {cases} mutations, {accepted} accepted, the rest refused, none panicked");
    cases
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("concur-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn concur(args: &[&str]) -> std::process::Output {
    Command::new(crate::common::concur_bin()).args(args).output().expect("run concur")
}

/// A certificate of a solved 3x3 from the command line.
fn certificate(puzzle: &Path) -> Vec<u8> {
    let dir = tmp("certs");
    let out = concur(&[
        "solve",
        puzzle.to_str().unwrap(),
        "--backend",
        "cpu",
        "--dump-state",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    std::fs::read(dir.join(format!("trial-{}.json", v["trial"]))).unwrap()
}

/// A count journal of a small puzzle, from the command line.
fn count_journal(puzzle: &Path) -> Vec<u8> {
    let j = tmp("journal.jsonl");
    let _ = std::fs::remove_file(&j);
    let out = concur(&["count", puzzle.to_str().unwrap(), "--engine", "scan", "--threads", "1", "--tasks", "8"]);
    assert!(out.status.success());
    let out = concur(&[
        "count",
        puzzle.to_str().unwrap(),
        "--engine",
        "scan",
        "--threads",
        "1",
        "--tasks",
        "8",
        "--journal",
        j.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::read(&j).unwrap()
}

#[test]
fn mutated_inputs_never_panic_a_parser() {
    let (p4, b4) = generated(4, 4, 11);
    let (p3, _) = generated(3, 3, 2);
    let text = format::write_puzzle_text(&p4);
    let json = format::write_puzzle_json(&p4);
    // The same puzzle with two of its planted placements as hints (clue puzzles).
    let mut hinted: serde_json::Value = serde_json::from_str(&json).unwrap();
    hinted["hints"] = [0usize, 5]
        .iter()
        .map(|&c| serde_json::json!({"pos": c, "piece": b4.cells[c].piece, "rot": b4.cells[c].rot}))
        .collect();
    let hinted = hinted.to_string();
    let solution = format::write_solution(&b4).unwrap();
    let p3_path = tmp("p3.txt");
    std::fs::write(&p3_path, format::write_puzzle(&p3)).unwrap();
    let cert = certificate(&p3_path);
    let journal_bytes = count_journal(&p3_path);
    let ladder_cfg = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/..", "/examples/ladder-small.toml")).unwrap();
    // The bases must parse, or the mutations say little.
    assert!(format::read_puzzle(text.as_bytes()).is_ok());
    assert!(format::read_puzzle(json.as_bytes()).is_ok());
    assert!(format::read_puzzle(hinted.as_bytes()).is_ok());
    assert!(format::read_solution(solution.as_bytes(), &p4).is_ok());
    let c: Certificate = serde_json::from_slice(&cert).unwrap();
    assert!(certify::check(&p3, &c).unwrap().certifies());
    assert!(ladder::parse_config(std::str::from_utf8(&ladder_cfg).unwrap()).is_ok());
    assert!(journal::parse(Path::new("j"), &journal_bytes).unwrap().plan.is_some());

    let mut total = 0;
    let puzzle = |b: &[u8]| match format::read_puzzle(b) {
        // What parses must be usable: its score bound and its rim classes.
        Ok(p) => p.max_score() > 0,
        Err(_) => false,
    };
    total += fuzz("puzzle text", text.as_bytes(), 2500, 1, puzzle);
    total += fuzz("JSON puzzle", json.as_bytes(), 2000, 2, puzzle);
    total += fuzz("JSON puzzle with hints", hinted.as_bytes(), 1000, 3, puzzle);
    total += fuzz("solution", solution.as_bytes(), 2000, 4, |b| {
        format::read_solution(b, &p4).map(|board| concur::verify::check(&p4, &board)).is_ok()
    });
    total += fuzz("certificate", &cert, 1500, 5, |b| {
        serde_json::from_slice::<Certificate>(b).is_ok_and(|c| certify::check(&p3, &c).is_ok())
    });
    total += fuzz("ladder config", &ladder_cfg, 1500, 6, |b| {
        std::str::from_utf8(b).is_ok_and(|t| ladder::parse_config(t).is_ok())
    });
    let opts =
        ScanOptions { threads: 1, time_limit: Some(std::time::Duration::from_millis(200)), ..Default::default() };
    let mut resumed = 0;
    total += fuzz("count journal", &journal_bytes, 1000, 7, |b| {
        let Ok(rec) = journal::parse(Path::new("j"), b) else { return false };
        // A journal that parses is resumed: its boards are checked again and its plan must
        // fit the puzzle, or the resume is refused.
        match &rec.plan {
            Some(plan) => {
                resumed += 1;
                scan::count_journaled(&p3, &opts, Some((plan, &rec.done)), &NoJournal).is_ok()
            }
            None => true,
        }
    });
    assert!(total >= 10_000, "{total} cases");
    assert!(resumed > 100, "only {resumed} mutated journals reached the resume check");
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// What the binary must say about input the library refuses: exit 2 and one line.
fn assert_refused(args: &[&str], what: &str) {
    let out = concur(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: want one line, got {err:?}");
    assert!(err.starts_with("concur: error:") && !err.contains("panicked"), "{what}: {err}");
}

#[test]
fn the_command_line_refuses_a_sample_of_mutated_files_with_exit_2() {
    let (p4, b4) = generated(4, 4, 12);
    let good = tmp("cli-good.txt");
    std::fs::write(&good, format::write_puzzle(&p4)).unwrap();
    let bases: [(&str, Vec<u8>); 3] = [
        ("puzzle", format::write_puzzle_text(&p4).into_bytes()),
        ("json", format::write_puzzle_json(&p4).into_bytes()),
        ("solution", format::write_solution(&b4).unwrap().into_bytes()),
    ];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
    let mut refused = 0;
    for i in 0..60 {
        let (kind, base) = &bases[i % bases.len()];
        let bytes = mutate(base, &mut rng);
        let path = tmp(&format!("cli-{i}.txt"));
        std::fs::write(&path, &bytes).unwrap();
        match *kind {
            "solution" => {
                if format::read_solution(&bytes, &p4).is_err() {
                    refused += 1;
                    assert_refused(&["verify", p(&good), p(&path)], kind);
                }
            }
            _ => {
                if format::read_puzzle(&bytes).is_err() {
                    refused += 1;
                    assert_refused(&["solve", p(&path), "--method", "backtrack", "--time-limit", "1"], kind);
                    assert_refused(&["count", p(&path)], kind);
                }
            }
        }
    }
    assert!(refused >= 20, "only {refused} of 60 mutations refused: the sample says little");
}

// ---------------------------------------------------------------------------------------------
// The command line: seeded random combinations and extreme values of every option of every
// command, run through the binary.

/// Numbers at the edges: zero, negatives, NaN, infinities, huge, word boundaries.
const EXTREME: &[&str] = &[
    "0",
    "-1",
    "NaN",
    "inf",
    "-inf",
    "1e300",
    "1e-300",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "0.5",
    "1",
    "2",
    "1000",
    "100000",
    "",
];

/// Trial counts: small, or too many for any memory (a batch of a hundred thousand trials runs
/// one round of 64 iterations before it sees its time limit, which would take the fuzz's time).
const TRIALS: &[&str] =
    &["0", "1", "8", "1000", "-1", "NaN", "1e300", "4294967296", "18446744073709551615", "10000000", "100000000"];

/// Time limits: short ones, bad ones, and a long one that a signal ends.
const SECONDS: &[&str] = &[
    "0",
    "0.2",
    "0.2",
    "0.5",
    "-1",
    "NaN",
    "inf",
    "1e300",
    "1e-300",
    "4294967296",
    "18446744073709551616",
    "1e9",
    "3600",
    "100000",
];

/// Thread counts: a few, none, and far more than any machine has.
const THREADS: &[&str] = &["0", "1", "2", "100000", "4294967296", "18446744073709551615", "-1", "NaN"];

/// How a fuzzed option takes its value.
#[derive(Clone, Copy)]
enum Val {
    /// A switch without a value.
    Flag,
    /// One of these words.
    Of(&'static [&'static str]),
    /// An output file: fresh, or one that cannot be written.
    File,
    /// An output folder: fresh, or one that cannot be written.
    Dir,
}

/// `solve`'s options; the first, `--method`, is drawn for every line (and fuzzed only in
/// `cli`'s tests of bad values).
const SOLVE: &[(&str, Val)] = &[
    ("--method", Val::Of(&["rrr", "dm", "dc", "backtrack", "scan", "hill", "alns", "beam", "nope"])),
    ("--trials", Val::Of(TRIALS)),
    ("--beta", Val::Of(EXTREME)),
    ("--max-iters", Val::Of(EXTREME)),
    ("--dc-map", Val::Of(&["rrr", "dm", "x"])),
    ("--weights", Val::Of(&["uniform", "adaptive"])),
    ("--gamma", Val::Of(EXTREME)),
    ("--layout", Val::Of(&["plain", "hybrid"])),
    ("--hybrid", Val::Flag),
    ("--readout", Val::Of(&["argmax", "assignment"])),
    ("--propagate", Val::Of(EXTREME)),
    ("--edge", Val::Of(&["average", "one-color"])),
    ("--no-cycle-restart", Val::Flag),
    ("--restart-stall", Val::Of(EXTREME)),
    ("--kick", Val::Of(EXTREME)),
    (
        "--join-weights",
        Val::Of(&["1,1,4", "0,0,0", "NaN,1,1", "inf,1,1", "1e300,1,1", "1e-40,1,1", "1,2", "-1,1,1", ""]),
    ),
    (
        "--adapt",
        Val::Of(&["0.1,0.01,4", "NaN,0,0", "inf,1,1", "0,0,0", "1e300,1e300,1e300", "-1,-1,-1", "1,2", "1,1,1e30"]),
    ),
    ("--complete", Val::Of(EXTREME)),
    ("--complete-radius", Val::Of(EXTREME)),
    ("--complete-nodes", Val::Of(EXTREME)),
    ("--complete-stall", Val::Of(EXTREME)),
    ("--dump-state", Val::Dir),
    ("--dump-all", Val::Flag),
    ("--cold-assign", Val::Flag),
    ("--all-trials", Val::Flag),
    ("--threads", Val::Of(THREADS)),
    ("--plateau", Val::Of(EXTREME)),
    ("--destroy-min", Val::Of(EXTREME)),
    ("--destroy-max", Val::Of(EXTREME)),
    ("--operators", Val::Of(&["random", "ring,band", "scattered,component-halo,rectangle", "nope", ""])),
    ("--no-exact-repair", Val::Flag),
    ("--restart-after", Val::Of(EXTREME)),
    ("--temperature", Val::Of(EXTREME)),
    ("--start", Val::Of(&["no-such-board.txt", "https://e2.bucas.name/#board_w=2", ""])),
    ("--width", Val::Of(EXTREME)),
    ("--fill-order", Val::Of(&["row-major", "comb", "spiral", "nope"])),
    ("--teeth", Val::Of(EXTREME)),
    ("--children", Val::Of(EXTREME)),
    ("--rounds", Val::Of(EXTREME)),
    ("--breaks", Val::Of(&["201,206,211", "0", "5,3,999999", "x", ""])),
    ("--polish", Val::Of(EXTREME)),
    ("--ac", Val::Of(&["fc", "ac3", "ac2001", "ac4"])),
    ("--alldiff", Val::Of(&["values", "regin", "nope"])),
    ("--seed", Val::Of(EXTREME)),
    ("--time-limit", Val::Of(SECONDS)),
    ("--max-nodes", Val::Of(EXTREME)),
    ("--order", Val::Of(&["scan", "mrv", "mrv-degree", "dom-deg", "dom-wdeg"])),
    ("--restart-base", Val::Of(EXTREME)),
    ("--tree", Val::Of(&["estimate", "random"])),
    ("--probes", Val::Of(EXTREME)),
    ("--row-chain", Val::Flag),
    ("--no-restarts", Val::Flag),
    ("--backend", Val::Of(&["cpu", "cpu", "gpu", "auto"])),
    ("--assign", Val::Of(&["cpu", "gpu"])),
    ("--adapter", Val::Of(&["no-such-adapter", "llvmpipe", ""])),
    ("-o", Val::File),
    ("--json", Val::Flag),
];

const COUNT: &[(&str, Val)] = &[
    ("--limit", Val::Of(EXTREME)),
    ("--ac", Val::Of(&["fc", "ac3", "ac2001", "ac4"])),
    ("--order", Val::Of(&["scan", "mrv", "mrv-degree", "dom-deg", "dom-wdeg"])),
    ("--time-limit", Val::Of(SECONDS)),
    ("--threads", Val::Of(THREADS)),
    ("--no-symmetry", Val::Flag),
    ("--probes", Val::Of(EXTREME)),
    ("--journal", Val::File),
    ("--tasks", Val::Of(EXTREME)),
    ("--reverse", Val::Flag),
    ("--estimate", Val::Of(EXTREME)),
    ("--seed", Val::Of(EXTREME)),
    ("--json", Val::Flag),
];

const LADDER: &[(&str, Val)] = &[
    ("--shard", Val::Of(&["1/1", "1/2", "2/2", "0/0", "2/1", "1/0", "-1/2", "18446744073709551616/1", "x"])),
    ("--resume", Val::Flag),
    ("--max-cells", Val::Of(EXTREME)),
    ("--methods", Val::Of(&["scan", "nope", "scan,hill", ""])),
    ("--runs", Val::Of(EXTREME)),
    ("--puzzles", Val::Dir),
    ("--threads", Val::Of(THREADS)),
    ("--deadline", Val::Of(SECONDS)),
    ("--wait-lock", Val::Of(SECONDS)),
    ("--requeue", Val::Flag),
];

const REPORT: &[(&str, Val)] = &[("--json", Val::Flag)];

const GENERATE: &[(&str, Val)] = &[
    ("--frame-colors", Val::Of(EXTREME)),
    ("--inner-colors", Val::Of(EXTREME)),
    ("--solution", Val::File),
    ("--unique", Val::Flag),
    ("--unique-attempts", Val::Of(EXTREME)),
    ("--unique-nodes", Val::Of(EXTREME)),
];

const BENCH: &[(&str, Val)] = &[
    ("--sizes", Val::Of(&["3x3", "0x0", "3by3", "100000x100000", "4x4,3x3", "2x2", "x", ""])),
    ("--batches", Val::Of(&["1", "0", "1,4", "100000000", "18446744073709551615", "-1", ""])),
    ("--formulations", Val::Of(&["f1", "dc", "f1,dc", "nope", ""])),
    // The GPU's rows take seconds on a software adapter (its copy rows move gigabytes): the
    // GPU bench is tested in `cli`, not here.
    ("--backends", Val::Of(&["cpu", "nope", "cpu,nope"])),
    ("--budget", Val::Of(&["0.01", "0", "-1", "NaN", "inf", "1e300", "1e-300", "4294967296"])),
    ("--max-gib", Val::Of(&["8", "0", "-1", "NaN", "inf", "1e300", "1e-300"])),
    ("--dc-chunk-trials", Val::Of(EXTREME)),
    ("--adapter", Val::Of(&["no-such-adapter", ""])),
    ("--seed", Val::Of(EXTREME)),
    ("--json", Val::Flag),
];

/// A command's fuzzed options, and the short limits it gets unless those are fuzzed.
type Options = &'static [(&'static str, Val)];
type Defaults = &'static [(&'static str, &'static str)];

/// The files a fuzzed command line may name, made once.
struct Ground {
    dir: PathBuf,
    /// Puzzles: solvable 3x3, 4x4 and 5x5, an unsolvable 2x2, a missing path, garbage.
    puzzles: Vec<PathBuf>,
    solution: PathBuf,
    ladder_configs: Vec<PathBuf>,
    results: PathBuf,
    /// Paths that cannot be written: a missing folder, a path under a file, a folder.
    bad_files: Vec<PathBuf>,
    bad_dirs: Vec<PathBuf>,
}

impl Ground {
    fn new() -> Ground {
        let dir = tmp("args");
        std::fs::create_dir_all(&dir).unwrap();
        let mut puzzles = Vec::new();
        for (w, seed) in [(3, 1), (4, 2), (5, 3)] {
            let p = dir.join(format!("p{w}.txt"));
            std::fs::write(&p, format::write_puzzle(&generated(w, w, seed).0)).unwrap();
            puzzles.push(p);
        }
        let unsolvable = dir.join("unsolvable.txt");
        std::fs::write(&unsolvable, "2 2\n0 1 2 0\n0 0 3 1\n2 4 0 0\n3 0 0 5\n").unwrap();
        puzzles.push(unsolvable);
        puzzles.push(dir.join("missing.txt"));
        let garbage = dir.join("garbage.txt");
        std::fs::write(&garbage, (0..=255u8).cycle().take(999).collect::<Vec<u8>>()).unwrap();
        puzzles.push(garbage);
        let solution = dir.join("p4.sol");
        std::fs::write(&solution, format::write_solution(&generated(4, 4, 2).1).unwrap()).unwrap();
        let mut ladder_configs = Vec::new();
        let instances = "[[instances]]\ngenerate = { width = 3, height = 3, seed = 1 }\n\
                         [[instances]]\ngenerate = { width = 4, height = 4, seed = 2 }\n";
        // (top-level keys, methods and budgets): good, and extreme in runs, limits and budgets.
        for (i, (top, tables)) in [
            (
                "runs = 2\n",
                "[[methods]]\nmethod = \"scan\"\nmax_nodes = 100000\n[[methods]]\nmethod = \"hill\"\ntime_limit = 0.2\n\
                 [[methods]]\nmethod = \"rrr\"\nmax_iters = 2000\n",
            ),
            ("runs = 18446744073709551615\n", "[[methods]]\nmethod = \"scan\"\nmax_nodes = 1000\n"),
            ("runs = 1\n", "[[methods]]\nmethod = \"hill\"\ntime_limit = 1e300\n"),
            ("runs = 1\n", "[[methods]]\nmethod = \"alns\"\ntime_limit = -1\n"),
            (
                "runs = 1\n",
                "[[methods]]\nmethod = \"rrr\"\nmax_iters = 0\nbeta = 1e30\n\
                 [[budgets]]\nmax_cells = 18446744073709551615\ntime_limit = 0.1\nruns = 4294967296\n",
            ),
            ("runs = 2\nfirst_run = 18446744073709551615\n", "[[methods]]\nmethod = \"backtrack\"\nmax_nodes = 10\n"),
            ("runs = 1\n", "[[methods]]\nmethod = \"dc\"\nmax_iters = 100\njoin_weights = [0, 0, 0]\n"),
            ("runs = 3\n", "[[methods]]\nmethod = \"dm\"\nmax_iters = 18446744073709551615\ntime_limit = 0.1\n"),
        ]
        .iter()
        .enumerate()
        {
            let cfg = dir.join(format!("ladder-{i}.toml"));
            std::fs::write(&cfg, format!("{top}{instances}{tables}")).unwrap();
            if i == 0 {
                assert!(concur_lab::ladder::parse_config(&format!("{top}{instances}{tables}")).is_ok());
            }
            ladder_configs.push(cfg);
        }
        ladder_configs.push(dir.join("missing.toml"));
        let results = dir.join("results");
        std::fs::create_dir_all(&results).unwrap();
        let line = serde_json::json!({
            "instance": "a.txt", "width": 4, "height": 4, "colors": 5, "method": "rrr", "label": "rrr",
            "params": {}, "run": 0, "seed": 0, "backend": "cpu", "solved": true, "mechanism": "map", "work": 10,
            "work_unit": "iterations", "wall_s": 1.0, "best_score": 24, "max_score": 24, "version": "0"
        });
        std::fs::write(results.join("results.jsonl"), format!("{line}\n")).unwrap();
        let file = dir.join("a-file");
        std::fs::write(&file, "x").unwrap();
        let bad_files = vec![PathBuf::from("/no/such/dir/x.out"), file.join("x.out"), dir.clone()];
        let bad_dirs = vec![file.join("sub"), file.clone()];
        Ground { dir, puzzles, solution, ladder_configs, results, bad_files, bad_dirs }
    }

    /// Mostly a fresh path for invocation `i`, sometimes one that cannot be written.
    fn output(&self, i: usize, dir: bool, rng: &mut Xoshiro256PlusPlus) -> String {
        let bad = if dir { &self.bad_dirs } else { &self.bad_files };
        let p = if rng.random_range(0..4) == 0 {
            bad[rng.random_range(0..bad.len())].clone()
        } else {
            self.dir.join(format!("out-{i}-{}", rng.random_range(0..1000)))
        };
        p.to_string_lossy().into_owned()
    }
}

fn pick<'a>(v: &[&'a str], rng: &mut Xoshiro256PlusPlus) -> &'a str {
    v[rng.random_range(0..v.len())]
}

/// One random command line (invocation `i`): a command, its required arguments (mostly
/// good), and up to six options drawn with their values from the command's table. Runs that
/// would otherwise go on for long get short limits unless those limits are what is fuzzed.
fn command_line(i: usize, g: &Ground, rng: &mut Xoshiro256PlusPlus) -> Vec<String> {
    let puzzle = |rng: &mut Xoshiro256PlusPlus| {
        // Mostly the solvable puzzles.
        let k = if rng.random_range(0..5) == 0 { rng.random_range(0..g.puzzles.len()) } else { rng.random_range(0..3) };
        g.puzzles[k].to_string_lossy().into_owned()
    };
    let mut args: Vec<String> = Vec::new();
    // Every 40th line, a run with no end of its own (the unsolvable puzzle, an hour's limit),
    // which only the SIGINT stops.
    let endless = i.is_multiple_of(40);
    let kind = if endless { 0 } else { rng.random_range(0..12) };
    let (table, short): (Options, Defaults) = match kind {
        0..=4 if endless => {
            args.extend(["solve".into(), g.puzzles[3].to_string_lossy().into_owned()]);
            (SOLVE, &[("--time-limit", "3600")])
        }
        0..=4 => {
            // A method first, so that each method's own options meet it.
            let method = pick(&["rrr", "dm", "dc", "backtrack", "scan", "hill", "alns", "beam"], rng);
            args.extend(["solve".into(), puzzle(rng), "--method".into(), method.into()]);
            (&SOLVE[1..], &[("--time-limit", "0.3")])
        }
        5..=6 => {
            let engine = pick(&["ac", "scan"], rng);
            args.extend(["count".into(), puzzle(rng), "--engine".into(), engine.into()]);
            (COUNT, &[("--time-limit", "0.3")])
        }
        7 => {
            let cfg = &g.ladder_configs[rng.random_range(0..g.ladder_configs.len())];
            args.extend(["ladder".into(), cfg.to_string_lossy().into_owned(), "--out".into(), g.output(i, true, rng)]);
            (LADDER, &[])
        }
        8 => {
            let input = match rng.random_range(0..4) {
                0 => "/no/such/results".into(),
                1 => g.solution.to_string_lossy().into_owned(),
                _ => g.results.to_string_lossy().into_owned(),
            };
            args.extend(["report".into(), input, "-o".into(), g.output(i, true, rng)]);
            (REPORT, &[])
        }
        9 => {
            let sol = if rng.random_range(0..3) == 0 { puzzle(rng) } else { g.solution.to_string_lossy().into_owned() };
            args.extend(["render".into(), puzzle(rng), sol, "-o".into(), g.output(i, false, rng)]);
            (&[], &[])
        }
        10 => {
            let side = |rng: &mut Xoshiro256PlusPlus| {
                if rng.random_range(0..3) == 0 {
                    pick(EXTREME, rng).to_string()
                } else {
                    rng.random_range(2..8).to_string()
                }
            };
            args.extend(["generate".into(), "--width".into(), side(rng), "--height".into(), side(rng)]);
            args.extend(["--seed".into(), pick(EXTREME, rng).into(), "-o".into(), g.output(i, false, rng)]);
            (GENERATE, &[("--unique-nodes", "20000")])
        }
        _ => {
            args.push("bench".into());
            (BENCH, &[("--sizes", "3x3"), ("--batches", "1"), ("--budget", "0.01"), ("--backends", "cpu")])
        }
    };
    let mut chosen: Vec<&str> = Vec::new();
    for _ in 0..rng.random_range(0..=6) {
        if table.is_empty() {
            break;
        }
        let (flag, val) = table[rng.random_range(0..table.len())];
        if chosen.contains(&flag) {
            continue;
        }
        chosen.push(flag);
        args.push(flag.into());
        match val {
            Val::Flag => {}
            // Half the numbers sane, so that the runs get past the checks and into the work.
            Val::Of(v) if std::ptr::eq(v, EXTREME) && rng.random_range(0..2) == 0 => {
                args.push(pick(&["1", "2", "3", "10", "100"], rng).into())
            }
            Val::Of(v) => args.push(pick(v, rng).into()),
            Val::File => args.push(g.output(i, false, rng)),
            Val::Dir => args.push(g.output(i, true, rng)),
        }
    }
    for (flag, value) in short {
        if !chosen.contains(flag) {
            args.extend([flag.to_string(), value.to_string()]);
        }
    }
    args
}

/// How one fuzzed invocation ended.
struct Ending {
    args: Vec<String>,
    code: Option<i32>,
    signalled: bool,
    stderr: String,
    wall_s: f64,
}

/// After this long a run gets SIGINT (which must end it as at a time limit, exit 130 or its
/// own outcome); past the hard limit it is killed, which fails the test.
const SIGINT_AFTER_S: f64 = 3.0;
const KILL_AFTER_S: f64 = 20.0;

fn run_fuzzed(args: Vec<String>) -> Ending {
    let start = std::time::Instant::now();
    let mut child = Command::new(crate::common::concur_bin())
        .args(&args)
        // Memory refusals are tested under a cap, so that no run here takes the machine.
        .env("CONCUR_MAX_MEMORY", "1G")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn concur");
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut s);
        s
    });
    let mut signalled = false;
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        let t = start.elapsed().as_secs_f64();
        if t > KILL_AFTER_S {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        if t > SIGINT_AFTER_S && !signalled {
            let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
            signalled = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let stderr = reader.join().unwrap();
    Ending { args, code: status.and_then(|s| s.code()), signalled, stderr, wall_s: start.elapsed().as_secs_f64() }
}

/// What is wrong with an ending, if anything: a kill past the limit, a death by signal, a
/// panic or an abort, an exit code other than 0, 1, 2 (and 130 after the SIGINT, or a
/// ladder's resumable 75 after the SIGINT or its deadline), or an exit 2 that does not say why
/// in exactly one line.
fn fault(e: &Ending) -> Option<String> {
    let Some(code) = e.code else {
        return Some(if e.wall_s > KILL_AFTER_S { "still running: killed".into() } else { "died by a signal".into() });
    };
    if e.stderr.contains("panicked") || e.stderr.contains("memory allocation") {
        return Some(format!("exit {code} after a panic or an abort"));
    }
    let ladder_stopped =
        e.args.first().is_some_and(|a| a == "ladder") && (e.signalled || e.args.iter().any(|a| a == "--deadline"));
    if !(matches!(code, 0..=2) || (code == 130 && e.signalled) || (code == 75 && ladder_stopped)) {
        return Some(format!("exit {code}"));
    }
    if code == 2 {
        let lines: Vec<&str> = e.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() != 1 || !lines[0].starts_with("concur: error: ") {
            return Some(format!("exit 2 without one line of reason: {lines:?}"));
        }
    }
    None
}

/// The command line, fuzzed: 800 seeded random command lines over every option of `solve`,
/// `count`, `ladder`, `report`, `render`, `generate` and `bench`, with extreme values
/// (0, negatives, NaN, infinities, 1e300, 2^32, 2^64, huge trial and thread counts) and
/// outputs that cannot be written, run through the binary four at a time. Every run must end
/// by itself with 0, 1 or 2 (one line of reason for 2), or with 130 after a SIGINT sent at 3 s;
/// none may panic, abort, die by a signal or outlast 20 s.
#[test]
fn fuzzed_command_lines_exit_cleanly() {
    // The fast tier runs the first 120 lines of the same sample (`CONCUR_TESTS=full`: all).
    let runs = crate::common::sample(800, 120);
    const PARALLEL: usize = 4;
    let g = Ground::new();
    // `CONCUR_FUZZ_SEED` explores other samples; CI runs the fixed one.
    let seed = std::env::var("CONCUR_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(2024);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut lines: Vec<Vec<String>> = (0..800).map(|i| command_line(i, &g, &mut rng)).collect();
    lines.truncate(runs);
    // Two lines that always run until the SIGINT, whatever the sample drew for its own endless
    // lines (each of which a fuzzed option may refuse): the signal path is tested every time,
    // the beam's among it.
    let unsolvable = g.puzzles[3].to_string_lossy().into_owned();
    for method in [&["--method", "rrr", "--backend", "cpu"][..], &["--method", "beam", "--threads", "1"][..]] {
        let mut line = vec!["solve".to_string(), unsolvable.clone()];
        line.extend(method.iter().map(|s| s.to_string()));
        line.extend(["--time-limit".to_string(), "3600".to_string()]);
        lines.push(line);
    }
    let start = std::time::Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let endings = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(args) = lines.get(i) else { break };
                    let e = run_fuzzed(args.clone());
                    endings.lock().unwrap().push(e);
                }
            });
        }
    });
    let endings = endings.into_inner().unwrap();
    let mut codes = std::collections::BTreeMap::new();
    for e in &endings {
        *codes.entry(e.code.map_or("none".to_string(), |c| c.to_string())).or_insert(0) += 1;
    }
    let faults: Vec<String> = endings
        .iter()
        .filter_map(|e| {
            fault(e).map(|f| format!("{f}: concur {} ({:.1} s); stderr {:?}", e.args.join(" "), e.wall_s, e.stderr))
        })
        .collect();
    let slowest = endings.iter().map(|e| e.wall_s).fold(0.0, f64::max);
    for e in endings.iter().filter(|e| e.wall_s > 5.0) {
        eprintln!("slow ({:.1} s, exit {:?}): concur {}", e.wall_s, e.code, e.args.join(" "));
    }
    eprintln!(
        "{} command lines in {:.1} s (slowest {slowest:.1} s); exit codes {codes:?}; {} sent SIGINT; {} faults",
        lines.len(),
        start.elapsed().as_secs_f64(),
        endings.iter().filter(|e| e.signalled).count(),
        faults.len()
    );
    assert!(faults.is_empty(), "{} of {} command lines failed:\n{}", faults.len(), lines.len(), faults.join("\n"));
    // The sample must reach the work, the refusals and the signals, or it tests little.
    // (The fast tier's slice has floors of its own; it may draw no exit 1.)
    let floors = if crate::common::full_tier() { [100, 3, 100] } else { [10, 0, 10] };
    for (code, least) in ["0", "1", "2"].into_iter().zip(floors) {
        assert!(least == 0 || codes.get(code).is_some_and(|&n| n >= least), "too few exits {code}: {codes:?}");
    }
    let signalled = endings.iter().filter(|e| e.signalled).count();
    assert!(signalled > 0, "no run lasted until the SIGINT: the signal path went untested");
}
