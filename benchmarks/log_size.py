"""How many bytes does a run log take per model call, against the old encoding of the same events?

    python benchmarks/log_size.py [WORLD] [--preset 20@2] [--out DIR]

Runs WORLD (default: the Oracle benchmark's game boxes, worlds/oracle/game, whose conversations are
the longest) with the built-in agents, and while it runs measures every event the log is given in
the old encoding (log_version 1: each event spelled out in full, a request with its whole
conversation). Prints the log's bytes, the old encoding's, both per model call, and the ratio; then
reads the log back (log.read_events) and checks that every event is the one that was written.
The whole 96-box Oracle run at 20@2 took 1.13 GB in the old encoding (issue 29); the target is <= 50 MB.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from worldspec.runner.cli import load_worlds  # noqa: E402
from worldspec.runner.experiment import run_experiment  # noqa: E402
from worldspec.runner.log import encode_line, read_events  # noqa: E402
from worldspec.runner.options import PRESETS  # noqa: E402
from worldspec.runner.config import RunConfig  # noqa: E402
from worldspec.runner.protocols import protocol_for  # noqa: E402


def canonical(event: dict) -> str:
    """A digest of an event that does not depend on the order of its keys."""
    return hashlib.sha256(json.dumps(event, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


class OldEncoding:
    """A run's watcher: the bytes each event would have taken in log_version 1, and a digest of each
    (the events themselves, each request with its whole conversation, would not fit in memory)."""

    def __init__(self):
        self.bytes = 0
        self.calls = 0
        self.events: list[str] = []

    def event(self, ev: dict) -> None:
        line = encode_line(ev)
        self.bytes += len(line)
        self.calls += ev.get("type") == "reply"
        self.events.append(canonical(json.loads(line)))

    def update(self, *args, **kw) -> None:  # the live display's other hook: nothing to show
        pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("world", nargs="?", default=os.path.join(HERE, "..", "worlds", "oracle", "game"))
    ap.add_argument("--preset", default="20@2")
    ap.add_argument("--out", help="the run directory (default: a temporary one)")
    args = ap.parse_args(argv)
    worlds, name = load_worlds(args.world, None)
    turns, shots = PRESETS[args.preset] if args.preset in PRESETS else map(int, args.preset.split("@"))
    config = RunConfig(turns=turns, shots=shots)
    agents = protocol_for(worlds).default_agents(worlds)
    out = args.out or tempfile.mkdtemp(prefix="log-size-")
    old = OldEncoding()
    t0 = time.perf_counter()
    asyncio.run(run_experiment(worlds, [], config, out, agents=agents, name=name, progress=old))
    wall = time.perf_counter() - t0
    new = os.path.getsize(os.path.join(out, "log.jsonl"))
    t0 = time.perf_counter()
    back = [canonical(e) for e in read_events(os.path.join(out, "log.jsonl"))]
    read = time.perf_counter() - t0
    # the header and the first session line are written before a watcher can see them
    unseen = back[: len(back) - len(old.events)]
    old.bytes += sum(len(line) for line in open(os.path.join(out, "log.jsonl"), "rb").readlines()[:len(unseen)])
    same = back[len(unseen):] == old.events
    calls = max(old.calls, 1)
    print(f"{name} at {args.preset}, built-in agents: {old.calls} model calls, {len(old.events)} events, {wall:.1f} s")
    print(f"log (log_version 2): {new:,} bytes, {new / calls:,.0f} per call; read back in {read:.1f} s")
    print(f"old encoding (1):    {old.bytes:,} bytes, {old.bytes / calls:,.0f} per call")
    print(f"ratio: {old.bytes / max(new, 1):.1f}x smaller; every event read back as written: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
