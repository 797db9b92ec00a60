"""One trajectory of the milestone protocol: its conversation, rounds, tool calls and milestones.

A trajectory is one continuous conversation in the provider's structured
format (tool-call ids kept): worked examples (context, no calls) -> M0 ->
N rounds of exploration, each followed by milestone M_t. A milestone forks
the history into discarded, tool-disabled copies: one asks for the rule
report, and every held-out task is answered `answers` times, each in a fresh
copy. Milestone copies run in the background while exploration goes on;
nothing from a copy returns to the history. How a round runs depends on the
condition (milestone.py lists them; conditions.py builds their probe scripts).
A4+O does not explore: it continues the conversation of the best autonomous
trajectory (a `Fork`) with the open-book statements.

An answer the model failed to give (empty, refused, cut off at the token limit,
a request the provider refused with a 400) scores zero; only an answer lost to
infrastructure is left unscored and makes the trajectory invalid. Each verdict
event names its `outcome`.
"""
from __future__ import annotations

import asyncio
import json
from typing import Sequence

import attrs

from worldspec import safejson
from .. import metrics
from ..answers import (ANSWERED, answer_outcome, parse_rule_report, read_answer, rejected_outcome,
                       reportable_rules, rule_score_applies, unprovable_tasks)
from ..models import FatalError, LostError, Model, RejectedError, Reply, Request, ToolCall
from .conditions import ProbeScript, Volume
from .reasks import (CLOSED_BOOK_CALL, FEW_RULES, LEAKED_CALL, NO_TOOL_CALL, SILENT, answer_nudge,
                     answer_reask_reason, explore_nudge, gradable, policy_of, reask_event, rules_need_reask,
                     rules_nudge)


def conv_id(system: str, condition: str, r: int) -> str:
    return f"{system}|{condition}|{r}"


# ----------------------------------------------------------------------------
# What the model reads


def system_prompt(world) -> str:
    return (
        f"You are exploring {world.name}, an unfamiliar world. Its manual describes the usual "
        "behaviour, but some rules of the world differ from the manual, and some names that look "
        "suspicious behave exactly as documented. Learn how the world really works: the held-out "
        "tasks you will be asked later are graded by executing your answers in the true world.")


def opening_prompt(world) -> str:
    b = world.budget
    parts = [f"# {world.name}", world.summary or "", "", "## Manual", world.manual.strip(), ""]
    if world.examples:
        parts.append("## Worked examples (outputs computed by the true world)")
        for ex in world.examples:
            parts += [f"### Example {ex.id} ({ex.band})", ex.prompt, "Program:",
                      f"```\n{ex.program}\n```", "Output:", f"```\n{ex.output}\n```", ""]
    parts += [
        "## How this session runs",
        f"You will explore in {b.rounds} rounds with the tool `{world.tool.name}` "
        f"(at most {b.calls_per_round} calls per round and {b.max_calls} in total; a call may use "
        f"at most {b.units_per_call} probe units and a call over that is rejected whole and runs "
        f"nothing; feedback is cut at {b.feedback_lines} lines and {b.feedback_chars} characters). "
        "Before the first round and after every round you will be tested without tools: asked to "
        "report the rules you believe differ from the manual and to answer held-out tasks.",
    ]
    return "\n".join(parts).strip()


def round_prompt(world, t: int, *, slots: int, left: int, mode: str) -> str:
    n = world.budget.rounds
    if mode == "autonomous":
        return (f"Exploration round {t} of {n}. Call `{world.tool.name}` to run probes: up to "
                f"{slots} calls this round ({left} left in total). Reply without a tool call when "
                "you are done with this round.")
    if mode == "scripted":
        return (f"Exploration round {t} of {n}. In this round the probes are chosen for you and run "
                f"through `{world.tool.name}`; after each result, write down what you conclude "
                "about the world's rules.")
    # run_eval.py _run_explore_phase, control mode "think": no experiment and no new feedback this
    # block; update the hypotheses from what is already known, noting the surest and the least sure
    # rules; write no test code
    return (f"Round {t} of {n}. This round runs no probe and brings no new feedback from the world. "
            "From what you have seen so far, revise your hypotheses about the world's rules: note "
            "the ones you are surest of and the ones you are least sure of. Do not write probes.")


