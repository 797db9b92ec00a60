"""Issue 9's architecture, checked on the source, and a new kind run end to end.

The import checks read every production module with `ast` (worldspec/, compiler/ as
worldspec.compiler, runner/ as worldspec.runner, worlds/ as worldspec.worlds: the
package-dir table of pyproject.toml) and fail, per module, on

  cycle             an import cycle among production modules (imports inside functions count:
                    they hide cycles, they do not remove them; `if TYPE_CHECKING:` imports do not)
  function_import   an import statement inside a function (except the lazy imports LAZY_IMPORTS lists:
                    litellm in runner/models.py, matplotlib in runner/plotting.py, ...)
  private_import    `from x import _y`, `import x._y` or `x._y` on an imported project module
  runner_kind       the runner (or an adapter: worldspec.inspect, worldspec.gym) importing a module of a
                    kind's subpackage (the kinds come from the registry: the package of each
                    registered Kind's compile function)
  kind_compare      a comparison of a `kind` (a name or attribute ending in "kind") with a world
                    kind's name, outside the registry (compiler/build.py); `d.kind == "op"` and other
                    comparisons with words that are not world kinds are not this rule's business

Edges are the modules named by import statements, and the modules a module names to import on first
use: `importlib.import_module("a.b")` with a literal name, and a string "a.b:attr" naming a project module
(worldspec/cli.py's lazy command table); importing `a.b.c` is not counted as
importing the package `a.b` too (every submodule would otherwise sit in a cycle with a
package `__init__` that re-exports it).

Every world implements the core of compiler/api.py's World and the faces its kind declares
(`Kind.faces`: MilestoneFace, TurnShotFace, ...), and every module of runner/protocols/ touches a world
only through the core and its protocol's face: each attribute used on the world object (`world`, `w`,
`*.world`, a name bound to one of them, `getattr(world, "x")`) is a member the face declares. A class a
module inherits from a shared module (base.py's ProbesTheWorld and ScheduleLineup, turnshot.py's lineup)
brings its own uses, which the inheriting protocol's face must declare too. No world class defines a
member of a face its kind does not declare with a constant body (a stub: `return False`, `return ""`,
`return frozenset()`, a literal Feedback).

The cycle check reads the imports of worldspec/cli.py's lazy command table (module names in strings,
imported on first use) as edges too.

The end-to-end tests register `kind tally` (tests/tinykind.py) from the test itself and
run tests/worlds/tally.world through `worldspec check` and `worldspec run`.
"""
from __future__ import annotations

import ast
import functools
import importlib
import inspect
import json
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

import tinykind
from conftest import box_world
from worldspec.cli import main
from worldspec.compiler import KINDS, Feedback, World, load_world, register_kind
from worldspec.compiler.api import CAPABILITIES, FACES, PROTOCOLS, face_members, missing_from_face
from worldspec.compiler.build import RESERVED
from worldspec.parser import load_spec
from worldspec.runner.protocols import PROTOCOLS as RUN_PROTOCOLS

ROOT = Path(__file__).resolve().parents[1]
TALLY = str(Path(__file__).resolve().parent / "worlds" / "tally.world")

# Cases that fail on the tree this file was written on (137bb53), each with the part of issue 9's
# refactor that fixes it: (module or kind package, check) -> area. They are strict xfails: when a fix
# lands, the case XPASSes, the suite fails, and its line here goes. Empty: issue 9's rules hold.
KNOWN_FAILURES: dict[tuple[str, str], str] = {
}

CHECKS = ("cycle", "function_import", "private_import", "runner_kind", "kind_compare")
LAZY_IMPORTS = {("worldspec.runner.models", "litellm"),
                # an optional extra with a large stack, built on first use (the module's docstring)
                ("worldspec.verifiers_env", "verifiers.v1"),
                # Hypothesis draws a certification's probes only; a run never imports it
                ("worldspec.compiler.program.probegen", "hypothesis"),
                # pyplot costs ~0.5 s; only a module that draws pays it, when it draws
                ("worldspec.runner.plotting", "matplotlib"), ("worldspec.runner.plotting", "matplotlib.pyplot")}
# (module, imported module) allowed inside a function
END_TO_END = ("rule_ids_in_report",)
LAZY_ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")  # "module:attr", as a lazy command table names one
REGISTRY = "worldspec.compiler.build"
RUNNER = "worldspec.runner"
# other frameworks' views of a world: the runner's rules
ADAPTERS = ("worldspec.inspect", "worldspec.gym", "worldspec.verifiers_env")


# ---------------------------------------------------------------- reading the modules


