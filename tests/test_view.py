"""`worldspec view`: the page's data for runs of every protocol, its safety, and the page in a real browser.

The browser tests load the written page in headless Chromium (Debian's `chromium`, or any Chrome
on PATH) with `--dump-dom`, which prints the DOM after the page's script has run, and look for the
run table, the trajectory rows and a trajectory's conversation in it; the page's filter is driven
by the URL fragment. They are skipped, saying why, when no such browser is installed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from worldspec.cli import main
from worldspec.compiler import load_world
from worldspec.runner.models import Reply, ScriptedModel
from worldspec.runner.protocols import PROTOCOLS
from worldspec.runner.view import ViewError, embedded_json, page_data, render, write_view

WORLDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")
HOSTILE = "</script><script>document.title='pwned'</script><img src=x onerror=alert(1)> \u2028 done"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def hostile_model() -> ScriptedModel:
    """A model whose every reply is markup that must stay text."""
    return ScriptedModel(lambda req: Reply(content=f"```\n{HOSTILE}\n```"), name="hostile")


@pytest.fixture(scope="module")
def milestone_run(tmp_path_factory, run_world):
    out = tmp_path_factory.mktemp("view") / "demo"
    run_world(load_world(os.path.join(WORLDS, "demo.world")), [hostile_model()], out, agents=("oracle",),
              trajectories=1, answers=1)
    return out


def world_run(tmp_path_factory, run_world, path: str, **config):
    out = tmp_path_factory.mktemp("view") / "run"
    world = load_world(os.path.join(WORLDS, path))
    run_world(world, [], out, agents=PROTOCOLS[world.protocol].default_agents([world]), **config)
    return out


# ---------------------------------------------------------------- the page's data


def test_milestone_run_page_holds_table_conversation_charges_verdicts_and_rules(milestone_run):
    data = page_data(milestone_run)
    assert data["protocol"] == "milestone" and data["validity"]["valid"]
    assert data["table"]["head"][:3] == ["World", "System", "Condition"]
    assert {r[1] for r in data["table"]["rows"]} == {"oracle", "hostile"}
    by_system = {t["system"]: t for t in data["trajectories"]}
    oracle = by_system["oracle"]
    assert oracle["condition"] == "autonomous" and oracle["trajectory"] == "1" and oracle["endpoint"] == 100.0
    roles = [m["role"] for m in oracle["chat"]]
    assert roles[:2] == ["system", "user"] and "assistant" in roles and "round" in roles
    tool_msgs = [m for m in oracle["chat"] if m["role"] == "tool"]
    assert tool_msgs and all("probe units" in m["charge"] for m in tool_msgs)
    assert oracle["probes"]["rows"] and oracle["probes"]["head"][1] == "probe"
    world = load_world(os.path.join(WORLDS, "demo.world"))
    ms = oracle["milestones"]
    assert [m["t"] for m in ms] == list(range(world.budget.rounds + 1))
    last = ms[-1]
    assert len(last["verdicts"]["rows"]) == len(world.tasks)
    assert all(row[2] == "pass" for row in last["verdicts"]["rows"])
    # the rule report, rule by rule: every rule of the demo stated correctly, each on its own row
    correct = [row[0] for row in last["rules"]["rows"] if row[1] == "correct"]
    assert correct == [r.id for r in world.rules if r.equation]
    assert last["rules"]["summary"].startswith(f"{len(correct)} of {len(correct)} rules")
    assert any(row[1] == "names a rule" for row in last["rules"]["rows"])
    hostile = by_system["hostile"]
    assert all(row[2] == "fail" for row in hostile["milestones"][-1]["verdicts"]["rows"])
    assert hostile["milestones"][-1]["rules"]["summary"].startswith("0 of")


def test_with_its_world_a_rule_report_lists_every_rule(milestone_run):
    world = load_world(os.path.join(WORLDS, "demo.world"))
    data = page_data(milestone_run, world="demo")
    by_system = {t["system"]: t["milestones"][-1]["rules"] for t in data["trajectories"]}
    ids = [r.id for r in world.rules if r.equation]
    assert [row[:3] for row in by_system["oracle"]["rows"]] == \
        [[r.id, "correct", r.title] for r in world.rules if r.equation]
    assert [row[0] for row in by_system["hostile"]["rows"]] == ids
    assert {row[1] for row in by_system["hostile"]["rows"]} == {"not stated"}
    with pytest.raises(ViewError, match="not the world this run played"):
        page_data(milestone_run, world="aliencode")


def test_hostile_text_cannot_leave_the_data_block(milestone_run):
    page = render(page_data(milestone_run))
    assert HOSTILE.split("<")[1] not in page.split('<script type="application/json" id="data">')[1].split("</script>")[0]
    assert page.count("</script>") == 2  # the data block's and the renderer's: nothing a model wrote
    assert "onerror=alert" not in page.replace("onerror=alert(1)\\u003e", "")  # only as escaped JSON text
    data = json.loads(embedded_json({"x": HOSTILE}))
    assert data["x"] == HOSTILE  # the escapes read back exactly


@pytest.mark.parametrize("path, protocol, config", [
    ("oracle-extra/cii-e01-running-maximum.world", "turn@shot", {"trajectories": 1}),
    ("interactive/puzzles/p01-candles.world", "judge", {"trajectories": 1}),
    ("interactive/trust.world", "pool", {"trajectories": 1}),
    pytest.param("interactive/holdem.world", "holdem", {"trajectories": 1}, marks=pytest.mark.slow),  # ~20 s
])
def test_every_protocol_renders(tmp_path_factory, run_world, path, protocol, config):
    out = world_run(tmp_path_factory, run_world, path, **config)
    data = page_data(out)
    assert data["protocol"] == protocol
    assert data["table"] and data["table"]["rows"]
    assert data["trajectories"] and all(t["record"] for t in data["trajectories"])
    if protocol == "turn@shot":
        t = data["trajectories"][0]
        assert t["probes"]["rows"] and t["answers"]["rows"] and t["chat"]
    if protocol == "judge":
        assert data["trajectories"][0]["probes"]["rows"]
    page = render(data)
    assert page.startswith("<!DOCTYPE html>") and "http://" not in page.split("<body>")[0]


def test_an_unfinished_run_still_renders(milestone_run, tmp_path):
    lines = (milestone_run / "log.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "log.jsonl").write_text("".join(lines[:40]) + lines[40][:10], encoding="utf-8")
    data = page_data(cut)
    assert data["table"] is None and not data["validity"]["valid"]
    assert data["trajectories"] and {t["status"] for t in data["trajectories"]} == {"unfinished"}
    # the page says why the run is not valid (issue 31 item 9: it said INVALID only)
    because = data["invalid_because"]
    assert any("did not finish" in r for r in because) and any("last session ended" in r or "success" in r
                                                               for r in because), because
    assert all(json.dumps(r, ensure_ascii=True)[1:-1] in render(data) for r in because)  # carried to the page
    assert page_data(milestone_run)["invalid_because"] == []


def test_view_command_writes_the_page_and_refuses_a_folder_without_a_log(milestone_run, tmp_path):
    out = tmp_path / "page.html"
    result = CliRunner().invoke(main, ["view", str(milestone_run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == str(out) and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    result = CliRunner().invoke(main, ["view", str(tmp_path)])
    assert result.exit_code == 2 and "no run log" in result.output


# ---------------------------------------------------------------- in a real browser


def browser() -> str | None:
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


class DomReader(HTMLParser):
    """The parts of a rendered DOM the tests look for."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.trajectories: list[dict] = []
        self.texts: dict[str, str] = {}
        self.rendered = None
        self._table = self._row = self._cell = self._id = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.rendered = a.get("data-rendered")
        if tag == "table":
            self._table = a.get("id") or a.get("class") or f"table{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self._row = []
            self.tables[self._table].append(self._row)
            if "traj-row" in (a.get("class") or ""):
                self._row.append("hidden" if "hidden" in a["class"] else "shown")
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        if tag == "div" and "traj" in (a.get("class") or "").split():
            self.trajectories.append({"id": a.get("id"), "system": a.get("data-system"),
                                      "hidden": "hidden" in a["class"]})
        if a.get("id") in ("shown", "status"):
            self._id = a["id"]
            self.texts[self._id] = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._table = self._row = None
        elif tag in ("span", "p"):
            self._id = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._id:
            self.texts[self._id] += data


