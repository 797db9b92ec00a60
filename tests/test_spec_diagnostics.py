"""Every diagnostic the spec compiler emits: `file:line:col: message`, the source
line, a caret under the offending column, an actionable hint; through the CLI,
exit status 2 and never a traceback.

Most cases are a snippet appended to MINI (a small spec that compiles); their
expected line is counted from the snippet's first line. WHOLE cases are whole
files (headers and the like) with absolute positions.
"""
from __future__ import annotations

import os
import re

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import compile_spec
from worldspec.compiler import build
from worldspec.diagnostics import SHOWN_LINE_CHARS, SpecError
from worldspec.parser import load_spec, parse_spec

FILE = "mini.world"

MINI = '''world "Mini" version 1
kind program
seed 7
syntax {
  assign "SET {name} AS {expr}"
  output EMIT
  true   YES
  false  NO
  none   VOID
  while  "AWAIT {expr}:"
}
base {
  hook int_literal(n: int) -> int = n  "Integers are decimal."
  op PLUCK(xs: list, i: int) -> int = get(xs, i)  "The element at position i."
  op STRAND(*xs: int) -> list = xs  "A list of the arguments."
  op ADD(a: int, b: int) -> int = a + b  "a plus b."
}
rule R1 "PLUCK counts from one" {
  op PLUCK(xs, i) = get(xs, i - 1)
  statement "PLUCK is 1-based."
  equation  "(get xs (- i 1))"
}
task T1 band apply {
  prompt "Print the first element of xs."
  input  xs: list
  case   [1, 2]
  case   [5]
  expect get(xs, 0)
  solution "EMIT(PLUCK(xs, 1))"
  naive    "EMIT(PLUCK(xs, 0))"
}
'''
MINI_LINES = len(MINI.splitlines())

HEADER = 'world "W" version 1\nkind program\nseed 1\n'


def compile_text(text: str, file: str = FILE):
    return compile_spec(parse_spec(text, file))


def rule(rid: str, override: str, statement: str = '  statement "s"\n',
         equation: str = '  equation "(x)"\n', title: str = "t") -> str:
    return f'rule {rid} "{title}" {{\n  {override}\n{statement}{equation}}}\n'


def task(tid: str, body: str, labels: str = " band apply") -> str:
    return f"task {tid}{labels} {{\n{body}}}\n"


T_OK = ('  prompt "p"\n  input  xs: list\n  case   [1]\n  expect get(xs, 0)\n'
        '  solution "EMIT(PLUCK(xs, 1))"\n')


def case(snippet, fragment, line, col, id, marks=()):
    return pytest.param(snippet, fragment, line, col, id=id, marks=marks)


