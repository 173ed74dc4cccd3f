//! The hardness answer as the report shows it: its Markdown section and its figure.

use super::analysis::*;
use super::inputs::*;
use crate::ladder::report::choice::{Family, Tested};
use crate::ladder::report::curve::{CurveFit, Shape};
use crate::ladder::report::fit::{self};
use crate::ladder::report::stats::Pooled;
use crate::ladder::report::svg::{ErrorPoint, ScatterBand, ScatterPlot, scatter_plot};

/// `mean [lo, hi]` of a pooled rate, `> bound` without a solution.
pub(super) fn fmt_rate(p: Option<&Pooled>) -> String {
    match p {
        None => "-".into(),
        Some(p) => match (p.mean, p.ci) {
            (Some(m), [Some(lo), Some(hi)]) => format!("{} [{}, {}]", sci(m), sci(lo), sci(hi)),
            (None, [Some(lo), _]) => format!("> {}", sci(lo)),
            _ => "-".into(),
        },
    }
}

/// The rows of a table of per-unit costs per size.
fn cost_rows(costs: &[SizeCosts]) -> String {
    let row = |c: &SizeCosts| {
        format!("| {}x{} | {} | {} | {} |\n", c.width, c.height, per_s(c.map), per_s(c.scan), per_s(c.ac4))
    };
    costs.iter().map(row).collect()
}

pub(super) fn ci(v: Option<[f64; 2]>) -> String {
    v.map_or("-".into(), |[lo, hi]| format!("[{lo:.3}, {hi:.3}]"))
}

