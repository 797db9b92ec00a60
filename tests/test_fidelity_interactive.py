"""InteractiveBench fidelity: each published number or form, fed in the released harness's own shape.

The released code is interactivebench/InteractiveBench (src/situation_puzzle, src/math, src/trust_game,
src/POKER); docs/fidelity.md (section `interactive`) has one row per step.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import shutil

import pytest
from click.testing import CliRunner

from worldspec.cli import EXIT_INPUT, main
from worldspec.compiler import InputError, load_world
from worldspec.compiler.suite import world_files
from worldspec.runner.config import RunConfig
from worldspec.runner.experiment import run_experiment
from worldspec.runner.models import Reply, RetryPolicy, ScriptedModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUZZLES = os.path.join(ROOT, "worlds", "interactive", "puzzles")
MATH = os.path.join(ROOT, "worlds", "interactive", "math")
TRUST = os.path.join(ROOT, "worlds", "interactive", "trust.world")
HOLDEM = os.path.join(ROOT, "worlds", "interactive", "holdem.world")

FILLER = "a curse, a volcano, a circus, a submarine, a dragon, a lottery"


def cli(args):
    return CliRunner().invoke(main, ["run", *args, "--quiet"], catch_exceptions=False)


# ---------------------------------------------------------------- the judge: never a player, temperature 0


def test_a_models_run_without_a_judge_model_is_refused_before_writing(tmp_path, fake_openai):
    out = tmp_path / "run"
    r = cli([PUZZLES, "--model", "openai/fake-player", "--api-base", fake_openai.base_url, "--no-cache",
             "--out", str(out)])
    assert r.exit_code == EXIT_INPUT
    assert "needs --judge-model" in r.output and "Grok-4.1-fast" in r.output and "temperature 0" in r.output
    assert not out.exists() and fake_openai.requests == []
    # an --out that already holds something is left as it was
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    r = cli([MATH, "--model", "openai/fake-player", "--api-base", fake_openai.base_url, "--no-cache",
             "--out", str(out)])
    assert r.exit_code == EXIT_INPUT and sorted(os.listdir(out)) == ["keep.txt"]


# ---------------------------------------------------------------- the keyword judge (offline)


def puzzles():
    return [load_world(p) for p in world_files(PUZZLES)]


def attacks(w) -> dict[str, str]:
    """The three cheap answers, built from the world's own required keywords."""
    keys = [(f.mention or f.yes)[0] for f in w.facts if f.required]
    return {"negated": " ".join(f"It was not {k}." for k in keys),
            "shotgun": "There was " + ", ".join(keys) + ", " + FILLER + ".",
            "shotgun with or": "It was " + ", or ".join([*keys, "a ghost", "poison", "a murder"]) + ".",
            "bare keywords": " ".join(keys),
            "keyword list": ", ".join(g for f in w.facts for g in f.mention)}


def test_the_keyword_judge_rejects_negated_shotgun_and_bare_keyword_answers_on_every_puzzle():
    worlds = puzzles()
    assert len(worlds) == 12
    for w in worlds:
        for form, text in attacks(w).items():
            ok, why = w.check_answer(text)
            assert not ok, (w.name, form, text, why)
            assert w.probe("ANSWER: " + text).text == "incorrect"


def test_the_keyword_judge_still_accepts_true_answers_on_every_puzzle():
    for w in puzzles():
        assert w.check_answer(w.reference_answer)[0], w.name
        # the key facts in other words than the truth's: their statements, one sentence each
        statements = " ".join(f.statement.rstrip(".") + "." for f in w.facts if f.required)
        assert w.check_answer(statements)[0], (w.name, w.check_answer(statements))
    candles = load_world(os.path.join(PUZZLES, "p01-candles.world"))
    told = ("The party was in a wine cellar; the fermenting wine gave off CO2 which pushed out the oxygen, so "
            "the candles died, and the guests fled upstairs to avoid suffocating.")
    assert candles.probe("ANSWER: " + told).text == "correct"
    assert candles.probe("ANSWER: It wasn't a ghost: carbon dioxide from the fermenting wine filled the "
                         "cellar.").text == "correct"


