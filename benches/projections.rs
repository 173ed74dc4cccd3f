//! The projections on the CPU and, when there is an adapter, on the GPU, on the same work:
//! one generated puzzle per size, one batch of random states. Throughput is reported in
//! trial-iterations (criterion's elements); `concur bench --json` adds GB/s and the device's
//! copy bandwidth. On a software Vulkan driver the GPU numbers only show the harness works.
//!
//! `CONCUR_BENCH_SIZES` (default `5x5,8x8`) and `CONCUR_BENCH_BATCHES` (default `1,256`)
//! widen the sweep (for example `16x16` and `16384` on a real GPU).
use concur::batch::MapRun;
use std::hint::black_box;
use std::time::Duration;

use concur::dc::{DcConfig, DcLayout, DcMap, DivideScratch, Layout, project};
use concur::f1::project::F1;
use concur::puzzle::generate::{GenerateOptions, generate};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn list<T: std::str::FromStr>(var: &str, default: &str) -> Vec<T> {
    std::env::var(var).unwrap_or_else(|_| default.into()).split(',').filter_map(|s| s.trim().parse().ok()).collect()
}

fn sizes() -> Vec<(usize, usize)> {
    std::env::var("CONCUR_BENCH_SIZES")
        .unwrap_or_else(|_| "5x5,8x8".into())
        .split(',')
        .filter_map(|s| s.split_once('x').and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?))))
        .collect()
}

fn random(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..len).map(|_| rng.random::<f32>()).collect()
}

