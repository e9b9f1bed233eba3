//! Path-level checks of single algorithms on the simulator's own sender (a one-flow
//! dumbbell, tests/common.rs; the scripted peer; or `PathPeer`, the sender on one bottleneck
//! seen after every ACK): an algorithm's behaviour on a path is checked on the real sender,
//! not a stand-in. Each bound is derived from the path.

mod common;
#[path = "support/scripted_peer.rs"]
mod scripted_peer;

use common::*;
use satcc_cc::params::ParamValue;
use satcc_cc::INFINITE_SSTHRESH;
use satcc_core::SimDuration;
use satcc_core::SimTime;
use satcc_sim::QueueSpec;
use scripted_peer::{Bottleneck, Ev, PathPeer, Peer};

/// Bottleneck rate carrying `pps` full 1448-byte segments a second (1500 bytes on the wire:
/// 1448 + 20 IP + 32 TCP with timestamps).
fn rate_bps(pps: u64) -> u64 {
    pps * 1500 * 8
}

/// A one-bottleneck path for [`PathPeer`]: `pps` full segments a second, base RTT `rtt_ms`,
/// `queue` packets of drop-tail buffer.
fn bottleneck(pps: u64, rtt_ms: u64, queue: u64) -> Bottleneck {
    Bottleneck {
        rate_bps: rate_bps(pps),
        rtt: ms(rtt_ms),
        queue_pkts: queue,
        police: None,
    }
}

/// `cca` with `params` on `path`, MSS 1448, IW10.
fn path_peer(cca: &str, params: &[(&str, ParamValue)], path: Bottleneck) -> PathPeer {
    let mut p = satcc_cc::Params::new();
    for (k, v) in params {
        p.insert(k, v.clone());
    }
    PathPeer::connect(cca, &p, 1448, 10, path)
}

/// Value `key` of the algorithm's debug state.
fn cc(p: &PathPeer, key: &str) -> f64 {
    p.peer
        .s
        .cc_state()
        .into_iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("{key} in the debug state"))
}

fn secs(x: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_secs(x)
}

fn flow(cca: &str, params: &[(&str, ParamValue)]) -> Flow {
    let mut f = Flow::bulk(0, 0, 2, cca);
    for (k, v) in params {
        set_param(&mut f, k, v);
    }
    f
}

/// (ssthresh of the first bin that has one: the cwnd HyStart left slow start at, queue drops).
fn hystart_run(params: &[(&str, ParamValue)]) -> (Option<u32>, u64) {
    // 1000 packets/s, 100 ms RTT: a BDP of 100 packets, a 2000-packet buffer.
    let cfg = dumbbell(
        rate_bps(1000),
        50,
        0.0,
        QueueSpec::Packets(2000),
        5,
        vec![flow("cubic", params)],
    );
    let o = run(&cfg);
    let exit = o
        .flow_series
        .ssthresh_pkts
        .iter()
        .copied()
        .find(|&s| s < INFINITE_SSTHRESH);
    (exit, o.link_series.drops_queue.iter().sum())
}

#[test]
fn cubic_hystart_exits_slow_start_before_any_loss_on_a_deep_buffer() {
    let (exit, drops) = hystart_run(&[("hystart_detect", ParamValue::Str("delay".into()))]);
    let exit = exit.expect("HyStart exited slow start");
    // BDP is 100 packets. HyStart's rounds start at the first ACK (tcp_cubic.c
    // `hystart_update` resets the round before its low-window test), so they follow the
    // flights: cwnd 10, 20, 40, 80, 160, 320. The 160 round's first samples leave before a
    // queue builds; the 320 round starts while the previous round's tail still queues, so
    // its first samples are far past delay_min + 12.5 ms and slow start ends within that
    // round's first ACKs (bins of 100 ms sample ssthresh, which HyStart sets to the cwnd).
    assert!((320..=336).contains(&exit), "exit cwnd {exit}");
    assert_eq!(drops, 0);
    let (_, drops) = hystart_run(&[("hystart", ParamValue::Bool(false))]);
    assert!(
        drops > 0,
        "without HyStart slow start runs into the 2000-packet buffer"
    );
}

