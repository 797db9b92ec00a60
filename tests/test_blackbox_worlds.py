"""The Oracle benchmark's 96 boxes: all certified, counted per family and difficulty; box worlds are full Worlds."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import World, compile_spec, load_world
from worldspec.compiler.api import FACES, PROTOCOLS, MilestoneFace
from worldspec.parser import parse_spec
from worldspec.compiler.suite import cross_family_problems, world_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(ROOT, "worlds", "oracle-extra")
FAMILIES = ("CII", "CRI", "PSI", "ERI", "IPI", "GSI")
# a black box with a flawed manual (a rule), a Game Strategy Inference box, and a pool game
WORLDS = {"box": os.path.join(ORACLE, "eri-h02-growing-shift.world"),
          "gsi": os.path.join(ORACLE, "gsi-h01-the-patient-one.world"),
          "pool": os.path.join(ROOT, "worlds", "interactive", "trust.world")}


@pytest.fixture(scope="module")
def suite():
    """`worldspec check ORACLE --json` (certify_folder in a worker), run once for the tests below."""
    r = CliRunner().invoke(main, ["check", ORACLE, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_every_box_is_certified(suite):
    assert suite["problems"] == []
    assert suite["worlds"] == suite["certified"] == 96


def test_counts_per_family_and_difficulty(suite):
    c = suite["counts"]
    assert c["difficulty"] == {"easy": 51, "hard": 45}
    assert c["family"] == {f: 16 for f in FAMILIES}
    assert c["kind"] == {"blackbox": 80, "game": 16}


def test_worldspec_check_on_the_folder_reports_the_counts(suite):
    report = suite
    assert report["certified"] == report["worlds"] == 96 and not report["problems"]
    assert report["counts"]["family_difficulty"]["IPI/hard"] == 8
    assert report["counts"]["difficulty"] == {"easy": 51, "hard": 45}


def test_tests_are_computed_and_every_task_has_its_reference_answer():
    for path in world_files(ORACLE):
        w = load_world(path)
        assert w.tasks, path
        for t in w.tasks:
            v = w.verify(t, t.solution)
            assert v.passed and v.score == 1.0, (path, t.id, t.solution)


def test_a_seed_variant_redraws_the_hidden_parameters():
    path = os.path.join(ORACLE, "eri-e01-shifted-alphabet.world")
    a, b = load_world(path), load_world(path, seed=99)
    assert dict(a.params)["K"] != dict(b.params)["K"]
    assert a.tasks[0].solution != b.tasks[0].solution
    assert b.certify()["problems"] == []


@pytest.mark.parametrize("which", sorted(WORLDS))
def test_box_and_game_worlds_implement_every_member_of_the_world_protocol(which):
    w = load_world(WORLDS[which])
    assert isinstance(w, World)
    assert w.protocol == ("pool" if which == "pool" else "turn@shot") and w.protocol in PROTOCOLS
    schema = w.tool.schema()["function"]
    assert schema["name"] == w.tool.name and schema["parameters"]["required"] == [w.tool.parameter]
    assert w.open_book.strip()
    # a box offers the turn@shot face (a game the pool face too), not the milestone one: no rule report
    assert isinstance(w, FACES[w.protocol]) and not isinstance(w, MilestoneFace)
    assert not hasattr(w, "report_instructions") and not hasattr(w, "grade_equation")
    # probes: what the generator offers is accepted and costs one turn; a rejected input costs none
    gen = w.probe_generator(1)
    for text in [next(gen) for _ in range(5)]:
        fb = w.probe(text)
        assert fb.status == "ok" and fb.units == w.charge(text) == 1, (text, fb)
    rejected = ["§"] + ([" ".join(w.game.row_moves[:1] * (w.probe_rounds + 1))] if w.kind == "game" else [])
    for text in rejected:
        fb = w.probe(text)
        assert fb.status == "rejected" and fb.units == w.charge(text) == 0, (text, fb)
    # rules and herrings by id; a box's rules are graded through its tests (it grades no equations)
    assert [r.id for r in w.rules] == (["R1"] if which == "box" else [])
    for r in w.rules + w.herrings:
        assert w.rule(r.id) is r
    with pytest.raises(KeyError):
        w.rule("R99")
    # tasks: found by id, the reference answer passes, no answer fails, required rules are the world's
    for t in w.tasks:
        assert w.task(t.id) is t
        assert w.verify(t, t.solution).passed and not w.verify(t, "").passed
        # a black box knows which of its rules a test needs (certification reports it); a game has no rules
        assert w.kind == "game" or w.requires(t) <= {r.id for r in w.rules}
    if which == "box":
        assert any(w.requires(t) == {"R1"} for t in w.tasks)
    if which == "pool":
        assert not w.tasks
        with pytest.raises(KeyError):
            w.task("g1")
    assert w.certify()["problems"] == []


def twin(path, difficulty):
    """A copy of a shipped box under another name and difficulty (same hidden f, target or opponent)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = text.replace('world "', 'world "twin of ', 1)
    for d in ("easy", "hard"):
        text = text.replace(f"\ndifficulty {d}\n", f"\ndifficulty {difficulty}\n")
    return compile_spec(parse_spec(text, "twin.world"))


@pytest.mark.parametrize("name, difficulty, message", [
    ("cii-e01-running-maximum.world", "hard", "answers every test of this hard box"),
    ("ipi-h01-colour-code.world", "easy", "hides the same target as the easy box"),
    ("gsi-h01-the-patient-one.world", "easy", "best reply to the easy box 'twin of GSI-H01"),
])
def test_each_kind_checks_its_hard_boxes_against_the_easy_ones_of_the_family(name, difficulty, message):
    shipped = load_world(os.path.join(ORACLE, name))
    pair = [shipped, twin(os.path.join(ORACLE, name), difficulty)]
    problems = cross_family_problems(pair)
    assert len(problems) == 1 and message in problems[0], problems
    # a different family, or two boxes of the same difficulty, are not compared
    assert cross_family_problems([shipped, twin(os.path.join(ORACLE, name), shipped.difficulty)]) == []
    other = load_world(os.path.join(ORACLE, "cri-e02-bit-reversal.world"))
    assert cross_family_problems([shipped, other]) == []
