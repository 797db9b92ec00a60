"""Issue 26's targets for the program and proof explorers, measured now and printed beside each target.

    python benchmarks/explorer_targets.py [--only NAME ...]

Each row is what `worldspec check WORLD --seed S --learnability` prints (runner/learnability.py: the
explorer played offline within the world's own budget, explorer seed 0): AlienCode at world seeds 0-3
(target: >= 90% with 31/31 rules), the program test worlds under tests/worlds/lang and the Python-like
tests/worlds/lang3 worlds (target: >= 60% each), and AlienLogic (target: above its recall-only floor at M4,
with UnprovRec). The boxes' targets are printed by benchmarks/box_explorer.py. docs/explorer.md records a run.
A world that misses says why in docs/explorer.md; this script only measures.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

ROOT = Path(__file__).resolve().parent.parent
ROWS = [("aliencode", str(ROOT / "worlds/aliencode.world"), s, 90.0, 31) for s in (0, 1, 2, 3)] + [
    (p.stem, str(p), None, 60.0, None) for p in sorted((ROOT / "tests/worlds/lang").glob("*.world"))] + [
    ("pylike", str(ROOT / "tests/worlds/lang3/pylike.world"), None, 60.0, None),
    ("loops", str(ROOT / "tests/worlds/lang3/loops.world"), None, 60.0, None),
    ("alienlogic", str(ROOT / "worlds/alienlogic.world"), None, None, None)]


def floor_of(world) -> float:
    """The recall-only floor: the share of tasks the manual's naive answers pass (what `check` reports)."""
    from worldspec.compiler.common import recall_only_score
    return recall_only_score(world)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="names of rows to run (aliencode, control, pylike, ...)")
    args = ap.parse_args()
    from worldspec.compiler import load_world
    from worldspec.runner.learnability import learnability
    print("| world | seed | explorer | rules | target | met | seconds |")
    print("|---|---|---|---|---|---|---|")
    for name, path, seed, target, rules in ROWS:
        if args.only and name not in args.only:
            continue
        t0 = time.process_time()
        world = load_world(path, seed=seed)
        found = learnability(world)
        took = time.process_time() - t0
        acc = found.accuracy
        if target is None:  # AlienLogic: above the recall-only floor
            target = floor_of(world)
            label = f"> floor {target:.1f}"
            met = acc is not None and acc > target
        else:
            label = f">= {target:.0f}" + (f", {rules}/{rules} rules" if rules else "")
            met = acc is not None and acc >= target and (rules is None or found.rules_correct == rules)
        stated = f"{found.rules_correct}/{found.rules_total}" if found.rules_total is not None else "—"
        extra = f", UnprovRec {100.0 * found.refusals / found.unprovable:.1f}%" if found.unprovable else ""
        print(f"| {name} | {seed if seed is not None else 'declared'} | "
              f"{'—' if acc is None else f'{acc:.1f}%'}{extra} | {stated} | {label} | {'yes' if met else 'no'} | "
              f"{took:.0f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
