//! The CPU rows of `concur bench`: each kernel and whole iterations of both formulations on
//! the CPU backend's engines, the host assignment per class, and the row scan's rate.

use super::{BenchOptions, BenchRow, Measured, iteration_rows, measure, random, row, whole_iterations};
use concur::assign::{Assigner, Precision, Real};
use concur::backend::EngineError;
use concur::batch::MapRun;
use concur::dc::{self, DcConfig, DivideScratch, Layout, project};
use concur::f1::map::{self, MapConfig};
use concur::f1::project::{F1, LANES};
use concur::puzzle::Puzzle;
use concur::puzzle::generate::{GenerateOptions, generate};
use rayon::prelude::*;
use std::time::Duration;

/// Board sizes of the scan rows ([`scan_rows`]).
pub const SCAN_SIZES: [(usize, usize); 3] = [(7, 7), (8, 8), (16, 16)];

/// The scan rows (formulation `scan`, kernel `nodes`, backend `cpu`, batch 1): the row scan's
/// placements per second on one core (a node is one piece placed, as the other tree searches
/// count it), in the rate column, at each of [`SCAN_SIZES`], on generated puzzles, so that
/// the control's rate sits beside the map's in one table. Each row runs the first-solution
/// search ([`concur::search::scan::solve`], one thread, restarts on) for about `budget` of
/// search time: run after run (seeds `seed`, `seed + 1`, ...; a run that solves early ends
/// early), counting the search time only (the tables and the tree estimates apart). `reps`
/// is the runs, `seconds` the search seconds per run.
pub fn scan_rows(budget: Duration, seed: u64, cancel: &concur::cancel::Cancel) -> Vec<BenchRow> {
    use concur::search::scan::{ScanSolveConfig, solve};
    let mut out = Vec::new();
    for (w, h) in SCAN_SIZES {
        let Ok((p, _)) =
            generate(&GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed })
        else {
            continue;
        };
        // Runs of a node count sized to fill what is left of the budget at the rate so far
        // (the first, of a million nodes, calibrates), so that the setup, which grows with
        // the board (tables, tree estimates), does not eat the search time.
        let (mut nodes, mut secs, mut runs, mut next) = (0u64, 0f64, 0usize, 1u64 << 20);
        let want = budget.as_secs_f64();
        while runs == 0 || (secs < want && !cancel.is_cancelled()) {
            let cfg = ScanSolveConfig {
                seed: seed + runs as u64,
                max_nodes: Some(next),
                time_limit: Some(budget * 4 + Duration::from_secs(10)),
                threads: 1,
                probes: 20,
                cancel: cancel.clone(),
                ..Default::default()
            };
            let r = solve(&p, &cfg, &|_| {});
            nodes += r.nodes;
            secs += (r.wall_s - r.setup_s).max(0.0);
            runs += 1;
            let rate = if secs > 0.0 { nodes as f64 / secs } else { 1e7 };
            next = (((want - secs) * rate) as u64).max(1 << 16);
        }
        out.push(BenchRow {
            formulation: "scan",
            size: format!("{w}x{h}"),
            batch: 1,
            kernel: "nodes",
            backend: "cpu",
            reps: runs,
            seconds: secs / runs as f64,
            trial_iters_per_s: if secs > 0.0 { nodes as f64 / secs } else { 0.0 },
            gb_per_s: 0.0,
            bytes_per_trial: 0,
            ..Default::default()
        });
    }
    out
}

/// A run of exactly `iters` iterations of every trial (no early stop, no restarts).
pub(super) fn f1_run(batch: usize, iters: usize, seed: u64) -> MapConfig {
    MapConfig {
        all_trials: true,
        no_cycle_restart: true,
        restart_stall: None,
        run: MapRun { trials: batch, max_iters: iters as u64, seed, ..Default::default() },
        ..Default::default()
    }
}

pub(super) fn dc_run(batch: usize, iters: usize, seed: u64) -> DcConfig {
    DcConfig {
        all_trials: true,
        no_cycle_restart: true, // The plain layout, the one both backends run, so that the CPU and GPU rows compare.
        layout: concur::dc::DcLayout::Plain,
        run: MapRun { trials: batch, max_iters: iters as u64, seed, ..Default::default() },
        ..concur::dc::DcOptions::default().config(concur::batch::MapRun::default())
    }
}

