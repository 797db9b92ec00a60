"""The meta-language at native speed: a body (rule body, `hidden`, `expect`, def) compiled to a tree
of Python `ast` nodes, and that tree compiled to a Python function. Never to source text, never
eval/exec.

The generated code means exactly what the closure compiler (worldspec/meta.py) means, which stays
the reference (the differential oracle of tests/test_meta_ast.py) and is chosen with
`WORLDSPEC_META=closure` or `meta.compiler_mode("closure")`. The closure compiler always runs
first on a body: it checks names and arities (its SpecErrors are the spec's) and keeps the def
bookkeeping (which defs a body reads, which calls close a cycle); this module is then handed the
checked tree and the compiler, and either returns a native body or None (the closure stays).

A generated body is `g(c, p0, p1, ...)` (c the evaluation context, p the parameters) behind an
adaptor `b(f)` on the closure compiler's frame `[parent, ctx, arg...]`, so a `Unit` holding it is
called as before by every caller (the program kernels build frames themselves). Parameters and
`let` bindings are Python locals, lambdas nested Python functions reading their defining body's
locals; calls of defs are direct calls of the callee's generated function through its Unit's
`cell` (so a body replaced later, a precomputed def, is what the call reaches).

Why it is safe (each point is tested in tests/test_meta_ast.py):
- No spec identifier becomes a Python identifier: a parameter or binding is the local `v<n>` (a
  number per binding), every other name is resolved at compile time to a table entry. The other
  Python names are the compiler's own: `c`, `f`, `t<n>`, `l<n>`, `g<n>`, `b<n>`.
- The table is the generated code's globals: builtins of the language, defs' Units and cells,
  this module's helpers, constants. Its `__builtins__` is empty, so no Python builtin can be
  reached by name.
- Only the node types in ALLOWED_NODES are emitted: no Import, Global, Nonlocal, Lambda,
  comprehension, starred, f-string or decorator. An Attribute is only `c.<field>` for a field of
  the context in CTX_FIELDS (the scope flags, the step count and limit, the meta depth) or a kind's
  declared context variable; every Call's function is a table name, a `cell[0]` of a table name,
  or a generated function (`vet` checks each module before it is compiled).
- Limits are exact and the closure compiler's: a call closing a cycle of defs counts one level of
  MAX_META_DEPTH and pays one step (inline, `c.steps += 1` against `c.max_steps`, as Ctx.charge);
  a call of a function value pays one step; a lambda's application counts a level; every list and
  map built is measured (`values.collection`); builtins pay for their own work, as before.
- `build` is the one place this module calls compile(), on an `ast.Module` built here.
"""
from __future__ import annotations

import ast as py
import types

from worldspec import ast
from worldspec.builtins import BUILTINS, INFIX, neg
from worldspec.pynodes import ObjectTable, load as _load, node as _n, store as _store
from worldspec.values import (MAX_INT_BITS, MAX_META_DEPTH, EvalError, Function, LimitError, Thunk,
                              collection)

BIG = 1 << MAX_INT_BITS
CTX_VARS = ("in_function", "in_loop", "loop_depth", "call_depth", "iteration")
CTX_FIELDS = frozenset({*CTX_VARS, "steps", "max_steps", "meta_depth"})
ARITHMETIC = {"+": py.Add, "-": py.Sub, "*": py.Mult, "^": py.BitXor, "&": py.BitAnd, "|": py.BitOr}
COMPARISON = {"<": py.Lt, "<=": py.LtE, ">": py.Gt, ">=": py.GtE, "==": py.Eq, "!=": py.NotEq}
ALLOWED_NODES = frozenset({
    py.Module, py.FunctionDef, py.arguments, py.arg, py.Return, py.Assign, py.AugAssign, py.Expr, py.If,
    py.Try, py.Name, py.Load, py.Store, py.Constant, py.List, py.Dict, py.Subscript, py.Call, py.Compare,
    py.UnaryOp, py.Not, py.USub, py.BoolOp, py.And, py.Or, py.BinOp, py.Is, py.IsNot, py.In, py.Attribute,
    *ARITHMETIC.values(), *COMPARISON.values(), py.FloorDiv, py.Mod, py.Div,
})
LOCALS = frozenset({"c", "f"})  # the generated code's own variables (and t<n>, v<n>, l<n>, g<n>, b<n>)
PLAIN = (int, float, str, bool, type(None))
NUMS = frozenset({int, float})  # the number types (a bool is not one)
FAST_ARITY = {"get": 2, "len": 1, "abs": 1, "truthy": 1}  # builtins with an inline common case (fast_<name>)
# builtins that only test a value's type (builtins.py: `type(v) is T`, `v is None`): inlined as the test
TYPE_TESTS = {"is_int": int, "is_str": str, "is_list": list, "is_bool": bool, "is_float": float, "is_map": dict,
              "is_none": None}
