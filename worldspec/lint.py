"""Warnings about a spec that compiles: what `check` says without refusing the world.

Compatibility (issue 24): a world that compiled under an earlier release still compiles. Where a
later release would have refused something an older world does, the compiler accepts it and this
pass says so, located as an error is, so the author can change it when they choose.
"""
from __future__ import annotations

import re

from worldspec import ast
from worldspec.builtins import BUILTINS
from worldspec.diagnostics import SpecError, SpecWarning, did_you_mean
from worldspec.meta import BASE
from worldspec.sources import read_source

# `{K}` in prose is replaced by param K's value; an uppercase name in braces that no param has is left
# as written and reaches the agent verbatim (a `{DD}` typo certified). Lowercase braces are templates.
_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")


def spec_warnings(spec: ast.Spec) -> list[SpecWarning]:
    """Every warning about a parsed spec, in source order."""
    found = []
    for d in spec.defs:
        if d.name in BUILTINS:
            found.append(SpecWarning(d.span, f"def {d.name} shadows the builtin of the same name",
                                     f"Everywhere this world calls {d.name}(...) it calls this def, not the builtin "
                                     "of docs/language.md; rename the def if that is not what you mean."))
        elif d.name == BASE:
            found.append(SpecWarning(d.span, "def base shadows base(...), the base line a rule body reaches",
                                     "A rule body that calls base(...) calls this def, not the base line of what the "
                                     "rule changes; rename the def if that is not what you mean."))
    found += placeholder_warnings(spec)
    found += list(spec.warnings)  # the parser's: what an older edition accepts and language 3 refuses
    return sorted(found, key=lambda w: (w.span.file, w.span.line, w.span.col))


def placeholder_warnings(spec: ast.Spec) -> list[SpecWarning]:
    """`{NAME}` placeholders in the world's file that name no param (outside comments)."""
    try:
        text = read_source(spec.file, spec.span, spec.file)
    except SpecError:
        return []
    params = [p.name for p in spec.params]
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0] if '"' not in line.split("#", 1)[0] else line
        for m in _PLACEHOLDER.finditer(code):
            if m.group(1) in params:
                continue
            hint = did_you_mean(m.group(1), params).strip()
            out.append(SpecWarning(ast.Span(spec.file, n, m.start() + 1),
                                   f"{{{m.group(1)}}} names no param, so it reaches the agent as written",
                                   (hint + " " if hint else "") + "A placeholder is {NAME} of a param the world "
                                   "declares (param NAME = ...); write the text without braces otherwise."))
    return out
