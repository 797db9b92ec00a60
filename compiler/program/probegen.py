"""Probes derived from a world's surface and operator signatures.

One generator serves three users: the fixed-probe condition (a seeded stream),
certification (Hypothesis searching for a probe that tells a rule apart), and
property tests. It is written against a small `Chooser`, so the same code
draws from `random.Random` or from Hypothesis' `data.draw`.
"""
from __future__ import annotations

import random
from typing import Iterator

from hypothesis import strategies as st

from worldspec import ast

INDENT = "    "


def _one_argument(text: str) -> bool:
    """Whether an argument list holds a single expression (no top-level comma)."""
    depth, in_str, prev = 0, False, ""
    for ch in text:
        if in_str:
            in_str = not (ch == '"' and prev != "\\")
        elif ch == '"':
            in_str = True
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            return False
        prev = ch
    return bool(text.strip())


class Chooser:
    """Random choices from a seeded RNG."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def int(self, lo: int, hi: int) -> int:
        """An integer in lo..hi."""
        return self.rng.randint(lo, hi)

    def choice(self, seq):
        """One element of a sequence."""
        return seq[self.int(0, len(seq) - 1)]

    def chance(self, p: float) -> bool:
        """True with probability p."""
        return self.int(0, 999) < p * 1000


class HypothesisChooser(Chooser):
    """Choices drawn through Hypothesis, so failures shrink to small probes."""

    def __init__(self, draw):
        self.draw = draw

    def int(self, lo: int, hi: int) -> int:
        """An integer in lo..hi, drawn by Hypothesis."""
        return self.draw(st.integers(lo, hi))


class ProbeGenerator:
    """Probes for one world, built from its surface and its base operators' signatures."""

    def __init__(self, world):
        self.world = world
        self.surface = world.surface
        self.base = world.builder.base  # target -> Definition
        self.ops = [d for d in self.base.values() if d.kind == "op"]
        self.by_return: dict[str, list] = {}
        for d in self.ops:
            if not any(p.type.name == "fn" for p in d.params):
                self.by_return.setdefault(d.returns.name, []).append(d)
        w = self.surface.word
        self.out = w("output")

    # ------------------------------------------------------------ values

    def literal(self, ch: Chooser, type_name: str) -> str:
        """A literal of the type, in the world's spelling."""
        if type_name == "int":
            return str(ch.choice((0, 1, 2, 3, -1, 5, 10)) if ch.chance(0.5) else ch.int(-20, 120))
        if type_name == "str":
            n = ch.int(0, 5)
            letters = "abcdef" if ch.chance(0.6) else "abcABC "
            return '"' + "".join(ch.choice(letters) for _ in range(n)) + '"'
        if type_name == "bool":
            return self.surface.word("true") if ch.chance(0.5) else self.surface.word("false")
        return self.literal(ch, ch.choice(("int", "int", "str", "bool")))

    def list_expr(self, ch: Chooser, depth: int, n: int | None = None) -> str | None:
        """A call of a variadic list-making operator (None when the world has none)."""
        makers = [d for d in self.by_return.get("list", ()) if d.params and d.params[-1].variadic]
        if not makers:
            return None
        d = ch.choice(makers)
        count = ch.int(0, 5) if n is None else n
        return f"{d.name}({', '.join(self.expr(ch, 'int', depth + 1) for _ in range(count))})"

    def expr(self, ch: Chooser, type_name: str, depth: int = 0) -> str:
        """An expression meant to produce a value of the type (by signature)."""
        if type_name == "any":
            type_name = ch.choice(("int", "int", "list", "str", "bool"))
        if type_name == "list":
            made = self.list_expr(ch, depth) if depth < 3 else None
            if made is not None and (depth >= 2 or ch.chance(0.6)):
                return made
        candidates = self.by_return.get(type_name, [])
        if candidates and depth < 2 and ch.chance(0.35):
            return self.call(ch, ch.choice(candidates), depth)
        if type_name == "list":
            made = self.list_expr(ch, depth)
            return made if made is not None else self.literal(ch, "str")
        return self.literal(ch, type_name)

    def call(self, ch: Chooser, d: ast.Definition, depth: int = 0) -> str:
        """A call of one operator with arguments of its parameters' types."""
        args: list[str] = []
        seen: dict[str, str] = {}
        # Equal or case-swapped arguments are where comparison rules show.
        echo = ch.chance(0.3)
        for p in d.params:
            if p.variadic:
                args += [self.expr(ch, p.type.name, depth + 1) for _ in range(ch.int(0, 4))]
            elif p.type.name == "fn":
                args.append("g1")
            elif echo and p.type.name in seen:
                prev = seen[p.type.name]
                args.append(prev.swapcase() if prev.startswith('"') and ch.chance(0.5) else prev)
            else:
                args.append(self.expr(ch, p.type.name, depth + 1))
                seen.setdefault(p.type.name, args[-1])
        return f"{d.name}({', '.join(args)})"

    # ------------------------------------------------------------ statements

    def _wrap(self, ch: Chooser, body: list[str], context: str, needs_fn: bool) -> str:
        s = self.surface
        prelude = []
        if needs_fn and s.has("function") and s.has("return"):
            prelude = [s.render("function", name="g1", params="a"), INDENT + s.render("return", expr="a")]
        if context == "loop":
            seq = self.list_expr(ch, 2, n=1) or '"a"'
            lines = [s.render("for", name="w9", expr=seq)] + [INDENT + b for b in body]
        elif context == "function" and s.has("function") and s.has("return"):
            outs = [b for b in body if b.startswith(self.out + "(")]
            rest = [b for b in body if not b.startswith(self.out + "(")]
            inner = outs[0][len(self.out) + 1:-1] if len(outs) == 1 else ""
            if len(outs) == 1 and body[-1] == outs[0] and _one_argument(inner):
                lines = [s.render("function", name="g0", params="")] + [INDENT + b for b in rest]
                lines += [INDENT + s.render("return", expr=inner), f"{self.out}(g0())"]
            else:
                lines = [s.render("function", name="g0", params="")] + [INDENT + b for b in body]
                lines += ["g0()"]
        else:
            lines = body
        return "\n".join(prelude + lines)

    def body_for(self, ch: Chooser, target: str) -> tuple[list[str], bool]:
        """Statements that exercise one target ("op NAME" / "hook NAME")."""
        s, out = self.surface, self.out
        kind, name = target.split(" ", 1)
        if kind == "op":
            d = self.base[target]
            return [f"{out}({self.call(ch, d)})"], any(p.type.name == "fn" for p in d.params)
        if name == "int_literal":
            return [f"{out}({self.literal(ch, 'int')})"], False
        if name == "str_literal":
            return [f"{out}({self.literal(ch, 'str')})"], False
        if name == "truthy":
            cond = self.expr(ch, "any")
            return [s.render("if", expr=cond), INDENT + f"{out}(1)", s.render("else"), INDENT + f"{out}(0)"], False
        if name == "iterate":
            seq = self.expr(ch, ch.choice(("list", "list", "str")))
            return [s.render("for", name="v", expr=seq), INDENT + f"{out}(v)"], False
        if name in ("assign", "lookup"):
            return [s.render("assign", name="x", expr=self.expr(ch, "any")), f"{out}(x)"], False
        if name == "index" and s.has("index"):
            return [f"{out}({self.expr(ch, 'list')}[{self.expr(ch, 'int')}])"], False
        if name == "slice" and s.has("index"):
            return [f"{out}({self.expr(ch, 'list')}[{self.expr(ch, 'int')}:{self.expr(ch, 'int')}])"], False
        # show, output and anything else: print values of every kind
        n = ch.int(1, 2)
        return [f"{out}({', '.join(self.expr(ch, 'any') for _ in range(n))})"], False

    def probe_for(self, ch: Chooser, target: str, context: str | None = None) -> str:
        """A probe exercising one target in a context (top level, loop or function)."""
        context = context or ch.choice(("top", "top", "loop", "function"))
        body, needs_fn = self.body_for(ch, target)
        return self._wrap(ch, body, context, needs_fn)

    def targets(self) -> list[str]:
        """Every base line's target."""
        return list(self.base)

    def random_probe(self, ch: Chooser) -> str:
        """A grammar-valid probe within one call's unit cap."""
        cap = self.world.budget.units_per_call
        parts, units = [], 0
        for _ in range(ch.int(1, 3)):
            p = self.probe_for(ch, ch.choice(self.targets()))
            cost = self.world.charge(p)
            if units + cost > cap:
                break
            parts.append(p)
            units += cost
        return "\n".join(parts) if parts else f"{self.out}({self.literal(ch, 'int')})"

    def stream(self, seed: int = 0) -> Iterator[str]:
        """An endless seeded stream of probes (the fixed-probe condition)."""
        ch = Chooser(random.Random(f"probes:{self.world.name}:{seed}"))
        while True:
            yield self.random_probe(ch)
