//! The stand-alone `satcc-pcap` out of memory: one line and exit 1 (its global allocator is
//! `satcc_core::mem::ExitOnOom`), not Rust's "memory allocation of N bytes failed" and an
//! abort (SIGABRT, exit 134), which it gave before. The capture: 100,000 connections of one
//! data segment each (~290 MB of tables with `--packets`), read under a 128 MiB address space.

use std::os::unix::process::CommandExt;
use std::process::Command;

use etherparse::PacketBuilder;

mod common;
use common::{pcap_header, push_record};

const CONNECTIONS: u32 = 100_000;
const LIMIT: u64 = 128 << 20;

/// A pcap (raw IP link type) of `CONNECTIONS` connections, one 10-byte segment each.
fn capture() -> Vec<u8> {
    let mut v = pcap_header(101);
    for i in 0..CONNECTIONS {
        let mut ip = Vec::new();
        PacketBuilder::ipv4(
            [10, (i >> 16) as u8, (i >> 8) as u8, i as u8],
            [198, 51, 100, 2],
            64,
        )
        .tcp(1024 + (i % 60_000) as u16, 5201, 1, 65535)
        .ack(1)
        .write(&mut ip, &[0u8; 10])
        .unwrap();
        push_record(
            &mut v,
            1_700_000_000 + i / 10_000,
            (i % 10_000) * 100,
            &ip,
            ip.len(),
        );
    }
    v
}

#[test]
fn out_of_memory_is_one_line_and_exit_1_not_an_abort() {
    let dir = std::env::temp_dir().join(format!("satcc-pcap-oom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("many-connections.pcap");
    std::fs::write(&path, capture()).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_satcc-pcap"));
    cmd.arg(&path).arg("--packets").env("RUST_BACKTRACE", "1");
    // SAFETY: setrlimit(2) is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit {
                rlim_cur: LIMIT,
                rlim_max: LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &r) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let out = cmd.output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{:?}: {err}", out.status);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("satcc: error: out of memory (a request for "),
        "{err}"
    );
    assert!(!err.contains("memory allocation of"), "{err}");
}
