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
    shares = [share_of(w) for w in _certifying(worlds, progress)]
    return folder_report(path, [{"problem": p} for p in problems] + shares, cross_family_problems(worlds))


def _certifying(worlds, progress):
    for i, w in enumerate(worlds, 1):
        if progress:
            progress(f"[{i}/{len(worlds)}] certifying {w.name}")
        yield w


def share_of(w) -> dict:
    """One compiled world's part of its folder's report: its entry and its certification's problems."""
    report = certify(w)  # recalled from the world cache when this world was certified before
    entry = {"file": w.source, "world": w.name, "kind": w.kind, "certified": not report["problems"]}
    fam, diff = report.get("family"), report.get("difficulty")
    if fam:
        entry["family"], entry["difficulty"] = fam, diff
    return {"entry": entry, "problems": [f"{w.source}: {x}" for x in report["problems"]],
            "crossed": w.kind if KINDS[w.kind].cross_checks else None}  # its kind, when that has cross-checks


def certify_one(p: str, seed: int | None = None, progress=None, cache: bool | None = None,
                place: str = "", shown: str | None = None) -> dict:
    """One file of a folder compiled and certified (what a `check FOLDER` worker runs for each file): its
    share (share_of), or {"problem": ...} when it does not compile; its progress is led by `place` ("[i/n]")
    and names the file as `shown` (default: p)."""
    if progress:
        progress(f"{place} compiling {shown or p}".lstrip())
    try:
        w = load_world(p, seed, cache)
    except (SpecError, SpecErrors) as e:
        return {"problem": f"{p}: does not compile: {e.render().splitlines()[0]}"}
    if progress:
        progress(f"{place} certifying {w.name}".lstrip())
    return share_of(w)


def crossed_files(shares: list[dict]) -> list[list[str]]:
    """The files of a folder's shares whose kind has cross-checks, one list a kind (in the order the kinds
    first appear, each in file order): what cross_family_problems gives each kind's cross_checks."""
    by_kind: dict[str, list[str]] = {}
    for s in shares:
        if s.get("crossed"):
            by_kind.setdefault(s["crossed"], []).append(s["entry"]["file"])
    return list(by_kind.values())


def cross_files(files: list[str], seed: int | None = None, cache: bool | None = None) -> list[str]:
    """The cross-box problems among these files' worlds (compiled again: recalled when the cache is on)."""
    return cross_family_problems([load_world(p, seed, cache) for p in files])


def folder_report(path: str, shares: list[dict], cross: list[str]) -> dict:
    """A folder's report from its worlds' shares (in file order; {"problem": ...} for one that does not
    compile, listed first among the problems) and its cross-box problems."""
    problems = [s["problem"] for s in shares if "entry" not in s]
    entries = []
    counts: dict[str, dict[str, int]] = {"family": {}, "difficulty": {}, "family_difficulty": {}, "kind": {}}
    for s in shares:
        if "entry" not in s:
            continue
        entry = s["entry"]
        problems += s["problems"]
        _count(counts["kind"], entry["kind"])
        fam, diff = entry.get("family"), entry.get("difficulty")
        if fam:
            _count(counts["family"], fam)
            _count(counts["difficulty"], diff)
            _count(counts["family_difficulty"], f"{fam}/{diff}")
        entries.append(entry)
    problems += cross
    return {"folder": path, "worlds": len(entries) + sum(1 for p in problems if "does not compile" in p),
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
