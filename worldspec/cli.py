"""The `worldspec` command line: list, check, manual, probe, play, run, report, view, import.

Exit status, for every command (the README has the same table):

  0  ok
  1  `check` found problems (certification that overran its deadline is one)
  2  bad input: a spec error (with its located diagnostic), a bad option, or a
     request that cannot run (an unknown agent, a run directory that cannot be
     created or is in use, a model the provider refuses)
  3  internal error: a bug in worldspec, reported in one line (WORLDSPEC_DEBUG=1
     shows the traceback), or the environment failed under it (a full disk),
     reported with the file and the reason
  4  `run` finished but the run is not valid (answers lost to infrastructure)

`check` and `probe` evaluate in the runner's sandbox (runner/sandbox.py: a worker
process under a wall-clock deadline, since a spec or a probe may hold code that no
step limit reaches). `play`, `run`, `report` and `view` need the runner's protocols and are
looked up only when invoked (LAZY), so the other commands never load them or matplotlib.
`import` (worldspec/importer.py) is looked up lazily too: only a conversion needs it, and so is
`author` (runner/author.py: a model drafts a world, `check` steers it).
"""
from __future__ import annotations

import functools
import importlib
import json
import os
import sys
import tempfile
import textwrap
import threading
import time

import click
from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner

from worldspec import __version__
from worldspec.bounded import TooLarge, read_stream
# the exit codes and BadInput are the commands' (worldspec/commands.py); scripts and tests read them here too
from worldspec.commands import (EXIT_INPUT, EXIT_INTERNAL, EXIT_INVALID, EXIT_PROBLEMS, BadInput,  # noqa: F401
                                certification, guarded, load, no_cache_option, seed_option, world_path)
from worldspec.compiler import load_world, resolve_world_path
from worldspec.compiler.suite import world_files
from worldspec.diagnostics import SpecError, SpecErrors
from worldspec.headers import read_header
from worldspec.lint import spec_warnings
from worldspec.parser import load_spec
from worldspec.runner import sandbox

MAX_STDIN_BYTES = 1_000_000  # a program on standard input (`probe -`); the longest a kind accepts is 20,000 characters


def plural(n: int, noun: str) -> str:
    """"1 rule", "2 rules"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


class _Group(click.Group):
    """Resolves the commands that need the runner lazily (it imports more)."""

    LAZY = {"play": "worldspec.play:play", "run": "worldspec.runner.cli:run", "report": "worldspec.runner.cli:report",
            "import": "worldspec.importer:import_group", "author": "worldspec.runner.author:author",
            "view": "worldspec.runner.view:view", "sweep": "worldspec.runner.sweep:sweep"}

    # `--help` lists these without importing them (the runner's commands load matplotlib and the
    # protocols: 0.6 s); tests/test_cli.py checks each line against the command's own docstring.
    SHORT_HELP = {
        "play": "Explore WORLD yourself: probe, read the manual, list tasks, submit answers.",
        "run": "Run WORLD (a .world file, a bundled world's name, or a folder of black boxes) under its protocol.",
        "report": "Merge run directories (of one protocol) into the paper-style tables.",
        "import": "Convert a benchmark's published data file into .world files (then certify them).",
        "author": "Have a model write a world from BRIEF; `worldspec check` steers its drafts to a certified spec.",
        "view": "Write a run as one self-contained HTML page and print its path.",
        "sweep": "Run every cell of PLAN.toml (worlds x systems x conditions x seeds) as `worldspec run` runs it."}

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.LAZY))

    def format_commands(self, ctx, formatter):
        """The command list, with the lazy commands' lines from SHORT_HELP (nothing imported)."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.LAZY:
                rows.append((name, self.SHORT_HELP[name]))
                continue
            cmd = super().get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=200)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_command(self, ctx, name):
        if name in self.LAZY:
            module, attr = self.LAZY[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="worldspec")
