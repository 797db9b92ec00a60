"""Milestone and black-box worlds as a `verifiers` taskset (`pip install "worldspec[verifiers]"`).

    import verifiers.v1 as vf
    from worldspec.verifiers_env import taskset
    ts = taskset("aliencode")                      # or a .world path (an Oracle box), a seed, grading=
    for task in ts: ...                            # vf.Task objects, each with its prompt and @vf.reward

One task per held-out task of the world (an Oracle box: per test). The prompt is what a run shows
before the first answer: a milestone world's system prompt, manual and the task as milestone M0 asks it
(runner/episode.py); a box's manual and the test as turn@shot asks it (runner/protocols/turnshot.py). The
reward, `grader`, is the world's own exact grader on the rollout's last reply, never a model's opinion:

* a milestone world: the reply read as a run reads it (answers.read_answer), verified by the world
  (runtime.Grader.verify in the sandbox's workers): 1.0 when the task passes, else 0.0;
* a black-box world: under `grading="lenient"` (the default) the first fenced block, compared as the box
  compares; under "published" the raw reply compared as the released harness compares (for the tests it
  reads; compiler/blackbox/published.py), without its format re-asks, which need another model turn. The
  reward is the verdict's score (0 to 1).

What this is not (yet): exploration. A rollout answers from the manual alone (zero exploration calls, the
M0 / 0-turn setting); the world's tool as a per-rollout `vf.Toolset` charged by the world's budget is not
written. Tests a box plays move by move (task.shape "play": a game) need that loop too and are left out.

`verifiers` is imported lazily, on first use of a name below, not when this module is imported: it is an
optional extra whose import pulls a large stack (openai, mcp, transformers) and takes seconds, and
worldspec without the extra must still import, document and test every module of its own. The classes
are built once, on first access (module `__getattr__`); `__all__` exports `WorldTaskset` as verifiers
asks of a taskset plugin. Loading it by plugin id (`--env.taskset.id`) does not work as it stands:
verifiers (0.4.0, loaders.py `_import_plugin`) imports an id as a top-level module, and this one is
`worldspec.verifiers_env`; a one-line top-level package re-exporting `WorldTaskset` would serve it.
"""
from __future__ import annotations

import asyncio
import functools
import os

from worldspec.runner.answers import extract_answer
from worldspec.runner.episode import Episode, grader_for
from worldspec.runner.protocols import turnshot
from worldspec.runner.sandbox import load

__all__ = ["WorldTaskset"]
GRADINGS = ("lenient", "published")
_LAZY = ("WorldTaskset", "WorldTask", "WorldTaskData", "WorldTasksetConfig")


@functools.lru_cache(maxsize=64)
def world_for(world: str, seed: int | None = None):
    """The compiled world (by .world path or bundled name) and seed, compiled once per process."""
    return load(os.fspath(world), seed)


def prompts(world) -> list[tuple[object, str, str]]:
    """(task, system prompt, user prompt) for every task a rollout can answer in one reply."""
    if world.protocol == "milestone":
        ep = Episode(world)
        system, opening = ep.opening()
        return [(task, system, f"{opening}\n\n{prompt}") for task, prompt in ep.task_prompts()]
    if world.protocol == "turn@shot":
        manual = world.manual.strip().split("\n## Interaction")[0].rstrip()
        answerable = [t for t in world.tasks if t.shape != "play"]  # a game is played move by move
        out = []
        for i, task in enumerate(answerable, 1):
            opening = world.session(task).opening if world.explore_each_test else ""
            head = f"{manual}\n\n{opening}".rstrip() if opening else manual
            # the test as turn@shot asks it, less its "Exploration is over." (there was none)
            ask = turnshot.test_prompt(task, i, len(answerable)).replace("Exploration is over. ", "", 1)
            out.append((task, turnshot.system_prompt(), f"{head}\n\n{ask}"))
        return out
    raise ValueError(f"{world.name} is run under the {world.protocol} protocol; the verifiers taskset takes "
                     "milestone worlds and black boxes (turn@shot)")


