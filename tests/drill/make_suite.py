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

    def seg(self, i: int, t: str = "+0", ecn: str = "", mss: int = MSS, extra: str = "") -> None:
        """Expect data segment i (0-based) of the write; `extra` adds flag letters."""
        last = (i + 1) * mss >= self.write_len
        flag = extra + ("P." if last else ".")
        a = 1 + i * mss
        self.add(f"{t:>5} > {ecn}{flag} {a}:{a + mss}({mss}) ack 1")

    def ack(
        self, upto: int, t: str = "+0", sack: list[tuple[int, int]] | None = None, win: int = 2000
    ) -> None:
        """ACK segments below `upto` (count), with SACK blocks in segment numbers."""
        opt = ""
        if sack:
            opt = (
                " <sack " + " ".join(f"{1 + a * MSS}:{1 + b * MSS}" for a, b in sack) + ",nop,nop>"
            )
        self.add(f"{t:>5} < . 1:1(0) ack {1 + upto * MSS} win {win}{opt}")

    def assert_(self, expr: str, t: str = "+0") -> None:
        first = expr.split(" and ")[0].split()[0]
        self.add(f"{t:>5} %{{ assert {expr}, {first} }}%")

    def save(self) -> None:
        (OUT / f"{self.name}.pkt").write_text("\n".join(self.lines) + "\n")


def ss_check(cca: str, ss: int) -> str:
    """The tcp_info ssthresh check after a reduction. (An earlier kernel run read 2147483647
    here with "CUBIC": the namespace's default had silently stayed the host's BBR, see
    python/satcc/drill/kernel.py; with CUBIC really set it reads the 7 of PRR.)"""
    return f" and tcpi_snd_ssthresh == {ss}"


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
        # Each round's ACKs at an absolute time, one RTT after the round was sent: a drift
        # of the run's clock must not lengthen the RTT samples (CUBIC's HyStart would see a
        # delay increase and leave slow start).
        t = f"{0.3 + 0.1 * rnd:.3f}"
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
        extra=f"\nip route change 192.0.2.1 dev tun0 initcwnd {iw}",
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
    head = (
        HEAD.replace(
            "< S 0:0(0) win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>",
            f"< S 0:0(0) win {w * MSS} <mss 1000,sackOK,nop,nop>",
        )
        .replace(
            "> S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>",
            "> S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK>",
        )
        .replace("ack 1 win 2000", f"ack 1 win {w * MSS}")
    )
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


NO_SACK_HEAD = HEAD.replace(
    "<mss 1000,sackOK,nop,nop,nop,wscale 7>", "<mss 1000,nop,wscale 7>"
).replace("<mss 1460,nop,nop,sackOK,nop,wscale 8>", "<mss 1460,nop,wscale 8>")


