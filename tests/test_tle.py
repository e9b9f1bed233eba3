"""satcc.tle: `kind = "constellation"` with `tle = FILE` — SGP4 positions as a trace delay series."""

import math

import numpy as np
import pytest

from satcc import cli, tle
from satcc import scenario as sc
from satcc.errors import UserError
from tests.helpers import requires_sim

C = 299_792_458.0
R_SPHERE_KM = 6371.0
MU_WGS72 = 398600.8  # km^3/s^2, the constants TLEs are fitted with
R_WGS72_KM = 6378.135
EPOCH_DAY = "26326.41666667"  # 2026-11-22 10:00:00 UTC (day 326)
# The ISS example of the sgp4 package's README (checksums 7 and 7 in column 69).
ISS = (
    "1 25544U 98067A   08264.51782528 -.00002182  00000-0 -11606-4 0  2927\n"
    "2 25544  51.6416 247.4627 0006703 130.5360 325.0288 15.72125391563537\n"
)

SCENARIO = """
[scenario]
duration = "{duration}"
[[link]]
a = "dish"
b = "gw"
[link.model]
kind = "constellation"
tle = "{tle}"
terminal = {terminal}
gateway = {gateway}
rate = "20 Mbit/s"
{extra}
[[flow]]
from = "dish"
to = "gw"
cca = "reno"
"""


def rev_per_day(radius_km):
    """Kepler's third law: n = sqrt(mu / a^3), in revolutions per day."""
    return math.sqrt(MU_WGS72 / radius_km**3) * 86400 / (2 * math.pi)


def tle_set(num, inc, raan, mean_anomaly, mean_motion, ecc=1000, epoch=EPOCH_DAY):
    """A 3-line set in the fixed NORAD columns, checksums computed."""
    l1 = f"1 {num:05d}U 26001A   {epoch}  .00000000  00000-0  00000-0 0  999"
    l2 = f"2 {num:05d} {inc:8.4f} {raan:8.4f} {ecc:07d} {0:8.4f} {mean_anomaly:8.4f} {mean_motion:11.8f}    1"
    assert len(l1) == len(l2) == 68
    return f"SAT {num}\n{l1}{tle.checksum(l1)}\n{l2}{tle.checksum(l2)}\n"


def shell(planes=72, per_plane=22, altitude_km=550.0):
    """A Walker-like shell written as TLEs (circular, 53°)."""
    n = rev_per_day(R_WGS72_KM + altitude_km)
    return "".join(
        tle_set(p * per_plane + s + 1, 53.0, p * 360 / planes, s * 360 / per_plane, n)
        for p in range(planes)
        for s in range(per_plane)
    )


def write_scenario(
    write_toml,
    tmp_path,
    tle_text,
    terminal="[50.11, 8.68]",
    gateway="[50.9, 9.3]",
    extra="",
    duration="30 s",
):
    (tmp_path / "sats.tle").write_text(tle_text)
    return write_toml(
        SCENARIO.format(
            tle="sats.tle", terminal=terminal, gateway=gateway, extra=extra, duration=duration
        )
    )


def resolved(path):
    config = sc.resolve(sc.load(path))
    return config["links"][0]["ab"], config["links"][0]["ba"]


def subsatellite_point(text):
    """Latitude/longitude (spherical) under the file's first satellite at its epoch."""
    sat = tle.satellites(tle.parse_tle(text))[0]
    jd, fr = np.array([sat.jdsatepoch]), np.array([sat.jdsatepochF])
    _, r, _ = sat.sgp4_array(jd, fr)
    x, y, z = tle.teme_to_ecef(r, jd, fr)[0]
    return math.degrees(math.atan2(z, math.hypot(x, y))), math.degrees(math.atan2(y, x)), r[0]


def test_the_checksum_of_the_sgp4_iss_example_is_its_column_69():
    l1, l2 = ISS.splitlines()
    assert (tle.checksum(l1), tle.checksum(l2)) == (int(l1[68]), int(l2[68])) == (7, 7)
    [(name, p1, p2)] = tle.parse_tle("ISS (ZARYA)\n" + ISS)
    assert (name, p1, p2) == ("ISS (ZARYA)", l1, l2)
    assert len(tle.parse_tle(ISS + shell(1, 2))) == 3  # 2- and 3-line sets mixed


