"""A cheap token scan of .world text before Lark parses it: size and nesting limits, and the words that open lines.

Lark's LALR parser keeps deep nesting on its own stack, but 50,000 brackets
cost seconds of parsing (every bracket reduces through each precedence level),
and the tree they build is too deep for the recursive passes after it. One
linear pass rejects such text with a located diagnostic before Lark sees it:
brackets, signs and `if`/`let`/`fn` nested, or operators chained, more than
MAX_NESTING deep; string literals over MAX_STRING_CHARS; more than a spec's
share of tokens. The parser's depth check on the tree it builds stays the
authority on nesting (the scan cannot see every way to nest, e.g. call chains
`f()()()`); the scan only stops what would be expensive to parse. The words
that open lines are kept so that a syntax error can be blamed on a mistyped
section or block keyword.
"""
from __future__ import annotations

import re

import attrs

from worldspec.ast import Span
from worldspec.diagnostics import SpecError

MAX_NESTING = 100  # AST levels; every pass after parsing recurses once or a few times per level
MAX_TOKENS = 200_000  # a spec with everything it includes; AlienCode has about 8,000
MAX_STRING_CHARS = 256_000  # one string literal; AlienCode's longest manual text is a few kB

NESTING_MESSAGE = f"this expression nests more than {MAX_NESTING} levels deep"
NESTING_HINT = (f"Brackets, signs and chained operators nest at most {MAX_NESTING} deep; "
                "name a part with `let` or a `def`.")

_TOKEN = re.compile(r'''
    (?P<string>"""[\s\S]*?"""|"[^"\\\n]*(?:\\.[^"\\\n]*)*")
  | (?P<skip>[ \t\r\f\v]+|\#[^\n]*)
  | (?P<newline>\n)
  | (?P<open>[\[({])
  | (?P<close>[\])}])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<arrow>=>|->|\.\.)
  | (?P<op>\*\*|//|<<|>>|==|!=|<=|>=|[-+*/%<>&|^])
  | (?P<sep>[,:=])
  | (?P<other>.)
''', re.VERBOSE)
# words that act as operators, open a construct that nests to the expression's end, or only join its parts
_WORD_KINDS = {"and": "op", "or": "op", "if": "opener", "let": "opener", "fn": "opener",
               "then": "keyword", "else": "keyword", "in": "keyword"}
_OPERANDS = ("word", "number", "string", "close")
_SURROGATE = re.compile("[\ud800-\udfff]")

@attrs.frozen
class Head:
    """A word that is the first token on its line, with the bracket depth it stands at."""

    word: str
    offset: int
    line: int
    col: int
    depth: int


def scan(text: str, file: str, max_tokens: int = MAX_TOKENS, total: int | None = None) -> tuple[list[Head], int]:
    """The line-opening words and the token count of text; a SpecError where a limit is passed. TOTAL, when
    text is one file of a spec that shares MAX_TOKENS with its includes, is the limit the message names
    (max_tokens is then what the files read before left of it)."""
    lone = None if text.isascii() else _SURROGATE.search(text)
    if lone:  # only text handed over in-process can hold one: files are decoded strictly
        line = text.count("\n", 0, lone.start()) + 1
        col = lone.start() - text.rfind("\n", 0, lone.start())
        raise SpecError(Span(file, line, col), f"the text holds a lone surrogate ({ascii(lone.group())[1:-1]}), "
                        "which is not a character", "Text must be valid Unicode.")
    heads: list[Head] = []
    depth, prefix, count = 0, 0, 0
    # per open bracket, since the last separator: binary operators chained, and `if`/`let`/`fn` opened
    levels = [[0, 0]]
    line, line_start, first, prev_operand = 1, 0, True, False
    for m in _TOKEN.finditer(text):
        kind, tok = m.lastgroup, m.group()
        if kind == "skip":
            continue
        if kind == "newline":
            line, line_start, first = line + 1, m.end(), True
            continue
        if tok == '"':
            break  # a string that never closes: Lark reports it where it starts
        count += 1
        col = m.start() - line_start + 1
        if count > max_tokens:
            said = "the spec has" if total is None else "the spec with its includes has"
            raise SpecError(Span(file, line, col), f"{said} more than {total or max_tokens:,} tokens",
                            "Worlds are far smaller (AlienCode has about 8,000); is this the right file?")
        if kind == "word" and first:
            heads.append(Head(tok, m.start(), line, col, depth))
        first = False
        if kind == "string":
            if len(tok) > MAX_STRING_CHARS:
                raise SpecError(Span(file, line, col), f"this string is longer than {MAX_STRING_CHARS:,} characters",
                                "Manual text and programs are a few kB; split or shorten it.")
            breaks = tok.count("\n")
            if breaks:
                line, line_start = line + breaks, m.start() + tok.rindex("\n") + 1
        kind = _WORD_KINDS.get(tok, kind)
        prefix = prefix + 1 if tok in ("-", "not") else 0
        if kind == "open":
            depth += 1
            levels.append([0, 0])
        elif kind == "close" and len(levels) > 1:
            depth -= 1
            levels.pop()
        level = levels[-1]
        if kind == "op":
            level[0] += 1
        elif kind == "opener":
            level[1] += 1
        elif tok == "," or (kind in _OPERANDS and prev_operand):  # the next expression starts
            level[:] = [0, 0]
        elif kind in ("sep", "arrow"):
            level[0] = 0
        prev_operand = kind in _OPERANDS and tok != "not"
        if depth + prefix + level[1] > MAX_NESTING or level[0] > MAX_NESTING:
            raise SpecError(Span(file, line, col), NESTING_MESSAGE, NESTING_HINT)
    return heads, count
