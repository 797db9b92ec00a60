"""Certification of a game world: is it a sound benchmark item (or a sound pool)?

* every opponent's moves and states are well-formed on every state it reaches
  (and, on a board, its moves are legal);
* each test game has an optimum: positive, reached by the optimal plan, and on
  short horizons brute force agrees. Against a mixed opponent it is the best
  expected score: round by round, exactly by dynamic programming (and the
  optimal policy's accuracy over seeded games is reported); for a fixed
  sequence, exactly over beliefs, or else bounded from above by the
  round-by-round optimum (a note says which);
* a declared normaliser (`test H, NORM`) that differs from the optimum is a
  warning: the paper's fixed normalisers are kept, their effect reported;
* hard GSI boxes are not solved by the best reply to a simple hypothesis (a
  constant or copying opponent): a warning, as a published box with this defect
  is kept as published (issue 13);
* pool play: the baselines play the pool and the seed fixes the horizons.

`cross_checks` compares the game boxes of a folder (compiler/suite.py): the
best reply to an easy box's opponent is not optimal in every test of a hard box
of the same family and game.
"""
from __future__ import annotations

import itertools
import random

from worldspec.compiler.game.engine import (COLUMN, ROW, GameError, Match, Strategy, expected_score, optimum,
                                            play_sequence, reachable_states)
from worldspec.compiler.items import hard_easy_pairs

BRUTE_FORCE_LIMIT = 5000
POLICY_GAMES = 200  # seeded games the optimal policy plays against a mixed opponent


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
    warnings: list[str] = []
    opp_table = check_opponents(w, say, problems)
    test_table = [check_test(w, t, problems, notes, warnings) for t in w.tests] if not problems else []
    seen: dict = {}
    for t in w.tests:  # against one opponent from its start, a test game is fixed by its length (and norm)
        first = seen.setdefault((t.horizon, t.norm), t)
        if first is not t:
            warnings.append(f"test {t.id} (line {t.line}) is the same game as test {first.id}: {t.horizon} rounds"
                            f"{'' if t.norm is None else f', normaliser {t.norm:g}'}, so it asks nothing new")
    hyp_table = check_hypotheses(w, warnings, notes) if w.tests and not problems else []
    baselines = check_pool(w, problems, notes) if not w.tests and not problems else {}
    if w.family:
        notes.insert(0, f"family {w.family}, difficulty {w.difficulty}; {len(w.tests)} test game(s)")
    out = {
        "world": w.name, "kind": w.kind, "seed": w.seed, "default_seed": w.default_seed,
        "params": {k: v for k, v in w.params}, "rules": 0, "herrings": 0, "tasks": len(w.tasks),
        "examples": 0, "opponents": opp_table, "test_games": test_table, "hypotheses": hyp_table,
        "baselines": baselines, "notes": notes + [f"warning: {x}" for x in warnings], "warnings": warnings,
        "problems": problems,
    }
    if w.family:
        out["family"], out["difficulty"] = w.family, w.difficulty
        out["labels"] = {"family": {w.family: len(w.tasks)}, "difficulty": {w.difficulty: len(w.tasks)}}
    return out


def check_opponents(w, say, problems: list[str]) -> list[dict]:
    """Walk every state each opponent reaches (from the seats played) within the longest game checked."""
    depth = max([t.horizon for t in w.tests] + [w.probe_rounds, min(w.max_rounds, 12) if not w.horizon
                                                  else w.horizon])
    # a board (and an opponent's start) may depend on the game's length: walk each length a test plays
    depths = sorted({t.horizon for t in w.tests} if w.rounds else {depth} | {t.horizon for t in w.tests})
    table = []
    for o in w.opponents:
        say(f"walking the states of {o.name}")
        try:
            n = max(reachable_states(w.game, o, ROW, d) for d in depths)
            if COLUMN in w.seats and not w.tests:
                n = max(n, reachable_states(w.game, o, COLUMN, depth))
            table.append({"id": o.name, "title": o.title, "states": n})
        except GameError as e:
            problems.append(f"opponent {o.name}: {e}")
            table.append({"id": o.name, "title": o.title, "states": None})
    return table


