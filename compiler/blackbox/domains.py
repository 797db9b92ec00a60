"""What black boxes are made of: input domains, input parsing and writing, answer matching.

A box's inputs are declared as `domain NAME, DOMAIN`, where DOMAIN is written in
call syntax and read structurally (never evaluated as code):

    int(lo, hi)   float(lo, hi)   bool   bits(n)   str(lo, hi)   str(ALPHABET, lo, hi)
    text(lo, hi)  list(ELEMENT, lo, hi)   choice(v1, v2, ...)

Bounds may use params (`int(0, N)`). A domain types what an agent may send,
draws sample inputs for the probe generator, enumerates small finite input
spaces (for the interactive-puzzle solver), and describes itself in the
prompt. Inputs are read with the meta-language's own parser restricted to
literal values, so an agent's text is never run as code.
"""
from __future__ import annotations

import itertools
import math
import random
import string
from typing import Iterator, Sequence

import attrs

from worldspec import ast
from worldspec.compiler.api import InputError
from worldspec.diagnostics import SpecError, SpecErrors, did_you_mean
from worldspec.parser import parse_expr
from worldspec.values import same, show, type_name

MAX_INPUT_CHARS = 2000
MAX_ENUM = 20000
LOWER = string.ascii_lowercase


# ---------------------------------------------------------------- domains


class Domain:
    """The values one input may take: checked, drawn, enumerated (when small) and described."""

    kind = "any"
    str_like = False

    def check(self, v) -> str | None:  # pragma: no cover - every domain overrides
        """None when v is in the domain; otherwise why not."""
        raise NotImplementedError

    def draw(self, rng: random.Random):  # pragma: no cover
        """A value drawn at random (edges more often, for numbers)."""
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover
        """The domain in words, as the manual and prompts show it."""
        raise NotImplementedError

    def size(self) -> int | None:
        """How many values the domain has (None when unbounded or too many to count)."""
        return None

    def enumerate(self) -> Iterator:  # pragma: no cover
        """Every value, in order (only for domains with a size)."""
        raise NotImplementedError

    def coerce(self, v):
        """v in the domain's own type (an integer written for a float input becomes a float)."""
        return v


@attrs.frozen
class IntDomain(Domain):
    lo: int
    hi: int
    kind = "int"

    def check(self, v):
        if type(v) is not int:
            return f"expected an integer, got {_kind(v)}"
        if not self.lo <= v <= self.hi:
            return f"{v} is outside {self.lo}..{self.hi}"
        return None

    def draw(self, rng):
        edges = [x for x in (0, 1, -1, 2, self.lo, self.hi) if self.lo <= x <= self.hi]
        if edges and rng.random() < 0.2:
            return rng.choice(edges)
        return rng.randint(self.lo, self.hi)

    def describe(self):
        return f"an integer from {self.lo} to {self.hi}"

    def size(self):
        return self.hi - self.lo + 1

    def enumerate(self):
        return iter(range(self.lo, self.hi + 1))


@attrs.frozen
class FloatDomain(Domain):
    lo: float
    hi: float
    kind = "float"

    def check(self, v):
        if type(v) not in (int, float):
            return f"expected a number, got {_kind(v)}"
        if not self.lo <= v <= self.hi:
            return f"{v} is outside {self.lo}..{self.hi}"
        return None

    def coerce(self, v):
        return float(v) if type(v) is int else v

    def draw(self, rng):
        return round(rng.uniform(self.lo, self.hi), 1)

    def describe(self):
        return f"a number from {_num(self.lo)} to {_num(self.hi)}"


@attrs.frozen
class BoolDomain(Domain):
    kind = "bool"

    def check(self, v):
        return None if type(v) is bool else f"expected true or false, got {_kind(v)}"

    def draw(self, rng):
        return rng.random() < 0.5

    def describe(self):
        return "true or false"

    def size(self):
        return 2

    def enumerate(self):
        return iter((False, True))


