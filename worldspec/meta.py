"""Compile meta-language expressions to Python closures, once.

A compiled body runs on a frame, a Python list `[parent, ctx, slot...]`:
parameters and `let` bindings get slots at compile time, lambdas chain to
their defining frame through `parent`. Names, arities and forbidden names are
checked here, so a spec that compiles can only call the fixed builtins, its own
defs and function values it was handed.

Defs are declared first and compiled on first use, so they may call themselves
and each other; a call that closes a cycle pays a step and counts against
MAX_META_DEPTH, like a lambda applied to itself. A `lazy` parameter holds a
`Thunk` (the caller's expression, unevaluated) that the body runs the first
time it reads the parameter; a parameter with a default may be left out.

Two compilers: every body is compiled here to closures first (the checks and the def bookkeeping
are this module's), then, by default, through Python `ast` by worldspec/meta_ast.py, whose native
body replaces the closure in the Unit. The closures stay the reference: `WORLDSPEC_META=closure` in
the environment, `compiler_mode("closure")` or `MetaCompiler(..., compiler="closure")` keeps them
(tests/test_meta_ast.py runs both and compares). Constants (params, defaults, case values) run
once, so they stay closures: compiling them would cost more than it saves.
"""
from __future__ import annotations

import contextlib
import operator
import os
import warnings
from typing import Callable

import attrs

from worldspec import ast
from worldspec.builtins import BUILTINS, FORBIDDEN, INFIX, neg as _neg
from worldspec.diagnostics import SpecError, did_you_mean, raise_all
from worldspec.meta_ast import CTX_VARS, native_body
from worldspec.values import (MAX_INT_BITS, MAX_META_DEPTH, Ctx, EvalError, Function, LimitError, Thunk,
                              collection)

__all__ = ["BASE", "CTX_VARS", "MAX_META_DEPTH", "PRIOR", "COMPILERS", "MetaCompiler", "Thunk", "Unit", "compiler_mode"]

COMPILERS = ("ast", "closure")  # the meta-language's two compilers: worldspec/meta_ast.py, this module


def _mode_from_environment() -> str:
    mode = os.environ.get("WORLDSPEC_META", "ast").strip().lower() or "ast"
    if mode not in COMPILERS:
        warnings.warn(f"WORLDSPEC_META={mode!r} is not one of {', '.join(COMPILERS)}: using ast", stacklevel=2)
        return "ast"
    return mode


_mode = [_mode_from_environment()]  # the compiler a MetaCompiler uses when not told (a list: one cell to set)
# callables (unit name, closure body, its slots, native body) -> the body to install (tests/test_meta_ast.py)
NATIVE_OBSERVERS: list = []


@contextlib.contextmanager
def compiler_mode(name: str):
    """Within the block, MetaCompilers made without `compiler=` use `name` ("ast" or "closure")."""
    if name not in COMPILERS:
        raise ValueError(f"unknown meta-language compiler {name!r}: one of {', '.join(COMPILERS)}")
    saved, _mode[0] = _mode[0], name
    try:
        yield
    finally:
        _mode[0] = saved


def current_compiler() -> str:
    """The compiler a MetaCompiler made now without `compiler=` uses."""
    return _mode[0]

_CTX_READERS = {
    "in_function": lambda f: f[1].in_function, "in_loop": lambda f: f[1].in_loop,
    "loop_depth": lambda f: f[1].loop_depth, "call_depth": lambda f: f[1].call_depth,
    "iteration": lambda f: f[1].iteration,
}
PRIOR = "prior"  # in a rule body: the semantics beneath the rule (worldspec.compiler.program.semantics)
# in a rule body: the base line of what the rule changes, beneath every rule (third edition); a world's own
# def named base keeps its meaning (the def is looked up first), so the name is not reserved
BASE = "base"
_BIG = 1 << MAX_INT_BITS
_FAST_INT = {"+": operator.add, "-": operator.sub, "*": operator.mul, "<": operator.lt,
             "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
             "!=": operator.ne, "^": operator.xor, "&": operator.and_, "|": operator.or_}

Closure = Callable[[list], object]


