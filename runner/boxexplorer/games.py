"""Game boxes (GSI): the opponent's strategy identified from the exploration games, then a best response.

What this strategy reads: the manual's move list and its "X beats A, B and C" sentences, each round's report
(`Round r: you played X, the opponent played Y; you got P`), the legal moves a state shows. The payoff table
is learned from the rounds seen, starting from the manual's wins and losses (a pair neither gives counts 0).
The opponent is modelled by one of several predictors of its next move, each a table of counts: by round
number (a fixed sequence, a cycle), by my move one to three rounds back (imitation, beating my last, copying
with a delay), by its own previous move (a cycle of gestures), by both last moves, by the round modulo 2 to 5
(a cycle whose moves repeat), or its overall frequencies
(a random mix); the predictor with the most correct predictions, each made before its round was counted
(online), is the one believed. A move maximises the expected payoff under that prediction. Exploration games
first vary my moves (each game starts the move order further on), then play the best response, which tests
the belief.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict

from .base import History, Strategy
from .view import BoxView, TestView

ROUND = re.compile(r"(?:Round )?(\d+)[:.] you played (.+?), the opponent played (.+?); you got (-?[\d.]+)")
LEGAL = re.compile(r"Your legal moves now: ([^.\n]+)")
# What the opponent's next move is keyed by: the round number, my move 1-3 rounds back (imitation, beating my
# last, copying with a delay), its own last move (a cycle), both last moves, the round modulo 2 to 5 (a cycle
# whose moves repeat: load, load, shoot 1, defend 1, where no last move keys the next), or nothing (its
# frequencies).
FEATURES = ("round", "mine1", "mine2", "mine3", "theirs1", "both1", "mod2", "mod3", "mod4", "mod5", "none")


def manual_moves(manual: str) -> list[str]:
    found = re.search(r"choose a move at the same time \(([^)]*)\)", manual)
    if not found:
        return []
    return [m.strip() for m in found.group(1).split(",") if m.strip() and m.strip() != "..."]


def manual_beats(manual: str, moves: list[str]) -> dict:
    """Prior payoffs from the manual's "X beats A, B and C" sentences: +1 a win, -1 a loss (a pair the
    manual does not rank, and every pair of a manual without such sentences: unknown)."""
    words = re.findall(r"[a-z]+", manual.lower())
    named = {m.lower(): m for m in moves}
    beats = set()
    for i, w in enumerate(words[:-1]):
        if w in named and words[i + 1] in ("beat", "beats"):
            j = i + 2
            while j < len(words) and (words[j] in named or words[j] == "and"):
                if words[j] in named:
                    if j + 1 < len(words) and words[j + 1] in ("beat", "beats"):
                        break
                    beats.add((named[w], named[words[j]]))
                j += 1
    prior = {}
    for a, b in beats:
        prior[(a, b)], prior[(b, a)] = 1.0, -1.0
    if beats:
        for m in moves:
            prior[(m, m)] = 0.0
    return prior


def move_of(text: str) -> str:
    """A reported move without what it showed: `scout (the opponent has 2 bullet(s))` is the move `scout`, so
    its rounds count for the same payoffs and keys as the move sent."""
    return re.sub(r"\s*\(.*\)$", "", text.strip())


def games_of(history: History) -> list[list[tuple]]:
    """The rounds of the exploration games: [[(round, mine, theirs, payoff), ...], ...]."""
    games: list[list[tuple]] = []
    for _, out in history:
        # a game's first round may follow "A new game of N rounds started." on its own line
        m = ROUND.match(re.sub(r"^A new game of \d+ rounds started\.\s*", "", out.strip()))
        if not m:
            continue
        r, mine, theirs, got = int(m.group(1)), move_of(m.group(2)), m.group(3), float(m.group(4))
        if r == 1 or not games:
            games.append([])
        games[-1].append((r, mine, theirs, got))
    return games


def key(feature: str, r: int, past: list):
    """The predictor's key for round r after the rounds `past` ((round, mine, theirs, payoff), ...); None when
    the rounds so far do not give one."""
    if feature == "round":
        return r
    if feature == "none":
        return ()
    if feature.startswith("mod"):
        return (r - 1) % int(feature[3:])
    lag = int(feature[-1])
    if len(past) < lag:
        return None
    _, mine, theirs, _ = past[-lag]
    return {"mine": mine, "theirs": theirs, "both": (mine, theirs)}[feature[:-1]]


class Opponent:
    """Counts per predictor, and which predictor has predicted best."""

    def __init__(self, games, prior: dict | None = None):
        self.tables = {f: defaultdict(Counter) for f in FEATURES}
        self.right = Counter()
        self.payoff: dict = dict(prior or {})
        for game in games:
            for i, (r, mine, theirs, got) in enumerate(game):
                self.payoff[(mine, theirs)] = got
                for f in FEATURES:
                    k = key(f, r, game[:i])
                    table = self.tables[f].get(k)
                    if table:
                        self.right[f] += table.most_common(1)[0][0] == theirs
                    if k is not None:
                        self.tables[f][k][theirs] += 1
        order = {f: i for i, f in enumerate(FEATURES)}
        self.best = max(FEATURES, key=lambda f: (self.right[f], -order[f]))

    def predict(self, r: int, past: list) -> Counter:
        for f in (self.best, "none"):
            k = key(f, r, past)
            if k is not None and self.tables[f].get(k):
                return self.tables[f][k]
        return Counter()


class GamePlayer(Strategy):
    """See the module docstring."""

    name = "opponent model, best response"

    def __init__(self, view: BoxView):
        super().__init__(view)
        self.moves = manual_moves(view.manual)
        self.prior = manual_beats(view.manual, self.moves)

    def next_query(self, history: History) -> str:
        """A move of an exploration game (its state: the last output, or the opening)."""
        games = games_of(history)
        last = history[-1][1] if history else self.view.manual
        current = games[-1] if games and not self.ended(last) else []
        legal = self.legal(last)
        if not current and games and any(LEGAL.search(o) for _, o in history):
            # a new game of a board: the game-over report lists no legal moves, and a move illegal at the start
            # is refused, so no observation, and the same history would send it again until the turns run out;
            # the first game's opening move was legal there
            legal = [games[0][0][1]]
        if len(games) - (1 if current else 0) < 3:  # vary: the move order starts further on each game
            g = len(games) - (1 if current else 0)
            choice = legal[(g * 3 + len(current)) % len(legal)] if legal else ""
            return choice
        return self.best_move(games, current, legal)

    def ended(self, text: str) -> bool:
        if "game is over" in text.lower() or "Game over" in text:
            return True
        return "A new game" in text and not ROUND.search(text)  # a new game whose first round is not yet played

    def legal(self, text: str) -> list[str]:
        found = LEGAL.findall(text)
        if found:
            return [m.strip() for m in found[-1].split(",") if m.strip()]
        return list(self.moves)

    def best_move(self, games, current, legal) -> str:
        opp = Opponent(games, self.prior)
        r = len(current) + 1
        dist = opp.predict(r, current)
        total = sum(dist.values())
        options = legal or self.moves
        if not options:
            return ""
        if not total:
            return options[0]

        def value(m):
            return sum(c * opp.payoff.get((m, y), 0.0) for y, c in dist.items()) / total
        return max(options, key=lambda m: (value(m), -options.index(m)))

    def play(self, history: History, state_text: str) -> str:
        """A move of a test game: the current game's rounds read from its last report."""
        current = []
        hist = state_text.split("History:", 1)
        if len(hist) == 2:
            for part in hist[1].split("|"):
                m = ROUND.search(part.strip())
                if m:
                    current.append((int(m.group(1)), move_of(m.group(2)), m.group(3), float(m.group(4))))
        return self.best_move(games_of(history), current, self.legal(state_text))

    def answers(self, test: TestView, history: History) -> list[str]:
        return [self.best_move(games_of(history), [], self.moves)]


def applies(view: BoxView) -> bool:
    """A repeated game whose manual lists the moves."""
    return not view.inputs and bool(manual_moves(view.manual)) and any(t.shape == "play" for t in view.tests)
