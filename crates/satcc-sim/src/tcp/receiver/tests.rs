use super::*;

const MSS: u64 = 1448;
const RTT_MS: u64 = 600;

fn at_ms(ms: u64) -> SimTime {
    SimTime::from_nanos(ms * 1_000_000)
}

fn receiver(rwnd: u64, autotune: bool) -> Receiver {
    let rcvbuf = RcvBuf {
        max_bytes: rwnd,
        autotune,
        window_scaling: true,
    };
    Receiver::new(0, 1, MSS as u32, true, true, true, rcvbuf, None, None)
}

/// The SYN at t = 0; returns the SYN-ACK.
fn handshake(r: &mut Receiver) -> Packet {
    let mut out = Out::default();
    let mut syn = Packet::new(0, Kind::Syn, 0);
    syn.tsval = 1;
    r.on_packet(SimTime::ZERO, &syn, &mut out);
    out.pkts[0]
}

/// Segment `idx` arrives at `now`, echoing `tsecr`; returns the ACKs sent.
fn segment(r: &mut Receiver, now: SimTime, idx: u64, tsecr: u64) -> Vec<Packet> {
    let mut out = Out::default();
    let mut p = Packet::new(0, Kind::Data, 1);
    p.seq = idx * MSS;
    p.len = MSS as u32;
    p.tsval = now.as_nanos() / 1_000_000 + 1;
    p.tsecr = tsecr;
    r.on_packet(now, &p, &mut out);
    out.pkts
}

/// A sender in slow start over a 600 ms path: flight k has `flights[k]` segments arriving
/// back to back (1 ms apart) one RTT after the previous flight, each echoing the newest
/// TSval it could have seen. Returns the last ACK of every flight.
fn slow_start(r: &mut Receiver, flights: &[u64]) -> Vec<Packet> {
    let synack = handshake(r);
    let (mut idx, mut tsecr, mut last) = (0, synack.tsval, Vec::new());
    for (k, &n) in flights.iter().enumerate() {
        let start = RTT_MS * (k as u64 + 1);
        let mut newest = tsecr;
        let mut ack = None;
        for i in 0..n {
            for a in segment(r, at_ms(start + i), idx, tsecr) {
                newest = newest.max(a.tsval);
                ack = Some(a);
            }
            idx += 1;
        }
        last.push(ack.expect("every flight is acknowledged"));
        tsecr = newest;
    }
    last
}

#[test]
fn syn_ack_offers_the_listeners_window_in_whole_segments_and_scales_for_tcp_rmem_max() {
    // tcp_rmem[1] = 131072 at the default ratio of 50 % = 65536 B = 45 segments of 1448 B;
    // the scale covers tcp_rmem[2]: 6 MiB → 7, 32 MiB → 10 (what `ss` shows on 6.18).
    let mut r = receiver(6 << 20, true);
    assert_eq!(handshake(&mut r).rwnd, 65_160);
    assert_eq!(r.rcv_wscale, 7);
    let mut r = receiver(32 << 20, true);
    handshake(&mut r);
    assert_eq!(r.rcv_wscale, 10);
}

#[test]
fn first_segment_reserves_one_segment_and_opens_the_window_by_two() {
    // Linux 6.18 (`ss` on the emulator's receiver): rcv_space 14480, rcv_ssthresh 64088
    // before data; the first full segment sets scaling_ratio = 1448·256/2304 = 160.
    let mut r = receiver(6 << 20, true);
    let synack = handshake(&mut r);
    let acks = segment(&mut r, at_ms(RTT_MS), 0, synack.tsval);
    assert_eq!(r.rcvq_space.space, 14_480);
    assert_eq!(r.scaling_ratio, 160);
    assert_eq!(r.window_clamp, 131_072 * 160 / 256);
    assert_eq!(r.rcv_ssthresh, 64_088 + 2 * 1448);
    assert_eq!(acks.len(), 1, "the first segment is acknowledged at once");
    assert_eq!(acks[0].rwnd, (64_088 + 2 * 1448u64).div_ceil(128) * 128);
    assert_eq!(
        r.rcv_rtt_est.rtt_us >> 3,
        RTT_MS * 1000,
        "the receiver's RTT from the echoed TSval"
    );
}