def test_gmst_matches_vallado_example_3_5():
    # Vallado 2013, Example 3-5: 1992 August 20, 12:14 UT1 → GMST 152.578787810°.
    jd, fr = tle.parse_epoch("1992-08-20T12:14:00Z")
    assert jd == 2448854.5
    assert math.degrees(tle.gmst_rad(jd, fr)) == pytest.approx(152.578787810, abs=1e-6)


def test_sgp4_at_the_epoch_puts_the_satellite_at_the_radius_its_mean_motion_implies():
    for altitude_km in (550.0, 1200.0):
        text = tle_set(1, 53.0, 10.0, 20.0, rev_per_day(R_WGS72_KM + altitude_km))
        sat = tle.satellites(tle.parse_tle(text))[0]
        err, r, _ = sat.sgp4(sat.jdsatepoch, sat.jdsatepochF)
        assert err == 0
        # SGP4's short-period J2 terms move the osculating radius by a few km.
        assert np.linalg.norm(r) == pytest.approx(R_WGS72_KM + altitude_km, abs=8.0)


def test_a_geostationary_satellite_stands_still_in_the_earth_fixed_frame():
    text = tle_set(1, 0.05, 0.0, 0.0, 1.00273791, ecc=200)
    sat = tle.satellites(tle.parse_tle(text))[0]
    hours = np.arange(0, 7)
    jd, fr = np.full(7, sat.jdsatepoch), sat.jdsatepochF + hours / 24
    _, r, _ = sat.sgp4_array(jd, fr)
    fixed = tle.teme_to_ecef(r, jd, fr)
    lon = np.degrees(np.arctan2(fixed[:, 1], fixed[:, 0]))
    inertial = np.degrees(np.arctan2(r[:, 1], r[:, 0]))
    assert np.ptp(lon) < 0.5  # Earth rotation taken out
    assert abs((inertial[6] - inertial[0]) % 360 - 90.2) < 1.0  # TEME: a quarter turn in 6 h


def test_a_satellite_at_the_zenith_gives_twice_its_altitude_over_c_then_an_outage(
    write_toml, tmp_path
):
    text = tle_set(1, 53.0, 40.0, 30.0, rev_per_day(R_WGS72_KM + 550.0))
    lat, lon, r = subsatellite_point(text)
    path = write_scenario(
        write_toml,
        tmp_path,
        text,
        terminal=f"[{lat}, {lon}]",
        gateway=f"[{lat}, {lon}]",
        extra='extra_delay = "0 ms"\nextra_delay_ba = "5 ms"\nloss = "1 %"\nspan = "20 min"',
    )
    ab, ba = resolved(path)
    assert ab["model"]["kind"] == "trace" and ab["rate_bps"] == 20_000_000
    t0, d0, loss0 = ab["model"]["series"][0]
    zenith_ns = 2 * (np.linalg.norm(r) - R_SPHERE_KM) * 1000 / C * 1e9
    assert t0 == 0 and d0 == pytest.approx(zenith_ns, abs=50) and loss0 == 0.01
    assert ba["model"]["series"][0][1] == d0 + 5_000_000  # extra_delay_ba on the same geometry
    # One satellite passes over in minutes; later slots have none: loss 1, delay = extra_delay.
    outage = [row for row in ab["model"]["series"] if row[2] == 1.0]
    assert outage and all(row[1] == 0 for row in outage)
    assert outage[0][0] < 20 * 60 * 10**9


