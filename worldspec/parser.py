"""Parse .world text into the Spec AST (syntax only; meaning is checked later).

Untrusted text passes three gates before it becomes AST: files are read by
worldspec.sources (regular files inside the world's folder, size-capped,
UTF-8), text is scanned by worldspec.scan (nesting, string and token limits),
and the tree is transformed without recursion, checking its depth and the size
of every number, so that any spec ends in an AST or a located SpecError.
"""
from __future__ import annotations

import functools
import math
import os
import re
import textwrap

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from worldspec import ast
from worldspec.diagnostics import SpecError, SpecErrors, SpecWarning, did_you_mean, remember_source
from worldspec.grammar_tables import spec_parser
from worldspec.scan import MAX_NESTING, MAX_TOKENS, NESTING_HINT, NESTING_MESSAGE, Head, scan
from worldspec.sources import MAX_SOURCE_BYTES, folder_of, is_inside, read_source
from worldspec.values import MAX_INT_BITS

MAX_INCLUDE_DEPTH = 8
MAX_INCLUDES = 256  # includes reached in all (one reached twice counts twice); worlds/ has 21
MAX_NUMBER_CHARS = 100  # a 256-bit integer has 78 digits
MAX_SEED = 2**63 - 1
MAX_VERSION = 1_000_000
MAX_BUDGET = 100_000  # any budget entry: rounds, calls, units, characters

# The editions of the spec language (docs/language.md, "Changes by version"). A world states its own
# with a `language N` header line; a world without one is read as the second edition, which every
# world written before the line existed is. Strictness added by a later edition is an error in a world
# that declares it and a warning in an older one, so a world that compiled once still compiles.
LANGUAGES = (2, 3)
OLDEST_LANGUAGE = 2  # what a world with no `language` line is read as
NEWEST_LANGUAGE = 3  # what `worldspec new` writes, and what the docs teach
ESCAPE_HINT = ('Strings know the escapes \\n, \\t, \\" and \\\\ (a backslash). For another character '
               'write chr(CODE) in an expression, e.g. "line" + chr(13) for a carriage return, or the '
               'character itself.')

# Words that open a section (at the top level) or a line inside a block: a
# syntax error under a word close to one of these is blamed on that word.
SECTION_WORDS = ("world", "language", "kind", "seed", "summary", "include", "param", "def", "syntax", "base", "rule",
                 "herring", "manual", "example", "task", "budget")
BLOCK_WORDS = ("op", "hook", "statement", "equation", "program", "prompt", "input", "case", "expect",
               "solution", "naive", "function", "predict", "tolerance", "unit_cost")

# Terminal names as a world author would say them.
_TERMINAL_WORDS = {
    "NAME": "a name", "INT": "an integer", "FLOAT": "a number", "STRING": "a string",
    "LONG_STRING": "a string", "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('",
    "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "COMMA": "','", "EQUAL": "'='",
    "COLON": "':'", "LABEL": "a label", "OPKIND": "'op' or 'hook'", "$END": "the end of the file",
}

# Tree nodes that become one level of a meta-language expression.
_NESTING_RULES = frozenset({"list_lit", "map_lit", "call", "binop", "compare", "neg", "not_", "and_", "or_",
                            "if_", "let_", "lambda_"})


@functools.cache
def _parser() -> Lark:
    return spec_parser()  # shipped tables where they match spec.lark (worldspec/grammar_tables.py)


def _span(file: str, meta_or_token) -> ast.Span:
    m = meta_or_token
    if isinstance(m, Token):
        return ast.Span(file, m.line or 0, m.column or 0, m.end_line or 0, m.end_column or 0)
    if getattr(m, "empty", False):
        return ast.Span(file, 0, 0)
    return ast.Span(file, m.line, m.column, m.end_line, m.end_column)


def unquote(tok: str) -> str:
    """A string token's value: escapes replaced; a triple-quoted block dedented."""
    if tok.startswith('"""'):
        body = tok[3:-3]
        if body.startswith("\n"):
            body = body[1:]
        return textwrap.dedent(body).rstrip() + ("\n" if "\n" in body.rstrip() else "")
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), tok[1:-1])


_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _bound_hint(what: str, limit: int) -> str:
    if limit:
        return f"A {what} is at most {limit:,}."
    return f"Integers in a spec fit in {MAX_INT_BITS} bits (values beyond that are an error when a world runs)."