#[test]
fn window_grows_to_twice_the_bytes_copied_per_rtt() {
    // DRS is one RTT late and allows the sender to double: at the end of each flight the
    // window announced is at least twice that flight, until tcp_rmem[2] caps the buffer.
    let flights = [10, 20, 40, 80, 160, 320];
    let mut r = receiver(6 << 20, true);
    let last = slow_start(&mut r, &flights);
    for k in 2..flights.len() {
        let flight_bytes = flights[k] * MSS;
        assert!(
            last[k].rwnd >= 2 * flight_bytes,
            "flight {k}: window {} < 2 × {flight_bytes}",
            last[k].rwnd
        );
    }
    assert!(r.rcvbuf_bytes() > RMEM_DEFAULT && r.rcvbuf_bytes() <= 6 << 20);
    let mut capped = receiver(1 << 20, true);
    slow_start(&mut capped, &flights);
    assert_eq!(
        capped.rcvbuf_bytes(),
        1 << 20,
        "tcp_rmem[2] = rwnd caps the buffer"
    );
    assert!(capped.rcv_wnd() <= (1 << 20) * 160 / 256 + 128);
}

#[test]
fn rcvbuf_grow_reproduces_a_linux_6_18_trace() {
    // `tcp:tcp_rcvbuf_grow` trace in "tcp: fix too slow tcp_rcvbuf_grow() action" (6.18-rc4):
    // scaling_ratio 219; space 49152 → copied 86016 gives rcvbuf 502741, and then
    // space 86016 → copied 139264 gives rcvbuf 728690, window_clamp 623371.
    let mut r = receiver(67_000_000, true);
    r.scaling_ratio = 219;
    r.sk_rcvbuf = 160_875;
    r.rcvq_space.space = 49_152;
    r.tcp_rcvbuf_grow(86_016);
    assert_eq!((r.sk_rcvbuf, r.window_clamp), (502_741, 430_079));
    r.tcp_rcvbuf_grow(139_264);
    assert_eq!((r.sk_rcvbuf, r.window_clamp), (728_690, 623_371));
    assert_eq!(r.rcvq_space.space, 139_264);
}

#[test]
fn without_autotuning_the_window_is_rwnd_and_the_buffer_never_grows() {
    let rwnd = 1_000_000;
    let mut r = receiver(rwnd, false);
    let last = slow_start(&mut r, &[10, 20, 40, 80, 160, 320]);
    let buffer = r.rcvbuf_bytes();
    assert_eq!(buffer, fixed_rcvbuf_bytes(rwnd, MSS, true));
    assert_eq!(r.window_clamp, rwnd, "the buffer is sized to offer rwnd");
    let win = last.last().unwrap().rwnd;
    assert!(
        win <= rwnd + 128 && win + 2 * MSS >= rwnd,
        "window {win} vs rwnd {rwnd}"
    );
}

#[test]
fn ack_every_second_segment_once_quickacks_and_window_growth_are_over() {
    let mut r = receiver(6 << 20, true);
    let synack = handshake(&mut r);
    let mut acks = Vec::new();
    // 40 segments: within the 80 kB the receiver offers, as a sender must stay.
    for i in 0..40 {
        acks.push(
            segment(
                &mut r,
                at_ms(RTT_MS) + SimDuration::from_micros(600 * i),
                i,
                synack.tsval,
            )
            .len(),
        );
    }
    // 16 quick ACKs, kept at 16 while rcv_ssthresh grows (`quick |= 1` on the six
    // segments that open the window), then one per two segments.
    assert!(acks[..22].iter().all(|&n| n == 1), "{acks:?}");
    assert_eq!(acks[24..].iter().sum::<usize>(), 8, "{acks:?}");
}

