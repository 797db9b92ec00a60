"""Run outputs, derived from the run log (the source of truth), for every protocol.

What a run writes beside its log, laid out per protocol (outputs.py writes them; this module holds what
the layouts share, and the layouts of the milestone, turn@shot, pool and judge protocols):

* trajectories.jsonl  one finished session per line (the last record of each
                      conversation: a resumed run that repaired a lost answer
                      supersedes the earlier record);
* summary.json        {"protocol", "validity", "results", ...}: per (world, system,
                      condition) best/mean/worst/n/best_trajectory and the best
                      trajectory's curve, plus what the protocol's tables need;
* report.md           the paper-style tables of the run's protocol;
* curves-WORLD.png    milestone curves of each group's best trajectory.

Every table goes through `table`, every number through `num`; a `Layout` says how
one protocol's summary is computed and laid out, and each protocol names its own.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

import attrs

from . import metrics
from .log import LoggedRun
from .plotting import pyplot
from .tally import counts_line


OUTPUTS = ("trajectories.jsonl", "summary.json", "report.md", "curves-*.png")  # what a run writes beside its log


class ReportError(Exception):
    """Runs that cannot be reported together."""


def slug(s: str) -> str:
    """A name safe in a file name: `curves-<slug>.png`, `runs/<slug>-TIME`."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-").lower() or "run"


# what a built-in agent's system id means, for people reading a table or a figure; the id itself stays
# the agent's name in --agent, the log, summary.json and trajectories.jsonl
LABELS = {"explorer": "explorer (naive-program repair)"}  # docs/explorer.md: it answers by repairing naive answers


def label(system: str) -> str:
    """A system as a report shows it: a built-in agent's id with what it is."""
    return LABELS.get(system, system)


def num(x, digits: int = 1) -> str:
    """A table cell: "—" for nothing, floats to `digits` places, anything else as it prints."""
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def table(head: Sequence[str], rows: Sequence[Sequence]) -> list[str]:
    """A Markdown table (cells are printed with str)."""
    return ["| " + " | ".join(map(str, head)) + " |", "|" + "---|" * len(head)] + \
        ["| " + " | ".join(map(str, row)) + " |" for row in rows]


# ----------------------------------------------------------------------------
# Validity


def validity(run: LoggedRun) -> dict:
    """Whether every expected session finished cleanly in a run that ended in success. The counts are the
    run's tally (tally.py), the one the live display showed."""
    expected = set(run.config.get("jobs", ()))
    records = run.records
    finished = {conv for conv, r in records.items() if r.get("status") == "complete"}
    invalid = sorted(conv for conv, r in records.items() if not r.get("valid", False))
    counts = run.tally.counts()
    lost = counts["lost_answers"]
    complete = expected <= finished and run.last_session == "success"
    clean = not invalid and lost == 0
    return {
        "valid": bool(complete and clean), "complete": bool(complete), "clean": bool(clean),
        "expected_trajectories": len(expected), "finished_trajectories": len(finished & expected),
        "missing": sorted(expected - finished), "invalid_trajectories": invalid, "lost_answers": lost,
        "retries": counts["retries"], "sessions": len(run.sessions), "last_session": run.last_session,
        # replies the response cache gave instead of the model (a rerun into a new --out may send no request)
        "cached_replies": counts["cached"],
        "requests": counts["requests"], "answered": counts["answered"],
        "milestone_requests": counts["milestone_requests"], "milestone_answered": counts["milestone_answered"],
        "running": counts["running"], "waiting": counts["waiting"],
        "errors": run.errors,
    }


def merged_validity(stamps: Sequence[dict], dirs: Sequence) -> dict:
    """The stamp of several runs read as one."""
    if len(stamps) == 1:
        return stamps[0]
    out = {k: all(s[k] for s in stamps) for k in ("valid", "complete", "clean")}
    for k in ("expected_trajectories", "finished_trajectories", "lost_answers", "retries", "sessions"):
        out[k] = sum(s[k] for s in stamps)
    for k in ("cached_replies", "requests", "answered", "milestone_requests", "milestone_answered", "running",
              "waiting"):
        out[k] = sum(s.get(k, 0) for s in stamps)
    for k in ("missing", "invalid_trajectories", "errors"):
        out[k] = [m for s in stamps for m in s[k]]
    out["runs"] = [str(d) for d in dirs]
    return out


