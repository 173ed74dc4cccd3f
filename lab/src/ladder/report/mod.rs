//! `concur report`: merge ladder results; per method and board size, the fraction solved
//! within the budget and Kaplan-Meier estimates of time and work to solution in which unsolved
//! runs are censored at their budget (not dropped), with bootstrap intervals; fits of their
//! growth with board area; run-time distribution plots. The statistics are in
//! [`stats`].

pub mod choice;
pub mod curve;
pub mod devices;
pub mod fit;
pub mod format;
pub mod hardness;
pub mod poisson_lognormal;
pub mod runtimes;
pub mod stats;
pub mod svg;

pub use self::format::{fmt_secs, fmt_work};
pub use self::stats::RESAMPLES;
use self::stats::{KaplanMeier, LineFit};
use self::svg::{Curve, Series, log_plot, rtd_plot};
use self::svg::{Panel, PooledPoint, PooledSeries, pooled_plot, sparse_from};
use crate::ladder::run::{Record, join_parts, read_records};
use concur::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Kaplan-Meier statistics of one quantity (seconds or work) to solution, unsolved runs
/// censored at what they spent. `None` (null in JSON): the estimated fraction solved never
/// reaches that level within the budget, so the quantile lies beyond it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Censored {
    /// `[q1, median, q3]`.
    pub quartiles: [Option<f64>; 3],
    /// 95% percentile-bootstrap interval of the median; a null upper end means the interval
    /// reaches beyond the budget, a null lower end that the whole of it does.
    pub median_ci: [Option<f64>; 2],
}

impl Censored {
    /// The statistics of `(value, solved)` observations; `seed` fixes the bootstrap.
    pub fn of(obs: &[(f64, bool)], seed: u64) -> Self {
        Censored {
            quartiles: KaplanMeier::new(obs).quartiles(),
            median_ci: stats::bootstrap_quantile_ci(obs, 0.5, RESAMPLES, seed),
        }
    }

    /// The Kaplan-Meier median (None: beyond the budget).
    pub fn median(&self) -> Option<f64> {
        self.quartiles[1]
    }
}

/// One (method, size) cell of the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// The method's label.
    pub label: String,
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// Cells, `width * height`.
    pub area: usize,
    /// Runs on file.
    pub runs: usize,
    /// Of them, the solved ones.
    pub solved: usize,
    /// Of the solved runs by the map alone / with completion (maps only).
    pub solved_by_map_ac: usize,
    /// `solved / runs`: the fraction solved within the budget.
    pub solved_fraction: f64,
    /// Its 95% Wilson score interval.
    pub solved_ci: [f64; 2],
    /// The largest time limit of the runs (their `time_limit` parameter), if they had one.
    pub time_limit_s: Option<f64>,
    /// The unit of `work`.
    pub work_unit: String,
    /// Seconds to solution (wall clock, the currency common to all methods).
    pub seconds: Censored,
    /// Work to solution in the method's own unit (`work_unit`).
    pub work: Censored,
    /// Pooled rates: the censored exponential estimate of work per solution (total work over
    /// all runs / solutions) with its exact interval.
    pub pooled_work: stats::Pooled,
    /// The same in core-seconds (every ladder run has one core).
    pub pooled_seconds: stats::Pooled,
    /// Whether the work to solution fits an exponential (memoryless) law, from
    /// [`stats::MIN_SOLUTIONS_FOR_FIT`] solutions on; where it is rejected the pooled rates
    /// mislead and the Kaplan-Meier columns are the ones to read.
    pub memoryless: Option<stats::ExpFit>,
    /// The best score each run reached (matched joins of its best complete board; a tree
    /// search that completes no board scores 0): mean, best and quartiles over the runs, out
    /// of `max_score`.
    pub scores: Scores,
}

/// Best scores over the runs of one (method, size).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Scores {
    /// The score of a solution.
    pub max_score: usize,
    /// Mean best score over the runs.
    pub mean: f64,
    /// The highest best score of any run.
    pub best: usize,
    /// `[q1, median, q3]`, linearly interpolated.
    pub quartiles: [f64; 3],
}

impl Scores {
    fn of(rs: &[&Record]) -> Self {
        let mut v: Vec<f64> = rs.iter().map(|r| r.best_score as f64).collect();
        let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
        Scores {
            max_score: rs.iter().map(|r| r.max_score).max().unwrap_or(0),
            mean,
            best: rs.iter().map(|r| r.best_score).max().unwrap_or(0),
            quartiles: quartiles(&mut v).unwrap_or([0.0; 3]),
        }
    }
}

/// Where a run would have stopped unsolved, in its work unit: its own work if it did not
/// solve; for a solved run, its time limit at its own rate of work (or its work cap when it
/// had one); `+inf` when neither is known.
pub fn censor_work(r: &Record) -> f64 {
    if !r.solved {
        return r.work as f64;
    }
    let cap = ["max_iters", "max_nodes"].iter().find_map(|k| r.params.get(*k).and_then(|v| v.as_f64()));
    let by_time = r
        .params
        .get("time_limit")
        .and_then(|v| v.as_f64())
        .filter(|_| r.wall_s > 0.0)
        .map(|t| (t * r.work as f64 / r.wall_s).max(r.work as f64));
    match (cap, by_time) {
        (Some(c), Some(t)) => c.min(t),
        (Some(c), None) => c,
        (None, Some(t)) => t,
        (None, None) => f64::INFINITY,
    }
}

/// Quartiles by linear interpolation (of plain, uncensored samples).
pub fn quartiles(v: &mut [f64]) -> Option<[f64; 3]> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let q = |f: f64| {
        let pos = f * (v.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    };
    Some([q(0.25), q(0.5), q(0.75)])
}

/// Merges the `*.jsonl` files of the given folders (or files). The same run appearing twice
/// with different results is an error; exact duplicates are merged.
pub fn merge(inputs: &[PathBuf]) -> Result<Vec<Record>> {
    let mut files = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let mut fs: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| Error::io("read", p, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            fs.sort();
            files.extend(fs);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(Error::Missing { path: p.clone() });
        }
    }
    // A run's parts (a run that a stop cut short, continued by --resume) share its key.
    let mut by_key: BTreeMap<((String, String, u64), u32), Record> = BTreeMap::new();
    for f in files {
        for r in read_records(&f)? {
            let k = (r.key(), r.part.unwrap_or(0));
            match by_key.get(&k) {
                Some(old) if *old != r && (old.solved, old.work) != (r.solved, r.work) => {
                    return Err(Error::results(format!("run {:?} appears twice with different results", r.key())));
                }
                Some(_) => {}
                None => {
                    by_key.insert(k, r);
                }
            }
        }
    }
    Ok(join_parts(by_key.into_values().collect()))
}

