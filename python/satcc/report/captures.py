"""A simulated and a kernel capture of the same scenario side by side (`satcc report SIM_DIR
--kernel EMU_DIR`): per TCP flow, its sequence/ACK graph from the simulator's capture
(SIM_DIR/sim/capture-*.pcapng, `satcc sim --capture`) beside the same flow's from the
emulator's tcpdump capture (EMU_DIR/emu/capture-*.pcap), both read by satcc's analyzer.

Files pair by name (the simulator names its node captures as the emulator names its own,
`capture-<node>-<name>`); flows pair by port, both engines numbering them alike (client port
40000 + flow id, server port 5201 + flow id: satcc.emu.traffic). A flow only one side has is
left out and said so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from satcc.errors import UserError
from satcc.report.figures.common import new_figure

CLIENT_PORT_BASE = 40000  # satcc.emu.traffic; satcc-sim capture.rs writes the same
SIM_GLOB, KERNEL_GLOB = "sim/capture-*.pcapng", "emu/capture-*.pcap*"


@dataclass
class Pair:
    """One capture point both runs captured."""

    name: str  # capture-<node>-<name>
    sim: Path
    kernel: Path


def pairs(sim_dir: Path, kernel_dir: Path) -> list[Pair]:
    """The captures both directories hold, by name; a UserError naming what is missing."""
    sims = {p.name.split(".")[0]: p for p in sorted(sim_dir.glob(SIM_GLOB))}
    kernels = {p.name.split(".")[0]: p for p in sorted(kernel_dir.glob(KERNEL_GLOB))}
    if not sims:
        raise UserError(f"{sim_dir}: expected simulator captures ({SIM_GLOB}), found none")
    if not kernels:
        raise UserError(f"{kernel_dir}: expected emulator captures ({KERNEL_GLOB}), found none")
    both = sorted(set(sims) & set(kernels))
    if not both:
        raise UserError(
            f"--kernel: expected a capture point both runs captured, found {', '.join(sims)} "
            f"in {sim_dir} and {', '.join(kernels)} in {kernel_dir}"
        )
    return [Pair(n, sims[n], kernels[n]) for n in both]


def _flows(path: Path) -> tuple[Any, dict[int, int]]:
    """The capture read with its packets, and {satcc flow id: analyzer flow id} of its TCP
    data directions (flow id from the client port)."""
    from satcc.analyze import read_capture

    cap = read_capture(path, packets=True)
    f = cap.flows
    data = f[(f["proto"] == "tcp") & (f["payload_bytes"] > 0)]
    return cap, {int(r.sport) - CLIENT_PORT_BASE: int(r.id) for r in data.itertuples()}


def draw(sim_dir: str | Path, kernel_dir: str | Path) -> list[tuple[str, str, str, Any]]:
    """Per flow both captures carry: (figure id, title, caption, matplotlib figure) with the
    simulator's sequence/ACK graph on the left and the kernel's on the right, same axes."""
    from satcc.analyze import seq_ack_graph

    out = []
    for pair in pairs(Path(sim_dir), Path(kernel_dir)):
        sim_cap, sim_ids = _flows(pair.sim)
        ker_cap, ker_ids = _flows(pair.kernel)
        only = sorted(set(sim_ids) ^ set(ker_ids))
        for fid in sorted(set(sim_ids) & set(ker_ids)):
            sides = [
                ("simulator", seq_ack_graph(sim_cap, sim_ids[fid])),
                ("kernel (emulator)", seq_ack_graph(ker_cap, ker_ids[fid])),
            ]
            fig, axs = new_figure(1, 2, sharex=True, sharey=True)
            for ax, (label, g) in zip(axs[0], sides, strict=True):
                _seqack(ax, g)
                ax.set_title(f"{label}: flow {fid}")
                ax.set_xlabel("time (s)")
            axs[0][0].set_ylabel("relative sequence number (MB)")
            axs[0][0].legend(loc="upper left", fontsize="small")
            caption = (
                f"Flow {fid} at {pair.name}: data segments (sequence number at each segment's "
                "start; retransmissions in red) and the ACK number of the ACKs going back, from "
                f"{pair.sim.name} and {pair.kernel.name}, each read by satcc analyze."
            )
            if only:
                caption += f" Flows in one capture only, left out: {', '.join(map(str, only))}."
            out.append((f"seqack_{pair.name}_flow{fid}", f"Sequence/ACK, flow {fid}", caption, fig))
    return out


def _seqack(ax: Any, g: Any) -> None:
    """One flow's sequence/ACK graph over the whole capture, in MB."""
    data = g[g["kind"] == "data"]
    acks = g[g["kind"] == "ack"]
    retx = data["retransmission"].fillna(False).astype(bool)
    ax.plot(data["t_s"], data["seq_rel"] / 1e6, ",", color="tab:blue", label="data")
    ax.plot(
        data["t_s"][retx], data["seq_rel"][retx] / 1e6, "x", color="tab:red", label="retransmitted"
    )
    ax.step(
        acks["t_s"], acks["ack_rel"] / 1e6, where="post", color="tab:green", lw=0.8, label="ACK"
    )
