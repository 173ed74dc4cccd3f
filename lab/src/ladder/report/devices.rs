//! Runs on several machines in one report: work per solution pooled over every run of one
//! method and size, on CPU cores and GPU devices alike, with each machine's measured rate
//! kept apart, a flag where two machines disagree on the work per solution (then they are
//! not pooled), and the wall-clock seconds per solution on each machine.
//!
//! Work units are the currency: a map's trial-iterations per solution, a tree search's
//! nodes per solution, are properties of the search, not of the machine, where the search is
//! the same. A machine turns them into seconds by its rate. So, per (method, size):
//! - each machine's runs (a GPU adapter's, or one CPU machine's, whose ladder runs each hold
//!   one core) give its pooled work per solution ([`stats::pooled_counts`], every run's work,
//!   solved or not, over its solutions; rate-mode runs count every solution they found) and
//!   its rate, total work / total wall seconds (per device, or per core);
//! - two machines are compared on the instances both ran, each instance a stratum of its own
//!   ([`stats::stratified_rate_test`]): a campaign may give one machine its hardest instances
//!   only, and the work per solution of a size then differs by the mix, not the machine. They
//!   **disagree** when that exact test rejects the same rate at 1 %, and are **apart** when no
//!   instance ran on both (they cannot be compared); either way nothing is pooled, and each
//!   machine's seconds come from its own work per solution;
//! - otherwise the work per solution is pooled over all of them, and the seconds per solution
//!   on a machine are the pooled work per solution divided by its rate, the interval divided
//!   alike. The rate is taken as known: its own spread (the load of the machine) is not in
//!   the interval.

use super::stats::{self, Pooled};
use crate::ladder::run::Record;
use std::collections::BTreeMap;

/// What one machine's runs of a (method, size) say.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Machine {
    /// A GPU adapter, a CPU machine (the ladder's `machine`), or the backend's kind ("cpu")
    /// for records that name none.
    pub name: String,
    /// `device` (a GPU run uses the whole device) or `core` (a CPU ladder run, one core).
    pub per: String,
    /// Its runs.
    pub runs: usize,
    /// Its own pooled work per solution.
    pub work: Pooled,
    /// Total wall seconds of its runs.
    pub total_s: f64,
    /// The measured rate: total work / total wall seconds (per device or per core).
    pub rate: Option<f64>,
    /// Wall-clock seconds per solution on one device or one core of this machine: the work
    /// per solution used (pooled over the machines when they agree, else its own) over the
    /// rate, with the interval carried through (`[mean, lo, hi]`; no mean without a solution,
    /// an open upper end as null).
    pub seconds: [Option<f64>; 3],
    /// Whether `seconds` comes from the pooled work per solution.
    pub from_pooled: bool,
}

/// One (method, size) over every machine that ran it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Pooling {
    /// The method's label.
    pub label: String,
    /// Board width.
    pub width: usize,
    /// Board height.
    pub height: usize,
    /// Cells, `width * height`.
    pub area: usize,
    /// The unit of the work.
    pub work_unit: String,
    /// What each machine's runs say.
    pub machines: Vec<Machine>,
    /// Each pair of machines, compared on the instances both ran.
    pub compared: Vec<Comparison>,
    /// The pairs whose comparison rejects the same rate at 1 % ([`DISAGREE_AT`]).
    pub disagree: Vec<[String; 2]>,
    /// The pairs with no instance in common: not compared.
    pub apart: Vec<[String; 2]>,
    /// The work per solution over every machine's runs; None when two disagree.
    pub pooled: Option<Pooled>,
}

/// Two machines compared on the instances both ran.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// The two machines, in the order of [`Pooling::machines`].
    pub machines: [String; 2],
    /// The instances both ran.
    pub instances: usize,
    /// The two-sided p-value of the same rate per unit of work on those instances
    /// ([`stats::stratified_rate_test`]); None without an instance in common.
    pub p: Option<f64>,
}

