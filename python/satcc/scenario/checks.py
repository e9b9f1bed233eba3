"""The post-pass after pydantic: the checks one field's type cannot express (names, nodes that
exist and are connected, a known CCA with valid parameters, starts within the run, the `app`
table, the sequence/ACK trace's window). Each problem is a (key path, message) pair."""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path
from typing import Any

from satcc import _native, limits, linkmodels
from satcc.scenario.schema import (
    MAX_BINS,
    MAX_FLOWS,
    MAX_MSS,
    MAX_SEED,
    MAX_SEQACK_ROWS,
    MIN_MSS,
    Flow,
    Scenario,
    expand_flows,
)
from satcc.units import UnitError, describe, format_duration, parse_duration, parse_size


def _semantic_issues(s: Scenario) -> list[tuple[str, str]]:
    issues: list[tuple[str, str]] = []
    sec = s.scenario
    for key, name in (
        ("scenario.name", sec.name),
        *((f"flow[{i}].name", f.name) for i, f in enumerate(s.flows)),
    ):
        why = None if name is None else limits.check_name(name)
        if why is not None:
            issues.append((key, why))
    duration_text = format_duration(sec.duration)
    if sec.duration <= 0:
        issues.append(("scenario.duration", f"expected a positive duration, found {duration_text}"))
    if not 0 <= sec.seed <= MAX_SEED:
        issues.append(("scenario.seed", f"expected an integer in 0..2^64-1, found {sec.seed}"))
    if sec.bin <= 0:
        issues.append(("scenario.bin", "expected a positive duration, found 0"))
    elif sec.duration > 0 and sec.bin > sec.duration:
        issues.append(
            (
                "scenario.bin",
                (
                    f"expected at most the duration ({duration_text}), found {format_duration(sec.bin)}"
                ),
            )
        )
    elif sec.duration > 0 and math.ceil(sec.duration / sec.bin) > MAX_BINS:
        issues.append(
            (
                "scenario.bin",
                (
                    f"expected at most {MAX_BINS} bins over the duration, found "
                    f"{math.ceil(sec.duration / sec.bin)} bins of {format_duration(sec.bin)}"
                ),
            )
        )

    pairs: dict[frozenset[str], int] = {}
    for i, link in enumerate(s.links):
        if link.a == link.b:
            issues.append(
                (f"link[{i}].b", f"expected a node other than a ({link.a!r}), found {link.b!r}")
            )
            continue
        issues.extend(linkmodels.link_issues(i, link, Path(s.source).parent))
        pair = frozenset((link.a, link.b))
        if pair in pairs:
            issues.append(
                (
                    f"link[{i}]",
                    (
                        f"expected at most one link between {link.a!r} and {link.b!r}, "
                        f"found a second one (the first is link[{pairs[pair]}])"
                    ),
                )
            )
        else:
            pairs[pair] = i
        for key in ("rate", "rate_ba"):
            if getattr(link, key) == 0:
                issues.append((f"link[{i}].{key}", "expected a positive rate, found 0 bit/s"))
        for key in ("ecn_threshold", "ecn_threshold_ba"):
            if getattr(link, key) == 0:
                issues.append((f"link[{i}].{key}", "expected at least 1 packet, found 0"))
        if not 1 <= link.hz <= 1_000_000:
            issues.append((f"link[{i}].hz", f"expected a tick rate in 1..1000000, found {link.hz}"))
        if link.service == "tick" and link.model is not None:
            issues.append(
                (
                    f"link[{i}].service",
                    'expected "exact" on a link with [link.model] (tick service serves constant links only), found "tick"',
                )
            )

    nodes = set(s.nodes)
    adjacency: dict[str, set[str]] = {n: set() for n in nodes}
    for link in s.links:
        adjacency[link.a].add(link.b)
        adjacency[link.b].add(link.a)
    names = sorted(nodes)
    if s.scenario.vpn is not None and s.scenario.vpn not in nodes:
        issues.append(
            (
                "scenario.vpn",
                f"expected a node named in a link ({', '.join(names)}), found {s.scenario.vpn!r}",
            )
        )
    known_ccas = list(_native.cc_names())
    total = 0
    for i, flow in enumerate(s.flows):
        p = f"flow[{i}]"
        for key, node in (("from", flow.from_), ("to", flow.to)):
            if node not in nodes:
                issues.append(
                    (
                        f"{p}.{key}",
                        (f"expected a node named in a link ({', '.join(names)}), found {node!r}"),
                    )
                )
        if flow.from_ in nodes and flow.to in nodes:
            if flow.from_ == flow.to:
                issues.append(
                    (
                        f"{p}.to",
                        (f"expected a node other than from ({flow.from_!r}), found {flow.to!r}"),
                    )
                )
            elif flow.to not in _reachable(adjacency, flow.from_):
                issues.append(
                    (
                        f"{p}.to",
                        (
                            f"expected a node connected to {flow.from_!r} by links, "
                            f"found {flow.to!r}, which is not"
                        ),
                    )
                )
        if flow.cca not in known_ccas:
            issues.append(
                (f"{p}.cca", f"expected one of {', '.join(known_ccas)}, found {flow.cca!r}")
            )
        else:
            try:
                _native.cc_check(flow.cca, normalize_cc(flow.cc))
            except ValueError as e:
                issues.append(_cc_issue(p, flow.cca, str(e), flow.cc))
        if flow.count < 1:
            issues.append((f"{p}.count", f"expected an integer >= 1, found {flow.count}"))
        total += max(flow.count, 0)
        last_start = flow.start + max(flow.count - 1, 0) * flow.stagger
        if sec.duration > 0 and last_start >= sec.duration:
            key = "start" if flow.count <= 1 or flow.stagger == 0 else "stagger"
            issues.append(
                (
                    f"{p}.{key}",
                    (
                        f"expected flows to start before the end of the run "
                        f"({duration_text}), found a start at {format_duration(last_start)}"
                    ),
                )
            )
        if flow.size is not None and flow.size < 1:
            issues.append((f"{p}.size", "expected at least 1 byte, found 0 B"))
        if not MIN_MSS <= flow.mss <= MAX_MSS:
            issues.append(
                (
                    f"{p}.mss",
                    (f"expected an integer in {MIN_MSS}..{MAX_MSS} bytes, found {flow.mss}"),
                )
            )
        elif _rwnd(flow) < flow.mss:
            issues.append(
                (
                    f"{p}.rwnd",
                    (f"expected at least one segment (mss = {flow.mss} B), found {flow.rwnd} B"),
                )
            )
        if flow.initial_cwnd < 1:
            issues.append(
                (f"{p}.initial_cwnd", f"expected an integer >= 1, found {flow.initial_cwnd}")
            )
        if flow.min_rto <= 0:
            issues.append((f"{p}.min_rto", "expected a positive duration, found 0"))
        issues.extend(linkmodels.flow_issues(p, flow))
        issues.extend(_app_issues(p, flow))
    if total > MAX_FLOWS:
        issues.append(("flow", f"expected at most {MAX_FLOWS} flows after count, found {total}"))
    issues.extend(_seqack_issues(s, total))
    return issues


