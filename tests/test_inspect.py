"""worldspec.inspect: a milestone world run as an Inspect AI task, offline, with Inspect's mock model.

The tasks are looked up by their registered names (`worldspec/demo`: the `inspect_ai` entry point
in pyproject.toml, as `inspect eval worldspec/demo` looks them up). Inspect namespaces a task by
the installed distribution of its module, which it reads from the metadata first on sys.path: run
from the repository, that is the build's `worldspec.egg-info` (it says nothing of an editable
install), so the `registered` fixture puts the repository after site-packages before Inspect first
loads the module (the `inspect` command is not run from its working directory: it is not
affected). Inspect's mockllm counts the tokens of replies that carry no usage with a tokenizer it
downloads, so the mock replies here say their usage.
"""
from __future__ import annotations

import importlib
import os
import sys

import pytest

inspect_ai = pytest.importorskip("inspect_ai")
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402

from worldspec.compiler import load_world  # noqa: E402
from worldspec.runner.answers import fenced, reportable_rules, rule_line  # noqa: E402
from worldspec.runner.episode import EpisodeError  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORLDS = os.path.join(ROOT, "worlds")
USAGE = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)


def text(content: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm", content=content)
    out.usage = USAGE
    return out


def mock(world, *, knows: bool, probes_per_round: int = 1):
    """Inspect's mock model, replying from what it is asked: the true answers and rules when it `knows`;
    exploring, it asks for `probes_per_round` calls in one reply, then ends the round."""
    solutions = {t.id: fenced(t.solution) for t in world.tasks}
    rules = fenced("\n".join(rule_line(r) for r in reportable_rules(world)))

    def reply(messages, tools, tool_choice, config):
        last = messages[-1]
        said = last.text if hasattr(last, "text") else str(last.content)
        if tools:  # exploring: probes_per_round calls, then end the round
            calls = 0
            for m in reversed(messages):
                if m.role == "user":
                    break
                calls += m.role == "tool"
            if not calls:
                out = ModelOutput.for_tool_call("mockllm", world.tool.name, {world.tool.parameter: "EMIT(1)"})
                out.choices[0].message.tool_calls = [
                    ToolCall(id=f"call_{i}", function=world.tool.name, arguments={world.tool.parameter: "EMIT(1)"})
                    for i in range(probes_per_round)]
                out.usage = USAGE
                return out
            return text("Done with this round.")
        if "Report the rules" in said:
            return text(rules if knows else "UNKNOWN")
        for tid, answer in solutions.items():
            if f"held-out task {tid} with" in said:
                return text(answer if knows else "```\nnonsense(\n```")
        return text("?")

    return get_model("mockllm/model", custom_outputs=reply)


def run(task_name: str, model, tmp_path, **task_args):
    (log,) = inspect_ai.eval(task_name, model=model, task_args=task_args, log_dir=str(tmp_path),
                             display="none")
    assert log.status == "success", log.error
    return log


@pytest.fixture(scope="module")
def registered():
    """worldspec.inspect, loaded as Inspect loads it (see the module docstring)."""
    saved = list(sys.path)
    here = [p for p in sys.path if os.path.abspath(p or ".") == ROOT]
    sys.path[:] = [p for p in sys.path if p not in here] + here
    try:
        yield importlib.import_module("worldspec.inspect")
    finally:
        sys.path[:] = saved


@pytest.fixture(scope="module")
def demo(registered):
    return load_world(os.path.join(WORLDS, "demo.world"))


def test_the_registered_task_scores_every_milestone_with_the_worlds_grading(demo, tmp_path):
    log = run("worldspec/demo", mock(demo, knows=True), tmp_path, answers=1)
    (sample,) = log.samples
    (score,) = sample.scores.values()
    rounds = demo.budget.rounds
    assert score.value == {f"M{t}": 1.0 for t in range(rounds + 1)}
    records = score.metadata["milestones"]
    assert [m["t"] for m in records] == list(range(rounds + 1))
    assert records[-1]["rules_stated_correctly"] == [r.id for r in reportable_rules(demo)]
    assert all(v["passed"] for v in records[-1]["verdicts"])
    charges = score.metadata["charges"]
    assert charges["calls"] == rounds and charges["attempted"] == rounds
    assert charges["calls_left"] == demo.budget.max_calls - rounds and charges["probe_units"] > 0
    # one scored checkpoint per milestone, averaged over epochs (trajectories)
    assert {s.name: s.metrics["mean"].value for s in log.results.scores} == {f"M{t}": 1.0 for t in range(rounds + 1)}


def test_wrong_answers_score_zero_and_the_budget_caps_the_calls(demo, tmp_path):
    many = demo.budget.calls_per_round + 3  # asks for more calls than a round allows
    log = run("worldspec/world", mock(demo, knows=False, probes_per_round=many), tmp_path,
              world=os.path.join(WORLDS, "demo.world"), answers=2)
    (sample,) = log.samples
    (score,) = sample.scores.values()
    assert set(score.value.values()) == {0.0}
    records = score.metadata["milestones"]
    assert all(len(ys) == 2 for ys in records[0]["tasks"].values())
    assert records[-1]["rules_stated_correctly"] == []
    b = demo.budget
    assert score.metadata["charges"]["attempted"] == min(b.max_calls, b.rounds * b.calls_per_round)
    refused = [m for m in sample.messages if m.role == "tool" and str(m.content).startswith("rejected: not run")]
    assert refused  # the calls over a round's budget were answered, not run


def test_a_world_of_another_protocol_is_refused(registered):
    box = os.path.join(WORLDS, "oracle-extra", "cii-e01-running-maximum.world")
    with pytest.raises(EpisodeError, match="turn@shot"):
        registered.world_task(box)
