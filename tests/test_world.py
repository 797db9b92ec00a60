"""The compiled demo world: requires(), certification, seeds, probe charging and
feedback caps, equation grading, verification and `check --json`."""
from __future__ import annotations

import json
import os
import re
import time

import itertools

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.api import PROTOCOLS, Feedback, Rule, Task, ToolSpec, Verdict, World
from worldspec.compiler.program import world as program_world
from worldspec.diagnostics import SpecError
from worldspec.parser import parse_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "worlds", "demo.world")
DEMO_TEXT = open(DEMO, encoding="utf-8").read()

# T3 needs R4 through its naive answer (a SWEEP that passes once R4 is reverted), not its reference
REQUIRES = {"T1": {"R2"}, "T2": set(), "T3": {"R2", "R4", "R5"}, "T4": {"R3"}, "T5": {"R5"}, "T6": {"R1"},
            "T7": {"R1", "R4"}}


@pytest.fixture(scope="module")
def report(demo):
    return demo.certify()


def without_task(text: str, task_id: str) -> str:
    """The spec text with one task block removed."""
    start = text.index(f"task {task_id} ")
    end = text.index("\ntask ", start + 1) + 1
    return text[:start] + text[end:]


# ---------------------------------------------------------------- the inventory and requires()


def test_requires_matches_the_hand_checked_table(demo):
    assert {t.id: set(demo.requires(t.id)) for t in demo.tasks} == REQUIRES
    # a Task object works as well as its id, and variants share the answer
    assert demo.requires(demo.task("T3")) == frozenset({"R2", "R4", "R5"})
    assert demo.base_world().requires("T7") == frozenset({"R1", "R4"})


def test_inventory(demo):
    assert [r.id for r in demo.rules] == ["R1", "R2", "R3", "R4", "R5"]
    assert [(r.target, r.params) for r in demo.rules] == [
        ("hook int_literal", ("n",)), ("op PLUCK", ("xs", "i")), ("op LESSEN", ("a", "b")),
        ("hook iterate", ("xs",)), ("op BELOW", ("a", "b"))]
    r1 = demo.rule("R1")
    assert r1.statement == "Every integer literal n in a program denotes n + 3." and r1.equation == "(+ n 3)"
    assert [(h.id, h.target, h.herring) for h in demo.herrings] == [("H1", "op SHATTER", True)]
    assert demo.rule("H1").herring
    with pytest.raises(KeyError):
        demo.rule("R99")
    assert demo.applied == frozenset(r.id for r in demo.rules)
    assert demo.base_world().applied == frozenset()
    assert demo.knockout("R2").applied == frozenset({"R1", "R3", "R4", "R5"})
    assert all(f"- {r.id} ({r.title}): {r.statement}" in demo.open_book for r in demo.rules)


def test_manual_documents_the_base_semantics_only(demo):
    manual = demo.manual
    assert manual.startswith("# Demo (version 1)")
    # the base docs of every perturbed line are there, unchanged
    for doc in ("The element of xs at position i; positions count from 0.", "Subtracts b from a.",
                "SWEEP visits the elements of a list from first to last.",
                "YES when a is smaller than b, otherwise NO.", "Integers are written in decimal: 42, -5, 0.",
                "Multiplies a by b."):
        assert doc in manual
    # no rule statement leaks into it
    for r in demo.rules:
        assert r.statement not in manual
    assert "1-based" not in manual and "backwards" not in manual
    assert "`SET name AS expr`" in manual and "`EMIT(value, ...)`" in manual
    assert "at most 5 probe units" in manual and "15 lines and 600 characters" in manual


def test_examples_are_computed_by_the_true_world(demo):
    out = {e.id: e.output for e in demo.examples}
    assert out == {"E1": "10", "E2": "13", "E3": "-6", "E4": "6\n5\n4", "E5": "120"}
    for e in demo.examples:
        fb = demo.probe(e.program)
        assert fb.status == "ok" and fb.text == e.output


# ---------------------------------------------------------------- certification


