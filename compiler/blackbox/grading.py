"""Grading a box's answers: values within a tolerance, strings exactly, and answers that are programs.

A box declares how its answers are compared:

    within 0.01 absolute        # numbers, also inside lists and maps, within 0.01
    within 0.01 relative        # ... within 0.01 * |expected|, at every magnitude  (`within 0.01` alone: relative)
    normalise spaces            # string answers: whitespace is ignored (also: case)
    answer program              # the answer is a program, run on every test input

A string output is matched exactly (the answer written bare or as one quoted
literal) unless the box declares a normalisation; any other output is read
back as a literal and compared as a value, so `[0,1]` and `[0, 1]` agree and a
tuple `(1.5, 2)` answers the list `[1.5, 2]`.

A program answer is one expression of the meta-language (docs/language.md):
either a function such as `fn(t) => [2 * t, 0.0]` or an expression over the
box's input names. It is parsed and compiled by the spec's own compiler, which
knows only the builtins (no params, no defs, no names that reach Python), and
runs under a step limit (the box's own, `step_limit`, PROGRAM_STEPS unless it
declares one), so an agent's program is never Python.
"""
from __future__ import annotations

import math

import attrs

from worldspec.compiler.api import InputError
from worldspec.compiler.blackbox.literals import MAX_INPUT_CHARS, parse_literals, single_string
from worldspec.diagnostics import SpecError, SpecErrors
from worldspec.meta import MetaCompiler, Unit
from worldspec.parser import parse_expr
from worldspec.values import MAX_STEPS, Ctx, EvalError, Function, LimitError, same, show

TOLERANCE_MODES = ("relative", "absolute")
NORMALISATIONS = ("spaces", "case")
PROGRAM_STEPS = MAX_STEPS  # a box that declares `step_limit N` gives its programs N
# The most meta-language steps a box may allow each call with `step_limit` (five times the default, MAX_STEPS): a
# call at the ceiling takes seconds, well within the runner's wall-clock deadline for a probe (runner/sandbox.py).
STEP_CEILING = 1_000_000
MAX_PROGRAM_CHARS = 4000


@attrs.frozen
class Grading:
    """How an answer is compared with the expected output."""

    tolerance: float = 0.0
    mode: str = "relative"  # "relative" | "absolute"
    normalise: tuple[str, ...] = ()  # of NORMALISATIONS

    def close(self, got, want) -> bool:
        """Equal values; numbers within the tolerance, also inside lists and maps."""
        tg, tw = type(got), type(want)
        if tg in (int, float) and tw in (int, float):
            if not self.tolerance:
                return same(got, want)
            if math.isnan(float(got)) or math.isnan(float(want)):
                return False
            # relative means relative at every magnitude: |got - want| <= r * |want| (it was r * max(1, |want|),
            # so 0 was accepted for an expected 2.5e-10, a soundness bug); absolute: <= r
            scale = 1.0 if self.mode == "absolute" else abs(float(want))
            return abs(float(got) - float(want)) <= self.tolerance * scale
        if tg is list and tw is list:
            return len(got) == len(want) and all(self.close(x, y) for x, y in zip(got, want))
        if tg is dict and tw is dict:
            return got.keys() == want.keys() and all(self.close(got[k], want[k]) for k in want)
        return same(got, want)

    def text_equal(self, got: str, want: str) -> bool:
        """Strings equal exactly, or after the declared normalisations."""
        for n in self.normalise:
            if n == "spaces":
                got, want = "".join(got.split()), "".join(want.split())
            elif n == "case":
                got, want = got.lower(), want.lower()
        return got == want

    def matches(self, expected, answer) -> bool:
        """Whether an answer text states the expected output."""
        if not isinstance(answer, str):
            return False
        t = unwrap(answer)
        shown = show(expected)
        # an answer is read up to a few times the size of the expected output: a query's 2,000-character
        # limit would leave a long output (a sieve's 998 booleans) gradable only by its exact text
        limit = answer_limit(shown)
        if type(expected) is str:
            quoted = single_string(t, limit)
            return self.text_equal(t if quoted is None else quoted, expected)
        if t == shown:
            return True
        try:
            vals = parse_literals(t, limit)
        except InputError:
            return False
        return len(vals) == 1 and self.close(vals[0], expected)

    def describe(self) -> str:
        """One manual line saying how answers are compared ("" when exactly)."""
        parts = []
        if self.tolerance:
            how = "absolute" if self.mode == "absolute" else "relative: times the size of the expected number"
            parts.append(f"Numbers, also inside lists and maps, are accepted within {self.tolerance:g} "
                         f"({how}).")
        if self.normalise:
            parts.append("Text answers are compared ignoring " + " and ".join(
                {"spaces": "whitespace", "case": "letter case"}[n] for n in self.normalise) + ".")
        return " ".join(parts)


def answer_limit(shown: str) -> int:
    """The most characters an answer to the output written `shown` is read from."""
    return 4 * len(shown) + MAX_INPUT_CHARS


def unwrap(text: str) -> str:
    """An answer or input without surrounding whitespace and backticks."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] == "`":
        t = t.strip("`").strip()
    return t


# ---------------------------------------------------------------- answers that are programs


def more_steps(err: EvalError) -> str:
    """The hint for a call that ran out of steps: the box may allow more (up to the ceiling)."""
    if isinstance(err, LimitError) and err.message.startswith("step limit"):
        return f"A box may allow more steps per call with step_limit N (at most {STEP_CEILING:,})."
    return ""


def compile_program(text, names: list[str]) -> Unit:
    """An agent's program (one meta-language expression over `names`) compiled; InputError when it is not one."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("no program given")
    if len(text) > MAX_PROGRAM_CHARS:
        raise InputError(f"the program is too long (more than {MAX_PROGRAM_CHARS} characters)")
    try:
        tree = parse_expr(unwrap(text), "<answer>")
        return MetaCompiler().unit("answer", list(names), tree)
    except (SpecError, SpecErrors) as e:
        first = e.render().splitlines()[0] if hasattr(e, "render") else str(e)
        raise InputError(f"the program does not compile: {first}") from None
    except RecursionError:
        raise InputError("the program nests too deeply") from None


def run_program(unit: Unit, values: list, max_steps: int = PROGRAM_STEPS):
    """The program's result on one input (a function value is applied to the inputs); raises EvalError."""
    ctx = Ctx(max_steps)
    try:
        out = unit(ctx, list(values))
        if isinstance(out, Function):
            ctx.charge(1)
            out = out(*values)
        return out
    except RecursionError:
        raise LimitError("the program nests too deeply") from None
    except (MemoryError, OverflowError):
        raise LimitError("a value grew too large") from None


def program_results(unit: Unit, inputs: list[list], max_steps: int = PROGRAM_STEPS) -> list[tuple[str, object]]:
    """("ok", value) or ("error", message) of the program on each input, each run under `max_steps` steps."""
    out = []
    for values in inputs:
        try:
            out.append(("ok", run_program(unit, values, max_steps)))
        except EvalError as e:
            out.append(("error", e.message))
    return out
