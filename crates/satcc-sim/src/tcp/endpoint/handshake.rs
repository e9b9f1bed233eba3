//! The three-way handshake, both opens: the SYN, the SYN-ACK and their retransmissions,
//! option negotiation (`tcp_conn_request`, `tcp_connect`, `tcp_rcv_synsent_state_process`).

use satcc_core::{SimDuration, SimTime};

use super::wire::ts_of;
use super::{
    Endpoint, SockErr, State, WireEcn, WireOpt, WireSeg, CWR, ECE, ISS, RTO_MAX, SYN,
    SYNACK_RETRIES, SYN_LINEAR_TIMEOUTS, SYN_RETRIES, TIMEOUT_INIT, TS_ALIGNED, T_SYN,
};
use crate::packet::{Kind, Packet};
use crate::tcp::receiver::{EcnEcho, RcvBuf, Receiver};
use crate::tcp::sender::Sender;
use crate::tcp::Out;
use crate::tcp::MSS_DEFAULT;

impl Endpoint {
    /// The request (SYN-RECEIVED) is dropped: the listener waits for another SYN.
    pub(super) fn drop_request(&mut self) {
        self.receiver = None;
        self.syn_timer = None;
        self.syn_retx = 0;
        self.state = State::Listen;
    }

    /// Answer the peer's SYN again with our SYN-ACK (a retransmitted SYN, or our timer).
    pub(super) fn resend_synack(&mut self) {
        let Some(seg) = self.syn_seg.clone() else {
            return;
        };
        let mut o = std::mem::take(&mut self.scratch);
        let p = self.syn_packet(&seg);
        if let Some(r) = self.receiver.as_mut() {
            r.on_packet(self.now, &p, &mut o);
        }
        self.synack_at = self.now;
        self.scratch = o;
        self.flush();
    }

    /// The next SYN / SYN-ACK timeout: `TCP_TIMEOUT_INIT`, doubled per retransmission
    /// already made (`tcp_retransmit_timer`, `reqsk_timer_handler`) — for a SYN only after
    /// the first `tcp_syn_linear_timeouts` — at most `TCP_RTO_MAX`.
    pub(super) fn syn_timeout(&self) -> SimDuration {
        let doublings = match self.state {
            State::SynSent => self.syn_retx.saturating_sub(SYN_LINEAR_TIMEOUTS),
            _ => self.syn_retx,
        };
        TIMEOUT_INIT.mul_u64(1 << doublings.min(16)).min(RTO_MAX)
    }

    /// The SYN or SYN-ACK timer fired (`tcp_retransmit_timer` on a SYN-SENT socket,
    /// `inet_rtx_syn_ack` via `reqsk_timer_handler`): send it again, or give up after
    /// `tcp_syn_retries` / `tcp_synack_retries`.
    pub(super) fn retransmit_syn(&mut self) {
        match self.state {
            State::SynSent => {
                if self.syn_retx >= SYN_RETRIES {
                    self.err = Some(SockErr::TimedOut);
                    self.tcp_done();
                    return;
                }
                self.syn_retx += 1;
                if let Some(mut syn) = self.syn_seg.clone() {
                    syn.t = self.now;
                    let tsval = self.ts_clock(self.now);
                    for o in &mut syn.opts {
                        if let WireOpt::Ts(v, _) = o {
                            *v = tsval;
                        }
                    }
                    self.out.push_back(syn);
                }
                self.synack_at = self.now;
            }
            State::SynRcvd => {
                if self.syn_retx >= SYNACK_RETRIES {
                    self.drop_request();
                    return;
                }
                self.syn_retx += 1;
                self.resend_synack();
            }
            _ => return,
        }
        let at = self.now + self.syn_timeout();
        self.syn_timer = Some(self.arm(T_SYN, at));
    }

    pub(super) fn syn_packet(&self, seg: &WireSeg) -> Packet {
        let mut p = Packet::new(0, Kind::Syn, 0);
        p.tsval = ts_of(seg).map_or(0, |(v, _)| v as u64);
        p.ece = self.ecn_ok;
        p.cwr = self.ecn_ok;
        p
    }

