//! Simulator benchmark: one dumbbell run, timed, printed as one JSON line.
//!
//! The same command-line flags drive `bench/sim/ns3_dumbbell.cc`, so `bench/sim/run.sh`
//! hands both tools the identical case. Topology (both tools):
//!
//! ```text
//!   s0 ─access(10 Gbit/s, RTT0/2 − B)─┐
//!   s1 ─access(10 Gbit/s, RTT1/2 − B)─┼─ r ─bottleneck(rate, B one way, queue, loss →)─ d
//!   …                                  ┘
//! ```
//! One sender node per RTT group (`--group RTT_MS:COUNT`, repeatable), one router, one
//! receiver; B (`--bneck-delay-us`) is the bottleneck's one-way delay, the rest of each
//! group's RTT sits on its access link, so each group's base RTT is exactly RTT_MS.
//! Random loss (`--loss`) applies to the bottleneck's forward direction only; the
//! bottleneck queue (`--queue-bytes` or `--queue-pkts`) is drop-tail in both directions.
//! Flows are bulk, all start at 0 s, and use the scenario's defaults (`Flow::bulk`: SACK,
//! timestamps, window scaling, IW 10, delayed ACK, min RTO 200 ms, pacing only if the
//! algorithm asks) but for the receive buffer: 32 MiB ([`RWND_BYTES`]), the case measured
//! since the benchmark began. The scenario is built in code and resolved like any other.
//!
//! `--direct` (one group): no access link and no router, the sender wired to the receiver by
//! the bottleneck alone, its one-way delay half the RTT — htsim's shape for `bench/sim/htsim.sh`.
//! `--chain N` (one group): the same path cut into N links in series, each with 1/N of the
//! delay: the first is the bottleneck (rate, queue, loss), the others access-class links
//! (10 Gbit/s, never full) — the link count's cost for `bench/sim/scale.sh`; `--chain 1` is
//! `--direct`.
//!
//! Output fields: `topology` (`dumbbell` or `direct`), `wall_s` and `cpu_s` (the event loop only, not set-up), `events` (heap pops),
//! `peak_pending_events` (most events in the heap at once),
//! `packets` (packets forwarded onto a link, i.e. hops), `data_segments` (data segments
//! the senders transmitted, retransmissions included), `events_per_s`, `packets_per_s`,
//! `segments_per_s`, and per flow `goodput_bps`.
//!
//! Run: `cargo run --release -p satcc-sim --example bench_sim -- --cca cubic
//! --rate-bps 100000000 --group 50:1 --queue-bytes 625000 --secs 60`

use std::process::exit;
use std::time::Instant;

use satcc_core::dirspec::Direction;
use satcc_core::scenario::{Flow, HostNoiseSpec, Link, Scenario};
use satcc_sim::QueueSpec;
use serde_json::{Map, Value};

/// Access links are fast enough never to be the bottleneck (as in the ns-3 scenario).
const ACCESS_RATE_BPS: u64 = 10_000_000_000;
/// Access queues: large enough never to drop.
const ACCESS_QUEUE_PKTS: u64 = 100_000;
/// Default one-way delay of the bottleneck, µs.
const DEFAULT_BNECK_DELAY_US: u64 = 500;
/// Every flow's receive buffer ceiling (`tcp_rmem[2]`): Linux 6.16+'s 32 MiB, not the
/// scenario's 6 MiB default, so that the window does not limit the benchmark's paths.
const RWND_BYTES: u64 = 32 << 20;

struct Args {
    cca: String,
    rate_bps: u64,
    groups: Vec<(f64, u32)>,
    queue: QueueSpec,
    loss: f64,
    mss: u32,
    secs: f64,
    seed: u64,
    bneck_delay_us: u64,
    /// `--cc-param KEY=VALUE` (satcc only, for diagnosis): the algorithm's `[flow.cc]` table.
    params: Map<String, Value>,
    /// `--direct`: one group, its sender wired straight to the receiver by the bottleneck
    /// (no access link, no router), whose one-way delay is then half the RTT: htsim's shape
    /// (bench/sim/htsim_dumbbell.cc: one queue and one pipe forward, one pipe back).
    direct: bool,
    /// `--chain N`: the direct path as N links in series.
    chain: u32,
    /// `--host-noise`: every host answers after the measured kernel turnaround (a scenario's
    /// default `host_noise = "kernel"`; the benchmark's case has none, as ns-3 and htsim).
    host_noise: bool,
    /// `--no-tso-defer`: the sender without `tcp_tso_should_defer` (`tso_defer = false`, the
    /// default before 2026-11-30), to measure what the deferral costs.
    no_tso_defer: bool,
}

fn usage(msg: &str) -> ! {
    eprintln!("bench_sim: {msg}");
    eprintln!(
        "usage: bench_sim --cca NAME --rate-bps N --group RTT_MS:COUNT [--group ...] \
         (--queue-bytes N | --queue-pkts N) [--loss P] [--mss BYTES] [--secs S] [--seed N] \
         [--bneck-delay-us US] [--direct | --chain N] [--host-noise] [--no-tso-defer] \
         [--cc-param KEY=VALUE ...] \
         | --list-ccas"
    );
    exit(2)
}

