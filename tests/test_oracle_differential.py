"""Differentials of the published Oracle boxes' input reading, noise and rounding (docs/oracle-worlds.md).

Each family's test runs our box and a re-statement, in this file's own Python, of the published box's parser
(lemonsis/Oracle_Benchmark, `platforms/<family>/<level>/<box>_final.py`: its `blackbox` and the loop in `main`
that hands it the model's reply) on the published edge forms and on seeded random messages, and checks that
they agree on every input: the same accepted forms, the same refusals, the same answer. Where a box's function
itself was already checked value by value against the published code (the family documents), the reader's
differential compares our box on the message with our box on what the published parser extracts from it.
Refusals we keep on purpose are asserted as refusals and named in docs/oracle-worlds.md.

Our protocol reads an input from the reply's block, stripped of surrounding whitespace (runner/answers.py);
the published loop hands the whole reply over. So every message here is fed to both sides stripped.
"""

import math
import random
import re

import numpy as np
import pytest

from oracle_reading import (INFO, ORACLE, REFUSED, box, checkpoint_outside, code_ours, messages,
                            published_checkpoint, published_takes_assignments)
from worldspec.builtins import BUILTINS
from worldspec.compiler.api import InputError
from worldspec.values import Ctx


def ours(world, text, task=None):
    """Our box's answer to one message in a fresh session (REFUSED when it refuses the message)."""
    session = world.session(task)
    try:
        values = session.read(text)
    except InputError:
        return REFUSED
    return session.send(values)


# ------------------------------------------------------------------ IPI: the puzzles


def pub_marks(truth: str, query: str, n: int):
    """wordle_final.py / wordle_hard_final.py blackbox: n letters, isalpha and isupper, then A/M/X marks."""
    if len(query) != n or not query.isalpha() or not query.isupper():
        return REFUSED
    marks, used = ["X"] * n, [False] * n
    for i in range(n):
        if query[i] == truth[i]:
            marks[i], used[i] = "A", True
    for i in range(n):
        if marks[i] == "A":
            continue
        for j in range(n):
            if not used[j] and query[i] == truth[j] and i != j:
                marks[i], used[j] = "M", True
                break
    return "".join(marks)


def pub_number(truth: str, query: str):
    """number_guessing_final.py blackbox: `Number X`, X read by int() in 0..100, Far beyond 15 of the truth."""
    parts = query.strip().split()
    if len(parts) != 2 or parts[0] != "Number":
        return REFUSED
    try:
        guess = int(parts[1])
    except ValueError:
        return REFUSED
    if not 0 <= guess <= 100:
        return REFUSED
    return "Far" if abs(guess - int(truth.split()[1])) > 15 else "Close"


def pub_single_battleship(truth: str, query: str):
    """single_battleship_final.py blackbox: its coordinate pattern, a hit on the hidden row or column."""
    m = re.match(r"^\(\s*([1-9])\s*,\s*([1-9])\s*\)$", query.strip())
    if not m:
        return REFUSED
    x, y = int(m.group(1)), int(m.group(2))
    k = int(truth.split()[1])
    return "hit" if (x if truth.startswith("Row ") else y) == k else "miss"


def pub_battleship(truth: str, query: str):
    """battleship_final.py blackbox: (x, y) read by int() in 1..7; a hit on a ship or a marked cell."""
    q = query.strip()
    if not (q.startswith("(") and q.endswith(")")):
        return REFUSED
    inner = q[1:-1].split(",")
    if len(inner) != 2:
        return REFUSED
    try:
        x, y = int(inner[0].strip()), int(inner[1].strip())
    except ValueError:
        return REFUSED
    if not (1 <= x <= 7 and 1 <= y <= 7):
        return REFUSED
    lines = [line.strip() for line in truth.strip().split("\n") if line.strip()]
    return "hit" if lines[y - 1][x - 1] in "ABCO" else "miss"


def pub_nuts(truth: str, query: str):
    """nuts_and_bolts_final.py blackbox: three `Bolt X, Nut Y` pairs, numbers read by int() in 1..8."""
    parts = [x.strip() for x in query.split(";")]
    if len(parts) != 3:
        return REFUSED
    pairs = []
    for part in parts:
        items = [x.strip() for x in part.split(",")]
        if len(items) != 2 or not items[0].startswith("Bolt ") or not items[1].startswith("Nut "):
            return REFUSED
        try:
            b, n = int(items[0][5:]), int(items[1][4:])
        except ValueError:
            return REFUSED
        if not (1 <= b <= 8 and 1 <= n <= 8):
            return REFUSED
        pairs.append((b, n))
    own = [int(x.strip()[4:]) for x in truth.split(",")]
    return "; ".join("small" if n < own[b - 1] else "large" if n > own[b - 1] else "equal" for b, n in pairs)


def pub_heavy_truth(truth: str, query: str):
    """heavy_coin_hard_final.py blackbox before its lie: the two patterns, the coins, the honest reading."""
    if not re.match(r"^Left:\s*((Coin\s\d{1,3}(,\s*)?)*)\s*;\s*Right:\s*((Coin\s\d{1,3}(,\s*)?)*)$", query.strip()):
        return REFUSED
    left = [c.strip() for c in query.split(";")[0].replace("Left:", "").strip().split(",") if c.strip()]
    right = [c.strip() for c in query.split(";")[1].replace("Right:", "").strip().split(",") if c.strip()]
    seen = set()
    for c in left + right:
        if not re.match(r"^Coin\s([1-9][0-9]?|100)$", c) or c in seen:
            return REFUSED
        seen.add(c)
    if not left or not right:
        return REFUSED
    heavy = truth.replace("Heavy ", "").strip()
    return "Imbalance" if heavy in left or heavy in right else "Balance"


