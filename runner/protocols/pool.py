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
"""
from __future__ import annotations

from worldspec.compiler import InputError

from ..agents import strategy_agents
from ..answers import extract_answer
from ..models import LostError, Model, Request
from .base import OneWorld, Plan, ScheduleLineup, fingerprint


def conv_id(system: str, opponent: str, seat: str, k: int) -> str:
    return f"{system}|pool|{opponent}|{seat}|{k}"


# ----------------------------------------------------------------------------
# What a model reads


def rules_prompt(world, seat: str) -> str:
    moves = world.moves_for(seat)
    length = (f"The game lasts {world.horizon} rounds." if world.horizon else
              f"After every round the game continues with probability {world.delta:g} (so it lasts "
              f"{1 / (1 - world.delta):.3g} rounds on average, at most {world.max_rounds}); you are not told "
              "when it ends.")
    return ("You are playing a repeated two-player game against another player.\n\n"
            + (world.manual.split("## The game")[0].split("\n", 2)[-1].strip() + "\n\n" if world.manual else "")
            + f"Each round you both choose a move at the same time: {' or '.join(moves)}. Payoffs per round:\n"
            + "\n".join(world.payoff_lines(seat)) + f"\n\n{length}\n\n"
            "Each round, reply with your move only (for example in a fenced code block).")


def round_prompt(r: int, last=None, totals=(0, 0), moves=()) -> str:
    head = ""
    if last is not None:
        head = (f"Round {last.index}: you played {last.mine}, the other played {last.theirs}. You got "
                f"{last.my_payoff:g}, the other got {last.their_payoff:g}. Totals: you {totals[0]:g}, "
                f"the other {totals[1]:g}.\n\n")
    return head + f"Round {r}. Your move ({' or '.join(moves)})?"


# ----------------------------------------------------------------------------
# Matches


async def model_match(rt, world, model: Model, opponent: str, seat: str, k: int, settings: dict) -> dict:
    conv = conv_id(model.name, opponent, seat, k)
    m = world.new_match(opponent, seat, k)
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
            r = m.play(move)
            totals[0] += r.my_payoff
            totals[1] += r.their_payoff
            rt.emit({"type": "game_round", "id": f"round:{conv}:{r.index}", "conv": conv, "system": model.name,
                     "opponent": opponent, "seat": seat, "match": k, "round": r.index, "mine": r.mine,
                     "theirs": r.theirs, "payoff": r.my_payoff, "fallback": move == world.fallback and invalid > 0})
            if not m.done:
                history.append({"role": "user", "content": round_prompt(r.index + 1, r, totals, moves)})
    except LostError as e:
        lost = str(e)
    return finish(rt, world, model.name, opponent, seat, k, m.horizon, m.rounds, invalid, lost)


def finish(rt, world, system: str, opponent: str, seat: str, k: int, horizon: int, rounds, invalid: int,
           lost: str | None) -> dict:
    """The record of one match, logged as its conversation's trajectory."""
    score = sum(r.my_payoff for r in rounds)
    rec = {"world": world.name, "system": system, "condition": "pool", "trajectory": k, "milestones": [],
           "opponent": opponent, "seat": seat, "match": k, "horizon": horizon, "rounds": len(rounds),
           "score": score, "per_round": score / len(rounds) if rounds else None,
           "moves": _moves([r.mine for r in rounds]), "opponent_moves": _moves([r.theirs for r in rounds]),
           "invalid_moves": invalid, "status": "complete" if lost is None else "lost", "valid": lost is None,
           "lost": 0 if lost is None else 1, **world.cooperation_stats(rounds)}
    if lost:
        rec["error"] = lost
    conv = conv_id(system, opponent, seat, k)
    rt.emit_record("trajectory", conv, conv, rec)
    return rec


def _moves(moves: list[str]):
    """One-letter moves as a string ("CCDC"), longer ones as a list."""
    return "".join(moves) if all(len(m) == 1 for m in moves) else moves


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


class Pool(OneWorld):
    name = "pool"

    def agents_for(self, world) -> tuple[str, ...]:
        return tuple(o.name for o in world.opponents)

    def lineup_for(self, world, models, agents, config) -> PoolLineup:
        return PoolLineup(world, list(models), strategy_agents(world, dict.fromkeys([*world.baselines, *agents])),
                          config)

    def identity_for(self, world) -> dict:
        schedule = [(o, s, k, world.horizon_for(o, s, k)) for o, s, k in world.schedule()]
        return {"name": world.name, "seed": world.seed,
                "fingerprint": fingerprint([world.manual, world.seed, schedule]),
                "pool": [o.name for o in world.opponents], "seats": list(world.seats), "matches": world.matches,
                "baselines": list(world.baselines), "horizons": [h for *_, h in schedule]}

    def exploration_calls(self, world) -> int:
        return world.budget.turns


POOL = Pool()