/// A receiver past its quick ACKs (the first flight is over), `ato` at its start value,
/// its buffer at the ceiling (a growing window would ACK every segment and reset ato).
fn settled() -> (Receiver, u64) {
    let mut r = receiver(RMEM_DEFAULT, true);
    let synack = handshake(&mut r);
    for i in 0..40 {
        segment(
            &mut r,
            at_ms(RTT_MS) + SimDuration::from_micros(100 * i),
            i,
            synack.tsval,
        );
    }
    assert_eq!(r.quick, 0);
    assert_eq!(r.ato(), ATO_MIN);
    (r, 40)
}

#[test]
fn a_lone_segment_waits_for_the_delayed_ack_timer_and_a_missed_timer_doubles_ato() {
    let (mut r, idx) = settled();
    let now = at_ms(2 * RTT_MS);
    assert!(segment(&mut r, now, idx, 1).is_empty());
    // A gap longer than ato (and shorter than the RTO) leaves ato as it was.
    assert_eq!(r.delack.deadline(), Some(now + ATO_MIN));
    let mut out = Out::default();
    r.on_timer(now + ATO_MIN, &mut out);
    assert_eq!(out.pkts.len(), 1);
    assert_eq!(
        r.ato(),
        ATO_MIN.mul_u64(2),
        "tcp_delack_timer_handler inflates ato"
    );
}

/// Segment `idx` with PSH (the last of a GSO packet) arrives at `now`; the ACKs sent.
fn pushed_segment(r: &mut Receiver, now: SimTime, idx: u64) -> Vec<Packet> {
    let mut out = Out::default();
    let mut p = Packet::new(0, Kind::Data, 1);
    p.seq = idx * MSS;
    p.len = MSS as u32;
    p.tsval = now.as_nanos() / 1_000_000 + 1;
    p.tsecr = 1;
    p.psh = true;
    r.on_packet(now, &p, &mut out);
    out.pkts
}

#[test]
fn a_full_segment_with_psh_is_acknowledged_when_read_not_paired_with_the_next() {
    // Linux 6.6+ `tcp_measure_rcv_mss`: a segment of exactly the MSS with PSH sets
    // ICSK_ACK_PUSHED, and the read that empties the receive queue ACKs it
    // (`tcp_cleanup_rbuf`): a GSO packet of three segments is acknowledged as 2 + 1, not
    // left for the delayed-ACK timer or the next packet's first segment. The kernel's
    // receiver did so in fid-dctcp-ecn (29 % of its ACKs covered one segment, most of them
    // the PSH-marked end of an odd-sized GSO packet).
    let (mut r, idx) = settled();
    let now = at_ms(2 * RTT_MS);
    assert!(segment(&mut r, now, idx, 1).is_empty());
    assert_eq!(
        segment(&mut r, now, idx + 1, 1).len(),
        1,
        "two full segments"
    );
    let acks = pushed_segment(&mut r, now, idx + 2);
    assert_eq!(acks.len(), 1, "the packet's end, alone");
    assert_eq!(acks[0].ack, (idx + 3) * MSS);
    assert!(!r.delack.is_armed());
    // without PSH the third waits (for the next segment or the timer)
    let (mut r, idx) = settled();
    segment(&mut r, now, idx, 1);
    segment(&mut r, now, idx + 1, 1);
    assert!(segment(&mut r, now, idx + 2, 1).is_empty());
    assert!(r.delack.is_armed());
    // an ACK clears it: after the pushed end, a lone segment waits again
    let (mut r, idx) = settled();
    assert_eq!(pushed_segment(&mut r, now, idx).len(), 1);
    assert!(segment(&mut r, now, idx + 1, 1).is_empty());
}

