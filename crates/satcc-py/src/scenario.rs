//! A scenario file read by satcc-core (`scenario::file`): the document in (the TOML tables as
//! Python parsed and edited them), a checked [`File`] handle out, resolved once per run.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use satcc_core::dirspec::QueueSpec;
use satcc_core::models::table::{CsvInfo, ModelFiles, TleAsk, TraceInfo};
use satcc_core::scenario::file::{self, File, Issue, Known};
use satcc_core::scenario::text;
use satcc_core::time::SimDuration;

use crate::sim::{from_json, handle, to_json, ResolvedScenario};

/// A read and checked scenario file.
#[pyclass(name = "ScenarioFile", module = "satcc._native", frozen)]
pub struct ScenarioFile {
    file: File,
}

#[pymethods]
impl ScenarioFile {
    /// The tables with units in base units and defaults filled (`satcc.scenario.Scenario`
    /// reads it), plus `name`, `nodes`, `seed`.
    fn view<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        from_json(py, &self.file)
    }

    /// The resolver's input (the serde form of satcc-core's `scenario::Scenario`).
    #[pyo3(signature = (seed=None))]
    fn spec<'py>(&self, py: Python<'py>, seed: Option<u64>) -> PyResult<Bound<'py, PyAny>> {
        from_json(py, &self.file.scenario(seed))
    }

    /// Resolved: checked as every engine runs it, with its routes.
    #[pyo3(signature = (seed=None))]
    fn resolve<'py>(
        &self,
        py: Python<'py>,
        seed: Option<u64>,
    ) -> PyResult<Bound<'py, ResolvedScenario>> {
        let r = self
            .file
            .scenario(seed)
            .resolve()
            .map_err(PyValueError::new_err)?;
        handle(py, r)
    }

    /// Resolved flows in id order: (scenario flow index, copy, name).
    fn origins(&self) -> Vec<(usize, u64, String)> {
        self.file.flow_origins()
    }
}

/// A link model's files read by the Python layer (`satcc.linkmodels`: the host's file limits
/// and memory budget, SGP4 for TLE sets). An exception other than ValueError/OSError is kept
/// and raised once the scenario is read.
struct PyFiles<'py> {
    files: Bound<'py, PyAny>,
    fatal: RefCell<Option<PyErr>>,
}

impl<'py> PyFiles<'py> {
    fn call<A: IntoPyObject<'py, Target = PyTuple>>(
        &self,
        method: &str,
        args: A,
    ) -> Result<Bound<'py, PyAny>, Bound<'py, PyAny>>
    where
        PyErr: From<A::Error>,
    {
        let py = self.files.py();
        self.files.call_method1(method, args).map_err(|e| {
            let expected = e.is_instance_of::<PyValueError>(py)
                || e.is_instance_of::<pyo3::exceptions::PyOSError>(py);
            let value = e.value(py).clone().into_any();
            if !expected {
                self.fatal.borrow_mut().get_or_insert(e);
            }
            value
        })
    }

    fn text(e: &Bound<'_, PyAny>) -> String {
        e.str().map(|s| s.to_string()).unwrap_or_default()
    }
}

fn get<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyAny>, key: &str) -> Result<T, String> {
    d.get_item(key)
        .and_then(|v| v.extract::<T>())
        .map_err(|e| e.to_string())
}

impl<'py> ModelFiles for PyFiles<'py> {
    fn mahimahi(&self, path: &Path) -> Result<TraceInfo, String> {
        let d = self
            .call("mahimahi_info", (path,))
            .map_err(|e| Self::text(&e))?;
        Ok(TraceInfo {
            lines: get(&d, "lines")?,
            last_ms: get(&d, "last_ms")?,
            digest: get(&d, "digest")?,
        })
    }

    fn delay_csv(
        &self,
        path: &Path,
        default_loss: f64,
        duration_ns: Option<u64>,
    ) -> Result<CsvInfo, String> {
        let d = self
            .call("delay_csv_info", (path, default_loss, duration_ns))
            .map_err(|e| Self::text(&e))?;
        Ok(CsvInfo {
            rows: get(&d, "rows")?,
            mean_delay_ns: get(&d, "mean_delay_ns")?,
            mean_loss: get(&d, "mean_loss")?,
            digest: get(&d, "digest")?,
        })
    }

