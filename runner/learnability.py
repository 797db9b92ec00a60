"""A world's learnability: what its built-in LLM-free explorer scores within the world's own budget.

`learnability(world, seed)` plays the world's explorer offline, never reading what a model could not (the
explorers build their state from the manual, the declared domains or syntax, and the feedback):

- a program world (api.Explorable, and no proof world): the explorer's session sends the milestone protocol's calls
  (`round_slots`: the world's rounds of calls, its unit cap per call), reads the world's feedback as the
  protocol passes it (`fb.text` or "(no output)"), and at the last milestone states its rule report and
  answers every task; graded as a run grades them (`read_answer`, `World.verify`, `grade_rule_report`). The
  explorer is deterministic, so every one of the budget's answers to a task is the same: the figure equals
  the last milestone of `worldspec run WORLD --agent explorer` (tests/test_learnability.py checks it);
- a proof world (one with decline forms and an `explorer`, compiler/proof/explorer.py): `proof_learnability`
  plays the same milestone rounds of one-unit proof probes, reads the checker's verdict as the tool message
  carries it, and grades its last-milestone report and answers as a run grades them; it adds UnprovRec (the
  correct refusals over the goals designated unprovable);
- a black box: `box_learnability` plays the box explorer (runner/boxexplorer/) against the box with its
  turn@shot budget and grades its answers with the box's own (lenient) grading: a test passes when some
  shot's answer is right;
- a game box (tests played round by round): the box explorer plays the turn@shot protocol itself, offline,
  in a scratch run folder that is deleted after (`game_learnability`), under lenient grading;
- any other kind: "not measured (no explorer for KIND)".

It is the lower bound `worldspec check --learnability` prints: a low score says the explorer's families miss
the world, not that the world is unlearnable.
"""
from __future__ import annotations

import asyncio
import tempfile

import attrs

from worldspec.compiler.api import Explorable, explorer_of

from .answers import fenced, grade_rule_report, read_answer, reportable_rules
from .boxexplorer.strategies import run_box, strategy_for
from .boxexplorer.view import box_view
from .config import RunConfig
from .experiment import run_experiment
from .protocols.conditions import round_slots


@attrs.frozen
class Learnability:
    """The explorer's accuracy (percent) on one world within its budget, or the reason there is none.
    Boxes: `turns`@`shots`; program worlds: `turns` calls, `rules_correct` of `rules_total` rules stated
    correctly, and for each rule missed why (`missed`: {rule id: reason})."""

    accuracy: float | None
    turns: int = 0
    shots: int = 0
    strategy: str = ""
    reason: str = ""
    kind: str = ""
    rules_correct: int | None = None
    rules_total: int | None = None
    missed: dict = attrs.field(factory=dict)
    scored: bool = False  # test games: each scores a share of its optimum, not pass or fail
    refusals: int | None = None  # proof worlds: correct refusals (UnprovRec's numerator) ...
    unprovable: int | None = None  # ... and the goals designated unprovable (its denominator)

    def line(self) -> str:
        """The line `check` prints."""
        if self.accuracy is None:
            return f"learnability: not measured ({self.reason})"
        if self.rules_total is not None:
            line = (f"learnability: the explorer ({self.strategy}) answers {self.accuracy:.1f}% of the tasks "
                    f"within {self.turns} calls; {self.rules_correct}/{self.rules_total} rules stated correctly")
            missed = "; ".join(f"{r}: {why}" for r, why in self.missed.items())
            line += f" (missed {missed})" if missed else ""
            if self.unprovable:
                line += (f"; UnprovRec {100.0 * self.refusals / self.unprovable:.1f}% ({self.refusals}/"
                         f"{self.unprovable} unprovable goals declined)")
            return line
        if self.scored:
            return (f"learnability: the explorer ({self.strategy}) scores {self.accuracy:.1f}% of the test "
                    f"games' optimum within {self.turns}@{self.shots} (each game's best shot, lenient grading)")
        return (f"learnability: the explorer ({self.strategy}) answers {self.accuracy:.1f}% of the tests "
                f"within {self.turns}@{self.shots}")

    def as_json(self) -> dict:
        """The measurement as `check --json` reports it."""
        return attrs.asdict(self)


def box_query(world):
    """The box as `run_box`'s query function: a puzzle's tests each in a session of their own, as turn@shot
    explores them; a rejected input is no observation."""
    sessions: dict = {}

    def query(test_id, text):
        if test_id not in sessions:
            sessions[test_id] = world.session(world.task(test_id) if test_id else None)
        fb = sessions[test_id].probe(text)
        return None if fb.status == "rejected" else fb.text
    return query


def learnability(world, seed: int = 0) -> Learnability:
    """The learnability of any world (see the module docstring); `seed` seeds the explorer."""
    kind = getattr(world, "kind", "?")
    # proof worlds first: they are Explorable too (information per probe), but their explorer plays proofs
    if hasattr(world, "unprovable_tasks") and explorer_of(world, seed) is not None:
        return proof_learnability(world, seed)
    if isinstance(world, Explorable):
        return program_learnability(world, seed)
    if getattr(world, "protocol", "") != "turn@shot":  # what the box explorer speaks (compiler.api PROTOCOLS)
        return Learnability(None, reason=f"no explorer for {kind}", kind=kind)
    if any(t.shape == "play" for t in world.tasks):
        return game_learnability(world, seed)
    return box_learnability(world, seed)


