"""The spec language, third edition (issue 24), program statements: loop-else, counted break, maps,
nested index assignment, updating operators (pop), holds(...) and the position hook (one rule for
indexing, assignment and slicing), and control rules checked when the spec compiles. Every program
runs in both kernels (the closure kernel and the native one) and must agree."""
from __future__ import annotations

from pathlib import Path

import pytest

from worldspec.compiler import load_world
from worldspec.compiler.program.kernel import ProgramCompiler, Run, parse_program
from worldspec.compiler.program.kernel_ast import AstCompiler
from worldspec.diagnostics import SpecError

LOOPS = str(Path(__file__).resolve().parent / "worlds" / "lang3" / "loops.world")

SYNTAX = """
  list on
  index on
  map on
  set_index on
  pass on
  loop_else on
  break_many on
  infix "== EQ none 5"
  infix "< LT none 5"
  infix "+ ADD left 10"
  infix "- SUB left 10"
  prefix "- NEG 30"
"""
BASE = """
  op EQ(a: any, b: any) -> bool = a == b  "a equals b."
  op LT(a: int, b: int) -> bool = a < b  "a below b."
  op ADD(a: int, b: int) -> int = a + b  "a plus b."
  op SUB(a: int, b: int) -> int = a - b  "a minus b."
  op NEG(a: int) -> int = 0 - a  "minus a."
  op LEN(xs: any) -> int = len(xs)  "length."
  op POP(xs: list) -> any mutates xs to take(xs, len(xs) - 1) = get(xs, len(xs) - 1)  "last; removed."
  op AND(a: any, lazy b: any) -> any = if holds(a) then b else a  "and."
  op NOT(a: any) -> bool = not holds(a)  "not."
"""


def world_text(rules: str = "", base: str = "", syntax: str = SYNTAX) -> str:
    return ('world "W" version 1\nkind program\nsyntax {' + syntax + '}\nbase {' + BASE + base + '}\n' + rules)


def make(tmp_path, rules: str = "", base: str = "", syntax: str = SYNTAX):
    p = tmp_path / "w.world"
    p.write_text(world_text(rules, base, syntax))
    return load_world(str(p))


def both(world, program: str, sem=None) -> str:
    """The program's output in the closure kernel and in the native kernel (which must agree)."""
    sem = sem or world.sem
    tree = parse_program(world.surface, program)
    outs = []
    for native in (False, True):
        run = Run(world.words, 100_000)
        if native:
            compiler = AstCompiler(sem, program, (), dict(world.surface.words))
            code = compiler.native(tree)
            assert code is not None
        else:
            code = ProgramCompiler(sem, program, (), dict(world.surface.words)).program(tree)
        try:
            code(run)
            outs.append("\n".join(run.out))
        except Exception as e:  # noqa: BLE001 - the error's text is compared
            outs.append(f"{type(e).__name__}: {e}")
    assert outs[0] == outs[1], outs
    return outs[0]


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return make(tmp_path_factory.mktemp("plain"))


# ---------------------------------------------------------------- loop-else and counted break

@pytest.mark.parametrize("program, printed", [
    ("for x in [1, 2]:\n    pass\nelse:\n    print(9)", "9"),
    ("for x in [1, 2]:\n    break\nelse:\n    print(9)\nprint(0)", "0"),
    ("for x in []:\n    print(1)\nelse:\n    print(9)", "9"),
    ("i = 0\nwhile i < 3:\n    i = i + 1\nelse:\n    print(i)", "3"),
    ("i = 0\nwhile i < 3:\n    i = i + 1\n    if i == 2:\n        break\nelse:\n    print(i)\nprint(0)", "0"),
    # the else of an inner loop left by `break 2` does not run; the outer's does not either
    ("for x in [1, 2]:\n    for y in [3, 4]:\n        print(x, y)\n        break 2\n    else:\n        print(8)\n"
     "else:\n    print(9)\nprint(0)", "1 3\n0"),
    ("for x in [1, 2]:\n    for y in [3, 4]:\n        break\n    else:\n        print(8)\nelse:\n    print(9)", "9"),
    ("for x in [1, 2, 3]:\n    for y in [1]:\n        for z in [1]:\n            if x == 2:\n                break 3\n"
     "    print(x)", "1"),
    ("for x in [1, 2]:\n    for y in [3, 4]:\n        if y == 4:\n            break 1\n        print(x, y)", "1 3\n2 3"),
    # a break in a loop's else block belongs to the loop around it
    ("for x in [1, 2, 3]:\n    for y in [1]:\n        pass\n    else:\n        if x == 2:\n            break\n"
     "    print(x)", "1"),
    # in a function, `break 2` leaves two loops and the function goes on
    ("def f(n):\n    for a in [1, 2]:\n        for b in [1, 2]:\n            if a + b == n:\n                break 2\n"
     "    return a + b\nprint(f(3), f(9))", "3 4"),
])
def test_loop_else_and_counted_break(plain, program, printed):
    assert both(plain, program) == printed


