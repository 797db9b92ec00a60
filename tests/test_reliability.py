"""Issue 10, the runner side: no input freezes, crashes or poisons a run.

* the sandbox: code stuck in one C call (tests/slowkind.py) is stopped at its deadline; a
  stopped probe is feedback, a stopped answer scores zero, a stopped rule report grades as
  wrong, all logged, and the run goes on; worlds no worker can compile run in process;
  a box's or a game's session stuck in C (tests/slowbox.py) is stopped too: its probe is
  feedback, its test game ends, and the session and every other session go on; a session held
  in the workers answers exactly as the world does in process;
* everything logged is loggable: lone surrogates round-trip through the log and the cache,
  replies over the cap are cut before anything sees them, a reply that crashed the run is
  recorded as failed so resume never replays it into the same crash;
* the run directory's lock (filelock) under a barrier race;
* the environment: unusable --out, a full disk, invalid standard input, request defaults;
* budgets a spec may declare are capped, so a dry run is quick.
"""
from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import slowbox
import slowkind
from fake_openai import LONE, hostile_responder
from runner_fakes import FakeWorld, policy_reply
from worldspec.cli import EXIT_INPUT, EXIT_INTERNAL, main
from worldspec.compiler import KINDS
from worldspec.runner import sandbox
from worldspec.runner.cache import ResponseCache
from worldspec.runner.log import Lock, RunDirError, RunLog, load_run, read_events
from worldspec.runner.models import (MAX_REPLY_CHARS, Reply, ScriptedModel, ToolCall, Usage, bounded_reply)
from worldspec.runner.runtime import Grader
from worldspec.runner.sessions import REPLAY_WINDOW
from worldspec.runner.sandbox import Deadlines, Overrun, Sandbox

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
DEMO = os.path.join(ROOT, "worlds", "demo.world")
SHORT = Deadlines(probe=2.0, verify=2.0, rules=2.0, requires=5.0, certify=60.0)


def hog() -> bytes:
    """More memory than a worker may map."""
    return b"x" * (4 << 30)


# ---------------------------------------------------------------- the sandbox


@pytest.fixture(scope="module")
def slow_sandbox():
    """A sandbox with short deadlines whose workers know `kind slow` and `kind slowbox`, installed as the
    process's."""
    sb = Sandbox(workers=2, deadlines=SHORT, kind_modules=("slowkind", "slowbox"))
    previous = sandbox.install(sb)
    yield sb
    sandbox.install(previous)
    sb.close()


@pytest.fixture
def slow_world(tmp_path, monkeypatch, slow_sandbox):
    monkeypatch.setitem(KINDS, "slow", slowkind.KIND)
    path = tmp_path / "slow.world"
    path.write_text(slowkind.SPEC)
    return sandbox.load(str(path))


@pytest.fixture
def slow_boxes(tmp_path, monkeypatch, slow_sandbox):
    """Three boxes of tests/worlds/oracle as `kind slowbox` (HANG in an input or a move hangs), loaded for the
    workers: a box with memory, one with memory, noise and a target per test, a round-by-round game."""
    monkeypatch.setitem(KINDS, "slowbox", slowbox.KIND)
    boxes = {}
    for name in ("running-total", "lying-scale", "bullets"):
        text = (Path(TESTS) / "worlds" / "oracle" / f"{name}.world").read_text()
        path = tmp_path / f"{name}.world"
        path.write_text(re.sub(r"^kind (blackbox|game)$", "kind slowbox", text, flags=re.M))
        boxes[name] = sandbox.load(str(path))
    return boxes


def test_a_call_stuck_in_c_is_stopped_and_the_pool_recovers(slow_sandbox):
    with pytest.raises(Overrun) as e:  # it would take hours to finish
        slow_sandbox.call(0.5, slowkind.stuck)
    assert e.value.timed_out and "stopped after 0.5 s" in str(e.value)
    assert slow_sandbox.call(5, os.getpid) != os.getpid()  # a fresh worker serves the next call
    with pytest.raises(Overrun, match="ran out of memory"):
        slow_sandbox.call(30, hog)
    assert slow_sandbox.call(5, abs, -3) == 3


def test_a_call_that_finishes_past_its_deadline_is_an_overrun_however_short_the_deadline(slow_sandbox):
    # pebble looks for overdue tasks every 0.1 s: a 0.05 s call under a 0.01 s deadline used to come
    # back as on time whenever it finished between two looks (author's --check-timeout test was flaky)
    for _ in range(5):
        with pytest.raises(Overrun) as e:
            slow_sandbox.call(0.01, time.sleep, 0.05)
        assert e.value.timed_out and "stopped after 0.01 s" in str(e.value)
    assert slow_sandbox.call(5, time.sleep, 0.01) is None  # within its deadline: the result comes back


