"""The meta-language's fixed builtin library (documented in docs/language.md).

Each builtin is `fn(ctx, *args)`. Every list or map it builds is measured
(`values.sized` / `values.collection`: weight counted with shared parts as often
as they are reachable, refused past the limits), and `ctx` pays steps in
proportion to the work it does: elements copied, compared, searched, sorted or
printed (`Ctx.pay`), so no spec or program can run away even inside C code.
Errors speak in domain words and never reveal computed internals (a rule's
hidden offset, say).
"""
from __future__ import annotations

import hashlib
import json
import math
import functools
import operator
import re
import struct

from worldspec.values import (CHARS_PER_UNIT, MAX_INT_BITS, MAX_LEN, TOO_LARGE, EvalError, Function,
                              LimitError, check_int, collection, measure, same, show as _show, sized,
                              truthy as _truthy, type_name, weight)

MAX_INT_DIGITS = 80  # 2^256 has 78 decimal digits: longer numerals are over the limit
PY_COST = 4  # an element visited by a Python loop costs about as much as four visited in C
KEY_COST = 2 * PY_COST  # keying an element (a set's key, a draw's canonical text): two Python visits


def _need(cond: bool, message: str, *values) -> None:
    """Fail with `message` unless cond; each {} in it names the type of one of `values`
    (formatted only on failure: these checks sit on every operator's path)."""
    if not cond:
        raise EvalError(message.format(*map(type_name, values)) if values else message)


# name -> (function, min args, max args or None for variadic); filled by `builtin` where each function is
# defined, so a builtin's arity stands next to its code
BUILTINS: dict[str, tuple] = {}


def builtin(name: str, lo: int, hi: int | None):
    """Register the decorated function as the builtin `name` taking lo..hi arguments (hi None: any number)."""
    def register(fn):
        BUILTINS[name] = (fn, lo, hi)
        return fn
    return register


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
            return _joined(ctx, a, b)
        raise EvalError(f"'{name}' cannot combine {type_name(a)} and {type_name(b)}")
    return f


