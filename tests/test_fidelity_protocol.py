"""Issue 23: the milestone protocol's steps as the released ExplorationBench harness takes them.

Released code: Tencent-Hunyuan/ExplorationBench, explorationbench/sandboxes/code/run_eval.py.

* an answer with nothing gradable is asked again, at most twice (`_run_single_test`), and an
  extra ask only adds an answer; a rule summary of fewer than 3 rules is asked again, at most
  twice, in the same copy (`_run_milestone`); a round without a tool call is nudged, at most
  twice (`_run_explore_phase`). Each re-ask is a `reask` event and is counted;
* without-tool: one model turn per round ("think"); O@M0 and A4+O: the milestone's
  conversation, the rules, the model's acknowledgement, then the tests
  (`_run_v2_oracle_diagnostics`);
* a log written without re-asks loads and resumes.
"""
from __future__ import annotations

import shutil

from runner_fakes import SOLUTIONS, FakeWorld, policy_reply, scripted
from worldspec.compiler.api import Rule
from worldspec.runner.agents import ManualAgent, OracleAgent
from worldspec.runner.models import LitellmModel, Reply, ScriptedModel, ToolCall, Usage
from worldspec.runner.protocols.reasks import MAX_REASKS

NUDGE_SILENT = "held no answer at all"


def overriding(**per_purpose):
    """The fake explorer's policy, except for the purposes given (purpose -> fn(request))."""
    def fn(req):
        f = per_purpose.get(req.purpose.replace(":", "_"))
        return f(req) if f else policy_reply(req)
    return fn


def attempt(req) -> int:
    step = req.meta.get("step")
    return int(step.split()[1]) if isinstance(step, str) and step.startswith("reask") else 0


def msg_text(m) -> str:
    return m.get("content") or ""


# ----------------------------------------------------------------------------
# (a) an answer with nothing gradable, then a correct one: through litellm and the fake server


def test_a_silent_answer_is_asked_again_and_its_second_reply_is_graded(fake_openai, tmp_path, run_world,
                                                                       read_log):
    def responder(body):
        last = body["messages"][-1]
        if last["role"] == "user" and "held-out task T1 with" in msg_text(last):
            return {"content": "", "tool_calls": [], "usage": (50, 40)}  # thought to the end, said nothing
        if last["role"] == "user" and NUDGE_SILENT in msg_text(last):
            return {"content": f"```\n{SOLUTIONS['T1'][0]}\n```", "tool_calls": [], "usage": (60, 6)}
        return fake_openai.default_responder(body)

    fake_openai.responder = responder
    w = FakeWorld()
    model = LitellmModel("openai/fake-explorer", api_base=fake_openai.base_url, timeout=20.0)
    res = run_world(w, [model], tmp_path, trajectories=1, answers=1)
    assert res.summary["validity"]["valid"]
    t1 = [e for e in read_log(tmp_path, "verdict") if e["task"] == "T1"]
    assert len(t1) == w.budget.rounds + 1
    assert all(e["passed"] and e["reasks"] == 1 and e["outcome"] == "answered" for e in t1)
    asks = [e for e in read_log(tmp_path, "reask") if e["where"].startswith("task:")]
    assert [(e["t"], e["task"], e["attempt"], e["reason"]) for e in asks] == \
        [(t, "T1", 1, "silent") for t in range(w.budget.rounds + 1)]
    # the re-ask continues the same copy: the question, the empty reply, the nudge
    reask_bodies = [b for b in fake_openai.requests if NUDGE_SILENT in msg_text(b["messages"][-1])]
    assert len(reask_bodies) == w.budget.rounds + 1
    for b in reask_bodies:
        q, a, n = b["messages"][-3:]
        assert "held-out task T1 with" in q["content"] and a["role"] == "assistant" and not a["content"]
        assert n["role"] == "user" and "tools" not in b
    rec = res.trajectories[0]
    for m in rec["milestones"]:
        assert m["tasks"]["T1"] == [1] and m["reasks"] == {"rules": 0, "answers": 1}
    # counted: the re-ask's tokens are milestone tokens, never exploration tokens (T)
    m0 = rec["milestones"][0]
    replies = [e for e in read_log(tmp_path, "reply") if e["t"] == 0 and e["purpose"] != "explore"]
    assert m0["milestone_tokens"] == sum(e["reply"]["usage"]["input_tokens"] + e["reply"]["usage"]["output_tokens"]
                                         for e in replies)
    assert m0["tokens"] == 0


# ----------------------------------------------------------------------------
# (b) nothing gradable every time: asked exactly twice more, then it scores zero


