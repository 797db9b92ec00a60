"""Puzzles whose state space is enumerated (IPI): coins on a scale, nuts and bolts.

Each solver lists every state the manual allows (which coin is heavy and which light; which lie each block of
ten weighings holds; which nut each bolt fits), keeps those whose feedback matches every observation (the
manual's rule, written as `feedback(state, query, index)`), and sends, among random queries of the manual's
form, the one whose feedback over the survivors has the highest entropy. A test's answer is the most probable
survivor (states grouped by the answer they give); a second attempt, the next.
"""
from __future__ import annotations

import itertools
import math
import re
from collections import Counter

from .base import History, Strategy
from .view import BoxView, TestView

POOL = 40  # random queries scored per turn
SCORED = 2500  # survivors sampled to score them


class Enumerated(Strategy):
    """The shared search; subclasses give states, feedback, queries and how a state is answered."""

    def __init__(self, view: BoxView):
        super().__init__(view)
        self.memo: dict[tuple, list] = {}

    def states(self) -> list:  # pragma: no cover
        raise NotImplementedError

    def feedback(self, state, query, index: int) -> str:  # pragma: no cover
        raise NotImplementedError

    def parse(self, text: str):  # pragma: no cover
        raise NotImplementedError

    def random_query(self, rng, alive):  # pragma: no cover
        raise NotImplementedError

    def write_query(self, query) -> str:  # pragma: no cover
        raise NotImplementedError

    def write_answer(self, state) -> str:  # pragma: no cover
        raise NotImplementedError

    def survivors(self, history: History) -> list:
        key = tuple(history)
        if key in self.memo:
            return self.memo[key]
        if not history:
            alive = self.states()
        else:
            alive = self.survivors(history[:-1])
            q = self.parse(history[-1][0])
            if q is not None:
                got = history[-1][1].strip()
                kept = [s for s in alive if self.feedback(s, q, len(history) - 1) == got]
                alive = kept or alive  # nothing explains the feedback: keep what was believed
        self.memo[key] = alive
        return alive

    def next_query(self, history: History) -> str:
        alive = self.survivors(history)
        rng = self.rng(history, "query")
        sample = alive if len(alive) <= SCORED else rng.sample(alive, SCORED)
        best, score = None, -1.0
        for _ in range(POOL):
            q = self.random_query(rng, alive)
            counts = Counter(self.feedback(s, q, len(history)) for s in sample)
            n = sum(counts.values())
            h = -sum(c / n * math.log2(c / n) for c in counts.values())
            if h > score:
                best, score = q, h
        return self.write_query(best)

    def answers(self, test: TestView, history: History) -> list[str]:
        votes = Counter(self.write_answer(s) for s in self.survivors(history))
        return [a for a, _ in votes.most_common(2)]


COIN = re.compile(r"Coin (\d+)")


def sides(text: str):
    """`Left: Coin 1, Coin 2; Right: Coin 3` as (left counts, right counts), or None."""
    m = re.match(r"\s*Left:(.*);\s*Right:(.*)$", text)
    if not m:
        return None
    return Counter(int(x) for x in COIN.findall(m.group(1))), Counter(int(x) for x in COIN.findall(m.group(2)))


def write_sides(left, right) -> str:
    return ("Left: " + ", ".join(f"Coin {c}" for c in sorted(left)) + "; Right: "
            + ", ".join(f"Coin {c}" for c in sorted(right))).rstrip()


