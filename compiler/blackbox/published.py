"""Answers read and compared as the released Oracle harness reads and compares them.

The released code (lemonsis/Oracle_Benchmark, eva_models.py, `ReasoningLLM.evaluate`) compares each
family's answers its own way; `worldspec run --grading published` (the default) grades by these rules,
restated here (no code of theirs is copied):

- CII (code): `str(truth)` with its spaces removed equals the reply with its spaces removed; the first
  reply of a test is `rstrip('\\n')`-ed first, a retry's reply is compared as it came.
- ERI (encryption) and IPI (puzzles): `truth == reply` exactly, the first reply `rstrip('\\n')`-ed; before
  the comparison a reply that fails the format check is asked again, at most twice (ERI:
  `check_text_format`, letters, digits, spaces and commas only; IPI: the platform's
  `check_answer_format`).
- CRI (circuits): every reply has "```python" and "```" removed, is read with `json.loads` and compared
  with `==` (so `[true, false]` answers `[1, 0]`); a reply json cannot read is a wrong try.
- PSI (physics): the first reply is `rstrip('\\n')`-ed, a "```json" fence taken out when the reply says
  `json`, and read with `ast.literal_eval` as a dict (asked again at most twice otherwise); it is right
  when it has as many objects as the truth and each object's first three coordinates are within 0.01
  (`abs(a - b) > 0.01` fails). A retry's reply is passed to the same check unparsed, so it never passes
  (the released code then compares a string with the dict).

Where the released code would stop with an exception (a missing object, a coordinate that is not a
number), the answer is wrong here.
"""
from __future__ import annotations

import ast
import json
import re
import string

# The released harness's messages (eva_models.py `evaluate`), restated.
RETRY = "Your answer is wrong. Please try again. DO NOT output any other text, ONLY output the answer."
CORRECT_NEXT = "Your answer is correct. Let's move to next question."
WRONG_NEXT = "Your answer is wrong. Let's move to next question."
PUZZLE_CORRECT, PUZZLE_WRONG = "Your answer is correct.", "Your answer is wrong."
CIRCUIT_FORMAT = ("Please strictly follow the format. Output a 0/1 list without anything else. For example:\n"
                  "[0, 1, 0, 1]\n")
ERI_REASK = ("You must only return the result of the blackbox function, without any other unrelated text or "
             "symbols. Please try again.")
IPI_REASK = ("You must only return the answer of the blackbox puzzle, strictly following the instructions in the "
             "puzzle rules, without more unrelated text or symbols. Please try again.")
PSI_REASK = 'Strictly follow the output format `{"object1": (x, y, z), "object2": (x, y, z), ...}`. Please try again.'
FAMILIES = ("CII", "CRI", "PSI", "ERI", "IPI")  # the black-box families the released code compares
FORMAT_REASKS = 2  # the released loops ask again at most twice (`if times > 1: break`)
PSI_EPS = 0.01

# A reply is read up to this many characters (literal_eval and json of longer text are not attempted).
MAX_ANSWER_CHARS = 200_000

_ERI_CHARS = frozenset(string.ascii_letters + string.digits + " ,")
_JSON_FENCE = re.compile(r"```json\n(.*?)```", re.DOTALL)


def applies(family: str, truth) -> bool:
    """Whether a test's truth has the shape the released comparison of its family reads (a box of our own
    in a family, such as a physics box whose output is one number, keeps its own grading)."""
    if family == "PSI":
        return isinstance(truth, dict) and all(isinstance(v, (list, tuple)) and len(v) == 3 for v in truth.values())
    if family in ("ERI", "IPI"):
        return isinstance(truth, str)
    if family == "CRI":  # the released circuits answer a list of gate outputs
        return isinstance(truth, list)
    return family in FAMILIES


def reask_text(family: str) -> str | None:
    """The released harness's format re-ask for a family ("" or None: it has none)."""
    return {"ERI": ERI_REASK, "IPI": IPI_REASK, "PSI": PSI_REASK}.get(family)


def first_reading(family: str, reply: str) -> str:
    """A test's first reply as the released harness prepares it before any check."""
    if family == "CRI":
        return reply
    out = reply.rstrip("\n")
    if family == "PSI" and "json" in out:
        found = _JSON_FENCE.findall(out)
        # the released code indexes [0]: with no such fence it stops; the reply then stays as it is
        out = found[0].rstrip() if found else out
    return out


