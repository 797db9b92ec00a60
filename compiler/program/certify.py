"""Certification: is this world a sound benchmark?

Every perturbed rule observable (Hypothesis searches for a probe within one
call's budget that tells the true world from the world with that rule
reverted), every rule required by some task (by knockout), every herring
indistinguishable from its base, every reference solution passing in the true
world and every naive one in the manual's world; and the recall-only score.
"""
from __future__ import annotations

import random

from hypothesis import HealthCheck, Phase, find, settings, strategies as st
from hypothesis.errors import NoSuchExample, Unsatisfiable

from worldspec.compiler.common import label_counts, recall_only_score, report_header, rule_tables
from worldspec.compiler.program.probegen import Chooser, HypothesisChooser, ProbeGenerator
from worldspec.compiler.program.values_gen import values_for
from worldspec.values import Ctx, EvalError, same

SEARCH_EXAMPLES = 300


def find_witness(world, rule_id: str, max_examples: int = SEARCH_EXAMPLES) -> str | None:
    """A probe, within one call's unit cap, whose feedback differs without the rule."""
    true, knocked = world.true_world(), world.knockout(rule_id)
    target = world.builder.rules[rule_id].override.target
    gen = ProbeGenerator(true)

    # A cheap seeded pass first: most rules show themselves in a handful of probes.
    ch = Chooser(random.Random(f"witness:{world.seed}:{rule_id}"))
    for i in range(60):
        p = gen.probe_for(ch, target, ("top", "loop", "function")[i % 3])
        if _tells_apart(true, knocked, p):
            return p

    @st.composite
    def probes(draw):
        context = draw(st.sampled_from(("top", "loop", "function")))
        return gen.probe_for(HypothesisChooser(draw), target, context)

    try:
        return find(probes(), lambda p: _tells_apart(true, knocked, p),
                    settings=settings(max_examples=max_examples, derandomize=True, database=None,
                                      deadline=None, phases=[Phase.generate, Phase.shrink],
                                      suppress_health_check=list(HealthCheck)))
    except (NoSuchExample, Unsatisfiable):
        return None


def _tells_apart(true, knocked, probe: str) -> bool:
    a = true.probe(probe)
    if a.status in ("rejected", "parse_error"):
        return False
    return a.text != knocked.probe(probe).text


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
        why = f" (case {bad.inputs!r}: expected {bad.expected!r}, got {bad.got!r})" if bad else ""
        problems.append(f"task {task.id}: {failure}: {v.detail}{why}")


def certify_program(world, progress=None) -> dict:
    """Run every check on a program world; `problems` is empty exactly when it is certified."""
    say = progress or (lambda msg: None)
    true, base = world.true_world(), world.base_world()
    problems: list[str] = []
    requires = {}
    say("checking tasks")
    for t in true.tasks:
        if not t.solution:
            problems.append(f"task {t.id}: no reference solution")
        else:
            _check_answer(true, t, t.solution, "the reference solution fails in the true world", problems)
        if t.naive:
            _check_answer(base, t, t.naive, "the naive solution fails in the manual's world", problems)
        requires[t.id] = sorted(true.requires(t))
    recall_only = recall_only_score(true)
    rules, herrings = rule_tables(
        world, requires, find_witness, herring_unchanged, problems, say,
        unobservable=f"no probe within {world.budget.units_per_call} units tells it apart from its base",
        answers="reference solution")
    for e in true.examples:
        if e.output.startswith(("error:", "limit:", "syntax error:")):
            problems.append(f"example {e.id} fails in the true world: {e.output.splitlines()[-1]}")
    return {**report_header(world, true, recall_only), "rule_table": rules, "herring_table": herrings,
            "requires": requires, "labels": label_counts(true.tasks), "problems": problems}
