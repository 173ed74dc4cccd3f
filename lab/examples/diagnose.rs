//! Why the map stalls: instrumented RRR runs (BENCHMARKS.md, "Why the map stalls").
//!
//! ```sh
//! # iterations to solution of N trials, every trial run to its budget (the batch driver)
//! cargo run --release --example diagnose -- dist P.txt --trials 256 --max-iters 200000 --out d.jsonl
//! # watch trials: score, gap, distance to the nearest known solution, cycles
//! concur count P.txt --engine scan --journal sol.jsonl
//! cargo run --release --example diagnose -- trace P.txt --solutions sol.jsonl --trials 4 \
//!     --iters 1000000 --every 100 --out trace
//! ```
//!
//! `prune` runs divide and concur (hybrid layout, RRR) with `--tau T` propagation a round at
//! a time and asks, for each trial and round, whether any known solution survives the pruned
//! candidates (BENCHMARKS.md, "Lever: propagation folded into divide and concur"):
//!
//! ```sh
//! cargo run --release --example diagnose -- prune P.txt --solutions sol.jsonl --trials 16 --tau 0.9 --max-iters 20000
//! ```
//!
//! `dist` also takes `--restart-stall L` and `--kick S` (MapConfig's stall restart and kick),
//! and `--reduced-costs f32` (the assignments' precision).
//!
//! `dist` writes one JSON line per trial (`solved_at` is null for a trial that did not solve)
//! after one line with the run's settings, and prints a summary: quantiles, the coefficient
//! of variation, the exponential fit with censoring, the Kolmogorov-Smirnov distance to it
//! and the best fixed restart cutoff (Luby, Sinclair & Zuckerman 1993). `trace` writes
//! `OUT.csv` (one row per logged iteration of every trial) and `OUT.jsonl` (one summary per
//! trial: cycle analysis of the last `--window` iterations and the distances reached).

use anyhow::{Context, Result, bail};
use concur::batch::MapRun;
use concur::f1::map::{F1Map, MapConfig};
use concur::puzzle::{Board, Placement, Puzzle, format};
use concur::search::journal;
use concur_lab::diagnose::{SolutionSet, Tracer, board_hash, restart_curve};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

struct Args {
    cmd: String,
    puzzle: PathBuf,
    trials: usize,
    first_trial: usize,
    max_iters: u64,
    beta: f32,
    seed: u64,
    threads: usize,
    out: Option<PathBuf>,
    solutions: Option<PathBuf>,
    every: u64,
    window: usize,
    tail: usize,
    baseline: usize,
    no_cycle_restart: bool,
    restart_stall: Option<u64>,
    kick: Option<f32>,
    join_weights: Option<[f32; 3]>,
    adapt: Option<concur::f1::map::AdaptiveWeights>,
    fix_corner: bool,
    dm: bool,
    tau: f32,
    reduced_costs: concur::assign::Precision,
}

