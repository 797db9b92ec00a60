"""`kind game`: a repeated two-player game, its opponents as finite-state strategies, and its tests.

Spec items (docs/oracle-worlds.md has the reference):

    moves "C", "D"                     # the moves of both seats (column_moves for a different set)
    payoff "C", "D", -1, 3             # row move, column move, row payoff, column payoff
    horizon 10                         # a fixed number of rounds, or:
    continue 0.9                       # after each round the game goes on with this probability
    max_rounds 40                      #   ... up to this cap
    opponent tft "tit-for-tat" {       # a finite-state strategy, written from its own seat
      start "C"                        #   its state before round 1
      move state                       #   its move from `state` (or a map move -> probability)
      next theirs                      #   its state after playing `mine` against `theirs`
    }
    cooperate "C"                      # the cooperative move (cooperation and betrayal rates)
    matches 5                          # pool play: matches per opponent and seat
    seats row, column                  # the seats played (default both)
    baseline grim                      # strategies printed beside every model
    fallback "D"                       # the move played for an unreadable reply

  Game Strategy Inference boxes add `family GSI`, `difficulty easy|hard`, one
  opponent, `test H` lines (a fresh H-round game each; accuracy is the score
  over the exact optimum) and `probe_rounds N` (the longest move sequence a
  probe may play).
"""
from __future__ import annotations

import attrs

from worldspec import ast
from worldspec.compiler.api import Kind, Task
from worldspec.compiler.common import draw_params, interpolate
from worldspec.compiler.game.certify import cross_checks
from worldspec.compiler.game.engine import ROW, SEATS, Game, GameError, Strategy, optimum
from worldspec.compiler.game.manual import render_game_manual
from worldspec.compiler.game.world import GameWorld, TestGame
from worldspec.compiler.items import (box_budget, box_labels, constant_reader, family_and_difficulty, group_items,
                                      meta_compiler, one, read_baselines, read_seats, reject_program_sections)
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import MetaCompiler
from worldspec.values import Ctx

ITEMS = ("family", "difficulty", "moves", "column_moves", "payoff", "horizon", "continue", "max_rounds",
         "cooperate", "matches", "seats", "baseline", "fallback", "test", "probe_rounds")
BLOCKS = ("opponent",)
OPPONENT_FIELDS = ("start", "move", "next")


def compile_spec(spec: ast.Spec, seed: int | None = None) -> GameWorld:
    """A game spec -> its GameWorld (at the given seed, or the declared one)."""
    seed = spec.seed if seed is None else seed
    reject_program_sections(spec)
    if spec.base or spec.rules or spec.herrings:
        span = (spec.base or spec.rules or spec.herrings)[0].span
        raise SpecError(span, "a game world has no base, rule or herring sections",
                        "Its hidden part is the opponent strategy.")
    items = group_items(spec, ITEMS, BLOCKS)
    params = draw_params(spec, seed)
    mc = meta_compiler(spec, params)
    constant = constant_reader(mc)
    game = read_game(items, spec, constant)
    opponents = read_opponents(items, spec, mc, constant)
    horizon, delta, max_rounds = read_length(items, spec, constant)
    matches = int_item(items, spec, constant, "matches", 5)
    seats = read_seats(items, spec, SEATS)
    cooperate = read_shared_move(items, spec, constant, "cooperate", game, "")
    fallback = read_shared_move(items, spec, constant, "fallback", game, game.row_moves[-1])
    baselines = read_baselines(items, opponents)
    family, difficulty = family_and_difficulty(items, spec, required=False)
    if items["test"] and len(opponents) != 1:
        raise SpecError(items["test"][0].span, "test games need exactly one opponent",
                        "A Game Strategy Inference box plays one hidden opponent.")
    if family and not items["test"]:
        raise SpecError(spec.span, f"this {family} box has no test game", "Add: test 8 (an 8-round game).")
    budget = box_budget(spec)
    tests = read_tests(items, game, opponents, constant)
    probe_rounds = int_item(items, spec, constant, "probe_rounds", max([10] + [t.horizon for t in tests]))
    if not horizon and not delta and tests:
        horizon = max(t.horizon for t in tests)  # a box's games are its probes and its test games
    world = GameWorld(
        name=spec.name, version=spec.version, kind=spec.kind, seed=seed, default_seed=spec.seed,
        summary=interpolate(spec.summary, params), params=tuple(params.items()), manual="", examples=(),
        tasks=game_tasks(tests, family, difficulty, game.row_moves), rules=(), herrings=(), budget=budget,
        family=family, difficulty=difficulty, game=game, opponents=opponents, seats=seats, horizon=horizon,
        delta=delta, max_rounds=max_rounds, matches=matches, baselines=baselines, cooperate=cooperate,
        fallback=fallback, probe_rounds=probe_rounds, tests=tests, source=spec.file)
    return attrs.evolve(world, manual=render_game_manual(spec, world, params))


