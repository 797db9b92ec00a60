"""InteractiveBench fidelity: each published number or form, fed in the released harness's own shape.

The released code is interactivebench/InteractiveBench (src/situation_puzzle, src/math, src/trust_game,
src/POKER); docs/fidelity.md (section `interactive`) has one row per step.
"""
from __future__ import annotations

import json
import os
import shutil

import pytest
from click.testing import CliRunner

from worldspec.cli import EXIT_INPUT, main
from worldspec.compiler import load_world
from worldspec.compiler.suite import world_files

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
