"""The proof kind's World: a proof checker over a rule table, with patched rules to discover.

The World offers the same surface as a program World: probe = check one proof,
verify = check an answer to a task (or accept the declared decline form on an
unprovable goal), requires = knockout, certify = compiler/proof/certify.py's
report (with the certifier's bounds for each unprovable goal).
"""
from __future__ import annotations

import itertools
import re
from typing import ClassVar, Iterator

import attrs

from worldspec.compiler.api import CaseResult, Feedback, Task, ToolSpec, Verdict, WorldHeader
from worldspec.compiler.common import capped_feedback
from worldspec.compiler.proof import checker, formula as F, generate, information, proofs, search
from worldspec.compiler.proof.certify import certify as certify_proof
from worldspec.compiler.proof.explorer import ProofExplorer, proof_view
from worldspec.compiler.proof.formula import FormulaError
from worldspec.compiler.proof.manual import sequent
from worldspec.compiler.proof.schema import Schema, parse_schema

DEFAULT_DECLINE = "UNPROVABLE"
# verify's details for a decline: a correct refusal (UnprovRec) and a refusal of a provable goal
DECLINED_RIGHT = "declined correctly: the goal has no proof"
DECLINED_WRONG = "declined, but the goal can be proved"


@attrs.frozen
class InferRule:
    """A base (manual) inference rule."""

    id: str
    title: str
    schema: Schema
    doc: str


@attrs.frozen
class ProofTask:
    """Grading data of one task: the sequent, and for an unprovable goal the bounds it is certified in."""

    task: Task
    premises: tuple
    goal: tuple
    unprovable: bool
    bounds: search.Bounds
    bounds_name: str
    solutions: tuple[str, ...] = ()  # every reference answer (task.solution is the first)
    allow: str = ""  # a declared exception: why a manual-trusting answer may solve this task


