"""The judge protocol, for judge worlds: InteractiveBench's situation puzzles and interactive math.

Interactive condition (the seed's sections 3 and 4). One conversation per
(world, system): the world's manual (the surface and the rules), then T turns
(the world's budget, 20 by default; `--turns` overrides). In each turn the
player asks one question or submits an answer (a line `ANSWER: ...`); both
cost a turn. The judge answers a question with exactly one of yes / no / both
/ irrelevant and a submission with correct / incorrect. A correct submission
ends the session; after an incorrect one the player goes on. When the turns
are spent with no correct submission the player is asked once more for a final
answer (turn T+1, as InteractiveBench's own code does).

The judge is a model (`--judge-model`, default the first `--model`) or the
world's built-in keyword judge (`--judge keyword`, no network). A judge model
sees the world's judge prompt (the surface, the hidden truth and its key facts)
and the earlier moves with their labels; its raw reply and the label the
world's normaliser reads from it are both logged (`judge` events). A reply with
no label is asked again once; if it still has none it is logged `invalid` and
answered `irrelevant` (a submission: `incorrect`), and counted in the report.
A submission to a world graded `exact` (math by default) is checked by the
world's answer check, never by a model; under the keyword judge every
submission is.

pass@k condition (math worlds, the seed's section 4). After its interactive
sessions, each system samples complete solutions without a judge. Its k* is
chosen by the paper's token matching,

    |k* . E[T_pass^(1)] - E[T_interactive]| = min over k in {1, 2, ...} of |k . E[T_pass^(1)] - E[T_interactive]|,

with T counted as the player's output tokens only (InteractiveBench's
passk_eval: "player_output_tokens_only"): E[T_interactive] is the mean over
the system's math sessions, E[T_pass^(1)] the mean of the first sample of
each problem. A problem is solved at pass@k* when one of its k* samples is
correct. Built-in agents count a reply's words as its output tokens.

Built-in agents (`--agent`): `oracle` asks each key fact's question, then
submits the reference answer (its complete solution is the derivation and the
answer); `naive` submits the surface-only guess at once, every turn.
`metrics.judge_results` computes the report's numbers (report.py lays them out).
"""
from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from pathlib import Path
from typing import Sequence

import attrs

from ..metrics import INTERACTIVE, PASSK, mean
from ..models import FatalError, LitellmModel, LostError, Model, Reply, Request, Usage
from .base import Plan, ProbesTheWorld, fingerprint
from .turnshot import TurnShotLineup
from .judge_report import JUDGE_LAYOUT

PASS_K_CAP = 32  # a safety bound on k* (the paper's matched k* were 1 to 8); a capped k* is reported
JUDGES = ("keyword", "model")
# Generation settings (a run's --temperature overrides the players'). The paper, section 3.2.1: "Both the
# player and the judge use temperature 0"; the released code calls the judge and the strict grader at
# temperature=0.0 (situation_puzzle/benchmark.py run_single_game, math/turtle.py grade_equivalence) and
# samples pass@k solutions at 0.8 (math/run_passk.sh TEMPERATURE="0.8").
JUDGE_SETTINGS = {"temperature": 0.0}
PLAYER_SETTINGS = {"temperature": 0.0}
PASSK_SETTINGS = {"temperature": 0.8}


def conv_id(system: str, world, condition: str) -> str:
    return f"{system}|{world.name}|{condition}"


def turns_for(world, config) -> int:
    """This run's turn budget for a world: `--turns`, or the world's own."""
    return config.turns or world.budget.turns


# ----------------------------------------------------------------------------
# The judge


@attrs.frozen
class Ruling:
    """The judge's answer to one move, and how it was reached."""

    label: str  # what the player is told
    normalised: str  # the label read from the judge's reply, or "invalid"
    raw: tuple[str, ...]  # the judge's replies (one, or two after a re-ask); the keyword judge's label
    by: str  # "keyword" | "answer check" | the judge model's id
    tokens: int = 0

    @property
    def invalid(self) -> bool:
        return self.normalised == "invalid"


