"""What a file, a model or a server sends cannot destroy data, leak a secret, or crash (issue 30).

Each test feeds one hostile input of the issue to the real command and asserts the clear refusal
(exit 2) or the bounded answer that replaced the crash, the leak or the unbounded read.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from worldspec.cli import EXIT_INPUT, main
from worldspec.compiler import load_world, resolve_world_path
from worldspec.gym import WorldEnv
from worldspec.runner import metrics, view
from worldspec.runner.log import read_events
from worldspec.runner.models import ToolCall, _cut_arguments
from worldspec.runner.protocols.trajectory import Trajectory
from worldspec.runner.view import PAGE_BUDGET, call_text

DEMO = open(resolve_world_path("demo"), encoding="utf-8").read()
CANARY = "OPENAI_API_KEY=sk-canary-0123456789"
DEEP = "[" * 100_000  # json.loads recurses once a level: RecursionError on the old readers


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


run_cmd = run


# ---------------------------------------------------------------- 3: author's drafts and the files beside --out


def test_a_draft_cannot_include_a_file_beside_out_and_its_line_never_reaches_the_model(fake_openai, tmp_path):
    home = tmp_path / "worlds"
    home.mkdir()
    (home / "secrets.world").write_text(CANARY + "\n")
    draft = DEMO.replace('rule R1 "', 'include "secrets.world"\n\nrule R1 "', 1)
    fake_openai.responder = lambda body: {"content": f"```world\n{draft}```\n", "usage": (10, 10)}
    out = home / "mine.world"
    r = run("author", "a world", "--model", "openai/fake", "--api-base", fake_openai.base_url, "--out", str(out),
            "--no-cache", "--max-retries", "1", "--max-rounds", "2", "--extra", "0")
    assert r.exit_code == 1, r.output
    second = json.dumps(fake_openai.requests[1])
    assert "secrets.world" in second  # the model is told its include failed ...
    assert "sk-canary" not in second and "sk-canary" not in r.output  # ... and never sees the file's text
    transcript = home / "mine.world.author"
    assert not any("sk-canary" in p.read_text(errors="replace") for p in transcript.iterdir() if p.is_file())


def test_a_file_of_a_named_include_dir_is_includable_but_its_lines_are_not_quoted(fake_openai, tmp_path):
    home = tmp_path / "worlds"
    (home / "parts").mkdir(parents=True)
    (home / "parts" / "bad.world").write_text(CANARY + "\n")  # the user's own file, broken
    draft = DEMO.replace('rule R1 "', 'include "parts/bad.world"\n\nrule R1 "', 1)
    fake_openai.responder = lambda body: {"content": f"```world\n{draft}```\n", "usage": (10, 10)}
    out = home / "mine.world"
    r = run("author", "a world", "--model", "openai/fake", "--api-base", fake_openai.base_url, "--out", str(out),
            "--no-cache", "--max-retries", "1", "--max-rounds", "2", "--extra", "0",
            "--include-dir", str(home / "parts"))
    assert r.exit_code == 1, r.output
    second = json.dumps(fake_openai.requests[1])
    assert "parts/bad.world:1:" in second  # the diagnostic is located in the included file ...
    assert "sk-canary" not in second and "sk-canary" not in r.output  # ... without quoting it


def test_an_include_dir_outside_outs_folder_is_refused(fake_openai, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "worlds").mkdir()
    r = run("author", "a world", "--model", "openai/fake", "--api-base", fake_openai.base_url,
            "--out", str(tmp_path / "worlds" / "mine.world"), "--include-dir", str(tmp_path / "elsewhere"))
    assert r.exit_code == EXIT_INPUT and "is not inside --out's folder" in r.output
    assert not fake_openai.requests


# ---------------------------------------------------------------- 5: deeply nested JSON from outside


def test_deep_tool_arguments_are_text_not_a_recursion_error():
    assert call_text("probe", DEEP) == f"probe({DEEP})"  # view
    messages = [{"role": "assistant", "tool_calls": [{"id": "c1", "function": {"arguments": DEEP}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    assert metrics.tool_exchanges(messages) == []  # the report's information per probe
    session = SimpleNamespace(tool_name="probe", param="program")
    assert Trajectory._program(session, ToolCall("c1", "probe", DEEP)) is None  # the protocol: a malformed call
    assert len(_cut_arguments(DEEP * 2, 100, 200_000)) < 1_000  # the reply cap of models.py


def test_import_of_deeply_nested_json_is_bad_input(tmp_path):
    (tmp_path / "deep.json").write_text(DEEP)
    r = run("import", "math", str(tmp_path / "deep.json"), "--out", str(tmp_path / "o"))
    assert r.exit_code == EXIT_INPUT and "nested more than" in r.output, r.output


# ---------------------------------------------------------------- 7: unbounded reads


@pytest.mark.parametrize("argv", [
    ("import", "math", "/dev/zero"),
    ("import", "situation-puzzles", "/dev/zero"),
    ("author", "--from-file", "/dev/zero", "--model", "x"),
    ("author", "a brief", "--doc", "/dev/zero", "--model", "x"),
])
def test_dev_zero_is_refused_by_size(tmp_path, argv):
    r = run(*argv, "--out", str(tmp_path / "o.world"))
    assert r.exit_code == EXIT_INPUT and "is larger than" in r.output, r.output


def test_a_huge_import_file_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(300_000_000)  # sparse: 300 MB on paper, nothing on disk
    r = run("import", "math", str(big), "--out", str(tmp_path / "o"))
    assert r.exit_code == EXIT_INPUT and "(300,000,000 bytes)" in r.output, r.output


def test_an_endless_program_on_stdin_is_refused_at_the_cap():
    r = run("probe", "demo", "-", input="EMIT(1)\n" * 200_000)  # 1.6 MB
    assert r.exit_code == EXIT_INPUT and "standard input is larger than 1,000,000 bytes" in r.output, r.output


# ---------------------------------------------------------------- 11: a world that is a system file


def test_a_world_linked_to_proc_environ_quotes_no_environment(tmp_path, monkeypatch):
    if not os.path.exists("/proc/self/environ"):
        pytest.skip("no /proc")
    monkeypatch.setenv("WORLDSPEC_CANARY", "sk-canary-environ")
    os.symlink("/proc/self/environ", tmp_path / "env.world")
    r = run("check", str(tmp_path / "env.world"))
    assert r.exit_code == EXIT_INPUT and "not a regular file" in r.output, r.output
    assert "sk-canary" not in r.output and "PATH=" not in r.output


# ---------------------------------------------------------------- 4: a rule's value too large to show


BIG_VALUE = DEMO.replace("  hook iterate(xs) = reverse(xs)", "  hook iterate(xs) = range(100000)")


def test_certification_shows_a_value_too_large_to_print_cut_with_its_size(tmp_path):
    assert BIG_VALUE != DEMO
    (tmp_path / "big.world").write_text(BIG_VALUE)
    r = run("check", str(tmp_path / "big.world"))
    assert r.exit_code == 1, r.output  # problems, not an internal error
    assert "the rule gives [0, 1, 2, 3," in r.output and "... (a list of 100,000 elements, cut)" in r.output


def test_authoring_a_draft_with_a_value_too_large_to_print_is_a_round_not_a_crash(fake_openai, tmp_path):
    fake_openai.responder = lambda body: {"content": f"```world\n{BIG_VALUE}```\n", "usage": (10, 10)}
    out = tmp_path / "mine.world"
    r = run("author", "a world", "--model", "openai/fake", "--api-base", fake_openai.base_url, "--out", str(out),
            "--no-cache", "--max-retries", "1", "--max-rounds", "1", "--extra", "0")
    assert r.exit_code == 1, r.output
    # a draft with no language line is the second edition: its one-task rule is a warning, not a problem
    assert "round 1/1: compiles, 2 certification problems" in r.output
    assert "(a list of 100,000 elements, cut)" in r.output


# ---------------------------------------------------------------- 6: a fan-out of includes


def fan_out(folder, files: int = 8, each: int = 10) -> str:
    """FILES files, each including the next EACH times (7 levels of 10: ten million includes in 7.7 kB)."""
    for level in range(files - 1):
        (folder / f"l{level}.world").write_text('world "L" version 1\n' + f'include "l{level + 1}.world"\n' * each
                                               + "def f(x) = x + 1\n" * 40)
    (folder / f"l{files - 1}.world").write_text('world "L" version 1\n' + "def f(x) = x + 1\n" * 40)
    return str(folder / "l0.world")


def test_a_fan_out_of_includes_is_refused_quickly_naming_the_include_limit(tmp_path):
    path = fan_out(tmp_path)
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) < 8_000
    started = time.process_time()
    r = run("check", path)
    assert time.process_time() - started < 10  # was 38 s of CPU
    assert r.exit_code == EXIT_INPUT, r.output
    assert "reaches more than 256 includes in all" in r.output and "tokens" not in r.output


def test_the_token_limit_of_a_spec_with_includes_names_the_whole_limit(tmp_path):
    (tmp_path / "part.world").write_text('world "P" version 1\nparam P = [' + "1," * 60_000 + "1]\n")
    (tmp_path / "main.world").write_text(DEMO.replace('rule R1 "', 'include "part.world"\ninclude "part.world"\n\n'
                                                                    'rule R1 "', 1))
    r = run("check", str(tmp_path / "main.world"))
    assert r.exit_code == EXIT_INPUT and "the spec with its includes has more than 200,000 tokens" in r.output, r.output


# ---------------------------------------------------------------- 12: view's page, bounded and written whole


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory, run_world):
    out = tmp_path_factory.mktemp("view") / "demo"
    run_world(load_world(resolve_world_path("demo")), [], out, agents=("oracle",), trajectories=1, answers=1)
    return out


def variant(run, tmp_path, edit) -> Path:
    """A copy of RUN whose log's events went through EDIT (a list of events -> a list of events)."""
    out = tmp_path / "run"
    shutil.copytree(run, out)
    log = out / "log.jsonl"
    events = list(read_events(log))  # compact lines (log_version 2) expanded, written back in full (version 1)
    events[0]["log_version"] = 1
    log.write_text("".join(json.dumps(e) + "\n" for e in edit(events)))
    return out


