"""`worldspec view RUN_DIR`: a run as one self-contained HTML page (no server, no network).

The page holds the run's data as JSON inside it and a small script that draws it: the
run table (the one `worldspec run` prints), one row per trajectory, and for each trajectory
its record, its conversation (tool calls with their charges and feedback), its probes, its
milestones (verdicts per task and the rule report graded rule by rule) and, for box worlds,
its test answers. Selects (or the page's `#system=...&condition=...&trajectory=...` fragment)
filter the trajectories. Nothing is fetched: CSS and script are inline, and every text a
model or a world wrote is set as text (never parsed as HTML).

The run is read with log.load_run, keeping the events a page shows. A log names its world but
not its file: given the world (`--world`, checked against the run's fingerprint), a rule report
lists every rule it is graded on, with its title, correct, wrong or not stated. Every protocol's run
renders: sections a protocol does not log (milestones for pool play, a conversation for
Hold'em hands) are left out, and an unfinished run shows what its log holds.
"""
from __future__ import annotations

import contextlib
import html
import json
import os
import re
import tempfile
from pathlib import Path

import click

from worldspec import safejson
from worldspec.commands import BadInput, guarded, load

from . import outputs, report as reports
from .answers import parse_rule_report, reportable_rules, statements
from .log import LoggedRun, LogError, load_run, not_a_run
from .protocols import PROTOCOLS

SHOWN = ("message", "tool", "box_turn", "judge", "box_answer", "verdict", "lost", "grader_error", "rule_report",
         "milestone", "round_end", "fork", "exploration_ended")
PROBES = {  # event type -> (turn field, input field, status field, charge field)
    "tool": ("t", "program", "status", "units"),
    "box_turn": ("turn", "input", "status", "counted"),
    "judge": ("turn", "text", "label", "move"),
}
PLACEHOLDER = re.compile(r"__(?:TITLE|STYLE|SCRIPT|DATA)__")  # where render puts the page's parts
MAX_FIELD = 400  # characters of a record field shown in the record table
MAX_TEXT = 20_000  # characters of one message, probe, feedback or answer shown (the log keeps all of it)
MAX_ENTRIES = 2_000  # conversation entries, probes or verdicts of one trajectory shown
MAX_CONFIG = 2_000  # characters of one field of the run's configuration or world shown
PAGE_BUDGET = 8_000_000  # characters of one page's data: past them, the trajectories go on further pages


class ViewError(Exception):
    """The directory holds no run log the page can show."""


def short(value) -> str:
    """A record field as one cell of text."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_FIELD else text[:MAX_FIELD] + " ..."


def text_of(value) -> str:
    """A long text (a message, a probe, feedback, an answer) as the page shows it, cut at MAX_TEXT."""
    text = value if isinstance(value, str) else short(value)
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f"\n... ({len(text) - MAX_TEXT:,} more characters: the whole text is in log.jsonl)"


def capped(value, limit: int = MAX_CONFIG):
    """A JSON value from the log's header (its configuration, its world) with every text cut at LIMIT
    characters and every list or map at MAX_ENTRIES entries: a header field can be 20 MB."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f" ... ({len(value) - limit:,} more characters)"
    if isinstance(value, dict):
        items = list(value.items())
        out = {capped(str(k), MAX_FIELD): capped(v, limit) for k, v in items[:MAX_ENTRIES]}
        if len(items) > MAX_ENTRIES:
            out["..."] = f"{len(items) - MAX_ENTRIES:,} more entries"
        return out
    if isinstance(value, (list, tuple)):
        out = [capped(v, limit) for v in value[:MAX_ENTRIES]]
        return out + [f"... {len(value) - MAX_ENTRIES:,} more entries"] if len(value) > MAX_ENTRIES else out
    return value if value is None or isinstance(value, (bool, int, float)) else short(value)


def first_entries(items: list, note) -> list:
    """The first MAX_ENTRIES of a trajectory's entries, and NOTE(number left out) after them."""
    if len(items) <= MAX_ENTRIES:
        return items
    return items[:MAX_ENTRIES] + [note(len(items) - MAX_ENTRIES)]


