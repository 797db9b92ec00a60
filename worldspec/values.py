"""Runtime values shared by the meta-language and program kernels, and their errors.

Values are plain Python ints, floats, bools, strings, lists, dicts and None,
plus `Function` (anything callable from a spec). Errors raised while running
are EvalError (a runtime error the agent sees) or LimitError (a resource cap).

Work, not just size, is charged. A collection's *weight* counts its element
slots at every level, a shared part as often as it is reachable (a list of two
references to a 2^20-element list weighs about 2^21), plus one unit per
CHARS_PER_UNIT characters of each string in it. Every collection built while
running is measured when it is built (`collection`, `sized`), so a doubling
loop hits the limit at once, and the weight is cached on the evaluation
context so that operations walking a value (comparison, sorting, counting,
searching, printing) can pay steps in proportion to it (`Ctx.pay`).
"""
from __future__ import annotations

MAX_INT_BITS = 256
MAX_LEN = 100_000  # the heaviest collection, and the longest string
MAX_NEST = 100  # lists and maps nested deeper than this are refused
MAX_STEPS = 200_000
MAX_DEPTH = 64
MAX_META_DEPTH = 200  # nested lambda applications and calls closing a cycle of defs in the meta-language
WORK_PER_STEP = 64  # element visits (or string units) that cost one step
CHARS_PER_UNIT = 64  # characters of a string that weigh one unit
SIZE_CACHE_SLOTS = 1_000_000  # element slots the weight cache may keep alive

TOO_LARGE = f"value too large (more than {MAX_LEN} elements)"
TOO_DEEP = f"value nests too deeply (more than {MAX_NEST} levels of lists)"


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


class Thunk:
    """A lazy argument: its expression runs once, the first time the body reads the parameter."""

    __slots__ = ("code", "run", "value")

    def __init__(self, code, run):
        self.code, self.run, self.value = code, run, None

    def force(self):
        """The argument's value (evaluated now if it has not been)."""
        code = self.code
        if code is not None:
            self.value = code(self.run)
            self.code = None
        return self.value


