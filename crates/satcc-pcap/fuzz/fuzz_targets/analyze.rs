//! Any byte string must be analysed without a panic: a capture error, or a result with
//! warnings. Keeps every optional table on so their code paths are exercised too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use satcc_pcap::{analyze_bytes, Options};

fuzz_target!(|data: &[u8]| {
    let opts = Options {
        bin_ns: 1_000_000,
        keep_packets: true,
        keep_rtt_samples: true,
    };
    if let Ok(a) = analyze_bytes(data, &opts) {
        let p = a.packets.expect("packet table requested");
        assert_eq!(
            p.frame.len(),
            (a.stats.tcp_packets + a.stats.udp_packets) as usize
        );
    }
});
