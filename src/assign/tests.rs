//! The solver against the exhaustive oracle, cold and warm, in both precisions.

use super::*;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus as Rng;

const NEG: f32 = f32::NEG_INFINITY;

fn rng(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

fn uniform(r: &mut Rng, n: usize) -> Vec<f32> {
    (0..n * n).map(|_| r.random::<f32>()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-4 * b.abs().max(1.0)
}

/// Check that the solver's state is a valid perfect assignment on allowed
/// pairs whose recomputed total equals the returned total; returns it.
fn check_solution(a: &Assigner, w: &[f32], total: f32) -> f64 {
    let n = a.n();
    let x = a.row_to_col();
    let y = a.col_to_row();
    assert_eq!(x.len(), n);
    assert_eq!(y.len(), n);
    let mut seen = vec![false; n];
    let mut sum = 0.0f64;
    for r in 0..n {
        let c = x[r] as usize;
        assert!(c < n, "row {r} unassigned");
        assert!(!seen[c], "column {c} used twice");
        seen[c] = true;
        assert_eq!(y[c] as usize, r, "col_to_row not inverse of row_to_col");
        let wv = w[r * n + c];
        assert!(wv != NEG, "forbidden pair ({r},{c}) used");
        sum += wv as f64;
    }
    assert_eq!(sum as f32, total, "returned total differs from recomputed");
    assert_eq!(sum, a.total_f64());
    // Independent optimality certificate from the column potentials: for
    // any v, sum_r max_c (w[r][c] + v[c]) - sum_c v[c] >= optimum (weak
    // duality), so equality with the primal total proves optimality. It
    // also catches broken dual invariants that happened not to change
    // the primal answer.
    let v = a.col_potentials();
    let mut bound = 0.0f64;
    let mut scale = 1.0f64;
    for r in 0..n {
        let mut best = f64::NEG_INFINITY;
        for c in 0..n {
            let wv = w[r * n + c] as f64;
            if wv > f64::NEG_INFINITY {
                scale = scale.max(wv.abs());
            }
            best = best.max(wv + v[c]);
        }
        bound += best;
    }
    bound -= v.iter().sum::<f64>();
    assert!((bound - sum).abs() <= 1e-9 * scale * (n as f64 + 1.0).powi(2), "dual certificate {bound} != primal {sum}");
    sum
}

/// Solve cold and against brute force; returns whether feasible.
fn vs_brute(n: usize, w: &[f32], ctx: &str) -> bool {
    let mut a = Assigner::new(n);
    let got = a.solve(w);
    match brute_force(n, w) {
        None => {
            assert_eq!(got, Err(AssignError::Infeasible), "{ctx}: expected infeasible");
            false
        }
        Some((bt, perm)) => {
            let t = got.unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let s = check_solution(&a, w, t);
            let bs: f64 = (0..n).map(|r| w[r * n + perm[r]] as f64).sum();
            assert_eq!(bs as f32, bt);
            assert!(close(s, bs), "{ctx}: got {s}, brute {bs}");
            // The same solver warm-started on the same matrix.
            let t2 = a.solve_warm(w).unwrap();
            let s2 = check_solution(&a, w, t2);
            assert!(close(s2, bs), "{ctx}: warm {s2}, brute {bs}");
            true
        }
    }
}

#[test]
fn brute_force_sanity() {
    // Known small instance: best is anti-diagonal 3 + 3 = 6.
    let w = [1.0, 3.0, 3.0, 1.0];
    assert_eq!(brute_force(2, &w), Some((6.0, vec![1, 0])));
    assert_eq!(brute_force(2, &[NEG, 1.0, NEG, 2.0]), None);
    assert_eq!(brute_force(0, &[]), Some((0.0, vec![])));
}

#[test]
fn uniform_vs_brute() {
    for n in 1..=8 {
        let reps = if n <= 6 { 150 } else { 60 };
        for s in 0..reps {
            let mut r = rng(1000 * n as u64 + s);
            let w = uniform(&mut r, n);
            assert!(vs_brute(n, &w, &format!("uniform n={n} s={s}")));
        }
    }
}

#[test]
fn ties_vs_brute() {
    for n in 1..=8 {
        let reps = if n <= 6 { 150 } else { 60 };
        for s in 0..reps {
            let mut r = rng(2000 * n as u64 + s);
            let hi = if s % 2 == 0 { 2 } else { 4 };
            let w: Vec<f32> = (0..n * n).map(|_| r.random_range(0..hi) as f32).collect();
            let mut a = Assigner::new(n);
            let t = a.solve(&w).unwrap();
            check_solution(&a, &w, t);
            // Integer weights: must be exact.
            assert_eq!(Some(t), brute_force(n, &w).map(|b| b.0), "ties n={n} s={s}");
        }
    }
}

#[test]
fn structured_vs_brute() {
    for n in 1..=8 {
        for s in 0..40u64 {
            let mut r = rng(3000 * n as u64 + s);
            // Separable: every permutation is optimal.
            let f: Vec<f32> = (0..n).map(|_| r.random_range(-5.0f32..5.0)).collect();
            let g: Vec<f32> = (0..n).map(|_| r.random_range(-5.0f32..5.0)).collect();
            let w: Vec<f32> = (0..n * n).map(|k| f[k / n] + g[k % n]).collect();
            assert!(vs_brute(n, &w, &format!("separable n={n} s={s}")));
            // Planted permutation with a clear margin.
            let mut perm: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                perm.swap(i, r.random_range(0..=i));
            }
            let mut w = uniform(&mut r, n);
            for (i, &p) in perm.iter().enumerate() {
                w[i * n + p] += 2.0;
            }
            let mut a = Assigner::new(n);
            let t = a.solve(&w).unwrap();
            check_solution(&a, &w, t);
            let planted: Vec<u32> = perm.iter().map(|&p| p as u32).collect();
            assert_eq!(a.row_to_col(), &planted[..], "planted n={n} s={s}");
            assert!(vs_brute(n, &w, &format!("planted n={n} s={s}")));
            // Monge-like (banded) costs, and negative weights.
            let w: Vec<f32> =
                (0..n * n).map(|k| -(((k / n) as f32 - (k % n) as f32).powi(2)) + r.random::<f32>() * 0.5).collect();
            assert!(vs_brute(n, &w, &format!("banded n={n} s={s}")));
            // Large magnitudes mixed with small ones.
            let w: Vec<f32> = (0..n * n)
                .map(|_| if r.random_bool(0.2) { r.random_range(-1e6f32..1e6) } else { r.random() })
                .collect();
            assert!(vs_brute(n, &w, &format!("mixed-scale n={n} s={s}")));
        }
    }
}

#[test]
fn forbidden_vs_brute() {
    let mut feasible = 0;
    let mut infeasible = 0;
    for n in 1..=8 {
        for s in 0..150u64 {
            let mut r = rng(4000 * n as u64 + s);
            let p = [0.2, 0.4, 0.6, 0.75][s as usize % 4];
            let ints = s % 3 == 0;
            let w: Vec<f32> = (0..n * n)
                .map(|_| {
                    if r.random_bool(p) {
                        NEG
                    } else if ints {
                        r.random_range(0..3) as f32
                    } else {
                        r.random_range(-1.0f32..1.0)
                    }
                })
                .collect();
            if vs_brute(n, &w, &format!("forbidden n={n} s={s}")) {
                feasible += 1;
            } else {
                infeasible += 1;
            }
        }
    }
    // Make sure both branches were really exercised.
    assert!(feasible > 200 && infeasible > 200, "{feasible} / {infeasible}");
}

fn km_total(n: usize, wi: &[i64]) -> i64 {
    let m = pathfinding::matrix::Matrix::from_vec(n, n, wi.to_vec()).unwrap();
    pathfinding::kuhn_munkres::kuhn_munkres(&m).0
}

#[test]
fn integer_vs_kuhn_munkres() {
    let mut seed = 0;
    for n in (1..=40).chain([64, 100]) {
        let reps = if n <= 40 { 6 } else { 2 };
        for rep in 0..reps {
            seed += 1;
            let mut r = rng(5000 + seed);
            let (lo, hi) = [(0, 3), (0, 1000), (-50, 50), (-1_000_000, 1_000_000)][rep % 4];
            let wi: Vec<i64> = (0..n * n).map(|_| r.random_range(lo..=hi)).collect();
            let w: Vec<f32> = wi.iter().map(|&v| v as f32).collect();
            let expect = km_total(n, &wi);
            let mut a = Assigner::new(n);
            let t = a.solve(&w).unwrap();
            check_solution(&a, &w, t);
            let mine: i64 = (0..n).map(|i| wi[i * n + a.row_to_col()[i] as usize]).sum();
            assert_eq!(mine, expect, "n={n} rep={rep}");
            assert_eq!(a.total_f64(), expect as f64);
            // Integer perturbation sequence, warm vs exact.
            let mut wi = wi;
            for step in 0..3 {
                for v in wi.iter_mut() {
                    if r.random_bool(0.1) {
                        *v += r.random_range(-2..=2);
                    }
                }
                let w: Vec<f32> = wi.iter().map(|&v| v as f32).collect();
                let t = a.solve_warm(&w).unwrap();
                check_solution(&a, &w, t);
                assert_eq!(a.total_f64(), km_total(n, &wi) as f64, "warm n={n} step={step}");
            }
        }
    }
}

#[test]
fn warm_sequences_match_cold() {
    for (n, seeds, steps) in [(3, 30, 20), (7, 30, 20), (16, 20, 20), (50, 8, 15), (128, 3, 10)] {
        for s in 0..seeds {
            let mut r = rng(6000 + 100 * n as u64 + s);
            let eps = [0.001f32, 0.01, 0.1][s as usize % 3];
            let mut w = uniform(&mut r, n);
            let mut warm = Assigner::new(n);
            let mut cold = Assigner::new(n);
            warm.solve_warm(&w).unwrap(); // first call: cold fallback
            for step in 0..steps {
                for v in w.iter_mut() {
                    *v += r.random_range(-eps..eps);
                }
                let tw = warm.solve_warm(&w).unwrap();
                let sw = check_solution(&warm, &w, tw);
                let tc = cold.solve(&w).unwrap();
                let sc = check_solution(&cold, &w, tc);
                assert!(close(sw, sc), "n={n} s={s} step={step}: warm {sw} cold {sc}");
                if n <= 8 {
                    let b = brute_force(n, &w).unwrap().0 as f64;
                    assert!(close(sw, b), "n={n} s={s} step={step}: warm {sw} brute {b}");
                }
            }
        }
    }
}

#[test]
fn warm_after_unrelated_matrices() {
    for n in [2usize, 5, 8, 30] {
        let mut a = Assigner::new(n);
        for s in 0..30u64 {
            let mut r = rng(7000 + 50 * n as u64 + s);
            let scale = [1.0f32, 1000.0, 1e-3, -7.0][s as usize % 4];
            // Random forbidden pattern, but a random permutation kept allowed.
            let mut w: Vec<f32> =
                (0..n * n).map(|_| if r.random_bool(0.3) { NEG } else { r.random::<f32>() * scale }).collect();
            let shift = r.random_range(0..n);
            for i in 0..n {
                w[i * n + (i + shift) % n] = r.random::<f32>() * scale;
            }
            let tw = a.solve_warm(&w).unwrap();
            let sw = check_solution(&a, &w, tw);
            let mut c = Assigner::new(n);
            let tc = c.solve(&w).unwrap();
            let sc = check_solution(&c, &w, tc);
            assert!(close(sw, sc), "n={n} s={s}: warm {sw} cold {sc}");
            if n <= 8 {
                let b = brute_force(n, &w).unwrap().0 as f64;
                assert!(close(sw, b));
            }
        }
    }
}

#[test]
fn warm_infeasible_then_recovers() {
    let n = 6;
    let mut r = rng(8000);
    let mut a = Assigner::new(n);
    for _ in 0..5 {
        let w = uniform(&mut r, n);
        a.solve_warm(&w).unwrap();
        // Row 2 all forbidden.
        let mut bad = w.clone();
        bad[2 * n..3 * n].fill(NEG);
        assert_eq!(a.solve_warm(&bad), Err(AssignError::Infeasible));
        // Column 4 all forbidden.
        let mut bad = w.clone();
        for i in 0..n {
            bad[i * n + 4] = NEG;
        }
        assert_eq!(a.solve_warm(&bad), Err(AssignError::Infeasible));
        // Forbid exactly the previous optimum's pair for row 0 plus a Hall
        // violation: rows 0..3 may only use columns 0..2.
        let mut bad = w.clone();
        for i in 0..3 {
            for j in 2..n {
                bad[i * n + j] = NEG;
            }
        }
        assert_eq!(a.solve_warm(&bad), Err(AssignError::Infeasible));
        assert_eq!(a.solve(&bad), Err(AssignError::Infeasible));
        let t = a.solve_warm(&w).unwrap();
        let s = check_solution(&a, &w, t);
        assert!(close(s, brute_force(n, &w).unwrap().0 as f64));
    }
}

#[test]
fn infeasible_cases() {
    let n = 5;
    let base: Vec<f32> = (0..n * n).map(|k| (k % 7) as f32).collect();
    let mut a = Assigner::new(n);
    let mut row = base.clone();
    row[3 * n..4 * n].fill(NEG);
    assert_eq!(a.solve(&row), Err(AssignError::Infeasible));
    let mut col = base.clone();
    for i in 0..n {
        col[i * n + 1] = NEG;
    }
    assert_eq!(a.solve(&col), Err(AssignError::Infeasible));
    // Hall: rows 0..3 can only use columns {0, 1}.
    let mut hall = base.clone();
    for i in 0..3 {
        for j in 2..n {
            hall[i * n + j] = NEG;
        }
    }
    assert_eq!(a.solve(&hall), Err(AssignError::Infeasible));
    // 2x2 block structure: rows {0,1} x cols {0,1} allowed, rows {2,3,4}
    // may use columns {0,1} only too -> infeasible; with one link fixed it
    // becomes feasible.
    let mut blk = vec![NEG; n * n];
    for i in 0..n {
        for j in 0..2 {
            blk[i * n + j] = 1.0;
        }
    }
    assert_eq!(a.solve(&blk), Err(AssignError::Infeasible));
    let all = vec![NEG; n * n];
    assert_eq!(a.solve(&all), Err(AssignError::Infeasible));
    assert_eq!(a.solve_warm(&all), Err(AssignError::Infeasible));
    // Solver usable afterwards.
    let t = a.solve(&base).unwrap();
    check_solution(&a, &base, t);
    assert_eq!(Some(t), brute_force(n, &base).map(|b| b.0));
    // Only a single feasible permutation (the anti-diagonal).
    let mut one = vec![NEG; n * n];
    for i in 0..n {
        one[i * n + (n - 1 - i)] = i as f32 - 10.0;
    }
    let t = a.solve_warm(&one).unwrap();
    check_solution(&a, &one, t);
    assert_eq!(t, (0..n).map(|i| i as f32 - 10.0).sum::<f32>());
    // Large infeasible instance terminates: half the rows share 10 columns.
    let n = 200;
    let mut r = rng(9);
    let mut w = uniform(&mut r, n);
    for i in 0..100 {
        for j in 10..n {
            w[i * n + j] = NEG;
        }
    }
    let mut a = Assigner::new(n);
    assert_eq!(a.solve(&w), Err(AssignError::Infeasible));
    assert_eq!(a.solve_warm(&w), Err(AssignError::Infeasible));
}

#[test]
fn edge_cases_and_errors() {
    let mut a = Assigner::new(0);
    assert_eq!(a.solve(&[]), Ok(0.0));
    assert_eq!(a.solve_warm(&[]), Ok(0.0));
    assert!(a.row_to_col().is_empty());
    assert!(matches!(a.solve(&[1.0]), Err(AssignError::BadShape { n: 0, expected: 0, got: 1 })));

    let mut a = Assigner::new(1);
    assert_eq!(a.n(), 1);
    assert_eq!(a.solve(&[-2.5]), Ok(-2.5));
    assert_eq!(a.row_to_col(), &[0]);
    assert_eq!(a.solve(&[NEG]), Err(AssignError::Infeasible));
    assert_eq!(a.solve_warm(&[3.0]), Ok(3.0));

    let mut a = Assigner::new(3);
    assert_eq!(a.solve(&[0.0; 8]), Err(AssignError::BadShape { n: 3, expected: 9, got: 8 }));
    let mut w = [0.5f32; 9];
    w[5] = f32::NAN;
    assert!(matches!(a.solve(&w), Err(AssignError::InvalidWeight { row: 1, col: 2, .. })));
    w[5] = f32::INFINITY;
    assert_eq!(a.solve_warm(&w), Err(AssignError::InvalidWeight { row: 1, col: 2, value: f32::INFINITY }));
    // Invalid weights take precedence over infeasibility, cold or warm.
    let mut both = [0.5f32; 9];
    both[..3].fill(NEG);
    both[7] = f32::NAN;
    assert!(matches!(a.solve(&both), Err(AssignError::InvalidWeight { row: 2, col: 1, .. })));
    a.solve(&[0.5; 9]).unwrap();
    assert!(matches!(a.solve_warm(&both), Err(AssignError::InvalidWeight { row: 2, col: 1, .. })));
    w[5] = f32::MAX;
    let t = a.solve(&w).unwrap();
    check_solution(&a, &w, t);
    assert_eq!(t, f32::MAX);
    assert!(AssignError::Infeasible.to_string().contains("no perfect assignment"));
}

#[test]
fn larger_float_consistency() {
    // Transposing the matrix leaves the optimum unchanged; cold, warm and
    // transposed solves must agree, and duals must certify optimality.
    for (n, seed) in [(64usize, 1u64), (100, 2), (256, 3)] {
        let mut r = rng(10_000 + seed);
        let w = uniform(&mut r, n);
        let wt: Vec<f32> = (0..n * n).map(|k| w[(k % n) * n + k / n]).collect();
        let mut a = Assigner::new(n);
        let t = a.solve(&w).unwrap();
        let s = check_solution(&a, &w, t);
        // Dual certificate: u[r] = max_c (w + v); sum u - sum v == total.
        let v = a.col_potentials();
        let mut bound = 0.0f64;
        for i in 0..n {
            let u = (0..n).map(|j| w[i * n + j] as f64 + v[j]).fold(f64::NEG_INFINITY, f64::max);
            bound += u;
        }
        bound -= v.iter().sum::<f64>();
        assert!((bound - s).abs() < 1e-6 * n as f64, "n={n}: dual bound {bound} vs primal {s}");
        let mut b = Assigner::new(n);
        let tt = b.solve(&wt).unwrap();
        let st = check_solution(&b, &wt, tt);
        assert!(close(s, st), "n={n}: {s} vs transposed {st}");
    }
}

#[test]
fn degenerate_and_near_ties() {
    // Completely tied large matrices (every permutation optimal), with and
    // without forbidden pairs: must terminate and be exact.
    for n in [50usize, 200] {
        let mut a = Assigner::new(n);
        let w = vec![0.25f32; n * n];
        let t = a.solve(&w).unwrap();
        assert_eq!(check_solution(&a, &w, t), 0.25 * n as f64);
        let t = a.solve_warm(&w).unwrap();
        assert_eq!(check_solution(&a, &w, t), 0.25 * n as f64);
        // Banded: only |r - c| <= 1 allowed, all equal.
        let w: Vec<f32> = (0..n * n).map(|k| if (k / n).abs_diff(k % n) <= 1 { 1.0 } else { NEG }).collect();
        let t = a.solve_warm(&w).unwrap();
        assert_eq!(check_solution(&a, &w, t), n as f64);
    }
    // Integers plus noise far below the integer spacing: near-ties that
    // rounding could mishandle.
    for n in 2..=8 {
        for s in 0..60u64 {
            let mut r = rng(11_000 + 100 * n as u64 + s);
            let w: Vec<f32> =
                (0..n * n).map(|_| r.random_range(0..3) as f32 + r.random_range(-1e-6f32..1e-6)).collect();
            assert!(vs_brute(n, &w, &format!("near-ties n={n} s={s}")));
        }
    }
    // Near-tie warm sequence on a bigger matrix.
    let n = 120;
    let mut r = rng(12_000);
    let mut w: Vec<f32> = (0..n * n).map(|_| r.random_range(0..4) as f32).collect();
    let mut warm = Assigner::new(n);
    let mut cold = Assigner::new(n);
    for step in 0..10 {
        for v in w.iter_mut() {
            *v += r.random_range(-1e-5f32..1e-5);
        }
        let tw = warm.solve_warm(&w).unwrap();
        let sw = check_solution(&warm, &w, tw);
        let tc = cold.solve(&w).unwrap();
        let sc = check_solution(&cold, &w, tc);
        assert!(close(sw, sc), "step {step}: warm {sw} cold {sc}");
    }
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // No regression files: this module must not write outside src/.
        #![proptest_config(ProptestConfig {
            cases: 200,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]
        #[test]
        fn matches_brute(n in 1usize..=6, cells in proptest::collection::vec(-1i32..6, 36)) {
            // -1 encodes a forbidden pair, others are small integer weights.
            let w: Vec<f32> = cells[..n * n]
                .iter()
                .map(|&c| if c < 0 { NEG } else { c as f32 })
                .collect();
            let mut a = Assigner::new(n);
            let got = a.solve(&w);
            match brute_force(n, &w) {
                None => prop_assert_eq!(got, Err(AssignError::Infeasible)),
                Some((bt, _)) => {
                    let t = got.unwrap();
                    check_solution(&a, &w, t);
                    prop_assert_eq!(t, bt);
                }
            }
        }

        /// Enumeration (n <= 4) is brute force's first best permutation, on integer
        /// weights with ties and forbidden pairs and on random floats, and JV's total.
        #[test]
        fn enumeration_matches_brute_force_and_jv(
            n in 1usize..=4,
            cells in proptest::collection::vec(-1i32..4, 16),
            floats in proptest::collection::vec(-1.0f32..1.0, 16),
            use_floats in proptest::bool::ANY,
        ) {
            let w: Vec<f32> = (0..n * n)
                .map(|i| if use_floats { floats[i] } else if cells[i] < 0 { NEG } else { cells[i] as f32 })
                .collect();
            let mut e = Assigner::new(n);
            let mut jv = Assigner::new(n);
            let got = e.solve_enumerate(&w);
            let jv_got = jv.solve(&w);
            match brute_force(n, &w) {
                None => {
                    prop_assert_eq!(got, Err(AssignError::Infeasible));
                    prop_assert_eq!(jv_got, Err(AssignError::Infeasible));
                }
                Some((bt, perm)) => {
                    let t = got.unwrap();
                    prop_assert_eq!(t, bt);
                    prop_assert_eq!(e.row_to_col().iter().map(|&c| c as usize).collect::<Vec<_>>(), perm);
                    for (r, &c) in e.row_to_col().iter().enumerate() {
                        prop_assert_eq!(e.col_to_row()[c as usize] as usize, r);
                    }
                    prop_assert!((jv_got.unwrap() as f64 - t as f64).abs() <= 1e-5);
                }
            }
            // A warm solve after enumeration starts cold and is still optimal.
            if let Some((bt, _)) = brute_force(n, &w) {
                prop_assert!((e.solve_warm(&w).unwrap() as f64 - bt as f64).abs() <= 1e-5);
            }
        }
    }
}

