"""Issue 28: `worldspec sweep` runs every cell of a plan as `worldspec run` would, resumes after a kill,
and gives the same summary on every executor as the cells run one by one."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.runner.sweep import Cell, PlanError, cell_args, read_plan

HERE = Path(__file__).resolve().parent
BOXES = [str(HERE / "worlds" / "oracle" / "running-total.world"), str(HERE / "worlds" / "oracle" / "number-guess.world")]
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}


def plan_file(tmp_path: Path, text: str) -> str:
    p = tmp_path / "plan.toml"
    p.write_text(text, encoding="utf-8")
    return str(p)


def small_plan(tmp_path: Path, seeds=(1,)) -> str:
    return plan_file(tmp_path, f"worlds = {json.dumps(BOXES)}\nagents = [\"oracle\", \"memorise\"]\n"
                               f"seeds = {json.dumps(list(seeds))}\n")


def rows(summary: dict) -> list:
    return sorted((json.dumps({k: v for k, v in r.items()}, sort_keys=True) for r in summary["results"]))


def one_by_one(plan_path: str, out: Path) -> list:
    """Each cell of the plan as its own `worldspec run`, and the rows a sweep would collect from them."""
    plan = read_plan(plan_path)
    found = []
    for cell in plan.cells:
        folder = out / cell.name
        args = cell_args(plan, cell, folder, None)
        r = subprocess.run([sys.executable, "-c", "from worldspec.cli import main; main()", *args],
                           capture_output=True, text=True, env=ENV, timeout=600)
        assert r.returncode == 0, r.stderr
        summary = json.loads((folder / "summary.json").read_text())
        found += [{**row, "seed": cell.seed, "cell": cell.name} for row in summary["results"]]
    return sorted(json.dumps(r, sort_keys=True) for r in found)


def test_a_local_sweep_equals_its_cells_run_one_by_one(tmp_path):
    plan = small_plan(tmp_path)
    r = CliRunner().invoke(main, ["sweep", plan, "--out", str(tmp_path / "sw"), "--jobs", "2"])
    assert r.exit_code == 0, r.output
    summary = json.loads((tmp_path / "sw" / "summary.json").read_text())
    assert len(summary["cells"]) == 4 and summary["complete"] and summary["valid"]
    assert {row["seed"] for row in summary["results"]} == {1}
    assert rows(summary) == one_by_one(plan, tmp_path / "single")
    report = (tmp_path / "sw" / "report.md").read_text()
    assert report.count("## ") == 4 and "seed 1" in report
    again = CliRunner().invoke(main, ["sweep", plan, "--out", str(tmp_path / "sw")])  # finished cells are kept
    assert again.exit_code == 0 and rows(json.loads((tmp_path / "sw" / "summary.json").read_text())) == rows(summary)


def test_a_killed_sweep_finishes_when_run_again_with_no_cell_counted_twice(tmp_path):
    plan = small_plan(tmp_path)
    out = tmp_path / "sw"
    cmd = [sys.executable, "-c", "from worldspec.cli import main; main()", "sweep", plan, "--out", str(out),
           "--jobs", "1"]
    p = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not list(out.glob("cells/*/summary.json")):
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGKILL)  # the driver and the cell it is running
    p.wait()
    assert not (out / "summary.json").exists()
    done = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["results"]) == len(summary["cells"]) == 4
    assert len({(r["cell"], r["system"], r["world"]) for r in summary["results"]}) == 4
    clean = tmp_path / "clean"
    r = CliRunner().invoke(main, ["sweep", plan, "--out", str(clean), "--jobs", "2"])
    assert r.exit_code == 0, r.output
    assert rows(summary) == rows(json.loads((clean / "summary.json").read_text()))


@pytest.mark.parametrize("text, message", [
    ('agents = ["oracle"]\n', "a plan needs worlds"),
    ('worlds = ["demo"]\nmodles = ["x"]\n', "unknown plan key(s) modles"),
    ('worlds = ["demo"]\nseeds = ["one"]\n', "seeds must be a list of ints"),
    ('worlds = ["demo"]\n[run]\nseed = 3\n', "[run] may not set seed"),
    ('worlds = [\n', "is not TOML"),
])
def test_a_bad_plan_is_refused_naming_its_key(tmp_path, text, message):
    r = CliRunner().invoke(main, ["sweep", plan_file(tmp_path, text), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and message in r.output, r.output
    with pytest.raises(PlanError):
        read_plan(plan_file(tmp_path, text))


def test_cells_pass_their_settings_and_split_the_model_connections(tmp_path):
    plan = read_plan(plan_file(tmp_path, 'worlds = ["demo"]\nmodels = ["openai/m"]\nconditions = ["direct"]\n'
                                         'trajectories = 2\n[run]\njudge = "keyword"\nno_cache = true\n'))
    (cell,) = plan.cells
    assert cell == Cell("demo", "model:openai/m", "direct", None)
    args = cell_args(plan, cell, tmp_path / "c", 4)
    assert args[:2] == ["run", "demo"] and "--resume" not in args
    for part in (["--model", "openai/m"], ["--condition", "direct"], ["--trajectories", "2"], ["--judge", "keyword"],
                 ["--no-cache"], ["--max-connections", "4"]):
        assert any(args[i:i + len(part)] == part for i in range(len(args))), part


def test_a_sweep_on_a_local_ray_cluster_equals_the_local_sweep(tmp_path):
    """Three worlds x two built-in agents x two seeds, on Ray started on 127.0.0.1 for the test (extra [ray])."""
    pytest.importorskip("ray")
    worlds = BOXES + [str(HERE / "worlds" / "oracle" / "six-words.world")]
    plan = plan_file(tmp_path, f"worlds = {json.dumps(worlds)}\nagents = [\"oracle\", \"memorise\"]\nseeds = [1, 2]\n")
    outs = {}
    for executor in ("ray", "local"):
        r = CliRunner().invoke(main, ["sweep", plan, "--out", str(tmp_path / executor), "--executor", executor,
                                      "--jobs", "2"])
        assert r.exit_code == 0, r.output
        outs[executor] = json.loads((tmp_path / executor / "summary.json").read_text())
    assert len(outs["ray"]["cells"]) == 12
    assert rows(outs["ray"]) == rows(outs["local"]) == one_by_one(plan, tmp_path / "single")