def production_files(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file, for every .py file under the package-dir folders of pyproject.toml."""
    with open(root / "pyproject.toml", "rb") as fh:
        dirs = tomllib.load(fh)["tool"]["setuptools"]["package-dir"]
    out = {}
    for package, folder in dirs.items():
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package,) + parts)] = path
    return out


class Import:
    """One import statement of one module."""

    def __init__(self, line: int, written: str, names: tuple[str, ...], targets: tuple[str, ...],
                 in_function: bool, type_checking: bool, lazy: bool = False):
        self.line = line
        self.written = written  # the module as written: `litellm`, `.report`, `worldspec.compiler`
        self.names = names  # what `from x import ...` takes (empty for `import x`)
        self.targets = targets  # the project modules it reaches
        self.in_function = in_function
        self.type_checking = type_checking
        self.lazy = lazy  # named by a string, imported on first use (an edge of the graph, not a statement)


def project_module(name: str, modules) -> str | None:
    """The longest prefix of a dotted name that is a project module."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in modules:
            return ".".join(parts[:i])
    return None


def absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a `from` import names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class ModuleReader(ast.NodeVisitor):
    """A module's imports (noting those in functions or under TYPE_CHECKING) and its uses of
    private names of the project modules it imported (`protocol._x`)."""

    def __init__(self, module: str, is_package: bool, modules):
        self.module, self.is_package, self.modules = module, is_package, modules
        self.imports: list[Import] = []
        self.private_uses: list[str] = []
        self.depth = 0
        self.type_checking = False
        self.bound: dict[str, str] = {}  # local name -> the project module it names

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_If(self, node):
        if ast.unparse(node.test) not in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            return self.generic_visit(node)
        before, self.type_checking = self.type_checking, True
        for child in node.body:
            self.visit(child)
        self.type_checking = before
        for child in node.orelse:
            self.visit(child)

    def record(self, node, written, names, targets):
        self.imports.append(Import(node.lineno, written, tuple(names), tuple(t for t in targets if t),
                                   self.depth > 0, self.type_checking))

    def visit_Import(self, node):
        for a in node.names:
            target = project_module(a.name, self.modules)
            top = a.name.partition(".")[0]
            if target and a.asname:
                self.bound[a.asname] = target
            elif top in self.modules:  # `import a.b` binds `a`
                self.bound[top] = top
            self.record(node, a.name, (), [target])

    def visit_ImportFrom(self, node):
        base = absolute(self.module, self.is_package, node)
        targets = []
        for a in node.names:
            if f"{base}.{a.name}" in self.modules:
                targets.append(f"{base}.{a.name}")
                self.bound[a.asname or a.name] = f"{base}.{a.name}"
            else:
                targets.append(project_module(base, self.modules))
        self.record(node, "." * node.level + (node.module or ""), [a.name for a in node.names], targets)

    def lazy_edge(self, node, name: str) -> None:
        """A module named to be imported on first use: an edge, as an import statement is."""
        target = project_module(name, self.modules)
        if target == name:
            self.imports.append(Import(node.lineno, name, (), (target,), False, self.type_checking, lazy=True))

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "import_module" and ast.unparse(f.value) == "importlib" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            self.lazy_edge(node, node.args[0].value)
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and LAZY_ENTRY.match(node.value):
            self.lazy_edge(node, node.value.partition(":")[0])

    def visit_Attribute(self, node):
        owner = self.module_named(node.value)
        if owner and is_private(node.attr):
            self.private_uses.append(f"line {node.lineno}: {ast.unparse(node)} (a private name of {owner})")
        self.generic_visit(node)

    def module_named(self, node) -> str | None:
        """The project module an expression like `F` or `worldspec.runner.protocol` names, if any."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute):
            owner = self.module_named(node.value)
            if owner and f"{owner}.{node.attr}" in self.modules:
                return f"{owner}.{node.attr}"
        return None


def read_modules(sources: dict[str, tuple[str, bool]]) -> dict[str, ModuleReader]:
    """Module -> its reader, from {module: (source, is_package)}."""
    out = {}
    for module, (source, is_package) in sources.items():
        out[module] = reader = ModuleReader(module, is_package, sources)
        reader.visit(ast.parse(source))
    return out


# ---------------------------------------------------------------- the checks


def import_graph(readers: dict[str, ModuleReader]) -> dict[str, dict[str, int]]:
    """Module -> {imported project module: line of its first import}; TYPE_CHECKING imports left out."""
    graph: dict[str, dict[str, int]] = {m: {} for m in readers}
    for m, reader in readers.items():
        for r in reader.imports:
            if not r.type_checking:
                for t in r.targets:
                    if t != m:
                        graph[m].setdefault(t, r.line)
    return graph


def cycle_through(graph: dict[str, dict[str, int]], start: str) -> list[str] | None:
    """The shortest import cycle through `start` ([start, ..., start]), or None."""
    paths, seen = [[start]], {start}
    while paths:
        longer = []
        for path in paths:
            for t in sorted(graph.get(path[-1], {})):
                if t == start:
                    return path + [start]
                if t not in seen:
                    seen.add(t)
                    longer.append(path + [t])
        paths = longer
    return None


def kind_package(kind) -> str:
    """The package of a registered Kind's compile function."""
    return kind.compile.__module__.rpartition(".")[0]


def kind_packages() -> set[str]:
    """The subpackage of every registered production kind."""
    return {kind_package(k) for k in KINDS.values() if kind_package(k).startswith("worldspec.compiler.")}


def mentions_kind(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and n.id.lower().endswith("kind"))
               or (isinstance(n, ast.Attribute) and n.attr.lower().endswith("kind")) for n in ast.walk(node))


