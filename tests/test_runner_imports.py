"""The runner's import structure: no cycles, no imports inside functions, no kind internals.

Read from the source with `ast` (nothing is imported), so an import hidden in a
function or a cycle between modules fails here, not in a user's first run.
"""
from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the installed name of each top-level folder (pyproject's package-dir)
PACKAGES = {"worldspec": "worldspec", "compiler": "worldspec.compiler", "runner": "worldspec.runner"}
CHECKED = ["runner", "worldspec/cli.py", "worldspec/play.py"]
LAZY_ALLOWED = {("worldspec.runner.models", "litellm")}  # litellm costs seconds: imported on first use
KIND_PACKAGES = tuple(f"worldspec.compiler.{k}" for k in ("program", "proof", "blackbox", "game"))


def module_name(path: str) -> str:
    rel = os.path.relpath(path, ROOT)[: -len(".py")].split(os.sep)
    name = ".".join([PACKAGES[rel[0]], *rel[1:]])
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def checked_files() -> list[str]:
    out = []
    for entry in CHECKED:
        path = os.path.join(ROOT, entry)
        if path.endswith(".py"):
            out.append(path)
        else:
            out += [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(".py")]
    return sorted(out)


def imports(path: str) -> list[tuple[str, bool]]:
    """(imported module, inside a function?) for every import statement of a file."""
    name = module_name(path)
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out = []

    def visit(node, nested: bool):
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                out.extend((a.name, nested) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - child.level + 1] + ([base] if base else []))
                out.append((base, nested))
                out.extend((f"{base}.{a.name}", nested) for a in child.names)
            visit(child, inner)

    visit(tree, False)
    return out


FILES = checked_files()
GRAPH = {module_name(p): {m for m, _ in imports(p)} for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, ROOT))
def test_no_import_inside_a_function(path):
    name = module_name(path)
    nested = [m for m, inner in imports(path) if inner and (name, m) not in LAZY_ALLOWED]
    assert not nested, f"{name} imports inside a function: {nested}"


def test_no_import_cycle():
    edges = {m: {d for d in deps if d in GRAPH and d != m} for m, deps in GRAPH.items()}
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def walk(m):
        state[m] = 1
        path.append(m)
        for d in sorted(edges[m]):
            if state.get(d) == 1:
                pytest.fail("import cycle: " + " -> ".join(path[path.index(d):] + [d]))
            if d not in state:
                walk(d)
        path.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            walk(m)


def test_the_runner_reaches_worlds_through_the_world_protocol_only():
    for m, deps in GRAPH.items():
        if m.startswith("worldspec.runner"):
            inside = sorted(d for d in deps if d.startswith(KIND_PACKAGES) or d.startswith("worldspec.compiler.build"))
            assert not inside, f"{m} imports a world kind's internals: {inside}"


def test_the_walk_sees_what_it_checks():
    # the checks above would pass vacuously on an empty graph
    deps = GRAPH["worldspec.runner.protocols.trajectory"]
    assert {"worldspec.runner.metrics", "worldspec.runner.protocols.conditions"} <= deps  # `from .. import`, `from .`
    assert "worldspec.runner.experiment" in GRAPH["worldspec.runner.cli"]
    assert ("litellm", True) in imports(os.path.join(ROOT, "runner", "models.py"))