PUZZLES = {  # world: (the published function, edge forms, pieces for random messages)
    "ipi-e-wordle": (lambda t, q: pub_marks(t, q, 8),
                     ["ABSOLUTE", "ÉCOUTERA", "MAINTAIN", "maintain", "MAINTAİN", "ABSOLUTÉ", "ÀÉÎÕÜÇÑß", "\"ABSOLUTE\"",
                      "ABSOLUT", "ABSOLUTES", "ABSO LUT", "ÖÖÖÖÖÖÖÖ", "ǅǅǅǅǅǅǅǅ"],
                     ["ABSO", "LUTE", "MAIN", "TAIN", "ÉÉ", "ÖA", "Ab"]),
    "ipi-h-wordle-hard": (lambda t, q: pub_marks(t, q, 11),
                          ["INFORMATION", "ACCOMMODATE", "ÉÉÉÉÉÉÉÉÉÉÉ", "ÀCCOMMODATE", "informatioN", "INFORMATIO"],
                          ["INFOR", "MATION", "ACCOM", "MODATE", "É", "Ö"]),
    "ipi-e-number-guessing": (pub_number,
                              ["Number 42", "Number ٤٢", "Number ４２", "Number\u00a042", "Number\t42", "Number  42",
                               "Number +42", "Number 4_2", "Number 4__2", "Number ²", "Number 42.0", "number 42",
                               "Number 101", "Number -0", "Number", "Number 4 2"],
                              ["Number", " ", "4", "2", "٤", "100", "0"]),
    "ipi-e-single-battleship": (pub_single_battleship,
                                ["(3, 6)", "( 9 ,6 )", "(3,\u00a06)", "(3,\t6)", "(٣, 6)", "(0, 6)", "(3, 6", "Row 3",
                                 "(3, 6) ", "(10, 6)", "(3,,6)"],
                                ["(", ")", "3", "6", ", ", "9"]),
    "ipi-h-battleship": (pub_battleship,
                         ["(3, 5)", "(٣, 5)", "(3,\u00a05)", "(+3, 5)", "(3_0, 5)", "(0_3, 5)", "(3, 5, 1)", "(8, 5)",
                          "(３, ５)", "( 3 , 5 )", "3, 5", "(3.0, 5)"],
                         ["(", ")", "3", "5", "7", ", ", "1"]),
    "ipi-h-nuts-and-bolts": (pub_nuts,
                             ["Bolt 1, Nut 2; Bolt 2, Nut 3; Bolt 3, Nut 4", "Bolt ١, Nut 2; Bolt 2, Nut 3; Bolt 3, Nut 4",
                              "Bolt 1,\tNut 2; Bolt 2, Nut 3; Bolt 3, Nut 4", "Bolt 1, Nut 2;Bolt 2, Nut 3;Bolt 3, Nut 4",
                              "Bolt 1, Nut +2; Bolt 2, Nut 0_3; Bolt 3, Nut 4", "Bolt 1, Nut 9; Bolt 2, Nut 3; Bolt 3, Nut 4",
                              "Bolt\u00a01, Nut 2; Bolt 2, Nut 3; Bolt 3, Nut 4", "Bolt 1, Nut 2; Bolt 2, Nut 3"],
                             ["Bolt 1, Nut 2", "; ", "Bolt 3, Nut ٣", ";", "Bolt 8, Nut 8"]),
    "ipi-e-heavy-coin-hard": (pub_heavy_truth,
                              ["Left: Coin 1, Coin 2; Right: Coin 3, Coin 4", "Left: Coin 7; Right: Coin\u00a07",
                               "Left:Coin 7;Right:Coin 8", "Left: Coin\t7; Right: Coin 8", "Left: Coin ٧; Right: Coin 8",
                               "Left: Coin 1, Coin 1; Right: Coin 2", "Left: ; Right: Coin 2", "Left: Coin 07; Right: Coin 8",
                               "Left: Coin 1,, Coin 2; Right: Coin 3", "Left: Coin 101; Right: Coin 8",
                               "Left: Coin 1,Coin 2,; Right: Coin 3"],
                              ["Left: ", "Right: ", "Coin 7", "Coin 1", ", ", "; ", "Coin ٧", "Coin"]),
}


def truth_of(world, task):
    return world.test_of(task).expected


@pytest.mark.parametrize("name", sorted(PUZZLES))
def test_puzzle_boxes_read_messages_as_the_published_parsers(name):
    pub, edges, pieces = PUZZLES[name]
    w = box("puzzle", name)
    rng = random.Random(f"differential:{name}")
    sent = [e.strip() for e in edges] + messages(rng, pieces, 300)
    disagree = []
    for i, text in enumerate(sent):
        task = w.tests[i % len(w.tests)].id
        want = pub(truth_of(w, task), text)
        got = ours(w, text, task)
        if name == "ipi-e-heavy-coin-hard" and got is not REFUSED:
            # the first weighing of a session lies when its block's draw picked it (the state remembers the pick)
            s = w.session(task)
            s.send(s.read(text))
            if s.state["lie"] == 0:
                got = "Balance" if got == "Imbalance" else "Imbalance"
        if want != got:
            disagree.append((text, want, got))
    assert not disagree, disagree[:5]
    assert any(pub(truth_of(w, w.tests[0].id), e.strip()) is not REFUSED for e in edges)


