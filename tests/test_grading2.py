"""Issue 12, the runner's part: scores as the paper defines them.

* An answer the model failed to give scores zero (empty, refused, cut off, a 400 for it);
  only infrastructure failures that outlast the retries leave it lost and the run invalid.
* The rule-report prompt, as sent, states no true rule of the world it is sent in.
* Worlds with unprovable goals report UnprovRec, not a rule score.
* A4+O continues the best autonomous trajectory's conversation; fixed follows the best
  autonomous trajectory's volume (`worldspec run aliencode ...` proves it); without-tool takes
  one turn per round (tests/test_fidelity_protocol.py).
"""
from __future__ import annotations

import glob
import json
import os

import attrs
import pytest
from click.testing import CliRunner

from runner_fakes import FakeWorld, policy_reply, scripted
from worldspec.cli import main
from worldspec.compiler import load_world
from worldspec.runner.answers import answer_outcome, grade_rule_report, report_instructions, true_rules_in
from worldspec.runner.models import (FatalError, LitellmModel, RejectedError, Reply, RetryPolicy,
                                     TransientError, classify_provider_error)
from worldspec.runner.protocols.conditions import reference_system
from worldspec.runner.log import read_events

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MILESTONE_WORLDS = [p for p in sorted(glob.glob(os.path.join(ROOT, "worlds", "*.world")))
                    if load_world(p).protocol == "milestone"]


def answering(per_task):
    """The explorer policy, except that held-out task TID gets per_task[TID](request)."""
    def fn(req):
        tid = req.purpose[5:] if req.purpose.startswith("task:") else None
        if tid in per_task:
            return per_task[tid](req)
        return policy_reply(req)
    return fn


def verdicts(read_log, out, **match):
    return [e for e in read_log(out) if e["type"] in ("verdict", "lost")
            and all(e.get(k) == v for k, v in match.items())]


# ----------------------------------------------------------------------------
# answers the model failed to give


@pytest.mark.parametrize("reply,outcome", [
    (Reply(content="```\nEMIT 10\n```"), "answered"),
    (Reply(content="```\nEMIT 10\n```", finish_reason="length"), "truncated"),
    (Reply(content=None, finish_reason="content_filter"), "refused"),
    (Reply(content=""), "empty"),
    (Reply(content="```\n\n```"), "empty"),
    (Reply(content="   \n"), "empty"),
])
def test_answer_outcomes(reply, outcome):
    assert answer_outcome(reply) == outcome


def test_a_missing_answer_scores_zero_and_the_log_says_why(tmp_path, run_world, read_log):
    # explorationbench.txt 3.3: "An answer that is missing or exhausts its time budget scores zero."
    w = FakeWorld()
    right = lambda tid, **kw: (lambda req: Reply(content=f"```\n{w.task(tid).solution}\n```", **kw))  # noqa: E731
    model = scripted(answering({
        "T1": lambda req: Reply(content=""),  # nothing
        "T2": right("T2", finish_reason="length"),  # the right program, but cut off at the token limit
        "T3": lambda req: Reply(content=None, finish_reason="content_filter"),  # refused
        "T4": right("T4"),
    }))
    res = run_world(w, [model], tmp_path, trajectories=1, conditions=("direct",))
    t = res.trajectories[0]
    assert res.summary["validity"]["valid"] and t["lost"] == 0
    for m in t["milestones"]:
        assert m["tasks"] == {"T1": [0, 0, 0], "T2": [0, 0, 0], "T3": [0, 0, 0], "T4": [1, 1, 1]}
        assert m["accuracy"] == 25.0
    outcomes = {e["task"]: e["outcome"] for e in verdicts(read_log, tmp_path)}
    assert outcomes == {"T1": "empty", "T2": "truncated", "T3": "refused", "T4": "answered"}
    assert all(e["passed"] is False for e in verdicts(read_log, tmp_path) if e["task"] != "T4")


