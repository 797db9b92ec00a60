"""How one model call is made: log replay, cache, concurrency limit, retries, logging.

`Runtime.call(model, request)` is the single path from the protocol to a
model. In order it: reuses a reply already in the run log (resume), reuses a
reply from the on-disk cache, or asks the model under that model's
`PriorityLimiter` (exploration requests go first: they are the critical path),
retrying transient provider errors with backoff. Every request, reply, retry
and loss is written to the log.

`Runtime.grader(world)` is the single path from a protocol to a world's code
(probe, verify, requires, rule-report grading), so how untrusted text is
evaluated (today: in process, grading serialised) is decided in one place.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import heapq
import itertools
import json
import time

from .answers import grade_rule_report
from .cache import MessageDigests, ResponseCache, request_key
from .log import RunLog
from .models import (FatalError, LostError, Model, RejectedError, Reply, Request, RetryPolicy,
                     TransientError, call_with_retries, classify_provider_error)

PRIORITY_EXPLORE = 0
PRIORITY_MILESTONE = 1


class PriorityLimiter:
    """A per-model limit on requests in flight, serving exploration first.

    Waiters are served lowest priority value first (FIFO within a priority).
    Each trajectory that is exploring reserves one slot (`reserve`/`unreserve`,
    at most limit-1 in all): milestone requests may not take a reserved slot,
    so an exploration request — the critical path — never waits behind a
    burst of milestone answers for longer than it takes one of its own
    chain's slots to come free."""

    def __init__(self, limit: int):
        self.limit = max(1, int(limit))
        self.in_use = 0
        self.explore_in_use = 0
        self.reserved = 0
        self._waiters: list = []
        self._seq = itertools.count()

    def _can(self, priority: int) -> bool:
        if self.in_use >= self.limit:
            return False
        if priority == PRIORITY_EXPLORE:
            return True
        idle_reserved = max(0, min(self.reserved, self.limit - 1) - self.explore_in_use)
        return self.in_use + idle_reserved < self.limit

    def _take(self, priority: int) -> None:
        self.in_use += 1
        if priority == PRIORITY_EXPLORE:
            self.explore_in_use += 1

    async def acquire(self, priority: int = PRIORITY_EXPLORE) -> None:
        if not self._waiters and self._can(priority):
            self._take(priority)
            return
        fut = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._seq), fut))
        self._wake()  # an exploration request may pass milestone waiters at once
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release(priority)  # we were handed a slot but will not use it
            raise

    def release(self, priority: int = PRIORITY_EXPLORE) -> None:
        self.in_use -= 1
        if priority == PRIORITY_EXPLORE:
            self.explore_in_use -= 1
        self._wake()

    def reserve(self) -> None:
        self.reserved += 1

    def unreserve(self) -> None:
        self.reserved -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            priority, _, fut = self._waiters[0]
            if fut.done():
                heapq.heappop(self._waiters)
                continue
            if not self._can(priority):
                return
            heapq.heappop(self._waiters)
            self._take(priority)
            fut.set_result(None)


class Grader:
    """A world's code as a run calls it: probes, verification, requirements, rule reports.

    Probes run at once (they are the exploration chain). Grading is deterministic,
    so results are memoised (the three answers of a task are often the same text;
    `requires` is the same at every milestone), and it is CPU work on the event
    loop: calls are serialised and each is followed by a yield, so a burst of
    milestone answers never holds up exploration for longer than one verification."""

    def __init__(self, world):
        self.world = world
        self._verdicts: dict[tuple[str, str], object] = {}
        self._requires: dict[str, frozenset] = {}
        self._lock: asyncio.Lock | None = None

    async def _run(self, fn, *args):
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            result = fn(*args)
        await asyncio.sleep(0)
        return result

    async def probe(self, text: str):
        """World.probe: the feedback of one exploration call."""
        return self.world.probe(text)

    async def verify(self, task, answer: str):
        key = (task.id, answer)
        v = self._verdicts.get(key)
        if v is None:
            v = self._verdicts[key] = await self._run(self.world.verify, task, answer)
        return v

    async def requires(self, task) -> frozenset:
        r = self._requires.get(task.id)
        if r is None:
            r = self._requires[task.id] = frozenset(await self._run(self.world.requires, task))
        return r

    async def rule_report(self, text: str | None) -> dict:
        return await self._run(grade_rule_report, self.world, text)


class CallStats:
    """How a run's model calls were served."""

    def __init__(self):
        self.live = 0
        self.from_log = 0
        self.from_cache = 0
        self.retries = 0
        self.lost = 0

    def as_dict(self) -> dict:
        return {"calls_live": self.live, "calls_from_log": self.from_log, "calls_from_cache": self.from_cache,
                "retries": self.retries, "lost": self.lost}


