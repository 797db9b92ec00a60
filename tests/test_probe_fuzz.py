"""Hypothesis fuzzes World.probe: random text, random bytes, programs generated
from the world's own grammar (and mutations of them), and the world's probe
generator. A probe never raises; its status, units and feedback stay in bounds."""
from __future__ import annotations

import itertools
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra.lark import from_lark
from lark import Lark

from worldspec.compiler import compile_spec
from worldspec.compiler.program.probegen import Chooser, ProbeGenerator
from worldspec.compiler.program.surface import ProgramIndenter
from worldspec.parser import parse_spec

STATUSES = {"ok", "error", "limit", "parse_error", "rejected"}

# A second world with every hook documented, indexing on and different keywords.
HOOKED = '''world "Hooked" version 1
kind program
seed 4
syntax {
  assign   "PUT {expr} INTO {name}"
  output   SHOW
  if       "IF {expr} THEN:"
  else     "ELSE:"
  for      "FOR {name} FROM {expr}:"
  while    "WHILE {expr}:"
  break    LEAVE
  function "TO {name} WITH {params}:"
  return   "ANSWER {expr}"
  true     ON
  false    OFF
  index    on
}
base {
  hook int_literal(n: int) -> int = n  "ints"
  hook str_literal(s: str) -> str = s  "strings"
  hook truthy(v: any) -> bool = truthy(v)  "truth"
  hook iterate(xs: list) -> list = xs  "loops"
  hook show(v: any) -> str = show(v)  "printing"
  hook output(parts: list[str]) -> str = join(parts, " ")  "lines"
  hook assign(name: str, v: any) -> any = v  "assignment"
  hook lookup(name: str, v: any) -> any = v  "variables"
  hook index(xs: list, i: int) -> any = get(xs, i)  "indexing"
  hook slice(xs: list, lo: int, hi: int) -> list = slice(xs, lo, hi)  "slicing"
  op LIST(*xs: int) -> list = xs  "a list"
  op PLUS(a: int, b: int) -> int = a + b  "plus"
  op TIMES(a: int, b: int) -> int = a * b  "times"
  op POWER(a: int, b: int) -> int = a ** b  "power"
  op UPTO(n: int) -> list = range(n)  "0 to n - 1"
  op JOINED(xs: list, sep: str) -> str = join(map(str, xs), sep)  "joined"
  op MAP(f: fn, xs: list) -> list = map(f, xs)  "map"
}
rule R1 "output joins with commas" {
  hook output(parts) = join(parts, ",")
  statement "SHOW separates values by commas."
  equation "(join parts \\",\\")"
}
rule R2 "indexing counts from the end" {
  hook index(xs, i) = get(xs, len(xs) - 1 - i)
  statement "xs[i] counts from the end."
  equation "(get xs (- (- (len xs) 1) i))"
}
rule R3 "TIMES adds inside loops" {
  op TIMES(a, b) = if in_loop then a + b else a * b
  statement "Inside a loop body TIMES adds."
  equation "(if in_loop (+ a b) (* a b))"
}
'''


@pytest.fixture(scope="module")
def hooked():
    return compile_spec(parse_spec(HOOKED, "hooked.world"))


@pytest.fixture(scope="module", params=["demo", "hooked"])
def world(request, demo, hooked):
    return demo if request.param == "demo" else hooked


def check_feedback(world, text, seconds: float = 30.0):
    """Probe once and check every invariant of the result (the time bound only catches a hang: the kernel's
    own limits are steps and sizes, and a loaded CI machine may be many times slower than this one)."""
    t = time.perf_counter()
    fb = world.probe(text)
    elapsed = time.perf_counter() - t
    b = world.budget
    assert elapsed < seconds, f"probe took {elapsed:.2f}s: {text[:200]!r}"
    assert fb.status in STATUSES
    assert isinstance(fb.text, str)  # "" when the program printed one empty line
    assert 0 <= fb.units <= b.units_per_call
    assert len(fb.text) <= b.feedback_chars
    assert len(fb.text.split("\n")) <= b.feedback_lines
    assert fb.truncated == ("[feedback truncated]" in fb.text)
    assert "Traceback" not in fb.text
    if fb.status in ("parse_error", "rejected"):
        assert fb.units == 0 and not fb.executed
    else:
        assert fb.units == world.charge(text) and fb.executed
    if fb.status == "rejected":
        assert world.charge(text) > b.units_per_call
    return fb


FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))


# ---------------------------------------------------------------- random text and bytes


@FUZZ
@given(text=st.text())
def test_probe_random_text(world, text):
    check_feedback(world, text)


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("()[]:,\"\\ \t\n#-0123456789xEMITSWEEPSHOWFOR_")), max_size=200))
def test_probe_random_program_like_text(world, text):
    check_feedback(world, text)


@FUZZ
@given(data=st.binary(max_size=2000), codec=st.sampled_from(["latin-1", "utf-8"]))
def test_probe_random_bytes(world, data, codec):
    check_feedback(world, data.decode(codec, errors="replace"))


@FUZZ
@given(opening=st.sampled_from("([\"'"), n=st.integers(1, 5000), tail=st.sampled_from(["", ")", "]", "1", "\n"]))
def test_probe_unbalanced_brackets(world, opening, n, tail):
    out = world.surface.word("output")
    check_feedback(world, f"{out}(" + opening * n + tail)


# ---------------------------------------------------------------- grammar-generated programs


def _indent(text: str) -> str:
    """Turn the _INDENT/_DEDENT markers drawn for the Indenter's declared
    terminals into real indentation, so generated blocks are well formed."""
    out, depth = [], 0
    for line in text.split("\n"):
        body = line.lstrip(" \t\f\x01\x02")
        for ch in line[: len(line) - len(body)]:
            depth += {"\x01": 1, "\x02": -1}.get(ch, 0)
        body = body.replace("\x01", "").replace("\x02", "").strip()
        out.append("    " * max(depth, 0) + body if body else "")
    return "\n".join(out)


def _rich_parser(world):
    """The world's own grammar, with `start` asking for at least three statements,
    blocks one level deep and no nested subscripts: a subset of the language, so
    every program drawn is still the world's, and drawing stays cheap."""
    grammar = world.surface.grammar
    for old, new in (("start: _NL* _stmt*", "start: _stmt _stmt _stmt _stmt*"),
                     # blocks hold simple statements only: one level deep keeps drawing cheap
                     ("suite: _NL _INDENT _stmt+ _DEDENT", "suite: _NL _INDENT (_simple _NL)+ _DEDENT")):
        assert old in grammar
        grammar = grammar.replace(old, new)
    # xs[i] and xs[lo:hi] on atoms only: left-recursive postfix with an expression inside
    # the brackets is a supercritical branching process for a random generator
    grammar = grammar.replace('postfix "[" expr "]" -> index', 'atom "[" atom "]" -> index')
    grammar = grammar.replace('postfix "[" [expr] ":" [expr] "]" -> slice', 'atom "[" [atom] ":" [atom] "]" -> slice')
    return Lark(grammar, parser="lalr", postlex=ProgramIndenter(), maybe_placeholders=True, strict=True)


def program_strategy(world, rich: bool = False):
    """Programs from the world's grammar (hypothesis.extra.lark), with explicit
    strategies for names, numbers, strings and the Indenter's declared terminals."""
    parser = _rich_parser(world) if rich else world.surface.parser
    terminals, _, _ = parser.grammar.compile(["start"], ())
    keywords = [t.name for t in terminals if t.pattern.type == "str" and t.pattern.value.isidentifier()]
    names = ["x", "v", "xs", "g0", "g1", "a", "n"] + sorted(world.sem.ops)
    explicit = {k: st.just(f" {k} ") for k in keywords}
    explicit.update({
        "NAME": st.sampled_from(names).map(lambda s: f" {s} "),
        "INT": st.integers(-20, 150).map(lambda i: f" {i} "),
        "STRING": st.text("ab, ", max_size=4).map(lambda s: f'"{s}"'),
        "_NL": st.just("\n"),
        "_INDENT": st.just("\x01"),
        "_DEDENT": st.just("\x02"),
        "COMMENT": st.just(""),
        "__IGNORE_1": st.just(" "),
    })
    known = {t.name for t in terminals} | {"_INDENT", "_DEDENT"}
    explicit = {k: v for k, v in explicit.items() if k in known}
    return from_lark(parser, start="start", explicit=explicit).map(_indent)


