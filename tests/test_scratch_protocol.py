"""A run protocol added from outside the runner (issue 25): registered by the test, run by `worldspec run`,
reported by `worldspec report`, with no runner module edited.

The scratch protocol `quiz` asks each system every task of one world once, in a conversation of its own, and
grades the reply with the world's grader; its layout prints each system's share of right answers. Its world
is a tally world (tests/tinykind.py) whose kind, `quiztally`, names the protocol.
"""
from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
import tinykind
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import KINDS, register_kind
from worldspec.compiler.api import Kind
from worldspec.runner import outputs
from worldspec.runner.models import Model, Reply, Request
from worldspec.runner.protocols import PROTOCOLS, Plan, register_protocol
from worldspec.runner.protocols.base import fingerprint
from worldspec.runner.report import Layout, ReportError, num, table

TALLY = Path(__file__).parent / "worlds" / "tally.world"


@attrs.frozen(eq=False)
class QuizTally(tinykind.TallyWorld):
    """A tally world run by the quiz protocol."""

    @property
    def protocol(self) -> str:
        return "quiz"


def compile_quiz(spec, seed=None):
    world = tinykind.compile_spec(spec, seed)
    return QuizTally(**{a.name: getattr(world, a.name) for a in attrs.fields(tinykind.TallyWorld)})


class Knower(Model):
    """Answers every task with its solution (it reads the world: a scripted player, not an explorer)."""

    def __init__(self, world, name: str, right: bool):
        self.world, self.name, self.model_id, self.right = world, name, name, right

    async def complete(self, request: Request) -> Reply:
        task = next(t for t in self.world.tasks if t.id == request.purpose[5:])
        return Reply(content=task.solution if self.right else task.naive)


@attrs.define
class QuizLineup:
    world: object
    models: list

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.models)

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.model_id for m in self.models)

    def jobs(self) -> list[str]:
        return [f"quiz:{m.name}" for m in self.models]

    def plan(self) -> Plan:
        n = len(self.world.tasks)
        return Plan(f"{self.world.name}: {n} questions per system", ("system", "calls<="),
                    tuple((m.name, n) for m in self.models), n * len(self.models))

    async def run(self, rt, out: Path) -> list[dict]:
        records = []
        grader = rt.grader(self.world)
        for m in self.models:
            conv = f"quiz:{m.name}"
            right = 0
            for task in self.world.tasks:
                reply = await rt.call(m, Request(({"role": "user", "content": task.prompt},), purpose=f"task:{task.id}",
                                                 meta={"conv": conv}))
                right += bool((await grader.verify(task, reply.content or "")).passed)
            rec = {"world": self.world.name, "system": m.name, "condition": "quiz", "trajectory": 1,
                   "right": right, "asked": len(self.world.tasks), "status": "complete", "valid": True}
            rt.emit_record("trajectory", conv, conv, rec)
            records.append(rec)
        return records


def quiz_summary(records, header) -> dict:
    return {"results": [{"world": r["world"], "system": r["system"], "condition": r["condition"],
                         "share": 100.0 * r["right"] / r["asked"]} for r in records]}


def quiz_headline(summary) -> list[str]:
    return table(("system", "right %"), [(r["system"], num(r["share"])) for r in summary["results"]])


class Quiz:
    name = "quiz"
    many_worlds = False
    config_keys: tuple[str, ...] = ()
    layout = Layout("worldspec run report: quiz", "quizzes", quiz_summary, quiz_headline,
                    lambda summary, images: ["## Right answers", ""] + quiz_headline(summary))

    def default_agents(self, worlds) -> tuple[str, ...]:
        return ("knower", "guesser")

    def lineup(self, worlds, models, agents, config) -> QuizLineup:
        (world,) = worlds
        return QuizLineup(world, list(models) + [Knower(world, a, a == "knower") for a in agents])

    def world_identity(self, worlds, name: str) -> dict:
        (world,) = worlds
        return {"name": name, "seed": world.seed,
                "fingerprint": fingerprint([(t.id, t.prompt, t.solution) for t in world.tasks])}

    def exploration_calls(self, world) -> int:
        return 0


@pytest.fixture
def quiz(tmp_path):
    """Kind `quiztally` and protocol `quiz`, registered for one test and gone after it."""
    assert "quiztally" not in KINDS and "quiz" not in PROTOCOLS
    register_kind(Kind("quiztally", compile_quiz, "a tally world asked as a quiz"))
    register_protocol(Quiz())
    spec = tmp_path / "quiz.world"
    spec.write_text(TALLY.read_text().replace("kind tally", "kind quiztally"))
    try:
        yield spec
    finally:
        KINDS.pop("quiztally", None)
        PROTOCOLS.pop("quiz", None)


def test_a_scratch_protocol_runs_end_to_end_and_writes_its_report(quiz, tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", str(quiz), "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["protocol"] == "quiz" and summary["validity"]["valid"]
    shares = {x["system"]: x["share"] for x in summary["results"]}
    # the tally world's naive answers are right on the one task no rule touches (T2)
    assert shares == {"knower": 100.0, "guesser": pytest.approx(100 / 3)}
    md = (out / "report.md").read_text()
    assert md.startswith("# worldspec run report: quiz") and "## Right answers" in md and "| knower | 100.0 |" in md
    # the report command lays out the run again, through the same registered layout
    again = CliRunner().invoke(main, ["report", str(out), "--out", str(tmp_path / "again")])
    assert again.exit_code == 0, again.output
    assert (tmp_path / "again" / "report.md").read_text() == md
    # resuming a finished run asks nothing again
    r = CliRunner().invoke(main, ["run", str(quiz), "--out", str(out), "--resume", "--quiet"])
    assert r.exit_code == 0, r.output


def test_a_protocol_is_registered_once_and_an_unknown_one_is_a_report_error(quiz):
    with pytest.raises(ValueError, match="registered already"):
        register_protocol(Quiz())
    with pytest.raises(TypeError, match="needs `layout`"):
        register_protocol(type("NoLayout", (), {"name": "x", "many_worlds": False, "config_keys": ()})())
    with pytest.raises(ReportError, match="no report for runs of protocol 'nope'"):
        outputs.layout_for("nope")
    assert outputs.layout_for("quiz").noun == "quizzes"
