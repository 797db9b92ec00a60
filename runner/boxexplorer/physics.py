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


def num(x: float) -> str:
    """A number as the expression language writes it: the shortest form that reads back the same float, in fixed
    point (the language reads no exponent), negatives bracketed."""
    text = repr(float(x))
    if "e" in text or "inf" in text or "nan" in text:
        text = f"{float(x):.17f}".rstrip("0")
        text = text + "0" if text.endswith(".") else text
    return f"({text})" if text.startswith("-") else text


class Poly:
    """c0 t^d + ... + cd (numpy's order): rest, uniform motion, constant acceleration."""

    def __init__(self, c):
        self.c = [float(x) for x in c]

    def __call__(self, t):
        return float(np.polyval(self.c, t))

    def program(self, t: str = "t") -> str:
        d = len(self.c) - 1
        return " + ".join(num(c) if d - i == 0 else f"{num(c)} * {t}" if d - i == 1 else f"{num(c)} * {t} ** {d - i}"
                          for i, c in enumerate(self.c))


class Sine:
    """C + D t + A cos(w t) + B sin(w t)."""

    def __init__(self, w, coef):
        self.w, self.coef = float(w), [float(x) for x in coef]

    def __call__(self, t):
        c = self.coef
        return float(c[0] + c[1] * t + c[2] * np.cos(self.w * t) + c[3] * np.sin(self.w * t))

    def program(self, t: str = "t") -> str:
        c, w = self.coef, num(self.w)
        return f"{num(c[0])} + {num(c[1])} * {t} + {num(c[2])} * cos({w} * {t}) + {num(c[3])} * sin({w} * {t})"


class Coulomb:
    """An oscillator released from rest at t = 0 and slowed by sliding (Coulomb) friction: half swing n (from
    n pi / w) is a cosine about the centre x0 + d (-1)^n, its amplitude A - 2 d n, until the amplitude is spent;
    then the mass rests where its last half swing ended."""

    def __init__(self, w, x0, a, d):
        self.w, self.x0, self.a, self.d = float(w), float(x0), float(a), float(d)
        self.stop = max(0, int(np.ceil(a / (2 * d) - 1e-9)))  # the first half swing with no amplitude left
        self.rest = x0 + (-1) ** self.stop * (a - 2 * d * self.stop + d)

    def __call__(self, t):
        n = int(np.floor(self.w * t / np.pi))
        if n >= self.stop:
            return float(self.rest)
        return float(self.x0 + (self.a - 2 * self.d * n) * np.cos(self.w * t) + self.d * (-1) ** n)

    def program(self, t: str = "t") -> str:
        w = num(self.w)
        return (f"(let n = floor({w} * {t} / 3.141592653589793) in if n >= {self.stop} then {num(self.rest)} "
                f"else {num(self.x0)} + ({num(self.a)} - {num(2 * self.d)} * n) * cos({w} * {t}) "
                f"+ (if n % 2 == 0 then {num(self.d)} else {num(-self.d)}))")


class Piecewise:
    """A line through the two samples around t; past the last sample, the line through the last two."""

    def __init__(self, ts, ys):
        order = np.argsort(ts)
        self.ts, self.ys = [float(x) for x in ts[order]], [float(y) for y in ys[order]]

    def segment(self, i):
        t0, t1, y0, y1 = self.ts[i], self.ts[i + 1], self.ys[i], self.ys[i + 1]
        return t0, y0, (y1 - y0) / (t1 - t0) if t1 != t0 else 0.0

    def __call__(self, t):
        ts = self.ts
        if len(ts) == 1:
            return self.ys[0]
        if t >= ts[-1]:
            i = len(ts) - 2
        else:
            i = max(0, min(int(np.searchsorted(ts, t)) - 1, len(ts) - 2))
        t0, y0, slope = self.segment(i)
        return float(y0 + slope * (t - t0))

    def program(self, t: str = "t") -> str:
        """A call of the program's `lerp` (LERP) on the samples: short, so a box of many coordinates stays
        within a program's length."""
        return f"lerp([{', '.join(num(x) for x in self.ts)}], [{', '.join(num(y) for y in self.ys)}])"


