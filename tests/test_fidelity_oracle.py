"""The Oracle protocol and scorer as the released code runs them (lemonsis/Oracle_Benchmark, eva_models.py
`ReasoningLLM.evaluate`; issues 23 and 29).

Replies are written in the released harness's format (raw values) and graded as its per-family comparison
grades them, both where it is stricter than our lenient reading and where it is more lenient; the tests of a
box are asked in one continuing conversation with the released feedback; a report never averages runs of
different turn@shot settings.
"""
from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import load_world
from worldspec.compiler.blackbox import published
from worldspec.runner.models import Reply, ScriptedModel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORACLE = os.path.join(ROOT, "worlds", "oracle")


def box(path):
    return load_world(os.path.join(ORACLE, path + ".world"))


def grade(world, test_id, reply, stage="first", grading="published"):
    return world.verify(test_id, reply, grading, stage)


@pytest.fixture(scope="module")
def worlds():
    return {n: box(p) for n, p in {
        "alg": "code/cii-e-algebraic-operations", "sort": "code/cii-e-bubble-sort",
        "fowls": "code/cii-e-coins-for-fowls", "freq": "code/cii-e-most-frequent-char",
        "caesar": "encryption/eri-e-caesar-cipher", "swap": "circuit/cri-e-swap", "cycloid": "physics/psi-e-cycloid",
        "wordle": "puzzle/ipi-e-wordle"}.items()}


# ---------------------------------------------------------------- CII: str(truth) without spaces


def test_cii_compares_pythons_str_of_the_truth_without_spaces(worlds):
    sort, alg, fowls, freq = worlds["sort"], worlds["alg"], worlds["fowls"], worlds["freq"]
    assert sort.test_of("s1_c2_2_arr").expected == [42, 17, 99, 23, 88, 55, 12]
    # accepted: Python's str, its spaces anywhere, a trailing newline on the first reply
    for reply in ("[42, 17, 99, 23, 88, 55, 12]", "[42,17,99,23,88,55,12]", " [42, 17, 99, 23, 88, 55, 12]\n"):
        assert grade(sort, "s1_c2_2_arr", reply).passed, reply
    # rejected where our lenient reading accepts: a tuple, a fence, a retry's trailing newline
    for reply, stage in (("(42, 17, 99, 23, 88, 55, 12)", "first"), ("```\n[42, 17, 99, 23, 88, 55, 12]\n```", "first"),
                         ("[42, 17, 99, 23, 88, 55, 12]\n", "retry")):
        assert not grade(sort, "s1_c2_2_arr", reply, stage).passed, reply
        assert grade(sort, "s1_c2_2_arr", reply, stage, "lenient").passed, reply
    # numbers: 123.0 is not 123
    assert alg.test_of("s1_c1_1_a").expected == 123
    assert grade(alg, "s1_c1_1_a", "123").passed and not grade(alg, "s1_c1_1_a", "123.0").passed
    assert grade(alg, "s1_c1_1_a", "123.0", grading="lenient").passed
    # None, False and a list of strings are written as Python writes them, not as our values are
    assert alg.test_of("s2_c1_1_e").expected is None and fowls.test_of("s1_c2_11_f").expected is False
    for w, t, python, ours in ((alg, "s2_c1_1_e", "None", "none"), (fowls, "s1_c2_11_f", "False", "false"),
                               (freq, "s1_c2_4_c", "['a', 'b']", '["a", "b"]')):
        assert grade(w, t, python).passed and not grade(w, t, ours).passed, t
        assert grade(w, t, ours, grading="lenient").passed, t
        assert w.published_solution(t) == python


# ---------------------------------------------------------------- ERI and IPI: exact after rstrip('\n')


def test_eri_and_ipi_compare_exactly_after_rstrip_newline(worlds):
    caesar, wordle = worlds["caesar"], worlds["wordle"]
    c0, w0 = caesar.tasks[0].id, wordle.tasks[0].id
    assert caesar.test_of(c0).expected == "YcqksJzwevNwf" and wordle.task(w0).solution == "ARCANELY"
    for w, t, truth in ((caesar, c0, "YcqksJzwevNwf"), (wordle, w0, "ARCANELY")):
        assert grade(w, t, truth).passed and grade(w, t, truth + "\n\n").passed
        # surrounding spaces, quotes, backticks and fences: our lenient reading accepts them, published not
        for reply in (f" {truth} ", f'"{truth}"', f"`{truth}`", f"```\n{truth}\n```"):
            assert not grade(w, t, reply).passed, reply
            assert grade(w, t, reply, grading="lenient").passed, reply
        # a retry's reply is compared as it came
        assert not grade(w, t, truth + "\n", "retry").passed and grade(w, t, truth, "retry").passed


