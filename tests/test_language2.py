"""The spec language, second edition (issue 11): control-flow hooks, state and mutation, the
program surface, layered rules with prior(), recursive and lazy meta-language definitions,
diagnostics, and comments in programs.

Each feature is a rule of a world under tests/worlds/lang/ that `worldspec check` certifies, and
a probe here shows what it does.
"""
from __future__ import annotations

import functools
import json
import os
import random
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.program import kernel
from worldspec.compiler.program.certify import find_witness
from worldspec.compiler.program.probegen import Chooser, ProbeGenerator
from worldspec.diagnostics import SpecError
from worldspec.parser import parse_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANG = os.path.join(ROOT, "tests", "worlds", "lang")
BUNDLED_PROGRAM_WORLDS = ("aliencode", "demo")


# ---------------------------------------------------------------- comments (issue 12)


def with_comments(program: str, rng: random.Random) -> str:
    """The program with comment lines, blank lines and end-of-line comments added at random."""
    out = []
    for line in program.splitlines():
        for _ in range(rng.randint(0, 2)):
            out.append(rng.choice(["", "   ", " " * rng.randint(0, 12) + "# a note", "#", "\t# tab"]))
        tail = rng.choice(["", "", "  # why", "\t#x"]) if line.strip() and not line.rstrip().endswith("\\") else ""
        out.append(line + tail)
    out.append(rng.choice(["", "# the end", "    # indented end"]))
    return "\n".join(out)


@pytest.mark.parametrize("name", BUNDLED_PROGRAM_WORLDS)
def test_comment_and_blank_lines_never_change_a_verdict(name):
    world = load_world(os.path.join(ROOT, "worlds", f"{name}.world"))
    true, base = world.true_world(), world.base_world()
    rng = random.Random(f"comments:{name}")
    checked = 0
    for t in true.tasks:
        if t.shape == "predict":
            continue
        for w, answer in ((true, t.solution), (base, t.naive)):
            if not answer:
                continue
            want = w.verify(t, answer)
            for _ in range(2):
                commented = with_comments(answer, rng)
                got = w.verify(t, commented)
                assert got.passed == want.passed and got.detail == want.detail, (t.id, commented, got)
            checked += 1
    assert checked >= 10


def test_a_commented_answer_scores_like_the_plain_one(demo):
    program = "SET x AS 1\n# a comment after a statement\n\nUPON x:\n    EMIT(x)\n    # inside the block\n# after it\n"
    assert demo.probe(program).text == str(1 + dict(demo.params)["K"])


# ---------------------------------------------------------------- every test world certifies


@functools.cache
def lang(name: str):
    """A world of tests/worlds/lang, compiled once."""
    return load_world(os.path.join(LANG, f"{name}.world"))


def _world(name: str):
    @pytest.fixture(scope="module", name=name)
    def world():
        return lang(name)
    return world


control, state, surface, layers, meta = map(_world, ("control", "state", "surface", "layers", "meta"))


LANG_WORLDS = {
    "control": ["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"],
    "state": ["S1", "S2", "S3", "S4", "S5", "S6"],
    "surface": ["F1", "F2", "F3", "F4"],
    "layers": ["L1", "L2", "L3"],
    "meta": ["M1", "M2", "M3", "M4"],
}