/// The `f32` solver's answer on `w`: a valid perfect assignment on allowed pairs, with
/// its total summed in `f64`.
fn f32_total(a: &Assigner<f32>, w: &[f32]) -> f64 {
    let n = a.n();
    let mut seen = vec![false; n];
    let mut sum = 0.0;
    for (r, &c) in a.row_to_col().iter().enumerate() {
        let c = c as usize;
        assert!(c < n && !seen[c], "row {r}: column {c} missing or used twice");
        seen[c] = true;
        assert_eq!(a.col_to_row()[c] as usize, r);
        assert!(w[r * n + c] != NEG, "forbidden pair ({r},{c}) used");
        sum += w[r * n + c] as f64;
    }
    assert_eq!(sum, a.total_f64());
    sum
}

/// How far an `f32` solve may fall short of the optimum: the rounding of reduced costs
/// of size `scale`, summed along paths of at most `n` steps per row.
fn f32_slack(n: usize, w: &[f32]) -> f64 {
    let scale = w.iter().filter(|x| x.is_finite()).fold(1.0f64, |m, &x| m.max(x.abs() as f64));
    4.0 * f32::EPSILON as f64 * scale * ((n * n) as f64 + 1.0)
}

/// f32 reduced costs against brute force, cold and warm, on every kind of matrix the
/// f64 solver is tested on: optimal up to f32 rounding, and infeasible exactly when
/// brute force finds no permutation.
#[test]
fn f32_solver_is_optimal_up_to_rounding_against_brute_force() {
    let (mut feasible, mut infeasible) = (0, 0);
    for n in 1..=8 {
        for s in 0..120u64 {
            let mut r = rng(9000 * n as u64 + s);
            let w: Vec<f32> = match s % 6 {
                0 => uniform(&mut r, n),
                1 => (0..n * n).map(|_| r.random_range(0..3) as f32).collect(),
                2 => {
                    let f: Vec<f32> = (0..n).map(|_| r.random_range(-5.0f32..5.0)).collect();
                    (0..n * n).map(|k| f[k / n] + f[k % n] * 0.5).collect()
                }
                3 => (0..n * n)
                    .map(|_| if r.random_bool(0.2) { r.random_range(-1e4f32..1e4) } else { r.random() })
                    .collect(),
                // Near-ties: values a few f32 ulps apart.
                4 => (0..n * n).map(|_| 1.0 + r.random_range(0..4) as f32 * f32::EPSILON).collect(),
                _ => (0..n * n).map(|_| if r.random_bool(0.5) { NEG } else { r.random_range(-1.0f32..1.0) }).collect(),
            };
            let mut a = Assigner::new_f32(n);
            let cold = a.solve(&w);
            match brute_force(n, &w) {
                None => {
                    assert_eq!(cold, Err(AssignError::Infeasible), "n={n} s={s}");
                    infeasible += 1;
                }
                Some((_, perm)) => {
                    let best: f64 = (0..n).map(|i| w[i * n + perm[i]] as f64).sum();
                    cold.unwrap_or_else(|e| panic!("n={n} s={s}: {e}"));
                    let got = f32_total(&a, &w);
                    assert!(best - got <= f32_slack(n, &w), "n={n} s={s}: {got} < optimum {best}");
                    a.solve_warm(&w).unwrap();
                    let warm = f32_total(&a, &w);
                    assert!(best - warm <= f32_slack(n, &w), "n={n} s={s}: warm {warm} < optimum {best}");
                    feasible += 1;
                }
            }
        }
    }
    assert!(feasible > 700 && infeasible > 20, "{feasible} / {infeasible}");
}

