"""A world's program surface: its keyword map turned into a Lark LALR grammar.

The kernel's statement forms are fixed (assign, output, if/elif/else, for,
while, break, continue, pass, function, return, and the optional index
assignment, multiple assignment and multiple-name for); a world spells them with
templates such as "SET {name} AS {expr}". The grammar is generated once per
world and parsed with Lark's Indenter for indentation blocks. A template is
checked when declared: each placeholder at most once, the ones its form needs,
none directly after another, so a template that compiles is never misread.
A few entries are options of the kernel rather than spellings (index, float and
list literals, float printing, call depth).

Operators (third edition): `infix "+ ADD left 10"` and `prefix "- NEG 30"` declare
surface syntax for the world's own ops: `a + b` IS the call `ADD(a, b)`, so a rule that
perturbs ADD reaches every `+` in a program, and the manual, certification and rule
reports speak of ADD as before. Higher precedence binds tighter; an infix operator is
`left`, `right` or `none` (non-associative: `a < b < c` is a syntax error). The grammar
gets one level per precedence, loosest first; kernel.desugar turns the parsed operator
nodes into ordinary call nodes, in place and without recursion.

A rule may replace one operator entry (`syntax prefix "- NEG 50"`): the same symbol and op
with another precedence or associativity. Each world variant then parses with its own table
(`Surfaces.for_rules`): the manual's world with the syntax block's, the true world with every
replacement, a knockout without its rule's; one parser per distinct table, built once.
"""
from __future__ import annotations

import re

import attrs
from lark import Lark
from lark.exceptions import LarkError
from lark.indenter import Indenter

from worldspec.compiler.program.kernel import MAX_CALL_DEPTH
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.values import MAX_DEPTH

DEFAULTS = {
    "assign": "{name} = {expr}", "output": "print", "if": "if {expr}:", "elif": "elif {expr}:",
    "else": "else:", "for": "for {name} in {expr}:", "while": "while {expr}:", "break": "break",
    "continue": "continue", "function": "def {name}({params}):", "return": "return {expr}",
    "true": "true", "false": "false", "none": "none", "index": "off",
    "pass": "off", "set_index": "off", "assign_many": "off", "for_many": "off",
    "float": "off", "list": "off", "float_print": "rounded", "call_depth": str(MAX_DEPTH),
    "loop_else": "off", "break_many": "off", "map": "off",
}
# What `on` spells for the forms that are off unless a world asks for them.
ON = {"pass": "pass", "set_index": "{name}[{index}] = {expr}", "assign_many": "{names} = {exprs}",
      "for_many": "for {names} in {expr}:", "loop_else": "else:", "break_many": "break {count}"}
PLACEHOLDERS = {"assign": {"name", "expr"}, "if": {"expr"}, "elif": {"expr"}, "else": set(),
                "for": {"name", "expr"}, "while": {"expr"}, "function": {"name", "params"},
                "return": {"expr"}, "set_index": {"name", "index", "expr"}, "assign_many": {"names", "exprs"},
                "for_many": {"names", "expr"}, "loop_else": set(), "break_many": {"count"}}
WORD_KEYS = ("output", "break", "continue", "pass", "true", "false", "none")
REQUIRED = ("assign", "output", "if", "else", "for", "true", "false")  # forms a world cannot switch off
SWITCHES = ("index", "float", "list", "map")  # on | off
CHOICES = {"float_print": ("rounded", "repr")}
# Forms that may open with the same word: the generated grammar tells them apart (or Lark says it cannot).
SHARED_HEADS = ({"if", "elif"}, {"assign", "assign_many", "set_index"}, {"for", "for_many"}, {"else", "loop_else"},
                {"break", "break_many"})

OPERATOR_KEYS = ("infix", "prefix")  # entries that may appear many times, one operator each
ASSOCIATIVITY = ("left", "right", "none")
MAX_PRECEDENCE = 1000
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$|[-+*/%<>=!&|^~@$?.]{1,3}$")
_RESERVED_SYMBOLS = {"=", ":", ",", "(", ")", "[", "]", "#", '"', "."}

