"""Live progress of a run: a rich table on a terminal, plain lines otherwise.

The display shows counts and computes none: it reads the run log's tally (tally.py), which every
event the log writes updates as it is written, and which report.md's counts are read from too, so
the console and the report cannot disagree. One row per session that has started: system,
condition, index, round, the milestone last reached or the milestones whose requests are still
out (`M0-3…`), model requests sent, tool calls, exploration tokens, provider retries, answers lost
to infrastructure, accuracy so far, status. Off a terminal each milestone is a line when its record
is written, with that milestone's own calls and tokens, and the run's counts follow on a status line
after a few seconds of silence; the last line, on a terminal too, is the run's counts as report.md
states them.

Milestone answers are asked in the background while exploration goes on, and they wait behind it
for the model's connections (runtime.PriorityLimiter: exploration is the critical path) and behind
their own retries, so with many sessions a milestone may complete long after its round: the table
says which milestones are waiting and how many of their requests were answered.

The display never waits on the run: on a terminal rich's own refresh thread redraws the table
(and its clock) four times a second; off a terminal a thread calls `tick`, which prints a
status line when nothing was printed for `every` seconds. The clock is injectable (`clock=`), so
tests drive `tick` with a fake one.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable

from rich import box
from rich.console import Console
from rich.live import Live
from rich.table import Table

from .tally import SessionCount, Tally, counts_line

STATUS_EVERY = 5.0  # seconds without a line, off a terminal, before a status line


class Progress:
    def __init__(self, stream=None, live: bool | None = None, quiet: bool = False, *,
                 clock: Callable[[], float] = time.monotonic, every: float = STATUS_EVERY):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live_mode = (self.stream.isatty() if live is None else live) and not quiet
        self.tally: Tally | None = None  # the run log's, once the run has opened it (attach)
        self.noun = "sessions"
        self.clock = clock
        self.every = every
        self._t0 = clock()
        self._said = self._t0  # when the last plain line was printed
        self._live = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    def attach(self, tally: Tally, noun: str = "sessions") -> None:
        """Show this run log's tally (a resumed log's holds what earlier sessions of the run did)."""
        self.tally, self.noun = tally, noun

    # -- lifecycle -------------------------------------------------------------

    def __enter__(self):
        if self.live_mode:
            self._live = Live(console=Console(file=self.stream), get_renderable=self.table,
                              refresh_per_second=4, transient=False)
            self._live.__enter__()
        elif not self.quiet:
            self._ticker = threading.Thread(target=self._tick_loop, name="worldspec-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
            self._ticker = None
        if self._live is not None:
            self._live.refresh()
            self._live.__exit__(*exc)
            self._live = None
        if not self.quiet and self.tally is not None:
            self.say(self.final_line())
        return False

    def _tick_loop(self) -> None:
        while not self._stop.wait(1.0):
            self.tick()

    # -- what is said ------------------------------------------------------------

    def final_line(self) -> str:
        """The run's counts, in the words report.md's status line uses."""
        return "counts: " + counts_line(self.tally.snapshot()[1], self.noun)

    def event(self, ev: dict) -> None:
        """A run log event, after the tally took it: off a terminal, a milestone or a session ending is a line."""
        if self.quiet or self._live is not None or self.tally is None or ev.get("type") not in ("milestone",
                                                                                              "trajectory"):
            return
        rows, _ = self.tally.snapshot()
        row = next((r for r in rows if r.conv == ev.get("conv")), None)
        rec = ev.get("record")
        if row is None or not isinstance(rec, dict):
            return
        who = f"{row.system} {row.condition} #{row.trajectory}"
        if ev["type"] == "milestone":
            waiting = f"; waiting: {milestones_cell(row.pending, '')}" if row.pending else ""
            self.say(f"{who}: M{rec.get('t')} accuracy {pct(rec.get('accuracy'))} at calls {rec.get('calls')} "
                     f"tokens {rec.get('tokens')}; milestone requests answered {row.milestone_answered}/"
                     f"{row.milestone_requests}{waiting}")
        else:
            self.say(f"{who}: done ({row.status}) accuracy {pct(row.accuracy)} calls {row.calls} tokens "
                     f"{row.tokens} requests {row.requests}"
                     + (f" retries {row.retries}" if row.retries else "")
                     + (f" lost {row.lost}" if row.lost else ""))

    def tick(self) -> None:
        """Off a terminal: a status line when nothing was printed for `every` seconds."""
        if self.quiet or self._live is not None or self.tally is None or self.clock() - self._said < self.every:
            return
        rows, counts = self.tally.snapshot()
        pending = sorted({t for r in rows for t in r.pending})
        self.say(counts_line(counts, self.noun)
                 + (f"; milestones waiting: {milestones_cell(set(pending), '')}" if pending else ""))

    def say(self, line: str) -> None:
        """One plain line, stamped with the time since the start."""
        now = self.clock()
        self._said = now
        print(f"[{now - self._t0:7.1f}s] {line}", file=self.stream, flush=True)

    # -- the table ----------------------------------------------------------------

    def table(self) -> Table:
        """The live table (its title carries the clock, so every refresh moves it; its caption the run's
        counts). It fits 80 columns: short headings, conditions as the paper abbreviates them, tokens in
        thousands; only a long system name is cut (every other cell keeps its width, as rich would
        otherwise cut them all: `syst…`)."""
        rows, counts = self.tally.snapshot() if self.tally is not None else ([], None)
        tab = Table(title=f"worldspec run — {self.clock() - self._t0:.0f}s", expand=False, box=box.SIMPLE_HEAD,
                    show_edge=False, pad_edge=False, padding=(0, 0),
                    caption=counts_line(counts, self.noun) if counts else None)
        tab.add_column("system", no_wrap=True, overflow="ellipsis", max_width=SYSTEM_WIDTH)
        # rounds and milestones are the milestone protocol's; a box's or a game's session has neither
        shown = [c for c in COLUMNS[1:] if c not in ("rnd", "M")
                 or self.tally is None or self.tally.protocol in (None, "milestone")]
        for col in shown:
            tab.add_column(col, no_wrap=True, justify="right" if col in NUMERIC else "left", min_width=WIDTHS[col],
                           **({"max_width": 8, "overflow": "ellipsis"} if col == "#" else {}))
        for row in rows:
            cond = str(row.condition or "")
            cells = {"cond": CONDITION_SHORT.get(cond, cond), "#": str(row.trajectory or ""), "rnd": str(row.round),
                     "M": milestone_cell(row), "req": str(row.requests), "calls": str(row.calls),
                     "tokens": tokens_cell(row.tokens), "retry": str(row.retries), "lost": str(row.lost),
                     "acc": pct(row.accuracy), "status": row.status}
            tab.add_row(str(row.system or ""), *(cells[c] for c in shown))
        return tab


SYSTEM_WIDTH = 15  # the other columns take 64 of the 80, with their separators
COLUMNS = ("system", "cond", "#", "rnd", "M", "req", "calls", "tokens", "retry", "lost", "acc", "status")
NUMERIC = {"#", "rnd", "req", "calls", "tokens", "retry", "lost", "acc"}
WIDTHS = {"cond": 6, "#": 2, "rnd": 3, "M": 5, "req": 4, "calls": 5, "tokens": 6, "retry": 5, "lost": 4, "acc": 6,
          "status": 8}
# ExplorationBench's own short names for its conditions (Table 1: a, h, f, w; O@M0, A4+O)
CONDITION_SHORT = {"autonomous": "auto", "hindsight": "hind", "fixed": "fixed", "without-tool": "w/o",
                   "direct": "direct", "open-book-m0": "O@M0", "a4-open-book": "A4+O"}


def tokens_cell(n) -> str:
    """Tokens as a short number: 950, 12.3k, 4.5M."""
    if not isinstance(n, (int, float)):
        return "-"
    if n < 10_000:
        return str(int(n))
    return f"{n / 1000:.1f}k" if n < 1_000_000 else f"{n / 1_000_000:.1f}M"


def pct(x) -> str:
    return f"{x:.1f}%" if isinstance(x, (int, float)) else "-"


def milestones_cell(pending: set, mark: str = "…") -> str:
    """Milestones whose requests are out: M2…, M0-3… (the lowest and the highest)."""
    lo, hi = min(pending), max(pending)
    return (f"M{lo}" if lo == hi else f"M{lo}-{hi}") + mark


def milestone_cell(row: SessionCount) -> str:
    """The milestones being answered (M0-3…), else the last one reached, else -."""
    if row.pending:
        return milestones_cell(row.pending)
    return "-" if row.milestone is None else f"M{row.milestone}"
