"""`worldspec run` on judge worlds: the keyword judge offline, a judge model through the fake server, pass@k*."""
from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from worldspec.cli import EXIT_INPUT, main
from worldspec.compiler import load_world
from worldspec.runner.config import RunConfig
from worldspec.runner.models import FatalError, LitellmModel
from worldspec.runner.protocols import PROTOCOLS
from worldspec.runner.metrics import judge_results
from worldspec.runner.protocols.judge import PASS_K_CAP, k_star, make_judge
from worldspec.runner.log import read_events

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUZZLES = os.path.join(ROOT, "worlds", "interactive", "puzzles")
MATH = os.path.join(ROOT, "worlds", "interactive", "math")


def run(args, exit_code=0):
    r = CliRunner().invoke(main, ["run", *args, "--quiet", "--retry-delay", "0.001"], catch_exceptions=False)
    assert r.exit_code == exit_code, r.output
    return r


def outputs(out):
    summary = json.loads((out / "summary.json").read_text())
    records = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    events = list(read_events(out / "log.jsonl"))
    return summary, records, events, (out / "report.md").read_text()


def by_system(summary) -> dict:
    return {(r["system"], r["setting"]): r for r in summary["results"]}


# ---------------------------------------------------------------- offline: the keyword judge and built-in agents


def test_the_puzzles_run_offline_with_the_keyword_judge(tmp_path):
    out = tmp_path / "puzzles"
    r = run([PUZZLES, "--judge", "keyword", "--out", str(out)])
    assert "| oracle | puzzle | keyword | 100.0 (12/12) |" in r.output
    summary, records, events, report = outputs(out)
    assert summary["protocol"] == "judge" and summary["validity"]["valid"]
    oracle, naive = by_system(summary)[("oracle", "puzzle")], by_system(summary)[("naive", "puzzle")]
    assert oracle["accuracy"] == 100.0 and naive["accuracy"] == 0.0
    worlds = [load_world(os.path.join(PUZZLES, f)) for f in sorted(os.listdir(PUZZLES))]
    # the oracle asks one question per key fact, every one answered yes, then answers once
    facts = sum(len(w.facts) for w in worlds)
    assert oracle["questions"] == {"yes": facts, "no": 0, "both": 0, "irrelevant": 0}
    assert oracle["turns_solved_mean"] == pytest.approx(facts / 12 + 1)
    # the naive agent submits every turn and the forced final: 21 moves, all incorrect
    assert naive["turns_mean"] == 21 and naive["submissions"] == 21 * 12 and naive["turns_solved_mean"] is None
    assert all(r["condition"] == "interactive" for r in records) and len(records) == 24
    judged = [e for e in events if e["type"] == "judge"]
    assert all(e["raw"] == [e["label"]] and e["normalised"] == e["label"] for e in judged)
    assert {e["by"] for e in judged} == {"keyword", "answer check"}
    assert "pass@k" not in report and "## Worlds" in report


def test_the_math_problems_run_offline_with_pass_at_k_star(tmp_path):
    out = tmp_path / "math"
    run([MATH, "--judge", "keyword", "--out", str(out)])
    summary, records, events, report = outputs(out)
    assert summary["validity"]["valid"]
    oracle = by_system(summary)[("oracle", "math")]
    pk = oracle["pass_at_k"]
    # k* from the measured word counts: the oracle's session is a few short questions, its solution a derivation
    assert pk["k"] == k_star(pk["pass1_tokens"], pk["interactive_tokens"]) == 1
    assert oracle["accuracy"] == pk["pass1"] == pk["pass_k"] == 100.0 and pk["gap"] == 0.0
    naive = by_system(summary)[("naive", "math")]["pass_at_k"]
    assert naive["k"] == k_star(naive["pass1_tokens"], naive["interactive_tokens"]) > 1
    assert naive["pass_k"] == 0.0
    samples = [r for r in records if r["condition"] == "pass@k" and r["system"] == "naive"]
    assert len(samples) == 13 and all(len(r["samples"]) == naive["k"] for r in samples)
    assert len([e for e in events if e["type"] == "sample"]) == 13 * (1 + naive["k"])
    assert "Interactive - pass@k*" in report and "k minimises" not in report


@pytest.mark.parametrize("pass1, interactive, k", [
    (100, 279, 3), (100, 250, 2), (100, 249, 2), (100, 251, 3), (100, 40, 1), (100, 0, 1), (0, 500, 1),
    (None, 500, 1), (100, None, 1), (10, 10 * PASS_K_CAP * 4, PASS_K_CAP), (1000, 15803, 16),
])
def test_k_star_is_the_token_matched_argmin(pass1, interactive, k):
    """|k* . E[T_pass^(1)] - E[T_interactive]| = min over k >= 1 (ties: the smaller k)."""
    assert k_star(pass1, interactive) == k


def test_the_dry_run_plans_without_playing(tmp_path):
    r = run([MATH, "--judge", "keyword", "--dry-run"])
    assert "13 judge world(s) x 2 system(s), judge keyword" in r.output and "model calls: at most" in r.output
    assert not (tmp_path / "runs").exists()


