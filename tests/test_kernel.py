"""The program kernel: statements, scope, the world's own syntax, hooks that rules
override (also per scope), runtime errors with line numbers, and every resource
limit, each of which comes back as feedback text, quickly, never as an exception."""
from __future__ import annotations

import os
import random
import re
import time

import pytest

from worldspec.compiler import compile_spec
from worldspec.compiler.program.kernel import MAX_NESTING, MAX_PROGRAM_CHARS
from worldspec.parser import parse_spec
from worldspec.values import MAX_DEPTH, MAX_STEPS

K_SPEC = '''world "Kern" version 1
kind program
seed 1
syntax {
  assign   "LET {name} BE {expr}"
  output   SAY
  if       "WHEN {expr}:"
  elif     "ORWHEN {expr}:"
  else     "OTHERWISE:"
  for      "EACH {name} OF {expr}:"
  while    "WHILST {expr}:"
  break    STOP
  continue SKIP
  function "FUNC {name}({params}):"
  return   "GIVE {expr}"
  true     T
  false    F
  none     NIL
  index    on
}
base {
  hook int_literal(n: int) -> int = n  "Integers are decimal."
  hook str_literal(s: str) -> str = s  "Strings are written in double quotes."
  hook truthy(v: any) -> bool = truthy(v)  "0, F, NIL, empty strings and lists are false."
  hook iterate(xs: list) -> list = xs  "EACH walks a list from first to last."
  hook show(v: any) -> str = show(v)  "Values print as usual."
  hook output(parts: list[str]) -> str = join(parts, " ")  "SAY separates values by spaces."
  hook assign(name: str, v: any) -> any = v  "LET stores the value."
  hook lookup(name: str, v: any) -> any = v  "A variable yields its value."
  hook index(xs: list, i: int) -> any = get(xs, i)  "xs[i] counts from 0."
  hook slice(xs: list, lo: int, hi: int) -> list = slice(xs, lo, hi)  "xs[lo:hi] as usual."
  op LIST(*xs: int) -> list = xs  "A list of the arguments."
  op ADD(a: int, b: int) -> int = a + b  "a plus b."
  op SUB(a: int, b: int) -> int = a - b  "a minus b."
  op MUL(a: int, b: int) -> int = a * b  "a times b."
  op LT(a: int, b: int) -> bool = a < b  "a smaller than b."
  op LEN(xs: list) -> int = len(xs)  "The length of xs."
  op POW(a: int, b: int) -> int = a ** b  "a to the power b."
  op RANGE(n: int) -> list = range(n)  "0 to n - 1."
  op CAT(a: list, b: list) -> list = concat(a, b)  "a then b."
  op REP(s: str, n: int) -> str = join(repeat(s, n), "")  "s repeated n times."
  op DEPTHS() -> list = [in_function, in_loop, loop_depth, call_depth]  "Where am I?"
}
budget {
  units_per_call 20
}
'''


def make(rules: str = ""):
    return compile_spec(parse_spec(K_SPEC + rules, "kern.world"))


@pytest.fixture(scope="module")
def kern():
    return make()


def run(world, program: str) -> str:
    fb = world.probe(program)
    assert fb.status in ("ok", "error", "limit"), fb
    return fb.text


def lines(*xs) -> str:
    return "\n".join(xs)


class quick:
    def __init__(self, seconds: float = 2.0):
        self.seconds = seconds

    def __enter__(self):
        self.t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        elapsed = time.perf_counter() - self.t
        # ten times slack: the bound catches a limit that never bites (a hang), not a slow machine
        assert elapsed < 10 * self.seconds, f"took {elapsed:.2f}s"
        return False


# ---------------------------------------------------------------- statements


