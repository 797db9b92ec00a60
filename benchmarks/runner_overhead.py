"""How close does a run's wall time come to its critical path, and what does the runner cost per call?

    python benchmarks/runner_overhead.py [--world demo] [--latency 0.2] [--trajectories 3]
                                         [--max-connections 64] [--answers N]

Part 1: a fake model of fixed latency L that spends the whole exploration
budget (one probe per turn). The critical path of a run is its longest chain
of dependent model calls — one trajectory's exploration requests, then one
answer of the last milestone — times L. Milestones before the last overlap
exploration, so wall time can approach it; the script prints wall / critical
path (target <= 1.3) and the throughput bound (calls x L / max-connections)
that no scheduler can beat.

Part 2: the same run with L = 0: wall time per model call, and the same
without the time spent inside the world (probe, verify, requires, equation
grading) — the runner's own overhead per call (target < 5 ms).

Part 3 (`--boxes DIR`, default tests/worlds/oracle; `--boxes ""` skips it): a
turn@shot run of every box in DIR by the oracle and memorise agents, L = 0,
with the boxes loaded as `worldspec run` loads them (every world call, sessions
included, in the sandbox's workers) and compiled in process (every call in
process): wall time per model call of each, after a warm-up run.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))  # FakeWorld fallback

from runner_fakes import FakeWorld  # noqa: E402
from worldspec.compiler import load_world  # noqa: E402
from worldspec.compiler.api import Budget  # noqa: E402
from worldspec.compiler.suite import world_files  # noqa: E402
from worldspec.runner import sandbox  # noqa: E402
from worldspec.runner.config import RunConfig  # noqa: E402
from worldspec.runner.experiment import run_experiment  # noqa: E402
from worldspec.runner.models import Reply, ScriptedModel, ToolCall, Usage  # noqa: E402


class TimedWorld:
    """Delegates to a World and adds up the time spent in it."""

    TIMED = ("probe", "verify", "requires", "grade_equation", "charge", "information")

    def __init__(self, world):
        self._w = world
        self.seconds = 0.0

    def __getattr__(self, name):
        attr = getattr(self._w, name)
        if name in self.TIMED:
            def timed(*a, **kw):
                t0 = time.perf_counter()
                try:
                    return attr(*a, **kw)
                finally:
                    self.seconds += time.perf_counter() - t0
            return timed
        return attr


def load(world: str):
    try:
        w = load_world(world)
        if w.tasks:
            return w
        print(f"note: {world} has no tasks yet; using the test FakeWorld")
    except Exception as e:  # noqa: BLE001 — the benchmark still runs without the compiler
        print(f"note: cannot load {world} ({e}); using the test FakeWorld")
    return FakeWorld(n_tasks=70, budget=Budget())


def full_budget_policy(world):
    probes = [ex.program for ex in world.examples] or ["EMIT(1)"]
    cap = world.budget.units_per_call
    probes = [p for p in probes if 0 < world.charge(p) <= cap] or probes
    tool = world.tool.name

    def fn(req):
        msgs = req.messages
        if req.purpose == "explore" and req.tools and req.tool_choice != "none":
            since = 0
            for m in reversed(msgs):
                if m["role"] == "user":
                    break
                since += m["role"] == "tool"
            if since < world.budget.calls_per_round:
                n = sum(1 for m in msgs if m["role"] == "tool")
                return Reply(content=None, tool_calls=(ToolCall(
                    f"c{len(msgs)}", tool, json.dumps({world.tool.parameter: probes[n % len(probes)]})),),
                    usage=Usage(100, 10))
            return Reply(content="done", usage=Usage(100, 2))
        if req.purpose == "explore":
            return Reply(content="noted", usage=Usage(100, 2))
        if req.purpose == "rules":
            return Reply(content="```\nUNKNOWN\n```", usage=Usage(100, 3))
        task = next(t for t in world.tasks if t.id == req.purpose[5:])
        return Reply(content=f"```\n{task.solution}\n```", usage=Usage(100, 20))

    return fn


def one_run(world, latency: float, args, conditions=("autonomous",)):
    model = ScriptedModel(full_budget_policy(world), name="bench", latency=latency)
    cfg = RunConfig(conditions=conditions, trajectories=args.trajectories, answers=args.answers,
                    max_connections=args.max_connections)
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        res = asyncio.run(run_experiment([world], [model], cfg, out))
        wall = time.perf_counter() - t0
        explore = {}
        start = end = None
        with open(os.path.join(out, "log.jsonl")) as f:
            for line in f:
                e = json.loads(line)
                if e.get("type") == "request" and e["purpose"] == "explore":
                    explore[e["conv"]] = explore.get(e["conv"], 0) + 1
                elif e.get("type") == "session" and e["status"] == "started":
                    start = e["ts"]
                elif e.get("type") == "trajectory":
                    end = e["ts"]
    calls = model.calls
    chain = max(explore.values()) + 1 if explore else 1
    assert res.summary["validity"]["valid"]
    return wall, calls, chain, end - start


def box_run(worlds) -> tuple[float, int]:
    """(protocol seconds, model calls) of a turn@shot run of `worlds` by the oracle and the memoriser."""
    with tempfile.TemporaryDirectory() as out:
        asyncio.run(run_experiment(worlds, [], RunConfig(), out, agents=("oracle", "memorise"), name="boxes"))
        start = end = None
        calls = 0
        with open(os.path.join(out, "log.jsonl")) as f:
            for line in f:
                e = json.loads(line)
                calls += e.get("type") == "reply"
                if e.get("type") == "session" and e["status"] == "started":
                    start = e["ts"]
                elif e.get("type") == "trajectory":
                    end = e["ts"]
    return end - start, calls


def boxes(folder: str) -> None:
    paths = world_files(folder)
    print(f"\n[boxes, latency 0] {len(paths)} boxes of {folder}, agents oracle and memorise")
    for label, load_box in (("in the workers", sandbox.load), ("in process", load_world)):
        worlds = [load_box(p) for p in paths]
        box_run(worlds)  # warm: the workers compile their copies, the agents their tables
        seconds, calls = box_run(worlds)
        print(f"  {label:15s} {calls} model calls, {1000 * seconds / calls:7.3f} ms per call")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--world", default="demo")
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--trajectories", type=int, default=3)
    ap.add_argument("--max-connections", type=int, default=64)
    ap.add_argument("--answers", type=int, default=None)
    ap.add_argument("--boxes", default=os.path.join(HERE, "..", "tests", "worlds", "oracle"))
    args = ap.parse_args()

    world = load(args.world)
    b = world.budget
    answers = args.answers or b.answers
    print(f"world {world.name}: {len(world.tasks)} tasks x {answers} answers, {b.rounds} rounds x "
          f"{b.calls_per_round} calls (max {b.max_calls}); {args.trajectories} trajectories; "
          f"max-connections {args.max_connections}")

    L = args.latency
    wall, calls, chain, protocol = one_run(world, L, args)
    cp = chain * L
    tb = calls * L / args.max_connections
    print(f"\n[latency L = {L * 1000:.0f} ms] {calls} model calls, longest chain {chain} calls")
    print(f"  wall time            {wall:8.2f} s   (protocol {protocol:.2f} s + writing the "
          f"outputs {wall - protocol:.2f} s)")
    print(f"  critical path        {cp:8.2f} s   (chain x L)")
    print(f"  throughput bound     {tb:8.2f} s   (calls x L / max-connections)")
    print(f"  wall / critical path {wall / cp:8.2f}   (target <= 1.3); protocol alone "
          f"{protocol / cp:.2f}")
    print(f"  wall / max(bounds)   {wall / max(cp, tb):8.2f}")

    timed = TimedWorld(world)
    wall0, calls0, _, _ = one_run(timed, 0.0, args)
    print(f"\n[latency 0] {calls0} model calls in {wall0:.2f} s")
    print(f"  per call, all in       {1000 * wall0 / calls0:7.3f} ms")
    print(f"  of which in the world  {1000 * timed.seconds / calls0:7.3f} ms (probe/verify/grading/information)")
    print(f"  runner overhead / call {1000 * (wall0 - timed.seconds) / calls0:7.3f} ms (target < 5 ms)")
    if args.boxes:
        boxes(os.path.abspath(args.boxes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
