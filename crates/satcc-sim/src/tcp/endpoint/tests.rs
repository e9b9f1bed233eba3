use super::*;
use satcc_core::SimDuration;

fn at_ms(ms: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(ms)
}

fn seg(flags: u8, seq: u32, ack: u32, win: u32, len: u32, opts: Vec<WireOpt>) -> WireSeg {
    WireSeg {
        t: SimTime::ZERO,
        flags,
        seq,
        ack,
        win,
        len,
        opts,
        ecn: WireEcn::NotEct,
    }
}

/// A listener that got a SYN at 100 ms and the handshake's ACK at 200 ms.
fn accepted() -> Endpoint {
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    cfg.rwnd_bytes = 15_728_640;
    let mut e = Endpoint::new(cfg, 2);
    e.listen();
    e.advance(at_ms(100));
    let syn = vec![
        WireOpt::Mss(1000),
        WireOpt::SackOk,
        WireOpt::Nop,
        WireOpt::Wscale(7),
    ];
    e.inject(&seg(SYN, 1000, 0, 65535, 0, syn)).unwrap();
    e.advance(at_ms(200));
    e.inject(&seg(ACK, 1001, 1, 2000, 0, vec![])).unwrap();
    e
}

#[test]
fn a_syn_gets_a_syn_ack_with_linux_option_layout() {
    let mut e = accepted();
    let sa = e.next_outbound(at_ms(200)).expect("the SYN-ACK");
    assert_eq!(sa.flags, SYN | ACK);
    assert_eq!(sa.t, at_ms(100));
    assert_eq!(sa.ack, 1001);
    assert_eq!(
        sa.opts,
        vec![
            WireOpt::Mss(1460),
            WireOpt::Nop,
            WireOpt::Nop,
            WireOpt::SackOk,
            WireOpt::Nop,
            WireOpt::Wscale(8)
        ]
    );
    assert_eq!(e.state, State::Established);
    let i = e.info().sender.unwrap();
    assert_eq!(
        (i.mss, i.cwnd, i.srtt_us, i.rto_us),
        (1000, 10, 100_000, 300_000)
    );
}

#[test]
fn a_write_goes_out_as_the_initial_window_then_a_fin() {
    let mut e = accepted();
    e.next_outbound(at_ms(200));
    assert_eq!(e.write(15_000).unwrap(), 15_000);
    e.close_write();
    let segs: Vec<_> = std::iter::from_fn(|| e.out.pop_front()).collect();
    assert_eq!(segs.len(), 10, "cwnd 10, no FIN before the data is out");
    assert_eq!((segs[0].seq, segs[0].len), (1, 1000));
    e.advance(at_ms(300));
    e.inject(&seg(ACK, 1001, 10_001, 2000, 0, vec![])).unwrap();
    let segs: Vec<_> = std::iter::from_fn(|| e.out.pop_front()).collect();
    assert_eq!(
        segs.len(),
        5,
        "the FIN rides on the last data segment (tcp_send_fin)"
    );
    assert_eq!(segs[4].flags, FIN | PSH | ACK);
    assert_eq!((segs[4].seq, segs[4].len), (14_001, 1000));
    assert_eq!(e.state, State::FinWait1);
    e.inject(&seg(ACK, 1001, 15_002, 2000, 0, vec![])).unwrap();
    assert_eq!(e.state, State::FinWait2);
}

#[test]
fn an_unacked_segment_is_probed_then_retransmitted_by_the_rto() {
    let mut e = accepted();
    e.next_outbound(at_ms(200));
    e.write(1000).unwrap();
    let first = e.next_outbound(at_ms(200)).unwrap();
    assert_eq!(first.t, at_ms(200));
    let probe = e.next_outbound(at_ms(2000)).unwrap();
    assert_eq!((probe.seq, probe.t), (1, at_ms(500)));
    let rto = e.next_outbound(at_ms(2000)).unwrap();
    assert_eq!((rto.seq, rto.t), (1, at_ms(800)));
    assert_eq!(e.info().sender.unwrap().ca_state, 4);
}

fn drain(e: &mut Endpoint) -> Vec<WireSeg> {
    std::iter::from_fn(|| e.out.pop_front()).collect()
}

