//! The map's work per solution against instance hardness: the report's section "Work per
//! solution against hardness", from a campaign that runs the map and the row scan (and
//! optionally the AC-4 backtracker) on many instances of different hardness.
//!
//! Per instance, every run of a method is pooled ([`stats::pooled_counts`]: total work over
//! the solutions found in it, with the exact 95% interval, or the one-sided bound `T / ln 20`
//! without a solution). The instance's **hardness** is the scan's pooled nodes per solution;
//! the map's cost is its pooled trial-iterations per solution. The exponent of the map against
//! hardness is the slope `b` of the censored normal regression (Tobin 1958, [`fit::tobit`])
//!
//! ```text
//! log10(map trial-iterations per solution) = a + b log10(scan nodes per solution) + e,  e ~ N(0, s^2)
//! ```
//!
//! over the instances, where an instance on which the map found no solution is censored: its
//! true value lies above `log10(T e^gamma)` ([`fit::CENSOR_FACTOR`]), and an instance on which
//! the scan found none is left out (it cannot be placed on the hardness axis) and counted.
//! The 95% intervals of `b` and `a` come from Efron's percentile bootstrap over instances and
//! over each instance's two counts, redrawn as Poisson around the observed counts with the
//! work held fixed ([`fit::regress_counts`]).
//!
//! In core-seconds, with `c_map` core-seconds per map trial-iteration and `c_scan` per scan
//! node, the map's line is `c_map 10^a H^b` and the scan's `c_scan H`; they meet at
//! `log10 H* = (log10(c_map / c_scan) + a) / (1 - b)`. For `b < 1` the map is the cheaper above
//! `H*`, for `b > 1` below it; when `b`'s interval reaches 1 there is no crossing to state. The
//! interval of `H*` is the percentile interval of the bootstrap's `H*`, a resample on the other
//! side of `b = 1` counting as an unbounded end. The costs are taken as known. They come from
//! a table of per-core rates (`hardness-inputs/core-rates.jsonl`, the output of
//! `scripts/core-rates.sh`, measured on an idle machine) when given, else from the records
//! themselves (total wall seconds / total work of one-core CPU runs per method and size, which
//! carry the machine's load), at the campaign's largest board size (the costs per unit grow
//! with the board, and the hardest instances, which the crossing is about, are the largest).
//!
//! Optional inputs, read from a folder `hardness-inputs/` inside any results folder given to
//! the report (a subfolder, because the ladder and the report read every `*.jsonl` of a results
//! folder itself as run records):
//! - `counts.jsonl`: exact solution counts, lines `{"instance": ..., "solutions": N,
//!   "complete": true, ...}` (a line with `complete` false is skipped). With three or more
//!   counted instances, the map's work per solution is also fitted against `log10 N`: if the map
//!   found solutions as if drawn at random, the slope would be -1.
//! - `core-rates.jsonl`: per-core rates, lines `{"puzzle": "set1-08x07", "method": "rrr" |
//!   "scan" | "ac4", "rate": R, ...}` (units per second of one core; several lines of one
//!   method and size are averaged).
//! - `points.json`: `[{"name": ..., "scan_nodes_per_solution": H, "size": "WxH"}, ...]`,
//!   instances beyond the campaign (set 1's 8x8, 10x10, the 16x16) placed on the fitted line
//!   ([`place`]); with a `size` the core-rates table has, in that size's core-seconds.

use super::fit::{self, Axis, BootOptions, CountRegression, FitError, Measured, Unit};
use super::stats::{self, Pooled};
use super::svg::{ErrorPoint, ScatterBand, ScatterPlot, scatter_plot};
use crate::ladder::run::Record;
use crate::method::MethodName;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folder, inside a results folder, of the optional inputs.
pub const INPUTS_DIR: &str = "hardness-inputs";
/// The file of the figure.
pub const FIGURE_FILE: &str = "hardness.svg";
/// The fewest instances run by both the map and the scan for the section to appear.
pub const MIN_COMMON: usize = 3;
/// The censored fraction above which the report warns that the exponent runs low. On 400
/// synthetic campaigns each of the hardness campaign's design (`tests/hardness.rs`, true
/// exponent 0.70) the mean fitted exponent was 0.700 at 11% censored, 0.657 at 39% and 0.640
/// at 47%, its 95% interval covering the truth in 96.5%, 98.3% and 96.5% of them (censored
/// at the 95% bound `T / ln 20` instead: 0.654, 0.542 and 0.498, covering in 74%, 31% and 27%).
pub const HEAVY_CENSORING: f64 = 0.3;

/// The fewest instances a part of the campaign needs for a fit of its own
/// ([`Summary::subsets`]).
pub const MIN_SUBSET: usize = 6;

/// A bad optional input of the section (`hardness-inputs/`); each names its file.
#[derive(Debug, thiserror::Error)]
pub enum HardnessError {
    /// The file exists but cannot be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// One line of a JSON-lines input that cannot be used.
    #[error("{path}, line {line}: {msg}")]
    Line {
        /// The file.
        path: String,
        /// The line, 1-based.
        line: usize,
        /// What is wrong with it.
        msg: String,
    },
    /// A whole-file input (JSON) that cannot be used.
    #[error("{path}: {msg}")]
    File {
        /// The file.
        path: String,
        /// What is wrong with it.
        msg: String,
    },
    /// The same instance counted twice with different totals.
    #[error("{path}: instance {instance:?} is counted twice with different totals ({a} and {b})")]
    CountClash {
        /// The file of the second count.
        path: String,
        /// The instance's name.
        instance: String,
        /// The total seen first.
        a: u64,
        /// The total seen second.
        b: u64,
    },
}

impl HardnessError {
    /// The input file the error is about.
    pub fn path(&self) -> &str {
        match self {
            HardnessError::Read { path, .. }
            | HardnessError::Line { path, .. }
            | HardnessError::File { path, .. }
            | HardnessError::CountClash { path, .. } => path,
        }
    }
}

/// The method labels the section compares.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Labels {
    /// The map's label (`rrr`, or the first RRR or difference-map label).
    pub map: String,
    /// The row scan's label, whose nodes per solution are the hardness.
    pub scan: String,
    /// The AC-4 backtracker's label, when the records have one.
    pub ac4: Option<String>,
}

/// The labels in `records`: the map is `rrr` if there is such a label, else the first label
/// (in order) whose method is `rrr` or `dm`; the scan is `scan`, else the first label whose
/// method is `scan`; AC-4 is `backtrack ac4`, else the first backtracker label with `ac =
/// "ac4"`. `None` without a map or a scan.
pub fn labels(records: &[Record]) -> Option<Labels> {
    let mut all: BTreeMap<&str, &Record> = BTreeMap::new();
    for r in records {
        all.entry(&r.label).or_insert(r);
    }
    let find = |name: &str, pred: &dyn Fn(&Record) -> bool| {
        all.get(name)
            .map(|_| name.to_string())
            .or_else(|| all.iter().find(|(_, r)| pred(r)).map(|(l, _)| l.to_string()))
    };
    let map = find("rrr", &|r| matches!(r.method, MethodName::Rrr | MethodName::Dm))?;
    let scan = find("scan", &|r| r.method == MethodName::Scan)?;
    let ac4 = find("backtrack ac4", &|r| {
        r.method == MethodName::Backtrack && r.params.get("ac").and_then(|v| v.as_str()) == Some("ac4")
    });
    Some(Labels { map, scan, ac4 })
}

/// One instance's pooled rates.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Instance {
    /// The instance's name, as its records give it.
    pub instance: String,
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// `width * height`.
    pub cells: usize,
    /// Colours, grey excluded (as in the records).
    pub colors: usize,
    /// Scan nodes per solution.
    pub scan: Option<Pooled>,
    /// Map trial-iterations per solution.
    pub map: Option<Pooled>,
    /// AC-4 nodes per solution.
    pub ac4: Option<Pooled>,
    /// The exact number of solutions, where `counts.jsonl` gives it.
    pub known_solutions: Option<u64>,
}

impl Instance {
    /// Run by both the map and the scan.
    pub fn common(&self) -> bool {
        self.map.is_some() && self.scan.is_some()
    }
}

