"""`kind blackbox`: a hidden function f over typed inputs, an input predicate, and test samples.

Spec items (docs/oracle-worlds.md has the reference):

    family CII                              # CII CRI PSI ERI IPI (GSI boxes are `kind game`)
    difficulty easy                         # easy | hard
    domain xs, list(int(-9, 9), 1, 8)       # one line per input, in order
    hidden fold(fn(a, x) => a + x, 0, xs)   # f, over the input names (and `target`)
    predicate len(xs) <= 6, "at most 6 elements"   # rejected inputs cost no turn
    test [3, 1, 4]                          # a test sample; its answer is f's output, computed
    goal SECRET, "the hidden code"          # interactive puzzles: the test asks for the target
    within 0.01                             # numbers within 1% (of max(1, |want|)) count as equal
    hypothesis sort(xs), "sorting"          # a simple hypothesis the tests must refute (hard boxes)
    budget { turns 10 shots 1 }

Where the box has a plausible but wrong description, `base { op f(...) = ... "doc" }`
gives the documented behaviour (printed in the manual) and `rule` blocks the true
one, exactly as in program worlds; `hidden` may then call the ops by name (or is
the single op applied to the inputs).
"""
from __future__ import annotations

import difflib
import random
from typing import Iterator

import attrs

from worldspec import ast
from worldspec.compiler.api import (Kind, CaseResult, Feedback, InputError, Rule, ScoredVerdict, Task, ToolSpec,
                                    WorldHeader, by_id, capped)
from worldspec.compiler.blackbox.domains import (BOX_BUDGET_KEYS, BoxBudget, Domain, domain_of, format_input,
                                                 matches, parse_input, render)
from worldspec.compiler.common import check_definitions, draw_params, interpolate
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import MetaCompiler, Unit
from worldspec.values import Ctx, EvalError, LimitError, same

ITEMS = ("family", "difficulty", "domain", "hidden", "predicate", "test", "goal", "within", "hypothesis")
DIFFICULTIES = ("easy", "hard")
ADMIT_DRAWS = 300
MIN_ADMITTED = 10
_NO_GOAL = object()


def word(e: ast.Expr, what: str) -> str:
    """A bare word or a string (`family CII`, `difficulty "hard"`)."""
    if isinstance(e, ast.Var):
        return e.name
    if isinstance(e, ast.Const) and type(e.value) is str:
        return e.value
    raise SpecError(e.span, f"{what} must be a word or a string", f"For example: {what} easy")


def note(args, i: int, what: str) -> str:
    if len(args) <= i:
        return ""
    a = args[i]
    if isinstance(a, ast.Const) and type(a.value) is str:
        return a.value
    raise SpecError(a.span, f"the {what} must be a string", 'Write it in double quotes: "..."')


def group_items(spec: ast.Spec, allowed: tuple[str, ...], blocks: tuple[str, ...] = ()) -> dict:
    """Generic items by key; unknown keys and misplaced blocks are located errors."""
    out: dict[str, list] = {k: [] for k in allowed + blocks}
    for g in spec.generic:
        if g.key not in out:
            raise SpecError(g.span, f"unknown item {g.key!r} in a {spec.kind} world",
                            did_you_mean(g.key, allowed + blocks).strip()
                            or "Items: " + ", ".join(allowed + blocks) + ".")
        if g.name and g.key not in blocks:
            raise SpecError(g.span, f"{g.key} is a one-line item, not a block",
                            f"Write: {g.key} VALUE")
        if not g.name and g.key in blocks:
            raise SpecError(g.span, f"{g.key} is a block: {g.key} NAME \"title\" {{ ... }}", "")
        out[g.key].append(g)
    return out


def one(items: dict, key: str, spec: ast.Spec, required: bool = True):
    found = items.get(key, [])
    if len(found) > 1:
        raise SpecError(found[1].span, f"{key} is declared twice", f"Keep one {key} line.")
    if not found:
        if required:
            raise SpecError(spec.span, f"this {spec.kind} world has no {key} line", _REQUIRED_HINT.get(key, ""))
        return None
    return found[0]


_REQUIRED_HINT = {
    "family": "Add: family CII (or CRI, PSI, ERI, IPI, GSI).",
    "difficulty": "Add: difficulty easy (or hard).",
}


def reject_program_sections(spec: ast.Spec) -> None:
    if spec.syntax:
        raise SpecError(spec.syntax[0].span, f"a {spec.kind} world has no syntax block",
                        "Only program worlds spell a program language.")
    for e in spec.examples:
        raise SpecError(e.span, f"a {spec.kind} world has no worked-example programs",
                        "Tests and probes are inputs, not programs.")
    for t in spec.tasks:
        raise SpecError(t.span, f"a {spec.kind} world has no task blocks",
                        "Its test samples are `test` lines.")
    if spec.unit_costs:
        raise SpecError(spec.span, f"a {spec.kind} world charges no probe units", "Remove unit_cost entries.")


