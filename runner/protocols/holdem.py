"""Hold'em play (InteractiveBench's no-limit Texas Hold'em): every system plays every hand of the schedule.

A Hold'em world (World.protocol "holdem") schedules hands: for each opponent bot,
each seeded deal is played from each seat (duplicate deals). A model plays a hand
in one conversation, one request per decision point: the rules, then the
structured observation the paper lists ("current street, hole cards, board,
stacks, pot odds, recent action history"; legal actions "FOLD, CHECK, CALL, RAISE,
ALL_IN"). As the paper says, an invalid output "gets one retry; a second failure
folds automatically": both are logged (`holdem_decision` events) and counted.
The world's bots play as systems locally (`--agent tag`); its baselines always
play beside the models. The summary, report section and four-panel figure are
in holdem_report.py.
"""
from __future__ import annotations

import time

from worldspec.compiler import Feedback, InputError

from ..models import FatalError, LostError, Model, Request
from .base import OneWorld, Plan, PlaySession, ScheduleLineup, fingerprint
from .holdem_report import LAYOUT
from .holdem_ring import ring_lineup

CONDITION = "holdem"
# What a probe of a Hold'em world is told: a player is measured by the hands it plays (every hand counts)
NOT_PROBED = Feedback("rejected: this world has no probing; it is played hand by hand", 0, "rejected")


def conv_id(system: str, opponent: str, k: int, seat: str) -> str:
    return f"{system}|holdem|{opponent}|{k}|{seat}"


def decision_prompt(obs: dict) -> str:
    """One decision point as the model reads it: the observation's fields, then the legal actions."""
    recent = obs["recent_actions"]
    return "\n".join([
        f"Hand: {obs['hand']}. Street: {obs['street']}.",
        f"Your hole cards: {obs['hole_cards']}. Board: {obs['board']}.",
        f"Stacks: you {obs['your_stack']}, opponent {obs['opponent_stack']}. Pot: {obs['pot']} "
        f"(bets this street: you {obs['your_bet']}, opponent {obs['opponent_bet']}). Big blind: {obs['big_blind']}.",
        f"To call: {obs['to_call']}. Pot odds: {obs['pot_odds']:.3f}.",
        "Recent actions: " + ("; ".join(recent) if recent else "none") + ".",
        f"Legal actions: {obs['legal_actions']}.",
        "Reply with your action on the last line (for example: CALL, or RAISE 12).",
    ])


def retry_prompt(reason: str, obs: dict) -> str:
    return (f"Invalid action: {reason}. Legal actions: {obs['legal_actions']}. Reply with exactly one legal "
            "action on the last line; another invalid reply folds the hand.")


# ----------------------------------------------------------------------------
# Hands


async def model_hand(rt, world, model: Model, opponent: str, k: int, seat: str, settings: dict) -> dict:
    """One hand played by a model, one request per decision (and one retry per invalid reply)."""
    conv = conv_id(model.name, opponent, k, seat)
    hand = world.seat(opponent, k, seat)
    latencies: list[float] = []
    invalid = 0
    lost = None
    step = 0
    try:
        while not hand.done:
            obs = hand.observation()
            messages = [{"role": "system", "content": world.manual},
                        {"role": "user", "content": decision_prompt(obs)}]
            action, replies, reasons = None, [], []
            for attempt in range(2):
                req = Request(messages=tuple(messages), settings=settings, purpose="move",
                              sample=f"holdem/{opponent}/{k}/{seat}",
                              meta={"conv": conv, "condition": CONDITION, "trajectory": k,
                                    "t": hand.decisions + 1, "step": step, "prefix": 0})
                step += 1
                t0 = time.perf_counter()
                reply = await rt.call(model, req)
                latencies.append(round(time.perf_counter() - t0, 4))
                replies.append(reply.content or "")
                try:
                    action = hand.read(reply.content)
                    break
                except InputError as e:
                    invalid += 1
                    reasons.append(str(e))
                    messages += [reply.message(with_tool_calls=False),
                                 {"role": "user", "content": retry_prompt(str(e), obs)}]
            auto = action is None
            if auto:
                action = hand.fallback()
            rt.emit({"type": "holdem_decision", "id": f"decision:{conv}:{hand.decisions + 1}", "conv": conv,
                     "system": model.name, "opponent": opponent, "deal": k, "seat": seat,
                     "decision": hand.decisions + 1, "observation": obs, "replies": replies,
                     "invalid": reasons, "retried": len(replies) > 1, "auto_fold": auto, "action": str(action)})
            hand.act(action)
    except LostError as e:
        lost = str(e)
    return finish(rt, world, model.name, opponent, k, seat, hand.result() if hand.done else None,
                  latencies, invalid, lost)


