"""Repeated two-player games: strategies, the engine that scores a match, and the exact optimum.

A `Game` is a payoff table over the moves of two seats, `row` and `column`.
A `Strategy` is a finite-state machine written from its own point of view:
`start` is its state before round 1, `move(state)` its move (or a map of
moves to probabilities), `next(state, mine, theirs)` its state after a round
in which it played `mine` against `theirs`. The opponents of a game world are
strategies compiled from the meta-language; tests build them from Python.

`Match` plays one game round by round (the opponent's move is fixed from its
state before the player's move is seen: moves are simultaneous).
`optimum(...)` is the best total score any player can reach against a
strategy over a fixed horizon, computed exactly by dynamic programming over
(opponent state, rounds left); against a mixed strategy it is the best
expected total. `horizon_draw` gives the random horizon of a match from a key,
so the same seed always gives the same horizons.
"""
from __future__ import annotations

import random
from fractions import Fraction
from typing import Callable, Iterable, Sequence

import attrs

ROW, COLUMN = "row", "column"
SEATS = (ROW, COLUMN)
PROB_EPS = 1e-9


def other_seat(seat: str) -> str:
    """The seat facing `seat`."""
    return COLUMN if seat == ROW else ROW


class GameError(Exception):
    """A strategy misbehaved (an unknown move, bad probabilities, an evaluation error)."""


@attrs.frozen
class Game:
    """The moves of both seats and the payoff table."""

    row_moves: tuple[str, ...]
    column_moves: tuple[str, ...]
    # (row move, column move) -> (row payoff, column payoff)
    table: tuple[tuple[tuple[str, str], tuple[float, float]], ...]
    _index: dict = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self):
        object.__setattr__(self, "_index", dict(self.table))

    def moves(self, seat: str) -> tuple[str, ...]:
        return self.row_moves if seat == ROW else self.column_moves

    def payoff(self, seat: str, mine: str, theirs: str):
        """What the player in `seat` gets for playing `mine` against `theirs`."""
        if seat == ROW:
            return self._index[(mine, theirs)][0]
        return self._index[(theirs, mine)][1]

    def missing(self) -> list[tuple[str, str]]:
        return [(r, c) for r in self.row_moves for c in self.column_moves if (r, c) not in self._index]


@attrs.frozen(eq=False)
class Strategy:
    """A finite-state strategy; `move` and `next` are plain Python callables."""

    name: str
    title: str
    start: object
    move: Callable  # state -> move | {move: probability}
    next: Callable  # (state, mine, theirs) -> state

    def distribution(self, state, moves: Sequence[str]) -> tuple[tuple[str, float], ...]:
        """The moves this strategy plays from `state`, with their probabilities (checked)."""
        try:
            m = self.move(state)
        except GameError:
            raise
        except Exception as e:  # noqa: BLE001 - an evaluation error in a spec is reported, not raised raw
            raise GameError(f"{self.name}: its move fails: {getattr(e, 'message', e)}") from None
        if isinstance(m, str):
            if m not in moves:
                raise GameError(f"{self.name}: plays {m!r}, which is not one of its moves "
                                f"({', '.join(moves)})")
            return ((m, 1.0),)
        if isinstance(m, dict):
            out = []
            for k, p in m.items():
                if k not in moves:
                    raise GameError(f"{self.name}: gives a probability to {k!r}, which is not one of "
                                    f"its moves ({', '.join(moves)})")
                if type(p) not in (int, float, Fraction) or p < 0:
                    raise GameError(f"{self.name}: the probability of {k!r} is not a non-negative number")
                if p > 0:
                    out.append((k, p))
            total = sum(p for _, p in out)
            if abs(total - 1) > 1e-6:
                raise GameError(f"{self.name}: its move probabilities sum to {float(total):g}, not 1")
            order = {mv: i for i, mv in enumerate(moves)}
            return tuple(sorted(out, key=lambda kv: order[kv[0]]))
        raise GameError(f"{self.name}: its move must be a move name or a map of moves to "
                        f"probabilities, got {m!r}")

    def advance(self, state, mine: str, theirs: str):
        try:
            return self.next(state, mine, theirs)
        except GameError:
            raise
        except Exception as e:  # noqa: BLE001
            raise GameError(f"{self.name}: its next state fails: {getattr(e, 'message', e)}") from None


