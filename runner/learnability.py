"""A world's learnability: what its built-in LLM-free explorer scores within the world's own budget.

`box_learnability(world)` plays the black-box explorer (runner/boxexplorer/) offline against the box, with
the box's turn@shot budget, and grades its answers with the box's own (lenient) grading: a test passes when
some shot's answer is right. It is the lower bound `worldspec check --learnability` prints: a box the explorer
answers is learnable from queries alone; a low score says the explorer's families miss it, not that the box is
unlearnable. Game boxes (tests played round by round) are left to `worldspec run --agent explorer`.
"""
from __future__ import annotations

import attrs

from worldspec.compiler.api import Explorable

from .boxexplorer.strategies import run_box, strategy_for
from .boxexplorer.view import box_view


@attrs.frozen
class Learnability:
    """The explorer's accuracy (percent) on one box within `turns`@`shots`, or the reason there is none."""

    accuracy: float | None
    turns: int = 0
    shots: int = 0
    strategy: str = ""
    reason: str = ""

    def line(self) -> str:
        """The line `check` prints."""
        if self.accuracy is None:
            return f"learnability: not measured ({self.reason})"
        return (f"learnability: the explorer ({self.strategy}) answers {self.accuracy:.1f}% of the tests "
                f"within {self.turns}@{self.shots}")

    def as_json(self) -> dict:
        """The measurement as `check --json` reports it."""
        return attrs.asdict(self)


def box_query(world):
    """The box as `run_box`'s query function: a puzzle's tests each in a session of their own, as turn@shot
    explores them; a rejected input is no observation."""
    sessions: dict = {}

    def query(test_id, text):
        if test_id not in sessions:
            sessions[test_id] = world.session(world.task(test_id) if test_id else None)
        fb = sessions[test_id].probe(text)
        return None if fb.status == "rejected" else fb.text
    return query


def box_learnability(world, seed: int = 0) -> Learnability:
    """The explorer's accuracy on this black box within its budget (see the module docstring)."""
    kind = getattr(world, "kind", "?")
    if isinstance(world, Explorable):  # its explorer speaks the milestone protocol, which a run drives
        return Learnability(None, reason=f"a {kind} world: run `worldspec run WORLD --agent explorer`")
    if getattr(world, "protocol", "") != "turn@shot":  # what the box explorer speaks (compiler.api PROTOCOLS)
        return Learnability(None, reason=f"no explorer for kind {kind} yet")
    if any(t.shape == "play" for t in world.tasks):
        return Learnability(None, reason="a game box: run `worldspec run BOX --agent explorer`")
    view = box_view(world, seed=seed)
    strategy = strategy_for(view)
    answers = run_box(view, box_query(world), strategy)
    passed = sum(any(world.verify(t, a, "lenient").passed for a in answers[t.id]) for t in world.tasks)
    return Learnability(100.0 * passed / max(1, len(world.tasks)), view.turns, view.shots, strategy.name)