def rules_prompt(instructions: str, t: int) -> str:
    # The world owns how its rules are stated (equation notation, schema ids, ...); the runner
    # takes out any example that states a true rule (answers.report_instructions).
    return (f"Milestone M{t}. Tools are disabled. Report the rules of this world that you believe "
            f"differ from the manual.\n\n{instructions}\n\nPut the whole report in one "
            "fenced code block.")


def task_prompt(task, t: int) -> str:
    return (f"Milestone M{t}. Tools are disabled. Answer held-out task {task.id} with what you "
            f"know about this world.\n\n{task.prompt}\n\nPut your answer in a fenced code block; "
            "the first one of your reply is graded.")


OVER_BUDGET = "rejected: not run, this round's call budget is spent. End the round by replying without a tool call."


def unusable_call(tool, called: str) -> str:
    """What a call that runs nothing is told: a tool of another name, or arguments without the program."""
    if called != tool.name:
        return f"error: unknown tool {called!r}; the only tool is {tool.name!r}. Nothing was run."
    return f"error: invalid arguments; expected a JSON object {{\"{tool.parameter}\": \"...\"}}. Nothing was run."


def open_book_note(world) -> str:
    """The rule disclosure of O@M0 and A4+O (run_eval.py `_run_v2_oracle_diagnostics` sends
    oracle_rules.build_oracle_message the same way: one user turn the model acknowledges)."""
    return "The complete list of rules in which this world differs from its manual:\n" + world.open_book


# run_eval.py _run_tool_round: after the block's calls are spent the model gets turns with tools
# closed (tool_choice none), at most _TOOL_LOOP_GRACE = 3 that still call, before the round ends
TOOL_LOOP_GRACE = 3


# ----------------------------------------------------------------------------
# One trajectory


@attrs.frozen
class Fork:
    """Where A4+O starts: the conversation of the best autonomous trajectory after its last round."""

    conv: str
    history: tuple
    counters: "Counters"
    endpoint: float | None = None


@attrs.define
class Counters:
    calls: int = 0  # C: tool calls run by the world (not rejected)
    attempted: int = 0  # tool calls that took a slot of the budget
    rejected: int = 0  # of those, rejected whole by the world (over the unit cap)
    units: int = 0  # P
    tokens_in: int = 0  # T = tokens_in + tokens_out, exploration requests only
    tokens_out: int = 0
    requests: int = 0  # exploration requests (nudges and closing turns included)
    nudges: int = 0  # exploration rounds nudged for making no tool call (reasks.py)


