"""Game worlds with an opponent pool (the Trust Game): every system plays the pool.

For every opponent of the world's pool, every seat and every match index, a
system plays one match: the horizon and the opponent's random stream come
from the world's seed, so every system meets the same matches. A model plays
in one conversation per match, one request per round: it sees the rules, its
seat's payoffs and the full history, and answers with a move (the last fenced
block, or the whole reply); an unreadable move gets one retry, then the
world's fallback move is played (and counted). The classic strategies play as
agents locally (`--agent grim`, any opponent of the pool); the world's
baselines (grim trigger and tit-for-tat) always play beside the models.

Metrics per system (InteractiveBench, Trust Game): average score per round,
cooperation rate, betrayal rate (defecting right after a round in which the
opponent cooperated), each with a bootstrap 95% confidence interval over
matches; and per-opponent scores.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Sequence

import attrs

from worldspec.compiler import InputError

from .cache import ResponseCache
from .log import RunLog, read_events
from .models import FatalError, LostError, Model, Request, RetryPolicy
from .protocol import extract_answer
from .runtime import Runtime, session_outcome

BOOTSTRAP = 2000


@attrs.frozen
class PoolConfig:
    settings: dict = attrs.field(factory=dict)
    api_base: str | None = None
    world_seed: int | None = None
    max_connections: int = 16
    retry: RetryPolicy = RetryPolicy()

    def identity(self, systems: Sequence[str], model_ids: Sequence[str]) -> dict:
        return {"protocol": "pool", "systems": list(systems), "model_ids": list(model_ids),
                "settings": self.settings, "api_base": self.api_base, "world_seed": self.world_seed}


def world_identity(world) -> dict:
    content = [world.manual, world.seed, [(o, s, k, world.horizon_for(o, s, k)) for o, s, k in world.schedule()]]
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()
    return {"name": world.name, "seed": world.seed, "fingerprint": digest[:24]}


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
                f"{_num(last.my_payoff)}, the other got {_num(last.their_payoff)}. Totals: you {_num(totals[0])}, "
                f"the other {_num(totals[1])}.\n\n")
    return head + f"Round {r}. Your move ({' or '.join(moves)})?"


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


# ----------------------------------------------------------------------------
# Matches


async def model_match(rt: Runtime, world, model: Model, opponent: str, seat: str, k: int,
                      settings: dict) -> dict:
    conv = f"{model.name}|pool|{opponent}|{seat}|{k}"
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
    return match_record(world, model.name, opponent, seat, k, m.horizon, m.rounds, invalid, lost)


def strategy_match(world, name: str, strategy, opponent: str, seat: str, k: int) -> dict:
    h = world.horizon_for(opponent, seat, k)
    rounds = world.play_strategy(strategy, opponent, seat, k)
    return match_record(world, name, opponent, seat, k, h, rounds, 0, None)


def match_record(world, system: str, opponent: str, seat: str, k: int, horizon: int, rounds, invalid: int,
                 lost: str | None) -> dict:
    stats = world.cooperation_stats(rounds)
    score = sum(r.my_payoff for r in rounds)
    rec = {"world": world.name, "system": system, "condition": "pool", "trajectory": k, "milestones": [],
           "opponent": opponent, "seat": seat, "match": k, "horizon": horizon, "rounds": len(rounds),
           "score": score, "per_round": score / len(rounds) if rounds else None,
           "moves": "".join(r.mine for r in rounds) if all(len(r.mine) == 1 for r in rounds) else
           [r.mine for r in rounds],
           "opponent_moves": "".join(r.theirs for r in rounds) if all(len(r.theirs) == 1 for r in rounds)
           else [r.theirs for r in rounds],
           "invalid_moves": invalid, "status": "complete" if lost is None else "lost", "valid": lost is None,
           **stats}
    if lost:
        rec["error"] = lost
    return rec


# ----------------------------------------------------------------------------
# A run


def strategy_agents(world, names: Sequence[str]) -> dict:
    out = {}
    for n in names:
        try:
            out[n] = world.strategy(n)
        except KeyError:
            raise FatalError(f"unknown agent {n!r} for {world.name} (its strategies: "
                             f"{', '.join(o.name for o in world.opponents)})") from None
    return out


async def run_pool(world, models: Sequence[Model], agents: Sequence[str], config: PoolConfig, out,
                   *, resume: bool = False, cache_dir=None, progress=None) -> dict:
    """Every model and strategy agent (and the world's baselines) against the pool."""
    out = Path(out)
    strategies = strategy_agents(world, list(dict.fromkeys(list(world.baselines) + list(agents))))
    names = [m.name for m in models] + list(strategies)
    if len(set(names)) != len(names):
        raise FatalError(f"two systems share a name: {names}")
    log = RunLog(out, config=config.identity(names, [m.model_id for m in models] + list(strategies)),
                 world=world_identity(world), resume=resume)
    cache = ResponseCache(cache_dir) if cache_dir else None
    rt = Runtime(log, cache=cache, max_connections=config.max_connections, retry=config.retry, progress=progress)
    with session_outcome(log, cache):
        jobs = [model_match(rt, world, m, o, s, k, config.settings) for m in models for o, s, k in world.schedule()]
        records = list(await asyncio.gather(*jobs))
        for name, strat in strategies.items():
            records += [strategy_match(world, name, strat, o, s, k) for o, s, k in world.schedule()]
        for r in records:
            digest = hashlib.sha256(json.dumps(r, sort_keys=True, default=str).encode()).hexdigest()[:16]
            conv = f"{r['system']}|pool|{r['opponent']}|{r['seat']}|{r['match']}"
            rt.emit({"type": "trajectory", "id": f"trajectory:{conv}:{digest}", "conv": conv, "record": r})
    log.close("success")
    if cache is not None:
        cache.close()
    return write_outputs(out, world)


# ----------------------------------------------------------------------------
# Metrics


def rates(matches: Sequence[dict]) -> dict:
    rounds = sum(m["rounds"] for m in matches)
    score = sum(m["score"] for m in matches)
    coop = sum(m.get("cooperations", 0) for m in matches)
    chances = sum(m.get("betrayal_chances", 0) for m in matches)
    betray = sum(m.get("betrayals", 0) for m in matches)
    return {"score_per_round": score / rounds if rounds else None,
            "cooperation_rate": coop / rounds if rounds else None,
            "betrayal_rate": betray / chances if chances else None}


def bootstrap(matches: Sequence[dict], key: str, seed: str, n: int = BOOTSTRAP) -> tuple | None:
    """A 95% percentile interval of a rate, resampling whole matches."""
    if not matches:
        return None
    rng = random.Random(seed)
    vals = []
    for _ in range(n):
        sample = [matches[rng.randrange(len(matches))] for _ in matches]
        v = rates(sample)[key]
        if v is not None:
            vals.append(v)
    if not vals:
        return None
    vals.sort()
    return (round(vals[int(0.025 * (len(vals) - 1))], 4), round(vals[int(0.975 * (len(vals) - 1))], 4))


def summarize(world_name: str, records: Sequence[dict], baselines: Sequence[str]) -> list[dict]:
    by_sys: dict[str, list] = defaultdict(list)
    for r in records:
        if r.get("status") == "complete":
            by_sys[r["system"]].append(r)
    out = []
    for system, ms in by_sys.items():
        main = rates(ms)
        per_match = [m["per_round"] for m in ms if m["per_round"] is not None]
        best = max(range(len(ms)), key=lambda i: ms[i]["per_round"] or 0) if ms else None
        row = {"world": world_name, "system": system, "condition": "pool", "baseline": system in baselines,
               "n": len(ms), "rounds": sum(m["rounds"] for m in ms),
               "best": round(max(per_match), 4) if per_match else None,
               "mean": round(sum(per_match) / len(per_match), 4) if per_match else None,
               "worst": round(min(per_match), 4) if per_match else None,
               "best_trajectory": ms[best]["match"] if best is not None else None, "curve": [],
               "invalid_moves": sum(m.get("invalid_moves", 0) for m in ms)}
        for key in ("score_per_round", "cooperation_rate", "betrayal_rate"):
            v = main[key]
            row[key] = round(v, 4) if v is not None else None
            row[key + "_ci"] = bootstrap(ms, key, f"{world_name}:{system}:{key}")
        row["per_opponent"] = {o: round(rates([m for m in ms if m["opponent"] == o])["score_per_round"], 4)
                               for o in dict.fromkeys(m["opponent"] for m in ms)}
        out.append(row)
    out.sort(key=lambda r: (-(r["score_per_round"] or 0), r["system"]))
    return out


def write_outputs(directory, world) -> dict:
    d = Path(directory)
    header, recs, sessions = {}, {}, {}
    for ev in read_events(d / "log.jsonl"):
        if ev.get("type") == "header":
            header = ev
        elif ev.get("type") == "trajectory":
            recs[ev["conv"]] = ev["record"]
        elif ev.get("type") == "session":
            sessions[ev.get("session", 0)] = ev.get("status")
    records = sorted(recs.values(), key=lambda r: (r["system"], r["opponent"], r["seat"], r["match"]))
    with open(d / "trajectories.jsonl", "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    systems = header.get("config", {}).get("systems", [])
    expected = len(systems) * len(world.schedule())
    finished = sum(1 for r in records if r.get("status") == "complete")
    last = sessions[max(sessions)] if sessions else None
    stamp = {"valid": finished >= expected and last == "success", "expected_trajectories": expected,
             "finished_trajectories": finished, "lost_answers": sum(1 for r in records if r.get("status") == "lost"),
             "sessions": len(sessions), "last_session": last}
    results = summarize(world.name, records, world.baselines)
    summary = {"validity": stamp, "protocol": "pool", "results": results,
               "pool": [o.name for o in world.opponents], "seats": list(world.seats), "matches": world.matches,
               "horizons": [world.horizon_for(o, s, k) for o, s, k in world.schedule()]}
    (d / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    (d / "report.md").write_text(markdown(world, summary), encoding="utf-8")
    return summary


def _ci(v, ci, pct=False) -> str:
    if v is None:
        return "—"
    f = (lambda x: f"{100 * x:.1f}%") if pct else (lambda x: f"{x:.3f}")
    return f(v) + (f" [{f(ci[0])}, {f(ci[1])}]" if ci else "")


def markdown(world, summary: dict) -> str:
    s = summary["validity"]
    lines = [f"# worldspec run report: {world.name} (pool play)", "",
             f"Run status: **{'valid' if s['valid'] else 'INVALID'}** — {s['finished_trajectories']}/"
             f"{s['expected_trajectories']} matches finished, {s['lost_answers']} lost to infrastructure.", "",
             f"Pool: {', '.join(summary['pool'])}; seats: {', '.join(summary['seats'])}; {summary['matches']} "
             f"matches per opponent and seat; horizons drawn from seed {world.seed} "
             f"(mean {sum(summary['horizons']) / max(1, len(summary['horizons'])):.1f} rounds).", ""]
    base = [r for r in summary["results"] if r["baseline"]]
    if base:
        lines += ["Baselines: " + ", ".join(f"{r['system']} {r['score_per_round']:.3f}" for r in base) + " per round.", ""]
    lines += ["| System | Score / round [95% CI] | Cooperation rate | Betrayal rate | " +
              " | ".join(f"vs {b['system']}" for b in base) + (" | " if base else "") + "Matches | Rounds |",
              "|---|---|---|---|" + "---|" * len(base) + "---|---|"]
    for r in summary["results"]:
        name = f"{r['system']} (baseline)" if r["baseline"] else r["system"]
        delta = []
        for b in base:
            d = (r["score_per_round"] or 0) - (b["score_per_round"] or 0)
            delta.append("—" if r["system"] == b["system"] else f"{d:+.3f}")
        lines.append(f"| {name} | {_ci(r['score_per_round'], r['score_per_round_ci'])} | "
                     f"{_ci(r['cooperation_rate'], r['cooperation_rate_ci'], True)} | "
                     f"{_ci(r['betrayal_rate'], r['betrayal_rate_ci'], True)} | " + " | ".join(delta)
                     + (" | " if base else "") + f"{r['n']} | {r['rounds']} |")
    opps = summary["pool"]
    lines += ["", "Score per round against each opponent:", "", "| System | " + " | ".join(opps) + " |",
              "|---|" + "---|" * len(opps)]
    for r in summary["results"]:
        lines.append(f"| {r['system']} | " + " | ".join(
            f"{r['per_opponent'][o]:.3f}" if o in r["per_opponent"] else "—" for o in opps) + " |")
    return "\n".join(lines).rstrip() + "\n"


# ----------------------------------------------------------------------------
# `worldspec run` on a game world


def run_pool_command(world, world_path: str, params: dict) -> None:
    import click  # noqa: PLC0415
    from .blackbox import _settings, _slug  # noqa: PLC0415
    from .models import make_model  # noqa: PLC0415
    settings = _settings(params)
    models = params.get("models") or ()
    agents = list(params.get("agents") or ())
    if not models and not agents:
        agents = [o.name for o in world.opponents]
    try:
        strategy_agents(world, agents)
        model_objs = [make_model(m, world, api_base=params.get("api_base"), settings=settings,
                                 timeout=params.get("timeout") or 600.0) for m in models]
    except FatalError as e:
        raise click.ClickException(str(e)) from None
    n_sched = len(world.schedule())
    if params.get("dry_run"):
        rounds = sum(world.horizon_for(o, s, k) for o, s, k in world.schedule())
        click.echo(f"{world.name}: {n_sched} matches per system ({rounds} rounds), "
                   f"{len(model_objs)} model(s), strategies: {', '.join(dict.fromkeys(list(world.baselines) + agents))}")
        click.echo(f"model calls: at least {rounds * len(model_objs)} (one per round; a retry per unreadable move)")
        return
    if params.get("resume") and not params.get("out"):
        raise click.UsageError("--resume needs the --out directory of the run to continue")
    out = params.get("out") or os.path.join("runs", f"{_slug(world.name)}-{time.strftime('%Y%m%d-%H%M%S')}")
    cache = None
    if not params.get("no_cache") and any(m.cacheable for m in model_objs):
        from .cli import default_cache_dir  # noqa: PLC0415
        cache = params.get("cache_dir") or str(default_cache_dir())
    config = PoolConfig(settings=settings, api_base=params.get("api_base"), world_seed=params.get("seed"),
                        max_connections=params.get("max_connections") or 16,
                        retry=RetryPolicy(max_attempts=max(1, params.get("max_retries") or 8),
                                          base_delay=params.get("retry_delay") or 1.0))
    from .log import RunDirError  # noqa: PLC0415
    try:
        summary = asyncio.run(run_pool(world, model_objs, agents, config, out, resume=bool(params.get("resume")),
                                       cache_dir=cache))
    except (FatalError, RunDirError) as e:
        raise click.ClickException(str(e)) from None
    for r in summary["results"]:
        tag = " (baseline)" if r["baseline"] else ""
        br = r["betrayal_rate"]
        click.echo(f"{r['system'] + tag:<22} score/round {r['score_per_round']:.3f}  cooperation "
                   f"{100 * r['cooperation_rate']:.1f}%  betrayal {'—' if br is None else f'{100 * br:.1f}%'}  "
                   f"n={r['n']}")
    click.echo(f"wrote {out}/log.jsonl, trajectories.jsonl, summary.json, report.md")
    if not summary["validity"]["valid"]:
        click.echo("warning: the run is not valid (see summary.json 'validity')", err=True)
        raise SystemExit(3)
