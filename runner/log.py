"""The run log: append-only JSONL, flushed per event, the source of truth.

Line 1 is a header (`type: header`) with the run configuration and the
world's identity. Every later line is one event with a `type`, an `id` and a
timestamp `ts`: session start/end, conversation messages, model requests and
replies (with usage and latency), retries, tool calls with charges and
feedback, verdicts, lost answers, milestone and trajectory records.

Resume: ids are deterministic (derived from the conversation, milestone,
task, answer index, or the request's cache key), so a resumed run that redoes
a step finds its id already written and writes nothing; replies already in the
log are reused instead of asking the model again. Nothing is lost (every event
was flushed when it happened) and nothing is counted twice (each id appears
once). A run directory is guarded by `DIR/.lock`, an OS file lock (filelock: flock on
POSIX) that dies with its process, so a killed run never leaves a lock to break.

A reply whose processing crashed the run is followed by a `reply_failed` event carrying the
reply that replaces it (models.failed_reply): a resumed run reads that one, so it never
replays a reply into the same crash.

Any text is loggable: a line is written as UTF-8, and a line holding a lone surrogate (which
UTF-8 cannot encode) is written with JSON `\\u` escapes instead, so every code point
round-trips. The log file and its folder that cannot be created are a `RunDirError`.

Reading: `load_run(DIR)` is the one reader of a log; resume, reports, the
hindsight and volume references and the replay agent all take what they need
from the `LoggedRun` it returns.
"""
from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Collection, Iterator, Sequence

import attrs
import filelock

LOG_VERSION = 1


class RunDirError(Exception):
    """The run directory cannot be used (locked, not resumable, config mismatch)."""


class FinishedRun(RunDirError):
    """The run directory already holds this run, finished: there is nothing to do."""


class LogError(RunDirError, ValueError):
    """A log that holds an event in a shape worldspec never writes (a damaged or foreign log)."""


