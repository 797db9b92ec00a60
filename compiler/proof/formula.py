"""First-order formulas: representation, notation, parser and printer.

A formula is a plain tuple, so equality and hashing are structural and cheap:

    ('bot',)                      falsum
    ('atom', 'P', (t, ...))       atom (`P`, `F(a)`, `a = b` is ('atom', '=', (a, b)))
    ('not', A)
    ('and' | 'or' | 'imp' | 'iff', A, B)
    ('all' | 'ex', A)             quantifier; its variable is ('bv', 0) inside A

Terms: ('c', name) constants, ('f', name, (t, ...)) function terms, ('bv', k)
bound variables as de Bruijn indices (k binders out), so alpha-equivalent
formulas are equal tuples. Inside a rule schema (`schema=True`) single
capital letters are formula metavariables, `c`/`d` constant metavariables,
other lowercase names term metavariables, and `A[t/x]` is substitution:

    ('meta', 'A', scope)  ('subst', 'A', term, 'x')  ('tmeta', 't')  ('cmeta', 'c')

(`scope` is the tuple of variables bound around the metavariable; the schema
reader turns it into the de Bruijn index of the metavariable's own variable.)

Names: variables are u..z (optionally followed by digits or primes) and must be
bound by a quantifier; other lowercase names are constants (or function symbols
before `(`); capitalised names are predicates.
"""
from __future__ import annotations

import re

import attrs

BOT = ("bot",)
BINARY = ("and", "or", "imp", "iff")
QUANT = ("all", "ex")
MAX_CHARS = 2000
MAX_NESTING = 60
MAX_TOKENS = 600

VAR_RE = re.compile(r"[u-z][0-9']*\Z")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")
_SPACE_RE = re.compile(r"\s+")


class FormulaError(Exception):
    """A formula (or schema) that cannot be read; `col` is 0-based in its text."""

    def __init__(self, message: str, col: int = 0):
        super().__init__(message)
        self.message = message
        self.col = col


# ---------------------------------------------------------------- notation

# connective -> (printed spelling, accepted aliases)
DEFAULT_SPELLING = {
    "not": ("~", ("~", "¬", "!")),
    "and": ("&", ("&", "∧", "/\\")),
    "or": ("|", ("|", "∨", "\\/")),
    "imp": ("->", ("->", "→", "=>", "⊃")),
    "iff": ("<->", ("<->", "↔", "<=>", "≡")),
    "bot": ("_|_", ("_|_", "⊥", "#")),
    "all": ("forall", ("forall", "∀")),
    "ex": ("exists", ("exists", "∃")),
    "turnstile": ("|-", ("|-", "⊢")),
}


@attrs.frozen
class Notation:
    """How a world spells its connectives: one printed form, many accepted ones."""

    printed: tuple[tuple[str, str], ...]
    symbols: tuple[tuple[str, str], ...]  # (spelling, connective), longest first
    words: tuple[tuple[str, str], ...]  # word spellings (forall, and, ...)

    @classmethod
    def make(cls, overrides: dict[str, str] | None = None) -> "Notation":
        printed = {k: v[0] for k, v in DEFAULT_SPELLING.items()}
        aliases = {k: list(v[1]) for k, v in DEFAULT_SPELLING.items()}
        for key, spelling in (overrides or {}).items():
            if key not in DEFAULT_SPELLING:
                raise KeyError(key)
            spelling = spelling.strip()
            if not spelling or any(ch.isspace() for ch in spelling):
                raise ValueError(f"the spelling of {key} must be one word or symbol")
            printed[key] = spelling
            aliases[key].insert(0, spelling)
        symbols, words, seen = [], [], {}
        for key, spellings in aliases.items():
            for s in spellings:
                if s in seen and seen[s] != key:
                    raise ValueError(f"{s!r} spells both {seen[s]} and {key}")
                seen[s] = key
                (words if _NAME_RE.fullmatch(s) else symbols).append((s, key))
        symbols.sort(key=lambda p: -len(p[0]))
        return cls(tuple(printed.items()), tuple(dict.fromkeys(symbols)), tuple(dict.fromkeys(words)))

    def word(self, key: str) -> str:
        return dict(self.printed)[key]


DEFAULT = Notation.make()


# ---------------------------------------------------------------- tokens


