"""Each packet-size limit is declared once, in satcc-core's scenario.rs, and read from there by
every other layer (issue 40: MIN_MTU 68 vs 36, MAX_MSS 65,495 vs 65,000, MIN_MSS 88 defined
three times, TCP_MAXSEG's range hard-coded in the packetdrill runner)."""

from __future__ import annotations

import re
from pathlib import Path

from satcc import _native

ROOT = Path(__file__).resolve().parents[1]
HOME = "crates/satcc-core/src/scenario.rs"
# name in scenario.rs -> key of `_native.scenario_defaults()`
LIMITS = {
    "MIN_MSS": "min_mss",
    "MAX_MSS": "max_mss",
    "MIN_MTU": "min_mtu",
    "MAX_MTU": "max_mtu",
    "MAX_USER_MSS": "max_user_mss",
}


def _sources() -> list[Path]:
    """Code that runs (not tests): the crates' src/ and the Python package."""
    return sorted(
        p
        for p in [*ROOT.glob("crates/*/src/**/*.rs"), *ROOT.glob("python/satcc/**/*.py")]
        if p.name != "tests.rs"
    )


def _declared() -> dict[str, int]:
    text = (ROOT / HOME).read_text(encoding="utf-8")
    found = {}
    for name in LIMITS:
        m = re.search(rf"^pub const {name}: u32 = ([0-9_]+);", text, re.MULTILINE)
        assert m, f"{HOME} declares no {name}"
        found[name] = int(m.group(1).replace("_", ""))
    return found


def test_each_limit_is_declared_once_and_handed_to_python_as_declared():
    declared = _declared()
    defaults = _native.scenario_defaults()
    for name, key in LIMITS.items():
        assert defaults[key] == declared[name], name
    # a second declaration of a limit (a constant or an assignment of a MSS/MTU name to one of
    # the limits' values) anywhere else
    values = set(declared.values())
    decl = re.compile(
        r"^\s*(?:pub(?:\(\w+\))?\s+)?(?:const|static)?\s*(\w*(?:MSS|MTU)\w*)\s*(?::\s*\w+)?\s*=\s*([0-9][0-9_]*)\b",
        re.IGNORECASE,
    )
    seconds = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel == HOME:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = decl.match(line)
            if m and int(m.group(2).replace("_", "")) in values:
                seconds.append(f"{rel}:{n}: {line.strip()}")
    assert not seconds, "a limit declared outside scenario.rs:\n" + "\n".join(seconds)


def test_no_limit_is_written_as_a_number_beside_an_mss_or_mtu():
    values = {v for v in _declared().values()}
    number = re.compile(r"(?<![\w.])(\d[\d_]*)(?![\w.])")
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel == HOME:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//")[0] if path.suffix == ".rs" else line.split("#")[0]
            if not re.search(r"mss|mtu", code, re.IGNORECASE):
                continue
            hits = [int(x.replace("_", "")) for x in number.findall(code)]
            if any(h in values for h in hits):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "a limit written as a number:\n" + "\n".join(found)