# (snippet appended to MINI, message fragment, line within the snippet, column)
CASES = [
    # ---- syntax of the .world file
    case('rule R2 "x" {\n  op ADD(a, b) = a +\n}\n', "unexpected '}'", 3, 1, "syntax-error-token"),
    case("summary 'single quotes'\n", "Strings are written in double quotes", 1, 9, "syntax-error-quote"),
    case("base {\n  op SUB(a: int, b: int) -> int = a - b  \"doc\"\n", "Expected 'hook', 'op', '}'",
         2, 42, "syntax-error-eof"),
    case("def f(x) = x.__class__\n", "unexpected character '.'", 1, 13, "attribute-access-is-syntax-error"),
    case("seed 3\n", "'seed' is declared twice", 1, 1, "header-twice"),
    # ---- rule overrides and bodies
    case(rule("R2", "op PLUK(xs, i) = get(xs, i)"), "Did you mean PLUCK?", 2, 6, "override-unknown-op"),
    case(rule("R2", "hook truthy(v) = v"), "which base does not define", 2, 8, "override-undeclared-hook"),
    case(rule("R2", "op ADD(a, b) = gett(a, b)"), "Did you mean get?", 2, 18, "unknown-name-in-body"),
    case(rule("R2", "op ADD(a, b) = a + c"), "unknown name 'c'", 2, 22, "unknown-variable-in-body"),
    case(rule("R2", "op ADD(a) = a"), "gives ADD 1 parameter(s); base has 2", 2, 6, "override-wrong-arity"),
    case(rule("R1", "op ADD(a, b) = b + a"), "rule id R1 is used twice", 1, 6, "duplicate-rule-id"),
    case(rule("R2", "op ADD(a, b) = b + a", statement=""), "rule R2 has no statement", 1, 6,
         "rule-without-statement"),
    case(rule("R2", "op ADD(a, b) = b + a", equation=""), "rule R2 has no equation", 1, 6,
         "rule-without-equation"),
    case('rule R2 "x" {\n  statement "s"\n  equation "(x)"\n}\n', "rule R2 overrides nothing", 1, 6,
         "rule-without-override"),
    case('rule R2 "x" {\n  op ADD(a, b) = b + a\n  statment "s"\n  equation "(+ b a)"\n}\n',
         "Did you mean statement?", 3, 3, "unknown-rule-field"),
    # ---- the meta-language: names, arities, forbidden names
    case("def f(x) = len(x, 1)\n", "len takes 1 argument(s), got 2", 1, 12, "builtin-arity"),
    case("def f(x) = range()\n", "range takes 1 to 3 argument(s), got 0", 1, 12, "builtin-arity-range"),
    case("def g(x) = x\ndef h(y) = g(y, y)\n", "g takes 1 argument(s), got 2", 2, 12, "def-arity"),
    case("def f(x) = lenn(x)\n", "Did you mean len?", 1, 12, "unknown-function-suggestion"),
    case("def f(x) = __import__(x)\n", "'__import__' is not allowed", 1, 12, "forbidden-__import__"),
    case("def f(x) = open(x)\n", "'open' is not allowed", 1, 12, "forbidden-open"),
    case("def f(x) = eval(x)\n", "'eval' is not allowed", 1, 12, "forbidden-eval"),
    case("def f(x) = exec(x)\n", "'exec' is not allowed", 1, 12, "forbidden-exec"),
    case("def f(x) = getattr(x, \"y\")\n", "'getattr' is not allowed", 1, 12, "forbidden-getattr"),
    case("def f(x) = import(x)\n", "'import' is not allowed", 1, 12, "forbidden-import"),
    case("def f(x) = __builtins__\n", "'__builtins__' is not allowed", 1, 12, "forbidden-dunder-var"),
    case("def f(x) = x + __class__(1)\n", "'__class__' is not allowed", 1, 16, "forbidden-dunder-call"),
    case("def f(__x) = 1\n", "'__x' is not allowed", 1, 14, "forbidden-dunder-param"),
    case("def f(x) = let __y = 1 in x\n", "'__y' is not allowed", 1, 12, "forbidden-dunder-let"),
    case("def f(x) = map(fn(open) => 1, x)\n", "'open' is not allowed", 1, 16, "forbidden-lambda-param"),
    case("def eval(x) = x\n", "'eval' is not allowed", 1, 1, "forbidden-def-name"),
    case("def f(x) = x\ndef f(y) = y\n", "f is defined twice", 2, 1, "def-twice"),
    case(rule("R2", "op ADD(a, b) = __import__(\"os\")"), "'__import__' is not allowed", 2, 18,
         "forbidden-in-rule-body"),
    # ---- base lines
    case('base {\n  hook truthyy(v: any) -> bool = truthy(v)  "doc"\n}\n', "Did you mean truthy?", 2, 8,
         "unknown-hook"),
    case('base {\n  hook truthy(a: any, b: any) -> bool = a  "doc"\n}\n', "hook truthy takes 1 parameter(s)",
         2, 8, "hook-wrong-parameter-count"),
    case('base {\n  hook assign(name: str) -> any = name  "doc"\n}\n', "hook assign takes 2 parameter(s)",
         2, 8, "hook-wrong-parameter-count-assign"),
    case('base {\n  op ADD(a: int, b: int) -> int = a  "doc"\n}\n', "op ADD is defined twice in base", 2, 6,
         "duplicate-base-line"),
    case('base {\n  op NEG(a: integer) -> int = 0 - a  "doc"\n}\n', "Did you mean int?", 2, 6, "unknown-type"),
    case('base {\n  op NEG(a: int) -> lst = 0 - a  "doc"\n}\n', "unknown type 'lst'", 2, 6,
         "unknown-return-type"),
    case('base {\n  op V(*xs: int, y: int) -> int = y  "doc"\n}\n', "only the last parameter of V may be variadic",
         2, 6, "variadic-not-last"),
    case('base {\n  op E(a: int) -> int = a  ""\n}\n', "op E has no manual entry", 2, 6, "no-manual-entry"),
    case('base {\n  op SET(a: int) -> int = a  "doc"\n}\n', "operator SET is also a keyword", 2, 6,
         "operator-named-like-keyword"),
    case('base {\n  op AWAIT(a: int) -> int = a  "doc"\n}\n', "operator AWAIT is also a keyword", 2, 6,
         "operator-named-like-while-keyword"),
    case('base {\n  op YES(a: int) -> int = a  "doc"\n}\n', "operator YES is also a keyword", 2, 6,
         "operator-named-like-true-word"),
    # ---- herrings
    case('herring H1 ADDD "x"\n', "Did you mean ADD?", 1, 9, "herring-unknown-op"),
    case('herring H1 PLUCK "x"\n', "but rule R1 changes it", 1, 9, "herring-on-overridden-op"),
    case('herring R1 ADD "x"\n', "id R1 is used twice", 1, 9, "herring-id-reuses-rule-id"),
    # ---- the syntax block
    case('syntax {\n  whilst "WHILST {expr}:"\n}\n', "Did you mean while?", 2, 3, "unknown-syntax-entry"),
    case('syntax {\n  if "WHEN:"\n}\n', "must contain {expr}", 2, 3, "template-missing-expr"),
    case('syntax {\n  for "EACH {name}:"\n}\n', "must contain {expr}, {name}", 2, 3, "template-missing-one"),
    case('syntax {\n  function "FUNC {name}():"\n}\n', "{params}", 2, 3, "template-missing-params"),
    case('syntax {\n  assign "{name} {expr}"\n}\n', "has no keyword", 2, 3, "template-without-keyword"),
    case('syntax {\n  output "PRINT IT"\n}\n', "must be a single word", 2, 3, "keyword-not-a-word"),
    case('syntax {\n  assign "LET {name} 9 {expr}"\n}\n', "cannot read the assign template", 2, 3,
         "template-unreadable"),
    case('syntax {\n  break HALT\n  continue HALT\n}\n', "both start with 'HALT'", 3, 3,
         "ambiguous-syntax"),
    # ---- tasks and examples
    case(task("T1", T_OK), "task id T1 is used twice", 1, 6, "duplicate-task-id"),
    case(task("T2", T_OK, labels=""), "task T2 has no band", 1, 6, "task-without-band"),
    case(task("T2", T_OK.replace('  prompt "p"\n', "")), "task T2 has no prompt", 1, 6, "task-without-prompt"),
    case(task("T2", T_OK.replace("  expect get(xs, 0)\n", "")), "task T2 has no expect", 1, 6,
         "task-without-expect"),
    case(task("T2", T_OK.replace('  solution "EMIT(PLUCK(xs, 1))"\n', "")), "has no reference solution", 1, 6,
         "task-without-solution"),
    case(task("T2", T_OK.replace("  case   [1]\n", "")), "task T2 has no cases", 1, 6, "task-without-cases"),
    case(task("T2", T_OK.replace("  case   [1]\n", "  case   [1], 2\n")),
         "this case gives 2 value(s) for 1 input(s) (xs)", 4, 3, "case-arity"),
    case(task("T2", T_OK.replace("  case   [1]\n", "  case   [1]\n  case   get([], 0)\n")),
         "a case value fails: index out of range", 5, 3, "case-value-fails"),
    case(task("T2", T_OK.replace("expect get(xs, 0)", "expect get(xs, 3)")),
         "expect fails on case 1: index out of range", 5, 3, "expect-fails-on-a-case"),
    case(task("T2", T_OK.replace("expect get(xs, 0)", "expect get(ys, 0)")), "unknown name 'ys'", 5, 14,
         "expect-unknown-name"),
    case(task("T2", T_OK.replace("input  xs: list", "input  xs: lst")), "unknown type 'lst'", 1, 6,
         "input-unknown-type"),
    case(task("T2", T_OK.replace("  case   [1]\n", "  promt  \"p2\"\n  case   [1]\n")), "Did you mean prompt?",
         4, 3, "unknown-task-field"),
    case(task("T2", T_OK.replace('"EMIT(PLUCK(xs, 1))"', '"EMIT(PLUCK(xs, 1)"')),
         "task T2's solution does not parse", 6, 29, "solution-does-not-parse"),
    case(task("T2", T_OK.replace('"EMIT(PLUCK(xs, 1))"', '"EMIT(PLUK(xs, 1))"')),
         "unknown operator PLUK. Did you mean PLUCK?", 6, 18, "solution-unknown-operator"),
    case(task("T2", T_OK + '  naive "EMIT(PLUCK(xs 0))"\n'), "task T2's naive does not parse", 7, 24,
         "naive-does-not-parse"),
    case(task("T2", '  prompt "p"\n  predict\n  program "EMIT(1"\n'), "task T2's program does not parse", 4, 17,
         "predict-program-does-not-parse"),
    case(task("T2", '  prompt "p"\n  predict\n'), "predict task T2 has no program", 1, 6,
         "predict-without-program"),
    case('example E1 band apply "p" { program "EMIT(1" }\n', "example E1 does not parse", 1, 43,
         "example-does-not-parse-same-line"),
    case('example E1 band apply "p" { }\n', "example E1 has no program", 1, 9, "example-without-program"),
    case('example E1 band apply "p" { program "EMIT(1)"  output "1" }\n', "unknown example field 'output'",
         1, 48, "unknown-example-field"),
    # ---- sections, params, includes, budget
    case('exampel E1 "p" {\n  program "EMIT(1)"\n}\n', "Did you mean example?", 1, 1, "unknown-section"),
    case("param Q = pick(1..5) default 9\n", "the default 9 of Q is not among its choices", 1, 1,
         "param-default-not-among-choices"),
    case("param Q = pick([2, 3]) default 4\n", "not among its choices", 1, 1, "param-list-default"),
    case("param Q = pick(5..1)\n", "is not an integer range", 1, 1, "param-empty-range"),
    case("param Q = pick([])\n", "needs a non-empty list", 1, 1, "param-empty-list"),
    case("param Q = 1\nparam Q = 2\n", "param Q is declared twice", 2, 1, "param-twice"),
    case("param Q = get([], 0)\n", "param Q cannot be evaluated: index out of range", 1, 1, "param-fails"),
    case("param Q = 1\ndef Q(x) = x\n", "Q is defined twice", 2, 1, "def-shadows-param"),
    case('include "no-such-file.world"\n', "cannot read included file 'no-such-file.world'", 1, 1,
         "missing-include"),
    case('include "/etc/passwd"\n', "cannot include '/etc/passwd'", 1, 1, "include-outside-worlds"),
    case('include "notes.txt"\n', "cannot include 'notes.txt'", 1, 1, "include-not-a-world"),
    case("budget {\n  roundz 3\n}\n", "Did you mean rounds?", 2, 3, "unknown-budget-key"),
    # ---- a mistyped section or block keyword is blamed, not the token where the parser stopped
    case('rulle R2 "x" {\n  op ADD(a, b) = b + a\n  statement "s"\n  equation "(+ b a)"\n}\n',
         "unknown section 'rulle'", 1, 1, "mistyped-rule"),
    case('tsak T2 band apply {\n  prompt "p"\n}\n', "Did you mean task?", 1, 1, "mistyped-task"),
    case("budjet {\n  rounds 4  calls_per_round 12\n}\n", "Did you mean budget?", 1, 1, "mistyped-budget"),
    case('sytax {\n  assign "SET {name} AS {expr}"\n}\n', "Did you mean syntax?", 1, 1, "mistyped-syntax"),
    case("parm Q = 3\n", "Did you mean param?", 1, 1, "mistyped-param"),
    case('base {\n  hok truthy(v: any) -> bool = truthy(v)  "d"\n}\n', "unknown keyword 'hok'", 2, 3,
         "mistyped-hook"),
    case('rule R2 "x" {\n  opp ADD(a, b) = b + a\n  statement "s"\n  equation "(+ b a)"\n}\n',
         "Did you mean op?", 2, 3, "mistyped-op-in-rule"),
    # ---- limits: nothing a spec can write is an internal error
    case("param Q = " + "[" * 150 + "]" * 150 + "\n", "nests more than 100 levels deep", 1, 111,
         "nesting-brackets"),
    case("param Q = " + "-" * 150 + "1\n", "nests more than 100 levels deep", 1, 111, "nesting-signs"),
    case("param Q = " + "not " * 150 + "true\n", "nests more than 100 levels deep", 1, 411, "nesting-not"),
    case("param Q = " + "1+" * 150 + "1\n", "nests more than 100 levels deep", 1, 212, "nesting-chain"),
    case("param Q = " + "if true then 1 else " * 150 + "2\n", "nests more than 100 levels deep", 1, 2011,
         "nesting-if-chain"),
    # call chains nest without brackets that stay open: the parser's own depth check on the tree stops them
    case("param Q = f" + "()" * 150 + "\n", "nests more than 100 levels deep", 1, 11, "nesting-call-chain"),
    case("param Q = " + "9" * 5000 + "\n", "this integer literal is too large", 1, 11, "huge-int-literal"),
    case("param Q = " + "2" * 78 + "\n", "this integer literal is too large", 1, 11, "int-literal-over-256-bits"),
    case("param Q = " + "9" * 400 + ".5\n", "this number is too large", 1, 11, "huge-float-literal"),
    case(task("T2", T_OK.replace("case   [1]", "case   [" + "7" * 4301 + "]")), "integer literal is too large",
         4, 11, "huge-case-literal"),
    case("budget {\n  rounds 99999999999999999999999\n}\n", "budget entry is too large", 2, 10,
         "huge-budget-entry"),
    case("budget {\n  rounds 100001\n}\n", "budget entry is too large (at most 100,000)", 2, 10,
         "budget-entry-over-cap"),
    case("budget {\n  unit_cost output 99999999999\n}\n", "unit cost is too large", 2, 20, "huge-unit-cost"),
    case('summary "' + "x" * 300_000 + '"\n', "longer than 256,000 characters", 1, 9, "huge-string"),
]