fn parse<T: std::str::FromStr>(flag: &str, v: Option<String>) -> T {
    let v = v.unwrap_or_else(|| usage(&format!("{flag} needs a value")));
    v.parse()
        .unwrap_or_else(|_| usage(&format!("{flag}: cannot parse {v:?}")))
}

fn parse_args() -> Args {
    let mut a = Args {
        cca: "cubic".into(),
        rate_bps: 0,
        groups: Vec::new(),
        queue: QueueSpec::Packets(1000),
        loss: 0.0,
        mss: 1448,
        secs: 60.0,
        seed: 1,
        bneck_delay_us: DEFAULT_BNECK_DELAY_US,
        params: Map::new(),
        direct: false,
        chain: 1,
        host_noise: false,
        no_tso_defer: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--cca" => a.cca = parse(&flag, it.next()),
            "--rate-bps" => a.rate_bps = parse::<f64>(&flag, it.next()) as u64,
            "--group" => {
                let v: String = parse(&flag, it.next());
                let (rtt, n) = v
                    .split_once(':')
                    .unwrap_or_else(|| usage("--group wants RTT_MS:COUNT"));
                a.groups
                    .push((parse(&flag, Some(rtt.into())), parse(&flag, Some(n.into()))));
            }
            "--queue-bytes" => a.queue = QueueSpec::Bytes(parse::<f64>(&flag, it.next()) as u64),
            "--queue-pkts" => a.queue = QueueSpec::Packets(parse(&flag, it.next())),
            "--loss" => a.loss = parse(&flag, it.next()),
            "--mss" => a.mss = parse(&flag, it.next()),
            "--secs" => a.secs = parse(&flag, it.next()),
            "--seed" => a.seed = parse(&flag, it.next()),
            "--bneck-delay-us" => a.bneck_delay_us = parse(&flag, it.next()),
            "--cc-param" => {
                let v: String = parse(&flag, it.next());
                let (k, x) = v
                    .split_once('=')
                    .unwrap_or_else(|| usage("--cc-param wants KEY=VALUE"));
                let value = match x {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => match x.parse::<f64>() {
                        Ok(n) => Value::from(n),
                        Err(_) => Value::from(x),
                    },
                };
                a.params.insert(k.to_string(), value);
            }
            "--direct" => a.direct = true,
            "--host-noise" => a.host_noise = true,
            "--no-tso-defer" => a.no_tso_defer = true,
            "--chain" => {
                a.chain = parse(&flag, it.next());
                a.direct = true;
            }
            "--list-ccas" => {
                // The registry's names, one a line (bench/sim/run.sh picks CUBIC if present).
                for n in satcc_cc::names() {
                    println!("{n}");
                }
                exit(0)
            }
            "-h" | "--help" => usage("help"),
            other => usage(&format!("unknown flag {other:?}")),
        }
    }
    if a.rate_bps == 0 || a.groups.is_empty() {
        usage("--rate-bps and at least one --group are required");
    }
    if a.direct && a.groups.len() != 1 {
        usage("--direct and --chain take exactly one --group (its RTT sets the link's delay)");
    }
    if a.chain == 0 {
        usage("--chain wants at least 1 link");
    }
    a
}

/// One bulk flow of the benchmark's algorithm and settings.
fn flow(a: &Args, id: u32, src: usize, dst: usize) -> Flow {
    let mut f = Flow::bulk(id, src, dst, &a.cca);
    f.mss = a.mss;
    f.rwnd_bytes = RWND_BYTES;
    f.cc = Some(a.params.clone());
    f.tso_defer = !a.no_tso_defer;
    f
}

fn scenario(a: &Args, nodes: &[&str], links: Vec<Link>, flows: Vec<Flow>) -> Scenario {
    let mut s = Scenario::new("bench_sim", nodes, links, flows, 0);
    s.seed = a.seed;
    s.duration_ns = (a.secs * 1e9).round() as u64;
    if a.host_noise {
        s.host_noise_quantiles_ns = Some(HostNoiseSpec::kernel());
    }
    s
}

