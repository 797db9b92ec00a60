"""Box worlds, third edition (issue 24): defs that call the world's ops, and rules stacked on one op."""
from __future__ import annotations

from pathlib import Path

import pytest

from worldspec.compiler import load_world
from worldspec.diagnostics import SpecError
from worldspec.meta import compiler_mode

LAB = str(Path(__file__).parent / "worlds" / "lang3" / "stacked-lab.world")
G = 11.6  # the lab's declared default


def simulate(n: int, gravity: float, drag: bool) -> float:
    """The lab's run, recomputed in Python: n steps of 0.1 s from rest, the distance fallen."""
    v = y = 0.0
    for _ in range(n):
        v, y = v + gravity * 0.1, y + v * 0.1
        if drag:
            v *= 0.98
    return round(y, 4)


@pytest.fixture(scope="module")
def lab():
    return load_world(LAB, cache=False)


@pytest.mark.parametrize("applied, gravity, drag", [
    ({"R1", "R2"}, G, True), ({"R1"}, G, False), ({"R2"}, 9.81, True), (set(), 9.81, False)])
def test_each_set_of_stacked_rules_is_its_layers(lab, applied, gravity, drag):
    """R2 is a layer over whatever is beneath it: over R1 in the true world, over the base line when R1 is
    knocked out; knocking out R2 leaves R1 alone."""
    unit = lab.variant_hidden(frozenset(applied))
    for n in (0, 1, 2, 10, 37, 60):
        assert lab.evaluate([n], unit) == pytest.approx(simulate(n, gravity, drag), abs=1e-9)


def test_the_tests_are_answered_by_the_true_world(lab):
    assert [t.expected for t in lab.tests] == [simulate(n, G, True) for n in (2, 10, 30, 60)]


def test_the_manual_answer_is_the_base_lines(lab):
    assert [float(t.naive) for t in lab.tasks] == [simulate(n, 9.81, False) for n in (2, 10, 30, 60)]


def test_both_meta_compilers_agree_on_the_lab():
    answers = {}
    for mode in ("closure", "ast"):
        with compiler_mode(mode):
            w = load_world(LAB, cache=False)
            answers[mode] = [[w.evaluate([n], w.variant_hidden(frozenset(s))) for n in range(0, 61, 7)]
                             for s in ({"R1", "R2"}, {"R2"}, set())]
    assert answers["closure"] == answers["ast"]


def test_the_lab_certifies():
    from click.testing import CliRunner

    from worldspec.cli import main
    r = CliRunner().invoke(main, ["check", "--no-cache", LAB])
    assert r.exit_code == 0, r.output
    assert "certified: no problems" in r.output and "ok  R2" in r.output
    assert "2 rules, 0 herrings, 4 tasks, 2 examples" in r.output


BOX = """world "B" version 1
kind blackbox
seed 1
summary "A box."
family CII
difficulty easy
domain x, int(0, 20)
base {
  op f(x: int) -> int = x + 1
     "One more than x."
}
"""


def compile_text(tmp_path, text: str):
    p = tmp_path / "b.world"
    p.write_text(text)
    return load_world(str(p), cache=False)


def test_a_rule_without_prior_hides_the_layers_beneath(tmp_path):
    w = compile_text(tmp_path, BOX + """rule R1 "doubled" {
  op f(x) = prior(x) * 2
  statement "Twice one more."
}
rule R2 "tripled" {
  op f(x) = x * 3
  statement "Three times x."
}
def g(x) = f(x) + 100
hidden g(x)
test 1
test 2
test 3
""")
    assert [t.expected for t in w.tests] == [103, 106, 109]
    assert w.evaluate([5], w.variant_hidden(frozenset({"R1"}))) == 112
    assert w.evaluate([5], w.variant_hidden(frozenset())) == 106


def test_a_rule_may_name_its_parameters_afresh(tmp_path):
    w = compile_text(tmp_path, BOX + """rule R1 "doubled" {
  op f(y) = prior(y) * 2
  statement "Twice one more."
}
test 4
test 5
""")
    assert [t.expected for t in w.tests] == [10, 12]


def located(tmp_path, text: str) -> str:
    with pytest.raises(SpecError) as info:
        compile_text(tmp_path, text)
    return info.value.render()


def test_an_op_reaching_itself_through_a_def_is_located(tmp_path):
    out = located(tmp_path, BOX.replace("= x + 1", "= g(x)") + "def g(x) = if x == 0 then 0 else f(x - 1)\n"
                  "test 1\ntest 2\n")
    assert "b.world:9:6: error: op f calls itself (directly or through a def)" in out
    assert "^" in out and "write the recursion in a def" in out


def test_precomputing_a_def_that_calls_an_op_is_located(tmp_path):
    out = located(tmp_path, BOX + "def T() = f(1)\nprecompute T\ntest 1\ntest 2\n")
    assert "b.world:13:12: error: precompute T: the def calls the world's ops" in out
    assert "Precompute a def that calls no op" in out


