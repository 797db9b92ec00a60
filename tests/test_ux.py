"""What a user meets first (issue 15): clean failures, reruns, the live display, small frictions.

The no-key run, a fatal provider error and a second run of the same command are run as a user runs
them, through the console script in a subprocess, so that whatever asyncio or litellm print at exit
is seen too.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

EXE = shutil.which("worldspec")
CMD = [EXE] if EXE else [sys.executable, "-c", "from worldspec.cli import main; main()"]
NOISE = ("Traceback", "never retrieved", "never awaited", "RuntimeWarning", "internal error")


def worldspec(*args, env=None, timeout=240, cwd=None):
    """Run the console script; (exit status, stdout, stderr)."""
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    base.update(LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true", **(env or {}))
    p = subprocess.run(CMD + list(args), capture_output=True, text=True, timeout=timeout, env=base, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def clean(text: str) -> bool:
    return not any(n in text for n in NOISE)


# ---------------------------------------------------------------- a missing key, a fatal provider error


def test_a_run_without_its_key_says_so_in_one_paragraph_and_writes_nothing(tmp_path):
    out = tmp_path / "runs" / "x"
    code, stdout, stderr = worldspec("run", "demo", "--model", "openai/gpt-4o-mini", "--out", str(out))
    assert code == 2
    assert "OPENAI_API_KEY" in stderr and "Nothing was run" in stderr
    assert len(stderr.strip().splitlines()) == 1 and clean(stdout + stderr)
    assert not out.exists() and not (tmp_path / "runs").exists()
    # an existing, empty --out is left as it was
    out.mkdir(parents=True)
    assert worldspec("run", "demo", "--model", "anthropic/claude-x", "--out", str(out))[0] == 2
    assert list(out.iterdir()) == []


def test_a_fatal_provider_error_leaves_out_as_it_was_so_the_same_command_runs_again(fake_openai, tmp_path):
    fake_openai.fail_next("401", n=10**6)
    out = tmp_path / "r"
    args = ("run", "demo", "--model", "openai/fake", "--api-base", fake_openai.base_url, "--no-cache", "-n", "1",
            "--out", str(out))
    for _ in range(2):  # the second time it says the same, not "already holds a run"
        code, stdout, stderr = worldspec(*args, env={"OPENAI_API_KEY": "sk-fake"})
        assert code == 2, stderr
        assert "authentication failed" in stderr and clean(stdout + stderr), stderr
        assert "already holds" not in stderr
        assert not out.exists()


# ---------------------------------------------------------------- the same command twice


def test_running_the_same_command_twice_reports_the_finished_run(tmp_path):
    out = tmp_path / "d"
    args = ("run", "demo", "-n", "1", "--quiet", "--out", str(out))
    code, first, stderr = worldspec(*args)
    assert code == 0, stderr
    code, again, stderr = worldspec(*args)
    assert code == 0, stderr
    assert "already holds this run, finished" in again and "| Demo | oracle | autonomous |" in again
    assert clean(again + stderr)
    sessions = lambda: [json.loads(l) for l in (out / "log.jsonl").read_text().splitlines()  # noqa: E731
                        if '"type":"session"' in l]
    assert len(sessions()) == 2  # the second command wrote nothing
    # --overwrite starts afresh: one session in the new log
    code, _, stderr = worldspec(*args, "--overwrite")
    assert code == 0, stderr
    assert [s["status"] for s in sessions()] == ["started", "success"]
    # half finished (the log stops before the end): --resume is what to do
    lines = (out / "log.jsonl").read_text().splitlines(keepends=True)
    (out / "log.jsonl").write_text("".join(lines[: len(lines) // 2]))
    code, stdout, stderr = worldspec(*args)
    assert code == 2 and "unfinished run" in stderr and "--resume" in stderr and clean(stdout + stderr)
    assert worldspec(*args, "--resume")[0] == 0