@pytest.mark.parametrize("question, label", [
    ("Was there a gas and not a ghost?", "yes"),  # the negation holds in its own clause only
    ("Did the gas come from the wine and not from a fire?", "yes"),
    ("Was there a gas, wine, a cellar and no oxygen?", "yes"),
    ("Was there a ghost but no gas?", "no"),
    ("Was there a gas or a ghost?", "both"),  # compound: true in one reading, false in the other
    ("Why did the ghost blow out the candles?", "irrelevant"),  # not a yes/no question (turtle.py's judger)
    ("How did the gas get into the cellar?", "irrelevant"),
    ("Was there a gas?", "yes"),
    ("Wasn't the air clean?", "yes"),
])
def test_the_keyword_judge_labels_loaded_questions(question, label):
    candles = load_world(os.path.join(PUZZLES, "p01-candles.world"))
    assert candles.keyword_label(question) == label


# ---------------------------------------------------------------- math: the strict grader


def grader_responder(verdicts: dict):
    """A fake judge model: the strict grader answers in the released grade_equivalence form (analysis, a
    line `$$$$`, then 1 or 0), per submitted answer; the player submits each key of `verdicts` in turn."""
    def respond(body):
        msgs = body["messages"]
        if body["model"] == "fake-judge":
            assert msgs[0]["content"].startswith("You grade answers strictly"), "a math answer went to the judger"
            got = msgs[1]["content"].split("Submitted answer:\n")[1].split("\n")[0].strip()
            return {"content": f"Comparing {got} with the expected answer.\n$$$$\n{verdicts.get(got, 0)}",
                    "usage": (200, 9)}
        if msgs[0]["content"].startswith("You are a math solver"):
            return {"content": "ANSWER: forty", "usage": (50, 5)}
        asked = sum(1 for m in msgs if m["role"] == "assistant")
        answers = list(verdicts)
        return {"content": f"ANSWER: {answers[min(asked, len(answers) - 1)]}", "usage": (50, 5)}
    return respond


def test_a_math_answer_is_graded_for_equivalence_by_the_judge_models_strict_grader(tmp_path, fake_openai):
    folder = tmp_path / "m"
    folder.mkdir()
    shutil.copy(os.path.join(MATH, "m06-round-trip.world"), folder)  # the answer is 40 (km/h)
    fake_openai.responder = grader_responder({"45 km/h": "0", "forty km/h": "1"})
    out = tmp_path / "run"
    r = cli([str(folder), "--model", "openai/fake-player", "--judge-model", "openai/fake-judge",
             "--api-base", fake_openai.base_url, "--no-cache", "--out", str(out)])
    assert r.exit_code == 0, r.output
    [rec] = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()
             if json.loads(x)["condition"] == "interactive"]
    # "forty km/h" is not 40 to an exact comparison, but the judge model's grader calls it equivalent
    assert rec["solved"] and rec["solved_at"] == 2
    w = load_world(str(folder / "m06-round-trip.world"))
    assert w.probe("ANSWER: forty km/h").text == "incorrect"  # the keyword judge compares exactly
    grades = [b for b in fake_openai.requests if b["model"] == "fake-judge"]
    assert grades and all(b["temperature"] == 0.0 for b in grades)
    assert all("Expected answer:\n40" in b["messages"][1]["content"] for b in grades)


@pytest.mark.parametrize("reply, verdict", [
    ("The two are the same value.\n$$$$\n1", True),
    ("They differ.\n$$$$\n0", False),
    ("$$$$ 1", True),
    ("1", True),  # no marker: the whole reply is read (passk_eval.py extract_after_marker)
    ("Equivalent.\n$$$$\nyes", None),  # neither 1 nor 0: incorrect, and counted
    ("", None),
])
def test_the_strict_graders_verdict_is_read_as_released(reply, verdict):
    w = load_world(os.path.join(MATH, "m06-round-trip.world"))
    assert w.read_grade(reply) is verdict


