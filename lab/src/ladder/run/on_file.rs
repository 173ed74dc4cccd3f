//! The runs on file in a results folder, read once and then followed: each `*.jsonl` is read
//! from where the last reading stopped, so a ladder's resume and its stopping rules cost what
//! other shards appended since, not the whole past (every `*.jsonl` read again before each
//! run cost 0.3 s a run beside 1e5 records; BENCHMARKS.md, "A results folder followed").
//!
//! It keeps what the ladder asks of the records: each run's parts (done, or stopped with its
//! work and seconds so far) for `--resume`, and the tally the stopping rules count.

use super::config::Tally;
use super::records::{Record, tally};
use concur::error::{Error, Result};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// A run's identity: instance, method label, run number.
pub type RunKey = (String, String, u64);

/// What the parts of one run on file add up to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parts {
    /// Parts on file (the highest part number; 1 for a run written in one go).
    pub parts: u32,
    /// Whether a part ran to its end (its budget, time limit or solution): the run is done.
    pub done: bool,
    /// Work of every part, in the run's unit.
    pub work: u64,
    /// Wall seconds of every part.
    pub wall_s: f64,
    /// Verified solutions of every part.
    pub solutions: u64,
}

/// The runs on file in a folder, followed as it grows.
#[derive(Debug, Default)]
pub struct OnFile {
    dir: PathBuf,
    /// Per file: bytes read so far (up to its last whole line).
    read_to: HashMap<PathBuf, u64>,
    runs: HashMap<RunKey, Parts>,
    tally: Tally,
    records: usize,
}

impl OnFile {
    /// Every record on file in `dir` now (none when it does not exist).
    pub fn read(dir: &Path) -> Result<Self> {
        let mut on = OnFile { dir: dir.to_path_buf(), ..OnFile::default() };
        on.refresh()?;
        Ok(on)
    }

    /// Reads what was appended to the folder's `*.jsonl` since the last reading (new files
    /// whole). A line being written (no newline yet) waits for the next reading.
    pub fn refresh(&mut self) -> Result<()> {
        for f in super::records::results_files(&self.dir) {
            let from = self.read_to.get(&f).copied().unwrap_or(0);
            let len = match std::fs::metadata(&f) {
                Ok(m) => m.len(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io("read", &f, e)),
            };
            if len <= from {
                continue;
            }
            let mut file = std::fs::File::open(&f).map_err(|e| Error::io("read", &f, e))?;
            file.seek(SeekFrom::Start(from)).map_err(|e| Error::io("read", &f, e))?;
            let mut bytes = Vec::with_capacity((len - from) as usize);
            file.take(len - from).read_to_end(&mut bytes).map_err(|e| Error::io("read", &f, e))?;
            let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let text = std::str::from_utf8(&bytes[..whole]).map_err(|e| Error::Record {
                path: f.clone(),
                line: 0,
                reason: e.to_string(),
            })?;
            let mut new = Vec::new();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let r: Record = serde_json::from_str(line).map_err(|e| Error::Record {
                    path: f.clone(),
                    line: 0,
                    reason: e.to_string(),
                })?;
                new.push(r);
            }
            for r in &new {
                self.add(r);
            }
            tally(&new, &mut self.tally);
            self.records += new.len();
            self.read_to.insert(f, from + whole as u64);
        }
        Ok(())
    }

    fn add(&mut self, r: &Record) {
        let p = self.runs.entry(r.key()).or_default();
        p.parts = p.parts.max(r.part.unwrap_or(1));
        p.done |= r.interrupted.is_none();
        p.work += r.work;
        p.wall_s += r.wall_s;
        p.solutions += r.solution_count();
    }

    /// The parts on file of a run (None: no part of it).
    pub fn parts(&self, key: &RunKey) -> Option<&Parts> {
        self.runs.get(key)
    }

    /// The tally of every record read (what the stopping rules count).
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// Records read so far.
    pub fn records(&self) -> usize {
        self.records
    }
}
