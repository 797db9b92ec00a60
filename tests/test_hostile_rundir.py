"""A run folder attacked from outside (issues 29, 30): links, FIFOs and devices named log.jsonl, a log
from another world or cut inside its header, a deleted lock, malformed and deeply nested events, and
a killed Oracle run, against `run`, `run --resume`, `report` and `view`.

Every command runs in its own process with a timeout and a memory watch: it ends in time, under
500 MB, with exit status 0, 1, 2 or 4 (never 3, an internal error) and, when it refuses, a readable
paragraph, never a traceback. Nothing a refused command was pointed at is changed.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from worldspec.runner.log import LogError, LogReader, encode_line, read_events
from worldspec.runner.logcodec import Encoder
from worldspec.runner.models import ScriptedModel, TransientError

from conftest import FULL_SUITE
from runner_fakes import FakeWorld, policy_reply

TESTS = os.path.dirname(os.path.abspath(__file__))
WORLDS = os.path.join(os.path.dirname(TESTS), "worlds")
# a command's own peak memory, said on stderr when it ends (however it ends: sys.exit runs atexit)
WATCHED = ("import atexit, sys\n"
           "peak = lambda: next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
           "atexit.register(lambda: sys.stderr.write(peak()))\n"
           "from worldspec.cli import main\nmain()\n")
MB = 1 << 20


def worldspec(*args, timeout: float = 600) -> tuple[int, str]:
    """(exit status, stderr + stdout) of `worldspec ARGS` in a fresh process, checked for time and memory."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    r = subprocess.run([sys.executable, "-c", WATCHED, *map(str, args)], capture_output=True, env=env,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    err = r.stderr.decode("utf-8", "replace")
    peak = re.search(r"VmHWM:\s+(\d+) kB", err)
    assert peak and int(peak.group(1)) < 500 * 1024, err[-2000:]
    assert r.returncode in (0, 1, 2, 4), err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    return r.returncode, err + r.stdout.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> Path:
    """A finished run of the demo world (one trajectory) by the built-in agents."""
    out = tmp_path_factory.mktemp("hostile") / "demo"
    # the oracle alone: these tests read and cut the run's log, whatever agents wrote it
    code, said = worldspec("run", "demo", "--agent", "oracle", "--out", out, "-n", "1", "--quiet")
    assert code == 0, said
    return out


def copy_of(run: Path, to: Path) -> Path:
    shutil.copytree(run, to)
    (to / "summary.json").unlink()
    return to


# ---------------------------------------------------------------- issue 30.1: nothing changed before it is verified


def test_resume_through_a_link_changes_nothing_and_refuses(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"first line\nsecond line\nlast line, no newline")
    out = tmp_path / "run"
    out.mkdir()
    (out / "log.jsonl").symlink_to(victim)
    code, said = worldspec("run", "demo", "--out", out, "--resume", "-n", "1", "--quiet")
    assert code == 2 and "symbolic link" in said, said
    assert victim.read_bytes() == b"first line\nsecond line\nlast line, no newline"
    assert (out / "log.jsonl").is_symlink()


def test_a_log_of_another_world_keeps_its_cut_tail_when_resume_is_refused(tmp_path, demo_run):
    out = copy_of(demo_run, tmp_path / "run")
    with open(out / "log.jsonl", "ab") as f:
        f.write(b'{"type":"message","conv":"cut sh')
    before = (out / "log.jsonl").read_bytes()
    code, said = worldspec("run", "aliencode", "--out", out, "--resume", "-n", "1", "--quiet")
    assert code == 2 and "different configuration" in said, said
    assert (out / "log.jsonl").read_bytes() == before


def test_a_log_cut_inside_its_header_is_refused_and_kept(tmp_path, demo_run):
    out = tmp_path / "run"
    out.mkdir()
    head = (demo_run / "log.jsonl").read_bytes()[:200]
    (out / "log.jsonl").write_bytes(head)
    code, said = worldspec("run", "demo", "--out", out, "--resume", "-n", "1", "--quiet")
    assert code == 2 and "no header line" in said, said
    assert (out / "log.jsonl").read_bytes() == head