def literal_kinds(node: ast.AST, names: set[str]) -> set[str]:
    """The world kinds' names a string literal (or a tuple, list or set of them) spells."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return {i.value for i in items if isinstance(i, ast.Constant) and i.value in names}


def kind_comparisons(tree: ast.AST, names: set[str]) -> list[str]:
    """`line N: code` for each comparison (or match case) of a kind with a world kind's name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
                                                 for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(literal_kinds(s, names) for s in sides) and any(mentions_kind(s) for s in sides):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Match) and mentions_kind(node.subject):
            for case in node.cases:
                for p in ast.walk(case.pattern):
                    if isinstance(p, ast.MatchValue) and literal_kinds(p.value, names):
                        found.append((p.lineno, f"case {ast.unparse(p.value)}"))
    return [f"line {line}: {code}" for line, code in sorted(found)]


def statement(r: Import) -> str:
    return f"from {r.written} import {', '.join(r.names)}" if r.names else f"import {r.written}"


def applies(module: str, check: str) -> bool:
    if check == "runner_kind":
        return module == RUNNER or module.startswith(RUNNER + ".") or module in ADAPTERS
    if check == "kind_compare":
        return module != REGISTRY
    return True


def violations(module: str, check: str, readers: dict[str, ModuleReader], trees: dict[str, ast.AST],
               packages: set[str], names: set[str]) -> list[str]:
    """What breaks `check` in `module` (empty when the rule holds)."""
    reader = readers[module]
    if check == "cycle":
        graph = import_graph(readers)
        cycle = cycle_through(graph, module)
        if cycle is None:
            return []
        return [" -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {module}"]
    if check == "function_import":
        return [f"line {r.line}: {statement(r)}" for r in reader.imports
                if r.in_function and (module, r.written) not in LAZY_IMPORTS]
    if check == "private_import":
        return [f"line {r.line}: from {r.written} import {n}" for r in reader.imports for n in r.names
                if is_private(n)] + \
               [f"line {r.line}: import {r.written}" for r in reader.imports
                if any(is_private(p) for p in r.written.split("."))] + reader.private_uses
    if check == "runner_kind":
        return [f"line {r.line}: {t}" for r in reader.imports for t in r.targets
                if any(t == p or t.startswith(p + ".") for p in packages)]
    if check == "kind_compare":
        return kind_comparisons(trees[module], names)
    raise ValueError(check)


def marked(subject: str, check: str, *values, id: str):
    area = KNOWN_FAILURES.get((subject, check))
    marks = [pytest.mark.xfail(strict=True, reason=f"issue 9: fixed by the {area} refactor")] if area else []
    return pytest.param(*values, marks=marks, id=id)


# ---------------------------------------------------------------- the project's modules, once

FILES = production_files()
SOURCES = {m: (p.read_text(encoding="utf-8"), p.name == "__init__.py") for m, p in FILES.items()}
READERS = read_modules(SOURCES)
TREES = {m: ast.parse(src) for m, (src, _) in SOURCES.items()}


@pytest.mark.parametrize("module, check", [marked(m, c, m, c, id=f"{c}:{m}")
                                           for m in sorted(FILES) for c in CHECKS if applies(m, c)])
def test_module_keeps_the_architecture(module, check):
    found = violations(module, check, READERS, TREES, kind_packages(), set(KINDS) | set(RESERVED))
    assert not found, f"{module} breaks {check} ({FILES[module].relative_to(ROOT)}):\n  " + "\n  ".join(found)


# Untrusted text never reaches eval/exec; compile() of an ast.Module our own compiler built is the
# one allowed form: the program kernel's (issue 18) and the meta-language's (issue 27), each in the one
# function `build` of its module.
CODE_RUNNERS = ("eval", "exec", "compile", "__import__")
ALLOWED_CODE_RUNNERS = {("worldspec.compiler.program.kernel_ast", "build", "compile"),
                        ("worldspec.meta_ast", "build", "compile")}


def code_runner_calls(tree: ast.Module) -> set[tuple[str, str]]:
    """(enclosing function, name) for every call of eval, exec, compile or __import__ in a module."""
    found = set()

    def walk(node, where: str):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            if isinstance(child, ast.Call):
                f = child.func
                # the builtins by name, or through the builtins module (`re.compile` is not one)
                by_module = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                    f.value.id in ("builtins", "__builtins__")
                name = f.id if isinstance(f, ast.Name) else f.attr if by_module else ""
                if name in CODE_RUNNERS:
                    found.add((where, name))
            walk(child, inner)
    walk(tree, "<module>")
    return found


