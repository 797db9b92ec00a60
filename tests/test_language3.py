"""The spec language, third edition (issue 24): what authors write that the second edition refused."""
from __future__ import annotations

import pytest

from worldspec.meta import MetaCompiler
from worldspec.parser import parse_expr, parse_spec
from worldspec.values import Ctx


def value(text: str):
    return MetaCompiler().unit("<test>", [], parse_expr(text))(Ctx(), [])


@pytest.mark.parametrize("text, want", [
    ("6.674e-11", 6.674e-11), ("2E3", 2000.0), ("1e0", 1.0), ("1.5e+2", 150.0), ("9.81 * 1e-3", 9.81 * 1e-3),
    ("-2.5e-10", -2.5e-10), ("1e308", 1e308),
])
def test_scientific_literals(text, want):
    got = value(text)
    assert isinstance(got, float) and got == want


def test_a_scientific_literal_too_large_is_located():
    from worldspec.diagnostics import SpecError
    with pytest.raises(SpecError) as info:
        parse_spec('world "W" version 1\nparam G = 1e400\n', "w.world")
    assert "too large" in info.value.render() and "w.world:2:" in info.value.render()


def test_scientific_params_in_a_spec():
    spec = parse_spec('world "W" version 1\nkind blackbox\nparam G = 6.674e-11\n', "w.world")
    assert spec.params[0].name == "G"


def test_a_def_named_like_a_builtin_shadows_it_with_a_warning(tmp_path):
    """A builtin added by a later release never breaks a world with a def of that name (issue 24)."""
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from worldspec.cli import main
    demo = Path(__file__).resolve().parents[1] / "worlds" / "demo.world"
    world = tmp_path / "w.world"
    world.write_text(demo.read_text() + "\ndef xor(a, b) = a\n")
    r = CliRunner().invoke(main, ["check", str(world)])
    assert r.exit_code == 0, r.output
    assert f"{world}:" in r.output and "warning: def xor shadows the builtin of the same name" in r.output
    r = CliRunner().invoke(main, ["check", str(world), "--json"])
    (w,) = json.loads(r.stdout)["spec_warnings"]
    assert w["severity"] == "warning" and w["message"].startswith("def xor shadows")


def test_the_def_is_what_a_call_reaches():
    from worldspec.compiler.common import meta_compiler
    spec = parse_spec('world "W" version 1\nkind blackbox\ndef len(x) = 7\n', "w.world")
    mc = meta_compiler(spec, {})
    unit = mc.unit("<t>", [], parse_expr("len([1, 2]) + 0"))
    assert unit(Ctx(), []) == 7


# ---------------------------------------------------------------- infix and prefix operators (program worlds)

from pathlib import Path  # noqa: E402

from worldspec.compiler import load_world  # noqa: E402
from worldspec.diagnostics import SpecError as _SpecError, SpecErrors as _SpecErrors  # noqa: E402

LANG3 = Path(__file__).resolve().parent / "worlds" / "lang3"
PYLIKE = str(LANG3 / "pylike.world")


@pytest.fixture(scope="module")
def pylike():
    return load_world(PYLIKE)


@pytest.mark.parametrize("program, printed", [
    ("print(1 + 2 * 3)", "7"), ("print((1 + 2) * 3)", "9"),
    ("print(10 - 4 - 3, 10 - 4 + 3)", "9 9"),  # P5: binary - groups from the right
    ("print(100 // 10 // 5)", "2"),
    ("print(-7 % 3, 7 % -3, 8 % 3)", "-1 1 2"),  # P1: the sign of the dividend
    ("print(2 ** 3)", "7"), ("print(2 ** 3 ** 2)", "255"),  # P2, and ** groups right to left
    ("print(-2 ** 2)", "-3"),  # unary minus binds looser than **, as in Python
    ("print(-5 + 1)", "-4"), ("print(- -5)", "-5"),  # P4: a negative stays negative
    ("print(not 1 == 2, not 0)", "true true"),
    ("print(2 and 3, 0 and 3)", "true false"),  # P3
    ("print(0 or 5, 4 or 5)", "5 4"),
    ("print(1 < 2 and 2 < 3 or 1 // 0 == 0)", "true"),  # or never computes its right side here
    ("xs = [1, 2, 3]\nprint(xs[1 + 1] * 2)", "6"),
])
def test_operators_parse_with_their_precedence_and_run_as_the_ops(pylike, program, printed):
    fb = pylike.probe(program)
    assert fb.text.strip() == printed, fb.text




