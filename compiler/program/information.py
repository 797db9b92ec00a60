"""Information per probe: the bits each probe of a trajectory removed from the explorer's hypothesis space.

A fresh explorer reads the trajectory's probes in order. Before each probe it
plans the best probe of the same cost (its expected bits are the probe's `best`);
then it reads the probe's feedback and prunes (the bits removed are its `bits`).
A probe the explorer itself would have sent is read segment by segment, any other
program as a whole (Explorer.observe_program). The runner sees only the records.
"""
from __future__ import annotations

import collections
import threading
import weakref

from worldspec.compiler.api import ProbeInformation
from worldspec.compiler.program.explorer import Explorer


class Scorer:
    """A fresh explorer that has read some probes of a trajectory, and their records so far."""

    def __init__(self, world, seed: int):
        self.ex = Explorer(world, seed)
        self.cap = world.budget.units_per_call
        self.read: tuple = ()  # the probes read, in order
        self.records: list[ProbeInformation] = []

    def feed(self, probes: tuple) -> None:
        """Read more probes of the trajectory, in order."""
        ex, cap = self.ex, self.cap
        for program, feedback, units in probes:
            k = len(self.records)
            segs, expected = ex.plan(cap)
            if segs:
                ex.register(segs)  # the explorer's own probe is then read segment by segment
            if not units or not isinstance(program, str):
                self.records.append(ProbeInformation(k, 0, 0.0, 0.0))
                continue
            best = expected if units >= cap else ex.plan(units)[1]
            bits = ex.observe(program, feedback or "")
            self.records.append(ProbeInformation(k, int(units), round(bits, 3), round(max(best, bits), 3)))
        self.read += probes


# Live scorers kept per world: an explorer holds tens of MB (AlienCode), so a run with more
# trajectories in flight than this re-reads an evicted trajectory's probes from the start.
LIVE_SCORERS = 6


class _Scorers:
    """One world's scorers, each under the probes it has read. A trajectory scored round by round
    asks for a longer prefix each time and carries on from the scorer of its last one; identical
    trajectories (deterministic agents) share it. Calls may come from threads: one at a time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_read: collections.OrderedDict = collections.OrderedDict()  # (seed, probes read) -> Scorer
        self.records: dict[tuple, list[ProbeInformation]] = {}  # (seed, probes) -> their records

    def score(self, world, probes: tuple, seed: int) -> list[ProbeInformation]:
        with self.lock:
            if (seed, probes) not in self.records:
                # the scorer that has read the longest prefix of these probes, or a fresh one
                n = next((n for n in range(len(probes), 0, -1) if (seed, probes[:n]) in self.by_read), 0)
                scorer = self.by_read.pop((seed, probes[:n])) if n else Scorer(world, seed)
                scorer.feed(probes[n:])
                self.by_read[(seed, probes)] = scorer
                while len(self.by_read) > LIVE_SCORERS:
                    self.by_read.popitem(last=False)  # the least recently advanced
                self.records[(seed, probes)] = list(scorer.records)
            return list(self.records[(seed, probes)])


# builder -> its scorers (a compiled world's variants share one builder)
_SCORERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_SCORERS_LOCK = threading.Lock()


def score(world, probes, seed: int = 0) -> list[ProbeInformation]:
    """One record per probe; `probes` holds (program, feedback text, units charged)."""
    probes = tuple(tuple(p) for p in probes)
    with _SCORERS_LOCK:
        scorers = _SCORERS.setdefault(world.builder, _Scorers())
    return scorers.score(world, probes, seed)
