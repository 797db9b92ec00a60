"""What a user meets first (issue 15): clean failures, reruns, the live display, small frictions.

The no-key run, a fatal provider error and a second run of the same command are run as a user runs
them, through the console script in a subprocess, so that whatever asyncio or litellm print at exit
is seen too.
"""
from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import attrs
import matplotlib
import matplotlib.pyplot as plt
import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st
from rich.console import Console

from conftest import log_events
from runner_fakes import FakeWorld, policy_reply
from worldspec.cli import CertifyDisplay, all_problems, main, plural, report_lines
from worldspec.compiler import load_world
from worldspec.compiler.program.equations import EquationError, read_sexpr
from worldspec.play import Session, caret
from worldspec.runner.config import RunConfig
from worldspec.runner.experiment import run_experiment
from worldspec.runner.log import read_events
from worldspec.runner.models import RetryPolicy, ScriptedModel, TransientError
from worldspec.runner.progress import Progress
from worldspec.runner.tally import Tally
from worldspec.runner.protocols.milestone_report import curves_figure

EXE = shutil.which("worldspec")
CMD = [EXE] if EXE else [sys.executable, "-c", "from worldspec.cli import main; main()"]
DEMO = str(Path(__file__).parent.parent / "worlds" / "demo.world")
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
    # one built-in agent and no exploration are enough: what is tested is the run folder's life
    args = ("run", "demo", "-n", "1", "--agent", "oracle", "--condition", "direct", "--quiet", "--out", str(out))
    code, first, stderr = worldspec(*args)
    assert code == 0, stderr
    code, again, stderr = worldspec(*args)
    assert code == 0, stderr
    assert "already holds this run, finished" in again and "| Demo | oracle | direct |" in again
    assert clean(again + stderr)
    sessions = lambda: [e for e in read_events(out / "log.jsonl") if e["type"] == "session"]  # noqa: E731
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


# ---------------------------------------------------------------- the live display


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def rendered(table) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(table)
    return console.file.getvalue()


def run_tally(*convs: str) -> Tally:
    """A milestone run's tally whose header lists these sessions."""
    tally = Tally()
    tally.add({"type": "header", "config": {"protocol": "milestone", "jobs": list(convs)}})
    return tally


def who(conv: str) -> dict:
    system, condition, index = conv.split("|")
    return {"conv": conv, "system": system, "condition": condition, "trajectory": int(index)}


def explored(tally: Tally, conv: str, t: int, calls: int, tokens: int) -> None:
    """Round t of a session: one exploration request, its reply, `calls` tool calls."""
    tally.add({"type": "request", **who(conv), "purpose": "explore", "t": t, "key": f"k{t}"})
    tally.add({"type": "reply", **who(conv), "purpose": "explore", "t": t, "cached": False,
               "reply": {"usage": {"input_tokens": tokens, "output_tokens": 0}}})
    for i in range(calls):
        tally.add({"type": "tool", "conv": conv, "t": t, "status": "ok"})


def test_the_live_table_shows_retries_lost_answers_and_the_milestones_being_answered():
    clock = FakeClock()
    conv = "gpt|autonomous|1"
    tally = run_tally(conv)
    p = Progress(stream=io.StringIO(), live=True, clock=clock)
    p.attach(tally)
    explored(tally, conv, 2, 7, 900)
    tally.add({"type": "retry", "conv": conv, "system": "gpt"})
    tally.add({"type": "retry", "conv": conv})
    for t in (1, 2):  # milestone requests as they go out: counted, their milestones shown waiting
        tally.add({"type": "request", **who(conv), "purpose": "task:t3", "t": t})
    clock.now += 42
    out = rendered(p.table())
    assert "worldspec run — 42s" in out
    row = next(line for line in out.splitlines() if "gpt" in line)
    assert row.split() == ["gpt", "auto", "1", "2", "M1-2…", "3", "7", "900", "2", "0", "-", "running"]
    # a milestone's record: reached, its lost answers counted, its accuracy shown
    tally.add({"type": "milestone", "conv": conv, "record": {"t": 1, "accuracy": 37.5, "calls": 4, "lost": 1}})
    row = next(line for line in rendered(p.table()).splitlines() if "gpt" in line)
    assert row.split()[4:] == ["M2…", "3", "7", "900", "2", "1", "37.5%", "running"]
    tally.add({"type": "milestone", "conv": conv, "record": {"t": 2, "accuracy": 50.0, "calls": 7, "lost": 0}})
    row = next(line for line in rendered(p.table()).splitlines() if "gpt" in line)
    assert row.split()[4:] == ["M2", "3", "7", "900", "2", "1", "50.0%", "running"]
    assert "0/1 sessions finished (1 running, 0 waiting); 3 model requests, 1 answered (milestones: 0/2); " \
           "2 retries; 1 answers lost" in " ".join(rendered(p.table()).split())