def box_budget(spec: ast.Spec) -> BoxBudget:
    values = {}
    for key, v in spec.budget:
        if key not in BOX_BUDGET_KEYS:
            raise SpecError(spec.span, f"unknown budget entry {key!r} for a {spec.kind} world",
                            did_you_mean(key, BOX_BUDGET_KEYS).strip()
                            or "Entries: " + ", ".join(BOX_BUDGET_KEYS) + ".")
        if v < 1:
            raise SpecError(spec.span, f"budget {key} must be at least 1", "")
        values[key] = v
    return BoxBudget(**values)


# ---------------------------------------------------------------- the world


@attrs.frozen
class TestCase:
    id: str
    values: tuple  # input values ((), for a goal test)
    expected: object
    line: int


def call_unit(unit: Unit, args: list, max_steps: int = 200_000):
    try:
        return unit(Ctx(max_steps), list(args))
    except RecursionError:
        raise LimitError("the function nests too deeply") from None
    except (MemoryError, OverflowError):
        raise LimitError("a value grew too large") from None


@attrs.frozen(eq=False)
class BlackBoxWorld(WorldHeader):
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
        return self.goal is not _NO_GOAL

    def _args(self, values, target=_NO_GOAL) -> list:
        args = list(values)
        if self.has_goal:
            args.append(self.goal if target is _NO_GOAL else target)
        return args

    def evaluate(self, values, unit: Unit | None = None, target=_NO_GOAL):
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

    def read(self, text) -> list:
        """Parse one input text and check it; raises InputError with the reason."""
        values = parse_input(self.inputs, text)
        why = self.admits(values)
        if why:
            raise InputError(why)
        return values

    def format(self, values) -> str:
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
        target = list(self.test_case(task).values)
        best, best_d = None, None
        for text in observed:
            try:
                values = self.read(text)
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
            values = self.read(text)
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
        return Feedback(text_out, 1, status, truncated)

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
        return ToolSpec("query_box", f"Send one input to the black box {self.name} and read its output.",
                        "input", "One input, written as the manual shows.")

    # ------------------------------------------------------------ grading

    def task(self, task) -> Task:
        return by_id(self.tasks, task, self.name)

    def test_case(self, task) -> TestCase:
        return by_id(self.tests, task, self.name)

    def verify(self, task, answer) -> ScoredVerdict:
        case = self.test_case(task)
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
        case = self.test_case(task)
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
        lines = [f"The complete list of ways {self.name} differs from its description:"]
        lines += [f"- {r.id} ({r.title}): {r.statement}" for r in self.rules]
        return "\n".join(lines)

    # ------------------------------------------------------------ certification

    def certify(self, progress=None) -> dict:
        from worldspec.compiler.blackbox.certify import certify_box
        return certify_box(self, progress)


# ---------------------------------------------------------------- compiling


def _compile_definitions(mc: MetaCompiler, spec: ast.Spec, applied: frozenset) -> None:
    overrides = {r.override.name: r for r in spec.rules if r.override is not None and r.id in applied}
    for d in spec.base:
        r = overrides.get(d.name)
        body = r.override.body if r is not None else d.body
        mc.defs[d.name] = mc.unit(d.name, [p.name for p in d.params], body)


def _check_base(spec: ast.Spec, reserved: set) -> None:
    seen = {}
    for d in spec.base:
        if d.kind != "op":
            raise SpecError(d.span, f"a {spec.kind} world's base lists operations (op), not hooks",
                            "Hooks belong to program worlds.")
        if d.name in seen:
            raise SpecError(d.span, f"op {d.name} is defined twice in base", "Keep one line per op.")
        if d.name in reserved:
            raise SpecError(d.span, f"op {d.name} has the name of an input, param or def", "Rename it.")
        if any(p.variadic for p in d.params):
            raise SpecError(d.span, f"op {d.name}: variadic parameters are for program worlds", "")
        if not d.doc.strip():
            raise SpecError(d.span, f"op {d.name} has no description", 'End the line with its doc, "..."')
        seen[d.name] = d
    for r in spec.rules:
        for f in r.fields:
            raise SpecError(f.span, f"unknown rule field {f.key!r}", "Rule fields: statement, equation.")
        if r.override is None:
            raise SpecError(r.span, f"rule {r.id} overrides nothing",
                            "Start the rule with the base line it replaces: op NAME(...) = ...")
    check_definitions(spec, require_equation=False)


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


