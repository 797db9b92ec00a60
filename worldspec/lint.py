"""Warnings about a spec that compiles: what `check` says without refusing the world.

Compatibility (issue 24): a world that compiled under an earlier release still compiles. Where a
later release would have refused something an older world does, the compiler accepts it and this
pass says so, located as an error is, so the author can change it when they choose.
"""
from __future__ import annotations

from worldspec import ast
from worldspec.builtins import BUILTINS
from worldspec.diagnostics import SpecWarning


def spec_warnings(spec: ast.Spec) -> list[SpecWarning]:
    """Every warning about a parsed spec, in source order."""
    found = []
    for d in spec.defs:
        if d.name in BUILTINS:
            found.append(SpecWarning(d.span, f"def {d.name} shadows the builtin of the same name",
                                     f"Everywhere this world calls {d.name}(...) it calls this def, not the builtin "
                                     "of docs/language.md; rename the def if that is not what you mean."))
    return sorted(found, key=lambda w: (w.span.file, w.span.line, w.span.col))
