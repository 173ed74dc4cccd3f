//! Regression of one pooled rate on another over instances, with censoring and errors in
//! both variables: the statistics behind the report's "work per solution against hardness".
//!
//! - **Censored normal regression** ([`tobit`]): `y = a + b x + e`, `e ~ N(0, s^2)`, fitted
//!   by maximum likelihood where some `y` are known only to lie above a value (J. Tobin,
//!   *Estimation of relationships for limited dependent variables*, Econometrica 26:24
//!   (1958); here the censoring is from above the bound, "right-censored in `y`"). A point
//!   seen exactly contributes `ln phi((y - a - b x) / s) - ln s`, a point known only to lie
//!   above `y` contributes `ln(1 - Phi((y - a - b x) / s))`. The likelihood is maximised by
//!   Newton's method with a backtracking line search in the parameters `(a / s, b / s, 1 / s)`,
//!   in which the log-likelihood is globally concave (R. J. Olsen, *Note on the uniqueness of
//!   the maximum likelihood estimator for the Tobit model*, Econometrica 46:1211 (1978)), so
//!   the maximum found is the maximum. Without censoring it is least squares, with the
//!   maximum-likelihood spread `s^2 = SSE / n`.
//! - **Pooled counts as measurements** ([`Unit`], [`Measured`]): an axis value is `log10` of a
//!   pooled rate, total work over solutions found in it (`stats::pooled_counts`); no solution
//!   on the `y` axis makes the point censored at [`censor_point`], no solution on the `x` axis
//!   leaves the unit out (it cannot be placed).
//! - **Bootstrap** ([`regress_counts`]): B. Efron's percentile bootstrap (*Bootstrap methods:
//!   another look at the jackknife*, Ann. Statist. 7:1 (1979)) over units: a resample draws the
//!   units with replacement and refits. Each unit's counts go with it as observed: the noise of
//!   a count is already in the unit's residual about the line, which the resampling of units
//!   carries, so redrawing the counts too would count it twice. [`BootOptions::redraw`] turns
//!   on the older scheme that also redraws every measured count of each drawn unit as Poisson
//!   around its observed count with its work held fixed (a redrawn `y` count of 0 is censored,
//!   a redrawn `x` count of 0 drops the unit from that resample), which makes the intervals
//!   conservative. The 2.5% and 97.5% points of the refitted slopes and intercepts are the 95%
//!   intervals. A resample whose fit fails (too few points seen exactly) is counted and left
//!   out.
//!
//! What the bootstrap does and does not do about errors in `x`: it widens the intervals by
//! the noise of the `x` estimates, but does not remove the attenuation that noise causes in
//! the slope (the regression-dilution factor `var(x) / (var(x) + mean noise variance)`,
//! reported as [`CountRegression::reliability`]); with 10 solutions per `x` over several
//! decades of `x` the factor is above 0.99.

use super::stats;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Why a fit gave no line.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FitError {
    /// Too few points seen exactly (not censored), or all at one `x`.
    #[error("{seen} points seen exactly ({needed} needed, at two or more distinct x)")]
    TooFewPoints {
        /// Points seen exactly.
        seen: usize,
        /// The fewest the fit takes ([`MIN_SEEN`]).
        needed: usize,
    },
    /// A point with a coordinate that is NaN or infinite.
    #[error("a value is not finite (x = {x}, y = {y})")]
    NotFinite {
        /// Its `x`.
        x: f64,
        /// Its `y`.
        y: f64,
    },
    /// The points seen exactly lie on one line, so the likelihood has no maximum.
    #[error("the points seen exactly lie on one line: the residual spread is zero")]
    NoSpread,
    /// Newton's method did not converge in the given number of steps.
    #[error("the likelihood did not converge in {0} Newton steps")]
    NoConvergence(usize),
    /// Too few points seen exactly to place a knot with points on both sides
    /// (`curve::knot_range`).
    #[error("{seen} points seen exactly: too few for a knot ({needed} needed)")]
    NoKnot {
        /// Points seen exactly.
        seen: usize,
        /// The fewest a knot takes.
        needed: usize,
    },
}

