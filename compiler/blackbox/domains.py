"""What black boxes are made of: input domains, input parsing and writing, answer matching.

A box's inputs are declared as `domain NAME, DOMAIN`, where DOMAIN is written in
call syntax and read structurally (never evaluated as code):

    int(lo, hi)   float(lo, hi)   pyfloat(lo, hi)   bool   bits(n)   str(lo, hi)   str(ALPHABET, lo, hi)
    text(lo, hi)  line(lo, hi)    message(lo, hi)   list(ELEMENT, lo, hi)   tuple(D1, D2, ...)
    choice(v1, v2, ...)   either(D1, D2, ...)   assign({"name": D, ...})
    pyassign({"name": D, ...})   pycheckpoint(D1, D2)   blank      (the published Oracle code boxes' readings)

Bounds may use params (`int(0, N)`). A domain types what an agent may send,
draws sample inputs for the probe generator, enumerates small finite input
spaces (for the interactive-puzzle solver), and describes itself in the
prompt. Inputs are read by compiler/blackbox/literals.py, a reader of literal
values only, so an agent's text is never run as code; each domain reads a whole
input text its own way (`read`) and writes values back as an agent types them
(`write`).
"""
from __future__ import annotations

import itertools
import random
import re
import string
from typing import Iterator, Sequence

import attrs

from worldspec import ast
from worldspec.compiler.api import InputError
from worldspec.compiler.blackbox.literals import (MAX_INPUT_CHARS, parse_assignments, parse_literals,
                                                  python_literal, single_string)
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.values import same, show, type_name

MAX_ENUM = 20000
LOWER = string.ascii_lowercase
PRINTABLE = "".join(c for c in string.printable if c not in "\n\r\t\x0b\x0c")
# `message`: any text, as the published Oracle loops hand the model's reply to the box (eva_models.py
# `evaluate`: `platform_module.blackbox(truth, model_output)`): every Unicode character counts, tabs and
# line breaks too. Draws mix printable ASCII with the forms that tell a Python parser apart: an accented
# capital, a non-ASCII digit, a no-break space, a tab.
MESSAGE_DRAWS = PRINTABLE + "\tÉÖ٣\u00a0\u2003"


# ---------------------------------------------------------------- domains


def sized_problem(v, want: type, called: str, lo: int, hi: int, unit: str) -> str | None:
    """Why v is not a `want` (a string or a list) of lo..hi `unit`s; None when it is."""
    if type(v) is not want:
        return f"expected {called}, got {_kind(v)}"
    if lo <= len(v) <= hi:
        return None
    shown = str(lo) if lo == hi else f"{lo} to {hi}"
    return f"expected {shown} {unit}, got {len(v)}"


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

    def uniform(self, rng: random.Random):
        """A value drawn uniformly from the whole domain (certification's samples; `draw` favours edges)."""
        return self.draw(rng)

    def size(self) -> int | None:
        """How many values the domain has (None when unbounded or too many to count)."""
        return None

    def enumerate(self) -> Iterator:  # pragma: no cover
        """Every value, in order (only for domains with a size)."""
        raise NotImplementedError

    def coerce(self, v):
        """v in the domain's own type (an integer written for a float input becomes a float)."""
        return v

    def accept(self, v, name: str):
        """v checked and coerced; an InputError naming the input when v is outside the domain."""
        why = self.check(v)
        if why:
            raise InputError(f"{name}: {why}")
        return self.coerce(v)

    def read(self, text: str, name: str):
        """The value of a whole input text when this is the box's only input."""
        values = parse_literals(text)
        if len(values) != 1:
            raise InputError(f"expected 1 value ({name}), got {len(values)}")
        return self.accept(values[0], name)

    def write(self, v, alone: bool = True) -> str:
        """v as an agent types it (alone: the box's only input, so bare text needs no quotes)."""
        return literal(v)


@attrs.frozen
class RangeDomain(Domain):
    """Numbers from lo to hi; a subclass says which numbers (`wrong_type`) and how bounds are written (`number`)."""

    lo: float
    hi: float

    def wrong_type(self, v) -> str | None:
        """Why v is not a number of this domain, or None."""
        raise NotImplementedError

    def number(self, v) -> str:
        """A bound or value as the domain's messages write it."""
        return str(v)

    def check(self, v):
        why = self.wrong_type(v)
        if why is None and not self.lo <= v <= self.hi:
            why = f"{self.number(v)} is outside {self.number(self.lo)}..{self.number(self.hi)}"
        return why


