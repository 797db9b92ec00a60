"""The `worldspec` command line: list, check, manual, probe, play, --version, --help."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from worldspec.cli import main

WORLDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")
from worldspec.compiler import load_world, worldcache
from worldspec.compiler.suite import certify_folder
from worldspec.play import Session
from worldspec.runner import sandbox

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "worlds", "demo.world")


def cli(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input)


# ---------------------------------------------------------------- version and help


def test_version():
    r = cli("--version")
    assert r.exit_code == 0
    assert re.fullmatch(r"worldspec, version \d+\.\d+\.\d+\n", r.output)


def test_top_level_help_lists_the_commands_with_examples():
    r = cli("--help")
    assert r.exit_code == 0
    for name in ("list", "check", "manual", "probe", "play"):
        assert re.search(rf"^\s+{name}\s", r.output, re.M), name
    assert 'worldspec probe demo "EMIT(100)"' in r.output


@pytest.mark.parametrize("command", ["list", "check", "manual", "probe"])
def test_each_command_help_teaches_with_an_example(command):
    r = cli(command, "--help")
    assert r.exit_code == 0
    assert "Example" in r.output
    assert f"worldspec {command}" in r.output.split("Example", 1)[1]


def test_play_help_teaches_with_an_example():
    r = cli("play", "--help")
    assert "Example" in r.output and "worldspec play demo" in r.output


def test_help_short_option():
    assert cli("probe", "-h").output == cli("probe", "--help").output


# ---------------------------------------------------------------- list


def test_list_bundled_worlds():
    r = cli("list")
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "demo.world" in x)
    assert "Demo (program). A tiny calculation language" in line
    box = next(x for x in r.output.splitlines() if "cii-e-bubble-sort.world" in x and "oracle/" in x)
    assert "(blackbox) CII/easy." in box


def test_list_reads_headers_only(tmp_path, monkeypatch):
    """`list` compiles nothing: a world whose body does not compile is listed from its header."""
    (tmp_path / "w.world").write_text('world "Broken \\"body\\"" version 1\nkind program\n'
                                      'summary "A summary."\nbase { this is not a spec }\n')
    (tmp_path / "x.world").write_text("# no header here\nkind program\n")
    import worldspec.cli as cli_module
    monkeypatch.setattr(cli_module, "load_world", lambda *a, **k: pytest.fail("list compiled a world"))
    r = cli("list", str(tmp_path))
    assert r.exit_code == 0, r.output
    assert 'w.world: Broken "body" (program). A summary.' in r.output
    assert "x.world: not a world" in r.output


def test_list_compile_adds_counts_and_compile_errors(tmp_path):
    shutil.copy(DEMO, tmp_path / "a.world")
    (tmp_path / "b.world").write_text('world "B" version 1\nkind program\nbase { nope }\n')
    r = cli("list", str(tmp_path), "--compile")
    assert r.exit_code == 0, r.output
    assert "Demo (program) - 5 rules, 1 herring, 7 tasks." in r.output
    assert "b.world: does not compile:" in r.output


def test_list_a_folder(tmp_path):
    shutil.copy(DEMO, tmp_path / "a.world")
    (tmp_path / "sub").mkdir()
    shutil.copy(DEMO, tmp_path / "sub" / "b.world")
    (tmp_path / "notes.txt").write_text("not a world")
    r = cli("list", str(tmp_path))
    assert r.exit_code == 0
    assert r.output.count("Demo (program)") == 2 and "notes" not in r.output


def test_list_an_empty_folder(tmp_path):
    r = cli("list", str(tmp_path))
    assert r.exit_code == 0 and "no .world files" in r.output


# ---------------------------------------------------------------- check


def test_check_text():
    r = cli("check", DEMO)
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert out.startswith("Demo (kind program, language 2, seed 2026): 5 rules, 1 herring, 7 tasks, 5 examples\n")
    assert "params: K=3, ZERO=-3" in out
    assert "recall-only score (naive answers in the true world): 14.3%" in out
    for rid in ("R1", "R2", "R3", "R4", "R5"):
        assert re.search(rf"^\s+ok\s+{rid}\s", out, re.M), rid
    assert re.search(r"^\s+ok\s+H1\s+herring on op SHATTER", out, re.M)
    assert out.rstrip().endswith("certified: no problems")


def test_check_json_is_one_object():
    r = cli("check", "demo", "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert {"world", "kind", "seed", "rules", "herrings", "tasks", "examples", "recall_only",
            "problems"} <= set(data)
    assert data["problems"] == [] and data["rules"] and data["herrings"] and data["tasks"]


def test_check_a_folder(tmp_path):
    shutil.copy(DEMO, tmp_path / "demo.world")
    r = cli("check", str(tmp_path))
    assert r.exit_code == 0, r.output
    assert "1 of 1 worlds certified" in r.output
    (tmp_path / "broken.world").write_text('world "B" version 1\nkind program\nbase {\n')
    r = cli("check", str(tmp_path), "--json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["worlds"] == 2 and data["certified"] == 1
    assert any("broken.world" in p and "does not compile" in p for p in data["problems"])


def test_check_a_folder_side_by_side_reports_what_one_worker_does(tmp_path, monkeypatch):
    """Issue 27: `check FOLDER --jobs 2` certifies its worlds in two workers; the report (entries, counts,
    problems in file order, a world that does not compile, the cross-box checks) is --jobs 1's and the
    in-process certify_folder's."""
    oracle = os.path.join(ROOT, "worlds", "oracle", "circuit")
    for name in ("cri-e-consequece", "cri-e-swap", "cri-h-and-tree", "cri-h-compare"):
        shutil.copy(os.path.join(oracle, f"{name}.world"), tmp_path / f"{name}.world")
    shutil.copy(DEMO, tmp_path / "demo.world")
    (tmp_path / "broken.world").write_text('world "B" version 1\nkind program\nbase {\n')
    monkeypatch.setenv(worldcache.ENV_DISABLE, "")  # restored after the test: --no-cache sets it
    workers = sandbox.shared().workers
    one = cli("check", str(tmp_path), "--json", "--no-cache", "--jobs", "1")
    two = cli("check", str(tmp_path), "--json", "--no-cache", "--jobs", "2")
    assert one.exit_code == two.exit_code == 1, two.output
    assert one.stdout == two.stdout
    data = json.loads(two.stdout)
    assert data == certify_folder(str(tmp_path), cache=False)
    assert [os.path.basename(e["file"]) for e in data["entries"]] == [
        "cri-e-consequece.world", "cri-e-swap.world", "cri-h-and-tree.world", "cri-h-compare.world", "demo.world"]
    assert data["worlds"] == 6 and data["certified"] == 5 and data["counts"]["family_difficulty"] == {
        "CRI/easy": 2, "CRI/hard": 2}
    assert "broken.world" in data["problems"][0] and "does not compile" in data["problems"][0]
    assert "--jobs" in cli("check", "--help").output
    sandbox.shared().resize(workers)  # as the tests after this one expect it


