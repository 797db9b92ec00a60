"""The manual of a black box: what it computes (or hides), its inputs, constraints, documentation, budget."""
from __future__ import annotations

import random

from worldspec import ast
from worldspec.compiler.blackbox.world import BlackBoxWorld
from worldspec.compiler.common import interpolate
from worldspec.compiler.items import manual_opening


def render_box_manual(spec: ast.Spec, w: BlackBoxWorld, params: dict) -> str:
    """The manual shown to an agent (w: the compiled BlackBoxWorld, before its manual is set)."""
    out = manual_opening(spec, w.summary, params)
    out += ["## The box", ""]
    if w.has_goal:
        out.append(f"The box hides {w.goal_note}. Each input is a guess; the box answers with feedback on "
                   "that guess.")
    else:
        out.append("The box computes a hidden function f of its input(s).")
    out += ["", "Inputs:"]
    for name, d in w.inputs:
        out.append(f"- `{name}`: {d.describe()}.")
    if w.predicates:
        out += ["", "Constraints (an input that breaks one is rejected with the reason, and costs no turn):"]
        out += [f"- {reason}" for _, reason in w.predicates]
    sample = w.sample_inputs(random.Random(f"manual:{w.name}"), 1)
    if sample:
        shape = "separated by commas, " if len(w.inputs) > 1 else ""
        out += ["", f"Write one input per turn, {shape}like: `{w.format(sample[0])}`"]
    ops = [d for d in spec.base if d.kind == "op"]
    if ops:
        out += ["", "## What the documentation says", ""]
        for d in ops:
            out.append(f"- `{d.name}({', '.join(p.name for p in d.params)})`: {interpolate(d.doc, params)}")
    b = w.budget
    tests = "the hidden target" if w.has_goal else f"{len(w.tests)} unseen input(s)"
    out += ["", "## Interaction", "",
            f"You have {b.turns} exploration turns: in each, send one input and read the box's output. "
            f"Then you are asked for {tests}, with {b.shots} attempt(s) each; after a wrong attempt you are "
            "told it is incorrect."]
    if w.tolerance:
        out.append(f"Numbers are accepted within {w.tolerance:g} relative tolerance.")
    return "\n".join(out).rstrip() + "\n"