def _joined(ctx, a, b):
    """a + b for two strings or two lists, measured before it is built."""
    if type(a) is str:
        if len(a) + len(b) > MAX_LEN:
            raise LimitError(TOO_LARGE)
        ctx.pay((len(a) + len(b)) // CHARS_PER_UNIT)
        return a + b
    (wa, na), (wb, nb) = measure(ctx, a), measure(ctx, b)
    if wa + wb > MAX_LEN:
        raise LimitError(TOO_LARGE)
    ctx.pay(len(a) + len(b))
    return sized(ctx, a + b, wa + wb, max(na, nb, 1))


add = _arith("+", operator.add, strs=True)
sub = _arith("-", operator.sub)
_mul_num = _arith("*", operator.mul)


def mul(ctx, a, b):
    if type(a) in (str, list) and type(b) is int:
        a, b = b, a
    if type(a) is int and type(b) in (str, list):
        n = min(max(a, 0), MAX_LEN + 1)  # past MAX_LEN copies only an empty b fits, and stays empty
        if type(b) is str:
            if n * len(b) > MAX_LEN:
                raise LimitError(TOO_LARGE)
            ctx.pay(n * len(b) // CHARS_PER_UNIT)
            return b * n
        w, nest = measure(ctx, b)
        if n * w > MAX_LEN:
            raise LimitError(TOO_LARGE)
        ctx.pay(n * len(b))
        return sized(ctx, b * n, n * w, max(nest, 1))
    return _mul_num(ctx, a, b)


def floordiv(ctx, a, b):
    _need(_is_num(a) and _is_num(b), "'//' cannot combine {} and {}", a, b)
    if b == 0:
        raise EvalError("division by zero")
    return a // b


def truediv(ctx, a, b):
    _need(_is_num(a) and _is_num(b), "'/' cannot combine {} and {}", a, b)
    if b == 0:
        raise EvalError("division by zero")
    return a / b


def mod(ctx, a, b):
    _need(_is_num(a) and _is_num(b), "'%' cannot combine {} and {}", a, b)
    if b == 0:
        raise EvalError("modulo by zero")
    return a % b


def power(ctx, a, b):
    _need(_is_num(a) and _is_num(b), "'**' cannot combine {} and {}", a, b)
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


@builtin("divmod", 2, 2)
def divmod_(ctx, a, b):
    """[a // b, a % b]."""
    _need(_is_num(a) and _is_num(b), "divmod: expected two numbers, got {} and {}", a, b)
    if b == 0:
        raise EvalError("division by zero")
    return sized(ctx, list(divmod(a, b)), 2, 1)


@builtin("pow", 2, 3)
def pow_(ctx, a, b, m=None):
    """a ** b, or with a modulus m, a ** b % m computed without the huge power."""
    if m is None:
        return power(ctx, a, b)
    _need(_is_int(a) and _is_int(b) and _is_int(m), "pow: a modulus needs three integers, got {}, {} and {}",
          a, b, m)
    if b < 0:
        raise EvalError("negative exponent")
    if m == 0:
        raise EvalError("modulo by zero")
    ctx.pay(PY_COST * b.bit_length())  # square and multiply: a few products per bit of b
    return pow(a, b, m)


def _bits(name, op):
    def f(ctx, a, b):
        _need(_is_int(a) and _is_int(b), f"'{name}' needs integers, got {{}} and {{}}", a, b)
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
    _need(_is_num(a), "cannot negate {}", a)
    return -a


def _cmp(name, op):
    def f(ctx, a, b):
        ta, tb = type(a), type(b)
        if (ta in (int, float) and tb in (int, float)) or (ta is tb and ta in (str, list)):
            if ta is not int and ta is not float:
                _pay_compare(ctx, a, b)
            try:
                return op(a, b)
            except TypeError:  # lists whose elements Python cannot order
                raise EvalError(f"'{name}' cannot compare these lists") from None
        raise EvalError(f"'{name}' cannot compare {type_name(a)} and {type_name(b)}")
    return f


def _pay_compare(ctx, a, b) -> None:
    """Comparing two values walks at most the lighter one (values of two types: nothing)."""
    t = type(a)
    if t is not type(b):
        return
    if t is str:
        ctx.pay(min(len(a), len(b)) // CHARS_PER_UNIT)
    elif t is list or t is dict:
        ctx.pay(PY_COST * min(weight(ctx, a), weight(ctx, b)))


def eq(ctx, a, b):
    _pay_compare(ctx, a, b)
    return same(a, b)


def ne(ctx, a, b):
    _pay_compare(ctx, a, b)
    return not same(a, b)


lt, le, gt, ge = (_cmp("<", operator.lt), _cmp("<=", operator.le), _cmp(">", operator.gt),
                  _cmp(">=", operator.ge))

INFIX = {"+": add, "-": sub, "*": mul, "//": floordiv, "/": truediv, "%": mod, "**": power,
         "^": xor, "&": band, "|": bor, "<<": shl, ">>": shr, "==": eq, "!=": ne, "<": lt,
         "<=": le, ">": gt, ">=": ge}


# ---------------------------------------------------------------- sequences


def _visits(ctx, xs) -> int:
    """Element visits of one pass over a list (its weight) or a string (its length)."""
    return len(xs) if type(xs) is str else weight(ctx, xs)


def _flat(ctx, xs) -> bool:
    """A string, or a list none of whose elements is a collection or a long string."""
    return type(xs) is str or weight(ctx, xs) == len(xs)


def _part(ctx, xs, part, ys=""):
    """Elements of xs (and ys), copied (a slice, a reordering, a filtered list, a
    set operation): flat when its sources are."""
    if type(part) is str:
        ctx.pay(len(part) // CHARS_PER_UNIT)
        return part
    ctx.pay(len(part))
    if _flat(ctx, xs) and _flat(ctx, ys):
        return sized(ctx, part, len(part), 1)
    return collection(ctx, part)


def _search(ctx, xs: list, x) -> bool:
    """Pay for comparing x with every element of xs. True when Python's own `==`
    (run in C) agrees with `same` for x: a string, none, or a number that no bool
    equals; else the caller compares element by element with `same`, and each
    comparison walks at most the lighter of the two values."""
    t = type(x)
    if t is str or x is None or ((t is int or t is float) and x != 0 and x != 1):
        ctx.pay(len(xs))
        return True
    ctx.pay(PY_COST * (len(xs) + min(weight(ctx, xs), len(xs) * weight(ctx, x))))
    return False


@builtin("len", 1, 1)
def len_(ctx, xs):
    if type(xs) in (list, str, dict):
        return len(xs)
    raise EvalError(f"len: expected a list or string, got {type_name(xs)}")


@builtin("get", 2, 2)
def get(ctx, xs, i):
    if type(i) is int and type(xs) in (list, str) and 0 <= i < len(xs):
        return xs[i]
    if type(xs) is dict:
        if type(i) in (int, str):  # keys are ints and strings only: a hash lookup is exact
            if i in xs:
                return xs[i]
            raise EvalError("key not found")
        ctx.pay(PY_COST * len(xs))
        for k in xs:
            if same(k, i):
                return xs[k]
        raise EvalError("key not found")
    _seq(xs, "get")
    _need(_is_int(i), "get: position must be an integer, got {}", i)
    if 0 <= i < len(xs):
        return xs[i]
    raise EvalError("index out of range")


@builtin("slice", 3, 3)
def slice_(ctx, xs, lo, hi):
    _seq(xs, "slice")
    _need(_is_int(lo) and _is_int(hi), "slice: bounds must be integers")
    return _part(ctx, xs, xs[max(lo, 0):max(hi, 0)])


@builtin("reverse", 1, 1)
def reverse(ctx, xs):
    _seq(xs, "reverse")
    if type(xs) is str:
        ctx.pay(len(xs) // CHARS_PER_UNIT)
        return xs[::-1]
    w, nest = measure(ctx, xs)
    ctx.pay(len(xs))
    return sized(ctx, xs[::-1], w, nest)


def _sorted(ctx, keys: list, who: str, items=None) -> list:
    """sorted(keys), or the items ordered by their keys (stable); keys must be all
    numbers, all strings or all lists whose elements Python can order."""
    # about n log n comparisons, each walking at most the lighter key
    ctx.pay(max(weight(ctx, keys), len(keys)) * max(len(keys).bit_length(), 1))
    types = _types(ctx, keys)
    if types <= _NUMBERS or types <= _STRINGS or types <= _LISTS:
        try:
            return sorted(keys) if items is None else sorted(items, key=keys.__getitem__)
        except TypeError:  # lists whose elements cannot be ordered
            pass
    raise EvalError(f"{who}: elements cannot be compared")


@builtin("sort", 1, 1)
def sort(ctx, xs):
    _need(type(xs) is list, "sort: expected a list, got {}", xs)
    w, nest = measure(ctx, xs)
    return sized(ctx, _sorted(ctx, xs, "sort"), w, nest)


@builtin("sort_by", 2, 2)
def sort_by(ctx, f, xs):
    """xs ordered by f(x), stable: elements with equal keys keep their order."""
    f = _callable(f, "sort_by")
    _need(type(xs) is list, "sort_by: expected a list, got {}", xs)
    ctx.charge(len(xs))
    keys = collection(ctx, [f.call([x]) for x in xs])
    order = _sorted(ctx, keys, "sort_by", range(len(xs)))
    return _part(ctx, xs, [xs[i] for i in order])


@builtin("range", 1, 3)
def range_(ctx, *a):
    _need(1 <= len(a) <= 3, "range expects 1 to 3 arguments")
    _need(all(_is_int(x) for x in a), "range: bounds must be integers")
    if len(a) == 3 and a[2] == 0:
        raise EvalError("range: step must not be zero")
    start, stop, step = (0, a[0], 1) if len(a) == 1 else (a[0], a[1], a[2] if len(a) == 3 else 1)
    if max(0, (stop - start + step - (1 if step > 0 else -1)) // step) > MAX_LEN:
        raise LimitError(TOO_LARGE)
    r = range(start, stop, step)
    ctx.pay(len(r))
    return sized(ctx, list(r), len(r), 1)


def _pairs(ctx, out: list, flat: bool):
    """A list of fresh two-element lists (zip, enumerate)."""
    if flat:
        return sized(ctx, out, 3 * len(out), 2)
    return collection(ctx, out)


@builtin("zip", 2, 2)
def zip_(ctx, xs, ys):
    _seq(xs, "zip"), _seq(ys, "zip")
    n = min(len(xs), len(ys))
    if 3 * n > MAX_LEN:  # each pair is a list of two: three slots at least
        raise LimitError(TOO_LARGE)
    ctx.pay(3 * n)
    return _pairs(ctx, [[x, y] for x, y in zip(xs, ys)], _flat(ctx, xs) and _flat(ctx, ys))


@builtin("enumerate", 1, 1)
def enumerate_(ctx, xs):
    _seq(xs, "enumerate")
    if 3 * len(xs) > MAX_LEN:
        raise LimitError(TOO_LARGE)
    ctx.pay(3 * len(xs))
    return _pairs(ctx, [[i, x] for i, x in enumerate(xs)], _flat(ctx, xs))


@builtin("map", 2, 2)
def map_(ctx, f, xs):
    f = _callable(f, "map")
    _seq(xs, "map")
    ctx.charge(len(xs))
    return collection(ctx, [f.call([x]) for x in xs])


@builtin("filter", 2, 2)
def filter_(ctx, f, xs):
    f = _callable(f, "filter")
    _seq(xs, "filter")
    ctx.charge(len(xs))
    return _part(ctx, xs, [x for x in xs if _truthy(f.call([x]))])


@builtin("fold", 3, 3)
def fold(ctx, f, init, xs):
    f = _callable(f, "fold")
    _seq(xs, "fold")
    ctx.charge(len(xs))
    acc = init
    for x in xs:
        acc = f.call([acc, x])
    return acc


# Python's truthiness coincides with the language's on every value kind, so
# any and all run in C.

@builtin("any", 1, 1)
def any_(ctx, xs):
    ctx.pay(len(_seq(xs, "any")))
    return any(xs)


@builtin("all", 1, 1)
def all_(ctx, xs):
    ctx.pay(len(_seq(xs, "all")))
    return all(xs)


_NUMBERS, _STRINGS, _LISTS = frozenset((int, float)), frozenset((str,)), frozenset((list,))


def _types(ctx, xs) -> frozenset:
    """The element types of a list (a pass in C)."""
    ctx.pay(len(xs))
    return frozenset(map(type, xs))


@builtin("sum", 1, 1)
def sum_(ctx, xs):
    _seq(xs, "sum")
    _need(_types(ctx, xs) <= _NUMBERS, "sum: expected numbers")
    return check_int(sum(xs))


def _extreme(name, pick):
    def f(ctx, *a):
        xs = a[0] if len(a) == 1 else list(a)
        _seq(xs, name)
        _need(len(xs) > 0, f"{name} of an empty list")
        ctx.pay(_visits(ctx, xs))
        try:
            return pick(xs)
        except TypeError:
            raise EvalError(f"{name}: elements cannot be compared") from None
    return builtin(name, 1, None)(f)


min_ = _extreme("min", min)
max_ = _extreme("max", max)


@builtin("concat", 2, 2)
def concat(ctx, a, b):
    _need(type(a) is type(b) and type(a) in (list, str), "concat: expected two lists or two strings")
    return _joined(ctx, a, b)


@builtin("append", 2, 2)
def append(ctx, xs, x):
    _need(type(xs) is list, "append: expected a list, got {}", xs)
    (w, nest), (xw, xn) = measure(ctx, xs), measure(ctx, x)
    if w + 1 + xw > MAX_LEN:
        raise LimitError(TOO_LARGE)
    ctx.pay(len(xs))
    return sized(ctx, xs + [x], w + 1 + xw, max(nest, xn + 1))


@builtin("contains", 2, 2)
def contains(ctx, xs, x):
    if type(xs) is str:
        _need(type(x) is str, "contains: a string can only contain strings")
        ctx.pay(len(xs) // CHARS_PER_UNIT)
        return x in xs
    _seq(xs, "contains")
    if _search(ctx, xs, x):
        return x in xs
    return any(same(y, x) for y in xs)


@builtin("index_of", 2, 2)
def index_of(ctx, xs, x):
    if type(xs) is str:
        _need(type(x) is str, "index_of: a string can only contain strings")
        ctx.pay(len(xs) // CHARS_PER_UNIT)
        return xs.find(x)
    _seq(xs, "index_of")
    if _search(ctx, xs, x):
        return xs.index(x) if x in xs else -1
    for i, y in enumerate(xs):
        if same(y, x):
            return i
    return -1


@builtin("count", 2, 2)
def count(ctx, xs, x):
    if type(xs) is str:
        ctx.pay(len(xs) // CHARS_PER_UNIT)
        return xs.count(x) if type(x) is str and x else 0
    _seq(xs, "count")
    if _search(ctx, xs, x):
        return xs.count(x)
    return sum(1 for y in xs if same(y, x))


@builtin("take", 2, 2)
def take(ctx, xs, n):
    _need(_is_int(n), "take: count must be an integer")
    return _part(ctx, xs, _seq(xs, "take")[:max(n, 0)])


@builtin("drop", 2, 2)
def drop(ctx, xs, n):
    _need(_is_int(n), "drop: count must be an integer")
    return _part(ctx, xs, _seq(xs, "drop")[max(n, 0):])


@builtin("repeat", 2, 2)
def repeat(ctx, x, n):
    _need(_is_int(n), "repeat: count must be an integer")
    n = max(n, 0)
    xw, xn = measure(ctx, x)
    if n * (1 + xw) > MAX_LEN:
        raise LimitError(TOO_LARGE)
    ctx.pay(n)
    return sized(ctx, [x] * n, n * (1 + xw), xn + 1)


# ---------------------------------------------------------------- sets (lists as sets)


def _set_key(v):
    """A hashable key that two values share exactly when `same` holds of them
    (a number and a bool never share one; 1 and 1.0 do)."""
    t = type(v)
    if t is int or t is float:
        return 0, v
    if t is str:
        return 1, v
    if t is bool:
        return 2, v
    if v is None:
        return 3,
    return 4, canon(v, None)


def canon(v, who: str | None) -> str:
    """A text that two values share exactly when `same` holds of them (all NaNs share
    one), the same in every process: map entries sorted, integral floats written
    as integers. A function has no stable text: with `who`, an error; without, its
    identity."""
    t = type(v)
    if t is int:
        return str(v)
    if t is float:
        if v.is_integer():
            return str(int(v))
        return repr(v) if v == v else "nan"
    if t is str:
        return json.dumps(v)  # quoted and escaped: never equal to a number's text
    if t is list:
        return "[" + ",".join([canon(x, who) for x in v]) + "]"
    if t is dict:
        return "{" + ",".join(sorted([canon(k, who) + ":" + canon(x, who) for k, x in v.items()])) + "}"
    if v is None or t is bool:
        return _show(v)
    if who is not None:
        raise EvalError(f"{who}: a function has no stable value to draw from")
    return f"<function {id(v)}>"


def _set_keys(ctx, who: str, xs, ys) -> tuple[list, list]:
    """The keys of xs's and ys's elements (`_set_key`); a Python walk over both."""
    _need(type(xs) is list and type(ys) is list, f"{who}: expected two lists, got {{}} and {{}}", xs, ys)
    ctx.pay(KEY_COST * (weight(ctx, xs) + weight(ctx, ys)))
    return list(map(_set_key, xs)), list(map(_set_key, ys))


def _distinct(xs, keys, seen: set, keep=None) -> list:
    """The elements of xs whose key `keep` accepts (all, without it), each key once,
    in order; `seen` grows by the keys taken."""
    out = []
    for x, k in zip(xs, keys):
        if k not in seen and (keep is None or keep(k)):
            seen.add(k)
            out.append(x)
    return out


@builtin("union", 2, 2)
def union(ctx, xs, ys):
    """xs's distinct elements in order, then ys's that are new."""
    kx, ky = _set_keys(ctx, "union", xs, ys)
    seen: set = set()
    part = _distinct(xs, kx, seen)
    part += _distinct(ys, ky, seen)
    return _part(ctx, xs, part, ys)


@builtin("intersection", 2, 2)
def intersection(ctx, xs, ys):
    """xs's distinct elements that ys holds, in xs's order."""
    kx, ky = _set_keys(ctx, "intersection", xs, ys)
    return _part(ctx, xs, _distinct(xs, kx, set(), set(ky).__contains__))


@builtin("difference", 2, 2)
def difference(ctx, xs, ys):
    """xs's distinct elements that ys does not hold, in xs's order."""
    kx, ky = _set_keys(ctx, "difference", xs, ys)
    outside = set(ky)
    return _part(ctx, xs, _distinct(xs, kx, set(), lambda k: k not in outside))


# ---------------------------------------------------------------- maps


@builtin("keys", 1, 1)
def keys(ctx, m):
    _need(type(m) is dict, "keys: expected a map")
    ctx.pay(len(m))
    return collection(ctx, list(m.keys()))


@builtin("values", 1, 1)
def values(ctx, m):
    _need(type(m) is dict, "values: expected a map")
    ctx.pay(len(m))
    return collection(ctx, list(m.values()))


@builtin("has", 2, 2)
def has(ctx, m, k):
    _need(type(m) is dict, "has: expected a map")
    if type(k) in (int, str):  # keys are ints and strings only: a hash lookup is exact
        return k in m
    ctx.pay(PY_COST * len(m))
    return any(same(k, j) for j in m)


@builtin("put", 3, 3)
def put(ctx, m, k, v):
    _need(type(m) is dict, "put: expected a map")
    # bools are kept out: Python would merge the keys true and 1
    _need(type(k) in (int, str), "put: keys must be integers or strings")
    w, nest = measure(ctx, m)
    vw, vn = measure(ctx, v)
    if k in m:
        w -= 1 + weight(ctx, k) + weight(ctx, m[k])
    w += 1 + weight(ctx, k) + vw
    if w > MAX_LEN:
        raise LimitError(TOO_LARGE)
    ctx.pay(len(m))
    out = dict(m)
    out[k] = v
    return sized(ctx, out, w, max(nest, vn + 1))


# ---------------------------------------------------------------- strings


def _str1(name, fn):
    def f(ctx, s):
        _need(type(s) is str, f"{name}: expected a string, got {{}}", s)
        ctx.pay(len(s) // CHARS_PER_UNIT)
        r = fn(s)
        if type(r) is str and len(r) > MAX_LEN:  # upper("ß") is "SS": case changes can grow text
            raise LimitError(TOO_LARGE)
        return r
    return builtin(name, 1, 1)(f)


upper = _str1("upper", str.upper)
lower = _str1("lower", str.lower)
strip = _str1("strip", str.strip)
ord_ = _str1("ord", lambda s: ord(s) if len(s) == 1 else _fail("ord: expected one character"))


# Character classes, as Python's: true when the string is not empty and every
# character is in the class (Unicode letters and digits count).
isalpha = _str1("isalpha", str.isalpha)
isdigit = _str1("isdigit", str.isdigit)
isupper = _str1("isupper", str.isupper)
islower = _str1("islower", str.islower)
isspace = _str1("isspace", str.isspace)
isdecimal = _str1("isdecimal", str.isdecimal)  # the digits Python's int() reads: 0-9 and every Unicode Nd digit


def _python_number(text: str, kind):
    """Python's int(text) or float(text), or None when Python refuses the text (a numeral too long is a limit)."""
    if len(text.strip()) > MAX_INT_DIGITS + (330 if kind is float else 0):
        raise LimitError(f"number too long (more than {MAX_INT_DIGITS} digits)")
    try:
        return kind(text)
    except (ValueError, OverflowError):
        return None


@builtin("reads_int", 1, 1)
def reads_int(ctx, s):
    """Whether Python's int(s) reads the string: surrounding whitespace, a sign, decimal digits (Unicode ones
    too) with single underscores between them."""
    _need(type(s) is str, "reads_int: expected a string, got {}", s)
    ctx.pay(len(s) // CHARS_PER_UNIT)
    return len(s.strip()) <= MAX_INT_DIGITS and _python_number(s, int) is not None


@builtin("reads_float", 1, 1)
def reads_float(ctx, s):
    """Whether Python's float(s) reads the string (also `1e-3`, `1_000`, ` 2.5 `, `inf`, `nan`)."""
    _need(type(s) is str, "reads_float: expected a string, got {}", s)
    ctx.pay(len(s) // CHARS_PER_UNIT)
    return len(s.strip()) <= MAX_INT_DIGITS + 330 and _python_number(s, float) is not None


# ---------------------------------------------------------------- regular expressions
#
# Python's `re` on strings, so a world restates a published parser's pattern as it is written: `\d` is any
# Unicode decimal digit, `\s` any Unicode whitespace, `\w` any word character, as in the published code. The
# pattern is the world's own constant; the subject may be an agent's text (at most 100,000 characters). A
# match is [the whole match, group 1, group 2, ...] with none for a group that took no part; no match is none.
# The steps paid are the subject's length: a pattern that backtracks without end is the author's to avoid (the
# runner's wall-clock deadline still stops the call).


@functools.lru_cache(maxsize=256)
def _pattern(p: str):
    return re.compile(p)


def _regex(name: str, p, s):
    _need(type(p) is str and type(s) is str, f"{name}: expected a pattern and a string, got {{}} and {{}}", p, s)
    try:
        return _pattern(p)
    except re.error as e:
        raise EvalError(f"{name}: the pattern cannot be read ({e})") from None


def _groups(ctx, m):
    if m is None:
        return None
    out = [m.group(0)] + list(m.groups())
    return _pieces(ctx, out, sum(len(g) for g in out if g is not None))


def _matcher(name: str, how: str):
    def f(ctx, p, s):
        rx = _regex(name, p, s)
        ctx.pay(len(s) // CHARS_PER_UNIT + 1)
        return _groups(ctx, getattr(rx, how)(s))
    return builtin(name, 2, 2)(f)


re_match = _matcher("re_match", "match")
re_search = _matcher("re_search", "search")
re_fullmatch = _matcher("re_fullmatch", "fullmatch")


@builtin("re_findall", 2, 2)
def re_findall(ctx, p, s):
    """Python's re.findall: the matched strings, or (a pattern with groups) each match's group(s)."""
    rx = _regex("re_findall", p, s)
    ctx.pay(len(s) // CHARS_PER_UNIT + 1)
    found = [list(x) if type(x) is tuple else x for x in rx.findall(s)]
    return _pieces(ctx, found, len(s) * max(1, rx.groups))


@builtin("re_split", 2, 2)
def re_split(ctx, p, s):
    """Python's re.split: the pieces between matches (and the groups of each match, none where unmatched)."""
    rx = _regex("re_split", p, s)
    ctx.pay(len(s) // CHARS_PER_UNIT + 1)
    return _pieces(ctx, rx.split(s), len(s) * max(1, rx.groups))


@builtin("re_sub", 3, 3)
def re_sub(ctx, p, repl, s):
    """Python's re.sub: every match replaced by repl (its \\1 and \\g<name> name groups)."""
    rx = _regex("re_sub", p, s)
    _need(type(repl) is str, "re_sub: expected a replacement string, got {}", repl)
    ctx.pay(len(s) // CHARS_PER_UNIT + 1)
    try:
        out = rx.sub(repl, s) if len(s) * max(1, len(repl)) <= MAX_LEN else None
    except (re.error, IndexError) as e:
        raise EvalError(f"re_sub: the replacement cannot be read ({e})") from None
    if out is None or len(out) > MAX_LEN:
        raise LimitError(TOO_LARGE)
    return out


def _fail(msg):
    raise EvalError(msg)


def _pieces(ctx, parts: list, chars: int):
    """A list of strings cut from `chars` characters of text."""
    ctx.pay(len(parts) + chars // CHARS_PER_UNIT)
    w = len(parts) + chars // CHARS_PER_UNIT  # the pieces weigh at most the text
    if w > MAX_LEN:
        w = len(parts) + sum(len(p) // CHARS_PER_UNIT for p in parts)
    return sized(ctx, parts, w, 1)


@builtin("chars", 1, 1)
def chars(ctx, s):
    _need(type(s) is str, "chars: expected a string, got {}", s)
    return _pieces(ctx, list(s), 0)


@builtin("split", 2, 2)
def split(ctx, s, sep):
    _need(type(s) is str and type(sep) is str, "split: expected two strings")
    return _pieces(ctx, s.split(sep) if sep else list(s), len(s))


@builtin("join", 2, 2)
def join(ctx, xs, sep):
    _need(type(xs) is list and type(sep) is str, "join: expected a list of strings and a string")
    _need(_types(ctx, xs) <= _STRINGS, "join: expected a list of strings and a string")
    total = sum(map(len, xs)) + len(sep) * max(len(xs) - 1, 0)
    if total > MAX_LEN:
        raise LimitError(TOO_LARGE)
    ctx.pay(total // CHARS_PER_UNIT)
    return sep.join(xs)


@builtin("replace", 3, 3)
def replace(ctx, s, old, new):
    _need(all(type(x) is str for x in (s, old, new)), "replace: expected three strings")
    if old == "":
        return s
    ctx.pay(len(s) // CHARS_PER_UNIT)
    if s.count(old) * max(len(new) - len(old), 0) + len(s) > MAX_LEN:
        raise LimitError(TOO_LARGE)
    return s.replace(old, new)


@builtin("startswith", 2, 2)
def startswith(ctx, s, p):
    _need(type(s) is str and type(p) is str, "startswith: expected two strings")
    return s.startswith(p)


@builtin("endswith", 2, 2)
def endswith(ctx, s, p):
    _need(type(s) is str and type(p) is str, "endswith: expected two strings")
    return s.endswith(p)


@builtin("chr", 1, 1)
def chr_(ctx, n):
    _need(_is_int(n) and 0 <= n < 0x110000, "chr: expected a code point")
    # a lone surrogate is not text: no encoder (the log, the console) could write it
    _need(not 0xD800 <= n <= 0xDFFF, "chr: a surrogate code point (55296 to 57343) is not a character")
    return chr(n)


def _words(ctx):
    return getattr(ctx, "words", None) or ("true", "false", "none")


@builtin("str", 1, 1)
def str_(ctx, v):
    return show(ctx, v)


@builtin("show", 1, 1)
def show(ctx, v):
    """The world's own rendering (its words for true, false and none)."""
    text = _show(v, *_words(ctx))
    ctx.pay(PY_COST * len(text))  # rendering is a Python walk: about a character per visit
    return text


@builtin("int", 1, 1)
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
        # as Python's int(text): surrounding whitespace, a sign, decimal digits (Unicode ones too), single
        # underscores between digits
        if len(v.strip()) > MAX_INT_DIGITS:  # also keeps Python's digit limit out of reach
            raise LimitError(f"integer too large (more than {MAX_INT_BITS} bits)")
        r = _python_number(v, int)
        if r is None:
            raise EvalError("int: not a number")
        return check_int(r)
    raise EvalError(f"int: cannot convert {type_name(v)}")


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


@builtin("int_of", 2, 2)
def int_of(ctx, text, base):
    """The integer a numeral in base 2 to 36 writes (an optional sign, then digits
    of either case; no prefix, no underscores)."""
    _need(type(text) is str and _is_int(base), "int_of: expected a string and a base, got {} and {}", text, base)
    _need(2 <= base <= 36, "int_of: the base must be 2 to 36")
    ctx.pay(len(text) // CHARS_PER_UNIT)
    t = text.strip()
    sign = t[:1] if t[:1] in ("+", "-") else ""
    digits = t[len(sign):]
    allowed = _DIGITS[:base] + _DIGITS[10:base].upper()
    _need(digits != "" and not digits.strip(allowed), f"int_of: not a base-{base} number")
    digits = digits.lstrip("0") or "0"
    if len(digits) > MAX_INT_BITS:  # base 2 needs the most digits; also keeps Python's digit limit away
        raise LimitError(f"integer too large (more than {MAX_INT_BITS} bits)")
    return check_int(int(sign + digits, base))


def _radix(name: str, code: str, bits: int):
    """n written in base 2**bits; with a width, its low width digits in two's complement."""
    # digits enough for any integer the limits allow, sign included
    whole = (MAX_INT_BITS + bits) // bits + 1

    def f(ctx, n, width=None):
        _need(_is_int(n), f"{name}: expected an integer, got {{}}", n)
        if width is None:
            return format(n, code)
        _need(_is_int(width) and width >= 0, f"{name}: the width must be a whole number, got {{}}", width)
        if width > MAX_LEN:
            raise LimitError(TOO_LARGE)
        ctx.pay(width // CHARS_PER_UNIT)
        core = min(width, whole)
        text = format(n & ((1 << core * bits) - 1), f"0{core}{code}") if core else ""
        return (_DIGITS[(1 << bits) - 1] if n < 0 else "0") * (width - core) + text
    return builtin(name, 1, 2)(f)


bin_of = _radix("bin_of", "b", 1)
hex_of = _radix("hex_of", "x", 4)


@builtin("float", 1, 1)
def float_(ctx, v):
    """A number as a float; a string as Python's float(text) reads it (`1e-3`, `1_000`, ` 2.5 `, `inf`, `nan`)."""
    if type(v) is str:
        ctx.pay(len(v) // CHARS_PER_UNIT)
        r = _python_number(v, float)
        _need(r is not None, "float: not a number")
        return r
    _need(_is_num(v), "float: cannot convert {}", v)
    return float(v)


@builtin("abs", 1, 1)
def abs_(ctx, v):
    _need(_is_num(v), "abs: expected a number, got {}", v)
    return abs(v)


def _math1(name, fn, domain=lambda x: True):
    def f(ctx, x):
        _need(_is_num(x), f"{name}: expected a number, got {{}}", x)
        _need(domain(x), f"{name}: argument out of range")
        try:
            r = fn(x)
            return check_int(r) if type(r) is int else r
        except (OverflowError, ValueError):
            raise EvalError(f"{name}: result out of range") from None
    return builtin(name, 1, 1)(f)


floor = _math1("floor", math.floor, lambda x: math.isfinite(x))
ceil = _math1("ceil", math.ceil, lambda x: math.isfinite(x))
sqrt = _math1("sqrt", math.sqrt, lambda x: x >= 0)
exp = _math1("exp", math.exp, lambda x: x < 700)
log = _math1("log", math.log, lambda x: x > 0)
sin = _math1("sin", math.sin)
cos = _math1("cos", math.cos)


@builtin("round", 1, 2)
def round_(ctx, x, digits=0):
    _need(_is_num(x) and _is_int(digits), "round: expected a number and an integer")
    _need(-400 <= digits <= 400, "round: digits out of range")
    r = round(x) if digits == 0 else round(x, digits)
    return check_int(r) if type(r) is int else r


@builtin("np_round", 1, 2)
def np_round(ctx, x, digits=0):
    """numpy's round of a float (np.round, also Python's round() of a numpy float): x * 10^d rounded half to
    even, then divided by 10^d, all in floats (numpy/_core/src/multiarray/calculation.c, PyArray_Round), so
    np_round(0.015, 2) is 0.02 where round(0.015, 2) is 0.01 (0.015 is stored a little below 0.015, but
    0.015 * 100 is 1.5 exactly). An integer is returned as it is for digits >= 0, as numpy does."""
    _need(_is_num(x) and _is_int(digits), "np_round: expected a number and an integer")
    _need(-400 <= digits <= 400, "np_round: digits out of range")
    if type(x) is int:
        if digits >= 0:
            return x
        x = float(x)
    f = 10.0 ** abs(digits)
    y = x * f if digits >= 0 else x / f
    if not math.isfinite(y):
        return y / f if digits >= 0 else y * f
    r = float(round(y))  # Python rounds a float half to even, as numpy's rint
    return r / f if digits >= 0 else r * f


@builtin("fma", 3, 3)
def fma(ctx, x, y, z):
    """x * y + z in floats, rounded once (IEEE 754 fusedMultiplyAdd, C's fma): the operation OpenBLAS's kernels
    use for numpy's matrix products, which a world restating a numpy computation to the last bit needs
    (docs/language.md). Integers are taken as floats. Python 3.11 has no math.fma, so the exact value is
    formed from the three significands as integers and rounded once by int-to-float conversion or int true
    division (both correctly rounded in CPython)."""
    _need(_is_num(x) and _is_num(y) and _is_num(z), "fma: expected three numbers")
    try:
        x, y, z = float(x), float(y), float(z)
    except OverflowError:
        raise EvalError("fma: argument out of range") from None
    return fused_multiply_add(x, y, z)


_TWO53 = 9007199254740992.0


def fused_multiply_add(x: float, y: float, z: float) -> float:
    """x * y + z for three floats, with one rounding to nearest even (infinities and NaN as IEEE 754)."""
    if not (math.isfinite(x) and math.isfinite(y)):
        return x * y + z  # the product is inf or nan exactly as the fused one
    if not math.isfinite(z):
        return z  # a finite product never changes an infinite or NaN addend (x*y could overflow first)
    if x == 0 or y == 0:
        return x * y + z  # the product is an exact (signed) zero
    if z == 0:
        return x * y  # one rounding of the exact product; its sign survives an underflow to zero
    mx, ex = math.frexp(x)
    my, ey = math.frexp(y)
    mz, ez = math.frexp(z)
    xi, yi, zi = int(mx * _TWO53), int(my * _TWO53), int(mz * _TWO53)  # exact 53-bit integer significands
    ep, ez = ex + ey - 106, ez - 53
    if ep < ez:
        total, e = xi * yi + (zi << (ez - ep)), ep
    else:
        total, e = ((xi * yi) << (ep - ez)) + zi, ez
    if total == 0:
        return 0.0  # an exact cancellation is +0 when rounding to nearest
    try:
        return float(total << e) if e >= 0 else total / (1 << -e)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


@builtin("error", 1, 1)
def error(ctx, message):
    raise EvalError(message if type(message) is str else _show(message))


def _is(t):
    return lambda ctx, v: type(v) is t


@builtin("is_none", 1, 1)
def is_none(ctx, v):
    return v is None


@builtin("is_fn", 1, 1)
def is_fn(ctx, v):
    return isinstance(v, Function)


_TYPE_WORDS = {int: "int", float: "float", bool: "bool", str: "str", list: "list", dict: "map",
               type(None): "none"}


@builtin("type_of", 1, 1)
def type_of(ctx, v):
    """The kind of a value, in the words params declare types with (and "none")."""
    return _TYPE_WORDS.get(type(v)) or "fn"


# ---------------------------------------------------------------- seeded randomness
#
# Pure functions of (seed, key): the same seed and key give the same draw in every
# process and on every Python; another key gives an independent draw. The bits are
# SHAKE-256 of the seed and the key's canonical text, so nothing depends on
# Python's `random` or its hash seed.


def _random_bits(ctx, who: str, seed, key, nbytes: int) -> bytes:
    _need(_is_int(seed), f"{who}: the seed must be an integer, got {{}}", seed)
    ctx.charge(1)  # a hash, even of a small key, costs as much as a few steps of a loop
    ctx.pay(KEY_COST * weight(ctx, key) + nbytes // CHARS_PER_UNIT)
    text = f"worldspec.rand:{seed}:{canon(key, who)}"
    return hashlib.shake_256(text.encode()).digest(nbytes)


def _below(ctx, who: str, seed, key, n: int) -> int:
    """A draw from 0..n-1, uniform to within 2^-64 (64 bits beyond n's own)."""
    nbytes = (n.bit_length() + 64 + 7) // 8
    r = int.from_bytes(_random_bits(ctx, who, seed, key, nbytes), "big")
    return (r * n) >> (8 * nbytes)


@builtin("rand", 4, 4)
def rand(ctx, seed, key, lo, hi):
    """An integer from lo to hi inclusive."""
    _need(_is_int(lo) and _is_int(hi), "rand: bounds must be integers, got {} and {}", lo, hi)
    _need(lo <= hi, "rand: empty range (lo is greater than hi)")
    return lo + _below(ctx, "rand", seed, key, hi - lo + 1)


@builtin("rand_float", 2, 2)
def rand_float(ctx, seed, key):
    """A float in [0, 1), a multiple of 2^-53."""
    return (int.from_bytes(_random_bits(ctx, "rand_float", seed, key, 7), "big") >> 3) / (1 << 53)


@builtin("choice", 3, 3)
def choice(ctx, seed, key, xs):
    """One element of a list (or character of a string)."""
    _seq(xs, "choice")
    _need(len(xs) > 0, "choice from an empty list")
    return xs[_below(ctx, "choice", seed, key, len(xs))]


@builtin("shuffle", 3, 3)
def shuffle(ctx, seed, key, xs):
    """xs in an order drawn uniformly (Fisher-Yates, 64 bits a swap)."""
    _seq(xs, "shuffle")
    n = len(xs)
    draws = struct.unpack(f">{n}Q", _random_bits(ctx, "shuffle", seed, key, 8 * n))
    ctx.pay(2 * PY_COST * n)  # a draw and a swap per element, in Python
    out = list(xs)
    for i in range(n - 1, 0, -1):
        j = (draws[i] * (i + 1)) >> 64
        out[i], out[j] = out[j], out[i]
    return _part(ctx, xs, "".join(out) if type(xs) is str else out)


@builtin("truthy", 1, 1)
def truthy(ctx, v):
    return _truthy(v)


BUILTINS["xor"] = (xor, 2, 2)  # also the infix `^`
BUILTINS["is_int"] = (lambda ctx, v: type(v) is int, 1, 1)  # bool is not an int here
for _name, _type in (("is_str", str), ("is_list", list), ("is_bool", bool), ("is_float", float), ("is_map", dict)):
    BUILTINS[_name] = (_is(_type), 1, 1)

# Names a spec can never bind or call: no route to Python's machinery.
FORBIDDEN = {"eval", "exec", "compile", "open", "import", "__import__", "globals", "locals",
             "getattr", "setattr", "delattr", "vars", "dir", "type", "object", "input", "breakpoint",
             "help", "exit", "quit", "memoryview", "bytearray", "classmethod", "staticmethod",
             "super", "property", "os", "sys", "subprocess"}
