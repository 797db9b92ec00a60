"""Circuit boxes (CRI): the gates learned one by one from their observed outputs.

What the manual says, and all this strategy assumes: `n` input wires, then gates in order, each an AND or OR of
two earlier signals or a NOT of one, and every query answers the outputs of all gates. Because every gate's
output is observed, each gate's hypothesis space (every NOT of one earlier signal, every AND and OR of two) is
narrowed on its own: a candidate survives when it reproduces the gate's output on every query. A query is the
input, among random and structured bit vectors, whose predicted outputs split the survivors most (the sum over
gates of the binary entropy of the survivors' vote); a test's answer evaluates the gates in order, each by its
survivors' majority, and a second attempt flips the least certain gate (and recomputes the gates after it).
"""
from __future__ import annotations

import json
import re

import numpy as np

from .base import History, Strategy
from .view import BoxView, TestView, plain_domain

NOT, AND, OR = 0, 1, 2
CANDIDATE_INPUTS = 192  # inputs scored for each query


def wires(view: BoxView) -> int | None:
    """The number of input bits the declared domain takes (a list of n integers 0..1), or None."""
    if len(view.inputs) != 1:
        return None
    d = plain_domain(view.inputs[0][1])
    el = getattr(d, "element", None)
    if el is None or getattr(el, "lo", None) != 0 or getattr(el, "hi", None) != 1 or d.lo != d.hi:
        return None
    return d.lo


def applies(view: BoxView) -> bool:
    """A box of AND/OR/NOT gates whose input is a fixed number of bits."""
    return wires(view) is not None and "AND" in view.manual and "gate" in view.manual


def candidates(k: int):
    """Every gate over the first k signals: (ops, a, b) arrays (NOT uses a only)."""
    ops, a, b = [], [], []
    for i in range(k):
        ops.append(NOT); a.append(i); b.append(i)
        ops.append(AND); a.append(i); b.append(i)  # a gate fed twice by one signal copies it
        for j in range(i + 1, k):
            for op in (AND, OR):
                ops.append(op); a.append(i); b.append(j)
    return np.array(ops, dtype=np.int8), np.array(a, dtype=np.int32), np.array(b, dtype=np.int32)


def apply(ops, a, b, sig) -> np.ndarray:
    """Each candidate's output on each column of `sig` (signals x columns, bool): candidates x columns."""
    x, y = sig[a], sig[b]
    return np.where((ops == NOT)[:, None], ~x, np.where((ops == AND)[:, None], x & y, x | y))


def read_bits(text: str) -> list[int] | None:
    """An output such as `[0, 1, 1]` as a list of bits, or None."""
    try:
        v = json.loads(text)
    except ValueError:
        return None
    if isinstance(v, list) and all(x in (0, 1) for x in v):
        return [int(x) for x in v]
    return None


def input_bits(text: str, n: int) -> list[int] | None:
    """An input this strategy sent, read back."""
    bits = [int(c) for c in re.findall(r"[01]", text)]
    return bits if len(bits) == n else None


class CircuitLearner(Strategy):
    """See the module docstring."""

    name = "circuit gates"

    def __init__(self, view: BoxView):
        super().__init__(view)
        self.n = wires(view)
        found = re.search(r"outputs of all (\d+) gates", view.manual)
        self.m = int(found.group(1)) if found else None
        self.spaces: dict[int, tuple] = {}

    def space(self, k: int):
        if k not in self.spaces:
            self.spaces[k] = candidates(k)
        return self.spaces[k]

    def observations(self, history: History):
        rows = []
        for sent, out in history:
            x, y = input_bits(sent, self.n), read_bits(out)
            if x is not None and y is not None:
                rows.append((x, y))
        if rows and self.m is None:
            self.m = len(rows[0][1])
        return [r for r in rows if len(r[1]) == (self.m or len(r[1]))]

    def survivors(self, history: History):
        """Per gate: the candidates that reproduce its output on every observation, and its observed mean."""
        rows = self.observations(history)
        m = self.m or 0
        if not rows:
            return [self.space(self.n + g) for g in range(m)], [0.5] * m
        sig = np.array([x + y for x, y in rows], dtype=bool).T  # signals x observations
        out, means = [], []
        for g in range(m):
            ops, a, b = self.space(self.n + g)
            keep = (apply(ops, a, b, sig[: self.n + g]) == sig[self.n + g]).all(axis=1)
            out.append((ops[keep], a[keep], b[keep]))
            means.append(float(sig[self.n + g].mean()))
        return out, means

    def predict(self, surv, means, xs: np.ndarray, flip: int | None = None):
        """Signals for the columns of `xs` (inputs x columns), gates by majority; (gate values, confidence)."""
        sig = np.zeros((self.n + len(surv), xs.shape[1]), dtype=bool)
        sig[: self.n] = xs
        conf = np.zeros((len(surv), xs.shape[1]))
        for g, (ops, a, b) in enumerate(surv):
            if len(ops):
                p = apply(ops, a, b, sig[: self.n + g]).mean(axis=0)
            else:  # nothing explains the gate: its usual value
                p = np.full(xs.shape[1], means[g])
            val = p >= 0.5
            if flip == g:
                val = ~val
            sig[self.n + g] = val
            conf[g] = p
        return sig[self.n:], conf

    def pool(self, history: History) -> list[list[int]]:
        """The inputs scored for the next query: random and structured bit vectors not sent yet."""
        rng = self.rng(history, "query")
        sent = {tuple(x) for x, _ in self.observations(history)}
        pool = [[rng.randint(0, 1) for _ in range(self.n)] for _ in range(CANDIDATE_INPUTS)]
        pool += [[0] * self.n, [1] * self.n] + [[int(i == j) for i in range(self.n)] for j in range(self.n)]
        return [x for x in pool if tuple(x) not in sent] or pool

    def next_query(self, history: History) -> str:
        if self.m is None and not history:
            return json.dumps([1, 0] * (self.n // 2) + [1] * (self.n % 2)).replace(",", ", ")
        surv, means = self.survivors(history)
        pool = self.pool(history)
        xs = np.array(pool, dtype=bool).T
        _, conf = self.predict(surv, means, xs)
        p = np.clip(conf, 1e-9, 1 - 1e-9)
        gain = -(p * np.log2(p) + (1 - p) * np.log2(1 - p)).sum(axis=0)
        best = pool[int(np.argmax(gain))]
        return "[" + ", ".join(map(str, best)) + "]"

    def answers(self, test: TestView, history: History) -> list[str]:
        x = list(test.values[0]) if test.values else None
        if not isinstance(x, list) or len(x) != self.n:
            return []
        surv, means = self.survivors(history)
        if not surv:
            return []
        xs = np.array([x], dtype=bool).T
        vals, conf = self.predict(surv, means, xs)
        first = [int(v) for v in vals[:, 0]]
        weakest = int(np.argmin(np.abs(conf[:, 0] - 0.5)))
        vals2, _ = self.predict(surv, means, xs, flip=weakest)
        second = [int(v) for v in vals2[:, 0]]
        return [json.dumps(first).replace(",", ", "), json.dumps(second).replace(",", ", ")]
