"""The on-disk response cache and the request key it shares with run logs.

The key is a SHA-256 over everything that changes a reply: model id,
messages, tools, tool choice, generation settings, the answer index and
the sample identity (condition, trajectory, milestone). Keeping the answer
index and sample in the key keeps the three answers of a task — and two
trajectories that begin from identical worked examples — distinct.

The endpoint (`--api-base`) is not in the key: where a model is reached is operational, as it is
not part of a run's identity (log.OPERATIONAL_KEYS), so a run resumed against a new endpoint reuses
the replies its log holds, and a cache serves a model wherever it is reached. Keys written before
(a log whose header has no key_version 2: log.KEY_VERSION) hashed the endpoint too; `legacy_keys`
computes them, so that old logs and caches are still read.

The cache is a single sqlite file; only successful replies of cacheable
models (real providers) are stored, and a reply that could not be processed
is overwritten with what replaces it (models.failed_reply). Any text is
storable: keys hash lone surrogates too (UTF-8 with surrogatepass, which
leaves every other key unchanged) and replies are stored as JSON with `\\u`
escapes. A cache that fails (disk full, a damaged file) sets `error` and
stops reading and writing: a cache is never a reason for a run to fail.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from .models import Model, Reply, Request


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode("utf-8", "surrogatepass")


class MessageDigests:
    """Chained digests of conversation prefixes: d_0 = b"", d_i = sha256(d_{i-1} + msg_i).

    A conversation's history is append-only, so the digest of its first n
    messages is memoised per (conversation, n): a milestone's 200 forks, or the
    next exploration request, hash only the messages they add."""

    MAX_CANONICAL = 100_000  # messages whose canonical form is kept (then the memo starts afresh)

    def __init__(self):
        self.memo: dict[tuple[str, int], bytes] = {}
        self.known: dict[str, int] = {}
        # id(message) -> (the message, its canonical JSON). A conversation that cannot promise an
        # append-only prefix (turn@shot drops a refused input and its notice) is hashed from its first
        # message on every request; its messages are the same objects each time, never changed once
        # sent, so each is serialised once (the message is held, so its id is not reused meanwhile).
        # Without this, JSON-encoding whole conversations was a fifth of a 20@2 run.
        self.canonical: dict[int, tuple[object, bytes]] = {}
        # (d_{i-1}, id(msg_i)) -> (msg_i, d_i): a conversation hashed from its first message again (turn@shot)
        # finds each step of its unchanged prefix here, a lookup instead of a SHA-256 over the message (a few per
        # cent of a 20@2 game run's wall time, measured). The message is held, so its id is not reused.
        self.steps: dict[tuple[bytes, int], tuple[object, bytes]] = {}

    def _canonical(self, message) -> bytes:
        known = self.canonical.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        if len(self.canonical) >= self.MAX_CANONICAL:
            self.canonical.clear()
        data = _canonical(message)
        self.canonical[id(message)] = (message, data)
        return data

    def _step(self, d: bytes, message) -> bytes:
        """sha256(d + the message's canonical JSON), memoised per (d, message)."""
        known = self.steps.get((d, id(message)))
        if known is not None and known[0] is message:
            return known[1]
        if len(self.steps) >= self.MAX_CANONICAL:
            self.steps.clear()
        nxt = hashlib.sha256(d + self._canonical(message)).digest()
        self.steps[(d, id(message))] = (message, nxt)
        return nxt

    def digest(self, messages, conv: str | None = None, prefix: int = 0) -> str:
        d, start = b"", 0
        if conv is not None and prefix:
            start = min(prefix, self.known.get(conv, 0))
            if start:
                d = self.memo[(conv, start)]
        for i in range(start, len(messages)):
            d = self._step(d, messages[i])
            if conv is not None and i < prefix:
                self.memo[(conv, i + 1)] = d
                if i + 1 > self.known.get(conv, 0):
                    self.known[conv] = i + 1
        return d.hex()


def request_key(model: Model, request: Request, digests: MessageDigests | None = None, *,
                endpoint: str | None = None) -> str:
    """The request's key in the run log and the cache; with `endpoint`, the key as worldspec wrote it before (the endpoint in it)
    for a request sent there ("" for the provider's own endpoint)."""
    meta = request.meta or {}
    if digests is None:
        digests = MessageDigests()
    payload = {
        "model": model.model_id,
        "messages": digests.digest(request.messages, meta.get("conv"), int(meta.get("prefix", 0))),
        "tools": request.tools or None,
        "tool_choice": request.tool_choice,
        "settings": {**model.settings, **request.settings},
        "answer_index": request.answer_index,
        "sample": request.sample,
    }
    if endpoint is not None:
        payload["api_base"] = endpoint
    return hashlib.sha256(_canonical(payload)).hexdigest()


def legacy_keys(model: Model, request: Request, digests: MessageDigests | None, endpoints) -> list[str]:
    """The keys of the first edition of a request for each of these endpoints (where old logs and caches keep it)."""
    return [request_key(model, request, digests, endpoint=e) for e in dict.fromkeys(endpoints)]


class CacheError(Exception):
    """The cache directory or file cannot be used at all."""


class ResponseCache:
    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        self.path = self.dir / "responses.sqlite"
        self.error: str | None = None
        self.hits = 0
        self.misses = 0
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT, reply TEXT)")
        except (OSError, sqlite3.Error) as e:
            raise CacheError(f"cannot use the response cache {self.path}: {e}") from None

    def _failed(self, e: Exception) -> None:
        self.error = f"{type(e).__name__}: {e}"

    def get(self, key: str) -> Reply | None:
        if self.error is not None:
            return None
        try:
            row = self.db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            reply = None if row is None else Reply.from_json(json.loads(row[0]))
        except (sqlite3.Error, ValueError, TypeError, AttributeError) as e:
            self._failed(e)
            return None
        if reply is None:
            self.misses += 1
        else:
            self.hits += 1
        return reply

    def put(self, key: str, model_id: str, reply: Reply) -> None:
        if self.error is not None:
            return
        try:
            self.db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?)",
                            (key, model_id, json.dumps(reply.to_json(), ensure_ascii=True)))
        except sqlite3.Error as e:
            self._failed(e)

    def close(self) -> None:
        try:
            self.db.close()
        except sqlite3.Error:
            pass