def invalid_reasons(stamp: dict) -> list[str]:
    """Why a run is not valid, one reason a line (none for a valid run): what report.md and the viewer say."""
    if stamp.get("valid"):
        return []
    out = []
    last = stamp.get("last_session")
    if last is not None and last != "success" and "runs" not in stamp:
        out.append(f"its last session ended {last}, not in success (`--resume` continues it)")
    missing = stamp.get("missing") or []
    if missing:
        out.append(f"{len(missing)} of {stamp.get('expected_trajectories', 0)} sessions did not finish: "
                   + ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else ""))
    if stamp.get("lost_answers"):
        out.append(f"{stamp['lost_answers']} answers were lost to infrastructure (provider errors after every "
                   "retry); `--resume` asks them again")
    bad = [c for c in stamp.get("invalid_trajectories") or [] if c not in missing]
    if bad:
        out.append(f"{len(bad)} session(s) ended invalid: " + ", ".join(bad[:5]) + (" ..." if len(bad) > 5 else ""))
    out += [f"error: {e}" for e in (stamp.get("errors") or [])[:3]]
    return out or ["the run did not end in success"]


def stamp_counts(stamp: dict) -> dict:
    """A validity stamp's counts in the shape tally.counts_line says them (the console's last line)."""
    return {"finished": stamp["finished_trajectories"], "expected": stamp["expected_trajectories"],
            "running": stamp.get("running", 0), "waiting": stamp.get("waiting", 0),
            "requests": stamp.get("requests", 0), "answered": stamp.get("answered", 0),
            "milestone_requests": stamp.get("milestone_requests", 0),
            "milestone_answered": stamp.get("milestone_answered", 0), "cached": stamp.get("cached_replies", 0),
            "retries": stamp["retries"], "lost_answers": stamp["lost_answers"]}


def status_line(stamp: dict, noun: str) -> list[str]:
    lines = [f"Run status: **{'valid' if stamp['valid'] else 'INVALID'}** — {counts_line(stamp_counts(stamp), noun)}; "
             f"{stamp['sessions']} session(s) wrote the log."]
    if stamp.get("cached_replies"):
        lines.append(f"{stamp['cached_replies']} model replies came from the response cache, not the model "
                     "(`--no-cache` asks the model again: a fresh sample).")
    if stamp.get("missing"):
        lines.append(f"Missing: {', '.join(stamp['missing'][:20])}{' ...' if len(stamp['missing']) > 20 else ''}.")
    if not stamp["valid"]:
        lines += ["", "Not valid because:", ""] + [f"- {r}" for r in invalid_reasons(stamp)]
    return lines + [""]


# ----------------------------------------------------------------------------
# Milestone worlds


def milestone_summary(records: Sequence[dict], header: dict) -> dict:
    return {"results": metrics.milestone_results(records), "information": metrics.information_rows(records)}


def information_markdown(rows: Sequence[dict]) -> list[str]:
    """The information-per-probe table: one row per trajectory (docs/explorer.md)."""
    if not rows:
        return []
    return ["", "Information per probe, every trajectory: bits each probe removed from the built-in "
            "explorer's hypothesis space given the feedback before it; efficiency = bits / bits the best "
            "probe of the same cost was expected to remove; the probes (by number) that removed nothing.", ""] + \
        table(("World", "System", "Condition", "r", "Bits", "Bits/call", "Efficiency", "Removed nothing"),
              [(r["world"], label(r["system"]), r["condition"], r["trajectory"], num(r["bits"], 1),
                num(r["bits_per_call"], 2), num(r["efficiency"], 2),
                ", ".join(map(str, r["removed_nothing"])) or "none") for r in rows])