    /// Read the peer's SYN or SYN-ACK options and settle what both sides use
    /// (`tcp_parse_options`, `tcp_openreq_init`), as Linux does; the peer's ISN.
    pub(super) fn negotiate(&mut self, seg: &WireSeg) {
        let mut peer_mss = MSS_DEFAULT;
        let (mut peer_sack, mut peer_ws) = (false, None);
        for o in &seg.opts {
            match o {
                WireOpt::Mss(m) => peer_mss = *m,
                WireOpt::SackOk => peer_sack = true,
                WireOpt::Wscale(w) => peer_ws = Some(*w),
                _ => {}
            }
        }
        let peer_ts = ts_of(seg).is_some();
        self.irs = seg.seq;
        let c = &mut self.cfg;
        c.sack &= peer_sack;
        c.timestamps &= peer_ts;
        c.window_scaling &= peer_ws.is_some();
        // RFC 7323 §2.3: a shift above 14 is taken as 14.
        self.snd_wscale = if c.window_scaling {
            peer_ws.unwrap_or(0).min(14)
        } else {
            0
        };
        // tcp_mtu_to_mss: min(the route's, the peer's, TCP_MAXSEG's) less the timestamps
        // option (`mss_clamp` takes `user_mss`).
        let ts_len = self.ts_len();
        self.cfg.mss = self.advmss().min(peer_mss).saturating_sub(ts_len).max(1);
    }

    pub(super) fn ts_len(&self) -> u32 {
        if self.cfg.timestamps {
            TS_ALIGNED
        } else {
            0
        }
    }

    /// The receiving half with the current settings, its window initialised as for a SYN
    /// (`tcp_openreq_init_rwin`, `tcp_select_initial_window`); the SYN-ACK it would answer.
    pub(super) fn make_receiver(&mut self, syn: &Packet) -> (Receiver, Packet) {
        let c = &self.cfg;
        let rcvbuf = RcvBuf {
            max_bytes: c.rwnd_bytes.max(self.advmss() as u64),
            autotune: c.rcvbuf_autotune,
            window_scaling: c.window_scaling,
        };
        let mut r = Receiver::new(
            0,
            1,
            self.advmss() - self.ts_len(),
            c.timestamps,
            c.sack,
            c.delayed_ack,
            rcvbuf,
            self.ecn_ok.then_some(EcnEcho::Classic),
            None,
        );
        let mut o = Out::default();
        r.on_packet(self.now, syn, &mut o);
        let synack = o.pkts.pop().expect("a receiver answers a SYN");
        (r, synack)
    }

    /// `tcp_conn_request`: negotiate, and answer with the SYN-ACK.
    pub(super) fn on_syn(&mut self, seg: &WireSeg) -> Result<(), String> {
        self.negotiate(seg);
        self.ts_recent = ts_of(seg).map_or(0, |t| t.0);
        // tcp_ecn_create_request: an ECN-setup SYN (ECE and CWR) when tcp_ecn allows it.
        self.ecn_ok = seg.flags & (ECE | CWR) == (ECE | CWR) && matches!(self.ecn_sysctl, 1 | 2);
        self.cfg.ecn = self.ecn_ok;
        let p = self.syn_packet(seg);
        let (r, synack) = self.make_receiver(&p);
        self.receiver = Some(r);
        self.scratch.pkts.push(synack);
        self.synack_at = self.now;
        self.state = State::SynRcvd;
        self.syn_seg = Some(seg.clone());
        self.syn_retx = 0;
        let at = self.now + self.syn_timeout();
        self.syn_timer = Some(self.arm(T_SYN, at));
        self.flush();
        Ok(())
    }

    /// `connect`: send the SYN (`tcp_connect`, options as `tcp_syn_options`); ECN asked for
    /// with `tcp_ecn` = 1.
    pub fn connect(&mut self) {
        let mut syn = Packet::new(0, Kind::Syn, 0);
        syn.tsval = self.ts_clock(self.now) as u64;
        let (r, synack) = self.make_receiver(&syn);
        let c = &self.cfg;
        let ws = r.rcv_wscale();
        let mut opts = vec![WireOpt::Mss(self.advmss())];
        opts.extend(self.syn_options(
            c.timestamps,
            c.sack,
            c.window_scaling,
            ws,
            (syn.tsval as u32, 0),
        ));
        let ecn = if self.ecn_sysctl == 1 { ECE | CWR } else { 0 };
        let syn_seg = WireSeg {
            t: self.now,
            flags: SYN | ecn,
            seq: ISS,
            ack: 0,
            win: synack.rwnd.min(65_535) as u32,
            len: 0,
            opts,
            ecn: WireEcn::NotEct,
        };
        self.out.push_back(syn_seg.clone());
        self.syn_seg = Some(syn_seg);
        self.receiver = Some(r);
        self.synack_at = self.now; // the SYN's time: the handshake's RTT sample starts here
        self.state = State::SynSent;
        self.syn_retx = 0;
        let at = self.now + self.syn_timeout();
        self.syn_timer = Some(self.arm(T_SYN, at));
    }

