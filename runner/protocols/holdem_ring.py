"""Ring-game Hold'em (a world with `players 3` or more): InteractiveBench's six-seat tables.

As the paper's section 3.2.3 ("5000 hands across 10 independent tables (500 hands each), each with
six fixed LLM agents") and the released app (POKER/MultiTableApp.tsx NUM_TABLES = 10, App.tsx
NUM_PLAYERS = 6): the run's systems (models, then the world's baseline bots, then `--agent` bots)
take the seats of every table in the same order; seats left over are filled with the world's bots
(named `bot#2`, ...). Each table plays `hands` hands (compiler/holdem/ring.py). A model is asked
once per decision, with the world's manual as the system message and the observation as the user
message, and replies with the released JSON object (services/geminiService.ts); an invalid reply is
answered with the reason and asked once more (MAX_RETRY_ATTEMPTS = 1), a second one folds (checks
when there is nothing to call). One record per (system, table): the totals analyze_stats.py reads.
"""
from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import attrs

from worldspec.compiler import InputError

from ..models import FatalError, LostError, Request
from .base import Plan

CONDITION = "holdem"


def conv_id(system: str, table: int) -> str:
    return f"{system}|holdem|table{table + 1}"


def decision_prompt(obs: dict) -> str:
    """One decision point as the model reads it (the released prompt's fields, in our words)."""
    recent = obs["recent_actions"]
    stacks = ", ".join(f"{n} {c}" for n, c in obs["stacks"].items())
    return "\n".join([
        f"{obs['hand'].capitalize()}. Stage: {obs['street'].upper()}.",
        f"Your hand: {obs['hole_cards']}. Community cards: {obs['board']}.",
        f"Your stack: {obs['your_stack']}. Stacks: {stacks}.",
        f"Pot: {obs['pot']}. Current bet: {obs['current_bet']} (yours {obs['your_bet']}). "
        f"Amount to call: {obs['to_call']}. Minimum raise to: {obs['min_raise'] or '-'}. "
        f"Pot odds: {obs['pot_odds']:.3f}.",
        f"Position: {obs['position']}. Active players: {obs['active_players']}. Big blind: {obs['big_blind']}.",
        "Recent action: " + ("; ".join(recent) if recent else "none") + ".",
        f"Legal actions: {obs['legal_actions']}.",
        "What is your move? Reply with the JSON object only.",
    ])


def retry_prompt(reason: str) -> str:
    return (f"Your previous reply was invalid: {reason}. Reply again with only the JSON object "
            '{"action": "...", "amount": <number>, "reasoning": "..."}; another invalid reply folds the hand.')


