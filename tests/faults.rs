//! Faults mid-run: a disk that fills up (a small tmpfs, or a file-size limit) under a count's
//! journal and a ladder's results, and a ladder killed by SIGKILL. Nothing written before the
//! fault is lost or torn, and a resume finishes the work with the results of an uninterrupted
//! run.
use crate::common::{Tmpfs, concur_env, generated, scratch};
use concur::puzzle::format;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn concur(args: &[&str]) -> Output {
    concur_env(args, &[])
}

/// Where a fault strikes: a tmpfs of a few KiB, or a file-size limit (`ulimit -f`, KiB).
#[derive(Clone, Copy, Debug)]
enum Fault {
    Tmpfs,
    FileSize(u32),
}

/// Runs the binary with `args` under `fault` (the tmpfs is the caller's; only the limit needs
/// a shell).
fn run_under(fault: Fault, args: &[&str]) -> Output {
    match fault {
        Fault::Tmpfs => concur(args),
        Fault::FileSize(kib) => Command::new("bash")
            .arg("-c")
            .arg(format!("ulimit -f {kib}; exec \"$0\" \"$@\""))
            .arg(crate::common::concur_bin())
            .args(args)
            .output()
            .expect("run bash"),
    }
}

/// The faults to try: the tmpfs where one can be mounted (root), the file-size limit always.
fn faults(test: &str, tmpfs: &'static str, kib: u32) -> Vec<(Fault, Option<Tmpfs>)> {
    let mut out = vec![(Fault::FileSize(kib), None)];
    if let Some(t) = Tmpfs::mount(test, tmpfs, false) {
        out.push((Fault::Tmpfs, Some(t)));
    }
    out
}

/// Every line of `text` is whole JSON (and the text ends with a newline); returns them.
fn whole_lines(text: &str, what: &str) -> Vec<serde_json::Value> {
    assert!(text.is_empty() || text.ends_with('\n'), "{what}: a torn last line");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: a line that is not JSON ({e}): {l:?}")))
        .collect()
}

/// The last line of stderr of a run that failed mid-way: exit 2, the reason, no panic.
fn failed_with(out: &Output, needle: &str, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: stderr {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    let last = err.trim_end().lines().last().unwrap_or_default();
    assert!(last.starts_with("concur: error:") && last.contains(needle), "{what}: {last:?}");
}

#[test]
fn a_full_disk_mid_count_keeps_the_journal_whole_and_a_resume_finishes_it() {
    let dir = scratch("fault-count");
    let p = dir.join("p.txt");
    std::fs::write(&p, format::write_puzzle(&generated(6, 6, 2).0)).unwrap();
    // Tens of thousands of subtrees: a journal of about 1.6 MB.
    let count = ["count", s(&p), "--engine", "scan", "--threads", "1", "--tasks", "3000", "--json"];
    let plain = concur(&count);
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    for (fault, fs) in faults("count-journal", "64k", 32) {
        let what = format!("{fault:?}");
        let journal = match &fs {
            Some(t) => t.dir.join("j.jsonl"),
            None => dir.join("limited.jsonl"),
        };
        let out = run_under(fault, &[&count[..], &["--journal", s(&journal)]].concat());
        failed_with(&out, "run again to go on", &what);
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot append"), "{what}");
        // The count so far is still printed: a lower bound, not complete.
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the partial count");
        assert_eq!(v["complete"], false, "{what}: {v}");
        let text = std::fs::read_to_string(&journal).unwrap();
        let lines = whole_lines(&text, &what);
        assert!(lines.len() > 100 && lines[0].get("plan").is_some(), "{what}: {} lines", lines.len());
        // On a disk with room (a copy, or the same file without the limit) the count goes on
        // from the journal and ends with the uninterrupted count.
        let resumed = dir.join(format!("resumed-{}.jsonl", lines.len()));
        std::fs::copy(&journal, &resumed).unwrap();
        let out = concur(&[&count[..], &["--journal", s(&resumed)]].concat());
        assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["complete"], true, "{what}: {v}");
        assert_eq!(v["tasks_resumed"], lines.len() as u64 - 1, "{what}: every recorded subtree counts");
        for key in ["solutions", "up_to_rotation", "nodes", "tasks"] {
            assert_eq!(v[key], plain[key], "{what}: {key}");
        }
        drop(fs);
    }
}

