"""The Fitch checker: verdicts on good and bad proofs, never an exception, fast."""
from __future__ import annotations

import time

import pytest
from hypothesis import given, strategies as st

from worldspec.compiler.proof import formula as F, proofs
from worldspec.compiler.proof.checker import check
from worldspec.compiler.proof.schema import parse_schema

STANDARD = {k: parse_schema(v) for k, v in {
    "reit": "A |- A", "andI": "A, B |- A & B ; distinct", "andE": "A & B |- A",
    "impI": "[A ... B] |- A -> B ; once", "impE": "A -> B, A |- B", "orI": "A |- A | B",
    "orE": "A | B, [A ... C], [B ... C] |- C", "negE": "A, ~A |- _|_", "botE": "_|_ |- A",
    "allE": "forall x A |- A[t/x]", "allI": "A[c/x] |- forall x A ; fresh c",
    "exI": "A[t/x] |- exists x A", "exE": "exists x A, [A[c/x] ... B] |- B ; fresh c",
    "eqE": "t = s, A[t/x] |- A[s/x]", "mp2": "A -> B, A |- B ; ordered",
    "ne": "[A ... B] |- A -> B ; nontrivial",
}.items()}


def verdict(text: str):
    return check(proofs.read(text), STANDARD)


GOOD = [
    ("conditional proof", """
        1. P -> Q    premise
        2. | P       assume
        3. | Q       impE 1, 2
        4. P -> Q    impI 2-3
     """, "P -> Q"),
    ("indentation marks subproofs", """
        1. P              premise
        2.     Q          assume
        3.     P          reit 1
        4. Q -> P         impI 2-3
     """, "Q -> P"),
    ("nested subproofs", """
        1. P                  premise
        2. | Q                assume
        3. | | R              assume
        4. | | P              reit 1
        5. | R -> P           impI 3-4
        6. Q -> (R -> P)      impI 2-5
     """, "Q -> (R -> P)"),
    ("cases: an assumption at the same level opens the second case", """
        1. P | P     premise
        2. | P       assume
        3. | P       assume
        4. P         orE 1, 2-2, 3-3
     """, "P"),
    ("citations in any order", "1. P premise\n2. P -> Q premise\n3. Q impE 1, 2", "Q"),
    ("quantifiers and eigenvariables", """
        1. forall x (F(x) -> G(x))    premise
        2. forall x F(x)              premise
        3. F(a) -> G(a)               allE 1
        4. F(a)                       allE 2
        5. G(a)                       impE 3, 4
        6. forall y G(y)              allI 5
     """, "forall x G(x)"),
    ("existential elimination", """
        1. exists x F(x)      premise
        2. | F(c)             assume
        3. | exists y F(y)    exI 2
        4. exists x F(x)      exE 1, 2-3
     """, "exists x F(x)"),
    ("identity", "1. a = b premise\n2. L(a, a) premise\n3. L(b, a) eqE 1, 2", "L(b, a)"),
    ("code fences, blank lines, a colon and unicode", "```\n1. ∀x F(x) : premise\n\n2. F(a)  allE 1\n```", "F(a)"),
    ("a rule named in another letter case", "1. P premise\n2. P -> Q premise\n3. Q IMPE 1, 2", "Q"),
    ("a subproof may be discharged twice without `once`", """
        1. P | P     premise
        2. | P       assume
        3. | P       assume
        4. P         orE 1, 2-2, 3-3
        5. P         orE 1, 2-2, 3-3
     """, "P"),
]


@pytest.mark.parametrize("name, text, conclusion", GOOD, ids=[g[0] for g in GOOD])
def test_good_proofs_are_accepted(name, text, conclusion):
    r = verdict(text)
    assert r.accepted, r.message
    assert r.conclusion == F.parse(conclusion)