@attrs.frozen
class IntDomain(RangeDomain):
    kind = "int"

    def wrong_type(self, v):
        # 1e3 and 12.0 are integers as an agent writes them
        if type(v) is int or (type(v) is float and v.is_integer()):
            return None
        return f"expected an integer, got {_kind(v)}"

    def coerce(self, v):
        return int(v) if type(v) is float else v

    def uniform(self, rng):
        return rng.randint(self.lo, self.hi)

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
class FloatDomain(RangeDomain):
    kind = "float"

    def wrong_type(self, v):
        return None if type(v) in (int, float) else f"expected a number, got {_kind(v)}"

    def number(self, v) -> str:
        return _num(v)

    def coerce(self, v):
        return float(v) if type(v) is int else v

    def draw(self, rng):
        return round(rng.uniform(self.lo, self.hi), 1)

    def describe(self):
        return f"a number from {_num(self.lo)} to {_num(self.hi)}"


@attrs.frozen
class PyFloatDomain(FloatDomain):
    """`pyfloat(lo, hi)`: a number read from the whole text as Python's float() reads it, as the published Oracle
    physics loops read a time (`float(player_output)`): surrounding whitespace, Unicode digits, underscores between
    digits, `1e-3`, `2.`; not a tuple, a trailing comma or a sign apart from its digits. `inf` and `nan` are read
    too, and, being outside every range, refused with the range."""


    def read(self, text, name):
        try:
            v = float(text) if len(text) <= MAX_INPUT_CHARS else None
        except ValueError:
            v = None
        if v is None:
            raise InputError(f"{name}: cannot read {text[:40]!r} as a number")
        if v != v:
            raise InputError(f"{name}: nan is outside {self.number(self.lo)}..{self.number(self.hi)}")
        return self.accept(v, name)


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
        why = sized_problem(v, str, "a string", self.lo, self.hi, "characters")
        if why:
            return why
        if self.label == "message":
            return None
        bad = sorted({c for c in v if c not in self.alphabet})
        if bad:
            return f"the character(s) {''.join(bad)!r} are not allowed (only {self._alpha()})"
        return None

    def read(self, text, name):
        if self.label == "message":  # the text as sent: quotes are characters of it
            return self.accept(text, name)
        quoted = single_string(text)
        return self.accept(text if quoted is None else quoted, name)

    def write(self, v, alone=True):
        if self.label == "message" and alone:
            return v
        return write_bare(v, alone)

    def draw(self, rng):
        n = rng.randint(self.lo, min(self.hi, self.lo + 10))
        return "".join(rng.choice(self.alphabet) for _ in range(n))

    def uniform(self, rng):
        n = _length(rng, len(self.alphabet), self.lo, self.hi)
        return "".join(rng.choice(self.alphabet) for _ in range(n))

    def _alpha(self) -> str:
        if self.alphabet == LOWER:
            return "lowercase letters a-z"
        if self.alphabet == LOWER + " ":
            return "lowercase letters and spaces"
        if self.alphabet == "01":
            return "0 and 1"
        if self.alphabet == PRINTABLE:
            return "printable characters"
        return "characters from " + repr(self.alphabet)

    def describe(self):
        if self.label == "bits":
            return f"a string of exactly {self.lo} bits (0 or 1), written like {'1011001'[:self.lo] or '0'}"
        n = str(self.lo) if self.lo == self.hi else f"{self.lo} to {self.hi}"
        if self.label == "line":
            return f"a line of text ({n} printable characters)"
        if self.label == "message":
            return f"a message of {n} characters (any text)"
        return f"a string of {n} {self._alpha()}"

    def size(self):
        if self.label == "message":
            return None  # every Unicode text
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
        why = sized_problem(v, list, "a list", self.lo, self.hi, "elements")
        if why:
            return why
        for i, x in enumerate(v):
            why = self.element.check(x)
            if why:
                return f"element {i}: {why}"
        return None

    def coerce(self, v):
        return [self.element.coerce(x) for x in v] if type(v) is list else v

    def read(self, text, name):
        return self.accept(elements_of(parse_literals(text)), name)

    def write(self, v, alone=True):
        return "[" + ", ".join(self.element.write(x, False) for x in v) + "]"

    def draw(self, rng):
        n = rng.randint(self.lo, min(self.hi, self.lo + 10))
        return [self.element.draw(rng) for _ in range(n)]

    def uniform(self, rng):
        k = self.element.size()
        n = _length(rng, k, self.lo, self.hi) if k else rng.randint(self.lo, self.hi)
        return [self.element.uniform(rng) for _ in range(n)]

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

    def read(self, text, name):
        if self.str_like:
            quoted = single_string(text)
            return self.accept(text if quoted is None else quoted, name)
        return Domain.read(self, text, name)

    def write(self, v, alone=True):
        return write_bare(v, alone) if self.str_like else literal(v)

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


