"""The game engine and the exact optimum: classic baselines, horizons, DP against brute force."""
from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import given, settings, strategies as st

from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.game.engine import (COLUMN, ROW, Game, Strategy, cooperation_stats, expected_score,
                                            horizon_draw, optimum, play_sequence, play_strategies)
from worldspec.compiler.suite import world_files
from worldspec.parser import parse_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRUST = os.path.join(ROOT, "worlds", "interactive", "trust.world")


def trust_cd(seed=None):
    """The Trust Game with one-letter moves C and D (the engine's tests read moves as letters)."""
    with open(TRUST, encoding="utf-8") as f:
        text = f.read().replace('"COOPERATE"', '"C"').replace('"DEFECT"', '"D"')
    return compile_spec(parse_spec(text, TRUST), seed)


@pytest.fixture(scope="module")
def trust():
    return trust_cd()


def total(rounds):
    return sum(r.my_payoff for r in rounds)


def test_tit_for_tat_against_grim_trigger_cooperates_throughout(trust):
    tft, grim = trust.strategy("tft"), trust.strategy("grim")
    for seat in (ROW, COLUMN):
        for k in range(trust.matches):
            h = trust.horizon_for("grim", seat, k)
            rounds = play_strategies(trust.game, tft, grim, seat, h, trust.match_key("grim", seat, k))
            assert len(rounds) == h
            assert all(r.mine == "C" and r.theirs == "C" for r in rounds)
            assert total(rounds) == 2 * h  # CC pays 2 a round


@pytest.mark.parametrize("h", [1, 2, 5, 17])
def test_always_defect_against_tit_for_tat_scores_as_the_matrix_says(trust, h):
    alld, tft = trust.strategy("alld"), trust.strategy("tft")
    for seat in (ROW, COLUMN):
        rounds = play_strategies(trust.game, alld, tft, seat, h, "k")
        # round 1: D against C pays DC = 3 (the other gets -1); afterwards DD = 0 for both
        assert [r.theirs for r in rounds] == ["C"] + ["D"] * (h - 1)
        assert total(rounds) == 3 and sum(r.their_payoff for r in rounds) == -1
        # betrayal: defecting right after a round in which the other cooperated (round 2 here)
        stats = cooperation_stats(rounds, "C")
        chances = 1 if h > 1 else 0
        assert stats["cooperations"] == 0 and stats["betrayals"] == stats["betrayal_chances"] == chances


def test_the_payoff_matrix_is_read_from_the_spec(trust):
    g = trust.game
    assert [g.payoff(ROW, a, b) for a, b in (("C", "C"), ("D", "D"), ("D", "C"), ("C", "D"))] == [2, 0, 3, -1]
    assert g.payoff(COLUMN, "D", "C") == 3 and g.payoff(COLUMN, "C", "D") == -1


def test_the_same_seed_gives_the_same_horizons():
    a, b = trust_cd(), trust_cd()
    ha = [a.horizon_for(o, s, k) for o, s, k in a.schedule()]
    assert ha == [b.horizon_for(o, s, k) for o, s, k in b.schedule()]
    assert len(set(ha)) > 3 and min(ha) >= 1 and max(ha) <= a.max_rounds
    other = trust_cd(seed=7)
    assert [other.horizon_for(o, s, k) for o, s, k in other.schedule()] != ha
    # the random opponent plays the same stream against every player
    rnd = a.strategy("random")
    seqs = {tuple(r.theirs for r in play_strategies(a.game, a.strategy(p), rnd, ROW, 12, "same-key"))
            for p in ("allc", "alld")}
    assert len(seqs) == 1


def test_horizons_follow_the_continuation_probability():
    hs = [horizon_draw(0.9, 1000, f"h{i}") for i in range(4000)]
    mean = sum(hs) / len(hs)
    assert 9.0 < mean < 11.0  # E[T] = 1 / (1 - delta) = 10
    assert horizon_draw(0.9, 3, "x") <= 3 and horizon_draw(0.0, 50, "x") == 1


# ---------------------------------------------------------------- the optimum against brute force


PD = Game(("C", "D"), ("C", "D"), ((("C", "C"), (3, 3)), (("C", "D"), (0, 5)),
                                   (("D", "C"), (5, 0)), (("D", "D"), (1, 1))))


def brute_force(game, opp, seat, h):
    return max(total(play_sequence(game, opp, seat, seq)) for seq in itertools.product(game.moves(seat), repeat=h))


@st.composite
def games_and_machines(draw):
    n_moves = draw(st.integers(2, 3))
    moves = tuple("XYZ"[:n_moves])
    pay = st.integers(-3, 6)
    table = tuple(((a, b), (draw(pay), draw(pay))) for a in moves for b in moves)
    n_states = draw(st.integers(1, 4))
    move_of = [draw(st.sampled_from(moves)) for _ in range(n_states)]
    nxt = {(s, a, b): draw(st.integers(0, n_states - 1)) for s in range(n_states) for a in moves for b in moves}
    opp = Strategy("m", "random machine", 0, lambda s: move_of[s], lambda s, mine, theirs: nxt[(s, mine, theirs)])
    return Game(moves, moves, table), opp, draw(st.sampled_from((ROW, COLUMN))), draw(st.integers(1, 5))


