//! `run_sim`: dict config in, dict of summaries and columnar series out.

use std::time::{Duration, Instant};

use pyo3::exceptions::{PyKeyError, PyMemoryError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use satcc_core::record::{FlowSeries, FlowSummary, LinkSeries};
use satcc_core::link::LinkState;
use satcc_core::models::{constellation, geo, lfn, starlink, trace, EpochClock, ModelSpec};
use satcc_core::{SimDuration, SimTime};
use satcc_sim::{DirConfig, FlowConfig, LinkConfig, PacingMode, Proto, QueueConfig, SimConfig};

/// Fetch a required key, naming the path in the error.
fn req<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str, path: &str) -> PyResult<T> {
    let v = d.get_item(key)?.ok_or_else(|| PyKeyError::new_err(format!("{path}.{key}: missing")))?;
    v.extract().map_err(|e| PyValueError::new_err(format!("{path}.{key}: {e}")))
}

fn opt<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str, path: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v.extract().map(Some).map_err(|e| PyValueError::new_err(format!("{path}.{key}: {e}"))),
    }
}

fn dict<'py>(d: &Bound<'py, PyDict>, key: &str, path: &str) -> PyResult<Bound<'py, PyDict>> {
    let v = d.get_item(key)?.ok_or_else(|| PyKeyError::new_err(format!("{path}.{key}: missing")))?;
    v.downcast_into::<PyDict>().map_err(|_| PyValueError::new_err(format!("{path}.{key}: expected a table")))
}

fn dir_from(d: &Bound<'_, PyDict>, path: &str) -> PyResult<DirConfig> {
    let q = dict(d, "queue", path)?;
    let queue = if let Some(n) = opt::<u64>(&q, "packets", path)? {
        QueueConfig::Packets(n)
    } else if let Some(b) = opt::<u64>(&q, "bytes", path)? {
        QueueConfig::Bytes(b)
    } else if let Some(x) = opt::<f64>(&q, "bdp", path)? {
        QueueConfig::Bdp(x)
    } else {
        return Err(PyValueError::new_err(format!("{path}.queue: expected packets, bytes or bdp")));
    };
    Ok(DirConfig {
        rate_bps: req(d, "rate_bps", path)?,
        delay: SimDuration::from_nanos(req(d, "delay_ns", path)?),
        loss: req(d, "loss", path)?,
        queue,
        ecn_threshold_pkts: opt(d, "ecn_threshold_pkts", path)?,
        drop_packets: opt(d, "drop_packets", path)?.unwrap_or_default(),
        jitter: SimDuration::from_nanos(opt(d, "jitter_ns", path)?.unwrap_or(0)),
        model: match d.get_item("model")? {
            Some(m) if !m.is_none() => {
                let m = m.downcast_into::<PyDict>().map_err(|_| PyValueError::new_err(format!("{path}.model: expected a table")))?;
                Some(model_from(&m, &format!("{path}.model"))?)
            }
            _ => None,
        },
    })
}

/// A `[low, high]` (or any two-element) list.
fn pair<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str, path: &str) -> PyResult<(T, T)> {
    let v: Vec<T> = req(d, key, path)?;
    let mut it = v.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(a), Some(b), None) => Ok((a, b)),
        _ => Err(PyValueError::new_err(format!("{path}.{key}: expected two values"))),
    }
}

fn ns(d: &Bound<'_, PyDict>, key: &str, path: &str) -> PyResult<SimDuration> {
    Ok(SimDuration::from_nanos(req(d, key, path)?))
}

fn clock_from(d: &Bound<'_, PyDict>, path: &str) -> PyResult<EpochClock> {
    Ok(EpochClock { period: ns(d, "period_ns", path)?, phase: ns(d, "phase_ns", path)?, start: ns(d, "start_ns", path)? })
}

