"""The explorer on the small program test worlds (tests/worlds/lang, lang3): operator syntax in repairs,
statement and call hooks probed (the space read from the manual alone: tests/test_explorer.py; docs/explorer.md)."""
from __future__ import annotations

import os

from worldspec.compiler.build import load_world
from worldspec.compiler.program.controlprobes import STATEMENT_HOOKS, statement_programs
from worldspec.compiler.program.repair import operators_as_calls
from worldspec.runner.learnability import learnability

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANG = os.path.join(ROOT, "tests", "worlds", "lang")
PYLIKE = os.path.join(ROOT, "tests", "worlds", "lang3", "pylike.world")


def test_operators_are_written_as_the_calls_they_stand_for_with_the_manuals_grouping():
    w = load_world(PYLIKE)
    manual = w.base_world().surface
    ops = {o.op for o in manual.operators}
    text = "x = -n\nif n < 0:\n    n = -n  # flip\nprint((n % 3) ** 2, - -5, a and b, a - b - c)\n"
    assert operators_as_calls(manual, text, ops) == (
        "x = NEG(n)\nif LT(n, 0):\n    n = NEG(n)  # flip\n"
        "print(POW(MOD(n, 3), 2), NEG(NEG(5)), AND(a, b), SUB(SUB(a, b), c))\n")
    # only the operators asked for; text that does not parse, or a world without operators, is left alone
    assert operators_as_calls(manual, "print(n % 3 + 1)", {"MOD"}) == "print(MOD(n, 3) + 1)"
    assert operators_as_calls(manual, "print((n %", ops) == "print((n %"
    state = load_world(os.path.join(LANG, "state.world"))
    assert operators_as_calls(state.surface, "SHOW(ADD(1, 2))", {"ADD"}) == "SHOW(ADD(1, 2))"
    # the calls mean in the true world what the manual's grouping says (pylike's P5 makes `-` group right)
    assert w.execute("print(SUB(SUB(10, 3), 2))").lines == ("5",)
    assert w.execute("print(10 - 3 - 2)").lines == ("9",)


def test_statement_hooks_get_probes_in_the_worlds_own_syntax():
    w = load_world(os.path.join(LANG, "state.world"))
    t = {0: "0", 1: "1", 2: "2", 3: "3", 5: "5", 9: "9"}

    def text(v):
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(text(x) for x in v) + "]"
        return t.get(v, str(v))
    progs = {name: [p for p, _ in statement_programs(name, w.surface, 0, text, "SHOW", [("PUSH", "{var}, 7")])]
             for name in STATEMENT_HOOKS}
    assert "SET zs0 AT 1 TO 3" in progs["set_index"][1]
    assert progs["assign_many"][0].startswith("SET zs0, zw0 TO 1, 2")
    assert "EACH zs0, zw0 IN [[1, 2], [3, 5]]:" in progs["for_many"][0]
    assert "PUSH(zs0, 7)" in progs["update"][0]
    assert progs["float_literal"] == []  # the world has no decimals
    assert "def zf0(zp):\n    return\nSHOW(zf0(5))" in progs["returned"]  # a bare return
    for name, ps in progs.items():  # every probe runs in the world as written
        for p in ps:
            assert not w.execute(p).error, (name, p)


def test_pylike_tasks_pass_through_operator_syntax():
    """0% before: the repair rewrote calls only, and pylike's answers write `%`, `**` and `-` as operators."""
    result = learnability(load_world(PYLIKE))
    assert result.accuracy >= 50.0
    assert result.rules_correct >= 2


def test_state_and_control_hooks_are_probed_and_stated():
    """state: update, assign_many and for_many were never probed (1/6 rules before); control: arguments and
    returned (1/9 before)."""
    state = learnability(load_world(os.path.join(LANG, "state.world")))
    assert state.rules_correct >= 4
    control = learnability(load_world(os.path.join(LANG, "control.world")))
    assert control.rules_correct >= 2
