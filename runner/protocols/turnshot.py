"""The Oracle protocol, turn@shot, for black boxes and Game Strategy Inference boxes.

As the released code runs it (lemonsis/Oracle_Benchmark: each platform's `main`, then eva_models.py
`ReasoningLLM.evaluate`): one conversation per (box, system): the box's manual, then T exploration turns.
In each turn the system replies with one input (the first fenced code block of its reply, or the whole
reply); the box's output comes back as the next message. An input the box cannot use costs its turn, as
the released platform loops spend a round on it (a round-by-round game asks again for an unreadable move,
as the released game platforms do). Then the tests are asked one after another in the same conversation:
the first after the last exploration output, each followed by the released feedback ("Your answer is
correct/wrong. Let's move to next question." and the system's "Ok."). A test has S shots: after a wrong
one the released retry message is sent. A box whose tests each have their own target or game (puzzles,
GSI) explores each test in a conversation of its own, as the released code resets its messages per sample.

`--grading published` (the default) asks for and reads answers as the released harness does (raw
replies, its per-family comparison and format re-asks: compiler/blackbox/published.py); `--grading
lenient` reads the first fenced block and compares as the box's own grading does (quotes, fences, tuples,
tolerances), with our prompts. A test scores its best shot: 1 or 0, or for a game box score / the
published normaliser (published: max(score, 0) / normaliser, not clipped at 1; lenient: clipped to
[0, 1]; both are recorded).

Accuracy of a box = the mean test score (percent); the report gives it per turn@shot setting (presets
10@1 and 20@2, the released `--max_turns` / `--k`), per box, family, difficulty and family x difficulty,
ranked like the paper's figures by the sum of easy and hard accuracy. A folder of boxes is one run.
"""
from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import attrs

from .. import metrics
from ..agents import BOX_AGENTS, box_agent
from ..answers import extract_answer
from ..boxexplorer.information import box_information
from ..boxexplorer.view import box_view
from ..models import FatalError, LostError, Model, Request
from .base import Plan, PlaySession, fingerprint
from .turnshot_report import BOX_LAYOUT


# Replies one exploration turn may take: a turn of a game played round by round is a whole game.
MAX_REPLIES_PER_TURN = 64
# The released harness asks again at most twice for a reply in the wrong format (eva_models.py `evaluate`:
# `if times > 1: break`).
FORMAT_REASKS = 2
# The system's reply the released harness writes after each test's feedback (eva_models.py `evaluate`).
OK_REPLY = "Ok."


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