def main():
    """Define alien worlds and measure how well AI systems explore them.

    \b
    Start here:
      worldspec list                          the bundled worlds
      worldspec manual demo                   the (flawed) manual an agent reads
      worldspec probe demo "EMIT(100)"        run one probe, as an agent would
      worldspec check demo                    certify a world
      worldspec run demo --out runs/demo      the exploration protocol, built-in agents
      worldspec view runs/demo                the run as one HTML page (runs/demo/view.html)
      worldspec play demo                     explore a world yourself
      worldspec author "BRIEF" --model M --out mine.world
                                              a model writes a world; check steers it
    """


@main.command("list")
@click.argument("folder", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--compile", "compile_", is_flag=True,
              help="Compile each world and add its rule, herring and task counts (slower: seconds per world).")
@no_cache_option()
@guarded
def list_worlds(folder, compile_):
    """List world files: the bundled ones, or those under FOLDER.

    Each line is read from the world's header lines (name, kind, family and
    difficulty for boxes, summary), compiling nothing; `--compile` compiles
    each world too, adds its counts and says which do not compile.

    \b
    Example:
      worldspec list
      worldspec list my/worlds --compile
    """
    root = folder or os.path.dirname(resolve_world_path("demo"))
    paths = world_files(root)
    if not paths:
        click.echo(f"no .world files under {root}")
        return
    for p in paths:
        try:
            head = read_header(p)
            if head is None:
                click.echo(f"{os.path.relpath(p)}: not a world (it does not start with a world header)")
                continue
            box = "/".join(x for x in (head.family, head.difficulty) if x)
            line = f"{os.path.relpath(p)}: {head.name} ({head.kind}){' ' + box if box else ''}"
            if compile_:
                w = load_world(p)
                line += (f" - {plural(len(w.rules), 'rule')}, {plural(len(w.herrings), 'herring')}, "
                         f"{plural(len(w.tasks), 'task')}")
            click.echo(f"{line}. {head.summary}".rstrip())
        except (SpecError, SpecErrors) as e:
            first = e.render().splitlines()[0]
            click.echo(f"{os.path.relpath(p)}: does not compile: {first}")


@main.command()
@click.argument("world")
@seed_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (for scripts and CI).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=sandbox.Deadlines().certify,
              show_default=True, help="Seconds certification of one world may take (a folder gets this much per "
                                      "world); past them it is stopped (exit 1).")
@click.option("--learnability", is_flag=True, help="Also play the built-in explorer within the world's budget "
                                                    "and print its accuracy (program worlds, proof worlds, black "
                                                    "boxes and game boxes; judge worlds have none; seconds to a "
                                                    "minute).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="For a folder: how many worlds are certified at once, each in a worker process of its own "
                   f"(default: the machine's cores, here {os.cpu_count() or 1}). The report is the same for any "
                   "number.")
