"""The built-in explorer (compiler/program/explorer.py) and information per probe (docs/explorer.md)."""
from __future__ import annotations

import json
import os
import shutil

import attrs
import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler.api import Explorable, explorer_of
from worldspec.compiler import common
from worldspec.compiler.build import load_world
from worldspec.compiler.program import information
from worldspec.compiler.program.hypotheses import build_space, read_families, FamilyError
from worldspec.compiler.program.repair import declared_bools, declared_types, operators_as_calls, read_wrapped
from worldspec.compiler.program.spec import compile_spec
from worldspec.parser import parse_spec
from worldspec.runner import metrics
from worldspec.runner.agents import default_milestone_agents

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "worlds", "demo.world")


def explore(world, calls=None, seed=0):
    ex = explorer_of(world, seed)
    probes = []
    for _ in range(calls or world.budget.max_calls):
        p = ex.next_probe()
        fb = world.probe(p)
        probes.append((p, fb.text, fb.units))
        ex.observe(p, fb.text)
    return ex, probes


def stated_correctly(world, ex) -> set[str]:
    out = set()
    for line in ex.report_lines():
        target, equation = line.split("(", 1)[0], line.split(" = ", 1)[1]
        out |= {r.id for r in world.rules if r.target == target and world.grade_equation(r.id, equation)}
    return out


def test_the_space_is_built_from_the_manual_alone():
    """Stripping the hidden rules (and their parameters' uses) from the spec leaves the space unchanged."""
    for path in (os.path.join(ROOT, "worlds", "demo.world"), os.path.join(ROOT, "worlds", "aliencode.world"),
                 os.path.join(ROOT, "tests", "worlds", "lang", "meta.world"),
                 os.path.join(ROOT, "tests", "worlds", "lang", "state.world"),  # hook rules
                 os.path.join(ROOT, "tests", "worlds", "lang", "control.world"),
                 os.path.join(ROOT, "tests", "worlds", "lang3", "pylike.world")):  # operator and syntax rules
        spec = parse_spec(open(path).read(), path)
        full = compile_spec(spec)
        stripped = compile_spec(attrs.evolve(spec, rules=(), herrings=(), tasks=(), examples=()))
        assert not stripped.rules and full.rules
        a, b = build_space(full), build_space(stripped)
        assert a.keys() == b.keys()
        for t in a:
            assert [(h.id, h.equation) for h in a[t]] == [(h.id, h.equation) for h in b[t]]


def test_every_target_keeps_its_manual_line_first_and_hypotheses_state_in_the_equation_notation():
    w = load_world(DEMO)
    space = build_space(w)
    assert set(space) == set(w.builder.base)
    for t, hs in space.items():
        assert hs[0].is_base and hs[0].family == "base"
        assert len({h.id for h in hs}) == len(hs)  # ids are unique
        for h in hs:
            kind, name = t.split(" ", 1)
            assert h.line().startswith(f"{kind} {name}(")


def test_a_world_adds_families_in_its_own_file(tmp_path):
    """An author extends the families without Python: NAME.families beside NAME.world."""
    shutil.copy(DEMO, tmp_path / "demo.world")
    before = build_space(load_world(str(tmp_path / "demo.world")))
    (tmp_path / "demo.families").write_text(
        "family tripled_result\n  on op\n  returns int\n  body base * 3\n  scopes top\n")
    after = build_space(load_world(str(tmp_path / "demo.world")))
    assert not any(h.family == "tripled_result" for hs in before.values() for h in hs)
    tripled = [h for h in after["op SHATTER"] if h.family == "tripled_result"]
    assert [h.equation for h in tripled] == ["(* (* a b) 3)"]


def test_a_broken_families_file_names_its_line():
    with pytest.raises(FamilyError, match="f.spec:2"):
        read_families("family x\n  colour blue\n", "f.spec")


def test_the_explorer_learns_the_demo_world_within_its_budget():
    w = load_world(DEMO)
    ex, probes = explore(w)
    assert len(probes) == w.budget.max_calls
    assert all(0 < units <= w.budget.units_per_call for _, _, units in probes)
    assert stated_correctly(w, ex) == {r.id for r in w.rules}
    answered = sum(w.verify(t.id, ex.answer(t)).passed for t in w.tasks)
    assert answered >= len(w.tasks) - 2


def test_the_explorer_is_deterministic_under_a_seed():
    w = load_world(DEMO)
    _, a = explore(w, calls=6)
    _, b = explore(w, calls=6)
    assert a == b


def test_predictions_run_the_program_in_the_believed_world():
    w = load_world(DEMO)
    ex, _ = explore(w)
    believed = ex.believed_world()
    program = "EMIT(PLUCK(STRAND(4, 5, 6), -1))"
    assert ex.predict(program) == "\n".join(believed.execute(program).lines) == "8"
    assert ex.predict(program) == w.probe(program).text  # it learned PLUCK and the literal offset
    assert ex.predict("EMIT(PLUCK(STRAND(4), 7))").startswith("error: line 1")


