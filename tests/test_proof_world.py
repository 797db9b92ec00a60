"""The proof kind: compiling a spec, its diagnostics, and the World surface the runner uses."""
from __future__ import annotations

import itertools
import textwrap

import pytest

from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.proof.world import DECLINED_RIGHT, DECLINED_WRONG
from worldspec.diagnostics import SpecError
from worldspec.parser import parse_spec

MINI = '''\
world "MiniLogic" version 1
kind proof
seed 7
summary "A tiny proof world."
decline "NO PROOF"

infer r3 "reiteration" { schema "A |- A"  doc "Restate an available line." }
infer r5 "and introduction" { schema "A, B |- A & B ; distinct"  doc "From A and B infer A & B." }
infer r8 "and elimination" { schema "A & B |- A"  doc "From A & B infer A." }
infer r9 "conditional elimination" { schema "A -> B, A |- B"  doc "Modus ponens." }
infer r12 "conditional introduction" { schema "[A ... B] |- A -> B ; once"  doc "Conditional proof." }
infer r20 "universal elimination" { schema "forall x A |- A[t/x]"  doc "Instantiate." }
infer r21 "falsum elimination" { schema "_|_ |- A"  doc "Explosion." }

rule r8 "and elimination gives the right conjunct" {
  allow "a mini world: one task per rule"
  schema "A & B |- B"
  statement "r8 infers B from A & B."
}
rule r12 "conditional introduction may reuse a subproof" {
  allow "a mini world: one task per rule"
  schema "[A ... B] |- A -> B"
  statement "r12 has no use-once guard."
}
herring h1 r21 "The rule name looks odd."
bounds small { size 5 depth 2 lines 12 nodes 50000 }
bounds default { size 5 depth 2 lines 12 nodes 50000 }

example E1 band intro "Conditional proof." {
  proof """
    1. P        premise
    2. | Q      assume
    3. | P      r3 1
    4. Q -> P   r12 2-3
  """
}

task t1 band intro {
  premises "P & Q"
  goal "Q"
  solution "1. P & Q    premise\\n2. Q    r8 1"
}
task t2 band intro {
  allow "a control: modus ponens checks as documented"
  premise "P -> Q"
  premise "P"
  goal "Q"
  solution """
    1. P -> Q   premise
    2. P        premise
    3. Q        r9 1, 2
  """
  naive """
    1. P -> Q   premise
    2. P        premise
    3. Q        r9 1, 2
  """
}
task t3 band decline {
  allow "an invalid sequent: the manual's rules cannot prove it either"
  premises "P -> Q"
  goal "Q -> P"
  unprovable small
}
task t4 band intro {
  prompt "Twice."
  premises "P"
  goal "(Q -> P) & (Q -> P)"
  solution """
    1. P                     premise
    2. | Q                   assume
    3. | P                   r3 1
    4. Q -> P                r12 2-3
    5. Q -> P                r12 2-3
    6. (Q -> P) & (Q -> P)   r5 4, 5
  """
}
'''


def compile_text(text: str, file: str = "mini.world"):
    return compile_spec(parse_spec(text, file))


@pytest.fixture(scope="module")
def mini():
    return compile_text(MINI)


def test_the_world_surface(mini):
    assert (mini.kind, mini.name, len(mini.rules), len(mini.herrings), len(mini.tasks)) == ("proof", "MiniLogic", 2, 1, 4)
    assert mini.budget.units_per_call == 1 and mini.budget.max_calls == 48
    assert mini.tool.name == "check_proof" and mini.tool.parameter == "proof"
    assert mini.tool.schema()["function"]["parameters"]["required"] == ["proof"]
    assert [r.target for r in mini.rules] == ["rule r8", "rule r12"]
    assert mini.rules[0].equation == "A & B |- B"
    assert "r8 (and elimination gives the right conjunct)" in mini.open_book
    assert mini.examples[0].output == "accepted: P |- Q -> P (4 lines)"
    assert "`r8` and elimination: `A & B |- A`" in mini.manual  # the manual shows the base rule
    assert "NO PROOF" in mini.tasks[0].prompt and "P & Q |- Q" in mini.tasks[0].prompt
    assert mini.rule("h1").herring