class HeavyLight(Enumerated):
    """One heavy and one light coin; the scale says Left, Right or Equal (the heavy-light manual)."""

    name = "heavy and light coin"

    def __init__(self, view: BoxView, coins: int):
        super().__init__(view)
        self.coins = coins

    def states(self):
        return [(h, l) for h in range(1, self.coins + 1) for l in range(1, self.coins + 1) if h != l]

    def parse(self, text):
        return sides(text)

    def feedback(self, state, q, index):
        h, l = state
        left, right = q
        d = sum(left.values()) - sum(right.values()) + left[h] - right[h] - left[l] + right[l]
        return "Left" if d > 0 else "Right" if d < 0 else "Equal"

    def random_query(self, rng, alive):
        suspects = sorted({c for s in alive for c in s})
        k = max(1, len(suspects) // 3)
        pick = rng.sample(suspects, min(len(suspects), 2 * k))
        return Counter(pick[:k]), Counter(pick[k:2 * k])

    def write_query(self, q):
        return write_sides(q[0], q[1])

    def write_answer(self, state):
        return f"Heavy Coin {state[0]}; Light Coin {state[1]}"


class LyingScale(Enumerated):
    """One heavy coin; Balance or Imbalance, with exactly one lie in every block of ten weighings."""

    name = "heavy coin, lying scale"

    def __init__(self, view: BoxView, coins: int, block: int = 10):
        super().__init__(view)
        self.coins, self.block = coins, block
        self.blocks = max(1, math.ceil(view.turns / block))

    def states(self):
        return [(c, lies) for c in range(1, self.coins + 1)
                for lies in itertools.product(range(self.block), repeat=self.blocks)]

    def parse(self, text):
        return sides(text)

    def feedback(self, state, q, index):
        c, lies = state
        left, right = q
        truth = sum(left.values()) != sum(right.values()) or c in left or c in right
        b = index // self.block
        if b < len(lies) and index % self.block == lies[b]:
            truth = not truth
        return "Imbalance" if truth else "Balance"

    def random_query(self, rng, alive):
        mass = Counter(s[0] for s in alive)
        suspects = sorted(mass)
        k = max(1, len(suspects) // 3)
        pick = rng.sample(suspects, min(len(suspects), 2 * k))
        left, right = pick[:k], pick[k:2 * k]
        if len(right) < len(left):  # equal sides: a normal coin from outside the suspects
            others = [c for c in range(1, self.coins + 1) if c not in mass]
            right = right + others[:len(left) - len(right)]
        return Counter(left), Counter(right)

    def write_query(self, q):
        return write_sides(q[0], q[1])

    def write_answer(self, state):
        return f"Heavy Coin {state[0]}"


class NutsBolts(Enumerated):
    """Bolt i fits one nut; a tried pair says small, large or equal (the nuts-and-bolts manual)."""

    name = "nuts and bolts"

    def __init__(self, view: BoxView, n: int, pairs: int):
        super().__init__(view)
        self.n, self.pairs = n, pairs

    def states(self):
        return list(itertools.permutations(range(1, self.n + 1)))

    def parse(self, text):
        found = re.findall(r"Bolt (\d+),\s*Nut (\d+)", text)
        return tuple((int(b), int(n)) for b, n in found) if len(found) == self.pairs else None

    def feedback(self, state, q, index):
        return "; ".join("equal" if n == state[b - 1] else "small" if n < state[b - 1] else "large" for b, n in q)

    def random_query(self, rng, alive):
        # a pair whose outcome is uncertain among a few survivors
        some = rng.sample(alive, min(len(alive), 40))
        out = []
        for _ in range(self.pairs):
            b = rng.randint(1, self.n)
            nuts = sorted({s[b - 1] for s in some})
            out.append((b, nuts[len(nuts) // 2] if rng.random() < 0.7 else rng.randint(1, self.n)))
        return tuple(out)

    def write_query(self, q):
        return "; ".join(f"Bolt {b}, Nut {n}" for b, n in q)

    def write_answer(self, state):
        return ", ".join(f"Nut {n}" for n in state)


def solver_for(view: BoxView) -> Strategy | None:
    """The enumerated solver whose manual this is, or None."""
    m = view.manual
    coins = re.search(r"There are (\d+) coins", m)
    if coins and "`Left` when the left side is heavier" in m and "lighter" in m:
        return HeavyLight(view, int(coins.group(1)))
    if coins and "lies exactly once" in m and "block of ten" in m:
        return LyingScale(view, int(coins.group(1)))
    nb = re.search(r"There are (\w+) bolts", m)
    if nb and "three bolt-nut pairs" in m:
        words = {"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
        n = words.get(nb.group(1), int(nb.group(1)) if nb.group(1).isdigit() else 0)
        if n:
            return NutsBolts(view, n, 3)
    return None