def test_a_bad_judge_request_is_bad_input(tmp_path):
    r = CliRunner().invoke(main, ["run", PUZZLES, "--judge", "model", "--out", str(tmp_path / "x"), "--quiet"])
    assert r.exit_code == EXIT_INPUT and "needs --judge-model" in r.output
    r = CliRunner().invoke(main, ["run", PUZZLES, "--agent", "wizard", "--out", str(tmp_path / "y"), "--quiet"])
    assert r.exit_code == EXIT_INPUT and "unknown agent 'wizard' for judge worlds" in r.output


def test_the_judge_model_is_never_a_player():
    player = LitellmModel("openai/p", api_base="http://x", timeout=5.0)
    with pytest.raises(FatalError, match="needs --judge-model: InteractiveBench fixes one judge model"):
        make_judge([player], RunConfig(api_base="http://x"))
    judge = make_judge([player], RunConfig(api_base="http://x", judge_model="openai/j"))
    assert judge.model.model_id == "openai/j" and judge.model.name == "judge:openai/j" and judge.model.timeout == 5
    assert make_judge([player], RunConfig(judge="keyword")).model is None
    assert make_judge([], RunConfig()).model is None
    assert make_judge([], RunConfig(judge_model="openai/j")).model.model_id == "openai/j"


def test_the_judge_protocol_is_registered():
    assert PROTOCOLS["judge"].many_worlds and PROTOCOLS["judge"].default_agents([]) == ("oracle", "naive")


# ---------------------------------------------------------------- a judge model through the fake server


def last_user(messages) -> str:
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def responder(body) -> dict:
    """The fake server plays both parts: the player (fake-player) and the judge (fake-judge)."""
    msgs = body["messages"]
    if body["model"] == "fake-judge" and msgs[0]["content"].startswith("You grade answers strictly"):
        # the strict grader, in the released harness's form: analysis, the marker line, then 1 or 0
        expected = msgs[1]["content"].split("Expected answer:\n")[1].split("\n")[0].strip()
        got = msgs[1]["content"].split("Submitted answer:\n")[1].split("\n")[0].strip()
        return {"content": f"The answers {'agree' if got == expected else 'differ'}.\n$$$$\n"
                           f"{1 if got == expected else 0}", "usage": (200, 8)}
    if body["model"] == "fake-judge":
        move = next(m["content"] for m in reversed(msgs) if m["content"].startswith(("QUESTION:", "ANSWER:")))
        reasked = last_user(msgs).startswith("Reply with exactly one word")
        if move.startswith("ANSWER:"):
            return {"content": "**Verdict:** correct", "usage": (300, 3)}
        if "ghost" in move:  # the judge rambles, is asked again, and rambles again: invalid
            return {"content": "Hard to say, it depends on the story.", "usage": (300, 9)}
        if "draught" in move:  # the judge rambles once, then answers
            return {"content": "no" if reasked else "The draught is not part of it, I would say.", "usage": (300, 5)}
        return {"content": "Yes.", "usage": (300, 1)}
    if msgs[0]["content"].startswith("You are a math solver"):
        return {"content": "Working it out...\nANSWER: 7", "usage": (60, 20)}
    asked = sum(1 for m in msgs if m["role"] == "assistant")
    script = ["QUESTION: Was there a gas?", "QUESTION: Was there a ghost?", "QUESTION: Was there a draught?"]
    if asked < len(script):
        return {"content": f"Let me think.\n{script[asked]}", "usage": (100, 10)}
    if "interactive math problem" in msgs[1]["content"]:
        return {"content": "ANSWER: 40", "usage": (100, 10)}  # right for the round trip only
    return {"content": "ANSWER: carbon dioxide from fermenting wine", "usage": (100, 10)}


@pytest.fixture
def server(fake_openai):
    fake_openai.responder = responder
    return fake_openai


def model_args(server, out):
    return ["--model", "openai/fake-player", "--judge-model", "openai/fake-judge", "--api-base", server.base_url,
            "--no-cache", "--out", str(out)]


