"""Information per probe: the bits each probe of a trajectory removed from the explorer's hypothesis space.

A fresh explorer reads the trajectory's probes in order. Before each probe it
plans the best probe of the same cost (its expected bits are the probe's `best`);
then it reads the probe's feedback and prunes (the bits removed are its `bits`).
A probe the explorer itself would have sent is read segment by segment, any other
program as a whole (Explorer.observe_program). The runner sees only the records.
"""
from __future__ import annotations

import threading
import weakref

from worldspec.compiler.api import ProbeInformation
from worldspec.compiler.common import Scorers
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


# builder -> its scorers (a compiled world's variants share one builder)
_SCORERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_SCORERS_LOCK = threading.Lock()


def score(world, probes, seed: int = 0) -> list[ProbeInformation]:
    """One record per probe; `probes` holds (program, feedback text, units charged)."""
    with _SCORERS_LOCK:
        scorers = _SCORERS.setdefault(world.builder, Scorers(Scorer))
    return scorers.score(world, probes, seed)