# Whole files: (text, fragment, absolute line, column)
WHOLE = [
    case('world "W" version ' + "9" * 5000 + "\n", "this version is too large", 1, 19, "huge-version"),
    case('world "W" version 1000001\n', "version is too large (at most 1,000,000)", 1, 19, "version-over-cap"),
    case('world "W" version 1\nseed ' + "9" * 5000 + "\n", "this seed is too large", 2, 6, "huge-seed"),
    case('world "W" version 1\nseed 9223372036854775808\n', "seed is too large (at most 9,223,372,036,854,775,807)",
         2, 6, "seed-over-cap"),
    case('world "W" version 1\nkind progam\nseed 1\n', "unknown world kind 'progam'", 2, 6,
         "unknown-world-kind"),
    case('kind program\nseed 1\n', "does not start with a world header", 1, 1, "no-world-header"),
    case('', "does not start with a world header", 1, 1, "empty-file"),
    # language 3 refuses an unknown escape (an older world is warned: tests/test_language_versions.py)
    case('world "W" version 1\nlanguage 3\nkind program\nseed 1\nsummary "a\\ud800"\n',
         "unknown escape '\\u' in a string", 5, 11, "unknown-escape"),
    case('world "W" version 1\nlanguage 9\n', "unknown language version 9", 2, 10, "unknown-language"),
]


