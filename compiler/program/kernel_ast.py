"""The program kernel at native speed: a parsed program compiled to a tree of Python `ast`
nodes, and that tree compiled to Python functions. Never to source text, never eval/exec.

The generated code means exactly what the closure kernel (kernel.py) means: same
feedback, errors with the same line numbers, same steps charged, same limits. It keeps
the closure kernel's state (`Run`: variables in `run.scope` / `run.globals` dicts,
functions in `run.functions` as `UserFunction`s) wherever other code can see it: program
variables are Python locals, loaded from the scope dict on entry and saved to it on exit
and around each call of code that reads it; so a statement form this compiler does not
generate natively (multiple assignment, index assignment, the rules on loop passes,
branch order, write-backs, ...) runs as the closure kernel's own code, called from the
generated code. Operator and hook bodies are inlined; calls of the program's own
functions are direct Python calls.

Why it is safe (each point is tested in tests/test_kernel_ast.py):
- Program identifiers become Python identifiers only mangled: a variable `x` is the
  local `v_x` (program names match [A-Za-z_][A-Za-z0-9_]*, and no builtin, dunder or
  name of the compiler starts with `v_`); elsewhere a name is a string constant. The
  other Python names are the compiler's own locals (`run`, `d`, `n`, `M`, `S`, `G`, `F`,
  `ln`, `c`, `e`, `t<n>`, `w<n>`) and the names of a fixed table (`k<n>`, and `f<n>` for
  the generated functions).
- The table is the generated code's globals: the world's operators and hooks, the
  kernel's helpers and constants. Its `__builtins__` is empty, so not even a builtin
  can be reached by name.
- The compiler emits only the node types in ALLOWED_NODES: no Attribute, Import,
  Global, Nonlocal, Lambda, comprehension, starred or f-string node; every Call's
  function is a table name (`vet` checks each module before it is compiled).
- Limits are exact: a step per statement and per while pass (as the closure kernel
  charges them), counted in a local `n` against the limit `M` and handed to the run
  around every call of code that pays steps itself and when an error leaves; program
  call depth is carried by direct calls (`d`) and checked at each, or counted by the
  kernel's `invoke`; the output, integer and collection limits are the closure kernel's
  helpers.
- `build` is the one place `compile()` is called, on an `ast.Module` built here.
"""
from __future__ import annotations

import ast as py
import functools
import types

from lark import Token, Tree

from worldspec.compiler.program.kernel import (BREAK, CONTINUE, RETURN, ProgramCompiler, Run, UserFunction,
                                               walked, bound_names, defined_functions, emit, emit_one,
                                               function_named, invoke, loop_parts, nested_functions,
                                               program_runner, var_missing)
from worldspec.compiler.program.kernel_ops import (OP_NODES, SAFE_BUILTINS, BodyCompiler, Untranslatable, atom,
                                                   static_context)
from worldspec.pynodes import load as _name, node as _n, store as _store
from worldspec.meta import Thunk
from worldspec.pynodes import ObjectTable
from worldspec.values import Ctx, EvalError, LimitError, collection

ALLOWED_NODES = frozenset({
    py.Module, py.FunctionDef, py.arguments, py.arg, py.Return, py.Assign, py.Expr, py.If, py.For, py.While,
    py.Break, py.Continue, py.Pass, py.Try, py.ExceptHandler, py.Raise, py.Name, py.Load, py.Store,
    py.Constant, py.List, py.Subscript, py.Call, py.Compare, py.In, py.Eq, py.UnaryOp, py.Not,
    py.BoolOp, py.And, py.Dict, py.IsNot, py.Tuple, py.AugAssign, *OP_NODES,
})
LOCALS = frozenset({"run", "d", "n", "M", "S", "G", "F", "ln", "c", "e"})
  # the generated code's own variables (and t<n>, w<n>)


# ---------------------------------------------------------------- helpers the generated code calls


def over(run: Run, n: int):
    """The step limit, passed at step n by generated code counting steps in a local."""
    run.steps = n
    raise LimitError(f"step limit reached ({run.max_steps} steps)")


def put(run: Run, n: int) -> None:
    """The steps generated code counted, handed to the run (before code that pays its own)."""
    run.steps = n


def got(run: Run) -> int:
    """The steps the run holds (after code that pays its own)."""
    return run.steps


def settled(run: Run, n: int) -> None:
    """The steps counted, kept by the run as an error leaves generated code: the local count, or
    the run's when code called since paid more (steps only grow)."""
    if n > run.steps:
        run.steps = n


def enter_loop(run: Run):
    """Mark the run as inside one more loop; what to restore when it ends."""
    was = (run.in_loop, run.loop_depth)
    run.in_loop, run.loop_depth = True, was[1] + 1
    return was


def leave_loop(run: Run, was) -> None:
    """Restore the loop flags a loop found."""
    run.in_loop, run.loop_depth = was


def at_line(e: EvalError, line: int) -> None:
    """Locate an error at the statement that raised it, unless an inner statement did."""
    if e.line is None:
        e.line = line


def entered(run: Run, scope: dict, depth: int):
    """A function's frame, for a body whose code reads the run's state: what to restore when it ends."""
    was = (run.scope, run.in_function, run.in_loop, run.loop_depth, run.call_depth)
    run.scope, run.in_function, run.in_loop, run.loop_depth, run.call_depth = scope, True, False, 0, depth
    return was


