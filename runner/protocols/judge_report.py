"""The judge protocol's report layout: pass@k* and the interactive metrics per system (report.py holds what
every layout shares; protocols/judge.py names this one)."""
from __future__ import annotations

from typing import Sequence

from .. import metrics
from ..report import Layout, num, table


def judge_summary(records: Sequence[dict], header: dict) -> dict:
    cfg = header.get("config", {})
    return {"judge": cfg.get("judge"), "judge_model": cfg.get("judge_model"), **metrics.judge_results(records)}


def judge_headline(summary: dict) -> list[str]:
    rows = []
    for r in summary["results"]:
        q = r["questions"]
        rows.append([r["system"], r["setting"], r["judge"], f"{num(r['accuracy'])} ({r['solved']}/{r['n']})",
                     num(r["turns_mean"]), num(r["turns_solved_mean"]),
                     f"{q['yes']}/{q['no']}/{q['both']}/{q['irrelevant']}", r["submissions"], r["invalid_judge"],
                     num(r["tokens_mean"], 0)])
    return table(("System", "Setting", "Judge", "Accuracy % (solved)", "Turns", "Turns (solved)",
                  "Questions yes/no/both/irrelevant", "Submissions", "Invalid judge replies", "Tokens"), rows)


def judge_markdown(summary: dict, images: Sequence[str]) -> list[str]:
    lines = ["Accuracy = puzzles or problems solved (a correct submission within the turns, or the final answer "
             "asked for after them); turns = moves per session (mean over all, and over solved ones at the "
             "correct answer); questions counted by the judge's label; tokens = the player's output tokens per "
             "session. A judge reply with no label is asked again once, then counted invalid and answered "
             "irrelevant (a submission: incorrect).", ""]
    lines += judge_headline(summary)
    math = [r for r in summary["results"] if r["pass_at_k"]]
    if math:
        lines += ["", "Interactive math against token-matched pass@k*: k* minimises |k * E[T_pass@1] - "
                  "E[T_interactive]| (player output tokens); a problem counts at pass@k* when one of k* "
                  "complete solutions sampled without a judge is correct.", ""]
        lines += table(("System", "Interactive %", "pass@1 %", "k*", "pass@k* %", "Interactive - pass@k*",
                        "E[T_interactive]", "E[T_pass@1]"),
                       [[r["system"], num(r["accuracy"]), num(p["pass1"]), f"{p['k']}{' (capped)' if p['capped'] else ''}",
                         num(p["pass_k"]), num(p["gap"]), num(p["interactive_tokens"], 0), num(p["pass1_tokens"], 0)]
                        for r in math for p in [r["pass_at_k"]]])
    passk = any(w["pass1"] is not None for w in summary["worlds"])
    yes_no = {None: "—", True: "yes", False: "no"}
    lines += ["", "## Worlds", ""]
    lines += table(("World", "System", "Solved", "Turns", "Questions yes/no/both/irrelevant", "Invalid")
                   + (("pass@1", "pass@k*") if passk else ()),
                   [(w["world"], w["system"], yes_no[w["solved"]], num(w["turns_used"]),
                     "/".join(str(w["questions"].get(k, 0)) for k in ("yes", "no", "both", "irrelevant")),
                     w["invalid_judge"])
                    + ((yes_no[w["pass1"]], f"{yes_no[w['pass_k']]} (k={w['k']})" if w["k"] else "—")
                       if passk else ())
                    for w in summary["worlds"]])
    return lines


JUDGE_LAYOUT = Layout("worldspec run report: judge worlds (situation puzzles, interactive math)", "sessions",
                      judge_summary, judge_headline, judge_markdown)
