"""The kernel column (`satcc reproduce all --quick --engine emu`) fits its real-time budget.

The emulator runs in real time: each study's campaigns carry a [kernel] design (their quick
design cut to fit), and the five studies together must plan at most common.KERNEL_BUDGET_S
(each run's length plus common.EMU_RUN_OVERHEAD_S), keeping the quick design's 5 seeds per point
wherever the quick design has them (the paired claims' sign test needs 5, claims.py). Pure: the
campaign files are expanded, nothing runs (but study 002's four short simulator runs of its
kernel design, `--design kernel`: the kernel column's twin on the simulator, which plans the
same runs as the emulator's apart from the engine)."""

import pytest

from satcc.errors import UserError
from satcc.studies import claims, common, designs, reproduce


def plans():
    return {sid: reproduce.module(sid).kernel_plan() for sid in reproduce.STUDIES}


def test_the_kernel_column_fits_its_real_time_budget():
    every = plans()
    total = sum(p.real_time_s for ps in every.values() for p in ps)
    # every study has a kernel design, or says why it has none (claims' study.no_kernel)
    assert all(bool(ps) != bool(claims.load(sid).no_kernel) for sid, ps in every.items())
    assert total <= common.KERNEL_BUDGET_S, {
        sid: round(sum(p.real_time_s for p in ps) / 60, 1) for sid, ps in every.items()
    }
    # and it is the emulator's design: every rate it runs is one the emulator carries
    assert common.KERNEL_BUDGET_S <= 75 * 60


def test_the_kernel_design_keeps_5_seeds_where_a_paired_claim_is_judged():
    for sid in ("000", "001", "004"):
        assert any(c.paired for c in claims.load(sid).claims), sid
        mod = reproduce.module(sid)
        # the campaigns the kernel design runs (001's RTT-spread sweep is the full design's)
        for name in [p.name.removesuffix("-quick-kernel-emu") for p in mod.kernel_plan()]:
            quick = common.load(name, True)
            kernel = common.load(name, True, "emu", kernel=True)
            if len(quick.seeds) >= claims.MIN_PAIRED_SEEDS:
                assert len(kernel.seeds) >= claims.MIN_PAIRED_SEEDS, name
            assert kernel.name == f"{quick.name}-kernel-emu"


def test_the_kernel_design_leaves_the_simulators_designs_alone():
    for sid in ("000", "001", "003", "004"):
        for name in reproduce.module(sid).CAMPAIGNS:
            for quick in (False, True):
                c = common.load(name, quick)
                assert "kernel" not in c.name and c.name.endswith("-quick") == quick


# -- `--design kernel`: the kernel design on the simulator (the kernel column's twin) ----------


def _inputs(spec) -> tuple:
    """A run's inputs apart from its engine: seed, repetition, point, params, the scenario."""
    import json

    scenario = json.loads(json.dumps(spec.scenario))
    scenario.get("scenario", {}).pop("engine", None)
    return (
        spec.seed,
        spec.repetition,
        spec.point,
        json.dumps(spec.params, sort_keys=True),
        json.dumps(scenario, sort_keys=True),
    )


