"""The equation notation of rule reports, and their exact grading.

An equation is an s-expression over a rule's parameters and the context
variables, e.g. `(get xs (- i 1))`. It is read into the meta-language AST and
compiled like any rule body; a stated equation is correct when it agrees with
the true rule on generated inputs in every scope: same value, or both fail.
A rule's own equation is checked when the spec compiles (`check_equation`), so
a malformed one or one with an unknown head is a located error there.
"""
from __future__ import annotations

import functools
import itertools
import random
import re

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters

from worldspec import ast
from worldspec.builtins import BUILTINS
from worldspec.compiler.program.kernel import call_deep, on_deep_stack
from worldspec.compiler.program.surface import syntax_disagreement
from worldspec.compiler.program.values_gen import curated_values, values_for
from worldspec.diagnostics import SpecError, did_you_mean, source_line
from worldspec.meta import CTX_VARS, MetaCompiler
from worldspec.values import Ctx, EvalError, same, show_cut

# The notation, as a Lark grammar like the rest of the project's languages. A string's text is
# kept as written (no escapes are interpreted); an atom is any run of other characters.
GRAMMAR = r"""
start: _expr*
_expr: group | STRING | ATOM
group: LPAR _expr* ")"
LPAR: "("
STRING: /"(?:[^"\\]|\\.)*"/
ATOM: /[^\s()"][^\s()]*/
%ignore /\s+/
"""


@functools.cache
def _parsers() -> tuple[Lark, Lark]:
    """(parser, lexer), built on first use: about 0.16 s that a process which never reads an
    equation (a sandbox worker probing a world) should not pay at import. The balance check reads
    tokens alone; `parser.lex` would build (and, strict, collision-check with interegular) a new
    lexer on every call, about 3 ms: a lexer-only Lark builds it once."""
    return (Lark(GRAMMAR, parser="lalr", lexer="basic", strict=True),
            Lark(GRAMMAR, parser=None, lexer="basic", strict=True))


_INFIX = {"+", "-", "*", "/", "//", "%", "**", "^", "&", "|", "<<", ">>", "==", "!=", "<", "<=", ">", ">="}
MAX_EQUATION_CHARS = 2_000
MAX_DEPTH = 50
SAMPLES = 60
CURATED_SAMPLES = 30  # argument lists drawn from values_gen.CURATED before the random ones


class EquationError(ValueError):
    """An equation that cannot be read; `pos` is the offset in its text where the problem is."""

    def __init__(self, message: str, pos: int = 0):
        super().__init__(message)
        self.pos = pos


class Atom(str):
    """A token of an equation, with its offset in the text."""

    pos = 0


class Group(list):
    """A parenthesised part of an equation, with the offset of its '('."""

    pos = 0


def _at(cls, value, pos):
    x = cls(value)
    x.pos = pos
    return x


class _Nodes(Transformer):
    """The parse tree -> nested Groups of Atoms (strings as ("str", text) pairs)."""

    def group(self, children):
        return _at(Group, children[1:], children[0].start_pos)

    def STRING(self, token):
        return ("str", str(token)[1:-1])

    def ATOM(self, token):
        return _at(Atom, str(token), token.start_pos)


def _shape(tokens: list[Token]) -> None:
    """Say where brackets do not balance, nest too deeply, or more than one expression stands."""
    opened: list[int] = []
    tops = []
    for tok in tokens:
        if not opened and tok.type != "RPAR":
            tops.append(tok.start_pos)
        if tok.type == "LPAR":
            if len(opened) > MAX_DEPTH:
                raise EquationError("equation nests too deeply", tok.start_pos)
            opened.append(tok.start_pos)
        elif tok.type == "RPAR":
            if not opened:
                raise EquationError("unbalanced ')'", tok.start_pos)
            opened.pop()
    if opened:
        raise EquationError("unbalanced '(': a ')' is missing", opened[-1])
    if len(tops) != 1:
        raise EquationError("an equation is one expression", tops[1] if len(tops) > 1 else 0)


def read_sexpr(text: str):
    """Text -> nested Groups of Atoms (strings as ("str", value) pairs), read by GRAMMAR."""
    if len(text) > MAX_EQUATION_CHARS:
        raise EquationError("equation too long")
    try:
        parser, lexer = _parsers()
        _shape(list(lexer.lex(text)))
        return _Nodes().transform(parser.parse(text)).children[0]
    except UnexpectedCharacters as e:
        raise EquationError(f"cannot read {text[e.pos_in_stream:e.pos_in_stream + 10]!r}", e.pos_in_stream) from None


