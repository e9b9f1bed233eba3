"""Study 002's link rate, which the paper does not give (Fig. 1-2 are images): swept over its
plausible range in both simulator columns, every finding judged across the points
(common.over_points), the kernel design at one point."""

import json

from satcc.studies import claims as CL
from satcc.studies import hybla, study002
from satcc.studies.claims import Measured

COLUMNS = ("validate-hybla", study002.DUMMYNET)


def _dirs(tmp_path):
    return {
        study002.rate_dir(n, r): tmp_path / study002.rate_dir(n, r)
        for r in study002.RATES_BPS
        for n in COLUMNS
    }


def test_the_rate_points_are_the_argued_range_and_the_headline_is_the_floor():
    assert study002.RATES_BPS == (10_000_000, 100_000_000, 1_000_000_000)
    assert study002.RATES_BPS[0] == hybla.RATE_BPS  # the floor: W_m / R = 8.4 Mbit/s on the wire
    assert hybla.WMAX_PKTS * (hybla.PAYLOAD_BYTES + 52) * 8 / hybla.RTT_S < hybla.RATE_BPS
    quick, full = study002.designs(True), study002.designs(False)
    # --quick runs the range's two ends, the full design all three points
    assert study002.RATES_BPS_QUICK == (10_000_000, 1_000_000_000)
    for d, rates in ((quick, study002.RATES_BPS_QUICK), (full, study002.RATES_BPS)):
        assert sorted({x.rate_bps for x in d.values()}) == list(rates)
        assert {n for n in d if d[n].rate_bps == hybla.RATE_BPS} == set(COLUMNS)
        # off the headline the steady runs go untraced (their mechanism is the headline's)
        assert d["validate-hybla-1000mbit"] == d["validate-hybla"].replace(
            rate_bps=10**9, trace_steady=False
        )
        assert d["validate-hybla"].trace_steady and d["validate-hybla"].trace
        specs = hybla.run_specs(d["validate-hybla-1000mbit"])
        assert {s.kind for s in specs if s.trace} == {"10MB", "50MB", "100MB"}
        assert all(s.trace for s in hybla.run_specs(d["validate-hybla"]))
    # the kernel design stays at the headline rate (the emulator carries up to 100 Mbit/s)
    assert study002.kernel_design(True).rate_bps == hybla.RATE_BPS


def test_every_finding_is_judged_across_the_rates_and_not_judged_where_they_differ(
    tmp_path, monkeypatch
):
    """A verdict that moves with the rate is "not judged" naming the link rate, with the sweep;
    one that holds at every rate is judged; the reason printed is the headline's mechanism."""
    value = {  # 50MB-throughput below 2.43 % at 100 and 1000 Mbit/s, not at 10 (as measured)
        "validate-hybla": 3.08,
        "validate-hybla-100mbit": 2.14,
        "validate-hybla-1000mbit": 2.05,
    }

    def at(dirs):
        name = dirs["validate-hybla"].name
        return {
            "50MB-throughput": Measured(value[name], "max", f"mechanism at {name}", seeds=3),
            "10MB-throughput": Measured(13.0, "max", f"mechanism at {name}.", seeds=3),
        }

    monkeypatch.setattr(study002, "_measure_at", at)
    out = study002.measure(_dirs(tmp_path))
    moved = out["50MB-throughput"]
    assert moved.skipped.startswith("not judged: the verdict depends on the link rate")
    for text in ("10 Mbit/s: 3.08 % (not)", "100 Mbit/s: 2.14 % (reproduced)", "1000 Mbit/s"):
        assert text in moved.skipped and text in moved.why
    assert moved.value == 3.08  # the point farthest from the paper
    held = out["10MB-throughput"]
    assert not held.skipped
    assert "link rate 10 Mbit/s" in held.why and "mechanism at validate-hybla. " in held.why
    assert ".." not in held.why  # a reason's closing period not doubled before the sweep
    spec = CL.load("002")
    rows = CL.judge_all(spec, "sim", {c.id: out.get(c.id, Measured(None)) for c in spec.claims})
    verdict = {r.claim.id: r.verdict for r in rows}
    assert verdict["50MB-throughput"] == CL.NOT_JUDGED
    assert verdict["10MB-throughput"] == CL.NOT


def test_one_rate_is_judged_as_before(tmp_path, monkeypatch):
    """The emulator's column, the kernel twin and an output root written before the sweep hold
    one rate: measured there, no sweep."""
    seen = []
    monkeypatch.setattr(study002, "_measure_at", lambda d: seen.append(set(d)) or {})
    study002.measure({n: tmp_path / n for n in COLUMNS})
    study002.measure({"validate-hybla": tmp_path / "v"})
    study002.measure({**_dirs(tmp_path), study002.KERNEL_TWIN: tmp_path / "k"})
    assert seen[0] == set(COLUMNS) and seen[1] == {"validate-hybla"}
    assert study002.KERNEL_TWIN in seen[2]


def test_the_sweep_is_printed_per_rate_and_column(tmp_path):
    for rate in study002.RATES_BPS:
        for d in (tmp_path / study002.rate_dir(n, rate) for n in COLUMNS):
            d.mkdir()
            doc = {
                "design": {"losses": [1e-6], "seeds": 3, "rate_bps": rate},
                "table3": [{"kind": "50MB", "low_throughput_diff_pct": -2.5}],
                "points": [],
                "runs": [],
            }
            (d / "validation.json").write_text(json.dumps(doc))
    lines = study002.sensitivity(_dirs(tmp_path))
    assert "the link rate" in lines[0] and "[[path]] 'Link rate'" in lines[0]
    body = [ln.split() for ln in lines[2:]]
    assert [(r[0], r[2]) for r in body] == [
        (str(r // 10**6), c) for r in study002.RATES_BPS for c in ("ns-2", "dummynet")
    ]
    assert all(r[6] == "2.50" and r[3] == "3" for r in body)  # the 50MB column, the seeds
    # one rate (the kernel design): no sweep to print
    assert study002.sensitivity({"validate-hybla": _dirs(tmp_path)["validate-hybla"]}) == []


def test_the_path_table_names_the_rate_sweep_and_its_argument():
    spec = CL.load("002")
    row = next(p for p in spec.path if p.what == "Link rate")
    for r in study002.RATES_BPS:
        assert f"{r / 1e6:g}" in row.satcc
    assert "W_m / R" in row.source and "NIC" in row.source and "図 1" in row.source
    cut = next(c for c in spec.kernel_cuts if "link rate" in c.what)
    assert "dummynet-10MB-time" in cut.weakens
    assert "10, 100 and 1000 Mbit/s" in spec.kernel


def test_the_columns_at_every_rate_share_one_pool(tmp_path, monkeypatch):
    """hybla.validate_many: one run_all over every design's specs, each design's rows its own."""
    seen = []

    def run_all(specs, jobs=1, progress=None):
        seen.append(len(specs))
        return [{"spec": s} for s in specs]

    monkeypatch.setattr(hybla, "run_all", run_all)
    monkeypatch.setattr(hybla, "aggregate", lambda runs, design: runs)
    monkeypatch.setattr(hybla, "table3", lambda points, design: [])
    monkeypatch.setattr(hybla, "_write_out", lambda *a: None)
    todo = [(d, tmp_path / n) for n, d in list(study002.designs(True).items())[:3]]
    out = hybla.validate_many(todo, jobs=2, plots=False)
    assert seen == [sum(len(hybla.run_specs(d)) for d, _ in todo)]
    for v, (d, _) in zip(out, todo, strict=True):
        assert [r["spec"] for r in v.runs] == hybla.run_specs(d)
