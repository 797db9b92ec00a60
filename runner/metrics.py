"""Exact metrics of explorationbench.txt section 3.3 and appendix A.6.

* M_{r,t}: 100/|T| * sum over tasks of the mean of that task's answers'
  verdicts (eq. 2). An answer lost to infrastructure is not a wrong answer:
  it is left out of its task's mean (and the milestone is marked invalid).
* per-pass scores M^(k)_{r,t} and sigma_{r,t}: their standard deviation
  (population form, ddof=0, over the k passes).
* Best@n = max_r M_{r,N}; r* = the lowest index among the maxima (eq. 3),
  compared exactly (fractions, not floats). Mean@n, worst.
* steps s_{r,t} = M_{r,t} - M_{r,t-1}; retained gain G_r = M_{r,N} - M_{r,0}
  (eq. 8); share of G_r carried by the largest step (defined when G_r > 0);
  regression: the trajectory ends at least 3 points below an earlier milestone.

UnprovRec (Table 1's diagnostic for AlienLogic) is the accuracy over the unprovable
tasks alone, i.e. the rate of correct refusals; it is computed per milestone by
the protocol and carried into the curve and the summary.

Then the summaries of finished sessions that report.py lays out: per (world,
system, condition) for milestone worlds; per system x family x difficulty for
turn@shot boxes; per system for pool play (score per round, cooperation and
betrayal rates with bootstrap 95% intervals over matches, per-opponent scores).
"""
from __future__ import annotations

import json
import math
import random
from collections import Counter, defaultdict
from fractions import Fraction
from typing import Mapping, Sequence

from worldspec import safejson

REGRESSION_POINTS = 3


def milestone_accuracy(verdicts: Mapping[str, Sequence[int | None]], answers: int) -> dict:
    """Scores of one milestone from {task: [y_1..y_A]} (None = lost)."""
    per_task: list[Fraction] = []
    passes_num = [0] * answers
    passes_den = [0] * answers
    lost = 0
    for ys in verdicts.values():
        got = [y for y in ys if y is not None]
        lost += len(ys) - len(got)
        if got:
            per_task.append(Fraction(sum(got), len(got)))
        for k, y in enumerate(ys[:answers]):
            if y is not None:
                passes_num[k] += y
                passes_den[k] += 1
    acc = Fraction(100) * sum(per_task, Fraction(0)) / len(per_task) if per_task else Fraction(0)
    passes = [Fraction(100 * n, d) if d else Fraction(0) for n, d in zip(passes_num, passes_den)]
    return {
        "accuracy": _f(acc),
        "accuracy_num": acc.numerator,
        "accuracy_den": acc.denominator,
        "passes": [_f(p) for p in passes],
        "sigma": _f(pstdev(passes)),
        "lost": lost,
    }