def tokenize(text: str, notation: Notation = DEFAULT) -> list[tuple[str, str, int]]:
    """[(kind, value, col)]: kind is a connective key, 'name', 'eq' or a punctuation mark."""
    if len(text) > MAX_CHARS:
        raise FormulaError(f"the formula is too long ({len(text)} characters; the limit is {MAX_CHARS})", 0)
    words = dict(notation.words)
    out: list[tuple[str, str, int]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i = _SPACE_RE.match(text, i).end()
            continue
        for sym, key in notation.symbols:
            if text.startswith(sym, i):
                out.append((key, sym, i))
                i += len(sym)
                break
        else:
            m = _NAME_RE.match(text, i)
            if m:
                word = m.group()
                out.append((words.get(word, "name"), word, i))
                i = m.end()
            elif ch in "(),[]/.:=":
                out.append((ch, ch, i))
                i += 1
            elif ch == "≠":
                out.append(("neq", ch, i))
                i += 1
            else:
                raise FormulaError(f"unexpected character {ch!r}", i)
        if len(out) > MAX_TOKENS:
            raise FormulaError(f"the formula is too large (more than {MAX_TOKENS} symbols)", i)
    return out


# ---------------------------------------------------------------- parser

_PREC = {"iff": 1, "imp": 2, "or": 3, "and": 4}
_RIGHT = {"iff": True, "imp": True, "or": False, "and": False}


class _Parser:
    def __init__(self, text: str, notation: Notation, schema: bool):
        self.text = text
        self.toks = tokenize(text, notation)
        self.i = 0
        self.schema = schema
        self.scope: list[str] = []  # bound variable names, innermost last
        self.nesting = 0

    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("end", "", len(self.text))

    def take(self, kind: str, what: str):
        tok = self.peek()
        if tok[0] != kind:
            raise self.error(f"expected {what}", tok)
        self.i += 1
        return tok

    def error(self, message: str, tok) -> FormulaError:
        if tok[0] == "end":
            return FormulaError(f"{message}, but the formula ends", len(self.text))
        return FormulaError(f"{message}, found {tok[1]!r}", tok[2])

    def parse(self):
        if not self.toks:
            raise FormulaError("the formula is empty", 0)
        f = self.binary(1)
        tok = self.peek()
        if tok[0] != "end":
            raise FormulaError(f"unexpected {tok[1]!r} after a complete formula", tok[2])
        return f

    def binary(self, level: int):
        left = self.unary()
        while True:
            kind = self.peek()[0]
            prec = _PREC.get(kind)
            if prec is None or prec < level:
                return left
            self.i += 1
            right = self.binary(prec if _RIGHT[kind] else prec + 1)
            left = (kind, left, right)

    def enter(self, tok):
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise FormulaError(f"the formula nests too deeply (more than {MAX_NESTING} levels)", tok[2])

    def unary(self):
        tok = self.peek()
        kind = tok[0]
        if kind == "not":
            self.i += 1
            self.enter(tok)
            body = self.unary()
            self.nesting -= 1
            return ("not", body)
        if kind in QUANT:
            self.i += 1
            var = self.peek()
            if var[0] != "name" or not VAR_RE.match(var[1]):
                raise self.error("expected a variable (u, v, w, x, y or z) after the quantifier", var)
            self.i += 1
            if self.peek()[0] in (".", ":"):
                self.i += 1
            self.enter(tok)
            self.scope.append(var[1])
            body = self.unary()
            self.scope.pop()
            self.nesting -= 1
            return (kind, body)
        if kind == "(":
            self.i += 1
            self.enter(tok)
            inner = self.binary(1)
            self.nesting -= 1
            self.take(")", "')'")
            return inner
        if kind == "bot":
            self.i += 1
            return BOT
        if kind == "name":
            return self.atom()
        raise self.error("expected a formula", tok)

    def atom(self):
        tok = self.peek()
        name = tok[1]
        if name[0].isupper():
            self.i += 1
            if self.schema and re.fullmatch(r"[A-Z][0-9]*", name):
                if self.peek()[0] == "[":
                    self.i += 1
                    term = self.term()
                    self.take("/", "'/' in A[t/x]")
                    var = self.take("name", "a variable after '/'")
                    if not VAR_RE.match(var[1]):
                        raise FormulaError(f"{var[1]!r} is not a variable (u..z)", var[2])
                    self.take("]", "']'")
                    return ("subst", name, term, var[1])
                return ("meta", name, tuple(self.scope))
            args: tuple = ()
            if self.peek()[0] == "(":
                self.i += 1
                args = self.terms()
                self.take(")", "')' closing the arguments")
            return ("atom", name, args)
        # a lowercase name starts an equation t = s
        left = self.term()
        op = self.peek()
        if op[0] == "=":
            self.i += 1
            return ("atom", "=", (left, self.term()))
        if op[0] == "neq":
            self.i += 1
            return ("not", ("atom", "=", (left, self.term())))
        raise FormulaError(f"{name!r} is a term, not a formula (predicates start with a capital letter; "
                           f"an identity is written t = s)", tok[2])

    def terms(self) -> tuple:
        out = [self.term()]
        while self.peek()[0] == ",":
            self.i += 1
            out.append(self.term())
        return tuple(out)

    def term(self):
        tok = self.peek()
        if tok[0] != "name" or not (tok[1][0].islower() or tok[1][0] == "_"):
            raise self.error("expected a term (a lowercase name)", tok)
        self.i += 1
        name = tok[1]
        if self.peek()[0] == "(":
            self.i += 1
            args = self.terms()
            self.take(")", "')' closing the arguments")
            return ("f", name, args)
        if VAR_RE.match(name):
            if name in self.scope:
                return ("bv", len(self.scope) - 1 - _rindex(self.scope, name))
            if self.schema:
                return ("var", name)  # resolved by the schema reader (the x of A[t/x])
            raise FormulaError(f"the variable {name!r} is not bound by any quantifier (variables are "
                               f"u..z; write parentheses around the quantifier's scope, as in "
                               f"forall x (F(x) -> G(x)))", tok[2])
        if self.schema:
            return ("cmeta", name) if re.fullmatch(r"[cd][0-9]*", name) else ("tmeta", name)
        return ("c", name)


def _rindex(xs: list, x) -> int:
    return len(xs) - 1 - xs[::-1].index(x)


def parse(text: str, notation: Notation = DEFAULT):
    """Read one formula; raises FormulaError with a column on bad input."""
    return _Parser(text, notation, False).parse()


def parse_pattern(text: str, notation: Notation = DEFAULT):
    """Read one schema formula (metavariables allowed)."""
    return _Parser(text, notation, True).parse()


# ---------------------------------------------------------------- printer

_VARS = ("x", "y", "z", "w", "v", "u")


def _var(depth: int) -> str:
    return _VARS[depth] if depth < len(_VARS) else f"x{depth}"


def show(f, notation: Notation = DEFAULT, names=None) -> str:
    """The formula in the world's printed spelling, with the fewest parentheses that read clearly.

    `names(kind, name)` respells a schema's metavariables ("meta", "tmeta", "cmeta") and the
    variable of a substitution ("subvar"); without it they print as written.
    """
    w = dict(notation.printed)
    return _show(f, w, 0, names)


def _show_term(t, depth: int, names) -> str:
    tag = t[0]
    if tag == "c":
        return t[1]
    if tag == "bv":
        return _var(depth - 1 - t[1])
    if tag == "f":
        return f"{t[1]}({', '.join(_show_term(a, depth, names) for a in t[2])})"
    if tag in ("tmeta", "cmeta"):
        return t[1] if names is None else names(tag, t[1])
    if tag == "var":
        return t[1]
    if tag == "hole":
        return "x"
    return "?"


def _show(f, w, depth: int, names) -> str:
    tag = f[0]
    if tag == "atom":
        if f[1] == "=":
            return f"{_show_term(f[2][0], depth, names)} = {_show_term(f[2][1], depth, names)}"
        if not f[2]:
            return f[1]
        return f"{f[1]}({', '.join(_show_term(t, depth, names) for t in f[2])})"
    if tag == "bot":
        return w["bot"]
    if tag == "meta":
        return f[1] if names is None else names("meta", f[1])
    if tag == "subst":
        meta, var = (f[1], f[3]) if names is None else (names("meta", f[1]), names("subvar", f[3]))
        return f"{meta}[{_show_term(f[2], depth, names)}/{var}]"
    if tag == "not":
        return w["not"] + _wrap_unary(f[1], w, depth, names)
    if tag in QUANT:
        sep = "" if not _NAME_RE.fullmatch(w[tag]) else " "
        return f"{w[tag]}{sep}{_var(depth)} " + _wrap_unary(f[1], w, depth + 1, names)
    # binary
    left, right = f[1], f[2]
    ls = _show(left, w, depth, names)
    rs = _show(right, w, depth, names)
    if _needs_parens(left, tag, "left"):
        ls = f"({ls})"
    if _needs_parens(right, tag, "right"):
        rs = f"({rs})"
    return f"{ls} {w[tag]} {rs}"


def _wrap_unary(f, w, depth: int, names) -> str:
    s = _show(f, w, depth, names)
    if f[0] in BINARY or (f[0] == "atom" and f[1] == "="):
        return f"({s})"
    return s


def _needs_parens(child, parent: str, side: str) -> bool:
    c = child[0]
    if c not in BINARY:
        return False
    if c == parent:
        return parent in ("imp", "iff") or side == "right"
    if parent in ("imp", "iff") and c in ("and", "or"):
        return False
    return True


# ---------------------------------------------------------------- operations


def size(f) -> int:
    """Symbols in a formula: atoms and falsum 1, each connective or quantifier 1."""
    tag = f[0]
    if tag in BINARY:
        return 1 + size(f[1]) + size(f[2])
    if tag == "not" or tag in QUANT:
        return 1 + size(f[1])
    return 1


def term_has(t, target) -> bool:
    if t == target:
        return True
    return t[0] == "f" and any(term_has(a, target) for a in t[2])


def map_terms(f, fn, depth: int = 0):
    """f with each atom argument t replaced by fn(t, depth); depth counts the quantifiers crossed."""
    tag = f[0]
    if tag == "atom":
        return ("atom", f[1], tuple(fn(t, depth) for t in f[2]))
    if tag == "not":
        return ("not", map_terms(f[1], fn, depth))
    if tag in BINARY:
        return (tag, map_terms(f[1], fn, depth), map_terms(f[2], fn, depth))
    if tag in QUANT:
        return (tag, map_terms(f[1], fn, depth + 1))
    return f


def atoms(f):
    """The atoms of f, left to right."""
    tag = f[0]
    if tag == "atom":
        yield f
    elif tag == "not" or tag in QUANT:
        yield from atoms(f[1])
    elif tag in BINARY:
        yield from atoms(f[1])
        yield from atoms(f[2])


def replace_term(f, old, new, depth: int = 0):
    """f with every occurrence of the closed term `old` replaced; bv(depth)-aware when `new`
    is a bound-variable marker (used to abstract a constant into a quantifier body)."""
    return map_terms(f, lambda t, d: _replace_in_term(t, old, new, d), depth)


def _replace_in_term(t, old, new, depth: int):
    if t == old:
        return ("bv", depth) if new == ("hole-bv",) else new
    if t[0] == "f":
        return ("f", t[1], tuple(_replace_in_term(a, old, new, depth) for a in t[2]))
    return t


def instantiate(body, term):
    """A quantifier body with its variable replaced by a closed term: A[t/x]."""
    return _inst(body, term, 0)


def _inst(f, term, depth: int):
    return map_terms(f, lambda t, d: _inst_term(t, term, d), depth)


def _inst_term(t, term, depth: int):
    tag = t[0]
    if tag == "bv":
        return term if t[1] == depth else t
    if tag == "hole":
        return term
    if tag == "f":
        return ("f", t[1], tuple(_inst_term(a, term, depth) for a in t[2]))
    return t


def abstract(f, term):
    """The body B such that instantiate(B, term) == f, abstracting every occurrence of term."""
    return replace_term(f, term, ("hole-bv",))


def fill(f, term):
    """Replace the ('hole',) markers of a metavariable binding by a closed term."""
    return map_terms(f, lambda t, d: _fill_term(t, term))


def _fill_term(t, term):
    if t[0] == "hole":
        return term
    if t[0] == "f":
        return ("f", t[1], tuple(_fill_term(a, term) for a in t[2]))
    return t


def constants(f, out: set | None = None) -> set:
    """Names of the constants (and function symbols' constant arguments) occurring in f."""
    out = set() if out is None else out
    out.update(t[1] for t in _closed_subterms(f) if t[0] == "c")
    return out


def terms_of(f, out: set | None = None) -> set:
    """Closed terms occurring in f (constants and ground function terms)."""
    out = set() if out is None else out
    out.update(_closed_subterms(f))
    return out


def _closed_subterms(f) -> set:
    found: set = set()
    for atom in atoms(f):
        for t in atom[2]:
            _closed_terms(t, found)
    return found


def _closed_terms(t, out: set) -> bool:
    if t[0] == "c":
        out.add(t)
        return True
    if t[0] == "f":
        closed = all([_closed_terms(a, out) for a in t[2]])
        if closed:
            out.add(t)
        return closed
    return False


def predicates(f, out: set | None = None) -> set:
    out = set() if out is None else out
    out.update((atom[1], len(atom[2])) for atom in atoms(f))
    return out


def subformulas(f, out: list | None = None) -> list:
    """f and its subformulas (quantifier bodies are not closed, so they are not included)."""
    out = [] if out is None else out
    out.append(f)
    tag = f[0]
    if tag == "not":
        subformulas(f[1], out)
    elif tag in BINARY:
        subformulas(f[1], out)
        subformulas(f[2], out)
    return out


def is_closed(f, depth: int = 0) -> bool:
    """No bound variable escapes f (every ('bv', k) is bound inside f)."""
    tag = f[0]
    if tag == "atom":
        return all(_term_closed(t, depth) for t in f[2])
    if tag == "not":
        return is_closed(f[1], depth)
    if tag in BINARY:
        return is_closed(f[1], depth) and is_closed(f[2], depth)
    if tag in QUANT:
        return is_closed(f[1], depth + 1)
    return True


def _term_closed(t, depth: int) -> bool:
    if t[0] == "bv":
        return t[1] < depth
    if t[0] == "f":
        return all(_term_closed(a, depth) for a in t[2])
    return t[0] != "hole"
