//! The curves of `curve` fitted to the solution counts themselves, by a Poisson-lognormal
//! likelihood, which needs no censoring bound for the instances where the map found nothing.
//!
//! Per instance `i`, with work `W_i` (trial-iterations) and `k_i` solutions found in it:
//! `k_i ~ Poisson(W_i / c_i)`, `log10 c_i ~ N(f(x_i), s^2)`, `f` a line, a quadratic or a broken
//! stick in the instance's hardness `x_i` ([`Shape`]). The mean work per solution `c_i` is
//! integrated out: the likelihood of an instance is
//!
//! ```text
//! L_i = integral over z of phi(z) Poisson(k_i; W_i 10^-(f(x_i) + s z)) dz
//! ```
//!
//! (J. Aitchison and C. H. Ho, *The multivariate Poisson-log normal distribution*,
//! Biometrika 76:643 (1989), in one dimension with a regression on its log mean). An instance
//! with no solution contributes `L_i = E exp(-W_i / c_i)`, the probability of none in its
//! work, with no bound chosen. The integral is computed by adaptive Gauss-Hermite quadrature
//! ([`NODES`] nodes centred at the integrand's mode and scaled by its curvature there; Q. Liu
//! and D. A. Pierce, *A note on Gauss-Hermite quadrature*, Biometrika 81:624 (1994)), in logs
//! with log-sum-exp, so that counts of hundreds and counts of zero are both exact to rounding.
//!
//! The likelihood is maximised by Newton's method in `(c, ln s)` with the gradient and Hessian
//! of each `ln L_i` as posterior moments over the same nodes (the score of an integral is the
//! posterior mean of the integrand's score, its Hessian the posterior mean of the integrand's
//! Hessian plus the posterior covariance of its score), with a Levenberg shift where the
//! Hessian is not negative definite and a backtracking line search. The broken stick's knot is
//! profiled as in `curve`.

use super::curve::{self, CurveFit, Shape};
use super::fit::{self, FitError, Point};
use std::f64::consts::LN_10;
use std::sync::OnceLock;

/// One instance: its hardness `x`, the map's work and the solutions found in it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Count {
    /// `log10` of the scan's nodes per solution.
    pub x: f64,
    /// The map's work (trial-iterations).
    pub work: f64,
    /// Solutions found in it.
    pub solutions: u64,
}

/// Gauss-Hermite nodes of the quadrature.
pub const NODES: usize = 24;
const MAX_STEPS: usize = 300;
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// The nodes and weights of `NODES`-point Gauss-Hermite quadrature (weight `exp(-t^2)`), as
/// `(t, ln w)`: the roots of the orthonormal Hermite polynomial of degree `NODES`, bracketed on
/// a fine grid and bisected, with the Christoffel weights `1 / sum_j p_j(t)^2`.
pub fn hermite() -> &'static [(f64, f64); NODES] {
    static CELL: OnceLock<[(f64, f64); NODES]> = OnceLock::new();
    CELL.get_or_init(|| {
        // p_0..p_{n} at t by the three-term recurrence of the orthonormal polynomials.
        let eval = |t: f64| {
            let mut p = [0.0; NODES + 1];
            p[0] = std::f64::consts::PI.powf(-0.25);
            p[1] = std::f64::consts::SQRT_2 * t * p[0];
            for j in 1..NODES {
                p[j + 1] = (2.0 / (j + 1) as f64).sqrt() * t * p[j] - (j as f64 / (j + 1) as f64).sqrt() * p[j - 1];
            }
            p
        };
        let mut out = [(0.0, 0.0); NODES];
        let (mut found, edge) = (0, (2.0 * NODES as f64 + 1.0).sqrt() + 0.5);
        let steps = 40_000;
        let mut prev = (-edge, eval(-edge)[NODES]);
        for i in 1..=steps {
            let t = -edge + 2.0 * edge * i as f64 / steps as f64;
            let v = eval(t)[NODES];
            if found < NODES && (v == 0.0 || v.signum() != prev.1.signum()) {
                let (mut a, mut b, fa) = (prev.0, t, prev.1);
                for _ in 0..100 {
                    let m = 0.5 * (a + b);
                    let fm = eval(m)[NODES];
                    if fm.signum() == fa.signum() && fm != 0.0 {
                        a = m;
                    } else {
                        b = m;
                    }
                }
                let r = 0.5 * (a + b);
                let p = eval(r);
                let sum: f64 = p[..NODES].iter().map(|v| v * v).sum();
                out[found] = (r, -sum.ln());
                found += 1;
            }
            prev = (t, v);
        }
        out
    })
}