APP_KINDS = ("bulk", "onoff", "requests")
_APP_KEYS = {
    "bulk": ("kind",),
    "onoff": ("kind", "on", "off"),
    "requests": ("kind", "size", "every", "at"),
}


def _app(flow: Flow) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
    """A flow's `app` table as the resolver takes it (None: bulk, today's default) and the
    problems found, as (key under `app`, message)."""
    t = flow.app
    if t is None:
        return None, []
    kind = t.get("kind")
    if kind not in APP_KINDS:
        found = "nothing" if kind is None else describe(kind)
        return None, [("kind", f"expected one of {', '.join(map(repr, APP_KINDS))}, found {found}")]
    issues = [
        (
            k,
            f"expected one of the keys {', '.join(_APP_KEYS[kind])} for kind {kind!r}; found an unknown key {k!r}",
        )
        for k in t
        if k not in _APP_KEYS[kind]
    ]

    def get(key: str, parse, positive: bool = True):
        if key not in t:
            return None
        try:
            v = parse(t[key])
        except UnitError as e:
            issues.append((key, str(e)))
            return None
        if positive and v <= 0:
            issues.append((key, f"expected a positive value, found {describe(t[key])}"))
            return None
        return v

    if kind == "bulk":
        return None, issues
    if kind == "onoff":
        on, off = get("on", parse_duration), get("off", parse_duration)
        for key, v in (("on", on), ("off", off)):
            if key not in t:
                issues.append((key, 'expected a duration (e.g. "1 s"), found nothing'))
        if issues:
            return None, issues
        return {"kind": "onoff", "on_ns": on, "off_ns": off}, []
    size = get("size", parse_size)
    if "size" not in t:
        issues.append(("size", 'expected a size (e.g. "100 kB"), found nothing'))
    elif size is not None and MIN_MSS <= flow.mss and size % flow.mss:
        below = size // flow.mss * flow.mss
        issues.append(
            (
                "size",
                (
                    f"expected a multiple of the flow's mss ({flow.mss} B: the simulator cuts "
                    f"segments at multiples of the MSS from the start of the stream), found "
                    f"{size} B (nearest: {max(below, flow.mss)} B or {below + flow.mss} B)"
                ),
            )
        )
    out: dict[str, Any] = {"kind": "requests", "bytes": size}
    if ("every" in t) == ("at" in t):
        issues.append(
            (
                "every",
                "expected exactly one of every and at, found "
                + ("both" if "every" in t else "neither"),
            )
        )
    elif "every" in t:
        out["every_ns"] = get("every", parse_duration)
    else:
        at = t["at"]
        if not isinstance(at, list) or not at:
            issues.append(("at", f"expected a non-empty array of durations, found {describe(at)}"))
        else:
            times = []
            for k, v in enumerate(at):
                try:
                    times.append(parse_duration(v))
                except UnitError as e:
                    issues.append((f"at[{k}]", str(e)))
            if len(times) == len(at) and times != sorted(times):
                issues.append(("at", "expected ascending times, found them out of order"))
            out["at_ns"] = times
    return (None, issues) if issues else (out, [])


