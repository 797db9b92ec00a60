"""The Oracle protocol, turn@shot, for black boxes (and Game Strategy Inference boxes).

One conversation per (box, system): the box's manual, then T exploration
turns. In each turn the system replies with one input (the last fenced code
block of its reply, or the whole reply); the box's output comes back as the
next message. An input the box rejects (unreadable, outside its domain, or
failing its predicate) is answered with the reason and costs no turn (at most
T such free rejections; later ones use a turn). Then every test sample is
asked in its own fork of the conversation, with S shots: after a wrong answer
the system is told "incorrect" and asked again. A test scores its best shot:
1 or 0, or for a game box score / exact optimum.

Accuracy of a box = the mean test score (percent); a run reports it per box,
per family, per difficulty and per family x difficulty at the configured
turn@shot (presets 10@1 and 20@2), ranked like the paper's figures by the
sum of easy and hard accuracy.

Built-in agents (no network): `oracle` knows f (every test right: the
pipeline's upper bound) and `memorise` explores with the box's probe
generator and answers each test with the output of the nearest input it
observed (a game box: the best sequence it tried; a puzzle: its last guess).

`run_command(world_path, params)` is the `worldspec run` entry for folders of
boxes, single boxes and game worlds (game worlds with a pool go to
runner/games.py); it returns False for a program world, which the
ExplorationBench protocol runs.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections import defaultdict
from pathlib import Path
from typing import Sequence

import attrs

from .cache import ResponseCache
from .log import RunLog, read_events
from .models import FatalError, LostError, Model, Reply, Request, RetryPolicy
from .protocol import extract_answer
from .runtime import Runtime, session_outcome

PRESETS = {"10@1": (10, 1), "20@2": (20, 2)}
FAMILY_ORDER = ("CII", "CRI", "PSI", "ERI", "IPI", "GSI")
BOX_AGENTS = ("oracle", "memorise")


@attrs.frozen
class OracleConfig:
    turns: int | None = None  # None: each box's own budget
    shots: int | None = None
    settings: dict = attrs.field(factory=dict)
    api_base: str | None = None
    world_seed: int | None = None
    max_connections: int = 16
    retry: RetryPolicy = RetryPolicy()

    def condition(self, world) -> str:
        t, s = self.turns_for(world), self.shots_for(world)
        return f"{t}@{s}"

    def turns_for(self, world) -> int:
        return self.turns or world.budget.turns

    def shots_for(self, world) -> int:
        return self.shots or world.budget.shots

    def identity(self, systems: Sequence[Model], boxes: Sequence) -> dict:
        return {"protocol": "turn@shot", "systems": [m.name for m in systems],
                "model_ids": [m.model_id for m in systems], "turns": self.turns, "shots": self.shots,
                "settings": self.settings, "api_base": self.api_base, "world_seed": self.world_seed,
                "boxes": [w.name for w in boxes]}


def is_box(world) -> bool:
    return world.protocol == "turn@shot"


def suite_identity(name: str, boxes: Sequence) -> dict:
    content = [(w.name, w.seed, w.manual, [(t.id, t.prompt, t.solution) for t in w.tasks]) for w in boxes]
    digest = hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()
    return {"name": name, "boxes": len(boxes), "fingerprint": digest[:24]}


# ----------------------------------------------------------------------------
# What the system reads


def system_prompt() -> str:
    return ("You are interacting with a black box: a hidden mechanism that answers the inputs you send it. "
            "Explore it with well-chosen inputs, work out how it behaves, and then answer test questions "
            "about it without further exploration.")


def opening_prompt(world, turns: int, shots: int) -> str:
    """The box's manual, with its interaction section replaced by this session's turn@shot."""
    manual = world.manual.strip().split("\n## Interaction")[0].rstrip()
    what = world.turn_instructions
    return (f"{manual}\n\n## This session\n\nYou have {turns} exploration turns. {what} Put each input in a "
            "fenced code block (only the last fenced block of a reply is read); an input the box rejects is "
            f"answered with the reason and costs no turn. Each test has {shots} attempt(s); after a wrong "
            f"attempt you are told it is incorrect.\n\nTurn 1 of {turns}: send your first input.")


def feedback_message(text: str, fb, turn: int, turns: int, used_turn: bool) -> str:
    if not used_turn:
        return f"{fb.text}\n\nTurn {turn} of {turns}: send an input."
    out = f"Input: {text}\nOutput:\n{fb.text}"
    if turn <= turns:
        out += f"\n\nTurn {turn} of {turns}: send your next input."
    return out


def test_prompt(task, i: int, n: int) -> str:
    return (f"Exploration is over. Test {i} of {n}. {task.prompt}\n\nOnly the last fenced code block of your "
            "reply is graded.")


def retry_prompt(task, shot: int, shots: int) -> str:
    return f"Incorrect. Attempt {shot} of {shots}: {task.prompt}"


# ----------------------------------------------------------------------------
# One box, one system


class BoxSession:
    def __init__(self, rt: Runtime, world, model: Model, config: OracleConfig):
        self.rt, self.world, self.model, self.config = rt, world, model, config
        self.turns = config.turns_for(world)
        self.shots = config.shots_for(world)
        self.condition = f"{self.turns}@{self.shots}"
        self.conv = f"{model.name}|{world.name}|{self.condition}"
        self.sample = f"{world.name}/{self.condition}"
        self.history: list[dict] = []
        self.tokens = 0
        self.requests = 0

    def add(self, msg: dict) -> None:
        self.rt.emit({"type": "message", "id": f"msg:{self.conv}:{len(self.history)}", "conv": self.conv,
                      "index": len(self.history), "message": msg})
        self.history.append(msg)

    def request(self, messages, purpose: str, **meta) -> Request:
        return Request(messages=tuple(messages), settings=self.config.settings, purpose=purpose,
                       sample=self.sample, meta={"conv": self.conv, "condition": self.condition,
                                                 "trajectory": 1, "box": self.world.name, "t": None,
                                                 "step": None, "prefix": 0, **meta})

    async def run(self) -> dict:
        w = self.world
        self.add({"role": "system", "content": system_prompt()})
        self.add({"role": "user", "content": opening_prompt(w, self.turns, self.shots)})
        used = free = step = 0
        pending = ""
        lost = None
        try:
            while used < self.turns:
                req = self.request(self.history, "explore", step=step, t=used + 1)
                step += 1
                reply = await self.rt.call(self.model, req)
                self.requests += 1
                self.tokens += reply.usage.total
                self.add(reply.message(with_tool_calls=False))
                text = extract_answer(reply.content)
                fb = w.probe(text)
                spend = fb.status != "rejected" or free >= self.turns
                if spend:
                    used += 1
                else:
                    free += 1
                self.rt.emit({"type": "box_turn", "id": f"turn:{self.conv}:{step}", "conv": self.conv,
                              "system": self.model.name, "box": w.name, "turn": used, "input": text,
                              "status": fb.status, "feedback": fb.text, "counted": spend})
                msg = feedback_message(text, fb, used + 1, self.turns, spend)
                if used < self.turns:
                    self.add({"role": "user", "content": msg})
                else:
                    pending = msg  # the last output opens every test question
        except LostError as e:
            lost = f"exploration lost to infrastructure: {e}"
        tests = []
        if lost is None:
            tests = await asyncio.gather(*(self.test(task, i, len(w.tasks), pending)
                                           for i, task in enumerate(w.tasks, 1)))
        return self.record(used, tests, lost)

    async def test(self, task, i: int, n: int, pending: str) -> dict:
        prefix = list(self.history)
        first = (pending + "\n\n" if pending else "") + test_prompt(task, i, n)
        msgs = prefix + [{"role": "user", "content": first}]
        shots = []
        for s in range(1, self.shots + 1):
            req = self.request(msgs, f"test:{task.id}", shot=s)
            try:
                reply = await self.rt.call(self.model, req)
            except LostError as e:
                shots.append({"shot": s, "lost": True, "error": str(e)})
                break
            answer = extract_answer(reply.content)
            v = self.world.verify(task, answer)
            score = float(getattr(v, "score", 1.0 if v.passed else 0.0))
            shots.append({"shot": s, "answer": answer, "passed": bool(v.passed), "score": score,
                          "detail": v.detail})
            self.rt.emit({"type": "box_answer", "id": f"answer:{self.conv}:{task.id}:{s}", "conv": self.conv,
                          "system": self.model.name, "box": self.world.name, "test": task.id, "shot": s,
                          "answer": answer, "passed": bool(v.passed), "score": score, "detail": v.detail})
            if v.passed:
                break
            msgs = msgs + [reply.message(with_tool_calls=False),
                           {"role": "user", "content": retry_prompt(task, s + 1, self.shots)}]
        passed = any(x.get("passed") for x in shots)
        # a lost shot leaves the test unscored (never wrong), unless an earlier shot already passed
        lost = any(x.get("lost") for x in shots) and not passed
        scored = [x["score"] for x in shots if not x.get("lost")]
        return {"test": task.id, "score": None if lost else max(scored), "passed": passed, "shots": shots,
                "lost": lost}

    def record(self, used: int, tests: list[dict], lost: str | None) -> dict:
        w = self.world
        valid = lost is None and not any(t["lost"] for t in tests)
        scores = [t["score"] for t in tests if not t["lost"] and t["score"] is not None]
        acc = round(100.0 * sum(scores) / len(scores), 6) if scores else 0.0
        milestone = {"t": used, "accuracy": acc, "passes": [acc], "sigma": 0.0, "calls": used,
                     "probe_units": used, "tokens": self.tokens, "rules_correct": 0,
                     "tasks": {t["test"]: [t["score"]] for t in tests}, "lost": sum(t["lost"] for t in tests)}
        rec = {"world": w.name, "system": self.model.name, "condition": self.condition, "trajectory": 1,
               "milestones": [milestone], "status": "complete" if lost is None else "lost", "valid": valid,
               "endpoint": acc, "family": getattr(w, "family", ""), "difficulty": getattr(w, "difficulty", ""),
               "kind": w.kind, "turns": self.turns, "shots": self.shots, "turns_used": used,
               "requests": self.requests, "tests": tests}
        if lost:
            rec["error"] = lost
        digest = hashlib.sha256(json.dumps(rec, sort_keys=True, default=str).encode()).hexdigest()[:16]
        self.rt.emit({"type": "trajectory", "id": f"trajectory:{self.conv}:{digest}", "conv": self.conv,
                      "record": rec})
        if self.rt.progress is not None:
            self.rt.progress.update(self.conv, system=self.model.name, condition=self.condition,
                                    trajectory=w.name, calls=used, tokens=self.tokens, accuracy=acc,
                                    done=True, status=rec["status"])
        return rec


# ----------------------------------------------------------------------------
# Built-in agents


def _user_after(messages, i):
    return messages[i + 1]["content"] if i + 1 < len(messages) else ""


class _BoxAgent(Model):
    cacheable = False

    def __init__(self, world, probe_seed: int = 0):
        self.world = world
        self.probe_seed = probe_seed
        self._probes: list[str] = []

    def probe(self, n: int) -> str:
        gen = None
        while len(self._probes) <= n:
            if gen is None:
                gen = self.world.probe_generator(self.probe_seed)
                for _ in range(len(self._probes)):
                    next(gen)
            self._probes.append(next(gen))
        return self._probes[n]

    async def complete(self, request: Request) -> Reply:
        if request.purpose == "explore":
            n = sum(1 for m in request.messages if m.get("role") == "assistant")
            return Reply(content=f"```\n{self.probe(n)}\n```")
        if request.purpose.startswith("test:"):
            return Reply(content=f"```\n{self.answer(request.purpose[5:], request)}\n```")
        return Reply(content="")

    def observed(self, request: Request) -> list[str]:
        """The inputs this agent sent during exploration (what it saw is the box's reply to each)."""
        out = []
        for m in request.messages:
            if m.get("role") == "assistant":
                text = extract_answer(m.get("content"))
                if text:
                    out.append(text)
        return out


class BoxOracle(_BoxAgent):
    """Knows f: answers every test with its reference answer."""

    name = model_id = "oracle"

    def answer(self, task_id: str, request: Request) -> str:
        return self.world.task(task_id).solution


class Memoriser(_BoxAgent):
    """Explores with the probe generator; answers from what it observed (the world says how)."""

    name = model_id = "memorise"

    def answer(self, task_id: str, request: Request) -> str:
        return self.world.answer_from(task_id, self.observed(request))


def make_box_agent(spec: str, world) -> Model:
    if spec == "oracle":
        return BoxOracle(world)
    if spec in ("memorise", "memorize", "memoriser"):
        return Memoriser(world)
    raise FatalError(f"unknown agent {spec!r} for black boxes (built-in: {', '.join(BOX_AGENTS)})")


# ----------------------------------------------------------------------------
# A run over boxes


@attrs.define
class OracleResult:
    out: Path
    records: list[dict]
    summary: dict


async def run_boxes(boxes: Sequence, system_specs: Sequence[tuple[str, object]], config: OracleConfig,
                    out: str | Path, *, name: str = "oracle", resume: bool = False,
                    cache_dir: str | Path | None = None, progress=None) -> OracleResult:
    """Run every box against every system. `system_specs` are ("agent", NAME) or ("model", Model)."""
    out = Path(out)
    systems_per_box = []
    for w in boxes:
        row = []
        for kind, spec in system_specs:
            row.append(make_box_agent(spec, w) if kind == "agent" else spec)
        systems_per_box.append(row)
    names = [m.name for m in systems_per_box[0]] if systems_per_box else []
    if len(set(names)) != len(names):
        raise FatalError(f"two systems share a name: {names}")
    log = RunLog(out, config=config.identity(systems_per_box[0] if boxes else [], boxes),
                 world=suite_identity(name, boxes), resume=resume)
    cache = ResponseCache(cache_dir) if cache_dir else None
    rt = Runtime(log, cache=cache, max_connections=config.max_connections, retry=config.retry,
                 progress=progress)
    with session_outcome(log, cache):
        jobs = [BoxSession(rt, w, m, config).run() for w, row in zip(boxes, systems_per_box) for m in row]
        records = await asyncio.gather(*jobs)
    log.emit({"type": "stats", "session": log.session, "calls_live": rt.stats.live,
              "calls_from_log": rt.stats.from_log, "calls_from_cache": rt.stats.from_cache,
              "retries": rt.stats.retries, "lost": rt.stats.lost})
    log.close("success")
    if cache is not None:
        cache.close()
    summary = write_outputs(out)
    return OracleResult(out, list(records), summary)


# ----------------------------------------------------------------------------
# Metrics and reports


def load_records(directory: str | Path) -> tuple[dict, list[dict], dict]:
    """(header, the last record of every conversation, session statuses) from a run log."""
    header, recs, sessions = {}, {}, {}
    for ev in read_events(Path(directory) / "log.jsonl"):
        t = ev.get("type")
        if t == "header":
            header = ev
        elif t == "trajectory":
            recs[ev["conv"]] = ev["record"]
        elif t == "session":
            sessions[ev.get("session", 0)] = ev.get("status")
    return header, list(recs.values()), sessions


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 2) if xs else None