def test_an_answer_that_stays_ungradable_is_asked_twice_more_then_scores_zero(tmp_path, run_world, read_log):
    w = FakeWorld()
    model = scripted(overriding(task_T2=lambda req: Reply(content="   ", usage=Usage(5, 5))))
    res = run_world(w, [model], tmp_path, trajectories=1, answers=1)
    asked = [r for r in model.seen if r.purpose == "task:T2"]
    per_milestone = {}
    for r in asked:
        per_milestone.setdefault(r.meta["t"], []).append(attempt(r))
    assert per_milestone == {t: [0, 1, 2] for t in range(w.budget.rounds + 1)}
    v = [e for e in read_log(tmp_path, "verdict") if e["task"] == "T2"]
    assert all(not e["passed"] and e["outcome"] == "empty" and e["reasks"] == MAX_REASKS for e in v)
    assert all(m["tasks"]["T2"] == [0] and m["reasks"]["answers"] == 2 for m in res.trajectories[0]["milestones"])
    assert [e["attempt"] for e in read_log(tmp_path, "reask") if e.get("task") == "T2" and e["t"] == 0] == [1, 2]


def test_a_closed_book_tool_call_is_answered_as_a_refused_call_and_a_later_answer_counts(tmp_path, run_world,
                                                                                           read_log):
    w = FakeWorld()

    def t3(req):
        if attempt(req) == 0:
            return Reply(content=None, tool_calls=(ToolCall("c1", w.tool.name, '{"program": "EMIT 1"}'),))
        return Reply(content=f"```\n{SOLUTIONS['T3'][0]}\n```")

    model = scripted(overriding(task_T3=t3))
    res = run_world(w, [model], tmp_path, trajectories=1, answers=1)
    second = [r for r in model.seen if r.purpose == "task:T3" and attempt(r) == 1]
    for r in second:
        call, result = r.messages[-2:]
        assert call["tool_calls"][0]["id"] == "c1" and result == {**result, "role": "tool", "tool_call_id": "c1"}
        assert "not run" in result["content"] and r.tools is None
    assert {e["reason"] for e in read_log(tmp_path, "reask") if e.get("task") == "T3"} == {"tool_call"}
    assert all(m["tasks"]["T3"] == [1] and m["reasks"]["answers"] == 1 for m in res.trajectories[0]["milestones"])


# ----------------------------------------------------------------------------
# (c) a rule summary of 2 rules, in a world of 3: asked again, at most twice, in the same copy


def three_rule_world() -> FakeWorld:
    w = FakeWorld()
    w.rules = w.rules + (Rule("R9", "QUAD adds two", "op QUAD", False, "QUAD(x) returns 4*x+2.",
                              "(+ (* 4 x) 2)", ("x",)),)
    return w


TWO_RULES = "```\nop DOUBLE(x) = (* 3 x)\nop TRIPLE(x) = (+ (* 3 x) 1)\n```"


def test_a_rule_summary_of_two_rules_is_asked_again_twice(tmp_path, run_world, read_log):
    w = three_rule_world()
    model = scripted(overriding(rules=lambda req: Reply(content=TWO_RULES, usage=Usage(3, 3))))
    res = run_world(w, [model], tmp_path, trajectories=1, answers=1)
    asks = [r for r in model.seen if r.purpose == "rules"]
    assert sorted((r.meta["t"], attempt(r)) for r in asks) == \
        [(t, k) for t in range(w.budget.rounds + 1) for k in range(MAX_REASKS + 1)]
    last = next(r for r in asks if r.meta["t"] == 0 and attempt(r) == 2)
    first = next(r for r in asks if r.meta["t"] == 0 and attempt(r) == 0)
    # the same summary copy, carried on: ask, report, nudge, report, nudge
    tail = last.messages[len(first.messages) - 1:]
    assert [m["role"] for m in tail] == ["user", "assistant", "user", "assistant", "user"]
    assert tail[0] == first.messages[-1] and tail[1]["content"] == TWO_RULES and tail[2] == tail[4]
    reasks = [e for e in read_log(tmp_path, "reask") if e["where"] == "rules:m0"]
    assert [(e["attempt"], e["reason"], e["stated"]) for e in reasks] == [(1, "few_rules", 2), (2, "few_rules", 2)]
    ms = res.trajectories[0]["milestones"]
    assert all(m["reasks"]["rules"] == 2 and m["rules_correct"] == 2 for m in ms)  # the last report is scored
    assert all(e["reasks"] == 2 for e in read_log(tmp_path, "rule_report"))


def test_a_third_rule_or_an_unknown_line_ends_the_re_asks(tmp_path, run_world):
    w = three_rule_world()

    def rules(req):
        if attempt(req) == 0:
            return Reply(content="I found that DOUBLE triples.")  # no report at all
        return Reply(content=TWO_RULES.replace("```\n", "```\nop QUAD(x) = UNKNOWN\n", 1))

    model = scripted(overriding(rules=rules))
    res = run_world(w, [model], tmp_path, trajectories=1, answers=1)
    assert all(m["reasks"]["rules"] == 1 for m in res.trajectories[0]["milestones"])