/// A point of a censored regression: `y` seen exactly, or (`censored`) known only to lie
/// above `y`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Point {
    /// The point's `x`.
    pub x: f64,
    /// Its `y`, or with `censored` the value the true `y` is known to exceed.
    pub y: f64,
    /// Whether `y` is only a lower bound (the method found no solution).
    pub censored: bool,
}

/// A censored normal regression line ([`tobit`]).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Line {
    /// `a` of `y = a + b x`.
    pub intercept: f64,
    /// `b` of `y = a + b x`.
    pub slope: f64,
    /// The residual spread `s` (maximum likelihood).
    pub sigma: f64,
    /// The log-likelihood at the maximum.
    pub log_likelihood: f64,
    /// Points fitted, censored ones included.
    pub points: usize,
    /// Of them, the censored ones.
    pub censored: usize,
    /// Newton steps taken.
    pub iterations: usize,
}

impl Line {
    /// The line's `y` at `x`.
    pub fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }
}

/// The fewest points seen exactly that [`tobit`] fits.
pub const MIN_SEEN: usize = 3;
const MAX_STEPS: usize = 200;
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// `(ln(1 - Phi(z)), phi(z) / (1 - Phi(z)))`: the log upper tail of the standard normal and
/// its hazard. From `erfc` up to `z = 5`, beyond from the continued fraction of Mills' ratio
/// `(1 - Phi(z)) / phi(z) = 1 / (z + 1 / (z + 2 / (z + 3 / (z + ...))))` (Laplace), which
/// keeps both finite where `1 - Phi(z)` underflows.
pub fn upper_tail(z: f64) -> (f64, f64) {
    if z < 5.0 {
        let q = 0.5 * statrs::function::erf::erfc(z / std::f64::consts::SQRT_2);
        let ln_phi = -0.5 * z * z - LN_SQRT_2PI;
        (q.ln(), (ln_phi - q.ln()).exp())
    } else {
        let mut f = z;
        for k in (1..=60).rev() {
            f = z + k as f64 / f;
        }
        // Mills' ratio is 1 / f.
        (-0.5 * z * z - LN_SQRT_2PI - f.ln(), f)
    }
}

/// The log-likelihood, gradient and Hessian at Olsen's parameters `t = (alpha, beta, h)`
/// (`a = alpha / h`, `b = beta / h`, `s = 1 / h`), with `z = h y - alpha - beta x`.
fn likelihood(pts: &[Point], t: [f64; 3]) -> (f64, [f64; 3], [[f64; 3]; 3]) {
    let (mut l, mut g, mut hess) = (0.0, [0.0; 3], [[0.0; 3]; 3]);
    for p in pts {
        let z = t[2] * p.y - t[0] - t[1] * p.x;
        let d = [-1.0, -p.x, p.y];
        let (dl, d2l) = if p.censored {
            let (lq, hz) = upper_tail(z);
            l += lq;
            (-hz, -hz * (hz - z))
        } else {
            l += t[2].ln() - 0.5 * z * z - LN_SQRT_2PI;
            g[2] += 1.0 / t[2];
            hess[2][2] -= 1.0 / (t[2] * t[2]);
            (-z, -1.0)
        };
        for i in 0..3 {
            g[i] += dl * d[i];
            for j in 0..3 {
                hess[i][j] += d2l * d[i] * d[j];
            }
        }
    }
    (l, g, hess)
}