def test_no_module_runs_code_except_the_kernels_one_compile():
    calls = {(m, where, name) for m, tree in TREES.items() for where, name in code_runner_calls(tree)}
    assert calls == ALLOWED_CODE_RUNNERS


def test_the_code_runner_scan_finds_each_form():
    tree = ast.parse("eval('1')\ndef f():\n    builtins.exec('2')\n    def g():\n        compile(t, 'x', 'exec')\n"
                     "re.compile('x')\n")
    assert code_runner_calls(tree) == {("<module>", "eval"), ("f", "exec"), ("g", "compile")}


def test_known_failures_name_real_cases():
    """A stale entry (a module that went away, a misspelt check) would hide nothing and mislead."""
    real = ({(m, c) for m in FILES for c in CHECKS if applies(m, c)} | {("end_to_end", c) for c in END_TO_END}
            | {(p, "world_protocol") for p in kind_packages()})
    assert not set(KNOWN_FAILURES) - real


def test_the_walk_sees_the_whole_project():
    assert {"worldspec.cli", "worldspec.compiler", "worldspec.compiler.build", "worldspec.runner.models",
            "worldspec.compiler.program.world"} <= set(FILES)
    assert {"worldspec.compiler.program", "worldspec.compiler.proof", "worldspec.compiler.blackbox",
            "worldspec.compiler.game"} <= kind_packages() <= {m for m in FILES}
    graph = import_graph(READERS)
    assert "worldspec.compiler.api" in graph["worldspec.compiler.build"]


# ---------------------------------------------------------------- every kind implements the core and its faces


@functools.cache
def bundled_world_of(kind: str) -> str:
    """The first bundled world of a kind (by path)."""
    for path in sorted(Path(ROOT, "worlds").rglob("*.world")):
        if not path.name.startswith("_") and load_spec(str(path)).kind == kind:
            return str(path)
    raise LookupError(f"no bundled world of kind {kind}")


def offered_faces(kind, world) -> list[str]:
    """What is wrong with the faces a kind declares, seen on one of its worlds (empty: nothing)."""
    problems = []
    if not kind.faces:
        problems.append("its Kind declares no faces")
    if FACES[world.protocol] not in kind.faces:
        problems.append(f"its world names protocol {world.protocol!r} but the kind does not declare "
                        f"{FACES[world.protocol].__name__}")
    for face in (World, *kind.faces):
        if missing_from_face(world, face):
            problems.append(f"{face.__name__} lacks {missing_from_face(world, face)}")
    return problems


@pytest.mark.parametrize("kind", [marked(kind_package(k), "world_protocol", name, id=name)
                                  for name, k in sorted(KINDS.items())])
def test_every_kind_implements_the_core_and_the_faces_it_declares(kind):
    world = load_world(bundled_world_of(kind))
    assert offered_faces(KINDS[kind], world) == []
    assert isinstance(world, World) and isinstance(world, FACES[world.protocol])
    assert world.protocol in PROTOCOLS


def constant_body(fn) -> bool:
    """Whether a function only returns a constant: a literal, an empty collection, `frozenset()`, `iter(())`,
    or a call of literals only (`Feedback("rejected: ...", 0, "rejected")`): a stub."""
    fn = fn.fget if isinstance(fn, property) else getattr(fn, "__func__", fn)
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(fn)))
    except (OSError, TypeError):
        return False
    body = tree.body[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    return all(isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.Load, ast.Call, ast.Name))
               for n in ast.walk(body[0].value)) and \
        not any(isinstance(n, ast.Name) and n.id not in ("frozenset", "iter", "Feedback", "Verdict", "tuple")
                for n in ast.walk(body[0].value))


def stub_members(world, faces) -> list[str]:
    """Members of a face the kind does not declare that its world class defines with a constant body."""
    foreign = set().union(*(face_members(f) for f in FACES.values())) - set().union(
        *(face_members(f) for f in (World, *faces)))
    found = []
    for cls in type(world).__mro__:
        if not cls.__module__.startswith("worldspec.compiler.") or cls.__module__ == "worldspec.compiler.api":
            continue
        found += [f"{cls.__name__}.{name}" for name in sorted(foreign & set(vars(cls)))
                  if constant_body(vars(cls)[name])]
    return found