@attrs.frozen(eq=False)
class ProofWorld(WorldHeader):
    """A world whose probes and answers are proofs (built with keywords)."""

    notation: F.Notation = attrs.field(repr=False)
    infer: dict = attrs.field(repr=False)  # id -> InferRule (base)
    patches: dict = attrs.field(repr=False)  # id -> Schema (true)
    applied: frozenset = frozenset()
    task_data: dict = attrs.field(repr=False, factory=dict)
    rule_allow: dict = attrs.field(repr=False, factory=dict)  # rule id -> why one task may be its only one
    decline: str = DEFAULT_DECLINE
    premise_word: str = "premise"
    assume_word: str = "assume"
    source: str = ""
    cache: dict = attrs.field(repr=False, factory=dict)  # shared by every variant
    # runner/agents.py default_milestone_agents: the explorer answers 70 searches a milestone, so a run
    # without --agent leaves it out (name it)
    explorer_by_default: ClassVar[bool] = False

    @property
    def protocol(self) -> str:
        """How the runner runs this world (compiler.api.PROTOCOLS)."""
        return "milestone"

    @property
    def schemas(self) -> dict[str, Schema]:
        """The rule table in force: base schemas with the applied patches."""
        key = ("schemas", self.applied)
        if key not in self.cache:
            table = {rid: r.schema for rid, r in self.infer.items()}
            for rid in self.applied:
                table[rid] = self.patches[rid]
            self.cache[key] = table
        return self.cache[key]

    @property
    def is_true(self) -> bool:
        """Whether every patch is applied (the true world)."""
        return self.applied == frozenset(self.patches)

    def variant(self, applied) -> "ProofWorld":
        """The same world with exactly these patches applied."""
        return attrs.evolve(self, applied=frozenset(applied))

    def base_world(self) -> "ProofWorld":
        """The manual's world: no patch applied."""
        return self.variant(())

    def true_world(self) -> "ProofWorld":
        """The world with every patch applied."""
        return self.variant(self.patches)

    def knockout(self, rule_id: str) -> "ProofWorld":
        """The true world with one patch reverted to its base schema."""
        return self.variant(r for r in self.patches if r != rule_id)

    # ------------------------------------------------------------ checking

    def _read(self, text: str) -> proofs.Proof:
        return proofs.read(text, self.notation, (self.premise_word,) + proofs.PREMISE_WORDS,
                           (self.assume_word,) + proofs.ASSUME_WORDS)

    def check(self, text: str) -> checker.Result:
        """The checker's verdict on a proof under this world's rules (never raises)."""
        try:
            return checker.check(self._read(text), self.schemas, self.notation)
        except RecursionError:
            return checker.Result(False, False, message="the proof nests too deeply to check")

    def verdict_text(self, result: checker.Result) -> str:
        """The compact verdict an agent sees."""
        if result.accepted:
            return (f"accepted: {sequent(result.premises, result.conclusion, self.notation)} "
                    f"({result.lines} line{'s' if result.lines != 1 else ''})")
        if result.ok:
            return f"not a finished proof: {result.message}"
        if not result.line:
            return f"rejected: {result.message}"
        where = f"line {result.line}" + (f" ({result.rule})" if result.rule else "")
        checked = f" Lines 1-{result.line - 1} check." if result.line > 2 else (
            " Line 1 checks." if result.line == 2 else "")
        return f"rejected at {where}: {result.message}.{checked}"

    def charge(self, text: str) -> int:
        """Probe units: one per proof (0 when the text has no numbered line)."""
        if not isinstance(text, str):
            return 0
        return 1 if any(re.match(r"\s*\d", ln) for ln in text.splitlines()) else 0

    def probe(self, text: str) -> Feedback:
        """Check one proof as an agent would: one unit, capped verdict, never raising."""
        if not isinstance(text, str):
            return Feedback("rejected: the proof must be text", 0, "parse_error")
        units = self.charge(text)
        if not units:
            return Feedback(f"rejected: no numbered proof lines; write one step per line, e.g. "
                            f"`1. P {self.notation.word('imp')} Q    {self.premise_word}`. Nothing was "
                            f"checked.", 0, "parse_error")
        result = self.check(text)
        return capped_feedback(self.verdict_text(result), units, "ok" if result.accepted else "error",
                               self.budget)

    # ------------------------------------------------------------ grading

    def task(self, task) -> Task:
        """The task as an agent sees it (by id or Task)."""
        return self.task_data[task if isinstance(task, str) else task.id].task

    @property
    def answer_tags(self) -> tuple[str, ...]:
        """The fence tags a proof is written under (runner/reading.py): the world's name in lower case with
        _proof, then the name alone (ExplorationBench's released reader takes ```alienlogic_proof blocks,
        sandboxes/logic/harness.py `_PROOF_BLOCK_RE`)."""
        slug = re.sub(r"[^a-z0-9_]", "", self.name.lower())
        return (f"{slug}_proof", slug)

    def is_decline(self, answer: str) -> bool:
        """Whether an answer is the decline form (quotes, backticks and emphasis ignored)."""
        if not isinstance(answer, str):
            return False
        text = answer.strip().strip("`").strip()
        text = re.sub(r"^[\"'*_]+|[\"'*_.!]+$", "", text).strip()
        return text.upper() == self.decline.upper()

    def unprovable(self, task) -> bool:
        """Whether declining is the right answer here: the designation in the true world, the
        certifier's verdict in any other rule system."""
        data = self.task_data[task if isinstance(task, str) else task.id]
        if self.is_true:
            return data.unprovable
        return self.search(data.task.id).certified_unprovable

    @property
    def unprovable_tasks(self) -> tuple[str, ...]:
        """Ids of the tasks designated unprovable, in task order (UnprovRec's denominator)."""
        return tuple(t.id for t in self.tasks if self.task_data[t.id].unprovable)

    def correct_refusal(self, task, answer: str) -> bool:
        """Whether an answer declines a goal that has no proof here (UnprovRec's numerator):
        the decline form, on a task where declining is right (see `unprovable`)."""
        return self.is_decline(answer) and self.unprovable(task)

    def search(self, task) -> search.Outcome:
        """The bounded search for a task's sequent under this world's rules (cached)."""
        data = self.task_data[task if isinstance(task, str) else task.id]
        key = ("search", self.applied, data.task.id)
        if key not in self.cache:
            self.cache[key] = search.search(self.schemas, data.premises, data.goal, data.bounds,
                                            notation=self.notation)
        return self.cache[key]

    def verify(self, task, answer: str) -> Verdict:
        """Exact grading: a proof that checks and proves the task's goal from its premises, or
        (for a goal designated unprovable) the decline form."""
        data = self.task_data[task if isinstance(task, str) else task.id]
        t = data.task
        want = sequent(data.premises, data.goal, self.notation)
        if not isinstance(answer, str) or not answer.strip():
            return Verdict(t.id, False, "no answer")
        if self.is_decline(answer):
            if self.unprovable(t.id):
                return self._verdict(t.id, True, DECLINED_RIGHT, want, answer)
            return self._verdict(t.id, False, DECLINED_WRONG, want, answer)
        result = self.check(answer)
        if self.is_true and data.unprovable:
            note = " (this proof checks; please report it)" if result.accepted else ""
            return self._verdict(t.id, False, f"the goal is designated unprovable; only {self.decline} "
                                 f"earns credit{note}", want, answer)
        if not result.accepted:
            return self._verdict(t.id, False, self.verdict_text(result), want, answer)
        extra = [p for p in result.premises if p not in data.premises]
        if extra:
            return self._verdict(t.id, False, f"the proof uses the premise {F.show(extra[0], self.notation)}, "
                                 f"which the task does not give", want, answer)
        if result.conclusion != data.goal:
            return self._verdict(t.id, False, f"the proof ends with {F.show(result.conclusion, self.notation)}, "
                                 f"not the goal {F.show(data.goal, self.notation)}", want, answer)
        return self._verdict(t.id, True, "the proof checks and proves the goal", want, answer)

    @staticmethod
    def _verdict(tid, ok, detail, want, answer) -> Verdict:
        return Verdict(tid, ok, detail, (CaseResult((), want, answer.strip(), ok),))

    def requires(self, task) -> frozenset[str]:
        """Patched rules a task needs: knocking the rule back to its base schema makes every
        reference proof fail (a rule an alternative solution avoids is not needed; for an
        unprovable goal: makes the goal provable within its bounds), or changes the naive
        answer's verdict (the manual-trusting answer fails because of this rule and passes
        without it, or the reverse)."""
        tid = task if isinstance(task, str) else task.id
        key = ("requires", tid)
        if key not in self.cache:
            true = self.true_world()
            data = self.task_data[tid]
            naive = data.task.naive
            # a decline is judged by the search below; a proof by its verdict in each variant
            naive_proof = naive if naive and not self.is_decline(naive) else ""
            naive_passes = bool(naive_proof) and true.verify(tid, naive_proof).passed
            needed = set()
            # Every knockout's rules are among the true rules plus the base ones: when even
            # that union cannot prove an unprovable goal, no knockout can.
            hopeless = data.unprovable and self._union_search(tid).certified_unprovable
            # A chain: the true rules plus the base rules of the knockouts decided since it began,
            # saturated. Each knockout's rules lie within the chain plus its own base rule, so where
            # that misses the goal the knockout does too; where it finds the goal, the knockout is
            # searched afresh and the chain begins again from the true rules alone.
            chain = None
            for rid in sorted(self.patches):
                knocked = true.knockout(rid)
                if naive_proof and knocked.verify(tid, naive_proof).passed != naive_passes:
                    needed.add(rid)
                elif data.unprovable:
                    if hopeless:
                        continue
                    if chain is None:
                        chain = search.Search(true.schemas, data.premises, data.goal, data.bounds,
                                              notation=self.notation)
                        if not chain.run().certified_unprovable:
                            chain = False  # the true rules alone are no sound start
                    if chain:
                        if chain.extend({f"{rid}~base": self.infer[rid].schema}).certified_unprovable:
                            continue
                        chain = None
                    outcome = knocked.search(tid)
                    if (outcome.found and len(proofs.clean(outcome.proof)) <= data.bounds.lines
                            and knocked.verify(tid, outcome.proof).passed):
                        needed.add(rid)  # provable within the bounds once the rule is reverted
                elif not any(knocked.verify(tid, s).passed for s in data.solutions or (data.task.solution,)):
                    needed.add(rid)
            self.cache[key] = frozenset(needed)
        return self.cache[key]

    def _union_search(self, tid: str) -> search.Outcome:
        key = ("union", tid)
        if key not in self.cache:
            table = dict(self.true_world().schemas)
            for rid in self.patches:
                table[f"{rid}~base"] = self.infer[rid].schema
            data = self.task_data[tid]
            self.cache[key] = search.search(table, data.premises, data.goal, data.bounds, notation=self.notation)
        return self.cache[key]

    # ------------------------------------------------------------ rules and tools

    @property
    def open_book(self) -> str:
        """Every patched rule's statement and schema (the open-book condition's hint)."""
        lines = [f"The complete list of ways {self.name} differs from its manual:"]
        for r in self.rules:
            lines.append(f"- {r.id} ({r.title}): {r.statement} Schema: `{r.equation}`")
        return "\n".join(lines)

    @property
    def report_instructions(self) -> str:
        """How a rule report is written for this world."""
        rid, schema = self.report_example
        return (f"Write one line per rule you believe differs from the manual: the rule id, a colon, and "
                f"its true schema in the manual's schema notation, in the form the manual writes its "
                f"rules: `{rid}: {schema}` is how the manual writes {rid}. If you cannot tell any rule, "
                f"write UNKNOWN.")

    @property
    def report_example(self) -> tuple[str, str]:
        """The format example of the rule report: a manual rule that no patch changes and no
        herring names (so it is no true rule difference and no hint), preferring one that cites
        two lines; a made-up id and schema when every rule is patched."""
        named = {h.target for h in self.herrings}
        kept = [r for rid, r in self.infer.items() if rid not in self.patches and f"rule {rid}" not in named]
        kept.sort(key=lambda r: len(r.schema.lines) < 2)  # stable: spec order within each group
        if kept:
            return kept[0].id, kept[0].schema.show(self.notation)
        n = next(k for k in itertools.count(1) if f"r{k}" not in self.infer)
        w = self.notation.word
        return f"r{n}", f"A {w('and')} B, C {w('turnstile')} C {w('and')} A"

    @property
    def tool(self) -> ToolSpec:
        """The one exploration tool: check a proof."""
        b = self.budget
        return ToolSpec(
            "check_proof",
            f"Check one {self.name} proof with the real proof checker. Each call checks one proof (one "
            f"probe unit). The verdict says `accepted` with the sequent proved, or names the first line "
            f"that fails, the rule it cites and why. Feedback is capped at {b.feedback_lines} lines and "
            f"{b.feedback_chars} characters.",
            "proof",
            f"The complete proof, one numbered line per step: `N. FORMULA JUSTIFICATION`, where the "
            f"justification is `{self.premise_word}`, `{self.assume_word}`, or a rule id followed by the "
            f"cited lines and subproof ranges (`ID 1, 3-5`); subproof lines start with bars `|`.")

    def grade_equation(self, rule_id: str, text: str) -> bool:
        """Whether a stated schema is exactly the rule's true schema (up to renaming of
        metavariables and, for unordered rules, the order of premises)."""
        try:
            truth = self.schemas.get(rule_id) if self.is_true else self.true_world().schemas.get(rule_id)
            if truth is None or not isinstance(text, str):
                return False
            stated = text.strip().strip("`").strip()
            stated = re.sub(r"^(rule\s+)?" + re.escape(rule_id) + r"\s*(\(\s*\))?\s*[:=]\s*", "", stated)
            return parse_schema(stated, self.notation).canonical() == truth.canonical()
        except (FormulaError, RecursionError, ValueError, KeyError):
            return False

    @property
    def reit_rule(self) -> str | None:
        """A rule that restates a line (A |- A), the same in every variant, if the world has one."""
        return self._helper("A |- A")

    @property
    def inst_rule(self) -> str | None:
        """A rule that instantiates a universal (forall x A |- A[t/x]), if the world has one."""
        return self._helper("forall x A |- A[t/x]")

    def _helper(self, canonical: str) -> str | None:
        for rid, r in self.infer.items():
            if rid not in self.patches and r.schema.canonical() == canonical:
                return rid
        return None

    def explorer(self, seed: int = 0) -> ProofExplorer:
        """The built-in LLM-free explorer (compiler/proof/explorer.py), built from this world's view alone: the
        manual, the notation and words, the budget and the task prompts (never the patches)."""
        return ProofExplorer(proof_view(self), seed)

    def information(self, probes) -> list:
        """Bits each proof of a trajectory removed from the explorer's hypothesis space
        (compiler/proof/information.py)."""
        return information.score(self, probes)

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        """Seeded one-rule proofs built from the manual's schemas (fixed-probe exploration)."""
        base = {rid: r.schema for rid, r in self.infer.items()}
        return generate.probe_stream(base, seed, self.reit_rule, self.notation, self.premise_word,
                                     self.assume_word, self.inst_rule)

    def certify(self, progress=None) -> dict:
        """The certification report (compiler/proof/certify.py)."""
        return certify_proof(self, progress)
