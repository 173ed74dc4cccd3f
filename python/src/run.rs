//! Solving from Python: the run on a worker thread while the calling thread, with the GIL
//! released, watches for Ctrl-C ([`blocking`]); one solve ([`solve`], `concur.solve`) and rate
//! mode as a stream of solutions ([`Stream`], behind `concur.solutions`).

use crate::blocking::{POLL, blocking};
use crate::convert::{board_array, from_json_text, from_serde, to_json, vector};
use crate::errors::{self, Kind, error, spec_error};
use crate::puzzle::PyPuzzle;
use concur::Cancel;
use concur::backend::Certify;
use concur::batch::{Found, SolutionSink};
use concur::puzzle::{Puzzle, format};
use concur::solve::{Event, SolveError, SolveSpec, Solved};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Map;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a progress callback is called at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// A dict of Python options as the keys `SolveSpec::from_given` reads.
pub fn given_map(given: &Bound<'_, PyDict>) -> PyResult<Map<String, serde_json::Value>> {
    let mut m = Map::new();
    for (k, v) in given.iter() {
        let k: String = k.extract()?;
        m.insert(k.clone(), to_json(&k, &v)?);
    }
    Ok(m)
}

/// The run the options ask for, checked, with its certificates.
fn spec_of(given: &Bound<'_, PyDict>, certify: Option<&str>) -> PyResult<SolveSpec> {
    let mut spec = SolveSpec::from_given(&given_map(given)?).map_err(|e| errors::spec(&e))?;
    spec.certify = match certify {
        None => Certify::None,
        Some("solved") => Certify::Solved,
        Some("all") => Certify::All,
        Some(other) => {
            return Err(spec_error(format!("certify must be None, 'solved' or 'all', got {other:?}"), Some("certify")));
        }
    };
    spec.check().map_err(|e| errors::spec(&e))?;
    Ok(spec)
}

/// What a progress callback hears, called at most every 0.2 s from the run's thread with the
/// GIL taken. An exception it raises ends the run and is raised by the caller.
struct Heard {
    f: Option<Py<PyAny>>,
    last: Instant,
    trials: usize,
    max_score: usize,
    failed: Arc<Mutex<Option<PyErr>>>,
    cancel: Cancel,
}

impl Heard {
    fn new(f: Option<Py<PyAny>>, spec: &SolveSpec, puzzle: &Puzzle, cancel: &Cancel) -> Self {
        Heard {
            f,
            last: Instant::now(),
            trials: spec.run.trials,
            max_score: puzzle.max_score(),
            failed: Arc::new(Mutex::new(None)),
            cancel: cancel.clone(),
        }
    }

    fn hear(&mut self, e: Event<'_>) {
        if self.f.is_none() || self.last.elapsed() < PROGRESS_EVERY {
            return;
        }
        self.last = Instant::now();
        let Some(f) = &self.f else { return };
        let called = Python::try_attach(|py| -> PyResult<()> {
            let d = PyDict::new(py);
            match e {
                Event::Map(p) => {
                    d.set_item("kind", "map")?;
                    d.set_item("iterations", p.iterations)?;
                    d.set_item("trial_iterations", p.trial_iterations)?;
                    d.set_item("best_score", p.best_score)?;
                    d.set_item("max_score", self.max_score)?;
                    d.set_item("solved_trials", p.solved_trials)?;
                    d.set_item("trials", self.trials)?;
                    d.set_item("solutions", p.solutions)?;
                    d.set_item("elapsed_s", p.elapsed_s)?;
                }
                Event::Scan(p) => {
                    d.set_item("kind", "scan")?;
                    d.set_item("nodes", p.nodes)?;
                    d.set_item("restarts", p.restarts)?;
                    d.set_item("best_depth", p.best_depth)?;
                    d.set_item("elapsed_s", p.elapsed_s)?;
                }
            }
            f.call1(py, (d,))?;
            Ok(())
        });
        if let Some(Err(err)) = called {
            self.failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(err);
            self.cancel.cancel();
            self.f = None;
        }
    }
}

