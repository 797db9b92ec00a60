"""The milestone protocol (ExplorationBench): every (system, condition, trajectory) of one world.

Conditions (explorationbench.txt A.4; conditions.py builds their inputs,
trajectory.py plays one trajectory):

  autonomous    the model chooses its probes
  hindsight     the probes of a best trajectory are replayed, executed live;
                the model writes its notes between them
  fixed         probes from the world's generator with a fixed seed, volume
                per call following a reference (or the default budget)
  without-tool  the same number of model turns, with no environment feedback
  direct        no turns after M0 (each milestone re-asks the same history)
  open-book-m0  complete rule statements before M0, no exploration
  a4-open-book  autonomous rounds, then one milestone with the rule statements
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import attrs

from ..agents import MILESTONE_AGENTS, milestone_agent
from ..answers import reportable_rules
from ..models import FatalError, Model
from .base import Plan, fingerprint
from .conditions import (Volume, default_volume, fixed_script, hindsight_script, round_slots, split_reference,
                         volume_from)
from .trajectory import Trajectory, conv_id

CONDITIONS = ("autonomous", "hindsight", "fixed", "without-tool", "direct", "open-book-m0", "a4-open-book")


# ----------------------------------------------------------------------------
# A run of one world


@attrs.define
class MilestoneLineup:
    """Every (system, condition, trajectory) of one world; hindsight waits for the same system's
    autonomous trajectories when no `hindsight_from` run is named."""

    world: object
    systems: list
    config: object
    answers: int
    scripts: dict  # system -> hindsight ProbeScript read from a named run
    volume: Volume | None  # the fixed/without-tool reference read from a named run

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.systems)

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.model_id for m in self.systems)

    def trajectories(self, condition: str) -> range:
        c = self.config
        return range(1, (c.trajectories if condition == "autonomous" else c.control_trajectories) + 1)

    def jobs(self) -> list[str]:
        return [conv_id(m.name, cond, r) for m in self.systems for cond in self.config.conditions
                for r in self.trajectories(cond)]

    def plan(self) -> Plan:
        b = self.world.budget
        per_milestone = (1 if reportable_rules(self.world) else 0) + len(self.world.tasks) * self.answers
        n = b.rounds
        turns = [s for s in round_slots(b) if s]
        explore = {"open-book-m0": (0, 1), "direct": (0, n + 1), "a4-open-book": (sum(s + 1 for s in turns), 1),
                   "autonomous": (sum(s + 1 for s in turns), n + 1)}
        rows = []
        for name in self.names:
            for cond in self.config.conditions:
                k = len(self.trajectories(cond))
                calls, ms = explore.get(cond, (sum(turns), n + 1))  # scripted conditions: one turn per call
                rows.append((name, cond, k, calls * k, ms, ms * per_milestone * k))
        return Plan(f"world {self.world.name}: {len(self.world.tasks)} tasks x {self.answers} answers, {n} rounds",
                    ("system", "condition", "n", "explore<=", "milestones", "milestone calls"), tuple(rows),
                    sum(r[3] + r[5] for r in rows))

    async def run(self, rt, out: Path) -> list[dict]:
        world, config = self.world, self.config
        done = {m.name: asyncio.Event() for m in self.systems}

        async def one(model: Model, condition: str, r: int) -> dict:
            script = vol = None
            if condition == "hindsight":
                script = self.scripts.get(model.name)
                if script is None:
                    await done[model.name].wait()
                    try:
                        script = hindsight_script(out, model.name, world.budget.rounds)
                    except FatalError as e:  # every autonomous trajectory of this system was lost
                        conv = conv_id(model.name, condition, r)
                        rec = {"world": world.name, "system": model.name, "condition": condition,
                               "trajectory": r, "milestones": [], "status": "error", "valid": False,
                               "lost": 0, "endpoint": None, "error": str(e)}
                        rt.emit_record("trajectory", conv, conv, rec)
                        return rec
            elif condition == "fixed":
                vol = self.volume or default_volume(world)
                script = fixed_script(world, vol, config.fixed_seed)
            elif condition == "without-tool":
                vol = self.volume or default_volume(world)
            return await Trajectory(rt, world, model, condition, r, answers=self.answers, script=script,
                                    volume=vol, settings=config.settings).run()

        async def group(model: Model, condition: str) -> list[dict]:
            try:
                return await asyncio.gather(*(one(model, condition, r) for r in self.trajectories(condition)))
            finally:
                if condition == "autonomous":
                    done[model.name].set()

        for m in self.systems:
            if "autonomous" not in config.conditions:
                done[m.name].set()
        tasks = [asyncio.ensure_future(group(m, c)) for m in self.systems for c in config.conditions]
        try:
            groups = await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return [rec for g in groups for rec in g]


class Milestone:
    name = "milestone"
    many_worlds = False
    config_keys = ("conditions", "trajectories", "control_trajectories", "answers", "hindsight_from",
                   "volume_from", "fixed_seed")

    def default_agents(self, worlds) -> tuple[str, ...]:
        return tuple(MILESTONE_AGENTS)

    def lineup(self, worlds, models, agents, config) -> MilestoneLineup:
        (world,) = worlds
        for c in config.conditions:
            if c not in CONDITIONS:
                raise FatalError(f"unknown condition {c!r}; choose from {', '.join(CONDITIONS)}")
        if "hindsight" in config.conditions and not config.hindsight_from \
                and "autonomous" not in config.conditions:
            raise FatalError("the hindsight condition replays a best autonomous trajectory: name a "
                             "previous run with --hindsight-from DIR, or add --condition autonomous")
        if config.trajectories < 1 or config.control_trajectories < 1:
            raise FatalError("--trajectories and --control-trajectories must be at least 1")
        if not world.tasks:
            raise FatalError(f"{world.name} has no held-out tasks: there is nothing to score")
        systems = list(models) + [milestone_agent(a, world) for a in agents]
        n = world.budget.rounds
        scripts = {}
        if "hindsight" in config.conditions and config.hindsight_from:
            # a named run is read before anything starts, so a wrong directory costs no calls
            path, system = split_reference(config.hindsight_from)
            scripts = {m.name: hindsight_script(path, system or m.name, n) for m in systems}
        volume = None
        if config.volume_from:
            path, system = split_reference(config.volume_from)
            volume = volume_from(path, system, n)
        return MilestoneLineup(world, systems, config, config.answers or world.budget.answers, scripts, volume)

    def world_identity(self, worlds, name: str) -> dict:
        (world,) = worlds
        content = {
            "manual": world.manual,
            "examples": [(e.id, e.prompt, e.program, e.output) for e in world.examples],
            "tasks": [(t.id, t.prompt, t.shape, t.solution, t.naive) for t in world.tasks],
            "rules": [(r.id, r.target, r.equation, r.statement) for r in world.rules],
            "herrings": [(r.id, r.target) for r in world.herrings],
            "budget": attrs.asdict(world.budget),
            "tool": world.tool.name,
        }
        return {"name": world.name, "version": world.version, "seed": world.seed,
                "fingerprint": fingerprint(content)}

    def exploration_calls(self, world) -> int:
        return world.budget.max_calls


MILESTONE = Milestone()
