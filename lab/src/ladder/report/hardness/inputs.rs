//! The hardness answer's inputs: the records' labels and instances, the folders' optional
//! inputs (counts, core rates, points) and their errors.

use crate::ladder::report::stats::{self, Pooled};
use crate::ladder::run::Record;
use concur::method::MethodName;
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
/// ([`Summary::subsets`](super::Summary::subsets)).
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
pub(super) fn size_of(name: &str) -> Option<(usize, usize)> {
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
pub(super) fn point_size(z: &str) -> Option<(usize, usize)> {
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