/// Every instance that the map or the scan ran, by name.
pub fn instances(records: &[Record], labels: &Labels, counts: &BTreeMap<String, u64>) -> Vec<Instance> {
    let mut by: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by.entry(&r.instance).or_default().push(r);
    }
    by.into_iter()
        .filter_map(|(name, rs)| {
            let pool = |label: &str| {
                let o: Vec<(f64, u64)> =
                    rs.iter().filter(|r| r.label == label).map(|r| (r.work as f64, r.solution_count())).collect();
                (!o.is_empty()).then(|| stats::pooled_counts(&o))
            };
            let (map, scan) = (pool(&labels.map), pool(&labels.scan));
            if map.is_none() && scan.is_none() {
                return None;
            }
            let r = rs[0];
            Some(Instance {
                instance: name.to_string(),
                width: r.width,
                height: r.height,
                cells: r.width * r.height,
                colors: r.colors,
                scan,
                map,
                ac4: labels.ac4.as_deref().and_then(pool),
                known_solutions: counts.get(name).copied(),
            })
        })
        .collect()
}

/// Core-seconds per unit of work of each method on one board size (`None` where unmeasured).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SizeCosts {
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// `width * height`.
    pub cells: usize,
    /// Per map trial-iteration.
    pub map: Option<f64>,
    /// Per scan node.
    pub scan: Option<f64>,
    /// Per AC-4 node.
    pub ac4: Option<f64>,
}

/// Per size, total wall seconds over total work of each method's one-core CPU runs (device
/// runs left out: their seconds are a whole device's).
pub fn costs_from_records(records: &[Record], labels: &Labels) -> Vec<SizeCosts> {
    let mut by: BTreeMap<(usize, usize, usize), [(f64, f64); 3]> = BTreeMap::new();
    for r in records.iter().filter(|r| !r.on_device() && r.work > 0 && r.wall_s > 0.0) {
        let k = if r.label == labels.map {
            0
        } else if r.label == labels.scan {
            1
        } else if labels.ac4.as_deref() == Some(r.label.as_str()) {
            2
        } else {
            continue;
        };
        let e = by.entry((r.width * r.height, r.width, r.height)).or_default();
        e[k].0 += r.wall_s;
        e[k].1 += r.work as f64;
    }
    by.into_iter()
        .map(|((cells, width, height), t)| {
            let c = |i: usize| (t[i].1 > 0.0).then(|| t[i].0 / t[i].1);
            SizeCosts { width, height, cells, map: c(0), scan: c(1), ac4: c(2) }
        })
        .collect()
}

/// `WxH` at the end of a puzzle's name (`set1-08x07`, `pieces_08x07.txt`).
fn size_of(name: &str) -> Option<(usize, usize)> {
    let stem = name.trim_end_matches(".txt");
    let tail: String = stem.chars().rev().take_while(|c| c.is_ascii_digit() || *c == 'x').collect();
    let tail: String = tail.chars().rev().collect();
    let (w, h) = tail.split_once('x')?;
    Some((w.parse().ok()?, h.parse().ok()?))
}

/// Parses a table of per-core rates (the output of `scripts/core-rates.sh`) into costs per
/// size: a line's `rate` is units of work per second of one core, its `puzzle` ends in the
/// board size, its `method` is `rrr` (or `dm`), `scan` or `ac4` (other methods are skipped);
/// several lines of a method and size are averaged.
pub fn parse_core_rates(text: &str, path: &str) -> Result<Vec<SizeCosts>, HardnessError> {
    let mut by: BTreeMap<(usize, usize, usize), [Vec<f64>; 3]> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |msg: String| HardnessError::Line { path: path.into(), line: i + 1, msg };
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
        let puzzle = v.get("puzzle").and_then(|p| p.as_str()).ok_or_else(|| bad("no \"puzzle\"".into()))?;
        let (w, h) = size_of(puzzle).ok_or_else(|| bad(format!("no board size at the end of {puzzle:?}")))?;
        let method = v.get("method").and_then(|m| m.as_str()).ok_or_else(|| bad("no \"method\"".into()))?;
        let k = match method {
            "rrr" | "dm" => 0,
            "scan" => 1,
            "ac4" | "backtrack ac4" => 2,
            _ => continue,
        };
        let rate = v.get("rate").and_then(|r| r.as_f64()).ok_or_else(|| bad("no numeric \"rate\"".into()))?;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(bad(format!("rate {rate} is not a positive number")));
        }
        by.entry((w * h, w, h)).or_default()[k].push(rate);
    }
    Ok(by
        .into_iter()
        .map(|((cells, width, height), r)| {
            let c = |i: usize| (!r[i].is_empty()).then(|| r[i].len() as f64 / r[i].iter().sum::<f64>());
            SizeCosts { width, height, cells, map: c(0), scan: c(1), ac4: c(2) }
        })
        .collect())
}

/// Parses `counts.jsonl`: instance name to its exact number of solutions; lines with
/// `complete` false (or absent) are skipped; the same instance twice must agree.
pub fn parse_counts(text: &str, path: &str, into: &mut BTreeMap<String, u64>) -> Result<(), HardnessError> {
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |msg: String| HardnessError::Line { path: path.into(), line: i + 1, msg };
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
        if v.get("complete").and_then(|c| c.as_bool()) != Some(true) {
            continue;
        }
        let name = v.get("instance").and_then(|n| n.as_str()).ok_or_else(|| bad("no \"instance\"".into()))?;
        let n = v.get("solutions").and_then(|n| n.as_u64()).ok_or_else(|| bad("no whole \"solutions\"".into()))?;
        match into.get(name) {
            Some(&old) if old != n => {
                return Err(HardnessError::CountClash { path: path.into(), instance: name.into(), a: old, b: n });
            }
            _ => {
                into.insert(name.to_string(), n);
            }
        }
    }
    Ok(())
}

/// A board beyond the campaign, to place on the fitted line.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct NamedPoint {
    /// The board's name in the report.
    pub name: String,
    /// Its estimated scan nodes per solution (its hardness).
    pub scan_nodes_per_solution: f64,
    /// Its board size, `WxH`: where the core-rates table has both methods at this size, its
    /// core-seconds use that size's per-unit costs rather than the crossing's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// Where the estimate comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A point's `size`, `WxH` with both sides positive.
fn point_size(z: &str) -> Option<(usize, usize)> {
    let (w, h) = z.split_once('x')?;
    let (w, h): (usize, usize) = (w.parse().ok()?, h.parse().ok()?);
    (w > 0 && h > 0).then_some((w, h))
}

/// Parses `points.json` (a JSON array of [`NamedPoint`]).
pub fn parse_points(text: &str, path: &str) -> Result<Vec<NamedPoint>, HardnessError> {
    let v: Vec<NamedPoint> = serde_json::from_str(text)
        .map_err(|e| HardnessError::File { path: path.into(), msg: format!("not a list of points: {e}") })?;
    if let Some(p) = v.iter().find(|p| !(p.scan_nodes_per_solution.is_finite() && p.scan_nodes_per_solution > 0.0)) {
        return Err(HardnessError::File {
            path: path.into(),
            msg: format!("{:?}: scan_nodes_per_solution must be a positive number", p.name),
        });
    }
    if let Some(p) = v.iter().find(|p| p.size.as_deref().is_some_and(|z| point_size(z).is_none())) {
        return Err(HardnessError::File {
            path: path.into(),
            msg: format!("{:?}: size {:?} is not WxH", p.name, p.size.as_deref().unwrap_or_default()),
        });
    }
    Ok(v)
}

/// The optional inputs ([`read_inputs`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inputs {
    /// Exact solution counts by instance name, from `counts.jsonl`.
    pub counts: BTreeMap<String, u64>,
    /// From `core-rates.jsonl`; empty when none was given.
    pub core_rates: Vec<SizeCosts>,
    /// The file(s) they came from, for the report.
    pub core_rates_from: Vec<String>,
    /// Boards beyond the campaign to place on the line, from `points.json`.
    pub points: Vec<NamedPoint>,
}

/// Reads the optional inputs from `<folder>/hardness-inputs/` of every folder among `inputs`
/// (files among them are skipped); a file that does not exist is no input.
pub fn read_inputs(inputs: &[PathBuf]) -> Result<Inputs, HardnessError> {
    let mut out = Inputs::default();
    let read = |p: &Path| -> Result<Option<String>, HardnessError> {
        match std::fs::read_to_string(p) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(HardnessError::Read { path: p.display().to_string(), source: e }),
        }
    };
    let mut rate_lines = String::new();
    for dir in inputs.iter().filter(|p| p.is_dir()) {
        let d = dir.join(INPUTS_DIR);
        let p = d.join("counts.jsonl");
        if let Some(t) = read(&p)? {
            parse_counts(&t, &p.display().to_string(), &mut out.counts)?;
        }
        let p = d.join("core-rates.jsonl");
        if let Some(t) = read(&p)? {
            // Checked file by file, so that an error names its file; averaged over all.
            parse_core_rates(&t, &p.display().to_string())?;
            rate_lines.push_str(&t);
            rate_lines.push('\n');
            out.core_rates_from.push(p.display().to_string());
        }
        let p = d.join("points.json");
        if let Some(t) = read(&p)? {
            out.points.extend(parse_points(&t, &p.display().to_string())?);
        }
    }
    if !out.core_rates_from.is_empty() {
        out.core_rates = parse_core_rates(&rate_lines, &out.core_rates_from.join(", "))?;
    }
    Ok(out)
}