def test_eri_format_is_asked_again_as_released(worlds):
    caesar = worlds["caesar"]
    t = caesar.tasks[0].id
    assert caesar.published_reask(t, "YcqksJzwevNwf\n") == ""  # rstrip first: letters only
    assert caesar.published_reask(t, "`YcqksJzwevNwf`") == published.ERI_REASK
    assert caesar.published_reask(t, "") == published.ERI_REASK
    # a re-ask's reply is not rstripped: a newline is not a letter
    assert caesar.published_reask(t, "YcqksJzwevNwf\n", "reask") == published.ERI_REASK


# ---------------------------------------------------------------- CRI: json.loads then ==


def test_cri_reads_json_and_compares_with_equality(worlds):
    swap = worlds["swap"]
    t = swap.tasks[0].id
    assert swap.test_of(t).expected == [0, 1, 0, 1, 1, 1, 1, 0, 0]
    # more lenient than ours: JSON booleans equal 0 and 1, a ```python fence is cleared
    for reply in ("[false, true, false, true, true, true, true, false, false]",
                  "```python\n[0, 1, 0, 1, 1, 1, 1, 0, 0]\n```", "[0,1,0,1,1,1,1,0,0]\n"):
        assert grade(swap, t, reply).passed, reply
    assert not grade(swap, t, "[false, true, false, true, true, true, true, false, false]", grading="lenient").passed
    # stricter: a tuple is no JSON, so it is a wrong try with the released format message
    v = grade(swap, t, "(0, 1, 0, 1, 1, 1, 1, 0, 0)")
    assert not v.passed and v.retry == published.CIRCUIT_FORMAT
    assert grade(swap, t, "(0, 1, 0, 1, 1, 1, 1, 0, 0)", grading="lenient").passed
    v = grade(swap, t, "[1, 1, 1, 1, 1, 1, 1, 1, 1]")
    assert not v.passed and v.retry == "the answer is wrong when input = [1, 1, 1, 0, 0, 0, 1, 0, 1]"
    assert swap.published_next(True, "") == "your answer is correct. Let's move to next question."
    assert swap.published_next(False, v.retry) == v.retry + " Let's move to next question."


# ---------------------------------------------------------------- PSI: first three coordinates, > 0.01 fails


def test_psi_checks_the_first_three_coordinates_within_001(worlds):
    cyc = worlds["cycloid"]
    t = cyc.tasks[0].id
    assert cyc.test_of(t).expected == {"object1": [0.71, 1.13, 0.0]}
    for reply in ('{"object1": (0.71, 1.13, 0.0)}', "{'object1': [0.715, 1.135, 0.005]}",
                  '```json\n{"object1": [0.71, 1.13, 0.0]}\n```',
                  '{"object1": (0.71, 1.13, 0.0, 99.0)}'):  # a fourth coordinate is not read
        assert grade(cyc, t, reply).passed, reply
    assert not grade(cyc, t, '{"object1": (0.71, 1.13, 0.0, 99.0)}', grading="lenient").passed
    # 0.72 - 0.71 is 0.010000000000000009 in floating point: > 0.01 fails (ours allowed 1e-12 more)
    assert not grade(cyc, t, '{"object1": [0.72, 1.13, 0.0]}').passed
    # lenient grading too: a tolerance means what it says (issue 24; the 1e-12 of slack is gone)
    assert not grade(cyc, t, '{"object1": [0.72, 1.13, 0.0]}', grading="lenient").passed
    assert grade(cyc, t, '{"object1": [0.7199, 1.13, 0.0]}', grading="lenient").passed
    v = grade(cyc, t, '{"object1": [0.9, 1.13, 0.0]}')
    assert not v.passed and v.retry.startswith("Your answer for object1 is wrong.")
    # no dict: asked again, and after the re-asks no further try
    assert cyc.published_reask(t, "0.71, 1.13, 0.0") == published.PSI_REASK
    assert grade(cyc, t, "0.71, 1.13, 0.0").retry == ""
    # a retry's reply reaches the released check unparsed: it never passes
    assert not grade(cyc, t, '{"object1": [0.71, 1.13, 0.0]}', "retry").passed


# ---------------------------------------------------------------- GSI: unclipped max(score, 0) / normaliser


def test_gsi_reports_the_unclipped_published_figure_beside_the_clipped_one():
    w = box("game/gsi-e-rps7-random-3")  # normaliser: 3/7 of the rounds, below best play
    t = w.tasks[0].id
    game = w.test_play(t, 1)
    while not game.done:
        game.play(game.best_move())
    pub, ours = game.verdict("published"), game.verdict("lenient")
    norm = w.test_of(t).scale
    assert norm == pytest.approx(w.test_of(t).horizon * 3 / 7)
    assert pub.score == pytest.approx(max(game.match.score, 0) / norm) and pub.score > 1.0
    assert ours.score == 1.0 and pub.unclipped == ours.unclipped == pub.score


