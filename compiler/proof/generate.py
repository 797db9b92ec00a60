"""One-rule proofs: witnesses for certification, the seeded probe stream, test input.

`rule_proof` writes the shortest proof that applies one rule once: the
instance's line premises become premises, each subproof is opened on its
assumption and closed on its conclusion (restated from a premise, or the
assumption itself), and the last line applies the rule. Variants exercise the
side conditions: citing one line twice, discharging a subproof twice, citing
in reverse order. `instance_pool` enumerates small instances of a schema with
metavariables sharing values, which is how certification finds a proof that
one rule system accepts and another rejects.
"""
from __future__ import annotations

import itertools
import random
from typing import Iterator

from worldspec.compiler.proof import formula as F
from worldspec.compiler.proof.schema import Schema, all_patterns, build, term_metas

_ATOMS = [("atom", "P", ()), ("atom", "Q", ()), ("atom", "R", ())]
_CLOSED = _ATOMS + [("not", ("atom", "P", ())), ("and", ("atom", "P", ()), ("atom", "Q", ()))]
_HOLE = ("hole",)
_OPEN = [("atom", "F", (_HOLE,)), ("atom", "G", (_HOLE,)), ("atom", "L", (_HOLE, ("c", "a")))]
_TERMS = [("c", "a"), ("c", "b")]
_FRESH = [("c", "e"), ("c", "k")]
VARIANTS = ("plain", "same_line", "twice", "reversed")


def metavariables(schema: Schema) -> tuple[list, list, list]:
    """(formula metas with their variable, term metas, constant metas) of a schema."""
    tm: set = set()
    cm: set = set()
    for p in all_patterns(schema.lines, schema.subs, schema.conclusion):
        term_metas(p, tm, "tmeta")
        term_metas(p, cm, "cmeta")
    return list(schema.metas), sorted(tm), sorted(cm)


def assignments(schema: Schema, limit: int = 400) -> Iterator[dict]:
    """Small bindings for the schema's metavariables, sharing values (A = B) included."""
    metas, tms, cms = metavariables(schema)
    choices = []
    for name, var in metas:
        choices.append([(name, v) for v in (_OPEN if var else _CLOSED)])
    for name in tms:
        choices.append([(name, v) for v in _TERMS])
    for name in cms:
        choices.append([(name, v) for v in _FRESH])
    n = 0
    for combo in itertools.product(*choices):
        yield dict(combo)
        n += 1
        if n >= limit:
            return


def random_assignment(schema: Schema, rng: random.Random) -> dict:
    metas, tms, cms = metavariables(schema)
    sigma = {}
    for name, var in metas:
        sigma[name] = rng.choice(_OPEN if var else _CLOSED)
    for name in tms:
        sigma[name] = rng.choice(_TERMS)
    for name in cms:
        sigma[name] = rng.choice(_FRESH)
    return sigma


def rule_proof(rule_id: str, schema: Schema, sigma: dict, variant: str = "plain", reit: str | None = None,
               notation: F.Notation = F.DEFAULT, premise_word: str = "premise",
               assume_word: str = "assume", inst: str | None = None) -> str | None:
    """A proof applying `rule_id` once to the instance sigma (None when it cannot be written).
    `reit` restates a line (A |- A); `inst` instantiates a universal (forall x A |- A[t/x]) and
    supplies premises that mention an eigenvariable, which may not be premises themselves."""
    lines = [build(p, sigma) for p in schema.lines]
    subs = [(build(a, sigma), build(c, sigma)) for a, c in schema.subs]
    conclusion = build(schema.conclusion, sigma)
    if any(f is None for f in lines) or conclusion is None or any(a is None or c is None for a, c in subs):
        return None
    fresh = {sigma[c][1] for c in schema.fresh if sigma.get(c)}
    premises: list = []  # premise formulas, in order (premises must come first)
    body: list = []  # (depth, formula, justification) after the premises, with premise refs as ("P", k)

    def premise(f) -> int:
        if f not in premises:
            premises.append(f)
        return premises.index(f)

    def supply(f, depth: int, own_line: bool):
        """A reference to a line holding f: a premise, or f instantiated from a universal premise
        when f mentions an eigenvariable."""
        names = fresh & F.constants(f)
        if not names:
            if own_line and f in premises:
                premises.append(f)  # a second, distinct premise line for the same formula
                return ("P", len(premises) - 1)
            return ("P", premise(f))
        if inst is None or len(names) > 1:
            return None
        k = premise(("all", F.abstract(f, ("c", names.pop()))))
        body.append((depth, f, (inst, [("P", k)])))
        return ("L", len(body) - 1)

    refs = []
    if variant == "same_line" and (len(lines) < 2 or len(set(lines)) != 1):
        return None
    for f in lines:
        if variant == "same_line" and refs:
            refs.append(refs[0])
            continue
        r = supply(f, 0, own_line=True)
        if r is None:
            return None
        refs.append(r)
    sub_refs = []
    for a, c in subs:
        body.append((1, a, None))
        start = ("L", len(body) - 1)
        if c != a:
            if reit is None and not (fresh & F.constants(c)):
                return None
            r = supply(c, 1, own_line=False)
            if r is None:
                return None
            if r[0] == "P":
                body.append((1, c, (reit, [r])))
        elif schema.nontrivial:
            if reit is None:
                return None
            body.append((1, c, (reit, [start])))
        sub_refs.append((start, ("L", len(body) - 1)))
    if any(fresh & F.constants(f) for f in premises):
        return None
    cites = refs + sub_refs
    if variant == "reversed":
        if len(cites) < 2:
            return None
        cites = cites[::-1]
    body.append((0, conclusion, (rule_id, cites)))
    if variant == "twice":
        if not sub_refs:
            return None
        body.append((0, conclusion, (rule_id, cites)))
    n_p = len(premises)

    def num(ref) -> str:
        if isinstance(ref[0], tuple):
            return f"{num(ref[0])}-{num(ref[1])}"
        return str(ref[1] + 1 if ref[0] == "P" else n_p + ref[1] + 1)

    out = [(0, f, premise_word) for f in premises]
    for depth, f, just in body:
        if just is None:
            out.append((depth, f, assume_word))
        else:
            rid, cs = just
            out.append((depth, f, rid if not cs else f"{rid} {', '.join(num(c) for c in cs)}"))
    return render(out, notation)


def render(lines, notation: F.Notation = F.DEFAULT) -> str:
    width = len(str(len(lines)))
    text = []
    for n, (depth, f, just) in enumerate(lines, start=1):
        text.append(f"{str(n).rjust(width)}. {'| ' * depth}{F.show(f, notation)}    {just}")
    return "\n".join(text) + "\n"


def probe_stream(rules: dict[str, Schema], seed: int, reit: str | None, notation: F.Notation = F.DEFAULT,
                 premise_word: str = "premise", assume_word: str = "assume",
                 inst: str | None = None) -> Iterator[str]:
    """An endless, seeded stream of one-rule proofs built from the given (manual) schemas."""
    rng = random.Random(f"proof-probes:{seed}")
    ids = sorted(rules)
    misses = 0
    while True:
        rid = rng.choice(ids)
        schema = rules[rid]
        variant = rng.choice(VARIANTS) if rng.random() < 0.3 else "plain"
        proof = rule_proof(rid, schema, random_assignment(schema, rng), variant, reit, notation,
                           premise_word, assume_word, inst)
        if proof is None:
            misses += 1
            if misses > 200:  # a rule table whose schemas cannot be written as one-rule proofs
                yield "1. P    " + premise_word + "\n"
                misses = 0
            continue
        misses = 0
        yield proof