def test_design_kernel_on_the_simulator_plans_the_kernel_columns_runs(tmp_path):
    """`--quick --design kernel --engine sim` plans what `--quick --engine emu` plans: the
    same campaigns ([kernel] variants), seeds, points and scenarios (the emulator's paths),
    only the engine apart; planned, nothing run."""
    for sid in ("000", "001", "004"):
        mod = reproduce.module(sid)
        emu = common.Context("emu", True, None, tmp_path / "emu" / sid)
        twin = common.Context("sim", True, None, tmp_path / "sim" / sid, design=designs.KERNEL)
        assert emu.kernel_design and twin.kernel_design and twin.emulator_paths
        e, t = common.planned(emu, mod.run), common.planned(twin, mod.run)
        assert [d.name for d, _ in e] == [f"{d.name}-emu" for d, _ in t], sid
        assert all(d.name.endswith("-quick-kernel") for d, _ in t)
        for (_d, es), (_e, ts) in zip(e, t, strict=True):
            assert {s.engine for s in es} == {"emu"} and {s.engine for s in ts} == {"sim"}
            assert sorted(map(_inputs, es)) == sorted(map(_inputs, ts))
            assert {s.run_id for s in es}.isdisjoint(s.run_id for s in ts)
        # the reproduce pool plans them too (`planned_runs`, the command's scheduling)
        pooled = reproduce.planned_runs(
            [sid], ["sim"], True, None, tmp_path / "pool", design=designs.KERNEL
        )
        assert sorted(map(_inputs, pooled)) == sorted(_inputs(s) for _d, ts in t for s in ts)
    # the simulator's own quick design is another design (the auto default)
    quick = common.Context("sim", True, None, tmp_path / "q")
    assert not quick.kernel_design and not quick.emulator_paths
    names = [d.name for d, _ in common.planned(quick, reproduce.module("001").run)]
    assert names == ["study001-cca-quick"]


def test_design_kernel_runs_study002s_kernel_design_with_the_simulators_hybla(
    tmp_path, monkeypatch
):
    from satcc.studies import hybla, study002

    seen: list = []
    monkeypatch.setattr(hybla, "validate", lambda design, out, **k: seen.append((design, out)))
    twin = common.Context("sim", True, None, tmp_path, design=designs.KERNEL)
    assert set(study002.run(twin)) == {study002.KERNEL_TWIN}
    assert set(study002.run(common.Context("emu", True, None, tmp_path))) == {"validate-hybla"}
    (sim, sim_out), (emu, _) = seen
    assert sim.engine == "sim" and emu.engine == "emu"
    assert sim == emu.replace(engine="sim") == study002.kernel_design(True).replace(engine="sim")
    assert sim_out == tmp_path / "sim" / study002.KERNEL_TWIN  # apart from the quick design's
    assert sim.rate_bps == emu.rate_bps == hybla.RATE_BPS  # one link rate: the headline


def test_design_kernel_judges_what_the_kernel_column_judges(tmp_path, monkeypatch):
    """Study 002 on the simulator's kernel design (4 short runs): the dummynet column judged,
    the ns-2 column not, the cuts' claims not judged; the header and claims.json say so."""
    import json

    ran = reproduce.run_study("002", ["sim"], True, None, tmp_path, design=designs.KERNEL)
    result = reproduce.judge(ran)
    judged = {r.claim.id for r in result.rows if r.verdict in claims.VERDICTS}
    assert judged and all(cid.startswith("dummynet-") for cid in judged)
    text = (tmp_path / "002" / "claims.txt").read_text()
    assert text.startswith("Study 002: ") and "(kernel design, engine sim)" in text.split("\n")[0]
    assert "kernel design (4 runs" in text
    # one link rate (the simulator's designs sweep it): judged at it, the cut printed
    assert "cut: the headline link rate only (10 Mbit/s" in text
    assert "the verdict depends on the link rate" not in text
    doc = json.loads((tmp_path / "002" / "claims.json").read_text())
    assert doc["designs"] == {"sim": "kernel"}
    # study 003 has no kernel design: nothing runs on the simulator either
    monkeypatch.setattr(reproduce.module("003"), "run", lambda _c: 1 / 0)
    assert reproduce.run_study("003", ["sim"], True, None, tmp_path, design="kernel").dirs == {
        "sim": {}
    }


def test_the_kernel_design_is_a_quick_design():
    designs.check_design(True, designs.KERNEL)
    designs.check_design(False, designs.AUTO)
    with pytest.raises(UserError, match="--design kernel: the kernel design is a quick design"):
        designs.check_design(False, designs.KERNEL)
    assert designs.design_name(True, "sim", designs.KERNEL) == "kernel"
    assert designs.design_name(True, "sim") == "quick"
    assert designs.design_name(True, "emu") == "kernel"
    assert designs.design_name(False, "emu") == "full"
