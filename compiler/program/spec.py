"""The program kind's spec reader: a Spec -> a ProgramWorld (params, defs, surface, examples, tasks).

Every semantic check raises a SpecError pointing into the spec; a spec that
compiles is a world whose examples run and whose tasks are well-formed.
"""
from __future__ import annotations

import attrs

from worldspec import ast
from worldspec.compiler.api import Budget, Example, Kind, MilestoneFace, Rule, Task
from worldspec.compiler.common import (HOST_LIMITS, allow_reason, check_definitions, check_type, draw_params,
                                       field_text, interpolate, meta_compiler, read_budget, why)
from worldspec.compiler.program import kernel
from worldspec.compiler.program.control import check_control_rules
from worldspec.compiler.program.manual import render_manual
from worldspec.compiler.program.semantics import HOOK_PARAMS, SemanticsBuilder
from worldspec.compiler.program.surface import (Surface, Surfaces, build_surface, check_syntax_rules,
                                                read_syntax_rule)
from worldspec.compiler.program.world import ProgramWorld, RuleData, TaskData
from worldspec.diagnostics import Collector, SpecError, did_you_mean, raise_all, source_line
from worldspec.meta import MetaCompiler
from worldspec.values import Ctx, EvalError

PROGRAM_SECTIONS = ("world", "language", "kind", "seed", "summary", "include", "param", "def", "syntax", "base",
                    "rule", "herring", "manual", "example", "task", "budget")
TASK_FIELDS = ("prompt", "input", "case", "expect", "solution", "naive", "function", "predict", "program",
               "tolerance", "allow")
RULE_FIELDS = ("statement", "equation", "witness", "allow")
# Fields read as one string each; `allow` declares a certification exception with its reason.
RULE_TEXT_FIELDS = ("witness", "allow")
TASK_TEXT_FIELDS = ("allow",)


def compile_spec(spec: ast.Spec, seed: int | None = None) -> ProgramWorld:
    """Compile a parsed program spec into its true world (the given seed, or the declared one)."""
    # Independent items are checked one by one and their errors reported together (issue 24), in stages:
    # the items, then the definitions (defs, base lines, rules), then examples and tasks, which run on them.
    reject_foreign_items(spec)
    seed = spec.seed if seed is None else seed
    params = draw_params(spec, seed)
    mc = meta_compiler(spec, params)
    mc.unreachable = {d.name: (
        f"an op of this world, which the meta-language (defs, base lines, rule bodies, expect) of a program world "
        "cannot call", f"Write what {d.name} computes with builtins and defs (a def both bodies call shares it); "
        "a rule reaches the op it changes as prior(...) or base(...). (A box world's defs may call its ops.)")
        for d in spec.base if d.kind == "op"}
    syntax_span = spec.syntax[0].span if spec.syntax else spec.span
    surface = build_surface(spec.syntax, syntax_span)  # the syntax block's: the manual's world parses with it
    check_definitions(spec, hooks=HOOK_PARAMS, stacked=True, syntax_rules=True)
    surfaces = read_syntax_rules(spec, surface, syntax_span)
    for d in spec.base:
        if d.kind == "op" and d.name in surface.keywords:
            raise SpecError(d.span, f"operator {d.name} is also a keyword of the syntax block",
                            "Rename the operator or the keyword.")
    check_operator_ops(spec, surface)
    builder = SemanticsBuilder(mc, spec.base, tuple(r for r in spec.rules if r.override is not None))
    builder.compile_all()  # every body now, so that errors point at the spec
    check_control_rules(builder)  # a jump, passes or branch_order value the kernel refuses, found now
    budget = program_budget(spec)
    world = ProgramWorld(
        name=spec.name, version=spec.version, language=spec.language, kind=spec.kind, seed=seed, default_seed=spec.seed,
        summary=interpolate(spec.summary, params), params=tuple(params.items()),
        manual=render_manual(spec, surface, params, budget), examples=(), tasks=(),
        rules=tuple(perturbed_rule(r, params) for r in spec.rules),
        herrings=tuple(herring(spec, h) for h in spec.herrings), budget=budget,
        surface=surfaces.for_rules(r.id for r in spec.rules), surfaces=surfaces, builder=builder, task_data={},
        sem=builder.build(r.id for r in spec.rules), source=spec.file)
    found = Collector()
    examples = []
    for e in spec.examples:
        with found.item():
            examples.append(read_example(world, e, params))
    with found.item():
        task_data = read_tasks(world, spec, mc, params)
    data = {}
    for r in spec.rules:
        with found.item():
            data[r.id] = rule_data(world, r, params)
    found.raise_any()
    world = attrs.evolve(world, examples=tuple(examples), task_data=task_data, rule_data=data)
    task_data = with_predictions(world)
    return attrs.evolve(world, tasks=tuple(d.task for d in task_data.values()), task_data=task_data)


