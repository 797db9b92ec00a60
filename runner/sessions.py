"""World sessions in the sandbox's workers, addressed by a handle: a box's memory, a game played round by round.

A turn@shot box is explored through a world session (`world.session(task)`: a box with memory or noise,
a game whose exploration goes round by round), a round-by-round test is played through a game
(`world.test_play(task, attempt)`) and a model's match of pool play through a match (`world.new_match`);
each holds state from one input to the next and runs the world's code on what a model wrote, so each
runs in the sandbox's workers under the probe deadline, as a stateless probe does (sandbox.py). pebble
gives a call no worker affinity, so a session is not pinned to a worker: it is named by a `Handle` (the
world's origin, how it was opened, and a key no other session of the caller shares), and every worker
keeps the sessions it served (SESSIONS_PER_WORKER, least recently used first out), each with the inputs
applied to it so far.

Each call carries the count of inputs applied before it, a digest of them, and the last REPLAY_WINDOW
of them with the digest before each. A worker whose copy of the session is at that count and digest
applies the new input; one a few inputs behind (or with no copy of a session still that short) replays
them from the window first; one that lags further answers BEHIND, and the caller sends every input so
far, which the worker replays on a fresh session (or on its copy, when that is a prefix). A session that
says it is `memoryless` (a box with neither memory nor noise) is never replayed: any copy of it answers
alike. pebble hands consecutive calls to alternate workers, so a session with memory costs a replay of
one input a call (cheap: the bundled stateful boxes take well under 10 ms an input).

That is sound because a session is a function of its world, how it was opened and its inputs: a box's
noise stream is seeded by the world's seed and the session's stream, a game's rounds by the seed, the
test and the attempt, a match by the seed and the schedule entry (compiler/blackbox/world.py,
compiler/game/world.py); nothing else is drawn. A replaying call's deadline is the probe deadline plus
twice what the replayed inputs took when they first ran; the worker times the new input alone, and that
must finish within the probe deadline.

An input whose call overruns is not applied: the worker that ran it was killed, and the others replay
the session without it, so the session goes on from where it was before that input (what the run shows
for it is the caller's: an exploration turn's feedback says the program was stopped; a test game ends,
scored as it stands; a pool match ends, lost). A world no worker can compile (`sandbox.unportable`)
keeps its sessions in process, as before; when the pool stops serving a world mid-session, the session
is opened in process and its inputs replayed there.
"""
from __future__ import annotations

import collections
import hashlib
import itertools
import os
import time

import attrs

from worldspec.compiler.api import Feedback, ScoredVerdict

from .sandbox import Origin, Overrun, overrun_feedback, portable_errors, worker_world

SESSIONS_PER_WORKER = 256  # sessions a worker keeps (a box's memory or a game's board: small)
REPLAY_WINDOW = 16  # recent inputs each call carries, so that a worker a few inputs behind catches up at once
REPLAY_SLACK = 0.25  # seconds a replaying call may take beyond twice its inputs' first run (a busy machine)
BEHIND = "behind"  # a worker's answer when it cannot reach the caller's session from what the call carries

# Which call moves each kind of session on (the call replayed), which other calls only read it, and what the
# caller reads of it after it is opened and after each input (`opened` says how each is opened).
STEP = {"session": "probe", "test_play": "play", "match": "play"}
READS = {"session": (), "test_play": ("verdict",), "match": ()}
OPEN_FACTS = {"session": ("opening",), "test_play": ("opening", "horizon", "done"), "match": ("horizon", "done")}
STEP_FACTS = {"session": (), "test_play": ("done",), "match": ("done",)}

_KEYS = itertools.count(1)


@attrs.frozen
class Handle:
    """Names one world session for the workers: the world, how it was opened, and a key of its own."""

    origin: Origin
    opener: str  # a key of STEP
    args: tuple  # what `opened` opens it with
    # unique among the sessions of the caller's pool (a pool serves one process)
    key: str = attrs.field(factory=lambda: f"{os.getpid()}:{next(_KEYS)}")


