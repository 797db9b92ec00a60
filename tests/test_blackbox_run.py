"""The turn@shot protocol: built-in agents, free rejections (lenient grading), shots, lost answers and resume.

The published protocol (one continuing conversation, the released feedback and comparisons) is tested in
test_fidelity_oracle.py."""
from __future__ import annotations

import json
import os
import re

import pytest

from worldspec.compiler import load_world
from worldspec.compiler.blackbox.world import distance
from worldspec.runner.models import Reply, RetryPolicy, ScriptedModel, TransientError
from worldspec.runner.log import read_events

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(ROOT, "worlds", "oracle-extra")
SAMPLE = ["cii-e01-running-maximum", "cri-h01-four-bit-adder", "psi-e01-falling-ball", "eri-h02-growing-shift",
          "ipi-e01-higher-or-lower", "gsi-h01-the-patient-one"]
FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01)


@pytest.fixture(scope="module")
def boxes():
    return [load_world(os.path.join(ORACLE, n + ".world")) for n in SAMPLE]


def test_builtin_agents_give_the_ceiling_and_a_floor(boxes, tmp_path, run_world):
    res = run_world(boxes, [], tmp_path, agents=("oracle", "memorise"), name="sample", turns=10, shots=1)
    s = res.summary
    assert s["validity"]["valid"] and s["turn_shot"] == ["10@1"] and s["protocol"] == "turn@shot"
    acc = s["accuracy"]
    assert acc["oracle"]["overall"] == 100.0
    assert set(acc["oracle"]["families"]) == {"CII", "CRI", "PSI", "ERI", "IPI", "GSI"}
    assert acc["memorise"]["overall"] < 100.0
    lines = [json.loads(x) for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    assert len(lines) == 2 * len(boxes)
    for t in lines:
        assert {"world", "system", "condition", "trajectory", "milestones"} <= set(t)
        m = t["milestones"][0]
        assert t["condition"] == "10@1" and m["t"] == 10 and 0 <= m["accuracy"] <= 100
    report = (tmp_path / "report.md").read_text()
    assert "| System | CII easy | CII hard |" in report and "| oracle | 100.0 |" in report


def _policy(request):
    """A scripted model: one unreadable input first (free), then probes; answers wrongly, then right."""
    text = request.messages[-1]["content"]
    if request.purpose == "explore":
        n = sum(1 for m in request.messages if m["role"] == "assistant")
        if n == 0:
            return Reply(content="let me think... ```\n[1, 2,\n```")
        return Reply(content=f"```\n[{n}, 0, {n + 1}]\n```")
    if "Incorrect. Attempt 2" in text:
        return Reply(content="```\n" + _running_max(request) + "\n```")
    return Reply(content="```\n[0]\n```")


def _running_max(request):
    # the tests share one conversation: the input asked is the last one asked
    m = re.search(r"for the input (\[[^\]]*\])", [x["content"] for x in request.messages if x["role"] == "user"
                                                  and "for the input" in x["content"]][-1])
    xs = json.loads(m.group(1))
    out, best = [], None
    for x in xs:
        best = x if best is None else max(best, x)
        out.append(best)
    return json.dumps(out).replace(",", ", ")


def test_turns_shots_and_free_rejections(boxes, tmp_path, run_world):
    box = boxes[0]  # running maximum, 5 tests
    model = ScriptedModel(_policy, name="scripted")
    res = run_world([box], [model], tmp_path, turns=3, shots=2, grading="lenient")
    rec = res.trajectories[0]
    assert rec["condition"] == "3@2" and rec["turns_used"] == 3
    # 1 rejected input (free) + 3 counted turns, then 5 tests x 2 shots
    assert model.calls == 4 + 5 * 2
    assert rec["endpoint"] == 100.0  # every test right at the second shot
    assert all(len(t["shots"]) == 2 and not t["shots"][0]["passed"] for t in rec["tests"])
    events = list(read_events(tmp_path / "log.jsonl"))
    turns = [e for e in events if e["type"] == "box_turn"]
    assert [e["counted"] for e in turns] == [False, True, True, True]
    assert "rejected" in turns[0]["feedback"]
    # with one shot the same answers score zero
    model1 = ScriptedModel(_policy, name="scripted")
    res1 = run_world([box], [model1], tmp_path / "one", turns=3, shots=1, grading="lenient")
    assert res1.trajectories[0]["endpoint"] == 0.0 and model1.calls == 4 + 5


def test_a_game_box_scores_against_the_exact_optimum(boxes, tmp_path, run_world):
    gsi = boxes[-1]  # tit for two tats; tests of 6 and 10 rounds
    always_c = ScriptedModel(lambda r: Reply(content="```\n" + " ".join(["C"] * 10) + "\n```"
                                             if "10-round" in r.messages[-1]["content"] else
                                             "```\n" + " ".join(["C"] * 6) + "\n```"), name="nice")
    rec = run_world([gsi], [always_c], tmp_path, turns=2, shots=1).trajectories[0]
    # all C scores 3 a round; the optimum alternates D, C and defects at the end
    want = [100 * 18 / gsi.tests[0].optimum.value, 100 * 30 / gsi.tests[1].optimum.value]
    assert rec["endpoint"] == pytest.approx(sum(want) / 2, abs=1e-4)


def test_lost_answers_are_not_wrong_and_resume_fills_them_in(boxes, tmp_path, run_world):
    box = boxes[0]
    calls = {"n": 0}

    def flaky(request):
        calls["n"] += 1
        if request.purpose == "task:t3":
            raise TransientError("503 from a flaky provider")
        return _policy(request)

    res = run_world([box], [ScriptedModel(flaky, name="m")], tmp_path, turns=3, shots=2, retry=FAST,
                    grading="lenient")
    v = res.summary["validity"]
    # the tests share one conversation: t4 and t5 wait for t3 (unscored, never wrong)
    assert not v["valid"] and v["lost_answers"] == 3
    t3 = next(t for t in res.trajectories[0]["tests"] if t["test"] == "t3")
    assert t3["lost"] and t3["score"] is None
    assert res.trajectories[0]["endpoint"] == 100.0  # t1 and t2; t3 to t5 are not scored wrong
    good = ScriptedModel(_policy, name="m")
    res2 = run_world([box], [good], tmp_path, turns=3, shots=2, resume=True, grading="lenient")
    assert res2.summary["validity"]["valid"] and res2.trajectories[0]["endpoint"] == 100.0
    assert good.calls == 3 * 2  # only t3, t4 and t5 were asked again (two shots each)
    lines = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 1


def test_nearest_input_distance():
    assert distance([1, 2, 3], [1, 2, 4]) < distance([1, 2, 3], [9, 9, 9])
    assert distance("hello", "hellp") < distance("hello", "zzzzz")
    assert distance(5.0, 5.1) < distance(5.0, 9.0)
