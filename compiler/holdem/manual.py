"""The manual of a Hold'em world: the table, how a decision is shown and how to answer."""
from __future__ import annotations

from worldspec import ast
from worldspec.compiler.items import manual_opening


def render_holdem_manual(spec: ast.Spec, w, params: dict) -> str:
    """The manual shown to a player (w: the compiled HoldemWorld, before its manual is set)."""
    t = w.table
    out = manual_opening(spec, w.summary, params)
    out += ["## The game", "",
            f"Heads-up no-limit Texas Hold'em. Blinds {t.small_blind}/{t.big_blind}; both players start "
            f"every hand with {t.stack} chips. The button posts the small blind and acts first before the "
            "flop, last after it. Each deal is played from both seats.", "",
            "## Each decision", "",
            "You see the street, your hole cards, the board, both stacks, the pot, the chips to call, "
            "the pot odds (to call / (pot + to call)), the recent actions and the legal actions. Reply with "
            "one action on the last line:", "",
            "- FOLD, CHECK or CALL", "- RAISE <amount>: raise to a total bet of <amount> chips this street",
            "- ALL_IN", "",
            "An invalid reply is retried once; a second invalid reply folds the hand (checks when there is "
            "nothing to call).", ""]
    return "\n".join(out).rstrip() + "\n"
