"""Trust: the run log, resume (in process and after SIGKILL), faults, the lock, the cache."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from collections import Counter

import attrs
import filelock
import pytest

from conftest import log_events
from runner_fakes import FakeWorld, policy_reply
from worldspec.runner.cache import ResponseCache, request_key
from worldspec.runner.config import RunConfig
from worldspec.runner.experiment import run_experiment
from worldspec.runner.log import FinishedRun, RunDirError, RunLog
from worldspec.runner.models import FatalError, LitellmModel, Request, ScriptedModel, TransientError

TESTS = os.path.dirname(os.path.abspath(__file__))
RUN = {"conditions": ("autonomous", "without-tool"), "trajectories": 2}  # every run of this module


def lock_is_free(directory) -> bool:
    """Whether another writer could take the run directory's lock now."""
    lock = filelock.FileLock(os.path.join(directory, ".lock"), timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        return False
    lock.release()
    return True


def trajectories(out):
    return open(os.path.join(out, "trajectories.jsonl")).read()


def assert_no_duplicates(out, read_log):
    ids = [e["id"] for e in read_log(out) if e.get("id")]
    dup = [k for k, v in Counter(ids).items() if v > 1]
    assert not dup, dup[:5]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, run_world):
    """An uninterrupted, fault-free run on the world the resume tests use."""
    out = tmp_path_factory.mktemp("ref")
    res = run_world(FakeWorld(n_tasks=6), [ScriptedModel(policy_reply, name="explorer")], out, **RUN)
    assert res.summary["validity"]["valid"]
    return out


def test_log_records_every_step(reference, read_log):
    evs = read_log(reference)
    assert evs[0]["type"] == "header" and evs[0]["config"]["systems"] == ["explorer"]
    types = Counter(e["type"] for e in evs)
    for t in ("session", "message", "request", "reply", "tool", "verdict", "rule_report",
              "milestone", "trajectory", "round_end"):
        assert types[t] > 0, t
    assert types["request"] == types["reply"]
    assert all("ts" in e for e in evs[1:])
    assert evs[-1]["type"] == "session" and evs[-1]["status"] == "success"
    # a milestone request can be rebuilt from the log: conversation prefix + the fork's message
    req = next(e for e in evs if e.get("type") == "request" and e["purpose"] == "task:T1"
               and e["t"] == 2 and e["condition"] == "autonomous")
    conv = [e["message"] for e in evs if e.get("type") == "message" and e["conv"] == req["conv"]]
    rebuilt = conv[: req["prefix"]] + req["messages"]
    assert rebuilt[-1]["content"].startswith("Milestone M2")
    assert sum(1 for m in rebuilt if m["role"] == "tool") == 4


def test_transient_faults_are_retried_recorded_and_change_nothing(tmp_path, reference, run_world, read_log):
    calls = Counter()

    def flaky(req):
        key = (req.sample, req.purpose, req.answer_index, req.meta.get("step"), len(req.messages))
        calls[key] += 1
        if zlib.crc32(repr(key).encode()) % 5 == 0 and calls[key] <= 2:
            raise TransientError("HTTP 429: slow down")
        return policy_reply(req)

    res = run_world(FakeWorld(n_tasks=6), [ScriptedModel(flaky, name="explorer")], tmp_path, **RUN)
    assert res.stats["retries"] > 0
    assert res.summary["validity"]["valid"]
    assert res.summary["validity"]["retries"] == res.stats["retries"]
    retries = [e for e in read_log(tmp_path) if e["type"] == "retry"]
    assert len(retries) == res.stats["retries"] and "429" in retries[0]["error"]
    assert trajectories(tmp_path) == trajectories(reference)


