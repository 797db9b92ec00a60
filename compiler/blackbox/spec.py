"""`kind blackbox`: a hidden function f over typed inputs, an input predicate, and test samples.

Spec items (docs/oracle-worlds.md has the reference):

    family CII                              # CII CRI PSI ERI IPI (GSI boxes are `kind game`)
    difficulty easy                         # easy | hard
    domain xs, list(int(-9, 9), 1, 8)       # one line per input, in order
    hidden fold(fn(a, x) => a + x, 0, xs)   # f, over the input names (and `target`)
    predicate len(xs) <= 6, "at most 6 elements"   # rejected inputs cost no turn
    test [3, 1, 4]                          # a test sample; its answer is f's output, computed
    goal SECRET, "the hidden code"          # interactive puzzles: the test asks for the target
    within 0.01                             # numbers within 1% (of max(1, |want|)) count as equal
    hypothesis sort(xs), "sorting"          # a simple hypothesis the tests must refute (hard boxes)
    budget { turns 10 shots 1 }

Where the box has a plausible but wrong description, `base { op f(...) = ... "doc" }`
gives the documented behaviour (printed in the manual) and `rule` blocks the true
one, exactly as in program worlds; `hidden` may then call the ops by name (or is
the single op applied to the inputs).
"""
from __future__ import annotations

import attrs

from worldspec import ast
from worldspec.compiler.api import Kind, Rule, Task
from worldspec.compiler.blackbox.certify import cross_checks
from worldspec.compiler.blackbox.domains import Domain, domain_of, render
from worldspec.compiler.blackbox.manual import render_box_manual
from worldspec.compiler.blackbox.world import NO_GOAL, BlackBoxWorld, TestCase, call_unit
from worldspec.compiler.common import check_definitions, draw_params, interpolate
from worldspec.compiler.items import (box_budget, box_labels, constant_reader, family_and_difficulty, group_items,
                                      meta_compiler, note, one, reject_program_sections)
from worldspec.diagnostics import SpecError
from worldspec.meta import MetaCompiler, Unit
from worldspec.values import EvalError

ITEMS = ("family", "difficulty", "domain", "hidden", "predicate", "test", "goal", "within", "hypothesis")


def compile_spec(spec: ast.Spec, seed: int | None = None) -> BlackBoxWorld:
    """A box spec -> its BlackBoxWorld (at the given seed, or the declared one)."""
    seed = spec.seed if seed is None else seed
    reject_program_sections(spec)
    items = group_items(spec, ITEMS)
    params = draw_params(spec, seed)
    mc = meta_compiler(spec, params)
    constant = constant_reader(mc)
    family, difficulty = family_and_difficulty(items, spec)
    inputs = read_inputs(items, spec, params, mc, constant)
    names = [n for n, _ in inputs]
    check_base(spec, set(names) | set(params) | set(mc.defs))
    gg = one(items, "goal", spec, required=False)
    goal, goal_note = read_goal(gg, inputs, constant)
    unit_params = names + (["target"] if gg is not None else [])
    variant = hidden_variants(spec, params, mc, unit_params, read_hidden(items, spec, unit_params))
    all_rules = frozenset(r.id for r in spec.rules)
    hidden = variant(all_rules)
    variant(frozenset())  # compile the documented version too, so errors point at the spec now
    true_mc = MetaCompiler(params, dict(mc.defs))
    compile_definitions(true_mc, spec, all_rules)
    predicates = read_predicates(items, true_mc, names)
    tolerance = read_tolerance(items, spec, constant)
    hypotheses = read_hypotheses(items, true_mc, unit_params)
    tests = read_tests(items, spec, gg, goal, inputs, hidden, constant)
    rules = tuple(Rule(r.id, interpolate(r.title, params), f"op {r.override.name}", False,
                       interpolate(r.statement, params), interpolate(r.equation, params),
                       tuple(p.name for p in r.override.params)) for r in spec.rules)
    herrings = tuple(Rule(h.id, h.note, f"op {h.target}", True, h.note, "", ()) for h in spec.herrings)
    world = BlackBoxWorld(
        name=spec.name, version=spec.version, kind=spec.kind, seed=seed, default_seed=spec.seed,
        summary=interpolate(spec.summary, params), params=tuple(params.items()), manual="", examples=(),
        tasks=(), rules=rules, herrings=herrings, budget=box_budget(spec), family=family, difficulty=difficulty,
        inputs=inputs, goal_note=goal_note, tolerance=tolerance, source=spec.file, hidden=hidden,
        variant_hidden=variant, predicates=predicates, goal=goal, tests=tests, hypotheses=hypotheses)
    world = attrs.evolve(world, tasks=box_tasks(world, variant(frozenset())))
    return attrs.evolve(world, manual=render_box_manual(spec, world, params))