def chained(previous: str, text: str) -> str:
    """The digest of a session's inputs after `text`, from the digest before it."""
    return hashlib.sha256(f"{previous}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def opened(world, opener: str, args: tuple):
    """A fresh session of `world`: "session" (task id or None, grading): an exploration session,
    world.session(task, grading=...); "test_play" (task id, attempt, grading): a test game played round by
    round; "match" (opponent, seat, match index): a match of pool play, world.new_match. The run's grading is
    part of how a session is opened: a game reads its moves by it."""
    if opener == "session":
        return world.session(world.task(args[0]) if args[0] is not None else None, grading=args[1])
    if opener == "test_play":
        return world.test_play(world.task(args[0]), args[1], grading=args[2])
    return world.new_match(*args)


def facts(session, names: tuple[str, ...]) -> dict:
    return {name: getattr(session, name) for name in names}


def opening_facts(session, opener: str) -> dict:
    """What the caller reads of a session first: its opening (a game's horizon and state too), and whether
    its answers are independent of earlier inputs (a box with neither memory nor noise: never replayed, as any
    copy of it answers alike)."""
    return {**facts(session, OPEN_FACTS[opener]), "memoryless": bool(getattr(session, "memoryless", False))}


def replay(session, opener: str, inputs) -> None:
    """Apply `inputs` to `session` as they were first applied (each followed by the same reads)."""
    step = getattr(session, STEP[opener])
    for text in inputs:
        step(text)
        facts(session, STEP_FACTS[opener])


# ---------------------------------------------------------------- what runs in a worker

_HELD: collections.OrderedDict = collections.OrderedDict()  # Handle -> Held


class Held:
    """A worker's copy of one session: the session object and the inputs applied to it."""

    def __init__(self, session, opening: dict):
        self.session = session
        self.opening = opening
        self.memoryless = opening["memoryless"]
        self.inputs: list[str] = []
        self.digest = ""


def _hold(h: Handle, held: Held) -> Held:
    _HELD[h] = held
    _HELD.move_to_end(h)
    while len(_HELD) > SESSIONS_PER_WORKER:
        _HELD.popitem(last=False)
    return held


def _fresh(h: Handle) -> Held:
    session = opened(worker_world(h.origin), h.opener, h.args)
    return _hold(h, Held(session, opening_facts(session, h.opener)))


def _advance(h: Handle, held: Held, inputs) -> None:
    replay(held.session, h.opener, inputs)
    for text in inputs:
        held.inputs.append(text)
        held.digest = chained(held.digest, text)


def _reached(h: Handle, count: int, digest: str, window: tuple, inputs: tuple | None) -> Held | None:
    """This worker's copy of the session at the caller's count and digest (caught up on the way), or None."""
    held = _HELD.get(h)
    if held is None:  # a copy of its own (what a memoryless session needs, and a start for a replay)
        held = _fresh(h)
    if held.memoryless or (len(held.inputs) == count and held.digest == digest):
        return held
    start = count - len(window)
    if start <= len(held.inputs) < count:
        k = len(held.inputs) - start
        if window[k][0] == held.digest:  # the same inputs so far: replay the rest from the window
            _advance(h, held, [text for _, text in window[k:]])
            return held
    if inputs is None:
        return None
    if held.inputs != list(inputs[:len(held.inputs)]):
        held = _fresh(h)
    _advance(h, held, inputs[len(held.inputs):])
    return held


@portable_errors
def open_session(h: Handle) -> dict:
    """Open a session in this worker: what the caller reads of it first (its opening, ...)."""
    return _fresh(h).opening


@portable_errors
def session_call(h: Handle, count: int, digest: str, window: tuple, op: str, arg, inputs: tuple | None = None):
    """One call on a session, `count` inputs (digest `digest`) after its opening: (its result, what the caller
    reads after it, the seconds the call itself took), or BEHIND when the worker cannot reach that state."""
    if op != STEP[h.opener] and op not in READS[h.opener]:
        raise ValueError(f"{op!r} is not a call of a {h.opener} session")
    worker_world(h.origin)  # refused (Mismatch) when the file changed after the caller loaded it
    held = _reached(h, count, digest, window, inputs)
    if held is None:
        return BEHIND
    _HELD.move_to_end(h)
    t0 = time.monotonic()
    result = getattr(held.session, op)(arg)
    seconds = time.monotonic() - t0
    if op == STEP[h.opener]:
        held.inputs.append(arg)
        held.digest = chained(held.digest, arg)
    return result, facts(held.session, STEP_FACTS[h.opener]), seconds


# ---------------------------------------------------------------- the caller's side


class NotPooled(Exception):
    """The world's calls run in process (no worker can compile it, or the pool stopped serving it)."""


class WorldSession:
    """One world session as a run holds it: in the workers, addressed by its handle (or in process).

    `grader` is the world's runtime.Grader: `pooled()` says whether its calls go to the pool, `in_pool`
    runs one there (NotPooled once they no longer do). `call` raises sandbox.Overrun past the deadline;
    the input is then not applied."""

    def __init__(self, grader, opener: str, args: tuple):
        self.grader = grader
        self.opener, self.args = opener, args
        self.handle: Handle | None = None
        self.local = None  # the session object, when it runs in process
        self.facts: dict = {}
        self.inputs: list[str] = []
        self.digests: list[str] = [""]  # digests[i]: of the first i inputs
        self.took: list[float] = []  # seconds each input took where it first ran

    async def open(self, deadline: float) -> "WorldSession":
        if await self.grader.pooled():
            self.handle = Handle(self.grader.origin, self.opener, self.args)
            try:
                self.facts = dict(await self.grader.in_pool(deadline, open_session, self.handle, grading=False))
                return self
            except NotPooled:
                pass
        self._here()
        return self

    def _here(self) -> None:
        """The session in process from now on: opened here, its inputs replayed."""
        self.local = opened(self.grader.world, self.opener, self.args)
        self.facts = opening_facts(self.local, self.opener)
        replay(self.local, self.opener, self.inputs)

    async def call(self, op: str, arg, deadline: float, grading: bool = False):
        """The session's `op`(arg): its result (an input is applied once it comes back within the deadline)."""
        if self.local is None:
            try:
                result, read, seconds = await self._pooled(op, arg, deadline, grading)
            except NotPooled:
                self._here()
        if self.local is not None:
            t0 = time.monotonic()
            result = getattr(self.local, op)(arg)
            seconds = time.monotonic() - t0
            read = facts(self.local, STEP_FACTS[self.opener])
        self.facts.update(read)
        if op == STEP[self.opener]:
            self.inputs.append(arg)
            self.digests.append(chained(self.digests[-1], arg))
            self.took.append(seconds)
        return result

    async def _pooled(self, op: str, arg, deadline: float, grading: bool):
        n = len(self.inputs)
        replayed = [] if self.facts.get("memoryless") else self.took[-REPLAY_WINDOW:]
        window = tuple(zip(self.digests[n - len(replayed):n], self.inputs[n - len(replayed):]))
        args = (self.handle, n, self.digests[-1], window, op, arg)
        try:
            # a worker may replay the window first: its deadline allows for that
            out = await self.grader.in_pool(self._allowing(replayed, deadline), session_call, *args, grading=grading)
            if out == BEHIND:
                out = await self.grader.in_pool(self._allowing(self.took, deadline), session_call, *args,
                                                tuple(self.inputs), grading=grading)
        except Overrun as e:
            raise Overrun(deadline, e.why) from None  # the call's own deadline, whatever the replay's allowance
        result, read, seconds = out
        if seconds > deadline:
            raise Overrun(deadline, "time")
        return result, read, seconds

    @staticmethod
    def _allowing(replayed: list[float], deadline: float) -> float:
        return deadline + (2 * sum(replayed) + REPLAY_SLACK if replayed else 0.0)


class OpenedSession:
    """A world session opened in the workers for one task; `stopped` holds the overrun of an opening that
    did not finish in time (what each kind of session then answers is its own)."""

    def __init__(self, grader, session: WorldSession, task_id: str | None):
        self.grader, self.session, self.task_id = grader, session, task_id
        self.stopped: Overrun | None = None
        self.opened_ok = False  # the opening finished (a later overrun sets `stopped`, not this)

    @classmethod
    async def open_as(cls, grader, method: str, args: tuple, task_id: str | None):
        """The session of the world's `method(*args)`, opened within the probe deadline."""
        out = cls(grader, WorldSession(grader, method, args), task_id)
        try:
            await out.session.open(grader.deadline("probe"))
            out.opened_ok = True
        except Overrun as e:
            grader.overrun(method, e, task=task_id)
            out.stopped = e
        return out


class Exploration(OpenedSession):
    """A turn@shot exploration session as the protocol reads it: its opening and `probe(text)` -> Feedback.

    A probe stopped at its deadline is feedback (charged the world's per-call cap, as a stateless probe
    is: a box's turn) and the session goes on without it; a session whose opening was stopped answers
    every probe so, at once."""

    @classmethod
    async def opened(cls, grader, task=None, grading: str = "lenient") -> "Exploration":
        task_id = getattr(task, "id", task)
        return await cls.open_as(grader, "session", (task_id, grading), task_id)

    @property
    def opening(self) -> str:
        return "" if self.stopped else str(self.session.facts.get("opening") or "")

    async def probe(self, text: str) -> Feedback:
        cap = int(getattr(self.grader.world.budget, "units_per_call", 1))
        if self.stopped is not None:
            return Feedback(f"limit: the box could not be started: it {self.stopped.said}. Nothing was run.",
                            cap, "limit")
        try:
            return await self.session.call("probe", text, self.grader.deadline("probe"))
        except Overrun as e:
            self.grader.overrun("probe", e, chars=len(text), task=self.task_id, session=True)
            return overrun_feedback(e, cap)


class PlayedGame(OpenedSession):
    """A round-by-round test game as the protocol plays it: opening, horizon, done, `play(move)` -> Feedback
    and `verdict(grading)`. A move stopped at its deadline ends the game (scored as it stands); a verdict
    stopped at its deadline scores zero."""

    @classmethod
    async def opened(cls, grader, task, attempt: int = 1, grading: str = "lenient") -> "PlayedGame":
        task_id = getattr(task, "id", task)
        return await cls.open_as(grader, "test_play", (task_id, attempt, grading), task_id)


    @property
    def opening(self) -> str:
        return str(self.session.facts.get("opening") or "") if self.opened_ok else \
            f"The game could not be started: it {self.stopped.said}."

    @property
    def horizon(self) -> int:
        return int(self.session.facts.get("horizon") or 0)

    @property
    def done(self) -> bool:
        return self.stopped is not None or bool(self.session.facts.get("done"))

    async def play(self, move: str) -> Feedback:
        if self.stopped is not None:
            return Feedback(f"rejected: the game is over: it {self.stopped.said}. Nothing was played.", 0,
                            "rejected")
        try:
            return await self.session.call("play", move, self.grader.deadline("probe"))
        except Overrun as e:
            self.grader.overrun("play", e, task=self.task_id, chars=len(move))
            self.stopped = e
            return Feedback(f"limit: the game {e.said} on this move; nothing it printed is shown. The game ends "
                            "here and is scored as it stands.", 0, "limit")

    async def verdict(self, grading: str) -> ScoredVerdict:
        if not self.opened_ok:
            return ScoredVerdict(self.task_id, False, f"the game {self.stopped.said} before its first round",
                                 score=0.0, unclipped=0.0)
        try:
            return await self.session.call("verdict", grading, self.grader.deadline("verify"), grading=True)
        except Overrun as e:
            said = self.grader.overrun("verdict", e, task=self.task_id)
            return ScoredVerdict(self.task_id, False, f"scoring the game {said}", score=0.0, unclipped=0.0)


class PlayedMatch:
    """A match of pool play as pool.py plays it: horizon, done, the rounds so far and `play(move)` -> the round
    (None when the world's code ran past its deadline: the match ends there and `error` says why)."""

    def __init__(self, grader, session: WorldSession):
        self.grader, self.session = grader, session
        self.rounds: list = []
        self.error: str | None = None

    @classmethod
    async def opened(cls, grader, opponent: str, seat: str, k: int) -> "PlayedMatch":
        out = cls(grader, WorldSession(grader, "match", (opponent, seat, k)))
        try:
            await out.session.open(grader.deadline("probe"))
        except Overrun as e:
            out.error = f"the match could not be started: the world's code {grader.overrun('match', e)}"
        return out

    @property
    def horizon(self) -> int:
        return int(self.session.facts.get("horizon") or 0)

    @property
    def done(self) -> bool:
        return self.error is not None or bool(self.session.facts.get("done"))

    async def play(self, move: str):
        try:
            r = await self.session.call("play", move, self.grader.deadline("probe"))
        except Overrun as e:
            self.error = f"round {len(self.rounds) + 1}: the world's code {self.grader.overrun('match', e)}"
            return None
        self.rounds.append(r)
        return r