/// Solves `m v = r` for a 3x3 `m` by Gaussian elimination with partial pivoting; `None` when
/// `m` is singular.
fn solve3(mut m: [[f64; 3]; 3], mut r: [f64; 3]) -> Option<[f64; 3]> {
    for c in 0..3 {
        let p = (c..3).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))?;
        if m[p][c].abs() < 1e-300 {
            return None;
        }
        m.swap(c, p);
        r.swap(c, p);
        for i in c + 1..3 {
            let f = m[i][c] / m[c][c];
            for j in c..3 {
                m[i][j] -= f * m[c][j];
            }
            r[i] -= f * r[c];
        }
    }
    let mut v = [0.0; 3];
    for i in (0..3).rev() {
        let s: f64 = (i + 1..3).map(|j| m[i][j] * v[j]).sum();
        v[i] = (r[i] - s) / m[i][i];
    }
    v.iter().all(|x| x.is_finite()).then_some(v)
}

/// The censored normal regression of `y` on `x` (Tobin 1958) by maximum likelihood; see the
/// module's notes. Needs [`MIN_SEEN`] points seen exactly at two or more distinct `x`.
pub fn tobit(pts: &[Point]) -> Result<Line, FitError> {
    if let Some(p) = pts.iter().find(|p| !p.x.is_finite() || !p.y.is_finite()) {
        return Err(FitError::NotFinite { x: p.x, y: p.y });
    }
    let seen: Vec<&Point> = pts.iter().filter(|p| !p.censored).collect();
    let distinct = seen.iter().any(|p| p.x != seen[0].x);
    if seen.len() < MIN_SEEN || !distinct {
        return Err(FitError::TooFewPoints { seen: seen.len(), needed: MIN_SEEN });
    }
    // Centred, for the conditioning of the Newton steps; moved back at the end.
    let n = pts.len() as f64;
    let (mx, my) = (pts.iter().map(|p| p.x).sum::<f64>() / n, pts.iter().map(|p| p.y).sum::<f64>() / n);
    let c: Vec<Point> = pts.iter().map(|p| Point { x: p.x - mx, y: p.y - my, censored: p.censored }).collect();
    // Start from least squares of the points seen exactly.
    let start = stats::line_fit(&seen.iter().map(|p| (p.x - mx, p.y - my)).collect::<Vec<_>>())
        .ok_or(FitError::TooFewPoints { seen: seen.len(), needed: MIN_SEEN })?;
    let sse: f64 = seen.iter().map(|p| (p.y - my - start.intercept - start.slope * (p.x - mx)).powi(2)).sum();
    let s0 = (sse / seen.len() as f64).sqrt();
    let spread = seen.iter().map(|p| (p.y - my).abs()).fold(0.0, f64::max).max(1.0);
    if s0 <= 1e-12 * spread {
        return Err(FitError::NoSpread);
    }
    let mut t = [start.intercept / s0, start.slope / s0, 1.0 / s0];
    let (mut l, mut g, mut hess) = likelihood(&c, t);
    for step in 1..=MAX_STEPS {
        // Newton direction: H d = -g (H negative definite).
        let Some(d) = solve3(hess, g.map(|v| -v)) else { return Err(FitError::NoConvergence(step)) };
        let slope: f64 = (0..3).map(|i| g[i] * d[i]).sum();
        if !slope.is_finite() {
            return Err(FitError::NoConvergence(step));
        }
        // The Newton decrement g.d: what a full step would gain, to second order.
        let done = |tol: f64| slope.abs() < tol * (1.0 + l.abs());
        let finish = |t: [f64; 3], l: f64| {
            let (sigma, a, b) = (1.0 / t[2], t[0] / t[2], t[1] / t[2]);
            if sigma <= 1e-12 * spread {
                return Err(FitError::NoSpread);
            }
            Ok(Line {
                intercept: a + my - b * mx,
                slope: b,
                sigma,
                log_likelihood: l,
                points: pts.len(),
                censored: pts.len() - seen.len(),
                iterations: step - 1,
            })
        };
        if done(1e-12) {
            return finish(t, l);
        }
        let mut u = 1.0;
        loop {
            let cand = [t[0] + u * d[0], t[1] + u * d[1], t[2] + u * d[2]];
            if cand[2] > 0.0 {
                let (lc, gc, hc) = likelihood(&c, cand);
                if lc.is_finite() && lc >= l + 1e-4 * u * slope {
                    (t, l, g, hess) = (cand, lc, gc, hc);
                    break;
                }
            }
            u *= 0.5;
            if u < 1e-12 {
                // No step gains within rounding: at the maximum if the decrement is small.
                return if done(1e-8) { finish(t, l) } else { Err(FitError::NoConvergence(step)) };
            }
        }
        if t[2] > 1e12 / spread {
            return Err(FitError::NoSpread);
        }
    }
    Err(FitError::NoConvergence(MAX_STEPS))
}

