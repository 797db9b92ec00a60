"""Semantics tables: the base definitions with some set of rules applied.

A table maps each operator to its compiled body and each kernel hook to its
body, or to None when the hook is at its standard definition (the kernel then
takes its fast path). The true world applies every rule, the manual's world
none, and a knockout world all but one.

Several rules may perturb one base line: they stack in the order the spec
gives them, each over the ones before it that are in force (or over the base
line), and a rule body reaches the layer beneath it by calling `prior(...)`
with the line's parameters. Knocking a rule out removes exactly its layer.
"""
from __future__ import annotations

import functools
import re

import attrs

from worldspec import ast
from worldspec.ast import mentions
from worldspec.compiler.common import interpolate
from worldspec.compiler.program.equations import check_equation
from worldspec.compiler.program.kernel import call_deep, on_deep_stack
from worldspec.diagnostics import Collector, SpecError
from worldspec.meta import BASE, PRIOR, MetaCompiler, Unit
from worldspec.parser import parse_expr
from worldspec.values import Ctx, EvalError, Function, LimitError, show

# Every hook a world may redefine, with its standard body (the manual's meaning), written as a
# spec's `hook` line writes it; an indented line continues the one above. Grouped: literals (their
# value when the program is compiled), control flow, printing, variables, indexing, calls.
STANDARD_HOOKS = """
int_literal(n) = n
str_literal(s) = s
float_literal(x) = x
list_literal(xs) = xs

truthy(v) = truthy(v)
iterate(xs) = xs
passes(kind, n) = n
jump(word) = word
branch_order(n) = range(n)
else_runs(held) = not held
loop_else(kind, broken) = not broken

show(v) = show(v)
output(parts) = join(parts, " ")

assign(name, v) = v
lookup(name, v) = v
update(name, old, v) = v
assign_many(names, vs) = vs
for_many(names, item) = item

position(kind, xs, i) = i
index(xs, i) = get(xs, i)
slice(xs, lo, hi) = slice(xs, lo, hi)
set_index(xs, i, v) = if is_list(xs) and is_int(i) and i >= 0 and i < len(xs)
    then concat(take(xs, i), concat([v], drop(xs, i + 1)))
    else if is_map(xs) then put(xs, i, v)
    else error("no element at position " + show(i))

arguments(args) = args
enclosed(name, then, now) = now
returned(v, args) = v
no_return(last, args) = none
"""


def hook_table(text: str) -> dict[str, tuple[tuple[str, ...], str]]:
    """hook name -> (its parameters, its body's text), read from lines `name(a, b) = body`."""
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(" ") and lines:
            lines[-1] += " " + line.strip()
        elif line.strip():
            lines.append(line.strip())
    table = {}
    for line in lines:
        head, body = line.split(" = ", 1)
        name, params = head.rstrip(")").split("(")
        table[name] = (tuple(p.strip() for p in params.split(",")), body)
    return table


HOOKS: dict[str, tuple[tuple[str, ...], str]] = hook_table(STANDARD_HOOKS)
# Hooks the kernel always calls through the table (their statements are rare, their defaults
# not worth a fast path); every other hook at its standard definition costs nothing.
CALLED_HOOKS = ("index", "slice", "set_index", "update", "assign_many", "for_many")


@functools.cache
def standard_body(hook: str) -> ast.Expr:
    """A hook's standard body, parsed once."""
    return parse_expr(HOOKS[hook][1], f"<standard {hook}>")


@functools.cache
def standard_body_for(hook: str, names: tuple[str, ...]) -> ast.Expr:
    """A hook's standard body written with an author's own parameter names (renamed all at once,
    so that swapped names stay swapped). Keyed by the hook, not its parameters: several hooks
    share parameter names and differ in body (`truthy(v)` and `show(v)`)."""
    params, text = HOOKS[hook]
    rename = dict(zip(params, names))
    text = re.sub(r"\b[A-Za-z_][A-Za-z_0-9]*\b", lambda m: rename.get(m.group(), m.group()), text)
    return parse_expr(text, "<standard>")


HOOK_PARAMS = {name: params for name, (params, _) in HOOKS.items()}


def param_list(params) -> str:
    """A parameter list as the manual writes it: `xs, *rest`, `lazy b`, `digits = 0`."""
    def default(p) -> str:
        if p.default is None:
            return ""
        return f" = {show(p.default.value)}" if isinstance(p.default, ast.Const) else " = ..."
    return ", ".join(("*" if p.variadic else "") + ("lazy " if p.lazy else "") + p.name + default(p)
                     for p in params)