class _ToAst:
    """Lark tree -> AST nodes; sections come out as tagged tuples.

    Each public method is named for a grammar rule and takes a node's meta and
    its transformed children, like a lark Transformer with meta (helpers start
    with `_`, which no rule name in a tree can). `transform` walks the tree with
    its own stack, so a tree of any depth is checked against MAX_NESTING
    instead of overflowing Python's.
    """

    def __init__(self, file: str, escapes: list | None = None):
        self._file = file
        # unknown escapes found, (span, escape): whether each is an error or a warning depends on the
        # world's `language` line, which may come after the string (parse_spec decides)
        self._escapes = escapes

    def transform(self, root: Tree):
        """The AST of a parse tree; a SpecError where an expression nests too deeply."""
        # frame: [tree, its children still to visit, transformed children, deepest child]
        frames = [[root, iter(root.children), [], 0]]
        while True:
            tree, todo, done, _ = frame = frames[-1]
            for child in todo:
                if isinstance(child, Tree):
                    frames.append([child, iter(child.children), [], 0])
                    break
                done.append(child)
            else:
                frames.pop()
                depth = frame[3] + (tree.data in _NESTING_RULES)
                if depth > MAX_NESTING:
                    raise SpecError(self._sp(tree.meta), NESTING_MESSAGE, NESTING_HINT)
                method = getattr(self, tree.data, None)
                value = method(tree.meta, done) if method else Tree(tree.data, done, tree.meta)
                if not frames:
                    return value
                parent = frames[-1]
                parent[2].append(value)
                parent[3] = max(parent[3], depth)

    def _sp(self, meta) -> ast.Span:
        return _span(self._file, meta)

    def _number(self, tok: Token, what: str = "integer literal", limit: int = 0) -> int | float:
        """An INT or FLOAT token's value, refused with a located message when it is too large."""
        text, at = str(tok), _span(self._file, tok)
        if tok.type == "FLOAT":
            value = float(text)  # linear in the digits, unlike int() (which Python caps at 4,300)
            if not math.isfinite(value):
                raise SpecError(at, "this number is too large", "Numbers in a spec are at most about 1e308.")
            return value
        if len(text.lstrip("0")) > MAX_NUMBER_CHARS:
            raise SpecError(at, f"this {what} is too large", _bound_hint(what, limit))
        value = int(text)
        if limit and value > limit:
            raise SpecError(at, f"this {what} is too large (at most {limit:,})", _bound_hint(what, limit))
        if value >> MAX_INT_BITS:
            raise SpecError(at, f"this {what} is too large", _bound_hint(what, limit))
        return value

    # strings and tokens
    def string(self, meta, c):
        tok = c[0]
        if tok.type == "STRING":
            for unknown in (m for m in _ESCAPE.finditer(tok) if m.group(1) not in _ESCAPES):
                # "\ud800" would silently read as "ud800"
                at = ast.Span(self._file, tok.line, tok.column + unknown.start())
                if self._escapes is None:  # a lone expression has no language line: the newest rules
                    raise SpecError(at, f"unknown escape '{unknown.group()}' in a string", ESCAPE_HINT)
                self._escapes.append((at, unknown.group()))
        return unquote(str(tok))

    def int_lit(self, meta, c):
        return ast.Const(self._number(c[0]), span=self._sp(meta))

    float_lit = int_lit

    def str_lit(self, meta, c):
        return ast.Const(c[0], span=self._sp(meta))

    def true_lit(self, meta, c):
        return ast.Const(True, span=self._sp(meta))

    def false_lit(self, meta, c):
        return ast.Const(False, span=self._sp(meta))

    def none_lit(self, meta, c):
        return ast.Const(None, span=self._sp(meta))

    def var(self, meta, c):
        return ast.Var(str(c[0]), span=_span(self._file, c[0]))

    def list_lit(self, meta, c):
        return ast.ListExpr(tuple(c[0] or ()), span=self._sp(meta))

    def map_lit(self, meta, c):
        return ast.MapExpr(tuple(c[0] or ()), span=self._sp(meta))

    def pairs(self, meta, c):
        return list(c)

    def pair(self, meta, c):
        return (c[0], c[1])

    def args(self, meta, c):
        return list(c)

    def names(self, meta, c):
        return [str(t) for t in c]

    def call(self, meta, c):
        return ast.Call(c[0], tuple(c[1] or ()), span=self._sp(meta))

    def binop(self, meta, c):
        return ast.BinOp(str(c[1]), c[0], c[2], span=_span(self._file, c[1]))

    def compare(self, meta, c):
        return ast.BinOp(str(c[1]), c[0], c[2], span=_span(self._file, c[1]))

    def neg(self, meta, c):
        if isinstance(c[0], ast.Const) and type(c[0].value) in (int, float):
            return ast.Const(-c[0].value, span=self._sp(meta))
        return ast.Neg(c[0], span=self._sp(meta))

    def not_(self, meta, c):
        return ast.Not(c[0], span=self._sp(meta))

    def and_(self, meta, c):
        return ast.And(c[0], c[1], span=self._sp(meta))

    def or_(self, meta, c):
        return ast.Or(c[0], c[1], span=self._sp(meta))

    def if_(self, meta, c):
        return ast.If(c[0], c[1], c[2], span=self._sp(meta))

    def let_(self, meta, c):
        return ast.Let(str(c[0]), c[1], c[2], span=self._sp(meta))

    def lambda_(self, meta, c):
        return ast.Lambda(tuple(c[0] or ()), c[1], span=self._sp(meta))

    # types and parameters
    def type(self, meta, c):
        return ast.Type(str(c[0]), c[1])

    def param_decl(self, meta, c):
        star, lazy, name, typ, default = c
        return ast.Param(str(name), typ or ast.ANY, star is not None, default, lazy is not None)

    def def_param(self, meta, c):
        return (str(c[0]), c[1])

    def def_params(self, meta, c):
        return list(c)

    def mutates(self, meta, c):
        return (str(c[0]), c[1])  # the parameter, and the value it is updated to (None: the result)

    def param_decls(self, meta, c):
        return tuple(c)

    def input_decl(self, meta, c):
        return ast.Input(str(c[0]), c[1])

    # sections
    def header_world(self, meta, c):
        return ("world", (c[0], self._number(c[1], "version", MAX_VERSION)), self._sp(meta))

    def header_language(self, meta, c):
        return ("language", self._number(c[0], "language version", MAX_VERSION), _span(self._file, c[0]))

    def header_kind(self, meta, c):
        return ("kind", str(c[0]), _span(self._file, c[0]))

    def header_seed(self, meta, c):
        return ("seed", self._number(c[0], "seed", MAX_SEED), self._sp(meta))

    def header_summary(self, meta, c):
        return ("summary", c[0], self._sp(meta))

    def include(self, meta, c):
        return ("include", c[0], self._sp(meta))

    def pick_range(self, meta, c):
        return ("range", (c[0], c[1]), c[2])

    def pick_list(self, meta, c):
        return ("list", (c[0],), c[1])

    def param_const(self, meta, c):
        return ("const", (c[0],), None)

    def param(self, meta, c):
        kind, args, default = c[1]
        return ("param", ast.ParamDecl(str(c[0]), kind, args, default, self._sp(meta)), self._sp(meta))

    def def_(self, meta, c):
        params = c[1] or []
        defaults = tuple(d for _, d in params if d is not None)
        if any(d is not None for _, d in params[:len(params) - len(defaults)]):
            raise SpecError(self._sp(meta), f"def {c[0]}: a parameter without a default follows one with a "
                            "default", "Put the optional parameters last: def f(x, y = 1) = ...")
        return ("def", ast.Def(str(c[0]), tuple(n for n, _ in params), c[2], self._sp(meta), defaults),
                self._sp(meta))

    def syntax_key(self, meta, c):
        return str(c[0])

    def syntax_entry(self, meta, c):
        value = c[1]
        if isinstance(value, Token) and value.type == "INT":
            value = self._number(value, "syntax value", MAX_BUDGET)
        return ast.SyntaxEntry(str(c[0]), str(value), self._sp(meta))

    def syntax(self, meta, c):
        return ("syntax", tuple(c), self._sp(meta))

    def rule_syntax(self, meta, c):
        return c[0]

    def base_line(self, meta, c):
        kind, name, params, ret, mutates, body, doc = c
        mutated, updates = mutates or ("", None)
        return ast.Definition(str(kind), str(name), params or (), ret or ast.ANY, body, doc,
                              _span(self._file, name), mutated, updates)

    def base(self, meta, c):
        return ("base", tuple(c), self._sp(meta))

    def override(self, meta, c):
        kind, name, params, ret, body = c
        return ast.Definition(str(kind), str(name), params or (), ret or ast.ANY, body, "",
                              _span(self._file, name))

    def statement(self, meta, c):
        return ("statement", c[0])

    def equation(self, meta, c):
        return ("equation", c[0], self._sp(meta))

    def rule(self, meta, c):
        rest = [x for x in c[3:] if x is not None]
        fields = {x[0]: x[1:] for x in rest if isinstance(x, tuple)}
        extra = tuple(x for x in rest if isinstance(x, ast.Field))
        equation, equation_span = fields.get("equation", ("", ast.NOSPAN))
        changes = c[2]  # a base line's override, or (program worlds) an operator entry of the syntax block
        syntax = changes if isinstance(changes, ast.SyntaxEntry) else None
        return ("rule", ast.RuleDecl(id=str(c[0]), title=c[1], override=None if syntax else changes,
                                     statement=fields.get("statement", ("",))[0], equation=equation,
                                     span=_span(self._file, c[0]), fields=extra, equation_span=equation_span,
                                     syntax=syntax),
                self._sp(meta))

    def gfield(self, meta, c):
        return ast.Field(str(c[0]), tuple(c[1]), _span(self._file, c[0]))

    bfield = gfield

    def gkey(self, meta, c):
        return c[0]  # the token itself: its position locates the item

    def generic_item(self, meta, c):
        item = ast.GenericItem(str(c[0]), tuple(c[1]), _span(self._file, c[0]))
        return ("generic", item, self._sp(meta))

    def generic_block(self, meta, c):
        key, name, note, *fields = c
        item = ast.GenericItem(str(key), (), _span(self._file, key), name=str(name), note=note or "", fields=tuple(fields))
        return ("generic", item, self._sp(meta))

    def example_program(self, meta, c):
        return ("program", c[0], self._sp(meta))

    def herring(self, meta, c):
        return ("herring", ast.HerringDecl(str(c[0]), str(c[1]), c[2], _span(self._file, c[0])),
                self._sp(meta))

    def manual(self, meta, c):
        return ("manual", c[0], self._sp(meta))

    def opkind(self, meta, c):
        return str(c[0])

    def label_key(self, meta, c):
        return str(c[0])

    def label(self, meta, c):
        return (str(c[0]), str(c[1]))

    def example(self, meta, c):
        labels = tuple(x for x in c[1:] if isinstance(x, tuple) and len(x) == 2)
        prompt = next(x for x in c[1:] if isinstance(x, str))
        program = next((x for x in c[1:] if isinstance(x, tuple) and len(x) == 3 and x[0] == "program"),
                       ("program", "", None))
        extra = tuple(x for x in c[1:] if isinstance(x, ast.Field))
        span = _span(self._file, c[0])
        return ("example", ast.ExampleDecl(id=str(c[0]), labels=labels, prompt=prompt, program=program[1], span=span,
                                           fields=extra, program_span=program[2] or span), self._sp(meta))

    def task(self, meta, c):
        tid = str(c[0])
        labels = tuple(x for x in c[1:] if isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], str))
        fields = [x for x in c[1:] if isinstance(x, tuple) and len(x) == 3]
        extra = tuple(x for x in c[1:] if isinstance(x, ast.Field))
        data: dict = {"cases": [], "solutions": []}
        spans = []
        for key, value, span in fields:
            spans.append((key, span))
            if key == "case":
                data["cases"].append(value)
            elif key == "solution":  # may be given several times: alternative references
                data["solutions"].append(value)
            else:
                data[key] = value
        decl = ast.TaskDecl(
            id=tid, labels=labels, prompt=data.get("prompt", ""), inputs=data.get("inputs", ()),
            cases=tuple(data["cases"]), expect=data.get("expect"),
            solution=(data["solutions"] or [""])[0], solutions=tuple(data["solutions"]),
            naive=data.get("naive", ""), function=data.get("function", ""),
            predict="predict" in data, program=data.get("program", ""),
            tolerance=data.get("tolerance", 0.0), span=_span(self._file, c[0]),
            field_spans=tuple(spans), extra=extra)
        return ("task", decl, self._sp(meta))

    def _field(key):  # noqa: N805 - a small factory for the task fields
        def f(self, meta, c):
            return (key, c[0] if c else True, self._sp(meta))
        return f

    prompt = _field("prompt")
    expect = _field("expect")
    solution = _field("solution")
    naive = _field("naive")
    program = _field("program")
    predict = _field("predict")

    def function(self, meta, c):
        return ("function", str(c[0]), self._sp(meta))

    def tolerance(self, meta, c):
        return ("tolerance", float(c[0].value), self._sp(meta))

    def inputs(self, meta, c):
        return ("inputs", tuple(c), self._sp(meta))

    def case(self, meta, c):
        return ("case", tuple(c), self._sp(meta))

    def budget_value(self, meta, c):
        return ("value", str(c[0]), self._number(c[1], "budget entry", MAX_BUDGET), _span(self._file, c[0]))

    def budget_cost(self, meta, c):
        return ("cost", str(c[0]), self._number(c[1], "unit cost", MAX_BUDGET), _span(self._file, c[0]))

    def budget(self, meta, c):
        return ("budget", tuple(c), self._sp(meta))


