//! The GPU backend against the CPU reference, kernel by kernel, then whole solves.
//!
//! Without an adapter these tests print SKIPPED and pass; with `REQUIRE_GPU=1` (CI, on
//! Mesa's lavapipe) they fail instead. Tolerances: the edge average and the one-colour
//! projection are exact; sums of products may round differently on the device (fused
//! multiply-add, another summation order), so they are compared within 1e-5 relative.
use crate::common::generated;
use concur::backend::gpu::GpuContext;
use concur::backend::gpu::f1::{F1Gpu, Kernel};
use concur::batch::MapKind;
use concur::batch::MapRun;
use concur::f1::map::MapConfig;
use concur::f1::project::{EdgeProjection, F1};
use concur::puzzle::Puzzle;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// The shared device for one test. Through wgpu's GL backend (a machine with OpenGL and no
/// Vulkan), a thread that waits for the adapter's context while another holds it gives up
/// with a panic after a few seconds (wgpu-hal's EGL context lock), which a long dispatch on a
/// software rasteriser of a loaded machine reaches: there the device tests take the device
/// one at a time, for as long as this lives.
pub struct Gpu {
    ctx: Arc<GpuContext>,
    _one_at_a_time: Option<std::sync::MutexGuard<'static, ()>>,
}

impl std::ops::Deref for Gpu {
    type Target = Arc<GpuContext>;
    fn deref(&self) -> &Arc<GpuContext> {
        &self.ctx
    }
}