/// The run prepared as the command line prepares it (`solve::prepare`: threads capped at the
/// cores, the backend picked, the preflight; its notes kept), then the solve.
fn run(
    puzzle: &Puzzle,
    spec: &SolveSpec,
    cancel: &Cancel,
    heard: &mut Heard,
) -> Result<(Solved, Vec<String>), SolveError> {
    let mut spec = spec.clone();
    let prepared = concur::solve::prepare(&mut spec, puzzle, "threads")?;
    let solved = concur::solve::solve(puzzle, &spec, prepared.backend.as_ref(), cancel, &mut |e| heard.hear(e))?;
    Ok((solved, prepared.notes))
}

/// Solves ``puzzle`` with the options ``given`` (see ``concur.solve``, which calls this).
#[pyfunction]
#[pyo3(signature = (puzzle, given, progress=None, certify=None))]
pub fn _solve(
    py: Python<'_>,
    puzzle: PyRef<'_, PyPuzzle>,
    given: &Bound<'_, PyDict>,
    progress: Option<Py<PyAny>>,
    certify: Option<&str>,
) -> PyResult<PyRunResult> {
    let spec = spec_of(given, certify)?;
    let p = puzzle.inner.clone();
    let cancel = Cancel::new();
    let mut heard = Heard::new(progress, &spec, &p, &cancel);
    let failed = heard.failed.clone();
    let out = blocking(py, &cancel, || run(&p, &spec, &cancel, &mut heard))?;
    if let Some(e) = failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(e);
    }
    let (solved, notes) = out.map_err(|e| errors::solve(&e))?;
    PyRunResult::new(py, &p, solved, notes)
}

/// A read-only numpy array.
fn frozen<'py, T: numpy::Element>(a: Bound<'py, PyArray1<T>>) -> PyResult<Py<PyAny>> {
    a.call_method1("setflags", (false,))?;
    Ok(a.into_any().unbind())
}

/// The outcome of a solve: whether it solved, the best board, the report the command line
/// prints with ``--json`` (:attr:`stats`), and per trial of a map, arrays of what each did.
#[pyclass(module = "concur", name = "Result", frozen)]
pub struct PyRunResult {
    /// The method that ran (``"rrr"``, ``"scan"``...).
    #[pyo3(get)]
    method: String,
    /// Whether the run found a solution (checked by the exact verifier).
    #[pyo3(get)]
    solved: bool,
    /// The best board's matched joins.
    #[pyo3(get)]
    score: usize,
    /// The joins of a solution.
    #[pyo3(get)]
    max_score: usize,
    /// The best board (the solution when solved) in the community's viewer, when the puzzle
    /// has at most 26 colours.
    #[pyo3(get)]
    viewer_link: Option<String>,
    /// The best board (the solution when solved): a read-only numpy array (cells, 2), per cell
    /// row-major from the top-left the piece and its clockwise quarter turns; None when the
    /// method has none.
    #[pyo3(get)]
    board: Option<Py<PyAny>>,
    /// The run's report as a dict: exactly the JSON of ``concur solve --json`` (see
    /// :attr:`json` for its text).
    #[pyo3(get)]
    stats: Py<PyAny>,
    /// The report's JSON text, as ``concur solve --json`` prints it.
    #[pyo3(get)]
    json: String,
    /// Seconds the run took.
    #[pyo3(get)]
    wall_s: f64,
    /// Work spent (to the solution when solved, else the whole budget) in :attr:`work_unit`:
    /// a map's iterations over its trials, a tree search's nodes, a local search's moves or
    /// iterations.
    #[pyo3(get)]
    work: u64,
    #[pyo3(get)]
    work_unit: String,
    /// What found the solution (``"map"``, ``"map+ac"``, ``"scan"``...), None when unsolved.
    #[pyo3(get)]
    mechanism: Option<String>,
    /// Per trial of a map (empty for the searches): its iterations (numpy int64).
    #[pyo3(get)]
    trial_iterations: Py<PyAny>,
    /// Per trial of a map: whether it solved (numpy bool).
    #[pyo3(get)]
    trial_solved: Py<PyAny>,
    /// Per trial of a map: the iteration it solved at, -1 if it did not (numpy int64).
    #[pyo3(get)]
    trial_solved_at: Py<PyAny>,
    /// Per trial of a map: its best score (numpy int64).
    #[pyo3(get)]
    trial_best_score: Py<PyAny>,
    /// Per trial of a map in rate mode: the solutions it found (numpy int64).
    #[pyo3(get)]
    trial_solutions: Py<PyAny>,
    /// Per trial of a map: every counter the run keeps, as dicts.
    #[pyo3(get)]
    trials: Py<PyAny>,
    /// Rate mode (``keep_going=True``): every verified solution in the order found, as
    /// :class:`Solution`; None for a run that stops at its first.
    #[pyo3(get)]
    solutions: Option<Py<PyAny>>,
    /// Rate mode: how many of them are distinct up to turning the board.
    #[pyo3(get)]
    distinct_solutions: Option<u64>,
    /// What the command line would have said on stderr (the backend ``auto`` picked, threads
    /// capped at the cores).
    #[pyo3(get)]
    notes: Vec<String>,
    /// With ``certify=``: the fixed-point certificates, as dicts (the command line's
    /// ``--dump-state`` files), in trial order.
    #[pyo3(get)]
    certificates: Py<PyAny>,
    /// A certificate that could not be made (the run stands).
    #[pyo3(get)]
    certificate_error: Option<String>,
}