def test_check_unknown_world():
    r = cli("check", "no-such-world")
    assert r.exit_code == 2 and "no world file 'no-such-world'" in r.output
    assert "Traceback" not in r.output


# ---------------------------------------------------------------- manual


def test_manual_prints_the_worlds_manual(demo):
    r = cli("manual", "demo")
    assert r.exit_code == 0
    assert r.stdout == demo.manual


def test_manual_with_examples(demo):
    r = cli("manual", DEMO, "--examples")
    assert r.exit_code == 0
    assert r.stdout.startswith(demo.manual)
    assert "## Worked examples" in r.stdout
    assert "### E1 (apply): Print the integer constant 7.\n```\nEMIT(7)\n```\nOutput:\n```\n10\n```" in r.stdout


def test_manual_with_a_seed_changes_only_parameterised_text():
    a = cli("manual", "demo", "--seed", "5", "--examples").stdout
    b = cli("manual", "demo", "--examples").stdout
    assert a != b  # the examples' outputs follow K
    assert a.split("## Worked examples")[0] == b.split("## Worked examples")[0]


# ---------------------------------------------------------------- probe


@pytest.mark.parametrize("program,feedback,units,status", [
    ("EMIT(100)", "103", 1, "ok"),
    ("EMIT(1, 2)", "4 5", 2, "ok"),
    ("SWEEP v IN STRAND(1, 2):\n    EMIT(v)", "5\n4", 3, "ok"),
    ("SET x AS 1", "(no output)", 0, "ok"),
    ("EMIT(PLUCK(STRAND(), 1))", "error: line 1: index out of range", 1, "error"),
    ("EMIT(", None, 0, "parse_error"),
    ("EMIT(1, 2, 3, 4, 5, 6)", "rejected: this program costs 6 probe units; the limit is 5 per call. "
                               "Nothing was run.", 0, "rejected"),
])
def test_probe_stdout_is_exactly_the_feedback(demo, program, feedback, units, status):
    r = cli("probe", "demo", program)
    assert r.exit_code == 0
    fb = demo.probe(program)
    assert fb.status == status and fb.units == units
    if feedback is not None:
        assert fb.text == feedback
    assert r.stdout == fb.text + "\n"
    unit_word = "unit" if units == 1 else "units"
    assert r.stderr == f"[{units} probe {unit_word} charged of 5; {status}]\n"


