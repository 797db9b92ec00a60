"""The program kind's spec reader: a Spec -> a ProgramWorld (params, defs, surface, examples, tasks).

Every semantic check raises a SpecError pointing into the spec; a spec that
compiles is a world whose examples run and whose tasks are well-formed.
"""
from __future__ import annotations

import attrs

from worldspec import ast
from worldspec.compiler.api import Kind, Budget, Example, Rule, Task
from worldspec.compiler.common import BUDGET_KEYS, HOST_LIMITS, check_definitions, check_type, draw_params, interpolate, why
from worldspec.compiler.program import kernel
from worldspec.compiler.program.manual import render_manual
from worldspec.compiler.program.semantics import SemanticsBuilder
from worldspec.compiler.program.surface import build_surface
from worldspec.compiler.program.world import ProgramWorld, TaskData
from worldspec.diagnostics import SpecError, did_you_mean, source_line
from worldspec.meta import MetaCompiler
from worldspec.values import Ctx, EvalError

PROGRAM_SECTIONS = ("world", "kind", "seed", "summary", "include", "param", "def", "syntax", "base",
                    "rule", "herring", "manual", "example", "task", "budget")
TASK_FIELDS = ("prompt", "input", "case", "expect", "solution", "naive", "function", "predict", "program",
               "tolerance")


def _task_prompt(world_surface, t: ast.TaskDecl, params: dict, decl_inputs) -> str:
    out = interpolate(t.prompt, params).strip()
    if t.predict:
        return (f"{out}\n\nWhat exactly does this program print? Answer with its output only.\n\n"
                f"```\n{interpolate(t.program, params).rstrip()}\n```")
    ins = ", ".join(f"{i.name} ({i.type})" for i in decl_inputs)
    if t.function:
        call = f"{world_surface.word('output')}({t.function}({', '.join(i.name for i in decl_inputs)}))"
        return (f"{out}\n\nDefine the function {t.function}({', '.join(i.name for i in decl_inputs)}). "
                f"It is graded by running your program followed by `{call}` on private inputs: {ins}.")
    if decl_inputs:
        return (f"{out}\n\nWrite a complete program. Before it runs, these variables are already set to "
                f"private test values: {ins}. It must print exactly the result.")
    return f"{out}\n\nWrite a complete program that prints exactly the result."


def compile_spec(spec: ast.Spec, seed: int | None = None) -> ProgramWorld:
    """Compile a parsed program spec into its true world (the given seed, or the declared one)."""
    _reject_generic(spec, PROGRAM_SECTIONS)
    seed = spec.seed if seed is None else seed
    params = draw_params(spec, seed)
    mc = MetaCompiler(params)
    for d in spec.defs:
        if d.name in mc.defs or d.name in params:
            raise SpecError(d.span, f"{d.name} is defined twice", "Give each def a unique name.")
        mc.add_def(d)
    surface = build_surface(spec.syntax, spec.syntax[0].span if spec.syntax else spec.span)
    check_definitions(spec)
    for d in spec.base:
        if d.kind == "op" and d.name in surface.keywords:
            raise SpecError(d.span, f"operator {d.name} is also a keyword of the syntax block",
                            "Rename the operator or the keyword.")
    builder = SemanticsBuilder(mc, spec.base, spec.rules)
    for d in spec.base:
        builder._op(d)  # compile every body now, so errors point at the spec
    for r in spec.rules:
        builder._op(r.override)
    budget = _budget(spec)
    rules = tuple(Rule(r.id, interpolate(r.title, params), r.override.target, False,
                       interpolate(r.statement, params), interpolate(r.equation, params),
                       tuple(p.name for p in r.override.params)) for r in spec.rules)
    herrings = tuple(Rule(h.id, h.note, _herring_target(spec, h.target), True, h.note, "", ())
                     for h in spec.herrings)
    true_sem = builder.build(r.id for r in spec.rules)
    proto = ProgramWorld(spec.name, spec.version, spec.kind, seed, spec.seed, interpolate(spec.summary, params),
                  tuple(params.items()), "", (), (), rules, herrings, budget, surface, builder, {}, true_sem,
                  spec.file)
    examples = tuple(_example(proto, e, params) for e in spec.examples)
    task_data = _tasks(proto, spec, mc, params)
    world = ProgramWorld(spec.name, spec.version, spec.kind, seed, spec.seed, proto.summary, proto.params,
                  render_manual(spec, surface, params, budget), examples,
                  tuple(d.task for d in task_data.values()), rules, herrings, budget, surface, builder,
                  task_data, true_sem, spec.file)
    # a prediction's reference answer is the true output; its naive one the manual's
    base = world.base_world()
    for tid, data in list(task_data.items()):
        if data.task.shape == "predict":
            task = attrs.evolve(data.task, solution=world.predicted(tid), naive=base.predicted(tid))
            task_data[tid] = attrs.evolve(data, task=task)
    return attrs.evolve(world, tasks=tuple(d.task for d in task_data.values()))


