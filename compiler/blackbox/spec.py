"""`kind blackbox`: a hidden function f over typed inputs, an input predicate, and test samples.

Spec items (docs/oracle-worlds.md has the reference):

    family CII                              # CII CRI PSI ERI IPI (GSI boxes are `kind game`)
    difficulty easy                         # easy | hard
    domain xs, list(int(-9, 9), 1, 8)       # one line per input, in order
    domain dt, float(0.01, 1), default(0.1) # ... the last ones may be optional: a query may leave them out
    hidden fold(fn(a, x) => a + x, 0, xs)   # f, over the input names (and target, state, noise names)
    predicate len(xs) <= 6, "at most 6 elements"   # rejected inputs cost no turn (unless `rejection turn`)
    test [3, 1, 4]                          # a test sample; its answer is f's output, computed
    test t2 "question" { given Q  ask Q  extract EXPR }   # a test asked after other queries
    goal SECRET, "the hidden code"          # interactive puzzles: one line per target (a puzzle each)
    goal SECRET, "the hidden code", again   # ... the same target as an earlier goal: another puzzle
    goal SECRET, "the hidden code", defect  # ... a kept published defect: unsolvable is a warning
    answer choice("a", "b")                 # a goal box: how its target is written (or: answer program)
    solution "fn(t) => ..."                 # the reference program of a box with `answer program`
    state {"n": 0}                          # memory at the start of a session ...
    next put(state, "n", get(state, "n") + 1)   # ... and after each query (sees `output`)
    noise u                                 # a seeded uniform draw per query
    rejection turn                          # refused inputs use a turn
    sample_input [1, 2, 3]                  # example inputs (manual, probe generator, solver)
    example E1 "what it shows" { ask 2 }    # a worked example: the manual shows f's output, computed
    within 0.01, absolute                   # numbers (also inside lists and maps) within 0.01 count as equal
    normalise spaces                        # string answers ignore whitespace (exact by default)
    hypothesis sort(xs), "sorting"          # a simple hypothesis the tests must refute (hard boxes)
    step_limit 600000                       # meta-language steps each call may take (default 200,000)
    precompute TABLE                        # a def without parameters, computed once when the world is compiled
    budget { turns 10 shots 1 }

Where the box has a plausible but wrong description, `base { op f(...) = ... "doc" }`
gives the documented behaviour (printed in the manual) and `rule` blocks the true
one, exactly as in program worlds; `hidden` may then call the ops by name (or is
the single op applied to the inputs), and so may defs. Rules on one op stack in spec
order, a rule's prior(...) being the op beneath it and its base(...) the base line
alone (compile_definitions); `next` may call the ops too, so a rule may change what
a box remembers. A rule's `witness Q1, Q2, ...` lines are query sequences, sent in a
fresh session, that tell it apart (certification checks each and tries them first).
"""
from __future__ import annotations

import attrs

from worldspec import ast
from worldspec.ast import mentions
from worldspec.compiler.api import InputError, Kind, Rule, Task, TurnShotFace
from worldspec.compiler.artefacts import decode_text, decode_value, encode_value, recall
from worldspec.compiler.blackbox.certify import cross_checks
from worldspec.compiler.blackbox.domains import Domain, domain_of, render
from worldspec.compiler.blackbox.grading import NORMALISATIONS, STEP_CEILING, TOLERANCE_MODES, Grading, more_steps
from worldspec.compiler.blackbox.manual import render_box_manual
from worldspec.compiler.blackbox.world import NO_STATE, BlackBoxWorld, TestCase, call_unit
from worldspec.compiler.common import check_definitions, draw_params, interpolate, meta_compiler
from worldspec.compiler.items import (box_budget, box_labels, chosen_word, chosen_words, constant_reader,
                                      family_and_difficulty, group_items, note, one, reject_program_sections, switch)
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import BASE, PRIOR, MetaCompiler, Unit
from worldspec.values import MAX_STEPS, EvalError, same, show

ITEMS = ("family", "difficulty", "domain", "hidden", "predicate", "test", "goal", "within", "normalise",
         "hypothesis", "state", "next", "noise", "rejection", "answer", "solution", "sample_input", "step_limit",
         "precompute")
BLOCKS = ("test",)
TEST_FIELDS = ("given", "ask", "extract")
RESERVED_NAMES = ("target", "state", "output")
RULE_FIELDS = ("statement", "equation", "witness")
GOAL_MARKS = ("again", "defect")