def test_a_400_on_one_answer_scores_it_zero_and_the_run_goes_on(fake_openai, tmp_path, run_world, read_log):
    w = FakeWorld()
    seen = {"n": 0}

    def once(body):  # the first request for T2 at the last milestone is refused with a 400
        last = next(m for m in reversed(body["messages"]) if m["role"] == "user")["content"]
        hit = "Milestone M2" in last and "held-out task T2" in last and seen["n"] == 0
        seen["n"] += hit
        return hit

    fake_openai.fail_next("400", n=1, when=once)
    res = run_world(w, [LitellmModel("openai/fake-explorer", api_base=fake_openai.base_url)], tmp_path,
                    trajectories=1)
    assert [kind for kind, _ in fake_openai.faulted] == ["400"]
    assert res.summary["validity"]["valid"]  # a refused answer is a wrong answer, not a lost one
    t = res.trajectories[0]
    assert t["status"] == "complete" and [m["t"] for m in t["milestones"]] == [0, 1, 2]
    m2 = t["milestones"][2]
    assert sorted(m2["tasks"]["T2"]) == [0, 1, 1]
    assert m2["accuracy"] == pytest.approx(100 * (3 + 2 / 3) / 4, abs=1e-4)
    rejected = [e for e in verdicts(read_log, tmp_path) if e["outcome"] == "rejected"]
    assert len(rejected) == 1 and rejected[0]["task"] == "T2" and rejected[0]["t"] == 2
    assert [e["reason"] for e in read_log(tmp_path, "rejected")] == ["bad_request"]
    # nothing stopped: every later request was still sent
    assert not [e for e in read_log(tmp_path) if e["type"] == "error"]


def test_a_context_too_long_answer_scores_zero(tmp_path, run_world, read_log):
    def too_long(req):
        raise RejectedError("ContextWindowExceededError (HTTP 400): maximum context length", "context_window")

    res = run_world(FakeWorld(), [scripted(answering({"T4": too_long}))], tmp_path, trajectories=1)
    assert res.summary["validity"]["valid"]
    assert all(m["tasks"]["T4"] == [0, 0, 0] for m in res.trajectories[0]["milestones"])
    assert {e["outcome"] for e in verdicts(read_log, tmp_path, task="T4")} == {"context_too_long"}


def test_provider_400s_are_classified_by_what_they_refuse():
    class BadRequestError(Exception):
        status_code = 400

    class ContextWindowExceededError(BadRequestError):
        pass

    ctx = classify_provider_error(ContextWindowExceededError("This model's maximum context length is 8192"))
    assert isinstance(ctx, RejectedError) and ctx.reason == "context_window"
    assert classify_provider_error(BadRequestError("content_filter triggered")).reason == "content_policy"
    bad = classify_provider_error(BadRequestError("unsupported parameter: temperature"))
    assert isinstance(bad, RejectedError) and isinstance(bad, FatalError) and bad.reason == "bad_request"
    assert not isinstance(classify_provider_error(type("E", (Exception,), {"status_code": 401})("no")),
                          RejectedError)


def test_a_5xx_storm_leaves_the_answers_lost_and_the_run_invalid(tmp_path, run_world, read_log):
    def storm(req):
        if req.purpose != "explore" and req.meta["t"] == 1:
            raise TransientError("HTTP 503: service unavailable")
        return policy_reply(req)

    res = run_world(FakeWorld(), [scripted(storm)], tmp_path, trajectories=1,
                    retry=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.002))
    v = res.summary["validity"]
    assert not v["valid"] and v["lost_answers"] == 4 * 3 + 1  # every answer and the rule report at M1
    m1 = res.trajectories[0]["milestones"][1]
    assert all(ys == [None, None, None] for ys in m1["tasks"].values())
    lost = [e for e in verdicts(read_log, tmp_path) if e["type"] == "lost" and "task" in e]
    assert len(lost) == 12 and {e["outcome"] for e in lost} == {"lost"}


def test_a_400_on_every_request_is_a_configuration_error_not_a_zero(tmp_path, run_world):
    def refuse(req):
        raise RejectedError("the provider rejected the request: unsupported parameter")

    res = run_world(FakeWorld(), [scripted(refuse)], tmp_path, trajectories=1, conditions=("direct",))
    t = res.trajectories[0]
    assert t["status"] == "error" and "refused every request" in t["error"]
    assert not res.summary["validity"]["valid"]


def test_a_400_on_exploration_stops_the_run(tmp_path, run_world):
    def refuse(req):
        if req.purpose == "explore":
            raise RejectedError("the provider rejected the request: unsupported parameter")
        return policy_reply(req)

    with pytest.raises(FatalError, match="unsupported parameter"):
        run_world(FakeWorld(), [scripted(refuse)], tmp_path, trajectories=1)