/// Where a pooled rate with no solution is censored in a regression, as a multiple of the work
/// spent: `e^gamma` (Euler's constant), about 1.78. With no solution in work `T` at mean work
/// per solution `mu` the likelihood is `exp(-T / mu)`, a Gumbel distribution function in
/// `ln mu` of location `ln T` and scale 1; a step at its mean, `ln T + gamma`, is the step that
/// matches it to first order, so "the true value lies above `log10(T e^gamma)`" is the
/// censored-regression form of "none found in `T`". The report's 95% lower bound `T / ln 20`
/// (0.33 `T`) states something weaker, and as a censoring point it pulls a fit down where
/// many points are censored (the module's tests measure it).
pub const CENSOR_FACTOR: f64 = 1.781_072_417_990_198;

/// The censoring point, in `log10`, of a pooled rate of `total` work with no solution.
pub fn censor_point(total: f64, factor: f64) -> f64 {
    (total * factor).log10()
}

/// A pooled count: `solutions` found in `total` work (`stats::pooled_counts`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Measured {
    /// The work pooled over the runs (trial-iterations or nodes).
    pub total: f64,
    /// The solutions found in it.
    pub solutions: u64,
}

impl Measured {
    /// `log10(total / solutions)`; `None` without a solution.
    pub fn log10_mean(&self) -> Option<f64> {
        (self.solutions > 0 && self.total > 0.0).then(|| (self.total / self.solutions as f64).log10())
    }
}

/// An `x` value: a pooled count, or known exactly (a count of solutions).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Axis {
    /// A pooled count, its `x` the `log10` of work per solution (with the noise of its count).
    Measured(Measured),
    /// A value known exactly, in the units of the fit's `x` (the `log10` of a solution count).
    Exact(f64),
}

/// One unit of a regression (an instance): `x`, and `y` as a pooled count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unit {
    /// The unit's `x`.
    pub x: Axis,
    /// The unit's `y` count; censored in the fit without a solution.
    pub y: Measured,
}

/// How [`regress_counts`] runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BootOptions {
    /// Bootstrap resamples (0: the line alone, no intervals).
    pub resamples: usize,
    /// The seed of the resampling; the same seed gives the same intervals.
    pub seed: u64,
    /// [`CENSOR_FACTOR`] unless a comparison asks for another.
    pub censor_factor: f64,
    /// Whether a resample also redraws each drawn unit's counts as Poisson (off by default:
    /// the resampling of units already carries each unit's count noise, in its residual).
    pub redraw: bool,
}

impl Default for BootOptions {
    fn default() -> Self {
        BootOptions { resamples: stats::RESAMPLES, seed: 0, censor_factor: CENSOR_FACTOR, redraw: false }
    }
}

