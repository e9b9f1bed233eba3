"""`satcc model hybla|pftk|cardwell|mathis|window|cubic`: the analytical models on the command line.

`register(subparsers)` adds the `model` command to satcc's main parser (satcc.cli calls it);
each model subcommand sets `func(args) -> int`. Values carry units and are parsed once here with
`satcc.units` ("550ms", "1000B", "10MB", "193Mbit/s"). `--loss` takes one or more values: the
model is evaluated once, vectorised, and prints one record per loss rate. `--json` prints
{"model", "inputs", "throughput_bps", "transfer_time_s", "intermediate"} (a list of them for
several loss rates); transfer_time_s is null for steady-state predictions.

Invalid model inputs raise `ModelInputError` (a `satcc.errors.UserError`): satcc.cli prints the
message and exits 2; malformed unit strings are argparse errors (also exit 2).

    satcc model hybla --rtt 550ms --loss 0.01% --wmax 550 --packet 1000B [--size 10MB] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from satcc import units
from satcc.cli import COMMAND_HELP
from satcc.commands import options
from satcc.errors import UserError
from satcc.models import cardwell, cubic, hybla, mathis, pftk, window
from satcc.models.common import ModelResult

NS_PER_S = 1e9


def _typed(parse: Callable[[str], Any], scale: float = 1.0) -> Callable[[str], Any]:
    """An argparse type from a satcc.units parser (UnitError -> argparse error, exit 2)."""

    def convert(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return value / scale if scale != 1.0 else value

    convert.__name__ = parse.__name__.removeprefix("parse_")
    return convert


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, found {text!r}") from None


seconds = _typed(units.parse_duration, NS_PER_S)
size_bytes = _typed(units.parse_size)
rate_bps = _typed(units.parse_rate)
probability = _typed(units.parse_probability)
packets = _typed(units.parse_packets)


SCENARIO_ROUTE = ":scenario"  # hidden subcommand that takes `satcc model FILE`
MODEL_NAMES = ("hybla", "pftk", "cardwell", "mathis", "window", "cubic")


class _ModelOrScenario(argparse._SubParsersAction):
    """Subcommands that also accept a scenario file in the command's place: `satcc model
    hybla ...` runs a model, `satcc model FILE ...` runs the model engine on a scenario.
    argparse's check of the name against the choices admits any string; a name that is
    neither a model nor a file is refused here with a message naming both.)"""

    class _AnyName(Mapping):
        """A view of the parsers by name whose `in` admits any string (argparse's check)."""

        def __init__(self, parsers: dict[str, Any]) -> None:
            self._parsers = parsers

        def __getitem__(self, key: str) -> Any:
            return self._parsers[key]

        def __iter__(self) -> Iterator[str]:
            return iter(self._parsers)

        def __len__(self) -> int:
            return len(self._parsers)

        def __contains__(self, key: object) -> bool:
            return isinstance(key, str)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.choices = self._AnyName(self._name_parser_map)  # names are checked in __call__

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        if values and values[0] not in self._name_parser_map:
            name = values[0]
            if not (name.endswith(".toml") or Path(name).exists()):
                raise argparse.ArgumentError(
                    self,
                    f"expected a model name ({', '.join(MODEL_NAMES)}) or a scenario "
                    f"file, found {name!r}",
                )
            values = [SCENARIO_ROUTE, *values]
        super().__call__(parser, namespace, values, option_string)


def register(subparsers: Any) -> None:
    """Add `model` and its subcommands to satcc's main argparse subparsers."""
    parser = subparsers.add_parser(
        "model",
        help=COMMAND_HELP["model"],
        description="Predict throughput / transfer time with an analytical model "
        f"({', '.join(MODEL_NAMES)}), or answer a scenario file with the model engine "
        "(`satcc model FILE [--out DIR] [--json] [--seed N] [--plot]`).",
    )
    sub = parser.add_subparsers(
        dest="model_name", metavar="MODEL|FILE", required=True, action=_ModelOrScenario
    )

    p = sub.add_parser(
        SCENARIO_ROUTE,
        prog="satcc model",
        description="Answer a scenario with the model engine (docs/models.md).",
    )
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    add_scenario_output_arguments(p)
    p.set_defaults(func=run_scenario)

    p = _add(sub, "hybla", "TCP Hybla steady state / transfer time (study 002, eq. 2-39)")
    _rtt_loss(p)
    p.add_argument("--wmax", type=packets, required=True, help="W_m, max window in segments")
    _packet(p)
    p.add_argument("--size", type=size_bytes, help="data to transfer (else steady state)")
    p.add_argument("--rtt0", type=seconds, default=hybla.RTT0_S, help="RTT0 (default 25ms)")
    p.add_argument("--rho", type=_float, help="override rho (default RTT/RTT0)")
    p.add_argument("--t0", type=seconds, default=hybla.T0_S, help="T_0 (default 1s)")
    p.add_argument("--syn-timeout", type=seconds, default=hybla.SYN_TIMEOUT_S, help="T_s (3s)")
    p.set_defaults(func=run_hybla)

    p = _add(sub, "pftk", "Padhye et al. Reno send rate with timeouts and W_max")
    _rtt_loss(p)
    _packet(p)
    p.add_argument("--wmax", type=packets, help="W_max in segments (default unlimited)")
    p.add_argument("--t0", type=seconds, default=pftk.T0_S, help="T_0 (default 1s)")
    p.add_argument("--b", type=_float, default=pftk.ACKED_PER_ACK, help="segments per ACK (1)")
    p.add_argument("--approx", action="store_true", help="the approximate formula (eq. 32)")
    p.set_defaults(func=run_pftk)

    p = _add(sub, "cardwell", "Cardwell et al. Reno transfer latency")
    _rtt_loss(p)
    _packet(p)
    p.add_argument("--size", type=size_bytes, required=True, help="data to transfer")
    p.add_argument("--wmax", type=packets, help="W_max in segments (default unlimited)")
    p.add_argument("--t0", type=seconds, default=cardwell.T0_S, help="T_0 (default 1s)")
    p.add_argument("--b", type=_float, default=cardwell.ACKED_PER_ACK, help="segments per ACK")
    p.add_argument("--w1", type=_float, default=cardwell.INITIAL_WINDOW_PKTS, help="initial cwnd")
    p.add_argument("--delack", type=seconds, help="E[T_delack] (default 0, or 100ms if b>1)")
    p.add_argument("--syn-timeout", type=seconds, default=cardwell.SYN_TIMEOUT_S, help="T_s")
    p.add_argument("--no-handshake", action="store_true", help="leave out E[T_3whs]")
    p.set_defaults(func=run_cardwell)

    p = _add(sub, "mathis", "Mathis et al. 1997: (MSS/RTT) C/sqrt(p)")
    _rtt_loss(p)
    _packet(p)
    p.add_argument("--b", type=_float, default=1.0, help="segments per ACK; C = sqrt(3/(2b))")
    p.add_argument("--c", type=_float, help="override C (e.g. 1.22)")
    p.set_defaults(func=run_mathis)

    p = _add(sub, "window", "window/RTT bound (study 003 eq. 1) and time to a rate in CA")
    p.add_argument("--rtt", type=seconds, required=True, help="RTT, e.g. 189ms")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--window", type=size_bytes, help="window (default 65535B, no scaling)")
    group.add_argument("--wscale", type=int, help="window scale shift: 65535 << N (N <= 14)")
    p.add_argument("--target-rate", type=rate_bps, help="rate to reach, e.g. 193Mbit/s")
    p.add_argument("--mss", type=size_bytes, default=window.MSS_TIMESTAMPS_BYTES, help="MSS")
    p.add_argument("--start-window", type=_float, default=0.0, help="cwnd (segments) at start")
    p.add_argument("--delayed-ack", action="store_true", help="grow 1 MSS per 2 RTTs")
    p.set_defaults(func=run_window)

    p = _add(sub, "cubic", "CUBIC average window under periodic loss (RFC 9438 §5) and K")
    _rtt_loss(p)
    _packet(p)
    p.add_argument("--c", type=_float, default=cubic.C_CUBIC, help="C (0.4)")
    p.add_argument("--beta", type=_float, default=cubic.BETA_CUBIC, help="beta_cubic (0.7)")
    p.add_argument("--wmax", type=packets, help="cap the average window (segments)")
    p.set_defaults(func=run_cubic)


def _add(sub: Any, name: str, text: str) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=text, description=text)
    p.add_argument("--json", action="store_true", help="print JSON records")
    return p


def _rtt_loss(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rtt", type=seconds, required=True, help="mean RTT, e.g. 550ms")
    p.add_argument(
        "--loss",
        type=probability,
        nargs="+",
        required=True,
        help="loss rate(s) in %%, e.g. 0.01%% (a bare number is refused: fraction or percentage?)",
    )


def _packet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--packet", type=size_bytes, default=1000, help="segment size (1000B)")


def add_scenario_output_arguments(p: argparse.ArgumentParser) -> None:
    """--out, --json, --seed, --plot: as `satcc sim`."""
    options.add_out(p, "out/<scenario name>-model")
    options.add_json(p)
    options.add_seed(p, "recorded seed (models are exact)")
    options.add_plot(p)
    options.add_force(
        p,
        "run even when the result's estimated memory is above the soft limit, and replace a "
        "different run's result in --out",
    )


# -- runners -----------------------------------------------------------------------------


def run_scenario(args: argparse.Namespace) -> int:
    """`satcc model FILE`: the model engine on a scenario, written like `satcc sim`."""
    from satcc.commands.output import run_and_write
    from satcc.scenario import load

    s = load(args.file)
    return run_and_write(
        "model", s, args.out, seed=args.seed, force=args.force, as_json=args.json, plot=args.plot
    )


def run_hybla(args: argparse.Namespace) -> int:
    res = hybla.model(
        np.array(args.loss),
        args.rtt,
        wmax_pkts=args.wmax,
        size_bytes=args.size,
        rho=args.rho,
        rtt0_s=args.rtt0,
        t0_s=args.t0,
        packet_bytes=args.packet,
        syn_timeout_s=args.syn_timeout,
    )
    return _emit(res, len(args.loss), args.json)


def run_pftk(args: argparse.Namespace) -> int:
    res = pftk.model(
        np.array(args.loss),
        args.rtt,
        t0_s=args.t0,
        wmax_pkts=args.wmax,
        b=args.b,
        packet_bytes=args.packet,
        approximate_formula=args.approx,
    )
    return _emit(res, len(args.loss), args.json)


def run_cardwell(args: argparse.Namespace) -> int:
    res = cardwell.transfer(
        np.array(args.loss),
        args.rtt,
        args.size,
        t0_s=args.t0,
        wmax_pkts=args.wmax,
        b=args.b,
        w1_pkts=args.w1,
        t_delack_s=args.delack,
        syn_timeout_s=args.syn_timeout,
        include_handshake=not args.no_handshake,
        packet_bytes=args.packet,
    )
    return _emit(res, len(args.loss), args.json)


def run_mathis(args: argparse.Namespace) -> int:
    res = mathis.model(np.array(args.loss), args.rtt, packet_bytes=args.packet, b=args.b, c=args.c)
    return _emit(res, len(args.loss), args.json)


def run_window(args: argparse.Namespace) -> int:
    if args.wscale is not None:
        win = window.max_window_bytes(args.wscale)
    else:
        win = args.window if args.window is not None else window.MAX_WINDOW_NO_WSCALE_BYTES
    res = window.model(
        args.rtt,
        window_bytes=win,
        target_rate_bps=args.target_rate,
        mss_bytes=args.mss,
        start_window_pkts=args.start_window,
        rtts_per_mss=2.0 if args.delayed_ack else 1.0,
    )
    return _emit(res, None, args.json)


def run_cubic(args: argparse.Namespace) -> int:
    res = cubic.model(
        np.array(args.loss),
        args.rtt,
        c=args.c,
        beta=args.beta,
        packet_bytes=args.packet,
        wmax_pkts=args.wmax,
    )
    return _emit(res, len(args.loss), args.json)


# -- output --------------------------------------------------------------------------------


def _emit(res: ModelResult, count: int | None, as_json: bool) -> int:
    records = [res] if count is None else [res.element(i) for i in range(count)]
    if as_json:
        dicts = [r.to_json_dict() for r in records]
        print(json.dumps(dicts[0] if len(dicts) == 1 else dicts, indent=2))
        return 0
    for r in records:
        print(format_result(r))
    return 0


def format_result(res: ModelResult) -> str:
    """A short human summary: the prediction, then every intermediate value."""
    ins = res.inputs
    head = [res.model]
    if "p" in ins:
        head.append(f"p={ins['p']:g}")
    if "rtt_s" in ins:
        head.append(f"RTT={units.format_duration(ins['rtt_s'] * NS_PER_S)}")
    line = "  ".join(head) + ":  " + units.format_rate(res.throughput_bps)
    if res.transfer_time_s is not None:
        size = ins.get("size_bytes")
        what = f"{units.format_size(size)} in " if size is not None else ""
        line += f"  ({what}{res.transfer_time_s:.4g} s)"
    lines = [line]
    for key, value in res.intermediate.items():
        lines.append(f"    {key:<24} {_fmt(value)}")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return str(value)
    return f"{value:.6g}"


def main(argv: Sequence[str] | None = None) -> int:
    """Standalone entry (`python -m satcc.commands.model hybla ...`), for tests and debugging."""
    parser = argparse.ArgumentParser(prog="satcc")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["model", *(sys.argv[1:] if argv is None else argv)])
    try:
        return args.func(args)
    except UserError as exc:
        print(f"satcc: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