@attrs.frozen
class StrDomain(Domain):
    alphabet: str
    lo: int
    hi: int
    label: str = ""  # "bits" for bit strings
    kind = "str"
    str_like = True

    def check(self, v):
        if type(v) is not str:
            return f"expected a string, got {_kind(v)}"
        if not self.lo <= len(v) <= self.hi:
            want = str(self.lo) if self.lo == self.hi else f"{self.lo} to {self.hi}"
            return f"expected {want} characters, got {len(v)}"
        bad = sorted({c for c in v if c not in self.alphabet})
        if bad:
            return f"the character(s) {''.join(bad)!r} are not allowed (only {self._alpha()})"
        return None

    def draw(self, rng):
        n = rng.randint(self.lo, min(self.hi, self.lo + 10))
        return "".join(rng.choice(self.alphabet) for _ in range(n))

    def _alpha(self) -> str:
        if self.alphabet == LOWER:
            return "lowercase letters a-z"
        if self.alphabet == LOWER + " ":
            return "lowercase letters and spaces"
        if self.alphabet == "01":
            return "0 and 1"
        return "characters from " + repr(self.alphabet)

    def describe(self):
        if self.label == "bits":
            return f"a string of exactly {self.lo} bits (0 or 1), written like {'1011001'[:self.lo] or '0'}"
        n = str(self.lo) if self.lo == self.hi else f"{self.lo} to {self.hi}"
        return f"a string of {n} {self._alpha()}"

    def size(self):
        k = len(self.alphabet)
        return sum(k ** n for n in range(self.lo, self.hi + 1))

    def enumerate(self):
        for n in range(self.lo, self.hi + 1):
            for t in itertools.product(self.alphabet, repeat=n):
                yield "".join(t)


@attrs.frozen
class ListDomain(Domain):
    element: Domain
    lo: int
    hi: int
    kind = "list"

    def check(self, v):
        if type(v) is not list:
            return f"expected a list, got {_kind(v)}"
        if not self.lo <= len(v) <= self.hi:
            want = str(self.lo) if self.lo == self.hi else f"{self.lo} to {self.hi}"
            return f"expected {want} elements, got {len(v)}"
        for i, x in enumerate(v):
            why = self.element.check(x)
            if why:
                return f"element {i}: {why}"
        return None

    def coerce(self, v):
        return [self.element.coerce(x) for x in v] if type(v) is list else v

    def draw(self, rng):
        n = rng.randint(self.lo, min(self.hi, self.lo + 10))
        return [self.element.draw(rng) for _ in range(n)]

    def describe(self):
        n = str(self.lo) if self.lo == self.hi else f"{self.lo} to {self.hi}"
        inner = self.element.describe()
        for art in ("an ", "a "):
            if inner.startswith(art):
                inner = inner[len(art):]
                break
        inner = inner.replace("integer", "integers", 1).replace("number ", "numbers ", 1) \
            .replace("string ", "strings ", 1)
        return f"a list of {n} {inner}"

    def size(self):
        k = self.element.size()
        if k is None:
            return None
        return sum(k ** n for n in range(self.lo, self.hi + 1))

    def enumerate(self):
        items = list(self.element.enumerate())
        for n in range(self.lo, self.hi + 1):
            for t in itertools.product(items, repeat=n):
                yield list(t)


@attrs.frozen
class ChoiceDomain(Domain):
    options: tuple
    kind = "choice"

    @property
    def str_like(self):  # type: ignore[override]
        return all(type(o) is str for o in self.options)

    def check(self, v):
        if any(same(v, o) for o in self.options):
            return None
        shown = ", ".join(literal(o) for o in self.options[:12])
        more = ", ..." if len(self.options) > 12 else ""
        return f"{literal(v)} is not one of {shown}{more}"

    def draw(self, rng):
        return rng.choice(self.options)

    def describe(self):
        shown = ", ".join(literal(o) for o in self.options[:12])
        more = f", ... ({len(self.options)} in all)" if len(self.options) > 12 else ""
        return f"one of {shown}{more}"

    def size(self):
        return len(self.options)

    def enumerate(self):
        return iter(self.options)


def _kind(v) -> str:
    return "a " + type_name(v) if v is not None else "nothing"


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


