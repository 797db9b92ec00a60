"""The manual of a game: its moves and payoffs, how long a game lasts, and (GSI boxes) the interaction."""
from __future__ import annotations

from worldspec import ast
from worldspec.compiler.game.world import GameWorld
from worldspec.compiler.items import manual_opening


def render_game_manual(spec: ast.Spec, w: GameWorld, params: dict) -> str:
    """The manual shown to an agent (w: the compiled GameWorld, before its manual is set)."""
    out = manual_opening(spec, w.summary, params)
    out += ["## The game", "",
            f"Each round both players choose a move at the same time ({', '.join(w.game.row_moves)}); "
            "each sees the other's move after the round. Payoffs per round:", ""]
    out += w.payoff_lines()
    out.append("")
    if w.tests:
        lengths = sorted({t.horizon for t in w.tests})
        out.append(f"Test games last {' or '.join(map(str, lengths))} rounds; a probe plays up to "
                   f"{w.probe_rounds}.")
    elif w.horizon:
        out.append(f"A game lasts {w.horizon} rounds.")
    else:
        out.append(f"After every round the game continues with probability {w.delta:g} (at most "
                   f"{w.max_rounds} rounds): on average {1 / (1 - w.delta):.3g} rounds.")
    if w.tests:
        out += ["", "## Interaction", "",
                f"The opponent follows a fixed hidden strategy. You have {w.budget.turns} exploration turns: "
                f"in each, send a sequence of up to {w.probe_rounds} moves; a fresh game is played with them "
                "and you see the opponent's moves and your payoffs. Then, for each test game, you submit "
                f"all your moves at once ({w.budget.shots} attempt(s) each); accuracy is your score divided "
                "by the best score possible against this opponent."]
    return "\n".join(out).rstrip() + "\n"
