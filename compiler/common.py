"""What every world kind shares: seeded params, interpolation, types, base/rule/herring checks.

Kinds import this module (and compiler.api), never each other and never build.py.
"""
from __future__ import annotations

import random

from worldspec import ast
from worldspec.compiler.api import Budget
from worldspec.compiler.program.semantics import HOOKS
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import MetaCompiler
from worldspec.values import EvalError, same

BUDGET_KEYS = {f.name for f in Budget.__attrs_attrs__} - {"unit_costs"}
TYPES = ("int", "str", "bool", "list", "any", "fn", "float", "map")

# Python's own limits, reached only by runaway constants; reported like ours.
HOST_LIMITS = (RecursionError, OverflowError, MemoryError)


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
            raise SpecError(p.span, f"param {p.name} cannot be evaluated: {why(e)}",
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
    return same(a, b)


def why(e: Exception) -> str:
    if isinstance(e, EvalError):
        return e.message
    return {RecursionError: "it recurses too deeply", OverflowError: "a value is too large",
            MemoryError: "a value is too large"}.get(type(e), "it cannot be evaluated")


def interpolate(text: str, params: dict) -> str:
    """Replace {NAME} with a param's value (unknown braces are left alone)."""
    for k, v in params.items():
        text = text.replace("{" + k + "}", str(v))
    return text


def check_type(t: ast.Type, span: ast.Span) -> None:
    if t.name not in TYPES:
        raise SpecError(span, f"unknown type {t.name!r}", did_you_mean(t.name, TYPES).strip()
                        or "Types are: " + ", ".join(TYPES) + ".")
    if t.arg is not None:
        check_type(t.arg, span)


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
            check_type(p.type, d.span)
        check_type(d.returns, d.span)
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
