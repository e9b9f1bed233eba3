//! `run_sim`: dict config in, dict of summaries and columnar series out.

use std::fs::File;
use std::io::BufWriter;
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use satcc_core::record::{FlowSeries, FlowSummary, LinkSeries, SeqAckSeries, UdpColumns};
use satcc_core::scenario::Resolved;
use satcc_core::{SimDuration, SimTime};
use satcc_sim::capture::{parse_point, Capture, Tap};

/// A Python dictionary as JSON (how the resolved scenario reaches satcc-core's reader).
pub(crate) fn to_json(d: &Bound<'_, PyAny>, path: &str) -> PyResult<serde_json::Value> {
    let text: String = d
        .py()
        .import("json")?
        .call_method1("dumps", (d,))?
        .extract()?;
    serde_json::from_str(&text)
        .map_err(|e| PyValueError::new_err(format!("{path}: not a JSON table: {e}")))
}

/// A JSON value as the Python object `json.loads` makes of it.
pub(crate) fn from_json<'py>(
    py: Python<'py>,
    v: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(v).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// A resolved scenario: what [`resolve`] returns. `run_sim` takes it as it is (no second
/// resolve, no JSON); Python reads its dictionary form, `config` (RESOLVED), made once.
#[pyclass(name = "Resolved", module = "satcc._native", frozen)]
pub struct ResolvedScenario {
    resolved: Resolved,
    config: Py<PyAny>,
}

#[pymethods]
impl ResolvedScenario {
    /// The RESOLVED dictionary (the same object every time: a copy for reading; `run_sim`
    /// runs the scenario as resolved, whatever is changed in it).
    #[getter]
    fn config(&self, py: Python<'_>) -> Py<PyAny> {
        self.config.clone_ref(py)
    }
}

/// The one resolve step: the scenario layer's dictionary (units parsed, defaults filled) in,
/// the resolved scenario out (satcc-core `scenario::resolve`: checked, with routes, paths and
/// every direction's largest crossing RTT), every flow's algorithm and parameters checked by its
/// registry, so `satcc check` and every engine accept and refuse the same files.
#[pyfunction]
pub fn resolve<'py>(
    py: Python<'py>,
    scenario: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, ResolvedScenario>> {
    let r = satcc_core::scenario::resolve_json(&to_json(scenario.as_any(), "config")?)
        .map_err(PyValueError::new_err)?;
    handle(py, r)
}

/// A resolved scenario as Python holds it: each flow's algorithm checked through satcc-cc, the
/// dictionary form made once.
pub(crate) fn handle(py: Python<'_>, r: Resolved) -> PyResult<Bound<'_, ResolvedScenario>> {
    for (i, f) in r.scenario.flows.iter().enumerate() {
        crate::check_cc(&f.cca, f.cc.as_ref())
            .map_err(|e| PyValueError::new_err(format!("flow[{i}].cc: {e}")))?;
    }
    let config = from_json(py, &r)?.unbind();
    Bound::new(
        py,
        ResolvedScenario {
            resolved: r,
            config,
        },
    )
}

fn summary_to_py<'py>(py: Python<'py>, f: &FlowSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    crate::columns::set_cells(&d, f.cells())?;
    Ok(d)
}