@attrs.frozen
class Judge:
    """Who rules on the player's moves: the world's keyword judge and answer check, or a judge model."""

    model: Model | None = None

    @property
    def name(self) -> str:
        return "keyword" if self.model is None else self.model.model_id

    async def rule(self, rt, world, move, history: Sequence[dict], where: dict) -> Ruling:
        """The ruling on one move; `history` is the judge's conversation so far (model judges)."""
        if move.is_answer and (self.model is None or world.grading == "exact"):
            v = await rt.grader(world).verify(world.task(world.task_id), move.text)
            label = "correct" if v.passed else "incorrect"
            return Ruling(label, label, (label,), "answer check")
        if self.model is None:
            label = world.keyword_label(move.text)
            return Ruling(label, label, (label,), "keyword")
        if move.is_answer and world.strict_grading:
            return await self.grade(rt, world, move, where)
        messages = world.judge_messages(list(history), move)
        raws, tokens = [], 0
        for attempt in (1, 2):
            req = Request(messages=tuple(messages), settings=JUDGE_SETTINGS, purpose="judge",
                          sample=f"{where['conv']}/judge/{where['t']}/{attempt}",
                          meta={**where, "conv": where["conv"] + "#judge", "step": attempt, "prefix": 0})
            reply = await rt.call(self.model, req)
            raws.append(reply.content or "")
            tokens += reply.usage.total
            label = world.normalise_label(reply.content, move)
            if label is not None:
                return Ruling(label, label, tuple(raws), self.name, tokens)
            messages = messages + [reply.message(with_tool_calls=False), world.reask_message(move)]
        return Ruling(world.fallback_label(move), "invalid", tuple(raws), self.name, tokens)

    async def grade(self, rt, world, move, where: dict) -> Ruling:
        """A math submission graded for equivalence by the judge model in a conversation of its own, as
        InteractiveBench's strict grader does (math/turtle.py grade_equivalence, and passk_eval.py for the
        pass@k samples): one call at temperature 0, the verdict read after the marker, anything but 1
        is incorrect (a reply without a verdict is counted invalid)."""
        req = Request(messages=tuple(world.grader_messages(move.text)), settings=JUDGE_SETTINGS, purpose="grade",
                      sample=f"{where['conv']}/grade/{where['t']}",
                      meta={**where, "conv": where["conv"] + "#grade", "step": where["t"], "prefix": 0})
        reply = await rt.call(self.model, req)
        verdict = world.read_grade(reply.content)
        label = "correct" if verdict else "incorrect"
        return Ruling(label, label if verdict is not None else "invalid", (reply.content or "",),
                      f"{self.name} (strict grader)", reply.usage.total)


NO_JUDGE = ("a judged run with models needs --judge-model: InteractiveBench fixes one judge model for every "
            "player (Grok-4.1-fast in every run of the paper, sections 3.2.1-3.2.2), at temperature 0, and a "
            "player never judges itself. Pass --judge-model MODEL, or --judge keyword for the offline keyword "
            "judge")


def make_judge(models: Sequence[Model], config) -> Judge:
    """The run's judge from --judge and --judge-model. A run with models and no --judge-model is refused
    (FatalError, before anything is written): InteractiveBench's benchmark.py and turtle.py take the
    judge model as a required argument of its own, never a player's."""
    choice = config.judge
    if choice is not None and choice not in JUDGES:
        raise FatalError(f"unknown judge {choice!r} (judges: {', '.join(JUDGES)})")
    if choice == "keyword":
        if config.judge_model:
            raise FatalError("--judge keyword takes no --judge-model")
        return Judge()
    if not config.judge_model:
        if choice == "model" or any(isinstance(m, LitellmModel) for m in models):
            raise FatalError(NO_JUDGE)
        return Judge()
    model_id = config.judge_model
    timeout = next((m.timeout for m in models if isinstance(m, LitellmModel)), 600.0)
    return Judge(LitellmModel(model_id, api_base=config.api_base, timeout=timeout, name=f"judge:{model_id}"))


# ----------------------------------------------------------------------------
# One interactive session


def system_prompt() -> str:
    return ("You are the player of an interactive puzzle. A judge knows the hidden solution and answers your "
            "questions with one word. Ask well-chosen questions, then submit your answer.")


def feedback(label: str, turn: int, turns: int) -> str:
    """The player's next message: the judge's word and the turn that follows."""
    if turn <= turns:
        return f"Judge: {label}.\n\nTurn {turn} of {turns}: ask a question or submit your answer."
    return (f"Judge: {label}.\n\nYou have used all {turns} turns. Give your final answer now, as one line: "
            "ANSWER: ...")


