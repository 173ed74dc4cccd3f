//! Statistics of censored run times for the ladder report.
//!
//! A run that did not solve within its budget is not a missing value: it says the time to
//! solution exceeds what was spent. Dropping such runs and taking medians over the solved ones
//! makes a method that solves one run in five look as good as its luckiest run. Here unsolved
//! runs are right-censored at the time (or work) they spent, and the distribution of time to
//! solution is estimated by the product-limit estimator of E. L. Kaplan and P. Meier,
//! *Nonparametric estimation from incomplete observations*, J. Amer. Statist. Assoc. 53:457
//! (1958). `1 - S(t)` is the run-time distribution of H. H. Hoos and T. Stützle, *Stochastic
//! Local Search: Foundations and Applications* (2004): the fraction of runs solved by time `t`.
//!
//! Conventions:
//! - An observation is `(t, solved)`; an unsolved run is censored at `t`.
//! - Ties: at a time where runs both solve and are censored, the solves come first, so the
//!   censored runs still count as at risk at that time (the usual convention).
//! - Quantile `q` is the smallest event time `t` with `S(t) <= 1 - q` (compared with a
//!   relative tolerance of 1e-9 against rounding in the product). It is undefined (`None`)
//!   when the curve never falls that low within the observations: the quantile then lies
//!   beyond the budget. Without censoring it is the inverse of the empirical distribution
//!   function: the `ceil(q n)`-th smallest value.
//! - Confidence intervals of quantiles are percentile bootstrap intervals (B. Efron,
//!   *Bootstrap methods: another look at the jackknife*, Ann. Statist. 7:1 (1979); B. Efron,
//!   R. Tibshirani, *An Introduction to the Bootstrap* (1993)): the runs are resampled with
//!   replacement, a resample whose quantile is undefined counts as `+inf`, so an interval may
//!   be open above ("beyond the budget"). The generator is seeded: the same input gives the
//!   same interval.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Bootstrap resamples per interval (the report's, and the fits').
pub const RESAMPLES: usize = 1000;

/// Relative tolerance when comparing a product of survival factors with `1 - q`.
const TOL: f64 = 1e-9;

/// A Kaplan-Meier survival curve.
#[derive(Clone, Debug, PartialEq)]
pub struct KaplanMeier {
    /// `(event time, S just after it)` at each distinct event time, increasing.
    steps: Vec<(f64, f64)>,
    /// Censoring times, increasing (for marks on a plot).
    censored: Vec<f64>,
    /// Number of observations.
    n: usize,
    /// The largest observation, solved or not (the curve is known up to here).
    end: f64,
}

impl KaplanMeier {
    /// The product-limit estimate from `(time, solved)` observations; unsolved ones are
    /// right-censored at their time. Non-finite times are treated as censored at `+inf`.
    pub fn new(obs: &[(f64, bool)]) -> Self {
        let mut v: Vec<(f64, bool)> =
            obs.iter().map(|&(t, e)| if t.is_finite() { (t, e) } else { (f64::INFINITY, false) }).collect();
        // Events before censorings at equal times.
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        let n = v.len();
        let mut steps = Vec::new();
        let mut censored = Vec::new();
        let mut s = 1.0;
        let mut i = 0;
        while i < n {
            let t = v[i].0;
            let at_risk = n - i;
            let mut d = 0;
            while i < n && v[i].0 == t && v[i].1 {
                d += 1;
                i += 1;
            }
            if d > 0 {
                s *= 1.0 - d as f64 / at_risk as f64;
                steps.push((t, s));
            }
            while i < n && v[i].0 == t && !v[i].1 {
                censored.push(t);
                i += 1;
            }
        }
        let end = v.last().map_or(0.0, |o| o.0);
        KaplanMeier { steps, censored, n, end }
    }

    /// `S(t)`: the estimated probability that a run is still unsolved at time `t` (solves at
    /// exactly `t` included).
    pub fn survival(&self, t: f64) -> f64 {
        self.steps.iter().take_while(|s| s.0 <= t).last().map_or(1.0, |s| s.1)
    }

    /// The run-time distribution: the estimated fraction of runs solved by time `t`.
    pub fn solved_by(&self, t: f64) -> f64 {
        1.0 - self.survival(t)
    }

    /// Quantile `q` in (0, 1]: the smallest event time with `S(t) <= 1 - q`, or `None` when
    /// the curve never falls that low (the quantile is beyond the budget).
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let target = 1.0 - q;
        self.steps.iter().find(|s| s.1 <= target + TOL * target.abs().max(1.0)).map(|s| s.0)
    }

    /// The quartiles `[q1, median, q3]`.
    pub fn quartiles(&self) -> [Option<f64>; 3] {
        [self.quantile(0.25), self.quantile(0.5), self.quantile(0.75)]
    }

    /// `(event time, S just after)` at each distinct event time.
    pub fn steps(&self) -> &[(f64, f64)] {
        &self.steps
    }

    /// The censoring times, increasing.
    pub fn censored(&self) -> &[f64] {
        &self.censored
    }

    /// Observations, censored ones included.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there is no observation.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The largest observation.
    pub fn end(&self) -> f64 {
        self.end
    }
}

