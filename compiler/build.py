"""Compile a Spec into a World: parameters, definitions, surface, examples, tasks.

Every semantic check raises a SpecError pointing into the spec; a spec that
compiles is a world whose examples run and whose tasks are well-formed.
"""
from __future__ import annotations

import os
import random

import attrs

from worldspec import ast
from worldspec.compiler import kernel
from worldspec.compiler.manual import render_manual
from worldspec.compiler.model import Budget, Example, Rule, Task
from worldspec.compiler.semantics import HOOKS, SemanticsBuilder
from worldspec.compiler.surface import build_surface
from worldspec.compiler.world import TaskData, World
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import MetaCompiler
from worldspec.parser import load_spec
from worldspec.values import EvalError

KINDS = ("program", "proof", "blackbox", "game", "judge")
TYPES = ("int", "str", "bool", "list", "any", "fn", "float", "map")
BUDGET_KEYS = {f.name for f in Budget.__attrs_attrs__} - {"unit_costs"}


def draw_params(spec: ast.Spec, seed: int) -> dict:
    """Evaluate each param: its default at the declared seed, a fresh draw elsewhere."""
    mc = MetaCompiler()
    values: dict = {}
    for p in spec.params:
        if p.name in values:
            raise SpecError(p.span, f"param {p.name} is declared twice", "Give each param one line.")
        mc.constants = dict(values)
        try:
            args = [mc.constant(a) for a in p.args]
            default = mc.constant(p.default) if p.default is not None else None
        except (EvalError, *HOST_LIMITS) as e:
            raise SpecError(p.span, f"param {p.name} cannot be evaluated: {_why(e)}",
                            "Params may use literals, builtins and earlier params.") from None
        if p.kind == "const":
            values[p.name] = args[0]
            continue
        if p.kind == "range":
            lo, hi = args
            if type(lo) is not int or type(hi) is not int or lo > hi:
                raise SpecError(p.span, f"pick({lo}..{hi}) is not an integer range",
                                "Write pick(LO..HI) with integers LO <= HI.")
            choices = list(range(lo, hi + 1))
        else:
            choices = args[0]
            if type(choices) is not list or not choices:
                raise SpecError(p.span, "pick([...]) needs a non-empty list", "For example pick([2, 3, 5]).")
        if default is not None and not any(_same(default, c) for c in choices):
            raise SpecError(p.span, f"the default {default!r} of {p.name} is not among its choices",
                            "The declared seed must reproduce a value the pick can draw.")
        if seed == spec.seed and default is not None:
            values[p.name] = default
            continue
        pool = [c for c in choices if default is None or not _same(c, default)] or choices
        values[p.name] = random.Random(f"worldspec:{seed}:{p.name}").choice(pool)
    return values


def _same(a, b) -> bool:
    from worldspec.values import same
    return same(a, b)


# Python's own limits, reached only by runaway constants; reported like ours.
HOST_LIMITS = (RecursionError, OverflowError, MemoryError)


def _why(e: Exception) -> str:
    if isinstance(e, EvalError):
        return e.message
    return {RecursionError: "it recurses too deeply", OverflowError: "a value is too large",
            MemoryError: "a value is too large"}.get(type(e), "it cannot be evaluated")


def interpolate(text: str, params: dict) -> str:
    """Replace {NAME} with a param's value (unknown braces are left alone)."""
    for k, v in params.items():
        text = text.replace("{" + k + "}", str(v))
    return text


def _check_type(t: ast.Type, span: ast.Span) -> None:
    if t.name not in TYPES:
        raise SpecError(span, f"unknown type {t.name!r}", did_you_mean(t.name, TYPES).strip()
                        or "Types are: " + ", ".join(TYPES) + ".")
    if t.arg is not None:
        _check_type(t.arg, span)


def check_definitions(spec: ast.Spec, require_equation: bool = True) -> None:
    """Base lines, rule overrides and herrings are consistent (any kind that uses them)."""
    seen: dict[str, ast.Definition] = {}
    for d in spec.base:
        if d.target in seen:
            raise SpecError(d.span, f"{d.target} is defined twice in base", "Keep one line per operator.")
        seen[d.target] = d
        if d.kind == "hook":
            if d.name not in HOOKS:
                raise SpecError(d.span, f"unknown hook {d.name!r}", did_you_mean(d.name, HOOKS).strip()
                                or "Hooks are: " + ", ".join(HOOKS) + ".")
            want = len(HOOKS[d.name][0])
            if len(d.params) != want or any(p.variadic for p in d.params):
                raise SpecError(d.span, f"hook {d.name} takes {want} parameter(s) "
                                f"({', '.join(HOOKS[d.name][0])})", "Keep the hook's parameter list.")
        for p in d.params[:-1]:
            if p.variadic:
                raise SpecError(d.span, f"only the last parameter of {d.name} may be variadic", "")
        for p in d.params:
            _check_type(p.type, d.span)
        _check_type(d.returns, d.span)
        if not d.doc.strip():
            raise SpecError(d.span, f"{d.target} has no manual entry", 'End the line with its doc, "..."')
    ids: set[str] = set()
    overridden: dict[str, str] = {}
    for r in spec.rules:
        if r.id in ids:
            raise SpecError(r.span, f"rule id {r.id} is used twice", "Rule ids must be unique.")
        ids.add(r.id)
        o = r.override
        if o.target not in seen:
            names = [t.split(" ", 1)[1] for t in seen if t.startswith(o.kind + " ")]
            raise SpecError(o.span, f"rule {r.id} overrides {o.kind} {o.name}, which base does not define.",
                            did_you_mean(o.name, names).strip() or "A rule overrides one base line.")
        b = seen[o.target]
        if [p.variadic for p in o.params] != [p.variadic for p in b.params] or len(o.params) != len(b.params):
            raise SpecError(o.span, f"rule {r.id} gives {o.name} {len(o.params)} parameter(s); base has "
                            f"{len(b.params)}", "An override keeps the base line's parameters.")
        if o.target in overridden:
            raise SpecError(o.span, f"{o.target} is overridden by both {overridden[o.target]} and {r.id}",
                            "Each base line may be perturbed by one rule.")
        overridden[o.target] = r.id
        if not r.statement:
            raise SpecError(r.span, f"rule {r.id} has no statement", 'Add statement "..." (the open-book text).')
        if require_equation and not r.equation:
            raise SpecError(r.span, f"rule {r.id} has no equation",
                            'Add equation "(...)" in the equation notation (docs/language.md).')
    for h in spec.herrings:
        if h.id in ids:
            raise SpecError(h.span, f"id {h.id} is used twice", "Rule and herring ids must be unique.")
        ids.add(h.id)
        targets = {t.split(" ", 1)[1]: t for t in seen}
        if h.target not in targets:
            raise SpecError(h.span, f"herring {h.id} names {h.target}, which base does not define.",
                            did_you_mean(h.target, targets).strip() or "A herring names a base operator.")
        if targets[h.target] in overridden:
            raise SpecError(h.span, f"herring {h.id} names {h.target}, but rule "
                            f"{overridden[targets[h.target]]} changes it",
                            "A herring must behave exactly as documented.")


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


