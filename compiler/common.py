"""What every world kind shares: seeded params, interpolation, types, base/rule/herring checks,
budgets, feedback capping and the certification tables.

Kinds import this module (and compiler.api), never each other and never build.py.
"""
from __future__ import annotations

import collections
import random
import threading

from worldspec import ast
from worldspec.compiler.api import Budget, Feedback, language_of
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import MetaCompiler
from worldspec.values import EvalError, same

BUDGET_KEYS = {f.name for f in Budget.__attrs_attrs__} - {"unit_costs"}
# The largest value of each budget entry: more than any world needs, little enough that a run (and the
# plan --dry-run prints) stays finite. Every entry is at least 1.
BUDGET_CAPS = {"rounds": 100, "calls_per_round": 1000, "max_calls": 100_000, "units_per_call": 10_000,
               "feedback_lines": 1000, "feedback_chars": 100_000, "answers": 20, "shots": 20, "turns": 1000}
TYPES = ("int", "str", "bool", "list", "any", "fn", "float", "map")

# Python's own limits, reached only by runaway constants; reported like ours.
HOST_LIMITS = (RecursionError, OverflowError, MemoryError)


def draw_params(spec: ast.Spec, seed: int) -> dict:
    """Evaluate each param: its default at the declared seed, a fresh draw elsewhere."""
    mc = MetaCompiler()
    values: dict = {}
    for p in spec.params:
        if p.name in values:
            raise SpecError(p.span, f"param {p.name} is declared twice", "Give each param one line.")
        mc.constants = dict(values)
        try:
            args = [mc.constant(a) for a in p.args]
            default = mc.constant(p.default) if p.default is not None else None
        except (EvalError, *HOST_LIMITS) as e:
            raise SpecError(p.span, f"param {p.name} cannot be evaluated: {why(e)}",
                            "Params may use literals, builtins and earlier params.") from None
        if p.kind == "const":
            values[p.name] = args[0]
            continue
        if p.kind == "range":
            lo, hi = args
            if type(lo) is not int or type(hi) is not int or lo > hi:
                raise SpecError(p.span, f"pick({lo}..{hi}) is not an integer range",
                                "Write pick(LO..HI) with integers LO <= HI.")
            choices = list(range(lo, hi + 1))
        else:
            choices = args[0]
            if type(choices) is not list or not choices:
                raise SpecError(p.span, "pick([...]) needs a non-empty list", "For example pick([2, 3, 5]).")
        if default is not None and not any(same(default, c) for c in choices):
            raise SpecError(p.span, f"the default {default!r} of {p.name} is not among its choices",
                            "The declared seed must reproduce a value the pick can draw.")
        if seed == spec.seed and default is not None:
            values[p.name] = default
            continue
        pool = [c for c in choices if default is None or not same(c, default)] or choices
        values[p.name] = random.Random(f"worldspec:{seed}:{p.name}").choice(pool)
    return values


def why(e: Exception) -> str:
    """A one-line reason an evaluation failed."""
    if isinstance(e, EvalError):
        return e.message
    return {RecursionError: "it recurses too deeply", OverflowError: "a value is too large",
            MemoryError: "a value is too large"}.get(type(e), "it cannot be evaluated")


def interpolate(text: str, params: dict) -> str:
    """Replace {NAME} with a param's value (unknown braces are left alone)."""
    for k, v in params.items():
        text = text.replace("{" + k + "}", str(v))
    return text


def check_type(t: ast.Type, span: ast.Span) -> None:
    """Raise a located SpecError for an unknown type name."""
    if t.name not in TYPES:
        raise SpecError(span, f"unknown type {t.name!r}", did_you_mean(t.name, TYPES).strip()
                        or "Types are: " + ", ".join(TYPES) + ".")
    if t.arg is not None:
        check_type(t.arg, span)


