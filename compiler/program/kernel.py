"""The program kernel: parse a probe or answer in the world's surface, compile it
to closures against one semantics table, and run it under hard limits.

Kernel behaviour that rules perturb (literals, truthiness, loop iteration and
passes, break and continue, branch order, output formatting, assignment,
variable lookup, indexing, slicing, argument passing, return values, the
write-back of mutating operators) goes through the table's hooks; a hook left
at its standard definition is `None` and costs nothing: the compiler picks the
closure for each statement once, at compile time. Every failure (syntax,
unknown operator, runtime error, limit) comes back as a `ProgramError` or
`EvalError`, never a Python crash.

Deep recursion. Python's recursion limit is never changed at import. A program
runs on the caller's stack; if it needs more Python frames than the caller has
left (a world may allow up to MAX_CALL_DEPTH nested program calls, each a few
frames), the run is rolled back to its start and run again on a worker thread
with a DEEP_STACK_BYTES stack, while the interpreter's limit is raised to
DEEP_RECURSION_LIMIT (CPython's limit is interpreter-wide: it is raised only
while such a run is in progress, and restored when the last one ends).
"""
from __future__ import annotations

import functools
import itertools
import re
import sys
import threading

from lark import Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from worldspec.compiler.api import UNFINISHED_PROGRAM
from worldspec.diagnostics import did_you_mean
from worldspec.meta import Thunk
from worldspec.parser import unquote
from worldspec.values import (MAX_DEPTH, MAX_INT_BITS, Ctx, EvalError, Function, LimitError, collection,
                              show as std_show, truthy as std_truthy, type_name)

MAX_PROGRAM_CHARS = 20_000
MAX_NESTING = 40
MAX_OPERATOR_DEPTH = 100  # operators nested in one expression (`1 + 1 + ...`): each is a call the kernels compile
MAX_OUTPUT_LINES = 2_000
MAX_OUTPUT_CHARS = 100_000
MAX_INT_DIGITS = 80  # 2^256 has 78 digits; Python will not read over 4,300
MAX_CALL_DEPTH = 2_000  # the most nested program calls a world may allow (syntax entry call_depth)
DEEP_STACK_BYTES = 256 * 1024 * 1024  # address space only: pages are committed as the stack grows
DEEP_RECURSION_LIMIT = 20_000  # the limit the kernel used to set for every program, at import

BREAK, CONTINUE, RETURN = 1, 2, 3
OUT = 10  # `break n` (n >= 2) is the control code OUT + n: each loop it leaves takes one off
_JUMPS = {"break": BREAK, "continue": CONTINUE, "pass": None}
_ESCAPE = re.compile(r"\\(.)")
_KNOWN_ESCAPES = frozenset('nt"\\')


class ProgramError(Exception):
    """A program that cannot run at all (syntax, unknown names, arity)."""

    def __init__(self, message: str, line: int = 0, col: int = 0, source: str = "", label: str = "syntax error"):
        super().__init__(message)
        self.message, self.line, self.col, self.label = message, line, col, label
        self.source_line = source.splitlines()[line - 1] if 0 < line <= len(source.splitlines()) else ""

    def render(self) -> str:
        """The message an agent sees."""
        where = f"line {self.line}: " if self.line else ""
        out = f"{self.label}: {where}{self.message}"
        if self.source_line:
            shown = self.source_line.strip()
            out += f"\n  {shown[:100]}{'...' if len(shown) > 100 else ''}"
        return out


class Run(Ctx):
    """The state of one program execution; also the ctx rule bodies see."""

    __slots__ = ("globals", "scope", "out", "out_chars", "functions", "retval", "words", "last", "max_depth",
                 "deep", "env")

    def __init__(self, words, max_steps: int):
        super().__init__(max_steps)
        self.globals: dict = {}
        self.scope: dict = self.globals
        self.out: list[str] = []
        self.out_chars = 0
        self.functions: dict = {}
        self.retval = None
        self.words = words
        self.last = None  # the value of the last expression statement of the running call (no_return)
        self.max_depth = MAX_DEPTH
        self.deep = False  # running on the deep-recursion thread
        self.env = None  # the running function's enclosing scopes (scope, parent env, then), for a closure


class UserFunction:
    """A program function: its body is `body(run)`, or (native) `native(run, scope, globals, functions)`.
    A function defined inside another is a closure: `env` is (the scope it was defined in, that
    scope's own env, and under an `enclosed` rule (a copy of the scope as it was then, the rule)),
    read when its body names a variable that is not its own."""

    __slots__ = ("name", "params", "body", "native", "env")

    def __init__(self, name, params, body, native=None, env=None):
        self.name, self.params, self.body, self.native, self.env = name, params, body, native, env


class _Start:
    """A run's state when a program starts, to roll back to before running it again on a deep stack."""

    def __init__(self, run: Run):
        self.lines, self.chars, self.steps = len(run.out), run.out_chars, run.steps
        self.globals, self.functions = dict(run.globals), dict(run.functions)

    def restore(self, run: Run) -> None:
        """Put the run back as it was (the frames that were unwound restored their own fields)."""
        del run.out[self.lines:]
        run.out_chars, run.steps, run.retval, run.last = self.chars, self.steps, None, None
        run.globals.clear()
        run.globals.update(self.globals)
        run.functions.clear()
        run.functions.update(self.functions)


class _DeepLimit:
    """The interpreter's recursion limit, raised while at least one deep run is in progress."""

    def __init__(self):
        self.lock = threading.Lock()
        self.runs = 0
        self.saved = 0

    def __enter__(self):
        with self.lock:
            if self.runs == 0:
                self.saved = sys.getrecursionlimit()
                sys.setrecursionlimit(max(self.saved, DEEP_RECURSION_LIMIT))
            self.runs += 1

    def __exit__(self, *exc):
        with self.lock:
            self.runs -= 1
            if self.runs == 0:
                sys.setrecursionlimit(self.saved)


_DEEP = _DeepLimit()


DEEP_THREAD = "worldspec-deep-run"


