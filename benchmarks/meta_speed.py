"""Meta-language speed: bundled worlds' rule bodies and hidden functions, compiled natively
(worldspec/meta_ast.py) and by the closure compiler (worldspec/meta.py), against hand-written
Python equivalents, all measured in the same process (benchmarks/kernel_speed.py's method: the
machine is shared and noisy, the ratios are what matter). Target: geomean within 3x.

Each body is taken from its world file (compiled at the world's declared seed) and paired with a
Python function computing the same value as a person would write it against the language's
builtin library: Python's own `if`, recursion, loops, locals and integer arithmetic, and the
library's functions (`put`, `get`, `concat`, `sort`, ...: worldspec.builtins, the same objects the
compiled bodies call) for the operations the language defines. So the ratio is the compiler's
overhead (variables, calls, conditionals, lets, lambdas, the checked arithmetic and the step and
size charges), not the library's. A rule body is called as the program kernel calls an operator,
on a frame `body([None, ctx, a, b])`; a hidden function or def through its Unit.

    python benchmarks/meta_speed.py [--repeat N]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from worldspec.builtins import BUILTINS, INFIX  # noqa: E402
from worldspec.compiler.common import draw_params, meta_compiler  # noqa: E402
from worldspec.meta import MetaCompiler  # noqa: E402
from worldspec.parser import load_spec  # noqa: E402
from worldspec.values import Ctx  # noqa: E402

ROOT = os.path.dirname(HERE)
B = {name: fn for name, (fn, *_) in BUILTINS.items()}
CTX = Ctx(10 ** 12)  # the hand-written functions' context for the library's calls (never runs out)


# ---------------------------------------------------------------- hand-written Python


def PARCEL(a, b):  # aliencode R4
    return 0 - ((0 - a) // b)


def REMNANT(a, b):  # aliencode R5
    abs_ = B["abs"]
    return 0 - (abs_(CTX, a) % abs_(CTX, b)) if a < 0 else abs_(CTX, a) % abs_(CTX, b)


def TWIN(a, b):  # aliencode R9
    if type(a) is str and type(b) is str:
        return INFIX["=="](CTX, B["lower"](CTX, a), B["lower"](CTX, b))
    return INFIX["=="](CTX, a, b)


def TRUTHY(v):  # aliencode R11
    return v > 0 if type(v) is int else B["truthy"](CTX, v)


def PRUNE(xs, x):  # aliencode R18
    i = B["index_of"](CTX, xs, x)
    return xs if i < 0 else B["concat"](CTX, B["take"](CTX, xs, i), B["drop"](CTX, xs, i + 1))


def MIRROR(xs):  # aliencode R22
    if type(xs) is str:
        return B["join"](CTX, B["reverse"](CTX, B["split"](CTX, xs, " ")), " ")
    return B["reverse"](CTX, xs)


def LODGE(xs, i, x):  # aliencode R13
    return B["concat"](CTX, B["take"](CTX, xs, i - 1), B["concat"](CTX, [x], B["drop"](CTX, xs, i - 1)))


def CENTER(xs):  # aliencode R28
    return B["sort"](CTX, xs)[len(xs) // 2]


def ASSIGN(name, v, in_loop=True):  # aliencode R29, inside a loop
    return B["abs"](CTX, v) if in_loop and type(v) is int else v


def LESSEN(a, b, in_function=False):  # demo R3
    return b - a if in_function else a - b


def seen(tr, k):  # worlds/oracle/code/_debugger.world
    s = tr["seen"]
    return s[k] if k in s else 0


def pick(env, names):
    m = {}
    for k in names:
        if k in env:
            m = B["put"](CTX, m, k, env[k])
        else:
            m = m
    return m


def rec(tr, k, env):
    c = seen(tr, k) + 1
    hit = pick(env, tr["names"]) if INFIX["=="](CTX, tr["want"], [k, c]) else tr["hit"]
    return B["put"](CTX, B["put"](CTX, tr, "seen", B["put"](CTX, tr["seen"], k, c)), "hit", hit)


def fib(n, tr):  # cii-e-fib-recursion
    if n == 1 or n == 2:
        return [1, rec(tr, 1, {"n": n})]
    x = fib(n - 1, tr)
    a = x[0]
    y = fib(n - 2, rec(x[1], 2, {"n": n, "a": a}))
    b = y[0]
    return [a + b, rec(y[1], 3, {"n": n, "a": a, "b": b, "result": a + b})]


def setat(xs, k, v):
    return B["concat"](CTX, B["take"](CTX, xs, k), B["concat"](CTX, [v], B["drop"](CTX, xs, k + 1)))


def sw(xs, a, b):
    return setat(setat(xs, a, xs[b]), b, xs[a])


def sift(e, tr, lim, k):  # cii-h-heap-sort
    put = B["put"]
    while True:
        j, arr = e["j"], e["arr"]
        l, r = 2 * j + 1, 2 * j + 2
        ll1 = l if l < lim and arr[l] > arr[j] else j
        ll = r if r < lim and arr[r] > arr[ll1] else ll1
        e1 = put(CTX, put(CTX, put(CTX, e, "ll", ll), "l", l), "r", r)
        if ll == j:
            return [e1, tr]
        e = put(CTX, put(CTX, e1, "arr", sw(arr, j, ll)), "j", ll)
        tr = rec(tr, k, e)


def heap_run(v, tr):
    put = B["put"]
    n = len(v["arr"])
    acc = [put(CTX, v, "n", n), tr]
    for i in reversed(range(n // 2)):
        out = sift(put(CTX, put(CTX, acc[0], "i", i), "j", i), acc[1], acc[0]["n"], 1)
        acc = [out[0], rec(out[1], 2, out[0])]
    acc = [acc[0], rec(acc[1], 3, acc[0])]
    for i in reversed(range(1, n)):
        e = acc[0]
        out = sift(put(CTX, put(CTX, put(CTX, e, "arr", sw(e["arr"], 0, i)), "i", i), "j", 0), acc[1], i, 4)
        acc = [out[0], rec(out[1], 5, out[0])]
    return rec(acc[1], 6, acc[0])


def rhs(t, y):  # psi-e-pendulum
    return [y[1], -(10.0 / 2.0) * B["sin"](CTX, y[0])]


# ---------------------------------------------------------------- the bodies and their inputs


def start(names, k=1, n=1):
    return {"want": [k, n], "names": names, "seen": {}, "hit": None}


XS = [5, 3, 9, 1, 7, 3, 8, 2]
CASES = [  # (world, kind of body, name, inputs per call, hand-written)
    ("worlds/aliencode.world", "rule", "R4", [(17, 5), (-17, 5), (100, 7)], PARCEL),
    ("worlds/aliencode.world", "rule", "R5", [(17, 5), (-17, 5), (100, -7)], REMNANT),
    ("worlds/aliencode.world", "rule", "R9", [("Abc", "aBC"), ("x", "y"), ("same", "same")], TWIN),
    ("worlds/aliencode.world", "rule", "R11", [(5,), (-3,), ("s",), ([],)], TRUTHY),
    ("worlds/aliencode.world", "rule", "R13", [(XS, 3, 42), (XS, 1, 0)], LODGE),
    ("worlds/aliencode.world", "rule", "R18", [(XS, 3), (XS, 4)], PRUNE),
    ("worlds/aliencode.world", "rule", "R22", [("the quick brown fox",), (XS,)], MIRROR),
    ("worlds/aliencode.world", "rule", "R28", [(XS,), ([4, 1, 3],)], CENTER),
    ("worlds/aliencode.world", "rule", "R29", [("x", -4), ("y", "s")], ASSIGN),
    ("worlds/demo.world", "rule", "R3", [(10, 4), (-2, 9)], LESSEN),
    ("worlds/oracle/code/cii-e-fib-recursion.world", "def", "fib",
     [(9, start(["n", "a", "b", "result"], 3, 4)), (6, start(["n", "a", "b", "result"], 2, 1))], fib),
    ("worlds/oracle/code/cii-h-heap-sort.world", "def", "run",
     [({"arr": [5, -2, 9, 1, 7, 3, 8, 2, 6, 0]}, start(["arr", "n", "i", "j", "ll", "l", "r"], 4, 3))], heap_run),
    ("worlds/oracle/physics/psi-e-pendulum.world", "def", "rhs", [(0.0, [1.0, 0.0]), (0.5, [0.3, -0.2])], rhs),
]


def units(path: str, kind: str, name: str) -> dict:
    """{compiler: a callable on (ctx, args)} for one body of a world, under each compiler."""
    spec = load_spec(os.path.join(ROOT, path))
    params = draw_params(spec, spec.seed)
    out = {}
    for mode in ("ast", "closure"):
        if kind == "def":
            mc = meta_compiler(spec, params)
            mc.compiler = mode  # the defs compile on first use: under this compiler
            mc.finish()
            u = mc.defs[name]
            out[mode] = u
            continue
        rule, = [r for r in spec.rules if r.id == name]
        d = rule.override
        mc = MetaCompiler(params, compiler=mode)
        for x in spec.defs:
            mc.add_def(x)
        out[mode] = mc.unit(d.name, [p.name for p in d.params], d.body)
    return out


ROUNDS = 7


def timed(fns: list, repeat: int) -> list[float]:
    """The best of ROUNDS timings of each fn() run `repeat` times, the fns taking turns within each round
    (so a burst of load on the shared machine hits all of them alike)."""
    best = [math.inf] * len(fns)
    for _ in range(ROUNDS):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            for _ in range(repeat):
                fn()
            best[i] = min(best[i], time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20000,
                    help="calls per timing of a rule body (a def: a thousandth as many)")
    args = ap.parse_args()
    native_ratios, closure_ratios = [], []
    print(f"{'world':32} {'body':6} {'python':>10} {'native':>10} {'closure':>10} {'native/py':>10} "
          f"{'closure/py':>10} {'closure/native':>14}")
    for path, kind, name, inputs, hand in CASES:
        compiled = units(path, kind, name)
        in_loop = name == "R29"
        ctx = Ctx(10 ** 12)
        ctx.in_loop, ctx.loop_depth = in_loop, int(in_loop)
        for a in inputs:  # every compiler computes the hand-written value
            want = hand(*a)
            for mode, u in compiled.items():
                got = u(ctx, list(a))
                assert got == want and type(got) is type(want), (path, name, mode, a, got, want)
        repeat = args.repeat if kind == "rule" else max(1, args.repeat // 1000)

        def py_loop():
            for a in inputs:
                hand(*a)

        def loop(u):
            body = u.body if kind == "rule" else None

            def run():
                if body is not None:  # as the program kernel calls an operator: the body on a frame
                    for a in inputs:
                        body([None, ctx, *a])
                else:
                    for a in inputs:
                        u(ctx, list(a))
            return run
        t_py, t_native, t_closure = timed([py_loop, loop(compiled["ast"]), loop(compiled["closure"])], repeat)
        native_ratios.append(t_native / t_py)
        closure_ratios.append(t_closure / t_py)
        world = os.path.basename(path)[:-6]
        print(f"{world[:32]:32} {name:6} {t_py * 1e6 / repeat:9.1f}u {t_native * 1e6 / repeat:9.1f}u "
              f"{t_closure * 1e6 / repeat:9.1f}u {t_native / t_py:9.2f}x {t_closure / t_py:9.2f}x "
              f"{t_closure / t_native:13.2f}x")
    geo = statistics.geometric_mean
    print(f"\ngeomean over {len(CASES)} bodies: native {geo(native_ratios):.2f}x hand-written Python "
          f"(target <= 3x), closures {geo(closure_ratios):.2f}x; native is {geo(closure_ratios) / geo(native_ratios):.2f}x "
          f"faster than the closures")


if __name__ == "__main__":
    main()
