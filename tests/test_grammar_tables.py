"""The shipped spec-grammar tables (worldspec/spec_tables.py) are what spec.lark builds, and parse alike."""
from __future__ import annotations

import glob
import os

import pytest
from lark import Lark

from worldspec import grammar_tables, spec_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def built() -> Lark:
    return grammar_tables.build()


def test_the_shipped_tables_are_current():
    """Fails after an edit of spec.lark: run `python -m worldspec.grammar_tables` and commit the tables.
    (Lark numbers states in a different order on each build, so the tables are compared by what they
    were built from and by what they parse, not byte for byte.)"""
    assert spec_tables.DIGEST == grammar_tables.digest()


def test_the_loaded_parser_reads_every_bundled_world_as_the_built_one(built):
    loaded = grammar_tables.spec_parser()
    assert loaded is not built and loaded.source_path == "<deserialized>"
    files = sorted(glob.glob(os.path.join(ROOT, "worlds", "**", "*.world"), recursive=True))
    files += sorted(glob.glob(os.path.join(ROOT, "tests", "worlds", "**", "*.world"), recursive=True))
    assert len(files) > 200
    for path in files[::3]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        assert loaded.parse(text, start="start") == built.parse(text, start="start"), path
    assert loaded.parse("f(1, [2])", start="expr") == built.parse("f(1, [2])", start="expr")


def test_tables_of_another_grammar_are_not_used(monkeypatch):
    monkeypatch.setattr(spec_tables, "DIGEST", "0" * 64)
    assert grammar_tables.spec_parser().source_path != "<deserialized>"