def test_a_stub_is_recognised():
    class Stubby:
        def grade_equation(self, rule_id, text):
            """Always False."""
            return False

        @property
        def report_instructions(self):
            return ""

        def requires(self, task):
            return frozenset()

        def probe(self, text):
            return Feedback("rejected: no probing", 0, "rejected")

        def charge(self, text):
            return len(text)

    assert [n for n in ("grade_equation", "report_instructions", "requires", "probe", "charge")
            if constant_body(vars(Stubby)[n])] == ["grade_equation", "report_instructions", "requires", "probe"]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_kind_fills_another_faces_members_with_stubs(kind):
    world = load_world(bundled_world_of(kind))
    assert stub_members(world, KINDS[kind].faces) == []


def test_every_bundled_world_offers_its_protocols_face():
    """Both protocols of the game kind (pool worlds and turn@shot boxes) and a box whose tests are played."""
    seen = {}
    for path in sorted(Path(ROOT, "worlds").rglob("*.world")):
        if path.name.startswith("_"):
            continue
        kind = load_spec(str(path)).kind
        if (kind, "any") in seen and kind != "game":
            continue
        world = box_world(path)  # compiled once a session: the game boxes are compiled by other tests too
        played = any(t.shape == "play" for t in world.tasks)
        if (kind, world.protocol, played) in seen:
            continue
        seen[kind, "any"] = seen[kind, world.protocol, played] = path.name
        assert offered_faces(KINDS[kind], world) == [], path
        if played:
            assert all(isinstance(world, c) for c in CAPABILITIES[world.protocol]), path
    assert {("game", "pool", False), ("game", "turn@shot", True), ("blackbox", "turn@shot", False)} <= set(seen)


def test_the_faces_are_the_protocols():
    """api.PROTOCOLS is the faces' table, the runner registers one protocol per face, and a face repeats
    none of the core's members as its own."""
    assert tuple(FACES) == PROTOCOLS and set(RUN_PROTOCOLS) == set(PROTOCOLS)
    core = face_members(World)
    assert {"name", "manual", "budget", "rules", "tasks", "task", "rule", "verify", "protocol"} <= core
    for name, face in FACES.items():
        assert face_members(face) > core, name
        own = set(vars(face).get("__annotations__", {})) | {n for n in vars(face) if not n.startswith("_")}
        assert not own & core, (name, own & core)
    assert "probe" not in core and "probe" not in face_members(FACES["holdem"])


# ---------------------------------------------------------------- protocol modules reach a world through its face

PROTOCOLS_PACKAGE = "worldspec.runner.protocols"
# The protocol each module of runner/protocols/ serves (base.py serves several: its classes are checked
# through the protocols that inherit them; __init__.py is the registry).
PROTOCOL_OF_MODULE = {
    "milestone": "milestone", "trajectory": "milestone", "conditions": "milestone", "reasks": "milestone",
    "milestone_report": "milestone",
    "turnshot": "turn@shot", "turnshot_report": "turn@shot",
    "pool": "pool", "matches": "pool", "tournament": "pool", "pool_report": "pool",
    "holdem": "holdem", "holdem_ring": "holdem", "holdem_report": "holdem",
    "judge": "judge", "judge_report": "judge",
}
SHARED_PROTOCOL_MODULES = ("base", "")  # "" is the package: the registry, which reads world.protocol and name
WORLD_NAMES = ("world", "w")


def world_uses(tree: ast.AST) -> dict[tuple[str, str], list[int]]:
    """{(class, attribute): [lines]} for every attribute used on a world object in a module ("" outside
    classes). A world object is a name `world` or `w`, any `X.world`, or a name assigned from one of them
    in the same function; `getattr(world, "x", ...)` and `hasattr(world, "x")` use `x`."""
    out: dict[tuple[str, str], list[int]] = {}

    def holds(e, aliases) -> bool:
        return (isinstance(e, ast.Name) and (e.id in WORLD_NAMES or e.id in aliases)) or \
            (isinstance(e, ast.Attribute) and e.attr == "world")

    def scan(node, owner: str, aliases: set) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                scan(child, child.name, set())
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                scan(child, owner, set(aliases))
                continue
            if isinstance(child, ast.Assign):
                for t in child.targets:
                    pairs = zip(t.elts, child.value.elts) if isinstance(t, ast.Tuple) and \
                        isinstance(child.value, ast.Tuple) else [(t, child.value)]
                    aliases |= {a.id for a, v in pairs if isinstance(a, ast.Name) and holds(v, aliases)}
            if isinstance(child, ast.Attribute) and holds(child.value, aliases):
                out.setdefault((owner, child.attr), []).append(child.lineno)
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and \
                    child.func.id in ("getattr", "hasattr") and len(child.args) >= 2 and \
                    holds(child.args[0], aliases) and isinstance(child.args[1], ast.Constant):
                out.setdefault((owner, str(child.args[1].value)), []).append(child.lineno)
            scan(child, owner, aliases)

    scan(tree, "", set())
    return out


def allowed_members(protocol: str) -> frozenset[str]:
    """What a protocol's modules may use on a world: the core, its face and its capabilities."""
    return face_members(FACES[protocol]).union(*(face_members(c) for c in CAPABILITIES.get(protocol, ())))