fn bench_projections(c: &mut Criterion) {
    let mut g = c.benchmark_group("projections");
    g.measurement_time(Duration::from_secs(2));
    g.warm_up_time(Duration::from_millis(300));
    g.sample_size(10);
    #[cfg(feature = "gpu")]
    let ctx = concur::backend::gpu::GpuContext::shared().ok();
    for (w, h) in sizes() {
        let p = generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed: 1 })
            .expect("generate")
            .0;
        let f1 = F1::new(&p).expect("feasible");
        let layout = Layout::new(&p, DcLayout::Plain);
        for batch in list::<usize>("CONCUR_BENCH_BATCHES", "1,256") {
            let id = format!("{w}x{h}/{batch}");
            g.throughput(Throughput::Elements(batch as u64));
            let (d, wl) = (f1.dim(), f1.weight_len());
            let x = random(batch * d, 7);
            let mut pe = vec![0.0f32; batch * d];
            g.bench_function(BenchmarkId::new("f1_edges_cpu", &id), |b| {
                b.iter(|| {
                    for (o, xs) in pe.chunks_mut(d).zip(x.chunks(d)) {
                        f1.project_edges(xs, o);
                    }
                    black_box(&pe);
                })
            });
            let (mut wt, mut best) = (vec![0.0f32; wl], vec![0u32; wl]);
            g.bench_function(BenchmarkId::new("f1_weights_cpu", &id), |b| {
                b.iter(|| {
                    for xs in x.chunks(d) {
                        f1.piece_weights(xs, &mut wt, &mut best);
                    }
                    black_box(&wt);
                })
            });
            // The map's weights (same values, bit for bit, as the reference row above).
            let mut sides = concur::f1::project::SideTable::default();
            g.bench_function(BenchmarkId::new("f1_weights_fast_cpu", &id), |b| {
                b.iter(|| {
                    for xs in x.chunks(d) {
                        f1.piece_weights_into(xs, &mut wt, &mut sides);
                    }
                    black_box(&wt);
                })
            });
            // RRR's reflection 2 P_E(x) - x in one pass (the map's step), beside P_E alone.
            g.bench_function(BenchmarkId::new("f1_reflect_cpu", &id), |b| {
                b.iter(|| {
                    for (o, xs) in pe.chunks_mut(d).zip(x.chunks(d)) {
                        f1.reflect_edges(xs, o);
                    }
                    black_box(&pe);
                })
            });
            let (s, nc) = (layout.slots(), layout.choices());
            let z = random(batch * s, 8);
            let mut m = vec![0.0f32; layout.vars()];
            g.bench_function(BenchmarkId::new("dc_concur_cpu", &id), |b| {
                b.iter(|| {
                    for zs in z.chunks(s) {
                        project::concur(&layout, zs, None, &mut m);
                    }
                    black_box(&m);
                })
            });
            let mut chosen = vec![0u32; nc];
            let mut div = DivideScratch::new(&layout);
            g.bench_function(BenchmarkId::new("dc_divide_cpu", &id), |b| {
                b.iter(|| {
                    for zs in z.chunks(s) {
                        project::divide(&layout, zs, &mut chosen, &mut div, &mut [], false).expect("plain layout");
                    }
                    black_box(&chosen);
                })
            });
            // The divide with the reference kernels (running compare-and-swap) it replaced.
            g.bench_function(BenchmarkId::new("dc_divide_reference_cpu", &id), |b| {
                b.iter(|| {
                    for zs in z.chunks(s) {
                        project::divide_reference(&layout, zs, &mut chosen, &mut div, &mut [], false)
                            .expect("plain layout");
                    }
                    black_box(&chosen);
                })
            });
            // Whole F2 runs of four rounds (256 RRR iterations per trial, the setup included:
            // about a tenth of the time at 8x8), with the fast and with the reference
            // kernels: the same iterates, so the ratio is the speed-up of the iteration
            // (slightly diluted by the setup).
            const ITERS: u64 = 256;
            g.throughput(Throughput::Elements(batch as u64 * ITERS));
            for (name, reference) in [("dc_rounds_cpu", false), ("dc_rounds_reference_cpu", true)] {
                let cfg = DcConfig {
                    all_trials: true,
                    no_cycle_restart: true,
                    run: MapRun { trials: batch, max_iters: ITERS, ..Default::default() },
                    ..concur::dc::DcOptions { layout: concur::dc::DcLayout::Plain, ..Default::default() }
                        .config(concur::batch::MapRun::default())
                };
                g.bench_function(BenchmarkId::new(name, &id), |b| {
                    b.iter(|| {
                        let map = DcMap::new(&p, cfg.clone()).expect("feasible");
                        let mut map = if reference { map.with_reference_kernels().expect("feasible") } else { map };
                        black_box(map.run(|_| {}).best_score)
                    })
                });
            }
            g.throughput(Throughput::Elements(batch as u64));
            #[cfg(feature = "gpu")]
            if let Some(ctx) = &ctx {
                use concur::backend::gpu::{dc::DcGpu, f1::F1Gpu};
                use concur::f1::map::MapConfig;
                let cfg = MapConfig { run: MapRun { trials: batch, ..Default::default() }, ..Default::default() };
                let gf = F1Gpu::new(ctx.clone(), &p, cfg).expect("device");
                gf.write_state(0, &x);
                for (k, name) in [
                    (concur::backend::gpu::f1::Kernel::Edges, "f1_edges_gpu"),
                    (concur::backend::gpu::f1::Kernel::Weights, "f1_weights_gpu"),
                ] {
                    g.bench_function(BenchmarkId::new(name, &id), |b| b.iter(|| gf.run_kernel(k, 1).expect("device")));
                }
                let dcfg = concur::dc::DcConfig {
                    run: MapRun { trials: batch, ..Default::default() },
                    ..concur::dc::DcOptions { layout: concur::dc::DcLayout::Plain, ..Default::default() }
                        .config(concur::batch::MapRun::default())
                };
                let gd = DcGpu::new(ctx.clone(), &p, dcfg).expect("device");
                let mut ch = vec![0u32; batch * nc];
                for (c, zs) in ch.chunks_mut(nc).zip(z.chunks(s)) {
                    project::divide(&layout, zs, c, &mut div, &mut [], false).expect("plain layout");
                }
                gd.write_state(0, &z, &ch, &vec![1.0; batch * layout.constraints()]);
                for (k, name) in [
                    (concur::backend::gpu::dc::Kernel::Concur, "dc_concur_gpu"),
                    (concur::backend::gpu::dc::Kernel::Divide, "dc_divide_gpu"),
                ] {
                    g.bench_function(BenchmarkId::new(name, &id), |b| b.iter(|| gd.run_kernel(k, 1).expect("device")));
                }
            }
        }
    }
    g.finish();
}

criterion_group!(benches, bench_projections);
criterion_main!(benches);