/// `ln(sum exp(v))` of the first `n` of `v`, stably.
fn log_sum_exp(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return m;
    }
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// One instance's `ln L`, and its derivatives in `eta = f(x)` and `lambda = ln s`:
/// `(ln L, [d/deta, d/dlambda], [d2/deta2, d2/deta dlambda, d2/dlambda2])`.
pub fn instance(solutions: u64, work: f64, eta: f64, s: f64) -> (f64, [f64; 2], [f64; 3]) {
    let k = solutions as f64;
    let beta = LN_10 * s;
    let m0 = work.ln() - LN_10 * eta;
    let ln_kfact = statrs::function::gamma::ln_gamma(k + 1.0);
    // The mode of h(z) = k mu - e^mu - z^2 / 2, mu = m0 - beta z: the root of the convex,
    // decreasing h'(z) = -z - beta k + beta e^mu, by Newton's method from its left.
    let mut z = if k > 0.0 && beta > 0.0 { ((m0 - k.ln()) / beta).min(0.0) } else { 0.0 };
    if !z.is_finite() {
        z = 0.0;
    }
    z = z.max(-40.0);
    for _ in 0..200 {
        let e = (m0 - beta * z).exp();
        let f = -z - beta * k + beta * e;
        let step = f / (1.0 + beta * beta * e);
        z += step;
        if step.abs() < 1e-12 * (1.0 + z.abs()) {
            break;
        }
    }
    let tau = 1.0 / (1.0 + beta * beta * (m0 - beta * z).exp()).sqrt();
    let nodes = hermite();
    let mut l = [0.0; NODES];
    let mut zs = [0.0; NODES];
    let mut e = [0.0; NODES];
    let scale = std::f64::consts::SQRT_2 * tau;
    for (j, &(t, lw)) in nodes.iter().enumerate() {
        let zj = z + scale * t;
        let mu = m0 - beta * zj;
        let em = mu.exp();
        zs[j] = zj;
        e[j] = em;
        l[j] = lw + t * t + scale.ln() + k * mu - em - ln_kfact - 0.5 * zj * zj - LN_SQRT_2PI;
    }
    let ll = log_sum_exp(&l);
    let (mut mu_, mut mv, mut a_ee, mut a_el, mut a_ll, mut uu, mut uv, mut vv) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for j in 0..NODES {
        let w = (l[j] - ll).exp();
        if w == 0.0 {
            continue;
        }
        let u = -LN_10 * (k - e[j]);
        let v = s * zs[j] * u;
        let a = -LN_10 * LN_10 * e[j];
        mu_ += w * u;
        mv += w * v;
        a_ee += w * a;
        a_el += w * s * zs[j] * a;
        a_ll += w * (v + s * s * zs[j] * zs[j] * a);
        uu += w * u * u;
        uv += w * u * v;
        vv += w * v * v;
    }
    let hess = [a_ee + uu - mu_ * mu_, a_el + uv - mu_ * mv, a_ll + vv - mv * mv];
    (ll, [mu_, mv], hess)
}

/// The log-likelihood of `counts` under `f` and spread `s` (`f` the curve's `y` at `x`).
pub fn log_likelihood(counts: &[Count], f: impl Fn(f64) -> f64, s: f64) -> f64 {
    counts.iter().map(|c| instance(c.solutions, c.work, f(c.x), s).0).sum()
}