def test_exhausted_retries_lose_the_answer_not_score_it_and_resume_repairs(tmp_path, reference, run_world, read_log):
    down = {"on": True}

    def outage(req):
        if down["on"] and req.purpose == "task:T2" and req.answer_index == 1:
            raise TransientError("HTTP 503: unavailable")
        return policy_reply(req)

    world = FakeWorld(n_tasks=6)
    res = run_world(world, [ScriptedModel(outage, name="explorer")], tmp_path, **RUN)
    v = res.summary["validity"]
    assert not v["valid"] and v["complete"] and not v["clean"]
    assert v["lost_answers"] > 0
    t = res.trajectories[0]
    ms = t["milestones"][-1]
    assert ms["lost"] == 1 and ms["tasks"]["T2"][1] is None
    # the lost answer is not a wrong answer: T2's other answers decide its score
    ref = [json.loads(x) for x in trajectories(reference).splitlines()]
    assert ms["accuracy"] == ref[0]["milestones"][-1]["accuracy"]

    down["on"] = False
    res2 = run_world(world, [ScriptedModel(outage, name="explorer")], tmp_path, **RUN, resume=True)
    assert res2.summary["validity"]["valid"]
    assert res2.stats["calls_live"] == v["lost_answers"]  # only the lost answers were asked again
    assert trajectories(tmp_path) == trajectories(reference)
    assert_no_duplicates(tmp_path, read_log)


def test_fatal_error_stops_the_run_with_a_readable_message(tmp_path, run_world, read_log):
    def bad(req):
        raise FatalError("authentication failed (is the API key set?)")

    with pytest.raises(FatalError, match="API key"):
        run_world(FakeWorld(), [ScriptedModel(bad, name="x")], tmp_path, **RUN)
    last = read_log(tmp_path)[-1]
    assert last["type"] == "session" and last["status"] == "error" and "API key" in last["error"]
    assert lock_is_free(tmp_path)


def test_resume_after_an_interrupted_run_equals_an_uninterrupted_one(tmp_path, reference, run_world, read_log):
    count = {"n": 0}
    world = FakeWorld(n_tasks=6)

    async def interrupted():
        stop = asyncio.Event()

        def dies(req):
            count["n"] += 1
            if count["n"] == 40:
                stop.set()
            return policy_reply(req)

        task = asyncio.ensure_future(run_experiment(
            [world], [ScriptedModel(dies, name="explorer", latency=0.001)], RunConfig(**RUN), tmp_path))
        await stop.wait()
        task.cancel()  # what Ctrl-C does to asyncio.run's main task
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert not (tmp_path / "trajectories.jsonl").exists()
    assert read_log(tmp_path)[-1]["status"] == "interrupted"
    res = run_world(world, [ScriptedModel(policy_reply, name="explorer")], tmp_path, **RUN, resume=True)
    assert res.stats["calls_from_log"] >= 30
    assert res.summary["validity"]["valid"] and res.summary["validity"]["sessions"] == 2
    assert trajectories(tmp_path) == trajectories(reference)
    assert_no_duplicates(tmp_path, read_log)