@pytest.mark.parametrize("where, line", [
    ("base", 9), ("def", 12)])
def test_prior_outside_a_rule_body_is_located(tmp_path, where, line):
    text = BOX.replace("= x + 1", "= prior(x)") if where == "base" else BOX + "def g(x) = prior(x)\n"
    out = located(tmp_path, text + "test 1\ntest 2\n")
    assert f"b.world:{line}:" in out and "prior(...) is only known in a rule body" in out


def test_a_def_calling_an_unknown_op_suggests_the_op(tmp_path):
    out = located(tmp_path, BOX + "def g(x) = ff(x)\nhidden g(x)\ntest 1\ntest 2\n")
    assert "b.world:12:12: error: unknown name 'ff'" in out and "f" in out.splitlines()[-1]


# ---------------------------------------------------------------- worked examples computed by the compiler


def test_the_lab_manual_shows_computed_examples(lab):
    assert f"- five steps: for the input `5`, the output is `{simulate(5, G, True)}`." in lab.manual
    assert "- one step from rest: for the input `1`, the output is `0.0`." in lab.manual


def test_an_example_after_queries_is_computed_in_its_own_session(tmp_path):
    w = compile_text(tmp_path, BOX.replace("= x + 1", "= x + get(state, \"n\")").replace(
        "op f(x: int)", "op f(x: int, state: map)") + """state {"n": 0}
next put(state, "n", get(state, "n") + x)
example E1 "a running total" { given 3  given 4  ask 5 }
test 1
test t2 "after 2" { given 2  ask 6 }
""")
    assert "- a running total: in a fresh session the box is sent `3`, then `4`, then `5`, the output is `12`." \
        in w.manual


@pytest.mark.parametrize("example, message", [
    ('example E1 "x" { program "EMIT(1)" }', "b.world:12:18: error: example E1: a box's worked example is an "
                                             "input, not a program"),
    ('example E1 "x" { ask 2 }', "b.world:12:9: error: example E1 sends the queries of test t2"),
    ('example E1 "x" { ask 99 }', "b.world:12:9: error: example E1 cannot be shown: its ask value 99 is not "
                                  "admitted"),
    ('example E1 "x" { giv 3 }', "b.world:12:18: error: unknown example field 'giv'"),
    ('example E1 "x" { given 3 }', "b.world:12:9: error: example E1 asks nothing"),
])
def test_misused_examples_are_located(tmp_path, example, message):
    out = located(tmp_path, BOX + example + "\ntest 1\ntest 2\n")
    assert message in out and "^" in out


# ---------------------------------------------------------------- optional query inputs


OPTIONAL = """world "Opt" version 1
kind blackbox
seed 1
summary "Distance fallen."
family PSI
difficulty easy
domain t, float(0, 10)
domain g, float(1, 30), default(9.81)
hidden round(0.5 * g * t * t, 3)
test 1.0
test 3.0, 3.7
test 4.0
"""


def test_a_query_may_leave_out_an_optional_input(tmp_path):
    from worldspec.compiler.api import InputError
    w = compile_text(tmp_path, OPTIONAL)
    assert w.read_probe("2.0") == [2.0, 9.81] and w.read_probe("2.0, 3.7") == [2.0, 3.7]
    assert [t.values for t in w.tests] == [(1.0, 9.81), (3.0, 3.7), (4.0, 9.81)]
    assert [t.expected for t in w.tests] == [round(0.5 * 9.81, 3), round(0.5 * 3.7 * 9, 3), round(0.5 * 9.81 * 16, 3)]
    assert "- `g`: a number from 1 to 30. Optional: left out, it is `9.81`." in w.manual
    for bad, why in (("", "expected at least 1 value(s)"), ("1, 2, 3", "expected 1 to 2 value(s) (t, g), got 3")):
        with pytest.raises(InputError) as info:
            w.read_probe(bad)
        assert why in str(info.value)


@pytest.mark.parametrize("change, message", [
    (("domain t, float(0, 10)\n", "domain t, float(0, 10), default(1.0)\ndomain u, int(0, 3)\n"),
     "b.world:8:1: error: input u has no default, but an input before it has one"),
    (("default(9.81)", "default(99.0)"), "b.world:8:33: error: the default of input g is outside its domain"),
    (("default(9.81)", "9.81"), "b.world:8:25: error: after input g's domain, expected default(VALUE)"),
    (("test 4.0\n", "test 4.0, 1.0, 2.0\n"), "b.world:12:1: error: this test gives 3 value(s) for 1 to 2 input(s)"),
])
def test_misused_optional_inputs_are_located(tmp_path, change, message):
    out = located(tmp_path, OPTIONAL.replace(*change))
    assert message in out and "^" in out