class JudgeSession:
    """One player, one world, T turns against the judge."""

    def __init__(self, rt, world, player: Model, judge: Judge, config):
        self.rt, self.world, self.player, self.judge = rt, world, player, judge
        self.settings = {**PLAYER_SETTINGS, **config.settings}
        self.turns = turns_for(world, config)
        self.conv = conv_id(player.name, world, INTERACTIVE)
        self.history: list[dict] = []
        self.judge_history: list[dict] = []
        self.tokens = self.tokens_in = self.judge_tokens = 0
        self.labels: Counter = Counter()
        self.submissions = self.invalid = 0

    def add(self, msg: dict) -> None:
        self.rt.emit({"type": "message", "id": f"msg:{self.conv}:{len(self.history)}", "conv": self.conv,
                      "index": len(self.history), "message": msg})
        self.history.append(msg)

    async def ask(self, purpose: str, turn: int) -> Reply:
        req = Request(messages=tuple(self.history), settings=self.settings, purpose=purpose,
                      sample=f"{self.world.name}/{INTERACTIVE}",
                      meta={"conv": self.conv, "condition": INTERACTIVE, "trajectory": 1, "t": turn, "step": turn,
                            "prefix": 0})
        reply = await self.rt.call(self.player, req)
        self.tokens += reply.usage.output_tokens
        self.tokens_in += reply.usage.input_tokens
        self.add(reply.message(with_tool_calls=False))
        return reply

    async def move(self, turn: int, final: bool = False) -> tuple[Ruling, object]:
        """One turn: (the judge's ruling, the player's move), both logged."""
        reply = await self.ask("final" if final else "move", turn)
        move = self.world.read_move(reply.content, "answer" if final else "question")
        if final and not move.is_answer:
            move = self.world.read_move(self.world.answer_line(move.text))
        where = {"condition": INTERACTIVE, "trajectory": 1, "t": turn, "conv": self.conv}
        ruling = await self.judge.rule(self.rt, self.world, move, self.judge_history, where)
        if self.judge.model is not None and not (move.is_answer and (ruling.by == "answer check"
                                                                     or self.world.strict_grading)):
            self.judge_history += [self.world.judge_message(move), {"role": "assistant", "content": ruling.label}]
        self.judge_tokens += ruling.tokens
        self.invalid += ruling.invalid
        if move.is_answer:
            self.submissions += 1
        else:
            self.labels[ruling.label] += 1
        self.rt.emit({"type": "judge", "id": f"judge:{self.conv}:{turn}", "conv": self.conv,
                      "system": self.player.name, "world": self.world.name, "turn": turn, "move": move.kind,
                      "text": move.text, "raw": list(ruling.raw), "normalised": ruling.normalised,
                      "label": ruling.label, "invalid": ruling.invalid, "by": ruling.by, "final": final})
        return ruling, move

    async def run(self) -> dict:
        self.add({"role": "system", "content": system_prompt()})
        self.add({"role": "user", "content": self.world.session_manual(self.turns)
                  + f"\nTurn 1 of {self.turns}: ask a question or submit your answer."})
        solved_at, used, forced, lost = None, 0, False, None
        try:
            for turn in range(1, self.turns + 1):
                ruling, move = await self.move(turn)
                used = turn
                if move.is_answer and ruling.label == "correct":
                    solved_at = turn
                    break
                self.add({"role": "user", "content": feedback(ruling.label, turn + 1, self.turns)})
            if solved_at is None:
                forced = True
                ruling, _ = await self.move(self.turns + 1, final=True)
                used = self.turns + 1
                if ruling.label == "correct":
                    solved_at = self.turns + 1
        except LostError as e:
            lost = f"lost to infrastructure: {e}"
        return self.record(solved_at, used, forced, lost)

    def record(self, solved_at, used: int, forced: bool, lost: str | None) -> dict:
        w = self.world
        rec = {"world": w.name, "system": self.player.name, "condition": INTERACTIVE, "trajectory": 1,
               "milestones": [], "kind": w.kind, "setting": w.setting, "judge": self.judge.name,
               "turns": self.turns, "turns_used": used, "solved": solved_at is not None, "solved_at": solved_at,
               "forced_final": forced, "questions": dict(self.labels), "submissions": self.submissions,
               "invalid_judge": self.invalid, "tokens": self.tokens, "tokens_in": self.tokens_in,
               "judge_tokens": self.judge_tokens, "status": "complete" if lost is None else "lost",
               "valid": lost is None, "lost": 0 if lost is None else 1}
        if lost:
            rec["error"] = lost
        self.rt.emit_record("trajectory", self.conv, self.conv, rec)
        return rec


# ----------------------------------------------------------------------------
# pass@k*: complete solutions without a judge


