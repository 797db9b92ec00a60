"""Fitch proof text -> numbered lines, subproofs and citations.

One line per step:

    1. P -> Q          premise
    2. | P             assume
    3. | Q             r9 1, 2
    4. P -> Q          r12 2-3

A line is its number, the subproof bars (or an indentation), the formula and a
justification at the end: `premise`, `assume`, or a rule id followed by the
cited lines (`3`) and subproofs (`2-3`). Reading never raises: a line that
cannot be read carries an `error`, and the checker reports the first one.
"""
from __future__ import annotations

import re

import attrs

from worldspec.compiler.proof import formula as F

MAX_LINES = 300
MAX_LINE_CHARS = 2400

_NUMBER = re.compile(r"\s*(\d{1,6})\s*[.):]?")
_JUST = re.compile(r"^(?P<formula>.*?)\s+(?P<rule>[A-Za-z_][A-Za-z0-9_]*)"
                   r"(?:\s+(?P<cites>\d[\d\s,\-–]*))?\s*$", re.S)
_CITE = re.compile(r"^(\d+)(?:\s*[-–]\s*(\d+))?$")
_BARS = "|│┃"
PREMISE_WORDS = ("premise", "pr", "prem", "given")
ASSUME_WORDS = ("assume", "assumption", "hyp", "hypothesis", "as")


@attrs.frozen
class Line:
    n: int  # 1-based position (the number it must carry)
    depth: int
    formula: tuple | None
    kind: str  # "premise" | "assume" | "rule"
    rule: str = ""
    cites: tuple = ()  # ("line", i) / ("range", i, j) in written order
    error: str = ""  # why the line cannot be read ("" when it can)
    col: int = 0  # where in the raw line the error is (0-based)
    ctx: int = 0  # innermost subproof holding the line (0: the main proof)
    raw: str = ""


@attrs.frozen
class Subproof:
    id: int
    start: int  # line number of its assumption
    end: int  # line number of its last line
    parent: int  # enclosing subproof (0: the main proof)
    depth: int
    closed: bool  # False when the proof ends inside it


@attrs.frozen
class Proof:
    lines: tuple[Line, ...]
    subproofs: dict  # id -> Subproof (0 is the main proof)
    error: str = ""  # nothing readable at all

    def chain(self, ctx: int) -> tuple[int, ...]:
        """The subproofs open around a line in ctx, outermost first (0 included)."""
        out = []
        while ctx:
            out.append(ctx)
            ctx = self.subproofs[ctx].parent
        out.append(0)
        return tuple(reversed(out))

    def subproof_at(self, start: int, end: int) -> Subproof | None:
        for s in self.subproofs.values():
            if s.id and s.start == start and s.end == end:
                return s
        return None

    @property
    def premises(self) -> list:
        return [ln.formula for ln in self.lines if ln.kind == "premise"]


def clean(text: str) -> list[str]:
    """The proof's lines: code fences and blank lines dropped, tabs expanded."""
    out = []
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if raw.strip().startswith("```") or raw.strip().startswith("~~~"):
            continue
        if not raw.strip():
            continue
        out.append(raw.expandtabs(4).rstrip())
    return out