impl PyRunResult {
    fn new(py: Python<'_>, puzzle: &Puzzle, solved: Solved, notes: Vec<String>) -> PyResult<Self> {
        let mut report = solved.report;
        let link = report.board.as_ref().and_then(|b| format::viewer_link(puzzle, b));
        report.printed.viewer_link.clone_from(&link);
        let json = serde_json::to_string(&report).map_err(|e| error(Kind::Concur, e.to_string()))?;
        let board = report
            .board
            .as_ref()
            .map(|b| -> PyResult<Py<PyAny>> {
                let a = board_array(py, b);
                a.call_method1("setflags", (false,))?;
                Ok(a.into_any().unbind())
            })
            .transpose()?;
        let t = &solved.trials;
        let solutions = match &report.solutions {
            None => None,
            Some(found) => {
                let list = PyList::empty(py);
                for f in found {
                    list.append(PySolution::from_found(py, f))?;
                }
                Some(list.into_any().unbind())
            }
        };
        let certificates = PyList::empty(py);
        for (_, c) in &solved.certificates {
            certificates.append(from_serde(py, c)?)?;
        }
        Ok(PyRunResult {
            method: report.method().name().to_string(),
            solved: report.solved,
            score: report.best_score,
            max_score: report.max_score,
            viewer_link: link,
            board,
            stats: from_json_text(py, &json)?.unbind(),
            json,
            wall_s: report.wall_s,
            work: solved.work,
            work_unit: solved.work_unit.to_string(),
            mechanism: solved.mechanism,
            trial_iterations: frozen(vector(py, t.iter().map(|t| t.iterations as i64).collect()))?,
            trial_solved: frozen(vector(py, t.iter().map(|t| t.solved_at.is_some()).collect()))?,
            trial_solved_at: frozen(vector(py, t.iter().map(|t| t.solved_at.map_or(-1, |i| i as i64)).collect()))?,
            trial_best_score: frozen(vector(py, t.iter().map(|t| t.best_score as i64).collect()))?,
            trial_solutions: frozen(vector(py, t.iter().map(|t| t.solutions as i64).collect()))?,
            trials: from_serde(py, t)?.unbind(),
            solutions,
            distinct_solutions: solved.distinct_solutions,
            notes,
            certificates: certificates.into_any().unbind(),
            certificate_error: solved.certificate_error,
        })
    }
}