def markdown_table(lines: list[str]) -> dict | None:
    """{"head", "rows"} of the first Markdown table among lines (what report.table writes)."""
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines if ln.startswith("|")]
    rows = [r for r in rows if not all(set(c) <= {"-", ":"} and c for c in r)]
    return {"head": rows[0], "rows": rows[1:]} if rows else None


def run_table(run: LoggedRun, directory: Path) -> tuple[dict | None, dict]:
    """(the run's headline table, its summary) as `worldspec run` computes them; (None, {}) when the
    records cannot be summarised (an unfinished run, a protocol without a report layout)."""
    try:
        _, summary, _ = outputs.summarize([run], [directory])
        table = markdown_table(outputs.headline(summary))
        return (table if table and table["rows"] else None), summary
    except (reports.ReportError, KeyError, TypeError, ValueError, ZeroDivisionError):
        return None, {}


def conv_fields(conv: str, record: dict | None, events: list[dict]) -> dict:
    """System, condition and trajectory of a conversation (from its record, else from its events)."""
    src = record or next((e for e in events if "system" in e), {})
    parts = str(conv).split("|")
    return {"system": str(src.get("system", parts[0])),
            "condition": str(src.get("condition", parts[1] if len(parts) > 1 else "")),
            "trajectory": str(src.get("trajectory", parts[2] if len(parts) > 2 else ""))}


def call_text(name: str, arguments) -> str:
    """A tool call as a person reads it: the tool, then each argument's text as written."""
    try:
        args = safejson.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        args = None
    if isinstance(args, dict) and args:
        return f"{name}:\n" + "\n".join(v if isinstance(v, str) else short(v) for v in args.values())
    return f"{name}({arguments if isinstance(arguments, str) else short(arguments)})"


def chat(events: list[dict]) -> list[dict]:
    """The conversation: each message with its tool calls, and a tool result with its charge."""
    charges = {e.get("call_id"): e for e in events if e["type"] == "tool" and isinstance(e.get("call_id"), str)}
    out = []
    for e in events:
        if e["type"] == "round_end":
            out.append({"role": "round", "content": f"round {e.get('t')} ended: {e.get('calls')} calls, "
                                                    f"{e.get('probe_units')} probe units, {e.get('tokens')} tokens"})
        elif e["type"] in ("fork", "exploration_ended"):
            out.append({"role": "note", "content": short({k: v for k, v in e.items() if k not in ("id", "ts")})})
        elif e["type"] == "message":
            m = e.get("message") or {}
            if not isinstance(m, dict):
                m = {"content": short(m)}
            item = {"role": str(m.get("role", "?")), "content": text_of(m.get("content") or "")}
            calls = []
            for tc in m.get("tool_calls") or ():
                fn = tc.get("function") if isinstance(tc, dict) else None
                calls.append(text_of(call_text(str(fn.get("name", "?")), fn.get("arguments", "")))
                             if isinstance(fn, dict) else short(tc))
            if calls:
                item["calls"] = calls
            tool = charges.get(str(m.get("tool_call_id"))) if item["role"] == "tool" else None
            if tool is not None:
                item["charge"] = f"{tool.get('status')}: {tool.get('units', 0)} probe units" + \
                    (", feedback truncated" if tool.get("truncated") else "")
            out.append(item)
    return first_entries(out, lambda n: {"role": "note", "content": f"... {n:,} more entries: the whole "
                                                                     "conversation is in log.jsonl"})


def probes(events: list[dict]) -> dict | None:
    """The probes of a conversation and what each was charged and shown."""
    rows = []
    for e in events:
        fields = PROBES.get(e["type"])
        if fields:
            turn, text, status, charge = (e.get(f) for f in fields)
            rows.append([short(turn), text_of(text), short(status), short(charge), text_of(e.get("feedback", ""))])
    rows = first_entries(rows, lambda n: ["...", f"{n:,} more probes: all of them are in log.jsonl", "", "", ""])
    return {"head": ["round/turn", "probe", "status", "charge", "feedback"], "rows": rows} if rows else None