def compile_spec(spec: ast.Spec, seed: int | None = None) -> BlackBoxWorld:
    """A box spec -> its BlackBoxWorld (at the given seed, or the declared one)."""
    seed = spec.seed if seed is None else seed
    reject_program_sections(attrs.evolve(spec, examples=()))  # a box's examples are inputs (read_examples)
    items = group_items(spec, ITEMS, BLOCKS)
    params = draw_params(spec, seed)
    mc, dependent = box_compiler(spec, params)
    def_names = set(mc.defs) | {d.name for d in dependent}
    constant = constant_reader(mc)
    max_steps = read_step_limit(items, spec, constant)
    precompute(items, mc, max_steps, {d.name: d for d in dependent})
    family, difficulty = family_and_difficulty(items, spec)
    inputs, input_defaults = read_inputs(items, spec, params, def_names, constant)
    names = [n for n, _ in inputs]
    check_base(spec, set(names) | set(params) | def_names)
    check_op_cycles(spec)
    goals = items["goal"]
    targets, goal_note = read_goals(goals, inputs, constant)
    memory, noise = read_memory(items, spec, constant, names, params, def_names)
    unit_params = names + (["target"] if goals else []) + (["state"] if memory is not NO_STATE else []) + noise
    next_expr = read_next(items, spec, memory)
    variant, variant_next = hidden_variants(spec, params, mc, unit_params, read_hidden(items, spec, unit_params),
                                            next_expr)
    all_rules = frozenset(r.id for r in spec.rules)
    hidden = variant(all_rules)
    variant(frozenset())  # compile the documented version too, so errors point at the spec now
    true_mc = MetaCompiler(params, dict(mc.defs))
    compile_definitions(true_mc, spec, all_rules)
    next_state = variant_next(all_rules)
    predicates = read_predicates(items, true_mc, names + (["state"] if memory is not NO_STATE else []))
    grading = read_grading(items, spec, constant)
    hypotheses = read_hypotheses(items, true_mc, unit_params)
    answer_domain, program_answer = read_answer(items, spec, constant, bool(goals))
    solution = read_solution(items, spec, program_answer)
    tests = read_tests(items, spec, goals, targets, inputs, true_mc, constant, input_defaults)
    rules = tuple(Rule(r.id, interpolate(r.title, params), f"op {r.override.name}", False,
                       interpolate(r.statement, params), interpolate(r.equation, params),
                       tuple(p.name for p in r.override.params)) for r in spec.rules)
    herrings = tuple(Rule(h.id, h.note, f"op {h.target}", True, h.note, "", ()) for h in spec.herrings)
    world = BlackBoxWorld(
        name=spec.name, version=spec.version, language=spec.language, kind=spec.kind, seed=seed, default_seed=spec.seed,
        summary=interpolate(spec.summary, params), params=tuple(params.items()), manual="", examples=(),
        tasks=(), rules=rules, herrings=herrings, budget=box_budget(spec), family=family, difficulty=difficulty,
        inputs=inputs, goal_note=goal_note, grading=grading, source=spec.file, hidden=hidden,
        variant_hidden=variant, predicates=predicates, targets=targets, tests=tests, hypotheses=hypotheses,
        memory=memory, next_state=next_state, noise=tuple(noise), variant_next=variant_next,
        rule_witnesses=read_rule_witnesses(spec, inputs, constant, input_defaults),
        rejection_costs=switch(items, spec, "rejection", "turn", "free"),
        answer_domain=answer_domain, program_answer=program_answer, solution_program=solution,
        input_samples=read_samples(items, inputs, constant), max_steps=max_steps, input_defaults=input_defaults)
    world = attrs.evolve(world, tests=answer_tests(world, items))
    worked = worked_examples(world, read_examples(spec, inputs, true_mc, constant, input_defaults))
    world = attrs.evolve(world, tasks=box_tasks(world, variant(frozenset())))
    world = attrs.evolve(world, worked=worked)
    return attrs.evolve(world, manual=render_box_manual(spec, world, params, worked))


# ---------------------------------------------------------------- reading the items


def read_step_limit(items: dict, spec: ast.Spec, constant) -> int:
    """The meta-language steps each call of the box's code (and each answer program) may take: `step_limit N`."""
    g = one(items, "step_limit", spec, required=False)
    if g is None:
        return MAX_STEPS
    n = constant(g.args[0]) if len(g.args) == 1 else None
    if type(n) is not int or not 1 <= n <= STEP_CEILING:
        shown = f"{n:,}" if type(n) is int else "not one whole number"
        raise SpecError(g.span, f"step_limit is {shown}; it must be a whole number from 1 to {STEP_CEILING:,}",
                        f"The default is {MAX_STEPS:,} steps per call; for example: step_limit 600000")
    return n