#[pymethods]
impl PyRunResult {
    fn __repr__(&self) -> String {
        format!(
            "Result(method={:?}, solved={}, score={}/{}, wall_s={:.3})",
            self.method,
            if self.solved { "True" } else { "False" },
            self.score,
            self.max_score,
            self.wall_s
        )
    }
}

/// One verified solution of a rate-mode run (``keep_going=True``), as it was found.
#[pyclass(module = "concur", name = "Solution", frozen)]
pub struct PySolution {
    /// Its place in the order found (0, 1, ...): by round, then by trial.
    #[pyo3(get)]
    index: usize,
    /// The trial that found it.
    #[pyo3(get)]
    trial: usize,
    /// The iterations of its segment: from the trial's start, or from where the trial went on
    /// after its previous solution, to this one (the trial's run length to it).
    #[pyo3(get)]
    iterations: u64,
    /// The trial's own iteration count at the solution.
    #[pyo3(get)]
    trial_iteration: u64,
    /// ``"map"`` (an exact fixed point of the map) or ``"map+ac"`` (completed by search).
    #[pyo3(get)]
    mechanism: String,
    /// Seconds from the run's start to the end of the round that found it.
    #[pyo3(get)]
    wall_s: f64,
    /// The batch's trial-iterations at the end of that round.
    #[pyo3(get)]
    batch_trial_iterations: u64,
    /// Its class up to turning the board (0, 1, ... in the order first found), and whether
    /// it is the first of its class.
    #[pyo3(get)]
    class_id: usize,
    #[pyo3(get)]
    new_class: bool,
    /// The board in the community's viewer (None past 26 colours).
    #[pyo3(get)]
    viewer_link: Option<String>,
    /// The board in Brendan Owen's solution format.
    #[pyo3(get)]
    text: String,
    /// The board: a read-only numpy array (cells, 2) of piece and clockwise quarter turns.
    #[pyo3(get)]
    board: Py<PyAny>,
}

impl PySolution {
    fn from_found(py: Python<'_>, f: &Found) -> Self {
        let board = board_array(py, &f.board);
        let _ = board.call_method1("setflags", (false,));
        PySolution {
            index: f.index,
            trial: f.trial,
            iterations: f.segment_iterations,
            trial_iteration: f.trial_iteration,
            mechanism: f.mechanism.as_str().to_string(),
            wall_s: f.wall_s,
            batch_trial_iterations: f.batch_trial_iterations,
            class_id: f.class,
            new_class: f.new_class,
            viewer_link: f.viewer_link.clone(),
            text: f.board_text.clone(),
            board: board.into_any().unbind(),
        }
    }
}

#[pymethods]
impl PySolution {
    fn __repr__(&self) -> String {
        format!(
            "Solution(index={}, trial={}, iterations={}, trial_iteration={}, mechanism={:?})",
            self.index, self.trial, self.iterations, self.trial_iteration, self.mechanism
        )
    }
}

/// What a rate-mode run's thread sends: each solution as it is found, then the run's end.
enum Msg {
    Found(Box<Found>),
    Done(Box<Result<(Solved, Vec<String>), SolveError>>),
}

/// A rate-mode run on a thread of its own, its solutions read one at a time (behind
/// ``concur.solutions``). Closing it, or dropping it, trips the run's token: the run ends at
/// its next round.
#[pyclass(module = "concur", name = "_SolutionStream")]
pub struct Stream {
    rx: Mutex<Option<Receiver<Msg>>>,
    cancel: Cancel,
    handle: Mutex<Option<JoinHandle<()>>>,
    failed: Arc<Mutex<Option<PyErr>>>,
    puzzle: Arc<Puzzle>,
}