def _render_checks(err: SpecError, file: str, line: int, col: int, fragment: str, source: str = "") -> None:
    """The first line locates the error; the quoted source line has a caret under the column.

    A source line longer than SHOWN_LINE_CHARS is quoted as a window around the
    column; the caret must still stand under the column's character.
    """
    text = err.render()
    lines = text.splitlines()
    assert lines[0].startswith(f"{file}:{line}:{col}: "), text
    assert fragment in text, text
    # the source line, then a caret under the column
    assert len(lines) >= 3, text
    assert lines[2].strip() == "^", text
    assert lines[1].strip(), text
    if len(source) <= SHOWN_LINE_CHARS:
        assert lines[2].index("^") == 2 + col - 1, text
        if source:
            assert lines[1] == "  " + source
    else:
        assert len(lines[1]) <= 2 + SHOWN_LINE_CHARS + 6, text
        assert lines[1][lines[2].index("^")] == source[col - 1], text
        assert lines[1][2:].strip(".") in source


@pytest.mark.parametrize("snippet,fragment,line,col", CASES)
def test_diagnostic(snippet, fragment, line, col):
    with pytest.raises(SpecError) as info:
        compile_text(MINI + snippet)
    # the quoted source line is the file's own line
    _render_checks(info.value, FILE, MINI_LINES + line, col, fragment,
                   (MINI + snippet).splitlines()[MINI_LINES + line - 1])


