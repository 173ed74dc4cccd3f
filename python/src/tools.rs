//! The other commands from Python: verify a board, count solutions, draw a board, read a
//! solution file, list the GPU adapters, read a ladder's records.

use crate::blocking::blocking;
use crate::convert::{board_array, board_of, from_serde};
use crate::errors::{self, Kind, error, input, spec_error};
use crate::puzzle::{PyPuzzle, in_range};
use concur::Cancel;
use concur::limits::{self, MemoryBudget};
use concur::meter::Watch;
use concur::puzzle::format;
use concur::search::backtrack::{self, CellOrder};
use concur::search::journal::{CountError, CountRequest, ScanCountRun};
use concur::verify::Consistency;
use numpy::PyArray2;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::path::PathBuf;

/// Checks ``board`` against ``puzzle`` exactly: every piece once, every rim side grey, every
/// interior join matched, the hints respected. ``board`` is an array (cells, 2) of piece and
/// clockwise quarter turns (or a result or solution). Returns a dict, as
/// ``concur verify --json`` prints it: ``valid``, ``score``, ``max_score``, ``problems`` (at
/// most eight reasons) and ``viewer_link``.
#[pyfunction]
pub fn verify<'py>(
    py: Python<'py>,
    puzzle: PyRef<'py, PyPuzzle>,
    board: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let p = &puzzle.inner;
    let b = board_of(p, board)?;
    let v = concur::verify::check(p, &b);
    let d = from_serde(py, &v)?;
    let link = if in_range(p, &b) { format::viewer_link(p, &b) } else { None };
    d.set_item("viewer_link", link)?;
    Ok(d)
}

/// Counts the solutions of ``puzzle`` by complete search: ``engine="scan"`` (the row scan,
/// turn symmetry, subtrees over ``threads`` threads, default every core) or ``"ac"`` (the
/// AC-4 backtracker, one thread). Stops after ``limit`` solutions or ``time_limit`` seconds,
/// or at Ctrl-C (then raises ``KeyboardInterrupt``). Returns a dict, as ``concur count --json``
/// prints it: ``solutions``, ``up_to_rotation`` (square boards without hints), ``complete``
/// (the count is exact), ``nodes``, ...
#[pyfunction]
#[pyo3(signature = (puzzle, engine="scan", *, limit=None, time_limit=None, threads=None))]
pub fn count<'py>(
    py: Python<'py>,
    puzzle: PyRef<'py, PyPuzzle>,
    engine: &str,
    limit: Option<u64>,
    time_limit: Option<f64>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let p = puzzle.inner.clone();
    let cancel = Cancel::new();
    let v = match engine {
        "scan" => {
            if threads == Some(0) {
                return Err(spec_error("--threads must be at least 1, got 0", Some("threads")));
            }
            let request = CountRequest {
                time_limit,
                limit,
                threads: threads.unwrap_or(0),
                symmetry: true,
                probes: 20_000,
                tasks: 0,
                reverse: false,
                journal: None,
                cancel: cancel.clone(),
            };
            let run = ScanCountRun::new(&p, request).map_err(count_error)?;
            let counted = blocking(py, &cancel, || run.run(|_| {}, |_, _, _, _| {}))?.map_err(count_error)?;
            counted.count.json(cancel.is_cancelled())
        }
        "ac" => {
            if threads.is_some() {
                return Err(spec_error("--threads has no effect with --engine ac", Some("threads")));
            }
            let time_limit =
                time_limit.map(|s| limits::seconds("--time-limit", s)).transpose().map_err(|e| errors::limit(&e))?;
            MemoryBudget::here()
                .and_then(|b| b.check_tables("count", limits::tables(&p, true)))
                .map_err(|e| errors::limit(&e))?;
            let watch = Watch::cancel(&cancel);
            let c = blocking(py, &cancel, || {
                backtrack::count(&p, Consistency::Ac4, CellOrder::MrvDegree, limit, time_limit, &watch)
            })?;
            c.json(cancel.is_cancelled())
        }
        other => return Err(spec_error(format!("engine must be 'scan' or 'ac', got {other:?}"), Some("engine"))),
    };
    from_serde(py, &v)
}

