"""The numbers, report section and four-panel figure of a Hold'em run (the layout of the paper's section 7.3).

Per system, over its finished hands: average winnings per hand in big blinds with a
seeded bootstrap 95% interval (resampling whole duplicate deals: a deal's hands from
both seats go together, as the cards' luck cancels within them), VPIP (the share of
hands it put chips in before the flop of its own accord: a call or raise, not a
blind), fold rate (the share of hands it folded), response latency (seconds per
model call; bots answer locally and have none), invalid replies and automatic folds.
The figure's panels are the paper's: "(a) average winnings per hand, (b) VPIP,
(c) response latency, (d) fold rate".
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Sequence

from .. import metrics
from ..plotting import pyplot
from ..report import Layout, num, slug, table


def _mean(xs):
    return sum(xs) / len(xs) if xs else None


def system_row(system: str, hands: Sequence[dict], world: str, baselines) -> dict:
    """One system's numbers over its finished hands."""
    deals: dict[tuple, list[float]] = defaultdict(list)
    for h in hands:
        deals[(h["opponent"], h["deal"])].append(h["bb"])
    units = [{"rounds": len(v), "score": sum(v)} for v in deals.values()]  # pool_rates: score per round = bb/hand
    lat = [x for h in hands for x in h.get("latencies", ())]
    per_opp: dict[str, list[float]] = defaultdict(list)
    for h in hands:
        per_opp[h["opponent"]].append(h["bb"])
    return {"system": system, "baseline": system in baselines, "hands": len(hands),
            "bb_per_hand": _mean([h["bb"] for h in hands]),
            "bb_per_hand_ci": metrics.bootstrap(units, "score_per_round", f"{world}:{system}:bb"),
            "vpip": _mean([1.0 if h["vpip"] else 0.0 for h in hands]),
            "fold_rate": _mean([1.0 if h["folded"] else 0.0 for h in hands]),
            "latency": _mean(lat), "calls": len(lat),
            "invalid_replies": sum(h.get("invalid_replies", 0) for h in hands),
            "auto_folds": sum(h.get("auto_folds", 0) for h in hands),
            "per_opponent": {o: _mean(v) for o, v in per_opp.items()}}


