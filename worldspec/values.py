"""Runtime values shared by the meta-language and program kernels, and their errors.

Values are plain Python ints, floats, bools, strings, lists, dicts and None,
plus `Function` (anything callable from a spec). Errors raised while running
are EvalError (a runtime error the agent sees) or LimitError (a resource cap).
"""
from __future__ import annotations

MAX_INT_BITS = 256
MAX_LEN = 100_000
MAX_STEPS = 200_000
MAX_DEPTH = 64


class EvalError(Exception):
    """A runtime error in a program or rule body; shown to the agent as feedback."""

    kind = "error"

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


class LimitError(EvalError):
    """A resource limit was hit (steps, output, depth, size)."""

    kind = "limit"


class Function:
    """A callable value: a meta-language lambda/def/builtin or a program function."""

    __slots__ = ("name", "arity", "call")

    def __init__(self, name: str, arity: int | None, call):
        self.name = name
        self.arity = arity  # None: variadic
        self.call = call  # call(args: list) -> value

    def __call__(self, *args):
        if self.arity is not None and len(args) != self.arity:
            raise EvalError(f"{self.name} expects {self.arity} argument(s), got {len(args)}")
        return self.call(list(args))

    def __repr__(self) -> str:
        return f"<function {self.name}>"


class Ctx:
    """Evaluation context: scope flags read by rule bodies, and the step budget."""

    __slots__ = ("in_function", "in_loop", "loop_depth", "call_depth", "steps", "max_steps", "meta_depth")

    def __init__(self, max_steps: int = MAX_STEPS):
        self.in_function = False
        self.in_loop = False
        self.loop_depth = 0
        self.call_depth = 0
        self.steps = 0
        self.max_steps = max_steps
        self.meta_depth = 0

    def charge(self, n: int) -> None:
        self.steps += n
        if self.steps > self.max_steps:
            raise LimitError(f"step limit reached ({self.max_steps} steps)")


def type_name(v) -> str:
    if v is None:
        return "none"
    if v is True or v is False:
        return "bool"
    return {int: "int", float: "float", str: "str", list: "list", dict: "map"}.get(
        type(v), "function" if isinstance(v, Function) else type(v).__name__)


def same(a, b) -> bool:
    """Equality that keeps bools and ints apart (True is not 1)."""
    if a is b:  # also keeps shared sub-structures from being walked twice
        return True
    ta, tb = type(a), type(b)
    if ta is list and tb is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if ta is dict and tb is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if (ta is bool) != (tb is bool):
        return False
    if ta in (int, float) and tb in (int, float):
        return a == b
    return ta is tb and a == b


def check_int(v):
    if type(v) is int and (v >> MAX_INT_BITS) not in (0, -1):
        raise LimitError(f"integer too large (more than {MAX_INT_BITS} bits)")
    return v


def check_len(v):
    if len(v) > MAX_LEN:
        raise LimitError(f"value too large (more than {MAX_LEN} elements)")
    return v


def truthy(v) -> bool:
    if v is None or v is False:
        return False
    if type(v) in (int, float):
        return v != 0
    if type(v) in (str, list, dict):
        return len(v) > 0
    return True


def show(v, true: str = "true", false: str = "false", none: str = "none") -> str:
    """The standard rendering of a value: lists as [1, 2], strings bare at top level.

    Rendering stops with a LimitError past MAX_LEN characters: a list built
    from shared halves can have exponentially many leaves.
    """
    if type(v) is str:
        return v
    if type(v) is int:
        return str(v)
    out: list[str] = []
    _render(v, out, [0], (true, false, none), top=True)
    return "".join(out)


def _render(v, out: list, size: list, words, top: bool = False) -> None:
    t = type(v)
    if v is True:
        piece = words[0]
    elif v is False:
        piece = words[1]
    elif v is None:
        piece = words[2]
    elif t is int:
        piece = str(v)
    elif t is str:
        piece = v if top else '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif t is float:
        piece = repr(round(v, 10)) if v == v else "nan"
    elif t is list or t is dict:
        out.append("[" if t is list else "{")
        size[0] += 1
        items = v if t is list else list(v.items())
        for i, x in enumerate(items):
            if i:
                out.append(", ")
                size[0] += 2
            if t is dict:
                _render(x[0], out, size, words)
                out.append(": ")
                _render(x[1], out, size, words)
            else:
                _render(x, out, size, words)
            if size[0] > MAX_LEN:
                raise LimitError(f"value too large to print (more than {MAX_LEN} characters)")
        out.append("]" if t is list else "}")
        return
    elif isinstance(v, Function):
        piece = f"<function {v.name}>"
    else:
        piece = str(v)
    size[0] += len(piece)
    if size[0] > MAX_LEN:
        raise LimitError(f"value too large to print (more than {MAX_LEN} characters)")
    out.append(piece)
