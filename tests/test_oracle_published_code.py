"""The published Oracle benchmark's CODE boxes re-expressed as worlds (docs/oracle-published-code.md)."""

import json
from pathlib import Path

import pytest
from conftest import run_boxes_at_20_at_2
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import load_world

ROOT = Path(__file__).resolve().parent.parent
CODE = ROOT / "worlds" / "oracle" / "code"

EASY = ["algebraic-operations", "bubble-sort", "exgcd", "highprecision-add", "most-frequent-char",
        "factorial-recursion", "fib-recursion", "quicksort-recursion"]
HARD = ["complex-algebraic-operations", "sieve-of-eratosthenes"]
BOXES = [f"cii-e-{b}" for b in EASY] + [f"cii-h-{b}" for b in HARD]

# (assignment, checkpoint query, the published box's answer to the query after the assignment), from the
# published code run in a scratch folder, its printed variables written as our box writes a map.
PINS = {
    "cii-e-algebraic-operations": [
        ('a = 7; b = -3; c = 2', '(3, 1)', '{"a": 7, "b": -3, "c": 2, "d": 6, "e": -23, "f": -13.5}'),
        ('a = 0; b = 0; c = 5', '(2, 1)', '{"a": 0, "b": 0, "c": 5, "d": 5, "e": -5}'),
    ],
    "cii-h-complex-algebraic-operations": [
        ('a = 2; b = 3; c = 4; d = 5', '(4, 1)', '{"a": 2, "b": 3, "c": 4, "d": 5, "e": 36, "f": 641}'),
        ('a = -6; b = 1; c = 0; d = 9', '(5, 1)', '{"a": -6, "b": 1, "c": 0, "d": 9, "e": 4, "f": 6, "g": 12}'),
    ],
    "cii-e-exgcd": [
        ('a = 30; b = 12', '(2, 2)', '{"a": 6, "b": 0, "x1": 1, "x2": -2, "y1": -2, "y2": 5, "q": 2, "r": 0, "x": 1, "y": -2}'),
        ('a = 7; b = 5', '(3, 1)', '{"a": 1, "b": 0, "x1": -2, "x2": 5, "y1": 3, "y2": -7, "q": 2, "r": 0, "x": -2, "y": 3}'),
    ],
    "cii-e-highprecision-add": [
        ('a = 958; b = 77', '(2, 2)', '{"a": 958, "b": 77, "s1": "958", "s2": "077", "r": "35", "c": 1, "i": 1, "t": 13}'),
        ('a = 999; b = 1', '(3, 1)', '{"a": 999, "b": 1, "s1": "999", "s2": "001", "r": "1000", "c": 1, "i": 0, "t": 10, "n": 1000}'),
    ],
    "cii-e-bubble-sort": [
        ('arr = [5, 2, 9, 1]', '(2, 3)', '{"arr": [2, 5, 1, 9], "n": 4, "i": 0, "j": 2}'),
        ('arr = [3, -1, 2]', '(3, 1)', '{"arr": [-1, 2, 3], "n": 3, "i": 2, "j": 0}'),
    ],
    "cii-e-most-frequent-char": [
        ("s = 'banana'", '(2, 4)', '{"s": "banana", "c": ["b", "a", "n"], "f": [1, 2, 1], "i": 3, "j": 1}'),
        ("s = 'abca'", '(3, 1)', '{"s": "abca", "c": ["a", "b", "c"], "f": [2, 1, 1], "i": 2, "j": 0, "m": 2, "r": "a"}'),
    ],
    "cii-e-factorial-recursion": [
        ('n = 5', '(3, 2)', '{"n": 3, "result": 6}'),
        ('n = 1', '(2, 1)', '{"n": 1, "result": 1}'),
    ],
    "cii-e-fib-recursion": [
        ('n = 5', '(2, 2)', '{"n": 4, "a": 2}'),
        ('n = 6', '(3, 4)', '{"n": 5, "a": 3, "b": 2, "result": 5}'),
    ],
    "cii-e-quicksort-recursion": [
        ('arr = [3, 8, 1, 5]', '(2, 1)', '{"arr": [3, 8, 1, 5], "p": 5, "l": [3, 1], "r": [8], "i": 2}'),
        ('arr = [3, 8, 1, 5]', '(3, 2)', '{"arr": [3, 8, 1, 5], "p": 5, "l": [3, 1], "r": [8], "i": 2, "s": [1, 3, 5, 8]}'),
    ],
    "cii-h-sieve-of-eratosthenes": [
        ('n = 20', '(1, 2)', '{"n": 20, "a": [false, false, true, true, false, true, false, true, false, false, false, true, false, true, false, false, false, true, false, true, false], "p": 3, "i": 18}'),
        ('n = 30', '(3, 12)', '{"n": 30, "a": [false, false, true, true, false, true, false, true, false, false, false, true, false, true, false, false, false, true, false, true, false, false, false, true, false, false, false, false, false, true, false], "p": 6, "i": 13, "s": [2, 3, 5, 7, 11, 13]}'),
    ],
}