@pytest.mark.parametrize("text,fragment,line,col", WHOLE)
def test_whole_file_diagnostic(text, fragment, line, col):
    with pytest.raises(SpecError) as info:
        compile_text(text)
    err = info.value
    if not text.strip():  # an empty file has no source line to quote
        assert err.render().startswith(f"{FILE}:1:1: ") and fragment in err.render()
        return
    _render_checks(err, FILE, line, col, fragment)


def test_unsupported_world_kind(monkeypatch):
    monkeypatch.setattr(build, "RESERVED", ("nimbus",))  # a kind the language reserves (none is, today)
    text = 'world "W" version 1\nkind nimbus\nseed 1\n'
    with pytest.raises(SpecError) as info:
        compile_text(text)
    _render_checks(info.value, FILE, 2, 6, "is not supported by this version")


def test_mini_spec_compiles():
    w = compile_text(MINI)
    assert [r.id for r in w.rules] == ["R1"]
    assert w.probe("EMIT(PLUCK(STRAND(10, 20), 1))").text == "10"


def test_default_syntax_compiles():
    w = compile_text('world "W" version 1\nkind program\nseed 1\n'
                     'base {\n  op ADD(a: int, b: int) -> int = a + b "d"\n}\n')
    assert w.probe("x = ADD(1, 2)\nprint(x)").text == "3"