def fast_retransmit(cca: str, dupacks: int, sack: bool = True) -> None:
    ss = ssthresh_after_loss(cca, 10)
    kind = "" if sack else "newreno-"
    s = Script(
        f"fast-retransmit-{kind}{cca}-{dupacks}-dupacks",
        f"SACK-based fast retransmit ({cca}): the first of 10 segments is lost. The first two\n"
        "SACKs each let one new segment out (Disorder: a SACKed segment leaves the flight,\n"
        "cwnd does not grow on SACKs, RFC 3042's limited transmit); the third marks the hole\n"
        "lost (RACK's window is 0 with 3 SACKed and no reordering seen): Recovery with\n"
        f"ssthresh {ss}, the hole retransmitted first, then PRR (RFC 6937, Linux's\n"
        f"tcp_cwnd_reduction) paces new data over the further SACKs ({dupacks} in all).\n"
        "The ACK of everything ends Recovery (Open, cwnd >= ssthresh)."
        + (
            ""
            if sack
            else "\nWithout SACK: duplicate ACKs count as SACKed segments (tcp_add_reno_sack), and\n"
            "the third makes dupack heuristics (sacked + 1) exceed tcp_reordering."
        ),
        cca,
        head=HEAD if sack else NO_SACK_HEAD,
    )
    s.write(30 * MSS)
    for i in range(10):
        s.seg(i)
    sent, sacked, prr_delivered, prr_out, retrans = 10, 0, 0, 0, 0
    for d in range(1, dupacks + 1):
        s.ack(0, "+.1" if d == 1 else "+0", sack=[(1, 1 + d)] if sack else None)
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
        while inflight < cwnd:
            if retrans == 0:
                s.seg(0)
                retrans = 1
            else:
                s.seg(sent)
                sent += 1
            inflight += 1
            prr_out += 1
        if d == 3:
            s.assert_(f"tcpi_ca_state == 3{ss_check(cca, ss)}")
    s.ack(sent, "+.1")
    if not sack and sent == 12:
        # NewReno: an ACK of exactly high_seq keeps Recovery until something above it is
        # ACKed (tcp_try_undo_recovery, "hold old state" for Reno).
        s.assert_("tcpi_ca_state == 3")
    else:
        s.assert_(f"tcpi_ca_state == 0 and tcpi_snd_cwnd >= {ss}{ss_check(cca, ss)}")
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
            s.assert_(f"tcpi_ca_state == 4 and tcpi_snd_cwnd == 1{ss_check(cca, ss)}")
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


def nagle(kind: str) -> None:
    docs = {
        "holds": "Nagle: a second small write waits while the first small segment is unACKed\n"
        "(Minshall's variant, tcp_nagle_check), and goes out on its ACK.",
        "coalesces": "Nagle: three small writes while a small segment is unACKed leave as one\n"
        "segment of their sum on the ACK.",
        "nodelay": "TCP_NODELAY: each small write is sent at once.",
        "cork": "TCP_CORK: small writes are held until the cork is removed, then sent as one.",
        "msg-more": "MSG_MORE: a small send is held (as by TCP_CORK, for that send) even with\n"
        "nothing in flight; the next write without it sends both as one segment.",
    }
    s = Script(f"nagle-{kind}", docs[kind])
    if kind == "nodelay":
        s.add("   +0 setsockopt(4, IPPROTO_TCP, TCP_NODELAY, [1], 4) = 0")
    if kind == "msg-more":
        s.add("   +0 send(4, ..., 100, MSG_MORE) = 100")
        s.add("  +.1 write(4, ..., 100) = 100")
        s.add("   +0 > P. 1:201(200) ack 1")
        s.save()
        return
    if kind == "cork":
        s.add("   +0 setsockopt(4, IPPROTO_TCP, TCP_CORK, [1], 4) = 0")
        s.add("   +0 write(4, ..., 100) = 100")
        s.add("   +0 write(4, ..., 100) = 100")
        s.add("  +.1 setsockopt(4, IPPROTO_TCP, TCP_CORK, [0], 4) = 0")
        s.add("   +0 > P. 1:201(200) ack 1")
        s.save()
        return
    s.add("   +0 write(4, ..., 100) = 100")
    s.add("   +0 > P. 1:101(100) ack 1")
    n = 3 if kind == "coalesces" else 1
    for _ in range(n):
        s.add("   +0 write(4, ..., 100) = 100")
    if kind == "nodelay":
        s.add("   +0 > P. 101:201(100) ack 1")
        s.add("  +.1 < . 1:1(0) ack 201 win 2000")
    else:
        s.add("  +.1 < . 1:1(0) ack 101 win 2000")
        s.add(f"   +0 > P. 101:{101 + 100 * n}({100 * n}) ack 1")
    s.save()


