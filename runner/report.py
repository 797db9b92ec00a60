"""Run outputs, derived from the run log (the source of truth), for every protocol.

What a run writes beside its log, laid out per protocol (outputs.py writes them; this module holds what
every protocol's layout shares, and each protocol's own layout is in runner/protocols/NAME_report.py):

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

import re
from pathlib import Path
from typing import Callable, Sequence

import attrs

from .log import LoggedRun
from .tally import counts_line


OUTPUTS = ("trajectories.jsonl", "summary.json", "report.md", "curves-*.png")  # what a run writes beside its log


class ReportError(Exception):
    """Runs that cannot be reported together."""


def slug(s: str) -> str:
    """A name safe in a file name: `curves-<slug>.png`, `runs/<slug>-TIME`."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-").lower() or "run"


# what a built-in agent's system id means, for people reading a table or a figure; the id itself stays
# the agent's name in --agent, the log, summary.json and trajectories.jsonl
# (one label for every kind: the explorer repairs naive programs in a program world but tests rules with
# one-rule proofs in a proof world and fits laws in a black box, docs/explorer.md; the table says it has no model)
LABELS = {"explorer": "explorer (built-in, no model)"}


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


def information_table(rows: Sequence[dict], intro: str) -> list[str]:
    """The information table (metrics.information_rows: one row per trajectory measured), after `intro`; nothing
    without rows (docs/explorer.md)."""
    if not rows:
        return []
    return ["", intro, ""] + \
        table(("World", "System", "Condition", "r", "Bits", "Bits/call", "Efficiency", "Removed nothing"),
              [(r["world"], label(r["system"]), r["condition"], r["trajectory"], num(r["bits"], 1),
                num(r["bits_per_call"], 2), num(r["efficiency"], 2),
                ", ".join(map(str, r["removed_nothing"])) or "none") for r in rows])


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


def markdown(layout: Layout, summary: dict, images: Sequence[str] = ()) -> str:
    """report.md of a summary, laid out by its protocol's layout."""
    lines = [f"# {layout.title}", ""] + status_line(summary["validity"], layout.noun) + layout.body(summary, images)
    return "\n".join(lines).rstrip() + "\n"


def written(summary: dict) -> str:
    """The files a report wrote, as the commands list them."""
    return ", ".join(["report.md", "summary.json", "trajectories.jsonl", *summary.get("figures", ())])
