"""The published Oracle benchmark's CODE boxes re-expressed as worlds (docs/oracle-published-code.md)."""

from pathlib import Path

import pytest
from conftest import box_world, certified_folder, checked, memorise_boxes, run_boxes_at_20_at_2
from click.testing import CliRunner

from worldspec.cli import main

ROOT = Path(__file__).resolve().parent.parent
CODE = ROOT / "worlds" / "oracle" / "code"

EASY = ["algebraic-operations", "bubble-sort", "exgcd", "highprecision-add", "most-frequent-char",
        "factorial-recursion", "fib-recursion", "quicksort-recursion", "coins-for-fowls", "highprecision-divide", "kmp"]
HARD = ["complex-algebraic-operations", "sieve-of-eratosthenes", "mergesort-recursion", "heap-sort", "manacher",
        "arithmetic-slices"]
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
    "cii-e-coins-for-fowls": [
        ('m = 40; n = 20', '(2, 5)', '{"m": 40, "n": 20, "a": 0, "b": 0, "c": 0, "f": false, "x": 0, "y": 4, "z": 16, "t": 28}'),
        ('m = 31; n = 10', '(3, 2)', '{"m": 31, "n": 10, "a": 0, "b": 0, "c": 0, "f": false, "x": 1, "y": 10, "z": -1, "t": 32}'),
        ('m = 100; n = 100', '(2, 2)', 'Query iteration 2 exceeds maximum possible visits 1 for checkpoint 2'),
    ],
    "cii-e-highprecision-divide": [
        ('a = 22; b = 7', '(3, 1)', '{"a": 22, "b": 7, "neg": false, "q": 3, "r": 4, "d": [1, 4, 2, 9], "i": 3, "j": 0}'),
        ('a = -1; b = 8', '(2, 1)', '{"a": 1, "b": 8, "neg": true, "q": 0, "r": 0, "d": [1, 2, 5, 0], "i": 3}'),
    ],
    "cii-e-kmp": [
        ('t1 = "abababc"; t2 = "abab"', '(2, 3)', '{"t1": "abababc", "t2": "abab", "m": 4, "n": 7, "lps": [0, 0, 1, 2], "j": 2, "i": 3}'),
        ('t1 = "abababc"; t2 = "abab"', '(4, 5)', '{"t1": "abababc", "t2": "abab", "m": 4, "n": 7, "lps": [0, 0, 1, 2], "j": 3, "i": 5, "res": [0]}'),
    ],
    "cii-h-mergesort-recursion": [
        ('arr = [4, 1, 3]', '(5, 1)', '{"arr": [4, 1, 3], "m": 1, "l": [4], "r": [1, 3], "i": 0, "j": 1, "k": 0, "t": [1, 0, 0]}'),
        ('arr = [4, 1, 3]', '(8, 2)', '{"arr": [1, 3, 4], "m": 1, "l": [4], "r": [1, 3], "i": 2, "j": 2, "k": 3, "t": [1, 3, 4]}'),
    ],
    "cii-h-heap-sort": [
        ('arr = [3, 9, 4, 7]', '(1, 1)', '{"arr": [9, 3, 4, 7], "n": 4, "i": 0, "j": 1, "ll": 1, "l": 1, "r": 2}'),
        ('arr = [3, 9, 4, 7]', '(5, 2)', '{"arr": [4, 3, 7, 9], "n": 4, "i": 2, "j": 0, "ll": 0, "l": 1, "r": 2}'),
    ],
    "cii-h-manacher": [
        ('s = "abaaba"', '(2, 3)', '{"s": "abaaba", "a": "#a#b#a#a#b#a#", "t": [0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0], "num": 1, "r": 2, "i": 3}'),
        ('s = "abaaba"', '(4, 13)', '{"s": "abaaba", "a": "#a#b#a#a#b#a#", "t": [0, 1, 0, 3, 0, 1, 6, 1, 0, 3, 0, 1, 0], "num": 6, "r": 12, "i": 12, "ll": 6, "center": 6}'),
    ],
    "cii-h-arithmetic-slices": [
        ('num = [2, 4, 6, 8]', '(3, 4)', '{"num": [2, 4, 6, 8], "n": 4, "d": [{}, {2: 1}, {4: 1, 2: 2}, {6: 1}], "t": 1, "i": 3, "j": 0, "df": 6, "c": 0}'),
        ('num = [1, 1, 2]', '(5, 1)', '{"num": [1, 1, 2], "n": 3, "d": [{}, {0: 1}, {1: 2}], "t": 0, "i": 2, "j": 1, "df": 1, "c": 0}'),
        ('num = [1, 2]', '(1, 1)', 'Error: The input list must contain at least three elements.'),
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
    report = certified_folder(CODE, len(BOXES))
    assert report["counts"]["family_difficulty"] == {"CII/easy": len(EASY), "CII/hard": len(HARD)}


@pytest.mark.parametrize("box", BOXES)
def test_each_box_certifies_without_warnings(box):
    report = checked(CODE / f"{box}.world")  # `check BOX --json`, exit 0
    assert report["problems"] == [] and report["warnings"] == []
    assert not any("warning" in note for note in report["notes"])


@pytest.mark.parametrize("box", BOXES)
def test_published_behaviour_is_pinned(box):
    world = box_world(CODE / f"{box}.world")
    assert world.protocol == "turn@shot"
    for assignment, query, want in PINS[box]:
        s = world.session()
        assert s.probe(assignment).status == "ok"
        fb = s.probe(query)
        assert (fb.status, fb.text) == ("ok", want), query


def test_a_checkpoint_before_any_assignment_is_refused_and_costs_a_turn():
    fb = box_world(CODE / "cii-e-exgcd.world").session().probe("(1, 1)")
    assert (fb.status, fb.units) == ("rejected", 1)


def test_visits_that_do_not_happen_are_reported_as_the_published_box_reports_them():
    s = box_world(CODE / "cii-e-exgcd.world").session()
    s.probe("a = 30; b = 12")
    assert s.probe("(2, 5)").text == "Query iteration 5 exceeds maximum possible visits 2 for checkpoint 2"
    assert s.probe("(7, 1)").text == "Checkpoint 7 does not exist or cannot be queried at current state"


# (box, checkpoint query, the published answers to it sent twice after `arr = [5, 2, 9, 1]`): the first run
# sorted the stored list in place, so the second sees it sorted.
IN_PLACE = [
    ("cii-e-bubble-sort", "(1, 1)", '{"arr": [5, 2, 9, 1], "n": 4}', '{"arr": [1, 2, 5, 9], "n": 4}'),
    ("cii-h-heap-sort", "(3, 1)", '{"arr": [9, 2, 5, 1], "n": 4, "i": 0, "j": 2, "ll": 2, "l": 5, "r": 6}',
     '{"arr": [9, 2, 5, 1], "n": 4, "i": 0, "j": 3, "ll": 3, "l": 7, "r": 8}'),
    ("cii-h-mergesort-recursion", "(2, 1)", '{"arr": [5, 2, 9, 1], "m": 2}', '{"arr": [1, 2, 5, 9], "m": 2}'),
]


@pytest.mark.parametrize("box, query, first, second", IN_PLACE)
def test_the_sorts_keep_the_list_they_sorted_in_place_as_published(box, query, first, second):
    s = box_world(CODE / f"{box}.world").session()
    s.probe("arr = [5, 2, 9, 1]")
    assert s.probe(query).text == first
    assert s.probe(query).text == second


def test_a_zero_divisor_prints_the_error_then_the_visit_message_as_published():
    s = box_world(CODE / "cii-e-highprecision-divide.world").session()
    s.probe("a = 5; b = 0")
    assert s.probe("(2, 1)").text == ("Error: Division by zero\n"
                                      "Checkpoint 2 does not exist or cannot be queried at current state")


def test_partial_assignments_keep_the_other_inputs():
    s = box_world(CODE / "cii-e-algebraic-operations.world").session()
    s.probe("a = 1; b = 2; c = 3")
    assert s.probe("b = 10;").text == 'Set {"a": 1, "b": 10, "c": 3}.'
    assert s.probe("(1, 1)").text == '{"a": 1, "b": 10, "c": 3, "d": 14}'


def test_the_memoriser_plays_an_easy_and_a_hard_box_at_20_at_2(tmp_path, monkeypatch):
    played = memorise_boxes([CODE / "cii-e-factorial-recursion.world", CODE / "cii-h-heap-sort.world"], tmp_path, monkeypatch)
    assert sorted(played) == ["cii-e-factorial-recursion", "cii-h-heap-sort"]


def test_oracle_scores_every_box_fully_at_20_at_2(tmp_path, monkeypatch):
    summary = run_boxes_at_20_at_2(CODE, tmp_path, monkeypatch)
    oracle = [x for x in summary["results"] if x["system"] == "oracle"]
    assert len(oracle) == len(BOXES) and all(x["best"] == 100.0 for x in oracle)
    assert summary["accuracy"]["oracle"]["cells"] == {"CII/easy": {"accuracy": 100.0, "boxes": len(EASY)},
                                                      "CII/hard": {"accuracy": 100.0, "boxes": len(HARD)}}
