"""Inference-rule schemas: notation, canonical form and matching.

A schema is written on one line:

    A -> B, A |- B
    [A ... B] |- A -> B ; once
    exists x A, [A[c/x] ... B] |- B ; fresh c
    t = s, A[t/x] |- A[s/x]

Premises left of the turnstile are formula patterns (cited as single lines)
or subproofs `[assumption ... conclusion]` (cited as ranges i-j); after `;`
come side conditions:

    fresh c      c is a constant that occurs in no premise of the proof, no
                 assumption open at the line, no cited line and not in the
                 conclusion (an eigenvariable)
    distinct     the cited lines are pairwise different lines (duplicate-premise guard)
    once         each cited subproof is cited by no other line (use-once guard)
    nontrivial   a cited subproof has a line after its assumption
    ordered      citations follow the schema's order (otherwise any order)

Metavariables: capitals A..Z are formulas (a formula under `forall x` may
mention x; `A[t/x]` is A with t for x), c and d (with digits) constants, other
lowercase names terms.
"""
from __future__ import annotations

import itertools
import re

import attrs

from worldspec.compiler.proof import formula as F
from worldspec.compiler.proof.formula import FormulaError

CONDITIONS = ("fresh", "distinct", "once", "nontrivial", "ordered")
_ELLIPSIS = re.compile(r"\.\.\.|…")


@attrs.frozen
class Schema:
    lines: tuple  # formula patterns cited as lines
    subs: tuple  # (assumption pattern, conclusion pattern) cited as ranges
    conclusion: tuple
    fresh: tuple[str, ...] = ()
    distinct: bool = False
    once: bool = False
    nontrivial: bool = False
    ordered: bool = False
    metas: tuple[tuple[str, str | None], ...] = ()  # formula metavariable -> its variable (or None)

    @property
    def arity(self) -> tuple[int, int]:
        return len(self.lines), len(self.subs)

    def conditions(self) -> list[str]:
        out = [f"fresh {c}" for c in self.fresh]
        out += [c for c in ("distinct", "once", "nontrivial", "ordered") if getattr(self, c)]
        return out

    def show(self, notation: F.Notation = F.DEFAULT) -> str:
        """The schema in the world's notation, as the author's metavariable names."""
        return _render(self.lines, self.subs, self.conclusion, self.conditions(), notation, None)

    def canonical(self) -> str:
        """A normal form: metavariables renamed by first occurrence, conditions sorted, and
        (unless ordered) premises in the order that gives the least text."""
        best = None
        line_orders = [self.lines] if self.ordered else list(itertools.permutations(self.lines))
        sub_orders = [self.subs] if self.ordered else list(itertools.permutations(self.subs))
        for lines in line_orders[:120]:
            for subs in sub_orders[:24]:
                text = _render(lines, subs, self.conclusion, self.conditions(), F.DEFAULT, {})
                if best is None or text < best:
                    best = text
        return best


# ---------------------------------------------------------------- reading


