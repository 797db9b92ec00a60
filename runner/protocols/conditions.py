"""What each milestone condition feeds a trajectory: probe scripts and volumes.

  hindsight     the probes of the best autonomous trajectory of the same system
                (this run, or a previous run: `--hindsight-from DIR[#SYSTEM]`),
                replayed round by round and executed live;
  fixed         probes from the world's generator with a fixed seed, each matched
                to the probe units of a call of the reference trajectory.

(without-tool takes nothing from here: one model turn per round, as the released harness's
"think" control mode, sandboxes/code/run_eval.py `_run_explore_phase`.)

The reference of fixed (its `Volume`) is, as in the paper, a
Best@n autonomous trajectory: of the mid-ranked system of this run
(`reference_system`), or of a previous run (`--volume-from DIR[#SYSTEM]`); the full
budget (`default_volume`) only with `--full-volume`. References are read from a run
log with log.load_run; "best" is Best@n's r*.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import attrs

from .. import metrics
from ..log import LoggedRun, load_run
from ..models import FatalError


@attrs.frozen
class ProbeScript:
    """Per round, per model turn, the probes to submit."""

    rounds: tuple[tuple[tuple[str, ...], ...], ...]
    source: str = ""


@attrs.frozen
class Volume:
    """Per round, per tool-calling turn, the probe units of each call (fixed probes)."""

    rounds: tuple[tuple[tuple[int, ...], ...], ...]
    source: str = ""

    def calls(self) -> list[int]:
        """Tool calls per round."""
        return [sum(len(turn) for turn in rnd) for rnd in self.rounds]

    def summary(self) -> dict:
        """What the log and the trajectory record say of the volume: its source and its counts."""
        return {"source": self.source, "calls_per_round": self.calls(),
                "units_per_call": [[list(turn) for turn in rnd] for rnd in self.rounds]}


def round_slots(budget) -> list[int]:
    """Calls available in each round: calls_per_round, until max_calls runs out."""
    left, out = budget.max_calls, []
    for _ in range(budget.rounds):
        n = max(0, min(budget.calls_per_round, left))
        left -= n
        out.append(n)
    return out


def default_volume(world) -> Volume:
    """The full budget: single-call turns filling every round's slots."""
    rounds = tuple(tuple((0,) for _ in range(n)) for n in round_slots(world.budget))  # 0: any charge within the cap
    return Volume(rounds, source="full budget (--full-volume)")


def fixed_script(world, volume: Volume, seed: int) -> ProbeScript:
    """Probes from the world's generator (fixed seed), matched to the volume's units."""
    gen = world.probe_generator(seed)
    cap = world.budget.units_per_call
    pool: list[tuple[str, int]] = []

    def fits(units: int, c: int) -> bool:
        return c == units if units else 0 < c <= cap

    def draw(units: int) -> str:
        for i, (p, c) in enumerate(pool):
            if fits(units, c):
                return pool.pop(i)[0]
        for _ in range(2000):
            p = next(gen)
            try:
                c = int(world.charge(p))
            except Exception:  # noqa: BLE001 — a generated probe that cannot be charged is skipped
                continue
            if fits(units, c):
                return p
            if 0 < c <= cap and len(pool) < 200:
                pool.append((p, c))
        return pool.pop(0)[0] if pool else next(gen)

    rounds = tuple(tuple(tuple(draw(u) for u in turn) for turn in rnd) for rnd in volume.rounds)
    return ProbeScript(rounds, source=f"generator seed {seed}, volume from {volume.source}")


# ----------------------------------------------------------------------------
# References from a run log


def split_reference(spec: str) -> tuple[Path, str | None]:
    """DIR[#SYSTEM] -> (DIR, SYSTEM or None)."""
    path, _, system = spec.partition("#")
    return Path(path), (system or None)


def best_autonomous(logged: LoggedRun, system: str | None, *, strict_system: bool) -> str:
    """The conversation id of the best finished autonomous trajectory of `system`."""
    done = [(conv, r) for conv, r in logged.records.items()
            if r["condition"] == "autonomous" and r.get("status") == "complete"]
    systems = sorted({r["system"] for _, r in done})
    if not done:
        raise FatalError(f"{logged.path} holds no finished autonomous trajectory")
    if system is None or system not in systems:
        if strict_system or system is not None and len(systems) != 1:
            raise FatalError(f"{logged.path} has no finished autonomous trajectory of {system!r} "
                             f"(found: {', '.join(systems)}); name one as DIR#SYSTEM")
        if len(systems) != 1:
            raise FatalError(f"{logged.path} holds several systems ({', '.join(systems)}); "
                             "name one as DIR#SYSTEM")
        system = systems[0]
    mine = [(conv, r) for conv, r in done if r["system"] == system]
    best = metrics.best_of([r for _, r in mine])["best_record"]
    return next(conv for conv, r in mine if r is best)


def reference_system(records: list[dict], order: list[str]) -> str | None:
    """The system whose Best@n autonomous endpoint ranks in the middle of the run's systems (the
    lower middle for an even count; the lineup's order breaks ties), among those with a finished
    autonomous trajectory. explorationbench.txt A.4 (fixed-probe): "its per-call volume follows one
    mid-ranked trajectory, the Best@3 trajectory of Grok 4.6"."""
    best = {}
    for name in order:
        mine = [r for r in records if r["system"] == name and r["condition"] == "autonomous"
                and r.get("status") == "complete"]
        b = metrics.best_of(mine)
        if b["best"] is not None:
            best[name] = metrics.endpoint(b["best_record"])
    ranked = sorted(best, key=lambda name: (-best[name], order.index(name)))
    return ranked[(len(ranked) - 1) // 2] if ranked else None


def _by_round(events: list[dict], keep) -> list[list[list[dict]]]:
    """Tool events grouped by round, then by the model turn that asked for them."""
    by_round: dict[int, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for ev in events:
        if keep(ev):
            by_round[ev["t"]][ev["turn"]].append(ev)
    if not by_round:
        return []
    return [[by_round[t][k] for k in sorted(by_round[t])] for t in range(1, max(by_round) + 1)]


def hindsight_script(directory: str | Path, system: str, n_rounds: int, where: str | None = None) -> ProbeScript:
    """The probes of `system`'s best autonomous trajectory in a run, round by round (`where`
    names the run in the record's probe_source; default the log's path)."""
    logged = _load(directory)
    conv = best_autonomous(logged, system, strict_system=True)
    rounds = _by_round(logged.tools.get(conv, []), lambda e: e.get("status") not in ("over_budget", "invalid")
                       and isinstance(e.get("program"), str))[:n_rounds]
    return ProbeScript(tuple(tuple(tuple(e["program"] for e in turn) for turn in rnd) for rnd in rounds),
                       source=f"hindsight: {conv} in {where or logged.path}")


def volume_from(directory: str | Path, system: str | None, n_rounds: int, where: str | None = None) -> Volume:
    """The probe units per call of a run's best autonomous trajectory (`where` names the run in
    the volume's source; default the log's path)."""
    logged = _load(directory)
    conv = best_autonomous(logged, system, strict_system=False)
    rounds = _by_round(logged.tools.get(conv, []),
                       lambda e: e.get("status") not in ("over_budget", "invalid", "rejected"))[:n_rounds]
    return Volume(tuple(tuple(tuple(int(e["units"]) for e in turn) for turn in rnd) for rnd in rounds),
                  source=f"{conv} in {where or logged.path}")


def _load(directory) -> LoggedRun:
    try:
        return load_run(directory)
    except FileNotFoundError as e:
        raise FatalError(str(e)) from None
