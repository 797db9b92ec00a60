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


# Values where documented behaviours and their perturbations part ways (digits, case, words, signs).
CURATED = {
    "int": (0, 1, 2, 3, 1, 2, -1, 4, 5, -7, 12, 97),
    "str": ("120", "-12", "Ab cD", "a,b", "abc", "", "cart car", "x", "Hello world", "7", "aB", "ab cd"),
    "list": ([3, 1, 2], [], [5, -2, 5, 0], [4, 8, 15, 16], [1, 2, 1], [9], ["ab", "cd"], [2, 2, 7, 1, 3]),
    "bool": (True, False),
}


def curated_values(params, rng: random.Random, n: int):
    """n argument lists that walk through CURATED (every value of a pool shows up when n allows;
    every third list repeats an argument of the same type; a variadic parameter gets a list)."""
    pool = {k: list(v) for k, v in CURATED.items()}
    pool["any"] = [0, "Ab cD", [3, 1, 2], -3, "120", True, 2, "a,b", [], -1, "-12", [5, -2, 5, 0], 7, "abc",
                   False, "", [1, 2, 1]]
    for k in range(n):
        args, by_type = [], {}
        for j, p in enumerate(params):
            options = pool.get(p.type.name, pool["any"])
            if p.variadic:
                args.append([rng.choice(options) for _ in range(rng.randint(0, 4))])
            elif k % 3 == 1 and p.type.name in by_type:  # equal arguments: where strictness shows
                args.append(by_type[p.type.name])
            elif k % 3 == 2 and isinstance(by_type.get(p.type.name), str):  # equal but for letter case
                args.append(by_type[p.type.name].swapcase())
            elif k % 3 == 2 and p.type.name in ("any", "int") and by_type.get("list"):  # an element of a list
                args.append(by_type["list"][0])
            else:
                args.append(options[(k * (j + 1) + 5 * j) % len(options)])
                by_type.setdefault(p.type.name, args[-1])
        yield args
