"""Live progress of a run: a rich table on a terminal, plain lines otherwise.

One row per session (a trajectory, a box session): system, condition, index, round, the
milestone being answered or last reached, tool calls and exploration tokens so far, provider
retries, answers lost to infrastructure, accuracy so far, status. Sessions report through
Runtime.progress (`update`); every event the run log writes reaches `event` too, which is how
retries, lost answers and the milestone being answered are seen the moment they happen.

The display never waits on the run: on a terminal rich's own refresh thread redraws the table
(and its clock) four times a second; off a terminal a thread calls `tick`, which prints a
status line when nothing was printed for `every` seconds. Grading runs in the sandbox's worker
pool, so the event loop keeps delivering updates while answers are graded. The clock is
injectable (`clock=`), so tests drive `tick` with a fake one.
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

STATUS_EVERY = 5.0  # seconds without a line, off a terminal, before a status line


class Progress:
    def __init__(self, stream=None, live: bool | None = None, quiet: bool = False, *,
                 clock: Callable[[], float] = time.monotonic, every: float = STATUS_EVERY):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live_mode = (self.stream.isatty() if live is None else live) and not quiet
        self.rows: dict[str, dict] = {}
        self.clock = clock
        self.every = every
        self._t0 = clock()
        self._said = self._t0  # when the last plain line was printed
        self._lock = threading.Lock()  # rows are written by the event loop, read by the display thread
        self._live = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

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
        return False

    def _tick_loop(self) -> None:
        while not self._stop.wait(1.0):
            self.tick()

    # -- updates ----------------------------------------------------------------

    def _row(self, conv: str) -> dict:
        return self.rows.setdefault(conv, {"round": 0, "milestone": None, "answering": None, "calls": 0,
                                           "tokens": 0, "retries": 0, "lost": 0, "accuracy": None,
                                           "status": "running"})

    def update(self, conv: str, **kw) -> None:
        """A session's news (round, calls, tokens, milestone reached, accuracy, done, status)."""
        milestone = kw.pop("milestone", None)
        done = kw.pop("done", False)
        with self._lock:
            row = self._row(conv)
            row["session"] = True  # a row the events alone made (a judge's or a fork's conversation) is no session
            row.update({k: v for k, v in kw.items() if v is not None})
            if milestone is not None:
                row["milestone"] = max(milestone, row["milestone"] or 0)
                row["answering"] = None
        if not self.quiet and self._live is None and (milestone is not None or done):
            what = f"M{milestone}" if milestone is not None else f"done ({row.get('status')})"
            self.say(f"{row.get('system')} {row.get('condition')} #{row.get('trajectory')}: {what} accuracy "
                     f"{pct(kw.get('accuracy'))} calls {row['calls']} tokens {row['tokens']}"
                     + (f" retries {row['retries']}" if row["retries"] else "")
                     + (f" lost {row['lost']}" if row["lost"] else ""))

    def event(self, ev: dict) -> None:
        """One event of the run log: retries, lost answers and milestone requests show at once."""
        typ, conv = ev.get("type"), ev.get("conv")
        if conv is None or typ not in ("request", "retry", "lost"):
            return
        with self._lock:
            row = self._row(conv)
            for k in ("system", "condition", "trajectory"):
                if ev.get(k) is not None:
                    row.setdefault(k, ev[k])
            if typ == "retry":
                row["retries"] += 1
            elif typ == "lost":
                row["lost"] += 1
            elif ev.get("purpose") not in (None, "explore") and ev.get("t") is not None:
                row["answering"] = ev["t"]

    def tick(self) -> None:
        """Off a terminal: a status line when nothing was printed for `every` seconds."""
        if self.quiet or self._live is not None or self.clock() - self._said < self.every:
            return
        with self._lock:
            rows = [r for r in self.rows.values() if r.get("session")]
        done = sum(r["status"] != "running" for r in rows)
        answering = sorted({r["answering"] for r in rows if r["answering"] is not None})
        self.say(f"{len(rows) - done} running, {done} done; calls {sum(r['calls'] for r in rows)}, tokens "
                 f"{sum(r['tokens'] for r in rows)}, retries {sum(r['retries'] for r in rows)}, lost answers "
                 f"{sum(r['lost'] for r in rows)}"
                 + (f"; answering {', '.join(f'M{t}' for t in answering)}" if answering else ""))

    def say(self, line: str) -> None:
        """One plain line, stamped with the time since the start."""
        now = self.clock()
        self._said = now
        print(f"[{now - self._t0:7.1f}s] {line}", file=self.stream, flush=True)

    # -- the table ----------------------------------------------------------------

    def table(self) -> Table:
        """The live table (its title carries the clock, so every refresh moves it). It fits 80 columns:
        short headings, conditions as the paper abbreviates them, tokens in thousands; only a long system
        name is cut (every other cell keeps its width, as rich would otherwise cut them all: `syst…`)."""
        tab = Table(title=f"worldspec run — {self.clock() - self._t0:.0f}s", expand=False, box=box.SIMPLE_HEAD,
                    show_edge=False, pad_edge=False, padding=(0, 0))
        tab.add_column("system", no_wrap=True, overflow="ellipsis", max_width=22)
        for col in COLUMNS[1:]:
            tab.add_column(col, no_wrap=True, justify="right" if col in NUMERIC else "left", min_width=WIDTHS[col])
        with self._lock:
            rows = [dict(r) for r in self.rows.values() if r.get("session")]
        for row in rows:
            cond = str(row.get("condition", ""))
            tab.add_row(str(row.get("system", "")), CONDITION_SHORT.get(cond, cond), str(row.get("trajectory", "")),
                        str(row["round"]), milestone_cell(row), str(row["calls"]), tokens_cell(row["tokens"]),
                        str(row["retries"]), str(row["lost"]), pct(row["accuracy"]), str(row["status"]))
        return tab


COLUMNS = ("system", "cond", "#", "rnd", "M", "calls", "tokens", "retry", "lost", "acc", "status")
NUMERIC = {"#", "rnd", "calls", "tokens", "retry", "lost", "acc"}
WIDTHS = {"cond": 6, "#": 2, "rnd": 3, "M": 3, "calls": 5, "tokens": 6, "retry": 5, "lost": 4, "acc": 6, "status": 8}
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


def milestone_cell(row: dict) -> str:
    """The milestone being answered (M2…), else the last one reached, else -."""
    if row["answering"] is not None:
        return f"M{row['answering']}…"
    return "-" if row["milestone"] is None else f"M{row['milestone']}"