def identical_notes(results: Sequence[dict]) -> list[str]:
    """A line for each group whose n trajectories are one trajectory n times (metrics.identical_trajectories)."""
    return [f"- {label(r['system'])} / {r['condition']}: its {r['n']} trajectories are identical (a deterministic "
            "system explores and answers alike each time: Mean@n and Worst equal Best@n, and more trajectories "
            "add nothing)" for r in results if r.get("identical")]


def milestone_headline(summary: dict) -> list[str]:
    return table(("World", "System", "Condition", "Best", "Mean", "Worst", "n", "r*"),
                 [(r["world"], label(r["system"]), r["condition"], num(r["best"]), num(r["mean"]), num(r["worst"]),
                   r["n"], r["best_trajectory"]) for r in summary["results"]]) + identical_notes(summary["results"])


def milestone_markdown(summary: dict, images: Sequence[str]) -> list[str]:
    lines = []
    by_world: dict[str, list[dict]] = defaultdict(list)
    for r in summary["results"]:
        by_world[r["world"]].append(r)
    for world, rs in by_world.items():
        idx = {(r["system"], r["condition"]): r for r in rs}
        systems = list(dict.fromkeys(r["system"] for r in rs))
        last_t = max((r["curve"][-1]["t"] for r in rs if r["curve"]), default=4)
        # the diagnostic column (the paper's "Aux."): UnprovRec where the world has unprovable goals
        # (explorationbench.txt Table 1), the rule count where rule reports are scored
        unprov = any(r.get("unprov_rec") is not None for r in rs)
        aux = ("UnprovRec", f"UnprovRec = correct refusals on the unprovable tasks (%) at M{last_t}") if unprov \
            else ("Rules", f"rules = rules stated correctly at M{last_t}")
        lines += [f"## {world}", "",
                  f"Held-out accuracy (%), autonomous exploration: M0 and M{last_t} of the Best@n "
                  "trajectory (lowest index breaks ties), Mean@n and worst endpoint over n "
                  "trajectories; G = retained gain; open-book columns are the endpoints of those "
                  f"conditions (A4+O continues the Best@n trajectory); {aux[1]}; C/P/T = tool calls, "
                  "probe units, exploration tokens of the best trajectory.", ""]
        rows = []
        for s in systems:
            a, o0, a4 = idx.get((s, "autonomous")), idx.get((s, "open-book-m0")), idx.get((s, "a4-open-book"))
            row = [label(s)] + ([num(a["m0"]), num(a["best"]), num(a["mean"]), num(a["worst"]), a["n"], num(a["gain"])]
                         if a else ["—"] * 6)
            row += [num(o0["best"]) if o0 else "—", num(a4["best"]) if a4 else "—"]
            if a is None:
                row += ["—"] * 4
            else:
                bud = a["budget"] or {}
                if unprov:
                    diag = num(a.get("unprov_rec"))
                else:
                    diag = "—" if a["rules_correct"] is None else f"{a['rules_correct']}/{a['rules_total']}"
                row += [diag, num(bud.get("C")), num(bud.get("P")), num(bud.get("T"))]
            rows.append(row)
        lines += table(("System", "M0", f"M{last_t}", "Mean@n", "Worst", "n", "G", "O@M0", "A4+O", aux[0],
                        "C", "P", "T"), rows)
        conds = [c for c in ("autonomous", "hindsight", "fixed", "without-tool", "direct", "open-book-m0",
                             "a4-open-book") if any(k[1] == c for k in idx)]
        if len(conds) > 1:
            lines += ["", "Endpoints by condition (Best@n for autonomous; the best of the "
                      "control trajectories otherwise), with the gain from each condition's own M0.", ""]
            lines += table(["System", *conds],
                           [[label(s)] + [_endpoint(idx.get((s, c))) for c in conds] for s in systems])
        lines += ["", "Milestone curves of the best trajectories (accuracy % at M0..MN; σ = "
                  "population standard deviation of the per-pass scores at the last milestone):", ""]
        for r in rs:
            curve = " → ".join(num(m["accuracy"]) for m in r["curve"])
            sig = num(r["curve"][-1]["sigma"]) if r["curve"] else "—"
            reg = f", {r['regressions']} regression(s)" if r["regressions"] else ""
            unp = ""
            if any(m.get("unprov_rec") is not None for m in r["curve"]):
                unp = "; UnprovRec " + " → ".join(num(m.get("unprov_rec")) for m in r["curve"])
            lines.append(f"- {label(r['system'])} / {r['condition']} (r*={r['best_trajectory']} of "
                         f"{r['n']}): {curve} (σ {sig}{reg}{unp})")
        same = identical_notes(rs)
        if same:
            lines += ["", "Trajectories that repeat one another:", ""] + same
        sources = [f"- {label(r['system'])} / {r['condition']}: " + (
            f"continues {r['source_trajectory']}" if r.get("source_trajectory") else f"volume of {r['volume']}")
            for r in rs if r.get("source_trajectory") or r.get("volume")]
        if sources:
            lines += ["", "Where the derived conditions come from (A4+O: the autonomous conversation it "
                      "continues; fixed: the trajectory whose volume it follows):", ""] + sources
        stated = [r for r in rs if r.get("rules_stated") is not None]
        if stated:
            lines += ["", f"Rules stated correctly in the rule report at the last milestone of the best "
                      "trajectory, by id:", ""]
            lines += [f"- {label(r['system'])} / {r['condition']}: {', '.join(r['rules_stated']) or 'none'} "
                      f"({len(r['rules_stated'])}/{r['rules_total']})" for r in stated]
        cov_lines = []
        for r in rs:
            cov, unc = r.get("covered") or {}, r.get("uncovered") or {}
            if r["condition"] == "autonomous" and (cov.get("n") or unc.get("n")):
                cov_lines.append(f"- {label(r['system'])}: {cov.get('n', 0)} tasks covered (accuracy "
                                 f"{num(cov.get('accuracy'))}), {unc.get('n', 0)} not covered (accuracy "
                                 f"{num(unc.get('accuracy'))})")
        if cov_lines:
            lines += ["", f"Tasks split by the M{last_t} rule report of the best trajectory: a task "
                      "is covered when every rule it requires is stated correctly.", ""] + cov_lines
        lines += [f"\n![milestone curves for {world}]({img})" for img in images if img == curves_name(world)]
        lines.append("")
    lines += information_markdown(summary.get("information") or ())
    if not summary["results"]:
        lines.append("No finished trajectories.")
    return lines


