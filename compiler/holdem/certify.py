"""Certification of a Hold'em world: does pokerkit agree with what the world offers, on seeded random play?

* `certify_hands` deals (from both seats) are played to the end by two random-legal
  players: every hand completes within a bound on actions;
* chips are conserved after every action (stacks plus the pot are the two starting stacks);
* at every decision each offered action (RAISE at its least, middle and largest amount,
  ALL_IN) is accepted by pokerkit on a copy of the state, raises just outside the range
  are rejected by pokerkit, and replies naming an action not offered (CHECK facing a bet,
  FOLD or CALL with nothing to call) are rejected by the world's parser;
* the baseline bots play the schedule against the pool (their winnings are notes).
"""
from __future__ import annotations

import copy
import json
import random

from worldspec.compiler.api import InputError
from worldspec.compiler.holdem.bots import Bot
from worldspec.compiler.holdem.engine import ACTIONS, Action, Hand, deal_cards, parse_action, parse_json_action

MAX_ACTIONS = 400  # no hand with these stakes needs more (a bound, not a rule)


def accepted(hand: Hand, action: Action) -> bool:
    """Whether pokerkit accepts an action, tried on a copy of the hand."""
    trial = copy.deepcopy(hand)
    try:
        trial.apply(action)
    except ValueError:
        return False
    return True


def check_decision(hand: Hand, problems: list[str], where: str) -> int:
    """Offered actions accepted, out-of-range raises and unoffered kinds rejected; the checks made."""
    legal = hand.legal()
    tries = legal.offered()
    if "RAISE" in legal.kinds:
        tries += [Action("RAISE", legal.max_raise), Action("RAISE", (legal.min_raise + legal.max_raise) // 2)]
    n = 0
    for a in tries:
        n += 1
        if not accepted(hand, a):
            problems.append(f"{where}: pokerkit refused the offered action {a}")
    if legal.min_raise:
        for amount in (legal.min_raise - 1, legal.max_raise + 1):
            n += 1
            if accepted(hand, Action("RAISE", amount)):
                problems.append(f"{where}: pokerkit accepted RAISE {amount} outside {legal.min_raise}.."
                                f"{legal.max_raise}")
    for kind in ACTIONS:
        if kind in legal.kinds or kind == "RAISE":
            continue
        n += 1
        try:
            parse_action(kind, legal)
            problems.append(f"{where}: the reply {kind} was read although it is not offered")
        except InputError:
            pass
    return n


def check_json(hand: Hand, problems: list[str], where: str) -> int:
    """The released JSON reply of every offered action is read as that action; a fractional raise is refused."""
    legal = hand.legal()
    n = 0
    for a in legal.offered():
        n += 1
        try:
            got = parse_json_action(json.dumps({"action": a.kind, "amount": a.amount, "reasoning": "x"}), legal)
        except InputError as e:
            problems.append(f"{where}: the JSON reply of the offered action {a} was refused: {e}")
            continue
        if got.kind != a.kind and not (a.kind == "RAISE" and got.kind == "ALL_IN"):
            problems.append(f"{where}: the JSON reply of {a} was read as {got}")
    if "RAISE" in legal.kinds:
        n += 1
        try:
            parse_json_action(json.dumps({"action": "RAISE", "amount": legal.min_raise + 0.5}), legal)
            problems.append(f"{where}: a fractional raise was read")
        except InputError:
            pass
    return n


def certify_holdem(w, progress=None) -> dict:
    """The certification report of a HoldemWorld `w` (problems empty exactly when it is certified)."""
    say = progress or (lambda msg: None)
    problems: list[str] = []
    notes: list[str] = []
    players = w.players
    total = players * w.table.stack
    random_bot = Bot("random", "random legal", "random")
    hands = checks = decisions = showdowns = 0
    say(f"playing {w.certify_hands} seeded random hands of {players} players on pokerkit")
    for k in range(w.certify_hands):
        hand = Hand(w.table, deal_cards(f"certify:{w.seed}:{k}"), (w.table.stack,) * players)
        rng = random.Random(f"certify:{w.seed}:{k}:players")
        where = f"certification hand {k + 1}"
        steps = 0
        while not hand.done and steps < MAX_ACTIONS:
            checks += check_decision(hand, problems, where)
            if w.ring:
                checks += check_json(hand, problems, where)
            hand.apply(random_bot.decide(hand, hand.actor, rng))
            steps += 1
            decisions += 1
            in_play = sum(hand.state.stacks) + hand.pot()
            if in_play != total:
                problems.append(f"{where}: {in_play} chips in play after {steps} actions, not {total}")
        if not hand.done:
            problems.append(f"{where}: not finished after {MAX_ACTIONS} actions")
            continue
        hands += 1
        showdowns += len(hand.folds) < players - 1
        if sum(hand.payoff(i) for i in range(players)) != 0:
            problems.append(f"{where}: payoffs {[hand.payoff(i) for i in range(players)]} do not cancel")
        if len(problems) > 20:
            problems.append("... (stopped after 20 problems)")
            break
    notes.append(f"{hands} of {w.certify_hands} random hands completed ({showdowns} to showdown, "
                 f"{decisions} decisions, {checks} legality checks against pokerkit)")
    baselines = {}
    if w.ring:
        notes.append(f"{w.tables} table(s) of {players} seats, {w.hands} hands each; blinds {w.table.small_blind}/"
                     f"{w.table.big_blind}, stacks {w.table.stack} carried from hand to hand")
        return report(w, hands, showdowns, checks, baselines, notes, problems)
    for name in w.baselines:
        say(f"baseline {name} against the pool")
        won = [w.play_bot(name, o, k, s)["bb"] for o, k, s in w.schedule()]
        baselines[name] = round(sum(won) / max(1, len(won)), 3)
        notes.append(f"baseline {name}: {baselines[name]:+.3f} big blinds per hand over {len(won)} hands")
    notes.append(f"schedule: {len(w.opponents)} opponents x {w.hands} deals x {len(w.seats)} seat(s) = "
                 f"{len(w.schedule())} hands; blinds {w.table.small_blind}/{w.table.big_blind}, stacks "
                 f"{w.table.stack}")
    return report(w, hands, showdowns, checks, baselines, notes, problems)


def report(w, hands: int, showdowns: int, checks: int, baselines: dict, notes: list, problems: list) -> dict:
    """The certification report's fields."""
    return {"world": w.name, "kind": w.kind, "language": w.language, "seed": w.seed, "default_seed": w.default_seed,
            "params": dict(w.params), "rules": 0, "herrings": 0, "tasks": 0, "examples": 0,
            "hands_completed": hands, "showdowns": showdowns, "legality_checks": checks,
            "baselines": baselines, "notes": notes, "problems": problems}
