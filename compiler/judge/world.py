"""The compiled judge world: a surface the player sees, a hidden truth, key facts, and how moves are judged.

`JudgeWorld` implements the `World` core and `JudgeFace` (compiler/api.py) for the judge
run protocol (runner/protocols/judge.py), InteractiveBench's interactive proofs
(the seed's sections 3 and 4): in each of T turns (20 by default) the player
asks one question or submits an answer, and both cost a turn. A question is
answered with exactly one of yes / no / both / irrelevant ("both": compound or
under-specified; "irrelevant": off the causal chain); a submission with
correct / incorrect. For math, questions are claims about intermediate steps.

The world never calls a model. It gives the runner what a judge needs: the
messages a judge model is sent (`judge_messages`), the normaliser of its reply
(`normalise_label`), the built-in keyword judge (`keyword_label`) and the
answer check (`verify`), plus how a player's reply is read (`read_move`) and,
for math, the prompt of one complete solution without a judge (`solve_messages`,
the pass@k condition).
"""
from __future__ import annotations

import random
import re
from typing import Iterator

import attrs

from worldspec.compiler.api import CaseResult, Feedback, Task, ToolSpec, Verdict, WorldHeader, by_id, capped
from worldspec.compiler.judge.certify import certify_judge
from worldspec.compiler.judge.keywords import (Words, affirmed, final_value, function_words, hedged, keyword_label,
                                               mentions, same_answer, words)

QUESTION_LABELS = ("yes", "no", "both", "irrelevant")
VERDICT_LABELS = ("correct", "incorrect")
SETTINGS = ("puzzle", "math")
GRADINGS = ("exact", "judge")
ANSWER_MARK = "ANSWER:"
QUESTION_MARK = "QUESTION:"
MAX_MOVE_CHARS = 4000
GRADE_MARK = "$$$$"  # the strict grader's marker before its 0/1 verdict (InteractiveBench math/turtle.py)
GROUNDED = 0.5  # the share of a puzzle answer's content words the keyword judge wants from the story  # a question or submission longer than this is cut (the judge reads the start)

# `ANSWER:` (also `Final answer:` and InteractiveBench's `FINAL:`) or `QUESTION:` opening a line, markdown around it
_MARKED = re.compile(r"^[\s>*_#`-]*(FINAL\s+ANSWER|ANSWER|FINAL|QUESTION)\s*[*_]*\s*:\s*[*_]*", re.I | re.M)
_LABEL_LINE = re.compile(r"^\s*(?:label|answer|verdict|reply|judge(?:ment)?)\s*[:=-]\s*(.+)$", re.I | re.M)


EXAMPLES = {
    "puzzle": ("Did the man know the woman?", "The man was ..."),
    "math": ("Is the number of cases equal to 12?", "42"),
}
HOW_TO_PLAY = "## How to play"


def how_to_play(setting: str, turns: int) -> str:
    """The rules of a session of `turns` turns, as the manual and the runner's opening message state them."""
    ask, submit = EXAMPLES[setting]
    return (f"You have {turns} turns. In each turn, either ask the judge one question or submit your answer; "
            "both cost a turn. The judge answers a question with exactly one word: yes, no, both (the question "
            "is compound or under-specified: true in one reading, false in another) or irrelevant (it does not "
            "bear on the solution). A submission is answered correct or incorrect; after an incorrect one you "
            "may go on while turns remain. If no submission is correct when the turns are spent, you are asked "
            "once more for a final answer.\n\n"
            "You may think first, but end every reply with exactly one line, either\n"
            f"`{QUESTION_MARK} {ask}` or `{ANSWER_MARK} {submit}`.\n"
            "A reply with neither line is read as a question (its last line).")


@attrs.frozen
class JudgeBudget:
    """Turns of one session: each question and each submission costs one."""

    turns: int = 20
    units_per_call: int = 1  # one move per turn (what `worldspec probe` reports)
    answers: int = 1

    def cost(self, kind: str) -> int:
        """Every move costs one turn, whatever it is."""
        return 1