def _endpoint(r: dict | None) -> str:
    if r is None:
        return "—"
    if r["gain"] is not None and len(r["curve"]) > 1:
        return f"{num(r['best'])} ({r['gain']:+.1f})"
    return num(r["best"])


def curves_name(world: str) -> str:
    return f"curves-{slug(world)}.png"


LEGEND_FONT = 10  # points: readable at the figure's printed size
LEGEND_COLUMNS = 2  # legend entries side by side under the axes


def curves_figure(world: str, rs: Sequence[dict], valid: bool = True):
    """The figure of one world's best-trajectory curves; an invalid run is stamped INVALID across it."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8.0, 4.4), dpi=100)
    ticks: set[int] = set()
    for r in rs:
        xs = [m["t"] for m in r["curve"]]
        ticks.update(xs)
        ax.plot(xs, [m["accuracy"] for m in r["curve"]], "-o" if len(xs) > 1 else "s",
                label=f"{label(r['system'])} / {r['condition']}", markersize=5)
    ax.set_xticks(sorted(ticks), [f"M{t}" for t in sorted(ticks)])  # milestones are stages, not a scale
    ax.set_xlabel("milestone")
    ax.set_ylabel("held-out accuracy (%)")
    ax.set_ylim(-2, 102)
    ax.set_title(f"{world}: best trajectories" + ("" if valid else " — INVALID run (see summary.json validity)"))
    ax.grid(alpha=0.3)
    # below the axes, in columns, so that no curve hides under it and the axes keep the figure's width
    # (beside them, long labels such as "explorer (naive-program repair) / autonomous" took half of it)
    ax.legend(fontsize=LEGEND_FONT, loc="upper center", bbox_to_anchor=(0.5, -0.16), borderaxespad=0.0,
              ncol=min(LEGEND_COLUMNS, max(1, len(rs))), frameon=False)
    if not valid:
        ax.text(0.5, 0.5, "INVALID", transform=ax.transAxes, fontsize=64, color="red", alpha=0.3,
                rotation=25, ha="center", va="center", weight="bold")
    fig.tight_layout()
    return fig


def plot_curves(results: Sequence[dict], out: Path, valid: bool = True) -> list[str]:
    """One PNG per world: the best trajectory's curve of each (system, condition)."""
    names = []
    by_world: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        if r["curve"]:
            by_world[r["world"]].append(r)
    for world, rs in by_world.items():
        fig = curves_figure(world, rs, valid)
        fig.savefig(out / curves_name(world), bbox_inches="tight")
        pyplot().close(fig)
        names.append(curves_name(world))
    return names


