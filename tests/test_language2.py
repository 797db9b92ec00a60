"""The spec language, second edition (issue 11): control-flow hooks, state and mutation, the
program surface, layered rules with prior(), recursive and lazy meta-language definitions,
diagnostics, and comments in programs.

Each feature is a rule of a world under tests/worlds/lang/ that `worldspec check` certifies, and
a probe here shows what it does.
"""
from __future__ import annotations

import os
import random

import pytest

from worldspec.compiler import load_world

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANG = os.path.join(ROOT, "tests", "worlds", "lang")
BUNDLED_PROGRAM_WORLDS = ("aliencode", "demo")


# ---------------------------------------------------------------- comments (issue 12)


def with_comments(program: str, rng: random.Random) -> str:
    """The program with comment lines, blank lines and end-of-line comments added at random."""
    out = []
    for line in program.splitlines():
        for _ in range(rng.randint(0, 2)):
            out.append(rng.choice(["", "   ", " " * rng.randint(0, 12) + "# a note", "#", "\t# tab"]))
        tail = rng.choice(["", "", "  # why", "\t#x"]) if line.strip() and not line.rstrip().endswith("\\") else ""
        out.append(line + tail)
    out.append(rng.choice(["", "# the end", "    # indented end"]))
    return "\n".join(out)


@pytest.mark.parametrize("name", BUNDLED_PROGRAM_WORLDS)
def test_comment_and_blank_lines_never_change_a_verdict(name):
    world = load_world(os.path.join(ROOT, "worlds", f"{name}.world"))
    true, base = world.true_world(), world.base_world()
    rng = random.Random(f"comments:{name}")
    checked = 0
    for t in true.tasks:
        if t.shape == "predict":
            continue
        for w, answer in ((true, t.solution), (base, t.naive)):
            if not answer:
                continue
            want = w.verify(t, answer)
            for _ in range(2):
                commented = with_comments(answer, rng)
                got = w.verify(t, commented)
                assert got.passed == want.passed and got.detail == want.detail, (t.id, commented, got)
            checked += 1
    assert checked >= 10


def test_a_commented_answer_scores_like_the_plain_one(demo):
    program = "SET x AS 1\n# a comment after a statement\n\nUPON x:\n    EMIT(x)\n    # inside the block\n# after it\n"
    assert demo.probe(program).text == str(1 + dict(demo.params)["K"])
