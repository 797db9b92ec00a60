"""Answers read as ExplorationBench's released harness reads them (docs/fidelity.md, exploration-answers).

Replies are written in the released harness's own formats (Tencent-Hunyuan/ExplorationBench:
sandboxes/code/run_eval.py `extract_code`, `_fenceless_code`, `extract_prediction`, `values_equal`,
`_extract_sexpr_rules`; sandboxes/code/world_data.py `SEXPR_MILESTONE_PROMPT`; sandboxes/logic/harness.py
`extract_first_proof`, `extract_unprovable`): several blocks with the answer first, tagged and untagged,
an unclosed fence, unfenced code, `ANSWER: UNPROVABLE` lines, `预测输出：` lines, the slot rule report.
Each style re-dresses the oracle's own correct answers on the bundled worlds (all must pass) and the
manual-trusting answers that fail (all must still fail); the counts are printed (`pytest -s`).
"""
import os
import re

import pytest

from conftest import WORLDS, box_world
from worldspec.compiler import load_world
from worldspec.runner.answers import (extract_answer, grade_rule_report, read_answer, reportable_rules,
                                      rule_report_instructions, slot_instructions, true_rules_in)
from worldspec.runner.models import Reply, ScriptedModel
from worldspec.runner.options import config_from
from worldspec.runner.reading import clean_code, decline_line, prediction


@pytest.fixture(scope="module")
def aliencode():
    return load_world(os.path.join(WORLDS, "aliencode.world"))


@pytest.fixture(scope="module")
def alienlogic():
    return load_world(os.path.join(WORLDS, "alienlogic.world"))


def _lines(text, f):
    return "\n".join(f(line) for line in text.split("\n"))


# Block layouts: how a correct answer arrives (the world's language tag is its name in lower case).
LAYOUTS = {
    "tagged": lambda a, tag: f"```{tag}\n{a}\n```",
    "untagged": lambda a, tag: f"```\n{a}\n```",
    "tagged, then a usage block": lambda a, tag: f"Here it is.\n```{tag}\n{a}\n```\nUsage:\n```\nEMIT(1)\n```\n",
    "untagged, then an output block": lambda a, tag: f"```\n{a}\n```\nIt prints:\n```text\n42\n```\n",
    "untagged, then another untagged": lambda a, tag: f"```\n{a}\n```\nFor instance:\n```\nEMIT(0)\n```",
    "python, then untagged": lambda a, tag: f"```python\n{a}\n```\nCheck:\n```\n0\n```",
    "unclosed fence": lambda a, tag: f"My answer:\n```{tag}\n{a}\n",
    "unfenced, in prose": lambda a, tag: f"My answer:\n\n{a}\n\nThat should do it.",
}
# Characters and fences chat interfaces add.
DRESS = {
    "BOM and U+200B": lambda a, tag: "\ufeff```\n" + _lines(a, lambda ln: "\u200b" + ln) + "\n```",
    "NBSP indentation": lambda a, tag: "```\n" + _lines(a, lambda ln: re.sub(
        r"^ +", lambda m: "\u00a0" * len(m.group()), ln)) + "\n```",
    "U+2212 minus": lambda a, tag: "```\n" + a.replace("-", "\u2212") + "\n```",
    "smart quotes": lambda a, tag: "```\n" + re.sub(r'"([^"\n]*)"', "\u201c\\1\u201d", a) + "\n```",
    "~~~ fences": lambda a, tag: f"~~~{tag}\n{a}\n~~~",
    "CR-only line ends": lambda a, tag: f"Answer:\n```\n{a}\n```\n".replace("\n", "\r"),
}
STYLES = {**LAYOUTS, **DRESS}


def _tally(world, tasks, style, tag):
    """(correct answers accepted, correct answers, wrong answers accepted, wrong answers) in one style."""
    ok = wrong = n_wrong = 0
    for t in tasks:
        ok += world.verify(t, read_answer(world, t, style(t.solution, tag))).passed
        if t.naive and not world.verify(t, t.naive).passed:
            n_wrong += 1
            wrong += world.verify(t, read_answer(world, t, style(t.naive, tag))).passed
    return ok, len(tasks), wrong, n_wrong


@pytest.mark.parametrize("name", list(STYLES))
def test_program_answers_in_every_style(aliencode, name):
    tasks = [t for t in aliencode.tasks if t.shape != "predict"]
    ok, n, wrong, n_wrong = _tally(aliencode, tasks, STYLES[name], "aliencode")
    print(f"AlienCode programs, {name}: {ok}/{n} accepted; wrong {wrong}/{n_wrong} accepted")
    assert (ok, n) == (69, 69) and wrong == 0 and n_wrong > 60


