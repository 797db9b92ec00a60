"""The compiled black box: a hidden function f over typed inputs, its tests, and how it is probed and graded.

`BlackBoxWorld` implements the `World` protocol (compiler/api.py) for the
turn@shot run protocol: each turn sends one input and shows f's output (or a
rejection, which costs nothing); each test asks f's output on an unseen input,
or, for an interactive puzzle (a goal box), the hidden target itself.
"""
from __future__ import annotations

import difflib
import random
from typing import Iterator

import attrs

from worldspec.compiler.api import CaseResult, Feedback, InputError, ScoredVerdict, ToolSpec, capped
from worldspec.compiler.blackbox.certify import certify_box
from worldspec.compiler.blackbox.domains import Domain, format_input, matches, parse_input, render
from worldspec.compiler.items import BoxWorld
from worldspec.meta import Unit
from worldspec.values import Ctx, EvalError, LimitError, same

# A box without a goal: f takes only the inputs (a goal box's f also takes `target`).
NO_GOAL = object()


@attrs.frozen
class TestCase:
    """One test sample: an input whose output f computed at compile time (a goal box: the target)."""

    id: str
    values: tuple  # input values ((), for a goal test)
    expected: object
    line: int


def call_unit(unit: Unit, args: list, max_steps: int = 200_000):
    """Run a compiled meta-language function; Python's own limits become LimitError."""
    try:
        return unit(Ctx(max_steps), list(args))
    except RecursionError:
        raise LimitError("the function nests too deeply") from None
    except (MemoryError, OverflowError):
        raise LimitError("a value grew too large") from None


