//! Which curve the counts support, and how well its parameters are known: the line, the
//! quadratic and the broken stick of `curve`, each fitted both ways (censored, `curve`; and to
//! the counts, `poisson_lognormal`), tested against the line by a parametric bootstrap, the
//! chosen one's parameters given intervals by a bootstrap over instances.
//!
//! - **The test** ([`Family::test`]): the likelihood-ratio statistic `2 (ln L_curve - ln L_line)`
//!   of the quadratic and of the broken stick against the line. A knot is not identified under
//!   the line, so the broken stick's statistic has no chi-square null; both nulls come from a
//!   parametric bootstrap (A. C. Davison and D. V. Hinkley, *Bootstrap methods and their
//!   application*, Cambridge (1997), section 4.2): campaigns simulated from the fitted line with
//!   the same design (each instance's hardness `x` and the map's work `W` as observed; its mean
//!   work per solution `c` drawn as `log10 c ~ N(line(x), s^2)` with the fitted spread, its
//!   solutions as `Poisson(W / c)`), every curve refitted to each, `p = (1 + #{LR* >= LR}) /
//!   (1 + B)` over the `B` simulations whose fits succeeded (so with 199 simulations the
//!   smallest `p` is 0.005). In the Poisson-lognormal family the fitted spread is the scatter
//!   of `c` itself; in the censored family it also holds the counts' Poisson noise, so its
//!   simulated campaigns are a little noisier than the data, which makes that test, the check
//!   beside the rule, slightly conservative.
//! - **The rule** ([`RULE`]): the broken stick if its parametric-bootstrap `p` against the line
//!   is below [`LEVEL`] in the Poisson-lognormal fit, else the line. The Poisson-lognormal fit
//!   decides because it needs no censoring bound for the instances where the map found
//!   nothing; the censored fit is the check beside it.
//! - **The intervals** ([`bootstrap`]): B. Efron's percentile bootstrap over instances (*Bootstrap
//!   methods: another look at the jackknife*, Ann. Statist. 7:1 (1979)): a resample draws the
//!   instances with replacement and refits the chosen curve, the knot profiled again inside
//!   each resample, and the harder half (the instances at or above the resample's median
//!   hardness) split again and fitted by a line. The counts are not redrawn: each instance's
//!   count noise is already in its scatter about the curve, which the resampling of instances
//!   carries.

use super::curve::{self, CurveFit, Shape};
use super::fit::{self, FitError};
use super::poisson_lognormal::{self as pln, Count};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The parametric-bootstrap level below which the broken stick is chosen.
pub const LEVEL: f64 = 0.05;
/// The rule that chooses the model, in words.
pub const RULE: &str = "the broken stick if its parametric-bootstrap p against the line, in the Poisson-lognormal \
                        fit, is below 0.05; else the line";

/// How a family of fits meets the instances where the map found nothing.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Censored normal regression of `log10(W / k)`, an instance with `k = 0` censored at
    /// `log10(W factor)` (`curve`).
    Censored {
        /// The censoring point as a multiple of the work (`fit::CENSOR_FACTOR`).
        factor: f64,
    },
    /// The Poisson-lognormal likelihood of the counts (`poisson_lognormal`).
    PoissonLognormal,
}

impl Family {
    /// The maximum-likelihood fit of `shape` to `counts` in this family.
    pub fn fit(self, counts: &[Count], shape: Shape) -> Result<CurveFit, FitError> {
        match self {
            Family::Censored { factor } => {
                let pts: Vec<fit::Point> = counts
                    .iter()
                    .map(|c| match c.solutions {
                        0 => fit::Point { x: c.x, y: fit::censor_point(c.work, factor), censored: true },
                        k => fit::Point { x: c.x, y: (c.work / k as f64).log10(), censored: false },
                    })
                    .collect();
                curve::fit_curve(&pts, shape)
            }
            Family::PoissonLognormal => pln::fit(counts, shape),
        }
    }