def test_the_live_table_fits_80_columns_and_counts_only_sessions():
    """Issue 31 item 5: at 80 columns every cell was cut (`syst…`); events of a judge's conversation made rows."""
    convs = ["openai/gpt-4o-mini-2024-07-18|autonomous|3", "explorer|a4-open-book|3", "manual|without-tool|3"]
    tally = run_tally(*convs)
    p = Progress(stream=io.StringIO(), live=True, clock=FakeClock())
    p.attach(tally)
    for conv in convs:
        explored(tally, conv, 4, 48, 1_234_567)
        tally.add({"type": "milestone", "conv": conv, "record": {"t": 4, "accuracy": 87.5, "calls": 48}})
    tally.add({"type": "request", **who(convs[0]), "purpose": "task:t1", "t": 5})
    tally.add({"type": "retry", "conv": "judge|c0"})  # not a session
    console = Console(file=io.StringIO(), width=80, color_system=None)
    console.print(p.table())
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    head = next(line for line in lines if line.startswith("system"))
    assert head.split() == ["system", "cond", "#", "rnd", "M", "req", "calls", "tokens", "retry", "lost", "acc",
                            "status"]
    rows = [line.split() for line in lines if line.startswith(("openai", "explorer", "manual"))]
    assert [r[1:] for r in rows] == [["auto", "3", "4", "M5…", "2", "48", "1.2M", "0", "0", "87.5%", "running"],
                                     ["A4+O", "3", "4", "M4", "1", "48", "1.2M", "0", "0", "87.5%", "running"],
                                     ["w/o", "3", "4", "M4", "1", "48", "1.2M", "0", "0", "87.5%", "running"]]
    assert rows[0][0].startswith("openai/gpt-4o")  # only the long name is cut
    # a box run: its sessions are named by their box, and have no rounds or milestones to show
    boxes = Tally()
    jobs = ["openai/gpt-4o-mini|CRI-E consequence: adjacent ones|10@1", "oracle|GSI-E rps|10@1"]
    boxes.add({"type": "header", "config": {"protocol": "turn@shot", "jobs": jobs}})
    boxes.add({"type": "request", "conv": jobs[0], "system": "openai/gpt-4o-mini", "condition": "10@1",
               "trajectory": 1, "purpose": "turn", "t": None})
    p.attach(boxes, "box sessions")
    console = Console(file=io.StringIO(), width=80, color_system=None)
    console.print(p.table())
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert next(ln for ln in lines if ln.startswith("system")).split() == \
        ["system", "cond", "#", "req", "calls", "tokens", "retry", "lost", "acc", "status"]
    row = next(ln for ln in lines if ln.startswith("openai")).split()
    assert row[1:3] == ["10@1", "CRI-E"] and row[-1] == "running"
    buf = io.StringIO()
    q = Progress(stream=buf, live=False, clock=FakeClock(), every=0.0)
    t2 = run_tally("a|autonomous|1", "a|autonomous|2")
    q.attach(t2)
    t2.add({"type": "trajectory", "conv": "a|autonomous|1", "record": {"status": "complete", "lost": 0}})
    t2.add({"type": "retry", "conv": "judge|s1"})
    q.tick()
    assert "1/2 sessions finished (0 running, 1 waiting)" in buf.getvalue() and "1 retries" in buf.getvalue()