#[test]
fn bbr3_finds_the_rate_of_a_fixed_bottleneck_and_keeps_the_queue_small() {
    // 1000 packets/s, 50 ms base RTT, a 1000-packet buffer (10 BDPs).
    let cfg = dumbbell(
        rate_bps(1000),
        25,
        0.0,
        QueueSpec::Packets(1000),
        12,
        vec![flow("bbr3", &[])],
    );
    let o = run(&cfg);
    let s = &o.flow_series;
    let bins: Vec<usize> = (0..s.t_s.len()).filter(|&k| s.t_s[k] >= 4.0).collect();
    let delivered: u64 = bins.iter().map(|&k| s.delivered_bytes[k]).sum();
    let pps = delivered as f64 / 1448.0 / (bins.len() as f64 * 0.1);
    assert!(pps > 900.0, "goodput {pps} pkt/s of 1000");
    let last = *bins.last().expect("bins after 4 s");
    assert!(
        s.srtt_ms[last] < 80.0,
        "srtt {} ms on a 50 ms path",
        s.srtt_ms[last]
    );
}

/// The bottleneck's forward queue (link 1, "ab") sampled at the end of each bin from `from_s`.
fn bottleneck_queue(o: &satcc_sim::SimOutput, from_s: f64) -> Vec<f64> {
    let l = &o.link_series;
    (0..l.t_s.len())
        .filter(|&k| l.link_id[k] == 1 && l.dir[k] == "ab" && l.t_s[k] >= from_s)
        .map(|k| l.queue_pkts[k] as f64)
        .collect()
}

/// Segments a second delivered to flow 0 in bins from `from_s` on.
fn goodput_pps(o: &satcc_sim::SimOutput, from_s: f64) -> f64 {
    let s = &o.flow_series;
    let bins: Vec<usize> = (0..s.t_s.len()).filter(|&k| s.t_s[k] >= from_s).collect();
    let bytes: u64 = bins.iter().map(|&k| s.delivered_bytes[k]).sum();
    bytes as f64 / 1448.0 / (bins.len() as f64 * 0.1)
}

#[test]
fn vegas_queues_a_few_packets_without_loss_on_a_deep_buffer() {
    // 1000 pkt/s, 100 ms: BDP 100 packets; a buffer far larger than alpha..beta. Slow start
    // overshoots (its exit uses the previous round's minimum RTT) and avoidance drains one
    // packet per RTT: steady state after ~60 s.
    let cfg = dumbbell(
        rate_bps(1000),
        50,
        0.0,
        QueueSpec::Packets(500),
        110,
        vec![flow("vegas", &[])],
    );
    let o = run(&cfg);
    let drops: u64 = o.link_series.drops_queue.iter().sum();
    assert_eq!(drops, 0);
    let rate = goodput_pps(&o, 90.0);
    assert!(rate > 990.0, "delivery rate {rate}");
    let q = bottleneck_queue(&o, 90.0);
    let mean = q.iter().sum::<f64>() / q.len() as f64;
    let max = q.iter().copied().fold(0.0, f64::max);
    let (alpha, beta) = (2.0, 4.0); // tcp_vegas.c's defaults
    assert!(mean >= alpha - 1.0 && mean <= beta + 2.0, "queue {mean}");
    assert!(max < 20.0, "max queue {max}");
}

