"""Operator bodies for the native kernel: a meta-language body (worldspec.ast) compiled to a
Python function `o<n>(run, p0, p1, ...)` in the program's own generated module.

It means exactly what worldspec.meta's closures mean: two ints take Python's operator (and
a result out of the integer range goes through the checked builtin, as any other operand
does), builtins and defs are the same objects called the same way. The context a body reads
(in_function, in_loop, loop_depth) is fixed at the call site of a program, so it is folded
to a constant there; a body reading anything else (call_depth, iteration), or written with
let, lambdas, maps, lazy or optional parameters or prior(...), is not compiled here: the
program calls its compiled closure instead. Parameters and temporaries are the compiler's
own names (p<n>, t<n>): a spec's names never become Python names.
"""
from __future__ import annotations

import ast as py

from worldspec import ast
from worldspec.builtins import BUILTINS, INFIX, neg
from worldspec.meta import CTX_VARS
from worldspec.pynodes import load, node, store
from worldspec.values import MAX_INT_BITS, collection

BIG = 1 << MAX_INT_BITS
ARITHMETIC = {"+": py.Add, "-": py.Sub, "*": py.Mult, "^": py.BitXor, "&": py.BitAnd, "|": py.BitOr}
COMPARISON = {"<": py.Lt, "<=": py.LtE, ">": py.Gt, ">=": py.GtE, "==": py.Eq, "!=": py.NotEq}
OP_NODES = frozenset({py.BinOp, py.Is, *ARITHMETIC.values(), *COMPARISON.values()})
# the builtins that never call a function value (so never reach the run's frame)
SAFE_BUILTINS = tuple(f for name, (f, *_) in BUILTINS.items() if name not in {"sort_by", "map", "filter", "fold"}) \
    + tuple(INFIX.values()) + (neg,)


class Untranslatable(Exception):
    """A body this module leaves to the meta-language's closures."""




_n, _name, _store = node, load, store


def _call(fn: str, *args: py.expr) -> py.Call:
    return _n(py.Call, _name(fn), list(args), [])


def _set(target: str, value: py.expr) -> py.Assign:
    return _n(py.Assign, [_store(target)], value)


