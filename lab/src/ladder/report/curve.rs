//! Censored regressions of `y` on a curve of `x` beyond the straight line: the line, the
//! quadratic and the broken stick, each a censored normal regression on a small design matrix.
//!
//! - **The design** ([`Shape`], [`basis`]): `y = c0 + c1 x + c2 g(x) + e`, `e ~ N(0, s^2)`, with
//!   `g(x) = 0` for the line, `x^2` for the quadratic, and `max(x - k, 0)` for the broken stick
//!   (a continuous piecewise-linear curve, slope `c1` below the knot `k` and `c1 + c2` above).
//! - **The likelihood**: J. Tobin's censored normal likelihood (*Estimation of relationships
//!   for limited dependent variables*, Econometrica 26:24 (1958)) with the linear index
//!   generalised from `a + b x` to the design row: a point seen exactly contributes
//!   `ln phi(z) - ln s`, a point known only to lie above `y` contributes `ln(1 - Phi(z))`,
//!   `z = (y - c . basis(x)) / s`. It is maximised by Newton's method with a backtracking line
//!   search in R. J. Olsen's parameters `(c / s, 1 / s)` (*Note on the uniqueness of the maximum
//!   likelihood estimator for the Tobit model*, Econometrica 46:1211 (1978)), in which it is
//!   globally concave for any design, so for a given knot the maximum found is the maximum.
//! - **The knot** ([`fit_curve`] of [`Shape::BrokenStick`]): the profile likelihood over `k`
//!   (D. V. Hinkley, *Inference about the intersection in two-phase regression*, Biometrika
//!   56:495 (1969); V. M. R. Muggeo, *Estimating regression models with unknown break-points*,
//!   Stat. Med. 22:3055 (2003)), maximised over a grid of [`KNOT_GRID`] knots between the 10th
//!   and the 90th percentile of `x` (and inside the points seen exactly, [`MIN_SIDE`] distinct
//!   `x` of them on each side), then refined by golden-section search between the best grid knot's
//!   neighbours. The profile is continuous in `k` but not smooth, and the likelihood-ratio
//!   statistic of a knot against the line has no chi-square null (the knot is not identified
//!   under the line): its null distribution comes from a parametric bootstrap
//!   (`choice`).

use super::fit::{FitError, Point, upper_tail};
use super::stats;

/// The curve a fit puts through the points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// `y = c0 + c1 x`.
    Line,
    /// `y = c0 + c1 x + c2 x^2`.
    Quadratic,
    /// `y = c0 + c1 x + c2 max(x - k, 0)`, the knot `k` estimated.
    BrokenStick,
}

impl Shape {
    /// The coefficients of its design (2 or 3).
    pub fn coefficients(self) -> usize {
        match self {
            Shape::Line => 2,
            Shape::Quadratic | Shape::BrokenStick => 3,
        }
    }

    /// Its name in words.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Line => "line",
            Shape::Quadratic => "quadratic",
            Shape::BrokenStick => "broken stick",
        }
    }
}

/// The design row `[1, x, g(x)]` of `shape` at `x` (`g = 0` for the line; `knot` is read only
/// by the broken stick).
pub fn basis(shape: Shape, knot: f64, x: f64) -> [f64; 3] {
    match shape {
        Shape::Line => [1.0, x, 0.0],
        Shape::Quadratic => [1.0, x, x * x],
        Shape::BrokenStick => [1.0, x, (x - knot).max(0.0)],
    }
}

/// A fitted curve: censored normal ([`fit_curve`]) or Poisson-lognormal
/// (`poisson_lognormal::fit`).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct CurveFit {
    /// Its shape.
    pub shape: Shape,
    /// `[c0, c1, c2]` of `y = c . basis(x)` (`c2 = 0` for the line).
    pub coef: [f64; 3],
    /// The knot of a broken stick, else null.
    pub knot: Option<f64>,
    /// The spread `s` about the curve (maximum likelihood), in decades.
    pub sigma: f64,
    /// The log-likelihood at the maximum.
    pub log_likelihood: f64,
    /// Points fitted, censored ones included.
    pub points: usize,
    /// Of them, censored (no solution found).
    pub censored: usize,
}

