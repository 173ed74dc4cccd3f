//! The device auction (`shaders/assign.wgsl`) against the host Jonker-Volgenant solver on the
//! same quantised weights (exactly), and against the float optimum (within n quanta).
use crate::gpu::gpu;
use concur::assign::Assigner;
use concur::backend::gpu::assign::{AssignGpu, Solved, Status, qmax, quantum};
use concur::backend::gpu::jv::{JvGpu, JvKind, JvSolved};
use concur::batch::MapRun;
use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Clone, Copy, Debug)]
enum Kind {
    Random,
    /// A random permutation carries a clear bonus: the optimum is unique.
    Planted,
    /// Weights from {0, 1, 2}: many optimal assignments.
    Ties,
    /// Integers one quantum apart near the middle, with 0 and qmax present so that q = w:
    /// optimal and nearly optimal assignments differ by single quanta, which only an exact
    /// solver (epsilon down to 1) tells apart.
    Close,
    /// About a third of the entries forbidden (-inf), a random permutation kept allowed.
    Forbidden,
}

fn permutation(n: usize, rng: &mut impl Rng) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.random_range(0..=i));
    }
    p
}

fn weights(n: usize, kind: Kind, rng: &mut impl Rng) -> Vec<f32> {
    let mut w: Vec<f32> = (0..n * n).map(|_| rng.random::<f32>() * 4.0 - 1.0).collect();
    match kind {
        Kind::Random => {}
        Kind::Planted => {
            for (r, c) in permutation(n, rng).into_iter().enumerate() {
                w[r * n + c] += 10.0;
            }
        }
        Kind::Ties => w.iter_mut().for_each(|v| *v = rng.random_range(0..3) as f32),
        Kind::Close => {
            let mid = qmax(n) / 2;
            w.iter_mut().for_each(|v| *v = (mid + rng.random_range(0..6)) as f32);
            w[0] = 0.0;
            w[n * n - 1] = qmax(n) as f32;
        }
        Kind::Forbidden => {
            let keep = permutation(n, rng);
            for r in 0..n {
                for c in 0..n {
                    if c != keep[r] && rng.random::<f32>() < 0.35 {
                        w[r * n + c] = f32::NEG_INFINITY;
                    }
                }
            }
        }
    }
    w
}

/// The host optimum of `w` and its value (f64 sum).
fn jv(n: usize, w: &[f32]) -> (f64, Vec<u32>) {
    let mut a = Assigner::new(n);
    a.solve(w).expect("feasible");
    (a.total_f64(), a.row_to_col().to_vec())
}

fn total(n: usize, w: &[f32], rows: &[u32]) -> f64 {
    (0..n).map(|r| w[r * n + rows[r] as usize] as f64).sum()
}

/// Checks problem `k` (size n, weights w) of one solve: a permutation on allowed entries,
/// exactly optimal for the device's q, within n quanta of the float optimum.
fn check(what: &str, n: usize, w: &[f32], q: &[i32], rows: &[u32], status: Status) {
    assert_eq!(status, Status::Solved, "{what}");
    let mut seen = vec![false; n];
    for (r, &c) in rows.iter().enumerate() {
        assert!((c as usize) < n && !seen[c as usize], "{what}: not a permutation: {rows:?}");
        seen[c as usize] = true;
        assert!(w[r * n + c as usize].is_finite(), "{what}: forbidden entry ({r}, {c}) used");
    }
    // q as the kernel saw it: the integers, forbidden entries forbidden.
    let qf: Vec<f32> = q.iter().map(|&v| if v < 0 { f32::NEG_INFINITY } else { v as f32 }).collect();
    let finite: Vec<f32> = w.iter().copied().filter(|v| v.is_finite()).collect();
    let (lo, hi) = finite.iter().fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    for (i, (&v, &qi)) in w.iter().zip(q).enumerate() {
        if v.is_finite() {
            assert!(qi >= 0 && qi as u32 <= qmax(n), "{what}: q[{i}] = {qi}");
            // The kernel's rounding agrees with the host's within one quantum.
            let host = if hi > lo { (v as f64 - lo as f64) / quantum(lo, hi, n) } else { 0.0 };
            assert!((host - qi as f64).abs() <= 1.0, "{what}: q[{i}] = {qi}, host {host}");
        } else {
            assert_eq!(qi, -1, "{what}: forbidden entry {i} quantised");
        }
    }
    let (q_opt, _) = jv(n, &qf);
    assert_eq!(total(n, &qf, rows), q_opt, "{what}: not optimal for the quantised weights");
    let (f_opt, _) = jv(n, w);
    let bound = n as f64 * quantum(lo, hi, n);
    let got = total(n, w, rows);
    assert!(got >= f_opt - bound - 1e-4 * (1.0 + f_opt.abs()), "{what}: float {got} vs optimum {f_opt}, bound {bound}");
}