class BodyCompiler:
    """One operator body at one static context -> the statements of a generated function."""

    def __init__(self, ref, temp, params: list[str], mc, ctx: dict, args: list[py.expr]):
        self.ref, self.temp = ref, temp  # the program compiler's table and local names
        self.params = dict(zip(params, args))  # each parameter's argument: a local name or a constant
        self.mc, self.ctx = mc, ctx

    def inline(self, body: ast.Expr) -> tuple[list[py.stmt], py.expr]:
        """The statements that compute the body at its call site, and the name or constant holding it."""
        return self.expr(body)

    def expr(self, e) -> tuple[list[py.stmt], py.expr]:
        """Statements that compute e, and a name or constant holding its value."""
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            raise Untranslatable(type(e).__name__)
        return method(e)

    def value(self, v) -> py.expr:
        return _n(py.Constant, v) if type(v) in (int, float, str, bool, type(None)) else _name(self.ref(v))

    def _Const(self, e):
        return [], self.value(e.value)

    def _Var(self, e):
        if e.name in self.params:
            return [], atom(self.params[e.name])
        if e.name in CTX_VARS or e.name in self.mc.extra_vars:
            if e.name not in self.ctx:
                raise Untranslatable(e.name)
            return [], self.value(self.ctx[e.name])
        if e.name in self.mc.constants:
            return [], self.value(self.mc.constants[e.name])
        raise Untranslatable(e.name)  # a def or builtin as a value

    def _ListExpr(self, e):
        stmts, items = self.many(e.items)
        return stmts, _call(self.ref(collection), _name("run"), _n(py.List, items, py.Load()))

    def many(self, es) -> tuple[list[py.stmt], list[py.expr]]:
        stmts, values = [], []
        for x in es:
            s, v = self.operand(x)
            stmts += s
            values.append(v)
        return stmts, values

    def operand(self, e) -> tuple[list[py.stmt], py.expr]:
        """expr(e), its value held in a name or a constant (it is read more than once)."""
        stmts, v = self.expr(e)
        if type(v) is py.Constant or type(v) is py.Name:
            return stmts, v
        t = self.temp()
        return [*stmts, _set(t, v)], _name(t)

    def _Call(self, e):
        if not isinstance(e.fn, ast.Var) or e.fn.name in self.params:
            raise Untranslatable("a call of a value")
        name = e.fn.name
        stmts, args = self.many(e.args)
        if name in self.mc.defs:
            u = self.mc.defs[name]
            if u.body is None:
                raise Untranslatable(name)
            return stmts, _call(self.ref(u), _name("run"), _n(py.List, args, py.Load()))
        if name in BUILTINS:
            slow = _call(self.ref(BUILTINS[name][0]), _name("run"), *args)
            fast = getattr(self, "fast_" + name, None)
            if fast is None:
                return stmts, slow
            t = self.temp()
            test, value = fast(*args)
            return stmts + [_n(py.If, test, [_set(t, value)], [_set(t, slow)])], _name(t)
        raise Untranslatable(name)

    def _BinOp(self, e):
        ls, x = self.operand(e.left)
        rs, y = self.operand(e.right)
        stmts = [*ls, *rs]
        slow = _call(self.ref(INFIX[e.op]), _name("run"), x, y)
        if e.op not in ARITHMETIC and e.op not in COMPARISON:
            return stmts, slow
        t = self.temp()
        both_int = self.ints(x, y)
        if both_int is False:  # a constant operand that is not an int: the checked builtin only
            return stmts + [_set(t, slow)], _name(t)
        if e.op in COMPARISON:
            fast = [_set(t, _n(py.Compare, atom(x), [COMPARISON[e.op]()], [atom(y)]))]
        else:
            in_range = _n(py.Compare, _n(py.Constant, -BIG), [py.Lt(), py.Lt()], [_name(t), _n(py.Constant, BIG)])
            fast = [_set(t, _n(py.BinOp, atom(x), ARITHMETIC[e.op](), atom(y))),
                    _n(py.If, _n(py.UnaryOp, py.Not(), in_range), [_set(t, slow)], [])]
        if both_int is True:  # both operands are int constants
            return stmts + fast, _name(t)
        return stmts + [_n(py.If, both_int, fast, [_set(t, slow)])], _name(t)

    def is_type(self, x: py.expr, cls) -> py.expr:
        """`type(x) is cls`."""
        return _n(py.Compare, _call(self.ref(type), atom(x)), [py.Is()], [_name(self.ref(cls))])

    def ints(self, *xs: py.expr):
        """The test that every operand is an int: True or False when the constants decide it."""
        tests = []
        for x in xs:
            if type(x) is py.Constant:
                if type(x.value) is not int:
                    return False
            else:
                tests.append(self.is_type(x, int))
        if not tests:
            return True
        return tests[0] if len(tests) == 1 else _n(py.BoolOp, py.And(), tests)

    # builtins whose common case is a plain operation: (test, value) of that case

    def fast_get(self, xs, i):
        in_bounds = _n(py.Compare, _n(py.Constant, 0), [py.LtE(), py.Lt()], [atom(i), _call(self.ref(len), atom(xs))])
        test = _n(py.BoolOp, py.And(), [self.is_type(i, int), self.is_type(xs, list), in_bounds])
        return test, _n(py.Subscript, atom(xs), atom(i), py.Load())

    def fast_len(self, xs):
        return self.is_type(xs, list), _call(self.ref(len), atom(xs))

    def fast_truthy(self, v):
        return self.is_type(v, bool), atom(v)

    def _Neg(self, e):
        s, x = self.expr(e.operand)
        return s, _call(self.ref(neg), _name("run"), x)

    def _Not(self, e):
        s, x = self.expr(e.operand)
        return s, _n(py.UnaryOp, py.Not(), x)

    def _If(self, e):
        cs, c = self.expr(e.cond)
        if type(c) is py.Constant:  # a static context: only the branch taken is compiled
            chosen = self.expr(e.then if c.value else e.orelse)
            return cs + chosen[0], chosen[1]
        t = self.temp()
        ts, tv = self.expr(e.then)
        os_, ov = self.expr(e.orelse)
        return cs + [_n(py.If, c, [*ts, _set(t, tv)], [*os_, _set(t, ov)])], _name(t)

    def _And(self, e):
        return self.logic(e, True)

    def _Or(self, e):
        return self.logic(e, False)

    def logic(self, e, conj: bool):
        """`a and b` / `a or b` as booleans, b evaluated only when a does not decide."""
        ls, a = self.expr(e.left)
        rs, b = self.expr(e.right)
        t = self.temp()
        as_bool = _n(py.UnaryOp, py.Not(), _n(py.UnaryOp, py.Not(), b))
        decided = _set(t, _n(py.Constant, not conj))
        right = [*rs, _set(t, as_bool)]
        return ls + [_n(py.If, a, right if conj else [decided], [decided] if conj else right)], _name(t)


def atom(x: py.expr) -> py.expr:
    """A fresh copy of a name or constant (a node is placed once in a tree)."""
    return _n(py.Constant, x.value) if type(x) is py.Constant else _name(x.id)


def static_context(loops: int, in_function: bool) -> dict:
    """What a body reads of its context at a program call site that is known when compiling it."""
    return {"in_function": in_function, "in_loop": loops > 0, "loop_depth": loops}
