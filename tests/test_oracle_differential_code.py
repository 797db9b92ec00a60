"""Differential of the list- and string-parameter code boxes' readers (CII, docs/oracle-worlds.md).

Each box's published `platform` (lemonsis/Oracle_Benchmark, platforms/code/<level>/<box>_final.py) is restated
here, in this file's own Python, and run against our box on the published edge forms and seeded random
messages; both sides read each message stripped (tests/test_oracle_differential.py's module docstring says why).
The integer-parameter boxes are compared in tests/test_oracle_differential.py (CII_INT_BOXES); this file covers
every other cii-*.world.

The published `platform` converts an assigned value by the parameter's annotation: a `str` parameter's value is
`var_value.strip('"\\'')` (manacher: one pair of matching quotes removed, else the value as it is), a `list` (or
`list[int]`, which falls to the `else` branch) parameter's value is `eval(var_value)`. The restatement reads eval's
result without running any code: Python's parser decides what eval refuses (a SyntaxError); for a literal,
`ast.literal_eval` is what eval gives; any other expression (a name, a call, an operator) the published box
evaluates and ours refuses, on purpose (docs/oracle-worlds.md).

Kept on purpose, asserted as refusals of ours: a value outside our box's domain (a list's length or elements, a
float or bool element, a tuple, a string's length or characters; a checkpoint outside 0..20, visit 1..100,000),
an expression, and a message refused part-way, whose earlier pieces the published box keeps
(docs/oracle-published-code.md, "Reading the message").
"""

import ast
import random
import re
import string
import warnings

import pytest

from oracle_reading import (INFO, ORACLE, REFUSED, box, checkpoint_outside, code_ours, messages,
                            published_checkpoint, published_takes_assignments)
from test_oracle_differential import CII_INT_BOXES
from worldspec.compiler.api import InputError

# Per box, restated from its published `platform`: condition 2 (which messages are assignments, and whether they
# are split at ';': test_oracle_differential's CII section names the modes), condition 3's pattern, and how a
# string value loses its quotes.
#   easy/bubble_sort, easy/most_frequent_char: '=' in the message, split at ';' when it holds one; the prefix
#       pattern on the message as sent; str by strip('"\'')
#   hard/arithmetic_slices: '=', split at ';'; the tight pattern on the stripped message
#   easy/kmp: '=' and ';', split; the tight pattern
#   easy/quicksort_recursion, hard/heap_sort, hard/mergesort_recursion: '=', the whole message one assignment;
#       the tight pattern
#   hard/manacher: re.match(r'^\s*[\w_]+\s*=') of the message, the pieces stripped and the blank ones dropped, a
#       piece without '=' refused; re.match(r'^\(\s*(\d+)\s*,\s*(\d+)\s*\)\s*$'); str by one matching pair
CII_OTHER_BOXES = {"cii-e-bubble-sort": ("eq", "prefix", "strip"), "cii-e-kmp": ("and", "tight", "strip"),
                   "cii-e-most-frequent-char": ("eq", "prefix", "strip"),
                   "cii-e-quicksort-recursion": ("whole", "tight", "strip"),
                   "cii-h-arithmetic-slices": ("eq", "tight", "strip"), "cii-h-heap-sort": ("whole", "tight", "strip"),
                   "cii-h-manacher": ("manacher", "manacher", "pair"),
                   "cii-h-mergesort-recursion": ("whole", "tight", "strip")}
EXPRESSION = object()  # an expression the published eval computes and our literal reading refuses
PRINTABLE = "".join(chr(c) for c in range(32, 127))  # line(...): printable ASCII without tabs or line breaks


def box_fields(name: str) -> dict:
    """Our box's parameters as its .world declares them: name -> ("list", lo, hi, min_len, max_len) or
    ("str", alphabet, min_len, max_len), read from the file's text (not from the compiler)."""
    text = (ORACLE / "code" / f"{name}.world").read_text()
    out = {}
    for k, lo, hi, n, m in re.findall(r'"(\w+)": list\(int\((-?\d+), (-?\d+)\), (\d+), (\d+)\)', text):
        out[k] = ("list", int(lo), int(hi), int(n), int(m))
    for k, n, m in re.findall(r'"(\w+)": str\((\d+), (\d+)\)', text):
        out[k] = ("str", string.ascii_lowercase, int(n), int(m))
    for k, alphabet, n, m in re.findall(r'"(\w+)": str\("(\w+)", (\d+), (\d+)\)', text):
        out[k] = ("str", alphabet, int(n), int(m))
    for k, n, m in re.findall(r'"(\w+)": line\((\d+), (\d+)\)', text):
        out[k] = ("str", PRINTABLE, int(n), int(m))
    return out


