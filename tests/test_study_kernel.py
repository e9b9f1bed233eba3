"""The kernel column (`satcc reproduce all --quick --engine emu`) fits its real-time budget.

The emulator runs in real time: each study's campaigns carry a [kernel] design (their quick
design cut to fit), and the five studies together must plan at most common.KERNEL_BUDGET_S
(each run's length plus common.EMU_RUN_OVERHEAD_S), keeping the quick design's 5 seeds per point
wherever the quick design has them (the paired claims' sign test needs 5, claims.py). Pure: the
campaign files are expanded, nothing runs."""

from satcc.studies import claims, common, reproduce


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
        for name in mod.CAMPAIGNS:
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
