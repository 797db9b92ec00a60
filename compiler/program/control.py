"""Control-flow rules checked when the spec compiles: a value the kernel would refuse is a spec error.

The kernel accepts only some values from its control hooks: `jump` one of "break", "continue" or
"pass"; `passes` a whole number; `branch_order` a list of positions of the conditions. A rule that
gives anything else used to fail only when a probe reached it, as a runtime error the agent saw.
Here each rule on one of these hooks (alone over its base line, and as the true world stacks it) is
evaluated on every argument the kernel can pass, in each of a grid of contexts (inside one to three
loops, in a function or not, on the first passes); the first refused value is a located SpecError
that names the arguments and the context. Bodies that fail to evaluate are left to run time (a rule
may raise an error on purpose); only a value the kernel cannot read is refused.
"""
from __future__ import annotations

import itertools

from worldspec.diagnostics import SpecError
from worldspec.values import Ctx, EvalError, show, type_name

JUMP_WORDS = ("break", "continue", "pass")
MAX_CONDITIONS = 4  # branch_order is tried on an if with 1 to this many conditions
MAX_PASSES = 5  # passes is tried on sequences (and while loops) of 0 to this many passes


def _contexts(in_loop_only: bool):
    """The contexts a control hook is tried in (a jump always stands inside a loop)."""
    for in_function, loop_depth, iteration, call_depth in itertools.product(
            (False, True), (1, 2, 3) if in_loop_only else (0, 1, 2), (0, 1, 2), (0, 1)):
        if call_depth and not in_function:
            continue
        ctx = Ctx()
        ctx.in_function, ctx.loop_depth, ctx.in_loop = in_function, loop_depth, loop_depth > 0
        ctx.iteration, ctx.call_depth = (iteration if loop_depth else 0), call_depth
        yield ctx


def _jump_ok(v, args) -> str | None:
    if type(v) is str and v in JUMP_WORDS:
        return None
    return 'one of "break", "continue" or "pass"'


def _passes_ok(v, args) -> str | None:
    return None if type(v) is int else "a whole number of passes"


def _order_ok(v, args) -> str | None:
    n = args[0]
    if type(v) is list and all(type(i) is int and 0 <= i < n for i in v):
        return None
    return f"a list of positions of the {n} condition(s), each from 0 to {n - 1}"


# hook -> (the argument lists the kernel passes, whether it runs only inside loops, the check)
CONTROL = {
    "jump": ([["break"], ["continue"]], True, _jump_ok),
    "passes": ([[k, n] for k in ("for", "while") for n in range(MAX_PASSES + 1)], False, _passes_ok),
    "branch_order": ([[n] for n in range(1, MAX_CONDITIONS + 1)], False, _order_ok),
}


def _where(ctx: Ctx) -> str:
    loops = f"inside {ctx.loop_depth} loop{'s' if ctx.loop_depth != 1 else ''}" if ctx.loop_depth else "outside loops"
    fn = f", in a function (call_depth {ctx.call_depth})" if ctx.in_function else ""
    it = f", on pass {ctx.iteration}" if ctx.loop_depth else ""
    return loops + it + fn


def refused(op, hook: str) -> str | None:
    """The first value of a control hook's body the kernel refuses, described; None when it takes all."""
    arg_lists, in_loop_only, check = CONTROL[hook]
    contexts = list(_contexts(in_loop_only))
    if not op.uses_ctx:
        contexts = contexts[:1]
    for args in arg_lists:
        for ctx in contexts:
            try:
                v = op(ctx, list(args))
            except EvalError:
                continue
            want = check(v, args)
            if want is not None:
                shown = ", ".join(show(a) if type(a) is not str else f'"{a}"' for a in args)
                got = f'"{v}"' if type(v) is str else f"{show(v)} ({type_name(v)})"
                return f"{hook}({shown}) gives {got} {_where(ctx) if op.uses_ctx else ''}".rstrip() + \
                    f", and the kernel needs {want}"
    return None


def check_control_rules(builder) -> None:
    """Every rule on a control hook gives values the kernel accepts (else a SpecError at the rule)."""
    everyone = tuple(builder.rules)
    for rid, r in builder.rules.items():
        d = r.override
        if d.kind != "hook" or d.name not in CONTROL:
            continue
        stacked = tuple(x for x in builder.layers.get(d.target, ()) if x in everyone)
        upto = stacked[:stacked.index(rid) + 1]
        for layers in dict.fromkeys(((rid,), upto)):
            op = builder.op(d.target, layers)
            if op is None:
                continue
            why = refused(op, d.name)
            if why is not None:
                raise SpecError(d.span, f"rule {rid}: {why}",
                                _HINTS[d.name])


_HINTS = {
    "jump": 'A jump rule gives the word the statement acts as: "break", "continue" or "pass" (do nothing); '
            'end the body with `else word` to keep the others as they are.',
    "passes": "A passes rule gives a number of passes: `n`, `n + 1`, ... (a for loop visits that many elements).",
    "branch_order": "A branch_order rule gives the order the conditions are tried in, as positions: "
                    "`reverse(range(n))`, `concat([0], reverse(range(1, n)))`, ...",
}
