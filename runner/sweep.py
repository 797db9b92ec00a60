"""`worldspec sweep PLAN.toml --out DIR`: every cell of a plan run as `worldspec run` runs it.

A plan names worlds (files, folders, bundled names) and the systems and settings to run on
each; the sweep is the product of its lists:

    worlds = ["demo", "worlds/oracle/code"]     # required
    agents = ["oracle", "manual"]               # built-in agents, one cell each
    models = ["openai/gpt-4o-mini"]             # litellm models, one cell each
    seeds = [0, 1]                              # world seeds (parameter variants); default: the world's own
    conditions = ["autonomous"]                 # milestone worlds' conditions, one cell each
    trajectories = 3                            # n for the autonomous condition
    preset = "20@2"                             # turn@shot worlds: the Oracle setting (one per sweep)
    [run]                                       # any other `worldspec run` option, by its long name
    judge = "keyword"

A cell is one `worldspec run` in a process of its own (DIR/cells/NAME), with the same log,
resume and outputs as the command: a finished cell is reported, not run again; an
unfinished one continues with --resume. So a sweep killed at any point and started again
finishes with the same results, no cell counted twice. Then `DIR/summary.json` holds one
`results` row per world, system, condition and seed (each cell's rows with `seed` and
`cell` added, in `run`'s row shape) and `DIR/report.md` each cell's table under its
settings, never a mean across settings.

Executors: `local` runs cells in a process pool of `--jobs` (default: the cores); `ray`
submits each cell as a Ray task to a cluster (`--ray-address`; default a local one started
for the sweep), the optional extra `pip install -e ".[ray]"`. Model traffic stays bounded
per model across the whole sweep: each of a model's cells gets `--max-connections`
divided by the number of cells that may run at once (at least one connection each).
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import importlib
import itertools
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import attrs
import click

from worldspec.commands import BadInput, guarded
from worldspec.safejson import loads as json_loads

from . import outputs
from .protocols import PROTOCOLS

PLAN_KEYS = {"worlds", "agents", "models", "seeds", "conditions", "trajectories", "preset", "run"}
# `worldspec run` options a plan may not set in [run]: the sweep sets them per cell
OWN_OPTIONS = {"agent", "model", "seed", "condition", "out", "resume", "overwrite", "trajectories", "preset"}
MAX_PLAN_BYTES = 1_000_000
MAX_CELLS = 10_000


class PlanError(ValueError):
    """A plan the sweep cannot run (the message says which key and what to write)."""


@attrs.frozen
class Cell:
    """One `worldspec run`: a world under one system, condition and seed."""

    world: str
    system: str  # "agent:NAME" or "model:ID"
    condition: str | None
    seed: int | None

    @property
    def name(self) -> str:
        """The cell's folder name: readable, and unique by a digest of its settings."""
        kind, _, who = self.system.partition(":")
        base = "-".join(x for x in (Path(self.world.rstrip("/")).stem, who.replace("/", "_"), self.condition,
                                     None if self.seed is None else f"s{self.seed}") if x)
        digest = hashlib.sha256(json.dumps(attrs.astuple(self)).encode()).hexdigest()[:8]
        return f"{base}-{digest}"[:120]


@attrs.frozen
class Plan:
    """A parsed plan: the cells and the options every cell shares."""

    cells: tuple[Cell, ...]
    trajectories: int | None
    preset: str | None
    options: tuple[tuple[str, object], ...]  # [run] table, in order


def _list(table: dict, key: str, kind, default) -> list:
    value = table.get(key, default)
    if not isinstance(value, list) or not all(isinstance(v, kind) and not isinstance(v, bool) for v in value):
        raise PlanError(f"{key} must be a list of {kind.__name__}s, e.g. {key} = {json.dumps(default or ['x'])}")
    return value