@pytest.mark.parametrize("name", list(STYLES))
def test_proofs_in_every_style(alienlogic, name):
    # the oracle's answers: 45 proofs and 25 declines (written UNPROVABLE, the form the task asks for)
    ok, n, wrong, n_wrong = _tally(alienlogic, alienlogic.tasks, STYLES[name], "alienlogic_proof")
    print(f"AlienLogic answers, {name}: {ok}/{n} accepted; wrong {wrong}/{n_wrong} accepted")
    assert (ok, n) == (70, 70) and wrong == 0 and n_wrong > 40


# harness.py `_heldout_prompt` asks for the line `ANSWER: UNPROVABLE` and "one sentence" after it
DECLINES = {
    "ANSWER: line": "I could not find a proof.\n\nANSWER: UNPROVABLE\n\nThe premises hold where the goal fails.",
    "full-width colon": "ANSWER：UNPROVABLE\n理由：存在反模型。",
    "bold, lower case": "**answer: unprovable**",
    "ANSWER: line, then a block": "ANSWER: UNPROVABLE\n\nA counter-model:\n```\nP = true, Q = false\n```",
    "our form, bare": "UNPROVABLE",
    "our form, fenced": "```\nUNPROVABLE\n```",
}


@pytest.mark.parametrize("name", list(DECLINES))
def test_declines_as_the_released_harness_reads_them(alienlogic, name):
    reply = DECLINES[name]
    unprovable = [t for t in alienlogic.tasks if t.label("set") == "unprovable"]
    provable = [t for t in alienlogic.tasks if t.label("set") != "unprovable"]
    ok = sum(alienlogic.verify(t, read_answer(alienlogic, t, reply)).passed for t in unprovable)
    wrong = sum(alienlogic.verify(t, read_answer(alienlogic, t, reply)).passed for t in provable)
    print(f"AlienLogic declines, {name}: {ok}/{len(unprovable)} accepted; {wrong}/{len(provable)} provable accepted")
    assert (ok, len(unprovable), wrong, len(provable)) == (25, 25, 0, 45)


def test_a_proof_block_is_graded_before_a_decline_line(alienlogic):
    # harness.py `_run_single_heldout`: `if proof_text:` is asked before `elif unprovable:`
    t = next(t for t in alienlogic.tasks if t.label("set") != "unprovable")
    both = f"ANSWER: UNPROVABLE\n\nor rather:\n```alienlogic_proof\n{t.solution}\n```"
    assert alienlogic.verify(t, read_answer(alienlogic, t, both)).passed
    assert not decline_line("the answer: UNPROVABLE, probably", "UNPROVABLE")  # a line of its own only


def test_predictions_as_the_released_harness_reads_them(aliencode):
    t = next(t for t in aliencode.tasks if t.shape == "predict")
    want = aliencode.predicted(t.id)
    replies = {
        "预测输出： line": f"预测输出：{want}",
        "bold 预测输出, a remark after": f"我的分析……\n\n**预测输出：{want}**（已验证）",
        "the last of two predictions": f"预测输出：0\n\n再想一下。\n\n预测输出：{want}",
        "Output: line": f"Output: {want}",
        "Predicted output: then the value": f"Predicted output:\n{want}\n\nbecause the words are reversed.",
        "Output: then a block, after the program": f"The program:\n```\nEMIT(1)\n```\nOutput:\n```\n{want}\n```",
        "leading spaces": "```\n" + _lines(want, lambda ln: "    " + ln) + "\n```",
    }
    for name, reply in replies.items():
        assert aliencode.verify(t, read_answer(aliencode, t, reply)).passed, name
        wrong = reply.replace(want, want + " 0")
        assert not aliencode.verify(t, read_answer(aliencode, t, wrong)).passed, name
    assert prediction("预测输出：**15** (checked)") == "15"


# world_data.py `SEXPR_MILESTONE_PROMPT`'s reply: a `R03 := EXPR` line per slot, in the layer layout
def _slot_report(rules, equation, pad=True):
    lines = ["My summary:", "", "--- L1: literals ---"]
    for r in rules:
        rid = re.sub(r"(\d+)", lambda m: m.group(1).zfill(2), r.id) if pad else r.id
        lines.append(f"{rid}   := {equation(r)}    # {r.target}")
    return "\n".join(lines + ["---"])