def published_eval(raw: str):
    """What the published `eval(raw)` gives, found without running it: REFUSED where Python's parser refuses the
    text (eval raises), the literal's value where it is a literal, EXPRESSION for any other expression."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `[1if 1 else 2]` and the like warn as they are parsed
        try:
            tree = ast.parse(raw, mode="eval")
        except (SyntaxError, ValueError):
            return REFUSED
        try:
            return ast.literal_eval(tree)
        except (ValueError, TypeError, SyntaxError):
            return EXPRESSION


def published_value(field, raw: str, unquote: str):
    """An assigned value as the published `platform` converts it by the parameter's annotation."""
    if field[0] == "list":
        return published_eval(raw)
    if unquote == "pair":
        return raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'" else raw
    return raw.strip("\"'")


def published_read(text: str, fields: dict, mode: str, match: str, unquote: str):
    """The published platform's reading: INFO, ("set", {name: value}), ("ask", (idx, iter)), or REFUSED; a message
    refused part-way is REFUSED (the published box keeps its earlier pieces: a difference kept on purpose)."""
    if text == "":
        return INFO
    if published_takes_assignments(text, "named" if mode == "manacher" else mode):
        pieces = [text] if mode == "whole" else text.split(";")
        if mode == "manacher":
            pieces = [p.strip() for p in pieces if p.strip()]
        got = {}
        for piece in pieces:
            if not piece.strip():
                continue
            if "=" not in piece:
                return REFUSED
            name, raw = piece.split("=", 1)
            name, raw = name.strip(), raw.strip()
            if name not in fields:
                return REFUSED
            value = published_value(fields[name], raw, unquote)
            if value is REFUSED:
                return REFUSED
            got[name] = value
        return ("set", got)
    return published_checkpoint(text, match)


def in_domain(value, field) -> bool:
    """Whether our box's declared domain holds the published value, its Python type exactly as the published box
    would hold it (a float or bool element, a tuple, is outside a list of integers)."""
    if field[0] == "list":
        _, lo, hi, n, m = field
        return type(value) is list and n <= len(value) <= m and all(type(x) is int and lo <= x <= hi for x in value)
    _, alphabet, n, m = field
    return type(value) is str and n <= len(value) <= m and all(c in alphabet for c in value)


def kept_refusal(pub, fields) -> str | None:
    """Why our box refuses a published reading on purpose (docs/oracle-worlds.md), or None."""
    if pub is INFO or pub is REFUSED:
        return None
    if pub[0] == "ask":
        return "outside" if checkpoint_outside(pub[1]) else None
    if any(v is EXPRESSION for v in pub[1].values()):
        return "expression"
    if any(not in_domain(v, fields[k]) for k, v in pub[1].items()):
        return "outside"
    return None


def shown(reading) -> str:
    """A reading as an assertion message shows it."""
    names = {id(REFUSED): "REFUSED", id(INFO): "INFO", id(EXPRESSION): "EXPRESSION"}
    if id(reading) in names:
        return names[id(reading)]
    if reading[0] == "set":
        return repr(("set", {k: names.get(id(v), v) for k, v in reading[1].items()}))
    return repr(reading)


def same_reading(mine, pub) -> bool:
    """The same reading, types and all (1 and 1.0, [1] and (1,), True and 1 are told apart)."""
    if mine is INFO or mine is REFUSED or pub is INFO or pub is REFUSED:
        return mine is pub
    return repr(mine) == repr(pub)


