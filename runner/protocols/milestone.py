"""The milestone protocol (ExplorationBench): every (system, condition, trajectory) of one world.

Conditions (explorationbench.txt A.4; conditions.py builds their inputs,
trajectory.py plays one trajectory):

  autonomous    the model chooses its probes
  hindsight     the probes of a best trajectory are replayed, executed live;
                the model writes its notes between them
  fixed         probes from the world's generator with a fixed seed, volume
                per call following the reference trajectory (or, asked, the full budget)
  without-tool  one model turn per round, with no tool and no environment feedback
  direct        no turns after M0 (each milestone re-asks the same history)
  open-book-m0  the M0 conversation, the rule statements, the model's acknowledgement,
                then the held-out tests (no rule report)
  a4-open-book  the best autonomous trajectory's conversation after its last round,
                then the same disclosure, acknowledgement and tests (one milestone)

The released harness (Tencent-Hunyuan/ExplorationBench, sandboxes/code/run_eval.py) names them
by control mode: self (autonomous), passive (hindsight: the same model's donor probes), random
(fixed), think (without-tool), none (direct); O@M0 and A4+O are `_run_v2_oracle_diagnostics`.
docs/fidelity.md (section exploration-protocol) compares them step by step.

Hindsight, A4+O and fixed derive from Best@n autonomous trajectories. Unless a previous run
is named (--hindsight-from, --volume-from) or the full budget asked (--full-volume), they take
them from this run, which then runs the autonomous condition even when it was not requested,
and waits for it: hindsight and A4+O for the same system's, fixed for every system's (one
reference serves them all).
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import attrs

from ..agents import default_milestone_agents, milestone_agent
from ..answers import reportable_rules, rule_report_instructions
from ..metrics import best_of
from ..models import FatalError, Model
from .base import Plan, ProbesTheWorld, fingerprint
from .conditions import (Volume, default_volume, fixed_script, hindsight_script, reference_system, round_slots,
                         split_reference, volume_from)
from .reasks import MAX_REASKS
from .trajectory import TOOL_LOOP_GRACE, Fork, Trajectory, conv_id
from .milestone_report import MILESTONE_LAYOUT

THIS_RUN = "this run"  # how a reference taken from the run itself is named (the run's path may change)
CONDITIONS = ("autonomous", "hindsight", "fixed", "without-tool", "direct", "open-book-m0", "a4-open-book")


def conditions_to_run(config) -> tuple[str, ...]:
    """The requested conditions, with autonomous first when another one derives from it in this run."""
    wanted = tuple(config.conditions)
    derived = ("a4-open-book" in wanted
               or ("hindsight" in wanted and not config.hindsight_from)
               or ("fixed" in wanted and not config.volume_from and not config.full_volume))
    return ("autonomous", *wanted) if derived and "autonomous" not in wanted else wanted


def _error_record(rt, world, system: str, condition: str, r: int, error: str) -> dict:
    """A trajectory that could not start (its reference is missing): recorded, never fatal."""
    conv = conv_id(system, condition, r)
    rec = {"world": world.name, "system": system, "condition": condition, "trajectory": r, "milestones": [],
           "status": "error", "valid": False, "lost": 0, "endpoint": None, "error": error}
    rt.emit_record("trajectory", conv, conv, rec)
    return rec


# ----------------------------------------------------------------------------
# A run of one world


@attrs.define
class MilestoneLineup:
    """Every (system, condition, trajectory) of one world; the conditions that derive from the
    autonomous one wait for it (see the module docstring)."""

    world: object
    systems: list
    config: object
    answers: int
    scripts: dict  # system -> hindsight ProbeScript read from a named run
    volume: Volume | None  # the fixed reference read from a named run, or the full budget
    instructions: str = ""  # the rule-report instructions as sent (answers.report_instructions)
    withheld: list = attrs.field(factory=list)  # examples taken out of them: they stated true rules

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.systems)

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.model_id for m in self.systems)

    @property
    def conditions(self) -> tuple[str, ...]:
        return conditions_to_run(self.config)

    def trajectories(self, condition: str) -> range:
        c = self.config
        return range(1, (c.trajectories if condition == "autonomous" else c.control_trajectories) + 1)

    def jobs(self) -> list[str]:
        return [conv_id(m.name, cond, r) for m in self.systems for cond in self.conditions
                for r in self.trajectories(cond)]

    def plan(self) -> Plan:
        b = self.world.budget
        tasks = len(self.world.tasks) * self.answers
        per_milestone = (1 if reportable_rules(self.world) else 0) + tasks
        open_book = 1 + tasks  # the acknowledgement, then the tests; no rule report
        n = b.rounds
        turns = [s for s in round_slots(b) if s]
        # autonomous: a turn per call, the closing turns and the nudges
        explore = {"open-book-m0": (0, 1), "direct": (0, n + 1), "a4-open-book": (0, 1),
                   "without-tool": (n, n + 1),
                   "autonomous": (sum(s + 1 + TOOL_LOOP_GRACE + MAX_REASKS for s in turns), n + 1)}
        rows = []
        for name in self.names:
            for cond in self.conditions:
                k = len(self.trajectories(cond))
                calls, ms = explore.get(cond, (sum(turns), n + 1))  # scripted conditions: one turn per call
                each = open_book if cond in ("open-book-m0", "a4-open-book") else per_milestone
                rows.append((name, cond, k, calls * k, ms, ms * each * k))
        added = "" if "autonomous" in self.config.conditions or "autonomous" not in self.conditions else \
            "autonomous added: another condition derives from its best trajectory"
        # each milestone ask may be asked twice more (protocols/reasks.py): the bound counts them
        reasks = f"milestone calls are first asks; each may be asked {MAX_REASKS} more times (counted in the bound)"
        return Plan(f"world {self.world.name}: {len(self.world.tasks)} tasks x {self.answers} answers, {n} rounds",
                    ("system", "condition", "n", "explore<=", "milestones", "milestone calls"), tuple(rows),
                    sum(r[3] + r[5] * (1 + MAX_REASKS) for r in rows), note="; ".join(filter(None, (added, reasks))))

    async def run(self, rt, out: Path) -> list[dict]:
        world, config = self.world, self.config
        conditions = self.conditions
        done = {m.name: asyncio.Event() for m in self.systems}
        autonomous: dict[str, dict[int, Trajectory]] = {m.name: {} for m in self.systems}
        finished: list[dict] = []  # autonomous records, as they finish
        reference: dict = {}  # the in-run volume, computed once
        if self.withheld:
            rt.emit({"type": "report_instructions", "id": "report_instructions", "withheld": self.withheld,
                     "reason": "these examples state true rules of the world; the report prompt omits them"})

        async def run_volume() -> Volume | str:
            """The fixed-probe volume of this run: the mid-ranked system's Best@n trajectory."""
            if "volume" not in reference:
                await asyncio.gather(*(e.wait() for e in done.values()))
                if "volume" not in reference:
                    system = reference_system(finished, list(self.names))
                    if system is None:
                        reference["volume"] = "no finished autonomous trajectory to take the volume from"
                    else:
                        vol = volume_from(out, system, world.budget.rounds, THIS_RUN)
                        reference["volume"] = vol
                        rt.emit({"type": "reference", "id": "reference:volume", "purpose": "volume",
                                 "conditions": ["fixed"],
                                 "system": system, **vol.summary()})
            return reference["volume"]

        async def fork(model: Model) -> Fork | str:
            """A4+O's start: this system's Best@n autonomous trajectory after its last round."""
            await done[model.name].wait()
            mine = autonomous[model.name]
            b = best_of([t.last_record for t in mine.values() if t.last_record
                         and t.last_record.get("status") == "complete"])
            if b["best"] is None:
                return f"{model.name} has no finished autonomous trajectory to continue"
            src = mine[b["best_trajectory"]]
            return Fork(src.conv, tuple(src.history), attrs.evolve(src.c), b["best"])

        async def one(model: Model, condition: str, r: int) -> dict:
            script = vol = start = None
            if condition == "hindsight":
                script = self.scripts.get(model.name)
                if script is None:
                    await done[model.name].wait()
                    try:
                        script = hindsight_script(out, model.name, world.budget.rounds, THIS_RUN)
                    except FatalError as e:  # every autonomous trajectory of this system was lost
                        return _error_record(rt, world, model.name, condition, r, str(e))
            elif condition == "fixed":
                vol = self.volume or await run_volume()
                if isinstance(vol, str):
                    return _error_record(rt, world, model.name, condition, r, vol)
                script = fixed_script(world, vol, config.fixed_seed)
            elif condition == "a4-open-book":
                start = await fork(model)
                if isinstance(start, str):
                    return _error_record(rt, world, model.name, condition, r, start)
            traj = Trajectory(rt, world, model, condition, r, answers=self.answers, script=script, volume=vol,
                              settings=config.settings, fork=start, instructions=self.instructions)
            if condition == "autonomous":
                autonomous[model.name][r] = traj
            rec = await traj.run()
            if condition == "autonomous":
                finished.append(rec)
            return rec

        async def group(model: Model, condition: str) -> list[dict]:
            try:
                return await asyncio.gather(*(one(model, condition, r) for r in self.trajectories(condition)))
            finally:
                if condition == "autonomous":
                    done[model.name].set()

        for m in self.systems:
            if "autonomous" not in conditions:
                done[m.name].set()
        tasks = [asyncio.ensure_future(group(m, c)) for m in self.systems for c in conditions]
        try:
            groups = await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return [rec for g in groups for rec in g]


class Milestone(ProbesTheWorld):
    name = "milestone"
    layout = MILESTONE_LAYOUT  # milestone_report.py: how its runs are summarised and laid out
    many_worlds = False
    config_keys = ("conditions", "trajectories", "control_trajectories", "answers", "hindsight_from",
                   "volume_from", "full_volume", "fixed_seed", "rule_prompt")

    def default_agents(self, worlds) -> tuple[str, ...]:
        return default_milestone_agents(worlds[0])

    def lineup(self, worlds, models, agents, config) -> MilestoneLineup:
        (world,) = worlds
        for c in config.conditions:
            if c not in CONDITIONS:
                raise FatalError(f"unknown condition {c!r}; choose from {', '.join(CONDITIONS)}")
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
        elif config.full_volume:
            volume = default_volume(world)
        instructions, withheld = rule_report_instructions(world, config.rule_prompt)
        return MilestoneLineup(world, systems, config, config.answers or world.budget.answers, scripts, volume,
                               instructions, withheld)

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