def read_plan(path: str) -> Plan:
    """The plan file at path (TOML), checked: a PlanError names the key at fault."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_PLAN_BYTES + 1)
    except OSError as e:
        raise PlanError(f"cannot read the plan {path}: {e.strerror or e}") from None
    if len(data) > MAX_PLAN_BYTES:
        raise PlanError(f"the plan {path} is over {MAX_PLAN_BYTES:,} bytes; a plan lists names, not data")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise PlanError(f"the plan {path} is not TOML: {e}") from None
    unknown = sorted(set(table) - PLAN_KEYS)
    if unknown:
        raise PlanError(f"unknown plan key(s) {', '.join(unknown)}; the keys are {', '.join(sorted(PLAN_KEYS))}")
    worlds = _list(table, "worlds", str, [])
    if not worlds:
        raise PlanError('a plan needs worlds = ["demo", ...] (files, folders or bundled names)')
    agents, models = _list(table, "agents", str, []), _list(table, "models", str, [])
    seeds = _list(table, "seeds", int, []) or [None]
    conditions = _list(table, "conditions", str, []) or [None]
    trajectories = table.get("trajectories")
    if trajectories is not None and (not isinstance(trajectories, int) or isinstance(trajectories, bool)
                                     or trajectories < 1):
        raise PlanError("trajectories must be a whole number of at least 1")
    preset = table.get("preset")
    if preset is not None and not isinstance(preset, str):
        raise PlanError('preset must be a string such as "20@2"')
    options = table.get("run", {})
    if not isinstance(options, dict):
        raise PlanError("[run] must be a table of `worldspec run` options, e.g. [run] then judge = \"keyword\"")
    clash = sorted(k for k in options if k.replace("_", "-") in {o.replace("_", "-") for o in OWN_OPTIONS})
    if clash:
        raise PlanError(f"[run] may not set {', '.join(clash)}: the plan's own keys say it per cell")
    systems = [f"agent:{a}" for a in agents] + [f"model:{m}" for m in models] or [None]
    cells = [Cell(w, s or "agent:", c, seed) for w, s, c, seed in itertools.product(worlds, systems, conditions,
                                                                                     seeds)]
    if len(cells) > MAX_CELLS:
        raise PlanError(f"the plan has {len(cells):,} cells; at most {MAX_CELLS:,}")
    return Plan(tuple(cells), trajectories, preset, tuple(options.items()))


def cell_args(plan: Plan, cell: Cell, out: Path, connections: int | None) -> list[str]:
    """The `worldspec run` arguments of one cell."""
    args = ["run", cell.world, "--out", str(out), "--quiet"]
    kind, _, who = cell.system.partition(":")
    if kind == "agent" and who:
        args += ["--agent", who]
    elif kind == "model":
        args += ["--model", who]
    if cell.condition:
        args += ["--condition", cell.condition]
    if cell.seed is not None:
        args += ["--seed", str(cell.seed)]
    if plan.trajectories is not None:
        args += ["--trajectories", str(plan.trajectories)]
    if plan.preset:
        args += ["--preset", plan.preset]
    for key, value in plan.options:
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            for v in value:
                args += [flag, str(v)]
        else:
            args += [flag, str(value)]
    if kind == "model" and connections is not None and not any(k.replace("_", "-") == "max-connections"
                                                               for k, _ in plan.options):
        args += ["--max-connections", str(connections)]
    if (out / "log.jsonl").exists():
        args.append("--resume")  # a finished run says so and exits 0; an unfinished one continues
    return args


def run_cell(args: list[str], env: dict | None = None) -> tuple[int, str]:
    """Run one cell as its own `worldspec run` process: (exit status, the end of what it said)."""
    p = subprocess.run([sys.executable, "-c", "from worldspec.cli import main; main()", *args],
                       capture_output=True, text=True, env={**os.environ, **(env or {})})
    return p.returncode, (p.stdout + p.stderr)[-2000:]


def execute(jobs: list[list[str]], executor: str, workers: int, ray_address: str | None, say) -> list:
    """(exit status, output) of every cell's arguments, in order, run by the chosen executor."""
    if executor == "ray":
        ray = importlib.import_module("ray")  # optional extra: only a ray sweep loads it
        started = not ray.is_initialized()
        if started:
            ray.init(address=ray_address, include_dashboard=False, log_to_driver=False,
                     num_cpus=None if ray_address else workers)
        try:
            remote = ray.remote(num_cpus=1)(run_cell)
            refs = [remote.remote(a) for a in jobs]
            results = [None] * len(refs)
            pending = {r: i for i, r in enumerate(refs)}
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                i = pending.pop(done[0])
                results[i] = ray.get(done[0])
                say(i, results[i])
            return results
        finally:
            if started:
                ray.shutdown()
    results = [None] * len(jobs)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:  # each cell is its own process
        futures = {pool.submit(run_cell, a): i for i, a in enumerate(jobs)}
        for f in concurrent.futures.as_completed(futures):
            i = futures[f]
            results[i] = f.result()
            say(i, results[i])
    return results


def cell_summary(cell: Cell, folder: Path) -> dict | None:
    """A finished cell's summary.json, its results rows with `seed` and `cell` added (None: none to read)."""
    try:
        summary = json_loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or not isinstance(summary.get("results"), list):
        return None
    summary["results"] = [{**r, "seed": cell.seed, "cell": folder.name} for r in summary["results"]
                          if isinstance(r, dict)]
    return summary