@pytest.mark.parametrize("program,out", [
    ("LET x BE 5\nSAY(x)", "5"),
    ("LET x BE 5\nLET x BE ADD(x, 1)\nSAY(x)", "6"),
    ('SAY(1, "a b", T, F, NIL)', "1 a b T F NIL"),
    ('SAY(LIST(1, 2), LIST(), "x")', "[1, 2] [] x"),
    ('LET xs BE LIST("a", T, NIL)\nSAY(xs)', '["a", T, NIL]'),
    ("SAY()", ""),
    ("SAY(-5, 0)", "-5 0"),
    ('SAY("tab\\there", "q\\"q")', 'tab\there q"q'),
    ("ADD(1, 2)\nSAY(3)", "3"),
    ("# a comment\nSAY(1)  # trailing\n\n\nSAY(2)", "1\n2"),
    ("SAY(1,\n    2)", "1 2"),
    ("SAY(LIST(1, 2)[0], LIST(1, 2)[1])", "1 2"),
])
def test_assignment_and_output_formatting(kern, program, out):
    assert run(kern, program) == out


@pytest.mark.parametrize("value,out", [(0, "zero"), (1, "one"), (2, "many"), (-1, "many")])
def test_if_elif_else(kern, value, out):
    program = lines(f"LET n BE {value}",
                    "WHEN LT(n, 0):", '    SAY("many")',
                    "ORWHEN n:", "    WHEN LT(n, 2):", '        SAY("one")', "    OTHERWISE:", '        SAY("many")',
                    "OTHERWISE:", '    SAY("zero")')
    assert run(kern, program) == out


@pytest.mark.parametrize("cond,taken", [
    ("0", False), ("1", True), ("-1", True), ('""', False), ('"0"', True), ("LIST()", False),
    ("LIST(0)", True), ("NIL", False), ("F", False), ("T", True),
])
def test_standard_truthiness(kern, cond, taken):
    assert run(kern, f"WHEN {cond}:\n    SAY(1)\nOTHERWISE:\n    SAY(0)") == ("1" if taken else "0")


def test_for_over_lists_and_strings(kern):
    assert run(kern, "EACH v OF LIST(3, 1, 2):\n    SAY(v)") == "3\n1\n2"
    assert run(kern, 'EACH c OF "abc":\n    SAY(c)') == "a\nb\nc"
    assert run(kern, "EACH v OF LIST():\n    SAY(v)\nSAY(9)") == "9"
    # the loop variable stays bound after the loop, like Python
    assert run(kern, "EACH v OF LIST(1, 2):\n    LET w BE v\nSAY(v, w)") == "2 2"


def test_while_break_continue(kern):
    program = lines("LET i BE 0",
                    "WHILST LT(i, 10):",
                    "    LET i BE ADD(i, 1)",
                    "    WHEN LT(i, 3):",
                    "        SKIP",
                    "    WHEN LT(6, i):",
                    "        STOP",
                    "    SAY(i)")
    assert run(kern, program) == "3\n4\n5\n6"


def test_break_leaves_only_the_innermost_loop(kern):
    program = lines("EACH a OF LIST(1, 2):",
                    "    EACH b OF LIST(10, 20, 30):",
                    "        WHEN LT(15, b):",
                    "            STOP",
                    "        SAY(ADD(a, b))")
    assert run(kern, program) == "11\n12"


def test_functions_recursion_and_return(kern):
    program = lines("FUNC fib(n):",
                    "    WHEN LT(n, 2):",
                    "        GIVE n",
                    "    GIVE ADD(fib(SUB(n, 1)), fib(SUB(n, 2)))",
                    "SAY(fib(15))")
    assert run(kern, program) == "610"
    # return from inside a loop leaves the function at once
    program = lines("FUNC first_big(xs):",
                    "    EACH x OF xs:",
                    "        WHEN LT(10, x):",
                    "            GIVE x",
                    "    GIVE -1",
                    "SAY(first_big(LIST(1, 50, 70)), first_big(LIST(1)))")
    assert run(kern, program) == "50 -1"
    # falling off the end returns none; functions are values too
    assert run(kern, "FUNC f():\n    LET x BE 1\nSAY(f())") == "NIL"
    assert run(kern, "FUNC twice(x):\n    GIVE MUL(x, 2)\nFUNC g(n):\n    GIVE twice(twice(n))\nSAY(g(3))") == "12"


def test_function_scope_locals_and_globals(kern):
    program = lines("LET g BE 1",
                    "LET x BE 100",
                    "FUNC f(x):",
                    "    LET g BE 2",
                    "    LET local BE ADD(x, g)",
                    "    GIVE local",
                    "SAY(f(5), g, x)")
    assert run(kern, program) == "7 1 100"
    assert run(kern, "LET g BE 41\nFUNC f():\n    GIVE ADD(g, 1)\nSAY(f())") == "42"
    # a local does not leak out of the call
    assert run(kern, "FUNC f():\n    LET only_here BE 1\nf()\nSAY(only_here)") == \
        "error: line 4: unknown variable only_here"