impl CurveFit {
    /// The curve's `y` at `x`.
    pub fn at(&self, x: f64) -> f64 {
        let d = basis(self.shape, self.knot.unwrap_or(0.0), x);
        self.coef[0] * d[0] + self.coef[1] * d[1] + self.coef[2] * d[2]
    }

    /// The curve's slope at `x` (above the knot at the knot itself).
    pub fn slope_at(&self, x: f64) -> f64 {
        match self.shape {
            Shape::Line => self.coef[1],
            Shape::Quadratic => self.coef[1] + 2.0 * self.coef[2] * x,
            Shape::BrokenStick => {
                self.coef[1] + if x >= self.knot.unwrap_or(f64::INFINITY) { self.coef[2] } else { 0.0 }
            }
        }
    }

    /// The slope above the knot (`c1 + c2`); the line's slope for a line; NaN for a quadratic.
    pub fn slope_above(&self) -> f64 {
        match self.shape {
            Shape::Line => self.coef[1],
            Shape::Quadratic => f64::NAN,
            Shape::BrokenStick => self.coef[1] + self.coef[2],
        }
    }

    /// The free parameters: the coefficients, the spread, and the knot of a broken stick.
    pub fn parameters(&self) -> usize {
        self.shape.coefficients() + 1 + usize::from(self.shape == Shape::BrokenStick)
    }
}

/// Knots on the profile's grid before the golden-section refinement.
pub const KNOT_GRID: usize = 17;
/// The fewest distinct `x` of points seen exactly on each side of a knot.
pub const MIN_SIDE: usize = 5;
const GOLDEN_STEPS: usize = 18;
const MAX_STEPS: usize = 200;
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Points moved to their means (for the conditioning of the Newton steps) with the shifts.
pub(super) struct Centred {
    pub pts: Vec<Point>,
    pub mx: f64,
    pub my: f64,
    /// The largest `|y - my|` of the points seen exactly (at least 1): the scale of "no spread".
    pub spread: f64,
    pub seen: usize,
}

fn centre(pts: &[Point]) -> Result<Centred, FitError> {
    if let Some(p) = pts.iter().find(|p| !p.x.is_finite() || !p.y.is_finite()) {
        return Err(FitError::NotFinite { x: p.x, y: p.y });
    }
    let n = pts.len().max(1) as f64;
    let (mx, my) = (pts.iter().map(|p| p.x).sum::<f64>() / n, pts.iter().map(|p| p.y).sum::<f64>() / n);
    let c: Vec<Point> = pts.iter().map(|p| Point { x: p.x - mx, y: p.y - my, censored: p.censored }).collect();
    let spread = c.iter().filter(|p| !p.censored).map(|p| p.y.abs()).fold(0.0, f64::max).max(1.0);
    let seen = c.iter().filter(|p| !p.censored).count();
    Ok(Centred { pts: c, mx, my, spread, seen })
}

/// Solves `m v = r` in the first `d` rows and columns by Gaussian elimination with partial
/// pivoting; `None` when singular.
pub(super) fn solve(mut m: [[f64; 4]; 4], mut r: [f64; 4], d: usize) -> Option<[f64; 4]> {
    for c in 0..d {
        let p = (c..d).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))?;
        if m[p][c].abs() < 1e-300 {
            return None;
        }
        m.swap(c, p);
        r.swap(c, p);
        for i in c + 1..d {
            let f = m[i][c] / m[c][c];
            for j in c..d {
                m[i][j] -= f * m[c][j];
            }
            r[i] -= f * r[c];
        }
    }
    let mut v = [0.0; 4];
    for i in (0..d).rev() {
        let s: f64 = (i + 1..d).map(|j| m[i][j] * v[j]).sum();
        v[i] = (r[i] - s) / m[i][i];
    }
    v[..d].iter().all(|x| x.is_finite()).then_some(v)
}