def close(kind: str) -> None:
    docs = {
        "local-first": "close() after the data is ACKed sends FIN; the peer's FIN is ACKed (TIME_WAIT).",
        "shutdown-wr": "shutdown(SHUT_WR) sends FIN; data from the peer is still received and ACKed.",
        "remote-first": "The peer's FIN is ACKed at once; close() then sends our FIN (LAST_ACK).",
    }
    s = Script(f"close-{kind}", docs[kind])
    if kind == "remote-first":
        s.add("  +.1 < F. 1:1(0) ack 1 win 2000")
        s.add("   +0 > . 1:1(0) ack 2")
        s.add("   +0 %{ assert tcpi_state == 8 }%")  # TCP_CLOSE_WAIT
        s.add("  +.1 close(4) = 0")
        s.add("   +0 > F. 1:1(0) ack 2")
        s.add("  +.1 < . 2:2(0) ack 2 win 2000")
        s.save()
        return
    s.add("   +0 write(4, ..., 1000) = 1000")
    s.add("   +0 > P. 1:1001(1000) ack 1")
    s.add("  +.1 < . 1:1(0) ack 1001 win 2000")
    if kind == "local-first":
        s.add("   +0 %{ assert tcpi_state == 1 }%")
        s.add("   +0 close(4) = 0")
        s.add("   +0 > F. 1001:1001(0) ack 1")
        s.add("  +.1 < F. 1:1(0) ack 1002 win 2000")
        s.add("   +0 > . 1002:1002(0) ack 2")
    else:
        s.add("   +0 shutdown(4, SHUT_WR) = 0")
        s.add("   +0 > F. 1001:1001(0) ack 1")
        s.add("  +.1 < . 1:1001(1000) ack 1002 win 2000")
        s.add("   +0 > . 1002:1002(0) ack 1001")
        s.add("   +0 %{ assert tcpi_state == 5 }%")  # TCP_FIN_WAIT2
    s.save()


def quickack() -> None:
    s = Script(
        "delayed-ack-quickack-at-start",
        "Receiver: the first data segments are ACKed at once (quick-ACK mode is entered on\n"
        "the first data, tcp_event_data_recv -> tcp_incr_quickack), each one separately.",
    )
    for i in range(3):
        a = 1 + i * MSS
        s.add(f"{'+.1' if i == 0 else '+0':>5} < . {a}:{a + MSS}({MSS}) ack 1 win 2000")
        s.add(f"   +0 > . 1:1(0) ack {a + MSS}")
    s.add("   +0 read(4, ..., 3000) = 3000")
    s.save()


ECN_HEAD = HEAD.replace("< S 0:0(0)", "< SEW 0:0(0)").replace("> S. 0:0(0)", "> SE. 0:0(0)")


def ecn(cca: str) -> None:
    ss = ssthresh_after_loss(cca, 10)
    s = Script(
        f"ecn-ece-enters-cwr-{cca}",
        f"ECN ({cca}): the peer asks for ECN in its SYN (SYN+ECE+CWR) and the SYN-ACK agrees\n"
        "(SYN+ECE, tcp_ecn=2 accepts incoming requests); data is sent ECT(0). An ACK with ECE\n"
        f"puts the sender in CWR: ssthresh {ss}, PRR reduction, and the next new segment\n"
        "carries CWR.",
        cca,
        head=ECN_HEAD,
        extra="\nsysctl -q net.ipv4.tcp_ecn=2",
    )
    s.write(20 * MSS)
    for i in range(10):
        s.seg(i, ecn="[ect0] ")
    s.add("  +.1 < E. 1:1(0) ack 1001 win 2000")
    s.seg(10, ecn="[ect0] ", extra="W")
    s.assert_(f"tcpi_ca_state == 2{ss_check(cca, ss)}")
    s.save()


def ecn_not_requested() -> None:
    s = Script(
        "ecn-not-requested-no-ect",
        "ECN: a SYN without ECE+CWR gets a SYN-ACK without ECE, and data goes out Not-ECT.",
        extra="\nsysctl -q net.ipv4.tcp_ecn=2",
    )
    s.write(2 * MSS)
    s.seg(0, ecn="[noecn] ")
    s.seg(1, ecn="[noecn] ")
    s.save()