/// The inverse of the empirical distribution function: the `ceil(q n)`-th smallest value
/// (the KM quantile of an uncensored sample).
pub fn empirical_quantile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let k = ((q * s.len() as f64) - TOL).ceil().max(1.0) as usize;
    Some(s[k.min(s.len()) - 1])
}

/// A 95% percentile-bootstrap interval `[lo, hi]` of the KM quantile `q`, from `resamples`
/// resamples of the observations drawn with a generator seeded by `seed`. `None` at an end
/// means `+inf`: beyond the budget. An empty sample gives `[None, None]`.
pub fn bootstrap_quantile_ci(obs: &[(f64, bool)], q: f64, resamples: usize, seed: u64) -> [Option<f64>; 2] {
    if obs.is_empty() || resamples == 0 {
        return [None, None];
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut sample = vec![(0.0, false); obs.len()];
    let mut est: Vec<f64> = (0..resamples)
        .map(|_| {
            for s in sample.iter_mut() {
                *s = obs[rng.random_range(0..obs.len())];
            }
            KaplanMeier::new(&sample).quantile(q).unwrap_or(f64::INFINITY)
        })
        .collect();
    est.sort_by(|a, b| a.total_cmp(b));
    let pick = |p: f64| {
        let v = est[(((p * est.len() as f64) - TOL).ceil().max(1.0) as usize).min(est.len()) - 1];
        v.is_finite().then_some(v)
    };
    [pick(0.025), pick(0.975)]
}

/// The 95% Wilson score interval of a binomial proportion `k / n` (E. B. Wilson, *Probable
/// inference, the law of succession, and statistical inference*, J. Amer. Statist. Assoc.
/// 22:209 (1927)). Unlike a bootstrap of the proportion, it is not degenerate at 0/n and n/n.
pub fn wilson_interval(k: usize, n: usize) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let z = 1.959_963_984_540_054;
    let (n, p) = (n as f64, k as f64 / n as f64);
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z / denom * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

/// An ordinary least-squares line `y = intercept + slope * x`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct LineFit {
    /// The slope.
    pub slope: f64,
    /// `y` at `x = 0`.
    pub intercept: f64,
    /// 95% t interval of the slope (needs at least three points at two or more distinct x).
    pub slope_ci: Option<[f64; 2]>,
    /// Points fitted.
    pub points: usize,
}

/// Least squares of `y` on `x`; `None` with fewer than two distinct `x`. The slope's interval
/// is `slope ± t(0.975, n - 2) * s / sqrt(Sxx)` with `s^2 = SSE / (n - 2)`.
pub fn line_fit(pts: &[(f64, f64)]) -> Option<LineFit> {
    let n = pts.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let slope_ci = (n >= 3).then(|| {
        let sse: f64 = pts.iter().map(|p| (p.1 - intercept - slope * p.0).powi(2)).sum();
        let se = (sse / (nf - 2.0) / sxx).sqrt();
        let half = student_t_quantile(0.975, nf - 2.0) * se;
        [slope - half, slope + half]
    });
    Some(LineFit { slope, intercept, slope_ci, points: n })
}

/// The `p` quantile of Student's t distribution with `df` degrees of freedom (`p` in
/// (0.5, 1)), by bisection on the CDF written with the regularized incomplete beta function.
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    let cdf = |t: f64| 1.0 - 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    let (mut lo, mut hi) = (0.0, 1.0);
    while cdf(hi) < p && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function `I_x(a, b)` (continued fraction, modified Lentz).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..500 {
        let m = m as f64;
        for k in 0..2 {
            let num = if k == 0 {
                m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m))
            } else {
                -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0))
            };
            d = 1.0 + num * d;
            if d.abs() < tiny {
                d = tiny;
            }
            c = 1.0 + num / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f / a
}

