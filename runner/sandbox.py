"""Untrusted evaluation under a wall-clock deadline: a reused pool of worker processes.

Every evaluation of text a model or a spec author wrote — `World.probe`, `World.verify`,
`World.requires`, rule-report grading, `World.certify`, and a session's calls (a box's memory, a
round-by-round test game: runner/sessions.py keeps them in the workers, named by a handle) —
can run here instead of in the caller's process. The kernel's step and size limits stop almost everything; this is the
backstop for what they cannot reach: code stuck inside one C call (a sort, a comparison, a
regular expression) that no step counter and no signal handler interrupts. A call that runs
past its deadline has its worker process killed and replaced, and the caller gets `Overrun`;
a worker that dies (out of memory under its address-space limit, a crash) is an `Overrun` too.

Worlds do not cross the process boundary (compiled worlds hold closures and do not pickle).
A world loaded with `load(path, seed)` remembers its `Origin`: the absolute path, the seed and
a fingerprint of what it shows and grades. A worker compiles its own copy from the origin once
and keeps it (up to WORLDS_PER_WORKER, least recently used first out); it refuses (`Mismatch`) when its
copy's fingerprint differs, i.e. the file changed after the caller loaded it. A world of a kind
registered only in the caller's process (tests register their own kinds) cannot be compiled
in a worker: `unportable(world)` says why, and the caller evaluates it in process.

Cost, measured on AlienCode's generated probes (2 cores, under load): a probe takes 0.35–0.6 ms
(median) in process and 0.8–1.5 ms through the pool, whose round trip for an empty call is
0.2–0.3 ms. That keeps a probe near a millisecond, so every call goes through the pool and there
is no second, in-process fast path: such a path could only be trusted if nothing in it could
hang, which is exactly what this module exists not to assume. Workers are forked from a
forkserver that has this module (and so the compiler) imported; before a world's first
evaluation every worker compiles its copy outside any deadline (`prepare`), and a worker
started later (a replacement after a kill) compiles the worlds in use before its first task.
The price is paid by one-shot commands: `worldspec probe` and `check` start the forkserver and
a worker (about a second) before they evaluate.

pebble rather than loky: pebble's `ProcessPool.schedule(fn, timeout=...)` gives each task its
own deadline, terminates only the worker running an overdue task and starts a replacement
while the other workers keep their warm worlds; loky's reusable executor (built for joblib)
has no per-task timeout — its `timeout` reaps idle workers — so stopping one stuck call means
shutting down and restarting every worker. pebble is small, pure Python and has no
dependencies; both re-raise worker exceptions in the caller and report a dead worker.

pebble looks for overdue tasks every 0.1 s, so a call that finished a little past its deadline
would come back as if it were on time. The worker therefore times each call itself (`timed`) and
a result that came later than the deadline is an overrun too: a deadline means the same thing
whatever it is, 0.01 s or 60 s.
"""
from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import contextlib
import functools
import hashlib
import importlib
import json
import multiprocessing
import multiprocessing.context as mp_context
import multiprocessing.popen_forkserver as popen_forkserver
import os
import pickle
import resource
import signal
import sys
import threading
import time
import weakref

import attrs
import pebble

from worldspec.compiler import KINDS, load_world, register_kind, resolve_world_path, worldcache
from worldspec.compiler.api import Feedback
from worldspec.compiler.certified import certify
from worldspec.compiler.suite import (certify_folder, certify_one, cross_files, crossed_files, folder_report,
                                     world_files)
from worldspec.diagnostics import SpecError, SpecErrors

from .answers import grade_rule_report

WORKER_MEMORY = 2 << 30  # bytes of address space a worker may map (a memory bomb fails there, not on the host)
WORLDS_PER_WORKER = 256  # compiled worlds a worker keeps (a compiled world takes well under 1 MB)


@attrs.frozen
class Deadlines:
    """Seconds of wall-clock time each kind of call may take (generous: the step limits stop
    ordinary work in well under a second; these catch what they cannot)."""

    probe: float = 20.0
    verify: float = 120.0  # every private case of one answer
    rules: float = 120.0  # every statement of one rule report
    requires: float = 300.0  # the reference solution under each rule's knockout
    information: float = 300.0  # a trajectory's bits per probe (the explorer re-reads every probe)
    certify: float = 1800.0
    # a call's deadline counts from when a worker starts it; past this much more (a worker that
    # never comes up, a call that is never started) the pool counts as unavailable
    start: float = 300.0