_PUNCT = {"(": '"("', ")": '")"', ":": '":"', ",": '","', "[": '"["', "]": '"]"', "{": '"{"', "}": '"}"'}
_SLOT = {"name": "NAME", "expr": "expr", "params": "[params]", "index": "index_at", "names": "names",
         "exprs": "exprs", "count": "INT"}
_TOKEN = re.compile(r"\{[A-Za-z_]*\}|[A-Za-z_][A-Za-z0-9_]*|:=|->|<-|[^\sA-Za-z0-9_]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


class ProgramIndenter(Indenter):
    """Indentation blocks for the generated grammar (brackets continue a line)."""

    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
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
    operators: tuple["Operator", ...] = ()

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


@attrs.frozen
class Operator:
    """`infix "+ ADD left 10"`: the symbol `+` written between two operands calls op ADD."""

    kind: str  # "infix" | "prefix"
    symbol: str
    op: str
    precedence: int
    assoc: str = "none"  # infix only
    span: object = attrs.field(default=None, eq=False, repr=False)

    def example(self) -> str:
        """How the manual writes it: `a + b`, `-a`, `not a`."""
        if self.kind == "prefix":
            return f"{self.symbol}{' ' if self.symbol[-1].isalnum() else ''}a"
        return f"a {self.symbol} b"


def read_operator(key: str, value: str, span) -> Operator:
    """One `infix`/`prefix` entry: `"SYMBOL OP [left|right|none] PRECEDENCE"` (prefix: no associativity)."""
    parts = value.split()
    form = '"+ ADD left 10"' if key == "infix" else '"- NEG 30"'
    want = 4 if key == "infix" else 3
    if len(parts) != want:
        raise SpecError(span, f"{key} {value!r} is not of the form {form}",
                        "Give the symbol, the op it calls, " + ("its associativity (left, right or none), "
                                                                if key == "infix" else "") +
                        "and its precedence (a whole number; higher binds tighter).")
    symbol, op = parts[0], parts[1]
    if not _SYMBOL.match(symbol) or symbol in _RESERVED_SYMBOLS:
        raise SpecError(span, f"{key} symbol {symbol!r} cannot be an operator",
                        "Use a word (and, mod) or one to three of the symbols - + * / % < > = ! & | ^ ~ @ $ ?; "
                        "`=`, `:`, `,`, `.`, brackets, `#` and quotes are taken by the statement forms.")
    if not _WORD.match(op):
        raise SpecError(span, f"{key} {value!r}: {op!r} is not an op name", f"For example: {form}.")
    assoc = parts[2] if key == "infix" else "none"
    if assoc not in ASSOCIATIVITY:
        raise SpecError(span, f"{key} {value!r}: associativity is left, right or none, not {assoc!r}",
                        f"For example: {form}.")
    level = parts[-1]
    if not level.isdigit() or not 0 <= int(level) <= MAX_PRECEDENCE:
        raise SpecError(span, f"{key} {value!r}: the precedence {level!r} is not a whole number from 0 to "
                        f"{MAX_PRECEDENCE}", "Higher binds tighter: `*` 20 over `+` 10, for example.")
    return Operator(key, symbol, op, int(level), assoc, span)


def check_operators(ops: list[Operator], span) -> None:
    """Operators of one precedence share an associativity; a symbol is declared once per kind."""
    seen: dict[tuple[str, str], Operator] = {}
    assoc: dict[int, Operator] = {}
    for o in ops:
        if (o.kind, o.symbol) in seen:
            raise SpecError(o.span or span, f"{o.kind} {o.symbol!r} is declared twice",
                            "Each symbol calls one op: keep one of the lines.")
        seen[o.kind, o.symbol] = o
        if o.kind == "infix":
            first = assoc.setdefault(o.precedence, o)
            if first.assoc != o.assoc:
                raise SpecError(o.span or span, f"infix {o.symbol!r} is {o.assoc} but {first.symbol!r}, of the same "
                                f"precedence {o.precedence}, is {first.assoc}",
                                "Operators of one precedence must group the same way: give them one "
                                "associativity or different precedences.")


def _quote(symbol: str) -> str:
    return '"' + symbol.replace("\\", "\\\\").replace('"', '\\"') + '"'


def operator_rules(ops: tuple[Operator, ...]) -> list[str]:
    """The expression levels of the grammar, loosest first, down to `postfix` (names infix_I, prefix_I)."""
    if not ops:
        return ["?expr: postfix"]
    levels = sorted({o.precedence for o in ops})
    names = [f"level_{p}" for p in levels] + ["postfix"]
    lines = [f"?expr: {names[0]}"]
    for i, p in enumerate(levels):
        here, tighter = names[i], names[i + 1]
        alts = []
        for k, o in enumerate(ops):
            if o.precedence != p:
                continue
            sym = _quote(o.symbol)
            if o.kind == "prefix":
                alts.append(f"{sym} {here} -> prefix_{k}")
            elif o.assoc == "left":
                alts.append(f"{here} {sym} {tighter} -> infix_{k}")
            elif o.assoc == "right":
                alts.append(f"{tighter} {sym} {here} -> infix_{k}")
            else:
                alts.append(f"{tighter} {sym} {tighter} -> infix_{k}")
        lines.append(f"?{here}: " + "\n    | ".join(alts + [tighter]))
    return lines


def _template(key: str, text: str, span) -> tuple[list[str], set[str]]:
    parts, words, slots = [], set(), []
    adjacent = ""  # the first two placeholders with nothing between them
    pos = 0
    previous_slot = False
    for m in _TOKEN.finditer(text):
        if text[pos:m.start()].strip():
            raise SpecError(span, f"cannot read the {key} template {text!r}", "Use words, placeholders "
                            "and punctuation separated as in \"SET {name} AS {expr}\".")
        pos = m.end()
        tok = m.group()
        if tok.startswith("{") and tok.endswith("}") and len(tok) > 1:
            slot = tok[1:-1]
            if slot not in _SLOT:
                raise SpecError(span, f"the {key} template {text!r} has an unknown placeholder {tok}",
                                (did_you_mean(slot, _SLOT).strip() + " ") + "Placeholders: "
                                + ", ".join("{" + p + "}" for p in _SLOT) + ".")
            if slot in slots:
                raise SpecError(span, f"the {key} template {text!r} uses {tok} twice",
                                "Each placeholder stands for one part of the statement: use it once.")
            if previous_slot and not adjacent:
                adjacent = f"{{{slots[-1]}}} and {tok}"
            slots.append(slot)
            parts.append(_SLOT[slot])
            previous_slot = True
            continue
        previous_slot = False
        if tok in ("#", '"'):
            raise SpecError(span, f"the {key} template {text!r} uses {tok!r}",
                            "`#` starts a comment and `\"` a string in programs; choose another symbol.")
        if _WORD.match(tok):
            parts.append(f'"{tok}"')
            words.add(tok)
        elif tok in _PUNCT:
            parts.append(_PUNCT[tok])
        else:
            parts.append('"' + tok.replace("\\", "\\\\").replace('"', '\\"') + '"')
    if key in PLACEHOLDERS and set(slots) != PLACEHOLDERS[key]:
        want = ", ".join("{" + p + "}" for p in sorted(PLACEHOLDERS[key])) or "no placeholders"
        example = ON.get(key, DEFAULTS[key])
        raise SpecError(span, f"the {key} template {text!r} must contain {want}", f"For example: {example!r}.")
    if not words and not any(p.startswith('"') for p in parts):
        raise SpecError(span, f"the {key} template {text!r} has no keyword",
                        "A statement form needs a word or a symbol of its own, as in \"{name} = {expr}\".")
    if adjacent:
        raise SpecError(span, f"in the {key} template {text!r}, {adjacent} follow each other directly",
                        "Put a word or a symbol between two placeholders, as in \"SET {name} AS {expr}\", so "
                        "that a program says where one ends.")
    if key == "return":  # a bare return gives none
        parts = ["[expr]" if p == "expr" else p for p in parts]
    return parts, words


def _check_distinct(words: dict, spans: dict, span) -> None:
    """Two statement forms may not open with the same word (the grammar could not tell them apart)."""
    first: dict[str, str] = {}
    for key, text in words.items():
        if key not in PLACEHOLDERS and key not in WORD_KEYS or not text or text == "off":
            continue
        m = _TOKEN.search(text)
        head = m.group() if m else text
        if head.startswith("{"):
            continue
        if head in first and not any({key, first[head]} <= shared for shared in SHARED_HEADS):
            raise SpecError(spans.get(key, spans.get(first[head], span)),
                            f"{key} and {first[head]} both start with {head!r}",
                            "Give each statement form a keyword of its own.")
        first.setdefault(head, key)


def _check_value(key: str, value: str, span) -> str:
    """An entry's value, checked (and `on` spelled out for the optional forms)."""
    if key in SWITCHES:
        if value not in ("on", "off"):
            raise SpecError(span, f"{key} is on or off, not {value!r}", f"Write: {key} on")
        return value
    if key in CHOICES:
        if value not in CHOICES[key]:
            raise SpecError(span, f"{key} is one of {', '.join(CHOICES[key])}, not {value!r}",
                            f"Write: {key} {CHOICES[key][-1]}")
        return value
    if key == "call_depth":
        if not value.isdigit() or not 1 <= int(value) <= MAX_CALL_DEPTH:
            raise SpecError(span, f"call_depth is a number of nested calls from 1 to {MAX_CALL_DEPTH:,}",
                            f"The default is {MAX_DEPTH}; recursive worlds may need about 1000.")
        return value
    if value == "off" and key in REQUIRED:
        raise SpecError(span, f"the {key} form cannot be switched off", f"Spell it, e.g. {DEFAULTS[key]!r}.")
    return ON.get(key, value) if value == "on" else value


def build_surface(entries, span) -> Surface:
    """Generate the program grammar from a world's syntax entries."""
    words = dict(DEFAULTS)
    spans = {}
    ops: list[Operator] = []
    for e in entries:
        if e.key in OPERATOR_KEYS:
            ops.append(read_operator(e.key, e.value, e.span))
            continue
        if e.key not in DEFAULTS:
            known = [*DEFAULTS, *OPERATOR_KEYS]
            raise SpecError(e.span, f"unknown syntax entry {e.key!r}",
                            (did_you_mean(e.key, known).strip() + " ") + "Known entries: " + ", ".join(known) + ".")
        words[e.key] = _check_value(e.key, e.value, e.span)
        spans[e.key] = e.span
    check_operators(ops, span)
    operators = tuple(ops)
    grammar, keywords = generate_grammar(words, spans, span, operators)
    try:
        parser = program_parser(grammar)
    except LarkError as e:  # a grammar collision is the world author's to fix
        raise ambiguity(words, spans, span, e, operators) from None
    return Surface(tuple(words.items()), frozenset(keywords), grammar, parser, operators)


@attrs.frozen
class SyntaxRule:
    """A rule's replacement of one operator entry of the syntax block (its symbol and op kept)."""

    rule: str
    index: int  # the position of the entry it replaces in the syntax block's operator table
    operator: Operator  # the entry in force with the rule


class Surfaces:
    """The surfaces of a world's variants: the syntax block's operator table with the entries replaced by
    the syntax rules in force. Shared by every variant; one parser per distinct table."""

    def __init__(self, base: Surface, changes: tuple[SyntaxRule, ...] = ()):
        self.base = base
        self.changes = changes
        self.by_rule = {c.rule: c for c in changes}
        self.by_table: dict[tuple, Surface] = {base.operators: base}
        self.by_applied: dict[tuple[str, ...], Surface] = {(): base}

    def table(self, applied) -> tuple[Operator, ...]:
        """The operator table with these rules in force."""
        ops = list(self.base.operators)
        for c in self.changes:
            if c.rule in applied:
                ops[c.index] = c.operator
        return tuple(ops)

    def for_rules(self, applied) -> Surface:
        """The surface of the variant with these rules in force (built on first use)."""
        applied = frozenset(applied)
        key = tuple(c.rule for c in self.changes if c.rule in applied)
        hit = self.by_applied.get(key)
        if hit is None:
            table = self.table(applied)
            hit = self.by_table.get(table)
            if hit is None:
                hit = self.by_table[table] = self.with_table(table)
            self.by_applied[key] = hit
        return hit

    def with_table(self, table: tuple[Operator, ...]) -> Surface:
        """The base surface with another operator table (a precedence change keeps every token)."""
        grammar, _ = generate_grammar(dict(self.base.words), {}, None, table)
        return attrs.evolve(self.base, grammar=grammar, parser=program_parser(grammar), operators=table)


def read_syntax_rule(rule_id: str, entry, base: Surface) -> SyntaxRule:
    """A rule's `syntax infix "..."`/`syntax prefix "..."` line, checked against the syntax block: an entry
    the block declares, with its op, and another precedence or associativity."""
    if entry.key not in OPERATOR_KEYS:
        raise SpecError(entry.span, f"rule {rule_id} replaces the syntax entry {entry.key!r}; a rule may replace "
                        "an operator entry only (infix or prefix)",
                        'Write the entry as the syntax block does, with another precedence: syntax prefix "- NEG 50". '
                        "The statement forms are the same in every variant of a world.")
    new = read_operator(entry.key, entry.value, entry.span)
    index = next((i for i, o in enumerate(base.operators) if (o.kind, o.symbol) == (new.kind, new.symbol)), None)
    if index is None:
        declared = [o.symbol for o in base.operators if o.kind == new.kind]
        raise SpecError(entry.span, f"rule {rule_id} replaces {new.kind} {new.symbol!r}, which the syntax block "
                        "does not declare", (did_you_mean(new.symbol, declared).strip() + " ").lstrip()
                        + f"A rule changes the precedence of a declared operator; the syntax block's {new.kind} "
                        f"symbols: {', '.join(declared) or 'none'}.")
    old = base.operators[index]
    if new.op != old.op:
        raise SpecError(entry.span, f"rule {rule_id} makes {new.kind} {new.symbol!r} call {new.op}; the syntax "
                        f"block's calls {old.op}", f"A syntax rule changes only the precedence and associativity: "
                        f"keep {old.op}. A rule on what {old.op} computes is an op line: op {old.op}(...) = ...")
    if (new.precedence, new.assoc) == (old.precedence, old.assoc):
        raise SpecError(entry.span, f"rule {rule_id} gives {new.kind} {new.symbol!r} the syntax block's own "
                        "precedence" + (" and associativity" if new.kind == "infix" else ""),
                        "A rule must change something: give another precedence"
                        + (" or associativity." if new.kind == "infix" else "."))
    return SyntaxRule(rule_id, index, new)


def check_syntax_rules(surfaces: Surfaces, variants, span) -> None:
    """Each variant's table is a grammar: one associativity per precedence, no conflict. An error stands at
    the entry of the rule that causes it: one that fails alone, else the last of the rules in force."""
    singles = [({c.rule}, False) for c in surfaces.changes]  # associativity alone: no parser for these
    for applied, build in singles + [(v, True) for v in variants]:
        blame = [c for c in surfaces.changes if c.rule in applied]
        if not blame:
            continue
        at = blame[-1].operator.span or span
        try:
            check_operators(list(surfaces.table(applied)), span)
            if build:
                surfaces.for_rules(applied)
        except SpecError as e:
            raise SpecError(at, f"with rule {blame[-1].rule}: {e.message}", e.hint) from None
        except LarkError as e:
            raise SpecError(at, f"with rule {blame[-1].rule} the operators make the syntax ambiguous",
                            f"Lark says: {str(e).splitlines()[0]}. Choose another precedence.") from None


def rank_table(table: tuple[Operator, ...]) -> tuple:
    """What a table's grammar depends on: each entry's op, rank among the precedences, associativity."""
    levels = {p: i for i, p in enumerate(sorted({o.precedence for o in table}))}
    return tuple((o.kind, o.symbol, o.op, levels[o.precedence], o.assoc if o.kind == "infix" else "") for o in table)


def syntax_disagreement(surfaces: Surfaces, applied, rule_id: str, text: str) -> str | None:
    """Where a stated entry (`- NEG 50`, `prefix "- NEG 50"`) groups otherwise than a syntax rule, or why it
    cannot be read; None when the operator table with it parses every program as the rule's does."""
    change = surfaces.by_rule[rule_id]
    o = change.operator
    words = text.strip().split(None, 1)
    if words and words[0] == "syntax":
        words = words[1].split(None, 1) if len(words) > 1 else []
    if words and words[0] == o.kind and len(words) > 1:
        words = [words[1]]
    entry = " ".join(words).strip().strip('"`').strip()
    try:
        stated = read_operator(o.kind, entry, None)
    except SpecError as e:
        return f"it cannot be read: {e.message}"
    if (stated.symbol, stated.op) != (o.symbol, o.op):
        return f"it states {stated.kind} {stated.symbol!r} calling {stated.op}; the rule is about {o.symbol!r} ({o.op})"
    true = surfaces.table(set(applied) | {rule_id})
    trial = tuple(stated if i == change.index else t for i, t in enumerate(true))
    if rank_table(trial) == rank_table(true):
        return None
    below = max((t.precedence for t in true if t.precedence < o.precedence), default=None)
    above = min((t.precedence for t in true if t.precedence > o.precedence), default=None)
    level = [t.symbol for t in true if t.precedence == o.precedence and t is not o]

    def named(p):
        return " ".join(dict.fromkeys(t.symbol for t in true if t.precedence == p))
    where = [f"looser than {named(above)}" if above is not None else "the tightest",
             f"tighter than {named(below)}" if below is not None else "the loosest"]
    if level:
        where.append(f"level with {' '.join(level)}")
    return (f"in the true table {o.kind} {o.symbol!r} binds {', '.join(where)}"
            + (f", grouping {o.assoc}" if o.kind == "infix" else "") + "; the stated entry groups otherwise")


def program_parser(grammar: str) -> Lark:
    """The LALR parser of a generated grammar; strict: any conflict or terminal collision raises."""
    return Lark(grammar, parser="lalr", postlex=ProgramIndenter(), propagate_positions=True,
                maybe_placeholders=True, strict=True)


def ambiguity(words: dict, spans: dict, span, error: LarkError, operators: tuple = ()) -> SpecError:
    """The error for a syntax block whose grammar Lark refuses, at the entry that causes it: an operator
    without which the grammar works, else the last entry whose default spelling makes it work."""
    why = f"Lark says: {str(error).splitlines()[0]}."
    for k in reversed(range(len(operators))):
        o = operators[k]
        try:
            program_parser(generate_grammar(words, spans, span, operators[:k] + operators[k + 1:])[0])
        except (SpecError, LarkError):
            continue
        return SpecError(o.span or span, f"the {o.kind} operator {o.symbol!r} makes the syntax ambiguous with the "
                         "statement forms or the other operators",
                         f"{why} Choose another symbol, or a statement keyword that is not an operator.")
    for key in reversed(list(spans)):
        trial = {**words, key: DEFAULTS[key]}
        try:
            program_parser(generate_grammar(trial, spans, span, operators)[0])
        except (SpecError, LarkError):
            continue
        return SpecError(spans[key], f"the {key} form {words[key]!r} makes the syntax ambiguous with the "
                         "other statement forms", f"{why} Give it a keyword of its own, e.g. {DEFAULTS[key]!r}.")
    return SpecError(span, "the syntax block does not give an unambiguous language",
                     f"{why} Make each statement start with its own keyword.")


def generate_grammar(words: dict, spans: dict, span, operators: tuple = ()) -> tuple[str, set[str]]:
    """The Lark grammar of a world's spelling (and operators), and its keywords."""
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
        if w == "off" and key not in REQUIRED:
            continue
        if not _WORD.match(w):
            raise SpecError(spans.get(key, span), f"the {key} keyword {w!r} must be a single word",
                            f"For example: {ON.get(key, DEFAULTS[key])!r}.")
        keywords.add(w)
    q = lambda w: '"' + w + '"'  # noqa: E731
    negates = any(o.kind == "prefix" and o.symbol == "-" for o in operators)
    simple = ["assign", "output"]
    lines = [
        "start: _NL* _stmt*",
        "_stmt: _simple _NL | _compound",
        f"assign: {seq['assign']}",
        f"output: {q(words['output'])} \"(\" [args] \")\"",
        "expr_stmt: expr",
    ]
    if "assign_many" in seq:
        simple.append("assign_many")
        lines.append(f"assign_many: {seq['assign_many']}")
    if "set_index" in seq:
        simple.append("set_index")
        head = 'NAME "[" index_at "]" '
        if seq["set_index"].startswith(head):
            # `xs[i] = v`: the target is read as an indexed expression (LALR cannot decide earlier
            # whether `xs[` opens an index or a statement); the kernel requires a variable there.
            lines.append(f'set_index: postfix "[" expr "]" {seq["set_index"][len(head):]} -> set_item')
        else:
            lines.append(f"set_index: {seq['set_index']}")
    compound = ["if_", "for_"]
    lines.append(f"if_: {seq['if']} suite {'elif_* ' if 'elif' in seq else ''}[else_]")
    if "elif" in seq:
        lines.append(f"elif_: {seq['elif']} suite")
    lines.append(f"else_: {seq['else']} suite")
    orelse = " [loop_else]" if "loop_else" in seq else ""  # runs when the loop was not broken
    if orelse:
        lines.append(f"loop_else: {seq['loop_else']} suite")
    lines.append(f"for_: {seq['for']} suite{orelse}")
    if "for_many" in seq:
        compound.append("for_many")
        lines.append(f"for_many: {seq['for_many']} suite{orelse}")
    if "while" in seq:
        compound.append("while_")
        lines.append(f"while_: {seq['while']} suite{orelse}")
    if "function" in seq:
        compound.append("fndef")
        lines.append(f"fndef: {seq['function']} suite")
        lines.append('params: NAME ("," NAME)*')
    if "return" in seq:
        simple.append("return_")
        lines.append(f"return_: {seq['return']}")
    for key in ("break", "continue", "pass"):
        if words.get(key) and words[key] != "off":
            simple.append(key + "_")
            lines.append(f"{key}_: {q(words[key])}")
    if "break_many" in seq:  # `break 2`: leaves that many loops at once
        simple.append("break_many")
        lines.append(f"break_many: {seq['break_many']}")
    if "set_index" in seq:
        lines.append("index_at: expr")
    if "assign_many" in seq or "for_many" in seq:
        lines.append('names: NAME ("," NAME)+')
    if "assign_many" in seq:
        lines.append('exprs: expr ("," expr)*')
    simple.append("expr_stmt")
    lines.append("_simple: " + " | ".join(simple))
    lines.append("_compound: " + " | ".join(compound))
    lines.append("suite: _NL _INDENT _stmt+ _DEDENT")
    postfix = ["atom"]
    if words["index"] == "on":
        postfix += ['postfix "[" expr "]" -> index', 'postfix "[" [expr] ":" [expr] "]" -> slice']
    lines += operator_rules(operators)
    keywords |= {o.symbol for o in operators if _WORD.match(o.symbol)}
    lines.append("?postfix: " + "\n    | ".join(postfix))
    atoms = ["INT -> int", "STRING -> str", f"{q(words['true'])} -> true",
             f"{q(words['false'])} -> false", "NAME -> var", 'NAME "(" [args] ")" -> call',
             '"(" expr ")"']
    if words.get("none") and words["none"] != "off":
        atoms.insert(4, f"{q(words['none'])} -> none")
    if words["float"] == "on":
        atoms.insert(1, "FLOAT -> float")
    if words["list"] == "on":
        atoms.append('"[" [args] "]" -> list')
    if words["map"] == "on":
        atoms.append('"{" [pairs] "}" -> map')
        lines += ['pairs: pair ("," pair)*', 'pair: expr ":" expr']
    lines.append("?atom: " + "\n    | ".join(atoms))
    lines.append('args: expr ("," expr)*')
    lines += [
        "NAME: /[A-Za-z_][A-Za-z0-9_]*/",
        # with a prefix `-` declared, `-5` is that operator applied to 5 (as in Python), so a rule on it reaches it
        "INT: /[0-9]+/" if negates else "INT: /-?[0-9]+/",
        "FLOAT.2: /[0-9]+\\.[0-9]+/" if negates else "FLOAT.2: /-?[0-9]+\\.[0-9]+/",
        r'STRING: /"(?:[^"\\\n]|\\.)*"/',
        # A comment belongs to the line break after it, so a comment line (at any indentation)
        # and blank lines are one break: the indenter reads the indentation after the last one.
        r"_NL: /(?:#[^\n]*)?(?:\r?\n[\t \f]*(?:#[^\n]*)?)+/",
        r"%ignore /[\t \f]+/",
        r"%ignore /\\[\t \f]*\r?\n/",
        "%declare _INDENT _DEDENT",
    ]
    return "\n".join(lines) + "\n", keywords