/// The machines the records were run on, from their provenance: per method label, each CPU
/// model with its hosts and records, and a warning where one label's CPU runs mix CPU models
/// (their per-core rates are then a mixture). Empty when no record has provenance.
pub fn machines_markdown(records: &[Record]) -> String {
    let mut by: BTreeMap<&str, BTreeMap<String, (std::collections::BTreeSet<&str>, usize)>> = BTreeMap::new();
    let mut any = false;
    for r in records {
        let (cpu, host) = match &r.provenance {
            Some(p) => {
                any = true;
                (if r.on_device() { r.machine() } else { p.cpu.clone() }, p.host.as_str())
            }
            None => (format!("not recorded ({})", r.machine()), "-"),
        };
        let e = by.entry(&r.label).or_default().entry(cpu).or_default();
        e.0.insert(host);
        e.1 += 1;
    }
    if !any {
        return String::new();
    }
    let mut md = String::from(
        "\n## Machines\n\nThe machines each method's records ran on (each record's provenance: CPU model and host; a GPU run's adapter):\n\n| method | CPU model or device | hosts | records |\n|---|---|---|---|\n",
    );
    let mut warnings = Vec::new();
    for (label, cpus) in &by {
        for (cpu, (hosts, n)) in cpus {
            let hosts: Vec<&str> = hosts.iter().copied().collect();
            md += &format!("| {label} | {cpu} | {} | {n} |\n", hosts.join(", "));
        }
        // The CPU models of the label's CPU runs that recorded one.
        let models: std::collections::BTreeSet<&str> = records
            .iter()
            .filter(|r| r.label == **label && !r.on_device())
            .filter_map(|r| r.provenance.as_ref().map(|p| p.cpu.as_str()))
            .collect();
        if models.len() > 1 {
            warnings.push(format!(
                "**Warning:** the CPU runs of {label} mix {} CPU models ({}): their per-core rates (seconds per solution) pool different machines.",
                models.len(),
                models.iter().copied().collect::<Vec<_>>().join("; ")
            ));
        }
    }
    for w in warnings {
        md += &format!("\n{w}\n");
    }
    md
}

/// Groups records by method label and board size, and estimates each cell.
pub fn summarize(records: &[Record]) -> Vec<Row> {
    Record::by_method_and_size(records)
        .into_iter()
        .map(|((label, area, width), rs)| {
            let height = area / width;
            let solved = rs.iter().filter(|r| r.solved).count();
            // Time and work to the first solution: a rate-mode run records its whole budget
            // (its solutions pool below), not its time to a first solution, so it is left out.
            let firsts: Vec<&Record> = rs.iter().copied().filter(|r| r.solutions.is_none()).collect();
            let secs: Vec<(f64, bool)> = firsts.iter().map(|r| (r.wall_s, r.solved)).collect();
            let work: Vec<(f64, bool)> = firsts.iter().map(|r| (r.work as f64, r.solved)).collect();
            let seed = |what: &str| stats::stable_hash(&format!("{label}|{width}x{height}|{what}"));
            let time_limit_s = rs
                .iter()
                .filter_map(|r| r.params.get("time_limit").and_then(|v| v.as_f64()))
                .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.max(t))));
            Row {
                width,
                height,
                area,
                runs: rs.len(),
                solved,
                solved_by_map_ac: rs.iter().filter(|r| r.solved && r.mechanism.as_deref() == Some("map+ac")).count(),
                solved_fraction: solved as f64 / rs.len() as f64,
                solved_ci: stats::wilson_interval(solved, rs.len()),
                time_limit_s,
                work_unit: rs[0].work_unit.clone(),
                seconds: Censored::of(&secs, seed("seconds")),
                work: Censored::of(&work, seed("work")),
                scores: Scores::of(&rs),
                // Every verified solution counts (rate-mode runs hold several).
                pooled_work: stats::pooled_counts(
                    &rs.iter().map(|r| (r.work as f64, r.solution_count())).collect::<Vec<_>>(),
                ),
                pooled_seconds: stats::pooled_counts(
                    &rs.iter().map(|r| (r.wall_s, r.solution_count())).collect::<Vec<_>>(),
                ),
                memoryless: stats::exp_fit(
                    &work,
                    &firsts.iter().map(|r| censor_work(r)).collect::<Vec<_>>(),
                    RESAMPLES,
                    seed("memoryless"),
                ),
                label,
            }
        })
        .collect()
}

/// A log-linear fit `ln(KM median) = intercept + slope * area` of one method and quantity,
/// over the sizes where its Kaplan-Meier median lies within the budget.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Fit {
    /// The method's label.
    pub label: String,
    /// `seconds` or `work`.
    pub quantity: String,
    /// `s` or the method's work unit.
    pub unit: String,
    /// Natural-log units per extra cell.
    pub slope: f64,
    /// The natural log of the median at zero cells (an extrapolation: read with `slope`).
    pub intercept: f64,
    /// 95% t interval of the slope (at least three sizes).
    pub slope_ci: Option<[f64; 2]>,
    /// `exp(slope)`: the factor per extra cell, and its interval.
    pub growth_per_cell: f64,
    /// The interval of `growth_per_cell` (from the slope's).
    pub growth_ci: Option<[f64; 2]>,
    /// The smallest size fitted, in cells.
    pub area_min: usize,
    /// The largest size fitted, in cells.
    pub area_max: usize,
    /// Sizes fitted.
    pub points: usize,
    /// Sizes of this method left out because their median lies beyond the budget.
    pub beyond_budget: Vec<String>,
}

/// Fits seconds and work per method (work below 1 counts as 1, so that ln stays finite).
pub fn fit(rows: &[Row]) -> Vec<Fit> {
    let mut by: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by.entry(&r.label).or_default().push(r);
    }
    let mut out = Vec::new();
    for (label, rs) in by {
        for quantity in ["seconds", "work"] {
            let pick =
                |r: &Row| if quantity == "seconds" { r.seconds.median() } else { r.work.median().map(|m| m.max(1.0)) };
            let pts: Vec<(f64, f64, usize)> = rs
                .iter()
                .filter_map(|r| pick(r).filter(|m| *m > 0.0).map(|m| (r.area as f64, m.ln(), r.area)))
                .collect();
            let Some(LineFit { slope, intercept, slope_ci, points }) =
                stats::line_fit(&pts.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>())
            else {
                continue;
            };
            out.push(Fit {
                label: label.to_string(),
                quantity: quantity.into(),
                unit: if quantity == "seconds" { "s".into() } else { rs[0].work_unit.clone() },
                slope,
                intercept,
                slope_ci,
                growth_per_cell: slope.exp(),
                growth_ci: slope_ci.map(|c| c.map(f64::exp)),
                area_min: pts.iter().map(|p| p.2).min().unwrap_or(0),
                area_max: pts.iter().map(|p| p.2).max().unwrap_or(0),
                points,
                beyond_budget: rs
                    .iter()
                    .filter(|r| pick(r).is_none())
                    .map(|r| format!("{}x{}", r.width, r.height))
                    .collect(),
            });
        }
    }
    out
}

const BEYOND: &str = "> budget";

fn fmt_opt(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map_or_else(|| BEYOND.to_string(), f)
}

/// `median [lo, hi]`, or just `> budget` when the interval lies beyond it too.
fn fmt_median(c: &Censored, f: fn(f64) -> String) -> String {
    if c.median().is_none() && c.median_ci[0].is_none() {
        return BEYOND.into();
    }
    format!("{} [{}, {}]", fmt_opt(c.median(), f), fmt_opt(c.median_ci[0], f), fmt_opt(c.median_ci[1], f))
}

/// `q1 – q3`.
fn fmt_iqr(c: &Censored, f: fn(f64) -> String) -> String {
    match c.quartiles[0] {
        None => BEYOND.into(),
        Some(q1) => format!("{} – {}", f(q1), fmt_opt(c.quartiles[2], f)),
    }
}