# Piecewise's line in the expression language: i is the sample before t (the first, or the last but one).
LERP = ("let lerp = fn(T, Y) => let i = max(0, min(len(filter(fn(s) => s < t, T)) - 1, len(T) - 2)) in "
        "get(Y, i) + (get(Y, i + 1) - get(Y, i)) * (t - get(T, i)) / (get(T, i + 1) - get(T, i)) in ")


def fit_poly(ts, ys):
    for deg in (0, 1, 2):
        if len(ts) <= deg:
            break
        c = np.polyfit(ts, ys, deg)
        if np.abs(np.polyval(c, ts) - ys).max() <= TOL:
            return Poly(c)
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
            return Sine(w, coef)
    return None


def coulomb_law(w: float, ts, ys):
    """The Coulomb law of this w fitted by least squares over the samples of the first half swings (x0, A, d are
    linear given w), or None when it has no friction to speak of."""
    n = np.floor(w * ts / np.pi)
    sign = np.where(n % 2 == 0, 1.0, -1.0)
    a = np.column_stack([np.ones_like(ts), np.cos(w * ts), sign - 2 * n * np.cos(w * ts)])
    (x0, amp, d), *_ = np.linalg.lstsq(a, ys, rcond=None)
    if abs(d) < 1e-4 or amp * d <= 0:
        return None
    return Coulomb(w, x0, amp, d)


def coulomb_error(law, ts, ys):
    return max(abs(law(t) - y) for t, y in zip(ts, ys)) if law is not None else np.inf


def fit_coulomb(ts, ys):
    """The Coulomb-friction oscillator: w on the coarse grid over the early samples (before the mass can have
    stopped, so the linear fit sees only swings), refined over them, then checked on every sample with its rest."""
    early = ts <= 12.5
    if early.sum() < 7:
        return None
    te, ye = ts[early], ys[early]
    errs = [coulomb_error(coulomb_law(w, te, ye), te, ye) for w in OMEGAS]
    for i in np.argsort(errs)[:3]:
        if not np.isfinite(errs[i]):
            break
        w = OMEGAS[i]
        for span in (0.01, 0.0002, 0.000004):
            grid = np.linspace(w - span, w + span, 101)
            w = min(grid, key=lambda x: coulomb_error(coulomb_law(x, te, ye), te, ye))
        law = coulomb_law(w, te, ye)
        if coulomb_error(law, ts, ys) <= TOL_FIT:
            return law
    return None


def piecewise(ts, ys):
    return Piecewise(ts, ys)


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
                per.append(fit_poly(ts, ys) or fit_sine(ts, ys) or fit_coulomb(ts, ys) or piecewise(ts, ys))
            laws[k] = per
        return laws

    def answers(self, test: TestView, history: History) -> list[str]:
        laws = self.laws(history)
        if laws is None:
            return []
        if test.shape == "program":  # the box's output as a function of t, each coordinate by its law
            return [program(laws, rounded=False), program(laws, rounded=True)]
        if not test.values or not isinstance(test.values[0], (int, float)):
            return []
        t = float(test.values[0])
        out = {k: [round(f(t), 2) + 0.0 for f in per] for k, per in laws.items()}
        return [json.dumps(out)]


def program(laws: dict, rounded: bool) -> str:
    """`fn(t) => {"body": [x, y, z], ...}` in the expression language, each coordinate its law's expression
    (unrounded, or rounded to two decimals as the box rounds: the second attempt)."""
    def coordinate(law):
        return f"round({law.program('t')}, 2)" if rounded else law.program("t")
    body = ", ".join(f"{json.dumps(k)}: [{', '.join(coordinate(f) for f in per)}]" for k, per in laws.items())
    shared = LERP if any(isinstance(f, Piecewise) for per in laws.values() for f in per) else ""
    return f"fn(t) => {shared}{{{body}}}"
