"""Bits per query on a black box, over the finite hypothesis space its explorer's strategy holds.

A box's shape is measured when its strategy (strategies.py) holds a finite space that observations filter:

- circuit boxes (circuit.py): every gate, independently, one of the NOT/AND/OR candidates over the signals
  before it, uniformly; every query answers every gate, so a gate's candidates are filtered on their own and
  the surviving mass is the product of the survivors' counts;
- A/M/X mark puzzles (wordle.py): for every hidden word and letter, the set of places the word has the letter
  (2^n sets, weighted by English letter frequencies); a letter's marks depend on that set alone, so each
  (word, letter) factor is filtered on its own.

A query's `bits` = log2(mass before / mass after) over that space (= -log2 of the probability the space gave
its output); `best` = the bits the best of the strategy's own candidate queries was expected to remove at that
point (the entropy of its output under the space). A query the space cannot read (a rejected input, a
malformed output, the wrong length) removes 0 bits; a factor an output would leave empty (nothing in the space
explains it) keeps its survivors and counts 0 bits. Other shapes (ciphers, physics, code, games, the other
puzzles) hold no such space here: `measure_for` is None and nothing is reported.

Like the strategies, a measure is built from the box's `BoxView` only (manual, declared domains), never from
the hidden function: tests/test_box_information.py checks it.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from worldspec.compiler.api import ProbeInformation

from . import circuit, games, wordle
from .base import History
from .view import BoxView

# Circuit: draws of the gates' outputs per candidate input when a query's expected bits are estimated.
SAMPLES = 8

Query = tuple  # (input text, output text or None when the box ran nothing, units charged)


def binary_entropy(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    q = np.clip(p, 1e-12, 1 - 1e-12)
    return np.where((p <= 0) | (p >= 1), 0.0, -(q * np.log2(q) + (1 - q) * np.log2(1 - q)))


def ones_among(ops, a, b, sig: np.ndarray) -> np.ndarray:
    """How many of the candidate gates (ops, a, b) output 1 on each column of `sig` (signals x columns, 0/1):
    counted through each kind's table of signal pairs (two matrix products, not one row per candidate)."""
    k = sig.shape[0]
    low = 1.0 - sig
    tables = {}
    for op in (circuit.AND, circuit.OR):
        t = np.zeros((k, k), dtype=np.float32)
        sel = ops == op
        np.add.at(t, (a[sel], b[sel]), 1.0)
        tables[op] = t
    nots = np.bincount(a[ops == circuit.NOT], minlength=k).astype(np.float32)
    n_or = float((ops == circuit.OR).sum())
    # AND(i, j) = s_i s_j (i = j copies s_i); OR(i, j) = 1 - (1 - s_i)(1 - s_j); NOT(i) = 1 - s_i. einsum's own
    # loop, not BLAS: a threaded BLAS on a busy machine is ten times slower at these sizes
    return np.einsum("i,ic->c", nots, low) + (np.einsum("ij,jc->ic", tables[circuit.AND], sig) * sig).sum(axis=0) \
        + n_or - (np.einsum("ij,jc->ic", tables[circuit.OR], low) * low).sum(axis=0)