# ----------------------------------------------------------------------------
# Turn@shot boxes


GRADING_NOTES = {
    "published": "published: answers asked for, read and compared as the released Oracle code does "
                 "(lemonsis/Oracle_Benchmark eva_models.py `evaluate`: each family's comparison, its format "
                 "re-asks and retry messages); game boxes score max(score, 0) / the published normaliser, "
                 "not clipped at 100",
    "lenient": "lenient: answers read from the last fenced block and compared as each box's own grading "
               "(quotes, fences, tuples for lists, tolerances); game boxes score score / the published "
               "normaliser, clipped to [0, 100]",
}


def box_summary(records: Sequence[dict], header: dict) -> dict:
    cfg = header.get("config", {})
    groups = metrics.box_settings(records)
    by_setting = {k: metrics.box_accuracy(rs) for k, rs in groups.items()}
    return {"turn_shot": sorted({r["condition"] for r in records}, key=metrics.setting_order),
            "settings": {k: len({r["world"] for r in rs}) for k, rs in groups.items()},
            "grading": sorted({metrics.box_grading(r) for r in records}),
            "turns": cfg.get("turns"), "shots": cfg.get("shots"),
            # the one setting's table; null when the runs mix settings (never averaged: see by_setting)
            "accuracy": next(iter(by_setting.values())) if len(by_setting) == 1 else None,
            "by_setting": by_setting, "results": metrics.box_results(records)}


def _families(by_setting: dict) -> list[str]:
    fams = {f for acc in by_setting.values() for s in acc.values() for f in s["families"]} - {"-"}
    return sorted(fams, key=metrics.family_key)


def _ranked(by_setting: dict) -> list[tuple[str, str, dict]]:
    """(setting, system, its accuracy): settings in order, systems ranked within each."""
    return [(k, system, s) for k, acc in by_setting.items()
            for system, s in sorted(acc.items(), key=lambda kv: -kv[1]["rank_key"])]


def box_headline(summary: dict) -> list[str]:
    by, fams = summary["by_setting"], _families(summary["by_setting"])
    return table(["Turn@shot", "System", *[f"{f} {d}" for f in fams for d in ("easy", "hard")], "Easy", "Hard",
                  "All"],
                 [[setting, system, *[num(s["cells"].get(f"{f}/{d}", {}).get("accuracy")) for f in fams
                                      for d in ("easy", "hard")],
                   num(s["difficulty"]["easy"]), num(s["difficulty"]["hard"]), num(s["overall"])]
                  for setting, system, s in _ranked(by)])


def _figures(r: dict) -> str:
    if r.get("unclipped") is None:
        return "—"
    return f"{num(r['clipped'])} / {num(r['unclipped'])}"


# The paper's only figures for its best model in text (shared/seeds/oracle-benchmark.txt, abstract: o3
# "achieves an average accuracy exceeding 70% on most easy black-boxes and approximately 40% on most hard
# ones"); its per-family bars are given only as images (assets/benchmark10@1.png, benchmark20@2.png).
PAPER_O3 = {"easy": 70.0, "hard": 40.0}