ORDER = ("<", "<=", ">", ">=")
FLOATING = ("+", "-", "*")  # operators whose float case is Python's operator too
DIVISION = {"//": py.FloorDiv, "%": py.Mod}  # of two ints, b not 0: Python's own (the result is in range)


# ---------------------------------------------------------------- helpers the generated code calls


def too_deep():
    """MAX_META_DEPTH passed by a call closing a cycle of defs."""
    raise LimitError(f"rule recursion limit reached (more than {MAX_META_DEPTH} nested calls)")


def over(ctx) -> None:
    """The step limit, passed by generated code counting a step on the context."""
    raise LimitError(f"step limit reached ({ctx.max_steps} steps)")


def bad_key():
    """A map literal's key of another type than int or str."""
    raise EvalError("map keys must be integers or strings")


def callee(ctx, g):
    """The function value about to be called, checked; the step a call of a value pays."""
    if not isinstance(g, Function):
        raise EvalError("only functions can be called")
    ctx.charge(1)
    return g


def apply(g, *args):
    """A call of a function value (checked by `callee`)."""
    return g(*args)


def force(v):
    """A lazy parameter's value."""
    return v.force()


def def_function(unit, ctx) -> Function:
    """A def named as a value."""
    return unit.as_function(ctx)


def cycle_function(unit, ctx) -> Function:
    """A def named as a value where naming it closes a cycle: each call counts a level and pays a step."""
    def call(args):
        ctx.meta_depth += 1
        try:
            if ctx.meta_depth > MAX_META_DEPTH:
                too_deep()
            ctx.charge(1)
            return unit(ctx, args)
        finally:
            ctx.meta_depth -= 1
    return Function(unit.name, None, call)


def builtin_function(name: str, ctx) -> Function:
    """A builtin named as a value."""
    fn, lo, hi = BUILTINS[name]
    return Function(name, lo if lo == hi else None, lambda args: fn(ctx, *args))


def lambda_function(ctx, body, n: int) -> Function:
    """A lambda value: `body(*args)` (a generated function) under the arity check and MAX_META_DEPTH."""
    def call(args):
        if len(args) != n:
            raise EvalError(f"a lambda of {n} parameter(s) was called with {len(args)}")
        ctx.meta_depth += 1  # a lambda applied to itself recurses: bound its depth
        try:
            if ctx.meta_depth > MAX_META_DEPTH:
                too_deep()
            return body(*args)
        finally:
            ctx.meta_depth -= 1
    return Function("lambda", n, call)


# ---------------------------------------------------------------- building


def vet(tree: py.AST, table: dict, attrs: frozenset = CTX_FIELDS) -> None:
    """Refuse a tree that holds a node, a name, an attribute or a call this compiler never emits."""
    own, named, called = set(), [], []  # generated functions; names and callees checked once all are known
    stack = [tree]
    while stack:  # every node (ast.walk's visit, without its per-field generators: this runs on every body)
        node = stack.pop()
        t = type(node)
        if t not in ALLOWED_NODES:
            raise AssertionError(f"meta compiler emitted {t.__name__}")
        for field in t._fields:
            v = getattr(node, field, None)
            if type(v) is list:
                stack.extend(v)
            elif isinstance(v, py.AST):
                stack.append(v)
        if t is py.Name:
            ident = node.id
            if not (ident in table or ident in LOCALS or ident[0] in "tv" and ident[1:].isdigit()):
                named.append(ident)
        elif t is py.Attribute:
            if not (type(node.value) is py.Name and node.value.id == "c" and node.attr in attrs):
                raise AssertionError(f"meta compiler emitted the attribute {node.attr}")
        elif t is py.Call:
            fn = node.func
            if type(fn) is py.Subscript:
                if not (type(fn.value) is py.Name and fn.value.id in table and type(fn.slice) is py.Constant
                        and fn.slice.value == 0):
                    raise AssertionError("meta compiler emitted a call of something outside its table")
            elif type(fn) is py.Name:
                if fn.id not in table:
                    called.append(fn.id)
            else:
                raise AssertionError("meta compiler emitted a call of something outside its table")
        elif t is py.FunctionDef:
            if node.decorator_list or node.returns is not None:
                raise AssertionError("meta compiler emitted a decorator")
            own.add(node.name)
    for ident in named:
        if ident not in own:
            raise AssertionError(f"meta compiler emitted the name {ident}")
    for ident in called:
        if ident not in own:
            raise AssertionError("meta compiler emitted a call of something outside its table")