def test_the_live_clock_ticks_with_no_update():
    clock, buf = FakeClock(), io.StringIO()
    with Progress(stream=buf, live=True, clock=clock):
        clock.now += 1234
        for _ in range(100):  # rich's refresh thread redraws four times a second
            if "1234s" in buf.getvalue():
                break
            time.sleep(0.05)
    assert "worldspec run — 1234s" in buf.getvalue()


def test_off_a_terminal_a_status_line_comes_every_few_seconds_of_silence():
    clock, buf = FakeClock(), io.StringIO()
    conv = "a|autonomous|1"
    tally = run_tally(conv)
    p = Progress(stream=buf, live=False, clock=clock, every=5.0)
    p.attach(tally)
    explored(tally, conv, 1, 3, 40)
    tally.add({"type": "retry", "conv": conv})
    tally.add({"type": "request", **who(conv), "purpose": "rules", "t": 1})
    clock.now += 4.9
    p.tick()
    assert buf.getvalue() == ""
    clock.now += 0.2
    p.tick()
    assert buf.getvalue() == ("[    5.1s] 0/1 sessions finished (1 running, 0 waiting); 2 model requests, 1 answered "
                              "(milestones: 0/1); 1 retries; 0 answers lost; milestones waiting: M1\n")
    p.tick()  # nothing new to say within the next five seconds
    assert buf.getvalue().count("\n") == 1
    ev = {"type": "milestone", "conv": conv, "record": {"t": 1, "accuracy": 50.0, "calls": 3, "tokens": 40}}
    tally.add(ev)
    p.event(ev)  # a milestone line (with that milestone's own calls) resets the silence
    clock.now += 4
    p.tick()
    assert buf.getvalue().count("\n") == 2
    assert "a autonomous #1: M1 accuracy 50.0% at calls 3 tokens 40; milestone requests answered 0/1" in buf.getvalue()


def counts_of(line: str) -> dict:
    """The numbers of a tally.counts_line, by what they count."""
    m = re.search(r"(\d+)/(\d+) \w[\w ]*? finished \((\d+) running, (\d+) waiting\); (\d+) model requests, (\d+) "
                  r"answered(?: \(milestones: (\d+)/(\d+)\))?(?:, (\d+) from the response cache)?; (\d+) retries; "
                  r"(\d+) answers lost", line)
    assert m, line
    names = ("finished", "expected", "running", "waiting", "requests", "answered", "milestone_answered",
             "milestone_requests", "cached", "retries", "lost")
    return {k: int(v or 0) for k, v in zip(names, m.groups())}


