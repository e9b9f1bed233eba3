//! `run_sim`: dict config in, dict of summaries and columnar series out.

use std::time::{Duration, Instant};

use pyo3::exceptions::{PyKeyError, PyMemoryError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use satcc_core::dirspec::QueueSpec;
use satcc_core::hostnoise::{HostNoise, Turnaround};
use satcc_core::link::LinkState;
use satcc_core::record::{FlowSeries, FlowSummary, LinkSeries};
use satcc_core::routing::{bdp_queue_bytes, LinkEnds, Routing};
use satcc_core::{SimDuration, SimTime};
use satcc_sim::{DirConfig, FlowConfig, LinkConfig, PacingMode, Proto, QueueConfig, SimConfig};

/// Fetch a required key, naming the path in the error.
fn req<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str, path: &str) -> PyResult<T> {
    let v = d
        .get_item(key)?
        .ok_or_else(|| PyKeyError::new_err(format!("{path}.{key}: missing")))?;
    v.extract()
        .map_err(|e| PyValueError::new_err(format!("{path}.{key}: {e}")))
}

fn opt<'py, T: FromPyObject<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    path: &str,
) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v
            .extract()
            .map(Some)
            .map_err(|e| PyValueError::new_err(format!("{path}.{key}: {e}"))),
    }
}

fn dict<'py>(d: &Bound<'py, PyDict>, key: &str, path: &str) -> PyResult<Bound<'py, PyDict>> {
    let v = d
        .get_item(key)?
        .ok_or_else(|| PyKeyError::new_err(format!("{path}.{key}: missing")))?;
    v.downcast_into::<PyDict>()
        .map_err(|_| PyValueError::new_err(format!("{path}.{key}: expected a table")))
}

/// A resolved direction (DIR of `_native.pyi`), read by satcc-core's one reader (the one
/// satcc-linkd uses for its JSON input): the dictionary goes over as JSON.
fn dir_from(d: &Bound<'_, PyDict>, path: &str) -> PyResult<DirConfig> {
    let spec =
        satcc_core::dirspec::from_json(&to_json(d, path)?, path).map_err(PyValueError::new_err)?;
    Ok(DirConfig {
        rate_bps: spec.state.rate_bps,
        delay: spec.state.delay,
        loss: spec.state.loss,
        queue: match spec.queue {
            QueueSpec::Packets(n) => QueueConfig::Packets(n),
            QueueSpec::Bytes(n) => QueueConfig::Bytes(n),
            QueueSpec::Bdp(x) => QueueConfig::Bdp(x),
        },
        ecn_threshold_pkts: spec.ecn_threshold_pkts,
        drop_packets: spec.drop_packets,
        jitter: spec.jitter,
        model: match &spec.model {
            Some(m) => Some(
                satcc_core::models::spec::from_json(m, &format!("{path}.model"))
                    .map_err(PyValueError::new_err)?,
            ),
            None => None,
        },
    })
}

/// A Python dictionary as JSON (how resolved tables reach satcc-core's readers).
fn to_json(d: &Bound<'_, PyDict>, path: &str) -> PyResult<serde_json::Value> {
    let text: String = d
        .py()
        .import("json")?
        .call_method1("dumps", (d,))?
        .extract()?;
    serde_json::from_str(&text)
        .map_err(|e| PyValueError::new_err(format!("{path}: not a JSON table: {e}")))
}