DOMAIN_NAMES = ("int", "float", "bool", "bits", "str", "text", "list", "choice")


def domain_of(e: ast.Expr, constant) -> Domain:
    """Read a domain expression (`list(int(-9, 9), 1, 8)`); `constant` evaluates bounds."""
    if isinstance(e, ast.Var):
        name, args = e.name, ()
    elif isinstance(e, ast.Call) and isinstance(e.fn, ast.Var):
        name, args = e.fn.name, e.args
    else:
        raise SpecError(e.span, "this is not an input domain",
                        "Write a domain such as int(0, 9), list(int(-9, 9), 1, 8), bits(8), "
                        "str(1, 6) or choice(\"a\", \"b\").")

    def const(i, want=None):
        v = constant(args[i])
        if want is int and type(v) is not int:
            raise SpecError(args[i].span, f"{name}(...) needs an integer here, got {v!r}", "")
        if want is float and type(v) not in (int, float):
            raise SpecError(args[i].span, f"{name}(...) needs a number here, got {v!r}", "")
        return v

    def arity(*allowed):
        if len(args) not in allowed:
            raise SpecError(e.span, f"{name}(...) takes {' or '.join(map(str, allowed))} argument(s), "
                            f"got {len(args)}", _DOMAIN_HINT)

    if name == "int":
        arity(0, 2)
        d = IntDomain(-100, 100) if not args else IntDomain(const(0, int), const(1, int))
    elif name == "float":
        arity(0, 2)
        d = FloatDomain(-100.0, 100.0) if not args else FloatDomain(float(const(0, float)),
                                                                   float(const(1, float)))
    elif name == "bool":
        arity(0)
        d = BoolDomain()
    elif name == "bits":
        arity(1)
        n = const(0, int)
        d = StrDomain("01", n, n, "bits")
    elif name in ("str", "text"):
        arity(0, 2, 3)
        alphabet = LOWER if name == "str" else LOWER + " "
        if len(args) == 3:
            alphabet = const(0)
            if type(alphabet) is not str or not alphabet:
                raise SpecError(args[0].span, "the alphabet of str(...) must be a non-empty string", "")
            args = args[1:]
        lo, hi = (0, 12) if not args else (const(0, int), const(1, int))
        d = StrDomain(alphabet, lo, hi)
    elif name == "list":
        arity(1, 3)
        elem = domain_of(args[0], constant)
        lo, hi = (0, 8) if len(args) == 1 else (const(1, int), const(2, int))
        d = ListDomain(elem, lo, hi)
    elif name == "choice":
        if not args:
            raise SpecError(e.span, "choice(...) needs at least one option", _DOMAIN_HINT)
        opts = [constant(a) for a in args]
        if len(opts) == 1 and type(opts[0]) is list:
            opts = opts[0]
        if not opts:
            raise SpecError(e.span, "choice(...) needs at least one option", _DOMAIN_HINT)
        d = ChoiceDomain(tuple(opts))
    else:
        raise SpecError(e.span, f"unknown input domain {name!r}",
                        did_you_mean(name, DOMAIN_NAMES).strip() or _DOMAIN_HINT)
    lo, hi = getattr(d, "lo", 0), getattr(d, "hi", 0)
    if lo > hi:
        raise SpecError(e.span, f"{name}(...) has its lower bound {lo} above its upper bound {hi}", "")
    if isinstance(d, (StrDomain, ListDomain)) and lo < 0:
        raise SpecError(e.span, f"{name}(...) cannot have a negative length", "")
    return d


_DOMAIN_HINT = ("Domains: int(lo, hi), float(lo, hi), bool, bits(n), str(lo, hi), str(ALPHABET, lo, hi), "
                "text(lo, hi), list(ELEMENT, lo, hi), choice(v1, v2, ...).")


# ---------------------------------------------------------------- reading and writing values


def literal(v) -> str:
    """A value written as a literal (strings quoted): how an input is typed."""
    return show([v])[1:-1]


