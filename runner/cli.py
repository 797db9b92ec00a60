"""`worldspec run` and `worldspec report` (click commands; worldspec/cli.py registers them).

Both are guarded like `check`: a spec error exits 2 with its diagnostic, a bad
option or a request that cannot run exits 2 with one paragraph, an internal
error 3 with one line; a run that finished but is not valid exits 4. litellm
is never imported here: only a run with `--model` reaches it, in its first call.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import warnings

import click

from worldspec.commands import EXIT_INVALID, BadInput, guarded, load, no_cache_option
from worldspec.compiler.suite import world_files

from . import experiment, outputs, report as reports
from .cache import CacheError, ResponseCache
from .log import FinishedRun, LogError, RunDirError, discard_unanswered, logged_options
from .endpoints import check_endpoint
from .models import FatalError, LitellmModel
from .options import config_from, default_cache_dir, default_out, run_options
from .progress import Progress
from .protocols import protocol_for


def load_worlds(target: str, seed: int | None) -> tuple[list, str]:
    """(worlds, run name): every .world file of a folder (one benchmark), or one world."""
    if os.path.isdir(target):
        paths = world_files(target)
        if not paths:
            raise BadInput(f"no .world files under {target}")
        return [load(p, seed) for p in paths], os.path.basename(os.path.normpath(target))
    world = load(target, seed)
    return [world], world.name


class Stopped(KeyboardInterrupt):
    """The run was stopped by a signal (SIGINT: Ctrl-C, or SIGTERM); `code` is the exit status it means."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def code(self) -> int:
        return 128 + self.signum  # the shell's convention: 130 for SIGINT, 143 for SIGTERM


def stop_at_once(signum, frame):
    """Outside the event loop (compiling, writing the report) a signal stops the command where it is."""
    raise Stopped(signum)