class CircuitMeasure:
    """The product of per-gate candidate sets (see the module docstring)."""

    shape = "circuit"

    def __init__(self, view: BoxView):
        self.strategy = circuit.CircuitLearner(view)
        self.n = self.strategy.n

    def expected_bits(self, surv, xs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """For each column of `xs` (inputs x columns), the entropy of the gates' outputs under the space, by the
        chain rule over gates: the mean over SAMPLES draws of the earlier gates' outputs (each drawn as the
        space gives it) of the sum of each gate's binary entropy given them (an unbiased estimate)."""
        cols = xs.shape[1]
        sig = np.repeat(xs.astype(np.float32), SAMPLES, axis=1)  # (input, draw) columns
        h = np.zeros(sig.shape[1])
        for g, (ops, a, b) in enumerate(surv):
            if 0 < len(ops) <= 4 * sig.shape[0]:  # few survivors (most gates, once explored): each one's value
                p = circuit.apply(ops, a, b, sig > 0.5).mean(axis=0, dtype=np.float32)
            elif len(ops):
                p = ones_among(ops, a, b, sig) / len(ops)
            else:  # nothing in the space explains this gate: it adds no measured bits
                p = np.zeros(sig.shape[1])
            h += binary_entropy(p)
            sig = np.concatenate([sig, (rng.random(sig.shape[1]) < p).astype(np.float32)[None]])
        return h.reshape(cols, SAMPLES).mean(axis=1)

    def score(self, queries: Sequence[Query]) -> list[ProbeInformation]:
        s, n = self.strategy, self.n
        history: History = []  # the (input, output) pairs the strategy reads, as history.exploration gives them
        surv = None
        out = []
        for i, (text, output, units) in enumerate(queries):
            if s.m is None and output is not None:
                s.observations([(text, output)])  # the gate count from the first readable output
            if surv is None and s.m is not None:
                surv = [s.space(n + g) for g in range(s.m)]
            best = 0.0
            if surv is not None:
                pool = s.pool(history)
                if not history:  # the strategy may open with a fixed input before it knows the gates
                    pool = pool + [circuit.input_bits(s.next_query(history), n)]
                rng = np.random.default_rng([s.view.seed, i])  # determinism: the same queries, the same bits
                best = float(self.expected_bits(surv, np.array(pool, dtype=bool).T, rng).max())
            bits = 0.0
            x = circuit.input_bits(text, n) if output is not None else None
            y = circuit.read_bits(output) if output is not None else None
            if surv is not None and x is not None and y is not None and len(y) == s.m:
                sig = np.array(x + y, dtype=bool)[:, None]
                for g, (ops, a, b) in enumerate(surv):
                    keep = (circuit.apply(ops, a, b, sig[: n + g]) == sig[n + g])[:, 0]
                    if keep.any():
                        bits += math.log2(len(ops) / int(keep.sum()))
                        surv[g] = (ops[keep], a[keep], b[keep])
            if output is not None:
                history.append((text, output))
            out.append(ProbeInformation(index=i, units=units, bits=round(bits, 6), best=round(max(best, 0.0), 6)))
        return out


class MarksMeasure:
    """Per (word, letter), the weighted sets of places the word has the letter (see the module docstring)."""

    shape = "marks"

    def __init__(self, view: BoxView):
        self.strategy = wordle.Marks(view)
        self.n, self.k = self.strategy.n, self.strategy.k

    def score(self, queries: Sequence[Query]) -> list[ProbeInformation]:
        s, n, k = self.strategy, self.n, self.k
        st = [{c: dict(enumerate(s.priors[c])) for c in wordle.LETTERS} for _ in range(k)]
        out = []
        for i, (text, output, units) in enumerate(queries):
            best = max((v for _, v in s.scored(st)), default=0.0)
            bits = 0.0
            guess = (text or "").strip()
            parts = [p.strip() for p in output.split(",")] if output is not None else []
            if len(guess) == n and len(parts) == k and all(len(p) == n and set(p) <= set("AMX") for p in parts):
                for w, got in enumerate(parts):
                    for c in set(guess):
                        if c not in wordle.LETTERS:
                            continue
                        slots = sum(1 << j for j, g in enumerate(guess) if g == c)
                        want = "".join(got[j] for j in range(n) if slots >> j & 1)
                        kept = {m: x for m, x in st[w][c].items() if wordle.marks(n, slots, m) == want}
                        before, after = sum(st[w][c].values()), sum(kept.values())
                        if after > 0:
                            bits += math.log2(before / after)
                            st[w][c] = kept
            out.append(ProbeInformation(index=i, units=units, bits=round(bits, 6), best=round(best, 6)))
        return out


def measure_for(view: BoxView):
    """The measure of this box's shape, or None when its strategy holds no finite space (nothing reported).
    The same dispatch as strategies.strategy_for, restricted to the measured shapes."""
    if games.applies(view):
        return None
    if view.answer_domain is not None:
        return MarksMeasure(view) if wordle.shape(view) is not None else None
    if circuit.applies(view):
        return CircuitMeasure(view)
    return None


def box_information(view: BoxView, queries: Sequence[Query]) -> list[ProbeInformation] | None:
    """[ProbeInformation] for one exploration's queries (input, output or None, units), or None when the box's
    shape is not measured."""
    measure = measure_for(view)
    return None if measure is None else measure.score(list(queries))
