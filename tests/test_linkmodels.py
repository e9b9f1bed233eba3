"""satcc.linkmodels: `[link.model]` keys, presets, resolution, and the simulator following them."""

import math

import pytest

from satcc import _native, linkmodels
from satcc import scenario as sc
from satcc.errors import UserError
from tests.helpers import requires_sim

STARLINK = """
[scenario]
name = "sl"
duration = "40 s"
seed = 7

[[link]]
a = "dish"
b = "pop"
{extra}
[link.model]
kind = "starlink"
{model}

[[flow]]
from = "dish"
to = "pop"
cca = "cubic"
"""


def starlink(write_toml, model="", extra=""):
    return sc.load(write_toml(STARLINK.format(model=model, extra=extra)))


def issues_of(write_toml, text):
    with pytest.raises(UserError) as e:
        sc.load(write_toml(text))
    return str(e.value)


def ab_ba(config, i=0):
    return config["links"][i]["ab"], config["links"][i]["ba"]


def test_starlink_defaults_are_the_residential_presets_uplink_from_the_dish(write_toml):
    ab, ba = ab_ba(sc.resolve(starlink(write_toml)))
    assert ab["model"]["capacity_bps"] == [5_000_000, 25_000_000]
    assert ba["model"]["capacity_bps"] == [50_000_000, 150_000_000]
    assert ab["model"]["loss"] == [0.002, 0.005] and ba["model"]["loss"] == [0.0001, 0.0001]
    assert ab["model"]["rtt_quantiles_ns"] == [q * 1_000_000 for q in (20, 40, 50, 60, 85)]
    assert ab["model"]["period_ns"] == 15 * 10**9 and ab["model"]["phase_ns"] == 12 * 10**9
    # Nominal: mid capacity, median RTT / 2; deep dish-side queue: 150 ms up, 200 ms down.
    assert (ab["rate_bps"], ab["delay_ns"]) == (15_000_000, 25_000_000)
    assert ab["queue"] == {"bytes": round(15e6 / 8 * 0.150)}
    assert ba["queue"] == {"bytes": round(100e6 / 8 * 0.200)}


def test_business_plan_dish_at_b_and_overrides_apply_per_direction(write_toml):
    s = starlink(
        write_toml,
        model='plan = "business"\nplan_ba = "residential"\ndish = "b"\n'
        'capacity_ba = ["10 Mbit/s", "12 Mbit/s"]\nloss = "1 %"\nphase = "3 s"\n'
        'start = "12:00:05"',
        extra='queue = "100 pkt"',
    )
    ab, ba = ab_ba(sc.resolve(s))
    # dish = b: a→b is the business downlink, b→a the residential uplink (overridden).
    assert ab["model"]["capacity_bps"] == [40_000_000, 220_000_000]
    assert ba["model"]["capacity_bps"] == [10_000_000, 12_000_000]
    assert ab["model"]["loss"] == [0.01, 0.01] == ba["model"]["loss"]
    assert ab["model"]["phase_ns"] == 3 * 10**9
    assert ab["model"]["start_ns"] == (12 * 3600 + 5) * 10**9
    assert ab["queue"] == {"packets": 100} == ba["queue"]


@pytest.mark.parametrize(
    "model, extra, path, expected",
    [
        ('plan = "gold"', "", "link[0].model.plan", "one of 'residential', 'business'"),
        ("colour = 3", "", "link[0].model.colour", "expected one of the keys kind, plan"),
        ('capacity = ["20 Mbit/s", "5 Mbit/s"]', "", "link[0].model.capacity", "low <= high"),
        ('phase = "20 s"', "", "link[0].model.phase", "below 15 s"),
        ('start = "25:00:00"', "", "link[0].model.start", "time of day"),
        ("", 'rate = "10 Mbit/s"', "link[0].rate", "the model sets it"),
    ],
)
def test_bad_model_keys_are_named_with_their_path(write_toml, model, extra, path, expected):
    text = issues_of(write_toml, STARLINK.format(model=model, extra=extra))
    line = next(x for x in text.splitlines() if f": {path}: " in x)
    assert expected in line, text