async def grade(world, task_id: str, reply: str | None, grading: str = "lenient") -> float:
    """The world's exact grader on one reply to one task: the reward of a rollout (0 to 1)."""
    if grading not in GRADINGS:
        raise ValueError(f"grading is one of {', '.join(GRADINGS)}, not {grading!r}")
    task = next((t for t in world.tasks if t.id == task_id), None)
    if task is None:
        raise ValueError(f"{world.name} has no task {task_id!r}")
    grader = grader_for(world)  # one per call: its memo of verdicts holds futures of this event loop
    if world.protocol == "milestone":
        verdict = await Episode(world, grader).grade(task, reply)
        return 1.0 if verdict["passed"] else 0.0
    if grading == "published" and world.published_applies(task.id):
        v = await grader.verify(task, reply or "", "published", "first")
    else:
        v = await grader.verify(task, extract_answer(reply or ""), grading)
    return max(0.0, min(1.0, float(v.score)))  # turnshot: lenient scores are clipped to [0, 1]


@functools.cache
def _classes() -> dict:
    import verifiers.v1 as vf

    class WorldTaskData(vf.TaskData):
        """A task's wire data: which world (path or bundled name, seed), which of its tasks, how graded."""

        world: str
        seed: int | None = None
        task_id: str
        grading: str = "lenient"

    class WorldTask(vf.Task[WorldTaskData]):
        """One held-out task of a world; its reward is the world's grader on the last reply."""

        @property
        def key(self) -> str:
            d = self.data
            return f"{d.world}|{d.seed}|{d.task_id}"

        @vf.reward
        async def grader(self, task, trace) -> float:
            """The world's exact grader on the rollout's last reply (1/0 for a milestone task, a box's score)."""
            return await grade(world_for(task.world, task.seed), task.task_id, trace.last_reply, task.grading)

    class WorldTasksetConfig(vf.TasksetConfig):
        """`--env.taskset.world`, `.seed`, `.grading`."""

        world: str = "demo"
        seed: int | None = None
        grading: str = "lenient"

    class WorldTaskset(vf.Taskset[WorldTask, WorldTasksetConfig]):
        """Every task of one milestone world or black box, answered in one reply and graded by the world."""

        def load(self):
            c = self.config
            if c.grading not in GRADINGS:
                raise ValueError(f"grading is one of {', '.join(GRADINGS)}, not {c.grading!r}")
            world = world_for(c.world, c.seed)
            for task, system, prompt in prompts(world):
                data = WorldTaskData(id=task.id, name=f"{world.name}/{task.id}", prompt=prompt,
                                     system_prompt=system, world=c.world, seed=c.seed, task_id=task.id,
                                     grading=c.grading)
                yield WorldTask(data, c.task)

    return {"WorldTaskData": WorldTaskData, "WorldTask": WorldTask,
            "WorldTasksetConfig": WorldTasksetConfig, "WorldTaskset": WorldTaskset}


def __getattr__(name: str):
    if name in _LAZY:
        return _classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def taskset(world="demo", seed: int | None = None, grading: str = "lenient"):
    """The verifiers taskset of one world (a .world path or a bundled name)."""
    classes = _classes()
    return classes["WorldTaskset"](classes["WorldTasksetConfig"](world=os.fspath(world), seed=seed,
                                                                 grading=grading))


def score(task, reply: str) -> dict:
    """Score one scripted reply to a task as verifiers scores a finished rollout (Task.score, no runtime,
    no model): {reward name: value}. For tests and offline checks; outside a running event loop."""
    import verifiers.v1 as vf

    trace = vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
                     agent=vf.AgentInfo(config=vf.AgentConfig()), root_reply=reply)
    asyncio.run(task.score(trace))
    return {name: (r.score if r is not None else None) for name, r in trace.rewards.items()}
