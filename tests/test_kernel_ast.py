"""The native kernel (compiler/program/kernel_ast.py) against the closure kernel, and its safety.

Differential: every bundled program world (and the lang worlds, and a world with every
hook overridden), in its true, manual and knockout variants, runs its examples, task
programs and solutions, rule witnesses, generated probes and the hostile corpus on
both kernels; feedback, charges, outputs, errors with their lines and verdicts must be
identical. Safety: every module the native compiler built in those runs holds only the
allowed nodes, table names and table calls; program names never become Python names;
the table has no builtins.
"""
from __future__ import annotations

import ast as py
import itertools
import os

import pytest

from conftest import FULL_SUITE, full_or
from test_hostile_probes import CORPUS
from test_probe_fuzz import HOOKED
from worldspec.builtins import BUILTINS
from worldspec.compiler import compile_spec, load_world
from worldspec.compiler.program import kernel, kernel_ast
from worldspec.parser import parse_spec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANG = os.path.join(ROOT, "tests", "worlds", "lang")
WORLD_FILES = {"demo": os.path.join(ROOT, "worlds", "demo.world"),
               "aliencode": os.path.join(ROOT, "worlds", "aliencode.world"),
               **{f[:-6]: os.path.join(LANG, f) for f in sorted(os.listdir(LANG)) if f.endswith(".world")},
               # the third edition's statements (loop-else, break 2, maps, POP, the position hook)
               "lang3_loops": os.path.join(ROOT, "tests", "worlds", "lang3", "loops.world"),
               "lang3_pylike": os.path.join(ROOT, "tests", "worlds", "lang3", "pylike.world")}
CLOSURE, NATIVE = 10 ** 15, -1  # NATIVE_AFTER_STEPS: never native, native from the first run
PROBES_PER_VARIANT = 25  # generated probes per world variant (the slow test runs many more)
FAST_VARIANTS = 5  # the true and manual worlds and three knockouts (the slow test runs the others)

REAL_BUILD = kernel_ast.build  # the fixture below wraps it
BUILT: list[tuple[py.Module, dict]] = []  # every module the native compiler built in this file's runs


@pytest.fixture(scope="module")
def worlds():
    out = {name: load_world(path) for name, path in WORLD_FILES.items()}
    out["hooked"] = compile_spec(parse_spec(HOOKED, "hooked.world"))
    return out


@pytest.fixture(autouse=True)
def recorded(monkeypatch):
    """Keep every module the native compiler builds, to vet them."""
    real = kernel_ast.build

    def build(module, table):
        BUILT.append((module, table))
        return real(module, table)
    monkeypatch.setattr(kernel_ast, "build", build)


def variants(world):
    """The true world, the manual's world and every knockout."""
    return [world, world.base_world(), *(world.knockout(r.id) for r in world.rules)]


def programs(world, probes: int, seed: int = 0) -> list[str]:
    """Every program a world carries, and generated probes."""
    texts = [e.program for e in world.examples]
    for data in world.task_data.values():
        texts += [data.program, *data.solutions]
    for r in world.rule_data.values():
        texts += list(r.witnesses)
    texts += list(itertools.islice(world.probe_generator(seed), probes))
    return [t for t in texts if t]


def outcomes(world, texts: list[str], mode: int, monkeypatch) -> list:
    """What each program gives on one kernel: its probe feedback and its execution."""
    monkeypatch.setattr(kernel_ast, "NATIVE_AFTER_STEPS", mode)
    world.builder.program_cache.clear()
    out = []
    for text in texts:
        out.append((world.probe(text), world.execute(text)))
    return out


def verdicts(world, mode: int, monkeypatch) -> list:
    monkeypatch.setattr(kernel_ast, "NATIVE_AFTER_STEPS", mode)
    world.builder.program_cache.clear()
    out = []
    for tid, data in world.task_data.items():
        answers = [*data.solutions, data.program, *(e.program for e in world.examples[:2])]
        out += [world.verify(tid, a) for a in answers if a]
    return out


def same_on_both(world, texts, monkeypatch):
    closure, native = (outcomes(world, texts, mode, monkeypatch) for mode in (CLOSURE, NATIVE))
    for text, a, b in zip(texts, closure, native):
        assert a == b, f"the kernels differ on:\n{text}"
    return len(texts)


@pytest.mark.parametrize("name", [*WORLD_FILES, "hooked"])
def test_both_kernels_agree_on_every_world_variant(worlds, name, monkeypatch):
    total = 0
    for k, world in enumerate(variants(worlds[name])[:FAST_VARIANTS]):
        total += same_on_both(world, programs(world, PROBES_PER_VARIANT, seed=k), monkeypatch)
        assert verdicts(world, CLOSURE, monkeypatch) == verdicts(world, NATIVE, monkeypatch)
    assert total >= 40


