"""Shared test setup: offline litellm, bounded derandomized Hypothesis profiles, and the runner's helpers.

Runner helpers (fixtures): `run_world` runs worlds in process with fast retries,
`read_log` reads a run's events, `fake_world_file` registers the test kind
`fake` (runner_fakes.FakeWorld) and writes a spec of it, `fake_openai` is the
fake OpenAI-compatible server with a test's API key set.
"""
import asyncio
import atexit
import collections
import functools
import json
import os
import shutil
import tempfile

# Before anything can import litellm: no network for its cost map, offline mode.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
# The world cache (compiler/worldcache.py) of this session: a fresh folder, never the user's; worker processes
# and `worldspec` subprocesses inherit it, so each bundled world is compiled and certified once per session
# (WORLDSPEC_NO_CACHE=1 in the environment runs the suite without it).
_WORLD_CACHE = tempfile.mkdtemp(prefix="worldspec-test-world-cache-")
os.environ["WORLDSPEC_CACHE_DIR"] = _WORLD_CACHE
atexit.register(shutil.rmtree, _WORLD_CACHE, True)

# Every `worldspec` subprocess and sandbox worker imports the package. Where the environment says not to write
# bytecode (PYTHONDONTWRITEBYTECODE, as on this project's CI machines) each of them compiled all of it from
# source again, 0.3-1 s a process; compiled once here (only what is stale), they read it.
import compileall  # noqa: E402
import importlib.util  # noqa: E402

for _package in ("worldspec", "worldspec.compiler", "worldspec.runner"):
    for _folder in importlib.util.find_spec(_package).submodule_search_locations or ():
        compileall.compile_dir(_folder, quiet=1)

# One pytest process runs the suite and leaves the machine's second core idle: a `worldspec check` of the
# bundled worlds, started now beside it, fills the session's world cache (atomic writes, content-addressed,
# so a test that gets there first compiles the world itself and nothing differs but the time). Later tests
# then recall each world's compile and certification instead of paying it in the test process.
# WORLDSPEC_NO_WARM=1 runs the suite without it.
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _warm_world_cache() -> None:
    if os.environ.get("WORLDSPEC_NO_WARM") or os.environ.get("WORLDSPEC_NO_CACHE") or (os.cpu_count() or 1) < 2:
        return
    script = ("import sys\nfrom worldspec.cli import main\n"
              "for folder in sys.argv[1:]:\n"
              "    try:\n        main(['check', folder, '--json', '--jobs', '1'], standalone_mode=False)\n"
              "    except BaseException:\n        pass\n")
    warmer = subprocess.Popen([sys.executable, "-c", script, os.path.join(_ROOT, "worlds"),
                               os.path.join(_ROOT, "tests", "worlds")], cwd=_ROOT,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True, preexec_fn=lambda: os.nice(5))

    def stop():  # the warmer and its workers (its own process group) end with the session
        if warmer.poll() is None:
            try:
                os.killpg(warmer.pid, signal.SIGKILL)
            except OSError:
                pass
        warmer.wait()
    atexit.register(stop)


_warm_world_cache()

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from fake_openai import FakeOpenAI  # noqa: E402
from runner_fakes import FAKE_KIND, FAKE_SPEC  # noqa: E402
from worldspec.cli import main as cli_main  # noqa: E402
from worldspec.compiler import KINDS, load_world, worldcache  # noqa: E402
from worldspec.compiler.suite import cross_family_problems, world_files  # noqa: E402
from worldspec.runner.config import RunConfig  # noqa: E402
from worldspec.runner.experiment import run_experiment  # noqa: E402
from worldspec.runner.log import read_events  # noqa: E402
from worldspec.runner.models import RetryPolicy  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The README's test command runs every test; the heaviest run a fixed, deterministic sample of their cases
# (a seed, a slice of a grid, fewer generated probes) so the suite stays within its budget on 2 cores.
# WORLDSPEC_FULL_SUITE=1 runs every case (before a release, or after touching what they cover).
FULL_SUITE = os.environ.get("WORLDSPEC_FULL_SUITE", "") not in ("", "0")


def sample(cases, every: int) -> list:
    """All of `cases` under WORLDSPEC_FULL_SUITE=1, else every `every`-th one from the first (a fixed sample)."""
    cases = list(cases)
    return cases if FULL_SUITE else cases[::every]


def full_or(full, sampled):
    """`full` under WORLDSPEC_FULL_SUITE=1, else `sampled` (a smaller count of generated cases)."""
    return full if FULL_SUITE else sampled


WORLDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")
FAST = RetryPolicy(max_attempts=4, base_delay=0.001, max_delay=0.01)


@pytest.fixture(autouse=True)
def world_cache_setting_restored():
    """A command run in process with `--no-cache` sets WORLDSPEC_NO_CACHE for its process (so its workers
    inherit it); here that is the test process, and every later test compiled every world afresh. Each test
    ends with the setting it started with."""
    before = os.environ.get(worldcache.ENV_DISABLE)
    yield
    if os.environ.get(worldcache.ENV_DISABLE) != before:
        if before is None:
            os.environ.pop(worldcache.ENV_DISABLE, None)
        else:
            os.environ[worldcache.ENV_DISABLE] = before