fn parse() -> Result<Args> {
    let mut it = std::env::args().skip(1);
    let cmd = it.next().context("usage: diagnose dist|trace PUZZLE [options]")?;
    let puzzle = PathBuf::from(it.next().context("missing the puzzle file")?);
    let mut a = Args {
        cmd,
        puzzle,
        trials: 256,
        first_trial: 0,
        max_iters: 100_000,
        beta: 0.5,
        seed: 0,
        threads: 1,
        out: None,
        solutions: None,
        every: 100,
        window: 4096,
        tail: 300,
        baseline: 0,
        no_cycle_restart: false,
        restart_stall: None,
        kick: None,
        join_weights: None,
        adapt: None,
        fix_corner: false,
        dm: false,
        tau: 0.9,
        reduced_costs: concur::assign::Precision::F64,
    };
    while let Some(flag) = it.next() {
        if flag == "--no-cycle-restart" {
            a.no_cycle_restart = true;
            continue;
        }
        if flag == "--dm" {
            a.dm = true;
            continue;
        }
        if flag == "--fix-corner" {
            a.fix_corner = true;
            continue;
        }
        let v = it.next().with_context(|| format!("{flag} needs a value"))?;
        let num = || -> Result<u64> { v.parse().with_context(|| format!("{flag}: not a number: {v}")) };
        match flag.as_str() {
            "--trials" => a.trials = num()? as usize,
            "--first-trial" => a.first_trial = num()? as usize,
            "--max-iters" | "--iters" => a.max_iters = num()?,
            "--beta" => a.beta = v.parse().with_context(|| format!("--beta: not a number: {v}"))?,
            "--seed" => a.seed = num()?,
            "--threads" => a.threads = num()? as usize,
            "--every" => a.every = num()?.max(1),
            "--window" => a.window = num()?.max(2) as usize,
            "--tail" => a.tail = num()? as usize,
            "--baseline" => a.baseline = num()? as usize,
            "--restart-stall" => a.restart_stall = Some(num()?),
            "--kick" => a.kick = Some(v.parse().with_context(|| format!("--kick: not a number: {v}"))?),
            "--tau" => a.tau = v.parse().with_context(|| format!("--tau: not a number: {v}"))?,
            "--join-weights" => {
                let w: Vec<f32> = v
                    .split(',')
                    .map(|t| t.parse())
                    .collect::<Result<_, _>>()
                    .with_context(|| format!("--join-weights: not three numbers: {v}"))?;
                a.join_weights =
                    Some(w[..].try_into().with_context(|| format!("--join-weights: not three numbers: {v}"))?);
            }
            "--adapt" => a.adapt = Some(v.parse().map_err(anyhow::Error::msg)?),
            "--reduced-costs" => {
                a.reduced_costs = match v.as_str() {
                    "f64" => concur::assign::Precision::F64,
                    "f32" => concur::assign::Precision::F32,
                    _ => bail!("--reduced-costs: f64 or f32, not {v}"),
                }
            }
            "--out" => a.out = Some(PathBuf::from(v)),
            "--solutions" => a.solutions = Some(PathBuf::from(v)),
            _ => bail!("unknown option {flag}"),
        }
    }
    Ok(a)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}

fn run() -> Result<()> {
    let a = parse()?;
    let bytes = std::fs::read(&a.puzzle).with_context(|| format!("reading {}", a.puzzle.display()))?;
    let mut puzzle = format::read_puzzle(&bytes).with_context(|| format!("parsing {}", a.puzzle.display()))?;
    if a.fix_corner {
        puzzle = puzzle.with_fixed_corner().context("--fix-corner needs a square puzzle without hints")?;
    }
    rayon::ThreadPoolBuilder::new().num_threads(a.threads.max(1)).build_global()?;
    let cfg = MapConfig {
        kind: if a.dm { concur::batch::MapKind::Dm } else { concur::batch::MapKind::Rrr },
        beta: a.beta,
        all_trials: true,
        no_cycle_restart: a.no_cycle_restart,
        restart_stall: a.restart_stall,
        kick: a.kick,
        join_weights: a.join_weights,
        adapt: a.adapt,
        reduced_costs: a.reduced_costs,
        run: MapRun { trials: a.trials, max_iters: a.max_iters, seed: a.seed, ..Default::default() },
        ..Default::default()
    };
    match a.cmd.as_str() {
        "dist" => dist(&a, &puzzle, cfg),
        "trace" => trace(&a, &puzzle, cfg),
        "prune" => prune(&a, &puzzle),
        c => bail!("unknown command {c} (dist, trace or prune)"),
    }
}

fn quantile(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] as f64 + (pos - lo as f64) * (sorted[hi] as f64 - sorted[lo] as f64)
}

fn dist(a: &Args, puzzle: &Puzzle, cfg: MapConfig) -> Result<()> {
    let mut map = F1Map::new(puzzle, cfg.clone())?;
    let r = map.run(|_| {});
    let mut out: Box<dyn Write> = match &a.out {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
        None => Box::new(std::io::sink()),
    };
    writeln!(
        out,
        "{}",
        serde_json::json!({"puzzle": a.puzzle.display().to_string(), "method": if a.dm { "dm" } else { "rrr" }, "beta": cfg.beta,
            "trials": cfg.run.trials, "max_iters": cfg.run.max_iters, "seed": cfg.run.seed, "cycle_restart": !cfg.no_cycle_restart,
            "restart_stall": cfg.restart_stall, "kick": cfg.kick, "join_weights": cfg.join_weights, "adapt": cfg.adapt, "reduced_costs": cfg.reduced_costs, "fix_corner": a.fix_corner, "threads": a.threads, "wall_s": r.wall_s, "trial_iterations": r.trial_iterations})
    )?;
    for (t, s) in r.trials.iter().enumerate() {
        writeln!(
            out,
            "{}",
            serde_json::json!({"trial": t, "solved_at": s.solved_at, "iterations": s.iterations,
                "best_score": s.best_score, "restarts": s.restarts,
                "stall_restarts": s.stall_restarts})
        )?;
    }
    out.flush()?;
    let mut solved: Vec<u64> = r.trials.iter().filter_map(|s| s.solved_at).collect();
    solved.sort_unstable();
    let unsolved = r.trials.len() - solved.len();
    summarize(&solved, unsolved, cfg.run.max_iters, r.wall_s, r.trial_iterations);
    Ok(())
}

