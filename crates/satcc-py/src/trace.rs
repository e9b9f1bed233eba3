//! Mahimahi traces: satcc-core's one reader (`models::trace_file`), for the scenario layer
//! (`linkmodels`: the line count, the period and the digest, no list of timestamps) and for
//! `satcc trace fit` (the timestamps as packed little-endian u64s, 8 B a line).

use std::path::PathBuf;

use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use satcc_core::models::trace_file::{self, Stamps, TraceError};

/// A refusal (a bad file, or one above the budget) is ValueError; an allocation that failed
/// is MemoryError.
fn py_err(e: TraceError) -> PyErr {
    match e {
        TraceError::Input(m) | TraceError::TooLarge(m) => PyValueError::new_err(m),
        TraceError::OutOfMemory(m) => PyMemoryError::new_err(m),
    }
}

fn load(py: Python<'_>, path: PathBuf, budget_bytes: Option<u64>) -> PyResult<Stamps> {
    // the file is read without the GIL: a long trace does not stop Python's other threads
    py.allow_threads(|| trace_file::load(&path, budget_bytes))
        .map_err(py_err)
}

/// `{"lines": int, "last_ms": int, "digest": str}` of the trace at `path` (parsed once per
/// process); ValueError naming the line for a bad trace or, before parsing, for one whose
/// lines need more than `budget_bytes` at 8 B a line; MemoryError when it does not fit.
#[pyfunction]
#[pyo3(signature = (path, budget_bytes=None))]
pub fn mahimahi_info(
    py: Python<'_>,
    path: PathBuf,
    budget_bytes: Option<u64>,
) -> PyResult<Bound<'_, PyDict>> {
    let s = load(py, path, budget_bytes)?;
    let d = PyDict::new(py);
    d.set_item("lines", s.ms.len())?;
    d.set_item("last_ms", *s.ms.last().expect("a trace has a line"))?;
    d.set_item("digest", &s.digest)?;
    Ok(d)
}

/// The timestamps of the trace at `path` as little-endian u64s (`numpy.frombuffer(b, "<u8")`).
#[pyfunction]
pub fn mahimahi_stamps(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyBytes>> {
    let s = load(py, path, None)?;
    PyBytes::new_with(py, s.ms.len() * 8, |buf| {
        for (chunk, v) in buf.chunks_exact_mut(8).zip(s.ms.iter()) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    })
}

fn load_csv(
    py: Python<'_>,
    path: PathBuf,
    default_loss: f64,
    budget_bytes: Option<u64>,
) -> PyResult<trace_file::Series> {
    py.allow_threads(|| trace_file::load_delay_csv(&path, default_loss, budget_bytes))
        .map_err(py_err)
}

/// `{"rows": int, "mean_delay_ns": float, "mean_loss": float, "digest": str}` of the delay/loss
/// CSV at `path` (rows without a loss take `default_loss`), the means weighted by time over
/// [0, duration_ns) as the model applies the rows (`trace_file::series_time_mean`); rows
/// needing more than `budget_bytes` at 24 B a row are refused before parsing (ValueError).
#[pyfunction]
#[pyo3(signature = (path, default_loss, duration_ns=None, budget_bytes=None))]
pub fn delay_csv_info(
    py: Python<'_>,
    path: PathBuf,
    default_loss: f64,
    duration_ns: Option<u64>,
    budget_bytes: Option<u64>,
) -> PyResult<Bound<'_, PyDict>> {
    let s = load_csv(py, path, default_loss, budget_bytes)?;
    let (delay, loss) = trace_file::series_time_mean(&s.rows, duration_ns);
    let d = PyDict::new(py);
    d.set_item("rows", s.rows.len())?;
    d.set_item("mean_delay_ns", delay)?;
    d.set_item("mean_loss", loss)?;
    d.set_item("digest", &s.digest)?;
    Ok(d)
}

/// The CSV's rows packed as little-endian (t_ns u64, delay_ns u64, loss f64), 24 B a row.
#[pyfunction]
pub fn delay_csv_rows(
    py: Python<'_>,
    path: PathBuf,
    default_loss: f64,
) -> PyResult<Bound<'_, PyBytes>> {
    let s = load_csv(py, path, default_loss, None)?;
    PyBytes::new_with(py, s.rows.len() * 24, |buf| {
        for (chunk, r) in buf.chunks_exact_mut(24).zip(s.rows.iter()) {
            chunk[..8].copy_from_slice(&r.at.as_nanos().to_le_bytes());
            chunk[8..16].copy_from_slice(&r.delay.as_nanos().to_le_bytes());
            chunk[16..].copy_from_slice(&r.loss.to_le_bytes());
        }
        Ok(())
    })
}
