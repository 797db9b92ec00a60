"""The compiled world's public records: what a runner, a test or the CLI sees.

Everything here is a frozen attrs class; the runner depends on these and on
`World` only, never on the spec AST.
"""
from __future__ import annotations

from typing import Generic, Iterator, Protocol, runtime_checkable

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
    # the edition of the spec language the world is written in (its `language` line; 2 without one),
    # set for every kind by compiler/build.py from the spec, so a report can say which rules it was read by
    language: int = attrs.field(default=2, kw_only=True)

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


# ---------------------------------------------------------------- the World protocol: a core and one face per protocol


OPTIONAL_HEADER = ("language",)  # WorldHeader fields a World of a kind outside this package may lack


def language_of(world) -> int:
    """The edition of the spec language a world was read by: its `language`, or 2 for a world of a kind that
    records none (a kind written before the language line)."""
    return getattr(world, "language", 2)


@runtime_checkable
class World(Protocol):
    """The core every compiled world offers, whatever its kind: identity, manual, budget, rules, tasks,
    grading, certification and the name of its run protocol.

    `protocol` names how a world is run ("milestone", "turn@shot", "pool", "holdem" or "judge": the keys of
    FACES). What that protocol reaches beyond the core is its face (MilestoneFace, TurnShotFace, PoolFace,
    HoldemFace, JudgeFace below); a kind declares the faces its worlds offer (`Kind.faces`) and implements
    every member of them, and the runner's module for a protocol touches a world only through the core and
    that face (tests/test_architecture.py reads them and checks).
    """

    # The data members are WorldHeader's fields (name, version, kind, seed, ..., budget), declared once
    # there: the protocol reads them from its annotations instead of repeating the list. `language` is not
    # required: a kind registered before the language line existed offers worlds without it (read as the
    # second edition: `language_of`).
    __annotations__ = {k: v for k, v in WorldHeader.__annotations__.items() if k not in OPTIONAL_HEADER}

    @property
    def protocol(self) -> str: ...

    def task(self, task) -> Task: ...

    def rule(self, rule_id: str) -> Rule: ...

    def verify(self, task, answer: str) -> Verdict: ...

    def certify(self, progress=None) -> dict: ...


@runtime_checkable
class ProbedFace(World, Protocol):
    """What the two probe-explored protocols (milestone, turn@shot) share: a tool of probes, each charged in
    units, and a seeded generator of sample probes. Not a protocol's face of its own."""

    @property
    def tool(self) -> ToolSpec: ...

    def probe(self, text: str) -> Feedback: ...

    def charge(self, text: str) -> int: ...

    def probe_generator(self, seed: int = 0) -> Iterator[str]: ...


@runtime_checkable
class MilestoneFace(ProbedFace, Protocol):
    """ExplorationBench's rounds (runner/protocols/milestone.py): a tool of probes charged in units, rule
    reports graded by equation, held-out tasks whose required rules are known by knockout."""

    @property
    def open_book(self) -> str: ...

    @property
    def report_instructions(self) -> str: ...

    def requires(self, task) -> frozenset[str]: ...

    def grade_equation(self, rule_id: str, text: str) -> bool: ...


@runtime_checkable
class TurnShotFace(ProbedFace, Protocol):
    """The Oracle benchmark's turn@shot sessions (runner/protocols/turnshot.py, the box agents and the box
    explorer): exploration through a world session, then test samples with shots, asked and graded as the
    released harness does under published grading."""

    family: str
    difficulty: str

    @property
    def turn_instructions(self) -> str: ...

    @property
    def explore_each_test(self) -> bool: ...

    @property
    def rejection_costs(self) -> bool: ...

    @property
    def published_rejection_costs(self) -> bool: ...

    # probe(text) -> Feedback, opening: what one exploration sees; memoryless (optional, default False): whether
    # a probe's answer is independent of the probes before it (a worker then needs no replay to answer it);
    # `grading` is the run's ("published" or "lenient"): a game played round by round reads each move by it
    def session(self, task=None, grading: str = "lenient"): ...

    def test_of(self, task): ...

    def answer_from(self, task, observed) -> str: ...

    def published_applies(self, task) -> bool: ...

    def published_question(self, task, first: bool, shots: int, attempt: int = 1) -> str: ...

    def published_reask(self, task, text, stage: str = "first") -> str: ...

    def published_next(self, passed: bool, last: str) -> str: ...

    def published_solution(self, task) -> str: ...


@runtime_checkable
class PlayedTests(Protocol):
    """What a turn@shot world adds whose tests are games played round by round (tasks of shape "play": a game
    box); turnshot.py plays such a test through it and asks nothing else of it."""

    # the game: opening, horizon, play(move) -> Feedback, done, verdict(); each move read under `grading` (the
    # run's: published, as the box's published platform reads it; lenient, forgiving case, spacing, quotes)
    def test_play(self, task, attempt: int = 1, grading: str = "lenient"): ...

    # whether a test game's replies are handed to `play` as written (the released platform reads the raw
    # output) rather than as their first fenced block
    def reads_moves_raw(self, grading: str = "lenient") -> bool: ...


