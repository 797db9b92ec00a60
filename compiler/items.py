"""Kind-specific spec items and blocks shared by the box kinds (blackbox and game), and what else they share.

A box spec writes its own items as generic lines (`family CII`, `test [3, 1, 4]`)
and blocks (`opponent tft "tit-for-tat" { ... }`). This module groups them by key,
reads the one-line items both kinds have (family, difficulty), rejects the sections
only program worlds have, reads the turn@shot budget and evaluates constants over
the params and defs. Beyond the spec: `BoxWorld` answers the World members both
box kinds answer alike, `manual_opening` starts their manuals, and
`hard_easy_pairs` pairs the boxes of a family for the cross-box checks.
"""
from __future__ import annotations

from typing import Callable

import attrs

from worldspec import ast
from worldspec.compiler.api import InputError, Rule, Task, WorldHeader, by_id
from worldspec.compiler.common import check_budget_entry, interpolate
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.meta import MetaCompiler
from worldspec.values import EvalError

DIFFICULTIES = ("easy", "hard")
BOX_BUDGET_KEYS = ("turns", "shots", "feedback_chars")
REQUIRED_HINT = {
    "family": "Add: family CII (or CRI, PSI, ERI, IPI, GSI).",
    "difficulty": "Add: difficulty easy (or hard).",
}


@attrs.frozen
class BoxBudget:
    """Turn@shot: exploration turns (one input each) and attempts per test sample."""

    turns: int = 10
    shots: int = 1
    feedback_chars: int = 600
    units_per_call: int = 1  # one input per turn (what `worldspec probe` reports)
    answers: int = 1

    def cost(self, kind: str) -> int:
        """Every accepted input costs one turn, whatever it is."""
        return 1


# ---------------------------------------------------------------- items and blocks


def word(e: ast.Expr, what: str) -> str:
    """A bare word or a string (`family CII`, `difficulty "hard"`)."""
    if isinstance(e, ast.Var):
        return e.name
    if isinstance(e, ast.Const) and type(e.value) is str:
        return e.value
    raise SpecError(e.span, f"{what} must be a word or a string", f"For example: {what} easy")


def chosen_word(e: ast.Expr, what: str, allowed, hint: str) -> str:
    """A word that must be one of `allowed`; anything else is a located error naming the closest."""
    w = word(e, what)
    if w not in allowed:
        raise SpecError(e.span, f"unknown {what} {w!r}", did_you_mean(w, allowed).strip() or hint)
    return w


def chosen_words(lines, what: str, allowed, hint: str) -> tuple[str, ...]:
    """The words of every line of an item (`normalise spaces, case`), each one of `allowed`, without repeats."""
    out: list[str] = []
    for g in lines:
        for a in g.args:
            w = chosen_word(a, what, allowed, hint)
            if w not in out:
                out.append(w)
    return tuple(out)


def switch(items: dict, spec: ast.Spec, key: str, on: str, off: str) -> bool:
    """A two-way item such as `rejection turn|free`: whether it says `on` (absent: `off`)."""
    g = one(items, key, spec, required=False)
    if g is None:
        return False
    hint = f"Write: {key} {on}, or {key} {off}."
    if len(g.args) != 1:
        raise SpecError(g.span, f"{key} takes one word: {on} or {off}", hint)
    return chosen_word(g.args[0], key, (on, off), hint) == on


def note(args, i: int, what: str) -> str:
    """The optional string argument i of an item ("" when absent)."""
    if len(args) <= i:
        return ""
    a = args[i]
    if isinstance(a, ast.Const) and type(a.value) is str:
        return a.value
    raise SpecError(a.span, f"the {what} must be a string", 'Write it in double quotes: "..."')


def group_items(spec: ast.Spec, allowed: tuple[str, ...], blocks: tuple[str, ...] = ()) -> dict:
    """Generic items by key; unknown keys and misplaced blocks are located errors.

    A key in both `allowed` and `blocks` may be written either way (its list holds both forms)."""
    out: dict[str, list] = {k: [] for k in allowed + blocks}
    for g in spec.generic:
        if g.key not in out:
            raise SpecError(g.span, f"unknown item {g.key!r} in a {spec.kind} world",
                            did_you_mean(g.key, allowed + blocks).strip()
                            or "Items: " + ", ".join(dict.fromkeys(allowed + blocks)) + ".")
        if g.name and g.key not in blocks:
            raise SpecError(g.span, f"{g.key} is a one-line item, not a block",
                            f"Write: {g.key} VALUE")
        if not g.name and g.key in blocks and g.key not in allowed:
            raise SpecError(g.span, f"{g.key} is a block: {g.key} NAME \"title\" {{ ... }}", "")
        out[g.key].append(g)
    return out


def one(items: dict, key: str, spec: ast.Spec, required: bool = True):
    """The single item `key` (None when absent and not required); twice is an error."""
    found = items.get(key, [])
    if len(found) > 1:
        raise SpecError(found[1].span, f"{key} is declared twice", f"Keep one {key} line.")
    if not found:
        if required:
            raise SpecError(spec.span, f"this {spec.kind} world has no {key} line", REQUIRED_HINT.get(key, ""))
        return None
    return found[0]


def family_and_difficulty(items: dict, spec: ast.Spec, required: bool = True) -> tuple[str, str]:
    """(family, difficulty) of a benchmark box; ("", "") for a world that is not one."""
    fam = one(items, "family", spec, required)
    family = word(fam.args[0], "family") if fam else ""
    dg = one(items, "difficulty", spec, required=required or bool(family))
    difficulty = chosen_word(dg.args[0], "difficulty", DIFFICULTIES, "Write easy or hard.") if dg else ""
    return family, difficulty


