"""The program kernel: parse a probe or answer in the world's surface, compile it
to closures against one semantics table, and run it under hard limits.

Kernel behaviour that rules perturb (literals, truthiness, loop iteration,
output formatting, assignment, variable lookup, indexing, slicing) goes
through the table's hooks; a hook left at its standard definition is `None`
and costs nothing. Every failure (syntax, unknown operator, runtime error,
limit) comes back as a `ProgramError` or `EvalError`, never a Python crash.
"""
from __future__ import annotations

import re
import sys

from lark import Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from worldspec.diagnostics import did_you_mean
from worldspec.parser import unquote
from worldspec.values import (MAX_DEPTH, MAX_INT_BITS, Ctx, EvalError, Function, LimitError, show as std_show,
                              type_name)

MAX_PROGRAM_CHARS = 20_000
MAX_NESTING = 40
MAX_OUTPUT_LINES = 2_000
MAX_OUTPUT_CHARS = 100_000
MAX_INT_DIGITS = 80  # 2^256 has 78 digits; Python will not read over 4,300

BREAK, CONTINUE, RETURN = 1, 2, 3

# The closures of one program nest a few Python frames per kernel level.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))


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

    __slots__ = ("globals", "scope", "out", "out_chars", "functions", "retval", "words")

    def __init__(self, words, max_steps: int):
        super().__init__(max_steps)
        self.globals: dict = {}
        self.scope: dict = self.globals
        self.out: list[str] = []
        self.out_chars = 0
        self.functions: dict = {}
        self.retval = None
        self.words = words


class UserFunction:
    __slots__ = ("name", "params", "body")

    def __init__(self, name, params, body):
        self.name, self.params, self.body = name, params, body


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
        return surface.parser.parse(text.rstrip() + "\n")
    except UnexpectedInput as e:
        raise _friendly(surface, text, e) from None
    except LarkError as e:  # indentation errors from the Indenter, etc.
        msg = str(e).splitlines()[0] if str(e) else "cannot read the program"
        if "indent" in msg.lower() or "dedent" in msg.lower():
            msg = "inconsistent indentation"
        raise ProgramError(msg) from None


def _friendly(surface, text: str, e: UnexpectedInput) -> ProgramError:
    line, col = getattr(e, "line", 0) or 0, getattr(e, "column", 0) or 0
    if isinstance(e, UnexpectedCharacters):
        ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else "?"
        msg = f"unexpected character {ch!r}"
    elif isinstance(e, UnexpectedEOF):
        msg = "the program ends too early (an unclosed bracket or an empty block?)"
    elif isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            msg = "the program ends too early (an unclosed bracket or an empty block?)"
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
        inner = in_loop or node.data in ("for_", "while_")
        for child in node.children:
            walk(child, inner if isinstance(child, Tree) and child.data == "suite" else in_loop)
    walk(tree, False)
    return total


# ---------------------------------------------------------------- compiling


def defined_functions(tree: Tree) -> set[str]:
    """The names of the functions a program defines."""
    return {str(n.children[0]) for n in tree.iter_subtrees() if n.data == "fndef"}