fn solve(dev: &AssignGpu, sizes: &[usize], w: &[f32], trials: usize, prices: Option<&[i32]>) -> Solved {
    dev.solve(sizes, w, trials, prices, true).expect("device solve")
}

/// One problem of a solve: n, weights, q, the answer, its status.
type Problem<'a> = (usize, &'a [f32], &'a [i32], &'a [u32], Status);

/// Splits a solve into its problems: (n, weights, q, rows, status) per (trial, class).
fn problems<'a>(sizes: &'a [usize], w: &'a [f32], s: &'a Solved, trials: usize) -> Vec<Problem<'a>> {
    let (wtot, rtot): (usize, usize) = (sizes.iter().map(|n| n * n).sum(), sizes.iter().sum());
    let q = s.q.as_ref().unwrap();
    let mut out = Vec::new();
    for t in 0..trials {
        let (mut wo, mut ro) = (t * wtot, t * rtot);
        for (k, &n) in sizes.iter().enumerate() {
            out.push((n, &w[wo..wo + n * n], &q[wo..wo + n * n], &s.rows[ro..ro + n], s.status[t * sizes.len() + k]));
            wo += n * n;
            ro += n;
        }
    }
    out
}

#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn gpu_auction_is_exactly_optimal_for_its_quantised_weights() {
    let Some(ctx) = gpu("gpu_auction_is_exactly_optimal_for_its_quantised_weights") else { return };
    let dev = AssignGpu::new(ctx.clone());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    // n = 1 to 64, then every class size of the 3x3 to 16x16 boards (corners 4, frame
    // 4 (s - 2), inner (s - 2)^2).
    let mut ns: Vec<usize> = (1..=64).collect();
    for s in 3..=16usize {
        ns.extend([4 * (s - 2), (s - 2) * (s - 2)]);
    }
    ns.sort_unstable();
    ns.dedup();
    for kind in [Kind::Random, Kind::Planted, Kind::Ties, Kind::Close, Kind::Forbidden] {
        let w: Vec<f32> = ns.iter().flat_map(|&n| weights(n, kind, &mut rng)).collect();
        let s = solve(&dev, &ns, &w, 1, None);
        for (n, wk, qk, rows, st) in problems(&ns, &w, &s, 1) {
            check(&format!("{kind:?} n={n}"), n, wk, qk, rows, st);
            if matches!(kind, Kind::Planted) {
                // A unique optimum by a margin far above the quantisation: found exactly.
                assert_eq!(rows, &jv(n, wk).1[..], "planted n={n}");
            }
        }
    }
}

