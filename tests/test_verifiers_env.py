"""worldspec.verifiers_env: worlds as a `verifiers` taskset whose reward is the world's own grader.

The grading and prompts are checked in any environment; the verifiers classes (Task, Taskset, a
rollout's scoring through Task.score, with a scripted last reply and no model) only where the optional
extra is installed (`pip install -e ".[verifiers]"`).
"""
from __future__ import annotations

import asyncio
import importlib.util
import os

import pytest

from worldspec.runner.answers import extract_answer, fenced, read_answer
from worldspec.runner.episode import grader_for
from worldspec.verifiers_env import grade, prompts, world_for

WORLDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")
BOX = os.path.join(WORLDS, "oracle", "code", "cii-e-bubble-sort.world")
WRONG = "```\nnonsense(\n```"
needs_verifiers = pytest.mark.skipif(importlib.util.find_spec("verifiers") is None,
                                     reason="the optional extra verifiers is not installed")


def box_reply(task) -> str:
    return f"```\n{task.solution}\n```"


def verdict_score(world, task, reply, grading=None) -> float:
    """The grader's own verdict, asked directly (the reference the rewards must equal)."""
    answer = extract_answer(reply) if world.protocol == "turn@shot" else read_answer(world, task, reply)
    v = asyncio.run(grader_for(world).verify(task, answer, *(() if grading is None else (grading,))))
    return float(v.score) if world.protocol == "turn@shot" else float(bool(v.passed))


def test_prompts_are_what_a_run_shows_before_the_first_answer():
    demo, box = world_for("demo"), world_for(BOX)
    p = prompts(demo)
    assert [t.id for t, _, _ in p] == [t.id for t in demo.tasks]
    assert all("## Manual" in user and task.prompt.strip()[:40] in user for task, _, user in p)
    b = prompts(box)
    assert len(b) == len([t for t in box.tasks if t.shape != "play"]) > 0
    task, system, user = b[0]
    assert "black box" in system and task.prompt in user and "Exploration is over" not in user
    assert "## Interaction" not in user  # the run's own session text replaces the manual's


def test_grade_is_the_worlds_grader_on_true_and_wrong_replies():
    demo, box = world_for("demo"), world_for(BOX)
    for task in demo.tasks[:3]:
        for reply in (fenced(task.solution), WRONG):
            assert asyncio.run(grade(demo, task.id, reply)) == verdict_score(demo, task, reply)
        assert asyncio.run(grade(demo, task.id, fenced(task.solution))) == 1.0
    for task in box.tasks[:3]:
        for reply in (box_reply(task), WRONG, "no fence, no answer"):
            assert asyncio.run(grade(box, task.id, reply)) == verdict_score(box, task, reply, "lenient")
        assert asyncio.run(grade(box, task.id, box_reply(task))) == 1.0
        assert asyncio.run(grade(box, task.id, WRONG)) == 0.0
        # published: the raw reply, compared as the released harness compares (this box's tests it reads)
        assert box.published_applies(task.id)
        for reply in (task.solution, box_reply(task), WRONG):
            v = asyncio.run(grader_for(box).verify(task, reply, "published", "first"))
            assert asyncio.run(grade(box, task.id, reply, "published")) == float(v.score)
        assert asyncio.run(grade(box, task.id, task.solution, "published")) == 1.0


def test_bad_input_is_refused_plainly():
    demo = world_for("demo")
    with pytest.raises(ValueError, match="grading is one of lenient, published"):
        asyncio.run(grade(demo, "T1", "x", "strict"))
    with pytest.raises(ValueError, match="has no task 'T99'"):
        asyncio.run(grade(demo, "T99", "x"))
    with pytest.raises(ValueError, match="the verifiers taskset takes milestone worlds and black boxes"):
        prompts(world_for(os.path.join(WORLDS, "interactive", "trust.world")))


@needs_verifiers
@pytest.mark.parametrize("world, n", [("demo", None), ("aliencode", 2), (BOX, 3)])
def test_a_scripted_rollout_is_rewarded_by_the_worlds_grader(world, n):
    import verifiers.v1 as vf

    from worldspec.verifiers_env import WorldTask, WorldTaskset, score, taskset

    ts = taskset(world)
    assert isinstance(ts, WorldTaskset) and issubclass(WorldTask, vf.Task)
    w = world_for(world)
    tasks = list(ts)[:n]
    assert [t.data.task_id for t in tasks] == [t.id for t in w.tasks][:n]
    assert len({t.key for t in tasks}) == len(tasks)
    by_id = {t.id: t for t in w.tasks}
    for vt in tasks:
        task = by_id[vt.data.task_id]
        right = box_reply(task) if w.protocol == "turn@shot" else fenced(task.solution)
        grading = "lenient" if w.protocol == "turn@shot" else None
        for reply in (right, WRONG):
            assert score(vt, reply) == {"grader": verdict_score(w, task, reply, grading)}
        assert score(vt, right) == {"grader": 1.0} and score(vt, WRONG) == {"grader": 0.0}
        assert task.prompt.strip()[:40] in vt.data.prompt and vt.data.system_prompt
