"""`worldspec run` / `worldspec report` through click: defaults, dry run, errors, reports."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from runner_fakes import FakeWorld
from worldspec.runner import cli
from worldspec.runner.progress import Progress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "worlds", "demo.world")


@pytest.fixture
def fake_world(monkeypatch):
    monkeypatch.setattr(cli, "load_world", lambda path, seed=None: FakeWorld())


def invoke(cmd, args):
    return CliRunner().invoke(cmd, args, catch_exceptions=False)


def test_run_with_no_model_runs_the_builtin_agents(fake_world, tmp_path):
    out = tmp_path / "run"
    r = invoke(cli.run, ["fake.world", "--out", str(out)])
    assert r.exit_code == 0, r.output
    for f in ("log.jsonl", "trajectories.jsonl", "summary.json", "report.md", "curves-fake.png"):
        assert (out / f).exists(), f
    summary = json.loads((out / "summary.json").read_text())
    assert summary["validity"]["valid"]
    best = {g["system"]: g for g in summary["results"]}
    assert set(best) == {"oracle", "manual"}
    assert best["oracle"]["best"] == 100.0 and best["manual"]["best"] == 25.0
    for g in summary["results"]:
        assert {"best", "mean", "worst", "n", "best_trajectory", "curve"} <= set(g)
        assert g["n"] == 3
    # trajectories.jsonl: the fixed fields of DESIGN.md
    for line in (out / "trajectories.jsonl").read_text().splitlines():
        t = json.loads(line)
        assert {"world", "system", "condition", "trajectory", "milestones"} <= set(t)
        assert [m["t"] for m in t["milestones"]] == [0, 1, 2]
    # not a terminal: progress degrades to plain lines
    assert "oracle autonomous #1: M0 accuracy 100.0%" in r.output
    assert "| oracle |" in (out / "report.md").read_text()


def test_dry_run_prints_the_plan_and_runs_nothing(fake_world, tmp_path):
    r = invoke(cli.run, ["fake.world", "--model", "openai/x", "--condition", "autonomous",
                         "--condition", "direct", "--out", str(tmp_path / "x"), "--dry-run"])
    assert r.exit_code == 0, r.output
    # autonomous: 3 trajectories x ((3+1) + (2+1) exploration turns + 3 milestones x 13 calls)
    # direct: 1 trajectory x 3 milestones x 13 calls
    assert "model calls: at most " + str(3 * (7 + 39) + 39) in r.output
    assert not (tmp_path / "x").exists()


def test_user_errors_are_messages_not_tracebacks(fake_world, tmp_path):
    out = tmp_path / "run"
    assert invoke(cli.run, ["w", "--out", str(out), "-n", "1"]).exit_code == 0
    r = CliRunner().invoke(cli.run, ["w", "--out", str(out)])
    assert r.exit_code == 1 and "--resume" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli.run, ["w", "--out", str(out), "--resume"])
    assert r.exit_code == 1 and "trajectories" in r.output  # -n 3 now, 1 before
    r = CliRunner().invoke(cli.run, ["w", "--resume"])
    assert r.exit_code == 2 and "--out" in r.output
    r = CliRunner().invoke(cli.run, ["w", "--agent", "wizard", "--out", str(tmp_path / "z")])
    assert r.exit_code == 1 and "unknown agent" in r.output
    r = CliRunner().invoke(cli.run, ["w", "--condition", "hindsight", "--out", str(tmp_path / "h")])
    assert r.exit_code == 1 and "--hindsight-from" in r.output
    r = CliRunner().invoke(cli.run, ["w", "--model-arg", "oops", "--out", str(tmp_path / "m")])
    assert r.exit_code == 2 and "KEY=VALUE" in r.output


def test_resume_of_a_finished_run_changes_nothing(fake_world, tmp_path):
    out = tmp_path / "run"
    assert invoke(cli.run, ["w", "--out", str(out), "-n", "2"]).exit_code == 0
    before = (out / "trajectories.jsonl").read_text()
    n = len((out / "log.jsonl").read_text().splitlines())
    assert invoke(cli.run, ["w", "--out", str(out), "-n", "2", "--resume"]).exit_code == 0
    assert (out / "trajectories.jsonl").read_text() == before
    # only the new session's start/stats/end lines are added
    assert len((out / "log.jsonl").read_text().splitlines()) == n + 3


def test_report_merges_runs(fake_world, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert invoke(cli.run, ["w", "--out", str(a), "-n", "1", "--agent", "oracle"]).exit_code == 0
    assert invoke(cli.run, ["w", "--out", str(b), "-n", "1", "--agent", "manual",
                            "--condition", "open-book-m0", "--condition", "autonomous"]).exit_code == 0
    merged = tmp_path / "merged"
    r = invoke(cli.report, [str(a), str(b), "--out", str(merged)])
    assert r.exit_code == 0, r.output
    assert "| oracle | 100.0 |" in r.output and "| manual | 25.0 |" in r.output
    s = json.loads((merged / "summary.json").read_text())
    assert {(g["system"], g["condition"]) for g in s["results"]} == {
        ("oracle", "autonomous"), ("manual", "autonomous"), ("manual", "open-book-m0")}
    assert s["validity"]["valid"] and len(s["validity"]["runs"]) == 2
    assert (merged / "curves-fake.png").stat().st_size > 1000
    # with no --out and several runs: Markdown on stdout only
    r = invoke(cli.report, [str(a), str(b), "--no-plots"])
    assert r.output.startswith("# worldspec run report")


def test_live_progress_on_a_terminal_does_not_break():
    buf = io.StringIO()
    with Progress(stream=buf, live=True) as p:
        p.update("x|autonomous|1", system="x", condition="autonomous", trajectory=1, round=1, calls=3)
        p.update("x|autonomous|1", system="x", condition="autonomous", trajectory=1, milestone=1,
                 accuracy=42.0)
    assert "42.0%" in buf.getvalue()


@pytest.mark.skipif(not os.path.exists(DEMO), reason="demo world not shipped")
def test_worldspec_run_demo_needs_no_keys_and_never_imports_litellm(tmp_path):
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from worldspec.runner.cli import run\n"
        f"r = CliRunner().invoke(run, ['demo', '--out', {str(tmp_path / 'demo')!r}, '-n', '1'])\n"
        "assert r.exit_code == 0, r.output\n"
        "assert 'litellm' not in sys.modules\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    s = json.loads((tmp_path / "demo" / "summary.json").read_text())
    assert s["validity"]["valid"]
    oracle = next(g for g in s["results"] if g["system"] == "oracle")
    assert [m["accuracy"] for m in oracle["curve"]] == [100.0] * len(oracle["curve"])


def test_report_refuses_a_run_of_another_protocol(tmp_path):
    (tmp_path / "log.jsonl").write_text(json.dumps(
        {"type": "header", "id": "header", "config": {"protocol": "turn@shot"}}) + "\n")
    r = CliRunner().invoke(cli.report, [str(tmp_path)])
    assert r.exit_code == 1 and "turn@shot" in r.output and "Traceback" not in r.output