def _syntax_error(file: str, text: str, err: UnexpectedInput, heads: list[Head]) -> SpecError:
    offset = getattr(err, "pos_in_stream", None)
    blamed = _blame_keyword(file, heads, len(text) if offset is None else offset)
    if blamed:
        return blamed
    line, col = getattr(err, "line", 0) or 0, getattr(err, "column", 0) or 0
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if 0 <= err.pos_in_stream < len(text) else "?"
        msg = f"unexpected character {ch!r}"
        hint = "Check for a missing quote or a character that has no meaning in a .world file."
        if ch == "'":
            hint = "Strings are written in double quotes."
    elif isinstance(err, UnexpectedEOF):
        lines = text.rstrip("\n").split("\n")  # lines as Lark counts them: by "\n" only
        line, col = len(lines), len(lines[-1]) + 1
        msg = "the file ends in the middle of a section"
        hint = "Close every '{', '(' and '[' and finish the last line."
    elif isinstance(err, UnexpectedToken):
        tok = err.token
        got = "end of file" if tok.type == "$END" else repr(str(tok))
        expected = sorted({_TERMINAL_WORDS.get(e, repr(e.strip('"').lower()) if e.isupper() else e)
                           for e in err.expected})
        msg = f"unexpected {got}"
        if len(expected) <= 6:
            hint = "Expected " + ", ".join(expected) + "."
        else:
            hint = "This token cannot start or continue the construct here; compare with docs/language.md."
        hint = _misread_above(text, heads, line) or hint
    else:  # pragma: no cover - lark raises only the three kinds above
        msg, hint = str(err), ""
    return SpecError(ast.Span(file, line, col), msg, hint)