def undo_dsack(cca: str) -> None:
    s = Script(
        f"undo-dsack-{cca}",
        f"Undo ({cca}): a fast retransmit (the first of 10 segments SACK-reported missing)\n"
        "turns out spurious: the ACK of everything carries a D-SACK for the retransmitted\n"
        "segment, undo_retrans falls to 0 and the reduction is undone (tcp_try_undo_recovery:\n"
        "ssthresh back to its prior value, cwnd restored), Open again.",
        cca,
    )
    s.write(30 * MSS)
    for i in range(10):
        s.seg(i)
    s.ack(0, "+.1", sack=[(1, 2)])
    s.seg(10)
    s.ack(0, "+0", sack=[(1, 3)])
    s.seg(11)
    s.ack(0, "+0", sack=[(1, 4)])
    s.seg(0)
    s.assert_("tcpi_ca_state == 3")
    s.add(f"{'+.1':>5} < . 1:1(0) ack {1 + 12 * MSS} win 2000 <sack 1:1001,nop,nop>")
    s.assert_("tcpi_ca_state == 0 and tcpi_snd_ssthresh == 2147483647 and tcpi_snd_cwnd >= 10")
    s.save()


def mss(peer: int) -> None:
    head = HEAD.replace("<mss 1000,sackOK", f"<mss {peer},sackOK")
    seg = min(peer, 1460)
    s = Script(
        f"mss-peer-{peer}",
        f"The peer's MSS option ({peer}) sets the segment size (min with our own 1460), and the\n"
        "initial window is 10 such segments.",
        head=head,
    )
    s.write(10 * seg)
    for i in range(10):
        s.seg(i, mss=seg)
    s.assert_(f"tcpi_snd_mss == {seg} and tcpi_snd_cwnd == 10")
    s.save()


def info_after_handshake() -> None:
    s = Script(
        "tcp-info-after-handshake",
        "tcp_info after the passive open: MSS 1000, window scales 7 (peer's) and 8 (ours),\n"
        "SACK and window scaling on (tcpi_options 2|4), the SYN-ACK's RTT sample of 100 ms, RTO\n"
        "300 ms (jiffies: up to 3 ticks more), cwnd 10, Open.",
    )
    s.assert_(
        "tcpi_snd_mss == 1000 and tcpi_snd_wscale == 7 and tcpi_rcv_wscale == 8"
        " and (tcpi_options & 6) == 6 and 99000 <= tcpi_rtt <= 110000"
        " and 300000 <= tcpi_rto <= 312000"
        " and tcpi_snd_cwnd == 10 and tcpi_ca_state == 0 and tcpi_state == 1"
    )
    s.save()


def slow_start_after_idle(cca: str, on: bool) -> None:
    sysctl = 1 if on else 0
    s = Script(
        f"slow-start-after-idle-{'on' if on else 'off'}-{cca}",
        f"Slow start after idle ({cca}, tcp_slow_start_after_idle={sysctl}): 10 segments, one\n"
        "ACK of all (cwnd 10 -> 20), then 1 s without sending. "
        + (
            "The next write finds nothing in flight\nand more than an RTO (300 ms) since the "
            "last send: tcp_cwnd_restart halves cwnd\nonce per RTO beyond the first, down to "
            "min(initial window, cwnd) = 10."
            if on
            else "With the restart off, the next\nwrite goes out with the whole cwnd of 20."
        ),
        cca,
        extra=f"\nsysctl -q net.ipv4.tcp_slow_start_after_idle={sysctl}",
    )
    s.write(10 * MSS)
    for i in range(10):
        s.seg(i)
    s.ack(10, "+.1")
    s.assert_("tcpi_snd_cwnd == 20 and tcpi_unacked == 0")
    s.add(f"{'+1':>5} write(4, ..., {30 * MSS}) = {30 * MSS}")
    s.write_len = 40 * MSS
    out = 10 if on else 20
    for i in range(10, 10 + out):
        s.seg(i)
    s.assert_(f"tcpi_snd_cwnd == {out} and tcpi_unacked == {out}")
    s.save()


