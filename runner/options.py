"""The options of `worldspec run`, and how they become a RunConfig, model settings and paths.

`run_options` applies every click option of the command; `config_from(params)`
reads them into a config.RunConfig (turn@shot presets resolved), `settings_from`
into the generation settings sent to a model. `default_out` and
`default_cache_dir` name the places a run writes.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import click

from .answers import RULE_PROMPTS
from .config import GRADINGS, RunConfig
from .models import REQUEST_TIMEOUT, RetryPolicy
from .protocols import CONDITIONS
from .report import slug

PRESETS = {"10@1": (10, 1), "20@2": (20, 2)}  # the Oracle paper's turn@shot settings


def default_out(name: str) -> str:
    return os.path.join("runs", f"{slug(name)}-{time.strftime('%Y%m%d-%H%M%S')}")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "worldspec"


def worst_case_minutes(timeout: float, retry: RetryPolicy) -> int:
    """Minutes one call can take when every attempt times out (the backoff between them included)."""
    waits = sum(min(retry.max_delay, retry.base_delay * 2 ** (a - 1)) for a in range(1, retry.max_attempts))
    return round((retry.max_attempts * timeout + waits) / 60)


def parse_model_args(items) -> dict:
    """--model-arg KEY=VALUE items; a value is parsed as JSON when it is JSON."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--model-arg")
        try:
            out[key.strip()] = json.loads(value)  # numbers, booleans, JSON objects
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def settings_from(params: dict) -> dict:
    """The generation settings a model is sent."""
    settings = {k: params[k] for k in ("temperature", "max_tokens") if params.get(k) is not None}
    if params.get("reasoning_effort"):
        settings["reasoning_effort"] = params["reasoning_effort"]
    settings.update(parse_model_args(params.get("model_args") or ()))
    return settings


def config_from(params: dict) -> RunConfig:
    turns, shots = params.get("turns"), params.get("shots")
    if params.get("preset"):
        pt, ps = PRESETS[params["preset"]]
        turns, shots = turns or pt, shots or ps
    return RunConfig(
        conditions=tuple(dict.fromkeys(params.get("conditions") or ("autonomous",))),
        trajectories=params["trajectories"], control_trajectories=params["control_trajectories"],
        answers=params.get("answers"), hindsight_from=params.get("hindsight_from"),
        volume_from=params.get("volume_from"), full_volume=bool(params.get("full_volume")),
        fixed_seed=params["fixed_seed"], rule_prompt=params.get("rule_prompt") or "slots", turns=turns, shots=shots,
        grading=params.get("grading") or "published",
        judge=params.get("judge"), judge_model=params.get("judge_model"),
        settings=settings_from(params), api_base=params.get("api_base"), world_seed=params.get("seed"),
        max_connections=params["max_connections"],
        retry=RetryPolicy(max_attempts=max(1, params["max_retries"]), base_delay=params["retry_delay"]))