# ---------------------------------------------------------------- reading the items


def int_item(items: dict, spec: ast.Spec, constant, key: str, default: int, lo: int = 1) -> int:
    """The integer item `key` (at least `lo`), or `default` when the spec has none."""
    g = one(items, key, spec, required=False)
    if g is None:
        return default
    v = constant(g.args[0]) if len(g.args) == 1 else None
    if type(v) is not int or v < lo:
        raise SpecError(g.span, f"{key} takes an integer of at least {lo}", f"For example: {key} 10")
    return v


def move_names(g: ast.GenericItem, what: str, constant) -> tuple[str, ...]:
    """A `moves` line: two or more distinct move names (strings without spaces)."""
    vals = [constant(a) for a in g.args]
    if len(vals) < 2 or any(type(v) is not str or not v.strip() or " " in v for v in vals):
        raise SpecError(g.span, f"{what} lists two or more move names (strings without spaces)",
                        f'For example: {what} "C", "D"')
    if len(set(vals)) != len(vals):
        raise SpecError(g.span, f"{what} repeats a move", "")
    return tuple(vals)


def read_game(items: dict, spec: ast.Spec, constant) -> Game:
    """The moves of both seats and a payoff for every pair of moves."""
    mg = one(items, "moves", spec)
    row_moves = move_names(mg, "moves", constant)
    cg = one(items, "column_moves", spec, required=False)
    col_moves = move_names(cg, "column_moves", constant) if cg else row_moves
    table = {}
    for g in items["payoff"]:
        if len(g.args) != 4:
            raise SpecError(g.span, "a payoff line is: payoff ROW_MOVE, COLUMN_MOVE, ROW_PAYOFF, COLUMN_PAYOFF",
                            'For example: payoff "C", "D", -1, 3')
        r, c, pr, pc = (constant(a) for a in g.args)
        if r not in row_moves:
            raise SpecError(g.args[0].span, f"{r!r} is not a row move", "Row moves: " + ", ".join(row_moves))
        if c not in col_moves:
            raise SpecError(g.args[1].span, f"{c!r} is not a column move", "Column moves: " + ", ".join(col_moves))
        for v, a in ((pr, g.args[2]), (pc, g.args[3])):
            if type(v) not in (int, float):
                raise SpecError(a.span, "a payoff must be a number", "")
        if (r, c) in table:
            raise SpecError(g.span, f"the payoff of ({r}, {c}) is given twice", "")
        table[(r, c)] = (pr, pc)
    game = Game(row_moves, col_moves, tuple(table.items()))
    if game.missing():
        r, c = game.missing()[0]
        raise SpecError(mg.span, f"the payoff table has no entry for ({r}, {c})",
                        f"Add a payoff line for every pair of moves ({len(game.missing())} missing).")
    return game


def read_opponents(items: dict, spec: ast.Spec, mc: MetaCompiler, constant) -> tuple[Strategy, ...]:
    """The opponent blocks, in order (at least one, names unique)."""
    opponents: list[Strategy] = []
    for g in items["opponent"]:
        if any(o.name == g.name for o in opponents):
            raise SpecError(g.span, f"opponent {g.name} is declared twice", "Opponent names must be unique.")
        opponents.append(read_strategy(mc, g, constant))
    if not opponents:
        raise SpecError(spec.span, "this game has no opponent", 'Add: opponent NAME "title" { move ... }')
    return tuple(opponents)