#[test]
fn yeah_with_a_large_bdp_stays_fast_and_keeps_the_queue_near_alpha() {
    // BDP 1000 packets: the delay threshold baseRTT/phy is 125 packets of queue, above
    // alpha (80), so decongestion (not the delay test) governs. A 32 MiB receive buffer
    // (Linux 6.16+'s tcp_rmem[2]; the scenario's 6 MiB opens ~2,700 segments, within reach
    // of this path's BDP plus buffer).
    let mut f = flow("yeah", &[]);
    f.rwnd_bytes = 32 << 20;
    let mut cfg = dumbbell(
        rate_bps(10_000),
        50,
        0.0,
        QueueSpec::Packets(3000),
        60,
        vec![f],
    );
    cfg.cc_state = true;
    let o = run(&cfg);
    let rate = goodput_pps(&o, 20.0);
    assert!(rate > 9900.0, "rate {rate}");
    let l = &o.link_series;
    let late_drops: u64 = (0..l.t_s.len())
        .filter(|&k| l.t_s[k] >= 20.0)
        .map(|k| l.drops_queue[k])
        .sum();
    assert_eq!(late_drops, 0, "no loss in steady state");
    let max = bottleneck_queue(&o, 20.0).into_iter().fold(0.0, f64::max);
    assert!(max < 2.0 * 80.0, "max queue {max}");
    // The mode once per bin (one RTT): fast (Scalable) in more than 80 % of them.
    let cc = o.cc_series.as_ref().expect("cc state recorded");
    let modes: Vec<f64> = (0..cc.t_s.len())
        .filter(|&k| cc.t_s[k] >= 20.0 && cc.name[k] == "doing_reno_now")
        .map(|k| cc.value[k])
        .collect();
    let fast = modes.iter().filter(|&&v| v == 0.0).count();
    assert!(
        fast * 10 > modes.len() * 8,
        "fast in {fast} of {} rounds",
        modes.len()
    );
}

#[test]
fn cubic_hystart_ack_train_exits_when_a_closely_spaced_train_outlasts_half_the_min_rtt() {
    // 64 segments sent at once on a 40 ms path; the first ACK starts the round, then 40 ACKs
    // `spacing_ms` apart: a train of ACKs at most 2 ms apart lasting delay_min / 2 = 20 ms
    // ends slow start (tcp_cubic.c `hystart_update`, HYSTART_ACK_TRAIN).
    let train = |spacing_ms: u32| {
        let p = satcc_cc::Params::new().with("hystart_detect", ParamValue::Str("ack_train".into()));
        let mut peer = Peer::connect("cubic", &p, 1448, 64, SimDuration::from_millis(40), false);
        peer.play(Ev::Deliver {
            n: 1,
            gap_us: 40_000,
        });
        for _ in 0..40 {
            peer.play(Ev::Deliver {
                n: 1,
                gap_us: spacing_ms * 1000,
            });
        }
        peer.trace.last().expect("steps").ssthresh
    };
    assert!(
        train(1) < INFINITE_SSTHRESH,
        "1 ms spacing: a train longer than 20 ms"
    );
    assert_eq!(train(3), INFINITE_SSTHRESH, "3 ms spacing breaks the train");
}

// ----- CUBIC: HyStart's delay threshold (from satcc-cc cubic.rs) ---------------------------

/// ssthresh after two slow-start rounds of CUBIC from cwnd 16 on the scripted peer: the 16
/// segments of the first round acked 100 ms after they left, then 16 of the 32 their ACKs
/// released, `second_ms` after those left (one ACK per segment).
fn hystart_rounds(p: &satcc_cc::Params, second_ms: u32) -> u32 {
    let mut peer = Peer::connect("cubic", p, 1448, 16, ms(100), false);
    for rtt_ms in [100, second_ms] {
        peer.play(Ev::Deliver {
            n: 1,
            gap_us: rtt_ms * 1000,
        });
        peer.play(Ev::Deliver { n: 15, gap_us: 0 });
    }
    peer.trace.last().expect("steps").ssthresh
}

fn delay_only() -> satcc_cc::Params {
    satcc_cc::Params::new().with("hystart_detect", ParamValue::Str("delay".into()))
}

#[test]
fn cubic_hystart_leaves_slow_start_when_a_rounds_min_rtt_exceeds_delay_min_by_an_eighth() {
    // tcp_cubic.c hystart_update: after 8 samples, exit when the round's minimum RTT is at
    // least delay_min + clamp(delay_min / 8, 4 ms, 16 ms) = 100 + 12.5 ms.
    assert_eq!(
        hystart_rounds(&delay_only(), 112),
        INFINITE_SSTHRESH,
        "12 ms is not enough"
    );
    let ss = hystart_rounds(&delay_only(), 113);
    assert!(
        (32..=48).contains(&ss),
        "13 ms exits slow start: ssthresh {ss}"
    );
    let off = satcc_cc::Params::new().with("hystart", ParamValue::Bool(false));
    assert_eq!(hystart_rounds(&off, 113), INFINITE_SSTHRESH, "disabled");
}