/// Prints the distribution summary of run lengths (see the module docs).
fn summarize(solved: &[u64], unsolved: usize, budget: u64, wall_s: f64, trial_iterations: u64) {
    let n = solved.len() + unsolved;
    println!(
        "trials {n}, solved {} ({:.1}%), budget {budget}, wall {wall_s:.1} s, {:.0} it/s",
        solved.len(),
        100.0 * solved.len() as f64 / n as f64,
        trial_iterations as f64 / wall_s
    );
    if solved.is_empty() {
        return;
    }
    let qs: Vec<String> = [0.1, 0.25, 0.5, 0.75, 0.9].iter().map(|&q| format!("{:.0}", quantile(solved, q))).collect();
    let mean = solved.iter().sum::<u64>() as f64 / solved.len() as f64;
    let var = solved.iter().map(|&t| (t as f64 - mean).powi(2)).sum::<f64>() / solved.len() as f64;
    println!(
        "solved runs: min {} q10/q25/median/q75/q90 {} max {}; mean {mean:.0}, CV {:.2} (1 for an exponential; censored at the budget)",
        solved[0],
        qs.join("/"),
        solved[solved.len() - 1],
        var.sqrt() / mean
    );
    // Exponential with censoring at the budget: rate = solved / total time at risk.
    let exposure = solved.iter().sum::<u64>() as f64 + unsolved as f64 * budget as f64;
    let rate = solved.len() as f64 / exposure;
    // Kolmogorov-Smirnov distance between the empirical CDF (all n runs) and 1 - exp(-rate t),
    // over [0, budget].
    let mut ks = 0.0f64;
    for (i, &t) in solved.iter().enumerate() {
        let f = 1.0 - (-rate * t as f64).exp();
        ks = ks.max((f - i as f64 / n as f64).abs()).max(((i + 1) as f64 / n as f64 - f).abs());
    }
    // The same with a shift: exponential after the shortest run (a burn-in no run beats).
    let t0 = solved[0] as f64;
    let exposure0 = exposure - n as f64 * t0;
    let rate0 = solved.len() as f64 / exposure0;
    let mut ks0 = 0.0f64;
    for (i, &t) in solved.iter().enumerate() {
        let f = 1.0 - (-rate0 * (t as f64 - t0)).exp();
        ks0 = ks0.max((f - i as f64 / n as f64).abs()).max(((i + 1) as f64 / n as f64 - f).abs());
    }
    // Mean run length without restarts, estimated under the exponential fit.
    println!(
        "exponential fit (censored MLE): mean {:.0}; KS distance {ks:.3} (5% critical about {:.3}); shifted by {t0}: mean {:.0} KS {ks0:.3}",
        1.0 / rate,
        1.36 / (n as f64).sqrt(),
        1.0 / rate0
    );
    let curve = restart_curve(solved, unsolved);
    let (cut, work) = curve.iter().copied().min_by(|x, y| x.1.total_cmp(&y.1)).expect("not empty");
    let full = curve.last().expect("not empty");
    println!(
        "restart at a fixed cutoff: best cutoff {cut} costs {work:.0} iterations per solution; cutoff {} (the longest solved run) costs {:.0}",
        full.0, full.1
    );
    for q in [0.25, 0.5, 0.75] {
        let c = quantile(solved, q) as u64;
        if let Some(&(t, w)) = curve.iter().find(|p| p.0 >= c) {
            println!("  cutoff {t} (solved q{}): {w:.0} per solution", (q * 100.0) as u32);
        }
    }
}

