"""The emulator's TCP traffic: a sender that opens its connection at the flow's start, and a
receiver that counts what it reads (every TCP flow; iperf3 carries UDP flows only).

Why not iperf3 for TCP: (1) with `-n SIZE` it ends the test when the sender has *written* SIZE
bytes into its socket, and the server then closes the data connection with the rest still in
the send buffer and in flight (esnet/iperf#382, open; the `--wait-all-received` pull request
#1071 was never merged): on a long fat path that cuts a 10 MB transfer at about 7 MB. (2) Its
data connection opens after a control connection's exchange (handshake, cookie, parameters,
CREATE_STREAMS: three round trips) and starts sending after the server's TEST_START one more
half round trip later: over a 550 ms GEO path the data left 2.2 s after the flow's `start`,
where the simulator's SYN leaves at `start` (fid-geo-hybla: 7.4 against 8.6 Mbit/s over 30 s,
BENCHMARKS.md, the fidelity grid). So a TCP flow is this pair, started in the namespaces as iperf3 was:

    python -m satcc.emu.xfer serve PORT              # receiver: one connection, read to EOF
    python -m satcc.emu.xfer send ADDR PORT [BYTES] --cport P [--origin-ns T] [--cc NAME] [--mss N]

`send` sleeps until CLOCK_MONOTONIC `T` (the flow's start on the run's clock; the runner starts
every sender first, waits for each to say "ready", then fixes the run's origin and passes each
its `T` on stdin: `--origin-ns stdin`), connects, writes exactly BYTES (without BYTES: until stopped, a
bulk flow), shuts its side down (FIN after the last byte) and waits for the
receiver to close; `serve` reads until that FIN, closes, and prints one JSON object:
`{"bytes": N, "first_ns": T, "last_ns": T}` — CLOCK_MONOTONIC nanoseconds of the first and the
last byte read (the clock is the machine's, the same in every network namespace, so the runner
subtracts its own start). `send` prints `{"bytes": N, "total_retrans": R, "peer": A, "cc": C,
"connect_late_ns": L}`, R being the socket's `tcpi_total_retrans` read just before it closes,
A the address it connected to, C the congestion control the kernel ran (TCP_CONGESTION) and L
how late after `T` its connect() began (with `--origin-ns`: a sender that started too slowly). SIGINT/SIGTERM end either side with
what it has, still printing its JSON (the run's end came first). The counts are exact: the
signals are held while a read or write returns and is counted (`_counted`), so a stop can land
on either side of a system call but never between the bytes moving and their being counted.

Application traffic (a scenario's `[[flow]] app`, docs/scenario.md) runs through the same pair:

    python -m satcc.emu.xfer serve PORT [--request-bytes N] [--gap-ns G]
    python -m satcc.emu.xfer app ADDR PORT APP_JSON --origin-ns T --until-ns U --cport P ...

`app` sleeps until CLOCK_MONOTONIC `T` (the flow's start on the run's clock), connects and
follows the resolved app (`{"kind": "onoff", "on_ns", "off_ns"}` or `{"kind": "requests",
"bytes", "every_ns" | "at_ns"}`) as `schedule` lays it out: the simulator's `App` events
(crates/satcc-sim/src/world/app.rs `AppRun`), offsets from T, none after U. A request adds its bytes
to what the application still has to write (a write while earlier data is queued joins the
queue); an "on" period writes whatever the connection takes: TCP_NOTSENT_LOWAT keeps at most
`ONOFF_LOWAT` bytes unsent in the socket, so going "off" leaves about what is in flight (the
simulator's `app_stop` keeps exactly what was sent). Around each event the socket's
`tcpi_snd_cwnd` / `tcpi_snd_ssthresh` are read before and after the write (the kernel's
`tcp_slow_start_after_idle_check` runs as the write queues data), and the sender prints
`{"bytes", "total_retrans", "events": [{"t_ns", "late_ns", "kind", "written", "cwnd_before",
"ssthresh_before", "cwnd_after", "ssthresh_after"}]}` (`written`: bytes the event's period or
request put into the socket). `serve --request-bytes N` adds `"requests": [ns, ...]`, the clock at
the read that completed each N bytes (the receiver's last byte of request k); `--gap-ns G` adds
`"bursts": [[first_ns, last_ns, bytes], ...]`, reads grouped where no read came for G.
"""