@attrs.frozen
class TupleDomain(Domain):
    """A fixed number of values of their own domains, written (a, b) (or [a, b]); the box sees a list."""

    elements: tuple
    kind = "tuple"

    def check(self, v):
        if type(v) is not list:
            return f"expected a tuple of {len(self.elements)} values, got {_kind(v)}"
        if len(v) != len(self.elements):
            return f"expected {len(self.elements)} values, got {len(v)}"
        for i, (d, x) in enumerate(zip(self.elements, v)):
            why = d.check(x)
            if why:
                return f"value {i + 1}: {why}"
        return None

    def coerce(self, v):
        return [d.coerce(x) for d, x in zip(self.elements, v)]

    def read(self, text, name):
        return self.accept(elements_of(parse_literals(text)), name)

    def write(self, v, alone=True):
        inner = ", ".join(d.write(x, False) for d, x in zip(self.elements, v))
        return f"({inner},)" if len(v) == 1 else f"({inner})"

    def draw(self, rng):
        return [d.draw(rng) for d in self.elements]

    def uniform(self, rng):
        return [d.uniform(rng) for d in self.elements]

    def describe(self):
        return "a tuple (" + ", ".join(d.describe() for d in self.elements) + ")"

    def size(self):
        total = 1
        for d in self.elements:
            k = d.size()
            if k is None:
                return None
            total *= k
        return total

    def enumerate(self):
        for t in itertools.product(*(list(d.enumerate()) for d in self.elements)):
            yield list(t)


@attrs.frozen
class AssignDomain(Domain):
    """Assignments to named variables, written `x = 3; ys = [1, 2]`; the box sees a map of those assigned."""

    fields: tuple  # ((name, Domain), ...)
    kind = "assign"

    def check(self, v):
        if type(v) is not dict:
            return f"expected assignments such as {self.fields[0][0]} = ..., got {_kind(v)}"
        if not v:
            return "assign at least one variable"
        names = dict(self.fields)
        for k, x in v.items():
            if k not in names:
                return f"{k!r} is not a variable here (variables: {', '.join(names)})"
            why = names[k].check(x)
            if why:
                return f"{k}: {why}"
        return None

    def coerce(self, v):
        names = dict(self.fields)
        return {k: names[k].coerce(x) for k, x in v.items()}

    def read(self, text, name):
        out: dict = {}
        for k, x in parse_assignments(text):
            if k in out:
                raise InputError(f"{k} is assigned twice")
            out[k] = x
        return self.accept(out, name)

    def write(self, v, alone=True):
        names = dict(self.fields)
        return "; ".join(f"{k} = {names[k].write(x, False)}" for k, x in v.items())

    def draw(self, rng):
        return {k: d.draw(rng) for k, d in self.fields}

    def describe(self):
        parts = ", ".join(f"{k} ({d.describe()})" for k, d in self.fields)
        return f"assignments `{self.fields[0][0]} = ...; ...` to any of: {parts}"


