"""Parse .world text into the Spec AST (syntax only; meaning is checked later)."""
from __future__ import annotations

import functools
import os
import re
import textwrap

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from worldspec import ast
from worldspec.diagnostics import SpecError, remember_source

MAX_INCLUDE_DEPTH = 8

# Terminal names as a world author would say them.
_TERMINAL_WORDS = {
    "NAME": "a name", "INT": "an integer", "FLOAT": "a number", "STRING": "a string",
    "LONG_STRING": "a string", "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('",
    "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "COMMA": "','", "EQUAL": "'='",
    "COLON": "':'", "LABEL": "a label", "OPKIND": "'op' or 'hook'", "$END": "the end of the file",
}


@functools.cache
def _parser() -> Lark:
    return Lark.open("spec.lark", rel_to=__file__, parser="lalr", propagate_positions=True,
                     maybe_placeholders=True)


@functools.cache
def _expr_parser() -> Lark:
    return Lark.open("spec.lark", rel_to=__file__, parser="lalr", propagate_positions=True,
                     maybe_placeholders=True, start="expr")


def _span(file: str, meta_or_token) -> ast.Span:
    m = meta_or_token
    if isinstance(m, Token):
        return ast.Span(file, m.line or 0, m.column or 0, m.end_line or 0, m.end_column or 0)
    if getattr(m, "empty", False):
        return ast.Span(file, 0, 0)
    return ast.Span(file, m.line, m.column, m.end_line, m.end_column)


def unquote(tok: str) -> str:
    if tok.startswith('"""'):
        body = tok[3:-3]
        if body.startswith("\n"):
            body = body[1:]
        return textwrap.dedent(body).rstrip() + ("\n" if "\n" in body.rstrip() else "")
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), tok[1:-1])


