"""How much faster is a sweep on several cores (or a Ray cluster) than the same cells one at a time?

    python benchmarks/sweep_scaling.py [--cells 8] [--jobs 2] [--ray]

A plan of built-in-agent cells on small bundled-style boxes (tests/worlds/oracle) is swept
three ways into fresh folders: serially (`--jobs 1`), with `--executor local --jobs N`, and,
with --ray and Ray installed, on a local Ray cluster. The script prints each wall time and
its speed-up over the serial sweep measured in the same run; every sweep's summary rows must
be identical (the script checks). On 2 cores expect at most 2x.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOXES = ["running-total", "number-guess", "six-words", "exact-cipher"]
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}


def sweep(plan: Path, out: Path, *args: str) -> tuple[float, list]:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from worldspec.cli import main; main()", "sweep", str(plan), "--out",
                    str(out), *args], env=ENV, check=True, capture_output=True)
    wall = time.perf_counter() - start
    rows = json.loads((out / "summary.json").read_text())["results"]
    return wall, sorted(json.dumps(r, sort_keys=True) for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=8, help="cells in the plan (boxes x agents x seeds)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--ray", action="store_true", help="also sweep on a local Ray cluster")
    a = ap.parse_args()
    seeds = max(1, a.cells // (2 * len(BOXES)))
    worlds = [str(ROOT / "tests" / "worlds" / "oracle" / f"{b}.world") for b in BOXES]
    with tempfile.TemporaryDirectory() as tmp:
        plan = Path(tmp) / "plan.toml"
        plan.write_text(f"worlds = {json.dumps(worlds)}\nagents = [\"oracle\", \"memorise\"]\n"
                        f"seeds = {json.dumps(list(range(seeds)))}\n")
        runs = {"serial (--jobs 1)": sweep(plan, Path(tmp) / "serial", "--jobs", "1"),
                f"local --jobs {a.jobs}": sweep(plan, Path(tmp) / "local", "--jobs", str(a.jobs))}
        if a.ray:
            runs[f"ray --jobs {a.jobs}"] = sweep(plan, Path(tmp) / "ray", "--executor", "ray", "--jobs", str(a.jobs))
    base, rows = runs["serial (--jobs 1)"]
    print(f"{len(BOXES) * 2 * seeds} cells")
    print(f"{'sweep':24} {'wall s':>8} {'speed-up':>9}")
    for name, (wall, found) in runs.items():
        assert found == rows, f"{name}: the summary differs from the serial sweep's"
        print(f"{name:24} {wall:8.1f} {base / wall:9.2f}x")


if __name__ == "__main__":
    main()
