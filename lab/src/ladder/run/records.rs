//! A ladder's results: one JSON line per finished run, read back whole (a torn last line
//! ignored), the files a shard writes, the runs on file, and what the stopping rules count.

use super::config::{Scope, Tally};
use super::plan::Shard;
use concur::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One finished run, or one part of a run that a stop request cut short: one JSON line.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
pub struct Record {
    /// The instance's name: its file relative to the instance root, or a generated one's
    /// `generated:WxH:seedS`.
    pub instance: String,
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// Colours, grey excluded.
    pub colors: usize,
    /// The method (serialised as its name: `rrr`, `scan`, ...).
    pub method: concur::method::MethodName,
    /// The method entry's label ([`MethodSpec::label`](super::MethodSpec::label)).
    pub label: String,
    /// The entry's parameters as the config gave them, with the time limit the run ran under.
    pub params: serde_json::Value,
    /// The run's number among the runs of its instance and method.
    pub run: u64,
    /// The run's seed, derived from the config's seed and `run`.
    pub seed: u64,
    /// Where it ran: `cpu`, or `gpu: ` and the adapter.
    pub backend: String,
    /// Whether the run found a verified solution.
    pub solved: bool,
    /// `map`, `map+ac`, or the method name for the controls; null when unsolved.
    pub mechanism: Option<String>,
    /// Iterations (maps), nodes (backtrack), moves or iterations (local search).
    pub work: u64,
    /// The unit of `work`: `iterations`, `nodes`, `moves`.
    pub work_unit: String,
    /// Seconds the run took, wall clock.
    pub wall_s: f64,
    /// Matched interior joins of the run's best board, recomputed by the exact verifier.
    pub best_score: usize,
    /// The puzzle's interior joins, the score of a solution.
    pub max_score: usize,
    /// The version of `concur` that ran it.
    pub version: String,
    /// `(seconds, best score)` at the start and at each new best score (the maps and the
    /// local searches; empty for the tree searches): the score reached against time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<(f64, usize)>,
    /// Rate mode (`keep_going`): the verified solutions of the run, and how many are
    /// distinct up to turning the board; absent for a run that stops at its first (then
    /// `solved` counts 0 or 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solutions: Option<u64>,
    /// Rate mode: of them, the distinct ones up to turning the board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distinct_solutions: Option<u64>,
    /// The map's trials in the batch, when more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials: Option<u64>,
    /// The machine whose wall seconds the run spent: the GPU adapter of a device run, the
    /// config's `machine` for a CPU run; absent in older records (then "cpu").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The part of its run this line holds (1, 2, ...), for a run that a stop request cut
    /// short: its part 1 is written at the stop (`interrupted`), and `--resume` continues it
    /// as part 2 and so on, under the same run key. Absent for a run done in one go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<u32>,
    /// Why this part was cut short: the stop request's reason (`SIGTERM`, `SIGUSR1`, ...).
    /// Absent for a part that ran to its own end (its budget, time limit or solution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// How the part began: `restored`, from the state its previous part saved at its stop
    /// (the maps on the CPU: the same run as one never stopped), or `fresh`, a fresh start
    /// seeded from (seed, run, part). Absent for part 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued: Option<String>,
    /// Rate mode: the solutions of this part in the order found, each with its trial, the
    /// trial's own iteration count at it, and its run length (the iterations of its segment).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<FoundAt>,
    /// Where and how the run ran: host, CPU, threads, the scheduler's job, start time, CPU
    /// seconds, peak memory. Absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<super::provenance::Provenance>,
}

/// One solution of a rate-mode run, as [`Record::found`] lists it.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct FoundAt {
    /// The trial that found it.
    pub trial: u64,
    /// The trial's own iteration count at it.
    pub at: u64,
    /// Its run length: the iterations of the trial's segment, from its start or its previous
    /// solution.
    pub length: u64,
}

impl Record {
    /// Verified solutions in the run: `solutions` in rate mode, else 1 when solved.
    pub fn solution_count(&self) -> u64 {
        self.solutions.unwrap_or(u64::from(self.solved))
    }

    /// Whether the run's wall seconds are a GPU device's (else one CPU core's).
    pub fn on_device(&self) -> bool {
        self.backend.starts_with("gpu")
    }

    /// The machine its cost was spent on: `device`, else the backend's kind.
    pub fn machine(&self) -> String {
        self.device.clone().unwrap_or_else(|| self.backend.clone())
    }

    /// The identity of a run, for resuming and for checking shards (every part of a run has
    /// the same key).
    pub fn key(&self) -> (String, String, u64) {
        (self.instance.clone(), self.label.clone(), self.run)
    }

    /// Whether the run is whole: done in one go, or joined from parts the last of which ran
    /// to its end. A run still cut short covers less than its budget.
    pub fn is_whole(&self) -> bool {
        self.interrupted.is_none()
    }