#[test]
fn ato_grows_after_spaced_segments_and_falls_back_for_back_to_back_ones() {
    let (mut r, mut idx) = settled();
    let mut now = at_ms(2 * RTT_MS);
    // Segments 30 ms apart (between ATO_MIN/2 and ato): ato → ato/2 + 30 ms, towards 60 ms.
    for _ in 0..8 {
        segment(&mut r, now, idx, 1);
        idx += 1;
        now += SimDuration::from_millis(30);
    }
    assert!(
        r.ato() > SimDuration::from_millis(55) && r.ato() <= SimDuration::from_millis(60),
        "{:?}",
        r.ato()
    );
    // Back to back: ato → ato/2 + 20 ms, back to 40 ms.
    for _ in 0..8 {
        segment(&mut r, now, idx, 1);
        idx += 1;
        now += SimDuration::from_millis(1);
    }
    assert!(r.ato() <= SimDuration::from_millis(41), "{:?}", r.ato());
}

#[test]
fn the_delayed_ack_timeout_is_clamped_by_the_rtt() {
    // 30 ms RTT: ato may grow to 60 ms, but tcp_send_delayed_ack waits at most one srtt.
    let mut r = receiver(6 << 20, true);
    let synack = handshake(&mut r);
    let rtt = SimDuration::from_millis(30);
    for i in 0..40 {
        segment(
            &mut r,
            SimTime::ZERO + rtt + SimDuration::from_micros(100 * i),
            i,
            synack.tsval,
        );
    }
    let mut now = SimTime::ZERO + rtt.mul_u64(2);
    for i in 40..50 {
        segment(&mut r, now, i, 1);
        now += SimDuration::from_millis(25);
    }
    assert!(r.ato() > rtt);
    let lone = now + SimDuration::from_millis(300);
    assert!(segment(&mut r, lone, 50, 1).is_empty() || r.delack.deadline().is_none());
    if let Some(d) = r.delack.deadline() {
        assert!(d <= lone + rtt, "deadline {:?} after one RTT", d);
    }
}

#[test]
fn out_of_order_acks_after_the_third_are_compressed_for_a_millisecond() {
    // Compressed SACK: segment 40 is lost; 41.. arrive 100 µs apart. Three duplicate ACKs
    // go at once, the rest wait min(1 ms, RTT/20) and leave as one ACK per timer.
    let (mut r, idx) = settled();
    let start = at_ms(2 * RTT_MS);
    let mut sent = Vec::new();
    for i in 1..=10u64 {
        sent.push(
            segment(
                &mut r,
                start + SimDuration::from_micros(100 * i),
                idx + i,
                1,
            )
            .len(),
        );
    }
    assert_eq!(sent[..3], [1, 1, 1], "{sent:?}");
    assert!(sent[3..10].iter().all(|&n| n == 0), "{sent:?}");
    assert_eq!(
        r.comp_timer.deadline(),
        Some(start + SimDuration::from_micros(400) + COMP_SACK_DELAY)
    );
    let mut out = Out::default();
    r.on_timer_event(start + SimDuration::from_micros(1400), &mut out);
    assert_eq!(out.pkts.len(), 1, "one ACK for the held ones");
    assert_eq!(
        out.pkts[0].sack_blocks()[0],
        ((idx + 1) * MSS, (idx + 11) * MSS)
    );
}

#[test]
fn rx_truesize_of_a_full_segment_is_2304_bytes() {
    // 64 headroom + 66 B of headers + 1448 payload + 320 shared info → 2048 B, + 256 sk_buff.
    assert_eq!(rx_truesize(1448, true), 2304);
    assert_eq!(full_segment_scaling_ratio(1448, true), 160);
}

#[test]
fn a_huge_buffer_saturates_the_window_instead_of_overflowing() {
    assert_eq!(win_from_space(1 << 20, 128), 1 << 19); // half, as Linux's default ratio
    assert_eq!(win_from_space(-(1 << 20), 128), -(1 << 19)); // negative space stays signed
                                                             // the product overflows 64 bits but the window fits: exact, as the 128-bit maths gives
    assert_eq!(win_from_space(i64::MAX, 255), 9_187_343_239_835_811_839);
    assert_eq!(win_from_space(i64::MAX, 256 * 4), i64::MAX); // saturated, not wrapped
    assert_eq!(win_from_space(i64::MIN, 256 * 4), i64::MIN);
}