def test_information_per_probe_counts_repeats_as_removing_nothing():
    w = load_world(DEMO)
    ex = explorer_of(w)
    p = ex.next_probe()
    fb = w.probe(p)
    scored = w.information([(p, fb.text, fb.units), (p, fb.text, fb.units), ("EMIT(", "parse error", 0)])
    first, repeat, broken = scored
    assert first.bits > 0 and first.best >= first.bits
    assert repeat.bits == 0 and repeat.best > 0  # the same probe again teaches nothing
    assert broken.units == 0 and broken.bits == 0
    summary = metrics.information_summary([attrs.asdict(r) for r in scored])
    assert summary["removed_nothing"] == [2]
    assert summary["calls"] == 2 and summary["efficiency"] < 1


def test_information_scored_round_by_round_carries_on_and_equals_one_scoring(monkeypatch):
    """A trajectory's information is scored after each round; each call carries on from the prefix
    already read (no probe is planned twice) and the records equal one scoring of the whole."""
    w = load_world(DEMO)
    ex = explorer_of(w)
    probes = []
    for _ in range(4):
        p = ex.next_probe()
        fb = w.probe(p)
        ex.observe(p, fb.text)
        probes.append((p, fb.text, fb.units))
    fed = []
    feed = information.Scorer.feed
    monkeypatch.setattr(information.Scorer, "feed", lambda self, ps: (fed.append(len(ps)), feed(self, ps))[1])
    assert w.information(probes[:2]) and w.information(probes[:3])
    round_by_round = w.information(probes)
    assert fed == [2, 1, 1]
    assert w.information(probes) == round_by_round and fed == [2, 1, 1]  # the whole again: no work
    assert load_world(DEMO).information(probes) == round_by_round and fed[-1] == 4  # a fresh world
    # past LIVE_SCORERS trajectories in flight, an evicted one is read again from its first probe
    monkeypatch.setattr(common, "LIVE_SCORERS", 1)
    w, fed[:] = load_world(DEMO), []
    other = [(p, "0", u) for p, _, u in probes]
    assert w.information(probes[:2]) and w.information(other[:2])
    assert w.information(probes) == round_by_round and fed == [2, 2, 4]


def test_a_models_probe_is_read_as_a_whole_program():
    """A probe the explorer did not write: each target it uses is pruned with the others at their most
    probable hypotheses."""
    w = load_world(DEMO)
    ex = explorer_of(w)
    before = len(ex.weights["hook int_literal"])
    bits = ex.observe("EMIT(10)", w.probe("EMIT(10)").text)
    assert bits > 0 and len(ex.weights["hook int_literal"]) < before
    assert ex.observe("EMIT(10)", w.probe("EMIT(10)").text) == 0  # nothing new the second time


def test_worlds_without_an_explorer_say_so():
    proof = load_world("alienlogic")
    assert isinstance(proof, Explorable)  # a built-in explorer and information per probe since issue 26
    assert explorer_of(proof) is not None  # (tests/test_proof_explorer.py, tests/test_proof_information.py)
    assert "explorer" not in default_milestone_agents(proof)  # named, not a default agent
    assert explorer_of(load_world("worlds/interactive/math/m01-exactly-one-divisor.world")) is None
    assert "explorer" in default_milestone_agents(load_world(DEMO))


def run_demo(tmp_path, name: str, *args) -> tuple[list[dict], str]:
    out = tmp_path / name
    r = CliRunner().invoke(main, ["run", DEMO, *args, "-n", "1", "--no-cache", "--out", str(out)])
    assert r.exit_code == 0, r.output
    records = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    return records, (out / "report.md").read_text()


def information_rows(report: str) -> list[str]:
    start = report.index("Information per probe")
    return [line for line in report[start:].splitlines() if line.startswith("| Demo |")]


