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

import itertools
import random
import re
from typing import Iterator

import attrs

from worldspec import ast
from worldspec.compiler.common import draw_params, interpolate
from worldspec.compiler.game.engine import (COLUMN, ROW, SEATS, Game, GameError, Match, Optimum, Round, Strategy,
                                            cooperation_stats, expected_score, horizon_draw, optimum,
                                            other_seat, play_sequence, play_strategies, reachable_states)
from worldspec.compiler.blackbox.spec import (DIFFICULTIES, box_budget, group_items, one,
                                              reject_program_sections, word)
from worldspec.compiler.api import (Kind, CaseResult, Feedback, InputError, ScoredVerdict, Task, ToolSpec,
                                    WorldHeader, by_id, capped)
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import MetaCompiler
from worldspec.values import Ctx, EvalError

ITEMS = ("family", "difficulty", "moves", "column_moves", "payoff", "horizon", "continue", "max_rounds",
         "cooperate", "matches", "seats", "baseline", "fallback", "test", "probe_rounds")
BLOCKS = ("opponent",)
OPPONENT_FIELDS = ("start", "move", "next")
BRUTE_FORCE_LIMIT = 5000


@attrs.frozen
class TestGame:
    id: str
    horizon: int
    optimum: Optimum
    line: int


@attrs.frozen
class PoolMatch:
    opponent: str
    seat: str
    index: int
    horizon: int
    rounds: tuple