async def one_failure(run):
    """Await a run; once it has failed, sibling tasks that failed too are not reported again
    (asyncio would print each as "Task exception was never retrieved"; the command says one line).

    SIGINT and SIGTERM stop the run cleanly: the first cancels it (every session's task ends, the log
    is closed as interrupted, the cache closed; asyncio.run then waits for its threads and the sandbox's
    workers are stopped at exit), and it ends in `Stopped`; a second signal stops at once. A model call
    cancelled while litellm's thread was making its coroutine leaves that coroutine unawaited: the
    RuntimeWarning Python would print about it says nothing about the run, so it is silenced then."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    stopped: list[int] = []

    def handler(loop, context):
        if "never retrieved" not in context.get("message", "") or os.environ.get("WORLDSPEC_DEBUG"):
            loop.default_exception_handler(context)

    def on_signal(signum, frame):
        if stopped:
            raise Stopped(signum)
        stopped.append(signum)
        warnings.filterwarnings("ignore", message=r"coroutine .* was never awaited", category=RuntimeWarning)
        task.cancel()
        loop.call_soon_threadsafe(lambda: None)  # wake the loop should it be waiting

    loop.set_exception_handler(handler)
    main = threading.current_thread() is threading.main_thread()
    before = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
    try:
        return await run
    except asyncio.CancelledError:
        if stopped:
            raise Stopped(stopped[0]) from None
        raise
    finally:
        for sig, h in before.items():
            signal.signal(sig, h)


def said_of(e: Stopped) -> str:
    return {signal.SIGINT: "interrupted (SIGINT)", signal.SIGTERM: "terminated (SIGTERM)"}.get(e.signum, "stopped")


@contextlib.contextmanager
def stopping_on_signals():
    """SIGINT and SIGTERM raise Stopped for the command's length (one_failure handles them inside the run);
    only the main thread may set handlers (a command run on another thread keeps Python's)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.signal(sig, stop_at_once) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, h in before.items():
            signal.signal(sig, h)


# Options a resumed run takes from its log when the command does not give them again (not --out,
# --resume, --overwrite, --dry-run or --quiet, which say what this command does).
NOT_KEPT = ("out", "resume", "dry_run", "quiet")
SECRET_WORDS = ("key", "token", "secret", "password")


def kept_options(p: dict) -> dict:
    """The options a new log's header keeps for --resume (a --model-arg naming a key or token is not kept)."""
    out = {}
    for k, v in p.items():
        if k in NOT_KEPT:
            continue
        if k == "model_args":
            v = [a for a in v or () if not any(w in a.partition("=")[0].lower() for w in SECRET_WORDS)]
        out[k] = list(v) if isinstance(v, tuple) else v
    return out


def options_to_resume(ctx: click.Context, p: dict, logged: dict) -> dict:
    """The logged options the command did not give again (the ones typed win)."""
    out = {}
    for k, v in logged.items():
        if k not in p or k in NOT_KEPT:
            continue
        if ctx.get_parameter_source(k) not in (click.core.ParameterSource.DEFAULT, None):
            continue
        out[k] = tuple(v) if isinstance(v, list) else v
    return out


@click.command("run")
@click.argument("world_path", metavar="WORLD")
@run_options
@click.option("--overwrite", is_flag=True,
              help="Start afresh over a run already in --out (its log and outputs are removed).")
@no_cache_option("--no-world-cache")  # --no-cache is the response cache's (runner/options.py)
@guarded
def run(world_path, overwrite, **params):
    """Run WORLD (a .world file, a bundled world's name, or a folder of black boxes) under its protocol.

    A program or proof world runs the ExplorationBench milestone protocol; a black
    box, game box or folder of them the Oracle protocol (turn@shot); a game world
    with an opponent pool plays the pool (docs/oracle-worlds.md). With neither
    --model nor --agent, the built-in agents play (no network, no keys). Writes
    DIR/log.jsonl, trajectories.jsonl, summary.json, report.md (and PNG curves).

    Exit status: 0 a valid run, 2 bad input (spec, options, a run directory that
    cannot be created, or a model the provider refuses), 3 internal error or a
    failing environment (a full disk: the log stays resumable), 4 the run
    finished but is not valid (answers lost to infrastructure; --resume repairs it),
    130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM: the log is closed as
    interrupted and the command to continue it with --resume is printed.

    Model requests time out after --timeout seconds and are tried --max-retries
    times in all (429, 5xx, timeouts), so one unreachable provider costs minutes.
    A probe, answer or rule report whose evaluation overruns its deadline (the
    sandbox's worker is stopped) is feedback, a zero and a wrong report.

    \b
    Examples:
      worldspec run aliencode --out runs/builtin
      worldspec run aliencode --model openai/gpt-4o-mini -n 3 --out runs/gpt
      worldspec run demo --model openai/my-model --api-base http://127.0.0.1:8000/v1
      worldspec run aliencode --model M --condition hindsight --hindsight-from runs/gpt
      worldspec run aliencode --model M --dry-run
      worldspec run aliencode --model openai/gpt-4o-mini -n 3 --out runs/gpt --resume   (after a crash)
      worldspec run aliencode --out runs/builtin --overwrite   (run it again from the start)
      worldspec run demo --agent explorer --agent manual --out runs/explorer
      worldspec run worlds/oracle --preset 10@1 --out runs/oracle

    \b
    Conditions (--condition, milestone worlds; ExplorationBench A.4):
      autonomous    the model chooses its own probes (the default)
      hindsight     a best trajectory's probes replayed live; the model writes notes between them
      fixed         probes from the world's generator (fixed seed), at a reference trajectory's volume
      without-tool  one model turn per round, with no tool and no feedback
      direct        no exploration: each milestone asks again from the manual alone
      open-book-m0  the rules disclosed after the manual, acknowledged, then the tests (O@M0)
      a4-open-book  the rules disclosed after the best autonomous trajectory, then the tests (A4+O)

    A finished run already in --out is reported, not run again (exit 0); an
    unfinished one asks for --resume or --overwrite. Then `worldspec view DIR`
    shows the run as a page, `worldspec report DIR...` merges runs.
    """
    with stopping_on_signals():
        try:
            run_command(world_path, overwrite, params)
        except Stopped as e:  # before the run's log was opened (checking the options, compiling the world)
            click.echo(f"{said_of(e)} before the run started; nothing was written", err=True)
            sys.exit(e.code)


def run_command(world_path, overwrite, params):
    """`worldspec run` once its signals are handled (run's docstring is the command's help)."""
    p = params
    if p["resume"] and not p["out"]:
        raise click.UsageError("--resume needs the --out directory of the run to continue")
    if p["resume"] and overwrite:
        raise click.UsageError("--resume continues the run in --out and --overwrite replaces it: pass one")
    if p["resume"]:
        try:
            p.update(options_to_resume(click.get_current_context(), p, logged_options(p["out"])))
        except LogError as e:
            raise BadInput(str(e)) from None
    config = config_from(p)
    models = [LitellmModel(m, api_base=p["api_base"], settings=config.settings, timeout=p["timeout"])
              for m in p["models"]]
    cache = None
    if models and not p["dry_run"]:
        try:  # the cache, keys and endpoint are said before the world compiles (seconds) or anything is written
            if not p["no_cache"] and any(m.cacheable for m in models):
                cache = p["cache_dir"] or str(default_cache_dir())
                ResponseCache(cache).close()  # an unusable cache directory is bad input, said before the run
            for m in models:
                m.check_environment()
            check_endpoint(p["api_base"])
        except (FatalError, CacheError) as e:
            raise BadInput(str(e)) from None
    worlds, name = load_worlds(world_path, p["seed"])
    out = p["out"] or default_out(name)
    try:
        protocol = protocol_for(worlds)
        agents = p["agents"] or (() if models else protocol.default_agents(worlds))
        if p["dry_run"]:
            plan = experiment.plan(worlds, models, config, agents)
            click.echo(plan.title)
            click.echo("\n".join(reports.table(plan.head, plan.rows)))
            click.echo(f"model calls: at most {plan.max_calls}" + (f" ({plan.note})" if plan.note else ""))
            return
        fresh = not os.path.exists(out)
        try:
            with Progress(quiet=p["quiet"]) as progress:
                result = asyncio.run(one_failure(experiment.run_experiment(
                    worlds, models, config, out, agents=agents, name=name, resume=p["resume"],
                    cache_dir=cache, progress=progress, overwrite=overwrite, options=kept_options(p))))
        except FatalError:
            if not p["resume"]:  # when nothing was charged, --out is left as it was: the same command runs again
                discard_unanswered(out, created=fresh)
            raise
    except FinishedRun as e:
        summary = outputs.write_report([out], None)[0]
        click.echo(str(e))
        click.echo("\n".join(outputs.headline(summary)))
        sys.exit(0 if summary["validity"]["valid"] else EXIT_INVALID)
    except (FatalError, RunDirError, CacheError) as e:
        raise BadInput(str(e)) from None
    except Stopped as e:
        if not p["resume"] and discard_unanswered(out, created=fresh):
            click.echo(f"{said_of(e)} before anything was answered; nothing was kept (the same command starts "
                       "afresh)", err=True)
        else:
            click.echo(f"{said_of(e)}; continue with: worldspec run {world_path} --out {out} --resume (the log "
                       "keeps the other options)", err=True)
        sys.exit(e.code)
    click.echo("\n".join(outputs.headline(result.summary)))
    cached = result.summary["validity"].get("cached_replies", 0)
    if cached:
        click.echo(f"{cached} model replies came from the response cache ({cache}), not the model; "
                   "--no-cache samples the model afresh")
    click.echo(f"wrote {out}/log.jsonl, {reports.written(result.summary)}")
    if not result.summary["validity"]["valid"]:
        click.echo("warning: the run finished but is not valid (see summary.json 'validity'); "
                   "--resume asks again what was lost", err=True)
        sys.exit(EXIT_INVALID)


@click.command("report")
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", type=click.Path(file_okay=False),
              help="Write report.md, summary.json, trajectories.jsonl and PNG curves here (default: a new "
                   "folder report-NAME-TIME beside the first run). A run's own folder only with --overwrite.")