def test_the_console_and_report_md_state_the_same_counts(tmp_path):
    """Issue 31 item 5: the console said calls 47, lost answers 422 where report.md said 48 and 211. Both now
    read the run log's tally; a run with retries, lost answers and a cached rerun shows the same numbers."""
    failed: set = set()

    def flaky(request):
        # the first explore call of each turn fails once; one answer of M1 fails every time (lost)
        key = (request.meta.get("step"), request.purpose, request.answer_index, request.meta.get("t"))
        if request.purpose == "explore" and key not in failed:
            failed.add(key)
            raise TransientError("503 from a flaky provider")
        if request.purpose.startswith("task:") and request.meta.get("t") == 1 and request.answer_index == 0:
            raise TransientError("503 again")
        return policy_reply(request)

    config = RunConfig(trajectories=2, retry=RetryPolicy(max_attempts=2, base_delay=0.0, max_delay=0.0))
    cache = tmp_path / "cache"
    for out in (tmp_path / "r", tmp_path / "again"):  # the second run's replies come from the cache
        buf = io.StringIO()
        with Progress(stream=buf, live=False, clock=FakeClock(), every=10**9) as p:
            asyncio.run(run_experiment([FakeWorld()], [ScriptedModel(flaky, name="flaky", cacheable=True)], config,
                                       out, progress=p, cache_dir=cache))
        said = [line for line in buf.getvalue().splitlines() if "counts: " in line]
        assert len(said) == 1
        report = (out / "report.md").read_text()
        status = next(line for line in report.splitlines() if line.startswith("Run status"))
        console, written = counts_of(said[0]), counts_of(status)
        assert console == written
        events = log_events(out)
        records = [e["record"] for e in events if e["type"] == "trajectory"]
        assert console["lost"] == sum(r["lost"] for r in records) > 0  # answers, not lost events (twice as many)
        assert console["lost"] < sum(e["type"] == "lost" for e in events)
        assert console["requests"] == sum(e["type"] == "request" for e in events)
        assert console["retries"] == sum(e["type"] == "retry" for e in events) > 0
        assert console["milestone_requests"] == sum(e["type"] == "request" and e["purpose"] != "explore"
                                                    for e in events) > 0
        assert console["finished"] == console["expected"] == 2
        # each session's last line says its last milestone's C and T, report.md's figures
        for r in records:
            last = r["milestones"][-1]
            assert f"flaky autonomous #{r['trajectory']}: done (complete) accuracy" in buf.getvalue()
            assert f"calls {last['calls']} tokens {last['tokens']} " in buf.getvalue()
        if out.name == "r":
            assert console["cached"] == 0
        else:
            assert console["cached"] == console["answered"] > 0


# ---------------------------------------------------------------- check: progress, and small frictions


def test_check_shows_the_step_certification_is_at_while_it_waits(tmp_path):
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120)
    with CertifyDisplay("alienlogic", live=True, console=console) as display:
        display.say("knockouts for T23")  # what a worker says (it appends to the display's file)
        for _ in range(100):
            if "knockouts for T23" in buf.getvalue():
                break
            time.sleep(0.05)
    assert "certifying alienlogic" in buf.getvalue() and "knockouts for T23" in buf.getvalue()
    assert not os.path.exists(display.path)  # the steps' file goes with the display


