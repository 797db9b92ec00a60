"""The published Oracle benchmark's ENCRYPTION boxes re-expressed as worlds (docs/oracle-published-encryption.md)."""

from pathlib import Path

import pytest
from conftest import certified_folder, checked, memorise_boxes, run_boxes_at_20_at_2

from worldspec.compiler import load_world

ROOT = Path(__file__).resolve().parent.parent
ENCRYPTION = ROOT / "worlds" / "oracle" / "encryption"

EASY = ["01248-encryption-1", "01248-encryption-2", "adhxz-encryption", "backpack-encryption", "bacon-cipher",
        "caesar-cipher", "curve-cipher", "fib-cipher", "idx-shift-encryption", "simple-substitution", "zigzag-cipher"]
HARD = ["compositional-encryption", "dynamic-curve-cipher", "frequency-encryption", "hill-cipher", "playfair-cipher",
        "positional-keyword-cipher", "rsa-encryption", "sequential-feedback-cipher", "vigenere-encryption"]
BOXES = [f"eri-e-{b}" for b in EASY] + [f"eri-h-{b}" for b in HARD]

# (message, the published box's answer while exploring), from the published code run in a scratch folder with its
# own input filtering; the caesar and vigenere pairs were also
# worked out by hand.
PAIRS = {
    "eri-e-01248-encryption-1": [("Hello World", "814484812480124881248288484"), ("z", "2888")],
    "eri-e-01248-encryption-2": [("Hello World", "10000101110011001111021111111201011000100"), ("abc", "000100100011")],
    "eri-e-adhxz-encryption": [("Hello World", "DDZHAXAXDH ZXDHZDAXDA"), ("ij", "XDXD")],
    "eri-e-backpack-encryption": [("Hello World", "104,58,97,97,120,103,120,69,97,46"), ("az", "0,120")],
    "eri-e-bacon-cipher": [("Hello World", "XXYYYxxyxxxyxyyxyxyyyxyxxYYYXXyxyxxyxyyyxyxyyxxxyy"),
                           ("MnZ", "XYYXXyxxyyYYYYY")],
    "eri-e-caesar-cipher": [("Hello World", "Pmttw Ewztl"), ("xyz", "fgh")],
    "eri-e-curve-cipher": [("Hello World", "W o dl ll re Ho"), ("abcdefghijklm", "lf ek jd ci hb agm")],
    "eri-e-fib-cipher": [("Hello World", "Ifnot eBMTg"), ("aaaaaaaaaa", "bbcdfinvId")],
    "eri-e-idx-shift-encryption": [("Hello World", "Hfnos buytm"), ("zzzz", "zABC")],
    "eri-e-simple-substitution": [("Hello World", "Einnd Tdkng"), ("aZ", "pB")],
    "eri-e-zigzag-cipher": [("Hello World", "HolelWrdlo"), ("abcdefgh", "aebdfhcg")],
    "eri-h-compositional-encryption": [("Hello World", "Uucsj Ofekd"), ("aaaaa", "lhenl")],
    "eri-h-dynamic-curve-cipher": [("Hello World", "rl lo dWe Hol"), ("abcdefghijk", "je di hc bg kfa")],
    "eri-h-frequency-encryption": [("Hello World", "Olssv dvysO"), ("aab", "hhB")],
    "eri-h-hill-cipher": [("Hello World", "ppkhw gxwwr"), ("a b c", "f  crw")],
    "eri-h-playfair-cipher": [("Hello World", "Fuoqm pXnsphq"), ("balloon", "iboqmppo")],
    "eri-h-positional-keyword-cipher": [("Hello World", "QENVO HxRNN"), ("aaaaaaa", "jACKALj")],
    "eri-h-rsa-encryption": [("Hello World", "680,648,505,470,378"), ("abc", "596,35")],
    "eri-h-sequential-feedback-cipher": [("Hello World", "iMxiW sgXIl"), ("aaaa", "BbBb")],
    "eri-h-vigenere-encryption": [("Hello World", "TIXZF UAVXR"), ("aaaaaaa", "MEMORYM")],
}


