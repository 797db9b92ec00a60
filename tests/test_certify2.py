"""Certification that trusts the author's evidence (issue 11) and reports honest floors (issue 12).

* The observability search runs the rule's `witness` lines, the example programs, the
  prediction programs and the task answers (as probes), besides generated probes; a rule
  is "not observable" only when none tells it apart, and the message says what was tried.
* `world.requires(task)`: a rule is required when knocking it out changes the verdict of
  every reference solution (`solution` may be repeated) or of the naive answer.
* `check` reports rules required by one task and tasks whose naive answer passes in the
  true world; `allow "REASON"` declares either as an exception, printed as a note.
* A prediction task's `naive` output is used and checked, never silently ignored.
"""
from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.program.certify import author_probes, find_witness, literal, task_probe
from worldspec.diagnostics import SpecError
from worldspec.parser import parse_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HEAD = '''
world "Mini" version 1
kind program
seed 1
summary "A small world for certification tests."

syntax {
  assign   "SET {name} AS {expr}"
  output   EMIT
  if       "UPON {expr}:"
  elif     "LEST {expr}:"
  else     "DEFAULT:"
  for      "SWEEP {name} IN {expr}:"
  while    "AWAIT {expr}:"
  break    CEASE
  continue BYPASS
  function "CRAFT {name}({params}):"
  return   "DELIVER {expr}"
  true     YES
  false    NO
  none     VOID
}

base {
  op STRAND(*xs: int) -> list = xs      "A list of the arguments, in order."
  op PLUCK(xs: list, i: int) -> int = get(xs, i)
     "The element of xs at position i; positions count from 0."
  op TWICE(n: int) -> int = n * 2       "n doubled."
  op PLUS(a: int, b: int) -> int = a + b "a plus b."
  op ECHO(s: str) -> str = s            "The string s, unchanged."
}

rule R2 "PLUCK counts from one" {
  op PLUCK(xs, i) = get(xs, i - 1)
  statement "PLUCK(xs, i) returns the element at 1-based position i."
  equation  "(get xs (- i 1))"
  %R2%
}

rule R3 "TWICE triples" {
  op TWICE(n) = n * 3
  statement "TWICE(n) is 3n."
  equation  "(* n 3)"
  %R3%
}

manual "Mini computes with integers and lists."

example E1 band apply "Print a number." {
  program "EMIT(PLUS(1, 2))"
}
'''

# R1 changes ECHO only on one long string, which no generated probe writes (certification mines
# rules' string constants up to 20 characters, so the word is longer).
RARE = '''
rule R1 "ECHO reverses one word" {
  op ECHO(s) = if s == "quuxquuxquuxquuxquuxquux" then "xuuqxuuqxuuqxuuqxuuqxuuq" else s
  statement "ECHO(\\"quuxquuxquuxquuxquuxquux\\") is \\"xuuqxuuqxuuqxuuqxuuqxuuq\\"; every other string is unchanged."
  equation  "(if (== s \\"quuxquuxquuxquuxquuxquux\\") \\"xuuqxuuqxuuqxuuqxuuqxuuq\\" s)"
  %R1%
}
'''

TASKS = {
    "T1": '''
task T1 band apply {
  prompt "Print the first element of xs."
  input  xs: list
  case   [4, 8, 15]
  case   [9, 1]
  expect get(xs, 0)
  solution "EMIT(PLUCK(xs, 1))"
  naive    "EMIT(PLUCK(xs, 0))"
  %T1%
}
''',
    "T2": '''
task T2 band apply {
  prompt "Print n tripled."
  input  n: int
  case   1
  case   5
  expect 3 * n
  solution "EMIT(TWICE(n))"
  naive    "EMIT(PLUS(TWICE(n), n))"
  %T2%
}
''',
    "T3": '''
task T3 band apply {
  prompt "Print the second element of xs."
  input  xs: list
  case   [4, 8, 15]
  case   [9, 1]
  expect get(xs, 1)
  solution "EMIT(PLUCK(xs, 2))"
  naive    "EMIT(PLUCK(xs, 1))"
  %T3%
}
''',
    "T4": '''
task T4 band apply {
  prompt "Print six times n."
  input  n: int
  case   1
  case   4
  expect 6 * n
  solution "EMIT(TWICE(PLUS(n, n)))"
  naive    "EMIT(PLUS(TWICE(n), PLUS(TWICE(n), TWICE(n))))"
  %T4%
}
''',
}