def compile_spec(spec: ast.Spec, seed: int | None = None) -> BlackBoxWorld:
    seed = spec.seed if seed is None else seed
    reject_program_sections(spec)
    items = group_items(spec, ITEMS)
    params = draw_params(spec, seed)
    mc = MetaCompiler(params)
    for d in spec.defs:
        if d.name in mc.defs or d.name in params:
            raise SpecError(d.span, f"{d.name} is defined twice", "Give each def a unique name.")
        mc.add_def(d)

    def constant(e):
        try:
            return mc.constant(e)
        except EvalError as err:
            raise SpecError(e.span, f"this value cannot be computed: {err.message}", "") from None

    family = word(one(items, "family", spec).args[0], "family")
    dg = one(items, "difficulty", spec)
    difficulty = word(dg.args[0], "difficulty")
    if difficulty not in DIFFICULTIES:
        raise SpecError(dg.args[0].span, f"unknown difficulty {difficulty!r}", "Write easy or hard.")

    inputs: list[tuple[str, Domain]] = []
    for g in items["domain"]:
        if len(g.args) != 2 or not isinstance(g.args[0], ast.Var):
            raise SpecError(g.span, "a domain line is: domain NAME, DOMAIN",
                            "For example: domain xs, list(int(-9, 9), 1, 8)")
        name = g.args[0].name
        if name in params or name in mc.defs or name == "target" or any(n == name for n, _ in inputs):
            raise SpecError(g.args[0].span, f"input {name} clashes with another name",
                            "Inputs, params and defs need distinct names; `target` is reserved for goal boxes.")
        inputs.append((name, domain_of(g.args[1], constant)))
    if not inputs:
        raise SpecError(spec.span, "this box declares no input", "Add: domain x, int(0, 99)")
    names = [n for n, _ in inputs]
    _check_base(spec, set(names) | set(params) | set(mc.defs))

    gg = one(items, "goal", spec, required=False)
    goal, goal_note = _NO_GOAL, ""
    if gg is not None:
        if not gg.args:
            raise SpecError(gg.span, "goal needs the target value", 'goal SECRET, "the hidden code"')
        if len(inputs) != 1:
            raise SpecError(gg.span, "a goal box takes exactly one input (a guess at the target)", "")
        goal = constant(gg.args[0])
        goal_note = note(gg.args, 1, "goal's description") or "the hidden target"
    unit_params = names + (["target"] if gg is not None else [])

    hg = one(items, "hidden", spec, required=False)
    ops = [d for d in spec.base if d.kind == "op"]
    if hg is None:
        if len(ops) != 1:
            raise SpecError(spec.span, "this box has no hidden function",
                            "Add: hidden EXPR over the inputs, or a base block with exactly one op.")
        if len(ops[0].params) != len(unit_params):
            raise SpecError(ops[0].span, f"op {ops[0].name} takes {len(ops[0].params)} parameter(s) but the "
                            f"box has {len(unit_params)} input(s)", "Add a hidden line that calls it.")
        hidden_expr = ast.Call(ast.Var(ops[0].name, span=ops[0].span),
                               tuple(ast.Var(n, span=ops[0].span) for n in unit_params), span=ops[0].span)
    else:
        if len(hg.args) != 1:
            raise SpecError(hg.span, "hidden takes one expression over the input names", "")
        hidden_expr = hg.args[0]

    cache: dict = {}

    def variant(applied: frozenset) -> Unit:
        applied = frozenset(applied)
        if applied not in cache:
            m = MetaCompiler(params, dict(mc.defs))
            _compile_definitions(m, spec, applied)
            cache[applied] = m.unit("hidden", unit_params, hidden_expr)
        return cache[applied]

    all_rules = frozenset(r.id for r in spec.rules)
    hidden = variant(all_rules)
    variant(frozenset())  # compile the documented version too, so errors point at the spec now
    tmc = MetaCompiler(params, dict(mc.defs))
    _compile_definitions(tmc, spec, all_rules)

    predicates = []
    for g in items["predicate"]:
        if not 1 <= len(g.args) <= 2:
            raise SpecError(g.span, "a predicate line is: predicate EXPR, \"reason\"", "")
        reason = note(g.args, 1, "predicate's reason") or "the input is not admitted"
        predicates.append((tmc.unit("predicate", names, g.args[0]), reason))

    tol = one(items, "within", spec, required=False)
    tolerance = 0.0
    if tol is not None:
        tolerance = constant(tol.args[0])
        if type(tolerance) not in (int, float) or tolerance < 0:
            raise SpecError(tol.span, "within takes a non-negative number", "For example: within 0.01")
        tolerance = float(tolerance)

    hypotheses = []
    for i, g in enumerate(items["hypothesis"], 1):
        if not 1 <= len(g.args) <= 2:
            raise SpecError(g.span, "a hypothesis line is: hypothesis EXPR, \"name\"", "")
        hypotheses.append((note(g.args, 1, "hypothesis's name") or f"hypothesis {i}",
                           tmc.unit(f"hypothesis{i}", unit_params, g.args[0])))

    tests: list[TestCase] = []
    if gg is not None:
        if items["test"]:
            raise SpecError(items["test"][0].span, "a goal box is tested on its target, not on test lines",
                            "Remove the test lines (or the goal).")
        tests.append(TestCase("goal", (), goal, gg.span.line))
    for i, g in enumerate(items["test"], 1):
        if len(g.args) != len(names):
            raise SpecError(g.span, f"this test gives {len(g.args)} value(s) for {len(names)} input(s) "
                            f"({', '.join(names)})", "Give one value per input, in order.")
        values = tuple(inputs[k][1].coerce(constant(a)) for k, a in enumerate(g.args))
        try:
            want = call_unit(hidden, list(values))
        except EvalError as err:
            raise SpecError(g.span, f"the hidden function fails on this test: {err.message}",
                            "Every test's answer is computed by f.") from None
        tests.append(TestCase(f"t{i}", values, want, g.span.line))
    if not tests:
        raise SpecError(spec.span, "this box has no test sample", "Add test lines (or a goal for a puzzle).")

    budget = box_budget(spec)
    rules = tuple(Rule(r.id, interpolate(r.title, params), f"op {r.override.name}", False,
                       interpolate(r.statement, params), interpolate(r.equation, params),
                       tuple(p.name for p in r.override.params)) for r in spec.rules)
    herrings = tuple(Rule(h.id, h.note, f"op {h.target}", True, h.note, "", ()) for h in spec.herrings)
    base_unit = variant(frozenset())
    summary = interpolate(spec.summary, params)
    proto = BlackBoxWorld(spec.name, spec.version, spec.kind, seed, spec.seed, summary, tuple(params.items()),
                          "", (), (), rules, herrings, budget, family, difficulty, tuple(inputs), goal_note,
                          tolerance, spec.file, hidden, variant, tuple(predicates), goal, tuple(tests),
                          tuple(hypotheses))
    tasks = []
    for c in tests:
        naive = ""
        if rules and not proto.has_goal:
            try:
                naive = render(proto.evaluate(c.values, base_unit))
            except EvalError:
                naive = ""
        if proto.has_goal:
            prompt = (f"What is {goal_note}? Reply with it only, written as an input "
                      f"({inputs[0][1].describe()}), in a fenced code block.")
            solution = proto.format([goal])
        else:
            prompt = (f"What does the box output for the input {proto.format(c.values)}? Reply with the "
                      "output only, written the way the box writes its outputs, in a fenced code block.")
            solution = render(c.expected)
        tasks.append(Task(c.id, family, prompt, "target" if proto.has_goal else "output",
                          (("difficulty", difficulty), ("family", family)), solution, naive))
    manual = render_box_manual(spec, proto, params)
    return attrs.evolve(proto, tasks=tuple(tasks), manual=manual)


