"""The published Oracle benchmark's PUZZLE boxes re-expressed as worlds (docs/oracle-published-puzzle.md)."""

from pathlib import Path

import pytest
from conftest import certified_folder, checked, memorise_boxes, run_boxes_at_20_at_2

from worldspec.compiler import load_world
from worldspec.runner.answers import extract_answer, fenced

ROOT = Path(__file__).resolve().parent.parent
PUZZLE = ROOT / "worlds" / "oracle" / "puzzle"

EASY = ["3-arms-bandit", "heavy-coin-hard", "number-guessing", "single-battleship", "wordle"]
HARD = ["battleship", "heavy-light-coins", "nerdle", "nuts-and-bolts", "quordle", "wordle-hard"]
BOXES = [f"ipi-e-{b}" for b in EASY] + [f"ipi-h-{b}" for b in HARD]

SEA1 = "AAA....\n......C\n......C\n......C\n......C\n......C\n..BBBB."
SEA2 = ".......\n.....C.\n.A...C.\n.ABBBC.\n.A...C.\n.....C.\n......."
SEA6 = ".A.....\n.A.C...\n.A.C...\n...C.B.\n...C.B.\n...C.B.\n.....B."

# (target, query as an agent writes it, the published box's answer), taken from the published code run in a
# scratch folder. The heavy coin's scale lies once in ten weighings; the pinned ones come before its first lie.
# The bandit's rewards are random: its chances are checked below instead.
PAIRS = {
    "ipi-e-3-arms-bandit": [],
    "ipi-e-number-guessing": [
        ("Number 42", "Number 57", "Close"), ("Number 42", "Number 58", "Far"), ("Number 42", "Number 26", "Far"),
        ("Number 0", "Number 15", "Close"), ("Number 99", "Number 83", "Far"),
    ],
    "ipi-e-single-battleship": [
        ("Column 6", "(3, 6)", "hit"), ("Column 6", "(6, 3)", "miss"), ("Column 6", "( 9 ,6 )", "hit"),
        ("Row 3", "(3, 1)", "hit"),
    ],
    "ipi-e-wordle": [
        ("MAINTAIN", "AAAAAAAA", "XAXXXAXX"), ("MAINTAIN", "NIATNIAM", "MMMMMMMM"),
        ("MAINTAIN", "MAINTAIN", "AAAAAAAA"), ("MAINTAIN", "ZZZZZZZZ", "XXXXXXXX"),
    ],
    "ipi-h-wordle-hard": [
        ("ACCOMMODATE", "CCCCCCCCCCC", "XAAXXXXXXXX"), ("ACCOMMODATE", "MODATEACCOM", "MMMMMMMMMMM"),
        ("ACCOMMODATE", "ACCOMMODATE", "AAAAAAAAAAA"),
    ],
    # the seas as answered (bombs written `.`); a bomb is hit all the same: (1, 2) in the first, (3, 3) in the second
    "ipi-h-battleship": [
        (SEA1, "(1, 2)", "hit"), (SEA1, "(3, 1)", "hit"), (SEA1, "(4, 1)", "miss"), (SEA1, "(7, 7)", "miss"),
        (SEA2, "(3, 3)", "hit"), (SEA2, "(3, 4)", "hit"), (SEA6, "( 6 , 2 )", "hit"), (SEA6, "(+6, 07)", "hit"),
    ],
    "ipi-h-heavy-light-coins": [
        ("Heavy Coin 5; Light Coin 23", "Left: Coin 5; Right: Coin 23", "Left"),
        ("Heavy Coin 5; Light Coin 23", "Left: Coin 5, Coin 23; Right: Coin 1, Coin 2", "Equal"),
        ("Heavy Coin 5; Light Coin 23", "Left: Coin 23, Coin 23; Right: Coin 1", "Left"),  # a coin twice counts twice
        ("Heavy Coin 103; Light Coin 137", "Left: ; Right: Coin 103", "Right"),
        ("Heavy Coin 103; Light Coin 137", "Left: Coin 1,, Coin 2 ; Right: Coin 3 , Coin 4", "Equal"),
        ("Heavy Coin 3; Light Coin 138", "Left: Coin 3, Coin 3, Coin 138; Right: Coin 1, Coin 2", "Left"),
    ],
    "ipi-h-nerdle": [
        ("4572*113=516636", "118+339+303=760", "MMXXMMXXXXXMMMX"),
        ("13*8-3599/61=45", "25/17*17+96=121", "XMMMXMMXXMAMXXX"),  # 25/17*17 is 25.0 in floating point
        ("1024/2/8/2/2=16", "1024/2/8/2/2=16", "AAAAAAAAAAAAAAA"),
        ("264981-264981=0", "98*30*6/15=1176", "MMXXMXMXMXMXAXM"),
    ],
    "ipi-h-nuts-and-bolts": [
        ("Nut 5, Nut 2, Nut 4, Nut 3, Nut 8, Nut 1, Nut 7, Nut 6", "Bolt 1, Nut 4; Bolt 1, Nut 5; Bolt 1, Nut 6",
         "small; equal; large"),
        ("Nut 8, Nut 7, Nut 6, Nut 5, Nut 4, Nut 3, Nut 2, Nut 1", "Bolt 8, Nut 1;Bolt 2, Nut 8 ; Bolt 3, Nut 6",
         "equal; large; equal"),
        # numbers as Python's int reads them
        ("Nut 7, Nut 2, Nut 5, Nut 8, Nut 3, Nut 1, Nut 6, Nut 4", "Bolt 0_4, Nut +8; Bolt  6, Nut 01; Bolt 7, Nut 3",
         "equal; equal; small"),
    ],
    "ipi-h-quordle": [
        ("PRACTICE, ADAPTIVE, SOLUTION, CEREBRAL", "ABSOLUTE", "MXXXXXMA,AXXXXXMA,XXMMMMMX,MMXXMXXM"),
        ("PRACTICE, ADAPTIVE, SOLUTION, CEREBRAL", "PRACTICE", "AAAAAAAA,MXAXAAXA,XXXXAAXX,XMMMXXXM"),
        ("ACCURACY, EVALUATE, DOCUMENT, FUGACITY", "CCCCCCCC", "XAAXXXAX,XXXXXXXX,XXAXXXXX,XXXXAXXX"),
        # the published sixth puzzle (CHALLENGE has nine letters): no marks, whatever the guess
        ("CHALLENGE, OBJURATE, AESTIVAL, UBIQUITY", "ABSOLUTE", "no marks: the hidden answer is not four 8-letter words"),
    ],
    "ipi-e-heavy-coin-hard": [
        ("Heavy Coin 56", "Left: Coin 56; Right: Coin 1", "Imbalance"),
        ("Heavy Coin 56", "Left: Coin 1, Coin 2; Right: Coin 3, Coin 4", "Balance"),
    ],
}

