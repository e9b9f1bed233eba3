"""The `%{ }%` blocks: a small evaluator for the Python subset packetdrill's TCP scripts use.

packetdrill hands these blocks to a Python interpreter with the socket's `tcp_info` fields
(`tcpi_*`) as variables. satcc evaluates them itself, over Python's own syntax tree but
only these node kinds: `assert test[, message]`, `print(...)`, assignments to names,
augmented assignments (`+=` ...), `if`/`else`, comparisons (chained), `and`/`or`/`not`, + - * / // % **, unary minus,
numbers, strings, tuples, names, and the calls int, float, abs, min, max, round, len.
Anything else is `CodeError` naming the construct.
"""

from __future__ import annotations

import ast
import operator
import textwrap


class CodeError(Exception):
    """A construct the evaluator does not take, or a name that is not defined."""


class UndefinedName(CodeError):
    """A name neither `tcp_info` nor an earlier assignment defines (Python's NameError)."""

    def __init__(self, name: str):
        super().__init__(f"`{name}` is not defined (no such tcp_info field here)")
        self.name = name


class AssertFailed(Exception):
    """An `assert` whose test was false; the message is the assert's text and its message."""


_BIN = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_CMP = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_FUNCS = {
    "int": int,
    "float": float,
    "abs": abs,
    "min": min,
    "max": max,
    "round": round,
    "len": len,
}


# The names packetdrill defines for every block besides the tcp_info fields (its code.c),
# with Linux's values: the TCP states, the congestion-avoidance states, tcpi_options bits.
NAMES: dict[str, int] = {
    "TCP_ESTABLISHED": 1,
    "TCP_SYN_SENT": 2,
    "TCP_SYN_RECV": 3,
    "TCP_FIN_WAIT1": 4,
    "TCP_FIN_WAIT2": 5,
    "TCP_TIME_WAIT": 6,
    "TCP_CLOSE": 7,
    "TCP_CLOSE_WAIT": 8,
    "TCP_LAST_ACK": 9,
    "TCP_LISTEN": 10,
    "TCP_CLOSING": 11,
    "TCP_CA_Open": 0,
    "TCP_CA_Disorder": 1,
    "TCP_CA_CWR": 2,
    "TCP_CA_Recovery": 3,
    "TCP_CA_Loss": 4,
    "TCPI_OPT_TIMESTAMPS": 1,
    "TCPI_OPT_SACK": 2,
    "TCPI_OPT_WSCALE": 4,
    "TCPI_OPT_ECN": 8,
    "TCPI_OPT_ECN_SEEN": 16,
    "TCPI_OPT_SYN_DATA": 32,
    "TCPI_OPT_USEC_TS": 64,
    "TCPI_OPT_TFO_CHILD": 128,
}


def run_code(text: str, env: dict[str, object], printed: list[str]) -> None:
    """Execute a block against `env` (modified by assignments). Raises AssertFailed,
    CodeError."""
    # packetdrill's blocks often start on the `%{` line and end with a line continuation.
    src = textwrap.dedent(text).strip().removesuffix("\\").rstrip()
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        raise CodeError(f"expected Python syntax in the %{{ }}% block ({e.msg})") from None
    for stmt in tree.body:
        _stmt(stmt, env, printed, src)


def _stmt(node: ast.stmt, env: dict, printed: list[str], src: str) -> None:
    if isinstance(node, ast.Assert):
        if not _eval(node.test, env):
            text = ast.get_source_segment(src, node.test) or "assertion"
            names = dict.fromkeys(n.id for n in ast.walk(node.test) if isinstance(n, ast.Name))
            values = ", ".join(f"{n}={env[n]}" for n in names if n in env)
            raise AssertFailed(f"assert {text} failed" + (f" ({values})" if values else ""))
    elif isinstance(node, ast.Expr):
        _eval(node.value, env, printed)
    elif isinstance(node, ast.Assign):
        value = _eval(node.value, env)
        for target in node.targets:
            if not isinstance(target, ast.Name):
                raise CodeError("expected a plain name on the left of `=`")
            env[target.id] = value
    elif isinstance(node, ast.AugAssign) and type(node.op) in _BIN:
        if not isinstance(node.target, ast.Name):
            raise CodeError("expected a plain name on the left of an augmented assignment")
        env[node.target.id] = _BIN[type(node.op)](_eval(node.target, env), _eval(node.value, env))
    elif isinstance(node, ast.If):
        for s in node.body if _eval(node.test, env) else node.orelse:
            _stmt(s, env, printed, src)
    elif isinstance(node, ast.Pass):
        pass
    else:
        raise CodeError(f"`{type(node).__name__}` statements are not supported in %{{ }}%")


def _eval(node: ast.expr, env: dict, printed: list[str] | None = None) -> object:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id in ("True", "False"):
            return node.id == "True"
        raise UndefinedName(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        return _BIN[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        if isinstance(node.op, ast.USub):
            return -v  # type: ignore[operator]
        if isinstance(node.op, ast.UAdd):
            return +v  # type: ignore[operator]
        if isinstance(node.op, ast.Not):
            return not v
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            v: object = True
            for x in node.values:
                v = _eval(x, env)
                if not v:
                    return v
            return v
        v = False
        for x in node.values:
            v = _eval(x, env)
            if v:
                return v
        return v
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _CMP:
                raise CodeError(f"the comparison `{type(op).__name__}` is not supported")
            right = _eval(comp, env)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.Tuple):
        return tuple(_eval(x, env) for x in node.elts)
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, env) else node.orelse, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        args = [_eval(a, env) for a in node.args]
        if node.func.id == "print":
            if printed is not None:
                printed.append(" ".join(str(a) for a in args))
            return None
        if node.func.id in _FUNCS:
            return _FUNCS[node.func.id](*args)  # type: ignore[operator]
        raise CodeError(f"the function `{node.func.id}` is not supported in %{{ }}%")
    raise CodeError(f"`{type(node).__name__}` expressions are not supported in %{{ }}%")
