"""A folder of worlds as one benchmark: certify them all, count them, compare boxes across a family.

`certify_folder(path)` certifies every .world file under `path` and adds the
checks that need more than one box: within a family, no easy box's hidden
function (or, for game boxes, the best reply to an easy box's opponent)
answers every test of a hard box, so hard boxes are not solvable by the easy
boxes' simplest hypotheses. Counts per family and difficulty are in the report
(`worldspec check FOLDER --json` prints the same numbers).
"""
from __future__ import annotations

import os

from worldspec.diagnostics import SpecError, SpecErrors


def world_files(path: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(".world"))


def load_folder(path: str, seed: int | None = None) -> tuple[list, list[str]]:
    """(compiled worlds, problems) for every .world file under `path`."""
    from worldspec.compiler import load_world
    worlds, problems = [], []
    for p in world_files(path):
        try:
            worlds.append(load_world(p, seed))
        except (SpecError, SpecErrors) as e:
            problems.append(f"{p}: does not compile: {e.render().splitlines()[0]}")
    return worlds, problems


def certify_folder(path: str, seed: int | None = None, progress=None) -> dict:
    """Certify every world under `path`; counts by family and difficulty; cross-box problems."""
    from worldspec.compiler.program.certify import certify
    worlds, problems = load_folder(path, seed)
    entries = []
    counts: dict[str, dict[str, int]] = {"family": {}, "difficulty": {}, "family_difficulty": {}, "kind": {}}
    for w in worlds:
        if progress:
            progress(f"certifying {w.name}")
        report = certify(w)
        problems += [f"{w.source}: {x}" for x in report["problems"]]
        entry = {"file": w.source, "world": w.name, "kind": w.kind, "certified": not report["problems"]}
        _count(counts["kind"], w.kind)
        fam, diff = report.get("family"), report.get("difficulty")
        if fam:
            entry["family"], entry["difficulty"] = fam, diff
            _count(counts["family"], fam)
            _count(counts["difficulty"], diff)
            _count(counts["family_difficulty"], f"{fam}/{diff}")
        entries.append(entry)
    cross = cross_family_problems(worlds)
    problems += cross
    return {"folder": path, "worlds": len(worlds) + sum(1 for p in problems if "does not compile" in p),
            "certified": sum(e["certified"] for e in entries), "counts": counts, "entries": entries,
            "cross_checks": len(cross), "problems": problems}


def _count(table: dict, key) -> None:
    table[key] = table.get(key, 0) + 1


def cross_family_problems(worlds) -> list[str]:
    """Hard boxes that an easy box of the same family answers completely."""
    from worldspec.compiler.blackbox.certify import _outcome
    from worldspec.compiler.blackbox.domains import close
    from worldspec.compiler.game.engine import ROW, expected_score, optimum
    from worldspec.values import same
    out = []
    boxes = [w for w in worlds if getattr(w, "family", "")]
    for hard in (w for w in boxes if w.difficulty == "hard"):
        for easy in (w for w in boxes if w.difficulty == "easy" and w.family == hard.family):
            if hard.kind == "blackbox" and easy.kind == "blackbox" and not hard.has_goal and not easy.has_goal:
                if len(easy.inputs) != len(hard.inputs):
                    continue
                solved = True
                for c in hard.tests:
                    if easy.admits(list(c.values)) is not None:
                        solved = False
                        break
                    got = _outcome(easy, list(c.values))
                    if got[0] != "ok" or not close(got[1], c.expected, hard.tolerance):
                        solved = False
                        break
                if solved:
                    out.append(f"{hard.source}: the easy box {easy.name!r} answers every test of this hard box")
            elif hard.kind == "game" and easy.kind == "game" and hard.game == easy.game and hard.tests:
                if all(expected_score(hard.game, hard.opponents[0], ROW,
                                      optimum(easy.game, easy.opponents[0], ROW, t.horizon).plan)
                       >= t.optimum.value - 1e-9 for t in hard.tests):
                    out.append(f"{hard.source}: the best reply to the easy box {easy.name!r} is optimal in "
                               "every test of this hard box")
            elif hard.kind == "blackbox" and hard.has_goal and easy.kind == "blackbox" and easy.has_goal:
                if len(easy.inputs) == len(hard.inputs) and same(easy.goal, hard.goal) \
                        and easy.inputs == hard.inputs:
                    out.append(f"{hard.source}: it hides the same target as the easy box {easy.name!r}")
    return out