@pytest.fixture(scope="session")
def demo():
    return load_world(os.path.join(WORLDS, "demo.world"))


def run_in_process(worlds, models, out, *, agents=(), resume=False, cache_dir=None, name=None, **config):
    """A run of `worlds` (a list, or one world) with fast retries; returns experiment.RunResult."""
    config.setdefault("retry", FAST)
    worlds = worlds if isinstance(worlds, list) else [worlds]
    return asyncio.run(run_experiment(worlds, models, RunConfig(**config), out, agents=agents, name=name,
                                      resume=resume, cache_dir=cache_dir))


def log_events(out, type=None) -> list[dict]:
    """The events of a run directory's log (of one type, if given)."""
    events = list(read_events(os.path.join(out, "log.jsonl")))  # compact lines expanded, as written
    return [e for e in events if type is None or e.get("type") == type]


@pytest.fixture(scope="session")
def run_world():
    return run_in_process


@pytest.fixture(scope="session")
def read_log():
    return log_events


@pytest.fixture
def fake_world_file(tmp_path, monkeypatch):
    """A spec of kind `fake` (registered for this test only): runs as runner_fakes.FakeWorld."""
    monkeypatch.setitem(KINDS, "fake", FAKE_KIND)
    path = tmp_path / "fake.world"
    path.write_text(FAKE_SPEC)
    return str(path)


@pytest.fixture(scope="session")
def openai_server():
    server = FakeOpenAI(timeout_sleep=1.5).start()
    yield server
    server.stop()


@pytest.fixture
def fake_openai(openai_server, monkeypatch):
    """The fake server, cleared, answering with runner_fakes.explorer_policy unless a test says otherwise."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-key-for-tests")
    openai_server.clear()
    openai_server.responder = openai_server.default_responder
    yield openai_server
    openai_server.clear()


def box_world(path):
    """load_world(path), compiled once a session (worlds are frozen; a game box's optimum or a code box's
    traced tests take seconds to compute, and many tests read the same box)."""
    return _loaded(os.path.abspath(path))


def checked(path) -> dict:
    """`worldspec check WORLD --json` of one world file, run once a session: its report, with exit status 0
    (every test of a box and its folder's cross-box check read this one certification)."""
    return _checked(os.path.abspath(path))


@functools.cache
def _loaded(path: str):
    return load_world(path)


@functools.cache
def _checked(path: str) -> dict:
    r = CliRunner().invoke(cli_main, ["check", path, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def certified_folder(folder, worlds: int) -> dict:
    """What `worldspec check FOLDER --json` checks, from each world's own `check` (`checked`, shared with the
    per-box tests, so no box is certified twice): all `worlds` certified with no problem, and the kinds'
    cross-box checks (suite.cross_family_problems) passing. The report's counts, certified and problems."""
    files = world_files(str(folder))
    reports = [checked(path) for path in files]
    problems = [p for r in reports for p in r["problems"]]
    problems += cross_family_problems([box_world(path) for path in files])
    certified = sum(not r["problems"] for r in reports)
    assert certified == len(files) == worlds and not problems, problems
    cells = collections.Counter(f"{r['family']}/{r['difficulty']}" for r in reports if r.get("family"))
    return {"worlds": len(files), "certified": certified, "problems": problems,
            "counts": {"family_difficulty": dict(cells)}}


def run_boxes_at_20_at_2(folder, tmp_path, monkeypatch, agent: str = "oracle") -> dict:
    """`worldspec run FOLDER --preset 20@2 --agent AGENT` (FOLDER: a folder of boxes or one box); the summary
    of a valid run. The oracle plays every box of a folder (it must score 100% on each); the memoriser, three
    times its cost, plays an easy and a hard box of each family (`memorise_boxes`)."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "true")
    out = tmp_path / "run"
    # The oracle knows f, so its 20 exploration turns change none of its answers, only the run's length (a
    # third of the time; the scores are equal, checked under WORLDSPEC_FULL_SUITE=1, which keeps all 20): it
    # explores one turn and is tested with the preset's 2 shots. The memoriser answers from what it explored.
    preset = ["--preset", "20@2"] if agent != "oracle" or FULL_SUITE else ["--turns", "1", "--shots", "2"]
    r = CliRunner().invoke(cli_main, ["run", str(folder), *preset, "--agent", agent, "--out", str(out)])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["validity"]["valid"]
    return summary


def memorise_boxes(box_files, tmp_path, monkeypatch) -> dict:
    """The memoriser at 20@2 on each of `box_files` (a run each): {box name: its summary's memorise result}."""
    out = {}
    for n, path in enumerate(box_files):
        (tmp_path / str(n)).mkdir()
        summary = run_boxes_at_20_at_2(path, tmp_path / str(n), monkeypatch, agent="memorise")
        [result] = summary["results"]
        assert result["system"] == "memorise" and result["turns_used"] > 0 and 0.0 <= result["best"] <= 100.0
        out[path.stem] = result
    return out
