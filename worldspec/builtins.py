"""The meta-language's fixed builtin library (documented in docs/language.md).

Each builtin is `fn(ctx, *args)`; `ctx` pays for work proportional to the size
of what it builds or walks, so no spec can run away. Errors speak in domain
words and never reveal computed internals (a rule's hidden offset, say).
"""
from __future__ import annotations

import math
import operator

from worldspec.values import (MAX_INT_BITS, MAX_LEN, EvalError, Function, LimitError, check_int,
                              check_len, same, show as _show, truthy as _truthy, type_name)


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise EvalError(message)


def _is_int(v) -> bool:
    return type(v) is int


def _is_num(v) -> bool:
    return type(v) in (int, float)


def _seq(v, who: str):
    if type(v) in (list, str):
        return v
    raise EvalError(f"{who}: expected a list or string, got {type_name(v)}")


def _callable(f, who: str):
    if isinstance(f, Function):
        return f
    raise EvalError(f"{who}: expected a function, got {type_name(f)}")


def _call(ctx, f, *args):
    ctx.charge(1)
    return f.call(list(args))


# ---------------------------------------------------------------- arithmetic (also infix)


_BIG = 1 << MAX_INT_BITS


def _arith(name, op, strs=False):
    def f(ctx, a, b):
        ta, tb = type(a), type(b)
        if ta is int and tb is int:
            r = op(a, b)
            if -_BIG < r < _BIG:
                return r
            raise LimitError(f"integer too large (more than {MAX_INT_BITS} bits)")
        if ta in (int, float) and tb in (int, float):
            r = op(a, b)
            if type(r) is int and (r >> MAX_INT_BITS) not in (0, -1):
                raise LimitError(f"integer too large (more than {MAX_INT_BITS} bits)")
            return r
        if strs and ta is tb and ta in (str, list):
            if len(a) + len(b) > MAX_LEN:
                raise LimitError(f"value too large (more than {MAX_LEN} elements)")
            return a + b
        raise EvalError(f"'{name}' cannot combine {type_name(a)} and {type_name(b)}")
    return f


add = _arith("+", operator.add, strs=True)
sub = _arith("-", operator.sub)
_mul_num = _arith("*", operator.mul)


