//! AC-3 vs AC-2001 vs AC-4 support counts vs forward checking inside the same searches.
//!
//! - `solve/6x6`: time to the first solution of Brendan Owen's set 1 6x6, four seeds in a row
//!   (the same node counts for AC-3 and AC-2001: they reach the same fixed points).
//! - `slice/8x8`: a fixed 100,000-node slice of the set 1 8x8 search, for nodes/s deep in a
//!   hard tree.
//!
//! Falls back to generated puzzles of the same sizes when the shared sets are absent.
use concur::puzzle::{Puzzle, format, generate};
use concur::search::backtrack::{self, BacktrackConfig};
use concur::verify::Consistency;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::path::PathBuf;
use std::time::Duration;

fn load(w: usize, h: usize) -> Puzzle {
    let dir = std::env::var_os("CONCUR_PUZZLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/puzzles"));
    let path = dir.join(format!("brendan_owen/pieces_set_1/pieces_{w:02}x{h:02}.txt"));
    match std::fs::read(&path) {
        Ok(bytes) => format::read_puzzle(&bytes).expect("valid puzzle"),
        Err(_) => {
            let opts =
                generate::GenerateOptions { width: w, height: h, frame_colors: None, inner_colors: None, seed: 1 };
            generate::generate(&opts).expect("generated").0
        }
    }
}

const KINDS: [(&str, Consistency); 4] =
    [("fc", Consistency::Fc), ("ac3", Consistency::Ac3), ("ac2001", Consistency::Ac2001), ("ac4", Consistency::Ac4)];

fn propagate(c: &mut Criterion) {
    let p6 = load(6, 6);
    let mut g = c.benchmark_group("solve");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    for (name, consistency) in KINDS {
        let run = || {
            let mut nodes = 0;
            for seed in 1..=4 {
                let cfg = BacktrackConfig { consistency, seed, ..Default::default() };
                let backtrack::BacktrackSolve { board: sol, stats, .. } = backtrack::solve(&p6, cfg);
                assert!(sol.is_some());
                nodes += stats.nodes;
            }
            nodes
        };
        let nodes = run();
        eprintln!("solve/6x6/{name}: {nodes} nodes for four seeds");
        g.throughput(Throughput::Elements(nodes));
        g.bench_function(BenchmarkId::new("6x6", name), |b| b.iter(run));
    }
    g.finish();

    let p8 = load(8, 8);
    let mut g = c.benchmark_group("slice");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    let slice = 100_000;
    g.throughput(Throughput::Elements(slice));
    for (name, consistency) in KINDS {
        g.bench_function(BenchmarkId::new("8x8", name), |b| {
            b.iter(|| {
                let cfg = BacktrackConfig { consistency, seed: 1, max_nodes: Some(slice), ..Default::default() };
                backtrack::solve(&p8, cfg).stats.nodes
            })
        });
    }
    g.finish();
}

criterion_group!(benches, propagate);
criterion_main!(benches);