# ------------------------------------------------------------------ IPI: noise drawn per puzzle


def test_every_heavy_coin_puzzle_lies_at_weighings_of_its_own():
    """Six puzzles, four blocks of ten weighings each: a block's lie sits at one of ten weighings, so two
    independent puzzles put it at the same weighing one time in ten; one shared stream, every time."""
    for seed in (5104, 7, 123):
        w = box("puzzle", "ipi-e-heavy-coin-hard", seed)
        lies = []
        for case in w.tests:
            s = w.session(case.id)
            heavy = case.expected.replace("Heavy ", "")
            honest = "Left: Coin 1; Right: Coin 2" if heavy not in ("Coin 1", "Coin 2") else "Left: Coin 3; Right: Coin 4"
            answers = [s.send(s.read(honest)) for _ in range(40)]
            lies.append(tuple(k % 10 for k, a in enumerate(answers) if a == "Imbalance"))
            assert len(lies[-1]) == 4  # exactly one lie per block of ten
        same = sum(a[b] == c[b] for i, a in enumerate(lies) for c in lies[i + 1:] for b in range(4))
        # 60 block pairs; independent puzzles coincide about 6 times (P(more than 20) < 1e-6)
        assert same <= 20, (seed, lies)


def chi_square_2x2(xs, ys) -> float:
    """Pearson's chi-square of the 2x2 table of two 0/1 sequences (0 when a margin is empty)."""
    n = len(xs)
    table = [[sum(1 for x, y in zip(xs, ys) if x == a and y == b) for b in (0, 1)] for a in (0, 1)]
    rows, cols = [sum(r) for r in table], [table[0][b] + table[1][b] for b in (0, 1)]
    if 0 in rows or 0 in cols:
        return 0.0
    return sum((table[a][b] - rows[a] * cols[b] / n) ** 2 / (rows[a] * cols[b] / n) for a in (0, 1) for b in (0, 1))


def test_every_bandit_puzzle_draws_rewards_of_its_own():
    """Pulling the same arm in two puzzles: with one shared stream the rewards repeat pull for pull (a chi-square
    of several hundred); independent streams give a 2x2 chi-square below 10.83 (p = 0.001) and agree far less."""
    w = box("puzzle", "ipi-e-3-arms-bandit")
    streams = []
    for case in w.tests:
        s = w.session(case.id)
        streams.append([1 if s.send(s.read("Bandit A")) == "Reward: 1" else 0 for _ in range(400)])
    chances = [sum(x) / 400 for x in streams]
    for i in range(len(streams)):
        for j in range(i + 1, len(streams)):
            assert chi_square_2x2(streams[i], streams[j]) < 10.83, (i, j)
            assert streams[i] != streams[j]
    # goal 1 and goal 5 both hide Bandit A (0.7); the others pay 0.2 or 0.1 on A
    assert chances[0] > 0.6 and chances[4] > 0.6 and max(chances[1], chances[2], chances[3], chances[5]) < 0.3


# ------------------------------------------------------------------ CRI: circuit bits in free text


def pub_bits(name: str, s: str, n: int):
    """The published circuit boxes' readers (each box's `parse_input_bits`, `parse_bit_list`, or its `main`)."""
    bracket = re.search(r"\[([01][,\s]*){%d}\]" % n, s)
    anywhere = re.findall(r"[01]", s)
    if name in ("cri-e-swap", "cri-h-arbitrary"):
        return anywhere if len(anywhere) == n else None
    if name in ("cri-e-consequece", "cri-h-greater", "cri-e-palindrome", "cri-e-xor-seq"):
        if bracket:
            return re.findall(r"[01]", bracket.group(0))
        if len(anywhere) == n:
            return anywhere
        if name == "cri-e-palindrome":
            return None
        run = re.search(r"\b[01]{%d}\b" % n if name == "cri-e-xor-seq" else r"([01]{%d})" % n, s)
        return list(run.group(0)) if run else None
    if name == "cri-e-random-small":
        m = re.search(r"\[([01][,\s]*){3,}\]", s)
        if m and len(re.findall(r"[01]", m.group(0))) == 4:
            return re.findall(r"[01]", m.group(0))
        return anywhere[:4] if len(anywhere) >= 4 else None
    if name in ("cri-h-add", "cri-h-matrixmul"):
        words = re.findall(r"\b[01]\b", re.sub(r"[\[\],]", " ", s))
        return words if len(words) == n else None
    if name in ("cri-h-and-tree", "cri-h-compare", "cri-h-consequece-k"):
        drop = r"[\[\]\(\)]" if name == "cri-h-compare" else r"[\[\]\(\)\{\}]"
        tokens = [t for t in re.split(r"[,\s]+", re.sub(drop, "", s.strip())) if t != ""]
        return tokens if len(tokens) == n and all(t in ("0", "1") for t in tokens) else None
    if name == "cri-h-count":
        if bracket:
            return re.findall(r"[01]", bracket.group(0))
        words = re.findall(r"\b[01]\b", s)
        if len(words) == n:
            return words
        return anywhere if len(anywhere) == n else None
    if name == "cri-h-path":
        if bracket:
            return re.findall(r"[01]", bracket.group(0))
        run = re.search(r"([01][\s,]*){9}", s)
        if run:
            return re.findall(r"[01]", run.group(0))
        return anywhere if len(anywhere) == n else None
    if name == "cri-h-random-big":
        kept = re.findall(r"[01]", re.sub(r"[\[\]\(\)\{\}]", "", s.strip()))
        return kept if len(kept) == n else None
    raise AssertionError(name)