def rendered_dom(page, fragment: str = "") -> DomReader:
    exe = browser()
    if exe is None:
        pytest.skip("no headless browser installed (apt-get install chromium): the page is not rendered")
    url = page.resolve().as_uri() + fragment
    proc = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--user-data-dir=" + str(page.parent / "chromium-profile"), "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = DomReader()
    dom.feed(proc.stdout)
    return dom


def test_the_page_renders_the_run_table_and_a_trajectory_in_chromium(milestone_run, tmp_path):
    page = write_view(milestone_run, tmp_path / "view.html")
    dom = rendered_dom(page)
    assert dom.rendered == "2"  # the script ran to its end
    head, *rows = dom.tables["run-table"]
    assert head[:3] == ["World", "System", "Condition"] and {r[1] for r in rows} == {"oracle", "hostile"}
    head, *rows = dom.tables["trajectories"]
    assert head[:3] == ["system", "condition", "trajectory"]
    assert sorted(r[1] for r in rows) == ["hostile", "oracle"] and all(r[0] == "shown" for r in rows)
    assert [t["system"] for t in dom.trajectories] == ["oracle", "hostile"] or \
        sorted(t["system"] for t in dom.trajectories) == ["hostile", "oracle"]
    probes = [t for name, t in dom.tables.items() if name == "probes"]
    assert probes and probes[0][0][1] == "probe"
    assert "valid run" in dom.texts["status"]
    assert "pwned" not in dom.texts["status"]


def test_the_filter_hides_other_systems_in_chromium(milestone_run, tmp_path):
    page = write_view(milestone_run, tmp_path / "view.html")
    dom = rendered_dom(page, "#system=oracle")
    rows = dom.tables["trajectories"][1:]
    assert {r[1]: r[0] for r in rows} == {"oracle": "shown", "hostile": "hidden"}
    assert {t["system"]: t["hidden"] for t in dom.trajectories} == {"oracle": False, "hostile": True}
    assert dom.texts["shown"] == "1 of 2 trajectories shown"
