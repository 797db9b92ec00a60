"""kind holdem and the holdem run protocol: pokerkit play, certification, bots, a model's run and its report."""
import json
import os
import re

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import InputError, load_world
from worldspec.compiler.api import HoldemFace
from worldspec.compiler.holdem.engine import Action, Hand, Legal, Table, deal_cards, parse_action
from worldspec.runner.models import Reply, ScriptedModel
from worldspec.runner.protocols import PROTOCOLS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the heads-up duplicate-deal world (the bundled holdem.world is the six-seat ring game: test_fidelity_interactive.py)
BUNDLED = os.path.join(ROOT, "tests", "worlds", "holdem", "headsup.world")


def small_world_file(tmp_path, hands=1, seats="button, big_blind", certify_hands=6):
    """The bundled world with few hands (tests stay fast)."""
    with open(BUNDLED, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"hands \d+", f"hands {hands}", text)
    text = re.sub(r"certify_hands \d+", f"certify_hands {certify_hands}", text)
    text = re.sub(r"seats [a-z_, ]+\n", f"seats {seats}\n", text)
    text = re.sub(r"samples \d+", "samples 15", text)
    path = tmp_path / "holdem.world"
    path.write_text(text)
    return str(path)


def test_the_bundled_world_compiles_with_its_schedule():
    w = load_world(BUNDLED)
    assert w.protocol == "holdem" and w.kind == "holdem"
    assert (w.table.small_blind, w.table.big_blind, w.table.stack) == (1, 2, 200)
    assert [b.name for b in w.opponents] == ["caller", "tag", "random"]
    assert len(w.schedule()) == 3 * 6 * 2
    # played, never probed: the Hold'em face has no probe, and `worldspec play` is told so, charged nothing
    assert isinstance(w, HoldemFace) and not hasattr(w, "probe") and not hasattr(w, "probe_generator")
    fb = PROTOCOLS["holdem"].play_session(w).probe("CALL")
    assert fb.status == "rejected" and fb.units == 0 and "no probing" in fb.text


def test_duplicate_deals_give_the_player_each_seat_of_the_same_cards(tmp_path):
    w = load_world(small_world_file(tmp_path))
    button, big = w.seat("caller", 0, "button"), w.seat("caller", 0, "big_blind")
    assert button.hand.holes == big.hand.holes  # the same deal ...
    assert button.position != big.position  # ... from the other seat
    played = w.play_bot("caller", "caller", 0, "big_blind")
    assert played["opponent_cards"] == button.observation()["hole_cards"]


def test_observation_fields_and_legal_actions_before_the_flop():
    h = Hand(Table(1, 2, 200), deal_cards("t"))
    assert h.actor == 1  # heads-up: the button (small blind) acts first before the flop
    obs = h.observation(1, 8)
    assert {"street", "hole_cards", "board", "your_stack", "opponent_stack", "pot", "pot_odds", "recent_actions",
            "legal_actions"} <= set(obs)
    assert obs["street"] == "preflop" and obs["board"] == "-" and obs["to_call"] == 1
    assert obs["pot_odds"] == pytest.approx(1 / 4, abs=1e-3)
    legal = h.legal()
    assert legal.kinds == ("FOLD", "CALL", "RAISE", "ALL_IN") and (legal.min_raise, legal.max_raise) == (4, 200)
    h.apply(Action("CALL"))
    assert h.legal().kinds[0] == "CHECK" and "FOLD" not in h.legal().kinds
    assert h.observation(0, 8)["recent_actions"] == ["preflop: opponent CALL"]


def test_replies_are_read_or_refused_with_a_reason():
    legal = Legal(("FOLD", "CALL", "RAISE", "ALL_IN"), 1, 4, 200)
    assert parse_action("I think so.\nRAISE 12", legal) == Action("RAISE", 12)
    assert parse_action("**call**", legal) == Action("CALL")
    assert parse_action("all-in", legal) == Action("ALL_IN", 200)
    assert parse_action("raise to 200", legal) == Action("ALL_IN", 200)
    for bad in ("CHECK", "RAISE 3", "RAISE 201", "RAISE", "banana", ""):
        with pytest.raises(InputError):
            parse_action(bad, legal)


