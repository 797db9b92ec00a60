"""The manual of a black box: what it computes (or hides), its inputs, constraints, documentation, budget."""
from __future__ import annotations

import random

from worldspec import ast
from worldspec.compiler.blackbox.world import BlackBoxWorld
from worldspec.compiler.common import interpolate
from worldspec.compiler.items import manual_opening


def render_box_manual(spec: ast.Spec, w: BlackBoxWorld, params: dict, worked: tuple = ()) -> str:
    """The manual shown to an agent (w: the compiled BlackBoxWorld, before its manual is set; `worked`: the
    worked examples, (TestCase, its output rendered) each, computed by the compiler)."""
    out = manual_opening(spec, w.summary, params)
    out += ["## The box", ""]
    if w.has_goal:
        many = f" There are {len(w.targets)} puzzles, each with its own hidden target." if len(w.targets) > 1 else ""
        out.append(f"The box hides {w.goal_note}. Each input is a query; the box answers with feedback about "
                   f"the hidden target.{many}")
    else:
        out.append("The box computes a hidden function f of its input(s).")
    if w.stateful:
        out.append("The box remembers the earlier inputs of a session: an answer may depend on them.")
    if w.noise:
        out.append("The box's answers may be random.")
    out += ["", "Inputs:"]
    optional = dict(zip([n for n, _ in w.inputs][len(w.inputs) - len(w.input_defaults):], w.input_defaults))
    for name, d in w.inputs:
        left_out = f" Optional: left out, it is `{d.write(optional[name], True)}`." if name in optional else ""
        out.append(f"- `{name}`: {d.describe()}.{left_out}")
    if optional:
        out.append("An input may leave out the optional values at its end.")
    if w.predicates:
        cost = "uses a turn" if w.rejection_costs else "costs no turn"
        out += ["", f"Constraints (an input that breaks one is rejected with the reason, and {cost}):"]
        out += [f"- {reason}" for _, reason in w.predicates]
    samples = [list(v) for v in w.input_samples] or w.sample_inputs(random.Random(f"manual:{w.name}"), 1)
    if samples:
        shape = "separated by commas, " if len(w.inputs) > 1 else ""
        shown = " or ".join(f"`{w.format(v)}`" for v in samples[:3])
        out += ["", f"Write one input per turn, {shape}like: {shown}"]
    if worked:
        out += ["", "## Worked examples", ""]
        for case, output in worked:
            sent = ", then ".join(f"`{w.format(v)}`" for v in case.given + (case.values,))
            lead = f"{case.question}: " if case.question else ""
            where = "in a fresh session the box is sent" if case.given or w.stateful else "for the input"
            what = "output" if case.extract is None else "answer"
            out.append(f"- {lead}{where} {sent}, the {what} is `{output}`.")
    if w.has_goal and w.answer_domain is not None:
        out += ["", f"The target is answered as {w.answer_domain.describe()}."]
    ops = [d for d in spec.base if d.kind == "op"]
    if ops:
        out += ["", "## What the documentation says", ""]
        for d in ops:
            out.append(f"- `{d.name}({', '.join(p.name for p in d.params)})`: {interpolate(d.doc, params)}")
    b = w.budget
    if w.has_goal:
        tests = "the hidden target" if len(w.targets) == 1 else "each puzzle's target (each puzzle is explored " \
                                                               f"with its own {b.turns} turns)"
    elif w.program_answer:
        tests = f"a program that computes the box's output, run on {len(w.tests)} unseen input(s)"
    else:
        tests = f"{len(w.tests)} unseen input(s)"
    out += ["", "## Interaction", "",
            f"You have {b.turns} exploration turns: in each, send one input and read the box's output. "
            f"Then you are asked for {tests}, with {b.shots} attempt(s) each; after a wrong attempt you are "
            "told it is incorrect."]
    if w.grading.describe():
        out.append(w.grading.describe())
    return "\n".join(out).rstrip() + "\n"