/// A Python list built from a slice without panicking when Python runs out of memory.
/// pyo3's own conversion panics on a failed allocation, and a panic under memory pressure
/// deadlocked: the panic's backtrace failed to allocate and the allocation-error handler then
/// waited on the backtrace lock the panic held, for good. Here a failed allocation is a
/// `MemoryError`, and the half-built list is freed.
pub(crate) fn list_of<'py, T: Copy>(
    py: Python<'py>,
    xs: &[T],
    item: impl Fn(T) -> *mut ffi::PyObject,
) -> PyResult<Bound<'py, PyAny>> {
    let len = ffi::Py_ssize_t::try_from(xs.len())
        .map_err(|_| PyMemoryError::new_err("a series longer than a Python list holds"))?;
    // SAFETY: PyList_New returns a new reference or NULL with an exception set; every slot is
    // filled with a new reference before the list is used, and a list freed with empty
    // (NULL) slots is valid (list_dealloc uses Py_XDECREF).
    unsafe {
        let list = ffi::PyList_New(len);
        if list.is_null() {
            return Err(PyErr::fetch(py));
        }
        let list = Bound::from_owned_ptr(py, list);
        for (i, &x) in xs.iter().enumerate() {
            let obj = item(x);
            if obj.is_null() {
                return Err(PyErr::fetch(py));
            }
            // PyList_SetItem, not the PyList_SET_ITEM macro: the module is built for the
            // stable ABI (abi3), which has only the function. It steals `obj` either way.
            if ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, obj) != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(list)
    }
}

pub(crate) fn floats<'py>(py: Python<'py>, xs: &[f64]) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: PyFloat_FromDouble returns a new reference or NULL (checked by list_of).
    list_of(py, xs, |x| unsafe { ffi::PyFloat_FromDouble(x) })
}

pub(crate) fn ints<'py, T: Copy + Into<u64>>(
    py: Python<'py>,
    xs: &[T],
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: as floats.
    list_of(py, xs, |x| unsafe {
        ffi::PyLong_FromUnsignedLongLong(x.into())
    })
}

fn strs<'py>(py: Python<'py>, xs: &[&'static str]) -> PyResult<Bound<'py, PyAny>> {
    let ab = pyo3::types::PyString::new(py, "ab");
    let ba = pyo3::types::PyString::new(py, "ba");
    let other = pyo3::types::PyString::new(py, "?");
    list_of(py, xs, |x| {
        let s = match x {
            "ab" => &ab,
            "ba" => &ba,
            _ => &other,
        };
        s.clone().into_ptr()
    })
}

fn flow_series_to_py<'py>(py: Python<'py>, s: &FlowSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    crate::columns::set_cells(&d, s.cells())?;
    Ok(d)
}

fn link_series_to_py<'py>(py: Python<'py>, s: &LinkSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    crate::columns::set_cells(&d, s.cells())?;
    Ok(d)
}