def test_chips_are_conserved_and_payoffs_cancel_in_bot_play(tmp_path):
    w = load_world(small_world_file(tmp_path, hands=2))
    for o, k, s in w.schedule():
        r = w.play_bot("random", o, k, s)
        assert r["bb"] == r["chips"] / 2 and -100 <= r["bb"] <= 100
    same = [w.play_bot("tag", o, k, s) for o, k, s in w.schedule()]
    assert same == [w.play_bot("tag", o, k, s) for o, k, s in w.schedule()]  # seeded


def test_check_certifies_and_catches_an_engine_disagreement(tmp_path, monkeypatch):
    path = small_world_file(tmp_path)
    r = CliRunner().invoke(main, ["check", path, "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["problems"] == [] and report["hands_completed"] == 6 and report["legality_checks"] > 20
    # a world that offered raises pokerkit refuses would fail certification
    monkeypatch.setattr(Legal, "offered",
                        lambda self: [Action("RAISE", self.max_raise + 5)] if self.min_raise else [])
    assert any("refused the offered action" in p for p in load_world(path).certify()["problems"])


def test_bots_play_each_other_and_the_report_has_the_figure(tmp_path, run_world):
    w = load_world(small_world_file(tmp_path))
    res = run_world(w, [], tmp_path / "run")
    assert res.summary["validity"]["valid"]
    rows = {r["system"]: r for r in res.summary["results"]}
    assert set(rows) == {"tag", "caller", "random"} and all(r["hands"] == 6 for r in rows.values())
    assert rows["caller"]["fold_rate"] == 0.0  # always-call never folds
    md = (tmp_path / "run" / "report.md").read_text()
    for words in ("Winnings (bb/hand) [95% CI]", "VPIP", "Fold rate", "Latency (s)", ".png)"):
        assert words in md
    png = re.search(r"\]\((holdem-[^)]+\.png)\)", md).group(1)
    assert (tmp_path / "run" / png).read_bytes()[:4] == b"\x89PNG"


def test_an_invalid_action_is_retried_once_then_folded(tmp_path, run_world, read_log):
    w = load_world(small_world_file(tmp_path, seats="button"))
    sloppy = ScriptedModel(lambda req: Reply("I would like to bluff with a banana."), name="sloppy")
    res = run_world(w, [sloppy], tmp_path / "run")
    hands = [r for r in res.trajectories if r["system"] == "sloppy"]
    assert len(hands) == 3 and sloppy.calls == 6  # one hand per opponent: one decision, asked twice
    for h in hands:
        assert h["folded"] and h["auto_folds"] == 1 and h["invalid_replies"] == 2 and h["chips"] == -1
    decisions = read_log(tmp_path / "run", "holdem_decision")
    assert len(decisions) == 3
    assert all(d["retried"] and d["auto_fold"] and d["action"] == "FOLD" and len(d["replies"]) == 2
               and len(d["invalid"]) == 2 for d in decisions)
    row = {r["system"]: r for r in res.summary["results"]}["sloppy"]
    assert row["auto_folds"] == 3 and row["fold_rate"] == 1.0 and row["bb_per_hand"] == -0.5


def test_a_model_plays_through_the_fake_server(fake_openai, tmp_path):
    fake_openai.responder = lambda body: {"content": "The pot odds are fine.\nCALL" if "To call: 0." not in
                                          body["messages"][-1]["content"] else "CHECK"}
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", small_world_file(tmp_path), "--model", "openai/fake-poker", "--api-base",
                                  fake_openai.base_url, "--no-cache", "--out", str(out), "--retry-delay", "0.001"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    rows = {x["system"]: x for x in summary["results"]}
    model = rows["openai/fake-poker"]
    assert model["hands"] == 6 and model["invalid_replies"] == 0 and model["fold_rate"] == 0.0
    assert model["calls"] == len(fake_openai.requests) > 0 and model["latency"] is not None
    first = fake_openai.requests[0]["messages"]
    assert "Texas Hold'em" in first[0]["content"] and "Legal actions:" in first[1]["content"]
    assert "openai/fake-poker" in r.output and "tag (baseline)" in r.output