def check_definitions(spec: ast.Spec, require_equation: bool = True, hooks: dict | None = None,
                      stacked: bool = False, syntax_rules: bool = False) -> None:
    """Base lines, rule overrides and herrings are consistent (any kind that uses them).

    `hooks` maps the hook names a kind offers to their parameter names (none by default);
    `stacked`: the kind layers several rules on one base line (else each line takes one rule);
    `syntax_rules`: a rule may replace a syntax entry instead (the kind checks the entry itself).
    """
    hooks = hooks or {}
    seen: dict[str, ast.Definition] = {}
    for d in spec.base:
        if d.target in seen:
            raise SpecError(d.span, f"{d.target} is defined twice in base", "Keep one line per operator.")
        seen[d.target] = d
        if d.kind == "hook":
            if d.name not in hooks:
                raise SpecError(d.span, f"unknown hook {d.name!r}", did_you_mean(d.name, hooks).strip()
                                or "Hooks are: " + ", ".join(hooks) + ".")
            want = len(hooks[d.name])
            if len(d.params) != want or any(p.variadic for p in d.params):
                raise SpecError(d.span, f"hook {d.name} takes {want} parameter(s) "
                                f"({', '.join(hooks[d.name])})", "Keep the hook's parameter list.")
        for p in d.params[:-1]:
            if p.variadic:
                raise SpecError(d.span, f"only the last parameter of {d.name} may be variadic", "")
        for p in d.params:
            check_type(p.type, d.span)
        check_type(d.returns, d.span)
        if not d.doc.strip():
            raise SpecError(d.span, f"{d.target} has no manual entry", 'End the line with its doc, "..."')
    ids: set[str] = set()
    overridden: dict[str, str] = {}
    for r in spec.rules:
        if r.id in ids:
            raise SpecError(r.span, f"rule id {r.id} is used twice", "Rule ids must be unique.")
        ids.add(r.id)
        if r.syntax is not None:
            if not syntax_rules:
                raise SpecError(r.syntax.span, f"rule {r.id} replaces a syntax entry, which only a program "
                                "world's rule may", "Start the rule with the base line it replaces: op NAME(...) = ...")
            if not r.statement:
                raise SpecError(r.span, f"rule {r.id} has no statement", 'Add statement "..." (the open-book text).')
            continue  # its entry is its equation: a report states the entry (the kind checks it)
        o = r.override
        if o.target not in seen:
            names = [t.split(" ", 1)[1] for t in seen if t.startswith(o.kind + " ")]
            raise SpecError(o.span, f"rule {r.id} overrides {o.kind} {o.name}, which base does not define.",
                            did_you_mean(o.name, names).strip() or "A rule overrides one base line.")
        b = seen[o.target]
        if [p.variadic for p in o.params] != [p.variadic for p in b.params] or len(o.params) != len(b.params):
            raise SpecError(o.span, f"rule {r.id} gives {o.name} {len(o.params)} parameter(s); base has "
                            f"{len(b.params)}", "An override keeps the base line's parameters.")
        if o.target in overridden and not stacked:
            raise SpecError(o.span, f"{o.target} is overridden by both {overridden[o.target]} and {r.id}",
                            "Each base line may be perturbed by one rule.")
        overridden.setdefault(o.target, r.id)
        if not r.statement:
            raise SpecError(r.span, f"rule {r.id} has no statement", 'Add statement "..." (the open-book text).')
        if require_equation and not r.equation:
            raise SpecError(r.span, f"rule {r.id} has no equation",
                            'Add equation "(...)" in the equation notation (docs/language.md).')
    for h in spec.herrings:
        if h.id in ids:
            raise SpecError(h.span, f"id {h.id} is used twice", "Rule and herring ids must be unique.")
        ids.add(h.id)
        targets = {t.split(" ", 1)[1]: t for t in seen}
        if h.target not in targets:
            raise SpecError(h.span, f"herring {h.id} names {h.target}, which base does not define.",
                            did_you_mean(h.target, targets).strip() or "A herring names a base operator.")
        if targets[h.target] in overridden:
            raise SpecError(h.span, f"herring {h.id} names {h.target}, but rule "
                            f"{overridden[targets[h.target]]} changes it",
                            "A herring must behave exactly as documented.")


def check_budget_entry(key: str, value: int, span) -> None:
    """A budget entry within 1..BUDGET_CAPS[key], or a located error saying the range."""
    cap = BUDGET_CAPS.get(key)
    if cap is not None and not 1 <= value <= cap:
        raise SpecError(span, f"budget {key} is {value:,}; it must be between 1 and {cap:,}",
                        "A budget bounds one run: every session, milestone and answer it plans is made.")


def read_budget(spec: ast.Spec, unit_costs: tuple, **defaults) -> Budget:
    """The spec's budget block over a kind's defaults; max_calls defaults to rounds x calls_per_round."""
    values = dict(defaults)
    spans = dict(spec.budget_spans)
    for key, v in spec.budget:
        if key not in BUDGET_KEYS:
            raise SpecError(spans.get(key, spec.span), f"unknown budget entry {key!r}",
                            did_you_mean(key, BUDGET_KEYS).strip()
                            or "Entries: " + ", ".join(sorted(BUDGET_KEYS)) + ".")
        check_budget_entry(key, v, spans.get(key, spec.span))
        values[key] = v
    if "max_calls" not in values:
        plain = Budget()
        values["max_calls"] = values.get("rounds", plain.rounds) * values.get("calls_per_round",
                                                                              plain.calls_per_round)
    return Budget(**values, unit_costs=unit_costs)