    /// The records of each (method label, cells, width): a cell of the report's tables.
    pub fn by_method_and_size(records: &[Record]) -> std::collections::BTreeMap<(String, usize, usize), Vec<&Record>> {
        let mut groups: std::collections::BTreeMap<(String, usize, usize), Vec<&Record>> =
            std::collections::BTreeMap::new();
        for r in records {
            groups.entry((r.label.clone(), r.width * r.height, r.width)).or_default().push(r);
        }
        groups
    }
}

/// Records grouped by (method label, cells, width).
pub type BySize<'r> = std::collections::BTreeMap<(String, usize, usize), Vec<&'r Record>>;

/// The line that tells a finished run: instance, label, run, whether solved, its work and
/// its seconds.
impl std::fmt::Display for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} run {}: {} {} {} in {:.2} s",
            self.instance,
            self.label,
            self.run,
            if self.solved { "solved" } else { "unsolved" },
            self.work,
            self.work_unit,
            self.wall_s
        )
    }
}

/// The records with each run's parts joined into one record, in the order each run first
/// appears: work, seconds, solutions and run lengths summed, solved when a part solved (its
/// mechanism), the best score the best of the parts', the trace laid end to end. The joined
/// record keeps its last part's number and `interrupted` (None when the run finished), so
/// statistics that assume a whole budget can leave out a run still cut short. Records
/// without parts pass through unchanged.
pub fn join_parts(records: Vec<Record>) -> Vec<Record> {
    if records.iter().all(|r| r.part.is_none()) {
        return records;
    }
    let mut index: std::collections::HashMap<(String, String, u64), usize> = std::collections::HashMap::new();
    let mut out: Vec<Record> = Vec::with_capacity(records.len());
    let mut parts: Vec<Vec<Record>> = Vec::new();
    for r in records {
        if r.part.is_none() {
            out.push(r);
            parts.push(Vec::new());
            continue;
        }
        match index.get(&r.key()) {
            Some(&i) => parts[i].push(r),
            None => {
                index.insert(r.key(), out.len());
                out.push(r.clone());
                parts.push(vec![r]);
            }
        }
    }
    for (joined, mut ps) in out.iter_mut().zip(parts) {
        if ps.len() < 2 {
            continue;
        }
        ps.sort_by_key(|p| p.part);
        let mut j = ps[0].clone();
        let mut offset = j.wall_s;
        for p in &ps[1..] {
            j.work += p.work;
            j.wall_s += p.wall_s;
            j.trace.extend(p.trace.iter().map(|&(t, s)| (t + offset, s)));
            offset += p.wall_s;
            if !j.solved && p.solved {
                j.mechanism.clone_from(&p.mechanism);
            }
            j.solved |= p.solved;
            j.best_score = j.best_score.max(p.best_score);
            j.solutions = match (j.solutions, p.solutions) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            };
            j.distinct_solutions = match (j.distinct_solutions, p.distinct_solutions) {
                (None, None) => None,
                // Each part counts the classes new to it (a restored part knows its run's; a
                // fresh part's may repeat an earlier part's, so the sum bounds it above).
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            };
            j.found.extend(p.found.iter().copied());
            j.part = p.part;
            j.interrupted.clone_from(&p.interrupted);
            j.continued.clone_from(&p.continued);
        }
        *joined = j;
    }
    out
}

/// Adds records to a tally.
pub fn tally(records: &[Record], into: &mut Tally) {
    for r in records {
        for scope in [Scope::Cells(r.width * r.height), Scope::Instance(r.instance.clone())] {
            let e = into.entry((r.label.clone(), scope)).or_default();
            e.solutions += r.solution_count();
            e.core_hours += r.wall_s / 3600.0;
            e.work += r.work as f64;
        }
    }
}

/// The results files of a folder: every `*.jsonl` in it, sorted (none when it cannot be
/// read).
pub fn results_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// The records of every `*.jsonl` in a folder (none when it does not exist).
pub fn read_folder(dir: &Path) -> Result<Vec<Record>> {
    let mut out = Vec::new();
    for f in results_files(dir) {
        out.extend(read_records(&f)?);
    }
    Ok(out)
}

/// Reads every record of a JSONL file; a torn last line (from a crash) is ignored.
pub fn read_records(path: &Path) -> Result<Vec<Record>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", path, e)),
    };
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => return Err(Error::Record { path: path.to_path_buf(), line: i + 1, reason: e.to_string() }),
        }
    }
    Ok(out)
}

/// The results file of a shard.
pub fn results_path(out: &Path, shard: Option<Shard>) -> PathBuf {
    match shard {
        None => out.join("results.jsonl"),
        Some(s) => out.join(format!("results-{}-of-{}.jsonl", s.k, s.n)),
    }
}
