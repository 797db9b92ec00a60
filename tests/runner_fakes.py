"""Test doubles for the runner: a small World of a fake kind and a scripted "explorer" policy.

FakeWorld implements compiler.api.World (tests assert it) over a toy language:

    EMIT e, e, ...          prints the values (1 probe unit per argument)
    REPEAT k EMIT e, ...    prints them k times (3 units per argument)
    e := INT | DOUBLE(INT) | TRIPLE(INT) | SHATTER(INT, INT)

The manual says DOUBLE doubles and TRIPLE triples; in truth DOUBLE triples
(rule R1) and TRIPLE adds one after tripling (rule R7). SHATTER multiplies,
as documented (herring H1). A task's answer passes iff it equals the task's
solution (whitespace-normalised). `FAKE_KIND` registers it as the world kind
`fake`, so a spec file `kind fake` runs through `worldspec run` like any world.

`explorer_policy(messages, tools, tool_choice)` is a deterministic fake model
that reads only what a provider would see: it probes a few times per round,
learns R1 after one probe and R7 after three, and answers accordingly. It
drives both ScriptedModel (in-process) and the fake OpenAI server (HTTP).

Run as a script (`python tests/runner_fakes.py OUT [--resume] [--latency S]`)
it performs a run on FakeWorld with a slow scripted model — the subprocess of
the kill-and-resume test.
"""
from __future__ import annotations

import asyncio
import json
import random
import re
import sys
from typing import Iterator

from worldspec.compiler.api import Budget, Example, Feedback, Kind, MilestoneFace, Rule, Task, ToolSpec, Verdict, by_id
from worldspec.runner.config import RunConfig
from worldspec.runner.experiment import run_experiment
from worldspec.runner.models import Reply, ScriptedModel, ToolCall, Usage

_EXPR = re.compile(r"^\s*(?:(DOUBLE|TRIPLE)\((-?\d+)\)|SHATTER\((-?\d+),\s*(-?\d+)\)|(-?\d+))\s*$")
_TASKS = [
    ("T1", "Print the double of 5 (i.e. 10).", "EMIT 10", "EMIT DOUBLE(5)", {"R1"}),
    ("T2", "Print 7 using TRIPLE.", "EMIT TRIPLE(2)", "EMIT 7", {"R7"}),
    ("T3", "Print 6 using SHATTER.", "EMIT SHATTER(2, 3)", "EMIT SHATTER(2, 3)", set()),
    ("T4", "Print DOUBLE(1) and TRIPLE(1).", "EMIT 3, 4", "EMIT 2, 3", {"R1", "R7"}),
]


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur] if cur.strip() else out


class ProbeError(Exception):
    pass


