//! The `concur` binary: parses the command line ([`concur_cli`]), hands each subcommand to
//! the library, and prints what comes back. The checks and plans behind the flags are library
//! constructors; what is here is wiring, progress bars, the Ctrl-C handler and printing.

use anyhow::{Context, Result};
use concur::backend::Certify;
use concur::batch;
use concur::cancel::Cancel;
use concur::certify;
use concur::limits::{self, MemoryBudget, OutputFile};
use concur::meter::{Meter, Watch};
use concur::puzzle::format;
use concur::puzzle::generate::{GenerateOptions, generate};
use concur::puzzle::{Board, Puzzle};
use concur::report::{SolveReport, draw_board};
use concur::search::backtrack;
use concur::search::journal::{CountRequest, ScanCountRun};
use concur::search::scan::CountEngine;
use concur::solve::{Event, SolveSpec};
use concur::verify;
use concur_cli::{BenchArgs, Cli, Cmd, CountArgs, DemoArgs, GenerateArgs, ReportArgs, SolveArgs, VerifyArgs};
use concur_lab::bench;
use concur_lab::ladder;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

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

/// The run's flags checked into the library's typed run, then [`concur::solve::solve`] on the
/// backend asked for; prints and writes what it found.
fn solve(a: SolveArgs, cancel: &Cancel) -> Result<ExitCode> {
    let mut spec = a.spec()?;
    spec.certify = match (&a.dump_state, a.dump_all) {
        (None, _) => Certify::None,
        (Some(_), false) => Certify::Solved,
        (Some(_), true) => Certify::All,
    };
    spec.check()?;
    let puzzle = load_puzzle(&a.puzzle)?;
    // Before any work: every output writable, the threads within the cores, memory enough.
    let output = a.output.as_deref().map(OutputFile::check).transpose()?;
    if let Some(dir) = &a.dump_state {
        limits::output_dir(dir)?;
    }
    let prepared = concur::solve::prepare(&mut spec, &puzzle, "--threads")?;
    prepared.notes.iter().for_each(|l| eprintln!("{l}"));
    let (max, trials) = (puzzle.max_score(), spec.run.trials);
    let bar = if spec.is_map() {
        progress_bar(spec.map_iters())
    } else if spec.name() == concur::MethodName::Scan {
        spinner("{spinner} [{elapsed}] {msg}")
    } else {
        ProgressBar::hidden()
    };
    let shown = bar.clone();
    let solved = concur::solve::solve(&puzzle, &spec, prepared.backend.as_ref(), cancel, &mut move |e| match e {
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
    finish(&puzzle, solved.report, output, a.json, after, cancel)
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

fn spinner(template: &str) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
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

/// A spinner on a terminal that shows `meter` (work and found, named) twice a second while
/// `f` runs.
fn metered<T>(what: &str, found: &str, meter: &Meter, f: impl FnOnce() -> T) -> T {
    let bar = spinner("{spinner} [{elapsed}] {msg}");
    let done = std::sync::atomic::AtomicBool::new(false);
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let (w, n) = meter.read();
                bar.set_message(format!("{w} {what}, {n} {found}"));
                bar.tick();
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        let out = f();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        out
    });
    bar.finish_and_clear();
    out
}

/// Writes each certificate as `trial-T.json` in `dir`.
fn write_certificates(dir: &Path, certificates: &[(usize, certify::Certificate)]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (t, cert) in certificates {
        write(&dir.join(format!("trial-{t}.json")), &serde_json::to_string(cert)?)?;
    }
    Ok(())
}

/// An error whose command already printed its JSON, with the error in it (`output_error`, a
/// count's journal): said again on stderr, not printed a second time on stdout.
#[derive(Debug)]
struct InJson(anyhow::Error);

impl std::fmt::Display for InJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for InJson {}

/// `e`, marked as printed in the JSON when `json`.
fn after_json(e: anyhow::Error, json: bool) -> anyhow::Error {
    if json { InJson(e).into() } else { e }
}

/// Exit status of a run stopped by a signal (128 + SIGINT, as shells report it).
const INTERRUPTED: u8 = 130;

/// Exit status of a ladder stopped by a signal with runs left: it wrote what it did (the runs
/// cut short as parts) and `--resume` goes on from there. 75 is `EX_TEMPFAIL`, "try again
/// later"; a scheduler's retry rule (Kubernetes' `podFailurePolicy`) keys on it.
const RESUMABLE: u8 = 75;

/// The signals that mean "stop soon and write what you have": Ctrl-C, the scheduler's TERM,
/// a closed terminal, and the warnings schedulers send before a time limit (USR1, USR2).
#[cfg(unix)]
const STOP_SIGNALS: [i32; 5] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGUSR1,
    signal_hook::consts::SIGUSR2,
];

