"""`satcc trace fit` and the Starlink presets' within-epoch statistics (issue 26).

The recorded statistics (tests/data/tracefit/recorded-statistics.json) were computed by
satcc.tracefit from two public recordings named there (repo, commit, path); the recordings
themselves are not in this repository. The preset tests compute the same statistics from the
model's own output (the simulator's model sampled every ms) and compare them with the stated
tolerances.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from satcc import tracefit as tf
from satcc.cli import main
from satcc.linkmodels import STARLINK_CAPACITY_MBPS

from .helpers import requires_sim

DATA = Path(__file__).parent / "data"
RECORDED = json.loads((DATA / "tracefit" / "recorded-statistics.json").read_text())
LEOCC = RECORDED["leocc"]["statistics"]
LEONETEM = RECORDED["leonetem"]["statistics"]

# statistic: (recorded value, tolerance, "rel" or "abs"); why each tolerance in docs/starlink-fit.md
PRESET_TOLERANCES = {
    "cap_cv": (LEOCC["cap_cv"], 0.25, "rel"),
    "cap_corr": (LEOCC["cap_corr"], 0.15, "abs"),
    "frame_ms": (LEOCC["frame_ms"], 0.0, "abs"),
    "busy_ms_share": (LEOCC["busy_ms_share"], 0.08, "abs"),
    "rtt_sd": (LEOCC["rtt_sd"], 0.30, "rel"),
    "rtt_corr_10ms": (LEOCC["rtt_corr_10ms"], 0.15, "abs"),
    "boundary_outage_share": (LEOCC["boundary_outage_share"], 0.1, "abs"),
    # the lower and upper tail of the RTT around its epoch median (Vegas reads the lower one);
    # ± one step of the recording's whole-ms one-way delay (2 ms of RTT)
    "rtt_p01": (LEOCC["rtt_p01"], 2.0, "abs"),
    "rtt_p1": (LEOCC["rtt_p1"], 2.0, "abs"),
    "rtt_p99": (LEOCC["rtt_p99"], 2.0, "abs"),
    # the delivery gaps inside frames and the alternation of the spacings
    "gap_mean_ms": (LEOCC["gap_mean_ms"], 0.15, "rel"),
    "spacing_sd_ms": (LEOCC["spacing_sd_ms"], 0.3, "rel"),
    "cap_frame_cv": (LEOCC["cap_frame_cv"], 0.2, "rel"),
    # the alternation of the two windows' spacings (lag 1) and how long the second keeps its
    # place (lag 2); the recording's halves: -0.25 / -0.47 and 0.61 / 0.52
    "spacing_corr": (LEOCC["spacing_corr"], 0.15, "abs"),
    "spacing_corr2": (LEOCC["spacing_corr2"], 0.15, "abs"),
    # rtt_jump is the recording's dish's, not the plans': asserted for a fit of the recording
}
# the model's delay is continuous; the LeoCC recording's is whole ms: compare at its resolution
RESOLUTION = LEOCC["delay_resolution_ms"]


def close(got: float, want: float, tol: float, kind: str) -> bool:
    return abs(got - want) <= (tol * abs(want) if kind == "rel" else tol)


def starlink_model(plan: str, role: str) -> dict:
    """The preset for one direction as a `[link.model]` table whose a→b is that direction."""
    return {"kind": "starlink", "plan": plan, "dish": "a" if role == "uplink" else "b"}


@requires_sim
@pytest.mark.parametrize("plan, role", sorted(STARLINK_CAPACITY_MBPS))
def test_each_presets_within_epoch_statistics_match_the_recording(plan, role):
    got = tf.model_statistics(starlink_model(plan, role), 300, delay_resolution_ms=RESOLUTION)
    misses = []
    for key, (want, tol, kind) in PRESET_TOLERANCES.items():
        if not close(got[key], want, tol, kind):
            misses.append(f"{key}: model {got[key]:.4g}, recorded {want:.4g} (±{tol} {kind})")
    # outages at boundaries as long as LeoCC's (58-134 ms), within one 10 ms slot
    assert 48 <= got["boundary_outage_min_ms"] and got["boundary_outage_max_ms"] <= 144
    # the plan's contract range, not the recording's dish, sets the epoch capacities
    lo, hi = STARLINK_CAPACITY_MBPS[(plan, role)]
    assert lo * 0.7 <= got["cap_epoch_min"] and got["cap_epoch_max"] <= hi * 1.3
    assert not misses, misses


def test_the_roam_plan_differs_from_residential_as_the_recording_says():
    """Laniewski et al. (sys-uos/Starlink-on-the-Autobahn, one site, 1 s iperf3 means): Roam
    carries 0.877 (down) and 0.797 (up) of Standard; their RTT and loss do not differ."""
    plans = RECORDED["autobahn"]["statistics"]
    for role, key in (("downlink", "down"), ("uplink", "up")):
        want = plans[f"roam_{key}_mean_mbps"] / plans[f"standard_{key}_mean_mbps"]
        roam, res = (
            STARLINK_CAPACITY_MBPS[("roam", role)],
            STARLINK_CAPACITY_MBPS[("residential", role)],
        )
        assert abs(sum(roam) / sum(res) - want) < 0.03, (role, roam, res, want)
    rtt = plans["roam_rtt_p50_ms"] / plans["standard_rtt_p50_ms"]
    assert abs(rtt - 1) < 0.05  # the presets share the RTT law: the data show no difference


@requires_sim
def test_the_floor_bounds_the_delay_and_the_frames_serve_twice():
    s = tf.model_samples(starlink_model("residential", "uplink"), 60)
    t, d = s["t_ns"] / 1e9, s["delay_ns"] / 1e6
    from satcc.linkmodels import STARLINK_INTRA

    floor = STARLINK_INTRA["jitter_floor_ns"] / 1e6
    for k in range(3):
        seg = d[(t >= 12.3 + 15 * k) & (t < 27 + 15 * k)]
        # the jitter is clipped at the floor: a point mass there (the Gaussian's 8.5 % below
        # -2 ms / 1.46 ms), about `floor` below the epoch's median (the base)
        lo = seg.min()
        assert (seg <= lo + 1e-6).mean() > 0.03
        assert abs(np.median(seg) - lo - floor) < 0.3
    got = tf.model_statistics(starlink_model("residential", "uplink"), 120)
    assert got["spacing_mean_ms"] < 0.75 * got["frame_ms"]


@requires_sim
def test_a_presets_round_trip_meets_the_recordings_burst_rate_once():
    """LEONetEM's in-epoch bursts (0.013/s) are a ping's: a round trip meets both directions'
    bursts, and each direction draws its own, so the preset's round trip must show the
    recording's rate, not twice it (the preset once carried 0.013/s per direction: 0.021-0.023/s
    over a round trip, seeds 1-3, 1200 s). Within two Poisson standard deviations of the count
    the recording's rate gives in 1200 s (15.6 bursts: 7.7-23.5)."""
    seconds = 1200
    got = tf.model_statistics(starlink_model("residential", "uplink"), seconds, round_trip=True)
    want = LEONETEM["bursts_per_s"] * seconds
    assert abs(got["bursts_per_s"] * seconds - want) <= 2 * want**0.5, got["bursts_per_s"]


@requires_sim
def test_the_steady_variation_has_none_of_it():
    got = tf.model_statistics(
        {**starlink_model("residential", "uplink"), "variation": "epoch"}, 120
    )
    assert got["cap_cv"] < 0.02 and got["rtt_sd"] == 0.0 and got["frame_ms"] == 0.0