# Published edge forms: list values as eval reads them (brackets, nesting, spaces Python's tokenizer takes or
# refuses, Unicode digits, underscores, prefixes, leading zeros, signs, floats, tuples, comments, expressions),
# string values and their quotes, the splitting at ';' and '=', and checkpoint queries.
LIST_EDGES = ["{a} = [1, 2]", "{a}=[1,2]", "{a} = []", "{a} = [ ]", "{a} = [1,]", "{a} = [1, 2 ,]", "{a} = [,]",
              "{a} = [1 2]", "{a} = [[1], 2]", "{a} = [[1]]", "{a} = [1.0, 2]", "{a} = [1.5]", "{a} = [1e3]",
              "{a} = [1., 2]", "{a} = [-3, +5]", "{a} = [- 3]", "{a} = [--3]", "{a} = [1_0]", "{a} = [1__0]",
              "{a} = [0x10, 0o7, 0b11]", "{a} = [010]", "{a} = [00, 0]", "{a} = [٣]", "{a} = [１]", "{a} = [1,\u00a02]",
              "{a} = [1,\u20032]", "{a} = [1,\t2]", "{a} = [1,\x0c2]", "{a} = [1,\x0b2]", "{a} = [1,\n2]",
              "{a} = [1, \\\n2]", "{a} = (1, 2)", "{a} = (1,)", "{a} = 1, 2", "{a} = 5", "{a} = '[1]'",
              '{a} = "[1, 2]"', "{a} = [True, 2]", "{a} = [None]", "{a} = ['a']", "{a} = [1, 2] # note",
              "{a} = [(1), (-2)]", "{a} = [-(1)]", "{a} = [1+1]", "{a} = list(range(3))", "{a} = [x]", "{a} = x",
              "{a} = [1]; {a} = [2]", "{a} = [1];", "{a} = [1]; ;", "{a} = [3, 1]; x = 2", "{a} = [1; 2]",
              "{a} == [1]", "{a} = [1] == [1]", "{a} = [1]]", "{a} = [[1]", "{a} = [1000001]",
              "{a} = [-1000000, 1000000]", "{a} = [" + "1, " * 31 + "]", "{a} = [" + "1, " * 20 + "]",
              "{a} = {{1, 2}}", "{a} = {{}}", "{a} = [1]\t", "{a} =\u00a0[1]", "{a}\u00a0= [1]", "{a} = [1]\x00",
              "{a} = " + "[" * 3 + "]" * 3, "{a} = [1if 1 else 2]", "{a} = [1, 2][0]", "{a} = [1, 2]\n"]
STR_EDGES = ["{a} = abc", "{a} = 'abc'", '{a} = "abc"', "{a} = 'abc", "{a} = abc'", "{a} = \"abc'", "{a} = ''",
             "{a} = ", "{a} =", "{a}=", "{a} = '\"ab\"'", "{a} = a b", "{a} = a;b", "{a} = a=b", "{a} = ab; {b} = cd",
             "{a} = ab; {b} = cd;", "{a} = ab;", "{a} = 'ab'; {b} = 'a'", "{a} = é", "{a} = ab\u00a0", "{a} = ABC",
             "{a} = 123", "{a} = [1, 2]", "{a} = 'a''", "{a} = '' ''", "{a} = " + "x" * 61, "{a} = " + "x" * 40,
             "{a} = a\tb", "{a} = ab #c", "x; {a} = ab", "{a} = ab;;", "{a}= ab", "{a} =ab", "é = ab", "{a} = ab; x",
             "{a} = ab; {a} = cd;", "{a} = ';'", "{a} = \"a\"b\"", "{a} = `ab`", "{a} = \\'ab\\'"]
COMMON_EDGES = ["", ";", " ; ", ";;", "=", "A = 1", "x = [1]", "idx = 3", "iter = 1;", "{a}", "{a} =; {b} =",
                "(1, 2)", "( 1 ,2 )", "(1,2)", "(1,  2)", "( 1, 2)", "(1 ,2)", "(١, 2)", "(1, ٣)", "(1, 2) more",
                "(1, 2);", "(1, 2); {a} = [1]", "(1, 2) = 3", "(１, ७)", "(01, 2)", "(+1, 2)", "(1, 0)", "(25, 1)",
                "(1, 100001)", "(1, 2, 3)", "1, 2", "[1, 2]", "(1,\u00a02)", "(1, 2)\t", "(1,\t2)", "(1,\n2)",
                "[1]; (1, 2)", "(1, 2) (3, 4)", "(1, 2)(3, 4)", "(0, 1)"]


def random_values(rng: random.Random, field) -> str:
    """A value text built from the pieces the published readers tell apart."""
    if field[0] == "list" or rng.random() < 0.15:
        elems = ["1", "-2", "+3", "0", "00", "07", "1_0", "0x1f", "1.0", "1e2", "٣", "True", "[1]", "'a'", " 5 ",
                 "1000001", "- 4", "(6)", "x", ""]
        inner = ", ".join(rng.choice(elems) for _ in range(rng.randint(0, 4)))
        return rng.choice(["[{}]", "[{},]", "({})", "{}", "[{}", "[ {} ]"]).format(inner)
    words = ["ab", "abc", "banana", "a b", "AB", "a1", "", "é", "!", "ab;", "a=b"]
    word = rng.choice(words)
    return rng.choice(["{}", "'{}'", '"{}"', "'{}", "{}\"", "'{}\"", "''{}''"]).format(word)


def assignment_messages(rng: random.Random, fields: dict, n: int) -> list[str]:
    """n seeded messages of assignments: the box's names (or another), '=' spaced or doubled, values from
    random_values, joined by ';' with or without spaces, a trailing ';' or not."""
    names = list(fields) + ["x", "A", "idx"]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(names)
            eq = rng.choice([" = ", "=", " =", "= ", " == "])
            field = fields.get(name) or fields[next(iter(fields))]
            parts.append(name + eq + random_values(rng, field))
        text = rng.choice([";", "; ", " ;", ";;"]).join(parts) + rng.choice(["", ";", "; ", ";;"])
        out.append(text.strip())
    return out