/// Long warm-started sequences, as a map makes them (each matrix a small move from the
/// last): the f32 solver stays within rounding of the f64 solver's optimum at every
/// step, for the class sizes of set 1 up to 16x16, and its potentials do not drift.
#[test]
fn f32_warm_sequences_track_the_f64_solver() {
    for (n, steps) in [(5, 3000), (12, 2000), (24, 1500), (36, 800), (56, 300), (196, 40)] {
        let mut r = rng(77 + n as u64);
        let mut w = uniform(&mut r, n);
        let (mut a64, mut a32) = (Assigner::new(n), Assigner::new_f32(n));
        let mut differ = 0;
        for step in 0..steps {
            for x in w.iter_mut() {
                *x = (*x + r.random_range(-0.05f32..0.05)).clamp(0.0, 4.0);
            }
            a64.solve_warm(&w).unwrap();
            a32.solve_warm(&w).unwrap();
            let (t64, t32) = (a64.total_f64(), f32_total(&a32, &w));
            assert!(t64 - t32 <= f32_slack(n, &w), "n={n} step {step}: f32 {t32} < f64 {t64}");
            differ += (a64.row_to_col() != a32.row_to_col()) as usize;
            let vmax = a32.col_potentials().iter().fold(0.0f32, |m, &v| m.max(v.abs()));
            assert!(vmax < 1e3, "n={n} step {step}: f32 potentials drifted to {vmax}");
        }
        // Continuous random weights have no exact ties: the two agree almost always.
        assert!(differ * 20 <= steps, "n={n}: {differ} of {steps} assignments differ");
    }
}