CIRCUITS = {"cri-e-consequece": 8, "cri-e-palindrome": 8, "cri-e-random-small": 4, "cri-e-swap": 9, "cri-e-xor-seq": 8,
            "cri-h-add": 10, "cri-h-and-tree": 8, "cri-h-arbitrary": 7, "cri-h-compare": 10, "cri-h-consequece-k": 10,
            "cri-h-count": 7, "cri-h-greater": 6, "cri-h-matrixmul": 9, "cri-h-path": 9, "cri-h-random-big": 7}


def bit_messages(rng: random.Random, n: int, count: int) -> list[str]:
    out = []
    for _ in range(count):
        bits = [rng.choice("01") for _ in range(rng.choice([n, n, n, n - 1, n + 1]))]
        sep = rng.choice([", ", " ", ",", "", "\t", "\u00a0", " , ", ";"])
        body = sep.join(bits)
        wrap = rng.choice(["[{}]", "({})", "{{{}}}", "Input: [{}]", "{}.", "bits {}", "{} 2", "x = {}", "{}"])
        out.append(wrap.format(body))
    return out


@pytest.mark.parametrize("name", sorted(CIRCUITS))
def test_circuit_boxes_read_free_text_bits_as_the_published_parsers(name):
    """The box answers a message as it answers the bits the published reader finds in it, and refuses exactly
    the messages that reader cannot read (the gates themselves: docs/oracle-published.md)."""
    n = CIRCUITS[name]
    w = box("circuit", name)
    edges = ["Input: [1, 1, 0, 0]", "0 1 1 1.", "[" + ", ".join("10" * n)[: 3 * n - 2] + "]", "1" * n, "1 " * n,
             "0" * (n + 1), "[1, 0, 2]", "bits: " + "0 1 " * (n // 2), "1,0," * n, "hello"]
    disagree = []
    for text in [e.strip() for e in edges] + bit_messages(random.Random(f"differential:{name}"), n, 150):
        read = pub_bits(name, text, n)
        want = REFUSED if read is None else w.session().send([[int(b) for b in read]])
        got = ours(w, text)
        if want != got:
            disagree.append((text, read, got))
    assert not disagree, disagree[:5]


# ------------------------------------------------------------------ ERI: the messages the loops filter

LETTERS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz ")


def keep(s: str) -> str:
    return "".join(c for c in s if c.isalpha() or c == " ")


def first_line(s: str) -> str:
    return s.strip().split("\n")[0]


def first_lettered_line(s: str) -> str:
    lines = [line.strip() for line in s.strip().split("\n") if line.strip()]
    return next((line for line in lines if all(c.isalpha() or c == " " for c in line)), "")


def first_filled_line(s: str) -> str:
    lines = [line.strip() for line in s.split("\n") if line.strip() != ""]
    return keep(lines[0] if lines else "")


CIPHER_READERS = {  # world: what the published `main` (and, where it filters, `blackbox`) makes of a message
    "eri-e-01248-encryption-1": lambda s: keep(first_line(s)),
    "eri-e-01248-encryption-2": keep,
    "eri-e-adhxz-encryption": keep,
    "eri-e-backpack-encryption": lambda s: "".join(c for c in s.strip() if c.isalpha()),
    "eri-e-bacon-cipher": lambda s: keep(first_line(s)),
    "eri-e-caesar-cipher": keep,
    "eri-e-idx-shift-encryption": first_lettered_line,
    "eri-e-simple-substitution": lambda s: keep(s).strip(),
    "eri-e-zigzag-cipher": lambda s: "".join(c for c in first_line(s) if c.isalpha()),
    "eri-h-compositional-encryption": lambda s: keep(s.strip()),
    "eri-h-frequency-encryption": lambda s: "".join(c for c in s.strip() if c in LETTERS),
    "eri-h-hill-cipher": keep,
    "eri-h-playfair-cipher": keep,
    "eri-h-positional-keyword-cipher": keep,
    "eri-h-rsa-encryption": lambda s: "".join(c for c in first_line(s) if c.isalpha()),
    "eri-h-sequential-feedback-cipher": first_filled_line,
    "eri-h-vigenere-encryption": keep,
}


def cipher_messages(rng: random.Random, count: int) -> list[str]:
    words = ["hello", "World", "abc", "Zebra", "x", "quiz", "attack", "AT", "dawn"]
    seps = [" ", ", ", "! ", ".", "\n", " 12 ", "\t", "'s ", "-", "  ", "?", "\n\n", "é", "É"]
    return ["".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(1, 5))).strip() or "a"
            for _ in range(count)]


