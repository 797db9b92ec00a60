"""`worldspec run` on black boxes and on the Trust Game, through litellm to the fake OpenAI server."""
from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import load_world

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(ROOT, "worlds", "oracle-extra")
SAMPLE = ["cii-e01-running-maximum", "cri-h01-four-bit-adder", "psi-h03-imperfect-collision",
          "eri-e03-backwards", "ipi-e01-higher-or-lower", "gsi-e03-the-mirror"]


def _last_user(body) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def player(body) -> dict:
    """A fake model: sends the manual's example input each turn; answers tests with a guess."""
    text = _last_user(body)
    opening = body["messages"][1]["content"]
    if re.search(r"Turn \d+ of \d+", text) and "Exploration is over" not in text:
        m = re.search(r"like: `([^`]*)`", opening)
        probe = m.group(1) if m else "C D C"
        if not any(m["role"] == "assistant" for m in body["messages"]):
            probe = "[not, an, input]"  # rejected by every box: costs no turn
        return {"content": f"My next probe:\n```\n{probe}\n```", "usage": (40, 6)}
    if "Round" in text and "Your move" in text:
        return {"content": "```\nC\n```", "usage": (30, 2)}
    if "Incorrect. Attempt" in text:
        return {"content": "```\n1\n```", "usage": (50, 2)}
    return {"content": "```\n0\n```", "usage": (50, 2)}


@pytest.fixture
def server(fake_openai):
    fake_openai.responder = player
    return fake_openai


def test_turn_at_shot_run_of_a_folder_against_a_model(server, tmp_path):
    boxes = tmp_path / "boxes"
    boxes.mkdir()
    for n in SAMPLE:
        shutil.copy(os.path.join(ORACLE, n + ".world"), boxes)
    server.clear()
    out = tmp_path / "run"
    args = ["run", str(boxes), "--model", "openai/fake-box-player", "--api-base", server.base_url, "--turns", "3",
            "--shots", "2", "--no-cache", "--out", str(out), "--quiet", "--retry-delay", "0.001", "--grading", "lenient"]
    r = CliRunner().invoke(main, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    worlds = [load_world(os.path.join(boxes, n + ".world")) for n in SAMPLE]
    tests = sum(len(w.tasks) for w in worlds)
    # per box: 1 free rejection + 3 turns; every test is answered wrongly twice (2 shots)
    assert len(server.requests) == len(worlds) * 4 + tests * 2
    assert all(b["model"] == "fake-box-player" for b in server.requests)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["validity"]["valid"] and summary["turn_shot"] == ["3@2"]
    acc = summary["accuracy"]["openai/fake-box-player"]
    assert set(acc["families"]) == {"CII", "CRI", "PSI", "ERI", "IPI", "GSI"}
    assert set(acc["difficulty"]) == {"easy", "hard"}
    recs = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    assert len(recs) == len(SAMPLE) and all(t["turns_used"] == 3 for t in recs)
    assert all(t["milestones"][0]["tokens"] == 4 * 46 for t in recs)  # exploration tokens only
    report = (out / "report.md").read_text()
    assert "| System | CII easy | CII hard | CRI easy |" in report
    # the second shot was asked after "incorrect", in the tests' one conversation
    retry = [b for b in server.requests if "Incorrect. Attempt 2 of 2" in _last_user(b)]
    assert len(retry) == tests
    # and a resumed run asks nothing again
    server.clear()
    r = CliRunner().invoke(main, args + ["--resume"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert server.requests == []


def test_trust_game_run_against_a_model(server, tmp_path):
    with open(os.path.join(ROOT, "worlds", "interactive", "trust.world"), encoding="utf-8") as f:
        text = f.read()
    path = tmp_path / "trust.world"
    path.write_text(re.sub(r"matches \d+", "matches 1", text).replace("lineup round_robin", "lineup pool")
                    .replace('"COOPERATE"', '"C"').replace('"DEFECT"', '"D"'))  # pool play, one-letter moves
    server.clear()
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", str(path), "--model", "openai/fake-truster", "--api-base", server.base_url,
                                     "--no-cache", "--out", str(out), "--retry-delay", "0.001"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    w = load_world(str(path))
    assert len(server.requests) == sum(w.horizon_for(o, s, k) for o, s, k in w.schedule())
    summary = json.loads((out / "summary.json").read_text())
    rows = {x["system"]: x for x in summary["results"]}
    assert set(rows) == {"openai/fake-truster", "grim", "tft", "random"}
    model = rows["openai/fake-truster"]
    assert model["cooperation_rate"] == 1.0 and model["betrayal_rate"] == 0.0
    allc = [rd for m in w.play_pool(w.strategy("allc")) for rd in m.rounds]
    assert model["score_per_round"] == pytest.approx(sum(x.my_payoff for x in allc) / len(allc), abs=1e-4)
    assert "grim (baseline)" in r.output and "tft (baseline)" in r.output