BAD = [
    ("a later line", "1. P premise\n2. Q reit 3\n3. Q premise", 2, "does not come before it"),
    ("a line in a closed subproof", """
        1. P         premise
        2. | Q       assume
        3. | P       reit 1
        4. Q -> P    impI 2-3
        5. P         reit 3""", 5, "inside the closed subproof 2-3"),
    ("an open subproof", "1. P premise\n2. | Q assume\n3. | Q -> Q impI 2-2", 3, "still open"),
    ("not a whole subproof", """
        1. P         premise
        2. | Q       assume
        3. | P       reit 1
        4. Q -> P    impI 2-2""", 4, "runs to line 3"),
    ("a range that is not a subproof", "1. P premise\n2. | Q assume\n3. Q -> P impI 1-2", 3, "does not start a subproof"),
    ("a missing line", "1. P premise\n2. P reit 0", 2, "does not exist"),
    ("an unknown rule", "1. P premise\n2. P r99 1", 2, "there is no rule r99"),
    ("the wrong number of citations", "1. P premise\n2. P impE 1", 2, "cites 2 lines and 0 subproofs"),
    ("the wrong shape", "1. P premise\n2. Q premise\n3. Q impE 1, 2", 3, "do not have the form impE needs"),
    ("the wrong conclusion", "1. P & Q premise\n2. Q andE 1", 2, "andE does not give Q from line 1"),
    ("the duplicate-premise guard", "1. P premise\n2. P & P andI 1, 1", 2, "duplicate-premise guard"),
    ("the use-once guard", """
        1. | P       assume
        2. P -> P    impI 1-1
        3. P -> P    impI 1-1""", 3, "use-once guard"),
    ("the order of citations", "1. P premise\n2. P -> Q premise\n3. Q mp2 1, 2", 3, "do not have the form"),
    ("a trivial subproof", "1. | P assume\n2. P -> P ne 1-1", 2, "only its assumption"),
    ("a constant that is not new", "1. F(a) premise\n2. forall x F(x) allI 1", 2, "eigenvariable condition"),
    ("an eigenvariable in the conclusion", """
        1. exists x F(x)   premise
        2. | F(a)          assume
        3. | F(a)          reit 2
        4. F(a)            exE 1, 2-3""", 4, "eigenvariable condition"),
    ("misnumbered lines", "1. P premise\n3. P reit 1", 2, "expected 2 here, found 3"),
    ("no justification", "1. P premise\n2. P", 2, "no justification"),
    ("an unreadable formula", "1. P -> premise", 1, "cannot read the formula"),
    ("a premise after a step", "1. P premise\n2. P reit 1\n3. Q premise", 3, "premises come first"),
    ("an assumption outside any subproof", "1. P assume", 1, "one level deeper"),
    ("a line deeper than any subproof", "1. P premise\n2. | | P reit 1", 2, "deeper than any open subproof"),
    ("indentation that matches no level", "1.  P        premise\n2.        Q  assume\n3.     P    reit 1", 3, "indentation"),
    ("a bad citation", "1. P premise\n2. P reit 1,,", 2, "empty citation"),
]


@pytest.mark.parametrize("name, text, line, fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_proofs_get_a_precise_verdict(name, text, line, fragment):
    r = verdict(text)
    assert not r.accepted
    assert r.line == line, r.message
    assert fragment in r.message


def test_a_proof_ending_inside_a_subproof_is_not_finished():
    r = verdict("1. P premise\n2. | Q assume")
    assert r.ok and not r.complete and "ends inside the subproof opened at line 2" in r.message


def test_empty_and_non_text_input():
    assert not verdict("").accepted
    assert not check(proofs.read(None), STANDARD).accepted  # type: ignore[arg-type]


def test_size_limits():
    assert "at most 300 lines" in verdict("\n".join(f"{i}. P premise" for i in range(1, 400))).message
    assert "too long" in verdict("1. " + "~" * 5000 + "P premise").message


def test_a_fifty_line_proof_checks_in_milliseconds():
    lines = ["1. forall x (F(x) -> G(x))    premise", "2. forall x F(x)    premise"]
    for i in range(16):
        n = len(lines)
        lines += [f"{n + 1}. F(a{i}) -> G(a{i})    allE 1", f"{n + 2}. F(a{i})    allE 2",
                  f"{n + 3}. G(a{i})    impE {n + 1}, {n + 2}"]
    text = "\n".join(lines)
    assert len(lines) == 50 and verdict(text).accepted
    start = time.perf_counter()
    for _ in range(10):
        verdict(text)
    assert (time.perf_counter() - start) / 10 < 0.5  # linear, not exponential: slack for a loaded machine


# ---------------------------------------------------------------- malformed proofs never raise

_line = st.builds(
    lambda n, bars, f, just: f"{n}. {'| ' * bars}{f}  {just}",
    st.integers(0, 12), st.integers(0, 3),
    st.sampled_from(["P", "Q", "P -> Q", "~P", "P & Q", "_|_", "forall x F(x)", "F(a)", "P ->", "(", "x", ""]),
    st.sampled_from(["premise", "assume", "reit 1", "impE 1, 2", "impI 2-3", "orE 1, 2-3, 4-5", "andI 1, 1",
                     "r9 3-1", "allI 2", "exE 1, 2-3", "botE 4", "", "impE", "reit 99", "impI 1-1"]))


@given(st.lists(_line, max_size=12).map("\n".join))
def test_generated_proofs_get_a_verdict(text):
    r = verdict(text)
    assert r.accepted in (True, False)
    assert r.accepted or r.message


@given(st.text(max_size=300))
def test_arbitrary_text_gets_a_verdict(text):
    r = verdict(text)
    assert isinstance(r.message, str)


def test_a_rule_name_in_another_case_is_read_only_when_one_rule_has_it():
    rules = {**STANDARD, "r1": STANDARD["impE"], "R1": STANDARD["andE"]}
    text = "1. P premise\n2. P -> Q premise\n3. Q {} 1, 2"
    assert check(proofs.read(text.format("r1")), rules).ok
    bad = check(proofs.read(text.format("r2")), rules)
    assert not bad.ok and "there is no rule" in bad.message
    both = {k: v for k, v in rules.items() if k != "r1"}
    assert not check(proofs.read(text.format("r1")), {**both, "R1": STANDARD["andE"]}).ok  # R1 is not impE
    failed = check(proofs.read("1. P premise\n2. Q IMPE 1"), STANDARD)
    assert not failed.ok and failed.rule == "impE"  # blame names the world's rule
