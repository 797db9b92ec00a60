"""`worldspec play`: a person explores a world under the same budget an agent has.

The budget is the one the world's run protocol gives a player (its calls, or its turns).
On a terminal, input has line editing and history (readline; the history is kept in
~/.cache/worldspec/play_history); Ctrl-C cancels the line, block or answer being typed (or
the program running), never the session; a runtime error is shown under the program line
it names, with a caret; before a program runs, the session says which call it is charged as.
Probes go where the world's protocol sends an agent's (`play_session`): a box with memory or a game
played round by round is one session, so each query sees the ones before it, and a probe costs
what the protocol charges for it.
"""
from __future__ import annotations

import atexit
import os
import re
import sys

import click

try:  # line editing and history for input() (absent on some platforms: plain input then)
    import readline
except ImportError:  # pragma: no cover
    readline = None

from worldspec.commands import guarded, load, no_cache_option, seed_option
from worldspec.compiler.api import UNFINISHED_PROGRAM
from worldspec.runner.answers import read_answer
from worldspec.runner.protocols import PROTOCOLS

HELP = """Commands:
  :manual            print the manual
  :examples          print the worked examples
  :tasks             list the held-out tasks
  :task ID           show one task
  :answer ID         write an answer to task ID (end it with an empty line or '.') and see the verdict
  :explore ID        a fresh exploration session for task ID (a box with a target per test, or a
                     round-by-round game, explores each test apart, with a budget of its own)
  :block             type a program of several lines (end it with an empty line or '.')
  :budget            calls and probe units used so far
  :help              this text
  :quit              leave (also Ctrl-D; Ctrl-C only cancels what you are typing)
Anything else is a probe: it runs in the true world and is charged as an agent's is (a program
the world rejects unrun, e.g. over the unit limit, is not charged; one that does not parse is).
A line ending in ':' opens a block, and so does a line that leaves its program unfinished (a block
keyword of the world's own syntax). A block and an answer end alike: at an empty line or a line
holding only '.'; a command typed inside one (:quit) drops it and runs.
Commands starting with ':' are free."""

HISTORY = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                       "worldspec", "play_history")
_LINE = re.compile(r"\bline (\d+)\b")


class Cancelled(Exception):
    """Ctrl-C while typing: what was being typed is dropped; the session goes on."""


def with_history(path: str = HISTORY) -> None:
    """Load the readline history and save it at exit (quietly: history is a convenience)."""
    if readline is None:
        return
    try:
        readline.read_history_file(path)
    except OSError:
        pass
    readline.set_history_length(1000)

    def save():
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            readline.write_history_file(path)
        except OSError:
            pass
    atexit.register(save)


def caret(program: str, text: str) -> str:
    """The program line a runtime error names, with a caret under the name it complains about
    (under the line's start when it names none): "" when the error names no line."""
    m = _LINE.search(text)
    lines = program.splitlines()
    if not m or not 0 < int(m.group(1)) <= len(lines):
        return ""
    line = lines[int(m.group(1)) - 1]
    col, width = len(line) - len(line.lstrip()), 1
    for word in reversed(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text[m.end():])):
        at = re.search(rf"\b{re.escape(word)}\b", line)
        if at:
            col, width = at.start(), len(word)
            break
    return f"  {line}\n  {' ' * col}{'^' * width}"


COMMANDS = (":quit", ":q", ":exit", ":help", ":manual", ":examples", ":tasks", ":task", ":answer", ":explore",
            ":block", ":budget")


class CommandInBlock(Exception):
    """A command typed where a block's or an answer's next line was expected."""

    def __init__(self, line: str):
        super().__init__(line)
        self.line = line


