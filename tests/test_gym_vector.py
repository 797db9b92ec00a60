"""worldspec.gym.make_vector_env: many milestone worlds as one gymnasium.vector env, with autoreset."""
from __future__ import annotations

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402

from worldspec.gym import ENV_ID, make_vector_env  # noqa: E402
from worldspec.runner.answers import fenced  # noqa: E402
from worldspec.runner.sandbox import origin  # noqa: E402

WRONG = "```\nnonsense(\n```"


@pytest.fixture(scope="module")
def venv():
    v = gymnasium.make_vec(ENV_ID, num_envs=2, world="demo")  # by id: the registered vector entry point
    yield v
    v.close()


def actions(v, info, answers):
    """One action per copy: copy i answers with answers[i](task id), and ends every exploration round at once."""
    return tuple(answers[i](info["task"][i]) if info["phase"][i] == "answer" else "" for i in range(v.num_envs))


def test_gymnasiums_checker_passes_on_every_copy_and_the_spaces_are_batched(venv):
    assert isinstance(venv, gymnasium.vector.SyncVectorEnv) and venv.num_envs == 2
    assert venv.observation_space == batch_space(venv.single_observation_space, 2)
    assert venv.action_space == batch_space(venv.single_action_space, 2)
    for sub in venv.envs:
        check_env(sub, skip_render_check=True)
    obs, info = venv.reset(seed=0)
    assert venv.observation_space.contains(obs) and all("## Manual" in o for o in obs)
    assert list(info["phase"]) == ["answer", "answer"] and list(info["task"]) == ["T1", "T1"]


def test_rewards_are_the_graders_and_a_finished_copy_is_reset_on_the_next_step(venv):
    world = venv.envs[0].world
    solutions = {t.id: fenced(t.solution) for t in world.tasks}
    obs, info = venv.reset(seed=0)
    totals, steps = np.zeros(2), 0
    terminated = np.zeros(2, dtype=bool)
    while not terminated.any():
        obs, reward, terminated, truncated, info = venv.step(
            actions(venv, info, [solutions.__getitem__, lambda tid: WRONG]))
        assert reward.shape == (2,) and reward.dtype == np.float64 and terminated.shape == truncated.shape == (2,)
        assert venv.observation_space.contains(obs) and not truncated.any()
        totals += reward
        steps += 1
    assert terminated.all()  # lockstep: both copies answered the same tasks and skipped the same rounds
    milestones = world.budget.rounds + 1
    assert steps == milestones * len(world.tasks) + world.budget.rounds
    assert list(totals) == [milestones, 0.0]  # the true answers pass every task, the wrong ones none
    assert list(info["phase"]) == ["done", "done"] and list(info["milestone"]["accuracy"]) == [100.0, 0.0]
    # NEXT_STEP autoreset: this step's actions are ignored; each copy starts a fresh episode at T1
    obs, reward, terminated, truncated, info = venv.step(("EMIT(1)", "EMIT(1)"))
    assert list(reward) == [0.0, 0.0] and not terminated.any() and not truncated.any()
    assert all("## Manual" in o and "held-out task T1" in o for o in obs)
    assert list(info["task"]) == ["T1", "T1"] and list(info["charges"]["calls"]) == [0, 0]
    obs, reward, _, _, info = venv.step((solutions["T1"], WRONG))
    assert list(info["verdict"]["passed"]) == [True, False] and list(info["task"]) == ["T2", "T2"]


def test_same_step_autoreset_hands_back_the_final_observation():
    v = make_vector_env("demo", num_envs=1, autoreset_mode="same_step")
    try:
        assert v.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
        _, info = v.reset(seed=0)
        terminated = np.zeros(1, dtype=bool)
        while not terminated.any():
            obs, reward, terminated, _, info = v.step(actions(v, info, [lambda tid: WRONG]))
        assert "The episode is over" in info["final_obs"][0] and info["final_info"]["phase"][0] == "done"
        assert "held-out task T1" in obs[0] and info["phase"][0] == "answer"  # already reset, same step
    finally:
        v.close()


def test_one_copy_per_seed_variant():
    v = make_vector_env("demo", seeds=[3, 4])
    try:
        assert v.num_envs == 2 and [origin(e.world).seed for e in v.envs] == [3, 4]
        with pytest.raises(ValueError, match="seeds need a world given by name or path"):
            make_vector_env(v.envs[0].world, seeds=[1])
    finally:
        v.close()


@pytest.mark.parametrize("kwargs, message", [
    ({"num_envs": 0}, "num_envs is a whole number of copies, at least 1"),
    ({"num_envs": "2"}, "num_envs is a whole number"),
    ({"seeds": [1, "x"]}, "seeds is a list of ints"),
    ({"seeds": 5}, "seeds is a list of ints"),
    ({"seeds": [1, 2], "num_envs": 3}, "num_envs is 3 but 2 seeds were given"),
    ({"autoreset_mode": "sometimes"}, "autoreset_mode is one of next_step, same_step, disabled"),
])
def test_bad_arguments_are_refused_plainly(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_vector_env("demo", **kwargs)
