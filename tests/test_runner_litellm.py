"""Real litellm against our fake OpenAI-compatible server on 127.0.0.1 (conftest's `fake_openai`)."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from runner_fakes import FakeWorld, explorer_policy
from worldspec.cli import EXIT_INPUT, EXIT_INVALID, main
from worldspec.compiler import load_world
from worldspec.runner.models import FatalError, LitellmModel, RetryPolicy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model(server, timeout=20.0, **settings):
    return LitellmModel("openai/fake-explorer", api_base=server.base_url, timeout=timeout,
                        settings=settings)


def last_user(body):
    return next(m for m in reversed(body["messages"]) if m["role"] == "user")["content"]


def test_a_model_through_litellm_end_to_end(fake_openai, tmp_path, run_world, read_log):
    w = FakeWorld()
    res = run_world(w, [model(fake_openai)], tmp_path)
    assert res.summary["validity"]["valid"]
    n = w.budget.rounds
    # every request reached the server exactly once: 6 exploration turns + 3 milestones x 13
    per_traj = 6 + (n + 1) * (1 + 3 * len(w.tasks))
    assert len(fake_openai.requests) == 3 * per_traj == res.stats["calls_live"]
    lines = [json.loads(x) for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    assert len(lines) == 3
    for t in lines:
        assert [m["t"] for m in t["milestones"]] == list(range(n + 1))
        for m in t["milestones"]:
            assert len(m["passes"]) == 3
            assert {"accuracy", "sigma", "calls", "probe_units", "tokens", "rules_correct"} <= set(m)
        assert t["milestones"][-1]["calls"] == 4 and t["milestones"][-1]["rules_correct"] == 2
    s = json.loads((tmp_path / "summary.json").read_text())
    g = s["results"][0]
    assert (g["best"], g["mean"], g["worst"], g["n"], g["best_trajectory"]) == (100.0, 100.0, 100.0, 3, 1)

    explore = [b for b in fake_openai.requests if b.get("tools")]
    forks = [b for b in fake_openai.requests if not b.get("tools")]
    assert len(explore) == 3 * 6 and len(forks) == 3 * (n + 1) * 13
    # milestone copies carry no tools and no exploration after their milestone
    for b in forks:
        t = int(last_user(b).split()[1][1:].rstrip("."))
        seen = sum(1 for m in b["messages"] if m["role"] == "user"
                   and m["content"].startswith("Exploration round"))
        assert seen == t and "tool_choice" not in b
    # exploration carries the world's tool; tool-call ids travel unchanged
    assert all(b["tools"][0]["function"]["name"] == w.tool.name for b in explore)
    longest = max(explore, key=lambda b: len(b["messages"]))
    ids = [c["id"] for m in longest["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert ids and ids == [m["tool_call_id"] for m in longest["messages"] if m["role"] == "tool"]
    assert all(i.startswith("call_") for i in ids)  # the server's own ids
    # T: provider-reported tokens of exploration requests only, cumulative per milestone
    by_traj = {}
    for e in read_log(tmp_path):
        if e["type"] == "reply" and e["purpose"] == "explore":
            u = e["reply"]["usage"]
            by_traj[e["trajectory"]] = by_traj.get(e["trajectory"], 0) + u["input_tokens"] + u["output_tokens"]
    for t in lines:
        assert t["milestones"][-1]["tokens"] == by_traj[t["trajectory"]]
    expected_t = sum(sum(explorer_policy(b["messages"], b["tools"], b.get("tool_choice"))["usage"])
                     for b in explore) // 3
    assert lines[0]["milestones"][-1]["tokens"] == expected_t


def test_provider_faults_are_retried_recorded_and_lose_nothing(fake_openai, tmp_path, run_world, read_log):
    w = FakeWorld()
    clean = tmp_path / "clean"
    run_world(w, [model(fake_openai)], clean, trajectories=1)
    n_clean = len(fake_openai.requests)
    fake_openai.clear()
    fake_openai.fail_next("429", n=2)
    fake_openai.fail_next("500", n=1, when=lambda b: "held-out task T3" in last_user(b))
    fake_openai.fail_next("reset", n=1, when=lambda b: bool(b.get("tools")))
    fake_openai.fail_next("timeout", n=1, when=lambda b: "Report the rules" in last_user(b))
    faulty = tmp_path / "faulty"
    res = run_world(w, [model(fake_openai, timeout=0.5)], faulty, trajectories=1)
    assert [k for k, _ in fake_openai.faulted] == ["429", "429", "reset", "500", "timeout"] or \
        sorted(k for k, _ in fake_openai.faulted) == sorted(["429", "429", "500", "reset", "timeout"])
    assert len(fake_openai.requests) == n_clean + 5
    v = res.summary["validity"]
    assert v["valid"] and v["retries"] == 5 and v["lost_answers"] == 0
    retries = [e for e in read_log(faulty) if e["type"] == "retry"]
    assert len(retries) == 5
    assert any("RateLimitError" in e["error"] for e in retries)
    assert any("Timeout" in e["error"] for e in retries)
    assert (faulty / "trajectories.jsonl").read_text() == (clean / "trajectories.jsonl").read_text()


def test_an_outage_is_recorded_as_lost_and_resume_fills_it_in(fake_openai, tmp_path, run_world):
    w = FakeWorld()
    fake_openai.fail_next("503", n=10**6, when=lambda b: "held-out task T4" in last_user(b)
                          and "Exploration round 2" in json.dumps(b["messages"]))
    res = run_world(w, [model(fake_openai)], tmp_path, trajectories=1, retry=RetryPolicy(2, 0.001, 0.01))
    v = res.summary["validity"]
    assert not v["valid"] and v["lost_answers"] == 3
    m2 = res.trajectories[0]["milestones"][2]
    assert m2["tasks"]["T4"] == [None, None, None] and m2["lost"] == 3
    assert m2["accuracy"] == 100.0  # the three other tasks; T4 is not scored wrong
    fake_openai.clear()
    res = run_world(w, [model(fake_openai)], tmp_path, trajectories=1, resume=True)
    assert res.summary["validity"]["valid"] and len(fake_openai.requests) == 3


def test_a_run_that_finishes_invalid_exits_4_and_resume_repairs_it(fake_openai, fake_world_file, tmp_path):
    fake_openai.fail_next("503", n=10**6, when=lambda b: "held-out task T2" in last_user(b))
    args = ["run", fake_world_file, "--model", "openai/fake-explorer", "--api-base", fake_openai.base_url,
            "--out", str(tmp_path / "run"), "--no-cache", "-n", "1", "--max-retries", "2", "--retry-delay", "0.001"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == EXIT_INVALID, r.output
    assert "not valid" in r.output and "Traceback" not in r.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["validity"]["lost_answers"] == 3 * 3  # T2's three answers at each of 3 milestones
    fake_openai.clear()
    r = CliRunner().invoke(main, args + ["--resume"])
    assert r.exit_code == 0, r.output
    assert len(fake_openai.requests) == 9


def test_auth_failure_fails_fast_with_a_readable_message(fake_openai, fake_world_file, tmp_path, run_world,
                                                          read_log):
    fake_openai.fail_next("401", n=10**6)
    with pytest.raises(FatalError, match="authentication failed"):
        run_world(FakeWorld(), [model(fake_openai)], tmp_path / "a", trajectories=1)
    # no retries on 401, and nothing new is sent after it: only requests already in flight
    assert 1 <= len(fake_openai.requests) <= 16
    assert not [e for e in read_log(tmp_path / "a") if e["type"] == "retry"]
    assert read_log(tmp_path / "a")[-1]["status"] == "error"
    r = CliRunner().invoke(main, ["run", fake_world_file, "--model", "openai/fake", "--api-base",
                                  fake_openai.base_url, "--out", str(tmp_path / "b"), "--no-cache", "-n", "1"])
    assert r.exit_code == EXIT_INPUT and "authentication failed" in r.output and "Traceback" not in r.output


def test_cli_model_run_with_settings_and_cache(fake_openai, fake_world_file, tmp_path):
    args = ["run", fake_world_file, "--model", "openai/fake-settings", "--api-base", fake_openai.base_url,
            "--trajectories", "3", "--temperature", "0.25", "--max-tokens", "300", "--model-arg", "seed=11",
            "--cache", str(tmp_path / "cache"), "--retry-delay", "0.001"]
    r = CliRunner().invoke(main, args + ["--out", str(tmp_path / "a")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    mine = lambda: [b for b in fake_openai.requests if b["model"] == "fake-settings"]  # noqa: E731
    n = len(mine())
    assert n > 0
    assert all(b["temperature"] == 0.25 and b["max_tokens"] == 300 and b["seed"] == 11
               for b in mine())
    # a re-run with the same cache costs nothing and gives the same trajectories
    r = CliRunner().invoke(main, args + ["--out", str(tmp_path / "b")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert len(mine()) == n
    assert (tmp_path / "a" / "trajectories.jsonl").read_text() == \
        (tmp_path / "b" / "trajectories.jsonl").read_text()
    # issue 31 item 2: the rerun says its replies came from the cache, on the console and in report.md
    assert f"{n} model replies came from the response cache" in r.output and "--no-cache" in r.output
    assert f"{n} model replies came from the response cache" in (tmp_path / "b" / "report.md").read_text()
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["validity"]["cached_replies"] == n
    assert "from the response cache" not in (tmp_path / "a" / "report.md").read_text()


def test_demo_world_through_litellm(fake_openai, tmp_path, run_world, read_log):
    w = load_world(os.path.join(ROOT, "worlds", "demo.world"))
    probe = w.examples[0].program

    def responder(body):
        msgs = body["messages"]
        if body.get("tools") and msgs[-1]["role"] == "user":
            return {"content": None, "tool_calls": [(body["tools"][0]["function"]["name"],
                                                     json.dumps({"program": probe}))], "usage": (50, 5)}
        if body.get("tools"):
            return {"content": "Enough for this round.", "tool_calls": [], "usage": (60, 4)}
        return {"content": "```\nUNKNOWN\n```", "tool_calls": [], "usage": (70, 3)}

    fake_openai.responder = responder
    res = run_world(w, [LitellmModel("openai/demo", api_base=fake_openai.base_url)], tmp_path, trajectories=1,
                    answers=1, conditions=("autonomous", "fixed"))
    assert res.summary["validity"]["valid"]
    by = {t["condition"]: t for t in res.trajectories}
    assert by["autonomous"]["milestones"][-1]["calls"] == w.budget.rounds
    assert by["fixed"]["milestones"][-1]["calls"] == w.budget.rounds  # the autonomous trajectory's volume
    assert by["autonomous"]["milestones"][-1]["tokens"] == w.budget.rounds * (55 + 64)
    tools = [e for e in read_log(tmp_path) if e["type"] == "tool"]
    assert all(e["status"] in ("ok", "error", "limit", "parse_error") for e in tools)
