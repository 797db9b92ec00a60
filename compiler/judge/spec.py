"""`kind judge`: a situation puzzle or an interactive math problem, a hidden truth, and a judge.

Spec items (docs/judge-worlds.md has the reference):

    setting puzzle                      # or math
    surface "A man ..."                 # what the player sees
    truth "He ..."                      # the hidden explanation (math: the reference derivation)
    answer "13/28"                      # math: the final answer (required); puzzles: the reference answer
                                        #   (default: the truth)
    naive "He was ..."                  # a surface-only guess the answer check must reject (any number)
    instructions "..."                  # extra instructions for a judge model
    grading judge                       # judge (default): a judge model decides (math: its strict grader of
                                        #   equivalence); exact: the world's answer check, even under a model
    origin "..."                        # where the content comes from
    fact short "The man is very short" {
      yes "Is he short?", "Is he small?"  # questions the keyword judge answers yes
      no "Is he tall?"                    # ... and no
      mention "short", "dwarf"            # word groups showing an answer mentions the fact (default: the yes phrasings)
      required true                       # a correct puzzle answer mentions this fact
    }
    budget { turns 20 }

The compiler never calls a model: the world gives the runner the judge's prompt
and the normaliser of its replies (compiler/judge/world.py).
"""
from __future__ import annotations

from worldspec import ast
from worldspec.compiler.api import JudgeFace, Kind, Task
from worldspec.compiler.common import meta_compiler
from worldspec.compiler.items import constant_reader, group_items, one, reject_program_sections, word
from worldspec.compiler.judge.manual import render_manual
from worldspec.compiler.judge.world import GRADINGS, SETTINGS, Fact, JudgeBudget, JudgeWorld
from worldspec.diagnostics import SpecError, did_you_mean

ITEMS = ("setting", "surface", "truth", "answer", "naive", "instructions", "grading", "origin")
BLOCKS = ("fact",)
FACT_FIELDS = ("yes", "no", "mention", "required")
BUDGET_KEYS = ("turns",)
MAX_TURNS = 200


def compile_spec(spec: ast.Spec, seed: int | None = None) -> JudgeWorld:
    """A judge spec -> its JudgeWorld (a judge world has no seeded parts: the seed is only recorded)."""
    seed = spec.seed if seed is None else seed
    reject_program_sections(spec)
    for part in (spec.base, spec.rules, spec.herrings, spec.params, spec.defs):
        if part:
            raise SpecError(part[0].span, "a judge world has no base, rule, herring, param or def sections",
                            "Its hidden part is the truth and its key facts.")
    items = group_items(spec, ITEMS, BLOCKS)
    constant = constant_reader(meta_compiler(spec, {}))
    setting = read_word(items, spec, "setting", SETTINGS, None)
    surface = read_text(items, spec, constant, "surface")
    truth = read_text(items, spec, constant, "truth")
    answer = read_text(items, spec, constant, "answer", required=setting == "math") or truth
    guesses = tuple(text_of(g, constant, "naive") for g in items["naive"])
    # Graded by the judge by default (math: the judge model's strict grader, as InteractiveBench's
    # math/turtle.py grade_equivalence; the keyword judge compares exactly); `grading exact` makes the
    # world's own answer check decide even under a judge model.
    grading = read_word(items, spec, "grading", GRADINGS, "judge")
    facts = read_facts(items, constant)
    budget = read_budget(spec)
    task = Task("answer", setting, surface, "answer", (("setting", setting),), answer,
                guesses[0] if guesses else "")
    return JudgeWorld(
        name=spec.name, version=spec.version, language=spec.language, kind=spec.kind, seed=seed, default_seed=spec.seed,
        summary=spec.summary, params=(), manual=render_manual(spec.name, setting, surface, spec.manual,
                                                               budget.turns),
        examples=(), tasks=(task,), rules=(), herrings=(), budget=budget, setting=setting, surface=surface,
        truth=truth, answer=answer, guesses=guesses,
        instructions=read_text(items, spec, constant, "instructions", required=False), facts=facts,
        grading=grading, origin=read_text(items, spec, constant, "origin", required=False), source=spec.file)