@attrs.frozen
class Origin:
    """Where a worker finds a world: its file, seed, and the fingerprint its copy must match
    (None: no copy to match, the worker's is the only one)."""

    path: str
    seed: int | None
    fingerprint: str | None = None
    # whether the worker may use the world cache: the caller's setting when it made the origin (a worker
    # forked before `--no-cache` was given does not see the variable it sets)
    cache: bool = attrs.field(factory=lambda: not worldcache.disabled())


class Overrun(Exception):
    """A call ran past its deadline, or its worker died; the worker was replaced."""

    def __init__(self, seconds: float, why: str):
        super().__init__(f"stopped after {seconds:g} s" if why == "time" else why)
        self.seconds = seconds
        self.why = why  # "time", or what ended the worker

    @property
    def timed_out(self) -> bool:
        return self.why == "time"

    @property
    def said(self) -> str:
        """What happened, to follow "the program" or "the answer"."""
        return f"ran too long and was stopped after {self.seconds:g} s" if self.timed_out else \
            f"was stopped: {self.why}"


class Mismatch(Exception):
    """A worker's copy of the world differs from the caller's (the file changed since it was loaded)."""


class Unavailable(Exception):
    """The worker pool cannot run anything (its workers fail to start: e.g. a script that starts a
    run without an `if __name__ == "__main__":` guard, which worker processes re-import)."""


class RemoteSpecError(Exception):
    """A spec error found in a worker, rendered there (SpecError does not pickle)."""

    def __init__(self, text: str, records: list | None = None):
        super().__init__(text)
        self.text = text
        self.records = records or []

    def render(self) -> str:
        return self.text

    def diagnostics(self) -> list[dict]:
        """The worker's SpecError records (plain dicts: they travel)."""
        return list(self.records)

    def __reduce__(self):  # both fields travel back from the worker
        return (RemoteSpecError, (self.text, self.records))


# ---------------------------------------------------------------- worlds and their origins


def fingerprint(world) -> str:
    """A digest of what a world shows and grades: two compiles of one spec agree on it."""
    content = [world.name, world.version, world.kind, world.seed, world.manual,
               [(t.id, t.prompt) for t in world.tasks], [(r.id, r.target, r.equation) for r in world.rules]]
    return hashlib.sha256(json.dumps(content, default=str).encode("utf-8", "surrogatepass")).hexdigest()


_ORIGINS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def load(path: str, seed: int | None = None):
    """Compile a world file (or a bundled world's name) and remember its origin for the workers."""
    resolved = os.path.abspath(resolve_world_path(path))
    world = load_world(resolved, seed)
    _ORIGINS[world] = Origin(resolved, seed, fingerprint(world))
    return world


def origin(world) -> Origin | None:
    """Where `load` found this world (None for a world compiled some other way)."""
    try:
        return _ORIGINS.get(world)
    except TypeError:  # not weakly referenceable: never loaded here
        return None


def local_kinds(kind_modules: tuple[str, ...] = ()) -> list[str]:
    """Kinds registered in this process that a worker would not know (neither worldspec's nor in kind_modules)."""
    # module_of: a bundled kind not yet imported is not imported to learn that it is bundled
    return [name for name in KINDS
            if not (module := KINDS.module_of(name)).startswith("worldspec.") and module not in kind_modules]


def unportable(world, kind_modules: tuple[str, ...] = ()) -> str | None:
    """Why a worker cannot evaluate this world (None: it can)."""
    if origin(world) is None:
        return "the world was not loaded from a file by worldspec (a world object made in this process)"
    if world.kind in local_kinds(kind_modules):
        return (f"its kind {world.kind!r} is registered at run time by {KINDS.module_of(world.kind)}, "
                "which worker processes do not load")
    return None


# ---------------------------------------------------------------- what runs in a worker

_WORLDS: collections.OrderedDict = collections.OrderedDict()  # (path, seed, cache, stat) -> (world, fingerprint)


