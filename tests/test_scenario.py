"""satcc.scenario: validation with file + key path + expected + found, and resolve()."""

import json
import re
from pathlib import Path

import pytest

from satcc import _native
from satcc import scenario as sc
from tests.helpers import MINIMAL

REPO = Path(__file__).resolve().parents[1]

# The contract in python/satcc/_native.pyi.
TOP_KEYS = {
    "name",
    "seed",
    "duration_ns",
    "bin_ns",
    "nodes",
    "links",
    "routes",
    "flows",
    "host_noise_quantiles_ns",
}  # present by default (host_noise = "kernel")
LINK_KEYS = {"a", "b", "ab", "ba"}
DIR_KEYS = {"rate_bps", "delay_ns", "loss", "queue", "ecn_threshold_pkts"}
FLOW_KEYS = {
    "id",
    "src",
    "dst",
    "cca",
    "cc",
    "start_ns",
    "size_bytes",
    "mss",
    "sack",
    "timestamps",
    "window_scaling",
    "rwnd_bytes",
    "rcvbuf_autotune",
    "ecn",
    "initial_cwnd",
    "pacing",
    "delayed_ack",
    "min_rto_ns",
    "sndbuf_bytes",
    "metrics_save",
}


def test_the_resolver_hands_back_every_ready_scenario_unchanged_plus_routes():
    """The resolved scenario is the scenario layer's dictionary, value for value and type for
    type (int stays int, absent stays absent), plus `routes`: run hashes do not move."""
    paths = sorted(p for p in (REPO / "scenarios").rglob("*.toml") if p.name != "grid.toml")
    assert len(paths) >= 30
    for path in paths:
        s = sc.load(path)
        given = sc.spec(s)
        if given.get("host_noise_quantiles_ns") == "kernel":  # the resolver writes the points
            kernel = _native.host_noise_kernel()
            given["host_noise_quantiles_ns"] = {
                side: [[float(p), int(ns)] for p, ns in kernel[side]]
                for side in ("sender", "receiver")
            }
        resolved = sc.resolve(s)
        assert set(resolved) == set(given) | {"routes"}, path.name
        back = {k: v for k, v in resolved.items() if k != "routes"}
        assert sc.canonical_json(back) == sc.canonical_json(given), path.name
        assert sc.scenario_hash(resolved) == sc.scenario_hash(given), path.name


def test_resolved_config_has_exactly_the_contract_keys(write_toml):
    config = sc.resolve(sc.load(write_toml(MINIMAL)))
    assert set(config) == TOP_KEYS
    for link in config["links"]:
        assert set(link) == LINK_KEYS
        assert set(link["ab"]) == DIR_KEYS and set(link["ba"]) == DIR_KEYS
    for flow in config["flows"]:
        assert set(flow) == FLOW_KEYS


def test_the_contract_keys_are_declared_in_satcc_core():
    # The stub points at the Rust types instead of spelling the keys (issue 40): each key is
    # a field of scenario.rs or dirspec.rs, or an entry of the key lists (switches.rs: a
    # switch, or a key with a unit, `NAME [/ NAME_ba] [as "WIRE"]: UNIT = DEFAULT`).
    core = REPO / "crates/satcc-core/src"
    fields = "".join(
        (core / p).read_text() for p in ("scenario.rs", "dirspec.rs", "scenario/switches.rs")
    )
    for key in TOP_KEYS | LINK_KEYS | DIR_KEYS | FLOW_KEYS:
        entry = rf"{key} = (true|false)|{key}: [\w<>]+ = |\w+( / \w+)? as \"{key}\": [\w<>]+ = "
        assert re.search(rf"^\s*(pub {key}:|{entry})", fields, re.MULTILINE), key