/// Log-likelihood, gradient and Hessian at Olsen's `t = (c / s, 1 / s)` (`t[p]` the last).
fn likelihood(pts: &[Point], shape: Shape, knot: f64, t: &[f64; 4]) -> (f64, [f64; 4], [[f64; 4]; 4]) {
    let p = shape.coefficients();
    let (mut l, mut g, mut hess) = (0.0, [0.0; 4], [[0.0; 4]; 4]);
    for pt in pts {
        let b = basis(shape, knot, pt.x);
        let mut d = [0.0; 4];
        let mut z = t[p] * pt.y;
        for j in 0..p {
            z -= t[j] * b[j];
            d[j] = -b[j];
        }
        d[p] = pt.y;
        let (dl, d2l) = if pt.censored {
            let (lq, hz) = upper_tail(z);
            l += lq;
            (-hz, -hz * (hz - z))
        } else {
            l += t[p].ln() - 0.5 * z * z - LN_SQRT_2PI;
            g[p] += 1.0 / t[p];
            hess[p][p] -= 1.0 / (t[p] * t[p]);
            (-z, -1.0)
        };
        for i in 0..=p {
            g[i] += dl * d[i];
            for j in 0..=i {
                hess[i][j] += d2l * d[i] * d[j];
            }
        }
    }
    for i in 0..=p {
        for j in i + 1..=p {
            hess[i][j] = hess[j][i];
        }
    }
    (l, g, hess)
}

/// Least squares of the points seen exactly on the design, as Olsen's parameters.
fn least_squares(c: &Centred, shape: Shape, knot: f64) -> Result<[f64; 4], FitError> {
    let p = shape.coefficients();
    let (mut m, mut r) = ([[0.0; 4]; 4], [0.0; 4]);
    for pt in c.pts.iter().filter(|p| !p.censored) {
        let b = basis(shape, knot, pt.x);
        for i in 0..p {
            r[i] += b[i] * pt.y;
            for j in 0..p {
                m[i][j] += b[i] * b[j];
            }
        }
    }
    let too_few = FitError::TooFewPoints { seen: c.seen, needed: p + 1 };
    let beta = solve(m, r, p).ok_or(too_few.clone())?;
    let sse: f64 = c
        .pts
        .iter()
        .filter(|p| !p.censored)
        .map(|pt| {
            let b = basis(shape, knot, pt.x);
            (pt.y - (0..p).map(|j| beta[j] * b[j]).sum::<f64>()).powi(2)
        })
        .sum();
    let s0 = (sse / c.seen as f64).sqrt();
    if s0 <= 1e-12 * c.spread {
        return Err(FitError::NoSpread);
    }
    let mut t = [0.0; 4];
    for j in 0..p {
        t[j] = beta[j] / s0;
    }
    t[p] = 1.0 / s0;
    Ok(t)
}

/// Maximises the censored likelihood of centred points at a fixed (centred) knot from `start`
/// (least squares without one): Olsen's parameters and the log-likelihood.
pub(super) fn newton(
    c: &Centred,
    shape: Shape,
    knot: f64,
    start: Option<[f64; 4]>,
) -> Result<([f64; 4], f64), FitError> {
    let p = shape.coefficients();
    if c.seen < p + 1 {
        return Err(FitError::TooFewPoints { seen: c.seen, needed: p + 1 });
    }
    let mut t = match start {
        Some(t) if t[p] > 0.0 && t.iter().all(|v| v.is_finite()) => t,
        _ => least_squares(c, shape, knot)?,
    };
    let (mut l, mut g, mut hess) = likelihood(&c.pts, shape, knot, &t);
    if !l.is_finite() {
        t = least_squares(c, shape, knot)?;
        (l, g, hess) = likelihood(&c.pts, shape, knot, &t);
    }
    for step in 1..=MAX_STEPS {
        let neg = g.map(|v| -v);
        let Some(d) = solve(hess, neg, p + 1) else { return Err(FitError::NoConvergence(step)) };
        let dec: f64 = (0..=p).map(|i| g[i] * d[i]).sum();
        if !dec.is_finite() {
            return Err(FitError::NoConvergence(step));
        }
        let done = |tol: f64| dec.abs() < tol * (1.0 + l.abs());
        if done(1e-12) {
            break;
        }
        let mut u = 1.0;
        loop {
            let mut cand = t;
            for i in 0..=p {
                cand[i] += u * d[i];
            }
            if cand[p] > 0.0 {
                let (lc, gc, hc) = likelihood(&c.pts, shape, knot, &cand);
                if lc.is_finite() && lc >= l + 1e-4 * u * dec {
                    (t, l, g, hess) = (cand, lc, gc, hc);
                    break;
                }
            }
            u *= 0.5;
            if u < 1e-12 {
                if done(1e-8) {
                    break;
                }
                return Err(FitError::NoConvergence(step));
            }
        }
        if u < 1e-12 {
            break;
        }
        if t[p] > 1e12 / c.spread {
            return Err(FitError::NoSpread);
        }
        if step == MAX_STEPS {
            return Err(FitError::NoConvergence(MAX_STEPS));
        }
    }
    if 1.0 / t[p] <= 1e-12 * c.spread {
        return Err(FitError::NoSpread);
    }
    Ok((t, l))
}