def capped_feedback(text: str, units: int, status: str, budget: Budget, last: str = "") -> Feedback:
    """Feedback cut to the budget's lines and characters; a last (error) line always survives."""
    lines_cap, chars_cap = budget.feedback_lines, budget.feedback_chars
    full = text + ("\n" + last if last and text else last)
    if full.count("\n") < lines_cap and len(full) <= chars_cap:
        return Feedback(full, units, status)
    tail = ["[feedback truncated]"] + ([last[:chars_cap // 2]] if last else [])
    room_lines = max(lines_cap - len(tail), 0)
    room_chars = max(chars_cap - sum(len(t) + 1 for t in tail), 0)
    kept = "\n".join(text.split("\n")[:room_lines])[:room_chars]
    out = "\n".join(([kept] if kept else []) + tail)
    return Feedback(out, units, status, truncated=True)


def id_order(rule_id: str):
    """Sort key for rule ids: r2 before r11."""
    digits = "".join(ch for ch in rule_id if ch.isdigit())
    return (rule_id.rstrip("0123456789"), int(digits) if digits else 0, rule_id)


TEXT_FIELD_HINTS = {
    "witness": 'Write witness """PROGRAM""": a probe, in the world\'s syntax, that shows the rule.',
    "allow": 'Write allow "REASON": why this certification exception is intended.',
}


def field_text(f: ast.Field) -> str:
    """The one non-empty string a text field holds (`allow "..."`, `witness \"\"\"...\"\"\"`)."""
    arg = f.args[0] if len(f.args) == 1 else None
    if not (isinstance(arg, ast.Const) and isinstance(arg.value, str) and arg.value.strip()):
        raise SpecError(f.span, f"{f.key} takes one non-empty string", TEXT_FIELD_HINTS[f.key])
    return arg.value


def allow_reason(fields, owner: str) -> str:
    """The reason of an item's declared exception (`allow "..."`), or "" when it declares none."""
    allows = [f for f in fields if f.key == "allow"]
    if len(allows) > 1:
        raise SpecError(allows[1].span, f"{owner} declares allow twice", "Give one allow line with the reason.")
    return field_text(allows[0]) if allows else ""


# ---------------------------------------------------------------- certification tables


def naive_solved(true) -> list[str]:
    """Ids of the tasks whose naive (manual-trusting) answer passes in the true world."""
    return [t.id for t in true.tasks if t.naive and true.verify(t, t.naive).passed]


def recall_only_score(true) -> float:
    """Percent of tasks whose naive (manual-trusting) answer passes in the true world."""
    return round(100.0 * len(naive_solved(true)) / len(true.tasks), 1) if true.tasks else 0.0


def honest_floors(true, requires: dict, allowed_rules: dict, allowed_tasks: dict, problems: list,
                  notes: list, language: int = 3) -> None:
    """Rules required by exactly one task and tasks a naive answer solves are problems, unless the
    world declares them (id -> reason, `allow "..."`): then they are notes, as are declarations
    that no longer excuse anything.

    Two tasks per rule is strictness a world written before it may not meet: in a world of an older
    `language` than 3 an undeclared one-task rule is a warning note, not a problem (issue 24)."""
    for r in true.rules:
        used_by = [tid for tid, req in requires.items() if r.id in req]
        fault = f"rule {r.id} ({r.title}) is required by one task only ({used_by[0]})" if len(used_by) == 1 else ""
        fix = "add a second task that needs it, or declare the exception in the rule"
        if fault and language < 3 and not allowed_rules.get(r.id, ""):
            notes.append(f'warning: {fault}: {fix}: allow "REASON" (language {language} accepts it; '
                         "language 3 makes it a problem)")
            continue
        judge(fault, allowed_rules.get(r.id, ""), fix,
              f"rule {r.id} declares an exception it does not need (required by {len(used_by)} tasks)"
              if len(used_by) > 1 else "", problems, notes)
    solved = set(naive_solved(true))
    for t in true.tasks:
        judge(f"task {t.id}: its naive (manual-trusting) answer passes in the true world" if t.id in solved else "",
              allowed_tasks.get(t.id, ""),
              "make the task need a rule the naive answer misses, or declare the exception in the task",
              f"task {t.id} declares an exception it does not need (its naive answer fails in the true world)",
              problems, notes)


def judge(fault: str, reason: str, fix: str, stale: str, problems: list, notes: list) -> None:
    """One declarable check: a fault is a problem unless a reason declares it (then a note); a
    reason with no fault to excuse is noted when `stale` says why."""
    if fault and reason:
        notes.append(f"declared exception: {fault}: {reason}")
    elif fault:
        problems.append(f'{fault}: {fix}: allow "REASON"')
    elif reason and stale:
        notes.append(f"{stale}: {reason}")


def rule_tables(world, requires: dict, find_witness, herring_unchanged, problems: list, say, *,
                unobservable, answers: str, mismatch=None) -> tuple[list, list]:
    """Observability, coverage and equation of every rule; herrings unchanged (any kind).

    `unobservable` is why a rule without a witness is not observable: a text, or a function
    of the rule id; `mismatch(rule_id, equation)`, where a kind can say it, is where a rule's own
    equation parts from the rule (an input on which they differ).
    """
    true = world.true_world()
    rules = []
    for r in true.rules:
        say(f"searching a witness for {r.id}")
        witness = find_witness(world, r.id)
        used_by = [tid for tid, req in requires.items() if r.id in req]
        if witness is None:
            why = unobservable(r.id) if callable(unobservable) else unobservable
            problems.append(f"rule {r.id} ({r.title}) is not observable: {why}")
        if not used_by:
            problems.append(f"rule {r.id} ({r.title}) is required by no task: every {answers} still "
                            f"passes with it reverted")
        if not true.grade_equation(r.id, r.equation):
            where = mismatch(r.id, r.equation) if mismatch else None
            problems.append(f"rule {r.id}: its equation {r.equation!r} does not match the rule"
                            + (f": {where}" if where else ""))
        rules.append({"id": r.id, "title": r.title, "target": r.target, "observable": witness is not None,
                      "witness": witness, "tasks": used_by})
    herrings = []
    for h in true.herrings:
        ok = herring_unchanged(world, h)
        if not ok:
            problems.append(f"herring {h.id} ({h.target}) behaves differently from its manual entry")
        herrings.append({"id": h.id, "target": h.target, "unchanged": ok})
    return rules, herrings


def label_counts(tasks) -> dict[str, dict[str, int]]:
    """How many tasks carry each value of each label (band, shape, ...)."""
    labels: dict[str, dict[str, int]] = {}
    for t in tasks:
        for key, value in t.labels:
            labels.setdefault(key, {}).setdefault(value, 0)
            labels[key][value] += 1
    return labels


def report_header(world, true, recall_only: float) -> dict:
    """The keys every kind's certification report opens with."""
    return {
        "world": world.name, "kind": world.kind, "language": language_of(world), "seed": world.seed,
        "default_seed": world.default_seed,
        "params": {k: v for k, v in world.params}, "rules": len(true.rules), "herrings": len(true.herrings),
        "tasks": len(true.tasks), "examples": len(true.examples), "recall_only": recall_only,
    }


def meta_compiler(spec: ast.Spec, params: dict) -> MetaCompiler:
    """A meta-language compiler that knows the params and the spec's defs (each name once)."""
    mc = MetaCompiler(params)
    for d in spec.defs:
        if d.name in mc.defs or d.name in params:
            raise SpecError(d.span, f"{d.name} is defined twice", "Give each def a unique name.")
        mc.add_def(d)
    return mc


# ---------------------------------------------------------------- information per probe (api.Explorable)

# Live scorers kept per world: an explorer holds tens of MB (AlienCode), so a run with more
# trajectories in flight than this re-reads an evicted trajectory's probes from the start.
LIVE_SCORERS = 6


class Scorers:
    """One world's information scorers, each under the probes it has read. `make(world, seed)` is a fresh
    scorer: `feed(probes)` reads more probes in order, `records` holds one ProbeInformation per probe read.
    A trajectory scored round by round asks for a longer prefix each time and carries on from the scorer of
    its last one; identical trajectories (deterministic agents) share it. Calls may come from threads: one
    at a time."""

    def __init__(self, make):
        self.make = make
        self.lock = threading.Lock()
        self.by_read: collections.OrderedDict = collections.OrderedDict()  # (seed, probes read) -> scorer
        self.records: dict[tuple, list] = {}  # (seed, probes) -> their records

    def score(self, world, probes, seed: int = 0) -> list:
        """One record per probe; `probes` holds (probe text, feedback text, units charged)."""
        probes = tuple(tuple(p) for p in probes)
        with self.lock:
            if (seed, probes) not in self.records:
                # the scorer that has read the longest prefix of these probes, or a fresh one
                n = next((n for n in range(len(probes), 0, -1) if (seed, probes[:n]) in self.by_read), 0)
                scorer = self.by_read.pop((seed, probes[:n])) if n else self.make(world, seed)
                scorer.feed(probes[n:])
                self.by_read[(seed, probes)] = scorer
                while len(self.by_read) > LIVE_SCORERS:
                    self.by_read.popitem(last=False)  # the least recently advanced
                self.records[(seed, probes)] = list(scorer.records)
            return list(self.records[(seed, probes)])
