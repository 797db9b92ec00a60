"""Runs written before the World faces and the protocol layouts (issue 25) still load in `report` and `view`.

tests/data/runs-bb20f35/ holds one run per protocol written by worldspec at bb20f35's parent (the last commit
before issue 25's work) with the built-in agents: demo (milestone, oracle agent, autonomous), running-total
(turn@shot), trust (pool), headsup (Hold'em), m03-last-two-digits (judge); each log gzipped beside the
summary.json that release wrote. Today's `report` must reproduce each summary's results, and `view` must lay
each run out.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from worldspec.cli import main

DATA = Path(__file__).parent / "data" / "runs-bb20f35"
PROTOCOLS = {"milestone": "milestone", "turnshot": "turn@shot", "pool": "pool", "holdem": "holdem", "judge": "judge"}


def unpack(name: str, tmp_path: Path) -> Path:
    run = tmp_path / name
    run.mkdir()
    (run / "log.jsonl").write_bytes(gzip.decompress((DATA / f"{name}.log.jsonl.gz").read_bytes()))
    return run


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_an_old_run_reports_as_it_did_and_views(name, tmp_path):
    run = unpack(name, tmp_path)
    out = tmp_path / "report"
    r = CliRunner().invoke(main, ["report", str(run), "--out", str(out), "--no-plots"])
    assert r.exit_code == 0, r.output
    then = json.loads((DATA / f"{name}.summary.json").read_text())
    now = json.loads((out / "summary.json").read_text())
    assert now["protocol"] == then["protocol"] == PROTOCOLS[name]
    assert now["results"] == then["results"]
    assert now["validity"]["valid"] and then["validity"]["valid"]
    r = CliRunner().invoke(main, ["view", str(run), "--out", str(tmp_path / "view.html")])
    assert r.exit_code == 0, r.output
    page = (tmp_path / "view.html").read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype html>")
    assert len(page) > 2000