def test_demo_certifies(report):
    assert report["problems"] == []
    assert (report["rules"], report["herrings"], report["tasks"], report["examples"]) == (5, 1, 7, 5)
    assert {k: set(v) for k, v in report["requires"].items()} == REQUIRES
    assert all(r["observable"] and r["witness"] and r["tasks"] for r in report["rule_table"])
    assert report["herring_table"] == [{"id": "H1", "target": "op SHATTER", "unchanged": True}]
    assert report["recall_only"] == pytest.approx(100 * 1 / 7, abs=0.1)  # only T2's naive answer passes
    # ... which the demo declares, as it declares R3's single task: notes, not problems
    assert [n.split(":")[1].strip()[:7] for n in report["notes"]] == ["rule R3", "task T2"]


def test_witnesses_tell_each_rule_apart(demo, report):
    for row in report["rule_table"]:
        w = row["witness"]
        assert demo.charge(w) <= demo.budget.units_per_call
        assert demo.probe(w).text != demo.knockout(row["id"]).probe(w).text


@pytest.fixture(scope="module")
def uncovered_path(tmp_path_factory):
    # T4 is the only task that needs R3 (LESSEN swaps inside a function body)
    p = tmp_path_factory.mktemp("uncovered") / "demo-without-t4.world"
    p.write_text(without_task(DEMO_TEXT, "T4"), encoding="utf-8")
    return p


def test_an_uncovered_rule_is_a_certification_problem(uncovered_path):
    w = load_world(str(uncovered_path))
    assert [t.id for t in w.tasks] == ["T1", "T2", "T3", "T5", "T6", "T7"]
    rep = w.certify()
    assert len(rep["problems"]) == 1
    assert "rule R3" in rep["problems"][0] and "required by no task" in rep["problems"][0]
    row = next(r for r in rep["rule_table"] if r["id"] == "R3")
    assert row["observable"] and row["tasks"] == []


def test_check_fails_naming_the_uncovered_rule(uncovered_path):
    r = CliRunner().invoke(main, ["check", str(uncovered_path)])
    assert r.exit_code == 1, r.output
    assert "R3" in r.output and "required by no task" in r.output
    assert re.search(r"BAD\s+R3", r.output)
    r = CliRunner().invoke(main, ["check", str(uncovered_path), "--json"])
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert any("R3" in p for p in data["problems"])


def test_a_herring_that_a_rule_changes_cannot_compile():
    text = DEMO_TEXT.replace("herring H1 SHATTER", "herring H1 BELOW")
    with pytest.raises(SpecError, match="rule R5 changes it"):
        compile_spec(parse_spec(text, "demo.world"))


def test_a_failing_reference_solution_is_a_problem():
    text = DEMO_TEXT.replace('solution "EMIT(SHATTER(a, b))"', 'solution "EMIT(SHATTER(a, a))"')
    rep = compile_spec(parse_spec(text, "demo.world")).certify()
    assert any(p.startswith("task T2: the reference solution fails in the true world") for p in rep["problems"])


def test_a_naive_answer_that_fails_in_the_manuals_world_is_a_problem():
    text = DEMO_TEXT.replace('naive    "EMIT(PLUCK(xs, 0))"', 'naive    "EMIT(PLUCK(xs, 1))"')
    rep = compile_spec(parse_spec(text, "demo.world")).certify()
    assert any(p.startswith("task T1: the naive solution fails in the manual's world") for p in rep["problems"])


def test_an_equation_that_does_not_match_its_body_is_a_problem():
    text = DEMO_TEXT.replace('equation  "(<= a b)"', 'equation  "(< a b)"')
    rep = compile_spec(parse_spec(text, "demo.world")).certify()
    assert any("rule R5: its equation" in p for p in rep["problems"])


# ---------------------------------------------------------------- seeds


@pytest.fixture(scope="module")
def seeded():
    # K = 4 and K = 2; most seeds do not certify (see the xfail below)
    return {s: load_world(DEMO, s) for s in (1, 5)}