def _split_top(text: str, sep: str) -> list[tuple[str, int]]:
    """Split on `sep` outside brackets/parens; [(piece, offset)]."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            out.append((text[start:i], start))
            start = i + len(sep)
            i = start
            continue
        i += 1
    out.append((text[start:], start))
    return out


def _find_turnstile(text: str, notation: F.Notation) -> tuple[int, int]:
    spellings = [s for s, k in notation.symbols if k == "turnstile"] + ["|-", "⊢"]
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0:
            for s in spellings:
                if text.startswith(s, i):
                    return i, len(s)
    raise FormulaError("a schema needs a turnstile |- between its premises and its conclusion", 0)


def _pattern(text: str, offset: int, notation: F.Notation):
    stripped = text.strip()
    lead = len(text) - len(text.lstrip())
    if not stripped:
        raise FormulaError("an empty premise or conclusion", offset)
    try:
        return F.parse_pattern(stripped, notation)
    except FormulaError as e:
        raise FormulaError(e.message, offset + lead + e.col) from None


def parse_schema(text: str, notation: F.Notation = F.DEFAULT) -> Schema:
    """Read a schema line; FormulaError (with a column) on bad input."""
    body, _, conds = text.partition(";")
    cond_offset = len(body) + 1
    at, width = _find_turnstile(body, notation)
    left, right = body[:at], body[at + width:]
    lines, subs = [], []
    if left.strip():
        for piece, off in _split_top(left, ","):
            s = piece.strip()
            lead = len(piece) - len(piece.lstrip())
            if s.startswith("[") and s.endswith("]"):
                inner = s[1:-1]
                parts = _ELLIPSIS.split(inner)
                if len(parts) != 2:
                    raise FormulaError("a subproof premise is written [assumption ... conclusion]", off + lead)
                m = _ELLIPSIS.search(inner)
                a = _pattern(parts[0], off + lead + 1, notation)
                c = _pattern(parts[1], off + lead + 1 + m.end(), notation)
                subs.append((a, c))
            else:
                lines.append(_pattern(piece, off, notation))
    conclusion = _pattern(right, at + width, notation)
    flags = {"fresh": [], "distinct": False, "once": False, "nontrivial": False, "ordered": False}
    if conds.strip():
        for piece, off in _split_top(conds, ","):
            words = piece.split()
            if not words:
                raise FormulaError("an empty side condition", cond_offset + off)
            if words[0] not in CONDITIONS:
                raise FormulaError(f"unknown side condition {words[0]!r} (known: {', '.join(CONDITIONS)})",
                                   cond_offset + off + piece.index(words[0]))
            if words[0] == "fresh":
                if len(words) != 2 or not re.fullmatch(r"[cd][0-9]*", words[1]):
                    raise FormulaError("write fresh c (a constant metavariable: c, d, c1, ...)", cond_offset + off)
                flags["fresh"].append(words[1])
            elif len(words) != 1:
                raise FormulaError(f"{words[0]} takes no argument", cond_offset + off)
            else:
                flags[words[0]] = True
    metas = _resolve_metas(lines, subs, conclusion)
    convert = lambda p: _convert(p, dict(metas))  # noqa: E731
    schema = Schema(tuple(convert(p) for p in lines), tuple((convert(a), convert(c)) for a, c in subs),
                    convert(conclusion), tuple(flags["fresh"]), flags["distinct"], flags["once"],
                    flags["nontrivial"], flags["ordered"], tuple(sorted(metas.items())))
    _validate(schema)
    return schema


def _occurrences(p, out: list) -> None:
    tag = p[0]
    if tag == "meta":
        out.append(("meta", p[1], p[2]))
    elif tag == "subst":
        out.append(("subst", p[1], p[3]))
    elif tag == "not" or tag in F.QUANT:
        _occurrences(p[1], out)
    elif tag in F.BINARY:
        _occurrences(p[1], out)
        _occurrences(p[2], out)


def all_patterns(lines, subs, conclusion):
    """Every formula pattern of a schema: cited lines, subproof ends, conclusion."""
    yield from lines
    for a, c in subs:
        yield a
        yield c
    yield conclusion


def _resolve_metas(lines, subs, conclusion) -> dict:
    occ: list = []
    for p in all_patterns(lines, subs, conclusion):
        _occurrences(p, occ)
    var: dict[str, str | None] = {}
    names = dict.fromkeys(o[1] for o in occ)
    for name in names:
        substs = {o[2] for o in occ if o[1] == name and o[0] == "subst"}
        scopes = [o[2] for o in occ if o[1] == name and o[0] == "meta"]
        if len(substs) > 1:
            raise FormulaError(f"metavariable {name} is substituted for two variables ({', '.join(sorted(substs))})")
        if substs:
            v = substs.pop()
            for sc in scopes:
                if v not in sc:
                    raise FormulaError(f"{name} depends on {v}; outside a quantifier on {v} write {name}[t/{v}]")
            var[name] = v
        elif scopes and all(scopes):
            inner = {sc[-1] for sc in scopes}
            if len(inner) > 1:
                raise FormulaError(f"metavariable {name} sits under different variables ({', '.join(sorted(inner))})")
            var[name] = inner.pop()
        else:
            var[name] = None
    return var


def _convert(p, metas: dict):
    tag = p[0]
    if tag == "meta":
        v = metas[p[1]]
        scope = p[2]
        k = None if v is None else len(scope) - 1 - scope[::-1].index(v)
        return ("meta", p[1], k)
    if tag == "not" or tag in F.QUANT:
        return (tag, _convert(p[1], metas))
    if tag in F.BINARY:
        return (tag, _convert(p[1], metas), _convert(p[2], metas))
    if tag == "atom":
        for t in p[2]:
            _check_term(t)
    if tag == "subst":
        _check_term(p[2])
    return p


def _check_term(t) -> None:
    if t[0] == "var":
        raise FormulaError(f"the variable {t[1]} is not bound in the schema")
    if t[0] == "f":
        for a in t[2]:
            _check_term(a)


def _validate(s: Schema) -> None:
    occ: list = []
    for p in all_patterns(s.lines, s.subs, s.conclusion):
        _occurrences(p, occ)
    for name in dict.fromkeys(o[1] for o in occ):
        plain = [o for o in occ if o[1] == name and o[0] == "meta"]
        substs = [o for o in occ if o[1] == name and o[0] == "subst"]
        if substs and not plain and len(substs) < 2:
            raise FormulaError(f"{name} appears only as {name}[t/x]; the schema must fix {name} elsewhere, "
                               f"e.g. forall x {name}")
    cm = set()
    for p in all_patterns(s.lines, s.subs, s.conclusion):
        term_metas(p, cm, "cmeta")
    for c in s.fresh:
        if c not in cm:
            raise FormulaError(f"fresh {c}: {c} does not occur in the schema")


def pattern_terms(p):
    """Every term a pattern mentions (atoms' arguments, substituted terms), function arguments included."""
    tag = p[0]
    if tag == "atom":
        for t in p[2]:
            yield from _subterms(t)
    elif tag == "subst":
        yield from _subterms(p[2])
    elif tag == "not" or tag in F.QUANT:
        yield from pattern_terms(p[1])
    elif tag in F.BINARY:
        yield from pattern_terms(p[1])
        yield from pattern_terms(p[2])


def _subterms(t):
    yield t
    if t[0] == "f":
        for a in t[2]:
            yield from _subterms(a)


def term_metas(p, out: set, kind: str) -> None:
    """Add the names of the term ("tmeta") or constant ("cmeta") metavariables in pattern p to out."""
    out.update(t[1] for t in pattern_terms(p) if t[0] == kind)


def constant_metas(pattern) -> set:
    """The constant metavariables (c, d) a pattern mentions."""
    out: set = set()
    term_metas(pattern, out, "cmeta")
    return out


# ---------------------------------------------------------------- rendering


def _render(lines, subs, conclusion, conditions, notation, rename: dict | None) -> str:
    w = dict(notation.printed)

    def name(kind: str, n: str) -> str:
        if kind == "subvar":
            return "x"  # the variable of A[t/x] is a placeholder
        if rename is None:
            return n
        key = (kind, n)
        if key not in rename:
            pools = {"meta": "ABCDEFGHIJKLMN", "tmeta": "tsrqpo", "cmeta": "cd"}
            used = sum(1 for k in rename if k[0] == kind)
            pool = pools[kind]
            rename[key] = pool[used] if used < len(pool) else f"{pool[0]}{used}"
        return rename[key]

    def fm(p):
        return F.show(p, notation, name)

    parts = [fm(p) for p in lines] + [f"[{fm(a)} ... {fm(c)}]" for a, c in subs]
    text = ", ".join(parts)
    text = (text + " " if text else "") + f"{w['turnstile']} {fm(conclusion)}"
    conds = []
    for c in conditions:
        if c.startswith("fresh "):
            conds.append("fresh " + name("cmeta", c.split()[1]))
        else:
            conds.append(c)
    if conds:
        text += " ; " + ", ".join(sorted(conds))
    return text


# ---------------------------------------------------------------- matching

DELAYED = "__delayed"  # the sigma key of substitution patterns queued until their metavariable is bound


def match(p, f, sigma: dict, depth: int = 0) -> bool:
    """Extend sigma (in place) so that pattern p denotes f; False when impossible.
    Substitution patterns whose metavariable is not yet bound are queued in sigma."""
    tag = p[0]
    if tag == "meta":
        value = _binding(f, p[2])
        if value is None:
            return False
        return bind(sigma, p[1], value)
    if tag == "subst":
        if p[1] not in sigma:
            sigma.setdefault(DELAYED, []).append((p, f))
            return True
        return _match_subst(p, f, sigma)
    return pair_nodes(p, f, lambda a, b: match_term(a, b, sigma),
                      lambda x, y, binder: match(x, y, sigma, depth + binder))


def pair_nodes(p, f, terms, sub) -> bool:
    """Walk p and f together one connective deep: False where their shapes differ, else `terms(a, b)` on each
    pair of atom arguments and `sub(x, y, binder)` on each pair of subformulas (binder: under a quantifier)."""
    tag = p[0]
    if tag != f[0]:
        return False
    if tag == "atom":
        if p[1] != f[1] or len(p[2]) != len(f[2]):
            return False
        return all(terms(a, b) for a, b in zip(p[2], f[2]))
    if tag == "not" or tag in F.QUANT:
        return sub(p[1], f[1], tag in F.QUANT)
    if tag in F.BINARY:
        return sub(p[1], f[1], False) and sub(p[2], f[2], False)
    return True  # bot


def bind(sigma: dict, name, value) -> bool:
    """Bind a metavariable to a value, or check the value it already has."""
    old = sigma.get(name)
    if old is None:
        sigma[name] = value
        return True
    return old == value


def match_term(p, t, sigma: dict) -> bool:
    tag = p[0]
    if tag in ("tmeta", "cmeta"):
        if t[0] == "bv" or (tag == "cmeta" and t[0] != "c") or not _closed_term(t):
            return False
        return bind(sigma, p[1], t)
    if tag == "f":
        return t[0] == "f" and t[1] == p[1] and len(t[2]) == len(p[2]) and all(
            match_term(a, b, sigma) for a, b in zip(p[2], t[2]))
    return p == t


def _closed_term(t) -> bool:
    if t[0] == "bv":
        return False
    if t[0] == "f":
        return all(_closed_term(a) for a in t[2])
    return True


def _binding(f, k):
    """The value a metavariable takes from f: closed (k None), or with its variable
    (de Bruijn k at the occurrence) turned into holes. None if f mentions other bound variables."""
    try:
        return _bind(f, k, 0)
    except _Escape:
        return None


class _Escape(Exception):
    pass


def _bind(f, k, j):
    return F.map_terms(f, lambda t, d: _bind_term(t, k, d), j)


def _bind_term(t, k, j):
    tag = t[0]
    if tag == "bv":
        if t[1] < j:
            return t
        if k is not None and t[1] == k + j:
            return ("hole",)
        raise _Escape()
    if tag == "f":
        return ("f", t[1], tuple(_bind_term(a, k, j) for a in t[2]))
    return t


def _plug(value, k, j=0):
    """Inverse of _binding: holes back to ('bv', k + j) at an occurrence."""
    return F.map_terms(value, lambda t, d: _plug_term(t, k, d), j)


def _plug_term(t, k, j):
    if t[0] == "hole":
        return ("bv", k + j)
    if t[0] == "f":
        return ("f", t[1], tuple(_plug_term(a, k, j) for a in t[2]))
    return t


def _match_subst(p, f, sigma: dict) -> bool:
    value = sigma[p[1]]
    tp = p[2]
    t = build_term(tp, sigma)
    if t is not None:
        return F.fill(value, t) == f
    found: list = []
    if not _solve_hole(value, f, found):
        return False
    if not found:
        return True  # vacuous: any term will do, so the term stays open
    return match_term(tp, found[0], sigma)


def _solve_hole(v, f, found: list) -> bool:
    return pair_nodes(v, f, lambda a, b: _solve_hole_term(a, b, found),
                      lambda x, y, binder: _solve_hole(x, y, found))


def _solve_hole_term(a, b, found: list) -> bool:
    if a[0] == "hole":
        if not _closed_term(b):
            return False
        if found:
            return found[0] == b
        found.append(b)
        return True
    if a[0] == "f":
        return b[0] == "f" and a[1] == b[1] and len(a[2]) == len(b[2]) and all(
            _solve_hole_term(x, y, found) for x, y in zip(a[2], b[2]))
    return a == b


def resolve(sigma: dict) -> bool:
    """Settle queued substitution patterns: by the now-bound metavariable, or by
    anti-unifying the formulas a metavariable must produce (t = s, A[t/x] |- A[s/x])."""
    queue = sigma.pop(DELAYED, None)
    if not queue:
        return True
    groups: dict[str, list] = {}
    for p, f in queue:
        groups.setdefault(p[1], []).append((p, f))
    for name, items in groups.items():
        if name not in sigma:
            terms = [build_term(p[2], sigma) for p, _ in items]
            if any(t is None for t in terms):
                return False
            value = _anti_unify([f for _, f in items], terms)
            if value is None:
                return False
            sigma[name] = value
        for p, f in items:
            if not _match_subst(p, f, sigma):
                return False
    return True


def _anti_unify(fs: list, ts: list):
    try:
        return _au(fs, ts)
    except _Escape:
        return None


def _au(fs, ts):
    tag = fs[0][0]
    if any(f[0] != tag for f in fs):
        raise _Escape()
    if tag == "atom":
        if any(f[1] != fs[0][1] or len(f[2]) != len(fs[0][2]) for f in fs):
            raise _Escape()
        return ("atom", fs[0][1], tuple(_au_term([f[2][i] for f in fs], ts) for i in range(len(fs[0][2]))))
    if tag == "not" or tag in F.QUANT:
        return (tag, _au([f[1] for f in fs], ts))
    if tag in F.BINARY:
        return (tag, _au([f[1] for f in fs], ts), _au([f[2] for f in fs], ts))
    return fs[0]


def _au_term(xs, ts):
    if all(x == xs[0] for x in xs):
        return xs[0]
    if all(x == t for x, t in zip(xs, ts)):
        return ("hole",)
    if all(x[0] == "f" for x in xs) and len({(x[1], len(x[2])) for x in xs}) == 1:
        return ("f", xs[0][1], tuple(_au_term([x[2][i] for x in xs], ts) for i in range(len(xs[0][2]))))
    raise _Escape()


def build_term(tp, sigma: dict):
    tag = tp[0]
    if tag in ("tmeta", "cmeta"):
        return sigma.get(tp[1])
    if tag == "f":
        args = [build_term(a, sigma) for a in tp[2]]
        return None if any(a is None for a in args) else ("f", tp[1], tuple(args))
    return tp


def build(p, sigma: dict):
    """The formula a pattern denotes under sigma, or None if a metavariable is unbound."""
    tag = p[0]
    if tag == "meta":
        v = sigma.get(p[1])
        if v is None:
            return None
        return v if p[2] is None else _plug(v, p[2])
    if tag == "subst":
        v = sigma.get(p[1])
        t = build_term(p[2], sigma)
        if v is None or t is None:
            return None
        return F.fill(v, t)
    if tag == "atom":
        args = [build_term(t, sigma) for t in p[2]]
        return None if any(a is None for a in args) else ("atom", p[1], tuple(args))
    if tag == "not" or tag in F.QUANT:
        inner = build(p[1], sigma)
        return None if inner is None else (tag, inner)
    if tag in F.BINARY:
        a, b = build(p[1], sigma), build(p[2], sigma)
        return None if a is None or b is None else (tag, a, b)
    return p


def unbound_terms(p, sigma: dict, out: set) -> None:
    """Term metavariables of p not yet bound (for enumeration)."""
    out.update((t[0], t[1]) for t in pattern_terms(p) if t[0] in ("tmeta", "cmeta") and t[1] not in sigma)


def fits(schema: Schema, lines: list, subs: list, conclusion) -> list[dict]:
    """Every binding under which the schema's premises (in this order) and conclusion
    denote the given formulas; [] when none."""
    sigma: dict = {}
    for p, f in zip(schema.lines, lines):
        if not match(p, f, sigma):
            return []
    for (pa, pc), (fa, fc) in zip(schema.subs, subs):
        if not match(pa, fa, sigma) or not match(pc, fc, sigma):
            return []
    if not match(schema.conclusion, conclusion, sigma):
        return []
    if not resolve(sigma):
        return []
    return [sigma]


def premises_fit(schema: Schema, lines: list, subs: list) -> bool:
    """Whether the premises alone can be read as an instance (queued substitutions allowed)."""
    sigma: dict = {}
    for p, f in zip(schema.lines, lines):
        if not match(p, f, sigma):
            return False
    for (pa, pc), (fa, fc) in zip(schema.subs, subs):
        if not match(pa, fa, sigma) or not match(pc, fc, sigma):
            return False
    queue = sigma.get(DELAYED, [])
    for p, f in queue:  # a queued pattern whose metavariable got bound later can be checked now
        if p[1] in sigma and not _match_subst(p, f, sigma):
            return False
    return True
