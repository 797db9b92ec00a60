"""The Oracle benchmark's 96 boxes: all certified, counted per family and difficulty."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import load_world
from worldspec.compiler.suite import certify_folder, world_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(ROOT, "worlds", "oracle")
FAMILIES = ("CII", "CRI", "PSI", "ERI", "IPI", "GSI")


@pytest.fixture(scope="module")
def suite():
    return certify_folder(ORACLE)


def test_every_box_is_certified(suite):
    assert suite["problems"] == []
    assert suite["worlds"] == suite["certified"] == 96


def test_counts_per_family_and_difficulty(suite):
    c = suite["counts"]
    assert c["difficulty"] == {"easy": 51, "hard": 45}
    assert c["family"] == {f: 16 for f in FAMILIES}
    assert c["kind"] == {"blackbox": 80, "game": 16}


def test_worldspec_check_on_the_folder_reports_the_counts():
    r = CliRunner().invoke(main, ["check", ORACLE, "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["certified"] == report["worlds"] == 96 and not report["problems"]
    assert report["counts"]["family_difficulty"]["IPI/hard"] == 8
    assert report["counts"]["difficulty"] == {"easy": 51, "hard": 45}


def test_tests_are_computed_and_every_task_has_its_reference_answer():
    for path in world_files(ORACLE):
        w = load_world(path)
        assert w.tasks, path
        for t in w.tasks:
            v = w.verify(t, t.solution)
            assert v.passed and v.score == 1.0, (path, t.id, t.solution)


def test_a_seed_variant_redraws_the_hidden_parameters():
    path = os.path.join(ORACLE, "eri-e01-shifted-alphabet.world")
    a, b = load_world(path), load_world(path, seed=99)
    assert dict(a.params)["K"] != dict(b.params)["K"]
    assert a.tasks[0].solution != b.tasks[0].solution
    assert b.certify()["problems"] == []
