"""The Oracle protocol, turn@shot, for black boxes and Game Strategy Inference boxes.

One conversation per (box, system): the box's manual, then T exploration
turns. In each turn the system replies with one input (the first fenced code
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
from .base import Plan, PlaySession, fingerprint


# Replies one exploration turn may take: a turn of a game played round by round is a whole game.
MAX_REPLIES_PER_TURN = 64


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
            "input in a fenced code block (only the first fenced block of a reply is read); an input the box rejects "
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
    return (f"Exploration is over. Test {i} of {n}. {task.prompt}\n\nOnly the first fenced code block of your "
            "reply is graded.")


def retry_prompt(task, shot: int, shots: int) -> str:
    return f"Incorrect. Attempt {shot} of {shots}: {task.prompt}"


# ----------------------------------------------------------------------------
# One box, one system


class BoxSession:
    """One system against one box: exploration turns, then every test with its shots.

    A box with memory or noise is explored through one world session (`world.session()`), so each
    query sees what came before; a box with several targets (`world.explore_each_test`) is explored
    once per test, each in its own conversation and session. A turn is what the world charges for it
    (`Feedback.units`): a rejected input is free (up to T of them), and in a game played round by round
    a turn is a whole game.
    """

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

    def add(self, msg: dict, conv: str | None = None, history: list | None = None) -> None:
        history = self.history if history is None else history
        conv = conv or self.conv
        self.rt.emit({"type": "message", "id": f"msg:{conv}:{len(history)}", "conv": conv,
                      "index": len(history), "message": msg})
        history.append(msg)

    def request(self, messages, purpose: str, conv: str | None = None, **meta) -> Request:
        return Request(messages=tuple(messages), settings=self.config.settings, purpose=purpose,
                       sample=self.sample, meta={"conv": conv or self.conv, "condition": self.condition,
                                                 "trajectory": 1, "box": self.world.name, "t": None,
                                                 "step": None, "prefix": 0, **meta})

    async def run(self) -> dict:
        w = self.world
        if w.explore_each_test:
            used, tests, lost = 0, [], None
            for i, task in enumerate(w.tasks, 1):
                conv = f"{self.conv}#{task.id}"
                history: list[dict] = []
                t_used, pending, t_lost = await self.explore(w.session(task), conv, history)
                used += t_used
                if t_lost is not None:
                    lost = t_lost
                    break
                tests.append(await self.test(task, i, len(w.tasks), pending, conv, history))
            return self.record(used, tests, lost)
        used, pending, lost = await self.explore(w.session(), self.conv, self.history)
        tests = []
        if lost is None:
            tests = await asyncio.gather(*(self.test(task, i, len(w.tasks), pending, self.conv, self.history)
                                           for i, task in enumerate(w.tasks, 1)))
        return self.record(used, list(tests), lost)

    async def explore(self, session, conv: str, history: list) -> tuple[int, str, str | None]:
        """T turns against one world session; (turns used, the last output, why it was lost or None)."""
        w = self.world
        self.add({"role": "system", "content": system_prompt()}, conv, history)
        opening = opening_prompt(w, self.turns, self.shots)
        if session.opening:
            opening += "\n\n" + session.opening
        self.add({"role": "user", "content": opening}, conv, history)
        used = free = step = 0
        # a game played round by round takes several replies per turn; bound the replies all the same
        cap = MAX_REPLIES_PER_TURN * self.turns
        pending = ""
        try:
            while used < self.turns and step < cap:
                req = self.request(history, "explore", conv, step=step, t=used + 1)
                step += 1
                reply = await self.rt.call(self.model, req)
                self.requests += 1
                self.tokens += reply.usage.total
                self.add(reply.message(with_tool_calls=False), conv, history)
                text = extract_answer(reply.content)
                fb = session.probe(text)
                spend = fb.units
                if fb.status == "rejected" and not spend:
                    if free >= self.turns:
                        spend = 1  # free rejections are spent: later ones use a turn
                    else:
                        free += 1
                used += spend
                self.rt.emit({"type": "box_turn", "id": f"turn:{conv}:{step}", "conv": conv,
                              "system": self.model.name, "box": w.name, "turn": used, "input": text,
                              "status": fb.status, "feedback": fb.text, "counted": bool(spend)})
                msg = feedback_message(text, fb, used + 1, self.turns, fb.status != "rejected" or bool(spend))
                if used < self.turns:
                    self.add({"role": "user", "content": msg}, conv, history)
                else:
                    pending = msg  # the last output opens every test question
        except LostError as e:
            return used, pending, f"exploration lost to infrastructure: {e}"
        return used, pending, None

    async def test(self, task, i: int, n: int, pending: str, conv: str, history: list) -> dict:
        first = (pending + "\n\n" if pending else "") + test_prompt(task, i, n)
        msgs = list(history) + [{"role": "user", "content": first}]
        shots = []
        for s in range(1, self.shots + 1):
            try:
                if task.shape == "play":
                    shot, reply = await self.play_test(task, s, msgs, conv)
                else:
                    reply = await self.rt.call(self.model, self.request(msgs, f"task:{task.id}", conv, shot=s))
                    answer = extract_answer(reply.content)
                    v = await self.grader.verify(task, answer)
                    shot = {"shot": s, "answer": answer, "passed": bool(v.passed), "score": float(v.score),
                            "detail": v.detail}
            except LostError as e:
                shots.append({"shot": s, "lost": True, "error": str(e)})
                break
            shots.append(shot)
            self.rt.emit({"type": "box_answer", "id": f"answer:{conv}:{task.id}:{s}", "conv": conv,
                          "system": self.model.name, "box": self.world.name, "test": task.id, **shot})
            if shot["passed"]:
                break
            msgs = msgs + [reply.message(with_tool_calls=False),
                           {"role": "user", "content": retry_prompt(task, s + 1, self.shots)}]
        passed = any(x.get("passed") for x in shots)
        # a lost shot leaves the test unscored (never wrong), unless an earlier shot already passed
        lost = any(x.get("lost") for x in shots) and not passed
        scored = [x["score"] for x in shots if not x.get("lost")]
        return {"test": task.id, "score": None if lost else max(scored), "passed": passed, "shots": shots,
                "lost": lost}

    async def play_test(self, task, shot: int, msgs: list, conv: str):
        """A test game played round by round: one move per reply until the game ends; scored by the world."""
        game = self.world.test_play(task, shot)
        msgs = msgs[:-1] + [{"role": "user", "content": msgs[-1]["content"] + "\n\n" + game.opening}]
        moves: list[str] = []
        reply = None
        # every round may take one rejected move before a legal one
        for _ in range(2 * (game.match.horizon + 1)):
            if game.done:
                break
            reply = await self.rt.call(self.model, self.request(msgs, f"task:{task.id}", conv, shot=shot,
                                                                moves=list(moves)))
            move = extract_answer(reply.content)
            fb = game.play(move)
            if fb.status != "rejected":
                moves.append(move)
            msgs = msgs + [reply.message(with_tool_calls=False), {"role": "user", "content": fb.text}]
        v = game.verdict()
        return ({"shot": shot, "answer": " ".join(moves), "passed": bool(v.passed), "score": float(v.score),
                 "detail": v.detail}, reply)

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

    def play_session(self, world, task=None) -> PlaySession:
        """One world session, as BoxSession explores: a box keeps its memory, a round-by-round game goes
        on, and a probe costs the turns the world charges for it (a rejected input: none)."""
        if task is None and world.explore_each_test and world.tasks:
            task = world.tasks[0]  # each test has its own target (or game): start with the first
        session = world.session(task)
        note = f"(this session explores test {task.id}; :explore ID explores another)" \
            if world.explore_each_test and task is not None else ""
        return PlaySession(session.probe, lambda fb: fb.units, "\n".join(x for x in (session.opening, note) if x),
                           own_budget=world.explore_each_test)


TURNSHOT = TurnShot()