def _misread_above(text: str, heads: list[Head], line: int) -> str:
    """A hint for an error that a line above caused (newlines do not end an item, so the next line is
    read as its value): an item that has no value (`precompute` alone). "" otherwise."""
    above = [h for h in heads if h.depth == 0 and h.line < line]
    if not above:
        return ""
    lines = text.split("\n")
    first = above[-1].line
    prev = lines[first - 1].split("#", 1)[0].split()
    if len(prev) == 1 and first < line:
        return (f"Line {first}, `{prev[0]}`, has no value, so what follows was read as its value: "
                f"give it one on the same line.")
    return ""


@functools.cache
def _keywords() -> frozenset[str]:
    """Every word the grammar spells literally (section, field and meta-language keywords)."""
    return frozenset(t.pattern.value for t in _parser().terminals
                     if t.pattern.type == "str" and t.pattern.value.isidentifier())


def _blame_keyword(file: str, heads: list[Head], offset: int) -> SpecError | None:
    """A syntax error under a mistyped section or block keyword, reported at that word.

    The candidates are the words opening the error's line and then the lines
    of each enclosing block, innermost first: in `rulle R1 "t" {` + `op X(a) =
    a`, Lark stops at the `=` on the second line, but the mistake is `rulle`.
    """
    deepest = None  # the bracket depth the next enclosing head must stand at or above
    for head in reversed(heads):
        if head.offset > offset or (deepest is not None and head.depth > deepest):
            continue
        words = SECTION_WORDS if head.depth == 0 else BLOCK_WORDS
        if head.word not in _keywords():
            hint = did_you_mean(head.word, words).strip()
            if hint:
                what = "section" if head.depth == 0 else "keyword"
                return SpecError(ast.Span(file, head.line, head.col), f"unknown {what} {head.word!r}", hint)
        if head.depth == 0:
            return None
        deepest = head.depth - 1
    return None