def test_two_seeds_give_different_params_and_both_certify(demo, seeded):
    k = {s: dict(w.params)["K"] for s, w in seeded.items()}
    assert k[1] != k[5]
    assert dict(demo.params)["K"] == 3 and 3 not in k.values()
    for s, w in seeded.items():
        assert w.seed == s and w.default_seed == 2026
        assert dict(w.params)["ZERO"] == -k[s]
        assert w.rule("R1").equation == f"(+ n {k[s]})"
        assert w.probe("EMIT(0)").text == str(k[s])
        rep = w.certify()
        assert rep["problems"] == [], rep["problems"]
        assert rep["seed"] == s


def test_the_same_seed_twice_is_byte_identical(seeded):
    again = load_world(DEMO, 5)
    first = seeded[5]
    assert again.manual == first.manual
    assert again.examples == first.examples
    assert again.params == first.params
    assert [t.prompt for t in again.tasks] == [t.prompt for t in first.tasks]
    assert [(t.solution, t.naive) for t in again.tasks] == [(t.solution, t.naive) for t in first.tasks]


def test_the_declared_seed_reproduces_the_documented_world(demo):
    explicit = load_world(DEMO, 2026)
    assert explicit.params == demo.params
    assert explicit.manual == demo.manual and explicit.examples == demo.examples


def test_cli_same_seed_twice_gives_identical_output():
    run = lambda: CliRunner().invoke(main, ["manual", DEMO, "--seed", "11", "--examples"])  # noqa: E731
    a, b = run(), run()
    assert a.exit_code == 0 and a.output == b.output
    other = CliRunner().invoke(main, ["manual", DEMO, "--seed", "12", "--examples"])
    assert other.output != a.output  # the examples' outputs depend on K


# ---------------------------------------------------------------- probe charging and feedback caps


@pytest.mark.parametrize("program,units", [
    ("EMIT(1)", 1),
    ("EMIT(1, 2, 3)", 3),
    ("EMIT(1, 2, 3, 4, 5)", 5),
    ("EMIT()", 1),
    ("EMIT(1)\nEMIT(2)", 2),
    ("SET x AS 1", 0),
    ("SWEEP v IN STRAND(1, 2, 3, 4):\n    EMIT(v)", 3),
    ("AWAIT NO:\n    EMIT(1)", 3),
    ("SWEEP v IN STRAND(1):\n    UPON v:\n        EMIT(v)\nEMIT(1)", 4),
    ("SWEEP v IN STRAND(1):\n    SWEEP w IN STRAND(1):\n        EMIT(w)", 3),
    ("CRAFT f(a):\n    EMIT(a)\nf(1)\nf(2)", 1),
    ("CRAFT f(a):\n    SWEEP v IN STRAND(a):\n        EMIT(v)\nf(1)", 3),
    ("SWEEP v IN STRAND(1):\n    CRAFT g(a):\n        EMIT(a)\n    g(v)", 3),
])
def test_probe_charging(demo, program, units):
    assert demo.charge(program) == units
    fb = demo.probe(program)
    assert fb.status == "ok" and fb.units == units


@pytest.mark.parametrize("program,units", [
    ("EMIT(1, 2, 3, 4, 5, 6)", 6),
    ("SWEEP v IN STRAND(1):\n    EMIT(v, v)", 6),
    ("SWEEP v IN STRAND(1):\n    EMIT(v)\nSWEEP v IN STRAND(1):\n    EMIT(v)", 6),
    ("EMIT(1, 2, 3)\nSWEEP v IN STRAND(1):\n    EMIT(v)", 6),
    # would print, then fail; and would loop forever: rejected before anything runs
    ("EMIT(1, 2, 3, 4)\nEMIT(5, 6)\nEMIT(PLUCK(STRAND(), 7))", 7),
    ("AWAIT YES:\n    EMIT(1, 2)", 6),
])
def test_probes_over_the_cap_are_rejected_and_run_nothing(demo, program, units):
    t = time.perf_counter()
    fb = demo.probe(program)
    assert time.perf_counter() - t < 1.0  # nothing ran (slack for a loaded machine)
    assert fb.status == "rejected" and fb.units == 0 and not fb.executed
    assert fb.text == (f"rejected: this program costs {units} probe units; the limit is 5 per call. "
                       "Nothing was run.")