def test_probe_reads_standard_input():
    r = cli("probe", DEMO, "-", input="SWEEP v IN STRAND(1, 2):\n    EMIT(v)\n")
    assert r.exit_code == 0
    assert r.stdout == "5\n4\n"
    assert "[3 probe units charged of 5; ok]" in r.stderr


def test_probe_with_a_seed():
    r = cli("probe", "demo", "EMIT(0)", "--seed", "5")
    assert r.exit_code == 0 and r.stdout == "2\n"


def test_probe_with_random_bytes_never_fails():
    r = CliRunner().invoke(main, ["probe", "demo", "-"], input=bytes(range(1, 256)).decode("latin-1"))
    assert r.exit_code == 0 and "Traceback" not in r.output
    assert "parse_error" in r.stderr


def test_probe_through_the_console_script():
    exe = shutil.which("worldspec")
    cmd = [exe] if exe else [sys.executable, "-c", "from worldspec.cli import main; main()"]
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_OFFLINE_MODE="true")
    p = subprocess.run(cmd + ["probe", DEMO, "-"], input="EMIT(7)\n", capture_output=True, text=True,
                       timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "10\n"
    assert p.stderr.strip() == "[1 probe unit charged of 5; ok]"


# ---------------------------------------------------------------- play


PLAY_INPUT = "\n".join([
    ":help",
    "EMIT(5)",
    "SWEEP v IN STRAND(1, 2):",
    "    EMIT(v)",
    "",
    "EMIT(1, 2, 3, 4, 5, 6)",
    ":budget",
    ":tasks",
    ":task T2",
    ":task T99",
    ":answer T2",
    "EMIT(SHATTER(a, b))",
    ".",
    ":answer T1",
    "EMIT(PLUCK(xs, 0))",
    ".",
    ":answer T7",
    "20",
    ".",
    ":answer T7",
    "Here it is:",
    "```text",
    "20",
    "```",
    ".",
    ":answer T99",
    ":examples",
    ":frobnicate",
    ":quit",
    "EMIT(999)",
]) + "\n"


def test_play_session_driven_with_input():
    r = cli("play", "demo", input=PLAY_INPUT)
    assert r.exit_code == 0, r.output
    out = r.output
    assert out.startswith("Demo: A tiny calculation language whose manual is wrong in five places.\n")
    assert "Budget: 48 calls, 5 probe units per call. Type :help for commands." in out
    assert ":answer ID" in out  # the help text
    assert "8\n[1 units; 1/48 calls used]" in out
    assert "5\n4\n[3 units; 2/48 calls used]" in out
    assert "rejected: this program costs 6 probe units" in out
    assert "[0 units; 2/48 calls used; not charged]" in out  # a rejected probe is not a call
    assert "2 of 48 calls, 4 probe units used" in out
    assert re.search(r"^T4\s+scope\s+Define diff\(a, b\) that returns a minus b\.", out, re.M)
    assert "Write a complete program. Before it runs, these variables are already set" in out
    assert "no task T99; :tasks lists them" in out
    assert "PASS: 5/5 cases" in out and "FAIL: 0/5 cases" in out and "PASS: exact output" in out
    assert out.count("PASS: exact output") == 2  # a fenced answer with a language tag reads as a model's does
    assert "E4 (engineer) Print every element of a list." in out
    assert "unknown command :frobnicate; type :help" in out
    assert "1002" not in out  # nothing runs after :quit
    assert "Traceback" not in out


def test_play_ends_cleanly_at_end_of_input():
    r = cli("play", "demo", input="EMIT(1)\n")
    assert r.exit_code == 0 and "4\n[1 units; 1/48 calls used]" in r.output


def test_play_manual_command(demo):
    r = cli("play", "demo", input=":manual\n:quit\n")
    assert demo.manual.strip() in r.output


def test_play_session_stops_probing_when_the_budget_is_spent():
    out = []
    session = Session(load_world(DEMO), reader=iter(()).__next__, writer=out.append)
    session.calls = session.world.budget.max_calls
    assert session.handle("EMIT(1)")
    assert out == ["the exploration budget is spent; you can still :answer tasks"]
    out.clear()
    lines = iter(["EMIT(PLUCK(xs, GAUGE(STRAND(0))))", "."])
    session.read = lambda prompt: next(lines)
    session.handle(":answer T1")
    assert out[-1] == "PASS: 5/5 cases"


def test_play_session_is_not_fooled_by_blank_lines_and_eof():
    lines = iter(["", "   ", "SWEEP v IN STRAND(1):", "    EMIT(v)"])
    out = []

    def read(prompt):
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None
    Session(load_world(DEMO), reader=read, writer=out.append).loop()
    # the unfinished block runs when the input ends
    assert "4" in out


@pytest.mark.parametrize("world,probe", [
    ("alienlogic", "1. P & Q    premise:\n2. P        r17 1\n"),
    (os.path.join(WORLDS, "oracle-extra", "cii-e01-running-maximum.world"), "[1, 2]"),
    (os.path.join(WORLDS, "interactive", "trust.world"), "COOPERATE"),
])
def test_play_serves_every_world_kind(world, probe):
    session = f":tasks\n{probe}\n:budget\n:quit\n"
    res = CliRunner().invoke(main, ["play", world], input=session)
    assert res.exit_code == 0, res.output
    assert "internal error" not in res.output and "1 of" in res.output


def test_a_probe_may_start_with_a_minus_sign():
    """`worldspec probe BOX -2.5` is the probe -2.5, not an unknown option (no `--` needed)."""
    box = os.path.join(os.path.dirname(__file__), "..", "worlds", "oracle", "physics",
                       "psi-e-freefall-infheight.world")
    r = CliRunner().invoke(main, ["probe", box, "-2.5"])
    plain = CliRunner().invoke(main, ["probe", box, "--", "-2.5"])
    assert r.exit_code == 0 and r.output == plain.output and "object1" in r.output, r.output
    assert CliRunner().invoke(main, ["probe", box, "3", "--seed", "4"]).exit_code == 0


def test_play_keeps_a_boxs_memory_as_one_session():
    # running-total.world: each output is 2x + the previous output; play probed a fresh box each time
    path = os.path.join(os.path.dirname(__file__), "worlds", "oracle", "running-total.world")
    r = cli("play", path, input="5\n1\n3\n:budget\n:explore after_two\n5\n")
    assert r.exit_code == 0, r.output
    assert "> 10\n[1 units; 1/6 calls used]" in r.output and "> 12\n[1 units; 2/6 calls used]" in r.output
    assert "> 18\n[1 units; 3/6 calls used]" in r.output and "3 of 6 calls" in r.output
    assert "a fresh exploration session for after_two" in r.output and "> 10\n[1 units; 4/6 calls used]" in r.output


def test_play_plays_a_round_by_round_game_move_by_move():
    path = os.path.join(os.path.dirname(__file__), "worlds", "oracle", "bullets.world")
    r = cli("play", path, input="load\nscout\nload\n:budget\n")
    assert r.exit_code == 0, r.output
    assert r.output.count("A new game of") == 1  # one game goes on: every move used to start a new one
    assert "Round 3" in r.output or "round 3" in r.output, r.output


def test_play_opens_a_block_on_a_line_its_syntax_leaves_unfinished(tmp_path):
    # a world whose while loop reads `AWAIT cond DO` (no colon): its first line alone is unfinished
    text = open(os.path.join(os.path.dirname(__file__), "..", "worlds", "demo.world"), encoding="utf-8").read()
    text = text.replace('while    "AWAIT {expr}:"', 'while    "AWAIT {expr} DO"').replace(
        "AWAIT BELOW(i, n):", "AWAIT BELOW(i, n) DO")
    path = tmp_path / "do.world"
    path.write_text(text, encoding="utf-8")
    r = cli("play", str(path), input="AWAIT BELOW(1, 0) DO\n    EMIT(1)\nEMIT(7)\n\n:budget\n")
    assert r.exit_code == 0, r.output
    assert "this line opens a block: nothing ran and nothing is charged" in r.output
    assert " 10\n[4 units; 1/48" in r.output and "1 of 48 calls" in r.output  # one call: the whole block (7 reads 10 here)
    assert "error" not in r.output.split("opens a block")[-1]


def test_play_says_which_tests_target_a_goal_box_explores():
    path = os.path.join(os.path.dirname(__file__), "worlds", "oracle", "six-words.world")
    r = cli("play", path, input="CRANE\n:explore goal2\n:budget\n")
    assert r.exit_code == 0, r.output
    assert "(this session explores test goal1; :explore ID explores another)" in r.output
    assert "a fresh exploration session for goal2, with its own 6 calls" in r.output
    assert "explores test goal2" in r.output and "0 of 6 calls" in r.output  # each test: its own turns


def test_help_lists_the_lazy_commands_without_importing_them():
    """`worldspec --help` names every command with its docstring's first paragraph, and loads no runner module."""
    code = ("import sys\nfrom worldspec.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('LOADED', sorted(m for m in sys.modules if m.startswith(('worldspec.runner.cli', 'worldspec.play',"
            " 'matplotlib', 'pokerkit', 'litellm'))))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "LOADED []" in p.stdout, p.stdout[-500:]
    import click
    from worldspec.cli import main as group
    ctx = click.Context(group)
    for name, short in group.SHORT_HELP.items():
        first = " ".join(group.get_command(ctx, name).help.split("\n\n")[0].split())
        assert short == first, name
        assert name in p.stdout


def test_list_headers_agree_with_the_parser_on_every_bundled_world():
    """What `list` reads from header lines is what the parser reads (name, kind, summary), world by world."""
    from worldspec.compiler.suite import world_files
    from worldspec.headers import read_header
    from worldspec.parser import load_spec
    root = os.path.dirname(DEMO)
    for path in world_files(root) + world_files(os.path.join(os.path.dirname(__file__), "worlds")):
        head, spec = read_header(path), load_spec(path)
        assert (head.name, head.kind, head.summary) == (spec.name, spec.kind, spec.summary), path


def test_check_json_prints_the_diagnostics_of_a_spec_that_does_not_compile(tmp_path):
    """Issue 31 item 7 / issue 24: `check --json` on a spec error prints JSON on stdout (it printed nothing), exit 2."""
    bad = tmp_path / "b.world"
    bad.write_text('world "W" version 1\nkind program\nbase { nope }\n')
    r = CliRunner().invoke(main, ["check", str(bad), "--json"])
    assert r.exit_code == 2
    out = json.loads(r.stdout)
    assert out["compiles"] is False
    (d,) = out["diagnostics"]
    assert (d["file"], d["line"], d["col"], d["severity"]) == (str(bad), 3, 8, "error")
    assert "nope" in d["message"] and "^" in d["text"]


def test_play_blocks_and_answers_end_alike_and_a_command_inside_is_not_typed_text():
    """Issue 31 item 8: a block and an answer end at an empty line or '.'; `:quit` inside one is a command."""
    def reader(items):
        it = iter(items)
        def read(prompt):
            try:
                return next(it)
            except StopIteration:
                raise EOFError from None
        return read
    out = []
    Session(load_world(DEMO), reader=reader([":answer T1", "EMIT(1)", ":quit", "EMIT(5)"]), writer=out.append).loop()
    text = "\n".join(out)
    assert load_world(DEMO).task("T1").prompt in text  # :answer repeats the task
    assert "before :quit is dropped" in text and "PASS" not in text and "FAIL" not in text
    assert not any(x.startswith("[") for x in out)  # EMIT(5) after :quit never ran
    out.clear()
    script = [":block", "EMIT(1)", "EMIT(2)", ".", ":answer T4", "```", "nonsense", "```", "."]
    Session(load_world(DEMO), reader=reader(script), writer=out.append).loop()
    text = "\n".join(out)
    assert "[2 units; 1/48 calls used]" in text and "FAIL" in text


def test_check_a_folder_says_each_world_off_a_terminal_and_a_timeout_names_where_it_was(tmp_path):
    """Issue 29/31: `check FOLDER` was silent for 30 minutes under load, then blamed the spec."""
    for name in ("a", "b"):
        shutil.copy(DEMO, tmp_path / f"{name}.world")
    r = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "[1/2] certifying Demo" in r.stderr and "[2/2] certifying Demo" in r.stderr
    assert "[2/2] compiling b.world" in r.stderr
    assert "2 of 2 worlds certified" in r.stdout
    slow = CliRunner().invoke(main, ["check", str(tmp_path), "--timeout", "0.01"])
    assert slow.exit_code == 1
    assert "the machine may be slow" in slow.stdout and "--timeout" in slow.stdout


def test_python_dash_m_worldspec_is_the_command(tmp_path):
    r = subprocess.run([sys.executable, "-m", "worldspec", "list"], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "AlienCode (program)" in r.stdout and "Traceback" not in r.stderr
    bad = subprocess.run([sys.executable, "-m", "worldspec", "nonesuch"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert bad.returncode == 2 and "Usage: worldspec" in bad.stderr


def test_check_a_folder_names_the_file_of_every_kind_of_world(tmp_path):
    """A folder's report lists each world's file, whatever its kind: `check worlds` failed with an internal error
    on the Hold'em world, which had no `source`."""
    for path in ("interactive/holdem.world", "interactive/trust.world", "demo.world"):
        shutil.copy(os.path.join(ROOT, "worlds", path), tmp_path / os.path.basename(path))
    r = cli("check", str(tmp_path), "--json", "--jobs", "1")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert sorted((os.path.basename(e["file"]), e["kind"]) for e in data["entries"]) == [
        ("demo.world", "program"), ("holdem.world", "holdem"), ("trust.world", "game")]


def test_check_a_folder_with_learnability_prints_a_line_for_every_world(tmp_path):
    """`check FOLDER --learnability` measured nothing for a folder (the flag was read for one world only):
    now each world gets its line, a kind without an explorer says so, and --json carries them by file."""
    for path in ("demo.world", "oracle/circuit/cri-e-swap.world", "interactive/math/m03-last-two-digits.world"):
        shutil.copy(os.path.join(ROOT, "worlds", path), tmp_path / os.path.basename(path))
    r = cli("check", str(tmp_path), "--learnability", "--jobs", "1")
    assert r.exit_code == 0, r.output
    lines = {ln.split(":", 1)[0].strip(): ln for ln in r.stdout.splitlines() if ": learnability:" in ln}
    assert sorted(lines) == ["cri-e-swap.world", "demo.world", "m03-last-two-digits.world"], r.stdout
    assert "answers 85.7% of the tasks" in lines["demo.world"]
    assert "the explorer (circuit gates) answers 100.0% of the tests" in lines["cri-e-swap.world"]
    assert "not measured (no explorer for judge)" in lines["m03-last-two-digits.world"]
    data = json.loads(cli("check", str(tmp_path), "--learnability", "--json", "--jobs", "1").stdout)
    assert {os.path.basename(f): v["accuracy"] for f, v in data["learnability"].items()}["demo.world"] == \
        pytest.approx(85.7, abs=0.05)