@attrs.frozen
class Fact:
    """A key fact of the hidden truth, with the questions the keyword judge answers for it."""

    id: str
    statement: str
    yes: tuple[str, ...]  # questions answered yes
    no: tuple[str, ...]  # questions answered no
    mention: tuple[str, ...]  # word groups that show an answer mentions the fact (default: the yes phrasings)
    required: bool  # a correct puzzle answer mentions it
    line: int = 0

    def phrasings(self) -> list[tuple[str, Words]]:
        """(label, Words) of every phrasing of this fact."""
        return [("yes", words(p)) for p in self.yes] + [("no", words(p)) for p in self.no]

    def mentioned_in(self, text: str) -> bool:
        """Whether an answer mentions this fact (all words of one of its mention groups)."""
        return mentions([words(g) for g in (self.mention or self.yes)], text)


@attrs.frozen
class Move:
    """One player turn read from a reply: a question, or a submitted answer."""

    kind: str  # "question" | "answer"
    text: str

    @property
    def is_answer(self) -> bool:
        """Whether the player submitted an answer."""
        return self.kind == "answer"


def read_move(reply: str | None, default: str = "question") -> Move:
    """The move of a reply: its last `ANSWER:` or `QUESTION:` line (an answer runs to the end of the
    reply); a reply with neither is read as `default`: a question is its last non-empty line, an answer
    the whole reply."""
    text = (reply or "").strip()
    marks = list(_MARKED.finditer(text))
    if marks:
        m = marks[-1]
        kind = "question" if m.group(1).upper() == "QUESTION" else "answer"
        body = text[m.end():]
        body = body.strip() if kind == "answer" else body.split("\n", 1)[0].strip()
        return Move(kind, body.rstrip("*_` ").strip()[:MAX_MOVE_CHARS])
    if default == "answer":
        return Move(default, text[:MAX_MOVE_CHARS])
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return Move(default, (lines[-1] if lines else "")[:MAX_MOVE_CHARS])


def normalise_label(reply: str | None, labels) -> str | None:
    """The one label a judge's reply gives, or None when it gives none (it is then asked again).

    Accepted: the reply is the label (any case, markdown and punctuation ignored); it opens with the
    label ("Yes." / "No, because ..."); a line "Label: yes" (or Answer/Verdict/Reply/Judgement); or its
    last line opens with the label (reasoning first, then the word)."""
    text = re.sub(r"[*_`]", "", reply or "").strip()  # markdown emphasis: "**Verdict:** correct"
    if not text:
        return None

    def first_word(s: str) -> str:
        m = re.match(r"[\W_]*([A-Za-z]+)", s)
        return m.group(1).lower() if m else ""

    candidates = [m.group(1) for m in _LABEL_LINE.finditer(text)]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    candidates += [text, lines[-1]] if lines else [text]
    for c in candidates:
        w = first_word(c)
        if w in labels:
            return w
    return None