/// Each method's budgets per run, from the parameters of its records: its work caps, and
/// its time limits, listed when few and given as a range when many (a ladder under
/// `--deadline` cuts the time limit of each run it starts to end by then, so that a campaign
/// of many calls holds a different limit a call).
fn budgets(records: &[Record]) -> BTreeMap<String, String> {
    use std::collections::BTreeSet;
    /// Up to this many distinct time limits are listed one by one.
    const LISTED: usize = 3;
    let mut by: BTreeMap<String, (BTreeSet<String>, Vec<f64>)> = BTreeMap::new();
    for r in records {
        let e = by.entry(r.label.clone()).or_default();
        let caps: Vec<String> = ["max_iters", "max_nodes"]
            .iter()
            .filter_map(|k| r.params.get(*k).and_then(|v| v.as_u64()))
            .map(|n| format!("{n} {}", r.work_unit))
            .collect();
        if !caps.is_empty() {
            e.0.insert(caps.join(" or "));
        }
        if let Some(t) = r.params.get("time_limit").and_then(|v| v.as_f64()) {
            e.1.push(t);
        }
    }
    by.into_iter()
        .map(|(label, (caps, mut times))| {
            times.sort_by(f64::total_cmp);
            times.dedup();
            let time = match times.as_slice() {
                [] => None,
                [lo, .., hi] if times.len() > LISTED => Some(format!("{lo} s to {hi} s ({} time limits)", times.len())),
                t => Some(t.iter().map(|t| format!("{t} s")).collect::<Vec<_>>().join(", ")),
            };
            let caps = (!caps.is_empty()).then(|| caps.into_iter().collect::<Vec<_>>().join(", "));
            let parts: Vec<String> = caps.into_iter().chain(time).collect();
            (label, if parts.is_empty() { "none".into() } else { parts.join(" or ") })
        })
        .collect()
}

/// The file name of the run-time distribution plot of a size.
pub fn rtd_file(width: usize, height: usize) -> String {
    format!("rtd-{width}x{height}.svg")
}

/// The board sizes of the rows, by area then width.
fn sizes(rows: &[Row]) -> Vec<(usize, usize)> {
    let mut v: Vec<(usize, usize, usize)> = rows.iter().map(|r| (r.area, r.width, r.height)).collect();
    v.sort();
    v.dedup();
    v.into_iter().map(|(_, w, h)| (w, h)).collect()
}

/// The Markdown report: the table, the fits and links to the plots. `records` gives the
/// budgets; pass `&[]` to leave them out.
pub fn markdown(records: &[Record], rows: &[Row], fits: &[Fit]) -> String {
    let mut s = String::from("# Ladder report\n\n");
    let b = budgets(records);
    if !b.is_empty() {
        s.push_str("Budget per run: ");
        s.push_str(&b.iter().map(|(l, b)| format!("{l}: {b}")).collect::<Vec<_>>().join("; "));
        s.push_str(".\n\n");
    }
    s.push_str(&format!(
        "## Time and work to solution\n\n\
         A run that did not solve within its budget is kept as a right-censored observation at \
         the time and work it spent, not dropped. Medians and quartiles are Kaplan-Meier \
         estimates; \"{BEYOND}\" means the estimated fraction solved never reaches that level \
         within the budget, so the quantile lies beyond it. Brackets: 95% percentile-bootstrap \
         interval of the median ({RESAMPLES} resamples of the runs, seeded), an upper end \
         \"{BEYOND}\" when more than 2.5% of resamples solve fewer than half their runs. Solved: \
         the fraction solved within the budget with its 95% Wilson interval. Seconds are wall \
         clock on one core, the currency common to all methods; work is in each method's own \
         unit and does not compare across methods.\n\n"
    ));
    s.push_str(
        "| method | size | runs | solved within budget | median seconds [95% CI] | seconds q1 – q3 | median work [95% CI] | work q1 – q3 | work unit |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let ac = if r.solved_by_map_ac > 0 { format!(" ({} by map+ac)", r.solved_by_map_ac) } else { String::new() };
        s.push_str(&format!(
            "| {} | {}x{} | {} | {}/{} = {:.2} [{:.2}, {:.2}]{} | {} | {} | {} | {} | {} |\n",
            r.label,
            r.width,
            r.height,
            r.runs,
            r.solved,
            r.runs,
            r.solved_fraction,
            r.solved_ci[0],
            r.solved_ci[1],
            ac,
            fmt_median(&r.seconds, fmt_secs),
            fmt_iqr(&r.seconds, fmt_secs),
            fmt_median(&r.work, fmt_work),
            fmt_iqr(&r.work, fmt_work),
            r.work_unit,
        ));
    }
    pooled_table(&mut s, rows);
    pooled_figure_link(&mut s, rows);
    scores_table(&mut s, records, rows);
    if !fits.is_empty() {
        s.push_str(
            "\n## Growth with board area\n\n\
             Least squares of ln(Kaplan-Meier median) against board area, per method, over the \
             sizes whose median lies within the budget; growth = exp(slope), the factor per extra \
             cell, with the 95% t interval of the slope (from three sizes on; it reflects the \
             scatter of the medians about the line, not the sampling error of each median). Sizes \
             whose median lies beyond the budget cannot enter the fit and are listed: where they \
             are the largest sizes the fit describes only the sizes the method can do.\n\n\
             | method | quantity | growth per extra cell [95% CI] | ln median = a + b * area | areas fitted | sizes fitted | left out (median > budget) |\n\
             |---|---|---|---|---|---|---|\n",
        );
        for f in fits {
            let ci = f.growth_ci.map_or("".into(), |[lo, hi]| format!(" [x{lo:.3}, x{hi:.3}]"));
            let left = if f.beyond_budget.is_empty() { "none".into() } else { f.beyond_budget.join(", ") };
            s.push_str(&format!(
                "| {} | {} ({}) | x{:.3}{} | a = {:.2}, b = {:.4} | {}-{} | {} | {} |\n",
                f.label,
                f.quantity,
                f.unit,
                f.growth_per_cell,
                ci,
                f.intercept,
                f.slope,
                f.area_min,
                f.area_max,
                f.points,
                left
            ));
        }
    }
    let sz = sizes(rows);
    if !sz.is_empty() {
        s.push_str(
            "\n## Run-time distributions\n\n\
             Per board size, the Kaplan-Meier fraction of runs solved against seconds (log scale), \
             one step curve per method (Hoos and Stützle's run-time distributions); ticks mark \
             runs that stopped unsolved, the dashed line the time budget; a curve turns dotted \
             where fewer than 3 runs remain at risk.\n\n",
        );
        for (w, h) in sz {
            s.push_str(&format!("![run-time distributions, {w}x{h}]({})\n", rtd_file(w, h)));
        }
        s.push_str(
            "\nMedian seconds and work against board area, quartile band (open above where q3 lies \
             beyond the budget), sizes whose median lies within the budget: \
             ![seconds](seconds.svg) ![work](work.svg)\n",
        );
    }
    s
}

/// `mean [lo, hi]`, `> lo` without a solution.
fn fmt_pooled(p: &stats::Pooled, f: fn(f64) -> String) -> String {
    match (p.mean, p.ci) {
        (Some(m), [Some(lo), Some(hi)]) => format!("{} [{}, {}]", f(m), f(lo), f(hi)),
        (None, [Some(lo), _]) => format!("> {} (none solved)", f(lo)),
        _ => "-".into(),
    }
}