# ---------------------------------------------------------------- the Trust Game round robin


def trust_run(models, out, agents=()):
    config = RunConfig(retry=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01))
    return asyncio.run(run_experiment([load_world(TRUST)], models, config, out, agents=list(agents))).summary


def test_the_trust_game_has_the_released_tournament_parameters():
    # test_tournament.sh: --delta 0.80 --max-rounds 35 --repeats 5 --seed 1234, seats swapped (the default);
    # the paper's trace: "CONFIG: delta=0.8, max rounds=35, repeats=5, swap seats=true, seed=1234"
    w = load_world(TRUST)
    assert (w.delta, w.max_rounds, w.matches, w.seats, w.seed) == (0.8, 35, 5, ("row", "column"), 1234)
    assert w.round_robin and w.baselines == ("grim", "tft", "random") and w.fallback == "COOPERATE"
    g = w.game
    assert [g.payoff("row", a, b) for a, b in [("COOPERATE", "COOPERATE"), ("COOPERATE", "DEFECT"),
                                                 ("DEFECT", "COOPERATE"), ("DEFECT", "DEFECT")]] == [2, -1, 3, 0]
    # every unordered pair, 5 repeats, both seats; one horizon per repeat, shared by both seats
    games = w.tournament(["a", "b", "c"])
    assert len(games) == 3 * 5 * 2 and {(x, y) for x, y, _, _ in games} == {("a", "b"), ("a", "c"), ("b", "c")}
    assert all(w.pair_horizon("a", "b", r) == w.pair_horizon("b", "a", r) for r in range(5))
    horizons = [w.pair_horizon(f"p{i}", "q", r) for i in range(300) for r in range(5)]
    assert max(horizons) <= 35 and min(horizons) == 1
    assert abs(sum(horizons) / len(horizons) - 1 / (1 - 0.8)) < 0.5  # E[T] = 1 / (1 - delta) = 5


@pytest.mark.parametrize("reply, move", [
    ("COOPERATE", "COOPERATE"),  # the released prompt's one-token reply
    ("DEFECT", "DEFECT"),
    ("## DEFECT ##", "DEFECT"),  # the older ##...## form the released reader also takes
    ("I think cooperation pays here. cooperate", "COOPERATE"),  # case ignored, anywhere in the reply
    ("DEFECT now; COOPERATE later", "DEFECT"),  # the first one named
    ("COOPERATION", None), ("C", None), ("", None),  # whole words only
])
def test_a_trust_move_is_read_as_the_released_reader_reads_it(reply, move):
    assert load_world(TRUST).read_anywhere(reply) == move


def test_the_round_robin_enters_models_beside_the_bots_and_falls_back_to_cooperate(tmp_path):
    def nice(request):
        return Reply(content="COOPERATE")

    def mute(request):
        return Reply(content="I would rather not say.")

    a, b = ScriptedModel(nice, name="nice"), ScriptedModel(mute, name="mute")
    s = trust_run([a, b], tmp_path)
    assert s["validity"]["valid"]
    rows = {r["system"]: r for r in s["results"]}
    assert set(rows) == {"nice", "mute", "grim", "tft", "random"}
    assert rows["grim"]["baseline"] and not rows["nice"]["baseline"]
    # 4 opponents x 5 repeats x 2 seats for every entrant, models against each other too
    assert all(r["n"] == 40 for r in rows.values()) and set(rows["nice"]["per_opponent"]) == {
        "mute", "grim", "tft", "random"}
    # a reply naming no move is asked 5 times, then cooperates (agents.py LLMAgent.choose_action)
    assert rows["mute"]["cooperation_rate"] == 1.0 and rows["mute"]["invalid_moves"] == rows["mute"]["rounds"]
    assert b.calls == 5 * rows["mute"]["rounds"] and a.calls == rows["nice"]["rounds"]
    # two cooperators meet: 2 per round; the mute model cooperates too
    assert rows["nice"]["per_opponent"]["mute"] == rows["nice"]["per_opponent"]["tft"] == 2.0
    # the score is payoff per round over all rounds played (paper eq. 2.5)
    recs = [json.loads(x) for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()]
    mine = [r for r in recs if r["system"] == "nice"]
    assert rows["nice"]["score_per_round"] == round(sum(r["score"] for r in mine) / sum(r["rounds"] for r in mine), 4)
    # both seats of a repeat have the same length (the paper's trace: "rounds=6" from each seat)
    by_repeat = {}
    for r in recs:
        if {r["system"], r["opponent"]} == {"nice", "grim"}:
            by_repeat.setdefault(r["match"], set()).add(r["rounds"])
    assert len(by_repeat) == 5 and all(len(v) == 1 for v in by_repeat.values())
    report = (tmp_path / "report.md").read_text()
    assert "Round robin of every system against every other: 5 repeats per pair" in report
    assert "continues with probability 0.8, at most 35 rounds" in report