def test_defaults_are_filled_in_base_units(write_toml):
    config = sc.resolve(sc.load(write_toml(MINIMAL)))
    assert config["name"] == "tiny"
    assert config["seed"] == sc.DEFAULT_SEED
    assert config["duration_ns"] == 2 * 10**9
    assert config["bin_ns"] == 100 * 10**6
    assert config["nodes"] == ["s", "d"]
    ab = config["links"][0]["ab"]
    assert ab == {
        "rate_bps": 10**7,
        "delay_ns": 10**7,
        "loss": 0.0,
        "queue": {"packets": 1000},
        "ecn_threshold_pkts": None,
    }
    assert config["links"][0]["ba"] == ab
    f = config["flows"][0]
    assert f["mss"] == 1448 and f["initial_cwnd"] == 10 and f["min_rto_ns"] == 200 * 10**6
    assert f["rwnd_bytes"] == 6 * 2**20
    assert f["sack"] and f["timestamps"] and f["window_scaling"] and f["delayed_ack"]
    assert not f["ecn"] and f["pacing"] == "auto" and f["size_bytes"] is None
    assert f["start_ns"] == 0 and f["cc"] == {}


def test_the_default_cca_is_cubic_as_in_linux(write_toml):
    s = sc.load(write_toml(MINIMAL.replace('cca = "reno"\n', "")))
    assert sc.resolve(s)["flows"][0]["cca"] == "cubic"


def test_the_name_defaults_to_the_file_stem(write_toml):
    path = write_toml(MINIMAL.replace('name = "tiny"\n', ""), name="my-run.toml")
    assert sc.load(path).name == "my-run"


def test_reverse_direction_overrides_apply_only_to_b_to_a(write_toml):
    text = MINIMAL.replace(
        'delay = "10 ms"',
        'delay = "10 ms"\nrate_ba = "1 Mbit/s"\n'
        'delay_ba = "30 ms"\nloss = "1 %"\nloss_ba = 0\nqueue = "1 BDP"\n'
        'queue_ba = "64 KB"\necn_threshold = 20\necn_threshold_ba = "5 pkt"',
    )
    link = sc.resolve(sc.load(write_toml(text)))["links"][0]
    assert link["ab"] == {
        "rate_bps": 10**7,
        "delay_ns": 10**7,
        "loss": 0.01,
        "queue": {"bdp": 1.0},
        "ecn_threshold_pkts": 20,
    }
    assert link["ba"] == {
        "rate_bps": 10**6,
        "delay_ns": 3 * 10**7,
        "loss": 0.0,
        "queue": {"bytes": 64000},
        "ecn_threshold_pkts": 5,
    }


def test_count_expands_into_consecutive_flows_that_remember_their_origin(write_toml):
    text = (
        MINIMAL
        + """
[[flow]]
name = "bulk"
from = "d"
to = "s"
cca = "reno"
count = 3
start = "1 s"
stagger = "100 ms"
"""
    )
    s = sc.load(write_toml(text))
    config = sc.resolve(s)
    assert [f["id"] for f in config["flows"]] == [0, 1, 2, 3]
    assert [f["start_ns"] for f in config["flows"]] == [0, 10**9, 11 * 10**8, 12 * 10**8]
    assert [(f["src"], f["dst"]) for f in config["flows"][1:]] == [(1, 0)] * 3
    origins = sc.expand_flows(s)
    assert [(o.id, o.scenario_flow, o.copy, o.name) for o in origins] == [
        (0, 0, 0, "flow0"),
        (1, 1, 0, "bulk.0"),
        (2, 1, 1, "bulk.1"),
        (3, 1, 2, "bulk.2"),
    ]


def test_window_scaling_off_caps_the_receive_window_at_65535(write_toml):
    # rwnd is the buffer (tcp_rmem[2]) either way; without window scaling the window the
    # receiver offers stays below 65535 B, with it the buffer's share 160/256 (full segments).
    text = MINIMAL + 'window_scaling = false\nrwnd = "16 MB"\n'
    flow = sc.resolve(sc.load(write_toml(text)))["flows"][0]
    assert flow["rwnd_bytes"] == 16_000_000
    assert sc.receive_window_bytes(flow) == 65535
    text = MINIMAL + 'rwnd = "16 MB"\n'
    flow = sc.resolve(sc.load(write_toml(text)))["flows"][0]
    assert sc.receive_window_bytes(flow) == 16_000_000 * 160 // 256
    text = MINIMAL + 'rwnd = "16 MB"\nrcvbuf_autotune = false\n'
    flow = sc.resolve(sc.load(write_toml(text)))["flows"][0]
    assert flow["rcvbuf_autotune"] is False
    assert sc.receive_window_bytes(flow) == 16_000_000