pub fn config_from_py(cfg: &Bound<'_, PyDict>) -> PyResult<SimConfig> {
    let p = "config";
    let mut links = Vec::new();
    let lk = cfg
        .get_item("links")?
        .ok_or_else(|| PyKeyError::new_err("config.links: missing"))?;
    for (i, l) in lk.downcast::<PyList>()?.iter().enumerate() {
        let path = format!("link[{i}]");
        let l = l.downcast_into::<PyDict>()?;
        links.push(LinkConfig {
            a: req(&l, "a", &path)?,
            b: req(&l, "b", &path)?,
            ab: dir_from(&dict(&l, "ab", &path)?, &path)?,
            ba: dir_from(&dict(&l, "ba", &path)?, &format!("{path}.ba"))?,
        });
    }
    let mut flows = Vec::new();
    let fl = cfg
        .get_item("flows")?
        .ok_or_else(|| PyKeyError::new_err("config.flows: missing"))?;
    for (i, f) in fl.downcast::<PyList>()?.iter().enumerate() {
        let path = format!("flow[{i}]");
        let f = f.downcast_into::<PyDict>()?;
        let pacing = match req::<String>(&f, "pacing", &path)?.as_str() {
            "auto" => PacingMode::Auto,
            "on" => PacingMode::On,
            "off" => PacingMode::Off,
            other => {
                return Err(PyValueError::new_err(format!(
                    "{path}.pacing: expected auto, on or off, found {other:?}"
                )))
            }
        };
        let params = match f.get_item("cc")? {
            Some(v) => crate::params_from_py(&v)?,
            None => satcc_cc::Params::new(),
        };
        flows.push(FlowConfig {
            id: req(&f, "id", &path)?,
            src: req(&f, "src", &path)?,
            dst: req(&f, "dst", &path)?,
            cca: req(&f, "cca", &path)?,
            params,
            start: SimDuration::from_nanos(req(&f, "start_ns", &path)?),
            size_bytes: opt(&f, "size_bytes", &path)?,
            mss: req(&f, "mss", &path)?,
            sack: req(&f, "sack", &path)?,
            timestamps: req(&f, "timestamps", &path)?,
            window_scaling: req(&f, "window_scaling", &path)?,
            rwnd_bytes: req(&f, "rwnd_bytes", &path)?,
            rcvbuf_autotune: opt(&f, "rcvbuf_autotune", &path)?.unwrap_or(true),
            ecn: req(&f, "ecn", &path)?,
            initial_cwnd: req(&f, "initial_cwnd", &path)?,
            pacing,
            delayed_ack: req(&f, "delayed_ack", &path)?,
            min_rto: SimDuration::from_nanos(req(&f, "min_rto_ns", &path)?),
            sndbuf_bytes: opt(&f, "sndbuf_bytes", &path)?,
            proto: match opt::<String>(&f, "proto", &path)?.as_deref() {
                None | Some("tcp") => Proto::Tcp,
                Some("udp") => Proto::Udp {
                    rate_bps: req(&f, "udp_rate_bps", &path)?,
                    payload_bytes: req(&f, "udp_payload_bytes", &path)?,
                },
                Some(other) => {
                    return Err(PyValueError::new_err(format!(
                        "{path}.proto: expected tcp or udp, found {other:?}"
                    )))
                }
            },
            encap_bytes: opt(&f, "encap_bytes", &path)?.unwrap_or(0),
            mtu: opt(&f, "mtu", &path)?.unwrap_or(satcc_sim::config::DEFAULT_MTU),
            metrics_save: opt(&f, "metrics_save", &path)?.unwrap_or(false),
        });
    }
    Ok(SimConfig {
        name: req(cfg, "name", p)?,
        seed: req(cfg, "seed", p)?,
        duration: SimDuration::from_nanos(req(cfg, "duration_ns", p)?),
        bin: SimDuration::from_nanos(req(cfg, "bin_ns", p)?),
        nodes: req(cfg, "nodes", p)?,
        links,
        flows,
        host_noise: match cfg.get_item("host_noise_quantiles_ns")? {
            Some(v) if !v.is_none() => {
                let path = format!("{p}.host_noise_quantiles_ns");
                let d = v
                    .downcast_into::<PyDict>()
                    .map_err(|_| PyValueError::new_err(format!("{path}: expected a table")))?;
                let side = |key: &str| -> PyResult<Turnaround> {
                    turnaround_from(req(&d, key, &path)?)
                        .map_err(|e| PyValueError::new_err(format!("{path}.{key}: {e}")))
                };
                Some(HostNoise {
                    sender: side("sender")?,
                    receiver: side("receiver")?,
                })
            }
            _ => None,
        },
    })
}

/// `[[probability, ns], ...]` into a turnaround distribution.
fn turnaround_from(points: Vec<Vec<f64>>) -> Result<Turnaround, String> {
    let mut out = Vec::with_capacity(points.len());
    for pt in points {
        match pt[..] {
            [p, ns] if ns >= 0.0 && ns.fract() == 0.0 && ns < 2f64.powi(53) => {
                out.push((p, ns as u64))
            }
            _ => {
                return Err(format!(
                    "expected [probability, whole nanoseconds] pairs, found {pt:?}"
                ))
            }
        }
    }
    Turnaround::new(out)
}