def left(run: Run, was) -> None:
    """Restore the frame a function body found."""
    run.scope, run.in_function, run.in_loop, run.loop_depth, run.call_depth = was


def too_deep(run: Run):
    """The call depth limit, reached by a direct call."""
    raise LimitError(f"recursion limit reached (more than {run.max_depth} nested calls)")


def taken(run: Run):
    """The value a return statement of the closure kernel kept."""
    v, run.retval = run.retval, None
    return v


def call_in(run: Run, scope: dict, depth: int, loops: int, fn, args: list, call=invoke):
    """A call from a function body whose code keeps its frame in locals: made with the run's
    state as the closure kernel has it there."""
    was = entered(run, scope, depth)
    run.in_loop, run.loop_depth = loops > 0, loops
    try:
        return call_function(run, fn, args, call)
    finally:
        left(run, was)


def emit_plain(run: Run, vals: list) -> None:
    """An output statement of several values, with the show and output rules at their standard definitions."""
    emit(run, vals, None, None)


FELL_OFF = object()  # what a function body gives when it ends without a return (where a rule reads that)
UNSET = object()  # a program variable not set yet


def native_entry(gen, params):
    """A generated function `gen(run, depth, steps, max_steps, G, F, *args)`, giving (result, steps), as
    the closure kernel's invoke calls a body."""
    def entry(run, scope, G, F):
        v, run.steps = gen(run, run.call_depth, run.steps, run.max_steps, G, F, *[scope[p] for p in params])
        if v is FELL_OFF:
            return None
        run.retval = v
        return RETURN
    return entry


def fail(error: EvalError):
    """Raise an error found at compile time (a rule failing on a literal), when the program gets there."""
    raise error


def slice_to(run: Run, hook, seq, top, lo):
    """A slice `seq[lo:top]` through the slice hook (top None: to the end)."""
    if top is _END:
        top = len(seq) if type(seq) in (list, str) else 0
    return hook(run, [seq, lo, top])


_END = object()


def call_function(run: Run, fn, args: list, call=invoke):
    """A call of a program function (or of a function value held in a variable)."""
    if type(fn) is not UserFunction:
        return fn(*args)
    return call(run, fn, args)


# helpers that never pay steps: generated code need not hand its count to the run around their calls
UNPAID = frozenset(map(id, (over, put, got, settled, at_line, emit_one, emit_plain, collection, enter_loop, leave_loop,
                            walked, too_deep, function_named, fail, entered, left, taken, type, len)))
# helpers that never read the run's frame (scope, flags, call depth)
SAFE = frozenset(map(id, (over, put, got, settled, at_line, emit_one, emit_plain, collection, enter_loop, leave_loop,
                          walked, type, len, too_deep, function_named, fail, *SAFE_BUILTINS)))


# ---------------------------------------------------------------- building


def vet(tree: py.AST, table: dict) -> None:
    """Refuse a tree that holds a node, a name or a call the kernel never emits."""
    for node in py.walk(tree):
        if type(node) not in ALLOWED_NODES:
            raise AssertionError(f"kernel emitted {type(node).__name__}")
        if type(node) is py.Name and not (node.id in table or node.id in LOCALS or node.id[0] in "tw"
                                          and node.id[1:].isdigit() or node.id.startswith("v_")):
            raise AssertionError(f"kernel emitted the name {node.id}")
        if type(node) is py.Call and not (type(node.func) is py.Name and node.func.id in table):
            raise AssertionError("kernel emitted a call of something outside its table")
        if type(node) is py.FunctionDef and node.decorator_list:
            raise AssertionError("kernel emitted a decorator")


def build(module: py.Module, table: dict) -> dict:
    """The functions a generated module defines, with `table` as their globals.

    The one place worldspec calls compile(). It is safe because its input is not text: it is
    an ast.Module this module's compiler assembled node by node, of the node types in
    ALLOWED_NODES only, whose names are the table's or the compiler's own locals and whose
    calls are of table names (`vet` checks that; the tests run it on every module the
    compiler builds for the bundled worlds and fuzzed probes). Program text only ever
    reaches it as string constants. The module's code is never run: each function's code
    object becomes a function whose globals are the table, with no builtins.
    """
    table["__builtins__"] = {}
    code = compile(module, "<program>", "exec", dont_inherit=True)
    return {c.co_name: types.FunctionType(c, table, c.co_name) for c in code.co_consts
            if isinstance(c, types.CodeType)}


def _const(v) -> py.Constant:
    return _n(py.Constant, v)


def _call(fn: py.expr, *args: py.expr) -> py.Call:
    return _n(py.Call, fn, list(args), [])


def _assign(target: py.expr, value: py.expr) -> py.Assign:
    return _n(py.Assign, [target], value)


def _item(d: str, key) -> py.Subscript:
    return _n(py.Subscript, _name(d), _const(key), py.Load())


def _set_item(d: str, key) -> py.Subscript:
    return _n(py.Subscript, _name(d), _const(key), py.Store())


_PLAIN = (int, float, str, bool, type(None))
_STATEMENTS = frozenset({"assign", "output", "expr_stmt", "pass_", "if_", "for_", "while_", "break_",
                         "continue_", "return_", "fndef"})