@no_cache_option()
@guarded
def check(world, seed, as_json, timeout, learnability, jobs):
    """Certify WORLD: every rule observable and required, herrings unchanged,
    reference solutions passing; report the recall-only score. WORLD may be a
    folder: every .world file under it is certified and counted.

    Certification runs in a separate process under --timeout, so a spec whose
    code never finishes is a problem reported, not a hang. A folder's worlds
    are certified side by side (--jobs at a time), each under --timeout, and
    reported in the order of their files.

    Exit status: 0 certified, 1 problems found, 2 the spec does not compile.

    \b
    Example:
      worldspec check worlds/demo.world
      worldspec check aliencode --seed 7 --json
    """
    folder = os.path.isdir(world)
    path = world if folder else world_path(world)
    try:
        with CertifyDisplay(world, live=sys.stderr.isatty() and not as_json, lines=folder and not as_json) as display:
            report, note = certification(path, seed, display.say, timeout, jobs=(jobs or os.cpu_count() or 1) if folder else None)
            if report.get("overrun") and display.step():
                report["problems"][0] += f" (it was at: {display.step()}; the machine may be slow)"
    except (SpecError, SpecErrors, sandbox.RemoteSpecError) as e:
        if as_json:  # a script reading stdout gets the diagnostics too, not an empty stdout
            click.echo(json.dumps({"world": path, "compiles": False, "diagnostics": e.diagnostics()}, indent=2))
        raise
    if not folder and not report.get("overrun"):
        report["spec_warnings"] = [d for w in spec_warnings(load_spec(path)) for d in w.diagnostics()]
        report["problems"] = all_problems(report)  # the exit status, --json and the rows read one verdict
    if learnability and not folder and not report.get("overrun"):
        report["learnability"] = learnability_of(path, seed)
    elif learnability and folder and as_json:
        report["learnability"] = folder_learnability(path, seed)
    if report.get("overrun") and not as_json:
        click.echo(f"{path}: 1 problem(s):\n  - {report['problems'][0]}")
        sys.exit(EXIT_PROBLEMS)
    if note and not as_json:
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps(report, indent=2, sort_keys=False))
    elif folder:
        _print_folder(world, report)
        if learnability:  # each world's line as it is measured (a folder of boxes takes minutes)
            click.echo("learnability, world by world:")
            folder_learnability(path, seed, click.echo)
    else:
        _print_report(report)
        if "learnability" in report:
            click.echo(report["learnability"]["line"])
    sys.exit(EXIT_PROBLEMS if report["problems"] or (folder and not report.get("worlds")) else 0)


def learnability_of(path: str, seed: int | None = None) -> dict:
    """`check --learnability`: the explorer's accuracy within the world's budget, on the world variant
    `seed` names (runner/learnability.py, looked up only when asked, as LAZY commands are: a plain check
    loads none of the explorer)."""
    found = importlib.import_module("worldspec.runner.learnability").learnability(load_world(path, seed=seed))
    return {**found.as_json(), "line": found.line()}


def folder_learnability(folder: str, seed: int | None, echo=None) -> dict:
    """`check FOLDER --learnability`: {world file: the explorer's learnability} for every world under
    FOLDER, each line passed to `echo` as it is measured; a world that does not compile is not measured
    (certification above reported why)."""
    out = {}
    for f in world_files(folder):
        try:
            found = learnability_of(f, seed)
        except (SpecError, SpecErrors) as e:
            found = {"accuracy": None, "line": f"learnability: not measured (the spec does not compile: "
                                               f"{str(e).splitlines()[0] if str(e) else type(e).__name__})"}
        except Exception as e:  # noqa: BLE001 — one world's failure must not lose the folder's other lines
            found = {"accuracy": None, "line": f"learnability: not measured (the explorer failed: "
                                               f"{type(e).__name__}: {e}; a bug: please report it)"}
        out[f] = found
        if echo is not None:
            echo(f"  {os.path.relpath(f, folder)}: {found['line']}")
    return out


def say_to_file(path: str, message: str) -> None:
    """Certification's progress, from a worker process: one line appended to the display's file."""
    with open(path, "a", encoding="utf-8", errors="replace") as f:
        f.write(message.replace("\n", " ") + "\n")


