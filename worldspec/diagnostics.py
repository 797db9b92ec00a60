"""User-facing errors: `file:line:col: message`, the source line, a caret, a hint.

SpecError is a mistake in a world author's file; it is never an internal bug and
never reaches a user as a traceback. Sources are remembered by file name so
that any later pass can point into the text.
"""
from __future__ import annotations

import difflib

from worldspec.ast import Span

_SOURCES: dict[str, str] = {}


def remember_source(file: str, text: str) -> None:
    _SOURCES[file] = text


def source_line(file: str, line: int) -> str:
    lines = _SOURCES.get(file, "").splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def did_you_mean(name: str, candidates) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" Did you mean {close[0]}?" if close else ""


class SpecError(Exception):
    """A mistake in a spec, located in its source."""

    def __init__(self, span: Span, message: str, hint: str = ""):
        super().__init__(message)
        self.span = span
        self.message = message
        self.hint = hint

    def render(self) -> str:
        s = self.span
        out = [f"{s.file}:{s.line}:{s.col}: error: {self.message}"]
        text = source_line(s.file, s.line)
        if text:
            out.append(f"  {text}")
            out.append("  " + " " * max(s.col - 1, 0) + "^")
        if self.hint:
            out.append(f"  {self.hint}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.render()


class SpecErrors(Exception):
    """Several spec errors found by one pass, reported together."""

    def __init__(self, errors: list[SpecError]):
        super().__init__(f"{len(errors)} errors")
        self.errors = errors

    def render(self) -> str:
        return "\n".join(e.render() for e in self.errors)

    def __str__(self) -> str:
        return self.render()
