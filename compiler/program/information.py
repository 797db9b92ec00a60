"""Information per probe: the bits each probe of a trajectory removed from the explorer's hypothesis space.

A fresh explorer reads the trajectory's probes in order. Before each probe it
plans the best probe of the same cost (its expected bits are the probe's `best`);
then it reads the probe's feedback and prunes (the bits removed are its `bits`).
A probe the explorer itself would have sent is read segment by segment, any other
program as a whole (Explorer.observe_program). The runner sees only the records.
"""
from __future__ import annotations

import weakref

from worldspec.compiler.api import ProbeInformation
from worldspec.compiler.program.explorer import Explorer

# builder -> {(seed, probes): records}: identical trajectories (deterministic agents) are scored once
_SCORED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def score(world, probes, seed: int = 0) -> list[ProbeInformation]:
    """One record per probe; `probes` holds (program, feedback text, units charged)."""
    probes = tuple(tuple(p) for p in probes)
    memo = _SCORED.setdefault(world.builder, {})
    if (seed, probes) not in memo:
        memo[(seed, probes)] = _score(world, probes, seed)
    return list(memo[(seed, probes)])


def _score(world, probes, seed: int) -> list[ProbeInformation]:
    ex = Explorer(world, seed)
    cap = world.budget.units_per_call
    out = []
    for k, (program, feedback, units) in enumerate(probes):
        segs, expected = ex.plan(cap)
        if segs:
            ex.register(segs)  # the explorer's own probe is then read segment by segment
        if not units or not isinstance(program, str):
            out.append(ProbeInformation(k, 0, 0.0, 0.0))
            continue
        best = expected if units >= cap else ex.plan(units)[1]
        bits = ex.observe(program, feedback or "")
        out.append(ProbeInformation(k, int(units), round(bits, 3), round(max(best, bits), 3)))
    return out
