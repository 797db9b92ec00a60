"""Reading what a model wrote: answers, rule reports, and how a rule report is graded.

* `extract_answer(reply, world)`: the answer a reply gives, read as ExplorationBench's released
  harness reads it (runner/reading.py): the first block tagged with the world's language, else the
  first untagged block, else the first other one, else an unclosed fence, else the code of an
  unfenced reply, else the whole reply; `fenced(text)` writes one.
* `read_answer(world, task, reply)`: what a task's answer is graded on: for a proof world the first
  block holding a proof, else `ANSWER: UNPROVABLE` (the world's decline form); for a prediction the
  value of a `预测输出：` / `Output:` line, else the block; otherwise `extract_answer`.
* `parse_rule_report(text)`: the lines of a rule report, `op NAME(params) = EQ`,
  `hook NAME(params) = EQ`, `NAME(params) = EQ`, `rule ID: EQ` or `ID: EQ`, each perhaps a list
  item (`-`, `*`, `1.`), in backticks or bold, with `=>` or `:=` for `=`; and the released slot
  answers `R14 := EQ  # comment` anywhere in the reply (`??` and UNKNOWN state nothing).
* `slot_instructions(world)`: the released rule-report prompt's slot listing for a world
  (`R14 := ??  # PLUCK(xs, i)`), what `--rule-prompt slots` (the default) sends.
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

from .reading import (blocks, choose_block, clean, clean_code, decline_line, language_tags, prediction,
                      unfenced)

RULE_PROMPTS = ("slots", "open")  # --rule-prompt: the released slot listing, or the world's own instructions

# A report line as models write them: an optional list marker (`-`, `*`, `1.`, `2)`), the head in
# backticks or bold or neither, then `=`, `=>`, `:=` or `:` and the equation.
_REPORT_LINE = re.compile(
    r"^\s*(?:(?:[-*\u2022]|\d+[.)])\s*)?(?:\*\*|__)?`?(?:\*\*|__)?(?:(?P<kind>op|hook|rule)\s+)?"
    r"(?P<name>[A-Za-z_][\w]*)(?:\*\*|__)?\s*(?:\((?P<params>[^()]*)\))?\s*(?:\*\*|__)?`?\s*(?:=>|:=|=|:)\s*`?"
    r"(?P<eq>.+?)`?(?:\*\*|__)?$")  # matched against stripped lines: a lazy .+? before \s*$ is quadratic


_PROOF_LINE = re.compile(r"\s*\d+\s*[.):]?\s")


def extract_answer(text: str | None, world=None) -> str:
    """The answer a reply gives (see the module docstring; without a world, no language tags). A world
    whose answers are written in a language of its own (`answer_tags`: program and proof worlds) reads
    them as code, U+2212 and curly quotes made ASCII; a box's only lose invisible characters."""
    tags = language_tags(world)
    t = clean_code(text) if tags else clean(text)
    if not t.strip():
        return ""
    b = choose_block(blocks(t), tags)
    if b is not None:
        return b.text
    words = getattr(world, "statement_words", ())
    if words:
        found = unfenced(t, re.compile(r"\s*(?:" + "|".join(map(re.escape, words)) + r")\b"))
        if found:
            return found
    return t.strip()


def read_answer(world, task, text: str | None) -> str:
    """What a task is graded on (see the module docstring): a world with a decline form (proof worlds)
    reads proofs and declines, a prediction task its prediction line."""
    if getattr(world, "decline", ""):
        return _proof_answer(world, text)
    if getattr(task, "shape", "") == "predict":
        # run_eval.py `_run_single_test`: a predict task is graded on `extract_prediction`'s value
        said = prediction(clean_code(text))
        if said:
            return said
    return extract_answer(text, world)


def _proof_answer(world, text: str | None) -> str:
    """harness.py `_run_single_heldout`: the first proof block is graded (`extract_first_proof`); without
    one, an `ANSWER: UNPROVABLE` line anywhere declines (`extract_unprovable`). A block that holds no
    numbered proof line is no proof (the released code asks an untagged block for its PROOF...END
    envelope); the decline written alone, in a block or bare, is also read (our own form)."""
    t = clean_code(text)
    found = blocks(t)
    tags = language_tags(world)
    b = choose_block(found, tags, accept=lambda s: any(_PROOF_LINE.match(ln) for ln in s.split("\n")))
    if b is not None:
        return b.text
    decline = getattr(world, "decline", "")
    if decline_line(t, decline):
        return decline
    b = choose_block(found, tags)
    if b is not None:
        return b.text
    return unfenced(t, _PROOF_LINE) or t.strip()


def fenced(text: str) -> str:
    """Text in a fenced code block, as a reply that extract_answer reads back unchanged."""
    return f"```\n{text}\n```"


# The released slot answer, `R14 := EQ  # comment` (run_eval.py `_extract_sexpr_rules` reads
# `(R\d+\+?)\s*:=\s*(.+?)` anywhere in the reply and cuts `#.*`; `_score_sexpr_discovery` takes `??` and
# UNKNOWN as no answer).
_SLOT_LINE = re.compile(r"^\s*(?:[-*\u2022]\s*)?[`*_]*(?P<id>[A-Za-z]+\d+)\+?[`*_]*\s*:=\s*(?P<eq>.*)$")


