"""The bounded certifier: found proofs check, invalid goals are certified, bounds are respected."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, strategies as st

from worldspec.compiler.proof import formula as F, proofs
from worldspec.compiler.proof.checker import check
from worldspec.compiler.proof.schema import parse_schema
from worldspec.compiler.proof.search import Bounds, Search, search, universe

CLASSICAL = {k: parse_schema(v) for k, v in {
    "reit": "A |- A", "andI": "A, B |- A & B ; distinct", "andE1": "A & B |- A", "andE2": "A & B |- B",
    "orI1": "A |- A | B", "orI2": "B |- A | B", "orE": "A | B, [A ... C], [B ... C] |- C ; once",
    "impI": "[A ... B] |- A -> B ; once", "impE": "A -> B, A |- B",
    "negI": "[A ... _|_] |- ~A ; once", "negE": "A, ~A |- _|_", "botE": "_|_ |- A", "dne": "~~A |- A",
    "raa": "[~A ... _|_] |- A ; once",
    "allI": "A[c/x] |- forall x A ; fresh c", "allE": "forall x A |- A[t/x]",
    "exI": "A[t/x] |- exists x A", "exE": "exists x A, [A[c/x] ... B] |- B ; fresh c, once",
    "eqI": "|- t = t", "eqE": "t = s, A[t/x] |- A[s/x]",
}.items()}


def run(premises, goal, rules=CLASSICAL, **bounds):
    return search(rules, [F.parse(p) for p in premises], F.parse(goal), Bounds(**bounds))


def assert_proves(outcome, premises, goal, rules=CLASSICAL):
    assert outcome.found and outcome.proof
    r = check(proofs.read(outcome.proof), rules)
    assert r.accepted, (r.message, outcome.proof)
    assert r.conclusion == F.parse(goal)
    assert set(r.premises) <= {F.parse(p) for p in premises}


@pytest.mark.parametrize("premises, goal", [
    (["P -> Q", "Q -> R"], "P -> R"),
    ([], "P | ~P"),
    (["~(P & Q)"], "~P | ~Q"),
    (["P"], "P & P"),  # duplicate-premise guard: the search restates P on a second line
    (["P | Q", "~P"], "Q"),
    (["forall x (F(x) -> G(x))", "exists x F(x)"], "exists x G(x)"),
    (["a = b", "F(a)"], "F(b)"),
    ([], "a = a"),
    (["forall x forall y L(x, y)"], "forall y forall x L(x, y)"),
    (["P"], "P"),
])
def test_provable_sequents_are_found_with_a_proof_that_checks(premises, goal):
    assert_proves(run(premises, goal), premises, goal)


def test_quantifier_negation_needs_two_nested_subproofs():
    assert run(["~forall x F(x)"], "exists x ~F(x)", depth=1).certified_unprovable
    assert_proves(run(["~forall x F(x)"], "exists x ~F(x)", depth=2), ["~forall x F(x)"], "exists x ~F(x)")


@pytest.mark.parametrize("premises, goal", [
    (["P -> Q"], "Q -> P"),
    (["P | Q"], "P"),
    ([], "P"),
    (["exists x F(x)"], "forall x F(x)"),
    (["F(a)"], "F(b)"),
    (["exists x F(x)", "exists x G(x)"], "exists x (F(x) & G(x))"),
])
def test_invalid_sequents_are_certified_unprovable(premises, goal):
    out = run(premises, goal)
    assert out.complete and not out.found and out.certified_unprovable


def test_the_node_bound_is_respected_and_reported():
    out = run(["P -> Q"], "Q -> P", nodes=50)
    assert not out.complete and not out.found and out.nodes == 50
    assert not out.certified_unprovable
    full = run(["P -> Q"], "Q -> P")
    assert full.complete and full.nodes > 50


def test_the_depth_bound_limits_subproofs():
    peirce = "((P -> Q) -> P) -> P"
    assert run([], peirce, depth=2, size=7).certified_unprovable
    assert_proves(run([], peirce, depth=3, size=7), [], peirce)


def test_the_universe_is_subformulas_negations_and_falsum():
    forms, terms = universe([F.parse("P -> Q")], F.parse("Q"), Bounds(constants=1))
    shown = {F.show(f) for f in forms}
    assert {"P -> Q", "P", "Q", "_|_", "~P", "~(P -> Q)", "~_|_", "~~P"} <= shown
    assert terms == [("c", "c1")]


def test_a_rule_system_without_restating_still_searches():
    rules = {k: v for k, v in CLASSICAL.items() if k != "reit"}
    assert_proves(run(["P -> Q", "Q -> R"], "P -> R", rules), ["P -> Q", "Q -> R"], "P -> R", rules)


# ---------------------------------------------------------------- soundness against truth tables


def _value(f, env):
    tag = f[0]
    if tag == "bot":
        return False
    if tag == "atom":
        return env[f[1]]
    if tag == "not":
        return not _value(f[1], env)
    a, b = _value(f[1], env), _value(f[2], env)
    return {"and": a and b, "or": a or b, "imp": (not a) or b, "iff": a == b}[tag]


def _valid(premises, goal) -> bool:
    for bits in itertools.product((False, True), repeat=2):
        env = dict(zip("PQ", bits))
        if all(_value(p, env) for p in premises) and not _value(goal, env):
            return False
    return True


_atom = st.sampled_from([("atom", "P", ()), ("atom", "Q", ()), F.BOT])
_prop = st.recursive(_atom, lambda sub: st.one_of(
    st.builds(lambda a: ("not", a), sub),
    st.builds(lambda op, a, b: (op, a, b), st.sampled_from(F.BINARY), sub, sub)), max_leaves=3)


@given(st.lists(_prop, max_size=2), _prop)
def test_search_is_sound_and_certifies_invalid_sequents(premises, goal):
    s = Search(CLASSICAL, premises, goal, Bounds(size=5, depth=2, nodes=300_000))
    out = s.run()
    if out.found:
        assert _valid(premises, goal)
        r = check(proofs.read(out.proof), CLASSICAL)
        assert r.accepted and r.conclusion == goal, out.proof
    elif not _valid(premises, goal):
        assert out.certified_unprovable


# extending a saturated search by rules decides as a fresh search of the union does (requires' chain)
EXTEND_CASES = [
    (["P | Q", "~P"], "Q", ["orE", "botE", "negE"]),  # disjunctive syllogism needs the ex falso rules
    (["P -> Q"], "~Q -> ~P", ["negI", "negE"]),
    (["~~P"], "P", ["dne"]),
    ([], "P | ~P", ["raa", "negE", "orI1", "orI2"]),
    (["forall x (P(x) -> Q(x))", "P(a)"], "exists x Q(x)", ["allE", "exI"]),
    (["P"], "Q", ["botE"]),  # still invalid with every rule
]


@pytest.mark.parametrize("premises, goal, added", EXTEND_CASES)
def test_extending_a_search_decides_as_a_fresh_search_of_the_union(premises, goal, added):
    base = {k: v for k, v in CLASSICAL.items() if k not in added}
    ps, g = [F.parse(p) for p in premises], F.parse(goal)
    fresh = search(CLASSICAL, ps, g, Bounds(size=7))
    s = Search(base, ps, g, Bounds(size=7))
    s.run()
    grown = s.extend({k: CLASSICAL[k] for k in added})
    assert (grown.found, grown.complete) == (fresh.found, fresh.complete)
    assert not s.extend({}).found or grown.found  # nothing added: the same decision again


def test_an_extension_counts_its_nodes_against_the_one_bound():
    ps, g = [F.parse("P | Q"), F.parse("~P")], F.parse("Q")
    s = Search({k: v for k, v in CLASSICAL.items() if k != "botE"}, ps, g, Bounds(size=7, nodes=300))
    first = s.run()
    grown = s.extend({"botE": CLASSICAL["botE"]})
    assert first.nodes <= grown.nodes <= 300
    assert not grown.complete and not grown.found  # the fresh search of the union needs more than 300
    assert search(CLASSICAL, ps, g, Bounds(size=7)).found
