"""AlienLogic: the certified flagship proof world, its patched rules and its tasks.

Differential tests in the spirit of byterun's assert_ok: the true rules and the
manual's rules agree on every proof that cites no patched rule, and where they
differ the difference is the cited patched rule's alone.
"""
from __future__ import annotations

import itertools
import json
import os
import re

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from worldspec.cli import main
from worldspec.compiler import load_world
from worldspec.compiler.proof import formula as F, generate
from worldspec.compiler.proof.certify import find_witness

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(ROOT, "worlds", "alienlogic.world")
WORLD = load_world(PATH)
TRUE, BASE = WORLD.true_world(), WORLD.base_world()
PATCHED = sorted(WORLD.patches)
UNPROVABLE = [t for t in WORLD.tasks if WORLD.task_data[t.id].unprovable]
# provable in the true world, invalid classically: the manual's rules cannot prove them, so a
# manual-trusting agent declines them (wrongly); the true disjunctive syllogism proves them
LOOK_UNPROVABLE = [t for t in WORLD.tasks if t not in UNPROVABLE and BASE.is_decline(t.naive or "")]
# the manual's rules that the true system lacks and that make it stronger than the true one: each
# fails when a disjunction is read as its right disjunct, under which every true rule is sound
READING_BREAKERS = {"r22", "r50", "r53", "r55", "r56"}


