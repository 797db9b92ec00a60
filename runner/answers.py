"""Reading what a model wrote: answers, rule reports, and how a rule report is graded.

* `extract_answer(reply)`: the last fenced code block of a reply, or the whole
  reply if it has none (what every protocol grades); `fenced(text)` writes one.
* `parse_rule_report(text)`: the lines of a rule report, `op NAME(params) = EQ`,
  `hook NAME(params) = EQ`, `NAME(params) = EQ`, `rule ID: EQ` or `ID: EQ`, each perhaps a list
  item (`-`, `*`, `1.`), in backticks or bold, with `=>` or `:=` for `=`.
* `statements(world, text)`: the equation a report states for each rule, by id
  (`stated_equations`: all of them, for rules stacked on one target).
* `grade_rule_report(world, text)`: which rules, by id, the report states
  correctly (World.grade_equation decides each); the ids travel unchanged into
  the milestone record, summary.json and report.md.
* `rule_line(rule)`: the report line stating a rule (what the oracle agent writes).
* `report_instructions(world)`: the world's rule-report instructions with every
  example that states a true rule taken out (`true_rules_in` finds them).
* `answer_outcome(reply)`, `rejected_outcome(error)`: whether a reply is an answer
  to grade or one the model failed to give (it scores zero unread).
* `unprovable_tasks(world)`, `rule_score_applies(world)`: which diagnostic a milestone
  reports beside accuracy (UnprovRec or the rule count).
"""
from __future__ import annotations

import re

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)

# A report line as models write them: an optional list marker (`-`, `*`, `1.`, `2)`), the head in
# backticks or bold or neither, then `=`, `=>`, `:=` or `:` and the equation.
_REPORT_LINE = re.compile(
    r"^\s*(?:(?:[-*\u2022]|\d+[.)])\s*)?(?:\*\*|__)?`?(?:\*\*|__)?(?:(?P<kind>op|hook|rule)\s+)?"
    r"(?P<name>[A-Za-z_][\w]*)(?:\*\*|__)?\s*(?:\((?P<params>[^()]*)\))?\s*(?:\*\*|__)?`?\s*(?:=>|:=|=|:)\s*`?"
    r"(?P<eq>.+?)`?(?:\*\*|__)?$")  # matched against stripped lines: a lazy .+? before \s*$ is quadratic


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
        m = _REPORT_LINE.match(line.strip())
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


def stated_equations(world, text: str | None) -> tuple[dict[str, list[str]], list[str]]:
    """({rule id: the equations a report states for it, in order}, [what it names that is no rule of
    the world]). A line names every rule on its target: rules stacked on one base line (`prior`)
    share it, so a report states each layer on a line of its own. A line without a kind
    (`PLUCK(xs, i) = ...`, `r11: ...`) names the rules whose target has that name."""
    rules = reportable_rules(world)
    by_key: dict[tuple[str, str], list] = {}
    by_name: dict[str, list] = {}
    for r in rules:
        by_key.setdefault(_split_target(r.target), []).append(r)
        by_name.setdefault(_split_target(r.target)[1], []).append(r)
    stated: dict[str, list[str]] = {}
    extraneous = []
    for kind, name, eq in parse_rule_report(text):
        key = (kind.lower(), name.lower())
        named = by_key.get(key) if kind else by_name.get(name.lower())
        if not named:
            extraneous.append(f"{kind} {name}".strip())
        for r in named or ():
            stated.setdefault(r.id, []).append(eq)
    return stated, extraneous


def statements(world, text: str | None) -> tuple[dict[str, str], list[str]]:
    """({rule id: the equation a report states for it}, [what it names that is no rule of the world]):
    the last line naming a rule's target (see stated_equations)."""
    stated, extraneous = stated_equations(world, text)
    return {rid: eqs[-1] for rid, eqs in stated.items()}, extraneous


def grade_rule_report(world, text: str | None) -> dict:
    """{"stated", "correct": [rule ids], "extraneous", "errors"} for one rule report.

    A rule is correct when one of the equations stated for it (the last first) is one
    World.grade_equation accepts: of two layers on one target, each is credited by its own line."""
    rules = reportable_rules(world)
    stated, extraneous = stated_equations(world, text)
    correct, errors = [], []
    for rule in rules:
        for eq in reversed(stated.get(rule.id, ())):
            try:
                ok = bool(world.grade_equation(rule.id, eq))
            except Exception as e:  # noqa: BLE001 — an ungradable statement is not correct
                ok = False
                errors.append(f"{rule.id}: {type(e).__name__}: {e}")
            if ok:
                correct.append(rule.id)
                break
    return {"stated": len(stated) + len(extraneous), "correct": correct,
            "extraneous": sorted(set(extraneous)), "errors": errors}