/// A fitted line of pooled counts with its bootstrap.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CountRegression {
    /// The line fitted to every unit.
    pub line: Line,
    /// Units that could be placed (an `x` count above 0).
    pub units: usize,
    /// Units left out: no solution on the `x` axis.
    pub left_out: usize,
    /// 95% percentile-bootstrap intervals.
    pub slope_ci: [f64; 2],
    /// The 95% interval of the intercept.
    pub intercept_ci: [f64; 2],
    /// Resamples drawn.
    pub resamples: usize,
    /// Resamples whose fit failed (left out of the intervals).
    pub failed: usize,
    /// `1 - mean(noise variance of x) / var(x)`, the noise variance of a measured `x` being
    /// `(log10 e)^2 / solutions`: the factor by which noise in `x` attenuates the slope (1 for
    /// exact `x`).
    pub reliability: f64,
    /// `(intercept, slope, sigma)` of each resample whose fit succeeded, for intervals of
    /// functions of the line.
    #[serde(skip)]
    pub replicates: Vec<[f64; 3]>,
}

/// The points of `units` (censored where `y` has no solution; a unit without an `x` solution
/// is left out), and how many were left out.
pub fn points(units: &[Unit], censor_factor: f64) -> (Vec<Point>, usize) {
    let mut out = Vec::with_capacity(units.len());
    let mut left = 0;
    for u in units {
        let x = match u.x {
            Axis::Exact(x) => Some(x),
            Axis::Measured(m) => m.log10_mean(),
        };
        let Some(x) = x else {
            left += 1;
            continue;
        };
        match u.y.log10_mean() {
            Some(y) => out.push(Point { x, y, censored: false }),
            None if u.y.total > 0.0 => out.push(Point { x, y: censor_point(u.y.total, censor_factor), censored: true }),
            None => left += 1,
        }
    }
    (out, left)
}

/// A Poisson variate of mean `mu`: by multiplying uniforms below 10 (Knuth), else by
/// W. Hörmann's transformed rejection with squeeze, PTRS (*The transformed rejection method for
/// generating Poisson random variables*, Insurance: Mathematics and Economics 12:39 (1993)).
pub fn poisson(rng: &mut Xoshiro256PlusPlus, mu: f64) -> u64 {
    if mu <= 0.0 || !mu.is_finite() {
        return 0;
    }
    if mu < 10.0 {
        let limit = (-mu).exp();
        let (mut k, mut p) = (0u64, rng.random::<f64>());
        while p > limit {
            k += 1;
            p *= rng.random::<f64>();
        }
        return k;
    }
    let smu = mu.sqrt();
    let b = 0.931 + 2.53 * smu;
    let a = -0.059 + 0.02483 * b;
    let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    let ln_mu = mu.ln();
    loop {
        let u = rng.random::<f64>() - 0.5;
        let v = rng.random::<f64>();
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + mu + 0.43).floor();
        if us >= 0.07 && v <= vr {
            return k as u64;
        }
        if k < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        let lhs = v.ln() + inv_alpha.ln() - (a / (us * us) + b).ln();
        let rhs = -mu + k * ln_mu - statrs::function::gamma::ln_gamma(k + 1.0);
        if lhs <= rhs {
            return k as u64;
        }
    }
}

/// A standard normal variate (Box and Muller).
pub fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u = 1.0 - rng.random::<f64>();
    let v = rng.random::<f64>();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The `[2.5%, 97.5%]` percentile interval of `v` (the `ceil(q n)`-th smallest values).
pub fn percentile_interval(v: &[f64]) -> Option<[f64; 2]> {
    Some([stats::empirical_quantile(v, 0.025)?, stats::empirical_quantile(v, 0.975)?])
}