def test_a_20_mb_header_field_is_cut_on_the_page(demo_run, tmp_path):
    def huge_api_base(events):
        events[0]["config"]["api_base"] = "http://" + "x" * 20_000_000
        return events
    run = variant(demo_run, tmp_path, huge_api_base)
    r = run_cmd("view", str(run))
    assert r.exit_code == 0, r.output
    page = (run / "view.html").read_text()
    assert len(page) < 2_000_000 and "more characters)" in page


def test_20000_messages_are_shown_up_to_the_cap_quickly(demo_run, tmp_path):
    def many_messages(events):
        first = next(e for e in events if e["type"] == "message")
        more = [{**first, "id": f"{first['id']}-x{i}", "index": 1000 + i,
                 "message": {"role": "assistant", "content": f"thinking {i} " + "z" * 3000}} for i in range(20_000)]
        return events + more
    run = variant(demo_run, tmp_path, many_messages)
    started = time.monotonic()
    r = run_cmd("view", str(run))
    assert r.exit_code == 0, r.output
    assert time.monotonic() - started < 60  # was 103 s for a 65 MB page
    page = (run / "view.html").read_text()
    assert len(page) < PAGE_BUDGET and "18,0" in page and "more entries: the whole conversation is in log.jsonl" in page


def test_a_page_over_its_budget_puts_trajectories_on_further_pages(demo_run, tmp_path, monkeypatch):
    def second_trajectory(events):
        conv = next(e for e in events if e["type"] == "message")["conv"]
        again = [{**e, "conv": conv[:-1] + "2", "id": e["id"].replace(conv, conv[:-1] + "2")}
                 for e in events if e.get("conv") == conv and e["type"] == "message"]
        return events + again
    run = variant(demo_run, tmp_path, second_trajectory)
    monkeypatch.setattr(view, "PAGE_BUDGET", 1_000)  # every trajectory is larger: one page each
    r = run_cmd("view", str(run), "--out", str(tmp_path / "v.html"))
    assert r.exit_code == 0, r.output
    pages = sorted(p.name for p in tmp_path.glob("v*.html"))
    assert pages == ["v-2.html", "v.html"]
    data = json.loads(re.search(r'id="data">(.*?)</script>', (tmp_path / "v-2.html").read_text(), re.S)[1])
    assert data["page"] == 2 and data["links"] == ["v.html", "v-2.html"] and len(data["trajectories"]) == 1