def test_kill_and_resume_in_a_subprocess(tmp_path, reference, read_log):
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": TESTS + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, os.path.join(TESTS, "runner_fakes.py"), str(out), "--latency", "0.02"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    log = out / "log.jsonl"
    deadline = time.time() + 60
    try:
        while time.time() < deadline:
            if log.exists() and sum(1 for x in open(log) if '"type":"reply"' in x) >= 60:
                break
            if proc.poll() is not None:
                pytest.fail(f"the run ended before it was killed: {proc.stderr.read().decode()}")
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = [e for e in read_log(out) if e["type"] == "reply"]
    assert lock_is_free(out)  # an OS lock dies with its process: nothing stale to break
    assert not (out / "trajectories.jsonl").exists()
    done = subprocess.run(cmd[:3] + ["--resume"], env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert trajectories(out) == trajectories(reference)
    assert_no_duplicates(out, read_log)
    replies = [e for e in read_log(out) if e["type"] == "reply"]
    ref_replies = [e for e in read_log(reference) if e["type"] == "reply"]
    assert len(replies) == len(ref_replies)  # nothing asked twice, nothing missing
    assert len(before) >= 60
    summary = json.load(open(out / "summary.json"))
    assert summary["validity"]["valid"] and summary["validity"]["sessions"] == 2


def test_a_cut_final_line_is_repaired_on_resume(tmp_path, reference, run_world, read_log):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    evs = open(out / "log.jsonl").read().splitlines(keepends=True)
    # drop the end of the run and cut the last kept line in half
    keep = evs[: len(evs) // 2]
    keep[-1] = keep[-1][: len(keep[-1]) // 2]
    (out / "log.jsonl").write_text("".join(keep))
    (out / "trajectories.jsonl").unlink()
    res = run_world(FakeWorld(n_tasks=6), [ScriptedModel(policy_reply, name="explorer")], out, **RUN,
                    resume=True)
    assert res.summary["validity"]["valid"]
    assert trajectories(out) == trajectories(reference)
    assert_no_duplicates(out, read_log)


def test_resume_with_another_configuration_is_refused(tmp_path, reference, run_world):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    with pytest.raises(RunDirError, match="trajectories"):
        run_world(FakeWorld(n_tasks=6), [ScriptedModel(policy_reply, name="explorer")], out,
                  **{**RUN, "trajectories": 3}, resume=True)
    with pytest.raises(RunDirError, match="fingerprint"):
        run_world(FakeWorld(n_tasks=5), [ScriptedModel(policy_reply, name="explorer")], out, **RUN, resume=True)
    # without --resume, the same configuration over a finished run is that run, finished
    with pytest.raises(FinishedRun, match="--overwrite"):
        run_world(FakeWorld(n_tasks=6), [ScriptedModel(policy_reply, name="explorer")], out, **RUN)


def test_one_writer_per_directory(tmp_path):
    a = RunLog(tmp_path, config={}, world={})
    with pytest.raises(RunDirError, match="another run"):
        RunLog(tmp_path, config={}, world={}, resume=True)
    a.close("success")
    assert lock_is_free(tmp_path)
    # what the old pid lock left behind (a pid, or nothing yet) is no lock at all
    for stale in ("999999999 " + os.uname().nodename + "\n", ""):
        (tmp_path / ".lock").write_text(stale)
        b = RunLog(tmp_path, config={}, world={}, resume=True)
        b.close("success")
    assert lock_is_free(tmp_path)


# ----------------------------------------------------------------------------
# the response cache


def test_cache_key_covers_everything_that_changes_a_reply():
    base = LitellmModel("openai/x", api_base="http://a/v1", settings={"temperature": 0})
    req = Request(messages=({"role": "user", "content": "hi"},), answer_index=0, sample="s")
    k = request_key(base, req)
    assert k == request_key(base, attrs.evolve(req, purpose="task:T9", meta={"t": 3}))  # not sent
    variants = [
        request_key(LitellmModel("openai/y", api_base="http://a/v1", settings={"temperature": 0}), req),
        request_key(LitellmModel("openai/x", api_base="http://a/v1", settings={"temperature": 1}), req),
        request_key(base, attrs.evolve(req, answer_index=1)),
        request_key(base, attrs.evolve(req, sample="t")),
        request_key(base, attrs.evolve(req, messages=({"role": "user", "content": "hi!"},))),
        request_key(base, attrs.evolve(req, tools=({"type": "function", "function": {"name": "f"}},))),
    ]
    assert len({k, *variants}) == len(variants) + 1
    # where the model is reached is operational: not in the key (the first edition's keys had it)
    moved = LitellmModel("openai/x", api_base="http://b/v1", settings={"temperature": 0})
    assert request_key(moved, req) == k
    assert request_key(base, req, endpoint="http://a/v1") != request_key(moved, req, endpoint="http://b/v1") != k


def at(endpoint: str, *, fail_after: int | None = None):
    """A cacheable scripted model reached at ENDPOINT that records what it is asked (and, after
    FAIL_AFTER replies, stops the run as a provider refusing the key would)."""
    asked: list = []

    def respond(request):
        if fail_after is not None and len(asked) >= fail_after:
            raise FatalError("authentication failed (a test)")
        asked.append(request)
        return policy_reply(request)
    model = ScriptedModel(respond, name="explorer", cacheable=True)
    model.api_base = endpoint
    return model, asked


def test_a_run_resumed_against_a_new_endpoint_asks_nothing_again(tmp_path, run_world):
    """The endpoint was in the request key: a run resumed with a new --api-base asked every request again."""
    world, out = FakeWorld(n_tasks=3), tmp_path / "r"
    first, _ = at("http://a/v1", fail_after=25)
    with pytest.raises(FatalError):
        run_world(world, [first], out, api_base="http://a/v1", **RUN)
    answered = len([e for e in log_events(out) if e["type"] == "reply"])
    assert answered == 25
    moved, asked = at("http://b/v1")
    r = run_world(world, [moved], out, resume=True, api_base="http://b/v1", **RUN)
    assert r.stats["calls_from_log"] == answered and r.stats["calls_live"] == len(asked) > 0
    assert r.summary["validity"]["valid"]


def test_logs_and_caches_keyed_with_the_endpoint_are_still_read(tmp_path, run_world, monkeypatch):
    """Compatibility: a log (header without key_version 2) and a cache written with the endpoint in the key."""
    import worldspec.runner.log as runlog
    import worldspec.runner.runtime as runtime
    world, cache = FakeWorld(n_tasks=3), tmp_path / "cache"
    with monkeypatch.context() as old:  # worldspec as it was: the endpoint in every key
        old.setattr(runtime, "request_key", lambda m, r, d=None: request_key(m, r, d, endpoint=m.api_base or ""))
        old.setattr(runlog, "KEY_VERSION", 1)
        first, _ = at("http://a/v1", fail_after=25)
        with pytest.raises(FatalError):
            run_world(world, [first], tmp_path / "old", cache_dir=cache, api_base="http://a/v1", **RUN)
    header = log_events(tmp_path / "old", "header")[0]
    assert header["key_version"] == 1
    # the old log resumed against a new endpoint: its replies are read under their old keys
    moved, asked = at("http://b/v1")
    r = run_world(world, [moved], tmp_path / "old", resume=True, api_base="http://b/v1", **RUN)
    assert r.stats["calls_from_log"] == 25 and r.stats["calls_live"] == len(asked)
    # the old cache serves a new run at the endpoint its keys name: its 25 replies, under their old keys
    # (each is kept under its new key as it is read)
    again, asked = at("http://a/v1")
    r = run_world(world, [again], tmp_path / "new", cache_dir=cache, api_base="http://a/v1", **RUN)
    assert r.stats["calls_from_cache"] == 25 and r.stats["calls_live"] == len(asked) > 0
    # and then the cache serves the run wherever the model is reached
    moved, asked = at("http://c/v1")
    r = run_world(world, [moved], tmp_path / "newer", cache_dir=cache, api_base="http://c/v1", **RUN)
    assert r.stats["calls_live"] == len(asked) == 0 and r.stats["calls_from_cache"] > 25


def test_a_cached_rerun_costs_nothing_and_keeps_answers_distinct(tmp_path, reference, run_world):
    world = FakeWorld(n_tasks=6)
    live = ScriptedModel(policy_reply, name="explorer", cacheable=True)
    cache = tmp_path / "cache"
    r1 = run_world(world, [live], tmp_path / "a", **RUN, cache_dir=cache)
    assert r1.stats["calls_from_cache"] == 0
    n = live.calls
    r2 = run_world(world, [live], tmp_path / "b", **RUN, cache_dir=cache)
    assert live.calls == n and r2.stats["calls_live"] == 0
    assert r2.stats["calls_from_cache"] == r1.stats["calls_live"]
    assert trajectories(tmp_path / "b") == trajectories(reference)
    db = ResponseCache(cache)
    assert db.db.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == r1.stats["calls_live"]
    db.close()