#[test]
fn gpu_auction_warm_and_cold_reach_the_same_optimum_over_trials() {
    let Some(ctx) = gpu("gpu_auction_warm_and_cold_reach_the_same_optimum_over_trials") else { return };
    let dev = AssignGpu::new(ctx.clone());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    // The class shapes of a 7x7 board, 6 trials.
    let sizes = [4usize, 20, 25];
    let trials = 6;
    let mut w: Vec<f32> = (0..trials)
        .flat_map(|_| sizes.iter().flat_map(|&n| weights(n, Kind::Random, &mut rng)).collect::<Vec<_>>())
        .collect();
    let cold = solve(&dev, &sizes, &w, trials, None);
    for (n, wk, qk, rows, st) in problems(&sizes, &w, &cold, trials) {
        check(&format!("cold n={n}"), n, wk, qk, rows, st);
    }
    let mut prices = cold.prices.clone();
    for step in 0..5 {
        // The map moves the weights a little each iteration.
        w.iter_mut().for_each(|v| *v += (rng.random::<f32>() - 0.5) * 0.2);
        let warm = solve(&dev, &sizes, &w, trials, Some(&prices));
        let cold = solve(&dev, &sizes, &w, trials, None);
        assert_eq!(warm.q, cold.q, "step {step}: the same quantisation");
        for ((n, wk, qk, rows, st), (_, _, _, crows, _)) in
            problems(&sizes, &w, &warm, trials).into_iter().zip(problems(&sizes, &w, &cold, trials))
        {
            check(&format!("warm step {step} n={n}"), n, wk, qk, rows, st);
            let qf: Vec<f32> = qk.iter().map(|&v| v as f32).collect();
            assert_eq!(total(n, &qf, rows), total(n, &qf, crows), "step {step} n={n}: warm and cold values");
        }
        assert!(warm.prices.iter().all(|&p| (0..1 << 30).contains(&p)), "prices drift");
        let (rw, rc): (u64, u64) =
            (warm.rounds.iter().map(|&r| r as u64).sum(), cold.rounds.iter().map(|&r| r as u64).sum());
        eprintln!("step {step}: bidding rounds warm {rw}, cold {rc}");
        assert!(rw < rc, "step {step}: the warm start took {rw} rounds, cold {rc}");
        prices = warm.prices;
    }
}

#[test]
fn gpu_auction_reports_what_it_cannot_solve() {
    let Some(ctx) = gpu("gpu_auction_reports_what_it_cannot_solve") else { return };
    let dev = AssignGpu::new(ctx.clone());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let mut infeasible = weights(5, Kind::Random, &mut rng);
    infeasible[10..15].iter_mut().for_each(|v| *v = f32::NEG_INFINITY);
    let mut nan = weights(4, Kind::Random, &mut rng);
    nan[3] = f32::NAN;
    let big = vec![0.0f32; 513 * 513];
    let sizes = [5usize, 4, 513, 3];
    let ok = weights(3, Kind::Random, &mut rng);
    let w: Vec<f32> = [&infeasible[..], &nan[..], &big[..], &ok[..]].concat();
    let s = dev.solve(&sizes, &w, 1, None, false).unwrap();
    assert_eq!(s.status, vec![Status::Infeasible, Status::BadWeight, Status::TooLarge, Status::Solved]);
    assert!(dev.solve(&sizes, &w[1..], 1, None, false).is_err(), "a wrong shape is an error");
}

/// Whole F1 solves with the assignment on the device: generated 5x5 and 6x6, RRR and the
/// difference map, every claimed solution verified exactly, iterations against the host
/// assignment's run of the same seeds.
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn gpu_f1_with_the_device_assignment_solves_generated_5x5_and_6x6() {
    use concur::batch::MapKind;
    use concur::f1::map::{AssignOn, MapConfig};
    let Some(ctx) = gpu("gpu_f1_with_the_device_assignment_solves_generated_5x5_and_6x6") else { return };
    // Seeds whose 8 trials solve within a few hundred iterations in the uniform metric
    // (lavapipe runs the auction about 30x slower than the host's JV; a software driver
    // proves the path, not its speed).
    let default = MapConfig::default().join_weights;
    for (w, seed, kind, join_weights) in [
        (5, 3, MapKind::Rrr, None),
        (6, 28, MapKind::Rrr, None),
        (5, 3, MapKind::Dm, None),
        (5, 3, MapKind::Rrr, default),
    ] {
        let (p, _) = crate::common::generated(w, w, seed);
        let cfg = MapConfig {
            kind,
            assign: AssignOn::GpuAuction,
            join_weights,
            run: MapRun { trials: 8, max_iters: 3000, seed: 1, ..Default::default() },
            ..Default::default()
        };
        let r = concur::backend::gpu::f1::solve(&ctx, &p, &cfg, &mut |_| {}).expect("device run");
        let (_, it, board) = r.solution.as_ref().unwrap_or_else(|| panic!("{w}x{w} {kind:?}: unsolved"));
        assert!(concur::verify::check(&p, board).valid, "{w}x{w} {kind:?}: claimed board fails the exact check");
        let host =
            concur::backend::gpu::f1::solve(&ctx, &p, &MapConfig { assign: AssignOn::Cpu, ..cfg.clone() }, &mut |_| {})
                .unwrap();
        eprintln!(
            "{w}x{w} {kind:?}: device assignment solved at {it} iterations, host at {:?}",
            host.solution.map(|s| s.1)
        );
    }
}