# ---------------------------------------------------------------- one continuing conversation


def test_tests_are_asked_in_one_conversation_with_the_released_feedback(tmp_path, run_world):
    caesar = box("encryption/eri-e-caesar-cipher")
    tasks = caesar.tasks[:3]
    caesar = caesar.__class__(**{**{a.name: getattr(caesar, a.name) for a in caesar.__attrs_attrs__},
                                 "tasks": tasks, "tests": caesar.tests[:3]})
    seen = []

    def policy(request):
        seen.append(request)
        if request.purpose == "explore":
            return Reply(content="```\nHello\n```")
        tid, shot = request.purpose[5:], request.meta["shot"]
        truth = caesar.task(tid).solution
        if tid == tasks[1].id and shot == 1:
            return Reply(content="WRONG")
        if tid == tasks[2].id and not request.meta.get("reask"):
            return Reply(content=f"`{truth}`")  # the wrong format: asked again
        return Reply(content=truth)

    res = run_world([caesar], [ScriptedModel(policy, name="m")], tmp_path, turns=2, shots=2)
    rec = res.trajectories[0]
    assert rec["grading"] == "published" and rec["endpoint"] == 100.0
    tests = [r for r in seen if r.purpose != "explore"]
    assert [(r.purpose[5:], r.meta["shot"], bool(r.meta.get("reask"))) for r in tests] == [
        (tasks[0].id, 1, False), (tasks[1].id, 1, False), (tasks[1].id, 2, False), (tasks[2].id, 1, False),
        (tasks[2].id, 1, True)]
    roles = lambda r: [m["role"] for m in r.messages]  # noqa: E731
    first = tests[0].messages
    # exploration: system, manual, then input / output; the last output opens test 1
    assert roles(tests[0]) == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "Output:" in first[-1]["content"] and "********Evaluation Starts, You Have 2 Chances for Answering " \
        "Each Question********\n Now answer the question: " in first[-1]["content"]
    # test 2 continues the same conversation after test 1's answer and the released feedback
    second = tests[1].messages
    assert second[:len(first)] == first
    assert [m["content"] for m in second[len(first):len(first) + 3]] == [
        tasks[0].solution, published.CORRECT_NEXT, "Ok."]
    assert second[-1]["content"].startswith("Answer the question: ")
    # its second shot follows the released retry message
    assert [m["content"] for m in tests[2].messages[-2:]] == ["WRONG", published.RETRY]
    # test 3 after test 2's feedback; its re-ask follows the reply in the wrong format
    third = tests[3].messages
    assert [m["content"] for m in third[-4:-1]] == [tasks[1].solution, published.CORRECT_NEXT, "Ok."]
    assert [m["content"] for m in tests[4].messages[-2:]] == [f"`{tasks[2].solution}`", published.ERI_REASK]
    # the messages are logged in order, the feedback and "Ok." between the tests
    log = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    said = [e["message"]["content"] for e in log if e["type"] == "message"]
    i = said.index(published.CORRECT_NEXT)
    assert said[i + 1] == "Ok." and said[i + 2].startswith("Answer the question: ")


def test_a_rejected_input_costs_its_turn_and_leaves_the_conversation(tmp_path, run_world):
    swap = box("circuit/cri-e-swap")
    seen = []

    def policy(request):
        seen.append(request)
        if request.purpose == "explore":
            n = sum(1 for m in request.messages if m["role"] == "assistant")
            return Reply(content="not bits" if n == 0 else "1 0 1 0 1 0 1 0 1")
        return Reply(content=swap.task(request.purpose[5:]).solution)

    rec = run_world([swap], [ScriptedModel(policy, name="m")], tmp_path, turns=3, shots=1).trajectories[0]
    assert rec["turns_used"] == 3 and sum(r.purpose == "explore" for r in seen) == 3
    turns = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    turns = [e for e in turns if e["type"] == "box_turn"]
    assert [e["counted"] for e in turns] == [True, True, True] and turns[0]["status"] == "rejected"
    # the unreadable input and the box's answer leave what the system sees once it has replied
    # (eva_models.py normal_output: has_format_mistake)
    later = [r for r in seen if r.purpose == "explore"][2].messages
    assert all(m["content"] != "not bits" for m in later)
    assert rec["endpoint"] == 100.0


# ---------------------------------------------------------------- one row per setting