def test_a_judge_model_through_the_fake_server_logs_raw_and_normalised_replies(server, tmp_path):
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copy(os.path.join(PUZZLES, "p01-candles.world"), folder)
    out = tmp_path / "run"
    run([str(folder), *model_args(server, out)])
    summary, records, events, report = outputs(out)
    assert summary["validity"]["valid"] and summary["judge_model"] == "openai/fake-judge"
    [rec] = records
    assert rec["solved"] and rec["solved_at"] == 4 and rec["turns_used"] == 4 and rec["judge"] == "openai/fake-judge"
    assert rec["questions"] == {"yes": 1, "irrelevant": 1, "no": 1} and rec["invalid_judge"] == 1
    assert rec["tokens"] == 40 and rec["tokens_in"] == 400
    judged = {e["turn"]: e for e in events if e["type"] == "judge"}
    assert (judged[1]["raw"], judged[1]["normalised"], judged[1]["label"]) == (["Yes."], "yes", "yes")
    assert judged[2]["raw"] == ["Hard to say, it depends on the story."] * 2
    assert (judged[2]["normalised"], judged[2]["label"], judged[2]["invalid"]) == ("invalid", "irrelevant", True)
    assert (judged[3]["raw"], judged[3]["normalised"]) == (["The draught is not part of it, I would say.", "no"], "no")
    assert (judged[4]["move"], judged[4]["raw"], judged[4]["label"]) == ("answer", ["**Verdict:** correct"], "correct")
    assert {e["by"] for e in judged.values()} == {"openai/fake-judge"}
    # requests: 4 player moves; judge: 1 + 2 (re-asked) + 2 (re-asked) + 1 (the submission)
    players = [b for b in server.requests if b["model"] == "fake-player"]
    judges = [b for b in server.requests if b["model"] == "fake-judge"]
    assert len(players) == 4 and len(judges) == 6
    truth = load_world(os.path.join(PUZZLES, "p01-candles.world")).truth
    assert all(truth in b["messages"][0]["content"] for b in judges)
    assert not any(truth[:40] in m["content"] for b in players for m in b["messages"])
    # the player is told the normalised label, never the judge's raw reply
    assert "Judge: irrelevant." in last_user(players[2]["messages"]) and "Hard to say" not in json.dumps(players[-1])
    # the judge sees the earlier moves with their labels
    assert [m["content"] for m in judges[-1]["messages"][1:]] == [
        "QUESTION: Was there a gas?", "yes", "QUESTION: Was there a ghost?", "irrelevant",
        "QUESTION: Was there a draught?", "no", "ANSWER: carbon dioxide from fermenting wine"]
    assert "| openai/fake-player | puzzle | openai/fake-judge | 100.0 (1/1) |" in report
    assert "| 1 | 40 |" in report  # one invalid judge reply; 40 output tokens
    # a resumed run asks nothing again
    server.clear()
    run([str(folder), *model_args(server, out), "--resume"])
    assert server.requests == []


def test_math_against_a_model_matches_pass_at_k_star_on_tokens(server, tmp_path):
    folder = tmp_path / "two"
    folder.mkdir()
    for name in ("m06-round-trip.world", "m07-level.world"):
        shutil.copy(os.path.join(MATH, name), folder)
    out = tmp_path / "run"
    run([str(folder), *model_args(server, out)])
    worlds = [load_world(os.path.join(folder, f)) for f in sorted(os.listdir(folder))]
    summary, records, events, report = outputs(out)
    assert summary["validity"]["valid"]
    row = by_system(summary)[("openai/fake-player", "math")]
    # interactive, 10 output tokens a move: the round trip is solved by the answer after 3 questions (4 moves),
    # LEVEL never (21 moves): E[T_interactive] = (40 + 210) / 2 = 125; a complete solution is 20 tokens,
    # and |6 * 20 - 125| = 5 is the least
    pk = row["pass_at_k"]
    assert (pk["interactive_tokens"], pk["pass1_tokens"], pk["k"]) == (125, 20, 6)
    solves = [b for b in server.requests if b["messages"][0]["content"].startswith("You are a math solver")]
    assert len(solves) == 2 * 6 and all(b["messages"][1]["content"] in {w.surface for w in worlds} for b in solves)
    # math submissions go to the judge model's strict grader (a conversation of its own), never the judger's
    assert (row["accuracy"], row["solved"], row["turns_solved_mean"]) == (50.0, 1, 4)
    assert (pk["pass1"], pk["pass_k"], pk["gap"]) == (0.0, 0.0, 50.0)
    judged = [e for e in events if e["type"] == "judge" and e["move"] == "answer"]
    assert judged and {e["by"] for e in judged} == {"openai/fake-judge (strict grader)"}
    grades = [b for b in server.requests if b["model"] == "fake-judge"
              and b["messages"][0]["content"].startswith("You grade answers strictly")]
    assert grades and all(b["temperature"] == 0.0 and len(b["messages"]) == 2 for b in grades)
    assert not any(b["model"] == "fake-judge" and last_user(b["messages"]).startswith("ANSWER:")
                   for b in server.requests)
    # temperatures as released: player 0 in the sessions, 0.8 for pass@k samples, the judge 0
    assert {b["temperature"] for b in server.requests if b["model"] == "fake-player"} == {0.0, 0.8}
    assert {b["temperature"] for b in solves} == {0.8}
    assert "| openai/fake-player | 50.0 | 0.0 | 6 | 0.0 | 50.0 | 125 | 20 |" in report


def test_judge_results_count_only_finished_sessions():
    base = {"condition": "interactive", "setting": "puzzle", "judge": "keyword", "turns_used": 5, "questions": {},
            "submissions": 1, "invalid_judge": 0, "tokens": 10}
    records = [{**base, "world": "a", "system": "s", "status": "complete", "solved": True, "solved_at": 5},
               {**base, "world": "b", "system": "s", "status": "lost", "solved": False, "solved_at": None}]
    [row] = judge_results(records)["results"]
    assert (row["n"], row["solved"], row["accuracy"], row["pass_at_k"]) == (1, 1, 100.0, None)