class FakeWorld:
    """A milestone world of kind `fake` (compiler.api.World)."""

    kind = "fake"
    protocol = "milestone"
    version = 1
    params = ()
    summary = "A toy world whose manual is wrong about two operators."
    manual = ("EMIT e1, e2, ... prints values. REPEAT k EMIT e, ... prints k times.\n"
              "DOUBLE(x) doubles x. TRIPLE(x) triples x. SHATTER(a, b) multiplies.")
    report_instructions = "Write one line per rule: `op NAME(params) = EQUATION`, or UNKNOWN."
    tool = ToolSpec("run_program", "Run a program in the world and see its output.", "program",
                    "The program to run.")

    def __init__(self, *, budget: Budget | None = None, n_tasks: int = 4, name: str = "Fake", seed: int = 7):
        self.name = name
        self.seed = self.default_seed = seed
        self.budget = budget or Budget(rounds=2, calls_per_round=3, max_calls=5, units_per_call=5,
                                       feedback_lines=3, feedback_chars=80, answers=3)
        self.rules = (
            Rule("R1", "DOUBLE triples", "op DOUBLE", False, "DOUBLE(x) returns 3*x.", "(* 3 x)", ("x",)),
            Rule("R7", "TRIPLE adds one", "op TRIPLE", False, "TRIPLE(x) returns 3*x+1.",
                 "(+ (* 3 x) 1)", ("x",)),
        )
        self.herrings = (Rule("H1", "SHATTER multiplies", "op SHATTER", True,
                              "The name suggests destruction; it multiplies.", "", ("a", "b")),)
        self.examples = (Example("E1", "apply", "Print 4.", "EMIT 4", "4"),
                         Example("E2", "apply", "Print SHATTER(2, 3).", "EMIT SHATTER(2, 3)", "6"))
        tasks, self._requires = [], {}
        for i in range(n_tasks):
            tid, prompt, sol, naive, needs = _TASKS[i % len(_TASKS)]
            tid = tid if i < len(_TASKS) else f"{tid}x{i}"
            tasks.append(Task(tid, "apply", f"{prompt} [{tid}]", "program", (("depth", "single-step"),),
                              solution=sol, naive=naive))
            self._requires[tid] = frozenset(needs)
        self.tasks = tuple(tasks)
        self.probes = 0  # executed probes (for assertions)

    @property
    def open_book(self) -> str:
        return "\n".join(f"- {r.statement}" for r in self.rules)

    # -- semantics -----------------------------------------------------------

    @staticmethod
    def _value(text: str) -> int:
        m = _EXPR.match(text)
        if not m:
            raise ProbeError(f"cannot read expression {text.strip()!r}")
        if m.group(1):
            return 3 * int(m.group(2)) + (m.group(1) == "TRIPLE")
        if m.group(3) is not None:
            return int(m.group(3)) * int(m.group(4))
        return int(m.group(5))

    @staticmethod
    def _parse(text: str) -> list[tuple[int, list[str]]]:
        stmts = []
        for line in filter(None, (x.strip() for x in text.strip().splitlines())):
            m = re.match(r"^(?:REPEAT\s+(\d+)\s+)?EMIT\s+(.*)$", line)
            if not m:
                raise ProbeError(f"parse error: cannot read {line!r}")
            stmts.append((int(m.group(1) or 0), _split_args(m.group(2))))
        return stmts

    def charge(self, text: str) -> int:
        try:
            return sum((3 if k else 1) * len(args) for k, args in self._parse(text))
        except ProbeError:
            return 0

    def probe(self, text: str) -> Feedback:
        try:
            stmts = self._parse(text)
        except ProbeError as e:
            return Feedback(text=str(e), units=0, status="parse_error")
        units = self.charge(text)
        if units > self.budget.units_per_call:
            return Feedback(text=f"rejected: this probe costs {units} units, over the cap of "
                                 f"{self.budget.units_per_call}; nothing was run", units=0, status="rejected")
        self.probes += 1
        try:
            lines = [" ".join(str(self._value(a)) for a in args) for k, args in stmts for _ in range(k or 1)]
            status = "ok"
        except ProbeError as e:
            lines, status = [f"error: {e}"], "error"
        out = "\n".join(lines[: self.budget.feedback_lines])[: self.budget.feedback_chars]
        truncated = out != "\n".join(lines)
        return Feedback(text=out + ("\n[output truncated]" if truncated else ""), units=units, status=status,
                        truncated=truncated)

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        rng = random.Random(seed)
        while True:
            k, n = rng.randrange(4), rng.randrange(-3, 10)
            yield (f"EMIT {n}", f"EMIT DOUBLE({n}), TRIPLE({n})", f"REPEAT 2 EMIT TRIPLE({n})",
                   f"EMIT SHATTER({n}, 2), DOUBLE({n}), {n}")[k]

    # -- grading -------------------------------------------------------------

    def task(self, task) -> Task:
        return by_id(self.tasks, task, self.name)

    def rule(self, rule_id: str) -> Rule:
        return by_id(self.rules + self.herrings, rule_id, self.name)

    def verify(self, task, answer: str) -> Verdict:
        t = self.task(task)
        ok = answer.split() == t.solution.split()
        return Verdict(t.id, ok, "passed" if ok else f"expected {t.solution!r}, got {answer!r}")

    def requires(self, task) -> frozenset[str]:
        return self._requires[self.task(task).id]

    def grade_equation(self, rule_id: str, equation: str) -> bool:
        return equation.split() == self.rule(rule_id).equation.split()

    def certify(self, progress=None) -> dict:
        return {"world": self.name, "kind": self.kind, "seed": self.seed, "problems": []}


FAKE_KIND = Kind("fake", lambda spec, seed: FakeWorld(name=spec.name, seed=spec.seed if seed is None else seed),
                 "a test world of two perturbed operators", faces=(MilestoneFace,))
FAKE_SPEC = 'world "Fake" version 1\nkind fake\nseed 7\nsummary "A toy world."\n'


# ----------------------------------------------------------------------------
# A deterministic explorer, seeing only what a provider sees


SOLUTIONS = {tid: (solution, naive) for tid, _, solution, naive, _ in _TASKS}
NEEDS = {tid: needs for tid, *_, needs in _TASKS}
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
    open_book = any("complete list of rules" in _text(m) for m in messages)
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
        # a line per rule, UNKNOWN for the ones not found (the released harness's report form, whose
        # re-ask counts the UNKNOWN lines: runner/protocols/reasks.py)
        lines = ["op DOUBLE(x) = (* 3 x)" if "R1" in known else "op DOUBLE(x) = UNKNOWN",
                 "op TRIPLE(x) = (+ (* 3 x) 1)" if "R7" in known else "op TRIPLE(x) = UNKNOWN"]
        body = "\n".join(lines)
        return {"content": f"```\n{body}\n```", "tool_calls": [], "usage": (usage_in, 7)}
    return {"content": f"Noted ({n_tool} results so far).", "tool_calls": [], "usage": (usage_in, 4)}


def scripted(fn, name="x"):
    """A ScriptedModel answering with fn(request) that keeps every request it was sent (`.seen`)."""
    seen = []

    def record(req):
        seen.append(req)
        return fn(req)

    m = ScriptedModel(record, name=name)
    m.seen = seen
    return m


def policy_reply(request):
    """explorer_policy as a runner Reply (for ScriptedModel)."""
    out = explorer_policy(list(request.messages), request.tools, request.tool_choice,
                          request.answer_index)
    calls = tuple(ToolCall(id=f"call_{len(request.messages)}_{i}", name=n, arguments=a)
                  for i, (n, a) in enumerate(out["tool_calls"]))
    return Reply(content=out["content"], tool_calls=calls, usage=Usage(*out["usage"]))


def main(argv: list[str]) -> int:
    out = argv[0]
    resume = "--resume" in argv
    latency = float(argv[argv.index("--latency") + 1]) if "--latency" in argv else 0.0
    world = FakeWorld(n_tasks=6)
    model = ScriptedModel(policy_reply, name="explorer", latency=latency)
    config = RunConfig(conditions=("autonomous", "without-tool"), trajectories=2, max_connections=2)
    asyncio.run(run_experiment([world], [model], config, out, resume=resume))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
