"""Run outputs, derived from the run log (the source of truth).

`write_run_outputs(DIR)` reads DIR/log.jsonl and writes:

* trajectories.jsonl  one finished trajectory per line (the last record of
                      each conversation: a resumed run that repaired a lost
                      answer supersedes the earlier record);
* summary.json        a validity stamp and, per (world, system, condition),
                      best/mean/worst/n/best_trajectory and the best
                      trajectory's per-milestone curve;
* report.md           the paper-style tables;
* curves-WORLD.png    milestone curves of each group's best trajectory.

`write_report([DIR...], OUT)` merges several runs the same way.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

from . import metrics
from .log import read_events

CURVE_KEYS = ("t", "accuracy", "passes", "sigma", "calls", "probe_units", "tokens",
              "rules_correct", "milestone_tokens")


def load_run(directory: str | Path) -> dict:
    d = Path(directory)
    log = d / "log.jsonl"
    if not log.exists():
        raise FileNotFoundError(f"no run log at {log}")
    header = None
    trajs: dict[str, dict] = {}
    retries = lost = 0
    sessions: dict[int, str] = {}
    errors: list[str] = []
    for ev in read_events(log):
        typ = ev.get("type")
        if typ == "header":
            header = ev
        elif typ == "trajectory":
            trajs[ev["conv"]] = ev["record"]
        elif typ == "retry":
            retries += 1
        elif typ == "lost":
            lost += 1
        elif typ == "session":
            sessions[ev.get("session", 0)] = ev.get("status")
            if ev.get("error"):
                errors.append(ev["error"])
    protocol = (header or {}).get("config", {}).get("protocol", "explorationbench")
    if protocol != "explorationbench":
        raise ValueError(f"{d} holds a {protocol} run, not an ExplorationBench (milestone) run; "
                         "its report is written by its own protocol")
    return {"dir": str(d), "header": header or {}, "trajectories": list(trajs.values()),
            "retries": retries, "lost_events": lost, "sessions": sessions, "errors": errors}


def validity(run: dict) -> dict:
    cfg = run["header"].get("config", {})
    expected = set()
    for system in cfg.get("systems", []):
        for cond in cfg.get("conditions", []):
            n = cfg.get("trajectories", 1) if cond == "autonomous" else cfg.get("control_trajectories", 1)
            for r in range(1, n + 1):
                expected.add((system, cond, r))
    finished = {(t["system"], t["condition"], t["trajectory"]) for t in run["trajectories"]
                if t.get("status") == "complete"}
    invalid = [f"{t['system']}|{t['condition']}|{t['trajectory']}" for t in run["trajectories"]
               if not t.get("valid", False)]
    lost_answers = sum(m.get("lost", 0) for t in run["trajectories"] for m in t["milestones"])
    last_status = run["sessions"][max(run["sessions"])] if run["sessions"] else None
    complete = expected <= finished and last_status == "success"
    clean = not invalid and lost_answers == 0
    return {
        "valid": bool(complete and clean),
        "complete": bool(complete),
        "clean": bool(clean),
        "expected_trajectories": len(expected),
        "finished_trajectories": len(finished & expected) if expected else len(finished),
        "missing": sorted("|".join(map(str, k)) for k in expected - finished),
        "invalid_trajectories": invalid,
        "lost_answers": lost_answers,
        "retries": run["retries"],
        "sessions": len(run["sessions"]),
        "last_session": last_status,
        "errors": run["errors"],
    }


def summarize(trajectories: Sequence[dict]) -> list[dict]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for t in trajectories:
        if t.get("status") == "complete":
            groups[(t["world"], t["system"], t["condition"])].append(t)
    out = []
    for (world, system, condition), trajs in sorted(groups.items()):
        b = metrics.best_of(trajs)
        best = b.pop("best_record")
        ms = best["milestones"]
        out.append({
            "world": world, "system": system, "condition": condition,
            **b,
            "curve": [{k: m.get(k) for k in CURVE_KEYS} for m in ms],
            "m0": ms[0]["accuracy"] if ms and ms[0]["t"] == 0 else None,
            "gain": best.get("gain"),
            "largest_step_share": best.get("largest_step_share"),
            "regressions": sum(1 for t in trajs if t.get("regression")),
            "rules_correct": ms[-1].get("rules_correct") if ms else None,
            "rules_total": ms[-1].get("rules_total") if ms else None,
            "budget": {"C": ms[-1].get("calls"), "P": ms[-1].get("probe_units"),
                       "T": ms[-1].get("tokens")} if ms else None,
            "covered": ms[-1].get("covered") if ms else None,
            "uncovered": ms[-1].get("uncovered") if ms else None,
            "valid": all(t.get("valid") for t in trajs),
        })
    return out


def _fmt(x, digits: int = 1) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def markdown(results: Sequence[dict], stamp: dict | None = None, images: Iterable[str] = ()) -> str:
    lines = ["# worldspec run report", ""]
    if stamp is not None:
        ok = "valid" if stamp["valid"] else "INVALID"
        lines.append(f"Run status: **{ok}** — {stamp['finished_trajectories']}/"
                     f"{stamp['expected_trajectories']} trajectories finished, "
                     f"{stamp['lost_answers']} answers lost to infrastructure, "
                     f"{stamp['retries']} provider retries, {stamp['sessions']} session(s).")
        if stamp.get("missing"):
            lines.append(f"Missing: {', '.join(stamp['missing'])}.")
        lines.append("")
    by_world: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_world[r["world"]].append(r)
    for world, rs in by_world.items():
        idx = {(r["system"], r["condition"]): r for r in rs}
        systems = list(dict.fromkeys(r["system"] for r in rs))
        last_t = max((r["curve"][-1]["t"] for r in rs if r["curve"]), default=4)
        lines += [f"## {world}", "",
                  f"Held-out accuracy (%), autonomous exploration: M0 and M{last_t} of the Best@n "
                  "trajectory (lowest index breaks ties), Mean@n and worst endpoint over n "
                  "trajectories; G = retained gain; open-book columns are the endpoints of those "
                  f"conditions; rules = rules stated correctly at M{last_t}; C/P/T = tool calls, "
                  "probe units, exploration tokens of the best trajectory.", "",
                  f"| System | M0 | M{last_t} | Mean@n | Worst | n | G | O@M0 | A4+O | Rules | C | P | T |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for s in systems:
            a = idx.get((s, "autonomous"))
            o0 = idx.get((s, "open-book-m0"))
            a4 = idx.get((s, "a4-open-book"))
            if a is None:
                row = [s] + ["—"] * 6
            else:
                row = [s, _fmt(a["m0"]), _fmt(a["best"]), _fmt(a["mean"]), _fmt(a["worst"]),
                       str(a["n"]), _fmt(a["gain"])]
            row += [_fmt(o0["best"]) if o0 else "—", _fmt(a4["best"]) if a4 else "—"]
            if a is None:
                row += ["—"] * 4
            else:
                bud = a["budget"] or {}
                rules = "—" if a["rules_correct"] is None else f"{a['rules_correct']}/{a['rules_total']}"
                row += [rules, _fmt(bud.get("C")),
                        _fmt(bud.get("P")), _fmt(bud.get("T"))]
            lines.append("| " + " | ".join(row) + " |")
        conds = [c for c in ("autonomous", "hindsight", "fixed", "without-tool", "direct",
                             "open-book-m0", "a4-open-book") if any(k[1] == c for k in idx)]
        if len(conds) > 1:
            lines += ["", "Endpoints by condition (Best@n for autonomous; the best of the "
                      "control trajectories otherwise), with the gain from each condition's own M0.",
                      "", "| System | " + " | ".join(conds) + " |",
                      "|---|" + "---|" * len(conds)]
            for s in systems:
                cells = []
                for c in conds:
                    r = idx.get((s, c))
                    if r is None:
                        cells.append("—")
                    elif r["gain"] is not None and len(r["curve"]) > 1:
                        cells.append(f"{_fmt(r['best'])} ({r['gain']:+.1f})")
                    else:
                        cells.append(_fmt(r["best"]))
                lines.append(f"| {s} | " + " | ".join(cells) + " |")
        lines += ["", "Milestone curves of the best trajectories (accuracy % at M0..MN; σ = "
                  "population standard deviation of the per-pass scores at the last milestone):", ""]
        for r in rs:
            curve = " → ".join(_fmt(m["accuracy"]) for m in r["curve"])
            sig = _fmt(r["curve"][-1]["sigma"]) if r["curve"] else "—"
            reg = f", {r['regressions']} regression(s)" if r["regressions"] else ""
            lines.append(f"- {r['system']} / {r['condition']} (r*={r['best_trajectory']} of "
                         f"{r['n']}): {curve} (σ {sig}{reg})")
        cov_lines = []
        for r in rs:
            cov, unc = r.get("covered") or {}, r.get("uncovered") or {}
            if r["condition"] == "autonomous" and (cov.get("n") or unc.get("n")):
                cov_lines.append(
                    f"- {r['system']}: {cov.get('n', 0)} tasks covered (accuracy "
                    f"{_fmt(cov.get('accuracy'))}), {unc.get('n', 0)} not covered (accuracy "
                    f"{_fmt(unc.get('accuracy'))})")
        if cov_lines:
            lines += ["", f"Tasks split by the M{last_t} rule report of the best trajectory: a task "
                      "is covered when every rule it requires is stated correctly.", ""] + cov_lines
        for img in images:
            if _slug(world) in img:
                lines += ["", f"![milestone curves for {world}]({img})"]
        lines.append("")
    if not results:
        lines.append("No finished trajectories.")
    return "\n".join(lines).rstrip() + "\n"


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-").lower() or "world"


def plot_curves(results: Sequence[dict], out: Path) -> list[str]:
    """One PNG per world: the best trajectory's curve of each (system, condition)."""
    import matplotlib  # noqa: PLC0415 — only reports pay for matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    names = []
    by_world: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_world[r["world"]].append(r)
    for world, rs in by_world.items():
        fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
        ticks: set[int] = set()
        for r in rs:
            xs = [m["t"] for m in r["curve"]]
            ys = [m["accuracy"] for m in r["curve"]]
            ticks.update(xs)
            style = "-o" if len(xs) > 1 else "s"
            ax.plot(xs, ys, style, label=f"{r['system']} / {r['condition']}", markersize=4)
        ax.set_xticks(sorted(ticks), [f"M{t}" for t in sorted(ticks)])  # milestones are stages, not a scale
        ax.set_xlabel("milestone")
        ax.set_ylabel("held-out accuracy (%)")
        ax.set_ylim(-2, 102)
        ax.set_title(f"{world}: best trajectories")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        name = f"curves-{_slug(world)}.png"
        fig.tight_layout()
        fig.savefig(out / name)
        plt.close(fig)
        names.append(name)
    return names


