"""Plausible variants of a documented rule schema: the proof explorer's hypothesis space.

Each *family* rewrites a manual schema in one generic way; none reads a world's patches. A variant is kept
when it reads back as a schema (`parse_schema` of its text) and differs from the manual's line; variants
equal up to renaming of metavariables and premise order (`Schema.canonical`) are one hypothesis.

Families (the name is what `Hypothesis.family` records):

- `guard`: a side condition added or dropped (distinct with two or more lines; once, nontrivial with a
  subproof);
- `swap`: the two sides of one binary connective, or of one identity, exchanged;
- `reverse`: a one-premise rule run backwards (premise and conclusion exchanged);
- `drop`: one cited line dropped;
- `weaken`: the conclusion replaced by one of its subformulas or by a metavariable of the schema;
- `negate`: one metavariable negated wherever it occurs (a double negation cancelled);
- `contrapose`: one cited line and the conclusion exchanged and negated;
- `conditional`: a subproof premise `[A ... B]` cited instead as the line `A -> B` (one, or all at once);
- `curry`: one cited line moved into the conclusion as its antecedent (`P, Q |- C` to `P |- Q -> C`);
- `dual`: a disjunction written as a negated conjunction of negations (and the reverse), in both orders;
- `merge`: two metavariables made one.
"""
from __future__ import annotations

import attrs

from worldspec.compiler.proof import formula as F
from worldspec.compiler.proof.formula import FormulaError
from worldspec.compiler.proof.schema import Schema, parse_schema

BASE_PRIOR = 0.5  # the manual's line; the families share the rest


@attrs.frozen
class Hypothesis:
    """One candidate schema for a documented rule."""

    id: str  # "base" or FAMILY:N
    family: str
    schema: Schema
    canonical: str

    @property
    def is_base(self) -> bool:
        return self.family == "base"

    def show(self, notation: F.Notation = F.DEFAULT) -> str:
        return self.schema.show(notation)


def _neg(p):
    return p[1] if p[0] == "not" else ("not", p)


def _positions(p, path=()):
    """(path, node) of every subpattern of p, p itself first."""
    yield path, p
    tag = p[0]
    if tag == "not" or tag in F.QUANT:
        yield from _positions(p[1], path + (1,))
    elif tag in F.BINARY:
        yield from _positions(p[1], path + (1,))
        yield from _positions(p[2], path + (2,))


def _replace(p, path, new):
    if not path:
        return new
    i = path[0]
    return p[:i] + (_replace(p[i], path[1:], new),) + p[i + 1:]


def _map_meta(p, name, fn):
    """p with every occurrence of metavariable `name` (and a negation right above it) rewritten by fn."""
    tag = p[0]
    if tag == "not" and p[1][0] == "meta" and p[1][1] == name:
        return fn(p)
    if tag == "meta" and p[1] == name:
        return fn(p)
    if tag == "not" or tag in F.QUANT:
        return (tag, _map_meta(p[1], name, fn))
    if tag in F.BINARY:
        return (tag, _map_meta(p[1], name, fn), _map_meta(p[2], name, fn))
    return p


def _toggle(p):
    return p[1] if p[0] == "not" else ("not", p)


def _rename_meta(p, old, new):
    tag = p[0]
    if tag == "meta":
        return ("meta", new, p[2]) if p[1] == old else p
    if tag == "subst":
        return (p[0], new) + p[2:] if p[1] == old else p
    if tag == "not" or tag in F.QUANT:
        return (tag, _rename_meta(p[1], old, new))
    if tag in F.BINARY:
        return (tag, _rename_meta(p[1], old, new), _rename_meta(p[2], old, new))
    return p


def _plain(p) -> bool:
    """Whether a pattern is propositional over metavariables (no quantifier, substitution or term)."""
    return all(node[0] in ("meta", "not", "bot") + F.BINARY and (node[0] != "meta" or node[2] is None)
               for _, node in _positions(p))


def _patterns(s: Schema):
    """(slot, pattern) of every pattern of a schema: ("line", i), ("sub", i, 0|1), ("concl",)."""
    for i, p in enumerate(s.lines):
        yield ("line", i), p
    for i, (a, c) in enumerate(s.subs):
        yield ("sub", i, 0), a
        yield ("sub", i, 1), c
    yield ("concl",), s.conclusion


def _set(s: Schema, slot, p) -> Schema:
    if slot[0] == "line":
        lines = list(s.lines)
        lines[slot[1]] = p
        return attrs.evolve(s, lines=tuple(lines))
    if slot[0] == "sub":
        subs = [list(x) for x in s.subs]
        subs[slot[1]][slot[2]] = p
        return attrs.evolve(s, subs=tuple(tuple(x) for x in subs))
    return attrs.evolve(s, conclusion=p)


def _meta_names(s: Schema) -> list[str]:
    out: dict = {}
    for _, p in _patterns(s):
        for _, node in _positions(p):
            if node[0] == "meta":
                out.setdefault(node[1], node[2])
    return [n for n, k in out.items() if k is None and all(v is None for m, v in s.metas if m == n)]