def _stamp(path: str) -> tuple:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size, st.st_ino


def portable_errors(fn):
    """A worker entry point whose exceptions reach the caller: spec errors as RemoteSpecError (a
    SpecError does not pickle), any other exception that does not pickle as a RuntimeError."""
    @functools.wraps(fn)
    def wrapper(*args):
        try:
            return fn(*args)
        except (SpecError, SpecErrors) as e:
            raise RemoteSpecError(e.render(), e.diagnostics()) from None
        except Exception as e:  # noqa: BLE001 — re-raised, as itself when it can travel
            try:
                pickle.loads(pickle.dumps(e))
            except Exception:  # noqa: BLE001 — any failure to travel
                raise RuntimeError(f"{type(e).__name__}: {e}") from None
            raise
    return wrapper


def worker_world(o: Origin):
    """This worker's copy of a world, compiled on first use (refused if it is not the caller's)."""
    try:
        key = (o.path, o.seed, o.cache, _stamp(o.path))
    except OSError as e:
        raise Mismatch(f"{o.path} cannot be read now ({e.strerror})") from None
    entry = _WORLDS.get(key)
    if entry is None:
        world = load_world(o.path, o.seed, cache=o.cache)
        entry = _WORLDS[key] = (world, fingerprint(world))
        while len(_WORLDS) > WORLDS_PER_WORKER:
            _WORLDS.popitem(last=False)
    _WORLDS.move_to_end(key)
    if o.fingerprint is not None and entry[1] != o.fingerprint:
        raise Mismatch(f"{o.path} changed after it was loaded")
    return entry[0]


def probe_of(world, text: str) -> Feedback:
    """The world's answer to one probe; a world whose face has no probing (a Hold'em world: compiler/api.py,
    HoldemFace) rejects it unrun, as `worldspec play` does."""
    if not callable(getattr(world, "probe", None)):
        return Feedback(f"rejected: this world has no probing; a {world.protocol} world is played, not probed",
                        0, "rejected")
    return world.probe(text)


@portable_errors
def evaluate(o: Origin, call: str, *args):
    """One world call in a worker: probe, verify, requires or rules (rule-report grading)."""
    world = worker_world(o)
    if call == "rules":
        return grade_rule_report(world, *args)
    if call == "requires":
        return frozenset(world.requires(*args))
    if call == "probe":
        return probe_of(world, *args)
    return getattr(world, call)(*args)


@portable_errors
def unit_cap(o: Origin) -> int:
    """The world's probe-unit cap per call (compiling it in this worker on the way)."""
    return int(getattr(worker_world(o).budget, "units_per_call", 1))


@portable_errors
def certify_file(o: Origin, progress) -> dict:
    """`worldspec check FILE` in a worker."""
    return certify(worker_world(o), progress)  # recalled from the world cache when certified before


@portable_errors
def certify_files(folder: str, seed: int | None, progress, cache: bool = True) -> dict:
    """`worldspec check FOLDER` in one worker."""
    return certify_folder(folder, seed, progress=progress, cache=cache)


@portable_errors
def certify_folder_file(path: str, seed: int | None, progress, cache: bool, place: str, shown: str) -> dict:
    """One file of `worldspec check FOLDER` in a worker: its share of the folder's report."""
    return certify_one(path, seed, progress, cache, place, shown)


@portable_errors
def cross_check_files(files: list[str], seed: int | None, cache: bool) -> list[str]:
    """The cross-box problems among a folder's worlds, in a worker (after their certification)."""
    return cross_files(files, seed, cache)


@portable_errors
def ready(o: Origin) -> None:
    """Compile this worker's copy of a world now, outside any evaluation's deadline."""
    worker_world(o)


def timed(fn, *args) -> tuple[float, object]:
    """(seconds taken, fn(*args)): a call as a worker runs it, timed where it runs."""
    t0 = time.monotonic()
    result = fn(*args)
    return time.monotonic() - t0, result