def read(text: str, notation: F.Notation = F.DEFAULT, premise_words=PREMISE_WORDS,
         assume_words=ASSUME_WORDS) -> Proof:
    """Read proof text; every problem becomes a line error or the proof's error."""
    if not isinstance(text, str):
        return Proof((), {0: Subproof(0, 0, 0, 0, 0, False)}, "the proof must be text")
    raws = clean(text)
    if not raws:
        return Proof((), {0: Subproof(0, 0, 0, 0, 0, False)}, "there are no proof lines")
    parsed = []
    use_bars = False
    for raw in raws[:MAX_LINES + 1]:
        m = _NUMBER.match(raw)
        if not m:
            parsed.append((None, raw, 0, 0, 0))
            continue
        rest_at = m.end()
        rest = raw[rest_at:]
        bars, i = 0, 0
        while i < len(rest) and (rest[i] in _BARS or rest[i] == " "):
            if rest[i] in _BARS:
                bars += 1
            i += 1
        if bars:
            use_bars = True
        parsed.append((int(m.group(1)), rest[i:], rest_at + i, bars, i))
    lines: list[Line] = []
    subs: dict[int, Subproof] = {0: Subproof(0, 0, 0, 0, 0, False)}
    open_stack = [0]  # subproof ids, outermost first
    indents = [None]  # indentation of each open level (indentation style)
    starts: dict[int, int] = {}
    broken = ""
    premise_words = tuple(w.lower() for w in premise_words)
    assume_words = tuple(w.lower() for w in assume_words)
    for k, (num, body, col, bars, indent) in enumerate(parsed, start=1):
        raw = raws[k - 1]
        if k > MAX_LINES:
            lines.append(Line(k, 0, None, "rule", error=f"a proof may have at most {MAX_LINES} lines", raw=raw))
            break
        if broken:
            lines.append(Line(k, 0, None, "rule", error=broken, raw=raw))
            continue
        if num is None:
            lines.append(Line(k, 0, None, "rule", error="every line starts with its number (1, 2, 3, ...)",
                              raw=raw))
            broken = "the proof could not be read past an unnumbered line"
            continue
        if len(raw) > MAX_LINE_CHARS:
            lines.append(Line(k, 0, None, "rule", error=f"the line is too long ({len(raw)} characters; the "
                              f"limit is {MAX_LINE_CHARS})", raw=raw[:200]))
            broken = "the proof could not be read past an overlong line"
            continue
        if num != k:
            lines.append(Line(k, 0, None, "rule", error=f"line numbers must count 1, 2, 3, ...: expected "
                              f"{k} here, found {num}", raw=raw))
            broken = "the proof could not be read past a misnumbered line"
            continue
        kind, rule, cites, ftext, err, ecol = _justification(body, premise_words, assume_words)
        # depth
        if use_bars:
            depth = bars
        else:
            depth = _indent_depth(indents, indent, kind == "assume")
            if depth is None:
                lines.append(Line(k, len(open_stack) - 1, None, kind, rule, cites,
                                  "its indentation matches no open subproof (indent an assumption "
                                  "deeper to open a subproof; end one by going back to an earlier "
                                  "indentation)", col, open_stack[-1], raw))
                broken = "the proof could not be read past a badly indented line"
                continue
        cur = len(open_stack) - 1
        structural = ""
        if kind == "assume":
            if depth == 0:
                structural = ("an assumption opens a subproof, so it must sit one level deeper than the "
                              "line before it (add a bar | or indent it)")
            elif depth > cur + 1:
                structural = f"an assumption may open only one subproof level at a time (depth {depth} after {cur})"
            else:
                while len(open_stack) - 1 >= depth:
                    _close(subs, open_stack, k - 1, True)
                sid = len(subs)
                subs[sid] = Subproof(sid, k, k, open_stack[-1], depth, False)
                open_stack.append(sid)
                if not use_bars:
                    indents[depth:] = [indent]
        else:
            if depth > cur:
                structural = ("this line is deeper than any open subproof; only an assumption opens a "
                              "subproof")
            else:
                while len(open_stack) - 1 > depth:
                    _close(subs, open_stack, k - 1, True)
                if not use_bars:
                    del indents[depth + 1:]
            if kind == "premise" and not structural:
                if depth != 0 or any(ln.kind != "premise" for ln in lines):
                    structural = "premises come first, before every other line and outside any subproof"
        if structural:
            lines.append(Line(k, depth, None, kind, rule, cites, structural, col, open_stack[-1], raw))
            broken = "the proof could not be read past a misplaced line"
            continue
        formula = None
        if not err:
            try:
                formula = F.parse(ftext, notation)
            except F.FormulaError as e:
                err, ecol = f"cannot read the formula: {e.message}", e.col
        lines.append(Line(k, depth, formula, kind, rule, cites, err, col + ecol, open_stack[-1], raw))
        starts[k] = open_stack[-1]
    for sid in open_stack[1:]:
        s = subs[sid]
        subs[sid] = attrs.evolve(s, end=len(lines) if lines else s.start)
    # subproofs still open keep closed=False; fix their ends to the last line
    return Proof(tuple(lines), subs)


def _close(subs: dict, stack: list, last: int, closed: bool) -> None:
    sid = stack.pop()
    subs[sid] = attrs.evolve(subs[sid], end=last, closed=closed)


def _indent_depth(indents: list, indent: int, is_assume: bool) -> int | None:
    """Depth from indentation: deeper by 2+ columns opens a level (assumptions only);
    a column within 1 of an open level's returns to it."""
    if indents[0] is None:
        indents[0] = indent
        return 0
    top = len(indents) - 1
    if indent >= indents[top] + 2:
        return top + 1 if is_assume else top + 1  # deeper: the caller rejects non-assumptions
    for d in range(top, -1, -1):
        if abs(indent - indents[d]) <= 1:
            return d
    return None


def _justification(body: str, premise_words, assume_words):
    """(kind, rule, cites, formula text, error, error column) of a line's text after its bars."""
    body = body.rstrip()
    if body.endswith(":"):  # `worldspec play` opens a multi-line block with a trailing colon
        body = body[:-1]
    m = _JUST.match(body)
    if not m or not m.group("formula").strip():
        if body.strip():
            word = body.split()[-1]
            if word.lower() in premise_words + assume_words:
                return "rule", "", (), "", "the line has a justification but no formula", 0
        return ("rule", "", (), body, "the line has no justification at its end (premise, assume, or a "
                "rule id and the lines it cites)", len(body))
    rule = m.group("rule")
    ftext = re.sub(r"(\s*[:;,]|\s+by)\s*$", "", m.group("formula"))
    cites_text = m.group("cites") or ""
    low = rule.lower()
    if low in premise_words or low in assume_words:
        kind = "premise" if low in premise_words else "assume"
        if cites_text.strip():
            return kind, rule, (), ftext, f"'{rule}' cites no lines", m.start("cites")
        return kind, "", (), ftext, "", 0
    cites = []
    for piece in cites_text.split(","):
        piece = piece.strip()
        if not piece:
            if cites_text.strip():
                return "rule", rule, (), ftext, "an empty citation (two commas in a row?)", m.start("cites")
            continue
        cm = _CITE.match(piece)
        if not cm:
            return ("rule", rule, (), ftext, f"cannot read the citation {piece!r} (write 3 for a line, "
                    f"2-5 for a subproof, separated by commas)", m.start("cites"))
        if cm.group(2):
            cites.append(("range", int(cm.group(1)), int(cm.group(2))))
        else:
            cites.append(("line", int(cm.group(1))))
    return "rule", rule, tuple(cites), ftext, "", 0
