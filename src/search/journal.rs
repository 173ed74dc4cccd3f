//! The journal of a long count: JSON lines, one per finished subtree, appended as they
//! finish, after one line with the count's plan ([`ScanPlan`]).
//!
//! A count stopped by its time limit, by a signal or by a lost machine keeps every finished
//! subtree; run again with the same journal, it walks only the others. Journals of one plan
//! written on several machines (say one walking the subtrees forwards and one backwards)
//! concatenate into one (`cat a.jsonl b.jsonl > all.jsonl`): repeated plan lines must be
//! equal, and a subtree recorded twice counts once.
//!
//! ```text
//! {"plan":{"corner_piece":0,"column_scan":false,"min_tasks":4096,"split_depth":16,"tasks":5120,"fingerprint":123}}
//! {"task":17,"solutions":0,"nodes":81234567,"boards":[]}
//! {"task":18,"solutions":4,"nodes":80000001,"boards":[[[0,1],[5,2],...]]}
//! ```
//!
//! [`ScanCountRun`] is `concur count --engine scan` as a whole: its checks before the count,
//! the journal opened and resumed, the notes held until the journal's plan is accepted.

use super::scan::{Journal, ScanCount, ScanError, ScanOptions, ScanPlan, TaskDone, count_journaled};
use crate::limits::{LimitError, MemoryBudget, OutputFile};
use crate::puzzle::Puzzle;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(serde::Serialize, serde::Deserialize)]
struct PlanLine {
    plan: ScanPlan,
}

/// What a journal file held: its plan and its finished subtrees.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// The count's plan (None for an empty journal).
    pub plan: Option<ScanPlan>,
    /// Its finished subtrees, in the file's order (one recorded twice appears twice).
    pub done: Vec<TaskDone>,
}

type Progress = Box<dyn Fn(u64, u64, u64, u64) + Sync>;
type OnPlan = Box<dyn Fn(&ScanPlan) + Sync>;

/// A journal file open for appending.
pub struct JsonlJournal {
    path: PathBuf,
    file: Mutex<File>,
    has_plan: bool,
    failure: Mutex<Option<String>>,
    progress: Option<Progress>,
    on_plan: Option<OnPlan>,
}

fn err(path: &Path, reason: impl ToString) -> ScanError {
    ScanError::Journal { path: path.display().to_string(), line: None, reason: reason.to_string() }
}

/// [`err`] about line `line` (1-based) of the journal.
fn err_at(path: &Path, line: usize, reason: impl ToString) -> ScanError {
    ScanError::Journal { path: path.display().to_string(), line: Some(line), reason: reason.to_string() }
}

/// Reads a journal (a missing or empty file is an empty journal). A last line cut short by
/// a stop mid-write is dropped; any other bad line is an error.
pub fn read(path: &Path) -> Result<Recorded, ScanError> {
    match std::fs::read(path) {
        Ok(bytes) => parse(path, &bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Recorded::default()),
        Err(e) => Err(err(path, e)),
    }
}

/// [`read`] over the file's bytes (`path` only names the file in errors).
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Recorded, ScanError> {
    let mut rec = Recorded::default();
    let text = std::str::from_utf8(bytes).map_err(|e| err(path, e))?;
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed = if line.contains("\"plan\"") {
            serde_json::from_str::<PlanLine>(line).map(|p| {
                if rec.plan.as_ref().is_some_and(|q| *q != p.plan) {
                    Err(err_at(path, i + 1, "a second, different plan"))
                } else {
                    rec.plan = Some(p.plan);
                    Ok(())
                }
            })
        } else {
            serde_json::from_str::<TaskDone>(line).map(|d| {
                rec.done.push(d);
                Ok(())
            })
        };
        match parsed {
            Ok(r) => r?,
            Err(_) if i == last => break,
            Err(e) => return Err(err_at(path, i + 1, e)),
        }
    }
    if rec.plan.is_none() && !rec.done.is_empty() {
        return Err(err(path, "finished subtrees but no plan line"));
    }
    Ok(rec)
}