def k_star(pass1_tokens: float | None, interactive_tokens: float | None, cap: int = PASS_K_CAP) -> int:
    """The paper's token-matched k*: argmin over k >= 1 of |k . E[T_pass^(1)] - E[T_interactive]|.

    Ties go to the smaller k; with no measured pass@1 tokens k* is 1; k* is at most `cap`."""
    if not pass1_tokens or pass1_tokens <= 0 or interactive_tokens is None:
        return 1
    return min(range(1, cap + 1), key=lambda k: (abs(k * pass1_tokens - interactive_tokens), k))


async def sample(rt, world, player: Model, judge: Judge, i: int, settings: dict) -> dict:
    """Sample i of a complete solution, graded like an interactive submission."""
    conv = conv_id(player.name, world, PASSK)
    req = Request(messages=tuple(world.solve_messages()), settings=settings, purpose="solve",
                  sample=f"{world.name}/{PASSK}/{i}",
                  meta={"conv": conv, "condition": PASSK, "trajectory": i, "t": i, "step": i, "prefix": 0})
    try:
        reply = await rt.call(player, req)
        move = world.read_move(reply.content, "answer")
        if not move.is_answer:
            move = world.read_move(world.answer_line(move.text))
        ruling = await judge.rule(rt, world, move, (), {"condition": PASSK, "trajectory": i, "t": i, "conv": conv})
    except LostError as e:
        return {"i": i, "lost": True, "error": str(e), "tokens": 0}
    out = {"i": i, "answer": move.text[:500], "correct": ruling.label == "correct", "by": ruling.by,
           "raw": list(ruling.raw), "normalised": ruling.normalised, "tokens": reply.usage.output_tokens}
    rt.emit({"type": "sample", "id": f"sample:{conv}:{i}", "conv": conv, "system": player.name,
             "world": world.name, **out})
    return out


async def pass_at_k(rt, pairs, interactive: Sequence[dict], judge: Judge, settings: dict) -> list[dict]:
    """One system's pass@k* records over its math worlds (`pairs`: (world, player))."""
    names = {w.name for w, _ in pairs}
    e_inter = mean(r["tokens"] for r in interactive if r["world"] in names and r["status"] == "complete")
    first = await asyncio.gather(*(sample(rt, w, m, judge, 1, settings) for w, m in pairs))
    e_pass1 = mean(s["tokens"] for s in first if not s.get("lost"))
    k = k_star(e_pass1, e_inter)
    matching = {"interactive_tokens": e_inter, "pass1_tokens": e_pass1, "k": k,
                "capped": k == PASS_K_CAP and e_pass1 is not None and (e_inter or 0) > (PASS_K_CAP + 0.5) * e_pass1}
    rest = await asyncio.gather(*(asyncio.gather(*(sample(rt, w, m, judge, i, settings) for i in range(2, k + 1)))
                                  for w, m in pairs))
    records = []
    for (w, m), s1, more in zip(pairs, first, rest):
        samples = [s1, *more]
        lost = sum(1 for s in samples if s.get("lost"))
        solved = any(s.get("correct") for s in samples)
        conv = conv_id(m.name, w, PASSK)
        rec = {"world": w.name, "system": m.name, "condition": PASSK, "trajectory": 1, "milestones": [],
               "kind": w.kind, "setting": w.setting, "judge": judge.name, "k": k, "samples": samples,
               "pass1": bool(s1.get("correct")), "solved": solved,
               "tokens": sum(s["tokens"] for s in samples), "matching": matching,
               "status": "complete" if not lost or solved else "lost", "valid": not lost, "lost": lost}
        rt.emit_record("trajectory", conv, conv, rec)
        records.append(rec)
    return records


# ----------------------------------------------------------------------------
# Built-in players


class JudgeAgent(Model):
    """A built-in player of one judge world (no network); a reply's words count as its output tokens."""

    cacheable = False

    def __init__(self, world, turns: int):
        self.world, self.turns = world, turns

    async def complete(self, request: Request) -> Reply:
        text = self.reply(request)
        return Reply(content=text, usage=Usage(0, len(text.split())))

    def reply(self, request: Request) -> str:  # pragma: no cover - each agent replies its own way
        raise NotImplementedError


class JudgeOracle(JudgeAgent):
    """Asks each key fact's question, then submits the reference answer (the ceiling)."""

    name = model_id = "oracle"

    def reply(self, request: Request) -> str:
        w = self.world
        if request.purpose == "solve":
            return f"{w.truth.strip()}\n{w.answer_line(w.reference_answer)}"
        asked = sum(1 for m in request.messages if m.get("role") == "assistant")
        questions = w.oracle_questions()
        if request.purpose == "move" and asked < min(len(questions), self.turns - 1):
            return w.ask_line(questions[asked])
        return w.answer_line(w.reference_answer)