_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree -> AST nodes; sections come out as tagged tuples."""

    def __init__(self, file: str):
        super().__init__()
        self.file = file

    def sp(self, meta) -> ast.Span:
        return _span(self.file, meta)

    # strings and tokens
    def string(self, meta, c):
        return unquote(str(c[0]))

    def int_lit(self, meta, c):
        return ast.Const(int(c[0]), span=self.sp(meta))

    def float_lit(self, meta, c):
        return ast.Const(float(c[0]), span=self.sp(meta))

    def str_lit(self, meta, c):
        return ast.Const(c[0], span=self.sp(meta))

    def true_lit(self, meta, c):
        return ast.Const(True, span=self.sp(meta))

    def false_lit(self, meta, c):
        return ast.Const(False, span=self.sp(meta))

    def none_lit(self, meta, c):
        return ast.Const(None, span=self.sp(meta))

    def var(self, meta, c):
        return ast.Var(str(c[0]), span=_span(self.file, c[0]))

    def list_lit(self, meta, c):
        return ast.ListExpr(tuple(c[0] or ()), span=self.sp(meta))

    def map_lit(self, meta, c):
        return ast.MapExpr(tuple(c[0] or ()), span=self.sp(meta))

    def pairs(self, meta, c):
        return list(c)

    def pair(self, meta, c):
        return (c[0], c[1])

    def args(self, meta, c):
        return list(c)

    def names(self, meta, c):
        return [str(t) for t in c]

    def call(self, meta, c):
        return ast.Call(c[0], tuple(c[1] or ()), span=self.sp(meta))

    def binop(self, meta, c):
        return ast.BinOp(str(c[1]), c[0], c[2], span=_span(self.file, c[1]))

    def compare(self, meta, c):
        return ast.BinOp(str(c[1]), c[0], c[2], span=_span(self.file, c[1]))

    def neg(self, meta, c):
        if isinstance(c[0], ast.Const) and type(c[0].value) in (int, float):
            return ast.Const(-c[0].value, span=self.sp(meta))
        return ast.Neg(c[0], span=self.sp(meta))

    def not_(self, meta, c):
        return ast.Not(c[0], span=self.sp(meta))

    def and_(self, meta, c):
        return ast.And(c[0], c[1], span=self.sp(meta))

    def or_(self, meta, c):
        return ast.Or(c[0], c[1], span=self.sp(meta))

    def if_(self, meta, c):
        return ast.If(c[0], c[1], c[2], span=self.sp(meta))

    def let_(self, meta, c):
        return ast.Let(str(c[0]), c[1], c[2], span=self.sp(meta))

    def lambda_(self, meta, c):
        return ast.Lambda(tuple(c[0] or ()), c[1], span=self.sp(meta))

    # types and parameters
    def type(self, meta, c):
        return ast.Type(str(c[0]), c[1])

    def param_decl(self, meta, c):
        star, name, typ = c
        return ast.Param(str(name), typ or ast.ANY, star is not None)

    def param_decls(self, meta, c):
        return tuple(c)

    def input_decl(self, meta, c):
        return ast.Input(str(c[0]), c[1])

    # sections
    def header_world(self, meta, c):
        return ("world", (c[0], int(c[1])), self.sp(meta))

    def header_kind(self, meta, c):
        return ("kind", str(c[0]), _span(self.file, c[0]))

    def header_seed(self, meta, c):
        return ("seed", int(c[0]), self.sp(meta))

    def header_summary(self, meta, c):
        return ("summary", c[0], self.sp(meta))

    def include(self, meta, c):
        return ("include", c[0], self.sp(meta))

    def pick_range(self, meta, c):
        return ("range", (c[0], c[1]), c[2])

    def pick_list(self, meta, c):
        return ("list", (c[0],), c[1])

    def param_const(self, meta, c):
        return ("const", (c[0],), None)

    def param(self, meta, c):
        kind, args, default = c[1]
        return ("param", ast.ParamDecl(str(c[0]), kind, args, default, self.sp(meta)), self.sp(meta))

    def def_(self, meta, c):
        return ("def", ast.Def(str(c[0]), tuple(c[1] or ()), c[2], self.sp(meta)), self.sp(meta))

    def syntax_key(self, meta, c):
        return str(c[0])

    def syntax_entry(self, meta, c):
        return ast.SyntaxEntry(str(c[0]), str(c[1]), self.sp(meta))

    def syntax(self, meta, c):
        return ("syntax", tuple(c), self.sp(meta))

    def base_line(self, meta, c):
        kind, name, params, ret, body, doc = c
        return ast.Definition(str(kind), str(name), params or (), ret or ast.ANY, body, doc,
                              _span(self.file, name))

    def base(self, meta, c):
        return ("base", tuple(c), self.sp(meta))

    def override(self, meta, c):
        kind, name, params, ret, body = c
        return ast.Definition(str(kind), str(name), params or (), ret or ast.ANY, body, "",
                              _span(self.file, name))

    def statement(self, meta, c):
        return ("statement", c[0])

    def equation(self, meta, c):
        return ("equation", c[0])

    def rule(self, meta, c):
        rest = [x for x in c[3:] if x is not None]
        fields = dict(x for x in rest if isinstance(x, tuple))
        extra = tuple(x for x in rest if isinstance(x, ast.Field))
        return ("rule", ast.RuleDecl(str(c[0]), c[1], c[2], fields.get("statement", ""),
                                     fields.get("equation", ""), _span(self.file, c[0]), extra), self.sp(meta))

    def gfield(self, meta, c):
        return ast.Field(str(c[0]), tuple(c[1]), _span(self.file, c[0]))

    bfield = gfield

    def gkey(self, meta, c):
        return c[0]  # the token itself: its position locates the item

    def generic_item(self, meta, c):
        item = ast.GenericItem(str(c[0]), "", "", tuple(c[1]), (), _span(self.file, c[0]))
        return ("generic", item, self.sp(meta))

    def generic_block(self, meta, c):
        key, name, note, *fields = c
        item = ast.GenericItem(str(key), str(name), note or "", (), tuple(fields), _span(self.file, key))
        return ("generic", item, self.sp(meta))

    def example_program(self, meta, c):
        return ("program", c[0], self.sp(meta))

    def herring(self, meta, c):
        return ("herring", ast.HerringDecl(str(c[0]), str(c[1]), c[2], _span(self.file, c[0])),
                self.sp(meta))

    def manual(self, meta, c):
        return ("manual", c[0], self.sp(meta))

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
        return ("example", ast.ExampleDecl(str(c[0]), labels, prompt, program[1], _span(self.file, c[0]), extra,
                                           program[2] or _span(self.file, c[0])), self.sp(meta))

    def task(self, meta, c):
        tid = str(c[0])
        labels = tuple(x for x in c[1:] if isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], str))
        fields = [x for x in c[1:] if isinstance(x, tuple) and len(x) == 3]
        extra = tuple(x for x in c[1:] if isinstance(x, ast.Field))
        data: dict = {"cases": []}
        spans = []
        for key, value, span in fields:
            spans.append((key, span))
            if key == "case":
                data["cases"].append(value)
            else:
                data[key] = value
        decl = ast.TaskDecl(
            id=tid, labels=labels, prompt=data.get("prompt", ""), inputs=data.get("inputs", ()),
            cases=tuple(data["cases"]), expect=data.get("expect"), solution=data.get("solution", ""),
            naive=data.get("naive", ""), function=data.get("function", ""),
            predict="predict" in data, program=data.get("program", ""),
            tolerance=data.get("tolerance", 0.0), span=_span(self.file, c[0]),
            field_spans=tuple(spans), extra=extra)
        return ("task", decl, self.sp(meta))

    def _field(key):  # noqa: N805 - a small factory for the task fields
        def f(self, meta, c):
            return (key, c[0] if c else True, self.sp(meta))
        return f

    prompt = _field("prompt")
    expect = _field("expect")
    solution = _field("solution")
    naive = _field("naive")
    program = _field("program")
    predict = _field("predict")

    def function(self, meta, c):
        return ("function", str(c[0]), self.sp(meta))

    def tolerance(self, meta, c):
        return ("tolerance", float(c[0].value), self.sp(meta))

    def inputs(self, meta, c):
        return ("inputs", tuple(c), self.sp(meta))

    def case(self, meta, c):
        return ("case", tuple(c), self.sp(meta))

    def budget_value(self, meta, c):
        return ("value", str(c[0]), int(c[1]), _span(self.file, c[0]))

    def budget_cost(self, meta, c):
        return ("cost", str(c[0]), int(c[1]), _span(self.file, c[0]))

    def budget(self, meta, c):
        return ("budget", tuple(c), self.sp(meta))


def _syntax_error(file: str, text: str, err: UnexpectedInput) -> SpecError:
    line, col = getattr(err, "line", 0) or 0, getattr(err, "column", 0) or 0
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if 0 <= err.pos_in_stream < len(text) else "?"
        msg = f"unexpected character {ch!r}"
        hint = "Check for a missing quote or a character that has no meaning in a .world file."
        if ch == "'":
            hint = "Strings are written in double quotes."
    elif isinstance(err, UnexpectedEOF):
        lines = text.splitlines() or [""]
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
    else:  # pragma: no cover - lark raises only the three kinds above
        msg, hint = str(err), ""
    return SpecError(ast.Span(file, line, col), msg, hint)


def parse_tree(text: str, file: str) -> Tree:
    remember_source(file, text)
    try:
        return _parser().parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(file, text, err) from None


def parse_expr(text: str, file: str = "<expr>") -> ast.Expr:
    """Parse one meta-language expression (tests, the REPL, equations' helpers)."""
    remember_source(file, text)
    try:
        tree = _expr_parser().parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(file, text, err) from None
    return _ToAst(file).transform(tree)


def parse_items(text: str, file: str, depth: int = 0) -> list[tuple]:
    """Parse a file into tagged section tuples, following includes."""
    items = _ToAst(file).transform(parse_tree(text, file)).children
    out: list[tuple] = []
    for item in items:
        if item[0] == "include":
            if depth >= MAX_INCLUDE_DEPTH:
                raise SpecError(item[2], "includes nest too deeply", "An include probably includes itself.")
            if os.path.isabs(item[1]) or not item[1].endswith(".world"):
                # a stranger's spec must not be able to show us other files through diagnostics
                raise SpecError(item[2], f"cannot include {item[1]!r}",
                                "Include another .world file by a path relative to this one.")
            path = os.path.join(os.path.dirname(file), item[1])
            try:
                with open(path, encoding="utf-8") as f:
                    sub = f.read()
            except OSError as e:
                raise SpecError(item[2], f"cannot read included file {item[1]!r}: {e.strerror}",
                                "Include paths are relative to the including file.") from None
            for sub_item in parse_items(sub, path, depth + 1):
                if sub_item[0] in ("world", "kind", "seed", "summary"):
                    continue  # an included file's header describes itself, not the includer
                out.append(sub_item)
        else:
            out.append(item)
    return out


def parse_spec(text: str, file: str = "<spec>") -> ast.Spec:
    """Parse a whole .world text into a Spec (includes resolved relative to file)."""
    items = parse_items(text, file)
    head: dict = {}
    groups: dict[str, list] = {k: [] for k in ("param", "def", "syntax", "base", "rule", "herring",
                                               "manual", "example", "task", "budget", "generic")}
    for tag, value, span in items:
        if tag in ("world", "kind", "seed", "summary"):
            if tag in head and span.file == file:
                raise SpecError(span, f"'{tag}' is declared twice", "Keep one header line of each kind.")
            head[tag] = (value, span)
        else:
            groups[tag].append(value)
    if "world" not in head:
        raise SpecError(ast.Span(file, 1, 1), "the file does not start with a world header",
                        'Begin with a line like: world "My World" version 1')
    (name, version), wspan = head["world"]
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
        kind_span=head.get("kind", (None, wspan))[1] or wspan)


def load_spec(path: str) -> ast.Spec:
    """Read and parse a .world file."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise SpecError(ast.Span(path, 1, 1), "the file is not UTF-8 text", "Save the spec as UTF-8.") from None
    return parse_spec(text, path)