/// The level at which two machines' work per solution is taken to differ.
pub const DISAGREE_AT: f64 = 0.01;

/// Each instance's total work and solutions.
fn by_instance<'r>(rs: &[&'r Record]) -> BTreeMap<&'r str, (f64, u64)> {
    let mut m: BTreeMap<&str, (f64, u64)> = BTreeMap::new();
    for r in rs {
        let e = m.entry(r.instance.as_str()).or_default();
        e.0 += r.work as f64;
        e.1 += r.solution_count();
    }
    m
}

/// Compares two machines' runs on the instances both ran.
fn compare(a: &Machine, b: &Machine, ra: &[&Record], rb: &[&Record]) -> Comparison {
    let (ia, ib) = (by_instance(ra), by_instance(rb));
    let strata: Vec<stats::Stratum> = ia.iter().filter_map(|(k, &x)| ib.get(k).map(|&y| [x, y])).collect();
    Comparison {
        machines: [a.name.clone(), b.name.clone()],
        instances: strata.len(),
        p: (!strata.is_empty()).then(|| stats::stratified_rate_test(&strata)),
    }
}

/// The work of a run and its solutions.
fn obs(r: &Record) -> (f64, u64) {
    (r.work as f64, r.solution_count())
}

/// Pools every (method, size) over its machines (see the module docs).
pub fn pool(records: &[Record]) -> Vec<Pooling> {
    Record::by_method_and_size(records)
        .into_iter()
        .map(|((label, area, width), rs)| {
            let mut by: BTreeMap<(String, bool), Vec<&Record>> = BTreeMap::new();
            for r in &rs {
                by.entry((r.machine(), r.on_device())).or_default().push(r);
            }
            // Each machine with its runs, built in one pass.
            let (mut machines, runs_of): (Vec<Machine>, Vec<Vec<&Record>>) = by
                .into_iter()
                .map(|((name, device), runs)| {
                    let o: Vec<(f64, u64)> = runs.iter().map(|r| obs(r)).collect();
                    let work = stats::pooled_counts(&o);
                    let total_s: f64 = runs.iter().map(|r| r.wall_s).sum();
                    let machine = Machine {
                        name,
                        per: if device { "device" } else { "core" }.into(),
                        runs: runs.len(),
                        rate: (total_s > 0.0).then(|| work.total / total_s),
                        work,
                        total_s,
                        seconds: [None; 3],
                        from_pooled: false,
                    };
                    (machine, runs)
                })
                .unzip();
            let mut compared = Vec::new();
            for i in 0..machines.len() {
                for j in i + 1..machines.len() {
                    compared.push(compare(&machines[i], &machines[j], &runs_of[i], &runs_of[j]));
                }
            }
            let pairs = |keep: fn(Option<f64>) -> bool| -> Vec<[String; 2]> {
                compared.iter().filter(|c| keep(c.p)).map(|c| c.machines.clone()).collect()
            };
            let disagree = pairs(|p| p.is_some_and(|p| p < DISAGREE_AT));
            let apart = pairs(|p| p.is_none());
            let pooled = (disagree.is_empty() && apart.is_empty())
                .then(|| stats::pooled_counts(&rs.iter().map(|r| obs(r)).collect::<Vec<_>>()));
            for m in &mut machines {
                let w = pooled.as_ref().unwrap_or(&m.work);
                m.from_pooled = pooled.is_some();
                if let Some(rate) = m.rate.filter(|r| *r > 0.0) {
                    m.seconds = [w.mean.map(|v| v / rate), w.ci[0].map(|v| v / rate), w.ci[1].map(|v| v / rate)];
                }
            }
            Pooling {
                width,
                height: area / width,
                area,
                work_unit: rs[0].work_unit.clone(),
                label,
                machines,
                compared,
                disagree,
                apart,
                pooled,
            }
        })
        .collect()
}

fn sci(v: f64) -> String {
    super::format::fmt_work(v)
}

