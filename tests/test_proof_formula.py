"""Formulas of the proof kind: reading, printing, notation and term operations."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from worldspec.compiler.proof import formula as F
from worldspec.compiler.proof.formula import FormulaError


@pytest.mark.parametrize("text, shown", [
    ("P -> Q -> R", "P -> (Q -> R)"),
    ("(P -> Q) -> R", "(P -> Q) -> R"),
    ("P & Q | R", "(P & Q) | R"),
    ("P | Q & R", "P | (Q & R)"),
    ("P & Q -> R", "P & Q -> R"),
    ("~~P", "~~P"),
    ("~forall x (F(x) -> G(x))", "~forall x (F(x) -> G(x))"),
    ("∀x∃y (L(x,y) ∧ ¬x = y)", "forall x exists y (L(x, y) & ~(x = y))"),
    ("forall x. F(x)", "forall x F(x)"),
    ("a ≠ b", "~(a = b)"),
    ("⊥ → #", "_|_ -> _|_"),
    ("P <=> (Q ⊃ R)", "P <-> (Q -> R)"),
    ("F(f(a), b)", "F(f(a), b)"),
])
def test_reading_and_printing(text, shown):
    f = F.parse(text)
    assert F.show(f) == shown
    assert F.parse(F.show(f)) == f


def test_bound_variables_compare_up_to_renaming():
    assert F.parse("forall y F(y)") == F.parse("forall x F(x)")
    assert F.parse("forall x exists y L(x, y)") != F.parse("forall x exists y L(y, x)")


@pytest.mark.parametrize("text, col, fragment", [
    ("P ->", 4, "expected a formula"),
    ("F(x)", 2, "not bound"),
    ("forall x F(x) & G(x)", 18, "not bound"),
    ("a", 0, "is a term, not a formula"),
    ("P Q", 2, "after a complete formula"),
    ("((P)", 4, "expected ')'"),
    ("P $ Q", 2, "unexpected character"),
    ("", 0, "empty"),
    ("forall a F(a)", 7, "expected a variable"),
])
def test_errors_carry_a_column(text, col, fragment):
    with pytest.raises(FormulaError) as e:
        F.parse(text)
    assert e.value.col == col
    assert fragment in e.value.message


def test_size_limits_give_errors_not_crashes():
    with pytest.raises(FormulaError, match="too long"):
        F.parse("~" * 3000 + "P")
    with pytest.raises(FormulaError, match="nests too deeply"):
        F.parse("(" * 100 + "P" + ")" * 100)
    with pytest.raises(FormulaError, match="nests too deeply"):
        F.parse("~" * 100 + "P")


def test_a_world_can_respell_the_connectives():
    n = F.Notation.make({"and": "AND", "imp": "⇒", "all": "every"})
    f = F.parse("every x (F(x) AND G(x)) ⇒ P", n)
    assert f == F.parse("forall x (F(x) & G(x)) -> P")
    assert F.show(f, n) == "every x (F(x) AND G(x)) ⇒ P"
    assert F.parse("P & Q", n) == F.parse("P AND Q", n)  # the defaults stay accepted
    with pytest.raises(ValueError):
        F.Notation.make({"and": "|"})


# ---------------------------------------------------------------- generated formulas

_terms = st.sampled_from([("c", "a"), ("c", "b"), ("f", "f", (("c", "a"),))])
_atoms = st.one_of(
    st.sampled_from([("atom", "P", ()), ("atom", "Q", ()), F.BOT, ("atom", "G", (("bv", 0),))]),
    st.builds(lambda t: ("atom", "F", (t,)), _terms),
    st.builds(lambda t, s: ("atom", "=", (t, s)), _terms, _terms),
)
formulas = st.recursive(_atoms, lambda sub: st.one_of(
    st.builds(lambda a: ("not", a), sub),
    st.builds(lambda op, a, b: (op, a, b), st.sampled_from(F.BINARY), sub, sub),
    st.builds(lambda q, a: (q, a), st.sampled_from(F.QUANT), sub),
), max_leaves=8)
closed_formulas = formulas.filter(F.is_closed)


@given(closed_formulas)
def test_printing_then_reading_gives_the_same_formula(f):
    assert F.parse(F.show(f)) == f


@given(closed_formulas, st.sampled_from([("c", "e"), ("c", "k")]))
def test_abstracting_a_constant_then_instantiating_it_is_the_identity(f, c):
    assert F.instantiate(F.abstract(f, c), c) == f


@given(closed_formulas)
def test_size_counts_symbols(f):
    text = F.show(f)
    assert F.size(f) >= 1
    assert F.size(f) <= len(text)
