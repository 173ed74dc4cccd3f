//! Whether a map's run lengths are memoryless: the Weibull fit of single long trials.
//!
//! The pooled estimate of work per solution (total work over all runs, solved or not, over the
//! solutions: [`stats::pooled`](super::stats::pooled)) is unbiased whatever the restart
//! interval only when a trial's chance of a solution per iteration is constant along the trial:
//! exponential run lengths, a constant hazard. A Weibull law, `S(t) = exp(-(t / lambda)^k)`,
//! holds the exponential at `k = 1`; `k < 1` is a hazard that falls along the trial (long
//! trials are worth less than fresh ones, and restarts help), `k > 1` one that rises (a
//! trial needs time to settle, and restarts cut it short). So the test is of `k = 1`, by the
//! likelihood ratio, on runs of one trial each, run to their first solution or censored at
//! their budget.
//!
//! The fit is the censored maximum likelihood (Lawless, *Statistical Models and Methods for
//! Lifetime Data*, 2nd ed., 2003, §5.2): with `d` solved runs among `n`, `lambda^k` has the
//! closed form `sum_i t_i^k / d`, and the profile log-likelihood of the shape,
//!
//! ```text
//! l(k) = d ln k - d ln(sum_i t_i^k / d) + (k - 1) sum_solved ln t_i - d,
//! ```
//!
//! is maximised over `ln k` by golden-section search. The 95% interval of `k` is the profile
//! likelihood's (`2 (l(k^) - l(k)) <= chi2(0.95; 1)`), and the p-value of `k = 1` the
//! likelihood ratio's against chi-square with one degree of freedom.

use super::format::fmt_work;
use super::stats::{KaplanMeier, chi_square_quantile, pooled};
use super::svg::{HazardCurve, hazard_plot};
use crate::ladder::run::Record;
use std::collections::BTreeMap;

/// The fewest solved runs the fit is made from.
pub const MIN_SOLVED: usize = 10;

/// The Weibull fit of run lengths.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct WeibullFit {
    /// Runs.
    pub runs: usize,
    /// Runs that solved.
    pub solved: usize,
    /// The shape `k` (1: exponential, memoryless).
    pub shape: f64,
    /// Its 95% profile-likelihood interval.
    pub shape_ci: [f64; 2],
    /// The scale `lambda`, at the fitted shape.
    pub scale: f64,
    /// The mean run length at the fitted law, `lambda Gamma(1 + 1/k)`.
    pub mean: f64,
    /// The pooled (exponential) mean, total work over solutions, for comparison.
    pub pooled_mean: f64,
    /// The likelihood-ratio p-value of `k = 1`.
    pub p_exponential: f64,
}

impl WeibullFit {
    /// Whether a constant hazard holds at the 5% level (the interval of `k` holds 1).
    pub fn memoryless(&self) -> bool {
        self.p_exponential >= 0.05
    }
}

/// The profile log-likelihood of the shape `k` (up to a constant), for `obs` of `(length,
/// solved)` with every length positive.
fn profile(obs: &[(f64, bool)], k: f64) -> f64 {
    let d = obs.iter().filter(|o| o.1).count() as f64;
    // sum t^k, scaled by the largest length so that it neither overflows nor underflows.
    let top = obs.iter().map(|o| o.0).fold(0.0_f64, f64::max);
    let sum: f64 = obs.iter().map(|o| (o.0 / top).powf(k)).sum();
    let ln_sum = sum.ln() + k * top.ln();
    let ln_solved: f64 = obs.iter().filter(|o| o.1).map(|o| o.0.ln()).sum();
    d * k.ln() - d * (ln_sum - d.ln()) + (k - 1.0) * ln_solved - d
}

/// Golden-section search of the maximum of `f` over `[lo, hi]`.
fn argmax(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    let g = (5.0_f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut fa, mut fb) = (f(a), f(b));
    while hi - lo > 1e-10 {
        if fa < fb {
            lo = a;
            (a, fa) = (b, fb);
            b = lo + g * (hi - lo);
            fb = f(b);
        } else {
            hi = b;
            (b, fb) = (a, fa);
            a = hi - g * (hi - lo);
            fa = f(a);
        }
    }
    (lo + hi) / 2.0
}

