//! What the warm-started assignments of RRR do per iteration (issue: RRR per core).
//!
//! ```sh
//! cargo run --release --example assign_stats -- P.txt [ITERS] [TRIALS]
//! ```
//!
//! Runs RRR at its defaults for ITERS iterations (default 20,000) on TRIALS trials (default
//! 1). Per class (corner, edge, inner) and solve it prints how many rows lost their column
//! at the warm start, how often the warm start gave up for a cold one, the row-reduction
//! steps, and the shortest augmenting paths with the rows they scanned. One JSON line per
//! class follows the table.

use anyhow::{Context, Result};
use concur::batch::MapRun;
use concur::f1::map::{F1Map, MapConfig};
use concur::puzzle::format;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().context("usage: assign_stats P.txt [ITERS] [TRIALS]")?;
    let iters: u64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(20_000);
    let trials: usize = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let puzzle = format::read_puzzle(&std::fs::read(path).with_context(|| format!("reading {path}"))?)?;
    let cfg = MapConfig {
        all_trials: true,
        no_cycle_restart: true,
        run: MapRun { trials, max_iters: iters, ..Default::default() },
        ..Default::default()
    };
    let mut map = F1Map::new(&puzzle, cfg)?;
    let r = map.run(|_| {});
    println!(
        "{}x{}: {} trial-iterations, best {}/{}",
        puzzle.width(),
        puzzle.height(),
        r.trial_iterations,
        r.best_score,
        r.max_score
    );
    println!("    n   solves  free rows/warm  cold fallback  ARR steps/solve  paths/solve  rows/path");
    let mut lines = Vec::new();
    for (n, s) in map.assign_stats() {
        let per = |x: u64| x as f64 / s.solves.max(1) as f64;
        println!(
            "{n:>5} {:>8} {:>15.2} {:>13.1}% {:>16.1} {:>12.2} {:>10.1}",
            s.solves,
            s.warm_free_rows as f64 / s.warm.max(1) as f64,
            100.0 * s.cold_fallbacks as f64 / s.warm.max(1) as f64,
            per(s.arr_steps),
            per(s.augmentations),
            s.scanned_rows as f64 / s.augmentations.max(1) as f64,
        );
        lines.push(serde_json::json!({"size": format!("{}x{}", puzzle.width(), puzzle.height()), "n": n, "stats": s}));
    }
    for l in lines {
        println!("{l}");
    }
    Ok(())
}
