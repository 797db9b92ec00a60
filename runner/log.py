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
once). A run directory is guarded by `DIR/.lock`, an OS file lock (flock) that dies with its
process, so a killed run never leaves a lock to break; the writer checks before every write that
`DIR/.lock` is still the file it locked, and stops when it was deleted or replaced.

The log is a regular file of the run folder's own: a symbolic link, a FIFO, a device or a folder
named log.jsonl is refused (a `LogError`) by every reader and writer, before anything is read or
written. Resuming reads the whole log and verifies its header and configuration before it writes
anything; a final line cut short is then cut by writing a new file renamed over the old one, and
the log is opened to append only. Every event read is checked against the shape worldspec writes
(`malformed`): a field of another type is a `LogError` naming the line and the field, never a
crash later. Lines are parsed with worldspec.safejson (a nesting limit) and at most `MAX_LINE` long.

Size: lines are written in logcodec's compact encoding (log_version 2), where a request names the
messages it shares with its conversation's previous request and any long text already written is
a pointer, so a log grows with what happened, not with the length of its conversations;
`read_events` expands every line back into the event that was written. Logs of version 1 are read
as they are, and resumed in version 1.

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

import errno
import fcntl
import json
import os
import stat
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Collection, Iterator, Sequence

import attrs

from worldspec.safejson import loads

from .logcodec import CodecError, Decoder, Encoder
from .tally import Tally

KEY_VERSION = 2  # the header's key_version: 2, request keys leave the endpoint out (cache.request_key); 1, not

LOG_VERSION = 2  # 2: the compact lines of logcodec; 1: every event spelled out (still read, and resumed as 1)
MAX_LINE = 64 << 20  # bytes of one line: far above any event worldspec writes (replies are cut at 256k chars)


class RunDirError(Exception):
    """The run directory cannot be used (locked, not resumable, config mismatch)."""


class FinishedRun(RunDirError):
    """The run directory already holds this run, finished: there is nothing to do."""


class LogError(RunDirError, ValueError):
    """A log that holds an event in a shape worldspec never writes (a damaged or foreign log)."""


KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def not_regular(path: Path, st: os.stat_result) -> LogError:
    what = next((name for test, name in KINDS if test(st.st_mode)), "not a regular file")
    return LogError(f"{path} is {what}; a run log must be a regular file inside its run folder "
                    "(nothing was read or written)")


def log_status(path: str | Path) -> os.stat_result | None:
    """The log file's status (None: there is none); a LogError when it is not a regular file of its own."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(Path(path), st)
    return st


def open_log(path: str | Path, flags: int) -> int:
    """A descriptor of the regular file PATH, never following a symbolic link nor blocking on a FIFO."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise not_regular(Path(path), st)
    os.set_blocking(fd, True)
    return fd


def open_for_reading(path: str | Path):
    """The log at PATH opened to read; a LogError when it is a link, a FIFO, a device or a folder."""
    log_status(path)
    try:
        return os.fdopen(open_log(path, os.O_RDONLY), "rb")
    except OSError as e:
        if e.errno == errno.ELOOP:  # replaced by a link after it was looked at
            raise LogError(f"{path} is a symbolic link; a run log must be a regular file inside its run folder") \
                from None
        raise