def test_every_published_encryption_box_is_ported():
    assert sorted(p.stem for p in ENCRYPTION.glob("*.world")) == sorted(BOXES)
    assert sorted(PAIRS) == sorted(BOXES)


def test_the_folder_certifies_with_the_published_counts():
    report = certified_folder(ENCRYPTION, 20)
    assert report["counts"]["family_difficulty"] == {"ERI/easy": 11, "ERI/hard": 9}


@pytest.mark.parametrize("box", BOXES)
def test_each_box_certifies(box):
    assert checked(ENCRYPTION / f"{box}.world")["problems"] == []  # `check BOX --json`, exit 0


@pytest.mark.parametrize("box", BOXES)
def test_published_behaviour_is_pinned(box):
    world = load_world(ENCRYPTION / f"{box}.world")
    assert world.protocol == "turn@shot"
    for query, want in PAIRS[box]:
        fb = world.session().probe(query)
        assert (fb.status, fb.text) == ("ok", want), query


@pytest.mark.parametrize("text, kept", [("Hello, World", "Hello World"), ("abc1", "abc")])
def test_a_message_is_read_as_the_published_loop_filters_it(text, kept):
    """simple_substitution_final.py main keeps letters (isalpha) and spaces, then strips."""
    world = load_world(ENCRYPTION / "eri-e-simple-substitution.world")
    assert world.session().probe(text).text == world.session().probe(kept).text


def test_a_letter_outside_a_to_z_is_refused_and_costs_a_turn():
    fb = load_world(ENCRYPTION / "eri-e-simple-substitution.world").session().probe("naïve")
    assert fb.status == "rejected" and fb.units == 1


def test_caesar_tests_want_the_published_graders_answer_without_spaces():
    world = load_world(ENCRYPTION / "eri-e-caesar-cipher.world")
    first = world.tasks[0]
    assert "Quick Brown Fox" in first.prompt and first.solution == "YcqksJzwevNwf"
    assert world.session().probe("Quick Brown Fox").text == "Ycqks Jzwev Nwf"  # exploring shows the spaces
    assert world.verify(first.id, "YcqksJzwevNwf").passed and not world.verify(first.id, "Ycqks Jzwev Nwf").passed


def test_test_answers_are_the_published_ones():
    # first test of a few boxes, as the published grader computes it from the published test plaintext
    want = {"eri-h-vigenere-encryption": "FLQ TFPQWF ONYWIZG JMRXXM", "eri-h-rsa-encryption": "550,34",
            "eri-e-zigzag-cipher": "ZAHIERWTSRPSBITE"}
    for box, answer in want.items():
        assert load_world(ENCRYPTION / f"{box}.world").tasks[0].solution == answer, box


def test_the_memoriser_plays_an_easy_and_a_hard_box_at_20_at_2(tmp_path, monkeypatch):
    played = memorise_boxes([ENCRYPTION / "eri-e-caesar-cipher.world", ENCRYPTION / "eri-h-vigenere-encryption.world"], tmp_path, monkeypatch)
    assert sorted(played) == ["eri-e-caesar-cipher", "eri-h-vigenere-encryption"]


def test_oracle_scores_every_box_fully_at_20_at_2(tmp_path, monkeypatch):
    summary = run_boxes_at_20_at_2(ENCRYPTION, tmp_path, monkeypatch)
    oracle = [x for x in summary["results"] if x["system"] == "oracle"]
    assert len(oracle) == 20 and all(x["best"] == 100.0 for x in oracle)
    assert summary["accuracy"]["oracle"]["cells"] == {"ERI/easy": {"accuracy": 100.0, "boxes": 11},
                                                      "ERI/hard": {"accuracy": 100.0, "boxes": 9}}