/// The per-unit costs the crossing uses.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CostsUsed {
    /// Core-seconds per map trial-iteration.
    pub map: f64,
    /// Core-seconds per scan node.
    pub scan: f64,
    /// The width of the board size they were measured on.
    pub width: usize,
    /// Its height.
    pub height: usize,
    /// `core-rates file` or `records`.
    pub source: String,
    /// Why this size, in words.
    pub note: String,
}

/// The costs at the campaign's largest size (`cells`, `width`): from the core-rates table when
/// it has both methods there, else at its size nearest in cells (the larger on a tie); without
/// a table, from the records at that size, else at the largest size where both were measured.
pub fn pick_costs(
    from_records: &[SizeCosts],
    from_file: &[SizeCosts],
    largest: (usize, usize, usize),
) -> Option<CostsUsed> {
    let (cells, width, height) = largest;
    let both = |c: &&SizeCosts| c.map.is_some() && c.scan.is_some();
    let used = |c: &SizeCosts, source: &str, note: String| CostsUsed {
        map: c.map.unwrap_or(f64::NAN),
        scan: c.scan.unwrap_or(f64::NAN),
        width: c.width,
        height: c.height,
        source: source.into(),
        note,
    };
    if !from_file.is_empty() {
        let exact = from_file.iter().filter(both).find(|c| (c.width, c.height) == (width, height));
        if let Some(c) = exact {
            return Some(used(c, "core-rates file", format!("the campaign's largest size, {width}x{height}")));
        }
        let near = from_file
            .iter()
            .filter(both)
            .min_by_key(|c| (c.cells.abs_diff(cells), std::cmp::Reverse(c.cells), std::cmp::Reverse(c.width)));
        if let Some(c) = near {
            return Some(used(
                c,
                "core-rates file",
                format!("the table's size nearest the campaign's largest ({width}x{height}), {}x{}", c.width, c.height),
            ));
        }
    }
    let exact = from_records.iter().filter(both).find(|c| (c.width, c.height) == (width, height));
    if let Some(c) = exact {
        return Some(used(c, "records", format!("the campaign's largest size, {width}x{height}")));
    }
    from_records.iter().filter(both).max_by_key(|c| (c.cells, c.width)).map(|c| {
        used(c, "records", format!("the largest size where both methods have timed runs, {}x{}", c.width, c.height))
    })
}

/// Where the map's and the scan's lines meet in core-seconds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Crossing {
    /// `H*`, scan nodes per solution.
    pub hardness: f64,
    /// 95% bootstrap interval; `None` at an end: unbounded (resamples on the other side of
    /// `b = 1`).
    pub ci: [Option<f64>; 2],
    /// `above` (`b < 1`): the map is the cheaper for instances harder than `H*`; `below`
    /// (`b > 1`): for instances easier than `H*`.
    pub map_cheaper: String,
}

/// The fit over a part of the instances ([`Summary::subsets`]): whether one exponent holds
/// from the easy end to the hard one, and within one board size, where hardness varies with
/// the colours alone.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SubsetFit {
    /// Which instances, in words (`the harder half`, `8x7 only`).
    pub name: String,
    /// Instances fitted.
    pub n: usize,
    /// Of them, censored.
    pub n_censored: usize,
    /// Their hardness range, scan nodes per solution.
    pub range: [f64; 2],
    /// The slope `b`; null where the fit failed.
    pub exponent: Option<f64>,
    /// Its 95% bootstrap interval.
    pub exponent_ci: Option<[f64; 2]>,
    /// The intercept `a`.
    pub intercept: Option<f64>,
    /// The residual spread `s`, in decades.
    pub residual_spread: Option<f64>,
    /// Where this part's line meets the scan's, with the whole fit's per-unit costs; null
    /// where `b`'s interval reaches 1 (or without costs).
    pub crossing: Option<Crossing>,
    /// Why the fit failed, if it did.
    pub error: Option<String>,
    /// The harder half only: the boards of `points.json` placed on its line, as
    /// [`Summary::points`] on the whole one (they lie beyond its hard end).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<Placed>,
}

/// The fit against the exact solution count.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DensityFit {
    /// `y = a + b log10(number of solutions)`: `b`.
    pub slope: f64,
    /// Its 95% bootstrap interval.
    pub slope_ci: [f64; 2],
    /// The intercept `a`.
    pub intercept: f64,
    /// Its 95% bootstrap interval.
    pub intercept_ci: [f64; 2],
    /// The residual spread `s`, in decades.
    pub residual_spread: f64,
    /// Counted instances fitted.
    pub n: usize,
    /// Of them, censored (the map found no solution).
    pub n_censored: usize,
    /// Whether -1 (work per solution inversely proportional to the solutions) lies in the
    /// slope's interval.
    pub inverse_in_ci: bool,
    /// Bootstrap resamples drawn.
    pub resamples: usize,
    /// Resamples whose fit failed (left out of the intervals).
    pub failed_resamples: usize,
}

/// A board placed on the fitted line.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Placed {
    /// The board's name ([`NamedPoint::name`]).
    pub name: String,
    /// Its hardness: estimated scan nodes per solution.
    pub scan_nodes_per_solution: f64,
    /// The line's map trial-iterations per solution at that hardness, with the 95% interval
    /// of the line (bootstrap) and of one instance (the line's bootstrap plus the residual
    /// spread).
    pub map_work: f64,
    /// The 95% interval of the line there.
    pub map_work_ci: [f64; 2],
    /// The 95% interval of one instance of that hardness.
    pub map_work_instance_ci: [f64; 2],
    /// In core-seconds per solution (with [`CostsUsed`]); null without costs.
    pub map_core_seconds: Option<f64>,
    /// Its 95% interval (of the line).
    pub map_core_seconds_ci: Option<[f64; 2]>,
    /// The scan's core-seconds per solution at that hardness (hardness times its cost per node).
    pub scan_core_seconds: Option<f64>,
    /// Whose per-unit costs the core-seconds use: `WxH, core-rates file` where the table has
    /// the board's own size, else the crossing's ([`CostsUsed`]); null without costs.
    pub costs_at: Option<String>,
    /// Whether the hardness lies outside the campaign's (an extrapolation of the line).
    pub extrapolated: bool,
}

/// Places boards on the line of `reg` (all in log10 units): the line's value and intervals
/// from the bootstrap's replicates (a replicate's instance interval adds a normal draw of its
/// residual spread, seeded by `seed`), and core-seconds with the per-unit costs of the board's
/// own size where `rates` (the core-rates table) has both methods there, else with `costs`.
/// `range` is the campaign's hardness range, in log10.
pub fn place(
    reg: &CountRegression,
    costs: Option<&CostsUsed>,
    rates: &[SizeCosts],
    points: &[NamedPoint],
    range: [f64; 2],
    seed: u64,
) -> Vec<Placed> {
    use rand::SeedableRng;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    points
        .iter()
        .map(|p| {
            let x = p.scan_nodes_per_solution.log10();
            let line: Vec<f64> = reg.replicates.iter().map(|r| r[0] + r[1] * x).collect();
            let one: Vec<f64> = reg.replicates.iter().map(|r| r[0] + r[1] * x + r[2] * fit::normal(&mut rng)).collect();
            let ci = fit::percentile_interval(&line).unwrap_or([f64::NAN; 2]).map(|v| 10f64.powf(v));
            let map_work = 10f64.powf(reg.line.at(x));
            let own = p.size.as_deref().and_then(point_size).and_then(|(w, h)| {
                rates.iter().find(|c| (c.width, c.height) == (w, h)).and_then(|c| Some((c.map?, c.scan?, w, h)))
            });
            let (costs, costs_at) = match (own, costs) {
                (Some((m, sc, w, h)), _) => (Some((m, sc)), Some(format!("{w}x{h}, core-rates file"))),
                (None, Some(c)) => (Some((c.map, c.scan)), Some(format!("{}x{}, {}", c.width, c.height, c.source))),
                (None, None) => (None, None),
            };
            Placed {
                name: p.name.clone(),
                scan_nodes_per_solution: p.scan_nodes_per_solution,
                map_work,
                map_work_ci: ci,
                map_work_instance_ci: fit::percentile_interval(&one).unwrap_or([f64::NAN; 2]).map(|v| 10f64.powf(v)),
                map_core_seconds: costs.map(|c| c.0 * map_work),
                map_core_seconds_ci: costs.map(|c| ci.map(|v| v * c.0)),
                scan_core_seconds: costs.map(|c| c.1 * p.scan_nodes_per_solution),
                costs_at,
                extrapolated: x < range[0] || x > range[1],
            }
        })
        .collect()
}

