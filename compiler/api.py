"""The compiled world's public records: what a runner, a test or the CLI sees.

Everything here is a frozen attrs class; the runner depends on these and on
`World` only, never on the spec AST.
"""
from __future__ import annotations

from typing import Iterator, Protocol, runtime_checkable

import attrs


# How a parse error says that a program stopped in the middle of a construct (a block opened and not
# yet written): `worldspec play` then reads the block's lines instead of charging the line alone.
UNFINISHED_PROGRAM = "the program ends too early"


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
    """A milestone world's exploration budget. The defaults are ExplorationBench's (appendix A.4,
    "Interaction budget and control conditions"; §4 for the three answers); a spec's `budget`
    block overrides any of them."""

    rounds: int = 4  # four exploration rounds, milestones M0..M4
    calls_per_round: int = 12  # at most 12 tool calls (AlienCode) or proofs (AlienLogic) a round
    max_calls: int = 48  # AlienLogic's cap across the run
    units_per_call: int = 5  # probe units one call may spend; a call over the cap runs nothing
    unit_costs: tuple[tuple[str, int], ...] = (("output", 1), ("output_in_loop", 3))  # 1 per top-level EMIT
    # argument, 3 per EMIT inside a loop body (fixed, not multiplied by the iterations)
    feedback_lines: int = 15  # feedback is cut to 15 lines and 600 characters a call
    feedback_chars: int = 600
    answers: int = 3  # every task is answered three times at each milestone
    shots: int = 1  # attempts per answer

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

    def rule(self, rule_id: str) -> "Rule":
        """The perturbed rule or herring with this id (KeyError when there is none)."""
        for r in self.rules + self.herrings:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)


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



class InputError(Exception):
    """An agent's input that cannot be read or is outside the box's domain."""


@attrs.frozen
class ToolSpec:
    """The one exploration tool a program world gives an agent."""

    name: str
    description: str
    parameter: str
    parameter_description: str

    def schema(self) -> dict:
        """OpenAI-style function tool schema."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": {"type": "object", "properties": {
                self.parameter: {"type": "string", "description": self.parameter_description}},
                "required": [self.parameter]}}}


@attrs.frozen
class ScoredVerdict(Verdict):
    """A verdict with a score in [0, 1] (1 for a correct answer; GSI: score / the normaliser, clipped).

    `unclipped` (game boxes): max(score, 0) / normaliser, not clipped at 1, as the released Oracle code
    reports it. `retry` (published grading): the message the released harness sends before another try
    ("" when it gives none: the test is over)."""

    score: float = 0.0
    unclipped: float | None = None
    retry: str | None = None


def capped(text: str, chars: int) -> tuple[str, bool]:
    if len(text) <= chars:
        return text, False
    notice = " [feedback truncated]"
    return text[: max(0, chars - len(notice))] + notice, True


# ---------------------------------------------------------------- the World protocol

# The run protocols a world may name; the runner keeps one implementation of each in a registry.
PROTOCOLS = ("milestone", "turn@shot", "pool", "holdem", "judge")


@runtime_checkable
class World(Protocol):
    """What every compiled world offers, whatever its kind; the runner sees nothing else.

    `protocol` names how a world is run: "milestone" (ExplorationBench: rounds of probes, milestones
    with rule reports and held-out tasks), "turn@shot" (the Oracle benchmark: turns of inputs, then
    test samples with shots) or "pool" (a repeated game against an opponent pool).
    """

    # The data members are WorldHeader's fields (name, version, kind, seed, ..., budget), declared once
    # there: the protocol reads them from its annotations instead of repeating the list.
    __annotations__ = dict(WorldHeader.__annotations__)

    @property
    def protocol(self) -> str: ...

    @property
    def tool(self) -> ToolSpec: ...

    @property
    def open_book(self) -> str: ...

    @property
    def report_instructions(self) -> str: ...

    def probe(self, text: str) -> Feedback: ...

    def charge(self, text: str) -> int: ...

    def verify(self, task, answer: str) -> Verdict: ...

    def requires(self, task) -> frozenset[str]: ...

    def task(self, task) -> Task: ...

    def rule(self, rule_id: str) -> Rule: ...

    def grade_equation(self, rule_id: str, text: str) -> bool: ...

    def probe_generator(self, seed: int = 0) -> Iterator[str]: ...

    def certify(self, progress=None) -> dict: ...


# ---------------------------------------------------------------- optional capabilities


@attrs.frozen
class ProbeInformation:
    """What one probe of a trajectory taught, measured on the built-in explorer's hypothesis space."""

    index: int  # the probe's place in the trajectory (from 0)
    units: int  # probe units it was charged
    bits: float  # bits it removed, given the feedback before it
    best: float  # bits the best probe of the same cost was expected to remove at that point


@runtime_checkable
class Explorable(Protocol):
    """A world with a built-in explorer (program worlds). Other kinds do not have these members; a judge
    world would add them here with its own hypothesis space (e.g. candidate answers the judge allows).

    `explorer(seed)` returns a session with next_probe() -> program text, observe(program, feedback),
    report() -> rule report text, answer(task) -> answer text, snapshot()/restore(weights);
    `information(probes)` scores [(program, feedback, units)] -> [ProbeInformation]."""

    def explorer(self, seed: int = 0): ...

    def information(self, probes) -> list[ProbeInformation]: ...


def explorer_of(world, seed: int = 0):
    """The world's built-in explorer session, or None when its kind has none."""
    return world.explorer(seed) if isinstance(world, Explorable) else None


@attrs.frozen
class Kind:
    """One world kind as the compiler's registry holds it (compiler/build.py)."""

    name: str
    compile: object  # (spec: ast.Spec, seed: int | None) -> World
    summary: str = ""
    # (worlds of this kind in one folder) -> [problem, ...]: checks that need more than one world
    cross_checks: object = None
