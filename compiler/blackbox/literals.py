"""Reading values as agents write them: literals only, never code.

An agent's input or answer is read by this small hand-written reader, not by
Python and not by the spec's expression parser (which has no tuples, no
exponents and no leading-dot numbers). It accepts

    numbers      42  -7  +3  2.5  .5  -2.  1e3  6.02E-23
    strings      "a \\"quoted\\" word"   'single quoted'
    words        true false none (also True False None null)
    lists        [1, 2, 3]      tuples (0, 1) and (1,) -- read as lists; (1) is 1
    maps         {"a": 1, 2: [3]}
    assignments  arr = [3, 1, 2]; k = 4      (parse_assignments only)

and nothing else: a name, an operator or a call is an InputError that says so.
Sizes are bounded (characters, nesting, digits), so no input can run away.

`python_literal` reads a value as Python writes it instead (Python's own parser, the tree never run), for the
published Oracle code boxes, which `eval` an assigned list (docs/oracle-published-code.md).
"""
from __future__ import annotations

import ast
import math
import re
import warnings

from worldspec.compiler.api import InputError
from worldspec.values import MAX_INT_BITS

MAX_INPUT_CHARS = 2000
MAX_NESTING = 40
WORDS = {"true": True, "false": False, "none": None, "True": True, "False": False, "None": None, "null": None}
LITERALS = "numbers, \"strings\", true/false/none, [lists], (tuples) and {maps}"

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[\[\](){},:;=+-])
""", re.VERBOSE)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, column) of each token; an unknown character is an InputError."""
    out, i = [], 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            raise InputError(f"cannot read the input at column {i + 1}: unexpected {text[i]!r}; "
                             f"only literal values are accepted ({LITERALS})")
        if m.lastgroup != "space":
            out.append((m.lastgroup, m.group(), i + 1))
        i = m.end()
    out.append(("end", "", len(text) + 1))
    return out


