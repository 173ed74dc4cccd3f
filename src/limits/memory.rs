//! The memory side of the checks before a run (ARCHITECTURE.md §8): the types every engine's
//! estimate is written in, the shape of a puzzle the estimates follow from, the tables every
//! method builds, and the memory and cores this machine has.
//!
//! The estimates themselves live beside the allocations they describe, one per engine and
//! backend (`Backend::estimate`): `f1::map::estimate`,
//! `dc::estimate`, and the GPU backend's `backend::gpu::f1::estimate` and
//! `backend::gpu::dc::estimate`. Each is an upper bound computed from the puzzle's shape
//! (cells, colours, the pieces of each border class, hints) and the config, without building
//! the engine: building it is the allocation being checked. Each is a fixed part (tables, the
//! scratch of every worker) and a part per trial; the tests here and in `tests/gpu.rs`
//! compare them with what the engines really take.

use super::LimitError;
use crate::assign::Assigner;
use crate::puzzle::{Class, Puzzle, cell_class, piece_class};

/// Bytes of `f32` / `u32`.
pub(crate) const WORD: u64 = 4;
/// What one heap allocation may cost beyond its bytes (the allocator's header and rounding).
pub(crate) const ALLOC: u64 = 32;
/// An upper bound on the bookkeeping of one trial besides its solvers (iterations, best
/// score, the cycle memory of 16 hashes, its random stream, options), on either backend.
pub(crate) const TRIAL_BOOKKEEPING: u64 = 768;
/// Slack on every per-trial figure, for what the allocator rounds up (an eighth).
pub(crate) fn slack(bytes: u64) -> u64 {
    bytes + bytes / 8
}
/// Name of the environment variable that caps the memory concur lets a run take.
pub const MEMORY_VAR: &str = "CONCUR_MAX_MEMORY";

/// A byte count for people: `512 B`, `3.2 MiB`, `29.8 GiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Bytes a run takes: a fixed part plus a part per trial.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Estimate {
    /// Bytes whatever the trials (tables, solvers).
    pub fixed: u64,
    /// Bytes each trial adds.
    pub per_trial: u64,
}

impl Estimate {
    /// Bytes for `trials` trials (saturating: an impossible batch is `u64::MAX`).
    pub fn bytes(&self, trials: u64) -> u64 {
        self.fixed.saturating_add(self.per_trial.saturating_mul(trials))
    }

    /// The most trials within `budget` bytes (0 when not even the fixed part fits).
    pub fn max_trials(&self, budget: u64) -> u64 {
        budget.checked_sub(self.fixed).map_or(0, |b| b / self.per_trial.max(1))
    }

    fn plus(self, o: Estimate) -> Estimate {
        Estimate { fixed: self.fixed.saturating_add(o.fixed), per_trial: self.per_trial.saturating_add(o.per_trial) }
    }
}

/// What a batch takes on the GPU backend: host memory (the per-trial bookkeeping, solvers and
/// mirrors), device buffers, and the staging buffers the host reads through (host-visible
/// memory).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GpuEstimate {
    /// Host memory: per-trial bookkeeping, solvers and mirrors.
    pub host: Estimate,
    /// Device buffers.
    pub device: Estimate,
    /// Host-visible staging buffers the host reads through.
    pub staging: Estimate,
}

impl GpuEstimate {
    /// What the machine's memory must hold: the host part and staging, plus the device buffers
    /// when the device's memory is the host's (a software or integrated adapter).
    pub fn in_host_memory(&self, unified: bool) -> Estimate {
        let e = self.host.plus(self.staging);
        if unified { e.plus(self.device) } else { e }
    }
}

/// The sizes the engines' tables follow from, as upper bounds.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Shape {
    pub(crate) cells: u64,
    pub(crate) colors: u64,
    /// Cells of each border class (corner, edge, inner).
    pub(crate) class_cells: [u64; 3],
    /// Candidates of all cells: every unhinted piece of the cell's class in each rotation
    /// that fits its rim (one for corners and edges, at most four inside); a hinted cell
    /// has one. An upper bound on `Puzzle::candidates`.
    pub(crate) cands: u64,
    /// The sum over interior joins of both cells' candidates.
    pub(crate) join_cands: u64,
    /// Interior joins.
    pub(crate) joins: u64,
}

