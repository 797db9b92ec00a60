"""Metric definitions of explorationbench.txt 3.3 / A.6, as tables and properties."""
from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldspec.runner import metrics


def ms(*accs):
    out = []
    for t, a in enumerate(accs):
        f = Fraction(a)
        out.append({"t": t, "accuracy": float(f), "accuracy_num": f.numerator,
                    "accuracy_den": f.denominator})
    return out


def traj(r, *accs):
    return {"trajectory": r, "milestones": ms(*accs)}


def test_accuracy_is_mean_over_tasks_of_mean_over_answers():
    v = {"A": [1, 1, 0], "B": [0, 0, 0], "C": [1, 1, 1]}
    s = metrics.milestone_accuracy(v, 3)
    assert Fraction(s["accuracy_num"], s["accuracy_den"]) == Fraction(100, 3) * Fraction(2 + 0 + 3, 3)
    assert s["passes"] == [pytest.approx(200 / 3), pytest.approx(200 / 3), pytest.approx(100 / 3)]
    passes = [200 / 3, 200 / 3, 100 / 3]
    m = sum(passes) / 3
    assert s["sigma"] == pytest.approx(math.sqrt(sum((p - m) ** 2 for p in passes) / 3), abs=1e-6)
    assert s["lost"] == 0


def test_lost_answers_are_left_out_not_scored_wrong():
    s = metrics.milestone_accuracy({"A": [1, None, 1], "B": [None, None, None], "C": [0, 0, 0]}, 3)
    assert s["lost"] == 4
    # A counts as 1 (two of two answered), B is left out, C is 0 -> 50%
    assert s["accuracy"] == 50.0
    assert s["passes"] == [50.0, 0.0, 50.0]


@pytest.mark.parametrize("endpoints,best,r_star,mean,worst", [
    ([50, 70, 70], 70, 2, 190 / 3, 50),     # tie: the lowest index wins
    ([80, 10, 80], 80, 1, 170 / 3, 10),
    ([0], 0, 1, 0, 0),
    ([Fraction(200, 3), Fraction(200, 3) + Fraction(1, 10**9), 10], float(Fraction(200, 3) + Fraction(1, 10**9)), 2, None, 10),
])
def test_best_at_n(endpoints, best, r_star, mean, worst):
    trajs = [traj(i + 1, 0, e) for i, e in enumerate(endpoints)]
    b = metrics.best_of(list(reversed(trajs)))  # order of the input does not matter
    assert b["best"] == pytest.approx(best)
    assert b["best_trajectory"] == r_star
    assert b["worst"] == pytest.approx(worst)
    if mean is not None:
        assert b["mean"] == pytest.approx(mean)
    assert b["n"] == len(endpoints)


def test_exact_ties_are_compared_as_fractions():
    # 1/3 of 100 reached two ways; floats would differ in the last digit
    a = traj(1, 0, Fraction(100, 3))
    b = traj(2, 0, Fraction(200, 6))
    assert metrics.best_of([b, a])["best_trajectory"] == 1


@pytest.mark.parametrize("accs,gain,share,regression", [
    ([10, 20, 30, 40, 50], 40, 0.25, False),
    ([10, 50, 50, 50, 50], 40, 1.0, False),
    ([10, 60, 40, 50, 50], 40, 1.25, True),   # the largest step may exceed the retained gain
    ([10, 60, 40, 50, 57], 47, 50 / 47, True),   # 57 <= 60 - 3: a regression
    ([10, 60, 40, 50, 57.5], 47.5, 50 / 47.5, False),  # 2.5 points below: not a regression
    ([30, 20, 20, 20, 20], -10, None, True),
    ([20, 20], 0, None, False),
])
def test_dynamics(accs, gain, share, regression):
    d = metrics.trajectory_dynamics(ms(*[Fraction(str(a)) for a in accs]))
    assert d["gain"] == pytest.approx(gain)
    assert (d["largest_step_share"] is None) == (share is None)
    if share is not None:
        assert d["largest_step_share"] == pytest.approx(share, abs=1e-6)
    assert d["regression"] is regression
    assert sum(d["steps"]) == pytest.approx(gain)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.lists(st.integers(0, 1), min_size=3, max_size=3), min_size=1, max_size=12))
def test_accuracy_equals_mean_of_passes(rows):
    v = {f"T{i}": r for i, r in enumerate(rows)}
    s = metrics.milestone_accuracy(v, 3)
    assert s["accuracy"] == pytest.approx(sum(s["passes"]) / 3, abs=1e-5)
    assert 0 <= s["accuracy"] <= 100
    assert s["sigma"] >= 0


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=6))
def test_best_is_max_and_lowest_index(ends):
    trajs = [traj(i + 1, 0, Fraction(100 * e, 6)) for i, e in enumerate(ends)]
    b = metrics.best_of(trajs)
    assert b["best_trajectory"] == ends.index(max(ends)) + 1
    assert b["worst"] <= b["mean"] <= b["best"]


def test_a_missing_api_key_fails_fast_instead_of_being_retried():
    # litellm reports a missing key as an HTTP 500; retrying can never fix it
    from worldspec.runner.models import FatalError, TransientError, classify_provider_error

    class InternalServerError(Exception):
        status_code = 500

    missing = InternalServerError("OpenAIException - Missing credentials. Please pass an `api_key`")
    err = classify_provider_error(missing)
    assert isinstance(err, FatalError) and "OPENAI_API_KEY" in str(err)
    assert isinstance(classify_provider_error(InternalServerError("upstream crashed")), TransientError)
