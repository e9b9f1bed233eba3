//! The result columns to Python: `result_columns()` (satcc-core's declaration, which
//! `satcc.results` builds its schemas from) and the dictionaries `run_sim` returns, built by
//! iterating the records' columns (`cells()`), not by naming them.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use satcc_core::columns::{Cell, SUMMARY_FLOW_KEYS, TABLES};

use crate::sim::{floats, ints, list_of};

/// Every result table's columns in file order: `{table: [(name, type, unit, nullable,
/// source, doc, tcp_state, added), ...]}` (see `_native.pyi`).
#[pyfunction]
fn result_columns(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for t in TABLES {
        let cols = PyList::empty(py);
        for c in t.columns {
            cols.append(PyTuple::new(
                py,
                [
                    c.name.into_pyobject(py)?.into_any(),
                    c.ty.name().into_pyobject(py)?.into_any(),
                    c.unit.into_pyobject(py)?.into_any(),
                    pyo3::types::PyBool::new(py, c.nullable)
                        .to_owned()
                        .into_any(),
                    c.source.name().into_pyobject(py)?.into_any(),
                    c.doc.into_pyobject(py)?.into_any(),
                    pyo3::types::PyBool::new(py, c.tcp_state)
                        .to_owned()
                        .into_any(),
                    pyo3::types::PyBool::new(py, c.added).to_owned().into_any(),
                ],
            )?)?;
        }
        d.set_item(t.name, cols)?;
    }
    Ok(d)
}

/// The keys of each flow in the `--json` summary, in order (`columns::SUMMARY_FLOW_KEYS`).
#[pyfunction]
fn summary_flow_keys() -> Vec<&'static str> {
    SUMMARY_FLOW_KEYS.to_vec()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(result_columns, m)?)?;
    m.add_function(wrap_pyfunction!(summary_flow_keys, m)?)
}

/// A record's columns (`cells()`) into `d`, each under its declared name.
pub(crate) fn set_cells<'py, 'a>(
    d: &Bound<'py, PyDict>,
    cells: impl IntoIterator<Item = (&'static str, Cell<'a>)>,
) -> PyResult<()> {
    for (name, cell) in cells {
        d.set_item(name, cell_to_py(d.py(), cell)?)?;
    }
    Ok(())
}

fn cell_to_py<'py>(py: Python<'py>, cell: Cell<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match cell {
        Cell::Int(x) => x.into_pyobject(py)?.into_any(),
        Cell::Float(x) => x.into_pyobject(py)?.into_any(),
        Cell::OptInt(x) => x.into_pyobject(py)?.into_any(),
        Cell::OptFloat(x) => x.into_pyobject(py)?.into_any(),
        Cell::Str(x) => x.into_pyobject(py)?.into_any(),
        Cell::U32s(xs) => ints(py, xs)?,
        Cell::U64s(xs) => ints(py, xs)?,
        Cell::F64s(xs) => floats(py, xs)?,
        Cell::Strs(xs) => strings(py, xs)?,
        Cell::OptU64s(xs) => PyList::new(py, xs.iter().copied())?.into_any(),
        Cell::OptBools(xs) => PyList::new(py, xs.iter().copied())?.into_any(),
    })
}

/// A list of strings that are mostly a few distinct ones (a direction, a state's name): one
/// Python string per distinct value, shared by the list's slots.
fn strings<'py>(py: Python<'py>, xs: &[&'static str]) -> PyResult<Bound<'py, PyAny>> {
    let mut seen: Vec<(&'static str, Bound<'py, PyString>)> = Vec::new();
    for &x in xs {
        if !seen.iter().any(|(s, _)| *s == x) {
            seen.push((x, PyString::new(py, x)));
        }
    }
    list_of(py, xs, |x| {
        let (_, s) = seen
            .iter()
            .find(|(s, _)| *s == x)
            .expect("every value was seen above");
        s.clone().into_ptr()
    })
}