def parse_rule_report(text: str | None) -> list[tuple[str, str, str]]:
    """[(kind, name, equation)] from a rule report; kind is "" when the line does not say it."""
    t = clean_code(text)
    lines = extract_answer(t).splitlines()
    slots = [ln for ln in t.splitlines() if _SLOT_LINE.match(ln)]
    if slots:  # slot answers are read wherever the reply writes them, the chosen block's other lines too
        lines = slots + [ln for ln in lines if not _SLOT_LINE.match(ln)]
    out = []
    for line in lines:
        slot = _SLOT_LINE.match(line)
        if slot:
            eq = re.sub(r"#.*", "", slot.group("eq")).strip().strip("`* ").strip()
            if eq and eq != "??" and eq.upper() != "UNKNOWN":
                out.append(("", slot.group("id"), eq))
            continue
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


def _id_key(name: str) -> str:
    """A rule id as a report may write it: any case, zero-padded (the released slots are R01 ... R05)."""
    return re.sub(r"^([a-z_]+)0+(?=\d)", r"\1", name.strip().lower())


def stated_equations(world, text: str | None) -> tuple[dict[str, list[str]], list[str]]:
    """({rule id: the equations a report states for it, in order}, [what it names that is no rule of
    the world]). A line names every rule on its target: rules stacked on one base line (`prior`)
    share it, so a report states each layer on a line of its own. A line without a kind
    (`PLUCK(xs, i) = ...`, `r11: ...`) names the rules whose target has that name; a slot answer
    (`R14 := ...`) the rule of that id."""
    rules = reportable_rules(world)
    by_key: dict[tuple[str, str], list] = {}
    by_name: dict[str, list] = {}
    by_id = {_id_key(r.id): [r] for r in rules}
    for r in rules:
        by_key.setdefault(_split_target(r.target), []).append(r)
        by_name.setdefault(_split_target(r.target)[1], []).append(r)
    stated: dict[str, list[str]] = {}
    extraneous = []
    for kind, name, eq in parse_rule_report(text):
        key = (kind.lower(), name.lower())
        named = by_key.get(key) if kind else by_name.get(name.lower()) or by_id.get(_id_key(name))
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
    operator or hook, `P5 := - SUB right 11` for an operator entry, `r11: A, B |- A & B` for a proof rule."""
    kind, _, name = rule.target.partition(" ")
    if kind in ("op", "hook"):
        return f"{rule.target}({', '.join(rule.params)}) = {rule.equation}"
    if kind in ("infix", "prefix"):  # a program world's syntax rule: its entry, in its slot (`P5 := - SUB right 11`)
        return f"{rule.id} := {rule.equation}"
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


def slot_instructions(world) -> str:
    """The rule-report prompt as released (sandboxes/code/world_data.py `SEXPR_MILESTONE_PROMPT`: the format
    `RULE_ID := S-EXPRESSION`, the actual runtime behaviour, UNKNOWN for a rule not found, the notation,
    then one slot per rule, `R03 := ??  # PLUCK(seq, i) ...`), restated for this world: its notation is
    the world's own instructions (`report_instructions`), its slots the perturbed rules, in order. The
    slots name each rule's target, as the released listing does (that is the paper's protocol)."""
    rules = reportable_rules(world)
    notation, _ = report_instructions(world)
    slots = "\n".join(f"{r.id} := ??    # the actual behaviour of {_slot_target(r)}" for r in rules)
    return ("Summarise the rules you found that differ from the manual, one line per rule, in the form\n"
            "  RULE_ID := EQUATION\n"
            "where EQUATION states what the rule actually does at run time (not what the manual says). Write "
            "UNKNOWN for a rule you have not found. The report holds only the rules: no programs, no tests.\n\n"
            f"The notation (the world's own report lines are read too): {notation}\n\n"
            f"The rules ({len(rules)}):\n\n{slots}")


def _slot_target(rule) -> str:
    kind, _, name = rule.target.partition(" ")
    if kind in ("op", "hook"):
        return f"{'hook ' if kind == 'hook' else ''}{name}({', '.join(rule.params)})"
    if kind in ("infix", "prefix"):  # a syntax rule: stated as its entry
        form = "SYMBOL OP ASSOCIATIVITY PRECEDENCE" if kind == "infix" else "SYMBOL OP PRECEDENCE"
        return f"the {kind} operator {name} (state its syntax entry: {form})"
    return rule.target


def rule_report_instructions(world, style: str = "slots") -> tuple[str, list[str]]:
    """(the rule-report instructions a run sends, the examples withheld from the world's own): the
    released slot listing (`slots`, the default) or the world's instructions alone (`open`)."""
    text, withheld = report_instructions(world)
    if style == "slots" and reportable_rules(world):
        return slot_instructions(world), withheld
    return text, withheld


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
