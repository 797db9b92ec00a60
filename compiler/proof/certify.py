"""Certify a proof world: the report keys of compiler/certify.py, plus `unprovable`.

- every patched rule observable: a one-rule proof that one system accepts and the
  other rejects (the true rules against the rule knocked back to its base);
- every patched rule required by some task (knockout);
- every herring unchanged: the same schema, and the same verdict on its one-rule proofs;
- every worked example and reference proof accepted, every naive answer passing
  under the manual's rules, and the recall-only score;
- every unprovable goal certified: the bounded search runs to its fixpoint within
  its node bound and finds no proof (the report gives bounds, nodes, completeness).
"""
from __future__ import annotations

from worldspec.compiler.program.certify import label_counts, recall_only_score, rule_tables
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
        v = true.verify(t, t.solution)
        if not v.passed:
            problems.append(f"task {t.id}: the reference answer fails in the true world: {v.detail}")
        if t.naive:
            v = base.verify(t, t.naive)
            if not v.passed:
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
        requires[t.id] = sorted(world.requires(t), key=_id_key)
    recall_only = recall_only_score(true)
    rules, herrings = rule_tables(world, requires, find_witness, herring_unchanged, problems, say,
                                  unobservable="no one-rule proof tells it apart from its base",
                                  answers="reference proof")
    labels = label_counts(true.tasks)
    return {
        "world": world.name, "kind": world.kind, "seed": world.seed, "default_seed": world.default_seed,
        "params": {k: v for k, v in world.params}, "rules": len(true.rules), "herrings": len(true.herrings),
        "tasks": len(true.tasks), "examples": len(true.examples), "recall_only": recall_only,
        "rule_table": rules, "herring_table": herrings, "requires": requires, "labels": labels,
        "unprovable": unprovable, "notes": _notes(unprovable), "problems": problems,
    }


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


def _id_key(rid: str):
    digits = "".join(ch for ch in rid if ch.isdigit())
    return (rid.rstrip("0123456789"), int(digits) if digits else 0, rid)