/// A resolved `[link.model]` direction (keys in `_native.pyi`, "MODEL").
fn model_from(d: &Bound<'_, PyDict>, path: &str) -> PyResult<ModelSpec> {
    let kind: String = req(d, "kind", path)?;
    Ok(match kind.as_str() {
        "starlink" => {
            let q: Vec<u64> = req(d, "rtt_quantiles_ns", path)?;
            let q: [u64; starlink::RTT_QUANTILES] = q
                .try_into()
                .map_err(|_| PyValueError::new_err(format!("{path}.rtt_quantiles_ns: expected {} values", starlink::RTT_QUANTILES)))?;
            let (d0, d1): (u64, u64) = pair(d, "disturbance_ns", path)?;
            ModelSpec::Starlink(starlink::StarlinkConfig {
                clock: clock_from(d, path)?,
                rtt_quantiles: q.map(SimDuration::from_nanos),
                capacity_bps: pair(d, "capacity_bps", path)?,
                loss: pair(d, "loss", path)?,
                disturbance: (SimDuration::from_nanos(d0), SimDuration::from_nanos(d1)),
                outage_probability: req(d, "outage_probability", path)?,
                burst_loss: pair(d, "burst_loss", path)?,
            })
        }
        "geo" => {
            let delay = match opt::<u64>(d, "delay_ns", path)? {
                Some(x) => geo::GeoDelay::Fixed(SimDuration::from_nanos(x)),
                None => geo::GeoDelay::Geometry {
                    altitude_m: req(d, "altitude_m", path)?,
                    terminal_elevation_deg: req(d, "terminal_elevation_deg", path)?,
                    gateway_elevation_deg: req(d, "gateway_elevation_deg", path)?,
                    extra: ns(d, "extra_delay_ns", path)?,
                },
            };
            ModelSpec::Geo(geo::GeoConfig { rate_bps: req(d, "rate_bps", path)?, delay, loss: req(d, "loss", path)? })
        }
        "lfn" => {
            let police = match d.get_item("police")? {
                Some(p) if !p.is_none() => {
                    let p = p.downcast_into::<PyDict>().map_err(|_| PyValueError::new_err(format!("{path}.police: expected a table")))?;
                    let pp = format!("{path}.police");
                    Some(lfn::Police { rate_bps: pair(&p, "rate_bps", &pp)?, burst_bytes: req(&p, "burst_bytes", &pp)?, redraw: ns(&p, "redraw_ns", &pp)? })
                }
                _ => None,
            };
            let state = LinkState { rate_bps: req(d, "rate_bps", path)?, delay: ns(d, "delay_ns", path)?, loss: req(d, "loss", path)? };
            ModelSpec::Lfn(lfn::LfnConfig { state, police })
        }
        "trace" => {
            let capacity = match opt::<Vec<u64>>(d, "opportunities_ms", path)? {
                Some(stamps_ms) => trace::Capacity::Opportunities { stamps_ms, bytes: req(d, "bytes_per_opportunity", path)? },
                None => trace::Capacity::Rate(req(d, "rate_bps", path)?),
            };
            let mut series = Vec::new();
            if let Some(rows) = opt::<Vec<Bound<'_, PyList>>>(d, "series", path)? {
                for (i, row) in rows.iter().enumerate() {
                    let bad = || PyValueError::new_err(format!("{path}.series[{i}]: expected [t_ns, delay_ns, loss]"));
                    if row.len() != 3 {
                        return Err(bad());
                    }
                    let (t, delay, loss): (u64, u64, f64) =
                        (row.get_item(0)?.extract().map_err(|_| bad())?, row.get_item(1)?.extract().map_err(|_| bad())?, row.get_item(2)?.extract().map_err(|_| bad())?);
                    series.push(trace::Row { at: SimTime::from_nanos(t), delay: SimDuration::from_nanos(delay), loss });
                }
            }
            ModelSpec::Trace(trace::TraceConfig { capacity, series, delay: ns(d, "delay_ns", path)?, loss: req(d, "loss", path)? })
        }
        "constellation" => ModelSpec::Constellation(constellation::ConstellationConfig {
            shell: constellation::Shell {
                altitude_m: req(d, "altitude_m", path)?,
                inclination_deg: req(d, "inclination_deg", path)?,
                planes: req(d, "planes", path)?,
                per_plane: req(d, "per_plane", path)?,
                phasing: req(d, "phasing", path)?,
            },
            terminal: pair(d, "terminal", path)?,
            gateway: pair(d, "gateway", path)?,
            min_elevation_deg: req(d, "min_elevation_deg", path)?,
            clock: clock_from(d, path)?,
            extra_delay: ns(d, "extra_delay_ns", path)?,
            rate_bps: req(d, "rate_bps", path)?,
            loss: req(d, "loss", path)?,
        }),
        other => {
            return Err(PyValueError::new_err(format!(
                "{path}.kind: expected starlink, geo, lfn, trace or constellation, found {other:?}"
            )))
        }
    })
}