def box_labels(family: str, difficulty: str) -> tuple[tuple[str, str], ...]:
    """The labels of a box's tasks (reports count by them)."""
    return (("difficulty", difficulty), ("family", family))


def reject_program_sections(spec: ast.Spec) -> None:
    """Syntax, worked examples, task blocks and unit costs belong to program worlds only."""
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
    """The spec's budget block read as turns, shots and feedback characters."""
    values = {}
    for key, v in spec.budget:
        if key not in BOX_BUDGET_KEYS:
            raise SpecError(spec.span, f"unknown budget entry {key!r} for a {spec.kind} world",
                            did_you_mean(key, BOX_BUDGET_KEYS).strip()
                            or "Entries: " + ", ".join(BOX_BUDGET_KEYS) + ".")
        check_budget_entry(key, v, spec.span)
        values[key] = v
    return BoxBudget(**values)


def read_seats(items: dict, spec: ast.Spec, seats: tuple[str, ...]) -> tuple[str, ...]:
    """The seats a spec's `seats` item lists (distinct, each one of `seats`; all of them when absent)."""
    sg = one(items, "seats", spec, required=False)
    if sg is None:
        return seats
    got = tuple(word(a, "seats") for a in sg.args)
    if not got or any(s not in seats for s in got) or len(set(got)) != len(got):
        raise SpecError(sg.span, f"seats lists {' and/or '.join(seats)}", "For example: seats " + ", ".join(seats))
    return got


def read_baselines(items: dict, opponents) -> tuple[str, ...]:
    """The opponents (anything with a name) the `baseline` items name: played beside every model."""
    return chosen_words(items["baseline"], "baseline", [o.name for o in opponents],
                        "Baselines name opponents of this world.")


# ---------------------------------------------------------------- constants


def constant_reader(mc: MetaCompiler) -> Callable[[ast.Expr], object]:
    """Evaluate a spec expression to a value; a failure is a located SpecError."""

    def constant(e: ast.Expr):
        try:
            return mc.constant(e)
        except EvalError as err:
            raise SpecError(e.span, f"this value cannot be computed: {err.message}", "") from None

    return constant


# ---------------------------------------------------------------- worlds and manuals


# How a box's task prompt ends (compiler/blackbox/spec.py, compiler/game/spec.py); published grading reads
# answers as written, so its questions drop it.
FENCE_TAIL = ", in a fenced code block."


@attrs.frozen(eq=False)
class BoxWorld(WorldHeader):
    """The World members a black box and a game answer alike (compiler/api.py's TurnShotFace: worlds whose
    tests are not rules, so they state no rule report).

    A subclass reads one probe with `read_probe(text)`, raising InputError when it is rejected.
    """

    def read_probe(self, text):  # pragma: no cover - every box kind overrides
        """The values (or moves) of one probe text; raises InputError with the reason it is rejected."""
        raise NotImplementedError

    def charge(self, text) -> int:
        """The turns this probe costs: one, or none when it is rejected."""
        try:
            self.read_probe(text)
        except InputError:
            return 0
        return self.budget.cost("input")

    def task(self, task) -> Task:
        """The task with this id (or the task itself)."""
        return by_id(self.tasks, task, self.name)

    # What the released Oracle harness says and asks around a test (`worldspec run --grading published`);
    # a black box overrides these per family (compiler/blackbox/published.py). A game box keeps them: the
    # released game harness re-asks nothing and plays each test game in a conversation of its own.

    def published_applies(self, task) -> bool:
        """Whether a test's replies are read as written and compared by a released comparison (a black box's
        families; a game's moves are read by the game)."""
        return False

    def published_reask(self, task, text, stage: str = "first") -> str:
        """The format re-ask the released harness sends for this reply ("": none)."""
        return ""

    def published_question(self, task, first: bool, shots: int, attempt: int = 1) -> str:
        """A test's question when answers are read as written: the task's prompt without its code fence."""
        return self.task(task).prompt.replace(FENCE_TAIL, ".")

    @property
    def published_rejection_costs(self) -> bool:
        """Whether the released harness spends a turn on an input the box cannot use (its box loops do)."""
        return True

    def published_next(self, passed: bool, last: str) -> str:
        """The released harness's message after a test, before the next ("": none)."""
        return ""

    def published_solution(self, task) -> str:
        """The reference answer written as the released harness accepts it."""
        return self.task(task).solution

    def test_of(self, task):
        """The test sample behind a task (a subclass's `tests` hold them, with the tasks' ids)."""
        return by_id(self.tests, task, self.name)

    def rule(self, rule_id: str) -> Rule:
        """The perturbed rule or herring with this id (KeyError when there is none)."""
        return by_id(self.rules + self.herrings, rule_id, self.name)


class StatelessSession:
    """A session of a world without memory: every probe is answered on its own (by `world.probe`)."""

    opening = ""  # nothing to tell before the first probe
    memoryless = True  # a probe's answer is independent of the probes before it

    def __init__(self, world):
        self.world = world

    def probe(self, text):
        """The world's answer to one probe."""
        return self.world.probe(text)


def manual_opening(spec: ast.Spec, summary: str, params: dict) -> list[str]:
    """A box manual's first lines: its name, summary and the spec's own manual text."""
    out = [f"# {spec.name}", ""]
    if summary:
        out += [summary, ""]
    if spec.manual:
        out += [interpolate(spec.manual, params).strip(), ""]
    return out


# ---------------------------------------------------------------- across boxes


def hard_easy_pairs(worlds) -> list[tuple]:
    """Every (hard, easy) pair of boxes of the same family (the cross-box checks compare them)."""
    boxes = [w for w in worlds if w.family]
    return [(hard, easy) for hard in boxes if hard.difficulty == "hard"
            for easy in boxes if easy.difficulty == "easy" and easy.family == hard.family]