fn count_error(e: CountError) -> PyErr {
    match e {
        CountError::Limit(l) => errors::limit(&l),
        other => error(Kind::Concur, other.to_string()),
    }
}

/// ``board`` drawn as SVG text (each piece's four edge colours; mismatched joins in red).
#[pyfunction]
pub fn render_svg(puzzle: PyRef<'_, PyPuzzle>, board: &Bound<'_, PyAny>) -> PyResult<String> {
    let p = &puzzle.inner;
    let b = board_of(p, board)?;
    if !in_range(p, &b) {
        return Err(input(format!(
            "the board is not one of this puzzle's: it needs {} cells, each a piece below {} and a turn below 4",
            p.cells(),
            p.cells()
        )));
    }
    Ok(concur_lab::ladder::svg::board(p, &b))
}

/// Reads a solution of ``puzzle``: Brendan Owen's solution format (a file, as ``path``) or a
/// link of the community's viewer (a ``str`` starting with ``http``). Returns the board, an
/// array (cells, 2).
#[pyfunction]
pub fn read_solution<'py>(
    py: Python<'py>,
    puzzle: PyRef<'py, PyPuzzle>,
    path: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let p = &puzzle.inner;
    let text: Option<String> = path.extract::<String>().ok().filter(|s| s.starts_with("http"));
    let (bytes, name) = match text {
        Some(link) => (link.into_bytes(), "the link".to_string()),
        None => {
            let path: PathBuf = path.extract()?;
            (std::fs::read(&path)?, path.display().to_string())
        }
    };
    let b = format::read_solution(&bytes, p).map_err(|e| input(format!("{name}: {e}")))?;
    Ok(board_array(py, &b))
}

/// The GPU adapters wgpu finds here: a list of dicts (``name``, ``backend``,
/// ``device_type``, ``driver``); empty without one. Software adapters (lavapipe) are listed;
/// ``backend="auto"`` never picks them, ``backend="gpu"`` with ``adapter=`` does.
#[pyfunction]
pub fn adapters(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let found = py.detach(concur::backend::gpu::adapters);
    let list = PyList::empty(py);
    for a in found {
        list.append(from_serde(
            py,
            &serde_json::json!({
                "name": a.name, "backend": a.backend, "device_type": a.device_type, "driver": a.driver,
            }),
        )?)?;
    }
    Ok(list)
}

/// The ladder's run records of ``path``: every ``*.jsonl`` of a folder (or one file), as a
/// list of dicts (``concur ladder``'s records, read and checked as ``concur report`` reads
/// them).
#[pyfunction]
pub fn _read_results(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyAny>> {
    let records = if path.is_dir() {
        concur_lab::ladder::read_folder(&path)
    } else if path.is_file() {
        concur_lab::ladder::read_records(&path)
    } else {
        return Err(PyErr::from(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no results folder or file {}", path.display()),
        )));
    };
    from_serde(py, &records.map_err(input)?)
}

/// The methods, by name, in the engine's order.
#[pyfunction]
pub fn _methods() -> Vec<&'static str> {
    concur::MethodName::ALL.iter().map(|m| m.name()).collect()
}

/// The options ``method`` takes, as the engine declares them (one table per options type):
/// a list of dicts, each with its ``key`` (the keyword argument, the command line's flag with
/// ``_`` for ``-``), ``default``, ``doc``, ``heading`` and ``type`` (the keyword argument's,
/// as the stubs write it), the run's options first. The defaults of :class:`F1Map`,
/// :class:`DcMap` and :func:`solve` are read from it.
#[pyfunction]
pub fn _options<'py>(py: Python<'py>, method: &str) -> PyResult<Bound<'py, PyList>> {
    let name: concur::MethodName = method.parse().map_err(|e: String| spec_error(e, Some("method")))?;
    let list = PyList::empty(py);
    for o in concur::solve::options_of(name) {
        let item = pyo3::types::PyDict::new(py);
        item.set_item("key", o.row.key)?;
        item.set_item("default", from_serde(py, &o.default)?)?;
        item.set_item("doc", o.row.help())?;
        item.set_item("heading", o.row.heading.title())?;
        item.set_item("type", (o.row.python)())?;
        list.append(item)?;
    }
    Ok(list)
}