FULL_DISK = """
import resource, signal, sys
from worldspec.cli import main
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
main(["view", sys.argv[1]])
"""


def test_view_on_a_full_disk_names_the_file_and_keeps_the_old_page(demo_run, tmp_path):
    run = variant(demo_run, tmp_path, lambda events: events)
    (run / "view.html").write_text("the page of yesterday")
    r = subprocess.run([sys.executable, "-c", FULL_DISK, str(run)], capture_output=True, text=True, timeout=300)
    assert r.returncode == EXIT_INPUT, r.stderr
    assert f"cannot write {run / 'view.html'}: File too large" in r.stderr
    assert (run / "view.html").read_text() == "the page of yesterday"
    assert sorted(p.name for p in run.iterdir() if "view" in p.name) == ["view.html"]  # no temporary left


# ---------------------------------------------------------------- 10: the Gymnasium environment


NO_MAIN_GUARD = """
from worldspec.gym import WorldEnv
print("THE SCRIPT RUNS", flush=True)
env = WorldEnv("demo")
obs, info = env.reset(seed=0)
while info["phase"] == "answer":
    obs, reward, done, _, info = env.step("```\\nx\\n```")
obs, reward, done, _, info = env.step("EMIT(1)")
print("FEEDBACK", obs.strip(), info["charges"]["calls"], flush=True)
env.close()
"""


