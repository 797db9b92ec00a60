"""The Oracle protocol, turn@shot, for black boxes and Game Strategy Inference boxes.

One conversation per (box, system): the box's manual, then T exploration
turns. In each turn the system replies with one input (the last fenced code
block of its reply, or the whole reply); the box's output comes back as the
next message. An input the box rejects (unreadable, outside its domain, or
failing its predicate) is answered with the reason and costs no turn (at most
T such free rejections; later ones use a turn). Then every test sample is
asked in its own fork of the conversation, with S shots: after a wrong answer
the system is told "incorrect" and asked again. A test scores its best shot:
1 or 0, or for a game box score / exact optimum.

Accuracy of a box = the mean test score (percent); the report gives it per
box, per family, per difficulty and per family x difficulty at the configured
turn@shot (presets 10@1 and 20@2), ranked like the paper's figures by the sum
of easy and hard accuracy. A folder of boxes is one run.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import attrs

from ..agents import BOX_AGENTS, box_agent
from ..answers import extract_answer
from ..models import FatalError, LostError, Model, Request
from .base import Plan, fingerprint


def turns_shots(world, config) -> tuple[int, int]:
    """This run's turn@shot for a box: the configured one, or the box's own budget."""
    return config.turns or world.budget.turns, config.shots or world.budget.shots


def conv_id(system: str, world, config) -> str:
    t, s = turns_shots(world, config)
    return f"{system}|{world.name}|{t}@{s}"


# ----------------------------------------------------------------------------
# What the system reads


def system_prompt() -> str:
    return ("You are interacting with a black box: a hidden mechanism that answers the inputs you send it. "
            "Explore it with well-chosen inputs, work out how it behaves, and then answer test questions "
            "about it without further exploration.")


def opening_prompt(world, turns: int, shots: int) -> str:
    """The box's manual, with its interaction section replaced by this session's turn@shot."""
    manual = world.manual.strip().split("\n## Interaction")[0].rstrip()
    return (f"{manual}\n\n## This session\n\nYou have {turns} exploration turns. {world.turn_instructions} Put each "
            "input in a fenced code block (only the last fenced block of a reply is read); an input the box rejects "
            f"is answered with the reason and costs no turn. Each test has {shots} attempt(s); after a wrong "
            f"attempt you are told it is incorrect.\n\nTurn 1 of {turns}: send your first input.")


def feedback_message(text: str, fb, turn: int, turns: int, used_turn: bool) -> str:
    if not used_turn:
        return f"{fb.text}\n\nTurn {turn} of {turns}: send an input."
    out = f"Input: {text}\nOutput:\n{fb.text}"
    if turn <= turns:
        out += f"\n\nTurn {turn} of {turns}: send your next input."
    return out


def test_prompt(task, i: int, n: int) -> str:
    return (f"Exploration is over. Test {i} of {n}. {task.prompt}\n\nOnly the last fenced code block of your "
            "reply is graded.")


def retry_prompt(task, shot: int, shots: int) -> str:
    return f"Incorrect. Attempt {shot} of {shots}: {task.prompt}"


# ----------------------------------------------------------------------------
# One box, one system


class BoxSession:
    def __init__(self, rt, world, model: Model, config):
        self.rt, self.world, self.model, self.config = rt, world, model, config
        self.grader = rt.grader(world)
        self.turns, self.shots = turns_shots(world, config)
        self.condition = f"{self.turns}@{self.shots}"
        self.conv = conv_id(model.name, world, config)
        self.sample = f"{world.name}/{self.condition}"
        self.history: list[dict] = []
        self.tokens = 0
        self.requests = 0

    def add(self, msg: dict) -> None:
        self.rt.emit({"type": "message", "id": f"msg:{self.conv}:{len(self.history)}", "conv": self.conv,
                      "index": len(self.history), "message": msg})
        self.history.append(msg)

    def request(self, messages, purpose: str, **meta) -> Request:
        return Request(messages=tuple(messages), settings=self.config.settings, purpose=purpose,
                       sample=self.sample, meta={"conv": self.conv, "condition": self.condition,
                                                 "trajectory": 1, "box": self.world.name, "t": None,
                                                 "step": None, "prefix": 0, **meta})

    async def run(self) -> dict:
        w = self.world
        self.add({"role": "system", "content": system_prompt()})
        self.add({"role": "user", "content": opening_prompt(w, self.turns, self.shots)})
        used = free = step = 0
        pending = ""
        lost = None
        try:
            while used < self.turns:
                req = self.request(self.history, "explore", step=step, t=used + 1)
                step += 1
                reply = await self.rt.call(self.model, req)
                self.requests += 1
                self.tokens += reply.usage.total
                self.add(reply.message(with_tool_calls=False))
                text = extract_answer(reply.content)
                fb = await self.grader.probe(text)
                spend = fb.status != "rejected" or free >= self.turns
                if spend:
                    used += 1
                else:
                    free += 1
                self.rt.emit({"type": "box_turn", "id": f"turn:{self.conv}:{step}", "conv": self.conv,
                              "system": self.model.name, "box": w.name, "turn": used, "input": text,
                              "status": fb.status, "feedback": fb.text, "counted": spend})
                msg = feedback_message(text, fb, used + 1, self.turns, spend)
                if used < self.turns:
                    self.add({"role": "user", "content": msg})
                else:
                    pending = msg  # the last output opens every test question
        except LostError as e:
            lost = f"exploration lost to infrastructure: {e}"
        tests = []
        if lost is None:
            tests = await asyncio.gather(*(self.test(task, i, len(w.tasks), pending)
                                           for i, task in enumerate(w.tasks, 1)))
        return self.record(used, tests, lost)

    async def test(self, task, i: int, n: int, pending: str) -> dict:
        first = (pending + "\n\n" if pending else "") + test_prompt(task, i, n)
        msgs = list(self.history) + [{"role": "user", "content": first}]
        shots = []
        for s in range(1, self.shots + 1):
            try:
                reply = await self.rt.call(self.model, self.request(msgs, f"task:{task.id}", shot=s))
            except LostError as e:
                shots.append({"shot": s, "lost": True, "error": str(e)})
                break
            answer = extract_answer(reply.content)
            v = await self.grader.verify(task, answer)
            shots.append({"shot": s, "answer": answer, "passed": bool(v.passed), "score": float(v.score),
                          "detail": v.detail})
            self.rt.emit({"type": "box_answer", "id": f"answer:{self.conv}:{task.id}:{s}", "conv": self.conv,
                          "system": self.model.name, "box": self.world.name, "test": task.id, "shot": s,
                          "answer": answer, "passed": bool(v.passed), "score": float(v.score),
                          "detail": v.detail})
            if v.passed:
                break
            msgs = msgs + [reply.message(with_tool_calls=False),
                           {"role": "user", "content": retry_prompt(task, s + 1, self.shots)}]
        passed = any(x.get("passed") for x in shots)
        # a lost shot leaves the test unscored (never wrong), unless an earlier shot already passed
        lost = any(x.get("lost") for x in shots) and not passed
        scored = [x["score"] for x in shots if not x.get("lost")]
        return {"test": task.id, "score": None if lost else max(scored), "passed": passed, "shots": shots,
                "lost": lost}

    def record(self, used: int, tests: list[dict], lost: str | None) -> dict:
        w = self.world
        n_lost = sum(t["lost"] for t in tests)
        scores = [t["score"] for t in tests if not t["lost"] and t["score"] is not None]
        acc = round(100.0 * sum(scores) / len(scores), 6) if scores else 0.0
        milestone = {"t": used, "accuracy": acc, "passes": [acc], "sigma": 0.0, "calls": used,
                     "probe_units": used, "tokens": self.tokens, "rules_correct": 0,
                     "tasks": {t["test"]: [t["score"]] for t in tests}, "lost": n_lost}
        rec = {"world": w.name, "system": self.model.name, "condition": self.condition, "trajectory": 1,
               "milestones": [milestone], "status": "complete" if lost is None else "lost",
               "valid": lost is None and n_lost == 0, "lost": n_lost, "endpoint": acc, "family": w.family,
               "difficulty": w.difficulty, "kind": w.kind, "turns": self.turns, "shots": self.shots,
               "turns_used": used, "requests": self.requests, "tests": tests}
        if lost:
            rec["error"] = lost
        self.rt.emit_record("trajectory", self.conv, self.conv, rec)
        if self.rt.progress is not None:
            self.rt.progress.update(self.conv, system=self.model.name, condition=self.condition,
                                    trajectory=w.name, calls=used, tokens=self.tokens, accuracy=acc,
                                    done=True, status=rec["status"])
        return rec


# ----------------------------------------------------------------------------
# A run over boxes


@attrs.define
class TurnShotLineup:
    """Every box against every system; built-in agents are built per box."""

    worlds: list
    systems: list  # per box, the Models that play it
    config: object

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.systems[0])

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.model_id for m in self.systems[0])

    def jobs(self) -> list[str]:
        return [conv_id(m.name, w, self.config) for w, row in zip(self.worlds, self.systems) for m in row]

    def plan(self) -> Plan:
        shapes = sorted({"{}@{}".format(*turns_shots(w, self.config)) for w in self.worlds})
        # each turn may follow one free rejection; each test takes at most every shot
        calls = sum(2 * t + len(w.tasks) * s for w in self.worlds for t, s in [turns_shots(w, self.config)])
        rows = tuple((name, len(self.worlds), ", ".join(shapes), calls) for name in self.names)
        return Plan(f"{len(self.worlds)} box(es) x {len(self.names)} system(s), turn@shot {', '.join(shapes)}",
                    ("system", "boxes", "turn@shot", "calls<="), rows, calls * len(self.names))

    async def run(self, rt, out: Path) -> list[dict]:
        return list(await asyncio.gather(*(BoxSession(rt, w, m, self.config).run()
                                           for w, row in zip(self.worlds, self.systems) for m in row)))


class TurnShot:
    name = "turn@shot"
    many_worlds = True
    config_keys = ("turns", "shots")

    def default_agents(self, worlds) -> tuple[str, ...]:
        return tuple(BOX_AGENTS)

    def lineup(self, worlds, models, agents, config) -> TurnShotLineup:
        for label, v in (("--turns", config.turns), ("--shots", config.shots)):
            if v is not None and v < 1:
                raise FatalError(f"{label} must be at least 1")
        return TurnShotLineup(list(worlds), [list(models) + [box_agent(a, w) for a in agents] for w in worlds],
                              config)

    def world_identity(self, worlds, name: str) -> dict:
        content = [(w.name, w.seed, w.manual, [(t.id, t.prompt, t.solution) for t in w.tasks]) for w in worlds]
        return {"name": name, "boxes": len(worlds), "fingerprint": fingerprint(content)}

    def exploration_calls(self, world) -> int:
        return world.budget.turns


TURNSHOT = TurnShot()
