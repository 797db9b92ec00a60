"""Repeated two-player games: strategies, the engine that scores a match, and the exact optimum.

A `Game` is a payoff table over the moves of two seats, `row` and `column`,
and optionally a board: a state both players share (bullets, the cards in
each hand) from which the moves legal for a seat are computed and which each
round updates. A `Strategy` is a finite-state machine written from its own
point of view: `start` is its state before round 1 (or `start_fn(horizon)`),
`move(state)` its move (or a map of moves to probabilities),
`next(state, mine, theirs)` its state after a round in which it played `mine`
against `theirs`. The opponents of a game world are strategies compiled from
the meta-language; tests build them from Python.

`Match` plays one game round by round (the opponent's move is fixed from its
state before the player's move is seen: moves are simultaneous).
`optimum(...)` is the best total score any player can reach against a
strategy over a fixed horizon, computed exactly by dynamic programming over
(opponent state, board, rounds left); against a mixed strategy it is the best
expected total of a player who sees every round (round-by-round play).
`open_loop_optimum(...)` is the best expected total of a move sequence fixed in
advance, by dynamic programming over beliefs (distributions over opponent state
and board); where the beliefs are too many, the round-by-round optimum bounds
it from above. `horizon_draw` gives the random horizon of a match from a key,
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
    """The moves of both seats, the payoff table and (optionally) the board and its rules."""

    row_moves: tuple[str, ...]
    column_moves: tuple[str, ...]
    # (row move, column move) -> (row payoff, column payoff)
    table: tuple[tuple[tuple[str, str], tuple[float, float]], ...]
    board_fn: Callable | None = None  # horizon -> the board before round 1
    legal_fn: Callable | None = None  # (board, seat) -> the moves that seat may play now
    update_fn: Callable | None = None  # (board, row move, column move) -> the board after the round
    _index: dict = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self):
        object.__setattr__(self, "_index", dict(self.table))

    def moves(self, seat: str) -> tuple[str, ...]:
        return self.row_moves if seat == ROW else self.column_moves

    @property
    def has_board(self) -> bool:
        """Whether legal moves or the board change from round to round."""
        return self.legal_fn is not None or self.update_fn is not None

    def board(self, horizon: int):
        """The board before round 1 of a game of `horizon` rounds (None for a game without one)."""
        return None if self.board_fn is None else _guard("the board", self.board_fn, horizon)

    def legal(self, board, seat: str) -> tuple[str, ...]:
        """The moves `seat` may play on this board, in declaration order."""
        everything = self.moves(seat)
        if self.legal_fn is None:
            return everything
        got = _guard("the legal moves", self.legal_fn, board, seat)
        if not isinstance(got, list) or any(m not in everything for m in got):
            raise GameError(f"the legal moves of {seat} must be a list of its moves, got {got!r}")
        allowed = set(got)
        out = tuple(m for m in everything if m in allowed)
        if not out:
            raise GameError(f"{seat} has no legal move on the board {board!r}")
        return out

    def after(self, board, row: str, column: str):
        """The board after a round in which row played `row` and column `column`."""
        return board if self.update_fn is None else _guard("the board update", self.update_fn, board, row, column)

    def after_seat(self, board, seat: str, mine: str, theirs: str):
        """The board after a round, the moves given from `seat`'s point of view."""
        return self.after(board, mine, theirs) if seat == ROW else self.after(board, theirs, mine)

    def payoff(self, seat: str, mine: str, theirs: str):
        """What the player in `seat` gets for playing `mine` against `theirs`."""
        if seat == ROW:
            return self._index[(mine, theirs)][0]
        return self._index[(theirs, mine)][1]

    def missing(self) -> list[tuple[str, str]]:
        return [(r, c) for r in self.row_moves for c in self.column_moves if (r, c) not in self._index]


def _guard(what: str, fn: Callable, *args):
    try:
        return fn(*args)
    except GameError:
        raise
    except Exception as e:  # noqa: BLE001 - an evaluation error in a spec is reported, not raised raw
        raise GameError(f"{what} fails: {getattr(e, 'message', e)}") from None


