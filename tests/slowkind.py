"""`kind slow`: runner_fakes.FakeWorld whose code can get stuck inside one C call (the sandbox's tests).

A probe, an answer or a stated equation that contains HANG (or certification of a world whose
name does) runs a regular expression with
catastrophic backtracking (2^64 ways to split the text): a single call into C that no step
counter and no signal handler interrupts, as a comparison of a shared-structure value once was.
Only the sandbox's deadline stops it. A worker registers the kind with
`Sandbox(kind_modules=("slowkind",))`; a test registers `KIND` in its own process.
"""
from __future__ import annotations

import re

from runner_fakes import FAKE_SPEC, FakeWorld
from worldspec.compiler.api import Kind, MilestoneFace

MARK = "HANG"


def stuck() -> None:
    """Hours inside re's C matcher."""
    re.match(r"(a+)+$", "a" * 64 + "!")


class SlowWorld(FakeWorld):
    kind = "slow"

    def probe(self, text):
        if MARK in text:
            stuck()
        return super().probe(text)

    def verify(self, task, answer):
        if MARK in answer:
            stuck()
        return super().verify(task, answer)

    def grade_equation(self, rule_id, equation):
        if MARK in equation:
            stuck()
        return super().grade_equation(rule_id, equation)

    def certify(self, progress=None):
        if MARK in self.name:
            stuck()
        return super().certify(progress)


KIND = Kind("slow", lambda spec, seed: SlowWorld(name=spec.name, seed=spec.seed if seed is None else seed),
            "a test world whose code can hang in C", faces=(MilestoneFace,))
SPEC = FAKE_SPEC.replace("kind fake", "kind slow").replace('"Fake"', '"Slow"')