@pytest.mark.parametrize("program, message", [
    ("for x in [1]:\n    break 2", "break 2 cannot leave 2 loops: 1 loop surround it here"),
    ("for x in [1]:\n    break 0", "break 0 cannot leave 0 loops"),
    ("break 1", "only allowed inside a loop"),
    ("for x in [1]:\n    def f():\n        for y in [1]:\n            break 2\n    print(f())",
     "1 loop surround it here (in its function)"),
])
def test_a_break_that_leaves_too_many_loops_is_refused_before_it_runs(plain, program, message):
    fb = plain.probe(program)
    assert message in fb.text and fb.status != "ok", fb.text


def test_loop_else_and_counted_break_are_off_unless_declared(tmp_path):
    w = make(tmp_path, syntax='\n  list on\n  infix "== EQ none 5"\n  infix "< LT none 5"\n  infix "+ ADD left 10"\n'
             '  infix "- SUB left 10"\n  prefix "- NEG 30"\n')
    assert w.probe("for x in [1]:\n    print(x)\nelse:\n    print(2)").status == "parse_error"
    assert w.probe("for x in [1]:\n    break 2").status == "parse_error"


def test_loop_else_and_break_many_take_templates(tmp_path):
    w = make(tmp_path, syntax=SYNTAX.replace("loop_else on", 'loop_else "NOBREAK:"')
             .replace("break_many on", 'break_many "LEAVE {count}"'))
    assert both(w, "for x in [1, 2]:\n    for y in [1]:\n        LEAVE 2\nNOBREAK:\n    print(1)\nprint(x)") == "1"
    with pytest.raises(SpecError, match="must contain {count}"):
        make(tmp_path, syntax=SYNTAX.replace("break_many on", 'break_many "LEAVE"'))


# ---------------------------------------------------------------- maps, nested assignment, pop

@pytest.mark.parametrize("program, printed", [
    ('m = {"a": 1, 2: "b"}\nprint(m["a"], m[2], LEN(m))', "1 b 2"),
    ('m = {}\nm["k"] = 5\nm["k"] = m["k"] + 1\nprint(m)', '{"k": 6}'),
    ('m = {"x": [1, 2]}\nm["x"][0] = 7\nprint(m)', '{"x": [7, 2]}'),
    ("g = [[1, 2], [3, 4]]\ng[1][0] = 9\nprint(g)", "[[1, 2], [9, 4]]"),
    ("g = [[[0]]]\nh = g\ng[0][0][0] = 5\nprint(g, h)", "[[[5]]] [[[0]]]"),  # lists are values
    ('m = {"b": 1, "a": 2}\nfor k in m:\n    print(k, m[k])', "b 1\na 2"),
    ("xs = [1, 2, 3]\nprint(POP(xs), xs)", "3 [1, 2]"),
    ("xs = [1, 2, 3]\nPOP(xs)\nPOP(xs)\nprint(xs)", "[1]"),
    ("xs = [1, 2, 3]\ny = POP(xs) + POP(xs)\nprint(y, xs)", "5 [1]"),
    ("def f():\n    return POP(ys)\nys = [4, 5]\nprint(f(), ys)", "5 [4]"),  # the variable where it lives
    ("print(POP([1, 2]))", "2"),  # no variable: nothing to update
    ("m = {true: 1}", "EvalError: a map key must be an integer or a string, not bool"),
    ('g = [[1]]\ng[0][3] = 2', "EvalError: no element at position 3"),
])
def test_maps_nested_assignment_and_pop(plain, program, printed):
    assert both(plain, program) == printed


