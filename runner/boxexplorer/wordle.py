"""Word puzzles with A/M/X marks (wordle, quordle): per-letter position sets, narrowed mark by mark.

The manual's rule: a guess of n letters gets one mark per letter, `A` where the hidden word has that letter
there, `M` where it has the letter elsewhere (each of the word's letters counted once), `X` otherwise. The
marks a letter L gets depend only on where the guess puts L and on the set P_L of places the word has L, so
the state space factorises: for every hidden word and letter, the subsets of the n places that P_L may be
(2^n of them), weighted by a prior of English letter frequencies. A guess puts two letters on complementary
halves of the places (or one letter everywhere), the pair and split with the most expected bits (the sum of
the mark entropies over words and letters). A test's answer takes, per place, the letter most probably there;
a second attempt changes the least certain place to its next letter. No word list is used: the guess need not
be a word (the manual says so) and the answer is spelled from the marks.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from functools import lru_cache

from .base import History, Strategy
from .view import BoxView, TestView

# English letter frequencies (per cent), for the prior of each letter at each place.
FREQ = dict(zip("ETAOINSHRDLCUMWFGYPBVKJXQZ", (12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4,
                                                2.4, 2.2, 2.0, 2.0, 1.9, 1.5, 1.0, 0.8, 0.15, 0.15, 0.1, 0.07)))
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def shape(view: BoxView):
    """(places n, hidden words k) when the manual describes a marks puzzle, else None."""
    found = re.search(r"hides (an|four) (\d+)-letter word", view.manual)
    if not found or "`M` when" not in view.manual:
        return None
    return int(found.group(2)), 4 if found.group(1) == "four" else 1


@lru_cache(maxsize=None)
def marks(n: int, slots: int, p: int) -> str:
    """The marks of a letter put at `slots` (a bit mask) when the word has it at `p`, left to right."""
    out = []
    spare = bin(p & ~slots).count("1")  # the word's copies the guess does not hit in place
    for i in range(n):
        if not slots >> i & 1:
            continue
        if p >> i & 1:
            out.append("A")
        elif spare:
            out.append("M")
            spare -= 1
        else:
            out.append("X")
    return "".join(out)


def prior(n: int, letter: str) -> list[float]:
    f = FREQ[letter] / 100
    return [f ** bin(m).count("1") * (1 - f) ** (n - bin(m).count("1")) for m in range(1 << n)]


class Marks(Strategy):
    """See the module docstring."""

    name = "letter positions"

    def __init__(self, view: BoxView):
        super().__init__(view)
        self.n, self.k = shape(view)
        self.priors = {c: prior(self.n, c) for c in LETTERS}

    def state(self, history: History):
        """Per word, per letter: {mask: weight} of the position sets consistent with every mark."""
        st = [{c: dict(enumerate(self.priors[c])) for c in LETTERS} for _ in range(self.k)]
        for guess, out in history:
            parts = [p.strip() for p in out.split(",")]
            if len(guess) != self.n or len(parts) != self.k or any(len(p) != self.n for p in parts):
                continue
            for w, got in enumerate(parts):
                for c in set(guess):
                    if c not in LETTERS:
                        continue
                    slots = sum(1 << i for i, g in enumerate(guess) if g == c)
                    want = "".join(got[i] for i in range(self.n) if slots >> i & 1)
                    st[w][c] = {m: x for m, x in st[w][c].items() if marks(self.n, slots, m) == want}
            for w in range(self.k):  # a place known to hold one letter holds no other
                known = {c: self.sure(st[w][c]) for c in LETTERS}
                for c in LETTERS:
                    others = 0
                    for d in LETTERS:
                        if d != c:
                            others |= known[d]
                    st[w][c] = {m: x for m, x in st[w][c].items() if not m & others} or st[w][c]
        return st

    def sure(self, cands: dict) -> int:
        """Places every surviving set of this letter holds."""
        out = (1 << self.n) - 1
        for m in cands:
            out &= m
        return out if cands else 0

    def gain(self, cands: dict, slots: int) -> float:
        groups = defaultdict(float)
        for m, x in cands.items():
            groups[marks(self.n, slots, m)] += x
        total = sum(groups.values())
        return -sum(g / total * math.log2(g / total) for g in groups.values() if g) if total else 0.0

    def next_query(self, history: History) -> str:
        best, score = "", -1.0
        for guess, v in self.scored(self.state(history)):
            if v > score + 1e-12:  # the first of the best (float noise does not reorder ties)
                best, score = guess, v
        return best

    def scored(self, st) -> list[tuple[str, float]]:
        """The guesses this strategy weighs, each with its expected bits over `st` (the sum of the mark
        entropies over words and letters), in the order it weighs them (the first of the best wins)."""
        full = (1 << self.n) - 1
        half = sum(1 << i for i in range(self.n // 2))
        alt = sum(1 << i for i in range(0, self.n, 2))
        splits = [full, half, full & ~half, alt]
        info = {(c, s): sum(self.gain(st[w][c], s) for w in range(self.k)) for c in LETTERS for s in splits + [
            full & ~alt]}
        out = []
        for s in splits:
            for a in LETTERS:
                if s == full:
                    pairs = [(a, a)]
                else:
                    pairs = [(a, b) for b in LETTERS if b != a]
                for a_, b in pairs:
                    v = info[(a_, s)] + (info[(b, full & ~s)] if s != full else 0.0)
                    out.append(("".join(a_ if s >> i & 1 else b for i in range(self.n)), v))
        return out

    def spell(self, cands_by_letter: dict) -> list[tuple[float, str, str]]:
        """Per place: (certainty, best letter, next letter)."""
        out = []
        for i in range(self.n):
            p = {}
            for c, cands in cands_by_letter.items():
                total = sum(cands.values())
                p[c] = sum(x for m, x in cands.items() if m >> i & 1) / total if total else 0.0
            ranked = sorted(LETTERS, key=lambda c: -p[c])
            out.append((p[ranked[0]], ranked[0], ranked[1]))
        return out

    def answers(self, test: TestView, history: History) -> list[str]:
        st = self.state(history)
        words, second = [], []
        weakest = None
        for w in range(self.k):
            places = self.spell(st[w])
            words.append("".join(b for _, b, _ in places))
            i = min(range(self.n), key=lambda j: places[j][0])
            if weakest is None or places[i][0] < weakest[0]:
                weakest = (places[i][0], w, i, places[i][2])
        second = list(words)
        _, w, i, c = weakest
        second[w] = second[w][:i] + c + second[w][i + 1:]
        return [", ".join(words), ", ".join(second)]