@pytest.fixture(scope="module")
def report():
    """`worldspec check alienlogic.world --json` (WORLD.certify() in a worker), run once for this file."""
    r = CliRunner().invoke(main, ["check", PATH, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_the_inventory():
    assert (len(WORLD.rules), len(WORLD.herrings), len(WORLD.tasks), len(WORLD.examples)) == (24, 5, 70, 8)
    # the released README: "70 held-out theorems, 25 of them unprovable" (Tencent-Hunyuan/ExplorationBench)
    assert len(UNPROVABLE) == 25
    assert [t.id for t in LOOK_UNPROVABLE] == ["T04", "T14", "T57"]
    b = WORLD.budget
    assert (b.rounds, b.calls_per_round, b.max_calls, b.units_per_call) == (4, 12, 48, 1)
    assert (b.feedback_lines, b.feedback_chars, b.answers) == (15, 600, 3)
    assert all(r.statement and r.equation for r in WORLD.rules)


def test_rule_ids_are_opaque_and_non_contiguous():
    ids = list(WORLD.infer)
    assert all(re.fullmatch(r"r\d+", i) for i in ids)
    numbers = sorted(int(i[1:]) for i in ids)
    assert numbers != list(range(numbers[0], numbers[0] + len(numbers)))
    assert not any(str(n) in r.title for r in WORLD.rules for n in range(1, 10))  # titles say what, not where


def test_certified(report):
    assert report["problems"] == []
    assert (report["rules"], report["tasks"], report["examples"], report["herrings"]) == (24, 70, 8, 5)
    assert all(r["observable"] and r["tasks"] for r in report["rule_table"])
    assert all(h["unchanged"] for h in report["herring_table"])
    assert len(report["unprovable"]) == 25
    for u in report["unprovable"]:
        assert u["complete"] and not u["found"]
        assert set(u["bounds"]) >= {"size", "depth", "lines", "nodes"}
        assert u["nodes"] <= u["bounds"]["nodes"]
    # the floor is the eleven controls alone: no refusal carries it
    assert report["recall_only"] == pytest.approx(15.7)
    assert len(report["recall_only_tasks"]) == 11 and report["recall_only_refusals"] == []
    assert not any(WORLD.task_data[tid].unprovable for tid in report["recall_only_tasks"])


def test_the_manual_trusting_agent_declines_no_unprovable_goal(report):
    """UnprovRec of the built-in `manual` agent (it answers with the naive answers): every unprovable
    goal is one the manual's rules prove, so a manual-trusting agent writes that proof, which earns
    nothing; declining needs the discovery that the true rules cannot prove it."""
    assert report["manual_unprovrec"] == 0.0 <= 50.0
    right = [t.id for t in UNPROVABLE if TRUE.correct_refusal(t, t.naive)]
    assert right == []
    for t in UNPROVABLE:
        assert not BASE.is_decline(t.naive) and BASE.verify(t, t.naive).passed  # the manual proves it
        assert not TRUE.verify(t, t.naive).passed and TRUE.verify(t, "UNPROVABLE").passed
    # and the refusals it does make are of goals the true rules prove
    for t in LOOK_UNPROVABLE:
        assert BASE.verify(t, t.naive).passed and BASE.unprovable(t)  # declining is right under the manual
        assert not TRUE.verify(t, t.naive).passed and not TRUE.correct_refusal(t, t.naive)
        assert TRUE.verify(t, t.solution).passed


def test_every_patched_rule_is_required_by_two_tasks(report):
    """A rule counts for a task when knocking it out breaks the reference proof or changes the
    naive answer's verdict (compiler/proof/world.py requires)."""
    used = {rid: [tid for tid, req in report["requires"].items() if rid in req] for rid in PATCHED}
    assert {rid: tids for rid, tids in used.items() if len(tids) < 2} == {}
    assert used["r11"] == ["T17", "T33"] and used["r12"] == ["T21", "T61"]


def test_every_patched_rule_is_required_by_two_unprovable_goals_or_provable_tasks(report):
    """The unprovable goals are discovery tasks too: each requires the manual rule whose true
    version breaks the manual-trusting proof (knocking it back makes that proof pass)."""
    goals = {t.id for t in UNPROVABLE}
    for rid in READING_BREAKERS:
        tids = [tid for tid, req in report["requires"].items() if rid in req and tid in goals]
        assert len(tids) >= 2, (rid, tids)
    assert "r22" in report["requires"]["T07"] and "r50" in report["requires"]["T37"]


def test_every_patched_rule_is_needed_where_the_manual_fails(report):
    """No rule's evidence is only tasks that the manual-trusting proof already solves: each is
    required by two tasks whose naive answers fail in the true world."""
    hard = {t.id for t in WORLD.tasks if not TRUE.verify(t, t.naive).passed}
    for rid in PATCHED:
        tids = [tid for tid, req in report["requires"].items() if rid in req and tid in hard]
        assert len(tids) >= 2, (rid, tids)
    for rid, tid in (("r11", "T33"), ("r12", "T61"), ("r17", "T53")):
        naive = WORLD.task(tid).naive
        assert not TRUE.verify(tid, naive).passed and WORLD.knockout(rid).verify(tid, naive).passed


def test_the_oracle_answers_score_100_percent():
    assert all(TRUE.verify(t, t.solution).passed for t in WORLD.tasks)
    assert all(t.solution == "UNPROVABLE" for t in UNPROVABLE)


def test_the_manual_answers_score_the_recall_only_figure(report):
    assert all(BASE.verify(t, t.naive).passed for t in WORLD.tasks if t.naive)
    passed = sum(TRUE.verify(t, t.naive).passed for t in WORLD.tasks if t.naive)
    assert round(100 * passed / len(WORLD.tasks), 1) == report["recall_only"]


def test_a_proof_of_an_unprovable_goal_earns_nothing():
    t = UNPROVABLE[0]
    assert TRUE.verify(t, "UNPROVABLE").passed
    assert TRUE.verify(t, "unprovable.").passed
    assert not TRUE.verify(t, "1. P premise").passed
    provable = next(t for t in WORLD.tasks if t not in UNPROVABLE)
    assert not TRUE.verify(provable, "UNPROVABLE").passed


def test_unprovrec_counts_the_designated_goals_and_their_refusals():
    assert WORLD.unprovable_tasks == tuple(t.id for t in UNPROVABLE)
    assert all(TRUE.correct_refusal(t, "UNPROVABLE") for t in WORLD.unprovable_tasks)
    assert not any(TRUE.correct_refusal(t, "UNPROVABLE") for t in WORLD.tasks if t not in UNPROVABLE)
    assert all(t.label("set") == ("unprovable" if t in UNPROVABLE else "provable") for t in WORLD.tasks)


# ---------------------------------------------------------------- the certificate: a reading
#
# As the released demo certifies its unprovable theorem (ExplorationBench,
# sandboxes/logic/certify.py: every remaining rule stays sound when a conjunction is read as
# one conjunct, and a counter-model under that reading shows the goal has no proof at all),
# AlienLogic's true rules are all sound when a disjunction A | B is read as its right disjunct
# B (every other connective classical). A goal false in some model under that reading has no
# proof of any length, beyond the bounded search's certificate.


def _sem(p, I, env=()):
    """A schema pattern's truth in a model: I maps closed metavariables to booleans, open ones
    to sets of domain elements, term and constant metavariables to elements."""
    tag = p[0]
    if tag == "bot":
        return False
    if tag == "meta":
        return I[p[1]] if p[2] is None else env[-1 - p[2]] in I[p[1]]
    if tag == "subst":
        return _term(p[2], I, env) in I[p[1]]
    if tag == "atom":  # only identities occur in AlienLogic's schemas
        return _term(p[2][0], I, env) == _term(p[2][1], I, env)
    if tag == "not":
        return not _sem(p[1], I, env)
    if tag in F.QUANT:
        results = [_sem(p[1], I, env + (d,)) for d in (0, 1)]
        return all(results) if tag == "all" else any(results)
    a, b = _sem(p[1], I, env), _sem(p[2], I, env)
    return {"and": a and b, "or": b, "imp": (not a) or b, "iff": a == b}[tag]


def _term(t, I, env):
    return env[-1 - t[1]] if t[0] == "bv" else I[t[1]]


def _sound(s) -> bool:
    """A schema is sound under the reading on every two-element model."""
    metas, terms, consts = generate.metavariables(s)
    sets = [frozenset(x) for x in ((), (0,), (1,), (0, 1))]
    choices = [sets if var else (False, True) for _, var in metas] + [(0, 1)] * len(terms)
    names = [m for m, _ in metas] + terms
    fresh = [c for c in consts if c in s.fresh]
    assert set(consts) <= set(fresh)  # every constant metavariable is an eigenvariable here
    for values in itertools.product(*choices):
        I = dict(zip(names, values))
        every = [dict(I, **dict(zip(fresh, vs))) for vs in itertools.product((0, 1), repeat=len(fresh))]
        premises = all(_sem(p, J) for p in s.lines for J in every) and all(
            (not _sem(a, J)) or _sem(c, J) for a, c in s.subs for J in every)
        if premises and not _sem(s.conclusion, I):
            return False
    return True


@pytest.mark.parametrize("rid", sorted(TRUE.schemas))
def test_every_true_rule_is_sound_under_the_reading(rid):
    assert _sound(TRUE.schemas[rid]), rid


def test_the_manual_rules_the_reading_breaks_are_five_patched_ones():
    assert {rid for rid, s in BASE.schemas.items() if not _sound(s)} == READING_BREAKERS


def _holds(f, domain, interp, env=(), reading=False):
    tag = f[0]
    if tag == "bot":
        return False
    if tag == "atom":
        args = tuple(env[-1 - t[1]] if t[0] == "bv" else interp[t[1]] for t in f[2])
        if f[1] == "=":
            return args[0] == args[1]
        return args in interp[f[1]]
    if tag == "not":
        return not _holds(f[1], domain, interp, env, reading)
    if tag in F.QUANT:
        results = (_holds(f[1], domain, interp, env + (d,), reading) for d in domain)
        return all(results) if tag == "all" else any(results)
    a, b = _holds(f[1], domain, interp, env, reading), _holds(f[2], domain, interp, env, reading)
    return {"and": a and b, "or": b if reading else a or b, "imp": (not a) or b, "iff": a == b}[tag]


def _countermodel(task, reading: bool) -> bool:
    """Whether a two-element model makes the premises true and the goal false."""
    data = WORLD.task_data[task.id]
    forms = list(data.premises) + [data.goal]
    preds = sorted(set().union(*[F.predicates(f) for f in forms]))
    consts = sorted(set().union(*[F.constants(f) for f in forms]))
    domain = (0, 1)
    tuples = {n: list(itertools.product(domain, repeat=n)) for _, n in preds}
    spaces = [list(itertools.chain.from_iterable(itertools.combinations(tuples[n], k)
                                                 for k in range(len(tuples[n]) + 1))) for _, n in preds]
    for ext in itertools.product(*spaces):
        for vals in itertools.product(domain, repeat=len(consts)):
            interp = {p: set(e) for (p, _), e in zip(preds, ext)} | dict(zip(consts, vals))
            if all(_holds(p, domain, interp, reading=reading) for p in data.premises) and not _holds(
                    data.goal, domain, interp, reading=reading):
                return True
    return False


@pytest.mark.parametrize("task", UNPROVABLE, ids=[t.id for t in UNPROVABLE])
def test_every_unprovable_goal_has_a_countermodel_under_the_reading(task):
    assert _countermodel(task, reading=True), f"{task.id} has no countermodel under the reading"


@pytest.mark.parametrize("task", LOOK_UNPROVABLE, ids=[t.id for t in LOOK_UNPROVABLE])
def test_the_look_unprovable_goals_are_classically_invalid(task):
    assert _countermodel(task, reading=False) and not _countermodel(task, reading=True)


# ---------------------------------------------------------------- differential tests


def _one_rule_proof(rid, use_true, sigma_index, variant):
    schema = (TRUE if use_true else BASE).schemas[rid]
    sigmas = list(itertools.islice(generate.assignments(schema, 400), 400))
    return generate.rule_proof(rid, schema, sigmas[sigma_index % len(sigmas)], variant, WORLD.reit_rule,
                               WORLD.notation, inst=WORLD.inst_rule)


@pytest.mark.parametrize("rid", PATCHED)
@given(use_true=st.booleans(), k=st.integers(0, 399), variant=st.sampled_from(generate.VARIANTS))
def test_a_difference_on_a_proof_using_a_patched_rule_is_that_rule_alone(rid, use_true, k, variant):
    proof = _one_rule_proof(rid, use_true, k, variant)
    if proof is None:
        return
    only = WORLD.variant([rid])  # the manual's rules with this one patch
    assert TRUE.check(proof).accepted == only.check(proof).accepted
    assert BASE.check(proof).accepted == WORLD.knockout(rid).check(proof).accepted
    if TRUE.check(proof).accepted != BASE.check(proof).accepted:
        assert rid in TRUE.check(proof).used | BASE.check(proof).used


@pytest.mark.parametrize("rid", PATCHED)
def test_every_patched_rule_is_exercised_by_a_generated_proof(rid):
    proof = find_witness(WORLD, rid)
    assert proof is not None
    assert TRUE.check(proof).accepted != BASE.check(proof).accepted
    assert rid in {ln.split()[-1] for ln in proof.splitlines()} | set(re.findall(r"\b(r\d+)\b", proof))


@given(st.integers(0, 10_000), st.integers(0, 40))
def test_proofs_citing_no_patched_rule_get_the_same_verdict(seed, skip):
    proof = next(itertools.islice(WORLD.probe_generator(seed), skip, None))
    true, base = TRUE.check(proof), BASE.check(proof)
    cited = set(re.findall(r"\b(r\d+)\b", proof))
    if not cited & set(PATCHED):
        assert TRUE.verdict_text(true) == BASE.verdict_text(base)
    elif true.accepted != base.accepted:
        failing = true if not true.accepted else base
        assert failing.rule in PATCHED  # the first line that differs cites a patched rule


@pytest.mark.parametrize("task", [t for t in WORLD.tasks if t.naive], ids=lambda t: t.id)
def test_reference_and_naive_proofs_fail_only_at_patched_rules(task):
    for world, proof in ((BASE, task.solution), (TRUE, task.naive)):
        if world.is_decline(proof):
            continue
        r = world.check(proof)
        assert r.accepted or r.rule in PATCHED, (task.id, r.message)


# ---------------------------------------------------------------- the command line and the runner


def test_probe_from_standard_input():
    r = CliRunner().invoke(main, ["probe", PATH, "-"], input="1. P & Q    premise\n2. P        r17 1\n")
    assert r.exit_code == 0
    assert r.stdout.strip() == "rejected at line 2 (r17): r17 does not give P from line 1. Line 1 checks."
    r = CliRunner().invoke(main, ["probe", "alienlogic", "1. P & Q premise\n2. Q r17 1"])
    assert r.stdout.strip() == "accepted: P & Q |- Q (2 lines)"


def test_the_manual_documents_the_base_rules_only():
    assert "`r17` conjunction elimination (left): `A & B |- A`" in WORLD.manual
    assert "A & B |- B`" not in WORLD.manual.split("`r17`")[1].split("\n")[0]
    assert "UNPROVABLE" in WORLD.manual


def test_the_runner_scores_the_oracle_at_100_and_the_manual_at_recall_only(tmp_path, report):
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", PATH, "-n", "1", "--answers", "1", "--out", str(out), "--no-cache"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    best = {row["system"]: row["best"] for row in summary["results"]}
    assert best["oracle"] == pytest.approx(100.0)
    assert best["manual"] == pytest.approx(report["recall_only"], abs=0.05)


def test_check_json_from_the_command_line(report):
    assert (report["rules"], report["tasks"], report["examples"], report["problems"]) == (24, 70, 8, [])