/// An endpoint after `connect` at 0 (timestamps off) and the peer's SYN-ACK at 10 ms.
fn connected(win: u32) -> Endpoint {
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    let mut e = Endpoint::new(cfg, 0);
    e.connect();
    e.advance(at_ms(10));
    let opts = vec![
        WireOpt::Mss(1000),
        WireOpt::Nop,
        WireOpt::Nop,
        WireOpt::SackOk,
    ];
    e.inject(&seg(SYN | ACK, 5000, 1, win, 0, opts)).unwrap();
    drain(&mut e);
    e
}

#[test]
fn close_with_unread_data_aborts_with_a_rst_and_later_segments_are_reset() {
    // ts_recent/reset_tsval: tcp_close with data the application never read.
    let mut e = accepted();
    drain(&mut e);
    e.inject(&seg(ACK, 1001, 1, 2000, 1000, vec![])).unwrap();
    e.advance(at_ms(1200));
    drain(&mut e);
    e.close();
    let rst = drain(&mut e);
    assert_eq!(rst.len(), 1);
    assert_eq!((rst[0].flags, rst[0].seq, rst[0].ack), (RST | ACK, 1, 2001));
    assert_eq!(e.state, State::Closed);
    e.inject(&seg(ACK, 2001, 1, 2000, 0, vec![])).unwrap();
    let r = drain(&mut e);
    assert_eq!(
        (r[0].flags, r[0].seq),
        (RST, 1),
        "no socket: seq from the ACK"
    );
}

#[test]
fn close_after_reading_everything_sends_a_fin_not_a_rst() {
    let mut e = accepted();
    drain(&mut e);
    e.inject(&seg(ACK, 1001, 1, 2000, 1000, vec![])).unwrap();
    assert_eq!(e.read(5000), 1000);
    drain(&mut e);
    e.close();
    let f = drain(&mut e);
    assert_eq!((f[0].flags, f[0].seq), (FIN | ACK, 1));
}

#[test]
fn close_in_syn_sent_sends_nothing_and_the_syn_ack_is_reset() {
    // close/close-on-syn-sent.
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    let mut e = Endpoint::new(cfg, 0);
    e.connect();
    assert_eq!(drain(&mut e)[0].flags, SYN);
    e.close();
    assert!(drain(&mut e).is_empty());
    e.advance(at_ms(100));
    e.inject(&seg(SYN | ACK, 0, 1, 32000, 0, vec![WireOpt::Mss(1460)]))
        .unwrap();
    let r = drain(&mut e);
    assert_eq!((r.len(), r[0].flags, r[0].seq), (1, RST, 1));
    assert!(
        e.next_outbound(at_ms(10_000)).is_none(),
        "no SYN retransmission"
    );
}

#[test]
fn after_last_ack_the_socket_is_gone_and_an_ack_gets_a_rst() {
    // close/close-remote-fin-then-close.
    let mut e = accepted();
    drain(&mut e);
    e.inject(&seg(FIN | ACK, 1001, 1, 2000, 0, vec![])).unwrap();
    assert_eq!(e.state, State::CloseWait);
    assert_eq!(drain(&mut e)[0].ack, 1002);
    e.close();
    assert_eq!(drain(&mut e)[0].flags, FIN | ACK);
    e.inject(&seg(ACK, 1002, 2, 2000, 0, vec![])).unwrap();
    assert_eq!(e.state, State::Closed);
    e.inject(&seg(ACK, 1002, 2, 2000, 0, vec![])).unwrap();
    let r = drain(&mut e);
    assert_eq!((r[0].flags, r[0].seq, r[0].opts.len()), (RST, 2, 0));
}

#[test]
fn a_rst_at_rcv_nxt_resets_and_is_reported_once() {
    let mut e = accepted();
    drain(&mut e);
    e.inject(&seg(RST | ACK, 1001, 1, 0, 0, vec![])).unwrap();
    assert_eq!(e.state, State::Closed);
    assert!(e.write_shut() && e.read_ready());
    assert_eq!(e.take_error(), Some(SockErr::ConnReset));
    assert_eq!(e.take_error(), None);
}

