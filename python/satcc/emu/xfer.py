"""A limited TCP transfer that ends when the receiver has every byte (the emulator's `size` flows).

iperf3 cannot do this: with `-n SIZE` it ends the test when the sender has *written* SIZE
bytes into its socket, and the server then closes the data connection with the rest still in
the send buffer and in flight (esnet/iperf#382, open; the `--wait-all-received` pull request
#1071 was never merged). On a long fat path that cuts a 10 MB transfer at about 7 MB. So a
limited TCP flow is this pair instead, started in the namespaces as iperf3 is:

    python -m satcc.emu.xfer serve PORT              # receiver: one connection, read to EOF
    python -m satcc.emu.xfer send ADDR PORT BYTES --cport P [--cc NAME] [--mss N]

`send` writes exactly BYTES, shuts its side down (FIN after the last byte) and waits for the
receiver to close; `serve` reads until that FIN, closes, and prints one JSON object:
`{"bytes": N, "first_ns": T, "last_ns": T}` — CLOCK_MONOTONIC nanoseconds of the first and the
last byte read (the clock is the machine's, the same in every network namespace, so the runner
subtracts its own start). `send` prints `{"bytes": N, "total_retrans": R}`, R being the
socket's `tcpi_total_retrans` read just before it closes. SIGINT/SIGTERM end either side with
what it has, still printing its JSON (the run's end came first).
"""

from __future__ import annotations

import argparse
import json
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


class _Stop(Exception):
    pass


def _stop(_sig, _frame):
    raise _Stop


def serve(port: int, out=sys.stdout, addr: str = "0.0.0.0") -> int:
    got, first, last = 0, None, None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as lsock:
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind((addr, port))
        lsock.listen(1)
        try:
            conn, _ = lsock.accept()
            with conn:
                buf = bytearray(CHUNK)
                while True:
                    n = conn.recv_into(buf)
                    if n == 0:
                        break
                    now = time.monotonic_ns()
                    if first is None:
                        first = now
                    last = now
                    got += n
        except _Stop:
            pass
    out.write(json.dumps({"bytes": got, "first_ns": first, "last_ns": last}) + "\n")
    out.flush()
    return 0


def send(
    addr: str,
    port: int,
    size: int,
    cport: int,
    cc: str | None,
    mss: int | None,
    out=sys.stdout,
    nodelay: bool = False,
) -> int:
    sent, retrans = 0, None
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if cc:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
        if mss:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
        if nodelay:  # the scenario's `nodelay`: Nagle off
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("0.0.0.0", cport))
        try:
            sock.connect((addr, port))
            block = memoryview(bytes(CHUNK))
            while sent < size:
                sent += sock.send(block[: min(CHUNK, size - sent)])
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(4096):  # the receiver closes once it has read everything
                pass
        except _Stop:
            pass
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
        if len(info) >= TCP_INFO_LEN:
            (retrans,) = struct.unpack_from("=I", info, TCP_INFO_TOTAL_RETRANS)
    finally:
        sock.close()
    out.write(json.dumps({"bytes": sent, "total_retrans": retrans}) + "\n")
    out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m satcc.emu.xfer", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("port", type=int)
    c = sub.add_parser("send")
    c.add_argument("addr")
    c.add_argument("port", type=int)
    c.add_argument("bytes", type=int)
    c.add_argument("--cport", type=int, required=True)
    c.add_argument("--cc")
    c.add_argument("--mss", type=int)
    c.add_argument("--nodelay", action="store_true", help="set TCP_NODELAY")
    a = p.parse_args(argv)
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    if a.cmd == "serve":
        return serve(a.port)
    return send(a.addr, a.port, a.bytes, a.cport, a.cc, a.mss, nodelay=a.nodelay)


if __name__ == "__main__":
    sys.exit(main())