/// Run the simulator on a resolved scenario: `resolve`'s result, or a RESOLVED dictionary
/// (see `_native.pyi`).
#[pyfunction]
#[pyo3(signature = (config, progress=None, sample_models_ns=None, capture=None))]
pub fn run_sim<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    progress: Option<PyObject>,
    sample_models_ns: Option<u64>,
    capture: Option<(std::path::PathBuf, Vec<String>)>,
) -> PyResult<Bound<'py, PyDict>> {
    // a RESOLVED dictionary: read, and its routes checked against the scenario's
    let read;
    let r = match config.downcast::<ResolvedScenario>() {
        Ok(handle) => &handle.get().resolved,
        Err(_) => {
            read =
                Resolved::from_json(&to_json(config, "config")?).map_err(PyValueError::new_err)?;
            &read
        }
    };
    if let Some(step) = sample_models_ns {
        return sample_models(py, r, step);
    }
    let (out, captures) = match capture {
        None => {
            let world = satcc_sim::world::World::new(r)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            (run_world(py, world, progress)?, Vec::new())
        }
        Some((dir, points)) => {
            let (mut cap, names) = open_captures(r, &dir, &points)?;
            let world = satcc_sim::world::World::with_tap(r, &mut cap)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
            let out = run_world(py, world, progress)?;
            cap.finish().map_err(pyo3::exceptions::PyOSError::new_err)?;
            (out, names)
        }
    };
    // The conversions below write the records by iterating their declared columns
    // (`set_cells`). The UDP, seqack and cc blocks stay in this body: moved into functions of
    // their own, LLVM stopped inlining `World::run` here and `satcc sim
    // scenarios/dumbbell.toml` ran 9 M more instructions in the event loop (cachegrind).
    let d = PyDict::new(py);
    let flows = PyList::empty(py);
    for (f, udp) in out.flows.iter().zip(&out.udp) {
        let d = summary_to_py(py, f)?;
        // UDP flows (iperf3 -u's receiver report); TCP flows carry these keys as None.
        match udp {
            Some(u) => {
                let u = UdpColumns {
                    received_packets: u.received_packets,
                    lost_packets: u.lost_packets,
                    loss_fraction: u.loss_fraction,
                    jitter_ms: u.jitter_ms,
                };
                crate::columns::set_cells(&d, u.cells())?;
            }
            None => {
                for c in UdpColumns::FIELDS {
                    d.set_item(c.name, py.None())?;
                }
            }
        }
        flows.append(d)?;
    }
    d.set_item("flows", flows)?;
    d.set_item("flow_series", flow_series_to_py(py, &out.flow_series)?)?;
    d.set_item("link_series", link_series_to_py(py, &out.link_series)?)?;
    let stats = PyDict::new(py);
    stats.set_item("events", out.events)?;
    stats.set_item("packets", out.packets)?;
    stats.set_item("fragmented_packets", out.fragmented_packets)?;
    stats.set_item(
        "sim_time_s",
        SimDuration::from_nanos(r.scenario.duration_ns).as_secs_f64(),
    )?;
    d.set_item("stats", stats)?;
    d.set_item("captures", captures)?;
    match &out.seqack {
        Some(t) => {
            let s = SeqAckSeries {
                flow_id: vec![t.flow; t.t_ns.len()],
                kind: t.kind.iter().map(|k| k.name()).collect(),
                t_s: t.t_ns.iter().map(|&n| n as f64 / 1e9).collect(),
                seq_rel: t.seq.clone(),
                end_rel: t.end.clone(),
                ack_rel: t.ack.clone(),
                retransmission: t.retransmission.clone(),
            };
            let sa = PyDict::new(py);
            crate::columns::set_cells(&sa, s.cells())?;
            // the summary's count of rows past `max_rows`, not a column
            sa.set_item("dropped_rows", t.dropped_rows)?;
            d.set_item("seqack", sa)?;
        }
        None => d.set_item("seqack", py.None())?,
    }
    match &out.cc_series {
        Some(c) => {
            let cs = PyDict::new(py);
            crate::columns::set_cells(&cs, c.cells())?;
            d.set_item("cc_series", cs)?;
        }
        None => d.set_item("cc_series", py.None())?,
    }
    Ok(d)
}

/// Capture files (`satcc_sim::capture`) for `points` in `dir`, each through a buffered file;
/// with their names. A point the scenario has no place for is a ValueError, a file that
/// cannot be created an OSError naming it.
fn open_captures(
    r: &Resolved,
    dir: &std::path::Path,
    points: &[String],
) -> PyResult<(Capture<BufWriter<File>>, Vec<String>)> {
    let points = points
        .iter()
        .map(|p| parse_point(r, p))
        .collect::<Result<Vec<_>, _>>()
        .map_err(PyValueError::new_err)?;
    let mut names = Vec::new();
    let cap = Capture::new(r, &points, |name| {
        names.push(name.to_string());
        Ok(BufWriter::with_capacity(
            CAPTURE_BUFFER_BYTES,
            File::create(dir.join(name))?,
        ))
    })
    .map_err(pyo3::exceptions::PyOSError::new_err)?;
    Ok((cap, names))
}

/// Each capture file's write buffer: a few hundred 160-byte blocks per `write`.
const CAPTURE_BUFFER_BYTES: usize = 1 << 16;