def build(module: py.Module, table: dict) -> dict:
    """The functions a generated module defines at its top, with `table` as their globals.

    The one place this module calls compile(). It is safe because its input is not text: it is an
    ast.Module this module's compiler assembled node by node, of the node types in ALLOWED_NODES
    only, whose names are the table's, the compiler's own locals or mangled bindings, and whose
    calls are of table names or generated functions (`vet` checks that before; the tests run it on
    every module compiled for the bundled worlds). Spec text only ever reaches it as string
    constants. The module's code is never run: each function's code object becomes a function
    whose globals are the table, with no builtins.
    """
    table["__builtins__"] = {}
    code = compile(module, "<meta>", "exec", dont_inherit=True)
    return {c.co_name: types.FunctionType(c, table, c.co_name) for c in code.co_consts
            if isinstance(c, types.CodeType)}




def _set(target: str, value: py.expr) -> py.Assign:
    return _n(py.Assign, [_store(target)], value)


def _call(fn: py.expr, *args: py.expr) -> py.Call:
    return _n(py.Call, fn, list(args), [])


def _atom(x: py.expr) -> py.expr:
    """A fresh copy of a name or constant (a node is placed once in a tree)."""
    return _n(py.Constant, x.value) if type(x) is py.Constant else _load(x.id)


def _field(name: str, ctx=py.Load) -> py.Attribute:
    return _n(py.Attribute, _load("c"), name, ctx())


def _compare(a: py.expr, op, b: py.expr) -> py.Compare:
    return _n(py.Compare, a, [op()], [b])


def _arguments(names: list[str]) -> py.arguments:
    return py.arguments(posonlyargs=[], args=[py.arg(arg=a, lineno=1, col_offset=0) for a in names], vararg=None, kwonlyargs=[],
                        kw_defaults=[], kwarg=None, defaults=[])


def _function(name: str, params: list[str], body: list[py.stmt]) -> py.FunctionDef:
    return _n(py.FunctionDef, name, _arguments(params), body or [_n(py.Return, _n(py.Constant, None))], [], None)


class _Scope:
    """Spec names -> (Python local, whether it holds a Thunk), through the enclosing lambdas."""

    def __init__(self, names: dict, parent: "_Scope | None" = None):
        self.names, self.parent = names, parent

    def lookup(self, name: str):
        scope = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None


