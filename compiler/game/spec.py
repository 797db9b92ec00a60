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
    lineup round_robin                 # every system (models and baselines) against every other, R repeats
                                       #   from both seats (InteractiveBench's Trust Game); default: pool
    fallback "D"                       # the move played for an unreadable reply

  Game Strategy Inference boxes add `family GSI`, `difficulty easy|hard`, one
  opponent, `test H` lines (a fresh H-round game each; accuracy is the score
  over the exact optimum, or over `test H, NORM`'s normaliser) and
  `probe_rounds N` (the longest move sequence a probe may play).

  Games with a board (what both players have: bullets, cards in hand) add

    payoffs [if row == column then 0 else 1, 0]   # instead of payoff lines: over row, column
    board {"hands": [range(1, horizon + 1), range(1, horizon + 1)]}   # before round 1 (sees horizon)
    legal map(fn(c) => "card " + str(c), get(get(board, "hands"), if seat == "row" then 0 else 1))
    update ...                                     # the board after a round: over board, row, column
    reveal "the opponent played " + theirs         # what the player is told of a round
    play rounds                                    # the player moves round by round, seeing the history
    published_read lower(strip(text))              # under `--grading published`: a reply read as the
                                                   #   box's published platform reads it (over text, tries)
    published_seen text                            # ... and what its opponent is told of the player's move
                                                   #   (over text and move; default: the move)
"""
from __future__ import annotations

import attrs

from worldspec import ast
from worldspec.compiler.api import Kind, PlayedTests, PoolFace, Task, TurnShotFace
from worldspec.compiler.artefacts import recall
from worldspec.compiler.common import draw_params, interpolate, meta_compiler
from worldspec.compiler.game.certify import cross_checks
from worldspec.compiler.game.engine import (ROW, SEATS, Game, GameError, Optimum, Strategy, open_loop_optimum,
                                            optimum)
from worldspec.compiler.game.manual import render_game_manual
from worldspec.compiler.game.records import decode_optimum, encode_optimum
from worldspec.compiler.game.world import GameWorld, TestGame, show_number
from worldspec.compiler.items import (box_budget, box_labels, constant_reader, family_and_difficulty, group_items,
                                      one, read_baselines, read_seats, reject_program_sections, switch)
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import MetaCompiler
from worldspec.values import Ctx, EvalError

ITEMS = ("family", "difficulty", "moves", "column_moves", "payoff", "payoffs", "horizon", "continue", "max_rounds",
         "cooperate", "matches", "seats", "baseline", "fallback", "test", "probe_rounds", "board", "legal",
         "update", "reveal", "play", "lineup", "published_read", "published_seen")
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
    game = read_game(items, spec, mc, constant)
    opponents = read_opponents(items, spec, mc, constant)
    horizon, delta, max_rounds = read_length(items, spec, constant)
    matches = int_item(items, spec, constant, "matches", 5)
    seats = read_seats(items, spec, SEATS)
    cooperate = read_shared_move(items, spec, constant, "cooperate", game, "")
    fallback = read_shared_move(items, spec, constant, "fallback", game, game.row_moves[-1])
    baselines = read_baselines(items, opponents)
    round_robin = switch(items, spec, "lineup", "round_robin", "pool")
    family, difficulty = family_and_difficulty(items, spec, required=False)
    if items["test"] and len(opponents) != 1:
        raise SpecError(items["test"][0].span, "test games need exactly one opponent",
                        "A Game Strategy Inference box plays one hidden opponent.")
    if family and not items["test"]:
        raise SpecError(spec.span, f"this {family} box has no test game", "Add: test 8 (an 8-round game).")
    budget = box_budget(spec)
    rounds = switch(items, spec, "play", "rounds", "sequence")
    tests = read_tests(items, game, opponents, constant, rounds)
    longest = max([t.horizon for t in tests], default=10)
    probe_rounds = int_item(items, spec, constant, "probe_rounds", longest if rounds else max(10, longest))
    if round_robin and (items["test"] or game.has_board):
        raise SpecError(items["lineup"][0].span, "a round robin is played by boardless games without test games",
                        "Remove `lineup round_robin`, or the board and test items.")
    if not horizon and not delta and tests:
        horizon = max(t.horizon for t in tests)  # a box's games are its probes and its test games
    world = GameWorld(
        name=spec.name, version=spec.version, kind=spec.kind, seed=seed, default_seed=spec.seed,
        summary=interpolate(spec.summary, params), params=tuple(params.items()), manual="", examples=(),
        tasks=game_tasks(tests, family, difficulty, game.row_moves, rounds), rules=(), herrings=(), budget=budget,
        family=family, difficulty=difficulty, game=game, opponents=opponents, seats=seats, horizon=horizon,
        delta=delta, max_rounds=max_rounds, matches=matches, baselines=baselines, cooperate=cooperate,
        fallback=fallback, probe_rounds=probe_rounds, tests=tests, source=spec.file, rounds=rounds,
        reveal=read_reveal(items, spec, mc), round_robin=round_robin,
        published_read=read_published_reader(items, spec, mc, game, rounds),
        published_seen=read_published_seen(items, spec, mc, game))
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
    """A `moves` line: two or more distinct move names (strings; a single list argument lists them all)."""
    vals = [constant(a) for a in g.args]
    if len(vals) == 1 and type(vals[0]) is list:
        vals = vals[0]
    if len(vals) < 2 or any(type(v) is not str or not v.strip() or v != " ".join(v.split()) or "," in v
                            for v in vals):
        raise SpecError(g.span, f"{what} lists two or more move names (strings without commas; single spaces "
                        "inside are fine)", f'For example: {what} "C", "D"')
    if len(set(vals)) != len(vals):
        raise SpecError(g.span, f"{what} repeats a move", "")
    return tuple(vals)


def read_game(items: dict, spec: ast.Spec, mc: MetaCompiler, constant) -> Game:
    """The moves of both seats, a payoff for every pair of moves (payoff lines or a payoffs rule), and the
    board: its start, the legal moves on it and its update."""
    mg = one(items, "moves", spec)
    row_moves = move_names(mg, "moves", constant)
    cg = one(items, "column_moves", spec, required=False)
    col_moves = move_names(cg, "column_moves", constant) if cg else row_moves
    rule = one(items, "payoffs", spec, required=False)
    if rule is not None and items["payoff"]:
        raise SpecError(rule.span, "a game gives its payoffs either as payoff lines or as one payoffs rule",
                        "Keep one of them.")
    table = payoff_rule(rule, mc, row_moves, col_moves) if rule is not None else \
        payoff_lines(items, row_moves, col_moves, constant)
    board, legal, update = read_board(items, spec, mc)
    game = Game(row_moves, col_moves, tuple(table.items()), board, legal, update)
    if game.missing():
        r, c = game.missing()[0]
        raise SpecError(mg.span, f"the payoff table has no entry for ({r}, {c})",
                        f"Add a payoff line for every pair of moves ({len(game.missing())} missing).")
    return game


def payoff_lines(items: dict, row_moves, col_moves, constant) -> dict:
    """`payoff ROW, COLUMN, ROW_PAYOFF, COLUMN_PAYOFF` lines as a table."""
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
    return table


def payoff_rule(g: ast.GenericItem, mc: MetaCompiler, row_moves, col_moves) -> dict:
    """`payoffs EXPR` over `row` and `column` (the two moves) giving [row payoff, column payoff]."""
    if len(g.args) != 1:
        raise SpecError(g.span, "payoffs takes one expression over row and column", "")
    unit = mc.unit("payoffs", ["row", "column"], g.args[0])
    table = {}
    for r in row_moves:
        for c in col_moves:
            try:
                pair = unit(Ctx(), [r, c])
            except EvalError as e:
                raise SpecError(g.span, f"payoffs fails on ({r}, {c}): {e.message}", "") from None
            if type(pair) is not list or len(pair) != 2 or any(type(v) not in (int, float) for v in pair):
                raise SpecError(g.span, f"payoffs gives {pair!r} for ({r}, {c}), not [row payoff, column payoff]",
                                "")
            table[(r, c)] = (pair[0], pair[1])
    return table


def read_board(items: dict, spec: ast.Spec, mc: MetaCompiler) -> tuple:
    """(board start over `horizon`, legal moves over `board` and `seat`, update over `board`, `row`, `column`),
    each a Python callable or None."""
    units = {}
    for key, params in (("board", ["horizon"]), ("legal", ["board", "seat"]), ("update", ["board", "row", "column"])):
        g = one(items, key, spec, required=False)
        if g is not None:
            if len(g.args) != 1:
                raise SpecError(g.span, f"{key} takes one expression", "")
            units[key] = mc.unit(key, params, g.args[0])
    if units and "board" not in units and ("update" in units or "legal" in units):
        g = (items["legal"] or items["update"])[0]
        raise SpecError(g.span, "legal and update read the board: add a board line (the board before round 1)",
                        'For example: board {"bullets": [0, 0]}')

    def call(key):
        u = units.get(key)
        return None if u is None else (lambda *args: u(Ctx(), list(args)))

    return call("board"), call("legal"), call("update")


def read_reveal(items: dict, spec: ast.Spec, mc: MetaCompiler):
    """`reveal EXPR` over board, mine, theirs, seat and payoff: what the player is told of a round (or None)."""
    g = one(items, "reveal", spec, required=False)
    if g is None:
        return None
    if len(g.args) != 1:
        raise SpecError(g.span, "reveal takes one expression (the text the player sees of a round)", "")
    unit = mc.unit("reveal", ["board", "mine", "theirs", "seat", "payoff"], g.args[0])
    return lambda *args: unit(Ctx(), list(args))


def read_published_reader(items: dict, spec: ast.Spec, mc: MetaCompiler, game: Game, rounds: bool):
    """`published_read EXPR` over `text` (one reply, as the protocol hands it over) and `tries` (the replies
    already refused in this round): the move the box's published platform reads in the reply, or none when it
    asks again. It reads a move under published grading only (compiler/game/world.py GameWorld.read_published);
    every move written as its own name must read as itself, so the reader is checked on the move list here."""
    g = one(items, "published_read", spec, required=False)
    if g is None:
        return None
    if len(g.args) != 1:
        raise SpecError(g.span, "published_read takes one expression over text and tries", "")
    if not rounds:
        raise SpecError(g.span, "published_read reads one move a reply: it needs `play rounds`", "")
    unit = mc.unit("published_read", ["text", "tries"], g.args[0])

    def reader(text, tries):
        return unit(Ctx(), [text, tries])

    moves_as_themselves(g, game, lambda m: reader(m, 0), "reads", "Every move written as its name must read as itself.")
    return reader


def moves_as_themselves(g, game: Game, fn, verb: str, hint: str) -> None:
    """Every move written as its own name comes out of `fn` as itself (a located SpecError otherwise)."""
    for m in game.row_moves:
        try:
            got = fn(m)
        except EvalError as e:
            raise SpecError(g.span, f"{g.key} fails on the move {m!r}: {e.message}", "") from None
        if got != m:
            raise SpecError(g.span, f"{g.key} {verb} the move {m!r} as {got!r}", hint)


def read_published_seen(items: dict, spec: ast.Spec, mc: MetaCompiler, game: Game):
    """`published_seen EXPR` over `text` (the reply, as the platform hands it to its blackbox) and `move` (the
    move `published_read` read in it): what the box's opponent is told of the player's move under published
    grading, its `theirs` in `next` (hard/load_shoot_defend_smart_final.py hands its blackbox the raw reply).
    A move written as its own name must be seen as itself, so the optimum's opponent is the played one."""
    g = one(items, "published_seen", spec, required=False)
    if g is None:
        return None
    if len(g.args) != 1:
        raise SpecError(g.span, "published_seen takes one expression over text and move", "")
    if one(items, "published_read", spec, required=False) is None:
        raise SpecError(g.span, "published_seen needs a published_read",
                        "It says what the opponent is told of a move that published_read read.")
    unit = mc.unit("published_seen", ["text", "move"], g.args[0])

    def seen(text, move):
        return unit(Ctx(), [text, move])

    moves_as_themselves(g, game, lambda m: seen(m, m), "shows", "A move written as its name must be seen as itself.")
    return seen


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
    start_unit = mc.unit(f"{g.name}.start", ["horizon"], fields["start"].args[0]) if "start" in fields else None
    start = None
    if start_unit is not None:
        try:
            start = start_unit(Ctx(), [0])
        except EvalError:
            start = None  # a start that needs the horizon
    move_unit = mc.unit(f"{g.name}.move", ["state"], fields["move"].args[0])
    next_unit = mc.unit(f"{g.name}.next", ["state", "mine", "theirs"], fields["next"].args[0]) \
        if "next" in fields else None

    def move(state):
        return move_unit(Ctx(), [state])

    def nxt(state, mine, theirs):
        return state if next_unit is None else next_unit(Ctx(), [state, mine, theirs])

    start_fn = None if start_unit is None else (lambda horizon: start_unit(Ctx(), [horizon]))
    return Strategy(g.name, g.note or g.name, 0 if start_unit is None else start, move, nxt, start_fn)


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


def read_tests(items: dict, game: Game, opponents, constant, rounds: bool) -> tuple[TestGame, ...]:
    """The `test H[, NORM]` lines: fresh H-round games against the (single) opponent, with the best score
    possible (round by round, or of a fixed sequence) and the score that counts as 100%."""
    tests = []
    for i, g in enumerate(items["test"], 1):
        h = constant(g.args[0]) if 1 <= len(g.args) <= 2 else None
        if type(h) is not int or not 1 <= h <= 200:
            raise SpecError(g.span, "a test line gives the rounds of a fresh test game (1 to 200) and, optionally, "
                            "the score that counts as 100%", "For example: test 8, or test 8, 6")
        norm = None
        if len(g.args) == 2:
            norm = constant(g.args[1])
            if type(norm) not in (int, float) or norm <= 0:
                raise SpecError(g.args[1].span, "the normaliser of a test is a positive number", "test 8, 6")
        # the optimum is recalled from the world cache when it holds it; its policy then plays from the stored
        # table, running the programme again only off it (records.LazyPolicy)
        best = recall(f"optimum:{i}:{h}:{'rounds' if rounds else 'sequence'}",
                      lambda h=h, g=g: optimum_of_test(items, game, opponents[0], h, rounds, g), encode_optimum,
                      lambda j, h=h: decode_optimum(j, game.row_moves, h,
                                                    lambda: optimum(game, opponents[0], ROW, h).policy))
        tests.append(TestGame(f"g{i}", h, best, g.span.line, float(norm) if norm is not None else None))
    return tuple(tests)


def optimum_of_test(items: dict, game: Game, opponent: Strategy, h: int, rounds: bool, g) -> Optimum:
    """The best score of an h-round test game (round by round, or of a fixed sequence); an opponent that
    breaks the rules is a SpecError at its block (or at the test line)."""
    try:
        best = optimum(game, opponent, ROW, h)
        if not rounds and not best.deterministic:
            best = open_loop_optimum(game, opponent, ROW, h)
        return best
    except GameError as e:
        # an opponent that breaks the rules (an illegal move, a bad probability) is its block's fault
        culprit = next((o for o in items["opponent"] if str(e).startswith(f"{o.name}:")), None)
        if culprit is not None:
            at = next((f.span for f in culprit.fields if f.key == "move"), culprit.span)
            raise SpecError(at, f"opponent {culprit.name}, in the test game of line {g.span.line}: "
                            f"{str(e).split(': ', 1)[1]}", "An opponent's move must be one of its legal "
                            "moves (or a map of them to probabilities summing to 1).") from None
        raise SpecError(g.span, f"the optimum of this test cannot be computed: {e}", "") from None


def game_tasks(tests, family: str, difficulty: str, row_moves, rounds: bool) -> tuple[Task, ...]:
    """One task per test game; its reference answer is the optimal plan."""
    out = []
    for t in tests:
        norm = ("the best total possible" if t.norm is None else f"{show_number(t.norm)}")
        if rounds:
            prompt = (f"Play a fresh {t.horizon}-round game against the same opponent, starting from its initial "
                      "state, one move per reply; after each round you see what happened. Your accuracy is your "
                      f"total payoff divided by {norm}.")
        else:
            prompt = (f"Play a fresh {t.horizon}-round game against the same opponent, starting from its "
                      f"initial state. Reply with your {t.horizon} moves in order ({' or '.join(row_moves[:8])}"
                      f"{', ...' if len(row_moves) > 8 else ''}), separated by "
                      f"{'commas' if any(' ' in m for m in row_moves) else 'spaces'}, in a fenced code block. "
                      f"Your accuracy is your total payoff divided by {norm}.")
        sep = ", " if any(" " in m for m in row_moves) else " "
        out.append(Task(t.id, family or "game", prompt, "play" if rounds else "moves",
                        box_labels(family, difficulty), sep.join(t.optimum.plan), ""))
    return tuple(out)


KIND = Kind("game", compile_spec, "a repeated game: pool play, or strategy inference against one opponent",
            cross_checks=cross_checks, faces=(TurnShotFace, PlayedTests, PoolFace))
