"""Writes satcc's own drill suite (tests/drill/suite/*.pkt) from the Linux rules each family
checks. Run it after changing a family: `python tests/drill/make_suite.py`.

Every script is a server: the peer (the script) opens with MSS 1000, SACK and window scale 7
after 100 ms, the handshake's RTT sample is 100 ms (so RTO = srtt + max(4 x mdev/4, 200 ms)
= 300 ms), the application writes, and the script ACKs. The figures below are the kernel's
rules (net/ipv4/tcp_input.c, tcp_cubic.c, tcp_cong.c, tcp_timer.c, tcp_output.c), not
measured values:
- initial window 10 (or the route's initcwnd); slow start adds the segments each ACK
  acknowledges (tcp_slow_start);
- CUBIC's ssthresh after a loss is cwnd x 717/1024, Reno's cwnd/2, both at least 2;
- an RTO sets cwnd 1 and doubles the timeout; a tail loss probe fires 2 x srtt + 2 ms
  after the last send when more than one segment is out (tcp_schedule_loss_probe);
- PSH is not compared (`--ignore_psh`, satcc's extension): Linux marks it per send-queue
  buffer, and how a write is cut into buffers depends on what was sent while it was
  copied. The scripts show data segments as `.`, the last of a write as `P.`.
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).with_name("suite")
MSS = 1000
RTO = 0.3

HEAD = """\
--ignore_psh
--tolerance_usecs=10000
`./defaults.sh{extra}`
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
  +.1 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
   +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
  +.1 < . 1:1(0) ack 1 win 2000
   +0 accept(3, ..., ...) = 4