# ---------------------------------------------------------------- reading the items


def read_inputs(items: dict, spec: ast.Spec, params: dict, mc: MetaCompiler,
                constant) -> tuple[tuple[str, Domain], ...]:
    """The `domain NAME, DOMAIN` lines, in order (at least one)."""
    inputs: list[tuple[str, Domain]] = []
    for g in items["domain"]:
        if len(g.args) != 2 or not isinstance(g.args[0], ast.Var):
            raise SpecError(g.span, "a domain line is: domain NAME, DOMAIN",
                            "For example: domain xs, list(int(-9, 9), 1, 8)")
        name = g.args[0].name
        if name in params or name in mc.defs or name == "target" or any(n == name for n, _ in inputs):
            raise SpecError(g.args[0].span, f"input {name} clashes with another name",
                            "Inputs, params and defs need distinct names; `target` is reserved for goal boxes.")
        inputs.append((name, domain_of(g.args[1], constant)))
    if not inputs:
        raise SpecError(spec.span, "this box declares no input", "Add: domain x, int(0, 99)")
    return tuple(inputs)


def read_goal(gg, inputs, constant) -> tuple[object, str]:
    """(target, its description) of an interactive puzzle; (NO_GOAL, "") for a plain box."""
    if gg is None:
        return NO_GOAL, ""
    if not gg.args:
        raise SpecError(gg.span, "goal needs the target value", 'goal SECRET, "the hidden code"')
    if len(inputs) != 1:
        raise SpecError(gg.span, "a goal box takes exactly one input (a guess at the target)", "")
    return constant(gg.args[0]), note(gg.args, 1, "goal's description") or "the hidden target"


def read_hidden(items: dict, spec: ast.Spec, unit_params: list[str]) -> ast.Expr:
    """f's expression: the `hidden` line, or the single base op applied to the inputs."""
    hg = one(items, "hidden", spec, required=False)
    if hg is not None:
        if len(hg.args) != 1:
            raise SpecError(hg.span, "hidden takes one expression over the input names", "")
        return hg.args[0]
    ops = [d for d in spec.base if d.kind == "op"]
    if len(ops) != 1:
        raise SpecError(spec.span, "this box has no hidden function",
                        "Add: hidden EXPR over the inputs, or a base block with exactly one op.")
    op = ops[0]
    if len(op.params) != len(unit_params):
        raise SpecError(op.span, f"op {op.name} takes {len(op.params)} parameter(s) but the "
                        f"box has {len(unit_params)} input(s)", "Add a hidden line that calls it.")
    return ast.Call(ast.Var(op.name, span=op.span), tuple(ast.Var(n, span=op.span) for n in unit_params),
                    span=op.span)


def hidden_variants(spec: ast.Spec, params: dict, mc: MetaCompiler, unit_params: list[str], hidden_expr):
    """applied rule ids -> f compiled with those rules' overrides (each set compiled once)."""
    cache: dict = {}

    def variant(applied: frozenset) -> Unit:
        applied = frozenset(applied)
        if applied not in cache:
            m = MetaCompiler(params, dict(mc.defs))
            compile_definitions(m, spec, applied)
            cache[applied] = m.unit("hidden", unit_params, hidden_expr)
        return cache[applied]

    return variant


def read_predicates(items: dict, mc: MetaCompiler, names: list[str]) -> tuple:
    """((Unit, reason), ...): the input constraints."""
    predicates = []
    for g in items["predicate"]:
        if not 1 <= len(g.args) <= 2:
            raise SpecError(g.span, "a predicate line is: predicate EXPR, \"reason\"", "")
        reason = note(g.args, 1, "predicate's reason") or "the input is not admitted"
        predicates.append((mc.unit("predicate", names, g.args[0]), reason))
    return tuple(predicates)


def read_tolerance(items: dict, spec: ast.Spec, constant) -> float:
    """The relative tolerance of numeric answers (0 when the box has no `within` line)."""
    tol = one(items, "within", spec, required=False)
    if tol is None:
        return 0.0
    tolerance = constant(tol.args[0])
    if type(tolerance) not in (int, float) or tolerance < 0:
        raise SpecError(tol.span, "within takes a non-negative number", "For example: within 0.01")
    return float(tolerance)