ACTIVE_HEAD = """\
--ignore_psh
--tolerance_usecs=10000
`./defaults.sh{extra}`
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
   +0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
   +0 > {syn} 0:0(0) <mss 1460,nop,nop,sackOK,nop,wscale 8>
  +.1 < {synack} 0:0(0) ack 1 win 65535 <mss 1000,sackOK,nop,nop,nop,wscale 7>
   +0 > . 1:1(0) ack 1
   +0 fcntl(3, F_SETFL, O_RDWR) = 0
"""


def active_open(ecn: bool) -> None:
    head = ACTIVE_HEAD.replace("{syn}", "SEW" if ecn else "S").replace(
        "{synack}", "SE." if ecn else "S."
    )
    s = Script(
        f"active-open{'-ecn' if ecn else ''}-then-write",
        "Active open (connect, non-blocking: EINPROGRESS): the SYN offers MSS 1460, SACK and\n"
        "window scale 8 (for tcp_rmem[2] 15 MiB); the SYN-ACK's MSS 1000 sets the segment\n"
        "size, its time the first RTT sample (100 ms); the initial window follows the write."
        + (
            "\nWith tcp_ecn=1 the SYN asks for ECN (SYN+ECE+CWR), the SYN-ACK agrees (SYN+ECE)\n"
            "and data goes out ECT(0)."
            if ecn
            else ""
        ),
        head=head,
        extra="\nsysctl -q net.ipv4.tcp_ecn=1" if ecn else "",
    )
    s.add(f"{'+0':>5} write(3, ..., {10 * MSS}) = {10 * MSS}")
    s.write_len = 10 * MSS
    for i in range(10):
        s.seg(i, ecn="[ect0] " if ecn else "")
    s.add(
        "   +0 %{ assert tcpi_snd_mss == 1000 and tcpi_snd_cwnd == 10 and tcpi_state == 1"
        f" and 99000 <= tcpi_rtt <= 110000 and (tcpi_options & 8) == {8 if ecn else 0},"
        " tcpi_snd_mss }%"
    )
    s.save()


def cc_default(cca: str) -> None:
    s = Script(
        f"congestion-control-default-{cca}",
        f"The shell block's net.ipv4.tcp_congestion_control={cca} is the accepted socket's\n"
        "congestion control (a guard: on a host whose tcp_allowed_congestion_control lacks\n"
        "it, the sysctl fails with EPERM inside a namespace and the kernel engine sets it\n"
        "per socket, python/satcc/drill/kernel.py).",
        cca,
    )
    s.add(f'   +0 getsockopt(4, SOL_TCP, TCP_CONGESTION, "{cca}", [16]) = 0')
    s.save()


# -- RACK (net/ipv4/tcp_recovery.c) -------------------------------------------------------
# A 400 ms handshake RTT makes RACK's reordering window wide: reo_wnd = min_rtt / 4 = 100 ms
# (tcp_rack_reo_wnd: no reordering seen, Open, fewer than tcp_reordering SACKed). The
# timer is armed for the remaining wait plus TCP_TIMEOUT_MIN (2 jiffies: 2 ms at HZ=1000,
# 8 ms at HZ=250, and a jiffies timer fires up to one jiffy late), so the retransmission is
# expected in a range covering both.
RACK_HEAD = HEAD.replace("  +.1 < . 1:1(0) ack 1 win 2000", "  +.4 < . 1:1(0) ack 1 win 2000")