def preset_of(fields: dict, mode: str) -> str:
    """An assignment of every input, as the box's condition 2 takes it (so checkpoint queries can run)."""
    text = "; ".join(f"{k} = {'[1, 2, 3]' if f[0] == 'list' else 'ab'}" for k, f in fields.items())
    return text + ";" if mode == "and" else text


def test_every_code_box_is_compared_by_one_of_the_differentials():
    """Every cii-*.world is in CII_INT_BOXES (test_oracle_differential.py) or CII_OTHER_BOXES, once."""
    worlds = {p.stem for p in (ORACLE / "code").glob("cii-*.world")}
    assert not set(CII_INT_BOXES) & set(CII_OTHER_BOXES)
    assert worlds == set(CII_INT_BOXES) | set(CII_OTHER_BOXES)
    for name in CII_OTHER_BOXES:
        assert box_fields(name) and all(f[0] in ("list", "str") for f in box_fields(name).values()), name


@pytest.mark.parametrize("name", sorted(CII_OTHER_BOXES))
def test_list_and_string_code_boxes_read_messages_as_the_published_platform(name):
    """Every message reads the same on both sides (the parameter question, the same assignment with the same
    Python types, the same checkpoint query, or both refused), except the refusals kept on purpose."""
    mode, match, unquote = CII_OTHER_BOXES[name]
    fields = box_fields(name)
    a, b = list(fields)[0], list(fields)[-1]
    world = box("code", name)
    preset = preset_of(fields, mode)
    rng = random.Random(name)
    pieces = [a, b, "=", ";", " ", "[", "]", ",", "1", "-2", "17", "٣", "_", "0x1", "1.0", "'", '"', "ab", "(", ")",
              "#", "x", "True", "(1, 2)", "[1, 2]"]
    edges = [m.format(a=a, b=b) for m in LIST_EDGES + STR_EDGES + COMMON_EDGES]
    msgs = edges + messages(rng, pieces, 150) + assignment_messages(rng, fields, 150)
    kinds = set()
    for text in msgs:
        text = text.strip()  # as our protocol hands a message over
        pub = published_read(text, fields, mode, match, unquote)
        mine = code_ours(world, text, preset)
        why = kept_refusal(pub, fields)
        kinds.add(why or ("refused" if pub is REFUSED else "info" if pub is INFO else pub[0]))
        if why:
            assert mine is REFUSED, (text, why, shown(pub), shown(mine))
        else:
            assert same_reading(mine, pub), (text, shown(pub), shown(mine))
    want = {"refused", "info", "set", "ask", "outside"} | ({"expression"} if fields[a][0] == "list" else set())
    assert want <= kinds, kinds  # the messages reach every published reading


def test_the_restated_eval_tells_literals_from_expressions_and_refusals():
    """published_eval, the restatement's stand-in for the published `eval`, on forms whose eval is known."""
    assert published_eval("[1_0, 0x10, -(1), 00]") == [10, 16, -1, 0]
    assert published_eval("(1, 2)") == (1, 2) and published_eval("[1.0]") == [1.0]
    assert published_eval("[1, 2] # note") == [1, 2]
    assert published_eval("[--3]") is EXPRESSION and published_eval("list(range(3))") is EXPRESSION
    for text in ("[010]", "[٣]", "[1,\u00a02]", "[1 2]", "[1];", "[1]\x00", "= [1]"):
        assert published_eval(text) is REFUSED, text


def test_a_list_value_is_read_without_running_it_and_within_the_languages_values():
    """Our list reading (literals.python_literal, through the box) refuses at once what eval would compute or
    what the language cannot hold: an expression that would not end, a tuple, a set, a 300-bit integer, inf, a
    nesting past the literal reader's, `...`; each refusal says why."""
    session = box("code", "cii-e-bubble-sort").session(None)
    for raw, why in [("[9**9**9]", "expression"), ("(1, 2)", "tuple"), ("{1, 2}", "set"), ("[1e999]", "too large"),
                     (f"[{2 ** 300}]", "too large"), ("[" * 60 + "]" * 60, "deeply"), ("[...]", "ellipsis"),
                     ("[1.0, 2]", "float"), ("[010]", "Python reads it")]:
        with pytest.raises(InputError, match=why):
            session.read(f"arr = {raw}")
    assert session.read("arr = [1_0, 0x10, -(1)]  # a comment") == [{"arr": [10, 16, -1]}]