def spread(xs) -> dict:
    """Mean and standard deviation across tables, as analyze_stats.py calculate_mean_std (np.std: the
    population deviation)."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"mean": None, "sd": None, "values": []}
    return {"mean": statistics.fmean(xs), "sd": statistics.pstdev(xs), "values": xs}


def ring_row(system: str, tables: Sequence[dict], baselines) -> dict:
    """One system's numbers at a ring game: per table (analyze_stats.py collect_all_stats: winnings / hands,
    folds / hands, VPIP hands / hands, mean think time), then mean +- sd across tables."""
    tables = [t for t in tables if t["hands"]]
    lat = [x for t in tables for x in t.get("latencies", ())]
    return {"system": system, "baseline": system.split("#")[0] in baselines, "tables": len(tables),
            "hands": sum(t["hands"] for t in tables),
            "winnings": spread([t["chips"] / t["hands"] for t in tables]),
            "vpip": spread([t["vpip_hands"] / t["hands"] for t in tables]),
            "fold_rate": spread([t["folds"] / t["hands"] for t in tables]),
            "latency": spread([_mean(t.get("latencies") or []) for t in tables]) if lat else spread([]),
            "calls": len(lat), "invalid_replies": sum(t.get("invalid_replies", 0) for t in tables),
            "auto_folds": sum(t.get("auto_folds", 0) for t in tables)}


def ring_summary(records: Sequence[dict], identity: dict) -> dict:
    by_system: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if r.get("status") == "complete" and "table" in r:
            by_system[r["system"]].append(r)
    rows = [ring_row(s, ts, identity.get("baselines", ())) for s, ts in by_system.items()]
    rows.sort(key=lambda r: -(r["winnings"]["mean"] or 0))
    return {"lineup": "ring", "results": rows,
            **{k: identity.get(k) for k in ("pool", "players", "tables", "hands", "blinds", "stack", "seed")}}


def holdem_summary(records: Sequence[dict], header: dict) -> dict:
    identity = header.get("world", {})  # the log header's world identity (Holdem.identity_for)
    if identity.get("lineup") == "ring":
        return ring_summary(records, identity)
    baselines = identity.get("baselines", ())
    by_system: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if r.get("status") == "complete" and "bb" in r:
            by_system[r["system"]].append(r)
    rows = [system_row(s, hs, hs[0]["world"], baselines) for s, hs in by_system.items()]
    rows.sort(key=lambda r: -(r["bb_per_hand"] or 0))
    return {"results": rows, **{k: identity.get(k) for k in ("pool", "seats", "hands", "blinds", "stack", "seed")}}


def _pct(x) -> str:
    return "—" if x is None else f"{num(100 * x)}%"


def _pm(d: dict, scale: float = 1.0, digits: int = 1, unit: str = "") -> str:
    """mean ± sd, as the paper prints them ("31.8 ± 42.4", "23.7% ± 1.1%")."""
    if d["mean"] is None:
        return "—"
    return f"{scale * d['mean']:.{digits}f}{unit} ± {scale * d['sd']:.{digits}f}{unit}"


def ring_headline(summary: dict) -> list[str]:
    rows = [[f"{r['system']} (baseline)" if r["baseline"] else r["system"], _pm(r["winnings"]),
             _pm(r["vpip"], 100, 1, "%"), _pm(r["fold_rate"], 100, 1, "%"), _pm(r["latency"], 1, 2), r["tables"],
             r["hands"], r["invalid_replies"], r["auto_folds"]] for r in summary["results"]]
    return table(["System", "Winnings (chips/hand)", "VPIP", "Fold rate", "Latency (s)", "Tables", "Hands",
                  "Invalid replies", "Auto-folds"], rows)


def holdem_headline(summary: dict) -> list[str]:
    if summary.get("lineup") == "ring":
        return ring_headline(summary)
    rows = []
    for r in summary["results"]:
        ci = r["bb_per_hand_ci"]
        win = "—" if r["bb_per_hand"] is None else f"{r['bb_per_hand']:+.2f}" + (
            f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "")
        rows.append([f"{r['system']} (baseline)" if r["baseline"] else r["system"], win, _pct(r["vpip"]),
                     _pct(r["fold_rate"]), "—" if r["latency"] is None else f"{r['latency']:.2f}", r["hands"],
                     r["invalid_replies"], r["auto_folds"]])
    return table(["System", "Winnings (bb/hand) [95% CI]", "VPIP", "Fold rate", "Latency (s)", "Hands",
                  "Invalid replies", "Auto-folds"], rows)


def holdem_markdown(summary: dict, images: Sequence[str]) -> list[str]:
    blinds = summary.get("blinds") or ["?", "?"]
    if summary.get("lineup") == "ring":
        lines = [f"No-limit Hold'em on pokerkit: {summary.get('tables')} table(s) of {summary.get('players')} seats, "
                 f"{summary.get('hands')} hands each; blinds {blinds[0]}/{blinds[1]}, stacks {summary.get('stack')} "
                 f"carried from hand to hand; deals from seed {summary.get('seed')}.", "",
                 "Each number is the mean ± standard deviation across tables (the paper's section 3.2.3): winnings "
                 "are chips won per hand played at a table, VPIP the share of hands with a voluntary call or raise "
                 "before the flop by a player still in at the flop, fold rate folds per hand, latency the mean "
                 "seconds per model call (bots play locally).", ""]
        lines += ring_headline(summary)
        return lines + [f"\n![Hold'em: winnings, VPIP, latency, fold rate]({img})" for img in images]
    lines = [f"Heads-up no-limit Hold'em on pokerkit: blinds {blinds[0]}/{blinds[1]}, stacks {summary.get('stack')}; "
             f"opponents {', '.join(summary.get('pool') or ())}; {summary.get('hands')} deals per opponent from "
             f"seed {summary.get('seed')}, each played from {', '.join(summary.get('seats') or ())} (duplicate "
             "deals).", "",
             "Winnings are big blinds per hand with a seeded bootstrap 95% interval over deals; VPIP is the share "
             "of hands with a voluntary call or raise before the flop; fold rate the share of hands folded; "
             "latency the mean seconds per model call (bots play locally).", ""]
    lines += holdem_headline(summary)
    opps = summary.get("pool") or []
    lines += ["", "Winnings (bb/hand) against each opponent:", ""]
    lines += table(["System", *opps], [[r["system"], *[num(r["per_opponent"].get(o), 2) for o in opps]]
                                       for r in summary["results"]])
    lines += [f"\n![Hold'em: winnings, VPIP, latency, fold rate]({img})" for img in images]
    return lines


def figure_name(summary: dict) -> str:
    return f"holdem-{slug('-'.join(summary.get('pool') or ['run']))}.png"


def plot_holdem(summary: dict, out: Path) -> list[str]:
    """The paper's four panels: (a) winnings per hand with its interval, (b) VPIP, (c) latency, (d) fold rate."""
    rows = summary["results"]
    if not rows:
        return []
    names = [r["system"] for r in rows]
    xs = range(len(rows))
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.5), dpi=100)
    if summary.get("lineup") == "ring":  # bars: the mean across tables; error bars: the standard deviation
        def bars(key, scale=1.0):
            return ([scale * (r[key]["mean"] or 0) for r in rows], [scale * (r[key]["sd"] or 0) for r in rows])
        panels = [("(a) average winnings per hand (chips)", *bars("winnings")), ("(b) VPIP (%)", *bars("vpip", 100)),
                  ("(c) response latency (s)", *bars("latency")), ("(d) fold rate (%)", *bars("fold_rate", 100))]
    else:
        win = [r["bb_per_hand"] or 0.0 for r in rows]
        err = [[max(0.0, w - (r["bb_per_hand_ci"] or (w, w))[0]) for w, r in zip(win, rows)],
               [max(0.0, (r["bb_per_hand_ci"] or (w, w))[1] - w) for w, r in zip(win, rows)]]
        panels = [("(a) average winnings per hand (bb)", win, err),
                  ("(b) VPIP (%)", [100 * (r["vpip"] or 0) for r in rows], None),
                  ("(c) response latency (s)", [r["latency"] or 0.0 for r in rows], None),
                  ("(d) fold rate (%)", [100 * (r["fold_rate"] or 0) for r in rows], None)]
    for ax, (title, ys, yerr) in zip(axes.flat, panels):
        ax.bar(xs, ys, yerr=yerr, capsize=4, color="#4c72b0")
        ax.set_xticks(list(xs), names, rotation=20, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    name = figure_name(summary)
    fig.savefig(out / name)
    plt.close(fig)
    return [name]


LAYOUT = Layout("worldspec run report: no-limit Hold'em", "hands", holdem_summary, holdem_headline,
                holdem_markdown, figures=plot_holdem)
