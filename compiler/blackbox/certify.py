"""Certification of a black box: is it a sound benchmark item?

* every test input is admitted (domains and predicate) and f computes its answer;
* the predicate admits inputs: seeded draws from the domains find enough distinct
  admitted inputs, and f is defined on them;
* tests are not all answered alike;
* every perturbed rule (a box with a flawed description) is observable on some
  admitted input and changes the answer of some test; herrings are unchanged;
* simple hypotheses fail: each declared `hypothesis`, and on hard boxes each of
  the family's stock hypotheses (identity, sorting, Caesar shifts, constant
  outputs...), gets at least one test wrong;
* interactive puzzles (goal boxes): the target is admitted, the candidates can
  be enumerated, a consistent-guess solver pins the target down within the
  box's turns, and on hard boxes the candidates cannot simply be tried in order.

The report has the keys of compiler/program/certify.py's report plus family,
difficulty, admitted, hypotheses and notes. `cross_checks` compares the boxes of
a folder (compiler/suite.py): no easy box answers a hard box of its family.
"""
from __future__ import annotations

import math
import random

from worldspec.compiler.blackbox.domains import MAX_ENUM, close, render
from worldspec.compiler.items import hard_easy_pairs
from worldspec.values import EvalError, same

ADMIT_DRAWS = 400
ADMIT_WANT = 60
MIN_ADMITTED = 8
SOLVER_EVALS = 8000


def outcome(w, values, **how) -> tuple:
    """("ok", f(values)) or ("error", message): f's result as a comparable pair.

    `how` is passed to `w.evaluate`: another compiled f (unit=...) or another target (target=...)."""
    try:
        return ("ok", w.evaluate(values, **how))
    except EvalError as e:
        return ("error", e.message)


def _differs(a, b) -> bool:
    if a[0] != b[0]:
        return True
    return a[0] == "ok" and not same(a[1], b[1])


