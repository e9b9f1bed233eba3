//! Bindings to the simulator's socket-like TCP endpoint (crates/satcc-sim
//! `tcp::endpoint`), for `satcc drill --engine sim` (python/satcc/drill/sim.py). Times are
//! integer nanoseconds of virtual time; segments cross as tuples
//! `(t_ns, flags, seq, ack, win, len, options, ecn)` with `flags` the TCP header's bits,
//! `options` a list of `(kind, [values])` and `ecn` one of "noecn", "ect0", "ect1", "ce".
//! Contract in `python/satcc/_native.pyi` (section "drill endpoint").

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use satcc_core::dirspec::Direction;
use satcc_core::scenario::{Flow, Link, Scenario, DEFAULT_QUEUE};
use satcc_core::{SimDuration, SimTime};
use satcc_sim::tcp::endpoint::{Endpoint, WireEcn, WireOpt, WireSeg};

type SegTuple = (u64, u8, u32, u32, u32, u32, Vec<(String, Vec<u64>)>, String);

fn at(ns: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_nanos(ns)
}

fn opt_in(kind: &str, v: &[u64]) -> PyResult<WireOpt> {
    let need = |n: usize| {
        if v.len() < n {
            Err(PyValueError::new_err(format!(
                "option {kind}: expected {n} value(s)"
            )))
        } else {
            Ok(())
        }
    };
    Ok(match kind {
        "nop" => WireOpt::Nop,
        "eol" => WireOpt::Eol,
        "sackOK" => WireOpt::SackOk,
        "mss" => {
            need(1)?;
            WireOpt::Mss(v[0] as u32)
        }
        "wscale" => {
            need(1)?;
            WireOpt::Wscale(v[0] as u32)
        }
        "TS" => {
            need(2)?;
            WireOpt::Ts(v[0] as u32, v[1] as u32)
        }
        "sack" => WireOpt::Sack(
            v.chunks_exact(2)
                .map(|c| (c[0] as u32, c[1] as u32))
                .collect(),
        ),
        other => {
            return Err(PyValueError::new_err(format!(
                "option {other}: not one the simulator's endpoint reads"
            )))
        }
    })
}

fn opt_out(o: &WireOpt) -> (String, Vec<u64>) {
    match o {
        WireOpt::Nop => ("nop".into(), vec![]),
        WireOpt::Eol => ("eol".into(), vec![]),
        WireOpt::SackOk => ("sackOK".into(), vec![]),
        WireOpt::Mss(m) => ("mss".into(), vec![*m as u64]),
        WireOpt::Wscale(w) => ("wscale".into(), vec![*w as u64]),
        WireOpt::Ts(v, e) => ("TS".into(), vec![*v as u64, *e as u64]),
        WireOpt::Sack(b) => (
            "sack".into(),
            b.iter().flat_map(|&(a, z)| [a as u64, z as u64]).collect(),
        ),
    }
}

/// The simulator's TCP endpoint in virtual time (one socket: listen, accept, write, read,
/// close, `TCP_INFO`).
#[pyclass(unsendable)]
pub struct DrillEndpoint {
    e: Endpoint,
}