def finish(rt, world, system: str, opponent: str, k: int, seat: str, result: dict | None, latencies: list,
           invalid: int, lost: str | None) -> dict:
    """The record of one hand, logged as its conversation's trajectory."""
    rec = {"world": world.name, "system": system, "condition": CONDITION, "trajectory": k, "milestones": [],
           "opponent": opponent, "seat": seat, "deal": k, "big_blind": world.table.big_blind,
           **(result or {}), "latencies": latencies, "invalid_replies": invalid,
           "status": "complete" if lost is None else "lost", "valid": lost is None, "lost": 0 if lost is None else 1}
    if lost:
        rec["error"] = lost
    conv = conv_id(system, opponent, k, seat)
    rt.emit_record("trajectory", conv, conv, rec)
    return rec


# ----------------------------------------------------------------------------
# A run


class HoldemLineup(ScheduleLineup):
    """Every model and bot (the world's baselines among them; `local` holds bot names) plays every hand."""

    def local_id(self, player) -> str:
        return f"bot:{player}"

    def conversation(self, system: str, entry: tuple) -> str:
        return conv_id(system, *entry)

    async def model_play(self, rt, model, entry: tuple) -> dict:
        return await model_hand(rt, self.world, model, *entry, self.config.settings)

    def local_play(self, rt, player, entry: tuple) -> dict:
        return finish(rt, self.world, player, *entry, self.world.play_bot(player, *entry), [], 0, None)

    def plan(self) -> Plan:
        w = self.world
        hands = len(w.schedule())
        # each decision after the first in a street answers an opponent raise of at least a big blind
        per_hand = 2 * (4 + w.table.stack // w.table.big_blind)
        rows = tuple((m.name, hands, per_hand * hands) for m in self.models) + \
            tuple((b, hands, 0) for b in self.local)
        return Plan(f"{w.name}: {hands} hands per system ({len(w.opponents)} opponents x {w.hands} deals x "
                    f"{len(w.seats)} seats)", ("system", "hands", "calls<="), rows, sum(r[2] for r in rows),
                    "one call per decision and one retry per invalid reply; bots play locally")


class Holdem(OneWorld):
    name = "holdem"
    layout = LAYOUT  # holdem_report.py

    def agents_for(self, world) -> tuple[str, ...]:
        if world.ring:
            return ()  # the baselines sit at every table anyway; bots fill the other seats
        return world.baselines or tuple(b.name for b in world.opponents)

    def lineup_for(self, world, models, agents, config):
        names = [b.name for b in world.opponents]
        for a in agents:
            if a not in names:
                raise FatalError(f"no bot {a!r} in {world.name} (bots: {', '.join(names)})")
        if world.ring:
            return ring_lineup(world, models, agents, config)
        return HoldemLineup(world, list(models), list(dict.fromkeys([*world.baselines, *agents])), config)

    def identity_for(self, world) -> dict:
        t = world.table
        if world.ring:
            return {"name": world.name, "seed": world.seed, "lineup": "ring",
                    "fingerprint": fingerprint([world.manual, world.seed, world.players, world.tables, world.hands,
                                                [b.describe() for b in world.opponents], world.recent,
                                                [t.small_blind, t.big_blind, t.stack]]),
                    "pool": [b.name for b in world.opponents], "players": world.players, "tables": world.tables,
                    "hands": world.hands, "baselines": list(world.baselines), "blinds": [t.small_blind, t.big_blind],
                    "stack": t.stack}
        return {"name": world.name, "seed": world.seed,
                "fingerprint": fingerprint([world.manual, world.seed, world.schedule(),
                                            [b.describe() for b in world.opponents], world.recent]),
                "pool": [b.name for b in world.opponents], "seats": list(world.seats), "hands": world.hands,
                "baselines": list(world.baselines), "blinds": [t.small_blind, t.big_blind], "stack": t.stack}

    def exploration_calls(self, world) -> int:
        """No exploration: a Hold'em world is played, not probed."""
        return 0

    def play_session(self, world, task=None) -> PlaySession:
        """No probing (HoldemFace has none): every probe `worldspec play` is given is rejected, unrun."""
        return PlaySession(lambda text: NOT_PROBED, lambda fb: 0)


HOLDEM = Holdem()