def reject_foreign_items(spec: ast.Spec) -> None:
    """A program world has no kind-specific items: name the section or field a typo meant (every one)."""
    errors, lines = [], set()
    for g in spec.generic:
        # a mistyped section's other words read as more items (`tsak T2 band apply {`): its line once
        if (g.span.file, g.span.line) in lines:
            continue
        lines.add((g.span.file, g.span.line))
        errors.append(SpecError(g.span, f"unknown section {g.key!r} in a {spec.kind} world",
                                did_you_mean(g.key, PROGRAM_SECTIONS).strip()
                                or "Sections: " + ", ".join(PROGRAM_SECTIONS) + "."))
    for r in spec.rules:
        if r.override is None and r.syntax is None:
            errors.append(SpecError(r.span, f"rule {r.id} overrides nothing",
                                    "Start the rule with the base line it replaces: op NAME(...) = ..., or "
                                    'with the operator entry it replaces: syntax infix "- SUB right 10".'))
        if r.syntax is not None and r.equation:
            errors.append(SpecError(r.equation_span, f"rule {r.id} replaces a syntax entry: its entry is its "
                                    "equation", 'Remove the equation line; a report states the entry, "- NEG 50".'))
        errors += [SpecError(f.span, f"unknown rule field {f.key!r}", did_you_mean(f.key, RULE_FIELDS).strip()
                             or "Rule fields: " + ", ".join(RULE_FIELDS) + ".")
                   for f in r.fields if f.key not in RULE_TEXT_FIELDS]
    for e in spec.examples:
        errors += [SpecError(f.span, f"unknown example field {f.key!r}", 'An example holds program """...""".')
                   for f in e.fields]
        if not e.program:
            errors.append(SpecError(e.span, f"example {e.id} has no program", 'Add program """...""".'))
    for t in spec.tasks:
        errors += [SpecError(f.span, f"unknown task field {f.key!r}", did_you_mean(f.key, TASK_FIELDS).strip()
                             or "Task fields: " + ", ".join(TASK_FIELDS) + ".")
                   for f in t.extra if f.key not in TASK_TEXT_FIELDS]
    raise_all(errors)


def program_budget(spec: ast.Spec) -> Budget:
    """The budget block; unit costs override the defaults one by one."""
    costs = dict(Budget().unit_costs)
    costs.update(dict(spec.unit_costs))
    return read_budget(spec, tuple(sorted(costs.items())))


def read_syntax_rules(spec: ast.Spec, surface: Surface, span) -> Surfaces:
    """The syntax rules (each an operator entry with another precedence), checked, and the surfaces of
    the variants the world runs: the true world's and each knockout's tables must be grammars."""
    changes, by_entry = [], {}
    found = Collector()
    for r in spec.rules:
        if r.syntax is None:
            continue
        with found.item():
            c = read_syntax_rule(r.id, r.syntax, surface)
            if c.index in by_entry:
                raise SpecError(r.syntax.span, f"{c.operator.kind} {c.operator.symbol!r} is replaced by both "
                                f"{by_entry[c.index]} and {r.id}", "Each operator entry may be replaced by one rule.")
            by_entry[c.index] = r.id
            changes.append(c)
    found.raise_any()
    surfaces = Surfaces(surface, tuple(changes))
    ids = {r.id for r in spec.rules}
    check_syntax_rules(surfaces, [ids] + [ids - {c.rule} for c in changes], span)
    return surfaces


