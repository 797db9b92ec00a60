"""A run's outputs, written from its log through its protocol's layout (the protocol registry names it).

`write_run_outputs(DIR)` reads DIR/log.jsonl (log.load_run) and writes:

* trajectories.jsonl  one finished session per line (the last record of each
                      conversation: a resumed run that repaired a lost answer
                      supersedes the earlier record);
* summary.json        {"protocol", "validity", "results", ...}: per (world, system,
                      condition) best/mean/worst/n/best_trajectory and the best
                      trajectory's curve, plus what the protocol's tables need;
* report.md           the paper-style tables of the run's protocol;
* figures             what the layout draws (milestone curves, Hold'em charts).

`write_report([DIR...], OUT)` merges runs of one protocol the same way. The layout is the run's protocol's
(`RunProtocol.layout`, looked up by the name the log records), so a protocol registered at run time
(`protocols.register_protocol`) is reported as the built-in ones are, with no table here to extend.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from .log import LoggedRun, LogError, load_run, not_a_run
from .protocols import PROTOCOLS
from .report import Layout, ReportError, markdown, merged_validity, validity


def layout_for(protocol: str) -> Layout:
    """The report layout of a protocol, by the name a run's log records; ReportError for an unknown one."""
    p = PROTOCOLS.get(protocol)
    if p is None:
        raise ReportError(f"no report for runs of protocol {protocol!r} (known: {', '.join(sorted(PROTOCOLS))})")
    return p.layout


def _record_key(r: dict) -> tuple:
    return (r["world"], r["system"], r["condition"], r["trajectory"], r.get("opponent", ""), r.get("seat", ""))


def summarize(runs: Sequence[LoggedRun], dirs: Sequence) -> tuple[Layout, dict, list[dict]]:
    """(layout, summary, records) of one or more runs of one protocol."""
    protocols = sorted({r.protocol for r in runs})
    if len(protocols) != 1:
        raise ReportError(f"cannot merge runs of different protocols ({', '.join(protocols)})")
    layout = layout_for(protocols[0])
    records = sorted((rec for r in runs for rec in r.records.values()), key=_record_key)
    stamp = merged_validity([validity(r) for r in runs], dirs)
    summary = {"protocol": protocols[0], "validity": stamp, **layout.summary(records, runs[0].header or {})}
    return layout, summary, records


def write_report(dirs: Sequence[str | Path], out: str | Path | None, *, plots: bool = True) -> tuple[dict, str]:
    """Merge runs; returns (summary, markdown). Writes the output files when `out` is given."""
    try:
        runs = [load_run(d) for d in dirs]
    except LogError as e:
        raise ReportError(str(e)) from None
    for run in runs:
        if not_a_run(run):
            raise ReportError(not_a_run(run))
    try:
        layout, summary, records = summarize(runs, dirs)
    except (KeyError, TypeError, AttributeError) as e:  # a record worldspec did not write (log.LogError's kin)
        raise ReportError(f"a trajectory record in {', '.join(map(str, dirs))} is not in the shape worldspec "
                          f"writes ({type(e).__name__}: {e}); the log is damaged or from another program") from None
    if out is None:
        return summary, markdown(layout, summary)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # a lone surrogate a model wrote (UTF-8 cannot encode it) is written as its JSON escape \\udXXX
    with open(out / "trajectories.jsonl", "w", encoding="utf-8", errors="backslashreplace") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    images = layout.figures(summary, out) if plots and layout.figures else []
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n",
                                      encoding="utf-8", errors="backslashreplace")
    # the image files written beside it, for the commands to list (not in summary.json, which holds the
    # results whatever was plotted: `report --no-plots` of a run writes its summary.json again)
    summary["figures"] = images
    md = markdown(layout, summary, images)
    (out / "report.md").write_text(md, encoding="utf-8", errors="backslashreplace")
    return summary, md


def write_run_outputs(directory: str | Path, *, plots: bool = True) -> dict:
    """The outputs of one run, written into its own directory."""
    return write_report([directory], directory, plots=plots)[0]


def headline(summary: dict) -> list[str]:
    """The main table of a summary, as printed after a run."""
    return layout_for(summary["protocol"]).headline(summary)


def noun(protocol: str) -> str:
    """What a protocol's sessions are called (the progress display counts them)."""
    p = PROTOCOLS.get(protocol)
    return p.layout.noun if p is not None else "sessions"
