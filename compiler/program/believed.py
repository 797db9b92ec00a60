"""Worlds under hypotheses: the manual's world with some base lines replaced by candidate bodies.

The explorer and the information scorer run programs here through the program
world's public entry points (`execute`, `probe`, `render`): a believed world is
the manual's world whose semantics table has the chosen hypotheses in force.
"""
from __future__ import annotations

import attrs

from worldspec import ast
from worldspec.compiler.program.semantics import compile_definition
from worldspec.meta import MetaCompiler
from worldspec.values import Ctx

MAX_WORLDS = 2048  # believed worlds kept (each holds its compiled programs' cache entries)


class Believed:
    """Compiles hypotheses into operator tables and gives the world of any assignment (cached)."""

    def __init__(self, world):
        self.manual = world.base_world()
        self.base = world.builder.base  # target -> Definition
        self.mc = MetaCompiler(world.builder.mc.constants, world.builder.mc.defs)
        self.ops: dict[str, object] = {}  # hypothesis id -> compiled Op
        self.worlds: dict[frozenset, object] = {}

    def op(self, h):
        """The compiled operator (or hook) body of one hypothesis."""
        if h.id not in self.ops:
            d = self.base[h.target]
            line = ast.Definition(d.kind, d.name, d.params, d.returns, h.body, "", ast.NOSPAN)
            self.ops[h.id] = compile_definition(self.mc, line, h.id, d)
        return self.ops[h.id]

    def world(self, assignment) -> object:
        """The manual's world with these hypotheses (an iterable, one per target at most) in force."""
        chosen = tuple(h for h in assignment if not h.is_base)
        key = frozenset(h.id for h in chosen)
        w = self.worlds.get(key)
        if w is None:
            sem = self.manual.sem
            ops, hooks = dict(sem.ops), dict(sem.hooks)
            for h in chosen:
                kind, name = h.target.split(" ", 1)
                (ops if kind == "op" else hooks)[name] = self.op(h)
            table = attrs.evolve(sem, ops=ops, hooks=hooks, applied=frozenset({"?explorer", *key}), origins={})
            w = attrs.evolve(self.manual, sem=table)
            if len(self.worlds) >= MAX_WORLDS:
                self.worlds.clear()
            self.worlds[key] = w
        return w


def context(scope: str) -> Ctx:
    """A fresh evaluation context for one scope (top, in_function, in_loop)."""
    ctx = Ctx()
    ctx.in_function = scope == "in_function"
    ctx.in_loop = scope == "in_loop"
    ctx.call_depth = int(ctx.in_function)
    ctx.loop_depth = int(ctx.in_loop)
    return ctx


def call(h, args, scope: str = "top"):
    """("ok", value) or ("error", None): one hypothesis called on argument values in a scope."""
    try:
        return ("ok", h.unit(context(scope), list(args)))
    except Exception:  # noqa: BLE001 — any failure of a candidate body is an error outcome, as in a program
        return ("error", None)