def hostile_reply(request):
    """The explorer, except that its first probe, its answers to T1 and its M0 rule report hang the world."""
    reply = policy_reply(request)
    if request.purpose == "explore" and reply.tool_calls and \
            not any(m.get("role") == "tool" for m in request.messages):
        call = reply.tool_calls[0]
        return Reply(None, (ToolCall(call.id, call.name, json.dumps({"program": "EMIT HANG"})),), reply.usage)
    if request.purpose == "task:T1":
        return Reply("```\nHANG\n```", usage=reply.usage)
    if request.purpose == "rules" and request.meta.get("t") == 0:
        return Reply("```\nop DOUBLE(x) = HANG\n```", usage=reply.usage)
    return reply


def test_stopped_calls_are_feedback_zero_and_wrong_and_the_run_goes_on(slow_world, tmp_path, run_world, read_log):
    res = run_world(slow_world, [ScriptedModel(hostile_reply, name="hostile")], tmp_path / "run",
                    trajectories=1)
    assert res.summary["validity"]["valid"]
    events = read_log(tmp_path / "run")
    (mode,) = [e for e in events if e["type"] == "sandbox"]
    assert mode["mode"] == "pool" and mode["deadlines"]["probe"] == SHORT.probe
    stopped = {e["call"] for e in events if e["type"] == "overrun"}
    assert stopped == {"probe", "verify", "rules"}
    hung = [e for e in events if e["type"] == "tool" and e["program"] == "EMIT HANG"]
    assert len(hung) == 1 and hung[0]["status"] == "limit" and "ran too long" in hung[0]["feedback"]
    t1 = [e for e in events if e["type"] == "verdict" and e["task"] == "T1"]
    assert t1 and not any(e["passed"] for e in t1) and all("ran too long" in e["detail"] for e in t1)
    m0 = next(e for e in events if e["type"] == "rule_report" and e["t"] == 0)
    assert m0["correct"] == [] and "counts as wrong" in m0["errors"][0]
    # everything else went on as usual: later probes ran, later reports were graded
    assert any(e["type"] == "tool" and e["status"] == "ok" for e in events)
    last = res.trajectories[0]["milestones"][-1]
    assert last["tasks"]["T1"] == [0, 0, 0] and last["rules_correct"] == 2


def hanging_player(request):
    """A box player whose second input to Running total, first input in Bullets' first test and first move of
    that test's game hang the world; otherwise it sends 3, then 4, then 1s, scouts, and answers 5."""
    n = sum(m.get("role") == "assistant" for m in request.messages)
    first_test = request.meta["conv"].endswith("#g1") or request.purpose == "task:g1"
    if request.purpose == "explore" and request.meta["box"] == "Running total":
        text = ["3", "HANG", "4"][n] if n < 3 else "1"
    elif request.purpose == "explore":
        text = "HANG" if first_test and n == 0 else "scout"
    elif request.meta.get("moves") is not None:
        text = "HANG" if first_test and not request.meta["moves"] else "scout"
    else:
        text = "5"
    return Reply(f"```\n{text}\n```", usage=Usage(10, 2))


def test_a_session_stuck_in_c_is_feedback_in_time_and_every_session_goes_on(slow_boxes, tmp_path, run_world,
                                                                             read_log):
    t0 = time.monotonic()
    res = run_world([slow_boxes["running-total"], slow_boxes["bullets"]],
                    [ScriptedModel(hanging_player, name="hanging")], tmp_path / "run", grading="lenient")
    # three calls hang for hours each: each is stopped at its 2 s deadline (plus a worker's restart)
    assert time.monotonic() - t0 < 60
    assert res.summary["validity"]["valid"]
    events = read_log(tmp_path / "run")
    assert {e["mode"] for e in events if e["type"] == "sandbox"} == {"pool"}
    stopped = sorted((e["world"], e["call"], e.get("task")) for e in events if e["type"] == "overrun")
    assert stopped == [("Bullets", "play", "g1"), ("Bullets", "probe", "g1"), ("Running total", "probe", None)]
    assert all(e["seconds"] == SHORT.probe for e in events if e["type"] == "overrun")
    turns = {(e["box"], e["conv"].split("#")[-1], e["input"]): e for e in events if e["type"] == "box_turn"}
    hung = turns[("Running total", "hanging|Running total|6@1", "HANG")]
    assert hung["status"] == "limit" and hung["counted"] and "ran too long" in hung["feedback"]
    # the box's memory goes on from before the stopped input: 0 + 2*3 = 6, then 6 + 2*4 = 14
    assert turns[("Running total", "hanging|Running total|6@1", "3")]["feedback"] == "6"
    assert turns[("Running total", "hanging|Running total|6@1", "4")]["feedback"] == "14"
    assert turns[("Bullets", "g1", "HANG")]["status"] == "limit"
    assert turns[("Bullets", "g1", "scout")]["status"] == "ok" and turns[("Bullets", "g2", "scout")]["status"] == "ok"
    answers = {e["test"]: e for e in events if e["type"] == "box_answer"}
    assert answers["g1"]["answer"] == "" and not answers["g1"]["passed"]  # the game ended at the stopped move
    assert len(answers["g2"]["answer"].split()) == 10  # the other test game was played to its end (10 rounds)
    bullets = next(r for r in res.trajectories if r["world"] == "Bullets")
    assert [t["score"] for t in bullets["tests"]][0] == 0.0 and bullets["status"] == "complete"


