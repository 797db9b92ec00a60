"""A run: every (system, condition, trajectory) of one world, concurrently.

`run_experiment(world, models, config, out)` opens (or resumes) the run log,
starts every trajectory as an asyncio task (independent trajectories,
conditions and models run at once; each model's requests share one limit),
and writes the run outputs when they are done. Hindsight trajectories wait for
the same system's autonomous trajectories when no `hindsight_from` directory
is given. `plan(...)` computes what `--dry-run` prints.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Sequence

import attrs

from . import metrics
from .cache import ResponseCache
from .log import RunLog, read_events
from .models import FatalError, Model, RetryPolicy
from .protocol import (CONDITIONS, ProbeScript, Trajectory, Volume, default_volume, fixed_script)
from .runtime import Runtime, session_outcome

CONTROL_CONDITIONS = tuple(c for c in CONDITIONS if c != "autonomous")


@attrs.frozen
class RunConfig:
    conditions: tuple[str, ...] = ("autonomous",)
    trajectories: int = 3  # n for the autonomous condition
    control_trajectories: int = 1  # each control condition (paper: once per system)
    answers: int | None = None  # None: the world's budget.answers
    settings: dict = attrs.field(factory=dict)
    api_base: str | None = None
    world_seed: int | None = None
    hindsight_from: str | None = None
    volume_from: str | None = None
    fixed_seed: int = 0
    # operational: do not change results, not part of the resume check
    max_connections: int = 16
    retry: RetryPolicy = RetryPolicy()

    def n_for(self, condition: str) -> int:
        return self.trajectories if condition == "autonomous" else self.control_trajectories

    def identity(self, models: Sequence[Model]) -> dict:
        return {
            "protocol": "explorationbench",
            "systems": [m.name for m in models],
            "model_ids": [m.model_id for m in models],
            "conditions": list(self.conditions),
            "trajectories": self.trajectories,
            "control_trajectories": self.control_trajectories,
            "answers": self.answers,
            "settings": self.settings,
            "api_base": self.api_base,
            "world_seed": self.world_seed,
            "hindsight_from": self.hindsight_from,
            "volume_from": self.volume_from,
            "fixed_seed": self.fixed_seed,
        }


def world_identity(world) -> dict:
    """Name, version, seed and a fingerprint of everything the protocol shows or grades."""
    b = world.budget
    content = {
        "manual": world.manual,
        "examples": [(e.id, e.prompt, e.program, e.output) for e in world.examples],
        "tasks": [(t.id, t.prompt, t.shape, t.solution, t.naive) for t in world.tasks],
        "rules": [(r.id, r.target, r.equation, r.statement) for r in world.rules],
        "herrings": [(r.id, r.target) for r in getattr(world, "herrings", ())],
        "budget": attrs.asdict(b) if attrs.has(type(b)) else repr(b),
        "tool": world.tool.name,
    }
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()
    return {"name": world.name, "version": getattr(world, "version", None),
            "seed": getattr(world, "seed", None), "fingerprint": digest[:24]}


def validate_config(config: RunConfig) -> None:
    for c in config.conditions:
        if c not in CONDITIONS:
            raise FatalError(f"unknown condition {c!r}; choose from {', '.join(CONDITIONS)}")
    if "hindsight" in config.conditions and not config.hindsight_from \
            and "autonomous" not in config.conditions:
        raise FatalError("the hindsight condition replays a best autonomous trajectory: name a "
                         "previous run with --hindsight-from DIR, or add --condition autonomous")
    if config.trajectories < 1 or config.control_trajectories < 1:
        raise FatalError("--trajectories and --control-trajectories must be at least 1")


# ----------------------------------------------------------------------------
# Reference trajectories from a run log (hindsight probes, fixed/without-tool volume)


def _split_spec(spec: str) -> tuple[Path, str | None]:
    path, _, system = spec.partition("#")
    return Path(path), (system or None)


def best_autonomous(log_path: Path, system: str | None, *, strict_system: bool) -> tuple[str, list[dict]]:
    """(conv id, tool events) of the best autonomous trajectory of `system` in a run log."""
    if not log_path.exists():
        raise FatalError(f"no run log at {log_path}")
    trajs: dict[str, dict] = {}
    tools: dict[str, list[dict]] = defaultdict(list)
    for ev in read_events(log_path):
        if ev.get("type") == "trajectory":
            trajs[ev["conv"]] = ev["record"]  # the last record of a conversation wins
        elif ev.get("type") == "tool":
            tools[ev["conv"]].append(ev)
    recs = [r for r in trajs.values() if r["condition"] in ("autonomous",) and r.get("status") == "complete"]
    systems = sorted({r["system"] for r in recs})
    if not recs:
        raise FatalError(f"{log_path} holds no finished autonomous trajectory")
    if system is None or system not in systems:
        if strict_system or system is not None and len(systems) != 1:
            raise FatalError(f"{log_path} has no finished autonomous trajectory of {system!r} "
                             f"(found: {', '.join(systems)}); name one as DIR#SYSTEM")
        if len(systems) != 1:
            raise FatalError(f"{log_path} holds several systems ({', '.join(systems)}); "
                             "name one as DIR#SYSTEM")
        system = systems[0]
    mine = [r for r in recs if r["system"] == system]
    best = metrics.best_of(mine)["best_record"]
    conv = f"{best['system']}|{best['condition']}|{best['trajectory']}"
    return conv, tools.get(conv, [])


def _group(events: list[dict], keep) -> list[list[list[dict]]]:
    by_round: dict[int, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for ev in events:
        if keep(ev):
            by_round[ev["t"]][ev["turn"]].append(ev)
    if not by_round:
        return []
    last = max(by_round)
    return [[by_round[t][k] for k in sorted(by_round[t])] for t in range(1, last + 1)]


def hindsight_script(log_path: Path, system: str, n_rounds: int) -> ProbeScript:
    conv, events = best_autonomous(log_path, system, strict_system=True)
    rounds = _group(events, lambda e: e.get("status") not in ("over_budget", "invalid")
                    and isinstance(e.get("program"), str))
    rounds = rounds[:n_rounds]
    return ProbeScript(tuple(tuple(tuple(e["program"] for e in turn) for turn in rnd) for rnd in rounds),
                       source=f"hindsight: {conv} in {log_path}")


def volume_from(log_path: Path, system: str | None, n_rounds: int) -> Volume:
    conv, events = best_autonomous(log_path, system, strict_system=False)
    rounds = _group(events, lambda e: e.get("status") not in ("over_budget", "invalid", "rejected"))
    rounds = rounds[:n_rounds]
    turns = exploration_turns(log_path, conv)
    return Volume(tuple(tuple(tuple(int(e["units"]) for e in turn) for turn in rnd) for rnd in rounds),
                  model_turns=tuple(turns.get(t, 0) for t in range(1, n_rounds + 1)),
                  source=f"{conv} in {log_path}")


def exploration_turns(log_path: Path, conv: str) -> dict[int, int]:
    turns: dict[int, int] = defaultdict(int)
    for ev in read_events(log_path):
        if ev.get("type") == "request" and ev.get("conv") == conv and ev.get("purpose") == "explore":
            turns[ev["t"]] += 1
    return dict(turns)


# ----------------------------------------------------------------------------
# The run


@attrs.define
class RunResult:
    out: Path
    trajectories: list[dict]
    summary: dict
    stats: dict


async def run_experiment(world, models: Sequence[Model], config: RunConfig, out: str | Path, *,
                         resume: bool = False, cache_dir: str | Path | None = None,
                         progress=None) -> RunResult:
    from . import report  # noqa: PLC0415

    validate_config(config)
    if not world.tasks:
        raise FatalError(f"{world.name} has no held-out tasks: there is nothing to score")
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise FatalError(f"two systems share a name: {names}")
    out = Path(out)
    log = RunLog(out, config=config.identity(models), world=world_identity(world), resume=resume)
    cache = ResponseCache(cache_dir) if cache_dir else None
    rt = Runtime(log, cache=cache, max_connections=config.max_connections, retry=config.retry,
                 progress=progress)
    answers = config.answers or world.budget.answers
    with session_outcome(log, cache):
        records = await _run_all(world, models, config, rt, answers, out)
    stats = {"calls_live": rt.stats.live, "calls_from_log": rt.stats.from_log,
             "calls_from_cache": rt.stats.from_cache, "retries": rt.stats.retries,
             "lost": rt.stats.lost}
    log.emit({"type": "stats", "session": log.session, **stats})
    log.close("success")
    if cache is not None:
        cache.close()
    summary = report.write_run_outputs(out)
    return RunResult(out=out, trajectories=records, summary=summary, stats=stats)


async def _run_all(world, models, config: RunConfig, rt: Runtime, answers: int, out: Path) -> list[dict]:
    n_rounds = world.budget.rounds
    volume = None
    if config.volume_from:
        path, system = _split_spec(config.volume_from)
        volume = volume_from(path / "log.jsonl", system, n_rounds)
    autonomous_done: dict[str, asyncio.Event] = {m.name: asyncio.Event() for m in models}
    jobs = []
    scripts: dict[str, ProbeScript] = {}
    if "hindsight" in config.conditions and config.hindsight_from:
        # a named run is read before anything starts, so a wrong directory costs no calls
        path, system = _split_spec(config.hindsight_from)
        for m in models:
            scripts[m.name] = hindsight_script(path / "log.jsonl", system or m.name, n_rounds)

    async def one(model: Model, condition: str, r: int) -> dict:
        script = vol = None
        if condition == "hindsight":
            if model.name in scripts:
                script = scripts[model.name]
            else:
                await autonomous_done[model.name].wait()
                try:
                    script = hindsight_script(out / "log.jsonl", model.name, n_rounds)
                except FatalError as e:  # every autonomous trajectory of this system was lost
                    rec = {"world": world.name, "system": model.name, "condition": condition,
                           "trajectory": r, "milestones": [], "status": "error", "valid": False,
                           "endpoint": None, "error": str(e)}
                    rt.emit({"type": "trajectory", "id": None, "conv": f"{model.name}|{condition}|{r}",
                             "record": rec})
                    return rec
        elif condition == "fixed":
            vol = volume or default_volume(world)
            script = fixed_script(world, vol, config.fixed_seed)
        elif condition == "without-tool":
            vol = volume or default_volume(world)
        traj = Trajectory(rt, world, model, condition, r, answers=answers, script=script,
                          volume=vol, settings=config.settings)
        return await traj.run()

    async def autonomous_group(model: Model) -> list[dict]:
        try:
            return await asyncio.gather(*(one(model, "autonomous", r)
                                          for r in range(1, config.n_for("autonomous") + 1)))
        finally:
            autonomous_done[model.name].set()

    for model in models:
        for condition in config.conditions:
            if condition == "autonomous":
                jobs.append(autonomous_group(model))
            else:
                jobs.append(asyncio.gather(*(one(model, condition, r)
                                             for r in range(1, config.n_for(condition) + 1))))
    tasks = [asyncio.ensure_future(j) for j in jobs]
    try:
        groups = await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return [rec for g in groups for rec in g]


# ----------------------------------------------------------------------------
# Dry run


def plan(world, systems: Sequence[str], config: RunConfig) -> dict:
    """The trajectories a run would start and an upper bound on its model calls."""
    b = world.budget
    answers = config.answers or b.answers
    from .protocol import reportable_rules  # noqa: PLC0415

    per_milestone = (1 if reportable_rules(world) else 0) + len(world.tasks) * answers
    n = b.rounds
    rows = []
    slots = []
    left = b.max_calls
    for _ in range(n):
        s = max(0, min(b.calls_per_round, left))
        left -= s
        slots.append(s)
    for system in systems:
        for cond in config.conditions:
            k = config.n_for(cond)
            if cond == "open-book-m0":
                explore, ms = 0, 1
            elif cond == "direct":
                explore, ms = 0, n + 1
            elif cond == "a4-open-book":
                explore, ms = sum(s + 1 for s in slots if s), 1
            elif cond == "autonomous":
                explore, ms = sum(s + 1 for s in slots if s), n + 1
            else:  # hindsight, fixed, without-tool: one model turn per scripted turn
                explore, ms = sum(slots), n + 1
            rows.append({"system": system, "condition": cond, "trajectories": k,
                         "exploration_calls_max": explore * k, "milestones": ms,
                         "milestone_calls": ms * per_milestone * k})
    total = sum(r["exploration_calls_max"] + r["milestone_calls"] for r in rows)
    return {"world": world.name, "tasks": len(world.tasks), "answers": answers,
            "rounds": n, "rows": rows, "total_calls_max": total}