@settings(max_examples=120)
@given(games_and_machines())
def test_dynamic_programming_matches_brute_force_on_small_horizons(case):
    game, opp, seat, h = case
    best = optimum(game, opp, seat, h)
    assert best.deterministic
    assert best.value == brute_force(game, opp, seat, h)
    assert len(best.plan) == h and total(play_sequence(game, opp, seat, best.plan)) == best.value


@settings(max_examples=40)
@given(st.integers(1, 6), st.floats(0.05, 0.95))
def test_against_a_mixed_opponent_the_optimum_is_the_best_expected_total(h, p):
    mixed = Strategy("mix", "mixed", 0, lambda s: {"C": p, "D": 1 - p}, lambda s, a, b: s)
    best = optimum(PD, mixed, ROW, h)
    assert not best.deterministic
    # a memoryless opponent: the best reply is to defect every round
    assert best.value == pytest.approx(h * (5 * p + 1 * (1 - p)))
    assert expected_score(PD, mixed, ROW, best.plan) == pytest.approx(best.value)
    assert all(expected_score(PD, mixed, ROW, seq) <= best.value + 1e-9
               for seq in itertools.product("CD", repeat=min(h, 4)) if len(seq) == h)


def test_classic_optima():
    tft = Strategy("tft", "", "C", lambda s: s, lambda s, mine, theirs: theirs)
    assert optimum(PD, tft, ROW, 6).plan == ("C", "C", "C", "C", "C", "D")
    assert optimum(PD, tft, ROW, 6).value == 3 * 5 + 5
    tf2t = Strategy("tf2t", "", 0, lambda s: "D" if s >= 2 else "C",
                    lambda s, mine, theirs: s + 1 if theirs == "D" else 0)
    best = optimum(PD, tf2t, ROW, 6)
    assert best.plan == ("D", "C", "D", "C", "D", "D")  # never two defections in a row until the end
    assert best.value == 5 + 3 + 5 + 3 + 5 + 5 == brute_force(PD, tf2t, ROW, 6)


def test_the_shipped_gsi_opponents_optimum_matches_brute_force():
    gsi = [load_world(p) for p in world_files(os.path.join(ROOT, "worlds", "oracle-extra")) if "/gsi-" in p]
    assert len(gsi) == 16
    for w in gsi:
        opp = w.opponents[0]
        for h in range(1, 6):
            best = optimum(w.game, opp, ROW, h)
            assert best.deterministic and best.value == brute_force(w.game, opp, ROW, h), (w.name, h)


def test_a_move_sequence_may_be_written_as_a_numbered_or_bulleted_list():
    w = load_world(next(p for p in world_files(os.path.join(ROOT, "worlds", "oracle-extra")) if "/gsi-" in p))
    t = next(t for t in w.tasks if t.shape == "moves")
    moves = t.solution.replace(",", " ").split()
    assert w.verify(t.id, "\n".join(f"{i}. {m}" for i, m in enumerate(moves, 1))).passed
    assert w.verify(t.id, "\n".join(f"- {m}" for m in moves)).passed
    assert w.verify(t.id, "\n".join(f"{i}) {m}" for i, m in enumerate(moves, 1))).passed
    # a list with one unmarked line is read as written: its markers are then moves that do not exist
    assert not w.verify(t.id, "\n".join(f"{i}. {m}" for i, m in enumerate(moves, 1)) + "\n" + moves[0]).passed


def test_an_opponent_that_plays_an_illegal_move_is_blamed_at_its_move_line():
    from worldspec.compiler import compile_spec
    from worldspec.diagnostics import SpecError
    from worldspec.parser import parse_spec
    text = open(os.path.join(ROOT, "tests", "worlds", "oracle", "mixed-rps.world"), encoding="utf-8").read()
    text = text.replace('get({"rock": "paper", "paper": "scissors", "scissors": "rock"}, state): 0.4}',
                        '"lizard": 0.4}')
    with pytest.raises(SpecError) as e:
        compile_spec(parse_spec(text, "m.world"))
    msg = e.value.render()
    assert msg.startswith("m.world:23:3: error: opponent sticky, in the test game of line 27:"), msg
    assert "'lizard'" in msg and "move {state: 0.6" in msg


def test_a_test_game_repeated_is_a_warning():
    from worldspec.compiler import compile_spec
    from worldspec.parser import parse_spec
    text = open(os.path.join(ROOT, "tests", "worlds", "oracle", "mixed-rps.world"), encoding="utf-8").read()
    w = compile_spec(parse_spec(text.replace("test 6\n", "test 6\ntest 10\n"), "m.world"))
    r = w.certify()
    assert not r["problems"]
    assert any("test g3 (line 29) is the same game as test g1: 10 rounds" in x for x in r["warnings"]), r["warnings"]
    assert not any("same game" in x for x in load_world(os.path.join(ROOT, "tests", "worlds", "oracle",
                                                                      "mixed-rps.world")).certify()["warnings"])
