//! `concur._concur`: the compiled part of the Python package `concur` (`python/concur/`),
//! which re-exports it beside pure-Python helpers. Every run goes through the library's one
//! entry point (`concur::solve::solve` with a `SolveSpec` built by `SolveSpec::from_given`
//! from the options a user gave, keyed as the command line's flags), on a worker thread while
//! the calling thread, with the GIL released, watches for Ctrl-C. See docs/python.md.

mod blocking;
mod convert;
mod errors;
mod puzzle;
mod run;
mod stepper;
mod tools;

use pyo3::prelude::*;

#[pymodule]
fn _concur(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<puzzle::PyPuzzle>()?;
    m.add_class::<run::PyRunResult>()?;
    m.add_class::<run::PySolution>()?;
    m.add_class::<run::Stream>()?;
    m.add_class::<stepper::Stepper>()?;
    m.add_function(wrap_pyfunction!(run::_solve, m)?)?;
    m.add_function(wrap_pyfunction!(tools::verify, m)?)?;
    m.add_function(wrap_pyfunction!(tools::count, m)?)?;
    m.add_function(wrap_pyfunction!(tools::render_svg, m)?)?;
    m.add_function(wrap_pyfunction!(tools::read_solution, m)?)?;
    m.add_function(wrap_pyfunction!(tools::adapters, m)?)?;
    m.add_function(wrap_pyfunction!(tools::_read_results, m)?)?;
    m.add_function(wrap_pyfunction!(tools::_options, m)?)?;
    m.add_function(wrap_pyfunction!(tools::_methods, m)?)?;
    Ok(())
}
