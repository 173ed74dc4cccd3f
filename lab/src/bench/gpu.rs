//! The GPU rows of `concur bench`: the device's copy bandwidth, each kernel, whole
//! iterations for every placement of F1's assignments, the device loop's per-kernel profile,
//! the device assignments per class, and F2 on the device.

use super::cpu::{assign_weights, class_block, dc_run, f1_run};
use super::{BenchOptions, BenchRow, Measured, iteration_rows, measure, random, row, whole_iterations};
use concur::backend::EngineError;
use concur::backend::gpu::GpuContext;
use concur::batch::MapRun;
use concur::dc::{DcConfig, DivideScratch, project};
use concur::f1::map::MapConfig;
use concur::puzzle::Puzzle;
use std::time::Duration;

/// Copies per submission when measuring the device's copy bandwidth.
const COPIES: usize = 8;

/// The device's own copy bandwidth, the yardstick for the kernels' GB/s, two ways: `copy`,
/// a compute kernel copying one word per thread (memory as the kernels see it), and
/// `copy-transfer`, the API's buffer-to-buffer copy (on some drivers a transfer engine,
/// far below what the kernels reach: an H200 through Vulkan gave 832 GB/s). Several copies
/// per submission, so that the submission and the wait (about 0.6 ms on an H200 through
/// Vulkan, as long as one 256 MiB copy) do not count as copy time.
pub(super) fn copy_rows(ctx: &GpuContext, budget: Duration) -> Result<Vec<BenchRow>, EngineError> {
    use concur::backend::gpu::LAYOUT_WGSL;
    use concur::backend::gpu::context::{dispatch, grid};
    // Within one binding, so that the kernel copies the same bytes as the transfer.
    let bytes = (256u64 << 20).min(ctx.max_buffer.min(ctx.max_binding) / 4 * 4);
    let (a, b) = (ctx.zeroed("copy a", bytes), ctx.zeroed("copy b", bytes));
    let module = ctx.module("layout", LAYOUT_WGSL);
    let pipe = ctx.pipeline(&module, "copy");
    let params = ctx.uniform("copy params", &[0u32, 0, 0, (bytes / 4) as u32]);
    let binds =
        [ctx.bind(&pipe, &[(0, &params), (1, &a), (2, &b)]), ctx.bind(&pipe, &[(0, &params), (1, &b), (2, &a)])];
    let mut rows = Vec::new();
    for (kernel, shader) in [("copy", true), ("copy-transfer", false)] {
        let m = measure(budget, || {
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            for i in 0..COPIES {
                if shader {
                    dispatch(&mut enc, &pipe, &binds[i % 2], grid(bytes / 4));
                } else {
                    let (from, to) = if i % 2 == 0 { (&a, &b) } else { (&b, &a) };
                    enc.copy_buffer_to_buffer(from, 0, to, 0, bytes);
                }
            }
            ctx.queue.submit([enc.finish()]);
            Ok(ctx.wait()?)
        })?;
        let m = (m.0, m.1 / COPIES as f64);
        rows.push(BenchRow {
            formulation: "-",
            size: "-".into(),
            batch: 1,
            kernel,
            backend: "gpu",
            reps: m.0,
            seconds: m.1,
            trial_iters_per_s: 1.0 / m.1,
            gb_per_s: 2.0 * bytes as f64 / m.1 / 1e9,
            bytes_per_trial: 2 * bytes,
            ..Default::default()
        });
    }
    Ok(rows)
}

/// The F1 assignment placements the GPU rows compare: the host JV, then the device kernels,
/// each with the separate passes and with the fused one (`--fused-passes`).
const DEVICE_PLACEMENTS: [(concur::f1::map::AssignOn, bool, &str); 7] = {
    use concur::f1::map::AssignOn;
    [
        (AssignOn::Cpu, false, "cpu"),
        (AssignOn::GpuJv, false, "gpu-jv"),
        (AssignOn::GpuJv, true, "gpu-jv+fused"),
        (AssignOn::GpuJvSg, false, "gpu-jv-sg"),
        (AssignOn::GpuJvSg, true, "gpu-jv-sg+fused"),
        (AssignOn::GpuJvSgStaged, false, "gpu-jv-sg-staged"),
        (AssignOn::GpuAuction, false, "gpu-auction"),
    ]
};

/// A warm device solve measured on two weight sets already on the device, alternately copied
/// into the batch's weights `dst` before each `solve`.
fn alternating(
    ctx: &GpuContext,
    budget: Duration,
    sets: [&wgpu::Buffer; 2],
    dst: &wgpu::Buffer,
    solve: impl Fn() -> Result<(), EngineError>,
) -> Result<Measured, EngineError> {
    let mut flip = false;
    measure(budget, || {
        flip = !flip;
        let src = sets[usize::from(flip)];
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        ctx.queue.submit([enc.finish()]);
        solve()
    })
}

