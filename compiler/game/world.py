"""The compiled game: a repeated two-player game, its opponents, and its test games or its pool.

`GameWorld` implements the `World` protocol (compiler/api.py). A Game Strategy
Inference box (a world with test games) is run by the turn@shot protocol: each
turn plays a fresh game with a sequence of moves against the hidden opponent,
and each test game is answered with all its moves at once, scored over the
exact optimum. A world without tests is run by the pool protocol: models and
strategies play matches against every opponent, from both seats.
"""
from __future__ import annotations

import random
import re
from typing import Iterator

import attrs

from worldspec.compiler.api import CaseResult, Feedback, InputError, ScoredVerdict, ToolSpec, capped
from worldspec.compiler.game.certify import certify_game
from worldspec.compiler.game.engine import (ROW, Game, GameError, Match, Optimum, Round, Strategy,
                                            cooperation_stats, expected_score, horizon_draw, other_seat,
                                            play_sequence, play_strategies)
from worldspec.compiler.items import BoxWorld

MAX_INPUT_CHARS = 4000


@attrs.frozen
class TestGame:
    """A fresh game of `horizon` rounds against the opponent, and the best score possible in it."""

    id: str
    horizon: int
    optimum: Optimum
    line: int


@attrs.frozen
class PoolMatch:
    """One match of pool play: match `index` against `opponent`, the player in `seat`."""

    opponent: str
    seat: str
    index: int
    horizon: int
    rounds: tuple


@attrs.frozen(eq=False)
class GameWorld(BoxWorld):
    """A repeated game: a pool of opponents, or one hidden opponent and test games (a GSI box)."""

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
        """The opponent with this name."""
        for s in self.opponents:
            if s.name == name:
                return s
        raise KeyError(f"no strategy {name!r} in {self.name}")

    def match_key(self, opponent: str, seat: str, k: int) -> str:
        """The seed key of match k against `opponent` from `seat` (its horizon and random streams)."""
        return f"worldspec:{self.seed}:match:{opponent}:{seat}:{k}"

    def horizon_for(self, opponent: str, seat: str, k: int) -> int:
        """The number of rounds of match k: fixed, or drawn from the seed (same seed, same horizons)."""
        if self.horizon:
            return self.horizon
        return horizon_draw(self.delta, self.max_rounds, self.match_key(opponent, seat, k) + ":horizon")

    def opponent_rng(self, opponent: str, seat: str, k: int) -> random.Random:
        """The opponent's random stream in match k (the same for every player)."""
        return random.Random(self.match_key(opponent, seat, k) + ":opponent")

    def schedule(self) -> list[tuple[str, str, int]]:
        """Every (opponent, seat, match index) of pool play, in a fixed order."""
        return [(o.name, s, k) for o in self.opponents for s in self.seats for k in range(self.matches)]

    def play_pool(self, strategy: Strategy) -> list[PoolMatch]:
        """A strategy (a classic agent or a baseline) against the whole pool."""
        return [PoolMatch(opp, seat, k, self.horizon_for(opp, seat, k),
                          tuple(self.play_strategy(strategy, opp, seat, k))) for opp, seat, k in self.schedule()]

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
        """The moves of the player in `seat`."""
        return self.game.moves(seat)

    def parse_moves(self, text, seat: str = ROW) -> list[str]:
        """Moves separated by spaces or commas; case and full words (`cooperate`) are forgiven."""
        if not isinstance(text, str):
            raise InputError("the moves must be text")
        if len(text) > MAX_INPUT_CHARS:
            raise InputError("the input is too long")
        moves = self.moves_for(seat)
        out = []
        for tok in [t for t in re.split(r"[\s,;]+", text.strip().strip("`")) if t]:
            out.extend(_read_token(tok, moves))
        if not out:
            raise InputError(f"no moves given (moves: {', '.join(moves)})")
        return out

    def read_probe(self, text) -> list[str]:
        """The moves of one probe (at most `probe_rounds`); raises InputError with the reason."""
        moves = self.parse_moves(text)
        if len(moves) > self.probe_rounds:
            raise InputError(f"at most {self.probe_rounds} moves per probe, got {len(moves)}")
        return moves

    def probe(self, text) -> Feedback:
        """Play a fresh game with these moves; see the opponent's replies and your payoffs."""
        try:
            moves = self.read_probe(text)
        except InputError as e:
            return Feedback(f"rejected: {e}. Nothing was played and no turn is used.", 0, "rejected")
        lines = []
        try:
            for opp in self.opponents:
                rounds = play_sequence(self.game, opp, ROW, moves, random.Random(f"probe:{self.seed}:{opp.name}"))
                prefix = f"{opp.name}: " if len(self.opponents) > 1 else ""
                lines.append(f"{prefix}opponent played: {' '.join(r.theirs for r in rounds)}")
                pays = " ".join(_num(r.my_payoff) for r in rounds)
                lines.append(f"{prefix}your payoffs: {pays} (total {_num(sum(r.my_payoff for r in rounds))})")
        except GameError as e:
            return Feedback(f"error: {e}", self.budget.cost("input"), "error")
        text_out, truncated = capped("\n".join(lines), self.budget.feedback_chars)
        return Feedback(text_out, self.budget.cost("input"), "ok", truncated)

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        """An endless seeded stream of move sequences a probe accepts."""
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
        h = self.test_of(task).horizon
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
        """The one exploration tool: play a fresh game with a sequence of moves."""
        return ToolSpec("play_moves", f"Play a fresh game of {self.name} with a sequence of your moves.",
                        "input", "Your moves in order, separated by spaces.")

    # ------------------------------------------------------------ grading

    def verify(self, task, answer) -> ScoredVerdict:
        """Score a move sequence for a test game: accuracy = score / exact optimum (in [0, 1])."""
        g = self.test_of(task)
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
        """No rules to require: a game perturbs none."""
        return frozenset()

    @property
    def open_book(self) -> str:
        """The opponents by name and title (the open-book condition)."""
        return "\n".join(f"- {s.name}: {s.title}" for s in self.opponents)

    # ------------------------------------------------------------ certification

    def certify(self, progress=None) -> dict:
        """The game's certification report (compiler/game/certify.py)."""
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