/// Solutions of `puzzle` from a scan-count journal (`concur count --engine scan --journal`)
/// or a solution file.
fn load_solutions(path: &Path, puzzle: &Puzzle) -> Result<SolutionSet> {
    let mut boards = Vec::new();
    let rec = journal::read(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    if rec.plan.is_some() {
        for d in rec.done {
            for b in d.boards {
                let cells = b.iter().map(|&[p, r]| Placement { piece: p, rot: r as u8 }).collect();
                boards.push(Board { width: puzzle.width(), height: puzzle.height(), cells });
            }
        }
    } else {
        let bytes = std::fs::read(path)?;
        boards.push(format::read_solution(&bytes, puzzle)?);
    }
    SolutionSet::new(puzzle, &boards).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Cycle analysis of a window of boards (candidate ids) and iterates, oldest first.
struct CycleReport {
    distinct_boards: usize,
    exact_board_period: Option<usize>,
    near_lag: usize,
    near_hamming: f64,
    x_min_lag: usize,
    x_min_dist: f64,
    x_step: f64,
}

fn cycles(boards: &[Vec<u32>], xs: &[Vec<f32>]) -> CycleReport {
    let w = boards.len();
    let half = w / 2;
    let distinct_boards = boards.iter().map(|b| board_hash(b)).collect::<HashSet<_>>().len();
    let ham = |a: &[u32], b: &[u32]| a.iter().zip(b).filter(|(x, y)| x != y).count();
    let mut exact = None;
    let (mut near_lag, mut near_hamming) = (0, f64::INFINITY);
    for p in 1..=half {
        let mut sum = 0usize;
        for t in (w - half)..w {
            sum += ham(&boards[t], &boards[t - p]);
        }
        let mean = sum as f64 / half as f64;
        if sum == 0 && exact.is_none() {
            exact = Some(p);
        }
        if mean < near_hamming {
            (near_lag, near_hamming) = (p, mean);
        }
    }
    let d = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum::<f64>().sqrt();
    let last = &xs[w - 1];
    let (mut x_min_lag, mut x_min_dist) = (0, f64::INFINITY);
    for p in 1..w {
        let dd = d(last, &xs[w - 1 - p]);
        if dd < x_min_dist {
            (x_min_lag, x_min_dist) = (p, dd);
        }
    }
    let x_step = d(last, &xs[w - 2]);
    CycleReport { distinct_boards, exact_board_period: exact, near_lag, near_hamming, x_min_lag, x_min_dist, x_step }
}

/// Cells of each class (corner, edge, inner) where boards `a` and `b` differ.
fn by_class(puzzle: &Puzzle, a: &[Placement], b: &[Placement]) -> [usize; 3] {
    let mut out = [0; 3];
    for c in 0..a.len() {
        if a[c] != b[c] {
            out[class_index(puzzle, c)] += 1;
        }
    }
    out
}

fn class_index(puzzle: &Puzzle, c: usize) -> usize {
    match concur::puzzle::cell_class(puzzle.width(), puzzle.height(), c) {
        concur::puzzle::Class::Corner => 0,
        concur::puzzle::Class::Edge => 1,
        concur::puzzle::Class::Inner => 2,
    }
}

fn class_cells(puzzle: &Puzzle) -> [usize; 3] {
    let mut out = [0; 3];
    (0..puzzle.cells()).for_each(|c| out[class_index(puzzle, c)] += 1);
    out
}

fn trace(a: &Args, puzzle: &Puzzle, cfg: MapConfig) -> Result<()> {
    let sols = match &a.solutions {
        Some(p) => load_solutions(p, puzzle)?,
        None => bail!("trace needs --solutions (a scan-count journal or a solution file)"),
    };
    eprintln!("{} solutions (turned copies included)", sols.len());
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from("trace"));
    let mut csv = std::io::BufWriter::new(std::fs::File::create(format!("{}.csv", out.display()))?);
    let mut js = std::io::BufWriter::new(std::fs::File::create(format!("{}.jsonl", out.display()))?);
    writeln!(csv, "trial,iteration,score,best_score,gap,cur_cells,cur_moves,best_cells,best_moves,restarts")?;
    writeln!(
        js,
        "{}",
        serde_json::json!({"puzzle": a.puzzle.display().to_string(), "beta": cfg.beta, "seed": cfg.run.seed,
            "iters": a.max_iters, "every": a.every, "window": a.window, "solutions": sols.len(),
            "cycle_restart": !cfg.no_cycle_restart})
    )?;
    let max = puzzle.max_score();
    if a.baseline > 0 {
        // Random boards: P_P of uniformly random points (what a trial's first step sees).
        let mut bl = std::io::BufWriter::new(std::fs::File::create(format!("{}.baseline.csv", out.display()))?);
        writeln!(bl, "sample,score,cells,moves")?;
        let bcfg = MapConfig { run: MapRun { seed: cfg.run.seed ^ 0xba5e, ..cfg.run.clone() }, ..cfg.clone() };
        for i in 0..a.baseline {
            let mut tr = Tracer::new(puzzle, &bcfg, i)?;
            let s = tr.step();
            let n = sols.nearest(&tr.f1().placements(tr.board())).expect("a set");
            writeln!(bl, "{i},{},{},{}", s.score, n.cells, n.moves)?;
        }
        bl.flush()?;
    }
    let mut tail_csv = std::io::BufWriter::new(std::fs::File::create(format!("{}.tail.csv", out.display()))?);
    writeln!(tail_csv, "trial,iteration,score,gap,cells,moves,to_final_cells")?;
    for t in a.first_trial..a.first_trial + a.trials {
        let start = std::time::Instant::now();
        let mut tr = Tracer::new(puzzle, &cfg, t)?;
        let mut best_score = 0;
        let mut best_near = None;
        let mut best_board: Option<Vec<Placement>> = None;
        let mut ring_b: Vec<Vec<u32>> = Vec::with_capacity(a.window);
        let mut ring_x: Vec<Vec<f32>> = Vec::with_capacity(a.window);
        let mut seen = HashSet::new();
        let (mut min_cur_cells, mut min_cur_moves) = (usize::MAX, usize::MAX);
        // Cells differing from the nearest solution (by cells), per class (corner, edge,
        // inner), summed over the logged running boards, and of the final best board.
        let mut cur_by_class = [0usize; 3];
        let mut logged = 0usize;
        let mut gap_sum = 0.0f64;
        let mut gap_n = 0u64;
        let mut solved_at = None;
        let mut scores = vec![0u64; max + 1];
        let mut last_restart = 0;
        let mut tail: std::collections::VecDeque<(u64, usize, f32, Vec<Placement>)> = Default::default();
        while tr.iterations() < a.max_iters {
            let s = tr.step();
            let it = tr.iterations();
            if s.restarted {
                last_restart = it;
                ring_b.clear();
                ring_x.clear();
            }
            scores[s.score] += 1;
            seen.insert(board_hash(tr.board()));
            if s.gap.is_finite() && it > a.max_iters / 2 {
                gap_sum += s.gap as f64;
                gap_n += 1;
            }
            let improved = s.score > best_score;
            if improved {
                best_score = s.score;
                let placed = tr.f1().placements(tr.board());
                best_near = sols.nearest(&placed);
                best_board = Some(placed);
            }
            if a.max_iters - it < a.window as u64 {
                ring_b.push(tr.board().to_vec());
                ring_x.push(tr.x().to_vec());
            }
            let done = s.score == max;
            if a.tail > 0 {
                if tail.len() == a.tail {
                    tail.pop_front();
                }
                tail.push_back((it, s.score, s.gap, tr.f1().placements(tr.board())));
            }
            if it % a.every == 0 || done || it == 1 {
                let placed = tr.f1().placements(tr.board());
                let cur = sols.nearest(&placed).expect("a set");
                let by = by_class(puzzle, &placed, &sols.board(cur.by_cells));
                (0..3).for_each(|k| cur_by_class[k] += by[k]);
                logged += 1;
                min_cur_cells = min_cur_cells.min(cur.cells);
                min_cur_moves = min_cur_moves.min(cur.moves);
                let b = best_near.expect("set on the first step");
                writeln!(
                    csv,
                    "{t},{it},{},{best_score},{:.4},{},{},{},{},{}",
                    s.score,
                    s.gap,
                    cur.cells,
                    cur.moves,
                    b.cells,
                    b.moves,
                    tr.restarts()
                )?;
            }
            if done {
                solved_at = Some(it);
                break;
            }
        }
        // The last iterations before the end (the approach, for a solved trial): distance to
        // the nearest known solution and to the final board.
        let last = tail.back().map(|e| e.3.clone());
        for (it, score, gap, b) in &tail {
            let n = sols.nearest(b).expect("a set");
            let to_final = last.as_ref().map_or(0, |l| l.iter().zip(b).filter(|(x, y)| x != y).count());
            writeln!(tail_csv, "{t},{it},{score},{gap:.4},{},{},{to_final}", n.cells, n.moves)?;
        }
        tail_csv.flush()?;
        let cyc = (ring_b.len() >= 16).then(|| cycles(&ring_b, &ring_x));
        let b = best_near.unwrap_or_default();
        let summary = serde_json::json!({
            "trial": t, "solved_at": solved_at, "iterations": tr.iterations(), "restarts": tr.restarts(),
            "last_restart": last_restart, "wall_s": start.elapsed().as_secs_f64(),
            "best_score": best_score, "best_cells": b.cells, "best_moves": b.moves, "best_nearest": b.by_cells,
            "min_running_cells": min_cur_cells, "min_running_moves": min_cur_moves,
            "running_differ_by_class_mean": cur_by_class.map(|v| v as f64 / logged.max(1) as f64),
            "best_differ_by_class": best_board.as_ref().map(|b| by_class(puzzle, b, &sols.board(best_near.unwrap_or_default().by_cells))),
            "class_cells": class_cells(puzzle),
            "distinct_boards": seen.len(),
            "mean_gap_second_half": gap_sum / gap_n.max(1) as f64,
            "score_histogram": scores,
            "window": cyc.as_ref().map(|c| serde_json::json!({
                "boards": ring_b.len(), "distinct_boards": c.distinct_boards,
                "exact_board_period": c.exact_board_period, "near_lag": c.near_lag,
                "near_mean_hamming": c.near_hamming, "x_nearest_lag": c.x_min_lag,
                "x_nearest_dist": c.x_min_dist, "x_last_step": c.x_step})),
        });
        writeln!(js, "{summary}")?;
        js.flush()?;
        csv.flush()?;
        eprintln!("{summary}");
    }
    Ok(())
}

/// Divide and concur with propagation, a round at a time: per trial and round, the pruned
/// candidates, and whether a known solution survives them.
fn prune(a: &Args, puzzle: &Puzzle) -> Result<()> {
    use concur::dc::{DcConfig, DcLayout, DcMap, Layout};
    let sols = match &a.solutions {
        Some(p) => load_solutions(p, puzzle)?,
        None => bail!("prune needs --solutions (a scan-count journal or a solution file)"),
    };
    let layout = Layout::new(puzzle, DcLayout::Hybrid);
    let sol_vars: Vec<Vec<u32>> = (0..sols.len())
        .map(|i| {
            let b = sols.board(i);
            (0..puzzle.cells()).map(|c| layout.variable_of(c, b[c]).expect("a solution's candidate")).collect()
        })
        .collect();
    let cfg = DcConfig {
        layout: DcLayout::Hybrid,
        propagate: Some(a.tau),
        beta: a.beta,
        all_trials: true,
        run: MapRun { trials: a.trials, max_iters: 0, seed: a.seed, ..Default::default() },
        ..concur::dc::DcOptions::default().config(concur::batch::MapRun::default())
    };
    let mut map = DcMap::new(puzzle, cfg)?;
    let round = concur::batch::ROUND;
    let (mut rounds, mut pruning, mut alive, mut pruned_total, mut solved) = (0u64, 0u64, 0u64, 0usize, 0usize);
    let mut pruned = HashSet::new();
    let mut it = 0;
    while it < a.max_iters {
        it = (it + round).min(a.max_iters);
        map.set_max_iters(it);
        map.run(|_| {});
        for t in 0..a.trials {
            let (iters, done) = map.trial_status(t);
            if done || iters < it {
                continue;
            }
            pruned.clear();
            pruned.extend(map.pruned(t).iter().copied());
            rounds += 1;
            if pruned.is_empty() {
                alive += 1;
                continue;
            }
            pruning += 1;
            pruned_total += pruned.len();
            alive += sol_vars.iter().any(|s| s.iter().all(|v| !pruned.contains(v))) as u64;
        }
    }
    for t in 0..a.trials {
        solved += map.trial_status(t).1 as usize;
    }
    let rounds_f = rounds.max(1) as f64;
    println!(
        "{} solutions; tau {}; {} trials x {} iterations: {solved} solved",
        sols.len(),
        a.tau,
        a.trials,
        a.max_iters
    );
    println!(
        "{rounds} (trial, round) pairs: {:.1}% prune something (mean {:.1} of {} candidates); a known solution survives the pruning in {:.1}%",
        100.0 * pruning as f64 / rounds_f,
        pruned_total as f64 / pruning.max(1) as f64,
        layout.vars(),
        100.0 * alive as f64 / rounds_f
    );
    Ok(())
}
