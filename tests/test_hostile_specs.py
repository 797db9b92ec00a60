"""Hostile and broken specs end in a diagnostic (exit 2) or a world, never an internal error (exit 3).

Two corpora, both deterministic:

- MUTANTS: single-token mutations of worlds/aliencode.world (a token deleted,
  duplicated, or replaced by another token of the file or by a hostile token),
  drawn by a seeded generator. Each is parsed and compiled in-process, as
  `worldspec check` does before certifying: a SpecError counts as exit 2 and must
  be located (`file:line:col` inside the file); a world counts as exit 0 or 1
  (certification, 6 s per world, is not repeated for each); any other exception
  is what the CLI would report as an internal error, and fails the test.
- HOSTILE: hand-made attacks from issue 10 (huge literals, deep nesting, lone
  surrogates, oversized strings, unbounded budgets), each run through the real
  `worldspec check` command in-process, which must exit 2 with a located
  diagnostic and no traceback.

The corpus is compiled in two worker processes (the machine has two cores);
each mutant's outcome is then its own test, so a failure names the mutation.
"""
from __future__ import annotations

import multiprocessing
import os
import random
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor

import pytest
from click.testing import CliRunner

from conftest import full_or

from worldspec.cli import main
from worldspec.compiler import compile_spec
from worldspec.diagnostics import SpecError, SpecErrors
from worldspec.parser import BLOCK_WORDS, SECTION_WORDS, parse_expr, parse_spec
from worldspec.scan import MAX_NESTING

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALIENCODE = os.path.join(ROOT, "worlds", "aliencode.world")
N_MUTANTS = full_or(220, 60)  # 220 under WORLDSPEC_FULL_SUITE=1
SEED = 2026

# Tokens of a .world file, roughly as Lark sees them (whitespace and comments are not tokens).
TOKEN = re.compile(r'"""[\s\S]*?"""|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|#[^\n]*|\s+|[A-Za-z_]\w*|\d+(?:\.\d+)?'
                   r'|\*\*|//|<<|>>|==|!=|<=|>=|=>|->|\.\.|.')

HOSTILE_TOKENS = [
    "9" * 4301, "7" * 80, "1" * 400 + ".5", "99999999999999999999999", "[" * 300, "]" * 300, "(" * 300,
    "-" * 300 + "1", "not " * 300, "1+" * 300 + "1", "f" + "()" * 300, "if true then 1 else " * 300 + "2",
    '"\\ud800"', '"\ud800"', '"\\', '"""', '"', "'", "{", "}", "\x00", "\x1b[2J", "\u2028", "\ufeff",
    "é", "include", 'include "../secret.world"', 'include "/etc/passwd"', "rulle", "tsak", "budjet",
    "seed", "world", "rule", "task", "base", "op", "hook", "fn", "let", "=>", "->", "..", "__import__",
    "__class__", "eval", 'summary "{K}"', '"{K} {M} {nope}"', '"{"', '"}"', "default", "pick(1..0)",
    "pick([])", "range(10 ** 70)", '"' + "x" * 300_000 + '"',
]


def tokens(text: str) -> list[tuple[int, int]]:
    """(start, end) of every token of text."""
    return [m.span() for m in TOKEN.finditer(text) if not (m.group().isspace() or m.group().startswith("#"))]


def kind_of(token: str) -> str:
    """A token's class: string, word, number or punctuation."""
    if token.startswith('"'):
        return "string"
    return "word" if token[0].isalpha() or token[0] == "_" else "number" if token[0].isdigit() else "punct"


OPS = ("delete", "duplicate", "same-kind", "any", "hostile", "inner")


def mutate(text: str, spans: list[tuple[int, int]], op: str, rng: random.Random) -> tuple[int, int, str]:
    """One mutation: the span of text it replaces and the replacement."""
    start, end = spans[rng.randrange(len(spans))]
    old = text[start:end]
    if op == "delete":
        return start, end, ""
    if op == "duplicate":
        return start, end, old + " " + old
    if op == "hostile":
        return start, end, rng.choice(HOSTILE_TOKENS)
    if op == "inner":  # a word inside a string (a program, a template, a manual entry) deleted or doubled
        strings = [(a, b) for a, b in spans if text[a] == '"' and b - a > 8]
        start, end = strings[rng.randrange(len(strings))]
        words = [m.span() for m in re.finditer(r"[A-Za-z_]\w*|\d+|[(){}\[\]:,]", text[start + 1:end - 1])]
        a, b = words[rng.randrange(len(words))]
        a, b = a + start + 1, b + start + 1
        return a, b, rng.choice(("", text[a:b] + " " + text[a:b], text[a:b] + text[a:b]))
    pool = spans if op == "any" else [(a, b) for a, b in spans if kind_of(text[a:b]) == kind_of(old)]
    a, b = pool[rng.randrange(len(pool))]
    return start, end, text[a:b]