class NativeCompiler(ObjectTable):
    """One checked body -> a generated module (its function and the frame adaptor)."""

    def __init__(self, mc):
        self.mc = mc  # the closure compiler that checked the body: constants, defs, extra_vars, cycles
        self.table: dict = {}
        self.ids: dict[int, str] = {}
        self.count = 0
        self.pre: list[py.stmt] = []  # the statements computing the expression being compiled
        self.attrs = CTX_FIELDS | frozenset(mc.extra_vars)
        self.k_type = self.ref(type)
        self.k_int = self.ref(int)
        self.k_nums = self.ref(NUMS)

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def value(self, v) -> py.expr:
        """A value: a constant when Python's literal holds it exactly, else a table entry."""
        return _n(py.Constant, v) if type(v) in PLAIN else _load(self.ref(v))

    def spill(self, value: py.expr) -> py.Name:
        t = self.fresh("t")
        self.pre.append(_set(t, value))
        return _load(t)

    def is_int(self, x: py.expr) -> py.expr:
        return _n(py.Compare, _call(_load(self.k_type), _atom(x)), [py.Is()], [_load(self.k_int)])

    def ints(self, *xs: py.expr):
        """The test that every operand is an int: True or False when constants decide it."""
        tests = []
        for x in xs:
            if type(x) is py.Constant:
                if type(x.value) is not int:
                    return False
            else:
                tests.append(self.is_int(x))
        if not tests:
            return True
        return tests[0] if len(tests) == 1 else _n(py.BoolOp, py.And(), tests)

    def branch(self, e, s, t: str) -> list[py.stmt]:
        """The statements computing e into the local t (a block of their own)."""
        saved, self.pre = self.pre, []
        try:
            v = self.expr(e, s)
            return [*self.pre, _set(t, v)]
        finally:
            self.pre = saved

    # ------------------------------------------------------------ bodies

    def module(self, name: str, params: list[str], body: ast.Expr, lazy: tuple[int, ...]):
        """The module of one body: `g<n>(c, v...)` and its adaptor `b<n>(f)`."""
        locals_ = [self.fresh("v") for _ in params]
        scope = _Scope({p: (v, i in lazy) for i, (p, v) in enumerate(zip(params, locals_))})
        self.pre = []
        result = self.expr(body, scope)
        gen, adaptor = self.fresh("g"), self.fresh("b")
        fn = _function(gen, ["c", *locals_], [*self.pre, _n(py.Return, result)])
        frame = [_n(py.Subscript, _load("f"), _n(py.Constant, i), py.Load()) for i in range(1, 2 + len(params))]
        entry = _function(adaptor, ["f"], [_n(py.Return, _call(_load(gen), *frame))])
        self.table[gen] = None  # the adaptor's call of its body: set once built
        return py.Module([fn, entry], []), gen, adaptor

    # ------------------------------------------------------------ expressions

    def expr(self, e: ast.Expr, s: _Scope) -> py.expr:
        """Statements computing e (appended to self.pre), and the name or constant holding its value."""
        return getattr(self, "_" + type(e).__name__)(e, s)

    def _Const(self, e, s):
        return self.value(e.value)

    def _ListExpr(self, e, s):
        items = [self.expr(x, s) for x in e.items]
        return self.spill(_call(_load(self.ref(collection)), _load("c"), _n(py.List, items, py.Load())))

    def _MapExpr(self, e, s):
        out = self.fresh("t")
        self.pre.append(_set(out, _n(py.Dict, [], [])))
        for k, v in e.pairs:  # in the closure compiler's order: a key, its check, its value
            key = self.expr(k, s)
            if not (type(key) is py.Constant and type(key.value) in (int, str)):
                wrong = _n(py.BoolOp, py.And(), [
                    _n(py.Compare, _call(_load(self.k_type), _atom(key)), [py.IsNot()], [_load(self.k_int)]),
                    _n(py.Compare, _call(_load(self.k_type), _atom(key)), [py.IsNot()], [_load(self.ref(str))])])
                self.pre.append(_n(py.If, wrong, [_n(py.Expr, _call(_load(self.ref(bad_key))))], []))
            value = self.expr(v, s)
            self.pre.append(_n(py.Assign, [_n(py.Subscript, _load(out), _atom(key), py.Store())], value))
        return self.spill(_call(_load(self.ref(collection)), _load("c"), _load(out)))

    def _Var(self, e, s):
        name = e.name
        found = s.lookup(name)
        if found is not None:
            local, lazy = found
            if not lazy:
                return _load(local)
            t = self.spill(_load(local))
            self.pre.append(_n(py.If, _n(py.Compare, _call(_load(self.k_type), _load(t.id)), [py.Is()],
                                         [_load(self.ref(Thunk))]),
                               [_set(t.id, _call(_load(self.ref(force)), _load(t.id)))], []))
            return _load(t.id)
        mc = self.mc
        if name in CTX_VARS or name in mc.extra_vars:
            return self.spill(_field(name))
        if name in mc.constants:
            return self.value(mc.constants[name])
        if name in mc.defs:
            u = mc.defs[name]
            helper = cycle_function if mc.closes_cycle(name) else def_function
            return self.spill(_call(_load(self.ref(helper)), _load(self.ref(u)), _load("c")))
        return self.spill(_call(_load(self.ref(builtin_function)), _n(py.Constant, name), _load("c")))

    def _Call(self, e, s):
        mc = self.mc
        if isinstance(e.fn, ast.Var) and s.lookup(e.fn.name) is None:
            name = e.fn.name
            if name in mc.defs:
                return self.def_call(name, [self.expr(a, s) for a in e.args])
            if name in BUILTINS:
                return self.builtin_call(name, [self.expr(a, s) for a in e.args])
        g = self.expr(e.fn, s)  # in the closure compiler's order: the callee, its check and step, the arguments
        g = self.spill(_call(_load(self.ref(callee)), _load("c"), g))
        args = [self.expr(a, s) for a in e.args]
        return self.spill(_call(_load(self.ref(apply)), _load(g.id), *args))

    def def_call(self, name: str, args: list[py.expr]) -> py.expr:
        u = self.mc.defs[name]
        if not u.variadic and len(args) == u.arity:  # the callee's generated function, through its cell
            call = _call(_n(py.Subscript, _load(self.ref(u.cell)), _n(py.Constant, 0), py.Load()), _load("c"), *args)
        else:
            call = _call(_load(self.ref(u)), _load("c"), _n(py.List, args, py.Load()))
        if not self.mc.closes_cycle(name):
            return self.spill(call)
        # a call closing a cycle: one level of MAX_META_DEPTH, then one step (meta.cycle_call's order)
        t = self.fresh("t")
        self.pre.append(_n(py.AugAssign, _field("meta_depth", py.Store), py.Add(), _n(py.Constant, 1)))
        guarded = [
            _n(py.If, _compare(_field("meta_depth"), py.Gt, _n(py.Constant, MAX_META_DEPTH)),
               [_n(py.Expr, _call(_load(self.ref(too_deep))))], []),
            _n(py.AugAssign, _field("steps", py.Store), py.Add(), _n(py.Constant, 1)),
            _n(py.If, _compare(_field("steps"), py.Gt, _field("max_steps")),
               [_n(py.Expr, _call(_load(self.ref(over)), _load("c")))], []),
            _set(t, call)]
        leave = [_n(py.AugAssign, _field("meta_depth", py.Store), py.Sub(), _n(py.Constant, 1))]
        self.pre.append(_n(py.Try, guarded, [], [], leave))
        return _load(t)

    def builtin_call(self, name: str, args: list[py.expr]) -> py.expr:
        if name in TYPE_TESTS and len(args) == 1:
            want = TYPE_TESTS[name]
            if want is None:
                return self.spill(_n(py.Compare, _atom(args[0]), [py.Is()], [_n(py.Constant, None)]))
            return self.spill(_n(py.Compare, _call(_load(self.k_type), _atom(args[0])), [py.Is()],
                                 [_load(self.ref(want))]))
        slow = _call(_load(self.ref(BUILTINS[name][0])), _load("c"), *args)
        fast = getattr(self, "fast_" + name, None)
        if fast is None or len(args) != FAST_ARITY[name]:
            return self.spill(slow)
        t = self.fresh("t")
        test, value = fast(*args)
        otherwise = [_set(t, _call(_load(self.ref(BUILTINS[name][0])), _load("c"), *map(_atom, args)))]
        if name == "get":  # a list's element, else a map's entry, else the builtin
            test2, value2 = self.fast_get_map(*args)
            otherwise = [_n(py.If, test2, [_set(t, value2)], otherwise)]
        self.pre.append(_n(py.If, test, [_set(t, value)], otherwise))
        return _load(t)

    # builtins whose common case is a plain operation: (test, value) of that case, as builtins.py decides it

    def fast_get(self, xs, i):
        in_bounds = _n(py.Compare, _n(py.Constant, 0), [py.LtE(), py.Lt()],
                       [_atom(i), _call(_load(self.ref(len)), _atom(xs))])
        is_list = _n(py.Compare, _call(_load(self.k_type), _atom(xs)), [py.Is()], [_load(self.ref(list))])
        return _n(py.BoolOp, py.And(), [self.is_int(i), is_list, in_bounds]), \
            _n(py.Subscript, _atom(xs), _atom(i), py.Load())

    def fast_get_map(self, xs, i):
        """get(m, k) of a map and an int or str key it holds: the hash lookup (builtins.get's own)."""
        key = _n(py.BoolOp, py.Or(), [self.is_int(i), _n(py.Compare, _call(_load(self.k_type), _atom(i)), [py.Is()],
                                                                  [_load(self.ref(str))])])
        is_map = _n(py.Compare, _call(_load(self.k_type), _atom(xs)), [py.Is()], [_load(self.ref(dict))])
        held = _n(py.Compare, _atom(i), [py.In()], [_atom(xs)])
        return _n(py.BoolOp, py.And(), [is_map, key, held]), _n(py.Subscript, _atom(xs), _atom(i), py.Load())

    def fast_abs(self, v):
        return self.is_int(v), _call(_load(self.ref(abs)), _atom(v))

    def fast_truthy(self, v):
        return _n(py.Compare, _call(_load(self.k_type), _atom(v)), [py.Is()], [_load(self.ref(bool))]), _atom(v)

    def fast_len(self, xs):
        return _n(py.Compare, _call(_load(self.k_type), _atom(xs)), [py.Is()], [_load(self.ref(list))]), \
            _call(_load(self.ref(len)), _atom(xs))

    def _BinOp(self, e, s):
        x, y = self.expr(e.left, s), self.expr(e.right, s)
        slow = _call(_load(self.ref(INFIX[e.op])), _load("c"), x, y)
        if e.op in DIVISION:
            return self.division(e.op, x, y, slow)
        if e.op == "/":
            return self.true_division(x, y, slow)
        if e.op not in ARITHMETIC and e.op not in COMPARISON:
            return self.spill(slow)
        t = self.fresh("t")
        if e.op in ORDER:  # two numbers: Python's comparison (builtins.lt and the others compute just that)
            test = self.nums(x, y)
            fast = [_set(t, _compare(_atom(x), COMPARISON[e.op], _atom(y)))]
        elif e.op in COMPARISON:  # == and != of two ints (of floats, `same` holds nan equal to itself)
            test = self.ints(x, y)
            fast = [_set(t, _compare(_atom(x), COMPARISON[e.op], _atom(y)))]
        else:  # two ints take Python's operator; a result out of range goes through the checked builtin
            test = self.ints(x, y)
            in_range = _n(py.Compare, _n(py.Constant, -BIG), [py.Lt(), py.Lt()], [_load(t), _n(py.Constant, BIG)])
            fast = [_set(t, _n(py.BinOp, _atom(x), ARITHMETIC[e.op](), _atom(y))),
                    _n(py.If, _n(py.UnaryOp, py.Not(), in_range),
                       [_set(t, _call(_load(self.ref(INFIX[e.op])), _load("c"), _atom(x), _atom(y)))], [])]
            if e.op in FLOATING:  # a float among two numbers: Python's operator, as builtins._arith does
                floats = self.nums(x, y)
                if test is False and floats is not False:
                    test, fast = floats, [_set(t, _n(py.BinOp, _atom(x), ARITHMETIC[e.op](), _atom(y)))]
                elif test is not True and floats is not False:
                    other = [_set(t, _n(py.BinOp, _atom(x), ARITHMETIC[e.op](), _atom(y)))]
                    self.pre.append(_n(py.If, test, fast, [_n(py.If, floats, other, [
                        _set(t, _call(_load(self.ref(INFIX[e.op])), _load("c"), _atom(x), _atom(y)))])]))
                    return _load(t)
        if test is False:  # a constant operand of another type: the checked builtin only
            self.pre.append(_set(t, slow))
        elif test is True:
            self.pre.extend(fast)
        else:
            self.pre.append(_n(py.If, test, fast, [_set(t, slow)]))
        return _load(t)

    def nums(self, *xs: py.expr):
        """The test that every operand is an int or a float (not a bool): True or False when constants decide it."""
        tests = []
        for x in xs:
            if type(x) is py.Constant:
                if type(x.value) not in (int, float):
                    return False
            else:
                tests.append(_n(py.Compare, _call(_load(self.k_type), _atom(x)), [py.In()], [_load(self.k_nums)]))
        if not tests:
            return True
        return tests[0] if len(tests) == 1 else _n(py.BoolOp, py.And(), tests)

    def true_division(self, x, y, slow) -> py.expr:
        """a / b: Python's operator on two numbers with b not 0 (builtins.truediv's own), else the builtin."""
        t = self.fresh("t")
        test = self.nums(x, y)
        if test is False or type(y) is py.Constant and y.value == 0:
            self.pre.append(_set(t, slow))
            return _load(t)
        nonzero = _n(py.Compare, _atom(y), [py.NotEq()], [_n(py.Constant, 0)])
        test = nonzero if test is True else _n(py.BoolOp, py.And(), [test, nonzero])
        self.pre.append(_n(py.If, test, [_set(t, _n(py.BinOp, _atom(x), py.Div(), _atom(y)))], [_set(t, slow)]))
        return _load(t)

    def division(self, op: str, x, y, slow) -> py.expr:
        """a // b, a % b: Python's operator on two ints with b not 0 (|a // b| <= |a|, |a % b| < |b|: in
        range, as builtins.floordiv and mod compute it), else the checked builtin."""
        t = self.fresh("t")
        both = self.ints(x, y)
        if both is False or type(y) is py.Constant and y.value == 0:
            self.pre.append(_set(t, slow))
            return _load(t)
        nonzero = _n(py.Compare, _atom(y), [py.NotEq()], [_n(py.Constant, 0)])
        test = nonzero if both is True else _n(py.BoolOp, py.And(), [both, nonzero])
        self.pre.append(_n(py.If, test, [_set(t, _n(py.BinOp, _atom(x), DIVISION[op](), _atom(y)))], [_set(t, slow)]))
        return _load(t)

    def _Neg(self, e, s):
        x = self.expr(e.operand, s)
        t = self.fresh("t")
        slow = _call(_load(self.ref(neg)), _load("c"), _atom(x))
        test = self.nums(x)
        if test is False:
            self.pre.append(_set(t, slow))
        else:  # builtins.neg of a number is -a (of an int, always in range: the range is symmetric)
            fast = [_set(t, _n(py.UnaryOp, py.USub(), _atom(x)))]
            self.pre.extend(fast) if test is True else self.pre.append(_n(py.If, test, fast, [_set(t, slow)]))
        return _load(t)

    # Python's truthiness coincides with the language's on every value kind (as in meta.py)

    def _Not(self, e, s):
        return self.spill(_n(py.UnaryOp, py.Not(), self.expr(e.operand, s)))

    def _And(self, e, s):
        return self.logic(e, s, True)

    def _Or(self, e, s):
        return self.logic(e, s, False)

    def logic(self, e, s, conj: bool):
        """`bool(a) and bool(b)` / `bool(a) or bool(b)`, b evaluated only when a does not decide."""
        a = self.expr(e.left, s)
        t = self.fresh("t")
        right = self.branch(ast.Not(ast.Not(e.right)), s, t)
        decided = [_set(t, _n(py.Constant, not conj))]
        self.pre.append(_n(py.If, a, right if conj else decided, decided if conj else right))
        return _load(t)

    def _If(self, e, s):
        cond = self.expr(e.cond, s)
        if type(cond) is py.Constant:  # decided now: only the branch taken is compiled
            return self.expr(e.then if cond.value else e.orelse, s)
        t = self.fresh("t")
        self.pre.append(_n(py.If, cond, self.branch(e.then, s, t), self.branch(e.orelse, s, t)))
        return _load(t)

    def _Let(self, e, s):
        value = self.expr(e.value, s)
        v = self.fresh("v")
        self.pre.append(_set(v, value))
        return self.expr(e.body, _Scope({**s.names, e.name: (v, False)}, s.parent))

    def _Lambda(self, e, s):
        params = [self.fresh("v") for _ in e.params]
        inner = _Scope({p: (v, False) for p, v in zip(e.params, params)}, s)
        saved, self.pre = self.pre, []
        try:
            result = self.expr(e.body, inner)
            body = [*self.pre, _n(py.Return, result)]
        finally:
            self.pre = saved
        name = self.fresh("l")
        self.pre.append(_function(name, params, body))
        return self.spill(_call(_load(self.ref(lambda_function)), _load("c"), _load(name),
                                _n(py.Constant, len(e.params))))


def native_body(mc, name: str, params: list[str], body: ast.Expr, lazy: tuple[int, ...] = (), keep=None):
    """The generated body of a checked meta-language body, on the frame convention of meta.Unit
    (`b(f)`, f = [parent, ctx, arg...]; its `direct` attribute the function on (ctx, arg...)); None
    when Python refuses the module (a body nested too deeply): the closure stays. `keep`, when
    given, receives (module, table) before it is compiled (the tests vet every module)."""
    nc = NativeCompiler(mc)
    try:
        module, gen, adaptor = nc.module(name, params, body, tuple(lazy))
        vet(module, nc.table, nc.attrs)
        if keep is not None:
            keep(module, nc.table)
        made = build(module, nc.table)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    nc.table[gen] = made[gen]
    entry = made[adaptor]
    entry.direct = made[gen]
    return entry