/// The shared device, or None (SKIPPED) when there is none and `REQUIRE_GPU` is not 1.
pub fn gpu(test: &str) -> Option<Gpu> {
    static GL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    match GpuContext::shared() {
        Ok(ctx) => {
            let gl = ctx.adapter.backend.eq_ignore_ascii_case("gl");
            // A test that panicked while holding the lock has failed already; the next goes on.
            let guard = gl.then(|| GL.lock().unwrap_or_else(|e| e.into_inner()));
            Some(Gpu { ctx, _one_at_a_time: guard })
        }
        Err(e) => {
            assert!(std::env::var("REQUIRE_GPU").as_deref() != Ok("1"), "{test}: REQUIRE_GPU=1 but {e}");
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

const TOL: f32 = 1e-5;

fn close(a: f32, b: f32) -> bool {
    (a == b) || (a - b).abs() <= TOL * (1.0 + a.abs().max(b.abs()))
}

fn random_state(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..len).map(|_| rng.random::<f32>() * 2.0 - 0.5).collect()
}

/// Puzzles of several shapes (corner-only classes, rectangles) and batch sizes.
fn cases() -> Vec<(Puzzle, usize, u64)> {
    vec![
        (generated(3, 3, 1).0, 1, 1),
        (generated(5, 5, 2).0, 3, 2),
        (generated(6, 4, 3).0, 5, 3),
        (generated(7, 7, 4).0, 2, 4),
    ]
}

fn cfg(kind: MapKind, edge: EdgeProjection, trials: usize, beta: f32) -> MapConfig {
    MapConfig { kind, edge, beta, run: MapRun { trials, ..Default::default() }, ..Default::default() }
}

#[test]
fn gpu_edge_projections_equal_the_cpu() {
    let Some(ctx) = gpu("gpu_edge_projections_equal_the_cpu") else { return };
    for (p, trials, seed) in cases() {
        for edge in [EdgeProjection::Average, EdgeProjection::OneColor] {
            let g = F1Gpu::new(ctx.clone(), &p, cfg(MapKind::Rrr, edge, trials, 0.5)).unwrap();
            let f1 = g.f1();
            let x = random_state(trials * f1.dim(), seed);
            g.write_state(0, &x);
            g.run_kernel(Kernel::Edges, 1).unwrap();
            let pe = g.read_edges().unwrap();
            let mut want = vec![0.0; f1.dim()];
            for t in 0..trials {
                f1.project_edges_with(edge, &x[t * f1.dim()..(t + 1) * f1.dim()], &mut want);
                assert_eq!(&pe[t * f1.dim()..(t + 1) * f1.dim()], &want[..], "{edge:?} trial {t}");
            }
        }
    }
}

/// CPU reference of the weights kernel: the weights of `a * P_E(x) + b * x`, under the
/// weighted metric of `slot_w` when given.
fn cpu_weights(f1: &F1, x: &[f32], a: f32, b: f32, slot_w: Option<&[f32]>) -> (Vec<f32>, Vec<u32>) {
    let mut pe = vec![0.0; f1.dim()];
    f1.project_edges(x, &mut pe);
    let mut z: Vec<f32> = pe.iter().zip(x).map(|(&p, &x)| a * p + b * x).collect();
    if let Some(d) = slot_w {
        f1.weigh_slots(d, &mut z);
    }
    let mut w = vec![0.0; f1.weight_len()];
    let mut best = vec![0; f1.weight_len()];
    f1.piece_weights(&z, &mut w, &mut best);
    (w, best)
}

#[test]
fn gpu_assignment_weights_equal_the_cpu() {
    let Some(ctx) = gpu("gpu_assignment_weights_equal_the_cpu") else { return };
    for (p, trials, seed) in cases() {
        for (kind, beta, join_weights) in [
            (MapKind::Rrr, 0.5, None),
            (MapKind::Dm, 0.7, None),
            (MapKind::Rrr, 0.7, Some([1.0, 0.5, 2.5])),
            (MapKind::Dm, 0.7, Some([2.0, 1.0, 3.0])),
        ] {
            let c = MapConfig { join_weights, ..cfg(kind, EdgeProjection::Average, trials, beta) };
            let g = F1Gpu::new(ctx.clone(), &p, c).unwrap();
            let f1 = g.f1();
            let slot_w = join_weights.map(|w| concur::f1::project::join_slot_weights(&p, w));
            let (d, wl) = (f1.dim(), f1.weight_len());
            let x = random_state(trials * d, seed + 10);
            g.write_state(0, &x);
            g.run_kernel(Kernel::Edges, 1).unwrap();
            g.run_kernel(Kernel::Weights, 1).unwrap();
            let (w, best) = g.read_weights().unwrap();
            let plain = (kind == MapKind::Dm).then(|| g.read_weights_plain().unwrap());
            let (a, b) = if kind == MapKind::Rrr { (2.0, -1.0) } else { (1.0 + 1.0 / beta, -1.0 / beta) };
            for t in 0..trials {
                let (cw, cb) = cpu_weights(f1, &x[t * d..(t + 1) * d], a, b, slot_w.as_deref());
                for e in 0..wl {
                    let (gw, gb) = (w[t * wl + e], best[t * wl + e]);
                    assert!(close(gw, cw[e]), "{kind:?} trial {t} entry {e}: gpu {gw} cpu {}", cw[e]);
                    if cw[e].is_finite() {
                        // The argmax may differ only on a near-tie, and then it must reach the max.
                        assert!(gb == cb[e] || close(gw, cw[e]), "{kind:?} trial {t} entry {e}");
                    }
                }
                if let Some((w2, _)) = &plain {
                    // P_P(y) of the difference map: the weights of y itself.
                    let (cw, _) = cpu_weights(f1, &x[t * d..(t + 1) * d], 0.0, 1.0, slot_w.as_deref());
                    for e in 0..wl {
                        assert!(close(w2[t * wl + e], cw[e]), "plain weights trial {t} entry {e}");
                    }
                }
            }
        }
    }
}

/// Runs the CPU assignment on the device's weights and returns the chosen entries and the
/// boards they give (candidate per cell).
fn assign_all(f1: &F1, w: &[f32], best: &[u32], trials: usize) -> (Vec<u32>, Vec<u32>) {
    let (n, wl) = (f1.cells(), f1.weight_len());
    let mut sel = vec![0; trials * n];
    for t in 0..trials {
        let mut asg = f1.assigners();
        f1.assign_entries(&w[t * wl..(t + 1) * wl], &mut asg, &mut sel[t * n..(t + 1) * n], false).unwrap();
    }
    let boards = sel.iter().enumerate().map(|(i, &e)| best[(i / n) * wl + e as usize]).collect();
    (sel, boards)
}

#[test]
fn gpu_update_and_mix_equal_the_cpu() {
    let Some(ctx) = gpu("gpu_update_and_mix_equal_the_cpu") else { return };
    for (p, trials, seed) in cases() {
        for (kind, beta) in [(MapKind::Rrr, 0.5), (MapKind::Dm, 0.7)] {
            let g = F1Gpu::new(ctx.clone(), &p, cfg(kind, EdgeProjection::Average, trials, beta)).unwrap();
            let f1 = g.f1();
            let d = f1.dim();
            let x = random_state(trials * d, seed + 20);
            g.write_state(0, &x);
            g.run_kernel(Kernel::Edges, 1).unwrap();
            g.run_kernel(Kernel::Weights, 1).unwrap();
            let pe = g.read_edges().unwrap();
            let (w, best) = g.read_weights().unwrap();
            let (sel, boards) = assign_all(f1, &w, &best, trials);
            g.write_sel(&sel, false);
            let boards2 = if kind == MapKind::Dm {
                let (w2, best2) = g.read_weights_plain().unwrap();
                let (sel2, boards2) = assign_all(f1, &w2, &best2, trials);
                g.write_sel(&sel2, true);
                boards2
            } else {
                boards.clone()
            };
            let dm = kind == MapKind::Dm;
            if dm {
                g.run_kernel(Kernel::Mix, 1).unwrap();
            } else {
                assert!(g.run_kernel(Kernel::Mix, 1).is_err(), "RRR has no mix kernel");
            }
            let mixed = dm.then(|| g.read_mix().unwrap());
            g.run_kernel(Kernel::Update, 1).unwrap();
            let (x2, b2) = (g.read_state().unwrap(), g.read_boards().unwrap());
            assert_eq!(b2, boards, "the update kernel writes the assigned boards");
            let inv = 1.0 / beta;
            let (mut emb, mut emb2) = (vec![0.0; d], vec![0.0; d]);
            for t in 0..trials {
                f1.embed(&boards[t * f1.cells()..(t + 1) * f1.cells()], &mut emb);
                f1.embed(&boards2[t * f1.cells()..(t + 1) * f1.cells()], &mut emb2);
                for i in 0..d {
                    let (xi, pi) = (x[t * d + i], pe[t * d + i]);
                    let want = xi - beta * pi + beta * emb[i];
                    assert!(close(x2[t * d + i], want), "{kind:?} update trial {t} [{i}]: {} vs {want}", x2[t * d + i]);
                    if kind == MapKind::Dm {
                        let want = (1.0 - inv) * emb2[i] + inv * xi;
                        let got = mixed.as_ref().expect("read for DM")[t * d + i];
                        assert!(close(got, want), "mix trial {t} [{i}]: {got} vs {want}");
                    }
                }
            }
        }
    }
}

#[test]
fn gpu_mismatch_counts_are_exact() {
    let Some(ctx) = gpu("gpu_mismatch_counts_are_exact") else { return };
    for (p, trials, seed) in cases() {
        let g = F1Gpu::new(ctx.clone(), &p, cfg(MapKind::Rrr, EdgeProjection::Average, trials, 0.5)).unwrap();
        let f1 = g.f1();
        let n = f1.cells();
        let cands = p.candidates();
        // Random boards, one random candidate per cell (not permutations: the count is of joins).
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut boards = vec![0u32; trials * n];
        let mut base = vec![0u32; n + 1];
        for c in 0..n {
            base[c + 1] = base[c] + cands.of(c).len() as u32;
        }
        for (i, b) in boards.iter_mut().enumerate() {
            let c = i % n;
            *b = rng.random_range(base[c]..base[c + 1]);
        }
        g.write_boards(&boards);
        g.run_kernel(Kernel::Score, 1).unwrap();
        let viol = g.read_violations().unwrap();
        for t in 0..trials {
            let score = f1.score(&boards[t * n..(t + 1) * n]);
            assert_eq!(viol[t] as usize, p.max_score() - score, "trial {t}");
        }
    }
}

#[test]
fn gpu_batches_split_into_chunks_give_the_same_results() {
    let Some(ctx) = gpu("gpu_batches_split_into_chunks_give_the_same_results") else { return };
    let (p, _) = generated(5, 5, 9);
    let trials = 7;
    let whole = F1Gpu::new(ctx.clone(), &p, cfg(MapKind::Rrr, EdgeProjection::Average, trials, 0.5)).unwrap();
    let split =
        F1Gpu::with_chunk_trials(ctx.clone(), &p, cfg(MapKind::Rrr, EdgeProjection::Average, trials, 0.5), 3).unwrap();
    assert_eq!(split.chunk_sizes(), vec![3, 3, 1]);
    let x = random_state(trials * whole.f1().dim(), 5);
    for g in [&whole, &split] {
        g.write_state(0, &x);
        g.run_kernel(Kernel::Edges, 1).unwrap();
        g.run_kernel(Kernel::Weights, 1).unwrap();
    }
    assert_eq!(whole.read_edges().unwrap(), split.read_edges().unwrap());
    assert_eq!(whole.read_weights().unwrap(), split.read_weights().unwrap());
}

#[test]
fn gpu_f1_solves_generated_puzzles_and_every_claim_verifies() {
    use concur::backend::gpu::GpuBackend;
    use concur::backend::{Backend, Certify, MapJob};
    let Some(ctx) = gpu("gpu_f1_solves_generated_puzzles_and_every_claim_verifies") else { return };
    let backend = GpuBackend::new(ctx.clone());
    for (kind, w, seed, join_weights) in
        [(MapKind::Rrr, 5, 21, None), (MapKind::Dm, 4, 22, None), (MapKind::Rrr, 5, 23, Some([1.0, 1.0, 2.0]))]
    {
        let (p, _) = generated(w, w, seed);
        let cfg = MapConfig {
            kind,
            join_weights,
            run: MapRun { trials: 8, max_iters: 20_000, seed: 4, ..Default::default() },
            ..Default::default()
        };
        let r = backend.solve(&p, MapJob::F1(&cfg), Certify::None, &mut |_| {}).unwrap().result;
        let (t, it, board) = r.solution.unwrap_or_else(|| panic!("{kind:?} {w}x{w} did not solve on the GPU"));
        assert!(concur::verify::check(&p, &board).valid);
        assert_eq!(r.trials[t].solved_at, Some(it));
        eprintln!("gpu {kind:?} {w}x{w}: trial {t} solved at {it} in {:.2} s", r.wall_s);
    }
}

#[test]
fn gpu_stall_restarts_fire_and_are_counted_as_on_the_cpu() {
    let Some(ctx) = gpu("gpu_stall_restarts_fire_and_are_counted_as_on_the_cpu") else { return };
    // Unsolvable (colours 4 and 5 occur once each): no new best after the first iterations.
    let p = Puzzle::new(2, 2, vec![[0, 1, 2, 0], [0, 0, 3, 1], [2, 4, 0, 0], [3, 0, 0, 5]], vec![]).unwrap();
    let cfg = MapConfig {
        all_trials: true,
        restart_stall: Some(100),
        run: MapRun { trials: 3, max_iters: 1000, ..Default::default() },
        ..Default::default()
    };
    let g = concur::backend::gpu::f1::solve(&ctx, &p, &cfg, &mut |_| {}).unwrap();
    let c = concur::f1::map::solve(&p, cfg.clone(), |_| {}).unwrap();
    for (gt, ct) in g.trials.iter().zip(&c.trials) {
        assert!(gt.stall_restarts >= 5, "{gt:?}");
        assert_eq!(gt.stall_restarts, ct.stall_restarts, "the same rule on both backends");
        assert_eq!(gt.iterations, 1000);
    }
    let plain =
        concur::backend::gpu::f1::solve(&ctx, &p, &MapConfig { restart_stall: None, ..cfg }, &mut |_| {}).unwrap();
    assert!(plain.trials.iter().all(|t| t.stall_restarts == 0));
}

/// The device loop (`--assign gpu-jv`, `gpu-jv-sg` and `gpu-auction`, K iterations per
/// submission) against
/// the CPU backend on the same seeds: the same trials solve at the same iterations, and every
/// trial ends with the same iteration count, best score and restarts. Short runs on generated
/// 4x4 to 6x6 boards, RRR and the difference map, with stall restarts that fire; over longer
/// runs the device's f32 duals and the host's f64 ones can part on a near-tie of two
/// assignments, after which the trajectories differ (both stay exact solvers).
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn gpu_device_loop_gives_the_cpu_backends_solved_trials_and_iterations() {
    use concur::f1::map::AssignOn;
    let Some(ctx) = gpu("gpu_device_loop_gives_the_cpu_backends_solved_trials_and_iterations") else { return };
    let mut compared = 0;
    for (kind, w, seed, stall, iters) in [
        (MapKind::Rrr, 4, 31, Some(40), 300),
        (MapKind::Rrr, 5, 21, None, 400),
        (MapKind::Dm, 4, 22, Some(50), 300),
        (MapKind::Rrr, 5, 23, Some(60), 300),
        (MapKind::Rrr, 6, 24, None, 200),
    ] {
        let (p, _) = generated(w, w, seed);
        let cfg = MapConfig {
            kind,
            all_trials: true,
            restart_stall: stall,
            run: MapRun { trials: 6, max_iters: iters, seed, ..Default::default() },
            ..Default::default()
        };
        let c = concur::f1::map::solve(&p, cfg.clone(), |_| {}).unwrap();
        for on in [AssignOn::GpuJv, AssignOn::GpuJvSg, AssignOn::GpuAuction] {
            let g = concur::backend::gpu::f1::solve(&ctx, &p, &MapConfig { assign: on, ..cfg.clone() }, &mut |_| {})
                .unwrap();
            if let Some((_, _, board)) = &g.solution {
                assert!(concur::verify::check(&p, board).valid);
            }
            let what = format!("{kind:?} {w}x{w} seed {seed} {on:?}");
            let key = |r: &concur::batch::MapResult| -> Vec<_> {
                r.trials
                    .iter()
                    .map(|t| (t.solved_at, t.iterations, t.best_score, t.restarts, t.stall_restarts))
                    .collect()
            };
            if on == AssignOn::GpuAuction {
                // The auction is exact for quantised weights only: it may pick another
                // assignment on a near-tie. Its claims still verify; report the agreement.
                eprintln!("{what}: auction {:?}\n  cpu {:?}", key(&g), key(&c));
                continue;
            }
            assert_eq!(key(&g), key(&c), "{what}");
            assert_eq!(g.solution.as_ref().map(|s| (s.0, s.1)), c.solution.as_ref().map(|s| (s.0, s.1)), "{what}");
            compared += 1;
        }
    }
    assert_eq!(compared, 10);
}

/// The device loop with any K gives the same run (K only sets how often the host looks), for
/// both device JV kernels, which give the same run as each other.
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn gpu_device_loop_does_not_depend_on_k() {
    use concur::backend::gpu::f1::F1Gpu;
    use concur::f1::map::AssignOn;
    let Some(ctx) = gpu("gpu_device_loop_does_not_depend_on_k") else { return };
    let (p, _) = generated(5, 5, 21);
    let mut all = Vec::new();
    for assign in [AssignOn::GpuJv, AssignOn::GpuJvSg, AssignOn::GpuJvSgStaged] {
        let cfg = MapConfig {
            all_trials: true,
            restart_stall: Some(50),
            assign,
            run: MapRun { trials: 5, max_iters: 300, seed: 3, ..Default::default() },
            ..Default::default()
        };
        let runs: Vec<Vec<_>> = [1usize, 16, 64]
            .iter()
            .map(|&k| {
                let r = F1Gpu::new(ctx.clone(), &p, cfg.clone()).unwrap().run_device(k, &mut |_| {}).unwrap();
                r.trials
                    .iter()
                    .map(|t| (t.solved_at, t.iterations, t.best_score, t.restarts, t.stall_restarts))
                    .collect()
            })
            .collect();
        assert_eq!(runs[0], runs[1], "{assign:?}");
        assert_eq!(runs[0], runs[2], "{assign:?}");
        all.push(runs[0].clone());
    }
    assert_eq!(all[0], all[1], "gpu-jv and gpu-jv-sg");
    assert_eq!(all[0], all[2], "gpu-jv and gpu-jv-sg-staged");
}

/// The fused pass (`--fused-passes`: update, score, track, edges and weights in one pass per
/// trial) against the separate passes in the device loop: the same run, trial for trial, on
/// generated and Owen set 1 boards, for the uniform and the weighted metric, both edge
/// projections, stall restarts that fire, and both device JV kernels; and against the CPU
/// backend on the same seeds (its CPU twin).
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn gpu_fused_pass_gives_the_separate_passes_run() {
    use concur::backend::gpu::f1::F1Gpu;
    use concur::f1::map::AssignOn;
    use concur::f1::project::EdgeProjection;
    let Some(ctx) = gpu("gpu_fused_pass_gives_the_separate_passes_run") else { return };
    let key = |r: &concur::batch::MapResult| -> Vec<_> {
        r.trials.iter().map(|t| (t.solved_at, t.iterations, t.best_score, t.restarts, t.stall_restarts)).collect()
    };
    let mut cases: Vec<(Puzzle, &str)> = vec![(generated(5, 5, 21).0, "gen 5x5"), (generated(6, 6, 24).0, "gen 6x6")];
    if let Some(dir) = crate::common::puzzles("gpu_fused_pass_gives_the_separate_passes_run") {
        let bytes = std::fs::read(dir.join("brendan_owen/pieces_set_1/pieces_07x07.txt")).unwrap();
        let p = concur::puzzle::format::read_puzzle(&bytes).unwrap();
        cases.push((p, "set 1 7x7"));
    }
    let mut fused_runs = 0;
    for (p, name) in &cases {
        for (edge, join_weights, stall, assign) in [
            (EdgeProjection::Average, None, Some(60), AssignOn::GpuJv),
            (EdgeProjection::Average, Some([1.0, 1.0, 1.0]), None, AssignOn::GpuJvSg),
            (EdgeProjection::OneColor, None, Some(40), AssignOn::GpuJvSg),
        ] {
            let cfg = MapConfig {
                all_trials: true,
                restart_stall: stall,
                edge,
                join_weights,
                assign,
                run: MapRun { trials: 6, max_iters: 250, seed: 9, ..Default::default() },
                ..Default::default()
            };
            let what = format!("{name} {edge:?} {join_weights:?} {assign:?}");
            let sep = F1Gpu::new(ctx.clone(), p, cfg.clone()).unwrap().run(&mut |_| {}).unwrap();
            let mut g = F1Gpu::new(ctx.clone(), p, MapConfig { fused_passes: true, ..cfg.clone() }).unwrap();
            if std::env::var("REQUIRE_GPU").as_deref() == Ok("1") {
                assert!(g.fused(), "{what}: the fused pass should fit the software adapter");
            }
            fused_runs += usize::from(g.fused());
            let fused = g.run(&mut |_| {}).unwrap();
            assert_eq!(key(&fused), key(&sep), "{what}: fused against separate passes");
            if let Some((_, _, b)) = &fused.solution {
                assert!(concur::verify::check(p, b).valid, "{what}");
            }
            if edge == EdgeProjection::Average && stall.is_some() {
                let c = concur::f1::map::solve(p, MapConfig { assign: AssignOn::Cpu, ..cfg.clone() }, |_| {}).unwrap();
                assert_eq!(key(&fused), key(&c), "{what}: fused against the CPU backend");
            }
        }
    }
    eprintln!("fused pass ran in {fused_runs} of {} runs", cases.len() * 3);
    // The difference map and a large board keep the separate passes.
    let (p, _) = generated(5, 5, 2);
    let dm = MapConfig { kind: MapKind::Dm, fused_passes: true, assign: AssignOn::GpuJv, ..Default::default() };
    assert!(!F1Gpu::new(ctx.clone(), &p, dm).unwrap().fused());
}

/// A batch split over two devices (two opened on one adapter, as `--adapter all` opens one on
/// each GPU): the same trials solve at the same iterations, with the same restarts, as the
/// whole batch on one device, for the device loop and the host loop; the result names each
/// device's share and rate; and a run that stops at the first solution stops both shares.
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn gpu_batch_split_over_two_devices_gives_the_one_device_run() {
    use concur::backend::gpu::GpuBackend;
    use concur::backend::{Backend, Certify, MapJob};
    use concur::f1::map::AssignOn;
    let Some(ctx) = gpu("gpu_batch_split_over_two_devices_gives_the_one_device_run") else { return };
    let second = Arc::new(GpuContext::new(Some(&ctx.adapter.name)).unwrap());
    let one = GpuBackend::new(ctx.clone());
    let two = GpuBackend::on_all(vec![ctx.clone(), second]).unwrap();
    assert!(two.name().contains("2 devices"), "{}", two.name());
    let key = |r: &concur::batch::MapResult| -> Vec<_> {
        r.trials.iter().map(|t| (t.solved_at, t.iterations, t.best_score, t.restarts, t.stall_restarts)).collect()
    };
    let (p, _) = generated(5, 5, 21);
    for assign in [AssignOn::GpuJv, AssignOn::Cpu] {
        let cfg = MapConfig {
            all_trials: true,
            restart_stall: Some(60),
            assign,
            run: MapRun { trials: 7, max_iters: 300, seed: 5, ..Default::default() },
            ..Default::default()
        };
        let a = one.solve(&p, MapJob::F1(&cfg), Certify::None, &mut |_| {}).unwrap().result;
        let b = two.solve(&p, MapJob::F1(&cfg), Certify::None, &mut |_| {}).unwrap().result;
        assert_eq!(key(&a), key(&b), "{assign:?}");
        assert_eq!(a.solution.as_ref().map(|s| (s.0, s.1)), b.solution.as_ref().map(|s| (s.0, s.1)), "{assign:?}");
        assert_eq!(a.best_score, b.best_score);
        assert_eq!(a.trial_iterations, b.trial_iterations);
        assert!(a.devices.is_empty());
        assert_eq!(b.devices.iter().map(|d| (d.first, d.trials)).collect::<Vec<_>>(), vec![(0, 4), (4, 3)]);
        assert_eq!(b.devices.iter().map(|d| d.trial_iterations).sum::<u64>(), b.trial_iterations);
        if let Some((_, _, board)) = &b.solution {
            assert!(concur::verify::check(&p, board).valid);
        }
    }
    // Stop at the first solution: both shares end soon after one solves.
    let cfg = MapConfig {
        run: MapRun { trials: 8, max_iters: 1_000_000, seed: 3, ..Default::default() },
        ..Default::default()
    };
    let r = two
        .solve(&p, MapJob::F1(&MapConfig { assign: AssignOn::GpuJv, ..cfg }), Certify::None, &mut |_| {})
        .unwrap()
        .result;
    let (t, it, board) = r.solution.expect("a 5x5 solves");
    assert!(concur::verify::check(&p, &board).valid);
    assert!(r.trials.iter().all(|x| x.iterations < 1_000_000), "both shares stopped");
    eprintln!("two devices: trial {t} solved at {it}; shares {:?}", r.devices);
}

/// Device timestamps inside the device loop: every pass of whole iterations is timed where the
/// adapter offers timestamp queries, the kernels sum to no more than the span, and the span is
/// positive; where it offers none, the profile says so rather than fail silently.
#[test]
fn gpu_device_loop_profile_times_every_kernel_inside_the_iteration() {
    use concur::backend::gpu::f1::F1Gpu;
    use concur::f1::map::AssignOn;
    let Some(ctx) = gpu("gpu_device_loop_profile_times_every_kernel_inside_the_iteration") else { return };
    let (p, _) = generated(6, 6, 5);
    for (assign, kind) in
        [(AssignOn::GpuJvSg, MapKind::Rrr), (AssignOn::GpuJv, MapKind::Dm), (AssignOn::GpuAuction, MapKind::Rrr)]
    {
        let cfg =
            MapConfig { kind, assign, run: MapRun { trials: 16, seed: 2, ..Default::default() }, ..Default::default() };
        let g = F1Gpu::new(ctx.clone(), &p, cfg).unwrap();
        match g.profile_device(4, 1) {
            Ok(t) => {
                let names: Vec<&str> = t.kernels.iter().map(|k| k.0).collect();
                for want in ["edges", "weights", "update", "score", "track"] {
                    assert!(names.contains(&want), "{assign:?}: {names:?}");
                }
                let per_iter = |name: &str| t.kernels.iter().find(|k| k.0 == name).map(|k| k.2).unwrap_or(0);
                assert_eq!(per_iter("track"), 4, "one track pass an iteration");
                assert_eq!(per_iter("weights"), if kind == MapKind::Dm { 8 } else { 4 });
                assert!(t.span_ns > 0.0 && t.busy_ns() <= t.span_ns * 1.0001, "{t:?}");
                assert_eq!(t.untimed, 0);
                eprintln!("{assign:?} {kind:?}: {t:?}");
            }
            Err(e) => {
                assert!(!ctx.timestamps, "timestamps offered but the profile failed: {e}");
                assert!(e.to_string().contains("timestamp"), "{e}");
            }
        }
    }
    let host = F1Gpu::new(
        ctx.clone(),
        &p,
        MapConfig { assign: AssignOn::Cpu, run: MapRun { trials: 4, ..Default::default() }, ..Default::default() },
    )
    .unwrap();
    assert!(host.profile_device(2, 0).is_err(), "the host loop is not the device loop");
}

mod dc_kernels {
    use super::{close, generated, gpu, random_state};
    use concur::backend::gpu::dc::{DcGpu, Kernel};
    use concur::batch::MapKind;
    use concur::batch::MapRun;
    use concur::dc::{DcConfig, DivideScratch, Layout, Weights, project};
    use concur::puzzle::Puzzle;

    /// Generated puzzles, and a 2x2 whose eight inner colours are all different, so that no
    /// join has a compatible pair (the projections' fallback: each side's own argmax).
    fn cases() -> Vec<(Puzzle, usize, u64)> {
        let no_match = Puzzle::new(2, 2, vec![[0, 1, 2, 0], [0, 0, 3, 4], [5, 6, 0, 0], [7, 0, 0, 8]], vec![]).unwrap();
        vec![(generated(3, 3, 5).0, 1, 1), (generated(5, 5, 6).0, 3, 2), (generated(6, 4, 7).0, 2, 3), (no_match, 3, 4)]
    }

    fn config(kind: MapKind, weights: Weights, trials: usize) -> DcConfig {
        DcConfig {
            kind,
            weights,
            beta: 0.7,
            gamma: 0.1,
            run: MapRun { trials, ..Default::default() },
            ..crate::common::dc_plain()
        }
    }

    /// A random batch state: slot values, their divide projection, random positive weights.
    fn state(l: &Layout, trials: usize, seed: u64, adaptive: bool) -> (Vec<f32>, Vec<u32>, Vec<f32>) {
        let x = random_state(trials * l.slots(), seed);
        let mut chosen = vec![0u32; trials * l.choices()];
        let mut div = DivideScratch::new(l);
        for t in 0..trials {
            let xs = &x[t * l.slots()..(t + 1) * l.slots()];
            project::divide(l, xs, &mut chosen[t * l.choices()..(t + 1) * l.choices()], &mut div, &mut [], false)
                .unwrap();
        }
        let lambda = if adaptive {
            random_state(trials * l.constraints(), seed + 1).iter().map(|v| 0.2 + v.abs()).collect()
        } else {
            vec![1.0; trials * l.constraints()]
        };
        (x, chosen, lambda)
    }

    /// The divide projection of one trial's slot values on the CPU, with its objective per
    /// constraint (the chosen value, or the pair's sum), for comparing up to near-ties.
    fn objective(l: &Layout, z: &[f32], chosen: &[u32], k: usize) -> f32 {
        chosen[l.choice_range(k)].iter().map(|&s| z[s as usize]).sum()
    }

    #[test]
    fn gpu_concur_equals_the_cpu() {
        let Some(ctx) = gpu("gpu_concur_equals_the_cpu") else { return };
        for (p, trials, seed) in cases() {
            for kind in [MapKind::Rrr, MapKind::Dm] {
                for weights in [Weights::Uniform, Weights::Adaptive] {
                    let cfg = config(kind, weights, trials);
                    let g = DcGpu::new(ctx.clone(), &p, cfg.clone()).unwrap();
                    let l = g.layout();
                    let (x, chosen, lambda) = state(l, trials, seed, weights == Weights::Adaptive);
                    g.write_state(0, &x, &chosen, &lambda);
                    g.run_kernel(Kernel::Concur, 1).unwrap();
                    let (m, ca) = g.read_concur().unwrap();
                    let (s, v, nc, nk) = (l.slots(), l.vars(), l.choices(), l.constraints());
                    let inv = 1.0 / cfg.beta;
                    for t in 0..trials {
                        let xs = &x[t * s..(t + 1) * s];
                        let mut pb = vec![0.0; s];
                        project::expand(&chosen[t * nc..(t + 1) * nc], &mut pb);
                        let z: Vec<f32> = match kind {
                            MapKind::Rrr => pb.iter().zip(xs).map(|(&b, &x)| 2.0 * b - x).collect(),
                            MapKind::Dm => pb.iter().zip(xs).map(|(&b, &x)| (1.0 + inv) * b - inv * x).collect(),
                        };
                        let lam = (weights == Weights::Adaptive).then(|| &lambda[t * nk..(t + 1) * nk]);
                        let mut want = vec![0.0; v];
                        project::concur(l, &z, lam, &mut want);
                        for j in 0..v {
                            assert!(
                                close(m[t * v + j], want[j]),
                                "{kind:?} {weights:?} m[{j}]: {} vs {}",
                                m[t * v + j],
                                want[j]
                            );
                        }
                        if let Some(ca) = &ca {
                            project::concur(l, xs, lam, &mut want);
                            for j in 0..v {
                                assert!(close(ca[t * v + j], want[j]), "ca[{j}]");
                            }
                        }
                    }
                }
            }
        }
    }

    /// The device keeps the state trial-minor and converts on the way in and out: a round
    /// trip, a partial write of a block of trials, and chunked batches must all give back
    /// exactly what was written, and the same iterations must give the same states.
    #[test]
    fn gpu_state_layout_round_trips_and_chunks_agree() {
        let Some(ctx) = gpu("gpu_state_layout_round_trips_and_chunks_agree") else { return };
        let (p, _) = generated(5, 4, 8);
        let trials = 7;
        let cfg = config(MapKind::Dm, Weights::Adaptive, trials);
        let whole = DcGpu::new(ctx.clone(), &p, cfg.clone()).unwrap();
        let split = DcGpu::with_chunk_trials(ctx.clone(), &p, cfg, 3).unwrap();
        assert_eq!(split.chunk_sizes(), vec![3, 3, 1]);
        let l = whole.layout();
        let (x, chosen, lambda) = state(l, trials, 40, true);
        for g in [&whole, &split] {
            g.write_state(0, &x, &chosen, &lambda);
            assert_eq!(g.read_state().unwrap(), (x.clone(), chosen.clone(), lambda.clone()));
            // Trials 2..5 alone (across a chunk boundary when split).
            let (s, nc, nk) = (l.slots(), l.choices(), l.constraints());
            let x2: Vec<f32> = x[2 * s..5 * s].iter().map(|v| v + 1.0).collect();
            g.write_state(2, &x2, &chosen[2 * nc..5 * nc], &lambda[2 * nk..5 * nk]);
            let (gx, _, _) = g.read_state().unwrap();
            assert_eq!(&gx[..2 * s], &x[..2 * s]);
            assert_eq!(&gx[2 * s..5 * s], &x2[..]);
            assert_eq!(&gx[5 * s..], &x[5 * s..]);
            g.write_state(0, &x, &chosen, &lambda);
            g.run_iterations(3).unwrap();
        }
        assert_eq!(whole.read_state().unwrap(), split.read_state().unwrap());
        assert_eq!(whole.read_concur().unwrap(), split.read_concur().unwrap());
        assert_eq!(whole.read_readout().unwrap(), split.read_readout().unwrap());
    }

    #[test]
    fn gpu_update_and_divide_equal_the_cpu() {
        let Some(ctx) = gpu("gpu_update_and_divide_equal_the_cpu") else { return };
        for (p, trials, seed) in cases() {
            for kind in [MapKind::Rrr, MapKind::Dm] {
                for weights in [Weights::Uniform, Weights::Adaptive] {
                    let cfg = config(kind, weights, trials);
                    let g = DcGpu::new(ctx.clone(), &p, cfg.clone()).unwrap();
                    let l = g.layout();
                    let (s, v, nc, nk) = (l.slots(), l.vars(), l.choices(), l.constraints());
                    let (x, chosen, lambda) = state(l, trials, seed + 3, false);
                    let m = random_state(trials * v, seed + 4);
                    let ca = random_state(trials * v, seed + 5);
                    g.write_state(0, &x, &chosen, &lambda);
                    g.write_concur(&m, Some(&ca));
                    g.run_kernel(Kernel::Divide, 1).unwrap();
                    let (gx, gch, _) = g.read_state().unwrap();
                    let gerr = (weights == Weights::Adaptive).then(|| g.read_errors().unwrap());
                    let (beta, inv) = (cfg.beta, 1.0 / cfg.beta);
                    let mut div = DivideScratch::new(l);
                    for t in 0..trials {
                        let xs = &x[t * s..(t + 1) * s];
                        let ms = &m[t * v..(t + 1) * v];
                        // P_b on this step: the old chosen slots (RRR), or P_b(f_a(y)) (DM).
                        let pick: Vec<u32> = match kind {
                            MapKind::Rrr => chosen[t * nc..(t + 1) * nc].to_vec(),
                            MapKind::Dm => {
                                let fa: Vec<f32> = (0..s)
                                    .map(|i| (1.0 - inv) * ca[t * v + l.slot_var()[i] as usize] + inv * xs[i])
                                    .collect();
                                let mut out = vec![0; nc];
                                project::divide(l, &fa, &mut out, &mut div, &mut [], false).unwrap();
                                out
                            }
                        };
                        let mut pb = vec![0.0; s];
                        project::expand(&pick, &mut pb);
                        let want: Vec<f32> =
                            (0..s).map(|i| xs[i] + beta * ms[l.slot_var()[i] as usize] - beta * pb[i]).collect();
                        for i in 0..s {
                            assert!(close(gx[t * s + i], want[i]), "{kind:?} x[{i}]: {} vs {}", gx[t * s + i], want[i]);
                        }
                        // P_b of the new x: the same choice, or one of equal objective (a near-tie).
                        let mut cpu = vec![0; nc];
                        project::divide(l, &want, &mut cpu, &mut div, &mut [], false).unwrap();
                        let gc = &gch[t * nc..(t + 1) * nc];
                        for k in 0..nk {
                            let (a, b) = (objective(l, &want, gc, k), objective(l, &want, &cpu, k));
                            assert!(
                                gc[l.choice_range(k)] == cpu[l.choice_range(k)] || close(a, b),
                                "{kind:?} constraint {k}: {a} vs {b}"
                            );
                        }
                        if let Some(e) = &gerr {
                            for k in 0..nk {
                                let q = l.choice_range(k);
                                if q.is_empty() {
                                    continue;
                                }
                                let r = l.con_range(k);
                                let e2: f32 = r.map(|i| (ms[l.slot_var()[i] as usize] - pb[i]).powi(2)).sum();
                                let want = (e2.max(0.0) / q.len() as f32).sqrt();
                                assert!((e[t * nk + k] - want).abs() <= 1e-4 * (1.0 + want), "err[{k}]");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn gpu_adaptive_weights_equal_the_cpu_rule() {
        let Some(ctx) = gpu("gpu_adaptive_weights_equal_the_cpu_rule") else { return };
        let (p, _) = generated(5, 5, 8);
        let trials = 3;
        let g = DcGpu::new(ctx.clone(), &p, config(MapKind::Rrr, Weights::Adaptive, trials)).unwrap();
        let l = g.layout();
        let nk = l.constraints();
        let (x, chosen, lambda) = state(l, trials, 9, true);
        let err: Vec<f32> = random_state(trials * nk, 10).iter().map(|v| v.abs()).collect();
        g.write_state(0, &x, &chosen, &lambda);
        g.write_errors(&err);
        g.run_kernel(Kernel::Adapt, 1).unwrap();
        let (_, _, got) = g.read_state().unwrap();
        for t in 0..trials {
            let e = &err[t * nk..(t + 1) * nk];
            let mean = e.iter().sum::<f32>() / nk as f32;
            for k in 0..nk {
                let l0 = lambda[t * nk + k];
                let want = (l0 + 0.1 * (e[k] / mean - l0)).max(1e-3);
                assert!(close(got[t * nk + k], want), "lambda[{k}]: {} vs {want}", got[t * nk + k]);
            }
        }
    }

    #[test]
    fn gpu_readout_and_violation_counts_are_exact() {
        let Some(ctx) = gpu("gpu_readout_and_violation_counts_are_exact") else { return };
        for (p, trials, seed) in cases() {
            let g = DcGpu::new(ctx.clone(), &p, config(MapKind::Rrr, Weights::Uniform, trials)).unwrap();
            let l = g.layout();
            let (v, n) = (l.vars(), l.cells());
            let m = random_state(trials * v, seed);
            g.write_concur(&m, None);
            g.run_kernel(Kernel::Readout, 1).unwrap();
            let (boards, status) = g.read_readout().unwrap();
            let mut want = vec![0u32; n];
            let mut seen = vec![false; n];
            for t in 0..trials {
                l.argmax_board(&m[t * v..(t + 1) * v], &mut want);
                assert_eq!(&boards[t * n..(t + 1) * n], &want[..], "trial {t} board");
                let mut uses = vec![0u32; n];
                for &j in &want {
                    uses[l.cand_piece()[j as usize] as usize] += 1;
                }
                let extra: u32 = uses.iter().map(|&u| u.saturating_sub(1)).sum();
                assert_eq!(status[2 * t + 1], extra, "trial {t} extra uses");
                assert_eq!(extra == 0, l.is_permutation(&want, &mut seen));
                assert_eq!(status[2 * t] as usize, p.max_score() - l.score(&want), "trial {t} mismatches");
            }
        }
    }

    #[test]
    fn gpu_completion_turns_near_misses_into_verified_solutions() {
        use concur::backend::gpu::GpuBackend;
        use concur::backend::{Backend, Certify, MapJob};
        use concur::batch::{Completion, Mechanism};
        let Some(ctx) = gpu("gpu_completion_turns_near_misses_into_verified_solutions") else { return };
        let backend = GpuBackend::new(ctx.clone());
        let (p, _) = generated(5, 5, 2);
        let complete = Some(Completion { k: 4, ..Default::default() });
        let cfg = DcConfig {
            all_trials: true,
            complete,
            run: MapRun { trials: 16, max_iters: 150, seed: 0, ..Default::default() },
            ..crate::common::dc_plain()
        };
        let r = backend.solve(&p, MapJob::Dc(&cfg), Certify::None, &mut |_| {}).unwrap().result;
        assert!(r.trials.iter().map(|t| t.completions).sum::<u64>() > 0, "no completion ran");
        let (t, _, board) = r.solution.expect("completion solves this instance on the CPU backend too");
        assert_eq!(r.trials[t].solved_by, Some(Mechanism::MapAc));
        assert!(concur::verify::check(&p, &board).valid);
    }

    #[test]
    fn gpu_dc_solves_generated_puzzles_and_every_claim_verifies() {
        use concur::backend::gpu::GpuBackend;
        use concur::backend::{Backend, Certify, MapJob};
        let Some(ctx) = gpu("gpu_dc_solves_generated_puzzles_and_every_claim_verifies") else { return };
        let backend = GpuBackend::new(ctx.clone());
        for (kind, weights, w) in [
            (MapKind::Rrr, Weights::Uniform, 4),
            (MapKind::Rrr, Weights::Adaptive, 4),
            (MapKind::Dm, Weights::Uniform, 4),
        ] {
            let (p, _) = generated(w, w, 31);
            let cfg = DcConfig {
                kind,
                weights,
                run: MapRun { trials: 8, max_iters: 5_000, seed: 2, ..Default::default() },
                ..crate::common::dc_plain()
            };
            let r = backend.solve(&p, MapJob::Dc(&cfg), Certify::None, &mut |_| {}).unwrap().result;
            let (t, it, board) =
                r.solution.unwrap_or_else(|| panic!("dc {kind:?} {weights:?} {w}x{w} did not solve on the GPU"));
            assert!(concur::verify::check(&p, &board).valid);
            eprintln!("gpu dc {kind:?} {weights:?} {w}x{w}: trial {t} solved at {it} in {:.2} s", r.wall_s);
        }
    }
}

/// Batches past 65,535 workgroups in one dimension: the grid folds into two dimensions and
/// the last trials (beyond the fold) still get the right results.
#[test]
fn gpu_dispatches_fold_past_65535_workgroups() {
    use concur::backend::gpu::dc::{DcGpu, Kernel as DcKernel};
    use concur::dc::{DcConfig, DivideScratch, project};
    let Some(ctx) = gpu("gpu_dispatches_fold_past_65535_workgroups") else { return };
    let (p, _) = generated(3, 3, 12);
    // F1 edges: one thread per float, 256 per workgroup.
    let probe = F1::new(&p).unwrap();
    let trials = (65_535 * 256) / probe.dim() + 64;
    let g = F1Gpu::new(ctx.clone(), &p, cfg(MapKind::Rrr, EdgeProjection::Average, trials, 0.5)).unwrap();
    let d = probe.dim();
    assert!((trials * d).div_ceil(256) > 65_535);
    let x = random_state(trials * d, 77);
    g.write_state(0, &x);
    g.run_kernel(Kernel::Edges, 1).unwrap();
    let pe = g.read_edges().unwrap();
    let mut want = vec![0.0; d];
    for t in [0, trials / 2, trials - 2, trials - 1] {
        probe.project_edges(&x[t * d..(t + 1) * d], &mut want);
        assert_eq!(&pe[t * d..(t + 1) * d], &want[..], "f1 trial {t}");
    }
    drop(g);
    // DC divide: one workgroup per (trial, constraint).
    let cfg = DcConfig { run: MapRun { trials: 1, ..Default::default() }, ..crate::common::dc_plain() };
    let l = concur::dc::Layout::new(&p, concur::dc::DcLayout::Plain);
    let trials = 65_535 / l.constraints() + 8;
    let g = DcGpu::new(ctx.clone(), &p, DcConfig { run: MapRun { trials, ..cfg.run.clone() }, ..cfg }).unwrap();
    let (s, v, nc) = (l.slots(), l.vars(), l.choices());
    let x = random_state(trials * s, 78);
    let m = random_state(trials * v, 79);
    let mut chosen = vec![0u32; trials * nc];
    let mut div = DivideScratch::new(&l);
    for (c, xs) in chosen.chunks_mut(nc).zip(x.chunks(s)) {
        project::divide(&l, xs, c, &mut div, &mut [], false).unwrap();
    }
    g.write_state(0, &x, &chosen, &vec![1.0; trials * l.constraints()]);
    g.write_concur(&m, None);
    g.run_kernel(DcKernel::Divide, 1).unwrap();
    let (gx, _, _) = g.read_state().unwrap();
    let beta = 0.7;
    for t in [0, trials - 1] {
        let mut pb = vec![0.0; s];
        project::expand(&chosen[t * nc..(t + 1) * nc], &mut pb);
        for i in 0..s {
            let want = x[t * s + i] + beta * m[t * v + l.slot_var()[i] as usize] - beta * pb[i];
            assert!(close(gx[t * s + i], want), "dc trial {t} slot {i}");
        }
    }
}

/// The bench's bandwidth yardstick, the `copy` kernel of shaders/layout.wgsl, copies exactly
/// `count` words over a grid folded past 65,535 workgroups, and nothing beyond them.
#[test]
fn gpu_copy_kernel_copies_exactly_count_words() {
    use concur::backend::gpu::LAYOUT_WGSL;
    use concur::backend::gpu::context::{dispatch, grid};
    let Some(ctx) = gpu("gpu_copy_kernel_copies_exactly_count_words") else { return };
    let count = 65_535 * 256 + 1000;
    let src: Vec<u32> = (0..count as u32 + 64).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let a = ctx.storage("copy src", &src);
    let b = ctx.zeroed("copy dst", 4 * src.len() as u64);
    let pipe = ctx.pipeline(&ctx.module("layout", LAYOUT_WGSL), "copy");
    let params = ctx.uniform("copy params", &[0u32, 0, 0, count as u32]);
    let bind = ctx.bind(&pipe, &[(0, &params), (1, &a), (2, &b)]);
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    let xy = grid(count as u64);
    assert!(xy.1 > 1, "the grid folds");
    dispatch(&mut enc, &pipe, &bind, xy);
    ctx.queue.submit([enc.finish()]);
    let st = ctx.staging("copy read", 4 * src.len() as u64);
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(&b, 0, &st, 0, 4 * src.len() as u64);
    ctx.queue.submit([enc.finish()]);
    let mut out = vec![0u8; 4 * src.len()];
    ctx.read_back(&mut [(&st, &mut out[..])]).unwrap();
    let out: Vec<u32> = bytemuck::cast_slice(&out).to_vec();
    assert_eq!(&out[..count], &src[..count]);
    assert!(out[count..].iter().all(|&w| w == 0));
}

/// `concur bench` on the GPU: both copy yardsticks, every F2 kernel row, and the chunk cap
/// carried on the F2 rows (a 5-trial batch in chunks of 2 runs as three chunks).
#[test]
fn gpu_bench_rows_carry_the_copies_and_the_chunk_cap() {
    use concur_lab::bench::{BenchOptions, run};
    let Some(_ctx) = gpu("gpu_bench_rows_carry_the_copies_and_the_chunk_cap") else { return };
    let opts = BenchOptions {
        sizes: vec![(3, 3)],
        batches: vec![5],
        formulations: vec!["dc".into()],
        cpu: false,
        gpu: true,
        budget: std::time::Duration::from_millis(5),
        max_bytes: 1 << 30,
        seed: 3,
        adapter: None,
        dc_chunk_trials: Some(2),
        cancel: concur::cancel::Cancel::new(),
    };
    let rows = run(&opts, |_| {}).unwrap();
    for kernel in ["copy", "copy-transfer"] {
        let r = rows.iter().find(|r| r.kernel == kernel).unwrap_or_else(|| panic!("no {kernel} row"));
        assert!(r.gb_per_s > 0.0 && r.chunk_trials.is_none());
    }
    for kernel in ["concur", "divide", "readout", "step", "iteration"] {
        let r = rows.iter().find(|r| r.formulation == "dc" && r.kernel == kernel).unwrap_or_else(|| panic!("{kernel}"));
        assert!(r.trial_iters_per_s > 0.0, "{kernel}");
        assert_eq!(r.chunk_trials, Some(2), "{kernel}");
    }
}

/// The memory check before a GPU run against the buffers the drivers make: the estimate of
/// the device and staging buffers bounds their sizes, within 2.5x, for one trial (tables
/// dominate) and for a batch split into chunks, for both maps and both formulations.
#[test]
fn memory_estimates_bound_the_device_buffers() {
    use concur::backend::gpu::dc::DcGpu;
    use concur::dc::{DcConfig, DcLayout, Weights};
    let Some(ctx) = gpu("memory_estimates_bound_the_device_buffers") else { return };
    let (p, _) = generated(6, 6, 4);
    let check = |what: String, e: concur::limits::GpuEstimate, trials: usize, real: u64| {
        let est = e.device.bytes(trials as u64) + e.staging.bytes(trials as u64);
        eprintln!("{what}: {trials} trials: device buffers {real} bytes, estimated {est}");
        assert!(est >= real, "{what}, {trials} trials: estimate {est} below the {real} bytes made");
        assert!(est as f64 <= 2.5 * real as f64, "{what}, {trials} trials: estimate {est} over 2.5x the {real} made");
    };
    for kind in [MapKind::Rrr, MapKind::Dm] {
        for trials in [1, 300] {
            let cfg = MapConfig { kind, run: MapRun { trials, ..Default::default() }, ..Default::default() };
            let g = F1Gpu::with_chunk_trials(ctx.clone(), &p, cfg.clone(), 128).unwrap();
            check(format!("f1 {kind:?}"), concur::backend::gpu::f1::estimate(&p, &cfg), trials, g.device_bytes());
        }
    }
    for (kind, weights) in [(MapKind::Rrr, Weights::Uniform), (MapKind::Dm, Weights::Adaptive)] {
        for trials in [1, 300] {
            let cfg = DcConfig {
                kind,
                weights,
                layout: DcLayout::Plain,
                run: MapRun { trials, ..Default::default() },
                ..crate::common::dc_plain()
            };
            let g = DcGpu::with_chunk_trials(ctx.clone(), &p, cfg.clone(), 128).unwrap();
            check(
                format!("dc {kind:?} {weights:?}"),
                concur::backend::gpu::dc::estimate(&p, &cfg),
                trials,
                g.device_bytes(),
            );
        }
    }
}
