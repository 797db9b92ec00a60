"""A world file's header lines (name, kind, family, difficulty, summary), read without parsing or compiling.

`worldspec list` prints these for every bundled world; compiling the 222 bundled worlds to
print their names took 25 s on an idle machine (issue 27). The header is the file's own
top-level lines: `world "NAME" version N`, `kind K`, `summary "..."`, and for boxes
`family F` and `difficulty D`. A line counts only at the start of a line (column 1), the
first of each key wins, and a file whose first such line is not `world` is no world.
"""
from __future__ import annotations

import re

import attrs

from worldspec.ast import Span
from worldspec.sources import read_source

_STRING = r'"((?:[^"\\\n]|\\.)*)"'
_LINES = {
    "world": re.compile(r"world\s+" + _STRING + r"\s+version\s+\d+"),
    "kind": re.compile(r"kind\s+([A-Za-z_]\w*)"),
    "summary": re.compile(r"summary\s+" + _STRING),
    "family": re.compile(r"family\s+\"?([A-Za-z_][\w-]*)\"?"),
    "difficulty": re.compile(r"difficulty\s+\"?([A-Za-z_][\w-]*)\"?"),
}
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


@attrs.frozen
class Header:
    """What a world says of itself on its header lines."""

    file: str
    name: str
    kind: str = "program"  # what the compiler assumes when a world declares none
    summary: str = ""
    family: str = ""
    difficulty: str = ""


def unescape(text: str) -> str:
    """A spec string's content with its common escapes read (others kept as written)."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), text)


def read_header(path: str) -> Header | None:
    """The header of the world file at path (None: it does not start with a world line).

    Raises SpecError when the file cannot be read (not a regular file, too large, not UTF-8).
    """
    text = read_source(path, Span(path, 1, 1), path)
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line[:1].isalpha():
            continue
        word = line.split(None, 1)[0]
        pattern = _LINES.get(word)
        if pattern is None or word in found:
            continue
        m = pattern.match(line)
        if m:
            if word != "world" and "world" not in found:
                return None
            found[word] = unescape(m.group(1))
    if "world" not in found:
        return None
    return Header(file=path, name=found["world"], kind=found.get("kind", "program"),
                  summary=found.get("summary", ""), family=found.get("family", ""),
                  difficulty=found.get("difficulty", ""))
