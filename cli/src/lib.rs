//! The command-line crate's definition of the command line: the `concur` subcommands
//! and their flags, as clap parses them. It is shared by the binary (`cli/src/main.rs`,
//! which parses, dispatches and prints) and the docs test (`tests/docs.rs`, which parses every
//! `concur ...` command in the docs with it).
//!
//! `concur solve`'s flags ([`solve::SolveArgs`], its run flags made from the options tables)
//! become the library's typed run through the
//! same keys as a ladder entry ([`concur::solve::SolveSpec::from_given`]); the flags of `bench`
//! and `ladder` are the library's requests ([`BenchRequest`], [`Request`]), which the
//! library's constructors check ([`concur_lab::bench::BenchOptions::from_request`],
//! [`Request::check`]). Parse with [`parse_from`] (or [`command`]); each of `solve`'s run
//! flags ends its help with its default and the methods that use it, read from the library.
//!
//! The argument structs defined here carry no doc comments of their own, so the variants'
//! give the subcommands' about texts.

pub mod solve;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use concur::search::backtrack::CellOrder;
use concur::search::scan::CountEngine;
use concur::verify::{AllDiff, Consistency};
use concur_lab::bench::BenchRequest;
use concur_lab::ladder::Request;
use std::path::PathBuf;

pub use solve::SolveArgs;

/// The command line: one subcommand.
#[derive(Parser)]
#[command(
    name = "concur",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("CONCUR_COMMIT"), ")"),
    about = "Iterated maps (RRR, divide and concur) for edge-matching puzzles"
)]
pub struct Cli {
    /// The subcommand and its flags.
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The subcommands, each with its flags.
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
    Verify(VerifyArgs),
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
    Report(ReportArgs),
    /// Draw a board as SVG, with mismatched joins marked.
    Render(RenderArgs),
    /// Generate a 5x5 puzzle, solve it, draw the board and print the statistics.
    Demo(DemoArgs),
}

/// `concur verify`'s flags.
#[derive(Args)]
pub struct VerifyArgs {
    /// The puzzle.
    pub puzzle: PathBuf,
    /// A solution in Brendan Owen's format, or a viewer link (e2.bucas.name or eternity2.dev),
    /// in a file or given as it is (or use --state).
    #[arg(required_unless_present = "state")]
    pub solution: Option<PathBuf>,
    /// Check a fixed-point certificate written by `solve --dump-state` instead: recompute both
    /// projections from x, the gap, and verify the decoded board exactly.
    #[arg(long, conflicts_with = "solution")]
    pub state: Option<PathBuf>,
    /// Print one JSON object (and an error as one).
    #[arg(long)]
    pub json: bool,
}

/// `concur report`'s flags.
#[derive(Args)]
pub struct ReportArgs {
    /// Result folders (or JSONL files) of ladders, merged.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The folder the report, its plots and summary.json go to.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Print the report's summary as one JSON object instead of the Markdown.
    #[arg(long)]
    pub json: bool,
}

/// `concur render`'s flags.
#[derive(Args)]
pub struct RenderArgs {
    /// The puzzle.
    pub puzzle: PathBuf,
    /// The board: a solution in Brendan Owen's format, or a viewer link.
    pub solution: PathBuf,
    /// The SVG file to write.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
}