from __future__ import annotations

import argparse
import json
import select
import signal
import socket
import struct
import sys
import time

CHUNK = 1 << 17  # bytes per write and per read (iperf3's TCP default block is 128 KiB too)
# struct tcp_info (include/uapi/linux/tcp.h): eight u8 fields, then u32s; tcpi_total_retrans is
# the 24th u32, at byte 100 (present since Linux 2.6)
TCP_INFO_TOTAL_RETRANS = 100
TCP_INFO_LEN = 104
# tcpi_snd_ssthresh and tcpi_snd_cwnd: the 19th and 20th u32 (bytes 76 and 80)
TCP_INFO_SND_SSTHRESH = 76
TCP_INFO_SND_CWND = 80
TCP_NOTSENT_LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)  # include/uapi/linux/tcp.h
# An "on" period keeps at most this much unsent in the socket (and writes this much at a time):
# 32 KiB is 13 ms at 20 Mbit/s, enough that the writer's wake-ups never leave cwnd unused.
ONOFF_LOWAT = 1 << 15


class _Stop(Exception):
    pass


def _stop(_sig, _frame):
    raise _Stop


_STOPS = {signal.SIGINT, signal.SIGTERM}


class _counted:
    """Hold SIGINT/SIGTERM over a system call that cannot block (a POLLIN/POLLOUT socket, or a
    non-blocking one) and the counting of its bytes. `_stop` raises between bytecodes, so a stop
    arriving after `send`/`recv_into` returned but before `+= n` ran would drop bytes that moved
    (the receiver's count would then exceed the sender's). A held signal is delivered when the
    mask is lifted, after the count: the blocking waits (poll, accept, connect) stay interruptible."""

    def __enter__(self):
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)

    def __exit__(self, *exc):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
        return False


def serve(
    port: int,
    out=sys.stdout,
    addr: str = "0.0.0.0",
    request_bytes: int | None = None,
    gap_ns: int | None = None,
    cc: str | None = None,
) -> int:
    got, first, last = 0, None, None
    requests: list[int] = []
    bursts: list[list[int]] = []
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as lsock:
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if cc:  # accepted sockets inherit it
            lsock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        lsock.bind((addr, port))
        lsock.listen(1)
        try:
            conn, _ = lsock.accept()
            with conn:
                conn.setblocking(False)
                poller = select.poll()
                poller.register(conn, select.POLLIN)
                buf = bytearray(CHUNK)
                while True:
                    poller.poll()  # the wait, interruptible
                    with _counted():
                        try:
                            n = conn.recv_into(buf)
                        except BlockingIOError:
                            continue
                        if n == 0:
                            break
                        now = time.monotonic_ns()
                        if first is None:
                            first = now
                        if gap_ns is not None:
                            if bursts and now - bursts[-1][1] <= gap_ns:
                                bursts[-1][1] = now
                                bursts[-1][2] += n
                            else:
                                bursts.append([now, now, n])
                        last = now
                        got += n
                        if request_bytes:
                            # every request this read completed ends at this read
                            requests.extend([now] * (got // request_bytes - len(requests)))
        except _Stop:
            pass
    doc: dict = {"bytes": got, "first_ns": first, "last_ns": last}
    if request_bytes:
        doc["requests"] = requests
    if gap_ns is not None:
        doc["bursts"] = bursts
    out.write(json.dumps(doc) + "\n")
    out.flush()
    return 0


def _socket(cport: int, cc: str | None, mss: int | None, nodelay: bool = False) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if cc:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    if mss:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
    if nodelay:  # the scenario's `nodelay`: Nagle off
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("0.0.0.0", cport))
    return sock


def _tcp_info(sock: socket.socket) -> bytes:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)


def _congestion(sock: socket.socket) -> str:
    """The congestion control the kernel runs on the socket (TCP_CONGESTION)."""
    name = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    return name.split(b"\0", 1)[0].decode()


def _total_retrans(sock: socket.socket) -> int | None:
    info = _tcp_info(sock)
    if len(info) < TCP_INFO_LEN:
        return None
    return struct.unpack_from("=I", info, TCP_INFO_TOTAL_RETRANS)[0]