@pytest.mark.parametrize("program, true, knocked, manual", [
    ("x = 0 - 3\nprint(-x)", "-3", "3", "3"),  # P4: unary minus of a negative number leaves it negative
    ("print(- -5, -(2 - 9), -4)", "-5 -7 -4", "5 7 -4", "5 7 -4"),  # a negative literal is NEG of its digits
    ("x = 3\nprint(-x, -x * 2, 1 - -x)", "-3 -6 4", "-3 -6 4", "-3 -6 4"),  # -x of a positive x: as documented
    ("print(-2 ** 2)", "-3", "-3", "-4"),  # NEG after ** (Python's precedence); P2 makes 2 ** 2 three
])
def test_unary_minus_is_perturbed_by_its_rule(pylike, program, true, knocked, manual):
    assert pylike.probe(program).text.strip() == true
    assert pylike.knockout("P4").probe(program).text.strip() == knocked
    assert pylike.base_world().probe(program).text.strip() == manual


def test_a_syntax_rule_groups_the_true_worlds_programs_and_not_the_manuals(pylike):
    """P5 replaces the entry `- SUB left 10` with `- SUB right 11`: the true world and every knockout but P5's
    parse with it; the manual's world and P5's knockout with the syntax block's table."""
    program = "print(10 - 3 - 2, 1 + 2 * 3, 2 * 3 ** 2, 2 ** 3 ** 2)"
    assert pylike.probe(program).text.strip() == "9 7 16 255"  # 10 - (3 - 2); P2 makes 3 ** 2 eight
    assert pylike.knockout("P5").probe(program).text.strip() == "5 7 16 255"  # the knockout tells P5 apart
    assert pylike.knockout("P2").probe(program).text.strip() == "9 7 18 512"  # ...and keeps P5's grouping
    assert pylike.base_world().probe(program).text.strip() == "5 7 18 512"
    assert pylike.surface is pylike.knockout("P2").surface  # one parser per table, shared
    assert pylike.knockout("P5").surface is pylike.base_world().surface
    assert "- `a - b` is `SUB(a, b)` (precedence 10, grouping left to right)." in pylike.manual  # the base's
    rule = pylike.rule("P5")
    assert (rule.target, rule.equation) == ("infix -", "- SUB right 11")


def test_a_syntax_rule_is_observable_required_and_graded_by_its_grouping(pylike):
    from worldspec.compiler.program.certify import find_witness
    witness = find_witness(pylike, "P5")
    assert witness and pylike.probe(witness).text != pylike.knockout("P5").probe(witness).text
    assert {t for t in ("T9", "T10") if "P5" in pylike.requires(t)} == {"T9", "T10"}
    assert not any("P5" in pylike.requires(t.id) for t in pylike.tasks if t.id not in ("T9", "T10"))
    # a stated entry is right when its table groups every program as the rule's does
    for stated in ("- SUB right 11", 'infix "- SUB right 15"', "syntax infix - SUB right 19"):
        assert pylike.grade_equation("P5", stated), stated
    for stated in ("- SUB left 11", "- SUB right 10", "- SUB right 20", "- ADD right 11", "(- a b)"):
        assert not pylike.grade_equation("P5", stated), stated


def test_a_syntax_rule_is_reported_as_its_entry(pylike):
    from worldspec.runner.answers import fenced, grade_rule_report, reportable_rules, rule_line, slot_instructions
    oracle = fenced("\n".join(rule_line(r) for r in reportable_rules(pylike)))
    assert "P5 := - SUB right 11" in oracle
    assert grade_rule_report(pylike, oracle)["correct"] == ["P1", "P2", "P3", "P4", "P5"]
    assert grade_rule_report(pylike, fenced("P5 := - SUB left 10"))["correct"] == []
    assert "P5 := ??    # the actual behaviour of the infix operator - (state its syntax entry" in slot_instructions(pylike)