def _literal_value(e: ast.Expr):
    if isinstance(e, ast.Const):
        return e.value
    if isinstance(e, ast.ListExpr):
        return [_literal_value(x) for x in e.items]
    if isinstance(e, ast.MapExpr):
        out = {}
        for k, v in e.pairs:
            key = _literal_value(k)
            if not (type(key) in (int, str, bool) or key is None):
                raise InputError("map keys must be integers, strings or booleans")
            out[key] = _literal_value(v)
        return out
    raise InputError("only literal values are accepted (numbers, \"strings\", true/false, [lists]); "
                     "names and expressions are not")


def parse_literals(text: str) -> list:
    """Comma-separated literal values, read by the spec's own expression parser (never eval)."""
    if len(text) > MAX_INPUT_CHARS:
        raise InputError(f"the input is too long (more than {MAX_INPUT_CHARS} characters)")
    if not text.strip():
        raise InputError("the input is empty")
    try:
        tree = parse_expr("[" + text + "\n]", "<input>")
    except (SpecError, SpecErrors) as e:
        msg = getattr(e, "message", str(e))
        raise InputError(f"cannot read the input ({msg})") from None
    except RecursionError:
        raise InputError("the input nests too deeply") from None
    if not isinstance(tree, ast.ListExpr):
        raise InputError("cannot read the input")
    return [_literal_value(x) for x in tree.items]


def _unwrap(text: str) -> str:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == "`":
        t = t.strip("`").strip()
    return t


def parse_input(domains: Sequence[tuple[str, Domain]], text) -> list:
    """The values of one input text, in declaration order; raises InputError with a reason."""
    if not isinstance(text, str):
        raise InputError("the input must be text")
    t = _unwrap(text)
    if len(domains) == 1 and domains[0][1].str_like and not t.startswith('"'):
        if len(t) > MAX_INPUT_CHARS:
            raise InputError(f"the input is too long (more than {MAX_INPUT_CHARS} characters)")
        values = [t]
    else:
        values = parse_literals(t)
        if len(values) != len(domains):
            names = ", ".join(n for n, _ in domains)
            raise InputError(f"expected {len(domains)} value(s) ({names}), got {len(values)}")
    out = []
    for (name, d), v in zip(domains, values):
        why = d.check(v)
        if why:
            raise InputError(f"{name}: {why}")
        out.append(d.coerce(v))
    return out


def format_input(domains: Sequence[tuple[str, Domain]], values: Sequence) -> str:
    """How an agent writes these input values (the inverse of parse_input)."""
    if len(domains) == 1 and domains[0][1].str_like and type(values[0]) is str \
            and values[0] == values[0].strip() and not values[0].startswith('"') and values[0]:
        return values[0]
    return ", ".join(literal(v) for v in values)


def render(v) -> str:
    """How a box writes an output value."""
    return show(v)


# ---------------------------------------------------------------- answers


def close(a, b, tolerance: float) -> bool:
    """Equal values; numbers within tolerance * max(1, |b|) when tolerance > 0."""
    ta, tb = type(a), type(b)
    if tolerance and ta in (int, float) and tb in (int, float) and ta is not bool and tb is not bool:
        if math.isnan(float(a)) or math.isnan(float(b)):
            return False
        return abs(a - b) <= tolerance * max(1.0, abs(b)) + 1e-12
    if ta is list and tb is list:
        return len(a) == len(b) and all(close(x, y, tolerance) for x, y in zip(a, b))
    return same(a, b)


def matches(expected, answer: str, tolerance: float = 0.0) -> bool:
    """Whether an answer text states the expected output (as a literal or as the box writes it)."""
    if not isinstance(answer, str):
        return False
    t = _unwrap(answer)
    if " ".join(t.split()) == " ".join(render(expected).split()):
        return True
    if type(expected) is str and len(t) >= 2 and t[0] == t[-1] == '"':
        try:
            vals = parse_literals(t)
        except InputError:
            return False
        return len(vals) == 1 and vals[0] == expected
    try:
        vals = parse_literals(t)
    except InputError:
        return False
    return len(vals) == 1 and close(vals[0], expected, tolerance)