def test_a_models_trajectory_gets_bits_through_the_fake_server(fake_openai, tmp_path, monkeypatch):
    """report.md shows bits, bits/call and efficiency for a model's trajectory (a model on the fake server)."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")
    w = load_world(DEMO)
    probes = iter(["EMIT(10)", "EMIT(PLUCK(STRAND(4, 5, 6), 0))", "EMIT(10)", "EMIT(SHATTER(2, 3))"] * 4)

    def responder(body):  # a model that probes literals and two operators, once repeating itself
        msgs = body["messages"]
        if body.get("tools") and msgs[-1]["role"] == "user":
            return {"content": None, "tool_calls": [(body["tools"][0]["function"]["name"],
                                                     json.dumps({"program": next(probes)}))], "usage": (50, 5)}
        if body.get("tools"):
            return {"content": "Enough for this round.", "tool_calls": [], "usage": (60, 4)}
        return {"content": "```\nUNKNOWN\n```", "tool_calls": [], "usage": (70, 3)}

    fake_openai.responder = responder
    assert w.budget.rounds == 4
    records, report = run_demo(tmp_path, "model", "--model", "openai/fake-explorer", "--api-base",
                               fake_openai.base_url, "--max-connections", "4", "--answers", "1",
                               "--retry-delay", "0.001")
    (rec,) = records
    info = rec["information"]
    assert info["calls"] == 4
    assert info["bits"] > 0 and 0 < info["efficiency"] < 1
    assert 3 in info["removed_nothing"]  # EMIT(10) again
    (row,) = information_rows(report)
    assert "fake-explorer" in row and f"{info['bits']:.1f}" in row


def test_the_explorer_agent_gets_bits_and_the_best_probe_is_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")
    records, report = run_demo(tmp_path, "explorer", "--agent", "explorer", "--agent", "manual")
    info = {rec["system"]: rec["information"] for rec in records}
    explorer, manual = info["explorer"], info["manual"]
    assert explorer["efficiency"] >= 0.99  # the scorer's best probe is the one the explorer sent
    assert explorer["bits"] > manual["bits"] and explorer["bits_per_call"] > 0
    assert len(information_rows(report)) == 2
    rec = next(r for r in records if r["system"] == "explorer")
    assert rec["milestones"][-1]["accuracy"] > rec["milestones"][0]["accuracy"]  # its curve rises


@pytest.mark.slow
def test_aliencode_default_seed_accuracy_is_recorded():
    """The numbers docs/explorer.md records (rules out of 31, M4 accuracy) at the default seed."""
    w = load_world("aliencode")
    ex, _ = explore(w)
    assert len(stated_correctly(w, ex)) >= 30  # 31/31 at the default seed
    answered = sum(w.verify(t.id, ex.answer(t)).passed for t in w.tasks)
    assert answered / len(w.tasks) >= 0.876  # the target; docs/explorer.md records 63/70


def test_repair_reads_declared_truth_values_and_wrapped_variables_outside_strings():
    assert declared_bools("on private inputs: xs (list), ok (bool), flag (bool).") == {"ok", "flag"}
    text = 'EMIT(FUSE(c, x), "c", f(c))'
    assert read_wrapped(text, {"c"}, "PLUCK") == 'EMIT(FUSE(PLUCK(c, 0), x), "c", f(PLUCK(c, 0)))'
    assert read_wrapped(text, {"c", "f"}, "NEGATE", unary=True) == 'EMIT(FUSE(NEGATE(c), x), "c", f(NEGATE(c)))'


LANG = os.path.join(ROOT, "tests", "worlds")


def test_infix_operators_are_written_as_their_ops_calls_under_the_manuals_table():
    """The manual's grouping made explicit (pylike's P5 regroups `-` from the right in the true world)."""
    w = load_world(os.path.join(LANG, "lang3", "pylike.world"))
    manual = w.base_world().surface
    ops = {o.op for o in manual.operators}
    assert operators_as_calls(manual, "print(a - b - c)", ops) == "print(SUB(SUB(a, b), c))"
    assert operators_as_calls(manual, "if n < 0:\n    n = -(n + 1) * 2\nprint(n % 3, LEN(xs))", ops) \
        == "if LT(n, 0):\n    n = MUL(NEG(ADD(n, 1)), 2)\nprint(MOD(n, 3), LEN(xs))"
    assert operators_as_calls(manual, "print(2 ** n)", {"MOD"}) == "print(2 ** n)"  # only the ops asked for
    assert operators_as_calls(manual, "print(1 +", ops) == "print(1 +"  # what does not parse is left alone
    assert declared_types("values: g (list[list[int]]), s (str), n (int). It") \
        == {"g": "list[list[int]]", "s": "str", "n": "int"}


def learned(path):
    from worldspec.runner.learnability import learnability
    return learnability(load_world(path))


def test_the_explorer_learns_pylike_and_meta():
    """docs/explorer.md's program-world table: op families for and/unary minus/rounding up, and repairs
    that reach infix operators (pylike 0.0% -> 70.0%, meta 66.7% with 4/4 rules)."""
    pylike = learned(os.path.join(LANG, "lang3", "pylike.world"))
    assert pylike.accuracy >= 60.0 and pylike.rules_correct >= 4  # P1-P4; P5 is a syntax rule
    meta = learned(os.path.join(LANG, "lang", "meta.world"))
    assert meta.accuracy >= 60.0 and meta.rules_correct == 4


@pytest.mark.slow
def test_the_explorer_repairs_positions_and_integer_conditions_in_loops():
    """lang3/loops: 15.4% -> 38.5% (K1, Q1, Q2 repaired besides Z1, Z2), 5 of 6 rules."""
    loops = learned(os.path.join(LANG, "lang3", "loops.world"))
    assert loops.accuracy >= 38.0 and loops.rules_correct >= 5