    /// The three fits and the parametric-bootstrap test of the quadratic and the broken stick
    /// against the line (`simulations` campaigns from the fitted line, seeded by `seed`).
    pub fn test(self, counts: &[Count], simulations: usize, seed: u64) -> Result<Tested, FitError> {
        let line = self.fit(counts, Shape::Line)?;
        let quadratic = self.fit(counts, Shape::Quadratic).ok();
        let broken_stick = self.fit(counts, Shape::BrokenStick).ok();
        let lr = |f: &Option<CurveFit>, l: &CurveFit| f.map(|f| (2.0 * (f.log_likelihood - l.log_likelihood)).max(0.0));
        let (lr_q, lr_b) = (lr(&quadratic, &line), lr(&broken_stick, &line));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let (mut above_q, mut above_b, mut done_q, mut done_b, mut failed) = (0, 0, 0, 0, 0);
        let mut sim = counts.to_vec();
        for _ in 0..simulations {
            simulate(&line, counts, &mut sim, &mut rng);
            let Ok(l0) = self.fit(&sim, Shape::Line) else {
                failed += 1;
                continue;
            };
            if let Some(obs) = lr_q {
                match self.fit(&sim, Shape::Quadratic) {
                    Ok(q) => {
                        done_q += 1;
                        above_q += usize::from(2.0 * (q.log_likelihood - l0.log_likelihood) >= obs);
                    }
                    Err(_) => failed += 1,
                }
            }
            if let Some(obs) = lr_b {
                match self.fit(&sim, Shape::BrokenStick) {
                    Ok(b) => {
                        done_b += 1;
                        above_b += usize::from(2.0 * (b.log_likelihood - l0.log_likelihood) >= obs);
                    }
                    Err(_) => failed += 1,
                }
            }
        }
        let p = |above: usize, done: usize| (simulations > 0).then(|| (1 + above) as f64 / (1 + done) as f64);
        Ok(Tested {
            family: self,
            line,
            quadratic,
            broken_stick,
            lr_quadratic: lr_q,
            lr_broken_stick: lr_b,
            p_quadratic: lr_q.and(p(above_q, done_q)),
            p_broken_stick: lr_b.and(p(above_b, done_b)),
            simulations,
            failed,
        })
    }
}

/// Redraws `out` (the same instances as `counts`) from `line`: each instance's mean work per
/// solution lognormal about the line with its spread, its solutions Poisson in its work.
pub fn simulate(line: &CurveFit, counts: &[Count], out: &mut [Count], rng: &mut Xoshiro256PlusPlus) {
    for (o, c) in out.iter_mut().zip(counts) {
        let per = 10f64.powf(line.at(c.x) + line.sigma * fit::normal(rng));
        *o = Count { x: c.x, work: c.work, solutions: fit::poisson(rng, c.work / per) };
    }
}

/// One family's three fits and its tests against the line.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Tested {
    /// The family.
    pub family: Family,
    /// The line.
    pub line: CurveFit,
    /// The quadratic, where its fit succeeded.
    pub quadratic: Option<CurveFit>,
    /// The broken stick, where its fit succeeded.
    pub broken_stick: Option<CurveFit>,
    /// `2 (ln L_quadratic - ln L_line)`.
    pub lr_quadratic: Option<f64>,
    /// `2 (ln L_broken_stick - ln L_line)`.
    pub lr_broken_stick: Option<f64>,
    /// The quadratic's parametric-bootstrap `p` against the line.
    pub p_quadratic: Option<f64>,
    /// The broken stick's parametric-bootstrap `p` against the line.
    pub p_broken_stick: Option<f64>,
    /// Campaigns simulated from the line.
    pub simulations: usize,
    /// Refits of simulated campaigns that failed (left out of the `p`s).
    pub failed: usize,
}

/// The chosen curve's bootstrap over instances ([`bootstrap`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Intervals {
    /// Resamples drawn.
    pub resamples: usize,
    /// Resamples whose fit failed (left out).
    pub failed: usize,
    /// The 95% interval of the knot (broken stick only).
    pub knot: Option<[f64; 2]>,
    /// Of the slope below the knot (the line's slope for the line).
    pub slope_below: Option<[f64; 2]>,
    /// Of the slope above the knot (the line's slope for the line).
    pub slope_above: Option<[f64; 2]>,
    /// Of the harder half's line slope, the half split at each resample's median.
    pub harder_half: Option<[f64; 2]>,
    /// Of the spread.
    pub sigma: Option<[f64; 2]>,
    /// `(intercept, slope, sigma)` of the segment above the knot in each resample (the line
    /// for the line), for the crossing.
    #[serde(skip)]
    pub upper: Vec<[f64; 3]>,
}