def test_a_conversation_that_outgrows_the_context_ends_exploration_not_the_run(tmp_path, run_world, read_log):
    def grow(req):
        if req.purpose == "explore" and req.meta["t"] == 2:
            raise RejectedError("maximum context length exceeded", "context_window")
        return policy_reply(req)

    res = run_world(FakeWorld(), [scripted(grow)], tmp_path, trajectories=1)
    t = res.trajectories[0]
    assert res.summary["validity"]["valid"] and t["status"] == "complete"
    assert [m["t"] for m in t["milestones"]] == [0, 1, 2]  # every milestone is still asked
    assert t["exploration_ended"]["t"] == 2 and t["milestones"][2]["calls"] == t["milestones"][1]["calls"]
    assert [e["t"] for e in read_log(tmp_path, "exploration_ended")] == [2]


# ----------------------------------------------------------------------------
# the rule-report prompt gives no rule away


def rule_requests(model):
    return [r for r in model.seen if r.purpose == "rules"]


@pytest.mark.parametrize("seed", [None, 5])
@pytest.mark.parametrize("path", MILESTONE_WORLDS, ids=os.path.basename)
def test_the_rule_report_prompt_as_sent_states_no_true_rule(path, seed, tmp_path, run_world):
    w = load_world(path, seed)
    model = scripted(lambda req: Reply(content="```\nUNKNOWN\n```"))
    # direct answering explores nothing: its milestones send the question every milestone sends
    # (O@M0 asks for no rule report: the released _run_v2_oracle_diagnostics grades the tests only)
    run_world(w, [model], tmp_path, trajectories=1, answers=1, conditions=("direct",))
    sent = rule_requests(model)
    assert [r.meta["t"] for r in sent] == list(range(w.budget.rounds + 1))
    squash = lambda s: " ".join(s.split())  # noqa: E731
    for req in sent:
        prompt = squash(req.messages[-1]["content"])
        for r in w.rules:
            assert not (r.equation and squash(r.equation) in prompt), (r.id, r.equation)
            assert squash(r.statement) not in prompt, r.id
        # a report made of the prompt's examples, stated for every rule, states nothing correctly
        frags = [f for i, f in enumerate(prompt.split("`")) if i % 2]
        copied = "\n".join(f"{r.target}({', '.join(r.params)}) = {f}" for r in w.rules for f in frags)
        copied += "\n" + "\n".join(f"{r.id}: {f}" for r in w.rules for f in frags)
        assert grade_rule_report(w, copied)["correct"] == []


def test_examples_that_state_a_true_rule_are_withheld_and_logged(tmp_path, run_world, read_log):
    w = FakeWorld()
    w.report_instructions = ("Write one line per rule: `op NAME(params) = EQUATION`, for example `(* 3 x)`, "
                             "`(+ x 1)` or `op SQUARE(x) = (+ (* 3 x) 1)`. Write UNKNOWN otherwise.")
    assert true_rules_in(w, "`(* 3 x)`") == ["R1"]
    text, withheld = report_instructions(w)
    assert withheld == ["(* 3 x)", "op SQUARE(x) = (+ (* 3 x) 1)"]
    assert text == ("Write one line per rule: `op NAME(params) = EQUATION`, for example `(+ x 1)`. "
                    "Write UNKNOWN otherwise.")
    model = scripted(policy_reply)
    run_world(w, [model], tmp_path, trajectories=1)
    assert all(text in r.messages[-1]["content"] and "(* 3 x)" not in r.messages[-1]["content"]
               for r in rule_requests(model))
    assert read_log(tmp_path, "report_instructions")[0]["withheld"] == withheld
    # all examples gone: the phrase that introduced them goes with them
    w.report_instructions = "Write `op NAME(params) = EQUATION` lines, for example `(* 3 x)`. Or UNKNOWN."
    assert report_instructions(w)[0] == "Write `op NAME(params) = EQUATION` lines. Or UNKNOWN."


# ----------------------------------------------------------------------------
# UnprovRec for worlds with unprovable goals


def test_unprovable_tasks_report_unprovrec_instead_of_a_rule_score(tmp_path, run_world, read_log):
    w = FakeWorld()
    # any world whose tasks are labelled unprovable is diagnosed this way (no kind is asked)
    w.tasks = tuple(attrs.evolve(t, labels=t.labels + (("set", "unprovable"),)) if t.id in ("T3", "T4") else t
                    for t in w.tasks)
    res = run_world(w, [scripted(policy_reply)], tmp_path, trajectories=1)
    ms = res.trajectories[0]["milestones"]
    assert [m["unprov_rec"] for m in ms] == [50.0, 50.0, 100.0]  # T3 right from the start, T4 once R7 is learned
    assert all(m["rules_correct"] is None and m["unprovable"] == 2 for m in ms)
    reports = read_log(tmp_path, "rule_report")
    assert reports and all(e["scored"] is False for e in reports)  # asked and logged, not scored
    assert reports[-1]["correct"] == ["R1", "R7"]
    md = (tmp_path / "report.md").read_text()
    assert "| UnprovRec |" in md and "| Rules |" not in md and "UnprovRec 50.0 → 50.0 → 100.0" in md
    row = next(r for r in res.summary["results"] if r["condition"] == "autonomous")
    assert row["unprov_rec"] == 100.0 and row["rules_correct"] is None


