"""JSON from outside bytes (run logs, model tool arguments, imported data), parsed with a depth limit.

`json.loads` recurses once per nesting level, so a line of 100,000 `[` raises RecursionError
(an internal error, exit 3) in every reader of outside text. `loads` counts the nesting first,
in one linear pass that skips strings, and refuses a text nested deeper than `MAX_DEPTH` with a
`ValueError` (what `json.JSONDecodeError` is too), so every caller's existing refusal path holds.
"""
from __future__ import annotations

import json

# Deeper than any record worldspec writes (a log event nests about 6 levels) and far below the
# interpreter's recursion limit, so the parse that follows the count cannot overflow the stack.
MAX_DEPTH = 200


class TooDeep(ValueError):
    """A JSON text nested deeper than the limit."""


def outside_strings(text: str):
    """The characters of a text outside its double-quoted strings (backslash escapes inside them), in order."""
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        else:
            yield ch


def depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text, strings skipped (linear, no recursion)."""
    deepest = level = 0
    for ch in outside_strings(text):
        if ch in "[{":
            level += 1
            if level > deepest:
                deepest = level
        elif ch in "]}":
            level -= 1
    return deepest


def loads(text: str | bytes, max_depth: int = MAX_DEPTH):
    """`json.loads`, refusing (TooDeep, a ValueError) a text nested deeper than `max_depth`."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    # a cheap bound first: a text with fewer brackets than the limit cannot be too deep
    if text.count("[") + text.count("{") > max_depth and depth(text) > max_depth:
        raise TooDeep(f"JSON nested more than {max_depth} levels deep")
    return json.loads(text)