#[test]
fn a_rst_in_the_window_but_not_at_rcv_nxt_gets_a_challenge_ack() {
    // RFC 5961 §3.2.
    let mut e = accepted();
    drain(&mut e);
    e.inject(&seg(RST, 1500, 0, 0, 0, vec![])).unwrap();
    assert_eq!(e.state, State::Established);
    let a = drain(&mut e);
    assert_eq!((a.len(), a[0].flags, a[0].ack), (1, ACK, 1001));
}

#[test]
fn a_rst_in_syn_sent_refuses_the_connection() {
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    let mut e = Endpoint::new(cfg, 0);
    e.connect();
    e.inject(&seg(RST | ACK, 0, 1, 0, 0, vec![])).unwrap();
    assert_eq!(e.state, State::Closed);
    assert_eq!(e.take_error(), Some(SockErr::ConnRefused));
}

#[test]
fn an_ack_on_a_listener_is_reset() {
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    let mut e = Endpoint::new(cfg, 0);
    e.listen();
    e.inject(&seg(ACK, 7, 4242, 100, 0, vec![])).unwrap();
    let r = drain(&mut e);
    assert_eq!((r[0].flags, r[0].seq), (RST, 4242));
    e.inject(&seg(FIN, 7, 0, 100, 10, vec![])).unwrap();
    assert!(drain(&mut e).is_empty(), "no ACK, no SYN: dropped");
}

#[test]
fn an_ack_of_unsent_data_is_dropped_with_a_rate_limited_challenge_ack() {
    // ts_recent/invalid_ack; this kernel (6.18) answers it, at most once per 500 ms.
    let mut e = accepted();
    drain(&mut e);
    e.inject(&seg(FIN | ACK, 1001, 9999, 2000, 0, vec![]))
        .unwrap();
    let a = drain(&mut e);
    assert_eq!((a.len(), a[0].flags, a[0].ack), (1, ACK, 1001));
    assert_eq!(e.state, State::Established, "the FIN went with the segment");
    e.advance(at_ms(300));
    e.inject(&seg(ACK, 1001, 9999, 2000, 1000, vec![])).unwrap();
    assert!(drain(&mut e).is_empty(), "rate limited");
    assert_eq!(e.readable(), 0, "the data went with the segment");
    e.advance(at_ms(800));
    e.inject(&seg(ACK, 1001, 9999, 2000, 1000, vec![])).unwrap();
    assert_eq!(drain(&mut e).len(), 1);
}

#[test]
fn a_lone_fin_is_probed_at_the_rto_then_retransmitted_with_backoff() {
    // Measured on this kernel (a FIN alone, srtt 100 ms): +300, +300, +600, +1200 ms.
    let mut e = accepted();
    drain(&mut e);
    e.advance(at_ms(300));
    e.close();
    let f = drain(&mut e);
    assert_eq!((f[0].flags, f[0].t), (FIN | ACK, at_ms(300)));
    let times: Vec<_> = (0..4)
        .map(|_| e.next_outbound(at_ms(10_000)).unwrap())
        .map(|s| {
            assert_eq!((s.flags, s.seq), (FIN | ACK, 1));
            s.t
        })
        .collect();
    assert_eq!(
        times,
        vec![at_ms(600), at_ms(900), at_ms(1500), at_ms(2700)]
    );
    e.inject(&seg(ACK, 1001, 2, 2000, 0, vec![])).unwrap();
    assert_eq!(e.state, State::FinWait2);
    assert!(e.next_outbound(at_ms(20_000)).is_none());
}

#[test]
fn the_syn_is_retransmitted_every_second_five_times_then_backed_off() {
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    let mut e = Endpoint::new(cfg, 0);
    e.connect();
    drain(&mut e);
    let times: Vec<_> = std::iter::from_fn(|| e.next_outbound(at_ms(100_000)))
        .map(|s| {
            assert_eq!(s.flags, SYN);
            s.t.as_nanos() / 1_000_000
        })
        .collect();
    assert_eq!(times, vec![1000, 2000, 3000, 4000, 5000, 7000]);
    assert_eq!(e.state, State::Closed, "tcp_syn_retries 6");
    assert_eq!(e.take_error(), Some(SockErr::TimedOut));
}

