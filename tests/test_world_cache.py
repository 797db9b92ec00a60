"""The world cache (compiler/worldcache.py, artefacts.py, certified.py; docs/cache.md).

A warm compile must be indistinguishable from a fresh one: the same tasks, test answers, naive
answers, verdicts, game optima and policies, and certification reports. A cache written by another
version, or damaged in any way, is ignored and rebuilt, never an error; `--no-cache` and
WORLDSPEC_NO_CACHE bypass it; editing the world or a file it includes changes the key.
Every test points the cache at its own tmp_path.
"""
import hashlib
import json
import os
import threading

import pytest
from click.testing import CliRunner

import worldspec
from worldspec.cli import main as cli_main
from worldspec.compiler import load_world, worldcache
from worldspec.compiler.artefacts import Uncacheable, decode_value, encode_value
from worldspec.compiler.blackbox import spec as box_spec
from worldspec.compiler.certified import certify
from worldspec.compiler.game import engine, spec as game_spec
from worldspec.compiler.game.records import decode_optimum, encode_optimum
from worldspec.compiler.suite import certify_folder

PARTS = '''world "parts (included)" version 1
def double(x) = 2 * x
def table() = map(fn(k) => {"k": k, "sq": k * k, "half": k / 2}, range(0, 40))
'''

BOX = '''world "Cache box" version 1
kind blackbox
seed 11
summary "A box whose answers, naive answers and precomputed table the cache keeps."
family CII
difficulty easy
include "_parts.world"

def TABLE() = table()
precompute TABLE
domain n, int(0, 39)
state {"seen": 0}
base {
  op f(n: int, state) -> int = double(n) + 1 "doubles n and adds one"
}
rule R1 "adds the number of queries seen" {
  op f(n, state) = double(n) + get(state, "seen") + get(get(TABLE(), n), "sq")
  statement "The output also adds how many queries came before and n squared."
  equation "(+ (* 2 n) seen (* n n))"
}
next put(state, "seen", get(state, "seen") + 1)
test 3
test 17
test later "What is the output after two queries?" {
  given 5
  given 6
  ask 7
}
budget { turns 10 shots 1 }
'''