def box_learnability(world, seed: int = 0) -> Learnability:
    """The explorer's accuracy on this black box within its budget (see the module docstring)."""
    kind = getattr(world, "kind", "?")
    if isinstance(world, Explorable) or getattr(world, "protocol", "") != "turn@shot" \
            or any(t.shape == "play" for t in world.tasks):
        return learnability(world, seed)
    view = box_view(world, seed=seed)
    strategy = strategy_for(view)
    answers = run_box(view, box_query(world), strategy)
    passed = sum(any(world.verify(t, a, "lenient").passed for a in answers[t.id]) for t in world.tasks)
    return Learnability(100.0 * passed / max(1, len(world.tasks)), view.turns, view.shots, strategy.name,
                        kind=kind)


def program_learnability(world, seed: int = 0) -> Learnability:
    """The program explorer's last-milestone accuracy and rule report within the world's budget."""
    session = explorer_of(world, seed)
    calls = 0
    for slots in round_slots(world.budget):  # the milestone protocol's rounds; a rejected call spends its slot
        for _ in range(slots):
            program = session.next_probe()
            fb = world.probe(program)
            session.observe(program, fb.text or "(no output)")  # what the tool message carries
            calls += 1
    passed = sum(bool(world.verify(t, read_answer(world, t, fenced(session.answer(t)))).passed)
                 for t in world.tasks)
    report = grade_rule_report(world, fenced(session.report()))
    rules = reportable_rules(world)
    correct = set(report["correct"])
    return Learnability(100.0 * passed / max(1, len(world.tasks)), calls, world.budget.answers,
                        "information gain", kind=world.kind, rules_correct=len(correct), rules_total=len(rules),
                        missed={r.id: why_missed(world, session, r) for r in rules if r.id not in correct})


def proof_learnability(world, seed: int = 0) -> Learnability:
    """The proof explorer's last-milestone accuracy, rule report and UnprovRec within the world's budget."""
    session = explorer_of(world, seed)
    calls = 0
    for slots in round_slots(world.budget):
        for _ in range(slots):
            proof = session.next_probe()
            fb = world.probe(proof)
            session.observe(proof, fb.text)
            calls += 1
    answers = {t.id: read_answer(world, t, fenced(session.answer(t))) for t in world.tasks}
    passed = sum(bool(world.verify(t, answers[t.id]).passed) for t in world.tasks)
    refusals = sum(bool(world.correct_refusal(tid, answers[tid])) for tid in world.unprovable_tasks)
    report = grade_rule_report(world, fenced(session.report()))
    rules = reportable_rules(world)
    correct = set(report["correct"])
    return Learnability(100.0 * passed / max(1, len(world.tasks)), calls, world.budget.answers,
                        "one-rule tests", kind=world.kind, rules_correct=len(correct), rules_total=len(rules),
                        missed={r.id: why_proof_missed(world, session, r) for r in rules if r.id not in correct},
                        refusals=refusals, unprovable=len(world.unprovable_tasks))


def why_proof_missed(world, session, rule) -> str:
    """Why the proof explorer did not state `rule` right (read here, after it is done): no variant of the
    manual's schema in its space is the rule, several survive (the budget ran out first), or the verdicts
    left a hypothesis that is not the rule."""
    rid = rule.id
    hyps = session.space.get(rid, ())
    right = {h.id for h in hyps if not h.is_base and world.grade_equation(rid, h.show(world.notation))}
    if not right:
        pruned = " and the verdicts pruned every variant" if rid in session.unexplained else ""
        return f"outside its families (no variant of the manual's schema states it{pruned})"
    left = set(session.weights.get(rid, ()))
    if left & right and len(left) > 1:
        return f"budget spent ({len(left)} hypotheses left, the rule among them)"
    return "its surviving hypothesis is not the rule"


def why_missed(world, session, rule) -> str:
    """Why the explorer did not state `rule` right (the check reads the rule here, after the explorer is done):
    no hypothesis of its space states it (outside its families), it survives among others (the budget ran out
    first), or the feedback pruned it while a hypothesis that is not the rule survived."""
    target = rule.target
    space = getattr(session, "space", {}).get(target, ())

    def states(h) -> bool:
        try:
            return bool(world.grade_equation(rule.id, h.equation))
        except Exception:  # noqa: BLE001 — an ungradable hypothesis does not state the rule
            return False
    right = {h.id for h in space if not h.is_base and states(h)}
    if not right:
        return f"outside its families (no hypothesis for {target} states it)"
    left = set(session.weights.get(target, ()))
    if left & right and len(left) > 1:
        return f"budget spent ({len(left)} hypotheses left for {target}, the rule among them)"
    return f"its surviving hypothesis for {target} is not the rule"


def game_learnability(world, seed: int = 0) -> Learnability:
    """A game box: `worldspec run BOX --agent explorer` under lenient grading, offline, in a scratch folder;
    its accuracy is the run's (each test game's best shot)."""
    config = RunConfig(trajectories=1, grading="lenient", world_seed=getattr(world, "seed", None))
    with tempfile.TemporaryDirectory(prefix="worldspec-learnability-") as out:
        result = asyncio.run(run_experiment([world], [], config, out, agents=("explorer",)))
    record = result.trajectories[0]
    return Learnability(float(record["endpoint"]), int(record["turns"]), int(record["shots"]), "opponent models",
                        kind=world.kind, scored=True)