def test_the_built_in_trust_run_is_the_round_robin_of_the_bots(tmp_path):
    s = trust_run([], tmp_path)
    assert {r["system"] for r in s["results"]} == {"grim", "tft", "random"}
    assert all(r["n"] == 2 * 5 * 2 for r in s["results"])


# ---------------------------------------------------------------- Hold'em: six-seat tables


def test_the_holdem_tables_are_the_published_ones():
    w = load_world(HOLDEM)
    # App.tsx: INITIAL_STACK 10000, SMALL_BLIND 50, BIG_BLIND 100, NUM_PLAYERS 6 (the paper's trace: "pot starts
    # at 150"); hands per table is the world's (the paper: 500, over MultiTableApp.tsx's 10 tables)
    assert (w.players, w.table.stack, w.table.small_blind, w.table.big_blind) == (6, 10000, 50, 100)
    assert w.ring and w.tables >= 1 and w.hands >= 1
    t = w.ring_table(0, ["p1", "p2", "p3", "p4", "p5", "p6"])
    first = t.deal(0)
    assert first.hand.pot() == 150 and first.seat == 3  # UTG, left of the big blind, acts first
    assert first.observation(5)["stacks"] == {"p1": 10000, "p2": 9950, "p3": 9900, "p4": 10000, "p5": 10000,
                                              "p6": 10000}
    while not first.done:  # everyone folds to the big blind
        first.act(w.fold_or_check(first.legal()))
    t.settle(first)
    assert t.stacks == [10000, 9950, 10050, 10000, 10000, 10000]  # stacks carry over to the next hand
    second = t.deal(1)
    assert second.seat == 4 and second.observation(5)["stacks"]["p3"] == 10050 - 50  # the button moved on
    assert "JSON object" in w.manual and '"action"' in w.manual


@pytest.mark.parametrize("reply, action", [
    ('{"action": "CALL", "amount": 100, "reasoning": "Suited ace, good price."}', "CALL"),
    ('{"action": "RAISE", "amount": 300, "reasoning": "Isolate the limper."}', "RAISE 300"),
    ('{"action": "FOLD", "amount": 0, "reasoning": "Q5o offsuit, no play."}', "FOLD"),
    ('{"action": "ALL_IN", "amount": 10000, "reasoning": "Shove."}', "ALL_IN"),
    ('{"action": "RAISE", "amount": 300.0, "reasoning": "a whole number written as a float"}', "RAISE 300"),
    ('```json\n{"action": "RAISE", "amount": 250, "reasoning": "fenced"}\n```', "RAISE 250"),
])
def test_a_holdem_reply_in_the_released_json_format_is_read(reply, action):
    w = load_world(HOLDEM)
    rh = w.ring_table(0, list("abcdef")).deal(0)
    assert str(w.read_json(reply, rh.legal())) == action