GAME = '''world "Cache game" version 1
kind game
seed 71
summary "Rock, paper, scissors against a mixed opponent, played round by round."
family GSI
difficulty easy
moves "rock", "paper", "scissors"
payoff "rock", "rock", 0, 0
payoff "rock", "paper", -1, 1
payoff "rock", "scissors", 1, -1
payoff "paper", "rock", 1, -1
payoff "paper", "paper", 0, 0
payoff "paper", "scissors", -1, 1
payoff "scissors", "rock", -1, 1
payoff "scissors", "paper", 1, -1
payoff "scissors", "scissors", 0, 0
play rounds
opponent sticky "repeats itself more often than not" {
  start "rock"
  move {state: 0.6, get({"rock": "paper", "paper": "scissors", "scissors": "rock"}, state): 0.4}
  next mine
}
test 7
test 4
budget { turns 4 shots 2 }
'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of this test's own (WORLDSPEC_CACHE_DIR wins over XDG_CACHE_HOME)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(worldcache.ENV_DIR, str(folder))
    monkeypatch.delenv(worldcache.ENV_DISABLE, raising=False)
    return folder


@pytest.fixture
def worlds(tmp_path):
    d = tmp_path / "worlds"
    d.mkdir()
    (d / "_parts.world").write_text(PARTS)
    (d / "box.world").write_text(BOX)
    (d / "game.world").write_text(GAME)
    return d


def cache_files(folder) -> list:
    return sorted(p for p in folder.rglob("*.json")) if folder.exists() else []


class Counter:
    """Counts calls of a module function (patched in place), still calling it."""

    def __init__(self, monkeypatch, module, name):
        self.calls = 0
        real = getattr(module, name)

        def counted(*a, **k):
            self.calls += 1
            return real(*a, **k)
        monkeypatch.setattr(module, name, counted)


def behaviour(w) -> dict:
    """Everything a run or `check` reads of a world that the cache could change."""
    out = {"tasks": list(w.tasks),
           "manual": w.manual, "certify": w.certify()}
    if w.kind == "blackbox":
        out["tests"] = [(t.id, t.expected) for t in w.tests]
        out["verdicts"] = [(t.id, a, w.verify(t.id, a))
                           for t in w.tasks for a in (t.solution, t.naive or "0", "nonsense")]
    else:
        out["optima"] = [(t.optimum.value, t.optimum.plan, t.optimum.deterministic, t.optimum.states,
                          t.optimum.exact) for t in w.tests]
        games = []
        for t in w.tasks:  # the oracle's play: the optimum's policy at every round
            g = w.test_play(t.id)
            moves = []
            while not g.done:
                moves.append(g.best_move())
                g.play(moves[-1])
            games.append((moves, g.verdict().score))
        out["policy_games"] = games
    return out


@pytest.mark.parametrize("name", ["box.world", "game.world"])
def test_a_warm_compile_behaves_as_a_fresh_one(name, worlds, cache, monkeypatch):
    path = str(worlds / name)
    fresh = behaviour(load_world(path, cache=False))
    assert cache_files(cache) == []  # cache=False writes nothing
    cold = behaviour(load_world(path))
    assert len(cache_files(cache)) == 1
    counters = [Counter(monkeypatch, box_spec, "answer_of_test"), Counter(monkeypatch, box_spec, "naive_answer"),
                Counter(monkeypatch, box_spec, "precomputed"), Counter(monkeypatch, game_spec, "optimum_of_test")]
    warm_world = load_world(path)
    assert [c.calls for c in counters] == [0, 0, 0, 0]  # everything recalled, nothing computed
    warm = behaviour(warm_world)
    assert fresh == cold == warm


def test_a_recalled_policy_rebuilds_its_table_only_off_the_table(worlds, cache, monkeypatch):
    path = str(worlds / "game.world")
    load_world(path)
    w = load_world(path)
    calls = Counter(monkeypatch, game_spec, "optimum")
    t = w.tests[0]
    ref = engine.optimum(w.game, w.opponents[0], engine.ROW, t.horizon)
    start = w.opponents[0].initial(t.horizon)
    for state in ("rock", "paper", "scissors"):
        assert t.optimum.policy(state, None, 3) == ref.policy(state, None, 3)
    assert calls.calls == 0  # answered from the stored table
    assert t.optimum.policy(start, None, 0) is None
    assert t.optimum.policy("paper", None, 20) == ref.policy("paper", None, 20)  # longer than the test game
    assert calls.calls == 1  # off the table: the programme ran again, once


def test_certification_is_recalled_and_equal(worlds, cache, monkeypatch):
    path = str(worlds / "box.world")
    first = certify(load_world(path))
    calls = Counter(monkeypatch, box_spec.BlackBoxWorld, "certify")
    again = certify(load_world(path))
    assert again == first and calls.calls == 0
    assert certify(load_world(path, cache=False)) == first and calls.calls == 1  # not compiled with the cache
    folder = certify_folder(str(worlds))
    assert folder["certified"] == 2 and not folder["problems"]
    calls_before = calls.calls
    assert certify_folder(str(worlds)) == folder and calls.calls == calls_before
    assert certify_folder(str(worlds), cache=False) == folder and calls.calls == calls_before + 1


def rewrite(path, edit) -> None:
    head, _, body = path.read_bytes().partition(b"\n")
    head, body = edit(json.loads(head), body)
    path.write_bytes(json.dumps(head).encode() + b"\n" + body)


def test_a_cache_of_another_version_is_ignored_and_rebuilt(worlds, cache, monkeypatch):
    path = str(worlds / "box.world")
    want = behaviour(load_world(path, cache=False))
    load_world(path)
    [f] = cache_files(cache)
    rewrite(f, lambda h, b: ({**h, "worldspec": "0.0.1"}, b))
    answers = Counter(monkeypatch, box_spec, "answer_of_test")
    assert behaviour(load_world(path)) == want
    assert answers.calls == 3  # recomputed
    assert json.loads(f.read_bytes().partition(b"\n")[0])["worldspec"] == worldspec.__version__  # rebuilt
    for field, other in (("format", worldcache.FORMAT + 1), ("compiler", "0" * 64), ("key", "0" * 64)):
        rewrite(f, lambda h, b: ({**h, field: other}, b))
        assert behaviour(load_world(path)) == want
    assert answers.calls == 12
    # another version of worldspec has another fingerprint, hence another folder: nothing is shared
    monkeypatch.setattr(worldspec, "__version__", "99.0")
    worldcache.code_fingerprint.cache_clear()
    try:
        assert worldcache.folder() != str(f.parent)
        assert behaviour(load_world(path)) == want and answers.calls == 15
    finally:
        monkeypatch.undo()
        worldcache.code_fingerprint.cache_clear()


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage", "body_altered", "bad_record", "deep",
                                    "not_a_map", "directory"])
def test_a_corrupted_cache_file_is_ignored_and_rebuilt(damage, worlds, cache, monkeypatch):
    path = str(worlds / "game.world" if damage == "bad_record" else worlds / "box.world")
    want = behaviour(load_world(path, cache=False))
    load_world(path)
    [f] = cache_files(cache)
    data = f.read_bytes()
    if damage == "empty":
        f.write_bytes(b"")
    elif damage == "truncated":
        f.write_bytes(data[: len(data) * 2 // 3])
    elif damage == "garbage":
        f.write_bytes(b"\x00\xff not json \xc3")
    elif damage == "body_altered":  # still JSON, but not what the header's checksum says
        f.write_bytes(data.replace(b'"answer:t1":', b'"answer:t1":[7,'))
    elif damage == "bad_record":  # a well-formed file whose records are not optima: each is recomputed
        rewrite(f, lambda h, b: (h, b))
        head, _, body = f.read_bytes().partition(b"\n")
        records = {k: {"value": "x"} for k in json.loads(body)}
        body = json.dumps(records).encode()
        head = {**json.loads(head), "sha256": hashlib.sha256(body).hexdigest()}
        f.write_bytes(json.dumps(head).encode() + b"\n" + body)
    elif damage == "deep":
        f.write_bytes(data.partition(b"\n")[0] + b"\n" + b"[" * 100_000)
    elif damage == "not_a_map":
        f.write_bytes(b"[]\n[]")
    else:
        f.unlink()
        f.mkdir()
    assert behaviour(load_world(path)) == want  # no error: recomputed
    if damage != "directory":
        assert worldcache.read(f.stem)  # and written afresh, whole
        assert behaviour(load_world(path)) == want


def test_record_decoders_refuse_what_encoders_never_write():
    for v in [None, True, 0, -3, 2 ** 200, 1.5, -0.0, float("inf"), "", "x" * 50, [1, [2.0, "a"]],
              {"a": 1, 2: [3], 1.5: {"b": None}}]:
        back = decode_value(json.loads(json.dumps(encode_value(v))))
        assert back == v and type(back) is type(v)
        assert repr(back) == repr(v)
    nan = decode_value(encode_value(float("nan")))
    assert nan != nan
    with pytest.raises(Uncacheable):
        encode_value(lambda: 0)
    for bad in [{"f": "1.0000000000000000001"}, {"f": "inf!"}, {"m": [[1]]}, {"m": [[[1], 2]]}, {"x": 1},
                2 ** 300, {"f": 1.0}, {"m": [[1, 2], [1, 3]]}]:
        with pytest.raises(ValueError):
            decode_value(bad)
    opt = engine.Optimum(3, ("a", "b"), True, 4, True, None)
    j = encode_optimum(opt)
    assert decode_optimum(j, ("a", "b"), 2, lambda: None) == opt
    for bad in [{**j, "plan": ["a", "c"]}, {**j, "plan": ["a"]}, {**j, "value": True}, {**j, "states": -1},
                {k: v for k, v in j.items() if k != "exact"}, {**j, "float": False, "value": 3.5}]:
        with pytest.raises(ValueError):
            decode_optimum(bad, ("a", "b"), 2, lambda: None)


def test_editing_the_world_or_an_included_file_changes_the_key(worlds, cache):
    box = worlds / "box.world"
    first = load_world(str(box))
    assert len(cache_files(cache)) == 1
    (worlds / "_parts.world").write_text(PARTS.replace("2 * x", "3 * x"))
    edited = load_world(str(box))
    assert len(cache_files(cache)) == 2
    assert [t.expected for t in edited.tests] != [t.expected for t in first.tests]
    assert edited.tests[0].expected == load_world(str(box), cache=False).tests[0].expected
    box.write_text(BOX.replace("test 17", "test 18"))
    assert load_world(str(box)).tests[1].expected == load_world(str(box), cache=False).tests[1].expected
    assert len(cache_files(cache)) == 3
    box.write_text(BOX.replace("test 17", "test 18") + "# a comment changes nothing the compiler sees\n")
    load_world(str(box))
    assert len(cache_files(cache)) == 3


def test_no_cache_bypasses_it(worlds, cache, monkeypatch):
    monkeypatch.setenv(worldcache.ENV_DISABLE, "1")
    w = load_world(str(worlds / "box.world"))
    certify(w)
    certify_folder(str(worlds))
    assert cache_files(cache) == []
    monkeypatch.setenv(worldcache.ENV_DISABLE, "0")  # 0 or empty: the cache is on
    load_world(str(worlds / "box.world"))
    assert len(cache_files(cache)) == 1


def test_the_no_cache_option_bypasses_it(worlds, cache, monkeypatch):
    monkeypatch.setenv(worldcache.ENV_DISABLE, "")  # restored after the test: the option sets it
    result = CliRunner().invoke(cli_main, ["manual", "--no-cache", str(worlds / "box.world")])
    assert result.exit_code == 0, result.output
    assert "doubles n" in result.output
    assert cache_files(cache) == [] and os.environ[worldcache.ENV_DISABLE] == "1"
    monkeypatch.setenv(worldcache.ENV_DISABLE, "")
    result = CliRunner().invoke(cli_main, ["list", "--compile", "--no-cache", str(worlds)])
    assert result.exit_code == 0 and cache_files(cache) == []
    monkeypatch.setenv(worldcache.ENV_DISABLE, "")
    assert CliRunner().invoke(cli_main, ["manual", str(worlds / "box.world")]).exit_code == 0
    assert len(cache_files(cache)) == 1


def test_the_cache_lives_under_the_user_cache_dir(tmp_path, monkeypatch):
    monkeypatch.delenv(worldcache.ENV_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert worldcache.cache_root() == str(tmp_path / "xdg" / "worldspec" / "worlds")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: only absolute paths count
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert worldcache.cache_root() == str(tmp_path / "home" / ".cache" / "worldspec" / "worlds")


def test_an_unwritable_cache_is_no_error(worlds, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(worldcache.ENV_DIR, str(blocker / "cache"))
    monkeypatch.delenv(worldcache.ENV_DISABLE, raising=False)
    w = load_world(str(worlds / "box.world"))
    assert certify(w) == load_world(str(worlds / "box.world"), cache=False).certify()


def test_concurrent_writers_leave_one_whole_file(worlds, cache):
    load_world(str(worlds / "box.world"))
    [f] = cache_files(cache)
    key, records = f.stem, worldcache.read(f.stem)
    threads = [threading.Thread(target=worldcache.write, args=(key, {**records, "extra": i})) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    back = worldcache.read(key)
    assert back.pop("extra") in range(8) and back == records
    assert [p.name for p in f.parent.iterdir()] == [f.name]  # no temporary file left behind


def test_old_compilers_folders_are_pruned(cache, worlds):
    stale, recent = cache / ("a" * 16), cache / ("b" * 16)
    for d in (stale, recent):
        d.mkdir(parents=True)
        (d / "x.json").write_text("{}")
    os.utime(stale, (0, 0))
    mine = cache / "not-ours"
    mine.mkdir()
    os.utime(mine, (0, 0))
    load_world(str(worlds / "box.world"))
    assert not stale.exists() and recent.exists() and mine.exists()


def test_run_has_no_world_cache_and_its_workers_obey_it(worlds, cache, tmp_path, monkeypatch):
    monkeypatch.setenv(worldcache.ENV_DISABLE, "")  # restored after the test: the option sets it
    out = tmp_path / "run"
    result = CliRunner().invoke(cli_main, ["run", str(worlds / "box.world"), "--no-world-cache", "--agent", "oracle",
                                           "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert (out / "summary.json").exists()
    assert cache_files(cache) == []  # neither this process nor the sandbox's workers wrote the cache
