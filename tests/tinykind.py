"""`kind tally`: a test-only world kind, registered by the tests themselves.

It proves issue 9's claim that a new kind is one new module plus one registration
(`worldspec.compiler.register_kind(KIND)`): no change to the parser, the other kinds
or the runner. A tally world hides an integer function f; its manual says
f(n) = n + STEP, and each rule makes f step differently for even (or odd) n.

Spec items (all through the generic item grammar; tests/worlds/tally.world):

    inputs 0, 60        # the integers a probe may send
    step 1              # the documented increment
    ask 12              # a held-out task: what is f(12)?
    rule R1 "title" { statement "..." equation "n + 2" even 2 }   # or: odd K
    budget { rounds 2 calls_per_round 3 units_per_call 1 answers 1 }
"""
from __future__ import annotations

import random
import re
from typing import Iterator

import attrs

from worldspec import ast
from worldspec.compiler.api import (Budget, CaseResult, Feedback, InputError, Kind, MilestoneFace, Rule, Task, ToolSpec,
                                    Verdict, WorldHeader, by_id, capped)
from worldspec.diagnostics import SpecError, did_you_mean

ITEMS = ("inputs", "step", "ask")
PARITIES = {"even": 0, "odd": 1}
BUDGET_KEYS = tuple(f.name for f in attrs.fields(Budget) if f.name != "unit_costs")
EQUATION = re.compile(r"^\s*(?:n\s*\+\s*(?P<a>-?\d+)|(?P<b>-?\d+)\s*\+\s*n)\s*$")


@attrs.frozen
class Override:
    """One rule's effect: inputs of this parity step by `increment` instead."""

    rule: str
    parity: int
    increment: int


@attrs.frozen(eq=False)
class TallyWorld(WorldHeader):
    low: int
    high: int
    step: int
    overrides: tuple[Override, ...]
    asks: tuple[tuple[str, int], ...]  # (task id, n)

    @property
    def protocol(self) -> str:
        return "milestone"

    def f(self, n: int, applied: frozenset | None = None) -> int:
        """f(n) with the given rules applied (all of them by default: the true world)."""
        for o in self.overrides:
            if (applied is None or o.rule in applied) and n % 2 == o.parity:
                return n + o.increment
        return n + self.step

    def knockout(self, rule_id: str) -> frozenset:
        """The applied rule set without one rule."""
        return frozenset(o.rule for o in self.overrides if o.rule != rule_id)

    def read(self, text: str) -> int:
        """The integer a probe sends; raises InputError when it is not one in range."""
        try:
            n = int(str(text).strip())
        except ValueError:
            raise InputError(f"{str(text).strip()[:40]!r} is not an integer") from None
        if not self.low <= n <= self.high:
            raise InputError(f"{n} is outside {self.low}..{self.high}")
        return n

    # ------------------------------------------------------------ exploring

    @property
    def tool(self) -> ToolSpec:
        return ToolSpec("tally", f"Send one integer n to {self.name}'s hidden function f and read f(n).", "n",
                        f"An integer from {self.low} to {self.high}.")

    def charge(self, text: str) -> int:
        try:
            self.read(text)
        except InputError:
            return 0
        return 1

    def probe(self, text: str) -> Feedback:
        try:
            n = self.read(text)
        except InputError as e:
            return Feedback(f"rejected: {e}", 0, "rejected")
        out, truncated = capped(str(self.f(n)), self.budget.feedback_chars)
        return Feedback(out, 1, "ok", truncated)

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        rng = random.Random(f"tally:{self.name}:{seed}")
        while True:
            yield str(rng.randint(self.low, self.high))

    # ------------------------------------------------------------ grading

    def task(self, task) -> Task:
        return by_id(self.tasks, task, self.name)

    def rule(self, rule_id: str) -> Rule:
        return by_id(self.rules + self.herrings, rule_id, self.name)

    def asked(self, task) -> int:
        return dict(self.asks)[self.task(task).id]

    def verify(self, task, answer: str) -> Verdict:
        t = self.task(task)
        n = self.asked(t)
        want, got = str(self.f(n)), (answer or "").strip()
        ok = got == want
        return Verdict(t.id, ok, "correct" if ok else f"f({n}) is not {got or 'empty'}",
                       (CaseResult((n,), want, got, ok),))

    def requires(self, task) -> frozenset[str]:
        n = self.asked(task)
        return frozenset(o.rule for o in self.overrides if self.f(n, self.knockout(o.rule)) != self.f(n))

    def grade_equation(self, rule_id: str, text: str) -> bool:
        """`n + K` (or `K + n`) with the rule's increment K."""
        o = next(o for o in self.overrides if o.rule == rule_id)
        m = EQUATION.match(text)
        return bool(m) and int(m.group("a") or m.group("b")) == o.increment

    @property
    def open_book(self) -> str:
        return "\n".join([f"The complete list of ways {self.name} differs from its manual:"]
                         + [f"- {r.id} ({r.title}): {r.statement}" for r in self.rules])

    @property
    def report_instructions(self) -> str:
        return ("Write one line per rule you believe differs from the manual, as `op f(n) = n + K`: what f "
                "is on the inputs the rule changes.")

    # ------------------------------------------------------------ certification

    def certify(self, progress=None) -> dict:
        """Every rule observable by some probe and required by some task; reference answers pass."""
        say = progress or (lambda msg: None)
        say("checking tasks")
        problems = []
        requires = {t.id: sorted(self.requires(t)) for t in self.tasks}
        for t in self.tasks:
            if not self.verify(t, t.solution).passed:
                problems.append(f"task {t.id}: the reference answer fails")
        table = []
        for r in self.rules:
            knocked = self.knockout(r.id)
            observable = any(self.f(n) != self.f(n, knocked) for n in range(self.low, self.high + 1))
            tasks = [tid for tid, rs in requires.items() if r.id in rs]
            if not observable:
                problems.append(f"rule {r.id}: no probe in {self.low}..{self.high} tells it apart")
            if not tasks:
                problems.append(f"rule {r.id}: no task requires it")
            table.append({"id": r.id, "title": r.title, "observable": observable, "tasks": tasks})
        naive_ok = sum(self.verify(t, t.naive).passed for t in self.tasks)
        return {"world": self.name, "kind": self.kind, "seed": self.seed, "params": dict(self.params),
                "rules": len(self.rules), "herrings": len(self.herrings), "tasks": len(self.tasks),
                "examples": len(self.examples), "recall_only": round(100 * naive_ok / max(1, len(self.tasks)), 1),
                "rule_table": table, "herring_table": [], "problems": problems}


