"""The compiled black box: a hidden function f over typed inputs, its tests, and how it is probed and graded.

`BlackBoxWorld` implements the `World` protocol (compiler/api.py) for the
turn@shot run protocol: each turn sends one input and shows f's output (or a
rejection, which costs no turn unless the box says so); each test asks f's
output on an unseen input, or, for an interactive puzzle (a goal box), a
hidden target itself.

Probing happens in a session (`BoxSession`): a box with memory (`state` and
`next` in its spec) remembers earlier queries, and a box with `noise` draws
uniform numbers from a stream seeded by the world's seed. `world.session()`
starts a fresh session (for a goal box, against one target); `world.probe(text)`
is the first query of a fresh session, which for a box without memory is all
there is.
"""
from __future__ import annotations

import difflib
import random
from typing import Iterator

import attrs

from worldspec.compiler.api import CaseResult, Feedback, InputError, ScoredVerdict, ToolSpec, capped
from worldspec.compiler.blackbox.certify import certify_box
from worldspec.compiler.blackbox.domains import Domain, format_input, literal, parse_input, render
from worldspec.compiler.blackbox import published
from worldspec.compiler.blackbox.grading import Grading, compile_program, program_results
from worldspec.compiler.items import BoxWorld
from worldspec.meta import Unit
from worldspec.values import MAX_STEPS, Ctx, EvalError, LimitError, same

# A box without a goal: f takes only the inputs (a goal box's f also takes `target`).
NO_GOAL = object()
# A box without memory: f takes no `state`.
NO_STATE = object()


@attrs.frozen
class TestCase:
    """One test sample: an input whose output f computed at compile time (a goal box: a target).

    In a box with memory a test may first send `given` queries in a fresh session; the answer is
    then f's output on `values` after them, optionally passed through `extract` (over `output`)."""

    id: str
    values: tuple  # input values ((), for a goal test)
    expected: object
    line: int
    given: tuple = ()  # earlier queries of the test's session: (values, ...)
    extract: object = None  # Unit over `output`, or None
    question: str = ""
    marks: tuple = ()  # a goal's marks: "again" (an earlier goal's target), "defect" (a kept published defect)

    @property
    def plain(self) -> bool:
        """One query in a fresh session, its output the answer (stock hypotheses apply)."""
        return bool(self.values) and not self.given and self.extract is None


def call_unit(unit: Unit, args: list, max_steps: int = MAX_STEPS):
    """Run a compiled meta-language function; Python's own limits become LimitError."""
    try:
        return unit(Ctx(max_steps), list(args))
    except RecursionError:
        raise LimitError("the function nests too deeply") from None
    except (MemoryError, OverflowError):
        raise LimitError("a value grew too large") from None