def undeclared_uses(uses: dict, allowed, classes=None) -> list[str]:
    """`line N: world.x (in C)` for each use of a member outside `allowed` (of `classes` only, if given)."""
    return [f"line {lines[0]}: world.{attr} (in {owner or 'the module'})" for (owner, attr), lines in sorted(uses.items())
            if attr not in allowed and (classes is None or owner in classes)]


def protocol_module(short: str) -> str:
    return f"{PROTOCOLS_PACKAGE}.{short}" if short else PROTOCOLS_PACKAGE


def inherited_uses(short: str) -> list[str]:
    """Undeclared uses in the classes a protocol module's classes inherit from other protocol modules."""
    module = importlib.import_module(protocol_module(short))
    allowed = allowed_members(PROTOCOL_OF_MODULE[short])
    found = []
    for _, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ != module.__name__:
            continue
        for base in cls.__mro__[1:]:
            if base.__module__.startswith(PROTOCOLS_PACKAGE + ".") and base.__module__ != module.__name__:
                uses = world_uses(TREES[base.__module__])
                found += [f"{cls.__name__} inherits {base.__module__}.{base.__name__}: {u}"
                          for u in undeclared_uses(uses, allowed, {base.__name__})]
    return found


def test_every_protocol_module_is_assigned_a_protocol():
    modules = {m.removeprefix(PROTOCOLS_PACKAGE).lstrip(".") for m in FILES
               if m == PROTOCOLS_PACKAGE or m.startswith(PROTOCOLS_PACKAGE + ".")}
    assert modules == set(PROTOCOL_OF_MODULE) | set(SHARED_PROTOCOL_MODULES)
    assert set(PROTOCOL_OF_MODULE.values()) == set(PROTOCOLS)


@pytest.mark.parametrize("short", sorted(PROTOCOL_OF_MODULE))
def test_a_protocol_module_reaches_its_world_only_through_its_face(short):
    module = protocol_module(short)
    found = undeclared_uses(world_uses(TREES[module]), allowed_members(PROTOCOL_OF_MODULE[short]))
    found += inherited_uses(short)
    assert not found, (f"{module} uses members {FACES[PROTOCOL_OF_MODULE[short]].__name__} does not declare:\n  "
                       + "\n  ".join(found))


def test_the_face_check_follows_inherited_classes(monkeypatch):
    """Were pool.py Hold'em's, the probe its protocol inherits from base.ProbesTheWorld would be undeclared
    (HoldemFace has no probe); its ScheduleLineup's `schedule` would not (HoldemFace has one)."""
    monkeypatch.setitem(PROTOCOL_OF_MODULE, "pool", "holdem")
    [use] = inherited_uses("pool")
    assert use.startswith("Pool inherits worldspec.runner.protocols.base.ProbesTheWorld: line ")
    assert use.endswith("world.probe (in ProbesTheWorld)")


def test_the_registry_and_base_use_the_core_only_outside_inherited_classes():
    """The registry reads only core members; base.py's world uses are all in classes (checked where inherited)."""
    assert undeclared_uses(world_uses(TREES[PROTOCOLS_PACKAGE]), face_members(World)) == []
    assert {owner for owner, _ in world_uses(TREES[protocol_module("base")])} <= {"ProbesTheWorld", "ScheduleLineup"}


def test_the_face_check_finds_undeclared_uses():
    source = ("def f(world, config):\n    return world.budget.turns, world.session(), world.tool\n"
              "class S:\n    def run(self):\n        box = self.world\n        w, n = self.world, 3\n"
              "        return box.grade_equation('R1', ''), w.schedule(), getattr(self.world, 'ring', 0), n.tool\n"
              "    def other(self, rows):\n        return [r.tool for r in rows]\n")
    uses = world_uses(ast.parse(source))
    assert set(uses) == {("", "budget"), ("", "session"), ("", "tool"), ("S", "grade_equation"),
                         ("S", "schedule"), ("S", "ring")}
    assert undeclared_uses(uses, allowed_members("turn@shot")) == [
        "line 7: world.grade_equation (in S)", "line 7: world.ring (in S)", "line 7: world.schedule (in S)"]
    assert undeclared_uses(uses, allowed_members("holdem")) == [
        "line 2: world.session (in the module)", "line 2: world.tool (in the module)",
        "line 7: world.grade_equation (in S)"]
    assert undeclared_uses(uses, allowed_members("holdem"), {"S"}) == ["line 7: world.grade_equation (in S)"]


# ---------------------------------------------------------------- the checks can fail


def made_up(**modules: str) -> tuple[dict[str, ModuleReader], dict[str, ast.AST]]:
    """Readers and trees of a made-up project ({dotted name with `__` for `.`: source})."""
    names = {k.replace("__", "."): v for k, v in modules.items()}
    sources = {m: (src, any(o.startswith(m + ".") for o in names)) for m, src in names.items()}
    return read_modules(sources), {m: ast.parse(src) for m, (src, _) in sources.items()}