def precompute(items: dict, mc: MetaCompiler, max_steps: int, dependent: dict | None = None) -> None:
    """Each def named by `precompute NAME` (no parameters) computed once, now, under the box's step limit; every
    call of it then returns that value at no cost (a table that many queries read, such as a trajectory).
    `dependent`: the defs that call ops (their value changes with the rules, so they have no single value)."""
    for g in items["precompute"]:
        for a in g.args:
            if isinstance(a, ast.Var) and a.name in (dependent or {}):
                raise SpecError(a.span, f"precompute {a.name}: the def calls the world's ops, whose behaviour "
                                "the rules change, so it has no single value to compute once",
                                "Precompute a def that calls no op (a table of numbers), and let the op or "
                                "hidden line read it.")
            if not isinstance(a, ast.Var) or a.name not in mc.defs:
                raise SpecError(a.span, "precompute names defs of this world", "For example: precompute TABLE")
            u = mc.defs[a.name]
            if u.arity or u.variadic:
                raise SpecError(a.span, f"precompute {a.name}: the def takes parameters",
                                "Only a def without parameters has a single value to compute once.")
            mc.finish()
            if u.uses_ctx:
                raise SpecError(a.span, f"precompute {a.name}: the def reads where it runs, so it has no single "
                                "value", "")
            value = recall(f"precompute:{a.name}", lambda u=u, a=a: precomputed(u, a, max_steps), encode_value,
                           decode_value)
            # every compiled call holds this Unit: its body becomes the value
            u.body, u.nslots = (lambda frame, v=value: v), 0


def precomputed(u: Unit, a: ast.Var, max_steps: int):
    """The value of the def `a` names (no parameters), computed under the box's step limit."""
    try:
        return call_unit(u, [], max_steps)
    except EvalError as err:
        raise SpecError(a.span, f"precompute {a.name} fails: {err.message}", more_steps(err)) from None


def read_inputs(items: dict, spec: ast.Spec, params: dict, def_names: set,
                constant) -> tuple[tuple[tuple[str, Domain], ...], tuple]:
    """(the `domain NAME, DOMAIN` lines, in order (at least one); the defaults of the last ones, from their
    `, default(VALUE)`: a query may leave those inputs out)."""
    inputs: list[tuple[str, Domain]] = []
    defaults: list = []
    for g in items["domain"]:
        if len(g.args) not in (2, 3) or not isinstance(g.args[0], ast.Var):
            raise SpecError(g.span, "a domain line is: domain NAME, DOMAIN (or: domain NAME, DOMAIN, default(V))",
                            "For example: domain xs, list(int(-9, 9), 1, 8)")
        name = g.args[0].name
        if name in params or name in def_names or name in RESERVED_NAMES or any(n == name for n, _ in inputs):
            raise SpecError(g.args[0].span, f"input {name} clashes with another name",
                            "Inputs, params and defs need distinct names; `target`, `state` and `output` are "
                            "reserved.")
        domain = domain_of(g.args[1], constant)
        if len(g.args) == 3:
            defaults.append(input_default(g.args[2], name, domain, constant))
        elif defaults:
            raise SpecError(g.span, f"input {name} has no default, but an input before it has one",
                            "A query leaves out inputs from the end: give the inputs after an optional one "
                            "defaults too, or move the optional ones last.")
        inputs.append((name, domain))
    if not inputs:
        raise SpecError(spec.span, "this box declares no input", "Add: domain x, int(0, 99)")
    return tuple(inputs), tuple(defaults)


def input_default(e: ast.Expr, name: str, domain: Domain, constant):
    """The value of `default(VALUE)` after a domain, inside the domain."""
    if not (isinstance(e, ast.Call) and isinstance(e.fn, ast.Var) and e.fn.name == "default" and len(e.args) == 1):
        raise SpecError(e.span, f"after input {name}'s domain, expected default(VALUE)",
                        "An optional input is written: domain dt, float(0.01, 1), default(0.1)")
    v = constant(e.args[0])
    why = domain.check(v)
    if why:
        raise SpecError(e.args[0].span, f"the default of input {name} is outside its domain: {why}", "")
    return domain.coerce(v)


def read_goals(goals: list, inputs, constant) -> tuple[tuple, str]:
    """(targets, their description) of an interactive puzzle: one `goal` line per target; ((), "") otherwise."""
    targets = []
    for gg in goals:
        if not gg.args:
            raise SpecError(gg.span, "a goal line is: goal TARGET, \"description\"", 'goal SECRET, "the hidden code"')
        if len(inputs) != 1:
            raise SpecError(gg.span, "a goal box takes exactly one input (a query about the target)", "")
        target = constant(gg.args[0])
        again = "again" in goal_marks(gg)
        if any(same(target, t) for t in targets) != again:
            raise SpecError(gg.span, "this target is given twice" if not again else
                            "a goal marked again repeats the target of an earlier goal",
                            "Each goal line hides its own target; mark a repeated one: goal TARGET, \"...\", again")
        targets.append(target)
    note_text = note(goals[0].args, 1, "goal's description") if goals else ""
    return tuple(targets), (note_text or "the hidden target") if goals else ""


def read_memory(items: dict, spec: ast.Spec, constant, names, params, def_names: set) -> tuple[object, list[str]]:
    """(the memory at the start of a session or NO_STATE, the noise names)."""
    sg = one(items, "state", spec, required=False)
    memory = NO_STATE
    if sg is not None:
        if len(sg.args) != 1:
            raise SpecError(sg.span, "a state line is: state INITIAL_VALUE", 'For example: state {"count": 0}')
        memory = constant(sg.args[0])
    noise: list[str] = []
    for g in items["noise"]:
        for a in g.args:
            if not isinstance(a, ast.Var):
                raise SpecError(a.span, "noise names the uniform draws: noise u (or noise u, v)", "")
            if a.name in names or a.name in params or a.name in def_names or a.name in RESERVED_NAMES \
                    or a.name in noise:
                raise SpecError(a.span, f"noise {a.name} clashes with another name", "Choose another name.")
            noise.append(a.name)
    return memory, noise