def test_an_unknown_kind_and_a_missing_rate_are_reported(write_toml):
    text = STARLINK.format(model="", extra="").replace('kind = "starlink"', 'kind = "leo"')
    assert (
        "link[0].model.kind: expected one of starlink, geo, lfn, trace, constellation"
        in issues_of(write_toml, text)
    )
    text = STARLINK.format(model="", extra="").replace(
        '[link.model]\nkind = "starlink"', 'delay = "1 ms"'
    )
    assert "link[0].rate: expected the required key 'rate'" in issues_of(write_toml, text)


def test_geo_delay_follows_the_slant_range_by_elevation(write_toml):
    def rtt_ms(elevation):
        text = STARLINK.format(model="", extra="").replace(
            'kind = "starlink"',
            f'kind = "geo"\nrate = "20 Mbit/s"\nelevation = {elevation}\n'
            f"gateway_elevation = {elevation}",
        )
        ab, ba = ab_ba(sc.resolve(sc.load(write_toml(text))))
        return (ab["delay_ns"] + ba["delay_ns"]) / 1e6

    # satellite-facts.md §2.1 [D]: 477.5 ms at 90°, 556.0 ms at 0° (propagation only).
    assert rtt_ms(90) == pytest.approx(477.5, abs=0.15)
    assert rtt_ms(0) == pytest.approx(556.0, abs=0.15)
    assert rtt_ms(25) == pytest.approx(521.3, abs=0.15)


def test_the_pcc_preset_is_42_mbit_800_ms_0_74_percent_and_1500_packets(write_toml):
    text = STARLINK.format(model="", extra="").replace(
        'kind = "starlink"', 'kind = "geo"\npreset = "pcc"'
    )
    ab, ba = ab_ba(sc.resolve(sc.load(write_toml(text))))
    assert (ab["rate_bps"], ab["delay_ns"] + ba["delay_ns"], ab["loss"], ba["loss"]) == (
        42_000_000,
        800_000_000,
        0.0074,
        0.0,
    )
    assert ab["queue"] == {"packets": 1500}


def test_lfn_rtt_splits_into_one_way_delays_and_the_study_003_hop(write_toml):
    text = STARLINK.format(model="", extra="").replace(
        'kind = "starlink"', 'kind = "lfn"\nrate = "540 Mbit/s"\nrtt = "15 ms"\nhop = "study-003"'
    )
    ab, ba = ab_ba(sc.resolve(sc.load(write_toml(text))))
    assert ab["delay_ns"] == ba["delay_ns"] == 7_500_000
    assert ab["model"]["police"]["rate_bps"] == [300_000_000, 330_000_000]


# -- the simulator follows the model -------------------------------------------------------------


def run(config):
    return _native.run_sim(config)


def series(out, direction="ab"):
    ls = out["link_series"]
    idx = [i for i, d in enumerate(ls["dir"]) if d == direction]
    return {k: [ls[k][i] for i in idx] for k in ("t_s", "capacity_bps", "delay_ms", "tx_bytes")}


@requires_sim
def test_the_link_series_shows_starlink_epochs_at_12_27_42_s(write_toml):
    out = run(sc.resolve(starlink(write_toml, model='variation = "epoch"')))
    ab = series(out)
    # Capacity within the residential uplink range except during outages, and RTT steps only
    # at the boundaries: the delay is constant inside [12, 27) and [27, 42).
    for t, c in zip(ab["t_s"], ab["capacity_bps"], strict=True):
        near_boundary = any(b - 1e-9 <= t < b + 0.2 for b in (12.0, 27.0))  # a ≤ 150 ms outage
        assert 5e6 <= c <= 25e6 or (near_boundary and c < 25e6), (t, c)
    for lo, hi in ((0.0, 12.0), (12.0, 27.0), (27.0, 40.0)):
        inside = {
            d for t, d in zip(ab["t_s"], ab["delay_ms"], strict=True) if lo + 1e-9 <= t < hi - 0.1
        }
        assert len(inside) == 1, (lo, inside)
        (d,) = inside
        assert 10.0 <= d <= 42.5  # RTT 20..85 ms, one way
    epochs = [ab["delay_ms"][k] for k in (50, 150, 300)]
    assert len(set(epochs)) == 3


@requires_sim
def test_the_default_starlink_variation_moves_inside_the_epoch(write_toml):
    config = sc.resolve(starlink(write_toml))
    assert config["links"][0]["ab"]["model"]["intra"]["frame_ns"] == 8_000_000
    ab = series(run(config))
    inside = [
        (c, d)
        for t, c, d in zip(ab["t_s"], ab["capacity_bps"], ab["delay_ms"], strict=True)
        if 12.5 <= t < 26.9
    ]
    # 100 ms bins of a 15 s epoch: the capacity and the delay both take many values
    assert len({c for c, _ in inside}) > 20 and len({d for _, d in inside}) > 20


