//! The hardness answer's analysis: the costs used, the fits (whole line, subsets, density),
//! the crossing, the placed points, and [`analyse`].

use super::inputs::*;
use crate::ladder::report::choice::{self, Choice, ChoiceOptions};
use crate::ladder::report::curve::Shape;
use crate::ladder::report::fit::{self, Axis, BootOptions, CountRegression, FitError, Measured, Unit};
use crate::ladder::report::stats::{self};
use crate::ladder::run::Record;

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
    /// The line, quadratic and broken stick, censored and Poisson-lognormal, the chosen curve;
    /// null where no line could be fitted or [`Options::curve_resamples`] is 0.
    pub curve: Option<CurveSummary>,
    /// Why there is no curve, when there is none.
    pub curve_error: Option<String>,
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
    /// Campaigns simulated from the fitted line for the curves' tests ([`choice`]; 0: no
    /// test, the line kept).
    pub simulations: usize,
    /// Resamples of the chosen curve's bootstrap over instances (0: no curves at all).
    pub curve_resamples: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            resamples: stats::RESAMPLES,
            seed: stats::stable_hash("hardness"),
            censor_factor: fit::CENSOR_FACTOR,
            simulations: 199,
            curve_resamples: 999,
        }
    }
}

/// The curve the counts support ([`choice::choose`]) and its crossing.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CurveSummary {
    /// The fits, the tests, the chosen curve and its intervals.
    #[serde(flatten)]
    pub choice: Choice,
    /// The crossing of the chosen curve's segment at the hard end with the scan's line (the
    /// segment above the knot for the broken stick); null without costs or where its slope's
    /// interval reaches 1.
    pub crossing: Option<Crossing>,
    /// Whether that crossing lies above the knot, on the segment it was computed from.
    pub crossing_on_segment: Option<bool>,
    /// The boards beyond the campaign (`points.json`) placed on the segment at the hard end.
    pub points: Vec<Placed>,
}

/// The chosen curve's crossing with the scan in core-seconds: [`crossing`] of the segment that
/// fits the hard end ([`choice::upper_segment`]), with the bootstrap's segments as replicates.
pub fn curve_crossing(c: &Choice, costs: &CostsUsed) -> Option<Crossing> {
    crossing(&upper_regression(c)?, costs)
}

/// The chosen curve's segment at the hard end ([`choice::upper_segment`]) as a line with the
/// bootstrap's segments as its replicates; None without the slope's interval.
pub fn upper_regression(c: &Choice) -> Option<CountRegression> {
    let (a, b) = choice::upper_segment(&c.fit);
    Some(CountRegression {
        line: fit::Line {
            intercept: a,
            slope: b,
            sigma: c.fit.sigma,
            log_likelihood: c.fit.log_likelihood,
            points: c.fit.points,
            censored: c.fit.censored,
            iterations: 0,
        },
        units: c.fit.points,
        left_out: 0,
        slope_ci: c.intervals.slope_above?,
        intercept_ci: [f64::NAN; 2],
        resamples: c.intervals.resamples,
        failed: c.intervals.failed,
        reliability: f64::NAN,
        replicates: c.intervals.upper.clone(),
    })
}

/// The units of the hardness fit: scan and map counts of every common instance.
pub fn units(instances: &[Instance]) -> Vec<Unit> {
    instances.iter().filter_map(unit).collect()
}

/// An instance's unit of the hardness fit, where both the scan and the map ran it.
pub(super) fn unit(i: &Instance) -> Option<Unit> {
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
pub(super) fn cheaper(reg: &CountRegression, costs: &CostsUsed, cross: Option<&Crossing>, x: [f64; 2]) -> String {
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

pub(super) fn times(r: f64) -> String {
    format!("{}x", sci(r))
}

/// Three significant figures: whole numbers from 100 to 1e4, exponent form beyond.
pub(super) fn sci(v: f64) -> String {
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
    let boot =
        BootOptions { resamples: opt.resamples, seed: opt.seed, censor_factor: opt.censor_factor, redraw: false };
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
    let (curve, curve_error) = if opt.curve_resamples > 0 {
        let copt = ChoiceOptions {
            simulations: opt.simulations,
            resamples: opt.curve_resamples,
            seed: opt.seed ^ 0xc0e,
            censor_factor: opt.censor_factor,
        };
        match choice::choose(&choice::counts(&us), &copt) {
            Ok(c) => {
                let cross = costs.as_ref().and_then(|k| curve_crossing(&c, k));
                let on = cross.as_ref().map(|x| match (c.chosen, c.fit.knot) {
                    (Shape::BrokenStick, Some(k)) => x.hardness.log10() >= k,
                    _ => true,
                });
                let points = upper_regression(&c).map_or_else(Vec::new, |r| {
                    place(&r, costs.as_ref(), &inputs.core_rates, &inputs.points, xr, opt.seed ^ 0x9e39)
                });
                (Some(CurveSummary { choice: c, crossing: cross, crossing_on_segment: on, points }), None)
            }
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    let mut summary =
        summarize(&labels, common.len(), &pts, left_out, regression.as_ref(), error, costs, xr, &inputs, &density, opt);
    summary.subsets = parts;
    summary.curve = curve;
    summary.curve_error = curve_error;
    Some(Hardness { labels, instances, regression, density, costs_from_records, inputs, summary })
}

#[allow(clippy::too_many_arguments)]
pub(super) fn summarize(
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
        curve: None,
        curve_error: None,
        costs,
    }
}