/// Units per core-second, as a rate.
pub(super) fn per_s(c: Option<f64>) -> String {
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
    if let Some(c) = &s_.curve {
        let ch = &c.choice;
        let iv = &ch.intervals;
        s.push_str(&match (ch.chosen, ch.fit.knot) {
            (Shape::BrokenStick, Some(k)) => format!(
                "\n**The answer: above a knot at {} scan nodes per solution {}, the map's trial-iterations per \
                 solution grow as the scan's nodes per solution to the power {:.3} {}** (the broken stick, chosen \
                 over the line by the rule below; below the knot the power is {:.3} {}).\n",
                sci(10f64.powf(k)),
                iv.knot.map_or("-".into(), |[lo, hi]| format!("[{}, {}]", sci(10f64.powf(lo)), sci(10f64.powf(hi)))),
                ch.fit.slope_above(),
                ci(iv.slope_above),
                ch.fit.coef[1],
                ci(iv.slope_below),
            ),
            _ => format!(
                "\n**The answer: the map's trial-iterations per solution grow as the scan's nodes per solution to \
                 the power {:.3} {}** (the line, kept by the rule below).\n",
                ch.fit.coef[1],
                ci(iv.slope_above)
            ),
        });
    }
    s.push_str(&format!(
        "\n**The fit.** Censored normal regression (Tobin 1958) of y = log10(map trial-iterations per \
         solution) on x = log10(scan nodes per solution), y = a + b x + e, e ~ N(0, s^2), by maximum \
         likelihood; an instance where the map found nothing in T trial-iterations is censored (its y \
         lies above log10({:.2} T), where the likelihood of finding none, exp(-T / mean), has its step), \
         one where the scan found nothing is left out. 95% intervals: percentile bootstrap (Efron) over \
         instances, their counts as observed ({} resamples, seeded). ",
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
    s.push_str(&curve_section(s_));
    if let Some(c) = &s_.costs {
        s.push_str(&format!(
            "\n**In core-seconds.** With c_map = {:.3e} core-seconds per map trial-iteration and c_scan = {:.3e} \
             per scan node ({}, {}; {:.3e} and {:.3e} per core-second), the map's whole line c_map 10^a H^b (the \
             line fit above; the chosen curve's crossing is stated under **Which curve?**) and the scan's c_scan H ",
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
                 is b = {b:.3} [{lo:.3}, {hi:.3}], {}, and no crossing can be stated from it.\n",
                if lo > 1.0 {
                    "its interval above 1: at the hard end, where a crossing would be, the map's work grows \
                     faster than the scan's nodes"
                } else {
                    "its interval reaching 1: at the hard end, where a crossing would be, the map's work may \
                     grow as the scan's nodes do, or slower or faster within that interval"
                }
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
    s.push_str(&cost_rows(&h.costs_from_records));
    if !h.inputs.core_rates.is_empty() {
        s.push_str(&format!(
            "\nThe per-core rates given ({}):\n\n| size | map trial-iterations / s | scan nodes / s | AC-4 nodes / s |\n|---|---|---|---|\n",
            h.inputs.core_rates_from.join(", ")
        ));
        s.push_str(&cost_rows(&h.inputs.core_rates));
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
    if let Some(c) = s_.curve.as_ref().filter(|c| !c.points.is_empty()) {
        s.push_str(&format!(
            "\nThe same boards on the chosen curve's segment at the hard end ({}, slope {:.3}; its band \
             from the bootstrap's segments):\n\n",
            c.choice.chosen.name(),
            c.choice.fit.slope_above()
        ));
        s.push_str(&placed_table(&c.points));
    }
    s
}

/// A curve's parameters in words.
fn curve_params(f: &CurveFit) -> String {
    match f.shape {
        Shape::Line => format!("a = {:.3}, b = {:.3}", f.coef[0], f.coef[1]),
        Shape::Quadratic => {
            format!("a = {:.3}, b = {:.3}, c = {:.4} (y = a + b x + c x^2)", f.coef[0], f.coef[1], f.coef[2])
        }
        Shape::BrokenStick => format!(
            "knot x = {:.2}, slope below {:.3}, above {:.3}, a = {:.3}",
            f.knot.unwrap_or(f64::NAN),
            f.coef[1],
            f.slope_above(),
            f.coef[0]
        ),
    }
}

/// The rows of one family's fits.
fn family_rows(t: &Tested) -> String {
    let name = match t.family {
        Family::Censored { factor } => format!("censored at {factor:.2} T"),
        Family::PoissonLognormal => "Poisson-lognormal".into(),
    };
    let mut s = String::new();
    let rows = [
        (Some(t.line), None, None),
        (t.quadratic, t.lr_quadratic, t.p_quadratic),
        (t.broken_stick, t.lr_broken_stick, t.p_broken_stick),
    ];
    for (f, lr, p) in rows {
        let Some(f) = f else { continue };
        s.push_str(&format!(
            "| {name} | {} | {} | {:.3} | {:.2} | {} | {} |\n",
            f.shape.name(),
            curve_params(&f),
            f.sigma,
            f.log_likelihood,
            lr.map_or("-".into(), |v| format!("{v:.2}")),
            p.map_or("-".into(), |v| format!("{v:.3} ({} simulated)", t.simulations)),
        ));
    }
    s
}

/// The section's part on the curve: the fits, the tests, the chosen curve and its crossing.
fn curve_section(s_: &Summary) -> String {
    let Some(c) = &s_.curve else {
        return s_
            .curve_error
            .as_ref()
            .map_or(String::new(), |e| format!("\n**Which curve?** No curve fitted: {e}.\n"));
    };
    let ch = &c.choice;
    let mut s = String::from(
        "\n**Which curve?** A line through the whole range can hide a slope that changes. Three curves of y on \
         x, each fitted two ways: a line, a quadratic, and a broken stick (continuous, two slopes, the knot \
         estimated by profiling the likelihood between the 10th and 90th percentiles of x; Hinkley 1969, \
         Muggeo 2003); censored as above (Tobin 1958), and by the Poisson-lognormal likelihood of the map's \
         solution counts (k ~ Poisson(W / c), log10 c ~ N(f(x), s^2), c integrated out by adaptive \
         Gauss-Hermite quadrature; Aitchison and Ho 1989), which needs no bound for the instances where \
         the map found none; s is then the scatter of the mean work per solution without the counts' \
         Poisson noise. The likelihood ratio (LR) of each curve against the line is tested by a parametric \
         bootstrap (Davison and Hinkley 1997): campaigns simulated from the fitted line with the same \
         hardness and work per instance, counts Poisson, every curve refitted (a knot has no chi-square \
         null).\n\n\
         | fit | curve | parameters | s | ln L | LR against the line | p (parametric bootstrap) |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for t in [&ch.poisson_lognormal, &ch.censored].into_iter().flatten() {
        s.push_str(&family_rows(t));
    }
    let fam = match ch.family {
        Family::PoissonLognormal => "Poisson-lognormal",
        Family::Censored { .. } => "censored",
    };
    let iv = &ch.intervals;
    s.push_str(&format!(
        "\nThe rule: {}. **Chosen: the {}** ({fam} fit). 95% intervals: percentile bootstrap (Efron) over \
         instances, {} resamples{}, the counts as observed (not redrawn: their noise is in the scatter), the \
         knot profiled again and the harder half split again at the median in each resample.",
        ch.rule,
        ch.chosen.name(),
        iv.resamples,
        if iv.failed > 0 { format!(" ({} without a fit left out)", iv.failed) } else { String::new() },
    ));
    let r = |v: Option<[f64; 2]>| ci(v);
    match (ch.chosen, ch.fit.knot) {
        (Shape::BrokenStick, Some(k)) => {
            let kk = iv.knot.map_or("-".into(), |[lo, hi]| {
                format!(
                    "[{lo:.2}, {hi:.2}], {} to {} scan nodes per solution",
                    sci(10f64.powf(lo)),
                    sci(10f64.powf(hi))
                )
            });
            s.push_str(&format!(
                " The knot at x = {k:.2} ({} scan nodes per solution) {kk}; the slope below it {:.3} {}; \
                 **the slope above the knot: {:.3} {}**.",
                sci(10f64.powf(k)),
                ch.fit.coef[1],
                r(iv.slope_below),
                ch.fit.slope_above(),
                r(iv.slope_above),
            ));
        }
        _ => s.push_str(&format!(" **The line's slope: {:.3} {}**.", ch.fit.coef[1], r(iv.slope_above))),
    }
    s.push_str(&format!(
        " The harder half's line (the instances at or above the median hardness): slope {} {} (split again in each \
         resample).",
        ch.harder_half_line.map_or("-".into(), |f| format!("{:.3}", f.coef[1])),
        r(iv.harder_half)
    ));
    if let (Some(ci_), Some(t)) = (&ch.censored_intervals, &ch.censored) {
        let f = if ch.chosen == Shape::BrokenStick { t.broken_stick } else { Some(t.line) };
        if let Some(f) = f {
            s.push_str(&format!(
                " The censored fit's {} for comparison: {}; slope above the knot {:.3} {}, knot {}.",
                ch.chosen.name(),
                curve_params(&f),
                f.slope_above(),
                r(ci_.slope_above),
                r(ci_.knot)
            ));
        }
    }
    match (&c.crossing, &s_.costs) {
        (Some(x), Some(_)) => s.push_str(&format!(
            " From the chosen curve's segment at the hard end, the map's and the scan's core-seconds meet at \
             H* = {} scan nodes per solution [{}, {}], the map the cheaper {} it{}.",
            sci(x.hardness),
            x.ci[0].map_or("unbounded".into(), sci),
            x.ci[1].map_or("unbounded".into(), sci),
            x.map_cheaper,
            if c.crossing_on_segment == Some(false) { " (below the knot: off the segment it comes from)" } else { "" }
        )),
        (None, Some(_)) => s.push_str(
            " No crossing can be stated from the chosen curve: the interval of its slope at the hard end reaches 1.",
        ),
        _ => {}
    }
    s.push('\n');
    s
}

/// The table of boards placed on a line.
pub(super) fn placed_table(points: &[Placed]) -> String {
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
        // The chosen broken stick's segment above its knot, the answer's; else the harder half's line.
        part: chosen_segment(h, &points).or_else(|| {
            h.summary.subsets.iter().find(|p| p.name == "the harder half").and_then(|p| {
                let (a, b, [lo, hi]) = (p.intercept?, p.exponent?, p.exponent_ci?);
                Some((
                    a,
                    b,
                    [p.range[0].log10(), p.range[1].log10()],
                    format!("harder half: b = {b:.2} [{lo:.2}, {hi:.2}]"),
                ))
            })
        }),
        bound_note: "map found none: 95% lower bound",
    })
}

/// The chosen broken stick's segment above its knot, from the knot to the hardest instance
/// drawn, as the figure draws a part: (intercept, slope, x range, legend).
fn chosen_segment(h: &Hardness, points: &[ErrorPoint]) -> Option<(f64, f64, [f64; 2], String)> {
    let c = h.summary.curve.as_ref()?;
    let knot = c.choice.fit.knot.filter(|_| c.choice.chosen == Shape::BrokenStick)?;
    let (a, b) = crate::ladder::report::choice::upper_segment(&c.choice.fit);
    let [lo, hi] = c.choice.intervals.slope_above?;
    let x1 = points.iter().map(|p| p.x).fold(f64::NEG_INFINITY, f64::max);
    (x1 > knot).then(|| (a, b, [knot, x1], format!("above the knot (broken stick): b = {b:.2} [{lo:.2}, {hi:.2}]")))
}
