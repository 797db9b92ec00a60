"""The milestone protocol's report layout: the results table, information per probe, the curves of each
group's best trajectory (report.py holds what every layout shares; protocols/milestone.py names this one)."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Sequence

from .. import metrics
from ..plotting import pyplot
from ..report import Layout, information_table, label, num, slug, table


def milestone_summary(records: Sequence[dict], header: dict) -> dict:
    return {"results": metrics.milestone_results(records), "information": metrics.information_rows(records)}


def information_markdown(rows: Sequence[dict]) -> list[str]:
    """The information-per-probe table: one row per trajectory (docs/explorer.md)."""
    return information_table(rows, "Information per probe, every trajectory: bits each probe removed from the "
                             "built-in explorer's hypothesis space given the feedback before it; efficiency = bits / "
                             "bits the best probe of the same cost was expected to remove; the probes (by number) "
                             "that removed nothing.")


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
            lines += ["", "Rules stated correctly in the rule report at the last milestone of the best "
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
    # (beside them, long labels such as "explorer (built-in, no model) / autonomous" took half of it)
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



def milestone_figures(summary: dict, out: Path) -> list[str]:
    """The curves of each group's best trajectory (greyed when the run is not valid)."""
    return plot_curves(summary["results"], out, summary["validity"]["valid"])


MILESTONE_LAYOUT = Layout("worldspec run report", "trajectories", milestone_summary, milestone_headline,
                          milestone_markdown, milestone_figures)
