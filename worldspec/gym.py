"""A milestone world as a Gymnasium environment (`pip install "worldspec[gym]"`).

    env = gymnasium.make("worldspec.gym:worldspec/World-v0", world="demo")   # or WorldEnv("demo")
    obs, info = env.reset(seed=0)

An episode is one trajectory of the milestone protocol, driven step by step through
runner/episode.py (the same prompts, budget and grading as `worldspec run`). Observations
and actions are text. The episode opens on the manual and the first held-out task of
milestone M0; at a milestone each action answers the task shown (read as a run reads it:
runner/answers.py `read_answer`), and the step that answers the milestone's last task is rewarded with the
milestone's accuracy (0 to 1; one answer per task). Then a round of exploration starts:
each action is one call of the world's tool (a program), its observation the world's
feedback, until the round's calls are spent or the action is empty (ends the round early);
then the next milestone. The episode terminates after the last milestone.

`info` holds the phase ("answer" or "explore"), the task shown, the charges and budget
(calls used and left, probe units, rounds), what the last call cost, and at the end of a
milestone its record (accuracy, verdicts per task). A world of another protocol is refused.

An action that is not text (None, bytes, a number) is refused with a ValueError before anything is
charged; an instance of a str subclass is taken as the plain text it holds; text longer than the action space's bound is not refused: as an answer it is graded like
any other, as a probe it gets the feedback `worldspec run` gives (the program is too long). A
closed environment refuses reset() and step(); a terminated episode refuses step() until reset().

Many worlds at once (`make_vector_env`, or `gymnasium.make_vec(ENV_ID, num_envs=N, world=...)`): a
`gymnasium.vector.SyncVectorEnv` over one WorldEnv per copy, either N copies of one world or one copy per
seed variant of it (`seeds=[...]`, each compiled as `worldspec run --seed` compiles it). Observations and
actions are tuples of text, rewards a float array; the grader is each copy's own world's exact grader.
An episode that terminates is reset by the vector env itself (gymnasium's autoreset; default NEXT_STEP:
the next step() of that copy ignores its action and returns the reset observation with reward 0).
Sync, not Async: each copy already runs its probes and grading in the sandbox's worker processes, so a
process per copy would only add pickling on a 2-core machine.

Probes and grading run in runner/sandbox.py's worker processes, which do not import the script
that made the environment: a script without an `if __name__ == "__main__":` guard runs once.
"""
from __future__ import annotations

import asyncio
import os

import gymnasium
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from worldspec.runner.episode import Episode, grader_for
from worldspec.runner.sandbox import load

MAX_OBSERVATION = 1_000_000  # characters: the opening holds the whole manual and its examples
MAX_ACTION = 20_000
ENV_ID = "worldspec/World-v0"


class AnyText(spaces.Text):
    """Text of any characters (a manual is not alphanumeric), bounded in length."""

    def contains(self, x) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