class Ctx:
    """Evaluation context: scope flags read by rule bodies, the step budget, and
    the weights of the collections measured so far (id -> (value, weight, nesting);
    the entry keeps its value alive, so the id cannot be reused while cached)."""

    __slots__ = ("in_function", "in_loop", "loop_depth", "call_depth", "iteration", "steps", "max_steps",
                 "meta_depth", "sizes", "cached_slots")

    def __init__(self, max_steps: int = MAX_STEPS):
        self.in_function = False
        self.in_loop = False
        self.loop_depth = 0
        self.call_depth = 0
        self.iteration = 0  # the pass (from 0) of the innermost loop, where a rule reads it
        self.steps = 0
        self.max_steps = max_steps
        self.meta_depth = 0
        self.sizes: dict[int, tuple] = {}
        self.cached_slots = 0

    def charge(self, n: int) -> None:
        """Pay n steps; past the budget, a LimitError."""
        self.steps += n
        if self.steps > self.max_steps:
            raise LimitError(f"step limit reached ({self.max_steps} steps)")

    def pay(self, work: int) -> None:
        """Pay for `work` element visits or string units: a step per WORK_PER_STEP."""
        if work >= WORK_PER_STEP:
            self.charge(work // WORK_PER_STEP)


# ---------------------------------------------------------------- weights


def weight(ctx: Ctx, v) -> int:
    """The weight of a value (0 for numbers, bools, none and functions)."""
    t = type(v)
    if t is list or t is dict:
        hit = ctx.sizes.get(id(v))
        return hit[1] if hit is not None else _walk(ctx, v, 1)[0]
    if t is str:
        return len(v) // CHARS_PER_UNIT
    return 0


def measure(ctx: Ctx, v) -> tuple[int, int]:
    """(weight, nesting) of a value; nesting is 0 for anything but a list or map."""
    t = type(v)
    if t is list or t is dict:
        hit = ctx.sizes.get(id(v))
        return (hit[1], hit[2]) if hit is not None else _walk(ctx, v, 1)
    if t is str:
        return len(v) // CHARS_PER_UNIT, 0
    return 0, 0


def collection(ctx: Ctx, v):
    """A freshly built list or map, measured element by element: refused past the
    limits, else returned (and its weight cached)."""
    _walk(ctx, v, 1)
    return v


def sized(ctx: Ctx, v, w: int, nest: int):
    """A freshly built list or map whose weight and nesting the builder computed."""
    if w > MAX_LEN:
        raise LimitError(TOO_LARGE)
    if nest > MAX_NEST:
        raise LimitError(TOO_DEEP)
    if nest > 1 or len(v) >= 32:  # a short flat list is measured again as fast as it is looked up
        _remember(ctx, v, w, nest)
    return v


def _remember(ctx: Ctx, v, w: int, nest: int) -> None:
    ctx.cached_slots += len(v) + 1
    if ctx.cached_slots > SIZE_CACHE_SLOTS:  # dropping the cache costs only re-measuring
        ctx.sizes.clear()
        ctx.cached_slots = len(v) + 1
    ctx.sizes[id(v)] = (v, w, nest)


def _walk(ctx: Ctx, v, level: int) -> tuple[int, int]:
    """Weight and nesting of a list or map; a part measured before is looked up, not walked.

    Every nested part is cached once walked, so a shared part is walked once; and
    the walk stops as soon as the weight passes MAX_LEN, so even without the cache
    it visits at most MAX_LEN slots.
    """
    if level > MAX_NEST:
        raise LimitError(TOO_DEEP)
    w, inner = len(v), 0
    if w > MAX_LEN:
        raise LimitError(TOO_LARGE)
    sizes = ctx.sizes
    for x in (v if type(v) is list else [*v.keys(), *v.values()]):
        t = type(x)
        if t is list or t is dict:
            hit = sizes.get(id(x))
            xw, xn = (hit[1], hit[2]) if hit is not None else _walk(ctx, x, level + 1)
            w += xw
            if xn > inner:
                inner = xn
            if w > MAX_LEN:
                raise LimitError(TOO_LARGE)
        elif t is str:
            w += len(x) // CHARS_PER_UNIT
    if w > MAX_LEN:
        raise LimitError(TOO_LARGE)
    if level + inner > MAX_NEST:
        raise LimitError(TOO_DEEP)
    if inner or len(v) >= 32:
        _remember(ctx, v, w, inner + 1)
    return w, inner + 1


def type_name(v) -> str:
    if v is None:
        return "none"
    if v is True or v is False:
        return "bool"
    return {int: "int", float: "float", str: "str", list: "list", dict: "map"}.get(
        type(v), "function" if isinstance(v, Function) else type(v).__name__)


def same(a, b) -> bool:
    """Equality that keeps bools and ints apart (True is not 1).

    Work is at most the smaller weight of the two values (shared parts that are
    the same object are not walked); callers that run untrusted code pay for it
    first (`builtins.eq`).
    """
    if a is b:  # also keeps shared sub-structures from being walked twice
        return True
    ta, tb = type(a), type(b)
    if ta is list and tb is list:
        if len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if x is y:
                continue
            tx = type(x)
            if tx is type(y) and (tx is int or tx is str):
                if x != y:
                    return False
            elif not same(x, y):
                return False
        return True
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


def show(v, true: str = "true", false: str = "false", none: str = "none", floats: str = "rounded") -> str:
    """The standard rendering of a value: lists as [1, 2], strings bare at top level; floats
    rounded (`rounded`: 10 decimals, 10 significant digits below 0.001), or as Python's repr writes them
    when `floats` is "repr".

    Rendering stops with a LimitError past MAX_LEN characters: a list built
    from shared halves can have exponentially many leaves.
    """
    if type(v) is str:
        return v
    if type(v) is int:
        return _int_text(v)
    out: list[str] = []
    _render(v, out, [0], (true, false, none, floats), top=True)
    return "".join(out)


def rounded(v: float) -> float:
    """A float as the standard rendering shows it: 10 decimals, which hides float noise (0.1 + 0.2 is 0.3),
    or, below 0.001, 10 significant digits, so a small value keeps its digits (2.50275e-10 was shown as 3e-10)."""
    if v != v or v in (float("inf"), float("-inf")):
        return v
    return round(v, 10) if abs(v) >= 1e-3 or v == 0 else float(f"{v:.10g}")


SHOWN_CUT = 400  # characters of a value a diagnostic or a problem shows before it is cut


def size_of(v) -> str:
    """A value's size in words: "a list of 100,000 elements", "a string of 5 characters"."""
    t = type(v)
    if t is list or t is dict or t is str:
        unit = "characters" if t is str else "entries" if t is dict else "elements"
        return f"a {'string' if t is str else 'map' if t is dict else 'list'} of {len(v):,} {unit}"
    if t is int:
        return f"an integer of {v.bit_length():,} bits"
    return f"a {t.__name__}"


def show_cut(v, limit: int = SHOWN_CUT, quoted: bool = False) -> str:
    """A value as a message shows it: show(v) (a string quoted when QUOTED), or, past LIMIT characters (a
    value may be far too large to show at all), its first LIMIT characters and its size. Never raises."""
    out: list[str] = []
    try:
        _render([v] if quoted else v, out, [0], ("true", "false", "none", "rounded"), top=True, cap=limit)
    except LimitError:
        text = "".join(out)[1 if quoted else 0:limit]
        return f"{text}... ({size_of(v)}, cut)"
    text = "".join(out)
    return text[1:-1] if quoted else text


def _int_text(n: int) -> str:
    try:
        return str(n)
    except ValueError:  # past Python's digit limit: no value the limits allow gets here
        raise LimitError(f"integer too large to print (more than {MAX_INT_BITS} bits)") from None


def _render(v, out: list, size: list, words, top: bool = False, cap: int = MAX_LEN) -> None:
    t = type(v)
    if v is True:
        piece = words[0]
    elif v is False:
        piece = words[1]
    elif v is None:
        piece = words[2]
    elif t is int:
        piece = _int_text(v)
    elif t is str:
        piece = v if top else '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif t is float:
        piece = "nan" if v != v else repr(v) if words[3] == "repr" else repr(rounded(v))
    elif t is list or t is dict:
        out.append("[" if t is list else "{")
        size[0] += 1
        items = v if t is list else list(v.items())
        for i, x in enumerate(items):
            if i:
                out.append(", ")
                size[0] += 2
            if t is dict:
                _render(x[0], out, size, words, cap=cap)
                out.append(": ")
                _render(x[1], out, size, words, cap=cap)
            else:
                _render(x, out, size, words, cap=cap)
            if size[0] > cap:
                raise LimitError(f"value too large to print (more than {cap} characters)")
        out.append("]" if t is list else "}")
        return
    elif isinstance(v, Function):
        piece = f"<function {v.name}>"
    else:
        piece = str(v)
    size[0] += len(piece)
    if size[0] > cap:
        out.append(piece[:cap])  # the part a cut rendering (show_cut) keeps
        raise LimitError(f"value too large to print (more than {cap} characters)")
    out.append(piece)