def test_probe_charges_one_unit_and_never_raises(mini):
    fb = mini.probe("1. P & Q premise\n2. P r8 1")
    assert (fb.units, fb.status) == (1, "error")
    assert fb.text == "rejected at line 2 (r8): r8 does not give P from line 1. Line 1 checks."
    assert mini.base_world().probe("1. P & Q premise\n2. P r8 1").text == "accepted: P & Q |- P (2 lines)"
    assert mini.probe("no proof here").units == 0
    assert mini.probe(None).status == "parse_error"  # type: ignore[arg-type]
    assert mini.charge("1. P premise") == 1 and mini.charge("") == 0
    long = "\n".join(f"{i}. P premise" for i in range(1, 200)) + "\n200. Q r99 1"
    assert len(mini.probe(long).text) <= mini.budget.feedback_chars


def test_verify(mini):
    assert mini.verify("t1", "1. P & Q premise\n2. Q r8 1").passed
    v = mini.verify("t1", "1. P & Q premise\n2. P r8 1")
    assert not v.passed and "rejected at line 2" in v.detail
    assert not mini.verify("t1", "1. P & Q premise\n2. R premise\n3. Q r8 1").passed  # extra premise
    assert not mini.verify("t1", "1. P & Q premise").passed  # wrong conclusion
    assert mini.verify("t3", "NO PROOF").passed and mini.verify("t3", "  `no proof.` ").passed
    assert not mini.verify("t1", "NO PROOF").passed
    assert not mini.verify("t3", "1. P -> Q premise").passed
    assert not mini.verify("t1", "").passed and not mini.verify("t1", None).passed  # type: ignore[arg-type]
    # the manual's world: declining is right exactly when its own search finds no proof
    assert mini.base_world().verify("t3", "NO PROOF").passed


def test_variants_and_requires(mini):
    assert mini.is_true and not mini.base_world().is_true
    assert mini.knockout("r8").applied == frozenset({"r12"})
    assert mini.requires("t1") == {"r8"}
    assert mini.requires("t4") == {"r12"}
    assert mini.requires("t2") == set() and mini.requires("t3") == set()


@pytest.mark.parametrize("stated, ok", [
    ("A & B |- B", True), ("C & D ⊢ D", True), ("r8: A & B |- B", True), ("`A & B |- B`", True),
    ("A & B |- A", False), ("A & B |- B ; distinct", False), ("nonsense", False), ("", False),
])
def test_grade_equation(mini, stated, ok):
    assert mini.grade_equation("r8", stated) is ok


def test_probe_generator_yields_checkable_proofs(mini):
    proofs = list(itertools.islice(mini.probe_generator(1), 30))
    assert proofs == list(itertools.islice(mini.probe_generator(1), 30))  # seeded
    assert proofs != list(itertools.islice(mini.probe_generator(2), 30))
    assert all(mini.charge(p) == 1 for p in proofs)
    base = mini.base_world()
    assert sum(base.check(p).accepted for p in proofs) >= 20


def test_certify(mini):
    report = mini.certify()
    assert report["problems"] == []
    assert (report["rules"], report["herrings"], report["tasks"], report["examples"]) == (2, 1, 4, 1)
    assert report["recall_only"] == 50.0  # t2 (naive proof) and t3 (decline) of four
    assert [r["tasks"] for r in report["rule_table"]] == [["t1"], ["t4"]]
    assert all(r["observable"] and r["witness"] for r in report["rule_table"])
    (u,) = report["unprovable"]
    assert u["task"] == "t3" and u["complete"] and not u["found"] and u["bounds"]["name"] == "small"


# ---------------------------------------------------------------- diagnostics


def error_of(text: str) -> SpecError:
    with pytest.raises(SpecError) as e:
        compile_text(text)
    return e.value


def replace(old: str, new: str) -> str:
    assert old in MINI
    return MINI.replace(old, new, 1)


def where(text: str, needle: str, offset: int = 0) -> tuple[int, int]:
    for n, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return n, line.index(needle) + 1 + offset
    raise AssertionError(needle)