@attrs.define
class Unit:
    """A compiled function body: `unit(ctx, args)` evaluates it."""

    name: str
    arity: int
    variadic: bool
    nslots: int
    # None while a declared def waits to be compiled; setting it also sets `cell` (see there)
    body: Closure | None = attrs.field(on_setattr=lambda u, _, v: u.entered(v))
    uses_ctx: bool  # reads scope flags, so its result depends on where it runs
    defaults: tuple = ()  # the values of the last parameters when a call leaves them out
    lazy: tuple[int, ...] = ()  # positions of the lazy parameters
    pending: Callable | None = None  # compiles a declared def (on its first use)
    reads: frozenset = frozenset()  # the context variables it reads (through the defs it calls too)
    # [f]: f(ctx, arg...) calls the body with every argument (no defaults, not variadic): the native
    # body's own function (meta_ast: generated calls of a def go through its cell), else through __call__
    cell: list = attrs.field(init=False, factory=list, repr=False, eq=False)

    def __attrs_post_init__(self):
        self.cell.append(None)
        self.entered(self.body)

    def entered(self, body):
        """The body about to be set, with `cell` pointing at what calls it directly."""
        direct = getattr(body, "direct", None)
        self.cell[0] = direct if direct is not None else (lambda ctx, *args: self(ctx, list(args)))
        return body

    @property
    def required(self) -> int:
        """The fewest arguments a call may pass."""
        return self.arity - len(self.defaults) - (1 if self.variadic else 0)

    def __call__(self, ctx, args: list):
        if self.defaults and len(args) != self.arity:
            if not self.required <= len(args) <= self.arity:
                raise EvalError(f"{self.name} takes {self.required} to {self.arity} argument(s), got {len(args)}")
            args = [*args, *self.defaults[len(args) - self.arity:]]
        if self.variadic:  # the rest arguments are a new list: measured like any other
            fixed = self.arity - 1
            rest = collection(ctx, list(args[fixed:]))
            frame = [None, ctx, *args[:fixed], rest]
        else:
            frame = [None, ctx, *args]
        if self.nslots:
            frame.extend([None] * self.nslots)
        return self.body(frame)

    def as_function(self, ctx) -> Function:
        fixed = None if self.variadic or self.defaults else self.arity
        return Function(self.name, fixed, lambda args: self(ctx, args))


class _Scope:
    def __init__(self, params, parent: "_Scope | None", lazy: tuple[int, ...] = ()):
        self.slots = {p: 2 + i for i, p in enumerate(params)}
        self.size = 2 + len(params)
        self.parent = parent
        self.lazy = frozenset(2 + i for i in lazy)  # slots that hold a Thunk

    def bind(self, name: str) -> int:
        i = self.size
        self.size += 1
        self.slots = {**self.slots, name: i}
        return i

    def lookup(self, name: str):
        scope, depth = self, 0
        while scope is not None:
            if name in scope.slots:
                return depth, scope.slots[name], scope.slots[name] in scope.lazy
            scope, depth = scope.parent, depth + 1
        return None


def _var_at(depth: int, index: int, lazy: bool = False) -> Closure:
    if lazy:
        read = _var_at(depth, index)

        def forced(f):
            v = read(f)
            return v.force() if type(v) is Thunk else v
        return forced
    if depth == 0:
        return lambda f: f[index]
    if depth == 1:
        return lambda f: f[0][index]

    def deep(f):
        for _ in range(depth):
            f = f[0]
        return f[index]
    return deep


def _check_name(name: str, span: ast.Span) -> None:
    if name.startswith("__") or name in FORBIDDEN:
        raise SpecError(span, f"the name {name!r} is not allowed in a spec",
                        "Specs are pure expressions: there is no access to Python, files or imports.")


# Python's spellings of the literals, which authors reach for: the meta-language's own word for each.
PYTHON_WORDS = {"None": "none", "True": "true", "False": "false", "null": "none"}


