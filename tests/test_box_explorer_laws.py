"""The box explorer's newer laws (issue 26, black boxes), unit-level on observed histories: the physics program
answers and the Coulomb-friction oscillator, the code debugger's list and conditional laws, the games' state."""
from __future__ import annotations

import json

import numpy as np

from worldspec.compiler import load_world
from worldspec.runner.boxexplorer.code import DebuggerFitter, Fitter, conditional, evaluate, inputs_env, size
from worldspec.runner.boxexplorer.games import Opponent, games_of
from worldspec.runner.boxexplorer.physics import GRID, Coulomb, PhysicsFitter, Piecewise, fit_coulomb, fit_sine, num
from worldspec.runner.boxexplorer.strategies import run_box, strategy_for
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


def test_a_formula_over_every_input_is_one_step_from_their_sum():
    rows = [inputs_env({"a": a, "b": b, "c": c, "d": d}) for a, b, c, d in ((29, 57, 57, 60), (1, 2, 3, 1),
                                                                          (59, 37, 31, 12))]
    for r in rows:
        r["new.e"] = r["in.a"] * r["in.b"] + r["in.c"] * r["in.d"]
    target = [r["new.e"] ** 2 - r["sum.in"] for r in rows]
    law = Fitter(rows, sorted(rows[0])).fit(target, "new.f")
    assert law is not None
    fresh = {**inputs_env({"a": 7, "b": 8, "c": 5, "d": 9}), "new.e": 101}
    assert evaluate(law, fresh) == 101 ** 2 - 29


def test_a_branch_no_single_law_explains_is_fitted_as_a_conditional():
    """`e = e0 - 10 if e0 > 50 else e0 + 10`: three rows, one below the branch; the law answers both sides."""
    rows = [{"prev.e": e, "in.a": a} for e, a in ((3570, 29), (5, 1), (2523, 59), (700, 40))]
    target = [e - 10 if e > 50 else e + 10 for e in (r["prev.e"] for r in rows)]
    law = conditional(rows, target, ["prev.e", "in.a"], "new.e")
    assert law is not None and law[0] == "if" and size(law[3]) == size(law[4]) == 2
    assert [evaluate(law, r) for r in rows] == target
    assert evaluate(law, {"prev.e": 4, "in.a": 1}) == 14 and evaluate(law, {"prev.e": 101, "in.a": 7}) == 91
    # the debugger fitter takes it over the coincidence a single law of more leaves than rows would be
    fitter = DebuggerFitter.__new__(DebuggerFitter)
    rows3 = [({**r, "new.e": t}, {"e": t}) for r, t in zip(rows[:3], target[:3])]
    assert fitter.fit_rows(rows3, ["e"], [])["e"][0] == "if"


def test_a_scouts_report_is_the_move_scout_and_a_repeating_cycle_is_keyed_by_its_place():
    cycle = ["load", "load", "shoot 1", "defend 1"]
    history, mine = [], ["load", "scout", "load", "defend 1", "load", "scout", "load", "load"]
    for r, (m, t) in enumerate(zip(mine, cycle * 2), 1):
        shown = m + (" (the opponent has 2 bullet(s))" if m == "scout" else "")
        history.append((m, f"Round {r}: you played {shown}, the opponent played {t}; you got 0"))
    (game,) = games_of(history)
    assert [g[1] for g in game] == mine  # the report's annotation is no part of the move
    opp = Opponent([game, game])
    assert opp.best == "mod4"  # no last move keys the next: load follows load and defend 1
    assert opp.predict(7, game[:6]).most_common(1)[0][0] == "shoot 1"
    assert opp.predict(11, []).most_common(1)[0][0] == "shoot 1"  # a round no game reached: its place in the cycle


def test_a_new_board_game_opens_with_a_move_legal_at_the_start():
    """After "The game is over" no legal moves are listed; a move illegal at round 1 would be refused (no
    observation) and sent again forever, so the next game opens with the first game's opening move."""
    box = load_world("worlds/oracle/game/gsi-h-load-shoot-defend-balance.world")
    player = strategy_for(box_view(box, turns=20, shots=2))
    legal = " Your legal moves now: load, scout, shoot 0, defend 0."
    history = [("load", "Round 1: you played load, the opponent played load; you got 0.\nRound 2 of 2." + legal),
               ("scout", "Round 2: you played scout, the opponent played load; you got 0.\nThe game is over: your "
                         "total payoff is 0.")]
    assert player.next_query(history) == "load"
    # the next game's first round, reported after "A new game ... started.", is a round of a new game
    history.append(("load", "A new game of 2 rounds started.\nRound 1: you played load, the opponent played load; "
                            "you got 0.\nRound 2 of 2. Your legal moves now: load, scout, shoot 0, shoot 1."))
    assert len(games_of(history)) == 2 and player.next_query(history) in ("load", "scout", "shoot 0", "shoot 1")
