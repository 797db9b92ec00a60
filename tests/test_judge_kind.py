"""`kind judge`: the spec reader, the keyword judge, the label normaliser, the answer check and certification."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import World, compile_spec, load_world
from worldspec.compiler.api import JudgeFace, MilestoneFace
from worldspec.compiler.judge.keywords import number, same_answer, words
from worldspec.compiler.judge.world import normalise_label, read_move
from worldspec.compiler.suite import certify_folder, world_files
from worldspec.diagnostics import SpecError
from worldspec.parser import parse_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUZZLES = os.path.join(ROOT, "worlds", "interactive", "puzzles")
MATH = os.path.join(ROOT, "worlds", "interactive", "math")
CANDLES = os.path.join(PUZZLES, "p01-candles.world")

PUZZLE = '''world "Short Man" version 1
kind judge
seed 1
setting puzzle
surface "A man takes the lift to the 7th floor and walks up to the 10th. Why?"
truth "He is too short to reach the button for the 10th floor."
naive "He wants the exercise."
fact short "He is very short" {
  yes "Is he short?", "Is he small?"
  no "Is he tall?"
  mention "short", "small"
  required true
}
fact button "He cannot reach the higher buttons" {
  yes "Can he reach the button?"
}
'''


def compile_text(text: str):
    return compile_spec(parse_spec(text, "t.world"))


@pytest.fixture(scope="module")
def short_man():
    return compile_text(PUZZLE)


# ---------------------------------------------------------------- the bundled content


def test_the_bundled_puzzles_and_problems_all_certify():
    for folder, setting, at_least in ((PUZZLES, "puzzle", 12), (MATH, "math", 12)):
        summary = certify_folder(folder)
        assert summary["problems"] == [] and summary["worlds"] >= at_least
        assert summary["certified"] == summary["worlds"] == summary["counts"]["kind"]["judge"]
        worlds = [load_world(p) for p in world_files(folder)]
        assert {w.setting for w in worlds} == {setting}
        assert len({w.name for w in worlds}) == len(worlds)
        for w in worlds:
            assert w.guesses, f"{w.name} declares no surface-only guess"
            assert not w.verify(w.task_id, w.surface_guess).passed
            assert w.verify(w.task_id, w.reference_answer).passed
            assert w.truth.strip() not in w.manual


def test_a_judge_world_implements_the_world_protocol(short_man):
    assert isinstance(short_man, World) and short_man.protocol == "judge"
    assert short_man.budget.turns == 20 and short_man.grading == "judge" and short_man.tasks[0].id == "answer"
    assert short_man.probe("Is the man short?").text == "yes"
    assert short_man.probe("ANSWER: he is short").text == "correct"
    assert short_man.probe("ANSWER: he likes stairs").text == "incorrect"
    assert short_man.probe("   ").status == "rejected" and short_man.charge("   ") == 0
    assert short_man.charge("Is he short?") == 1
    # no perturbed rules: a judge world offers the judge face, not the milestone one, and has no rule
    assert isinstance(short_man, JudgeFace) and not isinstance(short_man, MilestoneFace)
    assert not hasattr(short_man, "requires") and not hasattr(short_man, "grade_equation")
    with pytest.raises(KeyError):
        short_man.rule("R1")
    gen = short_man.probe_generator(3)
    assert len([next(gen) for _ in range(20)]) == 20


def test_the_manual_shows_the_surface_and_the_rules_never_the_truth(short_man):
    m = short_man.manual
    assert "7th floor" in m and "ANSWER:" in m and "QUESTION:" in m and "20 turns" in m
    assert "button" not in m and "short" not in m.lower().split("## the puzzle")[1]
    assert "You have 5 turns" in short_man.session_manual(5)


def test_the_judge_prompt_holds_the_truth_and_the_label_rules(short_man):
    prompt = short_man.judge_system_prompt()
    assert short_man.truth in prompt and short_man.surface in prompt
    for label in ("yes", "no", "both", "irrelevant", "correct", "incorrect"):
        assert label in prompt
    msgs = short_man.judge_messages([], read_move("QUESTION: Is he short?"))
    assert msgs[0]["role"] == "system" and msgs[-1] == {"role": "user", "content": "QUESTION: Is he short?"}


# ---------------------------------------------------------------- the keyword judge


@pytest.mark.parametrize("question, label", [
    ("Is he short?", "yes"),
    ("Is the man very short?", "yes"),  # extra words are fine
    ("Is he not short?", "no"),  # a negated yes phrasing is answered no
    ("Isn't he tall?", "yes"),  # a negated no phrasing is answered yes
    ("Is he tall?", "no"),
    ("Is he short and tall?", "both"),  # the most specific phrasings disagree
    ("Does he like the stairs?", "irrelevant"),
    ("", "irrelevant"),
])
def test_the_keyword_judge(short_man, question, label):
    assert short_man.keyword_label(question) == label


def test_the_most_specific_phrasing_wins():
    w = compile_text(PUZZLE.replace('no "Is he tall?"', 'no "Is he tall?", "Is he short from an illness?"'))
    assert w.keyword_label("Is he short?") == "yes"
    assert w.keyword_label("Was he short from an illness?") == "no"


def test_words_stem_numbers_and_negation():
    assert words("The poisoned apples").content == words("poisoning an apple").content == {"poison", "appl"}
    assert words("Are there 0.50 of them, or 1/2?").content == {"1/2"}
    assert words("1,000 multiples").content == {"1000", "multipl"}
    assert words("He didn't go").negated and not words("He did not not go").negated


@pytest.mark.parametrize("got, want, same", [
    ("13/28", "13/28", True), ("$\\frac{13}{28}$", "13/28", True), ("\\boxed{13/28}", "13/28", True),
    ("0.5", "1/2", True), ("x = 17", "17", True), ("1,170", "1170", True), ("49.", "49", True),
    (" b ", "B", True), ("0.46", "13/28", False), ("333", "250", False), ("", "250", False),
    ("(x-2)(x-3)", "(x - 2)(x - 3)", True), ("e^{-\\pi/2}", "e^{-\\pi/3}", False),
    ("**250**", "250", True), ("`13/28`", "13/28", True), ("**\\boxed{49}**", "49", True), ("**251**", "250", False),
    ("13/28\nThat's final.", "13/28", True), ("I think\n\\boxed{49}", "49", True), ("12\n13", "13", False), ("$$\n\\frac{13}{28}\n$$", "13/28", True),
])
def test_final_answers_are_compared_exactly(got, want, same):
    assert same_answer(got, want) is same


def test_numbers_are_exact_fractions():
    assert number("-2.50") == number("-5/2") and number("1e5") is None and number("7/0") is None


# ---------------------------------------------------------------- moves and labels


@pytest.mark.parametrize("reply, kind, text", [
    ("QUESTION: Is he short?", "question", "Is he short?"),
    ("Let me think.\nMaybe height matters.\nQUESTION: Is he short?", "question", "Is he short?"),
    ("**ANSWER:** He is short\nand cannot reach the button.", "answer", "He is short\nand cannot reach the button."),
    ("QUESTION: Is he short?\nANSWER: he is short", "answer", "he is short"),
    ("Thinking...\nIs he short?", "question", "Is he short?"),
    ("answer: 42", "answer", "42"),
    ("So the total is 42.\nFinal Answer: 42", "answer", "42"),
    ("FINAL: he is short", "answer", "he is short"),
    ("Finally, is he short?", "question", "Finally, is he short?"),
    ("", "question", ""),
])
def test_a_reply_is_read_as_one_move(reply, kind, text):
    move = read_move(reply)
    assert (move.kind, move.text) == (kind, text)


def test_an_unmarked_final_reply_is_read_whole_as_the_answer():
    assert read_move("He is short.\nHe cannot reach.", "answer").text == "He is short.\nHe cannot reach."


QUESTION = ("yes", "no", "both", "irrelevant")
VERDICT = ("correct", "incorrect")


@pytest.mark.parametrize("reply, labels, label", [
    ("Yes", QUESTION, "yes"), ("**No.**", QUESTION, "no"), ("Both", QUESTION, "both"),
    ("irrelevant", QUESTION, "irrelevant"), ("Yes, he is.", QUESTION, "yes"),
    ("The question touches two facts.\nLabel: both", QUESTION, "both"),
    ("Thinking about it...\nIrrelevant", QUESTION, "irrelevant"),
    ("Not relevant", QUESTION, None), ("", QUESTION, None), (None, QUESTION, None), ("Perhaps.", QUESTION, None),
    ("Correct!", VERDICT, "correct"), ("Incorrect.", VERDICT, "incorrect"), ("Verdict: correct", VERDICT, "correct"),
    ("Yes", VERDICT, None),
])
def test_the_label_normaliser(reply, labels, label):
    assert normalise_label(reply, labels) == label


# ---------------------------------------------------------------- certification


def problems(text: str) -> list[str]:
    return compile_text(text).certify()["problems"]


def test_certify_passes_a_sound_world(short_man):
    report = short_man.certify()
    assert report["problems"] == [] and report["setting"] == "puzzle"
    assert [f["reachable"] for f in report["facts"]] == [True, True]
    assert [g["accepted"] for g in report["guesses"]] == [False, False]  # the naive guess, the surface


@pytest.mark.parametrize("change, problem", [
    (('yes "Can he reach the button?"', 'yes "Is he tall?"'), "fact button (He cannot reach the higher "
                                                                        "buttons) is not reachable"),
    (('no "Is he tall?"', 'no "Is he tall?", "Is he small?"'), "its no phrasing 'Is he small?' is answered both"),
    (('naive "He wants the exercise."', 'naive "He is small."'), "accepts the surface-only guess 'He is small.'"),
    (('truth "He is too short', 'truth "He is too little'), "rejects the reference answer"),
    (("  required true\n", ""), "needs at least one required fact"),
    (('mention "short", "small"', 'mention "short", "floor"'), "already mentioned by the surface"),
])
def test_certify_finds_each_kind_of_flaw(change, problem):
    found = problems(PUZZLE.replace(*change))
    assert any(problem in p for p in found), found


def test_certify_checks_a_math_answer_and_its_trap():
    math = ('world "M" version 1\nkind judge\nseed 1\nsetting math\nsurface "2 + 2 * 3?"\n'
            'truth "Multiplication first: 2 + 6 = 8."\nanswer 8\nnaive "12"\n'
            'fact order "Multiplication comes first" { yes "Does multiplication come first?" }\n')
    w = compile_text(math)
    assert w.certify()["problems"] == [] and w.grading == "judge" and w.strict_grading and w.pass_at_k
    assert w.probe("ANSWER: 8").text == "correct" and w.probe("ANSWER: 8.0").text == "correct"
    assert any("accepts the surface-only guess '8'" in p for p in problems(math.replace('naive "12"', 'naive "8"')))


def test_worldspec_check_on_the_bundled_folders():
    for folder in (PUZZLES, MATH):
        r = CliRunner().invoke(main, ["check", folder])
        assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["check", CANDLES, "--json"])
    report = json.loads(r.output)
    assert report["kind"] == "judge" and report["problems"] == [] and len(report["facts"]) == 5


# ---------------------------------------------------------------- spec diagnostics


@pytest.mark.parametrize("change, message", [
    (("setting puzzle\n", ""), "this judge world has no setting line"),
    (("setting puzzle", "setting puzzel"), "unknown setting 'puzzel'"),
    (("setting puzzle", "setting math"), "this judge world has no answer line"),
    (('yes "Can he reach the button?"', 'no "Can he reach the button?"'), "fact button has no yes phrasing"),
    (('yes "Is he short?", "Is he small?"', 'yess "Is he short?"'), "unknown fact field 'yess'"),
    (('fact button', 'fact short'), "fact short is declared twice"),
    (("required true", "required 1"), "required takes true or false"),
    (('surface "A man', 'surfase "A man'), "unknown item 'surfase'"),
    (("seed 1\n", "seed 1\nbudget { turns 0 }\n"), "budget turns must be between 1 and 200"),
    (("seed 1\n", "seed 1\nbudget { shots 2 }\n"), "unknown budget entry 'shots'"),
    (("seed 1\n", "seed 1\nparam K = 3\n"), "a judge world has no base, rule, herring, param or def sections"),
    (('truth "He', 'truth 3 + "He'), "this value cannot be computed"),
])
def test_spec_mistakes_are_located_errors(change, message):
    with pytest.raises(SpecError) as info:
        compile_text(PUZZLE.replace(*change))
    assert message in info.value.render() and "t.world:" in info.value.render()


def test_budget_and_grading_are_read():
    w = compile_text(PUZZLE + "budget { turns 7 }\ngrading exact\n")
    assert w.budget.turns == 7 and w.grading == "exact" and "You have 7 turns" in w.manual


def test_boxed_answers_are_read_in_linear_time():
    # a regex searched from every \boxed{ was quadratic when no } followed
    assert not same_answer("\\boxed{" * 10_000, "250")
    assert same_answer("so \\boxed{ 250 }.", "250") and same_answer("\\boxed{\\frac{13}{28}}", "13/28")