def rack_reo_timer(cca: str, offsets_ms: tuple[int, ...]) -> None:
    """Segments sent at `offsets_ms` (one write each); the peer SACKs the last one one RTT
    (400 ms) after it was sent. Each earlier segment waits rtt + reo_wnd from its own send
    time; Linux arms the timer for the largest remaining wait, the newest of them."""
    reo = 100
    n = len(offsets_ms)
    remaining = reo - (offsets_ms[-1] - offsets_ms[-2])
    name = (
        f"rack-reo-timer-{cca}-gap-{offsets_ms[-1]}ms"
        if n == 2
        else f"rack-reo-timer-{cca}-{n}-segments"
    )
    sends = ", ".join(f"segment {i} at +{t} ms" for i, t in enumerate(offsets_ms))
    doc = (
        f"RACK reordering timer ({cca}): {sends}; the peer SACKs segment {n - 1} one RTT\n"
        "(400 ms) after it was sent. The earlier segments are not yet lost: each waits\n"
        "rtt + reo_wnd (min_rtt/4 = 100 ms) from its own send time, and tcp_rack_detect_loss\n"
        "arms the timer for the largest remaining wait (`*reo_timeout = max(...)`), that of\n"
        f"segment {n - 2}: {remaining} ms, plus TCP_TIMEOUT_MIN. When it fires\n"
        "(tcp_rack_reo_timeout) the segments are marked lost, Recovery begins and segment 0\n"
        "is retransmitted."
    )
    s = Script(name, doc, cca, head=RACK_HEAD)
    s.write_len = n * MSS
    prev = 0
    for i, t in enumerate(offsets_ms):
        s.add(f"{f'+{(t - prev) / 1000:g}':>5} write(4, ..., {MSS}) = {MSS}")
        s.seg(i)
        prev = t
    s.ack(0, "+.4", sack=[(n - 1, n)])
    s.assert_("tcpi_ca_state == 1")
    lo = remaining / 1000 + 0.002
    hi = remaining / 1000 + 0.012 + (0.004 if remaining % 4 else 0.0)
    s.seg(0, f"+{lo:.3f}~+{hi:.3f}")
    s.assert_(f"tcpi_ca_state == 3 and tcpi_lost == {n - 1}")
    s.save()


# -- F-RTO (tcp_process_loss, RFC 5682 with SACK) ------------------------------------------
def frto(cca: str, spurious: bool) -> None:
    """30 segments written, cwnd 10: the tail loss probe sends new segment 10 (2 srtt + 2 ms
    after the flight), the RTO (300 ms after the probe) retransmits segment 0: Loss, cwnd 1,
    F-RTO on (tcp_frto=2, the timeout came in Open). The ACK of segment 0 acks only
    retransmitted data: F-RTO step 2.b sends new data (cwnd 2 after slow start's +1, every
    other segment marked lost so nothing is in flight) instead of retransmitting."""
    kind = "spurious-undo" if spurious else "real-loss"
    doc = (
        f"F-RTO ({cca}): an RTO, then the ACK of the retransmitted segment 0 only: F-RTO\n"
        "(step 2.b of RFC 5682, tcp_process_loss) sends two new segments instead of\n"
        "retransmitting segments 1-2. "
        + (
            "The next ACK acknowledges original data never\nretransmitted (segments 1-2): "
            "the timeout was spurious (step 3.b), tcp_try_undo_loss undoes it:\nOpen, "
            "ssthresh back to infinity, cwnd back to its prior 10."
            if spurious
            else "The next ACK is a duplicate with a SACK for a new\nsegment: the loss was real "
            "(step 3.a), F-RTO ends and the lost segments are\nretransmitted (Loss, "
            "conventional recovery)."
        )
    )
    s = Script(f"frto-{kind}-{cca}", doc, cca)
    s.write(30 * MSS)
    for i in range(10):
        s.seg(i)
    s.seg(10, "+.202")
    s.seg(0, f"+{RTO:g}")
    s.assert_("tcpi_ca_state == 4 and tcpi_snd_cwnd == 1")
    s.ack(1, "+.1")
    s.seg(11)
    s.seg(12)
    s.assert_("tcpi_ca_state == 4 and tcpi_snd_cwnd == 2")
    if spurious:
        s.ack(3, "+.1")
        s.assert_("tcpi_ca_state == 0 and tcpi_snd_ssthresh == 2147483647 and tcpi_snd_cwnd >= 10")
    else:
        s.ack(1, "+.1", sack=[(11, 12)])
        s.seg(1)
        s.assert_("tcpi_ca_state == 4")
    s.save()


