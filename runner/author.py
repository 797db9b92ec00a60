"""`worldspec author`: a model drafts a world; the compiler and certifier steer it to a certified spec.

The loop and its transcript are in authoring.py; this module is the command: its options (the
model options are `worldspec run`'s own, options.RUN_OPTIONS), the transcript folder next to
--out (`OUT.author/`: the run log, and each round's prompt, reply, draft and check), the files
it writes and how it ends. Exit status: 0 a certified world written to --out; 1 no draft
certified within --max-rounds (the best draft that compiles is written to --out; when none
compiled, --out is not written and the best draft stays in the transcript); 2 bad input (no
brief, an --out that exists, a transcript folder in use, a model the provider refuses or no
key for it), said in one paragraph.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys

import click

from worldspec.bounded import TooLarge
from worldspec.commands import EXIT_PROBLEMS, BadInput, guarded
from worldspec.runner import sandbox

from .authoring import (AUTHOR_KINDS, Author, AuthorSetupError, Outcome, Transcript, include_files, kind_material,
                        read_text, write_text)
from .cache import CacheError, ResponseCache
from .log import FinishedRun, RunDirError, RunLog
from .models import LitellmModel, ModelError, RetryPolicy
from .options import RUN_OPTIONS, default_cache_dir, settings_from
from .runtime import Runtime, session_outcome

MODEL_OPTIONS = ("api_base", "cache_dir", "no_cache", "temperature", "max_tokens", "reasoning_effort",
                 "model_args", "timeout", "max_retries", "retry_delay", "quiet")


def digest(text: str) -> str:
    """A short digest of a long text the log header identifies (a resume with another text is refused)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def run_options_named(names):
    """Apply the options of `worldspec run` called NAMES (one definition serves both commands)."""
    picked = [o for o in RUN_OPTIONS if o(lambda: None).__click_params__[0].name in names]

    def apply(fn):
        for option in reversed(picked):
            fn = option(fn)
        return fn
    return apply


@click.command("author")
@click.argument("brief", required=False)
@click.option("--from-file", type=click.Path(exists=True, dir_okay=False), help="Read the brief from this file.")
@click.option("--kind", type=click.Choice(sorted(AUTHOR_KINDS)), default="program", show_default=True,
              help="The kind of world to write.")
@click.option("--model", required=True, metavar="M", help="The litellm model string that writes the world.")
@click.option("--test-model", metavar="M", help="The model of the test pass (default: --model).")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="The .world file to write; the transcript goes to OUT.author/.")
@click.option("--max-rounds", default=6, show_default=True, type=click.IntRange(min=1),
              help="Drafts checked at most (each after the first is a repair of the one before).")
@click.option("--extra", default=3, show_default=True, type=click.IntRange(min=0),
              help="Held-out tasks or test questions the test pass asks for once the world certifies (0: none).")
@click.option("--check-timeout", type=click.FloatRange(min=0, min_open=True), default=sandbox.Deadlines().certify,
              show_default=True, help="Seconds one draft's certification may take (past them: a problem).")
@click.option("--doc", type=click.Path(exists=True, dir_okay=False),
              help="The reference to show the model (default: the kind's doc under docs/).")
@click.option("--example", metavar="WORLD", help="The example world to show (default: a bundled one of the kind).")
@click.option("--include-dir", "include_dirs", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="A folder (inside --out's) whose .world files a draft may include; repeatable. A draft "
                   "includes nothing else.")
@click.option("--resume", is_flag=True,
              help="Continue in the existing transcript folder (replies in its log are not asked again).")