def test_program_error_in_a_block_string_points_at_the_failing_line():
    body = T_OK.replace('"EMIT(PLUCK(xs, 1))"', '"""\n    SET y AS 1\n    EMIT(PLUCK(xs y))\n  """')
    with pytest.raises(SpecError) as info:
        compile_text(MINI + task("T2", body))
    # snippet line 8 is `    EMIT(PLUCK(xs y))`
    assert info.value.span.line == MINI_LINES + 8, info.value.render()


def test_example_program_error_points_at_the_program():
    snippet = 'example E1 band apply "p" {\n  program """\n    EMIT(1)\n    EMIT(2\n  """\n}\n'
    with pytest.raises(SpecError) as info:
        compile_text(MINI + snippet)
    assert "example E1 does not parse" in info.value.render()
    assert info.value.span.line in (MINI_LINES + 4, MINI_LINES + 5), info.value.render()


def test_unmatched_double_quote_is_located():
    with pytest.raises(SpecError) as info:
        compile_text(MINI + 'summary "never closed\n')
    assert info.value.render().startswith(f"{FILE}:{MINI_LINES + 1}:")


# ---------------------------------------------------------------- includes and files


def test_include_shares_definitions(tmp_path):
    (tmp_path / "shared.world").write_text('world "Shared" version 1\ndef twice(x) = x * 2\n')
    main_text = MINI + 'include "shared.world"\nbase {\n  op DOUBLE(a: int) -> int = twice(a)  "2a"\n}\n'
    p = tmp_path / "main.world"
    p.write_text(main_text)
    w = compile_spec(load_spec(str(p)))
    assert w.name == "Mini"  # the included file's header describes itself only
    assert w.probe("EMIT(DOUBLE(21))").text == "42"