@pytest.mark.parametrize("old, new, message, at", [
    ('decline "NO PROOF"', 'declne "NO PROOF"', "unknown section 'declne'", ("declne", 0)),
    ('schema "A & B |- B"', 'schema "A & B |- B ; frosh c"', "unknown side condition", ("frosh", 0)),
    ('schema "A & B |- B"', 'schema "A & & B |- B"', "expected a formula", ("& B |- B", 0)),
    ('rule r8 "and', 'rule r88 "and', "no infer r88", ("rule r88", 5)),
    ('schema "A & B |- B"', 'schema "A & B |- A"', "does not change infer r8", ("rule r8", 5)),
    ('herring h1 r21', 'herring h1 r8', "rule r8 patches it", ("herring h1", 8)),
    ('goal "Q"\n', 'goal "Q ->"\n', "expected a formula", ('"Q ->"', 5)),
    ('unprovable small', 'unprovable tiny', "no bounds block 'tiny'", ("unprovable tiny", 0)),
    ('    4. Q -> P   r12 2-3\n  """\n}', '    4. Q -> P   r12 2-2\n  """\n}', "example E1's proof is not accepted",
     ("4. Q -> P   r12 2-2", 0)),
    ('    3. Q        r9 1, 2\n  """\n  naive', '    3. Q        r8 1, 2\n  """\n  naive',
     "task t2's solution is not accepted", ("3. Q        r8 1, 2", 0)),
    ('bounds small { size 5', 'bounds small { sise 5', "unknown bound 'sise'", ("sise", 0)),
    ('  statement "r8 infers B from A & B."\n', '', "rule r8 has no statement", ("rule r8", 5)),
])
def test_mistakes_are_located(old, new, message, at):
    text = replace(old, new)
    err = error_of(text)
    assert message in err.message
    line, col = where(text, at[0], at[1])
    assert (err.span.line, err.span.col) == (line, col), err.render()
    rendered = err.render()
    assert rendered.startswith(f"mini.world:{line}:{col}: error:") and "^" in rendered


def test_program_sections_are_refused():
    err = error_of(MINI + '\nbase {\n  op ADD(a: int, b: int) -> int = a + b "adds"\n}\n')
    assert "no base block" in err.message
    err = error_of(MINI.replace('  goal "Q"\n  solution "1.', '  goal "Q"\n  expect 1\n  solution "1.'))
    assert "belongs to program worlds" in err.message


def test_a_naive_proof_must_check_under_the_manual(mini):
    text = MINI.replace('    3. Q        r9 1, 2\n  """\n}', '    3. Q        r8 1\n  """\n}')
    err = error_of(text)
    assert "naive is not accepted under the manual's rules" in err.message


def test_a_respelled_world():
    text = textwrap.dedent('''\
        world "Spelled" version 1
        kind proof
        syntax { and "AND"  implies "=>"  premise "given" }
        infer r1 "and elimination" { schema "A AND B |- A"  doc "Left conjunct." }
        task t1 band b { premises "P AND Q"  goal "P"  solution "1. P AND Q given\\n2. P r1 1" }
    ''')
    w = compile_text(text)
    assert w.verify("t1", "1. P & Q premise\n2. P r1 1").passed
    assert "`r1` and elimination: `A AND B |- A`" in w.manual
    assert w.probe("1. P AND Q given\n2. P r1 1").text == "accepted: P AND Q |- P (2 lines)"


def test_a_node_bound_that_is_hit_is_reported_not_certified():
    w = compile_text(MINI.replace("bounds small { size 5 depth 2 lines 12 nodes 50000 }",
                                  "bounds small { size 5 depth 2 lines 12 nodes 10 }"))
    out = w.search("t3")
    assert not out.complete and out.nodes == 10
    report = w.certify()
    (u,) = report["unprovable"]
    assert not u["complete"] and u["nodes"] == 10
    assert any("hit its node bound" in p for p in report["problems"])
    assert any("NOT certified" in n for n in report["notes"])
    assert w.verify("t3", "NO PROOF").passed  # the designation still grades; certification flags it