#[test]
fn the_64_bit_window_from_space_is_the_128_bit_one() {
    // `win_from_space` multiplies in 64 bits when the product fits: the same window as
    // the 128-bit product, rounding of negative space included.
    let reference = |space: i64, ratio: u64| -> i64 {
        let scaled = (i128::from(space) * i128::from(ratio)) >> RMEM_TO_WIN_SCALE;
        scaled.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    };
    let edge = i64::MAX / 255;
    let spaces = [
        0,
        1,
        -1,
        -255,
        2303,
        -2304,
        131_072,
        -131_073,
        6 << 20,
        edge,
        edge + 1,
        -edge,
        -edge - 1,
        i64::MAX,
        i64::MIN,
    ];
    for space in spaces {
        for ratio in [1, 127, 128, 160, 255, 256, 1024, u64::MAX] {
            assert_eq!(
                win_from_space(space, ratio),
                reference(space, ratio),
                "space {space}, ratio {ratio}"
            );
        }
    }
}

#[test]
fn the_out_of_order_queue_holds_the_union_of_what_arrived_and_counts_its_bytes() {
    // `insert_ofo` merges in place or by removal, `advance` delivers from the front, and
    // `ofo_bytes` follows: against the union of every byte range received, with
    // overlapping, adjacent, duplicate and hole-filling segments.
    let mut r = receiver(6 << 20, true);
    let synack = handshake(&mut r);
    let mut received: Vec<(u64, u64)> = Vec::new();
    let mut rng = satcc_core::Rng::new(12_345);
    for k in 0..3000u64 {
        let x = rng.next_u64();
        // Mostly just past what arrived so far; sometimes back into a hole, or overlapping.
        let top = received.last().map_or(0, |&(_, e)| e);
        let seq = match (x >> 33) % 8 {
            0 => top.saturating_sub((x >> 40) % (8 * MSS)),
            1 => top + MSS,
            2 => r.rcv_nxt,
            _ => top,
        };
        let len = [MSS, MSS, MSS, 500, 2 * MSS][((x >> 20) % 5) as usize];
        let mut out = Out::default();
        let mut p = Packet::new(0, Kind::Data, 1);
        p.seq = seq;
        p.len = len as u32;
        p.tsval = k + 2;
        p.tsecr = synack.tsval;
        r.on_packet(at_ms(RTT_MS + k), &p, &mut out);
        // The reference: the union of all ranges received, merged when they touch.
        received.push((seq, seq + len));
        received.sort_unstable();
        let mut union: Vec<(u64, u64)> = Vec::new();
        for &(s, e) in &received {
            match union.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => union.push((s, e)),
            }
        }
        received = union.clone();
        let in_order = union
            .first()
            .filter(|&&(s, _)| s == 0)
            .map_or(0, |&(_, e)| e);
        assert_eq!(r.rcv_nxt, in_order, "rcv_nxt after segment {k}");
        let ofo: Vec<(u64, u64)> = union.into_iter().filter(|&(s, _)| s > in_order).collect();
        assert_eq!(r.ofo.iter().map(|(&s, &e)| (s, e)).collect::<Vec<_>>(), ofo);
        assert_eq!(r.ofo_bytes, ofo.iter().map(|(s, e)| e - s).sum::<u64>());
    }
    assert!(r.rcv_nxt > 100 * MSS);
}

