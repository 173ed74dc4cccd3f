//! The rotation-table measurement (docs/consistency.md): the arc-consistent backtracker's
//! complete count with AC-3 revising by the engine's colour masks, candidate by candidate,
//! or candidate by candidate through the rotation table. Prints one JSON line: the nodes,
//! seconds and nanoseconds a node; run it under cachegrind for the instructions.
//!
//!     cargo build --release --example revise
//!     target/release/examples/revise PUZZLE masks|derive|table [NODES]
//!
//! With NODES the search stops there (Luby restarts, seed 1) instead of counting every
//! solution: for boards too large to count.

use concur::search::backtrack::{BacktrackConfig, Backtracker, CellOrder, Next};
use concur::verify::{Consistency, Revise};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || {
        eprintln!("usage: revise PUZZLE masks|derive|table [NODES]");
        ExitCode::from(2)
    };
    let (Some(path), Some(way)) = (args.first(), args.get(1)) else { return usage() };
    let revise = match way.as_str() {
        "masks" => Revise::Masks,
        "derive" => Revise::Derive,
        "table" => Revise::RotationTable,
        _ => return usage(),
    };
    let nodes = match args.get(2).map(|n| n.parse::<u64>()) {
        None => None,
        Some(Ok(n)) => Some(n),
        Some(Err(_)) => return usage(),
    };
    let puzzle = match std::fs::read(path)
        .map_err(|e| e.to_string())
        .and_then(|b| concur::puzzle::format::read_puzzle(&b).map_err(|e| e.to_string()))
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("revise: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let cfg = BacktrackConfig {
        consistency: Consistency::Ac3,
        order: CellOrder::MrvDegree,
        restarts: nodes.is_some(),
        randomize: nodes.is_some(),
        seed: 1,
        max_nodes: nodes,
        revise,
        ..Default::default()
    };
    let mut bt = Backtracker::new(&puzzle, cfg);
    let (ending, stats) = bt.run(|_| if nodes.is_some() { Next::Stop } else { Next::Continue });
    println!(
        "{}",
        serde_json::json!({
            "puzzle": path, "revise": way, "ending": format!("{ending:?}"), "nodes": stats.nodes,
            "solutions": stats.solutions, "revisions": stats.revisions, "removals": stats.removals,
            "seconds": stats.wall_s, "ns_per_node": stats.wall_s * 1e9 / stats.nodes.max(1) as f64,
        })
    );
    ExitCode::SUCCESS
}
