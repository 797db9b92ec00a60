"""`kind slowbox`: a black box or a round-by-round game whose sessions can get stuck inside one C call.

A spec of a black box or a game (a game when it declares `moves`) written with `kind slowbox` compiles as
that kind and answers as that world, except that an exploration input, or a move of a test game, that
contains slowkind.MARK (HANG) runs slowkind.stuck: hours in re's C matcher, where no step counter and no
signal handler reach. Only the sandbox's deadline stops it. A worker registers the kind with
`Sandbox(kind_modules=("slowbox",))`; a test registers `KIND` in its own process.
"""
from __future__ import annotations

import attrs

from slowkind import MARK, stuck
from worldspec.compiler import KINDS
from worldspec.compiler.api import Kind, TurnShotFace


class SlowSession:
    """A world session (or test game) that hangs on an input containing MARK, and is the session otherwise."""

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def probe(self, text):
        if MARK in str(text):
            stuck()
        return self.inner.probe(text)

    def play(self, text):
        if MARK in str(text):
            stuck()
        return self.inner.play(text)


class SlowBox:
    """A compiled box of another kind, whose sessions are SlowSessions."""

    kind = "slowbox"

    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def session(self, task=None, stream=0, grading: str = "lenient"):
        return SlowSession(self.inner.session(task, stream, grading=grading))

    def test_play(self, task, attempt: int = 1, grading: str = "lenient"):
        return SlowSession(self.inner.test_play(task, attempt, grading=grading))

    def probe(self, text):
        return self.session().probe(text)


def compile_slow(spec, seed):
    base = "game" if any(getattr(item, "key", "") == "moves" for item in spec.generic) else "blackbox"
    return SlowBox(KINDS[base].compile(attrs.evolve(spec, kind=base), seed))


KIND = Kind("slowbox", compile_slow, "a box whose sessions can hang in C", faces=(TurnShotFace,))
