"""Test doubles for the runner: a small fake World and a scripted "explorer" policy.

FakeWorld offers the World surface the runner consumes (manual, examples,
tasks, rules, herrings, budget, tool, probe, charge, verify, requires,
grade_equation, probe_generator, open_book) over a toy language:

    EMIT e, e, ...          prints the values (1 probe unit per argument)
    REPEAT k EMIT e, ...    prints them k times (3 units per argument)
    e := INT | DOUBLE(INT) | TRIPLE(INT) | SHATTER(INT, INT)

The manual says DOUBLE doubles and TRIPLE triples; in truth DOUBLE triples
(rule R1) and TRIPLE adds one after tripling (rule R7). SHATTER multiplies,
as documented (herring H1). A task's answer passes iff it equals the task's
solution (whitespace-normalised).

`explorer_policy(messages, tools, tool_choice)` is a deterministic fake model
that reads only what a provider would see: it probes a few times per round,
learns R1 after one probe and R7 after three, and answers accordingly. It
drives both ScriptedModel (in-process) and the fake OpenAI server (HTTP).

Run as a script (`python tests/runner_fakes.py OUT [--resume] [--latency S]`)
it performs a run on FakeWorld with a slow scripted model — the subprocess of
the kill-and-resume test.
"""
from __future__ import annotations

import json
import random
import re
import sys
from typing import Iterator

import attrs

from worldspec.compiler.api import Budget, Example, Feedback, Rule, Task, Verdict


@attrs.frozen
class FakeTool:
    name: str = "run_program"
    description: str = "Run a program in the world and see its output."
    parameter: str = "program"


_EXPR = re.compile(r"^\s*(?:(DOUBLE|TRIPLE)\((-?\d+)\)|SHATTER\((-?\d+),\s*(-?\d+)\)|(-?\d+))\s*$")


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


class ProbeError(Exception):
    pass