#[test]
fn cubic_hystart_ignores_windows_below_the_low_window() {
    let p = delay_only().with("hystart_low_window", ParamValue::Num(64.0));
    assert_eq!(hystart_rounds(&p, 113), INFINITE_SSTHRESH);
}

// ----- NV on a deep buffer (from satcc-cc nv.rs) --------------------------------------------

/// NV alone on 2000 packets/s, 50 ms (BDP 100 packets), a 1000-packet buffer.
fn nv_deep_buffer(secs: u64) -> satcc_sim::SimOutput {
    let cfg = dumbbell(
        rate_bps(2000),
        25,
        0.0,
        QueueSpec::Packets(1000),
        secs,
        vec![flow("nv", &[])],
    );
    run(&cfg)
}

/// Mean of the bottleneck queue sampled at the end of each bin in [from_s, to_s).
fn mean_queue(o: &satcc_sim::SimOutput, from_s: f64, to_s: f64) -> f64 {
    let q: Vec<f64> = {
        let l = &o.link_series;
        (0..l.t_s.len())
            .filter(|&k| l.link_id[k] == 1 && l.dir[k] == "ab")
            .filter(|&k| l.t_s[k] >= from_s && l.t_s[k] < to_s)
            .map(|k| l.queue_pkts[k] as f64)
            .collect()
    };
    q.iter().sum::<f64>() / q.len() as f64
}

// Both NV tests failed on the simulator's sender before its `pkts_acked` sample carried the
// rate sample's `prior_delivered` (Linux's tcp_clean_rtx_queue passes `in_flight = mss ·
// (delivered − rs->prior_delivered)`, filled by tcp_rate_skb_delivered first): NV's rate was
// then the whole transfer over one RTT and its window never stopped growing (mean queue 77
// packets in 4–10 s, 233 in 24–30 s); with the field, 10 and 28.
#[test]
fn nv_on_a_deep_buffer_holds_about_pad_packets_queued_at_full_rate() {
    let o = nv_deep_buffer(11);
    let q = mean_queue(&o, 4.0, 10.0);
    assert!((8.0..=13.0).contains(&q), "mean queue {q} packets (pad 10)");
    let rate = goodput_pps(&o, 10.0);
    assert!(rate >= 1990.0, "not at full rate: {rate} pkt/s");
    assert_eq!(o.link_series.drops_queue.iter().sum::<u64>(), 0);
}

#[test]
fn nv_a_standing_queue_ratchets_up_by_pad_at_each_min_rtt_refresh() {
    // Kernel behaviour: with no RTT noise the queue never drains, so each 5 s refresh of the
    // min RTT takes in the standing queue and max_win grows by pad.
    let o = nv_deep_buffer(30);
    let (q1, q2) = (mean_queue(&o, 4.0, 10.0), mean_queue(&o, 24.0, 30.0));
    let steps = (q2 - q1) / 10.0;
    assert!((1.5..=2.5).contains(&steps), "queue {q1} -> {q2}");
}

// ----- BBR (v1) on one bottleneck (from satcc-cc bbr/mod.rs) --------------------------------

#[test]
fn bbr_on_a_fixed_bottleneck_finds_its_rate_and_cycles_the_gains_in_order() {
    let mut p = path_peer("bbr", &[], bottleneck(1000, 50, 1000));
    let (mut modes, mut phases) = (Vec::new(), Vec::new());
    p.run_until(secs(8), |p| {
        let mode = cc(p, "mode") as u8;
        if modes.last() != Some(&mode) {
            modes.push(mode);
        }
        if mode == 2 {
            let phase = cc(p, "cycle_idx") as usize;
            if phases.last() != Some(&phase) {
                phases.push(phase);
            }
        }
    });
    assert_eq!(
        &modes[..3],
        &[0, 1, 2],
        "STARTUP -> DRAIN -> PROBE_BW, got {modes:?}"
    );
    let bw = cc(&p, "bw_pps");
    assert!((bw - 1000.0).abs() < 30.0, "bw estimate {bw}");
    // One phase per min RTT (50 ms): ~100 in the 5+ s of PROBE_BW.
    assert!(phases.len() > 16, "phases {phases:?}");
    for w in phases.windows(2) {
        assert_eq!(w[1], (w[0] + 1) % 8, "phase order {phases:?}");
    }
}