# A message each published box answers with a correction (so ours refuses it, and it uses the turn).
UNREADABLE = {
    "ipi-e-3-arms-bandit": ["bandit a", "A", "Bandit D", "Pull Bandit A", "answer Bandit A", "Bandit  A"],
    "ipi-e-number-guessing": ["number 5", "Number 101", "Number 5 please", "5"],
    "ipi-e-single-battleship": ["[3, 2]", "3, 2", "(0, 2)", "(3, 2, 1)", "Row 3"],
    "ipi-e-wordle": ["absolute", "ABSOLUT", "ABSOLUTES", "ABSO1UTE"],
    "ipi-h-battleship": ["1, 1", "[1, 1]", "(1, 1, 1)", "(0, 1)", "(8, 1)", "(1.0, 1)", "(1_, 1)", "((1, 1))"],
    "ipi-h-heavy-light-coins": ["Left: Coin 1;Right: Coin 2", "left: Coin 1; Right: Coin 2", "Left: Coin 153; Right:",
                                "Left: Coin 07; Right:", "Left: Coin 5, Coin 6; Right: Coin 6", "Left: Coin 1 Coin 2; Right:",
                                "Right: Coin 1; Left: Coin 2", "Left: Coin 1; Right: Coin 2; Right: Coin 3"],
    "ipi-h-nerdle": ["118+339+303=761", "0118+339+303=76", "1/0+339+303=760", "118+339+303=076", "118++39+303=460",
                     "+18+339+303=660", "118+339+303 760", "118=339+303=760", "118+339+303=76"],
    "ipi-h-nuts-and-bolts": ["Bolt 1, Nut 2; Bolt 2, Nut 3", "Bolt 1, Nut 2; Bolt 2, Nut 3; Bolt 3, Nut 1; Bolt 4, Nut 4",
                             "bolt 1, nut 2; Bolt 2, Nut 3; Bolt 3, Nut 1", "Bolt 1 Nut 2; Bolt 2, Nut 3; Bolt 3, Nut 1",
                             "Bolt 9, Nut 2; Bolt 2, Nut 3; Bolt 3, Nut 1", "Bolt 1, Nut 2.0; Bolt 2, Nut 3; Bolt 3, Nut 1",
                             "Bolt 1_, Nut 2; Bolt 2, Nut 3; Bolt 3, Nut 1", "Bolt1, Nut 2; Bolt 2, Nut 3; Bolt 3, Nut 1"],
    "ipi-h-quordle": ["absolute", "ABSOLUT", "ABSOLUTES", "ABSO1UTE", "ABSOLUTE,BUILDING"],
    "ipi-h-wordle-hard": ["information", "INFORMATIO", "INFORMATIONS"],
    "ipi-e-heavy-coin-hard": ["Left: Coin 1; Right: Coin 1", "Left: ; Right: Coin 3", "Left: Coin 1 , Coin 2; Right: Coin 3",
                              "Left: Coin 101; Right: Coin 3", "Left: Coin 01; Right: Coin 3", "Coin 1 vs Coin 2"],
}


