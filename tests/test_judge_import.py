"""`worldspec import`: files in InteractiveBench's published JSON layout become judge worlds that certify.

The fixtures are written here, in that layout, with content of our own (never the paper's data).
"""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from worldspec.cli import EXIT_INPUT, EXIT_PROBLEMS, main
from worldspec.compiler import load_world
from worldspec.importer import spec_string
from worldspec.parser import unquote

PUZZLES = [
    {"id": "locked_garden", "title": "The Locked Garden",
     "setup": "A gardener found every rose in her walled garden cut clean at the stem one morning, though the "
              "only gate was locked and she had the one key.",
     "solution": "A pair of deer had jumped the low back wall at night. Deer bite roses off cleanly. The gate "
                 "had nothing to do with it.",
     "notes": ""},
    {"id": "quiet_bell", "title": "The Quiet \"Bell\"",
     "setup": "The church bell did not ring at noon.\n\nThe whole village was relieved.",
     "solution": "The bell-ringer had been taken to hospital after a fall, and the village had agreed that "
                 "silence at noon would mean he was being cared for. His neighbour would ring only if something "
                 "went wrong.",
     "notes": "Accept any answer saying the silence was a prearranged signal."},
]
MATH = [
    {"problem": "A rectangle has perimeter 30 and its length is twice its width. What is its area?",
     "solution": "Let the width be w. Then the length is 2w and the perimeter is 2(w + 2w) = 6w = 30, so w = 5. "
                 "The length is 10 and the area is 5 * 10 = 50.",
     "exp_ans": "50"},
    {"problem": "What fraction of the integers from 1 to 12 are prime? Answer in lowest terms.",
     "solution": "The primes up to 12 are 2, 3, 5, 7 and 11: five of them. So the fraction is 5/12.",
     "exp_ans": "$\\frac{5}{12}$"},
    {"problem": "Which expression equals (x + 2)^2?\n\nA. x^2 + 4\nB. x^2 + 4x + 4\nC. x^2 + 2x + 4",
     "solution": "Expanding, (x + 2)^2 = x^2 + 2*2*x + 4 = x^2 + 4x + 4, which is choice B.", "exp_ans": "B"},
    {"problem": "Factor x^2 - 5x + 6.",
     "solution": "We need two numbers with product 6 and sum -5: -2 and -3. So x^2 - 5x + 6 = (x - 2)(x - 3).",
     "final_answer": "(x - 2)(x - 3)"},
]


def write(tmp_path, name, data) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2))
    return str(path)


def invoke(*args):
    return CliRunner().invoke(main, ["import", *args], catch_exceptions=False)


def test_situation_puzzles_become_worlds_that_certify(tmp_path):
    out = tmp_path / "ib-puzzles"
    r = invoke("situation-puzzles", write(tmp_path, "puzzles_en.json", PUZZLES), "--out", str(out))
    assert r.exit_code == 0, r.output
    assert "wrote 2 world(s)" in r.output and "2 certified" in r.output
    assert sorted(os.listdir(out)) == ["locked-garden.world", "quiet-bell.world"]
    garden, bell = (load_world(str(out / f)) for f in sorted(os.listdir(out)))
    assert garden.name == "The Locked Garden" and bell.name == 'The Quiet "Bell"'
    assert garden.setting == "puzzle" and garden.grading == "judge" and garden.budget.turns == 20
    assert garden.surface == PUZZLES[0]["setup"] and bell.surface.rstrip() == PUZZLES[1]["setup"]
    assert garden.truth == PUZZLES[0]["solution"]
    assert "prearranged signal" in bell.instructions and "prearranged" in bell.judge_system_prompt()
    assert "prearranged" not in bell.manual
    assert garden.origin == "InteractiveBench puzzles_en.json, id locked_garden"
    # facts come from the solution's sentences; a required one is mentioned by words the setup lacks
    assert [f.statement for f in garden.facts] == ["A pair of deer had jumped the low back wall at night",
                                                   "Deer bite roses off cleanly"]
    assert all(f.required for f in garden.facts) and "deer" in garden.facts[1].mention
    assert garden.keyword_label(garden.facts[0].yes[0]) == "yes"
    assert garden.verify("answer", garden.truth).passed and not garden.verify("answer", garden.surface).passed
    # the imported folder runs offline
    run = CliRunner().invoke(main, ["run", str(out), "--judge", "keyword", "--out", str(tmp_path / "run"),
                                    "--quiet"], catch_exceptions=False)
    assert run.exit_code == 0 and "| oracle | puzzle | keyword | 100.0 (2/2) |" in run.output