def test_check_on_a_terminal_shows_a_spinner_and_the_report_stays_clean(tmp_path):
    master, slave = pty.openpty()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true")
    p = subprocess.Popen(CMD + ["check", "demo"], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed with the command
            break
        if not chunk:
            break
        seen += chunk
    stdout = p.communicate(timeout=120)[0].decode()
    os.close(master)
    assert p.returncode == 0
    assert b"certifying demo" in seen
    assert stdout.startswith("Demo (kind program, language 2, seed 2026): 5 rules, 1 herring, 7 tasks, 5 examples\n")


def test_check_cuts_long_rule_titles_at_a_word(tmp_path):
    spec = (Path(__file__).parent.parent / "worlds" / "demo.world").read_text()
    long = "integer literals are offset by the hidden constant of the world in every context"
    (tmp_path / "long.world").write_text(spec.replace('rule R1 "integer literals are offset"', f'rule R1 "{long}"'))
    r = CliRunner().invoke(main, ["check", str(tmp_path / "long.world")])
    line = next(ln for ln in r.output.splitlines() if " R1 " in ln)
    shown = line.split("R1", 1)[1].split("tasks:")[0].strip()
    assert shown.endswith("…") and long.startswith(shown[:-1].rstrip())
    assert long.split()[len(shown[:-1].split()) - 1] == shown[:-1].split()[-1]  # the last word is whole


def test_check_marks_bad_every_rule_it_lists_as_a_problem(tmp_path):
    """Issue 31 item 7: a rule required by one task only was printed `ok` above the problem naming it."""
    spec = (Path(__file__).parent.parent / "worlds" / "demo.world").read_text()
    allow = '  allow     "A demo keeps one task per scope rule; a benchmark gives every rule two."\n'
    assert allow in spec
    # R3's declared exception taken away, in language 3 (language 2 only warns of a one-task rule)
    (tmp_path / "one.world").write_text(spec.replace(allow, "").replace("kind program", "language 3\nkind program", 1))
    r = CliRunner().invoke(main, ["check", str(tmp_path / "one.world")])
    assert r.exit_code == 1, r.output
    rows = {ln.split()[1]: ln.split()[0] for ln in r.output.splitlines() if re.match(r"  (ok |BAD) [RH]\d", ln)}
    problems = [ln[4:] for ln in r.output.splitlines() if ln.startswith("  - ")]
    assert rows == {"R1": "ok", "R2": "ok", "R3": "BAD", "R4": "ok", "R5": "ok", "H1": "ok"}
    assert len(problems) == 1 and problems[0].startswith("rule R3 (") and "required by one task only" in problems[0]
    # the verdict of each row is the problems that name it, whatever the kind wrote in its table
    report = {"world": "w", "kind": "k", "seed": 1, "rules": 2, "herrings": 1, "tasks": 1, "examples": 0,
              "rule_table": [{"id": "R1", "title": "a", "observable": True, "tasks": ["T1"]},
                             {"id": "R10", "title": "b", "observable": True, "tasks": []}],
              "herring_table": [{"id": "H1", "target": "op X", "unchanged": True}],
              "problems": ["rule R1: its equation 'x' does not match the rule", "herring H1 (op X) differs"]}
    lines = report_lines(report)
    assert [ln.split()[0] for ln in lines if re.match(r"  (ok |BAD) ", ln)] == ["BAD", "BAD", "BAD"]
    assert all_problems(report) == report["problems"] + ["rule R10 is required by no task"]
    assert "3 problem(s):" in lines


def test_a_mistyped_world_name_gets_a_guess():
    r = CliRunner().invoke(main, ["manual", "aliencod"])
    assert r.exit_code == 2 and "Did you mean 'aliencode'?" in r.output
    r = CliRunner().invoke(main, ["manual", "zzzzzz"])
    assert r.exit_code == 2 and "Did you mean" not in r.output


def test_pluralisation_of_counts():
    assert plural(1, "rule") == "1 rule" and plural(0, "herring") == "0 herrings" and plural(2, "task") == "2 tasks"


def test_piping_into_head_is_not_an_error():
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line, as `head` is after its last
    p = subprocess.run(CMD + ["manual", "aliencode", "--examples"], stdout=write, stderr=subprocess.PIPE, env=env,
                       timeout=60)
    os.close(write)
    assert p.returncode == 0 and p.stderr.decode() == ""


# ---------------------------------------------------------------- report


def test_report_of_a_run_writes_a_new_folder_and_never_over_the_run(fake_world_file, tmp_path):
    run = tmp_path / "runs" / "a"
    r = CliRunner().invoke(main, ["run", fake_world_file, "--out", str(run), "-n", "1", "--quiet"])
    assert r.exit_code == 0
    # the files written are listed, the PNG too (issue 31 item 9: it was not)
    pngs = sorted(p.name for p in run.glob("*.png"))
    assert pngs and f"wrote {run}/log.jsonl, report.md, summary.json, trajectories.jsonl, {', '.join(pngs)}" in r.output
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    r = CliRunner().invoke(main, ["report", str(run), "--no-plots"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("# worldspec run report")
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    (new,) = [p for p in (tmp_path / "runs").iterdir() if p.name.startswith("report-a-")]
    assert f"wrote {new}" in r.stderr or f"wrote {os.path.relpath(new)}" in r.stderr
    # the one summary.json shape: what `run` wrote
    assert (new / "summary.json").read_text() == before["summary.json"].decode()
    # --out naming the run's own folder: only when asked
    r = CliRunner().invoke(main, ["report", str(run), "--out", str(run), "--no-plots"])
    assert r.exit_code == 2 and "--overwrite" in r.output
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    (run / "report.md").write_text("stale")
    r = CliRunner().invoke(main, ["report", str(run), "--out", str(run), "--overwrite", "--no-plots"])
    assert r.exit_code == 0 and (run / "report.md").read_text().startswith("# worldspec run report")


# ---------------------------------------------------------------- play


def scripted(lines):
    """A reader that returns each line, raises each exception instance, then EOF."""
    it = iter(lines)

    def read(prompt):
        item = next(it, EOFError())
        if isinstance(item, BaseException):
            raise item
        return item
    return read


def test_ctrl_c_cancels_what_is_being_typed_not_the_session():
    out = []
    session = Session(load_world(DEMO), writer=out.append, reader=scripted([
        KeyboardInterrupt(),                                   # at the prompt
        "SWEEP v IN STRAND(1, 2):", KeyboardInterrupt(),       # inside a block
        ":answer T1", KeyboardInterrupt(),                     # inside an answer
        "EMIT(1)", ":budget"]))
    session.loop()
    text = "\n".join(out)
    assert text.count("^C") == 3
    assert "1 of 48 calls, 1 probe units used" in text  # only EMIT(1) was charged


def test_a_runtime_error_gets_a_caret_and_the_charge_is_said_once_after():
    out = []
    session = Session(load_world(DEMO), writer=out.append, reader=scripted([]))
    session.handle("EMIT(undefined_x)")
    assert not any("running as call" in x for x in out)  # issue 31 item 8: said before "not charged" too
    assert "  EMIT(undefined_x)\n       ^^^^^^^^^^^" in out
    assert out[-1] == "[1 units; 1/48 calls used]"
    assert caret("EMIT(1)\n  EMIT(PLUCK(x, 5))", "error: line 2: index out of range") == \
        "    EMIT(PLUCK(x, 5))\n    ^"
    assert caret("EMIT(1)", "error: something") == ""


def test_play_on_a_terminal_has_history_and_survives_ctrl_c(tmp_path):
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true",
               XDG_CACHE_HOME=str(tmp_path), TERM="xterm")
    pid, fd = pty.fork()
    if pid == 0:  # the child: worldspec play on the terminal
        # as a shell starts it: an ignored or blocked SIGINT is inherited through exec, and an earlier test
        # of the suite may have left one in this process (Python then never installs its Ctrl-C handler)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        os.execvpe(CMD[0], CMD + ["play", "demo"], env)
    seen = b""

    def wait_for(what: bytes, seconds: float = 120, since: int = 0) -> bool:
        nonlocal seen
        deadline = time.monotonic() + seconds
        while what not in seen[since:]:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready and seconds < 120:
                return False
            assert ready, f"no {what!r} on the terminal; it shows {seen[-500:]!r}"
            seen += os.read(fd, 4096)
        return True

    wait_for(b"[0/48]> ")
    os.write(fd, b"EMIT(1)\r")
    wait_for(b"[1/48]> ")
    mark = len(seen)
    os.write(fd, b"EMIT(")
    # readline echoes what it has read: only then is the terminal in its mode. A Ctrl-C sent before
    # (a loaded machine) reaches the terminal's cooked mode, which discards the typed text with it.
    wait_for(b"EMIT(", since=mark)
    os.write(fd, b"\x03")  # Ctrl-C while typing: the line is dropped
    for _ in range(6):
        if wait_for(b"the line is dropped", 10):
            break
        # CPython's readline raises a SIGINT only when the signal interrupts its wait on the terminal: one
        # that lands while it is busy (a loaded machine) waits for the next signal, so a user presses Ctrl-C
        # again, as the test does (Enter would submit the line instead)
        os.write(fd, b"\x03")
    else:
        wait_for(b"the line is dropped")  # fails, showing the terminal
    wait_for(b"[1/48]> ", since=seen.index(b"the line is dropped"))  # the new prompt
    os.write(fd, b"\x1b[A\r")  # up arrow: the last program again, from the history
    wait_for(b"[2/48]> ")
    os.write(fd, b":quit\r")
    try:
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen += chunk
    except OSError:
        pass
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert seen.count(b" calls used]") == 2 and b"[1 units; 2/48 calls used]" in seen
    assert "EMIT(1)" in (tmp_path / "worldspec" / "play_history").read_text()


# ---------------------------------------------------------------- the curve plot


CURVES = [{"system": s, "condition": "autonomous", "curve": [{"t": t, "accuracy": a + 10 * t} for t in range(4)]}
          for s, a in (("gpt", 10.0), ("claude", 20.0), ("oracle", 60.0))]


def figure_texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text)]