def python_literal(text: str):
    """`ast.literal_eval` of a reply (None when it is not a literal, or is too long or deep to read)."""
    if len(text) > MAX_ANSWER_CHARS:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def format_ok(family: str, text: str, answer_reads=None) -> bool:
    """Whether the released harness takes `text` without asking again (families without a check: True).

    `answer_reads` is the box's own check of an IPI answer (the platform's check_answer_format)."""
    if family == "ERI":  # eva_models.py check_text_format, task 'encryption'
        return text != "" and all(c in _ERI_CHARS for c in text)
    if family == "PSI":  # check_text_format, task 'physics': a literal that is a dict
        return isinstance(python_literal(text), dict)
    if family == "IPI" and answer_reads is not None:
        return bool(answer_reads(text))
    return True


def py_str(value) -> str:
    """Python's `str` of a value (worldspec values are plain Python values: the published truth's str)."""
    return str(value)


def circuit_clear(reply: str) -> str:
    """A circuit reply with "```python" and "```" removed (the released `output_clear`)."""
    return reply.replace("```python", "").replace("```", "")


def circuit_reading(reply: str):
    """(True, value) when json reads the cleared reply, else (False, None)."""
    text = circuit_clear(reply)
    if len(text) > MAX_ANSWER_CHARS:
        return False, None
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def physics_checks(output, truth) -> list[bool]:
    """Per object of the truth, whether its first three coordinates are within 0.01 (the released `check`);
    an answer the released check would stop on (a missing object, a short or non-numeric position, a
    reply that is not a dict) fails every object."""
    keys = list(truth)
    if not isinstance(output, dict) or len(output) != len(truth):
        return [False] * len(keys)
    res = []
    for key in keys:
        try:
            got = output[key][:3]
            x1, y1, z1 = got
            x2, y2, z2 = truth[key]
            d = [abs(float(a) - b) for a, b in ((x1, x2), (y1, y2), (z1, z2))]
        except (KeyError, TypeError, ValueError, OverflowError):
            return [False] * len(keys)
        res.append(not any(x > PSI_EPS for x in d))  # as released: a NaN distance is not > 0.01
    return res


def correct(family: str, expected, text: str, first: bool) -> bool:
    """Whether the released harness counts this reply right. `text` is the first reply after
    `first_reading` (and any re-asks), or a retry's reply as it came (`first` False)."""
    if not isinstance(text, str):
        return False
    if family == "CII":
        return py_str(expected).replace(" ", "") == text.replace(" ", "")
    if family in ("ERI", "IPI"):
        return expected == text
    if family == "CRI":
        ok, value = circuit_reading(text)
        return ok and value == expected
    if family == "PSI":
        if not first:
            return False  # a retry's reply reaches the check unparsed: a string never matches
        return all(physics_checks(python_literal(text), expected))
    return expected == text


# Our sentence, where the released task introductions say it in their evaluation sections: our exploration
# asks for inputs in code fences, so the first question says that answers are read as written.
AS_WRITTEN = "Answers are read exactly as you write them: no code fence, quotes or other text."


def evaluation_header(shots: int, each: bool = True) -> str:
    """The line that opens the released harness's evaluation."""
    if each:
        return f"********Evaluation Starts, You Have {shots} Chances for Answering Each Question********"
    return f"********Evaluation Starts, You Have {shots} Chances for Answering, Please Output the Answer DIRECTLY.********"


def question(family: str, ours: str, values, first: bool, shots: int) -> str:
    """A test's message as the released harness frames it (eva_models.py `evaluate`): the first opens the
    evaluation (the runner puts the last exploration output before it), later ones ask on. `ours` is the
    box's question without its code fence (our wording; the released wording names the same inputs)."""
    if family == "CRI":  # task 'circuit': the published wording, the input written as Python writes it
        ask = (f"In this turn, given the input {py_str(values[0]) if values else ''}, answer the output of the "
               "gates in the format we dicussed without any text else.")
        if not first:
            return ask
        return (f"\n{evaluation_header(shots)}\nThe output format is described in the Evaluation section "
                f"previosly. For example:\n[0, 1, 0, 1]\n{ask} {AS_WRITTEN}")
    if family == "IPI":  # task 'puzzle': each puzzle is a conversation of its own
        return f"{evaluation_header(shots, each=False)}\n{ours} {AS_WRITTEN}"
    if first:
        return f"\n{evaluation_header(shots)}\n Now answer the question: {ours} {AS_WRITTEN}"
    return f"Answer the question: {ours}"
