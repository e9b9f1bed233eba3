//! Run one resolved scenario (a RESOLVED JSON document, what `_native.run_sim` takes: dump one
//! from Python with `json.dump(satcc.scenario.resolved(s, seed).config, f)`) through the
//! simulator as the Python bindings do (`World::new`, `reserve_series`, `run`), and print its
//! stats. For profiling a study's own runs under cachegrind or perf without the interpreter.
//!
//! Run: `cargo run --release -p satcc-sim --example run_resolved -- FILE.json`

use std::process::exit;

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: run_resolved FILE.json");
        exit(2)
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("run_resolved: {path}: {e}");
        exit(1)
    });
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        eprintln!("run_resolved: {path}: {e}");
        exit(1)
    });
    let r = satcc_core::scenario::Resolved::from_json(&v).unwrap_or_else(|e| {
        eprintln!("run_resolved: {path}: {e}");
        exit(1)
    });
    let mut world = satcc_sim::world::World::new(&r).unwrap_or_else(|e| {
        eprintln!("run_resolved: {e}");
        exit(1)
    });
    world.reserve_series().unwrap_or_else(|e| {
        eprintln!("run_resolved: {e}");
        exit(1)
    });
    let out = world.run(&mut |_| true);
    let sent: u64 = out.flows.iter().map(|f| f.sent_packets).sum();
    let goodput: Vec<String> = out
        .flows
        .iter()
        .map(|f| format!("{:.0}", f.goodput_bps))
        .collect();
    println!(
        "{{\"events\":{},\"packets\":{},\"data_segments\":{},\"goodput_bps\":[{}]}}",
        out.events,
        out.packets,
        sent,
        goodput.join(",")
    );
}