def test_the_curve_plot_of_an_invalid_run_says_invalid_and_its_legend_is_readable():
    fig = curves_figure("Demo", CURVES, valid=False)
    texts = figure_texts(fig)
    assert "INVALID" in texts and any("INVALID run" in t for t in texts)
    legend = fig.axes[0].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [f"{s} / autonomous" for s in ("gpt", "claude", "oracle")]
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 9
    plt.close(fig)
    fig = curves_figure("Demo", CURVES, valid=True)
    assert not any("INVALID" in t for t in figure_texts(fig))
    plt.close(fig)


# ---------------------------------------------------------------- the equation reader (a Lark grammar)


ATOMS = st.from_regex(r"[A-Za-z_+\-*/<>=%][A-Za-z0-9_.]{0,4}", fullmatch=True)
SEXPRS = st.recursive(ATOMS | st.from_regex(r'"[a-z ]{0,5}"', fullmatch=True).map(lambda s: ("str", s[1:-1])),
                      lambda inner: st.lists(inner, max_size=4), max_leaves=20)


def written(node, gap: str = " ") -> str:
    if isinstance(node, tuple):
        return f'"{node[1]}"'
    if isinstance(node, list):
        return "(" + gap.join(written(n, gap) for n in node) + ")"
    return node


@given(SEXPRS, st.sampled_from([" ", "  ", "\n", "\t "]))
def test_the_equation_reader_reads_back_what_is_written(node, gap):
    assert read_sexpr(gap + written(node, gap) + gap) == node


