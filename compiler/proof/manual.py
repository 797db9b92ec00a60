"""Render a proof world's manual: the notation, the proof format and the *base* rules."""
from __future__ import annotations

from worldspec.compiler.proof import formula as F

_CONDITION_TEXT = {
    "fresh": "`fresh c`: the constant written for c must be new: it may not occur in any premise of the "
             "proof, in any assumption still open at this line, in the cited lines or in the conclusion "
             "(except where the schema itself places it).",
    "distinct": "`distinct`: the cited lines must be different lines; citing one line twice is refused.",
    "once": "`once`: a subproof may be cited (discharged) by one line only.",
    "nontrivial": "`nontrivial`: a cited subproof must have at least one line after its assumption.",
    "ordered": "`ordered`: cite the lines and subproofs in the order the schema lists them.",
}


def render_manual(world, prose: str, infer_rules: list, budget) -> str:
    """infer_rules: [(id, title, schema, doc)] in spec order, base schemas only."""
    n = world.notation
    w = n.word
    out = [f"# {world.name} (version {world.version}): proof system reference", ""]
    if world.summary:
        out += [world.summary, ""]
    if prose.strip():
        out += [prose.strip(), ""]
    out += [
        "## Formulas", "",
        f"- Atoms: a predicate with a capital letter and its arguments, `F(a)`, `L(a, b)`, or a bare "
        f"sentence letter `P`; an identity `a = b`; falsum `{w('bot')}`.",
        f"- Connectives, tightest first: negation `{w('not')}A`; conjunction `A {w('and')} B`; disjunction "
        f"`A {w('or')} B`; conditional `A {w('imp')} B` (groups to the right); biconditional "
        f"`A {w('iff')} B`. Parentheses group as usual.",
        f"- Quantifiers `{w('all')} x A` and `{w('ex')} x A` bind as tightly as negation: write "
        f"`{w('all')} x (F(x) {w('imp')} G(x))` for a conditional in their scope.",
        "- Variables are u, v, w, x, y, z (optionally with digits); every variable must be bound by a "
        "quantifier. Other lowercase names are constants (`a`, `b`, `c1`) or, before `(`, function "
        "symbols (`f(a)`). Bound variables may be renamed freely.",
        "- Also accepted: " + ", ".join(f"`{s}`" for s, _ in n.symbols if s not in dict(n.printed).values()
                                         and _ != "turnstile") + ".",
        "",
        "## Proofs", "",
        "A proof is a list of numbered lines, one step per line: the line number, the formula, and its "
        "justification at the end of the line.",
        "",
        "```",
        *_example(w, world.premise_word, world.assume_word),
        "```",
        "",
        f"- Premises come first, justified `{world.premise_word}`.",
        f"- An assumption (`{world.assume_word}`) opens a subproof; the lines of a subproof carry one more "
        "bar `|` than the lines around it (or are indented deeper). A subproof ends where the bars "
        "return to an outer level; an assumption at the same level as the current subproof ends it and "
        "opens the next one.",
        "- Any other line is justified by a rule id followed by what it cites: an earlier line by its "
        "number (`3`), a whole earlier subproof by its range from assumption to last line (`3-5`), "
        "separated by commas.",
        "- A line may cite an earlier line only while that line is still available: lines inside a "
        "subproof that has ended cannot be cited any more (cite the subproof as a whole instead). A "
        "subproof may be cited once it has ended, as long as the subproof around it is still open.",
        "- The proof proves its premises ⊢ its last line; the last line must be outside every subproof.",
        "",
        "## Rules", "",
        f"Each rule is a schema: the premises it cites, `{w('turnstile')}`, and what it concludes. "
        "`[A ... B]` is a subproof that assumes A and ends with B. Capital letters stand for any "
        f"formulas; `A[t/x]` is A with the term t put for the variable x (so `{w('all')} x A` may mention "
        "x); t and s stand for any terms, c and d for constants. Unless a rule says `ordered`, its "
        "citations may come in any order. Side conditions follow `;`.",
        "",
    ]
    used = set()
    for rid, title, schema, doc in infer_rules:
        out.append(f"- `{rid}` {title}: `{schema.show(n)}`" + (f" — {doc.strip()}" if doc.strip() else ""))
        used.update(c.split()[0] for c in schema.conditions())
    out.append("")
    if used:
        out += ["Side conditions:", ""]
        out += [f"- {_CONDITION_TEXT[c]}" for c in ("fresh", "distinct", "once", "nontrivial", "ordered")
                if c in used]
        out.append("")
    out += [
        "## Tasks and checking", "",
        f"A task gives premises and a goal; answer with a complete proof of the goal from (some of) those "
        f"premises. If a goal cannot be proved in this system, the correct answer is exactly "
        f"`{world.decline}`, and a proof of such a goal earns nothing.",
        "",
        f"The proof checker checks one proof per call (one probe unit). It reports `accepted` with the "
        f"sequent the proof proves, or the first line that fails, the rule it cites and why. Its verdict "
        f"is cut at {budget.feedback_lines} lines and {budget.feedback_chars} characters.",
        "",
    ]
    return "\n".join(out).rstrip() + "\n"


def _example(w, premise: str, assume: str) -> list[str]:
    rows = [(f"P {w('imp')} Q", premise), (f"Q {w('imp')} R", premise), ("| P", assume), ("| Q", "RULE 1, 3"),
            ("| R", "RULE 2, 4"), (f"P {w('imp')} R", "RULE 3-5")]
    width = max(len(f) for f, _ in rows) + 4
    return [f"{n}. {f.ljust(width)}{j}" for n, (f, j) in enumerate(rows, start=1)]


def sequent(premises, goal, notation: F.Notation) -> str:
    left = ", ".join(F.show(p, notation) for p in premises)
    return (left + " " if left else "") + f"{notation.word('turnstile')} {F.show(goal, notation)}"