NATIVE_AFTER_STEPS = 1_000  # a native compile costs about as much as this many closure steps


class Tiered:
    """A program's code: the closure kernel's while the program is cold, native once it has run
    NATIVE_AFTER_STEPS steps in all (most probes run a few steps once: compiling them natively
    would cost more than it saves)."""

    __slots__ = ("code", "promote", "spent")

    def __init__(self, closure, promote):
        self.code, self.promote, self.spent = closure, promote, 0

    def __call__(self, run):
        promote = self.promote  # read once: another thread may promote the same cached program
        if promote is None:
            return self.code(run)
        if self.spent > NATIVE_AFTER_STEPS:
            self.promote = None  # meanwhile another thread runs the closures, which are still right
            self.code = promote() or self.code
            return self.code(run)
        before = run.steps
        try:
            return self.code(run)
        finally:
            self.spent += run.steps - before


def tiered_program(sem, source: str, known_functions, words, tree: Tree):
    """The code that runs a whole program (on a deep stack if the caller's runs out): the closure
    kernel's until the program has run NATIVE_AFTER_STEPS steps, then native code. The closure
    compiler checks the program (its errors are the program's); the AST compiler is built only
    when the program turns hot, since most probes never do."""
    closure = ProgramCompiler(sem, source, known_functions, words)
    block = closure.block_of(tree)
    return program_runner(Tiered(block, lambda: AstCompiler(sem, source, known_functions, words).native(tree)),
                          closure.max_depth)