@run_options_named(MODEL_OPTIONS)
@guarded
def author(brief, from_file, kind, model, test_model, out, max_rounds, extra, check_timeout, doc, example,
           include_dirs, resume, **p):
    """Have a model write a world from BRIEF; `worldspec check` steers its drafts to a certified spec.

    The model is shown the kind's reference, one bundled world of that kind and the
    brief, and writes a complete .world file. Each draft is checked like `worldspec
    check`; its diagnostics or certification problems go back verbatim, asking for a
    corrected file, for at most --max-rounds drafts. A certified world then gets a
    test pass: --extra held-out tasks or test questions, each kept only if the world
    still certifies with it; rejected ones go back once, with the reasons, for
    corrected ones. Drafts are checked as if they stood at --out, so an `include`
    is found relative to --out's folder; a draft may include only the .world files
    of the folders named with --include-dir (none by default), never the other files
    beside --out, and a diagnostic quotes the lines of the model's own draft only.
    Model calls share `worldspec run`'s cache
    and retries (--api-base, --cache, --no-cache, --max-retries, ...).

    \b
    Exit status: 0 certified (written to --out); 1 not certified within
    --max-rounds (the best draft that compiles is written to --out); 2 bad input.

    \b
    Examples:
      worldspec author "a stack language whose manual is wrong about POP order" --model M --out worlds/mine.world
      worldspec author --from-file brief.md --kind blackbox --model M --out boxes/mine.world --max-rounds 8
      worldspec author --from-file brief.md --model M --out worlds/mine.world --resume   (after a stop)
      worldspec author "..." --model openai/my-model --api-base http://127.0.0.1:8000/v1 --out mine.world
    """
    if bool(brief) == bool(from_file):
        raise click.UsageError("give the brief as an argument or with --from-file (one of them)")
    if not os.path.basename(out):
        raise BadInput(f"--out {out!r} names no file: give the .world file to write, e.g. --out worlds/mine.world")
    if os.path.exists(out) and not resume:
        raise BadInput(f"{out} already exists; choose another --out (or --resume the authoring that wrote it)")
    try:
        brief = brief or read_text(from_file, "the brief")
        reference, example_name, example_text = kind_material(kind, doc, example)
        includes = include_files(os.path.dirname(os.path.abspath(out)), include_dirs)
    except (AuthorSetupError, TooLarge) as e:
        raise BadInput(str(e)) from None
    if not brief.strip():
        raise BadInput("the brief is empty: say what world to write")
    settings = settings_from(p)
    retry = RetryPolicy(max_attempts=max(1, p["max_retries"]), base_delay=p["retry_delay"])
    writer = LitellmModel(model, api_base=p["api_base"], settings=settings, timeout=p["timeout"])
    tester = LitellmModel(test_model, api_base=p["api_base"], settings=settings, timeout=p["timeout"]) \
        if test_model else None
    folder = out + ".author"
    config = {"command": "author", "model": model, "test_model": test_model, "kind": kind, "brief": brief,
              "max_rounds": max_rounds, "extra": extra, "settings": settings, "api_base": p["api_base"],
              "doc": digest(reference), "example": digest(example_text)}
    fresh = not os.path.exists(folder)
    try:
        cache = None if p["no_cache"] else ResponseCache(p["cache_dir"] or default_cache_dir())
        log = RunLog(folder, config=config, world={"kind": kind, "out": os.path.basename(out)}, resume=resume)
    except FinishedRun:
        raise BadInput(f"{folder} already holds this authoring, finished; --resume reads its replies again "
                       f"(no model calls), or choose another --out") from None
    except (RunDirError, CacheError) as e:
        raise BadInput(str(e)) from None
    say = (lambda line: None) if p["quiet"] else (lambda line: click.echo(line, err=True))
    runtime = Runtime(log, cache=cache, max_connections=1, retry=retry)
    session = Author(runtime, writer, kind, reference, check_timeout, say, tester, includes=includes)
    transcript = Transcript(log)
    try:
        outcome = asyncio.run(drive(session, transcript, brief, example_name, example_text, max_rounds, extra))
    except ModelError as e:
        stats = runtime.stats
        if fresh and not stats.live + stats.from_cache + stats.from_log:
            shutil.rmtree(folder, ignore_errors=True)  # nothing to keep: the same command may simply be rerun
            raise BadInput(f"the model call failed: {e}") from None
        raise BadInput(f"the model call failed: {e}. The transcript so far is in {folder}/ "
                       f"(--resume continues it).") from None
    except KeyboardInterrupt:
        click.echo(f"interrupted; continue with the same command and --resume (transcript: {folder}/)", err=True)
        sys.exit(130)
    finally:
        if cache is not None:
            cache.close()
    sys.exit(finish(outcome, session, out, folder))


async def drive(session: Author, transcript: Transcript, brief: str, example_name: str, example: str,
                max_rounds: int, extra: int) -> Outcome:
    """The draft rounds, then the test pass of a certified world; the log closed as the session ended."""
    log = transcript.log
    with session_outcome(log):
        outcome = await session.draft_rounds(brief, example_name, example, transcript, max_rounds)
        if outcome.certified and extra:
            text, check, accepted, rejected = await session.extra_items(outcome.best_text, outcome.best, extra,
                                                                        transcript)
            outcome = Outcome(outcome.rounds, check, outcome.best_round, text, tuple(accepted), tuple(rejected))
    log.emit({"type": "author_end", "certified": outcome.certified, "rounds": outcome.rounds,
              "best_round": outcome.best_round, "problems": list(outcome.best.problems),
              "accepted": len(outcome.accepted), "rejected": len(outcome.rejected),
              "calls": session.runtime.stats.as_dict(), "tokens": session.tokens()})
    log.close("success")
    return outcome


def finish(outcome: Outcome, session: Author, out: str, folder: str) -> int:
    """Write the result, say how authoring ended and what it cost; the exit status."""
    best = outcome.best
    transcript = Transcript(session.runtime.log)
    transcript.write("best.world", outcome.best_text)
    if best.compiles:
        write_text(out, outcome.best_text)
    if best.certified:
        click.echo(f"certified in {outcome.rounds} round(s): wrote {out} ({best.tasks} tasks)")
        if outcome.accepted or outcome.rejected:
            click.echo(f"test pass: {len(outcome.accepted)} held-out item(s) added, {len(outcome.rejected)} rejected "
                       f"(the replies: {folder}/items-*.md)")
    elif best.compiles:
        click.echo(f"not certified after {outcome.rounds} round(s); the best draft (round {outcome.best_round}, "
                   f"{len(best.problems)} problem(s)) is written to {out}. What still fails:")
        click.echo("\n".join(f"  - {p}" for p in best.problems))
    else:
        click.echo(f"no draft compiled in {outcome.rounds} round(s); {out} was not written. The best draft "
                   f"(round {outcome.best_round}, {len(best.problems)} diagnostic(s)) is {folder}/best.world:")
        click.echo(best.feedback())
    stats, (tin, tout) = session.runtime.stats, session.tokens()
    calls = stats.live + stats.from_cache + stats.from_log
    click.echo(f"cost: {calls} model call(s) ({stats.live} live, {stats.from_cache} from the cache, "
               f"{stats.from_log} from the transcript's log), {tin} input + {tout} output tokens, "
               f"{stats.retries} retries; transcript in {folder}/")
    return 0 if best.certified else EXIT_PROBLEMS
