"""`worldspec check --learnability` on every kind with an explorer (runner/learnability.py): the figure is
what `worldspec run WORLD --agent explorer` scores, measured on real worlds."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler.build import load_world
from worldspec.runner.learnability import learnability

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "worlds", "demo.world")
GAME = os.path.join(ROOT, "worlds", "oracle", "game", "gsi-e-rps7-beat-last.world")
LOOPS = os.path.join(ROOT, "tests", "worlds", "lang3", "loops.world")


@pytest.fixture(scope="module")
def demo_learnability():
    """The demo world's learnability, measured once for this file (each measurement plays a whole budget)."""
    return learnability(load_world(DEMO))


def run_records(tmp_path, world: str, *args) -> list[dict]:
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", world, "--agent", "explorer", "-n", "1", "--no-cache", "--out", str(out),
                                  *args])
    assert r.exit_code == 0, r.output
    return [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]


def test_a_program_worlds_learnability_is_what_the_run_scores_at_its_last_milestone(tmp_path, demo_learnability):
    found = demo_learnability
    last = run_records(tmp_path, DEMO)[0]["milestones"][-1]
    assert found.accuracy == pytest.approx(last["accuracy"])
    assert (found.rules_correct, found.rules_total) == (last["rules_correct"], last["rules_total"])
    assert found.turns == last["calls"] == load_world(DEMO).budget.max_calls


def test_a_game_boxs_learnability_is_what_a_lenient_run_scores(tmp_path):
    found = learnability(load_world(GAME))
    record = run_records(tmp_path, GAME, "--grading", "lenient")[0]
    assert found.accuracy == pytest.approx(record["endpoint"]) and found.accuracy > 50.0
    assert (found.turns, found.shots) == (record["turns"], record["shots"])
    assert "of the test games' optimum within 10@1" in found.line()


def test_a_missed_rule_says_why():
    world = load_world(LOOPS)
    a = learnability(world, seed=0)
    assert a.rules_total == len([r for r in world.rules if not r.herring]) == 6
    # loop-else, break in two loops, closures, positions and truthiness: all five stated (0 of 5 and 0% of the
    # tasks before the explorer wrote list literals and probed the control hooks); the map rule D1 (on
    # set_index) is outside the families, and the line says so
    assert a.rules_correct == 5 and a.accuracy > 0.0
    assert list(a.missed) == ["D1"] and a.missed["D1"].startswith("outside its families")
    pylike = learnability(load_world(os.path.join(ROOT, "tests", "worlds", "lang3", "pylike.world")))
    assert len(pylike.missed) == pylike.rules_total - pylike.rules_correct > 0
    assert all(why.startswith(("outside its families", "budget spent", "its surviving")) for why in pylike.missed.values())
    assert "missed " in pylike.line()


def test_check_prints_the_program_line_and_its_json(demo_learnability):
    # each `check` measures afresh: the same seed gives the same figure (determinism across processes)
    plain = CliRunner().invoke(main, ["check", DEMO, "--learnability"])
    assert plain.exit_code == 0, plain.output
    assert "learnability: the explorer (information gain) answers" in plain.output
    assert demo_learnability.line() in plain.output
    asked = CliRunner().invoke(main, ["check", DEMO, "--learnability", "--json"])
    got = json.loads(asked.output)["learnability"]
    assert got["kind"] == "program" and got["accuracy"] == demo_learnability.accuracy
    assert got["rules_total"] == 5 and got["line"].startswith("learnability: the explorer")


def test_a_kind_without_an_explorer_is_not_measured():
    judge = os.path.join(ROOT, "worlds", "interactive", "math", "m01-exactly-one-divisor.world")
    r = CliRunner().invoke(main, ["check", judge, "--learnability"])
    assert "learnability: not measured (no explorer for judge)" in r.output, r.output
    # proof worlds are measured since issue 26: tests/test_proof_explorer.py


def test_a_rule_in_the_space_that_no_probe_pinned_is_budget_spent_not_outside_the_families(demo):
    """Before any probe every hypothesis survives, so a rule the families can state is 'budget spent'
    (`why_missed` read each hypothesis's equation through a call of the property, and every rule was
    'outside its families')."""
    from worldspec.compiler.api import explorer_of
    from worldspec.runner.learnability import why_missed
    session = explorer_of(demo, 0)
    whys = {r.id: why_missed(demo, session, r) for r in demo.rules if not r.herring}
    assert any(why.startswith("budget spent") for why in whys.values()), whys