def read_events(path: str | Path) -> Iterator[dict]:
    """Events of a log, skipping a final line cut short by a crash."""
    with open(path, "rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                break  # partial final line: the writer died mid-write
            raw = raw.strip()
            if not raw:
                continue
            try:
                event = json.loads(raw)
            except ValueError:  # not JSON, or not UTF-8 (UnicodeDecodeError): no event of worldspec's
                continue
            if isinstance(event, dict):
                yield event


@attrs.define
class LoggedRun:
    """What a run log holds, read in one pass (the last record of a conversation wins)."""

    path: Path
    header: dict | None = None
    ids: set = attrs.field(factory=set)
    replies: dict = attrs.field(factory=dict)  # request key -> reply event
    records: dict = attrs.field(factory=dict)  # conversation -> its last trajectory record
    sessions: dict = attrs.field(factory=dict)  # session number -> its last status
    started: int = 0  # sessions begun
    errors: list = attrs.field(factory=list)  # why sessions failed
    retries: int = 0
    lost: int = 0  # calls lost to infrastructure (retries exhausted)
    tools: dict = attrs.field(factory=lambda: defaultdict(list))  # conversation -> tool events
    events: dict = attrs.field(factory=lambda: defaultdict(list))  # conv -> its events of the types asked for

    @property
    def config(self) -> dict:
        return (self.header or {}).get("config", {})

    @property
    def protocol(self) -> str:
        """The run protocol that wrote the log (logs of the first edition said "explorationbench")."""
        name = self.config.get("protocol", "milestone")
        return "milestone" if name == "explorationbench" else name

    @property
    def last_session(self) -> str | None:
        return self.sessions[max(self.sessions)] if self.sessions else None


def merged_reply(replies: dict, event: dict) -> dict:
    """The reply event a request key now stands for: a `reply_failed` keeps its reply's fields
    (system, conversation, purpose...) and replaces the reply itself."""
    if event["type"] == "reply_failed":
        return {**replies.get(event["key"], {}), **event}
    return event


def load_run(directory: str | Path, keep: Collection[str] = ()) -> LoggedRun:
    """Read DIR/log.jsonl (or a log file's path); raises FileNotFoundError when there is none.

    `keep`: event types to keep too, in log order, under their conversation (`events`; the viewer)."""
    path = Path(directory)
    if path.is_dir():
        path = path / "log.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"no run log at {path}")
    run = LoggedRun(path)
    for i, ev in enumerate(read_events(path)):
        try:
            read_event(run, i, ev, keep)
        except (TypeError, KeyError, AttributeError, LogError) as e:  # a field of another type, or missing
            raise LogError(f"{path}: event {i + 1} ({str(ev.get('type'))[:40]!r}) is not in the shape worldspec "
                           f"writes ({type(e).__name__}: {e}); the log is damaged or not a worldspec run log") from None
    return run


def not_a_run(run: LoggedRun) -> str | None:
    """Why a log that was read holds no run to report or show (no header; an authoring transcript), or None."""
    if run.header is None:
        return f"{run.path} has no header line; it is not a worldspec run log"
    if run.config.get("command") == "author":
        return (f"{run.path} is the transcript of `worldspec author`, not a run: each round's prompt, reply, "
                "draft and check are the files beside it")
    return None


def read_event(run: LoggedRun, i: int, ev: dict, keep: Collection[str]) -> None:
    """Take the I-th event EV of a log into RUN."""
    typ = ev.get("type")
    if "id" in ev:
        run.ids.add(ev["id"])
    if typ in keep and "conv" in ev:
        run.events[ev["conv"]].append(ev)
    if typ == "header" and i == 0:
        if not all(isinstance(ev.get(k, {}), dict) for k in ("config", "world")):
            raise LogError("its config and world are not objects")
        run.header = ev
    elif typ in ("reply", "reply_failed") and "key" in ev:
        run.replies[ev["key"]] = merged_reply(run.replies, ev)
    elif typ == "trajectory":
        if not isinstance(ev["record"], dict):
            raise LogError("its record is not an object")
        run.records[ev["conv"]] = ev["record"]
    elif typ == "tool":
        run.tools[ev["conv"]].append(ev)
    elif typ == "retry":
        run.retries += 1
    elif typ == "lost":
        run.lost += 1
    elif typ == "session":
        run.sessions[ev.get("session", 0)] = ev.get("status")
        run.started += ev.get("status") == "started"
        if ev.get("error"):
            run.errors.append(ev["error"])


def _repair_tail(path: Path) -> None:
    """Cut a partial final line so that appends start on a fresh line."""
    with open(path, "rb+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        if size == 0:
            return
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        # find the last newline
        pos = size - 1
        chunk = 4096
        while pos > 0:
            start = max(0, pos - chunk)
            f.seek(start)
            data = f.read(pos - start)
            i = data.rfind(b"\n")
            if i >= 0:
                f.truncate(start + i + 1)
                return
            pos = start
        f.truncate(0)


class Lock:
    """One writer per run directory: an exclusive OS lock on DIR/.lock, taken without waiting."""

    def __init__(self, directory: Path):
        self.path = directory / ".lock"
        self.lock = filelock.FileLock(self.path, timeout=0, thread_local=False)

    @property
    def held(self) -> bool:
        return self.lock.is_locked

    def acquire(self) -> None:
        try:
            self.lock.acquire()
        except filelock.Timeout:
            raise RunDirError(f"{self.path.parent} is being written by another run; wait for it to finish "
                              "or choose another --out") from None

    def release(self) -> None:
        if self.lock.is_locked:
            self.lock.release(force=True)


def encode_line(event: dict) -> bytes:
    """One log line: readable UTF-8, or JSON escapes where UTF-8 cannot say it (a lone surrogate)."""
    text = json.dumps(event, ensure_ascii=False, default=str, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(event, ensure_ascii=True, default=str, separators=(",", ":")).encode("ascii") + b"\n"


def config_diff(old: dict, new: dict) -> list[str]:
    keys = sorted(set(old) | set(new))
    out = []
    for k in keys:
        a, b = old.get(k), new.get(k)
        if json.dumps(a, sort_keys=True, default=str) != json.dumps(b, sort_keys=True, default=str):
            out.append(f"{k}: log has {json.dumps(a, default=str)}, now {json.dumps(b, default=str)}")
    return out


class RunLog:
    """Open (or resume) DIR/log.jsonl under a lock."""

    def __init__(self, directory: str | Path, *, config: dict, world: dict, resume: bool = False,
                 overwrite: Sequence[str] | None = None):
        """`overwrite`: start afresh over a run already in DIR, removing its log and the files matching
        these patterns (its outputs) under the lock; None keeps an existing run."""
        self.dir = Path(directory)
        self.path = self.dir / "log.jsonl"
        self.f = None
        self.ids: set[str] = set()
        self.replies: dict[str, dict] = {}  # request key -> reply (or reply_failed) event
        self.sessions = 0
        self.resumed = False
        self.on_failure: list[Callable[[BaseException], None]] = []  # run before a failed session closes
        self.watchers: list[Callable[[dict], None]] = []  # see every event written (the live display)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self.lock = Lock(self.dir)
            self.lock.acquire()
        except OSError as e:
            raise RunDirError(f"cannot use {self.dir} as the run directory: {e.strerror or e}") from None
        try:
            if overwrite is not None:
                for pattern in ("log.jsonl", *overwrite):
                    for stale in self.dir.glob(pattern):
                        stale.unlink()
            self._open(config, world, resume)
        except OSError as e:
            self.lock.release()
            raise RunDirError(f"cannot write the run log {self.path}: {e.strerror or e}") from None
        except BaseException:
            self.lock.release()
            raise

    @property
    def closed(self) -> bool:
        return self.f is None or self.f.closed

    def _open(self, config: dict, world: dict, resume: bool) -> None:
        exists = self.path.exists() and self.path.stat().st_size > 0
        if exists:
            if resume:
                _repair_tail(self.path)
            before = load_run(self.path)
            if before.header is None:
                raise RunDirError(f"{self.path} has no header line; it is not a worldspec run log")
            diffs = config_diff(before.header.get("config", {}), config) + \
                config_diff(before.header.get("world", {}), world)
            if not resume:
                raise self.occupied(before, diffs)
            if diffs:
                raise RunDirError(
                    f"cannot resume {self.dir}: the run was started with a different configuration:\n  "
                    + "\n  ".join(diffs))
            self.header = before.header
            self.ids = before.ids
            self.replies = before.replies
            self.sessions = before.started
            self.resumed = True
            self.f = open(self.path, "ab")
        else:
            self.f = open(self.path, "wb")
            self.header = {"type": "header", "id": "header", "log_version": LOG_VERSION,
                           "created": time.time(), "config": config, "world": world}
            self._write(self.header)
            self.ids.add("header")
        self.sessions += 1
        self.session = self.sessions
        self.emit({"type": "session", "id": f"session:{self.session}:started", "status": "started",
                   "session": self.session, "pid": os.getpid(), "resume": self.resumed})

    def occupied(self, before: LoggedRun, diffs: list[str]) -> RunDirError:
        """Why a run cannot start in a directory that holds one (without --resume or --overwrite)."""
        if before.last_session == "success" and not diffs:
            return FinishedRun(f"{self.dir} already holds this run, finished (pass --overwrite to run it again "
                               "from the start, or choose another --out).")
        if diffs:
            return RunDirError(
                f"{self.dir} already holds a run with another configuration:\n  " + "\n  ".join(diffs)
                + "\nChoose another --out, or pass --overwrite to replace that run.")
        return RunDirError(f"{self.dir} holds an unfinished run of this configuration: continue it with "
                           "--resume (and the same options), or pass --overwrite to start afresh.")

    def _write(self, event: dict) -> None:
        try:
            self.f.write(encode_line(event))
            self.f.flush()
        except OSError as e:  # a full disk: name the file (a write error does not)
            raise OSError(e.errno, e.strerror, str(self.path)) from e

    def emit(self, event: dict) -> bool:
        """Append one event unless its id is already in the log. Returns whether written."""
        eid = event.get("id")
        if eid is not None:
            if eid in self.ids:
                return False
            self.ids.add(eid)
        event.setdefault("ts", time.time())
        self._write(event)
        if event.get("type") in ("reply", "reply_failed") and "key" in event:
            self.replies[event["key"]] = merged_reply(self.replies, event)
        for watch in self.watchers:
            watch(event)
        return True

    def close(self, status: str, error: str | None = None) -> None:
        """Write the session's end and release the lock (the lock is released even when the disk is full)."""
        try:
            if not self.closed:
                ev = {"type": "session", "id": f"session:{self.session}:{status}", "status": status,
                      "session": self.session}
                if error:
                    ev["error"] = error
                try:
                    self.emit(ev)
                finally:
                    self.f.close()
        except OSError:
            if status == "success":
                raise
        finally:
            self.lock.release()


def discard_unanswered(directory: str | Path, *, created: bool) -> bool:
    """Remove a run log no model ever answered (a run a fatal provider error stopped before anything
    was charged), so that the same command starts afresh; the folder too when the run created it.
    Returns whether the log was removed. A log holding any reply or an earlier session is kept."""
    directory = Path(directory)
    try:
        run = load_run(directory)
    except (FileNotFoundError, OSError):
        return False
    if run.replies or run.started > 1 or run.records:
        return False
    for name in ("log.jsonl", ".lock"):
        (directory / name).unlink(missing_ok=True)
    if created:
        try:
            directory.rmdir()
        except OSError:  # something else was written there: leave it
            pass
    return True
