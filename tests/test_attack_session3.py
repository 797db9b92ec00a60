"""Session 3's features attacked from outside: `worldspec view` and `report` on damaged, partial and foreign
run folders, markup in every text a page shows, huge texts, and the explorer's label in reports.

A damaged log is a run folder's problem, said in one paragraph (exit 2), never an "internal error" (exit 3)
or a traceback; a page sets every text as text.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from click.testing import CliRunner

from worldspec.cli import EXIT_INPUT, main
from worldspec.compiler import load_world
from worldspec.runner.log import LogError, load_run
from worldspec.runner.models import ScriptedModel
from worldspec.runner.outputs import write_report
from worldspec.runner.report import LABELS, label
from worldspec.runner.view import MAX_TEXT, ViewError, page_data, render, write_view

from runner_fakes import FakeWorld, policy_reply
from test_view import browser, rendered_dom

WORLDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")
MARKUP = "</title></script><script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory, run_world):
    """A finished milestone run whose system is called `explorer` (as the built-in agent is)."""
    out = tmp_path_factory.mktemp("attack") / "run"
    run_world(FakeWorld(), [ScriptedModel(policy_reply, name="explorer")], out, trajectories=1)
    return out


def lines_of(run) -> list[str]:
    return (run / "log.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def event(**fields) -> str:
    return json.dumps(fields) + "\n"


def damaged(tmp_path, name: str, text: str | bytes):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "log.jsonl").write_bytes(text if isinstance(text, bytes) else text.encode())
    return folder


def conv_of(run) -> str:
    return next(json.loads(x)["conv"] for x in lines_of(run) if '"conv"' in x)


# ---------------------------------------------------------------- damaged and foreign logs


def damaged_logs(run) -> dict[str, str | bytes]:
    head, conv = lines_of(run)[0], conv_of(run)
    return {
        "not UTF-8": b"\xff\xfe\x00garbage\n\x80\x81\n",
        "not objects": '[1, 2]\n5\n"x"\nnull\n',
        "a list as conversation": head + event(type="message", conv=[1], message={"role": "user"}),
        "a header whose config is text": event(type="header", config="x", world=None),
        "a trajectory without its record": head + event(type="trajectory", conv=conv),
        "a trajectory whose record is text": head + event(type="trajectory", conv=conv, record="oops"),
        "a list as reply key": head + event(type="reply", key=[1]),
        "a list as session": head + event(type="session", session=[1], status="x"),
    }


def test_view_refuses_a_damaged_log_in_one_paragraph_and_report_never_crashes_on_it(fake_run, tmp_path):
    for name, text in damaged_logs(fake_run).items():
        folder = damaged(tmp_path, name.replace(" ", "-"), text)
        r = CliRunner().invoke(main, ["view", str(folder)])
        assert r.exit_code == EXIT_INPUT, (name, r.output)
        assert "not a worldspec run log" in r.output or "shape worldspec writes" in r.output, (name, r.output)
        # report reads fewer events (not the messages): refused, or reported from the events it reads
        r2 = CliRunner().invoke(main, ["report", str(folder), "--out", str(tmp_path / name), "--no-plots"])
        assert r2.exit_code in (0, EXIT_INPUT), (name, r2.output)
        for out in (r.output, r2.output):
            assert "internal error" not in out and "Traceback" not in out, (name, out)


def test_a_damaged_event_names_its_place_in_the_log(fake_run, tmp_path):
    head = lines_of(fake_run)[0]
    folder = damaged(tmp_path, "d", head + event(type="x") + event(type="trajectory", conv="a|b|1", record=3))
    with pytest.raises(LogError, match=r"line 3 \('trajectory'\) is not in the shape worldspec writes: its field 'record'"):
        load_run(folder)


def odd_log(run, tmp_path):
    """A run's log with events of the right shape but odd fields, and markup wherever text goes."""
    head, conv = lines_of(run)[0], conv_of(run)
    header = json.loads(head)
    header["world"]["name"] = MARKUP
    odd = [event(type="message", conv=conv, message="just text " + MARKUP),
           event(type="message", conv=conv, message={"role": MARKUP, "content": MARKUP, "tool_calls": [
               "x", 5, {"function": 3}, {"function": {"name": MARKUP, "arguments": MARKUP}}]}),
           event(type="milestone", conv=conv, record={}),
           event(type="milestone", conv=conv, record={"t": "x", "accuracy": MARKUP, "tasks": [1, 2]}),
           event(type="verdict", conv=conv, t=[1], task=None, answer_index=[2]),
           event(type="verdict", conv=conv, t="x", task={"a": 1}, answer=MARKUP),
           event(type="rule_report", conv=conv, t="x", correct=MARKUP, extraneous=[MARKUP]),
           event(type="reply", key="k", purpose="rules", conv=conv, t=1, reply="text"),
           event(type="tool", conv=conv, call_id=[1], program=MARKUP, feedback={"x": MARKUP}),
           event(type="trajectory", conv=MARKUP, record={"system": MARKUP, "condition": MARKUP, "status": MARKUP,
                                                         "milestones": [{"t": 0, "accuracy": MARKUP}]})]
    return damaged(tmp_path, "odd", json.dumps(header) + "\n" + "".join(odd))