def mutants(text: str, n: int, seed: int) -> list[tuple[str, str]]:
    """n single-token mutations of text, cycling through OPS: (description, mutated text)."""
    rng = random.Random(seed)
    spans = tokens(text)
    out = []
    for i in range(n):
        op = OPS[i % len(OPS)]
        start, end, new = mutate(text, spans, op, rng)
        old, line = text[start:end], text.count("\n", 0, start) + 1
        shown = new if len(new) <= 24 else new[:20] + f"...({len(new)})"
        out.append((f"{i:03d}-{op}-line{line}-{old[:16]!r}->{shown!r}", text[:start] + new + text[end:]))
    return out


LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: ")


def outcome(text: str, file: str = ALIENCODE) -> str:
    """'ok' (a world: exit 0 or 1), 'spec: ...' (exit 2, located) or 'BAD: ...' (what would be exit 3)."""
    try:
        compile_spec(parse_spec(text, file))
    except (SpecError, SpecErrors) as e:
        errors = e.errors if isinstance(e, SpecErrors) else [e]
        for err in errors:
            rendered = err.render()
            m = LOCATED.match(rendered)
            if not (m and m["file"] == file and 1 <= int(m["line"]) <= text.count("\n") + 1 and int(m["col"]) >= 1):
                return f"BAD: not located in the file: {rendered[:300]}"
            rendered.encode("utf-8")  # printable to any UTF-8 stream
        return "spec: " + errors[0].render().splitlines()[0][:200]
    except Exception as e:  # noqa: BLE001 - the failure this test looks for
        return f"BAD: {type(e).__name__}: {str(e)[:300]}"
    return "ok"


def _outcome_of(i: int) -> str:
    return outcome(_MUTANTS[i][1])


with open(ALIENCODE, encoding="utf-8") as _f:
    _MUTANTS = mutants(_f.read(), N_MUTANTS, SEED)


@pytest.fixture(scope="module")
def outcomes() -> list[str]:
    """Every mutant's outcome, computed by two fresh worker processes.

    Spawned, not forked: by now other tests may have started threads (litellm's),
    and a forked child can inherit a lock such a thread held.
    """
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(_outcome_of, range(len(_MUTANTS)), chunksize=8))


@pytest.mark.parametrize("index", range(N_MUTANTS), ids=[d for d, _ in _MUTANTS])
def test_mutant_is_a_world_or_a_located_diagnostic(outcomes, index):
    assert not outcomes[index].startswith("BAD"), outcomes[index]


def test_the_corpus_exercises_both_outcomes(outcomes):
    # a corpus where every mutant fails to parse (or none does) would test little
    spec = sum(o.startswith("spec") for o in outcomes)
    ok = sum(o == "ok" for o in outcomes)
    assert spec >= N_MUTANTS // 3 and ok >= N_MUTANTS // 10, (spec, ok)
    assert len(_MUTANTS) >= N_MUTANTS - 10 and len({t for _, t in _MUTANTS}) >= N_MUTANTS - 20


# ---------------------------------------------------------------- hand-made attacks through `worldspec check`

HEAD = 'world "H" version 1\nkind program\nseed 1\nbase {\n  op ADD(a: int, b: int) -> int = a + b  "a plus b."\n}\n'
AFTER = len(HEAD.splitlines())  # the line number just before a snippet's first line
TASK = 'task T1 band apply {\n  prompt "p"\n  input xs: list\n  case [%s]\n  expect 1\n  solution "print(1)"\n}\n'


def attack(id: str, snippet: str | bytes, fragment: str, line: int, whole: bool = False):
    """A spec (HEAD + snippet, or the snippet alone when whole) and where its diagnostic must point."""
    return pytest.param(snippet, fragment, line if whole else AFTER + line, whole, id=id)