/// Fits `units` ([`points`], [`tobit`]) and bootstraps the fit over units and their counts
/// (see the module's notes).
pub fn regress_counts(units: &[Unit], opt: &BootOptions) -> Result<CountRegression, FitError> {
    let (pts, left_out) = points(units, opt.censor_factor);
    let line = tobit(&pts)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(opt.seed);
    let mut replicates = Vec::with_capacity(opt.resamples);
    let mut failed = 0;
    let mut sample = Vec::with_capacity(units.len());
    for _ in 0..opt.resamples {
        sample.clear();
        for _ in 0..units.len() {
            let u = units[rng.random_range(0..units.len())];
            if !opt.redraw {
                sample.push(u);
                continue;
            }
            let redraw = |m: Measured, rng: &mut Xoshiro256PlusPlus| Measured {
                total: m.total,
                solutions: poisson(rng, m.solutions as f64),
            };
            let x = match u.x {
                Axis::Exact(x) => Axis::Exact(x),
                Axis::Measured(m) => Axis::Measured(redraw(m, &mut rng)),
            };
            sample.push(Unit { x, y: redraw(u.y, &mut rng) });
        }
        match tobit(&points(&sample, opt.censor_factor).0) {
            Ok(l) => replicates.push([l.intercept, l.slope, l.sigma]),
            Err(_) => failed += 1,
        }
    }
    let slopes: Vec<f64> = replicates.iter().map(|r| r[1]).collect();
    let intercepts: Vec<f64> = replicates.iter().map(|r| r[0]).collect();
    let slope_ci = percentile_interval(&slopes).unwrap_or([f64::NAN; 2]);
    let intercept_ci = percentile_interval(&intercepts).unwrap_or([f64::NAN; 2]);
    Ok(CountRegression {
        line,
        units: units.len() - left_out,
        left_out,
        slope_ci,
        intercept_ci,
        resamples: opt.resamples,
        failed,
        reliability: reliability(units, &pts),
        replicates,
    })
}