@pytest.mark.parametrize("name", sorted(CIPHER_READERS))
def test_cipher_boxes_read_messages_as_the_published_loops_filter_them(name):
    """The box enciphers a message as it enciphers the text the published loop keeps of it; a kept letter outside
    A-Z and a-z (é, É) is refused on purpose (docs/oracle-worlds.md)."""
    reader = CIPHER_READERS[name]
    w = box("encryption", name)
    edges = ["hello, world!", "Hello World.", "attack at dawn!!", "it's 12 o'clock", "two\nlines", "  padded  ", "a-b-c",
             "123", "café", "ÉTÉ"]
    refused, bad = 0, []
    for text in [e.strip() for e in edges] + cipher_messages(random.Random(f"differential:{name}"), 150):
        kept = reader(text)
        got = ours(w, text)
        if not set(kept) <= LETTERS:
            refused += 1
            if got is not REFUSED:
                bad.append((text, kept, got))
            continue
        if got is REFUSED:
            bad.append((text, kept, got))
        elif reader(kept) == kept:  # the box on the clean text reads it unchanged: its function's answer there
            want = w.session().send([kept])  # (the function itself was checked against the published code)
            if got != want:
                bad.append((text, kept, got, want))
    assert not bad, bad[:5]
    assert ours(w, "hello, world!") == w.session().send([reader("hello, world!")])


def test_the_whitespace_ciphers_encipher_punctuation_as_the_published_table_does():
    """curve_cipher and dynamic_curve_cipher take the message as sent and drop only its whitespace
    ("".join(plaintext.split())): punctuation and digits are written into the table like letters."""
    for name in ("eri-e-curve-cipher", "eri-h-dynamic-curve-cipher"):
        w = box("encryption", name)
        for text in ["hello, world!", "a b\tc\u00a0d", "x1y2z3"]:
            squeezed = "".join(text.split())
            got = ours(w, text)
            # the columns are written apart by single spaces: every character of the table appears once
            assert sorted(got.replace(" ", "")) == sorted(squeezed) and got == ours(w, squeezed)
    assert ours(box("encryption", "eri-e-curve-cipher"), "hello, world!") == "!, od ll lr oe hw"  # the published
    fib = box("encryption", "eri-e-fib-cipher")
    assert ours(fib, "ab, c!") == ours(fib, "ab c")[:2] + ", " + ours(fib, "ab c")[3:] + "!"
    assert ours(fib, "café") is REFUSED  # the published char_to_num returns None for é, and the box fails


# ------------------------------------------------------------------ PSI: times as float() reads them

TIMES = ["1.7", "1e-3", " 2.5 ", "2.", ".5", "+3", "1_000", "٣", "３.５", "1E1", "inf", "nan", "-inf", "Infinity",
         "(2.5)", "2.5,", "+ 2.5", "2,5", "0x10", "1__0", "soon", "\"2.5\"", "2.5\u00a0"]


def pub_float(text: str):
    try:
        return float(text)
    except ValueError:
        return None


@pytest.mark.parametrize("name", ["psi-e-cycloid", "psi-e-horizontal-projectile-infheight", "psi-h-bullet-object"])
def test_physics_boxes_read_times_as_pythons_float(name):
    """A time is read as float() reads the message; inf and nan are refused with the range (docs)."""
    w = box("physics", name)
    for text in TIMES:
        t = pub_float(text.strip())
        got = ours(w, text.strip())
        if t is None or not math.isfinite(t) or not -1000000 <= t <= 1000000:
            assert got is REFUSED, text
        else:
            assert got == ours(w, repr(t)), text


def pub_freefall(text: str):
    """freefall_infheight_final.py: float() of the message, a negative or unreadable time read as 0, y = -5 t^2."""
    t = pub_float(text)
    t = 0.0 if t is None or t < 0 else t
    try:
        y = -0.5 * 10.0 * (t ** 2)
    except OverflowError:
        return REFUSED  # the published loop does not catch it: refused here (docs)
    return {"object1": [0.0, round(y, 2), 0.0]}


def test_freefall_infheight_answers_every_message_as_the_published_loop():
    w = box("physics", "psi-e-freefall-infheight")
    rng = random.Random("differential:freefall")
    sent = TIMES + ["2000000", "1e200", "1.3e154", "-2.5", "0"] + [repr(rng.uniform(-50, 50)) for _ in range(100)]
    for text in [s.strip() for s in sent]:
        want, got = pub_freefall(text), ours(w, text)
        if want is REFUSED or got is REFUSED:
            assert want is got, text
            continue
        y, z = want["object1"][1], got["object1"][1]
        assert (y != y and z != z) or y == z, (text, want, got)


def test_np_round_is_numpys_round_on_a_dense_grid():
    """np_round, which the three-balls box uses (it rounds numpy floats), against numpy itself."""
    np_round = BUILTINS["np_round"][0]
    for k in range(4001):
        for speed in (3.0, 4.0, 1.0 / 3.0, -2.6):
            x = speed * (k * 0.005)
            assert np_round(Ctx(10), x, 2) == float(round(np.float64(x), 2)), x
    assert np_round(Ctx(10), 0.015, 2) == 0.02 and round(0.015, 2) == 0.01