def test_unparsable_probes_cost_nothing(demo):
    assert demo.charge("EMIT(") == 0
    fb = demo.probe("EMIT(")
    assert fb.status == "parse_error" and fb.units == 0 and not fb.executed


def test_error_and_limit_probes_are_charged(demo):
    fb = demo.probe("EMIT(1)\nEMIT(PLUCK(STRAND(), 5))")
    assert fb.status == "error" and fb.units == 2 and fb.executed
    fb = demo.probe("AWAIT YES:\n    EMIT(1)")
    assert fb.status == "limit" and fb.units == 3


def _sweep(n: int) -> str:
    return "SWEEP v IN STRAND(" + ", ".join(str(i) for i in range(n)) + "):\n    EMIT(v)"


def test_feedback_truncated_at_15_lines(demo):
    fb = demo.probe(_sweep(20))
    lines = fb.text.splitlines()
    assert fb.status == "ok" and fb.truncated
    assert len(lines) == 15 and lines[-1] == "[feedback truncated]"
    assert lines[:14] == [str(i + 3) for i in range(19, 5, -1)]  # K = 3, walking backwards
    fb = demo.probe(_sweep(15))
    assert not fb.truncated and len(fb.text.splitlines()) == 15


def test_feedback_truncated_at_600_characters(demo):
    fb = demo.probe("EMIT(STRAND(" + ", ".join(["1000"] * 200) + "))")
    assert fb.status == "ok" and fb.truncated
    assert len(fb.text) <= 600 and fb.text.endswith("\n[feedback truncated]")
    assert fb.text.startswith("[1003, 1003")
    short = demo.probe("EMIT(STRAND(" + ", ".join(["1000"] * 100) + "))")
    assert len(short.text) == 600 and not short.truncated  # exactly at the cap: kept whole


def test_parse_errors_are_capped_too(demo):
    fb = demo.probe("EMIT(" + "x, " * 5000 + "@)")
    assert fb.status == "parse_error" and len(fb.text) <= 600


def test_tool_spec_states_the_budget(demo):
    tool = demo.tool
    schema = tool.schema()
    assert schema["function"]["name"] == "run_program"
    assert schema["function"]["parameters"]["required"] == ["program"]
    for fact in ("At most 5 probe units", "EMIT argument costs 1", "3 inside a loop", "15 lines", "600 characters"):
        assert fact in tool.description


# ---------------------------------------------------------------- equation grading


def test_each_rule_accepts_its_own_equation(demo):
    for r in demo.rules:
        assert demo.grade_equation(r.id, r.equation), r.id


@pytest.mark.parametrize("rule_id,equation", [
    ("R1", "(+ 3 n)"), ("R1", "(- n -3)"), ("R2", "(get xs (+ i -1))"),
    ("R3", "(if (not in_function) (- a b) (- b a))"), ("R3", "(* (if in_function -1 1) (- a b))"),
    ("R4", "(reverse (reverse (reverse xs)))"), ("R5", "(not (> a b))"), ("R5", "(or (< a b) (== a b))"),
])
def test_equivalent_equations_are_accepted(demo, rule_id, equation):
    assert demo.grade_equation(rule_id, equation)


