"""worldspec.gym: a milestone world as a Gymnasium environment, checked by Gymnasium's own checker."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from worldspec.gym import ENV_ID, WorldEnv  # noqa: E402
from worldspec.runner.answers import fenced  # noqa: E402
from worldspec.runner.episode import EpisodeError  # noqa: E402

WORLDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")


@pytest.fixture
def env():
    e = WorldEnv("demo")
    yield e
    e.close()


def play(env, answer, probes_per_round: int = 1):
    """Play one episode: `answer(task_id)` answers each task; returns the rewards and infos of every step."""
    obs, info = env.reset(seed=0)
    rewards, infos, steps = [], [info], 0
    done = False
    while not done:
        if info["phase"] == "answer":
            action = answer(info["task"])
        else:
            action = "EMIT(1)" if infos[-1].get("charge") is None or steps % (probes_per_round + 1) else ""
            steps += 1
        obs, reward, done, truncated, info = env.step(action)
        assert isinstance(obs, str) and env.observation_space.contains(obs) and not truncated
        rewards.append(reward)
        infos.append(info)
    return rewards, infos


def test_the_gymnasium_checker_passes():
    env = gymnasium.make(ENV_ID, world="demo", render_mode="ansi")  # made by id: the checker tries render modes
    try:
        check_env(env.unwrapped, skip_render_check=False)
    finally:
        env.close()


def test_registered_and_made_by_id():
    env = gymnasium.make(ENV_ID, world="demo")
    try:
        obs, info = env.reset(seed=0)
        assert "## Manual" in obs and "held-out task T1" in obs and info["phase"] == "answer"
    finally:
        env.close()


def test_true_answers_earn_full_reward_at_every_milestone_and_charges_are_counted(env):
    world = env.world
    solutions = {t.id: fenced(t.solution) for t in world.tasks}
    rewards, infos = play(env, lambda tid: solutions[tid])
    milestones = [i["milestone"] for i in infos if "milestone" in i]
    assert [m["t"] for m in milestones] == list(range(world.budget.rounds + 1))
    assert [r for r in rewards if r] == [1.0] * (world.budget.rounds + 1)
    assert sum(rewards) == world.budget.rounds + 1
    probes = [i["charge"] for i in infos if "charge" in i]
    assert probes and all(p["counted"] and p["status"] == "ok" for p in probes)
    last = infos[-1]
    assert last["phase"] == "done"
    assert last["charges"]["calls"] == len(probes) == last["charges"]["attempted"]
    assert last["charges"]["probe_units"] == sum(p["units"] for p in probes) > 0
    assert last["charges"]["calls_left"] == world.budget.max_calls - len(probes)


def test_wrong_answers_earn_nothing(env):
    rewards, infos = play(env, lambda tid: "```\nnonsense(\n```")
    assert sum(rewards) == 0 and infos[-1]["phase"] == "done"
    assert all(not i["verdict"]["passed"] for i in infos if "verdict" in i)


def test_a_round_ends_when_its_calls_are_spent(env):
    b = env.world.budget
    env.reset(seed=0)
    for _ in env.world.tasks:
        obs, reward, done, _, info = env.step("```\nx\n```")
    assert info["phase"] == "explore" and info["charges"]["round_calls_left"] == b.calls_per_round
    for k in range(b.calls_per_round):
        obs, reward, done, _, info = env.step("EMIT(1)")
    assert info["phase"] == "answer" and info["task"] == env.world.tasks[0].id
    assert info["charges"]["calls"] == b.calls_per_round and "Milestone M1" in obs


def test_a_world_of_another_protocol_is_refused():
    with pytest.raises(EpisodeError, match="turn@shot"):
        WorldEnv(os.path.join(WORLDS, "oracle-extra", "cii-e01-running-maximum.world"))


def test_an_action_that_is_not_text_is_refused_before_anything_is_charged(env):
    env.reset(seed=0)
    for bad in (None, 5, b"EMIT(1)", ["EMIT(1)"]):
        with pytest.raises(ValueError, match="an action is text"):
            env.step(bad)
    _, _, _, _, info = env.step("```\nx\n```")
    assert info["task"] == env.world.tasks[1].id  # the refused actions answered nothing
    for _ in env.world.tasks[1:]:
        _, _, _, _, info = env.step("```\nx\n```")
    assert info["phase"] == "explore"
    with pytest.raises(ValueError, match="an action is text"):
        env.step(None)
    assert info["charges"]["calls"] == 0
    obs, _, _, _, info = env.step("EMIT(1)\n" * 10_000)  # longer than the action space: the world's own feedback
    assert "too long" in obs and info["charges"]["attempted"] == 1


def test_a_closed_environment_and_an_unknown_render_mode_are_refused_plainly():
    env = WorldEnv("demo")
    env.reset(seed=0)
    env.close()
    for call in (lambda: env.step("EMIT(1)"), lambda: env.reset(seed=0)):
        with pytest.raises(RuntimeError, match="environment is closed"):
            call()
    with pytest.raises(ValueError, match="render_mode 'human' is not supported"):
        WorldEnv("demo", render_mode="human")


def test_a_terminated_episode_grants_no_more_probes_until_reset(env):
    rewards, infos = play(env, lambda tid: "```\nx\n```")
    assert infos[-1]["phase"] == "done"
    calls = infos[-1]["charges"]["calls"]
    for action in ("EMIT(1)", "", "```\nx\n```"):
        with pytest.raises(RuntimeError, match="the episode is over"):
            env.step(action)
    assert env.episode.charges()["calls"] == calls  # nothing ran after the end
    obs, info = env.reset(seed=0)
    assert info["phase"] == "answer" and env.step("```\nx\n```")[4]["task"] == env.world.tasks[1].id


def test_a_world_is_a_name_a_path_or_a_world_and_nothing_else():
    for bad in (5, None):
        with pytest.raises(TypeError, match="world is a .world file, a bundled world's name or a compiled world"):
            WorldEnv(bad)
    env = WorldEnv(Path(WORLDS) / "demo.world")
    try:
        assert env.world.name == "Demo"
    finally:
        env.close()