/// The stop signals' handler: registered by [`SignalWatch::register`] at the first statement
/// of `main` (a signal from then on is kept), heard by a thread that [`SignalWatch::start`]
/// spawns once the environment is set, and closed and joined by [`SignalWatch::close`] before
/// the process exits, so that no thread is left running while it does.
#[derive(Default)]
struct SignalWatch {
    #[cfg(unix)]
    signals: Option<signal_hook::iterator::Signals>,
    #[cfg(unix)]
    handle: Option<signal_hook::iterator::Handle>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SignalWatch {
    /// Registers the handler of [`STOP_SIGNALS`]; a signal that comes before [`Self::start`]
    /// waits for it. Without signal support a signal just ends the process as before.
    fn register() -> Self {
        #[cfg(unix)]
        {
            let signals = signal_hook::iterator::Signals::new(STOP_SIGNALS).ok();
            let handle = signals.as_ref().map(|s| s.handle());
            SignalWatch { signals, handle, thread: None }
        }
        #[cfg(not(unix))]
        SignalWatch::default()
    }

    /// Starts hearing the signals: the first trips the process's token with the signal's
    /// name, so that every run stops as at a time limit and still verifies, writes and prints
    /// what it has (with `"interrupted": true`). A second signal ends the process at once on a
    /// terminal (a user pressing Ctrl-C again); off a terminal (a scheduler, which may signal a
    /// step and its batch shell, or again after a grace period) it is noted and ignored, so
    /// that what is being written is not lost.
    fn start(&mut self, cancel: &Cancel) {
        #[cfg(unix)]
        if let Some(mut signals) = self.signals.take() {
            use std::io::IsTerminal;
            let cancel = cancel.clone();
            let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
            self.thread = std::thread::Builder::new()
                .name("signals".into())
                .spawn(move || {
                    for sig in signals.forever() {
                        let name = signal_hook::low_level::signal_name(sig).unwrap_or("a signal");
                        if !cancel.is_cancelled() {
                            cancel.cancel_because(name);
                            let again = if terminal { " (again to quit at once)" } else { "" };
                            eprintln!("concur: {name}: stopping; finishing and writing what is done{again}");
                        } else if terminal {
                            std::process::exit(i32::from(INTERRUPTED));
                        } else {
                            eprintln!("concur: {name}: already stopping; what is being written is kept");
                        }
                    }
                })
                .ok();
        }
        #[cfg(not(unix))]
        let _ = cancel;
    }

    /// Stops hearing signals and joins the thread that heard them.
    fn close(self) {
        #[cfg(unix)]
        if let Some(h) = &self.handle {
            h.close();
        }
        if let Some(t) = self.thread {
            let _ = t.join();
        }
    }
}

/// The exit code of a run that did not reach its goal: 130 after a stop request, else 1.
fn unfinished(cancel: &Cancel) -> ExitCode {
    ExitCode::from(if cancel.is_cancelled() { INTERRUPTED } else { 1 })
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
    cancel: &Cancel,
) -> Result<ExitCode> {
    report.printed.interrupted |= cancel.is_cancelled();
    let link = report.board.as_ref().and_then(|b| format::viewer_link(puzzle, b));
    // In JSON the link is a field; in text it has a line of its own below the summary.
    if json {
        report.printed.viewer_link.clone_from(&link);
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
        report.printed.board_text.clone_from(&unsaved);
        report.printed.output_error = failed.as_ref().map(|e| format!("{e:#}"));
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
        return Err(after_json(e, json));
    }
    Ok(if report.solved { ExitCode::SUCCESS } else { unfinished(cancel) })
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

/// A command-line argument for an error line: at most 80 characters.
fn clip_arg(s: &str) -> String {
    if s.chars().count() <= 80 { s.to_string() } else { s.chars().take(77).collect::<String>() + "..." }
}

/// A board of `p` from a file (Brendan Owen's solution format, or a viewer link in it), or
/// from a viewer link given as it is.
fn read_board(solution: &Path, p: &concur::puzzle::Puzzle) -> Result<concur::puzzle::Board> {
    let given = solution.to_string_lossy();
    let bytes =
        if given.starts_with("http") || given.starts_with('#') { given.as_bytes().to_vec() } else { read(solution)? };
    format::read_solution(&bytes, p).with_context(|| clip_arg(&given))
}

fn verify_cmd(a: VerifyArgs) -> Result<ExitCode> {
    let (Some(solution), None) = (&a.solution, &a.state) else {
        let state = a.state.as_deref().context("verify needs a SOLUTION or --state FILE")?;
        return verify_state(&a.puzzle, state, a.json);
    };
    let p = load_puzzle(&a.puzzle)?;
    let b = read_board(solution, &p)?;
    let v = verify::check(&p, &b);
    let link = format::viewer_link(&p, &b);
    if a.json {
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

fn demo(a: DemoArgs, cancel: &Cancel) -> Result<ExitCode> {
    let (size, seed) = (a.size, a.seed);
    let opts = GenerateOptions { width: size, height: size, frame_colors: None, inner_colors: None, seed };
    let (puzzle, _) = generate(&opts)?;
    let run = concur::solve::RunOptions { seed, max_iters: Some(200_000), ..Default::default() };
    let spec = SolveSpec { run, ..Default::default() };
    let cfg = spec.map_config(cancel).expect("the demo runs RRR");
    println!(
        "generated a {size}x{size} puzzle (seed {seed}, {} colours); solving it with RRR (beta {}, {} trials)...",
        puzzle.num_colors() - 1,
        cfg.beta,
        cfg.run.trials
    );
    let bar = progress_bar(cfg.run.max_iters);
    let (shown, max) = (bar.clone(), puzzle.max_score());
    let solved = concur::solve::solve(&puzzle, &spec, &concur::backend::CpuBackend, cancel, &mut move |e| {
        if let Event::Map(p) = e {
            show(&shown, p, max, cfg.run.trials);
        }
    })?;
    bar.finish_and_clear();
    finish(&puzzle, solved.report, None, false, None, cancel)
}

/// `concur generate`: a planted-solution puzzle, or with `--unique` the first draw proven to
/// have one solution.
fn generate_cmd(a: GenerateArgs, cancel: &Cancel) -> Result<ExitCode> {
    let mut out = OutputFile::check(&a.output)?;
    let mut sol = a.solution.as_deref().map(OutputFile::check).transpose()?;
    let opts = GenerateOptions {
        width: a.width,
        height: a.height,
        frame_colors: a.frame_colors,
        inner_colors: a.inner_colors,
        seed: a.seed,
    };
    let (puzzle, board): (Puzzle, Board) = if a.unique {
        let meter = Meter::new();
        let watch = Watch { cancel: cancel.clone(), meter: Some(meter.clone()) };
        let drawn = metered("draws", "proven", &meter, || {
            concur::search::unique::generate_unique_checked(&opts, a.unique_attempts, a.unique_nodes, &watch)
        })?;
        let Some(u) = drawn else {
            if cancel.is_cancelled() {
                eprintln!("concur: interrupted before a draw was proven unique");
                return Ok(ExitCode::from(INTERRUPTED));
            }
            eprintln!(
                "concur: gave up: none of {} draws was proven unique within {} nodes each; try more colours, --unique-attempts or --unique-nodes",
                a.unique_attempts, a.unique_nodes
            );
            return Ok(ExitCode::from(1));
        };
        eprintln!("unique puzzle found after {} draw(s)", u.attempts);
        (u.puzzle, u.solution)
    } else {
        generate(&opts)?
    };
    write_output(&mut out, &format::write_puzzle(&puzzle))?;
    if let Some(sol) = &mut sol {
        write_output(sol, &format::write_solution(&board)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A usage error as one line (clap's message without its usage lines); `--help` and
/// `--version` print as usual and end the process there (Err: the exit code).
fn parse() -> Result<std::result::Result<(Cli, clap::ArgMatches), ExitCode>> {
    use clap::error::ErrorKind;
    match concur_cli::parse_from(std::env::args_os()) {
        Ok(parsed) => Ok(Ok(parsed)),
        Err(e) if !e.use_stderr() || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            Ok(Err(ExitCode::from(if e.use_stderr() { 2 } else { 0 })))
        }
        Err(e) => {
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

fn run(cli: Cli, matches: &clap::ArgMatches, cancel: &Cancel) -> Result<ExitCode> {
    let sub = |name: &str| matches.subcommand_matches(name).cloned().unwrap_or_default();
    match cli.cmd {
        Cmd::Solve(a) => solve(a, cancel),
        Cmd::Verify(a) => verify_cmd(a),
        Cmd::Generate(a) => generate_cmd(a, cancel),
        Cmd::Demo(a) => demo(a, cancel),
        Cmd::Ladder(a) => ladder_cmd(a, cancel),
        Cmd::Report(a) => report(a),
        Cmd::Render(a) => render(&a.puzzle, &a.solution, &a.output),
        Cmd::Bench(a) => bench_cmd(a, cancel),
        Cmd::Count(a) => {
            let unused = a.unused(&sub("count"));
            if let Some(id) = unused.first() {
                let with = if a.root_work {
                    "with --root-work".to_string()
                } else if a.estimate.is_some() {
                    "with --estimate".to_string()
                } else {
                    format!("with --engine {}", if a.engine == CountEngine::Scan { "scan" } else { "ac" })
                };
                return Err(concur::error::SpecError::no_effect(id, with).into());
            }
            match a.estimate {
                _ if a.root_work => count_root_work(a),
                Some(probes) => count_estimate(a, probes, cancel),
                None if a.engine == CountEngine::Scan => count_scan(a, cancel),
                None => count_ac(a, cancel),
            }
        }
    }
}

/// Whether the subcommand asked for `--json` (from the parsed flags, or from the raw
/// arguments when the command line did not parse), so that its error is JSON too.
fn wants_json(cli: Option<&Cli>) -> bool {
    match cli.map(|c| &c.cmd) {
        Some(Cmd::Solve(a)) => a.json,
        Some(Cmd::Verify(a)) => a.json,
        Some(Cmd::Count(a)) => a.json,
        Some(Cmd::Report(a)) => a.json,
        Some(Cmd::Bench(a)) => a.json,
        Some(_) => false,
        None => std::env::args().skip(2).any(|a| a == "--json"),
    }
}

/// `concur ladder`: the request checked by the library, then one line per finished run with
/// how far the call has come and its time left at the pace so far. Stopped by a signal or by
/// its deadline with runs left, it exits [`RESUMABLE`] after writing (and, with `--requeue`
/// under Slurm, after requeueing its job).
fn ladder_cmd(request: ladder::Request, cancel: &Cancel) -> Result<ExitCode> {
    let ladder = request.check()?;
    eprintln!("concur: {} worker threads ({})", ladder.threads, ladder.threads_from);
    let recs = ladder.run(cancel, |r, d| {
        let eta = d.eta_s().map_or_else(|| "?".to_string(), humanize);
        let cut = r
            .interrupted
            .as_deref()
            .map_or(String::new(), |why| format!(" (part {}, stopped by {why})", r.part.unwrap_or(1)));
        eprintln!("[{}/{}, eta {eta}] {r}{cut}", d.done, d.total);
    })?;
    eprintln!("{} runs written to {}", recs.len(), ladder.results_path().display());
    // Stopped by a signal, or by the deadline, with runs left: resumable.
    if !ladder.runs_left()? {
        return Ok(ExitCode::SUCCESS);
    }
    let by = cancel.reason().map_or_else(|| "the deadline".to_string(), String::from);
    if !cancel.is_cancelled() && ladder.part.deadline.is_none() {
        // Every planned run was taken and some could not be written or run: their errors
        // were reported above.
        return Ok(ExitCode::from(1));
    }
    let cut = recs.iter().filter(|r| r.interrupted.is_some()).count();
    eprintln!(
        "concur: stopped by {by} with runs left ({cut} written as parts); --resume goes on from here (exit {RESUMABLE})"
    );
    if ladder.requeue {
        match ladder::requeue_job() {
            Ok(Some(job)) => eprintln!("concur: requeued job {job}"),
            Ok(None) => eprintln!("concur: --requeue: not under Slurm (no SLURM_JOB_ID); nothing requeued"),
            Err(e) => eprintln!("concur: --requeue: {e}"),
        }
    }
    Ok(ExitCode::from(RESUMABLE))
}

/// Seconds as `1h02m`, `3m05s` or `42s`.
fn humanize(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

fn report(a: ReportArgs) -> Result<ExitCode> {
    limits::output_dir(&a.output)?;
    let w = ladder::report::write(&a.inputs, &a.output)?;
    if a.json {
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

fn render(puzzle: &Path, solution: &Path, output: &Path) -> Result<ExitCode> {
    let mut out = OutputFile::check(output)?;
    let p = load_puzzle(puzzle)?;
    let b = read_board(solution, &p)?;
    write_output(&mut out, &ladder::svg::board(&p, &b))?;
    if let Some(l) = format::viewer_link(&p, &b) {
        println!("viewer: {l}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `concur bench`: the plan and its checks from the library, then a table (or JSON lines).
fn bench_cmd(a: BenchArgs, cancel: &Cancel) -> Result<ExitCode> {
    let (mut opts, notes) = bench::BenchOptions::from_request(a.request)?;
    opts.cancel = cancel.clone();
    notes.iter().for_each(|l| eprintln!("{l}"));
    if !a.json {
        println!("{}", bench::BenchRow::table_header());
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} {pos}/{len} steps [{elapsed}, eta {eta}]").expect("static template"),
    );
    let shown = bar.clone();
    bench::run_with_steps(
        &opts,
        |r| {
            let line = if a.json { serde_json::to_string(r).expect("plain record") } else { r.to_string() };
            bar.suspend(|| println!("{line}"));
        },
        |done, total| {
            shown.set_length(total as u64);
            shown.set_position(done as u64);
        },
    )?;
    bar.finish_and_clear();
    Ok(if cancel.is_cancelled() { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS })
}

/// `concur count --root-work`: every rung of the consistency ladder on the root, its counters.
fn count_root_work(a: CountArgs) -> Result<ExitCode> {
    let p = load_puzzle(&a.puzzle)?;
    let budget = MemoryBudget::here()?;
    budget.check_tables("count --root-work", limits::tables(&p, true))?;
    let net = concur::verify::Network::new(&p);
    let pc = concur::verify::pc::PathConsistency::bytes(&net);
    budget.check_tables("count --root-work (path consistency's relations)", limits::tables(&p, true) + pc)?;
    let rows = concur::verify::work::root_work(&net);
    if a.json {
        println!("{}", serde_json::to_string(&rows)?);
    } else {
        println!("level       revisions       checks   removals       left   seconds");
        for r in &rows {
            let left = if r.wiped_out { "wiped out".to_string() } else { r.left.to_string() };
            println!(
                "{:<10} {:>10} {:>12} {:>10} {:>10} {:>9.4}",
                r.level, r.revisions, r.checks, r.removals, left, r.seconds
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `concur count --estimate`: Knuth's estimate of the arc-consistent count's tree.
fn count_estimate(a: CountArgs, probes: u64, cancel: &Cancel) -> Result<ExitCode> {
    anyhow::ensure!(a.engine == CountEngine::Ac, "--estimate sizes the tree of --engine ac");
    let p = load_puzzle(&a.puzzle)?;
    MemoryBudget::here()?.check_tables("count --estimate", limits::tables(&p, true))?;
    let meter = Meter::new();
    let watch = Watch { cancel: cancel.clone(), meter: Some(meter.clone()) };
    let e = metered("probes", "", &meter, || backtrack::estimate(&p, a.ac, a.order, probes, a.seed, &watch));
    if a.json {
        println!("{}", serde_json::to_string(&e)?);
    } else {
        println!("{}", e.summary());
    }
    Ok(if cancel.is_cancelled() { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS })
}

/// `concur count --engine scan`: the checked count (journaled when asked) with a progress bar.
fn count_scan(a: CountArgs, cancel: &Cancel) -> Result<ExitCode> {
    let p = load_puzzle(&a.puzzle)?;
    let run = ScanCountRun::new(
        &p,
        CountRequest {
            time_limit: a.time_limit,
            limit: a.limit,
            threads: a.threads,
            symmetry: !a.no_symmetry,
            probes: a.probes,
            tasks: a.tasks,
            reverse: a.reverse,
            journal: a.journal,
            cancel: cancel.clone(),
        },
    )?;
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
    let counted = run.run(|l| eprintln!("{l}"), show)?;
    bar.finish_and_clear();
    let c = counted.count;
    if a.json {
        println!("{}", c.json(cancel.is_cancelled()));
    } else {
        println!("{}", c.summary());
    }
    if let Some(e) = counted.journal_failed {
        return Err(after_json(e.into(), a.json));
    }
    Ok(count_exit(c.complete, cancel))
}

/// `concur count`: the arc-consistent backtracker's complete count.
fn count_ac(a: CountArgs, cancel: &Cancel) -> Result<ExitCode> {
    let p = load_puzzle(&a.puzzle)?;
    let time_limit = time_limit(a.time_limit)?;
    MemoryBudget::here()?.check_tables("count", limits::tables(&p, true))?;
    let meter = Meter::new();
    let watch = Watch { cancel: cancel.clone(), meter: Some(meter.clone()) };
    if a.ac == concur::verify::Consistency::Ac4 {
        let flag = if a.alldiff == concur::verify::AllDiff::Regin {
            Some("--alldiff regin")
        } else {
            a.sac.then_some("--sac").or(a.pc.then_some("--pc")).or(a.blocks.then_some("--blocks"))
        };
        if let Some(flag) = flag {
            anyhow::bail!(
                "{flag} is not kept with --ac ac4 yet (its support counts do not follow the removals): use --ac fc, ac3 or ac2001"
            );
        }
    }
    if a.pc {
        let pc = concur::verify::pc::PathConsistency::bytes(&concur::verify::Network::new(&p));
        MemoryBudget::here()?.check_tables("count --pc (its relations)", limits::tables(&p, true) + pc)?;
    }
    let c = metered("nodes", "solutions", &meter, || {
        let rungs = backtrack::Rungs { sac: a.sac, pc: a.pc, blocks: a.blocks };
        backtrack::count_with(&p, a.ac, a.alldiff, rungs, a.order, a.limit, time_limit, &watch)
    });
    if a.json {
        println!("{}", c.json(cancel.is_cancelled()));
    } else {
        println!("{}", c.summary());
    }
    Ok(count_exit(c.complete, cancel))
}

/// A count exits 0 when it finished or stopped at a limit it was given, 130 when a signal
/// stopped it (the partial count is still printed, and a journal keeps every finished subtree).
fn count_exit(complete: bool, cancel: &Cancel) -> ExitCode {
    if !complete && cancel.is_cancelled() { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS }
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
        // SAFETY: at the start of `main`, before any other thread exists (the signal thread
        // is started after it), so nothing reads the environment concurrently.
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

/// The run option an error is about, where it is about one: a refused option, or a
/// capability the backend does not offer.
fn option_of(e: &anyhow::Error) -> Option<String> {
    use concur::backend::EngineError;
    if let Some(s) = e.downcast_ref::<concur::SpecError>() {
        return s.key().map(String::from);
    }
    match e.downcast_ref::<concur::SolveError>()? {
        concur::SolveError::Spec(s) => s.key().map(String::from),
        concur::SolveError::Engine(EngineError::Unsupported(u)) => Some(u.feature.key().to_string()),
        _ => None,
    }
}

/// An error as one line on stderr, and with `--json` also as one JSON object on stdout
/// (`{"error": ..., "exit": ...}`, and the option it names when it names one).
fn report_error(e: &anyhow::Error, code: u8, json: bool) {
    let line = format!("{e:#}").replace('\n', " ");
    eprintln!("concur: error: {line}");
    if json && e.downcast_ref::<InJson>().is_none() {
        let mut o = serde_json::json!({ "error": line, "exit": code });
        if let Some(key) = option_of(e) {
            o["option"] = serde_json::Value::String(concur::error::flag(&key));
        }
        println!("{o}");
    }
}

fn main() -> ExitCode {
    // The stop signals first: from here on a signal at any moment gives the run's report.
    let mut signals = SignalWatch::register();
    quiet_headless_probe();
    #[cfg(unix)]
    ignore_file_size_signal();
    let cancel = Cancel::new();
    signals.start(&cancel);
    let code = match parse() {
        Ok(Ok((cli, matches))) => {
            let json = wants_json(Some(&cli));
            match run(cli, &matches, &cancel) {
                Ok(code) => code,
                Err(e) => {
                    // An error that a stop request caused (a search cut short) is the signal's exit.
                    let code = if cancel.is_cancelled() { INTERRUPTED } else { 2 };
                    report_error(&e, code, json);
                    ExitCode::from(code)
                }
            }
        }
        Ok(Err(code)) => code,
        Err(e) => {
            report_error(&e, 2, wants_json(None));
            ExitCode::from(2)
        }
    };
    signals.close();
    code
}
