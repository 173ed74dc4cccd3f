//! The command-line definition: the `concur` subcommands and their flags, as clap parses
//! them. It is shared by the binary (`src/bin/concur.rs`, which parses, dispatches and prints)
//! and the docs test (`tests/docs.rs`, which parses every `concur ...` command in the docs
//! with it). The options of a solving method are the library's [`SolveSpec`], flattened in;
//! the checks and plans behind the other subcommands' flags are library constructors
//! ([`crate::backend::bench::BenchOptions::from_request`], [`crate::ladder::Request`]).
//!
//! The argument structs of the subcommands carry no doc comments of their own: clap would
//! take one as the subcommand's about text in place of the variant's.

use crate::backend::BackendChoice;
use crate::ladder::Shard;
use crate::search::backtrack::CellOrder;
use crate::search::scan::CountEngine;
use crate::solve::SolveSpec;
use crate::verify::Consistency;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "concur", version, about = "Iterated maps (RRR, divide and concur) for edge-matching puzzles")]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant, reason = "parsed once per process")]
pub enum Cmd {
    /// Solve a puzzle; exit 0 when a verified solution is found, 1 when not.
    Solve(SolveArgs),
    /// CPU vs GPU throughput of every kernel and of whole iterations (trial-iterations/s,
    /// GB/s of state traffic), on generated puzzles. By default a short plan chosen from the
    /// adapter found (about a minute); `--full` for the whole sweep.
    Bench(BenchArgs),
    /// Check a solution exactly; exit 0 when valid, 1 when not. Prints the score either way.
    Verify {
        puzzle: PathBuf,
        /// A solution in Brendan Owen's format (or use --state).
        #[arg(required_unless_present = "state")]
        solution: Option<PathBuf>,
        /// Check a fixed-point certificate written by `solve --dump-state` instead: recompute
        /// both projections from x, the gap, and verify the decoded board exactly.
        #[arg(long, conflicts_with = "solution")]
        state: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Generate a puzzle with a planted solution, as in Brendan Owen's benchmark sets.
    Generate(GenerateArgs),
    /// Count solutions by complete search (every one verified); on square boards also up to
    /// turning the whole board.
    Count(CountArgs),
    /// Run a benchmark ladder: one JSON line per finished run in DIR, sharded, resumable.
    Ladder(LadderArgs),
    /// Merge ladder results and write a Markdown table (fraction solved, Kaplan-Meier medians and
    /// quartiles of seconds and work with unsolved runs censored, bootstrap intervals), growth
    /// fits, and SVG plots (run-time distributions per size, medians against area).
    Report {
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Draw a board as SVG, with mismatched joins marked.
    Render {
        puzzle: PathBuf,
        solution: PathBuf,
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
    },
    /// Generate a 5x5 puzzle, solve it, draw the board and print the statistics.
    Demo {
        #[arg(long, default_value_t = 5)]
        size: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

#[derive(Args)]
pub struct SolveArgs {
    pub puzzle: PathBuf,
    /// The method and its options: the library's spec, shared with the ladder.
    #[command(flatten)]
    pub spec: SolveSpec,
    /// Write a fixed-point certificate (JSON: x, both projections, gap, board) of the solving
    /// trial into this folder, as trial-T.json.
    #[arg(long, value_name = "DIR")]
    pub dump_state: Option<PathBuf>,
    /// With --dump-state: a certificate for every trial, solved or not.
    #[arg(long, requires = "dump_state")]
    pub dump_all: bool,
    /// Where the map runs (rrr, dm, dc): auto takes a hardware GPU when there is one and
    /// falls back to the CPU, saying which on stderr; gpu fails without a usable adapter.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// GPU adapter: the first whose name contains this (case-insensitive); `all`: every
    /// hardware adapter, an F1 batch's trials split over them (the JSON's `devices` gives
    /// each one's share and rate).
    #[arg(long)]
    pub adapter: Option<String>,
    /// Write the solution (Brendan Owen's format) here.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Print one JSON object instead of the board and text statistics.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Board sizes, comma separated (default: from the plan).
    #[arg(long, value_delimiter = ',')]
    pub sizes: Option<Vec<String>>,
    /// Batch sizes (trials), comma separated (default: from the plan).
    #[arg(long, value_delimiter = ',')]
    pub batches: Option<Vec<usize>>,
    /// Formulations: f1 (RRR in edge-colour space), dc (divide and concur); `scan` adds the
    /// row scan's rows (placements per second on one core at 7x7, 8x8 and 16x16, in the
    /// rate column), e.g. `--formulations f1,dc,scan` for both in one table.
    #[arg(long, value_delimiter = ',', default_value = "f1,dc")]
    pub formulations: Vec<String>,
    /// Which backends to measure: cpu, gpu or both (default: from the plan).
    #[arg(long, value_delimiter = ',')]
    pub backends: Option<Vec<BackendChoice>>,
    /// The full sweep: 5x5, 8x8 and 16x16 at 1 to 16,384 trials on the CPU and the GPU
    /// (tens of minutes); explicit lists still override it.
    #[arg(long)]
    pub full: bool,
    /// Time budget per measurement, seconds.
    #[arg(long, default_value_t = 0.5)]
    pub budget: f64,
    /// Skip a size and batch whose state exceeds this many GiB.
    #[arg(long, default_value_t = 8.0)]
    pub max_gib: f64,
    /// Cap the trials per device chunk of the F2 GPU rows (default: as many as fit).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub dc_chunk_trials: Option<u64>,
    #[arg(long)]
    pub adapter: Option<String>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct GenerateArgs {
    #[arg(long)]
    pub width: usize,
    #[arg(long)]
    pub height: usize,
    /// Colours for joins along the rim (default: Brendan Owen's table).
    #[arg(long)]
    pub frame_colors: Option<usize>,
    /// Colours for all other joins (default: Brendan Owen's table).
    #[arg(long)]
    pub inner_colors: Option<usize>,
    #[arg(long)]
    pub seed: u64,
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Also write the planted solution here.
    #[arg(long)]
    pub solution: Option<PathBuf>,
    /// Keep drawing until the puzzle has exactly one solution (up to turning the board),
    /// proven by a complete count.
    #[arg(long)]
    pub unique: bool,
    /// Draws to try with --unique before giving up.
    #[arg(long, default_value_t = 200)]
    pub unique_attempts: u64,
    /// Node budget of each counting search with --unique.
    #[arg(long, default_value_t = 2_000_000)]
    pub unique_nodes: u64,
}

#[derive(Args)]
pub struct CountArgs {
    pub puzzle: PathBuf,
    /// Stop after this many solutions.
    #[arg(long)]
    pub limit: Option<u64>,
    #[arg(long, value_enum, default_value_t = Consistency::Ac4)]
    pub ac: Consistency,
    #[arg(long, value_enum, default_value_t = CellOrder::MrvDegree)]
    pub order: CellOrder,
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// `ac`: the arc-consistent backtracker; `scan`: row-scan tables with turn symmetry,
    /// on every core (`--threads`), for large trees.
    #[arg(long, value_enum, default_value_t = CountEngine::Ac)]
    pub engine: CountEngine,
    /// Worker threads of `--engine scan` (default: every core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// With `--engine scan`, enumerate every corner piece in the top-left corner instead of
    /// one (no use of the turn symmetry).
    #[arg(long)]
    pub no_symmetry: bool,
    /// With `--engine scan` and the turn symmetry: random probes per candidate tree (corner
    /// piece and scan direction) when choosing the smallest.
    #[arg(long, default_value_t = 20_000)]
    pub probes: u64,
    /// With `--engine scan`: append every finished subtree to this JSON-lines journal, and
    /// resume from it: subtrees it records as finished are not walked again.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// With `--engine scan`: cut the tree into at least this many subtrees (default: 256
    /// per thread). Set it when one count is split across machines.
    #[arg(long, default_value_t = 0)]
    pub tasks: usize,
    /// With `--engine scan`: walk the subtrees from the last one backwards (a second
    /// machine on the same journal plan meets the first in the middle).
    #[arg(long)]
    pub reverse: bool,
    /// Do not count: estimate the size of the complete tree of `--engine ac` from this
    /// many random probes (Knuth's estimator) and print that.
    #[arg(long)]
    pub estimate: Option<u64>,
    /// Seed of the random probes of `--estimate`.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct LadderArgs {
    pub config: PathBuf,
    #[arg(long)]
    pub out: PathBuf,
    /// Run only shard K of N (1-based): disjoint shares whose union is the whole ladder.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Skip runs already on file in DIR (the unsharded results or any shard's).
    #[arg(long)]
    pub resume: bool,
    /// Run only the instances of at most this many cells (a part of the ladder).
    #[arg(long)]
    pub max_cells: Option<usize>,
    /// Run only the methods of these labels, comma-separated (a part of the ladder).
    #[arg(long, value_delimiter = ',')]
    pub methods: Vec<String>,
    /// Run only the first N runs of each method and instance (a shallow pass; a later
    /// --resume deepens it).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Folder that relative instance paths start from (default: $CONCUR_PUZZLES or
    /// ../shared/puzzles).
    #[arg(long)]
    pub puzzles: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Start no run after SECS seconds from now, and cut each run's time limit to end by
    /// then (the run records the limit it ran under), so a stop at a known time loses
    /// nothing.
    #[arg(long, value_name = "SECS")]
    pub deadline: Option<f64>,
}
