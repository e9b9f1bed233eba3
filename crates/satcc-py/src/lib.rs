//! satcc._native — the only PyO3 crate. Thin conversions between Python objects and the
//! Rust engines; no simulation logic lives here. The contract is documented in
//! `python/satcc/_native.pyi`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

mod calc;
mod drill;
mod parquet;
mod pcap;
mod sim;
mod trace;

/// Out of memory in Rust code: one line and exit 1, never an abort (satcc_core::mem).
#[global_allocator]
static ALLOC: satcc_core::mem::ExitOnOom = satcc_core::mem::ExitOnOom;

#[pyfunction]
fn cc_names() -> Vec<&'static str> {
    satcc_cc::names()
}

#[pyfunction]
fn cc_info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let info = satcc_cc::registry::info(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown congestion control {name:?}; known: {:?}",
            satcc_cc::names()
        ))
    })?;
    let d = PyDict::new(py);
    d.set_item("name", info.name)?;
    d.set_item("summary", info.summary)?;
    d.set_item("source", info.source)?;
    let params = PyList::empty(py);
    for p in info.params {
        let pd = PyDict::new(py);
        pd.set_item("name", p.name)?;
        pd.set_item("default", p.default)?;
        pd.set_item("unit", p.unit)?;
        pd.set_item("doc", p.doc)?;
        params.append(pd)?;
    }
    d.set_item("params", params)?;
    d.set_item("deviations", info.deviations.to_vec())?;
    Ok(d)
}

#[pyfunction]
fn cc_check(name: &str, params: &Bound<'_, PyAny>) -> PyResult<()> {
    let table = if params.is_none() {
        None
    } else {
        Some(sim::to_json(params, "cc")?)
    };
    let table = match &table {
        None => None,
        Some(t) => Some(
            t.as_object()
                .ok_or_else(|| PyValueError::new_err("cc: expected a table"))?,
        ),
    };
    check_cc(name, table).map_err(PyValueError::new_err)
}

/// Whether the algorithm `name` takes the parameters `table` (its registry's check).
pub(crate) fn check_cc(
    name: &str,
    table: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<(), String> {
    let p = match table {
        None => satcc_cc::Params::new(),
        Some(t) => satcc_cc::Params::from_json(t)?,
    };
    satcc_cc::lookup(name, &p)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The one-way delay (ns) over a GEO satellite at `altitude_m`, seen at the two elevations,
/// plus `extra_ns`: satcc-core's `GeoDelay::one_way`, the delay the simulator's GEO links use.
#[pyfunction]
fn geo_one_way_ns(
    altitude_m: f64,
    terminal_elevation_deg: f64,
    gateway_elevation_deg: f64,
    extra_ns: u64,
) -> u64 {
    satcc_core::models::geo::GeoDelay::Geometry {
        altitude_m,
        terminal_elevation_deg,
        gateway_elevation_deg,
        extra: satcc_core::SimDuration::from_nanos(extra_ns),
    }
    .one_way()
    .as_nanos()
}

/// The measured kernel turnarounds' quantile points, `{"sender": [(probability, ns), ...],
/// "receiver": [...]}` (`satcc_core::hostnoise`): the scenario layer puts them in the resolved
/// config, so a run's hash changes when the preset does.
#[pyfunction]
fn host_noise_kernel<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    use satcc_core::hostnoise::{KERNEL_RECEIVER_QUANTILES_NS, KERNEL_SENDER_QUANTILES_NS};
    let d = PyDict::new(py);
    d.set_item("sender", KERNEL_SENDER_QUANTILES_NS.to_vec())?;
    d.set_item("receiver", KERNEL_RECEIVER_QUANTILES_NS.to_vec())?;
    Ok(d)
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// A panic hook that prints one line and never a backtrace. The default hook captures a
/// backtrace when RUST_BACKTRACE is set; under memory pressure that capture fails to allocate,
/// and the allocation-error handler then blocks on the backtrace lock the panic holds: the
/// process hung for good. pyo3 turns the panic into a Python exception, which the
/// CLI reports as an internal error. Writing a `&str` and a `Location` to stderr allocates
/// nothing.
fn quiet_panic_hook(info: &std::panic::PanicHookInfo<'_>) {
    use std::io::Write;
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    let mut err = std::io::stderr().lock();
    let _ = match info.location() {
        Some(loc) => writeln!(
            err,
            "satcc: internal error in the native module at {loc}: {message}"
        ),
        None => writeln!(err, "satcc: internal error in the native module: {message}"),
    };
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    std::panic::set_hook(Box::new(quiet_panic_hook));
    calc::register(m)?;
    m.add_function(wrap_pyfunction!(cc_names, m)?)?;
    m.add_function(wrap_pyfunction!(cc_info, m)?)?;
    m.add_function(wrap_pyfunction!(cc_check, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(host_noise_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(geo_one_way_ns, m)?)?;
    m.add_function(wrap_pyfunction!(sim::run_sim, m)?)?;
    m.add_function(wrap_pyfunction!(sim::resolve, m)?)?;
    m.add_class::<sim::ResolvedScenario>()?;
    m.add_function(wrap_pyfunction!(trace::mahimahi_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace::mahimahi_stamps, m)?)?;
    m.add_function(wrap_pyfunction!(trace::delay_csv_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace::delay_csv_rows, m)?)?;
    pcap::register(m)?;
    drill::register(m)?;
    parquet::register(m)?;
    Ok(())
}
