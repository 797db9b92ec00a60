"""Bits per query on black boxes (issue 26): the measure over the box explorer's finite hypothesis spaces
(runner/boxexplorer/information.py) scores a separating query above 0, a repeated or unreadable one 0, is
built from the box's view only, and the turn@shot protocol records it per trajectory and reports it."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import load_world
from worldspec.runner.boxexplorer.information import CircuitMeasure, MarksMeasure, box_information, measure_for
from worldspec.runner.boxexplorer.view import box_view
from worldspec.runner.learnability import box_query

CIRCUIT = "worlds/oracle/circuit/cri-e-swap.world"
WORDLE = "worlds/oracle/puzzle/ipi-e-wordle.world"


@pytest.fixture(scope="module")
def circuit():
    return load_world(CIRCUIT)


@pytest.fixture(scope="module")
def wordle():
    return load_world(WORDLE)


def test_a_separating_circuit_query_removes_bits_and_its_repeat_none(circuit):
    view = box_view(circuit, turns=20, shots=2)
    query = box_query(circuit)
    x = "[1, 0, 0, 1, 1, 0, 1, 0, 1]"
    out = query(None, x)
    first, again = box_information(view, [(x, out, 1), (x, out, 1)])
    assert first.bits > 0 and first.best > 0
    assert again.bits == 0 and again.index == 1


def test_garbage_removes_nothing_and_raises_nothing(circuit, wordle):
    cview, wview = box_view(circuit), box_view(wordle)
    rows = box_information(cview, [("[1, 0]", "[0, 1]", 1), ("hello", None, 1), ("[1]*9", "not bits", 1),
                                   ("[1, 1, 1, 1, 1, 1, 1, 1, 1]", "[0, 1, 2]", 1), ("", "", 0)])
    assert [r.bits for r in rows] == [0.0] * 5
    rows = box_information(wview, [("ABSOLUTE", "garbage!", 1), ("abc", None, 1), ("ABSOLUTE", "AXXQ", 1)])
    assert [r.bits for r in rows] == [0.0] * 3


def test_marks_a_guess_removes_bits_and_its_repeat_none(wordle):
    view = box_view(wordle)
    query = box_query(wordle)
    test = view.tests[0].id
    out = query(test, "EEEETTTT")
    first, again = box_information(view, [("EEEETTTT", out, 1), ("EEEETTTT", out, 1)])
    assert first.bits > 0 and again.bits == 0 and first.best > 0


def test_the_measure_is_built_from_the_view_only(circuit, wordle):
    """As tests/test_box_explorer.py checks for the explorer: no world, function or test case is reachable."""
    for box, cls in ((circuit, CircuitMeasure), (wordle, MarksMeasure)):
        measure = measure_for(box_view(box))
        assert isinstance(measure, cls)
        for holder in (measure, measure.strategy):
            for value in vars(holder).values():
                assert value is not box and type(value).__name__ not in ("BlackBoxWorld", "Unit", "TestCase")
    # shapes without a finite space are not measured: no row
    for path in ("worlds/oracle/encryption/eri-e-caesar-cipher.world", "worlds/oracle/puzzle/ipi-e-number-guessing.world"):
        view = box_view(load_world(path))
        assert measure_for(view) is None and box_information(view, [("abc", "xyz", 1)]) is None


def test_a_turnshot_run_records_the_rows_and_reports_them(tmp_path, monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", CIRCUIT, "--agent", "explorer", "--agent", "memorise", "--preset", "10@1",
                                  "--no-cache", "--out", str(out)])
    assert r.exit_code == 0, r.output
    records = {rec["system"]: rec for rec in map(json.loads, (out / "trajectories.jsonl").read_text().splitlines())}
    for rec in records.values():
        info = rec["information"]
        assert info["calls"] == 10 and len(info["probes"]) == 10 and info["bits"] > 0
    assert records["explorer"]["information"]["bits"] >= records["memorise"]["information"]["bits"]
    summary = json.loads((out / "summary.json").read_text())
    assert {row["system"] for row in summary["information"]} == {"explorer", "memorise"}
    report = (out / "report.md").read_text()
    assert "Information per query" in report
    assert sum(line.startswith("| CRI-E swap") for line in report[report.index("Information per query"):].splitlines()) == 2