class ProgramCompiler:
    """Tree -> closures over `Run`, with the semantics table bound at compile time."""

    def __init__(self, sem, source: str, known_functions=(), words=None):
        self.sem = sem
        self.words = dict(words or {})  # the world's spelling, for messages
        self.source = source
        self.known = set(known_functions)
        self.crafted: set[str] = set()
        self.loops = 0  # loops enclosing the statement being compiled (within its function)
        self.in_function = False

    def error(self, node, message: str) -> ProgramError:
        """A ProgramError located at a node."""
        meta = node.meta if isinstance(node, Tree) else node
        return ProgramError(message, getattr(meta, "line", 0), getattr(meta, "column", 0), self.source,
                            label="error")

    def program(self, tree: Tree):
        """The closure that runs a whole program."""
        self.crafted = self.known | defined_functions(tree)
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
        name, value = str(node.children[0]), self.expr(node.children[1])
        hook = self.sem.hooks.get("assign")
        if hook is None:
            def assign(run):
                run.scope[name] = value(run)
        else:
            def assign(run):
                run.scope[name] = hook(run, [name, value(run)])
        return assign

    def _output(self, node):
        args = node.children[0]
        parts = [self.expr(a) for a in args.children] if args is not None else []
        show, out_hook = self.sem.hooks.get("show"), self.sem.hooks.get("output")
        if len(parts) == 1 and show is None and out_hook is None:
            part, = parts

            def output1(run):
                v = part(run)
                line = str(v) if type(v) is int else std_show(v, *run.words)
                run.out_chars += len(line) + 1
                run.out.append(line)
                if run.out_chars > MAX_OUTPUT_CHARS or len(run.out) > MAX_OUTPUT_LINES:
                    raise LimitError("output limit reached")
            return output1

        def output(run):
            words = run.words
            vals = [p(run) for p in parts]
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
        return output

    def _expr_stmt(self, node):
        e = self.expr(node.children[0])

        def expr_stmt(run):
            e(run)
        return expr_stmt

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

        def if_(run):
            for test, body in branches:
                if test(run):
                    return body(run)
            if orelse is not None:
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

    def _for_(self, node):
        name, seq = str(node.children[0]), self.expr(node.children[1])
        body = self.loop_body(node.children[-1])
        iterate = self.sem.hooks.get("iterate")
        assign = self.sem.hooks.get("assign")

        def for_(run):
            xs = seq(run)
            if iterate is not None:
                xs = iterate(run, [xs])
            if type(xs) is not list and type(xs) is not str:  # a string is walked in place, not copied
                raise EvalError(f"cannot loop over a value of type {type_name(xs)}")
            return _loop(run, _bind_each(run, name, xs, assign), body)
        return for_

    def _while_(self, node):
        test = self._cond(node.children[0])
        body = self.loop_body(node.children[-1])

        def while_(run):
            return _loop(run, _while_holds(run, test), body)
        return while_

    def _placed(self, node, key: str, inside: bool, where: str):
        if not inside:
            raise self.error(node, f"{self.sem_word(key)} is only allowed inside {where}")

    def sem_word(self, key: str) -> str:
        """The keyword of a statement form, for messages."""
        template = self.words.get(key, key)
        return next((w for w in template.split() if "{" not in w), template)

    def _break_(self, node):
        self._placed(node, "break", self.loops > 0, "a loop")
        return lambda run: BREAK

    def _continue_(self, node):
        self._placed(node, "continue", self.loops > 0, "a loop")
        return lambda run: CONTINUE

    def _return_(self, node):
        self._placed(node, "return", self.in_function, "a function body")
        e = self.expr(node.children[0])

        def return_(run):
            run.retval = e(run)
            return RETURN
        return return_

    def _fndef(self, node):
        name, params_node = str(node.children[0]), node.children[1]
        params = [str(t) for t in params_node.children] if params_node is not None else []
        if len(set(params)) != len(params):
            raise self.error(node, f"function {name} repeats a parameter name")
        if name in self.sem.ops:
            raise self.error(node, f"{name} is a built-in operator and cannot be redefined")
        saved = (self.loops, self.in_function)
        self.loops, self.in_function = 0, True
        try:
            fn = UserFunction(name, params, self.block(node.children[-1].children))
        finally:
            self.loops, self.in_function = saved

        def fndef(run):
            run.functions[name] = fn
        return fndef

    # expressions ------------------------------------------------

    def expr(self, node):
        """The closure that evaluates an expression."""
        if isinstance(node, Token):
            if node.type == "INT":
                return self._literal("int_literal", self._int(node), node)
            if node.type == "STRING":
                return self._literal("str_literal", unquote(str(node)), node)
            if node.type == "NAME":
                return self._var(str(node))
            raise self.error(node, f"unexpected {str(node)!r}")
        return getattr(self, "_e_" + node.data)(node)

    def _int(self, node) -> int:
        """An integer literal, refused past the integer limit before Python reads it."""
        digits = str(node).lstrip("+-").lstrip("0")
        if len(digits) > MAX_INT_DIGITS or (int(str(node)) >> MAX_INT_BITS) not in (0, -1):
            raise self.error(node, f"integer literal too large (more than {MAX_INT_BITS} bits)")
        return int(str(node))

    def _literal(self, hook_name, value, node):
        hook = self.sem.hooks.get(hook_name)
        if hook is None:
            return lambda run: value
        if not hook.uses_ctx:  # pure: fold once, here
            try:
                folded = hook(Ctx(), [value])
            except EvalError as e:
                e.line = getattr(node, "line", None)
                msg = e
                def fail(run):
                    raise msg
                return fail
            return lambda run: folded
        return lambda run: hook(run, [value])

    def _e_int(self, node):
        return self.expr(node.children[0])

    def _e_str(self, node):
        return self.expr(node.children[0])

    def _e_true(self, node):
        return lambda run: True

    def _e_false(self, node):
        return lambda run: False

    def _e_none(self, node):
        return lambda run: None

    def _e_var(self, node):
        return self._var(str(node.children[0]))

    def _var(self, name):
        lookup = self.sem.hooks.get("lookup")
        ops = self.sem.ops

        def var(run):
            scope = run.scope
            if name in scope:
                v = scope[name]
            elif name in run.globals:
                v = run.globals[name]
            elif name in run.functions:
                return _function_value(run, run.functions[name])
            elif name in ops:
                return ops[name].as_value(run)
            else:
                raise EvalError(f"unknown variable {name}")
            return v if lookup is None else lookup(run, [name, v])
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
            if unit.variadic or unit.nslots:
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

        def call_user(run):
            fn = run.functions.get(name)
            if fn is None:
                v = run.scope.get(name, run.globals.get(name))
                if isinstance(v, Function):
                    return v(*[a(run) for a in args])
                raise EvalError(f"function {name} is called before it is defined")
            return invoke(run, fn, [a(run) for a in args])
        return call_user

    def _e_index(self, node):
        xs, i = self.expr(node.children[0]), self.expr(node.children[1])
        hook = self.sem.hooks["index"]
        return lambda run: hook(run, [xs(run), i(run)])

    def _e_slice(self, node):
        kids = node.children
        xs = self.expr(kids[0])
        lo = self.expr(kids[1]) if kids[1] is not None else (lambda run: 0)
        hi = self.expr(kids[2]) if kids[2] is not None else None
        hook = self.sem.hooks["slice"]

        def slice_(run):
            seq = xs(run)
            top = hi(run) if hi is not None else (len(seq) if type(seq) in (list, str) else 0)
            return hook(run, [seq, lo(run), top])
        return slice_


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
    finally:
        run.in_loop, run.loop_depth = was, depth
    return None


