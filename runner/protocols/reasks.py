"""When the milestone protocol asks again, and what it says (ExplorationBench's released harness).

The released AlienCode harness (Tencent-Hunyuan/ExplorationBench,
explorationbench/sandboxes/code/run_eval.py) asks a turn again when it carries nothing to
measure, each at most twice:

* a held-out answer with nothing gradable (`_run_single_test`, `_needs_another_ask`,
  `_MAX_NO_CODE_RETRIES = 2`): a silent reply, a tool call against the closed book (made or
  printed as text), or a reply without an answer in it. An extra ask may only add an answer,
  never take one away: a re-ask that again gives nothing leaves the earlier reply standing;
* a rule summary stating fewer than 3 rules (`_run_milestone`, `MAX_RETRY = 2`,
  `len(extracted) < 3`), asked again in the same summary copy; the last summary is scored;
* an exploration block in which the model made no tool call (`_run_explore_phase`,
  `_MAX_NO_CODE_RETRIES`), nudged in the live conversation, so the nudge and its reply are
  exploration (they count in T, and their tool calls in C and P).

The AlienLogic harness (sandboxes/logic/harness.py) asks less: once, and never in exploration
(`PROOF_POLICY`); proof worlds follow it.

The wording of each message is ours; what it asks for is the released one's (cited at each).
Every re-ask is logged as a `reask` event naming its reason (`reask_event`).
"""
from __future__ import annotations

import re

import attrs

from ..answers import ANSWERED, answer_outcome, extract_answer, parse_rule_report, reportable_rules

MAX_REASKS = 2  # run_eval.py: _MAX_NO_CODE_RETRIES = 2 (answers, exploration); _run_milestone MAX_RETRY = 2
MIN_REPORTED_RULES = 3  # run_eval.py _run_milestone: a summary with fewer than 3 rules is asked again


@attrs.frozen
class Policy:
    """How often a world's milestone protocol asks again, and how."""

    answers: int = MAX_REASKS  # re-asks of a held-out answer with nothing gradable
    answers_fresh: bool = False  # each re-ask a fresh copy (question + nudge), not the same copy carried on
    rules: int = MAX_REASKS  # re-asks of a rule report
    rules_when: str = "few"  # "few": fewer than 3 rules (AlienCode); "empty": nothing came back (AlienLogic)
    explore: int = MAX_REASKS  # nudges of an exploration round without a tool call


# AlienCode, and every world without a harness of its own: sandboxes/code/run_eval.py
CODE_POLICY = Policy()
# AlienLogic: sandboxes/logic/harness.py asks every graded turn through `_chat_with_empty_retry`,
# once more when nothing usable came back (for a held-out theorem: `_graded_answer`, no proof
# block and no UNPROVABLE line), the failed turn rolled off and the question asked again with the
# retry note; a summary only when it came back empty; `run_explore` never nudges a round.
PROOF_POLICY = Policy(answers=1, answers_fresh=True, rules=1, rules_when="empty", explore=0)


def policy_of(world) -> Policy:
    """The re-ask policy of a world's released harness (AlienLogic's for proof worlds)."""
    return PROOF_POLICY if getattr(world, "kind", "") == "proof" else CODE_POLICY

# reasons, as the reask event names them
SILENT, CLOSED_BOOK_CALL, LEAKED_CALL, UNSUBMITTED = "silent", "tool_call", "leaked_tool_call", "unsubmitted"
FEW_RULES, NO_TOOL_CALL = "few_rules", "no_tool_call"


def gradable(reply) -> bool:
    """Whether a reply holds an answer to grade (answers.answer_outcome) and no tool call."""
    return not getattr(reply, "tool_calls", ()) and answer_outcome(reply) == ANSWERED


def leaked_call(text: str | None, tool_name: str) -> bool:
    """Whether a reply prints a call of the world's tool as text instead of answering
    (run_eval.py `_LEAKED_TOOL_CALL`: a call marker shortly before the tool's name)."""
    if not text or not tool_name:
        return False
    marker = r"(?:invoke|(?:tool|function)[\s_-]?call)"
    return re.search(marker + r"[^\n]{0,40}" + re.escape(tool_name), text, re.I) is not None


