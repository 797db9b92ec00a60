"""The manual of a Hold'em world: the table, how a decision is shown and how to answer."""
from __future__ import annotations

from worldspec import ast
from worldspec.compiler.items import manual_opening


def render_holdem_manual(spec: ast.Spec, w, params: dict) -> str:
    """The manual shown to a player (w: the compiled HoldemWorld, before its manual is set)."""
    t = w.table
    out = manual_opening(spec, w.summary, params)
    if w.players > 2:
        return "\n".join(out + ring_rules(w)).rstrip() + "\n"
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


def ring_rules(w) -> list[str]:
    """A ring game's rules and the reply format: InteractiveBench's poker system prompt
    (POKER/services/geminiService.ts SYSTEM_INSTRUCTION), restated."""
    t = w.table
    return ["## The game", "",
            f"No-limit Texas Hold'em at a table of {w.players} players. Blinds {t.small_blind}/{t.big_blind}; every "
            f"player starts with {t.stack} chips and keeps what it wins from hand to hand (when a player has no "
            "chips left, every stack is reset). The button moves one seat each hand.", "",
            "Play as a strong professional: bold, but grounded in the numbers (pot odds, implied odds, ranges), "
            "with check-raises, floats and bluffs when the spot calls for them. Aim to end with the biggest "
            "stack: bet and raise for value with strong hands, give up weak hands when the odds are poor.",
            "", "## Each decision", "",
            "You see the stage, your hand, the community cards, the stacks, the pot, the amount to call, the "
            "minimum raise, the pot odds, your position, the active players, the recent actions and the legal "
            "actions. Reply with one JSON object and nothing else:", "",
            '    {"action": "RAISE", "amount": 300, "reasoning": "a short professional thought (20 words at most)"}',
            "", '- "action": "FOLD", "CHECK", "CALL", "RAISE" or "ALL_IN"',
            '- "amount": the TOTAL you wager this street: 0 for CHECK or FOLD, the current bet for CALL; for '
            "RAISE a whole number of chips above the current bet, within the legal range", "",
            "An invalid reply is answered with the reason and asked once more; a second invalid reply folds the "
            "hand (checks when there is nothing to call).", ""]
