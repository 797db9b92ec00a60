"""Render the manual an agent reads: base semantics only, which is what makes it flawed."""
from __future__ import annotations

from worldspec import ast
from worldspec.compiler.common import interpolate
from worldspec.compiler.program.semantics import param_list
from worldspec.values import MAX_DEPTH

_HOOK_TITLES = {
    "int_literal": "Integer literals", "str_literal": "String literals", "float_literal": "Decimal literals",
    "list_literal": "List literals", "truthy": "Conditions", "iterate": "Loops", "passes": "Loop passes",
    "jump": "Leaving a loop", "branch_order": "Order of conditions", "else_runs": "The otherwise branch",
    "show": "Printing values", "output": "Output lines", "assign": "Assignment", "lookup": "Variables",
    "update": "Updating operators", "assign_many": "Multiple assignment", "for_many": "Loops over pairs",
    "index": "Indexing", "slice": "Slicing", "set_index": "Setting an element", "arguments": "Arguments",
    "returned": "Return values", "no_return": "Functions without a return", "position": "Positions", "enclosed": "Variables around a function",
    "loop_else": "A loop's else block",
}

_STATEMENTS = [
    ("assign", "binds the name to the value of the expression in the current scope "
               "(inside a function body, a local variable)."),
    ("if", "runs the indented block when the condition holds"),
    ("elif", "is tried when every earlier condition failed"),
    ("else", "runs when no condition held"),
    ("for", "runs the block once for each element of a list (or character of a string), in order, "
            "with the name bound to it"),
    ("while", "repeats the block while the condition holds"),
    ("function", "defines a function; calling it runs the block with the parameters bound to the "
                 "arguments"),
    ("return", "ends the function and gives the value to its caller"),
    ("set_index", "replaces the element at a position of the list in the variable"),
    ("assign_many", "binds each name to the value in the same position (one list value is unpacked)"),
    ("for_many", "runs the block once for each element of a list, each element a list whose values are "
                 "bound to the names in order"),
]
_FORMS = {"name": "name", "expr": "expr", "params": "a, b", "index": "i", "names": "a, b", "exprs": "x, y"}


def render_manual(spec: ast.Spec, surface, params: dict, budget) -> str:
    """The manual in Markdown: statements, literals, hooks and operators as base defines them."""
    w = surface.word
    out = [f"# {spec.name} (version {spec.version}): language reference", ""]
    if spec.summary:
        out += [interpolate(spec.summary, params), ""]
    if spec.manual:
        out += [interpolate(spec.manual, params).strip(), ""]
    out += ["## Statements", "",
            "Programs are sequences of statements, one per line; blocks are indented under the line "
            "that opens them. `#` starts a comment.", ""]
    out.append(f"- `{w('output')}(value, ...)` prints its arguments on one line, separated by single "
               f"spaces.")
    none_word = w("none") if surface.has("none") else "none"
    for key, text in _STATEMENTS:
        if surface.has(key):
            form = surface.render(key, **_FORMS).strip()
            if key == "return":
                bare = surface.render(key, expr="").strip()
                text += f"; `{bare}` alone gives `{none_word}`"
            out.append(f"- `{form}` {text.rstrip('.')}.")
    if surface.has("loop_else"):
        out.append(f"- `{w('loop_else')}`, right after a loop's block (at the loop's indentation), opens a block that "
                   f"runs when the loop ends without a break.")
    if surface.has("break"):
        out.append(f"- `{w('break')}` leaves the innermost loop at once.")
    if surface.has("break_many"):
        out.append(f"- `{surface.render('break_many', count='2')}` leaves the 2 innermost loops at once (any "
                   f"number from 1 to the loops around it).")
    if surface.has("continue"):
        out.append(f"- `{w('continue')}` skips to the next iteration of the innermost loop.")
    if surface.has("pass"):
        out.append(f"- `{w('pass')}` does nothing (a block that has nothing to do).")
    if surface.has("index"):
        maps = " (and `m[k]` is the value of key k of a map)" if w("map") == "on" else ""
        out.append(f"- `xs[i]` and `xs[lo:hi]` index and slice lists and strings{maps}.")
    if surface.has("set_index") and w("set_index") == "{name}[{index}] = {expr}":
        out.append("- `xs[i][j] = v` sets an element of an element: xs gets the element at i with its element j "
                   "replaced.")
    none = f", and `{w('none')}` for no value" if surface.has("none") else ""
    decimals = ", decimals (`1.5`)" if w("float") == "on" else ""
    lists = ", lists in square brackets (`[1, 2]`)" if w("list") == "on" else ""
    if w("map") == "on":  # keys are integers or strings
        lists += ", maps in braces (`{\"k\": v}`, `{1: \"a\", 2: \"b\"}`; keys are integers or strings)"
    out += ["", f"Literals: integers in decimal (`42`, `-5`){decimals}, strings in double quotes (`\"abc\"`, "
                f"with the escapes `\\n`, `\\t`, `\\\"` and `\\\\`){lists}, `{w('true')}` and "
                f"`{w('false')}`{none}.", ""]
    hooks = [d for d in spec.base if d.kind == "hook"]
    if hooks:
        out += ["## Evaluation", ""]
        for d in hooks:
            out.append(f"- **{_HOOK_TITLES.get(d.name, d.name)}.** {interpolate(d.doc, params)}")
        out.append("")
    ops = [d for d in spec.base if d.kind == "op"]
    if ops:
        out += ["## Operators", "", "Operators are called like functions: `NAME(arg, ...)`.", ""]
        if surface.operators:
            out += operator_table(surface.operators)
        for d in ops:
            ret = "" if d.returns.name == "any" else f" -> {d.returns}"
            doc = interpolate(d.doc, params)
            if d.mutates and d.updates is not None:
                doc += (f" With a variable as `{d.mutates}`, wherever it is called (in an expression too), it also "
                        f"updates that variable.")
            elif d.mutates:
                doc += (f" On a line of its own with a variable as `{d.mutates}`, it also stores its result "
                        f"in that variable.")
            out.append(f"- `{d.name}({param_list(d.params)})`{ret}: {doc}")
        out.append("")
    out += ["## Running programs", "",
            f"Each run may cost at most {budget.units_per_call} probe units: every argument of "
            f"`{w('output')}` costs {budget.cost('output')}, or {budget.cost('output_in_loop')} when the "
            f"statement is inside a loop body (charged once, however often the loop runs). A program over "
            f"the limit is rejected and nothing runs. You see at most {budget.feedback_lines} lines and "
            f"{budget.feedback_chars} characters of output.", ""]
    if w("call_depth") != str(MAX_DEPTH):
        out[-1:] = [f"Function calls may nest {w('call_depth')} deep.", ""]
    return "\n".join(out).rstrip() + "\n"


def operator_table(operators) -> list[str]:
    """The manual's lines for the surface operators: what each symbol calls, tightest first."""
    lines = ["Some are also written with symbols; each form is the same call:", ""]
    for o in sorted(operators, key=lambda o: -o.precedence):
        call = f"{o.op}(a, b)" if o.kind == "infix" else f"{o.op}(a)"
        group = {"left": ", grouping left to right", "right": ", grouping right to left",
                 "none": ", not chained"}[o.assoc] if o.kind == "infix" else ""
        lines.append(f"- `{o.example()}` is `{call}` (precedence {o.precedence}{group}).")
    return lines + ["", "A higher precedence binds tighter; brackets group as usual.", ""]

