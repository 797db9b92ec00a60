"""Values a kind computes while compiling a world, recalled instead of computed again.

Compiling some worlds costs seconds of work whose results are plain values: a box's test
answers (a recorder over ~13k calls in CII fib-recursion), its `precompute` tables, a game's
exact optimum (~120k edges in GSI comparing-cards). `compiler/build.py` opens an `Artefacts`
store for each `load_world` (filled from the on-disk cache, compiler/worldcache.py) and makes it
current while the kind compiles; a kind asks it with `recall(name, compute, encode, decode)`:

- a record read from the cache is decoded (and validated) by `decode`; a record that does not
  decode (ValueError: a corrupted or tampered file) is computed again, never an error;
- otherwise `compute()` runs, and its value is encoded (JSON-ready) for the cache; a value that
  `encode` cannot represent (Uncacheable: a function value) is simply not kept.

With no store open (a spec compiled from text, a test calling a kind directly, `--no-cache`)
`recall` is `compute()`. Records are our own format: JSON values written by `encode_value` and
read back by `decode_value` with every type and limit checked, nothing unpickled, nothing
evaluated.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
from typing import Callable

from worldspec.values import MAX_INT_BITS, MAX_LEN, MAX_NEST


class Uncacheable(Exception):
    """A computed value the cache's format does not represent (it is kept in memory only)."""


class Artefacts:
    """The records of one world's compile: those read from the cache, and those computed now."""

    def __init__(self, records: dict | None = None):
        self.stored: dict = dict(records or {})  # name -> JSON value, as read (decoded on use)
        self.fresh: dict = {}  # name -> JSON value computed by this compile
        self.dropped: set[str] = set()  # stored records that did not decode, or whose value was not kept
        self.computed = 0  # records computed (not recalled) by this compile
        self.recalled = 0

    @property
    def changed(self) -> bool:
        """Whether the cache file should be written again (something computed, or a damaged record dropped)."""
        return self.computed > 0 or bool(self.dropped)

    @property
    def records(self) -> dict:
        """What the cache file should hold now: the stored records still good (every record of a file is
        for the same key, so one this compile did not ask for, e.g. a certification, stays) and the new."""
        out = {k: v for k, v in self.stored.items() if k not in self.dropped}
        out.update(self.fresh)
        return out

    def recall(self, name: str, compute: Callable[[], object], encode: Callable[[object], object],
               decode: Callable[[object], object]):
        """The value of record `name`: decoded from the cache when it holds a valid one, else computed."""
        if name in self.stored and name not in self.dropped:
            try:
                value = decode(self.stored[name])
            except (ValueError, TypeError, KeyError, IndexError):  # a damaged record: compute it again
                self.dropped.add(name)
            else:
                self.recalled += 1
                return value
        value = compute()
        self.computed += 1
        try:
            self.fresh[name] = encode(value)
        except Uncacheable:
            self.dropped.add(name)
        return value


_CURRENT: contextvars.ContextVar[Artefacts | None] = contextvars.ContextVar("worldspec_artefacts", default=None)


def recall(name: str, compute: Callable[[], object], encode: Callable[[object], object],
           decode: Callable[[object], object]):
    """`Artefacts.recall` on the store of the compile under way; with none, just `compute()`."""
    store = _CURRENT.get()
    return compute() if store is None else store.recall(name, compute, encode, decode)


@contextlib.contextmanager
def collecting(store: Artefacts | None):
    """Make `store` the current compile's store (None: no cache) for the duration of the block."""
    token = _CURRENT.set(store)
    try:
        yield store
    finally:
        _CURRENT.reset(token)


# ---------------------------------------------------------------- meta-language values as JSON

# JSON has no NaN or infinity and does not tell 1 from 1.0 in every reader, and a map's keys may be
# numbers: so floats and maps are tagged objects, everything else is the JSON value itself.
FLOAT, MAP = "f", "m"


def encode_value(v, depth: int = 0):
    """A meta-language value (none, bool, int, float, str, list, map) as a JSON value; Uncacheable otherwise."""
    if depth > MAX_NEST:
        raise Uncacheable("nested too deeply")
    t = type(v)
    if v is None or t is bool or t is int or t is str:
        return v
    if t is float:
        return {FLOAT: repr(v)}
    if t is list:
        return [encode_value(x, depth + 1) for x in v]
    if t is dict:
        return {MAP: [[encode_value(k, depth + 1), encode_value(x, depth + 1)] for k, x in v.items()]}
    raise Uncacheable(f"a {t.__name__} value")


def decode_value(j, depth: int = 0):
    """The value `encode_value` wrote; ValueError for anything it could not have written."""
    if depth > MAX_NEST:
        raise ValueError("nested too deeply")
    t = type(j)
    if j is None or t is bool or t is str:
        if t is str and len(j) > MAX_LEN:
            raise ValueError("string too long")
        return j
    if t is int:
        if j.bit_length() > MAX_INT_BITS:
            raise ValueError("integer too large")
        return j
    if t is list:
        if len(j) > MAX_LEN:
            raise ValueError("list too long")
        return [decode_value(x, depth + 1) for x in j]
    if t is dict and len(j) == 1:
        if FLOAT in j and type(j[FLOAT]) is str and len(j[FLOAT]) <= 40:
            f = float(j[FLOAT])  # ValueError for a text that is no float
            if not math.isnan(f) and repr(f) != j[FLOAT]:
                raise ValueError("not a float as written")
            return f
        if MAP in j and type(j[MAP]) is list and len(j[MAP]) <= MAX_LEN:
            out = {}
            for pair in j[MAP]:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError("a map entry is not a pair")
                k = decode_value(pair[0], depth + 1)
                if type(k) in (list, dict) or k in out:
                    raise ValueError("a map key that cannot be one")
                out[k] = decode_value(pair[1], depth + 1)
            return out
    raise ValueError("not a value record")


def decode_text(j) -> str:
    """A record holding one string (a rendered answer)."""
    if type(j) is not str or len(j) > MAX_LEN:
        raise ValueError("not a text record")
    return j