impl Shape {
    pub(crate) fn of(p: &Puzzle) -> Shape {
        let (w, h) = (p.width(), p.height());
        let class = |c: Class| match c {
            Class::Corner => 0,
            Class::Edge => 1,
            Class::Inner => 2,
        };
        let hinted_piece: std::collections::HashSet<usize> = p.hints().iter().map(|h| h.piece).collect();
        let hinted_cell: std::collections::HashSet<usize> = p.hints().iter().map(|h| h.cell).collect();
        let mut free = [0u64; 3];
        for (i, &q) in p.pieces().iter().enumerate() {
            if let (false, Some(cl)) = (hinted_piece.contains(&i), piece_class(q)) {
                free[class(cl)] += 1;
            }
        }
        let mut s = Shape { cells: p.cells() as u64, colors: p.num_colors() as u64, ..Default::default() };
        let mut degrees = 0;
        for c in 0..p.cells() {
            let k = class(cell_class(w, h, c));
            s.class_cells[k] += 1;
            let d = if hinted_cell.contains(&c) { 1 } else { free[k] * if k == 2 { 4 } else { 1 } };
            let deg = (0..4).filter(|&side| p.neighbour(c, side).is_some()).count() as u64;
            s.cands += d;
            s.join_cands += d * deg;
            degrees += deg;
        }
        s.joins = degrees / 2;
        s
    }

    /// Floats of one F1 trial: cells x 4 sides x colours.
    pub(crate) fn dim(&self) -> u64 {
        self.cells * 4 * self.colors
    }

    /// Entries of the P_P weights: one n x n block per border class.
    pub(crate) fn weight_len(&self) -> u64 {
        self.class_cells.iter().map(|n| n * n).sum()
    }

    /// One warm-startable solver per non-empty class, on the heap.
    pub(crate) fn assigners(&self) -> u64 {
        let per = std::mem::size_of::<Assigner>() as u64;
        // Each solver holds five f64 and five u32 vectors of its class's size.
        let classes = self.class_cells.iter().filter(|&&n| n > 0);
        ALLOC + classes.map(|n| per + 60 * n + 10 * ALLOC).sum::<u64>()
    }

    /// The candidate table (`Puzzle::candidates`: a placement and its colours per candidate).
    pub(crate) fn candidates(&self) -> u64 {
        8 * self.cands + WORD * (self.cells + 1) + 3 * ALLOC
    }

    /// The bitset network of the arc-consistent backtracker (`verify::Network`), and one
    /// backtracker's domains and trail over it, counted again.
    pub(crate) fn network(&self) -> u64 {
        // Words of each cell's domain, summed: at most cands / 64 plus one per cell.
        let words = self.cands / 64 + self.cells;
        let masks = 8 * 4 * self.colors * words;
        let per_cell = 16 + WORD + 4 * WORD * self.colors;
        self.candidates() + masks + self.cells * per_cell + 12 * self.cands + 16 * ALLOC
    }
}

/// Workers of a batch of `trials` on `threads` threads: a few chunks per thread
/// (`batch::chunk_size`), at most one per trial, plus the one the engines build while setting
/// up.
pub(crate) fn workers(trials: usize, threads: usize) -> u64 {
    (4 * threads.max(1)).min(trials.max(1)) as u64 + 1
}

/// The tables every method builds from a puzzle (its candidates, and the arc-consistent
/// network when `network`): a lower bound on any run's memory, to check before building them.
pub fn tables(puzzle: &Puzzle, network: bool) -> u64 {
    let s = Shape::of(puzzle);
    if network { s.network() } else { s.candidates() }
}

/// Reads a size such as `512M`, `8G`, `1.5T` or a plain number of bytes (binary units).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, mul) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&t[..i], 1 << 20),
        (i, 'g' | 'G') => (&t[..i], 1 << 30),
        (i, 't' | 'T') => (&t[..i], 1 << 40),
        _ => (t, 1),
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0 && v * (mul as f64) < u64::MAX as f64).then_some((v * mul as f64) as u64)
}

/// A value of a `Key: N kB` line of `/proc/meminfo`.
fn meminfo(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))?;
    let kb: u64 = line[key.len() + 1..].split_whitespace().next()?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// Memory this process may still take under its control group (v2, or v1), if it has a limit.
fn cgroup_room() -> Option<u64> {
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|t| t.trim().parse::<u64>().ok());
    if let (Some(max), Some(cur)) = (read("/sys/fs/cgroup/memory.max"), read("/sys/fs/cgroup/memory.current")) {
        return Some(max.saturating_sub(cur));
    }
    let (max, cur) =
        (read("/sys/fs/cgroup/memory/memory.limit_in_bytes")?, read("/sys/fs/cgroup/memory/memory.usage_in_bytes")?);
    // v1 reports "no limit" as a number near 2^63.
    (max < 1 << 60).then(|| max.saturating_sub(cur))
}