# ---------------------------------------------------------------- compiling


def integer(e: ast.Expr, what: str) -> int:
    if isinstance(e, ast.Const) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.Neg) and isinstance(e.operand, ast.Const) and type(e.operand.value) is int:
        return -e.operand.value
    raise SpecError(e.span, f"{what} must be an integer", "For example: step 1")


def items_of(spec: ast.Spec) -> dict[str, list[ast.GenericItem]]:
    out: dict[str, list] = {k: [] for k in ITEMS}
    for g in spec.generic:
        if g.key not in out or g.name:
            raise SpecError(g.span, f"unknown item {g.key!r} in a tally world",
                            did_you_mean(g.key, ITEMS).strip() or "Items: " + ", ".join(ITEMS) + ".")
        out[g.key].append(g)
    return out


def reject_foreign_sections(spec: ast.Spec) -> None:
    for what, found in (("syntax block", spec.syntax), ("base block", spec.base), ("param", spec.params),
                        ("def", spec.defs), ("example", spec.examples), ("task block", spec.tasks),
                        ("herring", spec.herrings)):
        if found:
            raise SpecError(found[0].span, f"a tally world has no {what}", "Tally worlds use: " + ", ".join(ITEMS))
    if spec.unit_costs:
        raise SpecError(spec.span, "a tally world charges one unit per probe", "Remove the unit_cost entries.")


def budget_of(spec: ast.Spec) -> Budget:
    spans = dict(spec.budget_spans)
    for key, _ in spec.budget:
        if key not in BUDGET_KEYS:
            raise SpecError(spans.get(key, spec.span), f"unknown budget entry {key!r}",
                            did_you_mean(key, BUDGET_KEYS).strip())
    return Budget(**dict(spec.budget))


def override_of(r: ast.RuleDecl) -> Override:
    if r.override is not None or len(r.fields) != 1 or r.fields[0].key not in PARITIES:
        raise SpecError(r.span, f"rule {r.id} must say how f steps for one parity", "For example: even 2")
    f = r.fields[0]
    if len(f.args) != 1:
        raise SpecError(f.span, f"{f.key} takes one increment", "For example: even 2")
    return Override(r.id, PARITIES[f.key], integer(f.args[0], "the increment"))


def compile_spec(spec: ast.Spec, seed: int | None = None) -> TallyWorld:
    """A tally world from its parsed spec."""
    reject_foreign_sections(spec)
    items = items_of(spec)
    for key in ("inputs", "step"):
        if len(items[key]) != 1:
            at = items[key][1].span if items[key] else spec.span
            raise SpecError(at, f"a tally world has exactly one {key} line", "")
    bounds = items["inputs"][0].args
    if len(bounds) != 2:
        raise SpecError(items["inputs"][0].span, "inputs takes LOW, HIGH", "For example: inputs 0, 60")
    low, high = (integer(b, "an input bound") for b in bounds)
    step = integer(items["step"][0].args[0], "step")
    overrides = tuple(override_of(r) for r in spec.rules)
    if len({o.parity for o in overrides}) != len(overrides):
        raise SpecError(spec.rules[-1].span, "two rules change the same parity", "Keep one rule per parity.")
    rules = tuple(Rule(r.id, r.title, "op f", False, r.statement, r.equation, ("n",)) for r in spec.rules)
    asks = tuple((f"T{i}", integer(g.args[0], "ask")) for i, g in enumerate(items["ask"], 1))
    world = TallyWorld(name=spec.name, version=spec.version, kind=spec.kind,
                       seed=spec.seed if seed is None else seed, default_seed=spec.seed, summary=spec.summary,
                       params=(), manual="", examples=(), tasks=(), rules=rules, herrings=(),
                       budget=budget_of(spec), low=low, high=high, step=step, overrides=overrides, asks=asks)
    tasks = tuple(Task(tid, "tally", f"What is f({n})? Reply with the integer only.", "output",
                       solution=str(world.f(n)), naive=str(n + step)) for tid, n in asks)
    manual = (f"# {spec.name}\n\n{spec.summary}\n\n{spec.manual.strip()}\n\n## The tool\n\n"
              f"Send one integer n from {low} to {high}; the tool answers f(n).\n\n"
              f"## What the documentation says\n\n- f(n) = n + {step}\n")
    return attrs.evolve(world, tasks=tasks, manual=manual)


KIND = Kind("tally", compile_spec, "a hidden integer function whose documented step is wrong for some inputs",
            faces=(MilestoneFace,))