/// The section's numbers, as `summary.json`'s `hardness_fit` (all in log10 units).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    /// The map's label ([`Labels::map`]).
    pub map_label: String,
    /// The scan's label ([`Labels::scan`]).
    pub scan_label: String,
    /// The AC-4 backtracker's label, when there is one.
    pub ac4_label: Option<String>,
    /// The fit's `x`: the scan's nodes per solution, as `log10(LABEL nodes per solution)`.
    pub x: String,
    /// The fit's `y`: the map's trial-iterations per solution, as `log10(LABEL trial-iterations per
    /// solution)`.
    pub y: String,
    /// Instances run by both the map and the scan.
    pub instances: usize,
    /// Instances fitted.
    pub n: usize,
    /// Of them, censored (the map found no solution).
    pub n_censored: usize,
    /// Instances left out: the scan found no solution.
    pub n_left_out: usize,
    /// The slope `b` and its 95% bootstrap interval; null where the fit failed (`error`).
    pub exponent: Option<f64>,
    /// Its 95% bootstrap interval.
    pub exponent_ci: Option<[f64; 2]>,
    /// The intercept `a`.
    pub intercept: Option<f64>,
    /// Its 95% bootstrap interval.
    pub intercept_ci: Option<[f64; 2]>,
    /// The residual spread `s`, in decades.
    pub residual_spread: Option<f64>,
    /// [`CountRegression::reliability`].
    pub reliability: Option<f64>,
    /// Bootstrap resamples drawn.
    pub resamples: usize,
    /// Resamples whose fit failed (left out of the intervals).
    pub failed_resamples: usize,
    /// The censoring point of a map with no solution, as a multiple of its work.
    pub censor_factor: f64,
    /// Why there is no fit ([`FitError`]), when there is none.
    pub error: Option<String>,
    /// The per-unit costs the crossing and the placed boards use; null without them.
    pub costs: Option<CostsUsed>,
    /// Null when there is no fit, no costs, or `b`'s interval reaches 1.
    pub crossing: Option<Crossing>,
    /// Which method is the cheaper where, in words.
    pub cheaper: Option<String>,
    /// Null without three counted instances.
    pub density: Option<DensityFit>,
    /// The boards of `points.json` placed on the line (none without a fit).
    pub points: Vec<Placed>,
    /// The same fit over parts of the instances: the easier and the harder half (split at
    /// the median hardness), and each board size with at least [`MIN_SUBSET`] instances.
    pub subsets: Vec<SubsetFit>,
}

/// Everything the section shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Hardness {
    /// The methods compared.
    pub labels: Labels,
    /// Every instance run by the map or the scan.
    pub instances: Vec<Instance>,
    /// The fit of the map's work per solution against the scan's (None where it failed:
    /// [`Summary::error`]).
    pub regression: Option<CountRegression>,
    /// The fit against the exact solution counts (three or more counted instances).
    pub density: Option<CountRegression>,
    /// The per-unit costs the records themselves give, per board size.
    pub costs_from_records: Vec<SizeCosts>,
    /// The optional inputs read.
    pub inputs: Inputs,
    /// The numbers, as `summary.json` holds them.
    pub summary: Summary,
}

/// How [`analyse`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Bootstrap resamples (`stats::RESAMPLES`).
    pub resamples: usize,
    /// The seed of the bootstrap and of the placed boards' draws.
    pub seed: u64,
    /// The censoring point of a map without a solution, as a multiple of its work
    /// ([`fit::CENSOR_FACTOR`]).
    pub censor_factor: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options { resamples: stats::RESAMPLES, seed: stats::stable_hash("hardness"), censor_factor: fit::CENSOR_FACTOR }
    }
}

/// The units of the hardness fit: scan and map counts of every common instance.
pub fn units(instances: &[Instance]) -> Vec<Unit> {
    instances.iter().filter_map(unit).collect()
}

/// An instance's unit of the hardness fit, where both the scan and the map ran it.
fn unit(i: &Instance) -> Option<Unit> {
    let (s, m) = (i.scan.as_ref()?, i.map.as_ref()?);
    Some(Unit {
        x: Axis::Measured(Measured { total: s.total, solutions: s.solutions as u64 }),
        y: Measured { total: m.total, solutions: m.solutions as u64 },
    })
}