def _write(out: Path, trajectories: Sequence[dict], stamp: dict, *, plots: bool = True) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    results = summarize(trajectories)
    key = lambda t: (t["world"], t["system"], t["condition"], t["trajectory"])  # noqa: E731
    with open(out / "trajectories.jsonl", "w", encoding="utf-8") as f:
        for t in sorted(trajectories, key=key):
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    summary = {"validity": stamp, "results": results}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    images = plot_curves(results, out) if plots and results else []
    (out / "report.md").write_text(markdown(results, stamp, images), encoding="utf-8")
    return summary


def write_run_outputs(directory: str | Path, *, plots: bool = True) -> dict:
    run = load_run(directory)
    return _write(Path(directory), run["trajectories"], validity(run), plots=plots)


def write_report(dirs: Sequence[str | Path], out: str | Path | None, *, plots: bool = True) -> tuple[dict, str]:
    """Merge runs; returns (summary, markdown). Writes files when `out` is given."""
    runs = [load_run(d) for d in dirs]
    trajs = [t for r in runs for t in r["trajectories"]]
    stamps = [validity(r) for r in runs]
    stamp = {
        "valid": all(s["valid"] for s in stamps),
        "complete": all(s["complete"] for s in stamps),
        "clean": all(s["clean"] for s in stamps),
        "expected_trajectories": sum(s["expected_trajectories"] for s in stamps),
        "finished_trajectories": sum(s["finished_trajectories"] for s in stamps),
        "missing": [m for s in stamps for m in s["missing"]],
        "invalid_trajectories": [m for s in stamps for m in s["invalid_trajectories"]],
        "lost_answers": sum(s["lost_answers"] for s in stamps),
        "retries": sum(s["retries"] for s in stamps),
        "sessions": sum(s["sessions"] for s in stamps),
        "runs": [str(d) for d in dirs],
    }
    if out is not None:
        summary = _write(Path(out), trajs, stamp, plots=plots)
        return summary, (Path(out) / "report.md").read_text()
    results = summarize(trajs)
    return {"validity": stamp, "results": results}, markdown(results, stamp)