def _window(sock: socket.socket) -> tuple[int | None, int | None]:
    """(tcpi_snd_cwnd, tcpi_snd_ssthresh) in segments."""
    info = _tcp_info(sock)
    if len(info) < TCP_INFO_SND_CWND + 4:
        return None, None
    ssthresh, cwnd = struct.unpack_from("=II", info, TCP_INFO_SND_SSTHRESH)
    return cwnd, ssthresh


def send(
    addr: str,
    port: int,
    size: int | None,
    cport: int,
    cc: str | None,
    mss: int | None,
    out=sys.stdout,
    nodelay: bool = False,
    origin_ns: int | None = None,
) -> int:
    """Connect at CLOCK_MONOTONIC `origin_ns` (now if None) and write `size` bytes, or without
    end when `size` is None (a bulk flow: until SIGINT/SIGTERM)."""
    sent, retrans, late, facts = 0, None, None, {}
    sock = _socket(cport, cc, mss, nodelay)
    try:
        try:
            if origin_ns is not None:
                _sleep_until(origin_ns)
                late = time.monotonic_ns() - origin_ns
            sock.connect((addr, port))
            facts = {"peer": sock.getpeername()[0], "cc": _congestion(sock)}
            sock.setblocking(False)
            poller = select.poll()
            poller.register(sock, select.POLLOUT)
            block = memoryview(bytes(CHUNK))
            while size is None or sent < size:
                poller.poll()  # the wait, interruptible
                want = CHUNK if size is None else min(CHUNK, size - sent)
                with _counted():
                    try:
                        sent += sock.send(block[:want])
                    except BlockingIOError:
                        pass
            sock.setblocking(True)
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(4096):  # the receiver closes once it has read everything
                pass
        except _Stop:
            pass
        retrans = _total_retrans(sock)
    finally:
        sock.close()
    doc = {"bytes": sent, "total_retrans": retrans, **facts}
    if late is not None:
        doc["connect_late_ns"] = late
    out.write(json.dumps(doc) + "\n")
    out.flush()
    return 0


