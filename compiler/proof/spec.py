"""The proof kind's spec reader: a spec of inference rules -> a ProofWorld (compiler/proof/world.py).

A proof world declares its base (manual) rules as `infer` blocks with a schema
and a manual entry, patches some of them with `rule` blocks (the discovery
targets), names red herrings among the rest, and gives tasks as sequents
(`premises`, `goal`) with a reference proof, or designates a goal `unprovable`
under a named `bounds` block, which the certifier then checks by exhaustive
bounded search. See docs/proof-worlds.md.
"""
from __future__ import annotations

import re

import attrs

from worldspec import ast
from worldspec.compiler.api import Budget, Example, Kind, MilestoneFace, Rule, Task
from worldspec.compiler.common import allow_reason, draw_params, interpolate, read_budget
from worldspec.compiler.proof import checker, formula as F, proofs, search
from worldspec.compiler.proof.formula import FormulaError
from worldspec.compiler.proof.manual import render_manual, sequent
from worldspec.compiler.proof.schema import Schema, parse_schema
from worldspec.compiler.proof.world import DEFAULT_DECLINE, InferRule, ProofTask, ProofWorld
from worldspec.diagnostics import SpecError, did_you_mean, source_line
from worldspec.meta import MetaCompiler
from worldspec.values import EvalError

SECTIONS = ("infer", "bounds", "decline")
SYNTAX_KEYS = {"not": "not", "and": "and", "or": "or", "implies": "imp", "imp": "imp", "iff": "iff",
               "falsum": "bot", "bot": "bot", "forall": "all", "all": "all", "exists": "ex", "ex": "ex",
               "turnstile": "turnstile", "premise": "premise", "assume": "assume"}
TASK_FIELDS = ("prompt", "premises", "premise", "goal", "solution", "naive", "unprovable", "allow")
RULE_FIELDS = ("schema", "statement", "equation", "allow")
BOUND_KEYS = ("size", "depth", "lines", "nodes", "constants")
RULE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def compile_spec(spec: ast.Spec, seed: int | None = None) -> ProofWorld:
    """Compile a `kind proof` spec into its true ProofWorld (at `seed`, or the declared one)."""
    return Reader(spec, spec.seed if seed is None else seed).world()


