# ruff: noqa: N999 - the module is named after the command word `try`, imported by name
"""`satcc try --rate 20Mbit/s --rtt 50ms --loss 0.3% --cca cubic,bbr`: a scenario from flags.

Two nodes (`client`, `server`) and one link: `--rate` both ways, one-way delay `--rtt` / 2,
`--loss` on the data direction, a `--queue` (default "1 BDP"); one bulk flow client→server per
congestion control in `--cca`, all starting at 0 and sharing the link. `--print` shows the
TOML instead of running it (save it to start a scenario file); `--set` works as on `satcc run`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from satcc import registry
from satcc.cli import COMMAND_HELP
from satcc.commands import options
from satcc.errors import UserError
from satcc.textgrid import HelpFormatter

HELP = COMMAND_HELP["try"]
DESCRIPTION = """\
Build a one-link scenario from flags and run it: `satcc try --rate 20Mbit/s --rtt 50ms
--loss 0.3% --cca cubic,bbr` runs one bulk flow per congestion control over a shared 20 Mbit/s
link with 50 ms round-trip propagation delay and 0.3 % random loss on the data direction.
iperf3's flags work where they make sense: -t 10s, -b 20M (K/M/G: kbit/s, Mbit/s, Gbit/s),
-P 2 (flows per congestion control), -R (the server sends), -C bbr, -i 500ms (the series'
bin). Every value needs its unit, as in a scenario file (satcc.units: one rule for bare
numbers): a bare `--rate 20`, `-t 10`, `--queue 100` or `--loss 0.3` is refused, never read
as 20 bit/s, 10 s or 10 ms, 100 bytes, 30 % or 0.3 %.
--print shows the scenario TOML instead (a starting point for a file)."""

# iperf3's -b suffixes (iperf_api.c: unit_atof_rate, powers of 1000 for rates)
IPERF3_RATE_SUFFIX = {"k": "kbit/s", "m": "Mbit/s", "g": "Gbit/s", "t": "Tbit/s"}


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "try",
        help=HELP,
        description=DESCRIPTION,
        formatter_class=HelpFormatter,
    )
    # values such as -5M, -50ms or -1% are values (refused with the flag's name), not flags
    p._negative_number_matcher = re.compile(r"^-\.?\d")
    p.add_argument(
        "-b", "--rate", default="20 Mbit/s", help="link rate: 20Mbit/s or 20M (default: 20 Mbit/s)"
    )
    p.add_argument("--rtt", default="50 ms", help="round-trip propagation delay (default: 50 ms)")
    p.add_argument(
        "--loss", default="0", help="random loss on the data direction, in %% (default: 0)"
    )
    p.add_argument(
        "-C",
        "--cca",
        default="cubic",
        help="congestion controls, comma-separated: one flow each (default: cubic)",
    )
    p.add_argument(
        "-P",
        "--parallel",
        metavar="N",
        type=int,
        default=1,
        help="flows per congestion control (default: 1)",
    )
    p.add_argument(
        "-R",
        "--reverse",
        action="store_true",
        help="the server sends to the client (loss then applies to that direction)",
    )
    p.add_argument(
        "-t",
        "--duration",
        default="20 s",
        help="run length with its unit: 10s, 2min (default: 20 s)",
    )
    p.add_argument(
        "-i",
        "--interval",
        metavar="DURATION",
        help="series bin with its unit: 500ms (default: the scenario's 100 ms)",
    )
    p.add_argument(
        "--queue", default="1 BDP", help="bottleneck queue: pkt, B/KB/MB or BDP (default: 1 BDP)"
    )
    p.add_argument(
        "--engine",
        choices=registry.NAMES,
        default=registry.DEFAULT,
        help=f"engine (default: {registry.DEFAULT})",
    )
    p.add_argument("--seed", type=int, default=1, help="seed (default: 1)")
    options.add_set(p, "override a key of the built scenario (as on `satcc run`)")
    p.add_argument("--print", action="store_true", help="print the scenario TOML and exit")
    options.add_out(p, "out/try-<ccas>, e.g. out/try-cubic-bbr")
    options.add_force(p, "replace a different result in --out")
    p.add_argument(
        "--json", action="store_true", help="print the JSON summary instead of the table"
    )
    options.add_plot(p)
    p.set_defaults(func=run)


def _is_number(text: str) -> bool:
    try:
        float(text.replace("_", ""))
    except ValueError:
        return False
    return True


def flag_rate(text: str, flag: str = "--rate/-b") -> str:
    """A link rate as scenario text: units as in a scenario, or iperf3's 20M; a bare number
    is refused (iperf3 reads `-b 20` as 20 bit/s, which nobody means here)."""
    from satcc.units import UnitError, parse_rate

    t = text.strip()
    if t and t[-1].lower() in IPERF3_RATE_SUFFIX and _is_number(t[:-1]):
        number = float(t[:-1])
        if number <= 0:
            raise UserError(f"{flag}: expected a rate > 0, found {text!r}")
        return f"{t[:-1]} {IPERF3_RATE_SUFFIX[t[-1].lower()]}"
    if _is_number(t):
        raise UserError(
            f"{flag}: expected a rate with a unit (20Mbit/s, or iperf3's 20M), found {text!r}"
        )
    try:
        bps = parse_rate(t)
    except UnitError as e:
        raise UserError(f"{flag}: {e}") from None
    if bps <= 0:
        raise UserError(f"{flag}: expected a rate > 0, found {text!r}")
    return t


def flag_duration(text: str, flag: str, positive: bool = True) -> str:
    """A duration as scenario text, read by the scenario's grammar (a bare number is refused,
    as in a scenario file and on every other command)."""
    from satcc.units import UnitError, parse_duration

    t = text.strip()
    try:
        ns = parse_duration(t)
    except UnitError as e:
        raise UserError(f"{flag}: {e}") from None
    if positive and ns <= 0:
        raise UserError(f"{flag}: expected a duration > 0, found {text!r}")
    return t


def flag_loss(text: str) -> str:
    """A loss as scenario text, read by the scenario's grammar: text needs "%" (is 0.3 a
    fraction or a percentage?), except 0."""
    from satcc.units import UnitError, parse_probability

    t = text.strip()
    try:
        parse_probability(t)
    except UnitError as e:
        raise UserError(f"--loss: {e}") from None
    return t


def flag_queue(text: str) -> str:
    from satcc.units import UnitError, parse_queue

    t = text.strip()
    if _is_number(t):
        raise UserError(
            f"--queue: expected a queue with a unit (100pkt, 64KB or 1BDP), found {text!r}"
        )
    try:
        parse_queue(t)
    except UnitError as e:
        raise UserError(f"--queue: {e}") from None
    return t


def flag_ccas(text: str) -> list[str]:
    """Congestion control names; case is forgiven (CUBIC), a misspelling gets a suggestion."""
    import difflib

    from satcc import _native

    known = list(_native.cc_names())
    out = []
    for name in (c.strip() for c in text.split(",")):
        if not name:
            continue
        if name in known:
            out.append(name)
        elif name.lower() in known:
            out.append(name.lower())
        else:
            close = difflib.get_close_matches(name.lower(), known, n=1)
            hint = f"; did you mean {close[0]}?" if close else f" (known: {', '.join(known)})"
            raise UserError(f"--cca/-C: unknown congestion control {name!r}{hint}")
    if not out:
        raise UserError("--cca/-C: expected one or more congestion controls, found none")
    return out


def _toml_str(text: str) -> str:
    return json.dumps(text)  # a TOML basic string is a JSON string for these characters


def scenario_toml(
    rate: str,
    rtt: str,
    loss: str,
    ccas: list[str],
    duration: str,
    queue: str,
    seed: int,
    parallel: int = 1,
    reverse: bool = False,
    interval: str | None = None,
) -> str:
    """The scenario the flags describe, as TOML text. Each value is checked here and an error
    names the flag (`--loss: ...`), never a key of the generated TOML."""
    from satcc.units import format_duration, parse_duration

    rate = flag_rate(rate)
    rtt_ns = parse_duration(flag_duration(rtt, "--rtt", positive=False))
    loss = flag_loss(loss)
    duration = flag_duration(duration, "--duration/-t")
    queue = flag_queue(queue)
    if parallel < 1:
        raise UserError(f"--parallel/-P: expected an integer >= 1, found {parallel}")
    if seed < 0:
        raise UserError(f"--seed: expected an integer >= 0, found {seed}")
    one_way = format_duration(rtt_ns // 2)
    lines = [
        "[scenario]",
        f"name = {_toml_str('try -R' if reverse else 'try')}",
        f"duration = {_toml_str(duration)}",
        f"seed = {seed}",
    ]
    if interval is not None:
        lines.append(f"bin = {_toml_str(flag_duration(interval, '--interval/-i'))}")
    # loss on the data direction: client->server (ab), or server->client with -R
    data_loss, ack_loss = ("0", loss) if reverse else (loss, "0")
    lines += [
        "",
        "[[link]]",
        'a = "client"',
        'b = "server"',
        f"rate = {_toml_str(rate)}",
        f"delay = {_toml_str(one_way)}",
        f"loss = {_toml_str(data_loss)}",
        f"loss_ba = {_toml_str(ack_loss)}",
        f"queue = {_toml_str(queue)}",
    ]
    src, dst = ("server", "client") if reverse else ("client", "server")
    for cca in ccas:
        lines += [
            "",
            "[[flow]]",
            f"name = {_toml_str(cca)}",
            f"from = {_toml_str(src)}",
            f"to = {_toml_str(dst)}",
            f"cca = {_toml_str(cca)}",
        ]
        if parallel > 1:
            lines.append(f"count = {parallel}")
    return "\n".join(lines) + "\n"


# Keys of the built scenario and the flags that set them (errors name the flag).
FLAG_OF_KEY = {
    "scenario.duration": "--duration/-t",
    "scenario.bin": "--interval/-i",
    "scenario.seed": "--seed",
    "link[0].rate": "--rate/-b",
    "link[0].delay": "--rtt",
    "link[0].loss": "--loss",
    "link[0].loss_ba": "--loss",
    "link[0].queue": "--queue",
}


def _flag(key: str, overrides: dict) -> str:
    if key in overrides or any(key.startswith(f"{k}.") for k in overrides):
        return f"--set {key}"
    if re.fullmatch(r"flow\[\d+\]\.cca", key):
        return "--cca/-C"
    return FLAG_OF_KEY.get(key, f"--set {key}" if overrides else key)


def _load(text: str, overrides: dict):
    """The built scenario, its problems reported by flag, all in one pass."""
    from satcc import api
    from satcc.scenario import ScenarioError

    try:
        return api.load_scenario(text, overrides)
    except ScenarioError as e:
        raise UserError(
            "\n".join(f"{_flag(k, overrides)}: {m}" if k else m for k, m in e.issues)
        ) from None


def run(args: argparse.Namespace) -> int:
    from satcc import api

    ccas = flag_ccas(args.cca)
    text = scenario_toml(
        args.rate,
        args.rtt,
        args.loss,
        ccas,
        args.duration,
        args.queue,
        args.seed,
        parallel=args.parallel,
        reverse=args.reverse,
        interval=args.interval,
    )
    overrides = api.parse_set(args.set)
    if args.print:
        if overrides:
            import tomllib

            from satcc.scenario.keypath import set_key

            doc = tomllib.loads(text)
            for path, value in overrides.items():
                try:
                    set_key(doc, path, value)
                except ValueError as e:
                    raise UserError(f"--set {path}: {e}") from None
            _load(_dump(doc), overrides)  # the printed scenario is valid
            sys.stdout.write(_dump(doc))
        else:
            _load(text, {})
            sys.stdout.write(text)
        return 0
    from satcc.commands.output import run_and_write, try_out

    s = _load(text, overrides)
    out = args.out if args.out is not None else try_out(ccas)
    return run_and_write(
        args.engine, s, out, force=args.force, as_json=args.json, plot=args.plot, label="try"
    )


def _dump(doc: dict) -> str:
    """TOML for the simple documents `scenario_toml` builds (tables and arrays of tables)."""
    lines: list[str] = []

    def value(v) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return _toml_str(str(v))

    for key, v in doc.items():
        tables = v if isinstance(v, list) else [v]
        for t in tables:
            lines.append(f"[[{key}]]" if isinstance(v, list) else f"[{key}]")
            lines += [f"{k} = {value(x)}" for k, x in t.items()]
            lines.append("")
    return "\n".join(lines)