def _bind_each(run: Run, name: str, xs: list, assign):
    scope = run.scope
    for x in xs:
        scope[name] = x if assign is None else assign(run, [name, x])
        yield


def _while_holds(run: Run, test):
    while test(run):  # evaluated inside the loop's scope, like its body
        run.steps += 1
        if run.steps > run.max_steps:
            raise LimitError(f"step limit reached ({run.max_steps} steps)")
        yield


def invoke(run: Run, fn: UserFunction, args: list):
    """Call a user function in a fresh scope."""
    if len(args) != len(fn.params):
        raise EvalError(f"function {fn.name} takes {len(fn.params)} argument(s), got {len(args)}")
    if run.call_depth >= MAX_DEPTH:
        raise LimitError(f"recursion limit reached (more than {MAX_DEPTH} nested calls)")
    saved = (run.scope, run.in_function, run.in_loop, run.loop_depth)
    run.scope = dict(zip(fn.params, args))
    run.in_function, run.in_loop, run.loop_depth = True, False, 0
    run.call_depth += 1
    try:
        c = fn.body(run)
        result = run.retval if c == RETURN else None
        run.retval = None
        return result
    finally:
        run.scope, run.in_function, run.in_loop, run.loop_depth = saved
        run.call_depth -= 1


def _function_value(run, fn):
    return Function(fn.name, len(fn.params), lambda args: invoke(run, fn, args))


def _as_text(v, hook):
    if type(v) is not str:
        raise EvalError(f"the {hook} rule produced {type_name(v)}, not text")
    return v
