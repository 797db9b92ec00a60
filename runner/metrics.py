"""Exact metrics of explorationbench.txt section 3.3 and appendix A.6.

* M_{r,t}: 100/|T| * sum over tasks of the mean of that task's answers'
  verdicts (eq. 2). An answer lost to infrastructure is not a wrong answer:
  it is left out of its task's mean (and the milestone is marked invalid).
* per-pass scores M^(k)_{r,t} and sigma_{r,t}: their standard deviation
  (population form, ddof=0, over the k passes).
* Best@n = max_r M_{r,N}; r* = the lowest index among the maxima (eq. 3),
  compared exactly (fractions, not floats). Mean@n, worst.
* steps s_{r,t} = M_{r,t} - M_{r,t-1}; retained gain G_r = M_{r,N} - M_{r,0}
  (eq. 8); share of G_r carried by the largest step (defined when G_r > 0);
  regression: the trajectory ends at least 3 points below an earlier milestone.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Mapping, Sequence

REGRESSION_POINTS = 3


def milestone_accuracy(verdicts: Mapping[str, Sequence[int | None]], answers: int) -> dict:
    """Scores of one milestone from {task: [y_1..y_A]} (None = lost)."""
    per_task: list[Fraction] = []
    passes_num = [0] * answers
    passes_den = [0] * answers
    lost = 0
    for ys in verdicts.values():
        got = [y for y in ys if y is not None]
        lost += len(ys) - len(got)
        if got:
            per_task.append(Fraction(sum(got), len(got)))
        for k, y in enumerate(ys[:answers]):
            if y is not None:
                passes_num[k] += y
                passes_den[k] += 1
    acc = Fraction(100) * sum(per_task, Fraction(0)) / len(per_task) if per_task else Fraction(0)
    passes = [Fraction(100 * n, d) if d else Fraction(0) for n, d in zip(passes_num, passes_den)]
    return {
        "accuracy": _f(acc),
        "accuracy_num": acc.numerator,
        "accuracy_den": acc.denominator,
        "passes": [_f(p) for p in passes],
        "sigma": _f(pstdev(passes)),
        "lost": lost,
    }


def pstdev(xs: Sequence[Fraction | float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(float(sum((x - m) ** 2 for x in xs) / len(xs)))


def _f(x) -> float:
    return round(float(x), 6)


def exact(m: Mapping) -> Fraction:
    """A milestone's accuracy as an exact fraction (falls back to the float)."""
    if "accuracy_num" in m and "accuracy_den" in m and m["accuracy_den"]:
        return Fraction(m["accuracy_num"], m["accuracy_den"])
    return Fraction(str(m["accuracy"]))


def endpoint(traj: Mapping) -> Fraction | None:
    ms = traj.get("milestones") or []
    return exact(ms[-1]) if ms else None


def trajectory_dynamics(milestones: Sequence[Mapping]) -> dict:
    """Steps, retained gain, largest-step share and regression of one trajectory."""
    if not milestones:
        return {"gain": None, "steps": [], "largest_step_share": None, "regression": False}
    ms = sorted(milestones, key=lambda m: m["t"])
    acc = [exact(m) for m in ms]
    steps = [acc[i] - acc[i - 1] for i in range(1, len(acc))]
    gain = acc[-1] - acc[0]
    share = None
    if steps and gain > 0:
        share = _f(max(steps) / gain)
    regression = any(acc[-1] <= a - REGRESSION_POINTS for a in acc[:-1])
    return {"gain": _f(gain), "steps": [_f(s) for s in steps],
            "largest_step_share": share, "regression": regression}


def best_of(trajectories: Sequence[Mapping]) -> dict:
    """Best@n, r*, Mean@n and worst over finished trajectories of one group.

    Trajectories are ordered by their index; r* is the lowest index among
    those whose endpoint equals the maximum exactly."""
    scored = [(t["trajectory"], endpoint(t), t) for t in trajectories if endpoint(t) is not None]
    if not scored:
        return {"best": None, "mean": None, "worst": None, "n": 0, "best_trajectory": None}
    scored.sort(key=lambda x: x[0])
    best_val = max(s[1] for s in scored)
    r_star = next(s for s in scored if s[1] == best_val)
    vals = [s[1] for s in scored]
    return {
        "best": _f(best_val),
        "mean": _f(sum(vals) / len(vals)),
        "worst": _f(min(vals)),
        "n": len(scored),
        "best_trajectory": r_star[0],
        "endpoints": [_f(v) for v in vals],
        "best_record": r_star[2],
    }