/// Every class size of the 3x3 to 16x16 boards, and 1 to 40.
fn class_sizes() -> Vec<usize> {
    let mut ns: Vec<usize> = (1..=40).collect();
    for s in 3..=16usize {
        ns.extend([4 * (s - 2), (s - 2) * (s - 2)]);
    }
    ns.sort_unstable();
    ns.dedup();
    ns
}

/// Checks one device JV answer against the host JV: a permutation on allowed entries whose
/// value equals the host optimum (to float rounding of the f32 duals); with a unique optimum
/// (`same`) the very same assignment.
fn check_jv(what: &str, n: usize, w: &[f32], rows: &[u32], status: Status, same: bool) {
    assert_eq!(status, Status::Solved, "{what}");
    let mut seen = vec![false; n];
    for (r, &c) in rows.iter().enumerate() {
        assert!((c as usize) < n && !seen[c as usize], "{what}: not a permutation: {rows:?}");
        seen[c as usize] = true;
        assert!(w[r * n + c as usize].is_finite(), "{what}: forbidden entry ({r}, {c}) used");
    }
    let (opt, host) = jv(n, w);
    let got = total(n, w, rows);
    let scale: f64 = w.iter().filter(|v| v.is_finite()).map(|v| v.abs() as f64).fold(1.0, f64::max);
    assert!((got - opt).abs() <= 1e-5 * n as f64 * scale, "{what}: device {got}, host optimum {opt}");
    if same {
        assert_eq!(rows, &host[..], "{what}: the unique optimum");
    }
}

/// Both device JV kernels: the workgroup one and the subgroup one (which is the workgroup one
/// on a device without subgroup operations; under REQUIRE_GPU=1 the software adapter CI uses
/// has them, so there both really run unless CONCUR_NO_SUBGROUPS=1).
fn kernels(ctx: &std::sync::Arc<concur::backend::gpu::GpuContext>) -> Vec<JvGpu> {
    let sg = JvGpu::of_kind(ctx.clone(), JvKind::Subgroup);
    if ctx.subgroups {
        assert_eq!(sg.kind(), JvKind::Subgroup);
    }
    let staged = JvGpu::of_kind(ctx.clone(), JvKind::SubgroupStaged);
    eprintln!(
        "device JV kernels on {}: subgroups {} ({}-{} lanes, barrier {}), kernels {:?} and {:?}",
        ctx.adapter,
        ctx.subgroups,
        ctx.subgroup_min,
        ctx.subgroup_max,
        ctx.subgroup_barrier,
        sg.kind(),
        staged.kind()
    );
    vec![JvGpu::new(ctx.clone()), sg, staged]
}

fn jv_problems<'a>(
    sizes: &'a [usize],
    w: &'a [f32],
    s: &'a JvSolved,
    trials: usize,
) -> Vec<(usize, &'a [f32], &'a [u32], Status)> {
    let (wtot, rtot): (usize, usize) = (sizes.iter().map(|n| n * n).sum(), sizes.iter().sum());
    let mut out = Vec::new();
    for t in 0..trials {
        let (mut wo, mut ro) = (t * wtot, t * rtot);
        for (k, &n) in sizes.iter().enumerate() {
            out.push((n, &w[wo..wo + n * n], &s.rows[ro..ro + n], s.status[t * sizes.len() + k]));
            wo += n * n;
            ro += n;
        }
    }
    out
}

