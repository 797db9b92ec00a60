"""The blackbox kind: inputs read without eval, predicates, grading, flawed manuals, diagnostics."""
from __future__ import annotations

import os

import pytest

from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.api import InputError
from worldspec.compiler.blackbox.domains import parse_literals
from worldspec.diagnostics import SpecError
from worldspec.parser import parse_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(ROOT, "worlds", "oracle-extra")

RUNNING_MAX = """
world "box" version 1
kind blackbox
seed 1
family CII
difficulty easy
domain xs, list(int(-9, 9), 1, 8)
predicate len(xs) <= 6, "at most 6 elements"
hidden fold(fn(acc, x) => append(acc, if len(acc) == 0 then x else max(get(acc, len(acc) - 1), x)), [], xs)
test [3, 1, 4]
test [-2, 5, 1, 7]
budget { turns 4 shots 2 }
"""


def box(text=RUNNING_MAX, file="box.world"):
    return compile_spec(parse_spec(text, file))


def test_probe_runs_f_and_rejections_cost_nothing():
    w = box()
    fb = w.probe("[3, 1, 4, 1]")
    assert (fb.text, fb.units, fb.status) == ("[3, 3, 4, 4]", 1, "ok")
    for text, why in [("[1, 2, 3, 4, 5, 6, 7]", "at most 6 elements"), ("[10]", "outside -9..9"),
                      ("[]", "expected 1 to 8 elements"), ("3", "expected a list"), ("[1,", "cannot read"),
                      ("xs", "only literal values"), ("[len([1])]", "only literal values"),
                      ("__import__('os')", "cannot read")]:
        fb = w.probe(text)
        assert fb.status == "rejected" and fb.units == 0 and why in fb.text, (text, fb.text)


def test_inputs_are_literals_only_never_code():
    assert parse_literals('1, -2.5, "a\\"b", [true, none], {"k": [1]}') == [1, -2.5, 'a"b', [True, None], {"k": [1]}]
    for text in ("fn(x) => x", "1 + 2", "open", "[x for x in y]", "a.b", "((((1))))"[:3]):
        with pytest.raises(InputError):
            parse_literals(text)


def test_answers_are_graded_exactly_or_within_the_tolerance():
    w = box()
    t1 = w.tasks[0]
    assert t1.prompt.startswith("What does the box output for the input [3, 1, 4]?")
    assert w.verify(t1, "[3, 3, 4]").passed and w.verify(t1, " [3,3,4] ").passed
    assert not w.verify(t1, "[3, 3]").passed and not w.verify(t1, "").passed
    psi = load_world(os.path.join(ORACLE, "psi-e01-falling-ball.world"))
    want = psi.tests[0].expected  # 0.5 * 11.6 * 2.0 ** 2
    assert want == pytest.approx(23.2)
    assert psi.verify("t1", "23.3").passed and psi.verify("t1", "23.2").passed
    assert not psi.verify("t1", "24").passed and not psi.verify("t1", "19.62").passed  # Earth's g fails


def test_strings_and_bits_are_typed_bare_and_graded_bare_or_quoted():
    eri = load_world(os.path.join(ORACLE, "eri-e03-backwards.world"))
    assert eri.probe("hello world").text == "dlrow olleh"
    assert eri.probe('"hello"').text == "olleh"
    t = eri.task("t2")
    assert eri.verify(t, "dlrow olleh").passed and eri.verify(t, '"dlrow olleh"').passed
    cri = load_world(os.path.join(ORACLE, "cri-e02-bit-reversal.world"))
    assert cri.probe("10000000").text == "00000001"
    assert cri.probe("1000000").status == "rejected"
    assert cri.verify("t1", "00000001").passed


