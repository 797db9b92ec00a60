"""Which strategy explores a box (by the shape its view shows), the view-only fallback, and an offline driver.

`strategy_for(view)` looks at the declared domains and the manual (never at f): a circuit of gates over n bits,
a string cipher over letters, a time-queried physics box, a repeated game, a word puzzle of A/M/X marks, a
puzzle whose rules one of the solvers knows; any other box gets `Nearest`, which explores with draws from the
declared domains and answers a test with the output of the observed input closest to the test's (the
memorising baseline, restated over the view). `run_box(view, query)` plays one box offline: a strategy against
a query function, then its answers (what tests/test_box_explorer.py checks).
"""
from __future__ import annotations

import difflib

from . import circuit, cipher, code, games, physics, puzzles, search, wordle
from .base import History, Strategy
from .view import BoxView, TestView, plain_domain


class Nearest(Strategy):
    """Domain draws; answers from the nearest observed input (no hypothesis space: the floor)."""

    name = "nearest observed"

    def next_query(self, history: History) -> str:
        rng = self.rng(history, "draw")
        refused = set(getattr(history, "refused", ()))
        for _ in range(20):  # an input the box refused is drawn again only when the draws keep finding it
            query = self.draw(rng)
            if query not in refused:
                break
        return query

    def draw(self, rng) -> str:
        """One input drawn from the declared domains."""
        parts = []
        for _, d in self.view.inputs:
            d = plain_domain(d)
            try:
                parts.append(d.write(d.draw(rng), len(self.view.inputs) == 1))
            except Exception:  # noqa: BLE001 — a domain that cannot draw (free text): an example-like word
                parts.append("1")
        return ", ".join(parts)

    def answers(self, test: TestView, history: History) -> list[str]:
        if not history:
            return []
        if not test.values:  # a puzzle: the last input sent
            return [history[-1][0]]
        shown = ", ".join(str(v) for v in test.values)
        ranked = sorted(history, key=lambda qo: -difflib.SequenceMatcher(None, qo[0], shown).ratio())
        return [o for _, o in ranked[:2]]


def strategy_for(view: BoxView) -> Strategy:
    """The strategy for this box's shape."""
    if games.applies(view):
        return games.GamePlayer(view)
    if view.answer_domain is not None and wordle.shape(view) is not None:
        return wordle.Marks(view)
    if view.answer_domain is not None:
        solver = puzzles.solver_for(view) or search.solver_for(view)
        if solver is not None:
            return solver
    elif circuit.applies(view):
        return circuit.CircuitLearner(view)
    elif cipher.applies(view):
        return cipher.CipherLearner(view)
    elif physics.applies(view):
        return physics.PhysicsFitter(view)
    elif code.applies(view):
        return code.DebuggerFitter(view)
    return Nearest(view)


def run_box(view: BoxView, query, strategy: Strategy | None = None) -> dict:
    """Explore one box offline and answer its tests: `query(test_id or None, text) -> output text` is the only
    link to the box (a puzzle's tests are each explored in their own session). {test id: [answers by shot]}."""
    strategy = strategy or strategy_for(view)
    each = view.answer_domain is not None
    out: dict[str, list[str]] = {}
    shared: History | None = None
    for test in view.tests:
        if each or shared is None:
            history = History()
            for _ in range(view.turns):
                text = strategy.next_query(history)
                output = query(test.id if each else None, text)
                if output is None:
                    history.refused.append(text)
                else:
                    history.append((text, output))
            shared = history
        out[test.id] = [strategy.answer(test, shared, s) for s in range(1, view.shots + 1)]
    return out
