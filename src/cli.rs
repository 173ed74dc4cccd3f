//! The command-line definition: the `concur` subcommands and their flags, as clap parses
//! them. It is shared by the binary (`src/bin/concur.rs`, which parses, dispatches and prints)
//! and the docs test (`tests/docs.rs`, which parses every `concur ...` command in the docs
//! with it). The options of a solving method are the library's [`SolveSpec`], flattened in;
//! the flags of `bench` and `ladder` are the library's requests ([`BenchRequest`],
//! [`Request`]), which the library's constructors check
//! ([`crate::bench::BenchOptions::from_request`], [`Request::check`]).
//!
//! The argument structs defined here carry no doc comments of their own, so the variants'
//! give the subcommands' about texts.

use crate::backend::BackendChoice;
use crate::bench::BenchRequest;
use crate::ladder::Request;
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
    Ladder(Request),
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
    /// The plan's lists and limits, checked by
    /// [`BenchOptions::from_request`](crate::bench::BenchOptions::from_request).
    #[command(flatten)]
    pub request: BenchRequest,
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
