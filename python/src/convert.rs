//! Values between Python and the library: options as JSON values (the keys and values of a
//! ladder entry), the library's JSON as Python objects, boards and arrays as numpy arrays.

use crate::errors::{input, spec_error};
use concur::puzzle::{Board, Placement, Puzzle};
use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Value};

/// A Python value as the JSON value of an option named `key`: `None`, booleans, integers,
/// finite floats, strings, paths, sequences (lists, tuples, numpy arrays) and dicts. A value
/// no option could hold is a `SpecError` naming the option.
pub fn to_json(key: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    let bad = |why: String| spec_error(format!("{}: {why}", concur::error::flag(key)), Some(key));
    if v.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        if let Ok(i) = v.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = v.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(bad(format!("{v} does not fit 64 bits")));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        let x = f.value();
        return serde_json::Number::from_f64(x).map(Value::Number).ok_or_else(|| {
            spec_error(format!("{} must be a finite number, got {x}", concur::error::flag(key)), Some(key))
        });
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_string()));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut o = Map::new();
        for (k, item) in d.iter() {
            let k: String = k.extract().map_err(|_| bad("dict keys must be strings".into()))?;
            o.insert(k.clone(), to_json(key, &item)?);
        }
        return Ok(Value::Object(o));
    }
    // A path (os.PathLike) reads as its text.
    if v.hasattr("__fspath__")? {
        let p = v.call_method0("__fspath__")?;
        return to_json(key, &p);
    }
    // numpy scalars and arrays: their plain Python values.
    if v.hasattr("tolist")? && !v.is_instance_of::<PyList>() {
        let plain = v.call_method0("tolist")?;
        if !plain.is(v) {
            return to_json(key, &plain);
        }
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for item in v.try_iter()? {
            out.push(to_json(key, &item?)?);
        }
        return Ok(Value::Array(out));
    }
    Err(bad(format!("cannot read a value of type {}", v.get_type().name()?)))
}

/// JSON text as Python objects, by Python's own `json.loads` (keys in the text's order).
pub fn from_json_text<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A serialisable value of the library as Python objects (the JSON it writes, read back).
pub fn from_serde<'py, T: serde::Serialize>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    let text =
        serde_json::to_string(v).map_err(|e| crate::errors::error(crate::errors::Kind::Concur, e.to_string()))?;
    from_json_text(py, &text)
}

/// A board as a numpy array (cells, 2): per cell, row-major from the top-left, the piece and
/// its clockwise quarter turns.
pub fn board_array<'py>(py: Python<'py>, board: &Board) -> Bound<'py, PyArray2<i64>> {
    let v: Vec<i64> = board.cells.iter().flat_map(|p| [i64::from(p.piece), i64::from(p.rot)]).collect();
    let a = Array2::from_shape_vec((board.cells.len(), 2), v).expect("two entries per cell");
    PyArray2::from_owned_array(py, a)
}

/// Boards of equal size as one numpy array (boards, cells, 2).
pub fn boards_array<'py>(py: Python<'py>, boards: &[Board], cells: usize) -> Bound<'py, PyArray3<i64>> {
    let v: Vec<i64> =
        boards.iter().flat_map(|b| b.cells.iter().flat_map(|p| [i64::from(p.piece), i64::from(p.rot)])).collect();
    let a = Array3::from_shape_vec((boards.len(), cells, 2), v).expect("two entries per cell");
    PyArray3::from_owned_array(py, a)
}

/// A vector as a numpy array.
pub fn vector<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyArray1<T>> {
    PyArray1::from_owned_array(py, Array1::from_vec(v))
}

/// A flat row-major matrix as a numpy array (rows, cols).
pub fn matrix<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>, rows: usize, cols: usize) -> Bound<'py, PyArray2<T>> {
    let a = Array2::from_shape_vec((rows, cols), v).expect("rows * cols values");
    PyArray2::from_owned_array(py, a)
}