def read_next(items: dict, spec: ast.Spec, memory) -> ast.Expr | None:
    """The memory after a query: `next EXPR` over f's arguments and `output` (None: the memory never changes)."""
    ng = one(items, "next", spec, required=False)
    if ng is None:
        return None
    if memory is NO_STATE:
        raise SpecError(ng.span, "next needs a state line: the memory at the start of a session",
                        'Add, for example: state {"count": 0}')
    if len(ng.args) != 1:
        raise SpecError(ng.span, "next takes one expression (the memory after a query)", "")
    return ng.args[0]


def read_answer(items: dict, spec: ast.Spec, constant, goal: bool) -> tuple[Domain | None, bool]:
    """(the domain a goal box's target is written in, whether the box asks for a program)."""
    g = one(items, "answer", spec, required=False)
    if g is None:
        return None, False
    if len(g.args) != 1:
        raise SpecError(g.span, "an answer line is: answer program, or (a goal box) answer DOMAIN", "")
    a = g.args[0]
    if isinstance(a, ast.Var) and a.name == "program":
        if goal:
            raise SpecError(g.span, "a goal box is answered with its target, not a program", "")
        return None, True
    if not goal:
        raise SpecError(g.span, "answer DOMAIN is for goal boxes (the domain their target is written in)",
                        "Write: answer program, for a box whose answer is a program.")
    return domain_of(a, constant), False


def read_solution(items: dict, spec: ast.Spec, program_answer: bool) -> str:
    """The reference program of a box answered with a program."""
    g = one(items, "solution", spec, required=program_answer)
    if g is None:
        return ""
    if not program_answer:
        raise SpecError(g.span, "solution is the reference program of a box with `answer program`", "")
    return note(g.args, 0, "solution")


def read_samples(items: dict, inputs, constant) -> tuple:
    """The `sample_input` lines: example inputs (one value per input) for the manual and the probe generator."""
    out = []
    for g in items["sample_input"]:
        if len(g.args) != len(inputs):
            raise SpecError(g.span, f"this sample gives {len(g.args)} value(s) for {len(inputs)} input(s)",
                            "Give one value per input, in order.")
        values = []
        for (name, d), a in zip(inputs, g.args):
            v = constant(a)
            why = d.check(v)
            if why:
                raise SpecError(a.span, f"this sample input is outside the domain: {name}: {why}", "")
            values.append(d.coerce(v))
        out.append(tuple(values))
    return tuple(out)


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


def hidden_variants(spec: ast.Spec, params: dict, mc: MetaCompiler, unit_params: list[str], hidden_expr,
                    next_expr: ast.Expr | None = None):
    """(applied rule ids -> f, applied rule ids -> the memory update or None), each compiled with those rules'
    overrides (each set compiled once): `next` may call the ops too, so a rule may change what a box remembers."""
    cache: dict = {}

    def both(applied: frozenset) -> tuple:
        applied = frozenset(applied)
        if applied not in cache:
            m = MetaCompiler(params, dict(mc.defs))
            compile_definitions(m, spec, applied)
            nxt = None if next_expr is None else m.unit("next", unit_params + ["output"], next_expr)
            cache[applied] = (m.unit("hidden", unit_params, hidden_expr), nxt)
        return cache[applied]

    return (lambda applied: both(applied)[0]), (lambda applied: both(applied)[1])


def read_predicates(items: dict, mc: MetaCompiler, names: list[str]) -> tuple:
    """((Unit, reason), ...): the input constraints."""
    predicates = []
    for g in items["predicate"]:
        if not 1 <= len(g.args) <= 2:
            raise SpecError(g.span, "a predicate line is: predicate EXPR, \"reason\"", "")
        reason = note(g.args, 1, "predicate's reason") or "the input is not admitted"
        predicates.append((mc.unit("predicate", names, g.args[0]), reason))
    return tuple(predicates)


def read_grading(items: dict, spec: ast.Spec, constant) -> Grading:
    """How answers are compared: `within X absolute|relative` and `normalise spaces|case`."""
    tolerance, mode = 0.0, "relative"
    tol = one(items, "within", spec, required=False)
    if tol is not None:
        if not 1 <= len(tol.args) <= 2:
            raise SpecError(tol.span, "a within line is: within X absolute (or relative)",
                            "For example: within 0.01 absolute")
        tolerance = constant(tol.args[0])
        if type(tolerance) not in (int, float) or tolerance < 0:
            raise SpecError(tol.span, "within takes a non-negative number", "For example: within 0.01 absolute")
        if len(tol.args) == 2:
            mode = chosen_word(tol.args[1], "tolerance mode", TOLERANCE_MODES, "Write absolute or relative.")
    normalise = chosen_words(items["normalise"], "normalisation", NORMALISATIONS, "Normalisations: spaces, case.")
    return Grading(float(tolerance), mode, normalise)


