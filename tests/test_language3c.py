"""The spec language, third edition (issue 24): a box whose rule shows only through a sequence of queries
(certification searches sequences and reports the witness), rule `witness` lines on boxes, and base(...)
in rule bodies (the base line of what the rule changes, beneath every other rule)."""
from __future__ import annotations

import re
from pathlib import Path

import attrs
import pytest

from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.blackbox.certify import SEQ_LENGTH, witness_sequence
from worldspec.diagnostics import SpecError
from worldspec.lint import spec_warnings
from worldspec.parser import parse_spec

HERE = Path(__file__).parent
METER = HERE / "worlds" / "lang3" / "deposit-meter.world"
LAYERS = HERE / "worlds" / "lang" / "layers.world"
FEE = 3  # the meter's declared default


def meter_text() -> str:
    return METER.read_text()


def meter(text: str | None = None):
    return compile_spec(parse_spec(text if text is not None else meter_text(), str(METER)))


def balances(deposits: list[int], fee: int) -> list[int]:
    """The meter recomputed in Python: the balance after each deposit, a fee from the third one on."""
    out, b = [], 0
    for k, d in enumerate(deposits):
        b += d - (fee if k >= 2 else 0)
        out.append(b)
    return out


def replay(w, applied, texts: list[str]) -> list:
    """Outputs of the queries (as an agent types them) sent in one fresh session with only `applied` rules."""
    s = w.session_under(frozenset(applied))
    return [s.send(s.read(t)) for t in texts]


# ---------------------------------------------------------------- a rule seen only through a sequence


def test_the_meter_certifies_with_a_witness_sequence():
    w = load_world(str(METER), cache=False)
    report = w.certify()
    assert report["problems"] == []
    row = report["rule_table"][0]
    assert row["observable"] and row["tasks"] == ["third", "fifth"]
    seq = row["witness_sequence"]
    assert len(seq) >= 3 and row["witness"] == ", then ".join(f"`{q}`" for q in seq)
    # replayed through both boxes, the sequence really tells the rule apart, and only at its last query
    true, manual = replay(w, {"R1"}, seq), replay(w, set(), seq)
    assert true[:-1] == manual[:-1] and true[-1] != manual[-1]
    assert true == balances([int(q) for q in seq], FEE)


def test_no_single_query_from_a_fresh_session_shows_the_rule():
    w = meter()
    for d in range(1, 21):
        assert replay(w, {"R1"}, [str(d)]) == replay(w, set(), [str(d)]) == [d]


def test_the_search_finds_a_sequence_without_the_tests():
    """With the tests' own queries gone, the bounded seeded search still finds a sequence (of length 3: the
    fee starts at the third deposit), and the same one every time."""
    w = meter()
    bare = attrs.evolve(w, tests=w.tests[:1])
    pool = [[d] for d in range(1, 21)]
    found = witness_sequence(bare, "R1", frozenset(), pool)
    assert found is not None and len(found) == 3
    assert found == witness_sequence(bare, "R1", frozenset(), pool)
    texts = [bare.format(v) for v in found]
    assert replay(w, {"R1"}, texts)[-1] != replay(w, set(), texts)[-1]


def test_the_rule_changes_the_memory_too():
    """`next` calls the op the rule changes, so with the rule knocked out the memory moves on as documented:
    the manual's (naive) answers are the documented balances."""
    w = meter()
    naive = {t.id: t.naive for t in w.tasks}
    assert naive == {"t1": "7", "third": "14", "fifth": "42"}
    assert [t.expected for t in w.tests] == [7, balances([5, 2, 7], FEE)[-1], balances([1, 1, 10, 10, 20], FEE)[-1]]


def test_a_rule_beyond_the_search_bound_is_not_observable_and_says_why():
    text = meter_text().replace('get(s, "n") >= 2', 'get(s, "n") >= 40')
    report = meter(text).certify()
    problem = next(p for p in report["problems"] if "not observable" in p)
    assert problem.startswith("rule R1 (a fee from the third deposit) is not observable: no sequence of queries")
    assert "from the start state of a fresh session" in problem and f"of {SEQ_LENGTH} queries" in problem
    assert "witness Q1, Q2" in problem
    assert report["rule_table"][0]["witness_sequence"] is None


def test_a_witness_line_is_tried_first_and_reported():
    long = ", ".join(["1"] * 41)
    text = meter_text().replace('get(s, "n") >= 2', 'get(s, "n") >= 40').replace(
        "  statement \"From", f"  witness {long}\n  statement \"From")
    report = meter(text).certify()
    assert not any("not observable" in p for p in report["problems"])
    assert report["rule_table"][0]["witness_sequence"] == ["1"] * 41


def test_a_stale_witness_line_is_a_problem():
    text = meter_text().replace("  statement \"From", "  witness 4, 4\n  statement \"From")
    report = meter(text).certify()
    assert "rule R1: witness 1 (`4`, then `4`) does not tell it apart from the documented behaviour" in \
        " ".join(report["problems"])


def test_witness_lines_are_checked_when_the_spec_compiles():
    with pytest.raises(SpecError, match="d: "):
        meter(meter_text().replace("  statement \"From", "  witness 4, 99\n  statement \"From"))
    with pytest.raises(SpecError, match="unknown rule field 'witnes'"):
        meter(meter_text().replace("  statement \"From", "  witnes 4\n  statement \"From"))


# ---------------------------------------------------------------- base(...) in a rule body