/// Coefficients about the centre `(mx, my)` moved back to the origin.
pub(super) fn uncentre(shape: Shape, cc: [f64; 3], mx: f64, my: f64) -> [f64; 3] {
    match shape {
        Shape::Line | Shape::BrokenStick => [cc[0] + my - cc[1] * mx, cc[1], cc[2]],
        Shape::Quadratic => [cc[0] + my - cc[1] * mx + cc[2] * mx * mx, cc[1] - 2.0 * cc[2] * mx, cc[2]],
    }
}

fn finish(c: &Centred, shape: Shape, knot_c: f64, t: [f64; 4], l: f64) -> CurveFit {
    let p = shape.coefficients();
    let s = 1.0 / t[p];
    let mut cc = [0.0; 3];
    for j in 0..p {
        cc[j] = t[j] * s;
    }
    CurveFit {
        shape,
        coef: uncentre(shape, cc, c.mx, c.my),
        knot: (shape == Shape::BrokenStick).then_some(knot_c + c.mx),
        sigma: s,
        log_likelihood: l,
        points: c.pts.len(),
        censored: c.pts.len() - c.seen,
    }
}

/// The knot of largest profile likelihood in `[lo, hi]`: the best of [`KNOT_GRID`] knots
/// evenly spaced, refined by golden-section search between its neighbours. `eval` gives a
/// knot's fit and log-likelihood (`None` where it fails); returns the knot, its fit and
/// log-likelihood.
pub(super) fn profile<T: Copy>(
    lo: f64,
    hi: f64,
    mut eval: impl FnMut(f64) -> Option<(T, f64)>,
) -> Option<(f64, T, f64)> {
    let knots: Vec<f64> = (0..KNOT_GRID).map(|i| lo + (hi - lo) * i as f64 / (KNOT_GRID - 1) as f64).collect();
    let mut best: Option<(usize, T, f64)> = None;
    for (i, &k) in knots.iter().enumerate() {
        if let Some((t, l)) = eval(k)
            && best.as_ref().is_none_or(|b| l > b.2)
        {
            best = Some((i, t, l));
        }
    }
    let (i, mut t, mut l) = best?;
    let mut k_best = knots[i];
    let (mut a, mut b) = (knots[i.saturating_sub(1)], knots[(i + 1).min(KNOT_GRID - 1)]);
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let lik = |f: &Option<(T, f64)>| f.as_ref().map_or(f64::NEG_INFINITY, |f| f.1);
    let mut x1 = b - r * (b - a);
    let mut f1 = eval(x1);
    let mut x2 = a + r * (b - a);
    let mut f2 = eval(x2);
    for step in 0..=GOLDEN_STEPS {
        for (k, f) in [(x1, &f1), (x2, &f2)] {
            if let Some((tt, ll)) = f
                && *ll > l
            {
                (t, l, k_best) = (*tt, *ll, k);
            }
        }
        if step == GOLDEN_STEPS {
            break;
        }
        if lik(&f1) >= lik(&f2) {
            (b, x2, f2) = (x2, x1, f1);
            x1 = b - r * (b - a);
            f1 = eval(x1);
        } else {
            (a, x1, f1) = (x1, x2, f2);
            x2 = a + r * (b - a);
            f2 = eval(x2);
        }
    }
    Some((k_best, t, l))
}