def test_an_updating_operator_cannot_have_lazy_parameters(tmp_path):
    with pytest.raises(SpecError, match="cannot be lazy"):
        make(tmp_path, base='  op TAKE(lazy xs: list) -> any mutates xs to [] = 1  "x."\n')


def test_the_update_hook_governs_pop_too(tmp_path):
    w = make(tmp_path, rules='rule U1 "updates keep one more" {\n'
             '  hook update(name, old, v) = if is_list(v) then concat(v, [0]) else v\n'
             '  statement "x."\n  equation "(if (is_list v) (concat v (list 0)) v)"\n}\n',
             base='  hook update(name: str, old: any, v: any) -> any = v  "updates."\n')
    assert both(w, "xs = [1, 2]\nprint(POP(xs), xs)") == "2 [1, 0]"


# ---------------------------------------------------------------- one rule, every place its concept appears

ONE_BASED = ('rule P1 "positions from 1" {\n'
             '  hook position(kind, xs, i) = if is_list(xs) or is_str(xs) then (if kind == "to" then i else i - 1) '
             'else i\n  statement "x."\n'
             '  equation "(if (or (is_list xs) (is_str xs)) (if (== kind \\"to\\") i (- i 1)) i)"\n}\n')
POSITION = '  hook position(kind: str, xs: any, i: any) -> any = i  "from 0."\n'


@pytest.mark.parametrize("program, printed", [
    ("xs = [5, 6, 7]\nprint(xs[1], xs[3])", "5 7"),
    ('print("abc"[2])', "b"),
    ("xs = [5, 6, 7]\nxs[1] = 0\nprint(xs)", "[0, 6, 7]"),
    ("g = [[1, 2], [3, 4]]\ng[2][1] = 0\nprint(g)", "[[1, 2], [0, 4]]"),
    ("xs = [5, 6, 7, 8]\nprint(xs[2:3], xs[:2], xs[3:])", "[6, 7] [5, 6] [7, 8]"),
    ('m = {0: "zero"}\nm[1] = "one"\nprint(m[0], m[1])', "zero one"),  # map keys as written
])
def test_one_position_rule_reaches_indexing_assignment_and_slicing(tmp_path, program, printed):
    w = make(tmp_path, rules=ONE_BASED, base=POSITION)
    assert both(w, program) == printed
    # knocked out, the same programs mean what the manual says (one rule, one id)
    assert w.knockout("P1").probe("xs = [5, 6, 7]\nprint(xs[1])").text.strip() == "6"


NEGATIVE_FALSE = ('rule T1 "negatives are false" {\n  hook truthy(v) = if is_int(v) then v > 0 else prior(v)\n'
                  '  statement "x."\n  equation "(if (is_int v) (> v 0) (truthy v))"\n}\n')
TRUTHY = '  hook truthy(v: any) -> bool = truthy(v)  "usual."\n'


def test_a_truthiness_rule_reaches_conditions_and_the_ops_that_call_holds(tmp_path):
    w = make(tmp_path, rules=NEGATIVE_FALSE, base=TRUTHY)
    program = "if -1:\n    print(1)\nelse:\n    print(0)\nprint(AND(-1, 5), NOT(-1), NOT(3))"
    assert both(w, program) == "0\n-1 true false"
    knocked = w.knockout("T1")
    assert both(knocked, program, knocked.sem) == "1\n5 false false"


def test_holds_without_a_truthy_hook_is_the_standard_truthiness(plain):
    assert both(plain, 'print(AND(0, 1), AND("a", 2), NOT([]))') == "0 2 true"


def test_the_truthy_hook_cannot_call_holds(tmp_path):
    with pytest.raises(SpecError, match="cannot call holds"):
        make(tmp_path, rules='rule T2 "x" {\n  hook truthy(v) = not holds(v)\n  statement "x."\n'
             '  equation "(not (truthy v))"\n}\n', base=TRUTHY)