#[test]
fn bbr_probe_rtt_starts_10_s_after_the_last_min_rtt_and_lasts_200_ms_plus_a_round() {
    // bbr_init takes the handshake's RTT as the first minimum (tcp_min_rtt) and stamps it.
    // The handshake sees 70 ms; at 1 s the return route shortens by 20 ms, so data segments
    // see 51 ms (1 ms of serialisation) to 61 ms (a 10-packet buffer: BBR paces 1 % below
    // its estimate in PROBE_BW, too slowly to drain a deep queue STARTUP left) and refresh
    // the minimum; at 3 s it lengthens again (71 ms) and the old minimum is never seen again.
    let mut p = path_peer("bbr", &[], bottleneck(1000, 70, 10));
    p.run_until(secs(1), |_| {});
    p.back -= ms(20);
    // An ACK whose RTT equals the min RTT refreshes the 10 s window (tcp_bbr.c
    // bbr_update_min_rtt: rtt_us <= min_rtt_us).
    let refreshes = |p: &PathPeer| {
        p.last_rtt
            .is_some_and(|r| r.as_micros() as f64 <= cc(p, "min_rtt_ms") * 1000.0 + 0.5)
    };
    let mut last_refresh = None;
    p.run_until(secs(3), |p| {
        if refreshes(p) {
            last_refresh = Some(p.peer.now);
        }
    });
    p.back += ms(20);
    let (mut entered, mut left) = (None, None);
    let mut max_cwnd_in_probe_rtt = 0;
    p.run_until(secs(16), |p| {
        let now = p.peer.now;
        if cc(p, "mode") as u8 == 3 {
            entered.get_or_insert(now);
            let cwnd = p.peer.trace.last().expect("a step").cwnd;
            max_cwnd_in_probe_rtt = max_cwnd_in_probe_rtt.max(cwnd);
        } else if entered.is_some() && left.is_none() {
            left = Some(now);
        }
        if entered.is_none() && refreshes(p) {
            last_refresh = Some(now);
        }
    });
    let entered = entered.expect("PROBE_RTT entered");
    let left = left.expect("PROBE_RTT left").as_secs_f64();
    let last_refresh = last_refresh.expect("data samples refreshed the minimum");
    assert!(
        // (ACKs already on the shortened 15 ms return route at 3 s arrive after it)
        last_refresh > secs(1) && last_refresh < secs(3) + ms(15),
        "refreshed at {last_refresh:?}: only between the route changes"
    );
    // after(jiffies, stamp + 10 s): the first ACK more than one jiffy past 10 s.
    let wait = entered.saturating_since(last_refresh).as_secs_f64();
    assert!(
        (10.0..10.01).contains(&wait),
        "PROBE_RTT {wait} s after the last min RTT"
    );
    // 200 ms at <= 4 packets plus at least one round (~70 ms); the drain to 4 adds <= 1 RTT.
    let held = left - entered.as_secs_f64();
    assert!((0.27..0.5).contains(&held), "held {held} s");
    assert_eq!(max_cwnd_in_probe_rtt, 4, "bbr_cwnd_min_target");
    let min_ms = cc(&p, "min_rtt_ms");
    assert!(
        (70.0..75.0).contains(&min_ms),
        "min RTT re-measured: {min_ms} ms"
    );
}

