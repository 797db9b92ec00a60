"""What the `worldspec` commands share, wherever they are defined (worldspec/cli.py, worldspec/play.py,
worldspec/importer.py, runner/cli.py, author.py, view.py, sweep.py): exit codes, BadInput, `guarded` (spec
errors are exit 2, internal bugs exit 3, one readable line each), finding and loading a world through the
sandbox, the --seed and --no-cache options, and `check`'s certification under a deadline.

worldspec/cli.py looks most commands up lazily by name; they import this module, never cli.py, so the
lazy command table makes no import cycle.
"""
from __future__ import annotations

import difflib
import functools
import os
import sys

import click

from worldspec.compiler import resolve_world_path, worldcache
from worldspec.diagnostics import SpecError, SpecErrors
from worldspec.runner import sandbox

EXIT_PROBLEMS, EXIT_INPUT, EXIT_INTERNAL, EXIT_INVALID = 1, 2, 3, 4


class BadInput(click.ClickException):
    """A request that cannot run, said in one paragraph (exit 2)."""

    exit_code = EXIT_INPUT


def guarded(fn):
    """Turn spec errors into exit 2 and internal bugs into exit 3 with one readable line."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (SpecError, SpecErrors, sandbox.RemoteSpecError) as e:
            click.echo(e.render(), err=True)
            sys.exit(EXIT_INPUT)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except BrokenPipeError:  # the reader went away (`worldspec manual aliencode | head`): not an error
            quiet_stdout()
            sys.exit(0)
        except OSError as e:  # the environment, not worldspec: say which file and why
            if os.environ.get("WORLDSPEC_DEBUG"):
                raise
            where = f" {e.filename}" if e.filename else ""
            click.echo(f"worldspec: cannot go on:{where}: {e.strerror or e}. Nothing was lost that is "
                       "not in the files written so far (a run continues with --resume).", err=True)
            sys.exit(EXIT_INTERNAL)
        except Exception as e:  # noqa: BLE001 - the last line of defence for users
            if os.environ.get("WORLDSPEC_DEBUG"):
                raise
            click.echo(f"worldspec: internal error ({type(e).__name__}: {e}). This is a bug in worldspec; "
                       f"rerun with WORLDSPEC_DEBUG=1 for details.", err=True)
            sys.exit(EXIT_INTERNAL)
    return wrapper


def quiet_stdout() -> None:
    """Point standard output at /dev/null, so that flushing it at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def bundled_names() -> list[str]:
    """The names of the bundled worlds (`demo`, `aliencode`, ...)."""
    folder = os.path.dirname(resolve_world_path("demo"))
    try:
        return sorted(f[: -len(".world")] for f in os.listdir(folder) if f.endswith(".world"))
    except OSError:
        return []


def world_path(world: str) -> str:
    """The file of WORLD (a path or a bundled world's name); a bad name is a usage error (with a guess)."""
    path = resolve_world_path(world)
    if not os.path.exists(path):
        close = difflib.get_close_matches(world.removesuffix(".world"), bundled_names(), n=1, cutoff=0.6)
        guess = f" Did you mean {close[0]!r}?" if close else ""
        raise click.BadParameter(f"no world file {world!r} (and no bundled world of that name; see "
                                 f"`worldspec list`).{guess}", param_hint="WORLD")
    return path


def load(world: str, seed: int | None):
    """The compiled world named WORLD, remembered by the sandbox so its workers can compile it too."""
    return sandbox.load(world_path(world), seed)


seed_option = click.option("--seed", type=int, default=None,
                           help="Draw the world's parameters from this seed instead of the declared one "
                                "(a fresh variant of the world).")


def bypass_world_cache(ctx, param, value) -> None:
    if value:  # the environment variable reaches the sandbox's workers and `sweep`'s runs as well
        worldcache.disable_for_this_process_and_children()


def no_cache_option(name: str = "--no-cache"):
    """The option that compiles (and certifies) worlds afresh, bypassing the world cache (docs/cache.md)."""
    return click.option(name, "no_world_cache", is_flag=True, expose_value=False, is_eager=True,
                        callback=bypass_world_cache,
                        help="Compile worlds afresh: read and write nothing in the world cache (test answers, "
                             "game optima, certification reports; docs/cache.md). WORLDSPEC_NO_CACHE=1 does "
                             "the same.")


def certification(path: str, seed: int | None, say=None, timeout: float | None = None,
                  option: str = "--timeout", jobs: int | None = None) -> tuple[dict, str | None]:
    """(report, note): `check`'s certification of a file or folder; an overrun is the report's one problem,
    naming OPTION, the deadline's option of the command that asked (`check --timeout`, `author --check-timeout`).
    A spec that does not compile raises its diagnostic (SpecError, SpecErrors, sandbox.RemoteSpecError)."""
    try:
        return sandbox.certify_once(path, seed, say, timeout, jobs=jobs)
    except sandbox.Overrun as e:
        problem = f"certification {e.said}; a spec's code must finish (raise {option} for a slow machine)"
        return {"world": path, "problems": [problem], "overrun": True}, None
