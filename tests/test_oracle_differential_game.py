"""Differentials of the GSI game boxes not covered by tests/test_oracle_differential.py (its rps7 cycle,
beat_last and imitate_last test): anti_rps_random, the four load-shoot-defend boxes, the two comparing-cards
boxes, rps7_random_3 and rps7_mapping.

For each box the published platform (lemonsis/Oracle_Benchmark `platforms/game/<level>/<box>_final.py`) is
re-stated here in this file's own Python, as small state machines: how its `platform` loop (or the parser it
calls) reads one reply, which replies it asks again for, what its `blackbox` opponent plays (a random one: the
moves it draws among, since the published `random.choice` is unseeded), how its judge scores the round and how
the bullets or hands change. Our box is played under `--grading published` (`test_play(..., grading=
"published")` and an exploration session) with the same replies: the box's own moves in various cases, the
published edge forms (case, spaces, tabs, Unicode digits and spaces, punctuation, signs, underscores, several
words) and seeded random strings. Every reply must be read alike (played, or asked again with no round spent),
every round must give the same opponent move (a random one: a move it can draw) and points, and every game the
same total. The forms we refuse on purpose, and the one published behaviour we do not match, are asserted as
such and named in docs/fidelity.md ("GSI move reading") and docs/oracle-worlds.md. Under lenient grading the
forgiving reader (`GameWorld.read_move`) is checked to still play what it forgave.
"""

import random
import re
from pathlib import Path

import pytest
from conftest import box_world

from worldspec.compiler.game.world import RoundGame

ROOT = Path(__file__).resolve().parent.parent
GAME = ROOT / "worlds" / "oracle" / "game"
CRASH = object()  # a reply that stops the published platform with an uncaught error
# The comparing-cards boxes' optima (computed when a box compiles) take 10-25 s on a cold world cache, mostly
# their 12-card test; the differential needs none. Those boxes are compiled here with their first test line
# only, and their other published horizons played as games of their own (RoundGame, as a test game is): the
# same reader, opponent, judge and hands.
TRIMMED = ("gsi-h-comparing-cards-slice", "gsi-h-comparing-cards-smart")


@pytest.fixture(scope="module")
def boxes(tmp_path_factory):
    """name -> (the box as played here, its published test horizons)."""
    folder = tmp_path_factory.mktemp("gsi")
    out = {}
    for path in sorted(GAME.glob("gsi-*.world")):
        text = path.read_text(encoding="utf-8")
        horizons = [int(h) for h in re.findall(r"^test (\d+)", text, re.M)]
        if path.stem in TRIMMED:
            first = re.search(r"^test .*$", text, re.M).group(0)
            trimmed = folder / path.name
            trimmed.write_text(re.sub(r"^test .*\n", "", text, flags=re.M).replace("\nbudget", f"\n{first}\nbudget"),
                               encoding="utf-8")
            path = trimmed
        out[path.stem] = (box_world(path), horizons)
    return out


# ---------------------------------------------------------------- the published platforms, restated

GESTURES7 = ["rock", "paper", "scissors", "fire", "water", "air", "sponge"]
BEATS7 = {"rock": {"scissors", "sponge", "fire"}, "paper": {"rock", "water", "air"},
          "scissors": {"paper", "sponge", "fire"}, "fire": {"scissors", "paper", "sponge"},
          "water": {"rock", "fire", "scissors"}, "air": {"fire", "rock", "water"},
          "sponge": {"water", "paper", "air"}}


class Platform:
    """One published game in progress: `read(text)` (the move the platform plays for a reply, None when it asks
    again, CRASH), `support()` (the opponent's possible moves this round), `score(mine, theirs, text)` (the
    round's points for the player, the state moved on)."""

    def __init__(self, horizon: int):
        self.horizon, self.turn = horizon, 0

    def support(self) -> set:
        raise NotImplementedError

    def score(self, mine: str, theirs: str, text: str) -> float:
        self.turn += 1
        return self.points(mine, theirs)


