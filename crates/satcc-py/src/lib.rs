//! satcc._native — the only PyO3 crate. Thin conversions between Python objects and the
//! Rust engines; no simulation logic lives here. The contract is documented in
//! `python/satcc/_native.pyi`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

mod calc;
mod columns;
mod digest;
mod drill;
mod parquet;
mod pcap;
mod scenario;
mod sim;
mod textgrid;
mod trace;
mod units;

/// Out of memory in Rust code: one line and exit 1, never an abort (satcc_core::mem).
#[global_allocator]
static ALLOC: satcc_core::mem::ExitOnOom = satcc_core::mem::ExitOnOom;

#[pyfunction]
fn cc_names() -> Vec<&'static str> {
    satcc_cc::names()
}

#[pyfunction]
fn cc_info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    use satcc_cc::params::Kind;
    let info = cc_registered(name)?;
    let d = PyDict::new(py);
    d.set_item("name", info.name)?;
    d.set_item("summary", info.summary)?;
    d.set_item("source", info.source)?;
    let params = PyList::empty(py);
    for p in info.params {
        let pd = PyDict::new(py);
        let none = py.None();
        let text = |s: &'static str| if s.is_empty() { None } else { Some(s) };
        pd.set_item("name", p.name)?;
        match p.kind {
            Kind::Num { default, lo, hi } => {
                pd.set_item("kind", "number")?;
                pd.set_item("default", default)?;
                pd.set_item("range", (lo, hi))?;
            }
            Kind::Int { default, lo, hi } => {
                pd.set_item("kind", "integer")?;
                pd.set_item("default", default)?;
                pd.set_item("range", (lo, hi))?;
            }
            Kind::Bool { default } => {
                pd.set_item("kind", "bool")?;
                pd.set_item("default", default)?;
                pd.set_item("range", &none)?;
            }
            Kind::Choice { default, words } => {
                pd.set_item("kind", "choice")?;
                pd.set_item("default", default)?;
                pd.set_item("range", words.iter().map(|w| w.0).collect::<Vec<_>>())?;
            }
            Kind::Points => {
                pd.set_item("kind", "pairs")?;
                pd.set_item("default", &none)?;
                pd.set_item("range", &none)?;
            }
        }
        pd.set_item("unit", p.unit)?;
        pd.set_item("scale", p.scale.map(|s| (s.factor, s.min)))?;
        pd.set_item("kernel", text(p.kernel))?;
        pd.set_item("bpf", text(p.bpf))?;
        pd.set_item("doc", p.doc)?;
        params.append(pd)?;
    }
    d.set_item("params", params)?;
    d.set_item("deviations", info.deviations.to_vec())?;
    Ok(d)
}

fn cc_registered(name: &str) -> PyResult<&'static satcc_cc::AlgoInfo> {
    satcc_cc::registry::info(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown congestion control {name:?}; known: {:?}",
            satcc_cc::names()
        ))
    })
}

fn cc_params(params: &Bound<'_, PyAny>) -> PyResult<satcc_cc::Params> {
    if params.is_none() {
        return Ok(satcc_cc::Params::new());
    }
    let table = sim::to_json(params, "cc")?;
    let table = table
        .as_object()
        .ok_or_else(|| PyValueError::new_err("cc: expected a table"))?;
    satcc_cc::Params::from_json(table).map_err(PyValueError::new_err)
}

#[pyfunction]
fn cc_check(name: &str, params: &Bound<'_, PyAny>) -> PyResult<()> {
    let p = cc_params(params)?;
    satcc_cc::lookup(name, &p)
        .map(|_| ())
        .map_err(|e| PyValueError::new_err(e.to_string()))
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

/// The integers a BPF twin is compiled with: {define: value} for every parameter that
/// declares one (`ParamSpec::kernel_value`), after the algorithm's own checks.
#[pyfunction]
fn cc_kernel_values(name: &str, params: &Bound<'_, PyAny>) -> PyResult<Vec<(&'static str, u64)>> {
    let info = cc_registered(name)?;
    let p = cc_params(params)?;
    let err = |e: satcc_cc::ParamError| PyValueError::new_err(e.to_string());
    (info.build)(&p).map_err(err)?;
    let mut out = Vec::new();
    for spec in info.params.iter().filter(|s| !s.bpf.is_empty()) {
        if let Some(v) = spec.kernel_value(&p).map_err(err)? {
            out.push((spec.bpf, v));
        }
    }
    Ok(out)
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

/// The scenario's defaults, declared once (satcc-core `scenario::build`): the TOML schema
/// (python/satcc/scenario/schema.py) fills a scenario file's missing keys with these.
#[pyfunction]
fn scenario_defaults<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    use satcc_core::dirspec::QueueSpec;
    use satcc_core::scenario as b;
    let QueueSpec::Packets(queue_pkts) = b::DEFAULT_QUEUE else {
        unreachable!("the default queue is a packet count")
    };
    let d = PyDict::new(py);
    d.set_item("mss", b::DEFAULT_MSS)?;
    d.set_item("rwnd_bytes", b::DEFAULT_RWND_BYTES)?;
    d.set_item("initial_cwnd", b::DEFAULT_INITIAL_CWND)?;
    d.set_item("min_rto_ns", b::DEFAULT_MIN_RTO_NS)?;
    d.set_item("bin_ns", b::DEFAULT_BIN_NS)?;
    d.set_item("seed", b::DEFAULT_SEED)?;
    d.set_item("queue_pkts", queue_pkts)?;
    // the limits, declared once beside the checks that use them (scenario.rs)
    d.set_item("min_mss", b::MIN_MSS)?;
    d.set_item("max_mss", b::MAX_MSS)?;
    d.set_item("min_mtu", b::MIN_MTU)?;
    d.set_item("max_mtu", b::MAX_MTU)?;
    d.set_item("max_user_mss", b::MAX_USER_MSS)?;
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
    units::register(m)?;
    scenario::register(m)?;
    m.add_function(wrap_pyfunction!(cc_names, m)?)?;
    m.add_function(wrap_pyfunction!(cc_info, m)?)?;
    m.add_function(wrap_pyfunction!(cc_check, m)?)?;
    m.add_function(wrap_pyfunction!(cc_kernel_values, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(host_noise_kernel, m)?)?;
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
    digest::register(m)?;
    columns::register(m)?;
    textgrid::register(m)?;
    Ok(())
}
