"""The manual of a judge world: what the player reads before its first turn (never the hidden truth)."""
from __future__ import annotations

from worldspec.compiler.judge.world import HOW_TO_PLAY, how_to_play

RULES = {
    "puzzle": ("This is a situation puzzle: a short story that seems not to make sense. A judge knows the "
               "hidden explanation. Find it by asking the judge yes/no questions, then state the explanation."),
    "math": ("This is an interactive math problem. A judge holds the reference solution. You may ask the judge "
             "whether a claim about the solution is true (a method, a lemma, an intermediate value) before you "
             "submit the final answer."),
}


def render_manual(name: str, setting: str, surface: str, preface: str, turns: int) -> str:
    """The manual shown to a player: the rules of the setting, the surface and how a turn is written."""
    out = [f"# {name}", "", RULES[setting], ""]
    if preface.strip():
        out += [preface.strip(), ""]
    out += ["## The problem" if setting == "math" else "## The puzzle", "", surface.strip(), "",
            HOW_TO_PLAY, "", how_to_play(setting, turns)]
    return "\n".join(out).rstrip() + "\n"