def render_box_manual(spec: ast.Spec, w: BlackBoxWorld, params: dict) -> str:
    out = [f"# {spec.name}", ""]
    if w.summary:
        out += [w.summary, ""]
    if spec.manual:
        out += [interpolate(spec.manual, params).strip(), ""]
    out += ["## The box", ""]
    if w.has_goal:
        out.append(f"The box hides {w.goal_note}. Each input is a guess; the box answers with feedback on "
                   "that guess.")
    else:
        out.append("The box computes a hidden function f of its input(s).")
    out += ["", "Inputs:"]
    for name, d in w.inputs:
        out.append(f"- `{name}`: {d.describe()}.")
    if w.predicates:
        out += ["", "Constraints (an input that breaks one is rejected with the reason, and costs no turn):"]
        out += [f"- {reason}" for _, reason in w.predicates]
    sample = w.sample_inputs(random.Random(f"manual:{w.name}"), 1)
    if sample:
        shape = "separated by commas, " if len(w.inputs) > 1 else ""
        out += ["", f"Write one input per turn, {shape}like: `{w.format(sample[0])}`"]
    ops = [d for d in spec.base if d.kind == "op"]
    if ops:
        out += ["", "## What the documentation says", ""]
        for d in ops:
            out.append(f"- `{d.name}({', '.join(p.name for p in d.params)})`: {interpolate(d.doc, params)}")
    b = w.budget
    tests = "the hidden target" if w.has_goal else f"{len(w.tests)} unseen input(s)"
    out += ["", "## Interaction", "",
            f"You have {b.turns} exploration turns: in each, send one input and read the box's output. "
            f"Then you are asked for {tests}, with {b.shots} attempt(s) each; after a wrong attempt you are "
            "told it is incorrect."]
    if w.tolerance:
        out.append(f"Numbers are accepted within {w.tolerance:g} relative tolerance.")
    return "\n".join(out).rstrip() + "\n"


KIND = Kind("blackbox", compile_spec, "a hidden function answered query by query; tests ask its outputs")
