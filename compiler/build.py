"""Parse -> kind registry -> kind.compile: the one place that knows which kinds exist.

Nothing here is kind-specific: a kind is a subpackage whose spec module exposes
`KIND` (a `compiler.api.Kind`), registered once in `KINDS` below by its module's name or at
run time with `register_kind` (tests register a tiny kind of their own this way).

The bundled kinds are named, not imported: `KINDS` imports a kind's spec module the first
time that kind is looked up, as Inspect loads its providers. Importing every kind cost
1.2 s at start-up (pokerkit for holdem, the program kind's grammars), paid by `--help`,
`list` and every command that compiles one world of one kind.
"""
from __future__ import annotations

import importlib
import os

import attrs
from collections.abc import MutableMapping
from importlib.resources import files

from worldspec import ast
from worldspec.compiler import worldcache
from worldspec.compiler.api import Kind, World
from worldspec.compiler.artefacts import Artefacts, collecting
from worldspec.diagnostics import SpecError, did_you_mean
from worldspec.parser import load_spec


class KindRegistry(MutableMapping):
    """Kind name -> Kind; a bundled kind is the name of its spec module until first looked up."""

    def __init__(self, modules: dict[str, str]):
        self._entries: dict[str, Kind | str] = dict(modules)

    def __getitem__(self, name: str) -> Kind:
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = importlib.import_module(entry).KIND
            self._entries[name] = entry
        return entry

    def __setitem__(self, name: str, kind: Kind) -> None:
        self._entries[name] = kind

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def module_of(self, name: str) -> str:
        """The module that defines a kind's compiler, without importing a bundled kind not yet loaded."""
        entry = self._entries[name]
        if isinstance(entry, str):
            return entry
        return getattr(getattr(entry, "compile", None), "__module__", "") or ""

    def loaded(self) -> list[str]:
        """The kinds looked up (or registered) so far in this process."""
        return [name for name, entry in self._entries.items() if not isinstance(entry, str)]

    def __contains__(self, name) -> bool:  # without importing the kind
        return name in self._entries

    def __iter__(self):
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


# The bundled kinds, in the order error messages list them; each module defines KIND.
KINDS = KindRegistry({name: f"worldspec.compiler.{name}.spec"
                      for name in ("program", "proof", "blackbox", "game", "holdem", "judge")})
# Kinds the language reserves but this version cannot compile yet.
RESERVED: tuple[str, ...] = ()


def register_kind(kind: Kind) -> None:
    """Make a kind compilable (a new kind is one subpackage plus one registration)."""
    KINDS[kind.name] = kind


def compile_spec(spec: ast.Spec, seed: int | None = None) -> World:
    """Compile a parsed spec into its true world (the given seed, or the declared one)."""
    kind = KINDS.get(spec.kind)
    if kind is None:
        if spec.kind in RESERVED:
            raise SpecError(spec.kind_span, f"world kind {spec.kind!r} is not supported by this version",
                            "Supported kinds: " + ", ".join(KINDS) + ".")
        names = tuple(KINDS) + RESERVED
        raise SpecError(spec.kind_span, f"unknown world kind {spec.kind!r}",
                        (did_you_mean(spec.kind, names) + " Kinds are: " + ", ".join(names) + ".").strip())
    world = kind.compile(spec, seed)
    if attrs.has(type(world)) and "language" in attrs.fields_dict(type(world)) and world.language != spec.language:
        # one place for every kind: each kind builds its world from the spec its own way
        world = attrs.evolve(world, language=spec.language)
    return world


def resolve_world_path(name: str) -> str:
    """A path, or the name of a bundled world (`demo`, `aliencode`)."""
    if os.path.exists(name):
        return name
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")
    try:
        bundled = str(files("worldspec.worlds"))
    except (ModuleNotFoundError, TypeError):
        bundled = here
    for folder in (bundled, here):
        for cand in (name, name + ".world"):
            p = os.path.join(folder, cand)
            if os.path.exists(p):
                return p
    return name


def bundled_kind(name: str) -> bool:
    """Whether a kind is one of worldspec's own (its code is in the cache key; a kind registered at run time,
    as tests do, is not, so its worlds are never cached)."""
    kind = KINDS.get(name)
    return kind is not None and getattr(kind.compile, "__module__", "").startswith("worldspec.compiler.")


def load_world(path: str, seed: int | None = None, cache: bool | None = None) -> World:
    """Read, parse and compile a .world file (or a bundled world's name).

    What the kind computes on the way (test answers, game optima, precomputed tables) is recalled from
    the world cache (compiler/worldcache.py, docs/cache.md) and stored there after a compile that had to
    compute it. cache=False bypasses the cache; None (the default) uses it unless WORLDSPEC_NO_CACHE is set.
    """
    spec = load_spec(resolve_world_path(path))
    if cache is False or (cache is None and worldcache.disabled()) or not bundled_kind(spec.kind):
        return compile_spec(spec, seed)
    key = worldcache.world_key(spec, spec.seed if seed is None else seed)
    store = Artefacts(worldcache.read(key))
    with collecting(store):
        world = compile_spec(spec, seed)
    if store.changed and store.records:  # a world whose kind records nothing leaves no file
        worldcache.write(key, store.records)
    worldcache.remember(world, key)  # its certification can be recalled too (compiler/certified.py)
    return world
