"""What every run protocol offers the orchestrator (experiment.py), and the plan it prints.

A protocol is named by the worlds that use it (`World.protocol`). Given the worlds
of a run, its models and the names of built-in agents, it builds a `Lineup`: who
plays (names and model ids, for the log header), which conversations a complete
run holds (their ids: the log's validity check counts them), a dry-run `Plan`, and
the coroutine that plays them all through a runtime.Runtime.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Protocol, Sequence

import attrs


def fingerprint(content) -> str:
    """A short digest of what a run shows or grades (resume refuses a world that changed)."""
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:24]


@attrs.frozen
class Plan:
    """What `--dry-run` prints: one row per (system, part of the run) and a bound on model calls."""

    title: str
    head: tuple[str, ...]
    rows: tuple[tuple, ...]
    max_calls: int
    note: str = ""


class Lineup(Protocol):
    names: tuple[str, ...]  # the systems of the run, as reports name them
    model_ids: tuple[str, ...]

    def jobs(self) -> list[str]:
        """The conversation id of every session a complete run holds."""

    def plan(self) -> Plan:
        """The dry run: what would be played and at most how many model calls it takes."""

    async def run(self, rt, out: Path) -> list[dict]:
        """Play every session; returns their records (also logged as `trajectory` events)."""


class RunProtocol(Protocol):
    name: str  # as worlds name it: "milestone" | "turn@shot" | "pool"
    many_worlds: bool  # a folder of such worlds is one run
    config_keys: tuple[str, ...]  # the RunConfig fields that change its results (the log header keeps them)

    def default_agents(self, worlds: Sequence) -> tuple[str, ...]:
        """The built-in agents run when neither --model nor --agent is given."""

    def lineup(self, worlds: Sequence, models: Sequence, agents: Sequence[str], config) -> Lineup:
        """Check the request and build who plays what; raises models.FatalError on a bad one."""

    def world_identity(self, worlds: Sequence, name: str) -> dict:
        """Name, seed and a fingerprint of everything the protocol shows or grades (resume compares it)."""

    def exploration_calls(self, world) -> int:
        """How many exploration calls a player of this world gets (`worldspec play` counts them)."""
