"""`kind holdem`: heads-up no-limit Texas Hold'em on pokerkit against declared baseline bots.

Spec items (docs/holdem.md has the reference):

    blinds 1, 2                        # small and big blind (chips)
    stack 200                          # every hand starts with these stacks
    hands 10                           # deals per opponent; each is played from every seat
    seats button, big_blind            # the seats played (default both: duplicate deals)
    recent 8                           # actions of recent history an observation shows
    certify_hands 40                   # seeded random hands `worldspec check` plays
    opponent tag "tight-aggressive" {  # a baseline bot: bot always_call | tight_aggressive | random
      bot tight_aggressive
      raise 0.65                       #   equity at which it raises (tight_aggressive)
      call 0.45                        #   equity at which it calls
      samples 60                       #   Monte-Carlo deals per equity estimate
    }
    baseline tag, caller               # bots run as systems beside every model
    players 6                          # a ring game of 3 to 10 seats (InteractiveBench: six), stacks carried
    tables 10                          #   from hand to hand; tables played, `hands` hands each
"""
from __future__ import annotations

import attrs

from worldspec import ast
from worldspec.compiler.api import Budget, HoldemFace, Kind
from worldspec.compiler.common import draw_params, interpolate, meta_compiler
from worldspec.compiler.holdem.bots import STYLES, Bot
from worldspec.compiler.holdem.engine import SEATS, Table
from worldspec.compiler.holdem.manual import render_holdem_manual
from worldspec.compiler.holdem.world import HoldemWorld
from worldspec.compiler.items import (constant_reader, group_items, one, read_baselines, read_seats,
                                      reject_program_sections, word)
from worldspec.diagnostics import SpecError, did_you_mean

ITEMS = ("blinds", "stack", "hands", "seats", "recent", "certify_hands", "baseline", "players", "tables")
BLOCKS = ("opponent",)
BOT_FIELDS = ("bot", "raise", "call", "samples")


def compile_spec(spec: ast.Spec, seed: int | None = None) -> HoldemWorld:
    """A holdem spec -> its HoldemWorld (at the given seed, or the declared one)."""
    seed = spec.seed if seed is None else seed
    reject_program_sections(spec)
    if spec.base or spec.rules or spec.herrings or spec.budget:
        raise SpecError(spec.span, "a holdem world has no base, rule, herring or budget sections",
                        "It is played hand by hand against its opponents.")
    items = group_items(spec, ITEMS, BLOCKS)
    params = draw_params(spec, seed)
    constant = constant_reader(meta_compiler(spec, params))

    def integer(key: str, default: int | None, lo: int = 1, hi: int = 10 ** 6) -> int:
        g = one(items, key, spec, required=default is None)
        if g is None:
            return default
        v = constant(g.args[0]) if len(g.args) == 1 else None
        if type(v) is not int or not lo <= v <= hi:
            raise SpecError(g.span, f"{key} takes one integer from {lo} to {hi}", f"For example: {key} {lo}")
        return v

    table = read_table(items, spec, constant, integer("stack", None, 2))
    opponents = read_bots(items, spec, constant)
    players = integer("players", 2, 2, 10)
    if players > 2 and items["seats"]:
        raise SpecError(items["seats"][0].span, "a ring game (players 3 or more) has no seats item",
                        "The button moves one seat every hand; seats are for heads-up duplicate deals.")
    world = HoldemWorld(
        name=spec.name, version=spec.version, language=spec.language, kind=spec.kind, seed=seed, default_seed=spec.seed,
        summary=interpolate(spec.summary, params), params=tuple(params.items()), manual="", examples=(),
        tasks=(), rules=(), herrings=(), budget=Budget(rounds=0, calls_per_round=0, max_calls=0),
        table=table, hands=integer("hands", 10, 1, 10_000), seats=read_seats(items, spec, SEATS), opponents=opponents,
        baselines=read_baselines(items, opponents), recent=integer("recent", 8, 0, 100),
        certify_hands=integer("certify_hands", 40, 1, 10_000), players=players,
        tables=integer("tables", 1, 1, 1000), source=spec.file)
    return attrs.evolve(world, manual=render_holdem_manual(spec, world, params))


def read_table(items: dict, spec: ast.Spec, constant, stack: int) -> Table:
    """The blinds (small below big, both positive) and the stack (more than a big blind)."""
    g = one(items, "blinds", spec)
    vals = [constant(a) for a in g.args]
    if len(vals) != 2 or any(type(v) is not int for v in vals) or not 0 < vals[0] <= vals[1]:
        raise SpecError(g.span, "blinds takes SMALL, BIG: two positive integers, small not above big",
                        "For example: blinds 1, 2")
    if stack <= vals[1]:
        raise SpecError(spec.span, f"a stack of {stack} does not cover the big blind {vals[1]}", "")
    return Table(vals[0], vals[1], stack)


def read_bots(items: dict, spec: ast.Spec, constant) -> tuple[Bot, ...]:
    """The opponent blocks: each a baseline bot of a known style (names unique, at least one)."""
    bots: list[Bot] = []
    for g in items["opponent"]:
        if any(b.name == g.name for b in bots):
            raise SpecError(g.span, f"opponent {g.name} is declared twice", "Opponent names must be unique.")
        fields = {}
        for f in g.fields:
            if f.key not in BOT_FIELDS:
                raise SpecError(f.span, f"unknown opponent field {f.key!r}",
                                did_you_mean(f.key, BOT_FIELDS).strip() or "Fields: " + ", ".join(BOT_FIELDS))
            if f.key in fields or len(f.args) != 1:
                raise SpecError(f.span, f"{f.key} is given once, with one value", "")
            fields[f.key] = f
        if "bot" not in fields:
            raise SpecError(g.span, f"opponent {g.name} names no bot", "Add: bot " + " | ".join(STYLES))
        style = word(fields["bot"].args[0], "bot")
        if style not in STYLES:
            raise SpecError(fields["bot"].span, f"unknown bot {style!r}",
                            did_you_mean(style, tuple(STYLES)).strip() or "Bots: " + ", ".join(STYLES))
        opts = {}
        for key, name in (("raise", "raise_at"), ("call", "call_at")):
            if key in fields:
                v = constant(fields[key].args[0])
                if type(v) not in (int, float) or not 0 <= v <= 1:
                    raise SpecError(fields[key].span, f"{key} takes an equity from 0 to 1", f"For example: {key} 0.6")
                opts[name] = float(v)
        if "samples" in fields:
            v = constant(fields["samples"].args[0])
            if type(v) is not int or not 1 <= v <= 5000:
                raise SpecError(fields["samples"].span, "samples takes an integer from 1 to 5000", "")
            opts["samples"] = v
        bots.append(Bot(g.name, g.note or g.name, style, **opts))
    if not bots:
        raise SpecError(spec.span, "this holdem world has no opponent", 'Add: opponent caller "calls" { bot always_call }')
    return tuple(bots)


KIND = Kind("holdem", compile_spec, "heads-up no-limit Texas Hold'em on pokerkit against baseline bots",
            faces=(HoldemFace,))
