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


# Where one claim ends and the next begins: a negation word holds only inside its clause, so "Was
# there a gas and not a ghost?" denies the ghost, not the gas.
_CLAUSE_BREAK = re.compile(r"(?<!\d)[,.]|[,.](?!\d)|[;:!?()\[\]]|\b(?:and|but|or|nor|yet|while|whereas|although|though|because)\b",
                           re.I)
# InteractiveBench's judges answer "Irrelevant" to what is "not a yes/no-style question"
# (src/math/turtle.py, build_judger_system_prompt; src/situation_puzzle/benchmark.py asks the player
# for yes/no questions only): a question opening with one of these words asks for an explanation.
WH_WORDS = frozenset(("why", "how", "what", "which", "who", "whom", "whose", "where", "when"))
HEDGES = frozenset(("either", "maybe", "perhaps", "possibly"))


@attrs.frozen
class Clause:
    """One clause of a text: its own words, and its words as the keyword judge reads them."""

    text: str
    words: Words


def clauses(text: str) -> list[Clause]:
    """The clauses of a text, split at punctuation and conjunctions. A clause holding only a negation
    ("..., not because anyone blew") passes its polarity on to the clause after it."""
    low = (text or "").lower().replace("n't", " not").replace("’", "'")
    out: list[Clause] = []
    carry = False
    for part in _CLAUSE_BREAK.split(low):
        w = words(part)
        if carry:
            w = Words(w.content, not w.negated)
        carry = not w.content and w.negated
        if w.content:
            out.append(Clause(part.strip(), w))
    return out


def function_words(text: str) -> int:
    """How many words of a text are not content words (articles, pronouns, auxiliaries, negations):
    a sentence has them, a bare list of keywords has none."""
    low = (text or "").lower().replace("n't", " not")
    return sum(1 for tok in _WORD.findall(low) if tok in STOP_WORDS or tok in NEGATIONS)


def is_wh_question(text: str) -> bool:
    """Whether a question asks why / how / what ... (an open question, not a yes/no one)."""
    m = re.match(r"[\W_]*([a-z]+)", (text or "").lower())
    return bool(m) and m.group(1) in WH_WORDS


def hedged(text: str) -> bool:
    """Whether an answer offers alternatives instead of one explanation ("perhaps", "either", or two
    or more "or")."""
    toks = _WORD.findall((text or "").lower())
    return any(t in HEDGES for t in toks) or toks.count("or") >= 2


def matches(phrasing: Words, question: Words) -> bool:
    """Whether every content word of the phrasing occurs in the question."""
    return bool(phrasing.content) and phrasing.content <= question.content


def flip(label: str) -> str:
    """The label of a question whose polarity is the opposite of the phrasing's."""
    return {"yes": "no", "no": "yes"}.get(label, label)


def keyword_label(phrasings, question: str) -> str:
    """yes / no / both / irrelevant for a question, from (label, Words) phrasings.

    An open question (why, how, what ...) is "irrelevant": the judge answers yes/no questions only. A
    phrasing matches when its words occur in the question; it takes the polarity of the clause that
    holds its words (or of the clauses its words are spread over), so "Was there a gas and not a
    ghost?" is yes for the gas and yes for "no ghost". Only the most specific matching phrasings count
    (a match whose words are a strict subset of another match's words is dropped); if they disagree
    the answer is "both", and a question no phrasing matches is "irrelevant".
    """
    if is_wh_question(question):
        return "irrelevant"
    q = words(question)
    parts = clauses(question)
    hits = []
    for label, p in phrasings:
        if not matches(p, q):
            continue
        inside = [c.words.negated for c in parts if matches(p, c.words)]
        if not inside:  # spread over clauses: the negations of the clauses it touches
            inside = [sum(c.words.negated for c in parts if p.content & c.words.content) % 2 == 1]
        hits += [(label, p, negated) for negated in set(inside)]
    top = [(label, p, n) for label, p, n in hits if not any(p.content < other.content for _, other, _ in hits)]
    labels = {label if p.negated == n else flip(label) for label, p, n in top}
    if not labels:
        return "irrelevant"
    if len(labels) > 1:
        return "both"
    return labels.pop()


def affirmed(groups, text: str) -> bool | None:
    """Whether some group of words (a Words each) is stated in the text: True when a clause of the
    group's own polarity holds all its words, False when only clauses of the other polarity do ("it
    was not the gas"), None when the text does not mention it."""
    parts = clauses(text)
    denied = False
    for g in groups:
        if not g.content:
            continue
        for c in parts:
            if g.content <= c.words.content:
                if c.words.negated == g.negated:  # "not hot enough" is stated by "it was not hot enough"
                    return True
                denied = True
        touching = [c for c in parts if g.content & c.words.content]
        if not denied and g.content <= words(text).content and \
                sum(c.words.negated for c in touching) % 2 == g.negated:
            return True  # its words are spread over clauses, with the group's own polarity
    return False if denied else None


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