/// A ladder of quick runs whose results depend only on their seeds (work limits, no clocks):
/// 2 instances x 3 methods x `runs` runs.
fn ladder_config(dir: &Path, runs: u32, iters: u32) -> PathBuf {
    let cfg = dir.join("ladder.toml");
    std::fs::write(
        &cfg,
        format!(
            "runs = {runs}\nseed = 7\n\
             [[instances]]\ngenerate = {{ width = 4, height = 4, seed = 1 }}\n\
             [[instances]]\ngenerate = {{ width = 5, height = 5, seed = 2 }}\n\
             [[methods]]\nmethod = \"rrr\"\nmax_iters = {iters}\n\
             [[methods]]\nmethod = \"scan\"\nmax_nodes = 200000\n\
             [[methods]]\nmethod = \"hill\"\nmax_iters = 20000\n"
        ),
    )
    .unwrap();
    cfg
}

/// The records of a results folder, by run, without their wall times.
fn results(dir: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    let mut out = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let f = e.unwrap().path();
        if f.extension().is_some_and(|x| x == "jsonl") {
            for mut v in whole_lines(&std::fs::read_to_string(&f).unwrap(), s(&f)) {
                v.as_object_mut().unwrap().remove("wall_s");
                // Where and when it ran, its CPU seconds and memory: the machine's, not the run's.
                v.as_object_mut().unwrap().remove("provenance");
                // A trace's times are wall clock too; its scores must agree.
                if let Some(t) = v.get_mut("trace").and_then(|t| t.as_array_mut()) {
                    t.iter_mut().for_each(|p| *p = p[1].clone());
                }
                let key = format!("{} {} {}", v["instance"], v["label"], v["run"]);
                assert!(out.insert(key.clone(), v).is_none(), "{key} twice");
            }
        }
    }
    out
}

/// Runs a ladder to the end (resuming what is on file) and returns its records.
fn finish_ladder(cfg: &Path, out: &Path) -> std::collections::BTreeMap<String, serde_json::Value> {
    let r = concur(&["ladder", s(cfg), "--out", s(out), "--threads", "1", "--resume"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    results(out)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn a_full_disk_mid_ladder_keeps_every_line_and_a_resume_finishes_it() {
    let dir = scratch("fault-ladder");
    let cfg = ladder_config(&dir, 12, 3000);
    let reference = finish_ladder(&cfg, &dir.join("whole"));
    assert_eq!(reference.len(), 72);
    for (fault, fs) in faults("ladder-results", "16k", 8) {
        let what = format!("{fault:?}");
        let out_dir = match &fs {
            Some(t) => t.dir.join("results"),
            None => dir.join("limited"),
        };
        let out = run_under(fault, &["ladder", s(&cfg), "--out", s(&out_dir), "--threads", "1"]);
        failed_with(&out, "--resume goes on", &what);
        let on_file = results(&out_dir);
        assert!(on_file.len() > 5 && on_file.len() < 72, "{what}: {} runs on file", on_file.len());
        for (k, v) in &on_file {
            assert_eq!(Some(v), reference.get(k), "{what}: {k} differs from the uninterrupted run");
        }
        let resumed = dir.join(format!("resumed-{}", on_file.len()));
        copy_dir(&out_dir, &resumed);
        assert_eq!(finish_ladder(&cfg, &resumed), reference, "{what}: the resumed ladder");
        drop(fs);
    }
}

#[test]
fn a_ladder_killed_mid_run_keeps_valid_lines_and_resumes_to_the_same_results() {
    let dir = scratch("fault-kill");
    // Longer map runs (tens of milliseconds), so that the kill lands mid-ladder.
    let cfg = ladder_config(&dir, 4, 30000);
    let reference = finish_ladder(&cfg, &dir.join("whole"));
    let out_dir = dir.join("killed");
    let file = out_dir.join("results.jsonl");
    let mut child = Command::new(crate::common::concur_bin())
        .args(["ladder", s(&cfg), "--out", s(&out_dir), "--threads", "1"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&file).map_or(0, |t| t.lines().count()) < 3 {
        assert!(start.elapsed().as_secs() < 60, "no runs written");
        assert!(child.try_wait().unwrap().is_none(), "the ladder ended before the kill");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let on_file = results(&out_dir);
    assert!(on_file.len() >= 3 && on_file.len() < reference.len(), "{} runs on file", on_file.len());
    for (k, v) in &on_file {
        assert_eq!(Some(v), reference.get(k), "{k} differs from the uninterrupted run");
    }
    assert_eq!(finish_ladder(&cfg, &out_dir), reference, "the resumed ladder");
}