def _start_worker(memory: int, kind_modules: tuple[str, ...], warm: list) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle
    if memory:
        try:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            cap = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        except (ValueError, OSError):
            pass
    for module in kind_modules:  # each defines KIND, as a kind's spec module does
        try:
            register_kind(importlib.import_module(module).KIND)
        except Exception as e:  # noqa: BLE001 — a worker that cannot start would be restarted forever
            sys.stderr.write(f"worldspec sandbox: kind module {module} not loaded ({type(e).__name__}: {e})\n")
    for o in warm:  # the worlds in use when this worker was started (a replacement after a kill)
        try:
            worker_world(o)
        except Exception:  # noqa: BLE001 — the call that needs it reports the failure
            pass


# ---------------------------------------------------------------- the pool


def default_workers() -> int:
    """Two workers at least (grading never blocks the only one a probe could use), at most four."""
    return max(2, min(4, os.cpu_count() or 2))


@contextlib.contextmanager
def main_hidden():
    """The caller's __main__ without the file or module name a new worker would import it from.

    A forkserver's (or spawn's) child imports the parent's main script again, as __mp_main__, before
    it runs anything: a user's script without an `if __name__ == "__main__":` guard (one that makes a
    gymnasium env, say) would run once more in every worker. The workers run this module's functions
    only, never the script's, so they are started without it."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved = {k: vars(main)[k] for k in ("__file__", "__spec__") if k in vars(main)}
    with _MAIN_LOCK:
        try:
            vars(main).pop("__file__", None)
            main.__spec__ = None
            yield
        finally:
            vars(main).pop("__spec__", None)
            vars(main).update(saved)


_MAIN_LOCK = threading.Lock()


class CleanMainPopen(popen_forkserver.Popen):
    """The forkserver's way of starting a worker, without the caller's main script (main_hidden)."""

    def _launch(self, process_obj):
        with main_hidden():
            super()._launch(process_obj)


class CleanMainProcess(mp_context.ForkServerProcess):
    """A forkserver worker that does not import the caller's main script."""

    @staticmethod
    def _Popen(process_obj):  # noqa: N802 — multiprocessing's name
        return CleanMainPopen(process_obj)


class CleanMainContext(mp_context.ForkServerContext):
    """The forkserver start method, whose workers never import the caller's main script."""

    Process = CleanMainProcess


def _context():
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = CleanMainContext()
        # The bundled kinds this process has loaded (the worlds about to be evaluated) are imported
        # once by the forkserver, not by every worker it forks: about 0.4-1 s per worker.
        kinds = [m for m in map(KINDS.module_of, KINDS.loaded()) if m.startswith("worldspec.")]
        ctx.set_forkserver_preload([__name__, *kinds])
        return ctx
    return multiprocessing.get_context("spawn")