def test_a_script_without_a_main_guard_runs_once(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(NO_MAIN_GUARD)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count("THE SCRIPT RUNS") == 1, r.stdout  # was 3: once more in each of two workers
    assert r.stdout.count("FEEDBACK 4 1") == 1


def test_a_str_subclass_action_is_its_text_and_charged_once():
    class Program(str):  # a local class: it cannot be pickled to a worker
        pass

    env = WorldEnv("demo")
    try:
        obs, info = env.reset(seed=0)
        while info["phase"] == "answer":
            obs, _, _, _, info = env.step(Program("```\nx\n```"))
        obs, _, _, _, info = env.step(Program("EMIT(1)"))
        assert obs.strip() == "4" and info["charges"]["calls"] == 1 and info["charge"]["status"] == "ok"
    finally:
        env.close()


# ---------------------------------------------------------------- 7: a server's body of 50 MB


MEASURE = """
import sys
from worldspec.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    code = e.code
peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print("RESULT", code, peak)
"""


def measured(args, timeout: float = 300, **env):
    """(exit status, peak RSS in MB, stderr) of `worldspec ARGS` in a fresh process."""
    r = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, "WORLDSPEC_DEBUG": "", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                            "LITELLM_OFFLINE_MODE": "true", **env})
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, r.stdout[-2000:] + r.stderr[-2000:]
    _, code, peak = line[-1].split()
    return int(code), int(peak) // 1024, r.stdout + r.stderr


def test_a_50_mb_reply_body_is_refused_at_the_byte_cap(fake_openai, tmp_path):
    fake_openai.responder = lambda body: {"content": "x" * 50_000_000, "usage": (10, 10)}
    code, peak, out = measured(["author", "a world", "--model", "openai/fake", "--api-base", fake_openai.base_url,
                                "--out", str(tmp_path / "mine.world"), "--no-cache", "--max-retries", "1",
                                "--max-rounds", "1"], OPENAI_API_KEY="sk-fake")
    assert code == EXIT_INPUT, out[-3000:]
    assert "the server's reply is larger than 32,000,000 bytes" in out
    assert peak < 500, f"peak RSS {peak} MB"  # was 1.82 GB


# ---------------------------------------------------------------- the hostile pass over view, import, author
#
# Every input below goes through the real command in a fresh process, under a deadline, and must end with
# a status of 0, 1, 2 or 4 (never 3, an internal error; never a traceback) within 500 MB of memory.

LONE = "\ud800"
IMPORT_FILES = {
    "deep-list": b"[" * 200_000,
    "deep-object": b'{"a":' * 100_000,
    "not-a-list": b'{"problem": "p"}',
    "not-objects": b"[" + b"1," * 100_000 + b"1]",
    "too-many-entries": b"[" + b'{"problem":"p","solution":"s","exp_ans":"1"},' * 6_000 + b"{}]",
    "huge-field": b'[{"id":"1","title":"t","setup":"' + b"s" * 3_000_000 + b'","solution":"x","problem":"p"}]',
    "not-utf8": b'[{"problem": "\xff\xfe"}]',
    "lone-surrogate": b'[{"id":"1","title":"\\ud800","setup":"a \\ud800","solution":"b c d e f.","problem":"p \\ud800",'
                      b'"exp_ans":"\\ud800"}]',
    "empty": b"",
    "nul-bytes": b"\x00" * 1_000_000,
    "numbers-as-text": b'[{"id":1,"title":2,"setup":3,"solution":4,"problem":5,"exp_ans":6}]',
}