pub fn config_from_py(cfg: &Bound<'_, PyDict>) -> PyResult<SimConfig> {
    let p = "config";
    let mut links = Vec::new();
    let lk = cfg.get_item("links")?.ok_or_else(|| PyKeyError::new_err("config.links: missing"))?;
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
    let fl = cfg.get_item("flows")?.ok_or_else(|| PyKeyError::new_err("config.flows: missing"))?;
    for (i, f) in fl.downcast::<PyList>()?.iter().enumerate() {
        let path = format!("flow[{i}]");
        let f = f.downcast_into::<PyDict>()?;
        let pacing = match req::<String>(&f, "pacing", &path)?.as_str() {
            "auto" => PacingMode::Auto,
            "on" => PacingMode::On,
            "off" => PacingMode::Off,
            other => return Err(PyValueError::new_err(format!("{path}.pacing: expected auto, on or off, found {other:?}"))),
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
            ecn: req(&f, "ecn", &path)?,
            initial_cwnd: req(&f, "initial_cwnd", &path)?,
            pacing,
            delayed_ack: req(&f, "delayed_ack", &path)?,
            min_rto: SimDuration::from_nanos(req(&f, "min_rto_ns", &path)?),
            sndbuf_bytes: opt(&f, "sndbuf_bytes", &path)?,
            proto: match opt::<String>(&f, "proto", &path)?.as_deref() {
                None | Some("tcp") => Proto::Tcp,
                Some("udp") => Proto::Udp { rate_bps: req(&f, "udp_rate_bps", &path)?, payload_bytes: req(&f, "udp_payload_bytes", &path)? },
                Some(other) => return Err(PyValueError::new_err(format!("{path}.proto: expected tcp or udp, found {other:?}"))),
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
    })
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
/// waited on the backtrace lock the panic held (issue 16). Here a failed allocation is a
/// `MemoryError`, and the half-built list is freed.
fn list_of<'py, T: Copy>(py: Python<'py>, xs: &[T], item: impl Fn(T) -> *mut ffi::PyObject) -> PyResult<Bound<'py, PyAny>> {
    let len = ffi::Py_ssize_t::try_from(xs.len()).map_err(|_| PyMemoryError::new_err("a series longer than a Python list holds"))?;
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
    list_of(py, xs, |x| unsafe { ffi::PyLong_FromUnsignedLongLong(x.into()) })
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
    satcc_sim::world::World::new(&cfg).map(drop).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Run the simulator on a resolved config (see `_native.pyi`).
#[pyfunction]
#[pyo3(signature = (config, progress=None))]
pub fn run_sim<'py>(py: Python<'py>, config: &Bound<'py, PyDict>, progress: Option<PyObject>) -> PyResult<Bound<'py, PyDict>> {
    let cfg = config_from_py(config)?;
    if let Some(step) = opt::<u64>(config, "sample_models_ns", "config")? {
        return sample_models(py, &cfg, step);
    }
    let mut world = satcc_sim::world::World::new(&cfg).map_err(|e| PyValueError::new_err(e.to_string()))?;
    world.reserve_series().map_err(|e| PyMemoryError::new_err(e.to_string()))?;
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
    Ok(d)
}

/// Probe mode (`sample_models_ns`): every link direction's model sampled on a grid of `step_ns`
/// over the run, without simulating: per step, the mean capacity over [t, t + step) and the
/// delay and loss in force at t (what `satcc trace export` writes).
fn sample_models<'py>(py: Python<'py>, cfg: &SimConfig, step_ns: u64) -> PyResult<Bound<'py, PyDict>> {
    if step_ns == 0 {
        return Err(PyValueError::new_err("config.sample_models_ns: must be > 0"));
    }
    let step = SimDuration::from_nanos(step_ns);
    let n = cfg.duration.as_nanos().div_ceil(step_ns);
    let (mut link_id, mut dir, mut t_ns, mut rate, mut delay, mut loss) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    let rows = n.checked_mul(2 * cfg.links.len() as u64).and_then(|r| usize::try_from(r).ok());
    let reserved = rows.is_some_and(|r| {
        link_id.try_reserve_exact(r).is_ok()
            && dir.try_reserve_exact(r).is_ok()
            && t_ns.try_reserve_exact(r).is_ok()
            && rate.try_reserve_exact(r).is_ok()
            && delay.try_reserve_exact(r).is_ok()
            && loss.try_reserve_exact(r).is_ok()
    });
    if !reserved {
        return Err(PyMemoryError::new_err(format!("out of memory: {n} samples per link direction do not fit; use a longer step")));
    }
    for (i, l) in cfg.links.iter().enumerate() {
        for (k, (name, d)) in [("ab", &l.ab), ("ba", &l.ba)].into_iter().enumerate() {
            let label = (2 * i + k) as u64; // as Network::build labels directions
            let mut model = match &d.model {
                None => satcc_core::models::constant(LinkState { rate_bps: d.rate_bps, delay: d.delay, loss: d.loss }),
                Some(spec) => spec
                    .build(satcc_core::models::Seeds { seed: cfg.seed, link: i as u64, dir: label })
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
