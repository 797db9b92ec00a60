"""The world cache: cold against warm compiles and certifications, measured in the same run.

Issue 27's targets: `worldspec check worlds/oracle` (96 boxes) with a cold cache <= 60 s on this
machine, warm <= 10 s. The machine is shared, so CPU time (this process's) is printed beside the wall
time, and the ratio is what the cache is judged by.

- The three slowest boxes to compile (comparing-cards-slice, -smart, fib-recursion): compile
  without the cache (what every compile cost before it), then cold (computing and writing the
  records) and warm (recalling them), each also with its certification.
- The whole folder certified one world after another in this process (compiler.suite.certify_folder,
  what `check --jobs 1` runs in its one worker), cold then warm, in a fresh cache folder of its own:
  the CPU the folder costs.
- With --cli, `worldspec check FOLDER` itself as a subprocess (wall time only: the certification runs
  in the sandbox's worker processes, --jobs worlds at a time): cold with --jobs 1, cold with the
  default (the machine's cores), warm, and --no-cache; the targets are judged on these.

    python benchmarks/compile_cache.py [--folder worlds/oracle] [--boxes-only] [--cli]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from worldspec.compiler import load_world, worldcache  # noqa: E402
from worldspec.compiler.certified import certify  # noqa: E402
from worldspec.compiler.suite import certify_folder, world_files  # noqa: E402

SLOW_BOXES = ("worlds/oracle/game/gsi-h-comparing-cards-slice.world",
              "worlds/oracle/game/gsi-h-comparing-cards-smart.world",
              "worlds/oracle/code/cii-e-fib-recursion.world")


def timed(fn, *args, **kwargs):
    """(wall seconds, CPU seconds of this process, fn's result)."""
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return time.perf_counter() - w, time.process_time() - c, out


def row(label: str, wall: float, cpu: float) -> str:
    return f"  {label:<34} {wall:8.2f} s wall {cpu:8.2f} s CPU"


def boxes(scratch: str) -> None:
    print("The slowest boxes to compile:")
    for i, rel in enumerate(SLOW_BOXES):
        path = os.path.join(ROOT, rel)
        print(f"{os.path.basename(rel)}")
        os.environ[worldcache.ENV_DIR] = os.path.join(scratch, f"box{i}")
        w0, c0, ref = timed(load_world, path, cache=False)
        w1, c1, _ = timed(load_world, path)
        w2, c2, warm = timed(load_world, path)
        assert [t.solution for t in warm.tasks] == [t.solution for t in ref.tasks]
        print(row("compile, no cache", w0, c0))
        print(row("compile, cold cache", w1, c1))
        print(row("compile, warm cache", w2, c2))
        print(f"  {'':<34} CPU ratio no cache / warm: {c0 / max(c2, 1e-9):6.1f}x")
        os.environ[worldcache.ENV_DIR] = os.path.join(scratch, f"box{i}-certified")
        w3, c3, first = timed(lambda: certify(load_world(path)))
        w4, c4, again = timed(lambda: certify(load_world(path)))
        assert first == again
        print(row("compile + certify, cold cache", w3, c3))
        print(row("compile + certify, warm cache", w4, c4))
        print(f"  {'':<34} CPU ratio cold / warm: {c3 / max(c4, 1e-9):6.1f}x")


def folder(path: str) -> None:
    n = len(world_files(path))
    print(f"\n{path} ({n} worlds) certified one after another in this process (compiler.suite.certify_folder, "
          "what `check --jobs 1` does in its one worker):")
    w1, c1, cold = timed(certify_folder, path)
    w2, c2, warm = timed(certify_folder, path)
    assert cold == warm, "a warm certification differs from the cold one"
    print(row("cold cache", w1, c1))
    print(row("warm cache", w2, c2))
    print(f"  {'':<34} CPU ratio cold / warm: {c1 / max(c2, 1e-9):6.1f}x; "
          f"{cold['certified']} of {cold['worlds']} certified both times")


def cli(path: str, scratch: str) -> None:
    jobs = os.cpu_count() or 1
    print(f"\n`worldspec check {path}` as a subprocess (wall time; certification runs in its workers, "
          f"--jobs worlds at a time):")
    exe = os.path.join(os.path.dirname(sys.executable), "worldspec")
    command = [exe] if os.path.exists(exe) else [sys.executable, "-m", "worldspec.cli"]
    took = {}
    for label, cache, options in (("cold cache, --jobs 1", "cli-1", ["--jobs", "1"]),
                                  (f"cold cache, --jobs {jobs} (default)", "cli", []),
                                  ("warm cache", "cli", []),
                                  ("--no-cache", "cli", ["--no-cache"])):
        os.environ[worldcache.ENV_DIR] = os.path.join(scratch, cache)
        t = time.perf_counter()
        done = subprocess.run(command + ["check", path, *options], capture_output=True, text=True)
        took[label] = time.perf_counter() - t
        print(f"  {label + f' (exit {done.returncode})':<34} {took[label]:8.2f} s wall")
    cold, warm = took[f"cold cache, --jobs {jobs} (default)"], took["warm cache"]
    print(f"  targets: cold <= 60 s ({'met' if cold <= 60 else 'NOT met'} here: {cold:.0f} s wall), "
          f"warm <= 10 s ({'met' if warm <= 10 else 'NOT met'} here: {warm:.1f} s wall)")


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folder", default=os.path.join(ROOT, "worlds", "oracle"))
    ap.add_argument("--boxes-only", action="store_true", help="Only the three slow boxes (about a minute).")
    ap.add_argument("--cli", action="store_true", help="Also time `worldspec check FOLDER` cold and warm.")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each line as it is measured, also into a file
    scratch = tempfile.mkdtemp(prefix="worldspec-bench-cache-")
    os.environ.pop(worldcache.ENV_DISABLE, None)
    print(f"{os.cpu_count()} cores; at the start, {load()}")
    try:
        boxes(scratch)
        if not args.boxes_only:
            os.environ[worldcache.ENV_DIR] = os.path.join(scratch, "folder")
            folder(args.folder)
        if args.cli:
            cli(args.folder, scratch)
        print(f"\nAt the end, {load()}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