/// Drives a receiver with every shortcut (`fast`) and one with `uncache` applied to it
/// (`slow`) through the same arrivals on a scaled, a fixed and an unscaled window, and
/// checks that they send the same ACKs and keep the same window state after every
/// segment: (a) back to back, two losses retransmitted later and a reordering; (b) slow
/// start over a 600 ms path (flights doubling, one RTT apart, echoing the newest TSval),
/// so that DRS grows the buffer, with a loss in the fifth flight filled at its end.
fn assert_same_as_uncached(uncache: fn(&mut Receiver)) {
    for (rwnd, autotune, window_scaling) in [
        (6 << 20, true, true),
        (256 << 10, false, true),
        (60_000, true, false),
    ] {
        let make = |shortcuts: bool| {
            let rcvbuf = RcvBuf {
                max_bytes: rwnd,
                autotune,
                window_scaling,
            };
            let mut r = Receiver::new(0, 1, MSS as u32, true, true, true, rcvbuf, None, None);
            if !shortcuts {
                uncache(&mut r);
            }
            r
        };
        // (arrival ms, segment index, TSecr: None = the newest TSval ACKed so far)
        let mut back_to_back: Vec<(u64, u64, Option<u64>)> = Vec::new();
        let mut order: Vec<u64> = (0..300).collect();
        order.retain(|&i| i != 120 && i != 200); // two losses, retransmitted later
        order.insert(150, 120);
        order.push(200);
        order.extend(300..400);
        // 330 overtakes 328 and 329: in-order data arrives with one packet out of order
        order.retain(|&i| i != 330);
        let at = order.iter().position(|&i| i == 328).expect("328 is sent");
        order.insert(at, 330);
        for (k, &idx) in order.iter().enumerate() {
            back_to_back.push((RTT_MS + k as u64 / 4, idx, Some(1)));
        }
        let mut flights = Vec::new();
        let mut idx = 0;
        for (k, n) in [10u64, 20, 40, 80, 160, 320, 480].into_iter().enumerate() {
            let start = RTT_MS * (k as u64 + 1);
            let lost = if k == 4 { Some(idx + 7) } else { None };
            for i in 0..n {
                if Some(idx) != lost {
                    flights.push((start + i / 2, idx, None));
                }
                idx += 1;
            }
            if let Some(l) = lost {
                flights.push((start + n / 2, l, None));
            }
        }
        for arrivals in [back_to_back, flights] {
            let (mut fast, mut slow) = (make(true), make(false));
            let (sf, ss) = (handshake(&mut fast), handshake(&mut slow));
            assert_eq!(sf, ss);
            let mut newest = sf.tsval;
            for &(ms, idx, tsecr) in &arrivals {
                let now = at_ms(ms);
                let tsecr = tsecr.unwrap_or(newest);
                let (af, asl) = (
                    segment(&mut fast, now, idx, tsecr),
                    segment(&mut slow, now, idx, tsecr),
                );
                assert_eq!(af, asl, "ACKs after segment {idx} (rwnd {rwnd})");
                newest = af.iter().map(|a| a.tsval).fold(newest, u64::max);
                assert_eq!(
                    (fast.rcv_wnd, fast.rcv_wup, fast.quick, fast.ato),
                    (slow.rcv_wnd, slow.rcv_wup, slow.quick, slow.ato),
                    "window state after segment {idx} (rwnd {rwnd})"
                );
                assert_eq!(
                    (fast.rcv_ssthresh, fast.sk_rcvbuf, fast.window_clamp),
                    (slow.rcv_ssthresh, slow.sk_rcvbuf, slow.window_clamp),
                    "buffer state after segment {idx} (rwnd {rwnd})"
                );
            }
            assert_eq!(fast.acks_sent, slow.acks_sent);
            assert!(fast.acks_sent > 100);
        }
    }
}

#[test]
fn an_ack_reusing_the_window_just_selected_offers_what_recomputing_it_offers() {
    // `send_ack_with_window` reuses `__tcp_select_window` from `__tcp_ack_snd_check` and
    // `tcp_cleanup_rbuf`.
    assert_same_as_uncached(|r| r.reuse_window = false);
}

#[test]
fn the_kept_space_limits_are_the_ones_recomputed_from_the_buffer() {
    // `tcp_grow_window` returns at `grow_limit` without computing `tcp_space`,
    // `__tcp_select_window` reads `tcp_full_space` and its clamp from `limits`, and
    // `tcp_space` with one packet held is read from there too.
    assert_same_as_uncached(|r| r.use_space_limits = false);
}