BACKWARDS = textwrap.dedent('''\
    world "Backwards" version 1
    kind proof
    infer r3 "reiteration" { schema "A |- A"  doc "Restate." }
    infer r9 "modus ponens" { schema "A -> B, A |- B"  doc "From A -> B and A infer B." }
    rule r9 "modus ponens runs backwards" {
      schema "A -> B, B |- A"
      statement "r9 infers A from A -> B and B."
    }
    bounds small { size 4 depth 1 lines 6 nodes 10000 }
    task t1 band b { premises "P -> Q", "Q"  goal "P"  solution "1. P -> Q premise\\n2. Q premise\\n3. P r9 1, 2" }
    task t2 band b {
      premises "P -> Q", "P"
      goal "Q"
      unprovable small
      naive "1. P -> Q premise\\n2. P premise\\n3. Q r9 1, 2"
    }
''')


def test_an_unprovable_goal_requires_the_rule_whose_knockout_proves_it():
    w = compile_text(BACKWARDS)
    assert w.requires("t1") == {"r9"} and w.requires("t2") == {"r9"}
    report = w.certify()
    assert report["problems"] == [] and report["recall_only"] == 0.0
    assert not w.verify("t2", w.task("t2").naive).passed and w.base_world().verify("t2", w.task("t2").naive).passed


def test_a_rule_is_required_when_knocking_it_out_changes_the_naive_verdict():
    """The reference proof avoids r8, but the manual-trusting answer fails because of it."""
    w = compile_text(textwrap.dedent('''\
        world "LeftRight" version 1
        language 3
        kind proof
        infer r4 "twist" { schema "A & B |- B & A"  doc "Swap the conjuncts." }
        infer r7 "right elimination" { schema "A & B |- B"  doc "Take the right conjunct." }
        infer r8 "left elimination" { schema "A & B |- A"  doc "Take the left conjunct." }
        rule r8 "left elimination takes the right conjunct" {
          schema "A & B |- B"
          statement "r8 infers B from A & B."
        }
        task t1 band b {
          premises "P & Q"
          goal "P"
          solution "1. P & Q premise\\n2. Q & P r4 1\\n3. P r7 2"
          naive "1. P & Q premise\\n2. P r8 1"
        }
        task t2 band b {
          premises "P & Q"
          goal "Q"
          solution "1. P & Q premise\\n2. Q r7 1"
          naive "1. P & Q premise\\n2. Q r7 1"
        }
    '''))
    assert w.knockout("r8").verify("t1", w.task("t1").solution).passed  # the reference does not need r8
    assert w.requires("t1") == {"r8"} and w.requires("t2") == set()
    # the honest floor (shared with the program kind): both are problems until declared (in language 3; an
    # older world is only warned of a one-task rule)
    problems = w.certify()["problems"]
    assert len(problems) == 2
    assert problems[0].startswith("rule r8 (left elimination takes the right conjunct) is required by one task "
                                  "only (t1)")
    assert problems[1].startswith("task t2: its naive (manual-trusting) answer passes in the true world")


SEEDED = (MINI.replace('seed 7\n', 'seed 7\nparam K = pick(1..9) default 1\nparam AE = "r" + str(7 + K)\n'
                       'param AND = pick(["&", "∧"]) default "&"\nsyntax { and "{AND}" }\n')
          .replace("infer r8 ", "infer AE ").replace("rule r8 ", "rule AE ")
          .replace("Q    r8 1", "Q    {AE} 1").replace('"r8 infers', '"{AE} infers'))


def test_rule_ids_and_spellings_drawn_from_the_seed():
    declared = compile_text(SEEDED)
    assert dict(declared.params)["AE"] == "r8" and declared.manual == compile_text(MINI).manual
    assert [r.id for r in declared.rules] == ["r8", "r12"] and declared.verify("t1", declared.task("t1").solution).passed
    other = compile_spec(parse_spec(SEEDED, "mini.world"), seed=3)
    rid = dict(other.params)["AE"]
    assert rid != "r8" and rid in other.infer and "r8" not in other.infer
    assert [r.id for r in other.rules] == [rid, "r12"] and other.rule(rid).statement == f"{rid} infers B from A & B."
    assert f"`{rid}` and elimination: `A ∧ B |- A`" in other.manual
    assert "P ∧ Q |- Q" in other.task("t1").prompt
    assert other.verify("t1", other.task("t1").solution).passed
    assert other.verify("t1", f"1. P & Q premise\n2. Q {rid} 1").passed  # the other spellings stay accepted
    assert other.probe(f"1. P ∧ Q premise\n2. P {rid} 1").text.startswith(f"rejected at line 2 ({rid})")