class Trajectory:
    def __init__(self, rt, world, model: Model, condition: str, index: int, *, answers: int,
                 script: ProbeScript | None = None, volume: Volume | None = None,
                 settings: dict | None = None, fork: Fork | None = None, instructions: str | None = None):
        self.rt = rt
        self.world = world
        self.grader = rt.grader(world)
        self.model = model
        self.condition = condition
        self.index = index
        self.answers = answers
        self.script = script
        self.volume = volume
        self.settings = dict(settings or {})
        self.fork = fork
        self.instructions = world.report_instructions if instructions is None else instructions
        # how often a turn with nothing to measure is asked again (reasks.py; none for built-in agents)
        self.policy = policy_of(world)
        self.conv = conv_id(model.name, condition, index)
        self.sample = f"{condition}/r{index}"
        self.history: list[dict] = []
        self.c = Counters()
        self.step = 0
        self.tool = world.tool.schema()
        self.tool_name = world.tool.name
        self.param = world.tool.parameter
        self.status = "running"
        self.error: str | None = None
        self.tool_seq = 0
        self.ended: dict | None = None  # exploration cut short: the conversation outgrew the context
        self.last_record: dict | None = None  # set when the trajectory ends
        self.scoring: asyncio.Future | None = None  # the information scoring last asked for
        self.replied = 0  # milestone requests the provider answered
        self.refused = 0  # milestone requests refused as bad requests (400, not the context)

    # -- bookkeeping ---------------------------------------------------------

    def add(self, msg: dict) -> None:
        self.rt.emit({"type": "message", "id": f"msg:{self.conv}:{len(self.history)}",
                      "conv": self.conv, "index": len(self.history), "message": msg})
        self.history.append(msg)

    async def _explore(self, t: int, *, tools: bool, tool_choice: str | None = None) -> Reply:
        req = Request(messages=tuple(self.history), tools=(self.tool,) if tools else None,
                      tool_choice=tool_choice if tools else None, settings=self.settings,
                      purpose="explore", sample=self.sample,
                      meta={"conv": self.conv, "condition": self.condition, "trajectory": self.index,
                            "t": t, "step": self.step, "prefix": len(self.history)})
        self.step += 1
        reply = await self.rt.call(self.model, req)
        self.c.requests += 1
        self.c.tokens_in += reply.usage.input_tokens
        self.c.tokens_out += reply.usage.output_tokens
        return reply

    # -- the trajectory ------------------------------------------------------

    async def run(self) -> dict:
        n = self.world.budget.rounds
        cond = self.condition
        if cond == "a4-open-book":
            self._continue_fork()
        else:
            self.add({"role": "system", "content": system_prompt(self.world)})
            self.add({"role": "user", "content": opening_prompt(self.world)})
        pending: list[asyncio.Task] = []

        def milestone(t: int, open_book: bool = False) -> None:
            snap = (tuple(self.history), attrs.evolve(self.c))
            pending.append(asyncio.ensure_future(self.milestone(t, *snap, open_book=open_book)))

        explores = cond not in ("open-book-m0", "direct", "a4-open-book")
        limiter = self.rt.limiter(self.model)
        if explores:
            limiter.reserve()
        try:
            try:
                if cond == "open-book-m0":
                    # run_eval.py _run_v2_oracle_diagnostics ("O@M0"): the M0 conversation, the rule
                    # disclosure, the model's acknowledgement, then the held-out tests
                    milestone(0, open_book=True)
                elif cond == "direct":
                    for t in range(0, n + 1):
                        milestone(t)
                elif cond == "a4-open-book":
                    # explorationbench.txt A.4: "after the four autonomous rounds (A4+O)"; Table 1:
                    # "after the Best@3 trajectory's exploration" -- that conversation, continued
                    milestone(n, open_book=True)
                else:
                    milestone(0)
                    for t in range(1, n + 1):
                        await self.round(t)
                        milestone(t)
                        self._score_so_far()
            except LostError as e:
                self.status, self.error = "lost", f"exploration lost to infrastructure: {e}"
            finally:
                if explores:
                    explores = False
                    limiter.unreserve()
            pending.append(self._score_so_far())
            *records, scored = await asyncio.gather(*pending)
        except BaseException:
            if explores:
                limiter.unreserve()
            for p in pending:
                p.cancel()
            raise
        if self.status == "running" and self.refused and not self.replied:
            # every request refused as a bad request: a configuration the provider rejects, not a model
            # failing to answer (a 400 on some answers only scores those answers zero)
            self.status = "error"
            self.error = "the provider refused every request of this trajectory (HTTP 400); check the model settings"
        if self.status == "running":
            self.status = "complete"
        return self.record(list(records), scored)

    def _continue_fork(self) -> None:
        """A4+O: take over the best autonomous trajectory's conversation after its last round."""
        f = self.fork
        self.history = list(f.history)
        self.c = attrs.evolve(f.counters)
        self.rt.emit({"type": "fork", "id": f"fork:{self.conv}", "conv": self.conv, "source": f.conv,
                      "source_endpoint": f.endpoint, "prefix": len(self.history),
                      "rounds": self.world.budget.rounds, "calls": self.c.calls, "probe_units": self.c.units,
                      "tokens": self.c.tokens_in + self.c.tokens_out})

    def _score_so_far(self) -> asyncio.Future:
        """Score the information of the probes so far, after the scoring already under way: round by
        round while the trajectory goes on (each call carries on from the last), so that little is
        left when exploration ends. The last call's records are the trajectory's."""
        probes = metrics.information_probes(self.world, self.history)
        before = self.scoring

        async def score():
            if before is not None:
                await asyncio.wait([before])  # its result is superseded; an error shows again here
            return await self.grader.information(probes)
        self.scoring = asyncio.ensure_future(score())
        return self.scoring

    def record(self, milestones: list[dict], information: list | None = None) -> dict:
        dyn = metrics.trajectory_dynamics(milestones)
        lost = sum(m.get("lost", 0) for m in milestones)
        rec = {
            "world": self.world.name, "system": self.model.name, "condition": self.condition,
            "trajectory": self.index, "milestones": milestones, "status": self.status,
            "valid": self.status == "complete" and lost == 0, "lost": lost,
            "endpoint": milestones[-1]["accuracy"] if milestones else None, **dyn,
        }
        if self.error:
            rec["error"] = self.error
        rec.update(metrics.information_record(information))
        if self.ended:
            rec["exploration_ended"] = self.ended
        if self.script is not None:
            rec["probe_source"] = self.script.source
        elif self.volume is not None:
            rec["probe_source"] = self.volume.source
        if self.volume is not None:
            rec["volume"] = self.volume.summary()
        if self.fork is not None:
            rec["source_trajectory"] = self.fork.conv
        self.last_record = rec
        self.rt.emit_record("trajectory", self.conv, self.conv, rec)
        return rec

    # -- rounds --------------------------------------------------------------

    def _slots(self) -> tuple[int, int]:
        b = self.world.budget
        return b.calls_per_round, b.max_calls - self.c.attempted

    async def round(self, t: int) -> None:
        try:
            if self.ended:
                pass  # the conversation no longer fits the model: later rounds add nothing
            elif self.condition == "autonomous":
                await self._round_autonomous(t)
            elif self.condition in ("hindsight", "fixed"):
                await self._round_scripted(t)
            elif self.condition == "without-tool":
                await self._round_without_tool(t)
        except RejectedError as e:
            if e.reason != "context_window":  # a 400 on exploration: the request itself is wrong
                raise FatalError(str(e)) from e
            # the history outgrew the model's context: exploration ends as a spent budget would
            self.ended = {"t": t, "reason": e.reason, "error": str(e)}
            self.rt.emit({"type": "exploration_ended", "id": f"ended:{self.conv}", "conv": self.conv,
                          "t": t, "reason": e.reason, "error": str(e)})
        self.rt.emit({"type": "round_end", "id": f"round:{self.conv}:{t}", "conv": self.conv, "t": t,
                      "calls": self.c.calls, "probe_units": self.c.units,
                      "tokens": self.c.tokens_in + self.c.tokens_out})

    async def _round_autonomous(self, t: int) -> None:
        per_round, left = self._slots()
        slots = min(per_round, left)
        if slots <= 0:
            return  # the run's call budget is spent: nothing to do this round
        self.add({"role": "user", "content": round_prompt(self.world, t, slots=slots, left=left,
                                                          mode="autonomous")})
        used = named = nudged = grace = 0
        while True:
            spent = used >= slots
            # run_eval.py _run_tool_round: once the block's calls are spent, tools are closed
            reply = await self._explore(t, tools=True, tool_choice="none" if spent else None)
            self.add(reply.message())
            if reply.tool_calls:
                turn = self.step - 1
                grace += spent
                for tc in reply.tool_calls:
                    if used >= slots:
                        await self._tool_result(t, turn, tc, None, over_budget=True)
                        continue
                    used += 1
                    named += tc.name == self.tool_name
                    await self._tool_result(t, turn, tc, self._program(tc))
                if grace >= TOOL_LOOP_GRACE:
                    break
                continue
            # a reply without a tool call ends the round, unless the round has called the tool not
            # once: run_eval.py _run_explore_phase nudges it, at most _MAX_NO_CODE_RETRIES = 2 times
            if named or spent or nudged >= self.policy.explore or not self.model.reasks:
                break
            nudged += 1
            self.c.nudges += 1
            self.rt.emit(reask_event(self.conv, f"explore:t{t}", nudged, NO_TOOL_CALL, t=t,
                                     system=self.model.name, condition=self.condition))
            self.add({"role": "user", "content": explore_nudge(self.tool_name, slots - used)})

    async def _round_scripted(self, t: int) -> None:
        rounds = self.script.rounds if self.script else ()
        turns = rounds[t - 1] if t - 1 < len(rounds) else ()
        per_round, left = self._slots()
        slots = min(per_round, left)
        if not turns or slots <= 0:
            return
        self.add({"role": "user", "content": round_prompt(self.world, t, slots=slots, left=left,
                                                          mode="scripted")})
        used = 0
        for j, probes in enumerate(turns):
            probes = probes[: max(0, slots - used)]
            if not probes:
                break
            calls = tuple(ToolCall(id=f"{self.condition}_{t}_{j}_{i}", name=self.tool_name,
                                   arguments=json.dumps({self.param: p}))
                          for i, p in enumerate(probes))
            self.add({"role": "assistant", "content": None, "tool_calls": [c.to_json() for c in calls]})
            for c, p in zip(calls, probes):
                used += 1
                await self._tool_result(t, self.step, c, p)
            reply = await self._explore(t, tools=True, tool_choice="none")
            if reply.content:
                self.add(reply.message(with_tool_calls=False))

    async def _round_without_tool(self, t: int) -> None:
        # run_eval.py _run_explore_phase, control mode "think": one model turn per exploration block
        # (protocol v2 has one round per block), no tool and no feedback
        self.add({"role": "user", "content": round_prompt(self.world, t, slots=0, left=0, mode="without-tool")})
        reply = await self._explore(t, tools=False)
        self.add(reply.message(with_tool_calls=False))

    def _program(self, tc: ToolCall) -> str | None:
        if tc.name != self.tool_name:
            return None
        try:
            args = safejson.loads(tc.arguments or "{}")
        except (ValueError, TypeError):
            return None
        if isinstance(args, dict) and isinstance(args.get(self.param), str):
            return args[self.param]
        return None

    async def _tool_result(self, t: int, turn: int, tc: ToolCall, program: str | None,
                           over_budget: bool = False) -> None:
        units, truncated = 0, False
        if over_budget:
            status = "over_budget"
            text = OVER_BUDGET
        elif program is None:
            self.c.attempted += 1
            status = "invalid"
            text = unusable_call(self.world.tool, tc.name)
        else:
            self.c.attempted += 1
            fb = await self.grader.probe(program)
            status, units, truncated = fb.status, int(fb.units), bool(fb.truncated)
            if status == "rejected":
                self.c.rejected += 1
            else:
                self.c.calls += 1
            self.c.units += units
            text = fb.text if fb.text else "(no output)"
        self.add({"role": "tool", "tool_call_id": tc.id, "content": text})
        self.rt.emit({"type": "tool", "id": f"tool:{self.conv}:{self.tool_seq}", "conv": self.conv,
                      "system": self.model.name, "condition": self.condition,
                      "trajectory": self.index, "t": t, "turn": turn, "call_id": tc.id,
                      "program": program, "status": status, "units": units,
                      "truncated": truncated, "feedback": text})
        self.tool_seq += 1

    # -- milestones ----------------------------------------------------------

    async def milestone(self, t: int, history: Sequence[dict], c: Counters, *,
                        open_book: bool = False) -> dict:
        world = self.world
        prefix = tuple(history)
        sample = f"{self.sample}/m{t}"
        reasked = {"rules": 0, "answers": 0}  # re-asks of this milestone (reasks.py)

        def req(tail: tuple, purpose: str, k: int = 0, attempt: int = 0) -> Request:
            # a re-ask names its attempt as its step (None for the first ask: keys of older logs hold)
            return Request(messages=prefix + tail, settings=self.settings, answer_index=k, purpose=purpose,
                           sample=sample,
                           meta={"conv": self.conv, "condition": self.condition,
                                 "trajectory": self.index, "t": t,
                                 "step": f"reask {attempt}" if attempt else None,
                                 "prefix": len(prefix)})

        def user(text: str) -> tuple:
            return ({"role": "user", "content": text},)

        async def ask(r: Request):
            try:
                reply = await self.rt.call(self.model, r)
            except (LostError, RejectedError) as e:
                if isinstance(e, RejectedError) and e.reason == "bad_request":
                    self.refused += 1
                return e
            self.replied += 1
            return reply

        grader = self.grader
        reportable = reportable_rules(world)
        # O@M0 and A4+O ask for no rule report: run_eval.py _run_v2_oracle_diagnostics grades the
        # held-out tests only
        scored = rule_score_applies(world) and not open_book
        ack_tokens, ack_lost = 0, None
        if open_book:
            # run_eval.py _run_v2_oracle_diagnostics: a closed-book copy of the milestone's conversation
            # is given the rules, the model acknowledges them, and every test forks from there
            disclose = user(open_book_note(world))
            ack = await ask(req(disclose, "open_book_ack"))
            if isinstance(ack, LostError):
                ack_lost = str(ack)
                ack_msg = {"role": "assistant", "content": ""}
            else:
                ack_msg = ack.message(with_tool_calls=False) if isinstance(ack, Reply) else \
                    {"role": "assistant", "content": ""}
                ack_tokens = ack.usage.total if isinstance(ack, Reply) else 0
            self.rt.emit({"type": "open_book_ack", "id": f"ack:{self.conv}:m{t}", "conv": self.conv, "t": t,
                          "lost": ack_lost is not None, "ack": ack_msg.get("content")})
            prefix = prefix + disclose + (ack_msg,)

        async def rules():
            if not reportable or open_book:  # a world without rule equations asks for no report
                return {"stated": 0, "correct": [], "extraneous": [], "errors": []}, False, 0
            tail = user(rules_prompt(self.instructions, t))
            reply = await ask(req(tail, "rules"))
            tokens = reply.usage.total if isinstance(reply, Reply) else 0
            # run_eval.py _run_milestone: a summary of fewer than 3 rules is asked again in the same
            # copy, at most twice (MAX_RETRY = 2); the last summary is the one scored (AlienLogic:
            # once, when it came back empty, reasks.PROOF_POLICY)
            attempt = 0
            while (self.model.reasks and isinstance(reply, Reply) and attempt < self.policy.rules
                   and rules_need_reask(self.policy, world, reply.content)):
                attempt += 1
                reasked["rules"] += 1
                few = self.policy.rules_when == "few"
                self.rt.emit(reask_event(self.conv, f"rules:m{t}", attempt, FEW_RULES if few else SILENT, t=t,
                                         stated=len(parse_rule_report(reply.content))))
                if few:  # the same copy, carried on
                    tail = tail + (reply.message(with_tool_calls=False),) + user(rules_nudge())
                else:  # the empty turn rolled off: the question again, with the note
                    tail = user(rules_prompt(self.instructions, t) + "\n\n" + rules_nudge())
                again = await ask(req(tail, "rules", attempt=attempt))
                if isinstance(again, RejectedError):
                    break  # a 400 on the re-ask: the report already given stands
                reply = again
                tokens += reply.usage.total if isinstance(reply, Reply) else 0
            lost = isinstance(reply, LostError)
            outcome = "lost" if lost else rejected_outcome(reply) if isinstance(reply, RejectedError) \
                else answer_outcome(reply)
            report = await grader.rule_report(reply.content if isinstance(reply, Reply) else None)
            # a world diagnosed by UnprovRec keeps its raw report in the log, unscored
            self.rt.emit({"type": "rule_report", "id": f"rules:{self.conv}:m{t}", "conv": self.conv,
                          "t": t, "lost": lost, "outcome": outcome, "scored": scored, "reasks": attempt,
                          **report})
            return report, lost, tokens

        async def final_reply(task, k: int, base: dict):
            """The reply graded for one answer, with the tokens of every ask, after the re-asks of
            run_eval.py _run_single_test (at most _MAX_NO_CODE_RETRIES = 2, in the same copy)."""
            question = user(task_prompt(task, t))
            tail = question
            reply = await ask(req(tail, f"task:{task.id}", k))
            if not isinstance(reply, Reply):
                return reply, 0, 0
            best, tokens, attempt = reply, reply.usage.total, 0
            while self.model.reasks and attempt < self.policy.answers:
                reason = answer_reask_reason(reply, self.tool_name)
                if reason is None:
                    break
                attempt += 1
                reasked["answers"] += 1
                self.rt.emit(reask_event(self.conv, f"task:m{t}:{task.id}:a{k}", attempt, reason, t=t,
                                         task=task.id, answer_index=k))
                nudge = answer_nudge(reason, self.tool_name)
                if reason == CLOSED_BOOK_CALL:  # the calls are answered, refused, as tool results
                    tail = tail + (reply.message(),) + tuple(
                        {"role": "tool", "tool_call_id": tc.id, "content": "error: not run. " + nudge}
                        for tc in reply.tool_calls)
                elif reason == LEAKED_CALL or self.policy.answers_fresh:  # asked afresh: question + nudge
                    tail = user(task_prompt(task, t) + "\n\n" + nudge)
                else:
                    tail = tail + (reply.message(with_tool_calls=False),) + user(nudge)
                again = await ask(req(tail, f"task:{task.id}", k, attempt))
                if isinstance(again, LostError):
                    return again, tokens, attempt
                if isinstance(again, RejectedError):
                    break  # a 400 on the re-ask: the reply already given stands
                reply = again
                tokens += reply.usage.total
                # an extra ask may only add an answer, never take one away
                if gradable(reply) or not gradable(best):
                    best = reply
            return best, tokens, attempt

        async def answer(task, k: int):
            base = {"type": "verdict", "id": f"verdict:{self.conv}:m{t}:{task.id}:a{k}",
                    "conv": self.conv, "t": t, "task": task.id, "answer_index": k}
            if ack_lost is not None:  # the disclosure never got its acknowledgement: nothing to fork
                self.rt.emit({**base, "type": "lost", "id": f"lost:{self.conv}:m{t}:{task.id}:a{k}", "outcome": "lost",
                              "error": ack_lost})  # a stable id: a resume does not append it again
                return None, 0
            reply, tokens, attempts = await final_reply(task, k, base)
            base["reasks"] = attempts
            if isinstance(reply, LostError):  # infrastructure: not an answer, the run is invalid
                self.rt.emit({**base, "type": "lost", "id": f"lost:{self.conv}:m{t}:{task.id}:a{k}", "outcome": "lost",
                              "error": str(reply)})
                return None, tokens
            if isinstance(reply, RejectedError):  # a 400 for this answer: it scores zero, the run goes on
                self.rt.emit({**base, "passed": False, "outcome": rejected_outcome(reply),
                              "detail": str(reply), "answer": None})
                return 0, tokens
            outcome = answer_outcome(reply)
            text = read_answer(world, task, reply.content)
            if outcome != ANSWERED or reply.tool_calls:
                # explorationbench.txt 3.3: "An answer that is missing ... scores zero"
                outcome = outcome if outcome != ANSWERED else "tool_call"
                self.rt.emit({**base, "passed": False, "outcome": outcome,
                              "detail": f"no answer graded ({outcome}, finish_reason "
                                        f"{reply.finish_reason or 'none'})", "answer": text})
                return 0, tokens
            try:
                v = await grader.verify(task, text)
            except Exception as e:  # noqa: BLE001 — a grader crash is a bug, never a wrong answer
                self.rt.emit({**base, "type": "grader_error", "id": f"grader_error:{self.conv}:m{t}:{task.id}:a{k}",
                              "error": f"{type(e).__name__}: {e}"})
                return None, tokens
            self.rt.emit({**base, "passed": bool(v.passed), "outcome": outcome, "detail": v.detail,
                          "answer": text})
            return (1 if v.passed else 0), tokens

        keys = [(task, k) for task in world.tasks for k in range(self.answers)]
        results = await asyncio.gather(rules(), *(answer(task, k) for task, k in keys))
        report, rules_lost, ms_tokens = results[0]
        ms_tokens += ack_tokens
        correct_rules = set(report["correct"]) if scored else set()
        verdicts: dict[str, list[int | None]] = {task.id: [None] * self.answers for task in world.tasks}
        for (task, k), (y, tokens) in zip(keys, results[1:]):
            verdicts[task.id][k] = y
            ms_tokens += tokens

        scores = metrics.milestone_accuracy(verdicts, self.answers)
        # covered: every rule the task requires (World.requires, the certification's definition) is
        # stated correctly in this milestone's report
        covered = [tk.id for tk in world.tasks if await grader.requires(tk) <= correct_rules] if scored else []
        unc_ids = [tk.id for tk in world.tasks if tk.id not in set(covered)] if scored else []
        cov = metrics.milestone_accuracy({k: verdicts[k] for k in covered}, self.answers)
        unc = metrics.milestone_accuracy({k: verdicts[k] for k in unc_ids}, self.answers)
        unprovable = [tk.id for tk in unprovable_tasks(world)]
        unprov = metrics.milestone_accuracy({k: verdicts[k] for k in unprovable}, self.answers)
        rec = {
            "t": t,
            **scores,
            "calls": c.calls, "probe_units": c.units, "tokens": c.tokens_in + c.tokens_out,
            "rules_correct": len(correct_rules) if scored else None,
            "rules_total": len(reportable) if scored else None,
            "rules_stated_correctly": [r.id for r in reportable if r.id in correct_rules],  # in the world's order
            # explorationbench.txt Table 1: "UnprovRec is its rate of correct refusal on unprovable theorems"
            "unprov_rec": unprov["accuracy"] if any(y is not None for k in unprovable for y in verdicts[k]) else None,
            "unprovable": len(unprovable),
            "rules_lost": rules_lost,
            "tokens_in": c.tokens_in, "tokens_out": c.tokens_out,
            "calls_attempted": c.attempted, "calls_rejected": c.rejected,
            "exploration_requests": c.requests,
            # re-asks (reasks.py): exploration nudges so far (their tokens are in T), and this
            # milestone's re-asked rule reports and answers (their tokens are in milestone_tokens)
            "exploration_nudges": c.nudges,
            "reasks": dict(reasked),
            "milestone_tokens": ms_tokens,
            "covered": {"n": len(covered), "accuracy": cov["accuracy"] if covered else None},
            "uncovered": {"n": len(unc_ids), "accuracy": unc["accuracy"] if unc_ids else None},
            "open_book": open_book,
            "tasks": verdicts,
        }
        if rules_lost:
            rec["lost"] += 1
        self.rt.emit_record("milestone", f"{self.conv}:m{t}", self.conv, rec, system=self.model.name,
                            condition=self.condition, trajectory=self.index)
        return rec