# The three readings of the published Oracle code boxes' `platform` (lemonsis/Oracle_Benchmark,
# platforms/code/<level>/<box>_final.py, function `platform`; restated, never copied): condition 1, the empty
# message (`blank`); condition 2, assignments (`pyassign`); condition 3, any other message is a checkpoint
# query (`pycheckpoint`). Each form refuses the others' messages, so `either(...)` of them reads as the
# published conditions do in whichever order they are written. The boxes differ in which messages condition 2
# takes and how it splits them (MODE) and in the checkpoint pattern (MATCH):
#   "or"    ';' or '=' in the message, split at ';'       (easy/exgcd_final.py)
#   "and"   '=' and ';' in the message, split at ';'      (easy/algebraic_operations, highprecision_add/_divide, kmp)
#   "eq"    '=' in the message, split at ';'              (easy/bubble_sort, factorial_recursion, fib_recursion,
#                                                          most_frequent_char; hard/arithmetic_slices)
#   "whole" '=' in the message, the whole message one assignment (easy/quicksort_recursion; hard/heap_sort,
#                                                          mergesort_recursion, sieve_of_eratosthenes)
#   "full"  the whole message `name = value` pieces joined by ';' (no trailing ';'), split at ';'
#                                                         (easy/coins_for_fowls, hard/complex_algebraic_operations)
#   "named" a message opening `name =` (re.match(r'^\s*[\w_]+\s*=')), split at ';'; a string value loses one
#           pair of matching quotes only                   (hard/manacher)
#   "prefix"  re.match(r'\(\s*(\d+)\s*,\s*(\d+)\s*\)', message)   (exgcd and the others of its condition 3)
#   "tight"   re.match(r'\((\d+),\s*(\d+)\)', message.strip())  (highprecision_divide, kmp, quicksort, ...)
#   "full"    the whole message `(\d+, \d+)` with any \s around the numbers (coins_for_fowls)
#   "literal" as "full", then Python reads the pair as a tuple literal (complex_algebraic_operations evals it):
#             ASCII digits without leading zeros, only Python's own whitespace between them
ASSIGN_MODES = ("or", "and", "eq", "whole", "full", "named")
_NAMED_ASSIGNMENT = re.compile(r"\s*\w+\s*=")
_FULL_ASSIGNMENTS = re.compile(r"(\w+\s*=\s*[^;]+;\s*)*(\w+\s*=\s*[^;]+)")
_PY_SPACE = "[ \t\f\n\r]*"
CHECKPOINT_MATCHES = {"prefix": re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)"), "tight": re.compile(r"\((\d+),\s*(\d+)\)"),
                      "full": re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)\Z"),
                      "literal": re.compile(rf"\({_PY_SPACE}(0+|[1-9][0-9]*){_PY_SPACE},{_PY_SPACE}(0+|[1-9][0-9]*){_PY_SPACE}\)\Z")}


def assignment_message(text: str, mode: str) -> bool:
    """Whether the published condition 2 of a box of this MODE takes the message as assignments."""
    if mode == "or":
        return ";" in text or "=" in text
    if mode == "and":
        return "=" in text and ";" in text
    if mode == "full":
        return _FULL_ASSIGNMENTS.fullmatch(text) is not None
    if mode == "named":
        return _NAMED_ASSIGNMENT.match(text) is not None
    return "=" in text


@attrs.frozen
class BlankDomain(Domain):
    """`blank`: only the empty message, read as none (the published code boxes answer it with their inputs and
    checkpoint count: `platform` condition 1, `player_output == ''`)."""

    kind = "blank"

    def check(self, v):
        return None if v is None else f"expected the empty message, got {_kind(v)}"

    def read(self, text, name):
        if text != "":
            raise InputError(f"{name}: expected the empty message")
        return None

    def write(self, v, alone=True):
        return ""

    def draw(self, rng):
        return None

    def describe(self):
        return "the empty message"

    def size(self):
        return 1

    def enumerate(self):
        yield None