def freeze(v):
    """A hashable key for a strategy state (lists and maps become tuples)."""
    if isinstance(v, list):
        return ("L",) + tuple(freeze(x) for x in v)
    if isinstance(v, dict):
        return ("M",) + tuple(sorted(((repr(k), freeze(x)) for k, x in v.items())))
    if isinstance(v, bool):
        return ("B", v)
    return v


def sample(dist: Sequence[tuple[str, float]], u: float) -> str:
    """The move of `dist` that a uniform draw u in [0, 1) selects."""
    acc = 0.0
    for move, p in dist:
        acc += p
        if u < acc:
            return move
    return dist[-1][0]


# ---------------------------------------------------------------- playing


@attrs.frozen
class Round:
    """One round as the player saw it: both moves and both payoffs."""

    index: int  # 1-based
    mine: str
    theirs: str
    my_payoff: float
    their_payoff: float


class Match:
    """One match: the player sits in `seat`; the opponent strategy in the other seat.

    One uniform number is drawn from `rng` every round whether or not the
    opponent is mixed, so every player faces the same random stream.
    """

    def __init__(self, game: Game, opponent: Strategy, seat: str, horizon: int,
                 rng: random.Random | None = None):
        self.game = game
        self.opponent = opponent
        self.seat = seat
        self.horizon = horizon
        self.rng = rng or random.Random(0)
        self.state = opponent.start
        self.rounds: list[Round] = []

    @property
    def done(self) -> bool:
        return len(self.rounds) >= self.horizon

    def play(self, move: str) -> Round:
        g, seat = self.game, self.seat
        if move not in g.moves(seat):
            raise GameError(f"{move!r} is not a move ({', '.join(g.moves(seat))})")
        dist = self.opponent.distribution(self.state, g.moves(other_seat(seat)))
        theirs = sample(dist, self.rng.random())
        r = Round(len(self.rounds) + 1, move, theirs, g.payoff(seat, move, theirs),
                  g.payoff(other_seat(seat), theirs, move))
        self.state = self.opponent.advance(self.state, theirs, move)
        self.rounds.append(r)
        return r

    @property
    def score(self):
        return sum(r.my_payoff for r in self.rounds)


class StrategyPlayer:
    """A strategy playing a seat itself (the classic strategies as agents)."""

    def __init__(self, strategy: Strategy, game: Game, seat: str, rng: random.Random | None = None):
        self.strategy = strategy
        self.moves = game.moves(seat)
        self.state = strategy.start
        self.rng = rng or random.Random(0)

    def choose(self) -> str:
        return sample(self.strategy.distribution(self.state, self.moves), self.rng.random())

    def observe(self, mine: str, theirs: str) -> None:
        self.state = self.strategy.advance(self.state, mine, theirs)


def play_strategies(game: Game, player: Strategy, opponent: Strategy, seat: str, horizon: int,
                    key: str) -> list[Round]:
    """A strategy against a strategy; the two random streams are derived from `key`."""
    m = Match(game, opponent, seat, horizon, random.Random(f"{key}:opponent"))
    p = StrategyPlayer(player, game, seat, random.Random(f"{key}:player"))
    while not m.done:
        r = m.play(p.choose())
        p.observe(r.mine, r.theirs)
    return m.rounds


def play_sequence(game: Game, opponent: Strategy, seat: str, moves: Sequence[str],
                  rng: random.Random | None = None) -> list[Round]:
    """A fixed sequence of moves against a fresh opponent."""
    m = Match(game, opponent, seat, len(moves), rng)
    for mv in moves:
        m.play(mv)
    return m.rounds


def horizon_draw(delta: float, max_rounds: int, key: str) -> int:
    """A random horizon: after each round the game goes on with probability delta (capped)."""
    rng = random.Random(key)
    t = 1
    while t < max_rounds and rng.random() < delta:
        t += 1
    return t