def on_deep_stack() -> bool:
    """Whether this code already runs on a deep-stack worker thread."""
    return threading.current_thread().name == DEEP_THREAD


def call_deep(fn):
    """fn() on a worker thread with a deep stack (the caller waits): its result, or its error raised here."""
    outcome: list = []

    def target():
        try:
            outcome.append((True, fn()))
        except BaseException as e:  # handed to the waiting caller, which raises it
            outcome.append((False, e))
    with _DEEP:
        with _DEEP.lock:  # the stack size applies to threads started while it is set
            old = threading.stack_size(DEEP_STACK_BYTES)
            try:
                worker = threading.Thread(target=target, name=DEEP_THREAD, daemon=True)
                worker.start()
            finally:
                threading.stack_size(old)
        worker.join()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def program_runner(block, depth: int):
    """The code that runs a whole compiled program: on the caller's stack, or, when that runs
    out, rolled back and run again on a deep stack."""
    def run_program(run):
        run.max_depth = depth
        if run.deep:
            return block(run)
        start = _Start(run)
        try:
            return block(run)
        except RecursionError:
            start.restore(run)
            return run_deep(block, run)
    return run_program


def run_deep(code, run: Run):
    """Run compiled program code on the deep stack, marking the run as deep while it does."""
    def deep():
        run.deep = True
        try:
            return code(run)
        finally:
            run.deep = False
    return call_deep(deep)


# ---------------------------------------------------------------- parsing