def read_rule_witnesses(spec: ast.Spec, inputs, constant, defaults: tuple = ()) -> tuple:
    """((rule id, (sequence, ...)), ...): each rule's `witness Q1, Q2, ...` lines, a sequence of queries sent in
    a fresh session that tells the rule apart. A query is its input's value (a box of one input) or the list
    of its values, one per input (a box of several); the optional last inputs may be left out."""
    out = []
    for r in spec.rules:
        seqs = []
        for f in r.fields:
            if f.key != "witness":
                continue
            if not f.args:
                raise SpecError(f.span, f"rule {r.id}'s witness sends no query",
                                "Write the queries in order: witness Q1, Q2, ... (each an input value).")
            seq = []
            for a in f.args:
                if len(inputs) == 1:
                    seq.append(query_values(f, [a], inputs, constant, defaults))
                    continue
                v = constant(a)
                if not isinstance(v, list):
                    raise SpecError(a.span, f"a query of rule {r.id}'s witness is a list of one value per input "
                                    f"({', '.join(n for n, _ in inputs)})", "For example: witness [1, 2], [3, 4]")
                seq.append(query_values(f, [ast.Const(span=a.span, value=x) for x in v], inputs, constant, defaults))
            for a, values in zip(f.args, seq):
                for (name, domain), v in zip(inputs, values):
                    why = domain.check(v)
                    if why:
                        raise SpecError(a.span, f"a query of rule {r.id}'s witness is not an input: {name}: {why}",
                                        "A witness is queries an agent could send: values in the inputs' domains.")
            seqs.append(tuple(seq))
        if seqs:
            out.append((r.id, tuple(seqs)))
    return tuple(out)


def read_hypotheses(items: dict, mc: MetaCompiler, unit_params: list[str]) -> tuple:
    """((name, Unit), ...): the simple hypotheses the tests must refute."""
    hypotheses = []
    for i, g in enumerate(items["hypothesis"], 1):
        if not 1 <= len(g.args) <= 2:
            raise SpecError(g.span, "a hypothesis line is: hypothesis EXPR, \"name\"", "")
        hypotheses.append((note(g.args, 1, "hypothesis's name") or f"hypothesis {i}",
                           mc.unit(f"hypothesis{i}", unit_params, g.args[0])))
    return tuple(hypotheses)


def goal_marks(gg) -> tuple[str, ...]:
    """The words after a goal's description: `again` (the target of an earlier goal, another puzzle) and
    `defect` (a published defect kept: the solver's failure on this goal is a warning)."""
    if len(gg.args) > 2:
        note(gg.args, 1, "goal's description")
    marks = tuple(chosen_word(a, "goal mark", GOAL_MARKS, "Write again or defect after the description.")
                  for a in gg.args[2:])
    if len(set(marks)) != len(marks):
        raise SpecError(gg.span, "a goal mark is given twice", "Write each of again, defect at most once.")
    return marks


def read_tests(items: dict, spec: ast.Spec, goals, targets, inputs, mc: MetaCompiler,
               constant, defaults: tuple = ()) -> tuple[TestCase, ...]:
    """The test samples, their answers not yet computed (a goal box: one test per target)."""
    tests: list[TestCase] = []
    if goals:
        if items["test"]:
            raise SpecError(items["test"][0].span, "a goal box is tested on its targets, not on test lines",
                            "Remove the test lines (or the goals).")
        for k, (gg, target) in enumerate(zip(goals, targets), 1):
            tests.append(TestCase("goal" if len(goals) == 1 else f"goal{k}", (), target, gg.span.line,
                                  question=note(gg.args, 1, "goal's description"), marks=goal_marks(gg)))
        return tuple(tests)
    for i, g in enumerate(items["test"], 1):
        if g.name:
            tests.append(read_test_block(g, inputs, mc, constant, defaults=defaults))
        else:
            tests.append(TestCase(f"t{i}", query_values(g, g.args, inputs, constant, defaults), None, g.span.line))
    if not tests:
        raise SpecError(spec.span, "this box has no test sample", "Add test lines (or a goal for a puzzle).")
    ids = [t.id for t in tests]
    for t, g in zip(tests, items["test"]):
        if ids.count(t.id) > 1:
            raise SpecError(g.span, f"two tests are named {t.id}", "Give each test block its own name.")
    return tuple(tests)