/// Where `f`, decreasing on `[lo, hi]` from above 0, crosses 0 (bisection); `hi` when it
/// stays above.
fn crossing(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    if f(hi) > 0.0 {
        return hi;
    }
    while hi - lo > 1e-10 {
        let mid = (lo + hi) / 2.0;
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The range of `ln k` searched: shapes from 1/50 to 50.
const LN_K: f64 = 3.912;

/// The maximum of a profile log-likelihood `l` of `u = ln k` over shapes 1/50 to 50: `(u^,
/// l(u^), the 95% interval of u, the likelihood-ratio p-value of k = 1)`, the interval from
/// `2 (l(u^) - l(u)) <= chi2(0.95; 1)`.
fn shape_fit(l: impl Fn(f64) -> f64) -> (f64, f64, [f64; 2], f64) {
    let u_hat = argmax(&l, -LN_K, LN_K);
    let top = l(u_hat);
    let cut = chi_square_quantile(0.95, 1.0) / 2.0;
    let below = |u: f64| l(u) - (top - cut);
    let lo = -crossing(|v| below(-v), -u_hat, LN_K);
    let hi = crossing(below, u_hat, LN_K);
    let lr = (2.0 * (top - l(0.0))).max(0.0);
    (u_hat, top, [lo, hi], chi_square_sf(lr, 1.0))
}

/// The upper tail of the chi-square law with `df` degrees of freedom at `x`.
fn chi_square_sf(x: f64, df: f64) -> f64 {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    1.0 - ChiSquared::new(df).expect("positive degrees of freedom").cdf(x)
}

/// The Weibull fit of `obs`, `(length, solved)` per run (a solved run's length to its first
/// solution, an unsolved one's budget); None with fewer than [`MIN_SOLVED`] solved runs or
/// a length that is not positive and finite.
pub fn weibull(obs: &[(f64, bool)]) -> Option<WeibullFit> {
    let solved = obs.iter().filter(|o| o.1).count();
    if solved < MIN_SOLVED || obs.iter().any(|o| !(o.0.is_finite() && o.0 > 0.0)) {
        return None;
    }
    let (u_hat, _, [lo, hi], p_exponential) = shape_fit(|u: f64| profile(obs, u.exp()));
    let shape = u_hat.exp();
    let d = solved as f64;
    let scale = (obs.iter().map(|o| o.0.powf(shape)).sum::<f64>() / d).powf(1.0 / shape);
    Some(WeibullFit {
        runs: obs.len(),
        solved,
        shape,
        shape_ci: [lo.exp(), hi.exp()],
        scale,
        mean: scale * statrs::function::gamma::gamma(1.0 + 1.0 / shape),
        pooled_mean: pooled(obs).mean.unwrap_or(f64::INFINITY),
        p_exponential,
    })
}

/// One Weibull shape shared by the instances of one method label, each with its own scale:
/// the test of a constant hazard over all of them at once, sharper than any one instance's.
/// With the scales profiled out, the log-likelihood of a shared `k` is the sum of the
/// instances' profiles; the shapes' sameness is tested by the likelihood ratio of one shape
/// per instance against the shared one (`G - 1` degrees of freedom for `G` instances).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CommonShape {
    /// The method's label.
    pub label: String,
    /// Instances pooled (each with its own fit).
    pub instances: usize,
    /// Runs in all.
    pub runs: usize,
    /// Solved runs in all.
    pub solved: usize,
    /// The shared shape `k`.
    pub shape: f64,
    /// Its 95% profile-likelihood interval.
    pub shape_ci: [f64; 2],
    /// The likelihood-ratio p-value of `k = 1` (one degree of freedom).
    pub p_exponential: f64,
    /// The likelihood-ratio p-value of one shape for all the instances.
    pub p_one_shape: f64,
}

impl CommonShape {
    /// Whether a constant hazard holds at the 5% level.
    pub fn memoryless(&self) -> bool {
        self.p_exponential >= 0.05
    }
}

/// [`CommonShape`] of every method label with at least two fitted instances, in label order.
pub fn common_shapes(groups: &[RunLengths]) -> Vec<CommonShape> {
    let mut by: BTreeMap<&str, Vec<&RunLengths>> = BTreeMap::new();
    for g in groups.iter().filter(|g| g.fit.is_some()) {
        by.entry(g.label.as_str()).or_default().push(g);
    }
    by.into_iter()
        .filter(|(_, gs)| gs.len() >= 2)
        .map(|(label, gs)| {
            let l = |u: f64| gs.iter().map(|g| profile(&g.runs, u.exp())).sum::<f64>();
            let (u_hat, top, [lo, hi], p_exponential) = shape_fit(l);
            // Each instance's own maximum, at the shape its fit already holds.
            let fits: Vec<WeibullFit> = gs.iter().filter_map(|g| g.fit).collect();
            let apart: f64 = gs.iter().zip(&fits).map(|(g, f)| profile(&g.runs, f.shape)).sum();
            let lr = (2.0 * (apart - top)).max(0.0);
            CommonShape {
                label: label.to_string(),
                instances: gs.len(),
                runs: gs.iter().map(|g| g.runs.len()).sum(),
                solved: fits.iter().map(|f| f.solved).sum(),
                shape: u_hat.exp(),
                shape_ci: [lo.exp(), hi.exp()],
                p_exponential,
                p_one_shape: chi_square_sf(lr, (gs.len() - 1) as f64),
            }
        })
        .collect()
}

/// One (instance, method label) whose map runs are single trials run to their first solution:
/// its run lengths and their fit.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunLengths {
    /// The instance.
    pub instance: String,
    /// The method's label.
    pub label: String,
    /// Each run's work, its parts summed: `(trial-iterations, solved)`.
    pub runs: Vec<(f64, bool)>,
    /// The Weibull fit; None with fewer than [`MIN_SOLVED`] solved runs.
    pub fit: Option<WeibullFit>,
}

