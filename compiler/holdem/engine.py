"""Heads-up no-limit Texas Hold'em on pokerkit: seeded deals, one hand's play, observations and legal actions.

pokerkit (a maintained, tested engine) keeps the rules: blinds, betting order,
minimum raises, side pots, showdown and the hand evaluator. This module only
deals from a seeded deck (so the same deal can be replayed from the other seat),
turns pokerkit's state into the observation the paper lists (InteractiveBench,
section 5: "current street, hole cards, board, stacks, pot odds, recent action
history") and its legal actions into FOLD / CHECK / CALL / RAISE amount / ALL_IN.

Positions are pokerkit's: heads-up, player 0 posts the big blind and player 1
(the button) the small blind and acts first before the flop.
"""
from __future__ import annotations

import random
import re
import warnings

import attrs
from pokerkit import Automation, Card, Deck, Mode, NoLimitTexasHoldem, StandardHighHand

from worldspec import safejson
from worldspec.compiler.api import InputError

STREETS = ("preflop", "flop", "turn", "river")
SEATS = ("button", "big_blind")  # the player's seat; pokerkit index: button 1, big blind 0
POSITION = {"button": 1, "big_blind": 0}
ACTIONS = ("FOLD", "CHECK", "CALL", "RAISE", "ALL_IN")
# Everything but dealing and the players' decisions is left to pokerkit.
AUTOMATIONS = (Automation.ANTE_POSTING, Automation.BET_COLLECTION, Automation.BLIND_OR_STRADDLE_POSTING,
               Automation.HOLE_CARDS_SHOWING_OR_MUCKING, Automation.HAND_KILLING, Automation.CHIPS_PUSHING,
               Automation.CHIPS_PULLING)
MAX_REPLY_CHARS = 4000


class HoldemError(Exception):
    """The engine refused an action the offered list said was legal (certification reports it)."""


@attrs.frozen
class Table:
    """The stakes of every hand: blinds and the stack each player starts each hand with (chips)."""

    small_blind: int
    big_blind: int
    stack: int


@attrs.frozen
class Action:
    """One decision: a kind of ACTIONS and, for RAISE and ALL_IN, the total bet it raises to this street."""

    kind: str
    amount: int = 0

    def __str__(self) -> str:
        return f"{self.kind} {self.amount}" if self.kind == "RAISE" else self.kind


@attrs.frozen
class Legal:
    """What the player to act may do: the action kinds, the chips to call and the raise-to range."""

    kinds: tuple[str, ...]
    to_call: int
    min_raise: int  # 0 when no raise is possible
    max_raise: int

    def offered(self) -> list[Action]:
        """One action of each kind offered (RAISE at its minimum), as certification tries them."""
        return [Action(k, self.min_raise if k == "RAISE" else self.max_raise if k == "ALL_IN" else 0)
                for k in self.kinds]

    def describe(self) -> str:
        out = []
        for k in self.kinds:
            if k == "CALL":
                out.append(f"CALL ({self.to_call})")
            elif k == "RAISE":
                out.append(f"RAISE <amount> (raise to a total bet this street from {self.min_raise} to "
                           f"{self.max_raise})")
            elif k == "ALL_IN":
                out.append(f"ALL_IN (raise to {self.max_raise})")
            else:
                out.append(k)
        return ", ".join(out)


def deal_cards(key: str) -> tuple[Card, ...]:
    """The deck of one deal, shuffled by a seed key (the same key, the same cards in the same places)."""
    cards = list(Deck.STANDARD)
    random.Random(key).shuffle(cards)
    return tuple(cards)


def card_text(cards) -> str:
    return " ".join(repr(c) for c in cards) or "-"


READ = re.compile(r"^\s*(FOLD|CHECK|CALL|ALL[_ -]?IN|RAISE(?:\s+TO)?)\b\s*(\d+)?", re.IGNORECASE)