impl Stream {
    /// Waits for the run's thread to end, with the GIL released.
    fn join(&self, py: Python<'_>) {
        let handle = self.handle.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            py.detach(|| {
                let _ = h.join();
            });
        }
    }
}

#[pymethods]
impl Stream {
    /// Starts a rate-mode run of ``puzzle`` with the options ``given`` (``keep_going`` is
    /// set) on a thread of its own.
    #[new]
    #[pyo3(signature = (puzzle, given, progress=None))]
    fn new(puzzle: PyRef<'_, PyPuzzle>, given: &Bound<'_, PyDict>, progress: Option<Py<PyAny>>) -> PyResult<Self> {
        given.set_item("keep_going", true)?;
        let mut spec = spec_of(given, None)?;
        let p = puzzle.inner.clone();
        let cancel = Cancel::new();
        let (tx, rx) = mpsc::channel::<Msg>();
        let to_reader = tx.clone();
        spec.on_solution = Some(SolutionSink::new(move |f: &Found| {
            to_reader.send(Msg::Found(Box::new(f.clone()))).map_err(|_| "the reader is gone".to_string())
        }));
        let mut heard = Heard::new(progress, &spec, &p, &cancel);
        let failed = heard.failed.clone();
        let (pp, c) = (p.clone(), cancel.clone());
        let handle = std::thread::Builder::new()
            .name("concur-solutions".into())
            .spawn(move || {
                let out = run(&pp, &spec, &c, &mut heard);
                let _ = tx.send(Msg::Done(Box::new(out)));
            })
            .map_err(|e| error(Kind::Resource, format!("cannot start the run's thread: {e}")))?;
        Ok(Stream { rx: Mutex::new(Some(rx)), cancel, handle: Mutex::new(Some(handle)), failed, puzzle: p })
    }

    /// The next solution (a :class:`Solution`), or at the run's end its :class:`Result`;
    /// None once the run is over or closed. Ctrl-C stops the run and raises
    /// ``KeyboardInterrupt``.
    fn next_item(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        loop {
            let msg = py.detach(|| {
                let rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
                rx.as_ref().map(|rx| rx.recv_timeout(POLL))
            });
            match msg {
                None => return Ok(None),
                Some(Ok(Msg::Found(f))) => return Ok(Some(Py::new(py, PySolution::from_found(py, &f))?.into_any())),
                Some(Ok(Msg::Done(out))) => {
                    self.join(py);
                    self.rx.lock().unwrap_or_else(|e| e.into_inner()).take();
                    if let Some(e) = self.failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
                        return Err(e);
                    }
                    let (solved, notes) = out.map_err(|e| errors::solve(&e))?;
                    let r = PyRunResult::new(py, &self.puzzle, solved, notes)?;
                    return Ok(Some(Py::new(py, r)?.into_any()));
                }
                Some(Err(RecvTimeoutError::Timeout)) => {
                    if let Err(e) = py.check_signals() {
                        self.close(py);
                        return Err(e);
                    }
                }
                Some(Err(RecvTimeoutError::Disconnected)) => {
                    self.join(py);
                    self.rx.lock().unwrap_or_else(|e| e.into_inner()).take();
                    return Err(error(Kind::Concur, "internal error: the run's thread ended without a result"));
                }
            }
        }
    }

    /// Stops the run (at its next round) and waits for its thread to end.
    fn close(&self, py: Python<'_>) {
        self.cancel.cancel();
        self.join(py);
        self.rx.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

impl Drop for Stream {
    /// A stream dropped unread (garbage collected) stops its run; its thread is awaited when
    /// the interpreter can be released for it.
    fn drop(&mut self) {
        self.cancel.cancel();
        let handle = self.handle.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            Python::try_attach(|py| {
                py.detach(|| {
                    let _ = h.join();
                })
            });
        }
    }
}
