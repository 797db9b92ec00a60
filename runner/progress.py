"""Live progress of a run: a rich table on a terminal, plain lines otherwise.

One row per session (a trajectory, a box session): system, condition, index,
round, last milestone, tool calls and exploration tokens so far, accuracy so
far, status. Sessions report through Runtime.progress.
"""
from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.live import Live
from rich.table import Table


class Progress:
    def __init__(self, stream=None, live: bool | None = None, quiet: bool = False):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.live_mode = (self.stream.isatty() if live is None else live) and not quiet
        self.rows: dict[str, dict] = {}
        self._live = None
        self._t0 = time.monotonic()

    # -- lifecycle -------------------------------------------------------------

    def __enter__(self):
        if self.live_mode:
            self._live = Live(self._table(), console=Console(file=self.stream),
                              refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc):
        if self._live is not None:
            self._live.update(self._table())
            self._live.__exit__(*exc)
            self._live = None
        return False

    # -- updates ----------------------------------------------------------------

    def update(self, conv: str, **kw) -> None:
        row = self.rows.setdefault(conv, {"round": 0, "milestone": None, "calls": 0, "tokens": 0,
                                          "accuracy": None, "status": "running"})
        milestone = kw.pop("milestone", None)
        done = kw.pop("done", False)
        row.update({k: v for k, v in kw.items() if v is not None})
        if milestone is not None:
            row["milestone"] = max(milestone, row["milestone"] or 0) if row["milestone"] is not None else milestone
        if self.quiet:
            return
        if self._live is not None:
            self._live.update(self._table())
        elif milestone is not None or done:
            el = time.monotonic() - self._t0
            what = f"M{milestone}" if milestone is not None else f"done ({row.get('status')})"
            acc = kw.get("accuracy")
            acc_s = f"{acc:.1f}%" if isinstance(acc, (int, float)) else "-"
            print(f"[{el:7.1f}s] {row.get('system')} {row.get('condition')} #{row.get('trajectory')}: "
                  f"{what} accuracy {acc_s} calls {row['calls']} tokens {row['tokens']}",
                  file=self.stream, flush=True)

    def _table(self):
        tab = Table(title=f"worldspec run — {time.monotonic() - self._t0:.0f}s", expand=False)
        for col in ("system", "condition", "#", "round", "milestone", "calls", "tokens",
                    "accuracy", "status"):
            tab.add_column(col)
        for row in self.rows.values():
            acc = row.get("accuracy")
            tab.add_row(str(row.get("system", "")), str(row.get("condition", "")),
                        str(row.get("trajectory", "")), str(row.get("round", 0)),
                        "-" if row["milestone"] is None else f"M{row['milestone']}",
                        str(row.get("calls", 0)), str(row.get("tokens", 0)),
                        f"{acc:.1f}%" if isinstance(acc, (int, float)) else "-",
                        str(row.get("status", "")))
        return tab
