"""Semantics tables: the base definitions with some set of rules applied.

A table maps each operator to its compiled body and each kernel hook to its
body, or to None when the hook is at its standard definition (the kernel then
takes its fast path). The true world applies every rule, the manual's world
none, and a knockout world all but one.
"""
from __future__ import annotations

import functools
import re

import attrs

from worldspec import ast
from worldspec.meta import MetaCompiler, Unit
from worldspec.parser import parse_expr
from worldspec.values import Function, LimitError

HOOKS: dict[str, tuple[tuple[str, ...], str]] = {
    "int_literal": (("n",), "n"),
    "str_literal": (("s",), "s"),
    "truthy": (("v",), "truthy(v)"),
    "iterate": (("xs",), "xs"),
    "show": (("v",), "show(v)"),
    "output": (("parts",), 'join(parts, " ")'),
    "assign": (("name", "v"), "v"),
    "lookup": (("name", "v"), "v"),
    "index": (("xs", "i"), "get(xs, i)"),
    "slice": (("xs", "lo", "hi"), "slice(xs, lo, hi)"),
}


@functools.cache
def standard_body(hook: str) -> ast.Expr:
    """A hook's standard body, parsed once."""
    return parse_expr(HOOKS[hook][1], f"<standard {hook}>")


@functools.cache
def standard_body_for(names: tuple[str, ...], standard: tuple[str, ...]) -> ast.Expr:
    """The standard hook body written with an author's own parameter names."""
    text = HOOKS_BY_PARAMS[standard]
    for new, old in zip(names, standard):
        text = re.sub(rf"\b{old}\b", new, text)
    return parse_expr(text, "<standard>")


HOOKS_BY_PARAMS = {params: body for params, body in HOOKS.values()}
HOOK_PARAMS = {name: params for name, (params, _) in HOOKS.items()}


def param_list(params) -> str:
    """A parameter list as the manual writes it: `xs, *rest`."""
    return ", ".join(("*" if p.variadic else "") + p.name for p in params)


@attrs.define
class Op:
    """A compiled operator (or hook) body with its signature and the rule it comes from."""

    name: str
    params: tuple[ast.Param, ...]
    unit: Unit
    rule: str | None = None  # the perturbed rule whose override this is; None for a base line

    @property
    def variadic(self) -> bool:
        """Whether the last parameter takes the remaining arguments."""
        return bool(self.params) and self.params[-1].variadic

    def accepts(self, n: int) -> bool:
        """Whether a call with n arguments fits the signature."""
        fixed = len(self.params) - (1 if self.variadic else 0)
        return n >= fixed if self.variadic else n == fixed

    def arity_text(self) -> str:
        """The signature as an arity error states it."""
        names = param_list(self.params)
        fixed = len(self.params) - (1 if self.variadic else 0)
        count = f"at least {fixed}" if self.variadic else str(fixed)
        return f"{count} argument{'s' if fixed != 1 or self.variadic else ''} ({names})"

    @property
    def uses_ctx(self) -> bool:
        """Whether the body reads the context (scope flags, depths)."""
        return self.unit.uses_ctx

    def __call__(self, run, args: list):
        return self.unit(run, args)

    def call(self, run, args: list):
        """Call from a program: one step charged."""
        run.steps += 1
        if run.steps > run.max_steps:
            raise LimitError(f"step limit reached ({run.max_steps} steps)")
        return self.unit(run, args)

    def as_value(self, run) -> Function:
        """The operator as a first-class function value of one run."""
        return Function(self.name, None if self.variadic else len(self.params),
                        lambda args: self.call(run, args))


@attrs.frozen
class Semantics:
    ops: dict
    hooks: dict  # hook name -> Op, or None at its standard definition
    applied: frozenset[str]  # rule ids in force
    origins: dict = attrs.field(factory=dict, repr=False)  # target -> id of the rule that defines it

    def origin(self, target: str) -> str | None:
        """The id of the rule that defines this target ("op PLUCK"), or None for its base line."""
        return self.origins.get(target)


def compile_definition(mc: MetaCompiler, d: ast.Definition, rule: str | None = None) -> Op:
    """Compile one base line or override (carrying the id of its rule, if any)."""
    params = [p.name for p in d.params]
    variadic = bool(d.params) and d.params[-1].variadic
    return Op(d.name, d.params, mc.unit(d.name, params, d.body, variadic), rule)


def is_standard(d: ast.Definition) -> bool:
    """Whether a hook line keeps the standard body (the kernel's fast path)."""
    if d.kind != "hook":
        return False
    std_params = HOOKS[d.name][0]
    return d.body == standard_body_for(tuple(p.name for p in d.params), std_params)


class SemanticsBuilder:
    """Compiles each definition once and assembles tables for any rule set."""

    def __init__(self, mc: MetaCompiler, base: tuple[ast.Definition, ...], rules: tuple[ast.RuleDecl, ...]):
        self.base = {d.target: d for d in base}
        self.rules = {r.id: r for r in rules}
        # (target, rule id or None for the base line) -> compiled body (None: a hook at its standard body)
        self.compiled: dict[tuple[str, str | None], Op | None] = {}
        self.standard: dict[str, Op] = {}  # index and slice at their standard bodies
        self.mc = mc
        self.tables: dict[frozenset, Semantics] = {}
        self.requires_cache: dict[str, frozenset] = {}
        self.parse_cache: dict = {}  # program text -> tree (or its ProgramError)
        self.program_cache: dict = {}  # (rules, text, known functions) -> (tree, code)

    def op(self, target: str, rule: str | None = None) -> Op | None:
        """The compiled body of a base line, or of the override of rule `rule` (compiled once)."""
        key = (target, rule)
        if key not in self.compiled:
            d = self.base[target] if rule is None else self.rules[rule].override
            self.compiled[key] = None if is_standard(d) else compile_definition(self.mc, d, rule)
        return self.compiled[key]

    def rule_op(self, rule: str) -> Op | None:
        """The compiled override of one rule."""
        return self.op(self.rules[rule].override.target, rule)

    def compile_all(self) -> None:
        """Compile every base line and every override now (so that errors point at the spec)."""
        for target in self.base:
            self.op(target)
        for rid in self.rules:
            self.rule_op(rid)

    def build(self, applied) -> Semantics:
        """The table with exactly these rules in force (built once per rule set)."""
        applied = frozenset(applied)
        if applied in self.tables:
            return self.tables[applied]
        origins = {self.rules[rid].override.target: rid for rid in applied}
        ops, hooks = {}, {}
        for target, d in self.base.items():
            (ops if d.kind == "op" else hooks)[d.name] = self.op(target, origins.get(target))
        for name in HOOKS:
            hooks.setdefault(name, None)
        for name in ("index", "slice"):  # always callable through the table
            if hooks[name] is None:
                hooks[name] = self.standard_op(name)
        sem = Semantics(ops, hooks, applied, origins)
        self.tables[applied] = sem
        return sem

    def standard_op(self, hook: str) -> Op:
        """A hook's standard body, compiled (once) to be called through the table."""
        if hook not in self.standard:
            std = ast.Definition("hook", hook, tuple(ast.Param(p) for p in HOOKS[hook][0]), ast.ANY,
                                 standard_body(hook), "", ast.NOSPAN)
            self.standard[hook] = compile_definition(self.mc, std)
        return self.standard[hook]