def test_an_epochs_rtt_level_is_not_held_to_the_recordings_ms_grid():
    """Whole-ms delays put an epoch's median on the grid (LeoCC: 20 or 22 ms of RTT, steps of 0
    or 2 ms); the level is a trimmed mean, which the jitter dithers off the grid."""
    rng = np.random.default_rng(5)
    t = np.arange(0, 120_000, 10.0)
    level = np.where((t - 12_000) % 30_000 < 15_000, 10.3, 11.1)  # one way, ms; alternating
    level[t < 12_000] = 11.1
    rec = tf.Recording("synthetic", delay_t_ms=t)
    rec.delay_ms = np.round(level + rng.normal(0, 1.5, len(t)))
    got = tf.delay_statistics(rec, 12_000)
    assert got["delay_resolution_ms"] == 1.0
    assert abs(got["rtt_epoch_p0"] - 20.6) < 0.3 and abs(got["rtt_epoch_p100"] - 22.2) < 0.3
    assert abs(got["rtt_jump"] - 1.6) < 0.3  # the median's: 0 or 2


@requires_sim
def test_a_fit_of_the_recording_draws_its_epoch_levels_and_their_jump():
    """The model fitted to LeoCC's statistics, sampled in 120 s windows as long as the
    recording (7 epochs, 6 steps; seeds 1-20): the recording's median step between epoch levels
    (1.72 ms) lies between the windows' p10 and p90, and its median level within 1 ms of theirs."""
    model, _ = tf.fit(LEOCC)
    jumps, mids = [], []
    for seed in range(1, 21):
        got = tf.model_statistics(model, 120, seed=seed, delay_resolution_ms=RESOLUTION)
        jumps.append(got["rtt_jump"])
        mids.append(got["rtt_epoch_p50"])
    lo, hi = np.percentile(jumps, [10, 90])
    assert lo <= LEOCC["rtt_jump"] <= hi, (lo, hi)
    assert abs(float(np.median(mids)) - LEOCC["rtt_epoch_p50"]) <= 1.0


def synthetic_trace(seconds: int, seed: int = 3) -> np.ndarray:
    """Per-ms deliveries: epochs at 12 s + 15 k of 20-40 Mbit/s, 100 ms bins varying ±20 %,
    delivered in one 1 ms burst every 6 ms, a 80 ms gap at each boundary."""
    rng = np.random.default_rng(seed)
    n = seconds * 1000
    rate = np.zeros(n)
    bounds = list(range(12_000 - 15_000, n, 15_000))
    for b in bounds:
        c = rng.uniform(20e6, 40e6)
        for s in range(max(b, 0), min(b + 15_000, n), 100):
            rate[s : s + 100] = c * rng.uniform(0.8, 1.2)
        rate[max(b, 0) : max(b + 80, 0)] = 0
    cap = np.zeros(n)
    for f in range(0, n, 6):
        cap[f] = rate[f : f + 6].sum() / 1000 / 8
    return cap


def test_fit_recovers_a_synthetic_paths_structure():
    rec = tf.Recording("synthetic", cap_ms=synthetic_trace(120))
    stats = tf.statistics(rec, tf.find_phase(rec))
    assert tf.find_phase(rec) == 12_000
    assert stats["frame_ms"] == 6.0
    assert stats["boundary_outage_share"] == 1.0
    assert 79 <= stats["boundary_outage_min_ms"] <= stats["boundary_outage_max_ms"] <= 85
    # uniform ±20 %: sd / mean = 0.4 / sqrt(12) = 0.115; independent bins
    assert abs(stats["cap_cv"] - 0.115) < 0.015 and abs(stats["cap_corr"]) < 0.1
    model, missing = tf.fit(stats)
    assert model["frame"] == "6 ms"
    assert any("rtt_quantiles" in m for m in missing)