@runtime_checkable
class PoolFace(World, Protocol):
    """Repeated games against an opponent pool, or a round robin of the run's systems
    (runner/protocols/pool.py, matches.py, tournament.py)."""

    opponents: tuple
    baselines: tuple
    seats: tuple
    matches: int
    round_robin: bool
    horizon: int
    delta: float
    max_rounds: int
    fallback: str

    def probe(self, text: str) -> Feedback: ...

    def schedule(self) -> list: ...

    def strategy(self, name: str): ...

    def horizon_for(self, opponent: str, seat: str, k: int) -> int: ...

    def new_match(self, opponent: str, seat: str, k: int): ...

    def play_strategy(self, strategy, opponent: str, seat: str, k: int) -> list: ...

    def moves_for(self, seat: str) -> tuple: ...

    def parse_moves(self, text, seat: str) -> list: ...

    def read_anywhere(self, text) -> str | None: ...

    def payoff_lines(self, seat: str) -> list: ...

    def cooperation_stats(self, rounds) -> dict: ...

    def tournament(self, names) -> list: ...

    def other_seat(self, seat: str) -> str: ...

    def pair_horizon(self, a: str, b: str, r: int) -> int: ...

    def pair_rng(self, a: str, b: str, r: int, seat: str, who: str): ...

    def seat_player(self, strategy, seat: str, horizon: int, rng): ...

    def round_for(self, t: int, seat: str, mine: str, theirs: str): ...


@runtime_checkable
class HoldemFace(World, Protocol):
    """Hold'em hands against baseline bots, heads-up duplicate deals or ring tables
    (runner/protocols/holdem.py, holdem_ring.py): a world is played, never probed."""

    table: object  # blinds and stacks
    hands: int
    seats: tuple
    opponents: tuple
    baselines: tuple
    recent: int
    players: int
    tables: int

    @property
    def ring(self) -> bool: ...

    def schedule(self) -> list: ...

    def seat(self, opponent: str, k: int, seat: str): ...  # one hand, waiting for the player's decision

    def play_bot(self, name: str, opponent: str, k: int, seat: str) -> dict: ...

    def bot(self, name: str): ...

    def ring_table(self, index: int, names): ...

    def read_json(self, text, legal): ...

    def fold_or_check(self, legal): ...


@runtime_checkable
class JudgeFace(World, Protocol):
    """Questions to a judge and submitted answers, and pass@k* samples (runner/protocols/judge.py): the
    world gives the judge's messages and label readers, the keyword judge and the answer check."""

    setting: str
    surface: str
    truth: str
    answer: str
    facts: tuple
    grading: str

    @property
    def pass_at_k(self) -> bool: ...

    @property
    def task_id(self) -> str: ...

    @property
    def strict_grading(self) -> bool: ...

    @property
    def reference_answer(self) -> str: ...

    @property
    def surface_guess(self) -> str: ...

    def probe(self, text: str) -> Feedback: ...

    def read_move(self, reply, default: str = "question"): ...

    def normalise_label(self, reply, move) -> str | None: ...

    def fallback_label(self, move) -> str: ...

    def keyword_label(self, question: str) -> str: ...

    def judge_message(self, move) -> dict: ...

    def judge_messages(self, history, move) -> list: ...

    def reask_message(self, move) -> dict: ...

    def grader_messages(self, answer: str) -> list: ...

    def read_grade(self, reply) -> bool | None: ...

    def session_manual(self, turns: int) -> str: ...

    def solve_messages(self) -> list: ...

    def ask_line(self, question: str) -> str: ...

    def answer_line(self, answer: str) -> str: ...

    def oracle_questions(self) -> list: ...


# The run protocols a world may name, each with its face; the runner keeps one implementation of each in
# a registry (runner/protocols/__init__.py) whose protocols name these faces.
FACES: dict[str, type] = {"milestone": MilestoneFace, "turn@shot": TurnShotFace, "pool": PoolFace,
                          "holdem": HoldemFace, "judge": JudgeFace}
PROTOCOLS = tuple(FACES)
# What some worlds of a protocol add to its face, and the protocol's module may reach on those worlds only
# (the test's shape says which: a task of shape "play" is played through PlayedTests).
CAPABILITIES: dict[str, tuple[type, ...]] = {"turn@shot": (PlayedTests,)}


def face_members(face: type) -> frozenset[str]:
    """Every member a face (or the core, World) declares: its own and the core's, data and methods."""
    names: set[str] = set()
    for cls in face.__mro__:
        if cls is object or cls is Protocol or cls is Generic:
            continue
        names |= set(getattr(cls, "__annotations__", {}))
        names |= {n for n, v in vars(cls).items()
                  if not n.startswith("_") and (callable(v) or isinstance(v, property))}
    return frozenset(names)


def missing_from_face(world, face: type) -> list[str]:
    """The members of `face` a world does not have (empty: it offers the whole face)."""
    return sorted(m for m in face_members(face) if not hasattr(world, m))


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
    """A world with a built-in explorer that scores information per probe (program and proof worlds; a
    proof world's probes are proofs, so runner/learnability.py tells it apart first). Other kinds do not
    have these members; a judge world would add them here with its own hypothesis space (e.g. candidate
    answers the judge allows).

    `explorer(seed)` returns a session with next_probe() -> program text, observe(program, feedback),
    report() -> rule report text, answer(task) -> answer text, snapshot()/restore(weights);
    `information(probes)` scores [(program or proof, feedback, units)] -> [ProbeInformation]."""

    def explorer(self, seed: int = 0): ...

    def information(self, probes) -> list[ProbeInformation]: ...


def explorer_of(world, seed: int = 0):
    """The world's built-in explorer session, or None when its kind has none. A world may offer an explorer
    without scoring information per probe: `explorer` alone is enough here."""
    return world.explorer(seed) if callable(getattr(world, "explorer", None)) else None


@attrs.frozen
class Kind:
    """One world kind as the compiler's registry holds it (compiler/build.py)."""

    name: str
    compile: object  # (spec: ast.Spec, seed: int | None) -> World
    summary: str = ""
    # (worlds of this kind in one folder) -> [problem, ...]: checks that need more than one world
    cross_checks: object = None
    # the faces its worlds offer (MilestoneFace, ...): each world implements every member of them, and
    # the face of the protocol it names is one of them
    faces: tuple = ()