def test_a_cut_tail_is_repaired_by_a_new_file_renamed_over_the_log(tmp_path, demo_run):
    out = copy_of(demo_run, tmp_path / "run")
    lines = (out / "log.jsonl").read_bytes().splitlines(keepends=True)
    kept = b"".join(lines[: len(lines) // 2])
    (out / "log.jsonl").write_bytes(kept + lines[len(lines) // 2][:30])
    inode = (out / "log.jsonl").stat().st_ino
    code, said = worldspec("run", "demo", "--out", out, "--resume", "-n", "1", "--quiet")
    assert code == 0, said
    log = (out / "log.jsonl").read_bytes()
    assert log.startswith(kept) and (out / "log.jsonl").stat().st_ino != inode
    assert json.loads((out / "summary.json").read_text())["validity"]["valid"]
    assert all(e["type"] for e in read_events(out / "log.jsonl"))  # every line reads, the cut one is gone


# ---------------------------------------------------------------- issue 30.2: a FIFO or a device named log.jsonl


def special(tmp_path, what: str) -> Path:
    out = tmp_path / what
    out.mkdir()
    if what == "fifo":
        os.mkfifo(out / "log.jsonl")
    elif what == "zero-link":
        (out / "log.jsonl").symlink_to("/dev/zero")
    elif what == "zero-device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        st = os.stat("/dev/zero")
        os.mknod(out / "log.jsonl", 0o666 | (st.st_mode & 0o170000), st.st_rdev)
    else:
        (out / "log.jsonl").mkdir()
    return out


SPECIAL = ["fifo", "zero-link", "zero-device", "folder"]
COMMANDS = ["run", "resume", "report", "view"]
# every kind of file and every command, each pair under WORLDSPEC_FULL_SUITE=1 (16 processes), else four
# pairs that name each kind and each command once (every command reads its log through one check)
SPECIAL_CASES = [(w, c) for w in SPECIAL for c in COMMANDS] if FULL_SUITE else list(zip(SPECIAL, COMMANDS))


@pytest.mark.parametrize("what, command", SPECIAL_CASES)
def test_a_log_that_is_no_regular_file_is_refused_by_every_command(tmp_path, what, command):
    out = special(tmp_path, what)
    args = {"run": ["run", "demo", "--out", out, "-n", "1", "--quiet"],
            "resume": ["run", "demo", "--out", out, "-n", "1", "--quiet", "--resume"],
            "report": ["report", out, "--out", tmp_path / "table"],
            "view": ["view", out]}[command]
    code, said = worldspec(*args, timeout=300)
    assert code == 2, said
    assert "must be a regular file" in said, said


# ---------------------------------------------------------------- issue 30.8: a lock deleted under a run


def test_a_deleted_lock_stops_the_writer_and_the_next_writer_finishes_alone(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": TESTS + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, os.path.join(TESTS, "runner_fakes.py"), str(out), "--latency", "0.05"]
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120
        while not (out / "log.jsonl").exists() or (out / "log.jsonl").read_bytes().count(b'"type":"reply"') < 20:
            assert first.poll() is None, first.stderr.read().decode()[-2000:]
            assert time.time() < deadline, "the run never got going"
            time.sleep(0.02)
        (out / ".lock").unlink()
        second = subprocess.run(cmd[:3] + ["--resume"], env=env, capture_output=True, timeout=240)
        first.wait(60)
    finally:
        if first.poll() is None:
            first.kill()
    err = first.stderr.read().decode()
    assert first.returncode != 0 and "was removed or replaced" in err, err[-2000:]
    assert second.returncode == 0, second.stderr.decode()[-2000:]
    events = list(read_events(out / "log.jsonl"))
    ids = [e["id"] for e in events if e.get("id") is not None]
    assert len(ids) == len(set(ids))
    started = [e["session"] for e in events if e["type"] == "session" and e["status"] == "started"]
    assert started == [1, 2]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["validity"]["valid"]


# ---------------------------------------------------------------- issue 30.9: events of another shape


RESUME = ["run", "demo", "--resume", "-n", "1", "--quiet", "--out"]


@pytest.mark.parametrize("line, field, commands", [
    ({"type": "session", "id": "session:9:started", "session": "9", "status": "started"}, "session",
     [RESUME, ["report"], ["view"]]),
    ({"type": "trajectory", "id": "trajectory:x", "conv": "x", "record": ["not", "an", "object"]}, "record",
     [RESUME, ["report"], ["view"]]),
    ({"type": "tool", "id": ["a", "list"], "conv": "x"}, "id", [RESUME, ["report"], ["view"]]),
    # a reply a resumed run would replay (the viewer shows an odd reply as it is)
    ({"type": "reply", "id": "reply:k", "key": "k", "reply": {"usage": [1, 2]}}, "reply.usage", [RESUME]),
    ({"type": "reply", "id": "reply:k", "key": "k", "reply": "text"}, "reply", [RESUME]),
])
def test_an_event_of_another_shape_is_refused_naming_its_line_and_field(tmp_path, demo_run, line, field, commands):
    out = copy_of(demo_run, tmp_path / "run")
    n = len((out / "log.jsonl").read_bytes().splitlines())
    with open(out / "log.jsonl", "a") as f:
        f.write(json.dumps(line) + "\n")
    for args in (command + [out] for command in commands):
        code, said = worldspec(*args)
        assert code == 2, said
        assert f"line {n + 1}" in said and repr(field) in said, said


def test_a_deeply_nested_line_is_skipped_not_a_crash(tmp_path, demo_run):
    out = copy_of(demo_run, tmp_path / "run")
    with open(out / "log.jsonl", "a") as f:
        f.write('{"a":' * 100_000 + "1" + "}" * 100_000 + "\n" + "[" * 200_000 + "\n")
    for args in (["report", out, "--out", tmp_path / "table"], ["view", out],
                 ["run", "demo", "--out", out, "-n", "1", "--quiet", "--resume"]):
        code, said = worldspec(*args)
        assert code == 0, said


# ---------------------------------------------------------------- issue 30.12: a resumed run writes each verdict once

RUN = {"conditions": ("autonomous",), "trajectories": 1}


def test_a_lost_answer_is_logged_once_however_often_the_run_is_resumed(tmp_path, run_world, read_log):
    def outage(req):
        if req.purpose == "task:T2" and req.answer_index == 1:
            raise TransientError("HTTP 503: unavailable")
        return policy_reply(req)

    world = FakeWorld(n_tasks=4)
    for resume in (False, True, True):
        res = run_world(world, [ScriptedModel(outage, name="explorer")], tmp_path, **RUN, resume=resume)
        assert not res.summary["validity"]["valid"]
    lost = [(e["t"], e["task"], e["answer_index"]) for e in read_log(tmp_path, "lost") if "task" in e]
    assert lost and len(lost) == len(set(lost)), lost


# ---------------------------------------------------------------- issue 29: the log grows with what happened

BOXES = ["game/gsi-e-rps7-cycle.world", "game/gsi-h-comparing-cards-smart.world", "puzzle/ipi-e-wordle.world",
         "code/cii-e-bubble-sort.world", "code/_debugger.world"]  # (an include of the code boxes)


@pytest.fixture(scope="module")
def boxes(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("boxes") / "oracle"
    folder.mkdir()
    for b in BOXES:
        shutil.copy(os.path.join(WORLDS, "oracle", b), folder / os.path.basename(b))
    return folder


@pytest.fixture(scope="module")
def oracle_run(boxes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("oracle") / "whole"
    code, said = worldspec("run", boxes, "--preset", "20@2", "--out", out, "--quiet", timeout=600)
    assert code == 0, said
    return out


def test_an_oracle_log_is_compact_and_reads_back_whole(oracle_run):
    events = list(read_events(oracle_run / "log.jsonl"))
    requests = [e for e in events if e["type"] == "request"]
    full = sum(len(json.dumps(e["messages"], ensure_ascii=False)) for e in requests)
    size = (oracle_run / "log.jsonl").stat().st_size
    assert size * 5 < full  # the conversations alone, spelled out per request, are many times the log
    # every request reads back with its whole conversation: the box's messages, in order
    for conv in {e["conv"] for e in requests}:
        said = [e["message"] for e in events if e["type"] == "message" and e["conv"] == conv]
        last = [e for e in requests if e["conv"] == conv and e["purpose"] == "explore"][-1]
        assert last["messages"] == said[: len(last["messages"])]
    replies = {e["key"]: e for e in events if e["type"] == "reply"}
    assert all(replies[e["key"]]["conv"] == e["conv"] and replies[e["key"]]["purpose"] == e["purpose"]
               for e in requests)


def test_an_oracle_run_killed_and_resumed_equals_an_uninterrupted_one(boxes, oracle_run, tmp_path):
    out = tmp_path / "killed"
    whole = (oracle_run / "log.jsonl").read_bytes().count(b"\n")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    args = ["run", str(boxes), "--preset", "20@2", "--out", str(out), "--quiet"]
    proc = subprocess.Popen([sys.executable, "-c", WATCHED, *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while not (out / "log.jsonl").exists() or (out / "log.jsonl").read_bytes().count(b"\n") < whole // 2:
            assert proc.poll() is None and time.time() < deadline, "the run ended before it was killed"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not (out / "summary.json").exists()
    code, said = worldspec(*args, "--resume", timeout=600)
    assert code == 0, said
    summary, reference = (json.loads((d / "summary.json").read_text()) for d in (out, oracle_run))
    assert summary["validity"]["sessions"] == 2 and summary["validity"]["valid"]
    assert {**summary, "validity": None} == {**reference, "validity": None}
    assert (out / "trajectories.jsonl").read_text() == (oracle_run / "trajectories.jsonl").read_text()
    events = list(read_events(out / "log.jsonl"))
    ids = [e["id"] for e in events if e.get("id") is not None]
    assert len(ids) == len(set(ids))
    code, said = worldspec("view", out)
    assert code == 0, said
    assert (out / "log.jsonl").stat().st_size < 1.5 * (oracle_run / "log.jsonl").stat().st_size


def test_a_pointer_to_nothing_is_a_readable_refusal(tmp_path, oracle_run):
    out = tmp_path / "run"
    out.mkdir()
    lines = (oracle_run / "log.jsonl").read_bytes().splitlines(keepends=True)
    (out / "log.jsonl").write_bytes(lines[0] + b'{"type":"message","conv":"c","index":0,"$id":1,'
                                    b'"message":{"role":"user","content":{"$r":"AAAAAAAAAAAAAAAA"}}}\n')
    with pytest.raises(LogError, match=r"line 2 .*pointer to a text no earlier line holds"):
        list(LogReader(out / "log.jsonl").lines())
    code, said = worldspec("report", out)
    assert code == 2 and "line 2" in said, said


def test_the_compact_encoding_gives_back_every_event_as_written():
    long = "feedback " * 20
    events = [
        {"type": "box_turn", "id": "turn:c:1", "conv": "c", "input": "x", "feedback": long},
        {"type": "message", "id": "msg:c:0", "conv": "c", "index": 0,
         "message": {"role": "user", "content": f"Input: x\nOutput:\n{long}\n\nTurn 2 of 20: {long[::-1]}"}},
        {"type": "request", "id": "req:k1", "key": "k1", "conv": "c", "purpose": "explore", "t": 1,
         "messages": [{"role": "user", "content": long}]},
        {"type": "reply", "id": "reply:k1", "key": "k1", "conv": "c", "purpose": "explore", "t": 1,
         "reply": {"content": long + "\ud800", "tool_calls": []}},
        {"type": "request", "id": "req:k2", "key": "k2", "conv": "c", "purpose": "explore", "t": 2,
         "messages": [{"role": "user", "content": long}, {"role": "assistant", "content": long + "\ud800"}]},
        {"type": "retry", "key": "k2", "conv": "c", "purpose": "explore", "t": 2, "attempt": 1},
        {"type": "reply", "id": "reply:k2", "key": "k2", "conv": "other", "purpose": "explore", "t": 2,
         "reply": {"content": "short"}},  # fields unlike its request's: written as they are
        {"type": "odd", "$r": "not a pointer", "$$x": {"$s": ["a"], "$r": 1}, "id": "req:zz",
         "nested": [{"$r": "AAAA"}, long, (long, 1)]},
        {"type": "message", "id": "msg:c:7", "conv": "c", "index": 8, "message": {"role": "user", "content": long}},
    ]
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"codec-{os.getpid()}.jsonl"
    enc = Encoder()
    header = {"type": "header", "id": "header", "log_version": 2, "config": {}, "world": {"name": long}}
    lines = []
    for e in [header] + events:
        lines.append(encode_line(enc.encode(e)))
        enc.wrote(e)
    try:
        path.write_bytes(b"".join(lines))
        back = list(read_events(path))
    finally:
        path.unlink()
    assert back == [json.loads(encode_line(e)) for e in [header] + events]
    assert sum(map(len, lines)) < sum(len(encode_line(e)) for e in [header] + events) * 0.7
