"""User-facing errors: `file:line:col: message`, the source line, a caret, a hint.

SpecError is a mistake in a world author's file; it is never an internal bug and
never reaches a user as a traceback. Sources are remembered by file name so
that any later pass can point into the text.
"""
from __future__ import annotations

import contextlib
import difflib
import re

from worldspec.ast import Span

SHOWN_LINE_CHARS = 160  # a longer source line is quoted around the column
_SOURCES: dict[str, str] = {}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def remember_source(file: str, text: str) -> None:
    """Keep a file's text so that diagnostics can quote it."""
    _SOURCES[file] = text


def source_line(file: str, line: int) -> str:
    """Line `line` (1-based) of a remembered source, counted by newlines as Lark counts them."""
    lines = _SOURCES.get(file, "").split("\n")
    return lines[line - 1].removesuffix("\r") if 0 < line <= len(lines) else ""


def shown_line(text: str, col: int) -> tuple[str, int]:
    """A source line as a diagnostic quotes it, and the caret's column in it.

    Long lines are cut to a window around the column, and control characters
    (a spec could carry terminal escapes) are shown as '?', one for one so the
    caret stays under its column.
    """
    if len(text) > SHOWN_LINE_CHARS:
        start = max(0, min(col - 1 - SHOWN_LINE_CHARS // 2, len(text) - SHOWN_LINE_CHARS))
        cut = text[start:start + SHOWN_LINE_CHARS]
        text = ("..." if start else "") + cut + ("..." if start + SHOWN_LINE_CHARS < len(text) else "")
        col = col - start + (3 if start else 0)
    return _CONTROL.sub("?", text), col


def did_you_mean(name: str, candidates) -> str:
    """' Did you mean X?' for the candidate closest to name, or ''."""
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" Did you mean {close[0]}?" if close else ""


class SpecError(Exception):
    """A mistake in a spec, located in its source."""

    severity = "error"

    def __init__(self, span: Span, message: str, hint: str = ""):
        super().__init__(message)
        self.span = span
        self.message = message
        self.hint = hint

    def render(self) -> str:
        s = self.span
        out = [f"{s.file}:{s.line}:{s.col}: {self.severity}: {self.message}"]
        text, col = shown_line(source_line(s.file, s.line), s.col)
        if text:
            out.append(f"  {text}")
            out.append("  " + " " * max(col - 1, 0) + "^")
        if self.hint:
            out.append(f"  {self.hint}")
        # a lone surrogate (from a spec string or a value) must not make printing fail
        return "\n".join(out).encode("utf-8", "backslashreplace").decode("utf-8")

    def __str__(self) -> str:
        return self.render()

    def diagnostics(self) -> list[dict]:
        """This error as JSON-ready records (`check --json`): file, line, col, message, hint, and its rendering."""
        s = self.span
        return [{"file": s.file, "line": s.line, "col": s.col, "severity": self.severity, "message": self.message,
                 "hint": self.hint, "text": self.render()}]


class SpecWarning(SpecError):
    """Something in a spec that compiles but may not mean what its author meant (never raised: reported)."""

    severity = "warning"


class SpecErrors(Exception):
    """Several spec errors found by one pass, reported together."""

    def __init__(self, errors: list[SpecError]):
        super().__init__(f"{len(errors)} errors")
        self.errors = errors

    def render(self) -> str:
        return "\n".join(e.render() for e in self.errors)

    def diagnostics(self) -> list[dict]:
        """Every error's records, in order."""
        return [d for e in self.errors for d in e.diagnostics()]

    def __str__(self) -> str:
        return self.render()


class Collector:
    """The spec errors of independent items (each def, rule, example, task), gathered so that one run
    reports every one it finds instead of the first (issue 24); `raise_any` ends a stage that had some."""

    def __init__(self):
        self.errors: list[SpecError] = []

    @contextlib.contextmanager
    def item(self):
        """Run one item's checks; its spec errors are kept and the next item is checked."""
        try:
            yield
        except SpecErrors as e:
            self.errors.extend(e.errors)
        except SpecError as e:
            self.errors.append(e)

    def raise_any(self) -> None:
        """Raise what was gathered, in source order, each once: one SpecError, or SpecErrors for several."""
        raise_all(self.errors)


def raise_all(errors: list[SpecError]) -> None:
    """Raise these errors in source order, each once (an error two items reach is reported once)."""
    unique, seen = [], set()
    for e in errors:
        key = (e.span.file, e.span.line, e.span.col, e.message)
        if key not in seen:
            seen.add(key)
            unique.append(e)
    unique.sort(key=lambda e: (e.span.file, e.span.line, e.span.col))
    if len(unique) == 1:
        raise unique[0]
    if unique:
        raise SpecErrors(unique)