BUDGET = '''
budget {
  rounds 4  calls_per_round 12
  units_per_call 5  unit_cost output 1  unit_cost output_in_loop 3
}
'''

SWEEP_FIRST = '''"""
    SWEEP v IN xs:
        EMIT(v)
        CEASE
  """'''


def spec_text(*, rare: bool = False, tasks=("T1", "T2", "T3", "T4"), extra: str = "", language: int = 0,
              **fill: str) -> str:
    """The Mini world's text; `fill` puts lines into a rule or task (R2="allow ...", T1="..."); `language`:
    its `language` line (0: none, the second edition)."""
    text = HEAD + (RARE if rare else "") + "".join(TASKS[t] for t in tasks) + extra + BUDGET
    if language:
        text = text.replace('world "Mini" version 1\n', f'world "Mini" version 1\nlanguage {language}\n', 1)
    for key in ("R1", "R2", "R3", "T1", "T2", "T3", "T4"):
        text = text.replace(f"%{key}%", fill.get(key, ""))
    return text


def build(**kw):
    return compile_spec(parse_spec(spec_text(**kw), "mini.world"))


def certify(**kw) -> dict:
    return build(**kw).certify()


def row(report: dict, rule_id: str) -> dict:
    return next(r for r in report["rule_table"] if r["id"] == rule_id)


# ---------------------------------------------------------------- the baseline


def test_the_mini_world_certifies_with_every_rule_needed_twice():
    rep = certify()
    assert rep["problems"] == [] and rep["notes"] == []
    assert {r["id"]: r["tasks"] for r in rep["rule_table"]} == {"R2": ["T1", "T3"], "R3": ["T2", "T4"]}
    assert rep["recall_only"] == 0.0


# ---------------------------------------------------------------- observability: the author's evidence


def test_a_rule_no_probe_shows_is_not_observable_and_the_message_says_what_was_tried():
    w = build(rare=True)
    assert find_witness(w, "R1", max_examples=60) is None
    rep = w.certify()
    assert not row(rep, "R1")["observable"]
    [msg] = [p for p in rep["problems"] if p.startswith("rule R1 (ECHO reverses one word) is not observable")]
    assert "no probe within 5 units tells it apart from its base" in msg
    assert "60 seeded and up to 300 searched generated probes" in msg
    assert f"{len(author_probes(w.true_world()))} of the author's programs" in msg
    assert 'add it to the rule as witness """PROGRAM"""' in msg


def test_a_witness_line_makes_the_rule_observable():
    rep = certify(rare=True, R1='witness """\n    EMIT(ECHO("quuxquuxquuxquuxquuxquux"))\n  """')
    assert row(rep, "R1")["observable"] and row(rep, "R1")["witness"] == 'EMIT(ECHO("quuxquuxquuxquuxquuxquux"))'
    assert not any("R1" in p and "observable" in p for p in rep["problems"])


def test_the_first_witness_that_tells_the_rule_apart_is_reported():
    w = build(rare=True, R1='witness "EMIT(ECHO(\\"abc\\"))"\n  witness "EMIT(ECHO(\\"quuxquuxquuxquuxquuxquux\\"))"')
    assert w.rule_data["R1"].witnesses == ('EMIT(ECHO("abc"))', 'EMIT(ECHO("quuxquuxquuxquuxquuxquux"))')
    assert find_witness(w, "R1") == 'EMIT(ECHO("quuxquuxquuxquuxquuxquux"))'


