"""The program kind's World: a compiled spec with its true semantics, ready to probe and grade.

A ProgramWorld is immutable. `variant(rules)` gives the same world under another rule
set (the manual's world applies none, a knockout world all but one); every
variant shares the compiled definitions and the tasks, and parses with the
operator table of its rules (a syntax rule changes a precedence).
"""
from __future__ import annotations

import decimal
import re
import textwrap
from typing import Iterator

import attrs
from lark import Token

from worldspec.compiler.api import CaseResult, Feedback, Rule, Task, ToolSpec, Verdict, WorldHeader
from worldspec.compiler.common import capped_feedback
from worldspec.compiler.program import equations, information, kernel, kernel_ast
from worldspec.compiler.program.certify import certify_program
from worldspec.compiler.program.explorer import Explorer
from worldspec.compiler.program.probegen import ProbeGenerator
from worldspec.compiler.program.semantics import Semantics, SemanticsBuilder, param_list
from worldspec.values import MAX_STEPS, EvalError, show as std_show


PROGRAM_CACHE_SIZE = 4096
# The surface entries that spell a statement (the rest spell literals or switch kernel options).
_STATEMENT_FORMS = ("assign", "output", "if", "elif", "else", "for", "while", "break", "continue", "pass",
                    "function", "return", "set_index", "assign_many", "for_many")


@attrs.frozen
class TaskData:
    """Grading data the agent never sees."""

    task: Task
    inputs: tuple[str, ...]
    cases: tuple[tuple, ...]
    expected: tuple  # expect value per case
    function: str
    program: str  # predict tasks
    tolerance: float
    solutions: tuple[str, ...] = ()  # graded tasks: every reference solution (task.solution is the first)
    allow: str = ""  # a declared exception: why a manual-trusting answer may solve this task


@attrs.frozen
class RuleData:
    """What certification reads from a rule beyond its listing."""

    witnesses: tuple[str, ...] = ()  # the author's probes that show the rule
    allow: str = ""  # a declared exception: why one task may be the only one to require the rule


@attrs.frozen
class Outcome:
    lines: tuple[str, ...]
    error: str  # "" when the program ran to the end
    status: str  # ok | error | limit | parse_error


def normalise(text: str) -> str:
    """Output as graded: trailing spaces and surrounding blank lines do not count."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    first = next((i for i, line in enumerate(lines) if line), len(lines))  # not pop(0): quadratic
    return "\n".join(lines[first:])


# A numeric literal standing alone (not part of a name such as x1 or of 0x1F): an optional sign,
# digits with an optional fraction, an optional exponent.
# Possessive digits: `\d+\.?\d*` backtracked quadratically on a long run of digits followed by a letter.
_NUMBER = re.compile(r"(?<![\w.])(-?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][+-]?\d++)?)(?![\w.])")


def _stripped_lines(text: str) -> str:
    return "\n".join(line.strip() for line in text.split("\n") if line.strip())


def same_output(got: str, expected: str) -> bool:
    """Two normalised outputs that say the same: equal text, or equal text around numeric literals of
    equal value (`3` and `3.0`, `1e3` and `1000`). explorationbench.txt A.6, after eq. (6): "Both
    branches compare normalized text, so trailing whitespace and an equal-valued numeric literal do
    not decide a verdict." """
    if got == expected:
        return True
    a, b = _NUMBER.split(got), _NUMBER.split(expected)
    if len(a) != len(b) or len(a) == 1:
        return False
    # re.split with one group: text, number, text, number, ..., text
    for i, (x, y) in enumerate(zip(a, b)):
        if i % 2 == 0:
            if x != y:
                return False
        elif x != y and not _equal_numbers(x, y):
            return False
    return True


def _equal_numbers(x: str, y: str) -> bool:
    try:
        return decimal.Decimal(x) == decimal.Decimal(y)  # exact: 0.1 stays 0.1, huge integers stay whole
    except decimal.InvalidOperation:
        return False


def _cached(cache: dict, key, compute):
    """compute() once per key; a ProgramError is kept and raised again. A full cache starts over."""
    hit = cache.get(key)
    if hit is None:
        try:
            hit = compute()
        except kernel.ProgramError as e:
            hit = e
        if len(cache) >= PROGRAM_CACHE_SIZE:
            cache.clear()
        cache[key] = hit
    if isinstance(hit, kernel.ProgramError):
        raise hit
    return hit


def unreached(rule: Rule, words: frozenset[str] | None) -> bool:
    """Whether a rule cannot touch runs that name only these words: it redefines an operator none
    of them names (a hook is reached by the kernel itself, so a hook's rule always may)."""
    return words is not None and rule.target.startswith("op ") and rule.target[3:] not in words


