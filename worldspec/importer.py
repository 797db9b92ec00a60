"""`worldspec import`: InteractiveBench's data files -> .world files of kind judge.

A user with their own copy of InteractiveBench's data (interactivebench/InteractiveBench on GitHub)
converts it into worlds the judge protocol runs, so the paper's puzzles and problems run here
without this project shipping them:

    worldspec import situation-puzzles src/situation_puzzle/data/puzzles_en.json --out worlds/ib-puzzles
    worldspec import math src/math/data/puzzle_math.json --out worlds/ib-math

The layouts read are the published ones. Situation puzzles: a JSON list of objects with `id`,
`title`, `setup` (the surface), `solution` (the hidden truth) and an optional `notes` (for the judge
only). Math: a JSON list of objects with `problem`, `solution` and `exp_ans` (the final answer; the
paper's code also accepts `final_answer`).

Neither layout lists key facts, so the keyword judge's facts are derived from the solution: each
sentence (up to MAX_FACTS) becomes a fact whose yes phrasing is the sentence itself; for puzzles a
fact is required when its sentence has words the setup lacks, and an answer mentions it by one of
those words. This is enough for `worldspec check` and an offline smoke run; the paper's judge is a
model (`--judge-model`). Every math answer is graded by the judge model's strict grader of
equivalence, as InteractiveBench's math/turtle.py grade_equivalence does (the keyword judge, offline,
compares exactly).
"""
from __future__ import annotations

import os
import re

import click

from worldspec import safejson
from worldspec.bounded import TooLarge, read_capped_text
from worldspec.commands import EXIT_PROBLEMS, BadInput, guarded
from worldspec.compiler import load_world
from worldspec.compiler.judge.keywords import STOP_WORDS, words
from worldspec.parser import unquote
from worldspec.scan import MAX_STRING_CHARS

MAX_FACTS = 6
MAX_DATA_BYTES = 20_000_000  # a data file to import; the published ones are under 1 MB
MAX_ENTRIES = 5_000  # entries of one data file (each becomes a world that is certified)
MENTION_WORDS = 3  # the longest words of a puzzle sentence that the setup lacks
MIN_FACT_WORDS = 3  # a sentence with fewer content words makes no fact
PUZZLE_FIELDS = ("id", "title", "setup", "solution")
MATH_FIELDS = ("problem", "solution")

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


# ---------------------------------------------------------------- reading the data file


