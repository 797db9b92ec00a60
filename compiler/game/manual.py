"""The manual of a game: its moves and payoffs, how long a game lasts, and (GSI boxes) the interaction."""
from __future__ import annotations

from worldspec import ast
from worldspec.compiler.game.world import GameWorld
from worldspec.compiler.items import manual_opening

MAX_PAYOFF_LINES = 36  # a larger table is described by the spec's manual text, not listed


def render_game_manual(spec: ast.Spec, w: GameWorld, params: dict) -> str:
    """The manual shown to an agent (w: the compiled GameWorld, before its manual is set)."""
    out = manual_opening(spec, w.summary, params)
    moves = list(w.game.row_moves)
    shown = ", ".join(moves[:16]) + (", ..." if len(moves) > 16 else "")
    out += ["## The game", "", f"Each round both players choose a move at the same time ({shown}); "
            "each sees the other's move after the round."]
    if w.game.has_board:
        out.append("Which moves are legal depends on the state of the game (shown before every move).")
    pairs = len(w.game.row_moves) * len(w.game.column_moves)
    if pairs <= MAX_PAYOFF_LINES:
        out += ["Payoffs per round:", ""] + w.payoff_lines()
    else:
        out.append("The payoffs per round are as described above.")
    out.append("")
    if w.tests:
        lengths = sorted({t.horizon for t in w.tests})
        if w.rounds:
            out.append(f"Test games last {' or '.join(map(str, lengths))} rounds.")
        else:
            out.append(f"Test games last {' or '.join(map(str, lengths))} rounds; a probe plays up to "
                       f"{w.probe_rounds}.")
    elif w.horizon:
        out.append(f"A game lasts {w.horizon} rounds.")
    else:
        out.append(f"After every round the game continues with probability {w.delta:g} (at most "
                   f"{w.max_rounds} rounds): on average {1 / (1 - w.delta):.3g} rounds.")
    if w.tests:
        norms = {t.norm for t in w.tests}
        scale = ("the best score possible against this opponent" if norms == {None}
                 else "a fixed score given with each test game")
        if w.rounds:
            out += ["", "## Interaction", "",
                    f"The opponent follows a fixed hidden strategy. You have {w.budget.turns} exploration turns: "
                    "each is one whole game, played move by move (one move per reply; after each round you see "
                    f"what happened and the history). Then you play each test game the same way "
                    f"({w.budget.shots} attempt(s) each, the best counts); accuracy is your total payoff divided "
                    f"by {scale}."]
        else:
            out += ["", "## Interaction", "",
                    f"The opponent follows a fixed hidden strategy. You have {w.budget.turns} exploration turns: "
                    f"in each, send a sequence of up to {w.probe_rounds} moves; a fresh game is played with them "
                    "and you see the opponent's moves and your payoffs. Then, for each test game, you submit "
                    f"all your moves at once ({w.budget.shots} attempt(s) each); accuracy is your score divided "
                    f"by {scale}."]
    return "\n".join(out).rstrip() + "\n"