@pytest.mark.parametrize("param, message", [
    ("param AE = 3", "AE names a param whose value 3 is not a rule id"),
    ('param AE = "r 8"', "AE names a param whose value 'r 8' is not a rule id"),
    ('param AE = "r12"', "rule id r12 is declared twice"),
])
def test_a_rule_id_param_must_hold_a_fresh_rule_id(param, message):
    text = SEEDED.replace('param AE = "r" + str(7 + K)', param)
    with pytest.raises(SpecError, match=message):
        compile_text(text)


def test_unprovrec_surface(mini):
    """What a runner needs for UnprovRec: which tasks are unprovable, and whether an answer is a
    correct refusal."""
    assert mini.unprovable_tasks == ("t3",)
    assert mini.unprovable("t3") and not mini.unprovable("t1")
    assert mini.correct_refusal("t3", "NO PROOF") and mini.correct_refusal("t3", "`no proof.`")
    assert not mini.correct_refusal("t1", "NO PROOF")  # a refusal of a provable goal
    assert not mini.correct_refusal("t3", "1. P -> Q premise") and not mini.correct_refusal("t3", None)
    assert mini.verify("t3", "NO PROOF").detail == DECLINED_RIGHT
    assert mini.verify("t1", "NO PROOF").detail == DECLINED_WRONG


def test_the_report_example_is_an_unpatched_rule_of_the_manual(mini):
    rid, schema = mini.report_example
    assert (rid, schema) == ("r5", "A, B |- A & B ; distinct")  # the first unpatched rule citing two lines
    assert f"`{rid}: {schema}`" in mini.report_instructions
    assert rid not in mini.patches and not any(mini.grade_equation(r.id, schema) for r in mini.rules)


def test_a_set_label_must_agree_with_the_unprovable_field():
    with pytest.raises(SpecError, match="task t3 is labelled set provable, but its goal is designated unprovable"):
        compile_text(MINI.replace("task t3 band decline {", "task t3 band decline set provable {"))
    assert compile_text(MINI.replace("task t3 band decline {", "task t3 band decline set unprovable {"))


# ---------------------------------------------------------------- honest floor and several solutions


FLOOR = textwrap.dedent('''\
    world "Floor" version 1
    kind proof
    param R = "r8"
    infer r3 "reiteration" { schema "A |- A"  doc "Restate." }
    infer r4 "twist" { schema "A & B |- B & A"  doc "Swap the conjuncts." }
    infer r7 "right elimination" { schema "A & B |- B"  doc "Take the right conjunct." }
    infer R "left elimination" { schema "A & B |- A"  doc "Take the left conjunct." }
    rule R "left elimination takes the right conjunct" {
      schema "A & B |- B"
      statement "{R} infers B from A & B."
      allow "only t1 tells {R} apart"
    }
    bounds small { size 4 depth 1 lines 6 nodes 10000 }
    task t1 band b {
      premises "P & Q"
      goal "P"
      solution "1. P & Q premise\\n2. Q & P r4 1\\n3. P r7 2"
      naive "1. P & Q premise\\n2. P r8 1"
    }
    task t2 band b {
      allow "a control: r7 checks as documented"
      premises "P & Q"
      goal "Q"
      solution "1. P & Q premise\\n2. Q r8 1"
      solution "1. P & Q premise\\n2. Q r7 1"
      naive "1. P & Q premise\\n2. Q r7 1"
    }
    task t3 band b {
      allow "an invalid sequent: no rule proves it"
      premises "P"
      goal "Q"
      unprovable small
    }
''')


def test_allow_declares_floor_exceptions_as_notes():
    w = compile_text(FLOOR)
    report = w.certify()
    assert report["problems"] == []
    declared = [n for n in report["notes"] if n.startswith("declared exception")]
    assert declared == [
        "declared exception: rule r8 (left elimination takes the right conjunct) is required by one task only "
        "(t1): only t1 tells r8 apart",
        "declared exception: task t2: its naive (manual-trusting) answer passes in the true world: "
        "a control: r7 checks as documented",
        "declared exception: task t3: its naive (manual-trusting) answer passes in the true world: "
        "an invalid sequent: no rule proves it"]
    assert report["recall_only"] == round(100 * 2 / 3, 1)


