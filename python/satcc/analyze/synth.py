"""Hand-built captures: IPv4/IPv6 + TCP/UDP packets wrapped in any supported link type and
written as pcap or pcapng, for tests of each classification rule and link type.

    conv = Conversation(v6=False)
    pkts = [conv.syn(t=1.0), conv.synack(t=1.05), conv.ack(t=1.10), conv.data(t=1.11, seq=1, n=100)]
    write_pcap(path, pkts, linktype="ethernet")

Checksums are left at 0 (tshark does not verify them by default; neither do we).
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, field
from pathlib import Path

LINKTYPES = {
    "ethernet": 1,
    "raw": 101,
    "sll": 113,
    "ipv4": 228,
    "ipv6": 229,
    "sll2": 276,
    "null": 0,
}
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


@dataclass
class Packet:
    t: float  # seconds since the epoch
    ip: bytes  # the IP packet (header + transport + payload)
    snap: int | None = None  # capture length limit (snaplen), None = whole packet


def _ip4(src: str, dst: str, proto: int, body: bytes) -> bytes:
    hdr = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        0,
        20 + len(body),
        0,
        0x4000,
        64,
        proto,
        0,
        ipaddress.IPv4Address(src).packed,
        ipaddress.IPv4Address(dst).packed,
    )
    return hdr + body


def _ip6(src: str, dst: str, proto: int, body: bytes) -> bytes:
    hdr = struct.pack(
        "!IHBB16s16s",
        6 << 28,
        len(body),
        proto,
        64,
        ipaddress.IPv6Address(src).packed,
        ipaddress.IPv6Address(dst).packed,
    )
    return hdr + body


def tcp_segment(
    sport: int,
    dport: int,
    seq: int,
    ack: int,
    flags: int,
    window: int = 1000,
    payload: bytes = b"",
    ts: tuple[int, int] | None = None,
) -> bytes:
    opts = b""
    if ts is not None:
        opts = b"\x01\x01" + struct.pack("!BBII", 8, 10, ts[0] & 0xFFFFFFFF, ts[1] & 0xFFFFFFFF)
    off = (20 + len(opts)) // 4
    hdr = struct.pack(
        "!HHIIBBHHH",
        sport,
        dport,
        seq & 0xFFFFFFFF,
        ack & 0xFFFFFFFF,
        off << 4,
        flags,
        window,
        0,
        0,
    )
    return hdr + opts + payload


def udp_datagram(sport: int, dport: int, payload: bytes) -> bytes:
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def ip_packet(src: str, dst: str, proto: int, body: bytes) -> bytes:
    if ":" in src:
        return _ip6(src, dst, proto, body)
    return _ip4(src, dst, proto, body)


@dataclass
class Conversation:
    """A TCP connection between a client and a server, with helpers for each kind of segment.
    Sequence numbers are relative (client ISN 0, server ISN 0) plus the bases below."""

    client: str = "192.0.2.1"
    server: str = "198.51.100.2"
    cport: int = 40000
    sport: int = 5201
    cbase: int = 1_000_000
    sbase: int = 7_000_000
    v6: bool = False
    window: int = 1000
    timestamps: bool = False
    _tsval: dict[str, int] = field(default_factory=lambda: {"c": 100, "s": 900})

    def __post_init__(self):
        if self.v6 and ":" not in self.client:
            self.client, self.server = "2001:db8::1", "2001:db8::2"

    def _pkt(
        self,
        t: float,
        from_client: bool,
        seq: int,
        ack: int,
        flags: int,
        n: int,
        window: int | None,
        ts: tuple[int, int] | None,
    ) -> Packet:
        src, dst = (self.client, self.server) if from_client else (self.server, self.client)
        sp, dp = (self.cport, self.sport) if from_client else (self.sport, self.cport)
        sb, ab = (self.cbase, self.sbase) if from_client else (self.sbase, self.cbase)
        body = tcp_segment(
            sp,
            dp,
            sb + seq,
            (ab + ack) if flags & ACK else 0,
            flags,
            self.window if window is None else window,
            b"\x00" * n,
            ts,
        )
        return Packet(t, ip_packet(src, dst, 6, body))

    def syn(self, t: float, seq: int = 0) -> Packet:
        return self._pkt(t, True, seq, 0, SYN, 0, None, None)

    def synack(self, t: float) -> Packet:
        return self._pkt(t, False, 0, 1, SYN | ACK, 0, None, None)

    def ack(self, t: float, ack: int = 1, seq: int = 1, window: int | None = None) -> Packet:
        """Client -> server pure ACK of server data up to relative `ack`."""
        return self._pkt(t, True, seq, ack, ACK, 0, window, None)

    def data(
        self,
        t: float,
        seq: int,
        n: int,
        ack: int = 1,
        flags: int = ACK | PSH,
        ts: tuple[int, int] | None = None,
    ) -> Packet:
        """Client -> server data at relative `seq`, `n` bytes."""
        return self._pkt(t, True, seq, ack, flags, n, None, ts)

    def sack(
        self,
        t: float,
        ack: int,
        seq: int = 1,
        window: int | None = None,
        ts: tuple[int, int] | None = None,
    ) -> Packet:
        """Server -> client pure ACK of client data up to relative `ack`."""
        return self._pkt(t, False, seq, ack, ACK, 0, window, ts)

    def sdata(self, t: float, seq: int, n: int, ack: int = 1) -> Packet:
        """Server -> client data."""
        return self._pkt(t, False, seq, ack, ACK | PSH, n, None, None)

    def fin(self, t: float, seq: int, ack: int = 1) -> Packet:
        return self._pkt(t, True, seq, ack, FIN | ACK, 0, None, None)


def _link(ip: bytes, linktype: str, vlan: int | None) -> bytes:
    v6 = (ip[0] >> 4) == 6
    ethertype = 0x86DD if v6 else 0x0800
    if linktype == "ethernet":
        head = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01"
        if vlan is not None:
            head += struct.pack("!HH", 0x8100, vlan)
        frame = head + struct.pack("!H", ethertype) + ip
        return frame + b"\x00" * max(0, 60 - len(frame))  # Ethernet minimum frame: padding
    if linktype == "sll":
        return struct.pack("!HHH8sH", 0, 1, 6, b"\x02\x00\x00\x00\x00\x01\x00\x00", ethertype) + ip
    if linktype == "sll2":
        return (
            struct.pack("!HHIHBB8s", ethertype, 0, 2, 1, 0, 6, b"\x02\x00\x00\x00\x00\x01\x00\x00")
            + ip
        )
    if linktype == "null":
        return struct.pack("<I", 30 if v6 else 2) + ip
    if linktype in ("raw", "ipv4", "ipv6"):
        return ip
    raise ValueError(f"unknown link type {linktype!r}; known: {', '.join(LINKTYPES)}")


def frames(
    packets: list[Packet], linktype: str, vlan: int | None = None
) -> list[tuple[float, bytes, int]]:
    out = []
    for p in packets:
        f = _link(p.ip, linktype, vlan)
        cap = f if p.snap is None else f[: p.snap]
        out.append((p.t, cap, len(f)))
    return out


def pcap_bytes(
    packets: list[Packet],
    linktype: str = "ethernet",
    vlan: int | None = None,
    nanosecond: bool = False,
) -> bytes:
    magic = 0xA1B23C4D if nanosecond else 0xA1B2C3D4
    out = [struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 262144, LINKTYPES[linktype])]
    for t, cap, orig in frames(packets, linktype, vlan):
        ns = round(t * 1e9)
        sec, frac = divmod(ns, 1_000_000_000)
        if not nanosecond:
            frac //= 1000
        out.append(struct.pack("<IIII", sec, frac, len(cap), orig) + cap)
    return b"".join(out)


def _pad4(b: bytes) -> bytes:
    return b + b"\x00" * (-len(b) % 4)


def pcapng_bytes(
    packets: list[Packet], linktype: str = "ethernet", vlan: int | None = None
) -> bytes:
    """pcapng with one interface at nanosecond resolution (if_tsresol = 9)."""
    shb_body = struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)
    shb = (
        struct.pack("<II", 0x0A0D0D0A, 12 + len(shb_body))
        + shb_body
        + struct.pack("<I", 12 + len(shb_body))
    )
    opts = struct.pack("<HH", 9, 1) + _pad4(b"\x09") + struct.pack("<HH", 0, 0)
    idb_body = struct.pack("<HHI", LINKTYPES[linktype], 0, 262144) + opts
    idb = (
        struct.pack("<II", 1, 12 + len(idb_body)) + idb_body + struct.pack("<I", 12 + len(idb_body))
    )
    out = [shb, idb]
    for t, cap, orig in frames(packets, linktype, vlan):
        ns = round(t * 1e9)
        body = struct.pack("<IIIII", 0, ns >> 32, ns & 0xFFFFFFFF, len(cap), orig) + _pad4(cap)
        out.append(struct.pack("<II", 6, 12 + len(body)) + body + struct.pack("<I", 12 + len(body)))
    return b"".join(out)


def write_pcap(
    path: str | Path,
    packets: list[Packet],
    linktype: str = "ethernet",
    vlan: int | None = None,
    pcapng: bool = False,
    nanosecond: bool = False,
) -> Path:
    data = (
        pcapng_bytes(packets, linktype, vlan)
        if pcapng
        else pcap_bytes(packets, linktype, vlan, nanosecond)
    )
    Path(path).write_bytes(data)
    return Path(path)