def perturbed_rule(r: ast.RuleDecl, params: dict) -> Rule:
    """A rule as the world lists it (a discovery target); a syntax rule's target is its entry's kind and
    symbol (`prefix -`), its equation the entry (`- NEG 50`)."""
    if r.syntax is not None:
        kind, symbol = r.syntax.key, r.syntax.value.split()[0]
        return Rule(id=r.id, title=interpolate(r.title, params), target=f"{kind} {symbol}", herring=False,
                    statement=interpolate(r.statement, params), equation=r.syntax.value, params=())
    return Rule(id=r.id, title=interpolate(r.title, params), target=r.override.target, herring=False,
                statement=interpolate(r.statement, params), equation=interpolate(r.equation, params),
                params=tuple(p.name for p in r.override.params))


def herring(spec: ast.Spec, h: ast.HerringDecl) -> Rule:
    """A herring as the world lists it: a base operator whose name misleads."""
    target = next((d.target for d in spec.base if d.name == h.target), h.target)
    return Rule(id=h.id, title=h.note, target=target, herring=True, statement=h.note, equation="")


# ---------------------------------------------------------------- certification evidence and exceptions


def rule_data(world: ProgramWorld, r: ast.RuleDecl, params: dict) -> RuleData:
    """A rule's witnesses (each parsed and within one call's budget) and its declared exception."""
    witnesses = []
    for f in r.fields:
        if f.key != "witness":
            continue
        text = interpolate(field_text(f), params).rstrip()
        check_parses(world, text, f.span, f"rule {r.id}'s witness does not parse")
        units, cap = world.charge(text), world.budget.units_per_call
        if units > cap:
            raise SpecError(f.span, f"rule {r.id}'s witness costs {units} probe units; the limit is {cap} per call",
                            "A witness is a probe an agent could run: keep it within one call's budget.")
        witnesses.append(text)
    return RuleData(witnesses=tuple(witnesses), allow=allow_reason(r.fields, f"rule {r.id}"))


# ---------------------------------------------------------------- examples and tasks


def program_error(span: ast.Span, what: str, e: kernel.ProgramError, surface: Surface | None = None) -> SpecError:
    """A program in the spec that does not parse, located at its line inside the spec."""
    line = span.line + max(e.line - 1, 0) if span.line else span.line
    if span.line and source_line(span.file, span.line).rstrip().endswith('"""'):
        line += 1  # a triple-quoted block starts on the next line
    col = span.col
    program_line = e.source_line.strip()
    if line and e.col and program_line:  # the caret under the token, where the spec line holds it as written
        at = source_line(span.file, line).find(program_line)
        if at >= 0:
            col = at + 1 + max(e.col - 1 - (len(e.source_line) - len(e.source_line.lstrip())), 0)
    return SpecError(ast.Span(span.file, line, col), f"{what}: {e.message}",
                     switched_off(surface, e) or "Programs in a spec are written in the world's own syntax block.")


# A literal the program grammar has only when the syntax block switches it on: (character, setting, what).
SWITCHED_LITERALS = (("[", "list", "List literals"), ("{", "map", "Map literals"))


def switched_off(surface: Surface | None, e: kernel.ProgramError) -> str:
    """The hint for a program error at a literal the world has switched off ("" otherwise): the setting."""
    if surface is None or not e.message.startswith("unexpected character"):
        return ""
    for char, key, what in SWITCHED_LITERALS:
        if e.message == f"unexpected character {char!r}" and not surface.has(key):
            return (f"{what} are off in this world: its syntax block turns them on with `{key} on` "
                    f"(see docs/language.md, syntax), or build the value with an op of the base.")
    before = e.source_line[e.col - 2:e.col - 1] if e.col > 1 else ""
    if e.message == "unexpected character '.'" and before.isdigit() and not surface.has("float"):
        return ("Float literals are off in this world: its syntax block turns them on with `float on` "
                "(see docs/language.md, syntax).")
    return ""


def check_parses(world: ProgramWorld, text: str, span: ast.Span, what: str) -> None:
    """Raise a located SpecError when a program in the spec does not compile."""
    try:
        world.compile_program(text)
    except kernel.ProgramError as err:
        raise program_error(span, what, err, world.surface) from None


