"""Certify a proof world: the report keys of a program world's certification, plus `unprovable`.

- every patched rule observable: a one-rule proof that one system accepts and the
  other rejects (the true rules against the rule knocked back to its base);
- every patched rule required by some task (knockout);
- every herring unchanged: the same schema, and the same verdict on its one-rule proofs;
- every worked example and reference proof accepted, every naive answer passing
  under the manual's rules, and the recall-only score with the tasks that carry it
  (`recall_only_tasks`), the refusals among them (`recall_only_refusals`) and the
  manual-trusting agent's UnprovRec (`manual_unprovrec`: the share of unprovable goals
  whose naive answer, the built-in `manual` agent's, is a correct refusal);
- every unprovable goal certified: the bounded search runs to its fixpoint within
  its node bound and finds no proof (the report gives bounds, nodes, completeness);
- the honest floor (compiler/common.py: honest_floors): a task whose naive answer passes
  in the true world, or a rule required by one task only, is a problem unless the world
  declares it with `allow "..."`. An unprovable goal's naive answer is the decline only
  when the manual's rules cannot prove it either (checked here); where they can, a
  manual-trusting answer is their proof, which is the trap, and the spec must give it.
"""
from __future__ import annotations

from worldspec.compiler.common import (honest_floors, id_order, label_counts, naive_solved, recall_only_score,
                                       report_header, rule_tables)
from worldspec.compiler.proof import generate


def find_witness(world, rule_id: str, limit: int = 300) -> str | None:
    """A proof whose verdict differs between the true rules and the rules with rule_id knocked out."""
    true, knocked = world.true_world(), world.knockout(rule_id)
    reit, inst = world.reit_rule, world.inst_rule
    for schema in (true.schemas[rule_id], knocked.schemas[rule_id]):
        for variant in generate.VARIANTS:
            for sigma in generate.assignments(schema, limit):
                proof = generate.rule_proof(rule_id, schema, sigma, variant, reit, world.notation,
                                            world.premise_word, world.assume_word, inst)
                if proof is not None and true.check(proof).accepted != knocked.check(proof).accepted:
                    return proof
    return None


def herring_unchanged(world, herring) -> bool:
    """The herring's schema is its base one, and its one-rule proofs get the same verdicts."""
    rid = herring.target.split(" ", 1)[1]
    true, base = world.true_world(), world.base_world()
    a, b = true.schemas.get(rid), base.schemas.get(rid)
    if a is None or b is None or a.canonical() != b.canonical():
        return False
    reit, inst = world.reit_rule, world.inst_rule
    for variant in generate.VARIANTS:
        for sigma in generate.assignments(b, 60):
            proof = generate.rule_proof(rid, b, sigma, variant, reit, world.notation, world.premise_word,
                                        world.assume_word, inst)
            if proof is not None and true.check(proof).accepted != base.check(proof).accepted:
                return False
    return True


def certify(world, progress=None) -> dict:
    """Run every check on a proof world; `problems` is empty exactly when it is certified."""
    say = progress or (lambda msg: None)
    true, base = world.true_world(), world.base_world()
    problems: list[str] = []
    say("checking worked examples")
    for e in true.examples:
        if not true.check(e.program).accepted:
            problems.append(f"example {e.id} is not accepted: {e.output}")
    say("checking reference and naive answers")
    requires = {}
    unprovable = []
    for t in true.tasks:
        data = true.task_data[t.id]
        references = data.solutions or (t.solution,)
        for n, answer in enumerate(references, start=1):
            v = true.verify(t, answer)
            if not v.passed:
                which = "the reference answer" if len(references) < 2 else f"reference answer {n}"
                problems.append(f"task {t.id}: {which} fails in the true world: {v.detail}")
        if t.naive:
            v = base.verify(t, t.naive)
            if not v.passed and base.is_decline(t.naive) and base.search(t.id).found:
                problems.append(f"task {t.id}: the manual's rules prove its goal, so a manual-trusting answer is "
                                f"that proof (the trap), not a decline: give it as naive \"\"\"...\"\"\":\n"
                                f"{base.search(t.id).proof.rstrip()}")
            elif not v.passed:
                problems.append(f"task {t.id}: the naive answer fails under the manual's rules: {v.detail}")
        if data.unprovable:
            say(f"certifying {t.id} unprovable")
            out = true.search(t.id)
            entry = {"task": t.id, "bounds": {"name": data.bounds_name, **data.bounds.as_dict()},
                     "nodes": out.nodes, "complete": out.complete, "found": out.found,
                     "universe": out.universe, "contexts": out.contexts}
            unprovable.append(entry)
            if out.found:
                problems.append(f"task {t.id} is designated unprovable, but the search proves it:\n{out.proof}")
            elif not out.complete:
                problems.append(f"task {t.id} is not certified unprovable: the search hit its node bound "
                                f"({data.bounds.nodes} nodes) before finishing")
        say(f"knockouts for {t.id}")
        requires[t.id] = sorted(world.requires(t), key=id_order)
    recall_only = recall_only_score(true)
    rules, herrings = rule_tables(world, requires, find_witness, herring_unchanged, problems, say,
                                  unobservable="no one-rule proof tells it apart from its base",
                                  answers="reference proof")
    floor = naive_solved(true)
    refusals = [tid for tid in floor if true.is_decline(true.task(tid).naive)]
    unprovrec = manual_unprovrec(true)
    notes = _notes(unprovable) + [
        f"recall-only floor: {len(floor)} of {len(true.tasks)} tasks ({recall_only}%), {len(refusals)} of them "
        f"refusals{': ' + ', '.join(refusals) if refusals else ''}",
        f"manual-trusting UnprovRec: {unprovrec}% of {len(true.unprovable_tasks)} unprovable goals declined"
        if unprovrec is not None else "manual-trusting UnprovRec: no unprovable goals"]
    honest_floors(true, requires, world.rule_allow, {tid: d.allow for tid, d in true.task_data.items() if d.allow},
                  problems, notes, language=world.language)
    return {**report_header(world, true, recall_only), "rule_table": rules, "herring_table": herrings,
            "requires": requires, "labels": label_counts(true.tasks), "unprovable": unprovable,
            "recall_only_tasks": floor, "recall_only_refusals": refusals, "manual_unprovrec": unprovrec,
            "notes": notes, "problems": problems}


def manual_unprovrec(true) -> float | None:
    """UnprovRec of the manual-trusting agent (runner/agents.py `manual`, which answers every task
    with its naive answer): the percent of designated unprovable goals it declines correctly.
    None when the world has no unprovable goal. ExplorationBench reports UnprovRec as a system's
    rate of correct refusal on unprovable theorems (paper, section 4 table note)."""
    goals = true.unprovable_tasks
    if not goals:
        return None
    right = sum(true.correct_refusal(tid, true.task(tid).naive) for tid in goals)
    return round(100.0 * right / len(goals), 1)


def _notes(unprovable: list) -> list[str]:
    out = []
    for u in unprovable:
        b = u["bounds"]
        state = ("certified unprovable" if u["complete"] and not u["found"] else
                 "PROVABLE" if u["found"] else "NOT certified (node bound hit)")
        out.append(f"{'ok ' if state.startswith('certified') else 'BAD'} {u['task']:<6} {state} within "
                   f"size {b['size']}, depth {b['depth']}, lines {b['lines']} ({u['nodes']} of {b['nodes']} nodes, "
                   f"{u['universe']} formulas)")
    return out