def read_strategy(mc: MetaCompiler, g: ast.GenericItem, constant) -> Strategy:
    """An `opponent NAME "title" { start ... move ... next ... }` block as a finite-state Strategy."""
    fields: dict[str, ast.Field] = {}
    for f in g.fields:
        if f.key not in OPPONENT_FIELDS:
            raise SpecError(f.span, f"unknown opponent field {f.key!r}", did_you_mean(f.key, OPPONENT_FIELDS).strip()
                            or "Opponent fields: start, move, next.")
        if f.key in fields:
            raise SpecError(f.span, f"{f.key} is given twice in opponent {g.name}", "")
        if len(f.args) != 1:
            raise SpecError(f.span, f"{f.key} takes one expression", "")
        fields[f.key] = f
    if "move" not in fields:
        raise SpecError(g.span, f"opponent {g.name} has no move", 'Add: move EXPR (over `state`), e.g. move "C"')
    start = constant(fields["start"].args[0]) if "start" in fields else 0
    move_unit = mc.unit(f"{g.name}.move", ["state"], fields["move"].args[0])
    next_unit = mc.unit(f"{g.name}.next", ["state", "mine", "theirs"], fields["next"].args[0]) \
        if "next" in fields else None

    def move(state):
        return move_unit(Ctx(), [state])

    def nxt(state, mine, theirs):
        return state if next_unit is None else next_unit(Ctx(), [state, mine, theirs])

    return Strategy(g.name, g.note or g.name, start, move, nxt)


def read_length(items: dict, spec: ast.Spec, constant) -> tuple[int, float, int]:
    """(horizon, continuation probability, max_rounds): a fixed horizon or a random one, not both."""
    hg, cg = one(items, "horizon", spec, required=False), one(items, "continue", spec, required=False)
    if hg is not None and cg is not None or (hg is None and cg is None and not items["test"]):
        raise SpecError(spec.span, "a game needs either a fixed horizon or a continuation probability",
                        "Add: horizon 10, or: continue 0.9 (with max_rounds).")
    horizon = int_item(items, spec, constant, "horizon", 0)
    delta = 0.0
    if cg is not None:
        delta = constant(cg.args[0]) if len(cg.args) == 1 else None
        if type(delta) not in (int, float) or not 0 <= delta < 1:
            raise SpecError(cg.span, "continue takes a probability in [0, 1)", "For example: continue 0.9")
        delta = float(delta)
    return horizon, delta, int_item(items, spec, constant, "max_rounds", 100)


def read_shared_move(items: dict, spec: ast.Spec, constant, key: str, game: Game, default: str) -> str:
    """The move named by item `key` (`cooperate`, `fallback`), which both seats must have."""
    g = one(items, key, spec, required=False)
    if g is None:
        return default
    move = constant(g.args[0])
    if move not in game.row_moves or move not in game.column_moves:
        raise SpecError(g.span, f"{move!r} is not a move of both seats", "")
    return move


def read_tests(items: dict, game: Game, opponents, constant) -> tuple[TestGame, ...]:
    """The `test H` lines: fresh H-round games against the (single) opponent, with their exact optimum."""
    tests = []
    for i, g in enumerate(items["test"], 1):
        h = constant(g.args[0]) if len(g.args) == 1 else None
        if type(h) is not int or not 1 <= h <= 200:
            raise SpecError(g.span, "a test line gives the rounds of a fresh test game (1 to 200)",
                            "For example: test 8")
        try:
            opt = optimum(game, opponents[0], ROW, h)
        except GameError as e:
            raise SpecError(g.span, f"the optimum of this test cannot be computed: {e}", "") from None
        tests.append(TestGame(f"g{i}", h, opt, g.span.line))
    return tuple(tests)


def game_tasks(tests, family: str, difficulty: str, row_moves) -> tuple[Task, ...]:
    """One task per test game; its reference answer is the optimal plan."""
    return tuple(Task(t.id, family or "game",
                      f"Play a fresh {t.horizon}-round game against the same opponent, starting from its "
                      f"initial state. Reply with your {t.horizon} moves in order "
                      f"({' or '.join(row_moves)}), separated by spaces, in a fenced code block. Your "
                      "accuracy is your total payoff divided by the best total possible.",
                      "moves", box_labels(family, difficulty), " ".join(t.optimum.plan), "")
                 for t in tests)


KIND = Kind("game", compile_spec, "a repeated game: pool play, or strategy inference against one opponent",
            cross_checks=cross_checks)