class _Reader:
    """Parses one spec and its includes under one shared allowance of characters and tokens.

    Includes must stay inside `root`, the folder tree of the top-level file (None:
    no includes, as for a lone expression).
    """

    def __init__(self, root: str | None):
        self.root = root
        self.chars = MAX_SOURCE_BYTES
        self.tokens = MAX_TOKENS
        self.includes = MAX_INCLUDES  # charged before a file is read: a fan-out of includes costs no parse
        self.parsed: dict[tuple[str, str], tuple[int, list]] = {}  # (file, text) -> (tokens, its items)
        self.escapes: list[tuple[ast.Span, str]] = []  # unknown escapes in every file read, (where, escape)

    def tree(self, text: str, file: str, at: ast.Span, start: str = "start") -> Tree:
        """The parse tree of text, charged to the allowance; `at` is blamed when the allowance runs out."""
        self.charge(text, at)
        remember_source(file, text)
        heads, count = scan(text, file, self.tokens, None if self.tokens == MAX_TOKENS else MAX_TOKENS)
        self.tokens -= count
        try:
            return _parser().parse(text, start=start)
        except UnexpectedInput as err:
            raise _syntax_error(file, text, err, heads if start == "start" else []) from None

    def own_items(self, text: str, file: str, at: ast.Span) -> list[tuple]:
        """A file's own tagged section tuples (includes unresolved), charged to the allowance; a file
        included again is charged again but parsed once."""
        key = (file, text)
        if key not in self.parsed:
            tokens = self.tokens
            tree = self.tree(text, file, at)
            self.parsed[key] = (tokens - self.tokens, _ToAst(file, self.escapes).transform(tree).children)
            return self.parsed[key][1]
        count, items = self.parsed[key]
        self.charge(text, at)
        if count > self.tokens:
            raise SpecError(at, f"the spec with its includes has more than {MAX_TOKENS:,} tokens",
                            "Worlds are far smaller (AlienCode has about 8,000); is this the right file?")
        self.tokens -= count
        return items

    def charge(self, text: str, at: ast.Span) -> None:
        """Charge text's characters to the allowance; `at` is blamed when it runs out."""
        if len(text) > self.chars:
            raise SpecError(at, f"the spec (with its includes) is larger than {MAX_SOURCE_BYTES:,} characters",
                            "A .world file is a few hundred kB at most.")
        self.chars -= len(text)

    def items(self, text: str, file: str, at: ast.Span, depth: int = 0) -> list[tuple]:
        """A file's tagged section tuples, its includes' sections in their place."""
        out: list[tuple] = []
        for item in self.own_items(text, file, at):
            if item[0] != "include":
                out.append(item)
                continue
            path, span = self.include_path(item[1], file, item[2], depth), item[2]
            sub = read_source(path, span, f"included file {item[1]!r}",
                              "Include paths are relative to the including file.")
            for sub_item in self.items(sub, path, span, depth + 1):
                if sub_item[0] not in HEADER_TAGS:
                    out.append(sub_item)  # an included file's header describes itself, not the includer
        return out

    def include_path(self, rel: str, file: str, span: ast.Span, depth: int) -> str:
        """Where `include rel` in file leads; a SpecError unless that is a .world path inside the root."""
        if depth >= MAX_INCLUDE_DEPTH:
            raise SpecError(span, "includes nest too deeply", "An include probably includes itself.")
        self.includes -= 1
        if self.includes < 0:
            raise SpecError(span, f"the spec reaches more than {MAX_INCLUDES} includes in all (a file included "
                            "twice counts twice)", "Include each part once, from the top-level file.")
        if os.path.isabs(rel) or not rel.endswith(".world"):
            raise SpecError(span, f"cannot include {rel!r}",
                            "Include another .world file by a path relative to this one.")
        path = os.path.join(os.path.dirname(file), rel)
        # diagnostics quote the files they point into: a file outside the world's folder is never read
        if self.root is None or not is_inside(self.root, path):
            raise SpecError(span, f"cannot include {rel!r}: it lies outside the world's folder",
                            "A world includes .world files in its own folder or below it; "
                            "symbolic links may not lead out.")
        return path


