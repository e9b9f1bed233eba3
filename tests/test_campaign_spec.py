"""The campaign file's schema (satcc.campaign.schema) as `satcc campaign` reports it: every
problem one line naming the key, what was expected and what was found, problems in several
tables reported together, the limits on nesting kept, and every ready campaign valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from satcc.campaign import spec
from tests.campaign_helpers import write_campaign

REPO = Path(__file__).resolve().parents[1]

BASE = """
[scenario]
duration = "1 s"
[[link]]
a = "s"
b = "d"
rate = "10 Mbit/s"
delay = "5 ms"
[[flow]]
from = "s"
to = "d"
"""
HEAD = '[campaign]\nscenario = "base.toml"\n'
DURATION_HINT = "a duration like '600 ms' or '1.5 s' (units: ns, us, ms, s, min, h)"

# (campaign text, key path, message): the one problem each file has
BAD = {
    "unknown table": (
        "foo = 1\n" + HEAD,
        "foo",
        "expected one of the tables [campaign], [matrix], [[analyze]]; found an unknown key 'foo'",
    ),
    "unknown [campaign] key": (
        HEAD + "repetitons = 3\n",
        "campaign.repetitons",
        (
            "expected one of the keys name, description, scenario, repetitions, seed, seeds; "
            "found an unknown key 'repetitons'"
        ),
    ),
    "[campaign] not a table": (
        "campaign = 5\n",
        "campaign",
        "expected a [campaign] table, found 5",
    ),
    "empty name": (HEAD + 'name = ""\n', "campaign.name", "expected a non-empty string, found ''"),
    "long name": (
        HEAD + f'name = "{"x" * 300}"\n',
        "campaign.name",
        "expected a name of at most 200 characters, found 300",
    ),
    "description not text": (
        HEAD + "description = 5\n",
        "campaign.description",
        "expected a string, found 5",
    ),
    "scenario not text": (
        '[campaign]\nscenario = 5\n[matrix]\n"flow[0].cca" = ["reno"]\n',
        "campaign.scenario",
        "expected a string, found 5",
    ),
    "no seeds": (
        HEAD + "seeds = []\n",
        "campaign.seeds",
        "expected a non-empty array of seeds, found an empty one",
    ),
    "a seed twice": (
        HEAD + "seeds = [1, 1]\n",
        "campaign.seeds",
        "expected distinct seeds, found 1 twice",
    ),
    "a negative seed": (
        HEAD + "seeds = [1, -1]\n",
        "campaign.seeds[1]",
        "expected an integer in 0..2^64-1, found -1",
    ),
    "seeds not an array": (
        HEAD + 'seeds = "1"\n',
        "campaign.seeds",
        "expected a non-empty array of integers in 0..2^64-1, found '1'",
    ),
    "values not an array": (
        HEAD + '[matrix]\nrtt = { key = "link[0].delay", values = "1 ms" }\n',
        "matrix.rtt.values",
        "expected a non-empty array of values, found '1 ms'",
    ),
    "seeds and repetitions": (
        HEAD + "seeds = [1]\nrepetitions = 2\n",
        "campaign.seeds",
        "expected either `seeds` or `repetitions`, found both",
    ),
    "seeds and seed": (
        HEAD + "seeds = [1]\nseed = 2\n",
        "campaign.seeds",
        "expected either `seeds` or `seed` (the first of the seeds), found both",
    ),
    "no repetitions": (
        HEAD + "repetitions = 0\n",
        "campaign.repetitions",
        "expected an integer >= 1, found 0",
    ),
    "repetitions as a boolean": (
        HEAD + "repetitions = true\n",
        "campaign.repetitions",
        "expected an integer >= 1, found true",
    ),
    "seed below 0": (
        HEAD + "seed = -1\n",
        "campaign.seed",
        "expected an integer in 0..2^64-1, found -1",
    ),
    "seeds past 2^64-1": (
        HEAD + "seed = 18446744073709551615\nrepetitions = 2\n",
        "campaign.seed",
        (
            "expected a first seed of at most 2^64-2 (2 repetitions count up from it within "
            "0..2^64-1), found 18446744073709551615"
        ),
    ),
    "[matrix] not a table": ("matrix = 5\n" + HEAD, "matrix", "expected a [matrix] table, found 5"),
    "a bad key path": (
        HEAD + '[matrix]\n"flow[0]..cca" = ["reno"]\n',
        "matrix.'flow[0]..cca'",
        (
            "expected a key path like 'flow[0].cca' or 'flow.*.mss', found 'flow[0]..cca' "
            "(bad part '')"
        ),
    ),
    "no values": (
        HEAD + '[matrix]\n"flow.*.cca" = []\n',
        "matrix.'flow.*.cca'",
        "expected a non-empty array of values, found an empty one",
    ),
    "a value twice": (
        HEAD + '[matrix]\n"flow.*.cca" = ["reno", "reno"]\n',
        "matrix.'flow.*.cca'",
        "expected distinct values, found 'reno' twice",
    ),
    "a value that is not a number (was a ValueError)": (
        HEAD + '[matrix]\n"flow[0].cc.beta" = [0.5, nan]\n',
        "matrix.'flow[0].cc.beta'",
        "expected finite numbers, found nan",
    ),
    "an entry neither array nor table": (
        HEAD + "[matrix]\nx = 5\n",
        "matrix.x",
        "expected an array of values or a table, found 5",
    ),
    "key without values": (
        HEAD + '[matrix]\nrtt = { key = "link[0].delay" }\n',
        "matrix.rtt",
        "expected `key` and `values` (or `cases`), found key",
    ),
    "cases and key": (
        HEAD + '[matrix]\nrtt = { key = "link[0].delay", values = ["1 ms"], cases = { a = {} } }\n',
        "matrix.rtt",
        "expected either `cases` or `key` and `values`, found both",
    ),
    "an empty axis table": (
        HEAD + "[matrix]\nrtt = {}\n",
        "matrix.rtt",
        "expected `key` and `values` (or `cases`), found an empty table",
    ),
    "key not a path": (
        HEAD + '[matrix]\nrtt = { key = 5, values = ["1 ms"] }\n',
        "matrix.rtt.key",
        "expected a key path, or a non-empty array of them, found 5",
    ),
    "no keys": (
        HEAD + '[matrix]\nrtt = { key = [], values = ["1 ms"] }\n',
        "matrix.rtt.key",
        "expected a key path, or a non-empty array of them, found an empty array",
    ),
    "a bad key": (
        HEAD + '[matrix]\nrtt = { key = "link[0]..delay", values = ["1 ms"] }\n',
        "matrix.rtt.key",
        (
            "expected a key path like 'flow[0].cca' or 'flow.*.mss', found 'link[0]..delay' "
            "(bad part '')"
        ),
    ),
    "one bad key of two": (
        HEAD + '[matrix]\nrtt = { key = ["link[0].delay", "link[0]..loss"], values = ["1 ms"] }\n',
        "matrix.rtt.key[1]",
        (
            "expected a key path like 'flow[0].cca' or 'flow.*.mss', found 'link[0]..loss' "
            "(bad part '')"
        ),
    ),
    "an unknown role": (
        HEAD + '[matrix]\nrtt = { key = "link[0].delay", values = ["1 ms"], role = "x" }\n',
        "matrix.rtt.role",
        (
            "expected one of 'cca', 'mss', 'loss', 'rtt', 'time_of_day', 'engine', 'size', "
            "'direction', 'plan', 'count' or 'other', found 'x'"
        ),
    ),
    "a column name not text (was a TypeError)": (
        HEAD + '[matrix]\nrtt = { key = "link[0].delay", values = ["1 ms"], name = 5 }\n',
        "matrix.rtt.name",
        "expected a non-empty string, found 5",
    ),
    "an unknown axis key": (
        HEAD + '[matrix]\nrtt = { key = "link[0].delay", values = ["1 ms"], zz = 1 }\n',
        "matrix.rtt.zz",
        "expected one of the keys key, values, cases, role, name; found an unknown key 'zz'",
    ),
    "cases not a table": (
        HEAD + "[matrix.d]\ncases = 5\n",
        "matrix.d.cases",
        "expected a table of label = { key.path = value, ... }, found 5",
    ),
    "no cases": (
        HEAD + "[matrix.d]\ncases = {}\n",
        "matrix.d.cases",
        "expected a table of label = { key.path = value, ... }, found an empty one",
    ),
    "a case not a table": (
        HEAD + "[matrix.d.cases]\nup = 5\n",
        "matrix.d.cases.up",
        "expected a table of key.path = value, found 5",
    ),
    "a bad key path in a case": (
        HEAD + '[matrix.d.cases]\nup = { "flow[0]..from" = "s" }\n',
        "matrix.d.cases.up",
        (
            "expected a key path like 'flow[0].cca' or 'flow.*.mss', found 'flow[0]..from' "
            "(bad part '')"
        ),
    ),
    "two columns of one name": (
        HEAD + "[matrix]\n"
        'a = { key = "flow[0].mss", values = [1000], name = "x" }\n'
        'b = { key = "flow[0].cca", values = ["reno"], name = "y" }\n'
        'x = { key = "flow[0].sack", values = [true] }\n',
        "matrix",
        "expected distinct column names, found 'x' twice (give one axis a `name`)",
    ),
    "a reserved column name": (
        HEAD + '[matrix]\nseed = { key = "flow[0].mss", values = [1000] }\n',
        "matrix",
        "expected a column name other than 'seed' (reserved); give the axis a `name`",
    ),
    "[analyze] a single table": (
        '[analyze]\nfiles = ["base.toml"]\n',
        "analyze",
        "expected an array of tables written [[analyze]], found a table",
    ),
    "an analyze entry not a table": ("analyze = [5]\n", "analyze[0]", "expected a table, found 5"),
    "analyze without files": (
        '[[analyze]]\nbin = "1 s"\n',
        "analyze[0].files",
        "expected the required key 'files', found nothing",
    ),
    "analyze files not text (was a TypeError)": (
        '[[analyze]]\nfiles = ["base.toml", 5]\n',
        "analyze[0].files[1]",
        "expected a string, found 5",
    ),
    "analyze files matching nothing": (
        '[[analyze]]\nfiles = ["nomatch*"]\n',
        "analyze[0].files",
        "expected files matching 'nomatch*', found none",
    ),
    "a zero bin": (
        '[[analyze]]\nfiles = ["base.toml"]\nbin = "0 s"\n',
        "analyze[0].bin",
        "expected a positive duration, found '0 s'",
    ),
    "a bin without unit": (
        '[[analyze]]\nfiles = ["base.toml"]\nbin = 5\n',
        "analyze[0].bin",
        f"expected {DURATION_HINT}, found 5 (a bare number needs a unit)",
    ),
    "a parameter not a scalar": (
        '[[analyze]]\nfiles = ["base.toml"]\nparams = { a = [1] }\n',
        "analyze[0].params.a",
        "expected a string, number or true/false, found an array",
    ),
    "each not a boolean": (
        '[[analyze]]\nfiles = ["base.toml"]\neach = "yes"\n',
        "analyze[0].each",
        "expected true or false, found 'yes'",
    ),
    "an unknown analyze key": (
        '[[analyze]]\nfiles = ["base.toml"]\nzz = 1\n',
        "analyze[0].zz",
        "expected one of the keys files, each, bin, params; found an unknown key 'zz'",
    ),
    "nothing to run": (
        "",
        "",
        "expected a base scenario ([campaign] scenario) or [[analyze]] entries, found neither",
    ),
}


def _issues(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    path = write_campaign(tmp_path, text, BASE)
    with pytest.raises(spec.CampaignError) as e:
        spec.load(path)
    assert str(e.value).splitlines() == [
        f"{path}: {p}: {m}" if p else f"{path}: {m}" for p, m in e.value.issues
    ]
    return e.value.issues


@pytest.mark.parametrize("case", sorted(BAD))
def test_each_bad_campaign_is_one_line_naming_the_key_what_was_expected_and_found(case, tmp_path):
    text, path, message = BAD[case]
    assert _issues(tmp_path, text) == [(path, message)]


def test_problems_in_every_table_and_the_base_scenario_are_reported_together(tmp_path):
    (tmp_path / "bad.toml").write_text(BASE.replace('"1 s"', '"1 parsec"'))
    issues = _issues(
        tmp_path,
        """
        [campaign]
        scenario = "bad.toml"
        repetitions = 0
        zz = 1
        [matrix]
        "flow[0]..cca" = ["reno"]
        ok = { key = "flow[0].mss", values = [1000, 1000] }
        [[analyze]]
        files = ["nomatch"]
        """,
    )
    assert sorted(p for p, _ in issues) == [
        "analyze[0].files",
        "campaign.repetitions",
        "campaign.scenario",
        "campaign.zz",
        "matrix.'flow[0]..cca'",
        "matrix.ok.values",
    ]
    assert any("bad.toml: scenario.duration: expected" in m for _, m in issues)


def test_a_misspelled_key_does_not_hide_a_missing_base_scenario(tmp_path):
    issues = _issues(tmp_path, '[campaign]\nscenario = "nope.toml"\nrepetitons = 3\n')
    assert [p for p, _ in issues] == ["campaign.repetitons", "campaign.scenario"]
    assert issues[1][1].endswith("nope.toml: expected a scenario file, found no such file")


def test_a_key_that_failed_raises_no_second_problem_about_its_absence(tmp_path):
    """The file is checked again without the keys that failed (schema.validate); a [matrix]
    whose base scenario is misspelled must not also read as a matrix without a scenario."""
    issues = _issues(tmp_path, '[campaign]\nscenario = 5\n[matrix]\n"flow[0].cca" = ["reno"]\n')
    assert issues == [("campaign.scenario", "expected a string, found 5")]


def test_seeds_run_up_to_2_64_minus_1_and_no_further(tmp_path):
    text = HEAD + "seed = 18446744073709551614\nrepetitions = 2\n"
    assert spec.load(write_campaign(tmp_path, text, BASE)).seeds == [2**64 - 2, 2**64 - 1]
    # the first seed taken from the base scenario is checked against the repetitions too
    base = BASE.replace('duration = "1 s"', 'duration = "1 s"\nseed = 18446744073709551615')
    path = write_campaign(tmp_path, HEAD + "repetitions = 2\n", base)
    with pytest.raises(spec.CampaignError) as e:
        spec.load(path)
    assert e.value.issues == [
        (
            "campaign.repetitions",
            (
                "expected at most 1 repetitions counting up from the scenario's seed "
                "18446744073709551615, found 2"
            ),
        )
    ]


def _deep(depth: int) -> list:
    out: list = []
    node = out
    for _ in range(depth):
        node.append([])
        node = node[0]
    return out


DEEP_DOCS = {
    "values": lambda deep: {"matrix": {"flow[0].cca": deep}},
    "cases": lambda deep: {"matrix": {"d": {"cases": {"up": {"flow[0].cca": deep}}}}},
    "params": lambda deep: {"analyze": [{"files": ["x"], "params": {"a": deep}}]},
}


@pytest.mark.parametrize("where", sorted(DEEP_DOCS))
def test_a_python_dict_nested_past_32_levels_is_refused_in_one_line(where):
    with pytest.raises(spec.CampaignError) as e:
        spec.from_dict(DEEP_DOCS[where](_deep(3000)))
    assert e.value.issues == [("", "expected at most 32 nested arrays or tables, found more")]


def test_a_key_path_of_more_than_32_parts_is_refused_in_a_short_line():
    key = ".".join(["a"] * 5000)
    with pytest.raises(spec.CampaignError) as e:
        spec.from_dict({"campaign": {"scenario": "x.toml"}, "matrix": {key: [1]}})
    [line] = [x for x in str(e.value).splitlines() if "32 parts" in x]
    assert line.endswith("expected a key path of at most 32 parts, found 5000") and len(line) < 300
    with pytest.raises(spec.CampaignError) as e:
        spec.from_dict(
            {"campaign": {"scenario": "x.toml"}, "matrix": {"d": {"key": key, "values": [1]}}}
        )
    assert ("matrix.d.key", "expected a key path of at most 32 parts, found 5000") in (
        e.value.issues
    )


def test_a_python_document_that_is_not_a_table_is_one_problem():
    with pytest.raises(spec.CampaignError) as e:
        spec.from_dict([1])  # type: ignore[arg-type]
    assert e.value.issues == [("", "expected a table, found an array")]


def test_every_form_of_the_file_gives_the_axes_seeds_and_analyze_runs_it_says(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "b.txt").write_text("y")
    c = spec.load(
        write_campaign(
            tmp_path,
            """
            [campaign]
            name = "forms"
            description = "every form"
            scenario = "base.toml"
            seeds = [7, 3]
            [matrix]
            "flow.*.mss" = [1000, 1448]
            rtt = { key = ["link[0].delay"], values = ["1 ms", "8 ms"], role = "rtt" }
            both = { key = ["flow[0].sack", "flow[0].timestamps"], values = [true, false] }
            cc = { key = "flow[0].cc", values = [{ beta = 0.5 }, {}], name = "cc params" }
            [matrix.direction.cases]
            up = { "flow[0].from" = "s", "flow[0].to" = "d" }
            down = { "flow[0].from" = "d", "flow[0].to" = "s" }
            [[analyze]]
            files = "*.txt"
            each = false
            bin = "1 s"
            params = { site = "roof", n = 2, ok = true }
            """,
            BASE,
        )
    )
    assert (c.name, c.description, c.seeds) == ("forms", "every form", [7, 3])
    assert [(a.name, a.role, a.keys, a.labels) for a in c.axes] == [
        ("mss", "mss", ["flow.*.mss"], [1000, 1448]),
        ("rtt", "rtt", ["link[0].delay"], ["1 ms", "8 ms"]),
        ("both", "other", ["flow[0].sack", "flow[0].timestamps"], [True, False]),
        ("cc_params", "other", ["flow[0].cc"], ['{"beta":0.5}', "{}"]),
        ("direction", "direction", ["flow[0].from", "flow[0].to"], ["up", "down"]),
    ]
    assert c.axes[1].companion == ("ms", [1.0, 8.0])
    assert c.axes[2].overrides[1] == {"flow[0].sack": False, "flow[0].timestamps": False}
    assert c.axes[3].overrides[0] == {"flow[0].cc": {"beta": 0.5}}
    [entry] = c.analyze
    assert [f.name for f in entry.files] == ["a.txt", "b.txt"]
    assert (entry.bin, entry.params) == ("1 s", {"site": "roof", "n": 2, "ok": True})


@pytest.mark.parametrize("path", sorted((REPO / "campaigns").glob("*.toml")), ids=lambda p: p.name)
def test_every_ready_campaign_is_valid(path):
    c = spec.load(path)
    assert c.base is not None and c.seeds
