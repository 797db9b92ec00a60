"""Rule schemas: reading, canonical form (the rule-report grader) and matching."""
from __future__ import annotations

import pytest

from worldspec.compiler.proof import formula as F
from worldspec.compiler.proof.formula import FormulaError
from worldspec.compiler.proof.schema import fits, parse_schema, premises_fit

P = F.parse


@pytest.mark.parametrize("text", [
    "A -> B, A |- B",
    "[A ... B] |- A -> B ; once",
    "exists x A, [A[c/x] ... B] |- B ; fresh c, once",
    "t = s, A[t/x] |- A[s/x]",
    "forall x A |- A[t/x]",
    "[A[c/x] ... B[c/x]] |- forall x (A -> B) ; fresh c",
    "exists x A, forall x (A -> B) |- B",
    "|- t = t",
    "A, B |- A & B ; distinct, ordered",
    "[A … B] ⊢ A -> B ; nontrivial",
])
def test_schemas_read_and_print_back(text):
    s = parse_schema(text)
    assert parse_schema(s.show()).canonical() == s.canonical()


@pytest.mark.parametrize("a, b, same", [
    ("A & B |- B", "C & D |- D", True),
    ("A & B |- B", "A & B |- A", False),
    ("A -> B, A |- B", "A, A -> B |- B", True),  # unordered: premise order is free
    ("A -> B, A |- B ; ordered", "A, A -> B |- B ; ordered", False),
    ("A, B |- A & B ; distinct", "A, B |- A & B", False),
    ("exists x A, [A[c/x] ... B] |- B ; fresh c, once", "exists y F, [F[d/y] ... G] ⊢ G ; once, fresh d", True),
    ("t = s, A[t/x] |- A[s/x]", "s = t, A[t/x] |- A[s/x]", False),
])
def test_canonical_form_ignores_names_and_unordered_premise_order(a, b, same):
    assert (parse_schema(a).canonical() == parse_schema(b).canonical()) is same


@pytest.mark.parametrize("text, col, fragment", [
    ("A -> B", 0, "turnstile"),
    ("A |- ", 4, "empty"),
    ("A, |- B", 2, "empty"),
    ("[A B] |- C", 0, "subproof premise"),
    ("A |- B ; frosh c", 9, "unknown side condition"),
    ("A |- B ; fresh c", 0, "does not occur"),
    ("A[t/x] |- B", 0, "appears only as"),
    ("A |- B & ", 8, "expected a formula"),
])
def test_schema_errors_carry_a_column(text, col, fragment):
    with pytest.raises(FormulaError) as e:
        parse_schema(text)
    assert fragment in e.value.message
    assert e.value.col == col


@pytest.mark.parametrize("schema, lines, subs, conclusion, ok", [
    ("t = s, A[t/x] |- A[s/x]", ["a = b", "L(a, a)"], [], "L(b, a)", True),
    ("t = s, A[t/x] |- A[s/x]", ["a = b", "L(a, a)"], [], "L(b, c)", False),
    ("forall x A |- A[t/x]", ["forall x (F(x) -> G(x, a))"], [], "F(b) -> G(b, a)", True),
    ("forall x A |- A[t/x]", ["forall x (F(x) -> G(x, a))"], [], "F(b) -> G(c, a)", False),
    ("A[c/x] |- forall x A ; fresh c", ["F(e) & G(e)"], [], "forall y (F(y) & G(y))", True),
    ("A[c/x] |- forall x A ; fresh c", ["F(e) & G(e)"], [], "forall y (F(y) & G(e))", True),  # vacuous in e
    ("exists x A, forall x (A -> B) |- B", ["exists x F(x)", "forall x (F(x) -> Q)"], [], "Q", True),
    ("exists x A, forall x (A -> B) |- B", ["exists x F(x)", "forall x (F(x) -> G(x))"], [], "G(a)", False),
    ("[A[c/x] ... B[c/x]] |- forall x (A -> B) ; fresh c", [], [("F(e)", "G(e)")], "forall x (F(x) -> G(x))", True),
    ("forall x A |- exists x A", ["forall x forall y L(x, y)"], [], "exists z forall w L(z, w)", True),
])
def test_matching_instances(schema, lines, subs, conclusion, ok):
    s = parse_schema(schema)
    got = fits(s, [P(x) for x in lines], [(P(a), P(c)) for a, c in subs], P(conclusion))
    assert bool(got) is ok


def test_premises_can_fit_while_the_conclusion_does_not():
    s = parse_schema("A & B |- B")
    assert premises_fit(s, [P("P & Q")], [])
    assert not fits(s, [P("P & Q")], [], P("P"))
    assert not premises_fit(s, [P("P | Q")], [])