# -- HyStart (tcp_cubic.c: hystart_update) -------------------------------------------------
def hystart_delay(extra_ms: int) -> None:
    """CUBIC's HyStart delay test: once cwnd >= hystart_low_window (16), each round's
    minimum RTT over its first 8 samples (HYSTART_MIN_SAMPLES) is compared with delay_min
    + clamp(delay_min/8, 4 ms, 16 ms) = 100 + 12.5 ms; above it, ssthresh = cwnd and slow
    start ends. The ACK-train test needs ACKs spread over delay_min/2 and does not fire
    (each round's ACKs arrive together)."""
    exits = extra_ms > 12.5
    s = Script(
        f"hystart-delay-{extra_ms}ms-{'exits' if exits else 'stays'}",
        f"HyStart delay detection (CUBIC): round 1 (10 segments) ACKed one by one at RTT\n"
        f"100 ms, round 2 (20 segments) at RTT {100 + extra_ms} ms. HyStart acts from cwnd 16;\n"
        "a round's RTT is the minimum of its first 8 samples, compared on the 9th with\n"
        "delay_min + clamp(delay_min/8, 4, 16 ms) = 112.5 ms. "
        + (
            "Round 2's 120 ms is above: ssthresh = cwnd\n(28 on the 9th ACK of the round) and "
            "CUBIC's congestion avoidance takes over (no\nfurther growth within the round)."
            if exits
            else f"Round 2's {100 + extra_ms} ms is below: slow\nstart goes on (cwnd 40, "
            "ssthresh infinite)."
        ),
    )
    s.write(80 * MSS)
    for i in range(10):
        s.seg(i)
    sent, acked, cwnd, ssthresh = 10, 0, 10, None
    for rnd in range(2):
        end = sent
        t = f"{0.3 + 0.1 * rnd + (extra_ms / 1000 if rnd == 1 else 0):.3f}"
        j = 0
        while acked < end:
            acked += 1
            j += 1
            s.ack(acked, t)
            t = "+0"
            if rnd == 1 and exits and j == 9 and ssthresh is None:
                ssthresh = cwnd  # found: before this ACK's growth
            if ssthresh is None:
                cwnd += 1
            while sent - acked < cwnd:
                s.seg(sent)
                sent += 1
    if exits:
        s.assert_(f"tcpi_snd_cwnd == {cwnd} and tcpi_snd_ssthresh == {ssthresh}")
    else:
        s.assert_(f"tcpi_snd_cwnd == {cwnd} and tcpi_snd_ssthresh == 2147483647")
    s.save()


def reno_no_hystart() -> None:
    s = Script(
        "hystart-reno-delay-20ms-stays",
        "Reno has no HyStart: the same RTT increase (100 -> 120 ms in round 2) that ends\n"
        "CUBIC's slow start leaves Reno in slow start (cwnd 40, ssthresh infinite).",
        "reno",
    )
    s.write(80 * MSS)
    for i in range(10):
        s.seg(i)
    sent, acked, cwnd = 10, 0, 10
    for rnd in range(2):
        end = sent
        t = f"{0.3 + 0.1 * rnd + (0.02 if rnd == 1 else 0):.3f}"
        while acked < end:
            acked += 1
            s.ack(acked, t)
            t = "+0"
            cwnd += 1
            while sent - acked < cwnd:
                s.seg(sent)
                sent += 1
    s.assert_(f"tcpi_snd_cwnd == {cwnd} and tcpi_snd_ssthresh == 2147483647")
    s.save()


