"""Milestone worlds as Inspect AI tasks (`pip install "worldspec[inspect]"`).

    inspect eval worldspec/aliencode --model openai/gpt-4o-mini
    inspect eval worldspec/world -T world=path/to/my.world -T seed=7 --model ...
    inspect eval worldspec/demo --model mockllm/model          (offline: Inspect's mock model)

pyproject.toml registers this module under Inspect's `inspect_ai` entry point, so the names
`worldspec/<world>` (the bundled milestone worlds) and `worldspec/world` (any world file) resolve.

A task has one sample, the world; each epoch (`--epochs`, or `-T trajectories=N`) is one
trajectory of the milestone protocol driven through runner/episode.py: the same system and
opening prompts, rounds of calls to the world's tool under the same budget (calls per round, calls
in all, probe units per call; a call over the budget is refused unrun), and after the worked
examples and after every round a milestone: each held-out task answered `-T answers=K` times (by
default the world's budget, as `worldspec run`) and the rule report, from copies of the conversation without tools, graded by the world's own code in the
runner's sandbox (runtime.Grader). The score is a dictionary of milestone accuracies
`M0 .. Mn` (0 to 1), one scored checkpoint each; the score's metadata keeps every milestone
record (verdicts per task, rules stated correctly) and the charges. A world of another protocol
is refused when the task is made.
"""
from __future__ import annotations

import asyncio

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageTool, ChatMessageUser, get_model
from inspect_ai.scorer import Score, mean, scorer
from inspect_ai.solver import solver
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from worldspec.runner.episode import Episode, grader_for
from worldspec.runner.sandbox import load

# The bundled worlds run under the milestone protocol (their tasks are worldspec/<name>).
BUNDLED = ("aliencode", "alienlogic", "demo")


def tool_info(world) -> ToolInfo:
    """The world's one exploration tool, as Inspect describes tools to a model."""
    t = world.tool
    return ToolInfo(name=t.name, description=t.description, parameters=ToolParams(
        properties={t.parameter: ToolParam(type="string", description=t.parameter_description)},
        required=[t.parameter]))


def program_of(call, world) -> str | None:
    """The program of one tool call (None when its arguments do not hold one)."""
    value = (call.arguments or {}).get(world.tool.parameter) if isinstance(call.arguments, dict) else None
    return value if isinstance(value, str) else None


async def milestone(model, episode: Episode, history: list) -> dict:
    """Milestone M_t: every task answered `answers` times and the rule report, from copies of history."""
    prefix = list(history)

    async def ask(prompt: str) -> str:
        out = await model.generate(prefix + [ChatMessageUser(content=prompt)])
        return out.completion

    keys = [(task_, prompt, k) for task_, prompt in episode.task_prompts() for k in range(episode.answers)]
    rules = episode.rules_prompt()
    replies = await asyncio.gather(*(ask(prompt) for _, prompt, _ in keys), *((ask(rules),) if rules else ()))
    verdicts: dict[str, list[int]] = {t.id: [] for t, _ in episode.task_prompts()}
    details = []
    for (task_, _, _), reply in zip(keys, replies):
        v = await episode.grade(task_, reply)
        verdicts[task_.id].append(1 if v["passed"] else 0)
        details.append(v)
    record = await episode.milestone(verdicts, replies[-1] if rules else None)
    record["verdicts"] = details
    return record


@solver
def explore(world, answers: int = 1):
    """One trajectory: rounds of tool calls under the world's budget, a milestone before and after each."""

    async def solve(state, generate):
        model = get_model()
        episode = Episode(world, grader_for(world), answers=answers)
        tool = tool_info(world)
        await milestone(model, episode, state.messages)
        while (prompt := episode.start_round()) is not None:
            state.messages.append(ChatMessageUser(content=prompt))
            while episode.slots() > 0:
                out = await model.generate(state.messages, tools=[tool])
                state.messages.append(out.message)
                if not out.message.tool_calls:
                    break  # the model ends the round
                for call in out.message.tool_calls:
                    charge = await episode.probe(program_of(call, world), call.function)
                    state.messages.append(ChatMessageTool(content=charge.feedback, tool_call_id=call.id,
                                                          function=call.function))
            await milestone(model, episode, state.messages)
        state.metadata["milestones"] = episode.milestones
        state.metadata["charges"] = episode.charges()
        return state

    return solve


def milestone_scorer(world):
    """Scores M0 .. Mn: the accuracy of each milestone (mean over epochs: Mean@n)."""
    keys = [f"M{t}" for t in range(world.budget.rounds + 1)]

    @scorer(metrics={k: [mean()] for k in keys}, name="milestones")
    def milestones():
        async def score(state, target) -> Score:
            records = state.metadata.get("milestones", [])
            value = {k: 0.0 for k in keys} | {f"M{m['t']}": m["accuracy"] / 100 for m in records}
            last = records[-1] if records else {}
            return Score(value=value, answer=f"M{last.get('t', 0)} accuracy {last.get('accuracy', 0.0):.1f}%",
                         explanation="; ".join(f"M{m['t']}: {m['accuracy']:.1f}%" for m in records),
                         metadata={"milestones": records, "charges": state.metadata.get("charges", {})})
        return score

    return milestones()


def world_task(world: str, seed: int | None = None, answers: int | None = None, trajectories: int = 1) -> Task:
    """The Inspect task of one milestone world (a file or a bundled world's name); `answers` per task
    per milestone, by default the world's budget (as `worldspec run`)."""
    w = load(world, seed)
    answers = answers or w.budget.answers
    episode = Episode(w)  # refuses a world of another protocol
    system, opening = episode.opening()
    sample = Sample(input=[ChatMessageSystem(content=system), ChatMessageUser(content=opening)], id=w.name,
                    metadata={"world": w.name, "seed": w.seed, "rounds": w.budget.rounds})
    return Task(dataset=MemoryDataset([sample], name=w.name), solver=explore(w, answers),
                scorer=milestone_scorer(w), epochs=trajectories, name=f"worldspec/{w.name}")


@task(name="world")
def world(world: str = "demo", seed: int | None = None, answers: int | None = None, trajectories: int = 1) -> Task:
    """Any milestone world: `-T world=PATH` (a .world file or a bundled world's name)."""
    return world_task(world, seed, answers, trajectories)


def bundled_task(name: str):
    """The registered task `worldspec/<name>` of a bundled world."""
    def make(seed: int | None = None, answers: int | None = None, trajectories: int = 1) -> Task:
        return world_task(name + ".world", seed, answers, trajectories)  # the file: a folder `name` may be here
    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"The bundled world {name} under the milestone protocol."
    return task(name=name)(make)


aliencode, alienlogic, demo = (bundled_task(name) for name in BUNDLED)
