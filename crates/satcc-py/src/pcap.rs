//! Bindings to the capture analyzer (crates/satcc-pcap): `pcap_analyze`, `pcap_analyze_bytes`,
//! `pcap_flag_names`, `pcap_flow_columns`, `pcap_analyze_columns`. Contract in `python/satcc/_native.pyi` (section "capture analyzer").
//! Column tables come back as `(dtype, bytes)` pairs for `numpy.frombuffer`, so a
//! million-packet table costs one copy, not a million Python objects.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use satcc_pcap::tshark::aflag::NAMES;
use satcc_pcap::{
    analyze_bytes, analyze_path, Analysis, CaptureColumns, CaptureError, FlowColumns, Format,
    Options,
};

use crate::columns::set_cells;

/// How often the progress callback is called at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

fn options(bin_ns: i64, packets: bool, rtt_samples: bool) -> PyResult<Options> {
    if bin_ns <= 0 {
        return Err(PyValueError::new_err("bin_ns: must be > 0"));
    }
    Ok(Options {
        bin_ns,
        keep_packets: packets,
        keep_rtt_samples: rtt_samples,
    })
}

fn err(e: CaptureError) -> PyErr {
    match e {
        CaptureError::Io(m) => PyOSError::new_err(m),
        other => PyValueError::new_err(other.to_string()),
    }
}

trait LeBytes: Copy {
    const DTYPE: &'static str;
    fn put(self, out: &mut Vec<u8>);
}
macro_rules! le_bytes {
    ($($t:ty => $d:expr),*) => {$(
        impl LeBytes for $t {
            const DTYPE: &'static str = $d;
            fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()); }
        }
    )*};
}
le_bytes!(u8 => "<u1", u16 => "<u2", u32 => "<u4", u64 => "<u8", i64 => "<i8", f64 => "<f8");

fn column<'py, T: LeBytes>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    name: &str,
    v: &[T],
) -> PyResult<()> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(v));
    for &x in v {
        x.put(&mut out);
    }
    d.set_item(name, (T::DTYPE, PyBytes::new(py, &out)))
}

fn to_py<'py>(py: Python<'py>, a: &Analysis) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(
        "format",
        match a.format {
            Some(Format::Pcap) => Some("pcap"),
            Some(Format::PcapNg) => Some("pcapng"),
            None => None,
        },
    )?;
    d.set_item("bin_ns", a.bin_ns)?;
    d.set_item("first_ts_ns", a.first_ts_ns)?;
    d.set_item("last_ts_ns", a.last_ts_ns)?;
    d.set_item("bytes_read", a.bytes_read)?;
    let s = &a.stats;
    let st = PyDict::new(py);
    st.set_item("frames", s.frames)?;
    st.set_item("tcp_packets", s.tcp_packets)?;
    st.set_item("udp_packets", s.udp_packets)?;
    st.set_item("other_ip_packets", s.other_ip_packets)?;
    st.set_item("non_ip_frames", s.non_ip_frames)?;
    st.set_item("fragments", s.fragments)?;
    st.set_item("malformed_frames", s.malformed_frames)?;
    st.set_item("unsupported_link_frames", s.unsupported_link_frames)?;
    st.set_item("truncated_transport", s.truncated_transport)?;
    st.set_item("unbinned_packets", s.unbinned_packets)?;
    d.set_item("stats", st)?;
    let warnings = PyList::empty(py);
    for w in &a.warnings {
        let wd = PyDict::new(py);
        wd.set_item("record", w.record)?;
        wd.set_item("offset", w.offset)?;
        wd.set_item("message", &w.message)?;
        warnings.append(wd)?;
    }
    d.set_item("warnings", warnings)?;
    let flows = PyList::empty(py);
    for f in &a.flows {
        let fd = PyDict::new(py);
        fd.set_item("id", f.id)?;
        fd.set_item("proto", f.proto)?;
        fd.set_item("dir", f.dir)?;
        fd.set_item("ip_version", f.ip_version)?;
        fd.set_item("start_s", f.start_s)?;
        fd.set_item("end_s", f.end_s)?;
        // the flows and analyze_flows columns, under their declared names
        set_cells(&fd, f.columns.cells())?;
        set_cells(&fd, f.capture.cells())?;
        let fc = PyDict::new(py);
        for (name, n) in NAMES.iter().zip(f.flag_counts.iter()) {
            fc.set_item(*name, *n)?;
        }
        fd.set_item("flag_counts", fc)?;
        fd.set_item("rtt_samples", f.rtt_samples)?;
        fd.set_item("ts_rtt_mean_ms", f.ts_rtt_mean_ms)?;
        fd.set_item("ts_rtt_samples", f.ts_rtt_samples)?;
        fd.set_item("syn", f.syn)?;
        fd.set_item("fin", f.fin)?;
        fd.set_item("rst", f.rst)?;
        match &f.iperf_udp {
            Some(u) => {
                let ud = PyDict::new(py);
                ud.set_item("packets", u.packets)?;
                ud.set_item("lost", u.lost)?;
                ud.set_item("expected", u.expected)?;
                ud.set_item("out_of_order", u.out_of_order)?;
                ud.set_item("jitter_ms", u.jitter_ms)?;
                ud.set_item("counter64", u.counter64)?;
                fd.set_item("iperf_udp", ud)?;
            }
            None => fd.set_item("iperf_udp", py.None())?,
        }
        let b = PyDict::new(py);
        b.set_item("first", f.bins.first)?;
        b.set_item("payload_bytes", f.bins.payload_bytes.clone())?;
        b.set_item("new_bytes", f.bins.new_bytes.clone())?;
        b.set_item("packets", f.bins.packets.clone())?;
        b.set_item("retransmits", f.bins.retransmits.clone())?;
        b.set_item("rtt_mean_ms", f.bin_rtt_mean_ms.clone())?;
        fd.set_item("bins", b)?;
        flows.append(fd)?;
    }
    d.set_item("flows", flows)?;
    match &a.packets {
        Some(p) => {
            let pd = PyDict::new(py);
            column(py, &pd, "frame", &p.frame)?;
            column(py, &pd, "t_ns", &p.t_ns)?;
            column(py, &pd, "flow_id", &p.flow_id)?;
            column(py, &pd, "conn", &p.conn)?;
            column(py, &pd, "proto", &p.proto)?;
            column(py, &pd, "dir", &p.dir)?;
            column(py, &pd, "len", &p.len)?;
            column(py, &pd, "seq_rel", &p.seq_rel)?;
            column(py, &pd, "ack_rel", &p.ack_rel)?;
            column(py, &pd, "tcp_flags", &p.tcp_flags)?;
            column(py, &pd, "analysis", &p.analysis)?;
            column(py, &pd, "window", &p.window)?;
            column(py, &pd, "tsval", &p.tsval)?;
            column(py, &pd, "tsecr", &p.tsecr)?;
            column(py, &pd, "bytes_in_flight", &p.bytes_in_flight)?;
            d.set_item("packets", pd)?;
        }
        None => d.set_item("packets", py.None())?,
    }
    match &a.rtt_samples {
        Some(r) => {
            let rd = PyDict::new(py);
            column(py, &rd, "flow_id", &r.flow_id)?;
            column(py, &rd, "t_ns", &r.t_ns)?;
            column(py, &rd, "rtt_ns", &r.rtt_ns)?;
            column(py, &rd, "kind", &r.kind)?;
            d.set_item("rtt_samples", rd)?;
        }
        None => d.set_item("rtt_samples", py.None())?,
    }
    Ok(d)
}