def test_slot_rule_reports_are_graded_by_the_equation_grader(aliencode):
    rules = reportable_rules(aliencode)
    right = grade_rule_report(aliencode, _slot_report(rules, lambda r: r.equation))["correct"]
    fenced = grade_rule_report(aliencode, "```\n" + _slot_report(rules, lambda r: r.equation, pad=False)
                               + "\n```\nNotes:\n```\nnone\n```")["correct"]
    shifted = {r.id: rules[(i + 1) % len(rules)].equation for i, r in enumerate(rules)}
    wrong = grade_rule_report(aliencode, _slot_report(rules, lambda r: shifted[r.id]))["correct"]
    unknown = grade_rule_report(aliencode, _slot_report(rules, lambda r: "??") + "\nR02 := UNKNOWN")["correct"]
    print(f"AlienCode slot report: {len(right)}/{len(rules)} correct; unpadded in a block {len(fenced)}; "
          f"shifted {len(wrong)}; ?? {len(unknown)}")
    assert len(right) == len(fenced) == len(rules) == 31 and wrong == [] and unknown == []


def test_the_slot_prompt_is_the_default_and_names_targets_not_equations(aliencode):
    text, _ = rule_report_instructions(aliencode)
    assert text == slot_instructions(aliencode)
    for r in reportable_rules(aliencode):
        assert f"{r.id} := ??" in text and r.target.split()[1] in text
    assert true_rules_in(aliencode, text) == []  # the slots name targets; no equation is given away
    assert rule_report_instructions(aliencode, "open")[0] == rule_report_instructions(aliencode, "slots")[0] \
        .split("(the world's own report lines are read too): ")[1].split("\n\n")[0]
    assert config_from({"trajectories": 1, "control_trajectories": 1, "fixed_seed": 0, "max_connections": 1,
                        "max_retries": 1, "retry_delay": 0}).rule_prompt == "slots"


def test_a_run_reads_answers_and_slot_reports_as_released(aliencode, tmp_path, run_world, read_log):
    """`worldspec run` on AlienCode: answers written first with a usage block after, the slot report."""
    rules = reportable_rules(aliencode)
    seen = []

    def reply(req):
        seen.append(req)
        if req.purpose == "rules":
            return Reply(content=_slot_report(rules, lambda r: r.equation))
        if not req.purpose.startswith("task:"):  # the open book's acknowledgement
            return Reply(content="Understood.")
        task = aliencode.task(req.purpose.split(":", 1)[1])
        if task.shape == "predict":
            return Reply(content=f"预测输出：{aliencode.predicted(task.id)}")
        return Reply(content=LAYOUTS["tagged, then a usage block"](task.solution, "aliencode"))

    res = run_world(aliencode, [ScriptedModel(reply, name="released-style")], tmp_path,
                    conditions=("direct",), control_trajectories=1, answers=1)
    milestones = res.trajectories[0]["milestones"]  # direct: every milestone asks again, with a rule report
    assert all(m["accuracy"] == 100.0 and m["rules_correct"] == 31 for m in milestones)
    rules_reqs = [r for r in seen if r.purpose == "rules"]
    assert rules_reqs and all("R14 := ??" in r.messages[-1]["content"] for r in rules_reqs)
    assert all(v["passed"] for v in read_log(tmp_path, "verdict"))


def test_box_answers_in_every_layout_and_invisible_character():
    """An Oracle box: the shared reading layer only (block choice, invisible characters); its scorer decides."""
    w = box_world(os.path.join(WORLDS, "oracle", "circuit", "cri-e-swap.world"))
    tasks = [t for t in w.tasks if t.solution and w.verify(t, t.solution).passed]
    styles = {**{k: v for k, v in LAYOUTS.items() if k != "unfenced, in prose"},
              "bare": lambda a, tag: a, "first, then python": lambda a, tag: f"```\n{a}\n```\n```python\nprint(1)\n```",
              **{k: DRESS[k] for k in ("BOM and U+200B", "~~~ fences", "CR-only line ends")}}
    for name, style in styles.items():
        ok = sum(w.verify(t, read_answer(w, t, style(t.solution, "text"))).passed for t in tasks)
        wrong = sum(w.verify(t, read_answer(w, t, style(other.solution, "text"))).passed
                    for t, other in zip(tasks, tasks[1:] + tasks[:1]) if other.solution != t.solution)
        print(f"{w.name} box answers, {name}: {ok}/{len(tasks)} accepted; {wrong} wrong accepted")
        assert ok == len(tasks) > 0 and wrong == 0, name


def test_what_cleaning_changes():
    assert clean_code("\ufeffSET x AS \u22121\r\u00a0\u00a0EMIT(\u201ca\u201d)") == 'SET x AS -1\n  EMIT("a")'
    assert extract_answer("```\nA\n```\n```python\nB\n```") == "A"  # no world: the first block