@attrs.frozen
class PyAssignDomain(AssignDomain):
    """`pyassign({...}, MODE)`: assignments read as the published code boxes' `platform` (condition 2) reads them:
    only a message the box's MODE takes (default "or": one holding ';' or '='); split at ';' (mode "whole": the
    message is one piece), blank pieces skipped, each piece split at its first '=', the name
    stripped and one of the fields, an int field's value read by Python's int() (so Unicode digits, `1_0`, `+5`,
    surrounding whitespace; not `5.0`, `1e1`, `(5)`), a string field's value with surrounding quotes stripped; a
    later assignment of the same name wins, and a message of blank pieces (`;`) assigns nothing. A list value
    is read as the published `eval` reads a literal, by Python's parser, never run (literals.python_literal:
    `[1_0, 0x10]`, a comment; not `[010]`, `[1,\u00a02]`); a float stays a float, so an int list refuses
    `[1.0]`. Deliberate: an expression that is not a literal (`[--3]`, `list(range(3))`) is refused; a message
    refused part-way assigns nothing (the published box keeps the pieces before the bad one); values stay within
    the fields' domains (a tuple is not a list). `mode` is the box's condition 2 (ASSIGN_MODES above)."""

    mode: str = "or"

    def check(self, v):
        if v == {} and self.mode == "or":
            return None  # `;` alone: the published box answers `Set {...}.` and changes nothing (no other mode reads it)
        return super().check(v)

    def read(self, text, name):
        if not assignment_message(text, self.mode):
            need = "'=' and ';'" if self.mode == "and" else "'='"
            raise InputError(f"{name}: an assignment holds {need} (as in {self.fields[0][0]} = ...;)")
        fields = dict(self.fields)
        out: dict = {}
        for piece in [text] if self.mode == "whole" else text.split(";"):
            if not piece.strip():
                continue
            if "=" not in piece:
                raise InputError(f"cannot read the assignment {piece.strip()[:40]!r}: expected name = value")
            key, raw = piece.split("=", 1)
            key, raw = key.strip(), raw.strip()
            if key not in fields:
                raise InputError(f"{key[:40]!r} is not a variable here (variables: {', '.join(fields)})")
            out[key] = _py_value(fields[key], raw, key, self.mode)
        return self.accept(out, name)

    def write(self, v, alone=True):
        if not v:
            return ";"
        names = dict(self.fields)
        # a string goes between quotes as it is, no escapes: the published boxes strip the quotes, nothing more
        text = "; ".join(f"{k} = '{x}'" if names[k].str_like and type(x) is str else f"{k} = {names[k].write(x, False)}"
                         for k, x in v.items())
        # a box of mode "and" takes one assignment only with a ';' (the published condition 2 needs both)
        return text + ";" if self.mode == "and" and ";" not in text else text


def _py_value(d: Domain, raw: str, key: str, mode: str):
    """One assigned value as the published `platform` converts it by the parameter's type annotation."""
    if isinstance(d, IntDomain):
        try:
            return int(raw)  # int() of the text: never code, only digits, sign, underscores, whitespace
        except ValueError:
            raise InputError(f"{key}: cannot read {raw[:40]!r} as an integer") from None
    if d.str_like and mode == "named":  # one pair of matching quotes (hard/manacher_final.py `platform`)
        return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'" else raw
    if d.str_like:
        return raw.strip("\"'")
    # any other annotation: the published box evaluates the value as Python there (a `list[int]` annotation too: it falls to the `else` branch),
    # the literal read by Python's parser here, never run (literals.python_literal)
    try:
        value = python_literal(raw)
    except InputError as e:
        raise InputError(f"{key}: {e}") from None
    return _as_published(d, value, key)


def _as_published(d: Domain, v, key: str):
    """v, refused where the domain would coerce what the published box keeps as it is: an int input's float
    (`[1.0, 2]`, `[1e3]`: our int domain reads 1.0 as 1; the published box holds and prints the float)."""
    if isinstance(d, IntDomain) and type(v) is float:
        raise InputError(f"{key}: expected an integer, got the float {v!r}")
    if isinstance(d, ListDomain) and type(v) is list:
        for i, x in enumerate(v):
            _as_published(d.element, x, f"{key} element {i}")
    return v


@attrs.frozen
class PyCheckpointDomain(TupleDomain):
    """`pycheckpoint(D1, D2)`: a checkpoint query `(idx, iter)` read as the published code boxes' `platform`
    (condition 3) reads it: only a message the box's condition 2 (`mode`, ASSIGN_MODES) does not take, matched
    by `re.match` of the box's pattern (`match`, CHECKPOINT_MATCHES: a prefix, text after the `)` ignored;
    Unicode digits and spaces; no sign), each number read by int(); the box sees [idx, iter]."""

    match: str = "prefix"
    mode: str = "or"

    def read(self, text, name):
        m = None if assignment_message(text, self.mode) else CHECKPOINT_MATCHES[self.match].match(text.strip())
        if m is None:
            raise InputError(f"{name}: expected a checkpoint query (idx, iter) such as (1, 2)")
        return self.accept([int(m.group(1)), int(m.group(2))], name)


