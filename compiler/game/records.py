"""A test game's exact optimum as a world-cache record (compiler/artefacts.py, docs/cache.md).

The optimum of a GSI box's test game is a dynamic programme over (opponent state, board, rounds
left): ~120k edges for comparing-cards, seconds of meta-language calls. Its result is small: the
value, a best plan, three facts about it and the policy table (the best move at each (opponent
state, board, rounds left) the programme reached, thousands of entries: the oracle agent of a
`play rounds` box and certification against a mixed opponent play by it). A recalled optimum's
policy is a `LazyPolicy`: the table is decoded the first time it is asked, and a state outside it
(or a table too large to store) runs the programme again, then and only then.
"""
from __future__ import annotations

import math
from typing import Callable

from worldspec.compiler.artefacts import FLOAT, Uncacheable
from worldspec.compiler.game.engine import Optimum, freeze
from worldspec.values import MAX_NEST


MAX_TABLE = 200_000  # policy entries a record keeps; a larger table is rebuilt when asked for instead


class LazyPolicy:
    """A recalled optimum's round-by-round policy: the stored table (decoded on the first call), and where
    a state is not in it, the programme run again (`recompute()` gives that optimum's policy)."""

    def __init__(self, stored: list | None, recompute: Callable[[], Callable | None]):
        self._stored = stored
        self._table: dict | None = None
        self._recompute = recompute
        self._policy: Callable | None = None

    def __call__(self, state, board, rounds_left):
        if rounds_left == 0:
            return None  # as the programme's own policy: no move is left to choose
        if self._table is None and self._stored is not None:
            try:
                self._table = decode_table(self._stored)
            except (ValueError, TypeError):
                self._table = {}
            self._stored = None
        if self._table:
            key = (freeze(state), freeze(board), rounds_left)
            if key in self._table:
                return self._table[key]
        if self._policy is None:
            self._policy = self._recompute()
            if self._policy is None:
                raise RuntimeError("the recomputed optimum has no policy")
        return self._policy(state, board, rounds_left)


def encode_key(x):
    """A frozen state or board (engine.freeze: tuples of strings, numbers, none, bools) as JSON."""
    t = type(x)
    if t is tuple:
        return [encode_key(y) for y in x]
    if x is None or t is str or t is int or t is bool:
        return x
    if t is float and math.isfinite(x):
        return {FLOAT: repr(x)}
    raise Uncacheable(f"a {t.__name__} in a game state")


def decode_key(j, depth: int = 0):
    """The frozen key `encode_key` wrote (lists back to tuples); ValueError otherwise."""
    if depth > 3 * MAX_NEST:
        raise ValueError("a state nested too deeply")
    t = type(j)
    if t is list:
        return tuple(decode_key(y, depth + 1) for y in j)
    if j is None or t is str or t is int or t is bool:
        return j
    if t is dict and set(j) == {FLOAT} and type(j[FLOAT]) is str and len(j[FLOAT]) <= 40:
        return float(j[FLOAT])
    raise ValueError("not a game state")


def encode_table(table: dict | None) -> list | None:
    """An optimum's table as [[state, board, rounds left, move], ...] (None: no table, or too large)."""
    if table is None or len(table) > MAX_TABLE:
        return None
    try:
        return [[encode_key(s), encode_key(d), k, move] for (s, d, k), (_, move) in table.items()]
    except Uncacheable:
        return None


def decode_table(j) -> dict:
    """(freeze(state), freeze(board), rounds left) -> move (None where no move was legal), from encode_table's
    list."""
    if type(j) is not list or len(j) > MAX_TABLE:
        raise ValueError("not a policy table")
    out = {}
    for row in j:
        if type(row) is not list or len(row) != 4 or type(row[2]) is not int \
                or (row[3] is not None and type(row[3]) is not str):
            raise ValueError("not a policy entry")
        out[(decode_key(row[0]), decode_key(row[1]), row[2])] = row[3]
    return out


def encode_optimum(opt: Optimum) -> dict:
    """The record of an optimum (Uncacheable for a value that is no int or float, e.g. a Fraction)."""
    if type(opt.value) not in (int, float) or (type(opt.value) is float and not math.isfinite(opt.value)):
        raise Uncacheable("an optimum that is not a finite number")
    return {"value": opt.value, "float": type(opt.value) is float, "plan": list(opt.plan),
            "deterministic": opt.deterministic, "states": opt.states, "exact": opt.exact,
            "policy": opt.policy is not None, "table": encode_table(opt.table) if opt.policy is not None else None}


FIELDS = {"value", "float", "plan", "deterministic", "states", "exact", "policy", "table"}


def decode_optimum(j, moves: tuple[str, ...], horizon: int, recompute: Callable[[], Callable | None]) -> Optimum:
    """The optimum a record holds, checked against the game (its moves, the test's horizon); ValueError if
    it is not one `encode_optimum` could have written for this test. Its policy, if it had one, is lazy."""
    if type(j) is not dict or set(j) != FIELDS:
        raise ValueError("not an optimum record")
    value, plan = j["value"], j["plan"]
    if type(j["float"]) is not bool or type(value) not in (int, float) or not math.isfinite(value):
        raise ValueError("not an optimum's value")
    value = float(value) if j["float"] else value
    if type(value) is not (float if j["float"] else int):
        raise ValueError("an optimum's value of the wrong type")
    if type(plan) is not list or len(plan) != horizon or any(type(m) is not str or m not in moves for m in plan):
        raise ValueError("not a plan of this game")
    flags = (j["deterministic"], j["exact"], j["policy"])
    if any(type(f) is not bool for f in flags) or type(j["states"]) is not int or j["states"] < 0:
        raise ValueError("not an optimum's facts")
    if j["table"] is not None and type(j["table"]) is not list:
        raise ValueError("not a policy table")
    policy = LazyPolicy(j["table"], recompute) if j["policy"] else None
    return Optimum(value, tuple(plan), j["deterministic"], j["states"], j["exact"], policy)