def test_error_inside_an_included_file_points_into_that_file(tmp_path):
    (tmp_path / "shared.world").write_text('world "Shared" version 1\n\ndef twice(x) = x * tw0\n')
    p = tmp_path / "main.world"
    p.write_text(MINI + 'include "shared.world"\n')
    with pytest.raises(SpecError) as info:
        compile_spec(load_spec(str(p)))
    text = info.value.render()
    assert text.startswith(f"{tmp_path / 'shared.world'}:3:20: "), text
    assert "def twice(x) = x * tw0" in text and "Did you mean twice?" not in text.splitlines()[0]


def test_self_include_is_stopped(tmp_path):
    p = tmp_path / "loop.world"
    p.write_text('world "Loop" version 1\ninclude "loop.world"\n')
    with pytest.raises(SpecError) as info:
        load_spec(str(p))
    text = info.value.render()
    assert "includes nest too deeply" in text
    assert re.match(rf"{re.escape(str(p))}:2:1: ", text), text
    assert "^" in text


def test_non_utf8_file(tmp_path):
    p = tmp_path / "latin1.world"
    p.write_bytes('world "Caf\xe9" version 1\n'.encode("latin-1"))
    with pytest.raises(SpecError) as info:
        load_spec(str(p))
    assert info.value.render().startswith(f"{p}:1:11: ") and "not UTF-8 text (byte 0xe9)" in info.value.render()


def test_render_is_str_and_hint_is_last_line():
    with pytest.raises(SpecError) as info:
        compile_text(MINI + rule("R2", "op PLUK(xs, i) = get(xs, i)"))
    err = info.value
    assert str(err) == err.render()
    assert err.render().splitlines()[-1].strip() == "Did you mean PLUCK?"


# ---------------------------------------------------------------- through the CLI

BROKEN = {
    "typo-in-override": (rule("R2", "op PLUK(xs, i) = get(xs, i)"), MINI_LINES + 2, 6, "PLUCK"),
    "syntax-error": ('rule R2 "x" {\n  op ADD(a, b) = a +\n}\n', MINI_LINES + 3, 1, "unexpected"),
    "forbidden-name": ("def f(x) = __import__(x)\n", MINI_LINES + 1, 12, "not allowed"),
    "case-arity": (task("T2", T_OK.replace("  case   [1]\n", "  case   [1], 2\n")), MINI_LINES + 4, 3,
                   "value(s) for 1 input(s)"),
}