def test_a_witness_that_does_not_tell_its_rule_apart_is_a_problem():
    rep = certify(R2='witness "EMIT(PLUS(1, 2))"')
    assert ("rule R2: witness 1 does not tell it apart from its base (the true world and the world "
            "without R2 give the same feedback)") in rep["problems"]
    assert row(rep, "R2")["observable"]  # generated probes still show R2


def test_an_example_program_is_evidence():
    example = 'example E2 band apply "Echo a word." {\n  program "EMIT(ECHO(\\"quuxquuxquuxquuxquuxquux\\"))"\n}\n'
    w = build(rare=True, extra=example)
    assert find_witness(w, "R1") == 'EMIT(ECHO("quuxquuxquuxquuxquuxquux"))'
    assert find_witness(w, "R1", max_examples=20, evidence=False) is None  # generated probes alone miss it


def test_a_prediction_program_is_evidence():
    predict = ('task T9 band apply {\n  prompt "p"\n  predict\n  program """\n    SET w AS ECHO("quuxquuxquuxquuxquuxquux")\n'
               '    EMIT(w)\n  """\n}\n')
    w = build(rare=True, extra=predict)
    assert find_witness(w, "R1") == 'SET w AS ECHO("quuxquuxquuxquuxquuxquux")\nEMIT(w)\n'


def test_a_task_answer_run_on_its_case_is_evidence():
    task = ('task T8 band apply {\n  prompt "Echo s."\n  input s: str\n  case "ab"\n  case "quuxquuxquuxquuxquuxquux"\n'
            '  expect if s == "quuxquuxquuxquuxquuxquux" then "xuuqxuuqxuuqxuuqxuuqxuuq" else s\n  solution "EMIT(ECHO(s))"\n}\n')
    w = build(rare=True, extra=task)
    assert find_witness(w, "R1") == 'SET s AS "quuxquuxquuxquuxquuxquux"\nEMIT(ECHO(s))'


def test_task_probes_write_inputs_as_literals_and_call_functions():
    task = ('task T8 band apply {\n  prompt "Echo s."\n  input s: str, n: int, b: bool\n'
            '  case "ab", -3, true\n  case "a\\"b", 1, false\n  function f\n  expect s\n'
            '  solution """\n    CRAFT f(s, n, b):\n        DELIVER ECHO(s)\n  """\n}\n')
    w = build(extra=task)
    data = w.task_data["T8"]
    assert task_probe(w, data, data.solutions[0], data.cases[0]) == (
        'CRAFT f(s, n, b):\n    DELIVER ECHO(s)\nEMIT(f("ab", -3, YES))')
    assert task_probe(w, data, data.solutions[0], data.cases[1]) is None  # a quote has no literal form
    t1 = w.task_data["T1"]
    assert task_probe(w, t1, "EMIT(PLUCK(xs, 1))", t1.cases[0]) is None  # lists have none either
    assert [literal(w, v) for v in (0, "", False, None, 2.5)] == ["0", '""', "NO", "VOID", None]
    assert ("task T8", 'CRAFT f(s, n, b):\n    DELIVER ECHO(s)\nEMIT(f("ab", -3, YES))') in author_probes(w)


def test_a_witness_must_parse_and_fit_one_call():
    with pytest.raises(SpecError) as e:
        build(R2='witness """\n    EMIT(PLUCK(\n  """')
    assert "rule R2's witness does not parse" in e.value.message
    with pytest.raises(SpecError) as e:
        build(R2='witness "EMIT(1, 2, 3, 4, 5, 6)"')
    assert e.value.message == "rule R2's witness costs 6 probe units; the limit is 5 per call"
    with pytest.raises(SpecError) as e:
        build(R2="witness 42")
    assert e.value.message == "witness takes one non-empty string"


# ---------------------------------------------------------------- requires: reference or naive, every solution


def test_a_naive_answer_that_trips_over_a_rule_makes_the_task_require_it():
    # T1's reference sweeps instead of PLUCKing; its naive answer reads position 0, which R2 moves
    sweeping = TASKS["T1"].replace('solution "EMIT(PLUCK(xs, 1))"', f"solution {SWEEP_FIRST}").replace("%T1%", "")
    assert build(tasks=("T2", "T3", "T4"), extra=sweeping).requires("T1") == {"R2"}
    without_naive = sweeping.replace('naive    "EMIT(PLUCK(xs, 0))"', "")
    assert build(tasks=("T2", "T3", "T4"), extra=without_naive).requires("T1") == set()


