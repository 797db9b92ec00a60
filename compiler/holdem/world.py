"""The compiled Hold'em world: its table, opponents and schedule of duplicate deals; hands a runner plays.

`HoldemWorld` implements the `World` core and `HoldemFace` (compiler/api.py) for the "holdem"
run protocol (runner/protocols/holdem.py). The runner never touches pokerkit: it
asks the world for a `Seat` (one hand from one seat against one opponent), reads
its observation, hands it the reply text, and gets the hand's result. A world has
no probing and no held-out tasks: a player is measured by the hands it plays.
"""
from __future__ import annotations

import random
import attrs

from worldspec.compiler.api import Task, Verdict, WorldHeader, by_id
from worldspec.compiler.holdem.bots import Bot
from worldspec.compiler.holdem.certify import certify_holdem
from worldspec.compiler.holdem.engine import (POSITION, Action, Hand, Legal, Table, card_text, deal_cards, parse_action,
                                              parse_json_action)
from worldspec.compiler.holdem.ring import RingTable


class Seat:
    """One hand of a schedule from the player's seat: the opponent bot acts by itself, the player by `act`."""

    def __init__(self, world: "HoldemWorld", opponent: str, k: int, seat: str):
        self.world, self.opponent, self.k, self.seat = world, opponent, k, seat
        self.position = POSITION[seat]
        self.hand = Hand(world.table, deal_cards(world.deal_key(k)))
        self.bot = world.bot(opponent)
        # the opponent's stream: the same for every player of this hand
        self.rng = random.Random(f"{world.deal_key(k)}:{opponent}:{seat}:bot")
        self.decisions = 0
        self.auto_folds = 0
        self.advance()

    def advance(self) -> None:
        """Let the opponent act until the player must, or the hand is over."""
        h = self.hand
        while not h.done and h.actor != self.position:
            h.apply(self.bot.decide(h, h.actor, self.rng))

    @property
    def done(self) -> bool:
        return self.hand.done

    def observation(self) -> dict:
        """The player's structured observation (engine.Hand.observation) with the hand's place in the run."""
        return {"hand": f"{self.opponent} deal {self.k + 1} as {self.seat}", "seat": self.seat,
                **self.hand.observation(self.position, self.world.recent)}

    def legal(self) -> Legal:
        return self.hand.legal()

    def read(self, text) -> Action:
        """The action a reply names; raises InputError when it names none that is legal now."""
        return parse_action(text, self.hand.legal())

    def act(self, action: Action) -> None:
        """Play the player's action, then the opponent's until the player is to act again."""
        self.decisions += 1
        self.hand.apply(action)
        self.advance()

    def fallback(self) -> Action:
        """The automatic fold after an invalid reply and its retry (a check when there is nothing to call:
        pokerkit has no fold then, and checking gives up nothing)."""
        self.auto_folds += 1
        return Action("FOLD" if "FOLD" in self.hand.legal().kinds else "CHECK")

    def result(self) -> dict:
        """The finished hand: chips and big blinds won, VPIP, fold, and what was dealt."""
        h, me = self.hand, self.position
        chips = h.payoff(me)
        return {"chips": chips, "bb": chips / self.world.table.big_blind, "vpip": h.voluntary[me],
                "folded": h.folded == me, "decisions": self.decisions, "auto_folds": self.auto_folds,
                "hole_cards": card_text(h.holes[me]), "opponent_cards": card_text(h.holes[1 - me]),
                "board": card_text(h.board()), "actions": [f"{st}: {'player' if who == me else 'opponent'} {a}"
                                                            for st, who, a in h.history]}


@attrs.frozen(eq=False)
class HoldemWorld(WorldHeader):
    """Heads-up no-limit Hold'em: a table, a pool of bots, duplicate deals from both seats."""

    table: Table
    hands: int  # deals per opponent (each played from every seat)
    seats: tuple[str, ...]
    opponents: tuple[Bot, ...]
    baselines: tuple[str, ...]  # bots run as systems beside models (and when no model is given)
    recent: int  # actions of recent history shown in an observation
    certify_hands: int
    players: int = 2  # 2: heads-up duplicate deals; 3 to 10: a ring game (`tables` tables of `hands` hands)
    tables: int = 1
    source: str = ""  # the spec file, as every kind's world names it (a folder's report lists it)

    @property
    def ring(self) -> bool:
        """Whether this is a ring game (InteractiveBench's six-seat tables) rather than heads-up duplicates."""
        return self.players > 2

    def ring_table(self, index: int, names) -> RingTable:
        """Table `index` of a ring game, its seats taken by `names` in order."""
        return RingTable(self, index, list(names))

    @staticmethod
    def read_json(text, legal: Legal) -> Action:
        """The action of a reply in the released JSON format (engine.parse_json_action); InputError says why not."""
        return parse_json_action(text, legal)

    @staticmethod
    def fold_or_check(legal: Legal) -> Action:
        """The automatic fold after an invalid reply and its retry (a check when there is nothing to call)."""
        return Action("FOLD" if "FOLD" in legal.kinds else "CHECK")

    @property
    def protocol(self) -> str:
        return "holdem"

    def bot(self, name: str) -> Bot:
        """The declared bot with this name (KeyError when there is none)."""
        for b in self.opponents:
            if b.name == name:
                return b
        raise KeyError(f"no bot {name!r} in {self.name}")

    def deal_key(self, k: int) -> str:
        """The seed key of deal k: every opponent and both seats meet the same cards."""
        return f"worldspec:{self.seed}:holdem:deal:{k}"

    def schedule(self) -> list[tuple[str, int, str]]:
        """Every (opponent, deal, seat) hand, in a fixed order (each deal from every seat: duplicate)."""
        return [(o.name, k, s) for o in self.opponents for k in range(self.hands) for s in self.seats]

    def seat(self, opponent: str, k: int, seat: str) -> Seat:
        """A fresh hand of the schedule, waiting for the player's first decision (or already over)."""
        return Seat(self, opponent, k, seat)

    def play_bot(self, name: str, opponent: str, k: int, seat: str) -> dict:
        """A declared bot plays one hand of the schedule as the player (its own seeded stream)."""
        s = self.seat(opponent, k, seat)
        player, rng = self.bot(name), random.Random(f"{self.deal_key(k)}:{opponent}:{seat}:player:{name}")
        while not s.done:
            s.act(player.decide(s.hand, s.position, rng))
        return s.result()

    # ------------------------------------------------------------ the World core (compiler/api.py); rule() is
    # WorldHeader's. A Hold'em world has no probing, tool or rule report: its face is HoldemFace.

    @property
    def open_book(self) -> str:
        """The opponents' strategies."""
        return "\n".join("- " + b.describe() for b in self.opponents)

    def task(self, task) -> Task:
        """The task with this id (a Hold'em world has none: KeyError)."""
        return by_id(self.tasks, task, self.name)

    def verify(self, task, answer: str) -> Verdict:
        """No held-out tasks: by_id raises KeyError for any task asked."""
        t = self.task(task)
        return Verdict(t.id, False, "a Hold'em world grades hands, not tasks")

    def certify(self, progress=None) -> dict:
        """Seeded random play on pokerkit (compiler/holdem/certify.py)."""
        return certify_holdem(self, progress)
