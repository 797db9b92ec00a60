"""Information per probe on proof worlds (compiler/proof/information.py, docs/explorer.md "Proof worlds"): the
bits each proof of a trajectory removed from the proof explorer's hypothesis space, and the bits the
explorer's own best pack was expected to remove at that point."""
from __future__ import annotations

import json
import os

import attrs
import pytest

from test_proof_world import MINI
from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.api import Explorable
from worldspec.compiler.proof.information import ProofScorer
from worldspec.parser import parse_spec
from worldspec.runner import metrics
from worldspec.runner.learnability import learnability

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALIENLOGIC = os.path.join(ROOT, "worlds", "alienlogic.world")


@pytest.fixture(scope="module")
def alienlogic():
    return load_world(ALIENLOGIC)


def explored(world, calls: int, seed: int = 0) -> list[tuple]:
    """(proof, verdict, units) of the explorer's first `calls` probes."""
    session, out = world.explorer(seed), []
    for _ in range(calls):
        proof = session.next_probe()
        fb = world.probe(proof)
        session.observe(proof, fb.text)
        out.append((proof, fb.text, fb.units))
    return out


def test_a_separating_proof_removes_bits_and_its_repeat_none(alienlogic):
    assert isinstance(alienlogic, Explorable)
    probes = explored(alienlogic, 2)
    first, again, second = alienlogic.information([probes[0], probes[0], probes[1]])
    assert first.units == 1 and first.bits > 0 and first.best >= first.bits
    assert again.bits == 0 and again.best > 0  # the same proof again teaches nothing, though a pack could
    assert second.bits > 0
    # a model's one-rule proof (the manual agent's generator): read line by line, and once only
    proof = next(alienlogic.probe_generator(0))
    fb = alienlogic.probe(proof)
    one, two = alienlogic.information([(proof, fb.text, fb.units)] * 2)
    assert one.bits > 0 and two.bits == 0


def test_a_proof_read_line_by_line_removes_what_its_packed_reading_does(alienlogic):
    """Another seed's explorer packs other tests, so it reads the default explorer's proofs line by line
    (observe_proof); the bits equal the test-by-test reading of the explorer that packed them."""
    probes = tuple(explored(alienlogic, 3))
    own = alienlogic.information(probes)
    other = ProofScorer(alienlogic, 5)
    assert not any(p in other.ex.layouts for p, _, _ in probes)
    other.feed(probes)
    assert [r.bits for r in other.records] == [r.bits for r in own]
    assert sum(r.bits for r in own) > 5


def test_malformed_and_refused_proofs_score_nothing_without_raising(alienlogic):
    texts = ["no proof here", "1. P &&& ((    premise\n2. Q    r12 1", "1. P    premise\n2. P    r999 1",
             "1. P    premise\n2. P    r8 7", None, "\x00" * 50]
    probes = []
    for t in texts:
        fb = alienlogic.probe(t)
        probes.append((t, fb.text, fb.units))
    scored = alienlogic.information(probes)
    assert len(scored) == len(texts) and all(r.bits == 0 for r in scored)
    assert scored[0].units == 0  # nothing was checked
    # a proof the world refused (`rejected: ...`) is charged no unit; one rejected at a line was checked
    messages = [{"role": "assistant", "tool_calls": [
        {"id": "a", "function": {"arguments": json.dumps({"proof": "1. P    premise"})}},
        {"id": "b", "function": {"arguments": json.dumps({"proof": "1. P    premise\n2. Q    r8 1"})}}]},
        {"role": "tool", "tool_call_id": "a", "content": "rejected: no numbered proof lines"},
        {"role": "tool", "tool_call_id": "b", "content": "rejected at line 2 (r8): r8 does not give Q."}]
    assert [u for _, _, u in metrics.information_probes(alienlogic, messages)] == [0, 1]


def test_proof_worlds_keep_their_own_learnability():
    """A proof world is Explorable now; learnability still plays proofs (UnprovRec is its mark)."""
    found = learnability(compile_spec(parse_spec(MINI, "mini.world")))
    assert found.strategy == "one-rule tests" and found.unprovable == 1


def test_a_run_of_the_explorer_on_alienlogic_records_information(run_world, tmp_path):
    """The runner scores every trajectory of a proof world: AlienLogic with its manual and rules whole and
    six of its tasks (the answers' searches are most of a run's time; the explorer never reads the tasks
    to build its space)."""
    spec = parse_spec(open(ALIENLOGIC).read(), ALIENLOGIC)
    world = compile_spec(attrs.evolve(spec, tasks=spec.tasks[:6]))
    res = run_world([world], [], tmp_path, agents=("explorer", "manual"), trajectories=1)
    rows = {r["system"]: r for r in res.summary["information"]}
    assert set(rows) == {"explorer", "manual"}
    assert rows["explorer"]["calls"] == 48 and rows["explorer"]["bits"] > 50
    assert 0 < rows["explorer"]["efficiency"] <= 1
    assert rows["manual"]["calls"] == 4 and rows["manual"]["bits"] > 0
    report = (tmp_path / "report.md").read_text()
    assert "Information per probe" in report and "| AlienLogic | explorer" in report