class CertifyDisplay:
    """`check`'s progress on a terminal: a rich spinner with the time taken and the step certification
    is at. Certification runs in a worker process, which appends its steps to a file (say_to_file);
    the display's own refresh thread shows the file's last line, so it moves while the command waits."""

    def __init__(self, world: str, live: bool, console: Console | None = None, lines: bool = False):
        self.world, self.live, self.console = world, live, console
        self.lines = lines and not live  # off a terminal, a folder's progress: one stderr line per world
        self.path, self.say, self._live, self._tail = None, None, None, None
        self._t0 = time.monotonic()
        self._done = threading.Event()

    def __enter__(self):
        fd, self.path = tempfile.mkstemp(prefix="worldspec-check-", suffix=".txt")
        os.close(fd)
        self.say = functools.partial(say_to_file, self.path)
        if self.live:
            self._live = Live(get_renderable=self.render, console=self.console or Console(stderr=True), transient=True,
                              refresh_per_second=8)
            self._live.__enter__()
        elif self.lines:
            self._tail = threading.Thread(target=self._echo_worlds, name="worldspec-check-progress", daemon=True)
            self._tail.start()
        return self

    def __exit__(self, *exc):
        if self._live is not None:
            self._live.__exit__(*exc)
        self._done.set()
        if self._tail is not None:
            self._tail.join(timeout=5)
        if self.path is not None:
            os.unlink(self.path)
        return False

    def _echo_worlds(self) -> None:
        """Each world a folder's certification starts, as a stderr line with the time so far (off a terminal)."""
        said = 0
        while True:
            finished = self._done.wait(1.0)
            try:
                with open(self.path, encoding="utf-8", errors="replace") as f:
                    new = [x for x in f.read().splitlines() if x.startswith("[")][said:]
            except OSError:
                return
            for line in new:
                click.echo(f"{time.monotonic() - self._t0:6.0f}s {line}", err=True)
            said += len(new)
            if finished:
                return

    def step(self) -> str:
        """The last step certification reported."""
        try:
            with open(self.path, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 400))
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else "starting"

    def render(self) -> Spinner:
        return Spinner("dots", text=f"certifying {self.world} — {time.monotonic() - self._t0:.0f}s: {self.step()}")


def verdicts(report: dict) -> dict[str, list[str]]:
    """Each rule's and herring's verdict: the problems of the report that name it ("rule R1 ...",
    "herring H1 ..."), in the report's order. The line `check` prints for a row and the problem list
    both come from this (a row said `ok` for a rule the list then called a problem: its only task, its
    equation). A row the certification marks unobservable or required by no task is BAD even when its
    kind words the problem otherwise."""
    out: dict[str, list[str]] = {}
    rows = [("rule", r) for r in report.get("rule_table", ())] + [("herring", h) for h in
                                                                 report.get("herring_table", ())]
    for what, row in rows:
        named = [p for p in report.get("problems", ()) if p.startswith((f"{what} {row['id']} ", f"{what} {row['id']}:"))]
        if not named and what == "rule" and not (row.get("observable", True) and row.get("tasks")):
            named = [f"rule {row['id']} is " + ("not observable" if not row.get("observable", True)
                                               else "required by no task")]
        if not named and what == "herring" and not row.get("unchanged", True):
            named = [f"herring {row['id']} behaves differently from its manual entry"]
        out[row["id"]] = named
    return out


def all_problems(report: dict) -> list[str]:
    """The report's problems and, after them, any BAD row's verdict its kind did not list (one verdict)."""
    problems = list(report.get("problems", ()))
    return problems + [p for ps in verdicts(report).values() for p in ps if p not in problems]


def report_lines(report: dict) -> list[str]:
    """What `check` prints for one world's certification."""
    language = f"language {report['language']}, " if "language" in report else ""
    lines = [f"{report['world']} (kind {report['kind']}, {language}seed {report['seed']}): "
             f"{plural(report['rules'], 'rule')}, {plural(report['herrings'], 'herring')}, "
             f"{plural(report['tasks'], 'task')}, {plural(report['examples'], 'example')}"]
    if report.get("params"):
        lines.append("params: " + ", ".join(f"{k}={v}" for k, v in report["params"].items()))
    if "recall_only" in report:
        lines.append(f"recall-only score (naive answers in the true world): {report['recall_only']}%")
    verdict = verdicts(report)
    for r in report.get("rule_table", ()):
        mark = "BAD" if verdict[r["id"]] else "ok "
        title = textwrap.shorten(r.get("title", ""), 48, placeholder="…")  # cut at a word, never inside one
        lines.append(f"  {mark} {r['id']:<6} {title:<48} tasks: {len(r.get('tasks', ()))}")
        if r.get("witness_sequence"):  # a box with memory: the sequence of queries that shows the rule
            lines.append(f"         seen after the queries {r['witness']} (in a fresh session)")
    for h in report.get("herring_table", ()):
        lines.append(f"  {'BAD' if verdict[h['id']] else 'ok '} {h['id']:<6} herring on {h.get('target', '')}")
    lines += [f"  {line}" for line in report.get("notes", ())]
    lines += [w["text"] for w in report.get("spec_warnings", ())]
    problems = all_problems(report)
    if problems:
        lines.append(f"{len(problems)} problem(s):")
        lines += [f"  - {p}" for p in problems]
    else:
        lines.append("certified: no problems")
    return lines