@attrs.define
class RingLineup:
    """The seats of every table: models, then bots (`local` holds bot names)."""

    world: object
    models: list
    local: list
    config: object

    @property
    def seated(self) -> list[str]:
        """Every seat's name, in seat order (the run's systems, then bots filling the table)."""
        names = [m.name for m in self.models] + list(self.local)
        pool = [b.name for b in self.world.opponents]
        k = 0
        while len(names) < self.world.players:
            bot = pool[k % len(pool)]
            copies = sum(1 for n in names if n == bot or n.startswith(bot + "#"))
            names.append(bot if copies == 0 else f"{bot}#{copies + 1}")
            k += 1
        return names

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.seated)

    @property
    def model_ids(self) -> tuple[str, ...]:
        models = {m.name: m.model_id for m in self.models}
        return tuple(models.get(n, f"bot:{n.split('#')[0]}") for n in self.seated)

    def jobs(self) -> list[str]:
        return [conv_id(n, t) for t in range(self.world.tables) for n in self.seated]

    def plan(self) -> Plan:
        w = self.world
        per_hand = 2 * (4 + w.table.stack // w.table.big_blind)
        rows = tuple((n, w.tables, w.tables * w.hands, per_hand * w.tables * w.hands if n in
                      {m.name for m in self.models} else 0) for n in self.seated)
        return Plan(f"{w.name}: {w.tables} table(s) of {w.players} seats, {w.hands} hands each",
                    ("system", "tables", "hands", "calls<="), rows, sum(r[3] for r in rows),
                    "one call per decision and one retry per invalid reply; bots play locally")

    async def decide(self, rt, model, table: int, rh, steps: dict, latencies: dict, counts: dict):
        """A model's action at the decision point `rh` is at (its reply read as the released JSON)."""
        name = model.name
        obs = rh.observation(self.world.recent)
        messages = [{"role": "system", "content": self.world.manual},
                    {"role": "user", "content": decision_prompt(obs)}]
        replies, reasons, action = [], [], None
        for attempt in range(2):
            req = Request(messages=tuple(messages), settings=self.config.settings, purpose="move",
                          sample=f"holdem/table{table + 1}/{rh.k}/{steps[name]}",
                          meta={"conv": conv_id(name, table), "condition": CONDITION, "trajectory": table,
                                "t": rh.k + 1, "step": steps[name], "prefix": 0})
            steps[name] += 1
            t0 = time.perf_counter()
            reply = await rt.call(model, req)
            latencies[name].append(round(time.perf_counter() - t0, 4))
            replies.append(reply.content or "")
            try:
                action = self.world.read_json(reply.content, rh.legal())
                break
            except InputError as e:
                counts[name]["invalid"] += 1
                reasons.append(str(e))
                messages += [reply.message(with_tool_calls=False), {"role": "user", "content": retry_prompt(str(e))}]
        auto = action is None
        if auto:
            counts[name]["auto"] += 1
            action = self.world.fold_or_check(rh.legal())
        rt.emit({"type": "holdem_decision", "id": f"decision:{conv_id(name, table)}:{steps[name]}",
                 "conv": conv_id(name, table), "system": name, "table": table + 1, "hand": rh.k + 1,
                 "observation": obs, "replies": replies, "invalid": reasons, "retried": len(replies) > 1,
                 "auto_fold": auto, "action": str(action)})
        return action

    async def table(self, rt, t: int) -> list[dict]:
        """One table, hand after hand; its seats' records."""
        w, names = self.world, self.seated
        models = {m.name: m for m in self.models}
        ring = w.ring_table(t, names)
        steps = {n: 0 for n in names}
        latencies = {n: [] for n in names}
        counts = {n: {"invalid": 0, "auto": 0} for n in names}
        lost = None
        try:
            for k in range(w.hands):
                rh = ring.deal(k)
                while not rh.done:
                    name = names[rh.seat]
                    if name in models:
                        action = await self.decide(rt, models[name], t, rh, steps, latencies, counts)
                    else:
                        rng = random.Random(f"{ring.deal_key(k)}:{name}:{len(rh.hand.history)}")
                        action = w.bot(name.split("#")[0]).decide(rh.hand, rh.position, rng)
                    rh.act(action)
                ring.settle(rh)
        except LostError as e:
            lost = str(e)
        return [self.finish(rt, t, ring.totals[i], latencies[n], counts[n], ring.resets, lost)
                for i, n in enumerate(names)]

    def finish(self, rt, t: int, tot, latencies: list, counts: dict, resets: int, lost: str | None) -> dict:
        w = self.world
        rec = {"world": w.name, "system": tot.name, "condition": CONDITION, "trajectory": t, "milestones": [],
               "table": t + 1, "chips": tot.chips, "hands": tot.hands, "folds": tot.folds, "vpip_hands": tot.vpip,
               "decisions": tot.decisions, "big_blind": w.table.big_blind, "latencies": latencies,
               "invalid_replies": counts["invalid"], "auto_folds": counts["auto"], "stack_resets": resets,
               "status": "complete" if lost is None else "lost", "valid": lost is None,
               "lost": 0 if lost is None else 1}
        if lost:
            rec["error"] = lost
        conv = conv_id(tot.name, t)
        rt.emit_record("trajectory", conv, conv, rec)
        return rec

    async def run(self, rt, out: Path) -> list[dict]:
        done = await asyncio.gather(*(self.table(rt, t) for t in range(self.world.tables)))
        return [r for recs in done for r in recs]


def ring_lineup(world, models, agents, config) -> RingLineup:
    """The seats of a ring world's tables; more systems than seats is refused."""
    local = list(dict.fromkeys([*world.baselines, *agents]))
    n = len(models) + len(local)
    if n > world.players:
        raise FatalError(f"{n} systems for {world.players} seats: a table of {world.name} seats {world.players} "
                         "(InteractiveBench plays six fixed agents per table)")
    return RingLineup(world, list(models), local, config)
