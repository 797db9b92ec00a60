"""Words, numbers and answers as the keyword judge compares them.

The keyword judge (`--judge keyword`) needs no model: a world lists, for each
key fact, question phrasings that are answered "yes" (and optionally "no"). A
text is reduced to `Words`: its content words (lower case, a light suffix
stemmer, stop words dropped, numbers as exact fractions) and its polarity (a
negation word flips it). A phrasing matches a question when every content word
of the phrasing occurs in the question; the match keeps the phrasing's label
when the polarities agree and flips it (yes <-> no) when they differ, so
"Was he not short?" is answered "no" by the phrasing "Was he short?".

Final answers are compared by `same_answer`: as exact numbers when both sides
read as numbers (`0.5`, `1/2`, `\\frac{1}{2}`, `50%` is not a number here), else
as text with case, spaces, `$`, `\\boxed{}` and a trailing full stop ignored.
"""
from __future__ import annotations

import re
from fractions import Fraction

import attrs

STOP_WORDS = frozenset("""
a an the is are was were be been being am do does did done has have had having it its it's this that these
those there here of to in on at for by with from into onto as and or but if so than then too very just also
he she they his her hers their theirs him them i you we me my your our us who whom whose which what when where
why how any some all each every one ones can could would should will shall may might must ever really actually
please question answer true correct whether about because due something someone somebody anything anyone
everything everyone
""".split())
NEGATIONS = frozenset(("not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "cannot"))
SUFFIXES = ("ing", "ed", "es", "s", "ly")
MIN_STEM = 4  # a suffix is stripped only when this much of the word remains ("was" and "bus" stay whole)

_WORD = re.compile(r"\d+(?:[.,]\d+)*(?:/\d+)?|[a-z]+")
_LATEX_FRAC = re.compile(r"\\d?frac\s*\{\s*(-?[\d.]+)\s*\}\s*\{\s*(-?[\d.]+)\s*\}")
_BOXED = re.compile(r"\\boxed\s*\{")
_DRESS = " \t\r\n*_`"  # spaces and markdown emphasis or code around a final answer
_NUMBER = re.compile(r"[+-]?(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)(?:/\d+(?:\.\d+)?)?")


@attrs.frozen
class Words:
    """A text as the keyword judge sees it: its content words and whether it is negated."""

    content: frozenset[str]
    negated: bool


def stem(word: str) -> str:
    """A light stemmer: `poisoned`, `poisons`, `poisoning` become `poison`; `suffocate`, `suffocating` `suffocat`."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > MIN_STEM:
        word = word[:-1]
    return word


def number_token(text: str) -> str | None:
    """A number as a canonical exact fraction (`0.50` and `1/2` give `1/2`), or None."""
    text = text.replace(",", "") if re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?", text) else text
    try:
        value = Fraction(text) if "/" not in text else Fraction(*(Fraction(p) for p in text.split("/", 1)))
    except (ValueError, ZeroDivisionError):
        return None
    return str(value)


def words(text: str) -> Words:
    """The content words and polarity of a question, phrasing or answer."""
    low = (text or "").lower().replace("n't", " not").replace("’", "'")
    low = _LATEX_FRAC.sub(lambda m: f" {m.group(1)}/{m.group(2)} ", low)
    content, negations = set(), 0
    for tok in _WORD.findall(low):
        if tok[0].isdigit():
            content.add(number_token(tok) or tok)
        elif tok in NEGATIONS:
            negations += 1
        elif tok not in STOP_WORDS:
            content.add(stem(tok))
    return Words(frozenset(content), negations % 2 == 1)


def matches(phrasing: Words, question: Words) -> bool:
    """Whether every content word of the phrasing occurs in the question."""
    return bool(phrasing.content) and phrasing.content <= question.content


def flip(label: str) -> str:
    """The label of a question whose polarity is the opposite of the phrasing's."""
    return {"yes": "no", "no": "yes"}.get(label, label)


def keyword_label(phrasings, question: str) -> str:
    """yes / no / both / irrelevant for a question, from (label, Words) phrasings.

    Only the most specific matching phrasings count (a match whose words are a strict subset of
    another match's words is dropped); if they disagree the answer is "both", and a question no
    phrasing matches is "irrelevant".
    """
    q = words(question)
    hits = [(label, p) for label, p in phrasings if matches(p, q)]
    top = [(label, p) for label, p in hits if not any(p.content < other.content for _, other in hits)]
    labels = {label if p.negated == q.negated else flip(label) for label, p in top}
    if not labels:
        return "irrelevant"
    if len(labels) > 1:
        return "both"
    return labels.pop()


def mentions(groups, text: str) -> bool:
    """Whether some group of words (a Words each) occurs in the text, all of its words."""
    got = words(text).content
    return any(g.content and g.content <= got for g in groups)


# ---------------------------------------------------------------- final answers


def _boxed(text: str) -> str | None:
    """What the first `\\boxed{` holds, up to the text's last `}` (None when there is none). Found by
    hand: the regex `boxed{(.*)}` searched from every `boxed` is quadratic when no `}` follows."""
    last = text.rfind("}")
    for m in _BOXED.finditer(text):
        if m.end() > last:
            return None
        return text[m.end():last]
    return None


def final_value(text: str) -> str:
    """The answer part of a submission: its `\\boxed{..}` or else its first line, with markdown emphasis,
    `$`, a leading `x =` and a trailing full stop removed."""
    t = _boxed(text or "")
    if t is None:  # the answer is its first line with content ($$ alone is not); what follows is talk
        t = next((ln for ln in (text or "").splitlines() if ln.replace("$", "").strip()), "")
    t = t.replace("$", "").strip(_DRESS).rstrip(".").strip(_DRESS)  # markdown: **250**, `250`, **250**.
    if "=" in t and number(t) is None:
        t = t.rsplit("=", 1)[1].strip()
    return t


def number(text: str) -> Fraction | None:
    """The exact value of a text that is one number (`-3`, `2.50`, `1,000`, `7/8`, `\\frac{7}{8}`), or None."""
    t = _LATEX_FRAC.sub(lambda m: f"{m.group(1)}/{m.group(2)}", (text or "").strip().replace(" ", ""))
    t = t.strip("()")
    if not _NUMBER.fullmatch(t):
        return None
    token = number_token(t.lstrip("+"))
    return Fraction(token) if token is not None else None


def canonical_text(text: str) -> str:
    """A non-numeric answer as compared: lower case, no spaces, no braces around single tokens."""
    return re.sub(r"\s+", "", text.lower()).replace("\\left", "").replace("\\right", "")


def same_answer(got: str, want: str) -> bool:
    """Whether a submitted final answer equals the reference one (exactly, as numbers when both are)."""
    a, b = final_value(got), final_value(want)
    na, nb = number(a), number(b)
    if na is not None and nb is not None:
        return na == nb
    return bool(a) and canonical_text(a) == canonical_text(b)
