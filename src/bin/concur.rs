//! The `concur` command line: argument parsing and printing only.

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use concur::backend::{self, BackendChoice, Certify, bench};
use concur::batch;
use concur::certify;
use concur::ladder::{self, Shard};
use concur::limits::{self, MemoryBudget, OutputFile};
use concur::puzzle::format;
use concur::puzzle::generate::{GenerateOptions, generate};
use concur::puzzle::{Board, Puzzle};
use concur::report::{Method, SolveReport, draw_board};
use concur::search::backtrack::{self, CellOrder};
use concur::search::journal::JsonlJournal;
use concur::search::scan::{self, CountEngine, Journal, ScanOptions};
use concur::solve::{Event, SolveSpec};
use concur::verify::{self, Consistency};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "concur", version, about = "Iterated maps (RRR, divide and concur) for edge-matching puzzles")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant, reason = "parsed once per process")]
enum Cmd {
    /// Solve a puzzle; exit 0 when a verified solution is found, 1 when not.
    Solve(SolveArgs),
    /// CPU vs GPU throughput of every kernel and of whole iterations (trial-iterations/s,
    /// GB/s of state traffic), on generated puzzles. By default a short plan chosen from the
    /// adapter found (about a minute); `--full` for the whole sweep.
    Bench {
        /// Board sizes, comma separated (default: from the plan).
        #[arg(long, value_delimiter = ',')]
        sizes: Option<Vec<String>>,
        /// Batch sizes (trials), comma separated (default: from the plan).
        #[arg(long, value_delimiter = ',')]
        batches: Option<Vec<usize>>,
        /// Formulations: f1 (RRR in edge-colour space), dc (divide and concur); `scan` adds the
        /// row scan's rows (placements per second on one core at 7x7, 8x8 and 16x16, in the
        /// rate column), e.g. `--formulations f1,dc,scan` for both in one table.
        #[arg(long, value_delimiter = ',', default_value = "f1,dc")]
        formulations: Vec<String>,
        /// Which backends to measure: cpu, gpu or both (default: from the plan).
        #[arg(long, value_delimiter = ',')]
        backends: Option<Vec<BackendChoice>>,
        /// The full sweep: 5x5, 8x8 and 16x16 at 1 to 16,384 trials on the CPU and the GPU
        /// (tens of minutes); explicit lists still override it.
        #[arg(long)]
        full: bool,
        /// Time budget per measurement, seconds.
        #[arg(long, default_value_t = 0.5)]
        budget: f64,
        /// Skip a size and batch whose state exceeds this many GiB.
        #[arg(long, default_value_t = 8.0)]
        max_gib: f64,
        /// Cap the trials per device chunk of the F2 GPU rows (default: as many as fit).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        dc_chunk_trials: Option<u64>,
        #[arg(long)]
        adapter: Option<String>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
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
    Generate {
        #[arg(long)]
        width: usize,
        #[arg(long)]
        height: usize,
        /// Colours for joins along the rim (default: Brendan Owen's table).
        #[arg(long)]
        frame_colors: Option<usize>,
        /// Colours for all other joins (default: Brendan Owen's table).
        #[arg(long)]
        inner_colors: Option<usize>,
        #[arg(long)]
        seed: u64,
        #[arg(short = 'o', long = "output")]
        output: PathBuf,
        /// Also write the planted solution here.
        #[arg(long)]
        solution: Option<PathBuf>,
        /// Keep drawing until the puzzle has exactly one solution (up to turning the board),
        /// proven by a complete count.
        #[arg(long)]
        unique: bool,
        /// Draws to try with --unique before giving up.
        #[arg(long, default_value_t = 200)]
        unique_attempts: u64,
        /// Node budget of each counting search with --unique.
        #[arg(long, default_value_t = 2_000_000)]
        unique_nodes: u64,
    },
    /// Count solutions by complete search (every one verified); on square boards also up to
    /// turning the whole board.
    Count {
        puzzle: PathBuf,
        /// Stop after this many solutions.
        #[arg(long)]
        limit: Option<u64>,
        #[arg(long, value_enum, default_value_t = Consistency::Ac4)]
        ac: Consistency,
        #[arg(long, value_enum, default_value_t = CellOrder::MrvDegree)]
        order: CellOrder,
        #[arg(long)]
        time_limit: Option<f64>,
        /// `ac`: the arc-consistent backtracker; `scan`: row-scan tables with turn symmetry,
        /// on every core (`--threads`), for large trees.
        #[arg(long, value_enum, default_value_t = CountEngine::Ac)]
        engine: CountEngine,
        /// Worker threads of `--engine scan` (default: every core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// With `--engine scan`, enumerate every corner piece in the top-left corner instead of
        /// one (no use of the turn symmetry).
        #[arg(long)]
        no_symmetry: bool,
        /// With `--engine scan` and the turn symmetry: random probes per candidate tree (corner
        /// piece and scan direction) when choosing the smallest.
        #[arg(long, default_value_t = 20_000)]
        probes: u64,
        /// With `--engine scan`: append every finished subtree to this JSON-lines journal, and
        /// resume from it: subtrees it records as finished are not walked again.
        #[arg(long)]
        journal: Option<PathBuf>,
        /// With `--engine scan`: cut the tree into at least this many subtrees (default: 256
        /// per thread). Set it when one count is split across machines.
        #[arg(long, default_value_t = 0)]
        tasks: usize,
        /// With `--engine scan`: walk the subtrees from the last one backwards (a second
        /// machine on the same journal plan meets the first in the middle).
        #[arg(long)]
        reverse: bool,
        /// Do not count: estimate the size of the complete tree of `--engine ac` from this
        /// many random probes (Knuth's estimator) and print that.
        #[arg(long)]
        estimate: Option<u64>,
        /// Seed of the random probes of `--estimate`.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long)]
        json: bool,
    },
    /// Run a benchmark ladder: one JSON line per finished run in DIR, sharded, resumable.
    Ladder {
        config: PathBuf,
        #[arg(long)]
        out: PathBuf,
        /// Run only shard K of N (1-based): disjoint shares whose union is the whole ladder.
        #[arg(long)]
        shard: Option<Shard>,
        /// Skip runs already on file in DIR (the unsharded results or any shard's).
        #[arg(long)]
        resume: bool,
        /// Run only the instances of at most this many cells (a part of the ladder).
        #[arg(long)]
        max_cells: Option<usize>,
        /// Run only the methods of these labels, comma-separated (a part of the ladder).
        #[arg(long, value_delimiter = ',')]
        methods: Vec<String>,
        /// Run only the first N runs of each method and instance (a shallow pass; a later
        /// --resume deepens it).
        #[arg(long)]
        runs: Option<u64>,
        /// Folder that relative instance paths start from (default: $CONCUR_PUZZLES or
        /// ../shared/puzzles).
        #[arg(long)]
        puzzles: Option<PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Start no run after SECS seconds from now, and cut each run's time limit to end by
        /// then (the run records the limit it ran under), so a stop at a known time loses
        /// nothing.
        #[arg(long, value_name = "SECS")]
        deadline: Option<f64>,
    },
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
struct SolveArgs {
    puzzle: PathBuf,
    /// The method and its options: the library's spec, shared with the ladder.
    #[command(flatten)]
    spec: SolveSpec,
    /// Write a fixed-point certificate (JSON: x, both projections, gap, board) of the solving
    /// trial into this folder, as trial-T.json.
    #[arg(long, value_name = "DIR")]
    dump_state: Option<PathBuf>,
    /// With --dump-state: a certificate for every trial, solved or not.
    #[arg(long, requires = "dump_state")]
    dump_all: bool,
    /// Where the map runs (rrr, dm, dc): auto takes a hardware GPU when there is one and
    /// falls back to the CPU, saying which on stderr; gpu fails without a usable adapter.
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    backend: BackendChoice,
    /// GPU adapter: the first whose name contains this (case-insensitive); `all`: every
    /// hardware adapter, an F1 batch's trials split over them (the JSON's `devices` gives
    /// each one's share and rate).
    #[arg(long)]
    adapter: Option<String>,
    /// Write the solution (Brendan Owen's format) here.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Print one JSON object instead of the board and text statistics.
    #[arg(long)]
    json: bool,
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn load_puzzle(path: &Path) -> Result<Puzzle> {
    format::read_puzzle(&read(path)?).with_context(|| format!("{}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes an output checked before the work ([`OutputFile::check`]).
fn write_output(out: &mut OutputFile, text: &str) -> Result<()> {
    out.write(text.as_bytes()).with_context(|| format!("cannot write {}", out.path().display()))
}

fn time_limit(secs: Option<f64>) -> Result<Option<Duration>> {
    Ok(secs.map(|s| limits::seconds("--time-limit", s)).transpose()?)
}

/// Lines for the user that wait until every check before the work has passed, so that a
/// refused run says one line only.
#[derive(Default)]
struct Notes(Vec<String>);

impl Notes {
    fn push(&mut self, line: String) {
        self.0.push(line);
    }

    /// Prints the notes (on stderr) as the work starts.
    fn say(&mut self) {
        for line in self.0.drain(..) {
            eprintln!("{line}");
        }
    }
}

/// A thread count capped at the cores, with a note when capped.
fn cap_threads(flag: &str, threads: usize, notes: &mut Notes) -> usize {
    let (n, note) = limits::cap_threads(flag, threads);
    if let Some(note) = note {
        notes.push(note);
    }
    n
}

/// Parses the command line's spec, runs it through the library's one entry point
/// ([`concur::solve::solve`]) on the backend asked for, and prints and writes what it found.
fn solve(a: SolveArgs) -> Result<ExitCode> {
    let puzzle = load_puzzle(&a.puzzle)?;
    let mut spec = a.spec;
    spec.certify = match (&a.dump_state, a.dump_all) {
        (None, _) => Certify::None,
        (Some(_), false) => Certify::Solved,
        (Some(_), true) => Certify::All,
    };
    spec.check()?;
    // Before any work: every output writable, the threads within the cores, memory enough.
    let output = a.output.as_deref().map(OutputFile::check).transpose()?;
    if let Some(dir) = &a.dump_state {
        limits::output_dir(dir)?;
    }
    let mut notes = Notes::default();
    spec.threads = spec.threads.map(|t| cap_threads("--threads", t, &mut notes));
    let selected = concur::solve::pick_backend(&spec, a.backend, a.adapter.as_deref())?;
    if let Some(note) = selected.note {
        notes.push(note);
    }
    spec.preflight(&puzzle, selected.backend.as_ref())?;
    notes.say();
    let (max, trials) = (puzzle.max_score(), spec.maps.trials);
    let bar = match spec.method {
        Method::Rrr | Method::Dm | Method::Dc => progress_bar(spec.map_iters()),
        Method::Scan => {
            let bar = ProgressBar::new_spinner();
            bar.set_style(ProgressStyle::with_template("{spinner} [{elapsed}] {msg}").expect("static template"));
            bar
        }
        _ => ProgressBar::hidden(),
    };
    let shown = bar.clone();
    let solved = concur::solve::solve(&puzzle, &spec, selected.backend.as_ref(), &mut move |e| match e {
        Event::Map(p) => show(&shown, p, max, trials),
        Event::Scan(p) => {
            shown.set_message(format!(
                "{:.3e} nodes, {:.0} nodes/s, {} restarts, best depth {}",
                p.nodes as f64,
                p.nodes as f64 / p.elapsed_s.max(1e-9),
                p.restarts,
                p.best_depth
            ));
            shown.tick();
        }
    })?;
    bar.finish_and_clear();
    // A certificate that could not be made or written does not lose the run: its error is
    // reported after the results are printed.
    let mut after = solved.certificate_error.map(|e| anyhow::anyhow!(e));
    if let Some(dir) = &a.dump_state
        && let Err(e) = write_certificates(dir, &solved.certificates)
    {
        after = after.or(Some(e));
    }
    finish(&puzzle, solved.report, output, a.json, after)
}

fn progress_bar(max_iters: u64) -> ProgressBar {
    let bar = ProgressBar::new(max_iters);
    let template = if max_iters == u64::MAX {
        "{spinner} {pos} it per trial [{elapsed}] {msg}"
    } else {
        "{spinner} {pos}/{len} it per trial [{elapsed}] {msg}"
    };
    bar.set_style(ProgressStyle::with_template(template).expect("static template"));
    bar
}

fn show(bar: &ProgressBar, p: &batch::Progress, max: usize, trials: usize) {
    bar.set_position(p.iterations);
    let found = if p.solutions > 0 { format!(", {} solutions", p.solutions) } else { String::new() };
    bar.set_message(format!(
        "{:.0} it/s, best {}/{}, solved {}/{}{found}",
        p.trial_iterations as f64 / p.elapsed_s.max(1e-9),
        p.best_score,
        max,
        p.solved_trials,
        trials
    ));
}

/// Writes each certificate as `trial-T.json` in `dir`.
fn write_certificates(dir: &Path, certificates: &[(usize, certify::Certificate)]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (t, cert) in certificates {
        write(&dir.join(format!("trial-{t}.json")), &serde_json::to_string(cert)?)?;
    }
    Ok(())
}

fn with_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T> {
    match threads {
        None => Ok(f()),
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(n) => Ok(rayon::ThreadPoolBuilder::new().num_threads(n).build()?.install(f)),
    }
}

/// Exit status of a run stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
const INTERRUPTED: u8 = 130;

/// Ctrl-C or SIGTERM: the first asks every engine to stop as at a time limit, so the run still
/// verifies, writes and prints what it has (with `"interrupted": true`) and exits 130; a second
/// exits at once.
fn install_interrupt_handler() {
    let seen = std::sync::atomic::AtomicBool::new(false);
    // Without a handler (another one installed, or no signal support) a signal just ends the
    // process as before; nothing else depends on it.
    let _ = ctrlc::set_handler(move || {
        if seen.swap(true, std::sync::atomic::Ordering::SeqCst) {
            std::process::exit(i32::from(INTERRUPTED));
        }
        concur::interrupt::request();
        eprintln!("concur: interrupted; finishing what is done (again to quit at once)");
    });
}

/// The exit code of a run that did not reach its goal: 130 after a stop request, else 1.
fn unfinished() -> ExitCode {
    ExitCode::from(if concur::interrupt::requested() { INTERRUPTED } else { 1 })
}

/// Writes the board with `-o` and prints the report. Nothing found is lost to a failed write:
/// when the board cannot be written (a full disk), it is printed instead (in the JSON as
/// `"board"`, Brendan Owen's solution text, beside `"output_error"`), and the run then exits 2
/// with the reason, as it does after a certificate (`failed`) could not be written.
fn finish(
    puzzle: &Puzzle,
    mut report: SolveReport,
    output: Option<OutputFile>,
    json: bool,
    mut failed: Option<anyhow::Error>,
) -> Result<ExitCode> {
    if concur::interrupt::requested() {
        report.details.insert("interrupted".into(), serde_json::Value::Bool(true));
    }
    let link = report.board.as_ref().and_then(|b| format::viewer_link(puzzle, b));
    // In JSON the link is a field; in text it has a line of its own below the summary.
    if let (true, Some(l)) = (json, &link) {
        report.details.insert("viewer_link".into(), serde_json::Value::String(l.clone()));
    }
    let mut unsaved = None;
    if let (Some(mut out), Some(board)) = (output, report.board.as_ref()) {
        let text = format::write_solution(board)?;
        if let Err(e) = write_output(&mut out, &text) {
            failed = Some(anyhow::anyhow!("{e:#}; the board is printed instead"));
            unsaved = Some(text);
        }
    }
    if json {
        if let Some(text) = &unsaved {
            report.details.insert("board".into(), serde_json::Value::String(text.clone()));
        }
        if let Some(e) = &failed {
            report.details.insert("output_error".into(), format!("{e:#}").into());
        }
        println!("{}", serde_json::to_string(&report)?);
    } else {
        if let Some(board) = &report.board {
            print!("{}", draw_board(puzzle, board));
        }
        println!("{}", report.summary());
        if let Some(l) = &link {
            println!("viewer: {l}");
        }
        if let Some(text) = &unsaved {
            println!("the board in Brendan Owen's solution format (not written):");
            print!("{text}");
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(if report.solved { ExitCode::SUCCESS } else { unfinished() })
}

fn verify_state(puzzle: &Path, state: &Path, json: bool) -> Result<ExitCode> {
    let p = load_puzzle(puzzle)?;
    let text = read(state)?;
    let cert: certify::Certificate =
        serde_json::from_slice(&text).with_context(|| format!("{}: not a certificate", state.display()))?;
    let r = certify::check(&p, &cert).with_context(|| format!("{}", state.display()))?;
    if json {
        println!("{}", serde_json::to_string(&r)?);
    } else {
        println!(
            "{}: score {}/{}; gap {:.3e} ({} a fixed point within {:.0e}); board {} the one decoded from x",
            if r.certifies() { "valid" } else { "invalid" },
            r.verdict.score,
            r.verdict.max_score,
            r.gap,
            if r.fixed_point { "is" } else { "not" },
            r.tolerance,
            if r.board_matches_decoded { "is" } else { "is not" }
        );
        for reason in &r.reasons {
            eprintln!("  {reason}");
        }
    }
    Ok(if r.certifies() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn verify_cmd(puzzle: &Path, solution: &Path, json: bool) -> Result<ExitCode> {
    let p = load_puzzle(puzzle)?;
    let b = format::read_solution(&read(solution)?, &p).with_context(|| format!("{}", solution.display()))?;
    let v = verify::check(&p, &b);
    let link = format::viewer_link(&p, &b);
    if json {
        let mut out = serde_json::to_value(&v)?;
        if let (Some(o), Some(l)) = (out.as_object_mut(), &link) {
            o.insert("viewer_link".into(), serde_json::Value::String(l.clone()));
        }
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!("{}: score {}/{}", if v.valid { "valid" } else { "invalid" }, v.score, v.max_score);
        if let Some(l) = &link {
            println!("viewer: {l}");
        }
        for problem in &v.problems {
            eprintln!("  {problem}");
        }
    }
    Ok(if v.valid { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn demo(size: usize, seed: u64) -> Result<ExitCode> {
    let opts = GenerateOptions { width: size, height: size, frame_colors: None, inner_colors: None, seed };
    let (puzzle, _) = generate(&opts)?;
    let spec = SolveSpec { seed, max_iters: Some(200_000), ..Default::default() };
    let cfg = spec.map_config();
    println!(
        "generated a {size}x{size} puzzle (seed {seed}, {} colours); solving it with RRR (beta {}, {} trials)...",
        puzzle.num_colors() - 1,
        cfg.beta,
        cfg.trials
    );
    let bar = progress_bar(cfg.max_iters);
    let (shown, max) = (bar.clone(), puzzle.max_score());
    let solved = concur::solve::solve(&puzzle, &spec, &concur::backend::CpuBackend, &mut move |e| {
        if let Event::Map(p) = e {
            show(&shown, p, max, cfg.trials);
        }
    })?;
    bar.finish_and_clear();
    finish(&puzzle, solved.report, None, false, None)
}

fn generate_cmd(opts: GenerateOptions, output: &Path, solution: Option<&Path>) -> Result<ExitCode> {
    let mut out = OutputFile::check(output)?;
    let mut sol = solution.map(OutputFile::check).transpose()?;
    let (puzzle, board): (Puzzle, Board) = generate(&opts)?;
    write_output(&mut out, &format::write_puzzle(&puzzle))?;
    if let Some(sol) = &mut sol {
        write_output(sol, &format::write_solution(&board)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Parses the command line. A usage error is one line, as every other error is (the bare
/// command still shows the help); `--help` and `--version` print as usual.
fn parse() -> Result<std::result::Result<Cli, ExitCode>> {
    use clap::error::ErrorKind;
    match Cli::try_parse() {
        Ok(cli) => Ok(Ok(cli)),
        Err(e) if !e.use_stderr() || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            Ok(Err(ExitCode::from(if e.use_stderr() { 2 } else { 0 })))
        }
        Err(e) => {
            // clap's message without its usage lines, on one line.
            let text = e.render().to_string();
            let parts: Vec<String> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(|l| if l.starts_with("tip:") { format!("({l})") } else { l.to_string() })
                .collect();
            let line = parts.join(" ");
            anyhow::bail!("{}; see --help", line.trim_start_matches("error:").trim())
        }
    }
}

fn run() -> Result<ExitCode> {
    let cli = match parse()? {
        Ok(cli) => cli,
        Err(code) => return Ok(code),
    };
    match cli.cmd {
        Cmd::Solve(a) => solve(a),
        Cmd::Verify { puzzle, solution: Some(solution), state: None, json } => verify_cmd(&puzzle, &solution, json),
        Cmd::Verify { puzzle, state: Some(state), json, .. } => verify_state(&puzzle, &state, json),
        Cmd::Verify { .. } => anyhow::bail!("verify needs a SOLUTION or --state FILE"),
        Cmd::Generate {
            width,
            height,
            frame_colors,
            inner_colors,
            seed,
            output,
            solution,
            unique,
            unique_attempts,
            unique_nodes,
        } => {
            let opts = GenerateOptions { width, height, frame_colors, inner_colors, seed };
            if unique {
                let mut out = OutputFile::check(&output)?;
                let mut sol = solution.as_deref().map(OutputFile::check).transpose()?;
                // The counting search's tables, from a first draw (the draws are all alike).
                let (first, _) = generate(&opts)?;
                let board = format!("generate --unique of a {width}x{height} board");
                MemoryBudget::here()?.check_tables(&board, limits::tables(&first, true))?;
                let Some(u) = backtrack::generate_unique(&opts, unique_attempts, unique_nodes)? else {
                    if concur::interrupt::requested() {
                        eprintln!("concur: interrupted before a draw was proven unique");
                        return Ok(ExitCode::from(INTERRUPTED));
                    }
                    eprintln!(
                        "concur: gave up: none of {unique_attempts} draws was proven unique within {unique_nodes} nodes each; try more colours, --unique-attempts or --unique-nodes"
                    );
                    return Ok(ExitCode::from(1));
                };
                eprintln!("unique puzzle found after {} draw(s)", u.attempts);
                write_output(&mut out, &format::write_puzzle(&u.puzzle))?;
                if let Some(sol) = &mut sol {
                    write_output(sol, &format::write_solution(&u.solution)?)?;
                }
                return Ok(ExitCode::SUCCESS);
            }
            generate_cmd(opts, &output, solution.as_deref())
        }
        Cmd::Demo { size, seed } => demo(size, seed),
        Cmd::Ladder { config, out, shard, resume, max_cells, methods, runs, puzzles, threads, deadline } => {
            let deadline = match deadline {
                None => None,
                Some(d) if d.is_finite() && d > 0.0 && d < 1e9 => {
                    Some(std::time::Instant::now() + std::time::Duration::from_secs_f64(d))
                }
                Some(d) => anyhow::bail!("--deadline {d}: need a positive number of seconds"),
            };
            let text = read(&config)?;
            let text = std::str::from_utf8(&text).with_context(|| format!("{}: not text", config.display()))?;
            let cfg = ladder::parse_config(text).with_context(|| format!("{}", config.display()))?;
            let dir = puzzles
                .or_else(|| std::env::var_os("CONCUR_PUZZLES").map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("../shared/puzzles"));
            // Before any run: the threads within the cores, the results folder takes files.
            anyhow::ensure!(threads != Some(0), "--threads must be at least 1");
            // Every run is timed on one core: more workers than cores would slow them all and
            // skew the results, so a ladder refuses them rather than capping.
            if let Some(t) = threads.filter(|&t| t > limits::cores()) {
                anyhow::bail!(
                    "--threads {t} is more than the {} cores here; a ladder times each run on a core of its own",
                    limits::cores()
                );
            }
            limits::output_dir(&out)?;
            let done = std::sync::atomic::AtomicUsize::new(0);
            let recs = with_threads(threads, || {
                let part = ladder::Part { max_cells, methods, runs, deadline };
                ladder::run(&cfg, &dir, &out, shard, resume, &part, |r| {
                    let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    eprintln!(
                        "[{n}] {} {} run {}: {} {} {} in {:.2} s",
                        r.instance,
                        r.label,
                        r.run,
                        if r.solved { "solved" } else { "unsolved" },
                        r.work,
                        r.work_unit,
                        r.wall_s
                    );
                })
            })??;
            eprintln!("{} runs written to {}", recs.len(), ladder::results_path(&out, shard).display());
            if concur::interrupt::requested() {
                eprintln!("concur: interrupted; runs cut short were not written; --resume runs them");
                return Ok(ExitCode::from(INTERRUPTED));
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Report { inputs, output, json } => {
            limits::output_dir(&output)?;
            let w = ladder::report::write(&inputs, &output)?;
            if json {
                println!("{}", serde_json::to_string(&w)?);
            } else {
                print!("{}", w.markdown);
                eprintln!(
                    "{} runs merged; wrote {}",
                    w.records,
                    w.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", ")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Render { puzzle, solution, output } => {
            let mut out = OutputFile::check(&output)?;
            let p = load_puzzle(&puzzle)?;
            let b = format::read_solution(&read(&solution)?, &p).with_context(|| format!("{}", solution.display()))?;
            write_output(&mut out, &ladder::svg::board(&p, &b))?;
            if let Some(l) = format::viewer_link(&p, &b) {
                println!("viewer: {l}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench {
            sizes,
            batches,
            formulations,
            backends,
            full,
            budget,
            max_gib,
            dc_chunk_trials,
            adapter,
            seed,
            json,
        } => {
            let plan = if full {
                bench::Plan::full()
            } else if backends.as_ref().is_some_and(|b| !b.contains(&BackendChoice::Gpu)) {
                // No GPU asked for: don't probe one.
                bench::Plan::default_for(false)
            } else {
                let hardware =
                    backend::select(BackendChoice::Auto, adapter.as_deref()).is_ok_and(|s| s.backend.is_gpu());
                bench::Plan::default_for(hardware)
            };
            let explicit = sizes.is_some() || batches.is_some() || backends.is_some();
            let backends = backends.unwrap_or_else(|| {
                [(plan.cpu, BackendChoice::Cpu), (plan.gpu, BackendChoice::Gpu)]
                    .into_iter()
                    .filter_map(|(on, b)| on.then_some(b))
                    .collect()
            });
            let sizes = match sizes {
                Some(s) => s,
                None => plan.sizes.iter().map(|(w, h)| format!("{w}x{h}")).collect(),
            };
            let batches = batches.unwrap_or_else(|| plan.batches.clone());
            let sizes = sizes
                .iter()
                .map(|s| {
                    let (w, h) = s.split_once('x').with_context(|| format!("size {s:?} is not WxH"))?;
                    Ok((w.trim().parse()?, h.trim().parse()?))
                })
                .collect::<Result<Vec<(usize, usize)>>>()
                .context("--sizes")?;
            // Before any step: sizes, formulations and backends that can run.
            let side = 2..=concur::puzzle::MAX_SIDE;
            if let Some((w, h)) = sizes.iter().find(|(w, h)| !side.contains(w) || !side.contains(h)) {
                anyhow::bail!("--sizes: {w}x{h} is out of range: each side must be 2..={}", concur::puzzle::MAX_SIDE);
            }
            anyhow::ensure!(!batches.contains(&0), "--batches: a batch must be at least 1 trial");
            if let Some(f) = formulations.iter().find(|f| !matches!(f.as_str(), "f1" | "dc" | "scan")) {
                anyhow::bail!("--formulations: unknown formulation {f:?} (f1, dc, scan)");
            }
            if backends.contains(&BackendChoice::Gpu) {
                backend::select(BackendChoice::Gpu, adapter.as_deref())?;
            }
            let budget = limits::seconds("--budget", budget)?;
            anyhow::ensure!(!budget.is_zero(), "--budget must be a positive number of seconds");
            anyhow::ensure!(max_gib > 0.0 && max_gib.is_finite(), "--max-gib must be a positive number, got {max_gib}");
            // A step whose state would not fit the memory here is skipped, as one over --max-gib.
            let mut max_bytes = (max_gib * (1u64 << 30) as f64) as u64;
            let mut notes = Notes::default();
            if let Some(have) = MemoryBudget::here()?.bytes.filter(|&have| have < max_bytes) {
                notes.push(format!(
                    "concur bench: skipping states over the {} of memory available",
                    limits::human(have)
                ));
                max_bytes = have;
            }
            let opts = bench::BenchOptions {
                sizes,
                batches,
                formulations,
                cpu: backends.contains(&BackendChoice::Cpu),
                gpu: backends.contains(&BackendChoice::Gpu),
                budget,
                max_bytes,
                seed,
                adapter,
                dc_chunk_trials: dc_chunk_trials.map(|c| c as usize),
            };
            notes.say();
            if !explicit {
                eprintln!("concur bench: {}", plan.why);
            }
            eprintln!(
                "concur bench: {} steps, at least {:.0} s",
                bench::steps(&opts).len(),
                bench::estimated_seconds(&opts)
            );
            if !json {
                println!(
                    "{:<4} {:>6} {:>6} {:<10} {:<4} {:>14} {:>9} {:>12}",
                    "form", "size", "batch", "kernel", "on", "trial-it/s", "GB/s", "s/rep"
                );
            }
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{spinner} {pos}/{len} steps [{elapsed}, eta {eta}]")
                    .expect("static template"),
            );
            let shown = bar.clone();
            bench::run_with_steps(
                &opts,
                |r| {
                    let line = if json {
                        serde_json::to_string(r).expect("plain record")
                    } else {
                        let mut kernel = match (r.class_n, r.assign) {
                            (Some(n), Some(a)) => format!("{}/n{n}/{a}", r.kernel),
                            (Some(n), None) => format!("{}/n{n}", r.kernel),
                            (None, Some(a)) => format!("{}/a-{a}", r.kernel),
                            _ => r.kernel.to_string(),
                        };
                        if let Some(rc) = r.reduced_costs {
                            kernel.push_str(&format!("-{rc}"));
                        }
                        if r.profile.is_some() {
                            kernel = format!("loop:{kernel}");
                        }
                        let mut line = format!(
                            "{:<4} {:>6} {:>6} {:<10} {:<4} {:>14.4e} {:>9.3} {:>12.4e}",
                            r.formulation,
                            r.size,
                            r.batch,
                            kernel,
                            r.backend,
                            r.trial_iters_per_s,
                            r.gb_per_s,
                            r.seconds
                        );
                        if let Some(ns) = r.device_ns {
                            line.push_str(&format!("  {ns:.1} device ns/trial-it"));
                        }
                        if let Some(note) = &r.note {
                            line.push_str(&format!("  ({note})"));
                        }
                        line
                    };
                    bar.suspend(|| println!("{line}"));
                },
                |done, total| {
                    shown.set_length(total as u64);
                    shown.set_position(done as u64);
                },
            )?;
            bar.finish_and_clear();
            Ok(if concur::interrupt::requested() { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS })
        }
        Cmd::Count { puzzle, ac, order, estimate: Some(probes), seed, json, engine, journal, .. } => {
            anyhow::ensure!(engine == CountEngine::Ac, "--estimate sizes the tree of --engine ac");
            anyhow::ensure!(journal.is_none(), "--estimate keeps no journal");
            let p = load_puzzle(&puzzle)?;
            MemoryBudget::here()?.check_tables("count --estimate", limits::tables(&p, true))?;
            let e = backtrack::estimate(&p, ac, order, probes, seed);
            if json {
                println!("{}", serde_json::to_string(&e)?);
            } else {
                println!(
                    "estimated tree: {:.3e} nodes (+- {:.1e}), {:.3e} solutions, from {} probes in {:.3} s",
                    e.nodes, e.nodes_stderr, e.solutions, e.probes, e.wall_s
                );
            }
            Ok(if concur::interrupt::requested() { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS })
        }
        Cmd::Count {
            puzzle,
            limit,
            time_limit: t,
            engine: CountEngine::Scan,
            threads,
            no_symmetry,
            probes,
            json,
            journal,
            tasks,
            reverse,
            ..
        } => {
            let p = load_puzzle(&puzzle)?;
            let time_limit = time_limit(t)?;
            // Before any counting: the journal writable, the threads within the cores, the
            // tables within memory.
            let journal_file = journal.as_deref().map(OutputFile::check).transpose()?;
            let mut notes = Notes::default();
            let threads = cap_threads("--threads", threads, &mut notes);
            MemoryBudget::here()?.check_tables("count --engine scan", limits::tables(&p, false))?;
            let opts = ScanOptions {
                time_limit,
                limit,
                threads,
                symmetry: !no_symmetry,
                probes,
                min_tasks: tasks,
                reverse,
                row_chain: false,
            };
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{spinner} {pos}/{len} subtrees [{elapsed}, eta {eta}] {msg}")
                    .expect("static template"),
            );
            let shown = bar.clone();
            let show = move |done: u64, tasks: u64, nodes: u64, found: u64| {
                shown.set_length(tasks);
                shown.set_position(done);
                shown.set_message(format!("{nodes:.3e} nodes, {found} solutions", nodes = nodes as f64));
            };
            let mut journal_failed = None;
            let c = match &journal {
                Some(path) => {
                    let (j, rec) = JsonlJournal::open(path)?;
                    if let Some(f) = journal_file {
                        f.keep();
                    }
                    let finished = rec.done.iter().map(|d| d.task).collect::<std::collections::BTreeSet<_>>().len();
                    let (resuming, shown_path) = (rec.plan.is_some(), path.display().to_string());
                    // The notes wait until the journal's plan is accepted (a journal of another
                    // count is refused in one line).
                    let pending = std::mem::take(&mut notes.0);
                    let j = j.with_progress(show).with_on_plan(move |plan| {
                        for line in &pending {
                            eprintln!("{line}");
                        }
                        if resuming {
                            eprintln!(
                                "concur: resuming from {shown_path}: {finished} of {} subtrees finished",
                                plan.tasks
                            );
                        }
                    });
                    let c = scan::count_journaled(&p, &opts, rec.plan.as_ref().map(|pl| (pl, &rec.done[..])), &j)?;
                    // A journal that could not be written stopped the count; the count so far is
                    // still printed, then the reason.
                    journal_failed = j.finish().err();
                    c
                }
                None => {
                    notes.say();
                    scan::count_journaled(&p, &opts, None, &ProgressOnly(Box::new(show)))?
                }
            };
            bar.finish_and_clear();
            if json {
                // The keys of the arc-consistent count, plus the scan engine's own.
                let mut v = serde_json::to_value(&c)?;
                if let serde_json::Value::Object(m) = &mut v {
                    m.insert("engine".into(), "scan".into());
                    m.insert("interrupted".into(), concur::interrupt::requested().into());
                    m.insert("restarts".into(), 0.into());
                    m.insert("revisions".into(), 0.into());
                }
                println!("{v}");
            } else {
                let rot = c.up_to_rotation.map_or(String::new(), |r| format!(" ({r} up to rotation)"));
                let exact = if c.complete {
                    String::new()
                } else {
                    format!(" (stopped early after {} of {} subtrees: a lower bound)", c.tasks_done, c.tasks)
                };
                let resumed = if c.tasks_resumed > 0 {
                    format!(" ({} nodes in {} subtrees from the journal)", c.nodes_resumed, c.tasks_resumed)
                } else {
                    String::new()
                };
                println!(
                    "{} solutions{rot}{exact}; {} nodes{resumed}; this run walked {} nodes in {:.3} s ({:.0} nodes/s, {} threads)",
                    c.solutions,
                    c.nodes,
                    c.nodes - c.nodes_resumed,
                    c.wall_s,
                    (c.nodes - c.nodes_resumed) as f64 / c.wall_s.max(1e-9),
                    c.threads
                );
            }
            if let Some(e) = journal_failed {
                let done = if c.complete { "the count is complete" } else { "the count stopped" };
                anyhow::bail!("{e}; {done}, and every line the journal holds is whole: run again to go on");
            }
            Ok(count_exit(c.complete))
        }
        Cmd::Count { puzzle, limit, ac, order, time_limit: t, estimate: None, json, journal, .. } => {
            anyhow::ensure!(
                journal.is_none(),
                "--journal is an option of --engine scan; the arc-consistent count keeps no journal"
            );
            let p = load_puzzle(&puzzle)?;
            let time_limit = time_limit(t)?;
            MemoryBudget::here()?.check_tables("count", limits::tables(&p, true))?;
            let c = backtrack::count(&p, ac, order, limit, time_limit);
            if json {
                let mut v = serde_json::to_value(&c)?;
                if let serde_json::Value::Object(m) = &mut v {
                    m.insert("interrupted".into(), concur::interrupt::requested().into());
                }
                println!("{v}");
            } else {
                let rot = c.up_to_rotation.map_or(String::new(), |r| format!(" ({r} up to rotation)"));
                let exact = if c.complete { "" } else { " (stopped early: a lower bound)" };
                println!(
                    "{} solutions{rot}{exact}; {} nodes in {:.3} s ({:.0} nodes/s)",
                    c.solutions,
                    c.stats.nodes,
                    c.stats.wall_s,
                    c.stats.nodes_per_s()
                );
            }
            Ok(count_exit(c.complete))
        }
    }
}

/// A count exits 0 when it finished or stopped at a limit it was given, 130 when a signal
/// stopped it (the partial count is still printed, and a journal keeps every finished subtree).
fn count_exit(complete: bool) -> ExitCode {
    if !complete && concur::interrupt::requested() { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS }
}

/// Progress of a count without a journal file.
struct ProgressOnly(Box<dyn Fn(u64, u64, u64, u64) + Sync>);

impl Journal for ProgressOnly {
    fn progress(&self, tasks_done: u64, tasks: u64, nodes: u64, solutions: u64) {
        (self.0)(tasks_done, tasks, nodes, solutions);
    }
}

/// On a machine without a login session (no valid `XDG_RUNTIME_DIR`), Mesa's Vulkan
/// device-selection layer, loaded while wgpu probes adapters, prints "error: XDG_RUNTIME_DIR is
/// invalid or not set" twice. That layer only orders the devices for a display; every adapter
/// is still enumerated without it, so it is switched off there (`NODEVICE_SELECT=1`, Mesa's own
/// switch). A user's own setting is left alone.
fn quiet_headless_probe() {
    if std::env::var_os("NODEVICE_SELECT").is_some() {
        return;
    }
    let session = std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| Path::new(&d).is_dir());
    if !session {
        // SAFETY: the first statement of `main`, before any other thread exists (the signal
        // handler's thread is started after it), so nothing reads the environment concurrently.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

/// A write past a file-size limit (`ulimit -f`) fails with an error like a full disk does,
/// instead of ending the process by SIGXFSZ: every writer then keeps what it has written
/// whole and says why it stopped.
#[cfg(unix)]
fn ignore_file_size_signal() {
    // SAFETY: sets the disposition of SIGXFSZ to "ignore" (no handler code runs), before any
    // other thread exists; an ignored SIGXFSZ only turns such writes into EFBIG errors.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

fn main() -> ExitCode {
    quiet_headless_probe();
    #[cfg(unix)]
    ignore_file_size_signal();
    install_interrupt_handler();
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("concur: error: {}", format!("{e:#}").replace('\n', " "));
            // An error that a stop request caused (a search cut short) is the signal's exit.
            ExitCode::from(if concur::interrupt::requested() { INTERRUPTED } else { 2 })
        }
    }
}

/// The docs' commands against the real command line: every `concur ...` line in the code
/// blocks of README.md and docs/*.md parses with [`Cli`] (clap's `try_parse_from`, which runs
/// nothing), so a command copied from the docs runs as written. The other docs checks (links,
/// anchors, § references, the results index, the shaders) are in `tests/docs.rs`.
#[cfg(test)]
mod docs_tests {
    use super::Cli;
    use clap::Parser;
    use std::path::{Path, PathBuf};

    /// README.md and every Markdown page under docs/.
    fn pages() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut v = vec![root.join("README.md")];
        let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "md"))
                    .collect()
            })
            .unwrap_or_default();
        docs.sort();
        v.extend(docs);
        v
    }

    /// The lines inside fenced code blocks, `(line number, text)`, with backslash
    /// continuations joined onto their first line.
    fn code_lines(text: &str) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = Vec::new();
        let (mut inside, mut open) = (false, false);
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("```") {
                inside = !inside;
                open = false;
                continue;
            }
            if !inside {
                continue;
            }
            let (body, cont) = match t.trim_end().strip_suffix('\\') {
                Some(b) => (b.to_string(), true),
                None => (t.trim_end().to_string(), false),
            };
            match out.last_mut() {
                Some(last) if open => {
                    last.1.push(' ');
                    last.1.push_str(&body);
                }
                _ => out.push((i + 1, body)),
            }
            open = cont;
        }
        out
    }

    /// Shell words of a line, split into commands at `|`, `||`, `&&` and `;`: quotes removed,
    /// a `#` word ends the line, shell expansions (`$X`, `${X}`, `$((...))`) read as `1`.
    fn commands(line: &str) -> Vec<Vec<String>> {
        let mut cmds = vec![Vec::new()];
        let mut word: Option<String> = None;
        let mut chars = line.chars().peekable();
        let mut quote: Option<char> = None;
        while let Some(c) = chars.next() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"') | None, '$') => {
                    // An expansion: `$((...))`, `${...}` or `$NAME`, read as 1.
                    let w = word.get_or_insert_with(String::new);
                    w.push('1');
                    match chars.peek() {
                        Some('(') | Some('{') => {
                            let mut depth = 0;
                            for d in chars.by_ref() {
                                match d {
                                    '(' | '{' => depth += 1,
                                    ')' | '}' => depth -= 1,
                                    _ => {}
                                }
                                if depth == 0 {
                                    break;
                                }
                            }
                        }
                        _ => {
                            while chars.peek().is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_') {
                                chars.next();
                            }
                        }
                    }
                }
                (Some(_), c) => word.get_or_insert_with(String::new).push(c),
                (None, '"' | '\'') => {
                    quote = Some(c);
                    word.get_or_insert_with(String::new);
                }
                (None, '#') if word.is_none() => break,
                (None, c) if c.is_whitespace() => {
                    if let Some(w) = word.take() {
                        cmds.last_mut().unwrap().push(w);
                    }
                }
                (None, '|' | ';' | '&') => {
                    if let Some(w) = word.take() {
                        cmds.last_mut().unwrap().push(w);
                    }
                    if matches!(chars.peek(), Some('|' | '&')) {
                        chars.next();
                    }
                    cmds.push(Vec::new());
                }
                (None, c) => word.get_or_insert_with(String::new).push(c),
            }
        }
        if let Some(w) = word {
            cmds.last_mut().unwrap().push(w);
        }
        cmds.retain(|c| !c.is_empty());
        cmds
    }

    /// The arguments of a `concur` invocation (`concur ...`, `target/release/concur ...`,
    /// `cargo run --release -- ...`), with `concur` first and redirections dropped; `None`
    /// for any other command.
    fn concur_args(words: &[String]) -> Option<Vec<String>> {
        let mut w: Vec<&str> = words.iter().map(String::as_str).collect();
        while w.first().is_some_and(|x| x.contains('=') && !x.starts_with('-') || ["time", "nohup", "env"].contains(x))
        {
            w.remove(0);
        }
        let rest: Vec<&str> = match w.first() {
            Some(&("concur" | "target/release/concur" | "./target/release/concur")) => w[1..].to_vec(),
            Some(&"cargo") if w.get(1) == Some(&"run") => {
                w.iter().position(|x| *x == "--").map_or(Vec::new(), |i| w[i + 1..].to_vec())
            }
            _ => return None,
        };
        let mut args = vec!["concur".to_string()];
        let mut skip = false;
        for a in rest {
            if skip {
                skip = false;
            } else if [">", ">>", "<", "2>", "2>>"].contains(&a) {
                skip = true;
            } else if !(a.starts_with('>') || a.starts_with("2>") || a.starts_with('<')) {
                args.push(a.to_string());
            }
        }
        Some(args)
    }

    #[test]
    fn every_concur_command_in_the_docs_parses() {
        let mut failures = Vec::new();
        let mut parsed = 0;
        for page in pages() {
            let text = std::fs::read_to_string(&page).expect("readable page");
            for (n, line) in code_lines(&text) {
                for cmd in commands(&line) {
                    let Some(args) = concur_args(&cmd) else { continue };
                    match Cli::try_parse_from(&args) {
                        Ok(_) => parsed += 1,
                        Err(e) => {
                            let why = e.render().to_string();
                            let why = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
                            failures.push(format!("{}:{n}: `{}`: {why}", page.display(), args.join(" ")));
                        }
                    }
                }
            }
        }
        assert!(failures.is_empty(), "commands in the docs that do not parse:\n{}", failures.join("\n"));
        // The front page's and the command pages' commands were found, not skipped.
        assert!(parsed >= 30, "only {parsed} concur commands found in README.md and docs/");
    }

    #[test]
    fn the_front_page_gives_the_two_commands() {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
        let lines: Vec<String> = code_lines(&text).into_iter().map(|l| l.1).collect();
        for want in ["cargo run --release -- demo", "cargo test --release"] {
            assert!(
                lines.iter().any(|l| l.split('#').next().unwrap().trim() == want),
                "README.md's code blocks lack `{want}`"
            );
        }
    }

    #[test]
    fn the_line_reader_joins_continuations_and_splits_commands() {
        let text = "x\n```sh\nconcur solve p.txt \\\n  --json   # a comment\nA=1 concur count \"$P/a b.txt\" | head && cargo run --release -- demo > out.txt\n```\nconcur not-in-a-block\n";
        let lines = code_lines(text);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0, 3);
        let c0 = commands(&lines[0].1);
        assert_eq!(c0, [["concur", "solve", "p.txt", "--json"]]);
        let c1 = commands(&lines[1].1);
        assert_eq!(c1.len(), 3);
        assert_eq!(concur_args(&c1[0]).unwrap(), ["concur", "count", "1/a b.txt"]);
        assert_eq!(concur_args(&c1[1]), None);
        assert_eq!(concur_args(&c1[2]).unwrap(), ["concur", "demo"]);
        // A command that is wrong is refused: the test can fail.
        assert!(Cli::try_parse_from(["concur", "solve", "p.txt", "--no-such-flag"]).is_err());
        assert!(Cli::try_parse_from(["concur", "solve", "p.txt", "--method", "rrr"]).is_ok());
    }
}