def accuracy_table(records: Sequence[dict]) -> dict:
    """Per system: accuracy by family x difficulty, by family, by difficulty and overall (mean over boxes)."""
    by_sys: dict[str, dict] = {}
    groups: dict[tuple, list] = defaultdict(list)
    for r in records:
        groups[(r["system"], r.get("family") or "-", r.get("difficulty") or "-")].append(r["endpoint"])
    for (system, fam, diff), accs in groups.items():
        s = by_sys.setdefault(system, {"cells": {}, "families": {}, "difficulty": {}, "boxes": 0})
        s["cells"][f"{fam}/{diff}"] = {"accuracy": _mean(accs), "boxes": len(accs)}
    for system, s in by_sys.items():
        mine = [r for r in records if r["system"] == system]
        s["boxes"] = len(mine)
        for fam in sorted({r.get("family") or "-" for r in mine}, key=_family_key):
            s["families"][fam] = _mean([r["endpoint"] for r in mine if (r.get("family") or "-") == fam])
        for diff in ("easy", "hard"):
            s["difficulty"][diff] = _mean([r["endpoint"] for r in mine if r.get("difficulty") == diff])
        s["overall"] = _mean([r["endpoint"] for r in mine])
        s["rank_key"] = (s["difficulty"]["easy"] or 0) + (s["difficulty"]["hard"] or 0)
    return by_sys