HEADER_TAGS = ("world", "language", "kind", "seed", "summary")


def language_of(head: dict, file: str) -> int:
    """The edition a world is written in: its `language` line's, or the second edition's without one."""
    if "language" not in head:
        return OLDEST_LANGUAGE
    value, span = head["language"]
    if value not in LANGUAGES:
        raise SpecError(span, f"unknown language version {value}",
                        f"The editions are {', '.join(map(str, LANGUAGES[:-1]))} and {LANGUAGES[-1]}: write "
                        f"`language {NEWEST_LANGUAGE}` for a new world (a world without the line is read as language {OLDEST_LANGUAGE}); "
                        "see docs/language.md, \"Changes by version\".")
    return value


def escape_diagnostics(escapes, language: int) -> tuple[list[SpecError], list[SpecWarning]]:
    """Unknown string escapes as errors (language 3) or as warnings (older worlds: the escape reads as
    the character after the backslash, as the second edition read it)."""
    errors, warnings, seen = [], [], set()
    for span, escape in escapes:
        if (span.file, span.line, span.col) in seen:  # a file included twice is read once
            continue
        seen.add((span.file, span.line, span.col))
        if language >= 3:
            errors.append(SpecError(span, f"unknown escape '{escape}' in a string", ESCAPE_HINT))
        else:
            warnings.append(SpecWarning(
                span, f"unknown escape '{escape}' in a string, read as '{escape[1:]}' (language {language}; "
                "language 3 refuses it)", ESCAPE_HINT))
    return errors, warnings