/// The fit over parts of the campaign ([`Summary::subsets`]): the easier and the harder half
/// of the placed instances (split at the median hardness, the median itself in the harder),
/// and each size with at least [`MIN_SUBSET`] of them; the crossing of each with `costs`.
pub fn subsets(
    instances: &[Instance],
    boot: &BootOptions,
    costs: Option<&CostsUsed>,
    rates: &[SizeCosts],
    boards: &[NamedPoint],
) -> Vec<SubsetFit> {
    let placed: Vec<(&Instance, Unit, f64)> = instances
        .iter()
        .filter_map(|i| {
            let u = unit(i)?;
            let x = match u.x {
                Axis::Measured(m) => m.log10_mean()?,
                Axis::Exact(x) => x,
            };
            Some((i, u, x))
        })
        .collect();
    let mut xs: Vec<f64> = placed.iter().map(|p| p.2).collect();
    xs.sort_by(f64::total_cmp);
    let mut parts: Vec<(String, Vec<Unit>)> = Vec::new();
    if let Some(&median) = xs.get(xs.len() / 2) {
        let half = |harder: bool| placed.iter().filter(|p| (p.2 >= median) == harder).map(|p| p.1).collect();
        parts.push(("the easier half".into(), half(false)));
        parts.push(("the harder half".into(), half(true)));
    }
    let mut sizes: Vec<(usize, usize, usize)> = placed.iter().map(|p| (p.0.cells, p.0.width, p.0.height)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for (_, w, h) in sizes {
        let us: Vec<Unit> = placed.iter().filter(|p| (p.0.width, p.0.height) == (w, h)).map(|p| p.1).collect();
        parts.push((format!("{w}x{h} only"), us));
    }
    parts
        .into_iter()
        .filter(|(_, us)| us.len() >= MIN_SUBSET)
        .enumerate()
        .map(|(k, (name, us))| {
            let (pts, _) = fit::points(&us, boot.censor_factor);
            let range = [
                pts.iter().map(|p| 10f64.powf(p.x)).fold(f64::INFINITY, f64::min),
                pts.iter().map(|p| 10f64.powf(p.x)).fold(f64::NEG_INFINITY, f64::max),
            ];
            let r = fit::regress_counts(&us, &BootOptions { seed: boot.seed ^ (0x5b5e7 + k as u64), ..*boot });
            let (reg, error) = match r {
                Ok(r) => (Some(r), None),
                Err(e) => (None, Some(e.to_string())),
            };
            let lx = [range[0].log10(), range[1].log10()];
            let points = match &reg {
                Some(r) if name == "the harder half" => place(r, costs, rates, boards, lx, boot.seed ^ 0x9e38),
                _ => Vec::new(),
            };
            SubsetFit {
                points,
                name,
                n: pts.len(),
                n_censored: pts.iter().filter(|p| p.censored).count(),
                range,
                exponent: reg.as_ref().map(|r| r.line.slope),
                exponent_ci: reg.as_ref().map(|r| r.slope_ci),
                intercept: reg.as_ref().map(|r| r.line.intercept),
                residual_spread: reg.as_ref().map(|r| r.line.sigma),
                crossing: reg.as_ref().zip(costs).and_then(|(r, c)| crossing(r, c)),
                error,
            }
        })
        .collect()
}

/// The crossing of the lines in core-seconds ([`Crossing`]); `None` when `b`'s interval
/// reaches 1.
pub fn crossing(reg: &CountRegression, costs: &CostsUsed) -> Option<Crossing> {
    let [lo, hi] = reg.slope_ci;
    let b = reg.line.slope;
    if !(lo.is_finite() && hi.is_finite()) || (lo <= 1.0 && 1.0 <= hi) {
        return None;
    }
    let k = (costs.map / costs.scan).log10();
    let at = |a: f64, bb: f64| {
        if (1.0 - bb) * (1.0 - b) > 0.0 {
            (k + a) / (1.0 - bb)
        } else {
            // Past b = 1 from the fitted side: the limit there, unbounded.
            f64::INFINITY.copysign((k + a) * (1.0 - b))
        }
    };
    let xs: Vec<f64> = reg.replicates.iter().map(|r| at(r[0], r[1])).collect();
    let ci = fit::percentile_interval(&xs)?.map(|v| v.is_finite().then(|| 10f64.powf(v)));
    Some(Crossing {
        hardness: 10f64.powf(at(reg.line.intercept, b)),
        ci,
        map_cheaper: if b < 1.0 { "above" } else { "below" }.into(),
    })
}

/// Which side is the cheaper over the campaign's hardness range `[x0, x1]` (log10), in words.
fn cheaper(reg: &CountRegression, costs: &CostsUsed, cross: Option<&Crossing>, x: [f64; 2]) -> String {
    let ratio = |xv: f64| 10f64.powf((costs.map / costs.scan).log10() + reg.line.at(xv) - xv);
    let (r0, r1) = (ratio(x[0]), ratio(x[1]));
    let range = format!("{} to {} scan nodes per solution", sci(10f64.powf(x[0])), sci(10f64.powf(x[1])));
    let over = |r: f64| {
        if r >= 1.0 {
            format!("the map costs {} the scan", times(r))
        } else {
            format!("the scan costs {} the map", times(1.0 / r))
        }
    };
    let ends = format!("on the fitted lines {} at the easiest instance and {} at the hardest", over(r0), over(r1));
    match cross {
        Some(c) => {
            let side = if c.map_cheaper == "above" { "harder" } else { "easier" };
            let lh = c.hardness.log10();
            let beyond = if lh > x[1] || lh < x[0] { ", outside the campaign's range (an extrapolation)" } else { "" };
            format!(
                "the map is the cheaper on instances {side} than H* = {} scan nodes per solution{beyond}; over the \
                 campaign's range ({range}) {ends}",
                sci(c.hardness)
            )
        }
        None => {
            let who = match (r0 >= 1.0, r1 >= 1.0) {
                (true, true) => "the scan is the cheaper over the whole range",
                (false, false) => "the map is the cheaper over the whole range",
                _ => "the lines meet inside the range, but the exponent's interval reaches 1",
            };
            format!(
                "no crossing can be stated (the exponent's interval reaches 1); over the campaign's range ({range}) {who}: {ends}"
            )
        }
    }
}

fn times(r: f64) -> String {
    format!("{}x", sci(r))
}

/// Three significant figures: whole numbers from 100 to 1e4, exponent form beyond.
fn sci(v: f64) -> String {
    if !v.is_finite() {
        return "unbounded".into();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(0.01..1e4).contains(&a) {
        format!("{v:.2e}")
    } else {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.decimals$}")
    }
}

/// The section's analysis, or `None` when fewer than [`MIN_COMMON`] instances were run by
/// both a map and the scan.
pub fn analyse(records: &[Record], inputs: Inputs, opt: &Options) -> Option<Hardness> {
    let labels = labels(records)?;
    let instances = instances(records, &labels, &inputs.counts);
    let common: Vec<&Instance> = instances.iter().filter(|i| i.common()).collect();
    if common.len() < MIN_COMMON {
        return None;
    }
    let largest = common.iter().map(|i| (i.cells, i.width, i.height)).max().unwrap_or((0, 0, 0));
    let costs_from_records = costs_from_records(records, &labels);
    let costs = pick_costs(&costs_from_records, &inputs.core_rates, largest);
    let us = units(&instances);
    let boot = BootOptions { resamples: opt.resamples, seed: opt.seed, censor_factor: opt.censor_factor };
    let fitted = fit::regress_counts(&us, &boot);
    let (pts, left_out) = fit::points(&us, opt.censor_factor);
    let xr = [
        pts.iter().map(|p| p.x).fold(f64::INFINITY, f64::min),
        pts.iter().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max),
    ];
    // Against the exact solution count, where known (every instance the map ran).
    let dens_units: Vec<Unit> = instances
        .iter()
        .filter_map(|i| {
            let (n, m) = (i.known_solutions.filter(|&n| n > 0)?, i.map.as_ref()?);
            Some(Unit {
                x: Axis::Exact((n as f64).log10()),
                y: Measured { total: m.total, solutions: m.solutions as u64 },
            })
        })
        .collect();
    let density = (dens_units.len() >= MIN_COMMON)
        .then(|| fit::regress_counts(&dens_units, &BootOptions { seed: opt.seed ^ 0xd5, ..boot }).ok())
        .flatten();
    let (regression, error) = match fitted {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e)),
    };
    let parts = subsets(&instances, &boot, costs.as_ref(), &inputs.core_rates, &inputs.points);
    let mut summary =
        summarize(&labels, common.len(), &pts, left_out, regression.as_ref(), error, costs, xr, &inputs, &density, opt);
    summary.subsets = parts;
    Some(Hardness { labels, instances, regression, density, costs_from_records, inputs, summary })
}

#[allow(clippy::too_many_arguments)]
fn summarize(
    labels: &Labels,
    common: usize,
    pts: &[fit::Point],
    left_out: usize,
    reg: Option<&CountRegression>,
    error: Option<FitError>,
    costs: Option<CostsUsed>,
    xr: [f64; 2],
    inputs: &Inputs,
    density: &Option<CountRegression>,
    opt: &Options,
) -> Summary {
    let cross = reg.zip(costs.as_ref()).and_then(|(r, c)| crossing(r, c));
    let cheaper = reg.zip(costs.as_ref()).map(|(r, c)| cheaper(r, c, cross.as_ref(), xr));
    Summary {
        map_label: labels.map.clone(),
        scan_label: labels.scan.clone(),
        ac4_label: labels.ac4.clone(),
        x: format!("log10({} nodes per solution)", labels.scan),
        y: format!("log10({} trial-iterations per solution)", labels.map),
        instances: common,
        n: pts.len(),
        n_censored: pts.iter().filter(|p| p.censored).count(),
        n_left_out: left_out,
        exponent: reg.map(|r| r.line.slope),
        exponent_ci: reg.map(|r| r.slope_ci),
        intercept: reg.map(|r| r.line.intercept),
        intercept_ci: reg.map(|r| r.intercept_ci),
        residual_spread: reg.map(|r| r.line.sigma),
        reliability: reg.map(|r| r.reliability),
        resamples: opt.resamples,
        failed_resamples: reg.map_or(0, |r| r.failed),
        censor_factor: opt.censor_factor,
        error: error.map(|e| e.to_string()),
        crossing: cross,
        cheaper,
        density: density.as_ref().map(|d| DensityFit {
            slope: d.line.slope,
            slope_ci: d.slope_ci,
            intercept: d.line.intercept,
            intercept_ci: d.intercept_ci,
            residual_spread: d.line.sigma,
            n: d.line.points,
            n_censored: d.line.censored,
            inverse_in_ci: d.slope_ci[0] <= -1.0 && -1.0 <= d.slope_ci[1],
            resamples: d.resamples,
            failed_resamples: d.failed,
        }),
        points: reg.map_or_else(Vec::new, |r| {
            place(r, costs.as_ref(), &inputs.core_rates, &inputs.points, xr, opt.seed ^ 0x9e37)
        }),
        subsets: Vec::new(),
        costs,
    }
}

/// `mean [lo, hi]` of a pooled rate, `> bound` without a solution.
fn fmt_rate(p: Option<&Pooled>) -> String {
    match p {
        None => "-".into(),
        Some(p) => match (p.mean, p.ci) {
            (Some(m), [Some(lo), Some(hi)]) => format!("{} [{}, {}]", sci(m), sci(lo), sci(hi)),
            (None, [Some(lo), _]) => format!("> {}", sci(lo)),
            _ => "-".into(),
        },
    }
}

fn ci(v: Option<[f64; 2]>) -> String {
    v.map_or("-".into(), |[lo, hi]| format!("[{lo:.3}, {hi:.3}]"))
}

/// Units per core-second, as a rate.
fn per_s(c: Option<f64>) -> String {
    c.map_or("-".into(), |c| format!("{:.3e}", 1.0 / c))
}

