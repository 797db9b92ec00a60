"""`worldspec run` / `worldspec report` through click: defaults, dry run, exit codes, reports.

The world is a spec of the test kind `fake` (registered by the `fake_world_file`
fixture), so every run goes through the compiler's kind registry like a bundled world.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import attrs
import pytest
from click.testing import CliRunner

from runner_fakes import FAKE_KIND, FakeWorld
from worldspec.cli import EXIT_INPUT, EXIT_INTERNAL, main
from worldspec.compiler import KINDS
from worldspec.runner.progress import Progress
from worldspec.runner.tally import Tally
from worldspec.runner.log import read_events

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def invoke(*args):
    """`worldspec ARGS` as a user types it."""
    return CliRunner().invoke(main, list(args))


def test_run_with_no_model_runs_the_builtin_agents(fake_world_file, tmp_path):
    out = tmp_path / "run"
    r = invoke("run", fake_world_file, "--out", str(out))
    assert r.exit_code == 0, r.output
    for f in ("log.jsonl", "trajectories.jsonl", "summary.json", "report.md", "curves-fake.png"):
        assert (out / f).exists(), f
    summary = json.loads((out / "summary.json").read_text())
    assert summary["validity"]["valid"] and summary["protocol"] == "milestone"
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
    # not a terminal: progress degrades to plain lines; the results table follows
    assert "oracle autonomous #1: M0 accuracy 100.0%" in r.output
    assert "| Fake | oracle | autonomous | 100.0 | 100.0 | 100.0 | 3 | 1 |" in r.output
    assert "| oracle |" in (out / "report.md").read_text()


def test_dry_run_prints_the_plan_and_runs_nothing(fake_world_file, tmp_path):
    r = invoke("run", fake_world_file, "--model", "openai/x", "--condition", "autonomous",
               "--condition", "direct", "--out", str(tmp_path / "x"), "--dry-run")
    assert r.exit_code == 0, r.output
    # autonomous: 3 trajectories x ((3+6) + (2+6) exploration turns: a turn a call, the closing turn,
    # 3 more with tools closed, 2 nudges; + 3 milestones x 13 calls, each asked at most twice more)
    # direct: 1 trajectory x 3 milestones x 13 calls, each asked at most twice more
    assert "model calls: at most " + str(3 * (17 + 3 * 39) + 3 * 39) in r.output
    assert "| openai/x | direct | 1 | 0 | 3 | 39 |" in r.output
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("args,says", [
    (["--resume"], "--out"),
    (["--out", "x", "--model-arg", "oops"], "KEY=VALUE"),
    (["--out", "x", "--condition", "sideways"], "sideways"),
    (["--out", "x", "-n", "0"], "--trajectories"),
    (["--out", "x", "--agent", "wizard"], "unknown agent 'wizard'"),
    (["--out", "x", "--volume-from", "nowhere", "--condition", "fixed"], "no run log at nowhere"),
    (["--out", "x", "--hindsight-from", "nowhere", "--condition", "hindsight"], "no run log at nowhere"),
])
def test_bad_options_exit_2_with_a_message(fake_world_file, tmp_path, monkeypatch, args, says):
    monkeypatch.chdir(tmp_path)
    r = invoke("run", fake_world_file, *args)
    assert r.exit_code == EXIT_INPUT, r.output
    assert says in r.output and "Traceback" not in r.output
    assert not (tmp_path / "x" / "log.jsonl").exists() and not (tmp_path / "runs").exists()


def test_a_run_directory_in_use_or_of_another_configuration_exits_2(fake_world_file, tmp_path):
    out = tmp_path / "run"
    assert invoke("run", fake_world_file, "--out", str(out), "-n", "1").exit_code == 0
    r = invoke("run", fake_world_file, "--out", str(out))
    assert r.exit_code == EXIT_INPUT and "another configuration" in r.output and "--overwrite" in r.output
    assert "Traceback" not in r.output
    r = invoke("run", fake_world_file, "--out", str(out), "--resume", "-n", "3")
    assert r.exit_code == EXIT_INPUT and "trajectories" in r.output  # -n 3 typed, 1 before
    # --resume alone takes the run's options from its log (issue 31 item 6)
    assert invoke("run", fake_world_file, "--out", str(out), "--resume").exit_code == 0


def test_a_spec_error_exits_2_with_its_diagnostic(tmp_path):
    bad = tmp_path / "bad.world"
    bad.write_text('world "Bad" version 1\nkind wizardry\n')
    r = invoke("run", str(bad), "--out", str(tmp_path / "x"))
    assert r.exit_code == EXIT_INPUT
    assert "bad.world:2:6: error: unknown world kind 'wizardry'" in r.output and "^" in r.output
    r = invoke("run", "no-such-world", "--out", str(tmp_path / "y"))
    assert r.exit_code == EXIT_INPUT and "no world file 'no-such-world'" in r.output


def test_an_internal_error_exits_3_in_one_line(fake_world_file, tmp_path, monkeypatch):
    class Broken(FakeWorld):
        def probe(self, text):
            raise ZeroDivisionError("a bug in a world")

    monkeypatch.setitem(KINDS, "fake", attrs.evolve(FAKE_KIND, compile=lambda spec, seed: Broken()))
    r = invoke("run", fake_world_file, "--out", str(tmp_path / "x"), "-n", "1", "--agent", "oracle")
    assert r.exit_code == EXIT_INTERNAL
    assert "internal error (ZeroDivisionError: a bug in a world)" in r.output and "Traceback" not in r.output
    events = list(read_events(tmp_path / "x" / "log.jsonl"))
    assert events[-1]["status"] == "error" and "ZeroDivisionError" in events[-1]["error"]


def test_resume_of_a_finished_run_changes_nothing(fake_world_file, tmp_path):
    out = tmp_path / "run"
    assert invoke("run", fake_world_file, "--out", str(out), "-n", "2").exit_code == 0
    before = (out / "trajectories.jsonl").read_text()
    n = len((out / "log.jsonl").read_text().splitlines())
    assert invoke("run", fake_world_file, "--out", str(out), "-n", "2", "--resume").exit_code == 0
    assert (out / "trajectories.jsonl").read_text() == before
    # only the new session's start/stats/end lines are added
    assert len((out / "log.jsonl").read_text().splitlines()) == n + 3


def test_report_merges_runs(fake_world_file, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert invoke("run", fake_world_file, "--out", str(a), "-n", "1", "--agent", "oracle").exit_code == 0
    assert invoke("run", fake_world_file, "--out", str(b), "-n", "1", "--agent", "manual",
                  "--condition", "open-book-m0", "--condition", "autonomous").exit_code == 0
    merged = tmp_path / "merged"
    r = invoke("report", str(a), str(b), "--out", str(merged))
    assert r.exit_code == 0, r.output
    assert "| oracle | 100.0 |" in r.output and "| manual | 25.0 |" in r.output
    s = json.loads((merged / "summary.json").read_text())
    assert {(g["system"], g["condition"]) for g in s["results"]} == {
        ("oracle", "autonomous"), ("manual", "autonomous"), ("manual", "open-book-m0")}
    assert s["validity"]["valid"] and len(s["validity"]["runs"]) == 2
    assert (merged / "curves-fake.png").stat().st_size > 1000
    # with no --out: Markdown on stdout, the files in a new folder beside the first run
    r = invoke("report", str(a), str(b), "--no-plots")
    assert r.output.startswith("# worldspec run report")


def test_report_of_a_missing_log_or_of_two_protocols_exits_2(fake_world_file, tmp_path):
    r = invoke("report", str(tmp_path))
    assert r.exit_code == EXIT_INPUT and "no run log" in r.output
    a, b = tmp_path / "a", tmp_path / "b"
    assert invoke("run", fake_world_file, "--out", str(a), "-n", "1", "--agent", "oracle").exit_code == 0
    b.mkdir()
    (b / "log.jsonl").write_text(json.dumps(
        {"type": "header", "id": "header", "config": {"protocol": "turn@shot"}}) + "\n")
    r = invoke("report", str(a), str(b))
    assert r.exit_code == EXIT_INPUT and "turn@shot" in r.output and "Traceback" not in r.output


def test_live_progress_on_a_terminal_does_not_break():
    buf = io.StringIO()
    tally = Tally()
    with Progress(stream=buf, live=True) as p:
        p.attach(tally)
        conv = "x|autonomous|1"
        tally.add({"type": "header", "config": {"protocol": "milestone", "jobs": [conv]}})
        tally.add({"type": "request", "conv": conv, "system": "x", "condition": "autonomous", "trajectory": 1,
                   "purpose": "explore", "t": 1})
        tally.add({"type": "milestone", "conv": conv, "record": {"t": 1, "accuracy": 42.0, "calls": 3}})
    assert "42.0%" in buf.getvalue()


def test_worldspec_run_demo_needs_no_keys_and_never_imports_litellm(tmp_path):
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from worldspec.cli import main\n"
        f"r = CliRunner().invoke(main, ['run', 'demo', '--out', {str(tmp_path / 'demo')!r}, '-n', '1'])\n"
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


@pytest.mark.parametrize("target,args", [
    ("interactive/trust.world", ["--agent", "allc"]),
    ("oracle-extra/cii-e01-running-maximum.world", ["--turns", "3"]),
])
def test_report_of_a_run_of_any_protocol_has_the_shape_the_run_wrote(tmp_path, target, args):
    out = tmp_path / "run"
    r = invoke("run", os.path.join(ROOT, "worlds", target), "--out", str(out), "--quiet", *args)
    assert r.exit_code == 0, r.output
    again = tmp_path / "again"
    r = invoke("report", str(out), "--out", str(again))
    assert r.exit_code == 0, r.output
    for name in ("summary.json", "report.md", "trajectories.jsonl"):
        assert (again / name).read_text() == (out / name).read_text(), name
    assert json.loads((out / "summary.json").read_text())["validity"]["valid"]
