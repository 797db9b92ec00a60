"""A world's program surface: its keyword map turned into a Lark LALR grammar.

The kernel's statement forms are fixed (assign, output, if/elif/else, for,
while, break, continue, function, return); a world spells them with templates
such as "SET {name} AS {expr}". The grammar is generated once per world and
parsed with Lark's Indenter for indentation blocks.
"""
from __future__ import annotations

import re

import attrs
from lark import Lark
from lark.exceptions import LarkError
from lark.indenter import Indenter

from worldspec.diagnostics import SpecError, did_you_mean

DEFAULTS = {
    "assign": "{name} = {expr}", "output": "print", "if": "if {expr}:", "elif": "elif {expr}:",
    "else": "else:", "for": "for {name} in {expr}:", "while": "while {expr}:", "break": "break",
    "continue": "continue", "function": "def {name}({params}):", "return": "return {expr}",
    "true": "true", "false": "false", "none": "none", "index": "off",
}
PLACEHOLDERS = {"assign": {"name", "expr"}, "if": {"expr"}, "elif": {"expr"}, "else": set(),
                "for": {"name", "expr"}, "while": {"expr"}, "function": {"name", "params"},
                "return": {"expr"}}
WORD_KEYS = ("output", "break", "continue", "true", "false", "none")

_PUNCT = {"(": '"("', ")": '")"', ":": '":"', ",": '","', "[": '"["', "]": '"]"'}
_TOKEN = re.compile(r"\{name\}|\{expr\}|\{params\}|[A-Za-z_][A-Za-z0-9_]*|:=|->|<-|[^\sA-Za-z0-9_]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


class ProgramIndenter(Indenter):
    """Indentation blocks for the generated grammar (brackets continue a line)."""

    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB"]
    CLOSE_PAREN_types = ["RPAR", "RSQB"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 4


@attrs.frozen
class Surface:
    """The world's spelling of the kernel, and its generated parser."""

    words: tuple[tuple[str, str], ...]  # key -> template or keyword
    keywords: frozenset[str]
    grammar: str = attrs.field(repr=False)
    parser: Lark = attrs.field(repr=False, eq=False)

    def word(self, key: str) -> str:
        """The template or keyword for one statement form or literal."""
        return dict(self.words)[key]

    def has(self, key: str) -> bool:
        """Whether the world has this statement form (not switched off)."""
        return dict(self.words).get(key, "") not in ("", "off")

    def render(self, key: str, **parts: str) -> str:
        """Write one statement form in the world's spelling (for generators)."""
        out = self.word(key)
        for k, v in parts.items():
            out = out.replace("{" + k + "}", v)
        return out


def _template(key: str, text: str, span) -> tuple[list[str], set[str]]:
    parts, words = [], set()
    pos = 0
    for m in _TOKEN.finditer(text):
        if text[pos:m.start()].strip():
            raise SpecError(span, f"cannot read the {key} template {text!r}", "Use words, {name}, "
                            "{expr}, {params} and punctuation separated as in \"SET {name} AS {expr}\".")
        pos = m.end()
        tok = m.group()
        if tok == "{name}":
            parts.append("NAME")
        elif tok == "{expr}":
            parts.append("expr")
        elif tok == "{params}":
            parts.append("[params]")
        elif _WORD.match(tok):
            parts.append(f'"{tok}"')
            words.add(tok)
        elif tok in _PUNCT:
            parts.append(_PUNCT[tok])
        else:
            parts.append('"' + tok.replace("\\", "\\\\").replace('"', '\\"') + '"')
    placeholders = {p for p in ("name", "expr", "params") if "{" + p + "}" in text}
    if key in PLACEHOLDERS and placeholders != PLACEHOLDERS[key]:
        want = ", ".join("{" + p + "}" for p in sorted(PLACEHOLDERS[key])) or "no placeholders"
        raise SpecError(span, f"the {key} template {text!r} must contain {want}",
                        f"For example: {DEFAULTS[key]!r}.")
    if not words and not any(p.startswith('"') for p in parts):
        raise SpecError(span, f"the {key} template {text!r} has no keyword",
                        "A statement form needs a word or a symbol of its own, as in \"{name} = {expr}\".")
    return parts, words


def _check_distinct(words: dict, spans: dict, span) -> None:
    """Two statement forms may not open with the same word (the grammar could not tell them apart)."""
    first: dict[str, str] = {}
    for key, text in words.items():
        if key == "index" or not text or text == "off":
            continue
        m = _TOKEN.search(text)
        head = m.group() if m else text
        if head.startswith("{"):
            continue
        if head in first and not {key, first[head]} <= {"if", "elif"}:
            raise SpecError(spans.get(key, spans.get(first[head], span)),
                            f"{key} and {first[head]} both start with {head!r}",
                            "Give each statement form a keyword of its own.")
        first[head] = key


def build_surface(entries, span) -> Surface:
    """Generate the program grammar from a world's syntax entries."""
    words = dict(DEFAULTS)
    spans = {}
    for e in entries:
        if e.key not in DEFAULTS:
            raise SpecError(e.span, f"unknown syntax entry {e.key!r}",
                            (did_you_mean(e.key, DEFAULTS).strip() + " ") + "Known entries: "
                            + ", ".join(DEFAULTS) + ".")
        words[e.key] = e.value
        spans[e.key] = e.span
    grammar, keywords = generate_grammar(words, spans, span)
    try:
        parser = program_parser(grammar)
    except LarkError as e:  # a grammar collision is the world author's to fix
        raise ambiguity(words, spans, span, e) from None
    return Surface(tuple(words.items()), frozenset(keywords), grammar, parser)


def program_parser(grammar: str) -> Lark:
    """The LALR parser of a generated grammar; strict: any conflict or terminal collision raises."""
    return Lark(grammar, parser="lalr", postlex=ProgramIndenter(), propagate_positions=True,
                maybe_placeholders=True, strict=True)


def ambiguity(words: dict, spans: dict, span, error: LarkError) -> SpecError:
    """The error for a syntax block whose grammar Lark refuses, at the entry that causes it: the
    last entry whose default spelling makes the grammar work."""
    why = f"Lark says: {str(error).splitlines()[0]}."
    for key in reversed(list(spans)):
        trial = {**words, key: DEFAULTS[key]}
        try:
            program_parser(generate_grammar(trial, spans, span)[0])
        except (SpecError, LarkError):
            continue
        return SpecError(spans[key], f"the {key} form {words[key]!r} makes the syntax ambiguous with the "
                         "other statement forms", f"{why} Give it a keyword of its own, e.g. {DEFAULTS[key]!r}.")
    return SpecError(span, "the syntax block does not give an unambiguous language",
                     f"{why} Make each statement start with its own keyword.")


def generate_grammar(words: dict, spans: dict, span) -> tuple[str, set[str]]:
    """The Lark grammar of a world's spelling, and its keywords."""
    _check_distinct(words, spans, span)
    keywords: set[str] = set()
    seq: dict[str, str] = {}
    for key in PLACEHOLDERS:
        if not words.get(key) or words[key] == "off":
            continue
        parts, kw = _template(key, words[key], spans.get(key, span))
        keywords |= kw
        seq[key] = " ".join(parts)
    for key in WORD_KEYS:
        w = words[key]
        if not _WORD.match(w):
            raise SpecError(spans.get(key, span), f"the {key} keyword {w!r} must be a single word",
                            f"For example: {DEFAULTS[key]!r}.")
        keywords.add(w)
    q = lambda w: '"' + w + '"'  # noqa: E731
    simple = ["assign", "output"]
    lines = [
        "start: _NL* _stmt*",
        "_stmt: _simple _NL | _compound",
        f"assign: {seq['assign']}",
        f"output: {q(words['output'])} \"(\" [args] \")\"",
        "expr_stmt: expr",
    ]
    compound = ["if_", "for_"]
    lines.append(f"if_: {seq['if']} suite {'elif_* ' if 'elif' in seq else ''}[else_]")
    if "elif" in seq:
        lines.append(f"elif_: {seq['elif']} suite")
    lines.append(f"else_: {seq['else']} suite")
    lines.append(f"for_: {seq['for']} suite")
    if "while" in seq:
        compound.append("while_")
        lines.append(f"while_: {seq['while']} suite")
    if "function" in seq:
        compound.append("fndef")
        lines.append(f"fndef: {seq['function']} suite")
        lines.append('params: NAME ("," NAME)*')
    if "return" in seq:
        simple.append("return_")
        lines.append(f"return_: {seq['return']}")
    for key in ("break", "continue"):
        if words.get(key):
            simple.append(key + "_")
            lines.append(f"{key}_: {q(words[key])}")
    simple.append("expr_stmt")
    lines.append("_simple: " + " | ".join(simple))
    lines.append("_compound: " + " | ".join(compound))
    lines.append("suite: _NL _INDENT _stmt+ _DEDENT")
    postfix = ["atom"]
    if words["index"] == "on":
        postfix += ['postfix "[" expr "]" -> index', 'postfix "[" [expr] ":" [expr] "]" -> slice']
    lines.append("?expr: postfix")
    lines.append("?postfix: " + "\n    | ".join(postfix))
    atoms = ["INT -> int", "STRING -> str", f"{q(words['true'])} -> true",
             f"{q(words['false'])} -> false", "NAME -> var", 'NAME "(" [args] ")" -> call',
             '"(" expr ")"']
    if words.get("none"):
        atoms.insert(4, f"{q(words['none'])} -> none")
    lines.append("?atom: " + "\n    | ".join(atoms))
    lines.append('args: expr ("," expr)*')
    lines += [
        "NAME: /[A-Za-z_][A-Za-z0-9_]*/",
        "INT: /-?[0-9]+/",
        r'STRING: /"(?:[^"\\\n]|\\.)*"/',
        # A comment belongs to the line break after it, so a comment line (at any indentation)
        # and blank lines are one break: the indenter reads the indentation after the last one.
        r"_NL: /(?:#[^\n]*)?(?:\r?\n[\t \f]*(?:#[^\n]*)?)+/",
        r"%ignore /[\t \f]+/",
        r"%ignore /\\[\t \f]*\r?\n/",
        "%declare _INDENT _DEDENT",
    ]
    return "\n".join(lines) + "\n", keywords
