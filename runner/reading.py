"""Reading an answer out of a model's reply, as ExplorationBench's released harness reads it.

* `clean(text)`, `clean_code(text)`: a reply without the characters chat interfaces add that no
  answer means: byte-order marks and zero-width characters dropped, non-breaking spaces made
  spaces, CR and CRLF line ends made LF; `clean_code` also makes U+2212 minus and curly quotes ASCII
  (what a program, a proof or a rule report means by them).
* `blocks(text)`: the fenced blocks of a reply (``` or ~~~ fences), in order, an unclosed last fence
  included.
* `choose_block(found, tags)`: the block graded: the first block tagged with one of `tags` (in
  their order), else the first untagged one, else the first with any other tag (without `tags`, the
  first block), else an unclosed block (released code: `sandboxes/code/run_eval.py` `extract_code`,
  which tries ```aliencode, ```alien, ```python, then untagged blocks, each time taking the *first*
  match, then recovers an unclosed ```aliencode fence).
* `language_tags(world)`: the tags a world's answers are written under (none for a box).
* `unfenced(text, opens)`: the code of a reply without a fence: the first run of lines that open
  as code does (a statement word of the world, a proof's line number), with the lines indented under
  them (`run_eval.py` `_fenceless_code`).
* `decline_line(text, decline)`: whether a reply declines with an `ANSWER: UNPROVABLE` line, the
  colon ASCII or full width (`sandboxes/logic/harness.py` `extract_unprovable`), or with the decline
  form on a line of its own.
* `prediction(text)`: the value a `预测输出：` / `Output:` line commits to (`run_eval.py`
  `extract_prediction`, its tool-protocol form).
"""
from __future__ import annotations

import re

import attrs

# Characters an interface inserts that carry no meaning in any answer.
_DROP = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060\u180e"), None)
_SPACE = dict.fromkeys(map(ord, "\u00a0\u202f\u2007"), " ")
# What a program, a proof or an equation means by these.
_CODE = {ord("\u2212"): "-", ord("\u201c"): '"', ord("\u201d"): '"', ord("\u201e"): '"',
         ord("\u2018"): "'", ord("\u2019"): "'"}

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*)$")


def clean(text: str | None) -> str:
    """A reply without invisible characters, with plain spaces and LF line ends (see the module docstring)."""
    if not text:
        return ""
    return text.replace("\r\n", "\n").replace("\r", "\n").translate(_DROP).translate(_SPACE)


def clean_code(text: str | None) -> str:
    """`clean`, and U+2212 minus and curly quotes made ASCII (a program's, a proof's or an equation's text)."""
    return clean(text).translate(_CODE)


@attrs.frozen
class Block:
    tag: str  # the first word of the info string, lower case ("" when untagged)
    text: str
    closed: bool


def blocks(text: str) -> list[Block]:
    """The fenced blocks of `text` in order. A fence closes on a line of its own fence character (at
    least as long as the opening), or at the end of a line that ends with it; a fence left open runs to
    the end of the reply (an unclosed block)."""
    out: list[Block] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent"))
        info = m.group("info").strip()
        tag = info.split()[0].lower() if info else ""
        body: list[str] = []
        closed = False
        i += 1
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                closed = True
                break
            if fence[0] == "`" and stripped.endswith(fence[0] * 3):  # `EMIT(x)```: the fence closes the line
                body.append(line.rstrip()[:-3].rstrip())
                closed = True
                break
            body.append(line[min(indent, len(line) - len(line.lstrip(" \t"))):])
            i += 1
        out.append(Block(tag, "\n".join(body).strip("\n"), closed))
        i += 1
    return out


def choose_block(found: list[Block], tags: tuple[str, ...] = (), accept=None) -> Block | None:
    """The block graded among `found` (see the module docstring); `accept(text)` may narrow which blocks
    count (a proof world takes only blocks that hold a proof)."""
    ok = [b for b in found if b.closed and (accept is None or accept(b.text))]
    for tag in tags:
        for b in ok:
            if b.tag == tag:
                return b
    if tags:
        for b in ok:
            if not b.tag:
                return b
    if ok:
        # a world without a language (a box) has no tag to prefer: its first block; in one with a language, a
        # block under another tag is read when no other is there (the released code reads none)
        return ok[0]
    open_ = [b for b in found if not b.closed and (accept is None or accept(b.text))]
    return open_[-1] if open_ else None


def language_tags(world) -> tuple[str, ...]:
    """The fence tags a world's answers are written under, most specific first: the world's `answer_tags`
    (a program or proof world names its language; a box has none)."""
    return tuple(getattr(world, "answer_tags", ()) or ())


def unfenced(text: str, opens: re.Pattern) -> str:
    """The code of a reply with no fence: the first run of lines that `opens` matches (at the line's
    start), plus the lines indented under them ("" when no line matches)."""
    run: list[str] = []
    for raw in text.split("\n"):
        line = raw.rstrip()
        if opens.match(line) or (run and line[:1].isspace()):
            run.append(line)
        elif run:
            break
    return "\n".join(run).strip()


def decline_line(text: str, decline: str) -> bool:
    """Whether a line of `text` declines: `ANSWER: <decline>` (ASCII or full-width colon, any case;
    harness.py `extract_unprovable` reads `^\\s*ANSWER\\s*[：:]\\s*UNPROVABLE\\s*$`) or the decline form on a
    line of its own (our own form), emphasis and backticks around it ignored."""
    if not decline:
        return False
    pat = re.compile(r"^[ \t]*[*_`]*[ \t]*(?:ANSWER[ \t]*[：:][ \t]*[*_`]*[ \t]*)?" + re.escape(decline)
                     + r"[ \t]*[*_`.!]*[ \t]*$", re.IGNORECASE | re.MULTILINE)
    return pat.search(text) is not None


# run_eval.py `extract_prediction` (tool protocol): the last `预测...：` label; its value ends at a fence or a
# blank line; the emphasis around it is dropped. Our prompts are English, so `Predicted output:`,
# `Prediction:` and `Output:` at the start of a line are read the same way.
_PREDICTION = re.compile(
    r"(?:预测[^\n：:]*|^[ \t]*[*_]*(?:predicted\s+output|prediction|output)[*_]*[ \t]*)[：:][ \t]*(?:[*_]+[ \t]*)?"
    r"(?P<value>.*?)(?=```|~~~|\n[ \t]*\n|\Z)", re.IGNORECASE | re.MULTILINE | re.DOTALL)


def prediction(text: str) -> str:
    """The value the last prediction label of a reply commits to ("" when there is none or it is empty)."""
    found = list(_PREDICTION.finditer(text))
    if not found:
        return ""
    last = found[-1]
    value = last.group("value").strip()
    if not value:
        # the label is followed by a fence: the block after it (the released fallback pattern
        # `输出[应会]*[该为是]*[：:]\s*[`]*\s*([^\s`\n]+)` reads into that block too)
        after = blocks(text[last.end():].lstrip(" \t\n")) if re.match(r"\s*(```|~~~)", text[last.end():]) else []
        return after[0].text if after else ""
    if "**" in value:
        value = value.split("**", 1)[0].strip()
    value = value.strip("*`_ \t")
    return value
