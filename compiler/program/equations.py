"""The equation notation of rule reports, and their exact grading.

An equation is an s-expression over a rule's parameters and the context
variables, e.g. `(get xs (- i 1))`. It is read into the meta-language AST and
compiled like any rule body; a stated equation is correct when it agrees with
the true rule on generated inputs in every scope: same value, or both fail.
"""
from __future__ import annotations

import random
import re

from worldspec import ast
from worldspec.compiler.program.values_gen import values_for
from worldspec.diagnostics import SpecError
from worldspec.meta import MetaCompiler
from worldspec.values import Ctx, EvalError, same

_TOKEN = re.compile(r'\s*(?:(\()|(\))|("(?:[^"\\]|\\.)*")|([^\s()]+))')
_INFIX = {"+", "-", "*", "/", "//", "%", "**", "^", "&", "|", "<<", ">>", "==", "!=", "<", "<=", ">", ">="}
MAX_EQUATION_CHARS = 2_000
SAMPLES = 60


class EquationError(ValueError):
    pass


def read_sexpr(text: str):
    """Text -> nested lists of atoms (str tokens)."""
    if len(text) > MAX_EQUATION_CHARS:
        raise EquationError("equation too long")
    pos, stack, top = 0, [], []
    cur = top
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise EquationError(f"cannot read {text[pos:pos + 10]!r}")
        pos = m.end()
        if m.group(1):
            if len(stack) > 50:
                raise EquationError("equation nests too deeply")
            new: list = []
            cur.append(new)
            stack.append(cur)
            cur = new
        elif m.group(2):
            if not stack:
                raise EquationError("unbalanced ')'")
            cur = stack.pop()
        elif m.group(3):
            cur.append(("str", m.group(3)[1:-1]))
        elif m.group(4):
            cur.append(m.group(4))
    if stack:
        raise EquationError("unbalanced '('")
    if len(top) != 1:
        raise EquationError("an equation is one expression")
    return top[0]


def to_ast(node) -> ast.Expr:
    """Nested s-expression -> meta-language AST."""
    if isinstance(node, tuple):
        return ast.Const(node[1])
    if isinstance(node, str):
        if re.fullmatch(r"-?\d+", node):
            return ast.Const(int(node))
        if re.fullmatch(r"-?\d+\.\d+", node):
            return ast.Const(float(node))
        if node in ("true", "false", "none"):
            return ast.Const({"true": True, "false": False, "none": None}[node])
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", node):
            raise EquationError(f"unknown symbol {node!r}")
        return ast.Var(node)
    if not node:
        raise EquationError("empty ()")
    head, *args = node
    if head == "if":
        if len(args) != 3:
            raise EquationError("(if c a b) takes three parts")
        return ast.If(*map(to_ast, args))
    if head == "list":
        return ast.ListExpr(tuple(map(to_ast, args)))
    if head in ("and", "or"):
        if len(args) < 2:
            raise EquationError(f"({head} ...) needs two or more parts")
        out = to_ast(args[0])
        for a in args[1:]:
            out = (ast.And if head == "and" else ast.Or)(out, to_ast(a))
        return out
    if head == "not":
        if len(args) != 1:
            raise EquationError("(not x) takes one part")
        return ast.Not(to_ast(args[0]))
    if head == "-" and len(args) == 1:
        return ast.Neg(to_ast(args[0]))
    if head in _INFIX:
        if len(args) < 2:
            raise EquationError(f"({head} ...) needs two parts")
        out = to_ast(args[0])
        for a in args[1:]:
            out = ast.BinOp(head, out, to_ast(a))
        return out
    if isinstance(head, str):
        return ast.Call(ast.Var(head), tuple(map(to_ast, args)))
    return ast.Call(to_ast(head), tuple(map(to_ast, args)))


def compile_equation(world, rule_id: str, text: str):
    """A stated equation compiled over the rule's parameters."""
    rule = world.rule(rule_id)
    expr = to_ast(read_sexpr(text))
    mc = MetaCompiler(world.builder.mc.constants, world.builder.mc.defs)
    try:
        return mc.unit(f"{rule_id} (stated)", list(rule.params), expr)
    except SpecError as e:
        raise EquationError(e.message) from None


def _contexts():
    for in_function in (False, True):
        for in_loop in (False, True):
            ctx = Ctx()
            ctx.in_function, ctx.in_loop = in_function, in_loop
            ctx.loop_depth, ctx.call_depth = int(in_loop), int(in_function)
            yield ctx


def _outcome(unit, ctx, args):
    ctx.steps = 0
    try:
        return ("ok", unit(ctx, list(args)))
    except EvalError:
        return ("error", None)
    except (RecursionError, MemoryError, OverflowError):
        return ("error", None)


def _agree(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return True
    x, y = a[1], b[1]
    if type(x) is float or type(y) is float:
        try:
            return abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))
        except TypeError:
            return False
    return same(x, y)


def grade(world, rule_id: str, text: str, samples: int = SAMPLES) -> bool:
    """Whether a stated equation agrees with the true rule everywhere we look."""
    if not isinstance(text, str) or not text.strip():
        return False
    try:
        stated = compile_equation(world, rule_id, text.strip())
    except (EquationError, SpecError):
        return False
    true_op = world.builder.rule_op(rule_id)
    params = world.builder.base[world.builder.rules[rule_id].override.target].params
    variadic = bool(params) and params[-1].variadic
    rng = random.Random(f"equation:{world.seed}:{rule_id}")
    for args in values_for(params, rng, samples):
        true_args = args[:-1] + list(args[-1]) if variadic else args
        for ctx in _contexts():
            if not _agree(_outcome(true_op.unit, ctx, true_args), _outcome(stated, ctx, args)):
                return False
    return True