/// The censored fit of a broken stick with its knot held at `knot` (a censored regression on
/// two slopes; a knot beyond every point gives the line).
pub fn fit_at_knot(pts: &[Point], knot: f64) -> Result<CurveFit, FitError> {
    let c = centre(pts)?;
    if !knot.is_finite() {
        return Err(FitError::NotFinite { x: knot, y: 0.0 });
    }
    let k = knot - c.mx;
    // With no point above the knot, the third column is zero: the line.
    if c.pts.iter().all(|p| p.x <= k) {
        let (t, l) = newton(&c, Shape::Line, 0.0, None)?;
        let mut f = finish(&c, Shape::Line, 0.0, t, l);
        f.shape = Shape::BrokenStick;
        f.knot = Some(knot);
        return Ok(f);
    }
    let (t, l) = newton(&c, Shape::BrokenStick, k, None)?;
    Ok(finish(&c, Shape::BrokenStick, k, t, l))
}

/// The range of knots a broken stick is profiled over, in the points' `x`: between the 10th
/// and 90th percentiles of `x`, with at least [`MIN_SIDE`] distinct `x` of points seen exactly
/// on each side, a point at the knot counting on both (a segment's slope needs points that pin
/// it; in a bootstrap resample an instance drawn twice counts once). `None` when that range is empty.
pub fn knot_range(pts: &[Point]) -> Option<[f64; 2]> {
    let xs: Vec<f64> = pts.iter().map(|p| p.x).collect();
    let mut seen: Vec<f64> = pts.iter().filter(|p| !p.censored).map(|p| p.x).collect();
    seen.sort_by(f64::total_cmp);
    seen.dedup();
    if seen.len() < 2 * MIN_SIDE + 1 {
        return None;
    }
    let lo = stats::empirical_quantile(&xs, 0.1)?.max(seen[MIN_SIDE - 1]);
    let hi = stats::empirical_quantile(&xs, 0.9)?.min(seen[seen.len() - MIN_SIDE]);
    (lo.is_finite() && hi.is_finite() && hi > lo).then_some([lo, hi])
}

/// The maximum-likelihood censored fit of `shape` to `pts`; for the broken stick the knot
/// profiled as the module's notes say.
pub fn fit_curve(pts: &[Point], shape: Shape) -> Result<CurveFit, FitError> {
    let c = centre(pts)?;
    if shape != Shape::BrokenStick {
        let (t, l) = newton(&c, shape, 0.0, None)?;
        return Ok(finish(&c, shape, 0.0, t, l));
    }
    let [lo, hi] = knot_range(pts).ok_or(FitError::NoKnot { seen: c.seen, needed: 2 * MIN_SIDE + 1 })?;
    let (lo, hi) = (lo - c.mx, hi - c.mx);
    let line = newton(&c, Shape::Line, 0.0, None)?;
    let mut warm = [line.0[0], line.0[1], 0.0, line.0[2]];
    let best = profile(lo, hi, |k| {
        let (t, l) = newton(&c, Shape::BrokenStick, k, Some(warm)).ok()?;
        warm = t;
        Some((t, l))
    });
    let (k_best, t, l) = best.ok_or(FitError::NoConvergence(0))?;
    Ok(finish(&c, Shape::BrokenStick, k_best, t, l))
}