def rule_report(event: dict | None, text: str | None, record: dict, world=None) -> dict:
    """The rule report of one milestone graded rule by rule, as the run graded it: with the world,
    a row for every rule it is graded on; without, a row for each rule stated correctly and each
    line of the report."""
    correct = list((event or {}).get("correct", record.get("rules_stated_correctly") or []))
    extraneous = list((event or {}).get("extraneous", ()))
    if world is not None:
        stated, _ = statements(world, text)
        head = ["rule", "verdict", "title", "equation stated"]
        rows = [[r.id, "correct" if r.id in correct else "wrong" if r.id in stated else "not stated", r.title,
                 stated.get(r.id, "")] for r in reportable_rules(world)]
        rows += [[name, "no such rule in this world", "", ""] for name in extraneous]
    else:
        head = ["rule / statement", "verdict", "equation"]
        rows = [[rid, "correct", ""] for rid in correct]
        for kind, name, eq in parse_rule_report(text):
            said = f"{kind} {name}".strip()
            rows.append([said, "no such rule in this world" if said in extraneous else "names a rule", eq])
    rows += [["", "grading error", err] + [""] * (len(head) - 3) for err in (event or {}).get("errors", ())]
    total = record.get("rules_total")
    return {"summary": f"{len(correct)} of {total if total is not None else '?'} rules stated correctly"
                       + (f" ({event.get('outcome')})" if event and event.get("outcome") else ""),
            "head": head, "rows": rows, "text": text_of(text or "")}


def milestones(conv: str, record: dict | None, events: list[dict], rule_texts: dict, world=None) -> list[dict]:
    """Each milestone: its scores, its verdicts per task and answer, its rule report."""
    by_t: dict = {}
    for e in events:
        if e["type"] == "milestone" and isinstance(e.get("record"), dict):
            by_t.setdefault(milestone_of(e["record"].get("t")), {})["record"] = e["record"]
        elif e["type"] in ("verdict", "lost", "grader_error"):
            by_t.setdefault(milestone_of(e.get("t")), {}).setdefault("verdicts", []).append(e)
        elif e["type"] == "rule_report":
            by_t.setdefault(milestone_of(e.get("t")), {})["rules"] = e
    for m in (record or {}).get("milestones") or ():
        if isinstance(m, dict):
            by_t.setdefault(milestone_of(m.get("t")), {}).setdefault("record", m)
    out = []
    for t in sorted(by_t, key=lambda x: (x is None, x if isinstance(x, (int, float)) else 0)):
        got = by_t[t]
        rec = got.get("record") or {}
        order = {str(tid): i for i, tid in enumerate(rec.get("tasks") or ())}
        got_verdicts = sorted(got.get("verdicts", ()), key=lambda v: (order.get(str(v.get("task")), len(order)),
                                                                     str(v.get("task")), str(v.get("answer_index"))))
        verdicts = [[str(v.get("task")), str(v.get("answer_index", "")),
                     "pass" if v.get("passed") else "lost" if v["type"] == "lost" else "fail",
                     str(v.get("outcome", v["type"])), text_of(v.get("detail") or v.get("error") or ""),
                     text_of(v.get("answer") or "")] for v in got_verdicts]
        item = {"t": t, "accuracy": rec.get("accuracy"), "calls": rec.get("calls"),
                "units": rec.get("probe_units"), "tokens": rec.get("tokens"),
                "tasks": {str(k): v for k, v in rec["tasks"].items()} if isinstance(rec.get("tasks"), dict) else {},
                "verdicts": {"head": ["task", "answer", "verdict", "outcome", "detail", "answer text"],
                             "rows": verdicts}}
        if "rules" in got or rec.get("rules_total"):
            text = rule_texts.get((conv, t))
            item["rules"] = rule_report(got.get("rules"), text if isinstance(text, str) else None, rec, world)
        out.append(item)
    return out


def milestone_of(t):
    """A milestone's number as a key (a log from elsewhere may hold anything there)."""
    return t if isinstance(t, (int, float, str)) or t is None else short(t)