/// Whole iterations in one timestamp profile of the device loop.
const PROFILE_ITERS: usize = 8;

/// The `device-loop` rows of one placement: each kernel's device time per trial-iteration,
/// the span of the whole iterations and the gaps between passes; or one row saying why there
/// is no profile.
fn profile_rows(
    p: &Puzzle,
    batch: usize,
    assign: &'static str,
    prof: Result<concur::backend::gpu::timing::Timings, EngineError>,
) -> Vec<BenchRow> {
    let mk = |kernel: &'static str, ns: f64, note: Option<String>| {
        let per_iter_s = ns * 1e-9 / PROFILE_ITERS as f64;
        let mut r = row("f1", p, batch, kernel, "gpu", (1, per_iter_s), 0, 1);
        if ns <= 0.0 {
            r.trial_iters_per_s = 0.0;
        }
        r.assign = Some(assign);
        r.profile = Some("device-loop");
        r.device_ns = Some(ns / (PROFILE_ITERS * batch) as f64);
        r.note = note;
        r
    };
    match prof {
        Ok(t) => {
            let mut rows: Vec<BenchRow> = t.kernels.iter().map(|&(k, ns, _)| mk(k, ns, None)).collect();
            let untimed = (t.untimed > 0).then(|| format!("{} passes untimed (query capacity)", t.untimed));
            rows.push(mk("span", t.span_ns, untimed));
            rows.push(mk("gaps", (t.span_ns - t.busy_ns()).max(0.0), None));
            rows
        }
        Err(e) => vec![mk("span", 0.0, Some(format!("no device-loop profile: {e}")))],
    }
}

pub(super) fn f1_gpu(
    ctx: &std::sync::Arc<GpuContext>,
    p: &Puzzle,
    batch: usize,
    o: &BenchOptions,
) -> Result<Vec<BenchRow>, EngineError> {
    use concur::backend::gpu::f1::{F1Gpu, Kernel};
    let cfg = MapConfig { run: MapRun { trials: batch, seed: o.seed, ..Default::default() }, ..Default::default() };
    let g = F1Gpu::new(ctx.clone(), p, cfg.clone())?;
    g.write_state(0, &random(batch * g.f1().dim(), o.seed));
    let mut out = Vec::new();
    for (k, name) in
        [(Kernel::Edges, "edges"), (Kernel::Weights, "weights"), (Kernel::Update, "update"), (Kernel::Score, "score")]
    {
        let m = measure(o.budget, || Ok(g.run_kernel(k, 1)?))?;
        out.push(row("f1", p, batch, name, "gpu", m, g.kernel_bytes(k), 1));
    }
    // A whole iteration as the solver runs it: device passes, weights up, CPU assignment,
    // choices down.
    let bytes: u64 =
        [Kernel::Edges, Kernel::Weights, Kernel::Update, Kernel::Score].iter().map(|&k| g.kernel_bytes(k)).sum();
    // Every placement of the assignment: the host JV (one round trip per iteration) and the
    // two device kernels (the device loop, K iterations per submission).
    let unfused = |asked: bool, ran: bool| {
        (asked && !ran).then(|| "the fused pass does not fit this board here: the separate passes ran".to_string())
    };
    for (on, fused, name) in DEVICE_PLACEMENTS {
        let cfg = |iters| MapConfig { assign: on, fused_passes: fused, ..f1_run(batch, iters, o.seed) };
        let note = unfused(fused, concur::backend::gpu::f1::fuses(ctx, p, &cfg(1))?);
        let m = whole_iterations(o.budget, |iters| {
            F1Gpu::new(ctx.clone(), p, cfg(iters))?.run(&mut |_| {})?;
            Ok(())
        })?;
        for mut r in iteration_rows("f1", p, batch, "gpu", m, bytes) {
            r.assign = Some(name);
            r.note.clone_from(&note);
            out.push(r);
        }
    }
    // Inside the device loop: each kernel's device time, from timestamps around its passes.
    for &(on, fused, name) in &DEVICE_PLACEMENTS[1..] {
        let cfg = MapConfig { assign: on, fused_passes: fused, ..f1_run(batch, 1 << 30, o.seed) };
        let g = F1Gpu::new(ctx.clone(), p, cfg)?;
        let mut rows = profile_rows(p, batch, name, g.profile_device(PROFILE_ITERS, 2));
        if let Some(note) = unfused(fused, g.fused()) {
            rows.iter_mut().for_each(|r| r.note = Some(note.clone()));
        }
        out.extend(rows);
    }
    // The device assignment, one class at a time, alternating two weight sets already on the
    // device (a device copy into the batch's weights, then the warm solve).
    use concur::backend::gpu::assign::AssignGpu;
    let dev = AssignGpu::new(ctx.clone());
    let f1 = g.f1();
    let (a, b) = assign_weights(f1, batch, o.seed);
    for k in 0..f1.class_cells().len() {
        let n = f1.class_cells()[k].len();
        let (ak, bk) = (class_block(f1, &a, batch, k), class_block(f1, &b, batch, k));
        let asg = dev.batch(&[n], batch, false);
        let (da, db) = (ctx.storage("bench assign a", &ak), ctx.storage("bench assign b", &bk));
        asg.write_weights(&ak)?;
        asg.run(false)?;
        let m = alternating(ctx, o.budget, [&da, &db], asg.weights_buffer(), || Ok(asg.run(true).map(|_| ())?))?;
        let mut r = row("f1", p, batch, "assign", "gpu", m, 4 * (n * n) as u64, 1);
        r.class_n = Some(n);
        r.assign = Some("gpu-auction");
        out.push(r);
        // The device JVs (the workgroup and the subgroup kernel) on the same two weight sets,
        // warm.
        use concur::backend::gpu::jv::{JvGpu, JvKind};
        for (kind, name) in [
            (JvKind::Workgroup, "gpu-jv"),
            (JvKind::Subgroup, "gpu-jv-sg"),
            (JvKind::SubgroupStaged, "gpu-jv-sg-staged"),
        ] {
            let jv = JvGpu::of_kind(ctx.clone(), kind).batch(&[n], batch);
            jv.write_weights(&ak)?;
            jv.run(false)?;
            let m = alternating(ctx, o.budget, [&da, &db], jv.weights_buffer(), || Ok(jv.run(true)?))?;
            let mut r = row("f1", p, batch, "assign", "gpu", m, 4 * (n * n) as u64, 1);
            r.class_n = Some(n);
            r.assign = Some(name);
            if jv.kind() != kind {
                r.note = Some(format!("the {:?} kernel ran (no subgroups, or the blocks do not fit)", jv.kind()));
            }
            out.push(r);
        }
    }
    Ok(out)
}