def paper_reference(summary: dict) -> list[str]:
    """Each system's family x difficulty means beside the paper's o3 figures (boxes of the six families)."""
    by, fams = summary["by_setting"], _families(summary["by_setting"])
    if not fams:
        return []
    rows = []
    for setting, system, s in _ranked(by):
        for f in fams:
            cells = [s["cells"].get(f"{f}/{d}") for d in ("easy", "hard")]
            shown = [f"{num(c['accuracy'])} ({c['boxes']})" if c else "—" for c in cells]
            met = ["—" if c is None else "yes" if c["accuracy"] >= PAPER_O3[d] else "no"
                   for c, d in zip(cells, ("easy", "hard"))]
            rows.append([setting, system, f, *shown, f"{met[0]} / {met[1]}"])
    return ["", f"Beside the paper's best model: o3 averages over {num(PAPER_O3['easy'], 0)}% on most easy boxes and "
            f"about {num(PAPER_O3['hard'], 0)}% on most hard ones (the paper's text; its per-family bars are given "
            "only as figures). Each family's mean against those two figures:", ""] + \
        table(["Turn@shot", "System", "Family", "Easy", "Hard", f"≥ {num(PAPER_O3['easy'], 0)} / "
               f"≥ {num(PAPER_O3['hard'], 0)}"], rows)


def box_markdown(summary: dict, images: Sequence[str]) -> list[str]:
    by, fams = summary["by_setting"], _families(summary["by_setting"])
    settings = summary.get("settings") or {}
    shown = [f"{k} ({n} box{'es' if n != 1 else ''})" for k, n in settings.items()] if len(settings) > 1 \
        else list(settings) or summary["turn_shot"]
    lines = [f"Turn@shot: {', '.join(shown) or '—'}." + (" Each setting is its own row: runs of different "
                                                           "settings are never averaged." if len(settings) > 1
                                                           else ""), "",
             "Grading: " + "; ".join(GRADING_NOTES.get(g, g) for g in summary.get("grading") or ["lenient"]) + ".",
             "",
             "Accuracy (%) by family and difficulty, the layout of the paper's figures, one row per setting and "
             "system; systems ranked by the sum of their easy and hard accuracy. A box's accuracy is the mean "
             "score of its test samples (best shot; game boxes: score / the published normaliser, the exact optimum "
             "where a box declares none).", ""]
    lines += box_headline(summary)
    lines += paper_reference(summary)
    lines += ["", "Per family (all boxes):", ""]
    lines += table(["Turn@shot", "System", *fams], [[setting, system, *[num(s["families"].get(f)) for f in fams]]
                                                   for setting, system, s in _ranked(by)])
    lines += ["", "## Boxes", "", "Game boxes: clipped / unclipped = score / the published normaliser clipped to "
              "100, and max(score, 0) / normaliser as the released code reports it.", ""]
    lines += table(("Box", "Family", "Difficulty", "System", "Turn@shot", "Accuracy", "Clipped / unclipped",
                    "Turns used"),
                   [(r["world"], r.get("family") or "—", r.get("difficulty") or "—", r["system"], r["condition"],
                     num(r["best"]), _figures(r), num(r["turns_used"])) for r in summary["results"]])
    return lines


# ----------------------------------------------------------------------------
# Pool play


def pool_summary(records: Sequence[dict], header: dict) -> dict:
    world = header.get("world", {})
    return {"results": metrics.pool_results(records, world.get("baselines", ())),
            **{k: world.get(k) for k in ("pool", "seats", "matches", "horizons", "seed", "lineup", "delta",
                                         "max_rounds")}}


def _interval(v, ci, pct: bool = False) -> str:
    if v is None:
        return "—"
    f = (lambda x: f"{num(100 * x)}%") if pct else (lambda x: num(x, 3))
    return f(v) + (f" [{f(ci[0])}, {f(ci[1])}]" if ci else "")