def box_answers(events: list[dict]) -> dict | None:
    rows = [[str(e.get("test")), str(e.get("shot", "")), "pass" if e.get("passed") else "fail",
             short(e.get("score", "")), text_of(e.get("detail", "")), text_of(e.get("answer", ""))]
            for e in events if e["type"] == "box_answer"]
    return {"head": ["test", "shot", "verdict", "score", "detail", "answer"], "rows": rows} if rows else None


def run_world(run: LoggedRun, world: str):
    """The world of a milestone run, compiled from WORLD with the run's seed; refused when it is not
    the world the run played (its fingerprint differs)."""
    if run.protocol != "milestone":
        raise ViewError(f"--world names the rules of a milestone run; this run is {run.protocol}")
    w = load(world, run.config.get("world_seed"))
    said = (run.header or {}).get("world", {})
    got = PROTOCOLS["milestone"].world_identity([w], w.name)
    if got["fingerprint"] != said.get("fingerprint"):
        raise ViewError(f"{world} is not the world this run played ({said.get('name')!r}, seed {said.get('seed')}): "
                        "its manual, tasks or rules differ")
    return w


def page_data(directory: str | Path, world: str | None = None) -> dict:
    """Everything the page shows, as plain JSON data (WORLD: the run's world file, for rule titles)."""
    directory = Path(directory)
    try:
        run = load_run(directory, keep=SHOWN)
    except (FileNotFoundError, LogError) as e:
        raise ViewError(str(e)) from None
    if not_a_run(run):
        raise ViewError(not_a_run(run))
    w = run_world(run, world) if world else None
    try:
        return run_data(run, directory, w)
    except (TypeError, KeyError, AttributeError) as e:  # a field of another shape than worldspec writes
        raise ViewError(f"{run.path} holds an event worldspec does not write ({type(e).__name__}: {e}); the log "
                        "is damaged or from another program") from None


def run_data(run: LoggedRun, directory: Path, w=None) -> dict:
    """page_data of a run read from DIRECTORY (W: its world, for rule titles)."""
    rule_texts = {(str(r.get("conv")), milestone_of(r.get("t"))): r["reply"].get("content")
                  for r in run.replies.values() if r.get("purpose") == "rules" and isinstance(r.get("reply"), dict)}
    table, summary = run_table(run, directory)
    trajectories = []
    convs = list(run.records) + [c for c in run.events if c not in run.records]
    for i, conv in enumerate(convs):
        record = run.records.get(conv)
        events = run.events.get(conv, [])
        rec = record or {}
        trajectories.append({
            "id": f"traj-{i}", "conv": str(conv), **conv_fields(conv, record, events),
            "status": str(rec.get("status", "unfinished")), "valid": rec.get("valid"),
            "endpoint": rec.get("endpoint"), "lost": rec.get("lost", 0),
            "record": [[k, short(v)] for k, v in rec.items() if k != "milestones"],
            "chat": chat(events), "probes": probes(events), "answers": box_answers(events),
            "milestones": milestones(conv, record, events, rule_texts, w),
        })
    world = (run.header or {}).get("world", {})
    world = capped(world if isinstance(world, dict) else {})
    validity = summary.get("validity") or reports.validity(run)
    return {"title": short(f"worldspec run: {world.get('name', directory.name)}"), "directory": str(directory),
            "protocol": short(str(run.protocol)), "world": world, "config": capped(run.config),
            "validity": validity, "invalid_because": [short(r) for r in reports.invalid_reasons(validity)],
            "table": table,
            "trajectories": trajectories}


def embedded_json(data: dict) -> str:
    """JSON that is safe inside a <script> element (no `<`, so no `</script>`; ASCII only)."""
    return json.dumps(data, ensure_ascii=True, default=str).replace("<", "\\u003c").replace(">", "\\u003e")


def render(data: dict) -> str:
    """The HTML page of page_data's data."""
    parts = {"__TITLE__": html.escape(str(data["title"])), "__STYLE__": STYLE, "__SCRIPT__": SCRIPT,
             "__DATA__": embedded_json(data)}
    # one pass: a title (a world's name) that holds a placeholder's name stays text
    return PLACEHOLDER.sub(lambda m: parts[m[0]], PAGE)


