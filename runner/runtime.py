"""How one model call is made: log replay, cache, concurrency limit, retries, logging.

`Runtime.call(model, request)` is the single path from the protocol to a
model. In order it: reuses a reply already in the run log (resume), reuses a
reply from the on-disk cache, or asks the model under that model's
`PriorityLimiter` (exploration requests go first: they are the critical path),
retrying transient provider errors with backoff. Every request, reply, retry
and loss is written to the log. A reply is bounded (models.bounded_reply: well
typed, at most MAX_REPLY_CHARS) before anything sees it. When processing a
reply raises (a bug, a hostile reply), the reply is recorded as failed (log
and cache), so a resumed run gets models.failed_reply instead of the crash.

`Runtime.grader(world)` is the single path from a protocol to a world's code
(probe, verify, requires, rule-report grading, a turn@shot box's sessions and test
games, a pool match's rounds): in the sandbox's worker pool under wall-clock deadlines
(sandbox.py; sessions: sessions.py), or in process for a world no worker can compile,
as the log's `sandbox` event says.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import heapq
import itertools
import json
import time

import attrs

from worldspec.compiler.api import Explorable, Feedback, ScoredVerdict, Verdict

from .answers import grade_rule_report, parse_rule_report
from .cache import MessageDigests, ResponseCache, legacy_keys, request_key
from .log import RunLog
from .models import (FatalError, LostError, Model, ModelError, RejectedError, Reply, Request, RetryPolicy,
                     TransientError, bounded_reply, call_with_retries, classify_provider_error, failed_reply)
from .sandbox import (Deadlines, Mismatch, Overrun, RemoteSpecError, Sandbox, Unavailable, evaluate, origin,
                      overrun_feedback, shared, unportable)
from .sessions import Exploration, NotPooled, PlayedGame, PlayedMatch

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
    """A world's code as a run calls it: probes, sessions and test games, verification, requirements, rule reports.

    Every call evaluates untrusted text, so each runs in the sandbox's worker pool under a
    wall-clock deadline (sandbox.py) when the world can be compiled there; otherwise (a world of
    a kind registered only in this process, or not loaded from a file) in process, as the
    `sandbox` event of the log says. A call that overruns its deadline is logged (`overrun`) and
    becomes a result, never an exception: a probe's feedback says the program ran too long (in a
    session too, which goes on without that input), a test game ends there, an answer scores zero, a
    rule report grades as wrong, a task's requirements are all its rules.

    Probes run at once (they are the exploration chain). Grading is deterministic, so results
    are memoised (the three answers of a task are often the same text; `requires` is the same at
    every milestone). In the pool, grading calls in flight are fewer than the workers, so a
    probe finds a free one; in process, grading is serialised on the event loop and each call is
    followed by a yield, so a burst of milestone answers never holds up exploration for longer
    than one verification."""

    def __init__(self, world, sandbox: Sandbox | None = None, emit=lambda event: None,
                 reason: str | None = None, slots: asyncio.Semaphore | None = None):
        self.world = world
        self.sandbox = sandbox
        self.origin = origin(world) if sandbox is not None else None
        self.reason = reason
        self.emit = emit
        # grading calls in the pool at once, shared by every world of a run (a probe finds a free worker)
        self.slots = slots or asyncio.Semaphore(max(1, (sandbox.workers if sandbox else 2) - 1))
        self._verdicts: dict[tuple, asyncio.Future] = {}
        self._requires: dict[str, asyncio.Future] = {}
        self._information: dict[tuple, asyncio.Future] = {}
        self._lock: asyncio.Lock | None = None
        self._prepared: asyncio.Future | None = None  # the workers compiling their copies

    @property
    def mode(self) -> str:
        return "pool" if self.origin is not None else "in-process"

    def announce(self) -> None:
        """Log where this world's calls run and why (once per run directory for the same answer)."""
        said = f"{self.world.name}:{self.mode}:{self.reason or ''}".encode("utf-8", "replace")
        self.emit({"type": "sandbox", "id": "sandbox:" + hashlib.sha256(said).hexdigest()[:16],
                   "world": self.world.name, "mode": self.mode, "reason": self.reason,
                   **({"deadlines": attrs.asdict(self.sandbox.deadlines)} if self.origin else {})})

    def _in_process(self, why: Exception) -> None:
        """Evaluate in process from now on, because the pool could not (logged with the reason)."""
        reason = str(why) if isinstance(why, Unavailable) else f"a worker could not compile the world: {why}"
        self.origin, self.reason = None, reason
        self.announce()

    async def pooled(self) -> bool:
        """Whether this world's calls go to the pool (the first asks the workers to compile their copies)."""
        if self.origin is not None:
            if self._prepared is None:  # the first call: have the workers compile their copies
                self._prepared = asyncio.ensure_future(self.sandbox.prepare_async(self.origin))
            try:
                await asyncio.shield(self._prepared)
            except (Overrun, Mismatch, RemoteSpecError, Unavailable) as e:
                self._in_process(e)
        return self.origin is not None

    async def in_pool(self, timeout: float, fn, *args, grading: bool = True):
        """fn(*args) in a worker (a `grading` call waits for a grading slot); Overrun past the deadline,
        NotPooled when the pool cannot serve this world (its calls run in process from then on)."""
        if not await self.pooled():
            raise NotPooled(self.reason)
        try:
            if not grading:
                return await self.sandbox.run(timeout, fn, *args)
            async with self.slots:
                return await self.sandbox.run(timeout, fn, *args)
        except (Mismatch, RemoteSpecError, Unavailable) as e:
            self._in_process(e)
            raise NotPooled(self.reason) from None

    async def _call(self, call: str, timeout: float, *args, grading: bool = True, threaded: bool = False):
        """The world call, in a worker when possible; raises Overrun past the deadline. In process, a
        `threaded` call runs on a thread of its own (the event loop goes on), others on the loop."""
        if await self.pooled():
            try:
                return await self.in_pool(timeout, evaluate, self.origin, call, *args, grading=grading)
            except NotPooled:
                pass
        if call == "rules":
            fn = functools.partial(grade_rule_report, self.world)
        else:
            fn = getattr(self.world, call)
        if threaded:
            return await asyncio.to_thread(fn, *args)
        if not grading:
            return fn(*args)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            result = fn(*args)
        await asyncio.sleep(0)
        return result

    def overrun(self, call: str, e: Overrun, **fields) -> str:
        """Log a call stopped at its deadline; what happened, to follow "the program" or "the answer"."""
        self.emit({"type": "overrun", "world": self.world.name, "call": call, "seconds": e.seconds,
                   "why": e.why, **fields})
        return e.said

    async def probe(self, text: str) -> Feedback:
        """World.probe: the feedback of one exploration call (an overrun is feedback too)."""
        try:
            return await self._call("probe", self.deadline("probe"), text, grading=False)
        except Overrun as e:
            self.overrun("probe", e, chars=len(text))
            return overrun_feedback(e, int(getattr(self.world.budget, "units_per_call", 1)))

    async def session(self, task=None, grading: str = "lenient") -> Exploration:
        """TurnShotFace.session: one exploration session (in the workers, addressed by a handle), its inputs
        read under the run's `grading`."""
        return await Exploration.opened(self, task, grading)

    async def test_game(self, task, attempt: int = 1, grading: str = "lenient") -> PlayedGame:
        """PlayedTests.test_play: one test game played round by round (in the workers, as a session is), its
        moves read under the run's `grading`."""
        return await PlayedGame.opened(self, task, attempt, grading)

    async def match(self, opponent: str, seat: str, k: int) -> PlayedMatch:
        """PoolFace.new_match: one match of pool play, round by round (in the workers, as a session is)."""
        return await PlayedMatch.opened(self, opponent, seat, k)

    def deadline(self, call: str) -> float:
        return getattr(self.sandbox.deadlines if self.sandbox else Deadlines(), call)

    async def _memo(self, memo: dict, key, make):
        fut = memo.get(key)
        if fut is None:
            fut = memo[key] = asyncio.ensure_future(make())
        try:
            return await asyncio.shield(fut)
        except BaseException:
            if fut.done() and not fut.cancelled() and fut.exception() is not None:
                memo.pop(key, None)  # a failure is not remembered
            raise

    async def verify(self, task, answer: str, grading: str | None = None, stage: str = "first") -> Verdict:
        """World.verify: an overrun answer scores zero. A turn@shot box also takes the `grading`
        ("published" or "lenient") and the reply's `stage` (BlackBoxWorld.verify)."""
        extra = () if grading is None else (grading, stage)

        async def make():
            try:
                return await self._call("verify", self.deadline("verify"), task.id, answer, *extra)
            except Overrun as e:
                said = self.overrun("verify", e, task=task.id, chars=len(answer))
                return ScoredVerdict(task.id, False, f"the answer {said}", score=0.0, retry="")
        return await self._memo(self._verdicts, (task.id, answer, *extra), make)

    async def reask(self, task, text: str, stage: str = "first") -> str:
        """BoxWorld.published_reask: the released harness's format re-ask for a reply at this stage ("":
        none; an overrun asks nothing)."""
        try:
            return await self._call("published_reask", self.deadline("verify"), task.id, text, stage)
        except Overrun as e:
            self.overrun("published_reask", e, task=task.id, chars=len(text))
            return ""

    async def requires(self, task) -> frozenset:
        """World.requires: an overrun counts every rule as required (the task is never covered)."""
        async def make():
            try:
                return frozenset(await self._call("requires", self.deadline("requires"), task.id))
            except Overrun as e:
                self.overrun("requires", e, task=task.id)
                return frozenset(r.id for r in self.world.rules)
        return await self._memo(self._requires, task.id, make)

    async def information(self, probes: tuple) -> list | None:
        """World.information, the bits each probe removed, scored in a worker (in process: on a thread)
        so that the run goes on meanwhile. None when the world's kind does not measure it, or when
        scoring overran its deadline (logged; the trajectory then has no information row)."""
        if not isinstance(self.world, Explorable):
            return None

        async def make():
            try:
                return await self._call("information", self.deadline("information"), probes, threaded=True)
            except Overrun as e:
                self.overrun("information", e, probes=len(probes))
                return None
        return await self._memo(self._information, probes, make)

    async def rule_report(self, text: str | None) -> dict:
        """answers.grade_rule_report: an overrun report grades as wrong (no rule correct)."""
        try:
            return await self._call("rules", self.deadline("rules"), text)
        except Overrun as e:
            said = self.overrun("rules", e, chars=len(text or ""))
            return {"stated": len(parse_rule_report(text)), "correct": [], "extraneous": [],
                    "errors": [f"grading {said}: the report counts as wrong"]}


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
    """One run's model calls and world calls (see the module docstring)."""

    def __init__(self, log: RunLog, *, cache: ResponseCache | None = None,
                 max_connections: int = 16, retry: RetryPolicy | None = None,
                 sandbox: Sandbox | None = None):
        self.log = log
        self.cache = cache
        self.max_connections = max_connections
        self.retry = retry or RetryPolicy()
        self.sandbox = sandbox
        self.limiters: dict[str, PriorityLimiter] = {}
        self.stats = CallStats()
        self.fatal: str | None = None  # once set, no new request is sent
        self._graders: dict = {}  # world -> its Grader (worlds compare by identity)
        self._slots: asyncio.Semaphore | None = None  # grading calls in the pool at once, all worlds
        self.digests = MessageDigests()
        # the reply each task is processing (from the call that returned it to the task's next call)
        self._pending: dict[asyncio.Task, tuple[str, Model]] = {}
        self._watched: set[asyncio.Task] = set()
        self._blamed: list[BaseException] = []
        log.on_failure.append(self._failed_here)

    def grader(self, world) -> Grader:
        g = self._graders.get(world)
        if g is None:
            sandbox = self.sandbox or shared()
            reason = unportable(world, sandbox.kind_modules)
            sandbox = None if reason else sandbox
            if sandbox is not None and self._slots is None:
                self._slots = asyncio.Semaphore(max(1, sandbox.workers - 1))
            g = self._graders[world] = Grader(world, sandbox, self.emit, reason, self._slots)
            g.announce()
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

    # -- replies that could not be processed ----------------------------------------------

    def _processing(self, key: str | None, model: Model | None = None) -> None:
        """Note the reply the current task now processes (None: the previous one went through)."""
        task = asyncio.current_task()
        if task is None:
            return
        if key is None:
            self._pending.pop(task, None)
            return
        self._pending[task] = (key, model)
        if task not in self._watched:
            self._watched.add(task)
            task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task) -> None:
        self._watched.discard(task)
        pending = self._pending.pop(task, None)
        if pending is not None and not task.cancelled():
            self._blame(pending, task.exception())

    def _blame(self, pending: tuple[str, Model], exc: BaseException | None) -> None:
        """Record a reply as failed when processing it raised (a bug or a hostile reply, never an
        outage or the environment): resume and the cache then return `failed_reply`, not it."""
        if exc is None or not isinstance(exc, Exception) or isinstance(exc, (ModelError, OSError)) \
                or any(exc is b for b in self._blamed) or self.log.closed:
            return
        self._blamed.append(exc)
        key, model = pending
        error = f"{type(exc).__name__}: {exc}"[:500]
        failed = failed_reply(error)
        try:
            self.emit({"type": "reply_failed", "id": f"reply_failed:{key}", "key": key, "error": error,
                       "reply": failed.to_json()})
        except OSError:  # the disk that failed the session fails this too; the session's own error stands
            return
        if self.cache is not None and model is not None and model.cacheable:
            self._cache_put(key, model, failed)

    def _failed_here(self, exc: BaseException) -> None:
        """The session failed with exc: blame the replies of tasks that ended with it and of this task."""
        for task in [t for t in self._pending if t.done()]:
            self._settled(task)
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no event loop: nothing is being processed
            return
        pending = self._pending.pop(task, None)
        if pending is not None:
            self._blame(pending, exc)

    def _cache_get(self, key: str) -> Reply | None:
        hit = self.cache.get(key)
        self._cache_trouble()
        return hit

    def _cache_put(self, key: str, model: Model, reply: Reply) -> None:
        self.cache.put(key, model.model_id, reply)
        self._cache_trouble()

    def _cache_trouble(self) -> None:
        """A cache that failed (disk full, a broken file) is dropped for the rest of the run, said once."""
        if self.cache is not None and self.cache.error is not None:
            self.emit({"type": "cache_error", "error": self.cache.error, "path": str(self.cache.path)})
            self.cache = None

    # -- one call -------------------------------------------------------------------------

    async def call(self, model: Model, request: Request) -> Reply:
        """The reply to one request: from the log, the cache or the model (bounded: models.bounded_reply)."""
        self._processing(None)
        key = request_key(model, request, self.digests)
        reply = await self._reply(model, request, key)
        self._processing(key, model)
        return reply

    def _older_keys(self, model: Model, request: Request) -> list[str]:
        """The request's keys as worldspec wrote them when the endpoint was in the key (cache.legacy_keys):
        at this model's endpoint, and at the one an old log's first session used."""
        return legacy_keys(model, request, self.digests, (model.api_base or "", *self.log.legacy_endpoints))

    def _from_log(self, model: Model, request: Request, key: str) -> dict | None:
        logged = self.log.replies.get(key)
        if logged is None and self.log.legacy_endpoints:
            logged = next((self.log.replies[k] for k in self._older_keys(model, request) if k in self.log.replies),
                          None)
        return logged

    def _from_cache(self, model: Model, request: Request, key: str) -> Reply | None:
        hit = self._cache_get(key)
        for k in self._older_keys(model, request) if hit is None and self.cache is not None else ():
            hit = self._cache_get(k)
            if hit is not None and self.cache is not None:  # kept under its key now: found at any endpoint
                self._cache_put(key, model, hit)
            if hit is not None or self.cache is None:
                break
        return hit

    async def _reply(self, model: Model, request: Request, key: str) -> Reply:
        meta = request.meta
        fields = {
            "key": key, "system": model.name, "conv": meta.get("conv"),
            "condition": meta.get("condition"), "trajectory": meta.get("trajectory"),
            "t": meta.get("t"), "step": meta.get("step"), "purpose": request.purpose,
            "answer_index": request.answer_index,
        }
        if self.fatal is not None:
            raise FatalError(self.fatal)
        logged = self._from_log(model, request, key)
        if logged is not None:
            self.stats.from_log += 1
            return bounded_reply(Reply.from_json(logged["reply"]))[0]
        prefix = int(meta.get("prefix", 0))
        self.emit({"type": "request", "id": f"req:{key}", **fields, "prefix": prefix,
                   "messages": list(request.messages[prefix:]),
                   "tools": [t["function"]["name"] for t in request.tools or ()],
                   "tool_choice": request.tool_choice, "settings": request.settings})
        if self.cache is not None and model.cacheable:
            hit = self._from_cache(model, request, key)
            if hit is not None:
                hit = bounded_reply(hit)[0]
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
        reply, dropped = bounded_reply(reply)
        self.stats.live += 1
        self.emit({"type": "reply", "id": f"reply:{key}", **fields, "cached": False,
                   "latency": round(latency, 4), "attempts": attempts, "reply": reply.to_json(),
                   **({"truncated": dropped} if dropped else {})})
        if self.cache is not None and model.cacheable:
            self._cache_put(key, model, reply)
        return reply


@contextlib.contextmanager
def session_outcome(log: RunLog, cache: ResponseCache | None = None):
    """Close the run log with how a session ended when it did not succeed.

    On success the caller writes its closing events, then closes the log itself. On a failure the
    log's `on_failure` hooks run first (the runtime records the reply being processed as failed)."""
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
        for hook in log.on_failure:
            hook(e)
        raise
    finally:
        if status != "success":
            log.close(status, error)
            if cache is not None:
                cache.close()