def to_ast(node, at=None) -> ast.Expr:
    """Nested s-expression -> meta-language AST; `at(pos)` gives the Span of an offset (if known)."""
    where = (lambda n: at(getattr(n, "pos", 0))) if at else (lambda n: ast.NOSPAN)

    def conv(n):
        return to_ast(n, at)
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
            raise EquationError(f"unknown symbol {node!r}", getattr(node, "pos", 0))
        return ast.Var(str(node), span=where(node))
    pos = getattr(node, "pos", 0)
    if not node:
        raise EquationError("empty ()", pos)
    head, *args = node
    if head == "if":
        if len(args) != 3:
            raise EquationError("(if c a b) takes three parts", pos)
        return ast.If(*map(conv, args))
    if head == "list":
        return ast.ListExpr(tuple(map(conv, args)))
    if head == "fn":
        names = args[0] if len(args) == 2 else None
        if not isinstance(names, Group) or not all(isinstance(n, Atom) and n.isidentifier() for n in names):
            raise EquationError("(fn (x y) body) takes a list of parameter names and a body", pos)
        return ast.Lambda(tuple(str(n) for n in names), conv(args[1]), span=where(head))
    if head in ("and", "or"):
        if len(args) < 2:
            raise EquationError(f"({head} ...) needs two or more parts", pos)
        out = conv(args[0])
        for a in args[1:]:
            out = (ast.And if head == "and" else ast.Or)(out, conv(a))
        return out
    if head == "not":
        if len(args) != 1:
            raise EquationError("(not x) takes one part", pos)
        return ast.Not(conv(args[0]))
    if head == "-" and len(args) == 1:
        return ast.Neg(conv(args[0]))
    if head in _INFIX:
        if len(args) < 2:
            raise EquationError(f"({head} ...) needs two parts", pos)
        out = conv(args[0])
        for a in args[1:]:
            out = ast.BinOp(str(head), out, conv(a))
        return out
    if isinstance(head, str):
        return ast.Call(ast.Var(str(head), span=where(head)), tuple(map(conv, args)), span=where(head))
    return ast.Call(conv(head), tuple(map(conv, args)), span=where(head))


HEADS = ("if", "list", "fn", "and", "or", "not", *sorted(_INFIX))


def _unknown_head(node, known) -> Atom | None:
    """The first head of a group that names no operator, builtin, def or parameter."""
    todo = [(node, frozenset(known))]
    while todo:
        n, names = todo.pop()
        if isinstance(n, Group) and n:
            head = n[0]
            if head == "fn" and len(n) == 3 and isinstance(n[1], Group):  # (fn (x y) body): x and y are names
                todo.append((n[2], names | {str(x) for x in n[1]}))
                continue
            if isinstance(head, Atom) and head not in HEADS and head not in names:
                return head
            todo += [(x, names) for x in reversed(n)]
    return None


def check_equation(mc: MetaCompiler, text: str, params: list[str], span: ast.Span, changes: str = "") -> None:
    """A rule's equation must read and compile over its parameters: else a SpecError at the
    place in the equation's text where it goes wrong. `changes`: the op the rule changes."""
    if not text:
        return
    line = source_line(span.file, span.line) if span.line else ""
    quote = line.find('"', max(span.col - 1, 0)) if line else -1
    first = quote + 2 if quote >= 0 else span.col  # the column of the text's first character

    def at(pos: int) -> ast.Span:
        return ast.Span(span.file, span.line, first + pos) if span.line else span
    hint = ("An equation is one prefix expression over the rule's parameters, e.g. (get xs (- i 1)); "
            "heads are " + " ".join(HEADS) + ", builtin names and defs.")
    try:
        node = read_sexpr(text)
        expr = to_ast(node, at)
    except EquationError as e:
        raise SpecError(at(e.pos), f"the equation {text!r} cannot be read: {e}", hint) from None
    known = set(BUILTINS) | set(mc.defs) | set(params) | set(CTX_VARS) | set(mc.constants)
    head = _unknown_head(node, known)
    if head is not None and str(head) in mc.unreachable:  # an op of the world: say so, not "did you mean"
        own = str(head) == changes
        raise SpecError(at(head.pos), f"the equation {text!r} names {head}, "
                        + ("the op this rule changes" if own else "an op of the world"),
                        "An equation states what the op computes now, over the rule's parameters, in builtins "
                        "and defs" + (f" (not in terms of {head} itself)" if own else "") + ", e.g. (get xs (- i 1)).")
    if head is not None:
        raise SpecError(at(head.pos), f"the equation {text!r} has an unknown head {str(head)!r}",
                        did_you_mean(head, [*BUILTINS, *mc.defs, *HEADS]).strip() or hint)
    try:
        MetaCompiler(mc.constants, mc.defs).unit("<equation>", list(params), expr)
    except SpecError as e:
        raise SpecError(e.span if e.span.line else span, f"the equation {text!r}: {e.message}",
                        e.hint) from None


