"""Reading what a model wrote: answers, rule reports, and how a rule report is graded.

* `extract_answer(reply)`: the last fenced code block of a reply, or the whole
  reply if it has none (what every protocol grades); `fenced(text)` writes one.
* `parse_rule_report(text)`: the lines of a rule report, `op NAME(params) = EQ`,
  `hook NAME(params) = EQ`, `NAME(params) = EQ`, `rule ID: EQ` or `ID: EQ`.
* `grade_rule_report(world, text)`: which rules, by id, the report states
  correctly (World.grade_equation decides each); the ids travel unchanged into
  the milestone record, summary.json and report.md.
* `rule_line(rule)`: the report line stating a rule (what the oracle agent writes).
"""
from __future__ import annotations

import re

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)

_REPORT_LINE = re.compile(
    r"^\s*(?:[-*]\s*)?`?(?:(?P<kind>op|hook|rule)\s+)?(?P<name>[A-Za-z_][\w]*)\s*"
    r"(?:\((?P<params>[^()]*)\))?\s*(?:=|:)\s*(?P<eq>.+?)`?\s*$")


def extract_answer(text: str | None) -> str:
    """The last fenced code block of a reply, or the whole reply if it has none."""
    if not text:
        return ""
    blocks = _FENCE.findall(text)
    if blocks:
        return blocks[-1].strip("\n")
    return text.strip()


def fenced(text: str) -> str:
    """Text in a fenced code block, as a reply that extract_answer reads back unchanged."""
    return f"```\n{text}\n```"


def parse_rule_report(text: str | None) -> list[tuple[str, str, str]]:
    """[(kind, name, equation)] from a rule report; kind is "" when the line does not say it."""
    out = []
    for line in extract_answer(text).splitlines():
        if not line.strip() or line.strip().upper() == "UNKNOWN":
            continue
        m = _REPORT_LINE.match(line)
        if not m:
            continue
        eq = m.group("eq").strip()
        if not eq or eq.upper() == "UNKNOWN":
            continue
        out.append((m.group("kind") or "", m.group("name"), eq))
    return out


def reportable_rules(world) -> list:
    """The perturbed rules a rule report is graded on: those with an equation."""
    return [r for r in world.rules if not r.herring and r.equation]


def _split_target(target: str) -> tuple[str, str]:
    kind, _, name = target.strip().partition(" ")
    return kind.lower(), name.strip().lower()


def grade_rule_report(world, text: str | None) -> dict:
    """{"stated", "correct": [rule ids], "extraneous", "errors"} for one rule report.

    A rule is correct when the last line naming its target states an equation that
    World.grade_equation accepts. A line without a kind (`PLUCK(xs, i) = ...`, `r11: ...`)
    names the rule whose target has that name."""
    rules = reportable_rules(world)
    by_key = {_split_target(r.target): r for r in rules}
    by_name: dict[str, list] = {}
    for r in rules:
        by_name.setdefault(_split_target(r.target)[1], []).append(r)
    stated: dict[str, str] = {}
    extraneous = []
    for kind, name, eq in parse_rule_report(text):
        key = (kind.lower(), name.lower())
        if kind and key in by_key:
            stated[by_key[key].id] = eq
        elif not kind and name.lower() in by_name:
            for r in by_name[name.lower()]:
                stated[r.id] = eq
        else:
            extraneous.append(f"{kind} {name}".strip())
    correct, errors = [], []
    for rule in rules:
        eq = stated.get(rule.id)
        if eq is None:
            continue
        try:
            ok = bool(world.grade_equation(rule.id, eq))
        except Exception as e:  # noqa: BLE001 — an ungradable statement is not correct
            ok = False
            errors.append(f"{rule.id}: {type(e).__name__}: {e}")
        if ok:
            correct.append(rule.id)
    return {"stated": len(stated) + len(extraneous), "correct": correct,
            "extraneous": sorted(set(extraneous)), "errors": errors}


def rule_line(rule) -> str:
    """The report line stating a rule: `op PLUCK(xs, i) = (get xs (- i 1))` for an
    operator or hook, `r11: A, B |- A & B` for a proof rule."""
    kind, _, name = rule.target.partition(" ")
    if kind in ("op", "hook"):
        return f"{rule.target}({', '.join(rule.params)}) = {rule.equation}"
    return f"{name or rule.id}: {rule.equation}"