def test_a_session_in_the_workers_answers_as_the_world_in_process_through_kills_and_a_fallback(slow_boxes):
    """Sessions held in two workers (replayed wherever a call lands, after a kill, past the replay window) give
    what one session in process gives; a world that stops being servable goes on in process, replayed."""
    box, game = slow_boxes["lying-scale"], slow_boxes["bullets"]
    task = box.tasks[1]
    weighings = [f"{a} vs {b}" for a in range(1, 13) for b in range(a + 1, 13)][:2 * REPLAY_WINDOW + 6]
    weighings[5:5] = ["1 vs 2 HANG"]
    moves = ["load", "shoot 1", "nonsense", "load", "scout", "defend 1", "load", "scout", "load", "load"]
    events = []
    grader = Grader(box, sandbox.shared(), events.append)
    games = Grader(game, sandbox.shared(), events.append)

    async def played():
        s = await grader.session(task)
        got = [(await s.probe(q)).text for q in weighings[:-4]]
        path = sandbox.origin(box).path  # the file changes: the workers refuse it, the session goes on here
        with open(path, "r+") as f:
            text = f.read().replace('"Lying scale"', '"Lying scales"')
            f.seek(0)
            f.write(text)
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        got += [(await s.probe(q)).text for q in weighings[-4:]]
        g = await games.test_game(game.tasks[0], 2)
        told = [g.opening, g.horizon] + [(await g.play(m)).text for m in moves]
        plain = await gates.session()  # no memory, no noise: a worker answers it without replaying
        assert plain.session.facts["memoryless"] and not s.session.facts["memoryless"]
        wired = [(await plain.probe(x)).text for x in circuits]
        return got, told, (await g.verdict("lenient")).score, wired
    gate_world = sandbox.load(os.path.join(TESTS, "worlds", "oracle", "gate-outputs.world"))
    gates = Grader(gate_world, sandbox.shared(), events.append)
    circuits = [f"({a}, {b}, {c}, {d})" for a in (0, 1) for b in (0, 1) for c in (0, 1) for d in (0, 1)] + ["(2)"]
    got, told, score, wired = asyncio.run(played())
    assert wired == [gate_world.session().probe(x).text for x in circuits]
    here = box.inner.session(task)
    want = [here.probe(q).text if "HANG" not in q else "limit" for q in weighings]
    assert [w if w == "limit" else g for g, w in zip(got, want)] == want
    assert got[5].startswith("limit: the program ran too long")
    assert grader.mode == "in-process" and "changed" in grader.reason
    local = game.inner.test_play(game.tasks[0], 2)
    assert told == [local.opening, local.horizon] + [local.play(m).text for m in moves]
    assert score == local.verdict("lenient").score


def test_a_world_no_worker_can_compile_runs_in_process_and_says_why(fake_world_file, tmp_path, run_world,
                                                                     read_log):
    world = sandbox.load(fake_world_file)  # kind `fake` is registered in this process only
    run_world(world, [ScriptedModel(policy_reply, name="explorer")], tmp_path / "a", trajectories=1)
    (mode,) = [e for e in read_log(tmp_path / "a") if e["type"] == "sandbox"]
    assert mode["mode"] == "in-process" and "registered at run time by runner_fakes" in mode["reason"]
    run_world(FakeWorld(), [ScriptedModel(policy_reply, name="explorer")], tmp_path / "b", trajectories=1)
    (mode,) = [e for e in read_log(tmp_path / "b") if e["type"] == "sandbox"]
    assert mode["mode"] == "in-process" and "not loaded from a file" in mode["reason"]


