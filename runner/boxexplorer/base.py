"""What every black-box strategy is: queries from the exploration so far, answers ranked per test.

A strategy is built from a `BoxView` only (runner/boxexplorer/view.py) and is a pure function of the history
it is given (the (input, output) pairs read back from the conversation), so the same history and seed give the
same query and the same answers, whichever conversation asks.
"""
from __future__ import annotations

import random

from .view import BoxView, TestView



class History(list):
    """The exploration so far: (input text, output text) pairs in order, and in `refused` the inputs the box
    refused (no observation, but a turn spent: a strategy that drew the same input again would send it for
    every turn left)."""

    def __init__(self, pairs=(), refused=()):
        super().__init__(pairs)
        self.refused = list(refused)


class Strategy:
    """A family shape's explorer. Subclasses override `next_query` and `answers`."""

    name = "strategy"

    def __init__(self, view: BoxView):
        self.view = view

    def rng(self, history: History, salt: str = "") -> random.Random:
        """A random stream fixed by the seed, the box and how far the exploration is, refused inputs counted
        (determinism; with none refused the stream is the one earlier releases drew)."""
        refused = len(getattr(history, "refused", ()))
        at = f"{len(history)}+{refused}" if refused else str(len(history))
        return random.Random(f"{self.view.seed}:{self.view.name}:{at}:{salt}")

    def next_query(self, history: History) -> str:  # pragma: no cover - every strategy overrides
        """The next input to send."""
        raise NotImplementedError

    def answers(self, test: TestView, history: History) -> list[str]:  # pragma: no cover
        """Answers to a test, best first (shot k sends the k-th, or the last when there are fewer)."""
        raise NotImplementedError

    def answer(self, test: TestView, history: History, shot: int = 1) -> str:
        """The answer of attempt `shot` (1-based)."""
        ranked = self.answers(test, history) or [""]
        return ranked[min(shot, len(ranked)) - 1]