class JudgeNaive(JudgeAgent):
    """Submits the surface-only guess at once, and again every turn (the floor)."""

    name = model_id = "naive"

    def reply(self, request: Request) -> str:
        return self.world.answer_line(self.world.surface_guess)


JUDGE_AGENTS = {"oracle": JudgeOracle, "naive": JudgeNaive}


def judge_agent(spec: str, world, turns: int) -> Model:
    """The built-in agent `--agent SPEC` of a judge world."""
    agent = JUDGE_AGENTS.get(spec)
    if agent is None:
        raise FatalError(f"unknown agent {spec!r} for judge worlds (built-in: {', '.join(JUDGE_AGENTS)})")
    return agent(world, turns)


# ----------------------------------------------------------------------------
# A run


@attrs.define
class JudgeLineup(TurnShotLineup):
    """Every world against every system, as a turn@shot lineup (per world, the systems that play it:
    built-in agents are built per world), plus the run's judge."""

    judge: Judge = Judge()

    def jobs(self) -> list[str]:
        return [conv_id(m.name, w, c) for w, row in zip(self.worlds, self.systems) for m in row
                for c in ((INTERACTIVE, PASSK) if w.pass_at_k else (INTERACTIVE,))]

    def plan(self) -> Plan:
        judged = 2 if self.judge.model is not None else 0  # a judge call and its re-ask per move
        calls = 0
        for w in self.worlds:
            moves = turns_for(w, self.config) + 1
            calls += moves * (1 + judged)
            if w.pass_at_k:
                calls += PASS_K_CAP * (1 + (judged if w.grading != "exact" else 0))
        rows = tuple((name, len(self.worlds), sum(w.pass_at_k for w in self.worlds), self.judge.name, calls)
                     for name in self.names)
        return Plan(f"{len(self.worlds)} judge world(s) x {len(self.names)} system(s), judge {self.judge.name}",
                    ("system", "worlds", "pass@k worlds", "judge", "calls<="), rows, calls * len(self.names),
                    f"T+1 player moves per world, each judged once and re-asked at most once; pass@k* samples "
                    f"at most {PASS_K_CAP} per math world")

    def by_system(self) -> list[list[tuple]]:
        """(world, player) pairs grouped by system name, in lineup order."""
        groups: dict[str, list] = defaultdict(list)
        for w, row in zip(self.worlds, self.systems):
            for m in row:
                groups[m.name].append((w, m))
        return list(groups.values())

    async def play(self, rt, pairs) -> list[dict]:
        """One system: its interactive sessions, then its pass@k* samples on the math worlds."""
        interactive = list(await asyncio.gather(*(JudgeSession(rt, w, m, self.judge, self.config).run()
                                                  for w, m in pairs)))
        math = [(w, m) for w, m in pairs if w.pass_at_k]
        if not math:
            return interactive
        return interactive + await pass_at_k(rt, math, interactive, self.judge,
                                             {**PASSK_SETTINGS, **self.config.settings})

    async def run(self, rt, out: Path) -> list[dict]:
        done = await asyncio.gather(*(self.play(rt, pairs) for pairs in self.by_system()))
        return [r for records in done for r in records]


class JudgeProtocol(ProbesTheWorld):
    name = "judge"
    layout = JUDGE_LAYOUT  # judge_report.py: how its runs are summarised and laid out
    many_worlds = True
    config_keys = ("turns", "judge", "judge_model")

    def default_agents(self, worlds) -> tuple[str, ...]:
        return tuple(JUDGE_AGENTS)

    def lineup(self, worlds, models, agents, config) -> JudgeLineup:
        names = [w.name for w in worlds]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise FatalError(f"two judge worlds share a name: {', '.join(twice)} (a world's name identifies its "
                             "sessions)")
        if config.turns is not None and config.turns < 1:
            raise FatalError("--turns must be at least 1")
        judge = make_judge(models, config)
        return JudgeLineup(list(worlds), [list(models) + [judge_agent(a, w, turns_for(w, config)) for a in agents]
                                          for w in worlds], config, judge)

    def world_identity(self, worlds, name: str) -> dict:
        content = [(w.name, w.setting, w.surface, w.truth, w.answer, w.grading, w.budget.turns,
                    [(f.id, f.yes, f.no, f.mention, f.required) for f in w.facts]) for w in worlds]
        return {"name": name, "worlds": len(worlds), "settings": sorted({w.setting for w in worlds}),
                "fingerprint": fingerprint(content)}

    def exploration_calls(self, world) -> int:
        return world.budget.turns


JUDGE = JudgeProtocol()
