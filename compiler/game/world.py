"""The compiled game: a repeated two-player game, its opponents, and its test games or its pool.

`GameWorld` implements the `World` core, `TurnShotFace` and `PoolFace` (compiler/api.py). A Game Strategy
Inference box (a world with test games) is run by the turn@shot protocol. By
default each turn plays a fresh game with a sequence of moves against the hidden
opponent, and each test game is answered with all its moves at once, scored
over the exact optimum (or the box's normaliser). A box with `play rounds` is
played move by move: `world.session(task)` is an exploration session in which
every probe is one move of the current game (a turn is a whole game), and
`world.test_play(task, attempt)` plays one test game round by round. A world
without tests is run by the pool protocol: models and strategies play matches
against every opponent, from both seats.

Round by round, a reply is read as one move by the run's grading: `lenient`
forgives case, spacing, surrounding backticks, quotes and a trailing `.` or
`!` (`read_move`); `published`, in a box that declares `published_read`, reads
it as that box's published platform does (`read_published`: the move that
expression names, or a refusal, asked again with no round spent); a test game's
reply is then read as written, not from its first fenced block (`reads_moves_raw`),
and the opponent is told of the move what the box's `published_seen` says the
platform hands its blackbox (`shown_move`; by default the move).
"""
from __future__ import annotations

import random
import re
from typing import Iterator

import attrs

from worldspec.compiler.api import CaseResult, Feedback, InputError, ScoredVerdict, ToolSpec, capped
from worldspec.compiler.game.certify import certify_game
from worldspec.compiler.game.engine import (ROW, Game, GameError, Match, Optimum, Round, Strategy, StrategyPlayer,
                                            cooperation_stats, expected_score, horizon_draw, other_seat,
                                            play_sequence, play_strategies)
from worldspec.compiler.items import BoxWorld, StatelessSession
from worldspec.values import EvalError

MAX_INPUT_CHARS = 4000


def moves_shown(moves) -> str:
    """The moves named in a refusal: the first twelve, then `...`."""
    return ", ".join(moves[:12]) + (", ..." if len(moves) > 12 else "")


# a list item's marker: "1. ", "2) ", "- ", "* ", "• "
_MARKER = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+(?=\S)")


def unlisted(text: str) -> str:
    """Moves written as a numbered or bulleted list, one per line, without the markers (a text in which
    some line has no marker is left as it is: a marker is then not told from a move)."""
    lines = [line for line in text.strip().strip("`").splitlines() if line.strip()]
    if len(lines) < 2 or not all(_MARKER.match(line) for line in lines):
        return text
    return "\n".join(_MARKER.sub("", line) for line in lines)