def pstdev(xs: Sequence[Fraction | float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(float(sum((x - m) ** 2 for x in xs) / len(xs)))


def _f(x) -> float:
    return round(float(x), 6)


def exact(m: Mapping) -> Fraction:
    """A milestone's accuracy as an exact fraction (falls back to the float)."""
    if "accuracy_num" in m and "accuracy_den" in m and m["accuracy_den"]:
        return Fraction(m["accuracy_num"], m["accuracy_den"])
    return Fraction(str(m["accuracy"]))


def endpoint(traj: Mapping) -> Fraction | None:
    ms = traj.get("milestones") or []
    return exact(ms[-1]) if ms else None


def trajectory_dynamics(milestones: Sequence[Mapping]) -> dict:
    """Steps, retained gain, largest-step share and regression of one trajectory."""
    if not milestones:
        return {"gain": None, "steps": [], "largest_step_share": None, "regression": False}
    ms = sorted(milestones, key=lambda m: m["t"])
    acc = [exact(m) for m in ms]
    steps = [acc[i] - acc[i - 1] for i in range(1, len(acc))]
    gain = acc[-1] - acc[0]
    share = None
    if steps and gain > 0:
        share = _f(max(steps) / gain)
    regression = any(acc[-1] <= a - REGRESSION_POINTS for a in acc[:-1])
    return {"gain": _f(gain), "steps": [_f(s) for s in steps],
            "largest_step_share": share, "regression": regression}


def best_of(trajectories: Sequence[Mapping]) -> dict:
    """Best@n, r*, Mean@n and worst over finished trajectories of one group.

    Trajectories are ordered by their index; r* is the lowest index among
    those whose endpoint equals the maximum exactly."""
    scored = [(t["trajectory"], endpoint(t), t) for t in trajectories if endpoint(t) is not None]
    if not scored:
        return {"best": None, "mean": None, "worst": None, "n": 0, "best_trajectory": None}
    scored.sort(key=lambda x: x[0])
    best_val = max(s[1] for s in scored)
    r_star = next(s for s in scored if s[1] == best_val)
    vals = [s[1] for s in scored]
    return {
        "best": _f(best_val),
        "mean": _f(sum(vals) / len(vals)),
        "worst": _f(min(vals)),
        "n": len(scored),
        "best_trajectory": r_star[0],
        "endpoints": [_f(v) for v in vals],
        "best_record": r_star[2],
    }


# ----------------------------------------------------------------------------
# Summaries of finished sessions, per protocol (report.py lays them out)

CURVE_KEYS = ("t", "accuracy", "passes", "sigma", "calls", "probe_units", "tokens", "rules_correct",
              "unprov_rec", "milestone_tokens")
FAMILY_ORDER = ("CII", "CRI", "PSI", "ERI", "IPI", "GSI")
BOOTSTRAP = 2000


def milestone_results(trajectories: Sequence[Mapping]) -> list[dict]:
    """Per (world, system, condition): Best@n and its trajectory's curve, gain, rules and budgets."""
    groups: dict[tuple, list] = defaultdict(list)
    for t in trajectories:
        if t.get("status") == "complete":
            groups[(t["world"], t["system"], t["condition"])].append(t)
    out = []
    for (world, system, condition), trajs in sorted(groups.items()):
        b = best_of(trajs)
        best = b.pop("best_record")
        ms = best["milestones"]
        last = ms[-1] if ms else {}
        out.append({
            "world": world, "system": system, "condition": condition, **b,
            "curve": [{k: m.get(k) for k in CURVE_KEYS} for m in ms],
            "m0": ms[0]["accuracy"] if ms and ms[0]["t"] == 0 else None,
            "gain": best.get("gain"),
            "largest_step_share": best.get("largest_step_share"),
            "regressions": sum(1 for t in trajs if t.get("regression")),
            "rules_correct": last.get("rules_correct"),
            "rules_total": last.get("rules_total"),
            "rules_stated": last.get("rules_stated_correctly") if last.get("rules_correct") is not None else None,
            # the diagnostic beside accuracy: rules stated correctly, or (worlds with unprovable goals) UnprovRec
            "unprov_rec": last.get("unprov_rec"),
            "source_trajectory": best.get("source_trajectory"),
            "volume": (best.get("volume") or {}).get("source"),
            "budget": {"C": last.get("calls"), "P": last.get("probe_units"), "T": last.get("tokens")} if ms else None,
            "covered": last.get("covered"),
            "uncovered": last.get("uncovered"),
            "valid": all(t.get("valid") for t in trajs),
            "identical": identical_trajectories(trajs),
        })
    return out


def identical_trajectories(trajs: Sequence[Mapping]) -> bool:
    """Whether n > 1 trajectories are one trajectory n times (every milestone the same: a deterministic
    system, such as a built-in agent, explores and answers alike each time, so n adds nothing)."""
    if len(trajs) < 2:
        return False
    first = json.dumps(trajs[0].get("milestones"), sort_keys=True, default=str)
    return all(json.dumps(t.get("milestones"), sort_keys=True, default=str) == first for t in trajs[1:])


def family_key(f: str):
    """The paper's family order, then any other family by name."""
    return (FAMILY_ORDER.index(f) if f in FAMILY_ORDER else len(FAMILY_ORDER), f)


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 2) if xs else None


def box_accuracy(records: Sequence[Mapping]) -> dict:
    """Per system: accuracy by family x difficulty, by family, by difficulty and overall (mean over boxes)."""
    by_sys: dict[str, dict] = {}
    for system in dict.fromkeys(r["system"] for r in records):
        mine = [r for r in records if r["system"] == system]
        fam = lambda r: r.get("family") or "-"  # noqa: E731
        cells = defaultdict(list)
        for r in mine:
            cells[f"{fam(r)}/{r.get('difficulty') or '-'}"].append(r["endpoint"])
        diff = {d: _mean([r["endpoint"] for r in mine if r.get("difficulty") == d]) for d in ("easy", "hard")}
        by_sys[system] = {
            "cells": {k: {"accuracy": _mean(v), "boxes": len(v)} for k, v in cells.items()},
            "families": {f: _mean([r["endpoint"] for r in mine if fam(r) == f])
                         for f in sorted({fam(r) for r in mine}, key=family_key)},
            "difficulty": diff, "boxes": len(mine), "overall": _mean([r["endpoint"] for r in mine]),
            "rank_key": (diff["easy"] or 0) + (diff["hard"] or 0),
        }
    return by_sys


def box_grading(r: Mapping) -> str:
    """How a box session's answers were graded (a session logged before gradings were named: lenient)."""
    return r.get("grading") or "lenient"


def setting_order(key: str):
    """turn@shot settings by turns, then shots (10@1 before 20@2), then anything else by name."""
    head = key.split(" ")[0]
    t, _, sh = head.partition("@")
    return (0, int(t), int(sh), key) if t.isdigit() and sh.isdigit() else (1, 0, 0, key)


def box_settings(records: Sequence[Mapping]) -> dict[str, list]:
    """Box sessions grouped by setting, the rows of a turn@shot report: the turn@shot (the released
    `--max_turns` / `--k`), with the grading when the sessions of one turn@shot were graded differently.
    Sessions of different settings are never averaged together."""
    gradings: dict[str, set] = defaultdict(set)
    for r in records:
        gradings[r["condition"]].add(box_grading(r))
    groups: dict[str, list] = defaultdict(list)
    for r in records:
        key = r["condition"] if len(gradings[r["condition"]]) == 1 else f"{r['condition']} ({box_grading(r)})"
        groups[key].append(r)
    return {k: groups[k] for k in sorted(groups, key=setting_order)}


def box_results(records: Sequence[Mapping]) -> list[dict]:
    """One row per (box, system): its accuracy and the curve of its one milestone (a game box: both figures,
    clipped to 100 and the released unclipped one)."""
    return [{"world": r["world"], "system": r["system"], "condition": r["condition"], "best": r["endpoint"],
             "mean": r["endpoint"], "worst": r["endpoint"], "n": 1, "best_trajectory": 1,
             "curve": [{k: m.get(k) for k in CURVE_KEYS if k in m} for m in r["milestones"]],
             "family": r.get("family"), "difficulty": r.get("difficulty"), "turns_used": r.get("turns_used"),
             "grading": box_grading(r), "clipped": r.get("clipped"), "unclipped": r.get("unclipped"),
             "valid": r.get("valid")} for r in records]


def pool_rates(matches: Sequence[Mapping]) -> dict:
    """Score per round, cooperation rate and betrayal rate over whole matches."""
    rounds = sum(m["rounds"] for m in matches)
    score = sum(m["score"] for m in matches)
    coop = sum(m.get("cooperations", 0) for m in matches)
    chances = sum(m.get("betrayal_chances", 0) for m in matches)
    betray = sum(m.get("betrayals", 0) for m in matches)
    return {"score_per_round": score / rounds if rounds else None,
            "cooperation_rate": coop / rounds if rounds else None,
            "betrayal_rate": betray / chances if chances else None}


def bootstrap(matches: Sequence[Mapping], key: str, seed: str, n: int = BOOTSTRAP) -> tuple | None:
    """A 95% percentile interval of a pool rate, resampling whole matches."""
    if not matches:
        return None
    rng = random.Random(seed)
    vals = []
    for _ in range(n):
        v = pool_rates([matches[rng.randrange(len(matches))] for _ in matches])[key]
        if v is not None:
            vals.append(v)
    if not vals:
        return None
    vals.sort()
    return (round(vals[int(0.025 * (len(vals) - 1))], 4), round(vals[int(0.975 * (len(vals) - 1))], 4))


def pool_results(records: Sequence[Mapping], baselines: Sequence[str]) -> list[dict]:
    """Per system: the rates with bootstrap intervals, per-opponent scores, best/mean/worst match."""
    by_sys: dict[str, list] = defaultdict(list)
    for r in records:
        if r.get("status") == "complete":
            by_sys[r["system"]].append(r)
    out = []
    for system, ms in by_sys.items():
        world = ms[0]["world"]
        main = pool_rates(ms)
        per_match = [m["per_round"] for m in ms if m["per_round"] is not None]
        best = max(range(len(ms)), key=lambda i: ms[i]["per_round"] or 0)
        row = {"world": world, "system": system, "condition": "pool", "baseline": system in baselines,
               "n": len(ms), "rounds": sum(m["rounds"] for m in ms),
               "best": round(max(per_match), 4) if per_match else None,
               "mean": round(sum(per_match) / len(per_match), 4) if per_match else None,
               "worst": round(min(per_match), 4) if per_match else None,
               "best_trajectory": ms[best]["match"], "curve": [],
               "invalid_moves": sum(m.get("invalid_moves", 0) for m in ms)}
        for key in ("score_per_round", "cooperation_rate", "betrayal_rate"):
            v = main[key]
            row[key] = round(v, 4) if v is not None else None
            row[key + "_ci"] = bootstrap(ms, key, f"{world}:{system}:{key}")
        row["per_opponent"] = {o: round(pool_rates([m for m in ms if m["opponent"] == o])["score_per_round"], 4)
                               for o in dict.fromkeys(m["opponent"] for m in ms)}
        out.append(row)
    out.sort(key=lambda r: (-(r["score_per_round"] or 0), r["system"]))
    return out


# ---------------------------------------------------------------- judge worlds

# The two conditions of a judge run: questions to a judge, and complete solutions sampled without one.
INTERACTIVE, PASSK = "interactive", "pass@k"


def mean(xs) -> float | None:
    """The mean, or None for no values."""
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


def judge_results(records: Sequence[dict]) -> dict:
    """The paper's numbers per (system, setting), and one row per (world, system).

    Accuracy = solved / finished sessions (%); turns = moves made (the forced final counts), mean over
    all sessions and over solved ones (the turn of the correct answer); questions by label; invalid
    judge replies; the player's output tokens per session. Math adds pass@1, k* and pass@k* accuracy
    with the token means k* was matched on, and the gap interactive - pass@k*."""
    passk = {(r["system"], r["world"]): r for r in records if r["condition"] == PASSK}
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        if r["condition"] == INTERACTIVE:
            groups[(r["system"], r.get("setting", ""))].append(r)
    results, worlds = [], []
    for (system, setting), rs in sorted(groups.items()):
        done = [r for r in rs if r.get("status") == "complete"]
        solved = [r for r in done if r["solved"]]
        questions = Counter()
        for r in done:
            questions.update(r.get("questions") or {})
        accuracy = 100.0 * len(solved) / len(done) if done else None
        row = {"system": system, "setting": setting, "judge": rs[0].get("judge"), "n": len(done),
               "solved": len(solved), "accuracy": accuracy,
               "turns_mean": mean(r["turns_used"] for r in done),
               "turns_solved_mean": mean(r["solved_at"] for r in solved),
               "questions": {k: questions.get(k, 0) for k in ("yes", "no", "both", "irrelevant")},
               "submissions": sum(r.get("submissions", 0) for r in done),
               "invalid_judge": sum(r.get("invalid_judge", 0) for r in done),
               "tokens_mean": mean(r.get("tokens", 0) for r in done), "pass_at_k": None}
        pk = [p for p in (passk.get((system, r["world"])) for r in done) if p and p.get("status") == "complete"]
        if pk:
            match = pk[0]["matching"]
            pass_k = 100.0 * sum(p["solved"] for p in pk) / len(pk)
            row["pass_at_k"] = {"n": len(pk), "k": match["k"], "capped": match["capped"],
                                "pass1": 100.0 * sum(p["pass1"] for p in pk) / len(pk), "pass_k": pass_k,
                                "interactive_tokens": match["interactive_tokens"],
                                "pass1_tokens": match["pass1_tokens"],
                                "gap": None if accuracy is None else accuracy - pass_k}
        results.append(row)
        for r in sorted(rs, key=lambda r: r["world"]):
            p = passk.get((system, r["world"]))
            worlds.append({"world": r["world"], "system": system, "setting": setting, "status": r["status"],
                           "solved": r.get("solved"), "turns_used": r.get("turns_used"),
                           "solved_at": r.get("solved_at"), "questions": r.get("questions") or {},
                           "invalid_judge": r.get("invalid_judge", 0), "tokens": r.get("tokens"),
                           "pass1": p["pass1"] if p else None, "pass_k": p["solved"] if p else None,
                           "k": p["k"] if p else None})
    return {"results": results, "worlds": worlds}


# ----------------------------------------------------------------------------
# Information per probe (docs/explorer.md)


def tool_exchanges(messages) -> list[tuple[str, str]]:
    """(program, feedback) for every tool call in a conversation that got a reply, in order."""
    programs: dict[str, str] = {}
    out = []
    for m in messages:
        for tc in m.get("tool_calls") or ():
            try:
                args = safejson.loads((tc.get("function") or {}).get("arguments") or "{}")
            except (ValueError, TypeError):
                args = {}
            if isinstance(args, dict):
                prog = next((v for v in args.values() if isinstance(v, str)), None)
                if prog is not None:
                    programs[tc.get("id", "")] = prog
        if m.get("role") == "tool" and m.get("tool_call_id") in programs:
            out.append((programs[m["tool_call_id"]], m.get("content") or ""))
    return out


def information_probes(world, messages) -> tuple[tuple[str, str, int], ...]:
    """(program, feedback, units charged) of each tool call of a trajectory, as World.information reads them.
    A call the world or the runner refused (`rejected: ...`, an unknown tool, invalid arguments) is charged
    nothing; a proof the checker rejected at a line (`rejected at line N ...`) was checked and is charged."""
    return tuple((p, f, 0 if f.startswith(("rejected:", "error: unknown tool", "error: invalid")) else world.charge(p))
                 for p, f in tool_exchanges(messages))


def information_record(scored) -> dict:
    """{"information": ...} for a trajectory's record from World.information's records (nothing for None:
    the world's kind does not measure it)."""
    if scored is None:
        return {}
    return {"information": information_summary(
        [{"bits": r.bits, "best": r.best, "units": r.units} for r in scored])}


def information_summary(probes: Sequence[Mapping]) -> dict:
    """Total bits, bits per call, efficiency (actual / best) and the probes that removed nothing."""
    bits = sum(p["bits"] for p in probes)
    best = sum(p["best"] for p in probes)
    calls = sum(1 for p in probes if p["units"])
    return {"probes": list(probes), "bits": round(bits, 2), "best": round(best, 2), "calls": calls,
            "bits_per_call": round(bits / calls, 3) if calls else None,
            "efficiency": round(bits / best, 3) if best else None,
            "removed_nothing": [i + 1 for i, p in enumerate(probes) if p["units"] and p["bits"] <= 0]}


def information_rows(trajectories: Sequence[Mapping]) -> list[dict]:
    """One row per trajectory that measured information, in record order."""
    return [{"world": t["world"], "system": t["system"], "condition": t["condition"],
             "trajectory": t["trajectory"], **{k: v for k, v in t["information"].items() if k != "probes"}}
            for t in trajectories if t.get("information")]