/// The best-scores section: for the sizes where some method left runs unsolved.
fn scores_table(s: &mut String, records: &[Record], rows: &[Row]) {
    let open: Vec<&Row> = rows.iter().filter(|r| r.solved < r.runs).collect();
    if open.is_empty() {
        return;
    }
    s.push_str(
        "\n## Best scores\n\n\
         Where runs ended unsolved, how close they came: the score of a run is the matched joins \
         of the best complete board it produced (hints in place), recomputed by the exact \
         verifier; a tree search that completes no board scores 0. Per method and size: the \
         mean over the runs, the best run, and the quartiles.\n\n\
         | method | size | runs | solved | mean best score | best | q1 – median – q3 | of |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let open_sizes: Vec<(usize, usize)> = {
        let mut v: Vec<(usize, usize, usize)> = open.iter().map(|r| (r.area, r.width, r.height)).collect();
        v.sort();
        v.dedup();
        v.into_iter()
            .map(|(_, w, h)| (w, h))
            .filter(|&(w, h)| records.iter().any(|x| (x.width, x.height) == (w, h) && !x.trace.is_empty()))
            .collect()
    };
    for r in open {
        let [q1, q2, q3] = r.scores.quartiles;
        s.push_str(&format!(
            "| {} | {}x{} | {} | {} | {:.1} | {} | {q1:.1} – {q2:.1} – {q3:.1} | {} |\n",
            r.label, r.width, r.height, r.runs, r.solved, r.scores.mean, r.scores.best, r.scores.max_score
        ));
    }
    if !open_sizes.is_empty() {
        s.push_str(
            "\nThe best score reached against time (mean over runs, from each run's trace of new \
             bests; sizes whose runs carry traces):\n\n",
        );
    }
    for (w, h) in open_sizes {
        s.push_str(&format!("![best score against time, {w}x{h}]({})\n", scores_file(w, h)));
    }
}

/// The pooled-rates section of the report.
fn pooled_table(s: &mut String, rows: &[Row]) {
    if rows.is_empty() {
        return;
    }
    s.push_str(&format!(
        "\n## Pooled rates\n\n\
         For a method whose run lengths are memoryless, a run's budget does not matter, only the \
         total spent: the censored exponential maximum-likelihood estimate of the mean work (and \
         core-seconds) per solution is the total over all runs, solved or not, divided by the \
         solutions. Brackets: its exact 95% interval, [2T / chi2(0.975; 2d+2), 2T / chi2(0.025; \
         2d)]; with no solution, the one-sided 95% lower bound T / ln 20. Memoryless: the \
         Kolmogorov-Smirnov distance between the Kaplan-Meier curve of work and the fitted \
         exponential, with a parametric-bootstrap p-value ({RESAMPLES} samples censored as the \
         runs were), from {} solutions on; **not memoryless** (p < 0.05) marks a row whose \
         pooled rate misleads (read its Kaplan-Meier columns instead). Core-seconds are wall \
         clock, one core per run, and carry the machine's load; work does not.\n\n\
         | method | size | runs | solutions | work per solution [95% CI] | core-seconds per solution [95% CI] | total core-hours | memoryless (KS, p) | work unit |\n\
         |---|---|---|---|---|---|---|---|---|\n",
        stats::MIN_SOLUTIONS_FOR_FIT
    ));
    for r in rows {
        let fit = match r.memoryless {
            None => "-".to_string(),
            Some(f) if f.rejected => format!("**not memoryless** ({:.3}, p = {:.3})", f.ks, f.p_value),
            Some(f) => format!("yes ({:.3}, p = {:.2})", f.ks, f.p_value),
        };
        s.push_str(&format!(
            "| {} | {}x{} | {} | {} | {} | {} | {:.2} | {} | {} |\n",
            r.label,
            r.width,
            r.height,
            r.runs,
            r.pooled_work.solutions,
            fmt_pooled(&r.pooled_work, fmt_work),
            fmt_pooled(&r.pooled_seconds, fmt_secs),
            r.pooled_seconds.total / 3600.0,
            fit,
            r.work_unit
        ));
    }
}

/// The file of the pooled figure.
pub const POOLED_FILE: &str = "pooled.svg";

/// The sizes the pooled figure draws: from half the largest area measured up, where the
/// growth with size shows (the smallest boards are dominated by fixed costs).
pub fn pooled_areas(rows: &[Row]) -> Vec<usize> {
    let max = rows.iter().map(|r| r.area).max().unwrap_or(0);
    let mut v: Vec<usize> = rows.iter().map(|r| r.area).filter(|&a| 2 * a >= max).collect();
    v.sort();
    v.dedup();
    v
}

/// The pooled figure (`pooled.svg`): per method, core-seconds per solution and work per
/// solution against the board's cells, from the pooled rates ([`Row::pooled_seconds`],
/// [`Row::pooled_work`]) at the sizes of [`pooled_areas`]: the mean with its exact 95%
/// interval, or the one-sided bound where nothing solved.
pub fn pooled_figure(rows: &[Row]) -> String {
    let labels: Vec<&str> = {
        let mut l: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        l.dedup();
        l
    };
    let areas = pooled_areas(rows);
    let series = |secs: bool| -> Vec<PooledSeries> {
        let mut by: BTreeMap<&str, Vec<PooledPoint>> = BTreeMap::new();
        for r in rows.iter().filter(|r| areas.contains(&r.area)) {
            let p = if secs { &r.pooled_seconds } else { &r.pooled_work };
            by.entry(&r.label).or_default().push(PooledPoint {
                x: r.area as f64,
                mean: p.mean,
                lo: p.ci[0],
                hi: p.ci[1],
            });
        }
        by.into_iter()
            .map(|(l, points)| PooledSeries {
                name: l.to_string(),
                color: labels.iter().position(|x| *x == l).unwrap_or(0),
                points,
            })
            .collect()
    };
    let (secs, work) = (series(true), series(false));
    pooled_plot(
        "Cost per solution against board size, every run pooled (censored exponential, 95%)",
        &[
            Panel {
                title: "core-seconds per solution",
                ylabel: "core-seconds per solution (log)",
                seconds: true,
                series: &secs,
            },
            Panel {
                title: "work per solution, in each method's own unit (iterations or nodes)",
                ylabel: "work per solution (log)",
                seconds: false,
                series: &work,
            },
        ],
    )
}

/// The report's line under the pooled table that shows the pooled figure.
fn pooled_figure_link(s: &mut String, rows: &[Row]) {
    if rows.is_empty() {
        return;
    }
    let areas: Vec<String> = pooled_areas(rows).iter().map(|a| a.to_string()).collect();
    s.push_str(&format!(
        "\nThe pooled rates against the board's cells ({} cells), filled: the mean with its 95% \
         interval; open with an arrow: none solved, the one-sided bound: ![pooled]({POOLED_FILE})\n",
        areas.join(", ")
    ));
}

