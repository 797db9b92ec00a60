"""Pool play of the Trust Game's opponents (`lineup pool`): baselines beside every system, metrics, CIs, models,
resume. The world itself plays a round robin (tests/test_fidelity_interactive.py)."""
from __future__ import annotations

import asyncio
import json
import os
import re

from worldspec.compiler import compile_spec, load_world
from worldspec.parser import parse_spec
from worldspec.runner import sandbox
from worldspec.runner.config import RunConfig
from worldspec.runner.experiment import run_experiment
from worldspec.runner.metrics import bootstrap, pool_rates as rates
from worldspec.runner.models import Reply, RetryPolicy, ScriptedModel
from worldspec.runner.log import read_events

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRUST = os.path.join(ROOT, "worlds", "interactive", "trust.world")


def pool_trust(matches=5, seed=None, fallback="DEFECT"):
    """The Trust Game played against its pool (`lineup pool`), with `matches` per opponent and seat."""
    with open(TRUST, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"matches \d+", f"matches {matches}", text).replace("lineup round_robin", "lineup pool")
    text = text.replace('fallback "COOPERATE"', f'fallback "{fallback}"')
    return compile_spec(parse_spec(text, TRUST), seed)


def small_trust(matches=1, seed=None):
    """The pool variant with fewer matches per opponent and seat (fast tests)."""
    return pool_trust(matches, seed)


def play(world, models, agents, out, **kw):
    resume = kw.pop("resume", False)
    config = RunConfig(retry=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01), **kw)
    return asyncio.run(run_experiment([world], models, config, out, agents=agents, resume=resume)).summary


def test_the_trust_game_certifies_with_its_baselines():
    w = load_world(TRUST)
    report = w.certify()
    assert report["problems"] == []
    assert set(report["baselines"]) == {"grim", "tft", "random"}
    assert [o.name for o in w.opponents] == ["grim", "tft", "random", "allc", "alld"]
    assert w.seats == ("row", "column") and w.delta == 0.8 and w.cooperate == "COOPERATE" and w.round_robin


def test_strategies_play_the_pool_with_the_baselines_beside(tmp_path):
    w = pool_trust()
    s = play(w, [], ["allc", "alld"], tmp_path)
    assert s["validity"]["valid"]
    rows = {r["system"]: r for r in s["results"]}
    assert set(rows) == {"grim", "tft", "random", "allc", "alld"}
    assert rows["grim"]["baseline"] and rows["tft"]["baseline"] and not rows["allc"]["baseline"]
    assert rows["allc"]["cooperation_rate"] == 1.0 and rows["alld"]["cooperation_rate"] == 0.0
    assert rows["tft"]["betrayal_rate"] == 0.0  # tit-for-tat never defects right after a cooperation
    # against always-cooperate and tit-for-tat both baselines earn CC = 2 every round
    for b in ("grim", "tft"):
        assert rows[b]["per_opponent"]["allc"] == rows[b]["per_opponent"]["tft"] == 2.0
    assert rows["alld"]["per_opponent"]["allc"] == 3.0 and rows["alld"]["per_opponent"]["alld"] == 0.0
    for r in rows.values():
        lo, hi = r["score_per_round_ci"]
        assert lo <= r["score_per_round"] <= hi
        assert r["n"] == len(w.schedule())
    report = (tmp_path / "report.md").read_text()
    assert "grim (baseline)" in report and "tft (baseline)" in report and "vs grim" in report


def test_same_seed_same_results_and_another_seed_other_horizons(tmp_path):
    a = play(pool_trust(), [], ["random"], tmp_path / "a")
    b = play(pool_trust(), [], ["random"], tmp_path / "b")
    assert a["results"] == b["results"] and a["horizons"] == b["horizons"]
    c = play(pool_trust(seed=5), [], ["random"], tmp_path / "c")
    assert c["horizons"] != a["horizons"]


