"""Study 000's MSS sweep through a real OpenVPN tunnel (root): dish A —(uplink)— VPN server —
(downlink)— dish B, one CUBIC flow A→B per MSS, with and without the tunnel, goodput and
retransmissions per MSS. Larger segments are fragmented once the tunnel's ~52 B overhead pushes
them past the 1500-byte MTU; on a lossy link losing either fragment loses the segment.

    python bench/emu/vpn_mss.py [--duration S] [--loss P] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

from satcc import scenario as sc
from satcc.emu import host
from satcc.engines import emu

MSS_VALUES = (1200, 1300, 1380, 1448)


def scenario(mss: int, duration: int, loss: float) -> sc.Scenario:
    return sc.loads(
        textwrap.dedent(f"""
        [scenario]
        name = "vpn-mss-{mss}"
        duration = "{duration} s"
        [[link]]
        a = "dish-a"
        b = "vpn"
        rate = "20 Mbit/s"
        delay = "15 ms"
        loss = {loss}
        queue = "1 BDP"
        [[link]]
        a = "vpn"
        b = "dish-b"
        rate = "50 Mbit/s"
        delay = "10 ms"
        [[flow]]
        from = "dish-a"
        to = "dish-b"
        cca = "cubic"
        mss = {mss}
    """)
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--loss", type=float, default=0.003)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    host.require_root()
    rows = []
    for mss in MSS_VALUES:
        for vpn in (None, "vpn"):
            r = emu.run(scenario(mss, args.duration, args.loss), capture=False, vpn_server=vpn)
            f = r.flows.iloc[0]
            ls = r.link_series
            wire = ls[(ls.link_id == 0) & (ls.dir == "ab")].tx_bytes.sum()
            row = {
                "mss": mss,
                "vpn": vpn is not None,
                "goodput_mbit": f.goodput_bps / 1e6,
                "retx": f.retransmission_rate,
                "wire_bytes_per_payload_byte": wire / f.delivered_bytes
                if f.delivered_bytes
                else None,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print(
        "| MSS | goodput, plain | goodput, OpenVPN | wire bytes per payload byte, OpenVPN | retx, OpenVPN |"
    )
    print("|---|---|---|---|---|")
    for mss in MSS_VALUES:
        plain = next(r for r in rows if r["mss"] == mss and not r["vpn"])
        tun = next(r for r in rows if r["mss"] == mss and r["vpn"])
        print(
            f"| {mss} | {plain['goodput_mbit']:.2f} Mbit/s | {tun['goodput_mbit']:.2f} Mbit/s | "
            f"{tun['wire_bytes_per_payload_byte']:.3f} | {100 * (tun['retx'] or 0):.2f} % |"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