@pytest.mark.parametrize("reply, why", [
    ('{"action": "RAISE", "amount": 250.5, "reasoning": "half a chip"}', "not a whole number of chips"),
    ('{"action": "RAISE", "amount": 150, "reasoning": "below the minimum raise"}', "outside 200..10000"),
    ('{"action": "CHECK", "amount": 0, "reasoning": "facing the big blind"}', "CHECK is not legal now"),
    ('{"action": "raise", "amount": 300}', "action must be one of"),  # the released enum is upper case
    ('{"action": "CALL"}', "amount must be a number"),
    ('{"action": "CALL", "amount": "100"}', "amount must be a number"),
    ("CALL", "not a JSON object"), ("[1, 2]", "not a JSON object"),
])
def test_an_invalid_holdem_reply_is_refused_with_its_reason_never_truncated(reply, why):
    w = load_world(HOLDEM)
    rh = w.ring_table(0, list("abcdef")).deal(0)
    with pytest.raises(InputError, match=why):
        w.read_json(reply, rh.legal())


def small_holdem(tmp_path, tables=2, hands=3):
    with open(HOLDEM, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"tables \d+", f"tables {tables}", re.sub(r"hands \d+", f"hands {hands}", text))
    path = tmp_path / "holdem.world"
    path.write_text(text.replace("samples 30", "samples 10"))
    return load_world(str(path))


def test_a_model_takes_a_seat_and_a_fractional_raise_gets_feedback_then_counts(tmp_path):
    seen = []

    def player(request):
        last = request.messages[-1]["content"]
        seen.append(last)
        if last.startswith("Your previous reply was invalid"):
            return Reply(content='{"action": "FOLD", "amount": 0, "reasoning": "fine"}')
        if "Amount to call: 0." in last:
            return Reply(content='{"action": "CHECK", "amount": 0, "reasoning": "free card"}')
        return Reply(content='{"action": "RAISE", "amount": 333.5, "reasoning": "a fractional raise"}')

    w = small_holdem(tmp_path)
    config = RunConfig(retry=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01))
    model = ScriptedModel(player, name="m")
    s = asyncio.run(run_experiment([w], [model], config, tmp_path / "run", agents=[])).summary
    assert s["validity"]["valid"]
    rows = {r["system"]: r for r in s["results"]}
    assert len(rows) == 6 and "m" in rows and {"tag", "caller", "random"} <= set(rows)  # bots fill the table
    m = rows["m"]
    assert m["tables"] == 2 and m["hands"] == 2 * 3
    retries = [x for x in seen if x.startswith("Your previous reply was invalid")]
    fractional = [x for x in retries if "RAISE 333.5 is not a whole number of chips" in x]
    assert fractional and all(x in fractional or "RAISE is not legal now" in x for x in retries)
    assert m["invalid_replies"] == len(retries) and m["auto_folds"] == 0
    # per table numbers as analyze_stats.py, then mean and population sd across tables
    recs = [json.loads(x) for x in (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()]
    mine = [r for r in recs if r["system"] == "m"]
    per_table = [r["chips"] / r["hands"] for r in mine]
    assert m["winnings"]["mean"] == pytest.approx(sum(per_table) / 2)
    assert m["winnings"]["sd"] == pytest.approx(abs(per_table[0] - per_table[1]) / 2)
    assert m["fold_rate"]["values"] == [r["folds"] / r["hands"] for r in mine]
    assert sum(r["chips"] for r in recs if r["table"] == 1) == 0  # chips only change hands
    report = (tmp_path / "run" / "report.md").read_text()
    assert "mean ± standard deviation across tables" in report and "6 seats" in report
    assert re.search(r"\| m \| -?\d+\.\d ± \d+\.\d \| \d+\.\d% ± \d+\.\d% \|", report)


def test_the_built_in_holdem_run_seats_the_bots(tmp_path):
    w = small_holdem(tmp_path, tables=1, hands=2)
    config = RunConfig()
    s = asyncio.run(run_experiment([w], [], config, tmp_path / "run", agents=[])).summary
    assert s["validity"]["valid"] and len(s["results"]) == 6 and all(r["hands"] == 2 for r in s["results"])
