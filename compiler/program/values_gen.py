"""Seeded generation of typed values, for equation grading and operator-level checks."""
from __future__ import annotations

import random
import string

from worldspec import ast

_EDGE_INTS = (0, 1, -1, 2, 3, 5, 7, 10, 27, -4)


def value_of(t: ast.Type, rng: random.Random, depth: int = 0):
    """A random value of the type (edge cases favoured)."""
    name = t.name
    if name == "int":
        return rng.choice(_EDGE_INTS) if rng.random() < 0.4 else rng.randint(-60, 120)
    if name == "float":
        return round(rng.uniform(-50, 50), 3)
    if name == "bool":
        return rng.random() < 0.5
    if name == "str":
        n = rng.choice((0, 1, 2, 3, 4, 5, 7))
        return "".join(rng.choice(string.ascii_lowercase[:8] + " ") for _ in range(n))
    if name == "list":
        inner = t.arg or ast.Type("int")
        n = rng.choice((0, 1, 2, 3, 4, 5, 6, 8))
        return [value_of(inner, rng, depth + 1) for _ in range(n)]
    if name == "map":
        return {rng.choice("abcdef"): value_of(ast.Type("int"), rng) for _ in range(rng.randint(0, 4))}
    if name == "fn":
        return None
    # any: a mix of the simple kinds
    kinds = ["int", "int", "str", "bool", "list"] if depth < 2 else ["int", "str", "bool"]
    return value_of(ast.Type(rng.choice(kinds)), rng, depth + 1)


def values_for(params, rng: random.Random, n: int):
    """n argument lists for a parameter list (a variadic parameter gets a list)."""
    for _ in range(n):
        args = []
        for p in params:
            if p.variadic:
                args.append([value_of(p.type, rng) for _ in range(rng.randint(0, 5))])
            else:
                args.append(value_of(p.type, rng))
        yield args