HOSTILE = [
    # Python refuses int() of more than 4,300 digits: every place an integer is written
    attack("param-4301-digits", "param P = " + "9" * 4301 + "\n", "integer literal is too large", 1),
    attack("case-4301-digits", TASK % ("9" * 4301), "integer literal is too large", 4),
    attack("seed-4301-digits", 'world "H" version 1\nseed ' + "9" * 4301 + "\n", "seed is too large", 2, whole=True),
    attack("version-4301-digits", 'world "H" version ' + "9" * 4301 + "\n", "version is too large", 1, whole=True),
    attack("budget-rounds-huge", "budget {\n  rounds 99999999999999999999999\n}\n", "budget entry is too large", 2),
    attack("float-overflow", "param P = " + "9" * 400 + ".0\n", "number is too large", 1),
    # nesting far beyond Python's recursion limit (the kernel raises it to 20,000)
    attack("brackets-100k", "param P = " + "[" * 100_000 + "]" * 100_000 + "\n", "nests more than 100", 1),
    attack("parens-100k", "param P = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n", "nests more than 100", 1),
    attack("signs-100k", "param P = " + "-" * 100_000 + "1\n", "nests more than 100", 1),
    attack("not-50k", "param P = " + "not " * 50_000 + "true\n", "nests more than 100", 1),
    attack("plus-100k", "param P = " + "1+" * 100_000 + "1\n", "nests more than 100", 1),
    attack("if-20k", "param P = " + "if true then 1 else " * 20_000 + "2\n", "nests more than 100", 1),
    attack("let-20k", "param P = " + "let x = 1 in " * 20_000 + "x\n", "nests more than 100", 1),
    attack("fn-20k", "param P = " + "fn() => " * 20_000 + "1\n", "nests more than 100", 1),
    attack("calls-20k", "param P = f" + "()" * 20_000 + "\n", "nests more than 100", 1),
    attack("rule-body-20k", 'rule R1 "t" {\n  op ADD(a, b) = ' + "-" * 20_000 + "a\n}\n", "nests more than 100", 2),
    # sizes
    attack("string-300k", 'summary "' + "x" * 300_000 + '"\n', "longer than 256,000 characters", 1),
    attack("string-5MB", 'summary "' + "x" * 5_000_000 + '"\n', "larger than 2,000,000 bytes", 1, whole=True),
    attack("tokens-250k", "param P = [" + "1," * 125_000 + "1]\n", "more than 200,000 tokens", 1),
    # text that is not what it seems
    attack("surrogate-escape", HEAD.replace("kind program", "language 3\nkind program") + 'summary "\\ud800"\n',
           "unknown escape", AFTER + 2, whole=True),
    attack("surrogate-bytes", HEAD.encode() + b'summary "\xed\xa0\x80"\n', "not UTF-8 text", AFTER + 1, whole=True),
    attack("terminal-escape", "param P = \x1b[2J\n", "unexpected character", 1),
    attack("nul-byte", "param P = 1\x00\n", "unexpected character", 1),
    attack("line-separator", "param P = 1\u2028param Q = (\n", "unexpected", 1),
    attack("mistyped-section", 'rulle R1 "t" {\n  op ADD(a, b) = b + a\n}\n', "Did you mean rule?", 1),
]


@pytest.mark.parametrize("snippet,fragment,line,whole", HOSTILE)
def test_hostile_spec_is_a_located_diagnostic(tmp_path, snippet, fragment, line, whole):
    path = tmp_path / "hostile.world"
    if isinstance(snippet, bytes):
        path.write_bytes(snippet)
    else:
        path.write_text(snippet if whole else HEAD + snippet, encoding="utf-8")
    r = CliRunner().invoke(main, ["check", str(path)])
    assert r.exit_code == 2, r.output[:2000]
    assert "Traceback" not in r.output and "internal error" not in r.output
    first = r.output.splitlines()[0]
    assert first.startswith(f"{path}:{line}:"), first[:300]
    assert fragment in r.output, r.output[:2000]
    assert "\x1b" not in r.output and "\x00" not in r.output  # a spec cannot drive the user's terminal
    assert max(len(x) for x in r.output.splitlines()) < 400  # a diagnostic quotes a window, not a 2 MB line


