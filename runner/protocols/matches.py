"""What a player of a repeated two-player game reads, and the record of one match (pool play and the round robin).

`rules_prompt` and `round_prompt` are the rules and each round's news as a model reads them;
`finish` logs one side of a match as its conversation's trajectory, with the cooperation statistics
metrics.pool_results reads.
"""
from __future__ import annotations


def conv_id(system: str, opponent: str, seat: str, k: int) -> str:
    return f"{system}|pool|{opponent}|{seat}|{k}"


# ----------------------------------------------------------------------------
# What a model reads


def rules_prompt(world, seat: str) -> str:
    moves = world.moves_for(seat)
    length = (f"The game lasts {world.horizon} rounds." if world.horizon else
              f"After every round the game continues with probability {world.delta:g} (so it lasts "
              f"{1 / (1 - world.delta):.3g} rounds on average, at most {world.max_rounds}); you are not told "
              "when it ends.")
    return ("You are playing a repeated two-player game against another player.\n\n"
            + (world.manual.split("## The game")[0].split("\n", 2)[-1].strip() + "\n\n" if world.manual else "")
            + f"Each round you both choose a move at the same time: {' or '.join(moves)}. Payoffs per round:\n"
            + "\n".join(world.payoff_lines(seat)) + f"\n\n{length}\n\n"
            "Each round, reply with your move only (for example in a fenced code block).")


def round_prompt(r: int, last=None, totals=(0, 0), moves=()) -> str:
    head = ""
    if last is not None:
        head = (f"Round {last.index}: you played {last.mine}, the other played {last.theirs}. You got "
                f"{last.my_payoff:g}, the other got {last.their_payoff:g}. Totals: you {totals[0]:g}, "
                f"the other {totals[1]:g}.\n\n")
    return head + f"Round {r}. Your move ({' or '.join(moves)})?"


# ----------------------------------------------------------------------------
# Records


def finish(rt, world, system: str, opponent: str, seat: str, k: int, horizon: int, rounds, invalid: int,
           lost: str | None) -> dict:
    """The record of one match, logged as its conversation's trajectory."""
    score = sum(r.my_payoff for r in rounds)
    rec = {"world": world.name, "system": system, "condition": "pool", "trajectory": k, "milestones": [],
           "opponent": opponent, "seat": seat, "match": k, "horizon": horizon, "rounds": len(rounds),
           "score": score, "per_round": score / len(rounds) if rounds else None,
           "moves": _moves([r.mine for r in rounds]), "opponent_moves": _moves([r.theirs for r in rounds]),
           "invalid_moves": invalid, "status": "complete" if lost is None else "lost", "valid": lost is None,
           "lost": 0 if lost is None else 1, **world.cooperation_stats(rounds)}
    if lost:
        rec["error"] = lost
    conv = conv_id(system, opponent, seat, k)
    rt.emit_record("trajectory", conv, conv, rec)
    return rec


def _moves(moves: list[str]):
    """One-letter moves as a string ("CCDC"), longer ones as a list."""
    return "".join(moves) if all(len(m) == 1 for m in moves) else moves
