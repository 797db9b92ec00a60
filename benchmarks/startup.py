"""How long do commands take to start? CPU seconds of whole processes, against `python -c pass`.

    python benchmarks/startup.py [--repeat 5]

Each command runs as a fresh process `--repeat` times; the script prints the median
user+system CPU seconds of each (children included: the sandbox's workers count) and
its ratio to a bare interpreter measured in the same run. Targets (issues 25, 27):
`worldspec --help` and `worldspec probe demo ...` under 0.5 s of CPU, `worldspec list`
under 1 s of wall time.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
CLI = [sys.executable, "-c", "from worldspec.cli import main; main()"]
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "worldspec --help": CLI + ["--help"],
    "worldspec list": CLI + ["list"],
    "worldspec manual demo": CLI + ["manual", "demo"],
    'worldspec probe demo "EMIT(100)"': CLI + ["probe", "demo", "EMIT(100)"],
}


def measure(cmd: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of cmd and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rows = {}
    for name, cmd in COMMANDS.items():
        runs = [measure(cmd) for _ in range(args.repeat)]
        rows[name] = (statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs))
    base = rows["python -c pass"][0] or 1e-9
    print(f"{'command':40} {'CPU s':>8} {'wall s':>8} {'x python':>9}")
    for name, (cpu, wall) in rows.items():
        print(f"{name:40} {cpu:8.3f} {wall:8.3f} {cpu / base:9.1f}")


if __name__ == "__main__":
    main()