def test_rx_truesize_and_fixed_buffer_match_the_simulators_receiver():
    # crates/satcc-sim/src/tcp/receiver/mod.rs: 2304 B per full segment, ratio 160.
    assert sc.rx_truesize(1448) == 2304
    assert sc.scaling_ratio(1448) == 160
    assert sc.fixed_rcvbuf_bytes(1_000_000, 1448) * 160 // 256 >= 1_000_000


def test_pacing_accepts_booleans_as_on_and_off(write_toml):
    assert (
        sc.resolve(sc.load(write_toml(MINIMAL + "pacing = true\n")))["flows"][0]["pacing"] == "on"
    )
    assert (
        sc.resolve(sc.load(write_toml(MINIMAL + "pacing = false\n")))["flows"][0]["pacing"] == "off"
    )


def test_seed_override_replaces_the_seed_but_not_the_hash(write_toml):
    s = sc.load(write_toml(MINIMAL))
    a, b = sc.resolve(s), sc.resolve(s, seed_override=7)
    assert b["seed"] == 7 and a["seed"] == 1
    assert sc.scenario_hash(a) == sc.scenario_hash(b)


def test_the_scenario_hash_is_stable_and_changes_with_the_scenario(write_toml):
    h1 = sc.scenario_hash(sc.resolve(sc.load(write_toml(MINIMAL))))
    h2 = sc.scenario_hash(sc.resolve(sc.load(write_toml(MINIMAL, name="again.toml"))))
    h3 = sc.scenario_hash(
        sc.resolve(sc.load(write_toml(MINIMAL.replace("10 Mbit/s", "11 Mbit/s"))))
    )
    assert h1 == h2 != h3
    assert re.fullmatch(r"[0-9a-f]{64}", h1)


def test_the_resolved_config_is_json_serialisable(write_toml):
    config = sc.resolve(sc.load(write_toml(MINIMAL)))
    assert json.loads(sc.canonical_json(config)) == config


# -- errors ----------------------------------------------------------------------------------


def _error(write_toml, text: str) -> sc.ScenarioError:
    path = write_toml(text)
    with pytest.raises(sc.ScenarioError) as e:
        sc.load(path)
    assert all(str(path) in line for line in str(e.value).splitlines())
    return e.value