def _reject_generic(spec: ast.Spec, sections) -> None:
    """A program world has no kind-specific items: name the section a typo meant."""
    for g in spec.generic:
        raise SpecError(g.span, f"unknown section {g.key!r} in a {spec.kind} world",
                        did_you_mean(g.key, sections).strip() or "Sections: " + ", ".join(sections) + ".")
    for r in spec.rules:
        if r.override is None:
            raise SpecError(r.span, f"rule {r.id} overrides nothing",
                            "Start the rule with the base line it replaces: op NAME(...) = ...")
        for f in r.fields:
            raise SpecError(f.span, f"unknown rule field {f.key!r}", did_you_mean(f.key, ("statement", "equation"))
                            .strip() or "Rule fields: statement, equation.")
    for e in spec.examples:
        for f in e.fields:
            raise SpecError(f.span, f"unknown example field {f.key!r}", 'An example holds program """...""".')
        if not e.program:
            raise SpecError(e.span, f"example {e.id} has no program", 'Add program """...""".')
    for t in spec.tasks:
        for f in t.extra:
            raise SpecError(f.span, f"unknown task field {f.key!r}", did_you_mean(f.key, TASK_FIELDS).strip()
                            or "Task fields: " + ", ".join(TASK_FIELDS) + ".")


def _herring_target(spec, name):
    for d in spec.base:
        if d.name == name:
            return d.target
    return name


def _budget(spec: ast.Spec) -> Budget:
    values = {}
    spans = dict(spec.budget_spans)
    for key, v in spec.budget:
        if key not in BUDGET_KEYS:
            raise SpecError(spans.get(key, spec.span), f"unknown budget entry {key!r}", did_you_mean(key, BUDGET_KEYS).strip()
                            or "Entries: " + ", ".join(sorted(BUDGET_KEYS)) + ".")
        values[key] = v
    costs = dict(Budget().unit_costs)
    costs.update(dict(spec.unit_costs))
    b = Budget(**values, unit_costs=tuple(sorted(costs.items())))
    if "max_calls" not in values:
        b = Budget(**{**values, "max_calls": b.rounds * b.calls_per_round}, unit_costs=b.unit_costs)
    return b


def _program_error(span: ast.Span, what: str, e: kernel.ProgramError) -> SpecError:
    line = span.line + max(e.line - 1, 0) if span.line else span.line
    if span.line and source_line(span.file, span.line).rstrip().endswith('"""'):
        line += 1  # a triple-quoted block starts on the next line
    return SpecError(ast.Span(span.file, line, span.col), f"{what}: {e.message}",
                     "Programs in a spec are written in the world's own syntax block.")


def _example(world: ProgramWorld, e: ast.ExampleDecl, params: dict) -> Example:
    program = interpolate(e.program, params)
    try:
        world.compile_program(program)
    except kernel.ProgramError as err:
        raise _program_error(e.program_span, f"example {e.id} does not parse", err) from None
    outcome = world.execute(program)
    out = "\n".join(list(outcome.lines) + ([outcome.error] if outcome.error else []))
    band = dict(e.labels).get("band", "")
    return Example(e.id, band, interpolate(e.prompt, params), program.rstrip(), out)


def _tasks(world: ProgramWorld, spec: ast.Spec, mc: MetaCompiler, params: dict) -> dict:
    out = {}
    for t in spec.tasks:
        if t.id in out:
            raise SpecError(t.span, f"task id {t.id} is used twice", "Task ids must be unique.")
        labels = dict(t.labels)
        if "band" not in labels:
            raise SpecError(t.span, f"task {t.id} has no band", "Write: task ID band apply { ... }")
        if not t.prompt:
            raise SpecError(t.span, f"task {t.id} has no prompt", 'Add prompt "..." to the task.')
        if t.predict:
            if not t.program:
                raise SpecError(t.span, f"predict task {t.id} has no program", 'Add program """...""".')
            try:
                world.compile_program(interpolate(t.program, params))
            except kernel.ProgramError as err:
                raise _program_error(t.field_span("program"), f"task {t.id}'s program does not parse",
                                     err) from None
            task = Task(t.id, labels["band"], _task_prompt(world.surface, t, params, ()), "predict",
                        tuple(sorted(labels.items())), "", "")
            data = TaskData(task, (), (), (), "", interpolate(t.program, params), t.tolerance)
            out[t.id] = data
            continue
        if t.expect is None:
            raise SpecError(t.span, f"task {t.id} has no expect", "Add expect EXPR (the intended result).")
        if not t.solution:
            raise SpecError(t.span, f"task {t.id} has no reference solution", 'Add solution "...".')
        if not t.cases:
            raise SpecError(t.span, f"task {t.id} has no cases", "Add case lines with input values.")
        for i in t.inputs:
            check_type(i.type, t.span)
        names = [i.name for i in t.inputs]
        cases, expected = [], []
        for n, case in enumerate(t.cases):
            span = [s for k, s in t.field_spans if k == "case"][n]
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
                unit = mc.unit(f"{t.id}.expect", names, t.expect)
                want = unit(Ctx(), list(values))
            except (EvalError, *HOST_LIMITS) as err:
                raise SpecError(t.field_span("expect"), f"task {t.id}: expect fails on case {n + 1}: "
                                f"{why(err)}", "The intended result must be defined for every case.") from None
            cases.append(values)
            expected.append(want)
        for field in ("solution", "naive"):
            text = interpolate(getattr(t, field), params)
            if text:
                try:
                    world.compile_program(text)
                except kernel.ProgramError as err:
                    raise _program_error(t.field_span(field), f"task {t.id}'s {field} does not parse",
                                         err) from None
        shape = "function" if t.function else "program"
        task = Task(t.id, labels["band"], _task_prompt(world.surface, t, params, t.inputs), shape,
                    tuple(sorted(labels.items())), interpolate(t.solution, params),
                    interpolate(t.naive, params))
        out[t.id] = TaskData(task, tuple(names), tuple(cases), tuple(expected), t.function, "", t.tolerance)
    return out


KIND = Kind("program", compile_spec, "a language whose manual is wrong: probes and answers are programs")
