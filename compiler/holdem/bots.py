"""The baseline bots a Hold'em world declares as opponents (and runs as systems): always-call, tight-aggressive, random.

Each is seeded by the caller's random stream, so the same hand plays the same way.
The tight-aggressive bot's hand strength is a seeded Monte-Carlo equity against
one random hand, evaluated by pokerkit (engine.strength), never by our own evaluator.
"""
from __future__ import annotations

import random

import attrs

from worldspec.compiler.holdem.engine import Action, Hand, strength

STYLES = {
    "always_call": "checks when it can and calls every bet; never raises or folds",
    "tight_aggressive": "raises with strong hands, calls with fair ones or when the pot odds pay, folds the rest",
    "random": "picks a legal action at random (a raise to a random legal amount)",
}


@attrs.frozen
class Bot:
    """One declared bot: its name, title, style and (tight-aggressive) its equity thresholds."""

    name: str
    title: str
    style: str
    raise_at: float = 0.65  # equity at or above which it raises
    call_at: float = 0.45  # equity at or above which it calls (or when the equity beats the pot odds)
    samples: int = 60  # Monte-Carlo deals per strength estimate

    def describe(self) -> str:
        extra = (f" (raises at equity {self.raise_at:g}, calls at {self.call_at:g})"
                 if self.style == "tight_aggressive" else "")
        return f"{self.name}: {self.title} — {STYLES[self.style]}{extra}"

    def decide(self, hand: Hand, position: int, rng: random.Random) -> Action:
        """The bot's action for `position`, which is to act in `hand`."""
        legal = hand.legal()
        if self.style == "always_call":
            return Action("CALL" if "CALL" in legal.kinds else "CHECK")
        if self.style == "random":
            kind = rng.choice(legal.kinds)
            if kind == "RAISE":
                top = min(legal.max_raise, max(legal.min_raise, 2 * hand.pot()))
                return Action("RAISE", rng.randint(legal.min_raise, top))
            return Action(kind, legal.max_raise if kind == "ALL_IN" else 0)
        hole, board = hand.private(position)
        eq = strength(hole, board, rng, self.samples)
        if eq >= self.raise_at and ("RAISE" in legal.kinds or "ALL_IN" in legal.kinds):
            if "RAISE" not in legal.kinds:
                return Action("ALL_IN", legal.max_raise)
            # a pot-sized raise: call, then bet the pot that call makes
            target = hand.state.bets[position] + legal.to_call + hand.pot() + legal.to_call
            amount = max(legal.min_raise, min(legal.max_raise, target))
            return Action("ALL_IN" if amount == legal.max_raise else "RAISE", amount)
        pot_odds = legal.to_call / (hand.pot() + legal.to_call) if legal.to_call else 0.0
        if not legal.to_call:
            return Action("CHECK")
        if eq >= self.call_at or eq >= pot_odds + 0.05:
            return Action("CALL")
        return Action("FOLD")