class BoxSession:
    """A run of queries against one box: its memory, its noise stream and (a goal box) its target."""

    opening = ""  # a box tells nothing before the first query

    def __init__(self, world: "BlackBoxWorld", target=NO_GOAL, stream=0, unit: Unit | None = None,
                 next_unit: Unit | None = None):
        self.world = world
        self.target = world.targets[0] if target is NO_GOAL and world.has_goal else target
        self.unit = unit or world.hidden
        self.next_unit = next_unit or world.next_state
        self.state = world.memory
        self.queries = 0
        self.stream = stream
        self.rng = random.Random(f"noise:{world.seed}:{stream}") if world.noise else None

    @property
    def memoryless(self) -> bool:
        """Whether a query's answer is independent of the queries before it (no memory, no noise)."""
        return not self.world.stateful and self.rng is None

    def fork(self) -> "BoxSession":
        """A copy that goes on independently (same memory, same position in the noise stream)."""
        other = BoxSession.__new__(BoxSession)
        other.__dict__.update(self.__dict__)
        if self.rng is not None:
            other.rng = random.Random()
            other.rng.setstate(self.rng.getstate())
        return other

    def send(self, values):
        """f on one admitted input; the memory moves on; raises EvalError."""
        w = self.world
        noise = [self.rng.random() for _ in w.noise] if self.rng is not None else []
        args = w.arguments(values, self.target, self.state, noise)
        out = call_unit(self.unit, args, w.max_steps)
        if self.next_unit is not None:
            self.state = call_unit(self.next_unit, args + [out], w.max_steps)
        self.queries += 1
        return out

    def read(self, text) -> list:
        """Parse one input text and check it against the domains and predicates (which may read the memory)."""
        return self.world.read_probe(text, self.state)

    def probe(self, text) -> Feedback:
        """One exploration turn: f(input), or a rejection with its reason."""
        w = self.world
        try:
            values = self.read(text)
        except InputError as e:
            if w.rejection_costs:
                return Feedback(f"rejected: {e}. The turn is used.", w.budget.cost("input"), "rejected")
            return Feedback(f"rejected: {e}. Nothing was run and no turn is used.", 0, "rejected")
        try:
            out, status = render(self.send(values)), "ok"
        except LimitError as e:
            out, status = f"limit: {e.message}", "limit"
        except EvalError as e:
            out, status = f"error: {e.message}", "error"
        text_out, truncated = capped(out, w.budget.feedback_chars)
        return Feedback(text_out, w.budget.cost("input"), status, truncated)