def read_entries(path: str, fields: tuple[str, ...]) -> list[dict]:
    """The entries of a data file: a JSON list of objects, each with non-empty text `fields`."""
    try:
        data = safejson.loads(read_capped_text(path, MAX_DATA_BYTES, path))
    except TooLarge as e:
        raise BadInput(f"{e}: InteractiveBench's data files are a few MB at most") from None
    except (OSError, ValueError) as e:  # ValueError: not UTF-8, not JSON, or nested too deeply
        raise BadInput(f"{path}: not a readable JSON file ({getattr(e, 'strerror', None) or e})") from None
    if not isinstance(data, list):
        raise BadInput(f"{path}: expected a JSON list of objects, found {type(data).__name__}")
    if len(data) > MAX_ENTRIES:
        raise BadInput(f"{path}: {len(data):,} entries; an import takes at most {MAX_ENTRIES:,} (split the file)")
    out = []
    for i, item in enumerate(data, 1):
        if not isinstance(item, dict):
            raise BadInput(f"{path}: entry {i} is not an object")
        entry = {k: clean(v) for k, v in item.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
        missing = [f for f in fields if not entry.get(f)]
        if missing:
            raise BadInput(f"{path}: entry {i} has no {', '.join(missing)} (fields: {', '.join(fields)})")
        too_long = [k for k, v in entry.items() if len(v) > MAX_STRING_CHARS // 2]
        if too_long:
            raise BadInput(f"{path}: entry {i}: {too_long[0]} is longer than {MAX_STRING_CHARS // 2} characters")
        out.append(entry)
    if not out:
        raise BadInput(f"{path}: no entries")
    return out


def clean(value) -> str:
    """A field as text: stripped, lone surrogates (unencodable) replaced."""
    return _LONE_SURROGATE.sub("\ufffd", str(value)).strip()


# ---------------------------------------------------------------- writing spec text


def spec_string(text: str) -> str:
    """`text` as a spec string literal: a triple-quoted block when it reads back unchanged, else escaped."""
    if "\n" in text and '"""' not in text:
        block = '"""\n' + "\n".join(("  " + line) if line.strip() else "" for line in text.split("\n")) + '\n"""'
        if unquote(block).rstrip() == text.rstrip():
            return block
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def slug(text: str) -> str:
    """A name safe in a file name."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "world"


def sentences(text: str) -> list[str]:
    """The sentences of a text that say something (at least MIN_FACT_WORDS content words), distinct by words."""
    out, seen = [], set()
    for s in _SENTENCE.split(" ".join(text.split())):
        s = s.strip()
        content = words(s).content
        if len(content) >= MIN_FACT_WORDS and content not in seen:
            seen.add(content)
            out.append(s)
    return out[:MAX_FACTS]


def novel_words(sentence: str, known: frozenset, n: int) -> list[str]:
    """The n longest words of a sentence whose stems are not `known` (as written, first spelling kept)."""
    out: dict[str, str] = {}
    for tok in _TOKEN.findall(sentence.lower()):
        stems = words(tok).content
        if stems and not stems & known:
            out.setdefault(next(iter(stems)), tok)
    return sorted(out.values(), key=lambda w: (-len(w), w))[:n]


def fact_block(fid: str, sentence: str, mention: list[str], required: bool) -> list[str]:
    """One `fact` block: the sentence is its statement and its yes phrasing."""
    claim = asked = sentence.rstrip(".!? ")
    first = claim.split(" ", 1)[0]
    if first.lower() in STOP_WORDS and (len(first) == 1 or first[1:].islower()):
        asked = claim[0].lower() + claim[1:]  # "Is it true that the man ...", not "... that The man ..."
    lines = [f"fact {fid} {spec_string(claim)} {{", f"  yes {spec_string('Is it true that ' + asked + '?')}"]
    if mention:
        lines.append("  mention " + ", ".join(spec_string(m) for m in mention))
    if required:
        lines.append("  required true")
    return lines + ["}", ""]


def header(name: str, summary: str, setting: str, origin: str) -> list[str]:
    return [f"# Imported by `worldspec import` from {' '.join(origin.split())}.", "",
            f"world {spec_string(name)} version 1", "language 3", "kind judge", "seed 1", f"summary {spec_string(summary)}",
            f"setting {setting}", f"origin {spec_string(origin)}", ""]


def puzzle_world(entry: dict, origin: str, turns: int) -> str:
    """The .world text of one situation puzzle in InteractiveBench's layout."""
    setup, solution = entry["setup"], entry["solution"]
    known = words(setup).content | words(entry["title"]).content
    out = header(entry["title"], entry["title"], "puzzle", origin)
    out += [f"surface {spec_string(setup)}", "", f"truth {spec_string(solution)}", ""]
    if entry.get("notes"):
        out += [f"instructions {spec_string('Notes for the judge only: ' + entry['notes'])}", ""]
    for i, s in enumerate(sentences(solution), 1):
        novel = novel_words(s, known, MENTION_WORDS)
        out += fact_block(f"f{i}", s, novel, bool(novel))
    return "\n".join(out + [f"budget {{ turns {turns} }}", ""])


def math_world(entry: dict, name: str, origin: str, turns: int) -> str:
    """The .world text of one math problem in InteractiveBench's layout."""
    answer = entry.get("exp_ans") or entry.get("final_answer")
    first = " ".join(entry["problem"].split())
    out = header(name, first[:100] + ("..." if len(first) > 100 else ""), "math", origin)
    out += [f"surface {spec_string(entry['problem'])}", "", f"truth {spec_string(entry['solution'])}", "",
            f"answer {spec_string(answer)}", ""]
    for i, s in enumerate(sentences(entry["solution"]), 1):
        out += fact_block(f"f{i}", s, [], False)
    return "\n".join(out + [f"budget {{ turns {turns} }}", ""])


def convert(path: str, setting: str, turns: int) -> list[tuple[str, str]]:
    """(file name, .world text) for every entry of a data file."""
    base = os.path.basename(path)
    stem = os.path.splitext(base)[0]
    if setting == "puzzle":
        entries = read_entries(path, PUZZLE_FIELDS)
        out, names = [], set()
        for e in entries:
            if e["title"] in names:
                e = {**e, "title": f"{e['title']} ({e['id']})"}
            names.add(e["title"])
            out.append((f"{slug(e['id'])}.world", puzzle_world(e, f"InteractiveBench {base}, id {e['id']}", turns)))
        files = [f for f, _ in out]
        if len(set(files)) != len(files):
            raise BadInput(f"{path}: two puzzles share an id (file names come from ids)")
        return out
    entries = read_entries(path, MATH_FIELDS)
    for i, e in enumerate(entries, 1):
        if not (e.get("exp_ans") or e.get("final_answer")):
            raise BadInput(f"{path}: entry {i} has no exp_ans (or final_answer)")
    return [(f"{slug(stem)}-{i:03d}.world",
             math_world(e, f"{stem} {i:03d}", f"InteractiveBench {base}, entry {i}", turns))
            for i, e in enumerate(entries, 1)]


# ---------------------------------------------------------------- the command


def write_and_certify(files: list[tuple[str, str]], out: str, force: bool) -> None:
    """Write the worlds into `out`, certify each, report; exit 1 when one does not certify."""
    os.makedirs(out, exist_ok=True)
    clash = [f for f, _ in files if os.path.exists(os.path.join(out, f))]
    if clash and not force:
        raise BadInput(f"{out} already holds {clash[0]}" + (f" and {len(clash) - 1} more" if len(clash) > 1 else "")
                       + "; pass --force to overwrite")
    problems, failed = [], 0
    for name, text in files:
        path = os.path.join(out, name)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        found = load_world(path).certify()["problems"]
        failed += bool(found)
        problems += [f"{path}: {p}" for p in found]
    click.echo(f"wrote {len(files)} world(s) to {out}; {len(files) - failed} certified")
    for p in problems:
        click.echo(f"  - {p}")
    if problems:
        raise SystemExit(EXIT_PROBLEMS)


def default_out(path: str) -> str:
    return os.path.join("worlds", slug(os.path.splitext(os.path.basename(path))[0]))


options = [
    click.argument("file", type=click.Path(exists=True, dir_okay=False)),
    click.option("--out", type=click.Path(file_okay=False), help="Folder for the .world files "
                                                                 "(default worlds/FILE-NAME)."),
    click.option("--turns", default=20, show_default=True, type=click.IntRange(1, 200), help="Turns per session."),
    click.option("--force", is_flag=True, help="Overwrite .world files that already exist."),
]


def with_options(fn):
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.group("import")
def import_group():
    """Convert a benchmark's published data file into .world files (then certify them).

    \b
    Examples:
      worldspec import situation-puzzles puzzles_en.json --out worlds/ib-puzzles
      worldspec import math puzzle_math.json --out worlds/ib-math
    """


@import_group.command("situation-puzzles")
@with_options
@guarded
def situation_puzzles(file, out, turns, force):
    """InteractiveBench situation puzzles (a JSON list of {id, title, setup, solution, notes}) -> kind judge."""
    write_and_certify(convert(file, "puzzle", turns), out or default_out(file), force)


@import_group.command("math")
@with_options
@guarded
def math(file, out, turns, force):
    """InteractiveBench math problems (a JSON list of {problem, solution, exp_ans}) -> kind judge."""
    write_and_certify(convert(file, "math", turns), out or default_out(file), force)