@pytest.mark.parametrize("command", ["check", "manual", "probe", "play", "check --json"])
@pytest.mark.parametrize("which", sorted(BROKEN))
def test_cli_broken_spec_exits_2_with_location(tmp_path, which, command):
    snippet, line, col, fragment = BROKEN[which]
    p = tmp_path / "broken.world"
    p.write_text(MINI + snippet)
    args = command.split() + [str(p)] + (["EMIT(1)"] if command == "probe" else [])
    r = CliRunner().invoke(main, args, input=":quit\n")
    assert r.exit_code == 2, r.output
    out = r.output
    assert f"{p}:{line}:{col}:" in out
    assert fragment in out
    caret = [x for x in out.splitlines() if x.strip() == "^"]
    assert caret and caret[0].index("^") == 2 + col - 1
    assert "Traceback" not in out
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_cli_list_reports_a_broken_world_without_failing(tmp_path):
    (tmp_path / "good.world").write_text(MINI)
    (tmp_path / "bad.world").write_text(MINI + rule("R2", "op PLUK(xs, i) = get(xs, i)"))
    r = CliRunner().invoke(main, ["list", str(tmp_path), "--compile"])
    assert r.exit_code == 0, r.output
    assert "does not compile" in r.output and "Mini" in r.output
    assert "Traceback" not in r.output


def test_cli_param_with_huge_range_is_a_diagnostic(tmp_path):
    p = tmp_path / "huge.world"
    p.write_text(MINI + "param Z = len(range(100000000000000000000))\n")
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 2, r.output
    assert f"{p}:{MINI_LINES + 1}:1:" in r.output and "Traceback" not in r.output


def test_cli_expect_that_never_ends_is_a_diagnostic(tmp_path):
    p = tmp_path / "loop.world"
    body = T_OK.replace("expect get(xs, 0)", "expect let g = fn(h, x) => h(h, x) in g(g, xs)")
    p.write_text(MINI + task("T2", body))
    r = CliRunner().invoke(main, ["check", str(p)])
    assert r.exit_code == 2, r.output
    assert f"{p}:{MINI_LINES + 5}:" in r.output and "Traceback" not in r.output


def test_cli_missing_world_file_is_a_usage_error(tmp_path):
    r = CliRunner().invoke(main, ["check", str(tmp_path / "nope.world")])
    assert r.exit_code == 2
    assert "no world file" in r.output and "Traceback" not in r.output


def test_debug_env_is_not_needed_for_messages(monkeypatch, tmp_path):
    monkeypatch.delenv("WORLDSPEC_DEBUG", raising=False)
    p = tmp_path / "b.world"
    p.write_text(MINI + "def f(x) = open(x)\n")
    r = CliRunner().invoke(main, ["check", str(p), "--json"])
    assert r.exit_code == 2
    assert "'open' is not allowed" in r.output
    assert not os.environ.get("WORLDSPEC_DEBUG")


def test_field_words_serve_as_kind_specific_keys():
    # a kind's own items may be named like task fields, even right after an expression
    spec = parse_spec('world "W" version 1\nkind blackbox\nhidden f(1)\ninput xs, 3\ntolerance 0.5\n'
                      'opponent grim "n" { input 1 case 2 }\n', "w.world")
    assert [g.key for g in spec.generic] == ["hidden", "input", "tolerance", "opponent"]
    assert [f.key for f in spec.generic[-1].fields] == ["input", "case"]
    assert str(spec.generic[1].span) == "w.world:4:1"


@pytest.mark.parametrize("above, hint", [
    ("precompute\n\n", "Line 2, `precompute`, has no value, so what follows was read as its value"),
])
def test_an_error_caused_by_the_line_above_says_so(above, hint):
    # newlines do not end an item, so the next line is read as the value: Lark stops at its comma
    text = 'world "W" version 1\n' + above + 'domain x, int(0, 9)\n'
    with pytest.raises(SpecError) as info:
        parse_spec(text, FILE)
    err = info.value.render()
    assert "unexpected ','" in err and hint in err
    plain = 'world "W" version 1\nstep_limit 1000\ndomain x, , int(0, 9)\n'  # an error of its own line
    with pytest.raises(SpecError) as info:
        parse_spec(plain, FILE)
    assert "Line 2" not in info.value.render()