def paged(data: dict, budget: int | None = None) -> list[dict]:
    """The page data split so that each page's trajectories take about BUDGET characters at most (a
    trajectory larger than that has a page of its own); every page has the run table and header."""
    budget = PAGE_BUDGET if budget is None else budget
    groups, size = [[]], 0
    for t in data["trajectories"]:
        n = len(embedded_json(t))
        if groups[-1] and size + n > budget:
            groups.append([])
            size = 0
        groups[-1].append(t)
        size += n
    return [{**data, "trajectories": group, "page": i, "pages": len(groups)} for i, group in enumerate(groups, 1)]


def page_name(path: Path, page: int) -> Path:
    """Page 1 is PATH itself; page N is PATH's stem with -N (view.html, view-2.html, ...)."""
    return path if page == 1 else path.with_name(f"{path.stem}-{page}{path.suffix}")


def write_page(path: Path, text: str) -> None:
    """Write TEXT to PATH whole or not at all (a temporary file beside it, renamed); a failure (a full
    disk) is bad input naming the file, and leaves the page that was there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ViewError(f"cannot write {path}: {e.strerror or e}; the page was not written") from None


def write_view(directory: str | Path, out: str | Path | None = None, world: str | None = None) -> Path:
    """Write the page of the run in DIR (default DIR/view.html; further pages beside it when the run is too
    large for one); returns the first page's path."""
    path = Path(out) if out else Path(directory) / "view.html"
    pages = paged(page_data(directory, world))
    for data in pages:
        data["links"] = [page_name(path, i).name for i in range(1, len(pages) + 1)] if len(pages) > 1 else []
        write_page(page_name(path, data["page"]), render(data))
    return path


@click.command("view")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), help="The HTML file to write (default RUN_DIR/view.html).")
@click.option("--world", metavar="WORLD", help="The run's world (a file or a bundled world's name): rule reports "
                                               "then list every rule with its title, stated or not.")
@guarded
def view(run_dir, out, world):
    """Write a run as one self-contained HTML page and print its path.

    \b
    The page needs no server and no network: open it in a browser. It shows the
    run table, every trajectory's conversation with its probes, charges and
    feedback, the verdicts of each milestone and the rule reports graded rule by
    rule, filterable by system, condition and trajectory.

    \b
    Examples:
      worldspec view runs/builtin && xdg-open runs/builtin/view.html
      worldspec view runs/gpt --world aliencode --out gpt.html
      xdg-open 'gpt.html#system=openai/gpt-4o-mini&condition=autonomous'   (filtered)
    """
    try:
        path = write_view(run_dir, out, world)
    except ViewError as e:
        raise BadInput(str(e)) from None
    click.echo(str(path))


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>__TITLE__</title>
<style>__STYLE__</style></head>
<body>
<header><h1 id="title">__TITLE__</h1><div id="status"></div></header>
<nav id="filters">
  <label>System <select id="f-system"></select></label>
  <label>Condition <select id="f-condition"></select></label>
  <label>Trajectory <select id="f-trajectory"></select></label>
  <span id="shown"></span>
</nav>
<main>
<section><h2>Run table</h2><div id="run-table"></div></section>
<section><h2>Trajectories</h2><div id="traj-table"></div></section>
<section><h2>Trajectory details</h2><div id="details"></div></section>
<section><h2>Run configuration</h2><pre id="config"></pre></section>
</main>
<script type="application/json" id="data">__DATA__</script>
<script>__SCRIPT__</script>
</body></html>
"""

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header,main,nav{padding:0 1.5rem}header{background:#1f3a5f;color:#fff;padding:.6rem 1.5rem}
h1{font-size:1.3rem;margin:.2rem 0}h2{font-size:1.1rem;border-bottom:1px solid #ccc}
nav{position:sticky;top:0;background:#eef2f7;padding:.5rem 1.5rem;z-index:2}nav label{margin-right:1rem}
table{border-collapse:collapse;margin:.4rem 0;background:#fff}th,td{border:1px solid #d0d0d0;padding:2px 6px;
vertical-align:top;text-align:left}th{background:#f0f0f0}td.pre{white-space:pre-wrap;font-family:monospace;max-width:50rem}
details{margin:.3rem 0}summary{cursor:pointer;font-weight:600}.traj{border:1px solid #ccd;background:#fff;
padding:.3rem .8rem;margin:.6rem 0;border-radius:4px}.msg{border-left:4px solid #999;margin:.3rem 0;padding:.2rem .6rem;
white-space:pre-wrap;font-family:monospace;font-size:12.5px}.msg .role{font-weight:700;font-family:system-ui}
.system{border-color:#777}.user{border-color:#2a7ae2}.assistant{border-color:#1a9c5b}.tool{border-color:#c77d00}
.round,.note{border-color:#bbb;color:#666;font-style:italic}.charge{color:#8a5a00;font-family:system-ui}
.pass{background:#e5f6ea}.fail{background:#fbe7e7}.lost{background:#fff4cc}.bad{color:#b00020;font-weight:700}
.good{color:#0a7a32;font-weight:700}header .good{color:#8ef0a8}header .bad{color:#ffb3b3}.hidden{display:none}
"""