def test_every_ported_box_is_here():
    assert sorted(p.stem for p in PUZZLE.glob("*.world")) == sorted(BOXES)
    assert sorted(PAIRS) == sorted(BOXES) == sorted(UNREADABLE)


def test_the_folder_certifies():
    report = certified_folder(PUZZLE, len(BOXES))
    assert report["counts"]["family_difficulty"] == {"IPI/easy": len(EASY), "IPI/hard": len(HARD)}


# The published defects kept, which `check` reports as warnings (docs/oracle-published-puzzle.md).
WARNINGS = {"ipi-h-quordle": ["goal6 (a published defect, kept): a consistent-guess solver does not pin the target "
                              "CHALLENGE, OBJURATE, AESTIVAL, UBIQUITY down"]}


@pytest.mark.parametrize("box", BOXES)
def test_each_box_certifies_with_only_its_kept_defects_as_warnings(box):
    report = checked(PUZZLE / f"{box}.world")  # `check BOX --json`, exit 0
    assert not report["problems"], report["problems"]
    want = WARNINGS.get(box, [])
    assert len(report["warnings"]) == len(want) and all(w.startswith(x) for w, x in zip(report["warnings"], want))
    difficulty = "easy" if box.startswith("ipi-e-") else "hard"
    assert report["labels"] == {"family": {"IPI": 6}, "difficulty": {difficulty: 6}}


@pytest.mark.parametrize("box", BOXES)
def test_published_behaviour_is_pinned(box):
    world = load_world(PUZZLE / f"{box}.world")
    assert world.protocol == "turn@shot" and world.explore_each_test
    for target, query, want in PAIRS[box]:
        fb = world.session_for(target).probe(query)
        assert (fb.status, fb.text, fb.units) == ("ok", want, 1), query


@pytest.mark.parametrize("box", BOXES)
def test_an_unreadable_message_is_refused_and_costs_a_turn(box):
    world = load_world(PUZZLE / f"{box}.world")
    for text in UNREADABLE[box]:
        fb = world.session().probe(text)
        assert fb.status == "rejected" and fb.units == 1, text


@pytest.mark.parametrize("box", BOXES)
def test_each_test_asks_for_its_published_target_written_exactly(box):
    world = load_world(PUZZLE / f"{box}.world")
    assert len(world.tasks) == 6
    for task in world.tasks:
        want = world.format_answer(world.test_of(task).expected)
        assert world.verify(task, want).score == 1.0
        if want.lower() != want:  # (nerdle's equations have no letters)
            assert world.verify(task, want.lower()).score == 0.0  # the published grader compares strings exactly