def compile_spec(spec: ast.Spec, seed: int | None = None) -> World:
    """Compile a parsed spec into its true World (the given seed, or the declared one)."""
    if spec.kind not in KINDS:
        raise SpecError(spec.kind_span, f"unknown world kind {spec.kind!r}",
                        (did_you_mean(spec.kind, KINDS) + " Kinds are: " + ", ".join(KINDS) + ".").strip())
    if spec.kind != "program":
        import importlib
        try:
            module = importlib.import_module(f"worldspec.compiler.kind_{spec.kind}")
        except ModuleNotFoundError:
            raise SpecError(spec.kind_span, f"world kind {spec.kind!r} is not supported by this version",
                            "Supported kinds: program" + "".join(
                                f", {k}" for k in KINDS[1:] if _has_kind(k)) + ".") from None
        return module.compile_spec(spec, seed)
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
    proto = World(spec.name, spec.version, spec.kind, seed, spec.seed, interpolate(spec.summary, params),
                  tuple(params.items()), "", (), (), rules, herrings, budget, surface, builder, {}, true_sem,
                  spec.file)
    examples = tuple(_example(proto, e, params) for e in spec.examples)
    task_data = _tasks(proto, spec, mc, params)
    world = World(spec.name, spec.version, spec.kind, seed, spec.seed, proto.summary, proto.params,
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


PROGRAM_SECTIONS = ("world", "kind", "seed", "summary", "include", "param", "def", "syntax", "base",
                    "rule", "herring", "manual", "example", "task", "budget")
TASK_FIELDS = ("prompt", "input", "case", "expect", "solution", "naive", "function", "predict", "program",
               "tolerance")


def _has_kind(kind: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(f"worldspec.compiler.kind_{kind}") is not None


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
    from worldspec.diagnostics import source_line
    line = span.line + max(e.line - 1, 0) if span.line else span.line
    if span.line and source_line(span.file, span.line).rstrip().endswith('"""'):
        line += 1  # a triple-quoted block starts on the next line
    return SpecError(ast.Span(span.file, line, span.col), f"{what}: {e.message}",
                     "Programs in a spec are written in the world's own syntax block.")


def _example(world: World, e: ast.ExampleDecl, params: dict) -> Example:
    program = interpolate(e.program, params)
    try:
        world.compile_program(program)
    except kernel.ProgramError as err:
        raise _program_error(e.program_span, f"example {e.id} does not parse", err) from None
    outcome = world.execute(program)
    out = "\n".join(list(outcome.lines) + ([outcome.error] if outcome.error else []))
    band = dict(e.labels).get("band", "")
    return Example(e.id, band, interpolate(e.prompt, params), program.rstrip(), out)


def _tasks(world: World, spec: ast.Spec, mc: MetaCompiler, params: dict) -> dict:
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
            _check_type(i.type, t.span)
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
                raise SpecError(span, f"task {t.id}: a case value fails: {_why(err)}",
                                "Case values must be small, finite values.") from None
            try:
                unit = mc.unit(f"{t.id}.expect", names, t.expect)
                from worldspec.values import Ctx
                want = unit(Ctx(), list(values))
            except (EvalError, *HOST_LIMITS) as err:
                raise SpecError(t.field_span("expect"), f"task {t.id}: expect fails on case {n + 1}: "
                                f"{_why(err)}", "The intended result must be defined for every case.") from None
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


def resolve_world_path(name: str) -> str:
    """A path, or the name of a bundled world (`demo`, `aliencode`)."""
    if os.path.exists(name):
        return name
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")
    try:
        from importlib.resources import files
        bundled = str(files("worldspec.worlds"))
    except (ModuleNotFoundError, TypeError):
        bundled = here
    for folder in (bundled, here):
        for cand in (name, name + ".world"):
            p = os.path.join(folder, cand)
            if os.path.exists(p):
                return p
    return name


def load_world(path: str, seed: int | None = None) -> World:
    """Read, parse and compile a .world file (or a bundled world's name)."""
    return compile_spec(load_spec(resolve_world_path(path)), seed)