def log_of(events) -> bytes:
    return b"".join(e if isinstance(e, bytes) else json.dumps(e).encode() + b"\n" for e in events)


HEADER = {"type": "header", "id": "header", "log_version": 1, "config": {"protocol": "milestone"}, "world": {}}
VIEW_LOGS = {
    "garbage": [b"\x00\xff" * 100_000 + b"\n"],
    "header-not-a-map": [{"type": "header", "id": "header", "config": [1, 2], "world": "w"}],
    "huge-header": [{**HEADER, "config": {"protocol": "milestone", "api_base": "x" * 20_000_000}}],
    "deep-tool-args": [HEADER, {"type": "message", "id": "m", "conv": "a|b|1", "index": 0,
                                "message": {"role": "assistant", "tool_calls": [
                                    {"function": {"name": "probe", "arguments": "[" * 100_000}}]}}],
    "odd-shapes": [HEADER, {"type": "message", "id": "m", "conv": ["x"], "index": "0", "message": [1]},
                   {"type": "message", "id": "n", "conv": "a", "message": {"tool_calls": "no"}},
                   {"type": "record", "id": "r", "conv": "a", "status": {"x": 1}}],
    "many-messages": [HEADER] + [{"type": "message", "id": f"m{i}", "conv": "a|b|1", "index": i,
                                  "message": {"role": "user", "content": "y" * 2_000}} for i in range(20_000)],
}
AUTHOR_REPLIES = {
    "empty": "",
    "lone-surrogate": f"```world\nworld \"{LONE}\" version 1\n```",
    "include-passwd": '```world\nworld "W" version 1\ninclude "/etc/passwd"\n```',
    "include-sibling": '```world\nworld "W" version 1\ninclude "sibling.world"\n```',
    "deep-brackets": "```world\nworld \"W\" version 1\nparam P = " + "[" * 100_000 + "\n```",
    "five-mb": "```world\n" + "x" * 5_000_000 + "\n```",
}
HOSTILE_PASS = [("import", k) for k in IMPORT_FILES] + [("view", k) for k in VIEW_LOGS] + \
    [("author", k) for k in AUTHOR_REPLIES]


@pytest.mark.parametrize("command,case", HOSTILE_PASS, ids=[f"{c}-{k}" for c, k in HOSTILE_PASS])
def test_hostile_pass(command, case, tmp_path, fake_openai):
    if command == "import":
        data = tmp_path / "data.json"
        data.write_bytes(IMPORT_FILES[case])
        args = ["import", "situation-puzzles" if "title" in IMPORT_FILES[case].decode("latin-1") else "math",
                str(data), "--out", str(tmp_path / "out")]
    elif command == "view":
        run = tmp_path / "run"
        run.mkdir()
        (run / "log.jsonl").write_bytes(log_of(VIEW_LOGS[case]))
        args = ["view", str(run)]
    else:
        home = tmp_path / "worlds"
        home.mkdir()
        (home / "sibling.world").write_text(CANARY + "\n")
        (tmp_path / "sibling.world").write_text(CANARY + "\n")
        reply = AUTHOR_REPLIES[case]
        fake_openai.responder = lambda body: {"content": reply, "usage": (10, 10)}
        args = ["author", "a world", "--model", "openai/fake", "--api-base", fake_openai.base_url, "--out",
                str(home / "mine.world"), "--no-cache", "--max-retries", "1", "--max-rounds", "1", "--extra", "0"]
    code, peak, out = measured(args, timeout=240, OPENAI_API_KEY="sk-fake")
    assert code in (0, 1, 2, 4), out[-3000:]
    assert "Traceback" not in out and "internal error" not in out, out[-3000:]
    assert peak < 500, f"peak RSS {peak} MB"
    assert "sk-canary" not in out and "sk-canary" not in json.dumps(fake_openai.requests)
