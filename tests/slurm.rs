//! The ladder under a real scheduler: a single-node Slurm (Debian's `slurm-wlm` and `munge`,
//! brought up by `scripts/slurm/up.sh` in a folder of its own and taken down by
//! `scripts/slurm/down.sh`) runs docs/cli.md's Slurm recipe, exactly as written there with
//! the array, cores, time and paths of this machine filled in.
//!
//! Without Slurm (or without root, which the daemons need) the test prints SKIPPED and passes,
//! unless `REQUIRE_SLURM=1` (CI, where `.ci/run` installs it). Every test here is named
//! `under_slurm_*`, so a run can leave them out with `--skip under_slurm`.

use crate::common::concur_bin;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("concur-slurm-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn on_path(cmd: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {cmd}")]).output().is_ok_and(|o| o.status.success())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A single-node cluster for the test's life: taken down when dropped.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
}

impl Cluster {
    /// The cluster, or None (SKIPPED) where Slurm cannot run here and is not required.
    fn up() -> Option<Cluster> {
        let required = std::env::var("REQUIRE_SLURM").is_ok_and(|v| v == "1");
        let missing = ["sbatch", "slurmctld", "slurmd", "munged"].into_iter().find(|c| !on_path(c));
        if let Some(c) = missing
            .map(|c| format!("{c} not found (scripts/slurm/install.sh)"))
            .or_else(|| (!is_root()).then(|| "not root: the daemons need it".to_string()))
        {
            assert!(!required, "REQUIRE_SLURM=1 but {c}");
            println!("SKIPPED: no single-node Slurm here: {c}");
            return None;
        }
        let dir = tmp("cluster");
        // Ports of its own, free now, so that a Slurm already up on this machine (the default
        // ports 6817 and 6818, a researcher's workstation) neither blocks it nor is touched.
        // Both held open at once, so that they differ; closed before the daemons bind them.
        let bind = || std::net::TcpListener::bind("127.0.0.1:0");
        let port = |l: &std::net::TcpListener| l.local_addr().map(|a| a.port());
        let ports = bind().and_then(|a| bind().and_then(|b| Ok((port(&a)?, port(&b)?))));
        let Ok((ctld, slurmd)) = ports else {
            assert!(!required, "REQUIRE_SLURM=1 but no free port for the cluster");
            println!("SKIPPED: no free port for a single-node Slurm here");
            return None;
        };
        let out = Command::new(repo().join("scripts/slurm/up.sh"))
            .arg(&dir)
            .env("SLURMCTLD_PORT", ctld.to_string())
            .env("SLURMD_PORT", slurmd.to_string())
            .output()
            .expect("run up.sh");
        assert!(out.status.success(), "up.sh failed: {}", String::from_utf8_lossy(&out.stderr));
        Some(Cluster { conf: dir.join("slurm.conf"), dir })
    }

    /// A Slurm client command with this cluster's config.
    fn run(&self, cmd: &str, args: &[&str]) -> Output {
        Command::new(cmd).args(args).env("SLURM_CONF", &self.conf).output().unwrap_or_else(|e| panic!("{cmd}: {e}"))
    }