def solve_by_elimination(w, candidates: list, turns: int, budget: int = SOLVER_EVALS):
    """Turns a consistent-guess solver needs to pin the target down (None: not within `turns`).

    Each turn guesses a candidate still consistent with every feedback seen:
    of the middle candidate and a few seeded others (as many as `budget`
    evaluations allow), the one whose worst feedback leaves the fewest
    candidates; then it keeps the candidates that would have given the
    feedback actually seen."""
    cands = list(candidates)
    rng = random.Random(f"solver:{w.name}")
    for k in range(1, turns + 1):
        if not cands:
            return None
        n = len(cands)
        pool = [cands[n // 2]]
        extra = max(0, min(24, budget // n) - 1)
        if extra:
            pool += rng.sample(cands, min(extra, n))
        guess, best = pool[0], None
        if len(pool) > 1:
            for g in pool:
                classes: dict = {}
                for c in cands:
                    key = repr(outcome(w, [g], target=c))
                    classes[key] = classes.get(key, 0) + 1
                worst = max(classes.values())
                if best is None or worst < best:
                    guess, best = g, worst
        fb = outcome(w, [guess], target=w.goal)
        cands = [c for c in cands if not _differs(outcome(w, [guess], target=c), fb)]
        if len(cands) == 1 and same(cands[0], w.goal):
            return k
    return None


def certify_box(w, progress=None) -> dict:
    """The certification report of a BlackBoxWorld `w` (problems empty exactly when it is certified)."""
    say = progress or (lambda msg: None)
    problems: list[str] = []
    notes: list[str] = []
    say(f"checking {w.name}")
    check_tests(w, problems)
    admitted = admitted_inputs(w, problems)
    plain = [c for c in w.tests if c.values]
    requires = {t.id: sorted(w.requires(t)) for t in w.tasks} if w.rules else {}
    rule_table = check_rules(w, [list(c.values) for c in plain] + list(admitted.values()), requires, problems)
    herring_table = [{"id": h.id, "target": h.target, "unchanged": True} for h in w.herrings]
    hyp_table = check_hypotheses(w, plain, problems, notes)
    solver_turns = check_puzzle(w, problems, notes) if w.has_goal else None
    notes.insert(0, f"family {w.family}, difficulty {w.difficulty}; {len(w.tests)} test(s); "
                    f"{len(admitted)} distinct admitted inputs in {ADMIT_DRAWS} draws")
    labels = {"family": {w.family: len(w.tasks)}, "difficulty": {w.difficulty: len(w.tasks)}}
    return {
        "world": w.name, "kind": w.kind, "seed": w.seed, "default_seed": w.default_seed,
        "params": {k: v for k, v in w.params}, "rules": len(w.rules), "herrings": len(w.herrings),
        "tasks": len(w.tasks), "examples": len(w.examples), "family": w.family, "difficulty": w.difficulty,
        "tests": [{"id": c.id, "input": w.format(c.values) if c.values else None,
                   "answer": w.format([c.expected]) if w.has_goal else render(c.expected)} for c in w.tests],
        "admitted": len(admitted), "solver_turns": solver_turns,
        "rule_table": rule_table, "herring_table": herring_table, "requires": requires,
        "hypotheses": hyp_table, "labels": labels, "notes": notes, "problems": problems,
    }


def check_tests(w, problems: list[str]) -> None:
    """Test inputs and the target are admitted; tests differ in input and not all share one answer."""
    for c in w.tests:
        if c.values:
            why = w.admits(list(c.values))
            if why:
                problems.append(f"test {c.id} (line {c.line}): its input is not admitted: {why}")
    if w.has_goal:
        why = w.admits([w.goal])
        if why:
            problems.append(f"the target {w.format([w.goal])} is not an admitted input: {why}")
    plain = [c for c in w.tests if c.values]
    if len({w.format(c.values) for c in plain}) != len(plain):
        problems.append("two tests have the same input")
    if len(plain) > 1 and all(same(c.expected, plain[0].expected) for c in plain):
        problems.append("every test has the same answer: a constant guess would pass")


def admitted_inputs(w, problems: list[str]) -> dict:
    """Distinct admitted inputs drawn from the domains (text -> values); too few, or f failing, is a problem."""
    rng = random.Random(f"certify:{w.name}:{w.seed}")
    samples = w.sample_inputs(rng, ADMIT_WANT, tries=ADMIT_DRAWS)
    distinct = {w.format(s): s for s in samples}
    want = min(MIN_ADMITTED, _space(w) or MIN_ADMITTED)
    if len(distinct) < want:
        problems.append(f"the predicate admits too little: {len(distinct)} distinct admitted inputs in "
                        f"{ADMIT_DRAWS} draws from the domains")
    for text, values in distinct.items():
        out = outcome(w, values)
        if out[0] != "ok":
            problems.append(f"f fails on the admitted input {text}: {out[1]}")
            break
    return distinct


def check_rules(w, pool: list, requires: dict, problems: list[str]) -> list[dict]:
    """Each perturbed rule is observable on some input of `pool` and required by some test."""
    all_rules = frozenset(r.id for r in w.rules)
    table = []
    for r in w.rules:
        knocked = w.variant_hidden(all_rules - {r.id})
        witness = next((w.format(v) for v in pool
                        if _differs(outcome(w, v), outcome(w, v, unit=knocked))), None)
        used_by = [tid for tid, req in requires.items() if r.id in req]
        if witness is None:
            problems.append(f"rule {r.id} ({r.title}) is not observable: no admitted input tried tells it "
                            "apart from the documented behaviour")
        if not used_by:
            problems.append(f"rule {r.id} ({r.title}) is required by no test: every answer stays the same "
                            "with it reverted")
        table.append({"id": r.id, "title": r.title, "target": r.target, "observable": witness is not None,
                      "witness": witness, "tasks": used_by})
    return table


def check_hypotheses(w, plain: list, problems: list[str], notes: list[str]) -> list[dict]:
    """Declared hypotheses (and, on hard boxes, the family's stock ones) get some test wrong."""
    table: list[dict] = []
    if not plain:
        return table
    declared = [(name, unit, True) for name, unit in w.hypotheses]
    stock = [(name, fn, False) for name, fn in STOCK.get(w.family, {}).items()]
    for name, fn, is_declared in declared + stock:
        solved = True
        for c in plain:
            try:
                got = w.evaluate(c.values, fn) if is_declared else fn(list(c.values))
            except Exception:  # noqa: BLE001 - a stock hypothesis that does not apply fails the test
                solved = False
                break
            if not close(got, c.expected, w.tolerance):
                solved = False
                break
        table.append({"name": name, "declared": is_declared, "refuted": not solved})
        if solved and (is_declared or w.difficulty == "hard"):
            problems.append(f"the simple hypothesis {name!r} answers every test: the tests do not tell "
                            f"it apart from the box")
    refuted = sum(h["refuted"] for h in table)
    notes.append(f"simple hypotheses refuted by the tests: {refuted} of {len(table)}")
    return table


def check_puzzle(w, problems: list[str], notes: list[str]) -> int | None:
    """A goal box: a consistent-guess solver finds the target in time (the turns it needs, or None)."""
    d = w.inputs[0][1]
    size = d.size()
    if size is None or size > MAX_ENUM:
        problems.append(f"the target's domain is too large to enumerate ({size or 'unbounded'} values; at "
                        f"most {MAX_ENUM})")
        return None
    cands = [v for v in d.enumerate() if w.admits([v]) is None]
    solver_turns = solve_by_elimination(w, cands, w.budget.turns)
    if solver_turns is None:
        problems.append(f"a consistent-guess solver does not pin the target down within "
                        f"{w.budget.turns} turns ({len(cands)} candidates)")
    else:
        notes.append(f"a consistent-guess solver pins the target down in {solver_turns} of "
                     f"{w.budget.turns} turns ({len(cands)} candidates)")
    position = next((i for i, c in enumerate(cands) if same(c, w.goal)), None)
    if w.difficulty == "hard" and position is not None and position < w.budget.turns:
        problems.append(f"a hard puzzle's target is among the first {w.budget.turns} candidates: "
                        "trying inputs in order finds it")
    return solver_turns


def _space(w) -> int | None:
    """The number of input combinations, when every domain is finite."""
    total = 1
    for _, d in w.inputs:
        k = d.size()
        if k is None:
            return None
        total *= k
    return total


# ---------------------------------------------------------------- the simplest hypotheses of each family


def _caesar(s: str, k: int) -> str:
    out = []
    for c in s:
        if "a" <= c <= "z":
            out.append(chr((ord(c) - 97 + k) % 26 + 97))
        elif "A" <= c <= "Z":
            out.append(chr((ord(c) - 65 + k) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)


def _atbash(s: str) -> str:
    return "".join(chr(219 - ord(c)) if "a" <= c <= "z" else chr(155 - ord(c)) if "A" <= c <= "Z" else c
                   for c in s)


def _invert(s: str) -> str:
    return "".join({"0": "1", "1": "0"}.get(c, c) for c in s)


def _one(fn):
    def h(args):
        if len(args) != 1:
            raise TypeError("one input only")
        return fn(args[0])
    return h


STOCK = {
    "CII": {
        "identity": _one(lambda x: x), "sorted": _one(sorted), "reversed": _one(lambda x: x[::-1]),
        "sum": _one(sum), "length": _one(len), "maximum": _one(max), "minimum": _one(min),
        "first": _one(lambda x: x[0]), "last": _one(lambda x: x[-1]),
        "sorted descending": _one(lambda x: sorted(x, reverse=True)),
        "first argument": lambda a: a[0], "sum of arguments": lambda a: sum(a),
        "product of arguments": lambda a: math.prod(a),
    },
    "CRI": {
        "identity": _one(lambda x: x), "inverted": _one(_invert), "reversed": _one(lambda x: x[::-1]),
        "parity": _one(lambda x: str(x.count("1") % 2)), "all ones": _one(lambda x: "1" * len(x)),
        "all zeros": _one(lambda x: "0" * len(x)),
        "and of all bits": _one(lambda x: "1" if set(x) == {"1"} else "0"),
        "or of all bits": _one(lambda x: "1" if "1" in x else "0"),
    },
    "ERI": {
        "identity": _one(lambda x: x), "reversed": _one(lambda x: x[::-1]), "atbash": _one(_atbash),
        "upper case": _one(lambda x: x.upper()),
        **{f"caesar {k}": _one(lambda x, k=k: _caesar(x, k)) for k in range(1, 26)},
    },
    "PSI": {
        "first input": lambda a: a[0], "last input": lambda a: a[-1], "product of inputs": lambda a: math.prod(a),
        "sum of inputs": lambda a: sum(a),
    },
}


# ---------------------------------------------------------------- across the boxes of a folder


def cross_checks(boxes) -> list[str]:
    """Hard boxes that an easy box of the same family answers completely (or whose target it hides)."""
    out = []
    for hard, easy in hard_easy_pairs(boxes):
        if hard.has_goal != easy.has_goal or len(easy.inputs) != len(hard.inputs):
            continue
        if hard.has_goal:
            if same(easy.goal, hard.goal) and easy.inputs == hard.inputs:
                out.append(f"{hard.source}: it hides the same target as the easy box {easy.name!r}")
        elif all(answers(easy, c, hard.tolerance) for c in hard.tests):
            out.append(f"{hard.source}: the easy box {easy.name!r} answers every test of this hard box")
    return out


def answers(w, case, tolerance: float) -> bool:
    """Whether box w admits a test's input and computes its expected answer (within tolerance)."""
    values = list(case.values)
    if w.admits(values) is not None:
        return False
    got = outcome(w, values)
    return got[0] == "ok" and close(got[1], case.expected, tolerance)