#[test]
fn gpu_jv_is_optimal_against_the_host_jv_on_every_class_size() {
    let Some(ctx) = gpu("gpu_jv_is_optimal_against_the_host_jv_on_every_class_size") else { return };
    for dev in kernels(&ctx) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
        let ns = class_sizes();
        for kind in [Kind::Random, Kind::Planted, Kind::Ties, Kind::Close, Kind::Forbidden] {
            let w: Vec<f32> = ns.iter().flat_map(|&n| weights(n, kind, &mut rng)).collect();
            let s = dev.solve(&ns, &w, 1, None).expect("device solve");
            assert!(!s.failed[0], "{kind:?}: a problem failed: {:?}", s.status);
            for (n, wk, rows, st) in jv_problems(&ns, &w, &s, 1) {
                check_jv(&format!("{kind:?} n={n}"), n, wk, rows, st, matches!(kind, Kind::Planted));
            }
        }
    }
}

#[test]
fn gpu_jv_warm_starts_stay_optimal_over_moving_weights() {
    let Some(ctx) = gpu("gpu_jv_warm_starts_stay_optimal_over_moving_weights") else { return };
    for dev in kernels(&ctx) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(19);
        // The class shapes of a 7x7 and of a 16x16 board, 3 trials.
        for sizes in [vec![4usize, 20, 25], vec![4, 56, 196]] {
            let trials = 3;
            for kind in [Kind::Random, Kind::Forbidden, Kind::Ties] {
                let mut w: Vec<f32> = (0..trials)
                    .flat_map(|_| sizes.iter().flat_map(|&n| weights(n, kind, &mut rng)).collect::<Vec<_>>())
                    .collect();
                let b = dev.batch(&sizes, trials);
                b.write_weights(&w).unwrap();
                b.run(false).unwrap();
                let mut last = b.read().unwrap();
                for step in 0..4 {
                    // The map moves the weights a little each iteration (forbidden entries stay so).
                    w.iter_mut().for_each(|v| {
                        if v.is_finite() && !matches!(kind, Kind::Ties) {
                            *v += (rng.random::<f32>() - 0.5) * 0.2
                        }
                    });
                    b.write_weights(&w).unwrap();
                    b.run(true).unwrap();
                    let warm = b.read().unwrap();
                    for (n, wk, rows, st) in jv_problems(&sizes, &w, &warm, trials) {
                        check_jv(&format!("{kind:?} warm step {step} n={n}"), n, wk, rows, st, false);
                    }
                    let (aw, ac): (u64, u64) = (
                        warm.augmentations.iter().map(|&a| a as u64).sum(),
                        last.augmentations.iter().map(|&a| a as u64).sum(),
                    );
                    eprintln!("{sizes:?} {kind:?} step {step}: augmentations warm {aw} (previous solve {ac})");
                    last = warm;
                }
                if matches!(kind, Kind::Ties) {
                    // Unchanged weights: the warm start keeps every row, no search at all.
                    assert!(last.augmentations.iter().all(|&a| a == 0), "{:?}", last.augmentations);
                }
            }
        }
    }
}

#[test]
fn gpu_jv_reports_what_it_cannot_solve_per_trial() {
    let Some(ctx) = gpu("gpu_jv_reports_what_it_cannot_solve_per_trial") else { return };
    for dev in kernels(&ctx) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let sizes = [5usize, 4, 3];
        let ok: Vec<f32> = sizes.iter().flat_map(|&n| weights(n, Kind::Random, &mut rng)).collect();
        let mut infeasible = ok.clone();
        infeasible[10..15].iter_mut().for_each(|v| *v = f32::NEG_INFINITY);
        let mut nan = ok.clone();
        nan[25 + 3] = f32::NAN;
        let mut column = ok.clone();
        for r in 0..3 {
            column[25 + 16 + r * 3 + 1] = f32::NEG_INFINITY;
        }
        let w: Vec<f32> = [&ok[..], &infeasible[..], &nan[..], &column[..]].concat();
        let s = dev.solve(&sizes, &w, 4, None).unwrap();
        assert_eq!(s.failed, vec![false, true, true, true]);
        assert_eq!(s.status[3], Status::Infeasible);
        assert_eq!(s.status[7], Status::BadWeight);
        assert_eq!(s.status[11], Status::Infeasible);
        assert!(dev.solve(&sizes, &w[1..], 4, None).is_err(), "a wrong shape is an error");
        let big = vec![0.0f32; 257 * 257];
        let s = dev.solve(&[257], &big, 1, None).unwrap();
        assert_eq!(s.status, vec![Status::TooLarge]);
    }
}