# (replace this, with that, key path, a piece of "expected", a piece of "found")
BAD = [
    ('duration = "2 s"', 'duration = "2 sec0"', "scenario.duration", "a duration", "'2 sec0'"),
    ('duration = "2 s"', 'duration = "2 s"\nseed = "one"', "scenario.seed", "an integer", "'one'"),
    ('duration = "2 s"', 'duration = "2 s"\nengine = "ns3"', "scenario.engine", "'sim'", "'ns3'"),
    (
        'duration = "2 s"',
        'duration = "2 s"\nbin = "3 s"',
        "scenario.bin",
        "at most the duration",
        "3 s",
    ),
    ('duration = "2 s"', 'duration = "0 s"', "scenario.duration", "positive", "0"),
    ('rate = "10 Mbit/s"', 'rate = "10 MB"', "link[0].rate", "a rate", "'10 MB'"),
    ('rate = "10 Mbit/s"', 'rate = "0 bit/s"', "link[0].rate", "positive rate", "0 bit/s"),
    ('delay = "10 ms"', "delay = 10", "link[0].delay", "a duration", "10"),
    ('delay = "10 ms"', 'delay = "10 ms"\nloss = 1.5', "link[0].loss", "a probability", "1.5"),
    ('delay = "10 ms"', 'delay = "10 ms"\nqueue = 100', "link[0].queue", "a queue limit", "100"),
    ('delay = "10 ms"', 'delay = "10 ms"\ndrop = "head"', "link[0].drop", "'front'", "'head'"),
    ('delay = "10 ms"', 'delay = "10 ms"\ndrop_ba = 1', "link[0].drop_ba", "", "1"),
    # bare numbers need a unit, as delay's do (issue 29: these were 5 bit/s and 100 bytes)
    ('rate = "10 Mbit/s"', "rate = 5", "link[0].rate", "a rate", "5 (a bare number needs a unit"),
    ('rate = "10 Mbit/s"', 'rate = "5"', "link[0].rate", "a rate", "'5' (a bare number needs"),
    (
        'delay = "10 ms"',
        'delay = "10 ms"\nqueue = "100"',
        "link[0].queue",
        "a queue limit",
        "'100' (a bare number needs a unit",
    ),
    (
        'delay = "10 ms"',
        'delay = "10 ms"\nqueue_ba = "lots"',
        "link[0].queue_ba",
        "a queue limit",
        "'lots'",
    ),
    (
        'delay = "10 ms"',
        'delay = "10 ms"\nbandwidth = "1 Gbit/s"',
        "link[0].bandwidth",
        "rate",
        "'bandwidth'",
    ),
    ('b = "d"', 'b = "s"', "link[0].b", "a node other than a", "'s'"),
    ('to = "d"', 'to = "x"', "flow[0].to", "a node named in a link", "'x'"),
    ('to = "d"', 'to = "s"', "flow[0].to", "a node other than from", "'s'"),
    ('cca = "reno"', 'cca = "no-such-cca"', "flow[0].cca", "reno", "'no-such-cca'"),
    ('cca = "reno"', 'cca = "reno"\nsack = "yes"', "flow[0].sack", "true or false", "'yes'"),
    ('cca = "reno"', 'cca = "reno"\nmss = 1.5', "flow[0].mss", "an integer", "1.5"),
    ('cca = "reno"', 'cca = "reno"\nmss = 40', "flow[0].mss", "88..", "40"),
    ('cca = "reno"', 'cca = "reno"\nrwnd = "16 mb"', "flow[0].rwnd", "a size", "'16 mb'"),
    (
        'cca = "reno"',
        'cca = "reno"\nrwnd = "1 kB"',
        "flow[0].rwnd",
        "at least one segment",
        "1000 B",
    ),
    ('cca = "reno"', 'cca = "reno"\nstart = "5 s"', "flow[0].start", "before the end", "5 s"),
    ('cca = "reno"', 'cca = "reno"\ncount = 0', "flow[0].count", ">= 1", "0"),
    ('cca = "reno"', 'cca = "reno"\npacing = "maybe"', "flow[0].pacing", "'auto'", "'maybe'"),
    ('cca = "reno"', 'cca = "reno"\nsize = "0 B"', "flow[0].size", "at least 1 byte", "0 B"),
    ('cca = "reno"', 'cca = "reno"\ninitial_cwnd = 0', "flow[0].initial_cwnd", ">= 1", "0"),
    ('cca = "reno"', 'cca = "reno"\nmin_rto = "0 ms"', "flow[0].min_rto", "positive", "0"),
    ('cca = "reno"', 'cca = "reno"\ncolour = "red"', "flow[0].colour", "initial_cwnd", "'colour'"),
    (
        'cca = "reno"',
        'cca = "reno"\ncc = { no_such_param = 1 }',
        "flow[0].cc.no_such_param",
        "",
        "unknown",
    ),
    ('cca = "reno"', 'cca = "reno"\ncc = 3', "flow[0].cc", "a table", "3"),
    (
        'cca = "reno"',
        'cca = "reno"\ncc = { beta = { x = 1 } }',
        "flow[0].cc.beta",
        "a number",
        "a table",
    ),
]


@pytest.mark.parametrize(
    "old,new,path,expected,found", BAD, ids=[b[2] + ":" + b[1][-20:] for b in BAD]
)
def test_each_error_names_file_key_expected_and_found(write_toml, old, new, path, expected, found):
    assert old in MINIMAL
    err = _error(write_toml, MINIMAL.replace(old, new, 1))
    lines = [line for line in str(err).splitlines() if f": {path}: " in line]
    assert lines, str(err)
    line = lines[0]
    _, _, tail = line.partition(": expected ")
    assert tail, line
    assert expected in tail.split(", found")[0] or expected in tail, line
    assert "found" in tail and found in tail.rsplit("found", 1)[1], line


def test_all_problems_are_reported_at_once(write_toml):
    text = MINIMAL.replace('to = "d"', 'to = "x"').replace('cca = "reno"', 'cca = "no-such-cca"')
    err = _error(write_toml, text)
    paths = [p for p, _ in err.issues]
    assert "flow[0].to" in paths and "flow[0].cca" in paths


