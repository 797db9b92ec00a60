"""A folder of worlds as one benchmark: certify them all, count them, compare boxes across a family.

`certify_folder(path)` certifies every .world file under `path` and adds the
checks that need more than one world. Those belong to the kinds: each kind's
`cross_checks` (compiler.api.Kind) is given the folder's worlds of that kind;
the box kinds check that within a family no easy box's hidden function (or, for
game boxes, the best reply to an easy box's opponent) answers every test of a
hard box, so hard boxes are not solvable by the easy boxes' simplest hypotheses.
Counts per family and difficulty are in the report (`worldspec check FOLDER
--json` prints the same numbers).
"""
from __future__ import annotations

import os

from worldspec.compiler.build import KINDS, load_world
from worldspec.compiler.certified import certify
from worldspec.diagnostics import SpecError, SpecErrors


def world_files(path: str) -> list[str]:
    """Every .world file under `path`, sorted; a file named `_*.world` is a part other worlds include, not a
    world, and neither hidden files and folders nor `worldspec author`'s transcripts (`OUT.author/`) hold worlds."""
    found = []
    for d, dirs, fs in os.walk(path):
        dirs[:] = [x for x in dirs if not x.startswith(".") and not x.endswith(".author")]
        found += [os.path.join(d, f) for f in fs if f.endswith(".world") and not f.startswith(("_", "."))]
    return sorted(found)


def load_folder(path: str, seed: int | None = None, progress=None, cache: bool | None = None) -> tuple[list, list[str]]:
    """(compiled worlds, problems) for every .world file under `path` (cache: as load_world's)."""
    worlds, problems = [], []
    paths = world_files(path)
    for i, p in enumerate(paths, 1):
        if progress:
            progress(f"[{i}/{len(paths)}] compiling {os.path.relpath(p, path)}")
        try:
            worlds.append(load_world(p, seed, cache))
        except (SpecError, SpecErrors) as e:
            problems.append(f"{p}: does not compile: {e.render().splitlines()[0]}")
    return worlds, problems


def certify_folder(path: str, seed: int | None = None, progress=None, cache: bool | None = None) -> dict:
    """Certify every world under `path`; counts by family and difficulty; cross-box problems. A world certified
    before (same spec, seed and compiler) has its report recalled from the world cache unless cache is False."""
    worlds, problems = load_folder(path, seed, progress, cache)
    entries = []
    counts: dict[str, dict[str, int]] = {"family": {}, "difficulty": {}, "family_difficulty": {}, "kind": {}}
    for i, w in enumerate(worlds, 1):
        if progress:
            progress(f"[{i}/{len(worlds)}] certifying {w.name}")
        report = certify(w)  # recalled from the world cache when this world was certified before
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
    """The problems each kind's cross-checks find among the folder's worlds of that kind."""
    by_kind: dict[str, list] = {}
    for w in worlds:
        by_kind.setdefault(w.kind, []).append(w)
    out = []
    for name, members in by_kind.items():
        check = KINDS[name].cross_checks
        if check is not None:
            out += check(members)
    return out
