"""`satcc analyze FILE... [--bin 100ms] [--out DIR] [--json]`: field measurements into results.

Each FILE is recognised by its content: pcap/pcapng capture, iperf3 JSON (`iperf3 -J`), or a
ping/nping text log. Prints a per-flow table (or with --json the summary document, the shape of
`satcc sim --json` plus src/dst/sport/dport and bins). Damaged inputs are analysed as far as
they can be read, with a warning naming the record number and byte offset. A file that is
missing or yields nothing at all is an input error: one line on stderr, exit status 2 (the
other files are still analysed and printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from satcc.analyze.inputs import bin_seconds, load_input
from satcc.cli import COMMAND_HELP
from satcc.errors import UserError
from satcc.limits import printable
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["analyze"]
DESCRIPTION = """\
Analyze what was measured elsewhere (a Starlink dish on a roof): pcap/pcapng captures (per TCP/UDP
flow direction: bytes, goodput in fixed bins, tshark-compatible retransmission counts, RTT),
iperf3 -J output (TCP/UDP, client or server, -P, -R) and ping/nping logs. Writes the same
results as the other engines with --out, prints a per-flow table, or with --json the summary."""


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "analyze",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "files",
        metavar="FILE",
        nargs="+",
        type=Path,
        help="capture (.pcap/.pcapng), iperf3 JSON or ping/nping log",
    )
    p.add_argument(
        "--bin",
        metavar="DURATION",
        default="100ms",
        help="time bin for capture series (default: 100ms)",
    )
    p.add_argument("--out", metavar="DIR", type=Path, help="write a result directory")
    p.add_argument(
        "--json", action="store_true", help="print the JSON summary instead of the table"
    )
    p.add_argument(
        "--all-flows",
        action="store_true",
        help="also list capture flow directions without payload (pure ACKs)",
    )
    p.set_defaults(func=run)


def _rtt_from(f: dict) -> str:
    """Where the RTT figures come from: the estimator and, for a capture, its capture point."""
    if f.get("rtt_mean_ms") is None:
        return "-"
    src = f.get("rtt_source") or f.get("kind") or "-"
    point = f.get("capture_point")
    return f"{src} @{point}" if point and point != "unknown" else src


def _table(res) -> str:
    from satcc.units import format_rate

    cols = [
        "id",
        "kind",
        "proto",
        "src",
        "dst",
        "goodput",
        "bytes",
        "pkts",
        "retx",
        "rtt mean",
        "rtt p95",
        "rtt from",
        "loss",
    ]
    rows = []
    for f in res.flows:

        def ep(h, p):
            return "-" if h is None else (f"{h}:{p}" if p is not None else str(h))

        retx = f.get("retransmission_rate")
        loss = f.get("udp_loss_rate", f.get("loss_rate"))
        rows.append(
            [
                str(f["id"]),
                f["kind"],
                f.get("proto") or "-",
                ep(f.get("src"), f.get("sport")),
                ep(f.get("dst"), f.get("dport")),
                format_rate(f["goodput_bps"]) if f.get("goodput_bps") is not None else "-",
                f"{f['delivered_bytes'] / 1e6:.2f} MB"
                if f.get("delivered_bytes") is not None
                else "-",
                str(f["sent_packets"]) if f.get("sent_packets") is not None else "-",
                (
                    f"{f['retransmitted_packets']} ({100 * retx:.2f} %)"
                    if retx is not None
                    else (
                        str(f["retransmitted_packets"])
                        if f.get("retransmitted_packets") is not None
                        else "-"
                    )
                ),
                f"{f['rtt_mean_ms']:.2f} ms" if f.get("rtt_mean_ms") is not None else "-",
                f"{f['rtt_p95_ms']:.2f} ms" if f.get("rtt_p95_ms") is not None else "-",
                _rtt_from(f),
                f"{100 * loss:.2f} %" if loss is not None else "-",
            ]
        )
    from satcc.textgrid import grid

    lines = grid(cols, rows, left={1, 2, 3, 4, 11})
    for inp in res.inputs:
        st = inp.get("stats")
        if st:
            lines.append(
                f"{inp['file']}: {st['frames']} frames, {st['tcp_packets']} TCP, "
                f"{st['udp_packets']} UDP packets"
            )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from satcc.commands.output import RESULT_MODULES, prefetch
    from satcc.progress import ProgressBar

    # the writer and the table printer load while the (GIL-free) analysis runs
    prefetch(("satcc.analyze.result", *RESULT_MODULES))

    bin_s = bin_seconds(args.bin)
    if args.out is not None:
        from satcc.limits import check_out_dir

        check_out_dir(args.out)  # before any analysis: a bad --out is known up front
    inputs, failed = [], []
    for path in args.files:
        try:
            with ProgressBar(label=path.name) as bar:
                inp = load_input(
                    path, bin_s, progress=lambda done, total: bar(done / total if total else 0)
                )
        except UserError as e:
            print(f"satcc: error: {printable(str(e))}", file=sys.stderr)
            failed.append(path)
            continue
        for w in getattr(inp, "warnings", []):
            where = (
                f"record {w['record']} at byte offset {w['offset']}: {w['message']}"
                if isinstance(w, dict)
                else w
            )
            print(printable(f"satcc: warning: {path}: {where}"), file=sys.stderr)
        inputs.append(inp)
    if not inputs:
        return UserError.exit_code
    from satcc.analyze.result import build

    res = build(inputs, all_flows=args.all_flows)
    if args.out is not None:
        res.result.write(args.out)
        (args.out / "analyze.json").write_text(json.dumps(res.summary(), indent=2) + "\n")
        print(printable(f"results: {args.out}"), file=sys.stderr)
    if args.json:
        sys.stdout.write(json.dumps(res.summary(), indent=2, allow_nan=False) + "\n")
    else:
        print(printable(_table(res)))
    return UserError.exit_code if failed else 0
