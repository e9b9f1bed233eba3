//! The real-time loop of `satcc-linkd`: one thread, one epoll set.
//!
//! ```text
//!   veth end a ──rx ring──► Direction ab ──sendmmsg──► veth end b
//!   veth end a ◄─sendmmsg── Direction ba ◄──rx ring─── veth end b      (per link)
//!            ▲                                   │
//!            └── epoll: sockets, timerfd, stdin (start/stop), signalfd (TERM/INT/HUP)
//! ```
//! Each pass drains every socket without blocking (arrival time = the kernel's receive stamp),
//! sends every frame whose instant has come, closes finished bins, then waits for the next
//! deadline: on the timerfd when it is more than `spin_ns` away (armed `spin_ns` early), by
//! spinning through the last `spin_ns`, so a frame leaves within a few µs of its instant while
//! the CPU sleeps between packets (2 cores shared with iperf3 and the kernel's TCP).
//!
//! Control on stdin, one line each: `start <CLOCK_MONOTONIC ns>` sets the run's t = 0 (model
//! time and bins count from it), `stop` (or EOF) ends the run. On stdout: `ready` once the
//! sockets are open, `done` at the end. The link series goes to `series_path` as JSON lines.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::RawFd;

use satcc_core::record::LinkSeriesRow;
use satcc_core::{SimDuration, SimTime};

use crate::clock::{realtime_offset_ns, Clock, MonotonicClock};
use crate::config::{dir_index, Config};
use crate::direction::{Direction, Frame};
use crate::firsts::Firsts;
use crate::hist::Hist;
use crate::outbox::Outbox;
use crate::sock::{rx_ring_slots, PacketSocket, RxMeta, FRAME_BUF};

/// Frames taken from a socket's ring (or per recvmmsg call) at a time.
const RX_BATCH: usize = 64;
/// epoll tokens beyond the sockets' indices.
const TOKEN_TIMER: u64 = 1 << 40;
const TOKEN_STDIN: u64 = (1 << 40) + 1;
const TOKEN_SIGNAL: u64 = (1 << 40) + 2;
/// Frames kept in the buffer pool between uses.
const POOL_KEEP: usize = 65_536;
/// Spinning is budgeted: at most `SPIN_BUDGET_PERCENT` of each `SPIN_WINDOW_NS` window. At
/// high packet rates the next deadline is always within the spin window, and an unbudgeted
/// SCHED_FIFO spinner hits the kernel's RT throttling (95 % of each second, then a ~50 ms stall)
/// and starves iperf3 and the receiving stack on a 2-core machine. Past the budget the loop
/// sleeps on the timerfd armed at the deadline itself.
const SPIN_WINDOW_NS: u64 = 10_000_000;
const SPIN_BUDGET_PERCENT: u64 = 40;

/// Per-direction figures the series does not carry, and its frames waiting for the kernel.
#[derive(Default)]
struct DirExtra {
    /// Frames the input socket's kernel buffer dropped (emulator-induced loss).
    socket_drops: u64,
    oversize: u64,
    /// How late frames left compared with their instant.
    lateness: Hist,
    out: Outbox,
}

pub struct Emulator {
    cfg: Config,
    clock: MonotonicClock,
    /// Port 2i is link i's a end, 2i+1 its b end; direction d reads port d, writes port d ^ 1.
    ports: Vec<PacketSocket>,
    dirs: Vec<Direction>,
    extra: Vec<DirExtra>,
    /// Delay between the kernel's receive stamp and our reading the frame.
    rx_latency: Hist,
    /// Each TCP connection's first SYN and first data segment on any link.
    firsts: Firsts,
    pool: Vec<Vec<u8>>,
    /// The CPU wake-up latency (µs) the process holds a PM QoS request for (`main`), if any:
    /// reported in the stats line.
    pub cpu_latency_held_us: Option<u32>,
    /// Link-clock instant of the run's t = 0, once `start` came.
    origin: Option<SimTime>,
    next_bin: u64,
    series: Option<BufWriter<File>>,
    rt_offset: i128,
    epoll: RawFd,
    timer: RawFd,
    signal: RawFd,
    stdin_buf: Vec<u8>,
    stop: bool,
    passes: u64,
    sleeps: u64,
    /// Spin accounting: the window's start, time spun in it, and the previous pass's instant
    /// when that pass chose to spin.
    spin_window_start: SimTime,
    spun_ns: u64,
    spinning_since: Option<SimTime>,
    spin_total_ns: u64,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn epoll_add(ep: RawFd, fd: RawFd, token: u64) -> io::Result<()> {
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: token,
    };
    // SAFETY: valid epoll and target descriptors, ev lives across the call.
    cvt(unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) }).map(|_| ())
}

