//! Path models in the simulator: time-varying links, Starlink epochs, traces,
//! fragmentation through a VPN encapsulation, UDP constant-bit-rate flows.

mod common;

use common::*;
use satcc_core::dirspec::Direction;
use satcc_core::models::{starlink::StarlinkSpec, ModelConfig, ModelSpec};
use satcc_core::scenario::{Link, Proto, Scenario};
use satcc_core::SimDuration;
use satcc_sim::{QueueSpec, SimOutput};

const BIN_S: f64 = 0.1;

fn secs(x: u64) -> SimDuration {
    SimDuration::from_secs(x)
}

/// The residential uplink preset of satcc-core's `models::starlink` (sources cited there).
fn residential_uplink() -> StarlinkSpec {
    StarlinkSpec {
        period: secs(15),
        phase: secs(12),
        start: SimDuration::ZERO,
        rtt_quantiles: [ms(20), ms(40), ms(50), ms(60), ms(85)],
        capacity_bps: (5_000_000, 25_000_000),
        loss: (0.002, 0.005),
        disturbance: (ms(50), ms(150)),
        outage_probability: 0.5,
        burst_loss: (0.0, 0.5),
        intra: None,
    }
}

fn residential_downlink() -> StarlinkSpec {
    StarlinkSpec {
        capacity_bps: (50_000_000, 150_000_000),
        loss: (0.0001, 0.0001),
        ..residential_uplink()
    }
}

/// A direction of a Starlink model without `intra` (satcc-core `models::starlink`; its
/// resolved form is its configuration).
fn model_dir(spec: StarlinkSpec, nominal_bps: u64, queue: QueueSpec) -> Direction {
    assert!(spec.intra.is_none());
    let m = ModelSpec::Starlink(spec.clone());
    assert_eq!(m.config("model").unwrap(), ModelConfig::Starlink(spec));
    let mut d = Direction::new(nominal_bps, ms(25).as_nanos(), 0.0, queue);
    d.model = Some(m);
    d
}

/// dish —(model a→b, b→a)— pop.
fn one_link(ab: Direction, ba: Direction, secs_run: u64, flows: Vec<Flow>) -> Scenario {
    let links = vec![Link { a: 0, b: 1, ab, ba }];
    let duration = secs(secs_run).as_nanos();
    Scenario::new("paths", &["dish", "pop"], links, flows, duration)
}

/// Delivered bytes per bin of flow `f`.
fn delivered(o: &SimOutput, f: u32) -> Vec<u64> {
    let s = &o.flow_series;
    (0..s.t_s.len())
        .filter(|&i| s.flow_id[i] == f)
        .map(|i| s.delivered_bytes[i])
        .collect()
}

#[test]
fn an_outage_holds_packets_and_the_link_series_shows_it() {
    // Every boundary is a 1 s outage; capacity fixed at 10 Mbit/s, RTT fixed at 40 ms.
    let spec = StarlinkSpec {
        rtt_quantiles: [ms(40); 5],
        capacity_bps: (10_000_000, 10_000_000),
        loss: (0.0, 0.0),
        disturbance: (ms(1000), ms(1000)),
        outage_probability: 1.0,
        burst_loss: (0.0, 0.0),
        intra: None,
        period: secs(15),
        phase: secs(12),
        start: SimDuration::ZERO,
    };
    let ab = model_dir(spec.clone(), 10_000_000, QueueSpec::Packets(10_000));
    let ba = model_dir(spec, 10_000_000, QueueSpec::Packets(10_000));
    let o = run(&one_link(ab, ba, 20, vec![Flow::bulk(0, 0, 1, "cubic")]));
    let d = delivered(&o, 0);
    // Nothing arrives from 12.02 s (last packets in flight) to 13 s.
    assert!(d[121..130].iter().all(|&b| b == 0), "{:?}", &d[115..135]);
    assert!(d[100..115].iter().all(|&b| b > 0) && d[135..150].iter().all(|&b| b > 0));
    // The link series carries the model's capacity and delay per bin.
    let ls = &o.link_series;
    let ab: Vec<usize> = (0..ls.t_s.len()).filter(|&i| ls.dir[i] == "ab").collect();
    for &i in &ab {
        let t = ls.t_s[i];
        let want = if (12.0 - 1e-9..13.0 - 1e-9).contains(&t) {
            0
        } else {
            10_000_000
        };
        assert_eq!(ls.capacity_bps[i], want, "t = {t}");
        assert!((ls.delay_ms[i] - 20.0).abs() < 1e-9);
        assert_eq!(
            ls.drops_random[i], 0,
            "an outage holds packets, it does not lose them"
        );
    }
    // The flow survived the outage without losing its connection state: it resumes.
    assert!(o.flows[0].delivered_bytes > 15 * 10_000_000 / 8 * 8 / 10);
}