def _guard(s: Schema):
    if len(s.lines) >= 2:
        yield attrs.evolve(s, distinct=not s.distinct)
    if s.subs:
        yield attrs.evolve(s, once=not s.once)
        yield attrs.evolve(s, nontrivial=not s.nontrivial)


def _swap(s: Schema):
    for slot, p in _patterns(s):
        for path, node in _positions(p):
            if node[0] in F.BINARY:
                yield _set(s, slot, _replace(p, path, (node[0], node[2], node[1])))
            elif node[0] == "atom" and node[1] == "=" and len(node[2]) == 2:
                yield _set(s, slot, _replace(p, path, ("atom", "=", node[2][::-1])))


def _reverse(s: Schema):
    if len(s.lines) == 1 and not s.subs:
        yield attrs.evolve(s, lines=(s.conclusion,), conclusion=s.lines[0])


def _drop(s: Schema):
    for i in range(len(s.lines)):
        yield attrs.evolve(s, lines=s.lines[:i] + s.lines[i + 1:], distinct=s.distinct and len(s.lines) > 2)


def _weaken(s: Schema):
    seen = set()
    for path, node in _positions(s.conclusion):
        if path and node not in seen:
            seen.add(node)
            yield attrs.evolve(s, conclusion=node)
    for name in _meta_names(s):
        node = ("meta", name, None)
        if node not in seen and node != s.conclusion:
            seen.add(node)
            yield attrs.evolve(s, conclusion=node)


def _negate(s: Schema):
    for name in _meta_names(s):
        out = s
        for slot, p in _patterns(s):
            out = _set(out, slot, _map_meta(p, name, _toggle))
        yield out


def _contrapose(s: Schema):
    for i, p in enumerate(s.lines):
        if p[0] == "bot" or s.conclusion[0] == "bot":
            continue
        lines = list(s.lines)
        lines[i] = _neg(s.conclusion)
        yield attrs.evolve(s, lines=tuple(lines), conclusion=_neg(p))


def _conditional(s: Schema):
    if s.fresh:
        return
    for i, (a, c) in enumerate(s.subs):
        if _plain(a) and _plain(c):
            subs = s.subs[:i] + s.subs[i + 1:]
            yield attrs.evolve(s, lines=s.lines + (("imp", a, c),), subs=subs,
                               once=s.once and bool(subs), nontrivial=s.nontrivial and bool(subs))
    if len(s.subs) > 1 and all(_plain(a) and _plain(c) for a, c in s.subs):  # every subproof at once
        yield attrs.evolve(s, lines=s.lines + tuple(("imp", a, c) for a, c in s.subs), subs=(),
                           once=False, nontrivial=False)


def _curry(s: Schema):
    if len(s.lines) < 2:
        return
    for i, p in enumerate(s.lines):
        if _plain(p) and _plain(s.conclusion):
            yield attrs.evolve(s, lines=s.lines[:i] + s.lines[i + 1:], conclusion=("imp", p, s.conclusion),
                               distinct=s.distinct and len(s.lines) > 2)


def _dual(s: Schema):
    for slot, p in _patterns(s):
        for path, node in _positions(p):
            if node[0] in ("or", "and"):
                other = "and" if node[0] == "or" else "or"
                for x, y in ((node[1], node[2]), (node[2], node[1])):
                    yield _set(s, slot, _replace(p, path, ("not", (other, _neg(x), _neg(y)))))


def _merge(s: Schema):
    names = _meta_names(s)
    for a in names:
        for b in names:
            if a < b:
                out = s
                for slot, p in _patterns(s):
                    out = _set(out, slot, _rename_meta(p, b, a))
                yield out


FAMILIES = (("guard", _guard), ("swap", _swap), ("reverse", _reverse), ("drop", _drop), ("weaken", _weaken),
            ("negate", _negate), ("contrapose", _contrapose), ("conditional", _conditional),
            ("curry", _curry), ("dual", _dual), ("merge", _merge))


def _reread(s: Schema) -> Schema | None:
    """The schema as its text reads back (metavariables and conditions re-resolved), or None when the
    variant is no schema (a substitution left alone, an eigenvariable that no longer occurs)."""
    try:
        text = s.show(F.DEFAULT)
        if s.fresh and any(c not in text.partition(";")[0] for c in s.fresh):
            return None
        return parse_schema(text, F.DEFAULT)
    except (FormulaError, KeyError, ValueError, IndexError, TypeError, RecursionError):
        return None


def space(base: Schema) -> list[Hypothesis]:
    """The manual's schema and its variants (no two equal up to renaming), the manual's first."""
    out = [Hypothesis("base", "base", base, base.canonical())]
    seen = {out[0].canonical}
    for name, family in FAMILIES:
        n = 0
        for variant in family(base):
            s = _reread(variant)
            if s is None:
                continue
            key = s.canonical()
            if key in seen:
                continue
            seen.add(key)
            n += 1
            out.append(Hypothesis(f"{name}:{n}", name, s, key))
    return out


def prior(hyps: list[Hypothesis]) -> dict[str, float]:
    """The manual's line BASE_PRIOR; the variants share the rest equally."""
    rest = len(hyps) - 1
    return {h.id: (BASE_PRIOR if h.is_base else (1 - BASE_PRIOR) / rest) for h in hyps} if rest else \
        {hyps[0].id: 1.0}
