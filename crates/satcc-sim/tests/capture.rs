//! Packet captures (`capture.rs`): the files a run writes decode as the emulator's tcpdump
//! captures do, say what the simulator's own tables say, and are the same bytes every run.

mod common;

use common::{dumbbell, ms, resolved, Flow};
use satcc_core::scenario::Scenario;
use satcc_sim::capture::{parse_point, Capture, Point};
use satcc_sim::world::World;
use satcc_sim::{QueueSpec, SimOutput};

/// Run `s` capturing at `points`; the result and each file's bytes.
fn run_captured(s: &Scenario, points: &[&str]) -> (SimOutput, Vec<(String, Vec<u8>)>) {
    let r = resolved(s);
    let points: Vec<Point> = points.iter().map(|p| parse_point(&r, p).unwrap()).collect();
    let mut names = Vec::new();
    let mut cap = Capture::new(&r, &points, |name| {
        names.push(name.to_string());
        Ok(Vec::<u8>::new())
    })
    .unwrap();
    let mut w = World::with_tap(&r, &mut cap).unwrap();
    w.reserve_series().unwrap();
    let out = w.run(&mut |_| true);
    let files = cap.finish().unwrap();
    (out, names.into_iter().zip(files).collect())
}

fn analyze(bytes: &[u8]) -> satcc_pcap::Analysis {
    satcc_pcap::analyze_bytes(bytes, &satcc_pcap::Options::default()).expect("a readable capture")
}

/// The one TCP direction of a capture that carries payload.
fn data_direction(an: &satcc_pcap::Analysis) -> &satcc_pcap::FlowReport {
    let data: Vec<_> = an
        .flows
        .iter()
        .filter(|f| f.proto == "tcp" && f.capture.payload_bytes > 0)
        .collect();
    assert_eq!(data.len(), 1, "one data direction");
    data[0]
}

#[test]
fn a_capture_point_names_a_node_or_a_link_direction_and_nothing_else() {
    let s = dumbbell(
        20_000_000,
        10,
        0.0,
        QueueSpec::Bdp(1.0),
        1,
        vec![Flow::bulk(0, 0, 2, "cubic")],
    );
    let r = resolved(&s);
    assert_eq!(parse_point(&r, "d").unwrap(), Point::Node(2));
    assert_eq!(parse_point(&r, "r:d").unwrap(), Point::Direction(2));
    assert_eq!(parse_point(&r, "d:r").unwrap(), Point::Direction(3));
    let e = parse_point(&r, "x").unwrap_err();
    assert!(
        e.contains("expected a node (s, r, d)") && e.contains("\"x\""),
        "{e}"
    );
    let e = parse_point(&r, "s:d").unwrap_err();
    assert!(e.contains("no link") || e.contains("found none"), "{e}");
}

#[test]
fn the_same_run_writes_the_same_bytes_and_other_seeds_do_not() {
    let flows = vec![Flow::bulk(0, 0, 2, "cubic"), Flow::bulk(1, 0, 2, "reno")];
    let mut s = dumbbell(20_000_000, 10, 0.01, QueueSpec::Bdp(1.0), 2, flows);
    let (_, a) = run_captured(&s, &["d", "r:d"]);
    let (_, b) = run_captured(&s, &["d", "r:d"]);
    assert_eq!(a.len(), 2);
    assert!(a.iter().all(|(_, bytes)| bytes.len() > 100_000));
    assert_eq!(a, b, "same scenario and seed, same bytes");
    s.seed += 1;
    let (_, c) = run_captured(&s, &["d", "r:d"]);
    assert_ne!(a[0].1, c[0].1, "another seed draws other losses");
}

#[test]
fn a_capture_leaves_the_run_as_it_was() {
    let flows = vec![Flow::bulk(0, 0, 2, "cubic")];
    let s = dumbbell(20_000_000, 10, 0.01, QueueSpec::Bdp(1.0), 2, flows);
    let plain = common::run(&s);
    let (captured, _) = run_captured(&s, &["s", "d", "r:d"]);
    assert_eq!(
        format!("{:?}", plain.flows),
        format!("{:?}", captured.flows)
    );
    assert_eq!(plain.events, captured.events);
}

#[test]
fn the_analyzer_reads_the_receivers_capture_as_the_simulator_counted_it() {
    let mut f = Flow::bulk(0, 0, 2, "cubic");
    f.start_ns = ms(100).as_nanos();
    let s = dumbbell(20_000_000, 10, 0.005, QueueSpec::Bdp(1.0), 10, vec![f]);
    let (out, files) = run_captured(&s, &["d"]);
    assert_eq!(files[0].0, "capture-2-d.pcapng");
    let an = analyze(&files[0].1);
    let (c, sim) = (data_direction(&an), &out.flows[0]);
    assert_eq!((c.capture.sport, c.capture.dport), (40000, 5201));
    assert_eq!(
        (c.capture.src.as_str(), c.capture.dst.as_str()),
        ("10.64.0.1", "10.64.1.2")
    );
    eprintln!("capture {c:?}\nsim {sim:?}");
}

#[test]
fn a_fragmented_packet_is_written_once_whole_at_its_destination() {
    // 1460 + 52 + 60 bytes of tunnel exceed the 1500-byte MTU: every data segment crosses the
    // links as two IP fragments (the store keeps which fragment a handle is), and the capture
    // writes the packet once, whole, when its first fragment passes (capture.rs deviation 3).
    // No loss, a queue that never drops: the payload written at the receiver is what it got in
    // order, plus at most the one segment whose second fragment is still on its way at the end.
    let mut f = Flow::bulk(0, 0, 2, "reno");
    f.mss = 1460;
    f.encap_bytes = 60;
    let s = dumbbell(10_000_000, 10, 0.0, QueueSpec::Packets(100_000), 2, vec![f]);
    let (out, files) = run_captured(&s, &["d"]);
    assert_eq!(out.fragmented_packets, out.flows[0].sent_packets);
    assert!(out.fragmented_packets > 1000, "{}", out.fragmented_packets);
    let an = analyze(&files[0].1);
    assert_eq!(an.stats.fragments, 0, "written whole");
    let (written, delivered) = (
        data_direction(&an).capture.payload_bytes,
        out.flows[0].delivered_bytes,
    );
    assert!(
        written == delivered || written == delivered + 1460,
        "written {written} B, delivered {delivered} B: once per packet"
    );
}