def pool_headline(summary: dict) -> list[str]:
    base = [r for r in summary["results"] if r["baseline"]]
    rows = []
    for r in summary["results"]:
        delta = ["—" if r["system"] == b["system"] else f"{(r['score_per_round'] or 0) - (b['score_per_round'] or 0):+.3f}"
                 for b in base]
        rows.append([f"{r['system']} (baseline)" if r["baseline"] else r["system"],
                     _interval(r["score_per_round"], r["score_per_round_ci"]),
                     _interval(r["cooperation_rate"], r["cooperation_rate_ci"], True),
                     _interval(r["betrayal_rate"], r["betrayal_rate_ci"], True), *delta, r["n"], r["rounds"]])
    return table(["System", "Score / round [95% CI]", "Cooperation rate", "Betrayal rate",
                  *[f"vs {b['system']}" for b in base], "Matches", "Rounds"], rows)


def pool_markdown(summary: dict, images: Sequence[str]) -> list[str]:
    horizons = summary.get("horizons") or []
    if summary.get("lineup") == "round_robin":
        lines = [f"Round robin of every system against every other: {summary['matches']} repeats per pair, each "
                 f"from seats {', '.join(summary['seats'] or ())}; after each round the game continues with "
                 f"probability {summary['delta']:g}, at most {summary['max_rounds']} rounds (horizons from seed "
                 f"{summary['seed']}). Score = payoff per round over all rounds played.", ""]
    else:
        lines = [f"Pool: {', '.join(summary['pool'] or ())}; seats: {', '.join(summary['seats'] or ())}; "
                 f"{summary['matches']} matches per opponent and seat; horizons drawn from seed "
                 f"{summary['seed']} (mean {sum(horizons) / max(1, len(horizons)):.1f} rounds).", ""]
    base = [r for r in summary["results"] if r["baseline"]]
    if base:
        lines += ["Baselines: " + ", ".join(f"{r['system']} {num(r['score_per_round'], 3)}" for r in base)
                  + " per round.", ""]
    lines += pool_headline(summary)
    opps = summary["pool"] or []
    lines += ["", "Score per round against each opponent:", ""]
    lines += table(["System", *opps], [[r["system"], *[num(r["per_opponent"].get(o), 3) for o in opps]]
                                       for r in summary["results"]])
    return lines


# ----------------------------------------------------------------------------
# Judge worlds (situation puzzles, interactive math)


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


# ----------------------------------------------------------------------------
# Writing


@attrs.frozen
class Layout:
    """How one protocol's summary is computed and laid out."""

    title: str
    noun: str  # what its sessions are called
    summary: Callable[[Sequence[dict], dict], dict]
    headline: Callable[[dict], list[str]]  # the main table (also printed after a run)
    body: Callable[[dict, Sequence[str]], list[str]]
    # (summary, out dir) -> the image files written, for a protocol with figures
    figures: Callable[[dict, Path], list[str]] | None = None


# The layouts of the four protocols whose tables live here; each protocol names its own (`RunProtocol.layout`;
# Hold'em's is in protocols/holdem_report.py), and outputs.py looks a run's up through the protocol registry.
def milestone_figures(summary: dict, out: Path) -> list[str]:
    """The curves of each group's best trajectory (greyed when the run is not valid)."""
    return plot_curves(summary["results"], out, summary["validity"]["valid"])


MILESTONE_LAYOUT = Layout("worldspec run report", "trajectories", milestone_summary, milestone_headline,
                          milestone_markdown, milestone_figures)
BOX_LAYOUT = Layout("worldspec run report: black-box interaction (turn@shot)", "box sessions", box_summary,
                    box_headline, box_markdown)
POOL_LAYOUT = Layout("worldspec run report: pool play", "matches", pool_summary, pool_headline, pool_markdown)
JUDGE_LAYOUT = Layout("worldspec run report: judge worlds (situation puzzles, interactive math)", "sessions",
                      judge_summary, judge_headline, judge_markdown)


def markdown(layout: Layout, summary: dict, images: Sequence[str] = ()) -> str:
    """report.md of a summary, laid out by its protocol's layout."""
    lines = [f"# {layout.title}", ""] + status_line(summary["validity"], layout.noun) + layout.body(summary, images)
    return "\n".join(lines).rstrip() + "\n"


def written(summary: dict) -> str:
    """The files a report wrote, as the commands list them."""
    return ", ".join(["report.md", "summary.json", "trajectories.jsonl", *summary.get("figures", ())])