def _nesting(text: str) -> int:
    depth = best = 0
    for ch in text:
        if ch in "([":
            depth += 1
            best = max(best, depth)
        elif ch in ")]":
            depth -= 1
    indents = [len(line) - len(line.lstrip(" \t")) for line in text.splitlines() if line.strip()]
    return max(best, max(indents, default=0) // 2)


_SURROGATE = re.compile("[\ud800-\udfff]")


def desugar(surface, tree: Tree) -> int:
    """Turn every operator node of a parsed program into the call of its op, in place; the deepest nesting
    of operators found (the caller refuses a program past MAX_OPERATOR_DEPTH)."""
    if not surface.operators:
        return 0
    depth: dict[int, int] = {}
    deepest = 0
    for node in tree.iter_subtrees():  # bottom-up, iteratively: a chain of 10,000 `+` does not recurse
        kind, _, index = node.data.partition("_")
        if kind not in ("infix", "prefix") or not index.isdigit():
            continue
        o = surface.operators[int(index)]
        # Lark keeps a keyword's token (`and`) and drops punctuation (`+`): the operands are the other children
        operands = [c for c in node.children if not (isinstance(c, Token) and str(c) == o.symbol)]
        at = next((c for c in node.children if isinstance(c, Token) and str(c) == o.symbol), None)
        d = 1 + max((depth.get(id(c), 0) for c in operands if isinstance(c, Tree)), default=0)
        deepest = max(deepest, d)
        name = Token.new_borrow_pos("NAME", o.op, at) if at is not None else Token("NAME", o.op)
        node.data = "call"
        node.children = [name, Tree("args", operands, node.meta)]
        depth[id(node)] = d
    return deepest



def parse_program(surface, text: str) -> Tree:
    """A program's syntax tree in the world's surface (ProgramError when it cannot run)."""
    if len(text) > MAX_PROGRAM_CHARS:
        raise ProgramError(f"program too long ({len(text)} characters; the limit is {MAX_PROGRAM_CHARS})")
    if "\x00" in text:
        raise ProgramError("program contains a NUL character")
    # a lone surrogate is not text: echoed in feedback it would break every encoder
    if _SURROGATE.search(text):
        raise ProgramError("program contains a lone surrogate (U+D800 to U+DFFF), which is not a character")
    if _nesting(text) > MAX_NESTING:
        raise ProgramError(f"program nests too deeply (more than {MAX_NESTING} levels)")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        tree = surface.parser.parse(text.rstrip() + "\n")
    except UnexpectedInput as e:
        raise _friendly(surface, text, e) from None
    except LarkError as e:  # indentation errors from the Indenter, etc.
        msg = str(e).splitlines()[0] if str(e) else "cannot read the program"
        if "indent" in msg.lower() or "dedent" in msg.lower():
            msg = "inconsistent indentation"
        raise ProgramError(msg) from None
    if desugar(surface, tree) > MAX_OPERATOR_DEPTH:  # `a + b` becomes ADD(a, b): each one a call to compile
        raise ProgramError(f"an expression nests more than {MAX_OPERATOR_DEPTH} operators deep; "
                           "split it over several assignments")
    return tree


def _friendly(surface, text: str, e: UnexpectedInput) -> ProgramError:
    line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else "?"
        msg = f"unexpected character {ch!r}"
    elif isinstance(e, UnexpectedEOF):
        msg = f"{UNFINISHED_PROGRAM} (an unclosed bracket or an empty block?)"
    elif isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            msg = f"{UNFINISHED_PROGRAM} (an unclosed bracket or an empty block?)"
        elif tok.type == "_INDENT":
            msg = "unexpected indentation"
        elif tok.type == "_DEDENT":
            msg = "a block ends too early"
        elif tok.type == "_NL":
            msg = "the line ends too early"
        else:
            msg = f"unexpected {str(tok)!r}"
    else:
        msg = "cannot read the program"
    return ProgramError(msg, line, col, text)


# ---------------------------------------------------------------- charging


LOOPS = ("for_", "for_many", "while_")


def charge(tree: Tree, costs) -> int:
    """Probe units of a program: each output argument, by whether it sits in a loop."""
    total = 0

    def walk(node, in_loop):
        nonlocal total
        if not isinstance(node, Tree):
            return
        if node.data == "output":
            n = len(node.children[0].children) if node.children[0] is not None else 1
            total += n * (costs("output_in_loop") if in_loop else costs("output"))
            return
        inner = in_loop or node.data in LOOPS
        for child in node.children:
            walk(child, inner if isinstance(child, Tree) and child.data == "suite" else in_loop)
    walk(tree, False)
    return total


# ---------------------------------------------------------------- compiling


_PARTS = frozenset({"suite", "params", "names", "exprs", "index_at", "elif_", "else_", "loop_else"})


def _name(node: Tree) -> str:
    """The {name} of a statement (a template may place it anywhere)."""
    return next(str(c) for c in node.children if isinstance(c, Token))


def _exprs(node: Tree) -> list:
    """The {expr} parts of a statement, in order (the other placeholders are named subtrees)."""
    return [c for c in node.children if isinstance(c, Tree) and c.data not in _PARTS]


def _part(node: Tree, data: str):
    """The named subtree of a statement ({params}, {names}, ...), or None when it is absent."""
    return next((c for c in node.children if isinstance(c, Tree) and c.data == data), None)


def loop_parts(node: Tree):
    """A loop statement's body (its suite) and its else block's suite (None when it has none)."""
    suite = next(c for c in node.children if isinstance(c, Tree) and c.data == "suite")
    orelse = _part(node, "loop_else")
    return suite, (orelse.children[0] if orelse is not None else None)


def break_count(node: Tree) -> int:
    """The number of loops a `break n` statement leaves."""
    return int(next(str(c) for c in node.children if isinstance(c, Token)))


def defined_functions(tree: Tree) -> set[str]:
    """The names of the functions a program defines."""
    return {_name(n) for n in tree.iter_subtrees() if n.data == "fndef"}


def bound_names(tree: Tree) -> set[str]:
    """The names a program binds (assigned, looped over, parameters): a call of one of them calls
    the function value it holds."""
    out: set[str] = set()
    for n in tree.iter_subtrees():
        if n.data in ("assign", "for_"):
            out.add(_name(n))
        elif n.data in ("names", "params"):
            out |= {str(t) for t in n.children if isinstance(t, Token)}
    return out


def nested_functions(tree: Tree) -> bool:
    """Whether a program defines a function inside another (a closure)."""
    return any(any(True for _ in f.children[-1].find_data("fndef")) for f in tree.find_data("fndef"))


def _fold(hook, args: list, node, check):
    """A closure for a hook's answer: computed once, here, when the hook reads no context."""
    if hook.uses_ctx:
        return lambda run: check(hook(run, args))
    try:
        value = check(hook(Ctx(), args))
    except EvalError as e:
        e.line = getattr(getattr(node, "meta", node), "line", None)
        error = e

        def fail(run):
            raise error
        return fail
    return lambda run: value


class ProgramCompiler:
    """Tree -> closures over `Run`, with the semantics table bound at compile time."""

    def __init__(self, sem, source: str, known_functions=(), words=None):
        self.sem = sem
        self.words = dict(words or {})  # the world's spelling, for messages; and its kernel options
        self.source = source
        self.known = set(known_functions)
        self.crafted: set[str] = set()
        self.loops = 0  # loops enclosing the statement being compiled (within its function)
        self.in_function = False
        self.max_depth = int(self.words.get("call_depth", MAX_DEPTH))
        hooks = sem.hooks
        self.counted = sem.reads_iteration  # loops keep `iteration` only when a body reads it
        call_hooks = (hooks.get("arguments"), hooks.get("returned"), hooks.get("no_return"))
        if any(call_hooks) or self.counted:
            self.invoke = lambda run, fn, args: _invoke_hooked(run, fn, args, *call_hooks)
        else:
            self.invoke = invoke

    def error(self, node, message: str) -> ProgramError:
        """A ProgramError located at a node."""
        meta = node.meta if isinstance(node, Tree) else node
        return ProgramError(message, getattr(meta, "line", 0), getattr(meta, "column", 0), self.source,
                            label="error")

    def program(self, tree: Tree):
        """The closure that runs a whole program (on a deep stack if the caller's runs out)."""
        return program_runner(self.block_of(tree), self.max_depth)

    def block_of(self, tree: Tree):
        """The closures of a whole program's statements (compiling checks it: its errors raise here)."""
        self.crafted = self.known | defined_functions(tree) | bound_names(tree)
        return self.block(tree.children)

    def block(self, stmts):
        """The closure that runs a list of statements."""
        nodes = [s for s in stmts if isinstance(s, Tree)]
        code = [getattr(self, "_" + n.data)(n) for n in nodes]
        lines = [n.meta.line if not getattr(n.meta, "empty", True) else 0 for n in nodes]

        # Steps are paid per statement (and per loop iteration and call): operator
        # bodies are total and charge builtins by size, so this bounds all work.
        def run_block(run):
            k = -1
            try:
                for s in code:
                    k += 1
                    run.steps += 1
                    if run.steps > run.max_steps:
                        raise LimitError(f"step limit reached ({run.max_steps} steps)")
                    c = s(run)
                    if c:
                        return c
            except EvalError as e:
                if e.line is None:
                    e.line = lines[k]
                raise
            return None
        return run_block

    # statements -------------------------------------------------

    def _assign(self, node):
        name, value = _name(node), self.expr(_exprs(node)[0])
        hook = self.sem.hooks.get("assign")
        if hook is None:
            def assign(run):
                run.scope[name] = value(run)
        else:
            def assign(run):
                run.scope[name] = hook(run, [name, value(run)])
        return assign

    def _assign_many(self, node):
        names = [str(t) for t in _part(node, "names").children]
        if len(set(names)) != len(names):
            raise self.error(node, "a name appears twice on the left of a multiple assignment")
        exprs = [self.expr(e) for e in _part(node, "exprs").children]
        hook, bind = self.sem.hooks["assign_many"], self._binder()
        if len(exprs) not in (1, len(names)):
            raise self.error(node, f"{len(names)} names but {len(exprs)} values")

        def assign_many(run):
            vs = [e(run) for e in exprs] if len(exprs) > 1 else exprs[0](run)
            for n, v in zip(names, _unpacked(hook(run, [collection(run, list(names)), vs]), names)):
                bind(run, n, v)
        return assign_many

    def _binder(self):
        """Store one value in a variable as an assignment does (through the assign hook)."""
        hook = self.sem.hooks.get("assign")
        if hook is None:
            def bind(run, name, v):
                run.scope[name] = v
        else:
            def bind(run, name, v):
                run.scope[name] = hook(run, [name, v])
        return bind

    def _set_index(self, node):
        return self._setter(_name(node), _part(node, "index_at").children[0], _exprs(node)[0])

    def _set_item(self, node):  # `xs[i] = v`: the grammar reads the target as an expression
        target, index, value = node.children
        path = [index]  # `xs[i][j] = v`: the positions from the variable inwards
        while isinstance(target, Tree) and target.data == "index":
            target, inner = target.children
            path.insert(0, inner)
        if not (isinstance(target, Tree) and target.data == "var"):
            raise self.error(node, "only an element of a variable (or of an element of one) can be set")
        if len(path) > 1:
            return self._nested_setter(str(target.children[0]), path, value)
        return self._setter(str(target.children[0]), index, value)

    def _setter(self, name: str, index, value):
        """Store, in a variable, its value with one element replaced (through the set_index hook)."""
        index, value, hook = self.expr(index), self.expr(value), self.sem.hooks["set_index"]
        position = self.sem.hooks.get("position")

        if position is None:
            def set_index(run):
                scope = _holder(run, name)
                scope[name] = hook(run, [scope[name], index(run), value(run)])
            return set_index

        def set_index_at(run):
            scope = _holder(run, name)
            xs = scope[name]
            scope[name] = hook(run, [xs, position(run, ["set", xs, index(run)]), value(run)])
        return set_index_at

    def _nested_setter(self, name: str, path: list, value):
        """`xs[i][j] = v`: the element at i of xs, with its element j replaced, stored at i of xs
        (reads through the index hook, writes through set_index; positions through position)."""
        indices, value = [self.expr(i) for i in path], self.expr(value)
        get, put, position = self.sem.hooks["index"], self.sem.hooks["set_index"], self.sem.hooks.get("position")

        def set_nested(run):
            scope = _holder(run, name)
            keys = [i(run) for i in indices]
            v = value(run)
            chain = [scope[name]]  # the containers from the variable's value inwards
            for k in range(len(keys)):
                if position is not None:
                    keys[k] = position(run, ["set", chain[k], keys[k]])
                if k < len(keys) - 1:
                    chain.append(get(run, [chain[k], keys[k]]))
            for k in reversed(range(len(keys))):
                v = put(run, [chain[k], keys[k], v])
            scope[name] = v
        return set_nested

    def _output(self, node):
        args = node.children[0]
        parts = [self.expr(a) for a in args.children] if args is not None else []
        show, out_hook = self.sem.hooks.get("show"), self.sem.hooks.get("output")
        if len(parts) == 1 and show is None and out_hook is None:
            part, = parts
            return lambda run: emit_one(run, part(run))
        return lambda run: emit(run, [p(run) for p in parts], show, out_hook)

    def _expr_stmt(self, node):
        e = self.expr(node.children[0])
        mutated = self._mutated(node.children[0])
        keep_last = self.in_function and self.sem.hooks.get("no_return") is not None
        if mutated is not None:
            name, update = mutated, self.sem.hooks["update"]

            def write_back(run):
                scope = _holder(run, name)
                old = scope[name]
                new = e(run)
                if keep_last:
                    run.last = new
                scope[name] = update(run, [name, old, new])
            return write_back
        if keep_last:
            def keep(run):
                run.last = e(run)
            return keep

        def expr_stmt(run):
            e(run)
        return expr_stmt

    def _mutated(self, node) -> str | None:
        """The variable a bare call of a mutating operator writes back to (None: not such a call)."""
        if not isinstance(node, Tree) or node.data != "call":
            return None
        op = self.sem.ops.get(str(node.children[0]))
        args = node.children[1].children if node.children[1] is not None else []
        if op is None or op.mutates < 0 or op.mutates >= len(args) or op.updater is not None:
            return None  # (an updating op writes back wherever it is called: updating_call)
        arg = args[op.mutates]
        return str(arg.children[0]) if isinstance(arg, Tree) and arg.data == "var" else None

    def _pass_(self, node):
        return lambda run: None

    def _cond(self, node):
        e = self.expr(node)
        truthy = self.sem.hooks.get("truthy")
        if truthy is None:  # Python's truthiness is the standard one
            return lambda run: bool(e(run))
        return lambda run: bool(truthy(run, [e(run)]))

    def _if_(self, node):
        cond, suite, *rest = node.children
        branches = [(self._cond(cond), self.block(suite.children))]
        orelse = None
        for c in rest:
            if c is None:
                continue
            if c.data == "elif_":
                branches.append((self._cond(c.children[0]), self.block(c.children[1].children)))
            else:
                orelse = self.block(c.children[0].children)
        order, else_runs = self.sem.hooks.get("branch_order"), self.sem.hooks.get("else_runs")
        if order is not None or else_runs is not None:
            return self._if_hooked(node, branches, orelse, order, else_runs)

        def if_(run):
            for test, body in branches:
                if test(run):
                    return body(run)
            if orelse is not None:
                return orelse(run)
            return None
        return if_

    def _if_hooked(self, node, branches, orelse, order, else_runs):
        n = len(branches)
        everyone = list(range(n))
        tried = (lambda run: everyone) if order is None else _fold(order, [n], node, lambda v: _order(v, n))

        def if_(run):
            held = False
            for i in tried(run):
                test, body = branches[i]
                if test(run):
                    held = True
                    c = body(run)
                    if c:
                        return c
                    break
            if orelse is not None and (not held if else_runs is None else std_truthy(else_runs(run, [held]))):
                return orelse(run)
            return None
        return if_

    def loop_body(self, suite):
        """A block compiled as the body of a loop."""
        self.loops += 1
        try:
            return self.block(suite.children)
        finally:
            self.loops -= 1

    def loop_with_else(self, node, kind: str):
        """The loop function for a loop statement, the loop body's closure, and its else block's
        closure (None without one): `loop(run, passes, body)` gives a control code, or with an
        else block (code, broken)."""
        suite, orelse = loop_parts(node)
        body = self.loop_body(suite)
        if orelse is None:
            return (_loop_counted if self.counted else _loop), body, None
        return (_loop_tracked_counted if self.counted else _loop_tracked), body, self.block(orelse.children)

    def finished(self, kind: str, code, orelse):
        """A loop's code, with its else block when it has one."""
        if orelse is None:
            return code
        return with_else(kind, code, orelse, self.sem.hooks.get("loop_else"))

    def _for_(self, node):
        name, seq = _name(node), self.expr(_exprs(node)[0])
        loop, body, orelse = self.loop_with_else(node, "for")
        iterate, passes = self.sem.hooks.get("iterate"), self.sem.hooks.get("passes")
        assign = self.sem.hooks.get("assign")

        def for_(run):
            return loop(run, _bind_each(run, name, walked(run, seq(run), iterate, passes), assign), body)
        return self.finished("for", for_, orelse)

    def _for_many(self, node):
        names = [str(t) for t in _part(node, "names").children]
        if len(set(names)) != len(names):
            raise self.error(node, "a loop names the same variable twice")
        seq = self.expr(_exprs(node)[0])
        loop, body, orelse = self.loop_with_else(node, "for")
        iterate, passes = self.sem.hooks.get("iterate"), self.sem.hooks.get("passes")
        hook, bind = self.sem.hooks["for_many"], self._binder()

        def each(run, xs, listed):
            for x in xs:
                for n, v in zip(names, _unpacked(hook(run, [listed, x]), names)):
                    bind(run, n, v)
                yield

        def for_many(run):
            xs = walked(run, seq(run), iterate, passes)
            return loop(run, each(run, xs, collection(run, list(names))), body)
        return self.finished("for", for_many, orelse)

    def _while_(self, node):
        test = self._cond(node.children[0])
        loop, body, orelse = self.loop_with_else(node, "while")
        passes = self.sem.hooks.get("passes")
        if passes is not None:
            def while_passes(run):
                return loop(run, _while_passes(run, test, passes), body)
            return self.finished("while", while_passes, orelse)

        def while_(run):
            return loop(run, _while_holds(run, test), body)
        return self.finished("while", while_, orelse)

    def _placed(self, node, key: str, inside: bool, where: str):
        if not inside:
            raise self.error(node, f"{self.sem_word(key)} is only allowed inside {where}")

    def sem_word(self, key: str) -> str:
        """The keyword of a statement form, for messages."""
        template = self.words.get(key, key)
        return next((w for w in template.split() if "{" not in w), template)

    def _jump(self, node, word: str):
        self._placed(node, word, self.loops > 0, "a loop")
        jump = self.sem.hooks.get("jump")
        if jump is None:
            code = _JUMPS[word]
            return lambda run: code
        return _fold(jump, [word], node, _jump_code)

    _break_ = functools.partialmethod(_jump, word="break")
    _continue_ = functools.partialmethod(_jump, word="continue")

    def _break_many(self, node):
        """`break n`: leaves the n innermost loops (n from 1 to the loops around it in its function);
        the jump rule sees "break" and may make it a continue or a pass."""
        self._placed(node, "break", self.loops > 0, "a loop")
        n = break_count(node)
        if not 1 <= n <= self.loops:
            around = f"{self.loops} loop{'s' if self.loops != 1 else ''}"
            raise self.error(node, f"{self.sem_word('break_many')} {n} cannot leave {n} loops: {around} "
                             f"surround it here" + (" (in its function)" if self.in_function else ""))
        leave = BREAK if n == 1 else OUT + n
        jump = self.sem.hooks.get("jump")
        if jump is None:
            return lambda run: leave
        return _fold(jump, ["break"], node, lambda v: leave if _jump_code(v) == BREAK else _jump_code(v))

    def _return_(self, node):
        self._placed(node, "return", self.in_function, "a function body")
        e = self.expr(node.children[0]) if node.children and node.children[0] is not None else None

        if e is None:
            def bare_return(run):
                run.retval = None
                return RETURN
            return bare_return

        def return_(run):
            run.retval = e(run)
            return RETURN
        return return_

    def function_signature(self, node) -> tuple[str, list[str]]:
        """The name and parameters a function definition declares (checked)."""
        name, params_node = _name(node), _part(node, "params")
        params = [str(t) for t in params_node.children] if params_node is not None else []
        if len(set(params)) != len(params):
            raise self.error(node, f"function {name} repeats a parameter name")
        if name in self.sem.ops:
            raise self.error(node, f"{name} is a built-in operator and cannot be redefined")
        return name, params

    def _fndef(self, node):
        name, params = self.function_signature(node)
        saved = (self.loops, self.in_function)
        self.loops, self.in_function = 0, True
        try:
            fn = UserFunction(name, params, self.block(node.children[-1].children))
        finally:
            self.loops, self.in_function = saved
        if saved[1]:  # defined in a function body: a closure over the scope it is defined in, each time
            body = fn.body
            rule = self.sem.hooks.get("enclosed")
            if rule is not None:  # a rule reads the values as they were then
                def closure_then(run):
                    run.functions[name] = UserFunction(name, params, body, None,
                                                       (run.scope, run.env, (dict(run.scope), rule)))
                return closure_then

            def closure(run):
                run.functions[name] = UserFunction(name, params, body, None, (run.scope, run.env, None))
            return closure

        def fndef(run):
            run.functions[name] = fn
        return fndef

    # expressions ------------------------------------------------

    def expr(self, node):
        """The closure that evaluates an expression."""
        if isinstance(node, Token):
            return self.token(node, self._literal, self._var)
        return getattr(self, "_e_" + node.data)(node)

    def token(self, node: Token, literal, var):
        """A literal, made by literal(hook, value, node), or a name, made by var(name)."""
        if node.type == "INT":
            return literal("int_literal", self._int(node), node)
        if node.type == "FLOAT":
            return literal("float_literal", self._float(node), node)
        if node.type == "STRING":
            return literal("str_literal", self._string(node), node)
        if node.type == "NAME":
            return var(str(node))
        raise self.error(node, f"unexpected {str(node)!r}")

    def _int(self, node) -> int:
        """An integer literal, refused past the integer limit before Python reads it."""
        digits = str(node).lstrip("+-").lstrip("0")
        if len(digits) > MAX_INT_DIGITS or (int(str(node)) >> MAX_INT_BITS) not in (0, -1):
            raise self.error(node, f"integer literal too large (more than {MAX_INT_BITS} bits)")
        return int(str(node))

    def _float(self, node) -> float:
        """A float literal (its digits are bounded like an integer's)."""
        if len(str(node)) > 2 * MAX_INT_DIGITS:
            raise self.error(node, "number literal too long")
        return float(str(node))

    def _string(self, node) -> str:
        """A string literal's value: the escapes \\n, \\t, \\" and \\\\, and no others."""
        text = str(node)
        bad = next((m for m in _ESCAPE.finditer(text) if m.group(1) not in _KNOWN_ESCAPES), None)
        if bad is not None:
            raise ProgramError(f"unknown escape {bad.group()} in a string (the escapes are \\n, \\t, \\\" and "
                               f"\\\\)", node.line or 0, (node.column or 0) + bad.start(), self.source, "error")
        return unquote(text)

    def _literal(self, hook_name, value, node):
        hook = self.sem.hooks.get(hook_name)
        if hook is None:
            return lambda run: value
        return _fold(hook, [value], node, lambda v: v)

    def _e_int(self, node):
        return self.expr(node.children[0])

    _e_float = _e_str = _e_int

    def _e_true(self, node):
        return lambda run: True

    def _e_false(self, node):
        return lambda run: False

    def _e_none(self, node):
        return lambda run: None

    def _e_list(self, node):
        items = [self.expr(a) for a in node.children[0].children] if node.children[0] is not None else []
        hook = self.sem.hooks.get("list_literal")
        if hook is None:
            return lambda run: collection(run, [a(run) for a in items])
        return lambda run: hook(run, [collection(run, [a(run) for a in items])])

    def _e_var(self, node):
        return self._var(str(node.children[0]))

    def _var(self, name):
        lookup = self.sem.hooks.get("lookup")
        ops = self.sem.ops
        call = self.invoke

        def var(run):
            scope = run.scope
            if name in scope:
                v = scope[name]
                return v if lookup is None else lookup(run, [name, v])
            return var_missing(run, name, lookup, ops, call)
        return var

    def _e_call(self, node):
        name_tok, args_node = node.children
        name = str(name_tok)
        args = [self.expr(a) for a in args_node.children] if args_node is not None else []
        n = len(args)
        op = self.sem.ops.get(name)
        if op is not None:
            if not op.accepts(n):
                raise self.error(name_tok, f"{name} takes {op.arity_text()}, got {n}")
            unit = op.unit
            if op.updater is not None:
                return self.updating_call(op, args_node.children if args_node is not None else [], args)
            if unit.lazy:  # those arguments run when (and if) the body reads them
                lazy = [i in unit.lazy for i in range(n)]
                return lambda run: unit(run, [Thunk(a, run) if z else a(run) for a, z in zip(args, lazy)])
            if unit.variadic or unit.nslots or n < unit.arity:
                return lambda run: unit(run, [a(run) for a in args])
            body = unit.body  # build the frame here: one call less per operator
            if n == 1:
                a0, = args
                return lambda run: body([None, run, a0(run)])
            if n == 2:
                a0, a1 = args
                return lambda run: body([None, run, a0(run), a1(run)])
            if n == 3:
                a0, a1, a2 = args
                return lambda run: body([None, run, a0(run), a1(run), a2(run)])
            return lambda run: body([None, run, *[a(run) for a in args]])
        if name not in self.crafted:
            raise self.error(name_tok, f"unknown operator {name}." + did_you_mean(name, list(self.sem.ops)))
        call = self.invoke

        def call_user(run):
            fn = function_named(run, name)
            if type(fn) is not UserFunction:
                return fn(*[a(run) for a in args])
            return call(run, fn, [a(run) for a in args])
        return call_user

    def updating_call(self, op, nodes: list, args: list):
        """A call of an op declared `mutates xs to EXPR` (pop): its value is the body's, and when a
        variable stands as xs, the variable is set to EXPR (through the update hook), wherever the
        call stands."""
        at = op.mutates
        target = nodes[at] if at < len(nodes) else None
        name = str(target.children[0]) if isinstance(target, Tree) and target.data == "var" else None
        unit, updater, update = op.unit, op.updater, self.sem.hooks["update"]

        def call(run):
            vals = [a(run) for a in args]
            result = unit(run, vals)
            if name is not None:
                new = updater(run, vals)
                scope = _holder(run, name)
                scope[name] = update(run, [name, scope[name], new])
            return result
        return call

    def _e_index(self, node):
        xs, i = self.expr(node.children[0]), self.expr(node.children[1])
        hook, position = self.sem.hooks["index"], self.sem.hooks.get("position")
        if position is None:
            return lambda run: hook(run, [xs(run), i(run)])

        def index_at(run):
            seq = xs(run)
            return hook(run, [seq, position(run, ["get", seq, i(run)])])
        return index_at

    def _e_slice(self, node):
        kids = node.children
        xs = self.expr(kids[0])
        position = self.sem.hooks.get("position")
        lo = self.expr(kids[1]) if kids[1] is not None else None
        hi = self.expr(kids[2]) if kids[2] is not None else None
        hook = self.sem.hooks["slice"]

        def slice_(run):
            seq = xs(run)
            # a bound left out is the start or the end as it is: the position rule reads written bounds
            if hi is None:
                top = len(seq) if type(seq) in (list, str) else 0
            else:
                top = hi(run) if position is None else position(run, ["to", seq, hi(run)])
            if lo is None:
                low = 0
            else:
                low = lo(run) if position is None else position(run, ["from", seq, lo(run)])
            return hook(run, [seq, low, top])
        return slice_

    def _e_map(self, node):
        pairs = [(self.expr(p.children[0]), self.expr(p.children[1])) for p in node.children[0].children] \
            if node.children[0] is not None else []
        return lambda run: map_value(run, [(k(run), v(run)) for k, v in pairs])


def map_value(run: Run, pairs: list) -> dict:
    """The map a literal `{k: v, ...}` builds (keys are integers or strings; a later key wins)."""
    out = {}
    for k, v in pairs:
        if type(k) is not int and type(k) is not str:  # true would merge with 1
            raise EvalError(f"a map key must be an integer or a string, not {type_name(k)}")
        out[k] = v
    return collection(run, out)


def _holder(run: Run, name: str) -> dict:
    """The scope a variable lives in (the function's own, else the program's): where a write-back goes."""
    if name in run.scope:
        return run.scope
    env = run.env
    while env is not None:  # a closure's variable lives in a scope it was defined in
        scope, env, _ = env
        if name in scope:
            return scope
    if name in run.globals:
        return run.globals
    raise EvalError(f"unknown variable {name}")


def _unpacked(vs, names: list[str]):
    if (type(vs) is not list and type(vs) is not str) or len(vs) != len(names):
        got = f"{len(vs)} values" if type(vs) in (list, str) else f"a value of type {type_name(vs)}"
        raise EvalError(f"cannot unpack {got} into {len(names)} names")
    return vs


def _order(v, n: int) -> list:
    if type(v) is not list or any(type(i) is not int or not 0 <= i < n for i in v):
        raise EvalError("the branch_order rule must give positions of the conditions")
    return v


def _jump_code(v):
    if type(v) is not str or v not in _JUMPS:
        raise EvalError('the jump rule must give "break", "continue" or "pass"')
    return _JUMPS[v]


def _count(v, hook: str) -> int:
    if type(v) is not int:
        raise EvalError(f"the {hook} rule produced {type_name(v)}, not a number of passes")
    return v


def _loop(run: Run, passes, body):
    """Run a loop body once per pass; `passes` prepares each one (binds, tests, charges)."""
    was, depth = run.in_loop, run.loop_depth
    run.in_loop, run.loop_depth = True, depth + 1
    try:
        for _ in passes:
            c = body(run)
            if c:
                if c == BREAK:
                    break
                if c == RETURN:
                    return c
                if c > OUT:  # `break n`: this loop is one of the n it leaves
                    return BREAK if c == OUT + 2 else c - 1
    finally:
        run.in_loop, run.loop_depth = was, depth
    return None


def _loop_tracked(run: Run, passes, body) -> tuple:
    """_loop for a loop with an else block: (the control code for the enclosing block, whether a
    break left the loop)."""
    was, depth = run.in_loop, run.loop_depth
    run.in_loop, run.loop_depth = True, depth + 1
    try:
        for _ in passes:
            c = body(run)
            if c:
                if c == BREAK:
                    return None, True
                if c == RETURN:
                    return c, False
                if c > OUT:
                    return (BREAK if c == OUT + 2 else c - 1), True
    finally:
        run.in_loop, run.loop_depth = was, depth
    return None, False


def _loop_tracked_counted(run: Run, passes, body) -> tuple:
    """_loop_tracked that also keeps `iteration` (restored before the else block runs)."""
    outer = run.iteration
    try:
        return _loop_tracked(run, _counted(run, passes), body)
    finally:
        run.iteration = outer


def with_else(kind: str, loop, orelse, hook):
    """A loop statement's code with its else block: `loop(run)` gives (code, broken); the block
    runs when no break left the loop (through the loop_else hook)."""
    if hook is None:
        def loop_else(run):
            c, broken = loop(run)
            if c:
                return c
            if not broken:
                return orelse(run)
            return None
        return loop_else

    def loop_else_hooked(run):
        c, broken = loop(run)
        if c:
            return c
        if std_truthy(hook(run, [kind, broken])):
            return orelse(run)
        return None
    return loop_else_hooked


def _loop_counted(run: Run, passes, body):
    """_loop that also keeps `iteration`, the pass number, for the rules that read it."""
    outer = run.iteration
    try:
        return _loop(run, _counted(run, passes), body)
    finally:
        run.iteration = outer


def _counted(run: Run, passes):
    """The passes of a loop, numbered: `iteration` is set before each is prepared (so a while
    condition sees the pass it decides on)."""
    ahead = iter(passes)
    for i in itertools.count():
        run.iteration = i
        if next(ahead, ahead) is ahead:
            return
        yield


def _bind_each(run: Run, name: str, xs, assign):
    scope = run.scope
    for x in xs:
        scope[name] = x if assign is None else assign(run, [name, x])
        yield


def walked(run: Run, xs, iterate, passes):
    """What a for loop walks: the sequence after the iterate and passes rules."""
    if iterate is not None:
        xs = iterate(run, [xs])
    if type(xs) is dict:  # a map is walked over its keys, in the order they were first set
        xs = collection(run, list(xs))
    elif type(xs) is not list and type(xs) is not str:  # a string is walked in place, not copied
        raise EvalError(f"cannot loop over a value of type {type_name(xs)}")
    return xs if passes is None else _for_passes(run, passes, xs)


def _for_passes(run: Run, passes, xs):
    """The elements a for loop visits when a rule sets its number of passes: fewer stop early,
    more visit the last element again (none, for an empty sequence)."""
    n = len(xs)
    m = _count(passes(run, ["for", n]), "passes")
    if m <= n:
        return xs[:max(m, 0)]
    return itertools.chain(xs, itertools.repeat(xs[-1] if n else None, m - n))


def _while_holds(run: Run, test):
    while test(run):  # evaluated inside the loop's scope, like its body
        run.steps += 1
        if run.steps > run.max_steps:
            raise LimitError(f"step limit reached ({run.max_steps} steps)")
        yield


def _while_passes(run: Run, test, passes):
    """_while_holds, then the extra passes a rule asks for once the condition fails."""
    n = 0
    for _ in _while_holds(run, test):
        n += 1
        yield
    for _ in range(_count(passes(run, ["while", n]), "passes") - n):
        run.charge(1)
        yield


def invoke(run: Run, fn: UserFunction, args: list):
    """Call a user function in a fresh scope (or a function value a variable held, with no scope)."""
    if type(fn) is not UserFunction:
        return fn(*args)
    if len(args) != len(fn.params):
        raise EvalError(f"function {fn.name} takes {len(fn.params)} argument(s), got {len(args)}")
    if run.call_depth >= run.max_depth:
        raise LimitError(f"recursion limit reached (more than {run.max_depth} nested calls)")
    saved = (run.scope, run.in_function, run.in_loop, run.loop_depth, run.env)
    run.scope = dict(zip(fn.params, args))
    run.in_function, run.in_loop, run.loop_depth, run.env = True, False, 0, fn.env
    run.call_depth += 1
    try:
        c = fn.body(run) if fn.native is None else fn.native(run, run.scope, run.globals, run.functions)
        result = run.retval if c == RETURN else None
        run.retval = None
        return result
    finally:
        run.scope, run.in_function, run.in_loop, run.loop_depth, run.env = saved
        run.call_depth -= 1


def _invoke_hooked(run: Run, fn: UserFunction, args: list, arguments, returned, no_return):
    """invoke, with the rules on argument passing and return values (and `iteration` reset)."""
    if arguments is not None:
        args = arguments(run, [collection(run, list(args))])
        if type(args) is not list:
            raise EvalError(f"the arguments rule produced {type_name(args)}, not a list")
    if len(args) != len(fn.params):
        raise EvalError(f"function {fn.name} takes {len(fn.params)} argument(s), got {len(args)}")
    if run.call_depth >= run.max_depth:
        raise LimitError(f"recursion limit reached (more than {run.max_depth} nested calls)")
    saved = (run.scope, run.in_function, run.in_loop, run.loop_depth, run.iteration, run.last, run.env)
    run.scope = dict(zip(fn.params, args))
    run.in_function, run.in_loop, run.loop_depth, run.iteration, run.last = True, False, 0, 0, None
    run.env = fn.env
    run.call_depth += 1
    try:
        c = fn.body(run) if fn.native is None else fn.native(run, run.scope, run.globals, run.functions)
        if c == RETURN:
            result = run.retval if returned is None else returned(run, [run.retval, collection(run, list(args))])
        else:
            result = None if no_return is None else no_return(run, [run.last, collection(run, list(args))])
        run.retval = None
        return result
    finally:
        run.scope, run.in_function, run.in_loop, run.loop_depth, run.iteration, run.last, run.env = saved
        run.call_depth -= 1


def _function_value(run, fn, call=invoke):
    return Function(fn.name, len(fn.params), lambda args: call(run, fn, args))


def emit_one(run: Run, v) -> None:
    """An output statement of one value, with the show and output rules at their standard definitions."""
    line = str(v) if type(v) is int else std_show(v, *run.words)
    run.out_chars += len(line) + 1
    run.out.append(line)
    if run.out_chars > MAX_OUTPUT_CHARS or len(run.out) > MAX_OUTPUT_LINES:
        raise LimitError("output limit reached")


def emit(run: Run, vals: list, show, out_hook) -> None:
    """An output statement: its values shown (through the show rule) and joined (through the output rule)."""
    words = run.words
    # stop rendering once the line is over the output limit: many
    # arguments each just under the print limit would otherwise all be rendered
    shown, room = [], MAX_OUTPUT_CHARS - run.out_chars
    for v in vals:
        shown.append(std_show(v, *words) if show is None else _as_text(show(run, [v]), "show"))
        room -= len(shown[-1]) + 1
        if room < 0:
            break
    line = " ".join(shown) if out_hook is None else _as_text(out_hook(run, [shown]), "output")
    run.out_chars += len(line) + 1
    run.out.append(line)
    if len(run.out) > MAX_OUTPUT_LINES or run.out_chars > MAX_OUTPUT_CHARS:
        raise LimitError("output limit reached")


def var_missing(run: Run, name: str, lookup, ops, call):
    """A variable read that the running scope does not hold: a program variable, a function
    or operator as a value, else an unknown variable."""
    env = run.env
    while env is not None:  # a closure reads the scopes it was defined in, innermost first
        scope, env, then = env
        if name in scope:
            v = scope[name]
            if then is not None:  # the enclosed rule, given the value when the closure was made and now
                snapshot, rule = then
                v = rule(run, [name, snapshot.get(name, v), v])
            return v if lookup is None else lookup(run, [name, v])
    if name in run.globals:
        v = run.globals[name]
        return v if lookup is None else lookup(run, [name, v])
    if name in run.functions:
        return _function_value(run, run.functions[name], call)
    if name in ops:
        return ops[name].as_value(run)
    raise EvalError(f"unknown variable {name}")


def function_named(run: Run, name: str, scope: dict | None = None):
    """The program function a call names: defined, or a function value in a variable (of `scope`,
    the running one unless given, or the program's)."""
    fn = run.functions.get(name)
    if fn is None:
        here = run.scope if scope is None else scope
        v = here[name] if name in here else enclosing(run, name)
        if isinstance(v, Function):
            return v
        if v is None and name not in here:
            raise EvalError(f"function {name} is called before it is defined")
        raise EvalError(f"{name} holds {type_name(v)}, not a function, and cannot be called")
    return fn


def enclosing(run: Run, name: str):
    """A variable's value in the scopes around the running function (a closure's), else the
    program's; None when none holds it."""
    env = run.env
    while env is not None:
        scope, env, _ = env
        if name in scope:
            return scope[name]
    return run.globals.get(name)


def _as_text(v, hook):
    if type(v) is not str:
        raise EvalError(f"the {hook} rule produced {type_name(v)}, not text")
    return v
