"""The turn@shot protocol's report layout: accuracy by family and difficulty as the paper's figures lay it
out, beside the paper's o3 figures, and per box (report.py holds what every layout shares;
protocols/turnshot.py names this one)."""
from __future__ import annotations

from typing import Sequence

from .. import metrics
from ..report import Layout, information_table, num, table


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
            "by_setting": by_setting, "results": metrics.box_results(records),
            "information": metrics.information_rows(records)}


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


INFORMATION_NOTE = ("Information per query, every box whose shape the box explorer holds a finite hypothesis space "
                    "for (circuit boxes, A/M/X mark puzzles; docs/explorer.md): bits each exploration turn removed "
                    "from that space given the outputs before it; efficiency = bits / bits the best of the "
                    "explorer's own candidate queries was expected to remove; the turns (by number) that removed "
                    "nothing. Other boxes have no row.")


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
    lines += information_table(summary.get("information") or (), INFORMATION_NOTE)
    return lines


BOX_LAYOUT = Layout("worldspec run report: black-box interaction (turn@shot)", "box sessions", box_summary,
                    box_headline, box_markdown)