@attrs.define
class Op:
    """A compiled operator (or hook) body with its signature and the rule it comes from."""

    name: str
    params: tuple[ast.Param, ...]
    unit: Unit
    rule: str | None = None  # the perturbed rule whose override this is; None for a base line
    mutates: int = -1  # the parameter whose variable a bare-statement call updates (-1: none)
    # `mutates xs to EXPR`: what every call with a variable there stores in it (None: plain mutates)
    updater: Unit | None = attrs.field(default=None, eq=False, repr=False)
    # (body, MetaCompiler) of a line without prior(...): what the native kernel compiles it from
    source: tuple | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def variadic(self) -> bool:
        """Whether the last parameter takes the remaining arguments."""
        return bool(self.params) and self.params[-1].variadic

    @property
    def required(self) -> int:
        """The fewest arguments a call may pass."""
        return sum(1 for p in self.params if p.default is None and not p.variadic)

    def accepts(self, n: int) -> bool:
        """Whether a call with n arguments fits the signature."""
        if self.variadic:
            return n >= self.required
        return self.required <= n <= len(self.params)

    def arity_text(self) -> str:
        """The signature as an arity error states it."""
        names = param_list(self.params)
        fixed, most = self.required, len(self.params)
        count = (f"at least {fixed}" if self.variadic else str(fixed) if fixed == most
                 else f"{fixed} to {most}")
        return f"{count} argument{'s' if most != 1 or self.variadic else ''} ({names})"

    @property
    def uses_ctx(self) -> bool:
        """Whether the body reads the context (scope flags, depths)."""
        return self.unit.uses_ctx

    def __call__(self, run, args: list):
        try:
            return self.unit(run, args)
        except RecursionError:
            # outside a program (certification calls bodies directly) a deep recursion of defs
            # is run again on a deep stack; a program run rolls back and reruns as a whole
            if type(run) is not Ctx or on_deep_stack():
                raise
            return call_deep(lambda: self.unit(run, args))

    def call(self, run, args: list):
        """Call from a program: one step charged."""
        run.steps += 1
        if run.steps > run.max_steps:
            raise LimitError(f"step limit reached ({run.max_steps} steps)")
        return self.unit(run, args)

    def as_value(self, run) -> Function:
        """The operator as a first-class function value of one run."""
        fixed = None if self.variadic or self.required != len(self.params) else len(self.params)
        return Function(self.name, fixed, lambda args: self.call(run, args))


@attrs.frozen
class Semantics:
    ops: dict
    hooks: dict  # hook name -> Op, or None at its standard definition
    applied: frozenset[str]  # rule ids in force
    origins: dict = attrs.field(factory=dict, repr=False)  # target -> id of the topmost rule in force on it

    def origin(self, target: str) -> str | None:
        """The id of the rule that defines this target ("op PLUCK"), or None for its base line."""
        return self.origins.get(target)

    @functools.cached_property
    def reads_iteration(self) -> bool:
        """Whether some body in force reads `iteration` (only then do loops count their passes)."""
        return any(op is not None and op.unit.uses_ctx and "iteration" in op.unit.reads
                   for op in (*self.ops.values(), *self.hooks.values()))


def _located(d: ast.Definition, message: str, hint: str) -> SpecError:
    return SpecError(d.span, f"{d.target}: {message}", hint)


def signature(mc: MetaCompiler, d: ast.Definition) -> tuple[tuple, tuple[int, ...], int]:
    """Defaults (as values), lazy positions and the mutated position of a line; checks them."""
    params = d.params
    first_optional = next((i for i, p in enumerate(params) if p.default is not None), len(params))
    if any(p.default is None and not p.variadic for p in params[first_optional:]):
        raise _located(d, "a parameter without a default follows one with a default",
                       "Put the optional parameters last: op F(x: int, step: int = 1).")
    if any(p.variadic and (p.default is not None or p.lazy) for p in params):
        raise _located(d, "a * parameter can be neither lazy nor optional", "Remove `lazy` or the default.")
    if first_optional < len(params) and params[-1].variadic:
        raise _located(d, "an operator cannot have both optional and * parameters", "Keep one of them.")
    if d.kind == "hook" and any(p.lazy or p.default is not None for p in params):
        raise _located(d, "a hook's parameters are neither lazy nor optional",
                       "The kernel always passes every argument of a hook.")
    try:
        defaults = tuple(mc.constant(p.default) for p in params if p.default is not None)
    except EvalError as e:
        raise _located(d, f"a default cannot be evaluated: {e.message}",
                       "Defaults are constants: literals, params and builtins.") from None
    mutated = -1
    if d.mutates:
        names = [p.name for p in params]
        if d.kind != "op" or d.mutates not in names or params[names.index(d.mutates)].variadic:
            raise _located(d, f"mutates {d.mutates}: not a parameter of this operator",
                           "Write `mutates NAME` with NAME one of the operator's own (not *) parameters.")
        mutated = names.index(d.mutates)
        if d.updates is not None and lazy_params(params):
            raise _located(d, f"mutates {d.mutates} to ...: an updating operator's parameters cannot be lazy",
                           "The value it stores is computed from every argument: remove `lazy`.")
    return defaults, tuple(i for i, p in enumerate(params) if p.lazy), mutated