/// An array-like of integers with `N` columns (a numpy array, nested lists or tuples), as
/// rows; `what` names it in the `InputError` for anything else (another shape, fractions,
/// non-numbers, values past 64 bits). An empty input is no rows.
pub fn int_rows<const N: usize>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<[i64; N]>> {
    let py = obj.py();
    let arr = py
        .import("numpy")?
        .call_method1("asarray", (obj,))
        .map_err(|e| input(format!("{what} is not an array of integers: {}", e.value(py))))?;
    let size: usize = arr.getattr("size")?.extract()?;
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    if size == 0 {
        return Ok(Vec::new());
    }
    if shape.len() != 2 || shape[1] != N {
        return Err(input(format!("{what} must be an (n, {N}) array of integers, got shape {shape:?}")));
    }
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "i" | "u" | "b" | "f" | "O") {
        return Err(input(format!("{what} must hold integers, got values of dtype {}", arr.getattr("dtype")?)));
    }
    let rows: Vec<Vec<Bound<'_, PyAny>>> = arr
        .call_method0("tolist")?
        .extract()
        .map_err(|_| input(format!("{what} must be an (n, {N}) array of integers")))?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let mut r = [0i64; N];
        for (slot, v) in r.iter_mut().zip(&row) {
            *slot = integer(v).ok_or_else(|| input(format!("{what} must hold integers, found {v}")))?;
        }
        out.push(r);
    }
    Ok(out)
}

/// An integer, or a float that holds one exactly (numpy's float arrays of whole numbers).
fn integer(v: &Bound<'_, PyAny>) -> Option<i64> {
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().ok();
    }
    let x: f64 = v.cast::<PyFloat>().ok()?.value();
    (x.is_finite() && x.fract() == 0.0 && x.abs() < 9.0e18).then_some(x as i64)
}

/// A board of `puzzle` from an array-like (cells, 2) of piece and turns, or an object with a
/// `board` attribute (a result or a solution). Placements out of range for the puzzle stay in
/// the board (the verifier names them); values no placement can hold are an `InputError`.
pub fn board_of(puzzle: &Puzzle, obj: &Bound<'_, PyAny>) -> PyResult<Board> {
    let obj = if obj.hasattr("board")? && !obj.hasattr("shape")? { obj.getattr("board")? } else { obj.clone() };
    if obj.is_none() {
        return Err(input("there is no board (None)"));
    }
    let rows = int_rows::<2>(&obj, "a board")?;
    let mut cells = Vec::with_capacity(rows.len());
    for [p, r] in rows {
        let (Ok(piece), Ok(rot)) = (u16::try_from(p), u8::try_from(r)) else {
            return Err(input(format!("a board entry [{p}, {r}] is no piece and turn")));
        };
        cells.push(Placement { piece, rot });
    }
    Ok(Board { width: puzzle.width(), height: puzzle.height(), cells })
}

/// An array-like of floats (rows, cols) as a flat row-major vector of f32; `what` names it.
pub fn float_matrix(obj: &Bound<'_, PyAny>, rows: usize, cols: usize, what: &str) -> PyResult<Vec<f32>> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let arr = np
        .call_method1("ascontiguousarray", (obj, np.getattr("float32")?))
        .map_err(|e| input(format!("{what} is not an array of numbers: {}", e.value(py))))?;
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    let flat_ok = rows == 1 && shape == [cols];
    if shape != [rows, cols] && !flat_ok {
        return Err(input(format!("{what} must have shape ({rows}, {cols}), got {shape:?}")));
    }
    let arr = arr.call_method1("reshape", (-1,))?;
    let arr = arr.cast_into::<PyArray1<f32>>().map_err(|_| input(format!("{what} is not a float array")))?;
    let v = arr.to_vec().map_err(|e| input(format!("{what}: {e}")))?;
    if v.iter().any(|x| !x.is_finite()) {
        return Err(input(format!("{what} holds values that are not finite (or past float32's range)")));
    }
    Ok(v)
}