class Rps7Random3(Platform):
    """easy/rps7_random_3_final.py: `player_action.strip().lower()` must be a gesture, else asked again without
    end; the opponent draws rock, paper or air; a tie for the same gesture, +1 when theirs is in my beats set,
    -1 when mine is in theirs, else 0."""

    def read(self, text):
        t = text.strip().lower()
        return t if t in GESTURES7 else None

    def support(self):
        return {"rock", "paper", "air"}

    def points(self, mine, theirs):
        if mine == theirs:
            return 0
        return 1 if theirs in BEATS7[mine] else -1 if mine in BEATS7[theirs] else 0


class Rps7Mapping(Rps7Random3):
    """hard/rps7_mapping_final.py: the same reading; the opponent plays rock first, then a fixed image of the
    player's last gesture; +1 when theirs is in my beats set, 0 for the same gesture, else -1."""

    IMAGE = {"rock": "fire", "paper": "water", "scissors": "air", "fire": "sponge", "water": "rock",
             "air": "paper", "sponge": "scissors"}

    def __init__(self, horizon):
        super().__init__(horizon)
        self.last = None

    def support(self):
        return {"rock" if self.last is None else self.IMAGE[self.last]}

    def points(self, mine, theirs):
        self.last = mine
        return 1 if theirs in BEATS7[mine] else 0 if mine == theirs else -1


class AntiRps(Platform):
    """easy/anti_rps_random_final.py: a reply stripped and lowercased must be rock, paper or scissors; at most
    three replies a round, then rock is played for the player; the opponent draws rock or scissors; scissors
    beat rock, paper beats scissors, rock beats paper."""

    def __init__(self, horizon):
        super().__init__(horizon)
        self.refused = 0

    def read(self, text):
        t = text.strip().lower()
        if t in ("rock", "paper", "scissors"):
            self.refused = 0
            return t
        self.refused += 1
        if self.refused == 3:
            self.refused = 0
            return "rock"
        return None

    def support(self):
        return {"rock", "scissors"}

    def points(self, mine, theirs):
        wins = {("scissors", "rock"), ("paper", "scissors"), ("rock", "paper")}
        return 0 if mine == theirs else 1 if (mine, theirs) in wins else -1


def split_action(action: str):
    """("shoot", 2) of a canonical move "shoot 2"; ("load", 0) of "load"."""
    kind, _, n = action.partition(" ")
    return kind, int(n) if n else 0


class Defender(Platform):
    """easy/load_shoot_defend_defender_final.py. `_parse_action`: strip, lower, split at whitespace; the first
    word is the action; shoot and defend need a second word that `isdigit()`, then `int()` of it (an
    isdigit word int() cannot read, `²`, raises out of the platform). `platform`'s loop asks again for an
    unknown action, a load at 8 bullets, a number below 1 or above the bullets held. The opponent cycles
    load, load, defend 2, load, defend 1 by turn. The judge (player's points): shoot against shoot by the
    numbers; shoot against defend +1 when more, else -1; shoot against load or scout +1; defend against shoot
    +1 when at least as many, else -1; else 0. Bullets: load +1, shoot and defend spend, capped at 8."""

    CYCLE = ["load", "load", "defend 2", "load", "defend 1"]

    def __init__(self, horizon):
        super().__init__(horizon)
        self.mine, self.theirs = 0, 0

    def read(self, text):
        parts = text.strip().lower().split()
        if not parts:
            return None
        kind, value = parts[0], 0
        if kind in ("shoot", "defend"):
            if len(parts) < 2 or not parts[1].isdigit():
                return None
            try:
                value = int(parts[1])
            except ValueError:
                return CRASH
        if kind not in ("load", "scout", "shoot", "defend") or (kind == "load" and self.mine >= 8):
            return None
        if kind in ("shoot", "defend"):
            return f"{kind} {value}" if 1 <= value <= self.mine else None
        return kind

    def support(self):
        return {self.CYCLE[self.turn % 5]}

    def points(self, mine, theirs):
        (a, x), (b, y) = split_action(mine), split_action(theirs)
        self.mine = self.spent(self.mine, a, x)
        self.theirs = self.spent(self.theirs, b, y)
        if a == "shoot":
            if b == "shoot":
                return (x > y) - (x < y)
            if b == "defend":
                return 1 if x > y else -1
            return 1
        if a == "defend" and b == "shoot":
            return 1 if x >= y else -1
        return self.unshot(a, b)

    @staticmethod
    def unshot(a, b):
        return 0  # the defender's judge scores nothing for a load or scout against a shot

    @staticmethod
    def spent(n, kind, value):
        return min(n + 1, 8) if kind == "load" else n - value if kind in ("shoot", "defend") else n


