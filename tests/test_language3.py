"""The spec language, third edition (issue 24): what authors write that the second edition refused."""
from __future__ import annotations

import pytest

from worldspec.meta import MetaCompiler
from worldspec.parser import parse_expr, parse_spec
from worldspec.values import Ctx


def value(text: str):
    return MetaCompiler().unit("<test>", [], parse_expr(text))(Ctx(), [])


@pytest.mark.parametrize("text, want", [
    ("6.674e-11", 6.674e-11), ("2E3", 2000.0), ("1e0", 1.0), ("1.5e+2", 150.0), ("9.81 * 1e-3", 9.81 * 1e-3),
    ("-2.5e-10", -2.5e-10), ("1e308", 1e308),
])
def test_scientific_literals(text, want):
    got = value(text)
    assert isinstance(got, float) and got == want


def test_a_scientific_literal_too_large_is_located():
    from worldspec.diagnostics import SpecError
    with pytest.raises(SpecError) as info:
        parse_spec('world "W" version 1\nparam G = 1e400\n', "w.world")
    assert "too large" in info.value.render() and "w.world:2:" in info.value.render()


def test_scientific_params_in_a_spec():
    spec = parse_spec('world "W" version 1\nkind blackbox\nparam G = 6.674e-11\n', "w.world")
    assert spec.params[0].name == "G"


def test_a_def_named_like_a_builtin_shadows_it_with_a_warning(tmp_path):
    """A builtin added by a later release never breaks a world with a def of that name (issue 24)."""
    import json
    from pathlib import Path

    from click.testing import CliRunner

    from worldspec.cli import main
    demo = Path(__file__).resolve().parents[1] / "worlds" / "demo.world"
    world = tmp_path / "w.world"
    world.write_text(demo.read_text() + "\ndef xor(a, b) = a\n")
    r = CliRunner().invoke(main, ["check", str(world)])
    assert r.exit_code == 0, r.output
    assert f"{world}:" in r.output and "warning: def xor shadows the builtin of the same name" in r.output
    r = CliRunner().invoke(main, ["check", str(world), "--json"])
    (w,) = json.loads(r.stdout)["spec_warnings"]
    assert w["severity"] == "warning" and w["message"].startswith("def xor shadows")


def test_the_def_is_what_a_call_reaches():
    from worldspec.compiler.common import meta_compiler
    spec = parse_spec('world "W" version 1\nkind blackbox\ndef len(x) = 7\n', "w.world")
    mc = meta_compiler(spec, {})
    unit = mc.unit("<t>", [], parse_expr("len([1, 2]) + 0"))
    assert unit(Ctx(), []) == 7