def _unquote(s: str) -> str:
    body, out, i = s[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            out.append(_ESCAPES.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _number(text: str, negative: bool):
    if re.fullmatch(r"[0-9]+", text):
        if len(text) > 80:
            raise InputError(f"the number {text[:12]}... is too large")
        v = int(text)
        if v >> MAX_INT_BITS:
            raise InputError(f"the number {text[:12]}... is too large")
        return -v if negative else v
    v = float(text)
    if math.isinf(v):
        raise InputError(f"the number {text} is too large")
    return -v if negative else v


class _Reader:
    def __init__(self, text: str, limit: int = MAX_INPUT_CHARS):
        if len(text) > limit:
            raise InputError(f"the input is too long (more than {limit} characters)")
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str, int]:
        t = self.toks[self.i]
        self.i += 1
        return t

    def expect(self, punct: str) -> None:
        kind, text, col = self.take()
        if text != punct or kind != "punct":
            raise self.error(f"expected {punct!r}", (kind, text, col))

    def error(self, what: str, tok=None) -> InputError:
        kind, text, col = tok or self.peek()
        if kind == "name" and text not in WORDS:
            return InputError(f"cannot read the input: {text!r} (column {col}) is a name, and only literal "
                              f"values are accepted ({LITERALS}); names and expressions are not")
        found = "the end of the input" if kind == "end" else repr(text)
        return InputError(f"cannot read the input at column {col}: {what}, found {found}")

    def value(self, depth: int = 0):
        if depth > MAX_NESTING:
            raise InputError("the input nests too deeply")
        kind, text, col = self.take()
        if kind == "number":
            return _number(text, False)
        if kind == "punct" and text in "+-" and self.peek()[0] == "number":
            return _number(self.take()[1], text == "-")
        if kind == "string":
            return _unquote(text)
        if kind == "name" and text in WORDS:
            return WORDS[text]
        if kind == "punct" and text == "[":
            return self.sequence("]", depth)
        if kind == "punct" and text == "(":
            return self.parenthesised(depth)
        if kind == "punct" and text == "{":
            return self.mapping(depth)
        raise self.error("expected a value", (kind, text, col))

    def sequence(self, close: str, depth: int) -> list:
        items = []
        while self.peek()[1] != close or self.peek()[0] != "punct":
            items.append(self.value(depth + 1))
            if self.peek()[1] == ",":
                self.take()
            elif self.peek()[1] != close:
                raise self.error(f"expected ',' or {close!r}")
        self.take()
        return items

    def parenthesised(self, depth: int):
        """(a, b) and (a,) are tuples, read as lists; (a) is a."""
        if self.peek()[1] == ")":
            self.take()
            return []
        first = self.value(depth + 1)
        if self.peek()[1] == ")":
            self.take()
            return first
        self.expect(",")
        return [first] + self.sequence(")", depth)

    def mapping(self, depth: int) -> dict:
        out: dict = {}
        while self.peek()[1] != "}":
            key = self.value(depth + 1)
            if not (type(key) in (int, str, bool) or key is None):
                raise InputError("map keys must be integers, strings or booleans")
            self.expect(":")
            out[key] = self.value(depth + 1)
            if self.peek()[1] == ",":
                self.take()
            elif self.peek()[1] != "}":
                raise self.error("expected ',' or '}'")
        self.take()
        return out

    def at_end(self) -> bool:
        return self.peek()[0] == "end"


def parse_literals(text: str, limit: int = MAX_INPUT_CHARS) -> list:
    """Comma-separated literal values (at least one) from at most `limit` characters; raises InputError
    with the reason."""
    if not isinstance(text, str):
        raise InputError("the input must be text")
    if not text.strip():
        raise InputError("the input is empty")
    r = _Reader(text, limit)
    values = [r.value()]
    while not r.at_end():
        if r.peek()[1] != ",":
            raise r.error("expected ',' between values")
        r.take()
        if r.at_end():
            break  # a trailing comma
        values.append(r.value())
    return values


def parse_assignments(text: str) -> list[tuple[str, object]]:
    """`name = value; name = value` (';' or ',' between them): [(name, value), ...]."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("the input is empty")
    r = _Reader(text)
    out = []
    while True:
        kind, name, col = r.take()
        if kind != "name" or name in WORDS:
            raise InputError(f"cannot read the assignment at column {col}: expected a name, as in x = 3")
        r.expect("=")
        out.append((name, r.value()))
        if r.at_end():
            return out
        if r.peek()[1] not in (";", ","):
            raise r.error("expected ';' between assignments")
        r.take()
        if r.at_end():
            return out


def single_string(text: str, limit: int = MAX_INPUT_CHARS) -> str | None:
    """The string, when the whole text (at most `limit` characters) is one quoted string literal (else None)."""
    t = text.strip()
    if len(t) < 2 or t[0] not in "\"'" or t[-1] != t[0]:
        return None
    try:
        vals = parse_literals(t, limit)
    except InputError:
        return None
    return vals[0] if len(vals) == 1 and type(vals[0]) is str else None


def python_literal(text: str, limit: int = MAX_INPUT_CHARS):
    """The value of a Python literal, read as the published Oracle code boxes read an assigned value (they hand
    it to Python's evaluator: platforms/code/easy/bubble_sort_final.py `platform`, condition 2) without running
    anything: Python's parser
    builds the syntax tree and `ast.literal_eval` takes its literals. So `[1_0, 0x10]`, `[-(1)]`, a comment and a
    backslash line break are read as there, and `[010]`, `[٣]`, `[1,\u00a02]`, `[1];` refused as there. Refused
    here, where eval would compute them: any other expression (`[--3]`, `list(range(3))`, `[9**9**9]`, which would
    not end), a value the language has no type for (a tuple, a set, a complex or bytes value, `...`), an integer
    past the language's width, and an infinite float."""
    if len(text) > limit:
        raise InputError(f"the input is too long (more than {limit} characters)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tokenizer warns of odd forms (`[1if 1 else 2]`) as it reads them
        try:
            tree = ast.parse(text, mode="eval")
        except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
            why = e.msg if isinstance(e, SyntaxError) else "it cannot be parsed"
            raise InputError(f"cannot read {text[:40]!r} as Python reads it: {why}") from None
    try:
        value = ast.literal_eval(tree)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise InputError(f"{text[:40]!r} is an expression, not a literal value: only literal values are read "
                         f"(names, calls and operators are not evaluated)") from None
    return _language_value(value)


def _language_value(v, depth: int = 0):
    """v when each part of it is a value the language has (ints within its width, finite floats, strings,
    bools, none, lists, maps of int, str, bool or none keys), nested no deeper than the literal reader reads;
    an InputError naming the first part that is not."""
    if depth > MAX_NESTING:
        raise InputError("the input nests too deeply")
    if v is None or type(v) in (bool, str):
        return v
    if type(v) is int:
        if (v >> MAX_INT_BITS) not in (0, -1):
            raise InputError(f"an integer is too large (more than {MAX_INT_BITS} bits)")
        return v
    if type(v) is float:
        if not math.isfinite(v):
            raise InputError(f"the number {v} is too large")
        return v
    if type(v) is list:
        return [_language_value(x, depth + 1) for x in v]
    if type(v) is dict:
        if not all(k is None or type(k) in (int, str, bool) for k in v):
            raise InputError("map keys must be integers, strings or booleans")
        return {_language_value(k, depth + 1): _language_value(x, depth + 1) for k, x in v.items()}
    kind = {tuple: "a tuple (write a list, [1, 2])", set: "a set", complex: "a complex number",
            bytes: "a bytes value"}.get(type(v), type(v).__name__)
    raise InputError(f"cannot read {kind}: only numbers, strings, true/false/none, [lists] and {{maps}} are read")