def _cooperator(request):
    return Reply(content="I will cooperate.\n```\nCOOPERATE\n```")


def test_a_model_that_always_cooperates_matches_the_allc_strategy(tmp_path):
    w = small_trust(matches=2)
    model = ScriptedModel(_cooperator, name="nice-model")
    s = play(w, [model], ["allc"], tmp_path)
    rows = {r["system"]: r for r in s["results"]}
    for key in ("score_per_round", "cooperation_rate", "betrayal_rate", "rounds", "per_opponent"):
        assert rows["nice-model"][key] == rows["allc"][key], key
    assert model.calls == sum(w.horizon_for(o, st, k) for o, st, k in w.schedule())
    # the model saw its seat's payoffs and the history
    log = list(read_events(tmp_path / "log.jsonl"))
    req = next(e for e in log if e["type"] == "request" and "|column|" in e["conv"] and e["t"] == 2)
    text = json.dumps(req["messages"])
    assert "you DEFECT, other COOPERATE: you get 3" in text and "Round 1: you played COOPERATE" in text


def test_unreadable_moves_get_one_retry_then_the_fallback(tmp_path):
    w = small_trust(matches=1)

    def sloppy(request):
        last = request.messages[-1]["content"]
        return Reply(content="maybe" if not last.startswith("Reply with exactly one move") else "still maybe")

    s = play(w, [ScriptedModel(sloppy, name="sloppy")], [], tmp_path)
    row = next(r for r in s["results"] if r["system"] == "sloppy")
    assert row["cooperation_rate"] == 0.0  # the fallback move is DEFECT here
    assert row["invalid_moves"] == row["rounds"]


def _alternator(request):
    """COOPERATE in odd rounds, DEFECT in even ones: the opponents' replies then differ round by round."""
    rounds = sum(m["role"] == "assistant" for m in request.messages)
    return Reply(content="DEFECT" if rounds % 2 else "COOPERATE")


def test_a_model_plays_the_pool_in_the_sandboxs_workers_as_it_does_in_process(tmp_path):
    with open(TRUST, encoding="utf-8") as f:
        text = re.sub(r"matches \d+", "matches 1", f.read()).replace("lineup round_robin", "lineup pool")
    (tmp_path / "trust-pool.world").write_text(text, encoding="utf-8")
    pooled = sandbox.load(str(tmp_path / "trust-pool.world"))  # as `worldspec run` loads it: for the workers
    a = play(pooled, [ScriptedModel(_alternator, name="m")], [], tmp_path / "pool")
    b = play(small_trust(matches=1), [ScriptedModel(_alternator, name="m")], [], tmp_path / "here")
    modes = {e["mode"] for e in read_events(tmp_path / "pool" / "log.jsonl") if e["type"] == "sandbox"}
    assert modes == {"pool"} and a["validity"]["valid"]
    assert a["results"] == b["results"]


def test_resume_replays_the_log(tmp_path):
    w = small_trust(matches=1)
    first = ScriptedModel(_cooperator, name="m")
    a = play(w, [first], [], tmp_path)
    again = ScriptedModel(_cooperator, name="m")
    b = play(w, [again], [], tmp_path, resume=True)
    assert again.calls == 0 and a["results"] == b["results"]


def test_metrics_and_bootstrap():
    ms = [{"rounds": 4, "score": 8, "cooperations": 4, "betrayal_chances": 3, "betrayals": 0},
          {"rounds": 2, "score": 0, "cooperations": 0, "betrayal_chances": 1, "betrayals": 1}]
    r = rates(ms)
    assert r == {"score_per_round": 8 / 6, "cooperation_rate": 4 / 6, "betrayal_rate": 1 / 4}
    lo, hi = bootstrap(ms, "score_per_round", "seed")
    assert 0 <= lo <= r["score_per_round"] <= hi <= 2
    assert bootstrap(ms, "score_per_round", "seed") == (lo, hi)