def schedule(app: dict, until_ns: int) -> list[tuple[int, str, int]]:
    """The application's events as (offset from the flow's start in ns, kind, bytes): kind
    "on" / "off" for an on/off source (on from the start), "write" for a request. Events after
    `until_ns` (the run's end) are left out, as the simulator schedules none past its end."""
    kind = app["kind"]
    out: list[tuple[int, str, int]] = []
    if kind == "onoff":
        on, off = int(app["on_ns"]), int(app["off_ns"])
        if on <= 0 or off <= 0:
            raise ValueError(f"app: expected positive on_ns and off_ns, found {on} and {off}")
        t = 0
        while t <= until_ns:
            out.append((t, "on", 0))
            if t + on > until_ns:
                break
            out.append((t + on, "off", 0))
            t += on + off
    elif kind == "requests":
        size = int(app["bytes"])
        if "every_ns" in app:
            every = int(app["every_ns"])
            if every <= 0:
                raise ValueError(f"app.every_ns: expected a positive interval, found {every}")
            out = [(k * every, "write", size) for k in range(until_ns // every + 1)]
        else:
            out = [(int(t), "write", size) for t in app["at_ns"] if int(t) <= until_ns]
    else:
        raise ValueError(f"app.kind: expected 'onoff' or 'requests', found {kind!r}")
    return out


def _sleep_until(t_ns: int) -> None:
    while (left := t_ns - time.monotonic_ns()) > 0:
        time.sleep(left / 1e9)


def run_app(
    addr: str,
    port: int,
    app: dict,
    origin_ns: int,
    until_ns: int,
    cport: int,
    cc: str | None,
    mss: int | None,
    out=sys.stdout,
    nodelay: bool = False,
) -> int:
    """Connect at `origin_ns` and write as `app` says (module doc) until SIGINT/SIGTERM."""
    # an event at the run's very end has no time to act (the runner stops the flow then)
    sched = [e for e in schedule(app, until_ns) if e[0] < until_ns]
    written, retrans = 0, None
    events: list[dict] = []
    block = memoryview(bytes(CHUNK))
    sock = _socket(cport, cc, mss, nodelay)
    try:
        if app["kind"] == "onoff":
            sock.setsockopt(socket.IPPROTO_TCP, TCP_NOTSENT_LOWAT, ONOFF_LOWAT)
        try:
            _sleep_until(origin_ns)
            sock.connect((addr, port))
            sock.setblocking(False)
            poller = select.poll()
            poller.register(sock, 0)
            pending, unlimited, i = 0, False, 0

            def write() -> int:
                nonlocal pending, written
                want = ONOFF_LOWAT if unlimited else min(CHUNK, pending)
                if want <= 0:
                    return 0
                try:
                    n = sock.send(block[:want])
                except BlockingIOError:
                    return 0
                written += n
                if not unlimited:
                    pending -= n
                if events:
                    events[-1]["written"] += n
                return n

            while True:
                now = time.monotonic_ns() - origin_ns
                while i < len(sched) and sched[i][0] <= now:
                    with _counted():  # an event is recorded whole or not at all
                        t, kind, n = sched[i]
                        i += 1
                        cwnd, ssthresh = _window(sock)
                        if kind == "write":
                            pending += n
                        else:
                            unlimited, pending = kind == "on", 0
                        events.append(
                            {
                                "t_ns": t,
                                "late_ns": now - t,
                                "kind": kind,
                                "written": 0,
                                "cwnd_before": cwnd,
                                "ssthresh_before": ssthresh,
                            }
                        )
                        write()  # the kernel's restart-after-idle check runs as this queues
                        events[-1]["cwnd_after"], events[-1]["ssthresh_after"] = _window(sock)
                want = unlimited or pending > 0
                poller.modify(sock, select.POLLOUT if want else 0)
                if i < len(sched):
                    wait_ms = max(0, -(-(sched[i][0] - now) // 1_000_000))
                else:
                    wait_ms = -1
                ready = poller.poll(wait_ms)
                if any(ev & (select.POLLHUP | select.POLLERR) for _, ev in ready):
                    break  # the receiver went away: nothing more can be written
                if want and ready:
                    with _counted():
                        write()
        except _Stop:
            pass
        retrans = _total_retrans(sock)
    finally:
        sock.close()
    out.write(json.dumps({"bytes": written, "total_retrans": retrans, "events": events}) + "\n")
    out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m satcc.emu.xfer", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("port", type=int)
    s.add_argument("--request-bytes", type=int)
    s.add_argument("--gap-ns", type=int)
    s.add_argument("--cc", help="the listening socket's congestion control")
    c = sub.add_parser("send")
    c.add_argument("addr")
    c.add_argument("port", type=int)
    c.add_argument("bytes", type=int, nargs="?", help="omitted: write until stopped (bulk)")
    c.add_argument("--origin-ns", help="connect at this CLOCK_MONOTONIC instant, or `stdin`")
    a_ = sub.add_parser("app")
    a_.add_argument("addr")
    a_.add_argument("port", type=int)
    a_.add_argument("app", type=json.loads)
    a_.add_argument("--origin-ns", required=True)
    a_.add_argument("--until-ns", type=int, required=True)
    for q in (c, a_):
        q.add_argument("--cport", type=int, required=True)
        q.add_argument("--cc")
        q.add_argument("--mss", type=int)
        q.add_argument("--nodelay", action="store_true", help="set TCP_NODELAY")
    a = p.parse_args(argv)
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    if a.cmd == "serve":
        return serve(a.port, request_bytes=a.request_bytes, gap_ns=a.gap_ns, cc=a.cc)
    origin = _origin(a.origin_ns)
    if a.cmd == "app":
        assert origin is not None
        return run_app(
            a.addr, a.port, a.app, origin, a.until_ns, a.cport, a.cc, a.mss, nodelay=a.nodelay
        )
    return send(a.addr, a.port, a.bytes, a.cport, a.cc, a.mss, nodelay=a.nodelay, origin_ns=origin)


def _origin(value: str | None) -> int | None:
    """`--origin-ns`: a CLOCK_MONOTONIC instant, or `stdin`: say "ready" on stderr once
    started (Python's start-up is the slow part: 130 ms to 2 s on a loaded machine) and read
    the instant from stdin, so the runner can fix its origin after every sender is up."""
    if value is None:
        return None
    if value != "stdin":
        return int(value)
    sys.stderr.write("ready\n")
    sys.stderr.flush()
    return int(sys.stdin.readline())


if __name__ == "__main__":
    sys.exit(main())