def test_loss_runs_at_boundaries_are_outages_and_the_others_bursts():
    t = np.arange(0, 60_000, 10.0)
    lost = np.zeros(len(t), bool)
    for b in (12_000, 27_000, 42_000, 57_000):
        lost[b // 10 : b // 10 + 20] = True  # 200 ms at each boundary
    lost[2000:2005] = True  # a 50 ms burst inside an epoch
    lost[3000] = lost[4000] = True  # two isolated losses
    s = tf.loss_statistics(lost, t, 0.01, 12_000)
    assert s["loss_outage_share"] == 1.0 and s["loss_outage_min_ms"] == 200
    assert s["bursts_per_s"] == pytest.approx(1 / 60) and s["burst_ms"] == 50
    assert s["loss_isolated"] == pytest.approx(2 / 6000)


def write_ping(path: Path, seconds: int = 40, lost_at=(12.0, 27.0)) -> None:
    """A ping -D -i 0.05 log starting at :00 past the minute: RTT 40 ms stepping to 48 ms at each
    boundary, the 200 ms after each boundary in `lost_at` lost."""
    lines = ["PING 100.64.0.1 (100.64.0.1) 56(84) bytes of data."]
    t0 = 1_700_000_040.0  # a minute's :00
    for seq in range(1, seconds * 20 + 1):
        t = (seq - 1) * 0.05
        if any(b <= t < b + 0.2 for b in lost_at):
            continue
        rtt = 40.0 + 8 * (t >= 12) - 8 * (t >= 27) + (seq % 3)
        lines.append(
            f"[{t0 + t + rtt / 1000:.6f}] 64 bytes from 100.64.0.1: icmp_seq={seq} ttl=63 "
            f"time={rtt:.1f} ms"
        )
    path.write_text("\n".join(lines) + "\n")


def test_fit_reads_a_ping_log_on_the_wall_clock(tmp_path, capsys):
    p = tmp_path / "ping.txt"
    write_ping(p)
    assert main(["trace", "fit", str(p), "--no-check"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(
        "# fitted by satcc trace fit from ping.txt: delay and loss only (no delivery series)\n"
        "[link.model]\n"
    )
    assert "first at 12 s into the recording (wall clock)" in err
    assert "outage_probability = 1.0" in out and 'disturbance = ["200 ms", "200 ms"]' in out
    assert "not fitted (preset value kept): capacity" in err


def iperf3_doc(seconds: int = 60, side: str = "udp_server", reverse: bool = False) -> dict:
    """A synthesised iperf3 -J document of `seconds` 1 s intervals from a real one's layout
    (tests/data/iperf3/): 20 Mbit/s in the epochs from 12 s + 30 k s, 40 Mbit/s in the others."""
    doc = json.loads((DATA / "iperf3" / f"{side}.json").read_text())
    doc["start"]["test_start"]["reverse"] = int(reverse)
    iv = doc["intervals"][0]
    doc["intervals"] = []
    for k in range(seconds):
        s = json.loads(json.dumps(iv))
        for st in [*s["streams"], s["sum"]]:
            st["start"], st["end"], st["seconds"] = k, k + 1, 1
            st["bytes"] = 2_500_000 if (k - 12) // 15 % 2 == 0 else 5_000_000
        doc["intervals"].append(s)
    return doc


# iperf3_doc()'s fitted range: its pieces are 40 (the 12 s before the first boundary), 20, 40,
# 20 Mbit/s (the last 3 s are too short a piece); a range as wide as they spread, centred on
# what they delivered: (12 x 40 + 15 x 80) / 57 = 29.47 Mbit/s
IPERF3_FIT = ["19.5 Mbit/s", "39.5 Mbit/s"]


def test_fit_reads_an_iperf3_document_at_its_resolution(tmp_path, capsys):
    p = tmp_path / "run.json"
    p.write_text(json.dumps(iperf3_doc()))
    assert main(["trace", "fit", str(p), "--no-check"]) == 0
    out, err = capsys.readouterr()
    assert 'capacity = ["19.5 Mbit/s", "39.5 Mbit/s"]' in out  # IPERF3_FIT
    assert "first at 12 s into the recording (fitted)" in err
    assert "capacity_sigma, capacity_corr (needs delivery at <= 100 ms)" in err


@requires_sim
def test_fit_round_trips_an_exported_model_with_its_quality_on_stderr(tmp_path, capsys):
    """Export 120 s of a fitted-style model with `satcc trace export`, fit the files, and get
    the within-epoch knobs back."""
    scen = tmp_path / "s.toml"
    scen.write_text(
        '[scenario]\nduration = "120 s"\nseed = 5\n[[link]]\na = "a"\nb = "b"\n'
        '[link.model]\nkind = "starlink"\ncapacity = ["30 Mbit/s", "50 Mbit/s"]\n'
        'capacity_sigma = 0.2\ncapacity_corr = 0.5\nframe = "8 ms"\njitter = "2 ms"\n'
        'jitter_corr = 0.6\n[[flow]]\nfrom = "a"\nto = "b"\ncca = "cubic"\nstart = "119 s"\n'
    )
    assert main(["trace", "export", str(scen), "--out", str(tmp_path), "--dir", "ab"]) == 0
    capsys.readouterr()
    mm, csv = tmp_path / "link0-ab.mahimahi", tmp_path / "link0-ab.csv"
    out_file = tmp_path / "fit.toml"
    assert main(["trace", "fit", str(mm), "--delay", str(csv), "--out", str(out_file)]) == 0
    _, err = capsys.readouterr()
    import tomllib

    got = tomllib.loads(out_file.read_text())["link"]["model"]
    assert got["frame"] == "8 ms"
    assert abs(got["capacity_sigma"] - 0.2) < 0.04, got
    assert abs(got["capacity_corr"] - 0.5) < 0.15, got
    assert abs(float(got["jitter"].split()[0]) - 2.0) < 0.4, got
    assert abs(got["jitter_corr"] - 0.6) < 0.15, got
    assert "statistic" in err and "cap_cv" in err


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"", "found none of these"),
        (b"\x00\x01binary\xff\xfe", "found binary data"),
        (b"{not json", "expected iperf3 JSON (-J or --json-stream), found invalid JSON"),
        (b'{"a": 1}', "expected an iperf3 -J or --json-stream document"),
        (b"hello world\n", "found none of these"),
        (b"5\n3\n", "timestamps must be non-decreasing"),
        (b"1\n2\n3\n", "too short to fit"),
    ],
)
def test_bad_recordings_get_one_clear_line_and_exit_2(tmp_path, capsys, content, expected):
    p = tmp_path / "rec.txt"
    p.write_bytes(content)
    assert main(["trace", "fit", str(p), "--no-check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0] and "rec.txt" in err[0], err


def test_a_missing_file_and_a_bad_delay_file_are_named(tmp_path, capsys):
    assert main(["trace", "fit", str(tmp_path / "nope.txt")]) == 2
    assert "nope.txt: expected a recording file, found no such file" in capsys.readouterr().err
    mm = tmp_path / "t.mahimahi"
    mm.write_text("\n".join(str(k) for k in range(1, 40_000, 2)) + "\n")
    bad = tmp_path / "d.csv"
    bad.write_text("t_ms,delay_ms\n0,abc\n")
    assert main(["trace", "fit", str(mm), "--delay", str(bad), "--no-check"]) == 2
    assert "d.csv" in capsys.readouterr().err


def test_a_fifo_is_refused_without_blocking(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "rec.fifo")
    assert main(["trace", "fit", str(tmp_path / "rec.fifo")]) == 2
    assert "rec.fifo: expected a recording file (a regular file)" in capsys.readouterr().err


def test_same_recording_gives_identical_output(tmp_path, capsys):
    p = tmp_path / "ping.txt"
    write_ping(p)
    outs = []
    for _ in range(2):
        assert main(["trace", "fit", str(p), "--no-check"]) == 0
        outs.append(capsys.readouterr())
    assert outs[0] == outs[1]
    assert not math.isnan(len(outs[0].out))


def test_fit_reads_a_capture_of_a_saturating_flow(tmp_path, capsys):
    """A hand-built pcap: 4 segments of 1448 B every 8 ms for 32 s, nothing for the 100 ms
    after each boundary (12 s, 27 s): the fit finds the frames and the outages."""
    from satcc.analyze.synth import Conversation, write_pcap

    conv = Conversation(v6=False)
    pkts = [conv.syn(t=0.0), conv.synack(t=0.001), conv.ack(t=0.002)]
    seq = 1
    for f in range(1, 4000):
        t = f * 0.008
        if any(b <= t < b + 0.1 for b in (12.0, 27.0)):
            continue
        for k in range(4):
            pkts.append(conv.data(t=t + k * 1e-5, seq=seq, n=1448))
            seq += 1448
    p = write_pcap(tmp_path / "cap.pcap", pkts)
    assert main(["trace", "fit", str(p), "--no-check"]) == 0
    out, err = capsys.readouterr()
    assert 'frame = "8 ms"' in out and "outage_probability = 1.0" in out, out + err
    assert "first at 12 s into the recording (fitted)" in err


# -- input handling (issue 41): each case a new user met ----------------------------------------


def fit_cli(tmp_path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["trace", "fit", *args, "--no-check"])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_recordings_shorter_than_an_epoch_are_refused(tmp_path, capsys):
    """A 5 s Mahimahi trace, a 2 s iperf3 run and a 0.24 s ping log: one line each, exit 2."""
    mm = tmp_path / "short.mahimahi"
    mm.write_text("\n".join(str(k) for k in range(1, 5000, 3)) + "\n")
    run = tmp_path / "short.json"
    run.write_text(json.dumps(iperf3_doc(seconds=2)))
    ping = tmp_path / "short-ping.txt"
    ping.write_text(
        "\n".join(
            f"[{1_700_000_040 + k * 0.02:.6f}] 64 bytes from 1.1.1.1: icmp_seq={k + 1} ttl=57 "
            "time=30.1 ms"
            for k in range(12)
        )
        + "\n"
    )
    for path, seconds in ((mm, "5"), (run, "2"), (ping, "0.22")):
        code, out, err = fit_cli(tmp_path, capsys, str(path))
        line = one_line(err)
        assert code == 2 and out == ""
        assert f"{path.name}: too short to fit: {seconds} s of" in line, line
        assert "needs at least one whole 15 s epoch" in line


def test_a_recording_holding_no_whole_epoch_is_refused(tmp_path, capsys):
    """20 s of pings starting at :00 past the minute: the boundary at :12 leaves no whole epoch."""
    p = tmp_path / "ping.txt"
    write_ping(p, seconds=20, lost_at=())
    code, _, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 2 and "holds no whole 15 s epoch (first boundary at 12 s)" in one_line(err)


def json_stream(doc: dict) -> str:
    """The same run as iperf3 --json-stream writes it: one event a line."""
    events = [{"event": "start", "data": doc["start"]}]
    events += [{"event": "interval", "data": iv} for iv in doc["intervals"]]
    events.append({"event": "end", "data": doc["end"]})
    return "\n".join(json.dumps(e) for e in events) + "\n"


def test_an_iperf3_json_stream_is_read_as_its_json(tmp_path, capsys):
    doc = iperf3_doc()
    (tmp_path / "run.json").write_text(json.dumps(doc))
    (tmp_path / "stream.json").write_text(json_stream(doc))
    code, out_j, _ = fit_cli(tmp_path, capsys, str(tmp_path / "run.json"))
    code_s, out_s, err_s = fit_cli(tmp_path, capsys, str(tmp_path / "stream.json"))
    assert code == code_s == 0, err_s
    assert out_s.split("\n", 1)[1] == out_j.split("\n", 1)[1]
    assert "read as: iperf3 UDP server JSON" in err_s


def test_a_leoreplayer_delay_file_is_read_as_delays(tmp_path, capsys):
    """LeoReplayer's delay file (one whole-ms one-way delay per 10 ms, synthesised: 40 s around
    10-12 ms, a level per epoch) is a delay series, not a Mahimahi trace."""
    rng = np.random.default_rng(4)
    t = np.arange(4000) * 10
    level = np.where(((t - 12_000) // 15_000) % 2 == 0, 10, 12)
    vals = level + rng.integers(-1, 2, len(t))
    p = tmp_path / "delay_example.txt"
    p.write_text("\n".join(str(v) for v in vals) + "\n")
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 0, err
    assert "read as: LeoReplayer delay file" in err
    assert "rtt_quantiles" in out and "frame" not in out
    assert "capacity (no delivery series" in err


def test_a_udp_senders_json_is_refused_as_offered_load(tmp_path, capsys):
    p = tmp_path / "sender.json"
    p.write_text(json.dumps(iperf3_doc(side="udp_client")))
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    line = one_line(err)
    assert code == 2 and "sender.json: expected the receiving side of a UDP run" in line
    assert "offered load, not the path's capacity" in line
    # the same client with -R receives: its intervals are the downlink's delivery
    doc = iperf3_doc(side="udp_client", reverse=True)
    p.write_text(json.dumps(doc))
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 0 and 'capacity_ba = ["19.5 Mbit/s", "39.5 Mbit/s"]' in out, err


def test_the_table_names_its_direction_and_the_other_keeps_its_plan(tmp_path, capsys):
    import tomllib

    from satcc.linkmodels import STARLINK_CAPACITY_MBPS, STARLINK_LOSS

    p = tmp_path / "run.json"
    p.write_text(json.dumps(iperf3_doc(side="udp_client", reverse=True)))  # a -R client: down
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 0
    assert out.startswith("# fitted by satcc trace fit from run.json: downlink (capacity_ba)\n")
    m = tomllib.loads(out)["link"]["model"]
    up_lo, up_hi = STARLINK_CAPACITY_MBPS[("residential", "uplink")]
    assert m["dish"] == "a" and m["capacity_ba"] == IPERF3_FIT
    assert m["capacity"] == [f"{up_lo:.3g} Mbit/s", f"{up_hi:.3g} Mbit/s"]
    # no probes: each direction's loss is its preset, written out (loss_ba defaults to loss)
    assert m["loss"] == list(STARLINK_LOSS["uplink"])
    assert m["loss_ba"] == list(STARLINK_LOSS["downlink"])
    assert "fitted direction: downlink; the other keeps the residential preset" in err
    # --dir up puts it on a→b
    code, out, err = fit_cli(tmp_path, capsys, str(p), "--dir", "up")
    m = tomllib.loads(out)["link"]["model"]
    assert m["capacity"] == IPERF3_FIT and m["capacity_ba"] != m["capacity"]
    assert "--dir up overrides the iperf3 UDP client JSON's own direction (down)" in err
    # a trace that does not say: the downlink, said so
    mm = tmp_path / "t.mahimahi"
    mm.write_text("\n".join(str(k) for k in range(1, 40_000, 2)) + "\n")
    code, out, err = fit_cli(tmp_path, capsys, str(mm))
    assert "does not say its direction: taken as the downlink (--dir up)" in err
    assert "capacity_ba" in out


def test_a_pings_round_trip_loss_is_split_over_both_directions(tmp_path, capsys):
    import tomllib

    p = tmp_path / "ping.txt"
    write_ping(p, seconds=60, lost_at=())
    lines = p.read_text().splitlines()
    kept = [ln for k, ln in enumerate(lines) if k == 0 or k % 100 != 50]  # 1 % isolated losses
    p.write_text("\n".join(kept) + "\n")
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 0, err
    m = tomllib.loads(out)["link"]["model"]
    rt = 12 / 1200
    q = 1 - math.sqrt(1 - rt)
    assert m["loss"] == m["loss_ba"] == [pytest.approx(q, abs=1e-6)] * 2
    assert "in-epoch probe loss: round trip 0.01 split over both directions" in err
    assert "capacity" not in m and out.startswith(
        "# fitted by satcc trace fit from ping.txt: delay and loss only"
    )


def test_a_csv_header_says_rtt_or_one_way(tmp_path, capsys):
    """t_ms,rtt_ms is a round trip: its RTT level is the rows' value, not twice it."""
    t = np.arange(0, 45_000, 10)
    rows = [f"{x},{40 + (x // 1000) % 2}" for x in t]
    for header, level in (("t_ms,rtt_ms", 40.5), ("t_ms,delay_ms", 81.0)):
        p = tmp_path / "d.csv"
        p.write_text(header + "\n" + "\n".join(rows) + "\n")
        code, out, err = fit_cli(tmp_path, capsys, str(p))
        assert code == 0, err
        med = float(out.split("rtt_quantiles = ")[1].split('"')[5].split()[0])
        assert abs(med - level) < 1.0, (header, med)
    p.write_text("t_ms,latency\n0,20\n10,21\n")
    code, _, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 2
    assert "d.csv: line 1: expected a header t_ms,delay_ms (one-way) or t_ms,rtt_ms" in err


def test_jitter_corr_is_not_fitted_from_sparse_pings(tmp_path, capsys):
    """Pings 50 ms apart fill the 10 ms grid by holding each RTT: no jitter_corr from them."""
    p = tmp_path / "ping.txt"
    write_ping(p)
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 0 and "jitter_corr" not in out
    assert "jitter_corr (delay samples 50 ms apart; needs <= 10 ms)" in err
    rec = tf.read_recording(p)
    assert "rtt_corr_10ms" not in tf.statistics(rec, tf.find_phase(rec))
    # pings 10 ms apart (their stamps a little off the grid) measure it
    t = np.arange(6000) * 10.02
    dense = tf.Recording("dense", delay_t_ms=t, delay_ms=20 + np.random.default_rng(1).random(6000))
    assert "rtt_corr_10ms" in tf.delay_statistics(dense, 12_000)


def test_a_ping_log_is_a_delay_series_beside_an_iperf3_run(tmp_path, capsys):
    """--delay ping.log with an iperf3 JSON: capacity from the run, delay and loss from the
    pings, placed by their wall clocks."""
    import tomllib

    doc = iperf3_doc(seconds=60, side="udp_client", reverse=True)
    doc["start"]["timestamp"]["timesecs"] = 1_700_000_040
    run = tmp_path / "run.json"
    run.write_text(json.dumps(doc))
    ping = tmp_path / "ping.log"
    write_ping(ping, seconds=60)
    code, out, err = fit_cli(tmp_path, capsys, str(run), "--delay", str(ping))
    assert code == 0, err
    m = tomllib.loads(out)["link"]["model"]
    assert m["capacity_ba"] == IPERF3_FIT
    assert "rtt_quantiles" in m and "loss_ba" in m and m["outage_probability"] > 0
    assert "first at 12 s into the recording (wall clock)" in err
    assert "placed on the recording's clock by their wall clocks" in err


def test_a_delay_file_without_delays_is_refused(tmp_path, capsys):
    run = tmp_path / "run.json"
    run.write_text(json.dumps(iperf3_doc()))
    code, _, err = fit_cli(tmp_path, capsys, str(run), "--delay", str(run))
    assert code == 2
    assert "run.json: expected a delay series (--delay" in one_line(err)


def test_stderr_marks_each_statistic_the_fit_misses(tmp_path, capsys, monkeypatch):
    assert tf.misses({"rtt_jump": 28.3, "cap_cv": 0.2}, {"rtt_jump": 12.1, "cap_cv": 0.21}) == [
        "rtt_jump 28.3 vs 12.1"
    ]
    # a rate of counted events: two Poisson sd of its count (0 vs 0.8 bursts in 60 s is none)
    probes = {"probes": 6000.0, "probe_interval_s": 0.01}
    assert tf.misses(probes | {"bursts_per_s": 0.0}, {"bursts_per_s": 0.0133}) == []
    assert tf.misses(probes | {"loss": 0.0}, {"loss": 0.01}) == ["loss 0 vs 0.01"]
    p = tmp_path / "ping.txt"
    write_ping(p, seconds=60)

    def fake_refine(model, stats, **_kw):
        return model, dict(stats, rtt_jump=stats["rtt_jump"] + 5)

    monkeypatch.setattr(tf, "refine", fake_refine)
    assert main(["trace", "fit", str(p)]) == 0
    err = capsys.readouterr().err
    jump = next(ln for ln in err.splitlines() if ln.startswith("rtt_jump"))
    assert jump.endswith("  miss")
    assert "the fit misses 1: rtt_jump" in err
    assert not any(ln.endswith("miss") for ln in err.splitlines() if ln.startswith("rtt_sd"))


def test_help_states_the_rounds_refine_runs(capsys):
    import inspect
    import re

    with pytest.raises(SystemExit):
        main(["trace", "fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    words = {"three": 3, "four": 4, "five": 5, "six": 6}
    said = re.search(r"\((\w+) rounds", text)
    assert said, text
    assert words[said.group(1)] == inspect.signature(tf.refine).parameters["rounds"].default


def write_irtt(path: Path, seconds: int = 60, lost: dict | None = None) -> None:
    """A synthesised `irtt client -i 10ms -o` JSON in IRTT 0.9's layout (round_trips with
    seqno, lost, client/server timestamps, delay, ipdv), started at a minute's :00: RTT 40 ms
    stepping to 48 ms in alternate epochs; `lost` maps seqno to IRTT's lost value."""
    lost = lost or {}
    t0 = 1_700_000_040 * 10**9
    rts = []
    for k in range(seconds * 100):
        send = t0 + k * 10**7
        rtt = int((40 + 8 * (((k / 100 - 12) // 15) % 2) + (k % 3) * 0.5) * 1e6)
        state = lost.get(k, "false")
        client = {"send": {"wall": send, "monotonic": k * 10**7}}
        if state == "false":
            client["receive"] = {"wall": send + rtt, "monotonic": k * 10**7 + rtt}
        rts.append(
            {
                "seqno": k,
                "lost": state,
                "timestamps": {"client": client, "server": {}, "Ecn": 0},
                "delay": {"rtt": rtt} if state == "false" else {},
                "ipdv": {},
            }
        )
    doc = {"version": {"irtt": "0.9.0"}, "config": {}, "stats": {}, "round_trips": rts}
    path.write_text(json.dumps(doc))


def test_fit_reads_an_irtt_json_and_splits_its_loss_by_way(tmp_path, capsys):
    import gzip
    import tomllib

    # 30 in-epoch single losses: 20 upstream, 5 downstream, 5 of unknown way
    lost = {200 * j + 1350: "true_up" for j in range(20)}
    lost |= {200 * j + 1450: "true_down" for j in range(5)}
    lost |= {200 * j + 2450: "true" for j in range(5)}
    p = tmp_path / "irtt.json"
    write_irtt(p, lost=lost)
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 0, err
    assert "read as: IRTT JSON" in err and "(wall clock)" in err
    m = tomllib.loads(out)["link"]["model"]
    p_rt, up = 30 / 6000, (20 + 2.5) / 30
    assert m["loss"][0] == pytest.approx(1 - (1 - p_rt) ** up, abs=1e-6)
    assert m["loss_ba"][0] == pytest.approx(1 - (1 - p_rt) ** (1 - up), abs=1e-6)
    assert m["loss"][0] > 2 * m["loss_ba"][0]
    assert "jitter_corr" in m  # probes 10 ms apart
    med = float(m["rtt_quantiles"][2].split()[0])
    assert 40 <= med <= 49
    # irtt's default output is gzipped (.json.gz): read the same
    gz = tmp_path / "irtt.json.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    code, out_gz, _ = fit_cli(tmp_path, capsys, str(gz))
    assert code == 0 and out_gz.split("\n", 1)[1] == out.split("\n", 1)[1]


def test_a_malformed_irtt_json_is_named_by_its_key(tmp_path, capsys):
    p = tmp_path / "irtt.json"
    write_irtt(p, seconds=1)
    doc = json.loads(p.read_text())
    doc["round_trips"][3]["lost"] = "maybe"
    p.write_text(json.dumps(doc))
    code, _, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 2
    assert "irtt.json: round_trips[3].lost: expected false, true, true_up or true_down" in one_line(
        err
    )
    write_irtt(p, seconds=5)
    code, _, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 2 and "too short to fit: 4.99 s of IRTT JSON" in one_line(err)


def write_grpc_history(path: Path, seconds: int = 90, drop_at_boundary: float = 0.1) -> None:
    """A synthesised `dish_grpc_text.py bulk_history` CSV (starlink-grpc-tools' columns), one
    row a second from a minute's :00: latency 30 ms in even epochs, 38 ms in odd ones (a mean
    a second), ping drop `drop_at_boundary` in the second after each boundary (:12, :27 ...),
    0.5 % in every 10th other second, none otherwise; an idle dish's usage as throughput."""
    from datetime import UTC, datetime

    head = (
        "datetimestamp_utc,pop_ping_drop_rate,pop_ping_latency_ms,downlink_throughput_bps,"
        "uplink_throughput_bps,snr,scheduled,obstructed"
    )
    rows = [head]
    t0 = 1_700_000_040  # a minute's :00
    for k in range(seconds):
        stamp = datetime.fromtimestamp(t0 + k + 1, UTC).replace(tzinfo=None).isoformat()
        drop = drop_at_boundary if (k - 12) % 15 == 0 else (0.005 if k % 10 == 5 else 0.0)
        lat = 30.0 + 8 * (((k - 12) // 15) % 2) + (k % 2) * 0.4
        rows.append(f"{stamp},{drop},{lat},{13000 + k},{2400 + k},,True,False")
    path.write_text("\n".join(rows) + "\n")


def test_fit_reads_the_dishs_grpc_history(tmp_path, capsys):
    import tomllib

    p = tmp_path / "history.csv"
    write_grpc_history(p)
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 0, err
    assert "read as: starlink-grpc-tools history CSV" in err and "(wall clock)" in err
    assert "throughput columns are its usage, not its capacity" in err
    m = tomllib.loads(out)["link"]["model"]
    assert "capacity" not in m and "jitter" not in m
    assert "jitter, jitter_corr, jitter_floor (delay samples are 1000 ms means)" in err
    assert m["rtt_quantiles"][0].startswith("30") and m["rtt_quantiles"][-1].startswith("38")
    # every boundary second lost a tenth of its pings: a 100 ms outage at each
    assert m["outage_probability"] == 1.0 and m["disturbance"] == ["100 ms", "100 ms"]
    # the floor: 9 seconds of 0.5 % among the 84 holding no boundary, split over both ways
    q = 1 - math.sqrt(1 - 9 * 0.005 / 84)
    assert m["loss"][0] == pytest.approx(q, abs=1e-6) and m["loss_ba"] == m["loss"]


def test_a_grpc_history_without_its_columns_is_refused(tmp_path, capsys):
    p = tmp_path / "history.csv"
    p.write_text("datetimestamp_utc,snr\n2023-11-14T22:14:01,9.5\n")
    code, _, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 2
    assert "history.csv: line 1: expected starlink-grpc-tools bulk_history columns" in one_line(err)


def _ping_lines(tmp_path: Path) -> list[str]:
    p = tmp_path / "ping.txt"
    write_ping(p, seconds=60)
    return p.read_text().splitlines()


def _irtt_text(tmp_path: Path) -> str:
    p = tmp_path / "irtt.json"
    write_irtt(p)
    return p.read_text()


def _irtt_without_clock(tmp_path: Path) -> str:
    doc = json.loads(_irtt_text(tmp_path))
    del doc["round_trips"][5]["timestamps"]
    return json.dumps(doc)


def _iperf3_bad_bytes() -> str:
    doc = iperf3_doc()
    doc["intervals"][3]["streams"][0]["bytes"] = "x"
    return json.dumps(doc)


def _history_lines(tmp_path: Path) -> list[str]:
    p = tmp_path / "history.csv"
    write_grpc_history(p)
    return p.read_text().splitlines()


def _stream_lines() -> list[str]:
    return json_stream(iperf3_doc()).splitlines()


# Each reader of what dish owners have, given a malformed, a too short and (where a file says
# its direction) a wrong-direction file: (file name, its text, what the one line must say)
BAD_INPUTS = {
    "ping without -D stamps": (
        "ping.txt",
        lambda tp: "\n".join(ln.split("] ", 1)[-1] for ln in _ping_lines(tp)),
        "ping.txt: expected ping -D timestamps ([epoch] before each reply)",
    ),
    "ping of 4 probes": (
        "ping.txt",
        lambda tp: "\n".join(_ping_lines(tp)[:5]),
        "ping.txt: expected a ping log with at least 10 probes, found 4",
    ),
    "IRTT JSON cut short": (
        "irtt.json",
        lambda tp: _irtt_text(tp)[:5000],
        "irtt.json: expected IRTT JSON, found invalid JSON (",
    ),
    "IRTT round trip without a clock": (
        "irtt.json",
        _irtt_without_clock,
        "irtt.json: round_trips[5].timestamps.client.send.wall: expected a wall clock in ns",
    ),
    "iperf3 JSON with bytes not a number": (
        "run.json",
        lambda tp: _iperf3_bad_bytes(),
        "run.json: intervals[3].streams[0].bytes: expected a number >= 0, found a string",
    ),
    "json-stream cut mid-line": (
        "stream.json",
        lambda tp: "\n".join([*_stream_lines()[:20], _stream_lines()[20][:50]]),
        "stream.json: line 21: expected iperf3 JSON (-J or --json-stream), found invalid JSON",
    ),
    "json-stream without its end event": (
        "stream.json",
        lambda tp: "\n".join(_stream_lines()[:-1]),
        "stream.json: expected an iperf3 -J or --json-stream document (start, intervals, end)",
    ),
    "json-stream of 2 s": (
        "stream.json",
        lambda tp: json_stream(iperf3_doc(seconds=2)),
        "stream.json: too short to fit: 2 s of iperf3 UDP server JSON, needs at least one whole",
    ),
    "json-stream of a UDP sender": (
        "stream.json",
        lambda tp: json_stream(iperf3_doc(side="udp_client")),
        "stream.json: expected the receiving side of a UDP run (a client with -R",
    ),
    "history with a bad time": (
        "history.csv",
        lambda tp: "\n".join(
            ln if n != 10 else "nottime" + ln[19:] for n, ln in enumerate(_history_lines(tp))
        ),
        "history.csv: line 11: datetimestamp_utc: expected an ISO time, found 'nottime'",
    ),
    "history with a drop rate not a number": (
        "history.csv",
        lambda tp: "\n".join(
            ln if n != 10 else ln.replace(",0.0,", ",abc,", 1)
            for n, ln in enumerate(_history_lines(tp))
        ),
        "history.csv: line 11: expected numbers in pop_ping_drop_rate and pop_ping_latency_ms",
    ),
    "history with a short row": (
        "history.csv",
        lambda tp: "\n".join(
            ln if n != 10 else ln.rsplit(",", 1)[0] for n, ln in enumerate(_history_lines(tp))
        ),
        "history.csv: line 11: expected 8 columns, found 7",
    ),
    "history with a second twice": (
        "history.csv",
        lambda tp: "\n".join([*_history_lines(tp)[:11], *_history_lines(tp)[10:]]),
        "history.csv: datetimestamp_utc: expected rising times, one row a second",
    ),
    "history of 4 s": (
        "history.csv",
        lambda tp: "\n".join(_history_lines(tp)[:6]),
        "history.csv: too short to fit: 4 s of starlink-grpc-tools history CSV, needs at least",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_each_readers_bad_files_get_one_line_naming_file_and_key(tmp_path, capsys, case):
    name, text, expected = BAD_INPUTS[case]
    p = tmp_path / "in" / name
    p.parent.mkdir()
    p.write_text(text(tmp_path) + "\n")
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    line = one_line(err)
    assert code == 2 and out == "" and f"error: {tmp_path}/in/{expected}" in line, line


def test_what_a_reader_skips_and_a_dir_that_changes_nothing_are_said(tmp_path, capsys):
    """The ping reader skips lines over 1024 characters: stderr says so (it was dropped); --dir
    on a recording without delivery changes nothing: stderr says so (it was silent)."""
    p = tmp_path / "ping.txt"
    p.write_text("\n".join([*_ping_lines(tmp_path), "x" * 2000]) + "\n")
    code, _, err = fit_cli(tmp_path, capsys, str(p), "--dir", "up")
    assert code == 0, err
    assert "note: ping.txt: 1 line(s) longer than 1024 characters skipped" in err
    assert "note: --dir up changes nothing: a ping log has no delivery series" in err
    run = tmp_path / "run.json"
    run.write_text(json.dumps(iperf3_doc(seconds=60, side="udp_client", reverse=True)))
    code, _, err = fit_cli(tmp_path, capsys, str(run), "--delay", str(p))
    assert code == 0 and "note: ping.txt: 1 line(s) longer than 1024" in err, err


def iperf3_run(side: str, reverse: bool, start: int, seconds: int, mbit) -> dict:
    """A synthesised iperf3 -J run (a real document's layout) started at wall clock `start`
    (whole s), 1 s intervals carrying `mbit(t)` Mbit/s at the interval's middle t (wall s)."""
    doc = iperf3_doc(seconds, side=side, reverse=reverse)
    doc["start"]["timestamp"]["timesecs"] = start
    for k, iv in enumerate(doc["intervals"]):
        for st in [*iv["streams"], iv["sum"]]:
            st["bytes"] = round(mbit(start + k + 0.5) * 1e6 / 8)
    return doc


def epoch_rate(lo: float, hi: float):
    """lo Mbit/s in the epochs starting at :12 and :42, hi in those at :27 and :57."""
    return lambda t: lo if ((t % 60 - 12) // 15) % 2 == 0 else hi


def test_several_15s_iperf3_runs_fit_each_direction(tmp_path, capsys):
    """WetLinks-style: 15 s runs at various times, downlink (-R) and uplink runs; each run is
    cut at the boundaries its wall clock places, each direction fitted on its own."""
    import tomllib

    t0 = 1_700_000_040  # a minute's :00
    paths = []
    for k, off in enumerate((0, 20, 33, 47, 5, 51)):
        for side, reverse, rate in (
            ("udp_client", True, epoch_rate(20, 40)),  # a -R client receives: down
            ("udp_server", False, epoch_rate(5, 10)),  # the server receives: up
        ):
            p = tmp_path / f"run-{k}-{side}.json"
            p.write_text(json.dumps(iperf3_run(side, reverse, t0 + 300 * k + off, 15, rate)))
            paths.append(str(p))
    code, out, err = fit_cli(tmp_path, capsys, *paths)
    assert code == 0, err
    m = tomllib.loads(out)["link"]["model"]
    # ranges as wide as the pieces spread (20 and 5 Mbit/s), centred on the pieces' mean
    assert m["capacity_ba"] == ["20.9 Mbit/s", "40.9 Mbit/s"]
    assert m["capacity"] == ["5 Mbit/s", "10 Mbit/s"]
    assert out.startswith("# fitted by satcc trace fit from 12 iperf3 runs: downlink (capacity_ba")
    assert "read as: 12 iperf3 runs, placed by their wall clocks" in err


def test_several_runs_must_be_placed_iperf3_runs(tmp_path, capsys):
    run = tmp_path / "run.json"
    run.write_text(json.dumps(iperf3_run("udp_server", False, 1_700_000_040, 15, lambda t: 9)))
    ping = tmp_path / "ping.txt"
    write_ping(ping)
    code, _, err = fit_cli(tmp_path, capsys, str(run), str(ping))
    assert code == 2 and "ping.txt: expected an iperf3 JSON run" in one_line(err)
    doc = json.loads(run.read_text())
    del doc["start"]["timestamp"]
    run.write_text(json.dumps(doc))
    code, _, err = fit_cli(tmp_path, capsys, str(run), str(run))
    assert code == 2 and "run.json: start.timestamp.timesecs: expected" in one_line(err)


def exported_halves(tmp_path: Path, capsys) -> tuple[str, str]:
    """64 s exported from a model (seed 5), its delay as a LeoReplayer-style series: one row
    every 10 ms, whole ms. Returns (trace, delay CSV)."""
    scen = tmp_path / "s.toml"
    scen.write_text(
        '[scenario]\nduration = "64 s"\nseed = 5\n[[link]]\na = "a"\nb = "b"\n'
        '[link.model]\nkind = "starlink"\ncapacity = ["30 Mbit/s", "50 Mbit/s"]\n'
        '[[flow]]\nfrom = "a"\nto = "b"\ncca = "cubic"\nstart = "63 s"\n'
    )
    assert main(["trace", "export", str(scen), "--out", str(tmp_path), "--dir", "ab"]) == 0
    capsys.readouterr()
    rows = np.loadtxt(tmp_path / "link0-ab.csv", delimiter=",", skiprows=1)[:, :2]
    t = np.arange(0, 64_000, 10.0)
    d = np.round(rows[np.searchsorted(rows[:, 0], t, side="right") - 1, 1])
    csv = tmp_path / "whole.csv"
    csv.write_text("t_ms,delay_ms\n" + "".join(f"{a:g},{b:g}\n" for a, b in zip(t, d)))
    return str(tmp_path / "link0-ab.mahimahi"), str(csv)


@requires_sim
def test_validate_judges_the_model_on_the_recordings_grid_beside_native(tmp_path, capsys):
    """--validate (first guess here, to keep the test short): per split an "on grid" row (the
    fitted model rendered at the recording's resolution and replayed as the held-out half
    is: the verdict) and a "native" row, each against the replay. On a whole-ms delay series
    replayed at whole-ms ticks every hop waits for the next tick, but `on_grid` rounds the
    fitted delay to the nearest whole ms (up to 0.5 ms down each way): the on-grid flow's least
    RTT sits at most 1 ms below the native one's and, with the ticks, mostly above it
    (measured +0.07 and +1.48 ms on this recording since the fit keeps the recording's mean
    delay, +1.87 and +1.18 before, -0.01 and +2.21 with the deferring sender (2026-11-30);
    how far depends on where the fitted level falls between two whole ms; the old code printed
    no on-grid row)."""
    mm, csv = exported_halves(tmp_path, capsys)
    args = ["trace", "fit", mm, "--delay", csv, "--validate", "--no-check", "--seeds", "1"]
    assert main([*args, "--cca", "cubic"]) == 0
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln.startswith(("| first", "| second"))]
    cells = [[c.strip() for c in r.split("|")[1:-1]] for r in rows]
    assert [(c[0], c[2]) for c in cells] == [
        ("first → second", "on grid"),
        ("first → second", "native"),
        ("second → first", "on grid"),
        ("second → first", "native"),
    ]
    for c in cells:
        model, replay = (float(x.split()[0]) for x in c[3].split(" / "))
        assert model > 1 and replay > 1  # Mbit/s from both runs
        assert all(x.endswith("%") for x in c[4:10:2]) and c[10].endswith("ms")
    least = [float(c[9].split(" / ")[0]) for c in cells]
    for grid, native in (least[0:2], least[2:4]):
        assert -1.0 < grid - native < 3.0
    assert "verdict, on grid: goodput within 15 % in " in out


@requires_sim
def test_the_model_on_the_grid_is_the_halfs_resolution_and_deterministic(tmp_path, capsys):
    """tracefit.on_grid: the model's a→b delay sampled every 10 ms (the half's step) and
    rounded to whole ms as the half's, its bytes as whole 1500-byte opportunities; the same
    files again for the same seed, other ones for another seed."""
    mm, csv = exported_halves(tmp_path, capsys)
    rec = tf.read_recording(Path(mm), Path(csv))
    first = tf.halves(rec, tmp_path)[0]
    model = tf.fit_half(first, refined=False) | {"burst_rate": 0.0}
    trace = tf.on_grid(model, first, 20, 1, tmp_path)
    rows = np.loadtxt(trace.with_suffix(".csv"), delimiter=",", skiprows=1)
    assert np.array_equal(rows[:, 0], np.arange(0, 20_000, 10.0))
    assert np.array_equal(rows[:, 1], np.round(rows[:, 1]))
    s = tf.model_samples(model, 20, 1)
    want = np.round(s["delay_ns"][::10] / 1e6)
    assert np.array_equal(rows[:, 1], want)
    stamps = np.loadtxt(trace, dtype=np.int64)
    assert len(stamps) == int(np.sum(s["rate_bps"]) / 8 / 1000 / 1500 + 1e-9)
    assert stamps.min() >= 1 and stamps.max() <= 20_000
    again = trace.read_bytes(), trace.with_suffix(".csv").read_bytes()
    tf.on_grid(model, first, 20, 1, tmp_path)
    assert (trace.read_bytes(), trace.with_suffix(".csv").read_bytes()) == again
    other = tf.on_grid(model, first, 20, 2, tmp_path)
    assert other.read_bytes() != again[0]


def test_validate_refuses_a_recording_it_cannot_replay(tmp_path, capsys):
    p = tmp_path / "ping.txt"
    write_ping(p, seconds=70)
    assert main(["trace", "fit", str(p), "--validate"]) == 2
    err = capsys.readouterr().err
    assert "ping.txt: --validate needs a delivery series at 1 ms and a delay series" in err
    # --dir has no say in --validate (the replay is the same path both ways): said, not ignored
    assert main(["trace", "fit", str(p), "--validate", "--dir", "down"]) == 2
    err = capsys.readouterr().err
    assert "note: --dir down changes nothing for --validate" in err


def bidir_doc(seconds: int = 60, start: int = 1_700_000_040) -> dict:
    """A synthesised iperf3 --bidir TCP client run (the layout of tests/data/iperf3's -P 2
    run): socket 6 sends (up, 5/10 Mbit/s by epoch), socket 8 receives (down, 20/40)."""
    doc = json.loads((DATA / "iperf3" / "rp2_client.json").read_text())
    doc["start"]["test_start"] |= {"reverse": 0, "bidir": 1}
    doc["start"]["timestamp"]["timesecs"] = start
    iv = doc["intervals"][0]
    up, down = epoch_rate(5, 10), epoch_rate(20, 40)
    doc["intervals"] = []
    for k in range(seconds):
        s = json.loads(json.dumps(iv))
        for st, sender, rate in zip(s["streams"], (True, False), (up, down), strict=True):
            st["start"], st["end"], st["seconds"] = k, k + 1, 1
            st["sender"] = sender
            st["bytes"] = round(rate(start + k + 0.5) * 1e6 / 8)
        doc["intervals"].append(s)
    return doc


def test_a_bidir_run_fits_each_direction_from_its_own_streams(tmp_path, capsys):
    import tomllib

    p = tmp_path / "bidir.json"
    p.write_text(json.dumps(bidir_doc()))
    code, out, err = fit_cli(tmp_path, capsys, str(p))
    assert code == 0, err
    assert tomllib.loads(out)["link"]["model"]["capacity_ba"] == IPERF3_FIT
    assert "a --bidir run: its downlink streams fitted (--dir for the other)" in err
    code, out, err = fit_cli(tmp_path, capsys, str(p), "--dir", "up")
    # IPERF3_FIT's pieces at a quarter of the rate: 10, 5, 10, 5 Mbit/s, centred on 7.37
    assert tomllib.loads(out)["link"]["model"]["capacity"] == ["4.87 Mbit/s", "9.87 Mbit/s"]
    # as one of several runs: both directions at once
    q = tmp_path / "bidir2.json"
    q.write_text(json.dumps(bidir_doc(seconds=15, start=1_700_000_040 + 617)))
    code, out, err = fit_cli(tmp_path, capsys, str(p), str(q))
    m = tomllib.loads(out)["link"]["model"]
    # the runs' pieces: as many at 20 as at 40 Mbit/s (5 and 10 up), centred on 30 (7.5)
    assert m["capacity_ba"] == ["20 Mbit/s", "40 Mbit/s"] and m["capacity"] == [
        "5 Mbit/s",
        "10 Mbit/s",
    ]


KNOWN = {
    "kind": "starlink",
    "variation": "intra",
    "dish": "a",
    "capacity": ["30 Mbit/s", "70 Mbit/s"],
    "capacity_ba": ["30 Mbit/s", "70 Mbit/s"],
    "rtt_quantiles": ["30 ms", "35 ms", "40 ms", "45 ms", "50 ms"],
}


def _law_mean(quantiles: list[str]) -> float:
    """Mean of the model's piecewise-linear RTT law through its five quantiles, ms."""
    v = [float(q.split()[0]) for q in quantiles]
    return (v[0] + 2 * (v[1] + v[2] + v[3]) + v[4]) / 8


@requires_sim
@pytest.mark.parametrize("seed", [1, 3])
def test_a_fit_of_the_models_own_recording_keeps_its_mean_delivery_and_delay(seed):
    """60 s of a known model cut mid-epoch (7.5 s pieces at both ends, as the LeoCC halves):
    the fitted model must deliver the recording's mean rate and mean delay. The old fit used
    whole epochs only and the range's middle and delay quantiles as they came: seed 1 gave a
    capacity middle 8.1 % below the delivery, seed 3 an RTT law 7.3 % below."""
    s = tf.model_samples(KNOWN, 75, seed)
    w = slice(4500, 64500)  # the model's boundaries at 12 s + 15 k: phase 7.5 s in the window
    rec = tf.Recording("known model", cap_ms=s["rate_bps"][w] * 0.001 / 8)
    rec.delay_t_ms = np.arange(0.0, 60000.0, 10.0)
    rec.delay_ms = s["delay_ns"][w][::10] / 1e6
    model, _ = tf.fit(tf.statistics(rec, 7500), "up")
    lo, hi = (float(x.split()[0]) for x in model["capacity"])
    delivered = rec.cap_ms.mean() * 8 / 1e3
    assert abs((lo + hi) / 2 / delivered - 1) < 0.01, (lo, hi, delivered)
    rtt = 2 * rec.delay_ms.mean()
    assert abs(_law_mean(model["rtt_quantiles"]) / rtt - 1) < 0.01, (model["rtt_quantiles"], rtt)


def _whole_ms_recording(shares: dict[int, float], seconds: int = 60, seed: int = 2) -> tf.Recording:
    """A delivery-less recording of one-way delays on LeoCC's grid (whole ms every 10 ms): in
    each epoch its level (10 or 11 ms) plus whole-ms steps drawn with `shares`, held for two
    rows (a lag-1 correlation like the recording's)."""
    rng = np.random.default_rng(seed)
    steps, p = np.array(list(shares)), np.array(list(shares.values()))
    n = seconds * 100
    level = np.repeat(rng.choice([10, 11], size=seconds // 15 + 1), 1500)[:n]
    d = level + np.repeat(rng.choice(steps, size=n // 2, p=p / p.sum()), 2)
    rec = tf.Recording("whole-ms delays", delay_t_ms=np.arange(0.0, n * 10.0, 10.0))
    rec.delay_ms = d.astype(float)
    return rec


@requires_sim
def test_the_fitted_floor_follows_how_deep_the_delays_low_part_reaches():
    """LeoCC's first half: its one-way delay sits 2 ms below the epoch median 2.5 % of the time
    and 1 ms below 17 % (the second half: 23 % and 16 %). On the whole-ms grid both halves'
    residual p1 is -4 ms of RTT, so the floor fitted to p1 was 2 ms for both, and the first
    half's model reached its floor far more often than the half did (Vegas -17 % in sample).
    The floor is now fitted to rtt_low20. Here, a recording of that shape: the p1 rule gives
    a 2 ms floor and rtt_low20 3.52 against the recording's 2.91 ms (+21 %); now 1.45 ms and
    2.99 (+2.7 %)."""
    rec = _whole_ms_recording({-2: 0.025, -1: 0.17, 0: 0.40, 1: 0.25, 2: 0.13, 3: 0.025})
    stats = tf.statistics(rec, 0)
    assert stats["rtt_p1"] == -4.0 and 2.5 < stats["rtt_low20"] < 3.3, stats
    model, _ = tf.fit(stats, "up")
    model, got = tf.refine(model, stats, side="ab")
    assert abs(got["rtt_low20"] / stats["rtt_low20"] - 1) < 0.1, (got, stats, model)


LEOCC_FIRST = RECORDED["leocc_first_half"]["statistics"]


@requires_sim
def test_a_refined_fit_of_a_half_keeps_the_delays_upper_part():
    """LeoCC's first half, as --validate fits it: the refined model must meet the half's
    statistics within the tolerances stderr marks, and the delay statistics the CCAs read
    tightly (the upper tail at the recording's resolution, the high and low parts within
    5 %, the RTT law's mean within 2 %). The jitter's sd used to be fitted to rtt_sd (1.4826
    x MAD), which on this whole-ms recording is 1 ms one way whatever the spread: the model
    kept its first guess (1.48 ms) and showed rtt_p99 8 ms against the half's 6 (path RTT p95
    28 against 26 ms). It is now fitted to rtt_high20 (1.09 ms)."""
    model, _ = tf.fit(LEOCC_FIRST, "up")
    model, got = tf.refine(model, LEOCC_FIRST, side="ab")
    assert got["rtt_p99"] == LEOCC_FIRST["rtt_p99"], (got["rtt_p99"], model["jitter"])
    assert tf.misses(LEOCC_FIRST, got) == []
    for key, tol in (("rtt_high20", 0.05), ("rtt_low20", 0.05), ("rtt_epoch_mean", 0.02)):
        assert abs(got[key] / LEOCC_FIRST[key] - 1) <= tol, (key, got[key], LEOCC_FIRST[key])