@attrs.frozen(eq=False)
class BlackBoxWorld(BoxWorld):
    """A black box of the Oracle benchmark, or an interactive puzzle (a goal box)."""

    family: str
    difficulty: str
    inputs: tuple[tuple[str, Domain], ...]
    goal_note: str
    tolerance: float
    source: str
    hidden: Unit = attrs.field(repr=False)
    variant_hidden: object = attrs.field(repr=False)  # applied rule ids -> Unit
    predicates: tuple = attrs.field(repr=False)  # ((Unit, reason), ...)
    goal: object = attrs.field(repr=False)
    tests: tuple[TestCase, ...] = attrs.field(repr=False)
    hypotheses: tuple = attrs.field(repr=False)  # ((name, Unit), ...)

    # ------------------------------------------------------------ inputs

    @property
    def protocol(self) -> str:
        """How the runner runs this world (compiler.api.PROTOCOLS)."""
        return "turn@shot"

    @property
    def has_goal(self) -> bool:
        """Whether this is an interactive puzzle (its test asks for the hidden target)."""
        return self.goal is not NO_GOAL

    def _args(self, values, target=NO_GOAL) -> list:
        args = list(values)
        if self.has_goal:
            args.append(self.goal if target is NO_GOAL else target)
        return args

    def evaluate(self, values, unit: Unit | None = None, target=NO_GOAL):
        """f(values) in the true world (or under another compiled f); raises EvalError."""
        return call_unit(unit or self.hidden, self._args(values, target))

    def admits(self, values) -> str | None:
        """None when every domain and predicate admits the values; otherwise the reason."""
        for (name, d), v in zip(self.inputs, values):
            why = d.check(v)
            if why:
                return f"{name}: {why}"
        for unit, reason in self.predicates:
            try:
                ok = call_unit(unit, list(values))
            except EvalError as e:
                return f"{reason} (the check failed: {e.message})"
            if not ok:
                return reason
        return None

    def read_probe(self, text) -> list:
        """Parse one input text and check it; raises InputError with the reason."""
        values = parse_input(self.inputs, text)
        why = self.admits(values)
        if why:
            raise InputError(why)
        return values

    def format(self, values) -> str:
        """Input values written as an agent types them."""
        return format_input(self.inputs, values)

    @property
    def turn_instructions(self) -> str:
        """What one exploration turn is, as a turn@shot session tells the player."""
        if self.has_goal:
            return (f"In each turn, reply with one input (a guess) and read the box's feedback. After the "
                    f"exploration you are asked for {self.goal_note}.")
        return (f"In each turn, reply with one input and read the box's output. After the exploration you are "
                f"asked for the box's output on {len(self.tasks)} unseen input(s).")

    def answer_from(self, task, observed) -> str:
        """A memorising player's answer: the output of the observed input nearest the test's (a goal box:
        the last guess)."""
        if self.has_goal:
            return observed[-1] if observed else ""
        target = list(self.test_of(task).values)
        best, best_d = None, None
        for text in observed:
            try:
                values = self.read_probe(text)
            except InputError:
                continue
            d = distance(values, target)
            if best_d is None or d < best_d:
                best, best_d = values, d
        if best is None:
            return ""
        return self.probe(self.format(best)).text

    # ------------------------------------------------------------ probing

    def probe(self, text) -> Feedback:
        """One exploration turn: f(input), or a rejection (with its reason) that costs no turn."""
        try:
            values = self.read_probe(text)
        except InputError as e:
            return Feedback(f"rejected: {e}. Nothing was run and no turn is used.", 0, "rejected")
        try:
            out = render(self.evaluate(values))
            status = "ok"
        except LimitError as e:
            out, status = f"limit: {e.message}", "limit"
        except EvalError as e:
            out, status = f"error: {e.message}", "error"
        text_out, truncated = capped(out, self.budget.feedback_chars)
        return Feedback(text_out, self.budget.cost("input"), status, truncated)

    def sample_inputs(self, rng: random.Random, n: int, tries: int | None = None) -> list[list]:
        """Up to n admissible input value lists drawn from the domains."""
        out = []
        for _ in range(tries or n * 20):
            values = [d.draw(rng) for _, d in self.inputs]
            if self.admits(values) is None:
                out.append(values)
                if len(out) >= n:
                    break
        return out

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        """An endless seeded stream of admissible inputs, as an agent would type them."""
        rng = random.Random(f"probes:{self.name}:{seed}")
        while True:
            got = self.sample_inputs(rng, 1, tries=200)
            if got:
                yield self.format(got[0])
            else:  # a predicate that admits almost nothing: offer a test input's neighbourhood
                yield self.format(self.tests[0].values) if self.tests and self.tests[0].values else ""

    @property
    def tool(self) -> ToolSpec:
        """The one exploration tool: send an input, read the output."""
        return ToolSpec("query_box", f"Send one input to the black box {self.name} and read its output.",
                        "input", "One input, written as the manual shows.")

    # ------------------------------------------------------------ grading

    def verify(self, task, answer) -> ScoredVerdict:
        """Grade an answer: the output (within the tolerance), or the target for a goal box."""
        case = self.test_of(task)
        want = render(case.expected)
        if not isinstance(answer, str) or not answer.strip():
            return ScoredVerdict(case.id, False, "no answer", (CaseResult(case.values, want, "", False),), 0.0)
        if self.has_goal:
            try:
                values = parse_input(self.inputs, answer)
                ok = same(values[0], case.expected)
            except InputError:
                ok = False
        else:
            ok = matches(case.expected, answer, self.tolerance)
        got = answer.strip()
        return ScoredVerdict(case.id, ok, "correct" if ok else "incorrect",
                             (CaseResult(case.values, want, got, ok),), 1.0 if ok else 0.0)

    def requires(self, task) -> frozenset[str]:
        """Perturbed rules without which this test's answer would differ (by knockout)."""
        case = self.test_of(task)
        needed = set()
        for r in self.rules:
            unit = self.variant_hidden(frozenset(x.id for x in self.rules if x.id != r.id))
            try:
                v = self.evaluate(case.values, unit)
            except EvalError:
                needed.add(r.id)
                continue
            if not same(v, case.expected):
                needed.add(r.id)
        return frozenset(needed)

    @property
    def open_book(self) -> str:
        """Every way the box differs from its description (the open-book condition)."""
        lines = [f"The complete list of ways {self.name} differs from its description:"]
        lines += [f"- {r.id} ({r.title}): {r.statement}" for r in self.rules]
        return "\n".join(lines)

    # ------------------------------------------------------------ certification

    def certify(self, progress=None) -> dict:
        """The box's certification report (compiler/blackbox/certify.py)."""
        return certify_box(self, progress)


def distance(a, b) -> float:
    """How far apart two input values are (numbers by difference, sequences by edits)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        n = max(len(a), len(b))
        return sum(distance(x, y) for x, y in zip(a, b)) + 10.0 * abs(len(a) - len(b)) / max(1, n)
    if isinstance(a, bool) or isinstance(b, bool):
        return 0.0 if a == b else 1.0
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) / (1.0 + abs(b))
    if isinstance(a, str) and isinstance(b, str):
        return 1.0 - difflib.SequenceMatcher(None, a, b).ratio() + abs(len(a) - len(b)) / (1 + len(b))
    return 100.0