@attrs.frozen(eq=False)
class GameWorld(WorldHeader):
    family: str  # "" for a world that is not an Oracle box
    difficulty: str
    game: Game
    opponents: tuple[Strategy, ...]
    seats: tuple[str, ...]
    horizon: int  # 0 when random
    delta: float
    max_rounds: int
    matches: int
    baselines: tuple[str, ...]
    cooperate: str
    fallback: str
    probe_rounds: int
    tests: tuple[TestGame, ...]
    source: str = ""

    # ------------------------------------------------------------ the pool

    @property
    def protocol(self) -> str:
        """How the runner runs this world (compiler.api.PROTOCOLS)."""
        return "turn@shot" if self.tasks else "pool"

    def strategy(self, name: str) -> Strategy:
        for s in self.opponents:
            if s.name == name:
                return s
        raise KeyError(f"no strategy {name!r} in {self.name}")

    def match_key(self, opponent: str, seat: str, k: int) -> str:
        return f"worldspec:{self.seed}:match:{opponent}:{seat}:{k}"

    def horizon_for(self, opponent: str, seat: str, k: int) -> int:
        """The number of rounds of match k: fixed, or drawn from the seed (same seed, same horizons)."""
        if self.horizon:
            return self.horizon
        return horizon_draw(self.delta, self.max_rounds, self.match_key(opponent, seat, k) + ":horizon")

    def opponent_rng(self, opponent: str, seat: str, k: int) -> random.Random:
        return random.Random(self.match_key(opponent, seat, k) + ":opponent")

    def schedule(self) -> list[tuple[str, str, int]]:
        """Every (opponent, seat, match index) of pool play, in a fixed order."""
        return [(o.name, s, k) for o in self.opponents for s in self.seats for k in range(self.matches)]

    def play_pool(self, strategy: Strategy) -> list[PoolMatch]:
        """A strategy (a classic agent or a baseline) against the whole pool."""
        out = []
        for opp, seat, k in self.schedule():
            h = self.horizon_for(opp, seat, k)
            rounds = play_strategies(self.game, strategy, self.strategy(opp), seat, h,
                                     self.match_key(opp, seat, k))
            out.append(PoolMatch(opp, seat, k, h, tuple(rounds)))
        return out

    def new_match(self, opponent: str, seat: str, k: int) -> Match:
        """Match k of pool play against `opponent`, the player in `seat` (horizon and randomness from the seed)."""
        return Match(self.game, self.strategy(opponent), seat, self.horizon_for(opponent, seat, k),
                     self.opponent_rng(opponent, seat, k))

    def play_strategy(self, strategy: Strategy, opponent: str, seat: str, k: int) -> list[Round]:
        """Match k of pool play with a strategy (a classic agent or a baseline) in `seat`."""
        return play_strategies(self.game, strategy, self.strategy(opponent), seat,
                               self.horizon_for(opponent, seat, k), self.match_key(opponent, seat, k))

    def cooperation_stats(self, rounds) -> dict:
        """Cooperations, betrayals and their chances in these rounds ({} when the game names no cooperative move)."""
        return cooperation_stats(rounds, self.cooperate) if self.cooperate else {}

    def payoff_lines(self, seat: str = ROW) -> list[str]:
        """Every pair of moves with both payoffs, from `seat`'s point of view."""
        g = self.game
        other = other_seat(seat)
        return [f"- you {a}, other {b}: you get {_num(g.payoff(seat, a, b))}, the other gets "
                f"{_num(g.payoff(other, b, a))}" for a in g.moves(seat) for b in g.moves(other)]

    # ------------------------------------------------------------ probing

    def moves_for(self, seat: str = ROW) -> tuple[str, ...]:
        return self.game.moves(seat)

    def parse_moves(self, text, seat: str = ROW) -> list[str]:
        """Moves separated by spaces or commas; case and full words (`cooperate`) are forgiven."""
        if not isinstance(text, str):
            raise InputError("the moves must be text")
        if len(text) > 4000:
            raise InputError("the input is too long")
        moves = self.moves_for(seat)
        out = []
        for tok in [t for t in re.split(r"[\s,;]+", text.strip().strip("`")) if t]:
            out.extend(_read_token(tok, moves))
        if not out:
            raise InputError(f"no moves given (moves: {', '.join(moves)})")
        return out

    def probe(self, text) -> Feedback:
        """Play a fresh game with these moves; see the opponent's replies and your payoffs."""
        try:
            moves = self.parse_moves(text)
        except InputError as e:
            return Feedback(f"rejected: {e}. Nothing was played and no turn is used.", 0, "rejected")
        if len(moves) > self.probe_rounds:
            return Feedback(f"rejected: at most {self.probe_rounds} moves per probe, got {len(moves)}. Nothing "
                            "was played and no turn is used.", 0, "rejected")
        lines = []
        try:
            for opp in self.opponents:
                rounds = play_sequence(self.game, opp, ROW, moves, random.Random(f"probe:{self.seed}:{opp.name}"))
                prefix = f"{opp.name}: " if len(self.opponents) > 1 else ""
                lines.append(f"{prefix}opponent played: {' '.join(r.theirs for r in rounds)}")
                pays = " ".join(_num(r.my_payoff) for r in rounds)
                lines.append(f"{prefix}your payoffs: {pays} (total {_num(sum(r.my_payoff for r in rounds))})")
        except GameError as e:
            return Feedback(f"error: {e}", 1, "error")
        text_out, truncated = capped("\n".join(lines), self.budget.feedback_chars)
        return Feedback(text_out, 1, "ok", truncated)

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        rng = random.Random(f"probes:{self.name}:{seed}")
        moves = self.moves_for(ROW)
        while True:
            n = rng.randint(1, self.probe_rounds)
            yield " ".join(rng.choice(moves) for _ in range(n))

    @property
    def turn_instructions(self) -> str:
        """What one exploration turn is, as a turn@shot session tells the player."""
        return (f"In each turn, reply with a sequence of up to {self.probe_rounds} of your moves, separated by "
                "spaces: a fresh game is played with them against the opponent, from its initial state, and you "
                "see its moves and your payoffs. After the exploration, for each test game you submit all your "
                "moves at once; its accuracy is your total payoff divided by the best total possible against "
                "this opponent.")

    def answer_from(self, task, observed) -> str:
        """A memorising player's answer: the observed move sequence with the best payoff, repeated to length."""
        h = self.test_game(task).horizon
        best, best_avg = None, None
        for text in observed:
            try:
                moves = self.parse_moves(text)
            except InputError:
                continue
            rounds = play_sequence(self.game, self.opponents[0], ROW, moves)
            avg = sum(r.my_payoff for r in rounds) / len(rounds)
            if best_avg is None or avg > best_avg:
                best, best_avg = moves, avg
        best = best or [self.game.row_moves[0]]
        return " ".join((best * (h // len(best) + 1))[:h])

    @property
    def tool(self) -> ToolSpec:
        return ToolSpec("play_moves", f"Play a fresh game of {self.name} with a sequence of your moves.",
                        "input", "Your moves in order, separated by spaces.")

    # ------------------------------------------------------------ grading

    def task(self, task) -> Task:
        return by_id(self.tasks, task, self.name)

    def test_game(self, task) -> TestGame:
        return by_id(self.tests, task, self.name)

    def verify(self, task, answer) -> ScoredVerdict:
        """Score a move sequence for a test game: accuracy = score / exact optimum (in [0, 1])."""
        g = self.test_game(task)
        best = g.optimum.value
        want = f"{_num(best)} (e.g. {' '.join(g.optimum.plan)})"
        try:
            moves = self.parse_moves(answer)
        except InputError as e:
            return ScoredVerdict(g.id, False, f"incorrect: {e}", (CaseResult((g.horizon,), want, str(answer), False),), 0.0)
        if len(moves) != g.horizon:
            return ScoredVerdict(g.id, False, f"incorrect: expected {g.horizon} moves, got {len(moves)}",
                                 (CaseResult((g.horizon,), want, " ".join(moves), False),), 0.0)
        got = expected_score(self.game, self.opponents[0], ROW, moves)
        ratio = max(0.0, min(1.0, float(got) / float(best))) if best > 0 else (1.0 if got >= best else 0.0)
        ok = got >= best - 1e-9
        return ScoredVerdict(g.id, ok, f"score {_num(got)} of an optimum {_num(best)}",
                             (CaseResult((g.horizon,), want, f"{' '.join(moves)} -> {_num(got)}", ok),), ratio)

    def requires(self, task) -> frozenset[str]:
        return frozenset()

    @property
    def open_book(self) -> str:
        return "\n".join(f"- {s.name}: {s.title}" for s in self.opponents)

    # ------------------------------------------------------------ certification

    def certify(self, progress=None) -> dict:
        return certify_game(self, progress)


def _num(x) -> str:
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def _read_token(tok: str, moves) -> list[str]:
    low = {m.lower(): m for m in moves}
    t = tok.lower().strip(".!\"'()[]")
    if t in low:
        return [low[t]]
    starts = [m for m in moves if t.startswith(m.lower())]
    if len(starts) == 1 and t.isalpha() and len(t) > len(starts[0]) and not all(c in low for c in t):
        return [starts[0]]  # a full word: "cooperate" for C, "rock" for R
    if all(len(m) == 1 for m in moves) and t and all(c in low for c in t):
        return [low[c] for c in t]  # "CCDC"
    raise InputError(f"{tok!r} is not a move (moves: {', '.join(moves)})")


# ---------------------------------------------------------------- compiling


def _strategy(mc: MetaCompiler, g: ast.GenericItem, constant) -> Strategy:
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


def compile_spec(spec: ast.Spec, seed: int | None = None) -> GameWorld:
    seed = spec.seed if seed is None else seed
    reject_program_sections(spec)
    if spec.base or spec.rules or spec.herrings:
        span = (spec.base or spec.rules or spec.herrings)[0].span
        raise SpecError(span, "a game world has no base, rule or herring sections",
                        "Its hidden part is the opponent strategy.")
    items = group_items(spec, ITEMS, BLOCKS)
    params = draw_params(spec, seed)
    mc = MetaCompiler(params)
    for d in spec.defs:
        if d.name in mc.defs or d.name in params:
            raise SpecError(d.span, f"{d.name} is defined twice", "Give each def a unique name.")
        mc.add_def(d)

    def constant(e):
        try:
            return mc.constant(e)
        except EvalError as err:
            raise SpecError(e.span, f"this value cannot be computed: {err.message}", "") from None

    def strings(g, what):
        vals = [constant(a) for a in g.args]
        if len(vals) < 2 or any(type(v) is not str or not v.strip() or " " in v for v in vals):
            raise SpecError(g.span, f"{what} lists two or more move names (strings without spaces)",
                            f'For example: {what} "C", "D"')
        if len(set(vals)) != len(vals):
            raise SpecError(g.span, f"{what} repeats a move", "")
        return tuple(vals)

    def int_item(key, default, lo=1):
        g = one(items, key, spec, required=False)
        if g is None:
            return default
        v = constant(g.args[0]) if len(g.args) == 1 else None
        if type(v) is not int or v < lo:
            raise SpecError(g.span, f"{key} takes an integer of at least {lo}", f"For example: {key} 10")
        return v

    mg = one(items, "moves", spec)
    row_moves = strings(mg, "moves")
    cg = one(items, "column_moves", spec, required=False)
    col_moves = strings(cg, "column_moves") if cg else row_moves
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

    opponents = []
    for g in items["opponent"]:
        if any(o.name == g.name for o in opponents):
            raise SpecError(g.span, f"opponent {g.name} is declared twice", "Opponent names must be unique.")
        opponents.append(_strategy(mc, g, constant))
    if not opponents:
        raise SpecError(spec.span, "this game has no opponent", 'Add: opponent NAME "title" { move ... }')

    hg, cg2 = one(items, "horizon", spec, required=False), one(items, "continue", spec, required=False)
    if hg is not None and cg2 is not None or (hg is None and cg2 is None and not items["test"]):
        raise SpecError(spec.span, "a game needs either a fixed horizon or a continuation probability",
                        "Add: horizon 10, or: continue 0.9 (with max_rounds).")
    horizon = int_item("horizon", 0)
    delta = 0.0
    if cg2 is not None:
        delta = constant(cg2.args[0]) if len(cg2.args) == 1 else None
        if type(delta) not in (int, float) or not 0 <= delta < 1:
            raise SpecError(cg2.span, "continue takes a probability in [0, 1)", "For example: continue 0.9")
        delta = float(delta)
    max_rounds = int_item("max_rounds", 100)
    matches = int_item("matches", 5)

    sg = one(items, "seats", spec, required=False)
    seats = SEATS
    if sg is not None:
        seats = tuple(word(a, "seats") for a in sg.args)
        if not seats or any(s not in SEATS for s in seats) or len(set(seats)) != len(seats):
            raise SpecError(sg.span, "seats lists row and/or column", "For example: seats row, column")

    coop = one(items, "cooperate", spec, required=False)
    cooperate = ""
    if coop is not None:
        cooperate = constant(coop.args[0])
        if cooperate not in row_moves or cooperate not in col_moves:
            raise SpecError(coop.span, f"{cooperate!r} is not a move of both seats", "")
    fb = one(items, "fallback", spec, required=False)
    fallback = row_moves[-1]
    if fb is not None:
        fallback = constant(fb.args[0])
        if fallback not in row_moves or fallback not in col_moves:
            raise SpecError(fb.span, f"{fallback!r} is not a move of both seats", "")
    names = [o.name for o in opponents]
    baselines = []
    for g in items["baseline"]:
        for a in g.args:
            n = word(a, "baseline")
            if n not in names:
                raise SpecError(a.span, f"baseline {n} is not an opponent of this game",
                                did_you_mean(n, names).strip() or "Baselines name opponents.")
            baselines.append(n)

    fam = one(items, "family", spec, required=False)
    family = word(fam.args[0], "family") if fam else ""
    dg = one(items, "difficulty", spec, required=bool(family))
    difficulty = word(dg.args[0], "difficulty") if dg else ""
    if dg is not None and difficulty not in DIFFICULTIES:
        raise SpecError(dg.args[0].span, f"unknown difficulty {difficulty!r}", "Write easy or hard.")
    if items["test"] and len(opponents) != 1:
        raise SpecError(items["test"][0].span, "test games need exactly one opponent",
                        "A Game Strategy Inference box plays one hidden opponent.")
    if family and not items["test"]:
        raise SpecError(spec.span, f"this {family} box has no test game", "Add: test 8 (an 8-round game).")
    budget = box_budget(spec)
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

    probe_rounds = int_item("probe_rounds", max([10] + [t.horizon for t in tests]))
    if not horizon and not delta and tests:
        horizon = max(t.horizon for t in tests)  # a box's games are its probes and its test games
    summary = interpolate(spec.summary, params)
    tasks = tuple(Task(t.id, family or "game",
                       f"Play a fresh {t.horizon}-round game against the same opponent, starting from its "
                       f"initial state. Reply with your {t.horizon} moves in order "
                       f"({' or '.join(row_moves)}), separated by spaces, in a fenced code block. Your "
                       "accuracy is your total payoff divided by the best total possible.",
                       "moves", (("difficulty", difficulty), ("family", family)), " ".join(t.optimum.plan), "")
                  for t in tests)
    world = GameWorld(spec.name, spec.version, spec.kind, seed, spec.seed, summary, tuple(params.items()), "",
                      (), tasks, (), (), budget, family, difficulty, game, tuple(opponents), seats, horizon,
                      delta, max_rounds, matches, tuple(baselines), cooperate, fallback, probe_rounds,
                      tuple(tests), spec.file)
    return attrs.evolve(world, manual=render_game_manual(spec, world, params))


def render_game_manual(spec: ast.Spec, w: GameWorld, params: dict) -> str:
    out = [f"# {spec.name}", ""]
    if w.summary:
        out += [w.summary, ""]
    if spec.manual:
        out += [interpolate(spec.manual, params).strip(), ""]
    out += ["## The game", "",
            f"Each round both players choose a move at the same time ({', '.join(w.game.row_moves)}); "
            "each sees the other's move after the round. Payoffs per round:", ""]
    out += w.payoff_lines()
    out.append("")
    if w.tests:
        lengths = sorted({t.horizon for t in w.tests})
        out.append(f"Test games last {' or '.join(map(str, lengths))} rounds; a probe plays up to "
                   f"{w.probe_rounds}.")
    elif w.horizon:
        out.append(f"A game lasts {w.horizon} rounds.")
    else:
        out.append(f"After every round the game continues with probability {w.delta:g} (at most "
                   f"{w.max_rounds} rounds): on average {1 / (1 - w.delta):.3g} rounds.")
    if w.tests:
        out += ["", "## Interaction", "",
                f"The opponent follows a fixed hidden strategy. You have {w.budget.turns} exploration turns: "
                f"in each, send a sequence of up to {w.probe_rounds} moves; a fresh game is played with them "
                "and you see the opponent's moves and your payoffs. Then, for each test game, you submit "
                f"all your moves at once ({w.budget.shots} attempt(s) each); accuracy is your score divided "
                "by the best score possible against this opponent."]
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------- certification


def _stock_opponents(world: GameWorld) -> list[Strategy]:
    """The simplest hypotheses about an opponent: a constant move, or copying the player's last move."""
    theirs, mine = world.game.moves(COLUMN), world.game.moves(ROW)
    out = [Strategy(f"always {m}", f"always {m}", 0, lambda s, m=m: m, lambda s, a, b: s) for m in theirs]
    if set(mine) <= set(theirs):
        out.append(Strategy("copy", "copies the player's previous move", theirs[0], lambda s: s,
                            lambda s, a, b: b))
    return out


def certify_game(w: GameWorld, progress=None) -> dict:
    say = progress or (lambda msg: None)
    problems: list[str] = []
    notes: list[str] = []
    depth = max([t.horizon for t in w.tests] + [w.probe_rounds, min(w.max_rounds, 12) if not w.horizon
                                                  else w.horizon])
    opp_table = []
    for o in w.opponents:
        say(f"walking the states of {o.name}")
        try:
            n = reachable_states(w.game, o, ROW, depth)
            if COLUMN in w.seats:
                n = max(n, reachable_states(w.game, o, COLUMN, depth))
            opp_table.append({"id": o.name, "title": o.title, "states": n})
        except GameError as e:
            problems.append(f"opponent {o.name}: {e}")
            opp_table.append({"id": o.name, "title": o.title, "states": None})
    test_table = []
    for t in w.tests:
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
        test_table.append(row)
    hyp_table = []
    if w.tests and not problems:
        for h in _stock_opponents(w):
            ratios = []
            for t in w.tests:
                plan = optimum(w.game, h, ROW, t.horizon).plan
                got = expected_score(w.game, w.opponents[0], ROW, plan)
                ratios.append(max(0.0, float(got) / float(t.optimum.value)))
            solved = all(r >= 1 - 1e-9 for r in ratios)
            hyp_table.append({"name": h.name, "refuted": not solved,
                              "accuracy": round(100 * sum(min(r, 1.0) for r in ratios) / len(ratios), 1)})
            if solved and w.difficulty == "hard":
                problems.append(f"the best reply to the simple hypothesis {h.name!r} is optimal in every test: "
                                "the box is not harder than that guess")
        notes.append(f"simple hypotheses refuted by the tests: {sum(h['refuted'] for h in hyp_table)} of "
                     f"{len(hyp_table)} (best replies to a constant or copying opponent)")
    baselines = {}
    if not w.tests and not problems:
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


KIND = Kind("game", compile_spec, "a repeated game: pool play, or strategy inference against one opponent")