pub(super) fn f1_cpu(p: &Puzzle, f1: &F1, batch: usize, o: &BenchOptions) -> Result<Vec<BenchRow>, EngineError> {
    let (d, wl, n) = (f1.dim(), f1.weight_len(), f1.cells());
    let x = random(batch * d, o.seed);
    let mut pe = vec![0.0f32; batch * d];
    let mut wts = vec![0.0f32; batch * wl];
    let mut best = vec![0u32; batch * wl];
    let mut out = Vec::new();
    let m = measure(o.budget, || {
        pe.par_chunks_mut(d).zip(x.par_chunks(d)).for_each(|(pe, x)| f1.project_edges(x, pe));
        Ok(())
    })?;
    out.push(row("f1", p, batch, "edges", "cpu", m, 4 * 2 * d as u64, 1));
    // The map's weights (F1::piece_weights_into: the reference's values, bit for bit, with the
    // argmax candidate left to the chosen entries); `best` is filled once, for the boards below.
    f1.piece_weights(&pe[..d], &mut wts[..wl], &mut best[..wl]);
    let m = measure(o.budget, || {
        wts.par_chunks_mut(wl).zip(pe.par_chunks(d)).for_each_init(
            concur::f1::project::SideTable::default,
            |t, (w, z)| {
                f1.piece_weights_into(z, w, t);
            },
        );
        Ok(())
    })?;
    out.push(lanes_of(row("f1", p, batch, "weights", "cpu", m, 4 * (2 * d + wl) as u64, 1), 1));
    // The same weights, LANES trials a pass (F1::piece_weights_minor, as the map's lock-step
    // runs it: the states laid out trial-minor beforehand, once a round there), where the
    // batch is whole groups of lanes.
    if batch.is_multiple_of(LANES) {
        let mut minor = vec![concur::f1::project::LaneVec::ZERO; batch / LANES * d];
        for (zl, z) in minor.chunks_mut(d).zip(pe.chunks(LANES * d)) {
            f1.to_lanes(std::array::from_fn(|l| &z[l * d..(l + 1) * d]), zl);
        }
        let m = measure(o.budget, || {
            wts.par_chunks_mut(LANES * wl)
                .zip(minor.par_chunks(d))
                .for_each_init(concur::f1::project::LaneSideTable::default, |t, (w, z)| {
                    f1.piece_weights_minor(z, w, t)
                });
            Ok(())
        })?;
        out.push(lanes_of(row("f1", p, batch, "weights", "cpu", m, 4 * (2 * d + wl) as u64, 1), LANES));
    }
    let boards: Vec<u32> = (0..batch * n).map(|i| best[(i / n) * wl]).collect();
    let m = measure(o.budget, || {
        let s: usize = boards.par_chunks(n).map(|b| f1.score(b)).sum();
        std::hint::black_box(s);
        Ok(())
    })?;
    out.push(row("f1", p, batch, "score", "cpu", m, 4 * (n + 1) as u64, 1));
    // Whole iterations with the trials in lock-step (the default), and, where the batch has
    // trials to group, one trial at a time (the reference path) beside them.
    let lanes = f1_run(batch, 1, o.seed).trial_lanes.min(batch);
    for lanes in if lanes > 1 { vec![lanes, 1] } else { vec![1] } {
        let m = whole_iterations(o.budget, |iters| {
            map::solve(p, MapConfig { trial_lanes: lanes, ..f1_run(batch, iters, o.seed) }, |_| {})?;
            Ok(())
        })?;
        let rows = iteration_rows("f1", p, batch, "cpu", m, 4 * (5 * d + 2 * wl + n) as u64);
        out.extend(rows.into_iter().map(|r| lanes_of(r, lanes)));
    }
    let m = whole_iterations(o.budget, |iters| {
        map::solve(p, MapConfig { reduced_costs: Precision::F32, ..f1_run(batch, iters, o.seed) }, |_| {})?;
        Ok(())
    })?;
    let rows = f32_rows(iteration_rows("f1", p, batch, "cpu", m, 4 * (5 * d + 2 * wl + n) as u64));
    out.extend(rows.into_iter().map(|r| lanes_of(r, lanes)));
    let (a, b) = assign_weights(f1, batch, o.seed);
    for (k, &n) in f1.class_cells().iter().map(|c| c.len()).collect::<Vec<_>>().iter().enumerate() {
        let (ak, bk) = (class_block(f1, &a, batch, k), class_block(f1, &b, batch, k));
        let m = assign_warm::<f64>(o.budget, n, batch, &ak, &bk)?;
        let mut r = row("f1", p, batch, "assign", "cpu", m, 4 * (n * n) as u64, 1);
        r.class_n = Some(n);
        out.push(r);
        if n > concur::assign::ENUMERATE_MAX {
            let m = assign_warm::<f32>(o.budget, n, batch, &ak, &bk)?;
            out.extend(f32_rows(vec![row("f1", p, batch, "assign", "cpu", m, 4 * (n * n) as u64, 1)]));
            out.last_mut().expect("one row").class_n = Some(n);
        }
    }
    Ok(out)
}

/// Marks rows as run with f32 reduced costs.
fn lanes_of(r: BenchRow, lanes: usize) -> BenchRow {
    BenchRow { trial_lanes: Some(lanes), ..r }
}

fn f32_rows(mut rows: Vec<BenchRow>) -> Vec<BenchRow> {
    rows.iter_mut().for_each(|r| r.reduced_costs = Some("f32"));
    rows
}