def combined_report(plan: Plan, out: Path, outcomes: list) -> dict:
    """DIR/summary.json and DIR/report.md from every cell's outputs."""
    results, cells, lines = [], [], ["# worldspec sweep", ""]
    for cell, (code, said) in zip(plan.cells, outcomes):
        folder = out / "cells" / cell.name
        summary = cell_summary(cell, folder) if code in (0, 4) else None
        protocol = summary.get("protocol") if summary else None
        results += summary["results"] if summary else []
        cells.append({"cell": cell.name, "world": cell.world, "system": cell.system, "condition": cell.condition,
                      "seed": cell.seed, "exit": code, "protocol": protocol,
                      "valid": bool(summary and (summary.get("validity") or {}).get("valid"))})
        head = f"## {cell.world} · {cell.system.partition(':')[2] or 'built-in agents'}" + \
               (f" · {cell.condition}" if cell.condition else "") + \
               (f" · seed {cell.seed}" if cell.seed is not None else "")
        lines += [head, ""]
        if summary and protocol in PROTOCOLS:
            lines += outputs.headline(summary) + [""]
        else:
            lines += [f"did not finish (exit {code}): `{said.strip().splitlines()[-1] if said.strip() else ''}`", ""]
    summary = {"command": "sweep", "cells": cells, "results": results,
               "complete": all(c["exit"] in (0, 4) and c["protocol"] for c in cells),
               "valid": all(c["valid"] for c in cells)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "report.md").write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return summary


@click.command("sweep")
@click.argument("plan_path", metavar="PLAN.toml", type=click.Path(dir_okay=False))
@click.option("--out", required=True, type=click.Path(file_okay=False),
              help="The sweep's folder: cells/NAME per cell, summary.json, report.md (run again to resume).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: a pool of processes on this machine; ray: Ray tasks on a cluster (extra [ray]).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Cells run at once (default: the machine's cores; with ray, the cluster's).")
@click.option("--ray-address", default=None, metavar="ADDR",
              help="An existing Ray cluster (ray://HOST:10001 or auto); default: a local one for the sweep.")
@click.option("--max-connections", type=click.IntRange(min=1), default=16, show_default=True,
              help="Requests in flight at once per model across the whole sweep (split among its cells).")
@guarded
def sweep(plan_path, out, executor, jobs, ray_address, max_connections):
    """Run every cell of PLAN.toml (worlds x systems x conditions x seeds) as `worldspec run` runs it.

    Each cell is one `worldspec run` with its own log in OUT/cells/NAME; a
    finished cell is kept, an unfinished one resumed, so a sweep stopped at any
    point finishes when started again, with the same results. OUT/summary.json
    has one results row per world, system, condition and seed (`seed` a key);
    OUT/report.md each cell's table, never a mean across settings.

    \b
    A plan:
      worlds = ["demo", "worlds/oracle/code"]
      agents = ["oracle", "manual"]
      seeds = [0, 1]
    \b
    Examples:
      worldspec sweep plan.toml --out runs/sweep
      worldspec sweep plan.toml --out runs/sweep --executor ray --ray-address auto
    """
    try:
        plan = read_plan(plan_path)
    except PlanError as e:
        raise BadInput(f"{plan_path}: {e}") from None
    if executor == "ray":
        try:
            importlib.import_module("ray")
        except ImportError:
            raise BadInput('--executor ray needs Ray: pip install -e ".[ray]" (or pip install ray)') from None
    workers = jobs or os.cpu_count() or 1
    root = Path(out)
    (root / "cells").mkdir(parents=True, exist_ok=True)
    per_model = max(1, max_connections // min(workers, max(1, len(plan.cells))))
    args = [cell_args(plan, c, root / "cells" / c.name, per_model) for c in plan.cells]
    total = len(args)
    click.echo(f"sweep: {total} cell(s), {workers} at once ({executor})", err=True)
    finished = [0]

    def say(i, result):
        finished[0] += 1
        code, _ = result
        state = {0: "ok", 4: "finished, not valid"}.get(code, f"exit {code}")
        click.echo(f"[{finished[0]}/{total}] {plan.cells[i].name}: {state}", err=True)

    outcomes = execute(args, executor, workers, ray_address, say)
    summary = combined_report(plan, root, outcomes)
    failed = [c for c in summary["cells"] if c["exit"] not in (0, 4)]
    click.echo(f"wrote {root}/summary.json and report.md: {total - len(failed)} of {total} cells finished")
    if failed:
        for c in failed[:10]:
            click.echo(f"  {c['cell']}: exit {c['exit']} (its log: {root}/cells/{c['cell']}/)", err=True)
        raise SystemExit(1 if all(c["exit"] != 2 for c in failed) else 2)