SCRIPT = r"""
(function(){
const D = JSON.parse(document.getElementById('data').textContent);
function el(tag, attrs, text){const e=document.createElement(tag);
  for(const k in (attrs||{})) e.setAttribute(k, attrs[k]);
  if(text!==undefined && text!==null) e.textContent=String(text); return e;}
function table(t, cls){const tb=el('table', cls?{'class':cls}:{}); const hr=el('tr');
  t.head.forEach(h=>hr.appendChild(el('th',{},h))); tb.appendChild(hr);
  const vc=t.head.indexOf('verdict'); const mark={pass:'pass',correct:'pass',fail:'fail',wrong:'fail',lost:'lost'};
  t.rows.forEach(r=>{const tr=el('tr'); r.forEach((c,i)=>{const td=el('td',{},c);
    if(String(c).indexOf('\n')>=0||i==r.length-1) td.className='pre';
    if(i===vc&&mark[c]) tr.className=mark[c]; tr.appendChild(td);}); tb.appendChild(tr);}); return tb;}
function fold(title, body, open){const d=el('details'); if(open) d.open=true; d.appendChild(el('summary',{},title));
  d.appendChild(body); return d;}
function pct(x){return (x===null||x===undefined)?'—':(Math.round(x*10)/10)+'%';}
const v = D.validity||{};
const st = document.getElementById('status');
st.appendChild(el('span',{'class':v.valid?'good':'bad'}, v.valid?'valid run':'INVALID run'));
st.appendChild(document.createTextNode(' — protocol '+D.protocol+', '+(v.finished_trajectories||0)+'/'+
  (v.expected_trajectories||0)+' finished, '+(v.lost_answers||0)+' answers lost, '+(v.retries||0)+' retries; '+D.directory));
if((D.invalid_because||[]).length){const ul=el('ul',{'id':'invalid-because'});
  D.invalid_because.forEach(r=>ul.appendChild(el('li',{},r))); st.appendChild(el('div',{},'Not valid because:'));
  st.appendChild(ul);}
if((D.links||[]).length>1){st.appendChild(document.createTextNode(' — page '+D.page+' of '+D.pages+':'));
  D.links.forEach((n,i)=>{st.appendChild(document.createTextNode(' ')); st.appendChild(el('a',{'href':n},String(i+1)));});}
document.getElementById('config').textContent = JSON.stringify({world:D.world, config:D.config, validity:v}, null, 2);
const rt = document.getElementById('run-table');
if(D.table){rt.appendChild(table(D.table,'run-table'));} else {rt.appendChild(el('p',{},'No summary table: the run has no finished records to summarise.'));}
const T = D.trajectories;
const tt = el('table',{'id':'trajectories'}); const hr = el('tr');
['system','condition','trajectory','status','valid','endpoint','lost',''].forEach(h=>hr.appendChild(el('th',{},h)));
tt.appendChild(hr);
const details = document.getElementById('details');
T.forEach(t=>{
  const tr = el('tr',{'class':'traj-row','data-system':t.system,'data-condition':t.condition,'data-trajectory':t.trajectory});
  [t.system,t.condition,t.trajectory,t.status,t.valid===null||t.valid===undefined?'—':(t.valid?'yes':'no'),
   typeof t.endpoint==='number'?pct(t.endpoint):'—',t.lost].forEach(c=>tr.appendChild(el('td',{},c)));
  const td=el('td'); td.appendChild(el('a',{'href':'#'+t.id},'details')); tr.appendChild(td); tt.appendChild(tr);
  const box = el('div',{'class':'traj','id':t.id,'data-system':t.system,'data-condition':t.condition,'data-trajectory':t.trajectory});
  box.appendChild(el('h3',{},t.conv+' — '+t.status+(typeof t.endpoint==='number'?', endpoint '+pct(t.endpoint):'')));
  if(t.record.length) box.appendChild(fold('Record', table({head:['field','value'],rows:t.record})));
  if(t.chat.length){const c=el('div',{'class':'chat'});
    t.chat.forEach(m=>{const d=el('div',{'class':'msg '+m.role}); d.appendChild(el('div',{'class':'role'},m.role));
      if(m.content) d.appendChild(el('div',{'class':'content'},m.content));
      (m.calls||[]).forEach(k=>d.appendChild(el('div',{'class':'call'},'→ '+k)));
      if(m.charge) d.appendChild(el('div',{'class':'charge'},'charged: '+m.charge)); c.appendChild(d);});
    box.appendChild(fold('Conversation ('+t.chat.length+' entries)', c));}
  if(t.probes) box.appendChild(fold('Probes, charges and feedback ('+t.probes.rows.length+')', table(t.probes,'probes')));
  if(t.answers) box.appendChild(fold('Test answers', table(t.answers,'answers'), true));
  if(t.milestones.length){const ms=el('div',{'class':'milestones'});
    ms.appendChild(table({head:['milestone','accuracy','calls','probe units','tokens','rules'],
      rows:t.milestones.map(m=>['M'+m.t,pct(m.accuracy),m.calls??'—',m.units??'—',m.tokens??'—',m.rules?m.rules.summary:'—'])}));
    t.milestones.forEach(m=>{const d=el('div');
      if(m.verdicts.rows.length) d.appendChild(table(m.verdicts,'verdicts'));
      else if(Object.keys(m.tasks).length) d.appendChild(table({head:['task','answers (1 pass, 0 fail)'],
        rows:Object.entries(m.tasks).map(([k,v])=>[k,JSON.stringify(v)])}));
      if(m.rules){d.appendChild(el('h4',{},'Rule report: '+m.rules.summary)); d.appendChild(table(m.rules,'rules'));
        if(m.rules.text) d.appendChild(fold('The report as written', el('pre',{},m.rules.text)));}
      ms.appendChild(fold('M'+m.t+': '+pct(m.accuracy), d));});
    box.appendChild(fold('Milestones ('+t.milestones.length+')', ms, true));}
  details.appendChild(box);
});
document.getElementById('traj-table').appendChild(tt);
const keys=['system','condition','trajectory'];
keys.forEach(k=>{const s=document.getElementById('f-'+k); s.appendChild(el('option',{'value':''},'all'));
  [...new Set(T.map(t=>t[k]))].sort().forEach(x=>s.appendChild(el('option',{'value':x},x)));
  s.addEventListener('change',apply);});
function apply(){const want={}; keys.forEach(k=>want[k]=document.getElementById('f-'+k).value);
  let n=0; document.querySelectorAll('.traj-row,.traj').forEach(e=>{
    const ok=keys.every(k=>!want[k]||e.getAttribute('data-'+k)===want[k]); e.classList.toggle('hidden',!ok);
    if(ok&&e.classList.contains('traj')) n++;});
  document.getElementById('shown').textContent=n+' of '+T.length+' trajectories shown';}
const h=new URLSearchParams(location.hash.replace(/^#/,''));
keys.forEach(k=>{const x=h.get(k); if(x!==null){const s=document.getElementById('f-'+k);
  if([...s.options].some(o=>o.value===x)) s.value=x;}});
apply();
document.body.setAttribute('data-rendered', String(T.length));
})();
"""