# The published box's answers (three_balls_collision_final.py run with scipy in a scratch folder) at times where
# Python's round, numpy's round of the exact motion, or both, give another second decimal than the published
# RK45 dense output rounded by numpy: the world restates that integrator, its events and brentq, bit for bit.
# (More of them, 1.715 -> (5.15, 15.15, 13.14), 2.425 -> (7.28, 17.28, 10.3), 2.885 -> (8.66, 18.66, 8.46), take
# seconds each; the scratch run of docs/oracle-worlds.md compared all 4,001 times of the 0.005 grid.)
THREE_BALLS = {0.005: (0.02, 10.02, 19.98), 0.015: (0.05, 10.04, 19.94), 0.335: (1.01, 11.0, 18.66),
               0.865: (2.6, 12.6, 16.54), 1.435: (4.31, 14.31, 14.26)}


def test_three_balls_answers_the_published_positions_on_rounding_edges():
    w = box("physics", "psi-h-three-balls-collision")
    for t, xs in THREE_BALLS.items():
        got = ours(w, repr(t))
        assert [got[f"object{i + 1}"][0] for i in range(3)] == list(xs), t
        naive = [round(3.0 * t, 2), round(10 + 3.0 * t, 2), round(20 - 4.0 * t, 2)]
        assert t > 1.43 or naive != list(xs)  # before the first event Python's round of the exact motion differs


# ---------------------------------------------------------------- CII: the code boxes' reader

# The published code boxes' `platform` (platforms/code/<level>/<box>_final.py) reads a message three ways: '' asks
# for the parameters; condition 2 takes some messages as assignments, split into pieces at ';' (blank ones
# skipped), each split at the first '=', the name one of blackbox's parameters and an int parameter's value read by
# int() (a later assignment to the same name wins); any other message is a checkpoint query, read by a regular
# expression. Which messages condition 2 takes, whether it splits, and the checkpoint pattern differ box by box
# (read in each box's file; restated here, independently of the domains' code):
#   exgcd: ';' or '=', split; re.match(r'\(\s*(\d+)\s*,\s*(\d+)\s*\)', text) (a prefix, Unicode digits)
#   algebraic_operations, highprecision_add: '=' and ';', split; that prefix match
#   highprecision_divide: '=' and ';', split; re.match(r'\((\d+),\s*(\d+)\)', text.strip())
#   factorial_recursion, fib_recursion: '=', split; the prefix match
#   sieve_of_eratosthenes: '=', the whole message one assignment; the tight match
#   coins_for_fowls: re.match(r'^(\w+\s*=\s*[^;]+;\s*)*(\w+\s*=\s*[^;]+)$'), re.findall of the pieces;
#       checkpoint re.match(r'^\(\s*\d+\s*,\s*\d+\s*\)$')
#   complex_algebraic_operations: that assignment pattern, re.split(r';\s*'); the same checkpoint pattern, then
#       eval(text): a Python tuple literal (ASCII digits, no leading zero, Python's whitespace)
# Restated for the boxes whose parameters are all integers; our boxes read with the blank, pyassign and
# pycheckpoint domains. The shared conditions are restated in tests/oracle_reading.py; the list- and
# string-parameter boxes' readers are compared in tests/test_oracle_differential_code.py.
CII_INT_BOXES = {"cii-e-algebraic-operations": ("and", "prefix"), "cii-e-coins-for-fowls": ("full", "full"),
                 "cii-e-exgcd": ("or", "prefix"), "cii-e-factorial-recursion": ("eq", "prefix"),
                 "cii-e-fib-recursion": ("eq", "prefix"), "cii-e-highprecision-add": ("and", "prefix"),
                 "cii-e-highprecision-divide": ("and", "tight"),
                 "cii-h-complex-algebraic-operations": ("full", "literal"),
                 "cii-h-sieve-of-eratosthenes": ("whole", "tight")}


def published_code_read(text, params, mode="or", match="prefix"):
    """The published platform's reading: INFO, ("set", {name: int}), ("ask", (idx, iter)), or REFUSED."""
    if text == "":
        return INFO
    if published_takes_assignments(text, mode):
        got = {}
        for part in [text] if mode == "whole" else text.split(";"):
            if not part.strip():
                continue
            if "=" not in part:
                return REFUSED
            name, value = part.split("=", 1)
            if name.strip() not in params:
                return REFUSED
            try:
                got[name.strip()] = int(value.strip())
            except ValueError:
                return REFUSED
        return ("set", got)
    return published_checkpoint(text, match)


def code_ranges(name):
    text = (ORACLE / "code" / f"{name}.world").read_text()
    return {k: (int(lo), int(hi)) for k, lo, hi in re.findall(r'"(\w+)": int\((-?\d+), (-?\d+)\)', text)}


def out_of_range(pub, ranges) -> bool:
    """Whether the published reading holds a value outside our box's ranges: the one disagreement kept, on
    purpose (docs/fidelity.md, oracle-boxes, 'CII reading'; the ranges in docs/oracle-published-code.md)."""
    if pub[0] == "set":
        return any(not (lo <= pub[1][k] <= hi) for k, (lo, hi) in ranges.items() if k in pub[1])
    return checkpoint_outside(pub[1])


