//! Dense assignment solver: cold solves and warm solves on perturbed copies.
use std::hint::black_box;
use std::time::Duration;

use concur::assign::Assigner;
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

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

        let mut a = Assigner::new(n);
        g.bench_with_input(BenchmarkId::new("cold", n), &base, |b, w| {
            b.iter(|| black_box(a.solve(black_box(w)).unwrap()))
        });

        // Warm: each iteration sees `base` plus fresh ±0.01 noise, so two
        // consecutive matrices differ by up to 0.02 per entry.
        let mut a = Assigner::new(n);
        a.solve(&base).unwrap();
        g.bench_function(BenchmarkId::new("warm", n), |b| {
            b.iter_batched(
                || {
                    base.iter()
                        .map(|&x| x + rng.random_range(-0.01f32..0.01))
                        .collect::<Vec<f32>>()
                },
                |w| black_box(a.solve_warm(black_box(&w)).unwrap()),
                BatchSize::NumIterations(8),
            )
        });

        // Reference for the warm case: cold solves of the same kind of input.
        let mut a = Assigner::new(n);
        g.bench_function(BenchmarkId::new("cold-perturbed", n), |b| {
            b.iter_batched(
                || {
                    base.iter()
                        .map(|&x| x + rng.random_range(-0.01f32..0.01))
                        .collect::<Vec<f32>>()
                },
                |w| black_box(a.solve(black_box(&w)).unwrap()),
                BatchSize::NumIterations(8),
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench_assign);
criterion_main!(benches);
