"""The round robin of a game world with `lineup round_robin` (InteractiveBench's Trust Game tournament).

Every system of the run (its models, the world's baseline strategies and any `--agent` strategies)
plays every other: for each unordered pair, `matches` repeats, each repeat from both seats, with
one horizon per repeat drawn from the world's seed (continue with probability delta, at most
max_rounds rounds), as trust_game/tournament.py Tournament._run_pair does. Both players choose
at once each round. A model plays each match in one conversation, one request per round; its move
is the first COOPERATE or DEFECT (the world's move names) anywhere in its reply (agents.py
LLMAgent._extract_action_from_response); an unreadable reply is asked again with the same messages,
up to ATTEMPTS tries in all, then the world's fallback move is played (agents.py: five tries, then
"cooperate"). Each side of a match is one record (matches.finish), so metrics.pool_results gives the
paper's Score (payoff per round over all rounds played), CoopRate and BetrayalRate.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import attrs

from ..models import LostError, Model, Request
from .base import Plan
from .matches import conv_id, finish, round_prompt, rules_prompt

ATTEMPTS = 5  # agents.py LLMAgent.choose_action: max_retries = 5, then "cooperate"
# agents.py LLMAgent(temperature=0.7): the released tournament's sampling temperature (--temperature overrides)
SETTINGS = {"temperature": 0.7}


class ModelSide:
    """A model in one seat of one match: its conversation, one request per round."""

    def __init__(self, rt, world, model: Model, opponent: str, seat: str, r: int, settings: dict):
        self.rt, self.world, self.model, self.seat, self.r = rt, world, model, seat, r
        self.name = model.name
        self.conv = conv_id(model.name, opponent, seat, r)
        self.moves = world.moves_for(seat)
        self.history = [{"role": "system", "content": rules_prompt(world, seat)},
                        {"role": "user", "content": round_prompt(1, moves=self.moves)}]
        self.settings = settings
        self.invalid = 0
        self.step = 0

    async def choose(self, t: int) -> str:
        for attempt in range(ATTEMPTS):
            req = Request(messages=tuple(self.history), settings=self.settings, purpose="move",
                          sample=f"round_robin/{self.conv}/{t}/{attempt}",
                          meta={"conv": self.conv, "condition": "pool", "trajectory": self.r, "t": t,
                                "step": self.step, "prefix": 0})
            self.step += 1
            reply = await self.rt.call(self.model, req)
            move = self.world.read_anywhere(reply.content)
            if move is not None:
                self.history.append(reply.message(with_tool_calls=False))
                return move
        self.invalid += 1
        self.history.append({"role": "assistant", "content": self.world.fallback})
        return self.world.fallback

    def observe(self, last, totals: tuple, done: bool) -> None:
        if not done:
            self.history.append({"role": "user", "content": round_prompt(last.index + 1, last, totals, self.moves)})


class StrategySide:
    """A strategy in one seat of one match."""

    def __init__(self, world, agent, seat: str, horizon: int, rng):
        self.name, self.invalid = agent.name, 0
        self.player = world.seat_player(agent.strategy, seat, horizon, rng)

    async def choose(self, t: int) -> str:
        return self.player.choose()

    def observe(self, last, totals: tuple, done: bool) -> None:
        self.player.observe(last.mine, last.theirs)


@attrs.define
class RoundRobinLineup:
    """Every model and strategy agent against every other (`local` holds agents.StrategyAgent)."""

    world: object
    models: list
    local: list
    config: object

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.models) + tuple(s.name for s in self.local)

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.model_id for m in self.models) + tuple(s.model_id for s in self.local)

    def schedule(self) -> list[tuple[str, str, int, str]]:
        return self.world.tournament(self.names)

    def jobs(self) -> list[str]:
        out = []
        for a, b, r, seat in self.schedule():
            out += [conv_id(a, b, seat, r), conv_id(b, a, self.world.other_seat(seat), r)]
        return out

    def plan(self) -> Plan:
        w, models = self.world, {m.name for m in self.models}
        rounds = {n: 0 for n in self.names}
        matches = {n: 0 for n in self.names}
        for a, b, r, _ in self.schedule():
            for n in (a, b):
                rounds[n] += w.pair_horizon(a, b, r)
                matches[n] += 1
        rows = tuple((n, matches[n], rounds[n], ATTEMPTS * rounds[n] if n in models else 0) for n in self.names)
        return Plan(f"{w.name}: round robin of {len(self.names)} systems, {w.matches} repeats per pair from "
                    f"{len(w.seats)} seat(s)", ("system", "matches", "rounds", "calls<="), rows,
                    sum(r[3] for r in rows), f"one call per round, up to {ATTEMPTS} tries per unreadable move; "
                    "strategies play locally")

    def side(self, rt, name: str, opponent: str, seat: str, r: int, horizon: int):
        model = next((m for m in self.models if m.name == name), None)
        if model is not None:
            return ModelSide(rt, self.world, model, opponent, seat, r, {**SETTINGS, **self.config.settings})
        agent = next(s for s in self.local if s.name == name)
        return StrategySide(self.world, agent, seat, horizon, self.world.pair_rng(name, opponent, r, seat, name))

    async def match(self, rt, a: str, b: str, r: int, seat: str) -> list[dict]:
        """One match, a in `seat` and b in the other; both sides' records."""
        w = self.world
        horizon = w.pair_horizon(a, b, r)
        seats = (seat, w.other_seat(seat))
        sides = (self.side(rt, a, b, seats[0], r, horizon), self.side(rt, b, a, seats[1], r, horizon))
        rounds: tuple[list, list] = ([], [])
        totals = [0, 0]
        lost = None
        try:
            for t in range(1, horizon + 1):
                x, y = await asyncio.gather(sides[0].choose(t), sides[1].choose(t))
                rounds[0].append(w.round_for(t, seats[0], x, y))
                rounds[1].append(w.round_for(t, seats[1], y, x))
                totals = [totals[0] + rounds[0][-1].my_payoff, totals[1] + rounds[1][-1].my_payoff]
                sides[0].observe(rounds[0][-1], tuple(totals), t == horizon)
                sides[1].observe(rounds[1][-1], (totals[1], totals[0]), t == horizon)
        except LostError as e:
            lost = str(e)
        return [finish(rt, w, sides[i].name, (b, a)[i], seats[i], r, horizon, rounds[i], sides[i].invalid, lost)
                for i in (0, 1)]

    async def run(self, rt, out: Path) -> list[dict]:
        done = await asyncio.gather(*(self.match(rt, *e) for e in self.schedule()))
        return [rec for pair in done for rec in pair]