def test_custom_syntax_map_defines_the_language(kern):
    # the world's spelling is the language; Python's is not
    assert kern.probe("x = 1").status == "parse_error"
    assert kern.probe("print(1)").status == "parse_error"
    assert kern.probe("SET x AS 1").status == "parse_error"
    assert kern.probe("LET x BE 1\nSAY(x)").text == "1"
    # words that are keywords elsewhere are plain names here
    assert run(kern, "LET SET BE 3\nLET print BE 4\nSAY(SET, print)") == "3 4"


def test_index_and_slice_with_index_on(kern):
    base = "LET xs BE LIST(10, 20, 30, 40)\n"
    assert run(kern, base + "SAY(xs[0], xs[3])") == "10 40"
    assert run(kern, base + "SAY(xs[1:3], xs[:2], xs[2:])") == "[20, 30] [10, 20] [30, 40]"
    assert run(kern, base + "SAY(xs[:])") == "[10, 20, 30, 40]"
    assert run(kern, 'SAY("hello"[1], "hello"[1:3])') == "e el"
    assert run(kern, base + "SAY(xs[1:3][0])") == "20"
    assert run(kern, base + "SAY(xs[4])") == "error: line 2: index out of range"
    assert run(kern, base + "SAY(xs[-1])") == "error: line 2: index out of range"
    assert kern.probe(base + "SAY(xs[0:1:2])").status == "parse_error"


def test_index_syntax_is_absent_without_index_on(demo):
    assert demo.probe("SET xs AS STRAND(1)\nEMIT(xs[0])").status == "parse_error"


def test_context_flags_seen_by_operators(kern):
    program = lines("SAY(DEPTHS())",
                    "FUNC f():",
                    "    EACH a OF LIST(1):",
                    "        EACH b OF LIST(1):",
                    "            GIVE DEPTHS()",
                    "SAY(f())")
    # DEPTHS() is [in_function, in_loop, loop_depth, call_depth]
    assert run(kern, program) == "[F, F, 0, 0]\n[T, T, 2, 1]"


# ---------------------------------------------------------------- hooks overridden by rules


def _rule(body: str) -> str:
    return f'rule Q "changed" {{\n  {body}\n  statement "s"\n  equation "0"\n}}\n'