class Attacker(Defender):
    """hard/load_shoot_defend_attacker_final.py. `parse_action`: lower, strip, split at whitespace; the first
    word is the action; shoot and defend take `int()` of a second word (one int() refuses makes the action
    invalid), 0 without one. The loop asks again for an unknown action, a negative number or more than the
    bullets held (a load at 8 keeps 8). The opponent cycles load, load, shoot 2, load, shoot 1. The judge is the
    defender's, but a load or scout against a shot is -1."""

    CYCLE = ["load", "load", "shoot 2", "load", "shoot 1"]

    def read(self, text):
        parts = text.lower().strip().split()
        if not parts:
            return None
        kind, value = parts[0], 0
        if kind in ("shoot", "defend") and len(parts) > 1:
            try:
                value = int(parts[1])
            except ValueError:
                return None
        if kind not in ("load", "scout", "shoot", "defend"):
            return None
        if kind in ("shoot", "defend"):
            return f"{kind} {value}" if 0 <= value <= self.mine else None
        return kind

    def support(self):
        return {self.CYCLE[self.turn % len(self.CYCLE)]}

    @staticmethod
    def unshot(a, b):
        return -1 if b == "shoot" else 0


class Balance(Attacker):
    """hard/load_shoot_defend_balance_final.py: the attacker's reader and judge; the opponent cycles load, load,
    shoot 1, defend 1."""

    CYCLE = ["load", "load", "shoot 1", "defend 1"]


class Smart(Platform):
    """hard/load_shoot_defend_smart_final.py. The loop: `strip().lower()` is `load` or `scout`, or starts with
    `shoot ` / `defend ` and `int()` of its second whitespace word is 1 to the bullets held; else asked again.
    Load and scout both gain a bullet (capped at 8). The blackbox keeps its phase across calls: it learns that
    the player shot when the last reply, as sent, `startswith("shoot")` (our box's `published_seen text`
    tells its opponent the same text); loading phase: load while the player has not shot and it holds
    fewer than 8 (the first 3 or 6 loads counted apart, to the same effect), else turn to firing; firing: shoot
    2, shoot 1, and with nothing left load, back to the loading phase with the shot forgotten. Points for the
    player: two shots by the numbers; a defence against its shot +1 when at least as many, else -1; a shot
    against its load +1; a load or scout against its shot -1."""

    def __init__(self, horizon):
        super().__init__(horizon)
        self.mine = self.theirs = 0
        self.cycle, self.loads, self.shot = 0, 0, False
        self.first = 3 if horizon < 10 else 6
        self.last_reply = None
        self.next_move = None

    def read(self, text):
        t = text.strip().lower()
        if t in ("load", "scout"):
            return t
        if t.startswith("shoot ") or t.startswith("defend "):
            try:
                x = int(t.split()[1])
            except (ValueError, IndexError):
                return None
            return f"{t.split()[0]} {x}" if 1 <= x <= self.mine else None
        return None

    def fire(self) -> str:
        if self.theirs >= 2:
            return "shoot 2"
        if self.theirs == 1:
            return "shoot 1"
        self.loads += 1
        return "load"

    def decide(self) -> str:
        """The blackbox's move this turn (called once a turn, before the player's reply, as published)."""
        if self.last_reply is not None and self.last_reply.startswith("shoot"):
            self.shot = True
        if self.cycle == 0:
            # the published loading phase has three branches (within the first 3 or 6 loads, without or with a
            # shot seen; after them); each loads while no shot is seen and it holds fewer than 8, else fires
            if not self.shot and self.theirs < 8:
                self.loads += 1
                return "load"
            self.cycle = 1
            return self.fire()
        if self.theirs >= 2:
            return "shoot 2"
        if self.theirs == 1:
            return "shoot 1"
        self.cycle, self.shot, self.loads = 0, False, 0
        return "load"

    def support(self):
        if self.next_move is None:
            self.next_move = self.decide()
        return {self.next_move}

    def score(self, mine, theirs, text):
        self.support()
        self.next_move = None
        self.last_reply = text
        (a, x), (b, y) = split_action(mine), split_action(theirs)
        self.mine = min(self.mine + 1, 8) if a in ("load", "scout") else self.mine - x
        self.theirs = min(self.theirs + 1, 8) if b in ("load", "scout") else self.theirs - y
        self.turn += 1
        if a == "shoot" and b == "shoot":
            return (x > y) - (x < y)
        if b == "shoot" and a == "defend":
            return 1 if x >= y else -1
        if a == "shoot":
            return 1
        return -1 if b == "shoot" else 0