class Reader:
    """Reads one proof spec: params, notation and bounds are kept while its sections are read."""

    def __init__(self, spec: ast.Spec, seed: int):
        self.spec = spec
        self.seed = seed
        self.params = draw_params(spec, seed)
        self.mc = MetaCompiler(self.params)

    def text(self, s: str) -> str:
        """A spec string with the params filled in."""
        return interpolate(s, self.params)

    def rule_id(self, name: str, span: ast.Span) -> str:
        """The id a block name stands for: a param's value when the name is a param (so rule ids
        can be drawn from the seed), the name itself otherwise."""
        if name not in self.params:
            return name
        value = self.params[name]
        if not isinstance(value, str) or not RULE_ID.fullmatch(value):
            raise SpecError(span, f"{name} names a param whose value {value!r} is not a rule id",
                            'A rule id is one word, like r17: param MP = "r" + str(9 + K)')
        return value

    # ---------------------------------------------------------- reading fields

    def value(self, field: ast.Field, what: str):
        """The one value of a field."""
        if len(field.args) != 1:
            raise SpecError(field.span, f"{field.key} takes one value, here {len(field.args)}", what)
        return self._eval(field.args[0], what)

    def _eval(self, e: ast.Expr, what: str):
        if isinstance(e, ast.Var) and e.name not in self.params:
            return e.name
        try:
            return self.mc.constant(e)
        except EvalError as err:
            raise SpecError(e.span, f"cannot evaluate this value: {err.message}", what) from None

    def string(self, field: ast.Field, what: str) -> tuple[str, ast.Span]:
        """The one string of a field, and its span."""
        v = self.value(field, what)
        if not isinstance(v, str):
            raise SpecError(field.args[0].span, f"{field.key} needs a string, not {v!r}", what)
        return self.text(v), field.args[0].span

    def strings(self, field: ast.Field, what: str) -> list[tuple[str, ast.Span]]:
        """Every string of a field, with their spans."""
        out = []
        for e in field.args:
            v = self._eval(e, what)
            if not isinstance(v, str):
                raise SpecError(e.span, f"{field.key} needs strings, not {v!r}", what)
            out.append((self.text(v), e.span))
        return out

    def int_field(self, field: ast.Field, what: str) -> int:
        """The one non-negative integer of a field."""
        v = self.value(field, what)
        if type(v) is not int or v < 0:
            raise SpecError(field.span, f"{field.key} needs a non-negative integer, not {v!r}", what)
        return v

    def formula(self, text: str, span: ast.Span, what: str):
        """A formula of the spec, or a SpecError at its column."""
        try:
            return F.parse(text, self.notation)
        except FormulaError as e:
            raise SpecError(_inside(span, text, e.col), f"{what}: {e.message}",
                            "Formulas use the world's connectives; see docs/proof-worlds.md.") from None

    def schema(self, text: str, span: ast.Span, what: str) -> Schema:
        """A schema of the spec, or a SpecError at its column."""
        try:
            return parse_schema(text, self.notation)
        except FormulaError as e:
            raise SpecError(_inside(span, text, e.col), f"{what}: {e.message}",
                            "A schema reads like `A -> B, A |- B ; distinct`; see docs/proof-worlds.md.") from None

    # ---------------------------------------------------------- sections

    def world(self) -> ProofWorld:
        """Read every section; the true ProofWorld."""
        spec = self.spec
        self.reject_program_sections()
        self.notation, self.words = self.read_syntax()
        generic = {k: [g for g in spec.generic if g.key == k] for k in SECTIONS}
        for g in spec.generic:
            if g.key not in SECTIONS:
                raise SpecError(g.span, f"unknown section {g.key!r} in a proof world",
                                did_you_mean(g.key, SECTIONS + ("rule", "herring", "task", "example")).strip()
                                or "Proof worlds add: infer, bounds, decline.")
        decline = DEFAULT_DECLINE
        for g in generic["decline"]:
            if g.name or g.fields or len(g.args) != 1:
                raise SpecError(g.span, "write: decline \"UNPROVABLE\"", "One word an answer uses to decline.")
            v = self._eval(g.args[0], "write: decline \"UNPROVABLE\"")
            if not isinstance(v, str) or not v.strip() or "\n" in v:
                raise SpecError(g.span, "the decline form must be a one-line string", "")
            decline = v.strip()
        self.decline = decline
        infer = self.read_infer(generic["infer"])
        patches, rules, rule_allow = self.read_rules(infer)
        herrings = self.read_herrings(infer, patches)
        self.bounds = self.read_bounds(generic["bounds"])
        budget = self.read_budget()
        world = ProofWorld(
            name=spec.name, version=spec.version, language=spec.language, kind=spec.kind, seed=self.seed,
            default_seed=spec.seed,
            summary=self.text(spec.summary), params=tuple(self.params.items()), manual="", examples=(), tasks=(),
            rules=rules, herrings=herrings, budget=budget, notation=self.notation, infer=infer, patches=patches,
            applied=frozenset(patches), task_data={}, rule_allow=rule_allow, decline=decline,
            premise_word=self.words["premise"], assume_word=self.words["assume"], source=spec.file, cache={})
        manual = render_manual(world, self.text(spec.manual),
                               [(r.id, r.title, r.schema, r.doc) for r in infer.values()], budget)
        world = attrs.evolve(world, manual=manual)
        examples = tuple(self.example(world, e) for e in spec.examples)
        task_data = self.read_tasks(world)
        return attrs.evolve(world, examples=examples, tasks=tuple(d.task for d in task_data.values()),
                            task_data=task_data)

    def reject_program_sections(self) -> None:
        """A proof world has no base block, defs or unit costs."""
        spec = self.spec
        if spec.base:
            raise SpecError(spec.base[0].span, "a proof world has no base block",
                            "Declare the manual's rules with infer blocks: "
                            "infer r1 \"title\" { schema \"...\" doc \"...\" }")
        if spec.defs:
            raise SpecError(spec.defs[0].span, "a proof world has no defs", "Remove the def.")
        if spec.unit_costs:
            raise SpecError(spec.span, "a proof world charges one unit per proof; unit_cost does not apply",
                            "Remove the unit_cost entries from the budget.")

    def read_syntax(self):
        """The notation and the premise/assume words of the syntax block."""
        overrides, words = {}, {"premise": "premise", "assume": "assume"}
        for e in self.spec.syntax:
            key = SYNTAX_KEYS.get(e.key)
            if key is None:
                raise SpecError(e.span, f"unknown syntax entry {e.key!r} in a proof world",
                                did_you_mean(e.key, SYNTAX_KEYS).strip() or
                                "Entries: " + ", ".join(sorted(SYNTAX_KEYS)) + ".")
            value = self.text(e.value)  # a spelling may be drawn from the seed: and "{AND}"
            if key in words:
                if not RULE_ID.fullmatch(value):
                    raise SpecError(e.span, f"the {key} word must be a single word", "For example: premise \"given\"")
                words[key] = value
            else:
                overrides[key] = value
        try:
            return F.Notation.make(overrides), words
        except (ValueError, KeyError) as err:
            raise SpecError(self.spec.syntax[0].span, f"the syntax block does not work: {err}",
                            "Give each connective its own spelling.") from None

    def read_infer(self, blocks) -> dict[str, InferRule]:
        """The base rules: infer blocks."""
        out: dict[str, InferRule] = {}
        for g in blocks:
            if not g.name:
                raise SpecError(g.span, "write: infer ID \"title\" { schema \"...\" doc \"...\" }", "")
            rid = self.rule_id(g.name, g.span)
            if rid in out:
                raise SpecError(g.span, f"rule id {rid} is declared twice", "Rule ids must be unique.")
            schema, doc = None, ""
            for f in g.fields:
                if f.key == "schema":
                    text, span = self.string(f, 'schema "A -> B, A |- B"')
                    schema = self.schema(text, span, f"infer {rid}'s schema")
                elif f.key == "doc":
                    doc = self.string(f, 'doc "..."')[0]
                else:
                    raise SpecError(f.span, f"unknown infer field {f.key!r}",
                                    did_you_mean(f.key, ("schema", "doc")).strip() or "Fields: schema, doc.")
            if schema is None:
                raise SpecError(g.span, f"infer {rid} has no schema", 'Add schema "A -> B, A |- B".')
            if not doc.strip():
                raise SpecError(g.span, f"infer {rid} has no manual entry", 'Add doc "..." (the manual text).')
            out[rid] = InferRule(rid, self.text(g.note) or rid, schema, doc)
        if not out:
            raise SpecError(self.spec.span, "a proof world needs inference rules",
                            'Add infer blocks: infer r1 "and introduction" { schema "A, B |- A & B" doc "..." }')
        return out

    def read_rules(self, infer):
        """The patches (rule blocks), the Rule records they give, and their declared exceptions
        (rule id -> the reason of its `allow "..."`)."""
        patches: dict[str, Schema] = {}
        rules = []
        allowed: dict[str, str] = {}
        for r in self.spec.rules:
            rid = self.rule_id(r.id, r.span)
            if r.override is not None or r.syntax is not None:
                raise SpecError((r.override or r.syntax).span, f"rule {rid} overrides an operator or a syntax "
                                "entry, but a proof world patches inference rules",
                                'Write schema "..." inside the rule instead.')
            if rid in patches:
                raise SpecError(r.span, f"rule {rid} is patched twice", "Each inference rule may be patched once.")
            if rid not in infer:
                raise SpecError(r.span, f"rule {rid} patches no inference rule (no infer {rid})",
                                did_you_mean(rid, infer).strip() or "A rule patches the infer block of the same id.")
            schema = None
            for f in r.fields:
                if f.key == "allow":
                    continue  # read once below
                if f.key != "schema":
                    raise SpecError(f.span, f"unknown rule field {f.key!r}", did_you_mean(f.key, RULE_FIELDS).strip()
                                    or "Fields: " + ", ".join(RULE_FIELDS) + ".")
                text, span = self.string(f, 'schema "..."')
                schema = self.schema(text, span, f"rule {rid}'s schema")
            if schema is None:
                raise SpecError(r.span, f"rule {rid} has no schema", 'Add schema "..." (the true rule).')
            if schema.canonical() == infer[rid].schema.canonical():
                raise SpecError(r.span, f"rule {rid} does not change infer {rid}",
                                "A patch must differ from the base schema (or its side conditions).")
            if not r.statement:
                raise SpecError(r.span, f"rule {rid} has no statement", 'Add statement "..." (the open-book text).')
            equation = schema.show(self.notation)
            if r.equation:
                try:
                    stated = parse_schema(self.text(r.equation), self.notation)
                except FormulaError as e:
                    raise SpecError(r.span, f"rule {rid}'s equation does not read: {e.message}",
                                    "The equation is the rule's schema; it may be left out.") from None
                if stated.canonical() != schema.canonical():
                    raise SpecError(r.span, f"rule {rid}'s equation is not its schema",
                                    "Leave the equation out: it is the schema.")
                equation = self.text(r.equation)
            patches[rid] = schema
            reason = allow_reason(r.fields, f"rule {rid}")
            if reason:
                allowed[rid] = self.text(reason)
            rules.append(Rule(id=rid, title=self.text(r.title), target=f"rule {rid}", herring=False,
                              statement=self.text(r.statement), equation=equation))
        return patches, tuple(rules), allowed

    def read_herrings(self, infer, patches) -> tuple[Rule, ...]:
        """The herrings: base rules that behave as documented."""
        out, seen = [], set()
        for h in self.spec.herrings:
            hid, target = self.rule_id(h.id, h.span), self.rule_id(h.target, h.span)
            if hid in seen or hid in patches:
                raise SpecError(h.span, f"id {hid} is used twice", "Herring and rule ids must be unique.")
            seen.add(hid)
            if target not in infer:
                raise SpecError(h.span, f"herring {hid} names {target}, which no infer block declares",
                                did_you_mean(target, infer).strip() or "A herring names a base rule.")
            if target in patches:
                raise SpecError(h.span, f"herring {hid} names {target}, but rule {target} patches it",
                                "A herring must behave exactly as documented.")
            out.append(Rule(id=hid, title=self.text(h.note), target=f"rule {target}", herring=True,
                            statement=self.text(h.note), equation=""))
        return tuple(out)

    def read_bounds(self, blocks) -> dict[str, search.Bounds]:
        """The named bounds blocks of the unprovability certifier."""
        out = {}
        for g in blocks:
            if not g.name:
                raise SpecError(g.span, "write: bounds NAME { size 6 depth 2 lines 20 nodes 200000 }", "")
            if g.name in out:
                raise SpecError(g.span, f"bounds {g.name} is declared twice", "")
            values = {}
            for f in g.fields:
                if f.key not in BOUND_KEYS:
                    raise SpecError(f.span, f"unknown bound {f.key!r}", did_you_mean(f.key, BOUND_KEYS).strip()
                                    or "Bounds: " + ", ".join(BOUND_KEYS) + ".")
                values[f.key] = self.int_field(f, "bounds are non-negative integers")
            b = search.Bounds(**values)
            if b.size < 1 or b.nodes < 1:
                raise SpecError(g.span, f"bounds {g.name}: size and nodes must be positive", "")
            out[g.name] = b
        return out

    def read_budget(self) -> Budget:
        """One unit per proof checked."""
        return read_budget(self.spec, (("proof", 1),), units_per_call=1)

    # ---------------------------------------------------------- examples and tasks

    def proof_field(self, fields):
        """The proof text of an example's fields, and its span."""
        for f in fields:
            if f.key in ("proof", "program"):
                return self.string(f, 'proof """..."""')
        return None, None

    def check_proof(self, world: ProofWorld, text: str, span: ast.Span, what: str,
                    base: bool = False) -> checker.Result:
        """The checker's result on a proof of the spec; a located SpecError when it fails."""
        w = world.base_world() if base else world
        result = w.check(text)
        if not result.accepted:
            loc = _proof_line_span(span, text, result.line, result.col) if result.line else span
            system = "the manual's rules" if base else "the true rules"
            raise SpecError(loc, f"{what} is not accepted under {system}: {w.verdict_text(result)}",
                            "Fix the proof; `worldspec probe` checks one against the true rules.")
        return result

    def example(self, world: ProofWorld, e: ast.ExampleDecl) -> Example:
        """A worked example with the checker's verdict."""
        for f in e.fields:
            if f.key not in ("proof", "program"):
                raise SpecError(f.span, f"unknown example field {f.key!r}", 'An example holds proof """...""".')
        text, span = self.proof_field(e.fields)
        if text is None:
            text, span = (self.text(e.program), e.span) if e.program else (None, None)
        if not text:
            raise SpecError(e.span, f"example {e.id} has no proof", 'Add proof """...""".')
        self.check_proof(world, text, span, f"example {e.id}'s proof")
        band = dict(e.labels).get("band", "")
        return Example(e.id, band, self.text(e.prompt), text.rstrip(), world.probe(text).text)

    def read_tasks(self, world: ProofWorld) -> dict[str, ProofTask]:
        """Task id -> grading data; every reference and naive proof is checked."""
        out: dict[str, ProofTask] = {}
        for t in self.spec.tasks:
            if t.id in out:
                raise SpecError(t.span, f"task id {t.id} is used twice", "Task ids must be unique.")
            labels = dict(t.labels)
            if "band" not in labels:
                raise SpecError(t.span, f"task {t.id} has no band", "Write: task ID band BAND { ... }")
            for key, value in (("input", t.inputs), ("case", t.cases), ("expect", t.expect),
                               ("function", t.function), ("predict", t.predict), ("program", t.program),
                               ("tolerance", t.tolerance)):
                if value:
                    raise SpecError(t.field_span(key), f"task {t.id}: {key} belongs to program worlds",
                                    "A proof task has premises, goal, solution, naive, unprovable.")
            premises, goal, unprovable, goal_span = [], None, None, t.span
            for f in t.extra:
                if f.key in ("premises", "premise"):
                    for text, span in self.strings(f, 'premises "P -> Q", "P"'):
                        premises.append(self.formula(text, span, f"task {t.id}'s premise"))
                elif f.key == "goal":
                    text, goal_span = self.string(f, 'goal "Q"')
                    goal = self.formula(text, goal_span, f"task {t.id}'s goal")
                elif f.key == "unprovable":
                    name = self.value(f, "unprovable NAME (a bounds block)")
                    if not isinstance(name, str):
                        raise SpecError(f.span, "unprovable names a bounds block", "For example: unprovable small")
                    if name not in self.bounds:
                        raise SpecError(f.span, f"there is no bounds block {name!r}",
                                        did_you_mean(name, self.bounds).strip() or
                                        "Declare one: bounds small { size 6 depth 2 lines 20 nodes 200000 }")
                    unprovable = name
                elif f.key == "allow":
                    continue  # read once below
                else:
                    raise SpecError(f.span, f"unknown task field {f.key!r}", did_you_mean(f.key, TASK_FIELDS).strip()
                                    or "Task fields: " + ", ".join(TASK_FIELDS) + ".")
            if goal is None:
                raise SpecError(t.span, f"task {t.id} has no goal", 'Add goal "..." (the formula to prove).')
            if labels.get("set") in ("provable", "unprovable") and (labels["set"] == "unprovable") != bool(unprovable):
                raise SpecError(t.span, f"task {t.id} is labelled set {labels['set']}, but its goal is "
                                f"{'designated' if unprovable else 'not designated'} unprovable",
                                "The set label must agree with the unprovable field: runners group tasks by it.")
            seq = sequent(premises, goal, self.notation)
            solutions = tuple(self.text(s) for s in t.solutions)
            naive = self.text(t.naive)
            if unprovable:
                for text, span in zip(solutions, _solution_spans(t)):
                    if not world.is_decline(text):
                        raise SpecError(span, f"task {t.id} is unprovable; its solution is the decline form "
                                        f"{self.decline}", "Leave the solution out.")
                solutions = (self.decline,)
                # what a manual-trusting answer says when the manual's rules cannot prove the goal
                # either; certification checks that they cannot (else the naive answer is their proof)
                naive = naive or self.decline
            elif not solutions or not solutions[0].strip():
                raise SpecError(t.span, f"task {t.id} has no reference proof", 'Add solution """...""".')
            prompt = self.text(t.prompt).strip()
            given = ", ".join(F.show(p, self.notation) for p in premises) or "none"
            full = (f"Prove {seq}\n\n" + (f"{prompt}\n\n" if prompt else "") +
                    f"Premises: {given}\nGoal: {F.show(goal, self.notation)}\n\n"
                    f"Answer with a complete proof in the proof format of the manual (premises first, "
                    f"justified `{self.words['premise']}`; the goal as the last line, outside every "
                    f"subproof). If the goal cannot be proved in this system, answer exactly "
                    f"{self.decline} instead.")
            bounds = self.bounds[unprovable] if unprovable else self.bounds.get("default", search.Bounds())
            task = Task(id=t.id, band=labels["band"], prompt=full, shape="proof",
                        labels=tuple(sorted(labels.items())), solution=solutions[0], naive=naive)
            out[t.id] = ProofTask(task=task, premises=tuple(premises), goal=goal, unprovable=bool(unprovable),
                                  bounds=bounds, bounds_name=unprovable or "", solutions=solutions,
                                  allow=self.text(allow_reason(t.extra, f"task {t.id}")))
        partial = attrs.evolve(world, task_data=out)
        for t in self.spec.tasks:
            data = out[t.id]
            if not data.unprovable:
                several = len(data.solutions) > 1
                for n, (text, span) in enumerate(zip(data.solutions, _solution_spans(t)), start=1):
                    self.check_task_proof(partial, t, data, text, f"solution {n}" if several else "solution", span)
            if data.task.naive and not partial.is_decline(data.task.naive):
                self.check_task_proof(partial, t, data, data.task.naive, "naive", t.field_span("naive"), base=True)
        return out

    def check_task_proof(self, world, t, data: ProofTask, text: str, field: str, span, base: bool = False) -> None:
        """A task's proof is accepted and proves the task's goal from its premises."""
        span = _string_span(t, field.split()[0], span)
        result = self.check_proof(world, text, span, f"task {t.id}'s {field}", base=base)
        extra = [p for p in result.premises if p not in data.premises]
        if extra:
            raise SpecError(span, f"task {t.id}'s {field} uses the premise {F.show(extra[0], self.notation)}, "
                            f"which the task does not give", "Premise lines must be among the task's premises.")
        if result.conclusion != data.goal:
            raise SpecError(span, f"task {t.id}'s {field} proves {F.show(result.conclusion, self.notation)}, "
                            f"not the goal {F.show(data.goal, self.notation)}", "End the proof with the goal.")