def test_the_heavy_coin_scale_lies_once_in_every_ten_weighings_reproducibly():
    world = load_world(PUZZLE / "ipi-e-heavy-coin-hard.world")
    for stream in range(3):
        s = world.session_for("Heavy Coin 7", stream)
        out = [s.probe("Left: Coin 7; Right: Coin 8").text for _ in range(30)]
        for block in range(3):
            assert out[10 * block:10 * block + 10].count("Balance") == 1  # the one lie: it tilts, the scale says not
        again = world.session_for("Heavy Coin 7", stream)
        assert [again.probe("Left: Coin 7; Right: Coin 8").text for _ in range(30)] == out


# The published chances of a reward: the best arm 0.7; B 0.2 and C 0.1 otherwise; A 0.2 or 0.1 (B or C best).
CHANCES = {("Bandit A", "Bandit A"): 0.7, ("Bandit A", "Bandit B"): 0.2, ("Bandit A", "Bandit C"): 0.1,
           ("Bandit B", "Bandit A"): 0.2, ("Bandit B", "Bandit B"): 0.7, ("Bandit B", "Bandit C"): 0.1,
           ("Bandit C", "Bandit A"): 0.1, ("Bandit C", "Bandit B"): 0.2, ("Bandit C", "Bandit C"): 0.7}


def test_the_bandit_pays_with_the_published_chances_and_repeats_each_best_arm_in_a_puzzle_of_its_own():
    world = load_world(PUZZLE / "ipi-e-3-arms-bandit.world")
    for (target, arm), chance in CHANCES.items():
        s = world.session_for(target)
        rewards = [s.probe(arm).text for _ in range(1000)]
        assert set(rewards) <= {"Reward: 0", "Reward: 1"}
        assert abs(rewards.count("Reward: 1") / 1000 - chance) < 0.05, (target, arm)
    targets = [world.test_of(t).expected for t in world.tasks]
    assert targets == ["Bandit A", "Bandit B", "Bandit C", "Bandit B", "Bandit A", "Bandit C"]

    def pulls(task):
        s = world.session(world.task(task))
        return [s.probe("Bandit A").text for _ in range(40)]
    assert pulls("goal1") != pulls("goal5") and pulls("goal1") == pulls("goal1")  # same arm: other draws


def test_a_battleship_sea_is_answered_on_seven_lines_as_a_reply_writes_it():
    world = load_world(PUZZLE / "ipi-h-battleship.world")
    task = world.tasks[0]
    assert world.format_answer(world.test_of(task).expected) == SEA1
    assert world.verify(task, extract_answer(fenced(SEA1))).passed
    assert world.verify(task, extract_answer("The sea:\n```\n" + SEA1 + "\n```")).passed
    assert not world.verify(task, SEA1.replace("\n", " ")).passed
    assert not world.verify(task, SEA1.replace("..BBBB.", "..BBBBO")).passed  # bombs are written as water


def test_the_memoriser_plays_an_easy_and_a_hard_box_at_20_at_2(tmp_path, monkeypatch):
    played = memorise_boxes([PUZZLE / "ipi-e-wordle.world", PUZZLE / "ipi-h-nerdle.world"], tmp_path, monkeypatch)
    assert sorted(played) == ["ipi-e-wordle", "ipi-h-nerdle"]


def test_oracle_scores_every_box_fully_at_20_at_2(tmp_path, monkeypatch):
    summary = run_boxes_at_20_at_2(PUZZLE, tmp_path, monkeypatch)
    oracle = [x for x in summary["results"] if x["system"] == "oracle"]
    assert len(oracle) == len(BOXES) and all(x["best"] == 100.0 for x in oracle)
    assert summary["accuracy"]["oracle"]["cells"] == {"IPI/easy": {"accuracy": 100.0, "boxes": len(EASY)},
                                                      "IPI/hard": {"accuracy": 100.0, "boxes": len(HARD)}}