def mul(ctx, a, b):
    if type(a) in (str, list) and type(b) is int:
        a, b = b, a
    if type(a) is int and type(b) in (str, list):
        if max(a, 0) * len(b) > MAX_LEN:
            raise LimitError(f"value too large (more than {MAX_LEN} elements)")
        ctx.charge(max(a, 0) * len(b) // 16)
        return b * a
    return _mul_num(ctx, a, b)


def floordiv(ctx, a, b):
    _need(_is_num(a) and _is_num(b), f"'//' cannot combine {type_name(a)} and {type_name(b)}")
    if b == 0:
        raise EvalError("division by zero")
    return a // b


def truediv(ctx, a, b):
    _need(_is_num(a) and _is_num(b), f"'/' cannot combine {type_name(a)} and {type_name(b)}")
    if b == 0:
        raise EvalError("division by zero")
    return a / b


def mod(ctx, a, b):
    _need(_is_num(a) and _is_num(b), f"'%' cannot combine {type_name(a)} and {type_name(b)}")
    if b == 0:
        raise EvalError("modulo by zero")
    return a % b


def power(ctx, a, b):
    _need(_is_num(a) and _is_num(b), f"'**' cannot combine {type_name(a)} and {type_name(b)}")
    if _is_int(a) and _is_int(b):
        if b < 0:
            raise EvalError("negative exponent")
        if abs(a) > 1 and b * (abs(a).bit_length() - 1) > MAX_INT_BITS:
            raise LimitError(f"integer too large (more than {MAX_INT_BITS} bits)")
        return check_int(a ** b)  # the estimate above is a lower bound
    try:
        r = float(a) ** float(b)
    except (OverflowError, ZeroDivisionError):
        raise EvalError("power out of range") from None
    if isinstance(r, complex):
        raise EvalError("power of a negative number to a fractional exponent")
    return r


def _bits(name, op):
    def f(ctx, a, b):
        _need(_is_int(a) and _is_int(b), f"'{name}' needs integers, got {type_name(a)} and {type_name(b)}")
        return op(a, b)
    return f


xor = _bits("^", operator.xor)
band = _bits("&", operator.and_)
bor = _bits("|", operator.or_)


def shl(ctx, a, b):
    _need(_is_int(a) and _is_int(b), "'<<' needs integers")
    if b < 0:
        raise EvalError("negative shift")
    if b > MAX_INT_BITS:
        raise LimitError(f"integer too large (more than {MAX_INT_BITS} bits)")
    return check_int(a << b)


def shr(ctx, a, b):
    _need(_is_int(a) and _is_int(b), "'>>' needs integers")
    if b < 0:
        raise EvalError("negative shift")
    return a >> b


def neg(ctx, a):
    _need(_is_num(a), f"cannot negate {type_name(a)}")
    return -a


def _cmp(name, op):
    def f(ctx, a, b):
        ta, tb = type(a), type(b)
        if (ta in (int, float) and tb in (int, float)) or (ta is tb and ta in (str, list)):
            return op(a, b)
        raise EvalError(f"'{name}' cannot compare {type_name(a)} and {type_name(b)}")
    return f


def eq(ctx, a, b):
    return same(a, b)


def ne(ctx, a, b):
    return not same(a, b)


lt, le, gt, ge = (_cmp("<", operator.lt), _cmp("<=", operator.le), _cmp(">", operator.gt),
                  _cmp(">=", operator.ge))

INFIX = {"+": add, "-": sub, "*": mul, "//": floordiv, "/": truediv, "%": mod, "**": power,
         "^": xor, "&": band, "|": bor, "<<": shl, ">>": shr, "==": eq, "!=": ne, "<": lt,
         "<=": le, ">": gt, ">=": ge}


# ---------------------------------------------------------------- sequences


def len_(ctx, xs):
    if type(xs) in (list, str, dict):
        return len(xs)
    raise EvalError(f"len: expected a list or string, got {type_name(xs)}")


def get(ctx, xs, i):
    if type(i) is int and type(xs) in (list, str) and 0 <= i < len(xs):
        return xs[i]
    if type(xs) is dict:
        for k in xs:
            if same(k, i):
                return xs[k]
        raise EvalError("key not found")
    _seq(xs, "get")
    _need(_is_int(i), f"get: position must be an integer, got {type_name(i)}")
    if 0 <= i < len(xs):
        return xs[i]
    raise EvalError("index out of range")


def slice_(ctx, xs, lo, hi):
    _seq(xs, "slice")
    _need(_is_int(lo) and _is_int(hi), "slice: bounds must be integers")
    ctx.charge(len(xs) // 64)
    return xs[max(lo, 0):max(hi, 0)]


def reverse(ctx, xs):
    ctx.charge(len(_seq(xs, "reverse")) // 64)
    return xs[::-1]


def sort(ctx, xs):
    _need(type(xs) is list, f"sort: expected a list, got {type_name(xs)}")
    ctx.charge(len(xs) // 8)
    if all(_is_num(x) for x in xs) or all(type(x) is str for x in xs):
        return sorted(xs)
    if all(type(x) is list for x in xs):
        try:
            return sorted(xs)
        except TypeError:
            pass
    raise EvalError("sort: elements cannot be compared")


def range_(ctx, *a):
    _need(1 <= len(a) <= 3, "range expects 1 to 3 arguments")
    _need(all(_is_int(x) for x in a), "range: bounds must be integers")
    if len(a) == 3 and a[2] == 0:
        raise EvalError("range: step must not be zero")
    start, stop, step = (0, a[0], 1) if len(a) == 1 else (a[0], a[1], a[2] if len(a) == 3 else 1)
    if max(0, (stop - start + step - (1 if step > 0 else -1)) // step) > MAX_LEN:
        raise LimitError(f"value too large (more than {MAX_LEN} elements)")
    r = range(start, stop, step)
    ctx.charge(len(r) // 16)
    return list(r)


def zip_(ctx, xs, ys):
    _seq(xs, "zip"), _seq(ys, "zip")
    return [[x, y] for x, y in zip(xs, ys)]


def enumerate_(ctx, xs):
    return [[i, x] for i, x in enumerate(_seq(xs, "enumerate"))]


def map_(ctx, f, xs):
    f = _callable(f, "map")
    _seq(xs, "map")
    ctx.charge(len(xs))
    return [f.call([x]) for x in xs]


def filter_(ctx, f, xs):
    f = _callable(f, "filter")
    _seq(xs, "filter")
    ctx.charge(len(xs))
    return [x for x in xs if _truthy(f.call([x]))]


def fold(ctx, f, init, xs):
    f = _callable(f, "fold")
    _seq(xs, "fold")
    ctx.charge(len(xs))
    acc = init
    for x in xs:
        acc = f.call([acc, x])
    return acc


def any_(ctx, xs):
    return any(_truthy(x) for x in _seq(xs, "any"))


def all_(ctx, xs):
    return all(_truthy(x) for x in _seq(xs, "all"))


def sum_(ctx, xs):
    _seq(xs, "sum")
    _need(all(_is_num(x) and type(x) is not bool for x in xs), "sum: expected numbers")
    return check_int(sum(xs))


def min_(ctx, *a):
    xs = a[0] if len(a) == 1 else list(a)
    _seq(xs, "min")
    _need(len(xs) > 0, "min of an empty list")
    try:
        return min(xs)
    except TypeError:
        raise EvalError("min: elements cannot be compared") from None


def max_(ctx, *a):
    xs = a[0] if len(a) == 1 else list(a)
    _seq(xs, "max")
    _need(len(xs) > 0, "max of an empty list")
    try:
        return max(xs)
    except TypeError:
        raise EvalError("max: elements cannot be compared") from None


def concat(ctx, a, b):
    _need(type(a) is type(b) and type(a) in (list, str), "concat: expected two lists or two strings")
    return check_len(a + b)


def append(ctx, xs, x):
    _need(type(xs) is list, f"append: expected a list, got {type_name(xs)}")
    return check_len(xs + [x])


def contains(ctx, xs, x):
    if type(xs) is str:
        _need(type(x) is str, "contains: a string can only contain strings")
        return x in xs
    _seq(xs, "contains")
    return any(same(y, x) for y in xs)


def index_of(ctx, xs, x):
    if type(xs) is str:
        _need(type(x) is str, "index_of: a string can only contain strings")
        return xs.find(x)
    for i, y in enumerate(_seq(xs, "index_of")):
        if same(y, x):
            return i
    return -1


def count(ctx, xs, x):
    if type(xs) is str:
        return xs.count(x) if type(x) is str and x else 0
    return sum(1 for y in _seq(xs, "count") if same(y, x))


def take(ctx, xs, n):
    _need(_is_int(n), "take: count must be an integer")
    return _seq(xs, "take")[:max(n, 0)]


def drop(ctx, xs, n):
    _need(_is_int(n), "drop: count must be an integer")
    return _seq(xs, "drop")[max(n, 0):]


def repeat(ctx, x, n):
    _need(_is_int(n), "repeat: count must be an integer")
    if n > MAX_LEN:
        raise LimitError(f"value too large (more than {MAX_LEN} elements)")
    ctx.charge(max(n, 0) // 16)
    return [x] * max(n, 0)


# ---------------------------------------------------------------- maps


def keys(ctx, m):
    _need(type(m) is dict, "keys: expected a map")
    return list(m.keys())


def values(ctx, m):
    _need(type(m) is dict, "values: expected a map")
    return list(m.values())


def has(ctx, m, k):
    _need(type(m) is dict, "has: expected a map")
    return any(same(k, j) for j in m)


def put(ctx, m, k, v):
    _need(type(m) is dict, "put: expected a map")
    # bools are kept out: Python would merge the keys true and 1
    _need(type(k) in (int, str), "put: keys must be integers or strings")
    out = dict(m)
    out[k] = v
    return check_len(out)


# ---------------------------------------------------------------- strings


def _str1(name, fn):
    def f(ctx, s):
        _need(type(s) is str, f"{name}: expected a string, got {type_name(s)}")
        return fn(s)
    return f


upper = _str1("upper", str.upper)
lower = _str1("lower", str.lower)
strip = _str1("strip", str.strip)
chars = _str1("chars", list)
ord_ = _str1("ord", lambda s: ord(s) if len(s) == 1 else _fail("ord: expected one character"))


def _fail(msg):
    raise EvalError(msg)


def split(ctx, s, sep):
    _need(type(s) is str and type(sep) is str, "split: expected two strings")
    return s.split(sep) if sep else list(s)


def join(ctx, xs, sep):
    _need(type(xs) is list and all(type(x) is str for x in xs) and type(sep) is str,
          "join: expected a list of strings and a string")
    if sum(map(len, xs)) + len(sep) * max(len(xs) - 1, 0) > MAX_LEN:
        raise LimitError(f"value too large (more than {MAX_LEN} elements)")
    return sep.join(xs)


def replace(ctx, s, old, new):
    _need(all(type(x) is str for x in (s, old, new)), "replace: expected three strings")
    if old == "":
        return s
    if s.count(old) * max(len(new) - len(old), 0) + len(s) > MAX_LEN:
        raise LimitError(f"value too large (more than {MAX_LEN} elements)")
    return s.replace(old, new)


def startswith(ctx, s, p):
    _need(type(s) is str and type(p) is str, "startswith: expected two strings")
    return s.startswith(p)


def endswith(ctx, s, p):
    _need(type(s) is str and type(p) is str, "endswith: expected two strings")
    return s.endswith(p)


def chr_(ctx, n):
    _need(_is_int(n) and 0 <= n < 0x110000, "chr: expected a code point")
    return chr(n)


def _words(ctx):
    return getattr(ctx, "words", None) or ("true", "false", "none")


def str_(ctx, v):
    return _show(v, *_words(ctx))


def show(ctx, v):
    """The world's own rendering (its words for true, false and none)."""
    return _show(v, *_words(ctx))


def int_(ctx, v):
    if _is_int(v):
        return v
    if type(v) is float:
        if v != v or v in (math.inf, -math.inf):
            raise EvalError("int: not a finite number")
        return check_int(int(v))
    if type(v) is bool:
        return int(v)
    if type(v) is str:
        t = v.strip()
        if t[:1] in "+-" and t[1:].isdigit() or t.isdigit():
            if len(t) > 80:
                raise LimitError(f"integer too large (more than {MAX_INT_BITS} bits)")
            return int(t)
        raise EvalError("int: not a number")
    raise EvalError(f"int: cannot convert {type_name(v)}")


def float_(ctx, v):
    _need(_is_num(v), f"float: cannot convert {type_name(v)}")
    return float(v)


def abs_(ctx, v):
    _need(_is_num(v), f"abs: expected a number, got {type_name(v)}")
    return abs(v)


def _math1(name, fn, domain=lambda x: True):
    def f(ctx, x):
        _need(_is_num(x), f"{name}: expected a number, got {type_name(x)}")
        _need(domain(x), f"{name}: argument out of range")
        try:
            r = fn(x)
            return check_int(r) if type(r) is int else r
        except (OverflowError, ValueError):
            raise EvalError(f"{name}: result out of range") from None
    return f


floor = _math1("floor", math.floor, lambda x: math.isfinite(x))
ceil = _math1("ceil", math.ceil, lambda x: math.isfinite(x))
sqrt = _math1("sqrt", math.sqrt, lambda x: x >= 0)
exp = _math1("exp", math.exp, lambda x: x < 700)
log = _math1("log", math.log, lambda x: x > 0)
sin = _math1("sin", math.sin)
cos = _math1("cos", math.cos)


def round_(ctx, x, digits=0):
    _need(_is_num(x) and _is_int(digits), "round: expected a number and an integer")
    _need(-400 <= digits <= 400, "round: digits out of range")
    r = round(x) if digits == 0 else round(x, digits)
    return check_int(r) if type(r) is int else r


def error(ctx, message):
    raise EvalError(message if type(message) is str else _show(message))


def _is(t):
    return lambda ctx, v: type(v) is t


def is_none(ctx, v):
    return v is None


def truthy(ctx, v):
    return _truthy(v)


# name -> (function, min args, max args or None for variadic)
BUILTINS: dict[str, tuple] = {
    "abs": (abs_, 1, 1), "min": (min_, 1, None), "max": (max_, 1, None), "sum": (sum_, 1, 1),
    "len": (len_, 1, 1), "get": (get, 2, 2), "slice": (slice_, 3, 3), "reverse": (reverse, 1, 1),
    "sort": (sort, 1, 1), "range": (range_, 1, 3), "zip": (zip_, 2, 2), "enumerate": (enumerate_, 1, 1),
    "map": (map_, 2, 2), "filter": (filter_, 2, 2), "fold": (fold, 3, 3), "any": (any_, 1, 1),
    "all": (all_, 1, 1), "concat": (concat, 2, 2), "append": (append, 2, 2),
    "contains": (contains, 2, 2), "index_of": (index_of, 2, 2), "count": (count, 2, 2),
    "take": (take, 2, 2), "drop": (drop, 2, 2), "repeat": (repeat, 2, 2), "keys": (keys, 1, 1),
    "values": (values, 1, 1), "has": (has, 2, 2), "put": (put, 3, 3), "upper": (upper, 1, 1),
    "lower": (lower, 1, 1), "split": (split, 2, 2), "join": (join, 2, 2), "chars": (chars, 1, 1),
    "str": (str_, 1, 1), "show": (show, 1, 1), "int": (int_, 1, 1), "ord": (ord_, 1, 1),
    "chr": (chr_, 1, 1), "replace": (replace, 3, 3), "startswith": (startswith, 2, 2),
    "endswith": (endswith, 2, 2), "strip": (strip, 1, 1), "floor": (floor, 1, 1),
    "ceil": (ceil, 1, 1), "round": (round_, 1, 2), "sqrt": (sqrt, 1, 1), "exp": (exp, 1, 1),
    "log": (log, 1, 1), "sin": (sin, 1, 1), "cos": (cos, 1, 1), "float": (float_, 1, 1),
    "is_int": (lambda ctx, v: type(v) is int, 1, 1), "is_str": (_is(str), 1, 1),
    "is_list": (_is(list), 1, 1), "is_bool": (_is(bool), 1, 1), "is_none": (is_none, 1, 1),
    "truthy": (truthy, 1, 1), "error": (error, 1, 1), "xor": (xor, 2, 2),
}

# Names a spec can never bind or call: no route to Python's machinery.
FORBIDDEN = {"eval", "exec", "compile", "open", "import", "__import__", "globals", "locals",
             "getattr", "setattr", "delattr", "vars", "dir", "type", "object", "input", "breakpoint",
             "help", "exit", "quit", "memoryview", "bytearray", "classmethod", "staticmethod",
             "super", "property", "os", "sys", "subprocess"}
