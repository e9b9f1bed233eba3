//! `satcc-linkd --config FILE`: emulate the links a JSON configuration describes, between the
//! veth ends named there, inside the network namespace it names. See README.md for the
//! protocol (stdin `start <ns>` / `stop`, stdout `ready` / `done`) and the output.

use std::io::Write;
use std::process::ExitCode;

use satcc_emu::config::Config;
use satcc_emu::emulator::Emulator;
use satcc_emu::sock::enter_netns;

/// Out of memory: one line and exit 1, never an abort (satcc_core::mem).
#[global_allocator]
static ALLOC: satcc_core::mem::ExitOnOom = satcc_core::mem::ExitOnOom;

const USAGE: &str = "usage: satcc-linkd --config FILE [--parent-pid PID]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("satcc-linkd: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut config = None;
    let mut parent = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--config" => config = args.next(),
            "--parent-pid" => parent = args.next().and_then(|p| p.parse::<i32>().ok()),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => return Err(format!("unknown argument {a:?}\n{USAGE}")),
        }
    }
    // Die with the runner: a crashed or killed runner must not leave us behind.
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong);
        // Timers fire on time, not up to 50 µs late (the default slack).
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
    if let Some(p) = parent {
        // SAFETY: getppid has no preconditions.
        if unsafe { libc::getppid() } != p {
            return Err("the runner exited before the emulator started".into());
        }
    }
    let path = config.ok_or(USAGE)?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let cfg = Config::parse(&text).map_err(|e| format!("{path}: {e}"))?;
    if let Some(cpu) = cfg.cpu {
        pin_to(cpu).map_err(|e| format!("pinning to CPU {cpu}: {e}"))?;
    }
    if cfg.rt_priority > 0 {
        let param = libc::sched_param {
            sched_priority: cfg.rt_priority as i32,
        };
        // SAFETY: param is a valid sched_param; pid 0 is this process.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
            eprintln!(
                "satcc-linkd: note: no SCHED_FIFO ({}); timing will suffer under load",
                std::io::Error::last_os_error()
            );
        }
    }
    // Held until this process exits (the kernel drops the request when the file closes).
    let latency_request = cfg
        .cpu_latency_us
        .and_then(|us| match request_cpu_latency(us) {
            Ok(f) => Some((f, us)),
            Err(e) => {
                eprintln!(
                    "satcc-linkd: note: no CPU wake-up latency request ({CPU_LATENCY_DEV}: {e}); \
                 on a VM, frames may leave milliseconds late"
                );
                None
            }
        });
    if let Some(ns) = &cfg.netns {
        enter_netns(ns).map_err(|e| e.to_string())?;
    }
    let mut emu = Emulator::new(cfg).map_err(|e| e.to_string())?;
    emu.cpu_latency_held_us = latency_request.as_ref().map(|(_, us)| *us);
    println!("ready");
    let _ = std::io::stdout().flush();
    emu.run().map_err(|e| e.to_string())?;
    println!("done");
    let _ = std::io::stdout().flush();
    Ok(())
}

const CPU_LATENCY_DEV: &str = "/dev/cpu_dma_latency";

/// Ask the kernel's PM QoS that no CPU take longer than `us` µs to wake (0: idle CPUs poll
/// instead of halting), for as long as the returned file stays open. The request is the
/// file's, not a setting: it ends when the file is closed, however this process ends.
fn request_cpu_latency(us: u32) -> std::io::Result<std::fs::File> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(CPU_LATENCY_DEV)?;
    f.write_all(&(us as i32).to_ne_bytes())?;
    Ok(f)
}

/// Run this thread (the emulator's only one) on `cpu` alone.
fn pin_to(cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "beyond CPU_SETSIZE",
        ));
    }
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET stays inside it (checked above);
    // pid 0 is this thread and the size is the set's.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