# ---------------------------------------------------------------- the exact optimum


@attrs.frozen
class Optimum:
    """The best total score against a strategy over a horizon, and a plan that reaches it."""

    value: float  # the best (expected) total score
    plan: tuple[str, ...]  # a best sequence (the best open-loop plan when the opponent is deterministic)
    deterministic: bool  # the opponent never mixes on the states this horizon reaches
    states: int  # (state, rounds left) pairs evaluated


def optimum(game: Game, opponent: Strategy, seat: str, horizon: int) -> Optimum:
    """Best total score against `opponent` over `horizon` rounds, by dynamic programming.

    V(s, 0) = 0;  V(s, k) = max over my moves a of
        sum over the opponent's moves b (probability p) of p * (u(a, b) + V(next(s, b, a), k - 1)).
    Ties go to the move declared first, so the plan is deterministic.
    """
    mine = game.moves(seat)
    theirs = game.moves(other_seat(seat))
    memo: dict = {}
    mixed = False

    def value(state, k):
        nonlocal mixed
        if k == 0:
            return 0, None
        key = (freeze(state), k)
        hit = memo.get(key)
        if hit is not None:
            return hit
        dist = opponent.distribution(state, theirs)
        if len(dist) > 1:
            mixed = True
        best, best_move = None, None
        for a in mine:
            total = 0
            for b, p in dist:
                v, _ = value(opponent.advance(state, b, a), k - 1)
                term = game.payoff(seat, a, b) + v
                total = total + (term if p == 1.0 else p * term)
            if best is None or total > best + PROB_EPS:
                best, best_move = total, a
        memo[key] = (best, best_move)
        return best, best_move

    total, _ = value(opponent.start, horizon)
    # the plan: follow the best move along the opponent's most likely branch
    plan = []
    state = opponent.start
    for k in range(horizon, 0, -1):
        _, a = value(state, k)
        dist = opponent.distribution(state, theirs)
        b = max(dist, key=lambda bp: bp[1])[0]
        plan.append(a)
        state = opponent.advance(state, b, a)
    return Optimum(total, tuple(plan), not mixed, len(memo))


def expected_score(game: Game, opponent: Strategy, seat: str, plan: Sequence[str]):
    """The exact expected total of a fixed move sequence against a fresh opponent."""
    theirs = game.moves(other_seat(seat))

    def go(state, i):
        if i == len(plan):
            return 0
        total = 0
        for b, p in opponent.distribution(state, theirs):
            term = game.payoff(seat, plan[i], b) + go(opponent.advance(state, b, plan[i]), i + 1)
            total = total + (term if p == 1.0 else p * term)
        return total

    return go(opponent.start, 0)


def reachable_states(game: Game, opponent: Strategy, seat: str, depth: int, limit: int = 5000) -> int:
    """Walk every state the opponent can reach within `depth` rounds (checks every move it makes)."""
    mine = game.moves(seat)
    theirs = game.moves(other_seat(seat))
    frontier = [opponent.start]
    seen = {freeze(opponent.start)}
    for _ in range(depth):
        nxt = []
        for s in frontier:
            for b, _ in opponent.distribution(s, theirs):
                for a in mine:
                    t = opponent.advance(s, b, a)
                    k = freeze(t)
                    if k not in seen:
                        seen.add(k)
                        nxt.append(t)
                        if len(seen) >= limit:
                            return len(seen)
        if not nxt:
            break
        frontier = nxt
    return len(seen)


# ---------------------------------------------------------------- metrics of repeated play


def cooperation_stats(rounds: Iterable[Round], cooperate: str) -> dict:
    """Moves, cooperations, and betrayals (defecting right after the other cooperated)."""
    n = coop = chances = betrayals = 0
    prev_theirs = None
    for r in rounds:
        n += 1
        if r.mine == cooperate:
            coop += 1
        if prev_theirs == cooperate:
            chances += 1
            if r.mine != cooperate:
                betrayals += 1
        prev_theirs = r.theirs
    return {"rounds": n, "cooperations": coop, "betrayal_chances": chances, "betrayals": betrayals}