class FakeWorld:
    kind = "program"

    def __init__(self, *, budget: Budget | None = None, n_tasks: int = 4, name: str = "Fake"):
        self.name = name
        self.version = 1
        self.seed = 7
        self.summary = "A toy world whose manual is wrong about two operators."
        self.manual = ("EMIT e1, e2, ... prints values. REPEAT k EMIT e, ... prints k times.\n"
                       "DOUBLE(x) doubles x. TRIPLE(x) triples x. SHATTER(a, b) multiplies.")
        self.budget = budget or Budget(rounds=2, calls_per_round=3, max_calls=5, units_per_call=5,
                                       feedback_lines=3, feedback_chars=80, answers=3)
        self.tool = FakeTool()
        self.rules = (
            Rule("R1", "DOUBLE triples", "op DOUBLE", False, "DOUBLE(x) returns 3*x.", "(* 3 x)", ("x",)),
            Rule("R7", "TRIPLE adds one", "op TRIPLE", False, "TRIPLE(x) returns 3*x+1.",
                 "(+ (* 3 x) 1)", ("x",)),
        )
        self.herrings = (Rule("H1", "SHATTER multiplies", "op SHATTER", True,
                              "The name suggests destruction; it multiplies.", "", ("a", "b")),)
        self.open_book = "\n".join(f"- {r.statement}" for r in self.rules)
        self.examples = (
            Example("E1", "apply", "Print 4.", "EMIT 4", "4"),
            Example("E2", "apply", "Print SHATTER(2, 3).", "EMIT SHATTER(2, 3)", "6"),
        )
        base = [
            ("T1", "Print the double of 5 (i.e. 10).", "EMIT 10", "EMIT DOUBLE(5)", {"R1"}),
            ("T2", "Print 7 using TRIPLE.", "EMIT TRIPLE(2)", "EMIT 7", {"R7"}),
            ("T3", "Print 6 using SHATTER.", "EMIT SHATTER(2, 3)", "EMIT SHATTER(2, 3)", set()),
            ("T4", "Print DOUBLE(1) and TRIPLE(1).", "EMIT 3, 4", "EMIT 2, 3", {"R1", "R7"}),
        ]
        tasks, req = [], {}
        for i in range(n_tasks):
            tid, prompt, sol, naive, r = base[i % len(base)]
            if i >= len(base):
                tid = f"{tid}x{i}"
            tasks.append(Task(tid, "apply", f"{prompt} [{tid}]", "program", (("depth", "single-step"),),
                              solution=sol, naive=naive))
            req[tid] = frozenset(r)
        self.tasks = tuple(tasks)
        self._requires = req
        self.probes = 0  # executed probes (for assertions)

    # -- semantics -----------------------------------------------------------

    def _value(self, text: str) -> int:
        m = _EXPR.match(text)
        if not m:
            raise ProbeError(f"cannot read expression {text.strip()!r}")
        if m.group(1) == "DOUBLE":
            return 3 * int(m.group(2))
        if m.group(1) == "TRIPLE":
            return 3 * int(m.group(2)) + 1
        if m.group(3) is not None:
            return int(m.group(3)) * int(m.group(4))
        return int(m.group(5))

    def _parse(self, text: str) -> list[tuple[int, list[str]]]:
        stmts = []
        for line in text.strip().splitlines():
            line = line.strip()
            if not line:
                continue
            m = re.match(r"^REPEAT\s+(\d+)\s+EMIT\s+(.*)$", line)
            if m:
                stmts.append((int(m.group(1)), _split_args(m.group(2))))
                continue
            m = re.match(r"^EMIT\s+(.*)$", line)
            if not m:
                raise ProbeError(f"parse error: cannot read {line!r}")
            stmts.append((0, _split_args(m.group(1))))
        return stmts

    def charge(self, text: str) -> int:
        try:
            stmts = self._parse(text)
        except ProbeError:
            return 0
        return sum((3 if k else 1) * len(args) for k, args in stmts)

    def _run(self, text: str) -> str:
        out = []
        for k, args in self._parse(text):
            vals = " ".join(str(self._value(a)) for a in args)
            out.extend([vals] * (k if k else 1))
        return "\n".join(out)

    def probe(self, text: str) -> Feedback:
        try:
            stmts = self._parse(text)
        except ProbeError as e:
            return Feedback(text=str(e), units=0, status="parse_error")
        units = sum((3 if k else 1) * len(args) for k, args in stmts)
        if units > self.budget.units_per_call:
            return Feedback(text=f"rejected: this probe costs {units} units, over the cap of "
                                 f"{self.budget.units_per_call}; nothing was run", units=0, status="rejected")
        self.probes += 1
        try:
            out = self._run(text)
            status = "ok"
        except ProbeError as e:
            out, status = f"error: {e}", "error"
        lines = out.splitlines()
        truncated = False
        if len(lines) > self.budget.feedback_lines:
            lines, truncated = lines[: self.budget.feedback_lines], True
        out = "\n".join(lines)
        if len(out) > self.budget.feedback_chars:
            out, truncated = out[: self.budget.feedback_chars], True
        if truncated:
            out += "\n[output truncated]"
        return Feedback(text=out, units=units, status=status, truncated=truncated)

    # -- grading -------------------------------------------------------------

    def _task(self, task_or_id) -> Task:
        tid = task_or_id if isinstance(task_or_id, str) else task_or_id.id
        for t in self.tasks:
            if t.id == tid:
                return t
        raise KeyError(tid)

    def verify(self, task_or_id, answer: str) -> Verdict:
        t = self._task(task_or_id)
        norm = lambda s: " ".join(s.split())  # noqa: E731
        ok = norm(answer) == norm(t.solution)
        return Verdict(t.id, ok, "passed" if ok else f"expected {t.solution!r}, got {answer!r}")

    def requires(self, task_or_id) -> frozenset[str]:
        return self._requires[self._task(task_or_id).id]

    def grade_equation(self, rule_id: str, equation: str) -> bool:
        rule = next(r for r in self.rules if r.id == rule_id)
        return " ".join(equation.split()) == " ".join(rule.equation.split())

    def probe_generator(self, seed: int) -> Iterator[str]:
        rng = random.Random(seed)
        while True:
            k = rng.randrange(4)
            n = rng.randrange(-3, 10)
            if k == 0:
                yield f"EMIT {n}"
            elif k == 1:
                yield f"EMIT DOUBLE({n}), TRIPLE({n})"
            elif k == 2:
                yield f"REPEAT 2 EMIT TRIPLE({n})"
            else:
                yield f"EMIT SHATTER({n}, 2), DOUBLE({n}), {n}"


