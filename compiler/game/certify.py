"""Certification of a game world: is it a sound benchmark item (or a sound pool)?

* every opponent's moves and states are well-formed on every state it reaches;
* each test game has an exact optimum: the opponent never mixes, the optimum is
  positive, the optimal plan scores it, and on short horizons brute force agrees;
* hard GSI boxes are not solved by the best reply to a simple hypothesis (a
  constant or copying opponent);
* pool play: the baselines play the pool and the seed fixes the horizons.

`cross_checks` compares the game boxes of a folder (compiler/suite.py): the
best reply to an easy box's opponent is not optimal in every test of a hard box
of the same family and game.
"""
from __future__ import annotations

import itertools

from worldspec.compiler.game.engine import (COLUMN, ROW, GameError, Strategy, expected_score, optimum,
                                            play_sequence, reachable_states)
from worldspec.compiler.items import hard_easy_pairs

BRUTE_FORCE_LIMIT = 5000


def stock_opponents(world) -> list[Strategy]:
    """The simplest hypotheses about an opponent: a constant move, or copying the player's last move."""
    theirs, mine = world.game.moves(COLUMN), world.game.moves(ROW)
    out = [Strategy(f"always {m}", f"always {m}", 0, lambda s, m=m: m, lambda s, a, b: s) for m in theirs]
    if set(mine) <= set(theirs):
        out.append(Strategy("copy", "copies the player's previous move", theirs[0], lambda s: s,
                            lambda s, a, b: b))
    return out


def certify_game(w, progress=None) -> dict:
    """The certification report of a GameWorld `w` (problems empty exactly when it is certified)."""
    say = progress or (lambda msg: None)
    problems: list[str] = []
    notes: list[str] = []
    opp_table = check_opponents(w, say, problems)
    test_table = [check_test(w, t, problems) for t in w.tests]
    hyp_table = check_hypotheses(w, problems, notes) if w.tests and not problems else []
    baselines = check_pool(w, problems, notes) if not w.tests and not problems else {}
    if w.family:
        notes.insert(0, f"family {w.family}, difficulty {w.difficulty}; {len(w.tests)} test game(s)")
    out = {
        "world": w.name, "kind": w.kind, "seed": w.seed, "default_seed": w.default_seed,
        "params": {k: v for k, v in w.params}, "rules": 0, "herrings": 0, "tasks": len(w.tasks),
        "examples": 0, "opponents": opp_table, "test_games": test_table, "hypotheses": hyp_table,
        "baselines": baselines, "notes": notes, "problems": problems,
    }
    if w.family:
        out["family"], out["difficulty"] = w.family, w.difficulty
        out["labels"] = {"family": {w.family: len(w.tasks)}, "difficulty": {w.difficulty: len(w.tasks)}}
    return out


def check_opponents(w, say, problems: list[str]) -> list[dict]:
    """Walk every state each opponent reaches (from the seats played) within the longest game checked."""
    depth = max([t.horizon for t in w.tests] + [w.probe_rounds, min(w.max_rounds, 12) if not w.horizon
                                                  else w.horizon])
    table = []
    for o in w.opponents:
        say(f"walking the states of {o.name}")
        try:
            n = reachable_states(w.game, o, ROW, depth)
            if COLUMN in w.seats:
                n = max(n, reachable_states(w.game, o, COLUMN, depth))
            table.append({"id": o.name, "title": o.title, "states": n})
        except GameError as e:
            problems.append(f"opponent {o.name}: {e}")
            table.append({"id": o.name, "title": o.title, "states": None})
    return table


def check_test(w, t, problems: list[str]) -> dict:
    """A test game has an exact, positive optimum that its plan reaches (and brute force agrees on)."""
    opt = t.optimum
    row = {"id": t.id, "horizon": t.horizon, "optimum": opt.value, "plan": " ".join(opt.plan)}
    if not opt.deterministic:
        problems.append(f"test {t.id}: the opponent mixes its moves, so a submitted sequence has no exact "
                        "optimum to compare with")
    if opt.value <= 0:
        problems.append(f"test {t.id}: the optimum is {opt.value}, so score / optimum is undefined")
    got = expected_score(w.game, w.opponents[0], ROW, opt.plan)
    if abs(got - opt.value) > 1e-9:
        problems.append(f"test {t.id}: the optimal plan scores {got}, not the optimum {opt.value}")
    n_seq = len(w.game.row_moves) ** t.horizon
    if opt.deterministic and n_seq <= BRUTE_FORCE_LIMIT:
        brute = max(sum(r.my_payoff for r in play_sequence(w.game, w.opponents[0], ROW, seq))
                    for seq in itertools.product(w.game.row_moves, repeat=t.horizon))
        row["brute_force"] = brute
        if brute != opt.value:
            problems.append(f"test {t.id}: dynamic programming gives {opt.value}, brute force {brute}")
    return row


def check_hypotheses(w, problems: list[str], notes: list[str]) -> list[dict]:
    """On hard boxes, the best reply to a constant or copying opponent is not optimal in every test."""
    table = []
    for h in stock_opponents(w):
        ratios = []
        for t in w.tests:
            plan = optimum(w.game, h, ROW, t.horizon).plan
            got = expected_score(w.game, w.opponents[0], ROW, plan)
            ratios.append(max(0.0, float(got) / float(t.optimum.value)))
        solved = all(r >= 1 - 1e-9 for r in ratios)
        table.append({"name": h.name, "refuted": not solved,
                      "accuracy": round(100 * sum(min(r, 1.0) for r in ratios) / len(ratios), 1)})
        if solved and w.difficulty == "hard":
            problems.append(f"the best reply to the simple hypothesis {h.name!r} is optimal in every test: "
                            "the box is not harder than that guess")
    notes.append(f"simple hypotheses refuted by the tests: {sum(h['refuted'] for h in table)} of "
                 f"{len(table)} (best replies to a constant or copying opponent)")
    return table


def check_pool(w, problems: list[str], notes: list[str]) -> dict:
    """Pool play: each baseline's score per round against the pool; the seed fixes the horizons."""
    baselines = {}
    for name in w.baselines:
        matches = w.play_pool(w.strategy(name))
        rounds = [r for m in matches for r in m.rounds]
        score = sum(r.my_payoff for r in rounds) / max(1, len(rounds))
        baselines[name] = round(float(score), 4)
        notes.append(f"baseline {name}: {score:.3f} per round over {len(matches)} pool matches")
    again = [w.horizon_for(o, s, k) for o, s, k in w.schedule()]
    if again != [w.horizon_for(o, s, k) for o, s, k in w.schedule()]:
        problems.append("the same seed gave different horizons")
    if again:
        notes.append(f"pool: {len(w.opponents)} opponents x {len(w.seats)} seat(s) x {w.matches} matches; "
                     f"horizons {min(again)}..{max(again)} rounds (mean {sum(again) / len(again):.1f})")
    return baselines


def cross_checks(games) -> list[str]:
    """Hard game boxes in which the best reply to an easy box's opponent (same family and game) is optimal."""
    out = []
    for hard, easy in hard_easy_pairs(games):
        if hard.game == easy.game and hard.tests and all(
                expected_score(hard.game, hard.opponents[0], ROW,
                               optimum(easy.game, easy.opponents[0], ROW, t.horizon).plan)
                >= t.optimum.value - 1e-9 for t in hard.tests):
            out.append(f"{hard.source}: the best reply to the easy box {easy.name!r} is optimal in "
                       "every test of this hard box")
    return out