# -- Pacing rate (tcp_update_pacing_rate) --------------------------------------------------
def pacing_rate(cca: str, phase: str) -> None:
    """sk_pacing_rate = mss x max(cwnd, packets_out) / srtt x ratio: tcp_pacing_ss_ratio
    (200 %) while cwnd < ssthresh / 2, tcp_pacing_ca_ratio (120 %) after. With pfifo on tun0
    (no fq) CUBIC and Reno do not pace (sk_pacing_status stays SK_PACING_NONE: only a
    congestion control that asks, such as BBR, gets the kernel's internal pacing): the
    rate is only reported, the flight goes out at once."""
    if phase == "ss":
        s = Script(
            f"pacing-rate-slow-start-{cca}",
            f"Pacing rate in slow start ({cca}): after the handshake (srtt 100 ms, cwnd 10,\n"
            "MSS 1000) tcp_update_pacing_rate gives 200 % of cwnd x mss / srtt = 200 kB/s;\n"
            "one round of ACKs later (cwnd 20, srtt still about 100 ms) 400 kB/s. The 10\n"
            "segments still go out together (no pacing without fq for this congestion control).",
            cca,
        )
        s.assert_("195000 <= tcpi_pacing_rate <= 201000")
        s.write(30 * MSS)
        for i in range(10):
            s.seg(i)
        s.ack(10, "+.1")
        for i in range(10, 30):
            s.seg(i)
        s.assert_("tcpi_snd_cwnd == 20 and 390000 <= tcpi_pacing_rate <= 402000")
    else:
        ss = ssthresh_after_loss(cca, 10)
        s = Script(
            f"pacing-rate-after-recovery-{cca}",
            f"Pacing rate after a fast recovery ({cca}): the recovery ends with cwnd =\n"
            f"ssthresh = {ss}, and its congestion avoidance adds 9 // {ss} (the 9 segments it\n"
            "newly acknowledged): cwnd >= ssthresh / 2, so the ratio is tcp_pacing_ca_ratio\n"
            "(120 %): 1.2 x max(cwnd, packets_out) x 1000 B / srtt (all RTT samples 100 ms).",
            cca,
        )
        s.write(30 * MSS)
        for i in range(10):
            s.seg(i)
        s.ack(0, "+.1", sack=[(1, 2)])
        s.seg(10)
        s.ack(0, "+0", sack=[(1, 3)])
        s.seg(11)
        s.ack(0, "+0", sack=[(1, 4)])
        s.seg(0)
        s.assert_("tcpi_ca_state == 3")
        s.add(f"{'+.1':>5} < . 1:1(0) ack {1 + 12 * MSS} win 2000")
        # The ACK ends Recovery (cwnd = ssthresh), then congestion avoidance counts the 9
        # segments it newly acknowledged (0 and 4-11): Reno adds 9 // cwnd.
        cwnd = ss + 9 // ss
        for i in range(12, 12 + cwnd):
            s.seg(i)
        lo = int(1.2 * cwnd * MSS / 0.1 * 0.97)
        hi = int(1.2 * cwnd * MSS / 0.1 * 1.01)
        s.assert_(
            f"tcpi_ca_state == 0 and tcpi_snd_cwnd == {cwnd} and {lo} <= tcpi_pacing_rate <= {hi}"
        )
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
        for d in (3, 5):
            fast_retransmit(cca, d, sack=False)
        ecn(cca)
        undo_dsack(cca)
    for iw in (2, 4, 8, 16):
        initial_window(iw)
    for kind in ("holds", "coalesces", "nodelay", "cork", "msg-more"):
        nagle(kind)
    for kind in ("local-first", "shutdown-wr", "remote-first"):
        close(kind)
    quickack()
    ecn_not_requested()
    for m in (536, 1460):
        mss(m)
    info_after_handshake()
    for w in (2, 3):
        rwnd_limited(w)
    for cca in ("reno", "cubic"):
        slow_start_after_idle(cca, True)
    for cca in ("reno", "cubic"):
        slow_start_after_idle(cca, False)
    for ecn_on in (False, True):
        active_open(ecn_on)
    for cca in ("reno", "cubic"):
        for offsets in ((0, 0), (0, 80), (0, 40, 80)):
            rack_reo_timer(cca, offsets)
    for cca in ("reno", "cubic"):
        cc_default(cca)
        for spurious in (True, False):
            frto(cca, spurious)
        pacing_rate(cca, "ss")
        pacing_rate(cca, "ca")
    for extra in (5, 20):
        hystart_delay(extra)
    reno_no_hystart()


if __name__ == "__main__":
    main()