/// What `concur report` wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Written {
    /// Records merged.
    pub records: usize,
    /// The Markdown report (also in `report.md`).
    #[serde(skip)]
    pub markdown: String,
    /// The table: one row per (method, size).
    pub rows: Vec<Row>,
    /// The growth fits, per method and quantity.
    pub fits: Vec<Fit>,
    /// Every file written, `summary.json` last.
    pub files: Vec<PathBuf>,
    /// Work per solution by machine ([`devices`]).
    pub devices: Vec<devices::Pooling>,
    /// The map against instance hardness ([`hardness`]); absent when the records hold
    /// fewer than three instances run by both a map and the scan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardness_fit: Option<hardness::Summary>,
    /// Its per-instance pooled rates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardness_instances: Option<Vec<hardness::Instance>>,
    /// Single trials' run lengths and their Weibull fits, per instance and method
    /// ([`runtimes`]); empty when the records hold none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub run_lengths: Vec<runtimes::RunLengths>,
    /// One Weibull shape per method over its instances ([`runtimes::common_shapes`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub run_length_shapes: Vec<runtimes::CommonShape>,
}

/// The run-time distribution plots, one per board size: `(file name, SVG)`.
pub fn rtd_plots(records: &[Record], rows: &[Row]) -> Vec<(String, String)> {
    let labels: Vec<&str> = {
        let mut l: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        l.dedup();
        l
    };
    sizes(rows)
        .into_iter()
        .map(|(w, h)| {
            let mut budget: Option<f64> = None;
            let curves: Vec<Curve> = rows
                .iter()
                .filter(|r| (r.width, r.height) == (w, h))
                .map(|r| {
                    let obs: Vec<(f64, bool)> = records
                        .iter()
                        .filter(|x| x.label == r.label && (x.width, x.height) == (w, h) && x.solutions.is_none())
                        .map(|x| (x.wall_s, x.solved))
                        .collect();
                    let km = KaplanMeier::new(&obs);
                    budget = match (budget, r.time_limit_s) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                    Curve {
                        name: format!("{} ({}/{})", r.label, r.solved, r.runs),
                        color: labels.iter().position(|l| *l == r.label).unwrap_or(0),
                        steps: km.steps().iter().map(|&(t, s)| (t, 1.0 - s)).collect(),
                        censored: km.censored().to_vec(),
                        end: km.end(),
                        sparse_from: sparse_from(&obs.iter().map(|o| o.0).collect::<Vec<_>>()),
                    }
                })
                .collect();
            let title = format!("Run-time distributions, {w}x{h}: fraction of runs solved by time t");
            (rtd_file(w, h), rtd_plot(&title, &curves, budget))
        })
        .collect()
}

/// The file name of the score plot of a size.
pub fn scores_file(width: usize, height: usize) -> String {
    format!("scores-{width}x{height}.svg")
}

/// The best score reached against time, one plot per size where runs ended unsolved and
/// carry traces: per method, the mean over its runs of each run's best score so far (a run
/// that has ended keeps its final best), from the runs' traces.
pub fn score_plots(records: &[Record], rows: &[Row]) -> Vec<(String, String)> {
    let labels: Vec<&str> = {
        let mut l: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        l.dedup();
        l
    };
    let mut out = Vec::new();
    for (w, h) in sizes(rows) {
        let here: Vec<&Row> = rows.iter().filter(|r| (r.width, r.height) == (w, h)).collect();
        if here.iter().all(|r| r.solved == r.runs) {
            continue;
        }
        let mut curves = Vec::new();
        let mut lo = f64::INFINITY;
        let mut budget: Option<f64> = None;
        for r in &here {
            let runs: Vec<&Record> = records
                .iter()
                .filter(|x| x.label == r.label && (x.width, x.height) == (w, h) && !x.trace.is_empty())
                .collect();
            if runs.is_empty() {
                continue;
            }
            budget = match (budget, r.time_limit_s) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            let mut times: Vec<f64> = runs.iter().flat_map(|x| x.trace.iter().map(|t| t.0)).collect();
            times.sort_by(|a, b| a.total_cmp(b));
            times.dedup();
            let at = |x: &Record, t: f64| {
                x.trace.iter().take_while(|p| p.0 <= t).last().map_or(x.trace[0].1, |p| p.1) as f64
            };
            let steps: Vec<(f64, f64)> = times
                .iter()
                .map(|&t| (t.max(1e-6), runs.iter().map(|x| at(x, t)).sum::<f64>() / runs.len() as f64))
                .collect();
            lo = lo.min(steps.first().map_or(f64::INFINITY, |s| s.1));
            curves.push(Curve {
                name: format!("{} ({} runs)", r.label, runs.len()),
                color: labels.iter().position(|l| *l == r.label).unwrap_or(0),
                steps,
                censored: Vec::new(),
                end: runs.iter().map(|x| x.wall_s).fold(0.0, f64::max),
                sparse_from: f64::INFINITY,
            });
        }
        if curves.is_empty() {
            continue;
        }
        let max = here.iter().map(|r| r.scores.max_score).max().unwrap_or(0) as f64;
        let lo = (lo / 10.0).floor() * 10.0;
        let y = svg::YAxis { lo: lo.min(max - 1.0), hi: max, label: "mean best score (matched joins)", decimals: 0 };
        let title = format!("Best score against time, {w}x{h} (of {max}), mean over runs");
        out.push((scores_file(w, h), svg::step_plot(&title, &curves, budget, &y)));
    }
    out
}