/// The dumbbell; nodes are s0..s{G-1}, r, d (`--direct`: s0, d).
fn build(a: &Args) -> Scenario {
    if a.direct {
        return build_direct(a);
    }
    let g = a.groups.len();
    let (r, d) = (g, g + 1);
    let bneck_delay_ns = a.bneck_delay_us * 1000;
    let mut names: Vec<String> = (0..g).map(|i| format!("s{i}")).collect();
    names.push("r".into());
    names.push("d".into());
    let mut links = Vec::new();
    let mut flows = Vec::new();
    for (i, &(rtt_ms, count)) in a.groups.iter().enumerate() {
        let half_rtt_us = (rtt_ms * 1000.0 / 2.0).round() as u64;
        if half_rtt_us < a.bneck_delay_us {
            usage(&format!(
                "RTT {rtt_ms} ms is below twice the bottleneck delay"
            ));
        }
        let access = Direction::new(
            ACCESS_RATE_BPS,
            (half_rtt_us - a.bneck_delay_us) * 1000,
            0.0,
            QueueSpec::Packets(ACCESS_QUEUE_PKTS),
        );
        links.push(Link::symmetric(i, r, access));
        for _ in 0..count {
            flows.push(flow(a, flows.len() as u32, i, d));
        }
    }
    let fwd = Direction::new(a.rate_bps, bneck_delay_ns, a.loss, a.queue);
    let rev = Direction::new(a.rate_bps, bneck_delay_ns, 0.0, a.queue);
    links.push(Link {
        a: r,
        b: d,
        ab: fwd,
        ba: rev,
    });
    let nodes: Vec<&str> = names.iter().map(String::as_str).collect();
    scenario(a, &nodes, links, flows)
}

/// `--direct`: s0 ─bottleneck(rate, RTT/2 each way, queue, loss →)─ d; `--chain N`: s0 ─ h1 ─
/// … ─ h{N-1} ─ d, each link with 1/N of the delay, the first the bottleneck, the others
/// access links.
fn build_direct(a: &Args) -> Scenario {
    let (rtt_ms, count) = a.groups[0];
    let half_rtt_ns = (rtt_ms * 1000.0 / 2.0).round() as u64 * 1000;
    let n = a.chain as usize;
    let delay_ns = half_rtt_ns / n as u64;
    let mut names = vec!["s0".to_string()];
    names.extend((1..n).map(|i| format!("h{i}")));
    names.push("d".into());
    let flows = (0..count).map(|i| flow(a, i, 0, n)).collect();
    let access = Direction::new(
        ACCESS_RATE_BPS,
        delay_ns,
        0.0,
        QueueSpec::Packets(ACCESS_QUEUE_PKTS),
    );
    let mut links = vec![Link {
        a: 0,
        b: 1,
        ab: Direction::new(a.rate_bps, delay_ns, a.loss, a.queue),
        ba: Direction::new(a.rate_bps, delay_ns, 0.0, a.queue),
    }];
    links.extend((1..n).map(|i| Link::symmetric(i, i + 1, access.clone())));
    let nodes: Vec<&str> = names.iter().map(String::as_str).collect();
    scenario(a, &nodes, links, flows)
}

/// CPU time this thread has run, seconds (Linux `/proc/thread-self/schedstat`, first field,
/// ns): unlike wall time, not inflated by other load on the machine. `None` off Linux.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn main() {
    let a = parse_args();
    let resolved = build(&a).resolve().unwrap_or_else(|e| {
        eprintln!("bench_sim: invalid scenario: {e}");
        exit(1)
    });
    let t0 = Instant::now();
    let cpu0 = cpu_seconds();
    let out = satcc_sim::run(&resolved, &mut |_| true).unwrap_or_else(|e| {
        eprintln!("bench_sim: invalid configuration: {e}");
        exit(1)
    });
    let wall = t0.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) => format!("{:.4}", b - a),
        _ => "null".into(),
    };
    let segs: u64 = out.flows.iter().map(|f| f.sent_packets).sum();
    let retrans: u64 = out.flows.iter().map(|f| f.retransmitted_packets).sum();
    let goodputs: Vec<String> = out
        .flows
        .iter()
        .map(|f| format!("{:.0}", f.goodput_bps))
        .collect();
    let total: f64 = out.flows.iter().map(|f| f.goodput_bps).sum();
    let groups: Vec<String> = a.groups.iter().map(|(r, n)| format!("[{r},{n}]")).collect();
    println!(
        "{{\"tool\":\"satcc\",\"topology\":\"{}\",\"cca\":\"{}\",\"rate_bps\":{},\"groups\":[{}],\"secs\":{},\"wall_s\":{:.4},\"cpu_s\":{},\
         \"events\":{},\"peak_pending_events\":{},\"packets\":{},\"data_segments\":{},\"retransmissions\":{},\"events_per_s\":{:.0},\
         \"packets_per_s\":{:.0},\"segments_per_s\":{:.0},\"goodput_total_bps\":{:.0},\"goodput_bps\":[{}]}}",
        match (a.direct, a.chain) {
            (false, _) => "dumbbell".to_string(),
            (true, 1) => "direct".to_string(),
            (true, n) => format!("chain{n}"),
        },
        a.cca,
        a.rate_bps,
        groups.join(","),
        a.secs,
        wall,
        cpu,
        out.events,
        out.peak_pending_events,
        out.packets,
        segs,
        retrans,
        out.events as f64 / wall,
        out.packets as f64 / wall,
        segs as f64 / wall,
        total,
        goodputs.join(",")
    );
}
