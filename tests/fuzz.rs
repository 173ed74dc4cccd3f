//! Fuzzed input: seeded mutations of every format the engine reads (puzzle texts, JSON
//! puzzles, solutions, certificates, ladder configs, count journals) go through the library's
//! parsers, which must answer with a value or an error and never panic. A sample then goes
//! through the command line, which must exit 2 with a one-line reason for what the parser
//! refuses.
use crate::common::generated;
use concur::certify::{self, Certificate};
use concur::ladder;
use concur::puzzle::format;
use concur::search::journal;
use concur::search::scan::{self, NoJournal, ScanOptions};
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
    Command::new(env!("CARGO_BIN_EXE_concur")).args(args).output().expect("run concur")
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
    let ladder_cfg = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/ladder-small.toml")).unwrap();
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
