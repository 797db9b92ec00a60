"""Pool play, for game worlds with an opponent pool (the Trust Game): every system plays the pool.

For every opponent of the world's pool, every seat and every match index, a
system plays one match: the horizon and the opponent's random stream come
from the world's seed, so every system meets the same matches. A model plays
in one conversation per match, one request per round: it sees the rules, its
seat's payoffs and the full history, and answers with a move (the first fenced
block, or the whole reply); an unreadable move gets one retry, then the
world's fallback move is played (and counted). Strategies of the pool play as
agents locally (`--agent grim`); the world's baselines always play beside the
models. metrics.pool_results turns the match records into the paper's numbers.
A model's match is a world session in the sandbox's workers (runtime.Grader.match):
a round whose world code runs past its deadline ends the match, recorded as lost
(it cannot be scored) while the other matches go on.
"""
from __future__ import annotations

from worldspec.compiler import InputError

from ..agents import strategy_agents
from ..answers import extract_answer
from ..models import FatalError, LostError, Model, Request
from .base import OneWorld, Plan, ProbesTheWorld, ScheduleLineup, fingerprint
from .matches import conv_id, finish, round_prompt, rules_prompt
from .tournament import RoundRobinLineup
from .pool_report import POOL_LAYOUT


# ----------------------------------------------------------------------------
# Matches


async def model_match(rt, world, model: Model, opponent: str, seat: str, k: int, settings: dict) -> dict:
    conv = conv_id(model.name, opponent, seat, k)
    m = await rt.grader(world).match(opponent, seat, k)  # its rounds run in the sandbox's workers
    moves = world.moves_for(seat)
    history = [{"role": "system", "content": rules_prompt(world, seat)},
               {"role": "user", "content": round_prompt(1, moves=moves)}]
    invalid = 0
    totals = [0, 0]
    lost = None
    step = 0
    try:
        while not m.done:
            move = None
            for attempt in range(2):
                req = Request(messages=tuple(history), settings=settings, purpose="move",
                              sample=f"pool/{opponent}/{seat}/{k}",
                              meta={"conv": conv, "condition": "pool", "trajectory": k, "t": len(m.rounds) + 1,
                                    "step": step, "prefix": 0})
                step += 1
                reply = await rt.call(model, req)
                history.append(reply.message(with_tool_calls=False))
                try:
                    got = world.parse_moves(extract_answer(reply.content), seat)
                    if len(got) == 1:
                        move = got[0]
                        break
                except InputError:
                    pass
                if attempt == 0:
                    history.append({"role": "user", "content": f"Reply with exactly one move: {' or '.join(moves)}."})
            if move is None:
                move, invalid = world.fallback, invalid + 1
            r = await m.play(move)
            if r is None:  # the world's code ran past its deadline: the match cannot be scored
                lost = m.error
                break
            totals[0] += r.my_payoff
            totals[1] += r.their_payoff
            rt.emit({"type": "game_round", "id": f"round:{conv}:{r.index}", "conv": conv, "system": model.name,
                     "opponent": opponent, "seat": seat, "match": k, "round": r.index, "mine": r.mine,
                     "theirs": r.theirs, "payoff": r.my_payoff, "fallback": move == world.fallback and invalid > 0})
            if not m.done:
                history.append({"role": "user", "content": round_prompt(r.index + 1, r, totals, moves)})
    except LostError as e:
        lost = str(e)
    return finish(rt, world, model.name, opponent, seat, k, m.horizon, m.rounds, invalid, lost or m.error)


# ----------------------------------------------------------------------------
# A run


class PoolLineup(ScheduleLineup):
    """Every model and strategy agent (the world's baselines among them; `local` holds agents.StrategyAgent)
    against the pool."""

    def local_name(self, player) -> str:
        return player.name

    def local_id(self, player) -> str:
        return player.model_id

    def conversation(self, system: str, entry: tuple) -> str:
        return conv_id(system, *entry)

    async def model_play(self, rt, model, entry: tuple) -> dict:
        return await model_match(rt, self.world, model, *entry, self.config.settings)

    def local_play(self, rt, player, entry: tuple) -> dict:
        rounds = self.world.play_strategy(player.strategy, *entry)
        return finish(rt, self.world, player.name, *entry, self.world.horizon_for(*entry), rounds, 0, None)

    def plan(self) -> Plan:
        w = self.world
        rounds = sum(w.horizon_for(o, s, k) for o, s, k in w.schedule())
        rows = tuple((m.name, len(w.schedule()), rounds, 2 * rounds) for m in self.models) + \
            tuple((s.name, len(w.schedule()), rounds, 0) for s in self.local)
        return Plan(f"{w.name}: {len(w.schedule())} matches per system ({rounds} rounds)",
                    ("system", "matches", "rounds", "calls<="), rows, sum(r[3] for r in rows),
                    "one call per round, and one retry per unreadable move; strategies play locally")


class Pool(OneWorld, ProbesTheWorld):
    name = "pool"
    layout = POOL_LAYOUT  # pool_report.py: how its runs are summarised and laid out

    def agents_for(self, world) -> tuple[str, ...]:
        """With no --model: the pool's strategies (a round robin: its baselines, who always enter)."""
        return () if world.round_robin else tuple(o.name for o in world.opponents)

    def lineup_for(self, world, models, agents, config):
        local = strategy_agents(world, dict.fromkeys([*world.baselines, *agents]))
        if world.round_robin:
            names = [m.name for m in models] + [s.name for s in local]
            if len(names) < 2:
                raise FatalError(f"a round robin needs two systems at least (here: {', '.join(names) or 'none'})")
            return RoundRobinLineup(world, list(models), local, config)
        return PoolLineup(world, list(models), local, config)

    def identity_for(self, world) -> dict:
        if world.round_robin:
            return {"name": world.name, "seed": world.seed, "lineup": "round_robin",
                    "fingerprint": fingerprint([world.manual, world.seed, world.delta, world.max_rounds,
                                                world.horizon, world.matches, list(world.seats)]),
                    "pool": [o.name for o in world.opponents], "seats": list(world.seats), "matches": world.matches,
                    "baselines": list(world.baselines), "delta": world.delta, "max_rounds": world.max_rounds,
                    "horizons": []}
        schedule = [(o, s, k, world.horizon_for(o, s, k)) for o, s, k in world.schedule()]
        return {"name": world.name, "seed": world.seed,
                "fingerprint": fingerprint([world.manual, world.seed, schedule]),
                "pool": [o.name for o in world.opponents], "seats": list(world.seats), "matches": world.matches,
                "baselines": list(world.baselines), "horizons": [h for *_, h in schedule]}

    def exploration_calls(self, world) -> int:
        return world.budget.turns


POOL = Pool()