def _app_issues(p: str, flow: Flow) -> list[tuple[str, str]]:
    """Problems of a flow's `app` and how it combines with its other keys."""
    app, issues = _app(flow)
    out = [(f"{p}.app.{k}", m) for k, m in issues]
    if app is not None:
        kind = app["kind"]
        for key, bad, what in (
            ("proto", flow.proto != "tcp", "a TCP flow"),
            ("size", flow.size is not None, "no size (the application decides what is written)"),
            (
                "metrics_save",
                flow.metrics_save,
                "false (the cache is written when a transfer closes)",
            ),
        ):
            if bad:
                out.append((f"{p}.{key}", f"expected {what} with app kind {kind!r}"))
    return out


def _reachable(adjacency: dict[str, set[str]], start: str) -> set[str]:
    seen = {start}
    todo = deque([start])
    while todo:
        for nxt in adjacency[todo.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _cc_issue(prefix: str, cca: str, message: str, params: dict[str, Any]) -> tuple[str, str]:
    """Turn the registry's "cc.beta: expected ..., found ..." into a key path and a message."""
    head, sep, rest = message.partition(": ")
    if sep and (head == "cc" or head.startswith("cc.")):
        path, text = f"{prefix}.{head}", rest
    else:
        head, path, text = "cc", f"{prefix}.cc", message
    if "expected" not in text:
        text = f"expected parameters valid for {cca}, found: {text}"
    elif "found" not in text:
        key = head.removeprefix("cc").removeprefix(".")
        value = params.get(key, params) if key else params
        text = f"{text}, found {describe(value)}"
    return path, text


def normalize_cc(params: dict[str, Any]) -> dict[str, Any]:
    """CCA parameters in the contract's types: integers become floats (TOML `3` == `3.0`),
    arrays of pairs become lists of [float, float]; anything else is passed on for the
    registry to reject with its own message."""
    out: dict[str, Any] = {}
    for key in sorted(params):
        value = params[key]
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        elif isinstance(value, list):
            value = [
                [float(x) if isinstance(x, int) and not isinstance(x, bool) else x for x in pair]
                if isinstance(pair, list)
                else pair
                for pair in value
            ]
        out[key] = value
    return out


def _rwnd(flow: Flow) -> int:
    return flow.rwnd


def _seqack_issues(s: Scenario, total: int) -> list[tuple[str, str]]:
    sa = s.scenario.seqack
    if sa is None:
        return []
    out = []
    if not 0 <= sa.flow < total:
        out.append(
            ("scenario.seqack.flow", f"expected a flow id in 0..{total - 1}, found {sa.flow}")
        )
    else:
        origin = expand_flows(s)[sa.flow]
        if s.flows[origin.scenario_flow].proto != "tcp":
            out.append(("scenario.seqack.flow", f"expected a TCP flow, flow {sa.flow} is UDP"))
    to = s.scenario.duration if sa.to is None else sa.to
    if not 0 <= sa.from_ < to <= s.scenario.duration:
        out.append(
            (
                "scenario.seqack.to",
                (
                    f"expected 0 <= from < to <= the run's "
                    f"{format_duration(s.scenario.duration)}, found from "
                    f"{format_duration(sa.from_)}, to {format_duration(to)}"
                ),
            )
        )
    if not 1 <= sa.max_rows <= MAX_SEQACK_ROWS:
        out.append(
            (
                "scenario.seqack.max_rows",
                f"expected an integer in 1..{MAX_SEQACK_ROWS}, found {sa.max_rows}",
            )
        )
    return out