#[test]
fn bbr_detects_a_policer_and_uses_its_rate() {
    // 2000 packets/s, 40 ms, policed at 500 packets/s with a 30-packet bucket.
    let mut path = bottleneck(2000, 40, 400);
    path.police = Some((rate_bps(500), 30 * 1500));
    let mut p = path_peer("bbr", &[], path);
    let mut used = Vec::new();
    p.run_until(secs(30), |p| {
        if cc(p, "lt_use_bw") > 0.0 {
            used.push(cc(p, "bw_pps"));
        }
    });
    assert!(!used.is_empty(), "lt_bw never engaged");
    let mean = used.iter().sum::<f64>() / used.len() as f64;
    assert!((mean - 500.0).abs() < 75.0, "policed bw {mean} pkt/s");
    // Without the policer (a deep buffer, no losses) the long-term estimate stays off.
    let mut p = path_peer("bbr", &[], bottleneck(2000, 40, 4000));
    let mut ever = false;
    p.run_until(secs(10), |p| ever |= cc(p, "lt_use_bw") > 0.0);
    assert!(!ever);
}

#[test]
fn bbr_after_an_rto_cuts_cwnd_to_one_and_restores_the_saved_window() {
    let mut p = path_peer("bbr", &[], bottleneck(1000, 50, 1000));
    p.run_until(secs(3), |_| {});
    let before = p.peer.trace.last().expect("a step").cwnd;
    // The return path goes down until the RTO fires: the data arrives, no ACK does (the
    // test kit marked everything lost while the path still delivered it).
    p.acks_lost = true;
    loop {
        let h = p.step(secs(5)).expect("an RTO before 5 s");
        let s = *p.peer.trace.last().expect("a step");
        if h == scripted_peer::Happened::Timer && s.ca_state == 4 {
            // tcp_enter_loss: everything marked lost, cwnd = in flight + 1.
            assert_eq!(s.cwnd, 1, "cwnd after the RTO");
            break;
        }
    }
    p.acks_lost = false;
    // The first ACK after the outage covers what arrived: the sender finds the RTO spurious
    // (timestamps, tcp_try_undo_loss) and is Open again; BBR's undo keeps cwnd at 1 and its
    // next update gives back the saved window (tcp_bbr.c bbr_set_cwnd_to_recover_or_restore:
    // cwnd = max(cwnd, prior_cwnd)); its slow-start step (cwnd + acked, the whole flight
    // acked at once) would too, so the test fails only if both fail.
    let mut at_open = None;
    p.run_until(secs(5), |p| {
        let s = p.peer.trace.last().expect("a step");
        if s.ca_state == 0 && at_open.is_none() {
            at_open = Some(s.cwnd);
        }
    });
    let at_open = at_open.expect("the Loss episode ends");
    assert!(
        at_open + 10 >= before,
        "cwnd {at_open} when Loss ended, {before} before"
    );
    let s = *p.peer.trace.last().expect("a step");
    assert_eq!(s.ca_state, 0, "back in Open");
    assert!(s.cwnd + 10 >= before, "cwnd {} back near {before}", s.cwnd);
}

/// (time, cwnd, pacing rate) after every ACK of `cca` with `seed` on `path` for `until`.
fn trace_of(cca: &str, seed: u64, path: Bottleneck, until: u64) -> Vec<(SimTime, u32, u64)> {
    let mut p = path_peer(cca, &[("seed", ParamValue::Num(seed as f64))], path);
    let mut v = Vec::new();
    p.run_until(secs(until), |p| {
        let s = p.peer.trace.last().expect("a step");
        v.push((p.peer.now, s.cwnd, s.pacing_rate_bps));
    });
    v
}

#[test]
fn bbr_the_same_seed_gives_the_same_run_and_seeds_change_the_start_phase() {
    let path = bottleneck(1000, 50, 1000);
    let one = trace_of("bbr", 1, path, 3);
    assert_eq!(one, trace_of("bbr", 1, path, 3));
    assert!((2..6).any(|s| trace_of("bbr", s, path, 3) != one));
}

// ----- BBRv3 on one bottleneck (from satcc-cc bbr3/mod.rs) ----------------------------------

