"""Certification: is this world a sound benchmark?

Every perturbed rule observable (a probe within one call's budget tells the
true world from the world with that rule reverted: the rule's own witnesses,
generated probes, the author's programs, then a Hypothesis search), every rule
required by at least two tasks (by knockout, world.requires), every herring
indistinguishable from its base, every reference solution passing in the true
world, every naive one in the manual's world and none in the true world; a
declared exception (`allow "..."`) turns the last two into notes. And the
recall-only score.
"""
from __future__ import annotations

import functools
import random

from hypothesis import HealthCheck, Phase, find, settings, strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from worldspec.compiler.common import (honest_floors, label_counts, recall_only_score, report_header,
                                       rule_tables)
from worldspec.compiler.program import equations
from worldspec.compiler.program.probegen import Chooser, HypothesisChooser, ProbeGenerator
from worldspec.compiler.program.values_gen import values_for
from worldspec.values import Ctx, EvalError, same

SEARCH_EXAMPLES = 300
SEEDED_PROBES = 60


def find_witness(world, rule_id: str, max_examples: int = SEARCH_EXAMPLES, evidence: bool = True) -> str | None:
    """A probe, within one call's unit cap, whose feedback differs without the rule.

    Tried in order: the rule's own `witness` lines, a cheap seeded pass of generated probes,
    the author's programs (examples, prediction programs, task answers run as probes; unless
    `evidence` is off), then a Hypothesis search of generated probes.
    """
    true, knocked = world.true_world(), world.knockout(rule_id)
    syntax = world.surfaces.by_rule.get(rule_id) if world.surfaces is not None else None
    # a syntax rule's probes call the op its symbol calls (its witness lines and the author's programs group)
    target = f"op {syntax.operator.op}" if syntax else world.builder.rules[rule_id].override.target
    gen = ProbeGenerator(true, mine_rules=True)
    tells = functools.partial(tells_apart, true, knocked)
    declared = next((p for p in world.rule_data[rule_id].witnesses if tells(p)), None)
    if declared is not None:
        return declared

    # A cheap seeded pass first: most rules show themselves in a handful of probes.
    ch = Chooser(random.Random(f"witness:{world.seed}:{rule_id}"))
    for i in range(SEEDED_PROBES):
        p = gen.probe_for(ch, target, ("top", "loop", "function")[i % 3])
        if tells(p):
            return p
    if evidence:
        found = next((p for _, p in author_probes(true) if tells(p)), None)
        if found is not None:
            return found

    @st.composite
    def probes(draw):
        context = draw(st.sampled_from(("top", "loop", "function")))
        return gen.probe_for(HypothesisChooser(draw), target, context)

    try:
        return find(probes(), tells,
                    settings=settings(max_examples=max_examples, derandomize=True, database=None,
                                      deadline=None, phases=[Phase.generate, Phase.shrink],
                                      suppress_health_check=list(HealthCheck)))
    except (NoSuchExample, Unsatisfiable):
        return None


def tells_apart(true, knocked, probe: str) -> bool:
    """Whether a probe runs in the true world (not rejected) and its feedback differs in `knocked`."""
    a = true.probe(probe)
    if a.status in ("rejected", "parse_error"):
        return False
    return a.text != knocked.probe(probe).text


def author_probes(world) -> list[tuple[str, str]]:
    """The author's programs as probes, (where, program): example programs, prediction programs,
    and every reference and naive answer of a graded task run on each case whose inputs can be
    written as literals (assigned before a program answer, passed to a function answer)."""
    out = [(f"example {e.id}", e.program) for e in world.examples]
    seen = {p for _, p in out}
    for t in world.tasks:
        data = world.task_data[t.id]
        if t.shape == "predict":
            candidates = [data.program]
        else:
            answers = data.solutions + ((t.naive,) if t.naive else ())
            candidates = [task_probe(world, data, a, values) for a in answers for values in data.cases]
        for p in candidates:
            if p and p not in seen:
                seen.add(p)
                out.append((f"task {t.id}", p))
    return out


def task_probe(world, data, answer: str, values) -> str | None:
    """One task answer on one case as a standalone probe (None when an input has no literal form)."""
    s = world.surface
    literals = [literal(world, v) for v in values]
    if any(lit is None for lit in literals):
        return None
    if data.function:
        return f"{answer.rstrip()}\n{s.word('output')}({data.function}({', '.join(literals)}))"
    if data.inputs and not s.has("assign"):
        return None
    sets = [s.render("assign", name=n, expr=lit) for n, lit in zip(data.inputs, literals)]
    return "\n".join(sets + [answer.rstrip()])


def literal(world, value) -> str | None:
    """A scalar value written as a literal of the world (literal hooks may read it differently:
    the probe need not reproduce the case, only run the author's code)."""
    yes, no, none, _ = world.words
    if value is True or value is False:
        return yes if value else no
    if value is None:
        return none
    if type(value) is int:
        return str(value)
    if type(value) is str and not any(c in value for c in '"\\\n'):
        return f'"{value}"'
    return None


