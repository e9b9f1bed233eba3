//! `mem::ExitOnOom` as a program's global allocator: under a memory limit, an infallible
//! allocation that fails ends the process with one line and exit 1 (before: Rust's handler
//! printed "memory allocation of N bytes failed" and aborted, exit 134), while `try_reserve`
//! inside `mem::fallible` still gets an error it can report.

use std::process::Command;

use satcc_core::mem::{fallible, ExitOnOom};

#[global_allocator]
static ALLOC: ExitOnOom = ExitOnOom;

const CHILD: &str = "SATCC_OOM_TEST_CHILD";
const LIMIT: u64 = 1 << 30;

fn limit_memory() {
    let r = libc::rlimit {
        rlim_cur: LIMIT,
        rlim_max: LIMIT,
    };
    // SAFETY: a valid rlimit struct.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &r) }, 0);
}

/// Run this test binary again, running only `name` with the child variable set.
fn child(name: &str) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap()
}

#[test]
fn an_allocation_that_fails_is_one_line_and_exit_1() {
    if std::env::var_os(CHILD).is_some() {
        limit_memory();
        let v: Vec<u8> = Vec::with_capacity(4 * LIMIT as usize);
        std::hint::black_box(&v);
        unreachable!("the allocation succeeded under the limit");
    }
    let out = child("an_allocation_that_fails_is_one_line_and_exit_1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("satcc:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("satcc: error: out of memory (a request for 4294967296 bytes"));
    assert!(!err.contains("memory allocation of"), "{err}");
}

#[test]
fn try_reserve_inside_fallible_still_returns_an_error() {
    if std::env::var_os(CHILD).is_some() {
        limit_memory();
        let mut v: Vec<u8> = Vec::new();
        assert!(fallible(|| v.try_reserve_exact(4 * LIMIT as usize)).is_err());
        // and the mark is gone afterwards: a small allocation works, the process goes on
        v.try_reserve_exact(16).unwrap();
        println!("still running");
        return;
    }
    let out = child("try_reserve_inside_fallible_still_returns_an_error");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("still running"));
}