RUN_OPTIONS = (
    click.option("--model", "models", multiple=True, metavar="M",
                 help="A litellm model string (repeatable), e.g. openai/gpt-4o-mini."),
    click.option("--agent", "agents", multiple=True, metavar="A",
                 help="A built-in agent (repeatable): oracle, manual, explorer (program worlds: explores "
                      "without a model), replay:DIR[#SYSTEM]; black boxes: "
                      "oracle, memorise; pool games: any strategy of the pool."),
    click.option("--api-base", help="Base URL of an OpenAI-compatible server for --model."),
    click.option("--condition", "conditions", multiple=True, type=click.Choice(CONDITIONS),
                 help="Exploration condition (repeatable; default autonomous)."),
    click.option("--trajectories", "-n", default=3, show_default=True, type=click.IntRange(min=1),
                 help="Independent autonomous trajectories per system (Best@n)."),
    click.option("--control-trajectories", default=1, show_default=True, type=click.IntRange(min=1),
                 help="Trajectories per control condition."),
    click.option("--answers", type=click.IntRange(min=1),
                 help="Answers per task per milestone (default: the world's budget)."),
    click.option("--seed", type=int, help="World seed (a parameter variant of the world)."),
    click.option("--out", type=click.Path(file_okay=False), help="Run directory (default runs/WORLD-TIME)."),
    click.option("--resume", is_flag=True, help="Continue a killed run in --out from its log."),
    click.option("--cache", "cache_dir", type=click.Path(file_okay=False),
                 help="Response cache directory (default ~/.cache/worldspec)."),
    click.option("--no-cache", is_flag=True, help="Do not read or write the response cache: every reply is a fresh "
                 "sample from the model (by default a request asked before, by any run, is answered from the cache, "
                 "and the run says how many were)."),
    click.option("--max-connections", default=16, show_default=True, type=click.IntRange(min=1),
                 help="Requests in flight at once, per model."),
    click.option("--temperature", type=float, help="Generation setting passed to the model."),
    click.option("--max-tokens", type=int, help="Generation setting passed to the model."),
    click.option("--reasoning-effort", help="Generation setting passed to the model (e.g. high)."),
    click.option("--model-arg", "model_args", multiple=True, metavar="KEY=VALUE",
                 help="Any other generation setting (value parsed as JSON when it is JSON)."),
    click.option("--hindsight-from", metavar="DIR[#SYSTEM]",
                 help="A previous run whose best autonomous trajectory the hindsight condition replays."),
    click.option("--volume-from", metavar="DIR[#SYSTEM]",
                 help="A previous run whose best trajectory sets the fixed-probe volume "
                      "(default: this run's, from the mid-ranked system's Best@n trajectory)."),
    click.option("--full-volume", is_flag=True,
                 help="Fixed: fill the whole call budget instead of following a reference."),
    click.option("--fixed-seed", default=0, show_default=True, help="Seed of the fixed probe sequence."),
    click.option("--rule-prompt", type=click.Choice(RULE_PROMPTS), default="slots", show_default=True,
                 help="Milestone worlds: the rule-report prompt. slots: ExplorationBench's released listing, one "
                      "`ID := ??` slot per rule naming its target; open: the world's instructions alone."),
    click.option("--timeout", default=REQUEST_TIMEOUT, show_default=True, type=click.FloatRange(min=0, min_open=True),
                 help="Seconds one model request may take before it counts as a timeout (and is retried)."),
    click.option("--max-retries", default=RetryPolicy().max_attempts, show_default=True, type=click.IntRange(min=1),
                 help="Attempts per request (the first included) on 429, 5xx, timeouts and dropped "
                      "connections; then the call is recorded lost (--resume asks again). With the "
                      "defaults one unreachable provider costs at most about "
                      f"{worst_case_minutes(REQUEST_TIMEOUT, RetryPolicy())} minutes per call."),
    click.option("--retry-delay", default=RetryPolicy().base_delay, show_default=True,
                 type=click.FloatRange(min=0),
                 help=f"First backoff delay in seconds (doubles per retry, with jitter, at most "
                      f"{RetryPolicy().max_delay:g} s)."),
    click.option("--dry-run", is_flag=True, help="Print the plan and the number of model calls; run nothing."),
    click.option("--quiet", is_flag=True, help="No progress display."),
    click.option("--turns", type=click.IntRange(min=1),
                 help="Black boxes: exploration turns (turn@shot); judge worlds: turns per session (default: each "
                      "world's budget)."),
    click.option("--shots", type=click.IntRange(min=1),
                 help="Black boxes: attempts per test sample (default: each box's budget)."),
    click.option("--preset", type=click.Choice(sorted(PRESETS)), help="Black boxes: the Oracle paper's turn@shot."),
    click.option("--grading", type=click.Choice(GRADINGS), default="published", show_default=True,
                 help="Black boxes: published asks for, reads and compares answers as the released Oracle code "
                      "does; lenient accepts quoting, fences, tuples for lists and the box's tolerances."),
    click.option("--judge", type=click.Choice(["keyword", "model"]),
                 help="Judge worlds: the world's keyword judge (offline) or a judge model (default: a model when "
                      "--model or --judge-model is given, else keyword)."),
    click.option("--judge-model", metavar="M", help="Judge worlds: the judge's litellm model (default: the --model)."),
)


def run_options(fn):
    """Every option of `worldspec run`, in the order --help lists them."""
    for option in reversed(RUN_OPTIONS):
        fn = option(fn)
    return fn