/// Runs one warm sequence through a fused and a separate-kernel solver of precision `R`
/// and holds them to the same totals, assignments, potentials and counts, bit for bit.
fn same_bits<R: Real>(n: usize, seq: &[Vec<f32>], ctx: &str) {
    let mut fused = Assigner::<R>::with_precision(n);
    let mut sep = Assigner::<R>::with_precision(n).with_kernels(Kernels::Separate);
    for (step, w) in seq.iter().enumerate() {
        let cold = step % 7 == 3;
        let (a, b) = if cold { (fused.solve(w), sep.solve(w)) } else { (fused.solve_warm(w), sep.solve_warm(w)) };
        assert_eq!(a.map(f32::to_bits), b.map(f32::to_bits), "{ctx} step {step}");
        assert_eq!(fused.row_to_col(), sep.row_to_col(), "{ctx} step {step}");
        let bits = |s: &Assigner<R>| s.col_potentials().iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&fused), bits(&sep), "{ctx} step {step}");
    }
    assert_eq!(format!("{:?}", fused.stats()), format!("{:?}", sep.stats()), "{ctx}");
}

#[test]
fn fused_kernels_are_the_separate_ones_bit_for_bit() {
    // Drifting continuous weights (F1's case), integer weights full of ties, forbidden
    // pairs, and sizes on and off the lane width, in both precisions.
    let mut cases = 0;
    for n in [1usize, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 36, 40, 56] {
        for kind in 0..4 {
            let mut r = rng(31_000 + 10 * n as u64 + kind);
            let draw = |r: &mut Rng| match kind {
                0 | 1 => r.random_range(0.0f32..4.0),
                2 => r.random_range(0..3) as f32,
                _ => {
                    if r.random_range(0..5) == 0 {
                        NEG
                    } else {
                        r.random_range(0..4) as f32
                    }
                }
            };
            let mut w: Vec<f32> = (0..n * n).map(|_| draw(&mut r)).collect();
            let mut seq = Vec::new();
            for _ in 0..60 {
                for x in w.iter_mut() {
                    if *x == NEG {
                        continue;
                    }
                    *x = match kind {
                        0 => (*x + r.random_range(-0.05f32..0.05)).clamp(0.0, 4.0),
                        1 => (*x + r.random_range(-0.5f32..0.5)).clamp(0.0, 4.0),
                        _ if r.random_range(0..8) == 0 => r.random_range(0..3) as f32,
                        _ => *x,
                    };
                }
                seq.push(w.clone());
            }
            same_bits::<f64>(n, &seq, &format!("f64 n={n} kind={kind}"));
            same_bits::<f32>(n, &seq, &format!("f32 n={n} kind={kind}"));
            cases += 1;
        }
    }
    assert_eq!(cases, 68);
}

#[test]
fn fused_row_kernel_finds_the_first_minimum() {
    // The kernel alone, against the separate passes, on rows full of ties.
    for n in 0..=41usize {
        for s in 0..40u64 {
            let mut r = rng(41_000 + 100 * n as u64 + s);
            let row: Vec<f32> =
                (0..n).map(|_| if r.random_range(0..6) == 0 { NEG } else { r.random_range(0..3) as f32 }).collect();
            let v: Vec<f64> = (0..n).map(|_| r.random_range(0..2) as f64).collect();
            let (a, b) = top2_reduced(&row, &v);
            let (fa, fb, fj) = top2_first_reduced(&row, &v);
            assert_eq!((a.to_bits(), b.to_bits()), (fa.to_bits(), fb.to_bits()), "n={n} s={s}");
            if a < f64::INFINITY {
                assert_eq!(fj, find_reduced(&row, &v, 0, a), "n={n} s={s}");
            }
        }
    }
}