/// Analyse a pcap/pcapng file. `progress(done_bytes, total_bytes)` is called every few MiB.
#[pyfunction]
#[pyo3(signature = (path, bin_ns=100_000_000, packets=false, rtt_samples=false, progress=None))]
fn pcap_analyze<'py>(
    py: Python<'py>,
    path: PathBuf,
    bin_ns: i64,
    packets: bool,
    rtt_samples: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = options(bin_ns, packets, rtt_samples)?;
    let total = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut last = Instant::now();
    let result = py.allow_threads(|| {
        analyze_path(&path, &opts, |done| {
            // a few calls a second: each waits for the GIL, which another thread may hold
            // (the CLI imports its result writer meanwhile)
            if done < total && last.elapsed() < PROGRESS_EVERY {
                return;
            }
            last = Instant::now();
            if let Some(cb) = &progress {
                Python::with_gil(|py| {
                    if let Err(e) = cb.call1(py, (done, total)) {
                        e.print(py);
                    }
                });
            }
        })
    });
    let a = result.map_err(err)?;
    to_py(py, &a)
}

/// Analyse a capture held in memory.
#[pyfunction]
#[pyo3(signature = (data, bin_ns=100_000_000, packets=false, rtt_samples=false))]
fn pcap_analyze_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    bin_ns: i64,
    packets: bool,
    rtt_samples: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = options(bin_ns, packets, rtt_samples)?;
    let a = analyze_bytes(data, &opts).map_err(err)?;
    to_py(py, &a)
}

/// The `flows` columns each capture flow direction holds (`FlowColumns`), in order.
#[pyfunction]
fn pcap_flow_columns() -> Vec<&'static str> {
    FlowColumns::FIELDS.iter().map(|f| f.name).collect()
}

/// The `analyze_flows` columns each capture flow direction holds (`CaptureColumns`), in order.
#[pyfunction]
fn pcap_analyze_columns() -> Vec<&'static str> {
    CaptureColumns::FIELDS.iter().map(|f| f.name).collect()
}

/// Names of the analysis flag bits, bit 0 first (tshark field names without `tcp.analysis.`).
#[pyfunction]
fn pcap_flag_names() -> Vec<&'static str> {
    NAMES.to_vec()
}

/// Add the analyzer's functions to `satcc._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pcap_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_analyze_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_flag_names, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_flow_columns, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_analyze_columns, m)?)?;
    Ok(())
}