class MetaCompiler:
    """Compiles expressions against fixed constants (params) and defs."""

    def __init__(self, constants: dict | None = None, defs: dict[str, Unit] | None = None,
                 extra_vars: tuple[str, ...] = (), compiler: str | None = None):
        if compiler is not None and compiler not in COMPILERS:
            raise ValueError(f"unknown meta-language compiler {compiler!r}: one of {', '.join(COMPILERS)}")
        self.compiler = compiler or _mode[0]  # "ast": bodies are native (meta_ast); "closure": closures only
        self.constants = dict(constants or {})
        self.defs = dict(defs or {})
        self.extra_vars = extra_vars
        self._uses_ctx = False
        self._reads: set[str] = set()
        self._pending: dict[str, ast.Def] = {}  # declared defs not compiled yet
        self._active: list[str] = []  # defs being compiled: naming one of them closes a cycle
        self._calls: set[str] = set()  # the defs the body being compiled names
        self._graph: dict[str, tuple[bool, set[str], set[str]]] = {}  # def -> (uses ctx, reads, defs named)
        self.def_errors: list[SpecError] = []  # the spec errors of the defs compiled so far
        # names the world knows that a body here cannot call (a program world's ops): name -> (why, what to do),
        # so that the error says what the name is instead of suggesting a builtin that looks alike
        self.unreachable: dict[str, tuple[str, str]] = {}
        # True while a kind compiles its other bodies on after a def failed, to report their errors too
        # (it then calls finish(), which raises the defs' errors); else unit() raises them at once
        self.defer_def_errors = False

    def unit(self, name: str, params: list[str], body: ast.Expr, variadic: bool = False,
             defaults: tuple = (), lazy: tuple[int, ...] = (), native: bool = True) -> Unit:
        """Compile a body over parameters (the last len(defaults) optional, those at `lazy` lazy);
        native code (meta_ast) unless this compiler keeps closures or `native` is false."""
        self._compile_pending()
        if not self.defer_def_errors:
            raise_all(self.def_errors)
        for p in params:
            _check_name(p, body.span)
        scope = _Scope(params, None, lazy)
        self._uses_ctx, self._reads = False, set()
        code = self.expr(body, scope)
        code, nslots = self.native(name, params, body, lazy, code, scope.size - 2 - len(params), native)
        return Unit(name, len(params), variadic, nslots, code, self._uses_ctx,
                    tuple(defaults), tuple(lazy), reads=frozenset(self._reads))

    def native(self, name: str, params, body: ast.Expr, lazy, closure: Closure, nslots: int, wanted: bool = True):
        """(body, slots) of a body the closure compiler just checked: meta_ast's native body when this
        compiler makes them (and Python compiles it), else the closure."""
        if not wanted or self.compiler != "ast":
            return closure, nslots
        made = native_body(self, name, list(params), body, tuple(lazy))
        if made is None:
            return closure, nslots
        for observe in NATIVE_OBSERVERS:
            made = observe(name, closure, nslots, made) or made
        return made, 0

    def closes_cycle(self, name: str) -> bool:
        """Whether naming the def `name` in the body being compiled closes a cycle of defs."""
        return name in self._active

    def add_def(self, d: ast.Def) -> None:
        """Declare a def; its body is compiled on first use or by finish()."""
        _check_name(d.name, d.span)
        # A def named like a builtin shadows it (the def is looked up first everywhere): a builtin added
        # by a later release never breaks a world that already had a def of that name. `check` warns
        # (worldspec/lint.py), since a reader of the spec may expect the builtin.
        if d.name == PRIOR or d.name in CTX_VARS:
            raise SpecError(d.span, f"the name {d.name!r} is reserved", "Choose another name for the def.")
        self._pending[d.name] = d
        self.defs[d.name] = Unit(d.name, len(d.params), False, 0, None, False, (None,) * len(d.defaults),
                                 pending=lambda: self._compile_def(d.name))

    def finish(self) -> None:
        """Compile every declared def now (so that errors point at the spec)."""
        self._compile_pending()
        raise_all(self.def_errors)

    def _compile_pending(self) -> None:
        """Compile every declared def, keeping each one's error: one run reports every def's error, and
        (with `defer_def_errors`) the rule bodies compiled after them too."""
        while self._pending:
            try:
                self._compile_def(next(iter(self._pending)))
            except SpecError as e:
                self.def_errors.append(e)

    def _compile_def(self, name: str) -> None:
        d = self._pending.pop(name, None)
        if d is None:
            return
        u = self.defs[name]
        try:
            defaults = tuple(MetaCompiler(self.constants).constant(e) for e in d.defaults)
        except EvalError as e:
            raise SpecError(d.span, f"a default of def {name} cannot be evaluated: {e.message}",
                            "Defaults are constants: literals, params and builtins.") from None
        for p in d.params:
            _check_name(p, d.body.span)
        saved = self._uses_ctx, self._reads, self._calls
        self._uses_ctx, self._reads, self._calls = False, set(), set()
        self._active.append(name)
        try:
            scope = _Scope(d.params, None)
            body = self.expr(d.body, scope)
            self._graph[name] = (self._uses_ctx, self._reads, self._calls)
            body, nslots = self.native(name, d.params, d.body, (), body, scope.size - 2 - len(d.params))
        finally:
            self._active.pop()
            self._uses_ctx, self._reads, self._calls = saved
        u.body, u.nslots, u.defaults, u.pending = body, nslots, defaults, None
        self._settle()

    def _settle(self) -> None:
        """uses_ctx of every compiled def: its own reads, or those of any def it reaches."""
        changed = True
        while changed:
            changed = False
            for name, (own, reads, calls) in self._graph.items():
                u = self.defs[name]
                uses = own or any(self.defs[c].uses_ctx for c in calls)
                every = frozenset(reads).union(*(self.defs[c].reads for c in calls))
                if uses != u.uses_ctx or every != u.reads:
                    u.uses_ctx, u.reads, changed = uses, every, True

    def _def(self, name: str) -> tuple[Unit, bool]:
        """A def named in a body, compiled if need be; and whether naming it closes a cycle."""
        u = self.defs[name]
        if u.body is None and u.pending is not None and name not in self._active:
            u.pending()
        self._calls.add(name)
        recursive = name in self._active
        if not recursive:
            self._uses_ctx |= u.uses_ctx
            self._reads |= u.reads
        return u, recursive

    def constant(self, e: ast.Expr, ctx=None):
        """Evaluate a closed expression now (params, case values)."""
        u = self.unit("<const>", [], e, native=False)  # run once: closures cost less than a compile
        return u(ctx or Ctx(), [])

    # ------------------------------------------------------------ expressions

    def expr(self, e: ast.Expr, s: _Scope) -> Closure:
        method = getattr(self, "_" + type(e).__name__)
        return method(e, s)

    def _Const(self, e: ast.Const, s):
        v = e.value
        return lambda f: v

    def _ListExpr(self, e: ast.ListExpr, s):
        items = [self.expr(x, s) for x in e.items]
        return lambda f: collection(f[1], [c(f) for c in items])

    def _MapExpr(self, e: ast.MapExpr, s):
        pairs = [(self.expr(k, s), self.expr(v, s)) for k, v in e.pairs]

        def build(f):
            out = {}
            for k, v in pairs:
                key = k(f)
                if type(key) not in (int, str):  # true would merge with 1
                    raise EvalError("map keys must be integers or strings")
                out[key] = v(f)
            return collection(f[1], out)
        return build

    def _Var(self, e: ast.Var, s):
        name = e.name
        _check_name(name, e.span)
        found = s.lookup(name)
        if found is not None:
            return _var_at(*found)
        if name in CTX_VARS or name in self.extra_vars:
            self._uses_ctx = True
            self._reads.add(name)
            return _CTX_READERS.get(name) or (lambda f: getattr(f[1], name))
        if name in self.constants:
            v = self.constants[name]
            return lambda f: v
        if name in self.defs:
            u, recursive = self._def(name)
            if recursive:
                call = _cycle_call(u)
                return lambda f: Function(name, None, lambda args: call(f[1], args))
            return lambda f: u.as_function(f[1])
        if name in BUILTINS:
            fn, lo, hi = BUILTINS[name]
            arity = lo if lo == hi else None
            return lambda f: Function(name, arity, lambda args: fn(f[1], *args))
        if name == PRIOR:
            raise SpecError(e.span, "prior(...) is only known in a rule body",
                            "A rule calls prior(...) for the semantics beneath it; a base line has none.")
        if name == BASE:
            raise SpecError(e.span, "base(...) is only known in a rule body",
                            "A rule calls base(...) for the base line it changes; a base line or a def has none.")
        if name in PYTHON_WORDS:
            word = PYTHON_WORDS[name]
            raise SpecError(e.span, f"unknown name {name!r}: the meta-language writes {word}",
                            f"Write {word}, in lower case: the literals are true, false and none.")
        by_case = {k.lower(): k for k in self.unreachable}
        if name in self.unreachable or name.lower() in by_case:
            known_as = name if name in self.unreachable else by_case[name.lower()]
            why, fix = self.unreachable[known_as]
            raise SpecError(e.span, f"unknown name {name!r}: {known_as} is {why}", fix)
        known = list(s.slots) + list(self.constants) + list(self.defs) + list(BUILTINS) + list(CTX_VARS)
        raise SpecError(e.span, f"unknown name {name!r}", did_you_mean(name, known).strip()
                        or "Declare it as a param, a def, a parameter or a let binding.")

    def _Call(self, e: ast.Call, s):
        args = [self.expr(a, s) for a in e.args]
        n = len(args)
        if isinstance(e.fn, ast.Var) and s.lookup(e.fn.name) is None:
            name = e.fn.name
            _check_name(name, e.fn.span)
            if name in self.defs:
                u, recursive = self._def(name)
                if not u.required <= n <= u.arity:
                    want = str(u.arity) if u.required == u.arity else f"{u.required} to {u.arity}"
                    raise SpecError(e.span, f"{name} takes {want} argument(s), got {n}",
                                    "Check the def's parameter list.")
                if recursive:
                    call = _cycle_call(u)
                    return lambda f: call(f[1], [a(f) for a in args])
                return lambda f: u(f[1], [a(f) for a in args])
            if name in BUILTINS:
                fn, lo, hi = BUILTINS[name]
                if n < lo or (hi is not None and n > hi):
                    want = str(lo) if lo == hi else (f"{lo} or more" if hi is None else f"{lo} to {hi}")
                    raise SpecError(e.span, f"{name} takes {want} argument(s), got {n}",
                                    "See the builtin table in docs/language.md.")
                if n == 1:
                    a0, = args
                    return lambda f: fn(f[1], a0(f))
                if n == 2:
                    a0, a1 = args
                    return lambda f: fn(f[1], a0(f), a1(f))
                if n == 3:
                    a0, a1, a2 = args
                    return lambda f: fn(f[1], a0(f), a1(f), a2(f))
                return lambda f: fn(f[1], *[a(f) for a in args])
        callee = self.expr(e.fn, s)

        def dynamic(f):
            g = callee(f)
            if not isinstance(g, Function):
                raise EvalError("only functions can be called")
            f[1].charge(1)
            return g(*[a(f) for a in args])
        return dynamic

    def _BinOp(self, e: ast.BinOp, s):
        op = INFIX[e.op]
        a, b = self.expr(e.left, s), self.expr(e.right, s)
        fast = _FAST_INT.get(e.op)
        if fast is None:
            return lambda f: op(f[1], a(f), b(f))

        # Two ints take Python's own operator inline; anything else (and any
        # result out of range) goes through the checked builtin.
        lo, hi, is_int = -_BIG, _BIG, int
        if e.op in ("<", "<=", ">", ">=", "==", "!="):
            def compare(f):
                x, y = a(f), b(f)
                if type(x) is is_int and type(y) is is_int:
                    return fast(x, y)
                return op(f[1], x, y)
            return compare

        def binop(f):
            x, y = a(f), b(f)
            if type(x) is is_int and type(y) is is_int:
                r = fast(x, y)
                if lo < r < hi:
                    return r
            return op(f[1], x, y)
        return binop

    def _Neg(self, e: ast.Neg, s):
        a = self.expr(e.operand, s)
        return lambda f: _neg(f[1], a(f))

    # Python's truthiness coincides with the language's on every value kind
    # (0, "", [], {}, none and false are false), so conditions test directly.

    def _Not(self, e: ast.Not, s):
        a = self.expr(e.operand, s)
        return lambda f: not a(f)

    def _And(self, e: ast.And, s):
        a, b = self.expr(e.left, s), self.expr(e.right, s)
        return lambda f: bool(a(f)) and bool(b(f))

    def _Or(self, e: ast.Or, s):
        a, b = self.expr(e.left, s), self.expr(e.right, s)
        return lambda f: bool(a(f)) or bool(b(f))

    def _If(self, e: ast.If, s):
        c, t, o = self.expr(e.cond, s), self.expr(e.then, s), self.expr(e.orelse, s)
        return lambda f: t(f) if c(f) else o(f)

    def _Let(self, e: ast.Let, s):
        _check_name(e.name, e.span)
        value = self.expr(e.value, s)
        saved = s.slots
        slot = s.bind(e.name)
        body = self.expr(e.body, s)
        s.slots = saved  # the binding is visible in the body only

        def let(f):
            f[slot] = value(f)
            return body(f)
        return let

    def _Lambda(self, e: ast.Lambda, s):
        for p in e.params:
            _check_name(p, e.span)
        inner = _Scope(e.params, s)
        body = self.expr(e.body, inner)
        n = len(e.params)

        def make(f):
            def call(args):
                if len(args) != n:
                    raise EvalError(f"a lambda of {n} parameter(s) was called with {len(args)}")
                frame = [f, f[1], *args]
                extra = inner.size - len(frame)
                if extra > 0:
                    frame.extend([None] * extra)
                # a lambda applied to itself recurses: bound its depth
                ctx = f[1]
                ctx.meta_depth += 1
                try:
                    if ctx.meta_depth > MAX_META_DEPTH:
                        raise LimitError(f"rule recursion limit reached (more than {MAX_META_DEPTH} "
                                         f"nested calls)")
                    return body(frame)
                finally:
                    ctx.meta_depth -= 1
            return Function("lambda", n, call)
        return make


def _cycle_call(u: Unit):
    """A call that closes a cycle of defs: one step, and one level of MAX_META_DEPTH."""
    def call(ctx, args):
        ctx.meta_depth += 1
        try:
            if ctx.meta_depth > MAX_META_DEPTH:
                raise LimitError(f"rule recursion limit reached (more than {MAX_META_DEPTH} nested calls)")
            ctx.charge(1)
            return u(ctx, args)
        finally:
            ctx.meta_depth -= 1
    return call