def parse_expr(text: str, file: str = "<expr>") -> ast.Expr:
    """Parse one meta-language expression (tests, the REPL, equations' helpers)."""
    return _ToAst(file).transform(_Reader(None).tree(text, file, ast.Span(file, 1, 1), start="expr"))


def parse_spec(text: str, file: str = "<spec>") -> ast.Spec:
    """Parse a whole .world text into a Spec (includes resolved relative to file, inside its folder)."""
    reader = _Reader(folder_of(file))
    items = reader.items(text, file, ast.Span(file, 1, 1))
    head: dict = {}
    groups: dict[str, list] = {k: [] for k in ("param", "def", "syntax", "base", "rule", "herring",
                                               "manual", "example", "task", "budget", "generic")}
    for tag, value, span in items:
        if tag in HEADER_TAGS:
            if tag in head and span.file == file:
                raise SpecError(span, f"'{tag}' is declared twice", "Keep one header line of each kind.")
            head[tag] = (value, span)
        else:
            groups[tag].append(value)
    if "world" not in head:
        raise SpecError(ast.Span(file, 1, 1), "the file does not start with a world header",
                        'Begin with a line like: world "My World" version 1')
    (name, version), wspan = head["world"]
    language = language_of(head, file)
    errors, warnings = escape_diagnostics(reader.escapes, language)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise SpecErrors(errors)
    budget, costs, budget_spans = [], [], []
    for entries in groups["budget"]:
        for kind, key, value, span in entries:
            (costs if kind == "cost" else budget).append((key, value))
            budget_spans.append((key, span))
    return ast.Spec(
        file=file, name=name, version=version,
        kind=head.get("kind", ("program", None))[0], seed=head.get("seed", (0, None))[0],
        summary=head.get("summary", ("", None))[0],
        params=tuple(groups["param"]), defs=tuple(groups["def"]),
        syntax=tuple(e for entries in groups["syntax"] for e in entries),
        base=tuple(d for lines in groups["base"] for d in lines),
        rules=tuple(groups["rule"]), herrings=tuple(groups["herring"]),
        manual="\n\n".join(groups["manual"]), examples=tuple(groups["example"]),
        tasks=tuple(groups["task"]), budget=tuple(budget), unit_costs=tuple(costs), span=wspan,
        generic=tuple(groups["generic"]), budget_spans=tuple(budget_spans),
        kind_span=head.get("kind", (None, wspan))[1] or wspan, language=language, warnings=tuple(warnings))


def load_spec(path: str) -> ast.Spec:
    """Read and parse a .world file (a regular UTF-8 file of at most MAX_SOURCE_BYTES)."""
    return parse_spec(read_source(path, ast.Span(path, 1, 1), path), path)
