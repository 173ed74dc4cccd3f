//! Dense assignment solver: cold solves, and warm solves on perturbed copies.
//!
//! `cold/n`: `Assigner::solve` cycling over 8 fixed uniform [0,1) matrices
//! (instance difficulty varies, so one matrix alone is not representative).
//! `warm_pmE/n`: `Assigner::solve_warm` where every iteration sees
//! `base + noise`, noise uniform in ±E per entry and fresh each iteration
//! (drawn from a pre-generated pool so the setup stays cheap); consecutive
//! matrices therefore differ by up to 2E per entry and the warm start always
//! has real work to do.
use std::hint::black_box;
use std::time::Duration;

use concur::assign::Assigner;
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const POOL: usize = 32;

fn uniform(rng: &mut Xoshiro256PlusPlus, n: usize) -> Vec<f32> {
    (0..n * n).map(|_| rng.random::<f32>()).collect()
}

fn bench_assign(c: &mut Criterion) {
    let mut g = c.benchmark_group("assign");
    g.measurement_time(Duration::from_secs(2));
    g.warm_up_time(Duration::from_millis(500));
    for n in [64usize, 100, 256] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(0xA551_6E00 + n as u64);
        let base = uniform(&mut rng, n);

        let instances: Vec<Vec<f32>> = (0..8).map(|_| uniform(&mut rng, n)).collect();
        let mut a = Assigner::new(n);
        let mut k = 0usize;
        g.bench_function(BenchmarkId::new("cold", n), |b| {
            b.iter(|| {
                k = (k + 1) % instances.len();
                black_box(a.solve(black_box(&instances[k])).unwrap())
            })
        });

        for (name, eps) in [("warm_pm0.01", 0.01f32), ("warm_pm0.001", 0.001)] {
            let pool: Vec<Vec<f32>> =
                (0..POOL).map(|_| (0..n * n).map(|_| rng.random_range(-eps..eps)).collect()).collect();
            let mut a = Assigner::new(n);
            a.solve(&base).unwrap();
            let mut k = 0usize;
            g.bench_function(BenchmarkId::new(name, n), |b| {
                b.iter_batched(
                    || {
                        k = (k + 1) % POOL;
                        base.iter().zip(&pool[k]).map(|(&x, &e)| x + e).collect::<Vec<f32>>()
                    },
                    |w| black_box(a.solve_warm(black_box(&w)).unwrap()),
                    BatchSize::NumIterations(8),
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_assign);
criterion_main!(benches);