class LogReader:
    """The lines of one log, read once: `lines()` gives (line number, event); then `complete` is the
    byte length of its complete lines and `status` the file's identity."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.complete = 0
        self.status: os.stat_result | None = None
        self.version = 1

    def lines(self) -> Iterator[tuple[int, dict]]:
        decoder, first = None, True
        with open_for_reading(self.path) as f:
            self.status = os.fstat(f.fileno())
            n = 0
            while True:
                raw = f.readline(MAX_LINE + 1)
                if not raw:
                    return
                n += 1
                if not raw.endswith(b"\n"):
                    if len(raw) > MAX_LINE:
                        raise LogError(f"{self.path}: line {n} is longer than {MAX_LINE >> 20} MB; worldspec "
                                       "writes no such line: the log is damaged or not a worldspec run log")
                    return  # partial final line: the writer died mid-write
                self.complete += len(raw)
                raw = raw.strip()
                if not raw:
                    continue
                try:
                    event = loads(raw)
                except ValueError:  # not JSON, too deep, or not UTF-8 (UnicodeDecodeError): no event of worldspec's
                    continue
                if not isinstance(event, dict):
                    continue
                if first and event.get("type") == "header":
                    self.version = event.get("log_version", 1)
                    if type(self.version) is not int or not 1 <= self.version <= LOG_VERSION:
                        raise LogError(f"{self.path}: line {n}: log_version {str(self.version)[:20]} is not one this "
                                       f"worldspec reads (1 to {LOG_VERSION}); a newer worldspec wrote it?")
                    decoder = Decoder() if self.version >= 2 else None  # the header's texts may be pointed to
                if decoder is not None:
                    try:
                        event = decoder.decode(event)
                    except CodecError as e:
                        raise LogError(f"{self.path}: line {n} ({str(event.get('type'))[:40]!r}): {e}; the log "
                                       "is damaged or not a worldspec run log") from None
                first = False
                yield n, event


def read_events(path: str | Path) -> Iterator[dict]:
    """Events of a log as they were written (compact lines expanded), skipping a final line cut short
    by a crash and lines that are not JSON objects; a LogError for a file that is not a regular one."""
    for _, event in LogReader(path).lines():
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
    complete: int = 0  # bytes of complete lines (a longer file ends in a line cut short)
    status: os.stat_result | None = None  # the file that was read
    version: int = 1  # its log_version
    tally: Tally = attrs.field(factory=Tally)  # the counts of its events (report.md and the console share them)

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


def load_run(directory: str | Path, keep: Collection[str] = (), strict: bool = False) -> LoggedRun:
    """Read DIR/log.jsonl (or a log file's path); raises FileNotFoundError when there is none, and
    LogError (naming the line and the field) for a file or an event worldspec does not write.

    `keep`: event types to keep too, in log order, under their conversation (`events`; the viewer);
    `strict`: check every field a resumed run reads (`malformed`)."""
    path = Path(directory)
    if path.is_dir():
        path = path / "log.jsonl"
    if log_status(path) is None:
        raise FileNotFoundError(f"no run log at {path}")
    run = LoggedRun(path)
    reader = LogReader(path)
    for i, (n, ev) in enumerate(reader.lines()):
        problem = malformed(ev, strict)
        if problem is None:
            try:
                read_event(run, i, ev, keep)
            except LogError as e:
                problem = str(e)
        if problem is not None:
            raise LogError(f"{path}: line {n} ({str(ev.get('type'))[:40]!r}) is not in the shape worldspec writes: "
                           f"{problem}; the log is damaged or not a worldspec run log")
    run.complete, run.status, run.version = reader.complete, reader.status, reader.version
    return run


NONE = type(None)
COMMON = {"type": (str,), "id": (str, NONE), "conv": (str, NONE), "ts": (int, float)}
SHAPES = {  # event type -> field -> the types worldspec writes it with (fields the readers rely on)
    "header": {"config": (dict,), "world": (dict,), "log_version": (int,)},
    "session": {"session": (int,), "status": (str,), "error": (str, NONE), "pid": (int,), "resume": (bool,)},
    "request": {"key": (str,), "messages": (list,), "prefix": (int,), "t": (int, NONE), "purpose": (str, NONE)},
    "reply": {"key": (str,), "purpose": (str, NONE)},
    "reply_failed": {"key": (str,)},
    "trajectory": {"conv": (str,), "record": (dict,)},
    "tool": {"conv": (str,)},
}
REQUIRED = {"session": ("session",), "reply": ("key",), "reply_failed": ("key",), "trajectory": ("conv", "record"),
            "tool": ("conv",)}
REPLY = {"content": (str, NONE), "tool_calls": (list, NONE), "usage": (dict, NONE), "finish_reason": (str, NONE),
         "reasoning_content": (str, NONE), "thinking_blocks": (list, NONE)}
TYPE_NAMES = {str: "a text", int: "an integer", float: "a number", bool: "true or false", dict: "an object",
              list: "a list", NONE: "null"}


def of_type(value, types: tuple) -> bool:
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    return isinstance(value, types)


def wrong(field: str, value, types: tuple) -> str:
    said = TYPE_NAMES.get(type(value), type(value).__name__)
    return (f"its field {field!r} is {said} ({str(value)[:40]!r}); worldspec writes "
            + " or ".join(TYPE_NAMES[t] for t in types))


def malformed(ev: dict, strict: bool = False) -> str | None:
    """Why event EV is not in the shape worldspec writes (a field missing or of another type), or None.
    `strict`: also every field a resumed run reads (a reply's own fields); the viewer shows odd ones."""
    typ = ev.get("type")
    shape = {**COMMON, **SHAPES.get(typ, {})} if isinstance(typ, str) else COMMON
    for field in REQUIRED.get(typ, ()) if isinstance(typ, str) else ():
        if field not in ev:
            return f"its field {field!r} is missing"
    for field, types in shape.items():
        if field in ev and not of_type(ev[field], types):
            return wrong(field, ev[field], types)
    if typ in ("reply", "reply_failed") and strict:  # a reply to be replayed (resume): Reply.from_json reads it
        reply = ev.get("reply")
        if not isinstance(reply, dict):
            return wrong("reply", reply, (dict,))
        for field, types in REPLY.items():
            if field in reply and not of_type(reply[field], types):
                return wrong(f"reply.{field}", reply[field], types)
        if not all(isinstance(tc, dict) and isinstance(tc.get("function", {}), dict)
                   for tc in reply.get("tool_calls") or ()):
            return "its field 'reply.tool_calls' holds a call that is not an object"
        if not all(of_type(v, (int, NONE)) for v in (reply.get("usage") or {}).values()):
            return "its field 'reply.usage' holds a count that is not an integer"
    return None


def not_a_run(run: LoggedRun) -> str | None:
    """Why a log that was read holds no run to report or show (no header; an authoring transcript), or None."""
    if run.header is None:
        return f"{run.path} has no header line; it is not a worldspec run log"
    if run.config.get("command") == "author":
        return (f"{run.path} is the transcript of `worldspec author`, not a run: each round's prompt, reply, "
                "draft and check are the files beside it")
    return None


def read_event(run: LoggedRun, i: int, ev: dict, keep: Collection[str]) -> None:
    """Take the I-th event EV of a log (in the shape `malformed` checks) into RUN."""
    typ = ev.get("type")
    if "id" in ev:
        run.ids.add(ev["id"])
    if typ != "header" or i == 0:
        run.tally.add(ev)
    if typ in keep and "conv" in ev:
        run.events[ev["conv"]].append(ev)
    if typ == "header" and i == 0:
        run.header = ev
    elif typ in ("reply", "reply_failed"):
        run.replies[ev["key"]] = merged_reply(run.replies, ev)
    elif typ == "trajectory":
        run.records[ev["conv"]] = ev["record"]
    elif typ == "tool":
        run.tools[ev["conv"]].append(ev)
    elif typ == "retry":
        run.retries += 1
    elif typ == "lost":
        run.lost += 1
    elif typ == "session":
        run.sessions[ev["session"]] = ev.get("status")
        run.started += ev.get("status") == "started"
        if ev.get("error"):
            run.errors.append(ev["error"])


def repair_tail(path: Path, complete: int) -> None:
    """Cut a final line that a crash left partial, by writing the complete lines to a new file and
    renaming it over the log (the old file is never written)."""
    tmp = path.with_name(f".{path.name}.repair")
    tmp.unlink(missing_ok=True)
    with open_for_reading(path) as src, os.fdopen(open_log(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb") as dst:
        left = complete
        while left:
            chunk = src.read(min(left, 1 << 20))
            if not chunk:
                break
            dst.write(chunk)
            left -= len(chunk)
        dst.flush()
        os.fsync(dst.fileno())
    os.replace(tmp, path)


class LockLost(RunDirError):
    """DIR/.lock no longer names the file this run locked: another run may take the folder, so this one stops."""


class Lock:
    """One writer per run directory: an exclusive OS lock (flock) on DIR/.lock, taken without waiting.

    It dies with its process, so a killed run never leaves a lock to break. `check()` says whether
    DIR/.lock is still the locked file (by its inode): a lock file deleted or replaced under a run
    would let a second writer in, so the log checks it before every write and stops instead."""

    def __init__(self, directory: Path):
        self.path = directory / ".lock"
        self.fd: int | None = None
        self.identity: tuple[int, int] | None = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise RunDirError(f"{self.path} is a symbolic link; the run folder's lock must be a file of its "
                                  "own") from None
            raise
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise RunDirError(f"{self.path} is not a regular file; the run folder's lock must be one")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunDirError(f"{self.path.parent} is being written by another run; wait for it to finish "
                              "or choose another --out") from None
        self.fd, self.identity = fd, (st.st_dev, st.st_ino)
        try:
            self.check()  # the file was replaced between opening and locking it: someone else's now
        except LockLost:
            self.release()
            raise RunDirError(f"{self.path.parent} is being written by another run; wait for it to finish "
                              "or choose another --out") from None

    def check(self) -> None:
        """Raise LockLost unless DIR/.lock is still the file this lock holds."""
        try:
            st = os.lstat(self.path)
            same = (st.st_dev, st.st_ino) == self.identity
        except OSError:
            same = False
        if not same:
            raise LockLost(f"{self.path} was removed or replaced while this run was writing {self.path.parent}; "
                           "stopping, so that no two runs write one log (continue with --resume once no other run "
                           "writes it)")

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor lets go of the flock
            self.fd = self.identity = None


def encode_line(event: dict) -> bytes:
    """One log line: readable UTF-8, or JSON escapes where UTF-8 cannot say it (a lone surrogate)."""
    text = json.dumps(event, ensure_ascii=False, default=str, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(event, ensure_ascii=True, default=str, separators=(",", ":")).encode("ascii") + b"\n"


# Connection details: recorded, never part of a run's identity (a run resumes against a new --api-base).
OPERATIONAL_KEYS = ("api_base",)
# Keys added to the identity after logs were written without them, and the behaviour those logs had.
LEGACY_DEFAULTS = {"rule_prompt": "open", "grading": "lenient"}


def config_diff(old: dict, new: dict) -> list[str]:
    """The identity keys on which a log's header and a command differ, each said in a line."""
    keys = sorted((set(old) | set(new)) - set(OPERATIONAL_KEYS))
    out = []
    for k in keys:
        a, b = old.get(k, LEGACY_DEFAULTS.get(k)), new.get(k)
        if json.dumps(a, sort_keys=True, default=str) != json.dumps(b, sort_keys=True, default=str):
            out.append(f"{k}: log has {json.dumps(a, default=str)}, now {json.dumps(b, default=str)}")
    return out


class RunLog:
    """Open (or resume) DIR/log.jsonl under a lock.

    The log must be a regular file of the run folder's own (never a link, a FIFO or a device); it is
    read and its header and configuration verified before anything is written; it is opened to append
    only; a final line cut short by a crash is cut by writing a new file renamed over it; and the lock
    is checked before every write (Lock.check)."""

    def __init__(self, directory: str | Path, *, config: dict, world: dict, resume: bool = False,
                 overwrite: Sequence[str] | None = None, options: dict | None = None):
        """`overwrite`: start afresh over a run already in DIR, removing its log and the files matching
        these patterns (its outputs) under the lock; None keeps an existing run. `options`: the command's
        options, kept in a new log's header so that `--resume` needs none of them typed again."""
        self.options = options
        self.dir = Path(directory)
        self.path = self.dir / "log.jsonl"
        self.f = None
        self.ids: set[str] = set()
        self.replies: dict[str, dict] = {}  # request key -> reply (or reply_failed) event
        self.sessions = 0
        self.resumed = False
        self.encoder: Encoder | None = None  # None: a log of version 1, written in full
        self.on_failure: list[Callable[[BaseException], None]] = []  # run before a failed session closes
        self.watchers: list[Callable[[dict], None]] = []  # see every event written (the live display)
        self.tally = Tally()  # the counts of every event in the log (the live display reads them)
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
                        if stale.is_dir() and not stale.is_symlink():
                            raise RunDirError(f"{stale} is a folder; --overwrite removes a run's files, not folders")
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

    @property
    def legacy_endpoints(self) -> tuple[str, ...]:
        """A log whose request keys hashed the endpoint (a header without key_version): the endpoint its
        first session used ("" for the provider's own), for looking its replies up; () otherwise."""
        version = self.header.get("key_version", 1)
        if isinstance(version, int) and version >= 2:
            return ()
        return (str(self.header.get("config", {}).get("api_base") or ""),)

    def _open(self, config: dict, world: dict, resume: bool) -> None:
        st = log_status(self.path)
        if st is not None and st.st_size > 0:
            before = load_run(self.path, strict=True)  # reads only: nothing is written before the header is verified
            if before.header is None:
                raise RunDirError(f"{self.path} has no header line; it is not a worldspec run log (it was left "
                                  "as it is)")
            diffs = config_diff(before.header.get("config", {}), config) + \
                config_diff(before.header.get("world", {}), world)
            if not resume:
                raise self.occupied(before, diffs)
            if diffs:
                raise RunDirError(
                    f"cannot resume {self.dir}: the run was started with a different configuration:\n  "
                    + "\n  ".join(diffs))
            if before.status.st_size > before.complete:
                repair_tail(self.path, before.complete)
                identity = log_status(self.path)
            else:
                identity = before.status
            self.header = before.header
            self.ids = before.ids
            self.replies = before.replies
            self.tally = before.tally
            self.sessions = before.started
            self.resumed = True
            self.encoder = Encoder() if before.version >= 2 else None
            self._append(identity)
        else:
            self._append(None)
            self.header = {"type": "header", "id": "header", "log_version": LOG_VERSION, "key_version": KEY_VERSION,
                           "created": time.time(), "config": config, "world": world}
            if self.options is not None:
                self.header["options"] = self.options
            self.encoder = Encoder()
            self._write(self.header)
            self.ids.add("header")
            self.tally.add(self.header)
        self.sessions += 1
        self.session = self.sessions
        self.emit({"type": "session", "id": f"session:{self.session}:started", "status": "started",
                   "session": self.session, "pid": os.getpid(), "resume": self.resumed})

    def _append(self, identity: os.stat_result | None) -> None:
        """Open the log to append only: the file that was read (IDENTITY), or a new empty one (None)."""
        fd = open_log(self.path, os.O_WRONLY | os.O_APPEND | (os.O_CREAT if identity is None else 0))
        st = os.fstat(fd)
        if (identity is None and st.st_size) or \
                (identity is not None and (st.st_dev, st.st_ino) != (identity.st_dev, identity.st_ino)):
            os.close(fd)
            raise RunDirError(f"{self.path} changed while it was being opened; another program writes it")
        self.f = os.fdopen(fd, "ab")

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
        self.lock.check()
        line = encode_line(self.encoder.encode(event) if self.encoder is not None else event)
        try:
            self.f.write(line)
            self.f.flush()
        except OSError as e:  # a full disk: name the file (a write error does not)
            if self.encoder is not None:
                self.encoder.reset()  # the line may be cut: nothing may point into it
            raise OSError(e.errno, e.strerror, str(self.path)) from e
        if self.encoder is not None:
            self.encoder.wrote(event)

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
        self.tally.add(event)
        for watch in self.watchers:
            watch(event)
        return True

    def close(self, status: str, error: str | None = None) -> None:
        """Write the session's end and release the lock (the lock is released even when the disk is full;
        nothing is written when the lock was lost)."""
        try:
            if not self.closed:
                ev = {"type": "session", "id": f"session:{self.session}:{status}", "status": status,
                      "session": self.session}
                if error:
                    ev["error"] = error
                try:
                    self.emit(ev)
                except LockLost:
                    if status == "success":
                        raise
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
    except (FileNotFoundError, OSError, LogError):
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


def logged_options(directory: str | Path) -> dict:
    """The command options a run's header kept (empty: a log written before they were kept, or none)."""
    path = Path(directory) / "log.jsonl"
    if log_status(path) is None:
        return {}
    for event in read_events(path):
        if event.get("type") == "header" and isinstance(event.get("options"), dict):
            return event["options"]
        return {}
    return {}

