//! What a ladder runs: its instances loaded, every run in its fixed order, a shard's share of
//! them, and the part of a ladder one call does.

use super::config::{Config, InstanceSpec};
use concur::error::{Error, Result};
use concur::puzzle::generate::{GenerateOptions, generate};
use concur::puzzle::{Puzzle, format};
use std::path::{Path, PathBuf};

/// A shard `K/N` (1-based K).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard's number, 1-based.
    pub k: u64,
    /// Shards in all.
    pub n: u64,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (k, n) = s.split_once('/').ok_or_else(|| format!("expected K/N, got {s:?}"))?;
        let k: u64 = k.trim().parse().map_err(|_| format!("bad shard index in {s:?}"))?;
        let n: u64 = n.trim().parse().map_err(|_| format!("bad shard count in {s:?}"))?;
        if n == 0 || k == 0 || k > n {
            return Err(format!("shard {s:?}: need 1 <= K <= N"));
        }
        Ok(Shard { k, n })
    }
}

/// An instance ready to run.
pub struct Instance {
    /// Its name in records (a file's path relative to the root, or a generated name).
    pub name: String,
    /// The puzzle.
    pub puzzle: Puzzle,
}

/// Expands the instance specs (globs sorted, so the order is stable).
pub fn load_instances(cfg: &Config, puzzle_dir: &Path) -> Result<Vec<Instance>> {
    let root = cfg.root.clone().unwrap_or_else(|| puzzle_dir.to_path_buf());
    let mut out = Vec::new();
    for spec in &cfg.instances {
        match spec {
            InstanceSpec::Path { path } => {
                let full = if Path::new(path).is_absolute() { PathBuf::from(path) } else { root.join(path) };
                let pattern = full.to_string_lossy().to_string();
                let mut paths: Vec<PathBuf> = glob::glob(&pattern)
                    .map_err(|e| Error::config(format!("bad glob {pattern:?}: {e}")))?
                    .filter_map(|p| p.ok())
                    .collect();
                paths.sort();
                if paths.is_empty() {
                    return Err(Error::config(format!("no instance matches {pattern:?}")));
                }
                for p in paths {
                    let bytes = std::fs::read(&p).map_err(|e| Error::io("read", &p, e))?;
                    let puzzle = format::read_puzzle(&bytes)
                        .map_err(|e| Error::Instance { path: p.clone(), error: Box::new(e) })?;
                    let name = p.strip_prefix(&root).unwrap_or(&p).to_string_lossy().to_string();
                    out.push(Instance { name, puzzle });
                }
            }
            InstanceSpec::Generate { generate: g } => {
                let opts = GenerateOptions {
                    width: g.width,
                    height: g.height,
                    frame_colors: g.frame_colors,
                    inner_colors: g.inner_colors,
                    seed: g.seed,
                };
                let (puzzle, _) = generate(&opts)?;
                out.push(Instance { name: g.name(), puzzle });
            }
        }
    }
    Ok(out)
}

/// One planned run.
#[derive(Clone, Debug)]
pub struct Job {
    /// Index into the loaded instances.
    pub instance: usize,
    /// Index into [`Config::methods`].
    pub method: usize,
    /// The run's number ([`Config::first_run`] and up).
    pub run: u64,
}

/// Every run of the ladder in its fixed order (instances of `cells[i]` cells), then the
/// shard's share. A method with `max_cells` skips the larger instances; a budget with `runs`
/// sets the runs of its sizes.
pub fn plan(cfg: &Config, cells: &[usize], shard: Option<Shard>) -> Vec<Job> {
    let mut jobs = Vec::new();
    for (i, &c) in cells.iter().enumerate() {
        for (m, spec) in cfg.methods.iter().enumerate() {
            if spec.max_cells.is_some_and(|mc| c > mc) {
                continue;
            }
            for run in cfg.first_run..cfg.first_run + cfg.runs_for(c) {
                jobs.push(Job { instance: i, method: m, run });
            }
        }
    }
    match shard {
        None => jobs,
        Some(s) => {
            // A shard outside 1 <= K <= N (only one built by hand can be) holds no runs.
            let k = s.k.checked_sub(1).filter(|&k| k < s.n);
            jobs.into_iter().enumerate().filter(|(i, _)| k == Some(*i as u64 % s.n.max(1))).map(|(_, j)| j).collect()
        }
    }
}

/// A part of a ladder: the runs a call does, out of its shard's share. A later call with a
/// wider part (or none) and `resume` runs the rest, so a ladder can be run cheap runs first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Part {
    /// Leave out the instances of more cells.
    pub max_cells: Option<usize>,
    /// Run only the methods of these labels (all when empty); a label that no method has is
    /// an error.
    pub methods: Vec<String>,
    /// Run only the first this many runs of each method and instance (a shallow pass that a
    /// later call deepens).
    pub runs: Option<u64>,
    /// Start no run after this instant, and cut each run's time limit to end by it (the run
    /// records the limit it ran under). A run whose remaining time would be under
    /// [`MIN_DEADLINE_RUN_S`](super::MIN_DEADLINE_RUN_S) (or its whole budget, if shorter) does
    /// not start.
    pub deadline: Option<std::time::Instant>,
}