/// `mean [lo, hi]` of seconds, `> lo` without a solution.
fn fmt_seconds(s: &[Option<f64>; 3]) -> String {
    let f = super::format::fmt_secs;
    match s {
        [Some(m), Some(lo), Some(hi)] => format!("{} [{}, {}]", f(*m), f(*lo), f(*hi)),
        [None, Some(lo), _] => format!("> {} (none solved)", f(*lo)),
        _ => "-".into(),
    }
}

/// A p-value: two significant digits, very small ones in powers of ten.
fn fmt_p(p: f64) -> String {
    if p < 1e-4 { format!("{p:.1e}") } else { format!("{p:.2}") }
}

fn fmt_work(p: &Pooled) -> String {
    match (p.mean, p.ci) {
        (Some(m), [Some(lo), Some(hi)]) => format!("{} [{}, {}]", sci(m), sci(lo), sci(hi)),
        (None, [Some(lo), _]) => format!("> {} (none solved)", sci(lo)),
        _ => "-".into(),
    }
}

/// The report's section: one row per (method, size, machine), only where some (method,
/// size) ran on more than one machine or on a device (else the pooled-rates table says it
/// all). Empty when there is none.
pub fn markdown(pools: &[Pooling]) -> String {
    let shown: Vec<&Pooling> =
        pools.iter().filter(|p| p.machines.len() > 1 || p.machines.iter().any(|m| m.per == "device")).collect();
    if shown.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n## Work per solution by machine\n\n\
         Per method and size, each machine's runs (a GPU device, or a CPU machine whose ladder \
         runs hold one core each): runs, solutions (rate-mode runs count every solution), its \
         own work per solution with the exact 95% interval, and its measured rate (total work / \
         total wall seconds, per device or per core). Two machines are compared on the \
         instances both ran, each instance a stratum (an exact conditional test of the same \
         rate, so that a campaign that gave one machine its hardest instances does not count \
         against it). Where every pair agrees, the work per solution is pooled over all of them, \
         and the seconds per solution on a machine are the pooled work per solution over its \
         rate; where two disagree at 1 %, or share no instance (**flag**), nothing is pooled and \
         each machine's seconds come from its own work. The rate is taken as known (its spread \
         with the machine's load is not in the interval).\n\n\
         | method | size | machine | per | runs | solutions | work per solution [95% CI] | rate (work/s) | seconds per solution on one [95% CI] | from |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for p in shown {
        for m in &p.machines {
            s.push_str(&format!(
                "| {} | {}x{} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                p.label,
                p.width,
                p.height,
                m.name,
                m.per,
                m.runs,
                m.work.solutions,
                fmt_work(&m.work),
                m.rate.map_or("-".into(), |r| format!("{r:.3e}")),
                fmt_seconds(&m.seconds),
                if m.from_pooled { "pooled" } else { "own" },
            ));
        }
        match &p.pooled {
            Some(w) => s.push_str(&format!(
                "| {} | {}x{} | *all machines, pooled* | | {} | {} | {} | | | |\n",
                p.label,
                p.width,
                p.height,
                p.machines.iter().map(|m| m.runs).sum::<usize>(),
                w.solutions,
                fmt_work(w)
            )),
            None => {
                for c in &p.compared {
                    let [a, b] = &c.machines;
                    let what = match c.p {
                        Some(pv) if pv < DISAGREE_AT => format!(
                            "disagree on the {} per solution on the {} both ran (p = {})",
                            p.work_unit,
                            if c.instances == 1 {
                                "instance".to_string()
                            } else {
                                format!("{} instances", c.instances)
                            },
                            fmt_p(pv)
                        ),
                        None => "ran no instance in common and are not compared".into(),
                        Some(_) => continue,
                    };
                    s.push_str(&format!(
                        "| {} | {}x{} | **flag**: {a} and {b} {what}; not pooled | | | | | | | |\n",
                        p.label, p.width, p.height
                    ));
                }
            }
        }
    }
    s
}