pub(super) fn dc_gpu(
    ctx: &std::sync::Arc<GpuContext>,
    p: &Puzzle,
    batch: usize,
    o: &BenchOptions,
) -> Result<Vec<BenchRow>, EngineError> {
    use concur::backend::gpu::dc::{DcGpu, Kernel};
    let cfg = DcConfig {
        run: MapRun { trials: batch, seed: o.seed, ..Default::default() },
        ..concur::dc::DcOptions { layout: concur::dc::DcLayout::Plain, ..Default::default() }
            .config(concur::batch::MapRun::default())
    };
    let chunk = o.dc_chunk_trials.unwrap_or(usize::MAX);
    let g = DcGpu::with_chunk_trials(ctx.clone(), p, cfg.clone(), chunk)?;
    let l = g.layout();
    let x = random(batch * l.slots(), o.seed);
    let mut chosen = vec![0u32; batch * l.choices()];
    let mut div = DivideScratch::new(l);
    for (ch, xs) in chosen.chunks_mut(l.choices()).zip(x.chunks(l.slots())) {
        project::divide(l, xs, ch, &mut div, &mut [], false)?;
    }
    g.write_state(0, &x, &chosen, &vec![1.0; batch * l.constraints()]);
    let mut out = Vec::new();
    for (k, name) in [(Kernel::Concur, "concur"), (Kernel::Divide, "divide"), (Kernel::Readout, "readout")] {
        let m = measure(o.budget, || Ok(g.run_kernel(k, 1)?))?;
        out.push(row("dc", p, batch, name, "gpu", m, g.kernel_bytes(k), 1));
    }
    let bytes: u64 = [Kernel::Concur, Kernel::Divide, Kernel::Readout].iter().map(|&k| g.kernel_bytes(k)).sum();
    // The F2 step on the device alone (16 iterations per submission, no host round trip).
    let m = measure(o.budget, || Ok(g.run_iterations(16)?))?;
    out.push(row("dc", p, batch, "step", "gpu", m, bytes, 16));
    // A whole iteration as the solver runs it, with the per-trial status read back each time.
    let m = whole_iterations(o.budget, |iters| {
        DcGpu::with_chunk_trials(ctx.clone(), p, dc_run(batch, iters, o.seed), chunk)?.run(&mut |_| {})?;
        Ok(())
    })?;
    out.extend(iteration_rows("dc", p, batch, "gpu", m, bytes));
    for r in &mut out {
        r.chunk_trials = o.dc_chunk_trials;
    }
    Ok(out)
}