"""


class Script:
    def __init__(self, name: str, doc: str, cca: str = "cubic", extra: str = "", head: str = HEAD):
        self.name = name
        self.lines = [f"// {line}" for line in doc.strip().splitlines()]
        self.lines.append("")
        setup = extra
        if cca != "cubic":
            setup += f"\nsysctl -q net.ipv4.tcp_congestion_control={cca}"
        self.lines.append(head.format(extra=setup).rstrip("\n"))
        self.write_len = 0

    def add(self, s: str) -> None:
        self.lines.append(s)

    def write(self, nbytes: int, t: str = "+0") -> None:
        self.write_len = nbytes
        self.add(f"{t:>5} write(4, ..., {nbytes}) = {nbytes}")

    def seg(self, i: int, t: str = "+0", ecn: str = "") -> None:
        """Expect data segment i (0-based) of the write."""
        last = (i + 1) * MSS >= self.write_len
        flag = "P." if last else "."
        a = 1 + i * MSS
        self.add(f"{t:>5} > {ecn}{flag} {a}:{a + MSS}({MSS}) ack 1")

    def ack(self, upto: int, t: str = "+0", sack: list[tuple[int, int]] | None = None, win: int = 2000) -> None:
        """ACK segments below `upto` (count), with SACK blocks in segment numbers."""
        opt = ""
        if sack:
            opt = " <sack " + " ".join(f"{1 + a * MSS}:{1 + b * MSS}" for a, b in sack) + ",nop,nop>"
        self.add(f"{t:>5} < . 1:1(0) ack {1 + upto * MSS} win {win}{opt}")

    def assert_(self, expr: str, t: str = "+0") -> None:
        first = expr.split(" and ")[0].split()[0]
        self.add(f"{t:>5} %{{ assert {expr}, {first} }}%")

    def save(self) -> None:
        (OUT / f"{self.name}.pkt").write_text("\n".join(self.lines) + "\n")


def ssthresh_after_loss(cca: str, cwnd: int) -> int:
    if cca == "cubic":
        return max(cwnd * 717 // 1024, 2)
    return max(cwnd // 2, 2)


def slow_start(cca: str, k: int) -> None:
    s = Script(
        f"slow-start-{cca}-ack-every-{k}",
        f"Slow start ({cca}): the peer ACKs every {k} segment(s); each ACK of n segments\n"
        "lets 2n new ones out, and cwnd grows 10 -> 20 -> 40 in two round trips.",
        cca,
    )
    total = 10 + 20 + 40
    s.write(total * MSS)
    for i in range(10):
        s.seg(i)
    s.assert_("tcpi_snd_cwnd == 10 and tcpi_ca_state == 0")
    sent, acked, cwnd = 10, 0, 10
    for rnd in range(2):
        end = sent
        t = "+.1"
        while acked < end:
            n = min(k, end - acked)
            acked += n
            s.ack(acked, t)
            t = "+0"
            cwnd += n
            while sent - acked < cwnd:
                s.seg(sent)
                sent += 1
        s.assert_(f"tcpi_snd_cwnd == {cwnd}")
    s.assert_("tcpi_snd_ssthresh == 2147483647 and tcpi_unacked == 40")
    s.save()


def initial_window(iw: int) -> None:
    s = Script(
        f"initial-window-{iw}",
        f"The route's initcwnd {iw} is the first flight; one round trip of ACKs (every 2\n"
        f"segments) doubles it to {2 * iw}.",
        extra=f"\nip route change 192.0.2.0/24 dev tun0 initcwnd {iw}",
    )
    s.write(3 * iw * MSS)
    for i in range(iw):
        s.seg(i)
    s.assert_(f"tcpi_snd_cwnd == {iw}")
    sent, acked, cwnd = iw, 0, iw
    t = "+.1"
    while acked < iw:
        n = min(2, iw - acked)
        acked += n
        cwnd += n
        s.ack(acked, t)
        t = "+0"
        while sent - acked < cwnd:
            s.seg(sent)
            sent += 1
    s.assert_(f"tcpi_snd_cwnd == {2 * iw} and tcpi_unacked == {2 * iw}")
    s.save()


def rwnd_limited(w: int) -> None:
    head = HEAD.replace(
        "< S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>",
        f"< S 0:0(0) win {w * MSS} <mss 1000,sackOK,nop,nop>",
    ).replace(
        "> S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>",
        "> S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK>",
    ).replace("ack 1 win 2000", f"ack 1 win {w * MSS}")
    s = Script(
        f"rwnd-limited-{w}",
        f"The peer's window ({w} segments, no window scaling) bounds the flight below the\n"
        "initial cwnd of 10; each ACK that slides the window lets one segment more out.",
        head=head,
    )
    s.write(20 * MSS)
    for i in range(w):
        s.seg(i)
    s.assert_(f"tcpi_snd_wnd == {w * MSS} and tcpi_unacked == {w}")
    sent = w
    for acked in range(1, 4):
        s.ack(acked, "+.1" if acked == 1 else "+0", win=w * MSS)
        s.seg(sent)
        sent += 1
    s.assert_(f"tcpi_unacked == {w}")
    s.save()


def fast_retransmit(cca: str, dupacks: int) -> None:
    ss = ssthresh_after_loss(cca, 10)
    s = Script(
        f"fast-retransmit-{cca}-{dupacks}-dupacks",
        f"SACK-based fast retransmit ({cca}): the first of 10 segments is lost. The first two\n"
        "SACKs each let one new segment out (Disorder: a SACKed segment leaves the flight,\n"
        "cwnd does not grow on SACKs, RFC 3042's limited transmit); the third marks the hole\n"
        "lost (RACK's window is 0 with 3 SACKed and no reordering seen): Recovery with\n"
        f"ssthresh {ss}, the hole retransmitted first, then PRR (RFC 6937, Linux's\n"
        f"tcp_cwnd_reduction) paces new data over the further SACKs ({dupacks} in all).\n"
        "The ACK of everything ends Recovery (Open, cwnd >= ssthresh).",
        cca,
    )
    s.write(30 * MSS)
    for i in range(10):
        s.seg(i)
    sent, sacked, prr_delivered, prr_out, retrans = 10, 0, 0, 0, 0
    for d in range(1, dupacks + 1):
        s.ack(0, "+.1" if d == 1 else "+0", sack=[(1, 1 + d)])
        sacked += 1
        if d < 3:
            s.seg(sent)
            sent += 1
            continue
        lost = 1 - retrans
        prr_delivered += 1
        inflight = sent - sacked - lost
        delta = ss - inflight
        if delta < 0:
            sndcnt = -(-ss * prr_delivered // 10) - prr_out
        else:
            sndcnt = min(delta, max(prr_delivered - prr_out, 1))
        sndcnt = max(sndcnt, 0 if prr_out else 1)
        cwnd = inflight + sndcnt
        if d == 3:
            s.assert_(f"tcpi_ca_state == 3 and tcpi_snd_ssthresh == {ss}")
        while inflight < cwnd:
            if retrans == 0:
                s.seg(0)
                retrans = 1
            else:
                s.seg(sent)
                sent += 1
            inflight += 1
            prr_out += 1
    s.ack(sent, "+.1")
    s.assert_(f"tcpi_ca_state == 0 and tcpi_snd_cwnd >= {ss} and tcpi_snd_ssthresh == {ss}")
    s.save()


def rto(cca: str, n: int) -> None:
    ss = ssthresh_after_loss(cca, 10)
    s = Script(
        f"rto-{cca}-{n}-timeouts",
        f"Retransmission timeout ({cca}): one segment out and never ACKed. RTO = 300 ms\n"
        "(srtt 100 ms + max(4 rttvar, 200 ms)); the tail loss probe's timeout (2 srtt + 200 ms\n"
        "with one segment out) is cut to the RTO's, so the probe goes first at +300 ms (still\n"
        "Open), then the RTO, re-armed from the probe, fires 300 ms later (Loss, cwnd 1,\n"
        f"ssthresh {ss}) and doubles on each further timeout ({n} in all).",
        cca,
    )
    s.write(MSS)
    s.seg(0)
    s.seg(0, f"+{RTO:g}")
    s.assert_("tcpi_ca_state == 0 and tcpi_snd_cwnd == 10")
    timeout = RTO
    for k in range(n):
        s.seg(0, f"+{timeout:g}")
        if k == 0:
            s.assert_(f"tcpi_ca_state == 4 and tcpi_snd_cwnd == 1 and tcpi_snd_ssthresh == {ss}")
        timeout *= 2
    s.assert_(f"tcpi_backoff == {n}")
    # Karn: the ACK of a retransmitted segment gives no RTT sample, so the backoff stays.
    s.ack(1, "+.1")
    s.assert_(f"tcpi_ca_state == 0 and tcpi_backoff == {n}")
    s.save()


def tlp(cca: str, n: int) -> None:
    s = Script(
        f"tlp-{cca}-{n}-segments",
        f"Tail loss probe ({cca}): {n} segments out, none ACKed; 2 srtt + 2 ms after the\n"
        "last send the last segment is retransmitted as a probe (no new data left); the RTO\n"
        "is re-armed from the probe and retransmits the first segment 300 ms later.",
        cca,
    )
    s.write(n * MSS)
    for i in range(n):
        s.seg(i)
    s.seg(n - 1, "+.202")
    s.assert_("tcpi_ca_state == 0 and tcpi_snd_cwnd == 10")
    s.seg(0, f"+{RTO:g}")
    s.assert_("tcpi_ca_state == 4 and tcpi_snd_cwnd == 1")
    s.save()


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.pkt"):
        old.unlink()
    for cca in ("reno", "cubic"):
        for k in (1, 2, 3, 4, 5, 10):
            slow_start(cca, k)
        for d in (3, 4, 6):
            fast_retransmit(cca, d)
        for n in (1, 2, 3):
            rto(cca, n)
        for n in (2, 3, 5):
            tlp(cca, n)
    for iw in (2, 4, 16, 32):
        initial_window(iw)
    for w in (2, 3, 5, 7):
        rwnd_limited(w)


if __name__ == "__main__":
    main()