/// The run lengths of every (instance, label) whose records are map runs of one trial that
/// stop at their first solution (not rate mode), each run's parts summed (a run still cut
/// short, its last part interrupted, is left out); the groups with at least [`MIN_SOLVED`]
/// solved runs.
pub fn run_lengths(records: &[Record]) -> Vec<RunLengths> {
    type Key = (String, String);
    let mut runs: BTreeMap<Key, BTreeMap<u64, (f64, bool, bool)>> = BTreeMap::new();
    let mut eligible: BTreeMap<Key, bool> = BTreeMap::new();
    for r in records {
        let key = (r.instance.clone(), r.label.clone());
        let single = r.method.is_map() && r.trials.unwrap_or(1) == 1 && r.solutions.is_none();
        let ok = eligible.entry(key.clone()).or_insert(true);
        *ok &= single;
        let run = runs.entry(key).or_default().entry(r.run).or_insert((0.0, false, true));
        run.0 += r.work as f64;
        run.1 |= r.solved;
        // The run is whole when the part read last is (parts are written in order).
        run.2 = r.is_whole();
    }
    runs.into_iter()
        .filter(|(k, _)| eligible[k])
        .filter_map(|((instance, label), by_run)| {
            let runs: Vec<(f64, bool)> = by_run.into_values().filter(|r| r.2).map(|r| (r.0, r.1)).collect();
            let fit = weibull(&runs)?;
            Some(RunLengths { instance, label, runs, fit: Some(fit) })
        })
        .collect()
}

/// The file name of [`figure`] in the report's folder.
pub const FIGURE: &str = "run-lengths.svg";

/// The Weibull plot of every group (`svg::hazard_plot`): the Kaplan-Meier cumulative hazard
/// against trial-iterations on log axes, each group's fitted Weibull line and the exponential
/// law of the same median; None when there is no group.
pub fn figure(groups: &[RunLengths]) -> Option<String> {
    if groups.is_empty() {
        return None;
    }
    let curves: Vec<HazardCurve> = groups
        .iter()
        .map(|g| HazardCurve {
            name: format!("{} · {}", g.instance, g.label),
            points: KaplanMeier::new(&g.runs)
                .steps()
                .iter()
                .filter(|s| s.1 > 0.0)
                .map(|&(t, surv)| (t, -surv.ln()))
                .collect(),
            fit: g.fit.map(|f| (f.shape, f.scale)),
        })
        .collect();
    Some(hazard_plot(
        "Run lengths of single trials: cumulative hazard (Weibull plot; dashed: the exponential law of the same median)",
        "trial-iterations to the first solution (log)",
        &curves,
    ))
}

