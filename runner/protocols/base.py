"""What every run protocol offers the orchestrator (experiment.py), and the plan it prints.

A protocol is named by the worlds that use it (`World.protocol`). Given the worlds
of a run, its models and the names of built-in agents, it builds a `Lineup`: who
plays (names and model ids, for the log header), which conversations a complete
run holds (their ids: the log's validity check counts them), a dry-run `Plan`, and
the coroutine that plays them all through a runtime.Runtime.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Callable, Protocol, Sequence

import attrs

from worldspec.compiler.api import Feedback


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
    layout: object  # report.Layout: how its runs' summary is computed and laid out (outputs.py)

    def default_agents(self, worlds: Sequence) -> tuple[str, ...]:
        """The built-in agents run when neither --model nor --agent is given."""

    def lineup(self, worlds: Sequence, models: Sequence, agents: Sequence[str], config) -> Lineup:
        """Check the request and build who plays what; raises models.FatalError on a bad one."""

    def world_identity(self, worlds: Sequence, name: str) -> dict:
        """Name, seed and a fingerprint of everything the protocol shows or grades (resume compares it)."""

    def exploration_calls(self, world) -> int:
        """How many exploration calls a player of this world gets (`worldspec play` counts them)."""

    def play_session(self, world, task=None) -> "PlaySession":
        """What `worldspec play` probes, as this protocol explores the world (for task's target, if any)."""


@attrs.frozen
class PlaySession:
    """A person's exploration in `worldspec play`: where probes go (the world, or one world session that
    keeps a box's memory or a round-by-round game), and the calls a probe's feedback costs."""

    probe: Callable[[str], Feedback]
    cost: Callable[[Feedback], int]
    opening: str = ""
    own_budget: bool = False  # each test is explored apart, with a budget of its own (BoxSession)


class ProbesTheWorld:
    """A protocol whose player probes the world itself (no session): `worldspec play` does the same. Its
    world's face declares `probe` (compiler/api.py)."""

    def play_session(self, world, task=None) -> PlaySession:
        """Probes of the world, one call each unless the world rejects them unrun (the milestone
        protocol's count: a probe that does not parse still uses its call)."""
        return PlaySession(world.probe, lambda fb: 0 if fb.status == "rejected" else 1)


class OneWorld:
    """A protocol that runs one world at a time: subclasses write the `*_for` methods on that world."""

    many_worlds = False
    config_keys: tuple[str, ...] = ()

    def default_agents(self, worlds) -> tuple[str, ...]:
        """The built-in agents run when neither --model nor --agent is given."""
        (world,) = worlds
        return self.agents_for(world)

    def lineup(self, worlds, models, agents, config):
        """Check the request and build who plays what; raises models.FatalError on a bad one."""
        (world,) = worlds
        return self.lineup_for(world, models, agents, config)

    def world_identity(self, worlds, name: str) -> dict:
        """Name, seed and a fingerprint of everything the protocol shows or grades (resume compares it)."""
        (world,) = worlds
        return self.identity_for(world)


@attrs.define
class ScheduleLineup:
    """Every model and local player (a bot, a strategy) plays every entry of the world's schedule; model sessions
    run concurrently, local players in process. Subclasses say how each plays and how a session is named. Its
    world's face declares `schedule` (compiler/api.py: PoolFace, HoldemFace)."""

    world: object
    models: list
    local: list
    config: object

    def local_name(self, player) -> str:
        """A local player's name in reports."""
        return player

    def local_id(self, player) -> str:
        """A local player's model id in the log."""
        return player

    def conversation(self, system: str, entry: tuple) -> str:
        """The conversation id of one system's session on one schedule entry."""
        raise NotImplementedError

    async def model_play(self, rt, model, entry: tuple) -> dict:
        """One model's session on one schedule entry: its record."""
        raise NotImplementedError

    def local_play(self, rt, player, entry: tuple) -> dict:
        """One local player's session on one schedule entry: its record."""
        raise NotImplementedError

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.models) + tuple(self.local_name(p) for p in self.local)

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.model_id for m in self.models) + tuple(self.local_id(p) for p in self.local)

    def jobs(self) -> list[str]:
        return [self.conversation(name, e) for name in self.names for e in self.world.schedule()]

    async def run(self, rt, out: Path) -> list[dict]:
        schedule = self.world.schedule()
        records = list(await asyncio.gather(*(self.model_play(rt, m, e) for m in self.models for e in schedule)))
        records += [self.local_play(rt, p, e) for p in self.local for e in schedule]
        return records