@attrs.frozen
class EitherDomain(Domain):
    """One of several forms of input (the first form that reads the text wins)."""

    options: tuple  # (Domain, ...)
    kind = "either"

    def _form(self, v):
        return next((d for d in self.options if d.check(v) is None), None)

    def check(self, v):
        if self._form(v) is not None:
            return None
        return "it is none of the input's forms (" + "; ".join(d.describe() for d in self.options) + ")"

    def coerce(self, v):
        d = self._form(v)
        return v if d is None else d.coerce(v)

    def read(self, text, name):
        reasons = []
        for d in self.options:
            try:
                return d.read(text, name)
            except InputError as e:
                why = str(e)
                reasons.append(f"as {d.describe()}: {why[len(name) + 2:] if why.startswith(name + ': ') else why}")
        raise InputError(f"{name}: the input is none of its forms: " + "; ".join(reasons))

    def write(self, v, alone=True):
        d = self._form(v)
        return literal(v) if d is None else d.write(v, alone)

    def draw(self, rng):
        return rng.choice(self.options).draw(rng)

    def uniform(self, rng):
        sizes = [d.size() for d in self.options]
        if None in sizes or sum(sizes) == 0:
            return rng.choice(self.options).uniform(rng)
        # sizes can be huge ints (a line(1, 200) member has about 95^200 values): weigh in integers, never floats
        pick = rng.randrange(sum(sizes))
        for d, n in zip(self.options, sizes):
            if pick < n:
                break
            pick -= n
        return d.uniform(rng)

    def describe(self):
        return "either " + ", or ".join(d.describe() for d in self.options)

    def size(self):
        sizes = [d.size() for d in self.options]
        return None if None in sizes else sum(sizes)

    def enumerate(self):
        for d in self.options:
            yield from d.enumerate()


def _length(rng: random.Random, k: int, lo: int, hi: int) -> int:
    """A length in lo..hi drawn in proportion to how many sequences of k symbols have it."""
    if k <= 1:
        return rng.randint(lo, hi)
    # k^n grows fast: weigh lengths relative to the longest, so huge counts never become floats
    weights = [float(k) ** (n - hi) if hi - n < 300 else 0.0 for n in range(lo, hi + 1)]
    return rng.choices(range(lo, hi + 1), weights=weights)[0]


def _kind(v) -> str:
    return "a " + type_name(v) if v is not None else "nothing"


def _num(x) -> str:
    # A whole float below 1e16 reads best as an integer (10.0 as 10); past it int() would print the float's
    # binary expansion (1e30 as 1000000000000000019884624838656), so it is written as Python writes it.
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else str(x)


DOMAIN_NAMES = ("int", "float", "pyfloat", "bool", "bits", "str", "text", "line", "message", "list", "tuple", "choice",
                "either", "assign", "pyassign", "pycheckpoint", "blank")


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
    elif name == "pyfloat":
        arity(2)
        d = PyFloatDomain(float(const(0, float)), float(const(1, float)))
    elif name == "bool":
        arity(0)
        d = BoolDomain()
    elif name == "blank":
        arity(0)
        d = BlankDomain()
    elif name == "bits":
        arity(1)
        n = const(0, int)
        d = StrDomain("01", n, n, "bits")
    elif name == "line":
        arity(0, 2)
        lo, hi = (1, 200) if not args else (const(0, int), const(1, int))
        d = StrDomain(PRINTABLE, lo, hi, "line")
    elif name == "message":
        arity(0, 2)
        lo, hi = (1, MAX_INPUT_CHARS) if not args else (const(0, int), const(1, int))
        d = StrDomain(MESSAGE_DRAWS, lo, hi, "message")
    elif name in ("tuple", "either"):
        if not args:
            raise SpecError(e.span, f"{name}(...) needs at least one domain", _DOMAIN_HINT)
        parts = tuple(domain_of(a, constant) for a in args)
        d = TupleDomain(parts) if name == "tuple" else EitherDomain(parts)
    elif name == "pycheckpoint":
        arity(2, 4)
        parts = tuple(domain_of(a, constant) for a in args[:2])
        if not all(isinstance(p, IntDomain) for p in parts):
            raise SpecError(e.span, "pycheckpoint(...) takes two integer domains, as in pycheckpoint(int(0, 20), "
                            "int(1, 100000))", "")
        match, mode = (const(2), const(3)) if len(args) == 4 else ("prefix", "or")
        if match not in CHECKPOINT_MATCHES or mode not in ASSIGN_MODES:
            raise SpecError(e.span, f"pycheckpoint(D1, D2, MATCH, MODE): MATCH is one of {', '.join(CHECKPOINT_MATCHES)}"
                            f", MODE one of {', '.join(ASSIGN_MODES)}", "")
        d = PyCheckpointDomain(parts, match, mode)
    elif name in ("assign", "pyassign"):
        mode = "or"
        if name == "pyassign" and len(args) == 2:
            mode = const(1)
            if mode not in ASSIGN_MODES:
                raise SpecError(args[1].span, f"pyassign({{...}}, MODE): MODE is one of {', '.join(ASSIGN_MODES)}", "")
            args = args[:1]
        arity(1)
        if not isinstance(args[0], ast.MapExpr) or not args[0].pairs:
            raise SpecError(args[0].span, "assign(...) takes a map of variable names to domains",
                            'For example: assign({"arr": list(int(-9, 9), 1, 8), "k": int(0, 9)})')
        fields = []
        for k, v in args[0].pairs:
            key = constant(k)
            if type(key) is not str or not key.isidentifier() or any(key == n for n, _ in fields):
                raise SpecError(k.span, "assign(...) names each variable once, as a string such as \"arr\"", "")
            fields.append((key, domain_of(v, constant)))
        d = AssignDomain(tuple(fields)) if name == "assign" else PyAssignDomain(tuple(fields), mode)
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