def test_the_equation_reader_locates_what_it_cannot_read():
    for text, said, pos in [("(+ a b", "unbalanced '('", 0), ("(+ a (b c)))", "unbalanced ')'", 11),
                            ("(f a) g", "one expression", 6), ("(f \"open)", "cannot read", 3),
                            ("(" * 52 + ")" * 52, "nests too deeply", 51), ("", "one expression", 0)]:
        with pytest.raises(EquationError, match=re.escape(said)) as e:
            read_sexpr(text)
        assert e.value.pos == pos, text
    group = read_sexpr("(get xs (- i 1))")
    assert (group.pos, group[2].pos, group[2][1].pos) == (0, 8, 11)


@pytest.mark.parametrize("command", ["list", "check", "manual", "probe", "play", "run", "report", "view", "author",
                                     "import"])
def test_every_command_help_shows_examples_of_itself(command):
    text = CliRunner().invoke(main, [command, "--help"], terminal_width=100).output
    assert re.search(r"^\s+Examples?:$", text, re.M), text
    assert f"worldspec {command} " in text.split("Example", 1)[1]


def test_the_top_level_help_starts_with_every_kind_of_task_and_run_help_names_the_explorer():
    text = CliRunner().invoke(main, ["--help"]).output
    for line in ("worldspec view runs/demo", "worldspec play demo", 'worldspec author "BRIEF" --model M'):
        assert line in text
    run = CliRunner().invoke(main, ["run", "--help"], terminal_width=200).output
    assert re.search(r"--agent A\s.*oracle, manual, explorer", run)
    assert "worldspec run demo --agent explorer" in run


# ---------------------------------------------------------------- stopping a run: SIGINT, SIGTERM


def answer_everything(body: dict) -> dict:
    """A model that explores nothing and answers every question at once."""
    return {"content": "```\n0\n```", "tool_calls": [], "usage": (10, 5)}