/// Value, gradient and Hessian in `theta = (c about mx, ln s)`.
fn total(counts: &[Count], shape: Shape, knot: f64, mx: f64, th: &[f64; 4]) -> (f64, [f64; 4], [[f64; 4]; 4]) {
    let p = shape.coefficients();
    let s = th[p].exp();
    let (mut l, mut g, mut h) = (0.0, [0.0; 4], [[0.0; 4]; 4]);
    for c in counts {
        let b = curve::basis(shape, knot, c.x - mx);
        let eta: f64 = (0..p).map(|j| th[j] * b[j]).sum();
        let (li, gi, hi) = instance(c.solutions, c.work, eta, s);
        l += li;
        let mut d = [0.0; 4];
        d[..p].copy_from_slice(&b[..p]);
        for i in 0..p {
            g[i] += gi[0] * d[i];
            for j in 0..p {
                h[i][j] += hi[0] * d[i] * d[j];
            }
            h[i][p] += hi[1] * d[i];
            h[p][i] += hi[1] * d[i];
        }
        g[p] += gi[1];
        h[p][p] += hi[2];
    }
    (l, g, h)
}

fn validate(counts: &[Count]) -> Result<(), FitError> {
    match counts.iter().find(|c| !(c.x.is_finite() && c.work.is_finite() && c.work > 0.0)) {
        Some(c) => Err(FitError::NotFinite { x: c.x, y: c.work }),
        None => Ok(()),
    }
}

/// The points a censored fit of the same counts sees (`y = log10(work / solutions)`, or
/// censored at `log10(work e^gamma)`): the starting values and the knot's range.
pub fn points(counts: &[Count]) -> Vec<Point> {
    counts
        .iter()
        .map(|c| match c.solutions {
            0 => Point { x: c.x, y: fit::censor_point(c.work, fit::CENSOR_FACTOR), censored: true },
            k => Point { x: c.x, y: (c.work / k as f64).log10(), censored: false },
        })
        .collect()
}

/// Maximises at a fixed knot (centred) from `start` (`theta`); the parameters and `ln L`.
fn newton(counts: &[Count], shape: Shape, knot: f64, mx: f64, start: [f64; 4]) -> Result<([f64; 4], f64), FitError> {
    let p = shape.coefficients();
    let d = p + 1;
    let mut th = start;
    let (mut l, mut g, mut h) = total(counts, shape, knot, mx, &th);
    if !l.is_finite() {
        return Err(FitError::NoConvergence(0));
    }
    let mut shift = 0.0;
    for step in 1..=MAX_STEPS {
        // Ascent direction: (-H + shift I) dir = g, the shift raised until it ascends.
        let mut dir = None;
        for _ in 0..60 {
            let mut m = h.map(|r| r.map(|v| -v));
            for i in 0..d {
                m[i][i] += shift;
            }
            if let Some(v) = curve::solve(m, g, d)
                && (0..d).map(|i| g[i] * v[i]).sum::<f64>() > 0.0
            {
                dir = Some(v);
                break;
            }
            shift = if shift == 0.0 { 1e-3 * (1.0 + h[0][0].abs()) } else { shift * 4.0 };
        }
        let Some(dir) = dir else { return Err(FitError::NoConvergence(step)) };
        let dec: f64 = (0..d).map(|i| g[i] * dir[i]).sum();
        if dec < 1e-10 * (1.0 + l.abs()) {
            return Ok((th, l));
        }
        let mut u = 1.0;
        // Steps in ln s of more than 2 at once are cut.
        if dir[p].abs() > 2.0 {
            u = 2.0 / dir[p].abs();
        }
        loop {
            let mut cand = th;
            for i in 0..d {
                cand[i] += u * dir[i];
            }
            let (lc, gc, hc) = total(counts, shape, knot, mx, &cand);
            if lc.is_finite() && lc >= l + 1e-4 * u * dec {
                (th, l, g, h) = (cand, lc, gc, hc);
                break;
            }
            u *= 0.5;
            if u < 1e-10 {
                return if dec < 1e-6 * (1.0 + l.abs()) { Ok((th, l)) } else { Err(FitError::NoConvergence(step)) };
            }
        }
        shift = if u == 1.0 { shift * 0.25 } else { shift };
        if shift < 1e-12 {
            shift = 0.0;
        }
        if th[p] < -25.0 {
            return Err(FitError::NoSpread);
        }
    }
    Err(FitError::NoConvergence(MAX_STEPS))
}