class WorldEnv(gymnasium.Env):
    """One milestone world as a text environment; reward = milestone accuracy."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # fps: the checker asks; text has no frame rate

    def __init__(self, world="demo", seed: int | None = None, render_mode: str | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} is not supported: a text world renders as "
                             f"{', '.join(map(repr, self.metadata['render_modes']))} (or None)")
        self.world = load(os.fspath(world), seed) if isinstance(world, (str, os.PathLike)) else world
        if not hasattr(self.world, "protocol"):
            raise TypeError(f"world is a .world file, a bundled world's name or a compiled world, not "
                            f"{type(world).__name__}")
        self.render_mode = render_mode
        self.observation_space = AnyText(MAX_OBSERVATION, min_length=0)
        self.action_space = AnyText(MAX_ACTION, min_length=0)
        self._loop = asyncio.new_event_loop()  # the grader's calls are coroutines; one loop serves them all
        self._grader = grader_for(self.world)
        Episode(self.world)  # refuses a world of another protocol now rather than at reset
        self.episode: Episode | None = None
        self._queue: list = []  # the tasks of the current milestone still to answer
        self._verdicts: dict = {}
        self._last = ""
        self._over = False  # the episode terminated: step() needs a reset() first

    def _run(self, coro):
        return self._loop.run_until_complete(coro)

    def _open_milestone(self) -> str:
        self._queue = [p for p in self.episode.task_prompts()]
        self._verdicts = {task.id: [] for task, _ in self._queue}
        return self._queue[0][1]

    def _info(self, **extra) -> dict:
        phase = "answer" if self._queue else "explore"
        info = {"phase": phase, "charges": self.episode.charges()}
        if self._queue:
            info["task"] = self._queue[0][0].id
        return {**info, **extra}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._open()
        super().reset(seed=seed)
        self.episode = Episode(self.world, self._grader)
        self._over = False
        system, opening = self.episode.opening()
        self._last = "\n\n".join((system, opening, self._open_milestone()))
        return self._last, self._info()

    def step(self, action: str):
        self._open()
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        if self._over:
            raise RuntimeError("the episode is over (it terminated at its last milestone); call reset() for another")
        if not isinstance(action, str):
            raise ValueError(f"an action is text (a str: an answer, a program, or '' to end a round), "
                             f"not {type(action).__name__}")
        # a str subclass is taken as its text, a plain str: its class (in the user's script) would not
        # reach the worker that runs the probe, and the call would be charged and fail
        action = "".join((action,))
        if self._queue:
            return self._answer(action)
        return self._explore(action)

    def _answer(self, action: str):
        task, _ = self._queue.pop(0)
        verdict = self._run(self.episode.grade(task, action))
        self._verdicts[task.id].append(1 if verdict["passed"] else 0)
        if self._queue:
            self._last = self._queue[0][1]
            return self._last, 0.0, False, False, self._info(verdict=verdict)
        record = self._run(self.episode.milestone(self._verdicts))
        reward = record["accuracy"] / 100
        prompt = self.episode.start_round()
        if prompt is None:
            info = {**self._info(verdict=verdict, milestone=record), "phase": "done"}
            self._last = f"Milestone M{record['t']}: accuracy {record['accuracy']:.1f}%. The episode is over."
            self._over = True
            return self._last, reward, True, False, info
        self._last = prompt if self.episode.slots() else f"{prompt}\n\n{self._open_milestone()}"  # nothing to explore
        return self._last, reward, False, False, self._info(verdict=verdict, milestone=record)

    def _explore(self, action: str):
        ep = self.episode
        charge = None
        if action.strip():
            charge = self._run(ep.probe(action))
            text = charge.feedback
        else:
            text = "(round ended)"
        extra = {"charge": {"status": charge.status, "units": charge.units, "counted": charge.counted}} \
            if charge else {}
        if action.strip() and ep.slots() > 0:
            self._last = text
            return self._last, 0.0, False, False, self._info(**extra)
        self._last = f"{text}\n\n{self._open_milestone()}"
        return self._last, 0.0, False, False, self._info(**extra)

    def _open(self) -> None:
        if self._loop.is_closed():
            raise RuntimeError("this environment is closed; make a new one (WorldEnv or gymnasium.make)")

    def render(self):
        if self.render_mode == "ansi":
            return self._last
        return None

    def close(self):
        if not self._loop.is_closed():
            self._loop.close()
        super().close()


def make_vector_env(world="demo", num_envs: int | None = None, seeds=None,
                    autoreset_mode="next_step", render_mode: str | None = None):
    """A gymnasium.vector.SyncVectorEnv of milestone worlds: `num_envs` copies of `world`, or one per seed.

    `world` is a .world file, a bundled world's name or a compiled world; `seeds` (a list of ints) makes
    copy i the seed variant `seeds[i]` of a world given by name or path (so `num_envs` defaults to
    len(seeds), and must equal it when both are given). `autoreset_mode` is a gymnasium
    `AutoresetMode` or its name ("next_step", "same_step", "disabled").
    """
    mode = _autoreset_mode(autoreset_mode)
    if seeds is not None:
        if isinstance(seeds, (str, bytes)) or not all(isinstance(s, int) and not isinstance(s, bool)
                                                      for s in _as_list(seeds)):
            raise ValueError(f"seeds is a list of ints (one world seed per copy), not {seeds!r}")
        seeds = _as_list(seeds)
        if not isinstance(world, (str, os.PathLike)):
            raise ValueError("seeds need a world given by name or path: a compiled world has one seed already")
        if num_envs is None:
            num_envs = len(seeds)
        if num_envs != len(seeds):
            raise ValueError(f"num_envs is {num_envs} but {len(seeds)} seeds were given: one seed per copy")
    if num_envs is None:
        num_envs = 1
    if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
        raise ValueError(f"num_envs is a whole number of copies, at least 1, not {num_envs!r}")
    if seeds is None:
        # one compile shared by every copy: a world is read-only once compiled, each copy keeps its own episode
        shared = load(os.fspath(world)) if isinstance(world, (str, os.PathLike)) else world
        fns = [lambda: WorldEnv(shared, render_mode=render_mode) for _ in range(num_envs)]
    else:
        fns = [lambda s=s: WorldEnv(world, seed=s, render_mode=render_mode) for s in seeds]
    return gymnasium.vector.SyncVectorEnv(fns, copy=True, autoreset_mode=mode)


def _as_list(seeds) -> list:
    try:
        return list(seeds)
    except TypeError:
        raise ValueError(f"seeds is a list of ints (one world seed per copy), not {seeds!r}") from None


def _autoreset_mode(mode):
    if isinstance(mode, AutoresetMode):
        return mode
    names = {m.name.lower(): m for m in AutoresetMode}
    if isinstance(mode, str) and mode.lower() in names:
        return names[mode.lower()]
    raise ValueError(f"autoreset_mode is one of {', '.join(names)} (or a gymnasium AutoresetMode), not {mode!r}")


if ENV_ID not in gymnasium.registry:
    # vector_entry_point: gymnasium.make_vec(ENV_ID, num_envs=N, vectorization_mode="vector_entry_point")
    gymnasium.register(id=ENV_ID, entry_point="worldspec.gym:WorldEnv",
                       vector_entry_point="worldspec.gym:make_vector_env")