def _family_key(f: str):
    return (FAMILY_ORDER.index(f) if f in FAMILY_ORDER else len(FAMILY_ORDER), f)


def validity(header: dict, records: Sequence[dict], sessions: dict) -> dict:
    cfg = header.get("config", {})
    expected = len(cfg.get("systems", [])) * len(cfg.get("boxes", []))
    finished = sum(1 for r in records if r.get("status") == "complete")
    lost = sum(m.get("lost", 0) for r in records for m in r["milestones"])
    last = sessions[max(sessions)] if sessions else None
    complete = finished >= expected and last == "success"
    clean = lost == 0 and all(r.get("valid") for r in records)
    return {"valid": bool(complete and clean), "complete": bool(complete), "clean": bool(clean),
            "expected_trajectories": expected, "finished_trajectories": finished, "lost_answers": lost,
            "sessions": len(sessions), "last_session": last}


def write_outputs(directory: str | Path) -> dict:
    d = Path(directory)
    header, records, sessions = load_records(d)
    records.sort(key=lambda r: (r["system"], _family_key(r.get("family") or "-"), r["world"]))
    with open(d / "trajectories.jsonl", "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    stamp = validity(header, records, sessions)
    results = [{"world": r["world"], "system": r["system"], "condition": r["condition"], "best": r["endpoint"],
                "mean": r["endpoint"], "worst": r["endpoint"], "n": 1, "best_trajectory": 1,
                "curve": [{k: m.get(k) for k in ("t", "accuracy", "passes", "sigma", "calls", "probe_units",
                                                  "tokens", "rules_correct")} for m in r["milestones"]],
                "family": r.get("family"), "difficulty": r.get("difficulty"), "valid": r.get("valid")}
               for r in records]
    table = accuracy_table(records)
    cfg = header.get("config", {})
    conditions = sorted({r["condition"] for r in records})
    summary = {"validity": stamp, "protocol": "turn@shot", "turn_shot": conditions,
               "turns": cfg.get("turns"), "shots": cfg.get("shots"), "accuracy": table, "results": results}
    (d / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    (d / "report.md").write_text(markdown(summary, records), encoding="utf-8")
    return summary


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.1f}"


def markdown(summary: dict, records: Sequence[dict]) -> str:
    stamp = summary["validity"]
    table = summary["accuracy"]
    lines = ["# worldspec run report: black-box interaction (turn@shot)", ""]
    ok = "valid" if stamp["valid"] else "INVALID"
    lines += [f"Run status: **{ok}** — {stamp['finished_trajectories']}/{stamp['expected_trajectories']} "
              f"box sessions finished, {stamp['lost_answers']} answers lost to infrastructure, "
              f"{stamp['sessions']} session(s). Turn@shot: {', '.join(summary['turn_shot']) or '—'}.", ""]
    fams = [f for f in FAMILY_ORDER if any(f in s["families"] for s in table.values())]
    fams += sorted({f for s in table.values() for f in s["families"]} - set(fams) - {"-"})
    lines += ["Accuracy (%) by family and difficulty, the layout of the paper's figures; systems ranked by "
              "the sum of their easy and hard accuracy. A box's accuracy is the mean score of its test "
              "samples (best shot; game boxes: score / exact optimum).", ""]
    head = ["System"] + [f"{f} {d}" for f in fams for d in ("easy", "hard")] + ["Easy", "Hard", "All"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for system, s in sorted(table.items(), key=lambda kv: -kv[1]["rank_key"]):
        row = [system] + [_fmt(s["cells"].get(f"{f}/{d}", {}).get("accuracy")) for f in fams
                          for d in ("easy", "hard")]
        row += [_fmt(s["difficulty"]["easy"]), _fmt(s["difficulty"]["hard"]), _fmt(s["overall"])]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Per family (all boxes):", "", "| System | " + " | ".join(fams) + " |",
              "|---|" + "---|" * len(fams)]
    for system, s in sorted(table.items(), key=lambda kv: -kv[1]["rank_key"]):
        lines.append(f"| {system} | " + " | ".join(_fmt(s["families"].get(f)) for f in fams) + " |")
    lines += ["", "## Boxes", "", "| Box | Family | Difficulty | System | Turn@shot | Accuracy | Turns used |",
              "|---|---|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['world']} | {r.get('family') or '—'} | {r.get('difficulty') or '—'} | {r['system']} | "
                     f"{r['condition']} | {_fmt(r['endpoint'])} | {r.get('turns_used')} |")
    return "\n".join(lines).rstrip() + "\n"


# ----------------------------------------------------------------------------
# `worldspec run` for black boxes and game worlds


def collect(world_path: str, seed: int | None):
    """(kind of run, worlds): "boxes" for a folder or a single box, "pool" for a game world, None otherwise."""
    from worldspec.compiler import load_world, resolve_world_path
    if os.path.isdir(world_path):
        from worldspec.compiler.suite import world_files
        paths = world_files(world_path)
        if not paths:
            raise FatalError(f"no .world files under {world_path}")
        worlds = [load_world(p, seed) for p in paths]
        odd = [w.name for w in worlds if not is_box(w)]
        if odd:
            raise FatalError(f"a folder run takes black boxes only; {len(odd)} world(s) are not: "
                             f"{', '.join(odd[:3])}{', ...' if len(odd) > 3 else ''}")
        return "boxes", worlds
    path = resolve_world_path(world_path)
    if not os.path.exists(path):
        return None, []
    w = load_world(path, seed)
    if w.protocol == "milestone":
        return None, []
    return ("boxes" if is_box(w) else "pool"), [w]


def run_command(world_path: str, params: dict) -> bool:
    """`worldspec run` on a folder of boxes, a box or a game world; False for the other kinds."""
    import click  # noqa: PLC0415
    from worldspec.diagnostics import SpecError, SpecErrors  # noqa: PLC0415

    try:
        what, worlds = collect(world_path, params.get("seed"))
    except FatalError as e:
        raise click.ClickException(str(e)) from None
    except (SpecError, SpecErrors) as e:
        raise click.ClickException(f"cannot load {world_path}:\n{e}") from None
    if what is None:
        return False
    if what == "pool":
        from .games import run_pool_command  # noqa: PLC0415
        run_pool_command(worlds[0], world_path, params)
        return True
    turns, shots = params.get("turns"), params.get("shots")
    preset = params.get("preset")
    if preset:
        pt, ps = PRESETS[preset]
        turns, shots = turns or pt, shots or ps
    for label, v in (("--turns", turns), ("--shots", shots)):
        if v is not None and v < 1:
            raise click.BadParameter("must be at least 1", param_hint=label)
    settings = _settings(params)
    from .models import make_model  # noqa: PLC0415
    specs: list[tuple[str, object]] = []
    try:
        for m in params.get("models") or ():
            specs.append(("model", make_model(m, worlds[0], api_base=params.get("api_base"), settings=settings,
                                              timeout=params.get("timeout") or 600.0)))
        for a in params.get("agents") or (() if specs else BOX_AGENTS):
            if a not in BOX_AGENTS and a not in ("memorize", "memoriser"):
                raise FatalError(f"unknown agent {a!r} for black boxes (built-in: {', '.join(BOX_AGENTS)})")
            specs.append(("agent", a))
    except FatalError as e:
        raise click.ClickException(str(e)) from None
    config = OracleConfig(turns=turns, shots=shots, settings=settings, api_base=params.get("api_base"),
                          world_seed=params.get("seed"), max_connections=params.get("max_connections") or 16,
                          retry=RetryPolicy(max_attempts=max(1, params.get("max_retries") or 8),
                                            base_delay=params.get("retry_delay") or 1.0))
    name = os.path.basename(os.path.normpath(world_path)) if os.path.isdir(world_path) else worlds[0].name
    out = params.get("out") or os.path.join("runs", f"{_slug(name)}-{time.strftime('%Y%m%d-%H%M%S')}")
    if params.get("dry_run"):
        n_sys = len(specs)
        calls = sum(config.turns_for(w) + len(w.tasks) * config.shots_for(w) for w in worlds) * n_sys
        click.echo(f"{len(worlds)} box(es) x {n_sys} system(s), turn@shot "
                   f"{', '.join(sorted({config.condition(w) for w in worlds}))}")
        click.echo(f"model calls: at most {calls} (plus up to one free rejection per turn)")
        return True
    if params.get("resume") and not params.get("out"):
        raise click.UsageError("--resume needs the --out directory of the run to continue")
    cache = None
    if not params.get("no_cache") and any(k == "model" and s.cacheable for k, s in specs):
        from .cli import default_cache_dir  # noqa: PLC0415
        cache = params.get("cache_dir") or str(default_cache_dir())
    from .log import RunDirError  # noqa: PLC0415
    from .progress import Progress  # noqa: PLC0415
    progress = Progress(quiet=bool(params.get("quiet")), live=False)
    try:
        with progress:
            result = asyncio.run(run_boxes(worlds, specs, config, out, name=name,
                                           resume=bool(params.get("resume")), cache_dir=cache,
                                           progress=progress))
    except (FatalError, RunDirError) as e:
        raise click.ClickException(str(e)) from None
    table = result.summary["accuracy"]
    for system, s in sorted(table.items(), key=lambda kv: -kv[1]["rank_key"]):
        fams = "  ".join(f"{f} {_fmt(v)}" for f, v in s["families"].items())
        click.echo(f"{system:<24} easy {_fmt(s['difficulty']['easy'])}  hard {_fmt(s['difficulty']['hard'])}  "
                   f"all {_fmt(s['overall'])}  |  {fams}")
    click.echo(f"wrote {out}/log.jsonl, trajectories.jsonl, summary.json, report.md")
    if not result.summary["validity"]["valid"]:
        click.echo("warning: the run is not valid (see summary.json 'validity')", err=True)
        raise SystemExit(3)
    return True


def _settings(params: dict) -> dict:
    settings = {}
    if params.get("temperature") is not None:
        settings["temperature"] = params["temperature"]
    if params.get("max_tokens") is not None:
        settings["max_tokens"] = params["max_tokens"]
    if params.get("reasoning_effort"):
        settings["reasoning_effort"] = params["reasoning_effort"]
    from .cli import _parse_model_args  # noqa: PLC0415
    settings.update(_parse_model_args(params.get("model_args") or ()))
    return settings


def _slug(s: str) -> str:
    import re
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-").lower() or "run"