def test_a_rule_an_alternative_solution_avoids_is_not_required():
    text = TASKS["T1"].replace('naive    "EMIT(PLUCK(xs, 0))"', "").replace("%T1%", f"solution {SWEEP_FIRST}")
    w = build(tasks=("T2", "T3", "T4"), extra=text)
    assert w.task_data["T1"].solutions == ("EMIT(PLUCK(xs, 1))", "SWEEP v IN xs:\n    EMIT(v)\n    CEASE\n")
    assert w.task("T1").solution == "EMIT(PLUCK(xs, 1))"  # the first one is the task's reference
    assert w.requires("T1") == set()
    # the naive clause still counts
    assert build(T1=f"solution {SWEEP_FIRST}").requires("T1") == {"R2"}


def test_every_solution_must_pass_in_the_true_world():
    rep = certify(T1='solution "EMIT(PLUCK(xs, 0))"')
    assert any(p.startswith("task T1: reference solution 2 fails in the true world") for p in rep["problems"])
    assert not any(p.startswith("task T1: reference solution 1") for p in rep["problems"])
    with pytest.raises(SpecError) as e:
        build(T1='solution "EMIT(PLUCK(xs"')
    assert e.value.message.startswith("task T1's solution 2 does not parse")


def test_the_runner_split_reads_the_same_requires(demo):
    # T3's SWEEP naive answer passes once R4 (SWEEP walks backwards) is reverted
    assert demo.requires("T3") == {"R2", "R4", "R5"}
    assert demo.certify()["requires"]["T3"] == ["R2", "R4", "R5"]


# ---------------------------------------------------------------- honest floors and declared exceptions


def test_a_rule_required_by_one_task_is_a_problem():
    rep = certify(tasks=("T1", "T2", "T3"), language=3)
    assert rep["problems"] == [
        'rule R3 (TWICE triples) is required by one task only (T2): add a second task that needs it, or '
        'declare the exception in the rule: allow "REASON"']


def test_a_rule_required_by_one_task_is_a_warning_in_an_older_world():
    """Two tasks per rule came after worlds were written without it: language 2 (no line) is warned."""
    for language in (0, 2):
        rep = certify(tasks=("T1", "T2", "T3"), language=language)
        assert rep["problems"] == []
        assert rep["notes"] == [
            'warning: rule R3 (TWICE triples) is required by one task only (T2): add a second task that needs it, '
            'or declare the exception in the rule: allow "REASON" (language 2 accepts it; language 3 makes it a '
            'problem)']


def test_a_declared_one_task_rule_is_a_note():
    rep = certify(tasks=("T1", "T2", "T3"), R3='allow "a one-rule lesson: T2 alone teaches it"')
    assert rep["problems"] == []
    assert rep["notes"] == ["declared exception: rule R3 (TWICE triples) is required by one task only (T2): "
                            "a one-rule lesson: T2 alone teaches it"]


def test_a_task_a_naive_answer_solves_is_a_problem_unless_declared():
    plain = ('task T5 band apply {\n  prompt "Add one."\n  input n: int\n  case 1\n  case 2\n'
             '  expect n + 1\n  solution "EMIT(PLUS(n, 1))"\n  naive "EMIT(PLUS(n, 1))"\n%T5%}\n')
    rep = certify(extra=plain.replace("%T5%", ""))
    assert rep["recall_only"] == 20.0
    assert rep["problems"] == [
        "task T5: its naive (manual-trusting) answer passes in the true world: make the task need a rule the "
        'naive answer misses, or declare the exception in the task: allow "REASON"']
    rep = certify(extra=plain.replace("%T5%", '  allow "a control task"\n'))
    assert rep["problems"] == [] and rep["recall_only"] == 20.0
    assert rep["notes"] == ["declared exception: task T5: its naive (manual-trusting) answer passes in the "
                            "true world: a control task"]


