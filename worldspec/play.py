"""`worldspec play`: a person explores a world under the same budget an agent has.

The budget is the one the world's run protocol gives a player (its calls, or its turns).
"""
from __future__ import annotations

import click

from worldspec.cli import guarded, load, seed_option
from worldspec.runner.protocols import PROTOCOLS

HELP = """Commands:
  :manual            print the manual
  :examples          print the worked examples
  :tasks             list the held-out tasks
  :task ID           show one task
  :answer ID         write an answer to task ID (end with a line holding only '.') and see the verdict
  :budget            calls and probe units used so far
  :help              this text
  :quit              leave (also Ctrl-D)
Anything else is a program: it runs in the true world and is charged like a tool call."""


class Session:
    def __init__(self, world, reader=None, writer=None):
        self.world = world
        self.read = reader or (lambda prompt: input(prompt))
        self.write = writer or click.echo
        self.calls = 0
        self.units = 0
        self.max_calls = PROTOCOLS[world.protocol].exploration_calls(world)

    def loop(self) -> None:
        w = self.world
        self.write(f"{w.name}: {w.summary}")
        self.write(f"Budget: {self.max_calls} calls, {w.budget.units_per_call} probe units per call. "
                   f"Type :help for commands.")
        while True:
            try:
                line = self.read(f"[{self.calls}/{self.max_calls}]> ")
            except (EOFError, KeyboardInterrupt):
                self.write("")
                return
            if not self.handle(line):
                return

    def _block(self, first: str, end: str = "") -> str:
        lines = [first]
        while True:
            try:
                nxt = self.read("... ")
            except EOFError:
                break
            if nxt.strip() == end and (end or not nxt.strip()):
                break
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
            self.write("Write your answer; end it with a line holding only '.'")
            answer = self._block(self.read("... "), end=".")
            v = w.verify(tid, answer)
            self.write(f"{'PASS' if v.passed else 'FAIL'}: {v.detail}")
        elif cmd == ":budget":
            self.write(f"{self.calls} of {self.max_calls} calls, {self.units} probe units used")
        elif cmd.startswith(":"):
            self.write(f"unknown command {cmd.split()[0]}; type :help")
        else:
            if self.calls >= self.max_calls:
                self.write("the exploration budget is spent; you can still :answer tasks")
                return True
            program = self._block(line) if line.rstrip().endswith(":") else line
            fb = w.probe(program)
            if fb.status != "rejected":
                self.calls += 1
                self.units += fb.units
            self.write(fb.text)
            self.write(f"[{fb.units} units; {self.calls}/{self.max_calls} calls used]")
        return True


@click.command("play")
@click.argument("world")
@seed_option
@guarded
def play(world, seed):
    """Explore WORLD yourself: probe, read the manual, list tasks, submit answers.

    \b
    Type a program to run it (a line ending in ':' opens a block; finish it
    with an empty line). Commands start with ':' - type :help.

    \b
    Example:
      worldspec play demo
      [0/48]> EMIT(PLUCK(STRAND(10, 20, 30), 1))
      [1/48]> :answer T1
    """
    Session(load(world, seed)).loop()