def read_example(world: ProgramWorld, e: ast.ExampleDecl, params: dict) -> Example:
    """An example with the output the true world prints."""
    program = interpolate(e.program, params)
    check_parses(world, program, e.program_span, f"example {e.id} does not parse")
    outcome = world.execute(program)
    out = "\n".join(list(outcome.lines) + ([outcome.error] if outcome.error else []))
    return Example(id=e.id, band=dict(e.labels).get("band", ""), prompt=interpolate(e.prompt, params),
                   program=program.rstrip(), output=out)


def task_prompt(surface: Surface, t: ast.TaskDecl, params: dict, inputs) -> str:
    """The full text an agent sees for one task: the author's prompt and the answer's shape."""
    out = interpolate(t.prompt, params).strip()
    if t.predict:
        return (f"{out}\n\nWhat exactly does this program print? Answer with its output only.\n\n"
                f"```\n{interpolate(t.program, params).rstrip()}\n```")
    names = ", ".join(i.name for i in inputs)
    typed = ", ".join(f"{i.name} ({i.type})" for i in inputs)
    if t.function:
        call = f"{surface.word('output')}({t.function}({names}))"
        return (f"{out}\n\nDefine the function {t.function}({names}). "
                f"It is graded by running your program followed by `{call}` on private inputs: {typed}.")
    if inputs:
        return (f"{out}\n\nWrite a complete program. Before it runs, these variables are already set to "
                f"private test values: {typed}. It must print exactly the result.")
    return f"{out}\n\nWrite a complete program that prints exactly the result."


def read_tasks(world: ProgramWorld, spec: ast.Spec, mc: MetaCompiler, params: dict) -> dict[str, TaskData]:
    """Task id -> grading data; predictions get their answers later (with_predictions)."""
    out: dict[str, TaskData] = {}
    seen: set[str] = set()
    found = Collector()  # each task is checked: one run reports every task's error
    for t in spec.tasks:
        with found.item():
            if t.id in seen:
                raise SpecError(t.span, f"task id {t.id} is used twice", "Task ids must be unique.")
            seen.add(t.id)
            labels = dict(t.labels)
            if "band" not in labels:
                raise SpecError(t.span, f"task {t.id} has no band", "Write: task ID band apply { ... }")
            if not t.prompt:
                raise SpecError(t.span, f"task {t.id} has no prompt", 'Add prompt "..." to the task.')
            out[t.id] = (predict_task if t.predict else graded_task)(world, t, mc, params)
    found.raise_any()
    return out


def predict_task(world: ProgramWorld, t: ast.TaskDecl, mc: MetaCompiler, params: dict) -> TaskData:
    """A task whose answer is the output of a given program."""
    if not t.program:
        raise SpecError(t.span, f"predict task {t.id} has no program", 'Add program """...""".')
    if t.solutions:
        raise SpecError(t.field_span("solution"), f"predict task {t.id} takes no solution",
                        "Its reference answer is the program's output in the true world, computed by the "
                        "compiler. A wrong output a manual-trusting reader would give goes in naive \"...\".")
    program = interpolate(t.program, params)
    check_parses(world, program, t.field_span("program"), f"task {t.id}'s program does not parse")
    # the author's naive output, when given, is checked by certification (with_predictions fills it otherwise)
    task = Task(id=t.id, band=dict(t.labels)["band"], prompt=task_prompt(world.surface, t, params, ()),
                shape="predict", labels=tuple(sorted(dict(t.labels).items())), naive=interpolate(t.naive, params))
    return TaskData(task=task, inputs=(), cases=(), expected=(), function="", program=program,
                    tolerance=t.tolerance, allow=allow_reason(t.extra, f"task {t.id}"))