/// The subgroup kernel against the workgroup kernel: the same rows, duals, statuses and
/// augmentations bit for bit, cold and over warm starts, on every class size up to 64 and on
/// the class shapes of the boards the map runs (a 16x16's 196 going to the workgroup kernel
/// inside the subgroup batch), for weights with ties and forbidden entries; and frozen trials
/// (cold word 2) left as they were.
#[test]
#[cfg_attr(not(full_tier), ignore = "full tier (CONCUR_TESTS=full)")]
fn gpu_jv_subgroup_kernel_gives_the_workgroup_kernels_answers_bit_for_bit() {
    let Some(ctx) = gpu("gpu_jv_subgroup_kernel_gives_the_workgroup_kernels_answers_bit_for_bit") else { return };
    let wg = JvGpu::new(ctx.clone());
    for sg in [JvGpu::of_kind(ctx.clone(), JvKind::Subgroup), JvGpu::of_kind(ctx.clone(), JvKind::SubgroupStaged)] {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(41);
        let small: Vec<usize> = class_sizes().into_iter().filter(|&n| n <= 64).collect();
        for sizes in [small, vec![4, 20, 25], vec![4, 24, 36], vec![4, 56, 196], vec![64, 1, 2]] {
            let trials = 5;
            for kind in [Kind::Random, Kind::Ties, Kind::Forbidden, Kind::Close] {
                let mut w: Vec<f32> = (0..trials)
                    .flat_map(|_| sizes.iter().flat_map(|&n| weights(n, kind, &mut rng)).collect::<Vec<_>>())
                    .collect();
                let (a, b) = (wg.batch(&sizes, trials), sg.batch(&sizes, trials));
                let what_kind = format!("{:?}", b.kind());
                if ctx.subgroups && sg.kind() == JvKind::SubgroupStaged && sizes == [4, 24, 36] {
                    // An 8x8's classes fit the software adapter's workgroup memory.
                    assert_eq!(b.kind(), JvKind::SubgroupStaged);
                }
                for step in 0..4 {
                    for x in [&a, &b] {
                        x.write_weights(&w).unwrap();
                        x.run(step > 0).unwrap();
                    }
                    let (ra, rb) = (a.read().unwrap(), b.read().unwrap());
                    let what = format!("{what_kind} {sizes:?} {kind:?} step {step}");
                    assert_eq!(ra.rows, rb.rows, "{what}: rows");
                    assert_eq!(ra.status, rb.status, "{what}: status");
                    assert_eq!(ra.augmentations, rb.augmentations, "{what}: augmentations");
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&ra.duals), bits(&rb.duals), "{what}: duals");
                    w.iter_mut().for_each(|v| {
                        if v.is_finite() && !matches!(kind, Kind::Ties | Kind::Close) {
                            *v += (rng.random::<f32>() - 0.5) * 0.3
                        }
                    });
                }
                // A frozen trial (cold word 2) keeps its answer in the subgroup kernel.
                if b.kind() != JvKind::Workgroup && sizes.iter().all(|&n| n <= 64) {
                    let before = b.read().unwrap();
                    let mut cold = vec![0u32; trials];
                    cold[1] = 2;
                    b.write_cold(&cold).unwrap();
                    let fresh: Vec<f32> = (0..trials)
                        .flat_map(|_| {
                            sizes.iter().flat_map(|&n| weights(n, Kind::Random, &mut rng)).collect::<Vec<_>>()
                        })
                        .collect();
                    b.write_weights(&fresh).unwrap();
                    b.run(true).unwrap();
                    let after = b.read().unwrap();
                    let rtot: usize = sizes.iter().sum();
                    assert_eq!(
                        after.rows[rtot..2 * rtot],
                        before.rows[rtot..2 * rtot],
                        "{sizes:?} {kind:?}: frozen trial"
                    );
                }
            }
        }
    }
}
