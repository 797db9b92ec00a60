"""A world's certification report, recalled from the world cache when the same world was certified before.

Certification is a function of the compiled world and the compiler (every random choice in it is
seeded, and nothing reads the clock), so its report is an artefact of the world like its test
answers: `certify(world)` looks in the cache file of the key `load_world` compiled the world
under (compiler/worldcache.py) and returns the stored report, or certifies and stores it. This is
what makes a warm `worldspec check worlds/oracle` take seconds (its 96 certifications cost minutes
of CPU: the puzzle solvers, the probe searches). `--no-cache` (WORLDSPEC_NO_CACHE) certifies afresh.

A report is stored only when it survives a JSON round trip unchanged (no tuples, no NaN), so a
recalled report is equal to the one certification would give. One read back is checked for the
shape every reader relies on (a map with `problems`, a list of strings) and ignored otherwise.
"""
from __future__ import annotations

import json

from worldspec.compiler import worldcache

RECORD = "certify"


def certify(world, progress=None) -> dict:
    """`world.certify(progress)`, recalled from the cache when it holds this world's report."""
    key = worldcache.key_of(world)
    if key is None or worldcache.disabled():
        return with_language(world.certify(progress=progress), world)
    records = worldcache.read(key)
    stored = recalled(records.get(RECORD))
    if stored is not None:
        return stored
    report = with_language(world.certify(progress=progress), world)
    kept = storable(report)
    if kept is not None:
        records = worldcache.read(key)  # what is there now (another process may have added to it)
        records[RECORD] = kept
        worldcache.write(key, records)
    return report


def with_language(report: dict, world) -> dict:
    """The report with the edition of the spec language the world is written in, after its kind: most
    kinds' reports have it; a kind's that has not (the game kind's, a kind registered by a test) gets it
    here, from the compiled world (compiler/build.py sets it for every kind)."""
    if "language" in report or not hasattr(world, "language"):
        return report
    out = {}
    for k, v in report.items():
        out[k] = v
        if k == "kind":
            out["language"] = world.language
    out.setdefault("language", world.language)
    return out


def storable(report) -> dict | None:
    """The report as a JSON value, if it reads back equal to itself (else None: it is not stored)."""
    try:
        text = json.dumps(report, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    back = json.loads(text)
    return back if back == report and type(back) is dict else None


def recalled(j) -> dict | None:
    """A stored report, if it has the shape of one."""
    if type(j) is not dict or type(j.get("problems")) is not list \
            or any(type(p) is not str for p in j["problems"]):
        return None
    return j
