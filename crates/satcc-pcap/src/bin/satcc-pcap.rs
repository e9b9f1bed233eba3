//! `satcc-pcap FILE [--bin-ms N] [--packets]` — the analyzer without Python, for benchmarks
//! and quick looks. Prints one line per flow direction (tab-separated) and the elapsed time
//! on stderr. `--packets` also builds the per-packet table (as the Python API does) and prints
//! its analysis-flag totals, so the benchmark can time the same work tshark does.
//!
//! Out of memory (a capture with millions of connections, `--packets` on a long one, under
//! `ulimit -v` or a cgroup) is one line and exit 1, as in the Python extension and satcc-linkd:
//! the global allocator is `satcc_core::mem::ExitOnOom`, not Rust's abort (exit 134).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use satcc_core::mem::ExitOnOom;
use satcc_pcap::tshark::aflag::NAMES;
use satcc_pcap::{analyze_path, Options};

#[global_allocator]
static ALLOC: ExitOnOom = ExitOnOom;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut path: Option<PathBuf> = None;
    let mut opts = Options::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bin-ms" => {
                let ms: f64 = args.next().and_then(|v| v.parse().ok()).unwrap_or(100.0);
                opts.bin_ns = (ms * 1e6) as i64;
            }
            "--packets" => opts.keep_packets = true,
            "-h" | "--help" => {
                eprintln!("usage: satcc-pcap FILE [--bin-ms N] [--packets]");
                return ExitCode::SUCCESS;
            }
            _ => path = Some(PathBuf::from(a)),
        }
    }
    let Some(path) = path else {
        eprintln!("usage: satcc-pcap FILE [--bin-ms N] [--packets]");
        return ExitCode::from(2);
    };
    let t0 = Instant::now();
    let an = match analyze_path(&path, &opts, |_| {}) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{}: {e}", path.display());
            return ExitCode::from(1);
        }
    };
    let dt = t0.elapsed().as_secs_f64();
    for w in &an.warnings {
        eprintln!("warning: {w}");
    }
    println!("id\tproto\tsrc\tsport\tdst\tdport\tpackets\tpayload_bytes\tdata_packets\tretransmitted\t{}", NAMES[..6].join("\t"));
    for f in &an.flows {
        let counts: Vec<String> = f.flag_counts[..6].iter().map(|c| c.to_string()).collect();
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            f.id,
            f.proto,
            f.capture.src,
            f.capture.sport,
            f.capture.dst,
            f.capture.dport,
            f.capture.packets,
            f.capture.payload_bytes,
            f.columns.sent_packets,
            f.columns.retransmitted_packets,
            counts.join("\t")
        );
    }
    if let Some(p) = &an.packets {
        let flagged = p.analysis.iter().filter(|&&a| a != 0).count();
        println!("# packet rows {} flagged {}", p.frame.len(), flagged);
    }
    eprintln!(
        "frames {} in {:.3} s = {:.0} packets/s ({:.1} MB/s)",
        an.stats.frames,
        dt,
        an.stats.frames as f64 / dt,
        an.bytes_read as f64 / dt / 1e6
    );
    if an.stats.frames == 0 {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