def syntax_rule_world(syntax: str, rule: str, base: str = "") -> str:
    return world_with(syntax, base) + 'rule P1 "grouping" {\n  ' + rule + '\n  statement "s"\n}\n'


def test_a_program_one_table_refuses_is_a_syntax_error_in_that_variant_only(tmp_path):
    p = tmp_path / "w.world"
    p.write_text(syntax_rule_world('infix "== EQ none 5"\n  infix "+ ADD left 10"', 'syntax infix "== EQ left 5"',
                                   '  op EQ(a: any, b: any) -> bool = a == b  "a equals b."\n'))
    w = load_world(str(p), cache=False)
    assert w.probe("print(1 == 1 == true, 1 + 1 == 2)").text.strip() == "true true"
    fb = w.base_world().probe("print(1 == 1 == true)")
    assert fb.status == "parse_error" and "unexpected '=='" in fb.text
    assert w.base_world().probe("print(1 + 1 == 2)").text.strip() == "true"


@pytest.mark.parametrize("rule, message", [
    ('syntax prefix "~ NEG 40"', "rule P1 replaces prefix '~', which the syntax block does not declare"),
    ('syntax infix "- ADD left 10"', "rule P1 replaces infix '-', which the syntax block does not declare"),
    ('syntax prefix "- ADD 40"', "rule P1 makes prefix '-' call ADD; the syntax block's calls NEG"),
    ('syntax prefix "- NEG 30"', "the syntax block's own precedence"),
    ('syntax infix "+ ADD left"', "is not of the form"),
    ("syntax list on", "a rule may replace an operator entry only"),
    ('syntax infix "<> ADD right 10"', "with rule P1: infix '<>' is right but '+', of the same precedence 10"),
    ('syntax prefix "- NEG 40"\n  equation "(- 0 a)"', "its entry is its equation"),
])
def test_syntax_rules_are_checked(tmp_path, rule, message):
    p = tmp_path / "w.world"
    p.write_text(syntax_rule_world('infix "+ ADD left 10"\n  infix "<> ADD left 20"\n  prefix "- NEG 30"', rule))
    with pytest.raises((_SpecError, _SpecErrors)) as info:
        load_world(str(p), cache=False)
    text = info.value.render()
    assert message in text and "w.world:" in text and "^" in text, text


def test_one_entry_takes_one_syntax_rule(tmp_path):
    p = tmp_path / "w.world"
    p.write_text(syntax_rule_world('infix "+ ADD left 10"\n  prefix "- NEG 30"', 'syntax prefix "- NEG 40"')
                 + 'rule P2 "again" {\n  syntax prefix "- NEG 50"\n  statement "s"\n}\n')
    with pytest.raises((_SpecError, _SpecErrors)) as info:
        load_world(str(p), cache=False)
    assert "prefix '-' is replaced by both P1 and P2" in info.value.render()


def test_non_associative_comparisons_do_not_chain(pylike):
    fb = pylike.probe("print(1 < 2 < 3)")
    assert fb.status == "parse_error" and "unexpected '<'" in fb.text


def test_a_long_operator_chain_is_refused_before_it_is_compiled(pylike):
    ok = pylike.probe("print(" + " + ".join(["1"] * 100) + ")")
    assert ok.text.strip() == "100"
    deep = pylike.probe("print(" + " + ".join(["1"] * 102) + ")")
    assert "nests more than 100 operators" in deep.text


def test_the_world_certifies():
    from click.testing import CliRunner

    from worldspec.cli import main
    r = CliRunner().invoke(main, ["check", PYLIKE])
    assert r.exit_code == 0, r.output
    assert "certified: no problems" in r.output and "tasks: 2" in r.output
    assert "P4     unary minus leaves a negative number negative" in r.output
    assert "P5     - groups from the right" in r.output


def test_the_manual_tells_each_symbol_and_its_op():
    from click.testing import CliRunner

    from worldspec.cli import main
    text = CliRunner().invoke(main, ["manual", PYLIKE]).output
    assert "- `a % b` is `MOD(a, b)` (precedence 20, grouping left to right)." in text
    assert "- `-a` is `NEG(a)` (precedence 30)." in text
    assert "sign of the dividend" not in text  # the manual is the base semantics