#[pymethods]
impl DrillEndpoint {
    #[new]
    #[pyo3(signature = (cca="cubic", sack=true, timestamps=true, window_scaling=true,
        rwnd_bytes=33_554_432, rcvbuf_autotune=true, ecn=2, initial_cwnd=10, sndbuf_bytes=None, slow_start_after_idle=false,
        pacing="auto", min_tso_segs=2, tso_win_divisor=3))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        cca: &str,
        sack: bool,
        timestamps: bool,
        window_scaling: bool,
        rwnd_bytes: u64,
        rcvbuf_autotune: bool,
        ecn: u8,
        initial_cwnd: u32,
        sndbuf_bytes: Option<u64>,
        slow_start_after_idle: bool,
        pacing: &str,
        min_tso_segs: u32,
        tso_win_divisor: u32,
    ) -> PyResult<Self> {
        let mut cfg = Flow::bulk(0, 0, 1, cca);
        // "on": every socket paced, as under the fq qdisc; "auto": only when the
        // algorithm asks (BBR), as under pfifo (read by `Pacing`'s serde, as a scenario's).
        cfg.pacing = serde_json::from_value(pacing.into())
            .map_err(|e| PyValueError::new_err(format!("pacing: {e}")))?;
        cfg.sack = sack;
        cfg.timestamps = timestamps;
        cfg.window_scaling = window_scaling;
        cfg.rwnd_bytes = rwnd_bytes;
        cfg.rcvbuf_autotune = rcvbuf_autotune;
        cfg.initial_cwnd = initial_cwnd.max(1);
        cfg.sndbuf_bytes = sndbuf_bytes;
        // The deferral model off (docs/drill.md, 2026-11-30): a script's injected ACK lands
        // exactly on its instant in virtual time, where Linux's `tcp_tso_should_defer` tie
        // (the last write exactly 1 ms before) cannot occur on a host, so a deferring sender
        // holds what the kernel sends (shutdown-rdwr-send-queue-ack-close, line 30).
        cfg.tso_defer = false;
        satcc_cc::lookup(cca, &satcc_cc::Params::new())
            .map_err(|e| PyValueError::new_err(format!("cca: {e}")))?;
        // the flow of a two-node scenario, through the one resolver like every engine's
        let link = Link::symmetric(0, 1, Direction::new(1, 0, 0.0, DEFAULT_QUEUE));
        let resolved = Scenario::new("drill", &["a", "b"], vec![link], vec![cfg], 1)
            .resolve()
            .map_err(PyValueError::new_err)?;
        let cfg = resolved
            .scenario
            .flows
            .into_iter()
            .next()
            .expect("one flow");
        let mut e = Endpoint::new(cfg, ecn);
        e.set_slow_start_after_idle(slow_start_after_idle);
        e.set_tso_sysctls(min_tso_segs, tso_win_divisor);
        Ok(DrillEndpoint { e })
    }

    fn listen(&mut self) {
        self.e.listen();
    }

    fn connect(&mut self) {
        self.e.connect();
    }

    fn set_cca(&mut self, name: &str) -> PyResult<()> {
        self.e.set_cca(name).map_err(PyValueError::new_err)
    }

    fn cca(&self) -> String {
        self.e.cca().to_string()
    }

    fn now_ns(&self) -> u64 {
        self.e.now().as_nanos()
    }

    fn advance(&mut self, t_ns: u64) {
        self.e.advance(at(t_ns));
    }

    #[allow(clippy::too_many_arguments)]
    fn inject(
        &mut self,
        flags: u8,
        seq: u32,
        ack: u32,
        win: u32,
        len: u32,
        options: Vec<(String, Vec<u64>)>,
        ecn: &str,
    ) -> PyResult<()> {
        let opts = options
            .iter()
            .map(|(k, v)| opt_in(k, v))
            .collect::<PyResult<Vec<_>>>()?;
        let ecn = match ecn {
            "ect0" | "ect01" => WireEcn::Ect0,
            "ect1" => WireEcn::Ect1,
            "ce" => WireEcn::Ce,
            _ => WireEcn::NotEct,
        };
        let seg = WireSeg {
            t: self.e.now(),
            flags,
            seq,
            ack,
            win,
            len,
            opts,
            ecn,
        };
        self.e.inject(&seg).map_err(PyValueError::new_err)
    }

    fn next_outbound(&mut self, deadline_ns: u64) -> Option<SegTuple> {
        self.e.next_outbound(at(deadline_ns)).map(|s| {
            let ecn = match s.ecn {
                WireEcn::NotEct => "noecn",
                WireEcn::Ect0 => "ect0",
                WireEcn::Ect1 => "ect1",
                WireEcn::Ce => "ce",
            };
            (
                s.t.as_nanos(),
                s.flags,
                s.seq,
                s.ack,
                s.win,
                s.len,
                s.opts.iter().map(opt_out).collect(),
                ecn.to_string(),
            )
        })
    }

    fn write(&mut self, n: u64) -> PyResult<u64> {
        self.e.write(n).map_err(PyValueError::new_err)
    }

    /// `send` with `MSG_MORE` when `more`.
    #[pyo3(signature = (n, more=false))]
    fn send(&mut self, n: u64, more: bool) -> PyResult<u64> {
        self.e.send(n, more).map_err(PyValueError::new_err)
    }

    /// `setsockopt(TCP_NODELAY)`.
    fn set_nodelay(&mut self, on: bool) {
        self.e.set_nodelay(on);
    }

    /// `setsockopt(TCP_CORK)`.
    fn set_cork(&mut self, on: bool) {
        self.e.set_cork(on);
    }

    /// The host's qdisc drops every packet (`tc qdisc ... pfifo limit 0`), or no longer.
    fn set_local_drop(&mut self, on: bool) {
        self.e.set_local_drop(on);
    }

    fn write_shut(&self) -> bool {
        self.e.write_shut()
    }

    fn read(&mut self, n: u64) -> u64 {
        self.e.read(n)
    }

    fn readable(&self) -> u64 {
        self.e.readable()
    }

    fn fin_received(&self) -> bool {
        self.e.fin_received()
    }

    fn close_write(&mut self) {
        self.e.close_write();
    }

    /// `close()`: a FIN after the data, or a RST when received data was never read.
    fn close(&mut self) {
        self.e.close();
    }

    /// `shutdown(SHUT_RD)`.
    fn shutdown_read(&mut self) {
        self.e.shutdown_read();
    }

    /// Whether a blocking read returns now (data, FIN, SHUT_RD, or the connection closed).
    fn read_ready(&self) -> bool {
        self.e.read_ready()
    }

    /// The pending socket error's errno name ("ECONNRESET", ...), reported once.
    fn take_error(&mut self) -> Option<&'static str> {
        self.e.take_error().map(|e| e.name())
    }

    /// `getsockopt(TCP_MAXSEG)`.
    fn maxseg(&self) -> u32 {
        self.e.maxseg()
    }

    /// `setsockopt(TCP_MAXSEG)`; ValueError is EINVAL.
    fn set_maxseg(&mut self, mss: u32) -> PyResult<()> {
        self.e.set_maxseg(mss).map_err(PyValueError::new_err)
    }

    fn established(&self) -> bool {
        self.e.established()
    }

    /// `struct tcp_info` fields the endpoint knows, as `tcpi_*` names.
    /// Where the data segments a zero-window probe sent end (stream offsets): PSH there.
    fn probe_push_ends(&self) -> Vec<u64> {
        self.e.probe_push_ends().to_vec()
    }

    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let i = self.e.info();
        let d = PyDict::new(py);
        d.set_item("tcpi_state", i.state)?;
        d.set_item("tcpi_options", i.options)?;
        d.set_item("tcpi_snd_wscale", i.snd_wscale)?;
        d.set_item("tcpi_rcv_wscale", i.rcv_wscale)?;
        d.set_item("tcpi_wscale", (i.rcv_wscale << 4) | i.snd_wscale)?;
        d.set_item("tcpi_ato", i.ato_us)?;
        d.set_item("tcpi_rcv_mss", i.rcv_mss)?;
        d.set_item("tcpi_advmss", i.advmss)?;
        d.set_item("tcpi_rcv_ssthresh", i.rcv_ssthresh)?;
        d.set_item("tcpi_rcv_wnd", i.rcv_wnd)?;
        d.set_item("tcpi_bytes_received", i.bytes_received)?;
        d.set_item("tcpi_notsent_bytes", i.notsent_bytes)?;
        d.set_item("tcpi_pmtu", 1500)?;
        d.set_item("tcpi_last_data_sent", i.last_data_sent_ms)?;
        d.set_item("tcpi_last_data_recv", i.last_data_recv_ms)?;
        d.set_item("tcpi_last_ack_recv", i.last_ack_recv_ms)?;
        d.set_item("tcpi_busy_time", i.busy_time_us)?;
        d.set_item("tcpi_rwnd_limited", i.rwnd_limited_us)?;
        if let Some(s) = i.sender {
            d.set_item("tcpi_ca_state", s.ca_state)?;
            d.set_item("tcpi_retransmits", s.retransmits)?;
            d.set_item("tcpi_backoff", s.backoff)?;
            d.set_item("tcpi_probes", s.probes)?;
            d.set_item("tcpi_rto", s.rto_us)?;
            d.set_item("tcpi_snd_mss", s.mss)?;
            d.set_item("tcpi_unacked", s.packets_out)?;
            d.set_item("tcpi_sacked", s.sacked_out)?;
            d.set_item("tcpi_lost", s.lost_out)?;
            d.set_item("tcpi_retrans", s.retrans_out)?;
            d.set_item("tcpi_total_retrans", s.total_retrans)?;
            d.set_item("tcpi_rtt", s.srtt_us)?;
            d.set_item("tcpi_rttvar", s.rttvar_us)?;
            d.set_item("tcpi_min_rtt", s.min_rtt_us)?;
            d.set_item("tcpi_snd_ssthresh", s.ssthresh)?;
            d.set_item("tcpi_snd_cwnd", s.cwnd)?;
            d.set_item("tcpi_reordering", s.reordering)?;
            d.set_item("tcpi_reord_seen", s.reord_seen)?;
            d.set_item("tcpi_dsack_dups", s.dsack_dups)?;
            d.set_item("tcpi_snd_wnd", s.snd_wnd)?;
            d.set_item("tcpi_bytes_acked", s.snd_una)?;
            d.set_item("tcpi_bytes_sent", s.snd_nxt)?;
            d.set_item("tcpi_delivered", s.delivered)?;
            d.set_item("tcpi_delivered_ce", s.delivered_ce)?;
            d.set_item("tcpi_pacing_rate", s.pacing_rate_bps)?; // bytes/s, as the sender keeps it
            d.set_item("tcpi_data_segs_out", s.sent_packets)?;
            d.set_item("tcpi_segs_out", s.sent_packets)?;
        }
        Ok(d)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<DrillEndpoint>()?;
    Ok(())
}