def test_a_goal_box_asks_for_the_target():
    w = load_world(os.path.join(ORACLE, "ipi-h01-colour-code.world"))
    assert [t.id for t in w.tasks] == ["goal"] and "hidden code" in w.tasks[0].prompt
    assert w.probe("3516").text == "4 black, 0 white"
    assert w.probe("1111").text == "1 black, 0 white"
    assert w.verify("goal", "3516").passed and not w.verify("goal", "1111").passed
    assert w.certify()["solver_turns"] <= w.budget.turns


def test_a_flawed_manual_documents_the_base_and_the_rule_is_required():
    w = load_world(os.path.join(ORACLE, "eri-h02-growing-shift.world"))
    assert "moves three places forward" in w.manual
    assert [r.id for r in w.rules] == ["R1"]
    report = w.certify()
    assert report["rule_table"][0]["observable"] and report["rule_table"][0]["tasks"]
    t = w.tasks[0]
    assert t.naive and not w.verify(t, t.naive).passed  # the manual's answer is wrong


def test_a_hard_box_must_refute_the_simple_hypotheses():
    weak = RUNNING_MAX.replace("difficulty easy", "difficulty hard").replace(
        "hidden fold(fn(acc, x) => append(acc, if len(acc) == 0 then x else max(get(acc, len(acc) - 1), x)), [], xs)",
        "hidden sort(xs)")
    report = box(weak).certify()
    assert any("'sorted'" in p for p in report["problems"])
    declared = RUNNING_MAX.replace("test [3, 1, 4]", 'hypothesis sort(xs), "oops"\ntest [1, 2, 3]') \
        .replace("test [-2, 5, 1, 7]", "test [4, 5]")
    report = box(declared).certify()
    assert any("'oops'" in p for p in report["problems"])


def test_predicates_that_admit_nothing_and_tests_outside_the_domain_are_problems():
    never = RUNNING_MAX.replace('predicate len(xs) <= 6, "at most 6 elements"', 'predicate len(xs) > 99, "never"')
    problems = box(never).certify()["problems"]
    assert any("admits too little" in p for p in problems)
    assert any("test t1" in p and "not admitted" in p for p in problems)


@pytest.mark.parametrize("change, message", [
    (("family CII", "familly CII"), "unknown item 'familly'"),
    (("difficulty easy", "difficulty medium"), "unknown difficulty"),
    (("list(int(-9, 9), 1, 8)", "lst(int(-9, 9), 1, 8)"), "unknown input domain 'lst'"),
    (("test [3, 1, 4]", "test [3, 1, 4], 2"), "1 input(s)"),
    (("list(int(-9, 9), 1, 8)", 'pycheckpoint(int(0, 9), int(1, 9), "loose", "or")'), "MATCH is one of"),
    (("list(int(-9, 9), 1, 8)", 'pyassign({"a": int(0, 9)}, "maybe")'), "MODE is one of"),
    (("test [3, 1, 4]", "test [3, 1, 4]\ngoal 3"), "tested on its target"),
    (("hidden fold", "hidden foldd"), "unknown name 'foldd'"),
    (("test [-2, 5, 1, 7]", "test [-2, 5, 1, 7]\ntest [\"a\", 1]"), "fails on this test"),
])
def test_spec_mistakes_are_located_diagnostics(change, message):
    with pytest.raises(SpecError) as e:
        box(RUNNING_MAX.replace(*change))
    assert message in e.value.render()
    assert e.value.span.file == "box.world" and e.value.span.line > 0


def test_budget_turns_and_shots_come_from_the_spec():
    w = box()
    assert (w.budget.turns, w.budget.shots) == (4, 2)
    assert "4 exploration turns" in w.manual and "2 attempt(s)" in w.manual
    with pytest.raises(SpecError, match="unknown budget entry 'rounds'"):
        box(RUNNING_MAX.replace("turns 4", "rounds 4"))


def test_the_probe_generator_yields_admitted_inputs():
    w = box()
    gen = w.probe_generator(3)
    probes = [next(gen) for _ in range(30)]
    assert all(w.probe(p).status == "ok" for p in probes)
    assert probes == [next(g) for g in [w.probe_generator(3)] for _ in range(30)]