def test_the_readme_import_example_runs_on_the_example_file_it_names(tmp_path):
    """Issue 31 item 9: the README's `import` example needed a file it did not say where to get."""
    root = os.path.join(os.path.dirname(__file__), "..")
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    line = next(ln for ln in readme.splitlines() if ln.startswith("worldspec import "))
    args = line.split("#")[0].split()[2:]
    assert args[:2] == ["situation-puzzles", "docs/examples/puzzles_en.json"]
    with open(os.path.join(root, args[1]), encoding="utf-8") as f:
        assert json.load(f) == PUZZLES  # the file the tests use: our own content in the published layout
    with open(os.path.join(root, "docs", "examples", "puzzle_math.json"), encoding="utf-8") as f:
        assert json.load(f) == MATH
    r = invoke(args[0], os.path.join(root, args[1]), "--out", str(tmp_path / "my-puzzles"))
    assert r.exit_code == 0 and "2 certified" in r.output, r.output


def test_math_problems_become_worlds_graded_by_the_judge(tmp_path):
    out = tmp_path / "ib-math"
    r = invoke("math", write(tmp_path, "puzzle_math.json", MATH), "--out", str(out), "--turns", "12")
    assert r.exit_code == 0, r.output
    files = sorted(os.listdir(out))
    assert files == [f"puzzle-math-00{i}.world" for i in range(1, 5)]
    worlds = [load_world(str(out / f)) for f in files]
    assert [w.name for w in worlds] == [f"puzzle_math 00{i}" for i in range(1, 5)]
    # InteractiveBench grades every math answer by its strict grader (math/turtle.py grade_equivalence)
    assert [w.grading for w in worlds] == ["judge"] * 4 and all(w.strict_grading for w in worlds)
    assert [w.answer for w in worlds] == ["50", "$\\frac{5}{12}$", "B", "(x - 2)(x - 3)"]
    assert all(w.setting == "math" and w.budget.turns == 12 and w.pass_at_k for w in worlds)
    assert worlds[0].probe("ANSWER: 50").text == "correct" and worlds[1].probe("ANSWER: 5/12").text == "correct"
    assert worlds[2].probe("ANSWER: b").text == "correct" and worlds[0].probe("ANSWER: 45").text == "incorrect"
    assert worlds[2].surface == MATH[2]["problem"] + "\n"


def test_existing_files_are_kept_unless_forced(tmp_path):
    path = write(tmp_path, "p.json", PUZZLES)
    out = str(tmp_path / "o")
    assert invoke("situation-puzzles", path, "--out", out).exit_code == 0
    r = invoke("situation-puzzles", path, "--out", out)
    assert r.exit_code == EXIT_INPUT and "pass --force" in r.output
    assert invoke("situation-puzzles", path, "--out", out, "--force").exit_code == 0


@pytest.mark.parametrize("data, message", [
    ({"id": "x"}, "expected a JSON list of objects"),
    ([], "no entries"),
    (["text"], "entry 1 is not an object"),
    ([{"id": "a", "title": "A", "setup": "s"}], "entry 1 has no solution"),
    ([PUZZLES[0], {**PUZZLES[1], "id": "locked_garden"}], "two puzzles share an id"),
])
def test_a_file_not_in_the_layout_is_bad_input(tmp_path, data, message):
    r = invoke("situation-puzzles", write(tmp_path, "bad.json", data), "--out", str(tmp_path / "o"))
    assert r.exit_code == EXIT_INPUT and message in r.output


def test_a_math_entry_without_an_answer_is_bad_input(tmp_path):
    r = invoke("math", write(tmp_path, "m.json", [{"problem": "p q r", "solution": "s t u"}]), "--out",
               str(tmp_path / "o"))
    assert r.exit_code == EXIT_INPUT and "entry 1 has no exp_ans" in r.output


def test_a_puzzle_whose_solution_says_nothing_new_does_not_certify(tmp_path):
    flat = [{"id": "same", "title": "Same", "setup": "The man ran home quickly.", "solution": "The man ran home."}]
    r = invoke("situation-puzzles", write(tmp_path, "f.json", flat), "--out", str(tmp_path / "o"))
    assert r.exit_code == EXIT_PROBLEMS and "0 certified" in r.output and "required fact" in r.output


@pytest.mark.parametrize("text", ["plain", 'a "quoted" \\ word', "two\nlines", "  indented\n    more\n\nend",
                                  'has """ triple', "tab\there"])
def test_spec_strings_read_back_unchanged(text):
    lit = spec_string(text)
    assert unquote(lit).rstrip() == text.rstrip() or unquote(lit) == text