# ---------------------------------------------------------------- control rules are checked at compile time

@pytest.mark.parametrize("hook, body, message", [
    ("jump(word: str) -> str = word", 'jump(word) = if word == "break" then "stop" else word',
     'jump("break") gives "stop", and the kernel needs one of "break", "continue" or "pass"'),
    ("jump(word: str) -> str = word", 'jump(word) = if loop_depth > 2 then "out" else word',
     'gives "out" inside 3 loops'),
    ("passes(kind: str, n: int) -> int = n", 'passes(kind, n) = if kind == "while" then "more" else n',
     'passes("while", 0) gives "more"'),
    ("branch_order(n: int) -> list = range(n)", "branch_order(n) = range(n + 1)",
     "branch_order(1) gives [0, 1] (list), and the kernel needs a list of positions"),
])
def test_a_control_rule_the_kernel_refuses_is_a_located_spec_error(tmp_path, hook, body, message):
    rules = f'rule C1 "x" {{\n  hook {body}\n  statement "x."\n  equation "(+ 1 1)"\n}}\n'
    with pytest.raises(SpecError) as info:
        make(tmp_path, rules=rules, base=f'  hook {hook}  "doc."\n')
    text = info.value.render()
    assert message in text, text
    assert "w.world:" in text and "^" in text and "hook " in text  # file:line:col, the line and a caret


def test_a_control_rule_that_fails_on_purpose_is_left_to_run_time(tmp_path):
    make(tmp_path, rules='rule C2 "x" {\n  hook jump(word) = if loop_depth > 1 then error("no") else word\n'
         '  statement "x."\n  equation "(if (> loop_depth 1) (error \\"no\\") word)"\n}\n',
         base='  hook jump(word: str) -> str = word  "doc."\n')


# ---------------------------------------------------------------- the lang3 world that uses them

@pytest.fixture(scope="module")
def loops():
    return load_world(LOOPS)


@pytest.mark.parametrize("program, printed", [
    ("if -2:\n    print(1)\nelse:\n    print(0)", "0"),  # T1
    ("print(-2 or 7, not -2)", "7 true"),  # T1 through holds in OR and NOT
    ("xs = [4, 5, 6]\nxs[1] = 0\nprint(xs[1], xs[2:3])", "0 [5, 6]"),  # P1
    ("i = 0\nwhile i < 5:\n    i = i + 1\n    break\nelse:\n    print(i)", "1"),  # E1
    ("def f():\n    k = 1\n    def g():\n        return k\n    k = 2\n    return g()\nprint(f())", "1"),  # C1
    ("for x in [1]:\n    break\nelse:\n    print(9)\nprint(0)", "0"),  # E1 keeps for loops
    ("for x in [1, 2]:\n    for y in [3, 4]:\n        break 2\n    print(x)", "1\n2"),  # B1
    ("s = [1, 2]\nAPPEND(s, 3)\nprint(POP(s), s)", "3 [1, 2]"),
])
def test_the_loops_world_behaves_as_its_rules_say(loops, program, printed):
    if "    def " in program:  # a closure: the closure kernel runs it
        assert loops.probe(program).text.strip() == printed
        return
    assert both(loops, program) == printed


def test_the_loops_world_certifies():
    from click.testing import CliRunner

    from worldspec.cli import main
    r = CliRunner().invoke(main, ["check", LOOPS])
    assert r.exit_code == 0, r.output
    assert "certified: no problems" in r.output


def test_the_manual_documents_the_new_forms(loops):
    text = loops.manual
    assert "runs when the loop ends without a break" in text  # the loop_else form
    assert "`break 2`" in text and "`{\"k\": v}`" in text
    assert "POP(xs)" in text and "wherever it is called" in text