def query_values(g, args, inputs, constant, defaults: tuple = ()) -> tuple:
    """One query's values (one per input, in order; the optional last ones may be left out), coerced to the
    domains."""
    names = [n for n, _ in inputs]
    fewest = len(names) - len(defaults)
    if not fewest <= len(args) <= len(names):
        want = str(len(names)) if not defaults else f"{fewest} to {len(names)}"
        raise SpecError(g.span, f"this test gives {len(args)} value(s) for {want} input(s) "
                        f"({', '.join(names)})", "Give one value per input, in order.")
    given = tuple(inputs[k][1].coerce(constant(a)) for k, a in enumerate(args))
    return given + tuple(defaults[len(defaults) - (len(names) - len(args)):])


def read_test_block(g, inputs, mc: MetaCompiler, constant, what: str = "test", defaults: tuple = ()) -> TestCase:
    """`test NAME "question" { given ... ask ... extract ... }`: queries in a fresh session, then the asked one
    (`what`: the block's word in errors, test or example)."""
    given, ask, extract = [], None, None
    for f in g.fields:
        if f.key not in TEST_FIELDS:
            raise SpecError(f.span, f"unknown {what} field {f.key!r}",
                            did_you_mean(f.key, TEST_FIELDS).strip() or f"{what.capitalize()} fields: given, ask, extract.")
        if f.key == "given":
            given.append(query_values(f, f.args, inputs, constant, defaults))
        elif f.key == "ask":
            if ask is not None:
                raise SpecError(f.span, f"a {what} asks one query", "Send the others with given lines.")
            ask = query_values(f, f.args, inputs, constant, defaults)
        else:
            if extract is not None or len(f.args) != 1:
                raise SpecError(f.span, f"a {what} has at most one extract EXPR (over `output`)", "")
            extract = mc.unit(f"{g.name}.extract", ["output"], f.args[0])
    if ask is None:
        raise SpecError(g.span, f"{what} {g.name} asks nothing", "Add: ask VALUE (one value per input).")
    return TestCase(g.name, ask, None, g.span.line, tuple(given), extract, g.note)


def read_examples(spec: ast.Spec, inputs, mc: MetaCompiler, constant, defaults: tuple = ()) -> tuple[tuple[TestCase, ast.Span], ...]:
    """`example E1 "what it shows" { given ...  ask ... }`: worked examples whose outputs f computes (each in
    a fresh session); their answers are not yet computed."""
    out = []
    for e in spec.examples:
        if e.program:
            raise SpecError(e.program_span, f"example {e.id}: a box's worked example is an input, not a program",
                            "Write its queries: example E1 \"...\" { ask VALUE }, with given lines before it "
                            "for a box with memory.")
        block = ast.GenericItem(key="example", args=(), span=e.span, name=e.id, note=e.prompt, fields=e.fields)
        out.append((read_test_block(block, inputs, mc, constant, "example", defaults), e.span))
    ids = [c.id for c, _ in out]
    for c, span in out:
        if ids.count(c.id) > 1:
            raise SpecError(span, f"two examples are named {c.id}", "Give each example its own name.")
    return tuple(out)


def worked_examples(w: BlackBoxWorld, examples) -> tuple[tuple[TestCase, str], ...]:
    """((example, its output rendered), ...): each computed by the true f; an example that asks what a test
    asks (its answer would be given away) or that f fails on is a located error."""
    out = []
    for case, span in examples:
        queries = [list(q) for q in case.given + (case.values,)]
        same_test = next((t.id for t in w.tests if same([list(q) for q in t.given + (t.values,)], queries)), None)
        if same_test is not None and not w.has_goal:
            raise SpecError(span, f"example {case.id} sends the queries of test {same_test}: the manual would "
                            "give its answer away", "Show the box on another input.")
        refused = not_admitted(w, case) or ("" if w.stateful else
                                            next((f"its input is refused: {why}" for why in
                                                  map(w.admits, case.given + (case.values,)) if why), ""))
        if refused:
            raise SpecError(span, f"example {case.id} cannot be shown: {refused}",
                            "An example's queries must be inputs the box admits.")
        value = recall(f"example:{case.id}", lambda case=case, span=span: example_output(w, case, span),
                       encode_value, decode_value)
        out.append((case, render(value)))
    return tuple(out)


def example_output(w: BlackBoxWorld, case: TestCase, span):
    """A worked example's output under the true f; its failure is the example's SpecError."""
    try:
        return w.answer_of(case)
    except EvalError as err:
        raise SpecError(span, f"the hidden function fails on example {case.id}: {err.message}",
                        more_steps(err) or "Each example's output is computed by f.") from None


def not_admitted(w: BlackBoxWorld, case: TestCase) -> str:
    """The first value of a test's queries that its input's domain does not admit, said; "" if none."""
    queries = [("given", q) for q in case.given] + [("ask", case.values)]
    for key, values in queries:
        for (name, domain), v in zip(w.inputs, values):
            try:
                domain.accept(v, name)
            except InputError as e:
                return f"its {key} value {show([v])[1:-1]} is not admitted ({e})"
    return ""


