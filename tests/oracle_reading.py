"""Helpers shared by the differentials of the published Oracle boxes' readers (tests/test_oracle_differential.py,
tests/test_oracle_differential_code.py): the boxes, the odd characters random messages are made of, and the
code boxes' reading on our side and on the published side's common conditions (docs/oracle-worlds.md)."""

import random
import re
from pathlib import Path

from worldspec.compiler import load_world
from worldspec.compiler.api import InputError

ORACLE = Path(__file__).resolve().parent.parent / "worlds" / "oracle"
REFUSED = object()  # the box refuses the message
INFO = object()  # a code box's parameter question (the empty message)


def box(family: str, name: str, seed=None):
    """An Oracle world of ours, by family folder and file name."""
    return load_world(str(ORACLE / family / f"{name}.world"), seed)


# Forms a Python parser tells apart: Unicode digits (Arabic-Indic, fullwidth, Devanagari), a superscript (a
# digit to isdigit but not to int), no-break and em spaces, the tab, accented capitals and small letters.
ODD = ["٣", "５", "७", "²", "\u00a0", "\u2003", "\t", "É", "Ö", "é", "ß", "_", "+", "-", " ", ",", ";", "(", ")",
       "[", "]", ".", "!", "'", '"']


def messages(rng: random.Random, pieces: list[str], n: int) -> list[str]:
    """n seeded messages: the box's own pieces glued with odd characters, or odd characters alone."""
    out = []
    for _ in range(n):
        k = rng.randint(1, 6)
        parts = [rng.choice(pieces + ODD) if rng.random() < 0.7 else rng.choice(ODD) for _ in range(k)]
        text = "".join(parts).strip()
        out.append(text or rng.choice(pieces))
    return out


# ---------------------------------------------------------------- the code boxes (CII)

def published_takes_assignments(text, mode):
    """Whether a published code box's `platform` condition 2 takes the message (the modes: test_oracle_differential's
    CII section; "named" is hard/manacher_final.py's `re.match(r'^\\s*[\\w_]+\\s*=', ...)`)."""
    if mode == "or":
        return ";" in text or "=" in text
    if mode == "and":
        return "=" in text and ";" in text
    if mode == "full":
        return re.match(r"^(\w+\s*=\s*[^;]+;\s*)*(\w+\s*=\s*[^;]+)$", text) is not None
    if mode == "named":
        return re.match(r"^\s*[\w_]+\s*=", text) is not None
    return "=" in text


def published_checkpoint(text, match):
    """A published condition 3: ("ask", (idx, iter)) or REFUSED. "prefix" is exgcd's pattern on the message,
    "tight" highprecision_divide's on the stripped message, "full" coins_for_fowls' whole pair,
    "manacher" manacher's whole pair with spaces after it, "literal" complex_algebraic_operations' full pattern and eval."""
    if match == "prefix":
        m = re.match(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)", text)
    elif match == "tight":
        m = re.match(r"\((\d+),\s*(\d+)\)", text.strip())
    elif match == "manacher":
        m = re.match(r"^\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*$", text)
    else:
        m = re.match(r"^\(\s*(\d+)\s*,\s*(\d+)\s*\)$", text)
        if m and match == "literal":  # eval(text): Python's tokenizer takes neither non-ASCII digits or spaces
            ok = all(g.isascii() and (g == "0" * len(g) or g[0] != "0") for g in m.groups())
            m = m if ok and all(c in "0123456789(), \t\f\n\r" for c in text) else None
    return ("ask", (int(m.group(1)), int(m.group(2)))) if m else REFUSED


def checkpoint_outside(pair) -> bool:
    """Whether a checkpoint query is outside our boxes' ranges (checkpoint 0..20, visit 1..100,000)."""
    idx, it = pair
    return not (0 <= idx <= 20 and 1 <= it <= 100000)


def code_ours(world, text, preset):
    """Our box's reading of text in a session whose inputs are set: REFUSED, INFO, ("set", map) or ("ask", pair)."""
    session = world.session(None)
    session.send(session.read(preset))
    try:
        values = session.read(text)
    except InputError:
        return REFUSED
    v = values[0]
    if v is None:
        return INFO
    return ("set", v) if isinstance(v, dict) else ("ask", tuple(v))