/// Run `world` without the GIL (other Python threads go on: the CLI imports its result writer
/// meanwhile); the progress callback takes it a few times a second.
// Inlined, so `World::run` stays inlined into `run_sim` as it was (see below).
#[inline(always)]
fn run_world<T: Tap + Send>(
    py: Python<'_>,
    mut world: satcc_sim::world::World<T>,
    progress: Option<PyObject>,
) -> PyResult<satcc_sim::SimOutput> {
    world
        .reserve_series()
        .map_err(|e| PyMemoryError::new_err(e.to_string()))?;
    let mut last = Instant::now();
    let mut err: Option<PyErr> = None;
    // The simulation runs without the GIL (other Python threads go on: the CLI imports its
    // result writer meanwhile); the progress callback takes it a few times a second.
    let out = py.allow_threads(|| {
        let mut cb = |frac: f64| -> bool {
            // Throttle to a few calls a second of wall time; honour Ctrl-C.
            if frac < 1.0 && last.elapsed() < Duration::from_millis(200) {
                return true;
            }
            last = Instant::now();
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    err = Some(e);
                    return false;
                }
                if let Some(p) = &progress {
                    if let Err(e) = p.call1(py, (frac,)) {
                        err = Some(e);
                        return false;
                    }
                }
                true
            })
        };
        world.run(&mut cb)
    });
    if let Some(e) = err {
        return Err(e);
    }
    Ok(out)
}

/// Probe mode (`sample_models_ns`): every link direction's model sampled on a grid of `step_ns`
/// over the run, without simulating: per step, the mean capacity over [t, t + step) and the
/// delay and loss in force at t (what `satcc trace export` writes).
fn sample_models<'py>(py: Python<'py>, r: &Resolved, step_ns: u64) -> PyResult<Bound<'py, PyDict>> {
    if step_ns == 0 {
        return Err(PyValueError::new_err(
            "config.sample_models_ns: must be > 0",
        ));
    }
    let step = SimDuration::from_nanos(step_ns);
    let n = r.scenario.duration_ns.div_ceil(step_ns);
    let (mut link_id, mut dir, mut t_ns, mut rate, mut delay, mut loss) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let rows = n
        .checked_mul(2 * r.scenario.links.len() as u64)
        .and_then(|r| usize::try_from(r).ok());
    let reserved = rows.is_some_and(|r| {
        satcc_core::mem::fallible(|| {
            link_id.try_reserve_exact(r).is_ok()
                && dir.try_reserve_exact(r).is_ok()
                && t_ns.try_reserve_exact(r).is_ok()
                && rate.try_reserve_exact(r).is_ok()
                && delay.try_reserve_exact(r).is_ok()
                && loss.try_reserve_exact(r).is_ok()
        })
    });
    if !reserved {
        return Err(PyMemoryError::new_err(format!(
            "out of memory: {n} samples per link direction do not fit; use a longer step"
        )));
    }
    for k in 0..2 * r.scenario.links.len() {
        {
            let (i, name) = (k / 2, if k % 2 == 0 { "ab" } else { "ba" });
            // built as the simulator builds it (`satcc-sim` net.rs): the same view and seeds
            let mut model = r
                .direction(k)
                .and_then(|v| v.behaviour(r.scenario.seed))
                .map_err(PyValueError::new_err)?;
            for j in 0..n {
                let t = SimTime::ZERO + step.mul_u64(j);
                let m = model.mean_over(t, t + step);
                let st = model.state_at(t);
                link_id.push(i as u32);
                dir.push(name);
                t_ns.push(t.as_nanos());
                rate.push(m.rate_bps);
                delay.push(st.delay.as_nanos());
                loss.push(st.loss);
            }
        }
    }
    let d = PyDict::new(py);
    d.set_item("link_id", ints(py, &link_id)?)?;
    d.set_item("dir", strs(py, &dir)?)?;
    d.set_item("t_ns", ints(py, &t_ns)?)?;
    d.set_item("rate_bps", floats(py, &rate)?)?;
    d.set_item("delay_ns", ints(py, &delay)?)?;
    d.set_item("loss", floats(py, &loss)?)?;
    let out = PyDict::new(py);
    out.set_item("model_samples", d)?;
    Ok(out)
}