@pytest.mark.parametrize("program, true, knocked, manual", [
    # D1: setting a key the map has keeps its old value; a new key is added
    ('m = {"a": 1}\nm["a"] = 2\nm["b"] = 3\nprint(m)', '{"a": 1, "b": 3}', '{"a": 2, "b": 3}', '{"a": 2, "b": 3}'),
    # the Python counting idiom counts nothing past 1
    ("m = {}\nfor x in [7, 7, 7]:\n    if HAS(m, x):\n        m[x] = m[x] + 1\n    else:\n        m[x] = 1\nprint(m)",
     "{7: 1}", "{7: 3}", "{7: 3}"),
    # a nested assignment through a key the map has is lost too; with D1 out, P1 counts the list from 1
    ('m = {"a": [1, 2]}\nm["a"][1] = 9\nprint(m)', '{"a": [1, 2]}', '{"a": [9, 2]}', '{"a": [1, 9]}'),
    # a literal's later key still wins, and list elements are set as P1 says
    ('m = {"a": 1, "a": 2}\nxs = [4, 5]\nxs[1] = 0\nprint(m, xs)', '{"a": 2} [0, 5]', '{"a": 2} [0, 5]',
     '{"a": 2} [4, 0]'),
])
def test_a_map_key_keeps_its_first_value(loops, program, true, knocked, manual):
    assert both(loops, program) == true
    assert both(loops.knockout("D1"), program) == knocked
    assert both(loops.base_world(), program) == manual


def test_the_nested_assignment_of_a_task_is_reached_by_the_position_rule(loops):
    """Q2's answers assign `g[1][1] = 0` (solution) and `g[0][0] = 0` (naive): P1 reaches each position of it."""
    program = "g = [[1, 2], [3, 4]]\ng[1][1] = 0\nprint(g)"
    assert both(loops, program) == "[[0, 2], [3, 4]]"
    assert both(loops.knockout("P1"), program) == "[[1, 2], [3, 0]]"
    q2 = next(t for t in loops.tasks if t.id == "Q2")
    assert "g[1][1] = 0" in q2.solution and "g[0][0] = 0" in q2.naive and loops.requires(q2) == {"P1"}


# ---------------------------------------------------------------- functions as values and closures

@pytest.mark.parametrize("program, printed", [
    ("def g(a):\n    return a + 1\nf = g\nprint(f(2))", "3"),
    ("def g(a):\n    return a + 1\ndef twice(f, x):\n    return f(f(x))\nprint(twice(g, 2), twice(NEG, 2))", "4 2"),
    ("def g(a):\n    return a + 1\nfs = [g, NEG]\nfor f in fs:\n    print(f(5))", "6\n-5"),
    ("x = 1\nprint(x(2))", "EvalError: x holds int, not a function, and cannot be called"),
])
def test_functions_are_values(plain, program, printed):
    assert both(plain, program) == printed


@pytest.mark.parametrize("program, printed", [
    ("def mk(n):\n    def add(x):\n        return x + n\n    return add\na = mk(3)\nb = mk(10)\nprint(a(1), b(1))",
     "4 11"),
    ("def outer():\n    k = 5\n    def inner():\n        return k\n    k = 6\n    return inner()\nprint(outer())", "6"),
    ("def counter():\n    c = [0]\n    def inc():\n        c[0] = c[0] + 1\n        return c[0]\n    return inc\n"
     "i = counter()\nprint(i(), i())", "1 2"),  # a write goes to the scope the variable lives in
    ("def a():\n    q = 7\n    def b():\n        def c():\n            return q\n        return c\n    f = b()\n"
     "    return f()\nprint(a())", "7"),  # two levels out
    ("def mk():\n    def inner():\n        return 1\n    return inner\nf = mk()\nprint(f(), inner())", "1 1"),
])
def test_a_function_defined_in_another_is_a_closure(plain, program, printed):
    fb = plain.probe(program)
    assert fb.text.strip() == printed, fb.text


def test_an_enclosed_rule_makes_closures_capture_values(loops):
    program = ("def makers():\n    fs = []\n    for i in [1, 2, 3]:\n        def f():\n            return i * 10\n"
               "        fs = fs + [f]\n    return fs\nfor g in makers():\n    print(g())")
    assert loops.probe(program).text == "10\n20\n30"
    assert loops.knockout("C1").probe(program).text == "30\n30\n30"  # late binding, as in Python