@pytest.mark.parametrize("name", sorted(LANG_WORLDS))
def test_worldspec_check_certifies_each_language_world(name):
    result = CliRunner().invoke(main, ["check", os.path.join(LANG, f"{name}.world"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["problems"] == []
    table = {r["id"]: r for r in report["rule_table"]}
    assert sorted(table) == sorted(LANG_WORLDS[name])
    for rid, row in table.items():
        assert row["observable"] and len(row["tasks"]) >= 2, (rid, row)


def shows(world, rule: str, program: str, true_text: str, knocked_text: str) -> None:
    """The probe prints true_text in the true world and knocked_text with the rule knocked out."""
    assert world.probe(program).text == true_text, world.probe(program).text
    assert world.knockout(rule).probe(program).text == knocked_text, world.knockout(rule).probe(program).text


# ---------------------------------------------------------------- control flow (control.world)


def test_while_loops_run_once_more_and_long_for_loops_stop_short(control):
    counting = "i = 0\nwhile LESS(i, 2):\n    print(i)\n    i = ADD(i, 1)"
    shows(control, "C1", counting, "0\n1\n2", "0\n1")
    shows(control, "C2", "for x in [1, 2, 3, 4, 5]:\n    print(x)", "1\n2\n3\n4", "1\n2\n3\n4\n5")
    # a while loop whose condition fails at once still makes its one extra pass
    assert control.probe("while false:\n    print(1)").text == "1"
    # a short for loop is untouched
    assert control.probe("for x in [1, 2, 3]:\n    print(x)").text == "1\n2\n3"


def test_two_rules_on_passes_are_two_layers_and_knockout_removes_exactly_one(control):
    both = "for x in [1, 2, 3, 4]:\n    print(x)\nwhile false:\n    print(9)"
    assert control.probe(both).text == "1\n2\n3\n9"
    assert control.knockout("C1").probe(both).text == "1\n2\n3"  # C2's layer stays
    assert control.knockout("C2").probe(both).text == "1\n2\n3\n4\n9"  # C1's layer stays
    assert control.base_world().probe(both).text == "1\n2\n3\n4"
    assert control.origin("hook passes") == "C2" and control.knockout("C2").origin("hook passes") == "C1"


def test_break_acts_as_continue_only_inside_a_nested_loop(control):
    nested = "n = 0\nfor a in [1]:\n    for b in [1, 2, 3]:\n        n = ADD(n, 1)\n        break\nprint(n)"
    shows(control, "C3", nested, "3", "1")
    flat = "n = 0\nfor b in [1, 2, 3]:\n    n = ADD(n, 1)\n    break\nprint(n)"
    assert control.probe(flat).text == "1"
    # continue is untouched
    assert control.probe("for a in [1]:\n    for b in [1, 2]:\n        continue\n        print(b)\nprint(0)").text == "0"


def test_elifs_are_tested_bottom_up_and_else_always_runs(control):
    chain = 'if false:\n    print("a")\nelif true:\n    print("b")\nelif true:\n    print("c")'
    shows(control, "C4", chain, "c", "b")
    shows(control, "C5", 'if true:\n    print("a")\nelse:\n    print("b")', "a\nb", "a")
    # a branch that leaves a loop does not go on to the else
    assert control.probe('for x in [1]:\n    if true:\n        break\n    else:\n        print("e")\nprint(0)').text == "0"


def test_functions_give_their_last_expression_their_first_argument_and_receive_reversed_arguments(control):
    shows(control, "C6", "def f(x):\n    ADD(x, 1)\nprint(f(1))", "2", "none")
    shows(control, "C7", "def f(a, b):\n    return SUB(a, b)\nprint(f(5, 3))", "-2", "2")
    shows(control, "C8", "def f(a):\n    return\nprint(f(7))", "7", "none")
    # the first argument is the first the function receives: after the reversal
    assert control.probe("def f(a, b):\n    return\nprint(f(1, 2))").text == "2"


def test_a_statement_rule_reads_the_pass_of_its_loop(control):
    shows(control, "C9", "for x in [1, 2]:\n    print(x, x)", "1,1\n2 2", "1 1\n2 2")
    # the innermost loop's pass counts; a function body is not in a loop
    nested = "for a in [1, 2]:\n    for b in [3, 4]:\n        print(a, b)"
    assert control.probe(nested).text == "1,3\n1 4\n2,3\n2 4"
    assert control.probe("def f():\n    print(1, 2)\nfor x in [1]:\n    f()").text == "1 2"


VARIANT = '''world "Variant" version 1
kind program
seed 1
syntax {
  list on
}
base {
  hook passes(kind: str, n: int) -> int = n  "passes"
  hook jump(word: str) -> str = word  "jumps"
  hook no_return(last: any, args: list) -> any = none  "no return"
  hook output(parts: list[str]) -> str = join(parts, " ")  "output"
  op ADD(a: int, b: int) -> int = a + b  "a plus b."
}
budget { units_per_call 50 }
'''


def variant(body: str, equation: str = "0"):
    """A small world with one rule (the variants of the control-flow rules)."""
    text = VARIANT + f'rule V1 "variant" {{\n  {body}\n  statement "s"\n  equation "{equation}"\n}}\n'
    return compile_spec(parse_spec(text, "variant.world"))


def test_variants_of_the_control_flow_rules():
    fewer = variant('hook passes(kind, n) = if kind == "for" then n - 1 else n')
    assert fewer.probe("for x in [1, 2, 3]:\n    print(x)").text == "1\n2"
    extra = variant('hook passes(kind, n) = n + 1')
    assert extra.probe("for x in [1, 2]:\n    print(x)").text == "1\n2\n2"  # the last element again
    assert extra.probe("for x in []:\n    print(x)").text == "none"
    reverse = variant('hook jump(word) = if word == "continue" then "break" else word')
    assert reverse.probe("n = 0\nfor x in [1, 2, 3]:\n    n = ADD(n, 1)\n    continue\nprint(n)").text == "1"
    first = variant("hook no_return(last, args) = get(args, 0)")
    assert first.probe("def f(a, b):\n    a\nprint(f(4, 5))").text == "4"
    depth = variant('hook output(parts) = if loop_depth > 1 or in_function then join(parts, "+") else join(parts, " ")')
    assert depth.probe("print(1, 2)\nfor a in [1]:\n    print(1, 2)\n    for b in [1]:\n        print(1, 2)").text == \
        "1 2\n1 2\n1+2"
    assert depth.probe("def f():\n    print(1, 2)\nf()").text == "1+2"
    # a jump value the kernel refuses is a spec error at the rule (issue 24; it was the probe's runtime error)
    with pytest.raises(SpecError, match='jump\\("break"\\) gives "leave", and the kernel needs one of'):
        variant('hook jump(word) = "leave"')
    # a value refused only outside the contexts tried at compile time is still the probe's error
    deep = variant('hook jump(word) = if loop_depth > 5 then "leave" else word')
    nest = "for a in [1]:\n" + "".join("    " * k + f"for x{k} in [1]:\n" for k in range(1, 6)) + "    " * 6 + "break"
    assert deep.probe(nest).text == 'error: line 7: the jump rule must give "break", "continue" or "pass"'


# ---------------------------------------------------------------- state and mutation (state.world)


def test_an_updating_operator_writes_back_through_a_rule(state):
    program = "PUT [3, 1] INTO xs\nPUSH(xs, 2)\nSHOW(xs)"
    shows(state, "S1", program, "[1, 2, 3]", "[2, 3, 1]")
    assert state.knockout("S2").probe(program).text == "[1, 2, 3]"
    assert state.base_world().probe(program).text == "[3, 1, 2]"
    # inside an expression it is an ordinary operator: nothing is written back
    assert state.probe("PUT [3, 1] INTO xs\nSHOW(PUSH(xs, 2))\nSHOW(xs)").text == "[2, 3, 1]\n[3, 1]"
    # a function updates the program's variable where it lives
    assert state.base_world().probe("PUT [1] INTO xs\ndef f():\n    PUSH(xs, 5)\nf()\nSHOW(xs)").text == "[1, 5]"


def test_element_multiple_and_loop_assignment_have_hooks(state):
    shows(state, "S3", "PUT [1, 2, 3] INTO xs\nSET xs AT 1 TO 9\nSHOW(xs)", "[9, 2, 3]", "[1, 9, 3]")
    shows(state, "S4", "SET a, b TO 1, 2\nSHOW(a, b)", "2 1", "1 2")
    shows(state, "S5", "EACH a, b IN [[1, 2], [3, 4]]:\n    SHOW([a, b])", "[2, 1]\n[4, 3]", "[1, 2]\n[3, 4]")
    assert state.probe("SET a, b TO [5, 6, 7]").text == "error: line 1: cannot unpack 3 values into 2 names"
    assert state.probe("SET a, a TO 1, 2").status == "parse_error"


def test_a_rule_keyed_on_a_variable_name(state):
    shows(state, "S6", "PUT 3 INTO q\nSHOW(q)", "30", "3")
    assert state.probe("PUT 3 INTO p\nSHOW(p)").text == "3"


@pytest.mark.parametrize("letter", ["a", "q", "z", "K"])
def test_a_rule_on_names_certifies_whatever_letter_the_author_picks(letter):
    text = open(os.path.join(LANG, "state.world"), encoding="utf-8").read()
    text = text.replace('startswith(name, \\"q\\")', f'startswith(name, \\"{letter}\\")')
    text = text.replace('startswith(name, "q")', f'startswith(name, "{letter}")')
    world = compile_spec(parse_spec(text, os.path.join(LANG, "state.world")))
    witness = find_witness(world, "S6")
    assert witness is not None
    assert world.true_world().probe(witness).text != world.knockout("S6").probe(witness).text


# ---------------------------------------------------------------- the program surface (surface.world)


def test_decimal_and_list_literals_escapes_pass_and_a_bare_return(surface):
    shows(surface, "F1", "SAY(15.0)", "1.5", "15.0")
    shows(surface, "F2", "SAY([3, 1, 2])", "[1, 2, 3]", "[3, 1, 2]")
    shows(surface, "F3", 'SAY("a\\tb")', "a  b", "a\tb")
    shows(surface, "F4", "def f(x):\n    GIVE\nSAY(f(1))", "0", "none")
    assert surface.probe('SAY("a\\nb", "\\"q\\"", "\\\\")').text == 'a\nb "q" \\'
    assert surface.probe("if true:\n    NOTHING\nSAY(1)").text == "1"
    fb = surface.probe('SAY("a\\qb")')
    assert fb.status == "parse_error" and "unknown escape \\q" in fb.text


def test_floats_print_as_repr_when_the_world_says_so(surface):
    assert surface.probe("SAY(DIV(1, 3), [DIV(2, 3)])").text == "0.3333333333333333 [0.6666666666666666]"
    assert surface.render(1 / 3) == "0.3333333333333333"
    rounded = compile_spec(parse_spec(open(os.path.join(LANG, "surface.world"), encoding="utf-8").read()
                                      .replace("float_print repr", "float_print rounded"), "rounded.world"))
    assert rounded.probe("SAY(DIV(1, 3))").text == "0.3333333333"


# ---------------------------------------------------------------- rules in layers (layers.world)


def test_two_rules_on_truthy_are_layers(layers):
    program = 'if -1:\n    print("a")\nif "no":\n    print("b")\nif "yes":\n    print("c")'
    assert layers.probe(program).text == "c"
    assert layers.knockout("L1").probe(program).text == "a\nc"
    assert layers.knockout("L2").probe(program).text == "b\nc"
    assert layers.base_world().probe(program).text == "a\nb\nc"
    # each rule's equation is graded against that rule alone over the base line
    assert layers.grade_equation("L2", '(if (is_str v) (and (!= v "") (!= v "no")) (truthy v))')
    assert not layers.grade_equation("L2", '(if (is_str v) (!= v "no") (if (is_int v) (> v 0) (truthy v)))')


def test_prior_is_only_known_in_a_rule_body():
    text = VARIANT.replace('op ADD(a: int, b: int) -> int = a + b', 'op ADD(a: int, b: int) -> int = prior(a, b)')
    with pytest.raises(SpecError, match=r"prior\(\.\.\.\) is only known in a rule body"):
        compile_spec(parse_spec(text, "variant.world"))
    with pytest.raises(SpecError, match="prior takes 2 argument"):
        variant("op ADD(a, b) = prior(a)")
    assert variant("op ADD(a, b) = prior(b, a) * 10").probe("print(ADD(1, 2))").text == "30"


# ---------------------------------------------------------------- the meta-language (meta.world)


def test_recursive_defs_optional_and_lazy_parameters(meta):
    shows(meta, "M1", "print(ODD(3), ODD(4))", "false true", "true false")
    shows(meta, "M2", "print(FACT(3))", "24", "6")
    shows(meta, "M3", "print(ROUND(15), ROUND(15, 4))", "20 16", "10 12")
    shows(meta, "M4", "print(CHOOSE(true, AT([], 0), 5))", "5", "error: line 1: index out of range")
    # BOTH(NO, PLUCK(STRAND(), 0)) is NO: the second argument is never computed
    assert meta.probe("print(BOTH(false, AT([], 0)))").text == "false"
    assert meta.probe("print(BOTH(true, AT([], 0)))").text == "error: line 1: index out of range"
    # a lazy argument runs once, however often the body reads it
    assert meta.probe("def f():\n    print(1)\n    return true\nprint(BOTH(true, f()))").text == "1\ntrue"
    assert meta.probe("print(ROUND(1, 2, 3))").text.startswith("error: line 1: ROUND takes 1 to 2 arguments")


def test_defs_recurse_under_the_rule_recursion_limit():
    text = ("def depth(n) = if n <= 0 then 0 else 1 + depth(n - 1)\n"
            "def ev(n) = if n == 0 then true else od(n - 1)\ndef od(n) = if n == 0 then false else ev(n - 1)\n")
    w = compile_spec(parse_spec(VARIANT + text + 'rule V1 "v" {\n  op ADD(a, b) = if ev(a) then depth(b) else 0\n'
                                '  statement "s"\n  equation "(if (ev a) (depth b) 0)"\n}\n', "variant.world"))
    assert w.probe("print(ADD(4, 150))").text == "150"
    assert w.probe("print(ADD(3, 150))").text == "0"
    assert w.probe("print(ADD(4, 5000))").text == "limit: line 1: rule recursion limit reached (more than 200 nested calls)"
    assert w.grade_equation("V1", "(if (ev a) (depth b) 0)")


def test_a_world_may_raise_the_call_depth_without_raising_pythons_limit_for_good(meta):
    limit = sys.getrecursionlimit()
    program = "def total(n):\n    if SAME(n, 0):\n        return 0\n    return ADD(n, total(SUB(n, 1)))\nprint(total(950))"
    assert meta.probe(program).text == str(950 * 951 // 2)
    assert sys.getrecursionlimit() == limit
    assert meta.probe(program.replace("950", "1500")).text == \
        "limit: line 4: recursion limit reached (more than 1000 nested calls)"
    default = compile_spec(parse_spec(open(os.path.join(LANG, "meta.world"), encoding="utf-8").read()
                                      .replace("call_depth 1000", "call_depth 64"), "default.world"))
    assert default.probe(program.replace("950", "100")).text == \
        "limit: line 4: recursion limit reached (more than 64 nested calls)"


def test_importing_the_kernel_leaves_pythons_recursion_limit_alone():
    code = ("import sys; before = sys.getrecursionlimit(); import worldspec.compiler.program.kernel, "
            "worldspec.compiler; print(before == sys.getrecursionlimit() == 1000)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_hooks_a_world_does_not_use_cost_nothing():
    world = load_world(os.path.join(ROOT, "worlds", "aliencode.world"))
    sem = world.sem
    for hook in ("float_literal", "list_literal", "passes", "jump", "branch_order", "else_runs", "arguments",
                 "returned", "no_return"):
        assert sem.hooks[hook] is None, hook
    assert not sem.reads_iteration
    compiler = kernel.ProgramCompiler(sem, "", (), world.surface.words)
    assert compiler.invoke is kernel.invoke  # calls take the plain path: no argument or return hooks


# ---------------------------------------------------------------- diagnostics


def spec_error(text: str) -> SpecError:
    with pytest.raises(SpecError) as info:
        compile_spec(parse_spec(text, "diag.world"))
    return info.value


def with_syntax(entries: str) -> str:
    return VARIANT.replace("syntax {\n  list on\n}", "syntax {\n" + entries + "\n}")


@pytest.mark.parametrize("entry, fragment", [
    ('  if "UPON {expr} {expr}:"', "uses {expr} twice"),
    ('  assign "SET {name} AS {name}"', "uses {name} twice"),
    ('  assign "SET {name}{expr}"', "{name} and {expr} follow each other directly"),
    ('  for "EACH {expr} {name}:"', "{expr} and {name} follow each other directly"),
    ('  assign "SET {nmae} AS {expr}"', "unknown placeholder {nmae}"),
    ('  assign "SET {name} # {expr}"', "uses '#'"),
    ("  float maybe", "float is on or off"),
    ("  float_print exact", "float_print is one of rounded, repr"),
    ("  call_depth 0", "call_depth is a number of nested calls"),
    ("  call_depth 99999", "call_depth is a number of nested calls"),
    ("  assign off", "the assign form cannot be switched off"),
    ('  set_index "SET {name} TO {expr}"', "must contain {expr}, {index}, {name}"),
])
def test_a_template_is_checked_where_it_is_declared(entry, fragment):
    err = spec_error(with_syntax(entry))
    assert fragment in err.message, err.message
    assert (err.span.file, err.span.line) == ("diag.world", 5)


def test_a_template_may_place_its_placeholders_in_any_order():
    world = compile_spec(parse_spec(with_syntax('  assign "PUT {expr} INTO {name}"\n'
                                                '  for "WALK {expr} AS {name}:"\n  list on'), "order.world"))
    assert world.probe("PUT ADD(1, 2) INTO x\nWALK [x, 4] AS y:\n    print(y)").text == "3\n4"


def test_two_forms_the_grammar_cannot_separate_are_a_located_error():
    err = spec_error(with_syntax('  assign_many "SET {exprs} INTO {names}"\n  assign "SET {expr} INTO {name}"'))
    assert "ambiguous" in err.message and err.span.line in (5, 6)


@pytest.mark.parametrize("equation, fragment, col", [
    ("(foo a)", "unknown head 'foo'", 2),
    ("(+ a (floo b))", "unknown head 'floo'", 7),
    ("(+ a b", "unbalanced '('", 1),
    ("(+ a b))", "unbalanced ')'", 8),
    ("(+ a b) c", "an equation is one expression", 9),
    ("(+ a c)", "unknown name 'c'", 6),
    ("(if a b)", "(if c a b) takes three parts", 1),
])
def test_a_malformed_or_unknown_head_equation_says_where_and_what(equation, fragment, col):
    text = VARIANT + f'rule V1 "v" {{\n  op ADD(a, b) = b + a\n  statement "s"\n  equation "{equation}"\n}}\n'
    err = spec_error(text)
    assert fragment in err.message, err.message
    line = text.splitlines().index(f'  equation "{equation}"') + 1
    assert (err.span.line, err.span.col) == (line, len('  equation "') + col)
    if "floo" in equation:
        assert "Did you mean floor?" in err.hint


def test_a_self_recursive_def_compiles_and_never_suggests_a_context_variable():
    text = VARIANT + "def loop(n) = if n <= 0 then 0 else loop(n - 1) + 1\n"
    world = compile_spec(parse_spec(text.replace("= a + b  \"a plus b.\"", "= loop(a) + b  \"a plus b.\""),
                                    "loop.world"))
    assert world.probe("print(ADD(5, 1))").text == "6"
    err = spec_error(VARIANT + "def loop(n) = if n <= 0 then 0 else lop(n - 1)\n")
    assert "unknown name 'lop'" in err.message and "loop_depth" not in str(err)
    assert "Did you mean loop?" in err.hint


@pytest.mark.parametrize("line, fragment", [
    ('  op PUSH(xs: list, v: any) -> list mutates ys = append(xs, v)  "push"', "mutates ys: not a parameter"),
    ('  hook truthy(lazy v: any) -> bool = truthy(v)  "t"', "neither lazy nor optional"),
    ('  op F(a: int = 1, b: int) -> int = a  "f"', "without a default follows one with a default"),
    ('  op F(*a: int = 1) -> int = 0  "f"', "can be neither lazy nor optional"),
])
def test_signature_mistakes_are_located(line, fragment):
    text = VARIANT.replace("  op ADD(", line + "\n  op ADD(")
    err = spec_error(text)
    assert fragment in err.message and err.span.line == text.splitlines().index(line) + 1


def test_repeated_placeholders_used_to_certify_and_misread_programs():
    """The issue's example: `"UPON {expr} {expr}:"` compiled, and every probe was an AttributeError."""
    err = spec_error(with_syntax('  if "UPON {expr} {expr}:"'))
    assert err.hint.startswith("Each placeholder stands for one part")


# ---------------------------------------------------------------- the documentation's examples


def test_the_syntax_and_base_examples_of_the_language_reference_compile_and_run():
    doc = open(os.path.join(ROOT, "docs", "language.md"), encoding="utf-8").read()
    syntax = re.search(r"```\n(syntax \{.*?\n\})\n```", doc, re.S).group(1)
    base = re.search(r"```\n(base \{.*?\n\})\n```", doc, re.S).group(1)
    text = f'world "Doc" version 1\nkind program\nseed 1\n{syntax}\n{base}\nbudget {{ units_per_call 20 }}\n'
    world = compile_spec(parse_spec(text, "doc.world"))
    program = ("SET a, b AS 1, 2\nSET xs AS [a, b]\nSET xs AT 0 AS 9\nPUSH(xs, 4)\n"
               "SWEEP i, v IN [[0, 1.5]]:\n    EMIT(i, v, xs)\nCRAFT f():\n    DELIVER\n"
               "EMIT(f(), ROUND(25), BOTH(NO, PLUCK(STRAND(), 0)))")
    assert world.probe(program).text == "0 1.5 [9, 2, 4]\nVOID 20 NO"
    hooks = re.search(r"```\n(hook passes.*?)\n```", doc, re.S).group(1)
    for line in hooks.splitlines():  # each one-rule example is a valid override of its hook
        body = line.split("  #")[0].strip()
        assert parse_spec(f'world "H" version 1\nrule R1 "r" {{\n  {body}\n  statement "s"\n  equation "0"\n}}\n',
                          "hooks.world").rules[0].override.kind == "hook"


# ---------------------------------------------------------------- generated probes and limits


@pytest.mark.parametrize("name", sorted(LANG_WORLDS))
def test_generated_probes_parse_in_every_language_world(name):
    world = lang(name)
    gen = ProbeGenerator(world)
    ch = Chooser(random.Random(f"lang:{name}"))
    for target in gen.targets():
        for context in ("top", "loop", "function"):
            for _ in range(3):
                program = gen.probe_for(ch, target, context)
                fb = world.probe(program)
                assert fb.status in ("ok", "error", "limit", "rejected"), (target, program, fb.text)


def test_a_runaway_number_of_passes_stops_at_the_step_limit():
    many = variant("hook passes(kind, n) = 1000000000")
    for program in ("for x in [1]:\n    x", "while false:\n    x = 1"):
        fb = many.probe(program)
        assert fb.status == "limit" and "step limit" in fb.text, fb.text


# ---------------------------------------------------------------- hooks that share parameter names


def demo_with_rule(rule: str) -> str:
    """worlds/demo.world's text with one more rule, placed before R5."""
    text = open(os.path.join(ROOT, "worlds", "demo.world"), encoding="utf-8").read()
    at = text.index('rule R5 ')
    return text[:at] + rule + "\n\n" + text[at:]


@pytest.mark.parametrize("hook, body, program, manual, truth", [
    # truthy(v) and show(v) share a parameter name: truthy's override by show's body is a rule
    ("truthy(v)", "show(v)", 'UPON 0:\n    EMIT(1)\nDEFAULT:\n    EMIT(2)', ["2"], ["1"]),
    # int_literal(n) and branch_order(n) too: an int literal written as range(n) is a rule
    ("int_literal(n)", "range(n)", "EMIT(3)", ["3"], ["[0, 1, 2]"]),
])
def test_a_hook_given_another_hooks_standard_body_is_a_rule(tmp_path, hook, body, program, manual, truth):
    """A hook line is the kernel's standard (fast path) only when its body is ITS OWN standard body:
    once, `hook truthy(v) = show(v)` was taken for the standard truthy and silently ignored."""
    path = tmp_path / "w.world"
    path.write_text(demo_with_rule(f'rule R9 "a hook with a look-alike body" {{\n  hook {hook} = {body}\n'
                                   f'  statement "The hook is {body}."\n  equation "({body})"\n}}'))
    world = load_world(str(path))
    only = world.variant(["R9"])
    assert only.sem.hooks[hook.split("(")[0]] is not None
    assert list(world.base_world().execute(program).lines) == manual
    assert list(only.execute(program).lines) == truth