#[test]
fn bbr3_probe_bw_cycles_down_cruise_refill_up_with_a_2_to_3_s_wall_clock_wait() {
    // BDP 200 packets: the Reno bound (63 rounds, ~6 s) is longer than the clock wait.
    let mut p = path_peer(
        "bbr3",
        &[("seed", ParamValue::Num(3.0))],
        bottleneck(2000, 100, 2000),
    );
    let mut seq: Vec<(u8, SimTime)> = Vec::new(); // (phase, when entered); 9 = not PROBE_BW
    p.run_until(secs(30), |p| {
        let code = if cc(p, "mode") as u8 == 2 {
            cc(p, "phase") as u8
        } else {
            9
        };
        if seq.last().map(|l| l.0) != Some(code) {
            seq.push((code, p.peer.now));
        }
    });
    let (up, down, cruise, refill) = (0, 1, 2, 3);
    let mut full_cycles = 0;
    for w in seq.windows(2) {
        let (a, b) = (w[0].0, w[1].0);
        if a == 9 || b == 9 {
            continue; // PROBE_RTT interrupts; it returns to CRUISE
        }
        let next = match a {
            x if x == down => cruise,
            x if x == cruise => refill,
            x if x == refill => up,
            _ => down,
        };
        assert_eq!(b, next, "phase order {seq:?}");
        if a == up {
            full_cycles += 1;
        }
    }
    assert!(full_cycles >= 4, "{full_cycles} probes in 30 s: {seq:?}");
    // The random wait runs from DOWN's start (or from PROBE_BW entry / PROBE_RTT exit, which
    // pass through DOWN into CRUISE on the same ACK) to REFILL's start.
    let mut waits = Vec::new();
    for w in seq.windows(3) {
        match (w[0].0, w[1].0, w[2].0) {
            (a, b, c) if (a, b, c) == (down, cruise, refill) => {
                waits.push(w[2].1.saturating_since(w[0].1))
            }
            (9, b, c) if (b, c) == (cruise, refill) => waits.push(w[2].1.saturating_since(w[1].1)),
            _ => {}
        }
    }
    let waits: Vec<f64> = waits.iter().map(|d| d.as_secs_f64()).collect();
    assert!(waits.len() >= 4, "{waits:?} {seq:?}");
    for w in &waits {
        assert!((2.0..3.01).contains(w), "probe wait {w} s: {waits:?}");
    }
}

#[test]
fn bbr3_probe_rtt_comes_every_5_s_and_holds_cwnd_at_half_the_bdp() {
    let mut p = path_peer("bbr3", &[], bottleneck(1000, 50, 1000));
    let (mut entries, mut exits) = (Vec::new(), Vec::new());
    let mut in_rtt = false;
    let mut max_cwnd: u32 = 0;
    let mut want_cwnd: f64 = 0.0;
    p.run_until(secs(23), |p| {
        let now_in = cc(p, "mode") as u8 == 3;
        let t = p.peer.now.as_secs_f64();
        if now_in && !in_rtt {
            entries.push(t);
        } else if !now_in && in_rtt {
            exits.push(t);
        }
        if now_in {
            max_cwnd = max_cwnd.max(p.peer.trace.last().expect("a step").cwnd);
            // 1/2 x bw x min_rtt, from the model at this ACK.
            want_cwnd = want_cwnd.max(0.5 * cc(p, "bw_pps") * cc(p, "min_rtt_ms") / 1000.0);
        }
        in_rtt = now_in;
    });
    assert!(entries.len() >= 4, "entries {entries:?}");
    for (exit, next) in exits.iter().zip(entries.iter().skip(1)) {
        let gap = next - exit;
        assert!(
            (5.0..5.05).contains(&gap),
            "PROBE_RTT {gap} s after the last one: {entries:?} {exits:?}"
        );
    }
    // 1000 pkt/s x ~51 ms / 2 = ~25.5 packets.
    assert!((24..=28).contains(&max_cwnd), "PROBE_RTT cwnd {max_cwnd}");
    assert!(
        (f64::from(max_cwnd) - want_cwnd.ceil()).abs() <= 1.0,
        "{max_cwnd} vs 1/2 BDP {want_cwnd}"
    );
}

#[test]
fn bbr3_the_same_seed_gives_the_same_run() {
    let path = bottleneck(1500, 30, 60);
    let five = trace_of("bbr3", 5, path, 8);
    assert_eq!(five, trace_of("bbr3", 5, path, 8));
    assert!((6..10).any(|s| trace_of("bbr3", s, path, 8) != five));
}