def test_the_ported_boxes_are_these():
    assert sorted(p.stem for p in CODE.glob("cii-*.world")) == sorted(BOXES)
    assert sorted(PINS) == sorted(BOXES)


def test_the_boxes_share_one_debugger_that_is_not_a_world_of_its_own():
    assert sorted(p.name for p in CODE.glob("*.world") if not p.name.startswith("cii-")) == ["_debugger.world"]
    for box in BOXES:
        text = (CODE / f"{box}.world").read_text()
        assert 'include "_debugger.world"' in text and "def rec(" not in text, box
    r = CliRunner().invoke(main, ["list", str(CODE)])
    assert r.exit_code == 0 and "_debugger" not in r.output and r.output.count("(blackbox)") == len(BOXES)


def test_the_folder_certifies():
    r = CliRunner().invoke(main, ["check", str(CODE), "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["certified"] == report["worlds"] == len(BOXES) and not report["problems"]
    assert report["counts"]["family_difficulty"] == {"CII/easy": len(EASY), "CII/hard": len(HARD)}


@pytest.mark.parametrize("box", BOXES)
def test_each_box_certifies_without_warnings(box):
    r = CliRunner().invoke(main, ["check", str(CODE / f"{box}.world")])
    assert r.exit_code == 0 and "certified: no problems" in r.output, r.output
    assert "warning" not in r.output


@pytest.mark.parametrize("box", BOXES)
def test_published_behaviour_is_pinned(box):
    world = load_world(CODE / f"{box}.world")
    assert world.protocol == "turn@shot"
    for assignment, query, want in PINS[box]:
        s = world.session()
        assert s.probe(assignment).status == "ok"
        fb = s.probe(query)
        assert (fb.status, fb.text) == ("ok", want), query


def test_a_checkpoint_before_any_assignment_is_refused_and_costs_a_turn():
    fb = load_world(CODE / "cii-e-exgcd.world").session().probe("(1, 1)")
    assert (fb.status, fb.units) == ("rejected", 1)


def test_visits_that_do_not_happen_are_reported_as_the_published_box_reports_them():
    s = load_world(CODE / "cii-e-exgcd.world").session()
    s.probe("a = 30; b = 12")
    assert s.probe("(2, 5)").text == "Query iteration 5 exceeds maximum possible visits 2 for checkpoint 2"
    assert s.probe("(7, 1)").text == "Checkpoint 7 does not exist or cannot be queried at current state"


def test_bubble_sort_keeps_the_list_it_sorted_in_place_as_published():
    s = load_world(CODE / "cii-e-bubble-sort.world").session()
    s.probe("arr = [5, 2, 9, 1]")
    assert s.probe("(1, 1)").text == '{"arr": [5, 2, 9, 1], "n": 4}'
    assert s.probe("(1, 1)").text == '{"arr": [1, 2, 5, 9], "n": 4}'  # the first run sorted the stored list


@pytest.mark.parametrize("box, assignment", [("cii-e-factorial-recursion", "n = 1"), ("cii-e-fib-recursion", "n = 2"),
                                             ("cii-e-quicksort-recursion", "arr = [4]")])
def test_a_recursion_that_returns_at_once_leaves_a_missing_visit_unanswered_as_published(box, assignment):
    s = load_world(CODE / f"{box}.world").session()
    s.probe(assignment)
    assert (s.probe("(3, 1)").status, s.probe("(3, 1)").text) == ("ok", "")


def test_recursion_counts_visits_across_the_calls_and_only_the_outermost_call_reports():
    s = load_world(CODE / "cii-e-factorial-recursion.world").session()
    s.probe("n = 4")
    assert s.probe("(3, 3)").text == '{"n": 4, "result": 24}'
    assert s.probe("(3, 4)").text == "Query iteration 4 exceeds maximum possible visits 3 for checkpoint 3"


def test_partial_assignments_keep_the_other_inputs():
    s = load_world(CODE / "cii-e-algebraic-operations.world").session()
    s.probe("a = 1; b = 2; c = 3")
    assert s.probe("b = 10;").text == 'Set {"a": 1, "b": 10, "c": 3}.'
    assert s.probe("(1, 1)").text == '{"a": 1, "b": 10, "c": 3, "d": 14}'


def test_oracle_scores_every_box_fully_at_20_at_2(tmp_path, monkeypatch):
    summary = run_boxes_at_20_at_2(CODE, tmp_path, monkeypatch)
    oracle = [x for x in summary["results"] if x["system"] == "oracle"]
    assert len(oracle) == len(BOXES) and all(x["best"] == 100.0 for x in oracle)
    assert summary["accuracy"]["oracle"]["cells"] == {"CII/easy": {"accuracy": 100.0, "boxes": len(EASY)},
                                                      "CII/hard": {"accuracy": 100.0, "boxes": len(HARD)}}