CODE_EDGES = ["", ";", " ; ", "{a} = 12", "{a}=12; {b} = 7", " {a} = 5 ;", "{a} = ٣", "{a} = 1_0", "{a} = +5",
              "{a} = -3", "{a} = 5.0", "{a} = 1e1", "{a} = (5)", "{a} = 0x10", "{a} == 5", "{a} = 4; {a} = 5",
              "{a} = 5; ;{b} = 3", "{a}=\u00a05", "{a} = 5\t", "{a} = '5'", "{a} = 5, {b} = 3", "{a} = 5; {b}",
              "A = 5", "x = 1", "(1, 2)", "( 1 ,2 )", "(1,2)", "(1,  2)", "(١, 2)", "(1, 2) more", "(1, 2);",
              "(1, 2); {a} = 3", "(１, ७)", "(01, 2)", "(00, 1)", "{a} = 4", "{a} = 4;", "{a} = 4; {b} = 5;",
              "(+1, 2)", "(1, 0)", "(25, 1)", "(1, 2, 3)", "1, 2", "[1, 2]", "(1,\u00a02)",
              "{a} = 99999999999999999999999999"]


@pytest.mark.parametrize("name", sorted(CII_INT_BOXES))
def test_code_boxes_read_messages_as_the_published_platform(name):
    """Every message reads the same on both sides (the parameter question, the same assignments, the same
    checkpoint query, or both refused), except a value outside our box's ranges, which we refuse on purpose."""
    world = box("code", name)
    ranges = code_ranges(name)
    params = list(ranges)
    a, b = params[0], params[-1]
    lo = {k: max(r[0], 1) for k, r in ranges.items()}
    preset = "; ".join(f"{k} = {v}" for k, v in lo.items()) + (";" if CII_INT_BOXES[name][0] == "and" else "")
    rng = random.Random(name)
    pieces = [a, b, "=", ";", " ", "1", "2", "3", "17", "٣", "_", "-", "+", ".0", "e1", "(", ")", ",", "x", "'"]
    msgs = [m.format(a=a, b=b) for m in CODE_EDGES] + messages(rng, pieces, 150)
    kinds = set()
    for text in msgs:
        text = text.strip()  # as our protocol and parse_input hand it over (module docstring): ' ' is ''
        pub = published_code_read(text, params, *CII_INT_BOXES[name])
        mine = code_ours(world, text, preset)
        kinds.add("refused" if pub is REFUSED else "info" if pub is INFO else pub[0])
        if pub is not INFO and pub is not REFUSED and mine is REFUSED and out_of_range(pub, ranges):
            continue  # deliberate: our box bounds its inputs
        assert mine == pub or mine is pub, (text, pub, mine)
    assert kinds == {"refused", "info", "set", "ask"}, kinds  # the messages reach every published reading


def test_the_empty_message_names_the_inputs_and_a_lone_semicolon_assigns_nothing():
    """The published `platform` answers '' with the parameters and checkpoint count, and `;` with `Set {...}.`
    unchanged (condition 2 with only blank pieces); ours answers both, leaving the inputs as they were."""
    world = box("code", "cii-e-exgcd")
    session = world.session(None)
    assert session.send(session.read("a = 30; b = 12")) == 'Set {"a": 30, "b": 12}.'
    assert session.send(session.read("")) == "The box's inputs are a, b; it has 3 checkpoints."
    assert session.send(session.read(";")) == 'Set {"a": 30, "b": 12}.'
    assert session.send(session.read("(1, 1) and more")) == {"a": 30, "b": 12, "x1": 1, "x2": 0, "y1": 0, "y2": 1}


def test_code_box_string_values_lose_their_quotes_as_the_published_strip_does():
    """A str parameter's value is `var_value.strip('"\'')` in the published `platform`: quoted or bare, the same."""
    world = box("code", "cii-e-kmp")
    session = world.session(None)
    assert session.read("t1 = 'abab'; t2 = ab") == [{"t1": "abab", "t2": "ab"}]
    assert session.read('t1 = "abab";') == [{"t1": "abab"}]  # kmp's condition 2 needs '=' and ';'


def test_code_boxes_of_the_other_readers_read_as_their_published_platforms():
    """The readers of the list- and string-parameter boxes: manacher (`^\\s*[\\w_]+\\s*=`, one pair of matching
    quotes, the whole pair), quicksort (the whole message one assignment, the tight checkpoint pattern)."""
    def read(name, text):
        session = box("code", name).session(None)
        session.send(session.read("s = ab" if name == m else "arr = [1]"))  # a pair asks for set inputs
        try:
            return session.read(text)[0]
        except InputError:
            return REFUSED
    m = "cii-h-manacher"
    assert read(m, "s = 'abc'") == {"s": "abc"} and read(m, "s = abc") == {"s": "abc"}
    assert read(m, "s = 'abc") is REFUSED  # the quote stays, and is not one of the box's characters
    assert read(m, "x; s = ab") is REFUSED and read(m, "s = ab;;") == {"s": "ab"}
    assert read(m, "(1, 2) more") is REFUSED and read(m, "(١, 2)") == [1, 2]
    q = "cii-e-quicksort-recursion"
    assert read(q, "arr = [3, 1]") == {"arr": [3, 1]} and read(q, "arr = [3, 1]; arr = [2]") is REFUSED
    assert read(q, "(1,2)") == [1, 2] and read(q, "(1,  2) x") == [1, 2] and read(q, "( 1, 2)") is REFUSED