# ----------------------------------------------------------------------------
# (d) an exploration reply with no tool call is nudged, at most twice


def test_a_round_without_a_tool_call_is_nudged_twice_and_the_nudges_count_in_T(tmp_path, run_world, read_log):
    w = FakeWorld()
    model = scripted(overriding(explore=lambda req: Reply(content="I think I know enough.", usage=Usage(20, 5))))
    res = run_world(w, [model], tmp_path, trajectories=1, answers=1)
    explore = [r for r in model.seen if r.purpose == "explore"]
    assert [r.meta["t"] for r in explore] == [1, 1, 1, 2, 2, 2]
    nudges = [r.messages[-1] for r in explore if r.messages[-1]["role"] == "user"
              and "no `run_program` call" in r.messages[-1]["content"]]
    assert len(nudges) == 4
    assert [(e["t"], e["attempt"], e["reason"]) for e in read_log(tmp_path, "reask")
            if e["where"].startswith("explore")] == [(1, 1, "no_tool_call"), (1, 2, "no_tool_call"),
                                                      (2, 1, "no_tool_call"), (2, 2, "no_tool_call")]
    last = res.trajectories[0]["milestones"][-1]
    assert (last["calls"], last["probe_units"], last["exploration_requests"]) == (0, 0, 6)
    assert last["exploration_nudges"] == 4 and last["tokens"] == 6 * 25


def test_a_nudge_answered_with_probes_runs_them(tmp_path, run_world, read_log):
    w = FakeWorld()

    def explore(req):
        if req.tools and req.tool_choice != "none" and "no `run_program` call" in msg_text(req.messages[-1]):
            return Reply(content=None, tool_calls=(ToolCall(f"p{len(req.messages)}", w.tool.name,
                                                            '{"program": "EMIT DOUBLE(2)"}'),), usage=Usage(10, 2))
        return Reply(content="Nothing to add.", usage=Usage(10, 1))

    res = run_world(w, [scripted(overriding(explore=explore))], tmp_path, trajectories=1, answers=1)
    assert [e["t"] for e in read_log(tmp_path, "reask")] == [1, 2]  # one nudge a round, then the model probed
    last = res.trajectories[0]["milestones"][-1]
    assert last["calls"] == 2 and last["exploration_nudges"] == 2


def test_a_proof_world_asks_as_the_alienlogic_harness_once_afresh_and_never_nudges(tmp_path, run_world,
                                                                                    read_log):
    w = FakeWorld()
    w.kind = "proof"  # sandboxes/logic/harness.py: _chat_with_empty_retry, no exploration nudge
    model = scripted(overriding(task_T2=lambda req: Reply(content=""),
                                explore=lambda req: Reply(content="No probes from me.")))
    res = run_world(w, [model], tmp_path, trajectories=1, answers=1)
    t2 = [r for r in model.seen if r.purpose == "task:T2" and r.meta["t"] == 0]
    assert [attempt(r) for r in t2] == [0, 1]
    first, again = t2
    assert len(again.messages) == len(first.messages)  # the failed turn rolled off: a fresh copy
    assert again.messages[-1]["content"].startswith(first.messages[-1]["content"] + "\n\n")
    assert [r.meta["t"] for r in model.seen if r.purpose == "explore"] == [1, 2]
    assert not [e for e in read_log(tmp_path, "reask") if e["where"].startswith(("explore", "rules"))]
    assert all(m["reasks"]["answers"] == 1 for m in res.trajectories[0]["milestones"])


def test_built_in_agents_are_never_asked_again(tmp_path, run_world, read_log):
    w = FakeWorld()
    run_world(w, [OracleAgent(w), ManualAgent(w)], tmp_path, trajectories=1, answers=1)
    assert read_log(tmp_path, "reask") == []


# ----------------------------------------------------------------------------
# (e) without-tool, O@M0 and A4+O: the messages sent


def test_without_tool_takes_one_turn_per_round(tmp_path, run_world):
    w = FakeWorld()
    model = scripted(policy_reply)
    run_world(w, [model], tmp_path, conditions=("without-tool",), trajectories=1, answers=1)
    explore = [r for r in model.seen if r.purpose == "explore"]
    assert [r.meta["t"] for r in explore] == list(range(1, w.budget.rounds + 1))
    assert all(r.tools is None for r in explore)
    last = explore[-1].messages
    rounds = [m for m in last if m["role"] == "user" and m["content"].startswith("Round ")]
    assert len(rounds) == w.budget.rounds and all("no probe" in m["content"] for m in rounds)