@attrs.frozen
class TestGame:
    """A fresh game of `horizon` rounds against the opponent, the best score possible in it, and the score
    that counts as 100% (the box's normaliser, or the optimum)."""

    id: str
    horizon: int
    optimum: Optimum
    line: int
    norm: float | None = None  # the declared normaliser (None: the optimum)

    @property
    def scale(self) -> float:
        """The score that counts as 100%."""
        return self.optimum.value if self.norm is None else self.norm

    def accuracy(self, score) -> float:
        """score / scale, clipped to [0, 1] (a negative score counts 0, as the paper counts it)."""
        scale = float(self.scale)
        if scale <= 0:
            return 1.0 if score >= self.optimum.value - 1e-9 else 0.0
        return max(0.0, min(1.0, float(score) / scale))

    def unclipped(self, score) -> float:
        """max(score / normaliser, 0), not clipped at 1: the released Oracle code's figure (eva_models.py
        `evaluate`, task 'game': `best_score/max_score if best_score/max_score > 0 else 0`)."""
        scale = float(self.scale)
        if scale <= 0:
            return self.accuracy(score)
        return max(0.0, float(score) / scale)

    def figure(self, score, grading: str) -> float:
        """The test's score under a grading: published, unclipped; lenient, clipped to [0, 1]."""
        return self.unclipped(score) if grading == "published" else self.accuracy(score)


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
    rounds: bool = False  # `play rounds`: move by move, seeing each round
    reveal: object = attrs.field(default=None, repr=False)  # (board, mine, theirs, seat, payoff) -> text
    round_robin: bool = False  # `lineup round_robin`: every system against every other (not against the pool)
    # `published_read`: (reply, replies refused this round) -> the move the published platform reads, or None
    published_read: object = attrs.field(default=None, repr=False)
    # `published_seen`: (reply, the move read in it) -> what the opponent's `next` is told (default: the move)
    published_seen: object = attrs.field(default=None, repr=False)

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

    def tournament(self, names) -> list[tuple[str, str, int, str]]:
        """The round robin among `names` (InteractiveBench trust_game/tournament.py Tournament.run): every
        unordered pair, `matches` repeats each, each repeat played from every seat; an entry is
        (first, second, repeat, the first's seat)."""
        names = list(names)
        return [(a, b, r, seat) for i, a in enumerate(names) for b in names[i + 1:] for r in range(self.matches)
                for seat in self.seats]

    def pair_horizon(self, a: str, b: str, r: int) -> int:
        """The rounds of repeat r of a pair, the same from both seats (tournament.py _run_pair draws one
        fixed_rounds per repeat by utils.sample_geometric_rounds: continue with probability delta, capped)."""
        if self.horizon:
            return self.horizon
        first, second = sorted((a, b))
        return horizon_draw(self.delta, self.max_rounds, f"worldspec:{self.seed}:pair:{first}:{second}:{r}:horizon")

    def pair_rng(self, a: str, b: str, r: int, seat: str, who: str) -> random.Random:
        """A strategy's random stream in one round-robin match (the same for every run of the pair)."""
        first, second = sorted((a, b))
        return random.Random(f"worldspec:{self.seed}:pair:{first}:{second}:{r}:{seat}:{who}")

    def seat_player(self, strategy: Strategy, seat: str, horizon: int, rng: random.Random) -> StrategyPlayer:
        """A strategy playing `seat` itself (choose, then observe each round): a round-robin entrant."""
        return StrategyPlayer(strategy, self.game, seat, rng, horizon)

    def round_for(self, t: int, seat: str, mine: str, theirs: str) -> Round:
        """Round t of a simultaneous-move match as the player in `seat` saw it (both payoffs)."""
        return Round(t, mine, theirs, self.game.payoff(seat, mine, theirs),
                     self.game.payoff(other_seat(seat), theirs, mine))

    @staticmethod
    def other_seat(seat: str) -> str:
        """The seat across the table."""
        return other_seat(seat)

    def read_anywhere(self, text) -> str | None:
        """The move a reply names first, as a whole word anywhere in it, case ignored (InteractiveBench
        trust_game/agents.py LLMAgent._extract_action_from_response: COOPERATE or DEFECT anywhere);
        None when it names none."""
        if not isinstance(text, str):
            return None
        moves = self.moves_for(ROW)
        found = re.search(r"\b(" + "|".join(re.escape(m) for m in moves) + r")\b", text[:MAX_INPUT_CHARS], re.I)
        if found is None:
            return None
        return next(m for m in moves if m.lower() == found.group(1).lower())

    def cooperation_stats(self, rounds) -> dict:
        """Cooperations, betrayals and their chances in these rounds ({} when the game names no cooperative move)."""
        return cooperation_stats(rounds, self.cooperate) if self.cooperate else {}

    def payoff_lines(self, seat: str = ROW) -> list[str]:
        """Every pair of moves with both payoffs, from `seat`'s point of view."""
        g = self.game
        other = other_seat(seat)
        return [f"- you {a}, other {b}: you get {show_number(g.payoff(seat, a, b))}, the other gets "
                f"{show_number(g.payoff(other, b, a))}" for a in g.moves(seat) for b in g.moves(other)]

    # ------------------------------------------------------------ probing

    def moves_for(self, seat: str = ROW) -> tuple[str, ...]:
        """The moves of the player in `seat`."""
        return self.game.moves(seat)

    def parse_moves(self, text, seat: str = ROW) -> list[str]:
        """Moves separated by spaces or commas (by commas, when a move has a space in it); case and full words
        (`cooperate`) are forgiven."""
        if not isinstance(text, str):
            raise InputError("the moves must be text")
        if len(text) > MAX_INPUT_CHARS:
            raise InputError("the input is too long")
        moves = self.moves_for(seat)
        text = unlisted(text)
        out = []
        if any(" " in m for m in moves):
            for part in [p for p in re.split(r"[,;\n]+", text.strip().strip("`")) if p.strip()]:
                out.append(self.read_move(part, seat))
        else:
            for tok in [t for t in re.split(r"[\s,;]+", text.strip().strip("`")) if t]:
                out.extend(_read_token(tok, moves))
        if not out:
            raise InputError(f"no moves given (moves: {', '.join(moves)})")
        return out

    def read_move(self, text, seat: str = ROW) -> str:
        """One move, written as its name (case and spacing forgiven)."""
        moves = self.moves_for(seat)
        t = " ".join(str(text).strip().strip("`").strip(".!\"'").split()).lower()
        for m in moves:
            if m.lower() == t:
                return m
        if not any(" " in m for m in moves):
            got = _read_token(t, moves)
            if len(got) == 1:
                return got[0]
        shown = moves_shown(moves)
        raise InputError(f"{str(text).strip()!r} is not a move (moves: {shown})")

    def read_published(self, text, tries: int = 0) -> str:
        """One move as the box's published platform reads the reply (its `published_read`, given the replies
        already refused in this round); raises InputError when the platform would ask again. A reader that
        fails on a reply (an EvalError) refuses it too: the published parsers catch their own failures."""
        moves = self.moves_for(ROW)
        if not isinstance(text, str):
            raise InputError("the move must be text")
        try:
            got = self.published_read(text, tries)
        except EvalError as e:
            raise InputError(f"{text.strip()!r} cannot be read as a move ({e.message})") from None
        if type(got) is not str or got not in moves:
            shown = moves_shown(moves)
            raise InputError(f"{text.strip()!r} is not a move (moves: {shown})")
        return got

    def reads_moves_raw(self, grading: str = "lenient") -> bool:
        """Whether a test game's moves are read from the reply as written (published grading, in a box that
        declares its platform's `published_read`: the released game platforms read the model's raw output),
        rather than from its first fenced block."""
        return grading == "published" and self.published_read is not None

    def shown_move(self, grading: str = "lenient"):
        """What the opponent is told of a move under a grading: (reply, move) -> its `theirs`, or None for
        the move itself (the box's `published_seen`, under published grading only)."""
        if not self.reads_moves_raw(grading) or self.published_seen is None:
            return None
        seen = self.published_seen

        def shown(text, move):
            try:
                got = seen(text, move)
            except EvalError:
                return move
            return got if type(got) is str else move
        return shown

    def reader(self, grading: str = "lenient"):
        """How a round-by-round game reads one reply under a grading: (text, tries) -> move, or InputError."""
        if grading == "published" and self.published_read is not None:
            return self.read_published
        return lambda text, tries=0: self.read_move(text)

    def read_probe(self, text) -> list[str]:
        """The moves of one probe (at most `probe_rounds`); raises InputError with the reason."""
        moves = self.parse_moves(text)
        if len(moves) > self.probe_rounds:
            raise InputError(f"at most {self.probe_rounds} moves per probe, got {len(moves)}")
        return moves

    def probe(self, text) -> Feedback:
        """Play a fresh game with these moves (round by round: one move of a fresh game); see the opponent's
        replies and your payoffs."""
        if self.rounds:
            return self.session().probe(text)
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
                pays = " ".join(show_number(r.my_payoff) for r in rounds)
                lines.append(f"{prefix}your payoffs: {pays} (total {show_number(sum(r.my_payoff for r in rounds))})")
        except GameError as e:
            if self.game.has_board:
                return Feedback(f"rejected: {e}. Nothing was played and no turn is used.", 0, "rejected")
            return Feedback(f"error: {e}", self.budget.cost("input"), "error")
        text_out, truncated = capped("\n".join(lines), self.budget.feedback_chars)
        return Feedback(text_out, self.budget.cost("input"), "ok", truncated)

    @property
    def explore_each_test(self) -> bool:
        """Round-by-round boxes explore each test in its own session (games as long as that test's)."""
        return self.rounds

    def session(self, task=None, stream=0, grading: str = "lenient"):
        """A fresh exploration session: round by round, a RoundSession whose probes are single moves (a turn
        is a whole game, as long as the task's test game), read under `grading`; otherwise every probe is a
        game of its own."""
        if not self.rounds:
            return StatelessSession(self)
        horizon = self.test_of(task).horizon if task is not None else (self.tests[0].horizon if self.tests
                                                                         else self.horizon or self.probe_rounds)
        return RoundSession(self, horizon, stream, grading)

    def test_play(self, task, attempt: int = 1, grading: str = "lenient") -> "RoundGame":
        """Test game `task` played round by round (attempt k meets the k-th seeded random stream), each reply
        read under `grading` (`reader`)."""
        t = self.test_of(task)
        return RoundGame(self, t.horizon, random.Random(f"test:{self.seed}:{t.id}:{attempt}"), t, grading)

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        """An endless seeded stream of move sequences a probe accepts (round by round: single moves)."""
        rng = random.Random(f"probes:{self.name}:{seed}")
        moves = self.moves_for(ROW)
        sep = ", " if any(" " in m for m in moves) else " "
        while True:
            n = 1 if self.rounds else rng.randint(1, self.probe_rounds)
            yield sep.join(rng.choice(moves) for _ in range(n))

    def charge(self, text) -> int:
        """The turns a probe costs: one game (round by round, a single move costs none until a game ends)."""
        if self.rounds:
            return self.session().probe(text).units
        return BoxWorld.charge(self, text)

    @property
    def turn_instructions(self) -> str:
        """What one exploration turn is, as a turn@shot session tells the player."""
        if self.rounds:
            return ("Each turn is one whole game against the opponent, played move by move: reply with one move "
                    "per message and you see what happened in the round. After the exploration you play the test "
                    "game(s) the same way; accuracy is your total payoff divided by the score that counts as "
                    "100%.")
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
                rounds = play_sequence(self.game, self.opponents[0], ROW, moves)
            except (InputError, GameError):
                continue
            avg = sum(r.my_payoff for r in rounds) / len(rounds)
            if best_avg is None or avg > best_avg:
                best, best_avg = moves, avg
        best = best or [self.game.row_moves[0]]
        return self.join_moves((best * (h // len(best) + 1))[:h])

    def join_moves(self, moves) -> str:
        """Moves written as `parse_moves` reads them back: by commas when a move has a space in it
        (`load, shoot 1`), else by spaces."""
        sep = ", " if any(" " in m for m in self.moves_for(ROW)) else " "
        return sep.join(moves)

    @property
    def tool(self) -> ToolSpec:
        """The one exploration tool: play a fresh game with a sequence of moves."""
        return ToolSpec("play_moves", f"Play a fresh game of {self.name} with a sequence of your moves.",
                        "input", "Your moves in order, separated by spaces.")

    # ------------------------------------------------------------ grading

    def verify(self, task, answer, grading: str = "lenient", stage: str = "first") -> ScoredVerdict:
        """Score a move sequence for a test game: accuracy = score / the normaliser (the exact optimum unless the
        box declares one), clipped to [0, 1]; under published grading the score is not clipped at 1 (both
        figures are in the verdict). Round by round, the sequence is played against the first attempt's
        random stream (exactly what test_play(task, 1) would score for these moves)."""
        g = self.test_of(task)
        best = g.optimum.value
        want = f"{show_number(best)} (e.g. {', '.join(g.optimum.plan)})"
        try:
            moves = self.parse_moves(answer)
        except InputError as e:
            return ScoredVerdict(g.id, False, f"incorrect: {e}",
                                 (CaseResult((g.horizon,), want, str(answer), False),), 0.0)
        if len(moves) != g.horizon:
            return ScoredVerdict(g.id, False, f"incorrect: expected {g.horizon} moves, got {len(moves)}",
                                 (CaseResult((g.horizon,), want, " ".join(moves), False),), 0.0)
        try:
            if self.rounds:
                play = self.test_play(task, 1)
                for m in moves:
                    play.match.play(m)
                got = play.match.score
            else:
                got = expected_score(self.game, self.opponents[0], ROW, moves)
        except GameError as e:
            return ScoredVerdict(g.id, False, f"incorrect: {e}", (CaseResult((g.horizon,), want, ", ".join(moves),
                                                                               False),), 0.0)
        ok = g.accuracy(got) >= 1 - 1e-9
        return ScoredVerdict(g.id, ok, f"score {show_number(got)} of {show_number(g.scale)}",
                             (CaseResult((g.horizon,), want, f"{', '.join(moves)} -> {show_number(got)}", ok),),
                             g.figure(got, grading), unclipped=g.unclipped(got))

    def published_question(self, task, first: bool, shots: int, attempt: int = 1) -> str:
        """A test game's opening as the released harness says it (eva_models.py `evaluate`, task 'game': every
        attempt is played, the highest score recorded; it counts attempts from 0)."""
        return (f"********Evaluation Phase Starts, We Will Play the Game for {shots} Time. Now is the {attempt - 1} "
                f"time. The highest score Will Be Recorded.**********\n"
                + BoxWorld.published_question(self, task, first, shots, attempt))

    @property
    def published_rejection_costs(self) -> bool:
        """False: the released game platforms ask again for a move they cannot read, spending nothing."""
        return False

    @property
    def rejection_costs(self) -> bool:
        """False: a move sequence the game cannot read is charged nothing (`charge`), as a box's rejection."""
        return False

    @property
    def open_book(self) -> str:
        """The opponents by name and title (the open-book condition)."""
        return "\n".join(f"- {s.name}: {s.title}" for s in self.opponents)

    # ------------------------------------------------------------ certification

    def certify(self, progress=None) -> dict:
        """The game's certification report (compiler/game/certify.py)."""
        return certify_game(self, progress)


class RoundGame:
    """One game played round by round: the player sends a move, sees the round (as the box reveals it) and the
    history; a test game also gives its verdict."""

    def __init__(self, world: GameWorld, horizon: int, rng: random.Random, test: TestGame | None = None,
                 grading: str = "lenient"):
        self.world = world
        self.test = test
        self.match = Match(world.game, world.opponents[0], ROW, horizon, rng)
        self.seen: list[str] = []  # the rounds as the player was told them
        self.read = world.reader(grading)
        self.shown = world.shown_move(grading)  # what the opponent is told of a move (None: the move)
        self.tries = 0  # replies refused in the current round (a published reader may count them)

    @property
    def done(self) -> bool:
        return self.match.done

    @property
    def horizon(self) -> int:
        """The game's number of rounds."""
        return self.match.horizon

    def status(self) -> str:
        """The next round's number, the score so far and, on a board, the legal moves."""
        m = self.match
        out = f"Round {len(m.rounds) + 1} of {m.horizon}. Your score so far: {show_number(m.score)}."
        if self.world.game.has_board:
            out += " Your legal moves now: " + ", ".join(m.legal()) + "."
        return out

    @property
    def opening(self) -> str:
        """What the player is told before the first move."""
        return f"A new game of {self.match.horizon} rounds starts. " + self.status()

    def tell(self, board, r: Round) -> str:
        """One round as the player sees it."""
        if self.world.reveal is not None:
            try:
                return str(self.world.reveal(board, r.mine, r.theirs, ROW, r.my_payoff))
            except Exception as e:  # noqa: BLE001 - a failing reveal is reported in the feedback
                return f"(the round cannot be shown: {getattr(e, 'message', e)})"
        return f"you played {r.mine}, the opponent played {r.theirs}; you got {show_number(r.my_payoff)}"

    def play(self, text) -> Feedback:
        """One move: the round and the history so far, or a rejection (nothing played) with the reason."""
        if self.done:
            return Feedback("rejected: the game is over. Nothing was played.", 0, "rejected")
        try:
            move = self.read(text, self.tries)
            board = self.match.board
            r = self.match.play(move, None if self.shown is None else self.shown(text, move))
        except (InputError, GameError) as e:
            self.tries += 1
            return Feedback(f"rejected: {e}. Nothing was played; send another move.", 0, "rejected")
        self.tries = 0
        told = self.tell(board, r)
        self.seen.append(f"{r.index}. {told}")
        over = f"The game is over: your total payoff is {show_number(self.match.score)}."
        head = [f"Round {r.index}: {told}.", over if self.done else self.status()]
        history = self.history(self.world.budget.feedback_chars - sum(len(x) + 1 for x in head))
        text_out, truncated = capped("\n".join(head + ([history] if history else [])),
                                     self.world.budget.feedback_chars)
        return Feedback(text_out, 1 if self.done else 0, "ok", truncated)

    def history(self, room: int) -> str:
        """The rounds so far as the player was told them, the latest kept when they do not all fit."""
        kept: list[str] = []
        for entry in reversed(self.seen):
            if len("History: ... | ") + sum(len(x) + 3 for x in kept) + len(entry) > room:
                break
            kept.insert(0, entry)
        if not kept:
            return ""
        return "History: " + ("... | " if len(kept) < len(self.seen) else "") + " | ".join(kept)

    def best_move(self) -> str:
        """The move a player who knows the opponent plays now (the optimum's policy)."""
        m = self.match
        policy = self.test.optimum.policy if self.test is not None else None
        if policy is None:
            return m.legal()[0]
        return policy(m.state, m.board, m.horizon - len(m.rounds)) or m.legal()[0]

    def verdict(self, grading: str = "lenient") -> ScoredVerdict:
        """A test game's score over the normaliser (an unfinished game scores what it has): clipped to [0, 1],
        or under published grading not clipped at 1 (both figures are in the verdict)."""
        t = self.test
        got = self.match.score
        moves = ", ".join(r.mine for r in self.match.rounds)
        ok = self.done and t.accuracy(got) >= 1 - 1e-9
        return ScoredVerdict(t.id, ok, f"score {show_number(got)} of {show_number(t.scale)}",
                             (CaseResult((t.horizon,), show_number(t.optimum.value),
                                         f"{moves} -> {show_number(got)}", ok),), t.figure(got, grading),
                             unclipped=t.unclipped(got))


class RoundSession:
    """Exploration round by round: each probe is one move of the current game; when a game ends the turn is
    used (Feedback.units 1) and the next probe starts a fresh game."""

    def __init__(self, world: GameWorld, horizon: int, stream=0, grading: str = "lenient"):
        self.world, self.horizon, self.stream, self.grading = world, horizon, stream, grading
        self.games = 0
        self.game: RoundGame | None = None

    def current(self) -> RoundGame:
        if self.game is None or self.game.done:
            self.games += 1
            self.game = RoundGame(self.world, self.horizon,
                                  random.Random(f"explore:{self.world.seed}:{self.stream}:{self.games}"),
                                  grading=self.grading)
        return self.game

    @property
    def opening(self) -> str:
        """What the player is told before its next move."""
        return self.current().opening if self.game is None or self.game.done else self.game.status()

    def probe(self, text) -> Feedback:
        """One move of the current game (a fresh game when none is under way)."""
        fresh = self.game is None or self.game.done
        fb = self.current().play(text)
        if fresh and fb.status != "rejected":
            return attrs.evolve(fb, text=f"A new game of {self.horizon} rounds started.\n{fb.text}")
        return fb


def show_number(x) -> str:
    """A score or payoff as a person reads it (3, not 3.0; four significant digits)."""
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