def lazy_params(params) -> bool:
    """Whether any parameter is lazy."""
    return any(p.lazy for p in params)


def compile_definition(mc: MetaCompiler, d: ast.Definition, rule: str | None = None,
                       base: ast.Definition | None = None, prior: Unit | None = None,
                       base_unit: Unit | None = None) -> Op:
    """Compile one base line or override (carrying the id of its rule, if any).

    An override takes its signature (types, defaults, lazy, mutates) from its base line; `prior`
    is what the override's prior(...) calls, `base_unit` what its base(...) calls (the base line alone).
    """
    base = base or d
    params = tuple(attrs.evolve(b, name=o.name) for b, o in zip(base.params, d.params))
    defaults, lazy, mutated = signature(mc, base)
    layers = {**({PRIOR: prior} if prior is not None else {}), **({BASE: base_unit} if base_unit is not None else {})}
    if layers:  # compiled here only (the native kernel reads no source for a body that calls a layer)
        mc = MetaCompiler(mc.constants, {**mc.defs, **layers})
    unit = mc.unit(d.name, [p.name for p in params], d.body, bool(params) and params[-1].variadic,
                   defaults, lazy)
    updater = None
    if base.updates is not None:  # the base line's, under its own parameter names
        updater = mc.unit(f"{d.name} update", [p.name for p in base.params], base.updates,
                          bool(params) and params[-1].variadic, defaults)
    return Op(d.name, params, unit, rule, mutated, source=None if layers else (d.body, mc),
              updater=updater)


def as_prior(op: Op, name: str = PRIOR) -> Unit:
    """The layer beneath a rule, as its prior(...) (or the base line, as its base(...)): called with every
    parameter (a * one as a list)."""
    u = op.unit
    return Unit(name, u.arity, False, u.nslots, u.body, u.uses_ctx, u.defaults, u.lazy, reads=u.reads)


def is_standard(d: ast.Definition) -> bool:
    """Whether a hook line keeps the standard body (the kernel's fast path)."""
    if d.kind != "hook":
        return False
    plain = not any(p.lazy or p.variadic or p.default is not None for p in d.params)  # else: compiled,
    return plain and d.body == standard_body_for(d.name, tuple(p.name for p in d.params))  # which says why


HOLDS = "holds"  # in an op or hook body: whether a value holds as a condition, by the truthy hook in force
TRUTHY = "hook truthy"