def representable(v) -> bool:
    """Whether the published readers can be sent v at all: a string holding ';' is split, edge quotes are
    stripped, and surrounding spaces (`value.strip()`) are lost."""
    strings = [x for x in v.values() if type(x) is str] if isinstance(v, dict) else []
    return not any(";" in x or "=" in x or x != x.strip() or x[:1] in "'\"" or x[-1:] in "'\"" for x in strings)


@pytest.mark.parametrize("name", sorted(p.stem for p in (ORACLE / "code").glob("cii-*.world")))
def test_code_box_inputs_are_written_as_their_own_reader_reads_them(name):
    """Every drawn query a published reader can be sent is written (as agents, probes and tests write it) in a
    form the box reads back as itself: `;` after a lone assignment where the box needs it, strings unescaped."""
    world = box("code", name)
    d = world.inputs[0][1]
    rng = random.Random(name)
    for v in [d.draw(rng) for _ in range(40)] + [None, {}]:
        if representable(v) and d.check(v) is None:  # {} only where `;` alone reads as no assignment
            assert d.read(d.write(v), "q") == v, (v, d.write(v))


# ---------------------------------------------------------------- GSI: the rps7 judges and move readers

# platforms/game/easy/rps7_{cycle,beat_last,imitate_last}_final.py `platform`: a move is the reply
# `.strip().lower()` when it is one of the seven gestures, else the box asks again (no round spent; the worlds'
# `published_read`, used under published grading); the round is
# a tie for the same gesture, +1 when the opponent's gesture is in the player's `beats` list, -1 when the
# player's is in the opponent's, else 0. The opponents: cycle plays the seven in order; beat_last opens with rock,
# then the first gesture (in the table's order) whose list holds the player's last move; imitate_last opens with
# fire and air, then the player's move of two rounds before.
RPS7_BEATS = {"rock": ["scissors", "sponge", "fire"], "paper": ["rock", "water", "air"],
              "scissors": ["paper", "sponge", "fire"], "fire": ["scissors", "paper", "sponge"],
              "water": ["rock", "fire", "scissors"], "air": ["fire", "rock", "water"],
              "sponge": ["water", "paper", "air"]}
RPS7_OPPONENTS = {
    "gsi-e-rps7-cycle": lambda mine: list(RPS7_BEATS)[len(mine) % 7],
    "gsi-e-rps7-beat-last": lambda mine: "rock" if not mine else next(a for a, b in RPS7_BEATS.items() if mine[-1] in b),
    "gsi-e-rps7-imitate-last": lambda mine: ["fire", "air"][len(mine)] if len(mine) < 2 else mine[-2],
}
RPS7_ODD = [" Rock ", "ROCK", "rock.", "rok", "rock paper", "Sponge\n", "\tair", "ＲＯＣＫ", "'rock'", "roc k", "FIRE!"]


def rps7_round(mine, theirs):
    if mine == theirs:
        return 0
    if theirs in RPS7_BEATS[mine]:
        return 1
    return -1 if mine in RPS7_BEATS[theirs] else 0


@pytest.mark.parametrize("name", sorted(RPS7_OPPONENTS))
def test_rps7_boxes_read_moves_and_score_rounds_as_the_published_platforms(name):
    """Under published grading (the run's default) every reply is read as the platform reads it: no forgiven
    form is left. The other nine GSI boxes: tests/test_oracle_differential_game.py."""
    world = box("game", name)
    rng = random.Random(name)
    refused = set()
    for game in range(5):
        play = world.test_play("g1", grading="published")
        mine, score, theirs = [], 0, []
        while not play.done:
            text = rng.choice(RPS7_ODD) if rng.random() < 0.3 else rng.choice(list(RPS7_BEATS)).capitalize()
            published = text.strip().lower() if text.strip().lower() in RPS7_BEATS else None
            fb = play.play(text)
            assert (fb.status == "ok") == (published is not None), (name, text, fb.status)
            if published is None:
                assert fb.units == 0
                refused.add(text)
                continue
            move = RPS7_OPPONENTS[name](mine)
            score += rps7_round(published, move)
            mine.append(published)
            theirs.append(move)
        assert [r.theirs for r in play.match.rounds] == theirs, name
        assert play.match.score == score, (name, mine)
    assert {"rock.", "'rock'", "FIRE!"} & refused, refused  # the forms once forgiven were sent, and asked again


@pytest.mark.parametrize("name", sorted(RPS7_OPPONENTS))
def test_rps7_boxes_still_forgive_under_lenient_grading(name):
    """Lenient grading keeps the forgiving reader (GameWorld.read_move): surrounding backticks, quotes, a
    trailing '.' or '!', case and spacing."""
    world = box("game", name)
    for text, move in [("rock.", "rock"), ("'rock'", "rock"), ("FIRE!", "fire"), ("`air`", "air"), ("Rock", "rock")]:
        play = world.test_play("g1")
        assert play.play(text).status == "ok" and play.match.rounds[-1].mine == move, (name, text)
        strict = world.test_play("g1", grading="published")
        assert (strict.play(text).status == "ok") == (text.strip().lower() in RPS7_BEATS), (name, text)