def answer_tests(w: BlackBoxWorld, items: dict) -> tuple[TestCase, ...]:
    """Every test with its answer computed by f (each in a fresh session of its own)."""
    if w.has_goal:
        return w.tests
    out = []
    for case, g in zip(w.tests, items["test"]):
        want = recall(f"answer:{case.id}", lambda case=case, g=g: answer_of_test(w, case, g), encode_value,
                      decode_value)
        out.append(attrs.evolve(case, expected=want))
    return tuple(out)


def answer_of_test(w: BlackBoxWorld, case: TestCase, g):
    """One test's answer computed by f; its failure is the test line's SpecError."""
    try:
        return w.answer_of(case)
    except EvalError as err:
        outside = not_admitted(w, case)
        if outside:
            raise SpecError(g.span, f"the hidden function fails on this test ({err.message}): {outside}",
                            "A test's given and asked values must lie in the inputs' domains.") from None
        raise SpecError(g.span, f"the hidden function fails on this test: {err.message}",
                        more_steps(err) or "Every test's answer is computed by f.") from None


def box_tasks(w: BlackBoxWorld, base_unit: Unit) -> tuple[Task, ...]:
    """One task per test (or one program task), with its reference answer and, for a flawed manual, the
    manual's answer."""
    labels = box_labels(w.family, w.difficulty)
    if w.program_answer:
        names = ", ".join(n for n, _ in w.inputs)
        prompt = (f"Write a program that computes the box's output: one expression of the box's expression "
                  f"language, a function of the input(s) such as `fn({names}) => ...` or an expression over "
                  f"{names}. It is run on {len(w.tests)} unseen input(s) and scores the share it answers "
                  f"right. {PROGRAM_LANGUAGE} Reply with the program only, in a fenced code block.")
        return (Task("program", w.family, prompt, "program", labels, w.solution_program, ""),)
    tasks = []
    for c in w.tests:
        naive = ""
        if w.rules and not w.has_goal:
            naive = recall(f"naive:{c.id}", lambda c=c: naive_answer(w, c, base_unit), str, decode_text)
        if w.has_goal:
            what = c.question or w.goal_note
            shape = w.answer_domain.describe() if w.answer_domain is not None else \
                f"as an input ({w.inputs[0][1].describe()})"
            prompt = f"What is {what}? Reply with it only, written {_as(shape)}, in a fenced code block."
            solution = w.format_answer(c.expected)
        else:
            prompt = test_prompt(w, c)
            solution = render(c.expected)
        tasks.append(Task(c.id, w.family, prompt, "target" if w.has_goal else "output", labels, solution, naive))
    return tuple(tasks)


def naive_answer(w: BlackBoxWorld, c: TestCase, base_unit: Unit) -> str:
    """A test's answer under the documented (manual's) f, rendered; "" where that f fails."""
    try:
        return render(w.answer_of(c, base_unit, w.next_under(frozenset())))
    except EvalError:
        return ""


PROGRAM_LANGUAGE = ("The language: numbers, \"strings\", true/false/none, [lists], {maps}; operators + - * / // "
                    "% ** == != < <= > >= and or not; `if C then A else B`, `let x = E in BODY`, `fn(x) => BODY`; "
                    "builtins such as abs min max sum len get range map filter fold sqrt exp log sin cos "
                    "floor round (docs/language.md lists them all).")


def _as(shape: str) -> str:
    return shape if shape.startswith("as ") else f"as {shape}"


def test_prompt(w: BlackBoxWorld, c: TestCase) -> str:
    """What a test asks: the output for an input, or (a box with memory) after earlier queries."""
    tail = " Reply with the answer only, written the way the box writes its outputs, in a fenced code block."
    if not c.given and c.extract is None:
        lead = "In a fresh session, what" if w.stateful else "What"
        return f"{lead} does the box output for the input {w.format(c.values)}?{tail}"
    sent = ", then ".join(f"`{w.format(v)}`" for v in c.given + (c.values,))
    question = c.question or "What does it output for the last input?"
    return f"In a fresh session the box is sent {sent}. {question}{tail}"


# ---------------------------------------------------------------- base, rules and herrings


def op_dependent_defs(spec: ast.Spec) -> tuple[ast.Def, ...]:
    """The defs that call a base op, directly or through other defs (in spec order): compiled once per set
    of applied rules, since what they compute changes with the ops beneath them."""
    ops = {d.name for d in spec.base}
    found: set[str] = set()
    changed = True
    while changed:  # a def reaching a dependent def depends on the ops too
        changed = False
        for d in spec.defs:
            if d.name not in found and any(mentions(d.body, n) for n in ops | found):
                found.add(d.name)
                changed = True
    return tuple(d for d in spec.defs if d.name in found)


def box_compiler(spec: ast.Spec, params: dict) -> tuple[MetaCompiler, tuple[ast.Def, ...]]:
    """(the compiler of the params and the defs that call no op, the defs that call ops); every def name once."""
    dependent = op_dependent_defs(spec)
    names = {d.name for d in dependent}
    mc = meta_compiler(attrs.evolve(spec, defs=tuple(d for d in spec.defs if d.name not in names)), params)
    for d in dependent:
        if d.name in mc.defs or d.name in params or sum(x.name == d.name for x in dependent) > 1:
            raise SpecError(d.span, f"{d.name} is defined twice", "Give each def a unique name.")
    return mc, dependent