class Sandbox:
    """A pool of worker processes, started on first use and reused for every call."""

    def __init__(self, workers: int | None = None, deadlines: Deadlines = Deadlines(), *,
                 memory: int = WORKER_MEMORY, kind_modules: tuple[str, ...] = ()):
        self.workers = workers or default_workers()
        self.deadlines = deadlines
        self.memory = memory
        self.kind_modules = tuple(kind_modules)  # modules whose KIND every worker registers
        self._pool: pebble.ProcessPool | None = None
        self._lock = threading.Lock()
        # worlds a new worker compiles before its first task (read when each worker starts)
        self._warm: list[Origin] = []

    def _submit(self, timeout: float, fn, *args) -> concurrent.futures.Future:
        with self._lock:
            try:
                if self._pool is None or not self._pool.active:
                    self._pool = pebble.ProcessPool(max_workers=self.workers, initializer=_start_worker,
                                                    initargs=(self.memory, self.kind_modules, self._warm),
                                                    context=_context())
                return self._pool.schedule(timed, args=(fn, *args), timeout=timeout)
            except (OSError, RuntimeError) as e:  # no processes or semaphores here
                raise Unavailable(f"the worker pool cannot start ({type(e).__name__}: {e})") from None

    def _stalled(self, future, timeout: float) -> Unavailable:
        """The pool did not even start a call in time: give up on it (and on this pool)."""
        future.cancel()
        self.close()
        return Unavailable(f"the worker pool did not answer within {timeout + self.deadlines.start:g} s "
                           "(its workers do not start)")

    @staticmethod
    def _result(future, timeout: float):
        try:
            seconds, result = future.result(timeout=0)
            if seconds > timeout:  # done before pebble's next look (every 0.1 s), but late all the same
                raise Overrun(timeout, "time")
            return result
        except concurrent.futures.TimeoutError:
            raise Overrun(timeout, "time") from None
        except pebble.ProcessExpired as e:
            raise Overrun(timeout, f"the evaluating process died (exit code {e.exitcode})") from None
        except MemoryError:
            raise Overrun(timeout, "the evaluation ran out of memory") from None
        except concurrent.futures.BrokenExecutor as e:
            raise Unavailable(f"the worker pool is broken ({e})") from None
        except concurrent.futures.CancelledError:
            raise Unavailable("the worker pool was stopped") from None

    def call(self, timeout: float, fn, *args):
        """fn(*args) in a worker, waiting for it; Overrun when it runs past `timeout` seconds."""
        future = self._submit(timeout, fn, *args)
        concurrent.futures.wait([future], timeout=timeout + self.deadlines.start)
        if not future.done():
            raise self._stalled(future, timeout)
        return self._result(future, timeout)

    async def run(self, timeout: float, fn, *args):
        """fn(*args) in a worker without blocking the event loop; Overrun past `timeout` seconds."""
        future = self._submit(timeout, fn, *args)
        waiting = asyncio.wrap_future(future)
        try:
            await asyncio.wait([waiting], timeout=timeout + self.deadlines.start)
        except asyncio.CancelledError:
            future.cancel()  # pebble stops the worker running it
            raise
        if not future.done():
            raise self._stalled(future, timeout)
        if not waiting.cancelled():
            waiting.exception()  # read here, mapped below
        return self._result(future, timeout)

    def _warming(self, o: Origin) -> list | None:
        """Futures compiling a world in every worker (None: it is warm already)."""
        with self._lock:
            if o in self._warm:
                return None
            self._warm.append(o)
            del self._warm[:-WORLDS_PER_WORKER]
        return [self._submit(self.deadlines.certify, ready, o) for _ in range(self.workers)]

    def prepare(self, o: Origin) -> None:
        """Have the workers compile a world before its first evaluation, so that no evaluation's
        deadline pays for a compile (Overrun, RemoteSpecError, Mismatch or Unavailable when they cannot)."""
        futures = self._warming(o) or ()
        concurrent.futures.wait(futures, timeout=self.deadlines.certify + self.deadlines.start)
        self._prepared(futures)

    async def prepare_async(self, o: Origin) -> None:
        """`prepare` without blocking the event loop."""
        futures = self._warming(o) or ()
        waiting = [asyncio.wrap_future(f) for f in futures]
        if waiting:
            await asyncio.wait(waiting, timeout=self.deadlines.certify + self.deadlines.start)
        for w in waiting:
            if w.done() and not w.cancelled():
                w.exception()  # read here, mapped below
        self._prepared(futures)

    def _prepared(self, futures) -> None:
        for future in futures:
            if not future.done():
                raise self._stalled(future, self.deadlines.certify)
            self._result(future, self.deadlines.certify)

    def certify_folder(self, folder: str, seed: int | None, progress=None, timeout: float | None = None) -> dict:
        """`worldspec check FOLDER`: its files certified side by side, one a worker (each within `timeout`
        seconds, an Overrun past them), then each kind's cross-box checks; the report is certify_folder's."""
        timeout = timeout or self.deadlines.certify
        cache = not worldcache.disabled()
        files = world_files(folder)
        n = len(files)
        futures = [self._submit(timeout, certify_folder_file, p, seed, progress, cache, f"[{i}/{n}]",
                                os.path.relpath(p, folder))
                   for i, p in enumerate(files, 1)]
        try:
            shares = [self._waited(f, timeout) for f in futures]
            # each kind's cross-checks in a worker of their own (compiling its worlds again, or recalling them)
            crossing = [self._submit(timeout, cross_check_files, files, seed, cache) for files in crossed_files(shares)]
            futures += crossing
            cross = [problem for f in crossing for problem in self._waited(f, timeout)]
        except BaseException:  # an overrun, an error, Ctrl-C: the files still queued or running are dropped
            for f in futures:
                f.cancel()
            raise
        return folder_report(folder, shares, cross)

    def _waited(self, future, timeout: float):
        """A call's result once it is done. The calls of one batch are queued in order, so when the one
        before it is done this one has started (or starts at once): it has its deadline and the pool's
        start-up allowance from then."""
        concurrent.futures.wait([future], timeout=timeout + self.deadlines.start)
        if not future.done():
            raise self._stalled(future, timeout)
        return self._result(future, timeout)

    def resize(self, workers: int | None) -> None:
        """Have `workers` worker processes from the next call on (None: as many as now)."""
        if workers and workers != self.workers:
            self.close()
            self.workers = workers

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.stop()
                self._pool.join(timeout=10)
                self._pool = None


