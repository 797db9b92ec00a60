"""A ring table of InteractiveBench's poker benchmark: six seats, stacks carried from hand to hand.

As the released app plays a table (POKER/components/PokerTable.tsx, startNewHand): every seat starts
with the table's stack; the button moves one seat each hand, the next two seats post the blinds;
stacks carry over from hand to hand, and when a seat is left with no chips every stack is reset to
the starting stack (the running totals are kept). pokerkit keeps the rules and side pots; the deck
of hand h of table t is shuffled from the world's seed, t and h only.

A seat's totals (`SeatTotals`) are what the released analyze_stats.py reads per table: chips won,
hands played, folds, VPIP hands (a voluntary call or raise before the flop by a player still in at
the flop: PokerTable.tsx counts handVpipRef at the flop), decisions.
"""
from __future__ import annotations

import attrs

from worldspec.compiler.holdem.engine import Action, Hand, Legal, Table, card_text, deal_cards


@attrs.define
class SeatTotals:
    """One seat's running numbers at one table."""

    name: str
    chips: int = 0
    hands: int = 0
    folds: int = 0
    vpip: int = 0
    decisions: int = 0


class RingHand:
    """One hand at a ring table: who is to act (by seat), what they see, and their action."""

    def __init__(self, table: "RingTable", k: int):
        self.table, self.k = table, k
        n = len(table.seats)
        self.button = k % n
        # pokerkit position i is seat (button + 1 + i): 0 the small blind, 1 the big blind, n-1 the button
        self.order = [(self.button + 1 + i) % n for i in range(n)]
        self.hand = Hand(table.stakes, deal_cards(table.deal_key(k)),
                         tuple(table.stacks[s] for s in self.order))

    @property
    def done(self) -> bool:
        return self.hand.done

    @property
    def seat(self) -> int:
        """The seat to act."""
        return self.order[self.hand.actor]

    @property
    def position(self) -> int:
        """pokerkit's index of the seat to act."""
        return self.hand.actor

    def legal(self) -> Legal:
        return self.hand.legal()

    def observation(self, recent: int) -> dict:
        """What the seat to act sees (InteractiveBench's prompt fields: stage, hand, board, stack, pot, to
        call, minimum raise, pot odds, position, active players, recent actions)."""
        h, legal, me = self.hand, self.hand.legal(), self.hand.actor
        s = h.state
        names = self.table.names
        pot = h.pot()
        active = sum(1 for i in range(len(self.order)) if s.statuses[i])
        return {"hand": f"table {self.table.index + 1} hand {self.k + 1}", "street": h.street,
                "hole_cards": card_text(h.holes[me]), "board": card_text(h.board()), "your_stack": s.stacks[me],
                "stacks": {names[self.order[i]]: s.stacks[i] for i in range(len(self.order))}, "pot": pot,
                "your_bet": s.bets[me], "current_bet": max(s.bets), "to_call": legal.to_call,
                "min_raise": legal.min_raise,
                "pot_odds": round(legal.to_call / (pot + legal.to_call), 3) if legal.to_call else 0.0,
                "position": "button" if me == len(self.order) - 1 else "small blind" if me == 0 else
                            "big blind" if me == 1 else f"{me - 1} seats after the big blind",
                "active_players": active, "big_blind": self.table.stakes.big_blind,
                "recent_actions": [f"{st}: {names[self.order[who]]} {a}" for st, who, a in h.history[-recent:]]
                if recent else [], "legal_actions": legal.describe()}

    def act(self, action: Action) -> None:
        self.table.totals[self.seat].decisions += 1
        self.hand.apply(action)


class RingTable:
    """One table of a ring game: its seats (names), their stacks and totals, hand after hand."""

    def __init__(self, world, index: int, names: list[str]):
        self.world, self.index, self.names = world, index, list(names)
        self.stakes: Table = world.table
        self.seats = list(range(len(names)))
        self.stacks = [self.stakes.stack] * len(names)
        self.totals = [SeatTotals(n) for n in names]
        self.resets = 0

    def deal_key(self, k: int) -> str:
        return f"worldspec:{self.world.seed}:holdem:table:{self.index}:hand:{k}"

    def deal(self, k: int) -> RingHand:
        """Hand k (stacks reset to the start when a seat has none left, as PokerTable.tsx does)."""
        if any(c <= 0 for c in self.stacks):
            self.stacks = [self.stakes.stack] * len(self.names)
            self.resets += 1
        return RingHand(self, k)

    def settle(self, rh: RingHand) -> None:
        """A finished hand's chips, folds and VPIP into the stacks and the totals."""
        h = rh.hand
        for i, seat in enumerate(rh.order):
            t = self.totals[seat]
            won = h.payoff(i)
            self.stacks[seat] += won
            t.chips += won
            t.hands += 1
            t.folds += i in h.folds
            t.vpip += h.voluntary[i] and h.saw_flop(i)