#[test]
fn the_syn_ack_is_retransmitted_with_exponential_backoff() {
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    let mut e = Endpoint::new(cfg, 0);
    e.listen();
    e.inject(&seg(SYN, 1000, 0, 65535, 0, vec![WireOpt::Mss(1000)]))
        .unwrap();
    drain(&mut e);
    let a = e.next_outbound(at_ms(100_000)).unwrap();
    let b = e.next_outbound(at_ms(100_000)).unwrap();
    assert_eq!((a.flags, a.t, b.t), (SYN | ACK, at_ms(1000), at_ms(3000)));
    e.inject(&seg(ACK, 1001, 1, 2000, 0, vec![])).unwrap();
    assert_eq!(e.state, State::Established);
    assert!(e.next_outbound(at_ms(100_000)).is_none());
}

#[test]
fn tcp_maxseg_before_and_after_the_handshake() {
    // mss/mss-getsockopt-tcp_maxseg-server and mss-setsockopt-tcp_maxseg-server.
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    let mut e = Endpoint::new(cfg.clone(), 0);
    e.listen();
    assert_eq!(e.maxseg(), 536, "TCP_MSS_DEFAULT before a connection");
    e.set_maxseg(1100).unwrap();
    assert_eq!(e.maxseg(), 1100);
    assert!(e.set_maxseg(40).is_err());
    e.inject(&seg(SYN, 1000, 0, 65535, 0, vec![WireOpt::Mss(1300)]))
        .unwrap();
    assert_eq!(drain(&mut e)[0].opts[0], WireOpt::Mss(1100));
    e.inject(&seg(ACK, 1001, 1, 2000, 0, vec![])).unwrap();
    assert_eq!((e.maxseg(), e.info().advmss), (1100, 1100));
    let mut e = Endpoint::new(cfg, 0);
    e.listen();
    e.inject(&seg(SYN, 1000, 0, 65535, 0, vec![WireOpt::Mss(1100)]))
        .unwrap();
    e.inject(&seg(ACK, 1001, 1, 2000, 0, vec![])).unwrap();
    assert_eq!(e.maxseg(), 1100, "the peer's MSS");
}

#[test]
fn busy_and_rwnd_limited_time_follow_the_peers_window() {
    // tcp_info/tcp-info-rwnd-limited's sequence: a zero window at connect.
    let mut e = connected(0);
    e.write(1000).unwrap();
    assert!(drain(&mut e).is_empty(), "zero window");
    e.advance(at_ms(110));
    assert_eq!(e.info().rwnd_limited_us, 100_000);
    e.advance(at_ms(210));
    e.inject(&seg(ACK, 5001, 1, 2000, 0, vec![])).unwrap();
    assert_eq!(drain(&mut e)[0].len, 1000);
    assert_eq!(e.info().rwnd_limited_us, 200_000);
    e.advance(at_ms(240));
    e.inject(&seg(ACK, 5001, 1001, 10, 0, vec![])).unwrap();
    e.write(1000).unwrap();
    e.advance(at_ms(340));
    e.inject(&seg(ACK, 5001, 1001, 2000, 0, vec![])).unwrap();
    let i = e.info();
    assert_eq!((i.rwnd_limited_us, i.busy_time_us), (300_000, 330_000));
    e.advance(at_ms(360));
    e.inject(&seg(ACK, 5001, 2001, 2000, 0, vec![])).unwrap();
    assert_eq!(e.info().busy_time_us, 350_000);
    e.advance(at_ms(1360));
    assert_eq!(e.info().busy_time_us, 350_000, "idle is not busy");
}

#[test]
fn last_data_and_ack_times_in_ms() {
    // tcp_info/tcp-info-last_data_recv.
    let mut e = connected(10_000);
    e.advance(at_ms(1010));
    assert_eq!(e.info().last_data_recv_ms, 1000);
    e.inject(&seg(ACK, 5001, 1, 300, 1000, vec![])).unwrap();
    let i = e.info();
    assert_eq!(
        (i.last_data_recv_ms, i.last_ack_recv_ms, i.last_data_sent_ms),
        (0, 0, 1000)
    );
}