/// The pooled estimate of the mean work (or time) per solution of a memoryless method: the
/// censored maximum-likelihood estimate under exponential run lengths, the total spent over
/// all runs divided by the solutions. A run's length then does not matter, only the total, so
/// runs of any budget pool (W. Nelson, *Applied Life Data Analysis* (1982), ch. 7; the exact
/// interval is the one for time-censored exponential data).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Pooled {
    /// Runs pooled.
    pub runs: usize,
    /// Solutions among them.
    pub solutions: usize,
    /// The total spent over all runs, solved or not.
    pub total: f64,
    /// `total / solutions`; `None` without a solution.
    pub mean: Option<f64>,
    /// The exact 95% interval of the mean: `[2T / chi2(0.975; 2d + 2), 2T / chi2(0.025; 2d)]`.
    /// Without a solution, the one-sided 95% lower bound `2T / chi2(0.95; 2) = T / ln 20` and
    /// `None` above (the mean may be infinite).
    pub ci: [Option<f64>; 2],
}

/// The `p` quantile of the chi-square distribution with `df` degrees of freedom.
pub fn chi_square_quantile(p: f64, df: f64) -> f64 {
    use statrs::distribution::{ChiSquared, ContinuousCDF};
    ChiSquared::new(df).expect("positive degrees of freedom").inverse_cdf(p)
}

/// [`Pooled`] of `(spent, solved)` observations.
pub fn pooled(obs: &[(f64, bool)]) -> Pooled {
    let counts: Vec<(f64, u64)> = obs.iter().map(|&(t, s)| (t, u64::from(s))).collect();
    pooled_counts(&counts)
}

/// [`Pooled`] of `(spent, solutions)` observations: runs that may find several solutions
/// (rate mode, where each solved trial starts again). Under memoryless run lengths the
/// solutions of all runs together are a Poisson process in the work spent, so the estimate
/// (total / solutions) and its exact interval are those of [`pooled`] with `d` the
/// solutions counted (Nelson, as above); a run of one solution or none is the old case.
pub fn pooled_counts(obs: &[(f64, u64)]) -> Pooled {
    let total: f64 = obs.iter().map(|o| o.0).sum();
    let d = obs.iter().map(|o| o.1).sum::<u64>() as usize;
    let (mean, ci) = if d == 0 {
        let lower = (total > 0.0).then(|| 2.0 * total / chi_square_quantile(0.95, 2.0));
        (None, [lower, None])
    } else {
        let df = 2.0 * d as f64;
        let lo = 2.0 * total / chi_square_quantile(0.975, df + 2.0);
        let hi = 2.0 * total / chi_square_quantile(0.025, df);
        (Some(total / d as f64), [Some(lo), Some(hi)])
    };
    Pooled { runs: obs.len(), solutions: d, total, mean, ci }
}

/// One stratum of [`stratified_rate_test`]: the work two groups spent on it and the
/// solutions each found, `[(work, solutions); 2]`.
pub type Stratum = [(f64, u64); 2];

/// The conditional test that two groups (two machines) find solutions at the same rate per
/// unit of work, stratified: each stratum (an instance) may have its own rate, and only the
/// ratio between the groups is tested. Under the null, given a stratum's `n` solutions, the
/// first group's count is binomial with `n` and its share of the stratum's work. The test
/// statistic is the first group's total, whose distribution is the convolution of those
/// binomials: the test against a ratio common to the strata (a machine slower on one
/// instance only is diluted by the others).
///
/// Returns the two-sided p-value: exact up to [`EXACT_UP_TO`] solutions in all (the
/// probability, under the null, of a total no more likely than the one observed), the normal
/// approximation with a continuity correction beyond (where the exact convolution's cost, the
/// square of the solutions, grows large and the approximation is close). 1 when no stratum
/// has work on both sides and a solution (nothing to test); a stratum where one group spent
/// nothing says nothing about the ratio and is left out.
pub fn stratified_rate_test(strata: &[Stratum]) -> f64 {
    use statrs::distribution::{Binomial, ContinuousCDF, Discrete, Normal};
    let used: Vec<(f64, u64, u64)> = strata
        .iter()
        .filter(|&&[(ta, na), (tb, nb)]| ta > 0.0 && tb > 0.0 && na + nb > 0)
        .map(|&[(ta, na), (tb, nb)]| (ta / (ta + tb), na, na + nb))
        .collect();
    if used.is_empty() {
        return 1.0;
    }
    let observed: u64 = used.iter().map(|u| u.1).sum();
    if used.iter().map(|u| u.2).sum::<u64>() > EXACT_UP_TO {
        let mean: f64 = used.iter().map(|&(p, _, n)| n as f64 * p).sum();
        let var: f64 = used.iter().map(|&(p, _, n)| n as f64 * p * (1.0 - p)).sum();
        if var <= 0.0 {
            return 1.0;
        }
        let z = ((observed as f64 - mean).abs() - 0.5).max(0.0) / var.sqrt();
        return (2.0 * Normal::standard().sf(z)).min(1.0);
    }
    let mut dist = vec![1.0f64];
    for &(p, _, n) in &used {
        let b = Binomial::new(p, n).expect("a share in [0, 1]");
        let pmf: Vec<f64> = (0..=n).map(|k| b.pmf(k)).collect();
        let mut next = vec![0.0; dist.len() + pmf.len() - 1];
        for (i, &d) in dist.iter().enumerate() {
            for (k, &q) in pmf.iter().enumerate() {
                next[i + k] += d * q;
            }
        }
        dist = next;
    }
    // Ties in floating point: a total within a relative 1e-7 of the observed one counts as
    // equally likely.
    let at = dist[observed as usize] * (1.0 + 1e-7);
    dist.iter().filter(|&&d| d <= at).sum::<f64>().min(1.0)
}

