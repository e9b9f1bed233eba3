//! Scenario-level checks of the congestion controls (issue 3, "Tests that must hold").

mod common;

use common::*;
use satcc_cc::params::ParamValue;
use satcc_core::SimDuration;
use satcc_sim::{DirConfig, FlowConfig, LinkConfig, QueueConfig, SimConfig, SimOutput};

fn goodput_between(o: &SimOutput, flow: u32, from_s: f64, to_s: f64, bin_s: f64) -> f64 {
    let s = &o.flow_series;
    let (mut bytes, mut bins) = (0u64, 0u64);
    for i in 0..s.t_s.len() {
        if s.flow_id[i] == flow && s.t_s[i] >= from_s - 1e-9 && s.t_s[i] < to_s - 1e-9 {
            bytes += s.delivered_bytes[i];
            bins += 1;
        }
    }
    bytes as f64 * 8.0 / (bins as f64 * bin_s)
}

/// Two senders with their own access delays share one bottleneck towards the receiver.
fn two_rtt_dumbbell(rate_bps: u64, rtt_ms: [f64; 2], queue: QueueConfig, secs: u64, flows: Vec<FlowConfig>) -> SimConfig {
    let access = |one_way: SimDuration| DirConfig::new(10_000_000_000, one_way, 0.0, QueueConfig::Packets(100_000));
    let half = |r: f64| SimDuration::from_nanos((r * 1e6 / 2.0).round() as u64);
    let bottleneck = DirConfig::new(rate_bps, SimDuration::ZERO, 0.0, queue);
    SimConfig {
        name: "ccas".into(),
        seed: 1,
        duration: SimDuration::from_secs(secs),
        bin: ms(100),
        nodes: vec!["s1".into(), "s2".into(), "r".into(), "d".into()],
        links: vec![
            LinkConfig { a: 0, b: 2, ab: access(half(rtt_ms[0])), ba: access(half(rtt_ms[0])) },
            LinkConfig { a: 1, b: 2, ab: access(half(rtt_ms[1])), ba: access(half(rtt_ms[1])) },
            LinkConfig { a: 2, b: 3, ab: bottleneck.clone(), ba: bottleneck },
        ],
        flows,
    }
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}

#[test]
#[ignore]
fn explore_fairness() {
    let modes: Vec<(&str, Vec<(&str, ParamValue)>)> = vec![
        ("stock", vec![]),
        ("cbrt_rtt", vec![("k_mode", ParamValue::Str("cbrt_rtt".into()))]),
    ];
    let rate: u64 = std::env::var("RATE").map(|v| v.parse().unwrap()).unwrap_or(100_000_000);
    let secs: u64 = std::env::var("SECS").map(|v| v.parse().unwrap()).unwrap_or(60);
    for q in std::env::var("QS").map(|v| v.split(',').map(|x| x.parse().unwrap()).collect::<Vec<u64>>()).unwrap_or(vec![50, 100, 1000]) {
        for (name, ps) in &modes {
            let mk = |id: u32, src: usize| {
                let mut f = FlowConfig::bulk(id, src, 3, "cubic");
                for (k, v) in ps {
                    f.params.insert(k, v.clone());
                }
                f
            };
            let cfg = two_rtt_dumbbell(rate, [2.0, 128.0], QueueConfig::Packets(q), secs, vec![mk(0, 0), mk(1, 1)]);
            let t = std::time::Instant::now();
            let o = run(&cfg);
            let g: Vec<f64> = (0..2).map(|f| goodput_between(&o, f, 10.0, secs as f64, 0.1) / 1e6).collect();
            eprintln!("q={q} {name}: 2ms {:.1} 128ms {:.1} Mbit/s jain {:.3} ({:.1}s wall, {} events)", g[0], g[1], jain(&g), t.elapsed().as_secs_f64(), o.events);
            for f in &o.flows { eprintln!("   {:?}", f); }
            if std::env::var("SERIES").is_ok() {
                let s = &o.flow_series;
                for i in 0..s.t_s.len() { if s.flow_id[i] == 1 && (i / 2) % 10 == 0 { eprintln!("   t={:.1} cwnd={} ssth={} srtt={:.1} del={} rtx={}", s.t_s[i], s.cwnd_pkts[i], s.ssthresh_pkts[i], s.srtt_ms[i], s.delivered_bytes[i], s.retransmits[i]); } }
            }
        }
    }
}