HOOK_CASES = [
    ("hook truthy(v) = not truthy(v)", "WHEN 0:\n    SAY(1)\nOTHERWISE:\n    SAY(2)", "2", "1"),
    ("hook truthy(v) = v != 0", "LET n BE 2\nWHILST n:\n    LET n BE SUB(n, 1)\n    SAY(n)", "1\n0", "1\n0"),
    ("hook truthy(v) = v != 0", 'WHEN "":\n    SAY(1)', "(no output)", "1"),
    ("hook iterate(xs) = reverse(xs)", "EACH v OF LIST(1, 2, 3):\n    SAY(v)", "1\n2\n3", "3\n2\n1"),
    ("hook iterate(xs) = if in_function then reverse(xs) else xs",
     "EACH v OF LIST(1, 2):\n    SAY(v)", "1\n2", "1\n2"),
    ("hook iterate(xs) = if in_function then reverse(xs) else xs",
     "FUNC f():\n    EACH v OF LIST(1, 2):\n        SAY(v)\nf()", "1\n2", "2\n1"),
    ("hook iterate(xs) = drop(xs, 1)", 'EACH c OF "abc":\n    SAY(c)', "a\nb\nc", "b\nc"),
    ("hook show(v) = if is_int(v) then str(v * 10) else show(v)", 'SAY(1, "a", LIST(2))', "1 a [2]",
     "10 a [2]"),
    ("hook show(v) = if v == true then \"yes\" else str(v)", "SAY(T, 1)", "T 1", "yes 1"),
    ("hook output(parts) = join(parts, \",\")", "SAY(1, 2, 3)", "1 2 3", "1,2,3"),
    ("hook output(parts) = join(reverse(parts), \" \")", "SAY(1, 2)", "1 2", "2 1"),
    ("hook output(parts) = if in_loop then join(parts, \"-\") else join(parts, \" \")",
     "SAY(1, 2)\nEACH v OF LIST(1):\n    SAY(v, v)", "1 2\n1 1", "1 2\n1-1"),
    ("hook assign(name, v) = if is_int(v) then v + 100 else v", "LET x BE 1\nSAY(x)", "1", "101"),
    ("hook assign(name, v) = if in_loop and is_int(v) then v + 100 else v",
     "LET x BE 1\nEACH v OF LIST(1):\n    LET y BE v\nSAY(x, y)", "1 1", "1 201"),
    ("hook assign(name, v) = if in_function then v * 2 else v",
     "FUNC f(a):\n    LET b BE a\n    GIVE b\nLET c BE 5\nSAY(f(5), c)", "5 5", "10 5"),
    ("hook lookup(name, v) = if name == \"x\" then 42 else v", "LET x BE 1\nLET y BE 2\nSAY(x, y)", "1 2",
     "42 2"),
    ("hook lookup(name, v) = if in_function and is_int(v) then v + 1 else v",
     "FUNC f(a):\n    GIVE a\nLET a BE 1\nSAY(f(1), a)", "1 1", "2 1"),
    ("hook index(xs, i) = get(xs, i - 1)", "LET xs BE LIST(10, 20, 30)\nSAY(xs[1])", "20", "10"),
    ("hook index(xs, i) = get(xs, len(xs) - 1 - i)", 'SAY("abc"[0])', "a", "c"),
    ("hook slice(xs, lo, hi) = slice(xs, lo, hi + 1)", "LET xs BE LIST(10, 20, 30)\nSAY(xs[0:1])", "[10]",
     "[10, 20]"),
    ("hook slice(xs, lo, hi) = if in_loop then slice(xs, lo, hi) else reverse(slice(xs, lo, hi))",
     "SAY(LIST(1, 2, 3)[0:2])", "[1, 2]", "[2, 1]"),
    ("hook str_literal(s) = upper(s)", 'SAY("abc")', "abc", "ABC"),
    ("hook str_literal(s) = if in_function then upper(s) else s",
     'FUNC f():\n    GIVE "abc"\nSAY(f(), "abc")', "abc abc", "ABC abc"),
    ("hook int_literal(n) = n + 3", "SAY(1, -1)\nLET x BE 0\nSAY(x)", "1 -1\n0", "4 2\n3"),
    ("hook int_literal(n) = if in_loop then n * 2 else n", "SAY(5)\nEACH v OF LIST(1):\n    SAY(5, v)",
     "5\n5 1", "5\n10 1"),  # the sequence is evaluated before the loop body
    ("op ADD(a, b) = if in_loop then a * b else a + b", "SAY(ADD(2, 3))\nEACH v OF LIST(1):\n    SAY(ADD(2, 3))",
     "5\n5", "5\n6"),
    ("op ADD(a, b) = a + b + call_depth", "FUNC f():\n    GIVE ADD(0, 0)\nSAY(ADD(0, 0), f())", "0 0", "0 1"),
    ("op ADD(a, b) = a + b + loop_depth",
     "EACH v OF LIST(1):\n    EACH u OF LIST(1):\n        SAY(ADD(0, 0))", "0", "2"),
]


@pytest.mark.parametrize("rule,program,base_out,true_out", HOOK_CASES)
def test_rules_override_hooks_and_ops(rule, program, base_out, true_out):
    world = make(_rule(rule))
    assert run(world.base_world(), program) == base_out
    assert run(world, program) == true_out
    assert run(world.knockout("Q"), program) == base_out


def test_a_show_rule_that_delegates_to_show_keeps_the_worlds_words():
    world = make(_rule('hook show(v) = if is_int(v) then str(v * 10) else show(v)'))
    assert run(world.base_world(), "SAY(F, NIL, 1)") == "F NIL 1"
    assert run(world, "SAY(F, NIL, 1)") == "F NIL 10"