def test_base_in_a_box_rule_is_the_base_line_beneath_every_rule():
    """R2 over R1: prior(...) would reach R1 (the fee), base(...) reaches the documented deposit alone."""
    extra = ('rule R2 "a bonus" {\n  op deposit(s, d) = let t = base(s, d) in put(t, "b", get(t, "b") + 1)\n'
             '  statement "Each deposit earns a bonus coin."\n}\n')
    text = meter_text().replace("hidden get(", extra + "hidden get(")
    w = meter(text)
    seq = ["5", "5", "5"]
    assert replay(w, {"R1", "R2"}, seq) == [6, 12, 18]  # R2 on top hides R1: base skips it
    assert replay(w, {"R1"}, seq) == balances([5, 5, 5], FEE)
    with_prior = meter(text.replace("let t = base(s, d) in put", "let t = prior(s, d) in put"))
    assert replay(with_prior, {"R1", "R2"}, seq) == [b + k for k, b in enumerate(balances([5, 5, 5], FEE), 1)]


def test_base_outside_a_rule_body_is_an_error_and_a_def_named_base_keeps_its_meaning():
    with pytest.raises(SpecError, match=r"base\(\.\.\.\) is only known in a rule body"):
        meter(meter_text().replace('next deposit(state, d)', 'next base(state, d)'))
    text = meter_text().replace("hidden get(", "def base(s, d) = {\"n\": 0, \"b\": 100}\nhidden get(")
    own = meter(text)
    (warning,) = spec_warnings(parse_spec(text, str(METER)))
    assert warning.message == "def base shadows base(...), the base line a rule body reaches"
    assert replay(own, {"R1"}, ["5", "5", "5"]) == [100, 100, 100]  # the rule calls the def named base


def test_base_in_a_program_rule_skips_the_layers_beneath():
    """layers.world with L2 reaching base(v) instead of prior(v): L2 over L1 no longer sees L1's rule."""
    text = LAYERS.read_text().replace('v != "no" else prior(v)', 'v != "no" else base(v)')
    w = compile_spec(parse_spec(text, str(LAYERS)))
    program = 'if -1:\n    print("a")\nif "no":\n    print("b")\nif "yes":\n    print("c")'
    assert w.probe(program).text == "a\nc"  # -1 is true again: base is the documented truthiness
    assert w.knockout("L2").probe(program).text == "b\nc"  # L1 alone
    assert w.knockout("L1").probe(program).text == "a\nc"
    original = load_world(str(LAYERS), cache=False)
    assert original.probe(program).text == "c"  # prior(v) reaches L1


def test_check_prints_the_witness_sequence_and_refuses_an_unobservable_rule(tmp_path):
    from click.testing import CliRunner

    from worldspec.cli import main
    r = CliRunner().invoke(main, ["check", "--no-cache", str(METER)])
    assert r.exit_code == 0, r.output
    assert "seen after the queries `5`, then `2`, then `7` (in a fresh session)" in r.output
    hidden = tmp_path / "hidden-fee.world"
    hidden.write_text(meter_text().replace('get(s, "n") >= 2', 'get(s, "n") >= 40'))
    r = CliRunner().invoke(main, ["check", "--no-cache", str(hidden)])
    assert r.exit_code != 0 and "rule R1 (a fee from the third deposit) is not observable" in r.output


def test_the_language_references_memory_examples_compile_and_certify():
    """docs/language.md, "Box worlds: rules seen through a sequence of queries": the box, and its rule with a
    witness line of forty deposits (beyond the searched sequences)."""
    doc = (HERE.parent / "docs" / "language.md").read_text(encoding="utf-8")
    box = re.search(r"```\n(param FEE.*?)\n```", doc, re.S).group(1)
    late = re.search(r"```\n(rule R1 \"a fee from the fortieth deposit\".*?)\n```", doc, re.S).group(1)
    head = ('world "Doc box" version 1\nkind blackbox\nseed 1\nsummary "A meter."\nfamily CII\ndifficulty easy\n')
    tests = "test 3\ntest t2 \"q\" { given 1  given 1  ask 3 }\nbudget { turns 8 shots 1 }\n"
    w = compile_spec(parse_spec(head + box + "\n" + tests, "doc.world"))
    assert w.certify()["problems"] == []
    rule = re.search(r"rule R1 .*?\n}", box, re.S).group(0)
    w = compile_spec(parse_spec(head + box.replace(rule, late) + "\n" + tests, "doc.world"))
    report = w.certify()
    assert report["rule_table"][0]["witness_sequence"] == ["1"] * 40
    assert report["problems"] == ["rule R1 (a fee from the fortieth deposit) is required by no test: every answer "
                                  "stays the same with it reverted"]


@pytest.mark.parametrize("body", ["a * b", "deposit({\"n\": 0, \"b\": a}, b)"])
def test_a_box_def_named_like_a_builtin_compiles_with_a_warning(body):
    """A def named like a builtin (pow, a third-edition one) shadows it in a box world too, whether or not the
    def calls the world's ops, and check warns at the def."""
    head = 'def pow(a, b) = ' + body + '\n'
    hidden = ('hidden get(deposit(state, d), "b") + pow(2, 3)' if body == "a * b" else
              'hidden get(pow(get(state, "b"), d), "b")')
    text = meter_text().replace('hidden get(deposit(state, d), "b")', head + hidden)
    w = meter(text)
    assert w.tests[0].expected == (7 + 6 if body == "a * b" else 7)  # the builtin would give 7 + 8
    (warning,) = spec_warnings(parse_spec(text, str(METER)))
    assert warning.message == "def pow shadows the builtin of the same name"