#[test]
fn rate_steps_at_epoch_boundaries_are_seen_by_the_serialiser() {
    // Capacity redrawn per epoch in 5..25 Mbit/s, no disturbance, no loss: a saturating flow's
    // goodput in each epoch follows that epoch's capacity, so it differs between epochs.
    let spec = StarlinkSpec {
        loss: (0.0, 0.0),
        disturbance: (SimDuration::ZERO, SimDuration::ZERO),
        burst_loss: (0.0, 0.0),
        intra: None,
        ..residential_uplink()
    };
    let ab = model_dir(spec.clone(), 15_000_000, QueueSpec::Bytes(300_000));
    let ba = model_dir(
        residential_downlink(),
        100_000_000,
        QueueSpec::Packets(1000),
    );
    let o = run(&one_link(ab, ba, 72, vec![Flow::bulk(0, 0, 1, "bbr")]));
    let d = delivered(&o, 0);
    let ls = &o.link_series;
    let cap: Vec<u64> = (0..ls.t_s.len())
        .filter(|&i| ls.dir[i] == "ab")
        .map(|i| ls.capacity_bps[i])
        .collect();
    // Epochs [12,27), [27,42), [42,57): skip 3 s of each for convergence.
    for start in [12usize, 27, 42, 57] {
        let bins = (start + 3) * 10..(start + 15) * 10;
        let got =
            bins.clone().map(|i| d[i]).sum::<u64>() as f64 * 8.0 / (bins.len() as f64 * BIN_S);
        let c = cap[start * 10 + 5] as f64;
        assert!(
            bins.clone().all(|i| cap[i] as f64 == c),
            "capacity constant within the epoch"
        );
        assert!(
            got <= c && got > 0.85 * c,
            "epoch at {start} s: goodput {got:.0} of {c:.0}"
        );
    }
}

#[test]
fn a_starlink_uplink_shows_15_s_periodic_throughput_dips() {
    let ab = model_dir(residential_uplink(), 15_000_000, QueueSpec::Bytes(281_250));
    let ba = model_dir(
        residential_downlink(),
        100_000_000,
        QueueSpec::Bytes(2_500_000),
    );
    let secs_run = 192; // 12 boundaries (12 s … 177 s)
    let o = run(&one_link(
        ab,
        ba,
        secs_run,
        vec![Flow::bulk(0, 0, 1, "cubic")],
    ));
    let d = delivered(&o, 0);
    // Fold the series on the 15 s period, aligned on the boundaries (:12 → bin 120).
    let period = 150usize;
    let mut fold = vec![0u64; period];
    let mut count = vec![0u64; period];
    for (i, &b) in d.iter().enumerate().skip(120) {
        fold[(i - 120) % period] += b;
        count[(i - 120) % period] += 1;
    }
    let profile: Vec<f64> = fold
        .iter()
        .zip(&count)
        .map(|(&b, &n)| b as f64 / n.max(1) as f64)
        .collect();
    let mean = profile.iter().sum::<f64>() / period as f64;
    let (argmin, min) = profile
        .iter()
        .enumerate()
        .fold((0, f64::MAX), |a, (i, &v)| if v < a.1 { (i, v) } else { a });
    // The deepest point of the average 15 s cycle lies within 1 s after the boundary, and is a
    // real dip, not noise.
    assert!(
        argmin <= 10,
        "deepest bin {argmin} of the cycle (profile {profile:?})"
    );
    assert!(min < 0.7 * mean, "dip {min:.0} vs mean {mean:.0}");
    // And the dip repeats: most boundaries have a bin in their first second below 70 % of the
    // median of the same epoch.
    let mut dipped = 0;
    let boundaries: Vec<usize> = (0..12)
        .map(|k| 120 + k * period)
        .filter(|&b| b + period <= d.len())
        .collect();
    for &b in &boundaries {
        let mut rest: Vec<u64> = d[b + 30..b + period].to_vec();
        rest.sort_unstable();
        let median = rest[rest.len() / 2] as f64;
        if d[b..b + 10].iter().any(|&x| (x as f64) < 0.7 * median) {
            dipped += 1;
        }
    }
    assert!(
        dipped * 4 >= boundaries.len() * 3,
        "{dipped} of {} boundaries dipped",
        boundaries.len()
    );
}