def test_a_hook_that_returns_the_wrong_kind_is_a_runtime_error():
    assert run(make(_rule("hook show(v) = 5")), "SAY(1)") == "error: line 1: the show rule produced int, not text"
    assert run(make(_rule("hook output(parts) = len(parts)")), "SAY(1)") == \
        "error: line 1: the output rule produced int, not text"
    assert run(make(_rule("hook iterate(xs) = len(xs)")), "EACH v OF LIST(1):\n    SAY(v)") == \
        "error: line 1: cannot loop over a value of type int"


def test_a_failing_rule_body_is_a_runtime_error_at_the_calling_line():
    world = make(_rule("op ADD(a, b) = get([a], b)"))
    assert run(world, "SAY(ADD(1, 0))\nSAY(ADD(1, 5))") == "1\nerror: line 2: index out of range"
    folded = make(_rule("hook int_literal(n) = if n == 7 then error(\"no sevens\") else n"))
    assert run(folded, "SAY(1)\nSAY(7)") == "1\nerror: line 2: no sevens"


def test_demo_rules_in_action(demo):
    base = demo.base_world()
    # R1: literals are offset by K (3 at the declared seed)
    assert demo.probe("EMIT(7)").text == "10" and base.probe("EMIT(7)").text == "7"
    # R2: PLUCK counts from one
    assert demo.probe("EMIT(PLUCK(STRAND(10, 20, 30), -1))").text == "23"
    # R3: LESSEN swaps inside a function only
    program = "CRAFT d(a, b):\n    DELIVER LESSEN(a, b)\nEMIT(d(10, 4), LESSEN(10, 4))"
    assert demo.probe(program).text == "-6 6"
    assert base.probe(program).text == "6 6"
    # R4: SWEEP walks backwards
    assert demo.probe("SWEEP v IN STRAND(-2, -1):\n    EMIT(v)").text == "2\n1"
    # R5: BELOW includes equality
    assert demo.probe("EMIT(BELOW(1, 1))").text == "YES" and base.probe("EMIT(BELOW(1, 1))").text == "NO"
    # H1: SHATTER multiplies as documented
    assert base.probe("EMIT(SHATTER(-1, 0))").text == "0"


# ---------------------------------------------------------------- runtime errors


@pytest.mark.parametrize("program,out", [
    ("SAY(1)\nSAY(y)", "1\nerror: line 2: unknown variable y"),
    ("LET xs BE LIST(1)\n\nSAY(xs[5])", "error: line 3: index out of range"),
    ('SAY(ADD("a", 1))', "error: line 1: '+' cannot combine str and int"),
    ("SAY(f())\nFUNC f():\n    GIVE 1", "error: line 1: function f is called before it is defined"),
    ("FUNC f(a):\n    GIVE a\nSAY(f(1, 2))", "error: line 3: function f takes 1 argument(s), got 2"),
    ("FUNC f(a):\n    LET b BE LIST(1)[a]\n    GIVE b\nSAY(f(0))\nSAY(f(9))", "1\nerror: line 2: index out of range"),
    ("EACH c OF 5:\n    SAY(c)", "error: line 1: cannot loop over a value of type int"),
    ("SAY(1)\nSAY(POW(2, -1))", "1\nerror: line 2: negative exponent"),
])
def test_runtime_errors_carry_line_numbers(kern, program, out):
    fb = kern.probe(program)
    assert fb.status == "error" and fb.text == out


@pytest.mark.parametrize("program,fragment", [
    ("GIVE 1", "line 1: GIVE is only allowed inside a function body"),
    ("SAY(ADD(1))", "ADD takes 2 arguments (a, b), got 1"),
    ("SAY(LIST())\nSAY(ADDD(1, 2))", "line 2: unknown operator ADDD. Did you mean ADD?"),
    ("SAY(FOO(1))", "unknown operator FOO."),
    ("FUNC f(a, a):\n    GIVE a", "function f repeats a parameter name"),
    ("FUNC LEN(a):\n    GIVE a", "LEN is a built-in operator and cannot be redefined"),
    ("SAY(1", "ends too early"),
    ("SAY(1))", "unexpected ')'"),
    ("WHEN T:\nSAY(1)", "syntax error"),
    ("SAY(1)\n    SAY(2)", "unexpected indentation"),
    ("LET x BE", "syntax error"),
    ("SAY(1) SAY(2)", "syntax error: line 1"),
    ('SAY("unterminated)', "unexpected character"),
    ("SAY(1 @ 2)", "unexpected character '@'"),
])
def test_compile_errors_of_programs(kern, program, fragment):
    fb = kern.probe(program)
    assert fb.status == "parse_error" and fb.units == 0
    assert fragment in fb.text, fb.text