def test_surrogate_computed_into_a_summary_is_not_an_internal_error(tmp_path):
    path = tmp_path / "sur.world"
    path.write_text(HEAD + 'param P = chr(55296)\nsummary "x{P}y"\n')
    r = CliRunner().invoke(main, ["check", str(path)])
    assert r.exit_code in (0, 1, 2) and "internal error" not in r.output, r.output


# ---------------------------------------------------------------- the limits leave room for real worlds


NEAR = MAX_NESTING - 1
UNDER_THE_CAP = [
    pytest.param("len(" + "[" * (NEAR - 2) + "]" * (NEAR - 2) + ")", 1, id="brackets"),
    pytest.param("-" * NEAR + "1", -1, id="signs"),
    pytest.param("not " * NEAR + "true", False, id="not"),
    pytest.param("+".join(["1"] * NEAR), NEAR, id="chain"),
    pytest.param("if true then 1 else " * NEAR + "2", 1, id="if-chain"),
    pytest.param("let x = 1 in " * NEAR + "x", 1, id="let-chain"),
    pytest.param("(" + "fn() => " * (NEAR // 2) + "1)" + "()" * (NEAR // 2), 1, id="fn-chain-applied"),
]


@pytest.mark.parametrize("expr,value", UNDER_THE_CAP)
def test_nesting_just_under_the_cap_compiles_and_evaluates(expr, value):
    w = compile_spec(parse_spec(HEAD + f"param P = {expr}\n", "near.world"))
    assert dict(w.params)["P"] == value


def test_blackbox_style_input_cannot_nest_past_the_cap():
    # the blackbox kind reads a model's input with parse_expr: the same limits hold there
    with pytest.raises(SpecError, match="nests more than"):
        parse_expr("[" * 50_000 + "]" * 50_000, "<input>")
    with pytest.raises(SpecError, match="lone surrogate"):
        parse_expr('["\ud800"]', "<input>")
    assert parse_expr("[" * 50 + "]" * 50, "<input>") is not None


def test_keyword_lists_are_the_grammars_own_words():
    grammar = open(os.path.join(ROOT, "worldspec", "spec.lark"), encoding="utf-8").read()
    for word in SECTION_WORDS + BLOCK_WORDS:
        assert f'"{word}"' in grammar, word


def test_diagnostics_render_surrogates_and_control_characters():
    err = SpecError(parse_spec(HEAD, "r.world").span, "bad value '\ud800'", "hint \udcff")
    err.render().encode("utf-8")  # printable anywhere
    assert "\\ud800" in err.render()


# ---------------------------------------------------------------- memory


MEASURE = textwrap.dedent('''
    import sys
    from worldspec.cli import main
    codes = []
    for path in sys.argv[1:]:
        try:
            main(["check", path])
        except SystemExit as e:
            codes.append(e.code)
    # VmHWM is this process's own peak: getrusage's ru_maxrss survives exec and would carry the
    # parent's peak (a pytest process late in the suite) into the child
    peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    print(codes, peak)
''')


def test_worst_cases_stay_far_below_a_gigabyte(tmp_path):
    worst = {
        "five-mb-literal": HEAD + 'summary "' + "x" * 5_000_000 + '"\n',
        "two-mb-literal": HEAD + 'summary "' + "x" * 1_990_000 + '"\n',
        "two-mb-of-brackets": HEAD + "param P = " + "[" * 990_000 + "]" * 990_000 + "\n",
        "deep-call-chain": HEAD + "param P = f" + "()" * 60_000 + "\n",
        "token-limit": HEAD + "param P = [" + "1," * 100_200 + "1]\n",
    }
    paths = []
    for name, text in worst.items():
        (tmp_path / f"{name}.world").write_text(text)
        paths.append(str(tmp_path / f"{name}.world"))
    r = subprocess.run([sys.executable, "-c", MEASURE, *paths], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "WORLDSPEC_DEBUG": ""})
    assert r.returncode == 0, r.stderr[-2000:]
    codes, peak_kb = r.stdout.strip().splitlines()[-1].rsplit(" ", 1)
    assert codes == "[2, 2, 2, 2, 2]", r.stdout[-2000:]
    assert int(peak_kb) < 400 * 1024, f"peak RSS {int(peak_kb) // 1024} MB"
