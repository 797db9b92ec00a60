"""AlienLogic's seed variants: rule ids drawn from the seed, the same logic under new names.

The declared seed gives the ids r4 ... r97; any other seed gives every rule a new id
(a permutation of r0 ... r99), and the variant is the declared world with its ids
renamed, text for text, and certifies on its own.
"""
from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner

from conftest import full_or

from worldspec.cli import main
from worldspec.compiler import load_world
from worldspec.compiler.common import recall_only_score

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(ROOT, "worlds", "alienlogic.world")
DEFAULT = load_world(PATH)
SEEDS = (1, 2, 3, 5)
# the ids of the declared seed, in the order of the infer blocks
DECLARED_IDS = [4, 11, 17, 18, 63, 22, 23, 29, 58, 35, 71, 9, 12, 40, 44, 47, 53, 66, 26, 27, 28, 31, 32, 33, 36,
                37, 39, 50, 55, 56, 74, 75, 78, 79, 83, 84, 90, 91, 95, 97]


@pytest.fixture(scope="module", params=SEEDS, ids=lambda s: f"seed{s}")
def variant(request):
    return load_world(PATH, seed=request.param)


def renaming(world) -> dict[str, str]:
    """Declared id -> this world's id, through the params that name the rules."""
    ours, declared = dict(world.params), dict(DEFAULT.params)
    return {declared[k]: v for k, v in ours.items() if isinstance(v, str) and re.fullmatch(r"r\d+", v)}


def rename(text: str, sigma: dict[str, str]) -> str:
    return re.sub(r"\br\d+\b", lambda m: sigma.get(m.group(), m.group()), text)


def test_the_declared_seed_keeps_the_published_ids():
    params = dict(DEFAULT.params)
    assert (params["M"], params["K"]) == (1, 0)
    assert list(DEFAULT.infer) == [f"r{n}" for n in DECLARED_IDS]
    assert DEFAULT.rule("h1").target == "rule r58" and DEFAULT.task("T15").naive.split()[-2:] == ["r17", "1"]


def test_a_seed_renames_every_rule(variant):
    sigma = renaming(variant)
    assert sorted(sigma) == sorted(DEFAULT.infer) and sorted(sigma.values()) == sorted(variant.infer)
    assert len(set(sigma.values())) == len(sigma)  # a permutation: no two rules share an id
    assert all(re.fullmatch(r"r\d{1,2}", i) for i in variant.infer)
    assert all(old != new for old, new in sigma.items())  # no rule keeps its declared id
    assert {sigma[r.id] for r in DEFAULT.rules} == {r.id for r in variant.rules}


def test_a_variant_is_the_declared_world_with_its_ids_renamed(variant):
    sigma = renaming(variant)
    assert variant.manual == rename(DEFAULT.manual, sigma) != DEFAULT.manual
    assert variant.open_book == rename(DEFAULT.open_book, sigma)
    assert [e.program for e in variant.examples] == [rename(e.program, sigma) for e in DEFAULT.examples]
    assert [e.output for e in variant.examples] == [e.output for e in DEFAULT.examples]
    for old, new in zip(DEFAULT.tasks, variant.tasks):
        assert (new.id, new.prompt, new.labels) == (old.id, old.prompt, old.labels)
        assert (new.solution, new.naive) == (rename(old.solution, sigma), rename(old.naive, sigma))
    for r in DEFAULT.rules:
        assert variant.patches[sigma[r.id]].canonical() == DEFAULT.patches[r.id].canonical()
        assert variant.rule(sigma[r.id]).statement == rename(r.statement, sigma)


def test_a_variant_grades_by_what_its_ids_mean(variant):
    sigma = renaming(variant)
    true = variant.true_world()
    t = DEFAULT.task("T15")
    assert true.verify(t.id, rename(t.solution, sigma)).passed
    # the declared world's answer cites ids that mean other rules here (r18 and r63 are not the same pair)
    if (sigma["r18"], sigma["r63"]) != ("r18", "r63"):
        assert not true.verify(t.id, t.solution).passed


def test_the_report_example_is_no_rule_difference(variant):
    rid, schema = variant.report_example
    assert rid not in variant.patches and f"`{rid}: {schema}`" in variant.report_instructions
    assert not any(variant.grade_equation(r.id, schema) for r in variant.rules)
    assert (rid, schema) == (renaming(variant)["r9"], "A -> B, A |- B")


def test_requires_follows_the_renaming(variant):
    sigma = renaming(variant)
    for t in DEFAULT.tasks[:20]:
        assert variant.requires(t.id) == {sigma[r] for r in DEFAULT.requires(t.id)}


def test_check_seed_5_certifies_a_different_world():
    r = CliRunner().invoke(main, ["check", "alienlogic", "--seed", "5", "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["problems"] == [] and report["seed"] == 5
    assert report["recall_only"] == recall_only_score(DEFAULT.true_world())
    assert (report["rules"], report["tasks"], report["examples"], len(report["unprovable"])) == (24, 70, 8, 25)
    assert report["manual_unprovrec"] == 0.0 and report["recall_only_refusals"] == []
    assert {row["id"] for row in report["rule_table"]} != {r.id for r in DEFAULT.rules}
    assert all(len(row["tasks"]) >= 2 for row in report["rule_table"])


@pytest.mark.slow
# Under WORLDSPEC_FULL_SUITE=1 only: in the default run test_check_seed_5_certifies_a_different_world certifies a
# seeded variant through `check --seed` with these assertions and more (this was a second full certification).
@pytest.mark.parametrize("seed", full_or((1, 2, 3), ()))
def test_seeds_1_to_3_certify(seed):
    report = load_world(PATH, seed=seed).certify()
    assert report["problems"] == [] and report["seed"] == seed
    assert len(report["unprovable"]) == 25 and report["manual_unprovrec"] <= 50.0