/// The memory a run may take: what the machine has available (`MemAvailable` of
/// `/proc/meminfo`), within its control group's limit, and within `CONCUR_MAX_MEMORY` when
/// that is set. `None` when nothing is known (then only impossible sizes are refused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Bytes available (None: unknown).
    pub bytes: Option<u64>,
    /// Whether `CONCUR_MAX_MEMORY` set the budget.
    pub capped: bool,
}

impl MemoryBudget {
    /// This machine's budget now.
    pub fn here() -> Result<Self, LimitError> {
        let mut bytes = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| meminfo(&t, "MemAvailable"));
        if let Some(room) = cgroup_room() {
            bytes = Some(bytes.map_or(room, |b| b.min(room)));
        }
        let mut capped = false;
        if let Some(v) = std::env::var_os(MEMORY_VAR) {
            let cap = v.to_str().and_then(parse_size).ok_or_else(|| {
                LimitError::Setting(format!("{MEMORY_VAR}={v:?} is not a size (bytes, or a number with K, M, G or T)"))
            })?;
            if bytes.is_none_or(|b| cap < b) {
                (bytes, capped) = (Some(cap), true);
            }
        }
        Ok(MemoryBudget { bytes, capped })
    }

    /// The most bytes one process can ask for at all (Rust's limit on one allocation).
    pub fn limit(&self) -> u64 {
        self.bytes.unwrap_or(isize::MAX as u64)
    }

    /// Whether `trials` trials of `what` fit, by the estimate `e`.
    pub fn check_trials(&self, what: &str, e: &Estimate, trials: u64) -> Result<(), LimitError> {
        let (need, have) = (e.bytes(trials), self.limit());
        if need <= have {
            return Ok(());
        }
        Err(LimitError::Memory {
            what: what.to_string(),
            trials,
            need,
            have,
            fit: e.max_trials(have),
            capped: self.capped,
        })
    }

    /// Whether tables of `need` bytes fit.
    pub fn check_tables(&self, what: &str, need: u64) -> Result<(), LimitError> {
        let have = self.limit();
        if need <= have {
            return Ok(());
        }
        Err(LimitError::Tables { what: what.to_string(), need, have, capped: self.capped })
    }
}

/// The cores this process may use.
pub fn cores() -> usize {
    cores_decided().0
}

/// The cores this process may use, and what decided it: the scheduler's share
/// (`SLURM_CPUS_PER_TASK`, where set and smaller), else the affinity mask and the cgroup's CPU
/// quota (what the standard library's `available_parallelism` reads). On a cluster node
/// without CPU binding the affinity mask is the whole node, and only the job's
/// `--cpus-per-task` says what it was given.
pub fn cores_decided() -> (usize, &'static str) {
    let machine = std::thread::available_parallelism().map_or(1, |n| n.get());
    let slurm = std::env::var("SLURM_CPUS_PER_TASK").ok().and_then(|v| v.trim().parse::<usize>().ok());
    cores_from(machine, slurm)
}

/// [`cores_decided`] from its two readings.
fn cores_from(machine: usize, slurm: Option<usize>) -> (usize, &'static str) {
    match slurm.filter(|&n| n >= 1 && n < machine) {
        Some(n) => (n, "SLURM_CPUS_PER_TASK"),
        None => (machine, "the affinity mask and cgroup quota"),
    }
}