def test_odd_events_the_page_can_still_show_render(fake_run, tmp_path):
    """Events of the right shape with odd fields (text for a message, junk tool calls, a milestone without
    its number, a rule report's reply as text) are shown, not refused."""
    folder = odd_log(fake_run, tmp_path)
    r = CliRunner().invoke(main, ["view", str(folder)])
    assert r.exit_code == 0, r.output
    page = (folder / "view.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<img" not in page
    traj = {t["conv"]: t for t in page_data(folder)["trajectories"]}[conv_of(fake_run)]
    assert traj["chat"][0]["content"].startswith("just text") and traj["chat"][1]["calls"]
    # a report needs every field of a record: the one without its world is refused, in one paragraph
    r = CliRunner().invoke(main, ["report", str(folder), "--out", str(tmp_path / "r"), "--no-plots"])
    assert r.exit_code == EXIT_INPUT and "not in the shape worldspec writes (KeyError: 'world')" in r.output, r.output


def test_the_odd_page_runs_to_its_end_in_chromium_and_makes_no_element_of_markup(fake_run, tmp_path):
    folder = odd_log(fake_run, tmp_path)
    page = write_view(folder, tmp_path / "view.html")
    dom = rendered_dom(page)
    assert dom.rendered == "2"  # the page's script drew both trajectories, to its end
    text = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--user-data-dir=" + str(tmp_path / "profile"), "--dump-dom", page.resolve().as_uri()],
                          capture_output=True, text=True, timeout=120).stdout
    assert "<img" not in text and "alert(1)</script>" not in text and text.count("<script") == 2


def test_a_log_of_an_unknown_protocol_is_refused_by_report_and_shown_by_view(tmp_path):
    folder = damaged(tmp_path, "u", event(type="header", config={"protocol": "nonesuch"}, world={"name": "W"}))
    r = CliRunner().invoke(main, ["report", str(folder), "--out", str(tmp_path / "r")])
    assert r.exit_code == EXIT_INPUT and "no report for runs of protocol 'nonesuch'" in r.output, r.output
    assert CliRunner().invoke(main, ["view", str(folder)]).exit_code == 0


def test_a_partial_run_is_reported_as_invalid_not_refused(fake_run, tmp_path):
    lines = lines_of(fake_run)
    cut = [i for i, x in enumerate(lines) if '"type": "milestone"' in x or '"type":"milestone"' in x][1]
    folder = damaged(tmp_path, "partial", "".join(lines[:cut]) + lines[cut][:25])
    r = CliRunner().invoke(main, ["report", str(folder), "--out", str(tmp_path / "r"), "--no-plots"])
    assert r.exit_code == 0 and "**INVALID**" in r.output and "internal error" not in r.output, r.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["validity"]["missing"] and not summary["validity"]["valid"]
    assert CliRunner().invoke(main, ["view", str(folder)]).exit_code == 0


# ---------------------------------------------------------------- markup and size


