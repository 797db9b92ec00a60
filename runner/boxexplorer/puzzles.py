"""Puzzle boxes (IPI): exact solvers over the puzzle's state space, queries chosen by information gain.

A puzzle's rules are the manual's (how the feedback follows from a query and the hidden target); the
target's space is the declared answer domain. Each solver here writes one manual's feedback rule as a
function `feedback(query, target)`, keeps the targets consistent with every observed feedback, and sends the
query whose feedback over the survivors has the highest entropy (the expected bits it removes). A test is
answered with the survivors in order (a second attempt: the next survivor). The bandit, whose feedback is
random, is a posterior instead: arms pulled by Thompson-style optimism, the answer the highest mean.
"""
from __future__ import annotations

import math
import re
from collections import Counter

from .base import History, Strategy
from .view import BoxView, TestView, plain_domain


def options(domain) -> list[str]:
    """A choice domain's values, as text."""
    return [str(o) for o in getattr(domain, "options", ())]


def entropy(counts) -> float:
    total = sum(counts)
    return -sum(c / total * math.log2(c / total) for c in counts if c)


class ConsistentSolver(Strategy):
    """Targets consistent with the feedback so far; the most informative query next."""

    name = "consistent targets"

    def __init__(self, view: BoxView, feedback):
        super().__init__(view)
        self.feedback = feedback
        self.targets = options(view.answer_domain)
        self.queries = options(plain_domain(view.inputs[0][1]))

    def survivors(self, history: History) -> list[str]:
        alive = list(self.targets)
        for q, out in history:
            alive = [t for t in alive if self.feedback(q, t) == out.strip()]
        return alive

    def next_query(self, history: History) -> str:
        alive = self.survivors(history) or self.targets
        sent = {q for q, _ in history}
        best, gain = self.queries[0], -1.0
        for q in self.queries:
            if q in sent:
                continue
            g = entropy(Counter(self.feedback(q, t) for t in alive).values())
            if g > gain + 1e-12:
                best, gain = q, g
        return best

    def answers(self, test: TestView, history: History) -> list[str]:
        return self.survivors(history)[:4]


def number_feedback(within: int):
    """`Number X`: Close when |X - secret| <= within, else Far (the number-guessing manual)."""
    def fb(q: str, t: str) -> str | None:
        a, b = re.findall(r"-?\d+", q), re.findall(r"-?\d+", t)
        if not a or not b:
            return None
        return "Close" if abs(int(a[0]) - int(b[0])) <= within else "Far"
    return fb


def line_feedback(q: str, t: str) -> str | None:
    """`(x, y)` against `Row r` / `Column c`: hit when the cell is on the ship (the single-battleship manual)."""
    xy = re.findall(r"\d+", q)
    if len(xy) != 2:
        return None
    n = int(re.findall(r"\d+", t)[0])
    return "hit" if (t.startswith("Row") and int(xy[0]) == n) or (t.startswith("Column") and int(xy[1]) == n) \
        else "miss"


class Bandit(Strategy):
    """Arms paying 1 or 0 at random; the best one found by pulls spread by an upper confidence bound."""

    name = "bandit posterior"

    def __init__(self, view: BoxView):
        super().__init__(view)
        self.arms = options(view.answer_domain)

    def tallies(self, history: History) -> dict:
        t = {a: [0, 0] for a in self.arms}
        for q, out in history:
            if q in t:
                t[q][0] += 1
                t[q][1] += "1" in out
        return t

    def next_query(self, history: History) -> str:
        t = self.tallies(history)
        n = sum(v[0] for v in t.values()) + 1
        return max(self.arms, key=lambda a: (t[a][1] + 1) / (t[a][0] + 2) + math.sqrt(2 * math.log(n) / (t[a][0] + 1)))

    def answers(self, test: TestView, history: History) -> list[str]:
        t = self.tallies(history)
        return sorted(self.arms, key=lambda a: -(t[a][1] + 1) / (t[a][0] + 2))


def solver_for(view: BoxView) -> Strategy | None:
    """The solver whose manual this is, or None."""
    if not options(view.answer_domain) or len(view.inputs) != 1:
        return None
    m = view.manual
    if "Bandit A" in m and "Reward" in m:
        return Bandit(view)
    found = re.search(r"`Close` when your X is within (\d+)", m)
    if found:
        return ConsistentSolver(view, number_feedback(int(found.group(1))))
    if "whole row or a whole column" in m and "`hit`" in m:
        return ConsistentSolver(view, line_feedback)
    return None