def test_a_pool_whose_workers_never_start_leaves_evaluation_in_process(tmp_path, monkeypatch):
    (tmp_path / "stalls_on_import.py").write_text("import time\ntime.sleep(3600)\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # workers read the caller's sys.path as they start
    stuck = Sandbox(workers=2, kind_modules=("stalls_on_import",), deadlines=Deadlines(certify=1.0, start=2.0))
    events = []
    grader = Grader(sandbox.load(DEMO), stuck, events.append)
    try:
        fb = asyncio.run(grader.probe("EMIT(1)"))
    finally:
        stuck.close()
    assert fb.status == "ok" and grader.mode == "in-process"
    assert events[-1]["mode"] == "in-process" and "did not answer within 3 s" in events[-1]["reason"]


def test_a_world_file_changed_after_loading_is_graded_by_the_loaded_world(slow_world, tmp_path, run_world,
                                                                          read_log):
    path = sandbox.origin(slow_world).path
    with open(path, "w") as f:
        f.write(slowkind.SPEC.replace('"Slow"', '"Slower"'))
    os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    res = run_world(slow_world, [ScriptedModel(policy_reply, name="explorer")], tmp_path / "run",
                    trajectories=1)
    assert res.summary["validity"]["valid"]
    modes = [(e["mode"], e["reason"]) for e in read_log(tmp_path / "run") if e["type"] == "sandbox"]
    assert modes[0] == ("pool", None) and modes[1][0] == "in-process" and "changed" in modes[1][1]


# ---------------------------------------------------------------- everything logged is loggable

ODD = f"a{LONE}b\udfffc, é and 😀 \U0010ffff"  # lone surrogates among ordinary characters


def test_any_code_point_round_trips_through_the_log(tmp_path):
    log = RunLog(tmp_path, config={"note": ODD}, world={})
    log.emit({"type": "note", "id": "odd", "text": ODD})
    log.emit({"type": "note", "id": "plain", "text": "é and 😀"})
    log.close("success")
    raw = (tmp_path / "log.jsonl").read_bytes()
    raw.decode("utf-8")  # the file is UTF-8 throughout
    assert "é and 😀".encode() in raw  # lines without a surrogate stay readable
    notes = {e["id"]: e["text"] for e in map(json.loads, raw.splitlines()) if e["type"] == "note"}
    assert notes == {"odd": ODD, "plain": "é and 😀"}
    assert load_run(tmp_path).config == {"note": ODD}


def test_any_code_point_round_trips_through_the_cache(tmp_path):
    from worldspec.runner.cache import request_key
    from worldspec.runner.models import LitellmModel, Request
    model = LitellmModel("openai/x", api_base="http://a/v1")
    key = request_key(model, Request(messages=({"role": "user", "content": ODD},)))
    assert key != request_key(model, Request(messages=({"role": "user", "content": ODD.replace("\ud800", "")},)))
    # every other key is what it was before surrogates were allowed (UTF-8 of the same text)
    plain = request_key(model, Request(messages=({"role": "user", "content": "é"},)))
    assert plain == request_key(model, Request(messages=({"role": "user", "content": "\xe9"},)))
    cache = ResponseCache(tmp_path)
    reply = Reply(ODD, (ToolCall("c", "run_program", '{"program": "' + ODD + '"}'),), Usage(1, 2))
    cache.put(key, "openai/x", reply)
    assert cache.get(key) == reply and cache.error is None
    cache.close()


def test_a_failing_cache_is_dropped_not_fatal_and_an_unusable_one_is_bad_input(tmp_path, run_world, read_log,
                                                                              monkeypatch):
    put, puts = ResponseCache.put, []

    def failing_put(self, *args):  # the third write finds the database gone (a damaged file, a full disk)
        puts.append(args[0])
        if len(puts) == 3:
            self.db.close()
        return put(self, *args)

    monkeypatch.setattr(ResponseCache, "put", failing_put)
    model = ScriptedModel(policy_reply, name="explorer", cacheable=True)
    res = run_world(FakeWorld(), [model], tmp_path / "run", trajectories=1, cache_dir=tmp_path / "cache")
    assert res.summary["validity"]["valid"] and len(puts) == 3  # the run went on without its cache
    (trouble,) = [e for e in read_log(tmp_path / "run") if e["type"] == "cache_error"]
    assert "closed database" in trouble["error"]
    (bad := tmp_path / "bad").mkdir()
    (bad / "responses.sqlite").write_bytes(b"not a database" * 100)
    r = CliRunner().invoke(main, ["run", "demo", "--model", "openai/x", "--cache", str(bad), "--out",
                                  str(tmp_path / "x")])
    assert r.exit_code == EXIT_INPUT and "cannot use the response cache" in r.output


def test_a_reply_over_the_cap_is_cut_with_a_notice_and_stays_well_formed():
    big = "x" * (10 << 20)
    program = json.dumps({"program": "EMIT(1)\n" + "y" * (3 << 20)})
    small = '{"program": "EMIT(2)"}'
    reply = Reply(big, (ToolCall("c1", "run_program", program), ToolCall("c2", "run_program", small)),
                  reasoning_content="thought " * 10)
    cut, dropped = bounded_reply(reply)
    size = len(cut.content) + len(cut.reasoning_content) + sum(len(c.arguments) for c in cut.tool_calls)
    assert size <= MAX_REPLY_CHARS + 1000 and dropped > 12 << 20
    assert cut.content.startswith("xxx") and "this reply was" in cut.content and "cut to" in cut.content
    args = json.loads(cut.tool_calls[0].arguments)  # still a JSON object: the program is cut, with a notice
    assert args["program"].startswith("EMIT(1)\nyyy") and "cut to" in args["program"]
    assert cut.tool_calls[1].arguments == small  # small fields are kept whole
    assert cut.reasoning_content == reply.reasoning_content
    same, none = bounded_reply(Reply("short", ()))
    assert none == 0 and same == Reply("short", ())
    # odd shapes from a provider become text
    odd, _ = bounded_reply(Reply([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], ()))
    assert odd.content == "ab"


def test_a_lone_surrogate_in_a_box_answer_reaches_every_output(tmp_path, run_world):
    box = sandbox.load(os.path.join(ROOT, "worlds", "oracle-extra", "cii-e01-running-maximum.world"))
    res = run_world([box], [ScriptedModel(lambda r: Reply(f"```\n3 {LONE}\n```"), name="odd")], tmp_path,
                    turns=2)
    assert res.summary["validity"]["valid"]
    records = [json.loads(line) for line in (tmp_path / "trajectories.jsonl").read_bytes().splitlines()]
    assert any(LONE in shot["answer"] for r in records for t in r["tests"] for shot in t["shots"])
    assert CliRunner().invoke(main, ["report", str(tmp_path), "--no-plots"]).exit_code == 0


class Boom(FakeWorld):
    """A world whose probe raises on one program (a bug that a hostile reply reaches)."""

    def probe(self, text):
        if "BOOM" in text:
            raise ZeroDivisionError("a bug reached by a reply")
        return super().probe(text)


def booming(request):
    """The explorer, except that its second probe is BOOM (until it sees that reply dropped)."""
    reply = policy_reply(request)
    n_tool = sum(1 for m in request.messages if m.get("role") == "tool")
    dropped = any("could not be processed" in (m.get("content") or "") for m in request.messages)
    if request.purpose == "explore" and reply.tool_calls and n_tool == 1 and not dropped:
        call = reply.tool_calls[0]
        return Reply(None, (ToolCall(call.id, call.name, json.dumps({"program": "EMIT BOOM"})),), reply.usage)
    return reply


def test_a_reply_that_crashed_the_run_is_recorded_failed_and_never_replayed(tmp_path, run_world, read_log):
    out, cache = tmp_path / "run", tmp_path / "cache"
    model = ScriptedModel(booming, name="explorer", cacheable=True)
    with pytest.raises(ZeroDivisionError):
        run_world(Boom(), [model], out, trajectories=1, cache_dir=cache)
    (failed,) = [e for e in read_log(out) if e["type"] == "reply_failed"]
    assert "ZeroDivisionError: a bug reached by a reply" in failed["error"]
    crashed = next(e for e in read_log(out) if e["type"] == "reply" and e["key"] == failed["key"])
    assert "BOOM" in crashed["reply"]["tool_calls"][0]["function"]["arguments"]
    now = load_run(out).replies[failed["key"]]  # the reply the key stands for now, with its reply's fields
    assert now["system"] == "explorer" and now["purpose"] == "explore" and not now["reply"]["tool_calls"]
    # resume: the failed reply is replayed as what replaced it, and the run completes
    res = run_world(Boom(), [model], out, trajectories=1, cache_dir=cache, resume=True)
    assert res.summary["validity"]["valid"]
    assert not [e for e in read_log(out) if e["type"] == "tool" and "BOOM" in (e["program"] or "")]
    # a fresh run directory sharing the cache gets the replacement too
    res = run_world(Boom(), [model], tmp_path / "fresh", trajectories=1, cache_dir=cache)
    assert res.summary["validity"]["valid"] and res.stats["calls_live"] == 0


# ---------------------------------------------------------------- the run directory's lock

PAIRS, ROUNDS = 10, 30  # 300 races, each between two processes released at the same instant


def contend(directories: list[str], ready, go: list, tried, done: list, took) -> None:
    """One of a pair, for every round: take the round's lock the moment the pair is released
    (both wait on one event), and hold it until both have tried."""
    for directory, go_now, done_now in zip(directories, go, done):
        lock = Lock(Path(directory))
        ready.release()
        go_now.wait()
        try:
            lock.acquire()
            took.value = 1
        except RunDirError:
            took.value = 0
        tried.release()
        done_now.wait()  # both have tried and neither has let go: a lock held now is held by one, or by both
        lock.release()


def test_two_runs_racing_for_a_directory_never_both_hold_it(tmp_path):
    ctx = multiprocessing.get_context("fork")
    pairs = []
    for k in range(PAIRS):
        dirs = []
        for r in range(ROUNDS):
            d = tmp_path / f"pair{k}" / f"run{r}"
            d.mkdir(parents=True)
            if r % 2:
                (d / ".lock").write_text("")  # what the old lock's writer left before writing its pid
            dirs.append(str(d))
        ready, tried = ctx.Semaphore(0), ctx.Semaphore(0)
        go, done = [ctx.Event() for _ in dirs], [ctx.Event() for _ in dirs]
        took = [ctx.Value("b", -1), ctx.Value("b", -1)]
        procs = [ctx.Process(target=contend, args=(dirs, ready, go, tried, done, t)) for t in took]
        for p in procs:
            p.start()
        pairs.append((procs, ready, go, tried, done, took))
    outcomes = []
    for r in range(ROUNDS):
        for procs, ready, go, tried, done, took in pairs:
            assert ready.acquire(timeout=30) and ready.acquire(timeout=30)
            go[r].set()
            assert tried.acquire(timeout=30) and tried.acquire(timeout=30)
            outcomes.append((took[0].value, took[1].value))
            done[r].set()
    for procs, *_ in pairs:
        for p in procs:
            p.join(30)
            assert p.exitcode == 0
    assert len(outcomes) == PAIRS * ROUNDS == 300
    assert sorted(set(outcomes)) == [(0, 1), (1, 0)]  # always exactly one holder, and either may win


# ---------------------------------------------------------------- the environment

CLI = [sys.executable, "-c", "from worldspec.cli import main; main()"]


def worldspec(*args, limit_file_size: int | None = None, **kw) -> subprocess.CompletedProcess:
    """`worldspec ARGS` in a fresh process (optionally unable to write files past a size: a full disk)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true",
           **kw.pop("env", {})}
    return subprocess.run(CLI + list(args), capture_output=True, env=env, timeout=300,
                          preexec_fn=limit if limit_file_size else None, **kw)


def unwritable_parent(tmp_path) -> str:
    """A folder nobody may create anything in (root ignores permissions: use a read-only mount)."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        return str(ro)
    return "/sys/worldspec-test"


@pytest.mark.parametrize("where", ["file", "unwritable"])
def test_an_out_that_cannot_be_created_exits_2_with_a_message(tmp_path, where):
    (tmp_path / "file").write_text("not a folder")
    parent = str(tmp_path / "file") if where == "file" else unwritable_parent(tmp_path)
    r = CliRunner().invoke(main, ["run", "demo", "--out", os.path.join(parent, "deeper", "run"), "-n", "1"])
    assert r.exit_code == EXIT_INPUT, r.output
    assert "cannot use" in r.output and "as the run directory" in r.output and "Traceback" not in r.output


def test_a_log_that_cannot_be_written_exits_2_with_a_message(tmp_path):
    out = tmp_path / "run"
    r = worldspec("run", "demo", "--out", str(out), "-n", "1", "--quiet", limit_file_size=200)  # not even its header
    assert r.returncode == EXIT_INPUT, r.stderr.decode()
    assert "cannot write the run log" in r.stderr.decode() and "File too large" in r.stderr.decode()
    assert "Traceback" not in r.stderr.decode()
    # a link to a device (every write: no space left) is no log of the run folder's own: refused unwritten
    other = tmp_path / "other"
    other.mkdir()
    (other / "log.jsonl").symlink_to("/dev/full")
    r = CliRunner().invoke(main, ["run", "demo", "--out", str(other), "-n", "1"])
    assert r.exit_code == EXIT_INPUT, r.output
    assert "symbolic link" in r.output and "Traceback" not in r.output


def test_a_full_disk_mid_run_exits_3_with_a_message_and_resume_repairs_the_log(tmp_path):
    out = tmp_path / "run"
    args = ["run", "demo", "--agent", "oracle", "--out", str(out), "-n", "1", "--quiet"]
    r = worldspec(*args, limit_file_size=60_000)  # the log of this run is about 145 kB
    err = r.stderr.decode()
    assert r.returncode == EXIT_INTERNAL, err
    assert f"{out}/log.jsonl: File too large" in err and "--resume" in err and "Traceback" not in err
    assert not (out / "trajectories.jsonl").exists()
    assert (out / "log.jsonl").stat().st_size <= 60_000
    r = worldspec(*args, "--resume")
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["validity"]["valid"] and summary["validity"]["sessions"] == 2
    lines = (out / "log.jsonl").read_bytes().splitlines()
    assert all(json.loads(line) for line in lines)  # the cut line was repaired, nothing else lost


def test_invalid_bytes_on_standard_input_are_bad_input_saying_where_under_a_strict_utf8_locale():
    r = worldspec("probe", "demo", "-", input=b"EMIT(1)\nEMIT(2)\xff\xfe\n",
                  env={"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8:strict"})
    err = r.stderr.decode()
    assert r.returncode == EXIT_INPUT, err
    assert "not UTF-8" in err and "0xff on line 2 (offset 15)" in err and "Traceback" not in err
    assert r.stdout == b""
    ok = worldspec("probe", "demo", "-", input="EMIT(\"héllo\")\n".encode(),
                   env={"LC_ALL": "C", "LANG": "C"})  # UTF-8 is read as UTF-8 whatever the locale
    assert ok.returncode == 0 and "héllo" in ok.stdout.decode("utf-8", "replace"), ok.stderr.decode()


def test_request_defaults_cost_minutes_not_hours():
    from worldspec.runner.models import REQUEST_TIMEOUT, LitellmModel, RetryPolicy
    from worldspec.runner.options import worst_case_minutes
    assert LitellmModel("openai/x").timeout == REQUEST_TIMEOUT == 120
    policy = RetryPolicy()
    assert policy.max_attempts == 4 and policy.max_delay <= 30
    assert worst_case_minutes(REQUEST_TIMEOUT, policy) <= 10
    assert policy.delay(50, retry_after=10**9) <= policy.max_delay  # a server's Retry-After is capped too
    text = CliRunner().invoke(main, ["run", "--help"], terminal_width=200).output
    assert re.search(r"--timeout FLOAT\s.*\[default: 120", text)
    assert re.search(r"--max-retries INTEGER RANGE\s.*\(the first included\)", text)


# ---------------------------------------------------------------- budgets


@pytest.mark.parametrize("entry,value,cap", [("rounds", 101, 100), ("calls_per_round", 100_000, 1000),
                                             ("answers", 21, 20), ("feedback_lines", 0, 1000)])
def test_a_budget_past_its_cap_is_a_located_error(tmp_path, entry, value, cap):
    spec = open(os.path.join(ROOT, "worlds", "demo.world")).read()
    spec = re.sub(rf"\b{entry} \d+", f"{entry} {value}", spec)
    (tmp_path / "w.world").write_text(spec)
    r = CliRunner().invoke(main, ["run", str(tmp_path / "w.world"), "--dry-run"])
    assert r.exit_code == EXIT_INPUT, r.output
    assert f"budget {entry} is {value:,}; it must be between 1 and {cap:,}" in r.output


def test_a_dry_run_at_the_largest_budget_is_quick(tmp_path):
    spec = open(os.path.join(ROOT, "worlds", "demo.world")).read()
    spec = spec.replace("rounds 4  calls_per_round 12  max_calls 48", "rounds 100  calls_per_round 1000") \
        .replace("answers 3", "answers 20")
    (tmp_path / "w.world").write_text(spec)
    r = CliRunner().invoke(main, ["run", str(tmp_path / "w.world"), "--dry-run", "--model", "openai/x",
                                  "-n", "1000"])
    assert r.exit_code == 0, r.output
    # exploration: per round a turn a call, the closing turn, 3 more with tools closed, 2 nudges
    assert "| openai/x | autonomous | 1000 | 100600000 | 101 | 14241000 |" in r.output


# ---------------------------------------------------------------- done when: hostile replies through `worldspec run`

HOSTILE = {  # what a hostile model sends, as probes of the demo world (AlienCode's syntax, a 6-call budget)
    "bomb": "\n".join(["SET a AS STRAND(1)"] + ["SET a AS STRAND(a, a)"] * 40 + ["EMIT(GAUGE(a))"]),
    "literal": "EMIT(" + "9" * 4301 + ")",
    "surrogate": f'EMIT("{LONE}")',
}
STATUS = {"bomb": "limit", "literal": "parse_error", "surrogate": "parse_error"}


def model_run(server, out, world="aliencode", *more) -> list[str]:
    return ["run", world, "--model", "openai/hostile", "--api-base", server.base_url, "--out", str(out),
            "-n", "1", "--answers", "1", "--no-cache", "--quiet", "--retry-delay", "0.001", *more]


def logged(out) -> list[dict]:
    """The events of a run's complete lines (one being written may be cut short)."""
    path = os.path.join(out, "log.jsonl")
    if not os.path.exists(path):
        return []
    return list(read_events(path))


def test_hostile_replies_go_through_a_run_that_is_killed_and_resumed(fake_openai, tmp_path):
    fake_openai.responder = hostile_responder(list(HOSTILE.values()))
    out = tmp_path / "run"
    args = model_run(fake_openai, out, "demo")
    proc = subprocess.Popen(CLI + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:  # killed right after the three hostile probes were answered
        deadline = time.monotonic() + 240
        while sum(e["type"] == "tool" for e in logged(out)) < len(HOSTILE):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the hostile probes were never answered"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait(30)
    assert not (out / "summary.json").exists()
    r = worldspec(*args, "--resume")
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["validity"]["valid"] and summary["validity"]["sessions"] == 2
    events = logged(out)
    tools = {e["program"]: e for e in events if e["type"] == "tool"}
    for name, program in HOSTILE.items():  # each probe answered as feedback, exactly once
        assert tools[program]["status"] == STATUS[name] and tools[program]["feedback"], name
    assert sum(e["type"] == "tool" for e in events) == len(HOSTILE)
    first = next(e for e in events if e["type"] == "reply" and e["reply"]["tool_calls"])
    assert LONE in first["reply"]["content"]  # the lone surrogate round-trips through the log
    assert any(e["type"] == "verdict" and LONE in e["answer"] for e in events)
    # a run killed right after it completed resumes as a finished run: nothing replayed into a crash
    r = worldspec(*args, "--resume")
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    assert sum(e["type"] == "tool" for e in logged(out)) == len(HOSTILE)


RSS = ("import atexit, sys\n"
       "status = lambda: next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
       "atexit.register(lambda: sys.stderr.write(status()))\n"
       "from worldspec.cli import main\nmain()\n")


def test_a_ten_megabyte_reply_is_cut_logged_and_the_run_stays_small(fake_openai, tmp_path):
    fake_openai.responder = hostile_responder(["EMIT(PLUCK(STRAND(1, 2), 0))"], padding=10 << 20)
    out = tmp_path / "run"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    r = subprocess.run([sys.executable, "-c", RSS, *model_run(fake_openai, out, "demo")], capture_output=True,
                       env=env, timeout=600)
    err = r.stderr.decode()
    assert r.returncode == 0, err[-3000:]
    peak_kb = int(re.search(r"VmHWM:\s+(\d+) kB", err).group(1))  # this process's own peak, not its parent's
    assert peak_kb < 500 * 1024
    assert json.loads((out / "summary.json").read_text())["validity"]["valid"]
    events = logged(out)
    (big,) = [e for e in events if e["type"] == "reply" and e.get("truncated")]
    assert big["truncated"] > 2 * (10 << 20) - MAX_REPLY_CHARS - 1000
    assert "this reply was" in big["reply"]["content"] and len(big["reply"]["content"]) < MAX_REPLY_CHARS
    (tool,) = [e for e in events if e["type"] == "tool"]
    assert tool["program"].startswith("EMIT(PLUCK(STRAND(1, 2), 0))zzz") and len(tool["program"]) < MAX_REPLY_CHARS
    assert (out / "log.jsonl").stat().st_size < 3 * MAX_REPLY_CHARS  # not 10 MB, nor 10 MB per later request
    assert max(len(json.dumps(b)) for b in fake_openai.requests) < 2 * MAX_REPLY_CHARS


def test_check_and_probe_stop_code_stuck_in_c(slow_world, tmp_path):
    path = sandbox.origin(slow_world).path
    r = CliRunner().invoke(main, ["probe", path, "EMIT HANG"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("limit: the program ran too long and was stopped after 2 s")
    assert "[5 probe units charged of 5; limit]" in r.stderr
    assert CliRunner().invoke(main, ["probe", path, "EMIT 4"]).stdout == "4\n"
    hang = tmp_path / "hang.world"
    hang.write_text(slowkind.SPEC.replace('"Slow"', '"HANG"'))
    r = CliRunner().invoke(main, ["check", str(hang), "--timeout", "2"])
    assert r.exit_code == 1, r.output
    assert "certification ran too long and was stopped after 2 s" in r.output
    r = CliRunner().invoke(main, ["check", path, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["problems"] == []