def answer_reask_reason(reply, tool_name: str) -> str | None:
    """Why a held-out answer is asked again, or None (run_eval.py `_needs_another_ask`): a call
    against the tool the closed book does not offer, the text of such a call, silence (nothing
    came back: empty, or cut off before any answer), or a reply with no answer to grade."""
    if getattr(reply, "tool_calls", ()):
        return CLOSED_BOOK_CALL
    content = getattr(reply, "content", None)
    if leaked_call(content, tool_name):
        return LEAKED_CALL
    outcome = answer_outcome(reply)
    if outcome == ANSWERED:
        return None
    if not extract_answer(content).strip():
        return SILENT
    return UNSUBMITTED


def answer_nudge(reason: str, tool_name: str) -> str:
    """What the re-ask says; run_eval.py `_SILENT_ANSWER_RETRY`, `_CLOSED_BOOK_RETRY`,
    `_CLOSED_BOOK_TOOL_DENIAL` and `_UNSUBMITTED_ANSWER_RETRY` say the same in Chinese."""
    final = "Give your final answer now, in a fenced code block."
    if reason == SILENT:
        return ("Your last reply held no answer at all (the reasoning may have used up the output "
                "budget). Keep the budget for the answer itself. " + final)
    if reason in (CLOSED_BOOK_CALL, LEAKED_CALL):
        return (f"No tool is available in this test: `{tool_name}` is not run here and the call "
                "returns nothing. Answer from the rules you have worked out. " + final)
    return ("Your last reply held no final answer that can be graded. This test is closed-book: "
            "nothing can be run or checked, so do not wait for a result. " + final)


def too_few_rules(world, text: str | None) -> bool:
    """Whether a rule report states fewer rules than the released harness accepts without asking
    again: 3 (run_eval.py `_run_milestone`), or every reportable rule of a world with fewer. A
    report that says UNKNOWN is complete as it stands: the released format lists every rule and
    counts the ones written UNKNOWN."""
    need = min(MIN_REPORTED_RULES, len(reportable_rules(world)))
    if len(parse_rule_report(text)) >= need:
        return False
    return not re.search(r"\bUNKNOWN\b", extract_answer(text), re.I)


def rules_need_reask(policy: Policy, world, text: str | None) -> bool:
    """Whether a rule report is asked again under a world's policy (see Policy.rules_when)."""
    if policy.rules_when == "empty":
        return not (text or "").strip()
    return too_few_rules(world, text)


def rules_nudge() -> str:
    """run_eval.py `_run_milestone` asks with world_data.SEXPR_RETRY_PROMPT: the reply did not
    summarise the rules in the required format; write no probes; list every rule, UNKNOWN for
    those not found."""
    return ("Your report did not state the rules in the form asked for. Do not write probes. "
            "State every rule you believe differs from the manual on a line of its own, in the form "
            "the instructions above give (UNKNOWN where you have found nothing), with the whole "
            "report in one fenced code block.")


def explore_nudge(tool_name: str, slots: int) -> str:
    """run_eval.py `_EXPLORE_NO_TOOL_RETRY`: no tool call this block, so nothing ran; this is no
    time to summarise; call the tool on what is still uncertain (with the block's limits)."""
    return (f"You made no `{tool_name}` call in this round, so nothing ran and you saw no real output. "
            f"This is not the time to summarise: call `{tool_name}` to probe what you are still unsure "
            f"about (up to {slots} calls this round).")


def reask_event(conv: str, where: str, attempt: int, reason: str, **fields) -> dict:
    """The log event of one re-ask: where (`explore:t2`, `rules:m1`, `task:m1:T3:a0`), which
    attempt (1 or 2) and why."""
    return {"type": "reask", "id": f"reask:{conv}:{where}:{attempt}", "conv": conv, "where": where,
            "attempt": attempt, "reason": reason, **fields}