    fn ok(&self, cmd: &str, args: &[&str]) -> String {
        let out = self.run(cmd, args);
        assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The states of a job's tasks (`squeue`; empty once every task has ended), or squeue's
    /// complaint when it could not answer (a busy controller).
    fn states(&self, job: &str) -> Result<Vec<String>, String> {
        let out = self.run("squeue", &["-h", "-j", job, "-o", "%T"]);
        let err = String::from_utf8_lossy(&out.stderr);
        // A job no longer known (ended long ago) is empty; any other complaint is no answer.
        if !out.status.success() && !err.contains("Invalid job id") {
            return Err(err.trim().to_string());
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect())
    }

    /// Waits until `ok` holds of the job's task states, at most `secs`.
    fn wait_for(&self, job: &str, secs: f64, what: &str, ok: impl Fn(&[String]) -> bool) {
        let start = Instant::now();
        loop {
            let s = self.states(job);
            if s.as_ref().is_ok_and(|s| ok(s)) {
                return;
            }
            if start.elapsed().as_secs_f64() >= secs {
                let queue = String::from_utf8_lossy(&self.run("squeue", &["-h", "-o", "%i %T %r"]).stdout).to_string();
                panic!("job {job}: not {what} after {secs} s: {s:?}; the queue: {queue}; {}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A requeued task waits about two minutes before it is eligible (`Reason=BeginTime`):
    /// once it is pending, make it eligible now (the test's shortcut; the recipe waits).
    fn release_now(&self, job: &str, tasks: &[u32]) {
        let start = Instant::now();
        let pending = |t: u32| {
            let out = self.run("squeue", &["-h", "-j", job, "-o", "%K %T"]);
            String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == format!("{t} PENDING"))
        };
        while !tasks.iter().all(|&t| pending(t)) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "job {job}: tasks {tasks:?} not pending again; {}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // A task started again within the second its last run was killed is refused by the
        // node ("Job credential revoked", the reason for Slurm's own delay): let it pass.
        std::thread::sleep(Duration::from_secs(2));
        for t in tasks {
            self.ok("scontrol", &["update", &format!("JobId={job}_{t}"), "StartTime=now"]);
        }
    }

    fn logs(&self) -> String {
        let mut text = String::new();
        for f in std::fs::read_dir(self.dir.join("logs")).into_iter().flatten().flatten() {
            text += &format!("\n--- {}\n{}", f.path().display(), std::fs::read_to_string(f.path()).unwrap_or_default());
        }
        text
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.run("scancel", &["--user", "root"]);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30)
            && !String::from_utf8_lossy(&self.run("squeue", &["-h"]).stdout).trim().is_empty()
        {
            std::thread::sleep(Duration::from_millis(200));
        }
        let _ = Command::new(repo().join("scripts/slurm/down.sh")).arg(&self.dir).output();
    }
}

/// docs/cli.md's Slurm recipe, exactly as written between its markers.
fn recipe() -> String {
    let doc = std::fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    let start = doc.find("<!-- recipe: slurm -->").expect("docs/cli.md has the Slurm recipe");
    let end = doc.find("<!-- /recipe: slurm -->").expect("the recipe's end marker");
    let block = &doc[start..end];
    let body = block.split("```sh\n").nth(1).and_then(|b| b.split("```").next()).expect("a sh block");
    body.to_string()
}

/// The recipe with this machine's values in place of its placeholders.
fn filled(tasks: u32, config: &Path, out: &Path, logs: &Path) -> String {
    let mut text = recipe();
    for (from, to) in [
        ("--array=1-16", format!("--array=1-{tasks}")),
        ("--cpus-per-task=8", "--cpus-per-task=1".to_string()),
        ("--time=04:00:00", "--time=00:10:00".to_string()),
        ("--deadline 14100", "--deadline 540".to_string()),
        ("/shared/logs", logs.display().to_string()),
        ("/shared/ladder.toml", config.display().to_string()),
        ("/shared/results", out.display().to_string()),
        ("exec concur ", format!("exec {} ", concur_bin().display())),
    ] {
        assert!(text.contains(from), "the recipe no longer says {from:?}: update the test with it");
        text = text.replace(from, &to);
    }
    text
}

/// Submits a script; returns the array job's id.
fn submit(c: &Cluster, script: &Path) -> String {
    let id = c.ok("sbatch", &["--parsable", &script.display().to_string()]);
    id.split(';').next().unwrap().to_string()
}

fn records(dir: &Path) -> Vec<serde_json::Value> {
    let mut v = Vec::new();
    for f in std::fs::read_dir(dir).unwrap().flatten() {
        if f.path().extension().is_some_and(|x| x == "jsonl") {
            for line in std::fs::read_to_string(f.path()).unwrap().lines() {
                v.push(serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}: {line}", f.path().display())));
            }
        }
    }
    v
}

fn key(r: &serde_json::Value) -> (String, String, u64) {
    (r["instance"].as_str().unwrap().into(), r["label"].as_str().unwrap().into(), r["run"].as_u64().unwrap())
}

/// The same ladder run here, whole, with no scheduler and no stop: the reference.
fn whole(config: &Path, name: &str) -> Vec<serde_json::Value> {
    let out = tmp(name);
    let o = Command::new(concur_bin())
        .args(["ladder", &config.display().to_string(), "--out", &out.display().to_string(), "--threads", "2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    records(&out)
}

const CONFIG: &str = r#"
runs = 3
seed = 11
[[instances]]
generate = { width = 4, height = 4, seed = 1 }
[[instances]]
generate = { width = 5, height = 5, seed = 2 }
[[methods]]
method = "rrr"
max_iters = 20000
[[methods]]
method = "scan"
max_nodes = 100000000
[[methods]]
method = "backtrack"
label = "backtrack ac4"
ac = "ac4"
max_nodes = 2000000
"#;

/// A rate-mode map campaign whose runs last seconds each: the one a stop cuts.
const LONG: &str = r#"
runs = 4
seed = 5
[[instances]]
generate = { width = 6, height = 6, seed = 3 }
[[methods]]
method = "rrr"
keep_going = true
trials = 2
max_iters = 400000
"#;

#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn under_slurm_the_recipe_runs_and_a_term_and_a_requeue_lose_no_work() {
    let Some(c) = Cluster::up() else { return };
    let logs = c.dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();

    // 1. The recipe as written: two array tasks whose shards' union is the whole ladder.
    let cfg = c.dir.join("ladder.toml");
    std::fs::write(&cfg, CONFIG).unwrap();
    let out = c.dir.join("results");
    let script = c.dir.join("ladder.sh");
    std::fs::write(&script, filled(2, &cfg, &out, &logs)).unwrap();
    let job = submit(&c, &script);
    c.wait_for(&job, 180.0, "done", <[String]>::is_empty);
    let mut got = records(&out);
    assert!(out.join("results-1-of-2.jsonl").exists() && out.join("results-2-of-2.jsonl").exists(), "{}", c.logs());
    let mut want = whole(&cfg, "whole");
    got.sort_by_key(key);
    want.sort_by_key(key);
    assert_eq!(got.iter().map(key).collect::<Vec<_>>(), want.iter().map(key).collect::<Vec<_>>(), "{}", c.logs());
    for (g, w) in got.iter().zip(&want) {
        // Every budget here is work: the verdict and the work agree run for run.
        assert_eq!((&g["solved"], &g["work"]), (&w["solved"], &w["work"]), "{:?}", key(g));
        let job = &g["provenance"]["job"];
        assert_eq!(job["scheduler"], "slurm", "{g}");
        assert!(["1", "2"].contains(&job["array_task"].as_str().unwrap()), "{g}");
        assert_eq!(g["provenance"]["threads"], 1, "SLURM_CPUS_PER_TASK decides the threads: {g}");
    }
    let report = Command::new(concur_bin())
        .args(["report", &out.display().to_string(), "-o", &c.dir.join("report").display().to_string(), "--json"])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let r: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(r["records"].as_u64(), Some(got.len() as u64), "the report merges both shards");

    // 2. A TERM at a random moment of a long rate-mode ladder, then a requeue, then the end.
    let cfg = c.dir.join("long.toml");
    std::fs::write(&cfg, LONG).unwrap();
    let out = c.dir.join("long");
    std::fs::write(&script, filled(2, &cfg, &out, &logs)).unwrap();
    let job = submit(&c, &script);
    // Every task started (a task may end before another starts).
    let wait_running =
        || c.wait_for(&job, 60.0, "running", |s| s.iter().any(|t| t == "RUNNING") && s.iter().all(|t| t != "PENDING"));
    let pause = |lo: u64, hi: u64| {
        let ns = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64;
        std::thread::sleep(Duration::from_millis(lo + ns % (hi - lo)));
    };
    wait_running();
    pause(1500, 4000);
    // The scheduler's TERM to every task: each writes its run in flight as a part, requeues
    // itself (--requeue) and exits 75.
    c.ok("scancel", &["--signal=TERM", "--full", &job]);
    c.release_now(&job, &[1, 2]);
    wait_running();
    pause(1000, 3000);
    // An operator's requeue of a task still running: Slurm sends it TERM and holds it.
    let tasks = c.ok("squeue", &["-h", "-j", &job, "-o", "%K %T"]);
    if let Some(task) = tasks.lines().find(|l| l.ends_with("RUNNING")).and_then(|l| l.split_whitespace().next()) {
        let task: u32 = task.parse().unwrap();
        c.ok("scontrol", &["requeue", &format!("{job}_{task}")]);
        std::thread::sleep(Duration::from_millis(500));
        c.release_now(&job, &[task]);
    }
    c.wait_for(&job, 240.0, "done", <[String]>::is_empty);

    let got = records(&out);
    let want = whole(&cfg, "long-whole");
    let budget = 2 * 400_000;
    let mut parted = 0;
    for w in &want {
        let parts: Vec<&serde_json::Value> = got.iter().filter(|g| key(g) == key(w)).collect();
        assert!(!parts.is_empty(), "run {:?} missing: {}", key(w), c.logs());
        // One or more parts, numbered 1.. in order, the last one whole.
        let work: u64 = parts.iter().map(|p| p["work"].as_u64().unwrap()).sum();
        assert_eq!(work, budget, "run {:?}: the parts' work sums to its budget: {parts:?}", key(w));
        if parts.len() > 1 {
            parted += 1;
            let mut nums: Vec<u64> = parts.iter().map(|p| p["part"].as_u64().unwrap()).collect();
            nums.sort();
            assert_eq!(nums, (1..=parts.len() as u64).collect::<Vec<_>>(), "{parts:?}");
            assert!(parts.iter().filter(|p| p.get("interrupted").is_some()).count() == parts.len() - 1, "{parts:?}");
            assert!(parts.iter().any(|p| p["provenance"]["job"]["restarts"].as_u64() >= Some(1)), "{parts:?}");
            // A map on the CPU goes on from the batch it saved at the stop.
            assert!(
                parts.iter().filter(|p| p["part"].as_u64() > Some(1)).all(|p| p["continued"] == "restored"),
                "{parts:?}"
            );
        }
        // Stopped and continued, the map is the run never stopped: the same solutions at the
        // same iterations.
        let found: Vec<(u64, u64)> = parts
            .iter()
            .flat_map(|p| p["found"].as_array().cloned().unwrap_or_default())
            .map(|f| (f["trial"].as_u64().unwrap(), f["at"].as_u64().unwrap()))
            .collect();
        let mut found = found;
        found.sort();
        let mut whole_found: Vec<(u64, u64)> = w["found"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|f| (f["trial"].as_u64().unwrap(), f["at"].as_u64().unwrap()))
            .collect();
        whole_found.sort();
        assert_eq!(found, whole_found, "run {:?}: {parts:?}", key(w));
    }
    assert!(parted > 0, "no run was cut by the TERM or the requeue: the test tested nothing; {}", c.logs());
    assert_eq!(
        got.iter().map(key).collect::<std::collections::BTreeSet<_>>().len(),
        want.len(),
        "every planned run stands once, in one or more parts"
    );
}