/// The report's section (Markdown).
pub fn markdown(h: &Hardness) -> String {
    let s_ = &h.summary;
    let l = &h.labels;
    let mut s = format!(
        "\n## Work per solution against hardness\n\n\
         Per instance run by both the map (`{}`) and the scan (`{}`), every run pooled: the scan's \
         nodes per solution, the instance's hardness, and the map's trial-iterations per solution \
         (total work over the solutions found in it, with the exact 95% interval; \"> bound\": the \
         map found none, the one-sided 95% bound T / ln 20){}. Sorted by hardness.\n\n\
         | instance | size (cells) | colours | scan nodes / solution [95%] | map trial-iterations / solution [95%] | AC-4 nodes / solution [95%] | solutions found (scan / map / AC-4) | solutions (exact) |\n\
         |---|---|---|---|---|---|---|---|\n",
        l.map,
        l.scan,
        l.ac4.as_ref().map_or(String::new(), |a| format!(", and AC-4's (`{a}`) nodes per solution"))
    );
    let mut rows: Vec<&Instance> = h.instances.iter().filter(|i| i.common()).collect();
    let key = |i: &Instance| i.scan.as_ref().and_then(|p| p.mean).unwrap_or(f64::INFINITY);
    rows.sort_by(|a, b| key(a).total_cmp(&key(b)).then(a.instance.cmp(&b.instance)));
    for i in rows {
        let n = |p: &Option<Pooled>| p.as_ref().map_or("-".into(), |p| p.solutions.to_string());
        s.push_str(&format!(
            "| {} | {}x{} ({}) | {} | {} | {} | {} | {} / {} / {} | {} |\n",
            i.instance,
            i.width,
            i.height,
            i.cells,
            i.colors,
            fmt_rate(i.scan.as_ref()),
            fmt_rate(i.map.as_ref()),
            fmt_rate(i.ac4.as_ref()),
            n(&i.scan),
            n(&i.map),
            n(&i.ac4),
            i.known_solutions.map_or("-".into(), |n| n.to_string())
        ));
    }
    s.push_str(&format!(
        "\n**The fit.** Censored normal regression (Tobin 1958) of y = log10(map trial-iterations per \
         solution) on x = log10(scan nodes per solution), y = a + b x + e, e ~ N(0, s^2), by maximum \
         likelihood; an instance where the map found nothing in T trial-iterations is censored (its y \
         lies above log10({:.2} T), where the likelihood of finding none, exp(-T / mean), has its step), \
         one where the scan found nothing is left out. 95% intervals: percentile bootstrap (Efron) over \
         instances and over each instance's two counts, redrawn as Poisson around what was found with \
         the work held fixed ({} resamples, seeded). ",
        s_.censor_factor, s_.resamples
    ));
    match (&h.regression, &s_.error) {
        (Some(r), _) => s.push_str(&format!(
            "Over {} instances ({} censored; {} left out): **exponent b = {:.3} {}**, intercept a = {:.3} {}, \
             residual spread s = {:.3} decades{}. The noise of the scan's estimates attenuates b by a \
             factor of about {:.3} (not corrected).",
            s_.n,
            s_.n_censored,
            s_.n_left_out,
            r.line.slope,
            ci(Some(r.slope_ci)),
            r.line.intercept,
            ci(Some(r.intercept_ci)),
            r.line.sigma,
            if r.failed > 0 { format!(" ({} resamples without a fit left out)", r.failed) } else { String::new() },
            r.reliability,
        )),
        (None, Some(e)) => s.push_str(&format!(
            "No fit over {} instances ({} censored, {} left out): {e}.",
            s_.n, s_.n_censored, s_.n_left_out
        )),
        (None, None) => {}
    }
    if h.regression.is_some() && s_.n_censored as f64 > HEAVY_CENSORING * s_.n as f64 {
        s.push_str(&format!(
            " **Many points censored** ({} of {}): where more than {:.0}% are, the fit's exponent runs low \
             (the censoring point and the few solutions of the instances near the map's cap are \
             approximations; module `ladder::hardness`).",
            s_.n_censored,
            s_.n,
            100.0 * HEAVY_CENSORING
        ));
    }
    s.push('\n');
    if let Some(c) = &s_.costs {
        s.push_str(&format!(
            "\n**In core-seconds.** With c_map = {:.3e} core-seconds per map trial-iteration and c_scan = {:.3e} \
             per scan node ({}, {}; {:.3e} and {:.3e} per core-second), the map's line c_map 10^a H^b and the \
             scan's c_scan H ",
            c.map,
            c.scan,
            c.source,
            c.note,
            1.0 / c.map,
            1.0 / c.scan
        ));
        match &s_.crossing {
            Some(x) => s.push_str(&format!(
                "meet at H* = {} scan nodes per solution [{}, {}] (95% bootstrap; the costs taken as known)",
                sci(x.hardness),
                x.ci[0].map_or("unbounded".into(), sci),
                x.ci[1].map_or("unbounded".into(), sci)
            )),
            None => s.push_str("have no crossing to state"),
        }
        if let Some(w) = &s_.cheaper {
            s.push_str(&format!(": {w}."));
        }
        s.push('\n');
    } else if h.regression.is_some() {
        s.push_str("\nNo per-unit costs (no timed runs of both methods): no crossing in core-seconds.\n");
    }
    if !s_.subsets.is_empty() {
        s.push_str(&format!(
            "\n**Does one exponent hold?** The same fit over parts of the campaign: the easier and the harder \
             half of the instances (split at the median hardness), and each board size with at least \
             {MIN_SUBSET} instances, where hardness varies with the colours alone. A line through the whole \
             range can hide a slope that steepens towards the hard end, and the hard end is where a crossing \
             would be; the crossing of each part's line uses the same per-unit costs.\n\n\
             | instances | n (censored) | scan nodes / solution | exponent b [95%] | crossing H* [95%] |\n\
             |---|---|---|---|---|\n"
        ));
        for p in &s_.subsets {
            let b = match (p.exponent, p.exponent_ci, &p.error) {
                (Some(b), Some([lo, hi]), _) => format!("{b:.3} [{lo:.3}, {hi:.3}]"),
                (_, _, Some(e)) => format!("no fit: {e}"),
                _ => "-".into(),
            };
            let cross = match (&p.crossing, p.exponent_ci) {
                (Some(x), _) => format!(
                    "{} [{}, {}], the map cheaper {}{}",
                    sci(x.hardness),
                    x.ci[0].map_or("unbounded".into(), sci),
                    x.ci[1].map_or("unbounded".into(), sci),
                    x.map_cheaper,
                    if (p.range[0]..=p.range[1]).contains(&x.hardness) { "" } else { " (outside the part's range)" }
                ),
                (None, Some([lo, hi])) if lo <= 1.0 && 1.0 <= hi => "none to state (b's interval reaches 1)".into(),
                _ => "-".into(),
            };
            s.push_str(&format!(
                "| {} | {} ({}) | {} to {} | {b} | {cross} |\n",
                p.name,
                p.n,
                p.n_censored,
                sci(p.range[0]),
                sci(p.range[1])
            ));
        }
        let harder = s_.subsets.iter().find(|p| p.name == "the harder half");
        if let (Some(d), Some([_, whole_hi])) = (harder, s_.exponent_ci)
            && let (Some(b), Some([lo, hi])) = (d.exponent, d.exponent_ci)
            && whole_hi < 1.0
            && hi >= 1.0
        {
            s.push_str(&format!(
                "\n**The whole line's crossing rests on the easier instances.** Over the harder half the exponent \
                 is b = {b:.3} [{lo:.3}, {hi:.3}], {}: at the hard end, where a crossing would be, the map's \
                 work grows as fast as the scan's or faster, and no crossing can be stated from it.\n",
                if lo > 1.0 { "its interval above 1" } else { "its interval reaching 1" }
            ));
        }
    }
    s.push_str(&format!(
        "\nThe instances and the line, both axes' 95% intervals as bars, an open marker with an arrow \
         where the map found none (at the 95% bound), the fitted line with its 95% bootstrap band, and \
         dashed the line where the map's core-seconds equal the scan's: ![work per solution against \
         hardness]({FIGURE_FILE})\n"
    ));
    s.push_str(
        "\nPer-unit costs measured in the records (total wall seconds / total work of the one-core runs \
         per method and size; they carry the machine's load), as units per core-second:\n\n\
         | size | map trial-iterations / s | scan nodes / s | AC-4 nodes / s |\n|---|---|---|---|\n",
    );
    for c in &h.costs_from_records {
        s.push_str(&format!(
            "| {}x{} | {} | {} | {} |\n",
            c.width,
            c.height,
            per_s(c.map),
            per_s(c.scan),
            per_s(c.ac4)
        ));
    }
    if !h.inputs.core_rates.is_empty() {
        s.push_str(&format!(
            "\nThe per-core rates given ({}):\n\n| size | map trial-iterations / s | scan nodes / s | AC-4 nodes / s |\n|---|---|---|---|\n",
            h.inputs.core_rates_from.join(", ")
        ));
        for c in &h.inputs.core_rates {
            s.push_str(&format!(
                "| {}x{} | {} | {} | {} |\n",
                c.width,
                c.height,
                per_s(c.map),
                per_s(c.scan),
                per_s(c.ac4)
            ));
        }
    }
    if let Some(d) = &s_.density {
        s.push_str(&format!(
            "\n**Against the number of solutions.** Over the {} instances whose solutions are counted \
             exactly ({} censored), the same regression of y on log10(number of solutions): slope {:.3} {}, \
             intercept {:.3} {}, residual spread {:.3} decades. A map that found solutions as if drawn at \
             random would have slope -1: {}.\n",
            d.n,
            d.n_censored,
            d.slope,
            ci(Some(d.slope_ci)),
            d.intercept,
            ci(Some(d.intercept_ci)),
            d.residual_spread,
            if d.inverse_in_ci { "within the interval" } else { "outside the interval" }
        ));
    } else if !h.inputs.counts.is_empty() {
        s.push_str(&format!(
            "\n{} instances have exact solution counts; fewer than {MIN_COMMON} of them were run by the map \
             (or the fit failed): no fit against the number of solutions.\n",
            h.inputs.counts.len()
        ));
    }
    if !s_.points.is_empty() {
        s.push_str(
            "\n**Boards beyond the campaign, placed on the line** (their scan nodes per solution as given; \
             the map's from the fitted line, with the 95% interval of the line and of one instance about \
             it; an extrapolation where the hardness lies outside the campaign's; core-seconds at the \
             per-unit costs of the size named, the board's own where the core-rates table has it):\n\n",
        );
        s.push_str(&placed_table(&s_.points));
    }
    if let Some(d) = s_.subsets.iter().find(|p| p.name == "the harder half" && !p.points.is_empty()) {
        s.push_str(&format!(
            "\nThe same boards on the harder half's line (b = {}), which the hard end of the campaign \
             supports:\n\n",
            d.exponent.map_or("-".into(), |b| format!("{b:.3}"))
        ));
        s.push_str(&placed_table(&d.points));
    }
    s
}