#[test]
fn a_starlink_run_is_deterministic_and_depends_on_the_seed() {
    let mk = |seed| {
        let ab = model_dir(residential_uplink(), 15_000_000, QueueSpec::Bytes(281_250));
        let ba = model_dir(
            residential_downlink(),
            100_000_000,
            QueueSpec::Bytes(2_500_000),
        );
        let mut cfg = one_link(ab, ba, 40, vec![Flow::bulk(0, 0, 1, "cubic")]);
        cfg.seed = seed;
        run(&cfg)
    };
    let (a, b, c) = (mk(3), mk(3), mk(4));
    assert_eq!(a.flow_series, b.flow_series);
    assert_eq!(a.link_series, b.link_series);
    assert_ne!(a.link_series.capacity_bps, c.link_series.capacity_bps);
}

// -- VPN encapsulation and fragmentation (study 000's MSS sweep) ---------------------------------

fn tunnel_flow(mss: u32, encap: u32) -> Flow {
    let mut f = Flow::bulk(0, 0, 2, "reno");
    f.mss = mss;
    f.encap_bytes = encap;
    f
}

/// Wire bytes per full data segment: payload + 20 IP + 20 TCP + 12 timestamps + tunnel, plus a
/// second IP header when it exceeds the 1500-byte MTU.
fn wire_per_segment(mss: u32, encap: u32) -> f64 {
    let ip = mss + 52 + encap;
    (if ip > 1500 { ip + 20 } else { ip }) as f64
}

#[test]
fn with_60_bytes_of_encapsulation_mss_1460_fragments_and_mss_1300_does_not() {
    for (mss, fragments) in [(1460, true), (1300, false)] {
        let cfg = dumbbell(
            10_000_000,
            10,
            0.0,
            QueueSpec::Bdp(1.0),
            20,
            vec![tunnel_flow(mss, 60)],
        );
        let o = run(&cfg);
        let segments = o.flows[0].sent_packets;
        if fragments {
            // Every data segment (the handshake and ACKs are small) left as two fragments.
            assert_eq!(o.fragmented_packets, segments, "mss {mss}");
        } else {
            assert_eq!(o.fragmented_packets, 0, "mss {mss}");
        }
        // Goodput reflects the bytes the tunnel and the fragments add.
        let capacity = 10e6 * mss as f64 / wire_per_segment(mss, 60);
        let got = o.flows[0].goodput_bps;
        assert!(
            got <= capacity * 1.001 && got > 0.93 * capacity,
            "mss {mss}: {got:.0} of {capacity:.0}"
        );
    }
}

#[test]
fn losing_either_fragment_loses_the_packet_so_mss_1300_beats_1460_under_loss() {
    // Loss-limited Reno (0.5 % per IP packet, 50 ms RTT, 20 Mbit/s): a fragmented segment is lost
    // with ≈ 1 − 0.995², twice as often, which costs more than the 12 % larger payload gains
    // (Mathis: rate ∝ MSS / √p) — study 000's MSS-1300 optimum through a VPN.
    let goodput = |mss: u32| -> f64 {
        (1..=3)
            .map(|seed| {
                let mut cfg = dumbbell(
                    20_000_000,
                    25,
                    0.005,
                    QueueSpec::Bdp(1.0),
                    60,
                    vec![tunnel_flow(mss, 60)],
                );
                cfg.seed = seed;
                run(&cfg).flows[0].goodput_bps
            })
            .sum::<f64>()
            / 3.0
    };
    let (g1300, g1460) = (goodput(1300), goodput(1460));
    assert!(
        g1300 > 1.1 * g1460,
        "mss 1300: {g1300:.0}, mss 1460: {g1460:.0}"
    );
}

#[test]
fn a_lost_fragment_is_never_delivered_and_the_flow_recovers_by_retransmission() {
    let mut cfg = dumbbell(
        10_000_000,
        10,
        0.0,
        QueueSpec::Bdp(1.0),
        10,
        vec![tunnel_flow(1460, 60)],
    );
    let mut f = cfg.flows[0].clone();
    f.size_bytes = Some(1_460_000);
    cfg.flows = vec![f];
    // The bottleneck drops its 101st packet: the second fragment of a data segment.
    cfg.links[1].ab.drop_packets = Some(vec![101]);
    let o = run(&cfg);
    assert_eq!(o.flows[0].delivered_bytes, 1_460_000);
    assert!(o.flows[0].retransmitted_packets >= 1);
}

// -- UDP constant bit rate (study 000 Fig. 13) ----------------------------------------------------

fn udp_flow(rate_bps: u64, payload: u32) -> Flow {
    let mut f = Flow::bulk(0, 0, 2, "reno");
    f.proto = Some(Proto::Udp);
    f.udp_rate_bps = Some(rate_bps);
    f.udp_payload_bytes = Some(payload);
    f
}