@pytest.mark.parametrize("rule_id,equation", [
    ("R1", "(+ n 4)"), ("R1", "n"), ("R1", "(- n 3)"),
    ("R2", "(get xs i)"), ("R2", "(get xs (+ i 1))"),
    ("R3", "(- b a)"), ("R3", "(- a b)"), ("R3", "(if in_loop (- b a) (- a b))"),
    ("R4", "xs"), ("R4", "(reverse (reverse xs))"),
    ("R5", "(< a b)"), ("R5", "(>= a b)"),
    ("R1", ""), ("R1", "   "), ("R1", "("), ("R1", "(+ n"), ("R1", "(+ n 3))"), ("R1", "()"),
    ("R1", "(+ n 3) (+ n 3)"), ("R1", "(plus n 3)"), ("R1", "(+ m 3)"), ("R1", "(__import__ n)"),
    ("R1", "(open n)"), ("R1", "(if n)"), ("R1", "(" * 60 + "n" + ")" * 60), ("R1", "(+ n " + "1 " * 1500 + ")"),
    ("R1", "n.real"), ("R1", "(+ n 3.0001)"),
])
def test_wrong_or_malformed_equations_are_rejected(demo, rule_id, equation):
    assert not demo.grade_equation(rule_id, equation)


def test_equation_grading_follows_the_seed(seeded):
    w = seeded[1]
    k = dict(w.params)["K"]
    assert w.grade_equation("R1", f"(+ n {k})")
    assert not w.grade_equation("R1", "(+ n 3)")


def test_equation_grading_rejects_non_text(demo):
    assert not demo.grade_equation("R1", None)
    with pytest.raises(KeyError):
        demo.grade_equation("R99", "(+ n 3)")


# ---------------------------------------------------------------- verify


def test_verify_program_tasks(demo):
    for t in demo.tasks:
        v = demo.verify(t.id, t.solution)
        assert v.passed, (t.id, v)
    v = demo.verify("T1", "EMIT(PLUCK(xs, 0))")
    assert not v.passed and v.detail == "0/5 cases" and len(v.cases) == 5
    case = v.cases[0]
    assert case.inputs == ([1, 2, 3],) and case.expected == "1" and not case.passed
    assert demo.base_world().verify("T1", "EMIT(PLUCK(xs, 0))").passed
    # inputs are values, not literals: the literal offset does not touch them
    assert demo.verify("T2", "EMIT(SHATTER(a, b))").passed


def test_verify_reports_errors_and_partial_passes(demo):
    v = demo.verify("T1", "EMIT(PLUCK(xs, GAUGE(STRAND(0))))\nEMIT(PLUCK(xs, 5))")
    assert not v.passed
    assert "error" in v.cases[0].got
    v = demo.verify("T5", "EMIT(BELOW(n, 7))")  # 10 in the true world: right except at n = 10
    assert not v.passed and v.detail == "4/5 cases"
    v = demo.verify("T1", "EMIT(")
    assert not v.passed and all("syntax error" in c.got for c in v.cases)
    assert not demo.verify("T1", None).passed


def test_verify_function_tasks(demo):
    t = demo.task("T4")
    assert t.shape == "function"
    assert "Define the function diff(a, b)" in t.prompt and "EMIT(diff(a, b))" in t.prompt
    assert demo.verify("T4", t.solution).passed
    assert not demo.verify("T4", t.naive).passed
    assert demo.base_world().verify("T4", t.naive).passed
    # the answer must define the function
    v = demo.verify("T4", "CRAFT other(a, b):\n    DELIVER LESSEN(b, a)")
    assert not v.passed and all(not c.passed for c in v.cases)
    # output printed by the definition itself is not graded; only the appended call is
    assert demo.verify("T4", "EMIT(1)\n" + t.solution).passed


def test_verify_predict_tasks(demo):
    t = demo.task("T7")
    assert t.shape == "predict" and "```\nSET t AS 0" in t.prompt
    assert t.solution == demo.predicted("T7") == "20"
    assert t.naive == demo.base_world().predicted("T7") == "4"
    assert demo.verify("T7", "20").passed
    assert demo.verify("T7", "\n20  \n\n").passed  # surrounding blank lines and trailing spaces do not count
    v = demo.verify("T7", "4")
    assert not v.passed and v.cases[0].expected == "20" and v.cases[0].got == "4"
    assert demo.base_world().verify("T7", "4").passed
    assert not demo.verify("T7", "2 0").passed


def test_unknown_task(demo):
    with pytest.raises(KeyError):
        demo.task("T99")


# ---------------------------------------------------------------- check --json