@attrs.frozen(eq=False)
class JudgeWorld(WorldHeader):
    """A situation puzzle or an interactive math problem with a hidden truth and a judge."""

    setting: str  # "puzzle" | "math"
    surface: str  # what the player sees
    truth: str  # the hidden explanation (math: the reference derivation)
    answer: str  # the reference answer (math: the final answer; puzzles: the truth unless given)
    guesses: tuple[str, ...]  # surface-only guesses the answer check must reject
    instructions: str  # the judge's own instructions for this world ("" for none)
    facts: tuple[Fact, ...]
    grading: str  # "exact": submissions checked by the world; "judge": a judge model decides
    origin: str = ""  # where the content comes from (imported worlds name their source)
    source: str = ""

    # ------------------------------------------------------------ the run protocol's view

    @property
    def protocol(self) -> str:
        """How the runner runs this world (compiler.api.PROTOCOLS)."""
        return "judge"

    @property
    def pass_at_k(self) -> bool:
        """Whether the run adds the token-matched pass@k condition (math: complete solutions, no judge)."""
        return self.setting == "math"

    @property
    def task_id(self) -> str:
        """The id of the one task: the answer to the puzzle or problem."""
        return self.tasks[0].id

    def read_move(self, reply: str | None, default: str = "question") -> Move:
        """The move of a player's reply (see `read_move`)."""
        return read_move(reply, default)

    def labels_for(self, move: Move) -> tuple[str, ...]:
        """The labels a judge may give this move."""
        return VERDICT_LABELS if move.is_answer else QUESTION_LABELS

    def normalise_label(self, reply: str | None, move: Move) -> str | None:
        """The label a judge model's reply gives this move, or None (the reply is then asked again)."""
        return normalise_label(reply, self.labels_for(move))

    def fallback_label(self, move: Move) -> str:
        """The answer given when the judge's reply stays unreadable: irrelevant, or incorrect for a submission."""
        return "incorrect" if move.is_answer else "irrelevant"

    def judge_system_prompt(self) -> str:
        """The judge model's system message: its rules, the public surface and the hidden truth."""
        if self.setting == "math":
            head = ("You are the judge of an interactive math problem. You hold the reference solution; the "
                    "player does not. The player's questions are claims about the solution or its intermediate "
                    "steps (a lemma, an equation, a value).")
            secret = f"THE REFERENCE SOLUTION (secret):\n{self.truth}\n\nTHE FINAL ANSWER (secret): {self.answer}"
            verdict = "the submitted final answer is equivalent to the reference final answer"
        else:
            head = ("You are the judge of a situation puzzle (a lateral-thinking puzzle). You know the hidden "
                    "explanation; the player does not.")
            secret = f"THE EXPLANATION (secret):\n{self.truth}"
            keys = [f.statement for f in self.facts if f.required]
            verdict = "the submitted explanation captures the hidden explanation" + (
                ", in particular: " + "; ".join(keys) if keys else "")
        key_facts = "\n".join(f"- {f.statement}" for f in self.facts)
        return "\n\n".join(p for p in [
            head,
            "To a question, reply with exactly one word:\n"
            "yes - it is true of the hidden solution;\n"
            "no - it is false;\n"
            "both - it is compound or under-specified, true in one reading and false in another;\n"
            "irrelevant - it does not bear on the solution, or is not a yes/no question.",
            f"To a submission (a message starting with {ANSWER_MARK}), reply with exactly one word: correct if "
            f"{verdict}, else incorrect.",
            "Never explain, never give hints, never reveal the solution: one word only.",
            self.instructions.strip(),
            f"THE {'PROBLEM' if self.setting == 'math' else 'PUZZLE'} (public):\n{self.surface}",
            secret,
            f"KEY FACTS (secret):\n{key_facts}" if key_facts else "",
        ] if p)

    @property
    def strict_grading(self) -> bool:
        """Whether a judge model grades submissions by the strict grader (math, graded by the judge):
        InteractiveBench never sends a math guess to the judger's conversation but to a grader of its own
        (math/turtle.py turtle_soup_solve, grade_equivalence)."""
        return self.setting == "math" and self.grading == "judge"

    def grader_messages(self, answer: str) -> list[dict]:
        """The strict grader's request for one submitted final answer: the problem, the expected answer and
        the submission, to be compared for equivalence (restating math/turtle.py grade_equivalence: the
        verdict, 1 or 0, follows a line holding the marker)."""
        return [{"role": "system", "content": (
                    "You grade answers strictly. Analyse the submitted final answer and compare it with the "
                    "expected answer: are they equivalent? After your analysis write a new line holding only "
                    f"{GRADE_MARK}, and after it write only 1 if they are equivalent or 0 if they are not.")},
                {"role": "user", "content": (
                    f"Problem:\n{self.surface.strip()}\n\nExpected answer:\n{self.answer.strip()}\n\n"
                    f"Submitted answer:\n{answer.strip()}\n\nCompare the two answers, then write {GRADE_MARK} "
                    "and your verdict, 1 or 0.")}]

    @staticmethod
    def read_grade(reply: str | None) -> bool | None:
        """The strict grader's verdict: what follows the first marker (the whole reply when it has none)
        opens with 1 (equivalent) or 0 (math/passk_eval.py extract_after_marker, parse_binary_judgement:
        any other reply counts as 0; here it is None, so the report can count it)."""
        text = reply or ""
        i = text.find(GRADE_MARK)
        rest = (text[i + len(GRADE_MARK):] if i >= 0 else text).strip()
        first = rest[:1]
        return True if first == "1" else False if first == "0" else None

    def judge_message(self, move: Move) -> dict:
        """The user message that puts one move to the judge."""
        if move.is_answer:
            return {"role": "user", "content": f"{ANSWER_MARK} {move.text}"}
        return {"role": "user", "content": f"{QUESTION_MARK} {move.text}"}

    def reask_message(self, move: Move) -> dict:
        """The user message that asks a judge again after a reply that gave no label."""
        return {"role": "user", "content": "Reply with exactly one word: " + ", ".join(self.labels_for(move)) + "."}

    def judge_messages(self, history, move: Move) -> list[dict]:
        """The judge model's conversation for a move: system, the earlier moves with their labels, the move."""
        return [{"role": "system", "content": self.judge_system_prompt()}, *history, self.judge_message(move)]

    def keyword_label(self, question: str) -> str:
        """The built-in keyword judge's answer to a question (yes / no / both / irrelevant)."""
        return keyword_label([p for f in self.facts for p in f.phrasings()], question)

    def check_answer(self, text: str) -> tuple[bool, str]:
        """The world's answer check: (accepted, why)."""
        if self.setting == "math":
            got = final_value(text)
            return same_answer(text, self.answer), f"final answer {got!r} vs {self.answer!r}"
        return self.check_explanation(text)

    def check_explanation(self, text: str) -> tuple[bool, str]:
        """The keyword judge's check of a puzzle answer. InteractiveBench's judge grades "your complete
        proposed solution" (src/situation_puzzle/benchmark.py, build_player_system_prompt): so the answer
        must read as an explanation (a sentence, not a bare list of keywords), state every required fact
        in a clause of its own polarity ("it was not the gas" denies the gas), offer no alternatives
        ("perhaps", "or ... or ..."), and keep to the story: at least half its content words are the world's own (its
        surface, truth, facts and their yes phrasings), so a shotgun list of candidates fails."""
        got = words(text)
        if not got.content or function_words(text) < max(2, len(got.content) / 3):
            return False, "a list of keywords, not an explanation"
        if hedged(text):
            return False, "offers alternatives instead of one explanation"
        need = [f for f in self.facts if f.required]
        stated = {f.id: affirmed([words(g) for g in (f.mention or f.yes)], text) for f in need}
        denied = [i for i, v in stated.items() if v is False]
        if denied:
            return False, "denies " + ", ".join(denied)
        missing = [i for i, v in stated.items() if v is None]
        if missing:
            return False, "does not mention " + ", ".join(missing)
        own = self.vocabulary
        grounded = len(got.content & own) / len(got.content)
        if grounded < GROUNDED:
            return False, f"only {grounded:.0%} of its words are the story's (a list of candidates?)"
        return True, f"states every required fact ({', '.join(f.id for f in need)})"

    @property
    def vocabulary(self) -> frozenset[str]:
        """The content words of the story: surface, truth, reference answer, key facts, yes phrasings and
        mentions (not the no phrasings: those are what the story denies)."""
        texts = [self.surface, self.truth, self.answer]
        for f in self.facts:
            texts += [f.statement, *f.yes, *f.mention]
        return frozenset().union(*(words(t).content for t in texts))

    def solve_messages(self) -> list[dict]:
        """One complete solution without a judge (the pass@k condition's sample)."""
        return [{"role": "system", "content": "You are a math solver. Solve the problem by reasoning step by step. "
                                              f"End with one line: {ANSWER_MARK} <your final answer> (the answer "
                                              "only)."},
                {"role": "user", "content": self.surface}]

    def session_manual(self, turns: int) -> str:
        """The manual with its rules stated for a session of `turns` turns (a run may change the budget)."""
        return self.manual.split(HOW_TO_PLAY)[0] + f"{HOW_TO_PLAY}\n\n{how_to_play(self.setting, turns)}\n"

    def ask_line(self, question: str) -> str:
        """A reply line that asks the judge a question."""
        return f"{QUESTION_MARK} {question}"

    def answer_line(self, answer: str) -> str:
        """A reply line that submits an answer."""
        return f"{ANSWER_MARK} {answer}"

    @property
    def reference_answer(self) -> str:
        """The answer the oracle submits (accepted by the answer check: `worldspec check` certifies it)."""
        return self.answer

    @property
    def surface_guess(self) -> str:
        """The answer a player gives from the surface alone (the naive agent's): the first guess, or the surface."""
        return self.guesses[0] if self.guesses else self.surface

    def oracle_questions(self) -> list[str]:
        """The key-fact questions the oracle asks: the first yes phrasing of each fact, required facts first."""
        ordered = sorted(self.facts, key=lambda f: not f.required)
        return [f.yes[0] for f in ordered if f.yes]

    # ------------------------------------------------------------ the World core and probing (compiler/api.py:
    # JudgeFace); a judge world hides a story or a derivation, not perturbed rules: rule() is WorldHeader's

    def probe(self, text) -> Feedback:
        """One move put to the keyword judge: a question's label, or a submission's verdict."""
        if not isinstance(text, str) or not text.strip():
            return Feedback("rejected: ask a question, or submit an answer as ANSWER: ... (no turn is used)",
                            0, "rejected")
        move = read_move(text)
        if move.is_answer:
            label = "correct" if self.check_answer(move.text)[0] else "incorrect"
        else:
            label = self.keyword_label(move.text)
        out, truncated = capped(label, 600)
        return Feedback(out, self.budget.cost("move"), "ok", truncated)

    def charge(self, text) -> int:
        """The turns a move costs: one, or none for an empty one."""
        return self.budget.cost("move") if isinstance(text, str) and text.strip() else 0

    def verify(self, task, answer) -> Verdict:
        """Grade a submitted answer with the world's answer check."""
        t = self.task(task)
        ok, why = self.check_answer(str(answer or ""))
        expected = self.answer if self.setting == "math" else "mentions " + ", ".join(
            f.id for f in self.facts if f.required)
        return Verdict(t.id, ok, ("correct: " if ok else "incorrect: ") + why,
                       (CaseResult((), expected, str(answer or "")[:200], ok),))

    def task(self, task) -> Task:
        """The task with this id (or the task itself)."""
        return by_id(self.tasks, task, self.name)

    def probe_generator(self, seed: int = 0) -> Iterator[str]:
        """An endless seeded stream of questions: the facts' phrasings and questions about the surface."""
        rng = random.Random(f"questions:{self.name}:{seed}")
        pool = [p for f in self.facts for p in f.yes + f.no]
        nouns = [w for w in re.findall(r"[A-Za-z]{4,}", self.surface)] or ["it"]
        while True:
            if pool and rng.random() < 0.5:
                yield rng.choice(pool)
            else:
                yield f"Is the {rng.choice(nouns).lower()} important?"

    @property
    def tool(self) -> ToolSpec:
        """The one exploration tool: put a question to the judge."""
        return ToolSpec("ask_judge", f"Ask the judge of {self.name} one yes/no question.", "question",
                        "One question the judge answers with yes, no, both or irrelevant.")

    @property
    def open_book(self) -> str:
        """The key facts' statements (the open-book condition of a judge world)."""
        return "\n".join(f"- {f.statement}" for f in self.facts)

    def certify(self, progress=None) -> dict:
        """The world's certification report (compiler/judge/certify.py)."""
        return certify_judge(self, progress)
