"""`satcc validate hybla` (satcc.studies.hybla): study 002's design through the simulator."""

import csv
import json
import math

import pytest

from satcc import cli
from satcc import scenario as sc
from satcc.studies import hybla as study
from tests.helpers import requires_sim

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _main(argv, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def test_the_design_maps_to_the_studys_path():
    spec = study.RunSpec("10MB", 10_000_000, 1e-4, 3, 40, 10_000_000, True)
    config = sc.resolve(sc.from_dict(study.scenario_dict(spec)))
    (link,) = config["links"]
    (flow,) = config["flows"]
    assert link["ab"]["delay_ns"] + link["ba"]["delay_ns"] == 550_000_000  # RTT 550 ms
    assert (link["ab"]["loss"], link["ba"]["loss"]) == (1e-4, 0.0)  # data direction only
    assert link["ab"]["queue"] == {"packets": 1000} == link["ba"]["queue"]
    assert flow["mss"] == 1000 and flow["rwnd_bytes"] == 550 * 1000  # W_m = 550 segments
    assert flow["cca"] == "hybla" and flow["cc"] == {"rtt0": 25.0}
    assert flow["size_bytes"] == 10_000_000 and config["seed"] == 3
    # the chosen rate does not limit W_m/R: 550 IP packets of 1052 B per 550 ms
    assert 550 * 1052 * 8 / 0.550 < link["ab"]["rate_bps"]


def test_the_difference_has_the_studys_sign():
    assert study.diff_pct(10.0, 9.0) == pytest.approx(10.0)
    assert study.diff_pct(10.0, 11.0) == pytest.approx(-10.0)
    assert study.diff_pct(None, 1.0) is None and study.diff_pct(1.0, None) is None


def _fake_runs(design, throughput_of):
    """Runs with made-up simulator numbers (no simulator): for the aggregation alone."""
    runs = []
    for kind, size in design.kinds():
        for p in design.losses:
            for seed in range(1, design.seeds + 1):
                thr = throughput_of(kind, p, seed)
                runs.append(
                    {
                        "kind": kind,
                        "size_bytes": size,
                        "p": p,
                        "seed": seed,
                        "duration_s": 1,
                        "finished": True,
                        "sim_throughput_bps": thr,
                        "sim_time_s": None if size is None else size * 8 / thr,
                        "delivered_bytes": 0,
                        "retransmission_rate": None,
                        "rto_count": 0,
                        "recovery_count": seed,
                        "rtt_mean_ms": 550.0,
                    }
                )
    return runs


def test_table3_takes_the_worst_point_at_or_below_1e_4_and_at_or_above_5e_3():
    design = study.Design.quick(losses=(1e-5, 1e-4, 1e-3, 5e-3), sizes_bytes=(10_000_000,), seeds=2)

    # the simulator "runs" 1 % + p x 100 below the model, seeds 1 and 2 at -/+ 0.5 % of that
    def thr(kind, p, seed):
        m = float(study.model(p, None if kind == "steady" else 10_000_000).throughput_bps)
        return m * (1 - (0.01 + 100 * p) + (seed - 1.5) * 0.01)

    points = study.aggregate(_fake_runs(design, thr), design)
    rows = {r["kind"]: r for r in study.table3(points, design)}
    for kind in ("steady", "10MB"):
        assert rows[kind]["low_throughput_diff_pct"] == pytest.approx(2.0)  # at p = 1e-4
        assert rows[kind]["low_throughput_at_p"] == 1e-4
        assert rows[kind]["high_throughput_diff_pct"] == pytest.approx(51.0)  # at 5e-3 only
        assert rows[kind]["low_loss_ps"] == [1e-5, 1e-4]
    ten = rows["10MB"]
    # time = size*8/thr averaged over seeds: (m_T - mean(T)) / m_T, computed here directly
    t_model = float(study.model(1e-4, 10_000_000).transfer_time_s)
    m_thr = float(study.model(1e-4, 10_000_000).throughput_bps)
    times = [80e6 / (m_thr * (1 - 0.02 + d)) for d in (-0.005, 0.005)]
    assert ten["low_time_diff_pct"] == pytest.approx((t_model - sum(times) / 2) / t_model * 100)
    assert rows["steady"]["low_time_diff_pct"] is None
    assert ten["paper_throughput_ns2_pct"] == 10.12 and rows["steady"]["paper_time_ns2_pct"] is None
    text = study.format_table(list(rows.values()), design)
    assert "10.12" in text and "0.33" in text and "2.00 (+, 0.0001)" in text


@requires_sim
def test_one_simulated_transfer_agrees_with_the_model_at_low_loss():
    # the study's 100 MB transfer at p = 1e-5: 1.3 % from ns-2; satcc's simulator within 5 %
    t = float(study.model(1e-5, 100_000_000).transfer_time_s)
    spec = study.RunSpec("100MB", 100_000_000, 1e-5, 1, math.ceil(3 * t), study.RATE_BPS, True)
    row = study.simulate(spec)
    assert row["finished"]
    assert abs(study.diff_pct(t, row["sim_time_s"])) < 5.0


@requires_sim
def test_a_process_pool_gives_the_same_rows_in_the_same_order():
    specs = [study.RunSpec("steady", None, p, 1, 20, study.RATE_BPS, True) for p in (1e-3, 1e-2)]
    assert study.run_all(specs, jobs=2) == study.run_all(specs, jobs=1)


@requires_sim
def test_validate_hybla_on_a_tiny_grid_prints_table3_and_writes_points_and_plots(tmp_path, capsys):
    out = tmp_path / "v"
    status, text, err = _main(
        [
            "validate",
            "hybla",
            "--quick",
            "--loss",
            "1e-4",
            "1e-2",
            "--steady-duration",
            "30",
            "--jobs",
            "1",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert status == 0, err
    assert "Table 3" in text and "p >= 5e-3" in text
    for kind in ("steady", "10MB", "50MB", "100MB"):
        assert kind in text
    for paper in ("0.33", "2.70", "10.12", "8.81", "11.26", "2.43", "1.30", "1.56"):
        assert paper in text
    figures = sorted(p.name for p in out.glob("fig*.png"))
    assert figures == [
        "fig3_steady_throughput.png",
        "fig4_10MB_throughput.png",
        "fig5_10MB_time.png",
        "fig6_50MB_throughput.png",
        "fig7_50MB_time.png",
        "fig8_100MB_throughput.png",
        "fig9_100MB_time.png",
    ]
    for name in figures:
        assert (out / name).read_bytes().startswith(PNG_MAGIC)
    with open(out / "points.csv", newline="") as fh:
        points = list(csv.DictReader(fh))
    assert len(points) == 2 * 4
    with open(out / "runs.csv", newline="") as fh:
        runs = list(csv.DictReader(fh))
    assert len(runs) == 2 * 4 and all(r["finished"] == "True" for r in runs)
    doc = json.loads((out / "validation.json").read_text())
    # Table 3's satcc figure is the point at p = 1e-4 here: recompute it from points.csv
    for row in doc["table3"]:
        (pt,) = [p for p in points if p["kind"] == row["kind"] and float(p["p"]) == 1e-4]
        model = float(pt["model_throughput_bps"])
        sim = float(pt["sim_throughput_mean_bps"])
        assert row["low_throughput_diff_pct"] == pytest.approx((model - sim) / model * 100)
        assert f"{abs(row['low_throughput_diff_pct']):.2f}" in text
    assert doc["design"]["wmax_pkts"] == 550 and doc["design"]["losses"] == [1e-4, 1e-2]


def test_validate_refuses_bad_arguments(capsys, tmp_path):
    for argv in (["--seeds", "0"], ["--jobs", "0"], ["--loss", "0.7"], ["--rate", "0"]):
        status, _, err = _main(
            ["validate", "hybla", "--quick", "--out", str(tmp_path), *argv], capsys
        )
        assert status == 2, argv
        assert argv[0] in err