/// `concur demo`'s flags.
#[derive(Args)]
pub struct DemoArgs {
    /// The board's side.
    #[arg(long, default_value_t = 5)]
    pub size: usize,
    /// The seed of the puzzle and of the map.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `concur bench`'s flags.
#[derive(Args)]
pub struct BenchArgs {
    /// The plan's lists and limits, checked by
    /// [`BenchOptions::from_request`](concur_lab::bench::BenchOptions::from_request).
    #[command(flatten)]
    pub request: BenchRequest,
    /// One JSON object per line instead of a table (and an error as one).
    #[arg(long)]
    pub json: bool,
}

/// `concur generate`'s flags.
#[derive(Args)]
pub struct GenerateArgs {
    /// The board's width in cells.
    #[arg(long)]
    pub width: usize,
    /// The board's height in cells.
    #[arg(long)]
    pub height: usize,
    /// Colours for joins along the rim (default: Brendan Owen's table).
    #[arg(long)]
    pub frame_colors: Option<usize>,
    /// Colours for all other joins (default: Brendan Owen's table).
    #[arg(long)]
    pub inner_colors: Option<usize>,
    /// The seed: the same options and seed give the same puzzle.
    #[arg(long)]
    pub seed: u64,
    /// The puzzle file to write (Brendan Owen's text).
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
    #[arg(long, default_value_t = 200, requires = "unique")]
    pub unique_attempts: u64,
    /// Node budget of each counting search with --unique.
    #[arg(long, default_value_t = 2_000_000, requires = "unique")]
    pub unique_nodes: u64,
}

/// `concur count`'s flags.
#[derive(Args)]
pub struct CountArgs {
    /// The puzzle.
    pub puzzle: PathBuf,
    /// Stop after this many solutions.
    #[arg(long)]
    pub limit: Option<u64>,
    /// The arc-consistent engine's propagation (`--engine ac`).
    #[arg(long, value_enum, default_value_t = Consistency::Ac4)]
    pub ac: Consistency,
    /// The arc-consistent engine's cell ordering (`--engine ac`).
    #[arg(long, value_enum, default_value_t = CellOrder::MrvDegree)]
    pub order: CellOrder,
    /// The arc-consistent engine's all-different on pieces (`--engine ac`): values, or
    /// regin (Régin's matching filter; with --ac fc, ac3 or ac2001).
    #[arg(long, value_enum, default_value_t = AllDiff::Values)]
    pub alldiff: AllDiff,
    /// Make the root singleton arc consistent before the count (`--engine ac`; with --ac
    /// fc, ac3 or ac2001): the preprocessing rung above arc consistency.
    #[arg(long)]
    pub sac: bool,
    /// Make the root partially path consistent before the count (`--engine ac`; with --ac
    /// fc, ac3 or ac2001): path consistency on the triangles of the grid with one diagonal a
    /// 2x2 block (after --sac when both are given).
    #[arg(long)]
    pub pc: bool,
    /// Keep every 2x2 block consistent on colours after each propagation (`--engine ac`;
    /// with --ac fc, ac3 or ac2001): the maintained form of the partial path consistency.
    #[arg(long)]
    pub blocks: bool,
    /// Wall-clock limit in seconds: the count stops there with what it has (a journal keeps
    /// every finished subtree).
    #[arg(long, value_name = "SECS")]
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
    /// Do not count: run every rung of the consistency ladder (AC-1, AC-3, AC-2001, AC-4,
    /// AC-3 with Régin's filter, SAC, path consistency) from the root's full domains, and print
    /// each one's arc revisions, support checks, removals, candidates left and seconds.
    #[arg(long)]
    pub root_work: bool,
    /// Seed of the random probes of `--estimate`.
    #[arg(long, default_value_t = 1, requires = "estimate")]
    pub seed: u64,
    /// Print one JSON object (and an error as one).
    #[arg(long)]
    pub json: bool,
}

impl CountArgs {
    /// The flags given that the chosen engine (or `--estimate`) does not use, as their flag
    /// names: each is refused.
    pub fn unused(&self, matches: &clap::ArgMatches) -> Vec<&'static str> {
        use clap::parser::ValueSource::CommandLine;
        let given = |id: &str| matches.value_source(id) == Some(CommandLine);
        let scan_only = ["threads", "no_symmetry", "probes", "journal", "tasks", "reverse"];
        let ac_only = ["ac", "order", "alldiff", "sac", "pc", "blocks"];
        let mut out = Vec::new();
        let (estimate, scan) = (self.estimate.is_some(), self.engine == CountEngine::Scan);
        for id in scan_only {
            if given(id) && (!scan || estimate) {
                out.push(id);
            }
        }
        for id in ac_only {
            if given(id) && scan {
                out.push(id);
            }
        }
        for id in ["limit", "time_limit"] {
            if given(id) && estimate {
                out.push(id);
            }
        }
        if self.root_work {
            let counting =
                ["limit", "time_limit", "ac", "order", "alldiff", "sac", "pc", "blocks", "engine", "estimate"];
            out.extend(scan_only.into_iter().chain(counting).filter(|id| given(id)));
        }
        out
    }
}

/// The whole command line, with `solve`'s run flags annotated ([`solve::annotate`]).
pub fn command() -> clap::Command {
    Cli::command().mut_subcommand("solve", solve::annotate)
}

/// Parses `args` (the program's name first): the parsed flags and the matches they came from
/// (for the value source of each flag). The annotations of [`command`] change only the help
/// text, so the plain command parses, and the annotated one is built only to print a help.
pub fn parse_from<I, T>(args: I) -> Result<(Cli, clap::ArgMatches), clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::error::ErrorKind;
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let matches = match Cli::command().try_get_matches_from(&args) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) => {
            command().try_get_matches_from(&args)?
        }
        Err(e) => return Err(e),
    };
    let cli = Cli::from_arg_matches(&matches)?;
    Ok((cli, matches))
}
