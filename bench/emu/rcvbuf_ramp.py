"""Early ramp of one bulk flow, simulator vs kernel: how the receive window (autotuning) and the
delayed ACKs shape the first seconds. Reads result directories written by `satcc sim` and
`satcc emu` (same scenario: one flow `snd` -> `rcv` over one link) and prints, per directory,
the bytes delivered by 2/5/10 s after the first data, the time from then until one second
averages 90 % of the link's payload rate, the cwnd at 1/2/4 s, the receiver's ACK count with
segments per ACK overall and in the first 4 s (slow start, before any loss). ACKs: for an emulator run, counted in its tcpdump
capture (pure ACKs of the data connection, tshark); for a simulator run, the reverse
direction's bytes over the 52-byte ACK (IP + TCP + timestamps; SACK blocks make it a slight
overcount). With --windows, an emulator run also prints the window the kernel announced.

    python bench/emu/rcvbuf_ramp.py DIR [DIR ...] [--windows]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import pyarrow.parquet as pq

ACK_BYTES = 52  # 20 IP + 20 TCP + 12 timestamps option
DATA_PORT = 40000  # the emulator's client port of flow 0 (python/satcc/emu/traffic.py)
PAYLOAD_SHARE = 1448 / 1500
EARLY_S = 4.0  # slow start on these paths, before the first loss
SUSTAIN_BINS = 10  # "at 90 %": the mean over one second of bins


def _tshark(pcap: Path, fields: list[str], flt: str) -> list[list[str]]:
    cmd = [
        "tshark",
        "-r",
        str(pcap),
        "-Y",
        flt,
        "-T",
        "fields",
        *[a for f in fields for a in ("-e", f)],
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def kernel_acks(run: Path) -> tuple[int, list[tuple[float, int]], float]:
    """ACKs of the data connection, their windows, and full segments per ACK in the first
    EARLY_S seconds of data (slow start, before any loss)."""
    pcap = next((run / "emu").glob("capture-*-rcv*.pcap"))
    rows = _tshark(
        pcap,
        ["frame.time_relative", "tcp.window_size"],
        f"tcp.srcport == 5201 && tcp.dstport == {DATA_PORT} && tcp.len == 0 && tcp.flags.syn == 0",
    )
    wins = [(float(t), int(w)) for t, w in rows]
    data = [
        float(t)
        for (t,) in _tshark(
            pcap,
            ["frame.time_relative"],
            f"tcp.dstport == 5201 && tcp.srcport == {DATA_PORT} && tcp.len >= 1000",
        )
    ]
    t0 = data[0]
    early_acks = sum(1 for t, _ in wins if t0 <= t < t0 + EARLY_S)
    early_segs = sum(1 for t in data if t < t0 + EARLY_S)
    return len(wins), wins, early_segs / max(early_acks, 1)


def summarize(run: Path, windows: bool) -> dict:
    meta = json.loads((run / "summary.json").read_text())
    fs = pq.read_table(run / "flow_series.parquet").to_pandas()
    fs = fs[fs.flow_id == 0].sort_values("t_s")
    # Align on the first bin with data delivered: the emulator's flow starts after iperf3's
    # control connection (several RTTs after t = 0).
    t0 = float(fs.t_s[fs.delivered_bytes >= 2 * 1448].iloc[0])
    fs = fs[fs.t_s >= t0].assign(t_s=lambda d: d.t_s - t0)
    ls = pq.read_table(run / "link_series.parquet").to_pandas()
    rate = float(ls[ls.dir == "ab"].capacity_bps.max())
    bin_s = float(fs.t_s.diff().dropna().iloc[0])
    cum = fs.delivered_bytes.cumsum()
    by = {s: int(cum[fs.t_s + bin_s <= s + 1e-9].iloc[-1]) for s in (2, 5, 10)}
    gp = (fs.delivered_bytes * 8 / bin_s).rolling(SUSTAIN_BINS).mean().shift(1 - SUSTAIN_BINS)
    full = fs.t_s[gp >= 0.9 * rate * PAYLOAD_SHARE]
    cwnd = {s: float(fs.cwnd_pkts[fs.t_s <= s].iloc[-1]) for s in (1, 2, 4)}
    emu = (run / "emu").is_dir()
    if emu:
        acks, wins, early = kernel_acks(run)
    else:
        back = ls[ls.dir == "ba"]
        acks, wins = int(back.tx_bytes.sum() // ACK_BYTES), []
        first = back[(back.t_s >= t0) & (back.t_s < t0 + EARLY_S)].tx_bytes.sum() / ACK_BYTES
        early = fs[fs.t_s < EARLY_S].delivered_bytes.sum() / 1448 / max(first, 1)
    segs = fs.delivered_bytes.sum() / 1448
    out = {
        "run": str(run),
        "engine": "emu" if emu else "sim",
        "t0_s": t0,
        "segs_per_ack": segs / max(acks, 1),
        "early_segs_per_ack": early,
        "MB_2s": by[2] / 1e6,
        "MB_5s": by[5] / 1e6,
        "MB_10s": by[10] / 1e6,
        "t90_s": float(full.iloc[0]) if len(full) else None,
        "cwnd_1s": cwnd[1],
        "cwnd_2s": cwnd[2],
        "cwnd_4s": cwnd[4],
        "acks": acks,
        "delivered_MB": meta["flows"][0]["delivered_bytes"] / 1e6 if "flows" in meta else None,
    }
    if windows and wins:
        out["windows"] = wins[:: max(1, len(wins) // 40)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--windows", action="store_true")
    args = ap.parse_args()
    print(
        f"{'run':44} {'eng':4} {'MB@2s':>7} {'MB@5s':>7} {'MB@10s':>7} {'t90%':>6} "
        f"{'cwnd1s':>7} {'cwnd2s':>7} {'cwnd4s':>7} {'ACKs':>7} {'seg/ACK':>7} {'early':>6} {'t0':>5}"
    )
    for d in args.dirs:
        r = summarize(d, args.windows)
        t90 = f"{r['t90_s']:.1f}" if r["t90_s"] is not None else "-"
        print(
            f"{Path(r['run']).name:44} {r['engine']:4} {r['MB_2s']:7.2f} {r['MB_5s']:7.2f} {r['MB_10s']:7.2f} "
            f"{t90:>6} {r['cwnd_1s']:7.0f} {r['cwnd_2s']:7.0f} {r['cwnd_4s']:7.0f} {r['acks']:7d} {r['segs_per_ack']:7.2f} {r['early_segs_per_ack']:6.2f} {r['t0_s']:5.1f}"
        )
        if "windows" in r:
            print("   windows (t s, bytes):", " ".join(f"{t:.2f}:{w}" for t, w in r["windows"]))


if __name__ == "__main__":
    main()
