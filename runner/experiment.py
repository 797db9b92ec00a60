"""A run: every session of the worlds' protocol, concurrently, logged, then reported.

`run_experiment(worlds, models, config, out, agents=...)` looks the worlds'
protocol up in the registry (protocols.PROTOCOLS), has it build the lineup
(who plays what; built-in agents by name), opens or resumes the run log with
the lineup's identity, plays every session through one runtime.Runtime (each
model's requests share one limit) and writes the run outputs (outputs.py).
`plan(...)` is what `--dry-run` prints, from the same lineup.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import attrs

from . import outputs, report
from .cache import ResponseCache
from .config import RunConfig
from .log import RunLog
from .models import FatalError, Model
from .protocols import Plan, protocol_for
from .runtime import Runtime, session_outcome


@attrs.define
class RunResult:
    out: Path
    trajectories: list[dict]
    summary: dict
    stats: dict


def lineup(worlds: Sequence, models: Sequence[Model], config: RunConfig, agents: Sequence[str] = ()):
    """(protocol, lineup) for a run; raises FatalError for a request the protocol cannot run."""
    protocol = protocol_for(worlds)
    cast = protocol.lineup(worlds, models, agents, config)
    if len(set(cast.names)) != len(cast.names):
        raise FatalError(f"two systems share a name: {list(cast.names)}")
    return protocol, cast


def plan(worlds: Sequence, models: Sequence[Model], config: RunConfig, agents: Sequence[str] = ()) -> Plan:
    """The sessions a run would start and an upper bound on its model calls."""
    return lineup(worlds, models, config, agents)[1].plan()


async def run_experiment(worlds: Sequence, models: Sequence[Model], config: RunConfig, out: str | Path, *,
                         agents: Sequence[str] = (), name: str | None = None, resume: bool = False,
                         cache_dir: str | Path | None = None, progress=None, overwrite: bool = False,
                         options: dict | None = None) -> RunResult:
    """Run (or resume) every session and write the outputs into `out` (`overwrite`: over a run there;
    `options`: the command's, kept in the header for `--resume`)."""
    protocol, cast = lineup(worlds, models, config, agents)
    out = Path(out)
    log = RunLog(out, config=config.identity(protocol, cast),
                 world=protocol.world_identity(worlds, name or worlds[0].name), resume=resume,
                 overwrite=report.OUTPUTS if overwrite else None, options=options)
    if progress is not None:  # the display reads the log's tally: the counts report.md states
        progress.attach(log.tally, outputs.noun(protocol.name))
        log.watchers.append(progress.event)
    cache = ResponseCache(cache_dir) if cache_dir else None
    rt = Runtime(log, cache=cache, max_connections=config.max_connections, retry=config.retry)
    with session_outcome(log, cache):
        records = await cast.run(rt, out)
    stats = rt.stats.as_dict()
    log.emit({"type": "stats", "session": log.session, **stats})
    log.close("success")
    if cache is not None:
        cache.close()
    return RunResult(out=out, trajectories=records, summary=outputs.write_run_outputs(out), stats=stats)