def test_alienlogic_unprovrec_counts_correct_refusals(tmp_path, run_world):
    w = load_world("alienlogic")
    unprovable = [t for t in w.tasks if t.label("set") == "unprovable"]
    assert unprovable
    decline = w.decline
    model = scripted(lambda req: Reply(content=f"```\n{decline}\n```"))
    res = run_world(w, [model], tmp_path, trajectories=1, answers=1, conditions=("open-book-m0",))
    (m,) = res.trajectories[0]["milestones"]
    assert m["unprov_rec"] == 100.0 and m["rules_correct"] is None
    assert m["accuracy"] == pytest.approx(100 * len(unprovable) / len(w.tasks), abs=1e-6)


# ----------------------------------------------------------------------------
# the covered / not-covered split follows World.requires


def test_covered_split_uses_world_requires(tmp_path, run_world, monkeypatch):
    w = FakeWorld()
    needs = {"T1": {"R1"}, "T2": {"R1"}, "T3": {"R7"}, "T4": set()}
    monkeypatch.setattr(w, "requires", lambda task: frozenset(needs[task if isinstance(task, str) else task.id]))

    def only_r1(req):
        if req.purpose == "rules":
            return Reply(content="```\nop DOUBLE(x) = (* 3 x)\n```")
        return policy_reply(req)

    res = run_world(w, [scripted(only_r1)], tmp_path, trajectories=1)
    last = res.trajectories[0]["milestones"][-1]
    assert last["covered"]["n"] == 3 and last["uncovered"]["n"] == 1  # T1, T2, T4 | T3


# ----------------------------------------------------------------------------
# A4+O and the volumes of fixed and without-tool


def two_ways(req):
    """Trajectory 1 never probes; trajectory 2 probes as the explorer does (and so scores best)."""
    if req.purpose == "explore" and req.meta["trajectory"] == 1 and req.meta["condition"] == "autonomous":
        return Reply(content="I will not probe.")
    return policy_reply(req)


def test_a4_open_book_continues_the_best_autonomous_conversation(tmp_path, run_world, read_log):
    w = FakeWorld()
    model = scripted(two_ways)
    res = run_world(w, [model], tmp_path, conditions=("a4-open-book",), trajectories=2)
    by = {(t["condition"], t["trajectory"]): t for t in res.trajectories}
    assert set(by) == {("autonomous", 1), ("autonomous", 2), ("a4-open-book", 1)}  # autonomous ran first
    assert by[("autonomous", 2)]["endpoint"] > by[("autonomous", 1)]["endpoint"]
    a4 = by[("a4-open-book", 1)]
    assert a4["source_trajectory"] == "x|autonomous|2"
    assert [m["t"] for m in a4["milestones"]] == [w.budget.rounds] and a4["milestones"][0]["open_book"]
    # the budget of the conversation it continues
    assert a4["milestones"][0]["calls"] == by[("autonomous", 2)]["milestones"][-1]["calls"] > 0
    # no exploration of its own: every request is the source's whole conversation, then the rules,
    # the acknowledgement and one question (the released _run_v2_oracle_diagnostics)
    mine = [r for r in model.seen if r.meta["condition"] == "a4-open-book"]
    assert mine and not [r for r in mine if r.purpose == "explore"]
    source = [e["message"] for e in sorted(read_log(tmp_path, "message"), key=lambda e: e["index"])
              if e["conv"] == "x|autonomous|2"]
    assert all(list(r.messages[:len(source)]) == source for r in mine)
    (ack,) = [r for r in mine if r.purpose == "open_book_ack"]
    assert len(ack.messages) == len(source) + 1 and "complete list of rules" in ack.messages[-1]["content"]
    assert all(len(r.messages) == len(source) + 3 for r in mine if r is not ack)
    (fork,) = read_log(tmp_path, "fork")
    assert (fork["conv"], fork["source"], fork["prefix"]) == ("x|a4-open-book|1", "x|autonomous|2", len(source))