/// Warm solves of one class's problems, one per trial, alternating between two weight sets
/// as the map runs them (the corner class by enumeration, the others warm).
fn assign_warm<R: Real>(
    budget: Duration,
    n: usize,
    batch: usize,
    ak: &[f32],
    bk: &[f32],
) -> Result<Measured, EngineError> {
    let mut solvers: Vec<Assigner<R>> = (0..batch).map(|_| Assigner::with_precision(n)).collect();
    solvers.par_iter_mut().zip(ak.par_chunks(n * n)).try_for_each(|(s, w)| s.solve(w).map(|_| ()))?;
    let mut flip = false;
    measure(budget, || {
        flip = !flip;
        let w = if flip { bk } else { ak };
        solvers.par_iter_mut().zip(w.par_chunks(n * n)).try_for_each(|(s, w)| {
            if n <= concur::assign::ENUMERATE_MAX { s.solve_enumerate(w) } else { s.solve_warm(w) }.map(|_| ())
        })?;
        Ok(())
    })
}

/// Two sets of assignment weights of a batch, as the map produces them: of random states and
/// of the same states moved a little (one step's change). The `assign` rows alternate
/// between them, warm-started, so that neither backend re-solves unchanged weights.
pub(super) fn assign_weights(f1: &F1, batch: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let (d, wl) = (f1.dim(), f1.weight_len());
    let x = random(batch * d, seed);
    let y: Vec<f32> = x.iter().zip(random(batch * d, seed ^ 1)).map(|(a, b)| a + 0.05 * (b - 0.5)).collect();
    let weights = |x: &[f32]| {
        let mut pe = vec![0.0f32; batch * d];
        let mut w = vec![0.0f32; batch * wl];
        let mut best = vec![0u32; batch * wl];
        pe.par_chunks_mut(d).zip(x.par_chunks(d)).for_each(|(pe, x)| f1.project_edges(x, pe));
        // RRR's weights are of the reflection 2 P_E(x) - x.
        let z: Vec<f32> = pe.iter().zip(x).map(|(p, x)| 2.0 * p - x).collect();
        w.par_chunks_mut(wl).zip(best.par_chunks_mut(wl)).zip(z.par_chunks(d)).for_each(|((w, b), z)| {
            f1.piece_weights(z, w, b);
        });
        w
    };
    (weights(&x), weights(&y))
}

/// Class `k`'s blocks of every trial, back to back.
pub(super) fn class_block(f1: &F1, w: &[f32], batch: usize, k: usize) -> Vec<f32> {
    let (wl, off) = (f1.weight_len(), f1.weight_offsets()[k]);
    let n = f1.class_cells()[k].len();
    (0..batch).flat_map(|t| w[t * wl + off..t * wl + off + n * n].iter().copied()).collect()
}

pub(super) fn dc_cpu(p: &Puzzle, l: &Layout, batch: usize, o: &BenchOptions) -> Result<Vec<BenchRow>, EngineError> {
    let (s, v, nc, n) = (l.slots(), l.vars(), l.choices(), l.cells());
    let x = random(batch * s, o.seed);
    let mut chosen = vec![0u32; batch * nc];
    let mut m_out = vec![0.0f32; batch * v];
    let mut out = Vec::new();
    let m = measure(o.budget, || {
        m_out.par_chunks_mut(v).zip(x.par_chunks(s)).for_each(|(m, x)| project::concur(l, x, None, m));
        Ok(())
    })?;
    out.push(row("dc", p, batch, "concur", "cpu", m, 4 * (s + nc + v) as u64, 1));
    let m = measure(o.budget, || {
        chosen.par_chunks_mut(nc).zip(x.par_chunks(s)).try_for_each_init(
            || DivideScratch::new(l),
            |div, (ch, x)| project::divide(l, x, ch, div, &mut [], false),
        )?;
        Ok(())
    })?;
    out.push(row("dc", p, batch, "divide", "cpu", m, 4 * (3 * s + 2 * nc) as u64, 1));
    let m = measure(o.budget, || {
        let t: usize = m_out
            .par_chunks(v)
            .map_init(
                || vec![0u32; n],
                |b, m| {
                    l.argmax_board(m, b);
                    l.score(b)
                },
            )
            .sum();
        std::hint::black_box(t);
        Ok(())
    })?;
    out.push(row("dc", p, batch, "readout", "cpu", m, 4 * (v + n + 2) as u64, 1));
    let m = whole_iterations(o.budget, |iters| {
        dc::solve(p, dc_run(batch, iters, o.seed), |_| {})?;
        Ok(())
    })?;
    out.extend(iteration_rows("dc", p, batch, "cpu", m, 4 * (6 * s + 4 * nc + 2 * v + n + 2) as u64));
    Ok(out)
}

#[cfg(test)]
mod scan_row_tests {
    use super::*;

    /// One scan row per size, each with nodes searched in the budget and their rate.
    #[test]
    fn scan_rows_measure_nodes_per_second_at_each_size() {
        let rows = scan_rows(Duration::from_millis(100), 3, &concur::cancel::Cancel::new());
        let sizes: Vec<&str> = rows.iter().map(|r| r.size.as_str()).collect();
        assert_eq!(sizes, ["7x7", "8x8", "16x16"]);
        for r in &rows {
            assert_eq!((r.formulation, r.kernel, r.backend, r.batch), ("scan", "nodes", "cpu", 1));
            assert!(r.reps >= 1 && r.seconds > 0.0 && r.trial_iters_per_s > 1e5, "{r:?}");
        }
    }
}