    /// The SYN-ACK arrived (`tcp_rcv_synsent_state_process`): established; ACK it.
    pub(super) fn on_synack(&mut self, seg: &WireSeg) -> Result<(), String> {
        self.negotiate(seg);
        self.ts_recent = ts_of(seg).map_or(0, |t| t.0);
        // tcp_ecn_rcv_synack: ECN agreed when we asked and the SYN-ACK has ECE without CWR.
        self.ecn_ok = self.ecn_sysctl == 1 && seg.flags & (ECE | CWR) == ECE;
        self.cfg.ecn = self.ecn_ok;
        let syn = Packet::new(0, Kind::Syn, 0);
        let (mut r, _) = self.make_receiver(&syn);
        r.replace_ts_recent(0, self.ts_recent as u64);
        self.receiver = Some(r);
        // The SYN-ACK's window is never scaled (RFC 7323 §2.2).
        let cc = satcc_cc::lookup(&self.cfg.cca, &self.params()?).map_err(|e| e.to_string())?;
        let mut s = Sender::new(&self.cfg, 1, cc);
        s.accept(self.now, self.synack_at, seg.win as u64, self.ecn_ok);
        s.set_slow_start_after_idle(self.slow_start_after_idle);
        s.set_tso_sysctls(self.tso_sysctls.0, self.tso_sysctls.1);
        self.start_sender(s);
        self.state = State::Established;
        self.on_connected();
        let mut o = std::mem::take(&mut self.scratch);
        if let Some(r) = self.receiver.as_mut() {
            r.send_ack(self.now, &mut o);
        }
        self.scratch = o;
        self.flush();
        Ok(())
    }

    /// Options of a SYN or SYN-ACK after the MSS, in `tcp_options_write`'s order.
    pub(super) fn syn_options(
        &self,
        ts: bool,
        sack: bool,
        ws: bool,
        wscale: u32,
        tsv: (u32, u32),
    ) -> Vec<WireOpt> {
        let mut opts = Vec::new();
        if ts {
            if sack {
                opts.push(WireOpt::SackOk);
            } else {
                opts.extend([WireOpt::Nop, WireOpt::Nop]);
            }
            opts.push(WireOpt::Ts(tsv.0, tsv.1));
        } else if sack {
            opts.extend([WireOpt::Nop, WireOpt::Nop, WireOpt::SackOk]);
        }
        if ws {
            opts.extend([WireOpt::Nop, WireOpt::Wscale(wscale)]);
        }
        opts
    }

    /// The TSval clock: milliseconds, +1 so it is never 0 (as the sender's `ts_now`).
    pub(super) fn ts_clock(&self, now: SimTime) -> u32 {
        (now.as_nanos() / 1_000_000 + 1) as u32
    }

    pub(super) fn on_established(&mut self, seg: &WireSeg) -> Result<(), String> {
        let cc = satcc_cc::lookup(&self.cfg.cca, &self.params()?).map_err(|e| e.to_string())?;
        let mut s = Sender::new(&self.cfg, 1, cc);
        let rwnd = (seg.win as u64) << self.snd_wscale;
        s.accept(self.now, self.synack_at, rwnd, self.ecn_ok);
        s.set_slow_start_after_idle(self.slow_start_after_idle);
        s.set_tso_sysctls(self.tso_sysctls.0, self.tso_sysctls.1);
        self.start_sender(s);
        self.state = State::Established;
        self.on_connected();
        Ok(())
    }

    /// Both opens: `lsndtime`, `lrcvtime` and `rcv_tstamp` start at the handshake's end
    /// (`tcp_finish_connect`, `tcp_rcv_state_process` in SYN-RECEIVED).
    pub(super) fn on_connected(&mut self) {
        self.last_data_sent = self.now;
        self.last_data_recv = self.now;
        self.last_ack_recv = self.now;
    }
}