class AstCompiler(ProgramCompiler, ObjectTable):
    """Tree -> Python ast -> functions, with the semantics table bound at compile time.

    The same constructor and `program(tree)` as ProgramCompiler; the checks (and the statement
    forms it does not generate) are the closure compiler's own.
    """

    def __init__(self, sem, source: str, known_functions=(), words=None):
        super().__init__(sem, source, known_functions, words)
        self.table: dict = {}
        self.ids: dict[int, str] = {}
        self.defs: list[py.FunctionDef] = []
        self.later: list = []  # (UserFunction, generated function name): bodies set once built
        self.bound: frozenset = frozenset()  # names the running scope surely holds here
        self.untranslatable: set = set()  # (op, static context) whose body stays a closure
        self.pre: list[py.stmt] = []  # the statements that compute the expression being compiled
        self.temps = 0
        hooks = sem.hooks
        lookup, ops, call = hooks.get("lookup"), sem.ops, self.invoke
        self.k_line, self.k_error = self.ref(at_line), self.ref(EvalError)
        self.k_miss = self.ref(lambda run, name: var_missing(run, name, lookup, ops, call))
        self.k_named = self.ref(function_named)
        self.k_callf = self.ref(invoke if call is invoke else lambda run, fn, args: call_function(run, fn, args, call))
        self.k_call_in = self.ref(call_in if call is invoke else
                                  lambda run, scope, depth, loops, fn, args: call_in(run, scope, depth, loops, fn,
                                                                                      args, call))
        self.safe = {self.k_call_in}  # table names code may call without reading the run's frame (and SAFE)
        if lookup is None:  # a missing variable is looked up without a rule's body
            self.safe.add(self.k_miss)
        self.direct: dict[str, tuple[UserFunction, str]] = {}  # function -> its object and generated name
        self.names: set = set()  # the variables of the function being compiled
        self.defined: frozenset = frozenset()  # the program's own functions surely defined here
        self.scopes: list = []  # (generated name, params or None for the program, body, variables)
        self.touching: set = set()  # table names of code that reads or writes the scope dict
        self.call_cache: dict[int, frozenset] = {}  # id of a statement -> the table names it calls
        self.flushes = 0  # the variables saved around a call so far

    # ------------------------------------------------------------ the table

    def obj(self, obj) -> py.Name:
        """A reference to an object of the table."""
        return _name(self.ref(obj))

    def value(self, v) -> py.expr:
        """A value: a constant when Python's literal can hold it, else a table entry."""
        return _const(v) if type(v) in _PLAIN else self.obj(v)

    def temp(self, prefix: str = "t") -> str:
        """A fresh local name."""
        self.temps += 1
        return f"{prefix}{self.temps}"

    # ------------------------------------------------------------ programs

    def program(self, tree: Tree):
        """The code that runs a whole program: tiered_program's."""
        return tiered_program(self.sem, self.source, self.known, self.words, tree)

    def native(self, tree: Tree):
        """The generated code for a whole program, `code(run)`; None when Python refuses the module
        (more than its 20 nested blocks: the program stays on the closure kernel)."""
        if nested_functions(tree):  # closures read their defining scopes: the closure kernel keeps them
            return None
        self.crafted = self.known | defined_functions(tree) | bound_names(tree)
        defs = [n for n in tree.iter_subtrees_topdown() if n.data == "fndef"]
        names = [self.target(n) for n in defs]
        for node, name in zip(defs, names):
            if names.count(name) == 1 and name not in self.known:  # F[name], once set, is this function
                name, params = self.function_signature(node)
                self.temps += 1
                self.direct[name] = (UserFunction(name, params, None), f"f{self.temps}")
                self.table[f"f{self.temps}"] = None  # set to the function once built
        self.function("main", tree.children)
        self.finish()
        self.module = py.Module(self.defs, [])  # kept for the tests that vet it
        try:
            made = build(self.module, self.table)
        except (SyntaxError, RecursionError):
            return None
        for fn, gen in self.later:
            fn.native = native_entry(made[gen], fn.params)
            if gen in self.table:
                self.table[gen] = made[gen]
        main = made["main"]

        def run_native(run):
            return main(run, run.call_depth, run.steps, run.max_steps, run.scope, run.globals, run.functions)
        return run_native

    def function(self, gen: str, stmts, params=None) -> None:
        """A generated function running statements, errors located at their line: the program's
        `main(run, d, n, M, S, G, F)`, or a program function's `gen(run, d, n, M, G, F, v_a, ...)`
        giving (its result, n). d is the call depth, n the steps counted so far, M the step limit.
        Program variables are locals `v_<name>` (their names are vetted program identifiers: no
        builtin or dunder starts with v_). It is finished (see `finish`) once every function is built."""
        saved, self.names = self.names, set(params or ())
        try:
            body = self.gblock(stmts)
            self.scopes.append((gen, params, body, self.names))
        finally:
            self.names = saved

    def finish(self) -> None:
        """Each generated function, from its body: its variables loaded and saved around the code
        that reads the scope dict (the closure kernel's code, calls of functions that read the
        program's variables), its steps handed to the run around code that pays its own."""
        calls = {gen: set().union(*map(self.called, body)) for gen, _, body, _ in self.scopes}
        reads = self.touching | {self.k_miss, self.k_named}
        sealed = {gen for gen, params, _, _ in self.scopes if params is not None and not calls[gen] & reads}
        while True:  # a function calling one that reads the program's variables reads them too
            drop = {gen for gen in sealed if any(c in self.table and self.table[c] is None and c not in sealed
                                                 for c in calls[gen])}
            if not drop:
                break
            sealed -= drop
        for gen, params, body, names in self.scopes:
            touching = self.touching | {self.k_named}  # a function value is looked up in the scope
            if params is None:  # the program's variables live in G between its statements
                touching |= {self.k_callf} | {c for c in calls[gen] if c in self.table and self.table[c] is None
                                               and c not in sealed}
            names = sorted(names)
            flushes = self.flushes
            body = self.paid(self.framed(body, names, touching))
            flushed = self.flushes > flushes
            handler = _n(py.ExceptHandler, _name(self.k_error), "e", [
                _n(py.Expr, _call(_name(self.k_line), _name("e"), _name("ln"))),
                _n(py.Expr, _call(self.obj(settled), _name("run"), _name("n"))), _n(py.Raise)])
            code: list[py.stmt] = [_assign(_store("ln"), _const(0)), _n(py.Try, body, [handler], [], [])]
            unset = self.obj(UNSET)
            if params is None:
                args = ["run", "d", "n", "M", "S", "G", "F"]
                code = [*self.loaded(names), _n(py.Try, code, [], [], self.saved(names)),
                        _n(py.Expr, _call(self.obj(put), _name("run"), _name("n")))]
            else:
                args = ["run", "d", "n", "M", "G", "F", *(f"v_{p}" for p in params)]
                # a rule reads whether the body returned
                code.append(self.give(_const(None) if self.invoke is invoke else self.obj(FELL_OFF)))
                lean = self.lean(calls[gen])
                if not lean:
                    code = [_assign(_store("w0"), _call(self.obj(entered), _name("run"), _name("S"), _name("d"))),
                            _n(py.Try, code, [], [], [_n(py.Expr, _call(self.obj(left), _name("run"),
                                                                        _name("w0")))])]
                first = [_assign(_store(f"v_{x}"), _name(unset.id)) for x in names if x not in params]
                if not lean or flushed or calls[gen] & {self.k_named, self.k_call_in}:  # the code reads S
                    first.append(_assign(_store("S"), _n(py.Dict, [_const(p) for p in params],
                                                         [_name(f"v_{p}") for p in params])))
                code = first + code
            arguments = py.arguments([], [_n(py.arg, a) for a in args], None, [], [], None, [])
            self.defs.append(_n(py.FunctionDef, gen, arguments, code, [], None))

    def loaded(self, names) -> list[py.stmt]:
        """The variables read from the scope dict (unset when it does not hold them)."""
        return [_n(py.If, _n(py.Compare, _const(x), [py.In()], [_name("S")]),
                   [_assign(_store(f"v_{x}"), _item("S", x))], [_assign(_store(f"v_{x}"), self.obj(UNSET))])
                for x in names]

    def saved(self, names) -> list[py.stmt]:
        """The variables set so far, written to the scope dict."""
        return [_n(py.If, _n(py.Compare, _name(f"v_{x}"), [py.IsNot()], [self.obj(UNSET)]),
                   [_assign(_set_item("S", x), _name(f"v_{x}"))], []) for x in names] or [_n(py.Pass)]

    def framed(self, stmts: list[py.stmt], names, touching: set) -> list[py.stmt]:
        """Statements with the variables saved to the scope dict before, and read back after, each
        call of code that reads or writes it."""
        out: list[py.stmt] = []
        for s in stmts:
            if type(s) in (py.Assign, py.Expr) and self.called(s) & touching:
                self.flushes += 1
                out += [*self.saved(names), s, *self.loaded(names)]
                continue
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list) and getattr(s, field):
                    setattr(s, field, self.framed(getattr(s, field), names, touching))
            out.append(s)
        return out

    def give(self, value: py.expr) -> py.Return:
        """A program function's return: its result and the steps counted."""
        return _n(py.Return, _n(py.Tuple, [value, _name("n")], py.Load()))

    def paid(self, stmts: list[py.stmt]) -> list[py.stmt]:
        """Statements with the local step count handed to the run around each call of code that
        pays steps itself (a builtin's slow path, a rule's closure, the closure kernel)."""
        out: list[py.stmt] = []
        for s in stmts:
            if type(s) in (py.Assign, py.Expr) and any(self.pays(c) for c in self.called(s)):
                out += [_n(py.Expr, _call(self.obj(put), _name("run"), _name("n"))), s,
                        _assign(_store("n"), _call(self.obj(got), _name("run")))]
                continue
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(s, field, None), list) and getattr(s, field):
                    setattr(s, field, self.paid(getattr(s, field)))
            out.append(s)
        return out

    def pays(self, name: str) -> bool:
        """Whether a table name's code may pay steps (a generated function is handed the count)."""
        v = self.table[name]
        return v is not None and id(v) not in UNPAID and not (name == self.k_miss and self.sem.hooks.get("lookup")
                                                               is None)

    def lean(self, calls: set) -> bool:
        """Whether code calling these table names calls only what never reads the run's frame
        (scope, flags, call depth)."""
        table = self.table
        return all(c in self.safe or id(table[c]) in SAFE or table[c] is None for c in calls)

    def called(self, node: py.AST) -> frozenset:
        """The table names a generated statement calls (kept: finishing asks for them more than once)."""
        hit = self.call_cache.get(id(node))
        if hit is None:
            hit = self.call_cache[id(node)] = frozenset(n.func.id for n in py.walk(node) if type(n) is py.Call)
        return hit

    def gblock(self, stmts) -> list[py.stmt]:
        """The statements of a block, each paying its step at its line."""
        out: list[py.stmt] = []
        saved = self.bound, self.defined
        try:
            for node in (s for s in stmts if isinstance(s, Tree)):
                line = node.meta.line if not getattr(node.meta, "empty", True) else 0
                out.append(_assign(_store("ln"), _const(line)))
                out += self.step()
                out.extend(self.statement(node))
                if node.data == "assign":  # the rest of the block reads the variable surely set
                    self.bound = self.bound | {self.target(node)}
                elif node.data == "fndef" and self.target(node) in self.direct:  # ... calls it surely defined
                    self.defined = self.defined | {self.target(node)}
        finally:
            self.bound, self.defined = saved
        return out or [_n(py.Pass)]

    def step(self) -> list[py.stmt]:
        """One step (a statement, or a pass of a while loop), counted in the local n."""
        return [_n(py.AugAssign, _store("n"), py.Add(), _const(1)),
                _n(py.If, _n(py.Compare, _name("n"), [py.Gt()], [_name("M")]),
                   [_n(py.Expr, _call(self.obj(over), _name("run"), _name("n")))], [])]

    def statement(self, node) -> list[py.stmt]:
        """One statement: generated natively, or the closure kernel's code for it, called."""
        native = getattr(self, "g_" + node.data, None) if node.data in _STATEMENTS else None
        code = native(node) if native is not None else None
        if code is not None:
            return code
        closure = getattr(self, "_" + node.data)(node)
        self.touching.add(self.ref(closure))
        self.names |= {str(t) for t in node.scan_values(lambda v: isinstance(v, Token) and v.type == "NAME")}
        return self.control(_call(self.obj(closure), _name("run")))

    def control(self, call: py.expr) -> list[py.stmt]:
        """Run code that answers a control code (break, continue, return) and obey it."""
        if not self.loops and not self.in_function:
            return [_n(py.Expr, call)]
        then: list[py.stmt] = []
        if self.loops:
            then.append(_n(py.If, _n(py.Compare, _name("c"), [py.Eq()], [_const(BREAK)]), [_n(py.Break)], []))
            then.append(_n(py.If, _n(py.Compare, _name("c"), [py.Eq()], [_const(CONTINUE)]), [_n(py.Continue)], []))
        if self.in_function:
            then.append(_n(py.If, _n(py.Compare, _name("c"), [py.Eq()], [_const(RETURN)]),
                           [self.give(_call(self.obj(taken), _name("run")))], []))
        return [_assign(_store("c"), call), _n(py.If, _name("c"), then, [])]

    # ------------------------------------------------------------ statements
    # Expressions compile to statements (in self.pre) that leave their value in a name or a
    # constant, in the closure kernel's order of evaluation; operator bodies are inlined.

    def staged(self, make) -> tuple[list[py.stmt], py.expr]:
        """The statements make() emits, and the name or constant it returns."""
        saved, self.pre = self.pre, []
        try:
            value = make()
            return self.pre, value
        finally:
            self.pre = saved

    def spill(self, value: py.expr) -> py.expr:
        """A value held in a fresh local (a name or a constant as it is)."""
        if type(value) is py.Constant or type(value) is py.Name:
            return value
        t = self.temp()
        self.pre.append(_assign(_store(t), value))
        return _name(t)

    def g_assign(self, node):
        name, expr = self.target(node), self.exprs(node)[0]
        hook = self.sem.hooks.get("assign")

        def value():
            v = self.gexpr(expr)
            return v if hook is None else self.hook_call(hook, _const(name), v)
        stmts, v = self.staged(value)
        self.names.add(name)
        return [*stmts, _assign(_store(f"v_{name}"), v)]

    def target(self, node) -> str:
        return next(str(c) for c in node.children if isinstance(c, Token))

    def exprs(self, node) -> list:
        return [c for c in node.children if isinstance(c, Tree) and c.data not in
                {"suite", "params", "names", "exprs", "index_at", "elif_", "else_", "loop_else"}]

    def g_output(self, node):
        args = node.children[0]
        stmts, parts = self.staged(lambda: [self.gexpr(a) for a in args.children] if args is not None else [])
        show, out_hook = self.sem.hooks.get("show"), self.sem.hooks.get("output")
        if len(parts) == 1 and show is None and out_hook is None:
            return [*stmts, _n(py.Expr, _call(self.obj(emit_one), _name("run"), parts[0]))]
        if show is None and out_hook is None:
            return [*stmts, _n(py.Expr, _call(self.obj(emit_plain), _name("run"), _n(py.List, parts, py.Load())))]
        return [*stmts, _n(py.Expr, _call(self.obj(emit), _name("run"), _n(py.List, parts, py.Load()),
                                          self.value(show), self.value(out_hook)))]

    def g_expr_stmt(self, node):
        if self._mutated(node.children[0]) is not None or (
                self.in_function and self.sem.hooks.get("no_return") is not None):
            return None  # a write-back, or the value kept for no_return: the closure kernel's statement
        stmts, _ = self.staged(lambda: self.gexpr(node.children[0]))
        return stmts or [_n(py.Pass)]

    def g_pass_(self, node):
        return [_n(py.Pass)]

    def cond(self, node) -> py.expr:
        e = self.gexpr(node)
        truthy = self.sem.hooks.get("truthy")
        if truthy is None:  # Python's truthiness is the standard one
            return e
        return self.hook_call(truthy, e)

    def g_if_(self, node):
        if self.sem.hooks.get("branch_order") is not None or self.sem.hooks.get("else_runs") is not None:
            return None
        cond, suite, *rest = node.children
        branches = [(*self.staged(lambda: self.cond(cond)), self.gblock(suite.children))]
        orelse: list[py.stmt] = []
        for c in rest:
            if c is None:
                continue
            if c.data == "elif_":
                branches.append((*self.staged(lambda: self.cond(c.children[0])), self.gblock(c.children[1].children)))
            else:
                orelse = self.gblock(c.children[0].children)
        for pre, test, body in reversed(branches):
            orelse = [*pre, _n(py.If, test, body, orelse)]
        return orelse

    def loop(self, line: int, head: list[py.stmt], each, suite) -> list[py.stmt]:
        """A loop with the run's loop flags set while it runs: `each(body)` makes the loop statement."""
        self.loops += 1
        try:
            body = self.gblock(suite.children)
        finally:
            self.loops -= 1
        saved = self.temp("w")
        loop = each([_assign(_store("ln"), _const(line))], body)
        return [*head, _assign(_store(saved), _call(self.obj(enter_loop), _name("run"))),
                _n(py.Try, [loop], [], [], [_n(py.Expr, _call(self.obj(leave_loop), _name("run"), _name(saved)))])]

    def closure_loop(self, node) -> bool:
        """Whether a loop runs as the closure kernel's code: it has an else block, or a `break n`
        inside it (Python's break leaves one loop; the closure kernel's control codes count them)."""
        return loop_parts(node)[1] is not None or any(True for _ in node.find_data("break_many"))

    def g_for_(self, node):
        if self.sem.hooks.get("passes") is not None or self.counted or self.closure_loop(node):
            return None
        name, expr = self.target(node), self.exprs(node)[0]
        iterate, assign = self.sem.hooks.get("iterate"), self.sem.hooks.get("assign")
        xs, x = self.temp(), self.temp()
        def walk():
            seq = self.gexpr(expr)
            return seq if iterate is None else self.hook_call(iterate, seq)
        stmts, seq = self.staged(walk)
        head = [*stmts, _assign(_store(xs), _call(self.obj(walked), _name("run"), seq, _const(None), _const(None)))]
        binding, bound = [], _name(x)
        if assign is not None:  # a pass binds its element inside the loop (in_loop, one more loop_depth)
            self.loops += 1
            try:
                binding, bound = self.staged(lambda: self.hook_call(assign, _const(name), _name(x)))
            finally:
                self.loops -= 1

        self.names.add(name)

        def each(at_head, body):
            if assign is None:
                return _n(py.For, _store(f"v_{name}"), _name(xs), body, [])
            bind = [*at_head, *binding, _assign(_store(f"v_{name}"), bound)]
            return _n(py.For, _store(x), _name(xs), bind + body, [])
        saved, self.bound = self.bound, self.bound | {name}
        try:
            return self.loop(self.line(node), head, each, loop_parts(node)[0])
        finally:
            self.bound = saved

    def g_while_(self, node):
        if self.sem.hooks.get("passes") is not None or self.counted or self.closure_loop(node):
            return None
        self.loops += 1  # the condition is tested inside the loop (in_loop, one more loop_depth)
        try:
            stmts, test = self.staged(lambda: self.cond(node.children[0]))
        finally:
            self.loops -= 1
        def each(at_head, body):
            return _n(py.While, _const(True), [*at_head, *stmts, _n(py.If, _n(py.UnaryOp, py.Not(), test),
                                                                  [_n(py.Break)], []),
                                               *self.step(), *body], [])
        return self.loop(self.line(node), [], each, loop_parts(node)[0])

    def line(self, node) -> int:
        return node.meta.line if not getattr(node.meta, "empty", True) else 0

    def g_jump(self, node, word: str):
        self._placed(node, word, self.loops > 0, "a loop")
        hook = self.sem.hooks.get("jump")
        if hook is None:
            return [_n(py.Break) if word == "break" else _n(py.Continue)]
        return self.control(_call(self.obj(self._jump(node, word)), _name("run")))

    g_break_ = functools.partialmethod(g_jump, word="break")
    g_continue_ = functools.partialmethod(g_jump, word="continue")

    def g_return_(self, node):
        self._placed(node, "return", self.in_function, "a function body")
        has = node.children and node.children[0] is not None
        stmts, value = self.staged(lambda: self.gexpr(node.children[0]) if has else _const(None))
        return [*stmts, self.give(value)]

    def g_fndef(self, node):
        name, params = self.function_signature(node)
        saved = (self.loops, self.in_function, self.bound, self.defined)
        own = {name} if name in self.direct else set()  # its body runs once it is defined
        self.loops, self.in_function, self.bound, self.defined = 0, True, frozenset(params), self.defined | own
        if name in self.direct:
            fn, gen = self.direct[name]
        else:
            self.temps += 1
            fn, gen = UserFunction(name, params, None), f"f{self.temps}"
        try:
            self.function(gen, node.children[-1].children, params)
        finally:
            self.loops, self.in_function, self.bound, self.defined = saved
        self.later.append((fn, gen))
        return [_assign(_set_item("F", name), self.obj(fn))]

    # ------------------------------------------------------------ expressions

    def gexpr(self, node) -> py.expr:
        """The name or constant holding a program expression's value (its statements put in self.pre)."""
        if isinstance(node, Token):
            return self.token(node, self.literal, self.var)
        native = getattr(self, "ge_" + node.data, None)
        if native is None:  # a form this compiler leaves to the closure kernel
            return self.closure_expr(node)
        return native(node)

    def closure_expr(self, node) -> py.expr:
        """The closure kernel's code for an expression, called (it may read and write the scope)."""
        closure = self.expr(node)
        self.touching.add(self.ref(closure))
        return self.spill(_call(self.obj(closure), _name("run")))

    def literal(self, hook_name: str, value, node) -> py.expr:
        hook = self.sem.hooks.get(hook_name)
        if hook is None:
            return _const(value)
        if hook.uses_ctx:
            return self.hook_call(hook, _const(value))
        try:
            return self.value(hook(Ctx(), [value]))
        except EvalError as e:
            e.line = getattr(getattr(node, "meta", node), "line", None)
            return self.spill(_call(self.obj(fail), self.obj(e)))

    def ge_int(self, node):
        return self.gexpr(node.children[0])

    ge_float = ge_str = ge_int

    def ge_true(self, node):
        return _const(True)

    def ge_false(self, node):
        return _const(False)

    def ge_none(self, node):
        return _const(None)

    def ge_list(self, node):
        items = [self.gexpr(a) for a in node.children[0].children] if node.children[0] is not None else []
        made = self.spill(_call(self.obj(collection), _name("run"), _n(py.List, items, py.Load())))
        hook = self.sem.hooks.get("list_literal")
        if hook is None:
            return made
        return self.hook_call(hook, made)

    def ge_var(self, node):
        return self.var(str(node.children[0]))

    def var(self, name: str) -> py.expr:
        lookup = self.sem.hooks.get("lookup")
        t = self.temp()

        self.names.add(name)

        def held():
            self.pre.append(_assign(_store(t), _name(f"v_{name}")))
            return _name(t) if lookup is None else self.hook_call(lookup, _const(name), _name(t))
        if name in self.bound:  # a parameter, or the variable of an enclosing for: always set
            return self.spill(held())
        stmts, v = self.staged(held)
        missing = _call(_name(self.k_miss), _name("run"), _const(name))
        keep = [] if type(v) is py.Name and v.id == t else [_assign(_store(t), v)]
        self.pre.append(_n(py.If, _n(py.Compare, _name(f"v_{name}"), [py.Is()], [self.obj(UNSET)]),
                           [_assign(_store(t), missing)], [*stmts, *keep]))
        return _name(t)

    def ge_call(self, node):
        name_tok, args_node = node.children
        name = str(name_tok)
        op = self.sem.ops.get(name)
        nodes = args_node.children if args_node is not None else []
        n = len(nodes)
        if op is None:
            if name not in self.crafted:
                self._e_call(node)  # raises the closure compiler's error for an unknown operator
            return self.user_call(name, nodes)
        if not op.accepts(n):
            raise self.error(name_tok, f"{name} takes {op.arity_text()}, got {n}")
        if op.updater is not None:  # it writes a variable back: the closure kernel's call
            return self.closure_expr(node)
        unit = op.unit
        args = [self.thunk(a) if i in unit.lazy else self.gexpr(a) for i, a in enumerate(nodes)]
        if unit.lazy:  # the lazy arguments are the closure kernel's code, run inside the unit
            self.touching.add(self.ref(unit))
        if unit.lazy or unit.variadic or unit.nslots or n < unit.arity:
            return self.spill(_call(self.obj(unit), _name("run"), _n(py.List, args, py.Load())))
        inlined = self.inline(op, args)
        if inlined is not None:
            return inlined
        return self.spill(_call(self.obj(unit.body), _n(py.List, [_const(None), _name("run"), *args], py.Load())))

    def user_call(self, name: str, nodes) -> py.expr:
        """A call of a program function: direct when it is this program's own (and no rule reads the
        call), else through the closure kernel's invoke."""
        fn, t = self.temp(), self.temp()  # the function is found before its arguments are evaluated
        target = self.direct.get(name)
        if name in self.defined and self.invoke is invoke and len(target[0].params) == len(nodes):
            args = [self.gexpr(a) for a in nodes]  # F[name] surely holds the function: called directly
            self.pre.extend(self.direct_call(t, target[1], args))
            return _name(t)
        scope = [_name("S")] if self.in_function else []
        self.pre.append(_n(py.If, _n(py.Compare, _const(name), [py.In()], [_name("F")]),
                           [_assign(_store(fn), _item("F", name))],
                           [_assign(_store(fn), _call(_name(self.k_named), _name("run"), _const(name), *scope))]))
        args = [self.gexpr(a) for a in nodes]
        listed = _n(py.List, args, py.Load())
        if self.in_function:  # the frame is in locals: the call is made with the run's state set
            general = _call(_name(self.k_call_in), _name("run"), _name("S"), _name("d"), _const(self.loops),
                            _name(fn), listed)
        else:
            general = _call(_name(self.k_callf), _name("run"), _name(fn), listed)
        if self.invoke is not invoke or target is None or len(target[0].params) != len(args):
            return self.spill(general)
        self.pre.append(_n(py.If, _n(py.Compare, _name(fn), [py.Is()], [self.obj(target[0])]),
                           self.direct_call(t, target[1], args), [_assign(_store(t), general)]))
        return _name(t)

    def direct_call(self, t: str, gen: str, args) -> list[py.stmt]:
        """`t = gen(...)`, a direct call of a generated function one call deeper, its steps taken back."""
        deeper = _n(py.BinOp, _name("d"), py.Add(), _const(1))
        return [_n(py.If, _n(py.Compare, _name("d"), [py.GtE()], [_const(self.max_depth)]),
                   [_n(py.Expr, _call(self.obj(too_deep), _name("run")))], []),
                _assign(_store(t), _call(_name(gen), _name("run"), deeper, _name("n"), _name("M"),
                                         _name("G"), _name("F"), *[atom(a) for a in args])),
                _assign(_store("n"), _n(py.Subscript, _name(t), _const(1), py.Load())),
                _assign(_store(t), _n(py.Subscript, _name(t), _const(0), py.Load()))]

    def hook_call(self, hook, *args: py.expr) -> py.expr:
        """A hook's body applied: inlined where it can be, else called through the table."""
        inlined = self.inline(hook, args)
        if inlined is not None:
            return inlined
        return self.spill(_call(self.obj(hook), _name("run"), _n(py.List, list(args), py.Load())))

    def inline(self, op, args) -> py.expr | None:
        """An operator's body, inlined at this call site's context on its arguments (names or
        constants); None when it stays a closure."""
        if op.source is None:
            return None
        ctx = static_context(self.loops, self.in_function)
        key = (id(op), tuple(ctx.values()))
        if key in self.untranslatable:
            return None
        body, mc = op.source
        try:
            stmts, value = BodyCompiler(self.ref, self.temp, [p.name for p in op.params], mc, ctx,
                                        list(args)).inline(body)
        except Untranslatable:
            self.untranslatable.add(key)
            return None
        self.pre.extend(stmts)
        return self.spill(value)

    def thunk(self, node) -> py.expr:
        """A lazy argument: the closure kernel's code for it, run when (and if) the body reads it."""
        return self.spill(_call(self.obj(Thunk), self.obj(self.expr(node)), _name("run")))

    def ge_index(self, node):
        if self.sem.hooks.get("position") is not None:  # a rarer rule: the closure kernel's code
            return self.closure_expr(node)
        xs = self.gexpr(node.children[0])
        i = self.gexpr(node.children[1])
        return self.hook_call(self.sem.hooks["index"], xs, i)

    def ge_slice(self, node):
        if self.sem.hooks.get("position") is not None:
            return self.closure_expr(node)
        kids = node.children
        xs = self.gexpr(kids[0])
        # evaluated in the closure kernel's order: the sequence, the end, the start
        hi = self.gexpr(kids[2]) if kids[2] is not None else self.obj(_END)
        lo = self.gexpr(kids[1]) if kids[1] is not None else _const(0)
        return self.spill(_call(self.obj(slice_to), _name("run"), self.obj(self.sem.hooks["slice"]), xs, hi, lo))