@attrs.frozen(eq=False)
class Strategy:
    """A finite-state strategy; `move` and `next` are plain Python callables."""

    name: str
    title: str
    start: object
    move: Callable  # state -> move | {move: probability}
    next: Callable  # (state, mine, theirs) -> state
    start_fn: Callable | None = None  # horizon -> its state before round 1 (instead of `start`)

    def initial(self, horizon: int):
        """Its state before round 1 of a game of `horizon` rounds."""
        if self.start_fn is None:
            return self.start
        return _guard(f"{self.name}: its start", self.start_fn, horizon)

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
                raise GameError(f"{self.name}: plays {m!r}, which is not among its legal moves "
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
    opponent is mixed, so every player faces the same random stream. The board
    (when the game has one) decides which moves are legal; an illegal move of the
    player is a GameError and plays nothing.
    """

    def __init__(self, game: Game, opponent: Strategy, seat: str, horizon: int,
                 rng: random.Random | None = None):
        self.game = game
        self.opponent = opponent
        self.seat = seat
        self.horizon = horizon
        self.rng = rng or random.Random(0)
        self.state = opponent.initial(horizon)
        self.board = game.board(horizon)
        self.rounds: list[Round] = []

    @property
    def done(self) -> bool:
        return len(self.rounds) >= self.horizon

    def legal(self) -> tuple[str, ...]:
        """The moves the player may play this round."""
        return self.game.legal(self.board, self.seat)

    def play(self, move: str, seen: str | None = None) -> Round:
        """One round of `move`; the opponent's next state sees `seen` in its place when given (what a
        published platform hands its blackbox of the move: `published_seen`), else the move."""
        g, seat = self.game, self.seat
        if move not in g.moves(seat):
            raise GameError(f"{move!r} is not a move ({', '.join(g.moves(seat))})")
        legal = self.legal()
        if move not in legal:
            raise GameError(f"{move!r} is not legal now (legal: {', '.join(legal)})")
        theirs_legal = g.legal(self.board, other_seat(seat))
        dist = self.opponent.distribution(self.state, theirs_legal)
        theirs = sample(dist, self.rng.random())
        r = Round(len(self.rounds) + 1, move, theirs, g.payoff(seat, move, theirs),
                  g.payoff(other_seat(seat), theirs, move))
        try:
            self.state = self.opponent.advance(self.state, theirs, move if seen is None else seen)
        except GameError:
            if seen is None or seen == move:
                raise
            # a strategy written for move names may fail on other text: it is told the move then
            self.state = self.opponent.advance(self.state, theirs, move)
        self.board = g.after_seat(self.board, seat, move, theirs)
        self.rounds.append(r)
        return r

    @property
    def score(self):
        return sum(r.my_payoff for r in self.rounds)


class StrategyPlayer:
    """A strategy playing a seat itself (the classic strategies as agents)."""

    def __init__(self, strategy: Strategy, game: Game, seat: str, rng: random.Random | None = None,
                 horizon: int = 0):
        self.strategy = strategy
        self.moves = game.moves(seat)
        self.state = strategy.initial(horizon)
        self.rng = rng or random.Random(0)

    def choose(self) -> str:
        return sample(self.strategy.distribution(self.state, self.moves), self.rng.random())

    def observe(self, mine: str, theirs: str) -> None:
        self.state = self.strategy.advance(self.state, mine, theirs)


def play_strategies(game: Game, player: Strategy, opponent: Strategy, seat: str, horizon: int,
                    key: str) -> list[Round]:
    """A strategy against a strategy; the two random streams are derived from `key`."""
    m = Match(game, opponent, seat, horizon, random.Random(f"{key}:opponent"))
    p = StrategyPlayer(player, game, seat, random.Random(f"{key}:player"), horizon)
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
    exact: bool = True  # False: `value` is an upper bound (the round-by-round optimum bounds a fixed sequence)
    # (opponent state, board, rounds left) -> the best move of a player who sees every round
    policy: Callable | None = attrs.field(default=None, eq=False, repr=False)
    # the programme's table behind `policy`: (freeze(state), freeze(board), rounds left) -> (value, best move)
    table: dict | None = attrs.field(default=None, eq=False, repr=False)


def optimum(game: Game, opponent: Strategy, seat: str, horizon: int) -> Optimum:
    """Best total score against `opponent` over `horizon` rounds, by dynamic programming.

    V(s, d, 0) = 0;  V(s, d, k) = max over my legal moves a on board d of
        sum over the opponent's moves b (probability p) of p * (u(a, b) + V(next(s, b, a), d', k - 1)).
    A mixed opponent makes it the best expected total of a player who sees every round (round-by-round
    play); against a deterministic one that is also the best fixed sequence. Ties go to the move declared
    first, so the plan is deterministic.
    """
    other = other_seat(seat)
    memo: dict = {}
    mixed = False

    def value(state, board, k):
        nonlocal mixed
        if k == 0:
            return 0, None
        key = (freeze(state), freeze(board), k)
        hit = memo.get(key)
        if hit is not None:
            return hit
        dist = opponent.distribution(state, game.legal(board, other))
        if len(dist) > 1:
            mixed = True
        best, best_move = None, None
        for a in game.legal(board, seat):
            total = 0
            for b, p in dist:
                v, _ = value(opponent.advance(state, b, a), game.after_seat(board, seat, a, b), k - 1)
                term = game.payoff(seat, a, b) + v
                total = total + (term if p == 1.0 else p * term)
            if best is None or total > best + PROB_EPS:
                best, best_move = total, a
        memo[key] = (best, best_move)
        return best, best_move

    start, board = opponent.initial(horizon), game.board(horizon)
    total, _ = value(start, board, horizon)
    # the plan: follow the best move along the opponent's most likely branch
    plan = []
    state = start
    for k in range(horizon, 0, -1):
        _, a = value(state, board, k)
        dist = opponent.distribution(state, game.legal(board, other))
        b = max(dist, key=lambda bp: bp[1])[0]
        plan.append(a)
        state, board = opponent.advance(state, b, a), game.after_seat(board, seat, a, b)
    return Optimum(total, tuple(plan), not mixed, len(memo), True, lambda s, d, k: value(s, d, k)[1], memo)


def open_loop_optimum(game: Game, opponent: Strategy, seat: str, horizon: int,
                      limit: int = 200_000) -> Optimum:
    """The best expected total of a move sequence fixed before the game, against a mixed opponent.

    Dynamic programming over beliefs (the distribution over opponent state and board after the moves so
    far): W(B, 0) = 0; W(B, k) = max over moves a legal on every board of B of
    sum over (s, d) in B (probability q) and the opponent's moves b (probability p) of q p u(a, b)
    + W(B', k - 1). When more than `limit` beliefs are needed, the round-by-round optimum is returned
    instead, marked inexact: no fixed sequence can beat it, so it bounds the answer from above."""
    other = other_seat(seat)
    memo: dict = {}

    class TooMany(Exception):
        pass

    def value(belief, k):
        if k == 0:
            return 0, None
        key = (tuple((freeze(s), freeze(d), round(q, 12)) for s, d, q in belief), k)
        hit = memo.get(key)
        if hit is not None:
            return hit
        if len(memo) >= limit:
            raise TooMany
        legal = [a for a in game.moves(seat) if all(a in game.legal(d, seat) for _, d, _ in belief)]
        if not legal:
            raise GameError("no move is legal on every board a fixed sequence may reach")
        best, best_move = None, None
        for a in legal:
            total, nxt = 0.0, {}
            for s, d, q in belief:
                for b, p in opponent.distribution(s, game.legal(d, other)):
                    total += q * p * game.payoff(seat, a, b)
                    s2, d2 = opponent.advance(s, b, a), game.after_seat(d, seat, a, b)
                    k2 = (freeze(s2), freeze(d2))
                    prev = nxt.get(k2)
                    nxt[k2] = (s2, d2, (prev[2] if prev else 0.0) + q * p)
            v, _ = value(tuple(sorted(nxt.values(), key=lambda x: repr((freeze(x[0]), freeze(x[1]))))), k - 1)
            if best is None or total + v > best + PROB_EPS:
                best, best_move = total + v, a
        memo[key] = (best, best_move)
        return best, best_move

    try:
        start = ((opponent.initial(horizon), game.board(horizon), 1.0),)
        total, _ = value(start, horizon)
    except TooMany:
        bound = optimum(game, opponent, seat, horizon)
        return attrs.evolve(bound, exact=False)
    plan, belief = [], start
    for k in range(horizon, 0, -1):
        _, a = value(belief, k)
        plan.append(a)
        nxt: dict = {}
        for s, d, q in belief:
            for b, p in opponent.distribution(s, game.legal(d, other)):
                s2, d2 = opponent.advance(s, b, a), game.after_seat(d, seat, a, b)
                k2 = (freeze(s2), freeze(d2))
                prev = nxt.get(k2)
                nxt[k2] = (s2, d2, (prev[2] if prev else 0.0) + q * p)
        belief = tuple(sorted(nxt.values(), key=lambda x: repr((freeze(x[0]), freeze(x[1])))))
    return Optimum(total, tuple(plan), False, len(memo), True)


def expected_score(game: Game, opponent: Strategy, seat: str, plan: Sequence[str]):
    """The exact expected total of a fixed move sequence against a fresh opponent.

    A move that is not legal on some board the sequence reaches is a GameError naming its round. Values are
    memoised by (opponent state, board, round): a mixed opponent's branches merge instead of multiplying."""
    other = other_seat(seat)
    memo: dict = {}

    def go(state, board, i):
        if i == len(plan):
            return 0
        key = (freeze(state), freeze(board), i)
        if key not in memo:
            memo[key] = step(state, board, i)
        return memo[key]

    def step(state, board, i):
        if plan[i] not in game.legal(board, seat):
            raise GameError(f"move {i + 1} ({plan[i]}) is not legal then (legal: "
                            f"{', '.join(game.legal(board, seat))})")
        total = 0
        for b, p in opponent.distribution(state, game.legal(board, other)):
            term = game.payoff(seat, plan[i], b) + go(opponent.advance(state, b, plan[i]),
                                                      game.after_seat(board, seat, plan[i], b), i + 1)
            total = total + (term if p == 1.0 else p * term)
        return total

    return go(opponent.initial(len(plan)), game.board(len(plan)), 0)


def reachable_states(game: Game, opponent: Strategy, seat: str, depth: int, limit: int = 5000) -> int:
    """Walk every (state, board) the opponent can reach within `depth` rounds (checks every move it makes
    is one of its legal moves)."""
    other = other_seat(seat)
    start = (opponent.initial(depth), game.board(depth))
    frontier = [start]
    seen = {(freeze(start[0]), freeze(start[1]))}
    for _ in range(depth):
        nxt = []
        for s, d in frontier:
            for b, _ in opponent.distribution(s, game.legal(d, other)):
                for a in game.legal(d, seat):
                    t = (opponent.advance(s, b, a), game.after_seat(d, seat, a, b))
                    k = (freeze(t[0]), freeze(t[1]))
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