def test_nodes_that_are_not_connected_are_an_error(write_toml):
    text = MINIMAL + '\n[[link]]\na = "x"\nb = "y"\nrate = "1 Mbit/s"\ndelay = "1 ms"\n'
    text = text.replace('to = "d"', 'to = "y"')
    err = _error(write_toml, text)
    assert "flow[0].to: expected a node connected to 's' by links, found 'y'" in str(err)


def test_two_links_between_the_same_nodes_are_an_error(write_toml):
    text = MINIMAL + '\n[[link]]\na = "d"\nb = "s"\nrate = "1 Mbit/s"\ndelay = "1 ms"\n'
    assert "link[1]: expected at most one link between 'd' and 's'" in str(_error(write_toml, text))


def test_missing_tables_and_keys_are_named(write_toml):
    err = _error(write_toml, "[scenario]\nname = 'x'\n")
    text = str(err)
    assert "scenario.duration: expected the required key 'duration', found nothing" in text
    assert "link: expected at least one [[link]] table" in text
    assert "flow: expected at least one [[flow]] table" in text


def test_a_single_bracket_link_table_is_explained(write_toml):
    text = MINIMAL.replace("[[link]]", "[link]")
    assert "link: expected an array of tables written [[link]], found a table" in str(
        _error(write_toml, text)
    )


def test_toml_syntax_errors_name_the_file_and_line(write_toml):
    err = _error(write_toml, "[scenario]\nduration = \n")
    assert "invalid TOML" in str(err) and "line 2" in str(err)
    err = _error(write_toml, "[scenario]\nname = 'x'\nname = 'y'\n")  # one line, placed
    (line,) = str(err).splitlines()
    assert re.search(r"invalid TOML: .*\(at line 3, column \d+\)$", line), line


def test_a_float_that_is_not_finite_is_named_by_its_key_path(write_toml):
    text = MINIMAL.replace("[scenario]", "[scenario]\nx = nan\ny = [1.0, -inf]", 1)
    text = text.replace("[[flow]]", "[[flow]]\nz = inf", 1)
    lines = str(_error(write_toml, text)).splitlines()  # each names the file
    assert [line.split(": ", 1)[1] for line in lines] == [
        f"{key}: expected a finite number, found {found}"
        for key, found in (("scenario.x", "NaN"), ("scenario.y[1]", "-inf"), ("flow[0].z", "inf"))
    ]


def test_a_missing_file_is_a_scenario_error(tmp_path):
    with pytest.raises(sc.ScenarioError, match="no such file"):
        sc.load(tmp_path / "nope.toml")


def test_unknown_keys_list_the_valid_ones(write_toml):
    err = _error(write_toml, MINIMAL.replace('cca = "reno"', 'cca = "reno"\nwscale = true'))
    line = str(err)
    for key in ("window_scaling", "rwnd", "from", "to"):
        assert key in line


def test_an_out_of_range_seed_override_is_refused(write_toml):
    from satcc.errors import UserError

    s = sc.load(write_toml(MINIMAL))
    with pytest.raises(UserError, match="--seed"):
        sc.resolve(s, seed_override=-1)


# -- documentation and ready scenarios ---------------------------------------------------------


def _doc_section(title: str, doc: str = "scenario.md") -> str:
    """A `## title` section of a reference page in docs/ (the README links them)."""
    text = (REPO / "docs" / doc).read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.DOTALL | re.MULTILINE)
    assert m, f"docs/{doc} has no '## {title}' section"
    return m.group(1)


def test_the_reference_documents_every_scenario_key():
    section = _doc_section("Scenario format")
    assert set(sc.TABLE_KEYS) == {"scenario", "link", "flow"}
    for table, keys in sc.TABLE_KEYS.items():
        assert len(keys) > 5, table
        for key in keys:
            assert f"`{key}`" in section, f"docs/scenario.md Scenario format lacks {table}.{key}"


def test_the_reference_example_scenario_is_valid():
    section = _doc_section("Scenario format")
    m = re.search(r"```toml\n(.*?)```", section, re.DOTALL)
    assert m, "no ```toml example in docs/scenario.md Scenario format"
    sc.loads(m.group(1), source="docs/scenario.md")


@pytest.mark.parametrize("path", sorted((REPO / "scenarios").glob("*.toml")), ids=lambda p: p.name)
def test_every_ready_scenario_is_valid(path):
    sc.resolve(sc.load(path))  # an unknown congestion control fails here, never a skip