fn to_fit(counts: &[Count], shape: Shape, knot: Option<f64>, mx: f64, th: [f64; 4], l: f64) -> CurveFit {
    let p = shape.coefficients();
    let mut cc = [0.0; 3];
    cc[..p].copy_from_slice(&th[..p]);
    CurveFit {
        shape,
        coef: curve::uncentre(shape, cc, mx, 0.0),
        knot,
        sigma: th[p].exp(),
        log_likelihood: l,
        points: counts.len(),
        censored: counts.iter().filter(|c| c.solutions == 0).count(),
    }
}

/// A starting point from the censored fit of the same shape (at `knot`, centred at `mx`).
fn start(counts: &[Count], shape: Shape, knot: f64, mx: f64) -> Result<[f64; 4], FitError> {
    let pts: Vec<Point> = points(counts).into_iter().map(|p| Point { x: p.x - mx, ..p }).collect();
    let f = match shape {
        Shape::BrokenStick => curve::fit_at_knot(&pts, knot)?,
        _ => curve::fit_curve(&pts, shape)?,
    };
    let p = shape.coefficients();
    let mut th = [0.0; 4];
    th[..p].copy_from_slice(&f.coef[..p]);
    th[p] = (0.8 * f.sigma).max(0.02).ln();
    Ok(th)
}

fn mean_x(counts: &[Count]) -> f64 {
    counts.iter().map(|c| c.x).sum::<f64>() / counts.len().max(1) as f64
}

/// The Poisson-lognormal fit of a broken stick with its knot held at `knot`.
pub fn fit_at_knot(counts: &[Count], knot: f64) -> Result<CurveFit, FitError> {
    validate(counts)?;
    let mx = mean_x(counts);
    let th = start(counts, Shape::BrokenStick, knot - mx, mx)?;
    let (th, l) = newton(counts, Shape::BrokenStick, knot - mx, mx, th)?;
    Ok(to_fit(counts, Shape::BrokenStick, Some(knot), mx, th, l))
}