/// The table of boards placed on a line.
fn placed_table(points: &[Placed]) -> String {
    let mut s = String::from(
        "| board | scan nodes / solution | map trial-iterations / solution [line 95%] [instance 95%] | map core-seconds / solution [line 95%] | scan core-seconds / solution | costs at | extrapolated |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for p in points {
        s.push_str(&format!(
            "| {} | {} | {} [{}, {}] [{}, {}] | {} | {} | {} | {} |\n",
            p.name,
            sci(p.scan_nodes_per_solution),
            sci(p.map_work),
            sci(p.map_work_ci[0]),
            sci(p.map_work_ci[1]),
            sci(p.map_work_instance_ci[0]),
            sci(p.map_work_instance_ci[1]),
            p.map_core_seconds.map_or("-".into(), |m| format!(
                "{} [{}, {}]",
                sci(m),
                sci(p.map_core_seconds_ci.map_or(f64::NAN, |c| c[0])),
                sci(p.map_core_seconds_ci.map_or(f64::NAN, |c| c[1]))
            )),
            p.scan_core_seconds.map_or("-".into(), sci),
            p.costs_at.as_deref().unwrap_or("-"),
            if p.extrapolated { "yes" } else { "no" }
        ));
    }
    s
}

/// The figure (`hardness.svg`): the instances on log-log axes, coloured by board size.
pub fn figure(h: &Hardness) -> String {
    let mut sizes: Vec<(usize, usize, usize)> =
        h.instances.iter().filter(|i| i.common()).map(|i| (i.cells, i.width, i.height)).collect();
    sizes.sort();
    sizes.dedup();
    let color = |i: &Instance| sizes.iter().position(|s| (s.1, s.2) == (i.width, i.height)).unwrap_or(0);
    let lg = |v: Option<f64>| v.filter(|v| *v > 0.0).map(f64::log10);
    let points: Vec<ErrorPoint> = h
        .instances
        .iter()
        .filter(|i| i.common())
        .filter_map(|i| {
            let (s, m) = (i.scan.as_ref()?, i.map.as_ref()?);
            let x = lg(s.mean)?;
            let x_ci = [lg(s.ci[0]).unwrap_or(x), lg(s.ci[1]).unwrap_or(x)];
            Some(match m.mean {
                Some(mean) => ErrorPoint {
                    x,
                    x_ci,
                    y: mean.log10(),
                    y_ci: Some([lg(m.ci[0]).unwrap_or(mean.log10()), lg(m.ci[1]).unwrap_or(mean.log10())]),
                    color: color(i),
                },
                None => ErrorPoint { x, x_ci, y: lg(m.ci[0])?, y_ci: None, color: color(i) },
            })
        })
        .collect();
    let groups: Vec<(usize, String)> =
        sizes.iter().enumerate().map(|(k, (c, w, hh))| (k, format!("{w}x{hh} ({c} cells)"))).collect();
    let band = h.regression.as_ref().and_then(|r| {
        let (x0, x1) = (
            points.iter().map(|p| p.x_ci[0]).fold(f64::INFINITY, f64::min),
            points.iter().map(|p| p.x_ci[1]).fold(f64::NEG_INFINITY, f64::max),
        );
        if !(x0.is_finite() && x1 > x0) {
            return None;
        }
        let xs: Vec<f64> = (0..=40).map(|k| x0 + (x1 - x0) * k as f64 / 40.0).collect();
        let q = |x: f64| fit::percentile_interval(&r.replicates.iter().map(|p| p[0] + p[1] * x).collect::<Vec<_>>());
        let lims: Vec<[f64; 2]> = xs.iter().map(|&x| q(x).unwrap_or([r.line.at(x); 2])).collect();
        Some(ScatterBand {
            name: format!("fit: b = {:.2} [{:.2}, {:.2}], 95% band", r.line.slope, r.slope_ci[0], r.slope_ci[1]),
            mid: xs.iter().map(|&x| r.line.at(x)).collect(),
            lo: lims.iter().map(|l| l[0]).collect(),
            hi: lims.iter().map(|l| l[1]).collect(),
            xs,
        })
    });
    let reference = h
        .summary
        .costs
        .as_ref()
        .map(|c| ((c.scan / c.map).log10(), 1.0, format!("equal core-seconds ({}x{} costs)", c.width, c.height)));
    scatter_plot(&ScatterPlot {
        title: "Map trial-iterations per solution against the scan's nodes per solution, per instance",
        xlabel: "scan nodes per solution (hardness, log)",
        ylabel: "map trial-iterations per solution (log)",
        points: &points,
        groups: &groups,
        band,
        reference,
        part: h.summary.subsets.iter().find(|p| p.name == "the harder half").and_then(|p| {
            let (a, b, [lo, hi]) = (p.intercept?, p.exponent?, p.exponent_ci?);
            Some((
                a,
                b,
                [p.range[0].log10(), p.range[1].log10()],
                format!("harder half: b = {b:.2} [{lo:.2}, {hi:.2}]"),
            ))
        }),
        bound_note: "map found none: 95% lower bound",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_significant_figures() {
        let v: Vec<String> = [0.5, 12.345, 345.7, 9999.0, 12307.69, 6.4e10, 0.001].into_iter().map(sci).collect();
        assert_eq!(v, ["0.500", "12.3", "346", "9999", "1.23e4", "6.40e10", "1.00e-3"]);
        assert_eq!(sci(f64::INFINITY), "unbounded");
    }

    #[test]
    fn sizes_come_from_the_ends_of_names() {
        assert_eq!(size_of("set1-08x07"), Some((8, 7)));
        assert_eq!(size_of("brendan_owen/pieces_set_1/pieces_10x10.txt"), Some((10, 10)));
        assert_eq!(size_of("generated"), None);
    }

    #[test]
    fn core_rates_parse_into_costs_and_average_repeats() {
        let t = r#"{"puzzle": "set1-07x07", "method": "rrr", "rate": 100.0, "unit": "iterations/s"}
{"puzzle": "set1-07x07", "method": "rrr", "rate": 300.0}
{"puzzle": "set1-07x07", "method": "scan", "rate": 1e7}
{"puzzle": "set1-08x08", "method": "alns", "rate": 5.0}
"#;
        let c = parse_core_rates(t, "f").unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].width, c[0].height, c[0].cells), (7, 7, 49));
        assert_eq!(c[0].map, Some(1.0 / 200.0));
        assert_eq!(c[0].scan, Some(1e-7));
        assert_eq!(c[0].ac4, None);
        let e = parse_core_rates("{\"puzzle\": \"x\", \"method\": \"rrr\", \"rate\": 1}", "f").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        assert!(parse_core_rates("{\"puzzle\": \"a-5x5\", \"method\": \"rrr\", \"rate\": -1}", "f").is_err());
    }

    #[test]
    fn counts_skip_incomplete_lines_and_refuse_clashes() {
        let mut m = BTreeMap::new();
        let t = "{\"instance\": \"a\", \"solutions\": 4, \"complete\": true}\n\
                 {\"instance\": \"b\", \"solutions\": 9, \"complete\": false}\n\n\
                 {\"instance\": \"a\", \"solutions\": 4, \"complete\": true, \"nodes\": 7}\n";
        parse_counts(t, "c", &mut m).unwrap();
        assert_eq!(m.into_iter().collect::<Vec<_>>(), vec![("a".to_string(), 4)]);
        let mut m = BTreeMap::new();
        let clash = "{\"instance\": \"a\", \"solutions\": 4, \"complete\": true}\n{\"instance\": \"a\", \"solutions\": 5, \"complete\": true}";
        assert!(matches!(parse_counts(clash, "c", &mut m), Err(HardnessError::CountClash { .. })));
        assert!(parse_counts("nope", "c", &mut BTreeMap::new()).is_err());
    }

    #[test]
    fn points_parse_and_refuse_nonsense() {
        let p = parse_points(r#"[{"name": "set 1 8x8", "scan_nodes_per_solution": 6.4e10}]"#, "p").unwrap();
        assert_eq!(p[0].name, "set 1 8x8");
        assert!(parse_points(r#"[{"name": "x", "scan_nodes_per_solution": 0}]"#, "p").is_err());
        assert!(parse_points(r#"{"name": "x"}"#, "p").is_err());
        let p = parse_points(r#"[{"name": "b", "scan_nodes_per_solution": 1e17, "size": "10x10"}]"#, "p").unwrap();
        assert_eq!(p[0].size.as_deref(), Some("10x10"));
        for bad in ["10", "0x10", "axb", "10x"] {
            let t = format!(r#"[{{"name": "b", "scan_nodes_per_solution": 1e17, "size": "{bad}"}}]"#);
            assert!(parse_points(&t, "p").is_err(), "{bad}");
        }
    }

    /// The line `y = 1 + 0.5 x` with three replicates (slopes 0.5, 0.4, 0.6) and costs whose
    /// ratio is 1000: the lines meet at `x* = (3 + 1) / (1 - 0.5) = 8`.
    fn line_and_costs() -> (CountRegression, CostsUsed) {
        let line = fit::Line {
            intercept: 1.0,
            slope: 0.5,
            sigma: 0.1,
            log_likelihood: 0.0,
            points: 10,
            censored: 0,
            iterations: 3,
        };
        let reg = CountRegression {
            line,
            units: 10,
            left_out: 0,
            slope_ci: [0.4, 0.6],
            intercept_ci: [0.5, 1.5],
            resamples: 3,
            failed: 0,
            reliability: 1.0,
            replicates: vec![[1.0, 0.5, 0.1], [1.0, 0.4, 0.1], [1.0, 0.6, 0.1]],
        };
        let costs =
            CostsUsed { map: 1e-4, scan: 1e-7, width: 8, height: 7, source: "records".into(), note: String::new() };
        (reg, costs)
    }

    #[test]
    fn placed_boards_use_their_own_size_costs_where_the_table_has_them() {
        let (reg, costs) = line_and_costs();
        let rates = vec![SizeCosts { width: 10, height: 10, cells: 100, map: Some(1e-3), scan: Some(1e-6), ac4: None }];
        let pt = |name: &str, size: Option<&str>| NamedPoint {
            name: name.into(),
            scan_nodes_per_solution: 1e8,
            size: size.map(Into::into),
            note: None,
        };
        let p = place(
            &reg,
            Some(&costs),
            &rates,
            &[pt("own", Some("10x10")), pt("other", Some("9x9")), pt("none", None)],
            [2.0, 9.0],
            1,
        );
        // The line at x = 8: 10^5 iterations per solution.
        assert!((p[0].map_work.log10() - 5.0).abs() < 1e-9);
        assert!(
            (p[0].map_core_seconds.unwrap() - 1e2).abs() < 1e-6 && (p[0].scan_core_seconds.unwrap() - 1e2).abs() < 1e-6
        );
        assert_eq!(p[0].costs_at.as_deref(), Some("10x10, core-rates file"));
        for q in &p[1..] {
            assert!(
                (q.map_core_seconds.unwrap() - 10.0).abs() < 1e-6 && (q.scan_core_seconds.unwrap() - 10.0).abs() < 1e-6
            );
            assert_eq!(q.costs_at.as_deref(), Some("8x7, records"));
        }
        assert_eq!(place(&reg, None, &rates, &[pt("none", None)], [2.0, 9.0], 1)[0].costs_at, None);
    }

    #[test]
    fn the_costs_come_from_the_table_at_the_largest_size_or_nearest_else_from_the_records() {
        let sc = |w: usize, h: usize, m: f64| SizeCosts {
            width: w,
            height: h,
            cells: w * h,
            map: Some(m),
            scan: Some(m / 1000.0),
            ac4: None,
        };
        let recs = vec![sc(7, 7, 1.0), sc(8, 7, 2.0)];
        let file = vec![sc(7, 7, 3.0), sc(8, 8, 4.0)];
        // 49 cells lie nearer 56 than 64 do; at 64 the table has the size itself.
        let c = pick_costs(&recs, &file, (56, 8, 7)).unwrap();
        assert_eq!((c.map, c.width, c.height, c.source.as_str()), (3.0, 7, 7, "core-rates file"));
        assert!(c.note.contains("nearest"), "{}", c.note);
        let c = pick_costs(&recs, &file, (64, 8, 8)).unwrap();
        assert_eq!((c.map, c.width, c.height), (4.0, 8, 8));
        // Equally near: the larger.
        let c = pick_costs(&recs, &[sc(7, 7, 3.0), sc(9, 7, 5.0)], (56, 8, 7)).unwrap();
        assert_eq!(c.map, 5.0);
        let c = pick_costs(&recs, &[], (56, 8, 7)).unwrap();
        assert_eq!((c.map, c.source.as_str()), (2.0, "records"));
        let c = pick_costs(&recs, &[], (64, 8, 8)).unwrap();
        assert_eq!((c.map, c.width), (2.0, 8));
        assert!(c.note.contains("largest size where both"), "{}", c.note);
        assert_eq!(pick_costs(&[], &[], (64, 8, 8)), None);
    }

    #[test]
    fn the_crossing_is_where_the_core_second_lines_meet() {
        // y = 1 + 0.5 x; c_map / c_scan = 1000: map cost 10^(4 + 0.5 x) vs 10^x: x* = 8.
        let (mut reg, costs) = line_and_costs();
        let c = crossing(&reg, &costs).unwrap();
        assert!((c.hardness.log10() - 8.0).abs() < 1e-9 && c.map_cheaper == "above", "{c:?}");
        // x* = 4 / 0.6 and 4 / 0.4 at the other two.
        assert!((c.ci[0].unwrap().log10() - 4.0 / 0.6).abs() < 1e-9 && (c.ci[1].unwrap().log10() - 10.0).abs() < 1e-9);
        // A replicate beyond b = 1 makes that end unbounded.
        reg.replicates[2] = [1.0, 1.2, 0.1];
        assert_eq!(crossing(&reg, &costs).unwrap().ci[1], None);
        // b's interval reaching 1: no crossing.
        reg.slope_ci = [0.4, 1.1];
        assert_eq!(crossing(&reg, &costs), None);
        // Placing a board at x = 8: the line's value, its costs, and an extrapolation.
        reg.slope_ci = [0.4, 0.6];
        let p = place(
            &reg,
            Some(&costs),
            &[],
            &[NamedPoint { name: "b".into(), scan_nodes_per_solution: 1e8, size: None, note: None }],
            [3.0, 7.0],
            1,
        );
        assert!((p[0].map_work.log10() - 5.0).abs() < 1e-9 && p[0].extrapolated);
        assert!((p[0].map_core_seconds.unwrap() / p[0].scan_core_seconds.unwrap() - 1.0).abs() < 1e-9);
    }
}
