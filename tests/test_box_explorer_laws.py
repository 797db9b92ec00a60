"""The box explorer's newer laws (issue 26, black boxes), unit-level on observed histories: the physics program
answers and the Coulomb-friction oscillator, the code debugger's list and conditional laws, the games' state."""
from __future__ import annotations

import json

import numpy as np

from worldspec.compiler import load_world
from worldspec.runner.boxexplorer.physics import GRID, Coulomb, PhysicsFitter, Piecewise, fit_coulomb, fit_sine, num
from worldspec.runner.boxexplorer.strategies import run_box
from worldspec.runner.boxexplorer.view import box_view
from worldspec.runner.learnability import box_query


def test_a_coulomb_oscillator_is_fitted_from_its_samples_and_generalises():
    truth = Coulomb(7.0, 0.1, 0.8, 0.015)  # stops after ceil(0.8 / 0.03) = 27 half swings, about 12.1 s
    ts = np.array([t for t in GRID if t <= 12.5] + [20.0, 50.0, 100.0])
    ys = np.round([truth(t) for t in ts], 2)
    assert fit_sine(ts, ys) is None  # a decaying swing is no sinusoid
    law = fit_coulomb(ts, ys)
    assert law is not None and law.stop == truth.stop
    for t in (1.7, 3.8, 5.2, 10.7, 80.0):  # times never sampled, before and after the mass stops
        assert abs(law(t) - truth(t)) < 0.01, t


def test_numbers_are_written_without_exponents():
    assert num(1e-7) == "0.0000001" and num(-2.5) == "(-2.5)" and num(3.0) == "3.0" and "e" not in num(2.5e-12)


def test_a_program_box_is_answered_with_a_program_our_interpreter_grades():
    """The PSI program boxes: the answer is an expression-language function of t, run on the hidden test times
    (the view shows none of them)."""
    box = load_world("worlds/oracle/physics/psi-h-harmonic-friction.world")
    view = box_view(box, turns=20, shots=2)
    assert [t.values for t in view.tests] == [()]
    answers = run_box(view, box_query(box))["program"]
    assert answers[0].startswith("fn(t) => ") and "floor(" in answers[0]  # the Coulomb law, not a table
    assert box.verify("program", answers[0], "lenient").score == 1.0


def test_a_piecewise_law_is_written_as_a_lerp_call_that_agrees_with_it():
    box = load_world("worlds/oracle/physics/psi-h-ball-air-resistance.world")
    view = box_view(box, turns=20, shots=2)
    history = [(repr(t), box_query(box)(None, repr(t))) for t in GRID[:20]]
    strategy = PhysicsFitter(view)
    law = strategy.laws(history)["object1"][1]
    assert isinstance(law, Piecewise)
    program = strategy.answers(view.tests[0], history)[0]
    assert "lerp([" in program and len(program) < 1500
    verdict = box.verify("program", program, "lenient")
    assert verdict.score >= 4 / 6  # the late, terminal-velocity times; the early curve is not a line
    for case in verdict.cases:  # the interpreter's value is the fitter's own
        assert abs(json.loads(case.got)["object1"][1] - law(case.inputs[0])) < 1e-9
