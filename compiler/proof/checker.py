"""Check a Fitch proof against a rule table; the verdict names the first bad line.

The checker walks the lines once. Each justified line must cite earlier lines
that are still available (not inside a closed subproof) and whole closed
subproofs whose enclosing subproof is still open, in the number its rule's
schema asks for; the cited formulas must be an instance of the schema (in any
order unless the rule says `ordered`) with the line's formula as conclusion,
and the rule's side conditions must hold. Nothing here raises on bad input.
"""
from __future__ import annotations

import itertools

import attrs

from worldspec.compiler.proof import formula as F
from worldspec.compiler.proof.proofs import Proof
from worldspec.compiler.common import id_order
from worldspec.compiler.proof.schema import Schema, constant_metas, fits, premises_fit


@attrs.frozen
class Result:
    ok: bool  # every line checks
    complete: bool  # ... and the last line is outside every subproof
    premises: tuple = ()
    conclusion: tuple | None = None
    line: int = 0  # the first bad line (0 when none)
    rule: str = ""  # the rule id that line cites ("" when none)
    message: str = ""  # why it is bad, or why the proof is incomplete
    col: int = 0  # where in that line (0-based), for spec diagnostics
    used: frozenset = frozenset()  # rule ids cited by the lines that were checked
    lines: int = 0

    @property
    def accepted(self) -> bool:
        return self.ok and self.complete


def rule_named(rules: dict[str, Schema], written: str) -> str | None:
    """The id of the rule a proof line cites: as written, or in another letter case when exactly one rule
    has that name in any case (`R55` for `r55`); None when there is none."""
    if written in rules:
        return written
    same = [r for r in rules if r.lower() == written.lower()]
    return same[0] if len(same) == 1 else None


def check(proof: Proof, rules: dict[str, Schema], notation: F.Notation = F.DEFAULT, only: int = 0) -> Result:
    """The verdict on a whole proof under `rules` (rule id -> schema). With `only`, the verdict on that line
    alone: the rule lines before it are taken as checked (their citations are still read, and the subproofs
    they cite count as discharged) and the lines after it are not checked."""
    if proof.error or not proof.lines:
        return Result(False, False, message=proof.error or "there are no proof lines")
    show = lambda f: F.show(f, notation)  # noqa: E731
    lines = proof.lines
    premises = tuple(ln.formula for ln in lines if ln.kind == "premise" and ln.formula is not None)
    used: set[str] = set()
    discharged: dict[int, int] = {}  # subproof id -> first line citing it
    chains = {}

    def chain(ctx):
        if ctx not in chains:
            chains[ctx] = proof.chain(ctx)
        return chains[ctx]

    for ln in lines:
        if only and ln.n > only:
            break
        fail = lambda msg, col=0: Result(False, False, premises, None, ln.n, ln.rule, msg, col,  # noqa: E731
                                         frozenset(used), len(lines))
        if ln.error:  # the line could not be read: no rule is to blame
            return Result(False, False, premises, None, ln.n, "", ln.error, ln.col, frozenset(used), len(lines))
        if ln.kind in ("premise", "assume"):
            continue
        name = rule_named(rules, ln.rule)
        if name is None:
            known = sorted(rules, key=id_order)
            return fail(f"there is no rule {ln.rule} (rules: {', '.join(known[:40])})")
        if name != ln.rule:
            ln = attrs.evolve(ln, rule=name)  # blame and messages name the rule as the world does
        schema = rules[name]
        used.add(name)
        here = chain(ln.ctx)
        cited_lines, cited_subs = [], []
        for c in ln.cites:
            if c[0] == "line":
                i = c[1]
                if i < 1 or i > len(lines):
                    return fail(f"cites line {i}, which does not exist")
                if i >= ln.n:
                    return fail(f"cites line {i}, which does not come before it")
                src = lines[i - 1]
                if src.ctx not in here:
                    s = _innermost_closed(proof, src.ctx, here)
                    return fail(f"cites line {i}, which is inside the closed subproof {s.start}-{s.end}")
                cited_lines.append((i, src.formula))
            else:
                i, j = c[1], c[2]
                if j >= ln.n or i >= ln.n:
                    return fail(f"cites {i}-{j}, which does not end before it")
                sub = proof.subproof_at(i, j)
                starting = [s for s in proof.subproofs.values() if s.id and s.start == i]
                if starting and starting[0].id in here:
                    return fail(f"cites {i}-{j}, but the subproof that starts at line {i} is still open here")
                if sub is None:
                    if starting:
                        s = starting[0]
                        return fail(f"cites {i}-{j}, but the subproof that starts at line {i} runs to line {s.end}")
                    return fail(f"cites {i}-{j}, but line {i} does not start a subproof (it is not an assumption)")
                if sub.id in here:
                    return fail(f"cites the subproof {i}-{j}, which is still open here")
                if sub.parent not in here:
                    s = _innermost_closed(proof, sub.parent, here)
                    return fail(f"cites the subproof {i}-{j}, which sits inside the closed subproof "
                                f"{s.start}-{s.end}")
                cited_subs.append((sub, lines[i - 1].formula, lines[j - 1].formula))
        if ln.n < only:  # taken as checked: only what it discharges matters to the line judged
            for sub, _, _ in cited_subs:
                discharged.setdefault(sub.id, ln.n)
            continue
        want_l, want_s = schema.arity
        if len(cited_lines) != want_l or len(cited_subs) != want_s:
            return fail(f"{ln.rule} cites {_count(want_l, 'line')} and {_count(want_s, 'subproof')}; "
                        f"this line cites {_count(len(cited_lines), 'line')} and "
                        f"{_count(len(cited_subs), 'subproof')}")
        if schema.distinct:
            nums = [i for i, _ in cited_lines]
            for i in nums:
                if nums.count(i) > 1:
                    return fail(f"cites line {i} twice, but {ln.rule} needs different lines "
                                f"(duplicate-premise guard)")
        for sub, _, _ in cited_subs:
            if schema.once and sub.id in discharged:
                return fail(f"the subproof {sub.start}-{sub.end} was already used at line "
                            f"{discharged[sub.id]}; {ln.rule} discharges a subproof only once (use-once guard)")
            if schema.nontrivial and sub.start == sub.end:
                return fail(f"the subproof {sub.start}-{sub.end} is only its assumption; {ln.rule} needs a "
                            f"subproof with a line after its assumption")
        verdict = _match(schema, ln, cited_lines, cited_subs, proof, here, show)
        if verdict:
            return fail(verdict)
        for sub, _, _ in cited_subs:
            discharged.setdefault(sub.id, ln.n)
    last = lines[-1]
    if last.depth != 0 or last.ctx != 0:
        s = proof.subproofs[proof.chain(last.ctx)[1]]
        return Result(True, False, premises, None, 0, "", f"every line checks, but the proof ends inside "
                      f"the subproof opened at line {s.start}", 0, frozenset(used), len(lines))
    return Result(True, True, premises, last.formula, 0, "", "", 0, frozenset(used), len(lines))


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _innermost_closed(proof: Proof, ctx: int, here: tuple):
    """The outermost subproof around ctx that is not open at `here`."""
    ch = proof.chain(ctx)
    for sid in ch:
        if sid not in here:
            return proof.subproofs[sid]
    return proof.subproofs[ctx]


