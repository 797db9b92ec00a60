"""The run protocols, by the name a world gives in `World.protocol`.

  milestone   ExplorationBench: rounds of tool calls, milestones with rule reports
              and held-out tasks, seven conditions (milestone.py, trajectory.py, conditions.py)
  turn@shot   the Oracle benchmark: turns of inputs, then test samples with shots (turnshot.py)
  pool        a repeated game against an opponent pool (pool.py)
  holdem      no-limit Hold'em hands against baseline bots, duplicate deals (holdem.py, holdem_report.py)
  judge       situation puzzles and interactive math: questions to a judge, pass@k* (judge.py)

Each implements base.RunProtocol, its report layout included (`layout`); the orchestrator
(experiment.py), the outputs (outputs.py), `worldspec play` and the CLI look a protocol up
here and never ask a world what kind it is. `register_protocol` adds one at run time (a
test's scratch protocol), as `compiler.register_kind` adds a kind.
"""
from __future__ import annotations

from typing import Sequence

from ..models import FatalError
from .base import Lineup, Plan, RunProtocol
from .holdem import HOLDEM
from .judge import JUDGE
from .milestone import CONDITIONS, MILESTONE
from .pool import POOL
from .turnshot import TURNSHOT

PROTOCOLS: dict[str, RunProtocol] = {p.name: p for p in (MILESTONE, TURNSHOT, POOL, HOLDEM, JUDGE)}

__all__ = ["CONDITIONS", "Lineup", "PROTOCOLS", "Plan", "RunProtocol", "protocol_for", "register_protocol"]


def register_protocol(protocol: RunProtocol) -> None:
    """Add a run protocol (a world names it in `World.protocol`): `worldspec run`, `report` and `view` then
    run and lay out its worlds as the built-in ones, through its lineup and its `layout`; a name already
    taken is refused."""
    for member in ("name", "many_worlds", "config_keys", "layout", "default_agents", "lineup", "world_identity"):
        if not hasattr(protocol, member):
            raise TypeError(f"a run protocol needs `{member}` (runner/protocols/base.py RunProtocol)")
    if protocol.name in PROTOCOLS:
        raise ValueError(f"a run protocol named {protocol.name!r} is registered already")
    PROTOCOLS[protocol.name] = protocol


def protocol_for(worlds: Sequence) -> RunProtocol:
    """The protocol that runs these worlds together (all must name the same one)."""
    names = sorted({w.protocol for w in worlds})
    if len(names) != 1:
        if not names:
            raise FatalError("no worlds to run")
        raise FatalError("one run takes worlds of one protocol; these name " + ", ".join(names))
    protocol = PROTOCOLS.get(names[0])
    if protocol is None:
        raise FatalError(f"no runner protocol {names[0]!r} (known: {', '.join(PROTOCOLS)})")
    if len(worlds) > 1 and not protocol.many_worlds:
        raise FatalError(f"a {protocol.name} run takes one world, not {len(worlds)}: "
                         + ", ".join(w.name for w in worlds[:3]) + (", ..." if len(worlds) > 3 else ""))
    return protocol