def found(module: str, check: str, readers, trees, packages=frozenset(), names=frozenset()) -> list[str]:
    return violations(module.replace("__", "."), check, readers, trees, set(packages), set(names))


def test_a_cycle_through_an_import_inside_a_function_is_found_and_named():
    readers, trees = made_up(pkg="", pkg__a="from . import b\n",
                             pkg__b="def f():\n    from .a import x\n    return x\n",
                             pkg__c="from pkg import a\n")
    [cycle] = found("pkg__a", "cycle", readers, trees)
    assert cycle == "pkg.a (line 1) -> pkg.b (line 2) -> pkg.a"
    assert found("pkg__b", "cycle", readers, trees)
    assert found("pkg__c", "cycle", readers, trees) == []


def test_a_cycle_through_a_lazy_command_table_is_found():
    readers, trees = made_up(pkg="", pkg__cli='LAZY = {"run": "pkg.run:run"}\ndef f():\n    return 1\n',
                             pkg__run="from pkg.cli import guarded\n",
                             pkg__check='import importlib\ndef g():\n    return importlib.import_module("pkg.cli")\n',
                             pkg__shared="x = 1\n", pkg__ok='from pkg import shared\nNOTE = "see pkg.shared:x"\n')
    [cycle] = found("pkg__cli", "cycle", readers, trees)
    assert cycle == "pkg.cli (line 1) -> pkg.run (line 1) -> pkg.cli"
    assert found("pkg__check", "cycle", readers, trees) == []  # check -> cli -> run -> cli: not through check
    assert "pkg.cli" in import_graph(readers)["pkg.check"]
    assert found("pkg__check", "function_import", readers, trees) == []  # an edge, not an import statement
    assert found("pkg__ok", "cycle", readers, trees) == []


def test_the_graph_has_the_cli_lazy_commands():
    graph = import_graph(READERS)
    assert {"worldspec.play", "worldspec.runner.cli", "worldspec.runner.author", "worldspec.runner.view",
            "worldspec.runner.sweep", "worldspec.importer", "worldspec.runner.learnability"} <= set(graph["worldspec.cli"])


def test_type_checking_imports_make_no_cycle():
    readers, trees = made_up(pkg="", pkg__a="from pkg.b import y\n",
                             pkg__b="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import x\n")
    assert found("pkg__a", "cycle", readers, trees) == []


def test_imports_inside_functions_are_found_except_litellms():
    lazy = "def f():\n    import litellm\n    return litellm\n"
    method = "class C:\n    def m(self):\n        from json import dumps\n        return dumps\n"
    readers, trees = made_up(worldspec__runner__models=lazy, worldspec__runner__cli=lazy, pkg__m=method)
    assert found("worldspec__runner__models", "function_import", readers, trees) == []
    assert found("worldspec__runner__cli", "function_import", readers, trees) == ["line 2: import litellm"]
    assert found("pkg__m", "function_import", readers, trees) == ["line 3: from json import dumps"]


def test_private_names_taken_from_other_modules_are_found():
    readers, trees = made_up(
        pkg="__version__ = '1'\n", pkg__a="_x = 1\n",
        pkg__b="from pkg import __version__\nfrom pkg.a import _x\n",
        pkg__c="import pkg.a as A\nfrom . import a\nimport pkg.a\nprint(A._x, a._x, pkg.a._x, A.public, pkg._y)\n")
    assert found("pkg__b", "private_import", readers, trees) == ["line 2: from pkg.a import _x"]
    assert found("pkg__c", "private_import", readers, trees) == [
        "line 4: A._x (a private name of pkg.a)", "line 4: a._x (a private name of pkg.a)",
        "line 4: pkg.a._x (a private name of pkg.a)", "line 4: pkg._y (a private name of pkg)"]


def test_a_runner_importing_a_kind_package_is_found():
    readers, trees = made_up(worldspec__compiler="", worldspec__compiler__game="", worldspec__compiler__game__engine="",
                             worldspec__runner="",
                             worldspec__runner__pool="from worldspec.compiler.game.engine import play\n",
                             worldspec__runner__ok="from worldspec.compiler import World\n")
    kinds = {"worldspec.compiler.game"}
    assert found("worldspec__runner__pool", "runner_kind", readers, trees, kinds) == [
        "line 1: worldspec.compiler.game.engine"]
    assert found("worldspec__runner__ok", "runner_kind", readers, trees, kinds) == []