def test_check_json_keys():
    r = CliRunner().invoke(main, ["check", DEMO, "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    for key in ("world", "kind", "seed", "rules", "herrings", "tasks", "examples", "recall_only", "notes",
                "problems"):
        assert key in data, key
    assert data["world"] == "Demo" and data["kind"] == "program" and data["seed"] == 2026
    assert data["rules"] == 5 and data["herrings"] == 1 and data["tasks"] == 7 and data["examples"] == 5
    assert isinstance(data["recall_only"], float) and 0 <= data["recall_only"] <= 100
    assert data["problems"] == []


def test_check_json_with_a_seed():
    r = CliRunner().invoke(main, ["check", "demo", "--seed", "5", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["seed"] == 5 and data["problems"] == [] and data["params"]["K"] != 3


@pytest.mark.parametrize("seed", [2, 3])
def test_demo_certifies_at_other_seeds(seed):
    assert load_world(DEMO, seed).certify()["problems"] == []


# ---------------------------------------------------------------- the World protocol, member by member


class _Started(Exception):
    """Raised from a certification's first progress message."""


def _stop(message: str) -> None:
    raise _Started(message)


@pytest.fixture(scope="module", params=["demo", "aliencode", "alienlogic"])
def bundled(request):
    return load_world(request.param)


def test_bundled_worlds_implement_the_world_protocol(bundled):
    w = bundled
    assert isinstance(w, World)
    assert w.protocol in PROTOCOLS and w.protocol == "milestone"
    assert isinstance(w.tool, ToolSpec) and w.tool.schema()["function"]["name"] == w.tool.name
    assert all(r.id in w.open_book for r in w.rules)
    assert "UNKNOWN" in w.report_instructions
    example = w.examples[0]
    fb = w.probe(example.program)
    assert isinstance(fb, Feedback) and fb.status == "ok" and fb.units == w.charge(example.program) > 0
    assert example.output.startswith(fb.text.split("\n")[0])
    assert w.probe("(((").units == 0 and not w.probe("(((").executed
    task = w.tasks[0]
    assert w.task(task.id) == w.task(task) == task and isinstance(task, Task)
    v = w.verify(task, task.solution)
    assert isinstance(v, Verdict) and v.passed and not w.verify(task, "").passed
    assert w.requires(task) <= {r.id for r in w.rules}
    assert any(w.requires(t) for t in w.tasks)
    rule, herring = w.rules[0], w.herrings[0]
    assert w.rule(rule.id) == rule and isinstance(rule, Rule) and w.rule(herring.id).herring
    with pytest.raises(KeyError):
        w.rule("no such rule")
    assert w.grade_equation(rule.id, rule.equation) and not w.grade_equation(rule.id, "nonsense (")
    probes = list(itertools.islice(w.probe_generator(3), 5))
    assert probes == list(itertools.islice(w.probe_generator(3), 5))
    assert all(w.probe(p).status != "parse_error" for p in probes)


def test_bundled_worlds_certify_through_the_protocol(bundled):
    """The demo certifies in full here; AlienCode and AlienLogic certify in full in their own
    test modules (minutes), so here certify only has to start and report progress."""
    if bundled.name == "Demo":
        report = bundled.certify()
        assert report["problems"] == [] and report["rules"] == len(bundled.rules)
    else:
        with pytest.raises(_Started):
            bundled.certify(progress=_stop)


# ---------------------------------------------------------------- syntax blocks Lark's strict mode refuses


@pytest.mark.parametrize("old,new,key", [
    ('"LEST {expr}:"', '"UPON {expr} AGAIN:"', "elif"),  # an elif that reads like a second if
    ('"CRAFT {name}({params}):"', '"{name}({params}) CRAFT:"', "function"),  # a definition that reads like a call
])
def test_an_ambiguous_statement_form_is_an_error_at_its_entry(old, new, key):
    text = DEMO_TEXT.replace(old, new)
    line = next(n for n, s in enumerate(text.splitlines(), start=1) if new in s)
    with pytest.raises(SpecError, match=f"the {key} form .* makes the syntax ambiguous") as e:
        compile_spec(parse_spec(text, "demo.world"))
    assert e.value.span.line == line and "strict-mode" in e.value.render()


@pytest.mark.parametrize("path", [os.path.join(ROOT, "worlds", "aliencode.world"), DEMO] + sorted(
    os.path.join(ROOT, "tests", "worlds", "lang", f) for f in os.listdir(os.path.join(ROOT, "tests", "worlds", "lang"))
    if f.endswith(".world")))
def test_requires_skips_only_knockouts_that_cannot_change_a_verdict(path, monkeypatch):
    """requires() skips knocking out an operator's rule when no answer of the task names the
    operator; run every knockout instead, and every task needs exactly the same rules."""
    skipping = load_world(path)
    if skipping.kind != "program":
        pytest.skip("not a program world")
    skipped = {t.id: skipping.requires(t.id) for t in skipping.tasks}
    monkeypatch.setattr(program_world, "unreached", lambda rule, words: False)
    every = load_world(path)
    assert {t.id: every.requires(t.id) for t in every.tasks} == skipped
    assert any(skipped.values())


@pytest.mark.parametrize("got, expected, same", [
    ("20.0", "20", True), ("2e1", "20", True), ("[1, 2.0]", "[1, 2]", True), ("x 3.50 y", "x 3.5 y", True),
    ("-0", "0", True), ("1\n2.0", "1\n2", True),
    ("21", "20", False), ("20.5", "20", False), ("x1", "x1.0", False), ("0x1F", "0x1F0", False),
    ("[1, 2]", "[1,2]", False), ("a 3", "b 3", False), ("0.30000000000000004", "0.3", False),
])
def test_outputs_compare_as_normalised_text_with_equal_valued_numbers(got, expected, same):
    # explorationbench.txt A.6: "an equal-valued numeric literal do[es] not decide a verdict"
    assert program_world.same_output(got, expected) is same


def test_a_prediction_written_with_an_equal_valued_literal_passes_and_a_different_value_fails():
    w = load_world(os.path.join(os.path.dirname(__file__), "..", "worlds", "demo.world"))
    assert w.verify("T7", "20").passed and w.verify("T7", "20.0").passed and w.verify("T7", "20  \n").passed
    assert not w.verify("T7", "21").passed and not w.verify("T7", "20.5").passed


def test_a_rules_own_wrong_equation_is_reported_with_an_input_where_they_part():
    text = open(os.path.join(os.path.dirname(__file__), "..", "worlds", "demo.world"), encoding="utf-8").read()
    w = compile_spec(parse_spec(text.replace('equation  "(get xs (- i 1))"', 'equation  "(get xs (- (len xs) i))"'),
                                "d.world"))
    (problem,) = [p for p in w.certify()["problems"] if "equation" in p]
    assert problem.startswith("rule R2: its equation '(get xs (- (len xs) i))' does not match the rule: with xs = ")
    assert "the rule gives" in problem and "and the equation" in problem
    assert program_world.equations.disagreement(w.true_world(), "R2", "(get xs (- i 1))") is None
    assert "cannot be read" in program_world.equations.disagreement(w.true_world(), "R2", "(get xs")


def test_a_program_answer_indented_as_a_whole_is_the_same_program():
    w = load_world(os.path.join(os.path.dirname(__file__), "..", "worlds", "demo.world"))
    t = next(t for t in w.tasks if "\n" in t.solution and t.shape != "predict")
    indented = "\n".join("    " + line for line in t.solution.splitlines())
    assert w.verify(t.id, t.solution).passed and w.verify(t.id, indented).passed
    assert w.verify(t.id, indented.replace("\n", "\r\n")).passed


def test_a_long_run_of_digits_compares_in_linear_time():
    # the first number pattern backtracked quadratically on 60,000 digits and a letter (78 s)
    digits = "9" * 60_000
    assert not program_world.same_output(digits + "e", "20")
    assert program_world.same_output(digits + ".0", digits) and not program_world.same_output(digits + "8", digits)
