"""The counts of a run, read from its events: the one source of the live display and of report.md.

A `Tally` takes a run log's events in order (`add`) and keeps, per session (a conversation the
header's `jobs` names), what the console shows: the round, the milestones reached and the ones
whose requests are still out, model requests sent and answered, tool calls, exploration tokens,
retries, answers lost, accuracy, status; and for the run: sessions finished, running and waiting,
requests, replies from the cache, retries, answers lost to infrastructure, log sessions.

The run log feeds every event it writes to its tally as it writes it (log.RunLog.tally; a resumed
log's tally starts from the events already in the file), and the log's one reader feeds the file's
events to a tally of its own (log.LoggedRun.tally), which report.py's validity reads. The display
and the report therefore read the same counts of the same events and cannot disagree.

Where a count is also in a record (a milestone's or a session's), the record wins when it arrives:
lost answers are the records' `lost` (a resumed run that repaired an answer writes a new record;
the `lost` events of the earlier attempt stay in the log), and a finished milestone session's
calls and tokens are its last milestone's C and T, the figures report.md's tables print. Events
are outside text (a log may be damaged): a field of another type is ignored, never a crash.
"""
from __future__ import annotations

import threading

import attrs


# protocols whose sessions are one per world (a box, a puzzle): the table shows the world as the session
BY_WORLD = ("turn@shot", "judge")


def _int(x) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def _num(x):
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


@attrs.define
class SessionCount:
    """One session's counts, as the live table shows them."""

    conv: str
    system: str | None = None
    condition: str | None = None
    trajectory: object = None  # its index (a box session: the box)
    round: int = 0
    milestone: int | None = None  # the last milestone reached (its record is in the log)
    pending: set = attrs.field(factory=set)  # milestones whose requests went out, with no record yet
    requests: int = 0  # model requests sent (exploration and milestones)
    answered: int = 0  # replies received (live or from the cache)
    milestone_requests: int = 0
    milestone_answered: int = 0
    calls: int = 0  # tool calls the world ran (C)
    tokens: int = 0  # exploration tokens (T)
    retries: int = 0
    lost: int = 0  # answers lost to infrastructure (from the records)
    accuracy: float | None = None
    status: str = "waiting"  # waiting, running, then the record's status (complete, lost, error)
    milestone_lost: dict = attrs.field(factory=dict)  # t -> the lost answers of its latest record

    @property
    def started(self) -> bool:
        return self.status != "waiting"

    @property
    def done(self) -> bool:
        return self.status not in ("waiting", "running")