@click.option("--overwrite", is_flag=True, help="Allow --out to be a run's own folder (its outputs are rewritten).")
@click.option("--no-plots", is_flag=True, help="Skip the PNG curves.")
@guarded
def report(dirs, out, overwrite, no_plots):
    """Merge run directories (of one protocol) into the paper-style tables.

    Prints the Markdown report and writes the files (summary.json in the shape
    `run` writes) into a new folder, never over a run's own files unless
    --out names it and --overwrite is given.

    \b
    Examples:
      worldspec report runs/gpt
      worldspec report runs/gpt runs/claude --out runs/table
      worldspec report runs/gpt --out runs/gpt --overwrite   (rewrite the run's own outputs)
    """
    if out is None:
        first = os.path.abspath(dirs[0])
        out = os.path.join(os.path.relpath(os.path.dirname(first)),
                           os.path.basename(default_out("report-" + os.path.basename(first))))
    elif os.path.exists(os.path.join(out, "log.jsonl")) and not overwrite:
        raise BadInput(f"{out} is a run's own folder; its report.md, summary.json and plots are rewritten only "
                       "with --overwrite (or choose another --out)")
    try:
        summary, md = outputs.write_report(list(dirs), out, plots=not no_plots)
    except (FileNotFoundError, reports.ReportError) as e:
        raise BadInput(str(e)) from None
    click.echo(md, nl=False)
    click.echo(f"wrote {out}/{reports.written(summary)}", err=True)