class CardsSlice(Platform):
    """hard/comparing_cards_slice_final.py: `strip().lower().split()` must be two words, `card` and a number
    `int()` reads that is in the hand, else asked again. The opponent cuts 1..n into four piles (the first n % 4
    one card larger), and draws a card of pile 2 while it has one, then pile 4, 1, 3. The higher card +1, the
    lower -1, equal 0."""

    def __init__(self, horizon):
        super().__init__(horizon)
        self.hand = list(range(1, horizon + 1))
        self.theirs = list(range(1, horizon + 1))

    def read(self, text):
        parts = text.strip().lower().split()
        if len(parts) != 2 or parts[0] != "card":
            return None
        try:
            x = int(parts[1])
        except ValueError:
            return None
        return f"card {x}" if x in self.hand else None

    def support(self):
        n = self.horizon
        sizes = [n // 4 + (1 if i < n % 4 else 0) for i in range(4)]
        starts = [sum(sizes[:i]) + 1 for i in range(4)]
        piles = [[c for c in range(starts[i], starts[i] + sizes[i]) if c in self.theirs] for i in range(4)]
        return {f"card {c}" for c in next(p for p in (piles[1], piles[3], piles[0], piles[2]) if p)}

    def points(self, mine, theirs):
        a, b = int(mine.split()[1]), int(theirs.split()[1])
        self.hand.remove(a)
        self.theirs.remove(b)
        return (a > b) - (a < b)


class CardsSmart(CardsSlice):
    """hard/comparing_cards_smart_final.py: `strip().lower()` must start with `card `, and `int()` of the piece
    after it (up to the next `card `) must be a card in hand, else asked again. The opponent plays the median
    (n + 1) // 2, then, if the player's first card was at most the median, down from median - 1 and then up
    from median + 1, otherwise up first; always the first such card it still holds."""

    def __init__(self, horizon):
        super().__init__(horizon)
        self.first = None

    def read(self, text):
        t = text.strip().lower()
        if not t.startswith("card "):
            return None
        try:
            x = int(t.split("card ")[1])
        except (ValueError, IndexError):
            return None
        return f"card {x}" if x in self.hand else None

    def support(self):
        n, m = self.horizon, (self.horizon + 1) // 2
        if self.first is None:
            return {f"card {m}"}
        down, up = list(range(m - 1, 0, -1)), list(range(m + 1, n + 1))
        order = down + up if self.first <= m else up + down
        return {f"card {next(c for c in order if c in self.theirs)}"}

    def points(self, mine, theirs):
        if self.first is None:
            self.first = int(mine.split()[1])
        return super().points(mine, theirs)


# ---------------------------------------------------------------- replies

# Odd pieces: Unicode spaces Python's split() and `\s` both take (no-break, em, U+001C, line separator) and two
# they both leave (zero-width space, Mongolian vowel separator), punctuation, signs, Unicode digits (Arabic-Indic,
# fullwidth; a superscript int() refuses), letters whose lower case differs (É, ß, İ).
ODD = ["\u00a0", "\u2003", "\t", "\n", "\x1c", "\u2028", "\u200b", "\u180e", " ", "  ", ".", "!", "'", '"', "`",
       ",", "-", "+", "_", "٣", "５", "²", "É", "ß", "İ", "0", "1", "2", "9", "x"]
GESTURE_EDGES = [" Rock ", "ROCK", "rock.", "rok", "rock paper", "Sponge\n", "\tair", "ＲＯＣＫ", "'rock'", "roc k",
                 "FIRE!", "`paper`", "paper\u00a0", "\u2003water", "Air", "AIR", "air air", "", "rock\u200b",
                 "scissors!", "Scissors", "S C I S S O R S"]
LSD_EDGES = ["load", "LOAD", " load ", "load now", "load 3", "load.", "`load`", "'load'", "Load", "reload",
             "loadscout", "scout", "Scout please", "SCOUT", "shoot", "shoot 1", "Shoot 1", "SHOOT 1", "shoot 01",
             "shoot +1", "shoot -1", "shoot -0", "shoot 0", "shoot ١", "shoot ２", "shoot ²", "shoot 1 bullet",
             "shoot\t1", "shoot\u00a01", "shoot  1", "shoot 1.0", "shoot 1_0", "shoot 0_1", "shoot1", "shoot 1!",
             "shoot 99999999999999999999", "defend", "defend 1", "Defend 2", "defend x", "defend 2 3",
             "defend\t1", "defend ٢", "", "   ", "shoot ①", "shoot 1\nload"]
CARD_EDGES = ["card 3", "Card 3", "CARD 3", "card 03", "card +3", "card ٣", "card ３", "card 3.", "card 3 please",
              "card  3", "card\t3", "card\u00a03", "card 3 card 5", "card3", "3", "card -3", "card 0", "card 13",
              "card ²", "card 3_0", "card 0_3", "card", "play card 3", "`card 3`", "card 2card 4", "card card 2",
              "card 1\n", "card  ٤ ", "card 12", "card 5 6"]
PIECES = {"gesture": GESTURES7 + ["Rock", "FIRE"], "lsd": ["load", "scout", "shoot", "defend", "Shoot", "LOAD"],
          "card": ["card", "Card", "CARD"]}


def reply(rng: random.Random, legal, edges, pieces) -> str:
    """A seeded reply: a legal move (in some case), a published edge form, or odd pieces glued together."""
    r = rng.random()
    if r < 0.45:
        move = rng.choice(legal)
        return rng.choice([move, move, move.upper(), move.capitalize(), move.title()])
    if r < 0.75:
        return rng.choice(edges)
    parts = [rng.choice(pieces + ODD) for _ in range(rng.randint(1, 4))]
    return rng.choice(["", " ", "\t"]).join(parts)


# ---------------------------------------------------------------- the boxes under test

BOXES = {
    # name: (restated platform, edge forms, random pieces)
    "gsi-e-anti-rps-random": (AntiRps, GESTURE_EDGES, PIECES["gesture"]),
    "gsi-e-rps7-random-3": (Rps7Random3, GESTURE_EDGES, PIECES["gesture"]),
    "gsi-h-rps7-mapping": (Rps7Mapping, GESTURE_EDGES, PIECES["gesture"]),
    "gsi-e-load-shoot-defend-defender": (Defender, LSD_EDGES, PIECES["lsd"]),
    "gsi-h-load-shoot-defend-attacker": (Attacker, LSD_EDGES, PIECES["lsd"]),
    "gsi-h-load-shoot-defend-balance": (Balance, LSD_EDGES, PIECES["lsd"]),
    "gsi-h-load-shoot-defend-smart": (Smart, LSD_EDGES, PIECES["lsd"]),
    "gsi-h-comparing-cards-slice": (CardsSlice, CARD_EDGES, PIECES["card"]),
    "gsi-h-comparing-cards-smart": (CardsSmart, CARD_EDGES, PIECES["card"]),
}
# Replies the published platform cannot survive (an uncaught ValueError): asked again here on purpose.
REFUSED_ON_PURPOSE = {"gsi-e-load-shoot-defend-defender": {"shoot ²", "shoot ①", "defend ²"}}


def test_the_new_file_covers_every_box_the_rps7_differential_does_not():
    rps7 = {"gsi-e-rps7-cycle", "gsi-e-rps7-beat-last", "gsi-e-rps7-imitate-last"}
    assert sorted(set(BOXES) | rps7) == sorted(p.stem for p in GAME.glob("gsi-*.world"))


def play_game(name, send, match, pub, rng, edges, pieces, log):
    """One game: seeded replies sent to our box and to the restated platform, compared reply by reply and
    round by round; the accepted (reply, move) pairs are appended to `log`. Returns the refusals on purpose."""
    crashed = set()
    total = 0
    for _ in range(40 * pub.horizon):
        if match().done:
            break
        text = reply(rng, list(match().legal()), edges, pieces)
        want = pub.read(text)
        fb = send(text)
        if want is CRASH:
            assert fb.status == "rejected" and fb.units == 0, (name, text)
            crashed.add(text)
            continue
        assert (fb.status == "ok") == (want is not None), (name, text, want, fb.text)
        if want is None:
            assert fb.units == 0, (name, text)
            continue
        r = match().rounds[-1]
        assert r.mine == want, (name, text, r.mine, want)
        assert r.theirs in pub.support(), (name, r.index, r.theirs, pub.support())
        points = pub.score(want, r.theirs, text)
        assert r.my_payoff == points, (name, r.index, r.mine, r.theirs, r.my_payoff, points)
        total += points
        log.append((text, want))
    assert match().done, name
    assert match().score == total, name
    return crashed


def published_game(world, horizon: int, attempt: int) -> RoundGame:
    """The box's test game of this many rounds under published grading (a trimmed box's other horizons: a
    game of that length, read and played as a test game is)."""
    task = next((t for t in world.tests if t.horizon == horizon), None)
    if task is not None:
        return world.test_play(task.id, attempt, grading="published")
    return RoundGame(world, horizon, random.Random(f"gsidiff:{horizon}:{attempt}"), None, "published")


@pytest.mark.parametrize("name", sorted(BOXES))
def test_gsi_box_reads_and_scores_as_its_published_platform(name, boxes):
    """Every published test game (two attempts) and one exploration game, under published grading."""
    world, horizons = boxes[name]
    assert len(horizons) == 4 and world.tests[0].horizon == horizons[0]
    make, edges, pieces = BOXES[name]
    rng = random.Random(f"gsidiff:{name}")
    crashed, log = set(), []
    for horizon in horizons:
        for attempt in (1, 2):
            play = published_game(world, horizon, attempt)
            assert play.horizon == horizon
            crashed |= play_game(name, play.play, lambda: play.match, make(play.horizon), rng, edges, pieces, log)
    session = world.session(world.tasks[0], grading="published")

    first = session.current()  # opens the game the first probe plays (and the match the replies are drawn for)
    crashed |= play_game(name, session.probe, lambda: session.game.match, make(first.horizon), rng, edges, pieces,
                         log)
    assert session.game is first  # one exploration game, played through the session's probes
    assert crashed <= REFUSED_ON_PURPOSE.get(name, set())
    assert len(log) == sum(horizons) * 2 + first.horizon  # every game was played to its end
    assert len({text for text, move in log if text != move}) >= 5, name  # forms other than the move itself


def test_the_defenders_published_crashes_are_refused_here(boxes):
    play = boxes["gsi-e-load-shoot-defend-defender"][0].test_play("g1", grading="published")
    assert play.play("load").status == "ok"
    for text in REFUSED_ON_PURPOSE["gsi-e-load-shoot-defend-defender"]:
        assert Defender(8).read(text) is CRASH  # isdigit() holds, int() raises
        fb = play.play(text)
        assert fb.status == "rejected" and fb.units == 0


def test_published_forms_that_read_more_than_the_move(boxes):
    """The published parsers' own generosity, now matched: words after the action, a bare `shoot`, Unicode
    digits, signs and underscores int() reads, `card 3 card 5`; and anti_rps_random's third refusal."""
    cases = [("gsi-h-load-shoot-defend-attacker", ["shoot", "load now"], ["shoot 0", "load"]),
             ("gsi-h-load-shoot-defend-balance", ["load 7", "defend +1"], ["load", "defend 1"]),
             ("gsi-e-load-shoot-defend-defender", ["load please", "shoot ١ bullet"], ["load", "shoot 1"]),
             ("gsi-h-load-shoot-defend-smart", ["scout", "shoot 1 now"], ["scout", "shoot 1"]),
             ("gsi-h-comparing-cards-smart", ["card 3 card 5", "card  0_4"], ["card 3", "card 4"]),
             ("gsi-h-comparing-cards-slice", ["CARD ٣", "card +4"], ["card 3", "card 4"]),
             ("gsi-e-anti-rps-random", ["rock.", "'rock'", "`paper`"], ["rock"])]
    for name, replies, played in cases:
        play = boxes[name][0].test_play("g1", grading="published")
        for text in replies:
            play.play(text)
        assert [r.mine for r in play.match.rounds] == played, name


# Forms the lenient reader forgives and the published platforms ask again for (each box: (reply, move)).
FORGIVEN = {
    "gsi-e-anti-rps-random": [("rock.", "rock"), ("'scissors'", "scissors"), ("`paper`", "paper")],
    "gsi-e-rps7-random-3": [("FIRE!", "fire"), ("'rock'", "rock"), ("`air`", "air")],
    "gsi-h-rps7-mapping": [("sponge.", "sponge"), ('"water"', "water"), ("`rock`", "rock")],
    "gsi-e-load-shoot-defend-defender": [("`load`", "load"), ("load.", "load"), ("'scout'", "scout")],
    "gsi-h-load-shoot-defend-attacker": [("`load`", "load"), ("scout!", "scout"), ("'load'", "load")],
    "gsi-h-load-shoot-defend-balance": [("load.", "load"), ("`scout`", "scout"), ('"load"', "load")],
    "gsi-h-load-shoot-defend-smart": [("load.", "load"), ("`shoot 1`", "shoot 1"), ("Shoot   1!", "shoot 1")],
    "gsi-h-comparing-cards-slice": [("`card 3`", "card 3"), ("card 5.", "card 5"), ("'card 1'", "card 1")],
    "gsi-h-comparing-cards-smart": [("`card 3`", "card 3"), ("Card 5!", "card 5"), ("'card 1'", "card 1")],
}


@pytest.mark.parametrize("name", sorted(FORGIVEN))
def test_lenient_grading_still_forgives_what_published_grading_asks_again_for(name, boxes):
    world = boxes[name][0]
    for text, move in FORGIVEN[name]:
        lenient, published = world.test_play("g1"), world.test_play("g1", grading="published")
        pub = BOXES[name][0](published.horizon)
        if move.startswith("shoot"):
            for game in (lenient, published):
                assert game.play("load").status == "ok"
            pub.score("load", next(iter(pub.support())), "load")
        assert pub.read(text) is None, (name, text)
        assert published.play(text).status == "rejected", (name, text)
        fb = lenient.play(text)
        assert fb.status == "ok" and lenient.match.rounds[-1].mine == move, (name, text, fb.text)
        assert world.reader("lenient")(text) == move and world.reader()(text) == world.read_move(text)


def test_the_smart_opponent_sees_the_reply_as_written_under_published_grading(boxes):
    """The smart blackbox learns of a shot from the raw reply's `startswith("shoot")`, so an accepted `Shoot 1`
    goes unnoticed there; the box's `published_seen text` tells our opponent the same text. Under lenient
    grading our opponent is told the move, so it notices every shot."""
    world = boxes["gsi-h-load-shoot-defend-smart"][0]
    rng = random.Random("gsidiff:smart-eyes")
    unseen = 0
    for k in range(30):
        task = world.tasks[k % len(world.tasks)]
        play = world.test_play(task.id, 1 + k // len(world.tasks), grading="published")
        log: list = []
        play_game("smart", play.play, lambda: play.match, Smart(play.horizon), rng, LSD_EDGES, PIECES["lsd"], log)
        unseen += any(m.startswith("shoot") and not text.startswith("shoot") for text, m in log)
    assert unseen >= 3, unseen  # the games did test the blind spot
    replies = ["load", "Shoot 1", "load", "load"]
    published, theirs = Smart(8), []
    for text in replies:
        theirs.append(next(iter(published.support())))
        published.score(published.read(text), theirs[-1], text)
    assert theirs == ["load"] * 4 and not published.shot  # it never saw the shot, and kept loading
    play = world.test_play("g1", grading="published")
    for text in replies:
        play.play(text)
    assert [r.theirs for r in play.match.rounds] == theirs
    lenient = world.test_play("g1", grading="lenient")
    for text in replies:
        lenient.play(text)
    assert [r.theirs for r in lenient.match.rounds] == ["load", "load", "shoot 2", "load"]
    assert world.reads_moves_raw("published") and not world.reads_moves_raw("lenient")


def test_published_seen_is_checked_when_the_box_compiles():
    """`published_seen` must show every move written as its name as itself, and needs a `published_read`."""
    from worldspec.compiler import compile_spec
    from worldspec.diagnostics import SpecError
    from worldspec.parser import parse_spec
    src = (GAME / "gsi-h-load-shoot-defend-smart.world").read_text(encoding="utf-8")
    bad = src.replace("published_seen text", 'published_seen "load"')
    with pytest.raises(SpecError) as e:
        compile_spec(parse_spec(bad, "s.world"))
    assert "published_seen shows the move 'scout' as 'load'" in e.value.render(), e.value.render()
    alone = "\n".join(line for line in src.splitlines() if not line.startswith("published_read"))
    with pytest.raises(SpecError) as e:
        compile_spec(parse_spec(alone, "s.world"))
    assert "published_seen needs a published_read" in e.value.render()


def test_published_read_is_checked_when_the_box_compiles():
    """A reader that does not read a move as itself, or in a game not played round by round, is a located
    SpecError; a box without one reads its moves leniently under both gradings."""
    from worldspec.compiler import compile_spec
    from worldspec.diagnostics import SpecError
    from worldspec.parser import parse_spec
    text = (ROOT / "tests" / "worlds" / "oracle" / "mixed-rps.world").read_text(encoding="utf-8")
    plain = compile_spec(parse_spec(text, "m.world"))
    assert plain.published_read is None and plain.test_play("g1", grading="published").play("rock.").status == "ok"
    read = compile_spec(parse_spec(text.replace("play rounds\n", "play rounds\npublished_read lower(text)\n"), "m"))
    game = read.test_play("g1", grading="published")
    assert game.play("rock.").status == "rejected" and game.play("ROCK").status == "ok"
    for bad, said in [("published_read upper(text)", "reads the move 'rock' as 'ROCK'"),
                      ("published_read int(text)", "fails on the move 'rock'")]:
        with pytest.raises(SpecError) as e:
            compile_spec(parse_spec(text.replace("play rounds\n", f"play rounds\n{bad}\n"), "m.world"))
        assert said in e.value.render() and "m.world:19:" in e.value.render(), e.value.render()
    with pytest.raises(SpecError) as e:
        compile_spec(parse_spec(text.replace("play rounds\n", "published_read text\n"), "m.world"))
    assert "needs `play rounds`" in e.value.render()


def test_the_memorisers_plan_keeps_moves_that_hold_a_space(boxes):
    """A load-shoot-defend move such as `shoot 1` holds a space: the memoriser's best observed sequence is written
    by commas and played move by move, never split into `shoot` and `1` (which the published attacker reads as
    `shoot 0`)."""
    from worldspec.runner.agents import Memoriser
    from worldspec.runner.models import Request
    world = boxes["gsi-h-load-shoot-defend-attacker"][0]
    task = world.tasks[0].id
    answer = world.answer_from(task, ["load, shoot 1"])
    assert world.parse_moves(answer)[:2] == ["load", "shoot 1"], answer
    agent = Memoriser(world)
    said = [{"role": "assistant", "content": "```\nload, shoot 1\n```"}, {"role": "user", "content": "ok"}]
    plays = [agent.answer(task, Request(messages=tuple(said), purpose=f"task:{task}", meta={"moves": ["x"] * k}))
             for k in range(3)]
    assert plays == ["load", "shoot 1", "load"], plays