class SemanticsBuilder:
    """Compiles each definition once and assembles tables for any rule set.

    `holds(v)` (third edition) is the world's truthy hook as the rules in force define it, callable
    from any op or hook body: a base line `op AND(a, lazy b) = if holds(a) then b else a` follows a
    rule on truthy, so one rule reaches conditions and the and/or/not operators alike, and knocking
    the rule out restores both. A body that names holds is compiled once per set of truthy layers.
    """

    def __init__(self, mc: MetaCompiler, base: tuple[ast.Definition, ...], rules: tuple[ast.RuleDecl, ...]):
        self.base = {d.target: d for d in base}
        self.rules = {r.id: r for r in rules}
        self.layers: dict[str, tuple[str, ...]] = {}  # target -> the ids of the rules on it, in spec order
        for r in rules:
            self.layers[r.override.target] = self.layers.get(r.override.target, ()) + (r.id,)
        # (target, ids of the rules in force on it) -> compiled body (None: a hook at its standard body)
        self.compiled: dict[tuple[str, tuple[str, ...]], Op | None] = {}
        self.standard: dict[str, Op] = {}  # always-called hooks at their standard bodies
        self.mc = mc
        mc.defer_def_errors = True  # compile_all reports the defs' errors with the base lines' and rules'
        self.holding: frozenset = frozenset()  # targets whose bodies call holds(...)
        self.holds_mc: dict[tuple, MetaCompiler] = {}  # truthy layers -> a compiler whose holds is theirs
        if HOLDS not in mc.defs:  # a world's own def named holds keeps its meaning
            self.holding = self.holds_targets()
            # elsewhere (defs, equations, the explorer's hypotheses) holds is the manual's truthiness; it is
            # declared before the truthy hook's base line compiles (that compiles the world's defs)
            holder = mc.defs[HOLDS] = Unit(HOLDS, 1, False, 0, None, False)
            manual = self.truthy_unit(())
            holder.body, holder.nslots, holder.uses_ctx, holder.reads = (manual.body, manual.nslots,
                                                                         manual.uses_ctx, manual.reads)
        self.tables: dict[frozenset, Semantics] = {}
        self.requires_cache: dict[str, frozenset] = {}
        self.parse_cache: dict = {}  # (grammar, program text) -> tree (or its ProgramError)
        self.program_cache: dict = {}  # (rules, text, known functions) -> (tree, code)

    def holds_targets(self) -> frozenset:
        """The base lines whose body, or a rule's body on them, calls holds (truthy's may not)."""
        found = set()
        for target, d in self.base.items():
            bodies = [d] + [self.rules[r].override for r in self.layers.get(target, ())]
            for b in bodies:
                if mentions(b.body, HOLDS) or (b.updates is not None and mentions(b.updates, HOLDS)):
                    if target == TRUTHY:
                        raise _located(b, "the truthy hook cannot call holds(...), which is the truthy hook",
                                       "Write its body with the builtin truthy(v), or prior(v) in a rule.")
                    found.add(target)
        return frozenset(found)

    def truthy_unit(self, layers: tuple[str, ...]) -> Unit:
        """What holds(...) calls under these truthy layers: the truthy hook's body, one parameter."""
        op = (self.op(TRUTHY, layers) if TRUTHY in self.base else None) or self.standard_op("truthy")
        return op.unit

    def compiler_for(self, truthy: tuple[str, ...]) -> MetaCompiler:
        """The meta compiler whose holds(...) is the truthy hook under these layers."""
        if truthy not in self.holds_mc:
            self.holds_mc[truthy] = MetaCompiler(self.mc.constants, {**self.mc.defs, HOLDS: self.truthy_unit(truthy)})
        return self.holds_mc[truthy]

    def op(self, target: str, rules: tuple[str, ...] | str | None = (), truthy: tuple[str, ...] = ()) -> Op | None:
        """The compiled body of a base line under these rules (spec order; a single id: that rule
        alone over the base line), compiled once; `truthy`: the truthy layers in force, for a body
        that calls holds(...)."""
        rules = () if rules is None else (rules,) if isinstance(rules, str) else tuple(rules)
        truthy = tuple(truthy) if target in self.holding else ()
        key = (target, rules) if not truthy else (target, rules, truthy)
        if key not in self.compiled:
            self.compiled[key] = self._compile(target, rules, truthy)
        return self.compiled[key]

    def _compile(self, target: str, rules: tuple[str, ...], truthy: tuple[str, ...] = ()) -> Op | None:
        base = self.base[target]
        mc = self.compiler_for(truthy) if target in self.holding else self.mc
        if not rules:
            return None if is_standard(base) else compile_definition(mc, base)
        top = self.rules[rules[-1]].override
        base_unit = None
        if mentions(top.body, BASE) and BASE not in self.mc.defs:  # a world's own def named base keeps its meaning
            base_unit = as_prior(self.op(target, (), truthy) or self.standard_op(base.name), BASE)
        if not mentions(top.body, PRIOR):
            if len(rules) > 1:  # the top layer hides every layer beneath it
                return self.op(target, rules[-1:], truthy)
            if base_unit is None:
                return None if is_standard(top) else compile_definition(mc, top, rules[-1], base)
            return compile_definition(mc, top, rules[-1], base, base_unit=base_unit)
        beneath = self.op(target, rules[:-1], truthy) or self.standard_op(base.name)
        return compile_definition(mc, top, rules[-1], base, as_prior(beneath), base_unit)

    def rule_op(self, rule: str) -> Op | None:
        """The compiled override of one rule, over the base line alone."""
        return self.op(self.rules[rule].override.target, rule)

    def compile_all(self) -> None:
        """Compile every def, base line, override and equation now (so that errors point at the spec)."""
        found = Collector()  # each def, base line, rule and equation is checked: one run reports them all
        self.mc.defer_def_errors = True
        with found.item():
            self.mc.finish()
        for target in self.base:
            with found.item():
                self.op(target)
        for rid in self.rules:
            with found.item():
                self.rule_op(rid)
        self.mc.defer_def_errors = False
        found.raise_any()
        self.build(self.rules)
        for r in self.rules.values():
            params = [p.name for p in r.override.params]
            with found.item():
                check_equation(self.mc, interpolate(r.equation, self.mc.constants), params, r.equation_span,
                               r.override.name)
        found.raise_any()

    def build(self, applied) -> Semantics:
        """The table with exactly these rules in force (built once per rule set)."""
        applied = frozenset(applied)
        if applied in self.tables:
            return self.tables[applied]
        ops, hooks, origins = {}, {}, {}
        truthy = tuple(rid for rid in self.layers.get(TRUTHY, ()) if rid in applied)
        for target, d in self.base.items():
            layers = tuple(rid for rid in self.layers.get(target, ()) if rid in applied)
            if layers:
                origins[target] = layers[-1]
            (ops if d.kind == "op" else hooks)[d.name] = self.op(target, layers, truthy)
        for name in HOOKS:
            hooks.setdefault(name, None)
        for name in CALLED_HOOKS:  # always callable through the table
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