/// The most solutions [`stratified_rate_test`] convolves exactly.
pub const EXACT_UP_TO: u64 = 4000;

/// The Kolmogorov-Smirnov distance between the Kaplan-Meier estimate of `obs` and the
/// exponential distribution of mean `mean`, over the range the curve is known on (up to the
/// largest observation).
pub fn ks_exponential(obs: &[(f64, bool)], mean: f64) -> f64 {
    let km = KaplanMeier::new(obs);
    let cdf = |t: f64| if t.is_finite() { 1.0 - (-t / mean).exp() } else { 1.0 };
    let mut d: f64 = 0.0;
    let mut before = 0.0; // the KM estimate of F just before the current step
    for &(t, s) in km.steps() {
        let f = cdf(t);
        d = d.max((f - before).abs()).max((f - (1.0 - s)).abs());
        before = 1.0 - s;
    }
    // The last flat stretch, up to the largest observation.
    d.max((cdf(km.end()) - before).abs())
}

/// A goodness-of-fit check of exponential (memoryless) run lengths.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct ExpFit {
    /// [`ks_exponential`] at the pooled mean.
    pub ks: f64,
    /// Its p-value by parametric bootstrap: the fraction of samples drawn from the fitted
    /// exponential, censored where each run would have been, refitted, whose distance is at
    /// least `ks` (with the usual +1 in numerator and denominator).
    pub p_value: f64,
    /// `p_value < 0.05`: the run lengths are not memoryless, and the pooled mean misleads.
    pub rejected: bool,
}

/// The smallest number of solutions for which [`exp_fit`] tests the fit.
pub const MIN_SOLUTIONS_FOR_FIT: usize = 10;

/// Tests `obs` against the exponential at its pooled mean. `censor_at[i]` is where run `i`
/// would have been cut off had it not solved (its budget, in the same unit; `+inf` when
/// unknown); for an unsolved run it is its own value. The parameter is estimated from the
/// data, so the KS distance's usual tables do not apply (H. W. Lilliefors, J. Amer. Statist.
/// Assoc. 64:387 (1969)), and censoring changes them again: the p-value comes from a
/// parametric bootstrap that repeats both, seeded by `seed`. `None` with fewer than
/// [`MIN_SOLUTIONS_FOR_FIT`] solutions. Panics when `obs` and `censor_at` differ in length
/// (the report builds both from the same runs).
pub fn exp_fit(obs: &[(f64, bool)], censor_at: &[f64], resamples: usize, seed: u64) -> Option<ExpFit> {
    assert_eq!(obs.len(), censor_at.len());
    let p = pooled(obs);
    let mean = p.mean.filter(|_| p.solutions >= MIN_SOLUTIONS_FOR_FIT)?;
    let ks = ks_exponential(obs, mean);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut sample = vec![(0.0, false); obs.len()];
    let (mut at_least, mut valid) = (0usize, 0usize);
    for _ in 0..resamples {
        for (s, &c) in sample.iter_mut().zip(censor_at) {
            let u: f64 = rng.random::<f64>();
            let x = -mean * (1.0 - u).ln();
            *s = if x <= c { (x, true) } else { (c, false) };
        }
        let Some(m) = pooled(&sample).mean else { continue };
        valid += 1;
        if ks_exponential(&sample, m) >= ks {
            at_least += 1;
        }
    }
    let p_value = (at_least + 1) as f64 / (valid + 1) as f64;
    Some(ExpFit { ks, p_value, rejected: p_value < 0.05 })
}