def test_a_world_name_with_markup_or_a_placeholder_stays_text_in_the_page(fake_run, tmp_path):
    lines = lines_of(fake_run)
    header = json.loads(lines[0])
    header["world"]["name"] = MARKUP + " __DATA__ __SCRIPT__ & co"
    folder = damaged(tmp_path, "named", json.dumps(header) + "\n" + "".join(lines[1:]))
    page = render(page_data(folder))
    head, body = page.split("<body>")
    assert "<title>worldspec run: &lt;/title&gt;&lt;/script&gt;&lt;script&gt;alert(1)" in head
    assert "__DATA__ __SCRIPT__ &amp; co</title>" in head  # not replaced by the page's data or script
    assert page.count("<script") == 2 and page.count("</script>") == 2 and "<img" not in page
    assert body.count("function el(") == 1  # the page's script, once


def test_a_huge_message_is_cut_in_the_page_and_kept_whole_in_the_log(fake_run, tmp_path):
    head, conv = lines_of(fake_run)[0], conv_of(fake_run)
    huge = "<b>x</b>" * (MAX_TEXT // 2)
    folder = damaged(tmp_path, "huge", head + event(type="message", conv=conv,
                                                    message={"role": "assistant", "content": huge}))
    (traj,) = page_data(folder)["trajectories"]
    shown = traj["chat"][0]["content"]
    assert shown.startswith(huge[:MAX_TEXT]) and len(shown) < MAX_TEXT + 100
    assert f"{len(huge) - MAX_TEXT:,} more characters" in shown
    assert "<b>" not in render(page_data(folder))


def test_view_of_a_missing_header_or_an_empty_log_says_so(tmp_path):
    for name, text in (("empty", ""), ("blank", "\n\n"), ("half", '{"type": "header"')):
        folder = damaged(tmp_path, name, text)
        with pytest.raises(ViewError, match="no header line"):
            page_data(folder)


# ---------------------------------------------------------------- the explorer's label


def test_reports_label_the_explorer_and_json_keeps_its_id(fake_run, tmp_path):
    assert label("explorer") == LABELS["explorer"] == "explorer (built-in, no model)" and label("gpt") == "gpt"
    summary, md = write_report([fake_run], tmp_path / "r", plots=False)
    assert "| explorer (built-in, no model) |" in md and "| explorer |" not in md
    assert "- explorer (built-in, no model) / autonomous (r*=1 of 1)" in md
    assert {r["system"] for r in summary["results"]} == {"explorer"}
    assert {json.loads(x)["system"] for x in (tmp_path / "r" / "trajectories.jsonl").read_text().splitlines()} == \
        {"explorer"}


def test_the_explorer_agent_runs_on_program_worlds_and_boxes_and_is_refused_elsewhere(tmp_path):
    # proof worlds have an explorer too since issue 26 (tests/test_proof_explorer.py); a judge world has none
    lang = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worlds", "lang", "state.world")
    r = CliRunner().invoke(main, ["run", lang, "--agent", "explorer", "-n", "1", "--no-cache",
                                  "--out", str(tmp_path / "state")])
    assert r.exit_code == 0, r.output
    assert "explorer (built-in, no model)" in r.output
    judge = os.path.join(WORLDS, "interactive", "math", "m01-exactly-one-divisor.world")
    r = CliRunner().invoke(main, ["run", judge, "--agent", "explorer", "-n", "1", "--no-cache",
                                  "--out", str(tmp_path / "x")])
    assert r.exit_code == EXIT_INPUT and "unknown agent 'explorer'" in r.output and "Traceback" not in r.output
    # a black box has its own explorer since issue 26 (runner/boxexplorer/)
    box = os.path.join(WORLDS, "oracle-extra", "cii-e01-running-maximum.world")
    r = CliRunner().invoke(main, ["run", box, "--agent", "explorer", "--no-cache", "--out", str(tmp_path / "box")])
    assert r.exit_code == 0 and "| explorer |" in r.output, r.output
    assert load_world(lang).kind == "program"


def test_an_authoring_transcript_is_not_taken_for_a_run(tmp_path):
    folder = damaged(tmp_path, "mine.world.author",
                     event(type="header", config={"command": "author", "kind": "program"}, world={"out": "mine.world"})
                     + event(type="author_round", round=1, certified=True))
    for args in (["view", str(folder)], ["report", str(folder), "--out", str(tmp_path / "r")]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == EXIT_INPUT and "transcript of `worldspec author`, not a run" in r.output, r.output