@attrs.frozen(eq=False)
class BlackBoxWorld(BoxWorld):
    """A black box of the Oracle benchmark, or an interactive puzzle (a goal box)."""

    family: str
    difficulty: str
    inputs: tuple[tuple[str, Domain], ...]
    goal_note: str
    grading: Grading
    source: str
    hidden: Unit = attrs.field(repr=False)
    variant_hidden: object = attrs.field(repr=False)  # applied rule ids -> Unit
    predicates: tuple = attrs.field(repr=False)  # ((Unit, reason), ...)
    targets: tuple = attrs.field(repr=False)  # a goal box's hidden targets (one test each); () otherwise
    tests: tuple[TestCase, ...] = attrs.field(repr=False)
    hypotheses: tuple = attrs.field(repr=False)  # ((name, Unit), ...)
    memory: object = attrs.field(default=NO_STATE, repr=False)  # the memory at the start of a session
    next_state: Unit | None = attrs.field(default=None, repr=False)  # the memory after a query
    noise: tuple[str, ...] = ()  # names of the uniform draws each query sees
    rejection_costs: bool = False  # a rejected input uses a turn
    answer_domain: Domain | None = None  # how a goal box's target is written (default: like an input)
    program_answer: bool = False  # the one test asks for a program, run on every test input
    solution_program: str = ""
    input_samples: tuple = ()  # (values, ...): example inputs for the manual and the probe generator
    max_steps: int = MAX_STEPS  # meta-language steps each call may take (`step_limit`, at most STEP_CEILING)
    input_defaults: tuple = ()  # the values of the last inputs, which a query may leave out (`default(V)`)
    worked: tuple = attrs.field(default=(), repr=False)  # ((TestCase, output rendered), ...): the manual's examples
    # applied rule ids -> the `next` Unit under those rules (None: the true one); `next` may call the ops
    variant_next: object = attrs.field(default=None, repr=False)
    rule_witnesses: tuple = attrs.field(default=(), repr=False)  # ((rule id, ((values, ...), ...)), ...)

    # ------------------------------------------------------------ inputs

    @property
    def protocol(self) -> str:
        """How the runner runs this world (compiler.api.PROTOCOLS)."""
        return "turn@shot"

    @property
    def has_goal(self) -> bool:
        """Whether this is an interactive puzzle (its tests ask for hidden targets)."""
        return bool(self.targets)

    @property
    def goal(self):
        """The first hidden target (a goal box)."""
        return self.targets[0] if self.targets else NO_GOAL

    @property
    def stateful(self) -> bool:
        """Whether the box remembers earlier queries of a session."""
        return self.memory is not NO_STATE

    @property
    def explore_each_test(self) -> bool:
        """Whether each test is explored in its own session (a goal box: one session per target)."""
        return self.has_goal

    def target_of(self, task):
        """The target a session for this task explores (NO_GOAL for a box without one)."""
        if not self.has_goal:
            return NO_GOAL
        return self.targets[0] if task is None else self.test_of(task).expected

    def session(self, task=None, stream=0, grading: str = "lenient") -> BoxSession:
        """A fresh session of queries (a goal box: against the target of `task`, default the first). A box
        reads its queries alike under both gradings (its readers restate the published ones), so `grading`
        changes nothing here.

        `stream` selects the noise stream (the same stream always gives the same draws). A goal box's test
        is a puzzle of its own: its session draws the stream `"<stream>:<test id>"`, seeded by the run's seed
        and the puzzle, so no two puzzles share lies or rewards (the published loop, eva_models.py
        `evaluate`, plays each test puzzle in turn while the box draws from Python's `random`, so every puzzle
        meets draws of its own)."""
        if task is not None and self.has_goal:
            stream = f"{stream}:{self.test_of(task).id}"
        return BoxSession(self, self.target_of(task), stream)

    def next_under(self, applied) -> Unit | None:
        """The memory update with only the `applied` rules in force (None: the box's own)."""
        return self.variant_next(frozenset(applied)) if self.variant_next is not None else None

    def session_under(self, applied, stream=0) -> BoxSession:
        """A fresh session of the box with only the `applied` rules in force (f and its memory update both:
        `next` may call the ops the rules change); certification compares it with the true box."""
        applied = frozenset(applied)
        return BoxSession(self, NO_GOAL, stream, self.variant_hidden(applied), self.next_under(applied))

    def session_for(self, target, stream=0) -> BoxSession:
        """A fresh session against any target (certification asks what other targets would answer)."""
        return BoxSession(self, target, stream)

    def arguments(self, values, target, state, noise) -> list:
        """f's arguments: the inputs, then `target`, `state` and the noise draws, as the box declares them."""
        args = list(values)
        if self.has_goal:
            args.append(self.targets[0] if target is NO_GOAL else target)
        if self.stateful:
            args.append(state)
        return args + list(noise)

    def evaluate(self, values, unit: Unit | None = None, target=NO_GOAL):
        """f(values) as the first query of a fresh session (or under another compiled f); raises EvalError."""
        return BoxSession(self, target, 0, unit).send(values)

    def answer_of(self, case: TestCase, unit: Unit | None = None, next_unit: Unit | None = None):
        """A test's answer: its queries in a fresh session of its own, the last output extracted (under another
        compiled f and memory update when given); raises EvalError."""
        s = BoxSession(self, NO_GOAL, f"test:{case.id}", unit, next_unit)
        for given in case.given:
            s.send(given)
        out = s.send(case.values)
        return out if case.extract is None else call_unit(case.extract, [out], self.max_steps)

    def admits(self, values, state=NO_STATE) -> str | None:
        """None when every domain and predicate admits the values; otherwise the reason."""
        for (name, d), v in zip(self.inputs, values):
            why = d.check(v)
            if why:
                return f"{name}: {why}"
        extra = [self.memory if state is NO_STATE else state] if self.stateful else []
        for unit, reason in self.predicates:
            try:
                ok = call_unit(unit, list(values) + extra, self.max_steps)
            except EvalError as e:
                return f"{reason} (the check failed: {e.message})"
            if not ok:
                return reason
        return None

    def read_probe(self, text, state=NO_STATE) -> list:
        """Parse one input text and check it; raises InputError with the reason."""
        values = parse_input(self.inputs, text, self.input_defaults)
        why = self.admits(values, state)
        if why:
            raise InputError(why)
        return values

    def format(self, values) -> str:
        """Input values written as an agent types them."""
        return format_input(self.inputs, values)

    def format_answer(self, value) -> str:
        """A goal box's target written as an agent answers it."""
        if self.answer_domain is not None:
            return self.answer_domain.write(value, True)
        return self.format([value])

    def read_answer(self, text):
        """A goal box's answer read as a target; raises InputError."""
        if self.answer_domain is not None:
            return self.answer_domain.read(text.strip().strip("`").strip(), "answer")
        return parse_input(self.inputs, text)[0]

    @property
    def turn_instructions(self) -> str:
        """What one exploration turn is, as a turn@shot session tells the player."""
        cost = (" An input the box rejects still uses the turn." if self.rejection_costs else "")
        memory = (" The box remembers the earlier inputs of the session." if self.stateful else "")
        if self.has_goal:
            each = (f" There are {len(self.targets)} puzzles; each has its own exploration turns."
                    if len(self.targets) > 1 else "")
            return (f"In each turn, reply with one input and read the box's feedback. After the exploration you are "
                    f"asked for {self.goal_note}.{each}{memory}{cost}")
        if self.program_answer:
            return ("In each turn, reply with one input and read the box's output. After the exploration you are "
                    f"asked for a program that computes the box's output.{memory}{cost}")
        return (f"In each turn, reply with one input and read the box's output. After the exploration you are "
                f"asked for the box's output on {len(self.tasks)} unseen input(s).{memory}{cost}")

    def answer_from(self, task, observed) -> str:
        """A memorising player's answer: the output of the observed input nearest the test's (a goal box: the
        last guess; a program answer: that output as a constant program)."""
        if self.has_goal:
            return observed[-1] if observed else ""
        seen = []
        s = self.session()
        for text in observed:
            try:
                values = s.read(text)
                seen.append((values, s.send(values)))
            except (InputError, EvalError):
                continue
        case = self.tests[0] if self.program_answer else self.test_of(task)
        target = list(case.values)
        best = min(seen, key=lambda vo: distance(vo[0], target), default=None)
        if best is None:
            return ""
        out = best[1] if case.extract is None else _try_extract(case.extract, best[1], self.max_steps)
        if self.program_answer:
            return f"fn({', '.join(n for n, _ in self.inputs)}) => {literal(out)}"
        return render(out)

    # ------------------------------------------------------------ probing

    def probe(self, text) -> Feedback:
        """The first query of a fresh session: f(input), or a rejection (with its reason)."""
        return self.session().probe(text)

    def charge(self, text) -> int:
        """The turns this probe costs: one, or none when it is rejected (unless rejections cost a turn)."""
        try:
            self.read_probe(text)
        except InputError:
            return self.budget.cost("input") if self.rejection_costs else 0
        return self.budget.cost("input")

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
        """An endless seeded stream of admissible inputs, as an agent would type them (the box's sample
        inputs among them)."""
        rng = random.Random(f"probes:{self.name}:{seed}")
        k = 0
        while True:
            if self.input_samples and k % 2 == 0:
                yield self.format(self.input_samples[(k // 2) % len(self.input_samples)])
                k += 1
                continue
            k += 1
            got = self.sample_inputs(rng, 1, tries=200)
            if got:
                yield self.format(got[0])
            elif self.input_samples:
                yield self.format(rng.choice(self.input_samples))
            else:  # a predicate that admits almost nothing: offer a test input's neighbourhood
                yield self.format(self.tests[0].values) if self.tests and self.tests[0].values else ""

    @property
    def tool(self) -> ToolSpec:
        """The one exploration tool: send an input, read the output."""
        return ToolSpec("query_box", f"Send one input to the black box {self.name} and read its output.",
                        "input", "One input, written as the manual shows.")

    # ------------------------------------------------------------ grading

    def verify(self, task, answer, grading: str = "lenient", stage: str = "first") -> ScoredVerdict:
        """Grade an answer: the output (as the box's grading compares), a target, or a program.

        `grading` "published" compares as the released Oracle harness does (published.py), the reply
        read as it reads it at this `stage`: "first" (a test's first reply), "reask" (a reply to a
        format re-ask) or "retry" (a later try). A program answer is graded the same either way."""
        if self.program_answer:
            return self.verify_program(task, answer)
        if grading == "published" and self.published_applies(task):
            return self.verify_published(task, answer, stage)
        case = self.test_of(task)
        want = self.format_answer(case.expected) if self.has_goal else render(case.expected)
        if not isinstance(answer, str) or not answer.strip():
            return ScoredVerdict(case.id, False, "no answer", (CaseResult(case.values, want, "", False),), 0.0)
        if self.has_goal:
            try:
                ok = same(self.read_answer(answer), case.expected)
            except InputError:
                ok = False
        else:
            ok = self.grading.matches(case.expected, answer)
        got = answer.strip()
        return ScoredVerdict(case.id, ok, "correct" if ok else "incorrect",
                             (CaseResult(case.values, want, got, ok),), 1.0 if ok else 0.0)

    def published_applies(self, task) -> bool:
        """Whether this test is graded by its family's released comparison (published.applies)."""
        return not self.program_answer and published.applies(self.family, self.published_truth(self.test_of(task)))

    def published_truth(self, case: TestCase):
        """The truth the released harness compares with: a puzzle's answer text, otherwise the output."""
        return self.format_answer(case.expected) if self.has_goal else case.expected

    def verify_published(self, task, answer, stage: str = "first") -> ScoredVerdict:
        """An answer graded as the released harness grades this family (eva_models.py `evaluate`); the
        verdict's `retry` is the message it sends before another try ("" when it allows none)."""
        case = self.test_of(task)
        fam = self.family
        want = self.format_answer(case.expected) if self.has_goal else render(case.expected)
        text = answer if isinstance(answer, str) else ""
        if stage == "first":
            text = published.first_reading(fam, text)
        truth = self.published_truth(case)
        ok = published.correct(fam, truth, text, stage != "retry")
        retry = ""
        if not ok:
            retry = published.RETRY
            if fam == "CRI":  # eva_models.py evaluate, task 'circuit'
                readable, _ = published.circuit_reading(text)
                retry = f"the answer is wrong when input = {published.py_str(case.values[0])}" if readable \
                    else published.CIRCUIT_FORMAT
            elif fam == "PSI":  # task 'physics': a reply that is no dict after the re-asks ends the test
                value = published.python_literal(text) if stage != "retry" else text
                if stage != "retry" and not isinstance(value, dict):
                    retry = ""
                else:
                    checks = published.physics_checks(value, truth)
                    idx = ", ".join(str(i + 1) for i, c in enumerate(checks) if not c)
                    retry = (f"Your answer for object{idx} is wrong. Please try again. DO NOT output any other "
                             "text, ONLY output the answer.")
        return ScoredVerdict(case.id, ok, "correct" if ok else "incorrect",
                             (CaseResult(case.values, want, text, ok),), 1.0 if ok else 0.0, retry=retry)

    def published_reask(self, task, text, stage: str = "first") -> str:
        """The released harness's format re-ask for a test's reply at this stage ("first" or "reask"; ""
        when it takes the reply as it is)."""
        fam = self.family
        if not self.published_applies(task):
            return ""
        if stage == "first":
            text = published.first_reading(fam, text if isinstance(text, str) else "")
        reads = None
        if fam == "IPI":
            reads = self._answer_reads
        if published.format_ok(fam, text if isinstance(text, str) else "", reads):
            return ""
        return published.reask_text(fam) or ""

    def _answer_reads(self, text: str) -> bool:
        # the platform's check_answer_format is the box's own: here, whether the answer reads as a target
        try:
            self.read_answer(text)
        except InputError:
            return False
        return True

    def published_next(self, passed: bool, last: str) -> str:
        """The released harness's message after a test, before the next one (`last`: its message after
        the last wrong try)."""
        if self.family == "CRI":  # "your answer is correct." or the last try's message, then "Let's move ..."
            return f"{'your answer is correct.' if passed else last} Let's move to next question."
        if self.has_goal:
            return published.PUZZLE_CORRECT if passed else published.PUZZLE_WRONG
        return published.CORRECT_NEXT if passed else published.WRONG_NEXT

    def published_question(self, task, first: bool, shots: int, attempt: int = 1) -> str:
        """A test's question as the released harness frames it (the first one opens the evaluation)."""
        case = self.test_of(task)
        question = BoxWorld.published_question(self, task, first, shots, attempt)
        return published.question(self.family, question, case.values, first, shots)

    def published_solution(self, task) -> str:
        """The reference answer written as the released harness accepts it (CII: Python's str of the truth)."""
        case = self.test_of(task)
        if not self.published_applies(task):
            return self.task(task).solution
        if self.family == "CII":
            return published.py_str(case.expected)
        return self.format_answer(case.expected) if self.has_goal else render(case.expected)

    def verify_program(self, task, answer) -> ScoredVerdict:
        """A program answer, run on every test input: its score is the share of tests it answers."""
        tid = task if isinstance(task, str) else task.id
        names = [n for n, _ in self.inputs]
        try:
            unit = compile_program(answer, names)
        except InputError as e:
            return ScoredVerdict(tid, False, f"incorrect: {e}", (), 0.0)
        results = program_results(unit, [list(c.values) for c in self.tests], self.max_steps)
        cases = []
        for c, (status, got) in zip(self.tests, results):
            ok = status == "ok" and self.grading.close(got, c.expected)
            shown = render(got) if status == "ok" else f"error: {got}"
            cases.append(CaseResult(c.values, render(c.expected), shown, ok))
        right = sum(c.passed for c in cases)
        score = right / len(cases)
        return ScoredVerdict(tid, right == len(cases), f"{right} of {len(cases)} test inputs right",
                             tuple(cases), score)

    def requires(self, task) -> frozenset[str]:
        """Perturbed rules without which this test's answer would differ (by knockout)."""
        cases = self.tests if self.program_answer else (self.test_of(task),)
        needed = set()
        for r in self.rules:
            applied = frozenset(x.id for x in self.rules if x.id != r.id)
            unit, nxt = self.variant_hidden(applied), self.next_under(applied)
            for case in cases:
                try:
                    v = self.answer_of(case, unit, nxt)
                except EvalError:
                    needed.add(r.id)
                    continue
                if not same(v, case.expected):
                    needed.add(r.id)
        return frozenset(needed)

    def test_of(self, task):
        """The test sample behind a task (the program task stands for all tests: the first is returned)."""
        if self.program_answer:
            return self.tests[0]
        return BoxWorld.test_of(self, task)

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


def _try_extract(unit: Unit, out, max_steps: int):
    try:
        return call_unit(unit, [out], max_steps)
    except EvalError:
        return out


def distance(a, b) -> float:
    """How far apart two input values are (numbers by difference, sequences by edits)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        n = max(len(a), len(b))
        return sum(distance(x, y) for x, y in zip(a, b)) + 10.0 * abs(len(a) - len(b)) / max(1, n)
    if isinstance(a, dict) and isinstance(b, dict):
        return sum(distance(a[k], b[k]) if k in b else 10.0 for k in a) + 10.0 * len(set(b) - set(a))
    if isinstance(a, bool) or isinstance(b, bool):
        return 0.0 if a == b else 1.0
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) / (1.0 + abs(b))
    if isinstance(a, str) and isinstance(b, str):
        return 1.0 - difflib.SequenceMatcher(None, a, b).ratio() + abs(len(a) - len(b)) / (1 + len(b))
    return 100.0