    fn tle(&self, ask: &TleAsk) -> Result<Vec<(u64, Option<u64>)>, Issue> {
        let py = self.files.py();
        let epoch = match ask.epoch {
            Some(v) => from_json(py, v).map_err(|e| ("epoch".to_string(), e.to_string()))?,
            None => py.None().into_bound(py),
        };
        let args = (
            ask.path,
            ask.name,
            epoch,
            ask.terminal,
            ask.gateway,
            ask.min_elevation_deg,
            ask.phase_ns,
            ask.period_ns,
            ask.span_ns,
        );
        let rows = self.call("tle_geometry", args).map_err(|e| {
            e.getattr("args")
                .and_then(|a| a.get_item(0))
                .and_then(|a| a.extract::<(String, String)>())
                .unwrap_or_else(|_| ("tle".into(), Self::text(&e)))
        })?;
        rows.extract()
            .map_err(|e: PyErr| ("tle".to_string(), e.to_string()))
    }
}

/// Read a scenario document (the TOML tables as Python parsed and edited them); `base` is the
/// folder a link model's files are named from and `files` reads them (`satcc.linkmodels`).
/// Problems raise `ValueError([(key path, message), ...])`.
#[pyfunction]
fn read_scenario(
    doc: &Bound<'_, PyAny>,
    default_name: &str,
    engines: Vec<String>,
    base: PathBuf,
    files: &Bound<'_, PyAny>,
) -> PyResult<ScenarioFile> {
    let v = to_json(doc, "scenario")?;
    read_document(Ok(v), default_name, engines, base, files)
}

/// `read_scenario` of a scenario file's TOML text, parsed here (`scenario::text`): a TOML
/// syntax error is the issue ("", "invalid TOML: ... (at line L, column C)").
#[pyfunction]
fn read_scenario_text(
    text: &str,
    default_name: &str,
    engines: Vec<String>,
    base: PathBuf,
    files: &Bound<'_, PyAny>,
) -> PyResult<ScenarioFile> {
    read_document(text::document(text), default_name, engines, base, files)
}

fn read_document(
    doc: Result<serde_json::Value, Vec<Issue>>,
    default_name: &str,
    engines: Vec<String>,
    base: PathBuf,
    files: &Bound<'_, PyAny>,
) -> PyResult<ScenarioFile> {
    let v = doc.map_err(|issues| PyValueError::new_err((issues,)))?;
    let ccas = satcc_cc::names();
    let engines: Vec<&str> = engines.iter().map(String::as_str).collect();
    let check =
        |name: &str, t: &serde_json::Map<String, serde_json::Value>| crate::check_cc(name, Some(t));
    let files = PyFiles {
        files: files.clone(),
        fatal: RefCell::new(None),
    };
    let known = Known {
        ccas: &ccas,
        engines: &engines,
        check_cc: &check,
        base: &base,
        files: &files,
    };
    let read = file::read(&v, default_name, &known);
    if let Some(e) = files.fatal.take() {
        return Err(e);
    }
    read.map(|file| ScenarioFile { file })
        .map_err(|issues| PyValueError::new_err((issues,)))
}

/// A direction's queue as its link holds it (`dirspec::QueueSpec::sized`, as the simulator and
/// satcc-linkd build the link): "x BDP" as bytes of `rate_bps` over `max_rtt_ns` (the routes'
/// `max_rtt_ns` of the direction), packets and bytes as they are.
#[pyfunction]
fn sized_queue<'py>(
    py: Python<'py>,
    queue: &Bound<'py, PyAny>,
    rate_bps: u64,
    max_rtt_ns: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let q: QueueSpec = satcc_core::dirspec::read(&to_json(queue, "queue")?, "queue")
        .map_err(PyValueError::new_err)?;
    from_json(py, &q.sized(rate_bps, SimDuration::from_nanos(max_rtt_ns)))
}

/// The keys each table of a scenario file accepts: {"scenario": [...], "link": [...],
/// "flow": [...]}.
#[pyfunction]
fn scenario_keys<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (table, keys) in file::table_keys() {
        d.set_item(table, keys.to_vec())?;
    }
    Ok(d)
}

/// The link models' presets other layers show (`models::table::presets`).
#[pyfunction]
fn link_model_presets(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    from_json(py, &satcc_core::models::table::presets())
}

/// The scenario file's JSON Schema (docs/scenario.schema.json), from satcc-core's types.
#[pyfunction]
fn scenario_json_schema() -> String {
    file::json_schema()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scenario_json_schema, m)?)?;
    m.add_function(wrap_pyfunction!(link_model_presets, m)?)?;
    m.add_class::<ScenarioFile>()?;
    m.add_function(wrap_pyfunction!(read_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(read_scenario_text, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_keys, m)?)?;
    m.add_function(wrap_pyfunction!(sized_queue, m)?)?;
    Ok(())
}