fn summary_to_py<'py>(py: Python<'py>, f: &FlowSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", f.id)?;
    d.set_item("delivered_bytes", f.delivered_bytes)?;
    d.set_item("goodput_bps", f.goodput_bps)?;
    d.set_item("sent_packets", f.sent_packets)?;
    d.set_item("retransmitted_packets", f.retransmitted_packets)?;
    d.set_item("rtt_mean_ms", f.rtt_mean_ms)?;
    d.set_item("rtt_p95_ms", f.rtt_p95_ms)?;
    d.set_item("rtt_min_ms", f.rtt_min_ms)?;
    d.set_item("fct_s", f.fct_s)?;
    d.set_item("rto_count", f.rto_count)?;
    d.set_item("recovery_count", f.recovery_count)?;
    Ok(d)
}

/// A Python list built from a slice without panicking when Python runs out of memory.
/// pyo3's own conversion panics on a failed allocation, and a panic under memory pressure
/// deadlocked: the panic's backtrace failed to allocate and the allocation-error handler then
/// waited on the backtrace lock the panic held, for good. Here a failed allocation is a
/// `MemoryError`, and the half-built list is freed.
fn list_of<'py, T: Copy>(
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
            ffi::PyList_SET_ITEM(list.as_ptr(), i as ffi::Py_ssize_t, obj);
        }
        Ok(list)
    }
}

fn floats<'py>(py: Python<'py>, xs: &[f64]) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: PyFloat_FromDouble returns a new reference or NULL (checked by list_of).
    list_of(py, xs, |x| unsafe { ffi::PyFloat_FromDouble(x) })
}

fn ints<'py, T: Copy + Into<u64>>(py: Python<'py>, xs: &[T]) -> PyResult<Bound<'py, PyAny>> {
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
    d.set_item("flow_id", ints(py, &s.flow_id)?)?;
    d.set_item("t_s", floats(py, &s.t_s)?)?;
    d.set_item("delivered_bytes", ints(py, &s.delivered_bytes)?)?;
    d.set_item("received_bytes", ints(py, &s.received_bytes)?)?;
    d.set_item("cwnd_pkts", ints(py, &s.cwnd_pkts)?)?;
    d.set_item("ssthresh_pkts", ints(py, &s.ssthresh_pkts)?)?;
    d.set_item("srtt_ms", floats(py, &s.srtt_ms)?)?;
    d.set_item("inflight_pkts", ints(py, &s.inflight_pkts)?)?;
    d.set_item("pacing_rate_bps", floats(py, &s.pacing_rate_bps)?)?;
    d.set_item("retransmits", ints(py, &s.retransmits)?)?;
    Ok(d)
}

fn link_series_to_py<'py>(py: Python<'py>, s: &LinkSeries) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("link_id", ints(py, &s.link_id)?)?;
    d.set_item("dir", strs(py, &s.dir)?)?;
    d.set_item("t_s", floats(py, &s.t_s)?)?;
    d.set_item("queue_pkts", ints(py, &s.queue_pkts)?)?;
    d.set_item("queue_bytes", ints(py, &s.queue_bytes)?)?;
    d.set_item("drops_queue", ints(py, &s.drops_queue)?)?;
    d.set_item("drops_random", ints(py, &s.drops_random)?)?;
    d.set_item("ecn_marks", ints(py, &s.ecn_marks)?)?;
    d.set_item("tx_bytes", ints(py, &s.tx_bytes)?)?;
    d.set_item("capacity_bps", ints(py, &s.capacity_bps)?)?;
    d.set_item("delay_ms", floats(py, &s.delay_ms)?)?;
    Ok(d)
}