class Runtime:
    def __init__(self, log: RunLog, *, cache: ResponseCache | None = None,
                 max_connections: int = 16, retry: RetryPolicy | None = None, progress=None):
        self.log = log
        self.cache = cache
        self.max_connections = max_connections
        self.retry = retry or RetryPolicy()
        self.progress = progress
        self.limiters: dict[str, PriorityLimiter] = {}
        self.stats = CallStats()
        self.fatal: str | None = None  # once set, no new request is sent
        self._graders: dict = {}  # world -> its Grader (worlds compare by identity)
        self.digests = MessageDigests()

    def grader(self, world) -> Grader:
        g = self._graders.get(world)
        if g is None:
            g = self._graders[world] = Grader(world)
        return g

    def emit(self, event: dict) -> bool:
        return self.log.emit(event)

    def emit_record(self, kind: str, key: str, conv: str, record: dict, **fields) -> None:
        """Log a milestone or trajectory record under an id that changes when the record does
        (a resumed run that repairs a lost answer writes a new record; an unchanged one, nothing)."""
        digest = hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()[:16]
        self.emit({"type": kind, "id": f"{kind}:{key}:{digest}", "conv": conv, **fields, "record": record})

    def limiter(self, model: Model) -> PriorityLimiter:
        lim = self.limiters.get(model.name)
        if lim is None:
            lim = self.limiters[model.name] = PriorityLimiter(model.max_connections or self.max_connections)
        return lim

    async def call(self, model: Model, request: Request) -> Reply:
        key = request_key(model, request, self.digests)
        meta = request.meta
        fields = {
            "key": key, "system": model.name, "conv": meta.get("conv"),
            "condition": meta.get("condition"), "trajectory": meta.get("trajectory"),
            "t": meta.get("t"), "step": meta.get("step"), "purpose": request.purpose,
            "answer_index": request.answer_index,
        }
        if self.fatal is not None:
            raise FatalError(self.fatal)
        logged = self.log.replies.get(key)
        if logged is not None:
            self.stats.from_log += 1
            return Reply.from_json(logged["reply"])
        prefix = int(meta.get("prefix", 0))
        self.emit({"type": "request", "id": f"req:{key}", **fields, "prefix": prefix,
                   "messages": list(request.messages[prefix:]),
                   "tools": [t["function"]["name"] for t in request.tools or ()],
                   "tool_choice": request.tool_choice, "settings": request.settings})
        if self.cache is not None and model.cacheable:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.from_cache += 1
                self.emit({"type": "reply", "id": f"reply:{key}", **fields, "cached": True,
                           "latency": 0.0, "attempts": 0, "reply": hit.to_json()})
                return hit

        limiter = self.limiter(model)
        priority = PRIORITY_EXPLORE if request.purpose == "explore" else PRIORITY_MILESTONE
        attempts = 0

        async def once() -> Reply:
            nonlocal attempts
            await limiter.acquire(priority)
            try:
                if self.fatal is not None:
                    raise FatalError(self.fatal)
                attempts += 1
                return await model.complete(request)
            except (FatalError, TransientError, asyncio.CancelledError):
                raise
            except Exception as e:  # a model implementation that raised something raw
                raise classify_provider_error(e) from e
            finally:
                limiter.release(priority)

        def on_retry(attempt: int, err: TransientError, delay: float) -> None:
            self.stats.retries += 1
            self.emit({"type": "retry", **fields, "attempt": attempt, "error": str(err),
                       "delay": round(delay, 3)})

        t0 = time.perf_counter()
        try:
            reply = await call_with_retries(once, self.retry, on_retry)
        except LostError as e:
            self.stats.lost += 1
            self.emit({"type": "lost", **fields, "error": str(e)})
            raise
        except RejectedError as e:  # this request only: the protocol decides what it costs
            self.emit({"type": "rejected", **fields, "reason": e.reason, "error": str(e)})
            raise
        except FatalError as e:
            if self.fatal is None:
                self.fatal = str(e)
                self.emit({"type": "error", **fields, "error": str(e)})
            raise
        latency = time.perf_counter() - t0
        self.stats.live += 1
        self.emit({"type": "reply", "id": f"reply:{key}", **fields, "cached": False,
                   "latency": round(latency, 4), "attempts": attempts, "reply": reply.to_json()})
        if self.cache is not None and model.cacheable:
            self.cache.put(key, model.model_id, reply)
        return reply


@contextlib.contextmanager
def session_outcome(log: RunLog, cache: ResponseCache | None = None):
    """Close the run log with how a session ended when it did not succeed.

    On success the caller writes its closing events, then closes the log itself."""
    status, error = "error", None
    try:
        yield
        status = "success"
    except FatalError as e:
        error = str(e)
        raise
    except (asyncio.CancelledError, KeyboardInterrupt):
        status = "interrupted"
        raise
    except BaseException as e:
        error = f"{type(e).__name__}: {e}"
        raise
    finally:
        if status != "success":
            log.close(status, error)
            if cache is not None:
                cache.close()

