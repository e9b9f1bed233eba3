//! The unit grammar (satcc-core `units`) for Python: `satcc.units` wraps these, so a flag, a
//! `--set`, a campaign matrix, a keyword and a scenario file read a value the same way.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use satcc_core::dirspec::QueueSpec;
use satcc_core::units::{self, Raw, UnitError};

/// A Python value as the grammar sees it.
pub(crate) fn raw(v: &Bound<'_, PyAny>) -> Raw {
    if v.is_none() {
        Raw::None
    } else if let Ok(b) = v.downcast::<PyBool>() {
        Raw::Bool(b.is_true())
    } else if v.is_instance_of::<PyInt>() {
        Raw::Int(v.str().map(|s| s.to_string()).unwrap_or_default())
    } else if let Ok(f) = v.downcast::<PyFloat>() {
        Raw::Float(f.value())
    } else if let Ok(s) = v.downcast::<PyString>() {
        Raw::Str(s.to_string_lossy().into_owned())
    } else if v.is_instance_of::<PyDict>() {
        Raw::Table
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        Raw::Array
    } else {
        Raw::Other(v.repr().map(|s| s.to_string()).unwrap_or_default())
    }
}

/// A unit error as `ValueError(expected, why)`; `satcc.units.UnitError` is built from it.
fn err(e: UnitError) -> PyErr {
    PyValueError::new_err((e.expected, e.why))
}

/// `value` read as `kind`: "duration" (ns), "rate" (bit/s), "size" (bytes), "probability",
/// "packets" or "queue" ({"packets"|"bytes"|"bdp": n}).
#[pyfunction]
fn parse_unit(py: Python<'_>, kind: &str, value: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    let r = raw(value);
    Ok(match kind {
        "duration" => units::duration_ns(&r)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        "rate" => units::rate_bps(&r)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        "size" => units::size_bytes(&r)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        "packets" => units::packets(&r)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        "probability" => units::probability(&r)
            .map_err(err)?
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        "queue" => {
            let d = PyDict::new(py);
            match units::queue(&r).map_err(err)? {
                QueueSpec::Packets(n) => d.set_item("packets", n)?,
                QueueSpec::Bytes(n) => d.set_item("bytes", n)?,
                QueueSpec::Bdp(x) => d.set_item("bdp", x)?,
            }
            d.into_any().unbind()
        }
        other => return Err(PyValueError::new_err(format!("no unit kind {other:?}"))),
    })
}

/// How messages show a found value.
#[pyfunction]
fn describe(value: &Bound<'_, PyAny>) -> String {
    units::describe(&raw(value))
}

/// The grammar's hints and bounds, declared once in satcc-core.
#[pyfunction]
fn unit_constants<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("DURATION_HINT", units::DURATION_HINT)?;
    d.set_item("RATE_HINT", units::RATE_HINT)?;
    d.set_item("SIZE_HINT", units::SIZE_HINT)?;
    d.set_item("PROBABILITY_HINT", units::PROBABILITY_HINT)?;
    d.set_item("QUEUE_HINT", units::QUEUE_HINT)?;
    d.set_item("PACKETS_HINT", units::PACKETS_HINT)?;
    d.set_item("MAX_DURATION_NS", units::MAX_DURATION_NS)?;
    d.set_item("MAX_RATE_BPS", units::MAX_RATE_BPS)?;
    d.set_item("MAX_SIZE_BYTES", units::MAX_SIZE_BYTES)?;
    d.set_item("MAX_PACKETS", units::MAX_PACKETS)?;
    d.set_item("MAX_BDP", units::MAX_BDP)?;
    d.set_item("MAX_EXPONENT", units::MAX_EXPONENT)?;
    d.set_item("DESCRIBE_CHARS", units::DESCRIBE_CHARS)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_unit, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(unit_constants, m)?)?;
    Ok(())
}
