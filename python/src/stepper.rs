//! The map steppers for research (`concur.F1Map`, `concur.DcMap`): the library's CPU drivers
//! (`f1::map::F1Map`, `dc::DcMap`), or F1's device stepper (`backend::gpu::f1::F1GpuStepper`,
//! `backend="gpu"`), advanced a few iterations at a time with their own per-iteration rule
//! and restarts (`step`), their states read and written, and both projections of the current
//! iterates computed on the host as the certificates compute them (`certify::evaluate`,
//! `certify::evaluate_dc`; on the device stepper from the iterates read back).

use crate::blocking::blocking;
use crate::convert::{boards_array, float_matrix, from_serde, matrix, vector};
use crate::errors::{self, Kind, error, input, spec_error};
use crate::puzzle::PyPuzzle;
use crate::run::given_map;
use concur::backend::capability::{self, Feature};
use concur::backend::gpu::f1::F1GpuStepper;
use concur::backend::gpu::{GpuBackend, GpuContext};
use concur::backend::{Backend, CpuBackend, EngineError};
use concur::certify::{self, Evaluation};
use concur::dc::{DcConfig, DcMap};
use concur::f1::map::{F1Map, MapConfig};
use concur::puzzle::{Board, Puzzle};
use concur::solve::SolveSpec;
use concur::{Cancel, SolveError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

/// The driver of either formulation, borrowing its puzzle for as long as the [`State`] that
/// holds both lives.
enum Engine {
    F1(Box<F1Map<'static>>, MapConfig),
    Dc(Box<DcMap<'static>>, DcConfig),
    /// F1 on the device; its iterates are read back on demand (`State::states`).
    F1Gpu(Box<F1GpuStepper<'static>>, MapConfig),
}

/// A stepper's state. Field order matters: `engine` borrows the puzzle behind `puzzle`, and is
/// dropped first.
struct State {
    engine: Engine,
    puzzle: Arc<Puzzle>,
    pool: Option<rayon::ThreadPool>,
    /// Iterations asked of every trial by finished steps.
    stepped: u64,
    /// Bumped by every change of the iterates; the evaluation below is of this version.
    version: u64,
    evaluated: Option<(u64, Arc<Vec<Evaluation>>)>,
    /// The device stepper's iterates as last read back, and the version they are of.
    read_back: Option<(u64, Vec<f32>)>,
}

impl State {
    fn install<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    fn trials(&self) -> usize {
        match &self.engine {
            Engine::F1(m, _) => m.trial_summaries().len(),
            Engine::Dc(m, _) => m.trial_summaries().len(),
            Engine::F1Gpu(m, _) => m.trials(),
        }
    }

    fn dim(&self) -> usize {
        match &self.engine {
            Engine::F1(m, _) => m.f1().dim(),
            Engine::Dc(m, _) => m.layout().slots(),
            Engine::F1Gpu(m, _) => m.f1().dim(),
        }
    }

    /// The device stepper's iterates read back into `read_back`, once per version.
    fn read_back_now(&mut self) -> Result<(), String> {
        if let Engine::F1Gpu(m, _) = &self.engine
            && self.read_back.as_ref().is_none_or(|(v, _)| *v != self.version)
        {
            let x = m.read_state().map_err(|e| e.to_string())?;
            self.read_back = Some((self.version, x));
        }
        Ok(())
    }

    /// Every trial's iterate, trial-major; the device stepper's read back once per version.
    fn states(&mut self) -> Result<&[f32], String> {
        self.read_back_now()?;
        Ok(match &self.engine {
            Engine::F1(m, _) => m.states(),
            Engine::Dc(m, _) => m.states(),
            Engine::F1Gpu(..) => &self.read_back.as_ref().expect("read back above").1,
        })
    }

    fn summaries(&self) -> Vec<concur::batch::TrialSummary> {
        match &self.engine {
            Engine::F1(m, _) => m.trial_summaries(),
            Engine::Dc(m, _) => m.trial_summaries(),
            Engine::F1Gpu(m, _) => m.trial_summaries(),
        }
    }

    /// Every trial's best board so far.
    fn best_boards(&self) -> Result<Vec<Board>, String> {
        match &self.engine {
            Engine::F1(m, _) => Ok((0..self.trials()).map(|t| m.best_board(t)).collect()),
            Engine::Dc(m, _) => Ok((0..self.trials()).map(|t| m.best_board(t)).collect()),
            Engine::F1Gpu(m, _) => m.best_boards().map_err(|e| e.to_string()),
        }
    }

    fn step(&mut self, k: u64, cancel: &Cancel) -> Result<bool, String> {
        let done = match &mut self.engine {
            Engine::F1(m, _) => match &self.pool {
                Some(p) => p.install(|| m.step(k, cancel)),
                None => m.step(k, cancel),
            },
            Engine::Dc(m, _) => match &self.pool {
                Some(p) => p.install(|| m.step(k, cancel)),
                None => m.step(k, cancel),
            },
            Engine::F1Gpu(m, _) => {
                let out = m.step(k, cancel);
                // A failed step may still have moved the iterates.
                self.version += 1;
                out.map_err(|e| e.to_string())?
            }
        };
        self.version += 1;
        if done {
            self.stepped += k;
        }
        Ok(done)
    }

    /// Both projections of every trial's iterate, their gap and the board read out of them,
    /// as a certificate of that iterate would hold them (cached until the iterates change).
    fn evaluate(&mut self) -> Result<Arc<Vec<Evaluation>>, String> {
        if let Some((v, e)) = &self.evaluated
            && *v == self.version
        {
            return Ok(e.clone());
        }
        let trials = self.trials();
        // The device stepper's iterates, read back (the others' are in host memory).
        self.read_back_now()?;
        let puzzle: &Puzzle = &self.puzzle;
        // Each closure holds the engine's tables only: the device batch is not shared across
        // threads.
        let out: Result<Vec<Evaluation>, String> = match &self.engine {
            Engine::F1(m, c) => self.install(|| {
                (0..trials)
                    .into_par_iter()
                    .map(|t| certify::evaluate(puzzle, m.f1(), c.kind, c.beta, c.edge, c.join_weights, m.state(t)))
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.to_string())
            }),
            Engine::F1Gpu(m, c) => {
                let x = &self.read_back.as_ref().expect("read back above").1;
                let (f1, kind, beta, edge, weights) = (m.f1(), c.kind, c.beta, c.edge, c.join_weights);
                self.install(|| {
                    x.par_chunks(f1.dim())
                        .map(|xt| certify::evaluate(puzzle, f1, kind, beta, edge, weights, xt))
                        .collect::<Result<_, _>>()
                        .map_err(|e| e.to_string())
                })
            }
            Engine::Dc(m, c) => self.install(|| {
                (0..trials)
                    .into_par_iter()
                    .map(|t| {
                        let lambda = (c.weights == concur::dc::Weights::Adaptive).then(|| m.weights(t));
                        certify::evaluate_dc(puzzle, m.layout(), c.kind, c.beta, lambda, m.pruned(t), m.state(t))
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.to_string())
            }),
        };
        let e = Arc::new(out?);
        self.evaluated = Some((self.version, e.clone()));
        Ok(e)
    }

    fn set_state(&mut self, t: usize, x: &[f32]) -> Result<(), String> {
        self.version += 1;
        match &mut self.engine {
            Engine::F1(m, _) => {
                m.set_state(t, x);
                Ok(())
            }
            Engine::Dc(m, _) => m.set_state(t, x).map_err(|e| e.to_string()),
            Engine::F1Gpu(m, _) => m.write_state(t, x).map_err(|e| e.to_string()),
        }
    }

    fn certificate(&mut self, t: usize) -> Result<certify::Certificate, String> {
        let it = self.summaries()[t].iterations;
        self.read_back_now()?;
        let puzzle: &Puzzle = &self.puzzle;
        match &self.engine {
            Engine::F1Gpu(m, c) => {
                let dim = m.f1().dim();
                let x = &self.read_back.as_ref().expect("read back above").1[t * dim..(t + 1) * dim];
                certify::make(puzzle, c.kind, c.beta, c.edge, c.join_weights, t, it, None, x, None)
            }
            Engine::F1(m, c) => {
                certify::make(puzzle, c.kind, c.beta, c.edge, c.join_weights, t, it, None, m.state(t), None)
            }
            Engine::Dc(m, c) => {
                let state = certify::DcState { x: m.state(t), lambda: Some(m.weights(t)), pruned: m.pruned(t) };
                certify::make_dc(puzzle, c, t, it, None, state, None)
            }
        }
        .map_err(|e| e.to_string())
    }
}

/// Keys a stepper does not take: what it does not do (stop rules, rate mode, a clock) and
/// where it does not run.
const NOT_STEPPED: [(&str, &str); 4] = [
    ("keep_going", "rate mode is concur.solutions'; a stepper's solved trial stands still"),
    ("all_trials", "a stepper runs every trial; a solved trial stands still"),
    ("time_limit", "a stepper runs the iterations step() asks for"),
    ("solutions", "rate mode is concur.solutions'"),
];

/// The base of ``concur.F1Map`` and ``concur.DcMap`` (see them): a batch of trials of one of
/// the maps, on the CPU (F1 also on the GPU), advanced by :meth:`step`.
#[pyclass(module = "concur", name = "_Stepper", subclass)]
pub struct Stepper {
    state: Mutex<State>,
}

impl Stepper {
    /// The state, or a `ConcurError` when another thread is using it.
    fn with<T>(&self, f: impl FnOnce(&mut State) -> PyResult<T>) -> PyResult<T> {
        let mut g = self.state.try_lock().map_err(|_| busy())?;
        f(&mut g)
    }

    fn evaluation(&self, py: Python<'_>) -> PyResult<Arc<Vec<Evaluation>>> {
        let cancel = Cancel::new();
        let out = blocking(py, &cancel, || -> Result<_, String> {
            let mut g = self.state.try_lock().map_err(|_| busy_text())?;
            g.evaluate()
        })?;
        out.map_err(|e| error(Kind::Concur, format!("cannot project: {e}")))
    }
}

fn busy_text() -> String {
    "the stepper is in use by another thread".into()
}

fn busy() -> PyErr {
    error(Kind::Concur, busy_text())
}

#[pymethods]
impl Stepper {
    /// ``formulation``: ``"f1"`` (``given["method"]`` rrr or dm) or ``"dc"``; ``given``: the
    /// options, keyed as ``concur.solve``'s; ``backend``: ``"cpu"`` (or ``"auto"``, which
    /// stays on the CPU), or ``"gpu"`` for F1 on the device named by ``adapter`` (a part of
    /// its name; None: the first adapter found).
    #[new]
    #[pyo3(signature = (puzzle, formulation, given, backend="cpu", adapter=None))]
    fn new(
        py: Python<'_>,
        puzzle: PyRef<'_, PyPuzzle>,
        formulation: &str,
        given: &Bound<'_, PyDict>,
        backend: &str,
        adapter: Option<&str>,
    ) -> PyResult<Self> {
        let on_gpu = match backend {
            "cpu" | "auto" => false,
            // The capability table's stepper column: divide and concur does not step on the device.
            "gpu" if formulation == "dc" && !capability::row(Feature::Dc).stepper.yes => {
                return Err(spec_error(
                    "divide and concur steps on the cpu backend (concur.solve runs it on the gpu)",
                    Some("backend"),
                ));
            }
            "gpu" => true,
            other => {
                return Err(spec_error(
                    format!("backend must be 'cpu', 'auto' or 'gpu', got {other:?}"),
                    Some("backend"),
                ));
            }
        };
        if adapter.is_some() && !on_gpu {
            return Err(spec_error(
                format!(
                    "adapter= picks the device of backend='gpu'; the stepper on backend={backend:?} runs on the cpu"
                ),
                Some("adapter"),
            ));
        }
        if adapter.is_some_and(|a| a.eq_ignore_ascii_case("all")) {
            return Err(spec_error("the device stepper runs on one adapter, not 'all'", Some("adapter")));
        }
        let mut map = given_map(given)?;
        for (key, why) in NOT_STEPPED {
            if map.contains_key(key) {
                return Err(spec_error(
                    format!("{} has no effect on a stepper: {why}", concur::error::flag(key)),
                    Some(key),
                ));
            }
        }
        if map.contains_key("backend") || map.contains_key("adapter") {
            return Err(spec_error("give the stepper's backend as backend= and adapter=", Some("backend")));
        }
        match formulation {
            "f1" => {}
            "dc" => {
                map.insert("method".into(), "dc".into());
            }
            other => return Err(error(Kind::Concur, format!("unknown formulation {other:?}"))),
        }
        let spec = SolveSpec::from_given(&map).map_err(|e| errors::spec(&e))?;
        let is_f1 = spec.method.f1().is_some();
        if is_f1 != (formulation == "f1") {
            let want = if formulation == "f1" { "rrr or dm" } else { "dc" };
            return Err(spec_error(format!("map must be {want}"), Some("map")));
        }
        let p = puzzle.inner.clone();
        let cancel = Cancel::new();
        let gpu = match on_gpu {
            true => Some(GpuBackend::new(py.detach(|| GpuContext::open(adapter)).map_err(|e| errors::gpu(&e))?)),
            false => None,
        };
        let cpu = CpuBackend;
        let backend: &dyn Backend = match &gpu {
            Some(g) => g,
            None => &cpu,
        };
        // The checks of a solve on the same backend: what it runs, memory, threads.
        let checked: Result<(), SolveError> = spec.preflight(&p, backend);
        checked.map_err(|e| match e {
            SolveError::Engine(EngineError::Unsupported(u)) => {
                spec_error(format!("{u} (the stepper runs on the {} backend)", backend.place().name()), Some("backend"))
            }
            other => errors::solve(&other),
        })?;
        let pool = match spec.run.threads {
            None => None,
            Some(n) => {
                let (n, _) = concur::limits::cap_threads("threads", n);
                Some(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(n)
                        .build()
                        .map_err(|e| error(Kind::Resource, format!("cannot start {n} threads: {e}")))?,
                )
            }
        };
        let max_iters = spec.run.max_iters.unwrap_or(u64::MAX);
        // SAFETY: the engine borrows the puzzle behind the Arc, a heap allocation that does
        // not move. `State` holds both, the engine declared (so dropped) before the Arc; the
        // Arc is never replaced and the engine never moved out of the state, so the borrow
        // never outlives the puzzle.
        let borrowed: &'static Puzzle = unsafe { &*Arc::as_ptr(&p) };
        let no_board =
            |e: concur::assign::AssignError| input(format!("the puzzle has no board that fits its rim: {e}"));
        let engine = match &gpu {
            // F1 on the device: the device stepper's own refusals are the backend's.
            Some(g) => {
                let mut cfg = spec.map_config(&cancel).expect("an F1 method");
                cfg.assign = g.f1_assign(&cfg);
                cfg.run.max_iters = max_iters;
                let ctx = g.context().clone();
                let m = py.detach(|| F1GpuStepper::new(ctx, borrowed, cfg.clone())).map_err(|e| match e {
                    EngineError::Unsupported(u) => spec_error(u.to_string(), Some("backend")),
                    EngineError::Gpu(g) => errors::gpu(&g),
                    EngineError::Assign(a) => no_board(a),
                    other => error(Kind::Concur, other.to_string()),
                })?;
                Engine::F1Gpu(Box::new(m), cfg)
            }
            None => py
                .detach(|| -> Result<Engine, concur::assign::AssignError> {
                    if is_f1 {
                        let mut cfg = spec.map_config(&cancel).expect("an F1 method");
                        cfg.assign = cpu.f1_assign(&cfg);
                        cfg.run.max_iters = max_iters;
                        let m = F1Map::new(borrowed, cfg.clone())?;
                        Ok(Engine::F1(Box::new(m), cfg))
                    } else {
                        let mut cfg = spec.dc_config(&cancel).expect("divide and concur");
                        cfg.run.max_iters = max_iters;
                        let m = DcMap::new(borrowed, cfg.clone())?;
                        Ok(Engine::Dc(Box::new(m), cfg))
                    }
                })
                .map_err(no_board)?,
        };
        let state = State { engine, puzzle: p, pool, stepped: 0, version: 0, evaluated: None, read_back: None };
        Ok(Stepper { state: Mutex::new(state) })
    }

    /// Advances every trial by ``k`` iterations (fewer at ``max_iters``), exactly as a run of
    /// the command line with the same seed and options iterates it; a solved trial stands
    /// still. Releases the GIL; Ctrl-C stops it at the next round of each trial (the trials
    /// may then stand at different iterations: see :attr:`trial_iterations`) and raises
    /// ``KeyboardInterrupt``.
    #[pyo3(signature = (k=1))]
    fn step(&self, py: Python<'_>, k: u64) -> PyResult<()> {
        let cancel = Cancel::new();
        let out = blocking(py, &cancel, || -> Result<bool, String> {
            let mut g = self.state.try_lock().map_err(|_| busy_text())?;
            g.step(k, &cancel)
        })?;
        out.map(|_| ()).map_err(|e| error(Kind::Concur, e))
    }

    /// A copy of the iterates: numpy float32 (trials, dim), one row per trial (F1: the
    /// edge-colour state ``x[(c * 4 + s) * K + k]``; divide and concur: the replica slots).
    #[getter]
    fn x<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cancel = Cancel::new();
        let x = blocking(py, &cancel, || -> Result<_, String> {
            let mut g = self.state.try_lock().map_err(|_| busy_text())?;
            let (trials, dim) = (g.trials(), g.dim());
            Ok((g.states()?.to_vec(), trials, dim))
        })?;
        let (x, trials, dim) = x.map_err(|e| error(Kind::Concur, format!("cannot read the iterates: {e}")))?;
        Ok(matrix(py, x, trials, dim).into_any())
    }

    /// Sets the iterates: ``x`` an array (trials, dim), or with ``trial`` one trial's (dim,).
    /// Each trial set goes on from there as from a restart (cold assignments, no cycle
    /// memory); its counters stay.
    #[pyo3(signature = (x, trial=None))]
    fn set_x(&self, x: &Bound<'_, PyAny>, trial: Option<usize>) -> PyResult<()> {
        self.with(|s| {
            let (trials, dim) = (s.trials(), s.dim());
            let which: Vec<usize> = match trial {
                Some(t) if t < trials => vec![t],
                Some(t) => return Err(input(format!("trial {t} is past the {trials} trials"))),
                None => (0..trials).collect(),
            };
            let v = float_matrix(x, which.len(), dim, "x")?;
            for (i, &t) in which.iter().enumerate() {
                s.set_state(t, &v[i * dim..(i + 1) * dim]).map_err(|e| error(Kind::Concur, e))?;
            }
            Ok(())
        })
    }

    /// Both projections of the current iterates, as the certificates compute them: a dict
    /// with ``pa_fb`` and ``pb_fa`` (float32 (trials, dim)), ``gap`` (float64 (trials,)),
    /// ``boards`` (int64 (trials, cells, 2), the board read out of them) and ``scores``.
    fn projections<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let ev = self.evaluation(py)?;
        let (trials, dim) = (ev.len(), ev.first().map_or(0, |e| e.pa_fb.len()));
        let d = PyDict::new(py);
        let pa: Vec<f32> = ev.iter().flat_map(|e| e.pa_fb.iter().copied()).collect();
        let pb: Vec<f32> = ev.iter().flat_map(|e| e.pb_fa.iter().copied()).collect();
        d.set_item("pa_fb", matrix(py, pa, trials, dim))?;
        d.set_item("pb_fa", matrix(py, pb, trials, dim))?;
        d.set_item("gap", vector(py, ev.iter().map(|e| e.gap).collect()))?;
        d.set_item("boards", self.boards_of(py, &ev)?)?;
        d.set_item("scores", self.scores_of(py, &ev)?)?;
        Ok(d)
    }

    /// Per trial, ``||pa_fb - pb_fa||`` at the current iterate (numpy float64 (trials,)):
    /// zero exactly at a fixed point; a certificate's ``gap``.
    #[getter]
    fn gap<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ev = self.evaluation(py)?;
        Ok(vector(py, ev.iter().map(|e| e.gap).collect()).into_any())
    }

    /// Per trial, the board read out of the current iterate (a certificate's ``board``):
    /// numpy int64 (trials, cells, 2).
    #[getter]
    fn boards<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ev = self.evaluation(py)?;
        self.boards_of(py, &ev)
    }

    /// Per trial, the score of :attr:`boards` (numpy int64 (trials,)).
    #[getter]
    fn scores<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ev = self.evaluation(py)?;
        self.scores_of(py, &ev)
    }

    /// Per trial, its best board so far (its solution once solved): (trials, cells, 2).
    #[getter]
    fn best_boards<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(|s| {
            let b = s.best_boards().map_err(|e| error(Kind::Concur, format!("cannot read the best boards: {e}")))?;
            Ok(boards_array(py, &b, s.puzzle.cells()).into_any())
        })
    }

    /// Per trial, its best score so far (numpy int64 (trials,)).
    #[getter]
    fn best_scores<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(|s| Ok(vector(py, s.summaries().iter().map(|t| t.best_score as i64).collect()).into_any()))
    }

    /// Per trial, whether it has solved (numpy bool (trials,)); a solved trial stands still.
    #[getter]
    fn solved<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(|s| Ok(vector(py, s.summaries().iter().map(|t| t.solved_at.is_some()).collect()).into_any()))
    }

    /// Per trial, the iteration it solved at, -1 if it has not (numpy int64 (trials,)).
    #[getter]
    fn solved_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(|s| {
            Ok(vector(py, s.summaries().iter().map(|t| t.solved_at.map_or(-1, |i| i as i64)).collect()).into_any())
        })
    }

    /// Per trial, the iterations it has run (numpy int64 (trials,)).
    #[getter]
    fn trial_iterations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(|s| Ok(vector(py, s.summaries().iter().map(|t| t.iterations as i64).collect()).into_any()))
    }

    /// Iterations asked of every trial by the steps so far (the sum of their ``k``).
    #[getter]
    fn iterations(&self) -> PyResult<u64> {
        self.with(|s| Ok(s.stepped))
    }

    /// Per trial, every counter a run keeps (restarts, stall restarts...), as dicts.
    #[getter]
    fn trial_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(|s| from_serde(py, &s.summaries()))
    }

    /// Trials in the batch.
    #[getter]
    fn trials(&self) -> PyResult<usize> {
        self.with(|s| Ok(s.trials()))
    }

    /// Floats per trial's iterate.
    #[getter]
    fn dim(&self) -> PyResult<usize> {
        self.with(|s| Ok(s.dim()))
    }

    /// Divide and concur: each trial's constraint weights (numpy float32 (trials,
    /// constraints); all 1 with uniform weights). F1: None.
    #[getter]
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.with(|s| match &s.engine {
            Engine::F1(..) | Engine::F1Gpu(..) => Ok(None),
            Engine::Dc(m, _) => {
                let trials = s.trials();
                let k = m.layout().constraints();
                let v: Vec<f32> = (0..trials).flat_map(|t| m.weights(t).iter().copied()).collect();
                Ok(Some(matrix(py, v, trials, k).into_any()))
            }
        })
    }

    /// The fixed-point certificate of trial ``trial``'s current iterate, as a dict (the
    /// format of ``concur solve --dump-state`` and ``concur verify --state``).
    fn certificate<'py>(&self, py: Python<'py>, trial: usize) -> PyResult<Bound<'py, PyAny>> {
        self.with(|s| {
            if trial >= s.trials() {
                return Err(input(format!("trial {trial} is past the {} trials", s.trials())));
            }
            let c = s.certificate(trial).map_err(|e| error(Kind::Concur, e))?;
            from_serde(py, &c)
        })
    }
}

impl Stepper {
    fn boards_of<'py>(&self, py: Python<'py>, ev: &[Evaluation]) -> PyResult<Bound<'py, PyAny>> {
        let cells = self.with(|s| Ok(s.puzzle.cells()))?;
        let b: Vec<Board> = ev.iter().map(|e| e.board.clone()).collect();
        Ok(boards_array(py, &b, cells).into_any())
    }

    fn scores_of<'py>(&self, py: Python<'py>, ev: &[Evaluation]) -> PyResult<Bound<'py, PyAny>> {
        let puzzle = self.with(|s| Ok(s.puzzle.clone()))?;
        Ok(vector(py, ev.iter().map(|e| puzzle.score(&e.board) as i64).collect()).into_any())
    }
}