#[test]
fn a_data_segment_carries_sack_blocks_and_ends_a_pending_delayed_ack() {
    let mut e = connected(10_000);
    // In order (a delayed ACK pending once the quick ACKs are used), then a hole.
    for k in 0..20u32 {
        e.inject(&seg(ACK, 5001 + k * 1000, 1, 10_000, 1000, vec![]))
            .unwrap();
    }
    e.inject(&seg(ACK, 5001 + 21_000, 1, 10_000, 1000, vec![]))
        .unwrap();
    drain(&mut e);
    e.write(1000).unwrap();
    let d = drain(&mut e);
    assert_eq!((d.len(), d[0].len, d[0].ack), (1, 1000, 25_001));
    assert!(d[0].opts.contains(&WireOpt::Sack(vec![(26_001, 27_001)])));
    assert!(
        e.next_outbound(at_ms(5000)).is_none_or(|s| s.len > 0),
        "no delayed ACK after the data segment"
    );
}

/// (seq, len, PSH) of the data segments queued on the wire, taken.
fn data_out(e: &mut Endpoint) -> Vec<(u32, u32, bool)> {
    std::iter::from_fn(|| e.out.pop_front())
        .filter(|s| s.len > 0)
        .map(|s| (s.seq, s.len, s.flags & PSH != 0))
        .collect()
}

#[test]
fn small_writes_wait_for_nagle_and_leave_together_with_psh() {
    let mut e = accepted();
    e.next_outbound(at_ms(200));
    e.write(100).unwrap();
    assert_eq!(data_out(&mut e), vec![(1, 100, true)]);
    e.write(100).unwrap();
    e.write(100).unwrap();
    assert_eq!(data_out(&mut e), vec![]);
    assert_eq!(e.info().notsent_bytes, 200);
    e.advance(at_ms(300));
    e.inject(&seg(ACK, 1001, 101, 2000, 0, vec![])).unwrap();
    assert_eq!(data_out(&mut e), vec![(101, 200, true)]);
}

#[test]
fn msg_more_sets_no_psh_and_tcp_nodelay_before_the_handshake_holds() {
    let mut cfg = Flow::bulk(0, 0, 1, "reno");
    cfg.timestamps = false;
    let mut e = Endpoint::new(cfg, 2);
    e.set_nodelay(true);
    e.listen();
    e.inject(&seg(SYN, 1000, 0, 65535, 0, vec![WireOpt::Mss(1000)]))
        .unwrap();
    e.advance(at_ms(100));
    e.inject(&seg(ACK, 1001, 1, 65535, 0, vec![])).unwrap();
    e.next_outbound(at_ms(100));
    e.write(100).unwrap();
    e.write(100).unwrap();
    assert_eq!(data_out(&mut e), vec![(1, 100, true), (101, 100, true)]);
    e.send(40, true).unwrap();
    assert_eq!(data_out(&mut e), vec![]);
    e.set_cork(true);
    e.set_nodelay(true);
    assert_eq!(data_out(&mut e), vec![(201, 40, false)]);
}

#[test]
fn close_sends_what_nagle_held_with_the_fin_on_it() {
    // tcp_send_fin: the held tail is unsent, so the FIN joins it (one `FP.` segment).
    let mut e = accepted();
    e.next_outbound(at_ms(200));
    e.write(100).unwrap();
    e.write(100).unwrap();
    data_out(&mut e);
    e.close_write();
    let segs: Vec<_> = std::iter::from_fn(|| e.out.pop_front()).collect();
    assert_eq!(segs.len(), 1);
    assert_eq!((segs[0].seq, segs[0].len), (101, 100));
    assert_eq!(segs[0].flags, FIN | PSH | ACK);
}

#[test]
fn a_write_sent_in_one_burst_has_psh_on_every_second_segment_and_its_last() {
    // Deviation 5, as the kernel here marks a 4000-byte write with TCP_NODELAY.
    let mut e = accepted();
    e.next_outbound(at_ms(200));
    e.set_nodelay(true);
    e.write(4500).unwrap();
    let psh: Vec<bool> = data_out(&mut e).iter().map(|s| s.2).collect();
    assert_eq!(psh, vec![false, true, false, true, true]);
}