#[cfg(test)]
mod tests {
    use super::super::fit::{normal, tobit};
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    /// Points of `f` at 80 `x` in [2, 9] with scatter `s`, censored above `cap`.
    fn sample(f: &dyn Fn(f64) -> f64, s: f64, cap: f64, seed: u64) -> Vec<Point> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..80)
            .map(|i| {
                let x = 2.0 + 7.0 * i as f64 / 79.0;
                let y = f(x) + s * normal(&mut rng);
                if y > cap { Point { x, y: cap, censored: true } } else { Point { x, y, censored: false } }
            })
            .collect()
    }

    #[test]
    fn the_line_is_the_existing_tobit_and_a_knot_beyond_the_data_gives_it_too() {
        let pts = sample(&|x| 1.0 + 0.7 * x, 0.3, 6.5, 1);
        assert!(pts.iter().any(|p| p.censored));
        let t = tobit(&pts).unwrap();
        let c = fit_curve(&pts, Shape::Line).unwrap();
        assert!(close(c.coef[0], t.intercept, 1e-8) && close(c.coef[1], t.slope, 1e-8), "{c:?} {t:?}");
        assert!(close(c.sigma, t.sigma, 1e-8) && close(c.log_likelihood, t.log_likelihood, 1e-10));
        for knot in [9.5, 100.0] {
            let k = fit_at_knot(&pts, knot).unwrap();
            assert!(close(k.log_likelihood, t.log_likelihood, 1e-10) && close(k.slope_at(3.0), t.slope, 1e-8));
        }
        // A knot below every point: the line again, its slope the slope above.
        let k = fit_at_knot(&pts, -5.0).unwrap();
        assert!(close(k.log_likelihood, t.log_likelihood, 1e-8) && close(k.slope_above(), t.slope, 1e-6), "{k:?}");
    }

    #[test]
    fn a_fixed_knot_is_least_squares_on_two_slopes_without_censoring() {
        let pts = sample(&|x| 1.0 + 0.5 * x + 0.6 * (x - 5.0).max(0.0), 0.2, f64::INFINITY, 2);
        let k = fit_at_knot(&pts, 5.0).unwrap();
        // Normal equations of [1, x, max(x - 5, 0)] by hand.
        let (mut m, mut r) = ([[0.0; 4]; 4], [0.0; 4]);
        for p in &pts {
            let b = [1.0, p.x, (p.x - 5.0).max(0.0)];
            for i in 0..3 {
                r[i] += b[i] * p.y;
                for j in 0..3 {
                    m[i][j] += b[i] * b[j];
                }
            }
        }
        let v = solve(m, r, 3).unwrap();
        for j in 0..3 {
            assert!(close(k.coef[j], v[j], 1e-8), "{k:?} {v:?}");
        }
    }

    #[test]
    fn known_curves_are_recovered_with_censoring() {
        let truth = |x: f64| 1.0 + 0.4 * x + 0.8 * (x - 6.0).max(0.0);
        let pts = sample(&truth, 0.15, 5.6, 3);
        let n_c = pts.iter().filter(|p| p.censored).count();
        assert!((5..30).contains(&n_c), "{n_c}");
        let b = fit_curve(&pts, Shape::BrokenStick).unwrap();
        assert!((b.knot.unwrap() - 6.0).abs() < 0.3, "{b:?}");
        assert!((b.coef[1] - 0.4).abs() < 0.06 && (b.slope_above() - 1.2).abs() < 0.15, "{b:?}");
        let line = fit_curve(&pts, Shape::Line).unwrap();
        let quad = fit_curve(&pts, Shape::Quadratic).unwrap();
        assert!(b.log_likelihood > line.log_likelihood + 10.0 && quad.log_likelihood > line.log_likelihood);
        // The profile's maximum is at least every grid knot's.
        for k in [4.0, 5.0, 6.5, 7.0] {
            assert!(fit_at_knot(&pts, k).unwrap().log_likelihood <= b.log_likelihood + 1e-9);
        }
        let q = fit_curve(&sample(&|x| 0.5 + 0.2 * x + 0.05 * x * x, 0.1, f64::INFINITY, 4), Shape::Quadratic).unwrap();
        assert!((q.coef[2] - 0.05).abs() < 0.01 && (q.coef[1] - 0.2).abs() < 0.12, "{q:?}");
        assert!(close(q.slope_at(3.0), q.coef[1] + 6.0 * q.coef[2], 1e-12));
    }

    #[test]
    fn too_few_points_for_a_knot_are_refused() {
        let pts: Vec<Point> =
            (0..10).map(|i| Point { x: i as f64, y: (i * i) as f64 * 0.1, censored: false }).collect();
        assert!(matches!(fit_curve(&pts, Shape::BrokenStick), Err(FitError::NoKnot { .. })));
        assert!(matches!(fit_curve(&[], Shape::Line), Err(FitError::TooFewPoints { .. })));
        let bad = [Point { x: f64::NAN, y: 0.0, censored: false }];
        assert!(matches!(fit_curve(&bad, Shape::Quadratic), Err(FitError::NotFinite { .. })));
    }
}