@attrs.frozen(eq=False)
class ProgramWorld(WorldHeader):
    """A world whose probes and answers are programs in its own language (built with keywords)."""

    surface: object = attrs.field(repr=False)  # surface.Surface: the parser of this variant's operator table
    builder: SemanticsBuilder = attrs.field(repr=False)  # shared by every variant
    task_data: dict = attrs.field(repr=False)  # task id -> TaskData
    sem: Semantics = attrs.field(repr=False)  # the table of the rules in force
    source: str = ""
    rule_data: dict = attrs.field(repr=False, factory=dict)  # rule id -> RuleData
    surfaces: object = attrs.field(repr=False, default=None)  # surface.Surfaces: every variant's, shared

    @property
    def protocol(self) -> str:
        """How the runner runs this world (compiler.api.PROTOCOLS)."""
        return "milestone"

    @property
    def applied(self) -> frozenset[str]:
        """The ids of the rules in force."""
        return self.sem.applied

    def variant(self, applied) -> "ProgramWorld":
        """The same world with exactly these rules in force."""
        applied = frozenset(applied)
        if self.surfaces is None:
            return attrs.evolve(self, sem=self.builder.build(applied))
        return attrs.evolve(self, sem=self.builder.build(applied), surface=self.surfaces.for_rules(applied))

    def base_world(self) -> "ProgramWorld":
        """The manual's world: no perturbed rule in force."""
        return self.variant(())

    def true_world(self) -> "ProgramWorld":
        """The world with every rule in force."""
        return self.variant(r.id for r in self.rules)

    def knockout(self, rule_id: str) -> "ProgramWorld":
        """The true world with one rule reverted to its base definition."""
        return self.variant(r.id for r in self.rules if r.id != rule_id)

    def origin(self, target: str) -> str | None:
        """The id of the rule in force that defines a target ("op PLUCK"), or None for its base line."""
        return self.sem.origin(target)

    # ------------------------------------------------------------ running

    @property
    def words(self) -> tuple[str, str, str, str]:
        """How this world spells true, false and none, and prints floats (for printing values)."""
        s = self.surface
        return (s.word("true"), s.word("false"), s.word("none") or "none", s.word("float_print"))

    def compile_program(self, text: str, known_functions=()):
        """Parse and compile a program for this world's rule set (cached: grading
        runs the same answer on every case and in every knockout world)."""
        if len(text) > kernel.MAX_PROGRAM_CHARS:
            return self.parse(text), None  # parse raises: the text is over the limit

        def compile_():
            tree = self.parse(text)
            return tree, kernel_ast.tiered_program(self.sem, text, known_functions, self.surface.words, tree)
        key = (self.sem.applied, text, tuple(sorted(known_functions)))
        return _cached(self.builder.program_cache, key, compile_)

    def parse(self, text: str):
        """A program's syntax tree in this variant's operator table (cached); raises kernel.ProgramError."""
        if len(text) > kernel.MAX_PROGRAM_CHARS:  # never keep huge texts around
            return kernel.parse_program(self.surface, text)
        # keyed by the grammar too: a precedence rule's knockout groups the same text otherwise
        return _cached(self.builder.parse_cache, (self.surface.grammar, text),
                       lambda: kernel.parse_program(self.surface, text))

    def execute(self, text: str, inputs: dict | None = None, max_steps: int = MAX_STEPS,
                then: str | None = None) -> Outcome:
        """Run a program (and optionally a follow-up program in the same state)."""
        try:
            tree, code = self.compile_program(text)
            follow = None
            if then is not None:
                follow = self.compile_program(then, kernel.defined_functions(tree))[1]
        except kernel.ProgramError as e:
            return Outcome((), e.render(), "parse_error")
        run = kernel.Run(self.words, max_steps)
        if inputs:
            run.globals.update(inputs)
        mark = 0
        try:
            code(run)
            if follow is not None:
                mark = len(run.out)
                follow(run)
        except EvalError as e:
            where = f"line {e.line}: " if e.line else ""
            label = "limit" if e.kind == "limit" else "error"
            return Outcome(tuple(run.out[mark:]), f"{label}: {where}{e.message}", e.kind)
        except RecursionError:
            return Outcome(tuple(run.out[mark:]), "limit: the program nests too deeply", "limit")
        except (MemoryError, OverflowError):
            return Outcome(tuple(run.out[mark:]), "limit: a value grew too large", "limit")
        return Outcome(tuple(run.out[mark:]), "", "ok")

    def render(self, value) -> str:
        """How an output statement of this world prints one value."""
        show, out = self.sem.hooks.get("show"), self.sem.hooks.get("output")
        ctx = kernel.Run(self.words, MAX_STEPS)
        try:
            shown = std_show(value, *self.words) if show is None else show(ctx, [value])
            return shown if out is None else out(ctx, [[shown]])
        except EvalError as e:
            return f"<unprintable: {e.message}>"

    # ------------------------------------------------------------ probing

    def charge(self, text: str) -> int:
        """Probe units this program would cost (0 when it does not parse)."""
        try:
            tree = self.parse(text)
        except kernel.ProgramError:
            return 0
        return kernel.charge(tree, self.budget.cost)

    def probe(self, text: str) -> Feedback:
        """Run one probe as an agent would: charged, capped, never raising."""
        if not isinstance(text, str):
            return Feedback("error: the program must be text", 0, "parse_error")
        try:
            tree, code = self.compile_program(text)
        except kernel.ProgramError as e:
            return capped_feedback("", 0, "parse_error", self.budget, e.render())
        units = kernel.charge(tree, self.budget.cost)
        cap = self.budget.units_per_call
        if units > cap:
            return Feedback(f"rejected: this program costs {units} probe units; the limit is {cap} per "
                            f"call. Nothing was run.", 0, "rejected")
        outcome = self.execute(text)
        if not outcome.lines and not outcome.error:
            return Feedback("(no output)", units, outcome.status)
        return capped_feedback("\n".join(outcome.lines), units, outcome.status, self.budget, outcome.error)

    # ------------------------------------------------------------ grading

    def task(self, task) -> Task:
        """The task as an agent sees it (by id or Task)."""
        tid = task if isinstance(task, str) else task.id
        try:
            return self.task_data[tid].task
        except KeyError:
            raise KeyError(f"no task {tid!r} in {self.name}") from None

    def verify(self, task, answer: str) -> Verdict:
        """Grade one answer exactly: every private case, or the exact output."""
        data = self.task_data[task if isinstance(task, str) else task.id]
        t = data.task
        if not isinstance(answer, str):
            return Verdict(t.id, False, "no answer")
        if t.shape == "predict":
            expected = self.predicted(t.id)
            got = normalise(answer)
            # run_eval.py `values_equal`: equal text, or equal lines once each is stripped (blank lines dropped)
            ok = same_output(got, expected) or same_output(_stripped_lines(got), _stripped_lines(expected))
            return Verdict(t.id, ok, "exact output" if ok else "output differs",
                           (CaseResult((), expected, got, ok),))
        # a program answer indented as a whole (as replies often quote code) is the same program
        answer = textwrap.dedent(answer.replace("\r\n", "\n"))
        results = []
        for values, want in zip(data.cases, data.expected):
            inputs = dict(zip(data.inputs, values))
            if t.shape == "function":
                call = f"{self.surface.word('output')}({data.function}({', '.join(data.inputs)}))"
                outcome = self.execute(answer, inputs, then=call)
            else:
                outcome = self.execute(answer, inputs)
            expected = normalise(self.render(want))
            got = normalise("\n".join(outcome.lines))
            ok = not outcome.error and self._match(got, expected, data.tolerance)
            shown = got + (("\n" if got else "") + outcome.error if outcome.error else "")
            results.append(CaseResult(values, expected, shown, ok))
        passed = sum(r.passed for r in results)
        ok = passed == len(results) and bool(results)
        return Verdict(t.id, ok, f"{passed}/{len(results)} cases", tuple(results))

    @staticmethod
    def _match(got: str, expected: str, tolerance: float) -> bool:
        if same_output(got, expected):
            return True
        if tolerance:
            try:
                return abs(float(got) - float(expected)) <= tolerance
            except ValueError:
                return False
        return False

    def predicted(self, task_id: str) -> str:
        """The exact output of a predict task's program in this world."""
        data = self.task_data[task_id]
        outcome = self.execute(data.program)
        lines = list(outcome.lines) + ([outcome.error] if outcome.error else [])
        return normalise("\n".join(lines))

    def requires(self, task) -> frozenset[str]:
        """Rules a task needs: knocking one out changes the verdict of every reference solution,
        or of the naive answer (computed by knockout, cached)."""
        task_id = task if isinstance(task, str) else task.id
        cache = self.builder.requires_cache  # one per compiled world, shared by its variants
        if task_id not in cache:
            true = self.true_world()
            t = true.task(task_id)
            # a prediction's one reference is the true output; a rule that an alternative
            # solution avoids is not needed, but one the naive answer trips over is
            references = self.task_data[task_id].solutions or (t.solution,)
            naive = (t.naive,) if t.naive else ()
            verdict = {a: true.verify(task_id, a).passed for a in references + naive}

            def flips(knocked, answers):
                return (knocked.verify(task_id, a).passed != verdict[a] for a in answers)
            words = self.words_reached(task_id, references + naive)
            cache[task_id] = frozenset(
                r.id for r in true.rules
                if not unreached(r, words)
                and (all(flips(true.knockout(r.id), references)) or any(flips(true.knockout(r.id), naive))))
        return cache[task_id]

    def words_reached(self, task_id: str, answers) -> frozenset[str] | None:
        """Every word a task's grading runs can name: the tokens of its answers (or of a prediction's
        program) and of the call that grades a function; None when one of them does not parse.
        An operator is reached only by its name (called, or passed as a value), so an operator
        missing from these words runs in no grading of the task."""
        data = self.task_data[task_id]
        texts = (data.program,) if data.task.shape == "predict" else answers
        words = {data.function, *data.inputs}
        for text in texts:
            try:
                tree = self.parse(text)
            except kernel.ProgramError:
                return None
            words.update(str(t) for t in tree.scan_values(lambda v: isinstance(v, Token)))
        return frozenset(words)

    # ------------------------------------------------------------ rules and tools

    @property
    def open_book(self) -> str:
        """Every perturbed rule's statement (the open-book condition's hint)."""
        lines = [f"The complete list of ways {self.name} differs from its manual:"]
        lines += [f"- {r.id} ({r.title}): {r.statement}" for r in self.rules]
        return "\n".join(lines)

    @property
    def answer_tags(self) -> tuple[str, ...]:
        """The fence tags an answer is written under, the preferred first (runner/reading.py): the world's name
        in lower case, then ```alien and ```python, the order of ExplorationBench's released reader
        (sandboxes/code/run_eval.py `extract_code`: aliencode, alien, python, then untagged blocks)."""
        return (re.sub(r"[^a-z0-9_]", "", self.name.lower()), "alien", "python")

    @property
    def statement_words(self) -> tuple[str, ...]:
        """The words a program line can open with: each statement form's first keyword and every operator's
        name (how an answer written without a fence is told from prose: runner/reading.py `unfenced`)."""
        words = []
        for key, template in self.surface.words:
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", template)
            if m and template != "off" and key in _STATEMENT_FORMS:
                words.append(m.group(0))
        words += [d.name for d in self.builder.base.values() if d.kind == "op"]
        return tuple(dict.fromkeys(words))

    @property
    def report_instructions(self) -> str:
        """How a rule report is written for this world (the runner asks for it at every milestone)."""
        hooks = ", ".join(f"hook {d.name}({param_list(d.params)})" for d in self.builder.base.values()
                          if d.kind == "hook")
        return (
            "Write one line per rule you believe differs from the manual: `op NAME(params) = EQUATION` for "
            "an operator, or `hook NAME(params) = EQUATION` for a kernel behaviour, where EQUATION states "
            "the true behaviour in the equation notation: a prefix s-expression over the parameter names, "
            # the examples belong to no operator of any bundled world: an example that were a true rule
            # would score for a report that only copied it (issue 12)
            "for example `op FROB(xs, k) = (slice xs k (+ k 2))`, `op TWIRL(a, b) = (if (< a b) (* a 3) b)`, "
            "`hook truthy(v) = (if in_loop (> v 1) (!= v 0))`. Heads "
            "are the operators `+ - * / // % ** ^ & | << >> == != < <= > >= and or not`, `if`, `list` and "
            "builtin names (len, get, slice, reverse, sort, range, map, filter, fold, upper, lower, join, "
            "split, ...); the context variables in_function, in_loop, loop_depth and call_depth may be "
            "used. " + (f"Kernel behaviours you may report: {hooks}. " if hooks else "")
            + "Write UNKNOWN if you cannot tell any rule.")

    @property
    def tool(self) -> ToolSpec:
        """The one exploration tool: run a program."""
        return ToolSpec(
            "run_program",
            f"Run a {self.name} program in the real interpreter and see its output. At most "
            f"{self.budget.units_per_call} probe units per call: each {self.surface.word('output')} "
            f"argument costs {self.budget.cost('output')}, or {self.budget.cost('output_in_loop')} inside "
            f"a loop body. Output is capped at {self.budget.feedback_lines} lines and "
            f"{self.budget.feedback_chars} characters.",
            "program", f"The complete {self.name} program to run.")

    def grade_equation(self, rule_id: str, text: str) -> bool:
        """Whether a stated equation agrees with the true rule (compiler/program/equations.py)."""
        return equations.grade(self, rule_id, text)

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        """An endless seeded stream of valid probes within one call's budget."""
        return ProbeGenerator(self).stream(seed)

    def certify(self, progress=None) -> dict:
        """The certification report (compiler/program/certify.py)."""
        return certify_program(self, progress)

    # ------------------------------------------------------------ the built-in explorer (api.Explorable)

    def explorer(self, seed: int = 0) -> Explorer:
        """A session of the built-in explorer (compiler/program/explorer.py)."""
        return Explorer(self, seed)

    def information(self, probes) -> list:
        """Bits each probe removed from the explorer's hypothesis space (compiler/program/information.py)."""
        return information.score(self, probes)