/// The report's section on [`run_lengths`]; empty when there are none.
pub fn markdown(groups: &[RunLengths]) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n## Run lengths of single trials: memoryless?\n\n\
         Map runs of one trial each, run to their first solution or their budget, per instance \
         and method: the trial-iterations to the first solution (Kaplan-Meier median and \
         quartiles), the pooled mean (total work over solutions, the estimator the campaigns \
         use), and the censored maximum-likelihood Weibull fit, S(t) = exp(-(t / lambda)^k), with \
         the shape's 95% profile-likelihood interval and the likelihood-ratio p-value of k = 1 \
         (Lawless 2003). A constant hazard, k = 1, is what makes the pooled mean unbiased \
         whatever the restart interval; k < 1 means a trial's chance per iteration falls as it \
         runs (fresh starts help), k > 1 that it rises (restarts cut trials short).\n\n\
         On log axes a constant hazard is a line of slope 1 ([`run-lengths.svg`](run-lengths.svg)): \
         each group's Kaplan-Meier cumulative hazard -ln S(t) (points), its Weibull fit (solid, \
         slope k) and the exponential law of the same median (dashed).\n\n\
         | instance | method | runs | solved | median [quartiles] | pooled mean | Weibull mean | shape k [95%] | p (k = 1) | constant hazard |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for g in groups {
        let Some(f) = &g.fit else { continue };
        let km = KaplanMeier::new(&g.runs);
        let q = km.quartiles();
        let show = |v: Option<f64>| v.map_or_else(|| "-".to_string(), fmt_work);
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} [{}, {}] | {} | {} | {:.2} [{:.2}, {:.2}] | {:.3} | {} |\n",
            g.instance,
            g.label,
            f.runs,
            f.solved,
            show(q[1]),
            show(q[0]),
            show(q[2]),
            fmt_work(f.pooled_mean),
            fmt_work(f.mean),
            f.shape,
            f.shape_ci[0],
            f.shape_ci[1],
            f.p_exponential,
            if f.memoryless() { "holds" } else { "**rejected**" },
        ));
    }
    let common = common_shapes(groups);
    if !common.is_empty() {
        s.push_str(
            "\nPer method, one shape shared by its instances (each its own scale; the instances' \
             profile likelihoods summed): the test of a constant hazard over all of them at once, \
             and the likelihood-ratio test that one shape fits them all (G - 1 degrees of freedom).\n\n\
             | method | instances | runs | solved | shared shape k [95%] | p (k = 1) | constant hazard | p (one shape) |\n\
             |---|---|---|---|---|---|---|---|\n",
        );
        for c in &common {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {:.2} [{:.2}, {:.2}] | {:.3} | {} | {:.3} |\n",
                c.label,
                c.instances,
                c.runs,
                c.solved,
                c.shape,
                c.shape_ci[0],
                c.shape_ci[1],
                c.p_exponential,
                if c.memoryless() { "holds" } else { "**rejected**" },
                c.p_one_shape,
            ));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// `n` Weibull(k, lambda) lengths, censored at `budget`.
    fn sample(n: usize, k: f64, lambda: f64, budget: f64, seed: u64) -> Vec<(f64, bool)> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let u: f64 = rng.random::<f64>();
                let t = lambda * (-(1.0 - u).ln()).powf(1.0 / k);
                if t <= budget { (t, true) } else { (budget, false) }
            })
            .collect()
    }

    /// `(x1, y1, x2, y2)` of each `<line>` of the SVG that holds `has`.
    fn lines(svg: &str, has: &str) -> Vec<[f64; 4]> {
        let attr = |l: &str, a: &str| -> f64 {
            let at = l.find(&format!(" {a}=\"")).unwrap() + a.len() + 3;
            l[at..].split('"').next().unwrap().parse().unwrap()
        };
        svg.lines()
            .filter(|l| l.starts_with("<line") && l.contains(has))
            .map(|l| [attr(l, "x1"), attr(l, "y1"), attr(l, "x2"), attr(l, "y2")])
            .collect()
    }

    #[test]
    fn the_figure_draws_each_hazard_its_weibull_line_of_slope_k_and_the_exponential() {
        assert!(figure(&[]).is_none());
        for (k, seed) in [(0.6, 1), (1.0, 2), (1.8, 3)] {
            let runs = sample(80, k, 1e5, 1e6, seed);
            let fit = weibull(&runs);
            let g = RunLengths { instance: "a".into(), label: "m".into(), runs: runs.clone(), fit };
            let svg = figure(&[g]).unwrap();
            assert!(svg.contains("a · m"));
            // One point per solve where S > 0.
            let km = KaplanMeier::new(&runs);
            assert_eq!(svg.matches("<circle").count(), km.steps().iter().filter(|s| s.1 > 0.0).count());
            // The axes span whole decades around the points; on them the fit is a line of
            // slope k (in decades) and the exponential one of slope 1.
            let pts: Vec<(f64, f64)> =
                km.steps().iter().filter(|s| s.1 > 0.0).map(|&(t, s)| (t.log10(), (-s.ln()).log10())).collect();
            let span = |v: &mut dyn Iterator<Item = f64>| {
                let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
                hi.ceil().max(lo.floor() + 1.0) - lo.floor()
            };
            let (xs, ys) = (span(&mut pts.iter().map(|p| p.0)), span(&mut pts.iter().map(|p| p.1)));
            let slope = |l: [f64; 4]| ((l[1] - l[3]) / 370.0 * ys) / ((l[2] - l[0]) / 520.0 * xs);
            let (solid, dashed) = (lines(&svg, "stroke-width=\"1.5\""), lines(&svg, "stroke-dasharray"));
            assert_eq!((solid.len(), dashed.len()), (1, 1), "{svg}");
            let fitted = fit.unwrap().shape;
            assert!((slope(solid[0]) / fitted - 1.0).abs() < 0.02, "k {k}: slope {} against {fitted}", slope(solid[0]));
            assert!((slope(dashed[0]) - 1.0).abs() < 0.02, "k {k}: the exponential's slope {}", slope(dashed[0]));
        }
    }

    #[test]
    fn the_exponential_case_has_the_pooled_mean_in_closed_form() {
        // At k = 1 the profile's maximiser over lambda is the pooled mean; the fitted k of a
        // large exponential sample is near 1 and its interval holds 1.
        let obs = sample(4000, 1.0, 1e6, 3e6, 1);
        let f = weibull(&obs).unwrap();
        assert!((f.shape - 1.0).abs() < 0.05, "{f:?}");
        assert!(f.shape_ci[0] < 1.0 && 1.0 < f.shape_ci[1], "{f:?}");
        assert!((f.mean / f.pooled_mean - 1.0).abs() < 0.05, "{f:?}");
        assert!(f.memoryless());
    }

    #[test]
    fn known_shapes_are_recovered_and_their_hazard_is_told_apart() {
        for (k, seed) in [(0.5, 2), (0.8, 3), (1.5, 4), (2.5, 5)] {
            let f = weibull(&sample(3000, k, 2e6, 8e6, seed)).unwrap();
            assert!((f.shape / k - 1.0).abs() < 0.08, "k {k}: {f:?}");
            assert!(f.shape_ci[0] < k && k < f.shape_ci[1], "k {k}: {f:?}");
            assert!((f.scale / 2e6 - 1.0).abs() < 0.08, "k {k}: {f:?}");
            assert!(!f.memoryless() && f.p_exponential < 1e-6, "k {k}: {f:?}");
        }
    }

    #[test]
    fn the_interval_covers_the_true_shape_about_95_times_in_100() {
        // 400 campaigns of 40 runs, a third of them censored on average.
        let mut covered = 0;
        let mut rejected_at_one = 0;
        for seed in 0..400 {
            let obs = sample(40, 1.0, 1e6, 1.1e6, 100 + seed);
            let Some(f) = weibull(&obs) else { continue };
            covered += usize::from(f.shape_ci[0] <= 1.0 && 1.0 <= f.shape_ci[1]);
            rejected_at_one += usize::from(!f.memoryless());
        }
        assert!((364..=396).contains(&covered), "{covered} of 400");
        assert_eq!(covered + rejected_at_one, 400, "the interval and the test agree");
    }

    /// A record of run `run` of `label` on one instance.
    fn rec(label: &str, run: u64, work: u64, solved: bool) -> Record {
        Record {
            instance: "i".into(),
            method: concur::method::MethodName::Rrr,
            label: label.into(),
            run,
            solved,
            work,
            ..Record::default()
        }
    }

    #[test]
    fn runs_are_single_trials_their_parts_summed_and_rate_mode_left_out() {
        let obs = sample(30, 1.0, 1000.0, 2500.0, 11);
        let mut rs: Vec<Record> = Vec::new();
        for (i, &(t, solved)) in obs.iter().enumerate() {
            let work = t.round().max(1.0) as u64;
            if i % 3 == 0 {
                // A run in two parts: the first cut short by a stop, the second its rest.
                let first = work / 2;
                rs.push(Record {
                    part: Some(1),
                    interrupted: Some("SIGTERM".into()),
                    ..rec("a", i as u64, first, false)
                });
                rs.push(Record { part: Some(2), ..rec("a", i as u64, work - first, solved) });
            } else {
                rs.push(rec("a", i as u64, work, solved));
            }
        }
        // A run still cut short is left out; a rate-mode group and a batch are not single trials.
        rs.push(Record { part: Some(1), interrupted: Some("SIGTERM".into()), ..rec("a", 99, 5, false) });
        rs.extend((0..30).map(|i| Record { solutions: Some(1), ..rec("rate", i, 100, true) }));
        rs.extend((0..30).map(|i| Record { trials: Some(8), ..rec("batch", i, 100, true) }));
        let groups = run_lengths(&rs);
        assert_eq!(groups.len(), 1, "{groups:?}");
        let g = &groups[0];
        assert_eq!(g.label, "a");
        let want: Vec<(f64, bool)> = obs.iter().map(|&(t, s)| (t.round().max(1.0), s)).collect();
        assert_eq!(g.runs, want);
        assert_eq!(g.fit, weibull(&want));
        let md = markdown(&groups);
        assert!(md.contains("| i | a | 30 |"), "{md}");
        assert!(markdown(&[]).is_empty());
    }

    /// Groups of one label on instances `i0, i1, ...`, one per `(shape, scale)`, `n` runs each
    /// censored at three times the scale.
    fn groups(label: &str, laws: &[(f64, f64)], n: usize, seed: u64) -> Vec<RunLengths> {
        laws.iter()
            .enumerate()
            .map(|(i, &(k, lambda))| {
                let runs = sample(n, k, lambda, 3.0 * lambda, seed * 100 + i as u64);
                RunLengths { instance: format!("i{i}"), label: label.into(), fit: weibull(&runs), runs }
            })
            .collect()
    }

    #[test]
    fn a_shared_shape_is_recovered_over_instances_of_different_scales() {
        let scales = [1e5, 1e6, 3e6, 1e7];
        for (k, seed) in [(0.6, 1), (1.0, 2), (1.4, 3)] {
            let gs = groups("m", &scales.map(|l| (k, l)), 600, seed);
            let c = &common_shapes(&gs)[0];
            assert_eq!((c.instances, c.runs), (4, 2400));
            assert_eq!(c.solved, gs.iter().map(|g| g.fit.unwrap().solved).sum::<usize>());
            assert!((c.shape / k - 1.0).abs() < 0.05, "k {k}: {c:?}");
            assert!(c.shape_ci[0] < k && k < c.shape_ci[1], "k {k}: {c:?}");
            // Sharper than any one instance's interval.
            for g in &gs {
                let f = g.fit.unwrap();
                assert!(c.shape_ci[1] - c.shape_ci[0] < f.shape_ci[1] - f.shape_ci[0], "{c:?} {f:?}");
            }
            assert_eq!(c.memoryless(), c.p_exponential >= 0.05);
            assert!((k == 1.0) == c.memoryless(), "k {k}: {c:?}");
            assert!(c.p_one_shape > 0.001, "k {k}: {c:?}");
        }
    }

    #[test]
    fn the_shared_shape_is_the_maximum_of_the_summed_likelihoods() {
        // Brute force: the shared k maximises the sum of the instances' profiles on a grid.
        let gs = groups("m", &[(1.2, 10.0), (1.2, 50.0), (1.2, 400.0)], 40, 5);
        let c = &common_shapes(&gs)[0];
        let sum = |k: f64| gs.iter().map(|g| profile(&g.runs, k)).sum::<f64>();
        let grid = (1..4000).map(|i| i as f64 * 0.001).max_by(|a, b| sum(*a).total_cmp(&sum(*b))).unwrap();
        assert!((c.shape - grid).abs() < 2e-3, "{} against {grid}", c.shape);
        // The likelihood-ratio statistic of one shape is what its p-value says.
        let apart: f64 = gs.iter().map(|g| profile(&g.runs, g.fit.unwrap().shape)).sum();
        let lr = 2.0 * (apart - sum(c.shape));
        assert!((chi_square_sf(lr, 2.0) - c.p_one_shape).abs() < 1e-6, "{lr} {c:?}");
    }

    #[test]
    fn instances_of_different_shapes_are_told_apart() {
        let gs = groups("m", &[(0.6, 1e6), (2.0, 1e6)], 300, 7);
        let c = &common_shapes(&gs)[0];
        assert!(c.p_one_shape < 1e-6, "{c:?}");
    }

    #[test]
    fn the_shared_interval_covers_the_true_shape_about_95_times_in_100() {
        // 200 settings of four instances of 20 runs each, scales a decade apart.
        let mut covered = 0;
        for seed in 0..200 {
            let gs = groups("m", &[(1.0, 1e4), (1.0, 1e5), (1.0, 1e6), (1.0, 1e7)], 20, 1000 + seed);
            if gs.iter().any(|g| g.fit.is_none()) {
                continue;
            }
            let c = &common_shapes(&gs)[0];
            covered += usize::from(c.shape_ci[0] <= 1.0 && 1.0 <= c.shape_ci[1]);
        }
        assert!((182..=198).contains(&covered), "{covered} of 200");
    }

    #[test]
    fn a_label_needs_two_fitted_instances_for_its_shared_row() {
        let mut gs = groups("two", &[(1.0, 1e3), (1.0, 1e4)], 40, 9);
        gs.extend(groups("one", &[(1.0, 1e3)], 40, 10));
        let common = common_shapes(&gs);
        assert_eq!(common.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(), ["two"]);
        let md = markdown(&gs);
        assert!(md.contains("| two | 2 | 80 |"), "{md}");
        assert!(!md.contains("| one | 1 |"), "{md}");
    }

    #[test]
    fn too_few_solutions_or_bad_lengths_give_no_fit() {
        assert!(weibull(&sample(9, 1.0, 1.0, 1e9, 7)).is_none());
        let mut obs = sample(50, 1.0, 1.0, 1e9, 8);
        obs[3].0 = 0.0;
        assert!(weibull(&obs).is_none());
    }

    #[test]
    fn the_profile_is_the_likelihood_maximised_over_the_scale() {
        // Brute force: the full censored Weibull log-likelihood, maximised over lambda on a
        // fine grid, against the profile at a few shapes.
        let obs = sample(30, 1.3, 5.0, 9.0, 9);
        let full = |k: f64, lam: f64| -> f64 {
            obs.iter()
                .map(|&(t, s)| {
                    let z = (t / lam).powf(k);
                    if s { k.ln() - lam.ln() + (k - 1.0) * (t / lam).ln() - z } else { -z }
                })
                .sum()
        };
        let best = |k: f64| (1..20000).map(|i| full(k, i as f64 * 0.001)).fold(f64::MIN, f64::max);
        for k in [0.7, 1.0, 1.3, 2.0] {
            let gap = best(k) - profile(&obs, k);
            assert!(gap.abs() < 1e-4, "k {k}: {gap}");
        }
    }
}