def rule_line(rule) -> str:
    """The report line stating a rule: `op PLUCK(xs, i) = (get xs (- i 1))` for an
    operator or hook, `r11: A, B |- A & B` for a proof rule."""
    kind, _, name = rule.target.partition(" ")
    if kind in ("op", "hook"):
        return f"{rule.target}({', '.join(rule.params)}) = {rule.equation}"
    return f"{name or rule.id}: {rule.equation}"


# ----------------------------------------------------------------------------
# The rule-report prompt: its examples may not state a true rule


_QUOTED = re.compile(r"`([^`\n]+)`")
_LIST_GLUE = re.compile(r"^\s*(?:,\s*(?:or\s+|and\s+)?|or\s+|and\s+)$")
_EXAMPLE_LEAD = re.compile(r",?\s*(?:for example|for instance|e\.g\.,?|such as)\s*$", re.I)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _contains(text: str, part: str) -> bool:
    """Whether `part` stands in `text` as a whole (not inside a longer name), spaces squashed."""
    part = _squash(part)
    if not part:
        return False
    return re.search(r"(?<![\w])" + re.escape(part) + r"(?![\w])", _squash(text)) is not None


def true_rules_in(world, text: str) -> list[str]:
    """The ids of the world's perturbed rules that `text` gives away: their equation or open-book
    statement appears in it, or it quotes (in backticks) an equation the world grades as the
    rule's true one."""
    rules = [r for r in world.rules if not r.herring]
    hits = {r.id for r in rules if (r.equation and _contains(text, r.equation))
            or (r.statement and _contains(text, r.statement))}
    for frag in _QUOTED.findall(text):
        m = _REPORT_LINE.match(frag.strip())
        candidates = {frag.strip(), m.group("eq").strip() if m else ""} - {""}
        for r in reportable_rules(world):
            if r.id in hits:
                continue
            for c in candidates:
                try:
                    if world.grade_equation(r.id, c):
                        hits.add(r.id)
                        break
                except Exception:  # noqa: BLE001 — an ungradable fragment states nothing
                    continue
    return [r.id for r in rules if r.id in hits]


def report_instructions(world) -> tuple[str, list[str]]:
    """(the world's rule-report instructions without the examples that state a true rule,
    the examples taken out). A report copied from the examples must score nothing
    (issue 12: a world's examples were its own R14 and R1)."""
    text = world.report_instructions or ""
    parts = re.split(r"(`[^`\n]+`)", text)  # odd indices: quoted fragments
    removed: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(parts):
        if i % 2 == 0:
            out.append(parts[i])
            i += 1
            continue
        # a run of quoted fragments joined by ", " / " or " / ", and ": one list of examples
        j = i
        while j + 2 < len(parts) and _LIST_GLUE.match(parts[j + 1]):
            j += 2
        run = parts[i:j + 1:2]
        kept = [f for f in run if not true_rules_in(world, f)]
        removed += [f[1:-1] for f in run if f not in kept]
        if len(kept) == len(run):
            out.append("".join(parts[i:j + 1]))
        elif kept:
            out.append(", ".join(kept))
        else:
            out[-1] = _EXAMPLE_LEAD.sub("", out[-1])
        i = j + 1
    return "".join(out), removed


# ----------------------------------------------------------------------------
# Answers the model failed to give, and what a milestone reports beside accuracy

# explorationbench.txt 3.3: "An answer that is missing or exhausts its time budget scores zero."
# Each is logged with its outcome (the `outcome` field of a verdict event); only an answer lost
# to infrastructure (retries spent on 429/5xx/connection errors) is left unscored.
ANSWERED = "answered"


def answer_outcome(reply) -> str:
    """"answered" for a reply to grade, or why it scores zero unread: "truncated" (cut off at
    the token limit), "refused" (a content filter or refusal), "empty" (no answer in it)."""
    finish = (getattr(reply, "finish_reason", "") or "").lower()
    if finish == "length":
        return "truncated"
    if finish in ("content_filter", "refusal"):
        return "refused"
    if not extract_answer(getattr(reply, "content", None)).strip():
        return "empty"
    return ANSWERED


def rejected_outcome(error) -> str:
    """The outcome of a request the provider refused (models.RejectedError): it scores zero."""
    return {"context_window": "context_too_long", "content_policy": "refused"}.get(
        getattr(error, "reason", ""), "rejected")


def unprovable_tasks(world) -> list:
    """The tasks whose correct answer is a refusal to prove (labelled `set: unprovable`)."""
    return [t for t in world.tasks if t.label("set") == "unprovable"]


def rule_score_applies(world) -> bool:
    """Whether a milestone scores the rule report. A world with unprovable goals is diagnosed
    by correct refusal instead (explorationbench.txt Table 1: "Rules counts the hidden rules
    ... and UnprovRec is its rate of correct refusal on unprovable theorems"): its reports are
    asked and logged, not scored."""
    return bool(reportable_rules(world)) and not unprovable_tasks(world)