def graded_task(world: ProgramWorld, t: ast.TaskDecl, mc: MetaCompiler, params: dict) -> TaskData:
    """A task whose answer (a program or a function) runs on private cases."""
    if t.expect is None:
        raise SpecError(t.span, f"task {t.id} has no expect", "Add expect EXPR (the intended result).")
    if not t.solution:
        raise SpecError(t.span, f"task {t.id} has no reference solution", 'Add solution "...".')
    if not t.cases:
        raise SpecError(t.span, f"task {t.id} has no cases", "Add case lines with input values.")
    for i in t.inputs:
        check_type(i.type, t.span)
    names = [i.name for i in t.inputs]
    case_spans = [s for k, s in t.field_spans if k == "case"]
    cases, expected = [], []
    # one closure for all the cases: it runs a handful of times, where compiling natively costs more
    expect = mc.unit(f"{t.id}.expect", names, t.expect, native=False)
    for n, case in enumerate(t.cases, start=1):
        span = case_spans[n - 1]
        if len(case) != len(names):
            raise SpecError(span, f"task {t.id}: this case gives {len(case)} value(s) for "
                            f"{len(names)} input(s) ({', '.join(names) or 'none'})",
                            "Give one value per declared input, in order.")
        try:
            values = tuple(mc.constant(v) for v in case)
        except (EvalError, *HOST_LIMITS) as err:
            raise SpecError(span, f"task {t.id}: a case value fails: {why(err)}",
                            "Case values must be small, finite values.") from None
        try:
            want = expect(Ctx(), list(values))
        except (EvalError, *HOST_LIMITS) as err:
            raise SpecError(t.field_span("expect"), f"task {t.id}: expect fails on case {n}: {why(err)}",
                            "The intended result must be defined for every case.") from None
        cases.append(values)
        expected.append(want)
    solutions = tuple(interpolate(text, params) for text in t.solutions)
    solution_spans = [s for k, s in t.field_spans if k == "solution"]
    for n, (text, span) in enumerate(zip(solutions, solution_spans), start=1):
        which = "solution" if len(solutions) == 1 else f"solution {n}"
        check_parses(world, text, span, f"task {t.id}'s {which} does not parse")
    naive = interpolate(t.naive, params)
    if naive:
        check_parses(world, naive, t.field_span("naive"), f"task {t.id}'s naive does not parse")
    task = Task(id=t.id, band=dict(t.labels)["band"], prompt=task_prompt(world.surface, t, params, t.inputs),
                shape="function" if t.function else "program", labels=tuple(sorted(dict(t.labels).items())),
                solution=solutions[0], naive=naive)
    return TaskData(task=task, inputs=tuple(names), cases=tuple(cases), expected=tuple(expected),
                    function=t.function, program="", tolerance=t.tolerance, solutions=solutions,
                    allow=allow_reason(t.extra, f"task {t.id}"))


def with_predictions(world: ProgramWorld) -> dict[str, TaskData]:
    """A prediction's reference answer is the true output; its naive one the author's, or else the
    manual's world's output."""
    base = world.base_world()
    out = dict(world.task_data)
    for tid, data in out.items():
        if data.task.shape == "predict":
            task = attrs.evolve(data.task, solution=world.predicted(tid),
                                naive=data.task.naive or base.predicted(tid))
            out[tid] = attrs.evolve(data, task=task)
    return out


KIND = Kind("program", compile_spec, "a language whose manual is wrong: probes and answers are programs",
            faces=(MilestoneFace,))


def check_operator_ops(spec: ast.Spec, surface: Surface) -> None:
    """Every `infix`/`prefix` entry names an op of the base that takes its number of operands."""
    ops = {d.name: d for d in spec.base if d.kind == "op"}
    for o in surface.operators:
        d = ops.get(o.op)
        if d is None:
            raise SpecError(o.span, f"{o.kind} {o.symbol!r} calls {o.op}, which is no op of the base",
                            (did_you_mean(o.op, ops).strip() + " ").lstrip()
                            + "Declare it in the base block: the operator is surface syntax for that op.")
        n = 2 if o.kind == "infix" else 1
        required = sum(1 for p in d.params if p.default is None and not p.variadic)
        most = None if any(p.variadic for p in d.params) else len(d.params)
        if n < required or (most is not None and n > most):
            raise SpecError(o.span, f"{o.kind} {o.symbol!r} gives {o.op} {n} operand(s), but {o.op} takes "
                            f"{required if most == required else f'{required} to {most}'}",
                            f"An {o.kind} operator calls its op with {'two operands' if n == 2 else 'one operand'}.")

