"""`worldspec run` and `worldspec report` (click commands; worldspec/cli.py registers them).

litellm is never imported here: only a run with `--model` reaches it, inside
the first model call.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path

import click

from .log import RunDirError
from .models import FatalError, RetryPolicy, make_model
from .protocol import CONDITIONS


def load_world(path: str, seed: int | None = None):
    """The compiled world (tests replace this function with a fake)."""
    from worldspec.compiler import load_world as _load  # noqa: PLC0415

    return _load(path, seed=seed)


def _parse_model_args(items) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--model-arg")
        try:
            out[key.strip()] = json.loads(value)  # numbers, booleans, JSON objects
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-").lower() or "world"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "worldspec"


@click.command("run")
@click.argument("world_path", metavar="WORLD")
@click.option("--model", "models", multiple=True, metavar="M",
              help="A litellm model string (repeatable), e.g. openai/gpt-4o-mini.")
@click.option("--agent", "agents", multiple=True, metavar="A",
              help="A built-in agent (repeatable): oracle, manual, replay:DIR[#SYSTEM].")
@click.option("--api-base", help="Base URL of an OpenAI-compatible server for --model.")
@click.option("--condition", "conditions", multiple=True, type=click.Choice(CONDITIONS),
              help="Exploration condition (repeatable; default autonomous).")
@click.option("--trajectories", "-n", default=3, show_default=True,
              help="Independent autonomous trajectories per system (Best@n).")
@click.option("--control-trajectories", default=1, show_default=True,
              help="Trajectories per control condition.")
@click.option("--answers", type=int, help="Answers per task per milestone (default: the world's budget).")
@click.option("--seed", type=int, help="World seed (a parameter variant of the world).")
@click.option("--out", type=click.Path(file_okay=False), help="Run directory (default runs/WORLD-TIME).")
@click.option("--resume", is_flag=True, help="Continue a killed run in --out from its log.")
@click.option("--cache", "cache_dir", type=click.Path(file_okay=False),
              help="Response cache directory (default ~/.cache/worldspec).")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option("--max-connections", default=16, show_default=True,
              help="Requests in flight at once, per model.")
@click.option("--temperature", type=float, help="Generation setting passed to the model.")
@click.option("--max-tokens", type=int, help="Generation setting passed to the model.")
@click.option("--reasoning-effort", help="Generation setting passed to the model (e.g. high).")
@click.option("--model-arg", "model_args", multiple=True, metavar="KEY=VALUE",
              help="Any other generation setting (value parsed as JSON when it is JSON).")
@click.option("--hindsight-from", metavar="DIR[#SYSTEM]",
              help="A previous run whose best autonomous trajectory the hindsight condition replays.")
@click.option("--volume-from", metavar="DIR[#SYSTEM]",
              help="A previous run whose best trajectory sets the fixed/without-tool volume.")
@click.option("--fixed-seed", default=0, show_default=True, help="Seed of the fixed probe sequence.")
@click.option("--timeout", default=600.0, show_default=True, help="Seconds per model request.")
@click.option("--max-retries", default=8, show_default=True,
              help="Attempts per request on 429/5xx/timeouts before the answer is recorded lost.")
@click.option("--retry-delay", default=1.0, show_default=True,
              help="First backoff delay in seconds (doubles per retry, with jitter).")
@click.option("--dry-run", is_flag=True, help="Print the plan and the number of model calls; run nothing.")
@click.option("--quiet", is_flag=True, help="No progress display.")
@click.option("--turns", type=int, help="Black boxes: exploration turns (turn@shot; default: each box's budget).")
@click.option("--shots", type=int, help="Black boxes: attempts per test sample (default: each box's budget).")
@click.option("--preset", type=click.Choice(["10@1", "20@2"]), help="Black boxes: the Oracle paper's turn@shot.")
def run(world_path, models, agents, api_base, conditions, trajectories, control_trajectories,
        answers, seed, out, resume, cache_dir, no_cache, max_connections, temperature, max_tokens,
        reasoning_effort, model_args, hindsight_from, volume_from, fixed_seed, timeout,
        max_retries, retry_delay, dry_run, quiet, turns, shots, preset):
    """Run the ExplorationBench protocol on WORLD (a .world file or a bundled world's name).

    With neither --model nor --agent, runs the built-in agents oracle and
    manual (no network, no keys). Writes DIR/log.jsonl, trajectories.jsonl,
    summary.json, report.md and PNG curves. A folder of black boxes, a box or a
    game world runs its own protocol instead (turn@shot, pool play; see
    docs/oracle-worlds.md).

    \b
    Examples:
      worldspec run aliencode --out runs/builtin
      worldspec run aliencode --model openai/gpt-4o-mini -n 3 --out runs/gpt
      worldspec run demo --model openai/my-model --api-base http://127.0.0.1:8000/v1
      worldspec run aliencode --model M --condition hindsight --hindsight-from runs/gpt
      worldspec run aliencode --model M --dry-run
      worldspec run aliencode --model openai/gpt-4o-mini -n 3 --out runs/gpt --resume   (after a crash)
    """
    from .blackbox import run_command  # noqa: PLC0415 - black boxes and games have their own protocols

    if run_command(world_path, click.get_current_context().params):
        return
    from .experiment import RunConfig, plan, run_experiment  # noqa: PLC0415
    from .progress import Progress  # noqa: PLC0415

    settings = {}
    if temperature is not None:
        settings["temperature"] = temperature
    if max_tokens is not None:
        settings["max_tokens"] = max_tokens
    if reasoning_effort:
        settings["reasoning_effort"] = reasoning_effort
    settings.update(_parse_model_args(model_args))
    if not models and not agents:
        agents = ("oracle", "manual")
    if resume and not out:
        raise click.UsageError("--resume needs the --out directory of the run to continue")
    try:
        world = load_world(world_path, seed)
    except click.ClickException:
        raise
    except Exception as e:  # the compiler's diagnostics are user-facing text
        raise click.ClickException(f"cannot load {world_path}:\n{e}") from None

    config = RunConfig(
        conditions=tuple(dict.fromkeys(conditions or ("autonomous",))),
        trajectories=trajectories, control_trajectories=control_trajectories, answers=answers,
        settings=settings, api_base=api_base, world_seed=seed, hindsight_from=hindsight_from,
        volume_from=volume_from, fixed_seed=fixed_seed, max_connections=max_connections,
        retry=RetryPolicy(max_attempts=max(1, max_retries), base_delay=retry_delay))
    systems = list(models) + list(agents)
    if dry_run:
        p = plan(world, systems, config)
        click.echo(f"world {p['world']}: {p['tasks']} tasks x {p['answers']} answers, "
                   f"{p['rounds']} rounds")
        click.echo(f"{'system':<28} {'condition':<14} {'n':>3} {'explore<=':>10} "
                   f"{'milestones':>10} {'milestone calls':>16}")
        for r in p["rows"]:
            click.echo(f"{r['system']:<28} {r['condition']:<14} {r['trajectories']:>3} "
                       f"{r['exploration_calls_max']:>10} {r['milestones']:>10} "
                       f"{r['milestone_calls']:>16}")
        click.echo(f"model calls: at most {p['total_calls_max']}")
        return
    try:
        model_objs = [make_model(m, world, api_base=api_base, settings=settings, timeout=timeout)
                      for m in models]
        model_objs += [make_model(a, world, agent=True) for a in agents]
        # the config records the system actually run, so check it now
        from .experiment import validate_config  # noqa: PLC0415

        validate_config(config)
    except FatalError as e:
        raise click.ClickException(str(e)) from None
    if out is None:
        out = os.path.join("runs", f"{_slug(world.name)}-{time.strftime('%Y%m%d-%H%M%S')}")
    cache = None
    if not no_cache and any(m.cacheable for m in model_objs):
        cache = cache_dir or str(default_cache_dir())
    progress = Progress(quiet=quiet)
    try:
        with progress:
            result = asyncio.run(run_experiment(world, model_objs, config, out, resume=resume,
                                                cache_dir=cache, progress=progress))
    except (FatalError, RunDirError) as e:
        raise click.ClickException(str(e)) from None
    except KeyboardInterrupt:
        click.echo(f"interrupted; continue with: worldspec run {world_path} --out {out} --resume "
                   "(and the same options)", err=True)
        sys.exit(130)
    _echo_summary(result.summary, out)
    if not result.summary["validity"]["valid"]:
        click.echo("warning: the run is not valid (see summary.json 'validity')", err=True)
        sys.exit(3)


def _echo_summary(summary: dict, out) -> None:
    for r in summary["results"]:
        click.echo(f"{r['world']:<16} {r['system']:<24} {r['condition']:<14} best {r['best']:6.1f}  "
                   f"mean {r['mean']:6.1f}  worst {r['worst']:6.1f}  n={r['n']}  "
                   f"r*={r['best_trajectory']}")
    click.echo(f"wrote {out}/log.jsonl, trajectories.jsonl, summary.json, report.md")


@click.command("report")
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", type=click.Path(file_okay=False),
              help="Write report.md, summary.json, trajectories.jsonl and PNG curves here "
                   "(default: the run directory when one is given; otherwise print Markdown).")
@click.option("--no-plots", is_flag=True, help="Skip the PNG curves.")
def report(dirs, out, no_plots):
    """Merge run directories into the paper-style table.

    \b
    Example:
      worldspec report runs/gpt runs/claude --out runs/table
    """
    from . import report as rep  # noqa: PLC0415

    if out is None and len(dirs) == 1:
        out = dirs[0]
    try:
        _, md = rep.write_report(list(dirs), out, plots=not no_plots)
    except (FileNotFoundError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(md, nl=False)