impl JsonlJournal {
    /// Opens `path` for appending (creating it), after [`read`]ing what it holds. A cut-short
    /// last line is cut off the file first, so appended lines stay whole.
    pub fn open(path: &Path) -> Result<(Self, Recorded), ScanError> {
        let mut file = OpenOptions::new().read(true).append(true).create(true).open(path).map_err(|e| err(path, e))?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(|e| err(path, e))?;
        let rec = parse(path, &text)?;
        if !text.is_empty() && text.last() != Some(&b'\n') {
            let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            file.set_len(keep as u64).map_err(|e| err(path, e))?;
            file.seek(SeekFrom::End(0)).map_err(|e| err(path, e))?;
        }
        let j = JsonlJournal {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            has_plan: rec.plan.is_some(),
            failure: Mutex::new(None),
            progress: None,
            on_plan: None,
        };
        Ok((j, rec))
    }

    /// Calls `f(tasks_done, tasks, nodes, solutions)` about once a second during the count.
    pub fn with_progress(mut self, f: impl Fn(u64, u64, u64, u64) + Sync + 'static) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Calls `f` with the count's plan once it is known and, when resuming, accepted.
    pub fn with_on_plan(mut self, f: impl Fn(&ScanPlan) + Sync + 'static) -> Self {
        self.on_plan = Some(Box::new(f));
        self
    }

    /// Appends one line whole or not at all: a write that fails part-way (a full disk, a
    /// file-size limit) is cut back off the file, and after a failure nothing more is written,
    /// so every line on file stays whole and the count can resume from it.
    fn append(&self, line: String) {
        let mut f = self.file.lock().expect("no panics while held");
        let mut failure = self.failure.lock().expect("no panics while held");
        if failure.is_some() {
            return;
        }
        let before = f.metadata().map(|m| m.len());
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        if let Err(e) = f.write_all(&bytes).and_then(|()| f.flush()) {
            if let Ok(len) = before {
                let _ = f.set_len(len);
            }
            *failure = Some(format!("cannot append: {e}"));
        }
    }

    /// The first write error, if any line could not be written.
    pub fn finish(self) -> Result<(), ScanError> {
        match self.failure.into_inner().expect("no panics while held") {
            Some(e) => Err(err(&self.path, e)),
            None => Ok(()),
        }
    }
}

impl Journal for JsonlJournal {
    fn plan(&self, plan: &ScanPlan) {
        if let Some(f) = &self.on_plan {
            f(plan);
        }
        if !self.has_plan {
            self.append(serde_json::to_string(&PlanLine { plan: plan.clone() }).expect("plain data"));
        }
    }

    fn task(&self, done: &TaskDone) {
        self.append(serde_json::to_string(done).expect("plain data"));
    }

    fn progress(&self, tasks_done: u64, tasks: u64, nodes: u64, solutions: u64) {
        if let Some(f) = &self.progress {
            f(tasks_done, tasks, nodes, solutions);
        }
    }

    fn failed(&self) -> bool {
        self.failure.lock().expect("no panics while held").is_some()
    }
}

/// What `concur count --engine scan` was asked for, as given on the command line.
#[derive(Clone, Debug, Default)]
pub struct CountRequest {
    /// Seconds.
    pub time_limit: Option<f64>,
    /// Stop after at least this many solutions ([`ScanOptions::limit`]).
    pub limit: Option<u64>,
    /// Worker threads (0: every core); more than the cores are capped, with a note.
    pub threads: usize,
    /// Break the turn symmetry ([`ScanOptions::symmetry`]).
    pub symmetry: bool,
    /// Random probes per candidate tree ([`ScanOptions::probes`]).
    pub probes: u64,
    /// [`ScanOptions::min_tasks`].
    pub tasks: usize,
    /// Walk the subtrees from the last ([`ScanOptions::reverse`]).
    pub reverse: bool,
    /// The journal to append to and resume from.
    pub journal: Option<PathBuf>,
    /// Ends the count at its next check when tripped (the journal keeps every finished
    /// subtree).
    pub cancel: crate::cancel::Cancel,
}

/// A scan count that cannot start, or whose journal could not keep it.
#[derive(Debug, thiserror::Error)]
pub enum CountError {
    /// A time limit out of bounds, a journal that cannot be written, tables past the memory.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// A journal that cannot be read, or is of another count.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// A journal line could not be written: the count stopped there (or had finished), and
    /// every line on file is whole.
    #[error(
        "{error}; {}, and every line the journal holds is whole: run again to go on",
        if *complete { "the count is complete" } else { "the count stopped" }
    )]
    JournalLost {
        /// Why the line could not be written.
        error: ScanError,
        /// Whether the count itself had finished.
        complete: bool,
    },
}

