"""200 single-token mutations of worlds/aliencode.world: each ends in a located diagnostic or a report.

A seeded generator deletes, duplicates or replaces one token of the file (the
replacement drawn from the file's own tokens and punctuation). Every mutant is
compiled the way `worldspec check` compiles it in its worker (load_world; two
worker processes share the corpus): a spec error must render as
`file:line:col: error: ...`, the quoted line and a caret under the column
(what check prints with exit 2), and anything else raised is a bug. A mutant that compiles goes through `worldspec check` itself
(click's CliRunner against worldspec.cli.main) under a short --timeout, so its
certification ends with exit 0 or 1 (a stopped certification is exit 1), never
exit 3.
"""
from __future__ import annotations

import multiprocessing
import os
import random
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import full_or

from worldspec.cli import main
from worldspec.compiler import load_world
from worldspec.diagnostics import SpecError, SpecErrors, shown_line

SOURCE = (Path(__file__).resolve().parent.parent / "worlds" / "aliencode.world").read_text(encoding="utf-8")
SEED, COUNT = 2026, full_or(200, 50)  # 200 under WORLDSPEC_FULL_SUITE=1
# Certification of a mutant that compiles is cut here: the test asks that it ends cleanly, not
# that it finishes (a full AlienCode certification takes tens of seconds).
CHECK_TIMEOUT = "2"

TOKEN = re.compile(r'"""[\s\S]*?"""|"(?:\\.|[^"\\\n])*"|#[^\n]*|\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*'
                   r'|->|<-|==|!=|<=|>=|\.\.|\S')
PUNCTUATION = tuple("{}()[],=:<>+-*/%.!|&\"#") + ("..", "->", '"""')
DIAGNOSTIC = re.compile(r"(?P<file>.+):(?P<line>\d+):(?P<col>\d+): error: \S")


def mutants(seed: int, count: int) -> list[tuple[str, str]]:
    """(what changed, the mutated text) for `count` seeded single-token mutations of SOURCE."""
    tokens = [m for m in TOKEN.finditer(SOURCE) if not m.group().startswith("#")]  # comments carry no meaning
    pool = sorted({m.group() for m in tokens}) + list(PUNCTUATION)
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        m, op = rng.choice(tokens), rng.choice(("delete", "duplicate", "replace"))
        new = {"delete": "", "duplicate": f"{m.group()} {m.group()}",
               "replace": f" {rng.choice(pool)} "}[op]
        line = SOURCE.count("\n", 0, m.start()) + 1
        out.append((f"{op} {m.group()[:30]!r} at line {line} -> {new.strip()[:30]!r}",
                    SOURCE[:m.start()] + new + SOURCE[m.end():]))
    return out


MUTANTS = mutants(SEED, COUNT)


def test_the_mutations_are_seeded_and_varied():
    assert mutants(SEED, COUNT) == MUTANTS
    assert len({text for _, text in MUTANTS}) >= COUNT - 5
    assert {d.split()[0] for d, _ in MUTANTS} == {"delete", "duplicate", "replace"}


def assert_located(rendered: str, path: str, text: str, what: str) -> None:
    """Each error of a rendered diagnostic names file:line:col, quotes that line and puts a caret under col."""
    lines = text.split("\n")
    heads = [n for n, ln in enumerate(rendered.splitlines()) if DIAGNOSTIC.match(ln)]
    assert heads, f"{what}: no file:line:col in\n{rendered}"
    shown = rendered.splitlines()
    for n in heads:
        m = DIAGNOSTIC.match(shown[n])
        line, col = int(m["line"]), int(m["col"])
        assert m["file"] == path and 1 <= line <= len(lines) and col >= 1, f"{what}:\n{rendered}"
        quoted, at = shown_line(lines[line - 1].removesuffix("\r"), col)
        assert quoted.strip(), f"{what}: the diagnostic points at a blank line:\n{rendered}"
        assert shown[n + 1:n + 3] == [f"  {quoted}", "  " + " " * (at - 1) + "^"], f"{what}:\n{rendered}"


def compiled(path: str, index: int) -> str | None:
    """Mutant `index` written to `path` (one file per mutant) and loaded as check's worker loads it
    (runner/sandbox.py worker_world): None if it compiles, else its rendered diagnostic."""
    Path(path).write_text(MUTANTS[index][1], encoding="utf-8")
    try:
        load_world(path)
    except (SpecError, SpecErrors) as e:
        return e.render()
    return None


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every mutant's outcome: (what, 2, diagnostic) or (what, exit code, output) from check.

    The mutants are compiled by two fresh worker processes (the machine has two cores), spawned, not
    forked: by now other tests may have started threads, and a forked child can inherit a held lock."""
    folder = tmp_path_factory.mktemp("mutants")
    paths = [str(folder / f"{n:03d}" / "aliencode.world") for n in range(len(MUTANTS))]
    for path in paths:
        os.mkdir(os.path.dirname(path))
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        rendered = list(pool.map(compiled, paths, range(len(MUTANTS)), chunksize=8))
    runner = CliRunner()
    out = []
    for (what, text), path, diagnostic in zip(MUTANTS, paths, rendered):
        if diagnostic is not None:
            assert_located(diagnostic, path, text, what)
            out.append((what, 2, diagnostic))
            continue
        r = runner.invoke(main, ["check", path, "--timeout", CHECK_TIMEOUT])
        out.append((what, r.exit_code, r.output))
    return out


def test_every_mutant_ends_in_a_diagnostic_or_a_report(outcomes):
    bad = [(what, code, output[-400:]) for what, code, output in outcomes if code not in (0, 1, 2)]
    assert bad == []
    codes = [code for _, code, _ in outcomes]
    assert codes.count(2) > COUNT // 2 and codes.count(0) + codes.count(1) >= 1


def test_check_prints_the_same_diagnostic_with_exit_2(tmp_path, outcomes):
    """The command line path (worker, RemoteSpecError, exit 2) for a few of the mutants that do not compile."""
    path = tmp_path / "aliencode.world"
    runner = CliRunner()
    failing = [(what, text) for (what, text), (_, code, _) in zip(MUTANTS, outcomes) if code == 2]
    for what, text in failing[:3]:
        path.write_text(text, encoding="utf-8")
        r = runner.invoke(main, ["check", str(path), "--timeout", "60"])
        assert r.exit_code == 2, (what, r.output)
        assert_located(r.output, str(path), text, what)