/// Merges `inputs` and writes `report.md`, `pooled.svg`, `seconds.svg`, `work.svg`, one
/// `rtd-WxH.svg` per board size and `summary.json` into `out`; where the records hold a map and
/// the scan on three or more common instances, also `hardness.svg` and the section on work per
/// solution against hardness ([`hardness`], with the optional inputs of the folders'
/// `hardness-inputs/`).
pub fn write(inputs: &[PathBuf], out: &Path) -> Result<Written> {
    let records = merge(inputs)?;
    if records.is_empty() {
        return Err(Error::results("no result lines found"));
    }
    // The table, its fits and the run-time distributions assume each run's whole budget: a run
    // still cut short (a part not yet continued) is left out of them; the pooled rates count
    // its exposure.
    let whole: Vec<Record> = records.iter().filter(|r| r.is_whole()).cloned().collect();
    let rows = summarize(&whole);
    let fits = fit(&rows);
    std::fs::create_dir_all(out).map_err(|e| Error::io("create", out, e))?;
    let series = |secs: bool| -> Vec<Series> {
        let mut by: BTreeMap<&str, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
        let mut units: BTreeMap<&str, &str> = BTreeMap::new();
        for r in &rows {
            units.insert(&r.label, &r.work_unit);
            let c = if secs { &r.seconds } else { &r.work };
            if let [Some(q1), Some(m), q3] = c.quartiles {
                by.entry(&r.label).or_default().push((r.area as f64, m, q1, q3.unwrap_or(f64::INFINITY)));
            }
        }
        by.into_iter()
            .map(|(l, points)| Series {
                name: if secs { l.to_string() } else { format!("{l} ({})", units[l]) },
                points,
            })
            .collect()
    };
    let pools = devices::pool(&records);
    let inputs = hardness::read_inputs(inputs)
        .map_err(|e| Error::Hardness { path: e.path().to_string(), reason: e.to_string() })?;
    let hard = hardness::analyse(&records, inputs, &hardness::Options::default());
    let run_lengths = runtimes::run_lengths(&records);
    let md = markdown(&whole, &rows, &fits)
        + &machines_markdown(&records)
        + &devices::markdown(&pools)
        + &hard.as_ref().map_or_else(String::new, hardness::markdown)
        + &runtimes::markdown(&run_lengths);
    let w = |p: &Path, s: &str| std::fs::write(p, s).map_err(|e| Error::io("write", p, e));
    let mut files = Vec::new();
    let mut put = |name: &str, s: &str| -> Result<()> {
        let p = out.join(name);
        w(&p, s)?;
        files.push(p);
        Ok(())
    };
    put("report.md", &md)?;
    if let Some(svg) = runtimes::figure(&run_lengths) {
        put(runtimes::FIGURE, &svg)?;
    }
    put(POOLED_FILE, &pooled_figure(&rows))?;
    put(
        "seconds.svg",
        &log_plot(
            "Seconds to solution vs board area (Kaplan-Meier median, quartile band)",
            "board area (cells)",
            "seconds",
            &series(true),
        ),
    )?;
    put(
        "work.svg",
        &log_plot(
            "Work to solution vs board area (Kaplan-Meier median, quartile band)",
            "board area (cells)",
            "work (each method's unit)",
            &series(false),
        ),
    )?;
    for (name, svg) in rtd_plots(&whole, &rows) {
        put(&name, &svg)?;
    }
    for (name, svg) in score_plots(&whole, &rows) {
        put(&name, &svg)?;
    }
    if let Some(h) = &hard {
        put(hardness::FIGURE_FILE, &hardness::figure(h))?;
    }
    files.push(out.join("summary.json"));
    let (hardness_fit, hardness_instances) = match hard {
        Some(h) => (Some(h.summary), Some(h.instances.into_iter().filter(|i| i.common()).collect())),
        None => (None, None),
    };
    let written = Written {
        records: records.len(),
        markdown: md,
        rows,
        fits,
        files,
        devices: pools,
        hardness_fit,
        hardness_instances,
        run_length_shapes: runtimes::common_shapes(&run_lengths),
        run_lengths,
    };
    w(written.files.last().expect("summary"), &serde_json::to_string_pretty(&written).expect("plain data"))?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_are_listed_and_mixed_cpu_models_warned() {
        let on = |r: Record, host: &str, cpu: &str| Record {
            provenance: Some(crate::ladder::Provenance {
                host: host.into(),
                cpu: cpu.into(),
                threads: 1,
                ..Default::default()
            }),
            ..r
        };
        let one = vec![
            on(rec("rrr", 5, 5, 0, true, 1.0, 10), "a", "Xeon"),
            on(rec("rrr", 5, 5, 1, true, 1.0, 10), "b", "Xeon"),
        ];
        let md = machines_markdown(&one);
        assert!(md.contains("| rrr | Xeon | a, b | 2 |"), "{md}");
        assert!(!md.contains("Warning"), "{md}");
        let mut mixed = one.clone();
        mixed.push(on(rec("rrr", 5, 5, 2, true, 1.0, 10), "c", "EPYC"));
        mixed.push(on(rec("scan", 5, 5, 0, true, 1.0, 10), "c", "EPYC"));
        let md = machines_markdown(&mixed);
        assert!(md.contains("the CPU runs of rrr mix 2 CPU models (EPYC; Xeon)"), "{md}");
        assert!(!md.contains("runs of scan mix"), "{md}");
        assert_eq!(machines_markdown(&[rec("rrr", 5, 5, 0, true, 1.0, 10)]), "", "no provenance, no section");
    }

    #[test]
    fn a_runs_parts_are_joined_and_a_run_still_cut_short_leaves_the_per_budget_table() {
        let part = |r: Record, part: u32, why: Option<&str>| Record {
            part: Some(part),
            interrupted: why.map(String::from),
            ..r
        };
        let dir = std::env::temp_dir().join(format!("concur-report-parts-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let lines = [
            part(rec("rrr", 5, 5, 0, false, 2.0, 100), 1, Some("SIGTERM")),
            part(rec("rrr", 5, 5, 0, true, 1.0, 30), 2, None),
            rec("rrr", 5, 5, 1, true, 1.0, 50),
            part(rec("rrr", 5, 5, 2, false, 4.0, 70), 1, Some("SIGUSR1")),
        ];
        let text: String = lines.iter().map(|r| serde_json::to_string(r).unwrap() + "\n").collect();
        std::fs::write(dir.join("results.jsonl"), text).unwrap();
        let merged = merge(std::slice::from_ref(&dir)).unwrap();
        assert_eq!(merged.len(), 3, "{merged:?}");
        let run0 = merged.iter().find(|r| r.run == 0).unwrap();
        assert_eq!((run0.work, run0.wall_s, run0.solved, run0.part), (130, 3.0, true, Some(2)));
        assert!(run0.is_whole());
        assert!(!merged.iter().find(|r| r.run == 2).unwrap().is_whole());
        let w = write(std::slice::from_ref(&dir), &dir.join("report")).unwrap();
        assert_eq!(w.records, 3);
        assert_eq!(w.rows[0].runs, 2, "the run still cut short is not a run of its budget: {:?}", w.rows[0]);
    }

    /// A record of `label` on a `w` x `h` board: solved in `secs` or censored there.
    fn rec(label: &str, w: usize, h: usize, run: u64, solved: bool, secs: f64, work: u64) -> Record {
        Record {
            instance: format!("i{w}x{h}"),
            width: w,
            height: h,
            colors: 4,
            method: concur::method::MethodName::Rrr,
            label: label.into(),
            params: serde_json::json!({"time_limit": 10.0, "max_iters": 1000000}),
            run,
            seed: run,
            backend: "cpu".into(),
            solved,
            mechanism: solved.then(|| "map".into()),
            work,
            work_unit: "iterations".into(),
            wall_s: secs,
            best_score: 0,
            max_score: 1,
            version: "0".into(),
            trace: Vec::new(),
            solutions: None,
            distinct_solutions: None,
            trials: None,
            device: None,
            ..Record::default()
        }
    }

    /// The budget line keeps a method's work caps and time limits apart, lists a few time
    /// limits (a ladder's per-size budgets) and gives many (a deadline's cuts, one a call) as
    /// a range, not one entry each.
    #[test]
    fn the_budget_line_gives_many_time_limits_as_a_range() {
        let with = |label: &str, run: u64, params: serde_json::Value| Record {
            params,
            ..rec(label, 5, 5, run, false, 1.0, 1)
        };
        let mut rs: Vec<Record> = (0..40)
            .map(|i| with("rrr", i, serde_json::json!({"max_iters": 200000, "time_limit": 100.0 + i as f64})))
            .collect();
        rs.push(with("rrr", 40, serde_json::json!({"max_iters": 200000})));
        rs.extend(
            [5.0, 10.0, 5.0]
                .iter()
                .enumerate()
                .map(|(i, &t)| with("dm", i as u64, serde_json::json!({"time_limit": t}))),
        );
        rs.push(with("hill", 0, serde_json::json!({})));
        let b = budgets(&rs);
        assert_eq!(b["rrr"], "200000 iterations or 100 s to 139 s (40 time limits)");
        assert_eq!(b["dm"], "5 s, 10 s");
        assert_eq!(b["hill"], "none");
        assert_eq!(budgets(&[rec("one", 5, 5, 0, true, 1.0, 1)])["one"], "1000000 iterations or 10 s");
        assert!(
            markdown(&rs, &[], &[]).contains("Budget per run: dm: 5 s, 10 s; hill: none; rrr: 200000 iterations or ")
        );
    }

    #[test]
    fn quartiles_interpolate() {
        assert_eq!(quartiles(&mut [4.0, 1.0, 3.0, 2.0, 5.0]), Some([2.0, 3.0, 4.0]));
        assert_eq!(quartiles(&mut []), None);
    }

    /// The survivor bias of the issue: a method that solves 1 run in 5 has no median.
    #[test]
    fn pooled_rates_pool_every_run_and_bound_the_unsolved() {
        // 2 solutions in 100 + 300 + 4 * 1000 iterations; seconds alike.
        let mut rs = vec![rec("map", 8, 7, 0, true, 1.0, 100), rec("map", 8, 7, 1, true, 3.0, 300)];
        rs.extend((2..6).map(|i| rec("map", 8, 7, i, false, 10.0, 1000)));
        rs.extend((0..3).map(|i| rec("none", 8, 7, i, false, 10.0, 1000)));
        let rows = summarize(&rs);
        let (map, none) = (&rows[0], &rows[1]);
        assert_eq!((map.pooled_work.solutions, map.pooled_work.total), (2, 4400.0));
        assert_eq!(map.pooled_work.mean, Some(2200.0));
        assert_eq!(map.pooled_seconds.mean, Some(22.0));
        assert_eq!(map.memoryless, None, "2 solutions are too few for the check");
        assert_eq!(none.pooled_work.mean, None);
        assert!((none.pooled_seconds.ci[0].unwrap() / (30.0 / 20f64.ln()) - 1.0).abs() < 1e-8);
        let md = markdown(&rs, &rows, &[]);
        assert!(md.contains("## Pooled rates"), "{md}");
        assert!(md.contains("| none | 8x7 | 3 | 0 | > 1001 (none solved) | > 10.0 (none solved) |"), "{md}");
        // A solved run is censored where its budget would have cut it: its time limit at its
        // own rate (10 s at 100 it/s: 1,000), capped by max_iters.
        assert_eq!(censor_work(&rs[0]), 1000.0);
        assert_eq!(censor_work(&rs[2]), 1000.0);
    }

    #[test]
    fn best_scores_give_mean_best_and_quartiles_where_runs_end_unsolved() {
        let mut rs: Vec<Record> = [3, 7, 5, 9]
            .iter()
            .enumerate()
            .map(|(i, &sc)| {
                let mut r = rec("map", 16, 16, i as u64, false, 60.0, 1000);
                (r.best_score, r.max_score) = (sc, 480);
                r
            })
            .collect();
        rs.push(rec("solver", 16, 16, 0, true, 1.0, 10));
        let rows = summarize(&rs);
        let s = &rows[0].scores;
        assert_eq!((s.best, s.max_score), (9, 480));
        assert!((s.mean - 6.0).abs() < 1e-12);
        assert_eq!(s.quartiles, [4.5, 6.0, 7.5]);
        let md = markdown(&rs, &rows, &[]);
        assert!(md.contains("| map | 16x16 | 4 | 0 | 6.0 | 9 | 4.5 – 6.0 – 7.5 | 480 |"), "{md}");
        // Traces give a score plot: the mean of the runs' best scores so far.
        assert!(!md.contains("scores-16x16.svg"), "no run carries a trace yet");
        for (i, r) in rs.iter_mut().take(2).enumerate() {
            r.trace = vec![(0.001, 1), (0.5 + i as f64, r.best_score)];
        }
        let plots = score_plots(&rs, &rows);
        assert_eq!(plots.len(), 1);
        assert_eq!(plots[0].0, "scores-16x16.svg");
        assert!(plots[0].1.contains("<polyline") && plots[0].1.contains("mean best score"), "{}", plots[0].1);
        assert!(markdown(&rs, &rows, &[]).contains("![best score against time, 16x16](scores-16x16.svg)"));
        let section = md.split("## Best scores").nth(1).unwrap().split("\n## ").next().unwrap();
        assert!(!section.contains("| solver |"), "a method that solved every run has no row: {section}");
    }

    #[test]
    fn unsolved_runs_are_censored_not_dropped() {
        let mut rs = vec![rec("lucky", 7, 7, 0, true, 1.0, 100)];
        rs.extend((1..5).map(|i| rec("lucky", 7, 7, i, false, 10.0, 1000)));
        // 3 of 5: the median is the third solve, q3 lies beyond the budget.
        for (i, t) in [2.0, 3.0, 4.0].into_iter().enumerate() {
            rs.push(rec("steady", 7, 7, i as u64, true, t, 10 * t as u64));
        }
        rs.extend((3..5).map(|i| rec("steady", 7, 7, i, false, 10.0, 100)));
        let rows = summarize(&rs);
        let (lucky, steady) = (&rows[0], &rows[1]);
        assert_eq!((lucky.label.as_str(), lucky.solved, lucky.runs), ("lucky", 1, 5));
        assert_eq!(lucky.seconds.quartiles, [None, None, None]);
        // One resample in about 17 holds the solve three times or more: the interval's lower
        // end is that solve, its upper end beyond the budget.
        assert_eq!(lucky.seconds.median_ci, [Some(1.0), None]);
        assert_eq!(lucky.work.quartiles, [None, None, None]);
        assert!((lucky.solved_fraction - 0.2).abs() < 1e-12);
        assert_eq!(lucky.time_limit_s, Some(10.0));
        assert_eq!(steady.seconds.quartiles, [Some(3.0), Some(4.0), None]);
        assert_eq!(steady.work.quartiles, [Some(30.0), Some(40.0), None]);
        assert_eq!(steady.seconds.median_ci[1], None, "3 of 5 leaves the interval open above");
        let [lo, hi] = steady.solved_ci;
        assert!(lo < 0.6 && 0.6 < hi);
        let md = markdown(&rs, &rows, &[]);
        assert!(md.contains("| lucky | 7x7 | 5 | 1/5 = 0.20 [0.04, 0.62] | > budget [1.00, > budget] | > budget | > budget [100, > budget] | > budget |"), "{md}");
        assert!(
            md.contains("| steady | 7x7 | 5 | 3/5 = 0.60 [0.23, 0.88] | 4.00 [2.00, > budget] | 3.00 – > budget |"),
            "{md}"
        );
        assert!(md.contains("lucky: 1000000 iterations or 10 s"), "{md}");
    }

    #[test]
    fn the_bootstrap_is_deterministic() {
        let rs: Vec<Record> = (0..20).map(|i| rec("m", 4, 4, i, i % 3 != 0, 0.1 * (i + 1) as f64, i + 1)).collect();
        let (a, b) = (summarize(&rs), summarize(&rs));
        assert_eq!(a[0].seconds, b[0].seconds);
        assert_eq!(a[0].work, b[0].work);
        let [lo, hi] = a[0].seconds.median_ci;
        let m = a[0].seconds.median().unwrap();
        assert!(lo.unwrap() <= m && m <= hi.unwrap());
    }

    #[test]
    fn fit_recovers_a_planted_exponential_and_leaves_out_sizes_beyond_budget() {
        // Every run of a size takes exactly e^(0.5 + 0.1 area) s and 2 e^(1 + 0.2 area)
        // iterations; at 7x7 none solves.
        let mut rs = Vec::new();
        for (w, h) in [(3, 3), (4, 4), (5, 5), (6, 6)] {
            let a = (w * h) as f64;
            for run in 0..3 {
                rs.push(rec("m", w, h, run, true, (0.5 + 0.1 * a).exp(), (2.0 * (1.0 + 0.2 * a).exp()).round() as u64));
            }
        }
        rs.extend((0..3).map(|run| rec("m", 7, 7, run, false, 10.0, 5)));
        let rows = summarize(&rs);
        let fits = fit(&rows);
        assert_eq!(fits.len(), 2);
        let s = &fits[0];
        assert_eq!((s.quantity.as_str(), s.unit.as_str()), ("seconds", "s"));
        assert!((s.slope - 0.1).abs() < 1e-9 && (s.intercept - 0.5).abs() < 1e-9, "{s:?}");
        assert!((s.growth_per_cell - 0.1f64.exp()).abs() < 1e-9);
        let [lo, hi] = s.growth_ci.unwrap();
        assert!(lo <= s.growth_per_cell && s.growth_per_cell <= hi && hi - lo < 1e-6);
        assert_eq!((s.area_min, s.area_max, s.points), (9, 36, 4));
        assert_eq!(s.beyond_budget, vec!["7x7".to_string()]);
        let w = &fits[1];
        assert_eq!((w.quantity.as_str(), w.unit.as_str()), ("work", "iterations"));
        assert!((w.slope - 0.2).abs() < 1e-3, "{w:?}");
        assert!((w.intercept - (1.0 + 2f64.ln())).abs() < 1e-2, "{w:?}");
        let md = markdown(&rs, &rows, &fits);
        assert!(md.contains("| m | seconds (s) | x1.105 [x1.105, x1.105] |"), "{md}");
        assert!(md.contains("| 9-36 | 4 | 7x7 |"), "{md}");
    }

    #[test]
    fn rtd_plots_have_one_file_per_size_and_legends_inside_the_canvas() {
        let mut rs = Vec::new();
        for run in 0..5 {
            rs.push(rec(
                "backtrack ac4 with a long label",
                7,
                6,
                run,
                run < 3,
                if run < 3 { 1.0 + run as f64 } else { 10.0 },
                9,
            ));
            rs.push(rec("rrr", 7, 6, run, true, 0.01 * (run + 1) as f64, 9));
            rs.push(rec("rrr", 3, 3, run, true, 1e-5 * (run + 1) as f64, 9));
        }
        let rows = summarize(&rs);
        let plots = rtd_plots(&rs, &rows);
        let names: Vec<&str> = plots.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(names, ["rtd-3x3.svg", "rtd-7x6.svg"]);
        let svg = &plots[1].1;
        let width: f64 = svg.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        let label = "backtrack ac4 with a long label (3/5)";
        let at = svg.find(&format!(">{label}<")).expect("legend entry");
        let x: f64 = svg[..at].rsplit("x=\"").next().unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(x + svg::text_width(label) <= width, "{x} + text > {width}");
        assert!(svg.contains("stroke-dasharray"), "the budget line");
        assert!(svg.contains(">10 s<") && svg.contains(">10 ms<"), "decade labels");
    }

    #[test]
    fn the_pooled_figure_draws_bounds_as_open_markers_and_ticks_only_the_measured_sizes() {
        let mut rs = Vec::new();
        for run in 0..6 {
            for (w, h) in [(6, 6), (7, 7), (8, 7), (8, 8)] {
                let t = 0.01 * (w * h) as f64 * (run + 1) as f64;
                rs.push(rec("scan", w, h, run, true, t, 100 * (w * h) as u64));
                // The map solves up to 8x7 and nothing at 8x8.
                let solved = (w, h) != (8, 8) && run % 2 == 0;
                rs.push(rec("rrr", w, h, run, solved, if solved { t } else { 50.0 }, 1000));
            }
            rs.push(rec("rrr", 3, 3, run, true, 1e-4, 5)); // below half the largest area: left out
        }
        let rows = summarize(&rs);
        assert_eq!(pooled_areas(&rows), [36, 49, 56, 64]);
        let svg = pooled_figure(&rows);
        // Two panels, each with the four measured sizes as ticks and no even steps between.
        for a in ["36", "49", "56", "64"] {
            assert_eq!(svg.matches(&format!(">{a}</text>")).count(), 2, "tick {a}");
        }
        for a in ["9", "40", "45", "50", "55", "60"] {
            assert!(!svg.contains(&format!(">{a}</text>")), "no tick at {a}");
        }
        // The map's 8x8 is a one-sided bound: an open marker (a white ring in its colour) with an
        // arrow, once per panel, plus the legend's example; the scan's points are filled.
        let rrr = svg::PALETTE[0];
        let rings = svg.matches(&format!(r#"fill="white" stroke="{rrr}""#)).count();
        assert_eq!(rings, 2, "the map's bound in both panels");
        assert_eq!(svg.matches(r##"fill="white" stroke="#555555""##).count(), 1, "the legend's open marker");
        assert!(svg.contains("none solved: 95% lower bound"));
        // The bound is T / ln 20 of what the map spent (6 runs of 50 s).
        let map64 = rows.iter().find(|r| r.label == "rrr" && r.area == 64).unwrap();
        assert_eq!(map64.pooled_seconds.mean, None);
        let bound = map64.pooled_seconds.ci[0].unwrap();
        assert!((bound / (300.0 / 20f64.ln()) - 1.0).abs() < 1e-6, "{bound}");
    }

    #[test]
    fn a_run_time_distribution_turns_dotted_where_fewer_than_three_runs_remain_at_risk() {
        use svg::{SPARSE_NOTE, sparse_from};
        assert_eq!(sparse_from(&[5.0, 1.0, 3.0, 9.0]), 3.0);
        assert_eq!(sparse_from(&[5.0, 1.0]), 0.0);
        // Seven runs censored at 10 s and a last one solved at 30 s: one run at risk when it
        // solves, so its step to 1.0 must be drawn dotted, not solid.
        let mut rs: Vec<Record> = (0..7).map(|run| rec("scan", 8, 8, run, false, 10.0, 9)).collect();
        rs.push(rec("scan", 8, 8, 7, true, 30.0, 9));
        let rows = summarize(&rs);
        let plots = rtd_plots(&rs, &rows);
        let svg = &plots[0].1;
        assert!(svg.contains(r#"stroke-dasharray="2 3""#) && svg.contains(SPARSE_NOTE), "dotted tail");
        let solid = svg.lines().find(|l| l.starts_with("<polyline") && !l.contains("dasharray")).unwrap();
        // The solid curve stays at 0 (the plot's bottom): no step to 1.0 on it.
        let ys: Vec<f64> = solid
            .split(' ')
            .filter_map(|p| p.split(',').nth(1))
            .filter_map(|y| y.trim_matches('"').parse::<f64>().ok())
            .collect();
        assert!(ys.len() >= 2 && ys.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-9), "solid curve flat: {solid}");
        // With at least three at risk at every solve and to the end, nothing is dotted.
        let rs: Vec<Record> = (0..8)
            .map(|run| rec("scan", 8, 8, run, run < 4, if run < 4 { 1.0 + run as f64 } else { 10.0 }, 9))
            .collect();
        let svg = &rtd_plots(&rs, &summarize(&rs))[0].1;
        assert!(!svg.contains(r#"stroke-dasharray="2 3""#) && !svg.contains(SPARSE_NOTE));
    }
}