def _print_report(report: dict) -> None:
    click.echo("\n".join(report_lines(report)))


def _print_folder(folder: str, summary: dict) -> None:
    """A folder's certification as one benchmark (counts, cross-box checks)."""
    click.echo(f"{folder}: {summary['certified']} of {summary['worlds']} worlds certified")
    for key, table in summary["counts"].items():
        if table:
            click.echo(f"  {key}: " + ", ".join(f"{k} {v}" for k, v in sorted(table.items())))
    for p in summary["problems"]:
        click.echo(f"  - {p}")


@main.command()
@click.argument("world")
@seed_option
@click.option("--examples/--no-examples", default=False, help="Also print the worked examples.")
@no_cache_option()
@guarded
def manual(world, seed, examples):
    """Print the manual an agent reads for WORLD (it documents the base semantics only).

    \b
    Example:
      worldspec manual aliencode --examples
    """
    w = load(world, seed)
    click.echo(w.manual, nl=False)
    if examples:
        click.echo("\n## Worked examples\n")
        for e in w.examples:
            click.echo(f"### {e.id} ({e.band}): {e.prompt}\n```\n{e.program}\n```\nOutput:\n```\n{e.output}\n```\n")


# a probe may start with a minus sign (`worldspec probe box -2.5`): an unknown option is the probe's text
@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("world")
@click.argument("program")
@seed_option
@no_cache_option()
@guarded
def probe(world, program, seed):
    """Run PROGRAM in WORLD's true interpreter and print the feedback an agent sees.

    PROGRAM is the program text, or - to read it from standard input. The units
    charged go to standard error, so standard output is exactly the feedback.

    \b
    Example:
      worldspec probe demo "EMIT(100)"
      printf 'SWEEP v IN STRAND(1, 2):\\n    EMIT(v)\\n' | worldspec probe demo -
    """
    text = read_stdin() if program == "-" else program
    fb, cap, note = sandbox.probe_once(world_path(world), seed, text)
    if note:
        click.echo(f"note: {note}", err=True)
    click.echo(fb.text)
    click.echo(f"[{fb.units} probe unit{'s' if fb.units != 1 else ''} charged of {cap}; {fb.status}]", err=True)


def read_stdin() -> str:
    """Standard input as UTF-8 text, whatever the locale; bytes that are not UTF-8 are the user's bad
    input (exit 2, saying where), not a probe: no agent wrote them."""
    stream = getattr(sys.stdin, "buffer", None)
    try:
        if stream is None:  # a text stream (a test's): read it within the same cap, in characters
            text = sys.stdin.read(MAX_STDIN_BYTES + 1)
            if len(text) > MAX_STDIN_BYTES:
                raise TooLarge(f"standard input is larger than {MAX_STDIN_BYTES:,} bytes")
            return text
        data = read_stream(stream, MAX_STDIN_BYTES, "standard input")
    except TooLarge as e:
        raise click.BadParameter(f"{e}: a probe program is a few thousand characters at most.",
                                 param_hint="PROGRAM") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise click.BadParameter(f"standard input is not UTF-8 text: byte 0x{data[e.start]:02x} on line {line} "
                                 f"(offset {e.start}) cannot be read. Save the program as UTF-8 "
                                 "(e.g. iconv -t UTF-8) and try again.", param_hint="PROGRAM") from None