_SHARED: list[Sandbox] = []


def shared() -> Sandbox:
    """The process's sandbox, reused by every run and command in it (stopped at exit)."""
    if not _SHARED:
        install(Sandbox())
        atexit.register(lambda: _SHARED and _SHARED[0].close())
    return _SHARED[0]


def install(sandbox: Sandbox | None) -> Sandbox | None:
    """Make `sandbox` the process's sandbox (other deadlines, kind modules; None: a default one when
    next needed); returns the one it replaces."""
    previous = _SHARED[0] if _SHARED else None
    _SHARED[:] = [sandbox] if sandbox is not None else []
    return previous


# ---------------------------------------------------------------- one-shot commands (`probe`, `check`)


def _file_origin(path: str, seed: int | None) -> Origin:
    return Origin(os.path.abspath(resolve_world_path(path)), seed)


def _here_instead(error: Exception, path: str, seed: int | None, sandbox: Sandbox):
    """The world compiled in this process, when the pool is unavailable or a worker's spec error may
    only mean that its kind is registered here alone (tests register kinds at run time); otherwise
    the worker's diagnostic."""
    if isinstance(error, Unavailable):
        return load_world(path, seed), f"{error}: evaluated in this process, with no time limit"
    if not local_kinds(sandbox.kind_modules):
        raise error
    world = load_world(path, seed)  # a genuine spec error is raised here, as in the worker
    return world, f"its kind {world.kind!r} is registered only in this process: evaluated here, with no time limit"


def probe_once(path: str, seed: int | None, text: str, sandbox: Sandbox | None = None):
    """(feedback, units cap, note) of one probe of a world file: `worldspec probe`."""
    sandbox = sandbox or shared()
    o = _file_origin(path, seed)
    try:
        sandbox.prepare(o)
        cap = sandbox.call(sandbox.deadlines.probe, unit_cap, o)
    except (RemoteSpecError, Unavailable) as e:
        world, note = _here_instead(e, o.path, seed, sandbox)
        return probe_of(world, text), world.budget.units_per_call, note
    try:
        return sandbox.call(sandbox.deadlines.probe, evaluate, o, "probe", text), cap, None
    except Overrun as e:
        return overrun_feedback(e, cap), cap, None


def overrun_feedback(e: Overrun, cap: int) -> Feedback:
    """What a probe that overran its deadline shows the agent (charged the per-call cap)."""
    return Feedback(f"limit: the program {e.said}; nothing it printed is shown. Probes must finish quickly: "
                    "try a smaller one.", cap, "limit")


def certify_once(path: str, seed: int | None, progress=None, timeout: float | None = None,
                 sandbox: Sandbox | None = None, jobs: int | None = None) -> tuple[dict, str | None]:
    """(certification report, note) of a world file or a folder: `worldspec check` (Overrun past the deadline).
    A folder's files are certified `jobs` at a time (default: the sandbox's workers)."""
    sandbox = sandbox or shared()
    timeout = timeout or sandbox.deadlines.certify
    if os.path.isdir(path):
        sandbox.resize(jobs)
        try:
            return sandbox.certify_folder(path, seed, progress, timeout), None
        except Unavailable as e:
            return certify_folder(path, seed, progress=progress), f"{e}: certified in this process, with no time limit"
    o = _file_origin(path, seed)
    try:
        return sandbox.call(timeout, certify_file, o, progress), None
    except (RemoteSpecError, Unavailable) as e:
        world, note = _here_instead(e, o.path, seed, sandbox)
        return certify(world, progress), note