def opening_prompt(world, turns: int, shots: int, rejection_costs: bool) -> str:
    """The box's manual, with its interaction section replaced by this session's turn@shot."""
    manual = world.manual.strip().split("\n## Interaction")[0].rstrip()
    rejected = "still uses the turn" if rejection_costs else "costs no turn"
    return (f"{manual}\n\n## This session\n\nYou have {turns} exploration turns. {world.turn_instructions} Put each "
            "input in a fenced code block (only the first fenced block of a reply is read); an input the box rejects "
            f"is answered with the reason and {rejected}. Each test has {shots} attempt(s); after a wrong "
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


class Conversation:
    """One conversation: the messages the system is sent next, and their log (every message is logged once,
    also one the released harness later drops from what the system sees)."""

    def __init__(self, session: "BoxSession", conv: str):
        self.session, self.conv = session, conv
        self.messages: list[dict] = []
        self.logged = 0

    def add(self, msg: dict) -> None:
        self.session.rt.emit({"type": "message", "id": f"msg:{self.conv}:{self.logged}", "conv": self.conv,
                              "index": self.logged, "message": msg})
        self.logged += 1
        self.messages.append(msg)


class BoxSession:
    """One system against one box: exploration turns, then every test with its shots.

    A box with memory or noise is explored through one world session (`world.session()`, held in the
    sandbox's workers: runtime.Grader.session), so each query sees what came before; a box with several
    targets (`world.explore_each_test`) is explored once per test, each in its own conversation and session.
    A round-by-round test game is played in the workers too (runtime.Grader.test_game). A turn is what the
    world charges for it (`Feedback.units`); under published grading a rejected input uses a turn
    (`published_rejection_costs`), under lenient grading a rejection the world does not charge is free (up
    to T of them), and in a game played round by round a turn is a whole game.
    """

    def __init__(self, rt, world, model: Model, config):
        self.rt, self.world, self.model, self.config = rt, world, model, config
        self.grader = rt.grader(world)
        self.turns, self.shots = turns_shots(world, config)
        self.condition = f"{self.turns}@{self.shots}"
        self.grading = getattr(config, "grading", "published")
        self.published = self.grading == "published"
        self.conv = conv_id(model.name, world, config)
        self.sample = f"{world.name}/{self.condition}"
        self.tokens = 0
        self.requests = 0
        # per explored conversation, (input, output or None, turns charged) of each turn: the bits per query
        self.queries: list[list[tuple]] = []

    def request(self, messages, purpose: str, conv: str, **meta) -> Request:
        return Request(messages=tuple(messages), settings=self.config.settings, purpose=purpose,
                       sample=self.sample, meta={"conv": conv, "condition": self.condition,
                                                 "trajectory": 1, "box": self.world.name, "t": None,
                                                 "step": None, "prefix": 0, "grading": self.grading, **meta})

    async def call(self, c: Conversation, purpose: str, **meta):
        """The system's reply to the conversation `c` as it stands."""
        return await self.rt.call(self.model, self.request(c.messages, purpose, c.conv, **meta))

    async def run(self) -> dict:
        w = self.world
        if w.explore_each_test:
            used, tests, lost = 0, [], None
            for i, task in enumerate(w.tasks, 1):
                c = Conversation(self, f"{self.conv}#{task.id}")
                t_used, pending, t_lost = await self.explore(await self.grader.session(task, self.grading), c)
                used += t_used
                if t_lost is not None:
                    lost = t_lost
                    break
                tests.append(await self.test(task, i, len(w.tasks), pending, c, len(c.messages)))
            return self.record(used, tests, lost, await self.information())
        c = Conversation(self, self.conv)
        used, pending, lost = await self.explore(await self.grader.session(None, self.grading), c)
        tests: list[dict] = []
        if lost is None:
            # one continuing conversation: test 1 after the last output, each test's feedback before the next
            explored = len(c.messages)
            for i, task in enumerate(w.tasks, 1):
                if tests and tests[-1]["lost"]:
                    # a later test would be asked in a conversation without the lost one: it waits for
                    # --resume (unscored, never wrong)
                    tests.append({"test": task.id, "score": None, "passed": False, "shots": [], "lost": True})
                    continue
                tests.append(await self.test(task, i, len(w.tasks), pending if i == 1 else "", c, explored))
        return self.record(used, tests, lost, await self.information())

    async def information(self) -> list | None:
        """The bits each exploration turn removed from the box explorer's hypothesis space for this box's shape
        (runner/boxexplorer/information.py, built from the box's view only), every explored conversation from
        the prior; None for a shape with no finite space (no row)."""
        view = box_view(self.world, self.turns, self.shots)
        scored = [await asyncio.to_thread(box_information, view, q) for q in self.queries]
        if not scored or any(s is None for s in scored):
            return None
        return [attrs.evolve(r, index=i) for i, r in enumerate(r for s in scored for r in s)]

    async def explore(self, session, c: Conversation) -> tuple[int, str, str | None]:
        """T turns against one world session; (turns used, the last output, why it was lost or None)."""
        w = self.world
        c.add({"role": "system", "content": system_prompt()})
        costs = self.published and w.published_rejection_costs
        opening = opening_prompt(w, self.turns, self.shots, costs or w.rejection_costs)
        if session.opening:
            opening += "\n\n" + session.opening
        c.add({"role": "user", "content": opening})
        used = free = step = 0
        # a game played round by round takes several replies per turn; bound the replies all the same
        cap = MAX_REPLIES_PER_TURN * self.turns
        pending = ""
        mistake = False  # the last message told the system its input could not be used
        queries: list[tuple] = []
        self.queries.append(queries)
        try:
            while used < self.turns and step < cap:
                reply = await self.call(c, "explore", step=step, t=used + 1)
                self.requests += 1
                self.tokens += reply.usage.total  # the record's budget: exploration only
                step += 1
                c.add(reply.message(with_tool_calls=False))
                if mistake:
                    # published: the input the box could not use and the message saying so leave the
                    # conversation once the system has replied (eva_models.py normal_output, has_format_mistake)
                    del c.messages[-3:-1]
                text = extract_answer(reply.content)
                fb = await session.probe(text)
                spend = fb.units
                if fb.status == "rejected" and not spend:
                    if costs:
                        spend = 1  # the released platform loops spend the round
                    elif free >= self.turns:
                        spend = 1  # free rejections are spent: later ones use a turn
                    else:
                        free += 1
                used += spend
                queries.append((text, fb.text if fb.status == "ok" else None, int(spend)))
                mistake = self.published and fb.status in ("rejected", "error") and costs
                self.rt.emit({"type": "box_turn", "id": f"turn:{c.conv}:{step}", "conv": c.conv,
                              "system": self.model.name, "box": w.name, "turn": used, "input": text,
                              "status": fb.status, "feedback": fb.text, "counted": bool(spend)})
                msg = feedback_message(text, fb, used + 1, self.turns, fb.status != "rejected" or bool(spend))
                if used < self.turns:
                    c.add({"role": "user", "content": msg})
                else:
                    pending = msg  # the last output opens the first test question
        except LostError as e:
            return used, pending, f"exploration lost to infrastructure: {e}"
        return used, pending, None

    def read_raw(self, task) -> bool:
        """Whether this test's replies are read as written and compared as the released harness does."""
        return self.published and bool(self.world.published_applies(task.id))

    def first_message(self, task, i: int, n: int, pending: str) -> str:
        if self.read_raw(task) or (self.published and task.shape == "play"):
            q = self.world.published_question(task.id, i == 1 or self.world.explore_each_test, self.shots)
            if self.world.explore_each_test:
                # each test's conversation of its own says which test it is: two puzzles whose exploration
                # read alike would otherwise be one request (and one reply) for two targets
                q = f"\nTest {i} of {n}. {q.lstrip(chr(10))}"
            return (pending + q) if pending else q.lstrip("\n")
        return (pending + "\n\n" if pending else "") + test_prompt(task, i, n)

    async def test(self, task, i: int, n: int, pending: str, c: Conversation, explored: int) -> dict:
        """One test in the conversation `c`: its shots, then (a box's tests sharing one conversation) the
        released feedback and the system's "Ok."."""
        game = task.shape == "play"
        prompt = self.first_message(task, i, n, pending)
        if not game:
            c.add({"role": "user", "content": prompt})
        shots: list[dict] = []
        last: str | None = None
        for s in range(1, self.shots + 1):
            try:
                if game:
                    shot, over = await self.play_test(task, s, c, explored, prompt)
                else:
                    shot, last = await self.answer(task, s, c, explored)
            except LostError as e:
                shots.append({"shot": s, "lost": True, "error": str(e)})
                break
            shots.append(shot)
            self.rt.emit({"type": "box_answer", "id": f"answer:{c.conv}:{task.id}:{s}", "conv": c.conv,
                          "system": self.model.name, "box": self.world.name, "test": task.id, **shot})
            # published: every test game is played (the highest score counts, unclipped); else a pass ends it
            if (shot["passed"] and not (game and self.published)) or s == self.shots:
                break
            if game:
                again = self.world.published_question(task.id, False, self.shots, s + 1) if self.published \
                    else retry_prompt(task, s + 1, self.shots)
                prompt = f"{over}\n\n{again}"
            elif last == "":
                break  # the released harness allows no further try (PSI: no dict after the re-asks)
            else:
                c.add({"role": "user", "content": last or retry_prompt(task, s + 1, self.shots)})
        passed = any(x.get("passed") for x in shots)
        # a lost shot leaves the test unscored (never wrong), unless an earlier shot already passed
        lost = any(x.get("lost") for x in shots) and not passed
        scored = [x for x in shots if not x.get("lost")]
        out = {"test": task.id, "score": None if lost or not scored else max(x["score"] for x in scored),
               "passed": passed, "shots": shots, "lost": lost}
        if any(x.get("unclipped") is not None for x in scored):
            out["unclipped"] = max(x["unclipped"] for x in scored)
            out["clipped"] = max(x["clipped"] for x in scored)
        if not game and not lost and not shots[-1].get("lost"):
            self.close_test(passed, last, c)
        return out

    def close_test(self, passed: bool, last: str, c: Conversation) -> None:
        """The released feedback after a test, and the system's "Ok." it writes (eva_models.py `evaluate`)."""
        if self.world.explore_each_test:
            return  # the conversation ends with the test (the released code resets its messages per sample)
        note = self.world.published_next(passed, last or "")
        if note:
            c.add({"role": "user", "content": note})
            c.add({"role": "assistant", "content": OK_REPLY})

    async def answer(self, task, shot: int, c: Conversation, explored: int) -> tuple[dict, str | None]:
        """One shot at a test, its reply left in `c`: (its record, the released harness's message before
        another try: "" when it allows none, None for our retry prompt)."""
        reply = await self.call(c, f"task:{task.id}", shot=shot, explored=explored)
        c.add(reply.message(with_tool_calls=False))
        if not self.read_raw(task):
            # lenient, or a test the released comparisons do not read (a game's moves, a program, a box of
            # our own in a family): the first fenced block, graded by the world under this run's grading
            answer = extract_answer(reply.content)
            v = await self.grader.verify(task, answer, self.grading)
            return self.shot_record(shot, answer, v), None
        text = reply.content or ""
        stage = "first" if shot == 1 else "retry"
        if shot == 1:
            for _ in range(FORMAT_REASKS):
                again = await self.grader.reask(task, text, stage)
                if not again:
                    break
                c.add({"role": "user", "content": again})
                reply = await self.call(c, f"task:{task.id}", shot=shot, explored=explored, reask=True)
                c.add(reply.message(with_tool_calls=False))
                # the reply in the wrong format and the re-ask leave what the system sees next
                # (eva_models.py evaluate: `del self.messages[-3:-1]`)
                del c.messages[-3:-1]
                text, stage = reply.content or "", "reask"
        v = await self.grader.verify(task, text, "published", stage)
        return self.shot_record(shot, text, v), getattr(v, "retry", None) or ""

    @staticmethod
    def shot_record(shot: int, answer: str, v) -> dict:
        rec = {"shot": shot, "answer": answer, "passed": bool(v.passed), "score": float(v.score),
               "detail": v.detail}
        unclipped = getattr(v, "unclipped", None)
        if unclipped is not None:
            rec["unclipped"] = float(unclipped)
            rec["clipped"] = max(0.0, min(1.0, float(unclipped)))
        return rec

    async def play_test(self, task, shot: int, c: Conversation, explored: int, prompt: str):
        """A test game played round by round in `c`, opened by `prompt`: one move per reply until the game
        ends; scored by the world. (its record, the message that ended the game)"""
        game = await self.grader.test_game(task, shot, self.grading)  # moves read as this run grades
        raw = self.world.reads_moves_raw(self.grading)
        c.add({"role": "user", "content": f"{prompt}\n\n{game.opening}"})
        moves: list[str] = []
        told = ""
        # every round may take one rejected move before a legal one
        for _ in range(2 * (game.horizon + 1)):
            if game.done:
                break
            if told:
                c.add({"role": "user", "content": told})
            reply = await self.call(c, f"task:{task.id}", shot=shot, moves=list(moves), explored=explored)
            c.add(reply.message(with_tool_calls=False))
            # published grading of a box with its platform's reader: the reply as written, as the released
            # game platforms read `normal_output`'s return (e.g. hard/load_shoot_defend_smart_final.py)
            move = (reply.content or "") if raw else extract_answer(reply.content)
            fb = await game.play(move)
            if fb.status == "ok":  # a rejected move is not played, nor one the deadline stopped
                moves.append(move)
            told = fb.text
        v = await game.verdict(self.grading)
        return self.shot_record(shot, " ".join(moves), v), told

    def record(self, used: int, tests: list[dict], lost: str | None, information: list | None = None) -> dict:
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
               "turns_used": used, "requests": self.requests, "tests": tests, "grading": self.grading}
        figures = [t for t in tests if not t["lost"] and t.get("unclipped") is not None]
        if figures:  # a game box: both figures, whichever the grading reports
            for key in ("clipped", "unclipped"):
                rec[key] = round(100.0 * sum(t[key] for t in figures) / len(figures), 6)
        if lost:
            rec["error"] = lost
        rec.update(metrics.information_record(information))
        self.rt.emit_record("trajectory", self.conv, self.conv, rec)
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
        per = Counter("{}@{}".format(*turns_shots(w, self.config)) for w in self.worlds)
        # without --preset each box runs at its own budget: say which setting how many boxes run at
        shapes = [f"{k} ({n} box{'es' if n > 1 else ''})" if len(per) > 1 else k for k, n in sorted(per.items())]
        # each turn may follow one free rejection; each test takes at most every shot (and, published, the
        # first shot up to FORMAT_REASKS re-asks)
        reasks = FORMAT_REASKS if getattr(self.config, "grading", "published") == "published" else 0
        calls = sum(2 * t + len(w.tasks) * (s + reasks) for w in self.worlds for t, s in [turns_shots(w, self.config)])
        rows = tuple((name, len(self.worlds), ", ".join(shapes), calls) for name in self.names)
        return Plan(f"{len(self.worlds)} box(es) x {len(self.names)} system(s), turn@shot {', '.join(shapes)}, "
                    f"grading {getattr(self.config, 'grading', 'published')}",
                    ("system", "boxes", "turn@shot", "calls<="), rows, calls * len(self.names))

    async def run(self, rt, out: Path) -> list[dict]:
        return list(await asyncio.gather(*(BoxSession(rt, w, m, self.config).run()
                                           for w, row in zip(self.worlds, self.systems) for m in row)))


class TurnShot:
    name = "turn@shot"
    layout = BOX_LAYOUT  # turnshot_report.py: how its runs are summarised and laid out
    many_worlds = True
    config_keys = ("turns", "shots", "grading")

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
