"""The compiled world's public records: what a runner, a test or the CLI sees.

Everything here is a frozen attrs class; the runner depends on these and on
`World` only, never on the spec AST.
"""
from __future__ import annotations

import attrs


@attrs.frozen
class Feedback:
    """The result of one probe, exactly as an agent sees it."""

    text: str  # capped output (and error message, if any) shown to the agent
    units: int  # probe units charged (0 when rejected or not runnable)
    status: str  # "ok" | "error" | "limit" | "parse_error" | "rejected"
    truncated: bool = False

    @property
    def executed(self) -> bool:
        """Whether any code ran (rejected and unparsable probes run nothing)."""
        return self.status in ("ok", "error", "limit")


@attrs.frozen
class CaseResult:
    inputs: tuple
    expected: str
    got: str
    passed: bool


@attrs.frozen
class Verdict:
    """Exact grading of one answer to one task."""

    task: str
    passed: bool
    detail: str  # one line a person can read
    cases: tuple[CaseResult, ...] = ()


@attrs.frozen
class Budget:
    rounds: int = 4
    calls_per_round: int = 12
    max_calls: int = 48
    units_per_call: int = 5
    unit_costs: tuple[tuple[str, int], ...] = (("output", 1), ("output_in_loop", 3))
    feedback_lines: int = 15
    feedback_chars: int = 600
    answers: int = 3
    shots: int = 1

    def cost(self, kind: str) -> int:
        return dict(self.unit_costs).get(kind, 1)


@attrs.frozen(eq=False)
class WorldHeader:
    """What every compiled world has, whatever its kind (each kind adds its own fields)."""

    name: str
    version: int
    kind: str
    seed: int
    default_seed: int
    summary: str
    params: tuple  # ((name, value), ...) drawn from the seed
    manual: str
    examples: tuple
    tasks: tuple
    rules: tuple  # perturbed rules (discovery targets)
    herrings: tuple
    budget: object  # Budget, or a kind's own budget record


@attrs.frozen
class Rule:
    """A perturbed rule (discovery target) or a red herring."""

    id: str
    title: str
    target: str  # "op PLUCK" / "hook int_literal"
    herring: bool
    statement: str  # open-book statement (herrings: why the name misleads)
    equation: str  # equation notation of the true behaviour ("" for herrings)
    params: tuple[str, ...] = ()


@attrs.frozen
class Example:
    id: str
    band: str
    prompt: str
    program: str
    output: str  # computed by the true world


@attrs.frozen
class Task:
    """A held-out task as an agent is shown it, plus grading metadata."""

    id: str
    band: str
    prompt: str  # full text the agent sees (interface, inputs, shape)
    shape: str  # "program" | "function" | "predict"
    labels: tuple[tuple[str, str], ...] = ()  # (depth, ...), (shape, ...), (set, ...)
    solution: str = ""  # reference answer, valid in the true world
    naive: str = ""  # the manual-trusting answer ("" if none)

    def label(self, key: str, default: str = "") -> str:
        return dict(self.labels).get(key, default)


def by_id(items, key, where: str):
    """The item whose id is `key` (a str, or anything with an id)."""
    wanted = key if isinstance(key, str) else key.id
    for item in items:
        if item.id == wanted:
            return item
    raise KeyError(f"no test {wanted!r} in {where}")