/// A scan count checked before any counting ([`ScanCountRun::new`]), ready to run.
pub struct ScanCountRun<'p> {
    /// The puzzle the checks were made for.
    puzzle: &'p Puzzle,
    opts: ScanOptions,
    journal: Option<(PathBuf, OutputFile)>,
    /// Lines for the user (a capped thread count), told once the count starts.
    notes: Vec<String>,
}

/// What a scan count found; a journal that failed is reported after the count is shown.
pub struct JournaledCount {
    /// The count: exact when complete, else a lower bound.
    pub count: ScanCount,
    /// Why the journal lost lines ([`CountError::JournalLost`]), if it did.
    pub journal_failed: Option<CountError>,
}

/// Progress of a count without a journal file.
struct ProgressOnly(Progress);

impl Journal for ProgressOnly {
    fn progress(&self, tasks_done: u64, tasks: u64, nodes: u64, solutions: u64) {
        (self.0)(tasks_done, tasks, nodes, solutions);
    }
}

impl<'p> ScanCountRun<'p> {
    /// Checks, in this order: the time limit bounded, the journal writable, the threads
    /// within the cores (capped, with a note), the tables within the memory here.
    pub fn new(puzzle: &'p Puzzle, r: CountRequest) -> Result<Self, CountError> {
        let time_limit = r.time_limit.map(|s| crate::limits::seconds("--time-limit", s)).transpose()?;
        let journal = r.journal.map(|path| OutputFile::check(&path).map(|f| (path, f))).transpose()?;
        let (threads, note) = crate::limits::cap_threads("--threads", r.threads);
        MemoryBudget::here()?.check_tables("count --engine scan", crate::limits::tables(puzzle, false))?;
        let opts = ScanOptions {
            time_limit,
            limit: r.limit,
            threads,
            symmetry: r.symmetry,
            probes: r.probes,
            min_tasks: r.tasks,
            reverse: r.reverse,
            row_chain: false,
            cancel: r.cancel,
        };
        Ok(ScanCountRun { puzzle, opts, journal, notes: note.into_iter().collect() })
    }

    /// Counts the puzzle [`ScanCountRun::new`] checked, telling `say` the notes as the
    /// count starts (with a journal: once its plan is accepted, so that a journal of another
    /// count is refused in one line, and then how far it had come) and
    /// `progress(tasks_done, tasks, nodes, solutions)` about once a second.
    pub fn run(
        self,
        say: impl Fn(&str) + Sync + 'static,
        progress: impl Fn(u64, u64, u64, u64) + Sync + 'static,
    ) -> Result<JournaledCount, CountError> {
        let Some((path, file)) = self.journal else {
            self.notes.iter().for_each(|l| say(l));
            let count = count_journaled(self.puzzle, &self.opts, None, &ProgressOnly(Box::new(progress)))?;
            return Ok(JournaledCount { count, journal_failed: None });
        };
        let (j, rec) = JsonlJournal::open(&path)?;
        file.keep();
        let finished = rec.done.iter().map(|d| d.task).collect::<std::collections::BTreeSet<_>>().len();
        let (resuming, shown, notes) = (rec.plan.is_some(), path.display().to_string(), self.notes);
        let j = j.with_progress(progress).with_on_plan(move |plan| {
            notes.iter().for_each(|l| say(l));
            if resuming {
                say(&format!("concur: resuming from {shown}: {finished} of {} subtrees finished", plan.tasks));
            }
        });
        let count = count_journaled(self.puzzle, &self.opts, rec.plan.as_ref().map(|pl| (pl, &rec.done[..])), &j)?;
        let journal_failed = j.finish().err().map(|error| CountError::JournalLost { error, complete: count.complete });
        Ok(JournaledCount { count, journal_failed })
    }
}