/// The harder half of `counts` (at or above their median `x`).
pub fn harder_half(counts: &[Count]) -> Vec<Count> {
    let xs: Vec<f64> = counts.iter().map(|c| c.x).collect();
    let mut s = xs.clone();
    s.sort_by(f64::total_cmp);
    let Some(&median) = s.get(s.len() / 2) else { return Vec::new() };
    counts.iter().filter(|c| c.x >= median).copied().collect()
}

/// The segment of `f` above its knot as `(intercept, slope)` (the line itself for a line).
pub fn upper_segment(f: &CurveFit) -> (f64, f64) {
    match (f.shape, f.knot) {
        (Shape::BrokenStick, Some(k)) => (f.coef[0] - f.coef[2] * k, f.coef[1] + f.coef[2]),
        _ => (f.coef[0], f.coef[1]),
    }
}

/// The percentile bootstrap over instances of `shape` in `family` (see the module's notes).
pub fn bootstrap(family: Family, counts: &[Count], shape: Shape, resamples: usize, seed: u64) -> Intervals {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut sample = Vec::with_capacity(counts.len());
    let (mut knots, mut below, mut above, mut half, mut sig, mut upper) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut failed = 0;
    for _ in 0..resamples {
        sample.clear();
        for _ in 0..counts.len() {
            sample.push(counts[rng.random_range(0..counts.len())]);
        }
        match family.fit(&sample, shape) {
            Ok(f) => {
                if let Some(k) = f.knot {
                    knots.push(k);
                }
                below.push(f.coef[1]);
                above.push(f.slope_above());
                sig.push(f.sigma);
                let (a, b) = upper_segment(&f);
                upper.push([a, b, f.sigma]);
            }
            Err(_) => failed += 1,
        }
        if let Ok(h) = family.fit(&harder_half(&sample), Shape::Line) {
            half.push(h.coef[1]);
        }
    }
    let ci = |v: &[f64]| fit::percentile_interval(v);
    Intervals {
        resamples,
        failed,
        knot: ci(&knots),
        slope_below: ci(&below),
        slope_above: (shape != Shape::Quadratic).then(|| ci(&above)).flatten(),
        harder_half: ci(&half),
        sigma: ci(&sig),
        upper,
    }
}

/// The choice and its numbers ([`choose`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Choice {
    /// The censored fits and their tests.
    pub censored: Option<Tested>,
    /// The Poisson-lognormal fits and their tests.
    pub poisson_lognormal: Option<Tested>,
    /// The rule ([`RULE`]).
    pub rule: String,
    /// The chosen curve.
    pub chosen: Shape,
    /// The family whose fit the rule read and whose chosen curve the intervals are of.
    pub family: Family,
    /// The chosen curve.
    pub fit: CurveFit,
    /// Its bootstrap over instances.
    pub intervals: Intervals,
    /// The censored fit's chosen curve and its bootstrap, for comparison.
    pub censored_intervals: Option<Intervals>,
    /// The chosen family's line over the harder half ([`harder_half`]); its interval is
    /// [`Intervals::harder_half`].
    pub harder_half_line: Option<CurveFit>,
}

/// How [`choose`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChoiceOptions {
    /// Campaigns simulated for each family's test.
    pub simulations: usize,
    /// Resamples of the bootstrap over instances.
    pub resamples: usize,
    /// Seed of both.
    pub seed: u64,
    /// The censored family's censoring factor.
    pub censor_factor: f64,
}

impl Default for ChoiceOptions {
    fn default() -> Self {
        ChoiceOptions { simulations: 199, resamples: 999, seed: 0, censor_factor: fit::CENSOR_FACTOR }
    }
}