# ---------------------------------------------------------------- reading the items


def text_of(g, constant, key: str) -> str:
    """The one text argument of an item (a number is read as its text: `answer 42`)."""
    value = constant(g.args[0]) if len(g.args) == 1 else None
    if type(value) in (int, float):
        value = str(value)
    if type(value) is not str or not value.strip():
        raise SpecError(g.span, f"{key} takes one non-empty text", f'For example: {key} "..."')
    return value.strip() if "\n" not in value.strip() else value.rstrip() + "\n"


def read_text(items: dict, spec: ast.Spec, constant, key: str, required: bool = True) -> str:
    """The text of the single item `key` ("" when absent and not required)."""
    g = one(items, key, spec, required)
    return text_of(g, constant, key) if g is not None else ""


def read_word(items: dict, spec: ast.Spec, key: str, allowed: tuple[str, ...], default: str | None) -> str:
    """A one-word item among `allowed` (required when there is no default)."""
    g = one(items, key, spec, required=default is None)
    if g is None:
        return default
    value = word(g.args[0], key) if len(g.args) == 1 else ""
    if value not in allowed:
        raise SpecError(g.span, f"unknown {key} {value!r}", (did_you_mean(value, allowed) + " "
                        + f"Write {' or '.join(allowed)}.").strip())
    return value


def read_facts(items: dict, constant) -> tuple[Fact, ...]:
    """The `fact NAME "statement" { ... }` blocks, in order (names unique, each with a yes phrasing)."""
    facts: list[Fact] = []
    for g in items["fact"]:
        if any(f.id == g.name for f in facts):
            raise SpecError(g.span, f"fact {g.name} is declared twice", "Fact names must be unique.")
        if not g.note.strip():
            raise SpecError(g.span, f"fact {g.name} has no statement", f'Write: fact {g.name} "what is true" {{ ... }}')
        fields: dict[str, list] = {k: [] for k in FACT_FIELDS}
        for f in g.fields:
            if f.key not in fields:
                raise SpecError(f.span, f"unknown fact field {f.key!r}", did_you_mean(f.key, FACT_FIELDS).strip()
                                or "Fact fields: " + ", ".join(FACT_FIELDS) + ".")
            values = [constant(a) for a in f.args]
            if f.key == "required":
                if len(values) != 1 or type(values[0]) is not bool or fields["required"]:
                    raise SpecError(f.span, "required takes true or false, once", "For example: required true")
            elif any(type(v) is not str or not v.strip() for v in values):
                raise SpecError(f.span, f"{f.key} lists non-empty texts", f'For example: {f.key} "Was he short?"')
            fields[f.key] += values
        if not fields["yes"]:
            raise SpecError(g.span, f"fact {g.name} has no yes phrasing",
                            'Add: yes "a question the judge answers yes for this fact"')
        facts.append(Fact(g.name, g.note.strip(), tuple(fields["yes"]), tuple(fields["no"]), tuple(fields["mention"]),
                          bool(fields["required"] and fields["required"][0]), g.span.line))
    return tuple(facts)


def read_budget(spec: ast.Spec) -> JudgeBudget:
    """The spec's budget block: `turns` (20 by default, as the paper)."""
    values = {}
    spans = dict(spec.budget_spans)
    for key, v in spec.budget:
        span = spans.get(key, spec.span)
        if key not in BUDGET_KEYS:
            raise SpecError(span, f"unknown budget entry {key!r} for a judge world",
                            did_you_mean(key, BUDGET_KEYS).strip() or "Entries: turns.")
        if not 1 <= v <= MAX_TURNS:
            raise SpecError(span, f"budget {key} must be between 1 and {MAX_TURNS}", "")
        values[key] = v
    return JudgeBudget(**values)


KIND = Kind("judge", compile_spec, "a situation puzzle or interactive math problem with a hidden truth and a judge",
            faces=(JudgeFace,))