/// Check a resolved config as `run_sim` would, without running it: the conversion and every
/// check the simulator makes (`satcc check` and `satcc sim` accept and refuse the same files).
#[pyfunction]
pub fn check_sim(config: &Bound<'_, PyDict>) -> PyResult<()> {
    let cfg = config_from_py(config)?;
    satcc_sim::world::World::new(&cfg)
        .map(drop)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Run the simulator on a resolved config (see `_native.pyi`).
#[pyfunction]
#[pyo3(signature = (config, progress=None))]
pub fn run_sim<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = config_from_py(config)?;
    if let Some(step) = opt::<u64>(config, "sample_models_ns", "config")? {
        return sample_models(py, &cfg, step);
    }
    let mut world =
        satcc_sim::world::World::new(&cfg).map_err(|e| PyValueError::new_err(e.to_string()))?;
    world
        .reserve_series()
        .map_err(|e| PyMemoryError::new_err(e.to_string()))?;
    if let Some(v) = config.get_item("seqack")? {
        if !v.is_none() {
            let path = "config.seqack";
            let d = v
                .downcast_into::<PyDict>()
                .map_err(|_| PyValueError::new_err(format!("{path}: expected a table")))?;
            let spec = satcc_sim::trace::SeqAckSpec {
                flow: req(&d, "flow", path)?,
                from: SimTime::ZERO + SimDuration::from_nanos(req(&d, "from_ns", path)?),
                to: SimTime::ZERO + SimDuration::from_nanos(req(&d, "to_ns", path)?),
                max_rows: req(&d, "max_rows", path)?,
            };
            world
                .trace_seqack(spec)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
    }
    let mut last = Instant::now();
    let mut err: Option<PyErr> = None;
    let out = {
        let mut cb = |frac: f64| -> bool {
            // Throttle to a few calls a second of wall time; honour Ctrl-C.
            if frac < 1.0 && last.elapsed() < Duration::from_millis(200) {
                return true;
            }
            last = Instant::now();
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
        };
        world.run(&mut cb)
    };
    if let Some(e) = err {
        return Err(e);
    }
    let d = PyDict::new(py);
    let flows = PyList::empty(py);
    for (f, udp) in out.flows.iter().zip(&out.udp) {
        let d = summary_to_py(py, f)?;
        // UDP flows (iperf3 -u's receiver report); TCP flows carry these keys as None.
        d.set_item("received_packets", udp.map(|u| u.received_packets))?;
        d.set_item("lost_packets", udp.map(|u| u.lost_packets))?;
        d.set_item("loss_fraction", udp.map(|u| u.loss_fraction))?;
        d.set_item("jitter_ms", udp.map(|u| u.jitter_ms))?;
        flows.append(d)?;
    }
    d.set_item("flows", flows)?;
    d.set_item("flow_series", flow_series_to_py(py, &out.flow_series)?)?;
    d.set_item("link_series", link_series_to_py(py, &out.link_series)?)?;
    let stats = PyDict::new(py);
    stats.set_item("events", out.events)?;
    stats.set_item("packets", out.packets)?;
    stats.set_item("fragmented_packets", out.fragmented_packets)?;
    stats.set_item("sim_time_s", cfg.duration.as_secs_f64())?;
    d.set_item("stats", stats)?;
    match &out.seqack {
        Some(t) => {
            let sa = PyDict::new(py);
            sa.set_item("flow_id", vec![t.flow; t.t_ns.len()])?;
            sa.set_item("kind", t.kind.iter().map(|k| k.name()).collect::<Vec<_>>())?;
            sa.set_item(
                "t_s",
                t.t_ns.iter().map(|&n| n as f64 / 1e9).collect::<Vec<_>>(),
            )?;
            sa.set_item("seq_rel", t.seq.clone())?;
            sa.set_item("end_rel", t.end.clone())?;
            sa.set_item("ack_rel", t.ack.clone())?;
            sa.set_item("retransmission", t.retransmission.clone())?;
            sa.set_item("dropped_rows", t.dropped_rows)?;
            d.set_item("seqack", sa)?;
        }
        None => d.set_item("seqack", py.None())?,
    }
    Ok(d)
}

/// Probe mode (`sample_models_ns`): every link direction's model sampled on a grid of `step_ns`
/// over the run, without simulating: per step, the mean capacity over [t, t + step) and the
/// delay and loss in force at t (what `satcc trace export` writes).
fn sample_models<'py>(
    py: Python<'py>,
    cfg: &SimConfig,
    step_ns: u64,
) -> PyResult<Bound<'py, PyDict>> {
    if step_ns == 0 {
        return Err(PyValueError::new_err(
            "config.sample_models_ns: must be > 0",
        ));
    }
    let step = SimDuration::from_nanos(step_ns);
    let n = cfg.duration.as_nanos().div_ceil(step_ns);
    let (mut link_id, mut dir, mut t_ns, mut rate, mut delay, mut loss) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let rows = n
        .checked_mul(2 * cfg.links.len() as u64)
        .and_then(|r| usize::try_from(r).ok());
    let reserved = rows.is_some_and(|r| {
        link_id.try_reserve_exact(r).is_ok()
            && dir.try_reserve_exact(r).is_ok()
            && t_ns.try_reserve_exact(r).is_ok()
            && rate.try_reserve_exact(r).is_ok()
            && delay.try_reserve_exact(r).is_ok()
            && loss.try_reserve_exact(r).is_ok()
    });
    if !reserved {
        return Err(PyMemoryError::new_err(format!(
            "out of memory: {n} samples per link direction do not fit; use a longer step"
        )));
    }
    for (i, l) in cfg.links.iter().enumerate() {
        for (k, (name, d)) in [("ab", &l.ab), ("ba", &l.ba)].into_iter().enumerate() {
            let label = (2 * i + k) as u64; // as Network::build labels directions
            let mut model = match &d.model {
                None => satcc_core::models::constant(LinkState {
                    rate_bps: d.rate_bps,
                    delay: d.delay,
                    loss: d.loss,
                }),
                Some(spec) => spec
                    .build(satcc_core::models::Seeds {
                        seed: cfg.seed,
                        link: i as u64,
                        dir: label,
                    })
                    .map_err(|e| PyValueError::new_err(format!("link[{i}].model.{name}: {e}")))?,
            };
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

/// Routes and resolved queue limits of a resolved scenario, computed by satcc-core's `routing`
/// exactly as the simulator computes them: the emulator's topology and the model engine read
/// their paths and "N BDP" queues from here. Returns {"next_hop": [[dir | None]] (node × dst),
/// "base_delay_ns": [[ns]], "queues": [{"packets"|"bytes": n}] per direction (2i = link i
/// a→b), "paths": [{"fwd": [dir], "rev": [dir]}] per flow}.
#[pyfunction]
pub fn resolve_routes<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = config_from_py(config)?;
    let n = cfg.nodes.len();
    let ends: Vec<LinkEnds> = cfg
        .links
        .iter()
        .map(|l| LinkEnds {
            a: l.a,
            b: l.b,
            ab_delay: l.ab.delay,
            ba_delay: l.ba.delay,
        })
        .collect();
    if let Some((i, _)) = ends.iter().enumerate().find(|(_, l)| l.a >= n || l.b >= n) {
        return Err(PyValueError::new_err(format!(
            "link[{i}]: node index out of range"
        )));
    }
    let routing = Routing::compute(n, &ends);
    let flows: Vec<(usize, usize)> = cfg.flows.iter().map(|f| (f.src, f.dst)).collect();
    if let Some(&(s, d)) = flows.iter().find(|&&(s, d)| s >= n || d >= n) {
        return Err(PyValueError::new_err(format!(
            "flow node index out of range: {s} -> {d}"
        )));
    }
    let max_rtt = routing.max_rtt_per_direction(&flows);

    let out = PyDict::new(py);
    let next = PyList::empty(py);
    let delays = PyList::empty(py);
    for a in 0..n {
        let row: Vec<Option<u32>> = (0..n).map(|b| routing.next_hop(a, b)).collect();
        next.append(row)?;
        let row: Vec<u64> = (0..n)
            .map(|b| routing.base_delay(a, b).as_nanos())
            .collect();
        delays.append(row)?;
    }
    out.set_item("next_hop", next)?;
    out.set_item("base_delay_ns", delays)?;
    let queues = PyList::empty(py);
    for (i, l) in cfg.links.iter().enumerate() {
        for (k, d) in [(2 * i, &l.ab), (2 * i + 1, &l.ba)] {
            let q = PyDict::new(py);
            match d.queue {
                QueueConfig::Packets(p) => q.set_item("packets", p)?,
                QueueConfig::Bytes(b) => q.set_item("bytes", b)?,
                QueueConfig::Bdp(x) => {
                    q.set_item("bytes", bdp_queue_bytes(d.rate_bps, max_rtt[k], x))?
                }
            }
            queues.append(q)?;
        }
    }
    out.set_item("queues", queues)?;
    let paths = PyList::empty(py);
    for &(s, d) in &flows {
        let p = PyDict::new(py);
        p.set_item("fwd", routing.path(s, d))?;
        p.set_item("rev", routing.path(d, s))?;
        paths.append(p)?;
    }
    out.set_item("paths", paths)?;
    Ok(out)
}
