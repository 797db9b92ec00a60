"""One trajectory of the milestone protocol, stepped by an outside driver (Inspect AI, Gymnasium).

`worldspec run` plays a trajectory itself (protocols/trajectory.py). The adapters in
worldspec/inspect.py and worldspec/gym.py let another framework drive the same trajectory:
they show the same prompts (trajectory.py's system, opening, round, rule-report and task
prompts), charge the same budget (the world's calls per round, calls in all, and the units
of each probe, a call over the unit cap rejected whole), and grade with the same code
(runtime.Grader: probes, answers and rule reports in the sandbox's worker pool under its
deadlines, answers read with answers.read_answer, milestone scores from
metrics.milestone_accuracy). Only milestone worlds (program and proof kinds) have this
shape; a world of another protocol is refused with `EpisodeError`.
"""
from __future__ import annotations

import attrs

from . import metrics
from .answers import read_answer, reportable_rules, rule_report_instructions, rule_score_applies
from .protocols.trajectory import (OVER_BUDGET, opening_prompt, round_prompt, rules_prompt, system_prompt, task_prompt,
                                   unusable_call)
from .runtime import Grader
from .sandbox import shared, unportable


class EpisodeError(Exception):
    """A world the adapters cannot drive (it is not run under the milestone protocol)."""


def grader_for(world) -> Grader:
    """The world's grader in the process's sandbox (in process for a world no worker can compile)."""
    sandbox = shared()
    reason = unportable(world, sandbox.kind_modules)
    return Grader(world, None if reason else sandbox, reason=reason)


@attrs.frozen
class Charge:
    """What one exploration call cost and showed."""

    feedback: str
    status: str  # the world's status, "over_budget" or "invalid"
    units: int
    counted: bool  # whether it took a call of the budget


class Episode:
    """The state of one trajectory: rounds, the call budget, the probe units, milestone records."""

    def __init__(self, world, grader: Grader | None = None, *, answers: int = 1, rule_prompt: str = "slots"):
        if world.protocol != "milestone":
            raise EpisodeError(f"{world.name} is run under the {world.protocol} protocol; the Inspect and "
                               "Gymnasium adapters drive milestone worlds (program and proof kinds)")
        self.world = world
        self.budget = world.budget
        self.grader = grader
        self.answers = answers
        self.instructions = rule_report_instructions(world, rule_prompt)[0]
        self.round = 0  # the round being explored (0: before the first)
        self.used = 0  # calls taken this round
        self.calls = 0  # calls the world ran (not rejected)
        self.attempted = 0  # calls that took a slot of the budget
        self.units = 0
        self.milestones: list[dict] = []

    # -- what the agent reads ---------------------------------------------------

    def opening(self) -> tuple[str, str]:
        """(system prompt, the opening user message: manual, examples, how the session runs)."""
        return system_prompt(self.world), opening_prompt(self.world)

    def start_round(self) -> str | None:
        """Open the next round and return its prompt (None when every round has been played). A round
        whose budget is spent has no calls (`slots()` is 0): its milestone follows at once, as in a run."""
        if self.round >= self.budget.rounds:
            return None
        self.round += 1
        self.used = 0
        left = self.budget.max_calls - self.attempted
        if self.slots() <= 0:
            return f"Exploration round {self.round} of {self.budget.rounds}: the call budget is spent."
        return round_prompt(self.world, self.round, slots=self.slots(), left=left, mode="autonomous")

    def slots(self) -> int:
        """Calls left in this round."""
        return max(0, min(self.budget.calls_per_round - self.used, self.budget.max_calls - self.attempted))

    def rules_prompt(self) -> str | None:
        """The rule-report prompt of this milestone (None for a world without rule equations)."""
        return rules_prompt(self.instructions, self.round) if reportable_rules(self.world) else None

    def task_prompts(self) -> list[tuple[object, str]]:
        """(task, prompt) for every held-out task at this milestone."""
        return [(task, task_prompt(task, self.round)) for task in self.world.tasks]

    # -- exploration ----------------------------------------------------------------

    async def probe(self, program: str | None, tool: str | None = None) -> Charge:
        """Run one call of the world's tool (program None: arguments that could not be read; tool: the
        name the agent called), charged as a run charges it."""
        if self.slots() <= 0:
            return Charge(OVER_BUDGET, "over_budget", 0, False)
        self.used += 1
        self.attempted += 1
        if program is None or (tool is not None and tool != self.world.tool.name):
            return Charge(unusable_call(self.world.tool, tool or self.world.tool.name), "invalid", 0, True)
        fb = await self.grader.probe(program)
        if fb.status != "rejected":
            self.calls += 1
        self.units += int(fb.units)
        return Charge(fb.text or "(no output)", fb.status, int(fb.units), True)

    # -- milestones -----------------------------------------------------------------

    async def grade(self, task, reply: str | None) -> dict:
        """The verdict on one reply to a task (the answer read as a run reads it: answers.read_answer)."""
        answer = read_answer(self.world, task, reply)
        v = await self.grader.verify(task, answer)
        return {"task": task.id, "passed": bool(v.passed), "detail": v.detail, "answer": answer}

    async def milestone(self, verdicts: dict[str, list[int]], report: str | None = None) -> dict:
        """Close milestone M_t with {task id: [1/0 per answer]} and the rule report's text."""
        rec = {"t": self.round, **metrics.milestone_accuracy(verdicts, self.answers), "calls": self.calls,
               "attempted": self.attempted, "probe_units": self.units, "tasks": verdicts}
        if reportable_rules(self.world):
            graded = await self.grader.rule_report(report)
            scored = rule_score_applies(self.world)
            rec["rules_stated_correctly"] = graded["correct"] if scored else []
            rec["rules_total"] = len(reportable_rules(self.world)) if scored else None
        self.milestones.append(rec)
        return rec

    def charges(self) -> dict:
        """The budget as spent so far (Gymnasium's info, Inspect's metadata)."""
        b = self.budget
        return {"round": self.round, "rounds": b.rounds, "calls": self.calls, "attempted": self.attempted,
                "max_calls": b.max_calls, "calls_left": b.max_calls - self.attempted,
                "round_calls_left": self.slots(), "calls_per_round": b.calls_per_round,
                "probe_units": self.units, "units_per_call": b.units_per_call}