def compile_equation(world, rule_id: str, text: str):
    """A stated equation compiled over the rule's parameters."""
    rule = world.rule(rule_id)
    expr = to_ast(read_sexpr(text))
    mc = MetaCompiler(world.builder.mc.constants, world.builder.mc.defs)
    try:
        return mc.unit(f"{rule_id} (stated)", list(rule.params), expr)
    except SpecError as e:
        raise EquationError(e.message) from None


# (in_loop, loop_depth, iteration): outside loops, the first and a later pass of a loop, a nested loop
_LOOPS = ((False, 0, 0), (True, 1, 0), (True, 1, 1), (True, 2, 2))


def _contexts():
    for in_function in (False, True):
        for in_loop, loop_depth, iteration in _LOOPS:
            ctx = Ctx()
            ctx.in_function, ctx.in_loop = in_function, in_loop
            ctx.loop_depth, ctx.call_depth, ctx.iteration = loop_depth, int(in_function), iteration
            yield ctx


def _outcome(unit, ctx, args):
    ctx.steps = 0
    try:
        try:
            return ("ok", unit(ctx, list(args)))
        except RecursionError:  # recursive defs: again on a deep stack, as a program would run them
            if on_deep_stack():
                raise
            ctx.steps = 0
            return ("ok", call_deep(lambda: unit(ctx, list(args))))
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
    return disagreement(world, rule_id, text, samples) is None


def disagreement(world, rule_id: str, text: str, samples: int = SAMPLES) -> str | None:
    """Where a stated equation and the true rule part (the arguments, the scope, both outcomes), or
    why the equation cannot be read; None when they agree everywhere we look."""
    if not isinstance(text, str) or not text.strip():
        return "no equation"
    if world.surfaces is not None and rule_id in world.surfaces.by_rule:  # a precedence: stated as an entry
        return syntax_disagreement(world.surfaces, world.applied, rule_id, text)
    try:
        stated = compile_equation(world, rule_id, text.strip())
    except (EquationError, SpecError) as e:
        return f"it cannot be read: {getattr(e, 'message', e)}"
    true_op = world.builder.rule_op(rule_id)
    params = world.builder.base[world.builder.rules[rule_id].override.target].params
    variadic = bool(params) and params[-1].variadic
    rng = random.Random(f"equation:{world.seed}:{rule_id}")
    # the curated edge values first (0, "", [], signs, case: a random draw of `any` misses 0 more than
    # one time in three in 60 samples), then the seeded random ones
    edges = curated_values(params, random.Random(f"edges:{world.seed}:{rule_id}"), CURATED_SAMPLES)
    for args in itertools.chain(edges, values_for(params, rng, samples)):
        true_args = args[:-1] + list(args[-1]) if variadic else args
        for ctx in _contexts():
            want, got = _outcome(true_op.unit, ctx, true_args), _outcome(stated, ctx, args)
            if not _agree(want, got):
                names = ", ".join(f"{p.name} = {_value(a)}" for p, a in zip(params, args))
                return (f"with {names or 'no arguments'}{_scope(ctx)} the rule gives {_shown(want)} "
                        f"and the equation {_shown(got)}")
    return None


def _scope(ctx) -> str:
    where = [w for w, on in (("in a function", ctx.in_function), (f"in a loop (pass {ctx.iteration + 1})",
                                                                   ctx.in_loop)) if on]
    return f" ({', '.join(where)})" if where else ""


def _shown(outcome) -> str:
    return "an error" if outcome[0] == "error" else _value(outcome[1])


def _value(v) -> str:
    """A value as a spec writes it (a string quoted, as inside a list), cut with its size when it is long
    (a rule's value may be far too large to show: `hook iterate(xs) = range(100000)`)."""
    return show_cut(v, quoted=True)