def layers_of(spec: ast.Spec, applied: frozenset) -> dict[str, list]:
    """op name -> the applied rules on it, in spec order (each a layer over the ones before it)."""
    layers: dict[str, list] = {}
    for r in spec.rules:
        if r.override is not None and r.id in applied:
            layers.setdefault(r.override.name, []).append(r)
    return layers


def compile_definitions(mc: MetaCompiler, spec: ast.Spec, applied: frozenset) -> None:
    """Compile the base ops into `mc`, each under the applied rules on it, and the defs that call ops.

    Rules on one op stack in spec order: a rule body's prior(...) is the op under the rules before it
    (or the base line); a rule that does not call prior hides them. Ops and the defs that call them are
    compiled on first use, so a def may call any op and an op any def (docs/language.md, box worlds)."""
    layers = layers_of(spec, applied)
    for d in op_dependent_defs(spec):
        mc.add_def(d)
    for d in spec.base:
        mc.defs[d.name] = pending_op(mc, d, layers.get(d.name, []))
    mc.finish()
    for d in spec.base:  # an op nothing called yet: compiled now, so that its errors point at the spec
        if mc.defs[d.name].pending is not None:
            mc.defs[d.name].pending()


def pending_op(mc: MetaCompiler, base: ast.Definition, rules: list) -> Unit:
    """The Unit of one op, compiled (with its layers) on first use (check_op_cycles keeps ops from recursing)."""
    u = Unit(base.name, len(base.params), False, 0, None, False)

    def compile_now():
        made = op_layer(mc, base, rules)
        u.nslots, u.uses_ctx, u.reads, u.pending = made.nslots, made.uses_ctx, made.reads, None
        u.body = made.body

    u.pending = compile_now
    return u


def check_op_cycles(spec: ast.Spec) -> None:
    """No op reaches itself through ops and defs (its base line or any rule on it): the layers of an op are
    compiled beneath each other, so an op is not recursive; a def is (the recursion goes there)."""
    bodies: dict[str, list] = {d.name: [d.body] for d in spec.defs}
    for d in spec.base:
        bodies[d.name] = [d.body] + [r.override.body for r in spec.rules
                                     if r.override is not None and r.override.name == d.name]
    calls = {n: {m for m in bodies if any(mentions(b, m) for b in bs)} for n, bs in bodies.items()}
    for d in spec.base:
        seen, todo = set(), list(calls[d.name])
        while todo:
            n = todo.pop()
            if n == d.name:
                raise SpecError(d.span, f"op {d.name} calls itself (directly or through a def)",
                                "Ops do not recurse: write the recursion in a def and call the def from the op.")
            if n not in seen:
                seen.add(n)
                todo += calls[n]


def op_layer(mc: MetaCompiler, base: ast.Definition, rules: list) -> Unit:
    """The op under these rules (the last on top): the top rule's body, its prior(...) the layers beneath,
    its base(...) the base line alone (unless the world has a def named base, which keeps its meaning)."""
    if not rules:
        return mc.unit(base.name, [p.name for p in base.params], base.body)
    top = rules[-1].override
    extra = {}
    if mentions(top.body, BASE) and BASE not in mc.defs:
        extra[BASE] = renamed(op_layer(mc, base, []), BASE)
    if mentions(top.body, PRIOR):
        extra[PRIOR] = renamed(op_layer(mc, base, rules[:-1]), PRIOR)
    elif len(rules) > 1:  # the top layer hides every layer beneath it
        return op_layer(mc, base, rules[-1:])
    if not extra:
        return mc.unit(base.name, [p.name for p in top.params], top.body)
    return MetaCompiler(mc.constants, {**mc.defs, **extra}, mc.extra_vars, mc.compiler).unit(
        base.name, [p.name for p in top.params], top.body)


def renamed(u: Unit, name: str) -> Unit:
    """A compiled layer of an op as a rule body calls it: prior(...) or base(...)."""
    return Unit(name, u.arity, False, u.nslots, u.body, u.uses_ctx, reads=u.reads)


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
            if f.key != "witness":
                raise SpecError(f.span, f"unknown rule field {f.key!r}",
                                did_you_mean(f.key, RULE_FIELDS).strip() or "Rule fields: statement, equation, witness.")
        if r.override is None:
            raise SpecError(r.span, f"rule {r.id} overrides nothing",
                            "Start the rule with the base line it replaces: op NAME(...) = ...")
    check_definitions(spec, require_equation=False, stacked=True)


KIND = Kind("blackbox", compile_spec, "a hidden function answered query by query; tests ask its outputs",
            cross_checks=cross_checks, faces=(TurnShotFace,))
