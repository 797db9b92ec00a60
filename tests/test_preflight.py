"""Issue 31, item 1 and 3: keys and `--api-base` are checked before a world compiles or `--out` is touched."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from click.testing import CliRunner

from worldspec.cli import main
from worldspec.runner.endpoints import unreachable

ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true",
       "OPENAI_API_KEY": "sk-fake"}


def closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_process(*args):
    """`worldspec ARGS` in this process (exit status, stdout, stderr): the runs below test what the run
    command reads from its log, not a fresh process's start, and litellm is imported once, not per run."""
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def worldspec(*args, timeout=60):
    p = subprocess.run([sys.executable, "-c", "from worldspec.cli import main; main()", *args], env=ENV,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def test_an_unreachable_api_base_exits_2_fast_and_leaves_out_as_it_was(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    base = f"http://127.0.0.1:{closed_port()}/v1"
    start = time.monotonic()
    code, stdout, stderr = worldspec("run", "aliencode", "--model", "openai/m", "--api-base", base,
                                     "--out", str(out))
    assert code == 2, stderr
    assert time.monotonic() - start < 30
    assert "cannot be reached" in stderr and "connection refused" in stderr and "Traceback" not in stderr
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]


def test_the_endpoint_is_checked_before_the_world_compiles(tmp_path):
    broken = tmp_path / "w.world"
    broken.write_text('world "W" version 1\nkind program\nbase { nope }\n')
    code, _, stderr = worldspec("run", str(broken), "--model", "openai/m", "--api-base",
                                f"http://127.0.0.1:{closed_port()}/v1", "--out", str(tmp_path / "o"))
    assert code == 2 and "cannot be reached" in stderr and "w.world:" not in stderr, stderr
    assert not (tmp_path / "o").exists()


def test_any_http_answer_counts_as_reachable(fake_openai):
    assert unreachable(fake_openai.base_url) is None  # the fake server answers GET with 501: a server is there


def test_bad_urls_are_named():
    assert "not an http" in unreachable("ftp://example/v1")
    assert "port is not a number" in unreachable("http://127.0.0.1:notaport/v1")
    assert "connection refused" in unreachable(f"http://127.0.0.1:{closed_port()}")


def test_resume_takes_the_options_from_the_log(tmp_path):
    """Issue 31 item 6: --resume needed every option typed again, though the log holds them."""
    out = tmp_path / "d"
    code, _, stderr = in_process("run", "demo", "--agent", "oracle", "-n", "2", "--condition", "direct",
                                 "--out", str(out), "--quiet")
    assert code == 0, stderr
    code, stdout, stderr = in_process("run", "demo", "--out", str(out), "--resume")
    assert code == 0, stderr
    assert "different configuration" not in stderr and "| Demo | oracle | direct | 100.0" in stdout
    code, _, stderr = in_process("run", "demo", "--out", str(out), "--resume", "-n", "3")
    assert code == 2 and "different configuration" in stderr  # what is typed again wins


def test_a_run_resumes_against_a_new_api_base(fake_openai, tmp_path):
    """Issue 31 item 1: the endpoint is not part of a run's identity (a fixed URL could not resume)."""
    out = tmp_path / "m"
    # The fake's default policy knows only the fake world's tasks: on the demo's it dropped the connection, and
    # the run spent half a minute in retries before it lost those answers. A model that answers every request
    # at once: what is tested is the run's identity, not what the model does (no exploration: direct).
    fake_openai.responder = lambda body: {"content": "```\nEMIT 0\n```", "tool_calls": [], "usage": (10, 5)}
    args = ("run", "demo", "--model", "openai/fake", "-n", "1", "--condition", "direct", "--no-cache", "--quiet",
            "--retry-delay", "0.001", "--out", str(out))
    code, _, stderr = in_process(*args, "--api-base", fake_openai.base_url)
    assert code == 0 and (out / "log.jsonl").exists(), stderr
    asked = len(fake_openai.requests)
    other = fake_openai.base_url.rstrip("/") + "/"  # another spelling of the endpoint (the one a user fixed)
    code, _, stderr = in_process(*args, "--api-base", other, "--resume")
    assert code == 0 and "different configuration" not in stderr, stderr
    assert len(fake_openai.requests) == asked  # resumed as the finished run it is: nothing asked again


def test_identity_keys_ignore_the_endpoint_and_read_old_logs_as_they_ran():
    from worldspec.runner.log import config_diff
    assert config_diff({"api_base": "http://a/v1", "n": 1}, {"api_base": "http://b/v1", "n": 1}) == []
    assert config_diff({"n": 1}, {"n": 1, "rule_prompt": "open", "grading": "lenient"}) == []
    assert config_diff({"n": 1}, {"n": 1, "rule_prompt": "slots"}) == ['rule_prompt: log has "open", now "slots"']


def test_run_help_defines_every_condition_in_one_line():
    """Issue 31 item 9: the seven --condition values were defined nowhere a newcomer looks."""
    from click.testing import CliRunner

    from worldspec.cli import main
    from worldspec.runner.protocols import CONDITIONS
    text = CliRunner().invoke(main, ["run", "--help"], terminal_width=200).output
    for c in CONDITIONS:
        assert any(line.strip().startswith(c + " ") for line in text.splitlines()), c
