"""Does a multi-box Oracle run killed mid-way resume to the run it would have been?

    python benchmarks/kill_resume.py [WORLDS] [--boxes N] [--preset 20@2] [--at 0.5] [--out DIR]

Runs N boxes of WORLDS (evenly spaced in sorted order, so every family is in) (default: worlds/oracle, all 96 boxes; N = 0 means all) with the built-in
agents twice through the `worldspec run` command: once uninterrupted, once killed with SIGKILL when its log
holds the fraction --at of the first run's model replies, then `worldspec run --resume` on it. Prints the
boxes, the replies at the kill, both logs' sizes, and whether the resumed run's trajectories.jsonl is the
uninterrupted one byte for byte, its summary's results equal, and no log event written twice (issue 29: "the
96-box 20@2 run's log is <= 50 MB and resumes identically after a kill"). Exit status 0 when all hold.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from worldspec.runner.log import read_events  # noqa: E402


def boxes(folder: str, n: int) -> list[str]:
    """n of the folder's box files, evenly spaced in sorted order (all when n is 0; files starting with `_` are
    includes, not boxes)."""
    found = []
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        found += [os.path.join(top, f) for f in sorted(files) if f.endswith(".world") and not f.startswith("_")]
    if not n or n >= len(found):
        return found
    return [found[i * len(found) // n] for i in range(n)]  # spread over the families


def stage(chosen: list[str], folder: str, into: str) -> str:
    """A copy of the chosen boxes under `into`, each family folder with its includes, so the run reads them."""
    for path in chosen:
        rel = os.path.relpath(os.path.dirname(path), folder)
        dest = os.path.join(into, rel)
        os.makedirs(dest, exist_ok=True)
        shutil.copy(path, dest)
        for f in os.listdir(os.path.dirname(path)):
            if f.startswith("_") and f.endswith(".world"):
                shutil.copy(os.path.join(os.path.dirname(path), f), dest)
    return into


def replies(log: str) -> int:
    """Model replies in a log so far (its lines are read as text: the run is writing it)."""
    try:
        with open(log, encoding="utf-8", errors="replace") as fh:
            return sum('"type":"reply"' in line for line in fh)
    except FileNotFoundError:
        return 0


def command(worlds: str, preset: str, out: str, *extra: str) -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "worldspec")  # the entry point installed beside python
    return [exe if os.path.exists(exe) else "worldspec", "run", worlds, "--preset", preset, "--out", out, *extra]


def results(out: str) -> dict:
    """summary.json but the count of sessions."""
    summary = json.load(open(os.path.join(out, "summary.json")))
    summary["validity"].pop("sessions")  # the resumed run had two, which it says
    return summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("worlds", nargs="?", default=os.path.join(ROOT, "worlds", "oracle"))
    ap.add_argument("--boxes", type=int, default=0, help="N boxes spread over the families (0: all)")
    ap.add_argument("--preset", default="20@2")
    ap.add_argument("--at", type=float, default=0.5, help="kill when the log holds this fraction of the replies")
    ap.add_argument("--out", help="where the two runs go (default: a temporary directory)")
    args = ap.parse_args(argv)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}
    base = args.out or tempfile.mkdtemp(prefix="kill-resume-")
    chosen = boxes(args.worlds, args.boxes)
    worlds = stage(chosen, args.worlds, os.path.join(base, "worlds"))
    whole, cut = os.path.join(base, "whole"), os.path.join(base, "killed")
    print(f"{len(chosen)} boxes at {args.preset} (built-in agents), in {base}")

    t0 = time.time()
    done = subprocess.run(command(worlds, args.preset, whole), env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print("the uninterrupted run failed:", done.stderr[-2000:])
        return 1
    total = replies(os.path.join(whole, "log.jsonl"))
    print(f"uninterrupted: {total} replies, {time.time() - t0:.0f} s")

    proc = subprocess.Popen(command(worlds, args.preset, cut), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    target = max(1, int(total * args.at))
    try:
        while replies(os.path.join(cut, "log.jsonl")) < target:
            if proc.poll() is not None:
                print("the run ended before it was killed:", proc.stderr.read().decode()[-2000:])
                return 1
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    at_kill = replies(os.path.join(cut, "log.jsonl"))
    print(f"killed (SIGKILL) with {at_kill} of {total} replies in its log")
    t0 = time.time()
    again = subprocess.run(command(worlds, args.preset, cut, "--resume"), env=env, capture_output=True, text=True)
    print(f"resumed: exit {again.returncode}, {time.time() - t0:.0f} s")
    if again.returncode != 0:
        print(again.stderr[-2000:])
        return 1

    same_traj = open(os.path.join(whole, "trajectories.jsonl"), "rb").read() == \
        open(os.path.join(cut, "trajectories.jsonl"), "rb").read()
    same_results = results(whole) == results(cut)
    ids = collections.Counter(e["id"] for e in read_events(os.path.join(cut, "log.jsonl")) if e.get("id"))
    twice = [k for k, v in ids.items() if v > 1]
    after = replies(os.path.join(cut, "log.jsonl"))
    sizes = [os.path.getsize(os.path.join(d, "log.jsonl")) for d in (whole, cut)]
    print(f"log bytes: uninterrupted {sizes[0]:,}, killed and resumed {sizes[1]:,}")
    print(f"replies after resuming: {after} (uninterrupted {total})")
    print(f"trajectories.jsonl identical: {same_traj}; summary results equal: {same_results}; "
          f"events written twice: {len(twice)}")
    return 0 if same_traj and same_results and not twice and after == total else 1


if __name__ == "__main__":
    sys.exit(main())