def test_crlf_programs_report_the_right_character(kern):
    fb = kern.probe("SAY(1)\r\nSAY(2)\r\n$")
    assert "unexpected character '$'" in fb.text, fb.text


@pytest.mark.parametrize("program", ["SAY(1)\nSTOP\nSAY(2)", "SAY(1)\nSKIP\nSAY(2)",
                                     "FUNC f():\n    STOP\n    GIVE 1\nSAY(f())"])
def test_break_or_continue_outside_a_loop_is_an_error(kern, program):
    fb = kern.probe(program)
    assert fb.status in ("error", "parse_error"), fb


# ---------------------------------------------------------------- resource limits


def _probe(world, program, seconds=3.0):
    with quick(seconds):
        fb = world.probe(program)
    return fb


def test_step_limit_infinite_loop(kern):
    fb = _probe(kern, "LET i BE 0\nWHILST T:\n    LET i BE ADD(i, 1)")
    assert fb.status == "limit" and fb.units == 0
    assert re.fullmatch(rf"limit: line [23]: step limit reached \({MAX_STEPS} steps\)", fb.text), fb.text


def test_step_limit_keeps_earlier_output(kern):
    fb = _probe(kern, "SAY(1)\nWHILST T:\n    SKIP")
    assert fb.status == "limit"
    assert fb.text.startswith("1\nlimit: ") and "step limit reached" in fb.text


def test_step_limit_counts_operator_work(kern):
    # each iteration builds a long list: work, not statements, runs out
    fb = _probe(kern, "WHILST T:\n    LET n BE LEN(RANGE(90000))")
    assert fb.status == "limit" and "step limit reached" in fb.text


def test_output_limit(kern):
    fb = _probe(kern, 'SAY(REP("ab", 50000))')
    assert fb.status == "limit" and fb.units == 1
    assert fb.truncated and len(fb.text) <= kern.budget.feedback_chars
    fb = _probe(kern, "LET i BE 0\nWHILST T:\n    SAY(i)\n    LET i BE ADD(i, 1)")
    assert fb.status == "limit" and fb.units == 3
    assert fb.truncated and fb.text.splitlines()[:3] == ["0", "1", "2"]


def test_output_limit_feedback_names_the_limit(kern):
    fb = _probe(kern, "LET i BE 0\nWHILST T:\n    SAY(i)\n    LET i BE ADD(i, 1)")
    assert "output limit" in fb.text, fb.text


def test_recursion_depth_limit(kern):
    fb = _probe(kern, "FUNC f(n):\n    GIVE f(ADD(n, 1))\nSAY(f(1))")
    assert fb.status == "limit" and fb.units == 1
    assert fb.text == f"limit: line 2: recursion limit reached (more than {MAX_DEPTH} nested calls)"
    # a recursion that stops in time is fine
    assert run(kern, "FUNC f(n):\n    WHEN LT(n, 1):\n        GIVE 0\n    GIVE ADD(1, f(SUB(n, 1)))\n"
                     f"SAY(f({MAX_DEPTH - 1}))") == str(MAX_DEPTH - 1)


def test_integer_size_limit_giant_exponent(kern):
    fb = _probe(kern, "SAY(POW(2, 100000))")
    assert fb.status == "limit" and fb.text == "limit: line 1: integer too large (more than 256 bits)"
    fb = _probe(kern, "LET x BE 3\nWHILST T:\n    LET x BE MUL(x, x)")
    assert fb.status == "limit" and fb.text == "limit: line 3: integer too large (more than 256 bits)"


def test_integer_size_limit_in_a_rule_body():
    world = make(_rule("hook int_literal(n) = n ** 1000"))
    fb = _probe(world, "SAY(2)")
    assert fb.status == "limit" and "integer too large" in fb.text
    assert world.base_world().probe("SAY(2)").text == "2"


