"""The physical-law laboratory (issue 24): scientific literals, a relative tolerance over 1e-12 .. 1e12."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import box_world, checked

LAB = str(Path(__file__).resolve().parent / "worlds" / "lang3" / "physics-lab.world")
P, K = 2.1, 9.4e9  # the lab's declared defaults: the distance exponent of gravity (R1), Coulomb's constant (R2)
TOLERANCE = 1e-6  # `within 1e-6, relative`
TESTS = [("gravity", 1.0, 1.0, 8.0), ("gravity", 70.0, 70.0, 0.5), ("gravity", 1e12, 1e12, 8.0),
         ("coulomb", 1.602e-19, -1.602e-19, 5.29e-11), ("coulomb", 1e-9, 1e-9, 2.5), ("coulomb", 3.0, 4.0, 0.3)]
TINY, HUGE = "t1", "t6"  # 8.47e-13 N and 1.25e12 N


def force(law: str, a: float, b: float, r: float, exponent: float, k: float) -> float:
    """The lab's laws, restated in Python."""
    return (6.674e-11 * a * b / r ** exponent) if law == "gravity" else k * a * b / r ** 2


@pytest.fixture(scope="module")
def lab():
    return box_world(LAB)


def test_the_lab_certifies_with_both_rules_observable_and_required():
    report = checked(LAB)  # `worldspec check LAB --json`, exit 0
    assert report["problems"] == [] and report["params"] == {"P": P, "K": K}
    rules = {r["id"]: r for r in report["rule_table"]}
    assert rules["R1"]["observable"] and rules["R1"]["tasks"] == ["t1", "t2", "t3"]
    assert rules["R2"]["observable"] and rules["R2"]["tasks"] == ["t4", "t5", "t6"]


def test_the_answers_are_the_perturbed_laws_and_span_twenty_four_orders_of_magnitude(lab):
    expected = [t.expected for t in lab.tests]
    assert expected == pytest.approx([force(*q, P, K) for q in TESTS], rel=1e-12)
    sizes = sorted(abs(v) for v in expected)
    assert sizes[0] < 1e-12 and sizes[-1] > 1e12
    # the manual's answers are Newton's and Coulomb's laws as documented, and every one of them is wrong
    assert [float(t.naive) for t in lab.tasks] == pytest.approx([force(*q, 2, 8.988e9) for q in TESTS], rel=1e-9)
    assert not any(lab.verify(t.id, t.naive).passed for t in lab.tasks)


@pytest.mark.parametrize("task", [TINY, HUGE])
def test_a_relative_tolerance_holds_at_both_ends(lab, task):
    want = next(t.expected for t in lab.tests if t.id == task)
    assert lab.verify(task, repr(want)).passed
    for factor in (1 + TOLERANCE / 2, 1 - TOLERANCE / 2):
        assert lab.verify(task, repr(want * factor)).passed, factor
    for factor in (1 + 2 * TOLERANCE, 1 - 2 * TOLERANCE, 1.01, -1):
        assert not lab.verify(task, repr(want * factor)).passed, factor


def test_zero_is_not_within_a_relative_tolerance_of_a_tiny_force(lab):
    assert not lab.verify(TINY, "0").passed and not lab.verify(TINY, "0.0").passed
    assert not lab.verify(TINY, "1e-20").passed


@pytest.mark.parametrize("r", [8.0, 1.5, 0.9, 0.2, 0.03, 4e-3, 6e-4, 2.5e-4, 1e-5, 3e-7, 2e-8])
def test_every_shown_force_is_accepted_as_its_own_answer(lab, r):
    """Outputs from 1e-12 to 1e13 N, the 1e-3 decade among them (where a float is shown with the fewest
    significant digits): what the agent reads, sent back, is within the tolerance of the true force."""
    for law, a, b in (("gravity", 1.0, 1.0), ("coulomb", 1e-6, 1e-6)):
        query = f'"{law}", {a!r}, {b!r}, {r!r}'
        shown = lab.probe(query).text
        true = force(law, a, b, r, P, K)
        assert lab.grading.matches(true, shown), (query, shown, true)
        assert abs(float(shown) - true) <= TOLERANCE / 2 * abs(true), (query, shown, true)


def test_the_manual_writes_wide_bounds_as_numbers_and_the_box_refuses_outside_them(lab):
    """A bound of 1e30 was printed as its binary expansion, 1000000000000000019884624838656."""
    manual = lab.manual
    assert "`a`: a number from -1e+30 to 1e+30." in manual and "6.674e-11" in manual
    fb = lab.probe('"gravity", 1e31, 1.0, 1.0')
    assert fb.status == "rejected" and "1e+31 is outside -1e+30..1e+30" in fb.text
    assert lab.probe('"gravity", -1.0, 1.0, 1.0').text.startswith("rejected: masses are positive")