def test_fixed_follows_the_best_autonomous_volume_and_without_tool_takes_a_turn_a_round(tmp_path, run_world,
                                                                                        read_log):
    w = FakeWorld()
    res = run_world(w, [scripted(two_ways)], tmp_path, conditions=("autonomous", "fixed", "without-tool"),
                    trajectories=2)
    tools = read_log(tmp_path, "tool")
    best = [e for e in tools if e["conv"] == "x|autonomous|2"]
    (ref,) = read_log(tmp_path, "reference")
    assert ref["source"] == "x|autonomous|2 in this run" and ref["system"] == "x"
    per_round = [sum(1 for e in best if e["t"] == t) for t in range(1, w.budget.rounds + 1)]
    assert ref["calls_per_round"] == per_round and sum(per_round) < w.budget.max_calls
    fixed = [e for e in tools if e["condition"] == "fixed"]
    assert [sum(1 for e in fixed if e["t"] == t) for t in range(1, w.budget.rounds + 1)] == per_round
    assert [e["units"] for e in fixed] == [e["units"] for e in best]
    # without-tool: one model turn per round, whatever the best trajectory took (the released "think")
    requests = read_log(tmp_path, "request")
    assert [e["t"] for e in requests if e["purpose"] == "explore" and e["condition"] == "without-tool"] == \
        list(range(1, w.budget.rounds + 1))
    by = {t["condition"]: t for t in res.trajectories if t["condition"] != "autonomous"}
    assert by["fixed"]["volume"]["source"] == ref["source"] and "volume" not in by["without-tool"]


def test_the_volume_reference_is_the_mid_ranked_system():
    def rec(system, r, end):
        return {"system": system, "condition": "autonomous", "trajectory": r, "status": "complete",
                "milestones": [{"t": 4, "accuracy": end}]}

    records = [rec("a", 1, 90.0), rec("a", 2, 10.0), rec("b", 1, 50.0), rec("c", 1, 20.0), rec("c", 2, 30.0)]
    assert reference_system(records, ["a", "b", "c"]) == "b"
    assert reference_system(records[:2], ["a", "b", "c"]) == "a"
    assert reference_system([], ["a"]) is None


def test_worldspec_run_aliencode_derives_a4o_and_fixed_from_the_best_autonomous_trajectory(tmp_path):
    # issue 12's done-when command, with the built-in agents (fewer answers to keep it quick)
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["run", "aliencode", "--condition", "autonomous", "--condition", "a4-open-book",
                                  "--condition", "fixed", "--out", str(out), "--quiet", "-n", "2",
                                  "--answers", "1", "--agent", "oracle", "--agent", "manual"])
    assert r.exit_code == 0, r.output
    events = list(read_events(out / "log.jsonl"))
    records = {e["conv"]: e["record"] for e in events if e["type"] == "trajectory"}
    w = load_world("aliencode")
    summary = json.loads((out / "summary.json").read_text())
    for system in ("oracle", "manual"):
        r_star = next(g["best_trajectory"] for g in summary["results"]
                      if g["system"] == system and g["condition"] == "autonomous")
        best = f"{system}|autonomous|{r_star}"
        # A4+O continues that conversation: the log names it and its length
        fork = next(e for e in events if e["type"] == "fork" and e["conv"] == f"{system}|a4-open-book|1")
        assert fork["source"] == best and records[f"{system}|a4-open-book|1"]["source_trajectory"] == best
        n_messages = sum(1 for e in events if e["type"] == "message" and e["conv"] == best)
        assert fork["prefix"] == n_messages
        assert not [e for e in events if e["type"] == "request" and e["conv"] == f"{system}|a4-open-book|1"
                    and e["purpose"] == "explore"]
    # fixed: one volume for every system, from the mid-ranked system's best trajectory, as logged
    (ref,) = [e for e in events if e["type"] == "reference"]
    src = ref["source"].split(" ")[0]
    per_round = [sum(1 for e in events if e["type"] == "tool" and e["conv"] == src and e["t"] == t)
                 for t in range(1, w.budget.rounds + 1)]
    assert ref["calls_per_round"] == per_round and sum(per_round) < w.budget.max_calls
    for system in ("oracle", "manual"):
        fixed = [e for e in events if e["type"] == "tool" and e["conv"] == f"{system}|fixed|1"]
        assert [sum(1 for e in fixed if e["t"] == t) for t in range(1, w.budget.rounds + 1)] == per_round
        assert records[f"{system}|fixed|1"]["volume"]["source"] == ref["source"]
    md = (out / "report.md").read_text()
    assert f"fixed: volume of {ref['source']}" in md and "a4-open-book: continues" in md