#[test]
fn a_udp_flow_below_capacity_arrives_whole_without_jitter() {
    let cfg = dumbbell(
        20_000_000,
        20,
        0.0,
        QueueSpec::Packets(100),
        10,
        vec![udp_flow(10_000_000, 1460)],
    );
    let o = run(&cfg);
    let u = o.udp[0].expect("a UDP summary");
    assert_eq!(u.lost_packets, 0);
    assert_eq!(u.jitter_ms, 0.0);
    assert_eq!(u.sent_packets, 10_000_000 * 10 / (1460 * 8) + 1);
    // Received ≈ offered (minus the last 20 ms still on the wire).
    let got = o.flows[0].goodput_bps;
    assert!((got - 10e6).abs() / 10e6 < 0.005, "{got}");
}

#[test]
fn a_udp_flow_above_capacity_loses_the_excess_at_the_queue() {
    let cfg = dumbbell(
        10_000_000,
        20,
        0.0,
        QueueSpec::Packets(100),
        10,
        vec![udp_flow(20_000_000, 1460)],
    );
    let o = run(&cfg);
    let u = o.udp[0].unwrap();
    let carried = 10e6 * 1460.0 / 1488.0; // payload share of the wire
    assert!(
        (o.flows[0].goodput_bps - carried).abs() / carried < 0.01,
        "{}",
        o.flows[0].goodput_bps
    );
    assert!(
        (u.loss_fraction - (1.0 - carried / 20e6)).abs() < 0.01,
        "{}",
        u.loss_fraction
    );
}

#[test]
fn a_udp_flow_over_starlink_sees_jitter_and_boundary_loss() {
    let ab = model_dir(residential_uplink(), 15_000_000, QueueSpec::Bytes(281_250));
    let ba = model_dir(
        residential_downlink(),
        100_000_000,
        QueueSpec::Bytes(2_500_000),
    );
    let mut f = udp_flow(4_000_000, 1460);
    f.dst = 1;
    let o = run(&one_link(ab, ba, 60, vec![f]));
    let u = o.udp[0].unwrap();
    assert!(u.jitter_ms > 0.0);
    // 0.2–0.5 % background loss plus the boundary bursts, well under 5 %.
    assert!(
        u.loss_fraction > 0.002 && u.loss_fraction < 0.05,
        "{}",
        u.loss_fraction
    );
}

/// cwnd (packets) of flow `f` per bin.
fn cwnd(o: &SimOutput, f: u32) -> Vec<u32> {
    let s = &o.flow_series;
    (0..s.t_s.len())
        .filter(|&i| s.flow_id[i] == f)
        .map(|i| s.cwnd_pkts[i])
        .collect()
}

#[test]
fn a_spurious_rto_during_an_outage_is_undone_with_or_without_timestamps() {
    // A 1 s outage holds every packet (none is lost) while the RTO (srtt + 200 ms) fires:
    // the timeout is spurious. Linux undoes it when the held originals are acknowledged, by
    // timestamps (Eifel) or, without them, by F-RTO; cwnd is back before the next epoch.
    let spec = StarlinkSpec {
        rtt_quantiles: [ms(40); 5],
        capacity_bps: (10_000_000, 10_000_000),
        loss: (0.0, 0.0),
        disturbance: (ms(1000), ms(1000)),
        outage_probability: 1.0,
        burst_loss: (0.0, 0.0),
        intra: None,
        period: secs(15),
        phase: secs(12),
        start: SimDuration::ZERO,
    };
    for timestamps in [true, false] {
        let mut f = Flow::bulk(0, 0, 1, "cubic");
        f.timestamps = timestamps;
        f.rwnd_bytes = 100_000; // 69 packets, below the 10 000-packet queue: no loss at all
        let ab = model_dir(spec.clone(), 10_000_000, QueueSpec::Packets(10_000));
        let ba = model_dir(spec.clone(), 10_000_000, QueueSpec::Packets(10_000));
        let o = run(&one_link(ab, ba, 20, vec![f]));
        let fl = &o.flows[0];
        assert!(
            fl.rto_count >= 1,
            "timestamps={timestamps}: the outage must cause an RTO"
        );
        assert_eq!(fl.recovery_count, 0, "timestamps={timestamps}");
        let c = cwnd(&o, 0);
        let before = c[115];
        let after = *c[135..150].iter().min().unwrap();
        // Without undo cwnd would restart from 1 with ssthresh 0.7·82 and regain 82 only
        // after CUBIC's K ≈ 4 s.
        assert!(
            after >= before,
            "timestamps={timestamps}: cwnd {before} before, {after} after"
        );
        assert!(
            fl.retransmitted_packets <= 4,
            "timestamps={timestamps}: {}",
            fl.retransmitted_packets
        );
    }
}