@pytest.mark.slow
@pytest.mark.parametrize("name", [*WORLD_FILES, "hooked"])
def test_both_kernels_agree_on_thousands_of_probes(worlds, name, monkeypatch):
    """10,000 generated probes over the worlds, on every variant, under WORLDSPEC_FULL_SUITE=1; 1,000 otherwise,
    on the true and manual worlds and every second knockout past those the variant test above runs.
    Each variant also runs every program the world carries: on a world of 31 rules that, not the generated
    probes, was nearly all of the time."""
    per = full_or(10_000, 1_000) // (len(WORLD_FILES) + 1)
    every = variants(worlds[name])
    world_variants = every if FULL_SUITE else every[:2] + every[FAST_VARIANTS::2]
    for k, world in enumerate(world_variants):
        same_on_both(world, programs(world, per // len(world_variants), seed=100 + k), monkeypatch)


def test_both_kernels_agree_on_the_hostile_corpus(worlds, monkeypatch):
    for name in ("aliencode", "demo"):
        texts = [text for w, kind, text in CORPUS if w == name and kind in ("nesting", "literal")]
        texts += [text for w, kind, text in CORPUS if w == name and kind == "loop"][:4]
        assert len(texts) > 20
        same_on_both(worlds[name], texts, monkeypatch)


EDGES = {
    "demo": [
        "SET x AS 1\nEMIT(x)\nEMIT(y)",  # an unknown variable, at its line
        "CRAFT f(n):\n    UPON BELOW(n, 1):\n        DELIVER 0\n    DELIVER f(LESSEN(n, 1))\nEMIT(f(3000))",
        "CRAFT f(n):\n    DELIVER f(n)\nEMIT(f(1))",  # deep recursion: the call depth limit
        "AWAIT YES:\n    SET x AS 1",  # the step limit, at the loop's line
        "SET i AS 0\nAWAIT YES:\n    SET i AS LESSEN(i, LESSEN(0, 1))\n    UPON BELOW(5, i):\n        CEASE\nEMIT(i)",
        "SWEEP v IN STRAND(1, 2, 3):\n    UPON BELOW(v, 2):\n        BYPASS\n    EMIT(v)",
        "EMIT(g(1))\nCRAFT g(n):\n    DELIVER n",  # called before it is defined
        "CRAFT g(a, b):\n    DELIVER a\nEMIT(g(1))",  # arity, at run time
        "SET g AS PLUCK\nEMIT(g(STRAND(1, 2), 1))",  # an operator as a value
        "CRAFT h(n):\n    DELIVER n\nSET k AS h\nEMIT(k)",  # a function as a value
        "SWEEP v IN 5:\n    EMIT(v)",  # looping over a number
        "SWEEP v IN \"abc\":\n    EMIT(v)",
        "EMIT(1, YES, VOID, STRAND(1, STRAND()))\nEMIT()",
        "CRAFT f():\n    EMIT(1)\nEMIT(f())",
        "CRAFT f(x):\n    SWEEP v IN x:\n        UPON BELOW(v, 3):\n            DELIVER v\n    DELIVER VOID\n"
        "EMIT(f(STRAND(9, 1, 5)))",
        "UPON NO:\n    EMIT(1)\nLEST YES:\n    EMIT(2)\nDEFAULT:\n    EMIT(3)",
        "EMIT(PLUCK(STRAND(1), 7))",  # a runtime error inside an operator body
        "CRAFT f(n):\n    EMIT(PLUCK(STRAND(), n))\nSET x AS 1\nEMIT(f(x))",  # located inside the body
        # direct calls between the program's functions, and the calls that cannot be direct
        "CRAFT f(n):\n    DELIVER g(n)\nEMIT(f(1))\nCRAFT g(n):\n    DELIVER n",  # g not defined yet
        "CRAFT f(xs):\n    SET s AS 0\n    SWEEP v IN xs:\n        SET s AS g(s, v)\n    DELIVER s\n"
        "CRAFT g(a, b):\n    DELIVER LESSEN(a, b)\nEMIT(f(STRAND(1, 2, 3)))",
        "CRAFT f(n):\n    DELIVER 1\nEMIT(f(0))\nCRAFT f(n):\n    DELIVER 2\nEMIT(f(0))",  # defined twice
        "SET x AS 1\nCRAFT f():\n    DELIVER x\nEMIT(f())\nSET x AS 2\nEMIT(f())",  # a global, saved before a call
        "CRAFT f(n):\n    DELIVER g(n)\nCRAFT g(n):\n    DELIVER 1\nCRAFT g(n):\n    DELIVER 2\nEMIT(f(0))",  # by invoke
        "CRAFT f(n):\n    SET x AS n\nEMIT(f(1))\nEMIT(f(1, 2))",  # no return; then the wrong arity
        "CRAFT f(n):\n    UPON BELOW(n, 0):\n        DELIVER 0\n    DELIVER g(LESSEN(n, 1))\n"
        "CRAFT g(n):\n    DELIVER f(n)\nEMIT(f(5))\nEMIT(f(1500))",  # mutual recursion, then too deep
    ],
}


def test_both_kernels_agree_on_edge_programs(worlds, monkeypatch):
    for world in variants(worlds["demo"]):
        same_on_both(world, EDGES["demo"], monkeypatch)
    # and they do fail where expected, with lines
    assert outcomes(worlds["demo"], EDGES["demo"][:1], NATIVE, monkeypatch)[0][1].error == \
        "error: line 3: unknown variable y"


def test_a_follow_up_program_sees_the_first_ones_state(worlds, monkeypatch):
    world = worlds["demo"]
    for mode in (CLOSURE, NATIVE):
        monkeypatch.setattr(kernel_ast, "NATIVE_AFTER_STEPS", mode)
        world.builder.program_cache.clear()
        out = world.execute("SET x AS 5\nCRAFT f(n):\n    DELIVER x", then="EMIT(f(0))\nEMIT(x)")
        assert out.lines == ("8", "8") and out.status == "ok"


# ---------------------------------------------------------------- safety


BANNED = (py.Attribute, py.Import, py.ImportFrom, py.Global, py.Nonlocal, py.Lambda, py.Starred,
          py.JoinedStr, py.ListComp, py.GeneratorExp, py.Await, py.Yield, py.With)


def test_the_allowed_nodes_exclude_every_escape():
    assert not set(BANNED) & kernel_ast.ALLOWED_NODES


def test_every_module_built_holds_only_allowed_nodes_table_names_and_table_calls(worlds, monkeypatch):
    BUILT.clear()
    world = worlds["hooked"]
    same_on_both(world, programs(world, 40) + EDGES["demo"][:0], monkeypatch)
    same_on_both(worlds["demo"], EDGES["demo"] + programs(worlds["demo"], 40), monkeypatch)
    same_on_both(worlds["control"], programs(worlds["control"], 40), monkeypatch)
    assert len(BUILT) > 50
    seen = set()
    for module, table in BUILT:
        kernel_ast.vet(module, table)  # raises on a node, name or call outside the rules
        assert table["__builtins__"] == {}
        for node in py.walk(module):
            seen.add(type(node))
            assert not isinstance(node, BANNED)
            if isinstance(node, py.Call):
                assert isinstance(node.func, py.Name) and node.func.id in table
    # the compiler's whole repertoire is exercised
    assert {py.For, py.While, py.Break, py.Continue, py.Return, py.If, py.Try} <= seen


@pytest.mark.parametrize("node", [
    py.Attribute(py.Name("run", py.Load()), "steps", py.Load()),
    py.Name("print", py.Load()),
    py.Call(py.Name("S", py.Load()), [], []),
    py.Lambda(py.arguments([], [], None, [], [], None, []), py.Constant(1)),
    py.Import([py.alias("os")]),
])
def test_vet_refuses_what_the_compiler_never_emits(node):
    with pytest.raises(AssertionError):
        kernel_ast.vet(py.Module([py.Expr(node) if isinstance(node, py.expr) else node], []), {"k0": 1})


def test_program_names_never_become_python_names(worlds, monkeypatch):
    world = worlds["demo"]
    names = ["print", "run", "S", "G", "F", "ln", "k0", "t1", "e", "c", "__class__", "__builtins__", "eval"]
    text = "\n".join(f"SET {n} AS {i}" for i, n in enumerate(names)) + "\n" + \
        "\n".join(f"EMIT({n})" for n in names) + "\nCRAFT __import__(os):\n    DELIVER os\nEMIT(__import__(7))"
    BUILT.clear()
    closure, native = (outcomes(world, [text], mode, monkeypatch)[0] for mode in (CLOSURE, NATIVE))
    assert closure == native and native[1].status == "ok"
    assert native[1].lines[-1] == "10"  # 7 + K (the demo's literals are offset)
    module, table = BUILT[-1]
    idents = {n.id for n in py.walk(module) if isinstance(n, py.Name)}
    assert not idents & {"print", "__class__", "__builtins__", "eval", "__import__", "os"}
    mangled = {i for i in idents if i.startswith("v_")}  # program variables: mangled locals only
    assert mangled and {i[2:] for i in mangled} <= set(names) | {"os"}
    assert {"print", "__class__", "eval"} <= {n.value for n in py.walk(module) if isinstance(n, py.Constant)}


def test_generated_functions_have_the_table_as_globals_and_no_builtins(worlds):
    world = worlds["demo"]
    tree = world.parse("SET x AS 1\nEMIT(x)")
    compiler = kernel_ast.AstCompiler(world.sem, "SET x AS 1\nEMIT(x)", (), world.surface.words)
    code = compiler.native(tree)
    main = code.__closure__[0].cell_contents  # run_native's generated main
    assert main.__globals__ is compiler.table and main.__builtins__ == {}
    assert set(compiler.table) - {"__builtins__"} == {n for n in compiler.table if n[0] == "k"}


def module_of(world, text):
    compiler = kernel_ast.AstCompiler(world.sem, text, (), world.surface.words)
    compiler.native(world.parse(text))
    return compiler


def test_hooks_at_their_standard_definition_compile_to_the_plain_operation(worlds):
    demo = worlds["demo"]
    base = module_of(demo.base_world(), "SET x AS 5\nSWEEP v IN STRAND(x):\n    EMIT(v)")
    consts = {n.value for n in py.walk(base.module) if isinstance(n, py.Constant)}
    assert 5 in consts
    assert not {id(h) for h in demo.base_world().sem.hooks.values() if h is not None} & {
        id(v) for v in base.table.values()} - {id(demo.base_world().sem.hooks[h]) for h in ("index", "slice")}
    # int_literal overridden without reading the context: folded at compile time (5 + K)
    true = module_of(demo, "SET x AS 5\nEMIT(x)")
    assert 5 + dict(demo.params)["K"] in {n.value for n in py.walk(true.module) if isinstance(n, py.Constant)}
    # iterate overridden: the rule's body (reverse(xs)) is inlined at the loop, a direct call of the builtin
    swept = module_of(demo, "SWEEP v IN STRAND(1):\n    EMIT(v)")
    assert BUILTINS["reverse"][0] in swept.table.values()
    assert demo.sem.hooks["iterate"] not in swept.table.values()


def test_a_program_is_parsed_and_compiled_once(worlds):
    world = worlds["demo"]
    text = "SET x AS 1\nEMIT(x)"
    assert world.compile_program(text)[1] is world.compile_program(text)[1]
    assert world.variant(()).compile_program(text)[1] is world.variant(()).compile_program(text)[1]


def test_a_program_turns_native_once_it_has_run_enough_steps(worlds, monkeypatch):
    world = worlds["demo"]
    world.builder.program_cache.clear()
    text = "SET i AS 0\nAWAIT BELOW(i, 400):\n    SET i AS LESSEN(i, LESSEN(0, 1))\nEMIT(i)"
    BUILT.clear()
    first = world.execute(text)
    assert not BUILT  # cold: the closure kernel ran it
    for _ in range(3):
        assert world.execute(text) == first
    assert len(BUILT) == 1  # compiled once, then reused


def test_python_refusing_deep_blocks_leaves_the_program_on_the_closure_kernel(worlds, monkeypatch):
    world = worlds["demo"]
    text = "".join(" " * (2 * i) + "SWEEP v IN STRAND(1):\n" for i in range(25)) + " " * 50 + "EMIT(1)"
    closure, native = (outcomes(world, [text], mode, monkeypatch)[0] for mode in (CLOSURE, NATIVE))
    assert closure == native and native[1].status == "ok" and len(native[1].lines) == 1


def test_the_one_compile_is_in_build():
    assert REAL_BUILD.__doc__ and "safe" in REAL_BUILD.__doc__
    assert kernel.ProgramCompiler  # the closure kernel stays: the reference and the cold tier


def test_native_code_calls_its_own_functions_directly_and_keeps_variables_in_locals(worlds):
    text = "CRAFT diff(a, b):\n    DELIVER LESSEN(a, b)\nSET acc AS 0\nSWEEP v IN STRAND(1, 2):\n" \
           "    SET acc AS diff(v, acc)\nEMIT(acc)"
    compiler = module_of(worlds["demo"], text)
    called = {id(compiler.table[n.func.id]) for n in py.walk(compiler.module) if isinstance(n, py.Call)}
    assert not called & {id(kernel.invoke), id(kernel_ast.entered)}  # a direct call, its frame in locals
    stored = {n.id for n in py.walk(compiler.module) if isinstance(n, py.Name) and isinstance(n.ctx, py.Store)}
    assert {"v_acc", "v_v"} <= stored


@pytest.mark.parametrize("text", [EDGES["demo"][i] for i in (1, 3, 4, 14, 19, 22)])
def test_both_kernels_count_the_same_steps(worlds, monkeypatch, text):
    world = worlds["demo"]
    steps = []
    for mode in (CLOSURE, NATIVE):
        monkeypatch.setattr(kernel_ast, "NATIVE_AFTER_STEPS", mode)
        world.builder.program_cache.clear()
        run = kernel.Run(world.words, 20_000)  # the AWAIT YES loop ends at the step limit
        try:
            world.compile_program(text)[1](run)
        except kernel.EvalError:
            pass
        steps.append(run.steps)
    assert steps[0] == steps[1] > 0