class Tally:
    """Counts of a run's events (see the module docstring)."""

    def __init__(self):
        self.rows: dict[str, SessionCount] = {}  # conv -> its counts, in the order the header lists them
        self.protocol: str | None = None
        self.requests = 0
        self.answered = 0
        self.milestone_requests = 0
        self.milestone_answered = 0
        self.cached = 0
        self.retries = 0
        self.lost_requests = 0  # requests given up on after their retries (each also costs its answer)
        self.sessions: dict[int, str] = {}  # log session -> its last status
        self.records: dict[str, dict] = {}  # conv -> its last record (sessions and others alike)
        self.lock = threading.Lock()  # written by the event loop, read by the display's thread

    def snapshot(self) -> tuple[list[SessionCount], dict]:
        """Copies of the started sessions' counts and the run's, taken together (the display's thread)."""
        with self.lock:
            rows = [attrs.evolve(r, pending=set(r.pending), milestone_lost=dict(r.milestone_lost))
                    for r in self.rows.values() if r.started]
            return rows, self.counts()

    # -- reading events -----------------------------------------------------------------

    def add(self, ev: dict) -> None:
        """Take one event of the run log (in log order)."""
        with self.lock:
            self._add(ev)

    def _add(self, ev: dict) -> None:
        typ = ev.get("type")
        conv = ev.get("conv") if isinstance(ev.get("conv"), str) else None
        row = self.rows.get(conv) if conv is not None else None
        if typ == "header":
            cfg = ev.get("config") if isinstance(ev.get("config"), dict) else {}
            name = cfg.get("protocol", "milestone")
            self.protocol = "milestone" if name == "explorationbench" else name
            for job in cfg.get("jobs") or ():
                if isinstance(job, str):
                    row = self.rows.setdefault(job, SessionCount(job))
                    parts = job.split("|")
                    if self.protocol in BY_WORLD and len(parts) == 3:  # SYSTEM|WORLD|SETTING: the box is its label
                        row.trajectory = parts[1]
        elif typ == "session":
            if isinstance(ev.get("session"), int):
                self.sessions[ev["session"]] = ev.get("status")
        elif typ == "request":
            self.requests += 1
            milestone = self.is_milestone(ev)
            self.milestone_requests += milestone
            if row is not None:
                self._name(row, ev)
                row.requests += 1
                t = ev.get("t")
                if milestone:
                    row.milestone_requests += 1
                    if isinstance(t, int) and t not in row.milestone_lost:
                        row.pending.add(t)
                elif isinstance(t, int):
                    row.round = max(row.round, t)
        elif typ == "reply":
            self.answered += 1
            self.cached += bool(ev.get("cached"))
            milestone = self.is_milestone(ev)
            self.milestone_answered += milestone
            if row is not None:
                row.answered += 1
                row.milestone_answered += milestone
                if not milestone and self.counts_tokens(ev):
                    usage = (ev.get("reply") or {}).get("usage") if isinstance(ev.get("reply"), dict) else None
                    if isinstance(usage, dict):
                        row.tokens += _int(usage.get("input_tokens")) + _int(usage.get("output_tokens"))
        elif typ == "retry":
            self.retries += 1
            if row is not None:
                row.retries += 1
        elif typ == "lost" and "key" in ev:  # a request given up on (the answer's own `lost` event follows)
            self.lost_requests += 1
        elif typ == "tool":
            if row is not None and ev.get("status") not in ("rejected", "invalid"):
                self._name(row, ev)
                row.calls += 1
        elif typ == "milestone":
            rec = ev.get("record")
            if row is not None and isinstance(rec, dict) and isinstance(rec.get("t"), int):
                self._name(row, ev)
                t = rec["t"]
                row.pending.discard(t)
                row.milestone_lost[t] = _int(rec.get("lost"))
                if row.milestone is None or t >= row.milestone:
                    row.milestone, row.accuracy = t, _num(rec.get("accuracy"))
                row.calls = max(row.calls, _int(rec.get("calls")))  # A4+O starts from its source's counts
                row.tokens = max(row.tokens, _int(rec.get("tokens")))
                if not row.done:
                    row.lost = sum(row.milestone_lost.values())
        elif typ == "trajectory":
            rec = ev.get("record")
            if conv is not None and isinstance(rec, dict):
                self.records[conv] = rec
                if row is not None:
                    self._finish(row, rec)
        if row is not None and typ in ("request", "message", "tool") and row.status == "waiting":
            row.status = "running"

    def is_milestone(self, ev: dict) -> bool:
        """A milestone protocol's request (or reply) that is not exploration: a rule report, an answer."""
        return self.protocol == "milestone" and ev.get("purpose") not in (None, "explore")

    def counts_tokens(self, ev: dict) -> bool:
        """Whether a reply's tokens are the session's T: exploration only in the milestone protocol."""
        return self.protocol != "milestone" or ev.get("purpose") == "explore"

    @staticmethod
    def _name(row: SessionCount, ev: dict) -> None:
        for k in ("system", "condition", "trajectory"):
            v = ev.get(k)
            if v is not None and getattr(row, k) is None and isinstance(v, (str, int)):
                setattr(row, k, v)

    def _finish(self, row: SessionCount, rec: dict) -> None:
        self._name(row, rec)
        row.status = rec.get("status") if isinstance(rec.get("status"), str) else "error"
        row.pending.clear()
        row.lost = _int(rec.get("lost"))
        milestones = rec.get("milestones") if isinstance(rec.get("milestones"), list) else []
        last = milestones[-1] if milestones and isinstance(milestones[-1], dict) else None
        if last is not None:  # C and T as report.md prints them
            row.calls, row.tokens = _int(last.get("calls")), _int(last.get("tokens"))
            if self.protocol == "milestone" and isinstance(last.get("t"), int):
                row.milestone = last["t"]
        elif _int(rec.get("tokens")):
            row.tokens = _int(rec.get("tokens"))
        row.accuracy = _num(rec.get("endpoint")) if "endpoint" in rec else \
            100.0 * bool(rec.get("solved")) if "solved" in rec else row.accuracy

    # -- the counts ---------------------------------------------------------------------

    @property
    def expected(self) -> int:
        return len(self.rows)

    @property
    def finished(self) -> int:
        """Sessions the header lists whose record says complete (report.md's "N/M finished")."""
        return sum(self.records.get(conv, {}).get("status") == "complete" for conv in self.rows)

    @property
    def ended(self) -> int:
        return sum(r.done for r in self.rows.values())

    @property
    def running(self) -> int:
        return sum(r.status == "running" for r in self.rows.values())

    @property
    def waiting(self) -> int:
        return sum(r.status == "waiting" for r in self.rows.values())

    @property
    def lost_answers(self) -> int:
        """Answers lost to infrastructure: the last record of every conversation (and of a session still
        running, its milestones so far)."""
        done = sum(_int(rec.get("lost")) for rec in self.records.values())
        return done + sum(r.lost for conv, r in self.rows.items() if conv not in self.records)

    def counts(self) -> dict:
        """The run's counts, as report.md and the console's last line say them."""
        return {"expected": self.expected, "finished": self.finished, "ended": self.ended,
                "running": self.running, "waiting": self.waiting, "requests": self.requests,
                "answered": self.answered, "milestone_requests": self.milestone_requests,
                "milestone_answered": self.milestone_answered, "cached": self.cached, "retries": self.retries,
                "lost_answers": self.lost_answers, "sessions": len(self.sessions)}


def counts_line(c: dict, noun: str = "sessions") -> str:
    """The run's counts in one line, the same words on the console and in report.md."""
    line = (f"{c['finished']}/{c['expected']} {noun} finished ({c['running']} running, {c['waiting']} waiting); "
            f"{c['requests']} model requests, {c['answered']} answered")
    if c.get("milestone_requests"):
        line += f" (milestones: {c['milestone_answered']}/{c['milestone_requests']})"
    if c.get("cached"):
        line += f", {c['cached']} from the response cache"
    return line + f"; {c['retries']} retries; {c['lost_answers']} answers lost"