def test_report_over_two_settings_prints_a_row_for_each_never_their_mean(tmp_path, run_world):
    caesar = box("encryption/eri-e-caesar-cipher")
    n = len(caesar.tasks)
    right = {"10@1": caesar.tasks[0].id, "20@2": caesar.tasks[1].id}

    def policy(request):
        if request.purpose == "explore":
            return Reply(content="Hello")
        tid = request.purpose[5:]
        # at 10@1 one test right; at 20@2 two (the second at its second shot)
        if tid == caesar.tasks[0].id or (request.meta["condition"] == "20@2" and tid == right["20@2"]
                                         and request.meta["shot"] == 2):
            return Reply(content=caesar.task(tid).solution)
        return Reply(content="nope")

    run_world([caesar], [ScriptedModel(policy, name="m")], tmp_path / "a", turns=10, shots=1)
    run_world([caesar], [ScriptedModel(policy, name="m")], tmp_path / "b", turns=20, shots=2)
    r = CliRunner().invoke(main, ["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "r"),
                                  "--no-plots"])
    assert r.exit_code == 0, r.output
    one, two = round(100 / n, 1), round(200 / n, 1)
    rows = [line for line in r.output.splitlines() if re.match(r"\| (10@1|20@2) \| m \|", line)]
    # the family table, the table beside the paper's o3 figures and the per-family table, each a row per setting
    assert len(rows) == 6
    assert rows[2:4] == [f"| 10@1 | m | ERI | {one} (1) | — | no / — |", f"| 20@2 | m | ERI | {two} (1) | — | no / — |"]
    # ERI easy, ERI hard, Easy, Hard, All
    assert rows[0] == f"| 10@1 | m | {one} | — | {one} | — | {one} |"
    assert rows[1] == f"| 20@2 | m | {two} | — | {two} | — | {two} |"
    assert f"{round(150 / n, 1)}" not in r.output  # the mean of the two settings appears nowhere
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["accuracy"] is None and set(summary["by_setting"]) == {"10@1", "20@2"}
    assert summary["by_setting"]["20@2"]["m"]["overall"] == pytest.approx(200 / n, abs=0.01)
    assert summary["grading"] == ["published"]
    assert "Grading: published: answers asked for, read and compared as the released Oracle code" in r.output


def test_the_grading_is_a_run_option_and_the_report_states_it(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", os.path.join(ORACLE, "circuit", "cri-e-swap.world"), "--agent", "oracle",
                                  "--grading", "lenient", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["grading"] == ["lenient"] and summary["accuracy"]["oracle"]["overall"] == 100.0
    md = (out / "report.md").read_text()
    assert "Grading: lenient: answers read from the last fenced block" in md
    # each family's mean (boxes) beside the paper's o3 figures (issue 26)
    assert "Beside the paper's best model: o3 averages over 70% on most easy boxes" in md
    assert "| oracle | CRI | 100.0 (1) | — | yes / — |" in md, md
    r = CliRunner().invoke(main, ["run", os.path.join(ORACLE, "circuit", "cri-e-swap.world"), "--grading", "loose",
                                  "--out", str(tmp_path / "x"), "--quiet"])
    assert r.exit_code == 2 and "loose" in r.output


def test_a_published_test_game_reads_each_move_as_written(tmp_path, run_world):
    """The released game platforms read the model's reply as written (`normal_output`'s return): under
    published grading a fenced move is asked again in a box that declares its platform's reader, and the
    bare move is played; lenient grading reads the fenced block. The smart opponent is told the reply."""
    smart = box("game/gsi-h-load-shoot-defend-smart")
    smart = smart.__class__(**{**{a.name: getattr(smart, a.name) for a in smart.__attrs_attrs__},
                               "tasks": smart.tasks[:1], "tests": smart.tests[:1]})

    def policy(request):
        if request.purpose == "explore":
            return Reply(content="```\nload\n```")
        last = request.messages[-1]["content"]
        return Reply(content="load" if last.startswith("rejected") else "```\nload\n```")

    for grading, per_round in (("published", 2), ("lenient", 1)):
        seen = []

        def record(request):
            seen.append(request)
            return policy(request)
        out = tmp_path / grading
        out.mkdir()
        rec = run_world([smart], [ScriptedModel(record, name="m")], out, turns=1, shots=1,
                        grading=grading).trajectories[0]
        horizon = smart.tests[0].horizon
        asked = [r for r in seen if r.purpose != "explore"]
        assert len(asked) == per_round * horizon, (grading, len(asked))
        assert rec["tests"][0]["shots"][0]["answer"].split() == ["load"] * horizon
        assert rec["grading"] == grading