def parse_action(text, legal: Legal) -> Action:
    """An action from a reply (its last line naming one); raises InputError saying why it is not legal here."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("the reply names no action")
    if len(text) > MAX_REPLY_CHARS:
        raise InputError("the reply is too long")
    found = None
    for line in reversed(text.strip().strip("`").splitlines()):
        m = READ.match(line.strip().strip("`*").strip())
        if m:
            found = m
            break
    if found is None:
        raise InputError("the reply names no action (FOLD, CHECK, CALL, RAISE <amount>, ALL_IN)")
    word = re.sub(r"[^A-Z]", "", found.group(1).upper())
    kind = "ALL_IN" if word == "ALLIN" else "RAISE" if word.startswith("RAISE") else word
    if kind not in legal.kinds:
        raise InputError(f"{kind} is not legal now")
    if kind == "RAISE":
        if found.group(2) is None:
            raise InputError("RAISE needs an amount (the total bet this street)")
        amount = int(found.group(2))
        if not legal.min_raise <= amount <= legal.max_raise:
            raise InputError(f"RAISE {amount} is outside {legal.min_raise}..{legal.max_raise}")
        return Action("ALL_IN", amount) if amount == legal.max_raise and "ALL_IN" in legal.kinds \
            else Action("RAISE", amount)
    return Action(kind, legal.max_raise if kind == "ALL_IN" else 0)


JSON_FIELDS = ("action", "amount", "reasoning")


def parse_json_action(text, legal: Legal) -> Action:
    """An action from a reply in InteractiveBench's JSON format (POKER/services/geminiService.ts, the system
    prompt and parseDecision): an object with "action" (FOLD, CHECK, CALL, RAISE or ALL_IN), "amount" (the
    total wager this street; 0 for CHECK and FOLD) and "reasoning". The reply is the object (a ```json
    fence around it is forgiven). A raise's amount is a whole number of chips in the legal range: a
    fractional or out-of-range amount is refused with the reason (the player is asked again), never
    rounded or clamped. Raises InputError saying why the reply is not a legal action here."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("the reply is empty; reply with a JSON object")
    if len(text) > MAX_REPLY_CHARS:
        raise InputError("the reply is too long")
    body = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip(), flags=re.I)
    try:
        data = safejson.loads(body)
    except ValueError:
        raise InputError("the reply is not a JSON object") from None
    if not isinstance(data, dict):
        raise InputError("the reply is not a JSON object")
    kind, amount = data.get("action"), data.get("amount")
    if kind not in ACTIONS:
        raise InputError(f"action must be one of {', '.join(ACTIONS)} (got {str(kind)[:40]!r})")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount != amount \
            or amount in (float("inf"), float("-inf")):
        raise InputError("amount must be a number (the total wager this street; 0 for CHECK or FOLD)")
    if kind not in legal.kinds:
        raise InputError(f"{kind} is not legal now")
    if kind == "RAISE":
        if amount != int(amount):
            raise InputError(f"RAISE {amount} is not a whole number of chips")
        amount = int(amount)
        if not legal.min_raise <= amount <= legal.max_raise:
            raise InputError(f"RAISE {amount} is outside {legal.min_raise}..{legal.max_raise}")
        return Action("ALL_IN", amount) if amount == legal.max_raise and "ALL_IN" in legal.kinds \
            else Action("RAISE", amount)
    return Action(kind, legal.max_raise if kind == "ALL_IN" else 0)


def strength(hole, board, rng: random.Random, samples: int) -> float:
    """Seeded Monte-Carlo equity of a hand against one random hand, by pokerkit's evaluator (ties count half)."""
    known = set(hole) | set(board)
    rest = [c for c in Deck.STANDARD if c not in known]
    won = 0.0
    for _ in range(samples):
        draw = rng.sample(rest, 2 + 5 - len(board))
        theirs, full = draw[:2], list(board) + draw[2:]
        mine = StandardHighHand.from_game(hole, full)
        other = StandardHighHand.from_game(theirs, full)
        won += 1.0 if mine > other else 0.5 if mine == other else 0.0
    return won / samples


class Hand:
    """One hand in progress on pokerkit: deal from a seeded deck, offer legal actions, apply them."""

    def __init__(self, table: Table, deck: tuple[Card, ...], stacks: tuple[int, ...] | None = None):
        """A hand of len(stacks) players (heads-up at the table's stack when None). pokerkit's positions:
        heads-up 0 is the big blind and 1 the button; with more players 0 is the small blind, 1 the big
        blind and the last the button."""
        self.table = table
        self.start = tuple(stacks) if stacks is not None else (table.stack, table.stack)
        n = len(self.start)
        self.state = NoLimitTexasHoldem.create_state(
            AUTOMATIONS, True, 0, (table.small_blind, table.big_blind), table.big_blind,
            self.start, n, mode=Mode.CASH_GAME)
        # Fixed places in the deck: two hole cards per position in order, five board cards, three burns.
        self.holes = {i: list(deck[2 * i:2 * i + 2]) for i in range(n)}
        self.board_left = list(deck[2 * n:2 * n + 5])
        self.burns = list(deck[2 * n + 5:2 * n + 8])
        self.history: list[tuple[str, int, Action]] = []  # (street, position, action)
        self.voluntary = [False] * n  # put chips in before the flop of one's own accord (VPIP)
        self.folds: dict[int, str] = {}  # position -> the street it folded on
        self.folded: int | None = None  # the last position to fold (heads-up: the one that folded)
        self.deal()

    # ------------------------------------------------------------ state

    @property
    def done(self) -> bool:
        return not self.state.status

    @property
    def actor(self) -> int | None:
        return None if self.done else self.state.actor_index

    @property
    def street(self) -> str:
        i = self.state.street_index
        return STREETS[i] if i is not None else "showdown"

    def board(self) -> list:
        return list(self.state.get_board_cards(0)) if self.state.board_cards else []

    def pot(self) -> int:
        """Chips in the middle: collected pots plus this street's bets."""
        return self.state.total_pot_amount

    def payoff(self, position: int) -> int:
        """Chips won (negative: lost) by a position in a finished hand."""
        return self.state.stacks[position] - self.start[position]

    def saw_flop(self, position: int) -> bool:
        """Whether a position was still in the hand when the flop was dealt."""
        return len(self.board()) >= 3 and self.folds.get(position) != "preflop"

    def deal(self) -> None:
        """Deal (and burn) from the seeded deck until a player must act or the hand is over."""
        s = self.state
        while s.status and s.actor_index is None:
            if s.can_burn_card():
                s.burn_card(self.burns.pop(0))
            elif s.can_deal_hole():
                s.deal_hole(self.holes[s.hole_dealee_index][len(s.hole_cards[s.hole_dealee_index])])
            elif s.can_select_runout_count():
                s.select_runout_count(1)  # cash-game mode asks all-in players how many runouts: one
            elif s.can_deal_board():
                n = s.board_dealing_count
                s.deal_board(self.board_left[:n])
                del self.board_left[:n]
            else:  # pragma: no cover - pokerkit automates everything else
                raise HoldemError("the hand stopped with nothing to deal and nobody to act")

    def legal(self) -> Legal:
        """The actions the player to act may take (what the observation offers)."""
        s = self.state
        to_call = s.checking_or_calling_amount or 0
        kinds = ["FOLD", "CALL"] if to_call else ["CHECK"]
        lo = hi = 0
        if s.can_complete_bet_or_raise_to():
            lo, hi = s.min_completion_betting_or_raising_to_amount, s.max_completion_betting_or_raising_to_amount
            kinds += ["RAISE", "ALL_IN"] if lo < hi else ["ALL_IN"]
        return Legal(tuple(kinds), to_call, lo, hi)

    def apply(self, action: Action) -> None:
        """Apply one action of the player to act (legal or not: pokerkit raises ValueError on an illegal one)."""
        s = self.state
        who, street = s.actor_index, self.street
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pokerkit warns on a fold when checking is free; we never offer it
            if action.kind == "FOLD":
                s.fold()
                self.folded = who
                self.folds[who] = street
            elif action.kind in ("CHECK", "CALL"):
                s.check_or_call()
            else:
                s.complete_bet_or_raise_to(action.amount)
        if street == "preflop" and action.kind in ("CALL", "RAISE", "ALL_IN"):
            self.voluntary[who] = True  # a blind is forced, a call or raise is not
        self.history.append((street, who, action))
        self.deal()

    def observation(self, position: int, recent: int) -> dict:
        """What the player at `position` sees when it is to act (InteractiveBench's structured observation)."""
        s, legal = self.state, self.legal()
        other = 1 - position
        pot = self.pot()
        return {
            "street": self.street, "hole_cards": card_text(self.holes[position]), "board": card_text(self.board()),
            "your_stack": s.stacks[position], "opponent_stack": s.stacks[other], "pot": pot,
            "your_bet": s.bets[position], "opponent_bet": s.bets[other], "to_call": legal.to_call,
            "pot_odds": round(legal.to_call / (pot + legal.to_call), 3) if legal.to_call else 0.0,
            "big_blind": self.table.big_blind,
            "recent_actions": [f"{st}: {'you' if who == position else 'opponent'} {a}"
                               for st, who, a in self.history[-recent:]] if recent else [],
            "legal_actions": legal.describe(),
        }

    def private(self, position: int) -> tuple:
        """(hole cards, board) of a position, what a bot's hand strength is computed from."""
        return tuple(self.holes[position]), tuple(self.board())