/// Fits both families, tests them, applies [`RULE`] and bootstraps the chosen curve. Falls
/// back to the censored family's test when the Poisson-lognormal line cannot be fitted.
pub fn choose(counts: &[Count], opt: &ChoiceOptions) -> Result<Choice, FitError> {
    let cens_family = Family::Censored { factor: opt.censor_factor };
    let censored = cens_family.test(counts, opt.simulations, opt.seed ^ 0xc3);
    let poisson = Family::PoissonLognormal.test(counts, opt.simulations, opt.seed ^ 0x9d);
    let (family, decider) = match (&poisson, &censored) {
        (Ok(t), _) => (Family::PoissonLognormal, t),
        (Err(_), Ok(t)) => (cens_family, t),
        (Err(e), Err(_)) => return Err(e.clone()),
    };
    let chosen = match (decider.p_broken_stick, decider.broken_stick) {
        (Some(p), Some(_)) if p < LEVEL => Shape::BrokenStick,
        _ => Shape::Line,
    };
    let fit = match chosen {
        Shape::BrokenStick => decider.broken_stick.unwrap_or(decider.line),
        _ => decider.line,
    };
    let intervals = bootstrap(family, counts, chosen, opt.resamples, opt.seed ^ 0xb0);
    let censored_intervals = (family != cens_family && censored.is_ok())
        .then(|| bootstrap(cens_family, counts, chosen, opt.resamples, opt.seed ^ 0xb1));
    let harder_half_line = family.fit(&harder_half(counts), Shape::Line).ok();
    Ok(Choice {
        harder_half_line,
        censored: censored.ok(),
        poisson_lognormal: poisson.ok(),
        rule: RULE.into(),
        chosen,
        family,
        fit,
        intervals,
        censored_intervals,
    })
}

/// The instances' counts from the regression's units (those with a scan solution, `x` their
/// scan nodes per solution in `log10`).
pub fn counts(units: &[fit::Unit]) -> Vec<Count> {
    units
        .iter()
        .filter_map(|u| {
            let x = match u.x {
                fit::Axis::Measured(m) => m.log10_mean()?,
                fit::Axis::Exact(x) => x,
            };
            (u.y.total > 0.0).then_some(Count { x, work: u.y.total, solutions: u.y.solutions })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line campaign (no knot): 60 instances, work to 8 solutions or 1e7.
    fn line_campaign(seed: u64) -> Vec<Count> {
        let line = CurveFit {
            shape: Shape::Line,
            coef: [1.5, 0.7, 0.0],
            knot: None,
            sigma: 0.3,
            log_likelihood: 0.0,
            points: 0,
            censored: 0,
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let design: Vec<Count> = (0..60)
            .map(|i| {
                let x = 3.0 + 5.0 * i as f64 / 59.0;
                Count { x, work: (8.0 * 10f64.powf(line.at(x))).min(1e7), solutions: 0 }
            })
            .collect();
        let mut out = design.clone();
        simulate(&line, &design, &mut out, &mut rng);
        out
    }

    #[test]
    fn on_a_line_the_tests_do_not_reject_and_the_rule_keeps_the_line() {
        let counts = line_campaign(11);
        let t = Family::Censored { factor: fit::CENSOR_FACTOR }.test(&counts, 59, 1).unwrap();
        let p = t.p_broken_stick.unwrap();
        assert!(p > 0.05 && p <= 1.0, "{t:?}");
        assert!(t.lr_broken_stick.unwrap() >= t.lr_quadratic.unwrap_or(0.0) - 1e-9 || t.p_quadratic.is_some());
        let c =
            choose(&counts, &ChoiceOptions { simulations: 39, resamples: 49, seed: 3, ..Default::default() }).unwrap();
        assert_eq!((c.chosen, c.family), (Shape::Line, Family::PoissonLognormal), "{c:?}");
        let [lo, hi] = c.intervals.slope_above.unwrap();
        assert!(lo < 0.7 && 0.7 < hi, "{lo} {hi}");
        assert!((c.fit.coef[1] - 0.7).abs() < 0.15 && c.intervals.knot.is_none());
    }

    #[test]
    fn the_upper_segment_continues_the_curve_above_the_knot() {
        let f = CurveFit {
            shape: Shape::BrokenStick,
            coef: [1.0, 0.5, 0.7],
            knot: Some(5.0),
            sigma: 0.2,
            log_likelihood: 0.0,
            points: 0,
            censored: 0,
        };
        let (a, b) = upper_segment(&f);
        for x in [5.0, 6.0, 9.0] {
            assert!((a + b * x - f.at(x)).abs() < 1e-12);
        }
        assert!((b - 1.2).abs() < 1e-12 && (f.at(4.0) - 3.0).abs() < 1e-12);
    }
}