def _match(schema: Schema, ln, cited_lines, cited_subs, proof: Proof, here, show) -> str:
    """'' when the line is an instance of the schema meeting its side conditions, else why not."""
    sub_forms = [(a, c) for _, a, c in cited_subs]
    line_orders = [cited_lines] if schema.ordered else [list(p) for p in itertools.permutations(cited_lines)]
    sub_orders = [sub_forms] if schema.ordered else [list(p) for p in itertools.permutations(sub_forms)]
    shape = False
    fresh_problem = ""
    for lo in line_orders:
        lf = [f for _, f in lo]
        for sf in sub_orders:
            if not premises_fit(schema, lf, sf):
                continue
            shape = True
            for sigma in fits(schema, lf, sf, ln.formula):
                problem = _fresh_problem(schema, sigma, ln, lo, proof, here)
                if not problem:
                    return ""
                fresh_problem = fresh_problem or problem
    if fresh_problem:
        return fresh_problem
    cited = _describe(cited_lines, cited_subs)
    if not shape:
        if not cited:
            return f"{ln.rule} does not give {show(ln.formula)}"
        return f"{cited} do not have the form {ln.rule} needs" if len(ln.cites) > 1 else \
            f"{cited} does not have the form {ln.rule} needs"
    return f"{ln.rule} does not give {show(ln.formula)} from {cited}"


def _describe(cited_lines, cited_subs) -> str:
    parts = []
    if cited_lines:
        nums = [str(i) for i, _ in cited_lines]
        parts.append(("line " if len(nums) == 1 else "lines ") + ", ".join(nums))
    if cited_subs:
        rng = [f"{s.start}-{s.end}" for s, _, _ in cited_subs]
        parts.append(("subproof " if len(rng) == 1 else "subproofs ") + ", ".join(rng))
    return " and ".join(parts)


def _fresh_problem(schema: Schema, sigma: dict, ln, ordered_lines, proof: Proof, here) -> str:
    for c in schema.fresh:
        value = sigma.get(c)
        if value is None:
            continue
        name = value[1]
        places = []
        if c not in constant_metas(schema.conclusion):
            places.append(("this line", ln.formula))
        for (i, f), pat in zip(ordered_lines, schema.lines):
            if c not in constant_metas(pat):
                places.append((f"line {i}", f))
        places += [(f"premise {p.n}", p.formula) for p in proof.lines if p.kind == "premise"]
        places += [(f"the open assumption on line {proof.subproofs[sid].start}",
                    proof.lines[proof.subproofs[sid].start - 1].formula) for sid in here if sid]
        for where, f in places:
            if f is not None and name in F.constants(f):
                return (f"{ln.rule} needs a new constant for {c}, but {name} occurs in {where} "
                        f"(eigenvariable condition)")
    return ""