def test_a_declaration_that_excuses_nothing_is_noted():
    rep = certify(R2='allow "stale"', T1='allow "also stale"')
    assert rep["problems"] == []
    assert rep["notes"] == [
        "rule R2 declares an exception it does not need (required by 2 tasks): stale",
        "task T1 declares an exception it does not need (its naive answer fails in the true world): also stale"]


@pytest.mark.parametrize("fill, message", [
    ('allow ""', "allow takes one non-empty string"),
    ("allow 3", "allow takes one non-empty string"),
    ('allow "a"\n  allow "b"', "rule R3 declares allow twice"),
])
def test_a_malformed_allow_is_a_located_error(fill, message):
    with pytest.raises(SpecError) as e:
        build(R3=fill)
    assert e.value.message == message
    assert e.value.span.line > 0


def test_check_prints_declared_exceptions_as_notes_and_passes(tmp_path):
    path = tmp_path / "mini.world"
    path.write_text(spec_text(tasks=("T1", "T2", "T3"), R3='allow "T2 alone teaches it"'), encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert ("declared exception: rule R3 (TWICE triples) is required by one task only (T2): "
            "T2 alone teaches it") in result.output
    assert "certified: no problems" in result.output


def test_the_demo_declares_its_two_exceptions(demo):
    rep = demo.certify()
    assert rep["problems"] == []
    assert [n.split(":")[1].strip() for n in rep["notes"]] == [
        "rule R3 (LESSEN swaps its operands inside a function body) is required by one task only (T4)",
        "task T2"]


# ---------------------------------------------------------------- a prediction's naive answer


PREDICT = 'task T9 band apply {\n  prompt "p"\n  predict\n  program "EMIT(TWICE(2))"\n%NAIVE%}\n'


def test_a_predictions_naive_defaults_to_the_manuals_output():
    w = build(extra=PREDICT.replace("%NAIVE%", ""))
    assert (w.task("T9").solution, w.task("T9").naive) == ("6", "4")
    assert certify(extra=PREDICT.replace("%NAIVE%", ""))["problems"] == []


def test_a_predictions_naive_is_used_and_checked():
    w = build(extra=PREDICT.replace("%NAIVE%", '  naive "4"\n'))
    assert w.task("T9").naive == "4" and w.certify()["problems"] == []
    passes = certify(extra=PREDICT.replace("%NAIVE%", '  naive "6"\n'))
    assert any(p.startswith("task T9: its naive (manual-trusting) answer passes in the true world")
               for p in passes["problems"])
    assert passes["recall_only"] > 0
    meaningless = certify(extra=PREDICT.replace("%NAIVE%", '  naive "5"\n'))
    assert any(p.startswith("task T9: the naive solution fails in the manual's world")
               for p in meaningless["problems"])


def test_a_prediction_takes_no_solution():
    with pytest.raises(SpecError) as e:
        build(extra=PREDICT.replace("%NAIVE%", '  solution "6"\n'))
    assert e.value.message == "predict task T9 takes no solution"


def test_a_prediction_no_rule_changes_is_a_problem():
    rep = certify(extra=PREDICT.replace("TWICE(2)", "PLUS(2, 2)").replace("%NAIVE%", ""))
    assert any(p.startswith("task T9: its naive (manual-trusting) answer passes") for p in rep["problems"])


# ---------------------------------------------------------------- AlienCode under the new definition


def test_aliencode_needs_every_rule_twice_without_declared_exceptions():
    w = load_world(os.path.join(ROOT, "worlds", "aliencode.world"))
    # R27 can only be avoided: T70's reference needs it, and T30 and T49's naive answers trip over it
    assert [t.id for t in w.tasks if "R27" in w.requires(t)] == ["T30", "T49", "T70"]
    assert not any(d.allow for d in w.rule_data.values()) and not any(d.allow for d in w.task_data.values())