def test_grammar_strategy_makes_real_programs(demo, hooked):
    # a check of the strategy itself: some of what it draws runs and prints
    for w in (demo, hooked):
        seen = []

        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None,
                  derandomize=True)
        @given(program_strategy(w, rich=True))
        def collect(p):
            fb = w.probe(p)
            seen.append((p, fb))
        collect()
        # The whitespace the strategy draws (form feeds before indentation) upsets the indenter
        # in some draws, and how many depends on the order tests run in; what matters here is
        # that the strategy reaches programs that run, and that nothing it draws crashes.
        assert all(fb.status in ("ok", "error", "limit", "parse_error", "rejected") for _, fb in seen)
        assert sum(fb.executed for p, fb in seen) >= 2, [fb.text for p, fb in seen]


GRAMMAR_FUZZ = settings(FUZZ, max_examples=25)  # drawing from the grammar costs ~50 ms an example


@GRAMMAR_FUZZ
@given(data=st.data(), rich=st.booleans())
def test_probe_grammar_generated_and_mutated_programs(world, data, rich):
    program = data.draw(program_strategy(world, rich), label="program")
    check_feedback(world, program)
    # the manual's world holds the same invariants
    check_feedback(world.base_world(), program)
    # and so does every near miss of a grammatical program
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        i = data.draw(st.integers(0, len(program)))
        action = data.draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if action == "delete":
            program = program[:i] + program[i + 1:]
        elif action == "insert":
            program = program[:i] + data.draw(st.sampled_from(list("()[]:,\n\t \"#\\x1"))) + program[i:]
        else:
            program = program[:i] + program[i:] * 2
        check_feedback(world, program)


# ---------------------------------------------------------------- the world's probe generator


@pytest.mark.parametrize("seed", range(4))
def test_probe_generator_output_is_valid_and_within_budget(demo, seed):
    for program in itertools.islice(demo.probe_generator(seed), 40):
        fb = check_feedback(demo, program)
        assert fb.status in ("ok", "error", "limit"), (program, fb.text)


def test_probe_generator_is_deterministic(demo):
    a = list(itertools.islice(demo.probe_generator(7), 10))
    b = list(itertools.islice(demo.probe_generator(7), 10))
    assert a == b
    assert a != list(itertools.islice(demo.probe_generator(8), 10))


@pytest.mark.parametrize("seed", range(2))
def test_probe_generator_never_breaks_probe_on_a_hooked_world(hooked, seed):
    for program in itertools.islice(hooked.probe_generator(seed), 40):
        check_feedback(hooked, program)
        check_feedback(hooked.knockout("R2"), program)


@pytest.mark.parametrize("target", ["hook output", "hook show"])
def test_probe_generator_function_context_probes_parse(hooked, target):
    gen = ProbeGenerator(hooked)
    ch = Chooser(random.Random(0))
    for _ in range(30):
        program = gen.probe_for(ch, target, "function")
        fb = hooked.probe(program)
        assert fb.status != "parse_error", (program, fb.text)


@pytest.mark.parametrize("target", ["op LIST", "op PLUS", "op TIMES", "op POWER", "op UPTO", "op JOINED",
                                    "hook truthy", "hook iterate", "hook index", "hook slice", "hook assign",
                                    "hook lookup", "hook int_literal", "hook str_literal"])
@pytest.mark.parametrize("context", ["top", "loop", "function"])
def test_targeted_probes_parse_and_stay_within_budget(hooked, target, context):
    gen = ProbeGenerator(hooked)
    ch = Chooser(random.Random(f"{target}:{context}"))
    for _ in range(5):
        program = gen.probe_for(ch, target, context)
        fb = check_feedback(hooked, program)
        assert fb.status != "parse_error", (program, fb.text)