def test_comparisons_with_world_kinds_are_found_and_other_kinds_of_kind_are_not():
    source = ('if world.kind == "game": pass\n'
              'ok = spec.kind in ("blackbox", "x")\n'
              'bad = "proof" != kind\n'
              'match w.kind:\n    case "program": pass\n'
              'fine = d.kind != "op" or world.protocol == "pool" or kind == "cost"\n')
    readers, trees = made_up(pkg__m=source)
    assert found("pkg__m", "kind_compare", readers, trees, names={"game", "blackbox", "proof", "program"}) == [
        "line 1: world.kind == 'game'", "line 2: spec.kind in ('blackbox', 'x')", "line 3: 'proof' != kind",
        "line 5: case 'program'"]


# ---------------------------------------------------------------- a new kind, end to end


@pytest.fixture
def tally():
    """`kind tally` registered for one test, and gone after it (other tests never see it)."""
    assert "tally" not in KINDS, "an earlier test left kind tally registered"
    register_kind(tinykind.KIND)
    try:
        yield load_world(TALLY)
    finally:
        KINDS.pop("tally", None)


def test_a_spec_of_an_unregistered_kind_is_a_located_spec_error():
    result = CliRunner().invoke(main, ["check", TALLY])
    assert result.exit_code == 2
    assert "unknown world kind 'tally'" in result.output and "tally.world:4:" in result.output


def test_the_tiny_kind_implements_the_core_and_the_milestone_face(tally):
    assert isinstance(tally, World)
    assert {"protocol", "tool", "probe", "verify", "requires", "manual", "certify", "grade_equation"} <= \
        face_members(FACES["milestone"])
    assert offered_faces(tinykind.KIND, tally) == []
    assert tally.protocol == "milestone"


def test_the_tiny_kind_reads_its_own_items_from_the_spec(tally):
    assert (tally.low, tally.high, tally.step) == (0, 60, 1)
    assert [(t.id, t.solution, t.naive) for t in tally.tasks] == [("T1", "14", "13"), ("T2", "8", "8"),
                                                                   ("T3", "42", "41")]
    assert tally.probe("12").text == "14" and tally.probe("7").text == "8"
    assert tally.probe("61").status == "rejected" and tally.charge("61") == 0
    assert [sorted(tally.requires(t)) for t in tally.tasks] == [["R1"], [], ["R1"]]
    assert tally.grade_equation("R1", "n + 2") and not tally.grade_equation("R1", "n + 1")
    assert tally.verify("T1", "14").passed and not tally.verify("T1", "13").passed


def test_a_mistake_in_a_kind_specific_item_is_a_located_spec_error(tally, tmp_path):
    bad = tmp_path / "bad.world"
    bad.write_text(Path(TALLY).read_text().replace("step 1 ", "stepp 1"))
    result = CliRunner().invoke(main, ["check", str(bad)])
    assert result.exit_code == 2
    assert "unknown item 'stepp'" in result.output and "bad.world:11:" in result.output


def test_check_certifies_the_tiny_kind(tally):
    result = CliRunner().invoke(main, ["check", TALLY])
    assert result.exit_code == 0, result.output
    assert "Tally (kind tally, language 2, seed 3): 1 rule, 0 herrings, 3 tasks" in result.output
    assert "certified: no problems" in result.output
    report = json.loads(CliRunner().invoke(main, ["check", TALLY, "--json"]).output)
    assert report["problems"] == [] and report["recall_only"] == 33.3


def run_tally(tmp_path) -> tuple[Path, dict]:
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", TALLY, "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    for name in ("log.jsonl", "trajectories.jsonl", "summary.json", "report.md"):
        assert (out / name).exists(), name
    return out, json.loads((out / "summary.json").read_text())


def test_worldspec_run_runs_the_tiny_kind_with_the_built_in_agents(tally, tmp_path):
    out, summary = run_tally(tmp_path)
    best = {r["system"]: r["best"] for r in summary["results"]}
    assert best["oracle"] == 100.0
    assert best["manual"] < 100.0
    assert summary["validity"]["valid"]
    last = {}
    for line in (out / "trajectories.jsonl").read_text().splitlines():
        traj = json.loads(line)
        last[traj["system"]] = traj["milestones"][-1]
    assert last["oracle"]["rules_stated_correctly"] == ["R1"]
    assert last["manual"]["tasks"] == {"T1": [0], "T2": [1], "T3": [0]}  # only the odd n escapes the rule
    assert last["oracle"]["probe_units"] > 0  # the probes went through the kind's own tool


@pytest.mark.parametrize("case", [marked("end_to_end", c, c, id=c) for c in END_TO_END])
def test_report_names_the_rules_each_system_stated(tally, tmp_path, case):
    out, _ = run_tally(tmp_path)
    assert "R1" in (out / "report.md").read_text()


def test_the_map_names_every_module():
    """docs/architecture.md is the map: every production module's file name appears in it."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = sorted(str(p.relative_to(ROOT)) for p in FILES.values()
                     if p.name != "__init__.py" and p.name not in text)
    assert missing == [], f"docs/architecture.md does not name: {missing}"