def world_with(syntax: str, base: str = "") -> str:
    return ('world "W" version 1\nkind program\nsyntax {\n' + syntax + '\n}\nbase {\n'
            '  op ADD(a: int, b: int) -> int = a + b  "a plus b."\n'
            '  op NEG(a: int) -> int = 0 - a  "minus a."\n' + base + '}\n')


@pytest.mark.parametrize("syntax, message", [
    ('infix "+ PLUS left 10"', "calls PLUS, which is no op of the base"),
    ('infix "- NEG left 10"', "gives NEG 2 operand(s), but NEG takes 1"),
    ('prefix "- ADD 30"', "gives ADD 1 operand(s), but ADD takes 2"),
    ('infix "+ ADD sideways 10"', "associativity is left, right or none"),
    ('infix "+ ADD left ten"', "precedence 'ten' is not a whole number"),
    ('infix "+ ADD 10"', "is not of the form"),
    ('infix "= ADD left 10"', "cannot be an operator"),
    ('infix "+ ADD left 10"\n  infix "+ ADD right 20"', "is declared twice"),
    ('infix "+ ADD left 10"\n  infix "<> ADD right 10"', "of the same precedence 10, is left"),
    ('infx "+ ADD left 10"', "Did you mean infix?"),
])
def test_operator_declarations_are_checked(tmp_path, syntax, message):
    p = tmp_path / "w.world"
    p.write_text(world_with(syntax))
    with pytest.raises(_SpecError) as info:
        load_world(str(p))
    assert message in info.value.render() and "w.world:" in info.value.render()


# ---------------------------------------------------------------- box tolerances and shown precision

from hypothesis import given, settings, strategies as st  # noqa: E402

from worldspec.compiler.blackbox.grading import Grading  # noqa: E402
from worldspec.values import show  # noqa: E402

MAGNITUDES = st.floats(min_value=1e-15, max_value=1e15, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(MAGNITUDES, st.sampled_from([1, -1]), st.floats(min_value=1e-6, max_value=0.5), st.floats(-3, 3))
def test_a_tolerance_accepts_exactly_what_it_says(v, sign, r, k):
    """An answer a is accepted iff |a - v| <= r * |v| (relative) or <= r (absolute), at every magnitude."""
    v *= sign
    for mode, bound in (("relative", r * abs(v)), ("absolute", r)):
        a = v + k * bound
        g = Grading(tolerance=r, mode=mode)
        assert g.close(a, v) == (abs(a - v) <= bound), (mode, v, r, a)


def test_zero_is_not_within_a_relative_tolerance_of_a_tiny_value():
    g = Grading(tolerance=0.01, mode="relative")
    assert not g.close(0.0, 2.5e-10) and not g.matches(2.5e-10, "0")
    assert g.matches(2.50275e-10, show(2.50275e-10)) and g.close(2.51e-10, 2.50275e-10)
    assert Grading(tolerance=0.01, mode="absolute").close(0.0, 2.5e-10)


@pytest.mark.parametrize("v, shown", [(2.50275e-10, "2.50275e-10"), (6.674e-11, "6.674e-11"),
                                      (0.1 + 0.2, "0.3"), (1234.5678901234, "1234.5678901234"),
                                      (1.23456789012345e-7, "1.23456789e-07"), (0.0, "0.0"), (1e12, "1000000000000.0")])
def test_shown_floats_keep_their_significant_digits(v, shown):
    assert show(v) == shown


def test_a_placeholder_that_names_no_param_is_a_warning(tmp_path):
    """Issue 31 item 7: a `{DD}` typo in prose certified and reached the agent verbatim."""
    from click.testing import CliRunner

    from worldspec.cli import main
    demo = (Path(__file__).resolve().parents[1] / "worlds" / "demo.world").read_text()
    world = tmp_path / "w.world"
    world.write_text(demo.replace('summary "A tiny calculation language whose manual is wrong in five places."',
                                  'summary "A tiny language: {ZERO} is zero, {ZEROO} a typo, {name} a template."'))
    r = CliRunner().invoke(main, ["check", str(world)])
    assert r.exit_code == 0, r.output
    assert "warning: {ZEROO} names no param" in r.output and "Did you mean ZERO?" in r.output
    assert "{ZERO} names" not in r.output and "{name}" not in r.output.split("warning")[-1].split("\n")[0]
