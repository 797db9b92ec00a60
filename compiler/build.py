"""Parse -> kind registry -> kind.compile: the one place that knows which kinds exist.

Nothing here is kind-specific: a kind is a subpackage whose spec module exposes
`KIND` (a `compiler.api.Kind`), registered once in `KINDS` below or at run time with
`register_kind` (tests register a tiny kind of their own this way).
"""
from __future__ import annotations

import os
from importlib.resources import files

from worldspec import ast
from worldspec.compiler.blackbox.spec import KIND as BLACKBOX
from worldspec.compiler.game.spec import KIND as GAME
from worldspec.compiler.holdem.spec import KIND as HOLDEM
from worldspec.compiler.judge.spec import KIND as JUDGE
from worldspec.compiler.program.spec import KIND as PROGRAM
from worldspec.compiler.proof.spec import KIND as PROOF
from worldspec.compiler.api import Kind, World
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.parser import load_spec

KINDS: dict[str, Kind] = {k.name: k for k in (PROGRAM, PROOF, BLACKBOX, GAME, HOLDEM, JUDGE)}
# Kinds the language reserves but this version cannot compile yet.
RESERVED: tuple[str, ...] = ()


def register_kind(kind: Kind) -> None:
    """Make a kind compilable (a new kind is one subpackage plus one registration)."""
    KINDS[kind.name] = kind


def compile_spec(spec: ast.Spec, seed: int | None = None) -> World:
    """Compile a parsed spec into its true world (the given seed, or the declared one)."""
    kind = KINDS.get(spec.kind)
    if kind is None:
        if spec.kind in RESERVED:
            raise SpecError(spec.kind_span, f"world kind {spec.kind!r} is not supported by this version",
                            "Supported kinds: " + ", ".join(KINDS) + ".")
        names = tuple(KINDS) + RESERVED
        raise SpecError(spec.kind_span, f"unknown world kind {spec.kind!r}",
                        (did_you_mean(spec.kind, names) + " Kinds are: " + ", ".join(names) + ".").strip())
    return kind.compile(spec, seed)


def resolve_world_path(name: str) -> str:
    """A path, or the name of a bundled world (`demo`, `aliencode`)."""
    if os.path.exists(name):
        return name
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")
    try:
        bundled = str(files("worldspec.worlds"))
    except (ModuleNotFoundError, TypeError):
        bundled = here
    for folder in (bundled, here):
        for cand in (name, name + ".world"):
            p = os.path.join(folder, cand)
            if os.path.exists(p):
                return p
    return name


def load_world(path: str, seed: int | None = None) -> World:
    """Read, parse and compile a .world file (or a bundled world's name)."""
    return compile_spec(load_spec(resolve_world_path(path)), seed)