def read_hypotheses(items: dict, mc: MetaCompiler, unit_params: list[str]) -> tuple:
    """((name, Unit), ...): the simple hypotheses the tests must refute."""
    hypotheses = []
    for i, g in enumerate(items["hypothesis"], 1):
        if not 1 <= len(g.args) <= 2:
            raise SpecError(g.span, "a hypothesis line is: hypothesis EXPR, \"name\"", "")
        hypotheses.append((note(g.args, 1, "hypothesis's name") or f"hypothesis {i}",
                           mc.unit(f"hypothesis{i}", unit_params, g.args[0])))
    return tuple(hypotheses)


def read_tests(items: dict, spec: ast.Spec, gg, goal, inputs, hidden: Unit, constant) -> tuple[TestCase, ...]:
    """The test samples, each answered by f now (a goal box: one test, its target)."""
    names = [n for n, _ in inputs]
    tests: list[TestCase] = []
    if gg is not None:
        if items["test"]:
            raise SpecError(items["test"][0].span, "a goal box is tested on its target, not on test lines",
                            "Remove the test lines (or the goal).")
        tests.append(TestCase("goal", (), goal, gg.span.line))
    for i, g in enumerate(items["test"], 1):
        if len(g.args) != len(names):
            raise SpecError(g.span, f"this test gives {len(g.args)} value(s) for {len(names)} input(s) "
                            f"({', '.join(names)})", "Give one value per input, in order.")
        values = tuple(inputs[k][1].coerce(constant(a)) for k, a in enumerate(g.args))
        try:
            want = call_unit(hidden, list(values))
        except EvalError as err:
            raise SpecError(g.span, f"the hidden function fails on this test: {err.message}",
                            "Every test's answer is computed by f.") from None
        tests.append(TestCase(f"t{i}", values, want, g.span.line))
    if not tests:
        raise SpecError(spec.span, "this box has no test sample", "Add test lines (or a goal for a puzzle).")
    return tuple(tests)


def box_tasks(w: BlackBoxWorld, base_unit: Unit) -> tuple[Task, ...]:
    """One task per test, with its reference answer and (for a flawed manual) the manual's answer."""
    tasks = []
    for c in w.tests:
        naive = ""
        if w.rules and not w.has_goal:
            try:
                naive = render(w.evaluate(c.values, base_unit))
            except EvalError:
                naive = ""
        if w.has_goal:
            prompt = (f"What is {w.goal_note}? Reply with it only, written as an input "
                      f"({w.inputs[0][1].describe()}), in a fenced code block.")
            solution = w.format([w.goal])
        else:
            prompt = (f"What does the box output for the input {w.format(c.values)}? Reply with the "
                      "output only, written the way the box writes its outputs, in a fenced code block.")
            solution = render(c.expected)
        tasks.append(Task(c.id, w.family, prompt, "target" if w.has_goal else "output",
                          box_labels(w.family, w.difficulty), solution, naive))
    return tuple(tasks)


# ---------------------------------------------------------------- base, rules and herrings


def compile_definitions(mc: MetaCompiler, spec: ast.Spec, applied: frozenset) -> None:
    """Compile the base ops into `mc`, each replaced by its rule's override when that rule is applied."""
    overrides = {r.override.name: r for r in spec.rules if r.override is not None and r.id in applied}
    for d in spec.base:
        r = overrides.get(d.name)
        body = r.override.body if r is not None else d.body
        mc.defs[d.name] = mc.unit(d.name, [p.name for p in d.params], body)


def check_base(spec: ast.Spec, reserved: set) -> None:
    """A box's base lists documented ops (no hooks), and its rules override them."""
    seen = {}
    for d in spec.base:
        if d.kind != "op":
            raise SpecError(d.span, f"a {spec.kind} world's base lists operations (op), not hooks",
                            "Hooks belong to program worlds.")
        if d.name in seen:
            raise SpecError(d.span, f"op {d.name} is defined twice in base", "Keep one line per op.")
        if d.name in reserved:
            raise SpecError(d.span, f"op {d.name} has the name of an input, param or def", "Rename it.")
        if any(p.variadic for p in d.params):
            raise SpecError(d.span, f"op {d.name}: variadic parameters are for program worlds", "")
        if not d.doc.strip():
            raise SpecError(d.span, f"op {d.name} has no description", 'End the line with its doc, "..."')
        seen[d.name] = d
    for r in spec.rules:
        for f in r.fields:
            raise SpecError(f.span, f"unknown rule field {f.key!r}", "Rule fields: statement, equation.")
        if r.override is None:
            raise SpecError(r.span, f"rule {r.id} overrides nothing",
                            "Start the rule with the base line it replaces: op NAME(...) = ...")
    check_definitions(spec, require_equation=False)


KIND = Kind("blackbox", compile_spec, "a hidden function answered query by query; tests ask its outputs",
            cross_checks=cross_checks)
