"""The pool protocol's report layout: each system's payoffs, cooperation and betrayal against the pool
(report.py holds what every layout shares; protocols/pool.py names this one)."""
from __future__ import annotations

from typing import Sequence

from .. import metrics
from ..report import Layout, num, table


def pool_summary(records: Sequence[dict], header: dict) -> dict:
    identity = header.get("world", {})  # the log header's world identity (pool, seats, ...)
    return {"results": metrics.pool_results(records, identity.get("baselines", ())),
            **{k: identity.get(k) for k in ("pool", "seats", "matches", "horizons", "seed", "lineup", "delta",
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


POOL_LAYOUT = Layout("worldspec run report: pool play", "matches", pool_summary, pool_headline, pool_markdown)