impl Emulator {
    /// Open every port (in the current namespace) and build the directions.
    pub fn new(cfg: Config) -> io::Result<Emulator> {
        let mut ports = Vec::new();
        let mut dirs = Vec::new();
        let slots = if cfg.rx_ring {
            rx_ring_slots(2 * cfg.links.len())
        } else {
            0
        };
        for l in &cfg.links {
            ports.push(PacketSocket::open(&l.a_if, cfg.qdisc_bypass, slots)?);
            ports.push(PacketSocket::open(&l.b_if, cfg.qdisc_bypass, slots)?);
            for ba in [false, true] {
                let (queue, model) = cfg
                    .direction(l, ba)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.0))?;
                dirs.push(Direction::new(
                    model,
                    queue,
                    satcc_core::direction::stream(cfg.seed(), dir_index(l.id, ba)),
                ));
            }
        }
        let series = match &cfg.series_path {
            Some(p) => Some(BufWriter::new(File::create(p)?)),
            None => None,
        };
        // SAFETY: plain syscalls creating descriptors we own.
        let epoll = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        let timer = cvt(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        let signal = signal_fd()?;
        for (i, p) in ports.iter().enumerate() {
            epoll_add(epoll, p.fd(), i as u64)?;
        }
        epoll_add(epoll, timer, TOKEN_TIMER)?;
        epoll_add(epoll, signal, TOKEN_SIGNAL)?;
        set_nonblocking(libc::STDIN_FILENO)?;
        epoll_add(epoll, libc::STDIN_FILENO, TOKEN_STDIN)?;
        let extra = (0..dirs.len()).map(|_| DirExtra::default()).collect();
        Ok(Emulator {
            cfg,
            clock: MonotonicClock::starting_now(),
            ports,
            dirs,
            extra,
            rx_latency: Hist::default(),
            firsts: Firsts::default(),
            pool: Vec::new(),
            origin: None,
            next_bin: 0,
            series,
            rt_offset: realtime_offset_ns(),
            epoll,
            timer,
            signal,
            stdin_buf: Vec::new(),
            stop: false,
            passes: 0,
            sleeps: 0,
            spin_window_start: SimTime::ZERO,
            spun_ns: 0,
            spinning_since: None,
            spin_total_ns: 0,
            cpu_latency_held_us: None,
        })
    }

    fn buffer(&mut self) -> Vec<u8> {
        self.pool.pop().unwrap_or_else(|| vec![0u8; FRAME_BUF])
    }

    /// Return a buffer to `pool` (a field borrowed apart from the directions).
    fn recycle(pool: &mut Vec<Vec<u8>>, b: Vec<u8>) {
        if pool.len() < POOL_KEEP {
            pool.push(b);
        }
    }

    /// Run until `stop`, EOF on stdin or a signal.
    pub fn run(&mut self) -> io::Result<()> {
        let mut bufs: Vec<Vec<u8>> = (0..RX_BATCH).map(|_| vec![0u8; FRAME_BUF]).collect();
        let mut meta = vec![RxMeta::default(); RX_BATCH];
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 16];
        let mut wait_ms: libc::c_int = 0;
        loop {
            self.passes += 1;
            // SAFETY: events is a live buffer of the stated length.
            let n = unsafe {
                libc::epoll_wait(
                    self.epoll,
                    events.as_mut_ptr(),
                    events.len() as i32,
                    wait_ms,
                )
            };
            if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return Err(io::Error::last_os_error());
            }
            for ev in events.iter().take(n.max(0) as usize) {
                match ev.u64 {
                    TOKEN_TIMER => drain_fd(self.timer),
                    TOKEN_STDIN => self.read_control()?,
                    TOKEN_SIGNAL => {
                        drain_fd(self.signal);
                        self.stop = true;
                    }
                    _ => {}
                }
            }
            for p in 0..self.ports.len() {
                self.receive(p, &mut bufs, &mut meta)?;
            }
            let now = self.clock.now();
            for d in 0..self.dirs.len() {
                self.deliver(d, now)?;
            }
            self.close_bins(now)?;
            if self.stop {
                break;
            }
            wait_ms = self.arm_wait(now)?;
        }
        self.finish()
    }

    /// Drain port `p` into direction `p`.
    fn receive(&mut self, p: usize, bufs: &mut [Vec<u8>], meta: &mut [RxMeta]) -> io::Result<()> {
        loop {
            let got = self.ports[p].recv_batch(bufs, meta)?;
            if got == 0 {
                return Ok(());
            }
            let now = self.clock.now();
            let now_abs = self.clock.to_abs(now);
            for i in 0..got {
                let m = meta[i];
                if m.len > FRAME_BUF || m.captured < m.len {
                    self.extra[p].oversize += 1;
                    continue;
                }
                let t = match m.stamp_realtime_ns {
                    Some(rt) => {
                        let abs = (rt as i128 - self.rt_offset).clamp(0, now_abs as i128) as u64;
                        self.rx_latency.record(now_abs - abs);
                        self.clock.at_abs(abs)
                    }
                    None => now,
                };
                self.firsts.observe(&bufs[i][..m.len], t);
                let fresh = self.buffer();
                let buf = std::mem::replace(&mut bufs[i], fresh);
                let pool = &mut self.pool;
                self.dirs[p].offer(t, Frame { buf, len: m.len }, |f| Self::recycle(pool, f.buf));
            }
            if got < bufs.len() {
                return Ok(());
            }
        }
    }

    /// Send what direction `d` has due by `now` out of port `d ^ 1`, after what the kernel
    /// refused last time (`Outbox`).
    fn deliver(&mut self, d: usize, now: SimTime) -> io::Result<()> {
        let x = &mut self.extra[d];
        if !x.out.ready(now) {
            return Ok(());
        }
        self.dirs[d].take_due(now, &mut x.out.waiting);
        if x.out.waiting.is_empty() {
            return Ok(());
        }
        // Lateness is taken as the frames are handed to the kernel: sendmmsg on a veth runs
        // the receiving stack (and anything it sends back) before it returns, unless RPS
        // steers it to another CPU.
        let handed = self.clock.now();
        let frames = x.out.waiting.iter().map(|(_, f)| f.bytes());
        let sent = self.ports[d ^ 1].send_batch(frames)?;
        let pool = &mut self.pool;
        x.out.settle(sent, handed, &mut x.lateness, &mut |b| {
            Self::recycle(pool, b)
        });
        Ok(())
    }

    /// Emit every bin that ended by `now`.
    fn close_bins(&mut self, now: SimTime) -> io::Result<()> {
        let Some(origin) = self.origin else {
            return Ok(());
        };
        let bin = self.cfg.bin_ns();
        loop {
            let start_ns = self.next_bin * bin;
            if start_ns >= self.cfg.duration_ns() {
                return Ok(());
            }
            let end_ns = (start_ns + bin).min(self.cfg.duration_ns());
            let end = origin + SimDuration::from_nanos(end_ns);
            if now < end {
                return Ok(());
            }
            self.rt_offset = realtime_offset_ns();
            for p in 0..self.ports.len() {
                let (_, drops) = self.ports[p].take_stats();
                self.extra[p].socket_drops += drops;
            }
            let start = origin + SimDuration::from_nanos(start_ns);
            for (d, dir) in self.dirs.iter_mut().enumerate() {
                let state = dir.mean_over(start, end);
                let (qp, qb) = dir.queue_len();
                let c = dir.end_bin();
                let link = &self.cfg.links[d / 2];
                if let Some(w) = self.series.as_mut() {
                    let line = BinLine {
                        kind: "bin",
                        row: c.bin_row(
                            link.id,
                            if d % 2 == 0 { "ab" } else { "ba" },
                            start_ns as f64 / 1e9,
                            (qp, qb),
                            &state,
                        ),
                        rx_frames: c.offered,
                        tx_frames: c.delivered,
                    };
                    serde_json::to_writer(&mut *w, &line)?;
                    writeln!(w)?;
                }
            }
            self.next_bin += 1;
        }
    }

    /// Arm the wait for the next deadline; returns the epoll timeout (0 = spin, -1 = sleep).
    fn arm_wait(&mut self, now: SimTime) -> io::Result<libc::c_int> {
        if let Some(since) = self.spinning_since.take() {
            let d = now.saturating_since(since).as_nanos();
            self.spun_ns += d;
            self.spin_total_ns += d;
        }
        if now.saturating_since(self.spin_window_start).as_nanos() >= SPIN_WINDOW_NS {
            self.spin_window_start = now;
            self.spun_ns = 0;
        }
        let mut next = self
            .dirs
            .iter()
            .zip(&self.extra)
            .filter_map(|(dir, x)| x.out.next_wake(dir))
            .min();
        if let Some(origin) = self.origin {
            let b = self.next_bin * self.cfg.bin_ns();
            if b < self.cfg.duration_ns() {
                let end = origin
                    + SimDuration::from_nanos((b + self.cfg.bin_ns()).min(self.cfg.duration_ns()));
                next = Some(next.map_or(end, |n| n.min(end)));
            }
        }
        let Some(next) = next else {
            disarm(self.timer)?;
            self.sleeps += 1;
            return Ok(-1);
        };
        let within_budget = self.spun_ns * 100 < SPIN_WINDOW_NS * SPIN_BUDGET_PERCENT;
        let spin = if within_budget {
            SimDuration::from_nanos(self.cfg.spin_ns)
        } else {
            SimDuration::ZERO
        };
        if next <= now + spin {
            if next > now {
                self.spinning_since = Some(now);
            }
            return Ok(0);
        }
        arm_abs(self.timer, self.clock.to_abs(next - spin))?;
        self.sleeps += 1;
        Ok(-1)
    }

    fn read_control(&mut self) -> io::Result<()> {
        let mut buf = [0u8; 512];
        loop {
            // SAFETY: buf is writable for its length.
            let r = unsafe {
                libc::read(
                    libc::STDIN_FILENO,
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                )
            };
            if r == 0 {
                self.stop = true; // EOF: the runner is gone or done
                let _ = self.epoll_del_stdin();
                return Ok(());
            }
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted {
                    break;
                }
                return Err(e);
            }
            self.stdin_buf.extend_from_slice(&buf[..r as usize]);
        }
        while let Some(pos) = self.stdin_buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.stdin_buf.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line).trim().to_string();
            self.command(&line)?;
        }
        Ok(())
    }

    fn epoll_del_stdin(&mut self) -> io::Result<()> {
        // SAFETY: removing a registered descriptor.
        cvt(unsafe {
            libc::epoll_ctl(
                self.epoll,
                libc::EPOLL_CTL_DEL,
                libc::STDIN_FILENO,
                std::ptr::null_mut(),
            )
        })
        .map(|_| ())
    }

    fn command(&mut self, line: &str) -> io::Result<()> {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("start") => {
                let abs = words
                    .next()
                    .and_then(|w| w.parse::<u64>().ok())
                    .unwrap_or_else(|| self.clock.to_abs(self.clock.now()));
                let origin = self.clock.at_abs(abs);
                self.origin = Some(origin);
                for d in &mut self.dirs {
                    d.set_origin(origin);
                }
                for p in &self.ports {
                    p.take_stats(); // count socket drops from the start only
                }
                Ok(())
            }
            Some("stop") => {
                self.stop = true;
                Ok(())
            }
            Some(other) => {
                eprintln!("satcc-linkd: ignoring unknown command {other:?}");
                Ok(())
            }
            None => Ok(()),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        for p in 0..self.ports.len() {
            let (_, drops) = self.ports[p].take_stats();
            self.extra[p].socket_drops += drops;
        }
        let mut all = Hist::default();
        let mut dirs = Vec::new();
        for (d, dir) in self.dirs.iter().enumerate() {
            let t = dir.totals();
            let x = &self.extra[d];
            all.merge(&x.lateness);
            dirs.push(serde_json::json!({
                "link_id": self.cfg.links[d / 2].id,
                "dir": if d % 2 == 0 { "ab" } else { "ba" },
                "rx_frames": t.offered,
                "tx_frames": t.delivered,
                "tx_bytes": t.tx_bytes,
                "drops_queue": t.drops_queue,
                "drops_random": t.drops_random,
                "ecn_marks": t.ecn_marks,
                "socket_drops": x.socket_drops,
                "oversize": x.oversize,
                "send_failures": x.out.send_failures,
                "pushed_back": x.out.pushed_back,
                "waiting_at_end": x.out.waiting.len(),
                "held_at_end": dir.held(),
                "lateness": x.lateness.to_json(),
            }));
        }
        let line = serde_json::json!({
            "kind": "stats",
            "passes": self.passes,
            "sleeps": self.sleeps,
            "spin_ns": self.cfg.spin_ns,
            "cpu_latency_held_us": self.cpu_latency_held_us,
            "spun_ms": (self.spin_total_ns as f64 / 1e3).round() / 1e3,
            "lateness": all.to_json(),
            "rx_latency": self.rx_latency.to_json(),
            "tcp_firsts": self.firsts.to_json(self.origin),
            "dirs": dirs,
        });
        if let Some(w) = self.series.as_mut() {
            writeln!(w, "{line}")?;
            w.flush()?;
        } else {
            eprintln!("{line}");
        }
        Ok(())
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        // SAFETY: we own these descriptors.
        unsafe {
            libc::close(self.epoll);
            libc::close(self.timer);
            libc::close(self.signal);
        }
    }
}

fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we were given.
    let flags = cvt(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    cvt(unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) }).map(|_| ())
}

fn drain_fd(fd: RawFd) {
    let mut buf = [0u8; 256];
    // SAFETY: buf is writable for its length.
    while unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) } > 0 {}
}

/// A signalfd for TERM, INT and HUP, with those signals blocked (and PIPE ignored), so any of
/// them ends the run through the loop and the series is flushed.
fn signal_fd() -> io::Result<RawFd> {
    // SAFETY: sigset manipulation on a local set; signal() for SIGPIPE.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        cvt(libc::sigprocmask(
            libc::SIG_BLOCK,
            &set,
            std::ptr::null_mut(),
        ))?;
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        cvt(libc::signalfd(
            -1,
            &set,
            libc::SFD_NONBLOCK | libc::SFD_CLOEXEC,
        ))
    }
}

fn arm_abs(timer: RawFd, abs_ns: u64) -> io::Result<()> {
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: (abs_ns / 1_000_000_000) as i64,
            tv_nsec: (abs_ns % 1_000_000_000) as i64,
        },
    };
    // SAFETY: valid timerfd and itimerspec.
    cvt(unsafe {
        libc::timerfd_settime(timer, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut())
    })
    .map(|_| ())
}

fn disarm(timer: RawFd) -> io::Result<()> {
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
    };
    // SAFETY: valid timerfd and itimerspec.
    cvt(unsafe { libc::timerfd_settime(timer, 0, &spec, std::ptr::null_mut()) }).map(|_| ())
}

/// One bin line of satcc-linkd's series file: satcc-core's link-series row (the schema the
/// simulator's results share) and the frames the direction received and sent in the bin.
#[derive(serde::Serialize)]
struct BinLine {
    kind: &'static str,
    #[serde(flatten)]
    row: LinkSeriesRow,
    rx_frames: u64,
    tx_frames: u64,
}