/// The maximum-likelihood Poisson-lognormal fit of `shape` to `counts`; for the broken stick the
/// knot profiled over `curve::knot_range` of the counts' points.
pub fn fit(counts: &[Count], shape: Shape) -> Result<CurveFit, FitError> {
    validate(counts)?;
    let mx = mean_x(counts);
    let seen = counts.iter().filter(|c| c.solutions > 0).count();
    if seen < shape.coefficients() + 1 {
        return Err(FitError::TooFewPoints { seen, needed: shape.coefficients() + 1 });
    }
    if shape != Shape::BrokenStick {
        let th = start(counts, shape, 0.0, mx)?;
        let (th, l) = newton(counts, shape, 0.0, mx, th)?;
        return Ok(to_fit(counts, shape, None, mx, th, l));
    }
    let pts = points(counts);
    let [lo, hi] = curve::knot_range(&pts).ok_or(FitError::NoKnot { seen, needed: 2 * curve::MIN_SIDE + 1 })?;
    let line = fit(counts, Shape::Line)?;
    let mut warm = [line.coef[0] + line.coef[1] * mx, line.coef[1], 0.0, line.sigma.ln()];
    let best = curve::profile(lo - mx, hi - mx, |k| {
        let (th, l) = newton(counts, Shape::BrokenStick, k, mx, warm).ok()?;
        warm = th;
        Some((th, l))
    });
    let (k, th, l) = best.ok_or(FitError::NoConvergence(0))?;
    Ok(to_fit(counts, Shape::BrokenStick, Some(k + mx), mx, th, l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ladder::report::fit::{normal, poisson};
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn the_quadrature_integrates_polynomials_and_its_nodes_are_symmetric() {
        let h = hermite();
        let sum = |f: &dyn Fn(f64) -> f64| h.iter().map(|&(t, lw)| lw.exp() * f(t)).sum::<f64>();
        let pi = std::f64::consts::PI;
        assert!((sum(&|_| 1.0) - pi.sqrt()).abs() < 1e-12);
        assert!((sum(&|t| t * t) - pi.sqrt() / 2.0).abs() < 1e-12);
        assert!((sum(&|t| t.powi(4)) - 3.0 * pi.sqrt() / 4.0).abs() < 1e-11);
        assert!((sum(&|t| t.powi(3))).abs() < 1e-12);
        for i in 0..NODES {
            assert!((h[i].0 + h[NODES - 1 - i].0).abs() < 1e-10, "{h:?}");
        }
    }

    /// `ln L` by the trapezoid rule over `z` in [-14, 14] at 1e-4 steps.
    fn brute(k: u64, w: f64, eta: f64, s: f64) -> f64 {
        let kf = k as f64;
        let lk = statrs::function::gamma::ln_gamma(kf + 1.0);
        let n = 280_000;
        let dz = 28.0 / n as f64;
        let mut sum = 0.0;
        for i in 0..=n {
            let z = -14.0 + i as f64 * dz;
            let lam = w * 10f64.powf(-(eta + s * z));
            let v = (kf * lam.ln() - lam - lk - 0.5 * z * z - LN_SQRT_2PI).exp();
            sum += if i == 0 || i == n { 0.5 * v } else { v };
        }
        (sum * dz).ln()
    }

    #[test]
    fn the_likelihood_matches_brute_force_integration() {
        for &(k, w, eta, s) in &[
            (0, 1.6e7, 6.5, 0.5),
            (0, 1.0e6, 7.5, 0.3),
            (3, 1.6e7, 6.8, 0.4),
            (8, 2e6, 5.4, 0.6),
            (250, 1.6e6, 3.8, 0.5),
            (1, 1e5, 3.0, 1.2),
            (40, 1e6, 4.5, 0.05),
        ] {
            let (a, b) = (instance(k, w, eta, s).0, brute(k, w, eta, s));
            assert!((a - b).abs() < 1e-7 * (1.0 + b.abs()), "k {k} w {w} eta {eta} s {s}: {a} against {b}");
        }
    }

    #[test]
    fn the_derivatives_match_differences() {
        for &(k, w, eta, s) in &[(0, 1.6e7, 6.5, 0.5), (5, 1e6, 5.0, 0.4), (120, 1e6, 3.9, 0.3)] {
            let (_, g, h) = instance(k, w, eta, s);
            let e = 1e-5;
            let f = |eta: f64, lam: f64| instance(k, w, eta, lam.exp());
            let lam = s.ln();
            let ge = (f(eta + e, lam).0 - f(eta - e, lam).0) / (2.0 * e);
            let gl = (f(eta, lam + e).0 - f(eta, lam - e).0) / (2.0 * e);
            let hee = (f(eta + e, lam).1[0] - f(eta - e, lam).1[0]) / (2.0 * e);
            let hel = (f(eta, lam + e).1[0] - f(eta, lam - e).1[0]) / (2.0 * e);
            let hll = (f(eta, lam + e).1[1] - f(eta, lam - e).1[1]) / (2.0 * e);
            for (a, b) in [(g[0], ge), (g[1], gl), (h[0], hee), (h[1], hel), (h[2], hll)] {
                assert!(
                    (a - b).abs() < 1e-5 * (1.0 + b.abs()),
                    "k {k}: {g:?} {h:?} against {ge} {gl} {hee} {hel} {hll}"
                );
            }
        }
    }

    /// Counts of a broken stick (knot 5.5, slopes 0.5 and 1.1, s = 0.3) at 300 instances, the
    /// work to 8 solutions or a cap of 3e6.
    fn campaign(seed: u64) -> Vec<Count> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..300)
            .map(|i| {
                let x = 3.0 + 5.0 * i as f64 / 299.0;
                let f = 1.5 + 0.5 * x + 0.6 * (x - 5.5f64).max(0.0);
                let c = 10f64.powf(f + 0.3 * normal(&mut rng));
                let work = (8.0 * c).min(3e6);
                Count { x, work, solutions: poisson(&mut rng, work / c) }
            })
            .collect()
    }

    #[test]
    fn a_known_line_and_a_known_quadratic_are_recovered() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let draw = |f: &dyn Fn(f64) -> f64, rng: &mut Xoshiro256PlusPlus| -> Vec<Count> {
            (0..300)
                .map(|i| {
                    let x = 2.0 + 6.0 * i as f64 / 299.0;
                    let c = 10f64.powf(f(x) + 0.25 * normal(rng));
                    let work = (10.0 * c).min(1e7);
                    Count { x, work, solutions: poisson(rng, work / c) }
                })
                .collect()
        };
        let line = fit(&draw(&|x| 1.0 + 0.8 * x, &mut rng), Shape::Line).unwrap();
        assert!((line.coef[1] - 0.8).abs() < 0.04 && (line.coef[0] - 1.0).abs() < 0.2, "{line:?}");
        assert!((line.sigma - 0.25).abs() < 0.05, "{line:?}");
        let q = fit(&draw(&|x| 2.0 + 0.1 * x + 0.06 * x * x, &mut rng), Shape::Quadratic).unwrap();
        assert!((q.coef[2] - 0.06).abs() < 0.015 && (q.coef[1] - 0.1).abs() < 0.15, "{q:?}");
        assert!((q.sigma - 0.25).abs() < 0.05, "{q:?}");
    }

    #[test]
    fn a_known_broken_stick_is_recovered_from_counts_with_zeros() {
        let counts = campaign(7);
        let zeros = counts.iter().filter(|c| c.solutions == 0).count();
        assert!((10..90).contains(&zeros), "{zeros}");
        let b = fit(&counts, Shape::BrokenStick).unwrap();
        assert!((b.knot.unwrap() - 5.5).abs() < 0.4, "{b:?}");
        assert!((b.coef[1] - 0.5).abs() < 0.1 && (b.slope_above() - 1.1).abs() < 0.15, "{b:?}");
        assert!((b.sigma - 0.3).abs() < 0.06, "{b:?}");
        let line = fit(&counts, Shape::Line).unwrap();
        assert!(b.log_likelihood > line.log_likelihood + 5.0);
        // The maximum: every nearby point is lower.
        let at = |c: [f64; 3], s: f64| {
            log_likelihood(&counts, |x| c[0] + c[1] * x + c[2] * (x - b.knot.unwrap()).max(0.0), s)
        };
        assert!((at(b.coef, b.sigma) - b.log_likelihood).abs() < 1e-8);
        for d in [[0.01, 0.0, 0.0], [0.0, -0.01, 0.0], [0.0, 0.0, 0.02]] {
            let c = [b.coef[0] + d[0], b.coef[1] + d[1], b.coef[2] + d[2]];
            assert!(at(c, b.sigma) < b.log_likelihood && at(b.coef, b.sigma * 1.02) < b.log_likelihood);
        }
        // A fixed knot beyond the data: the line.
        let far = fit_at_knot(&counts, 50.0).unwrap();
        assert!((far.log_likelihood - line.log_likelihood).abs() < 1e-6 && (far.coef[1] - line.coef[1]).abs() < 1e-5);
        let bad = [Count { x: 1.0, work: 0.0, solutions: 1 }];
        assert!(matches!(fit(&bad, Shape::Line), Err(FitError::NotFinite { .. })));
    }
}