def test_epoch_only_keys_refuse_the_intra_knobs_and_rtt_conflicts(write_toml):
    text = issues_of(
        write_toml, STARLINK.format(model='variation = "epoch"\njitter = "1 ms"', extra="")
    )
    assert "link[0].model.jitter: expected no jitter with variation = 'epoch'" in text
    text = issues_of(
        write_toml,
        STARLINK.format(
            model='rtt = ["20 ms", "40 ms"]\nrtt_quantiles = ["1 ms","2 ms","3 ms","4 ms","5 ms"]',
            extra="",
        ),
    )
    assert "link[0].model.rtt_quantiles: expected either rtt or rtt_quantiles" in text
    text = issues_of(
        write_toml,
        STARLINK.format(model='rtt_quantiles = ["5 ms","2 ms","3 ms","4 ms","5 ms"]', extra=""),
    )
    assert "link[0].model.rtt_quantiles: expected five non-decreasing durations" in text


@requires_sim
def test_geo_nominal_delay_matches_what_the_simulator_runs(write_toml):
    text = STARLINK.format(model="", extra="").replace(
        'kind = "starlink"',
        'kind = "geo"\nrate = "20 Mbit/s"\nelevation = 40\ngateway_elevation = 20',
    )
    config = sc.resolve(sc.load(write_toml(text)))
    ab = series(run(config))
    assert all(
        math.isclose(d, config["links"][0]["ab"]["delay_ns"] / 1e6, abs_tol=1e-6)
        for d in ab["delay_ms"]
    )
    assert set(ab["capacity_bps"]) == {20_000_000}


@requires_sim
def test_the_study_003_hop_caps_a_flow_below_its_threshold(write_toml):
    text = """
[scenario]
duration = "20 s"
[[link]]
a = "tokyo"
b = "osaka"
queue = "1 BDP"
[link.model]
kind = "lfn"
rate = "540 Mbit/s"
rtt = "15 ms"
hop = "study-003"
[[flow]]
from = "tokyo"
to = "osaka"
cca = "reno"
rwnd = "64 MB"
"""
    out = run(sc.resolve(sc.load(write_toml(text))))
    goodput = out["flows"][0]["goodput_bps"]
    assert goodput < 330e6, goodput
    no_hop = text.replace('hop = "study-003"\n', "")
    free = run(sc.resolve(sc.load(write_toml(no_hop, name="free.toml"))))["flows"][0]["goodput_bps"]
    assert free > 400e6 > goodput, (free, goodput)


def test_every_kind_documents_its_keys_in_the_scenario_reference():
    from tests.test_scenario import _doc_section

    section = _doc_section("Path models")
    for kind in linkmodels.KINDS:
        assert f'`kind = "{kind}"`' in section, kind
        for key in linkmodels.model_keys(kind):
            assert f"`{key}`" in section, f"docs/scenario.md Path models lacks {kind}.{key}"


@requires_sim
def test_the_constellation_model_gives_a_25_to_60_ms_class_rtt(write_toml):
    text = """
[scenario]
duration = "60 s"
[[link]]
a = "dish"
b = "gw"
[link.model]
kind = "constellation"
terminal = [50.11, 8.68]
gateway = [50.9, 9.3]
rate = "20 Mbit/s"
[[flow]]
from = "dish"
to = "gw"
cca = "reno"
"""
    config = sc.resolve(sc.load(write_toml(text)))
    ab = config["links"][0]["ab"]
    assert ab["model"]["planes"] == 72 and ab["model"]["per_plane"] == 22
    assert ab["model"]["altitude_m"] == 550_000 and ab["model"]["min_elevation_deg"] == 25
    # Nominal (routing): the zenith bent pipe 2 x 550 km / c + 10 ms.
    assert ab["delay_ns"] == round(2 * 550e3 / 299_792_458 * 1e9) + 10_000_000
    d = series(run(config))["delay_ms"]
    rtts = [2 * x for x in d]
    assert 25 <= min(rtts) and max(rtts) <= 60, (min(rtts), max(rtts))
    assert len(set(rtts)) > 10  # the satellite moves: the delay follows the geometry