/// A stable 64-bit FNV-1a hash, to derive bootstrap seeds from cell names.
pub fn stable_hash(s: &str) -> u64 {
    concur::hash::Fnv1a::new().bytes(s.as_bytes()).finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn chi_square_quantiles_match_tables() {
        assert!(close(chi_square_quantile(0.95, 2.0), 5.991_465, 1e-6));
        assert!(close(chi_square_quantile(0.975, 10.0), 20.483_18, 1e-6));
        assert!(close(chi_square_quantile(0.025, 8.0), 2.179_731, 1e-6));
    }

    /// One stratum is the exact two-sided binomial test (checked against a table-free brute
    /// force: every outcome no more likely than the observed one); strata that cannot speak
    /// are left out; under the null, with rates that differ by stratum, it rejects at 5 % no
    /// more than 5 % of the time, within three standard errors over 1,000 campaigns (it is
    /// exact), and it finds a twofold difference in most campaigns of this size.
    #[test]
    fn the_stratified_rate_test_is_exact_and_keeps_its_level() {
        let binom = |n: u64, p: f64, k: u64| {
            let ln_c = ln_gamma(n as f64 + 1.0) - ln_gamma(k as f64 + 1.0) - ln_gamma((n - k) as f64 + 1.0);
            (ln_c + k as f64 * p.ln() + (n - k) as f64 * (1.0 - p).ln()).exp()
        };
        for (na, nb, ta, tb) in [(3, 9, 1.0, 1.0), (0, 7, 2.0, 1.0), (12, 2, 1.0, 3.0), (5, 5, 1.0, 1.0)] {
            let (n, p) = (na + nb, ta / (ta + tb));
            let at = binom(n, p, na) * (1.0 + 1e-7);
            let brute: f64 = (0..=n).map(|k| binom(n, p, k)).filter(|&d| d <= at).sum();
            let got = stratified_rate_test(&[[(ta, na), (tb, nb)], [(0.0, 0), (5.0, 4)], [(1.0, 0), (1.0, 0)]]);
            assert!(close(got, brute.min(1.0), 1e-9), "{na} {nb}: {got} vs {brute}");
        }
        assert_eq!(stratified_rate_test(&[]), 1.0);
        // Past the exact convolution's reach the normal approximation takes over: at 3,000
        // solutions, just inside it, the two agree within a tenth of the p-value.
        let big: Vec<Stratum> =
            [(1.0, 3.0, 490, 1510), (2.0, 1.0, 630, 370)].map(|(ta, tb, na, nb)| [(ta, na), (tb, nb)]).to_vec();
        let exact = stratified_rate_test(&big);
        let (mean, var) = (2000.0 * 0.25 + 1000.0 * 2.0 / 3.0, 2000.0 * 0.25 * 0.75 + 1000.0 * 2.0 / 9.0);
        use statrs::distribution::{ContinuousCDF, Normal};
        let normal = 2.0 * Normal::standard().sf(((1120.0f64 - mean).abs() - 0.5) / f64::sqrt(var));
        assert!(exact > 0.01 && exact < 0.5 && (exact - normal).abs() < 0.1 * exact, "{exact} vs {normal}");
        let twice: Vec<Stratum> = big.iter().map(|&[(ta, na), (tb, nb)]| [(ta, 2 * na), (tb, 2 * nb)]).collect();
        let approx = stratified_rate_test(&twice);
        let z = ((2240.0f64 - 2.0 * mean).abs() - 0.5) / f64::sqrt(2.0 * var);
        assert!((approx - 2.0 * Normal::standard().sf(z)).abs() < 1e-12, "{approx}");
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let poisson = |rng: &mut Xoshiro256PlusPlus, mean: f64| {
            let (mut k, mut t) = (0u64, -(1.0 - rng.random::<f64>()).ln());
            while t < mean {
                k += 1;
                t -= (1.0 - rng.random::<f64>()).ln();
            }
            k
        };
        let campaign = |rng: &mut Xoshiro256PlusPlus, ratio: f64| {
            // Eight instances whose rates span a factor of 100; the second group spends a
            // third of the first's work on each, at `ratio` times its rate.
            let strata: Vec<Stratum> = (0..8)
                .map(|i| {
                    let rate = 10f64.powf(i as f64 / 3.5);
                    let (ta, tb) = (3.0, 1.0);
                    [(ta, poisson(rng, rate * ta)), (tb, poisson(rng, ratio * rate * tb))]
                })
                .collect();
            stratified_rate_test(&strata)
        };
        let rejected =
            |rng: &mut Xoshiro256PlusPlus, ratio: f64| (0..1000).filter(|_| campaign(rng, ratio) < 0.05).count();
        let null = rejected(&mut rng, 1.0);
        // 5 % of 1,000 is 50, and three standard errors above it 71.
        assert!(null <= 71, "{null} of 1000 rejected under the null");
        let twofold = rejected(&mut rng, 2.0);
        assert!(twofold >= 750, "{twofold} of 1000 found a twofold difference");
    }

    #[test]
    fn pooled_mean_is_total_over_solutions_with_the_exact_interval() {
        let p = pooled(&[(10.0, true), (20.0, false), (30.0, true)]);
        assert_eq!((p.runs, p.solutions), (3, 2));
        assert!(close(p.total, 60.0, 1e-12));
        assert!(close(p.mean.unwrap(), 30.0, 1e-12));
        // 2T / chi2(0.975; 6) and 2T / chi2(0.025; 4), from tables: 14.449 38 and 0.484 419.
        assert!(close(p.ci[0].unwrap(), 120.0 / 14.449_38, 1e-5));
        assert!(close(p.ci[1].unwrap(), 120.0 / 0.484_419, 1e-5));
    }

    #[test]
    fn no_solution_gives_the_one_sided_bound() {
        // 24 runs of 600 s with no solution: the mean exceeds 14,400 / ln 20 = 4,807 s (95%).
        let p = pooled(&vec![(600.0, false); 24]);
        assert_eq!(p.mean, None);
        assert_eq!(p.ci[1], None);
        let lower = p.ci[0].unwrap();
        assert!(close(lower, 14_400.0 / 20f64.ln(), 1e-9), "{lower}");
        // At a true mean equal to the bound, no solution in the total has probability 5%.
        assert!(close((-14_400.0 / lower).exp(), 0.05, 1e-9));
        assert_eq!(pooled(&[]).ci, [None, None]);
    }

    fn exp_sample(rng: &mut Xoshiro256PlusPlus, mean: f64) -> f64 {
        -mean * (1.0 - rng.random::<f64>()).ln()
    }

    #[test]
    fn the_pooled_interval_covers_a_known_mean_95_percent_of_the_time() {
        // 400 ladders of 20 runs with mixed budgets (0.5 and 2.0, as when short and long
        // campaigns pool), true mean 1.5.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let (mut covered, mut tried) = (0, 0);
        for _ in 0..400 {
            let obs: Vec<(f64, bool)> = (0..20)
                .map(|i| {
                    let c = if i % 2 == 0 { 0.5 } else { 2.0 };
                    let x = exp_sample(&mut rng, 1.5);
                    if x <= c { (x, true) } else { (c, false) }
                })
                .collect();
            let p = pooled(&obs);
            if let [Some(lo), Some(hi)] = p.ci {
                tried += 1;
                covered += usize::from(lo <= 1.5 && 1.5 <= hi);
            }
        }
        let rate = covered as f64 / tried as f64;
        assert!(tried >= 390 && (0.93..=0.99).contains(&rate), "coverage {rate} of {tried}");
    }

    #[test]
    fn exponential_run_lengths_pass_the_fit_check() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut rejected = 0;
        for rep in 0..20 {
            let obs: Vec<(f64, bool)> = (0..100)
                .map(|_| {
                    let x = exp_sample(&mut rng, 1.0);
                    if x <= 2.0 { (x, true) } else { (2.0, false) }
                })
                .collect();
            let fit = exp_fit(&obs, &[2.0; 100], 400, rep).expect("enough solutions");
            rejected += usize::from(fit.rejected);
        }
        // About 1 in 20 at the 5% level; 4 or more would be a 1.6% event.
        assert!(rejected <= 3, "{rejected} of 20 exponential samples flagged");
    }

    #[test]
    fn heavy_tailed_run_lengths_are_flagged() {
        // Weibull with shape 0.3: many quick solves and a heavy tail (a decreasing hazard,
        // where restarts pay and pooled totals mislead).
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
        let mut flagged = 0;
        for rep in 0..10 {
            let obs: Vec<(f64, bool)> = (0..100)
                .map(|_| {
                    let x = exp_sample(&mut rng, 1.0).powf(1.0 / 0.3);
                    if x <= 1.0 { (x, true) } else { (1.0, false) }
                })
                .collect();
            flagged += usize::from(exp_fit(&obs, &[1.0; 100], 400, rep).unwrap().rejected);
        }
        assert!(flagged >= 9, "only {flagged} of 10 heavy-tailed samples flagged");
        // Too few solutions: no check.
        assert_eq!(exp_fit(&[(1.0, true), (2.0, false)], &[2.0, 2.0], 100, 0), None);
    }

    #[test]
    fn km_matches_a_hand_computed_censored_sample() {
        // 1, 2+, 3, 3, 4+, 5: S = 5/6 after 1; 2 of 4 at risk solve at 3: 5/6 * 2/4 = 5/12;
        // the one left at 5 solves: 0.
        let km = KaplanMeier::new(&[(3.0, true), (2.0, false), (1.0, true), (5.0, true), (4.0, false), (3.0, true)]);
        assert_eq!(km.steps().len(), 3);
        assert!(close(km.survival(0.5), 1.0, 1e-12));
        assert!(close(km.survival(1.0), 5.0 / 6.0, 1e-12));
        assert!(close(km.survival(2.5), 5.0 / 6.0, 1e-12));
        assert!(close(km.survival(3.0), 5.0 / 12.0, 1e-12));
        assert!(close(km.survival(4.5), 5.0 / 12.0, 1e-12));
        assert_eq!(km.survival(5.0), 0.0);
        assert_eq!(km.quartiles(), [Some(3.0), Some(3.0), Some(5.0)]);
        assert_eq!(km.censored(), &[2.0, 4.0]);
        assert_eq!((km.len(), km.end()), (6, 5.0));
        // The naive median over solved runs only (1, 3, 3, 5) would be 3 as well, but its q1
        // would be 1, q3 5; the censored 2 and 4 move q1 from 1 to 3.
    }

    #[test]
    fn ties_put_solves_before_censorings() {
        // 1, 2, 2+, 3: the run censored at 2 is at risk at 2, so S(2) = 3/4 * 2/3 = 1/2
        // (censored first it would be 3/4 * 1/2 = 3/8).
        let km = KaplanMeier::new(&[(2.0, false), (1.0, true), (2.0, true), (3.0, true)]);
        assert!(close(km.survival(2.0), 0.5, 1e-12), "{}", km.survival(2.0));
        assert_eq!(km.quantile(0.5), Some(2.0));
        assert_eq!(km.quantile(0.6), Some(3.0));
    }

    #[test]
    fn the_fraction_solved_within_budget_is_the_curves_last_level() {
        // Three of five solved, two censored at the 10 s budget: the median is the third
        // solve, q3 is beyond the budget.
        let km = KaplanMeier::new(&[(6.6, true), (10.0, false), (8.8, true), (9.2, true), (10.0, false)]);
        assert!(close(km.solved_by(10.0), 0.6, 1e-12));
        assert_eq!(km.quartiles(), [Some(8.8), Some(9.2), None]);
    }

    #[test]
    fn all_censored_gives_undefined_quantiles_and_open_intervals() {
        let obs = [(10.0, false); 5];
        let km = KaplanMeier::new(&obs);
        assert_eq!(km.quartiles(), [None, None, None]);
        assert_eq!(km.solved_by(1e9), 0.0);
        assert_eq!(bootstrap_quantile_ci(&obs, 0.5, 200, 1), [None, None]);
        assert_eq!(KaplanMeier::new(&[]).quantile(0.5), None);
        assert_eq!(bootstrap_quantile_ci(&[], 0.5, 200, 1), [None, None]);
    }

    #[test]
    fn all_solved_reduces_to_empirical_quantiles() {
        let v = [4.0, 1.0, 3.0, 2.0];
        let obs: Vec<(f64, bool)> = v.iter().map(|&t| (t, true)).collect();
        // n = 4: q1 is the 1st, the median the 2nd, q3 the 3rd smallest.
        assert_eq!(KaplanMeier::new(&obs).quartiles(), [Some(1.0), Some(2.0), Some(3.0)]);
        assert_eq!(empirical_quantile(&v, 0.5), Some(2.0));
        assert_eq!(empirical_quantile(&[5.0, 1.0, 3.0], 0.5), Some(3.0));
    }

    /// Exponential variates with the given median by inversion of a seeded uniform.
    fn exponential(n: usize, median: f64, seed: u64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n).map(|_| -median / std::f64::consts::LN_2 * (1.0 - rng.random_range(0.0..1.0f64)).ln()).collect()
    }

    #[test]
    fn bootstrap_interval_covers_the_true_median_of_a_large_exponential_sample() {
        let true_median = 2.0;
        for (seed, budget) in [(1u64, f64::INFINITY), (2, 4.0), (3, 3.0)] {
            // Censored at a budget above the median (25% or 35% of runs unsolved).
            let obs: Vec<(f64, bool)> = exponential(400, true_median, seed)
                .into_iter()
                .map(|t| if t > budget { (budget, false) } else { (t, true) })
                .collect();
            let [lo, hi] = bootstrap_quantile_ci(&obs, 0.5, 1000, 7);
            let (lo, hi) = (lo.unwrap(), hi.unwrap());
            assert!(lo < true_median && true_median < hi, "[{lo}, {hi}] misses {true_median}");
            // Roughly +-0.17 * median for n = 400: not a vacuous interval.
            assert!(hi - lo < 0.5 * true_median && hi - lo > 0.1 * true_median, "[{lo}, {hi}]");
            // Seeded: the same interval again.
            assert_eq!(bootstrap_quantile_ci(&obs, 0.5, 1000, 7), [Some(lo), Some(hi)]);
        }
    }

    #[test]
    fn bootstrap_interval_is_open_above_when_the_median_is_barely_reached() {
        // 3 solved of 5: many resamples hold fewer than half solved, so the upper end is +inf.
        let obs = [(1.0, true), (2.0, true), (3.0, true), (10.0, false), (10.0, false)];
        let [lo, hi] = bootstrap_quantile_ci(&obs, 0.5, 1000, 3);
        assert_eq!(lo, Some(1.0));
        assert_eq!(hi, None);
    }

    #[test]
    fn wilson_interval_matches_published_values() {
        let [lo, hi] = wilson_interval(0, 5);
        assert!(lo == 0.0 && close(hi, 0.4345, 1e-3), "{hi}");
        let [lo, hi] = wilson_interval(5, 5);
        assert!(close(lo, 0.5655, 1e-3) && hi == 1.0, "{lo}");
        let [lo, hi] = wilson_interval(3, 5);
        assert!(close(lo, 0.2307, 1e-3) && close(hi, 0.8824, 1e-3), "{lo} {hi}");
    }

    #[test]
    fn student_t_quantiles_match_tables() {
        for (df, t) in [(1.0, 12.7062), (2.0, 4.3027), (5.0, 2.5706), (10.0, 2.2281), (30.0, 2.0423), (1000.0, 1.9623)]
        {
            let got = student_t_quantile(0.975, df);
            assert!(close(got, t, 1e-4), "df {df}: {got} vs {t}");
        }
        assert!(close(student_t_quantile(0.95, 4.0), 2.1318, 1e-4));
    }

    #[test]
    fn line_fit_recovers_an_exact_line_and_a_hand_computed_interval() {
        let pts: Vec<(f64, f64)> = [9.0, 16.0, 25.0, 36.0].iter().map(|&a| (a, 0.5 + 0.3 * a)).collect();
        let f = line_fit(&pts).unwrap();
        assert!(close(f.slope, 0.3, 1e-12) && close(f.intercept, 0.5, 1e-12));
        let [lo, hi] = f.slope_ci.unwrap();
        assert!(close(lo, 0.3, 1e-9) && close(hi, 0.3, 1e-9));
        // x = 0..3, y = 0, 1, 1, 2: slope 0.6, intercept 0.1, SSE 0.2, se = sqrt(0.1 / 5),
        // t(0.975, 2) = 4.302653: 0.6 +- 0.608484.
        let f = line_fit(&[(0.0, 0.0), (1.0, 1.0), (2.0, 1.0), (3.0, 2.0)]).unwrap();
        assert!(close(f.slope, 0.6, 1e-12) && close(f.intercept, 0.1, 1e-12));
        let [lo, hi] = f.slope_ci.unwrap();
        assert!(close(lo, 0.6 - 0.608_484, 1e-5) && close(hi, 0.6 + 0.608_484, 1e-5), "{lo} {hi}");
        // Two points: a line but no interval; one x: no line.
        assert!(line_fit(&[(1.0, 1.0), (2.0, 3.0)]).unwrap().slope_ci.is_none());
        assert!(line_fit(&[(1.0, 1.0), (1.0, 3.0)]).is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// Without censoring the KM quantile is the empirical quantile.
        #[test]
        fn km_without_censoring_is_the_empirical_quantile(
            v in proptest::collection::vec(0u32..50, 1..40),
            q in 0.01f64..1.0,
        ) {
            let v: Vec<f64> = v.into_iter().map(f64::from).collect();
            let obs: Vec<(f64, bool)> = v.iter().map(|&t| (t, true)).collect();
            prop_assert_eq!(KaplanMeier::new(&obs).quantile(q), empirical_quantile(&v, q));
        }

        /// Censored at a common budget after every solve, the curve ends at the fraction
        /// solved, and the median exists exactly when at least half the runs solved.
        #[test]
        fn km_with_type_one_censoring_ends_at_the_fraction_solved(
            v in proptest::collection::vec((0u32..50, any::<bool>()), 1..40),
        ) {
            let budget = 100.0;
            let obs: Vec<(f64, bool)> = v.iter().map(|&(t, s)| if s { (f64::from(t), true) } else { (budget, false) }).collect();
            let km = KaplanMeier::new(&obs);
            let solved = v.iter().filter(|x| x.1).count();
            prop_assert!(close(km.solved_by(budget), solved as f64 / v.len() as f64, 1e-9));
            prop_assert_eq!(km.quantile(0.5).is_some(), 2 * solved >= v.len());
            // Censoring at the budget leaves the solved part of the curve as in the full
            // sample: the quantiles that exist are the empirical ones of all runs with
            // unsolved counted as +inf.
            let all: Vec<f64> = obs.iter().map(|&(t, s)| if s { t } else { f64::INFINITY }).collect();
            let emp = empirical_quantile(&all, 0.5).filter(|m| m.is_finite());
            prop_assert_eq!(km.quantile(0.5), emp);
        }
    }
}
