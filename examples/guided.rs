//! Map-guided search against the same search with a random value order (BENCHMARKS.md, "The
//! map at 7x7: the target and the levers", "Lever: map-guided search").
//!
//! ```sh
//! cargo run --release --example guided -- P.txt RUNS EVERY NODES SECONDS > out.jsonl
//! ```
//!
//! For each seed 1..=RUNS, both arms run with the same seed, one after the other. The
//! `map` arm orders values by the map's weights, the `random` arm at random; otherwise both
//! are the same protocol ([`concur::guided::GuidedConfig`]). A search every EVERY iterations
//! gets NODES nodes, and a run ends at SECONDS. One JSON line per run goes to stdout, a
//! summary per arm to stderr.

use anyhow::{Context, Result};
use concur::guided::{GuidedConfig, guided};
use concur::puzzle::format;
use std::time::Duration;

fn main() -> Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: guided P.txt RUNS EVERY NODES SECONDS";
    let path = a.first().context(usage)?;
    let num = |i: usize| -> Result<f64> { Ok(a.get(i).context(usage)?.parse()?) };
    let (runs, every, nodes, secs) = (num(1)? as u64, num(2)? as u64, num(3)? as u64, num(4)?);
    let puzzle = format::read_puzzle(&std::fs::read(path).with_context(|| format!("reading {path}"))?)?;
    for arm in ["map", "random"] {
        let (mut solved, mut walls, mut by) = (0, Vec::new(), std::collections::BTreeMap::new());
        let (mut solved_nodes, mut searches) = (Vec::new(), 0u64);
        for seed in 1..=runs {
            let cfg = GuidedConfig {
                seed,
                every,
                nodes,
                use_map: arm == "map",
                time_limit: Some(Duration::from_secs_f64(secs)),
                ..Default::default()
            };
            let r = guided(&puzzle, &cfg)?;
            println!(
                "{}",
                serde_json::json!({"puzzle": path, "arm": arm, "seed": seed, "every": every, "nodes_per_search": nodes,
                    "time_limit_s": secs, "result": r})
            );
            searches += r.searches;
            if r.solved {
                solved_nodes.push(r.nodes);
                solved += 1;
                walls.push(r.wall_s);
                *by.entry(r.mechanism.map(|m| m.as_str()).unwrap_or("search (random order)")).or_insert(0) += 1;
            }
        }
        walls.sort_by(f64::total_cmp);
        solved_nodes.sort_unstable();
        eprintln!(
            "{arm:>6}: solved {solved}/{runs} within {secs} s, by {by:?}, {searches} searches; solved runs' wall times {:?} and nodes {solved_nodes:?}",
            walls.iter().map(|w| (w * 1000.0).round() / 1000.0).collect::<Vec<_>>()
        );
    }
    Ok(())
}