def test_a_misspelt_congestion_control_is_an_error_not_a_skip(write_toml):
    with pytest.raises(sc.ScenarioError, match="cubci"):
        sc.load(write_toml(MINIMAL.replace('cca = "reno"', 'cca = "cubci"')))


def test_jitter_is_resolved_only_where_set(write_toml):
    text = MINIMAL.replace(
        'delay = "10 ms"', 'delay = "10 ms"\njitter = "2 ms"\njitter_ba = "0 ms"'
    )
    assert 'jitter = "2 ms"' in text
    config = sc.resolve(sc.load(write_toml(text)))
    ab, ba = config["links"][0]["ab"], config["links"][0]["ba"]
    assert ab["jitter_ns"] == 2_000_000
    assert "jitter_ns" not in ba
    assert "jitter_ns" not in sc.resolve(sc.load(write_toml(MINIMAL)))["links"][0]["ab"]


def test_a_drop_front_queue_is_resolved_only_where_set(write_toml):
    # `drop` sets both directions, `drop_ba` the b->a one; the default ("tail") is left out of
    # the resolved form, so scenarios written before the key keep their hash
    text = MINIMAL.replace('delay = "10 ms"', 'delay = "10 ms"\ndrop = "front"\ndrop_ba = "tail"')
    link = sc.resolve(sc.load(write_toml(text)))["links"][0]
    assert link["ab"]["drop"] == "front"
    assert "drop" not in link["ba"]
    text = MINIMAL.replace('delay = "10 ms"', 'delay = "10 ms"\ndrop = "front"')
    assert sc.resolve(sc.load(write_toml(text)))["links"][0]["ba"]["drop"] == "front"
    plain = sc.load(write_toml(MINIMAL))
    assert "drop" not in sc.resolve(plain)["links"][0]["ab"]
    tail = sc.load(write_toml(MINIMAL.replace('delay = "10 ms"', 'delay = "10 ms"\ndrop = "tail"')))
    assert sc.resolve(tail) == sc.resolve(plain)


def test_the_vpn_node_must_be_a_node_and_reaches_the_emulator(write_toml, monkeypatch):
    # [scenario] vpn names the node the emulator runs the OpenVPN server on (study 000); a name
    # that is not a node is refused with the key, and the emulator engine receives the node
    # (`satcc emu --vpn` still wins over it).
    bad = MINIMAL.replace('name = "tiny"', 'name = "tiny"\nvpn = "nowhere"')
    with pytest.raises(sc.ScenarioError, match=r"scenario\.vpn.*expected a node.*'nowhere'"):
        sc.load(write_toml(bad))

    from satcc.engines import emu

    seen = {}

    class Stop(Exception):
        pass

    def fake_run(config, workdir, **kwargs):
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(emu, "Run", fake_run)
    good = sc.load(write_toml(MINIMAL.replace('name = "tiny"', 'name = "tiny"\nvpn = "d"')))
    for given, expected in ((None, "d"), ("s", "s")):
        with pytest.raises(Stop):
            emu.run(good, vpn_server=given)
        assert seen["vpn_server"] == expected


def test_a_scenario_files_defaults_are_the_native_ones():
    """The defaults are declared once, in satcc-core (issue 28: Python's rwnd of 6 MiB and the
    simulator's 32 MiB had drifted apart): a scenario that sets nothing resolves to them."""
    from satcc import _native
    from satcc import scenario as scen

    d = _native.scenario_defaults()
    text = """
        [scenario]
        name = "defaults"
        duration = "1 s"
        [[link]]
        a = "a"
        b = "b"
        rate = "10 Mbit/s"
        delay = "5 ms"
        [[flow]]
        from = "a"
        to = "b"
    """
    r = scen.resolve(scen.loads(text))
    f = r["flows"][0]
    assert (f["mss"], f["rwnd_bytes"], f["initial_cwnd"], f["min_rto_ns"]) == (
        d["mss"],
        d["rwnd_bytes"],
        d["initial_cwnd"],
        d["min_rto_ns"],
    )
    assert (r["bin_ns"], r["seed"]) == (d["bin_ns"], d["seed"])
    assert r["links"][0]["ab"]["queue"] == {"packets": d["queue_pkts"]}