def check_test(w, t, problems: list[str], notes: list[str], warnings: list[str]) -> dict:
    """A test game has a positive optimum that its plan reaches (and brute force agrees on); a mixed opponent's
    optimum is the best expected score; a declared normaliser is compared with the optimum."""
    opt = t.optimum
    row = {"id": t.id, "horizon": t.horizon, "optimum": opt.value, "plan": ", ".join(opt.plan),
           "exact": opt.exact, "normaliser": t.scale}
    if opt.value <= 0 and t.norm is None:
        problems.append(f"test {t.id}: the optimum is {opt.value}, so score / optimum is undefined")
    if opt.deterministic:
        got = expected_score(w.game, w.opponents[0], ROW, opt.plan)
        if abs(got - opt.value) > 1e-9:
            problems.append(f"test {t.id}: the optimal plan scores {got}, not the optimum {opt.value}")
        n_seq = len(w.game.row_moves) ** t.horizon
        if n_seq <= BRUTE_FORCE_LIMIT:
            brute = max(_score(w, seq) for seq in itertools.product(w.game.row_moves, repeat=t.horizon))
            row["brute_force"] = brute
            if brute != opt.value:
                problems.append(f"test {t.id}: dynamic programming gives {opt.value}, brute force {brute}")
    elif w.rounds:
        mean = policy_accuracy(w, t)
        row["policy_accuracy"] = mean
        notes.append(f"test {t.id}: the opponent mixes its moves, so accuracy is the score of one game over the "
                     f"best expected score {opt.value:.4g}; the optimal policy averages {mean:.1%} of it over "
                     f"{POLICY_GAMES} seeded games")
    elif opt.exact:
        notes.append(f"test {t.id}: the opponent mixes its moves; a submitted sequence is scored by its exact "
                     f"expected total over the best expected total of any fixed sequence, {opt.value:.4g}")
    else:
        notes.append(f"test {t.id}: the opponent mixes its moves and the fixed sequences' beliefs are too many to "
                     f"optimise exactly: accuracy is over {opt.value:.4g}, the round-by-round optimum, which no "
                     "fixed sequence can beat (a certified bound, so even the best sequence may score below 100%)")
    if t.norm is not None and abs(t.norm - opt.value) > 1e-9:
        best = t.accuracy(opt.value)
        warnings.append(f"test {t.id}: the declared normaliser {t.norm:g} is not the best (expected) score "
                        f"{opt.value:.4g}, so the best play scores {best:.1%}"
                        + (" (clipped to 100%)" if opt.value > t.norm else ""))
    return row


def _score(w, seq) -> float:
    """A fixed sequence's total against a deterministic opponent (an illegal sequence scores -inf)."""
    try:
        return sum(r.my_payoff for r in play_sequence(w.game, w.opponents[0], ROW, seq))
    except GameError:
        return float("-inf")


def policy_accuracy(w, t) -> float:
    """The optimal round-by-round policy's mean accuracy against a mixed opponent over seeded games."""
    total = 0.0
    for k in range(POLICY_GAMES):
        m = Match(w.game, w.opponents[0], ROW, t.horizon, random.Random(f"policy:{w.seed}:{t.id}:{k}"))
        while not m.done:
            m.play(t.optimum.policy(m.state, m.board, m.horizon - len(m.rounds)))
        total += t.accuracy(m.score)
    return total / POLICY_GAMES


def check_hypotheses(w, warnings: list[str], notes: list[str]) -> list[dict]:
    """On hard boxes, the best reply to a constant or copying opponent is not optimal in every test (a warning
    when it is: the box is kept, its defect reported)."""
    table = []
    if w.game.has_board:
        notes.append("simple hypotheses are not tried: on a board a constant opponent may play illegal moves")
        return table
    for h in stock_opponents(w):
        ratios = []
        for t in w.tests:
            plan = optimum(w.game, h, ROW, t.horizon).plan
            got = expected_score(w.game, w.opponents[0], ROW, plan)
            ratios.append(max(0.0, float(got) / float(t.optimum.value)) if t.optimum.value > 0 else 0.0)
        solved = all(r >= 1 - 1e-9 for r in ratios)
        table.append({"name": h.name, "refuted": not solved,
                      "accuracy": round(100 * sum(min(r, 1.0) for r in ratios) / len(ratios), 1)})
        if solved and w.difficulty == "hard":
            warnings.append(f"the best reply to the simple hypothesis {h.name!r} is optimal in every test: "
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