# ---------------------------------------------------------------- spans inside strings


def _solution_spans(t: ast.TaskDecl) -> list[ast.Span]:
    """The span of each `solution` line of a task, in order."""
    return [span for key, span in t.field_spans if key == "solution"] or [t.span] * len(t.solutions)


def _string_span(t: ast.TaskDecl, field: str, span: ast.Span) -> ast.Span:
    """The span of a task field's string (the field keyword's span points at the keyword)."""
    line = source_line(span.file, span.line)
    if line:
        at = line.find('"', max(span.col - 1, 0))
        if at >= 0:
            return ast.Span(span.file, span.line, at + 1)
    return span


def _inside(span: ast.Span, text: str, offset: int) -> ast.Span:
    """A position inside a one-line string literal: its opening quote plus the offset."""
    if "\n" in text[:offset]:
        return span
    line = source_line(span.file, span.line)
    quote = 3 if line[span.col - 1:span.col + 2] == '"""' else 1
    return ast.Span(span.file, span.line, span.col + quote + offset)


def _proof_line_span(span: ast.Span, text: str, n: int, col: int) -> ast.Span:
    """The source position of proof line n (1-based, blank lines skipped) inside a string literal."""
    if not span.line:
        return span
    raws = proofs.clean(text)
    if not 0 < n <= len(raws):
        return span
    target = raws[n - 1].strip()
    for k in range(span.line, span.line + 400):
        line = source_line(span.file, k)
        if not line and k > span.line + len(text.splitlines()) + 2:
            break
        at = line.find(target)
        if at >= 0:
            inner = raws[n - 1]
            lead = len(inner) - len(inner.lstrip())
            return ast.Span(span.file, k, at + 1 + max(col - lead, 0))
    return span


KIND = Kind("proof", compile_spec, "a natural-deduction system whose rules are patched: probes are proofs",
            faces=(MilestoneFace,))