/// A thread count capped at the cores: the count to use and, when it was capped, a note that
/// says so (`flag` names the option).
pub fn cap_threads(flag: &str, threads: usize) -> (usize, Option<String>) {
    let cores = cores();
    if threads <= cores {
        (threads, None)
    } else {
        (cores, Some(format!("concur: {flag} {threads} is more than the {cores} cores here; using {cores}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::MapKind;
    use crate::dc::DcConfig;
    use crate::f1::map::MapConfig;
    use crate::puzzle::generate::{GenerateOptions, generate};

    fn puzzle(w: usize, h: usize) -> Puzzle {
        generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed: 3 }).unwrap().0
    }

    #[test]
    fn the_scheduler_share_caps_the_cores_when_smaller() {
        assert_eq!(cores_from(16, Some(4)), (4, "SLURM_CPUS_PER_TASK"));
        assert_eq!(cores_from(2, Some(4)).0, 2, "a share past the mask is not granted");
        assert_eq!(cores_from(8, Some(0)).0, 8);
        assert_eq!(cores_from(8, None), (8, "the affinity mask and cgroup quota"));
    }

    #[test]
    fn the_shape_matches_the_engines_tables() {
        for (w, h) in [(2, 2), (2, 5), (3, 3), (5, 4), (6, 6)] {
            let p = puzzle(w, h);
            let s = Shape::of(&p);
            let cands = p.candidates();
            let total: usize = (0..p.cells()).map(|c| cands.of(c).len()).sum();
            // Generated pieces are never symmetric, so the bound is exact.
            assert_eq!(s.cands, total as u64, "{w}x{h}");
            let f1 = crate::f1::project::F1::new(&p).unwrap();
            assert_eq!(s.dim(), f1.dim() as u64);
            assert_eq!(s.weight_len(), f1.weight_len() as u64);
        }
        // A hint leaves its cell one candidate and its piece none elsewhere.
        let p = puzzle(5, 5).with_fixed_corner().unwrap();
        let cands = p.candidates();
        let total: usize = (0..p.cells()).map(|c| cands.of(c).len()).sum();
        assert!(Shape::of(&p).cands >= total as u64);
    }

    #[test]
    fn estimates_grow_by_the_trial_and_say_what_fits() {
        let e = Estimate { fixed: 1000, per_trial: 100 };
        assert_eq!(e.bytes(10), 2000);
        assert_eq!(e.bytes(u64::MAX), u64::MAX);
        assert_eq!(e.max_trials(2050), 10);
        assert_eq!(e.max_trials(999), 0);
        let budget = MemoryBudget { bytes: Some(2050), capped: false };
        assert!(budget.check_trials("rrr", &e, 10).is_ok());
        let err = budget.check_trials("rrr on 5x5", &e, 11).unwrap_err().to_string();
        assert!(err.contains("at most 10 trials fit") && err.contains("11 trials of rrr on 5x5"), "{err}");
        assert!(!err.contains('\n'));
        let none = MemoryBudget { bytes: Some(10), capped: true }.check_trials("x", &e, 1).unwrap_err().to_string();
        assert!(none.contains("not even one trial fits") && none.contains(MEMORY_VAR), "{none}");
        // Unknown memory refuses only what no process could allocate.
        assert!(MemoryBudget { bytes: None, capped: false }.check_trials("x", &e, u64::MAX).is_err());
        assert!(MemoryBudget { bytes: None, capped: false }.check_trials("x", &e, 1 << 20).is_ok());
    }

    #[test]
    fn sizes_and_meminfo_parse() {
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("1.5G"), Some(3 << 29));
        assert_eq!(parse_size(" 2 T "), Some(2 << 40));
        for bad in ["", "G", "-1G", "NaN", "inf", "1e300", "x"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
        let text = "MemTotal:       24683568 kB\nMemFree:        22141192 kB\nMemAvailable:   24140528 kB\n";
        assert_eq!(meminfo(text, "MemAvailable"), Some(24140528 * 1024));
        assert_eq!(meminfo(text, "Mem"), None);
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3 << 29), "1.5 GiB");
    }

    #[test]
    fn threads_above_the_cores_are_capped_with_a_note() {
        let cores = cores();
        assert_eq!(cap_threads("--threads", cores), (cores, None));
        let (n, note) = cap_threads("--threads", 100_000);
        assert_eq!(n, cores);
        assert!(note.unwrap().contains("100000"));
    }

    /// Peak resident memory of this process (`VmHWM`), in bytes.
    fn peak_rss() -> Option<u64> {
        meminfo(&std::fs::read_to_string("/proc/self/status").ok()?, "VmHWM")
    }

    const PROBE_VAR: &str = "CONCUR_LIMITS_PROBE";
    const PROBE_THREADS: usize = 2;

    /// The probe's puzzle and trials: a 7x7 and a first iteration, or, where the engine keeps
    /// the solving iterate of every solved trial, a 4x4 that (nearly) every trial solves, or a
    /// few trials of a large board, where the fixed part (tables, workers) dominates.
    fn probe_setup(engine: &str) -> (Puzzle, usize, u64, bool) {
        match engine {
            "rrr-keep" | "dc-keep" => (puzzle(4, 4), 1000, 20_000, false),
            "rrr-12x12" | "dc-12x12" => (puzzle(12, 12), 4, 1, true),
            "rrr-16x16" | "dc-16x16" => (puzzle(16, 16), 16, 1, true),
            e if e.starts_with("dc") => (puzzle(7, 7), 800, 1, true),
            _ => (puzzle(7, 7), 2000, 1, true),
        }
    }

    /// Builds one engine with [`PROBE_TRIALS`] trials, runs one iteration, and prints the rise
    /// of the peak resident memory beside the estimate. Run alone in a child process by
    /// `estimates_bound_what_the_engines_take` (it does nothing without `CONCUR_LIMITS_PROBE`).
    #[test]
    fn probe_engine_memory() {
        let Ok(engine) = std::env::var(PROBE_VAR) else { return };
        let (p, trials, max_iters, stop_at_first) = probe_setup(&engine);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(PROBE_THREADS).build().unwrap();
        let (measured, estimate) = pool.install(|| {
            let before = peak_rss().unwrap();
            let (estimate, result) = match engine.as_str() {
                "rrr" | "dm" | "rrr-keep" | "rrr-adapt" | "rrr-complete" | "rrr-12x12" | "rrr-16x16" => {
                    let cfg = MapConfig {
                        kind: if engine == "dm" { MapKind::Dm } else { MapKind::Rrr },
                        all_trials: !stop_at_first,
                        keep_fixed_points: engine == "rrr-keep",
                        adapt: (engine == "rrr-adapt").then(|| "0.1,0.01,4".parse().unwrap()),
                        complete: (engine == "rrr-complete").then(crate::batch::Completion::default),
                        run: crate::batch::MapRun { trials, max_iters, ..Default::default() },
                        ..Default::default()
                    };
                    let e = crate::f1::map::estimate(&p, &cfg, PROBE_THREADS);
                    let mut m = crate::f1::map::F1Map::new(&p, cfg).unwrap();
                    (e, m.run(|_| {}))
                }
                "dc" | "dc-plain" | "dc-keep" | "dc-12x12" | "dc-16x16" => {
                    let cfg = DcConfig {
                        all_trials: !stop_at_first,
                        layout: crate::dc::DcLayout::from_hybrid(engine != "dc-plain"),
                        keep_fixed_points: engine == "dc-keep",
                        run: crate::batch::MapRun { trials, max_iters, ..Default::default() },
                        ..crate::dc::DcOptions::default().config(crate::batch::MapRun::default())
                    };
                    let e = crate::dc::estimate(&p, &cfg, PROBE_THREADS);
                    let mut m = crate::dc::DcMap::new(&p, cfg).unwrap();
                    (e, m.run(|_| {}))
                }
                other => panic!("no engine {other}"),
            };
            let after = peak_rss().unwrap();
            if !stop_at_first {
                let solved = result.trials.iter().filter(|t| t.solved_at.is_some()).count();
                assert!(solved >= trials * 9 / 10, "{engine}: {solved} of {trials} trials solved and hold an iterate");
            }
            drop(result);
            (after - before, estimate.bytes(trials as u64))
        });
        println!("probe {engine}: measured {measured} estimate {estimate}");
    }

    /// The estimates against what the engines take: each engine is built in a child process
    /// (this test binary, running only `probe_engine_memory`), so no other test's memory is
    /// counted. An estimate must bound the rise of the peak resident memory (which counts the
    /// pages written: the first iteration writes every buffer of every trial), within 1.5x
    /// where the trials dominate and 2.5x where the tables do.
    #[test]
    fn estimates_bound_what_the_engines_take() {
        if peak_rss().is_none() {
            eprintln!("SKIPPED estimates_bound_what_the_engines_take: no /proc/self/status here");
            return;
        }
        let exe = std::env::current_exe().unwrap();
        for engine in [
            "rrr",
            "dm",
            "rrr-keep",
            "rrr-adapt",
            "rrr-complete",
            "rrr-12x12",
            "rrr-16x16",
            "dc",
            "dc-plain",
            "dc-keep",
            "dc-12x12",
            "dc-16x16",
        ] {
            let out = std::process::Command::new(&exe)
                .args(["--exact", "limits::memory::tests::probe_engine_memory", "--nocapture", "--test-threads=1"])
                .env(PROBE_VAR, engine)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let line =
                text.split("probe ").nth(1).and_then(|t| t.lines().next()).unwrap_or_else(|| {
                    panic!("{engine}: no probe line: {text} {}", String::from_utf8_lossy(&out.stderr))
                });
            let nums: Vec<u64> = line.split_whitespace().filter_map(|t| t.parse().ok()).collect();
            let (measured, estimate) = (nums[0], nums[1]);
            eprintln!("{engine}: measured {}, estimated {}", human(measured), human(estimate));
            assert!(estimate >= measured, "{engine}: the estimate {estimate} is below the {measured} bytes measured");
            let factor = if engine.ends_with("x12") || engine.ends_with("x16") { 2.5 } else { 1.5 };
            assert!(
                estimate as f64 <= factor * measured as f64,
                "{engine}: the estimate {estimate} is over {factor}x the {measured} bytes measured"
            );
        }
    }
}