# ----------------------------------------------------------------------------
# A deterministic explorer, seeing only what a provider sees


SOLUTIONS = {"T1": ("EMIT 10", "EMIT DOUBLE(5)"), "T2": ("EMIT TRIPLE(2)", "EMIT 7"),
             "T3": ("EMIT SHATTER(2, 3)", "EMIT SHATTER(2, 3)"), "T4": ("EMIT 3, 4", "EMIT 2, 3")}
NEEDS = {"T1": {"R1"}, "T2": {"R7"}, "T3": set(), "T4": {"R1", "R7"}}
PROBES_PER_ROUND = 2


def _text(m: dict) -> str:
    c = m.get("content")
    if isinstance(c, list):
        return " ".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c or ""


def explorer_policy(messages, tools=None, tool_choice=None, answer_index: int = 0) -> dict:
    """{"content": str|None, "tool_calls": [(name, arguments_json)], "usage": (in, out)}."""
    n_tool = sum(1 for m in messages if m.get("role") == "tool")
    last = messages[-1]
    text = _text(last)
    open_book = "complete list of rules" in text or any(
        "complete list of rules that differ" in _text(m) for m in messages[:2])
    known = set()
    if n_tool >= 1 or open_book:
        known.add("R1")
    if n_tool >= 3 or open_book:
        known.add("R7")
    usage_in = sum(len(_text(m)) for m in messages) // 4 + 1
    if tools and tool_choice != "none":
        # exploring: probe PROBES_PER_ROUND times after each round prompt, then stop
        since = 0
        for m in reversed(messages):
            if m.get("role") == "user":
                break
            if m.get("role") == "tool":
                since += 1
        if since < PROBES_PER_ROUND:
            name = tools[0]["function"]["name"]
            prog = f"EMIT DOUBLE({n_tool}), TRIPLE({n_tool})"
            return {"content": None, "tool_calls": [(name, json.dumps({"program": prog}))],
                    "usage": (usage_in, 12)}
        return {"content": "Done with this round.", "tool_calls": [], "usage": (usage_in, 5)}
    m = re.search(r"held-out task (\S+) with", text)
    if m:
        tid = m.group(1)
        base = tid.split("x")[0]
        sol, naive = SOLUTIONS[base]
        ans = sol if NEEDS[base] <= known else naive
        return {"content": f"Here is my answer.\n```\n{ans}\n```", "tool_calls": [], "usage": (usage_in, 9)}
    if "Report the rules" in text:
        lines = []
        if "R1" in known:
            lines.append("op DOUBLE(x) = (* 3 x)")
        if "R7" in known:
            lines.append("op TRIPLE(x) = (+ (* 3 x) 1)")
        body = "\n".join(lines) or "UNKNOWN"
        return {"content": f"```\n{body}\n```", "tool_calls": [], "usage": (usage_in, 7)}
    return {"content": f"Noted ({n_tool} results so far).", "tool_calls": [], "usage": (usage_in, 4)}


def policy_reply(request):
    """explorer_policy as a runner Reply (for ScriptedModel)."""
    from worldspec.runner.models import Reply, ToolCall, Usage

    out = explorer_policy(list(request.messages), request.tools, request.tool_choice,
                          request.answer_index)
    calls = tuple(ToolCall(id=f"call_{len(request.messages)}_{i}", name=n, arguments=a)
                  for i, (n, a) in enumerate(out["tool_calls"]))
    return Reply(content=out["content"], tool_calls=calls, usage=Usage(*out["usage"]))


def main(argv: list[str]) -> int:
    import asyncio

    from worldspec.runner.experiment import RunConfig, run_experiment
    from worldspec.runner.models import ScriptedModel

    out = argv[0]
    resume = "--resume" in argv
    latency = float(argv[argv.index("--latency") + 1]) if "--latency" in argv else 0.0
    world = FakeWorld(n_tasks=6)
    model = ScriptedModel(policy_reply, name="explorer", latency=latency)
    config = RunConfig(conditions=("autonomous", "without-tool"), trajectories=2, max_connections=2)
    asyncio.run(run_experiment(world, [model], config, out, resume=resume))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