class Session:
    def __init__(self, world, reader=None, writer=None):
        self.world = world
        self.read = reader or (lambda prompt: input(prompt))
        self.write = writer or click.echo
        self.calls = 0
        self.units = 0
        self.protocol = PROTOCOLS[world.protocol]
        self.max_calls = self.protocol.exploration_calls(world)
        self.exploring = self.protocol.play_session(world)

    def loop(self) -> None:
        w = self.world
        self.write(f"{w.name}: {w.summary}")
        self.write(f"Budget: {self.max_calls} calls, {w.budget.units_per_call} probe units per call. "
                   f"Type :help for commands.")
        self.write("Each probe you enter runs in the true world and is charged as an agent's is; :commands are free.")
        if self.exploring.opening:
            self.write(self.exploring.opening)
        while True:
            try:
                line = self.read(f"[{self.calls}/{self.max_calls}]> ")
            except EOFError:
                self.write("")
                return
            except KeyboardInterrupt:
                self.write("^C (the line is dropped; :quit or Ctrl-D leaves)")
                continue
            try:
                if not self.handle(line):
                    return
            except (Cancelled, KeyboardInterrupt):
                self.write("^C cancelled (nothing was charged)")
            except CommandInBlock as c:
                self.write(f"(what you typed before {c.line.strip().split()[0]} is dropped, nothing was charged)")
                if not self.handle(c.line):
                    return

    def _block(self, first: str | None = None) -> str:
        """Lines up to an empty one or one holding only '.', after `first` if given (blocks and answers end
        alike). A command typed inside (`:quit`, `:budget`) drops what was typed: CommandInBlock carries it."""
        lines = [] if first is None else [first]
        while True:
            try:
                nxt = self.read("... ")
            except EOFError:
                break
            except KeyboardInterrupt:
                raise Cancelled from None
            if nxt.strip() in ("", "."):
                break
            if nxt.strip().split(" ", 1)[0] in COMMANDS:
                raise CommandInBlock(nxt)
            lines.append(nxt)
        return "\n".join(lines)

    def handle(self, line: str) -> bool:
        w = self.world
        cmd = line.strip()
        if not cmd:
            return True
        if cmd in (":quit", ":q", ":exit"):
            return False
        if cmd == ":help":
            self.write(HELP)
        elif cmd == ":manual":
            self.write(w.manual)
        elif cmd == ":examples":
            for e in w.examples:
                self.write(f"{e.id} ({e.band}) {e.prompt}\n{e.program}\n=> {e.output}\n")
        elif cmd == ":tasks":
            for t in w.tasks:
                self.write(f"{t.id:<6} {t.band:<10} {t.prompt.splitlines()[0][:70]}")
        elif cmd.startswith(":task "):
            tid = cmd.split(None, 1)[1]
            try:
                self.write(w.task(tid).prompt)
            except KeyError:
                self.write(f"no task {tid}; :tasks lists them")
        elif cmd.startswith(":answer "):
            tid = cmd.split(None, 1)[1]
            try:
                w.task(tid)
            except KeyError:
                self.write(f"no task {tid}; :tasks lists them")
                return True
            self.write(w.task(tid).prompt)
            self.write("Write your answer; end it with an empty line or a line holding only '.'")
            # read as a model's reply is read (runner/answers.py read_answer: the first fenced block, a
            # prediction or decline line, or all of it)
            answer = read_answer(w, w.task(tid), self._block())
            v = w.verify(tid, answer)
            self.write(f"{'PASS' if v.passed else 'FAIL'}: {v.detail}")
        elif cmd.startswith(":explore"):
            tid = cmd.split(None, 1)[1] if " " in cmd else ""
            try:
                task = w.task(tid)
            except KeyError:
                self.write(f"no task {tid!r}; :tasks lists them")
                return True
            self.exploring = self.protocol.play_session(w, task)
            if self.exploring.own_budget:  # as the protocol explores each test apart, with its own turns
                self.calls = self.units = 0
                self.write(f"a fresh exploration session for {task.id}, with its own {self.max_calls} calls")
            else:
                self.write(f"a fresh exploration session for {task.id} (the calls used stay used)")
            if self.exploring.opening:
                self.write(self.exploring.opening)
        elif cmd == ":block":
            if self._budget_left():
                self.write("Type the program; end it with an empty line or a line holding only '.'")
                self.run(self._block())
        elif cmd == ":budget":
            self.write(f"{self.calls} of {self.max_calls} calls, {self.units} probe units used")
        elif cmd.startswith(":"):
            self.write(f"unknown command {cmd.split()[0]}; type :help")
        elif self._budget_left():
            block = line.rstrip().endswith(":")
            self.run(self._block(line) if block else line, single=not block)
        return True

    def _budget_left(self) -> bool:
        """Whether a call is left (saying so when none is)."""
        if self.calls < self.max_calls:
            return True
        self.write("the exploration budget is spent; you can still :answer tasks")
        return False

    def run(self, program: str, single: bool = False) -> None:
        """Probe once, charged as the protocol charges an agent; a single line that leaves its program
        unfinished opens a block (its lines are read, then the whole block runs); callers check the budget."""
        fb = self.exploring.probe(program)
        if single and fb.status == "parse_error" and UNFINISHED_PROGRAM in fb.text:
            self.write("(this line opens a block: nothing ran and nothing is charged; type its lines, "
                       "then an empty line or '.')")
            self.run(self._block(program))
            return
        cost = self.exploring.cost(fb)
        self.calls += cost
        self.units += fb.units
        self.write(fb.text)
        if fb.status == "error" and (shown := caret(program, fb.text)):
            self.write(shown)
        # said once, after the probe: a line before it ("running as call 3") was wrong whenever it was not charged
        self.write(f"[{fb.units} units; {self.calls}/{self.max_calls} calls used"
                   f"{'' if cost else '; not charged'}]")


@click.command("play")
@click.argument("world")
@seed_option
@no_cache_option()
@guarded
def play(world, seed):
    """Explore WORLD yourself: probe, read the manual, list tasks, submit answers.

    \b
    Type a probe to run it (a line ending in ':', or one that leaves its
    program unfinished, opens a block; finish it with an empty line). A box
    with memory, or a game played round by round, is one session, as an
    agent explores it. Commands start with ':' - type :help.

    \b
    Example:
      worldspec play demo
      [0/48]> EMIT(PLUCK(STRAND(10, 20, 30), 1))
      [1/48]> :answer T1
    """
    session = Session(load(world, seed))
    if sys.stdin.isatty():
        with_history()
    session.loop()
