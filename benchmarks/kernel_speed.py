"""Kernel speed: compiled world programs against hand-written Python equivalents.

Each program runs in the demo world's true semantics (literal offset, 1-based
PLUCK, reversed SWEEP, ...) and is paired with a Python function that computes
the same output by hand, in the same process. The ratio is what matters: the
machine is shared and noisy, absolute times are not. Target: within 3x (goal 2x).
Each program runs on the native kernel (kernel_ast: compiled to Python's ast) and,
for comparison, on the closure kernel; the native compile time is reported
separately. Also prints the time `worldspec check` takes on the demo world, and on
AlienCode against the first edition's way measured in the same run (closures only,
every knockout run).

    python benchmarks/kernel_speed.py [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from worldspec.compiler import load_world  # noqa: E402
from worldspec.compiler.program.kernel import ProgramCompiler, Run, program_runner  # noqa: E402
from worldspec.compiler.program import kernel_ast, world as program_world  # noqa: E402
from worldspec.compiler.program.kernel_ast import AstCompiler  # noqa: E402

XS = list(range(300))


# Hand-written Python, as a person would write these programs against a Python
# module implementing the world's operators (true semantics).

def LESSEN(a, b, in_function=False):
    return b - a if in_function else a - b


def PLUCK(xs, i):
    return xs[i - 1]


def BELOW(a, b):
    return a <= b


def GAUGE(xs):
    return len(xs)


def py_sum(xs, K):
    s = -K + K
    for v in reversed(xs):
        s = LESSEN(s, LESSEN(-K + K, v))
    return [str(s)]


def py_walk(xs, K):
    out = []
    i = GAUGE([0 + K])
    n = GAUGE(xs)
    while BELOW(i, n):
        out.append(str(PLUCK(xs, i)))
        i = LESSEN(i, LESSEN(0 + K, 1 + K))
    return out


def py_calls(xs, K):
    def diff(a, b):
        return LESSEN(a, b, in_function=True)

    acc = LESSEN(0 + K, 0 + K)
    for v in reversed(xs):
        acc = diff(v, acc)
    return [str(acc)]


PROGRAMS = [
    ("sum (loop, no addition)", """
SET s AS {ZERO}
SWEEP v IN xs:
    SET s AS LESSEN(s, LESSEN({ZERO}, v))
EMIT(s)
""", py_sum),
    ("walk (while, PLUCK, BELOW)", """
SET i AS GAUGE(STRAND(0))
SET n AS GAUGE(xs)
AWAIT BELOW(i, n):
    EMIT(PLUCK(xs, i))
    SET i AS LESSEN(i, LESSEN(0, 1))
""", py_walk),
    ("function calls", """
CRAFT diff(a, b):
    DELIVER LESSEN(a, b)
SET acc AS 0
SET acc AS LESSEN(acc, acc)
SWEEP v IN xs:
    SET acc AS diff(v, acc)
EMIT(acc)
""", py_calls),
]


def timeit(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    world = load_world(os.path.join(os.path.dirname(HERE), "worlds", "demo.world"))
    K = dict(world.params)["K"]
    ratios, closure_ratios = [], []
    print(f"{'program':<30} {'native':>10} {'closure':>10} {'python':>10} {'ratio':>7} {'compile':>9}")
    for name, src, py in PROGRAMS:
        src = src.replace("{ZERO}", str(-K))
        tree = world.parse(src)
        compile_ms = timeit(lambda: AstCompiler(world.sem, src, (), world.surface.words).native(tree), 5) * 1e3
        native = AstCompiler(world.sem, src, (), world.surface.words).native(tree)
        kernels = {"native": program_runner(native, 2_000),
                   "closure": ProgramCompiler(world.sem, src, (), world.surface.words).program(tree)}

        def run_world(code):
            run = Run(world.words, 10_000_000)
            run.globals["xs"] = XS
            code(run)
            return run.out

        expected = py(XS, K)
        for code in kernels.values():
            got = run_world(code)
            assert got == expected, (name, got[:5], expected[:5])
        tn = timeit(lambda: run_world(kernels["native"]), args.repeat)
        tc = timeit(lambda: run_world(kernels["closure"]), args.repeat)
        tp = timeit(lambda: py(XS, K), args.repeat)
        ratios.append(tn / tp)
        closure_ratios.append(tc / tp)
        print(f"{name:<30} {tn * 1e3:>8.3f}ms {tc * 1e3:>8.3f}ms {tp * 1e3:>8.3f}ms {tn / tp:>6.1f}x "
              f"{compile_ms:>7.2f}ms")
    print(f"geometric mean ratio: {statistics.geometric_mean(ratios):.1f}x against Python with the operators "
          f"as functions (target <= 3x, goal 2x); the closure kernel: "
          f"{statistics.geometric_mean(closure_ratios):.1f}x")

    t = time.perf_counter()
    world.probe("EMIT(PLUCK(STRAND(1, 2, 3), 1))")
    print(f"one probe (parse + compile + run): {(time.perf_counter() - t) * 1e3:.2f} ms")
    t = time.perf_counter()
    report = load_world(os.path.join(os.path.dirname(HERE), "worlds", "demo.world")).certify()
    print(f"worldspec check demo: {time.perf_counter() - t:.2f} s ({len(report['problems'])} problems)")
    check_aliencode()


def certify_seconds(path: str) -> float:
    """CPU seconds to certify a world (CPU time: other processes on the machine count less)."""
    world = load_world(path)
    t = time.process_time()
    world.certify()
    return time.process_time() - t


def check_aliencode() -> None:
    """`worldspec check aliencode` as shipped, against the first edition's way in the same run:
    every program on the closure kernel and every knockout run (none skipped as unreachable)."""
    path = os.path.join(os.path.dirname(HERE), "worlds", "aliencode.world")
    shipped = min(certify_seconds(path) for _ in range(2))
    tiered, unreached = kernel_ast.tiered_program, program_world.unreached
    kernel_ast.tiered_program = lambda sem, src, known, words, tree: ProgramCompiler(sem, src, known,
                                                                                     words).program(tree)
    program_world.unreached = lambda rule, words: False
    try:
        first = min(certify_seconds(path) for _ in range(2))
    finally:
        kernel_ast.tiered_program, program_world.unreached = tiered, unreached
    print(f"worldspec check aliencode: {shipped:.2f} s CPU; closures and every knockout: {first:.2f} s "
          f"(ratio {shipped / first:.2f}, target <= 1)")


if __name__ == "__main__":
    main()
