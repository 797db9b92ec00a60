"""Certification of a judge world: can the keyword judge play it, and does its answer check hold?

* every key fact is reachable: some yes phrasing of it is answered "yes" by the keyword judge;
* every phrasing gets its own label (a yes phrasing "yes", a no phrasing "no"), so no two facts'
  phrasings contradict each other;
* the answer check accepts the reference answer and rejects every surface-only guess: the world's
  `naive` guesses and the surface itself submitted as the answer (interaction is necessary);
* a puzzle has at least one required fact (its answer check needs something to look for) and no
  required fact is already mentioned by the surface.

The report has the keys every kind's report opens with (world, kind, seed, ...) plus setting,
facts, guesses and notes; `worldspec check` prints the notes and the problems.
"""
from __future__ import annotations


def certify_judge(w, progress=None) -> dict:
    """The certification report of a JudgeWorld `w` (problems empty exactly when it is certified)."""
    say = progress or (lambda msg: None)
    problems: list[str] = []
    notes: list[str] = []
    facts = []
    say(f"asking the keyword judge every phrasing of {w.name}")
    for f in w.facts:
        labels = {p: w.keyword_label(p) for p in f.yes + f.no}
        reachable = [p for p in f.yes if labels[p] == "yes"]
        if not reachable:
            problems.append(f"fact {f.id} ({f.statement}) is not reachable: no yes phrasing of it is "
                            "answered yes by the keyword judge")
        for p in f.yes:
            if labels[p] != "yes" and reachable:
                problems.append(f"fact {f.id}: its yes phrasing {p!r} is answered {labels[p]}")
        for p in f.no:
            if labels[p] != "no":
                problems.append(f"fact {f.id}: its no phrasing {p!r} is answered {labels[p]}")
        if f.required and f.mentioned_in(w.surface):
            problems.append(f"required fact {f.id} is already mentioned by the surface: the puzzle does not "
                            "need interaction")
        facts.append({"id": f.id, "statement": f.statement, "required": f.required,
                      "reachable": bool(reachable), "phrasings": labels})
        notes.append(f"{'ok ' if reachable else 'BAD'} fact {f.id:<12} {'required ' if f.required else ''}"
                     f"{len(f.yes)} yes / {len(f.no)} no phrasing(s)")
    if w.setting == "puzzle" and not any(f.required for f in w.facts):
        problems.append("a puzzle needs at least one required fact (`required true` in a fact block): the "
                        "answer check looks for them")
    ok, why = w.check_answer(w.reference_answer)
    if not ok:
        problems.append(f"the answer check rejects the reference answer: {why}")
    guesses = []
    for g in (*w.guesses, w.surface):
        accepted, why = w.check_answer(g)
        guesses.append({"guess": g[:120], "accepted": accepted})
        if accepted:
            what = "the surface itself" if g == w.surface else f"the surface-only guess {g[:60]!r}"
            problems.append(f"the answer check accepts {what}: {why}")
    if not w.guesses:
        notes.append("no naive guess declared: only the surface itself is checked as a surface-only guess")
    if w.origin:
        notes.insert(0, f"origin: {w.origin}")
    return {
        "world": w.name, "kind": w.kind, "language": w.language, "seed": w.seed, "default_seed": w.default_seed,
        "params": {k: v for k, v in w.params}, "rules": 0, "herrings": 0, "tasks": len(w.tasks),
        "examples": 0, "setting": w.setting, "turns": w.budget.turns, "grading": w.grading,
        "facts": facts, "guesses": guesses, "notes": notes, "problems": problems,
        "labels": {"setting": {w.setting: len(w.tasks)}},
    }