def unobservable(world, rule_id: str) -> str:
    """Why a rule is not observable: every source of probes that was tried, and the way out."""
    own = len(world.rule_data[rule_id].witnesses)
    tried = [f"{SEEDED_PROBES} seeded and up to {SEARCH_EXAMPLES} searched generated probes",
             f"{len(author_probes(world.true_world()))} of the author's programs (examples, prediction "
             f"programs, task answers on their cases)"]
    if own:
        tried.insert(0, f"its {own} witness line(s)")
    return (f"no probe within {world.budget.units_per_call} units tells it apart from its base; tried "
            + ", ".join(tried) + '. If a probe shows it, add it to the rule as witness """PROGRAM""".')


def witness_problems(world, problems: list) -> None:
    """Every declared witness must tell its rule apart: a stale one is a false claim."""
    true = world.true_world()
    for r in world.rules:
        knocked = world.knockout(r.id)
        for n, p in enumerate(world.rule_data[r.id].witnesses, start=1):
            if not tells_apart(true, knocked, p):
                problems.append(f"rule {r.id}: witness {n} does not tell it apart from its base (the true "
                                f"world and the world without {r.id} give the same feedback)")


def herring_unchanged(world, herring, samples: int = 80) -> bool:
    """The herring's operator behaves the same in the true and the manual's world."""
    target = herring.target
    true_op = world.true_world().sem
    base_op = world.base_world().sem
    kind, name = target.split(" ", 1)
    a = (true_op.ops if kind == "op" else true_op.hooks).get(name)
    b = (base_op.ops if kind == "op" else base_op.hooks).get(name)
    if a is None or b is None:
        return a is b
    d = world.builder.base[target]
    rng = random.Random(f"herring:{world.seed}:{herring.id}")
    for args in values_for(d.params, rng, samples):
        if d.params and d.params[-1].variadic:
            args = args[:-1] + list(args[-1])
        for in_function in (False, True):
            for in_loop in (False, True):
                ra, rb = _run(a, args, in_function, in_loop), _run(b, args, in_function, in_loop)
                if ra[0] != rb[0] or (ra[0] == "ok" and not same(ra[1], rb[1])):
                    return False
    return True


def _run(op, args, in_function, in_loop):
    ctx = Ctx()
    ctx.in_function, ctx.in_loop = in_function, in_loop
    try:
        return ("ok", op(ctx, list(args)))
    except EvalError:
        return ("error", None)


def _check_answer(world, task, answer: str, failure: str, problems: list) -> None:
    """Note a problem when the answer fails the task in this world, with its first failing case."""
    v = world.verify(task, answer)
    if not v.passed:
        bad = next((c for c in v.cases if not c.passed), None)
        case = f"case {bad.inputs!r}: " if bad and bad.inputs else ""  # a prediction has no inputs
        why = f" ({case}expected {bad.expected!r}, got {bad.got!r})" if bad else ""
        problems.append(f"task {task.id}: {failure}: {v.detail}{why}")


def certify_program(world, progress=None) -> dict:
    """Run every check on a program world; `problems` is empty exactly when it is certified."""
    say = progress or (lambda msg: None)
    true, base = world.true_world(), world.base_world()
    problems: list[str] = []
    notes: list[str] = []
    requires = {}
    say("checking tasks")
    for t in true.tasks:
        data = true.task_data[t.id]
        if not t.solution:
            problems.append(f"task {t.id}: no reference solution")
        references = data.solutions or ((t.solution,) if t.solution else ())
        for n, answer in enumerate(references, start=1):
            which = "the reference solution" if len(data.solutions) < 2 else f"reference solution {n}"
            _check_answer(true, t, answer, f"{which} fails in the true world", problems)
        if t.naive:
            _check_answer(base, t, t.naive, "the naive solution fails in the manual's world", problems)
        requires[t.id] = sorted(true.requires(t))
    recall_only = recall_only_score(true)
    rules, herrings = rule_tables(
        world, requires, find_witness, herring_unchanged, problems, say,
        unobservable=lambda rule_id: unobservable(world, rule_id), answers="reference solution",
        mismatch=functools.partial(equations.disagreement, true))
    witness_problems(world, problems)
    honest_floors(true, requires, {r: d.allow for r, d in world.rule_data.items() if d.allow},
                  {t: d.allow for t, d in world.task_data.items() if d.allow}, problems, notes,
                  language=world.language)
    for e in true.examples:
        if e.output.startswith(("error:", "limit:", "syntax error:")):
            problems.append(f"example {e.id} fails in the true world: {e.output.splitlines()[-1]}")
    return {**report_header(world, true, recall_only), "rule_table": rules, "herring_table": herrings,
            "requires": requires, "labels": label_counts(true.tasks), "notes": notes, "problems": problems}
