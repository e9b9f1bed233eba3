//! A scenario file read by satcc-core (`scenario::file`): the document in (the TOML tables as
//! Python parsed and edited them), a checked [`File`] handle out, resolved once per run.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use satcc_core::scenario::file::{self, File, Known, ModelDir};

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

    /// The resolver's input (SCENARIO of `_native.pyi`).
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

/// Read a scenario document; `models[i]` is link i's resolved `[link.model]` ([a→b, b→a]
/// directions) or None. Problems raise `ValueError([(key path, message), ...])`.
#[pyfunction]
fn read_scenario(
    doc: &Bound<'_, PyAny>,
    default_name: &str,
    engines: Vec<String>,
    models: &Bound<'_, PyList>,
) -> PyResult<ScenarioFile> {
    let v = to_json(doc, "scenario")?;
    let mut dirs: Vec<Option<[ModelDir; 2]>> = Vec::with_capacity(models.len());
    for m in models.iter() {
        dirs.push(if m.is_none() {
            None
        } else {
            let j = to_json(&m, "models")?;
            Some(serde_json::from_value(j).map_err(|e| PyValueError::new_err(e.to_string()))?)
        });
    }
    let ccas = satcc_cc::names();
    let engines: Vec<&str> = engines.iter().map(String::as_str).collect();
    let check =
        |name: &str, t: &serde_json::Map<String, serde_json::Value>| crate::check_cc(name, Some(t));
    let known = Known {
        ccas: &ccas,
        engines: &engines,
        check_cc: &check,
    };
    file::read(&v, default_name, dirs, &known)
        .map(|file| ScenarioFile { file })
        .map_err(|issues| PyValueError::new_err((issues,)))
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

/// The scenario file's JSON Schema (docs/scenario.schema.json), from satcc-core's types.
#[pyfunction]
fn scenario_json_schema() -> String {
    file::json_schema()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scenario_json_schema, m)?)?;
    m.add_class::<ScenarioFile>()?;
    m.add_function(wrap_pyfunction!(read_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_keys, m)?)?;
    Ok(())
}