def test_the_delay_series_is_plausible_and_switches_satellite_only_at_slot_boundaries(
    write_toml, tmp_path
):
    # Run starts at 10:00:05 UTC: boundaries at :12, :27, :42 → 7 s, 22 s, 37 s, 52 s of the run.
    path = write_scenario(
        write_toml,
        tmp_path,
        shell(),
        extra='epoch = "2026-11-22T10:00:05Z"\nspan = "60 s"\nextra_delay = "0 ms"',
    )
    ab, _ = resolved(path)
    rows = ab["model"]["series"]
    delays = [d for _, d, loss in rows]
    assert all(loss == 0.0 for *_, loss in rows)
    h = 550e3
    slant_25 = math.sqrt(
        (6371e3 + h) ** 2 - (6371e3 * math.cos(math.radians(25))) ** 2
    ) - 6371e3 * math.sin(math.radians(25))
    assert 2 * h / C * 1e9 * 0.98 < min(delays) and max(delays) < 2 * slant_25 / C * 1e9
    assert rows[-1][0] < 60 * 10**9
    # Within a slot, 100 ms moves the satellite < 1 km: < 7 µs; jumps are the boundaries.
    jumps = [
        t
        for (t, d, _), (_, d_prev, _) in zip(rows[1:], rows[:-1], strict=True)
        if abs(d - d_prev) > 7_000
    ]
    assert jumps, "the serving satellite never changed in 60 s"
    assert all(t in (7 * 10**9, 22 * 10**9, 37 * 10**9, 52 * 10**9) for t in jumps), jumps
    assert len(set(delays)) > 100  # the geometry is followed within slots


@pytest.mark.parametrize(
    "content, extra, expected",
    [
        (
            ISS.replace("0  2927", "0  2928"),
            "",
            "line 1: expected checksum 7 in column 69, found another character",
        ),
        (
            ISS.splitlines()[0] + "\n",
            "",
            "expected lines 1 and 2 of a TLE set, found the end of the file",
        ),
        (None, "", "found 'missing.tle': expected a TLE file, found no such file"),
        (ISS, 'epoch = "2026-11-22 10:00"', "link[0].model.epoch: expected a UTC instant"),
        (ISS, "planes = 10", "link[0].model.planes: expected no planes beside tle"),
        (ISS, 'start = "5 s"', "link[0].model.start: expected no start beside tle"),
    ],
)
def test_bad_tle_input_is_named_with_file_and_key(write_toml, tmp_path, content, extra, expected):
    text = SCENARIO.format(
        tle="sats.tle" if content is not None else "missing.tle",
        terminal="[50.11, 8.68]",
        gateway="[50.9, 9.3]",
        extra=extra,
        duration="5 s",
    )
    if content is not None:
        (tmp_path / "sats.tle").write_text(content)
    path = write_toml(text)
    with pytest.raises(UserError) as e:
        sc.load(path)
    message = str(e.value)
    line = next(x for x in message.splitlines() if expected in x)
    assert line.startswith(f"{path}: link[0].model."), message
    if "epoch" not in expected and "beside" not in expected:
        assert line.startswith(
            f"{path}: link[0].model.tle: expected a TLE file of 2- or 3-line sets, found"
        )


def test_epoch_without_tle_asks_for_the_file_and_no_common_satellite_is_reported(
    write_toml, tmp_path
):
    text = SCENARIO.format(
        tle="x", terminal="[50.11, 8.68]", gateway="[50.9, 9.3]", extra="", duration="5 s"
    ).replace('tle = "x"\n', 'epoch = "2026-11-22T10:00:05Z"\n')
    with pytest.raises(UserError) as e:
        sc.load(write_toml(text))
    assert "link[0].model.tle: expected the required key 'tle'" in str(e.value)
    # Terminal and gateway on opposite sides of the Earth: no satellite sees both.
    path = write_scenario(
        write_toml, tmp_path, shell(6, 4), gateway="[-50.0, -171.0]", extra='span = "30 s"'
    )
    with pytest.raises(UserError) as e:
        sc.load(path)
    assert (
        "link[0].model.tle: expected a satellite visible from both ends within the span, found none"
        in str(e.value)
    )


@requires_sim
def test_satcc_sim_runs_a_scenario_with_a_tle_file(write_toml, tmp_path, capsys):
    path = write_scenario(write_toml, tmp_path, shell(), extra='span = "20 s"', duration="20 s")
    status = cli.main(["sim", str(path), "--out", str(tmp_path / "out")])
    _, err = capsys.readouterr()
    assert status in (0, None), err
    assert any((tmp_path / "out").rglob("*.parquet"))