def test_collection_size_limit(kern):
    fb = _probe(kern, "SAY(LEN(RANGE(1000000000)))")
    assert fb.status == "limit" and fb.text == "limit: line 1: value too large (more than 100000 elements)"
    fb = _probe(kern, "LET xs BE LIST(1)\nWHILST T:\n    LET xs BE CAT(xs, xs)")
    assert fb.status == "limit" and fb.text == "limit: line 3: value too large (more than 100000 elements)"


def test_program_too_long_a_1mb_line(kern):
    fb = _probe(kern, "SAY(" + "1" * 1_000_000 + ")", 1.0)
    assert fb.status == "parse_error" and fb.units == 0
    assert fb.text == f"syntax error: program too long (1000005 characters; the limit is {MAX_PROGRAM_CHARS})"
    assert kern.probe("x" * 1_000_000).status == "parse_error"


@pytest.mark.parametrize("program", [
    "SAY(" + "(" * 100 + "1" + ")" * 100 + ")",
    "SAY(" + "LIST(" * 60 + ")" * 61,
    "".join(" " * (4 * i) + f"WHEN T:\n" for i in range(60)) + " " * 240 + "SAY(1)",
    "[" * 10_000,
])
def test_nesting_too_deep(kern, program):
    fb = _probe(kern, program, 1.0)
    assert fb.status == "parse_error"
    assert fb.text == f"syntax error: program nests too deeply (more than {MAX_NESTING} levels)"


def test_nesting_just_under_the_limit_runs(kern):
    depth = MAX_NESTING - 2
    assert run(kern, "SAY(" + "(" * depth + "7" + ")" * depth + ")") == "7"


def test_deep_data_built_by_a_loop_is_a_limit(demo):
    program = ("SET x AS STRAND(1)\nSET i AS 0\nAWAIT BELOW(i, 30000):\n    SET x AS STRAND(x)\n"
               "    SET i AS LESSEN(i, LESSEN(0, 1))\nEMIT(x)")
    fb = _probe(demo, program)
    assert fb.status == "limit" and fb.text.startswith("limit: ")


def test_printing_a_doubled_structure_is_stopped_quickly(demo):
    # K = 3 in the true demo world: `0` denotes 3 and LESSEN(0, 1) denotes -1
    program = ("SET x AS STRAND(1)\nSET i AS 0\nAWAIT BELOW(i, 18):\n    SET x AS STRAND(x, x)\n"
               "    SET i AS LESSEN(i, LESSEN(0, 1))\nEMIT(x)")
    _probe(demo, program, 0.2)


@pytest.mark.parametrize("seed", range(6))
def test_random_bytes(kern, seed):
    rng = random.Random(seed)
    data = bytes(rng.randrange(256) for _ in range(rng.choice((10, 200, 5000))))
    for text in (data.decode("latin-1"), data.decode("utf-8", errors="replace")):
        fb = _probe(kern, text, 1.0)
        assert fb.status in ("parse_error", "ok", "error", "limit", "rejected")
        assert len(fb.text) <= kern.budget.feedback_chars


def test_os_random_bytes_and_nul(kern):
    fb = _probe(kern, os.urandom(4096).decode("latin-1"), 1.0)
    assert fb.status == "parse_error"
    fb = kern.probe("SAY(1)\x00")
    assert fb.status == "parse_error" and "NUL" in fb.text


@pytest.mark.parametrize("program", [
    "SAY((1)", "SAY(1))", "]]]]", "((((", "SAY(LIST(1, 2)[0)", "SAY(LIST(1, 2)[0:)", ")(", "SAY(\n",
    "WHEN T:", "FUNC f(:\n    GIVE 1", "EACH v OF LIST(1:\n    SAY(v)", "SAY(1)\n\tSAY(2)",
    "WHEN T:\n        SAY(1)\n    SAY(2)",
])
def test_unbalanced_brackets_and_bad_blocks(kern, program):
    fb = _probe(kern, program, 1.0)
    assert fb.status == "parse_error" and fb.units == 0
    assert fb.text.startswith(("syntax error", "error"))


def test_probe_of_non_text_is_feedback(kern):
    for bad in (None, b"SAY(1)", 42):
        fb = kern.probe(bad)
        assert fb.status == "parse_error" and fb.units == 0