def test_an_allow_that_excuses_nothing_is_noted():
    text = FLOOR.replace('  naive "1. P & Q premise\\n2. Q r7 1"\n', '')
    report = compile_text(text).certify()  # t2 has no naive answer now: nothing for its allow to excuse
    assert report["problems"] == []
    assert any(n.startswith("task t2 declares an exception it does not need") for n in report["notes"])


def test_every_solution_is_checked_and_a_rule_an_alternative_avoids_is_not_required():
    w = compile_text(FLOOR)
    assert w.task_data["t2"].solutions == ("1. P & Q premise\n2. Q r8 1", "1. P & Q premise\n2. Q r7 1")
    assert w.task("t2").solution == w.task_data["t2"].solutions[0]
    assert not w.knockout("r8").verify("t2", w.task("t2").solution).passed  # the first solution needs r8 ...
    assert w.requires("t2") == set()  # ... but the second avoids it
    text = FLOOR.replace('  solution "1. P & Q premise\\n2. Q r7 1"\n',
                         '  solution "1. P & Q premise\\n2. P & Q r3 1"\n')
    err = error_of(text)
    assert "task t2's solution 2 proves P & Q, not the goal Q" in err.message
    line, col = where(text, 'solution "1. P & Q premise\\n2. P & Q r3 1"', len("solution "))
    assert (err.span.line, err.span.col) == (line, col)


def test_an_unprovable_task_takes_only_the_decline_as_solution():
    text = FLOOR.replace("  unprovable small\n", '  unprovable small\n  solution "1. P premise"\n')
    err = error_of(text)
    assert "its solution is the decline form" in err.message
    assert err.span.line == where(text, 'solution "1. P premise"')[0]


@pytest.mark.parametrize("old, new, message", [
    ('  allow "a control: r7 checks as documented"\n', '  allow ""\n', "allow takes one non-empty string"),
    ('  allow "a control: r7 checks as documented"\n',
     '  allow "a"\n  allow "b"\n', "task t2 declares allow twice"),
    ('  allow "only t1 tells {R} apart"\n', '  alow "x"\n', "unknown rule field 'alow'"),
])
def test_allow_mistakes_are_located(old, new, message):
    text = FLOOR.replace(old, new)
    assert text != FLOOR
    err = error_of(text)
    assert message in err.message and err.span.line > 0, err.render()


def test_a_decline_the_manual_can_refute_is_the_trap():
    """When the manual's rules prove a designated unprovable goal, the naive answer is not a decline."""
    text = BACKWARDS.replace('  naive "1. P -> Q premise\\n2. P premise\\n3. Q r9 1, 2"\n', "")
    assert text != BACKWARDS  # t2's naive answer defaults to the decline
    report = compile_text(text).certify()
    (trap,) = [p for p in report["problems"] if "the trap" in p]
    assert "the manual's rules prove its goal, so a manual-trusting answer is that proof (the trap)" in trap
    assert trap.startswith("task t2: ") and trap.endswith("3. Q    r9 1, 2")  # the manual's proof, found


def test_alienlogic_declares_its_honest_floor():
    """Every AlienLogic task a manual-trusting answer solves says why (its 11 controls), and no
    declaration is stale: the certifier's floor check (checked whole by tests/test_alienlogic.py's
    certification) has nothing to flag. No unprovable goal is among them: the manual's rules prove
    each one, so a manual-trusting agent writes that proof and earns nothing."""
    w = load_world("alienlogic")
    true = w.true_world()
    solved = {t.id for t in true.tasks if true.verify(t, t.naive).passed}
    declared = {tid for tid, d in true.task_data.items() if d.allow}
    assert solved == declared and len(solved) == 11
    assert not solved & set(true.unprovable_tasks)
    assert all(true.task_data[tid].allow.startswith("a control") for tid in solved)
    assert not w.rule_allow  # every patched rule is required by two tasks without a declaration