_DOMAIN_HINT = ("Domains: int(lo, hi), float(lo, hi), pyfloat(lo, hi), bool, bits(n), str(lo, hi), str(ALPHABET, lo, hi), "
                "text(lo, hi), line(lo, hi), message(lo, hi), list(ELEMENT, lo, hi), tuple(D1, D2, ...), choice(v1, v2, ...), "
                "either(D1, D2, ...), assign({\"name\": D, ...}), pyassign({\"name\": D, ...}), pycheckpoint(D1, D2), blank.")


# ---------------------------------------------------------------- reading and writing values


def literal(v) -> str:
    """A value written as a literal (strings quoted): how an input is typed."""
    return show([v])[1:-1]


def write_bare(v, alone: bool) -> str:
    """A string input written bare when it is the box's only input and reads back as itself."""
    if alone and type(v) is str and v and v == v.strip() and v[0] not in "\"'":
        return v
    return literal(v)


def elements_of(values: list):
    """One value as written, or several comma-separated values read as the elements of one list or tuple."""
    return values[0] if len(values) == 1 else values


def _unwrap(text: str) -> str:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == "`":
        t = t.strip("`").strip()
    return t


def parse_input(domains: Sequence[tuple[str, Domain]], text, defaults: Sequence = ()) -> list:
    """The values of one input text, in declaration order; raises InputError with a reason. `defaults`: the
    values of the last len(defaults) inputs, which a query may leave out (from the end)."""
    if not isinstance(text, str):
        raise InputError("the input must be text")
    t = _unwrap(text)
    if len(t) > MAX_INPUT_CHARS:
        raise InputError(f"the input is too long (more than {MAX_INPUT_CHARS} characters)")
    if defaults and not t.strip():  # every input left out: only when each has a default
        if len(defaults) == len(domains):
            return list(defaults)
        raise InputError(f"expected at least {len(domains) - len(defaults)} value(s)")
    if len(domains) == 1:
        name, d = domains[0]
        return [d.read(t, name)]
    values = parse_literals(t)
    fewest = len(domains) - len(defaults)
    if not fewest <= len(values) <= len(domains):
        names = ", ".join(n for n, _ in domains)
        want = str(len(domains)) if not defaults else f"{fewest} to {len(domains)}"
        raise InputError(f"expected {want} value(s) ({names}), got {len(values)}")
    got = [d.accept(v, name) for (name, d), v in zip(domains, values)]
    return got + list(defaults[len(defaults) - (len(domains) - len(values)):])  # the left-out ones


def format_input(domains: Sequence[tuple[str, Domain]], values: Sequence) -> str:
    """How an agent writes these input values (the inverse of parse_input)."""
    alone = len(domains) == 1
    return ", ".join(d.write(v, alone) for (_, d), v in zip(domains, values))


def render(v) -> str:
    """How a box writes an output value."""
    return show(v)