def start_run(fake, out: Path, *extra) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true", OPENAI_API_KEY="sk-fake")
    return subprocess.Popen(CMD + ["run", "demo", "--model", "openai/fake", "--api-base", fake.base_url, "--no-cache",
                                   "-n", "1", "--out", str(out), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def stopped_mid_run(fake, out: Path, sig: int) -> tuple[int, str]:
    """Start a run, send SIG once a model reply is in its log; (exit status, everything it printed)."""
    proc = start_run(fake, out)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        log = out / "log.jsonl"
        if log.exists() and '"type":"reply"' in log.read_text(errors="replace"):
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    return proc.returncode, stdout + stderr


@pytest.mark.parametrize("sig, code, said", [(2, 130, "interrupted (SIGINT)"), (15, 143, "terminated (SIGTERM)")])
def test_a_signal_stops_a_run_cleanly_and_resume_continues_it(fake_openai, tmp_path, sig, code, said):
    """Issue 31 item 6: Ctrl-C printed an asyncio warning; SIGTERM killed the run (semaphores leaked, no hint)."""
    fake_openai.responder = answer_everything
    fake_openai.latency = 0.3  # replies come slowly enough for the signal to land mid-run
    try:
        out = tmp_path / "r"
        status, printed = stopped_mid_run(fake_openai, out, sig)
    finally:
        fake_openai.latency = 0.0
    assert status == code, printed
    assert clean(printed) and "leaked" not in printed and "Warning" not in printed, printed
    hint = [line for line in printed.splitlines() if said in line]
    assert hint == [f"{said}; continue with: worldspec run demo --out {out} --resume (the log keeps the other "
                    "options)"], printed
    events = log_events(out)
    assert [e["status"] for e in events if e["type"] == "session"] == ["started", "interrupted"]
    if sig == 15:  # the hint's command continues the run (its options come from the log)
        env = {"OPENAI_API_KEY": "sk-fake"}
        code, stdout, stderr = worldspec("run", "demo", "--out", str(out), "--resume", "--quiet", env=env)
        assert code == 0, stdout + stderr
        assert clean(stdout + stderr)
        assert [e["status"] for e in log_events(out) if e["type"] == "session"] == \
            ["started", "interrupted", "started", "success"]


def test_the_curve_legend_sits_under_the_axes_which_keep_the_width(tmp_path):
    """Issue 31 item 9: the legend beside the axes took half the PNG's width."""
    long = [{**c, "system": "explorer (built-in, no model) and a long name"} for c in CURVES[:1]] + CURVES[1:]
    fig = curves_figure("Demo", long, valid=True)
    fig.savefig(tmp_path / "c.png", bbox_inches="tight")
    renderer = fig.canvas.get_renderer()
    axes, legend = fig.axes[0].get_window_extent(renderer), fig.axes[0].get_legend().get_window_extent(renderer)
    assert legend.y1 <= axes.y0  # below the axes, never beside them
    assert axes.width >= 0.8 * fig.get_window_extent(renderer).width
    plt.close(fig)


def test_identical_trajectories_of_a_deterministic_system_are_said_so(tmp_path):
    """Issue 31 item 9: a deterministic explorer run three times gave three identical trajectories, unsaid."""
    from conftest import run_in_process
    out = tmp_path / "o"
    r = run_in_process([FakeWorld()], [], out, agents=("oracle",), trajectories=3)
    (group,) = r.summary["results"]
    assert group["identical"] and group["n"] == 3
    note = "oracle / autonomous: its 3 trajectories are identical"
    assert note in (out / "report.md").read_text()
    # a model whose trajectories differ is not said to repeat itself
    def varied(request):
        reply = policy_reply(request)
        if request.purpose.startswith("task:") and request.meta.get("trajectory") == 2:
            return attrs.evolve(reply, content="no answer")
        return reply
    r = run_in_process([FakeWorld()], [ScriptedModel(varied, name="m")], tmp_path / "m", trajectories=2)
    assert not r.summary["results"][0]["identical"]
    assert "identical" not in (tmp_path / "m" / "report.md").read_text()
