"""Physics boxes (PSI): each coordinate of each body as a law of time, its constants fitted from samples.

The manual says the box answers the bodies' positions at a time t. The strategy samples t on a grid (whole
seconds early, then 20, 50 and 100 s, then uneven times that keep a fast oscillation from aliasing), and per
coordinate fits, in order, the laws that explain every sample within the rounding of the box's outputs: a
polynomial of degree 0 to 2 (rest, uniform motion, constant acceleration), then a sinusoid with an optional
drift, C + D t + A cos(w t) + B sin(w t) (oscillations, circles, rolling), w searched on a coarse grid and
refined. A coordinate no law explains is predicted piecewise: a line through the two samples around t
(collisions make motion piecewise uniform), and past the last sample, the line through the last two.
"""
from __future__ import annotations

import json
import re

import numpy as np

from .base import History, Strategy
from .view import BoxView, TestView, plain_domain

# Whole seconds, far times, then uneven ones: samples on one regular grid alias a fast oscillation to a slow one.
GRID = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 100.0, 50.0, 20.0, 0.3, 0.7, 1.3, 2.9,
        4.4, 5.6, 6.5, 7.5)
TOL = 0.0051  # the box writes two decimals: a law must reproduce every sample within its rounding
TOL_FIT = 0.009  # a least-squares law over rounded samples: their rounding plus the fit's own error
OMEGAS = np.linspace(0.05, 25.0, 2500)


def applies(view: BoxView) -> bool:
    """A box of one time input whose manual speaks of positions."""
    if len(view.inputs) != 1 or view.family != "PSI":
        return False
    d = plain_domain(view.inputs[0][1])
    return type(d).__name__ in ("PyFloatDomain", "FloatDomain")


def read(out: str):
    try:
        v = json.loads(out)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def fit_poly(ts, ys):
    for deg in (0, 1, 2):
        if len(ts) <= deg:
            break
        c = np.polyfit(ts, ys, deg)
        if np.abs(np.polyval(c, ts) - ys).max() <= TOL:
            return lambda t, c=c: float(np.polyval(c, t))
    return None


def sine_error(w: float, ts, ys):
    a = np.column_stack([np.ones_like(ts), ts, np.cos(w * ts), np.sin(w * ts)])
    coef, *_ = np.linalg.lstsq(a, ys, rcond=None)
    return float(np.abs(a @ coef - ys).max()), coef


def fit_sine(ts, ys):
    """The sinusoid law: w found on a coarse grid over the early samples, then refined over all of them."""
    early = ts <= 12.5
    if early.sum() < 6:
        return None
    te, ye = ts[early], ys[early]
    errs = [sine_error(w, te, ye)[0] for w in OMEGAS]
    for i in np.argsort(errs)[:3]:
        w = OMEGAS[i]
        for span in (0.01, 0.0002, 0.000004):
            grid = np.linspace(w - span, w + span, 101)
            w = min(grid, key=lambda x: sine_error(x, ts, ys)[0])
        err, coef = sine_error(w, ts, ys)
        if err <= TOL_FIT:
            return lambda t, w=w, coef=coef: float(coef[0] + coef[1] * t + coef[2] * np.cos(w * t)
                                                    + coef[3] * np.sin(w * t))
    return None


def piecewise(ts, ys):
    order = np.argsort(ts)
    ts, ys = ts[order], ys[order]

    def f(t):
        if t >= ts[-1]:
            i = len(ts) - 2
        else:
            i = max(0, min(int(np.searchsorted(ts, t)) - 1, len(ts) - 2))
        t0, t1, y0, y1 = ts[i], ts[i + 1], ys[i], ys[i + 1]
        return float(y0 + (y1 - y0) * (t - t0) / (t1 - t0)) if t1 != t0 else float(y0)
    return f


class PhysicsFitter(Strategy):
    """See the module docstring."""

    name = "laws of time"

    def samples(self, history: History):
        out = []
        for q, o in history:
            try:
                t = float(q)
            except ValueError:
                continue
            v = read(o)
            if v is not None:
                out.append((t, v))
        return out

    def next_query(self, history: History) -> str:
        sent = {q for q, _ in history}
        d = plain_domain(self.view.inputs[0][1])
        lo, hi = getattr(d, "lo", None), getattr(d, "hi", None)
        for t in GRID:
            if (lo is None or t >= lo) and (hi is None or t <= hi) and repr(t) not in sent:
                return repr(t)
        return repr(float(len(history)) + 0.25)

    def laws(self, history: History):
        key = tuple(history)
        if getattr(self, "memo_key", None) != key:
            self.memo_key, self.memo = key, self.fit(history)
        return self.memo

    def fit(self, history: History):
        data = self.samples(history)
        if not data:
            return None
        keys = list(data[0][1])
        ts = np.array([t for t, _ in data], dtype=float)
        laws = {}
        for k in keys:
            rows = [v.get(k) for _, v in data]
            if not all(isinstance(r, list) and len(r) == len(rows[0]) for r in rows):
                return None
            per = []
            for j in range(len(rows[0])):
                ys = np.array([float(r[j]) for r in rows])
                per.append(fit_poly(ts, ys) or fit_sine(ts, ys) or piecewise(ts, ys))
            laws[k] = per
        return laws

    def answers(self, test: TestView, history: History) -> list[str]:
        if not test.values or not isinstance(test.values[0], (int, float)):
            return []
        laws = self.laws(history)
        if laws is None:
            return []
        t = float(test.values[0])
        out = {k: [round(f(t), 2) + 0.0 for f in per] for k, per in laws.items()}
        return [json.dumps(out)]