/// See [`CountRegression::reliability`].
fn reliability(units: &[Unit], pts: &[Point]) -> f64 {
    let noise: Vec<f64> = units
        .iter()
        .filter_map(|u| match u.x {
            Axis::Exact(_) => Some(0.0),
            Axis::Measured(m) => (m.solutions > 0).then(|| std::f64::consts::LOG10_E.powi(2) / m.solutions as f64),
        })
        .collect();
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.x).sum::<f64>() / n;
    let var = pts.iter().map(|p| (p.x - mx).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let mean_noise = noise.iter().sum::<f64>() / noise.len().max(1) as f64;
    if var > 0.0 { (1.0 - mean_noise / var).clamp(0.0, 1.0) } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn the_upper_tail_matches_tables_and_stays_finite_far_out() {
        // 1 - Phi(1.959964) = 0.025; 1 - Phi(0) = 0.5; 1 - Phi(6) = 9.865876e-10.
        assert!(close(upper_tail(1.959_963_984_540_054).0.exp(), 0.025, 1e-9));
        assert!(close(upper_tail(0.0).0.exp(), 0.5, 1e-12));
        assert!(close(upper_tail(6.0).0.exp() / 9.865_876_450_377e-10, 1.0, 1e-9));
        // Both branches agree where they meet, and the hazard approaches z far out.
        let (a, b) = (upper_tail(5.0 - 1e-9), upper_tail(5.0));
        assert!(close(a.0, b.0, 1e-8) && close(a.1, b.1, 1e-8), "{a:?} {b:?}");
        let (lq, hz) = upper_tail(60.0);
        assert!(lq.is_finite() && close(hz, 60.0 + 1.0 / 60.0, 1e-4), "{lq} {hz}");
        // Far below: the tail is 1 and the hazard vanishes.
        let (lq, hz) = upper_tail(-40.0);
        assert!(lq.abs() < 1e-12 && hz < 1e-300);
    }

    #[test]
    fn without_censoring_the_fit_is_least_squares() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let pts: Vec<Point> = (0..40)
            .map(|i| {
                let x = 3.0 + 0.15 * i as f64;
                Point { x, y: 1.0 + 0.8 * x + 0.3 * normal(&mut rng), censored: false }
            })
            .collect();
        let t = tobit(&pts).unwrap();
        let ls = stats::line_fit(&pts.iter().map(|p| (p.x, p.y)).collect::<Vec<_>>()).unwrap();
        assert!(close(t.slope, ls.slope, 1e-9) && close(t.intercept, ls.intercept, 1e-9), "{t:?} {ls:?}");
        let sse: f64 = pts.iter().map(|p| (p.y - ls.intercept - ls.slope * p.x).powi(2)).sum();
        assert!(close(t.sigma, (sse / 40.0).sqrt(), 1e-9));
        assert_eq!((t.points, t.censored), (40, 0));
    }

    #[test]
    fn a_censored_point_pulls_the_line_up_and_bad_input_is_refused() {
        let mut pts: Vec<Point> = [(0.0, 0.1), (1.0, 0.9), (2.0, 2.2), (3.0, 2.9)]
            .iter()
            .map(|&(x, y)| Point { x, y, censored: false })
            .collect();
        let free = tobit(&pts).unwrap();
        pts.push(Point { x: 4.0, y: 4.5, censored: true });
        let cens = tobit(&pts).unwrap();
        assert!(cens.slope > free.slope, "{cens:?} {free:?}");
        // A censored point far below the line carries almost nothing.
        pts.pop();
        pts.push(Point { x: 4.0, y: -20.0, censored: true });
        let low = tobit(&pts).unwrap();
        assert!(close(low.slope, free.slope, 1e-6), "{low:?}");
        assert_eq!(
            tobit(&[Point { x: 0.0, y: 0.0, censored: false }; 5]),
            Err(FitError::TooFewPoints { seen: 5, needed: 3 })
        );
        let exact: Vec<Point> = (0..4).map(|i| Point { x: i as f64, y: 2.0 * i as f64, censored: false }).collect();
        assert_eq!(tobit(&exact), Err(FitError::NoSpread));
        assert!(matches!(tobit(&[Point { x: f64::NAN, y: 0.0, censored: false }]), Err(FitError::NotFinite { .. })));
    }

    #[test]
    fn poisson_variates_have_the_right_mean_and_variance() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        for mu in [0.5, 3.0, 9.5, 10.0, 37.0, 1e4] {
            let n = 40_000;
            let v: Vec<f64> = (0..n).map(|_| poisson(&mut rng, mu) as f64).collect();
            let m = v.iter().sum::<f64>() / n as f64;
            let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
            // Standard errors: sqrt(mu / n) for the mean, about mu sqrt(2 / n) for the variance.
            assert!((m - mu).abs() < 5.0 * (mu / n as f64).sqrt(), "mu {mu}: mean {m}");
            assert!((var - mu).abs() < 6.0 * mu * (2.0 / n as f64).sqrt(), "mu {mu}: variance {var}");
        }
        // P(0) at mu = 3 is e^-3.
        let zeros = (0..100_000).filter(|_| poisson(&mut rng, 3.0) == 0).count() as f64 / 1e5;
        assert!((zeros - (-3f64).exp()).abs() < 0.003, "{zeros}");
        assert_eq!(poisson(&mut rng, 0.0), 0);
    }

    #[test]
    fn counts_become_points_censored_above_where_none_was_found() {
        let units = [
            Unit {
                x: Axis::Measured(Measured { total: 1e4, solutions: 10 }),
                y: Measured { total: 1e6, solutions: 4 },
            },
            Unit { x: Axis::Measured(Measured { total: 1e5, solutions: 0 }), y: Measured { total: 1e6, solutions: 4 } },
            Unit { x: Axis::Exact(2.0), y: Measured { total: 1e7, solutions: 0 } },
        ];
        let (pts, left) = points(&units, CENSOR_FACTOR);
        assert_eq!(left, 1);
        assert_eq!(pts[0], Point { x: 3.0, y: 2.5e5f64.log10(), censored: false });
        assert!(pts[1].censored && close(pts[1].y, 7.0 + CENSOR_FACTOR.log10(), 1e-12));
        assert!(close(CENSOR_FACTOR, 0.577_215_664_901_532_9f64.exp(), 1e-15));
    }
}