def test_o_at_m0_discloses_the_rules_is_acknowledged_then_tested(tmp_path, run_world, read_log):
    w = FakeWorld()
    model = scripted(policy_reply)
    res = run_world(w, [model], tmp_path, conditions=("open-book-m0",), trajectories=1, answers=1)
    (ack,) = [r for r in model.seen if r.purpose == "open_book_ack"]
    system, opening, disclosure = ack.messages
    assert system["role"] == "system" and opening["role"] == "user" and disclosure["role"] == "user"
    assert "complete list of rules" not in opening["content"]
    assert disclosure["content"].startswith("The complete list of rules") and w.rules[0].statement in \
        disclosure["content"] and ack.tools is None
    tasks = [r for r in model.seen if r.purpose.startswith("task:")]
    assert len(tasks) == len(w.tasks)
    for r in tasks:
        assert r.messages[:3] == ack.messages and r.messages[3]["role"] == "assistant"
        assert r.messages[3]["content"] == policy_reply(ack).content  # the acknowledgement, as given
        assert r.messages[4]["role"] == "user" and "held-out task" in r.messages[4]["content"]
        assert len(r.messages) == 5 and r.tools is None
    assert not [r for r in model.seen if r.purpose in ("rules", "explore")]  # no rule report, no exploration
    (m,) = res.trajectories[0]["milestones"]
    assert m["t"] == 0 and m["open_book"] and m["rules_correct"] is None and m["accuracy"] == 100.0
    assert read_log(tmp_path, "open_book_ack")[0]["ack"] == policy_reply(ack).content


def test_a4_open_book_continues_the_autonomous_conversation_with_the_same_disclosure(tmp_path, run_world,
                                                                                     read_log):
    w = FakeWorld()
    model = scripted(policy_reply)
    res = run_world(w, [model], tmp_path, conditions=("a4-open-book",), trajectories=2, answers=1)
    (fork,) = read_log(tmp_path, "fork")
    source = [e["message"] for e in sorted((e for e in read_log(tmp_path, "message") if e["conv"] == fork["source"]),
                                           key=lambda e: e["index"])]
    mine = [r for r in model.seen if r.meta["condition"] == "a4-open-book"]
    (ack,) = [r for r in mine if r.purpose == "open_book_ack"]
    assert list(ack.messages[:-1]) == source and len(source) == fork["prefix"]
    assert ack.messages[-1]["content"].startswith("The complete list of rules")
    tasks = [r for r in mine if r.purpose.startswith("task:")]
    assert tasks and all(list(r.messages[:len(source) + 1]) == list(ack.messages) for r in tasks)
    assert all(r.messages[len(source) + 1]["role"] == "assistant" and r.messages[-1]["role"] == "user"
               and len(r.messages) == len(source) + 3 for r in tasks)
    assert not [r for r in mine if r.purpose in ("rules", "explore")]
    a4 = next(t for t in res.trajectories if t["condition"] == "a4-open-book")
    assert [m["t"] for m in a4["milestones"]] == [w.budget.rounds] and a4["milestones"][0]["open_book"]


# ----------------------------------------------------------------------------
# resume: a log written without re-asks loads and resumes


def test_a_log_without_re_asks_resumes_and_the_resumed_part_asks_again(tmp_path, run_world, read_log):
    w = FakeWorld()

    def silent_t1(req):
        if req.purpose != "task:T1":
            return policy_reply(req)
        return Reply(content="") if attempt(req) == 0 else Reply(content=f"```\n{SOLUTIONS['T1'][0]}\n```")

    old = ScriptedModel(silent_t1, name="explorer")
    old.reasks = False  # as the protocol was: no re-asks in the log
    first = tmp_path / "first"
    run_world(w, [old], first, trajectories=1, answers=1)
    assert read_log(first, "reask") == []
    out = tmp_path / "resumed"
    shutil.copytree(first, out)
    evs = (out / "log.jsonl").read_text().splitlines(keepends=True)
    (out / "log.jsonl").write_text("".join(evs[: len(evs) * 2 // 3]))
    (out / "trajectories.jsonl").unlink()
    res = run_world(w, [ScriptedModel(silent_t1, name="explorer")], out, trajectories=1, answers=1, resume=True)
    assert res.summary["validity"]["valid"] and res.stats["calls_from_log"] > 0
    ids = [e["id"] for e in read_log(out) if e.get("id")]
    assert len(ids) == len(set(ids))
    assert read_log(out, "reask")  # the answers asked after the resume were asked again
    assert all(m["tasks"]["T1"] == [1] for m in res.trajectories[0]["milestones"])
